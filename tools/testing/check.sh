#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh - run the selftest suite in a VM on each kernel and add up.
#
# Usage: tools/testing/check.sh KERNEL...   (make check: 6.1 6.12-trixie
#                                            6.1-twovm)
#
# For each kernel tag (a lane): `tools/testing/vm.sh --kernel TAG`
# (selftests/run.sh), or for a *-trixie tag `tools/testing/trixie.sh check`
# (the Debian 13 lane: built inside the Debian 13 root and run there), for
# a TAG-twovm tag `tools/testing/two-vm.sh --kernel TAG` (two VMs joined by
# a wire), saved to build/check-TAG.log and streamed with a "[TAG] " prefix.
#
# The two-VM lanes run first, each by itself: their guests' wire is qemu's
# dgram netdev, and a virtio-net queue stalled for good once while two more
# guests were running (6 emulated CPUs on 2 cores). Then the other lanes
# run side by side, SWNIC_CHECK_JOBS (default 2) at a time, started in the
# order given: a lane's guest keeps about one of the build machine's cores
# busy (most tests are one process at a time, and the emulated CPUs idle
# while they wait), so two lanes take little longer than the longer one
# alone (make check: 51 minutes with its build, where one after the other
# took 96 to 110). SWNIC_CHECK_JOBS=1 runs them one after the other.
#
# Counts the top-level TAP lines of all lanes: "ok" (passed), "ok ... #
# SKIP" (skipped, listed) and "not ok" (failed, listed last with its
# diagnostics: CI shows the end of the output). A VM that fails to boot
# or return (exit status other than 0/1, or 1 without any "not ok") counts
# as one more failure. The last line of output is exactly "N passed, M
# failed"; the exit status is 1 if M > 0.
#
# Environment: SWNIC_CHECK_TIMEOUT (seconds per lane, passed to vm.sh
# --timeout; default 7200: side by side, the 6.1 lane took 2970 to 3329 s
# here and over 4800 s on a slower CI machine), SWNIC_CHECK_CMD (what the
# VM runs instead of selftests/run.sh, split at blanks: check-debug.sh),
# SWNIC_CHECK_JOBS, and everything vm.sh and run.sh read (SWNIC_TESTS, ...).

set -eu
set -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$REPO"

[ $# -gt 0 ] || { echo "usage: $0 KERNEL..." >&2; exit 2; }
jobs=${SWNIC_CHECK_JOBS:-2}
lane_timeout=${SWNIC_CHECK_TIMEOUT:-7200}
case $jobs:$lane_timeout in
*[!0-9:]*|0:*|*:0|:*|*:)
	echo "check.sh: SWNIC_CHECK_JOBS and SWNIC_CHECK_TIMEOUT take numbers > 0" >&2
	exit 2 ;;
esac

mkdir -p build

# lane TAG: run one lane, its output to build/check-TAG.log and, prefixed,
# to stdout; its runner's exit status to build/check-TAG.rc, its seconds
# to build/check-TAG.secs.
lane()
{
	local k=$1 log=build/check-$1.log t0=$SECONDS rc=0
	local -a args

	case $k in
	*-twovm)	# two VMs joined by a wire (two-vm.sh)
		args=(tools/testing/two-vm.sh --kernel "${k%-twovm}"
		      --timeout "$lane_timeout") ;;
	*-trixie)	# the Debian 13 lane: built and run inside its root
		args=(tools/testing/trixie.sh check --timeout "$lane_timeout") ;;
	*)
		args=(tools/testing/vm.sh --kernel "$k" --timeout "$lane_timeout")
		# shellcheck disable=SC2206  # a command line, split on purpose
		[ -z "${SWNIC_CHECK_CMD:-}" ] || args+=(-- $SWNIC_CHECK_CMD) ;;
	esac
	echo "==== [$k] ${args[*]} ===="
	"${args[@]}" < /dev/null 2>&1 | tee "$log" | sed -u "s/^/[$k] /" ||
		rc=${PIPESTATUS[0]}
	echo "$rc" > "build/check-$k.rc"
	echo $((SECONDS - t0)) > "build/check-$k.secs"
}

# The two-VM lanes alone, then the others, at most $jobs at a time.
rm -f build/check-*.rc build/check-*.secs
for k in "$@"; do
	case $k in
	*-twovm) lane "$k" ;;
	esac
done
running=0
for k in "$@"; do
	case $k in
	*-twovm) continue ;;
	esac
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	lane "$k" &
	running=$((running + 1))
done
wait || true

total_pass=0
total_fail=0
total_skip=0
summary=()
skipped=()
failed=()

for k in "$@"; do
	log=build/check-$k.log
	rc=$(cat "build/check-$k.rc" 2>/dev/null) || rc="(none)"
	secs=$(cat "build/check-$k.secs" 2>/dev/null) || secs="?"
	read -r pass fail skip < <(awk '
		/^not ok($| )/ { f++; next }
		/^ok($| )/ { if (tolower($0) ~ /# skip/) s++; else p++ }
		END { print p + 0, f + 0, s + 0 }' "$log" 2>/dev/null || echo 0 0 0)
	if [ "$rc" != 0 ] && { [ "$rc" != 1 ] || [ "$fail" = 0 ]; }; then
		line="not ok - vm $k: vm.sh exited with status $rc"
		echo "$line" | tee -a "$log"
		fail=$((fail + 1))
	elif [ "$rc" = 0 ] && [ $((pass + fail + skip)) = 0 ]; then
		line="not ok - vm $k: no test results"
		echo "$line" | tee -a "$log"
		fail=$((fail + 1))
	fi
	while IFS= read -r line; do
		skipped+=("[$k] $line")
	done < <(awk '/^# selftest: / { name = substr($0, 13) ": " }
		      /^ok($| )/ && tolower($0) ~ /# skip/ { print name $0 }' "$log")

	# Each failure with its selftest's name and the diagnostics ("# "
	# lines) just before and after it, at most 3 each side, each cut at
	# 160 characters: CI shows only the end of the output, and a failure
	# must be readable from there.
	while IFS= read -r line; do
		failed+=("[$k] $line")
	done < <(awk '
		/^# selftest: / { name = substr($0, 13) ": "; nb = 0; after = 0; next }
		/^not ok($| )/ {
			print name $0
			for (i = 0; i < nb; i++) print "    " before[i]
			nb = 0; after = 3; next }
		/^# +RUN / { nb = 0; after = 0 }	# the next harness test
		/^#/ {
			$0 = substr($0, 1, 160)
			if (after > 0) { print "    " $0; after--; next }
			if (nb == 3) { before[0] = before[1]; before[1] = before[2]; nb = 2 }
			before[nb++] = $0; next }
		{ nb = 0; after = 0 }' "$log")

	kver=$(cat "${SWNIC_CACHE:-$HOME/.cache/swnic}/k/${k%-twovm}/kver" 2>/dev/null) || kver="?"
	summary+=("[$k] $kver: $pass passed, $fail failed, $skip skipped (vm.sh exit $rc, ${secs}s)")
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done

echo "==== summary ===="
if [ ${#skipped[@]} -gt 0 ]; then
	echo "skipped:"
	printf '  %s\n' "${skipped[@]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "failed (full output in build/check-LANE.log):"
	printf '  %s\n' "${failed[@]}"
fi
printf '%s\n' "${summary[@]}"
[ "$total_skip" = 0 ] || echo "($total_skip skipped)"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
