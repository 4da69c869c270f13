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
# The same with 100 forged requests, from D (a third namespace, on a
# third veth of A's): 16 answers in flight, 84 waiting on A's queue, and
# A's first request behind them. Before, A's pump went past at most 64
# queued messages it could not send, answers included, so it never
# reached the request: the ping-pong failed at the peer timeout.
#
# Then a forged PING in the first round trip: A's link to B (wire_pair's)
# delayed 500 ms, wire_once sends one message from A to B, and while it is
# on its way a PING from B's address and wire port naming no one (a raw
# socket in B: wire_fuzz -x ping -f) comes to A. Before, A took the
# PING's incarnation for B's, B's real answer then looked like a new
# incarnation, A sent the message again under a new incarnation of its
# own, and B received it twice. Now the message is received once.
#
# Last, such packets are answered with an ACK only if they are as long
# as it: A posts to E (a fourth namespace, no swnic wire: nothing
# answers), and from E's wire port wire_fuzz sends a 16-byte DATA naming
# no one (no ACK may come back: 52 bytes for 16 made us an amplifier)
# and a 52-byte one (an ACK comes back, as to a peer whose first packets
# crossed ours).
#
# swnic-timeout: 420

. "$(dirname "$0")/lib.sh"

require_cmd fi_pingpong ip ss swnic jq tc
[ -x selftests/wire/out/wire_fuzz ] || skip_all "selftests/wire/out/wire_fuzz not built"
[ -x selftests/wire/out/wire_once ] || skip_all "selftests/wire/out/wire_once not built"
TIMEOUT_PARAM=/sys/module/swnic/parameters/peer_timeout_ms
old_timeout=$(cat "$TIMEOUT_PARAM")
cleanup()
{
	echo "$old_timeout" > "$TIMEOUT_PARAM"
	pkill -9 -f "wire_once -s" 2>/dev/null
	pkill -9 -f wire_spray 2>/dev/null
	for h in c d e; do
		ip netns exec swnicg$h swnic dev del swnicg$h force >/dev/null 2>&1
		ip netns del swnicg$h 2>/dev/null
		swnic dev del swnicg$h force >/dev/null 2>&1
	done
	for d in swnicga2 swnicga3 swnicga4; do
		ip netns exec swnicga swnic dev del $d force >/dev/null 2>&1
		swnic dev del $d force >/dev/null 2>&1
	done
	wire_pair_del
}
trap cleanup EXIT

before=$(swnic_objects)

# wire_pair's own (A and B) with devices; C is A's peer here, on a
# second veth of A's with a device of A's of its own (swnicga2).
wire_pair g 10.85.0
C="ip netns exec swnicgc"
ADDR_C=10.85.1.2
ADDR_D=10.85.2.2
# host H N: namespace swnicgH on veth swgaN of A (A's address 10.85.N-1.1,
# its own .2), and a device of A's on it (swnicgaN).
host()
{
	local h=$1 n=$2 net=10.85.$(($2 - 1))
	check "namespace ${h^^} on veth $n of A (a device at A), no swnic device" sh -c "
		ip netns add swnicg$h &&
		ip link add swga$n type veth peer name swg$h &&
		ip link set swga$n netns swnicga && ip link set swg$h netns swnicg$h &&
		$A ip addr add $net.1/24 dev swga$n &&
		ip netns exec swnicg$h ip addr add $net.2/24 dev swg$h &&
		$A ip link set swga$n up && ip netns exec swnicg$h ip link set swg$h up &&
		ip netns exec swnicg$h ip link set lo up &&
		ip netns exec swnicg$h ping -c 1 -W 5 $net.1 &&
		$A swnic dev add swnicga$n netdev swga$n"
}
host c 2
host d 3
host e 4
ADDR_E=10.85.3.2
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
# pingpong DESC OPTIONS...: the server in $SRV_NS ($SRV_ADDR), the client
# in A on device $CLI_DEV.
SRV_NS=swnicgc SRV_ADDR=$ADDR_C CLI_DEV=swnicga2
pingpong()
{
	local desc=$1 srv cli_rc srv_rc
	shift
	port=$((port + 1))
	ip netns exec $SRV_NS timeout 25 fi_pingpong -p swnic "$@" -B "$port" \
		>/tmp/wspoof.srv 2>&1 &
	srv=$!
	wait_listen $SRV_NS "$port"
	$A timeout 25 fi_pingpong -p swnic -d $CLI_DEV "$@" -P "$port" $SRV_ADDR \
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

# 100 forged requests from D's address: 84 answers wait on A's queue,
# and A's first request to D behind them.
D="ip netns exec swnicgd"
$D timeout 30 selftests/wire/out/wire_fuzz -s 2 -n 100 -x plain -o 4793 \
	10.85.2.1 >/tmp/wspoof.fuzz 2>&1
fuzz_rc=$?
sleep 0.5
forged=$(peer_of swnicga $ADDR_D)
if [ $fuzz_rc = 0 ] && [ -n "$forged" ] &&
   printf '%s' "$forged" | jq -e '.inflight == 16 and .answers >= 64' >/dev/null; then
	ok "100 requests forged from D's wire: 16 answers in flight, the rest queued"
else
	not_ok "100 requests forged from D's wire: 16 answers in flight, the rest queued" \
		"wire_fuzz exit $fuzz_rc: $(cat /tmp/wspoof.fuzz)" \
		"A's context for D: $forged"
fi
diag "A's context for D: $(printf '%s' "$forged" | jq -c '{remote_inc, inflight, answers}')"
check "D gets its swnic device" $D swnic dev add swnicgd netdev swgd
SRV_NS=swnicgd SRV_ADDR=$ADDR_D CLI_DEV=swnicga3
pingpong "after 100 forged requests, A's first send reaches D past the queued answers" \
	-e rdm -c -I 20 -S 64

# A forged PING in A's first round trip to B: B receives A's message once.
check "A's link to B delayed 500 ms" $A tc qdisc replace dev swga root netem delay 500ms
$B timeout 60 selftests/wire/out/wire_once -s >/tmp/wspoof.once_s 2>&1 &
once_s=$!
wait_listen swnicgb 27991
rm -f /tmp/wspoof.go
$B timeout 60 selftests/wire/out/wire_fuzz -s 3 -x ping -f $ADDR_B -o 4793 \
	-g /tmp/wspoof.go $ADDR_A >/tmp/wspoof.ping 2>&1 &
forger=$!
$A timeout 60 selftests/wire/out/wire_once $ADDR_B /tmp/wspoof.go \
	>/tmp/wspoof.once_c 2>&1 &
once_c=$!
wait $forger
ping_rc=$?
ip netns exec swnicga swnic -j peer show >/tmp/wspoof.peers
wait $once_c
once_c_rc=$?
wait $once_s
once_s_rc=$?
if [ $ping_rc = 0 ] && [ $once_c_rc = 0 ] && [ $once_s_rc = 0 ]; then
	ok "a PING forged from B in A's first round trip: B received A's message once"
else
	not_ok "a PING forged from B in A's first round trip: B received A's message once" \
		"forger exit $ping_rc: $(cat /tmp/wspoof.ping)" \
		"initiator exit $once_c_rc: $(cat /tmp/wspoof.once_c)" \
		"target exit $once_s_rc: $(cat /tmp/wspoof.once_s)"
fi
diag "initiator: $(grep -o 'ok: .*' /tmp/wspoof.once_c | tr '\n' ' ')"
diag "A's context for B right after the PING: $(jq -c --arg p "$ADDR_B:4793" \
	'.[] | select(.peer == $p) | {local_inc, remote_inc, inflight}' /tmp/wspoof.peers)"
diag "... and now: $(peer_of swnicga $ADDR_B | jq -c '{local_inc, remote_inc}')"
$A tc qdisc del dev swga root 2>/dev/null

# Packets naming no one in A's first round trip to E: no ACK for a short one.
$A timeout 30 selftests/wire/out/wire_spray -n 1 -s 15 $ADDR_E \
	>/tmp/wspoof.spray 2>&1 &
spray=$!
wait_for_line posted /tmp/wspoof.spray
sleep 0.5
E="ip netns exec swnicge"
$E timeout 10 selftests/wire/out/wire_fuzz -s 4 -x ping -T 1 -l 16 -o 4793 \
	10.85.3.1 >/tmp/wspoof.short 2>&1
short_rc=$?
$E timeout 10 selftests/wire/out/wire_fuzz -s 5 -x ping -T 1 -l 52 -o 4793 \
	10.85.3.1 >/tmp/wspoof.long 2>&1
long_rc=$?
kill $spray 2>/dev/null
wait $spray 2>/dev/null
if [ $short_rc = 3 ] && [ $long_rc = 0 ]; then
	ok "in A's first round trip to E, a 16-byte DATA naming no one draws no ACK, a 52-byte one does"
else
	not_ok "in A's first round trip to E, a 16-byte DATA naming no one draws no ACK, a 52-byte one does" \
		"16 bytes: exit $short_rc (3: no answer): $(cat /tmp/wspoof.short)" \
		"52 bytes: exit $long_rc (0: answered): $(cat /tmp/wspoof.long)" \
		"wire_spray: $(cat /tmp/wspoof.spray)" \
		"A's context for E: $(peer_of swnicga $ADDR_E)"
fi

$C swnic dev del swnicgc force >/dev/null 2>&1
$D swnic dev del swnicgd force >/dev/null 2>&1
$A swnic dev del swnicga4 force >/dev/null 2>&1
ip netns del swnicge
$A swnic dev del swnicga2 force >/dev/null 2>&1
$A swnic dev del swnicga3 force >/dev/null 2>&1
ip netns del swnicgc
ip netns del swnicgd
wire_pair_del
objects_released "$before"

tap_done
