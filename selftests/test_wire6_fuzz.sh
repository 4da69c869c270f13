#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire6_fuzz.sh - test_wire_fuzz.sh over IPv6: the veth pair has
# IPv6 addresses only, the floods are IPv6 (the raw one from a spoofed
# /64 and from sources no peer can have: ::, IPv4-mapped, multicast; and
# with a wrong UDP checksum now and then), drop_addr counts what reached
# the wire from an impossible source. As test_wire_fuzz.sh: two namespaces
# joined by a veth pair, a swnic device bound in each, fi_pingpong (data checked)
# between them while selftests/wire/wire_fuzz floods the server's wire
# from the client's namespace: from ordinary UDP sockets (peer contexts
# that learn the server's incarnation, to get past the first checks) and
# from a raw socket with spoofed sources (new peer contexts, up to the
# rate limit and cap). The transfer completes, the kernel logs no splat,
# `swnic -j peer show` shows the drops by reason and the live peer's
# statistics, the fuzzer's half-received messages are released when its
# contexts time out, and every object goes at the end.
#
# SWNIC_FUZZ_SEED picks the seeds (default: from the time; printed).
# SWNIC_WIRE_FUZZ_PACKETS: packets per flood (default 20000).
#
# swnic-timeout: 600

. "$(dirname "$0")/lib.sh"

require_cmd fi_pingpong ip ss swnic jq
[ -x selftests/wire/out/wire_fuzz ] || skip_all "selftests/wire/out/wire_fuzz not built"
ip netns add swnic6fa 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnic6fb

A="ip netns exec swnic6fa"
B="ip netns exec swnic6fb"
ADDR_A=fd00:81::1
ADDR_B=fd00:81::2
PARAMS=/sys/module/swnic/parameters
old_timeout=$(cat $PARAMS/peer_timeout_ms)
old_rx_mem=$(cat $PARAMS/rx_mem_mb)
old_idle=$(cat $PARAMS/peer_idle_ms)
old_any_sport=$(cat $PARAMS/udp_any_sport)
SEED=${SWNIC_FUZZ_SEED:-$(date +%s)}
PACKETS=${SWNIC_WIRE_FUZZ_PACKETS:-20000}
cleanup()
{
	echo "$old_timeout" > $PARAMS/peer_timeout_ms
	echo "$old_rx_mem" > $PARAMS/rx_mem_mb
	echo "$old_idle" > $PARAMS/peer_idle_ms
	echo "$old_any_sport" > $PARAMS/udp_any_sport
	$A swnic dev del swnic6fa force >/dev/null 2>&1
	$B swnic dev del swnic6fb force >/dev/null 2>&1
	ip netns del swnic6fa 2>/dev/null
	ip netns del swnic6fb 2>/dev/null
}
trap cleanup EXIT

objects()
{
	swnic -j stat show | jq -c '.[] | select(.dev == "*") | .counters'
}
before=$(objects)
dmesg_lines=$(dmesg | wc -l)
diag "seeds $SEED (flood) and $((SEED + 1)) (spoofed), $PACKETS packets each"
# The fuzzer's messages stay until their contexts time out: keep both
# small - but not below what the live transfer needs while the server's
# worker works through the flood (10 s: the slowest lane, 6.12 under TCG,
# once went 3 s without an answer).
echo 10000 > $PARAMS/peer_timeout_ms
echo 64 > $PARAMS/rx_mem_mb
# The flood fills the server's 1024 contexts and goes on making new ones
# by reusing those idle for peer_idle_ms (default 10 s): the live client's
# too once its transfer is over, if the server's worker is still at the
# flood's backlog 10 s later (the debug kernel was). That reuse has its
# own check below; until the client's context is looked at, none is idle.
echo 600000 > $PARAMS/peer_idle_ms

check "a veth pair between two namespaces, addressed" sh -c "
	ip link add sw6fa type veth peer name sw6fb &&
	ip link set sw6fa netns swnic6fa && ip link set sw6fb netns swnic6fb &&
	$A ip -6 addr add $ADDR_A/64 dev sw6fa nodad &&
	$B ip -6 addr add $ADDR_B/64 dev sw6fb nodad &&
	$A ip link set sw6fa up && $B ip link set sw6fb up &&
	$A ip link set lo up && $B ip link set lo up"
check "a swnic device in each, bound to its veth" sh -c "
	$A swnic dev add swnic6fa netdev sw6fa &&
	$B swnic dev add swnic6fb netdev sw6fb"
check "the namespaces reach each other (ping -6)" $A ping -6 -c 1 -W 5 $ADDR_B
# The wire takes datagrams from its own port only; then the fuzzer's
# ordinary sockets are let in (udp_any_sport), so that its packets reach
# the checks behind.
wire_other_sport_dropped "$B" swnic6fa "$ADDR_A"
echo Y > $PARAMS/udp_any_sport
base=$(wire_counters swnic6fa)

# fi_pingpong (server in A, client in B) while both floods run from B.
port=27950
$A timeout 400 fi_pingpong -6 -p swnic -e rdm -c -I 300 -S 4096 -B $port \
	>/tmp/w6fz.srv 2>&1 &
srv=$!
wait_listen swnic6fa $port
$B timeout 400 selftests/wire/out/wire_fuzz -s "$SEED" -n "$PACKETS" -k 8 \
	-d 5000 $ADDR_A >/tmp/w6fz.f1 2>&1 &
fz1=$!
$B timeout 400 selftests/wire/out/wire_fuzz -s $((SEED + 1)) -n "$PACKETS" \
	-k 4 -d 5000 -r fd00:81:: $ADDR_A >/tmp/w6fz.f2 2>&1 &
fz2=$!
sleep 1
t0=$SECONDS
$B timeout 400 fi_pingpong -6 -p swnic -e rdm -c -I 300 -S 4096 -P $port \
	$ADDR_A >/tmp/w6fz.cli 2>&1
cli_rc=$?
running=$(kill -0 $fz1 2>/dev/null && echo "still flooding" || echo "done")
wait $srv
srv_rc=$?
diag "fi_pingpong: $((SECONDS - t0)) s; the flood at its end: $running"
if [ $cli_rc = 0 ] && [ $srv_rc = 0 ]; then
	ok "fi_pingpong under the flood completes, data checked"
else
	not_ok "fi_pingpong under the flood completes, data checked" \
		"client exit $cli_rc: $(tail -3 /tmp/w6fz.cli)" \
		"server exit $srv_rc: $(tail -3 /tmp/w6fz.srv)"
fi
wait $fz1
fz1_rc=$?
wait $fz2
fz2_rc=$?
# The live peer, seen from the server, while its context is fresh; once
# the floods are over, so that the namespace's counters and the peers'
# (dumped one after the other) are of one moment, and the dump is not
# interrupted by peers made meanwhile (then tried again).
for _ in 1 2 3; do
	live=$($A swnic -j peer show) && [ -n "$live" ] && break
	sleep 1
done
diag "$(cat /tmp/w6fz.f1 /tmp/w6fz.f2)"
if [ $fz1_rc = 0 ] && [ $fz2_rc = 0 ]; then
	ok "both floods sent all their packets"
else
	not_ok "both floods sent all their packets" "exit $fz1_rc and $fz2_rc" \
		"$(cat /tmp/w6fz.f1 /tmp/w6fz.f2)"
fi

if printf '%s' "$live" | jq -e ".[] | select(.peer == \"[$ADDR_B]:4793\") |
	.tx_bytes > 0 and .rx_bytes > 0 and .srtt > 0 and .rto > 0 and
	.local_inc > 0 and .remote_inc > 0" >/dev/null; then
	ok "peer show: the live client with its bytes, RTT and incarnations"
else
	not_ok "peer show: the live client with its bytes, RTT and incarnations" \
		"$live"
fi

# Drops are counted per peer too, for the peers whose packets they were:
# the fuzzer's sockets' contexts have some, and no reason's sum over the
# peers exceeds the namespace's count.
if printf '%s' "$live" | jq -e '[.[] | select(.peer != "*") | .counters |
	.drop_bad_msg + .drop_window + .drop_dup + .drop_stale] | add > 0' \
	>/dev/null &&
   printf '%s' "$live" | jq -e '. as $all | .[0].counters as $ns |
	all("short", "stale", "window", "dup", "bad_msg", "no_mem";
	    . as $r | ([$all[1:][] | .counters["drop_" + $r]] | add // 0) <=
	    $ns["drop_" + $r])' >/dev/null; then
	ok "peer show: the fuzzer's peers with their own drops by reason"
else
	not_ok "peer show: the fuzzer's peers with their own drops by reason" \
		"$(printf '%s' "$live" | jq -c '[.[] | {peer, counters}] | .[:6]')"
fi

after_fz=$(wire_counters swnic6fa)
diag "server's wire counters before: $base" "after: $after_fz"
for reason in short checksum version stale window dup bad_msg peers addr; do
	b=$(printf '%s' "$base" | jq ".drop_$reason")
	a=$(printf '%s' "$after_fz" | jq ".drop_$reason")
	if [ -n "$a" ] && [ "$a" != null ] && [ "$a" -gt "$b" ]; then
		ok "drops counted by reason: drop_$reason $b -> $a"
	else
		not_ok "drops counted by reason: drop_$reason $b -> $a"
	fi
done
if printf '%s' "$after_fz" | jq -e '.peers > 8 and .peers <= 1024' \
	>/dev/null; then
	ok "spoofed sources made peer contexts, capped"
else
	not_ok "spoofed sources made peer contexts, capped" "$after_fz"
fi

# The fuzzer's contexts fall silent: their half-received messages go.
for _ in $(seq 200); do
	[ "$(wire_counters swnic6fa | jq .rx_mem_bytes)" = 0 ] && break
	sleep 0.2
done
check "half-received messages released after the peer timeout" \
	sh -c "[ \"\$($A swnic -j peer show | jq '.[0].counters.rx_mem_bytes')\" = 0 ]"

# Names of IPv6 sources: an idle context is reused for a new source, but
# the old source keeps its name (names are never reused). Some 6000
# packets from spoofed sources, of 65535 addresses (wire_fuzz -W), at
# about the peer rate limit (256/s), every context soon idle
# (peer_idle_ms 1): they get at most 1024 names, and the rest of the
# table (4096) stays the users' (SWNIC_IOCTL_ADDR6). Without that bound
# the flood filled the table for good.
echo 1 > $PARAMS/peer_idle_ms
$B timeout 200 selftests/wire/out/wire_fuzz -s $((SEED + 2)) -n 24000 -k 1 \
	-d 30000 -r fd00:81:: -W $ADDR_A >/tmp/w6fz.f3 2>&1
names_rc=$?
w=$(wire_counters swnic6fa)
diag "after the spoofed sources: $(printf '%s' "$w" |
	jq -c '{addr6_names, addr6_names_net, peers, peers_evicted, drop_peers}')"
if [ $names_rc = 0 ] &&
   printf '%s' "$w" | jq -e '.addr6_names_net <= 1024 and
	.addr6_names < 4096 and .peers_evicted > 0' >/dev/null; then
	ok "forged IPv6 sources get at most 1024 names, the table keeps room"
else
	not_ok "forged IPv6 sources get at most 1024 names, the table keeps room" \
		"wire_fuzz exit $names_rc: $(tail -2 /tmp/w6fz.f3)" "$w"
fi

splat=$(dmesg | tail -n +$((dmesg_lines + 1)) |
	grep -E 'BUG|WARNING|Oops|general protection|KASAN|UBSAN|kmemleak|hung task|RCU stall' |
	head -20)
if [ -z "$splat" ]; then
	ok "no kernel splat during the floods"
else
	not_ok "no kernel splat during the floods" "$splat"
fi

$A swnic dev del swnic6fa force >/dev/null 2>&1
$B swnic dev del swnic6fb force >/dev/null 2>&1
ip netns del swnic6fa
ip netns del swnic6fb
for _ in $(seq 50); do
	[ "$(objects)" = "$before" ] && break
	sleep 0.2
done
after=$(objects)
if [ "$after" = "$before" ]; then
	ok "every object made was released (module counters)"
else
	not_ok "every object made was released (module counters)" \
		"before: $before" "after:  $after"
fi

tap_done
