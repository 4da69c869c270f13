#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_tool_unloaded.sh - swnic(8) without the module: every command says
# so and fails, and so does every line of a batch (-f -b), where a failed
# netlink setup once left a socket without the family behind: the next
# line sent message type 0, a change "succeeded" (the kernel acks control
# messages) and a dump waited forever for an answer. The test unloads the
# module the VM loaded ($SWNIC_MODULE) and loads it again, as test_deb.sh.

. "$(dirname "$0")/lib.sh"

[ "${SWNIC_VM:-}" = 1 ] || skip_all "needs the VM: unloads the module"
[ -n "${SWNIC_MODULE:-}" ] || skip_all "no SWNIC_MODULE to load again"
[ -d /sys/module/swnic ] || skip_all "swnic is not loaded"
require_cmd swnic rmmod insmod timeout

TMP=$(mktemp -d)
cleanup()
{
	if [ ! -d /sys/module/swnic ]; then
		modprobe -a udp_tunnel 2>/dev/null
		insmod "$SWNIC_MODULE" ||
			echo "# test_tool_unloaded: could not load $SWNIC_MODULE again"
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

rmmod swnic || skip_all "swnic cannot be unloaded (in use)"

swnic dev show >"$TMP/out" 2>"$TMP/err"
st=$?
if [ "$st" = 1 ] && grep -q "the swnic module is not loaded" "$TMP/err"; then
	ok "dev show: the module is not loaded, exit 1"
else
	not_ok "dev show: the module is not loaded, exit 1" "status $st:" \
		"$(cat "$TMP/err")"
fi

# A change, a doit, a dump: each line must fail as the first did.
printf 'dev show\ndev set swnic0 state up\ndev show swnic0\ndomain show\n' \
	>"$TMP/batch"
timeout 30 swnic -f -b "$TMP/batch" >"$TMP/out" 2>"$TMP/err"
st=$?
if [ "$st" = 1 ] &&
   [ "$(grep -c "the swnic module is not loaded" "$TMP/err")" = 4 ] &&
   [ "$(grep -c "batch:[1-4]: command failed" "$TMP/err")" = 4 ]; then
	ok "batch -f: every line fails on its own, none hangs or succeeds"
else
	not_ok "batch -f: every line fails on its own, none hangs or succeeds" \
		"status $st (124: timed out):" "$(cat "$TMP/err")"
fi

modprobe -a udp_tunnel 2>/dev/null
if insmod "$SWNIC_MODULE" 2>"$TMP/err" &&
   swnic dev show swnic0 >/dev/null 2>&1; then
	ok "the module loads again, swnic0 is back"
else
	not_ok "the module loads again, swnic0 is back" "$(cat "$TMP/err")"
fi

tap_done
