#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_netns.sh - devices and network namespaces: a device created from a
# namespace and bound to a veth there belongs to that namespace only (not
# seen, opened or administered from init_net); netdevs are looked up in the
# caller's namespace only; events of a bound device reach its namespace,
# with uids and pids as its owner numbers them; a user namespace's root
# administers nothing of the host; a device that leaves the namespace is
# deleted there (DEV_DEL), changed in the host; deleting the
# namespace unbinds the device and sets it down (back in init_net). Ends by
# checking, with the module's own counters, that everything made is gone.

. "$(dirname "$0")/lib.sh"

require_cmd swnic jq ip unshare
[ -c /dev/swnic0 ] || skip_all "no /dev/swnic0 (module not loaded?)"
ip netns add swnicns1 2>/dev/null || skip_all "cannot create network namespaces"

NS="ip netns exec swnicns1"
TMP=$(mktemp -d)
MON=
CPID=
cleanup()
{
	[ -n "$MON" ] && kill $MON 2>/dev/null
	if [ -n "$CPID" ]; then
		nsenter -t "$CPID" -n swnic dev del swnicu2 force >/dev/null 2>&1
		kill "$CPID" 2>/dev/null
	fi
	wait 2>/dev/null
	$NS swnic dev del swnicns1 force >/dev/null 2>&1 ||
		swnic dev del swnicns1 force >/dev/null 2>&1
	for d in swnicns2 swnicns3; do
		$NS swnic dev del $d force >/dev/null 2>&1 ||
			swnic dev del $d force >/dev/null 2>&1
	done
	ip netns del swnicns1 2>/dev/null
	ip link del veth-sw0 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

stop_monitors()	# the monitors in $MON
{
	local pid

	for pid in $MON; do
		kill "$pid"
		wait "$pid" 2>/dev/null
	done
	MON=
}

objects()
{
	swnic -j stat show | jq -c '.[] | select(.dev == "*") | .counters'
}
before=$(objects)

check "a veth pair across namespaces" sh -c \
	"ip link add veth-sw0 type veth peer name veth-sw1 netns swnicns1 &&
	 ip link set veth-sw0 up && $NS ip link set veth-sw1 up"
ns_ifindex=$($NS cat /sys/class/net/veth-sw1/ifindex)

check "dev add from the namespace, bound to its veth" \
	$NS swnic dev add swnicns1 netdev veth-sw1
jq_check()
{
	# No input at all (the command failed) is no match: jq -e says 0.
	if [ -n "$3" ] && printf '%s' "$3" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1" "jq -e '$2' failed on:" "$3"
	fi
}
jq_check "the namespace sees the binding" \
	".[0].netdev == \"veth-sw1\" and .[0].ifindex == $ns_ifindex and .[0].state == \"up\"" \
	"$($NS swnic -j dev show swnicns1)"
if swnic dev show swnicns1 >/dev/null 2>"$TMP/err"; then
	not_ok "init_net does not see the namespace's device"
elif grep -q "no such device in this network namespace" "$TMP/err"; then
	ok "init_net does not see the namespace's device"
else
	not_ok "init_net does not see the namespace's device" "$(cat "$TMP/err")"
fi
jq_check "nor in a dump" 'map(select(.name == "swnicns1")) | length == 0' \
	"$(swnic -j dev show)"
# The same answer as for a device that exists nowhere, by name and by
# index: another namespace's device names and indexes cannot be probed.
ns_index=$($NS swnic -j dev show swnicns1 | jq '.[0].index')
swnic dev show swnicns1 >/dev/null 2>"$TMP/err1"
swnic dev show swnicnowhere 2>&1 >/dev/null |
	sed 's/swnicnowhere/swnicns1/' >"$TMP/err2"
swnic dev show "$ns_index" >/dev/null 2>"$TMP/err3"
swnic dev show 63 >/dev/null 2>"$TMP/err4"
if [ -s "$TMP/err1" ] && [ -s "$TMP/err3" ] &&
   cmp -s "$TMP/err1" "$TMP/err2" &&
   cmp -s "$TMP/err3" "$TMP/err4"; then
	ok "another namespace's device answers as one that does not exist"
else
	not_ok "another namespace's device answers as one that does not exist" \
		"$(cat "$TMP/err1" "$TMP/err2" "$TMP/err3" "$TMP/err4")"
fi
if (exec 3</dev/swnicns1) 2>/dev/null; then
	not_ok "init_net cannot open the namespace's device"
else
	ok "init_net cannot open the namespace's device"
fi

if $NS swnic dev set swnicns1 netdev veth-sw0 >/dev/null 2>"$TMP/err"; then
	not_ok "netdevs are found in the caller's namespace only"
elif grep -q "no such netdev in the caller's network namespace" "$TMP/err"; then
	ok "netdevs are found in the caller's namespace only"
else
	not_ok "netdevs are found in the caller's namespace only" "$(cat "$TMP/err")"
fi
check "dev set by ifindex, in the namespace" \
	$NS swnic dev set swnicns1 ifindex "$ns_ifindex"

# A domain on the bound device works as on any other.
$NS sh -c 'exec 3</dev/swnicns1; swnic -j domain show dev swnicns1' >"$TMP/dom"
jq_check "a domain opens on the bound device" \
	'length == 1 and .[0].dev == "swnicns1"' "$(cat "$TMP/dom")"

# Events of the bound device reach its namespace; swnic0's do not.
$NS swnic -j monitor count 1 >"$TMP/mon" 2>"$TMP/mon.err" &
MON=$!
max_ep=$(swnic -j dev show swnic0 | jq .[0].max_ep)
for i in $(seq 100); do
	swnic dev set swnic0 max_ep "$max_ep"
	$NS swnic dev set swnicns1 max_ep $((100 + i))
	[ -s "$TMP/mon" ] && break
	sleep 0.1
done
wait "$MON"
MON=
jq_check "a monitor in the namespace hears its device, not swnic0" \
	'.event == "dev_set" and .name == "swnicns1"' "$(cat "$TMP/mon")"

# A user namespace's root is root of nothing here.
if unshare -U -r -n true 2>/dev/null; then
	# In the host's network namespace it sees the device, and may not
	# change it; in a namespace of its own the device is not there.
	if unshare -U -r swnic dev set swnic0 max_ep 3 2>"$TMP/err" >/dev/null; then
		not_ok "userns root cannot change a host device"
	elif grep -q "Operation not permitted" "$TMP/err"; then
		ok "userns root cannot change a host device"
	else
		not_ok "userns root cannot change a host device" "$(cat "$TMP/err")"
	fi
	if unshare -U -r -n swnic dev set swnic0 max_ep 3 2>"$TMP/err" >/dev/null; then
		not_ok "userns root in its own netns does not find a host device"
	elif grep -q "no such device in this network namespace" "$TMP/err"; then
		ok "userns root in its own netns does not find a host device"
	else
		not_ok "userns root in its own netns does not find a host device" \
			"$(cat "$TMP/err")"
	fi
	if unshare -U -r -n sh -c 'ip link set lo up; swnic dev add swnicu1 netdev lo' \
		2>"$TMP/err" >/dev/null; then
		not_ok "userns root cannot create devices"
		swnic dev del swnicu1 >/dev/null 2>&1
	elif grep -q "creating a device needs CAP_NET_ADMIN" "$TMP/err"; then
		ok "userns root cannot create devices"
	else
		not_ok "userns root cannot create devices" "$(cat "$TMP/err")"
	fi
else
	skip "userns root cannot change a host device" "no user namespaces"
	skip "userns root in its own netns does not find a host device" \
		"no user namespaces"
	skip "userns root cannot create devices" "no user namespaces"
fi

# A container: a user namespace that owns a network namespace, where the
# host's root binds a device. The container's root administers that
# device, but deletes nothing of the host's (security.rst).
CONT="a container's root"
if unshare -U -r -n true 2>/dev/null; then
	# Its root is the host's; its uid 1000 is the host's 4000.
	unshare -U -n sleep 120 &
	CPID=$!
	for _ in $(seq 100); do
		[ "$(readlink /proc/$CPID/ns/net 2>/dev/null)" != \
		  "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.05
	done
	# (A map is written in one write(): bash's printf writes lines.)
	printf '0 0 1\n1000 4000 1\n' >"$TMP/map"
	check "the container's uid and gid maps" sh -c \
		"dd if=$TMP/map of=/proc/$CPID/uid_map bs=64 status=none &&
		 dd if=$TMP/map of=/proc/$CPID/gid_map bs=64 status=none"
	HOST_IN="nsenter -t $CPID -n"		# the host's root, in its netns
	CONT_IN="nsenter -t $CPID -U -n"	# the container's root
	check "the host's root binds a device into a container" sh -c \
		"$HOST_IN ip link set lo up && $HOST_IN swnic dev add swnicu2 netdev lo"
	check "$CONT sets the device bound there" \
		$CONT_IN swnic dev set swnicu2 max_ep 3
	jq_check "... and the change is made" '.[0].max_ep == 3' \
		"$($HOST_IN swnic -j dev show swnicu2)"

	# Its events show ids as each listener's namespace owner numbers
	# them: the container's root sees its own uids and pids, and no
	# host pid; the host sees its own. A domain opened by the host's
	# uid 4000 (the container's 1000) from a host process, one by the
	# container's root from a pid namespace of the container's, and a
	# service whose members are host uids 4000 and 5 (none there).
	cont_events()	# OUT EVENT CMD...: the first EVENT each monitor hears
	{
		local out=$1 ev=$2 pid
		shift 2
		: >"$TMP/pids"
		$CONT_IN swnic -j monitor >"$TMP/cmon" 2>&1 &
		MON="$MON $!"
		swnic -j monitor >"$TMP/hmon" 2>&1 &
		MON="$MON $!"
		for _ in $(seq 100); do
			"$@" >>"$TMP/pids"
			grep -q "\"$ev\"" "$TMP/cmon" &&
				grep -q "\"$ev\"" "$TMP/hmon" && break
			sleep 0.1
		done
		stop_monitors
		grep -m1 "\"$ev\"" "$TMP/cmon" >"$out"
		grep -m1 "\"$ev\"" "$TMP/hmon" >>"$out"
	}
	cont_events "$TMP/ev1" domain_open $HOST_IN setpriv --reuid=4000 --regid=4000 \
		--clear-groups sh -c 'echo $$; exec 3</dev/swnicu2'
	pids="[$(paste -sd, "$TMP/pids")]"
	jq_check "$CONT hears a host user's domain as its uid, no pid" \
		'.event == "domain_open" and .uid == 1000 and .pid == 0' \
		"$(head -1 "$TMP/ev1")"
	jq_check "... the host as its uid and pid" \
		".event == \"domain_open\" and .uid == 4000 and
		 (.pid as \$p | $pids | any(. == \$p))" \
		"$(tail -1 "$TMP/ev1")"
	cont_events "$TMP/ev2" domain_open $CONT_IN unshare -p -f \
		sh -c 'echo $$; exec 3</dev/swnicu2'
	jq_check "$CONT hears its own pid namespace's opener as pid 1" \
		'.event == "domain_open" and .uid == 0 and .pid == 1' \
		"$(head -1 "$TMP/ev2")"
	jq_check "... the host under the opener's host pid" \
		'.event == "domain_open" and .uid == 0 and .pid > 1' \
		"$(tail -1 "$TMP/ev2")"
	cont_events "$TMP/ev3" service_add sh -c \
		"$HOST_IN swnic service add swnicu2 key 77 uid 4000 uid 5 &&
		 $HOST_IN swnic service del swnicu2 key 77 >/dev/null"
	jq_check "$CONT hears a service's members as its uids" \
		'.event == "service_add" and .uids == [1000, 65534]' \
		"$(head -1 "$TMP/ev3")"
	jq_check "... the host as its own" \
		'.event == "service_add" and .uids == [4000, 5]' \
		"$(tail -1 "$TMP/ev3")"
	# Unbound, the device would be the host's, as the container left it.
	if $CONT_IN swnic dev set swnicu2 ifindex 0 2>"$TMP/err" >/dev/null; then
		not_ok "$CONT cannot unbind it (to the host)"
	elif grep -q "moves to the initial network namespace: CAP_NET_ADMIN there is needed" \
		"$TMP/err"; then
		ok "$CONT cannot unbind it (to the host)"
	else
		not_ok "$CONT cannot unbind it (to the host)" "$(cat "$TMP/err")"
	fi
	jq_check "... it stays bound in the container's namespace" \
		'.[0].ifindex > 0 and .[0].netdev == "lo"' \
		"$($HOST_IN swnic -j dev show swnicu2)"
	if $CONT_IN swnic dev del swnicu2 force 2>"$TMP/err" >/dev/null; then
		not_ok "$CONT cannot delete it"
	elif grep -q "deleting a device needs CAP_NET_ADMIN in the initial user namespace" \
		"$TMP/err"; then
		ok "$CONT cannot delete it"
	else
		not_ok "$CONT cannot delete it" "$(cat "$TMP/err")"
	fi
	check "... the host's root can" $HOST_IN swnic dev del swnicu2
	kill "$CPID"
	wait "$CPID" 2>/dev/null
	CPID=
else
	skip "$CONT cannot delete a device bound there" "no user namespaces"
fi

# A device that leaves the namespace is deleted there, as a netdev moved
# away is: unbound by its administrator, or its netdev deleted. Each
# monitor hears what its namespace sees: the namespace DEV_DEL, the host
# the device, now its own, changed (unbound).
check "two more devices, on a veth pair inside the namespace" sh -c \
	"$NS ip link add veth-sw2 type veth peer name veth-sw3 &&
	 $NS swnic dev add swnicns2 netdev veth-sw2 &&
	 $NS swnic dev add swnicns3 netdev veth-sw3"
$NS swnic -j monitor >"$TMP/nsmon" 2>&1 &
MON=$!
swnic -j monitor >"$TMP/hmon" 2>&1 &
MON="$MON $!"
for _ in $(seq 100); do	# until both monitors listen
	$NS swnic dev set swnicns3 max_ep 7
	grep -q '"swnicns3"' "$TMP/nsmon" && grep -q '"swnicns3"' "$TMP/hmon" &&
		break
	sleep 0.1
done
check "the namespace's root unbinds one (it has no domains)" \
	$NS swnic dev set swnicns2 ifindex 0
check "the other one's netdev is deleted" $NS ip link del veth-sw3
for _ in $(seq 100); do
	[ "$(grep -c '"dev_del"' "$TMP/nsmon")" -ge 2 ] &&
		jq -e -s 'any(.name == "swnicns3" and .state == "down")' \
			"$TMP/hmon" >/dev/null 2>&1 && break
	sleep 0.1
done
stop_monitors
jq_check "the namespace hears the unbound device deleted" \
	'[., inputs] | any(.event == "dev_del" and .name == "swnicns2")' \
	"$(grep '"dev_del"' "$TMP/nsmon")"
jq_check "... and the one whose netdev went" \
	'[., inputs] | any(.event == "dev_del" and .name == "swnicns3")' \
	"$(grep '"dev_del"' "$TMP/nsmon")"
jq_check "the host hears them changed, not deleted" \
	'[., inputs] | map(select(.name == "swnicns2" or .name == "swnicns3") |
	  .event) | unique == ["dev_set"]' "$(cat "$TMP/hmon")"
jq_check "... the second one unbound and down" \
	'[., inputs] | map(select(.name == "swnicns3")) | last |
	 .netdev == null and .state == "down"' "$(cat "$TMP/hmon")"
jq_check "neither is in the namespace any more" \
	'map(select(.name == "swnicns2" or .name == "swnicns3")) == []' \
	"$($NS swnic -j dev show)"
check "the host deletes both" sh -c \
	"swnic dev del swnicns2 && swnic dev del swnicns3"

# The namespace goes away with its veth: the device is unbound and down.
check "ip netns del" ip netns del swnicns1
for _ in $(seq 100); do
	json=$(swnic -j dev show swnicns1)
	[ "$(printf '%s' "$json" | jq -r .[0].state)" = down ] && break
	sleep 0.1
done
jq_check "the netns is gone: the device is unbound and down" \
	'.[0].netdev == null and .[0].ifindex == 0 and .[0].state == "down"' "$json"
check "the device can be deleted" swnic dev del swnicns1
ip link del veth-sw0 2>/dev/null

for _ in $(seq 50); do
	[ "$(objects)" = "$before" ] && break
	sleep 0.1
done
if [ "$(objects)" = "$before" ]; then
	ok "every object made was destroyed (module counters)"
else
	not_ok "every object made was destroyed (module counters)" \
		"before: $before" "after:  $(objects)"
fi

tap_done
