#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_fuzz.sh - the wire under a packet fuzzer: two namespaces joined
# by a veth pair, a swnic device bound in each, fi_pingpong (data checked)
# between them while selftests/wire/wire_fuzz floods the server's wire
# from the client's namespace. First, requests from an ordinary socket
# (not the wire's port) are each dropped as drop_addr; then udp_any_sport
# lets the fuzzer's sockets in: from ordinary UDP sockets (peer contexts
# that learn the server's incarnation, to get past the first checks) and
# from a raw socket with spoofed sources (new peer contexts, up to the
# rate limit and cap). Then packets from and to addresses no peer can have
# (0.0.0.0/8, broadcast, multicast: wire_fuzz -x) are each dropped as
# drop_addr, and a packet that does not name the server may not claim
# much of its memory, and a short PING naming no one draws no answer. The
# transfer completes, the kernel logs no splat,
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
ip netns add swnicfa 2>/dev/null || skip_all "cannot create network namespaces"
ip netns add swnicfb

A="ip netns exec swnicfa"
B="ip netns exec swnicfb"
ADDR_A=10.81.0.1
ADDR_B=10.81.0.2
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
	$A swnic dev del swnicfa force >/dev/null 2>&1
	$B swnic dev del swnicfb force >/dev/null 2>&1
	ip netns exec swnicfa swnic dev del swnicfa2 force >/dev/null 2>&1
	ip netns exec swnicfc swnic dev del swnicfc force >/dev/null 2>&1
	ip netns del swnicfa 2>/dev/null
	ip netns del swnicfb 2>/dev/null
	ip netns del swnicfc 2>/dev/null
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
	ip link add swfa type veth peer name swfb &&
	ip link set swfa netns swnicfa && ip link set swfb netns swnicfb &&
	$A ip addr add $ADDR_A/24 dev swfa &&
	$B ip addr add $ADDR_B/24 dev swfb &&
	$A ip link set swfa up && $B ip link set swfb up &&
	$A ip link set lo up && $B ip link set lo up"
check "a swnic device in each, bound to its veth" sh -c "
	$A swnic dev add swnicfa netdev swfa &&
	$B swnic dev add swnicfb netdev swfb"
check "the namespaces reach each other (ping)" $A ping -c 1 -W 5 $ADDR_B
# The wire takes datagrams from its own port only; then the fuzzer's
# ordinary sockets are let in (udp_any_sport), so that its packets reach
# the checks behind.
wire_other_sport_dropped "$B" swnicfa "$ADDR_A"

# One user posting to hosts that never answer (10.99.0.0/16, routed
# through B, which does not forward: silence) makes at most 256 contexts,
# a quarter of the namespace's; its posts past them wait. Another user
# still reaches a new peer. Before, one user's posts could take every
# context, and other users' first posts to new peers failed meanwhile.
spray_peers()
{
	$A swnic -j peer show |
		jq '[.[] | select(.peer | startswith("10.99."))] | length'
}
$A ip route add 10.99.0.0/16 via $ADDR_B
# No peer fails while the user posts, however slow the kernel.
echo 600000 > $PARAMS/peer_timeout_ms
capped0=$(wire_counters swnicfa | jq .peers_capped)
$A setpriv --reuid=1000 --regid=1000 --clear-groups timeout 120 \
	selftests/wire/out/wire_spray -n 300 -s 4 10.99.0.1 >/tmp/wfz.spray 2>&1 &
spray=$!
wait_for_line posted /tmp/wfz.spray
n_user=$(spray_peers)
capped1=$(wire_counters swnicfa | jq .peers_capped)
$A timeout 60 selftests/wire/out/wire_spray -n 1 -s 0 10.99.2.1 \
	>/tmp/wfz.spray0 2>&1
n_other=$(spray_peers)
wait $spray
spray_rc=$?
diag "one user's posts: $n_user contexts, then another's: $n_other"
if [ $spray_rc = 0 ] && [ "$n_user" = 256 ] && [ "$n_other" = 257 ] &&
   [ "$capped1" -gt "$capped0" ] &&
   grep -q "posted 1 of 1" /tmp/wfz.spray0; then
	ok "one user's posts to silent hosts make at most 256 contexts, another's still one"
else
	not_ok "one user's posts to silent hosts make at most 256 contexts, another's still one" \
		"uid 1000: exit $spray_rc, $(cat /tmp/wfz.spray), $n_user contexts" \
		"root: $(cat /tmp/wfz.spray0), $n_other contexts" \
		"peers_capped: $capped0 -> $capped1"
fi
# Once its peers fail by their silence (the peer timeout) they no longer
# count against the user: its next posts make 256 contexts again - and no
# more, its earlier ones too counting again once posted to.
echo 1000 > $PARAMS/peer_timeout_ms
sleep 4
echo 600000 > $PARAMS/peer_timeout_ms
$A setpriv --reuid=1000 --regid=1000 --clear-groups timeout 120 \
	selftests/wire/out/wire_spray -n 300 -s 0 10.99.4.1 >/tmp/wfz.spray2 2>&1
spray_rc=$?
n_again=$(spray_peers)
echo 10000 > $PARAMS/peer_timeout_ms
diag "after the peer timeout, the user's posts: $n_again contexts in all"
if [ $spray_rc = 0 ] && [ "$n_again" = $((n_other + 256)) ]; then
	ok "a user's silent peers count no more once they failed"
else
	not_ok "a user's silent peers count no more once they failed" \
		"uid 1000: exit $spray_rc, $(cat /tmp/wfz.spray2)" \
		"contexts: $n_other, then $n_again (want $((n_other + 256)))"
fi
$A ip route del 10.99.0.0/16

# A host that never answered gets an initial window (16 packets), not the
# full one (256): before, the 256 contexts a user may make held 256 packets
# each until the peer timeout (96 MiB at MTU 1500).
$A ip route add 10.98.0.0/16 via $ADDR_B
echo 600000 > $PARAMS/peer_timeout_ms
$A timeout 60 selftests/wire/out/wire_spray -n 4 -l 1048576 -s 4 10.98.0.1 \
	>/tmp/wfz.spray3 2>&1 &
spray=$!
wait_for_line posted /tmp/wfz.spray3
sleep 1
inflight=$($A swnic -j peer show |
	jq -c '[.[] | select(.peer | startswith("10.98.")) | .inflight]')
wait $spray
spray_rc=$?
echo 10000 > $PARAMS/peer_timeout_ms
$A ip route del 10.98.0.0/16
diag "1 MiB sends to 4 silent hosts: packets in flight $inflight"
if [ $spray_rc = 0 ] && grep -q "posted 4 of 4" /tmp/wfz.spray3 &&
   echo "$inflight" | jq -e 'length == 4 and min > 0 and max <= 16' >/dev/null; then
	ok "a host that never answered gets 16 packets in flight, not 256"
else
	not_ok "a host that never answered gets 16 packets in flight, not 256" \
		"exit $spray_rc, $(cat /tmp/wfz.spray3), in flight $inflight"
fi

# The packets kept for retransmission are charged to the poster's memory
# cgroup, whoever makes them, for as long as they are kept: here a peer
# that answered once (a send to a port with no endpoint: refused), then
# goes silent (netem drops all A sends), holding a full window of a
# 4 MiB send: 256 packets, about 2.3 MiB at MTU 9000 (well above what
# the cgroup's per-CPU charge batches make memory.current move by).
# Before, the cgroup was charged none of it, only the send's few KiB.
CG=/sys/fs/cgroup
[ -e $CG/cgroup.controllers ] || mount -t cgroup2 none $CG
echo +memory > $CG/cgroup.subtree_control
rmdir $CG/swnicwfz 2>/dev/null
mkdir $CG/swnicwfz
$A timeout 60 selftests/wire/out/wire_spray -n 1 -s 0 $ADDR_B \
	>/tmp/wfz.spray4 2>&1
$A ip link set swfa mtu 9000 && $B ip link set swfb mtu 9000
$A tc qdisc replace dev swfa root netem loss 100%
$A sh -c "mount -t cgroup2 none $CG && echo \$\$ > $CG/swnicwfz/cgroup.procs &&
	exec timeout 60 selftests/wire/out/wire_spray -n 1 -l 4194304 -s 2 -m $ADDR_B" \
	>/tmp/wfz.spray5 2>&1
spray_rc=$?
$A ip link set swfa mtu 1500 && $B ip link set swfb mtu 1500
diag "then: $($A swnic -j peer show | jq -c --arg b "$ADDR_B:" \
	'[.[] | select(.peer | startswith($b)) | .inflight]'), $(wire_counters swnicfa |
	jq -c '{tx_pages, tx_page_allocs, tx_errors}')"
$A tc qdisc del dev swfa root
grew=$(sed -n 's/^wire_spray: cgroup grew \(-\?[0-9]*\) KiB$/\1/p' /tmp/wfz.spray5)
diag "a full window to a silent peer: the poster's cgroup grew ${grew:-?} KiB"
if [ $spray_rc = 0 ] && [ -n "$grew" ] && [ "$grew" -ge 1024 ]; then
	ok "packets kept for retransmission are charged to the poster's cgroup"
else
	not_ok "packets kept for retransmission are charged to the poster's cgroup" \
		"exit $spray_rc: $(cat /tmp/wfz.spray4 /tmp/wfz.spray5)"
fi
rmdir $CG/swnicwfz 2>/dev/null

# ... and charged without waiting: a poster whose cgroup is at its limit
# has its packets wait for room (the tick tries again), it is not OOM
# killed, and the wire it holds meanwhile does not reclaim for it. Here
# memory.max leaves 128 KiB above what the poster has when it posts 4 MiB
# to the silent peer; then the limit goes and the peer fails the sends
# (peer timeout). (The code before, which charged with GFP_KERNEL under
# the wire lock, passed this too: its reclaim found nothing to kill for.)
mkdir $CG/swnicwfz
rm -f /tmp/wfz.go
$A tc qdisc replace dev swfa root netem loss 100%
echo 3000 > $PARAMS/peer_timeout_ms
$A sh -c "mount -t cgroup2 none $CG && echo \$\$ > $CG/swnicwfz/cgroup.procs &&
	exec timeout 60 selftests/wire/out/wire_spray -n 1 -l 4194304 -s 2 -w /tmp/wfz.go $ADDR_B" \
	>/tmp/wfz.spray6 2>&1 &
spray=$!
wait_for_line ready /tmp/wfz.spray6
echo $(( $(cat $CG/swnicwfz/memory.current) + 131072 )) > $CG/swnicwfz/memory.max
touch /tmp/wfz.go
wait $spray
spray_rc=$?
oom=$(awk '$1 == "oom_kill" { print $2 }' $CG/swnicwfz/memory.events)
echo max > $CG/swnicwfz/memory.max
$A tc qdisc del dev swfa root
echo 10000 > $PARAMS/peer_timeout_ms
diag "a poster at its cgroup's limit: exit $spray_rc, oom_kill ${oom:-?}"
if [ $spray_rc = 0 ] && [ "$oom" = 0 ] &&
   grep -q "posted 1 of 1" /tmp/wfz.spray6; then
	ok "a poster at its cgroup's limit waits for room, not killed"
else
	not_ok "a poster at its cgroup's limit waits for room, not killed" \
		"exit $spray_rc, oom_kill ${oom:-?}: $(cat /tmp/wfz.spray6)"
fi
rmdir $CG/swnicwfz 2>/dev/null
rm -f /tmp/wfz.go

# pingpong_ok NAME PORT TIMEOUT: fi_pingpong (server in A, client in B),
# 20 rounds of 4 KiB, data checked, completes within TIMEOUT s. One check.
pingpong_ok()
{
	$A timeout "$3" fi_pingpong -p swnic -e rdm -c -I 20 -S 4096 -B "$2" \
		>/tmp/wfz.psrv 2>&1 &
	_pp_srv=$!
	wait_listen swnicfa "$2"
	$B timeout "$3" fi_pingpong -p swnic -e rdm -c -I 20 -S 4096 -P "$2" \
		$ADDR_A >/tmp/wfz.pcli 2>&1
	_pp_cli=$?
	wait $_pp_srv
	_pp_srv=$?
	if [ $_pp_cli = 0 ] && [ $_pp_srv = 0 ]; then
		ok "$1"
	else
		not_ok "$1" "client exit $_pp_cli: $(tail -3 /tmp/wfz.pcli)" \
			"server exit $_pp_srv: $(tail -3 /tmp/wfz.psrv)"
	fi
}

# One user at its cgroup's limit does not stop the others' traffic to
# the same peer. Its eight 4 MiB sends to B, posted with its cgroup full
# (memory.max at memory.current: the per-CPU charge batch left, well
# under a window at MTU 9000), have packets that never arrive (a tc
# filter drops DATA packets of 4 MiB messages on A's way out, but a
# message's first send, which tells B of it), so what the first holds
# stays charged, its next packet waits for room that never comes, and
# the next ones cannot make their first packet. Then fi_pingpong (server
# in A, in no such cgroup) sends to B through the same peer context.
# Before, the context's queue stopped at the first message with no
# memory: the ping-pong waited behind it until the peer timeout (60 s
# here; the ping-pong is given 50, which the debug kernel under load
# needed more than 30 of). And a message that cannot make its first
# packet takes no message id: with one, B - which runs a peer's requests
# in id order, knowing nothing of that one - ran nothing after it.
# The posts that find no room for what they allocate fail (ENOMEM, an
# error completion), and the poster lives on. Before, the first of them
# invoked the cgroup's OOM killer from the poster's doorbell; the room
# its death freed let its first send fill the window to B (256 packets,
# all dropped), and the ping-pong waited behind them.
$A timeout 60 selftests/wire/out/wire_spray -n 1 -s 0 $ADDR_B \
	>/tmp/wfz.spray7 2>&1		# B answers: its window is the full one
mkdir $CG/swnicwfz
rm -f /tmp/wfz.go
echo 60000 > $PARAMS/peer_timeout_ms
$A ip link set swfa mtu 9000 && $B ip link set swfb mtu 9000
$A sh -c "mount -t cgroup2 none $CG && echo \$\$ > $CG/swnicwfz/cgroup.procs &&
	exec timeout 60 selftests/wire/out/wire_spray -n 1 -c 8 -l 4194304 -s 20 -w /tmp/wfz.go $ADDR_B" \
	>/tmp/wfz.spray8 2>&1 &
spray=$!
if wait_for_line ready /tmp/wfz.spray8 &&
   $A tc qdisc add dev swfa clsact &&
   $A tc filter add dev swfa egress pref 6 protocol ip u32 \
	match ip protocol 17 0xff match u8 1 0xff at 29 \
	match u32 0x00400000 0xffffffff at 72 \
	match u32 0 0xffffffff at 80 action ok &&
   $A tc filter add dev swfa egress pref 7 protocol ip u32 \
	match ip protocol 17 0xff match u8 1 0xff at 29 \
	match u32 0x00400000 0xffffffff at 72 action drop; then
	cat $CG/swnicwfz/memory.current > $CG/swnicwfz/memory.max
	touch /tmp/wfz.go
	wait_for_line failed /tmp/wfz.spray8
	sleep 1
	diag "$(grep -E 'posted|failed' /tmp/wfz.spray8 | tr '\n' ' ')," \
		"to B $($A swnic -j peer show |
		jq -c --arg b "$ADDR_B:" '[.[] | select(.peer | startswith($b)) | {inflight}]')"
	pingpong_ok "a user at its cgroup's limit: another's ping-pong to the same peer goes on" 27399 50
else
	not_ok "a user at its cgroup's limit: another's ping-pong to the same peer goes on" \
		"setup: $(cat /tmp/wfz.spray8)"
fi
diag "the full user's: $(grep -E 'max|high' $CG/swnicwfz/memory.events | tr '\n' ' ')," \
	"$(wire_counters swnicfa | jq -c '{tx_errors, tx_page_allocs}')"
$A tc qdisc del dev swfa clsact 2>/dev/null
echo max > $CG/swnicwfz/memory.max
wait $spray
spray_rc=$?
oom=$(awk '$1 == "oom_kill" { print $2 }' $CG/swnicwfz/memory.events)
if [ $spray_rc = 0 ] && [ "$oom" = 0 ] &&
   grep -q "posted 8 of 8" /tmp/wfz.spray8 &&
   grep -q "^wire_spray: [1-8] failed so far (first: Cannot allocate memory)" \
	/tmp/wfz.spray8; then
	ok "posts at the cgroup's limit fail with ENOMEM, the poster is not killed"
else
	not_ok "posts at the cgroup's limit fail with ENOMEM, the poster is not killed" \
		"exit $spray_rc, oom_kill ${oom:-?}: $(cat /tmp/wfz.spray8)"
fi
$A ip link set swfa mtu 1500 && $B ip link set swfb mtu 1500
echo 10000 > $PARAMS/peer_timeout_ms
rmdir $CG/swnicwfz 2>/dev/null
rm -f /tmp/wfz.go

# Users at their cgroups' limits, each with a 64 KiB send to B queued
# that cannot make its first packet (15 KiB of room left after the ready
# poster's use: enough for what the post allocates, not for a 9 KiB
# packet's buffer at MTU 9000), do not stop another's ping-pong to B
# behind them. Sixteen posters, of which at least nine must be held back
# so (the cgroup that holds this CPU's charge batch has room for its
# packets, and a post may find too little room). Before, the pump
# remembered eight cgroups out of room per round and stopped at the
# ninth, every round for as long as they stayed full: the ping-pong
# waited, until the peer timeout (60 s here) failed the held sends.
rm -f /tmp/wfz.go16
echo 60000 > $PARAMS/peer_timeout_ms
spr16=
for i in $(seq 16); do
	rmdir $CG/swnicwfz$i 2>/dev/null
	mkdir $CG/swnicwfz$i
	$A sh -c "mount -t cgroup2 none $CG && echo \$\$ > $CG/swnicwfz$i/cgroup.procs &&
		exec timeout 90 selftests/wire/out/wire_spray -n 1 -l 65536 -s 20 -w /tmp/wfz.go16 $ADDR_B" \
		>/tmp/wfz.s16.$i 2>&1 &
	spr16="$spr16 $!"
done
$A ip link set swfa mtu 9000 && $B ip link set swfb mtu 9000
for i in $(seq 16); do
	wait_for_line ready /tmp/wfz.s16.$i
done
for i in $(seq 16); do
	echo $(( $(cat $CG/swnicwfz$i/memory.current) + 15360 )) \
		> $CG/swnicwfz$i/memory.max
done
touch /tmp/wfz.go16
for i in $(seq 16); do
	wait_for_line failed /tmp/wfz.s16.$i
done
sleep 1
held16=$($A swnic -j peer show | jq --arg b "$ADDR_B:" \
	'[.[] | select(.peer | startswith($b)) | .msgs] | add // 0')
diag "sixteen posters at their limits: $held16 sends held back;" \
	"cgroups' max events: $(for i in $(seq 16); do
		awk '$1 == "max" { printf "%s ", $2 }' $CG/swnicwfz$i/memory.events; done)"
if [ "$held16" -ge 9 ]; then
	pingpong_ok "users at their cgroups' limits ($held16): another's ping-pong to the same peer goes on" 27398 30
else
	# What a post and the posters' own pages take of the room varies:
	# fewer than nine held back is no test of the walk.
	skip "users at their cgroups' limits: another's ping-pong to the same peer goes on" \
		"only $held16 of 16 posters' sends held back"
fi
for i in $(seq 16); do
	echo max > $CG/swnicwfz$i/memory.max
done
# shellcheck disable=SC2086 # the PIDs
wait $spr16
$A ip link set swfa mtu 1500 && $B ip link set swfb mtu 1500
echo 10000 > $PARAMS/peer_timeout_ms
for i in $(seq 16); do
	rmdir $CG/swnicwfz$i 2>/dev/null
done
rm -f /tmp/wfz.go16

echo Y > $PARAMS/udp_any_sport

# Check, as $1, that the server's rx_mem_bytes, and of it
# rx_unproven_bytes, come back to 0 (40 s).
rx_mem_released()
{
	for _ in $(seq 200); do
		[ "$(wire_counters swnicfa | jq .rx_mem_bytes)" = 0 ] && break
		sleep 0.2
	done
	check "$1" sh -c \
		"[ \"\$($A swnic -j peer show | jq '.[0].counters | .rx_mem_bytes + .rx_unproven_bytes')\" = 0 ]"
}

# A PING naming no one draws an ACK (52 bytes): one shorter than that is
# dropped as drop_short, unanswered - a 16-byte PING forged from a
# victim's address drew 3.25 times its size at it - and a padded one is
# answered (wire_fuzz -x ping: exit 3 if no answer came in 1 s).
w0=$(wire_counters swnicfa)
$B timeout 30 selftests/wire/out/wire_fuzz -s "$SEED" -x ping $ADDR_A \
	>/tmp/wfz.ping 2>&1
ping_rc=$?
w1=$(wire_counters swnicfa)
$B timeout 30 selftests/wire/out/wire_fuzz -s "$SEED" -x ping -l 52 $ADDR_A \
	>>/tmp/wfz.ping 2>&1
ping52_rc=$?
if [ $ping_rc = 3 ] && [ $ping52_rc = 0 ] &&
   [ $(($(echo "$w1" | jq .drop_short) - $(echo "$w0" | jq .drop_short))) -ge 1 ]; then
	ok "a 16-byte PING naming no one is dropped unanswered, a 52-byte one answered"
else
	not_ok "a 16-byte PING naming no one is dropped unanswered, a 52-byte one answered" \
		"exits $ping_rc, $ping52_rc (3: no answer): $(cat /tmp/wfz.ping)" \
		"drop_short $(echo "$w0" | jq .drop_short) -> $(echo "$w1" | jq .drop_short)"
fi

# A peer restarts (incarnation A, then B); a packet of A's still on its
# way, naming the server, comes after B's first. It is dropped as
# drop_stale: A is retired. Before, it was taken for a new incarnation:
# the context was reset under B (and A's request ran), and B's next
# packet reset it again to PSN 0 - B's packets then fell outside the
# window, ours looked like duplicates to B, and both hung (wire_fuzz
# -x retire: B's second packet must be ACKed in order, PSN 2 next).
w0=$(wire_counters swnicfa)
$B timeout 60 selftests/wire/out/wire_fuzz -s "$SEED" -x retire $ADDR_A \
	>/tmp/wfz.retire 2>&1
retire_rc=$?
w1=$(wire_counters swnicfa)
retire_port=$(sed -n 's/^wire_fuzz: retire from port \([0-9]*\), .*/\1/p' /tmp/wfz.retire)
retire_inc=$(sed -n 's/^wire_fuzz: retire from port .* then \([0-9]*\)$/\1/p' /tmp/wfz.retire)
remote_inc=$($A swnic -j peer show |
	jq ".[] | select(.peer == \"$ADDR_B:$retire_port\") | .remote_inc")
diag "retired incarnation: $(tail -1 /tmp/wfz.retire); remote_inc $remote_inc (want $retire_inc)"
if [ $retire_rc = 0 ] && [ -n "$retire_inc" ] &&
   [ "$remote_inc" = "$retire_inc" ] &&
   [ "$(printf '%s' "$w1" | jq .drop_stale)" -gt \
     "$(printf '%s' "$w0" | jq .drop_stale)" ]; then
	ok "a late packet of a retired incarnation is dropped, no reset"
else
	not_ok "a late packet of a retired incarnation is dropped, no reset" \
		"wire_fuzz exit $retire_rc: $(cat /tmp/wfz.retire)" \
		"remote_inc: '$remote_inc'" "before: $w0" "after:  $w1"
fi
pingpong_ok "... and a transfer between the real peers completes" 27880 60

# Forged sources, 8 of them (10.81.0.100-107), 32 zero-length SENDs to a
# closed port, none naming the server: each answer goes again twice at
# most - more only to a peer that named us once. Before, each went again
# at every RTO, and the context was pinged, until the peer timeout: some
# 17 packets at the forged source's victim for each request.
forged_retx()
{
	$A swnic -j peer show |
		jq '[.[] | select(.peer | test("^10\\.81\\.0\\.10[0-7]:")) |
		     .retx // 0] | [length, add // 0] | join(" ")' -r
}
read -r _ r0 <<< "$(forged_retx)"
$B timeout 60 selftests/wire/out/wire_fuzz -s "$SEED" -n 32 -k 8 \
	-x spoof -r 10.81.0.0 $ADDR_A >/tmp/wfz.spoof 2>&1
spoof_rc=$?
sleep 2
read -r n r1 <<< "$(forged_retx)"
if [ $spoof_rc = 0 ] && [ "$n" -gt 0 ] && [ $((r1 - r0)) -le 64 ]; then
	ok "answers to forged sources go again twice at most ($n contexts, $((r1 - r0)))"
else
	not_ok "answers to forged sources go again twice at most ($n contexts)" \
		"wire_fuzz exit $spoof_rc: $(cat /tmp/wfz.spoof)" \
		"their retransmissions: $r0 -> $r1"
fi

# A host forging sources (64 made-up ones in A's /24, each a context)
# sends zero-length SENDs to a closed port, not naming the server: each
# is refused, and the answer goes nowhere, never ACKed. Those answers
# hold the unproven share (an eighth of the budget: 4 MiB here) at most,
# and a peer's transfer still goes through while they wait (their
# contexts live 60 s). Before, they were charged to the whole budget
# only, up to 8192 a context: it filled, and every peer's messages were
# dropped (drop_no_mem) until the forged contexts timed out.
echo 4 > $PARAMS/rx_mem_mb
echo 60000 > $PARAMS/peer_timeout_ms
$B timeout 120 selftests/wire/out/wire_fuzz -s "$SEED" -n 40000 -k 64 \
	-d 2000 -x spoof -r 10.81.0.0 $ADDR_A >/tmp/wfz.spoof 2>&1
spoof_rc=$?
sleep 1
w1=$(wire_counters swnicfa)
share=$(((4 << 20) / 8))
diag "forged sources: $(tail -1 /tmp/wfz.spoof); $(printf '%s' "$w1" |
	jq -c '{rx_mem_bytes, rx_unproven_bytes, drop_unproven, drop_no_mem, peers}')"
if [ $spoof_rc = 0 ] &&
   printf '%s' "$w1" | jq -e --argjson s $share \
	'.rx_unproven_bytes > 0 and .rx_unproven_bytes <= $s and
	 .rx_mem_bytes <= $s' >/dev/null; then
	ok "forged sources' unanswered requests hold the unproven share at most"
else
	not_ok "forged sources' unanswered requests hold the unproven share at most" \
		"wire_fuzz exit $spoof_rc: $(cat /tmp/wfz.spoof)" "after: $w1"
fi
pingpong_ok "... and a transfer between the real peers completes meanwhile" \
	27881 40
echo 10000 > $PARAMS/peer_timeout_ms
rx_mem_released "... and the forged sources' answers released after the peer timeout"
echo 64 > $PARAMS/rx_mem_mb

# A packet that does not name the server's incarnation may come from any
# host and address: one claiming 16 MiB, more than such packets may hold
# of the budget (an eighth of 64 MiB here), is refused as drop_unproven
# and answered with an ACK, which names the server; sent again naming
# it, it is taken (wire_fuzz -x claim: see there).
w0=$(wire_counters swnicfa)
$B timeout 60 selftests/wire/out/wire_fuzz -s 1 -n 16 -x claim $ADDR_A \
	>/tmp/wfz.claim 2>&1
claim_rc=$?
w1=$(wire_counters swnicfa)
if [ $claim_rc = 0 ] &&
   [ "$(printf '%s' "$w1" | jq .drop_unproven)" = \
     $(( $(printf '%s' "$w0" | jq .drop_unproven) + 1 )) ] &&
   [ "$(printf '%s' "$w1" | jq .rx_mem_bytes)" -ge $((16 << 20)) ]; then
	ok "a claim of 16 MiB refused until it names us, then taken"
else
	not_ok "a claim of 16 MiB refused until it names us, then taken" \
		"wire_fuzz exit $claim_rc: $(cat /tmp/wfz.claim)" \
		"before: $w0" "after:  $w1"
fi
rx_mem_released "... and released after the peer timeout"

# Nor may one host that names us hold the whole budget: its messages
# hold half of it at most (20 MiB taken, a second 20 MiB not, of 64),
# and another peer's 20 MiB is still taken. Before, the second was taken
# too, and a host that never ended its messages held every byte
# (wire_fuzz -x hog: see there).
$B timeout 60 selftests/wire/out/wire_fuzz -s 1 -n 20 -x hog $ADDR_A \
	>/tmp/wfz.hog 2>&1
hog_rc=$?
if [ $hog_rc = 0 ]; then
	ok "one peer's messages hold half the budget at most, another's are taken"
else
	not_ok "one peer's messages hold half the budget at most, another's are taken" \
		"wire_fuzz exit $hog_rc: $(cat /tmp/wfz.hog)"
fi
rx_mem_released "... and released after the peer timeout (2)"

# Nor may such a packet have a read run - its answer would be as long as
# it asks, a reflection aimed at a forged source - nor be an ACK or an
# answer, which always name whom they answer: all three are dropped as
# drop_unproven (the read answered with an ACK), and a read in a DATA
# packet as drop_bad_msg; the read sent again naming the server is taken
# (wire_fuzz -x read: see there).
w0=$(wire_counters swnicfa)
$B timeout 60 selftests/wire/out/wire_fuzz -s 1 -n 64 -x read $ADDR_A \
	>/tmp/wfz.read 2>&1
read_rc=$?
w1=$(wire_counters swnicfa)
if [ $read_rc = 0 ] &&
   [ "$(printf '%s' "$w1" | jq .drop_unproven)" = \
     $(( $(printf '%s' "$w0" | jq .drop_unproven) + 3 )) ] &&
   [ "$(printf '%s' "$w1" | jq .drop_bad_msg)" = \
     $(( $(printf '%s' "$w0" | jq .drop_bad_msg) + 1 )) ]; then
	ok "a read, an ACK and an answer not naming us are dropped"
else
	not_ok "a read, an ACK and an answer not naming us are dropped" \
		"wire_fuzz exit $read_rc: $(cat /tmp/wfz.read)" \
		"before: $w0" "after:  $w1"
fi

# A read may ask for at most what a post may (1 GiB): one of 2 GiB naming
# us is malformed (drop_bad_msg, as its copy in a DATA packet), not taken
# (wire_fuzz sees no ACK of it: "ACK -1") and not run.
w0=$(wire_counters swnicfa)
$B timeout 60 selftests/wire/out/wire_fuzz -s 2 -n 2048 -x read $ADDR_A \
	>/tmp/wfz.read 2>&1
read_rc=$?
w1=$(wire_counters swnicfa)
if [ $read_rc = 1 ] &&
   grep -q "read of 2048 MiB naming the target: ACK -1" /tmp/wfz.read &&
   [ "$(printf '%s' "$w1" | jq .drop_bad_msg)" = \
     $(( $(printf '%s' "$w0" | jq .drop_bad_msg) + 2 )) ]; then
	ok "a read of more than 1 GiB is malformed, not run"
else
	not_ok "a read of more than 1 GiB is malformed, not run" \
		"wire_fuzz exit $read_rc: $(cat /tmp/wfz.read)" \
		"before: $w0" "after:  $w1"
fi

base=$(wire_counters swnicfa)

# fi_pingpong (server in A, client in B) while both floods run from B.
# B is a peer A knows before they start: a flood from spoofed sources
# takes every new context the rate limit lets A make, and then the cap
# (wire.rst), so a host new to A meanwhile may not be let in at all.
port=27899
$A timeout 120 fi_pingpong -p swnic -e rdm -I 5 -S 64 -B $port \
	>/tmp/wfz.srv 2>&1 &
srv=$!
wait_listen swnicfa $port
check "B talks to A before the floods (fi_pingpong)" \
	$B timeout 120 fi_pingpong -p swnic -e rdm -I 5 -S 64 -P $port $ADDR_A
wait $srv
port=27900
$A timeout 400 fi_pingpong -p swnic -e rdm -c -I 300 -S 4096 -B $port \
	>/tmp/wfz.srv 2>&1 &
srv=$!
wait_listen swnicfa $port
$B timeout 400 selftests/wire/out/wire_fuzz -s "$SEED" -n "$PACKETS" -k 8 \
	-d 5000 $ADDR_A >/tmp/wfz.f1 2>&1 &
fz1=$!
$B timeout 400 selftests/wire/out/wire_fuzz -s $((SEED + 1)) -n "$PACKETS" \
	-k 4 -d 5000 -r 10.81.0.0 $ADDR_A >/tmp/wfz.f2 2>&1 &
fz2=$!
sleep 1
t0=$SECONDS
$B timeout 400 fi_pingpong -p swnic -e rdm -c -I 300 -S 4096 -P $port \
	$ADDR_A >/tmp/wfz.cli 2>&1
cli_rc=$?
running=$(kill -0 $fz1 2>/dev/null && echo "still flooding" || echo "done")
wait $srv
srv_rc=$?
diag "fi_pingpong: $((SECONDS - t0)) s; the flood at its end: $running"
if [ $cli_rc = 0 ] && [ $srv_rc = 0 ]; then
	ok "fi_pingpong under the flood completes, data checked"
else
	not_ok "fi_pingpong under the flood completes, data checked" \
		"client exit $cli_rc: $(tail -3 /tmp/wfz.cli)" \
		"server exit $srv_rc: $(tail -3 /tmp/wfz.srv)"
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
diag "$(cat /tmp/wfz.f1 /tmp/wfz.f2)"
if [ $fz1_rc = 0 ] && [ $fz2_rc = 0 ]; then
	ok "both floods sent all their packets"
else
	not_ok "both floods sent all their packets" "exit $fz1_rc and $fz2_rc" \
		"$(cat /tmp/wfz.f1 /tmp/wfz.f2)"
fi

if printf '%s' "$live" | jq -e ".[] | select(.peer == \"$ADDR_B:4793\") |
	.tx_bytes > 0 and .rx_bytes > 0 and .srtt > 0 and .rto > 0 and
	.local_inc > 0 and .remote_inc > 0" >/dev/null; then
	ok "peer show: the live client with its bytes, RTT and incarnations"
else
	not_ok "peer show: the live client with its bytes, RTT and incarnations" \
		"$live"
fi
# The incarnations keep forged packets out: administrators only see them.
no_incarnations_shown()
{
	_out=$($A setpriv --reuid=65534 --regid=65534 --clear-groups \
		swnic -j peer show) && [ -n "$_out" ] &&
		printf '%s' "$_out" | jq -e '[.[] | select(.peer != "*")] |
			length > 0 and
			all(has("local_inc") or has("remote_inc") | not)'
}
if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	check "peer show: no incarnations to an unprivileged user" \
		no_incarnations_shown
else
	skip "peer show: no incarnations to an unprivileged user" \
		"setpriv cannot switch to uid 65534"
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

after_fz=$(wire_counters swnicfa)
diag "server's wire counters before: $base" "after: $after_fz"
for reason in short checksum version stale window dup bad_msg peers; do
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

# dropped_each REASON WHAT CMD...: CMD (wire_fuzz in B, $BAD packets) exits
# 0, drop_REASON at A rises by $BAD and no peer context is made.
dropped_each()
{
	local reason=$1 what=$2 w0 w1 rc want
	shift 2

	w0=$(wire_counters swnicfa)
	"$@" >/tmp/wfz.bad 2>&1
	rc=$?
	want=$(( $(printf '%s' "$w0" | jq .drop_$reason) + BAD ))
	for _ in $(seq 50); do
		[ "$(wire_counters swnicfa | jq .drop_$reason)" -ge $want ] &&
			break
		sleep 0.2
	done
	w1=$(wire_counters swnicfa)
	if [ $rc = 0 ] &&
	   [ "$(printf '%s' "$w1" | jq .drop_$reason)" = $want ] &&
	   [ "$(printf '%s' "$w1" | jq .peers)" = "$(printf '%s' "$w0" | jq .peers)" ]; then
		ok "$BAD $what dropped as drop_$reason, no peer made"
	else
		not_ok "$BAD $what dropped as drop_$reason, no peer made" \
			"wire_fuzz exit $rc: $(cat /tmp/wfz.bad)" \
			"before: $w0" "after:  $w1"
	fi
}

# Packets no peer can send, each a well-formed request (wire_fuzz -x):
# from 0.0.0.0/8 (IPv6 names) to the limited broadcast, from the subnet to
# the limited broadcast, to the all-hosts group, to the subnet's broadcast
# address. Each is dropped as drop_addr, and makes no peer context.
BAD=40
for kind in zero lbcast mcast bcast; do
	dropped_each addr "packets ($kind)" $B selftests/wire/out/wire_fuzz \
		-s "$SEED" -n $BAD -x $kind -i swfb $ADDR_A
done

# Empty datagrams, from any socket: each is dropped as drop_short, and
# counts against a round's batch as a packet would (before: neither, and
# a flood of them kept one round going under the wire's lock).
dropped_each short "empty datagrams" $B selftests/wire/out/wire_fuzz \
	-n $BAD -x empty $ADDR_A

# The fuzzer's contexts fall silent: their half-received messages go.
rx_mem_released "half-received messages released after the peer timeout"


# The flood left the server's namespace with all its 1024 contexts. A new
# host (namespace C, on a second veth of A) is talked to all the same: a
# context idle for peer_idle_ms (the flood's, the oldest heard first) is
# reused for it.
echo 1000 > $PARAMS/peer_idle_ms
sleep 1.5
w0=$(wire_counters swnicfa)
C="ip netns exec swnicfc"
port=$((port + 1))
if sh -c "ip netns add swnicfc &&
	ip link add swfa2 type veth peer name swfc &&
	ip link set swfa2 netns swnicfa && ip link set swfc netns swnicfc &&
	$A ip addr add 10.81.1.1/24 dev swfa2 &&
	$C ip addr add 10.81.1.2/24 dev swfc &&
	$A ip link set swfa2 up && $C ip link set swfc up &&
	$C ip link set lo up &&
	$A swnic dev add swnicfa2 netdev swfa2 &&
	$C swnic dev add swnicfc netdev swfc &&
	$C ping -c 1 -W 5 10.81.1.1" >/tmp/wfz.c 2>&1; then
	# The server on A's second device, whose netdev C reaches.
	$A timeout 120 fi_pingpong -p swnic -d swnicfa2 -e rdm -c -I 20 \
		-S 4096 -B $port >/tmp/wfz.srv 2>&1 &
	srv=$!
	wait_listen swnicfa $port
	$C timeout 120 fi_pingpong -p swnic -e rdm -c -I 20 -S 4096 -P $port \
		10.81.1.1 >/tmp/wfz.cli 2>&1
	cli_rc=$?
	wait $srv
	srv_rc=$?
else
	cli_rc="no namespace C: $(cat /tmp/wfz.c)" srv_rc=-
fi
w1=$(wire_counters swnicfa)
if [ "$cli_rc" = 0 ] && [ "$srv_rc" = 0 ] &&
   printf '%s' "$w1" | jq -e --argjson b "$w0" \
	'.peers <= 1024 and $b.peers == 1024 and .peers_evicted > $b.peers_evicted' \
	>/dev/null; then
	ok "a new peer is talked to at 1024 contexts, an idle one reused ($(printf '%s' "$w1" | jq .peers_evicted) evicted)"
else
	not_ok "a new peer is talked to at 1024 contexts, an idle one reused" \
		"client exit $cli_rc: $(tail -3 /tmp/wfz.cli)" \
		"server exit $srv_rc: $(tail -3 /tmp/wfz.srv)" \
		"before: $w0" "after:  $w1"
fi

# A peer that never ACKs (wire_fuzz -x noack; its context reuses an idle
# one of the 1024): 12000 requests in order, each refused at its endpoint. Their answers cannot go once the window
# to it is shut; at 8192 waiting its requests wait to run. Without that
# cap every request's answer stayed queued, uncharged: a remote host
# could make the kernel hold memory without end.
NOACK=12000
$B timeout 120 selftests/wire/out/wire_fuzz -s "$SEED" -n $NOACK -d 3000 \
	-x noack $ADDR_A >/tmp/wfz.noack 2>&1
noack_rc=$?
noack_port=$(sed -n 's/^wire_fuzz: noack from port \([0-9]*\)$/\1/p' /tmp/wfz.noack)
answers= last=-1
for _ in $(seq 40); do
	answers=$($A swnic -j peer show |
		jq ".[] | select(.peer == \"$ADDR_B:$noack_port\") | .answers")
	[ -n "$answers" ] && [ "$answers" = "$last" ] && break
	last=$answers
	sleep 0.5
done
diag "a peer that never ACKs: $answers answers waiting"
if [ $noack_rc = 0 ] && [ -n "$answers" ] &&
   [ "$answers" -gt 256 ] && [ "$answers" -le 8192 ]; then
	ok "a peer that never ACKs gets at most 8192 answers queued ($answers)"
else
	not_ok "a peer that never ACKs gets at most 8192 answers queued" \
		"wire_fuzz exit $noack_rc: $(cat /tmp/wfz.noack)" \
		"answers: '$answers'" "$($A swnic -j peer show | jq -c '.[0]')"
fi

# Silent, it times out: its answers and waiting requests go, and with
# them their charge to the namespace's budget.
rx_mem_released "the never-ACKing peer's answers released after its timeout"

splat=$(dmesg | tail -n +$((dmesg_lines + 1)) |
	grep -E 'BUG|WARNING|Oops|general protection|KASAN|UBSAN|kmemleak|hung task|RCU stall' |
	head -20)
if [ -z "$splat" ]; then
	ok "no kernel splat during the floods"
else
	not_ok "no kernel splat during the floods" "$splat"
fi

$A swnic dev del swnicfa force >/dev/null 2>&1
$A swnic dev del swnicfa2 force >/dev/null 2>&1
$B swnic dev del swnicfb force >/dev/null 2>&1
ip netns exec swnicfc swnic dev del swnicfc force >/dev/null 2>&1
ip netns del swnicfa
ip netns del swnicfb
ip netns del swnicfc 2>/dev/null
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
