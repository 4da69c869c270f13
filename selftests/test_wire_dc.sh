#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_dc.sh - FI_DELIVERY_COMPLETE across the wire: two network
# namespaces joined by a veth pair, a swnic device in each, a short peer
# timeout (1 s). selftests/wire/wire_dc checks that a delivery-complete
# send the target buffers as unexpected completes only once a receive
# takes it - waiting several peer timeouts first, which only the
# keepalives survive - and fails (ECONNABORTED) when the target's endpoint
# closes on it; a send held by a target that restarts (a new namespace
# with its address) fails with ECONNRESET, drawn by a keepalive, before
# the peer timeout; then a send held by a target whose link goes down and
# whose namespace is deleted fails with ETIMEDOUT within the bound; the
# wire's counters show what was held and taken, and at the end every
# object is released (the module's own counters).
#
# swnic-timeout: 300

. "$(dirname "$0")/lib.sh"

require_cmd swnic jq
ip netns add swnicda 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnicdb

A="ip netns exec swnicda"
B="ip netns exec swnicdb"
ADDR_A=10.78.0.1
ADDR_B=10.78.0.2
TIMEOUT_PARAM=/sys/module/swnic/parameters/peer_timeout_ms
TIMEOUT_MS=1000
old_timeout=$(cat "$TIMEOUT_PARAM")
cleanup()
{
	pkill -9 -f "wire_dc -s" 2>/dev/null
	echo "$old_timeout" > "$TIMEOUT_PARAM"
	$A swnic dev del swnicda force >/dev/null 2>&1
	$B swnic dev del swnicdb force >/dev/null 2>&1
	ip netns del swnicda 2>/dev/null
	ip netns del swnicdb 2>/dev/null
	ip netns del swnicdc 2>/dev/null
	swnic dev del swnicda force >/dev/null 2>&1
	swnic dev del swnicdb force >/dev/null 2>&1
}
trap cleanup EXIT

objects()
{
	swnic -j stat show | jq -c '.[] | select(.dev == "*") | .counters'
}
# counter NS NAME: the wire counter NAME of namespace NS.
counter()
{
	ip netns exec "$1" swnic -j peer show |
		jq ".[] | select(.peer == \"*\") | .counters.$2 // 0"
}
before=$(objects)

setup_pair()
{
	ip link add swda type veth peer name swdb &&
	ip link set swda netns swnicda && ip link set swdb netns swnicdb &&
	$A ip addr add $ADDR_A/24 dev swda &&
	$B ip addr add $ADDR_B/24 dev swdb &&
	$A ip link set swda up && $B ip link set swdb up &&
	$A ip link set lo up && $B ip link set lo up &&
	$A swnic dev add swnicda netdev swda &&
	$B swnic dev add swnicdb netdev swdb
}
check "two namespaces over veth, a swnic device bound in each" setup_pair
check "the namespaces reach each other (ping)" $A ping -c 1 -W 5 $ADDR_B
echo "$TIMEOUT_MS" > "$TIMEOUT_PARAM"

# The target in A, the initiator in B; the quiet window is 4 s, four
# peer timeouts. Meanwhile the initiator's peer context is sampled (shown
# on failure).
$A timeout 120 selftests/wire/out/wire_dc -s >/tmp/wdc.srv 2>&1 &
srv=$!
$B timeout 120 selftests/wire/out/wire_dc -c -w 4000 $ADDR_A >/tmp/wdc.cli 2>&1 &
cli=$!
: > /tmp/wdc.peers
while kill -0 $cli 2>/dev/null; do
	$B swnic -j peer show | jq -c '.[] | select(.peer != "*") |
		[.msgs, .held_waiting, .silent_ms, .inflight]' >> /tmp/wdc.peers
	sleep 0.3
done
wait $cli
cli_rc=$?
wait $srv
srv_rc=$?
while read -r line; do diag "initiator $line"; done < /tmp/wdc.cli
while read -r line; do diag "target $line"; done < /tmp/wdc.srv
if [ $cli_rc = 0 ] && [ $srv_rc = 0 ]; then
	ok "a held delivery-complete send completes when the target receives it, and fails when its endpoint closes"
else
	not_ok "a held delivery-complete send completes when the target receives it, and fails when its endpoint closes" \
		"initiator exit $cli_rc, target exit $srv_rc" \
		"$(grep -h FAILED /tmp/wdc.cli /tmp/wdc.srv)" \
		"initiator's peer [msgs, held_waiting, silent_ms, inflight]:" \
		"$(tr '\n' ' ' < /tmp/wdc.peers)"
fi
for c in "swnicda held_taken 2" "swnicda held_failed 1" \
	 "swnicdb keepalives 1"; do
	set -- $c
	v=$(counter "$1" "$2")
	if [ "${v:-0}" -ge "$3" ]; then
		ok "$1's wire counts $2 ($v)"
	else
		not_ok "$1's wire counts $2" "$v, want >= $3"
	fi
done
held=$(counter swnicda held) waiting=$(counter swnicdb held_waiting)
if [ "$held" = 0 ] && [ "$waiting" = 0 ]; then
	ok "nothing is held any more (held, held_waiting 0)"
else
	not_ok "nothing is held any more" "held $held, held_waiting $waiting"
fi

# held_send_target_down [-r]: a target (A) holds the initiator's (B's)
# delivery-complete send (wire_dc -k, -r: expecting ECONNRESET); once it
# waits, the target's link goes down, its process is killed and its device
# deleted, as when its host crashes. Sets cli (the initiator's pid) and
# start (when the target went down).
held_send_target_down()
{
	$A selftests/wire/out/wire_dc -s -k >/dev/null 2>&1 &
	srv=$!
	$B timeout 120 selftests/wire/out/wire_dc -c -k "$@" -w 3000 $ADDR_A \
		>/tmp/wdc.cli 2>&1 &
	cli=$!
	for _ in $(seq 300); do
		grep -q waiting /tmp/wdc.cli 2>/dev/null && break
		sleep 0.1
	done
	start=$(date +%s)
	$A ip link set swda down
	kill -9 $srv 2>/dev/null
	wait $srv 2>/dev/null
	$A swnic dev del swnicda force >/dev/null 2>&1
}

# A held send whose target restarts: its link goes down, its process is
# killed and its namespace deleted, but its veth end lives on in a new
# namespace with the same address and a new device - a new incarnation,
# with no context for the initiator, and no application yet: the wire
# listens from the device's binding on. The initiator's next keepalive,
# to the old incarnation, draws a RESET: the send fails with ECONNRESET,
# well before the peer timeout (30 s here) that silence would take. The
# timeout leaves room for the restart itself (namespaces deleted and
# made, a device added), which took 9 s on a build machine running two
# lanes at once: with 10 s, the initiator timed out first.
echo 30000 > "$TIMEOUT_PARAM"
held_send_target_down -r
ip netns add swnicdc
$A ip link set swda netns swnicdc
ip netns del swnicda
ip netns add swnicda
ip netns exec swnicdc ip link set swda netns swnicda
ip netns del swnicdc
if sh -c "$A ip addr add $ADDR_A/24 dev swda &&
	  $A ip link set swda up && $A ip link set lo up &&
	  $A swnic dev add swnicda netdev swda" >/tmp/wdc.rst 2>&1; then
	restarted=yes
else
	restarted="failed: $(cat /tmp/wdc.rst)"
fi
wait $cli
cli_rc=$?
took=$(($(date +%s) - start))
while read -r line; do diag "initiator $line"; done < /tmp/wdc.cli
if [ "$restarted" = yes ] && [ $cli_rc = 0 ] && [ $took -lt 30 ]; then
	ok "a held send fails with ECONNRESET when its peer restarts, before the peer timeout ($took s)"
else
	not_ok "a held send fails with ECONNRESET when its peer restarts, before the peer timeout" \
		"restart: $restarted" "exit $cli_rc after $took s" \
		"$(grep FAILED /tmp/wdc.cli)"
fi
echo "$TIMEOUT_MS" > "$TIMEOUT_PARAM"

# A held send whose target dies: its link goes down (nothing more comes
# from it, as from a host that crashed), its process is killed and its
# namespace deleted. The initiator's keepalives get no answer: the send
# fails with ETIMEDOUT after the peer timeout.
# (The target is no child of timeout: killed, it is gone.)
held_send_target_down
ip netns del swnicda
wait $cli
cli_rc=$?
took=$(($(date +%s) - start))
while read -r line; do diag "initiator $line"; done < /tmp/wdc.cli
if [ $cli_rc = 0 ] && [ $took -lt 30 ]; then
	ok "a held send fails with ETIMEDOUT when its peer dies ($took s)"
else
	not_ok "a held send fails with ETIMEDOUT when its peer dies" \
		"exit $cli_rc after $took s" "$(grep FAILED /tmp/wdc.cli)"
fi

echo "$old_timeout" > "$TIMEOUT_PARAM"
$B swnic dev del swnicdb force >/dev/null 2>&1
ip netns del swnicdb
swnic dev del swnicda force >/dev/null 2>&1
swnic dev del swnicdb force >/dev/null 2>&1
for _ in $(seq 50); do
	[ "$(objects)" = "$before" ] && break
	sleep 0.2
done
after=$(objects)
if [ "$after" = "$before" ]; then
	ok "every object made was released (module counters, wire_held too)"
else
	not_ok "every object made was released (module counters)" \
		"before: $before" "after:  $after"
fi

tap_done
