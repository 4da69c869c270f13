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
PROG=selftests/wire/out/wire_hol
cleanup()
{
	pkill -9 -f "wire_hol -s" 2>/dev/null
	wire_pair_del
}
trap cleanup EXIT

wire_pair h 10.83.0

# Target in A, initiator in B; both bounded in time.
across() { wire_across $PROG 120; }

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

if wire_impair loss 5%; then
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
