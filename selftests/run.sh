#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - run swnic's selftests and report TAP. Meant for the VM
# (tools/testing/vm.sh runs it by default, `make check` on every kernel).
#
# Runs, in name order, every executable selftests/out/* (kselftest harness
# programs) and then every selftests/test_*.sh (through bash unless
# executable), each under a timeout, and forwards their output (stdout and
# stderr merged) after a "# selftest: NAME" header. Their top-level
# "ok"/"not ok" lines are the results. A program is never silently lost:
#
#   not ok - NAME: timed out after 300s        (also: killed by signal SIGx,
#                                               could not be killed)
#   not ok - NAME: exited with status S         non-zero exit, no "not ok"
#   not ok - NAME: ... after R of P tests       fewer results than its plan
#   not ok - NAME: the kernel logged: MESSAGE   BUG/WARNING/Oops meanwhile
#   ok - NAME # SKIP REASON                     skipped whole (exit 4, 1..0)
#
# After a kernel Oops/BUG the remaining programs are not run (reported as
# "ok - NAME # SKIP not run: ..."; SWNIC_TEST_KEEP_GOING=1 runs them).
# A program that leaves the module unloaded when it found it loaded (a test
# that replaces it and was killed before it could load it again) fails:
#
#   not ok - NAME: left swnic unloaded (loaded again: SWNIC_MODULE)
#
# and the module is loaded again, so that one test's fault does not fail
# every test after it.
#
# At the end: "ok - rmmod swnic" if the module unloads (refcount 0, within
# 60s), and "ok - dmesg clean" if the kernel logged no BUG/WARNING/Oops/...
# since the VM was up (vm.sh marks the log before it loads swnic).
# Exit status 1 if anything failed.
#
# Environment:
#   SWNIC_TEST_TIMEOUT     seconds per program (default 300, or what a
#                          script's "# swnic-timeout: SECS" line asks)
#   SWNIC_TESTS            space-separated glob patterns: run only the
#                          programs whose name matches one ('abi_* test_mr*')
#   SWNIC_TEST_KEEP_GOING  1: keep running programs after a kernel Oops

set -u

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

TIMEOUT=${SWNIC_TEST_TIMEOUT:-300}
FILTER=${SWNIC_TESTS:-}
KEEP_GOING=${SWNIC_TEST_KEEP_GOING:-0}
# The kernel has gone wrong (at the start of a message)...
DMESG_BAD='^(\[[ 0-9.]+\] )?(WARNING:|BUG:|Oops|kernel BUG at|general protection fault|UBSAN:|refcount_t:|list_(add|del) corruption|INFO: task .* blocked for more than|watchdog: BUG:|rcu: INFO: .*stall|Kernel panic)'
# ... and is probably wedged: locks held by a dead task.
DMESG_OOPS='^(\[[ 0-9.]+\] )?(BUG:|Oops|kernel BUG at|general protection fault|Kernel panic)'

pass=0
fail=0
skip=0
oopsed=
dmesg_seen=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/swnic-run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Count a top-level TAP result line.
count()
{
	local l=$1

	if [[ $l =~ ^not\ ok($|\ ) ]]; then
		fail=$((fail + 1))
	elif [[ $l =~ ^ok($|\ ) ]]; then
		if [[ ${l,,} == *"# skip"* ]]; then
			skip=$((skip + 1))
		else
			pass=$((pass + 1))
		fi
	fi
}

# Print and count a result line of our own.
result()
{
	echo "$1"
	count "$1"
}

selected()
{
	local p

	[ -z "$FILTER" ] && return 0
	for p in $FILTER; do
		# shellcheck disable=SC2053  # $p is a glob on purpose
		[[ $1 == $p ]] && return 0
	done
	return 1
}

describe_status()
{
	local st=$1

	if [ "$st" = stuck ]; then
		echo "timed out after ${TIMEOUT}s and could not be killed (stuck in the kernel?)"
	elif [ "$st" = 124 ] || [ "$st" = 137 ]; then
		echo "timed out after ${TIMEOUT}s"
	elif [ "$st" -gt 128 ]; then
		echo "killed by signal SIG$(kill -l $((st - 128)) 2>/dev/null || echo $((st - 128)))"
	else
		echo "exited with status $st"
	fi
}

# wait_bounded PID SECS: wait for our child PID, at most SECS seconds.
wait_bounded()
{
	local pid=$1 guard

	sleep "$2" &
	guard=$!
	wait -n "$pid" "$guard"
	if kill -0 "$pid" 2>/dev/null; then
		return 1
	fi
	kill "$guard" 2>/dev/null
	wait "$guard" 2>/dev/null
	return 0
}

# What is blocked where, for a process that will not die.
show_stuck()
{
	echo "# tasks in uninterruptible sleep:"
	ps -eo pid,stat,wchan:32,args | awk 'NR == 1 || $2 ~ /^D/' | sed 's/^/#   /'
	echo w > /proc/sysrq-trigger 2>/dev/null
	sleep 1
}

# The kernel log since the VM was up (vm.sh marks it), or all of it.
dmesg_job()
{
	dmesg 2>/dev/null | awk '/swnic-vm: up/ { n = 0 } { l[n++] = $0 }
				 END { for (i = 0; i < n; i++) print l[i] }'
}

# check_kernel NAME: did the kernel complain while NAME ran?
check_kernel()
{
	local name=$1 log=$tmp/dmesg bad first

	dmesg_job > "$log"
	bad=$(tail -n +$((dmesg_seen + 1)) "$log" | grep -E -A 12 "$DMESG_BAD" | head -n 60)
	dmesg_seen=$(wc -l < "$log")
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad" | sed 's/^/# /'
	first=$(printf '%s\n' "$bad" | grep -m1 -E "$DMESG_BAD" | sed 's/^\[[ 0-9.]*\] //')
	result "not ok - $name: the kernel logged: $first"
	if printf '%s\n' "$bad" | grep -qE "$DMESG_OOPS"; then
		oopsed=$name
	fi
}

# run_test NAME CMD...
run_test()
{
	local name=$1 log=$tmp/log pid tpid st t0 nres nfail plan why='' l
	local TIMEOUT=$TIMEOUT own loaded=
	shift

	# A script may need longer: a "# swnic-timeout: SECS" line says so.
	own=$(sed -n 's/^# swnic-timeout: \([0-9]*\)$/\1/p' "selftests/$name" \
	      2>/dev/null | head -1)
	[ -n "$own" ] && [ -z "${SWNIC_TEST_TIMEOUT:-}" ] && TIMEOUT=$own

	echo "# selftest: $name"
	[ -d /sys/module/swnic ] && loaded=1
	t0=$SECONDS
	# The output goes to a file that tail streams: a daemon that the test
	# leaves behind holding its stdout cannot stall us, and neither can a
	# test stuck in the kernel (we stop waiting for it).
	: > "$log"
	rm -f "$tmp/status"
	# (In a group with stderr away: no "Segmentation fault" from bash.)
	{
		timeout -k 10 "$TIMEOUT" "$@" < /dev/null > "$log" 2>&1
		echo "$?" > "$tmp/status"
	} 2>/dev/null &
	pid=$!
	tail -n +1 -s 0.2 -f --pid="$pid" "$log" &
	tpid=$!
	if wait_bounded "$pid" $((TIMEOUT + 30)); then
		wait "$tpid"
		st=$(cat "$tmp/status" 2>/dev/null || echo 125)
	else
		kill "$tpid" 2>/dev/null
		wait "$tpid" 2>/dev/null
		st=stuck
		show_stuck
	fi

	nres=0
	nfail=0
	plan=
	while IFS= read -r l || [ -n "$l" ]; do
		if [[ $l =~ ^(not\ )?ok($|\ ) ]]; then
			nres=$((nres + 1))
			[[ $l == not* ]] && nfail=$((nfail + 1))
			count "$l"
		elif [ -z "$plan" ] && [[ $l =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
			why=${l#*# [Ss][Kk][Ii][Pp]}
			[ "$why" = "$l" ] && why=
		fi
	done < "$log"

	if { [ "$plan" = 0 ] || [ "$st" = 4 ]; } && [ "$nres" = 0 ] &&
	   { [ "$st" = 0 ] || [ "$st" = 4 ]; }; then
		result "ok - $name # SKIP${why:- skipped as a whole}"
	elif [ "$st" = stuck ] || [ "$st" -gt 128 ] || [ "$st" = 124 ]; then
		result "not ok - $name: $(describe_status "$st")"
	elif [ "$st" != 0 ] && [ "$st" != 4 ] && [ "$nfail" = 0 ]; then
		result "not ok - $name: $(describe_status "$st")"
	elif [ -n "$plan" ] && [ "$nres" -lt "$plan" ]; then
		result "not ok - $name: $(describe_status "$st") after $nres of $plan tests"
	elif [ "$nres" = 0 ]; then
		result "not ok - $name: $(describe_status "$st") without any TAP result"
	fi
	check_kernel "$name"
	[ -n "$loaded" ] && check_module "$name"
	echo "# $name: $(describe_status "$st"), $((SECONDS - t0))s"
}

# check_module NAME: NAME found swnic loaded; is it still? If not, load
# the VM's module again ($SWNIC_MODULE, as vm.sh loaded it).
check_module()
{
	local name=$1 how err

	[ -d /sys/module/swnic ] && return 0
	if [ -z "${SWNIC_MODULE:-}" ]; then
		how="not loaded again: no SWNIC_MODULE"
	else
		modprobe -a udp_tunnel 2>/dev/null
		if err=$(insmod "$SWNIC_MODULE" 2>&1); then
			how="loaded again: $SWNIC_MODULE"
		else
			how="could not load it again: $err"
		fi
	fi
	result "not ok - $name: left swnic unloaded ($how)"
}

check_rmmod()
{
	local ref f pid

	if [ ! -d /sys/module/swnic ]; then
		result "ok - rmmod swnic # SKIP module not loaded"
		return
	fi
	ref=$(cat /sys/module/swnic/refcnt 2>/dev/null)
	if [ "$ref" != 0 ]; then
		echo "# swnic refcnt is $ref"
		for f in /sys/module/swnic/holders/*; do
			[ -e "$f" ] && echo "# held by module ${f##*/}"
		done
		for f in /proc/[0-9]*/fd/*; do
			case $(readlink "$f" 2>/dev/null) in
			/dev/swnic*)
				f=${f#/proc/}
				echo "# pid ${f%%/*} ($(cat "/proc/${f%%/*}/comm" 2>/dev/null)) has $(readlink "/proc/$f") open"
				;;
			esac
		done
	fi
	rmmod swnic > "$tmp/rmmod" 2>&1 &
	pid=$!
	if ! wait_bounded "$pid" 60; then
		show_stuck
		result "not ok - rmmod swnic: still running after 60s (refcnt was $ref)"
	elif [ ! -d /sys/module/swnic ]; then
		result "ok - rmmod swnic"
	else
		sed 's/^/# /' "$tmp/rmmod"
		result "not ok - rmmod swnic (refcnt $ref)"
	fi
}

check_dmesg()
{
	local bad

	bad=$(dmesg_job | grep -E -A 12 "$DMESG_BAD" | head -n 80)
	if [ -z "$bad" ]; then
		result "ok - dmesg clean"
	else
		printf '%s\n' "$bad" | sed 's/^/# /'
		result "not ok - dmesg clean: the kernel logged a BUG/WARNING/Oops"
	fi
}

main()
{
	local f name progs=()

	for f in selftests/out/*; do
		if [ -f "$f" ] && [ -x "$f" ]; then
			progs+=("$f")
		fi
	done
	for f in selftests/test_*.sh; do
		[ -f "$f" ] && progs+=("$f")
	done

	dmesg_job > "$tmp/dmesg"
	dmesg_seen=$(wc -l < "$tmp/dmesg")
	for f in "${progs[@]}"; do
		name=${f##*/}
		selected "$name" || continue
		if [ -n "$oopsed" ] && [ "$KEEP_GOING" != 1 ]; then
			result "ok - $name # SKIP not run: the kernel oopsed during $oopsed"
		elif [ -x "$f" ]; then
			run_test "$name" "./$f"
		else
			run_test "$name" bash "./$f"
		fi
	done

	echo "# selftest: module unload and kernel log"
	check_rmmod
	check_dmesg

	echo "# run.sh: $pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
}

main
