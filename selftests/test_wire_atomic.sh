#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_atomic.sh - atomics between two hosts: two network namespaces
# joined by a veth pair, a swnic device in each bound to its end (as
# test_wire.sh), and wire_atomic across: every op x datatype with values
# checked, elements straddling a page, key/bounds/rights errors, two
# initiators adding to one word at once; then under netem loss and
# duplication, where an atomic must still be applied exactly once.
#
# swnic-timeout: 600

. "$(dirname "$0")/lib.sh"

require_cmd ip swnic tc
ip netns add swnicaa 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnicab

A="ip netns exec swnicaa"
B="ip netns exec swnicab"
ADDR_A=10.78.0.1
ADDR_B=10.78.0.2
PROG=selftests/wire/out/wire_atomic
cleanup()
{
	pkill -9 -f "wire_atomic -s" 2>/dev/null
	$A swnic dev del swnicaa force >/dev/null 2>&1
	$B swnic dev del swnicab force >/dev/null 2>&1
	ip netns del swnicaa 2>/dev/null
	ip netns del swnicab 2>/dev/null
}
trap cleanup EXIT

check "a veth pair between two namespaces, addressed" sh -c "
	ip link add swaa type veth peer name swab &&
	ip link set swaa netns swnicaa && ip link set swab netns swnicab &&
	$A ip addr add $ADDR_A/24 dev swaa &&
	$B ip addr add $ADDR_B/24 dev swab &&
	$A ip link set swaa up && $B ip link set swab up &&
	$A ip link set lo up && $B ip link set lo up"
check "a swnic device in each, bound to its veth" sh -c "
	$A swnic dev add swnicaa netdev swaa &&
	$B swnic dev add swnicab netdev swab"

# Target in A, initiator in B; both bounded in time.
across()
{
	$A timeout 240 $PROG -s >/tmp/wat.srv 2>&1 &
	srv=$!
	$B timeout 240 $PROG $ADDR_A >/tmp/wat.cli 2>&1
	rc=$?
	wait $srv || rc=1
	diag - </tmp/wat.cli
	diag - </tmp/wat.srv
	return $rc
}

if across; then
	ok "atomics across: every op x datatype, errors, concurrent adds"
else
	not_ok "atomics across: every op x datatype, errors, concurrent adds"
fi

$A ethtool -K swaa gso off tso off >/dev/null 2>&1
$B ethtool -K swab gso off tso off >/dev/null 2>&1
if $A tc qdisc replace dev swaa root netem loss 5% duplicate 5% &&
   $B tc qdisc replace dev swab root netem loss 5% duplicate 5%; then
	if across; then
		ok "atomics across under netem loss 5% duplicate 5%, exactly once"
	else
		not_ok "atomics across under netem loss 5% duplicate 5%, exactly once"
	fi
else
	not_ok "netem loss/duplicate" "tc qdisc failed"
fi

tap_done
