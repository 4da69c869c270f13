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
PROG=selftests/wire/out/wire_srx
cleanup()
{
	pkill -9 -f "wire_srx -s" 2>/dev/null
	wire_pair_del
}
trap cleanup EXIT

wire_pair r 10.77.0

# Target in A, initiator in B; both bounded in time.
across() { wire_across $PROG 120; }

if across; then
	ok "SRX across: posting order, per-endpoint CQs, FI_SOURCE, 256 KiB, unexpected"
else
	not_ok "SRX across: posting order, per-endpoint CQs, FI_SOURCE, 256 KiB, unexpected"
fi

if wire_impair loss 5%; then
	if across; then
		ok "SRX across under netem loss 5%"
	else
		not_ok "SRX across under netem loss 5%"
	fi
else
	not_ok "netem loss" "tc qdisc failed"
fi

tap_done
