# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# lib.sh - TAP helpers for swnic's shell selftests (selftests/test_*.sh).
#
#	#!/bin/sh
#	. "$(dirname "$0")/lib.sh"
#	tap_plan 3			# optional: else tap_done prints the plan
#	require_cmd swnic		# no swnic tool: skip the whole file
#	check "device exists" test -c /dev/swnic0
#	check_fail "empty name is rejected" swnic dev add ""
#	if ...; then ok "desc"; else not_ok "desc" "why"; fi
#	skip "remote peers" "no second host"
#	tap_done			# summary; exit 0 unless something failed
#
# Output is TAP 13 at top level: "ok N - desc", "not ok N - desc",
# "ok N - desc # SKIP reason", diagnostics as "# ..." lines. selftests/run.sh
# counts the top-level ok/not ok lines, and reports a file that exits
# non-zero without a "not ok", or runs fewer tests than it planned.
# Exit status (kselftest's): 0 pass, 1 fail, 4 the whole file was skipped.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

TAP_N=0
TAP_PASS=0
TAP_FAIL=0
TAP_SKIP=0
TAP_PLAN=
TAP_HEADER=

: "${SWNIC_REPO:=$(cd "$(dirname "$0")/.." && pwd)}"

_tap_header()
{
	[ -n "$TAP_HEADER" ] && return 0
	TAP_HEADER=1
	echo "TAP version 13"
}

# tap_plan N: announce N tests (before the first result).
tap_plan()
{
	_tap_header
	TAP_PLAN=$1
	echo "1..$1"
}

# diag TEXT...: a diagnostic line per argument; "-" reads them from stdin.
diag()
{
	if [ "$#" = 1 ] && [ "$1" = - ]; then
		sed 's/^/# /'
		return 0
	fi
	for _tap_l in "$@"; do
		printf '%s\n' "$_tap_l" | sed 's/^/# /'
	done
}

# ok DESC
ok()
{
	_tap_header
	TAP_N=$((TAP_N + 1))
	TAP_PASS=$((TAP_PASS + 1))
	echo "ok $TAP_N - $1"
}

# not_ok DESC [DIAG...]
not_ok()
{
	_tap_header
	TAP_N=$((TAP_N + 1))
	TAP_FAIL=$((TAP_FAIL + 1))
	echo "not ok $TAP_N - $1"
	shift
	[ "$#" -gt 0 ] && diag "$@"
	return 0
}

# skip DESC REASON
skip()
{
	_tap_header
	TAP_N=$((TAP_N + 1))
	TAP_SKIP=$((TAP_SKIP + 1))
	echo "ok $TAP_N - $1 # SKIP ${2:-}"
}

# skip_all REASON: nothing in this file can run here.
skip_all()
{
	_tap_header
	echo "1..0 # SKIP $1"
	exit "$KSFT_SKIP"
}

# require_cmd CMD...: skip the whole file unless every CMD is available.
require_cmd()
{
	for _tap_c in "$@"; do
		command -v "$_tap_c" >/dev/null 2>&1 ||
			skip_all "$_tap_c not available"
	done
}

# wire_counters NS: the wire counters of network namespace NS (the "*" row
# of swnic peer show), one JSON object.
wire_counters()
{
	ip netns exec "$1" swnic -j peer show |
		jq -c '.[] | select(.peer == "*") | .counters'
}

# wire_other_sport_dropped FROM NS ADDR: the wire takes datagrams from its
# own port only - one from an ordinary socket is some user's, who could
# write any uid or auth key into it. 200 well-formed requests that FROM
# (the command prefix of the sender's namespace) sends from an ordinary
# socket (wire_fuzz -x plain) to ADDR, the address of namespace NS, are
# each dropped there as drop_addr, and make no peer context. One check.
wire_other_sport_dropped()
{
	_ws_n=200
	_ws_0=$(wire_counters "$2")
	# shellcheck disable=SC2086 # FROM is a command prefix
	$1 timeout 60 selftests/wire/out/wire_fuzz -s 1 -n $_ws_n -x plain \
		"$3" >/tmp/wsport.$$ 2>&1
	_ws_rc=$?
	_ws_want=$(( $(printf '%s' "$_ws_0" | jq .drop_addr) + _ws_n ))
	for _ in $(seq 50); do
		[ "$(wire_counters "$2" | jq .drop_addr)" -ge $_ws_want ] && break
		sleep 0.2
	done
	_ws_1=$(wire_counters "$2")
	if [ $_ws_rc = 0 ] &&
	   [ "$(printf '%s' "$_ws_1" | jq .drop_addr)" = $_ws_want ] &&
	   [ "$(printf '%s' "$_ws_1" | jq .peers)" = \
	     "$(printf '%s' "$_ws_0" | jq .peers)" ]; then
		ok "$_ws_n requests from another UDP port dropped as drop_addr, no peer made"
	else
		not_ok "$_ws_n requests from another UDP port dropped as drop_addr, no peer made" \
			"wire_fuzz exit $_ws_rc: $(cat /tmp/wsport.$$)" \
			"before: $_ws_0" "after:  $_ws_1"
	fi
	rm -f /tmp/wsport.$$
}

# wire_pair T PREFIX: two hosts for a wire test - network namespaces
# swnic${T}a and swnic${T}b joined by a veth pair (sw${T}a, sw${T}b)
# addressed PREFIX.1 and PREFIX.2 (/24), lo up in each, and in each a swnic
# device named as its namespace, bound to its end. Sets A and B (commands
# run in each namespace), ADDR_A and ADDR_B. Skips the whole file if
# namespaces cannot be made; reports two checks (the pair, the devices).
# The caller's EXIT trap calls wire_pair_del.
wire_pair()
{
	_wp_t=$1
	ip netns add "swnic${1}a" 2>/dev/null ||
		skip_all "cannot create network namespaces"
	ip netns add "swnic${1}b"
	A="ip netns exec swnic${1}a"
	B="ip netns exec swnic${1}b"
	ADDR_A=$2.1
	ADDR_B=$2.2
	check "a veth pair between two namespaces, addressed" sh -c "
		ip link add sw${1}a type veth peer name sw${1}b &&
		ip link set sw${1}a netns swnic${1}a &&
		ip link set sw${1}b netns swnic${1}b &&
		$A ip addr add $ADDR_A/24 dev sw${1}a &&
		$B ip addr add $ADDR_B/24 dev sw${1}b &&
		$A ip link set sw${1}a up && $B ip link set sw${1}b up &&
		$A ip link set lo up && $B ip link set lo up"
	check "a swnic device in each, bound to its veth" sh -c "
		$A swnic dev add swnic${1}a netdev sw${1}a &&
		$B swnic dev add swnic${1}b netdev sw${1}b"
}

# wire_pair_del: undo wire_pair (and wire_ctrl), whatever got made.
wire_pair_del()
{
	$A swnic dev del "swnic${_wp_t}a" force >/dev/null 2>&1
	$B swnic dev del "swnic${_wp_t}b" force >/dev/null 2>&1
	ip netns del "swnic${_wp_t}a" 2>/dev/null
	ip netns del "swnic${_wp_t}b" 2>/dev/null
	# A device whose namespace went first is back in init_net.
	swnic dev del "swnic${_wp_t}a" force >/dev/null 2>&1
	swnic dev del "swnic${_wp_t}b" force >/dev/null 2>&1
}

# wire_ctrl PREFIX: a second veth pair between the namespaces of
# wire_pair (sw${T}ca, sw${T}cb), addressed PREFIX.1 and PREFIX.2, for a
# test's own control connection (fi_pingpong's TCP one): netem on the
# first pair then impairs swnic's traffic only - TCP's backoff on a lossy
# control connection alone stretched a run several times over. Sets
# CTRL_A and CTRL_B; wire_ctrl_del removes the pair.
wire_ctrl()
{
	CTRL_A=$1.1
	CTRL_B=$1.2
	ip link add "sw${_wp_t}ca" type veth peer name "sw${_wp_t}cb" &&
	ip link set "sw${_wp_t}ca" netns "swnic${_wp_t}a" &&
	ip link set "sw${_wp_t}cb" netns "swnic${_wp_t}b" &&
	$A ip addr add "$CTRL_A/24" dev "sw${_wp_t}ca" &&
	$B ip addr add "$CTRL_B/24" dev "sw${_wp_t}cb" &&
	$A ip link set "sw${_wp_t}ca" up && $B ip link set "sw${_wp_t}cb" up
}

# wait_listen NETNS PORT: wait (up to 30 s) until a server listens on TCP
# PORT (its control port) in network namespace NETNS. 1 if none did.
wait_listen()
{
	for _ in $(seq 300); do
		[ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2")" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_for_line PATTERN FILE: wait (up to 20 s) until FILE has a line
# PATTERN matches (a program in the background said it got that far). 1
# if it did not.
wait_for_line()
{
	for _ in $(seq 200); do
		grep -q "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

wire_ctrl_del()
{
	$A ip link del "sw${_wp_t}ca" 2>/dev/null
	CTRL_A=
	CTRL_B=
}

# wire_impair NETEM...: netem NETEM on both ends of wire_pair's veth pair,
# with GSO and TSO off first (netem would drop a burst of up to 40
# packets whole). "wire_impair loss 0%" takes the loss away.
wire_impair()
{
	$A ethtool -K "sw${_wp_t}a" gso off tso off >/dev/null 2>&1
	$B ethtool -K "sw${_wp_t}b" gso off tso off >/dev/null 2>&1
	$A tc qdisc replace dev "sw${_wp_t}a" root netem "$@" &&
	$B tc qdisc replace dev "sw${_wp_t}b" root netem "$@"
}

# wire_across PROG SECS [ARGS...]: PROG -s in A (the target) and
# PROG ARGS ADDR_A in B (the initiator), each bounded by SECS, both
# outputs shown as diagnostics. Status 0 if both succeeded.
wire_across()
{
	_wa_p=$1
	_wa_s=$2
	shift 2
	$A timeout "$_wa_s" "$_wa_p" -s >"/tmp/wa.$_wp_t.srv" 2>&1 &
	_wa_srv=$!
	$B timeout "$_wa_s" "$_wa_p" "$@" "$ADDR_A" >"/tmp/wa.$_wp_t.cli" 2>&1
	_wa_rc=$?
	wait "$_wa_srv" || _wa_rc=1
	diag - <"/tmp/wa.$_wp_t.cli"
	diag - <"/tmp/wa.$_wp_t.srv"
	return "$_wa_rc"
}

# killed_by STATUS WHO: if STATUS is that of a process killed by a signal
# (129-192: timeout(1) passes its child's on; its own 124 is not one), a
# line "WHO killed by signal N; the kernel: ..." with the kernel's last
# report of a user-space fault ("segfault at ... in LIB[BASE+SIZE]", or
# a trap), which names the library that faulted; nothing otherwise.
killed_by()
{
	[ "$1" -gt 128 ] 2>/dev/null && [ "$1" -le 192 ] || return 0
	printf '%s killed by signal %d; the kernel: %s\n' "$2" $(($1 - 128)) \
		"$(dmesg 2>/dev/null | grep -a -E 'segfault at|traps: ' | tail -n 1)"
}

# swnic_objects: the module's object counters (the "*" row of `swnic stat
# show`), one JSON object.
swnic_objects()
{
	swnic -j stat show | jq -c '.[] | select(.dev == "*") | .counters'
}

# objects_released BEFORE: once what a test made is gone, the module's
# counters are BEFORE (swnic_objects before it) again - given 10 s, as
# peer contexts go with their namespace. One check.
objects_released()
{
	for _ in $(seq 50); do
		[ "$(swnic_objects)" = "$1" ] && break
		sleep 0.2
	done
	_or_after=$(swnic_objects)
	if [ "$_or_after" = "$1" ]; then
		ok "every object made was released (module counters)"
	else
		not_ok "every object made was released (module counters)" \
			"before: $1" "after:  $_or_after"
	fi
}

# check DESC CMD [ARGS...]: ok if CMD succeeds; else not ok with its output.
check()
{
	_tap_d=$1
	shift
	if _tap_o=$("$@" 2>&1); then
		ok "$_tap_d"
	else
		_tap_st=$?
		not_ok "$_tap_d" "\`$*\` exited with status $_tap_st"
		[ -n "$_tap_o" ] && printf '%s\n' "$_tap_o" | tail -n 40 | diag -
	fi
	return 0
}

# check_fail DESC CMD [ARGS...]: ok if CMD fails (exits non-zero, no signal).
check_fail()
{
	_tap_d=$1
	shift
	if _tap_o=$("$@" 2>&1); then
		not_ok "$_tap_d" "\`$*\` succeeded but should have failed"
		[ -n "$_tap_o" ] && printf '%s\n' "$_tap_o" | tail -n 40 | diag -
	else
		_tap_st=$?
		if [ "$_tap_st" -gt 128 ]; then
			not_ok "$_tap_d" "\`$*\` died with status $_tap_st"
		else
			ok "$_tap_d"
		fi
	fi
	return 0
}

# tap_done: print the plan (if not given) and a summary, and exit.
tap_done()
{
	_tap_header
	[ -n "$TAP_PLAN" ] || echo "1..$TAP_N"
	echo "# $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
	if [ -n "$TAP_PLAN" ] && [ "$TAP_N" -ne "$TAP_PLAN" ]; then
		echo "# planned $TAP_PLAN tests but ran $TAP_N"
		exit "$KSFT_FAIL"
	fi
	[ "$TAP_FAIL" -eq 0 ] || exit "$KSFT_FAIL"
	exit "$KSFT_PASS"
}
