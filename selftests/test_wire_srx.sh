#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_srx.sh - a shared receive context between two hosts: two
# network namespaces joined by a veth pair, a swnic device in each bound to
# its end (as test_wire.sh), and wire_srx across: receives posted to an SRX
# taken, in posting order, by messages from two initiator endpoints to two
# endpoints bound to it, each completing on the CQ of the endpoint it
# arrived at with FI_SOURCE naming its sender, a 256 KiB tagged message
# placed through the SRX, an unexpected message waiting in the SRX; then
# the same under netem loss.
#
# swnic-timeout: 400

. "$(dirname "$0")/lib.sh"

require_cmd ip swnic tc
ip netns add swnicra 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnicrb

A="ip netns exec swnicra"
B="ip netns exec swnicrb"
ADDR_A=10.77.0.1
ADDR_B=10.77.0.2
PROG=selftests/wire/out/wire_srx
cleanup()
{
	pkill -9 -f "wire_srx -s" 2>/dev/null
	$A swnic dev del swnicra force >/dev/null 2>&1
	$B swnic dev del swnicrb force >/dev/null 2>&1
	ip netns del swnicra 2>/dev/null
	ip netns del swnicrb 2>/dev/null
}
trap cleanup EXIT

check "a veth pair between two namespaces, addressed" sh -c "
	ip link add swra type veth peer name swrb &&
	ip link set swra netns swnicra && ip link set swrb netns swnicrb &&
	$A ip addr add $ADDR_A/24 dev swra &&
	$B ip addr add $ADDR_B/24 dev swrb &&
	$A ip link set swra up && $B ip link set swrb up &&
	$A ip link set lo up && $B ip link set lo up"
check "a swnic device in each, bound to its veth" sh -c "
	$A swnic dev add swnicra netdev swra &&
	$B swnic dev add swnicrb netdev swrb"

# Target in A, initiator in B; both bounded in time.
across()
{
	$A timeout 120 $PROG -s >/tmp/wsrx.srv 2>&1 &
	srv=$!
	$B timeout 120 $PROG $ADDR_A >/tmp/wsrx.cli 2>&1
	rc=$?
	wait $srv || rc=1
	diag - </tmp/wsrx.cli
	diag - </tmp/wsrx.srv
	return $rc
}

if across; then
	ok "SRX across: posting order, per-endpoint CQs, FI_SOURCE, 256 KiB, unexpected"
else
	not_ok "SRX across: posting order, per-endpoint CQs, FI_SOURCE, 256 KiB, unexpected"
fi

$A ethtool -K swra gso off tso off >/dev/null 2>&1
$B ethtool -K swrb gso off tso off >/dev/null 2>&1
if $A tc qdisc replace dev swra root netem loss 5% &&
   $B tc qdisc replace dev swrb root netem loss 5%; then
	if across; then
		ok "SRX across under netem loss 5%"
	else
		not_ok "SRX across under netem loss 5%"
	fi
else
	not_ok "netem loss" "tc qdisc failed"
fi

tap_done
