#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire6.sh - the wire over IPv6: two network namespaces joined by a
# veth pair that has IPv6 addresses only (fd00:79::1, ::2; no DAD), a
# swnic device in each bound to its end, Debian's fi_pingpong across with
# the server's IPv6 address (RDM msg and tagged, MSG, DGRAM, data
# checked); the endpoints' addresses are FI_SOCKADDR_IN6 / FI_ADDR_STR
# "fi_swnic://[fd00:79::1]:PORT" (wire_addr6: getinfo, getname, the AV
# calls and straddr round-trip, errors); wire_rma and wire_atomic across;
# `swnic peer show` names the IPv6 peer; malformed strings are refused.
#
# swnic-timeout: 900

. "$(dirname "$0")/lib.sh"

require_cmd fi_pingpong fi_info ip ss swnic jq tc ethtool
[ -x selftests/wire/out/wire_addr6 ] || skip_all "selftests/wire/out/wire_addr6 not built"
ip netns add swnic6a 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnic6b

A="ip netns exec swnic6a"
B="ip netns exec swnic6b"
ADDR_A=fd00:79::1
ADDR_B=fd00:79::2
cleanup()
{
	$A swnic dev del swnic6a force >/dev/null 2>&1
	$B swnic dev del swnic6b force >/dev/null 2>&1
	ip netns del swnic6a 2>/dev/null
	ip netns del swnic6b 2>/dev/null
}
trap cleanup EXIT

check "a veth pair between two namespaces, IPv6 only" sh -c "
	ip link add sw6a type veth peer name sw6b &&
	ip link set sw6a netns swnic6a && ip link set sw6b netns swnic6b &&
	$A ip -6 addr add $ADDR_A/64 dev sw6a nodad &&
	$B ip -6 addr add $ADDR_B/64 dev sw6b nodad &&
	$A ip link set sw6a up && $B ip link set sw6b up &&
	$A ip link set lo up && $B ip link set lo up"
check "a swnic device in each, bound to its veth" sh -c "
	$A swnic dev add swnic6a netdev sw6a &&
	$B swnic dev add swnic6b netdev sw6b"
check "the namespaces reach each other (ping -6)" $A ping -6 -c 1 -W 5 $ADDR_B

# The provider's view of the addresses (fi_info of the device in A).
info=$($A fi_info -p swnic -d swnic6a -t FI_EP_RDM -v 2>&1)
if printf '%s\n' "$info" | grep -q 'addr_format: FI_SOCKADDR_IN6' &&
   printf '%s\n' "$info" | grep -q "src_addr: fi_sockaddr_in6://\[$ADDR_A\]"; then
	ok "a device with IPv6 addresses only: FI_SOCKADDR_IN6, its address"
else
	not_ok "a device with IPv6 addresses only: FI_SOCKADDR_IN6" \
		"$(printf '%s\n' "$info" | grep -E 'addr|fi_getinfo' | head -5)"
fi
info=$($B fi_info -p swnic -d swnic6b -t FI_EP_RDM -n $ADDR_A -P 7 -v 2>&1)
if printf '%s\n' "$info" | grep -q "dest_addr: fi_sockaddr_in6://\[$ADDR_A\]:7"; then
	ok "fi_getinfo with an IPv6 node and service: the peer's address"
else
	not_ok "fi_getinfo with an IPv6 node and service" \
		"$(printf '%s\n' "$info" | grep -E 'addr|fi_getinfo' | head -5)"
fi
info=$($B fi_info -p swnic -d swnic6b -t FI_EP_RDM -a FI_ADDR_STR \
	-n "fi_swnic://[$ADDR_A]:9" -v 2>&1)
if printf '%s\n' "$info" | grep -q "dest_addr: fi_swnic://\[$ADDR_A\]:9"; then
	ok "FI_ADDR_STR fi_swnic://[$ADDR_A]:9 read and written back"
else
	not_ok "FI_ADDR_STR fi_swnic://[IPV6]:PORT" \
		"$(printf '%s\n' "$info" | grep -E 'addr|fi_getinfo' | head -5)"
fi
bad=0
for s in "fi_swnic://[$ADDR_A" "fi_swnic://[]:9" "fi_swnic://[$ADDR_A]x" \
	 "fi_swnic://[$ADDR_A]:70000" "fi_swnic://[fd00::zz]:9" \
	 "fi_swnic://[ff02::1]:9" "fi_swnic://[$ADDR_A%nosuchif]:9"; do
	if $B fi_info -p swnic -d swnic6b -a FI_ADDR_STR -n "$s" \
		>/dev/null 2>&1; then
		bad=1
		diag "accepted: $s"
	fi
done
[ $bad = 0 ] && ok "malformed or multicast fi_swnic://[...] strings refused" ||
	not_ok "malformed or multicast fi_swnic://[...] strings refused"

port=27900
# pingpong DESC OPTIONS...: server in A, client in B, over IPv6.
pingpong()
{
	local desc=$1 srv cli_rc srv_rc crash t0=$SECONDS
	shift
	port=$((port + 1))
	$A timeout 300 fi_pingpong -6 -p swnic "$@" -B "$port" >/tmp/w6.srv \
		2>/tmp/w6.srv.err &
	srv=$!
	wait_listen swnic6a "$port"
	$B timeout 300 fi_pingpong -6 -p swnic "$@" -P "$port" "$ADDR_A" \
		>/tmp/w6.cli 2>/tmp/w6.cli.err
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
	diag "$desc: $((SECONDS - t0)) s"
	if [ "$cli_rc" = 0 ] && [ "$srv_rc" = 0 ]; then
		ok "$desc"
	else
		crash=$(killed_by "$cli_rc" client; killed_by "$srv_rc" server)
		not_ok "$desc" ${crash:+"$crash"} \
			"client exit $cli_rc: $(tail -3 /tmp/w6.cli.err)" \
			"$(tail -2 /tmp/w6.cli)" \
			"server exit $srv_rc: $(tail -3 /tmp/w6.srv.err)" \
			"$(tail -2 /tmp/w6.srv)"
	fi
}

pingpong "rdm msg 8 B..1 MiB across IPv6, data checked" -e rdm -c -I 5 -S all
pingpong "rdm tagged 64 KiB across IPv6, data checked" -e rdm -m tagged -c \
	-I 10 -S 65536
pingpong "msg (connected) 4 KiB across IPv6, data checked" -e msg -c -I 10 \
	-S 4096
pingpong "dgram 1 KiB across IPv6, data checked" -e dgram -c -I 10 -S 1024

pingpong "rdm 16 MiB across IPv6, data checked" -e rdm -c -I 2 -S 16777216

# Large messages go as UDP GSO sends over IPv6 too (the route looked up in
# the namespace with ip6_route_output).
gso=$(wire_counters swnic6b | jq '.gso_sends // 0')
if [ "${gso:-0}" -gt 0 ]; then
	ok "large messages went as UDP GSO sends over IPv6 ($gso)"
else
	not_ok "large messages went as UDP GSO sends over IPv6" "gso_sends: ${gso:-none}"
fi

# Loss over IPv6 (GSO off: netem drops single packets): every byte.
$A ethtool -K sw6a gso off tso off >/dev/null 2>&1
$B ethtool -K sw6b gso off tso off >/dev/null 2>&1
if $A tc qdisc replace dev sw6a root netem loss 5% &&
   $B tc qdisc replace dev sw6b root netem loss 5%; then
	pingpong "rdm 8 B..1 MiB across IPv6, netem loss 5%, data checked" \
		-e rdm -c -I 3 -S all
	$A tc qdisc del dev sw6a root
	$B tc qdisc del dev sw6b root
else
	not_ok "netem loss 5% over IPv6" "tc qdisc failed"
fi

# The traffic class reaches the wire as the IPv6 traffic class (DSCP 46:
# 0xb8), requests and answers: counted by a u32 filter on each ingress.
ef_in()
{
	ip netns exec "$1" tc -s filter show dev "$2" ingress |
		awk '/Sent/ { print $4; exit }'
}
if $A tc qdisc add dev sw6a clsact && $B tc qdisc add dev sw6b clsact &&
   $A tc filter add dev sw6a ingress protocol ipv6 u32 \
	match ip6 priority 0xb8 0xfc action pass &&
   $B tc filter add dev sw6b ingress protocol ipv6 u32 \
	match ip6 priority 0xb8 0xfc action pass; then
	check "RMA across IPv6 with traffic class DSCP 46 (FI_TC_DSCP)" \
		sh -c "$A timeout 120 selftests/wire/out/wire_rma -t 46 -s & sleep 1;
		       $B timeout 120 selftests/wire/out/wire_rma -t 46 $ADDR_A;
		       rc=\$?; wait \$! || rc=1; exit \$rc"
	in=$(ef_in swnic6a sw6a) back=$(ef_in swnic6b sw6b)
	if [ "${in:-0}" -gt 0 ] && [ "${back:-0}" -gt 0 ]; then
		ok "its requests and answers carry traffic class DSCP 46 ($in in, $back back)"
	else
		not_ok "its requests and answers carry traffic class DSCP 46" \
			"EF packets: ${in:-none} in, ${back:-none} back"
	fi
else
	not_ok "a DSCP-counting filter on the veth ends" "tc failed"
fi

# B's link-local address (the veth has one once up): named in A's scope.
LL_B=$($B ip -6 -o addr show dev sw6b scope link | awk '{ print $4 }' |
	cut -d/ -f1 | head -1)
check "addresses: getinfo/getname/AV (sockaddr_in6, FI_ADDR_STR, insertsvc, insertsym, straddr, link-local), errors" \
	$A selftests/wire/out/wire_addr6 swnic6a $ADDR_A $ADDR_B ${LL_B:-fe80::2} sw6a

# The RMA and atomic helpers across, the target named by its IPv6 address.
check "RMA write/read, remote CQ data, counters, key errors, a fenced read across IPv6" \
	sh -c "$A timeout 120 selftests/wire/out/wire_rma -s & sleep 1;
	       $B timeout 120 selftests/wire/out/wire_rma $ADDR_A; rc=\$?;
	       wait \$! || rc=1; exit \$rc"
check "atomics across IPv6: every op x datatype, errors, concurrent adds" \
	sh -c "$A timeout 240 selftests/wire/out/wire_atomic -s & sleep 1;
	       $B timeout 240 selftests/wire/out/wire_atomic $ADDR_A; rc=\$?;
	       wait \$! || rc=1; exit \$rc"

peers=$($B swnic -j peer show 2>&1)
if printf '%s' "$peers" | jq -e --arg a "[$ADDR_A]:4793" \
	'[.[] | select(.peer == $a)] | length == 1' >/dev/null; then
	ok "swnic peer show names the IPv6 peer [$ADDR_A]:4793"
else
	not_ok "swnic peer show names the IPv6 peer" \
		"$(printf '%s' "$peers" | jq -c '[.[] | .peer]' 2>&1)"
fi
ns=$(wire_counters swnic6a)
if printf '%s' "$ns" | jq -e '.drop_checksum == 0 and .drop_addr == 0' \
	>/dev/null; then
	ok "no IPv6 packet dropped as corrupt or from a bad address"
else
	not_ok "no IPv6 packet dropped as corrupt" "$ns"
fi

tap_done
