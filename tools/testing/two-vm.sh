#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# two-vm.sh - swnic across two machines: two VMs, each with its own kernel
# and swnic module, joined by a wire (vm.sh --net: qemu dgram netdevs on
# the build machine's 127.0.0.1, ports swapped), 1 vCPU and 2 GiB each.
# In each a swnic device is bound to the virtio NIC (10.99.0.1 and
# 10.99.0.2); VM 1 runs the servers, VM 2 the clients of Debian's
# fi_pingpong (RDM msg and tagged, MSG connected, DGRAM, 1 MiB, data
# checked), of wire_rma, and again over IPv6 (fd99::1 and fd99::2 on a
# macvlan of the NIC: RDM 8 B to 1 MiB, MSG connected); then VM 1
# restarts mid-stream (its link down, its module unloaded and loaded
# again: a new incarnation) and VM 2's
# stream must fail within the bounded time, release everything and talk
# to the new incarnation; then a 2-rank Open MPI job (OFI MTL, swnic)
# with a rank in each VM: mpirun in VM 2 starts the other rank's daemon
# in VM 1 through the shared directory, where ssh would be used. VM 2
# reports TAP; VM 1's side is checked through the shared directory.
#
# With --bench DIR (make bench) the VMs measure instead: fi_pingpong's
# one-way latency and bandwidth of swnic (rdm) beside tcp;ofi_rxm (rdm) and
# verbs;ofi_rxm on rdma_rxe (soft-RoCE, Debian's module, on the same
# virtio NIC: rxe works in a network namespace only from kernel 7.1, so
# the two-VM path is where the three share a path), lossless and at 1 %
# netem loss on both NICs (GSO off), medians of SWNIC_TWOVM_RUNS (default
# 3) runs interleaved; the table goes to DIR/bench.md, the figures to
# DIR/bench.tsv (section "twovm"), as bench.sh's do.
#
# Usage: tools/testing/two-vm.sh [--kernel TAG] [--timeout SECS] [--bench DIR]
#        tools/testing/two-vm.sh guest server|client DIR   (in the VMs)
#        tools/testing/two-vm.sh rsh DIR HOST CMD...   (mpirun's agent)
#
# The client VM's output is shown when the pair is done. qemu's virtio-net
# TX queue (dgram netdev) stalls now and then, for good (the guest kernel
# logs "NETDEV WATCHDOG" every 5 s; seen once with this pair alone on the
# build machine): each VM bounces its link when that happens
# (guest_link_nurse), and the bounces are shown as comments; if five
# bounces in a row do not bring it back, both VMs stop the run; a failed
# run in which a VM logged a stall is shown as comments and both VMs run
# once more; a second stall counts.
#
# Exit status: 0 if every check passed, 1 if one failed, vm.sh's (125,
# 124) if a VM failed. SWNIC_TWOVM_PORT (default 47731) and the port after
# it are the link's UDP ports on the build machine's loopback: another
# pair runs beside with another.

set -u

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
PORT_A=${SWNIC_TWOVM_PORT:-47731}
PORT_B=$((PORT_A + 1))
ADDR_SERVER=10.99.0.1
ADDR6_SERVER=fd99::1	# and fd99::2: the IPv6 pass (no DAD: up at once)
ADDR6_CLIENT=fd99::2

# The IPv6 pass's device: an endpoint takes its device's IPv4 address if it
# has one, so IPv6 needs a netdev with IPv6 only - a macvlan on the NIC,
# whose frames take the same wire.
guest_ip6()
{
	ip link add sw6 link "$SWNIC_VM_NETDEV" type macvlan mode bridge &&
	ip -6 addr add "$1/64" dev sw6 nodad &&
	ip link set sw6 up &&
	swnic dev add swnicw6 netdev sw6
}

# ---- in the guests ----------------------------------------------------------

pp_port=27900

# qemu's virtio-net stops its TX queue now and then for good though the
# link is fine: the guest kernel's watchdog says "NETDEV WATCHDOG ...
# transmit queue 0 timed out" every 5 s from then on (qemu issue 1365;
# podman's qemu machines bounce their link for it). Bouncing the link
# restarts the queue (virtio-net's open polls the TX ring, which frees
# what qemu sent and wakes the queue): this does so each time the queue's
# timeout count (sysfs tx_timeout) moves while the link is up, and says
# when in DIR/bounced-ROLE. A deliberate link down (guest_reload) is left
# alone: the watchdog does not run on a link that is down.
#
# Bouncing does not always help: once a 6.1 guest's queue timed out 120
# times in 13 minutes, bounced after each, and every check of the run
# waited out its time bound. So after NURSE_TRIES bounces in a row, each
# within NURSE_SECS of the last, the link is given up for this run: the
# nurse leaves DIR/link-dead and ends the guest's run (the script, which
# MAIN is, then its children), and so does the other VM's nurse when it
# sees that file; the EXIT trap leaves the stall marker, and the build
# machine runs the pair again at once.
NURSE_TRIES=5
NURSE_SECS=20
NET_SYSFS=/sys/class/net
guest_link_nurse()
{
	local dir=$1 role=$2 main=$3 q n seen now last=0 tries=0

	q=$NET_SYSFS/$SWNIC_VM_NETDEV/queues/tx-0/tx_timeout
	seen=$(cat "$q") || return 0
	while sleep 1; do
		if [ -e "$dir/link-dead" ]; then
			kill -TERM "$main"
			pkill -TERM -P "$main"
			return 0
		fi
		n=$(cat "$q") || return 0
		[ "$n" = "$seen" ] && continue
		seen=$n
		[ "$(cat "$NET_SYSFS/$SWNIC_VM_NETDEV/operstate")" = up ] ||
			continue
		now=$(date +%s)
		if [ $((now - last)) -le "$NURSE_SECS" ]; then
			tries=$((tries + 1))
		else
			tries=1
		fi
		last=$now
		if [ "$tries" -gt "$NURSE_TRIES" ]; then
			echo "$(date +%T): TX timeouts $n after $NURSE_TRIES bounces in a row: link given up, run stopped" \
				>> "$dir/bounced-$role"
			: > "$dir/link-dead"
			continue	# stopped at the next turn, as the other VM
		fi
		ip link set "$SWNIC_VM_NETDEV" down &&
			ip link set "$SWNIC_VM_NETDEV" up &&
			echo "$(date +%T): TX timeouts $n, link bounced" >> "$dir/bounced-$role"
	done
}

# Bench: soft-RoCE on the same NIC, for verbs;ofi_rxm.
guest_rxe()
{
	export FI_UNIVERSE_SIZE=64
	modprobe rdma_rxe &&
		rdma link add rxe0 type rxe netdev "$SWNIC_VM_NETDEV" ||
		echo "two-vm.sh: no rxe: verbs;ofi_rxm will not run" >&2
}

# A restart mid-transfer (the server's side of the client's "reload"):
# fi_stream's server takes a stream; when the client says so (srv-N.go)
# this host goes silent (its link down), the server dies, the module is
# unloaded and loaded again - a new incarnation, which knows nothing of
# the client - and the host comes back, with a new server (srv-N.back)
# whose endpoint opens the wire's socket again. srv-N.rc: 0 if all that
# worked.
guest_reload()
{
	local dir=$1 n=$2 pid rc=0

	"$REPO/tools/testing/fi_stream" -p swnic -e rdm -S 65536 -t 120 \
		-B $pp_port > "$dir/srv-$n.out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		[ -n "$(ss -Hltn "sport = :$pp_port")" ] && break
		sleep 0.1
	done
	: > "$dir/srv-$n.listening"
	for _ in $(seq 1500); do
		[ -e "$dir/srv-$n.go" ] && break
		sleep 0.2
	done
	{
		ip link set "$SWNIC_VM_NETDEV" down || rc=1
		kill -9 "$pid"
		wait "$pid"
		swnic dev del swnicw force
		# Its last references go as the killed server's files close.
		for _ in $(seq 120); do
			rmmod swnic 2>/dev/null && break
			sleep 0.5
		done
		lsmod | grep -q '^swnic ' && rc=1
		insmod "$SWNIC_MODULE" || rc=1
		swnic dev add swnicw netdev "$SWNIC_VM_NETDEV" || rc=1
		ip link set "$SWNIC_VM_NETDEV" up || rc=1
		ip addr add "$ADDR_SERVER/24" dev "$SWNIC_VM_NETDEV" 2>/dev/null
		echo "reloaded: rc $rc"
	} >> "$dir/srv-$n.out" 2>&1
	# A listener again (the client's next run), so that the new
	# incarnation answers the old one's packets.
	pp_port=$((pp_port + 1))
	timeout 120 fi_pingpong -p swnic -e rdm -c -I 5 -S 4096 -B $pp_port \
		> "$dir/srv-$n.pp.out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		[ -n "$(ss -Hltn "sport = :$pp_port")" ] && break
		sleep 0.1
	done
	: > "$dir/srv-$n.back"
	echo "$rc" > "$dir/srv-$n.rc"
	wait "$pid"
	echo $? > "$dir/srv-$n.pp.rc"
}

guest_server()
{
	local dir=$1 n=0 rc pid lport

	swnic dev add swnicw netdev "$SWNIC_VM_NETDEV" || exit 1
	guest_ip6 "$ADDR6_SERVER"
	[ -e "$dir/bench" ] && guest_rxe
	: > "$dir/server-ready"
	# One server per client run, in the order the client runs them;
	# and the commands Open MPI's launcher "logs in" to run here.
	while [ ! -e "$dir/client-done" ]; do
		for c in "$dir"/rsh-*.cmd; do
			[ -e "$c" ] || continue
			mv "$c" "${c%.cmd}.run"
			( sh -c "$(cat "${c%.cmd}.run")" > "${c%.cmd}.out" 2>&1
			  echo $? > "${c%.cmd}.rc" ) &
		done
		[ -e "$dir/run-$n" ] || { sleep 0.2; continue; }
		read -r -a args < "$dir/run-$n"
		pp_port=$((pp_port + 1))
		if [ "${args[0]}" = impair ]; then
			# netem on this end too (bench), GSO off for precise loss
			{ ethtool -K "$SWNIC_VM_NETDEV" gso off tso off
			  tc qdisc replace dev "$SWNIC_VM_NETDEV" root netem \
				"${args[@]:1}"; } > "$dir/srv-$n.out" 2>&1
			echo $? > "$dir/srv-$n.rc.tmp"
			: > "$dir/srv-$n.listening"
			mv "$dir/srv-$n.rc.tmp" "$dir/srv-$n.rc"
			n=$((n + 1))
			continue
		fi
		if [ "${args[0]}" = reload ]; then
			guest_reload "$dir" "$n"
			n=$((n + 1))
			continue
		fi
		if [ "${args[0]}" = wire_rma ]; then
			timeout 120 "$REPO/selftests/wire/out/wire_rma" -s \
				> "$dir/srv-$n.out" 2>&1 &
			lport=27990
		elif [ "${args[0]}" = -p ]; then	# bench: any provider
			timeout 150 fi_pingpong "${args[@]}" -B $pp_port \
				> "$dir/srv-$n.out" 2>&1 &
			lport=$pp_port
		else
			timeout 120 fi_pingpong -p swnic "${args[@]}" -B $pp_port \
				> "$dir/srv-$n.out" 2>&1 &
			lport=$pp_port
		fi
		pid=$!
		# The client connects once the server listens.
		for _ in $(seq 600); do
			[ -n "$(ss -Hltn "sport = :$lport")" ] && break
			sleep 0.1
		done
		: > "$dir/srv-$n.listening"
		wait $pid
		rc=$?
		echo "$rc" > "$dir/srv-$n.rc"
		n=$((n + 1))
	done
	exit 0
}

guest_client()
{
	. "$REPO/selftests/lib.sh"
	local dir=$1 n=0 rc srv

	swnic dev add swnicw netdev "$SWNIC_VM_NETDEV" || exit 1
	guest_ip6 "$ADDR6_CLIENT"
	for _ in $(seq 600); do
		[ -e "$dir/server-ready" ] && ping -c 1 -W 1 $ADDR_SERVER \
			>/dev/null 2>&1 && break
		sleep 0.2
	done
	check "the other VM answers over the wire (ping)" \
		ping -c 1 -W 5 $ADDR_SERVER
	check "the other VM answers over the wire on IPv6 (ping)" \
		ping -6 -c 1 -W 5 $ADDR6_SERVER

	# The server runs with the same arguments; -6 first: over IPv6.
	across()
	{
		local desc=$1 addr=$ADDR_SERVER
		shift
		[ "$1" = -6 ] && addr=$ADDR6_SERVER
		echo "$*" > "$dir/run-$n.tmp" && mv "$dir/run-$n.tmp" "$dir/run-$n"
		pp_port=$((pp_port + 1))
		for _ in $(seq 600); do
			[ -e "$dir/srv-$n.listening" ] && break
			sleep 0.2
		done
		if [ "$1" = wire_rma ]; then
			timeout 150 "$REPO/selftests/wire/out/wire_rma" \
				$ADDR_SERVER > /tmp/cli.out 2>&1
		else
			timeout 150 fi_pingpong -p swnic "$@" -P $pp_port \
				"$addr" > /tmp/cli.out 2>&1
		fi
		rc=$?
		for _ in $(seq 600); do
			[ -e "$dir/srv-$n.rc" ] && break
			sleep 0.2
		done
		srv=$(cat "$dir/srv-$n.rc" 2>/dev/null || echo none)
		if [ "$rc" = 0 ] && [ "$srv" = 0 ]; then
			ok "$desc"
		else
			not_ok "$desc" "client exit $rc:" "$(tail -4 /tmp/cli.out)" \
				"server exit $srv:" "$(tail -4 "$dir/srv-$n.out")"
		fi
		n=$((n + 1))
	}
	across "rdm msg 8 B..1 MiB between two VMs, data checked" \
		-e rdm -c -I 5 -S all
	across "rdm tagged 64 KiB between two VMs, data checked" \
		-e rdm -m tagged -c -I 10 -S 65536
	across "msg (connected) 4 KiB between two VMs, data checked" \
		-e msg -c -I 10 -S 4096
	across "dgram 1 KiB between two VMs, data checked" \
		-e dgram -c -I 10 -S 1024
	across "RMA write/read, remote CQ data, key errors between two VMs" \
		wire_rma
	across "rdm msg 8 B..1 MiB between two VMs over IPv6, data checked" \
		-6 -d swnicw6 -e rdm -c -I 5 -S all
	across "msg (connected) 64 KiB between two VMs over IPv6, data checked" \
		-6 -d swnicw6 -e msg -c -I 10 -S 65536
	# ... on the wire's IPv6 socket: the peer context is the address's.
	peers=$(swnic -j peer show 2>&1)
	if printf '%s' "$peers" | jq -e --arg a "[$ADDR6_SERVER]:4793" \
		'[.[] | select(.peer == $a and .tx_bytes > 1048576 and
				.rx_bytes > 1048576)] | length == 1' >/dev/null; then
		ok "the IPv6 runs went over the wire to [$ADDR6_SERVER]:4793"
	else
		not_ok "the IPv6 runs went over the wire to [$ADDR6_SERVER]:4793" \
			"$(printf '%s' "$peers" | jq -c '[.[] | {peer, tx_bytes, rx_bytes}]' 2>&1)"
	fi

	# The server's host restarts mid-transfer: its module is reloaded (a
	# new incarnation). Our stream fails within the bounded time: by the
	# new incarnation's RESET (ECONNRESET) if a retransmission of ours
	# reaches it, else - every packet acknowledged, answers awaited, so
	# nothing goes to the peer - by its silence (ETIMEDOUT, peer_timeout_ms
	# made 10 s here). A request the old incarnation never saw a packet of
	# goes again to the new one after its RESET, which refuses it: nothing
	# listens at that port there (ECONNREFUSED); whichever completes first
	# is the stream's error. Nothing stays in flight, every object is
	# released, and the new incarnation is talked to again.
	peer_tx_bytes()
	{
		swnic -j peer show | jq '[.[].tx_bytes // 0] | add // 0'
	}
	reload_across()
	{
		local old_to t0 crc before after inflight sent sent0 cpid
		local to_param=/sys/module/swnic/parameters/peer_timeout_ms

		before=$(swnic -j stat show | jq -c '.[] | select(.dev == "*") |
			.counters | {domains, endpoints, cqs, mrs}')
		echo reload > "$dir/run-$n.tmp" && mv "$dir/run-$n.tmp" "$dir/run-$n"
		pp_port=$((pp_port + 1))
		for _ in $(seq 600); do
			[ -e "$dir/srv-$n.listening" ] && break
			sleep 0.2
		done
		old_to=$(cat "$to_param")
		sent0=$(peer_tx_bytes)
		echo 10000 > "$to_param"
		"$REPO/tools/testing/fi_stream" -p swnic -e rdm -S 65536 -T 300 \
			-t 120 -P $pp_port $ADDR_SERVER > /tmp/rl.out 2> /tmp/rl.err &
		cpid=$!
		# Wait until the stream flows (a MiB more has gone to the server).
		for _ in $(seq 600); do
			sent=$(($(peer_tx_bytes) - sent0))
			[ "$sent" -gt 1048576 ] && break
			sleep 0.2
		done
		if kill -0 "$cpid" 2>/dev/null && [ "$sent" -gt 1048576 ]; then
			ok "a stream flows to the other VM before its restart"
		else
			not_ok "a stream flows to the other VM before its restart" \
				"$sent bytes sent; client: $(tail -2 /tmp/rl.err)" \
				"server: $(tail -3 "$dir/srv-$n.out")"
		fi
		: > "$dir/srv-$n.go"
		t0=$SECONDS
		wait "$cpid"
		crc=$?
		diag "the stream ended $((SECONDS - t0)) s after the restart began (exit $crc): $(tail -1 /tmp/rl.err)"
		if [ "$crc" = 2 ] && [ $((SECONDS - t0)) -le 60 ] &&
		   grep -Eq "completion error (104|110|111) " /tmp/rl.err; then
			ok "the peer's module reloaded mid-stream: error completion (ECONNRESET, ETIMEDOUT or ECONNREFUSED) within 60 s"
		else
			not_ok "the peer's module reloaded mid-stream: error completion (ECONNRESET, ETIMEDOUT or ECONNREFUSED) within 60 s" \
				"exit $crc after $((SECONDS - t0)) s: $(tail -2 /tmp/rl.err)" \
				"server: $(tail -4 "$dir/srv-$n.out")" \
				"our peers: $(swnic -j peer show | jq -c '.[]')"
		fi
		echo "$old_to" > "$to_param"
		for _ in $(seq 900); do
			[ -e "$dir/srv-$n.back" ] && break
			sleep 0.2
		done
		check "the other VM unloaded and loaded swnic again" \
			test "$(cat "$dir/srv-$n.rc" 2>/dev/null)" = 0
		inflight=$(swnic -j peer show | jq '[.[] | (.msgs // 0) + (.inflight // 0)] | add // 0')
		check "nothing stays in flight to the restarted peer" \
			test "$inflight" = 0
		after=$(swnic -j stat show | jq -c '.[] | select(.dev == "*") |
			.counters | {domains, endpoints, cqs, mrs}')
		check "every object of the failed stream is released" \
			test "$before" = "$after"
		pp_port=$((pp_port + 1))
		if timeout 120 fi_pingpong -p swnic -e rdm -c -I 5 -S 4096 \
			-P $pp_port $ADDR_SERVER > /tmp/cli.out 2>&1; then
			ok "the restarted peer is talked to again (rdm 4 KiB, data checked)"
		else
			not_ok "the restarted peer is talked to again (rdm 4 KiB, data checked)" \
				"$(tail -4 /tmp/cli.out)" \
				"server: $(tail -4 "$dir/srv-$n.pp.out")"
		fi
		for _ in $(seq 600); do
			[ -e "$dir/srv-$n.pp.rc" ] && break
			sleep 0.2
		done
		n=$((n + 1))
	}
	reload_across

	# Open MPI across the two VMs: mpirun here, the other rank's daemon
	# started there through the shared directory (ssh's place).
	printf '#!/bin/sh\nexec %q rsh %q "$@"\n' "$REPO/tools/testing/two-vm.sh" \
		"$dir" > "$dir/rsh-agent"
	chmod +x "$dir/rsh-agent"
	if OMPI_MCA_btl=self timeout 300 mpirun --allow-run-as-root \
		--bind-to none --host 10.99.0.2:1,$ADDR_SERVER:1 -np 2 \
		--mca plm_rsh_agent "$dir/rsh-agent" \
		--mca oob_tcp_if_include 10.99.0.0/24 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include swnic \
		-x FI_PROVIDER_PATH -x PATH \
		"$REPO/selftests/mpi/out/mpi_basic" > /tmp/mpi.out 2>&1; then
		ok "mpirun -np 2 across two VMs over swnic exits 0"
	else
		not_ok "mpirun -np 2 across two VMs over swnic exits 0" \
			"$(tail -8 /tmp/mpi.out)"
	fi
	check "send/recv 1 MiB across two VMs, checked" \
		grep -qx "ok send/recv 1048576 bytes" /tmp/mpi.out
	check "allreduce over 2 ranks on 2 VMs" \
		grep -qx "ok allreduce 3 over 2 ranks" /tmp/mpi.out
	: > "$dir/client-done"
	tap_done
}

# The client's side of --bench: fi_pingpong runs through the server VM's
# loop (run-N files), parsed as bench.sh does.
guest_bench()
{
	local dir=$1 n=0 prov ep out r h
	local peers=("swnic:rdm" "tcp;ofi_rxm:rdm" "verbs;ofi_rxm:rdm")
	local sizes=(8 64 4096 65536 1048576)
	declare -A lat bw

	swnic dev add swnicw netdev "$SWNIC_VM_NETDEV" || exit 1
	guest_rxe
	for _ in $(seq 600); do
		[ -e "$dir/server-ready" ] && ping -c 1 -W 1 $ADDR_SERVER \
			>/dev/null 2>&1 && break
		sleep 0.2
	done
	# run ARGS...: one request to the server's loop; waits for its end.
	run()
	{
		echo "$*" > "$dir/run-$n.tmp" && mv "$dir/run-$n.tmp" "$dir/run-$n"
		pp_port=$((pp_port + 1))
		for _ in $(seq 600); do
			[ -e "$dir/srv-$n.listening" ] && break
			sleep 0.2
		done
	}
	reap()
	{
		for _ in $(seq 800); do
			[ -e "$dir/srv-$n.rc" ] && break
			sleep 0.2
		done
		n=$((n + 1))
	}
	# one PROV EP SIZE ITERS: $r = "usec MBps" (or "- -"). Not in a
	# subshell: n and pp_port must move on here.
	one()
	{
		run -p "$1" -e "$2" -S "$3" -I "$4"
		out=$(timeout 120 fi_pingpong -p "$1" -e "$2" -S "$3" -I "$4" \
			-P $pp_port $ADDR_SERVER 2>/dev/null)
		reap
		# fi_pingpong names the size 8, 4k, 64k, 1m
		if [ $(($3 % 1048576)) = 0 ]; then h=$(($3 / 1048576))m
		elif [ $(($3 % 1024)) = 0 ]; then h=$(($3 / 1024))k
		else h=$3
		fi
		r=$(echo "$out" | awk -v s="$h" \
			'$1 == s && NF >= 8 { print $7, $6; f = 1 }
			END { if (!f) print "- -" }')
	}
	iters() { case $1 in 8|64) echo 200 ;; 4096) echo 100 ;;
		  65536) echo 20 ;; *) echo 5 ;; esac; }
	# row LOSS PEER SIZE ITERS: one run more of a figure, in lats[] and
	# bws[] (space-separated, "-" for none). A peer that gave nothing
	# under loss (rxe stalls there) is not tried there again.
	row()
	{
		prov=${2%:*} ep=${2##*:}
		if [[ " ${nores[*]} " = *" $1,$prov,$3 "* ]]; then
			r="- -"
		else
			one "$prov" "$ep" "$3" "$4"
			[ "$1" != 0 ] && [ "$r" = "- -" ] && nores+=("$1,$prov,$3")
		fi
		lats[$1,$prov,$3]+="${r% *} " bws[$1,$prov,$3]+="${r#* } "
		echo "# twovm run $k loss $1 $prov ($ep) $3 x$4: usec ${r% *} MB/s ${r#* }"
	}
	median() { tr ' ' '\n' | grep -v '^-\?$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
	# Runs interleaved, so that a slow spell of the build machine falls
	# on every peer alike; then each figure's median.
	local runs=${SWNIC_TWOVM_RUNS:-3} k nores=()
	declare -A lats bws
	for k in $(seq "$runs"); do
		for p in "${peers[@]}"; do
			for s in "${sizes[@]}"; do
				row 0 "$p" "$s" "$(iters "$s")"
			done
		done
	done
	run impair loss 1%
	reap
	ethtool -K "$SWNIC_VM_NETDEV" gso off tso off >/dev/null 2>&1
	tc qdisc replace dev "$SWNIC_VM_NETDEV" root netem loss 1%
	for k in $(seq "$runs"); do
		for p in "${peers[@]}"; do
			row 1 "$p" 1048576 5
		done
	done
	: > "$dir/twovm.tsv"
	for key in "${!lats[@]}"; do
		IFS=, read -r l prov s <<< "$key"
		lat[$key]=$(echo "${lats[$key]}" | median)
		bw[$key]=$(echo "${bws[$key]}" | median)
		for p in "${peers[@]}"; do
			[ "${p%:*}" = "$prov" ] && ep=${p##*:}
		done
		printf 'twovm\t1500\t%s\t%s\t%s\t%s\t%s\t%s\t-\t%s\t%s\n' \
			"$l" "$prov" "$ep" "$s" "${lat[$key]}" "${bw[$key]}" \
			"$(echo ${lats[$key]} | tr ' ' ,)" \
			"$(echo ${bws[$key]} | tr ' ' ,)" >> "$dir/twovm.tsv"
	done
	ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
	{
		echo "## Two VMs (1 vCPU each, virtio-net over the build machine's loopback, MTU 1500)"
		echo
		echo "fi_pingpong one-way latency (usec) and bandwidth (MB/s), medians of $runs runs; verbs;ofi_rxm runs on rdma_rxe (soft-RoCE) on the same NIC."
		echo
		echo "| size | swnic us | swnic MB/s | tcp;ofi_rxm us | tcp;ofi_rxm MB/s | rxe us | rxe MB/s | lat/tcp | lat/rxe | bw/tcp | bw/rxe |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
		for s in "${sizes[@]}"; do
			echo "| $s | ${lat[0,swnic,$s]} | ${bw[0,swnic,$s]} | ${lat[0,tcp;ofi_rxm,$s]} | ${bw[0,tcp;ofi_rxm,$s]} | ${lat[0,verbs;ofi_rxm,$s]} | ${bw[0,verbs;ofi_rxm,$s]} | $(ratio "${lat[0,swnic,$s]}" "${lat[0,tcp;ofi_rxm,$s]}") | $(ratio "${lat[0,swnic,$s]}" "${lat[0,verbs;ofi_rxm,$s]}") | $(ratio "${bw[0,swnic,$s]}" "${bw[0,tcp;ofi_rxm,$s]}") | $(ratio "${bw[0,swnic,$s]}" "${bw[0,verbs;ofi_rxm,$s]}") |"
		done
		echo
		echo "At 1 % netem loss on both NICs (GSO off), 1 MiB: swnic ${bw[1,swnic,1048576]} MB/s, tcp;ofi_rxm ${bw[1,tcp;ofi_rxm,1048576]}, rxe ${bw[1,verbs;ofi_rxm,1048576]} (\"-\": no result within the time bound); swnic/rxe $(ratio "${bw[1,swnic,1048576]}" "${bw[1,verbs;ofi_rxm,1048576]}")."
		echo
		echo "Targets (issue 14): latency <= 0.4x rxe, 1 MiB >= 2.5x rxe, >= 10x rxe at 1 % loss."
		echo
	} > "$dir/twovm.md"
	cat "$dir/twovm.md"
	: > "$dir/client-done"
	exit 0
}

# rsh DIR HOST CMD...: the launcher agent (in the client VM): the words of
# CMD, joined as ssh does, run by the server VM's loop; waits for them.
guest_rsh()
{
	local dir=$1 id

	shift 2
	id=rsh-$$-$RANDOM
	echo "$*" > "$dir/$id.tmp" && mv "$dir/$id.tmp" "$dir/$id.cmd"
	while [ ! -e "$dir/$id.rc" ]; do
		sleep 0.2
	done
	cat "$dir/$id.out"
	exit "$(cat "$dir/$id.rc")"
}

if [ "${1:-}" = rsh ]; then
	shift
	guest_rsh "$@"
fi
if [ "${1:-}" = guest ]; then
	cd "$REPO" || exit 1
	guest_link_nurse "${3:-/tmp}" "${2:-}" $$ > /dev/null 2>&1 &
	# qemu's virtio-net TX queue stalls now and then (the kernel's TX
	# watchdog fires every 5 s, the link is dead for good): tell the
	# build machine, which runs the pair again. The file is empty if not.
	# shellcheck disable=SC2064  # $2 and $3 now, on purpose
	trap "dmesg | grep -m 1 'NETDEV WATCHDOG' > '${3:-/tmp}/stalled-${2:-}'" EXIT
	case ${2:-} in
	server) guest_server "$3" ;;
	client) guest_client "$3" ;;
	bench) guest_bench "$3" ;;
	esac
	echo "two-vm.sh: guest server|client DIR" >&2
	exit 2
fi

# ---- on the build machine -----------------------------------------------------

tag=6.1
timeout=900
bench=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) tag=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--bench) bench=$2; shift 2 ;;
	*) echo "usage: $0 [--kernel TAG] [--timeout SECS] [--bench DIR]" >&2
	   exit 2 ;;
	esac
done

mkdir -p "$REPO/build"
dirs=()
trap 'rm -rf "${dirs[@]}"' EXIT
vm=("$REPO/tools/testing/vm.sh" --kernel "$tag" --smp 1 --mem 2048
    --timeout "$timeout")

# run_pair: both VMs once, sharing a new directory $dir; the client VM's
# output (TAP) in $dir/out; its exit status, or 1 if the server VM failed.
run_pair()
{
	local role=client vm1 rc

	dir=$(mktemp -d "$REPO/build/two-vm.XXXXXX")
	dirs+=("$dir")
	if [ -n "$bench" ]; then
		role=bench
		: > "$dir/bench"	# before the server VM looks
	fi
	"${vm[@]}" --share "$dir" --net "$PORT_A:$PORT_B:1" -- \
		"$REPO/tools/testing/two-vm.sh" guest server "$dir" \
		> "$dir/vm1.log" 2>&1 &
	vm1=$!
	"${vm[@]}" --share "$dir" --net "$PORT_B:$PORT_A:2" -- \
		"$REPO/tools/testing/two-vm.sh" guest $role "$dir" \
		> "$dir/out" 2>&1
	rc=$?
	: > "$dir/client-done"
	if ! wait "$vm1"; then
		{
			echo "not ok - the server VM failed:"
			sed 's/^/# /' "$dir/vm1.log" | tail -30
		} >> "$dir/out"
		[ "$rc" = 0 ] && rc=1
	fi
	return "$rc"
}

# A run whose link stalled in qemu (a VM's kernel logged NETDEV WATCHDOG:
# its virtio-net TX queue never drained again) tested nothing of swnic:
# its output is shown as comments and the pair runs once more. Any other
# failure counts, and so does a second stall.
for try in 1 2; do
	run_pair
	rc=$?
	if [ "$rc" != 0 ] && [ "$try" = 1 ] &&
	   stalled=$(cat "$dir"/stalled-* 2>/dev/null) && [ -n "$stalled" ]; then
		echo "# two-vm.sh: the link between the VMs stalled in qemu (${stalled//$'\n'/; }); run 1's output:"
		cat "$dir"/bounced-* 2>/dev/null | sed 's/^/#   /'
		sed 's/^/#   /' "$dir/out"
		echo "# two-vm.sh: both VMs again"
		continue
	fi
	cat "$dir/out"
	break
done
for f in "$dir"/bounced-*; do
	[ -s "$f" ] && sed "s/^/# two-vm.sh: ${f##*bounced-} VM: /" "$f"
done
if [ -n "$bench" ]; then
	mkdir -p "$bench"
	cat "$dir/twovm.md" >> "$bench/bench.md" 2>/dev/null
	# Alone (not after bench.sh), the TSV starts with bench.sh's header.
	[ -s "$bench/bench.tsv" ] ||
		printf 'section\tmtu\tloss\tprovider\tendpoint\tsize\tlat_us\tbw_MBps\tkept\tlat_runs\tbw_runs\n' \
			> "$bench/bench.tsv"
	cat "$dir/twovm.tsv" >> "$bench/bench.tsv" 2>/dev/null
	[ -s "$dir/twovm.tsv" ] || rc=1
fi
exit "$rc"
