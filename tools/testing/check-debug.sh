#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-debug.sh - the selftest suite on the debug kernel, and no splats.
#
# Usage: tools/testing/check-debug.sh [TAG]      (make check-debug)
#
# On the host: `tools/testing/check.sh TAG` (default 6.12-debug, built by
# debug-kernel.sh; swnic, lib, tool and selftests built for it) with this
# script as the VM's command, more time and memory: the summary, log
# (build/check-TAG.log) and exit status are check.sh's.
#
# In the VM (SWNIC_VM=1): follows the kernel log from boot on, runs
# selftests/run.sh (which ends with rmmod swnic), then has kmemleak scan
# twice and reads /sys/kernel/debug/kmemleak (what is still unreferenced
# at the second scan, with allocation backtraces), then adds one TAP line:
#
#   ok - debug kernel: no splats
#   not ok - debug kernel: no splats       (with the reports as # comments)
#
# A splat is, anywhere in the kernel log since boot: KASAN/UBSAN/lockdep
# reports and any other BUG:, WARNING: (WARN_ON, RCU, sleeping in atomic),
# Oops, general protection fault, refcount_t or list corruption, hung
# task or RCU stall, "kmemleak: N new suspected memory leaks" or kmemleak
# turning itself off; also a leak in the kmemleak file, and lockdep found
# off at the end (debug_locks 0). Exit status 1 if that or run.sh failed.
#
# Environment (host): SWNIC_CHECK_TIMEOUT (seconds for the VM, default
# 14400), SWNIC_TEST_TIMEOUT (seconds per selftest program, default 2400),
# SWNIC_VM_MEM (MB, default 4096), and everything check.sh, vm.sh and run.sh
# read -- SWNIC_TESTS, SWNIC_FUZZ_ITERS, ... reach the guest (SWNIC_*).

set -eu
set -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$REPO"

# As in run.sh (DMESG_BAD), plus lockdep and kmemleak; at a message start.
SPLAT='^(\[[ 0-9.]+\] )?(WARNING:|BUG:|UBSAN:|Oops|kernel BUG at|general protection fault|refcount_t:|list_(add|del) corruption|INFO: task .* blocked for more than|INFO: (possible|trying to register non-static key|inconsistent)|watchdog: BUG:|rcu: INFO: .*stall|Kernel panic|.*possible circular locking|kmemleak: [0-9]+ new suspected memory leaks|kmemleak: .*(disabled|overlaps))'
KMEMLEAK=/sys/kernel/debug/kmemleak

host()
{
	local tag=${1:-6.12-debug} cache=${SWNIC_CACHE:-$HOME/.cache/swnic}

	[ -f "$cache/k/$tag/kver" ] ||
		{ echo "check-debug.sh: no kernel '$tag': run tools/testing/debug-kernel.sh" >&2; exit 2; }
	export SWNIC_CHECK_TIMEOUT=${SWNIC_CHECK_TIMEOUT:-14400}
	export SWNIC_TEST_TIMEOUT=${SWNIC_TEST_TIMEOUT:-2400}
	export SWNIC_VM_MEM=${SWNIC_VM_MEM:-4096}
	export SWNIC_CHECK_CMD=tools/testing/check-debug.sh
	exec tools/testing/check.sh "$tag"
}

# kmemleak: scan (it reports objects unreferenced for 5s and more), scan
# again (what the first caught in flight is no longer listed), list.
kmemleak_scan()
{
	sleep 5
	echo scan > "$KMEMLEAK" || return 1
	sleep 5
	echo scan > "$KMEMLEAK" || return 1
	cat "$KMEMLEAK"
}

# leak_summary FILE TEXT KO: the leaks in kmemleak's FILE, one entry per
# allocation backtrace, with swnic's addresses (its .text was at TEXT: it
# is unloaded by now) resolved to symbols from KO.
leak_summary()
{
	local syms=/dev/null

	if [ -n "$2" ] && [ -f "$3" ] && command -v objdump >/dev/null; then
		syms=$tmp/syms
		objdump -t "$3" > "$syms" 2>/dev/null || syms=/dev/null
	fi
	awk -v text="$2" '
	function hex(s,   i, n) {
		s = tolower(s); sub(/^0x/, "", s); n = 0
		for (i = 1; i <= length(s); i++)
			n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	# Module addresses all start 0xffffffff: the low 32 bits do (exact).
	function resolve(l,   a, off, i) {
		if (text == "" || l !~ /^ +0xffffffff[0-9a-f]+$/) return l
		a = l; sub(/^ +/, "", a)
		off = hex(substr(a, 11)) - hex(substr(text, 11))
		for (i = 0; i < nsym; i++)
			if (off >= start[i] && off < start[i] + size[i])
				return sprintf("    %s+0x%x/0x%x [swnic]", name[i],
					       off - start[i], size[i])
		return l
	}
	function done() { if (bt != "") { if (!(bt in cnt)) order[n++] = bt; cnt[bt]++
				         if (!(bt in what)) what[bt] = obj } }
	FILENAME != "-" { if ($3 == "F" && $4 == ".text") {
			start[nsym] = hex($1); size[nsym] = hex($5); name[nsym++] = $6 }
		  next }
	/^unreferenced object/ { done(); bt = ""; inbt = 0
				 obj = $0; sub(/^unreferenced object [^ ]* /, "", obj); next }
	/^  comm / { c = $0; sub(/^  comm /, "", c); sub(/, pid.*/, "", c); obj = obj " comm " c; next }
	/^  backtrace/ { inbt = 1; next }
	inbt && /^    / { bt = bt "\n" resolve($0); next }
	END { done()
	      for (i = 0; i < n; i++)
		printf "%d object(s) %s allocated at:%s\n", cnt[order[i]], what[order[i]], order[i] }
	' "$syms" - < "$1"
}

guest()
{
	local tmp st=0 bad=() text="" dpid gpid n

	tmp=$(mktemp -d "${TMPDIR:-/tmp}/swnic-debug.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT

	if [ ! -e "$KMEMLEAK" ] || [ ! -e /proc/lockdep_stats ]; then
		echo "# no $KMEMLEAK or /proc/lockdep_stats: not the debug kernel?"
		bad+=("kmemleak or lockdep missing")
	fi
	# (No <(...): the guest's devtmpfs has no /dev/fd.)
	dmesg > "$tmp/boot" 2>&1 || true
	grep -q 'KernelAddressSanitizer initialized' "$tmp/boot" ||
		bad+=("KASAN not initialized")
	[ -r /sys/module/swnic/sections/.text ] &&
		text=$(cat /sys/module/swnic/sections/.text)

	# The whole kernel log, from boot on (dmesg -w starts with the buffer),
	# filtered as it comes: the buffer may wrap during long runs.
	mkfifo "$tmp/fifo"
	grep --line-buffered -E -A 60 "$SPLAT" < "$tmp/fifo" > "$tmp/splats" &
	gpid=$!
	dmesg -w > "$tmp/fifo" &
	dpid=$!

	selftests/run.sh || st=$?

	echo "# selftest: debug kernel (kmemleak scan, kernel log since boot)"
	if [ -e "$KMEMLEAK" ]; then
		kmemleak_scan > "$tmp/leaks" 2>&1 ||
			bad+=("kmemleak scan failed: $(head -c 200 "$tmp/leaks")")
	fi
	sleep 1
	kill "$dpid" 2>/dev/null || true
	wait "$dpid" 2>/dev/null || true
	wait "$gpid" 2>/dev/null || true

	if [ -s "$tmp/splats" ]; then
		n=$(grep -cE "$SPLAT" "$tmp/splats")
		bad+=("$n splat(s) in the kernel log, first: $(grep -m1 -E "$SPLAT" "$tmp/splats" |
			sed 's/^\[[ 0-9.]*\] //')")
		echo "# ---- kernel log ----"
		head -n 600 "$tmp/splats" | sed 's/^/# /'
	fi
	if [ -s "$tmp/leaks" ] && grep -q '^unreferenced object' "$tmp/leaks"; then
		bad+=("$(grep -c '^unreferenced object' "$tmp/leaks") leak(s) in $KMEMLEAK")
		echo "# ---- $KMEMLEAK, by backtrace ----"
		[ -n "$text" ] && echo "# (swnic was loaded with .text at $text)"
		leak_summary "$tmp/leaks" "$text" "${SWNIC_MODULE:-}" |
			head -n 400 | sed 's/^/# /'
		echo "# ---- $KMEMLEAK, the first entries ----"
		head -n 100 "$tmp/leaks" | sed 's/^/# /'
	fi
	if [ -e /proc/lockdep_stats ] &&
	   ! grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats; then
		bad+=("lockdep is off (debug_locks 0)")
	fi

	if [ ${#bad[@]} = 0 ]; then
		echo "ok - debug kernel: no splats"
	else
		printf '# %s\n' "${bad[@]}"
		echo "not ok - debug kernel: no splats"
		st=1
	fi
	return "$st"
}

if [ "${SWNIC_VM:-0}" = 1 ]; then
	guest
else
	host "$@"
fi
