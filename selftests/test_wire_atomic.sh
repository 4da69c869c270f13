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
PROG=selftests/wire/out/wire_atomic
cleanup()
{
	pkill -9 -f "wire_atomic -s" 2>/dev/null
	wire_pair_del
}
trap cleanup EXIT

wire_pair a 10.78.0

# Target in A, initiator in B; both bounded in time.
across() { wire_across $PROG 240; }

if across; then
	ok "atomics across: every op x datatype, errors, concurrent adds"
else
	not_ok "atomics across: every op x datatype, errors, concurrent adds"
fi

if wire_impair loss 5% duplicate 5%; then
	if across; then
		ok "atomics across under netem loss 5% duplicate 5%, exactly once"
	else
		not_ok "atomics across under netem loss 5% duplicate 5%, exactly once"
	fi
else
	not_ok "netem loss/duplicate" "tc qdisc failed"
fi

tap_done
