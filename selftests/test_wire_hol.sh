#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_hol.sh - a peer's requests wait for their own endpoint only:
# two network namespaces joined by a veth pair, a swnic device in each
# bound to its end (as test_wire.sh), and wire_hol across: sends to a
# target endpoint that has no room wait, while the same initiator's sends
# to another endpoint of that host complete; the waiting ones then arrive
# in the order sent; messages into a process that maps memory all the
# while arrive intact. Then the same under netem loss.
#
# swnic-timeout: 400

. "$(dirname "$0")/lib.sh"

require_cmd ip swnic tc jq
ip netns add swnicha 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnichb

A="ip netns exec swnicha"
B="ip netns exec swnichb"
ADDR_A=10.83.0.1
ADDR_B=10.83.0.2
PROG=selftests/wire/out/wire_hol
cleanup()
{
	pkill -9 -f "wire_hol -s" 2>/dev/null
	$A swnic dev del swnicha force >/dev/null 2>&1
	$B swnic dev del swnichb force >/dev/null 2>&1
	ip netns del swnicha 2>/dev/null
	ip netns del swnichb 2>/dev/null
}
trap cleanup EXIT

check "a veth pair between two namespaces, addressed" sh -c "
	ip link add swha type veth peer name swhb &&
	ip link set swha netns swnicha && ip link set swhb netns swnichb &&
	$A ip addr add $ADDR_A/24 dev swha &&
	$B ip addr add $ADDR_B/24 dev swhb &&
	$A ip link set swha up && $B ip link set swhb up &&
	$A ip link set lo up && $B ip link set lo up"
check "a swnic device in each, bound to its veth" sh -c "
	$A swnic dev add swnicha netdev swha &&
	$B swnic dev add swnichb netdev swhb"

# Target in A, initiator in B; both bounded in time.
across()
{
	$A timeout 120 $PROG -s >/tmp/whol.srv 2>&1 &
	srv=$!
	$B timeout 120 $PROG $ADDR_A >/tmp/whol.cli 2>&1
	rc=$?
	wait $srv || rc=1
	diag - </tmp/whol.cli
	diag - </tmp/whol.srv
	return $rc
}

# The target's count of requests run ahead of an earlier one that waited.
passed() { wire_counters swnicha | jq '.rx_passed // 0'; }

p0=$(passed)
if across; then
	ok "a full endpoint holds back its own sends only; they then arrive in order"
else
	not_ok "a full endpoint holds back its own sends only; they then arrive in order"
fi
p1=$(passed)
diag "target's wire: $(wire_counters swnicha | jq -c '{rx_passed, fault_waits}')"
if [ "${p1:-0}" -gt "${p0:-0}" ]; then
	ok "the target ran requests ahead of the waiting ones (rx_passed $p0 -> $p1)"
else
	not_ok "the target ran requests ahead of the waiting ones" \
		"rx_passed $p0 -> $p1"
fi

$A ethtool -K swha gso off tso off >/dev/null 2>&1
$B ethtool -K swhb gso off tso off >/dev/null 2>&1
if $A tc qdisc replace dev swha root netem loss 5% &&
   $B tc qdisc replace dev swhb root netem loss 5%; then
	if across; then
		ok "the same under netem loss 5%"
	else
		not_ok "the same under netem loss 5%"
	fi
else
	not_ok "netem loss" "tc qdisc failed"
fi

diag "target's wire: $(wire_counters swnicha | jq -c '{rx_passed, fault_waits}')"
tap_done
