#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_spoof.sh - a host that forges a peer's packets before the peer
# ever spoke. Two network namespaces A and C joined by a veth pair; while
# C has no swnic device yet (its wire's UDP port is free), a program in C
# sends 32 requests from C's address and the wire's port (wire_fuzz -x
# plain -o 4793), as C's kernel would, under an incarnation of its own,
# naming no one. A makes a context for C and answers: 16 answers in
# flight (the most to a peer that never named us), which nobody
# acknowledges (C's kernel never sent those requests). Then C
# gets its device, and fi_pingpong runs with its client in A - A sends
# first - and its server in C, whose kernel answers A's first packet (it
# names the forged incarnation) with a RESET, which resets A's context.
#
# Before, the 16 answers filled the initial window of a peer that never
# named us (16 packets), A's requests waited behind them, and the client
# failed at the peer timeout (ETIMEDOUT); a forger could do it again at
# will. Now our requests and our answers to such a peer have 16 each.
# Checks: the forged requests made a context and 16 answers are in
# flight; the ping-pong completes (64 B and 64 KiB, data checked); A's
# context names C's real incarnation; every object is released.
#
# swnic-timeout: 300

. "$(dirname "$0")/lib.sh"

require_cmd fi_pingpong ip ss swnic jq
[ -x selftests/wire/out/wire_fuzz ] || skip_all "selftests/wire/out/wire_fuzz not built"
TIMEOUT_PARAM=/sys/module/swnic/parameters/peer_timeout_ms
old_timeout=$(cat "$TIMEOUT_PARAM")
cleanup()
{
	echo "$old_timeout" > "$TIMEOUT_PARAM"
	ip netns exec swnicgc swnic dev del swnicgc force >/dev/null 2>&1
	ip netns exec swnicga swnic dev del swnicga2 force >/dev/null 2>&1
	ip netns del swnicgc 2>/dev/null
	swnic dev del swnicgc force >/dev/null 2>&1
	swnic dev del swnicga2 force >/dev/null 2>&1
	wire_pair_del
}
trap cleanup EXIT

before=$(swnic_objects)

# wire_pair's own (A and B) with devices; C is A's peer here, on a
# second veth of A's with a device of A's of its own (swnicga2).
wire_pair g 10.85.0
C="ip netns exec swnicgc"
ADDR_C=10.85.1.2
check "namespace C on a second veth of A (a device at A), no swnic device" sh -c "
	ip netns add swnicgc &&
	ip link add swga2 type veth peer name swgc &&
	ip link set swga2 netns swnicga && ip link set swgc netns swnicgc &&
	$A ip addr add 10.85.1.1/24 dev swga2 &&
	$C ip addr add $ADDR_C/24 dev swgc &&
	$A ip link set swga2 up && $C ip link set swgc up &&
	$C ip link set lo up && $C ping -c 1 -W 5 10.85.1.1 &&
	$A swnic dev add swnicga2 netdev swga2"
# Long enough that a ping-pong waiting for it times out first.
echo 30000 > "$TIMEOUT_PARAM"

# peer_of NS ADDR: NS's context for ADDR on the wire's port, one JSON
# object (empty if none).
peer_of()
{
	ip netns exec "$1" swnic -j peer show |
		jq -c --arg p "$2:4793" '.[] | select(.peer == $p)'
}

$C timeout 30 selftests/wire/out/wire_fuzz -s 1 -n 32 -x plain -o 4793 \
	10.85.1.1 >/tmp/wspoof.fuzz 2>&1
fuzz_rc=$?
sleep 0.5
forged=$(peer_of swnicga $ADDR_C)
# Its answers in flight: 16, the share of answers to a peer that never
# named us (not the full window of 256: a forger's requests would draw
# that many packets, kept until the peer timeout) - and they fill it.
if [ $fuzz_rc = 0 ] && [ -n "$forged" ] &&
   printf '%s' "$forged" | jq -e '.remote_inc != "0x0" and .remote_inc != 0 and
				  .inflight == 16' >/dev/null; then
	ok "32 requests forged from C's wire: a context at A, 16 answers in flight"
else
	not_ok "32 requests forged from C's wire: a context at A, 16 answers in flight" \
		"wire_fuzz exit $fuzz_rc: $(cat /tmp/wspoof.fuzz)" \
		"A's context for C: $forged"
fi
diag "A's context for C: $(printf '%s' "$forged" | jq -c '{remote_inc, inflight, answers}')"
check "C gets its swnic device" $C swnic dev add swnicgc netdev swgc

port=28100
# pingpong DESC OPTIONS...: the server in C, the client in A.
pingpong()
{
	local desc=$1 srv cli_rc srv_rc
	shift
	port=$((port + 1))
	$C timeout 25 fi_pingpong -p swnic "$@" -B "$port" >/tmp/wspoof.srv 2>&1 &
	srv=$!
	wait_listen swnicgc "$port"
	$A timeout 25 fi_pingpong -p swnic -d swnicga2 "$@" -P "$port" $ADDR_C \
		>/tmp/wspoof.cli 2>&1
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
	if [ $cli_rc = 0 ] && [ $srv_rc = 0 ]; then
		ok "$desc"
	else
		not_ok "$desc" "client exit $cli_rc, server exit $srv_rc (124: timed out)" \
			"client: $(tail -3 /tmp/wspoof.cli)" \
			"server: $(tail -3 /tmp/wspoof.srv)"
	fi
}
pingpong "after the forgery, A's first send reaches C (rdm 64 B, data checked)" \
	-e rdm -c -I 20 -S 64
pingpong "... and a 64 KiB ping-pong (data checked)" -e rdm -c -I 10 -S 65536

real_inc=$(peer_of swnicgc 10.85.1.1 | jq -r .local_inc)
now=$(peer_of swnicga $ADDR_C)
if [ -n "$real_inc" ] && [ "$(printf '%s' "$now" | jq -r .remote_inc)" = "$real_inc" ]; then
	ok "A's context names C's real incarnation ($real_inc)"
else
	not_ok "A's context names C's real incarnation" \
		"C's own: $real_inc; A's context: $now"
fi

$C swnic dev del swnicgc force >/dev/null 2>&1
$A swnic dev del swnicga2 force >/dev/null 2>&1
ip netns del swnicgc
wire_pair_del
objects_released "$before"

tap_done
