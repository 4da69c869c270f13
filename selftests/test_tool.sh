#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_tool.sh - the swnic(8) tool against the kernel: every command's
# happy path, its JSON (checked with jq against what the kernel says
# elsewhere: /dev, /sys, /proc, the test's own processes), usage errors,
# and the kernel's extack text on rejected requests.

. "$(dirname "$0")/lib.sh"

require_cmd swnic jq
[ -c /dev/swnic0 ] || skip_all "no /dev/swnic0 (module not loaded?)"

TMP=$(mktemp -d)
PIDS=
cleanup()
{
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	swnic dev del swnictt1 force >/dev/null 2>&1
	swnic service del swnic0 key 4242 >/dev/null 2>&1
	swnic service del swnic0 key 4243 >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# jq_check DESC FILTER JSON: ok if FILTER (jq -e) is true on JSON.
jq_check()
{
	# No input at all (the command failed) is no match: jq -e says 0.
	if [ -n "$3" ] && printf '%s' "$3" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1" "jq -e '$2' failed on:" "$3"
	fi
}

# fails_with DESC PATTERN CMD...: CMD exits 1 (an error, not a crash) and
# its stderr matches the extended regex PATTERN.
fails_with()
{
	_d=$1 _p=$2
	shift 2
	_c=$*
	[ "${#_c}" -gt 200 ] && _c="${_c:0:200}..."
	"$@" >"$TMP/out" 2>"$TMP/err"
	_s=$?
	if [ "$_s" = 0 ]; then
		not_ok "$_d" "\`$_c\` succeeded"
	elif [ "$_s" != 1 ]; then
		not_ok "$_d" "\`$_c\` exited with status $_s:" "$(cat "$TMP/err")"
	elif grep -Eq "$_p" "$TMP/err"; then
		ok "$_d"
	else
		not_ok "$_d" "\`$_c\` failed without /$_p/:" "$(cat "$TMP/err")"
	fi
}

# Open a domain of /dev/$1 from a child that then sleeps; sets DOM_PID
# and DOM_COMM (its comm when it opened the file).
open_domain()
{
	(
		read -r comm </proc/self/comm
		echo "$comm" >"$TMP/comm.$BASHPID"
		exec 3<"/dev/$1" || exit 1
		exec sleep 600	# killed at the end (PIDS), slow kernels too
	) &
	DOM_PID=$!
	PIDS="$PIDS $DOM_PID"
	for _ in $(seq 100); do
		[ -s "$TMP/comm.$DOM_PID" ] &&
			[ "$(readlink "/proc/$DOM_PID/fd/3" 2>/dev/null)" = "/dev/$1" ] &&
			break
		sleep 0.05
	done
	DOM_COMM=$(cat "$TMP/comm.$DOM_PID")
}

# ---- dev show -------------------------------------------------------------

out=$(swnic dev show)
if printf '%s\n' "$out" | head -1 | grep -q '^INDEX *NAME *STATE' &&
   printf '%s\n' "$out" | grep -Eq '^[0-9]+ +swnic0 +up '; then
	ok "dev show: a table with swnic0 up"
else
	not_ok "dev show: a table with swnic0 up" "$out"
fi

json=$(swnic -j dev show)
minor=$((0x$(stat -c %T /dev/swnic0)))
jq_check "dev show -j: swnic0's index is its char device minor" \
	".[] | select(.name == \"swnic0\") | .index == $minor" "$json"
jq_check "dev show -j: swnic0 is up, local, with limits" \
	'.[] | select(.name == "swnic0") |
	 .state == "up" and .netdev == null and .ifindex == 0 and
	 .max_domains > 0 and .max_mr > 0 and .max_ep > 0 and .max_cq > 0 and
	 (.max_pinned | type) == "number"' "$json"
ndev=$(ls -d /sys/class/swnic/* | wc -l)
jq_check "dev show -j: one entry per /sys/class/swnic device" \
	"length == $ndev" "$json"
jq_check "dev show swnic0 -j: the same device as the dump" \
	"$(printf '%s' "$json" | jq -c '[.[] | select(.name == "swnic0")]') == ." \
	"$(swnic -j dev show swnic0)"
jq_check "dev show INDEX -j: looks the device up by index" \
	".[0].name == \"swnic0\"" "$(swnic -j dev show "$minor")"
pretty=$(swnic -j -p dev show swnic0)
if [ "$(printf '%s\n' "$pretty" | wc -l)" -gt 3 ] &&
   [ "$(printf '%s' "$pretty" | jq -c .)" = "$(swnic -j dev show swnic0 | jq -c .)" ]; then
	ok "dev show -j -p: pretty JSON, same content"
else
	not_ok "dev show -j -p: pretty JSON, same content" "$pretty"
fi
fails_with "dev show: an unknown device is an error with the kernel's message" \
	"No such device.*no such device in this network namespace" \
	swnic dev show swnicnope

# ---- usage and help ---------------------------------------------------------

fails_with "an unknown object prints usage and fails" \
	'unknown object "frobnicate".*|Usage: swnic' swnic frobnicate
fails_with "an unknown command prints usage and fails" \
	'Usage: swnic dev' swnic dev frobnicate
fails_with "an unknown argument prints usage and fails" \
	'unknown argument "bogus"' swnic dev show swnic0 bogus
fails_with "no object prints usage and fails" 'Usage: swnic' swnic
# Names longer than the kernel takes are refused before any request is
# built (a 9000-byte one overran the request buffer).
long=$(head -c 9000 /dev/zero | tr '\0' a)
fails_with "dev show: a 9000-byte name is refused, no crash" \
	'device name "a{16}\.\.\." is too long \(at most 15 bytes\)' \
	swnic dev show "$long"
fails_with "dev show: a 16-byte name is refused" \
	'device name "swnicaaaaaaaaaaa" is too long' swnic dev show swnicaaaaaaaaaaa
fails_with "dev show: a 15-byte name goes to the kernel" \
	"no such device in this network namespace" swnic dev show swnicaaaaaaaaaa
fails_with "dev add: a long name is refused" "device name .* is too long" \
	swnic dev add "$long"
fails_with "dev add: a long netdev name is refused" \
	'netdev name .* is too long \(at most 15 bytes\)' \
	swnic dev add swnictt2 netdev "$long"
fails_with "dev set: a long name is refused" "device name .* is too long" \
	swnic dev set "$long" state up
fails_with "dev del: a long name is refused" "device name .* is too long" \
	swnic dev del "$long"
fails_with "domain show dev: a long name is refused (dump filter)" \
	"device name .* is too long" swnic domain show dev "$long"
fails_with "domain show dev ID: a long name is refused" \
	"device name .* is too long" swnic domain show dev "$long" id 1
fails_with "mr show dev: a long name is refused" "device name .* is too long" \
	swnic mr show dev "$long"
fails_with "stat show dev: a long name is refused" \
	"device name .* is too long" swnic stat show dev "$long"
fails_with "service show: a long name is refused" \
	"device name .* is too long" swnic service show "$long"
fails_with "service add: a long name is refused" \
	"device name .* is too long" swnic service add "$long" key 77
# Nor do many short ones: 450 filters of 20 bytes each overran it too.
# shellcheck disable=SC2046
fails_with "stat show: too many arguments are refused" \
	"too many arguments \(at most 256\)" \
	swnic stat show $(for _ in $(seq 450); do echo dev swnicaaaaaaaaaa; done)

for obj in "" dev domain mr stat service peer monitor; do
	# shellcheck disable=SC2086
	if out=$(swnic $obj help 2>&1) && printf '%s' "$out" | grep -q Usage; then
		ok "swnic $obj help: usage, exit 0"
	else
		not_ok "swnic $obj help: usage, exit 0" "$out"
	fi
done

# ---- dev add / set / del ----------------------------------------------------

lo_ifindex=$(cat /sys/class/net/lo/ifindex)
check "dev add NAME netdev lo" swnic dev add swnictt1 netdev lo
json=$(swnic -j dev show swnictt1)
jq_check "dev add: bound to lo, up, no domains" \
	".[0].netdev == \"lo\" and .[0].ifindex == $lo_ifindex and
	 .[0].state == \"up\" and .[0].domains == 0" "$json"
if [ -c /dev/swnictt1 ] &&
   [ "$((0x$(stat -c %T /dev/swnictt1)))" = "$(printf '%s' "$json" | jq .[0].index)" ] &&
   [ "$(stat -c %a /dev/swnictt1)" = 666 ]; then
	ok "dev add: /dev/swnictt1 exists, mode 0666, minor = index"
else
	not_ok "dev add: /dev/swnictt1 exists, mode 0666, minor = index" \
		"$(ls -l /dev/swnictt1 2>&1)"
fi
fails_with "dev add: a taken name is refused with the kernel's reason" \
	"File exists.*a device with this name exists" swnic dev add swnictt1
fails_with "dev add: a name without the swnic prefix is refused" \
	'Invalid argument.*a device name is "swnic"' swnic dev add null
fails_with "dev add: an unknown netdev is refused" \
	"No such device.*no such netdev" swnic dev add swnictt2 netdev nope0
jq_check "service show DEV: that device's services only" \
	'length >= 1 and all(.dev == "swnictt1")' "$(swnic -j service show swnictt1)"
# swnic0 and swnictt1 with different service histories: one dump spans
# both and must still be consistent (it was always "interrupted" then).
swnic service add swnic0 key 4343 >/dev/null &&
	swnic service del swnic0 key 4343 >/dev/null
jq_check "service show: every device's default service" \
	'[.[] | select(.id == 1) | .dev] | index("swnic0") != null and index("swnictt1") != null' \
	"$(swnic -j service show 2>&1)"
check "dev set: limits and max_pinned with a suffix" \
	swnic dev set swnictt1 max_domains 7 max_mr 100 max_ep 5 max_cq 6 max_pinned 64M
jq_check "dev set: the limits are what dev show reports" \
	'.[0] | .max_domains == 7 and .max_mr == 100 and .max_ep == 5 and
	 .max_cq == 6 and .max_pinned == 67108864' "$(swnic -j dev show swnictt1)"
# Numbers are decimal, digits only: no octal, hex, sign or blank.
fails_with "dev set: a size with a blank and a sign is refused" \
	'"max_pinned": " -1" is not a size' swnic dev set swnictt1 max_pinned " -1"
fails_with "dev set: a number with a plus sign is refused" \
	'"max_ep": "\+5" is not a 32-bit number' swnic dev set swnictt1 max_ep +5
fails_with "dev set: a hex number is refused" \
	'"max_ep": "0x5" is not a 32-bit number' swnic dev set swnictt1 max_ep 0x5
jq_check "dev set: refused numbers changed nothing" \
	'.[0].max_pinned == 67108864 and .[0].max_ep == 5' \
	"$(swnic -j dev show swnictt1)"
tt1_index=$(swnic -j dev show swnictt1 | jq .[0].index)
jq_check "dev show: a zero-led index is decimal, still an index" \
	'.[0].name == "swnictt1"' "$(swnic -j dev show "00$tt1_index")"
check "dev set ifindex 0 unbinds" swnic dev set swnictt1 ifindex 0
jq_check "dev set ifindex 0: no netdev" \
	'.[0].netdev == null and .[0].ifindex == 0' "$(swnic -j dev show swnictt1)"
check "dev set netdev lo binds again" swnic dev set swnictt1 netdev lo
fails_with "dev set: a limit of 0 is out of range, the kernel says which" \
	"out of range.*dev-max-domains" swnic dev set swnictt1 max_domains 0
fails_with "dev set: nothing to change is a usage error" \
	"nothing to change" swnic dev set swnictt1
check "dev set state down" swnic dev set swnictt1 state down
if (exec 4</dev/swnictt1) 2>/dev/null; then
	not_ok "a down device refuses new domains"
else
	ok "a down device refuses new domains"
fi
check "dev set state up" swnic dev set swnictt1 state up

# ---- domain show -------------------------------------------------------------

open_domain swnictt1
json=$(swnic -j domain show dev swnictt1)
jq_check "domain show -j: the helper's domain with its pid, comm, uid" \
	"length == 1 and .[0].pid == $DOM_PID and .[0].comm == \"$DOM_COMM\" and
	 .[0].uid == $(id -u) and .[0].dev == \"swnictt1\"" "$json"
jq_check "domain show -j: default auth key, nothing registered yet" \
	'.[0].auth_key == 1 and .[0].mrs == 0 and .[0].pinned == 0 and
	 .[0].eps == 0 and .[0].cqs == 0' "$json"
dom_id=$(printf '%s' "$json" | jq .[0].id)
jq_check "domain show id ID: the same domain" \
	"$(printf '%s' "$json" | jq -c .) == ." "$(swnic -j domain show id "$dom_id")"
jq_check "dev show: the device counts the open domain" \
	'.[0].domains == 1' "$(swnic -j dev show swnictt1)"
out=$(swnic domain show dev swnictt1)
if printf '%s\n' "$out" | head -1 | grep -q '^ID *DEV *PID *COMM *UID *AUTH_KEY' &&
   printf '%s\n' "$out" | grep -Eq "^$dom_id +swnictt1 +$DOM_PID +$DOM_COMM "; then
	ok "domain show: a table row for the domain"
else
	not_ok "domain show: a table row for the domain" "$out"
fi
jq_check "domain show dev DEV id ID: the domain, on its device" \
	".[0].id == $dom_id" "$(swnic -j domain show dev swnictt1 id "$dom_id")"
fails_with "domain show dev DEV id ID: a domain of another device is not found" \
	"No such file.*no domain with this id on this device" \
	swnic domain show dev swnic0 id "$dom_id"

# A command name with a newline, a space and a terminal escape (a comm is
# what the process ran, by name): text output escapes them, one line per
# domain still; JSON has the name as it is.
odd=$'x\ny z\033[7m'
ln -s "$(command -v bash)" "$TMP/$odd"
"$TMP/$odd" -c 'exec 3</dev/swnic0 && echo $$ >"$1" && exec sleep 600' \
	odd "$TMP/odd" &
odd_pid=$!
PIDS="$PIDS $odd_pid"
for _ in $(seq 100); do
	[ -s "$TMP/odd" ] && break
	sleep 0.05
done
json=$(swnic -j domain show dev swnic0)
jq_check "domain show -j: the odd command name as it is" \
	"[.[] | select(.pid == $odd_pid) | .comm] == [\"x\\ny z\\u001b[7m\"]" "$json"
out=$(swnic domain show dev swnic0)
if [ "$(printf '%s\n' "$out" | wc -l)" = $(($(printf '%s' "$json" | jq length) + 1)) ] &&
   printf '%s\n' "$out" | grep -Eq "^[0-9]+ +swnic0 +$odd_pid +x\\\\012y\\\\040z\\\\033\\[7m +0 "; then
	ok "domain show: the odd command name escaped, one line a domain"
else
	not_ok "domain show: the odd command name escaped, one line a domain" "$out"
fi
kill "$odd_pid"
wait "$odd_pid" 2>/dev/null

fails_with "domain show id: an unknown id is an error" \
	"No such file.*no domain with this id" swnic domain show id 2147483647

# Unprivileged: refused changes, only its own domains.
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
if $NOBODY true 2>/dev/null; then
	fails_with "unprivileged: dev add is refused" "Operation not permitted" \
		$NOBODY swnic dev add swnictt2
	fails_with "unprivileged: dev set is refused" "Operation not permitted" \
		$NOBODY swnic dev set swnictt1 max_domains 9
	fails_with "unprivileged: service add is refused" "Operation not permitted" \
		$NOBODY swnic service add swnictt1 key 77
	fails_with "unprivileged: stat reset is refused" "Operation not permitted" \
		$NOBODY swnic stat reset dev swnictt1
	jq_check "unprivileged: root's domain is hidden" \
		"[.[] | select(.id == $dom_id)] | length == 0" \
		"$($NOBODY swnic -j domain show)"
	fails_with "unprivileged: root's domain by id is not found" \
		"no domain with this id" $NOBODY swnic domain show id "$dom_id"
	mine=$($NOBODY bash -c 'exec 3</dev/swnictt1; swnic -j domain show')
	jq_check "unprivileged: its own domain is shown" \
		'length == 1 and .[0].uid == 65534' "$mine"
	jq_check "unprivileged: devices are visible" \
		'[.[] | .name] | index("swnictt1") != null' \
		"$($NOBODY swnic -j dev show)"
else
	skip "unprivileged checks" "setpriv cannot switch to uid 65534"
fi

# ---- stat ---------------------------------------------------------------------

json=$(swnic -j stat show)
ndomains=$(swnic -j dev show | jq '[.[].domains] | add')
jq_check "stat show -j: module-wide object counts match the devices" \
	".[] | select(.dev == \"*\") | .counters.devices == $(ls -d /sys/class/swnic/* | wc -l) and
	 .counters.domains == $ndomains and .counters.services >= .counters.devices" "$json"
jq_check "stat show -j: the device counted its domains" \
	'.[] | select(.dev == "swnictt1") | .counters.domains_opened >= 2 and
	 .counters.domains_closed == .counters.domains_opened - 1' "$json"
check "stat reset dev" swnic stat reset dev swnictt1
jq_check "stat reset: counters are zero, gauges are not counters" \
	'.[0].counters.domains_opened == 0 and .[0].counters.mrs == 0' \
	"$(swnic -j stat show dev swnictt1)"
jq_check "stat show domain ID: the domain's counters" \
	".[0].domain == $dom_id and (.[0].counters | has(\"auth_key_sets\"))" \
	"$(swnic -j stat show domain "$dom_id")"
out=$(swnic stat show dev swnictt1)
if printf '%s\n' "$out" | head -1 | grep -q '^DEV *COUNTER *VALUE' &&
   printf '%s\n' "$out" | grep -Eq '^swnictt1 +domains_opened +0$'; then
	ok "stat show: one table row per counter"
else
	not_ok "stat show: one table row per counter" "$out"
fi
fails_with "stat reset: needs a target" "which device or domain" swnic stat reset

# ---- peer (the wire of this namespace; test_wire_fuzz.sh has live peers) ---

json=$(swnic -j peer show)
jq_check "peer show -j: the namespace's wire counters first, drops by reason" \
	'.[0].peer == "*" and (.[0].counters | has("tx_packets") and
	 has("retx_packets") and has("drop_short") and has("drop_stale") and
	 has("drop_no_dev"))' "$json"
out=$(swnic peer show)
if printf '%s\n' "$out" | grep -Eq '^\* +drop_window +[0-9]+$'; then
	ok "peer show: the counters as a table"
else
	not_ok "peer show: the counters as a table" "$out"
fi
fails_with "peer show: takes no arguments" 'unknown argument "bogus"' \
	swnic peer show bogus

# ---- dev del -----------------------------------------------------------------

fails_with "dev del: refused while a domain is open, with the reason" \
	"Device or resource busy.*domains are open" swnic dev del swnictt1
check "dev del force: deletes it anyway" swnic dev del swnictt1 force
if [ ! -e /dev/swnictt1 ] &&
   ! swnic -j dev show | jq -e '.[] | select(.name == "swnictt1")' >/dev/null; then
	ok "dev del: the device and /dev/swnictt1 are gone"
else
	not_ok "dev del: the device and /dev/swnictt1 are gone"
fi
jq_check "dev del force: the open domain lives on until it closes" \
	"length == 1 and .[0].id == $dom_id" "$(swnic -j domain show id "$dom_id")"
kill "$DOM_PID"
wait "$DOM_PID" 2>/dev/null
fails_with "the domain is gone once its process is" \
	"no domain with this id" swnic domain show id "$dom_id"

# ---- services ----------------------------------------------------------------

json=$(swnic -j service show swnic0)
jq_check "service show -j: swnic0 has the default service, closed until opened" \
	'.[] | select(.id == 1) | .auth_key == 1 and (.open | not) and .enabled and
	 .uids == [] and .gids == []' "$json"
check "service add: key, members, limit" \
	swnic service add swnic0 key 4242 uid 1000 uid 1001 gid 100 max_domains 3
json=$(swnic -j service show swnic0 key 4242)
jq_check "service add: what service show reports" \
	'.[0] | .auth_key == 4242 and .uids == [1000, 1001] and .gids == [100] and
	 .max_domains == 3 and .domains == 0 and (.open | not) and .enabled' "$json"
svc_id=$(printf '%s' "$json" | jq .[0].id)
check "service set: open, disabled, new members" \
	swnic service set swnic0 id "$svc_id" open disabled uid 7
jq_check "service set: the change is reported" \
	'.[0] | .open and (.enabled | not) and .uids == [7] and .gids == []' \
	"$(swnic -j service show swnic0 id "$svc_id")"
check "service set: closed, enabled, nomembers" \
	swnic service set swnic0 key 4242 closed enabled nomembers
jq_check "service set: flags and members replaced" \
	'.[0] | (.open | not) and .enabled and .uids == [] and .max_domains == 3' \
	"$(swnic -j service show swnic0 key 4242)"
check "service add: uid 01000 and gid 0100" \
	swnic service add swnic0 key 4243 uid 01000 gid 0100
jq_check "service add: a leading zero is no octal: uid 1000, gid 100" \
	'.[0].uids == [1000] and .[0].gids == [100]' \
	"$(swnic -j service show swnic0 key 4243)"
swnic service del swnic0 key 4243
fails_with "service add: a key with a leading blank is refused" \
	'"key": " 4243" is not a 32-bit number' swnic service add swnic0 key " 4243"
fails_with "service add: a key with a minus sign is refused" \
	'"key": "-1" is not a 32-bit number' swnic service add swnic0 key -1
fails_with "service add: a key in use is refused" \
	"File exists.*service with this auth key" swnic service add swnic0 key 4242
fails_with "service add: key 0 is out of range" \
	"out of range.*svc-auth-key" swnic service add swnic0 key 0
fails_with "service del: the default service stays" \
	"default service cannot be deleted" swnic service del swnic0 id 1
check "service del" swnic service del swnic0 key 4242
fails_with "service del: gone" "No such file.*no service with this auth key" \
	swnic service show swnic0 key 4242
out=$(swnic service show swnic0)
if printf '%s\n' "$out" | head -1 | grep -q '^DEV *ID *AUTH_KEY *OPEN *ENABLED' &&
   printf '%s\n' "$out" | grep -Eq '^swnic0 +1 +1 +no +yes '; then
	ok "service show: a table with the default service"
else
	not_ok "service show: a table with the default service" "$out"
fi

# ---- batch -------------------------------------------------------------------

printf 'dev show swnic0\n# a comment\n\nservice show swnic0 id 1\n' >"$TMP/ok.batch"
out=$(swnic -j -b "$TMP/ok.batch")
if [ "$(printf '%s\n' "$out" | jq -s 'length')" = 2 ] &&
   printf '%s\n' "$out" | jq -s -e '.[0][0].name == "swnic0" and .[1][0].id == 1' >/dev/null; then
	ok "batch: each line runs, comments and blank lines skipped"
else
	not_ok "batch: each line runs, comments and blank lines skipped" "$out"
fi
printf 'dev show swnic0\ndev frob\ndev show swnic0\n' >"$TMP/bad.batch"
fails_with "batch: stops at a failing line and names it" \
	"bad.batch:2: command failed" swnic -b "$TMP/bad.batch"
if [ "$(grep -c '^[0-9]' "$TMP/out")" = 1 ]; then
	ok "batch: nothing after the failing line ran"
else
	not_ok "batch: nothing after the failing line ran" "$(cat "$TMP/out")"
fi
swnic -f -b "$TMP/bad.batch" >"$TMP/out" 2>&1
if [ $? -ne 0 ] && [ "$(grep -c '^[0-9]' "$TMP/out")" = 2 ]; then
	ok "batch -f: goes on after a failure, still fails"
else
	not_ok "batch -f: goes on after a failure, still fails" "$(cat "$TMP/out")"
fi

tap_done
