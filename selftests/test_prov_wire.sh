#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_prov_wire.sh - the provider suite across two hosts: two network
# namespaces joined by a veth pair, a swnic device in each bound to its
# end (as test_wire.sh), and each two-sided provider test program
# (selftests/prov_*.c) run in the first namespace with
# SWNIC_PROV_PEER_NETNS naming the second, so that prov_open_peer()
# (prov_util.h) puts the target or peer side of every transfer on the
# other host's device and the data goes over the wire (kernel/udp*.c).
# Every test of every program is a result here ("PROGRAM: TEST"), its
# output shown when it fails; a program that crashes, hangs (10 min) or
# gives no result fails a line of its own. Then: the wire carried the
# traffic (the namespace's packet counters rose), the data-path programs
# again with 5 % netem loss on the veth (GSO off on the senders, so that
# netem drops single packets), prov_cm again with the first namespace
# sending from a second address (not its device's), and at the end every
# object is released (the module's counters). Tests that have no second
# side (raw ioctls on /dev/swnic0) skip across (PROV_ONE_HOST); they run
# in-host.
#
# SWNIC_PROV_WIRE: the programs to run (default: all converted ones);
# SWNIC_PROV_WIRE_LOSSY: those run again under loss ("" for none).
#
# swnic-timeout: 2400

. "$(dirname "$0")/lib.sh"

require_cmd ip swnic jq tc ethtool
OUT=selftests/out
PROGS=${SWNIC_PROV_WIRE:-prov_atomic prov_cm prov_cntr prov_contract prov_ep
	prov_mr_iov prov_sep prov_waitset}
# Those run again under loss (SWNIC_PROV_WIRE_LOSSY= for none).
LOSSY=${SWNIC_PROV_WIRE_LOSSY-prov_atomic prov_ep prov_mr_iov prov_sep}
TMP=$(mktemp -d /tmp/swnic-provwire.XXXXXX)
cleanup()
{
	wire_pair_del
	rm -rf "$TMP"
}
trap cleanup EXIT

objects()
{
	swnic -j stat show | jq -c '.[] | select(.dev == "*") | .counters'
}
before=$(objects)

wire_pair p 10.81.0
check "the namespaces reach each other (ping)" $A ping -c 1 -W 5 $ADDR_B

# across PROG TAG: run selftests/out/PROG in namespace A, its peers in B;
# each of its results becomes one here, "PROG[TAG]: test".
across()
{
	local prog=$1 tag=$2 path=$OUT/$1 rc line name cur='' buf=() n=0 from
	local out=$TMP/${1##*/}.out t0=$SECONDS

	[[ $prog == */* ]] && path=$prog
	if [ ! -x "$path" ]; then
		not_ok "$prog$tag: built" "no $path (make selftests)"
		return
	fi
	$A env SWNIC_PROV_PEER_NETNS=/run/netns/swnicpb \
		timeout -k 10 600 "$path" >"$out" 2>&1
	rc=$?
	diag "$prog$tag: $((SECONDS - t0)) s, exit $rc"
	while IFS= read -r line; do
		case $line in
		"ok "*|"not ok "*)
			# "ok N name", "ok N # SKIP why" (kselftest_harness)
			name=${line#not }
			name=${name#ok }
			name=${name#* }
			[[ $name == "# SKIP"* ]] && name="$cur $name"
			n=$((n + 1))
			if [[ $line == "not ok "* ]]; then
				from=$(( ${#buf[@]} > 40 ? ${#buf[@]} - 40 : 0 ))
				not_ok "$prog$tag: $name" "${buf[@]:$from}"
			elif [[ $name == *" # SKIP"* ]]; then
				skip "$prog$tag: ${name%% # SKIP*}" \
					"${name#* # SKIP }"
			else
				ok "$prog$tag: $name"
			fi
			buf=()
			;;
		*)
			# "#  RUN           fixture.variant.test ..."
			[[ $line =~ ^#\ +RUN\ +([^ ]+) ]] && cur=${BASH_REMATCH[1]}
			buf+=("$line")
			;;
		esac
	done <"$out"
	# A crash, hang or early exit is a failure of its own.
	if [ "$n" = 0 ] || { [ "$rc" != 0 ] && ! grep -q '^not ok ' "$out"; }; then
		not_ok "$prog$tag: ran to the end" "exit $rc after $n results" \
			"$(tail -20 "$out")"
	fi
}

# Packets the namespace's wire sent and took (PEER_GET's totals).
wire()
{
	wire_counters swnicpa | jq ".$1 // 0"
}
tx0=$(wire tx_packets) rx0=$(wire rx_packets)
for prog in $PROGS; do
	across "$prog" ""
done
# The transfers went over the wire, not the in-host transport.
tx=$(($(wire tx_packets) - tx0)) rx=$(($(wire rx_packets) - rx0))
if [ "$tx" -gt 0 ] && [ "$rx" -gt 0 ]; then
	ok "the tests' transfers crossed the wire ($tx packets out, $rx in)"
else
	not_ok "the tests' transfers crossed the wire" \
		"tx_packets +$tx, rx_packets +$rx"
fi

# The same data paths with 5 % of the packets lost each way.
if wire_impair loss 5%; then
	for prog in $LOSSY; do
		across "$prog" "[loss 5%]"
	done
	$A tc qdisc del dev swpa root
	$B tc qdisc del dev swpb root
else
	not_ok "netem loss 5% on the veth" "tc qdisc failed"
fi

# A connecting host whose packets do not carry its device's address: A
# gets a second address, and its route to B picks that one as the source
# (the device keeps the first, which its CM messages give). The listener's
# host must take A's address from where the messages came from: at the
# other it would refuse A's own data, and A's kernel answers from the
# route's source only (the connection would not even come up). All of
# prov_cm again: connections work both ways, a stranger is refused.
# B's wire then has a context for each of A's two addresses, and A one
# for each of its own (test_wire_multihome.sh); with one context per
# remote address, the runs after it timed out, so it came last. Only if
# prov_cm is one of the programs.
ADDR_A2=${ADDR_A%.*}.11
case " $(echo $PROGS) " in
*" prov_cm "*) two_addr=1 ;;
*) two_addr=0 ;;
esac
if [ $two_addr = 0 ]; then
	:
elif $A ip addr add "$ADDR_A2/24" dev swpa &&
	$A ip route replace "${ADDR_A%.*}.0/24" dev swpa proto kernel \
		scope link src "$ADDR_A2" &&
	src=$($A ip -j route get "$ADDR_B" | jq -r '.[0].prefsrc') &&
	[ "$src" = "$ADDR_A2" ]; then
	across prov_cm "[two addresses]"
	# It was that address B's wire heard A from.
	if $B swnic -j peer show | jq -e --arg a "$ADDR_A2:" \
		'any(.[]; .peer | startswith($a))' >/dev/null; then
		ok "B's wire heard A from its second address ($ADDR_A2)"
	else
		not_ok "B's wire heard A from its second address ($ADDR_A2)" \
			"$($B swnic peer show)"
	fi
else
	not_ok "A sends from a second address" "route source: ${src:-?}" \
		"$($A ip addr show dev swpa)" "$($A ip route)"
fi
$A ip route replace "${ADDR_A%.*}.0/24" dev swpa proto kernel scope link \
	src "$ADDR_A"
$A ip addr del "$ADDR_A2/24" dev swpa 2>/dev/null

$A swnic dev del swnicpa force >/dev/null 2>&1
$B swnic dev del swnicpb force >/dev/null 2>&1
ip netns del swnicpa
ip netns del swnicpb
for _ in $(seq 50); do
	[ "$(objects)" = "$before" ] && break
	sleep 0.2
done
after=$(objects)
if [ "$after" = "$before" ]; then
	ok "every object made was released (module counters)"
else
	not_ok "every object made was released (module counters)" \
		"before: $before" "after:  $after"
fi

tap_done
