#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_sep.sh - scalable endpoints between two hosts: two network
# namespaces joined by a veth pair, a swnic device in each bound to its
# end (as test_wire.sh), and wire_sep across: transmit contexts sending to
# named receive contexts (fi_rx_addr) of the other host's SEP, completions
# on each context's own CQ, FI_SOURCE naming the SEP, a 256 KiB tagged
# message placed in a receive context; then the same under netem loss.
#
# swnic-timeout: 400

. "$(dirname "$0")/lib.sh"

require_cmd ip swnic tc
ip netns add swnicsa 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnicsb

A="ip netns exec swnicsa"
B="ip netns exec swnicsb"
ADDR_A=10.77.0.1
ADDR_B=10.77.0.2
PROG=selftests/wire/out/wire_sep
cleanup()
{
	pkill -9 -f "wire_sep -s" 2>/dev/null
	$A swnic dev del swnicsa force >/dev/null 2>&1
	$B swnic dev del swnicsb force >/dev/null 2>&1
	ip netns del swnicsa 2>/dev/null
	ip netns del swnicsb 2>/dev/null
}
trap cleanup EXIT

check "a veth pair between two namespaces, addressed" sh -c "
	ip link add swsa type veth peer name swsb &&
	ip link set swsa netns swnicsa && ip link set swsb netns swnicsb &&
	$A ip addr add $ADDR_A/24 dev swsa &&
	$B ip addr add $ADDR_B/24 dev swsb &&
	$A ip link set swsa up && $B ip link set swsb up &&
	$A ip link set lo up && $B ip link set lo up"
check "a swnic device in each, bound to its veth" sh -c "
	$A swnic dev add swnicsa netdev swsa &&
	$B swnic dev add swnicsb netdev swsb"

# Target in A, initiator in B; both bounded in time.
across()
{
	$A timeout 120 $PROG -s >/tmp/wsep.srv 2>&1 &
	srv=$!
	$B timeout 120 $PROG $ADDR_A >/tmp/wsep.cli 2>&1
	rc=$?
	wait $srv || rc=1
	diag - </tmp/wsep.cli
	diag - </tmp/wsep.srv
	return $rc
}

if across; then
	ok "SEP across: named rx contexts, per-context CQs, FI_SOURCE, 256 KiB"
else
	not_ok "SEP across: named rx contexts, per-context CQs, FI_SOURCE, 256 KiB"
fi

$A ethtool -K swsa gso off tso off >/dev/null 2>&1
$B ethtool -K swsb gso off tso off >/dev/null 2>&1
if $A tc qdisc replace dev swsa root netem loss 5% &&
   $B tc qdisc replace dev swsb root netem loss 5%; then
	if across; then
		ok "SEP across under netem loss 5%"
	else
		not_ok "SEP across under netem loss 5%"
	fi
else
	not_ok "netem loss" "tc qdisc failed"
fi

tap_done
