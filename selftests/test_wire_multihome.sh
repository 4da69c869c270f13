#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_multihome.sh - the wire between hosts with more than one
# address. Two network namespaces joined by a veth pair (as test_wire.sh),
# host A with a second address that its route to B picks as the source,
# while its swnic device - and so its endpoints' addresses, which B is
# given - keeps the first. B reaches A at the first address, A's packets
# to B come from the second: each host talks with the other at two
# address pairs. A peer context is a pair of addresses, so each host has
# two contexts for the other, and each context's packets go from its own
# address (IP_PKTINFO). Before, a context was the remote address alone: B
# had two contexts for A, talking to A's one context for B, which saw two
# incarnations of B take turns and reset itself at each.
#
# Checks, over IPv4 and then IPv6: fi_pingpong both ways (server in A,
# client in B, and back; rdm, 64 B and 64 KiB, data checked); each host
# has a context for each pair, `swnic peer show` naming our address in
# it ("local"); the two ends of each pair name each other's incarnation;
# no packet was dropped as stale (an incarnation thrash drops them); and
# at the end every object is released.
#
# Over IPv4 also, a host talking to both of A's addresses:
# - A posts to an address of B's it has no route to (a context with no
#   address of A's, "-"), and B dials A's second address from it: B's
#   packets make the context of their pair at A, not the unbound one's;
#   once A has a route, each pair's ends name each other, both requests
#   are answered and nothing is dropped as stale. Before, the unbound
#   context took B's packets to any of A's addresses, and answered them
#   from the address its route picked later.
# - The same, but B dials A's first address, the one A's route picks:
#   A's dialled context moves its request onto that pair's context,
#   which B's request made, and both are answered. Before, it sent
#   nothing and failed at the peer timeout.
# - A forger that never ACKs (wire_fuzz -x noack), from one address and
#   port, to both of A's addresses: the answers A keeps for it are at
#   most 8192 in all, not 8192 per address of A's.
# - The same with delivery-complete sends to endpoints that post no
#   receive (wire_fuzz -x held): A holds at most 4096 of that host's
#   sends in all, not 4096 per address of A's.
#
# swnic-timeout: 600

. "$(dirname "$0")/lib.sh"

require_cmd fi_pingpong ip ss swnic jq
TMP=$(mktemp -d /tmp/swnic-multihome.XXXXXX)
cleanup()
{
	# shellcheck disable=SC2086 # the PIDs
	[ -n "$eps" ] && kill $eps 2>/dev/null
	[ -n "$old_timeout" ] && echo "$old_timeout" > $PARAMS/peer_timeout_ms
	[ -n "$old_any_sport" ] && echo "$old_any_sport" > $PARAMS/udp_any_sport
	wire_pair_del
	rm -rf "$TMP"
}
trap cleanup EXIT

before=$(swnic_objects)

port=27950
# pingpong AT DESC OPTIONS...: fi_pingpong, the server in namespace
# swnicx$AT (given its address SADDR, set by the caller), the client in
# the other; PP_FAMILY=-6 for an IPv6 SADDR.
pingpong()
{
	local at=$1 desc=$2 sns cns srv cli_rc srv_rc o=$TMP/pp
	shift 2
	sns=swnicx$at cns=swnicxb
	[ "$at" = b ] && cns=swnicxa
	port=$((port + 1))
	# shellcheck disable=SC2086 # PP_FAMILY: none or -6
	ip netns exec "$sns" timeout 120 fi_pingpong $PP_FAMILY -p swnic "$@" \
		-B "$port" >$o.srv 2>&1 &
	srv=$!
	wait_listen "$sns" "$port"
	# shellcheck disable=SC2086
	ip netns exec "$cns" timeout 120 fi_pingpong $PP_FAMILY -p swnic "$@" \
		-P "$port" "$SADDR" >$o.cli 2>&1
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
	if [ $cli_rc = 0 ] && [ $srv_rc = 0 ]; then
		ok "$desc"
		return
	fi
	not_ok "$desc" "client exit $cli_rc, server exit $srv_rc (124: timed out)" \
		"client: $(tail -3 $o.cli)" "server: $(tail -3 $o.srv)"
}

# contexts NS PEER: "LOCAL LOCAL_INC REMOTE_INC" of each of NS's contexts
# whose peer address is PEER (as `swnic peer show` writes it, no port).
contexts()
{
	ip netns exec "$1" swnic -j peer show |
		jq -r --arg p "$2" '.[] | select(.peer != "*") |
			select(.peer | sub(":[0-9]+$"; "") |
				ltrimstr("[") | rtrimstr("]") == $p) |
			"\(.local) \(.local_inc) \(.remote_inc)"' | sort
}

# pairs FAMILY A1 A2 B: A's contexts for B are at A1 and A2, B's for A at
# A1 and A2 (each at B), and each pair's ends name each other: B's
# context for Ax has A's incarnations in its context at Ax, crossed.
pairs()
{
	local fam=$1 a1=$2 a2=$3 b=$4 ctx_a ctx_b want_a want_b bad=
	local al ai ar bl bi br x

	ctx_a=$(contexts swnicxa "$b")
	want_a=$(printf '%s\n%s\n' "$a1" "$a2" | sort)
	if [ "$(printf '%s\n' "$ctx_a" | cut -d' ' -f1)" != "$want_a" ]; then
		not_ok "$fam: A has a context for B at each of its addresses" \
			"A's contexts for $b (local local_inc remote_inc):" \
			"$ctx_a" "$(ip netns exec swnicxa swnic peer show)"
		return
	fi
	ok "$fam: A has a context for B at each of its addresses ($a1, $a2)"
	for x in "$a1" "$a2"; do
		ctx_b=$(contexts swnicxb "$x")
		read -r al ai ar <<<"$(printf '%s\n' "$ctx_a" | grep "^$x ")"
		read -r bl bi br <<<"$ctx_b"
		if [ "$(printf '%s\n' "$ctx_b" | wc -l)" != 1 ] ||
		   [ "$bl" != "$b" ] || [ "$bi" != "$ar" ] ||
		   [ "$br" != "$ai" ] || [ "$ai" = 0 ] || [ "$bi" = 0 ]; then
			bad="$bad A at $x: A ($al $ai $ar), B: ($ctx_b);"
		fi
	done
	if [ -z "$bad" ]; then
		ok "$fam: B has one context for each, at $b, naming A's incarnations"
	else
		not_ok "$fam: B has one context for each, at $b, naming A's incarnations" \
			"$bad" "$(ip netns exec swnicxb swnic peer show)"
	fi
}

# stale NS: the packets NS's wire dropped as from an incarnation retired.
stale()
{
	wire_counters "$1" | jq '.drop_stale // 0'
}

# multihome FAMILY A1 A2 B: the checks, with A at A1 (its device's) and
# A2 (its route's source to B), B at B; the addresses are set up.
multihome()
{
	local fam=$1 sa0 sb0
	SADDR=$2
	sa0=$(stale swnicxa) sb0=$(stale swnicxb)
	pingpong a "$fam: A's second address its source: server in A (rdm 64 B, data checked)" \
		-e rdm -c -I 50 -S 64
	pingpong a "$fam: A's second address its source: server in A (rdm 64 KiB, data checked)" \
		-e rdm -c -I 20 -S 65536
	SADDR=$4
	pingpong b "$fam: A's second address its source: client in A (rdm 64 KiB, data checked)" \
		-e rdm -c -I 20 -S 65536
	pairs "$fam" "$2" "$3" "$4"
	if [ "$(stale swnicxa)" = "$sa0" ] && [ "$(stale swnicxb)" = "$sb0" ]; then
		ok "$fam: no packet dropped as from a retired incarnation"
	else
		not_ok "$fam: no packet dropped as from a retired incarnation" \
			"drop_stale: A $sa0 -> $(stale swnicxa), B $sb0 -> $(stale swnicxb)"
	fi
}

# ctx NS PEER [LOCAL]: "LOCAL LOCAL_INC REMOTE_INC MSGS" of each of NS's
# contexts for PEER (an address, any port), at our address LOCAL if given
# (LOCAL "-": none yet; the incarnations in decimal, 0: none known).
ctx()
{
	ip netns exec "$1" swnic -j peer show |
		jq -r --arg p "$2" --arg l "${3:-}" '.[] | select(.peer != "*") |
			select(.peer | sub(":[0-9]+$"; "") == $p) |
			select($l == "" or .local == $l) |
			"\(.local) \(.local_inc) \(.remote_inc) \(.msgs)"' | sort
}

# host_sum NS PEER:PORT FIELD: FIELD summed over NS's contexts for PEER:PORT.
host_sum()
{
	ip netns exec "$1" swnic -j peer show |
		jq --arg p "$2" --arg f "$3" \
			'[.[] | select(.peer == $p) | .[$f] // 0] | add // 0'
}

# settled NS PEER:PORT FIELD: host_sum once it stopped changing (20 s at most).
settled()
{
	local v last=-1
	for _ in $(seq 40); do
		v=$(host_sum "$@")
		[ "$v" = "$last" ] && break
		last=$v
		sleep 0.5
	done
	echo "$v"
}

PARAMS=/sys/module/swnic/parameters
old_timeout=$(cat $PARAMS/peer_timeout_ms)
old_any_sport=$(cat $PARAMS/udp_any_sport)
eps=

# far_up FAR TO DESC: B at a third address FAR, which only its route to
# TO (an address of A's) takes as the source; A with no route to FAR. A
# posts to FAR, then B to TO from FAR (wire_spray, their PIDs in spa and
# spb, outputs in $TMP/far.a and far.b). The peer timeout is 60 s: A's
# request waits for the route, and is not failed meanwhile (a debug
# kernel took more than 20 s from the post to the route). If the setup
# fails: not ok DESC, and status 1.
far_up()
{
	echo 60000 > $PARAMS/peer_timeout_ms
	if ! $B ip addr add "$1/32" dev swxb ||
	   ! $B ip route add "$2/32" dev swxb src "$1" ||
	   ! $A ip route add unreachable "$1/32"; then
		not_ok "$3"
		return 1
	fi
	$A timeout 90 selftests/wire/out/wire_spray -n 1 -s 40 "$1" \
		>"$TMP/far.a" 2>&1 &
	spa=$!
	wait_for_line posted "$TMP/far.a"
	$B timeout 90 selftests/wire/out/wire_spray -n 1 -s 40 "$2" \
		>"$TMP/far.b" 2>&1 &
	spb=$!
	wait_for_line posted "$TMP/far.b"
}

# far_down FAR TO: undo far_up.
far_down()
{
	kill "$spa" "$spb" 2>/dev/null
	wait "$spa" "$spb" 2>/dev/null
	$A ip route del "$1/32"
	$B ip route del "$2/32"
	$B ip addr del "$1/32" dev swxb
	echo "$old_timeout" > $PARAMS/peer_timeout_ms
}

# unbound: A posts to FAR, an address of B's it has no route to; B dials
# A's second address from FAR; then A gets a route to FAR, from its
# first address.
unbound()
{
	local far=10.85.0.2 spa spb a b sa0 sb0 bl bi br bm al ai ar am x bad done=
	sa0=$(stale swnicxa) sb0=$(stale swnicxb)
	far_up $far "$ADDR_A2" "IPv4: B at a third address, A with no route to it" ||
		return
	sleep 1
	a=$(ctx swnicxa $far)
	b=$(ctx swnicxb "$ADDR_A2" $far)
	read -r bl bi br bm <<<"$b"
	diag "A's contexts for $far (local local_inc remote_inc msgs): $(printf "%s\n" "$a" | tr "\n" ";")"
	diag "B's context for $ADDR_A2 at $far: $b"
	if [ -n "$bi" ] && [ "$bi" != 0 ] &&
	   printf '%s\n' "$a" | grep -q "^- [0-9]* 0 1$" &&
	   printf '%s\n' "$a" | grep -q "^$ADDR_A2 [0-9]* $bi "; then
		ok "IPv4: B's request to A's second address makes that pair's context, not the unbound one's"
	else
		not_ok "IPv4: B's request to A's second address makes that pair's context, not the unbound one's" \
			"A's contexts for $far: $a" "B's for $ADDR_A2: $b"
	fi
	$A ip route replace $far/32 dev swxa src "$ADDR_A"
	for _ in $(seq 30); do
		a=$(ctx swnicxa $far)
		if [ "$(printf '%s\n' "$a" | cut -d' ' -f1 | tr '\n' ' ')" = \
		     "$ADDR_A $ADDR_A2 " ] &&
		   [ -z "$(printf '%s\n' "$a" | grep -v ' 0$')" ] &&
		   [ -z "$(ctx swnicxb "$ADDR_A" $far | grep -v ' 0$')" ] &&
		   [ -z "$(ctx swnicxb "$ADDR_A2" $far | grep -v ' 0$')" ]; then
			done=1
			break
		fi
		sleep 1
	done
	a=$(ctx swnicxa $far)
	bad=
	for x in "$ADDR_A" "$ADDR_A2"; do
		read -r al ai ar am <<<"$(printf '%s\n' "$a" | grep "^$x ")"
		b=$(ctx swnicxb "$x" $far)
		read -r bl bi br bm <<<"$b"
		if [ "$(printf '%s\n' "$b" | wc -l)" != 1 ] || [ "$al" != "$x" ] ||
		   [ "$bi" != "$ar" ] || [ "$br" != "$ai" ] ||
		   [ "$ai" = 0 ] || [ "$bi" = 0 ]; then
			bad="$bad A at $x: ($al $ai $ar $am), B: ($b);"
		fi
	done
	if [ -n "$done" ] && [ -z "$bad" ]; then
		ok "IPv4: with a route, A's contexts for $far are at both its addresses, each pair's ends naming each other, both requests answered"
	else
		not_ok "IPv4: with a route, A's contexts for $far are at both its addresses, each pair's ends naming each other, both requests answered" \
			"A's contexts for $far: $(printf "%s\n" "$a" | tr "\n" ";")" "$bad" \
			"$(ip netns exec swnicxb swnic peer show)"
	fi
	if [ "$(stale swnicxa)" = "$sa0" ] && [ "$(stale swnicxb)" = "$sb0" ]; then
		ok "IPv4: no packet dropped as stale meanwhile"
	else
		not_ok "IPv4: no packet dropped as stale meanwhile" \
			"drop_stale: A $sa0 -> $(stale swnicxa), B $sb0 -> $(stale swnicxb)"
	fi
	far_down $far "$ADDR_A2"
}

# wedged: as unbound, but B dials A's first address from FAR, the one
# A's route will pick: that pair's context exists before A's dialled one
# can bind to it. A's request moves onto it once the route is there, and
# both requests are answered well before the peer timeout (60 s). Before,
# the dialled context would not bind to a pair that had a context: it
# sent nothing and failed at the peer timeout, whatever B said - one
# packet of B's address to A, a forged one too, was enough.
wedged()
{
	local far=10.85.0.3 spa spb a b bi done= i
	far_up $far "$ADDR_A" \
		"IPv4: A's context dialled with no route moves onto the pair's context B's request made" ||
		return
	for i in $(seq 20); do
		[ -n "$(ctx swnicxa $far "$ADDR_A")" ] && break
		sleep 0.5
	done
	diag "before the route, A's contexts for $far (local local_inc remote_inc msgs): $(ctx swnicxa $far | tr '\n' ';')"
	$A ip route replace $far/32 dev swxa src "$ADDR_A"
	for i in $(seq 30); do
		a=$(ctx swnicxa $far)
		b=$(ctx swnicxb "$ADDR_A" $far)
		read -r _ bi _ _ <<<"$b"
		# One context of A's for FAR (the dialled one is gone), at
		# A's first address, naming B, its request answered.
		if [ -n "$bi" ] && [ "$bi" != 0 ] &&
		   [ "$(printf '%s\n' "$a" | wc -l)" = 1 ] &&
		   printf '%s\n' "$a" | grep -qx "$ADDR_A [1-9][0-9]* $bi 0" &&
		   printf '%s\n' "$b" | grep -q " 0$"; then
			done=1
			break
		fi
		sleep 1
	done
	diag "after ${i} s: A's: $(printf '%s\n' "$a" | tr '\n' ';') B's: $b"
	if [ -n "$done" ]; then
		ok "IPv4: A's context dialled with no route moves onto the pair's context B's request made"
	else
		not_ok "IPv4: A's context dialled with no route moves onto the pair's context B's request made" \
			"A's contexts for $far: $a" "B's for $ADDR_A: $b"
	fi
	far_down $far "$ADDR_A"
}

# caps: one host (B, one port) that never ACKs, at both of A's addresses.
caps()
{
	local n ports='' i p x
	# Nothing times out while the second run follows the first.
	echo 60000 > $PARAMS/peer_timeout_ms
	echo 1 > $PARAMS/udp_any_sport
	for x in "$ADDR_A" "$ADDR_A2"; do
		$B timeout 120 selftests/wire/out/wire_fuzz -s 1 -n 12000 -d 3000 \
			-x noack -o 40001 "$x" >>"$TMP/noack" 2>&1 ||
			diag "wire_fuzz -x noack to $x: $(tail -2 "$TMP/noack")"
	done
	n=$(settled swnicxa "$ADDR_B:40001" answers)
	diag "answers for $ADDR_B:40001, by context: $(ip netns exec swnicxa swnic -j peer show |
		jq -c "[.[] | select(.peer == \"$ADDR_B:40001\") | {local, answers}]")"
	if [ "$n" -gt 256 ] && [ "$n" -le 8192 ]; then
		ok "IPv4: a host that never ACKs, at both A's addresses: at most 8192 answers kept in all ($n)"
	else
		not_ok "IPv4: a host that never ACKs, at both A's addresses: at most 8192 answers kept in all ($n)" \
			"$(cat "$TMP/noack")"
	fi
	# Six endpoints of root's that post no receive: 1000 sends each
	# (under their 1024 unexpected), 3000 to each of A's addresses.
	for i in 1 2 3 4 5 6; do
		$A timeout 120 selftests/wire/out/wire_spray -n 0 -s 100 127.0.0.1 \
			>"$TMP/ep$i" 2>&1 &
		eps="$eps $!"
	done
	for i in 1 2 3 4 5 6; do
		wait_for_line posted "$TMP/ep$i"
		p=$(sed -n 's/^wire_spray: port \([0-9]*\)$/\1/p' "$TMP/ep$i")
		ports="$ports${ports:+,}$p"
	done
	diag "endpoints at ports $ports"
	for x in "$ADDR_A" "$ADDR_A2"; do
		$B timeout 120 selftests/wire/out/wire_fuzz -s 2 -n 3000 -d 3000 \
			-x held -e "$ports" -o 40002 "$x" >>"$TMP/held" 2>&1 ||
			diag "wire_fuzz -x held to $x: $(tail -2 "$TMP/held")"
	done
	n=$(settled swnicxa "$ADDR_B:40002" held)
	diag "held for $ADDR_B:40002, by context: $(ip netns exec swnicxa swnic -j peer show |
		jq -c "[.[] | select(.peer == \"$ADDR_B:40002\") | {local, held, answers}]")"
	if [ "$n" -ge 3000 ] && [ "$n" -le 4096 ]; then
		ok "IPv4: a host's delivery-complete sends at both A's addresses: at most 4096 held in all ($n)"
	else
		not_ok "IPv4: a host's delivery-complete sends at both A's addresses: at most 4096 held in all ($n)" \
			"$(cat "$TMP/held")"
	fi
	# shellcheck disable=SC2086 # the PIDs
	kill $eps 2>/dev/null
	# shellcheck disable=SC2086
	wait $eps 2>/dev/null
	eps=
	echo "$old_any_sport" > $PARAMS/udp_any_sport
	echo "$old_timeout" > $PARAMS/peer_timeout_ms
}

wire_pair x 10.84.0
ADDR_A2=10.84.0.11
if $A ip addr add "$ADDR_A2/24" dev swxa &&
   $A ip route replace 10.84.0.0/24 dev swxa proto kernel scope link \
	src "$ADDR_A2" &&
   [ "$($A ip -j route get "$ADDR_B" | jq -r '.[0].prefsrc')" = "$ADDR_A2" ]; then
	ok "IPv4: A's route to B picks its second address ($ADDR_A2)"
	multihome IPv4 "$ADDR_A" "$ADDR_A2" "$ADDR_B"
	unbound
	wedged
	caps
else
	not_ok "IPv4: A's route to B picks its second address ($ADDR_A2)" \
		"$($A ip route get "$ADDR_B")"
fi

# IPv6: the same, on a second veth pair with IPv6 addresses only that
# the devices are bound to. A's device takes one of A's two addresses
# (the first on the netdev's list), the route to B is given the other.
A6=fd00:84::1 A62=fd00:84::11 B6=fd00:84::2
dev6()
{
	$A fi_info -p swnic -d swnicxa -t FI_EP_RDM -v 2>&1 |
		sed -n 's/.*src_addr: fi_sockaddr_in6:\/\/\[\(.*\)\]:.*/\1/p' |
		head -1
}
if ip link add swxa6 type veth peer name swxb6 &&
   ip link set swxa6 netns swnicxa && ip link set swxb6 netns swnicxb &&
   $A ip -6 addr add $A6/64 dev swxa6 nodad &&
   $A ip -6 addr add $A62/64 dev swxa6 nodad &&
   $B ip -6 addr add $B6/64 dev swxb6 nodad &&
   $A ip link set swxa6 up && $B ip link set swxb6 up &&
   $A swnic dev del swnicxa >/dev/null && $B swnic dev del swnicxb >/dev/null &&
   $A swnic dev add swnicxa netdev swxa6 && $B swnic dev add swnicxb netdev swxb6 &&
   d6=$(dev6) && { [ "$d6" = $A6 ] || [ "$d6" = $A62 ]; }; then
	o6=$A6
	[ "$d6" = $A6 ] && o6=$A62
	if $A ip -6 route replace fd00:84::/64 dev swxa6 proto kernel metric 256 \
		src "$o6" &&
	   [ "$($A ip -j -6 route get $B6 | jq -r '.[0].prefsrc')" = "$o6" ] &&
	   [ "$(dev6)" = "$d6" ]; then
		ok "IPv6: A's device at $d6, its route to B picks $o6"
		PP_FAMILY=-6 multihome IPv6 "$d6" "$o6" $B6
	else
		not_ok "IPv6: A's device at $d6, its route to B picks $o6" \
			"$($A ip -6 route get $B6 2>&1)" "device: $(dev6)"
	fi
else
	not_ok "IPv6: a veth pair with two addresses at A, a device on it" \
		"$($A ip -6 addr show dev swxa6 2>&1)" "device: $(dev6)"
fi

wire_pair_del
objects_released "$before"

tap_done
