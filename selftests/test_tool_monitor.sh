#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_tool_monitor.sh - `swnic monitor` prints the events of a scripted
# sequence (device added/changed/removed, domain opened/closed, limit hit,
# service added/removed), in order, as text and as JSON lines.

. "$(dirname "$0")/lib.sh"

require_cmd swnic jq
[ -c /dev/swnic0 ] || skip_all "no /dev/swnic0 (module not loaded?)"

TMP=$(mktemp -d)
MON=
cleanup()
{
	[ -n "$MON" ] && kill "$MON" 2>/dev/null
	wait 2>/dev/null
	swnic dev del swnicmon1 force >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

max_ep=$(swnic -j dev show swnic0 | jq .[0].max_ep)

# Start `swnic $* monitor` into $TMP/mon and wait until it hears a probe.
start_monitor()
{
	: >"$TMP/mon"
	swnic "$@" monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON=$!
	for _ in $(seq 100); do
		swnic dev set swnic0 max_ep "$max_ep"
		grep -q dev_set "$TMP/mon" && return 0
		sleep 0.1
	done
	return 1
}

# Wait until $TMP/mon has a line matching $1.
wait_for()
{
	for _ in $(seq 100); do
		grep -q "$1" "$TMP/mon" && return 0
		sleep 0.1
	done
	return 1
}

if start_monitor -j; then
	ok "monitor -j: listening"
else
	not_ok "monitor -j: listening" "$(cat "$TMP/mon.err")"
	tap_done
fi

# The scripted sequence.
swnic dev add swnicmon1
swnic dev set swnicmon1 state down
swnic dev set swnicmon1 state up max_domains 1
(
	echo "$BASHPID" >"$TMP/pid"
	exec 3</dev/swnicmon1
	exec 4</dev/swnicmon1
) 2>/dev/null
swnic service add swnicmon1 key 55 uid 1000
swnic service del swnicmon1 key 55
swnic dev del swnicmon1
pid=$(cat "$TMP/pid")

if wait_for '"event":"dev_del"'; then
	ok "monitor -j: the last event arrived"
else
	not_ok "monitor -j: the last event arrived" "$(cat "$TMP/mon")"
fi
kill "$MON"
wait "$MON" 2>/dev/null
MON=

# Every line is one JSON object.
if jq -e -s 'length > 0 and all(type == "object")' "$TMP/mon" >/dev/null; then
	ok "monitor -j: one JSON object a line"
else
	not_ok "monitor -j: one JSON object a line" "$(head -5 "$TMP/mon")"
fi

seq=$(jq -r 'select((.name // .dev) == "swnicmon1") | .event' "$TMP/mon" | tr '\n' ' ')
want="dev_add dev_set dev_set domain_open limit_hit domain_close service_add service_del dev_del "
if [ "$seq" = "$want" ]; then
	ok "monitor: the sequence's events, in order"
else
	not_ok "monitor: the sequence's events, in order" "got:  $seq" "want: $want"
fi

ev()
{
	jq -c "select((.name // .dev) == \"swnicmon1\") | select(.event == \"$1\")" "$TMP/mon"
}
check_ev()
{
	if ev "$2" | jq -e -s "$3" >/dev/null; then
		ok "$1"
	else
		not_ok "$1" "$(ev "$2")"
	fi
}
check_ev "dev_add: a new device, up" dev_add '.[0].state == "up" and .[0].domains == 0'
check_ev "dev_set: down, then up with max_domains 1" dev_set \
	'.[0].state == "down" and .[1].state == "up" and .[1].max_domains == 1'
check_ev "domain_open: the subshell's pid and uid" domain_open \
	".[0].pid == $pid and .[0].uid == $(id -u) and .[0].auth_key == 1"
check_ev "limit_hit: the device's max_domains" limit_hit \
	'.[0].limit == "dev_max_domains" and (.[0] | has("domain") | not)'
check_ev "domain_close: the same domain" domain_close \
	"(.[0].id == $(ev domain_open | jq .id)) and .[0].pid == $pid"
check_ev "service_add: key and members" service_add \
	'.[0].auth_key == 55 and .[0].uids == [1000]'
check_ev "service_del: the same service" service_del '.[0].auth_key == 55'

# Text: one "key value" line per event; count N stops after N events.
swnic monitor count 2 >"$TMP/text" 2>&1 &
MON=$!
for _ in $(seq 100); do
	swnic dev set swnic0 max_ep "$max_ep"
	[ "$(wc -l <"$TMP/text")" -ge 2 ] && break
	sleep 0.1
done
for _ in $(seq 50); do
	kill -0 "$MON" 2>/dev/null || break
	sleep 0.1
done
if ! kill -0 "$MON" 2>/dev/null && wait "$MON" &&
   [ "$(wc -l <"$TMP/text")" = 2 ] &&
   grep -Eq "^event dev_set index [0-9]+ name swnic0 state up .* max_ep $max_ep " "$TMP/text"; then
	ok "monitor count 2: two text lines, then exit 0"
else
	not_ok "monitor count 2: two text lines, then exit 0" "$(cat "$TMP/text")"
fi
MON=

# A flood of events the monitor cannot keep up with (any user can make
# one: a domain opened and closed is two events): the kernel drops what
# does not fit in its socket (ENOBUFS). The monitor says events were lost
# and goes on. It is stopped while the flood runs, which goes on until
# the kernel counts drops on its socket (/proc/net/netlink), bounded.
swnic monitor count 20 >"$TMP/flood" 2>"$TMP/flood.err" &
MON=$!
for _ in $(seq 100); do
	swnic dev set swnic0 max_ep "$max_ep"
	grep -q dev_set "$TMP/flood" && break
	sleep 0.1
done
kill -STOP "$MON"
drops()
{
	awk -v p="$MON" '$2 == 16 && $3 == p { print $9 }' /proc/net/netlink
}
for _ in $(seq 60); do
	for _ in $(seq 100); do
		exec 3</dev/swnic0
		exec 3<&-
	done
	[ "$(drops)" -gt 0 ] 2>/dev/null && break
done
flood_drops=$(drops)
kill -CONT "$MON"
for _ in $(seq 100); do
	kill -0 "$MON" 2>/dev/null || break
	swnic dev set swnic0 max_ep "$max_ep"
	sleep 0.1
done
if kill -0 "$MON" 2>/dev/null; then
	st="still running"
	kill "$MON"
	wait "$MON" 2>/dev/null
else
	wait "$MON"
	st=$?
fi
if [ "$st" = 0 ] && grep -q '^event lost$' "$TMP/flood" &&
   [ "$(grep -vc '^event lost$' "$TMP/flood")" = 20 ] &&
   grep -q "events were lost" "$TMP/flood.err"; then
	ok "monitor: a flood's lost events are reported, count 20 still ends, exit 0"
else
	not_ok "monitor: a flood's lost events are reported, count 20 still ends, exit 0" \
		"kernel drops: $flood_drops; status $st; stderr:" \
		"$(cat "$TMP/flood.err")" "stdout:" "$(head -30 "$TMP/flood")"
fi
MON=

if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	if setpriv --reuid=65534 --regid=65534 --clear-groups \
		swnic monitor count 1 >"$TMP/out" 2>&1; then
		not_ok "monitor: refused without CAP_NET_ADMIN"
	elif grep -q "Operation not permitted" "$TMP/out"; then
		ok "monitor: refused without CAP_NET_ADMIN"
	else
		not_ok "monitor: refused without CAP_NET_ADMIN" "$(cat "$TMP/out")"
	fi
else
	skip "monitor: refused without CAP_NET_ADMIN" "setpriv cannot drop to 65534"
fi

tap_done
