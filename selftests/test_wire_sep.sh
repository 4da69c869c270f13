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
PROG=selftests/wire/out/wire_sep
cleanup()
{
	pkill -9 -f "wire_sep -s" 2>/dev/null
	wire_pair_del
}
trap cleanup EXIT

wire_pair s 10.77.0

# Target in A, initiator in B; both bounded in time.
across() { wire_across $PROG 120; }

if across; then
	ok "SEP across: named rx contexts, per-context CQs, FI_SOURCE, 256 KiB"
else
	not_ok "SEP across: named rx contexts, per-context CQs, FI_SOURCE, 256 KiB"
fi

if wire_impair loss 5%; then
	if across; then
		ok "SEP across under netem loss 5%"
	else
		not_ok "SEP across under netem loss 5%"
	fi
else
	not_ok "netem loss" "tc qdisc failed"
fi

tap_done
