#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - run inside the VM (make bench): Debian's fi_pingpong over swnic
# beside its peers, in the same boot, medians of RUNS runs of one-way
# latency (usec/xfer) and bandwidth (MB/s) per size. Three sections:
#
#   host  one host: swnic, shm and tcp (rdm endpoints) over 127.0.0.1, plus
#         memcpy bandwidth as the ceiling of a one-copy transport; swnic's
#         ratios to shm and to memcpy.
#   wire  two hosts: two network namespaces joined by a veth pair, a swnic
#         device bound to each end, fi_pingpong's server in one and client
#         in the other; swnic (rdm) beside tcp;ofi_rxm (rdm) and tcp (msg),
#         at each MTU in MTUS (set on both ends); swnic's ratios to each.
#   stream the same two hosts, tools/testing/fi_stream instead of
#         fi_pingpong: streaming bandwidth (MB/s) with WINDOW messages in
#         flight, the receiver's acknowledgement of the last one ending the
#         clock; the same peers, at each MTU in MTUS; swnic's ratios to each.
#   loss  the same pair at MTU 1500, GSO/TSO off (netem drops a GSO
#         super-packet whole), netem loss on both ends: 1 MiB goodput of
#         swnic and tcp;ofi_rxm at each loss rate, and what it keeps of the
#         lossless goodput measured the same way.
#   reg   registration cost on one host: fi_mr_reg + fi_close on swnic
#         (remote access, so every pair pins in the kernel; and a hit of
#         the provider's registration cache) beside ibv_reg_mr +
#         ibv_dereg_mr on soft-RoCE (rdma_rxe's rxe0 over a veth end), in
#         usec per pair (tools/testing/reg_bench, median of REG_ITERS), per
#         size in REG_SIZES, the three taking turns run by run; swnic's
#         speed-up over rxe.
#   soak  the same pair at MTU 1500, GSO/TSO off, 1 % netem loss on both
#         ends: tools/testing/fi_soak for SOAK_SECS (30 minutes) - random
#         sends, tagged sends, injects, RMA writes read back and fetching
#         atomics of random sizes, WINDOW 8 in flight, every byte and
#         result checked, every wait bounded (a hang fails it) - then every
#         peer's messages and packets in flight and the module's objects
#         must be back to zero. Its table row says what ran and whether
#         all held; with SWNIC_BENCH_OUT also soak.json.
#   mpi   Open MPI as users run it, 2 ranks: Debian's NetPIPE (NPopenmpi,
#         package netpipe-openmpi: ping-pong latency and bandwidth) and
#         selftests/mpi/mpi_bench (ping-pong latency, windowed bandwidth,
#         allreduce), each over the OFI MTL with swnic (--mca pml cm --mca
#         mtl ofi, FI_PROVIDER=swnic) beside the same runs over tcp: the
#         OFI MTL with tcp;ofi_rxm and Open MPI's own TCP BTL (ob1-tcp).
#         On one host, then across the wire's two namespaces (veth at
#         MPI_MTU), mpirun in the first starting the other rank through
#         selftests/wire/netns-rsh as it would through ssh.
#
# Each section's table is printed as it ends. With SWNIC_BENCH_OUT=DIR (a
# directory shared with the host: vm.sh --share DIR) it also writes there
# bench.md (the tables in Markdown), bench.json (every figure, with each
# run's) and bench.tsv (one line per figure; tools/testing/bench-plot.sh
# draws the SVG plots from it on the host).
#
# Environment (SWNIC_BENCH_* reach the guest through vm.sh; the short
# names are read too when the script is run by hand):
#   SWNIC_BENCH_RUNS (RUNS)            runs per figure (3)
#   SWNIC_BENCH_SECTIONS               "host reg wire stream loss soak mpi"
#   SWNIC_BENCH_SIZES (SIZES)          host sizes
#                                      ("8 64 4096 65536 1048576 16777216")
#   SWNIC_BENCH_PROVIDERS (PROVIDERS)  host providers ("swnic shm tcp")
#   SWNIC_BENCH_WIRE_SIZES             "8 64 4096 65536 1048576 16777216"
#   SWNIC_BENCH_WIRE_PEERS             PROVIDER:EP list
#                                      ("swnic:rdm tcp;ofi_rxm:rdm tcp:msg")
#   SWNIC_BENCH_MTUS                   "1500 9000"
#   SWNIC_BENCH_STREAM_SIZES           "65536 1048576 16777216"
#   SWNIC_BENCH_STREAM_WINDOW          messages in flight (16)
#   SWNIC_BENCH_STREAM_SECS            seconds of every stream run (5; with
#                                      SWNIC_BENCH_ITERS: that many messages)
#   SWNIC_BENCH_LOSSES                 netem loss in % ("0.1 1 5")
#   SWNIC_BENCH_LOSS_PEERS             "swnic:rdm tcp;ofi_rxm:rdm"
#   SWNIC_BENCH_REG_SIZES              "4096 1048576 67108864"
#   SWNIC_BENCH_REG_ITERS              pairs per figure (200)
#   SWNIC_BENCH_SOAK_SECS              seconds of the soak (1800)
#   SWNIC_BENCH_SOAK_SEED              its random seed (the date's seconds)
#   SWNIC_BENCH_MPI_PEERS              "swnic tcp;ofi_rxm ob1-tcp"
#   SWNIC_BENCH_MPI_SIZES              "8 64 4096 65536 1048576"
#   SWNIC_BENCH_MPI_MTU                MTU of the mpi section's wire (9000)
#   SWNIC_BENCH_MPI_RUNS               mpirun runs per figure (1: each
#                                      run already averages many iterations)
#   SWNIC_BENCH_ITERS                  iterations of every run (default:
#                                      by size, bounded for the slow guest)
#   SWNIC_BENCH_OUT                    results directory (none)

set -u

RUNS=${SWNIC_BENCH_RUNS:-${RUNS:-3}}
SECTIONS=${SWNIC_BENCH_SECTIONS:-"host reg wire stream loss soak mpi"}
SIZES=${SWNIC_BENCH_SIZES:-${SIZES:-"8 64 4096 65536 1048576 16777216"}}
PROVIDERS=${SWNIC_BENCH_PROVIDERS:-${PROVIDERS:-"swnic shm tcp"}}
WIRE_SIZES=${SWNIC_BENCH_WIRE_SIZES:-"8 64 4096 65536 1048576 16777216"}
WIRE_PEERS=${SWNIC_BENCH_WIRE_PEERS:-"swnic:rdm tcp;ofi_rxm:rdm tcp:msg"}
MTUS=${SWNIC_BENCH_MTUS:-"1500 9000"}
LOSSES=${SWNIC_BENCH_LOSSES:-"0.1 1 5"}
LOSS_PEERS=${SWNIC_BENCH_LOSS_PEERS:-"swnic:rdm tcp;ofi_rxm:rdm"}
LOSS_SIZE=1048576
SOAK_SECS=${SWNIC_BENCH_SOAK_SECS:-1800}
SOAK_SEED=${SWNIC_BENCH_SOAK_SEED:-$(date +%s)}
MPI_PEERS=${SWNIC_BENCH_MPI_PEERS:-"swnic tcp;ofi_rxm ob1-tcp"}
MPI_SIZES=${SWNIC_BENCH_MPI_SIZES:-"8 64 4096 65536 1048576"}
MPI_MTU=${SWNIC_BENCH_MPI_MTU:-9000}
MPI_RUNS=${SWNIC_BENCH_MPI_RUNS:-1}
ITERS=${SWNIC_BENCH_ITERS:-}
OUT=${SWNIC_BENCH_OUT:-}

port=27600
# The client's CPU: the one after the server's, if the VM has two.
client_cpu=$(( $(nproc) > 1 ? 1 : 0 ))

# The two "hosts" of the wire and loss sections.
NS_A=swnicba NS_B=swnicbb
VETH_A=swba VETH_B=swbb
ADDR_A=10.78.0.1 ADDR_B=10.78.0.2

if [ -n "$OUT" ]; then
	mkdir -p "$OUT" || exit 1
	md=$OUT/bench.md tsv=$OUT/bench.tsv json=$OUT/bench.json
	rm -f "$md" "$json" "$OUT"/bench-*.svg "$OUT/soak.json"
else
	md=/dev/null tsv=/tmp/bench.tsv json=
fi
printf 'section\tmtu\tloss\tprovider\tendpoint\tsize\tlat_us\tbw_MBps\tkept\tlat_runs\tbw_runs\n' > "$tsv"

# Iterations per size: enough to measure, bounded in the slow guest (over
# the wire 1 MiB goes at tens of MB/s there).
iters()
{
	local section=$1 size=$2

	if [ -n "$ITERS" ]; then echo "$ITERS"; return; fi
	case $section in
	host)
		if [ "$size" -le 4096 ]; then echo 2000
		elif [ "$size" -le 65536 ]; then echo 500
		else echo 100
		fi ;;
	*)
		if [ "$size" -le 4096 ]; then echo 500
		elif [ "$size" -le 65536 ]; then echo 100
		elif [ "$size" -le 1048576 ]; then echo 20
		else echo 3
		fi ;;
	esac
}

# A size as fi_pingpong names it.
human()
{
	if [ $(($1 % 1048576)) = 0 ]; then echo "$(($1 / 1048576))m"
	elif [ $(($1 % 1024)) = 0 ]; then echo "$(($1 / 1024))k"
	else echo "$1"
	fi
}

# Wait (up to 30 s) until a server listens on control port $2 in network
# namespace $1 ("" for this one).
wait_listen()
{
	local ns=()

	[ -n "$1" ] && ns=(ip netns exec "$1")
	for _ in $(seq 300); do
		[ -n "$("${ns[@]}" ss -Hltn "sport = :$2")" ] && return 0
		sleep 0.1
	done
	return 1
}

# run_one SERVER-NS CLIENT-NS SERVER-ADDR PROVIDER EP SIZE ITERS: one run,
# prints "usec MBps", or "- -" if it failed. Empty namespaces: this one.
run_one()
{
	local sns=() cns=() addr=$3 prov=$4 ep=$5 size=$6 n=$7 out srv
	[ -n "$1" ] && sns=(ip netns exec "$1")
	[ -n "$2" ] && cns=(ip netns exec "$2")
	port=$((port + 1))
	# Server and client on CPUs of their own: two busy-polling processes
	# sharing one CPU measure the scheduler, not the transport.
	"${sns[@]}" timeout 180 taskset -c 0 fi_pingpong -p "$prov" -e "$ep" \
		-S "$size" -I "$n" -B "$port" >/dev/null 2>&1 &
	srv=$!
	wait_listen "$1" "$port"
	out=$("${cns[@]}" timeout 180 taskset -c "$client_cpu" fi_pingpong \
		-p "$prov" -e "$ep" -S "$size" -I "$n" -P "$port" "$addr" \
		2>/dev/null)
	# A server whose client failed would wait for it until its timeout.
	for _ in $(seq 50); do
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.1
	done
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	# bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec, with the
	# size as fi_pingpong prints it: 8, 4k, 64k, 1m.
	echo "$out" | awk -v s="$(human "$size")" \
		'$1 == s && NF >= 8 { print $7, $6; f = 1 }
		END { if (!f) print "- -" }'
}

median()
{
	tr ' ' '\n' | grep -v '^-$' | grep -v '^$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'
}

percent()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a == "-" || b == "-" || b == 0) print "-"; else printf "%.0f", 100 * a / b }'
}

# measure SECTION MTU LOSS SERVER-NS CLIENT-NS ADDR PROVIDER EP SIZE: RUNS
# runs; the medians go to lat[] and bw[] under "SECTION,MTU,LOSS,PROVIDER,
# SIZE" and a line to the TSV. With KEPT_OF set to such a key, its kept
# column is the bandwidth in % of that key's.
declare -A lat bw
KEPT_OF=
measure()
{
	local key="$1,$2,$3,$7,$9" n ls="" bs="" r kept=-

	n=$(iters "$1" "$9")
	for _ in $(seq "$RUNS"); do
		r=$(run_one "$4" "$5" "$6" "$7" "$8" "$9" "$n")
		ls="$ls ${r% *}" bs="$bs ${r#* }"
	done
	lat[$key]=$(echo "$ls" | median)
	bw[$key]=$(echo "$bs" | median)
	echo "# $1 mtu $2 loss $3 $7 ($8) $9 x$n: usec$ls  MB/s$bs" >&2
	[ -n "$KEPT_OF" ] && kept=$(percent "${bw[$key]}" "${bw[$KEPT_OF]:--}")
	ls=${ls# } bs=${bs# }
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" \
		"$7" "$8" "$9" "${lat[$key]}" "${bw[$key]}" "$kept" \
		"${ls// /,}" "${bs// /,}" >> "$tsv"
}

# table TITLE NOTE...: the tab-separated rows on stdin (the first one the
# header), printed with aligned columns and appended to bench.md; each NOTE
# a line under the table.
table()
{
	local title=$1 rows
	shift
	rows=$(cat)
	printf '\n%s\n\n' "$title"
	echo "$rows" | awk -F'\t' '
		{ for (i = 1; i <= NF; i++) { c[NR, i] = $i
			if (length($i) > w[i]) w[i] = length($i) }
		  if (NF > nf) nf = NF }
		END { for (r = 1; r <= NR; r++) {
			line = sprintf("%-" w[1] "s", c[r, 1])
			for (i = 2; i <= nf; i++)
				line = line sprintf("  %" w[i] "s", c[r, i])
			print line } }'
	[ $# -gt 0 ] && { echo; printf '%s\n' "$@"; }
	{
		printf '\n### %s\n\n' "$title"
		echo "$rows" | awk -F'\t' '
			{ line = "|"; for (i = 1; i <= NF; i++) line = line " " $i " |"
			  print line }
			NR == 1 { line = "|---"; for (i = 2; i <= NF; i++) line = line "|---:"
				  print line "|" }'
		[ $# -gt 0 ] && { echo; printf '%s  \n' "$@"; }
	} >> "$md"
}

# ---- host: one host, over 127.0.0.1 ---------------------------------------

# The ceiling: memcpy in the guest, of 64 KiB, 1 MiB and 16 MiB, each
# sampled before, between and after the providers' runs (the guest's
# speed drifts with the build machine's load), median of those; the
# fastest of the three is the ceiling. (Under TCG glibc's memcpy varies
# by size more than on a real CPU: it picks rep movsb, which TCG runs
# slowly, for some sizes and vector or streaming moves for others.)
MEMCPY_SIZES="65536 1048576 16777216"
declare -A mcs
memcpy_sample()
{
	local size v

	for size in $MEMCPY_SIZES; do
		v=$("$SWNIC_REPO/tools/testing/memcpy_bw" "$size") || v=
		[ -n "$v" ] && mcs[$size]="${mcs[$size]:-} $v"
	done
	return 0
}

section_host()
{
	local prov size hdr row mc ceiling=-
	declare -A memcpy

	memcpy_sample
	for prov in $PROVIDERS; do
		for size in $SIZES; do
			measure host - 0 "" "" 127.0.0.1 "$prov" rdm "$size"
		done
		memcpy_sample
	done
	for size in $MEMCPY_SIZES; do
		memcpy[$size]=-
		[ -n "${mcs[$size]:-}" ] &&
			memcpy[$size]=$(echo "${mcs[$size]}" | median)
		echo "# host memcpy $size: MB/s${mcs[$size]:-}" >&2
		[ "${memcpy[$size]}" != - ] &&
			{ [ "$ceiling" = - ] ||
			  awk -v a="${memcpy[$size]}" -v b="$ceiling" 'BEGIN { exit !(a > b) }'; } &&
			ceiling=${memcpy[$size]}
		mc=${mcs[$size]:-}; mc=${mc# }
		printf 'host\t-\t0\tmemcpy\t-\t%s\t-\t%s\t-\t-\t%s\n' \
			"$size" "${memcpy[$size]}" "${mc// /,}" >> "$tsv"
	done

	hdr=size
	for prov in $PROVIDERS; do hdr="$hdr	$prov-us	$prov-MB/s"; done
	hdr="$hdr	lat/shm	bw/shm	bw/memcpy"
	{
		echo "$hdr"
		for size in $SIZES; do
			row=$size
			for prov in $PROVIDERS; do
				row="$row	${lat[host,-,0,$prov,$size]}	${bw[host,-,0,$prov,$size]}"
			done
			row="$row	$(ratio "${lat[host,-,0,swnic,$size]:--}" "${lat[host,-,0,shm,$size]:--}")"
			row="$row	$(ratio "${bw[host,-,0,swnic,$size]:--}" "${bw[host,-,0,shm,$size]:--}")"
			row="$row	$(ratio "${bw[host,-,0,swnic,$size]:--}" "$ceiling")"
			echo "$row"
		done
	} | table "One host: fi_pingpong -e rdm over 127.0.0.1, one-way latency (usec) and bandwidth (MB/s), median of $RUNS runs" \
		"memcpy in the guest (median of $(echo ${mcs[1048576]:-} | wc -w) samples, before, between and after the providers): 64 KiB ${memcpy[65536]}, 1 MiB ${memcpy[1048576]}, 16 MiB ${memcpy[16777216]} MB/s; bw/memcpy is against the fastest, $ceiling MB/s" \
		"targets (issue 17): 8 B, 64 B and 4 KiB lat/shm <= 0.80; 1 MiB and 16 MiB bw/memcpy >= 0.80"
}

# ---- reg: registration cost, swnic beside rdma_rxe --------------------------

REG_SIZES=${SWNIC_BENCH_REG_SIZES:-"4096 1048576 67108864"}
REG_ITERS=${SWNIC_BENCH_REG_ITERS:-200}
RXE_VETH=swrxa

rxe_down()
{
	rdma link delete rxe0 >/dev/null 2>&1
	ip link del "$RXE_VETH" >/dev/null 2>&1
}

# rxe0 over one end of a veth pair (rxe needs an Ethernet netdev).
rxe_up()
{
	rxe_down
	modprobe rdma_rxe 2>/dev/null &&
		ip link add "$RXE_VETH" type veth peer name "${RXE_VETH%a}b" &&
		ip link set "$RXE_VETH" up && ip link set "${RXE_VETH%a}b" up &&
		rdma link add rxe0 type rxe netdev "$RXE_VETH"
}

# reg_run MODE SIZE: one run of reg_bench, its figure appended to
# regruns[PROV,SIZE] ("-" if it failed, with its message on stderr).
declare -A reg regruns
reg_prov()
{
	local prov=${1%%:*}

	[ "$prov" = verbs ] && prov=rxe
	echo "$prov"
}

reg_run()
{
	local mode=$1 size=$2 prov r

	prov=$(reg_prov "$mode")
	r=$("$SWNIC_REPO/tools/testing/reg_bench" "$mode" "$size" \
		"$REG_ITERS" 2>/tmp/bench-reg.err) || {
		r=-
		sed "s/^/# reg $prov $size: /" /tmp/bench-reg.err >&2
	}
	regruns[$prov,$size]="${regruns[$prov,$size]:-} $r"
}

# reg_done PROV SIZE: the median of its runs to reg[] and a line to the TSV
# (lat_us: usec per register + deregister pair).
reg_done()
{
	local prov=$1 size=$2 rs

	rs=${regruns[$prov,$size]:-}
	reg[$prov,$size]=$(echo "$rs" | median)
	echo "# reg $prov $size x$REG_ITERS: usec$rs" >&2
	rs=${rs# }
	printf 'reg\t-\t0\t%s\t-\t%s\t%s\t-\t-\t%s\t-\n' "$prov" "$size" \
		"${reg[$prov,$size]}" "${rs// /,}" >> "$tsv"
}

section_reg()
{
	local size mode modes rxe=1

	if [ ! -x "$SWNIC_REPO/tools/testing/reg_bench" ]; then
		echo "bench: no tools/testing/reg_bench (libibverbs-dev): reg skipped" >&2
		return
	fi
	rxe_up || { echo "bench: no rdma_rxe device: rxe column empty" >&2; rxe=0; }
	regruns=()
	# Runs interleaved, so that a slow spell of the machine does not
	# fall on one side of a ratio only.
	modes="swnic swnic-hit"
	[ $rxe = 1 ] && modes="$modes verbs:rxe0"
	for size in $REG_SIZES; do
		for _ in $(seq "$RUNS"); do
			for mode in $modes; do
				reg_run "$mode" "$size"
			done
		done
		for mode in $modes; do
			reg_done "$(reg_prov "$mode")" "$size"
		done
		[ $rxe = 1 ] || reg[rxe,$size]=-
	done
	rxe_down
	{
		printf 'size\tswnic-us\tswnic-hit-us\trxe-us\trxe/swnic\trxe/swnic-hit\n'
		for size in $REG_SIZES; do
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "${reg[swnic,$size]}" \
				"${reg[swnic-hit,$size]}" "${reg[rxe,$size]}" \
				"$(ratio "${reg[rxe,$size]}" "${reg[swnic,$size]}")" \
				"$(ratio "${reg[rxe,$size]}" "${reg[swnic-hit,$size]}")"
		done
	} | table "One host: registration, usec per register + deregister pair (median of $REG_ITERS pairs; median of $RUNS runs)" \
		"swnic: fi_mr_reg + fi_close, remote access (pinned in the kernel every time); swnic-hit: local access, served by the registration cache; rxe: ibv_reg_mr + ibv_dereg_mr on rdma_rxe" \
		"targets (issue 17): rxe/swnic >= 2 at every size; swnic-hit <= 1 usec"
}

# ---- wire: two namespaces joined by veth -----------------------------------

wire_down()
{
	ip netns exec "$NS_A" swnic dev del "$NS_A" force >/dev/null 2>&1
	ip netns exec "$NS_B" swnic dev del "$NS_B" force >/dev/null 2>&1
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	# A device whose namespace went first is back in init_net.
	swnic dev del "$NS_A" force >/dev/null 2>&1
	swnic dev del "$NS_B" force >/dev/null 2>&1
}

# wire_up MTU: the two namespaces, a veth pair between them at MTU, a swnic
# device bound to each end.
wire_up()
{
	local A=(ip netns exec "$NS_A") B=(ip netns exec "$NS_B")

	wire_down
	if ! { ip netns add "$NS_A" && ip netns add "$NS_B" &&
	       ip link add "$VETH_A" type veth peer name "$VETH_B" &&
	       ip link set "$VETH_A" netns "$NS_A" &&
	       ip link set "$VETH_B" netns "$NS_B" &&
	       "${A[@]}" ip link set "$VETH_A" mtu "$1" &&
	       "${B[@]}" ip link set "$VETH_B" mtu "$1" &&
	       "${A[@]}" ip addr add "$ADDR_A/24" dev "$VETH_A" &&
	       "${B[@]}" ip addr add "$ADDR_B/24" dev "$VETH_B" &&
	       "${A[@]}" ip link set lo up && "${B[@]}" ip link set lo up &&
	       "${A[@]}" ip link set "$VETH_A" up && "${B[@]}" ip link set "$VETH_B" up &&
	       "${A[@]}" swnic dev add "$NS_A" netdev "$VETH_A" &&
	       "${B[@]}" swnic dev add "$NS_B" netdev "$VETH_B" &&
	       "${B[@]}" ping -c 1 -W 5 "$ADDR_A" >/dev/null; }; then
		echo "bench: cannot set up the namespaces at MTU $1" >&2
		wire_down
		return 1
	fi
}

section_wire()
{
	local mtu peer prov ep size hdr row provs="" p

	for peer in $WIRE_PEERS; do provs="$provs ${peer%:*}"; done
	for mtu in $MTUS; do
		wire_up "$mtu" || continue
		for peer in $WIRE_PEERS; do
			prov=${peer%:*} ep=${peer##*:}
			for size in $WIRE_SIZES; do
				measure wire "$mtu" 0 "$NS_A" "$NS_B" "$ADDR_A" \
					"$prov" "$ep" "$size"
			done
		done
		wire_down

		hdr=size
		for p in $provs; do hdr="$hdr	$p-us	$p-MB/s"; done
		for p in $provs; do
			[ "$p" = swnic ] || hdr="$hdr	lat/$p	bw/$p"
		done
		{
			echo "$hdr"
			for size in $WIRE_SIZES; do
				row=$size
				for p in $provs; do
					row="$row	${lat[wire,$mtu,0,$p,$size]}	${bw[wire,$mtu,0,$p,$size]}"
				done
				for p in $provs; do
					[ "$p" = swnic ] && continue
					row="$row	$(ratio "${lat[wire,$mtu,0,swnic,$size]:--}" "${lat[wire,$mtu,0,$p,$size]:--}")"
					row="$row	$(ratio "${bw[wire,$mtu,0,swnic,$size]:--}" "${bw[wire,$mtu,0,$p,$size]:--}")"
				done
				echo "$row"
			done
		} | table "Two hosts (namespaces over veth, MTU $mtu): fi_pingpong, one-way latency (usec) and bandwidth (MB/s), median of $RUNS runs" \
			"endpoints: $WIRE_PEERS; lat/P and bw/P are swnic's over P's" \
			"targets (issue 14): 8 B and 64 B lat/tcp;ofi_rxm <= 0.6; 1 MiB bw/tcp;ofi_rxm >= 1.5 at MTU 1500, bw/tcp >= 2 at 9000"
	done
}

# ---- stream: fi_stream across the same wire ---------------------------------

STREAM_SIZES=${SWNIC_BENCH_STREAM_SIZES:-"65536 1048576 16777216"}
STREAM_WINDOW=${SWNIC_BENCH_STREAM_WINDOW:-16}
STREAM_SECS=${SWNIC_BENCH_STREAM_SECS:-5}

# stream_one SERVER-NS CLIENT-NS SERVER-ADDR PROVIDER EP SIZE: one run of
# fi_stream, prints its MB/s, or "-" if it failed (the reason on stderr).
stream_one()
{
	local sns=(ip netns exec "$1") cns=(ip netns exec "$2") addr=$3
	local prov=$4 ep=$5 size=$6 len out srv

	if [ -n "$ITERS" ]; then len=(-I "$ITERS"); else len=(-T "$STREAM_SECS"); fi
	port=$((port + 1))
	"${sns[@]}" timeout 180 taskset -c 0 "$SWNIC_REPO/tools/testing/fi_stream" \
		-p "$prov" -e "$ep" -B "$port" >/dev/null 2>/tmp/bench-stream.srv &
	srv=$!
	wait_listen "$1" "$port"
	out=$("${cns[@]}" timeout 180 taskset -c "$client_cpu" \
		"$SWNIC_REPO/tools/testing/fi_stream" -p "$prov" -e "$ep" \
		-S "$size" -W "$STREAM_WINDOW" "${len[@]}" -P "$port" "$addr" \
		2>/tmp/bench-stream.cli)
	# fi_stream's own timeouts (60 s without progress) end a failed pair.
	wait "$srv"
	# stream size=S window=W msgs=N bytes=B secs=T MBps=X ...
	echo "$out" | awk '$1 == "stream" {
			for (i = 2; i <= NF; i++) if ($i ~ /^MBps=/) { print substr($i, 6); f = 1 } }
		END { if (!f) print "-" }'
	[ -n "$out" ] || sed "s/^/# stream $prov ($ep) $size: /" \
		/tmp/bench-stream.cli /tmp/bench-stream.srv >&2
}

section_stream()
{
	local mtu peer prov ep size hdr row provs="" p key bs r n

	for peer in $WIRE_PEERS; do provs="$provs ${peer%:*}"; done
	n=${ITERS:+"x$ITERS"}
	for mtu in $MTUS; do
		wire_up "$mtu" || continue
		for peer in $WIRE_PEERS; do
			prov=${peer%:*} ep=${peer##*:}
			for size in $STREAM_SIZES; do
				key="stream,$mtu,0,$prov,$size" bs=""
				for _ in $(seq "$RUNS"); do
					r=$(stream_one "$NS_A" "$NS_B" "$ADDR_A" \
						"$prov" "$ep" "$size")
					bs="$bs $r"
				done
				bw[$key]=$(echo "$bs" | median)
				echo "# stream mtu $mtu $prov ($ep) $size window $STREAM_WINDOW ${n:-${STREAM_SECS}s}: MB/s$bs" >&2
				bs=${bs# }
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
					stream "$mtu" 0 "$prov" "$ep" "$size" - \
					"${bw[$key]}" - - "${bs// /,}" >> "$tsv"
			done
		done
		wire_down

		hdr=size
		for p in $provs; do hdr="$hdr	$p-MB/s"; done
		for p in $provs; do [ "$p" = swnic ] || hdr="$hdr	bw/$p"; done
		{
			echo "$hdr"
			for size in $STREAM_SIZES; do
				row=$size
				for p in $provs; do
					row="$row	${bw[stream,$mtu,0,$p,$size]:--}"
				done
				for p in $provs; do
					[ "$p" = swnic ] && continue
					row="$row	$(ratio "${bw[stream,$mtu,0,swnic,$size]:--}" "${bw[stream,$mtu,0,$p,$size]:--}")"
				done
				echo "$row"
			done
		} | table "Two hosts (namespaces over veth, MTU $mtu): fi_stream, bandwidth (MB/s) with $STREAM_WINDOW messages in flight, median of $RUNS runs" \
			"each run ${n:-${STREAM_SECS} s} of sends, timed to the receiver's acknowledgement of the last; endpoints: $WIRE_PEERS; bw/P is swnic's over P's" \
			"targets (issue 14, for bandwidth): 1 MiB bw/tcp;ofi_rxm >= 1.5 at MTU 1500, bw/tcp >= 2 at 9000"
	done
}

# ---- loss: the same wire under netem loss ----------------------------------

section_loss()
{
	local A=(ip netns exec "$NS_A") B=(ip netns exec "$NS_B")
	local loss peer prov ep hdr row provs="" p

	for peer in $LOSS_PEERS; do provs="$provs ${peer%:*}"; done
	wire_up 1500 || return
	"${A[@]}" ethtool -K "$VETH_A" gso off tso off >/dev/null 2>&1
	"${B[@]}" ethtool -K "$VETH_B" gso off tso off >/dev/null 2>&1
	for loss in 0 $LOSSES; do
		if ! "${A[@]}" tc qdisc replace dev "$VETH_A" root netem loss "$loss%" ||
		   ! "${B[@]}" tc qdisc replace dev "$VETH_B" root netem loss "$loss%"; then
			echo "bench: netem loss $loss% failed" >&2
			continue
		fi
		for peer in $LOSS_PEERS; do
			prov=${peer%:*} ep=${peer##*:}
			KEPT_OF="loss,1500,0,$prov,$LOSS_SIZE" \
				measure loss 1500 "$loss" "$NS_A" "$NS_B" \
				"$ADDR_A" "$prov" "$ep" "$LOSS_SIZE"
		done
	done
	wire_down

	hdr=loss%
	for p in $provs; do hdr="$hdr	$p-MB/s	$p-kept%"; done
	for p in $provs; do [ "$p" = swnic ] || hdr="$hdr	bw/$p"; done
	{
		echo "$hdr"
		for loss in 0 $LOSSES; do
			row=$loss
			for p in $provs; do
				row="$row	${bw[loss,1500,$loss,$p,$LOSS_SIZE]:--}	$(percent "${bw[loss,1500,$loss,$p,$LOSS_SIZE]:--}" "${bw[loss,1500,0,$p,$LOSS_SIZE]:--}")"
			done
			for p in $provs; do
				[ "$p" = swnic ] && continue
				row="$row	$(ratio "${bw[loss,1500,$loss,swnic,$LOSS_SIZE]:--}" "${bw[loss,1500,$loss,$p,$LOSS_SIZE]:--}")"
			done
			echo "$row"
		done
	} | table "Two hosts under netem loss (MTU 1500, GSO/TSO off, both ends): fi_pingpong 1 MiB bandwidth (MB/s), median of $RUNS runs" \
		"kept%: of the goodput at loss 0 measured the same way; endpoints: $LOSS_PEERS" \
		"targets (issue 14): kept >= 90 / 70 / 40 % at 0.1 / 1 / 5 % loss, bw/tcp;ofi_rxm > 1 at each"
}

# ---- soak: random operations for half an hour at 1 % loss -----------------

# The module's objects (domains, endpoints, MRs, pinned bytes... in use).
objects()
{
	swnic -j stat show | jq -c '.[] | select(.dev == "*") | .counters'
}

# Messages and packets in flight to every peer of namespace $1, summed.
peers_busy()
{
	ip netns exec "$1" swnic -j peer show 2>/dev/null |
		jq '[.[] | (.msgs // 0) + (.inflight // 0)] | add // 0'
}

section_soak()
{
	local A=(ip netns exec "$NS_A") B=(ip netns exec "$NS_B")
	local soak=$SWNIC_REPO/tools/testing/fi_soak before srv srv_rc
	local cli_rc busy=- zero=no result t0 secs retx

	before=$(objects)
	wire_up 1500 || return
	"${A[@]}" ethtool -K "$VETH_A" gso off tso off >/dev/null 2>&1
	"${B[@]}" ethtool -K "$VETH_B" gso off tso off >/dev/null 2>&1
	"${A[@]}" tc qdisc replace dev "$VETH_A" root netem loss 1%
	"${B[@]}" tc qdisc replace dev "$VETH_B" root netem loss 1%
	port=$((port + 1))
	"${A[@]}" taskset -c 0 "$soak" -p swnic -B "$port" -t 60 \
		> /tmp/soak.srv 2>&1 &
	srv=$!
	wait_listen "$NS_A" "$port"
	t0=$SECONDS
	"${B[@]}" timeout $((SOAK_SECS + 600)) taskset -c "$client_cpu" \
		"$soak" -p swnic -W 8 -S 1m -T "$SOAK_SECS" -s "$SOAK_SEED" \
		-t 60 -P "$port" "$ADDR_A" > /tmp/soak.cli 2>&1
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
	cat /tmp/soak.cli /tmp/soak.srv >&2
	retx=$("${B[@]}" swnic -j peer show 2>/dev/null | jq '[.[].retx // 0] | add // 0')
	# Acknowledgements still travel a moment after the last completion.
	for _ in $(seq 100); do
		busy=$(( $(peers_busy "$NS_A") + $(peers_busy "$NS_B") ))
		[ "$busy" = 0 ] && break
		sleep 0.1
	done
	wire_down
	for _ in $(seq 100); do
		[ "$(objects)" = "$before" ] && { zero=yes; break; }
		sleep 0.1
	done
	result=$(awk '/^soak / { sub(/^soak /, ""); print }' /tmp/soak.cli)
	secs=$((SECONDS - t0))
	{
		printf 'secs\tseed\tclient\tserver\tin flight after\tobjects back\tretransmits\tresult\n'
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$secs" \
			"$SOAK_SEED" "exit $cli_rc" "exit $srv_rc" "$busy" \
			"$zero" "${retx:--}" "${result:-$(tail -n 1 /tmp/soak.cli)}"
	} | table "Soak: fi_soak across two hosts (veth, MTU 1500, GSO off), 1 % netem loss on both ends, $SOAK_SECS s" \
		"random sends, tagged sends, injects, RMA writes read back and fetching atomics up to 1 MiB, 8 in flight, every byte and result checked" \
		"target (issue 14): both exit 0 (no hang, no error), nothing in flight and every object released afterwards"
	[ -n "$OUT" ] && jq -n --argjson secs "$secs" \
		--argjson seed "$SOAK_SEED" --argjson cli "$cli_rc" \
		--argjson srv "$srv_rc" --arg busy "$busy" --arg zero "$zero" \
		--arg retx "${retx:-}" --arg client "$(cat /tmp/soak.cli)" \
		--arg server "$(cat /tmp/soak.srv)" \
		'{ secs: $secs, seed: $seed, client_exit: $cli, server_exit: $srv,
		   in_flight_after: ($busy | tonumber? // null),
		   objects_released: ($zero == "yes"),
		   retransmits: ($retx | tonumber? // null),
		   ok: ($cli == 0 and $srv == 0 and $busy == "0" and $zero == "yes"),
		   client: $client, server: $server }' > "$OUT/soak.json"
}

# ---- mpi: Open MPI, NetPIPE and mpi_bench ----------------------------------

# mpirun PLACE PEER OUT PROGRAM ARGS...: one 2-rank job, its output in OUT.
# PLACE host: both ranks here; wire: one in each namespace (mpirun in A).
mpi_run()
{
	local place=$1 peer=$2 out=$3 ns=() args=()
	shift 3

	args=(--allow-run-as-root -np 2)
	case $peer in
	swnic)
		args+=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include swnic
		       -x FI_PROVIDER=swnic) ;;
	"tcp;ofi_rxm")
		args+=(--mca pml cm --mca mtl ofi
		       --mca mtl_ofi_provider_include "tcp;ofi_rxm") ;;
	ob1-tcp)
		args+=(--mca pml ob1 --mca btl "self,tcp") ;;
	*) echo "bench: no MPI peer '$peer'" >&2; return 1 ;;
	esac
	if [ "$place" = host ]; then
		# One host: swnic's FI_REMOTE_COMM is opt-in (the OFI MTL
		# asks for it), Open MPI's TCP uses lo. Ranks on CPUs of their
		# own, as fi_pingpong's.
		args+=(--bind-to core --map-by core -x FI_SWNIC_REMOTE_COMM=1)
		[ "$peer" = ob1-tcp ] && args+=(--mca btl_tcp_if_include lo)
	else
		ns=(ip netns exec "$NS_A")
		args+=(--bind-to none --host "$ADDR_A:1,$ADDR_B:1"
		       --mca plm_rsh_agent "$SWNIC_REPO/selftests/wire/netns-rsh"
		       --mca oob_tcp_if_include 10.78.0.0/24
		       -x PATH -x FI_PROVIDER_PATH)
		[ "$peer" = ob1-tcp ] && args+=(--mca btl_tcp_if_include 10.78.0.0/24)
	fi
	[ "$peer" = ob1-tcp ] || args+=(--mca btl self)
	"${ns[@]}" timeout 900 mpirun "${args[@]}" "$@" > "$out" 2>&1
}

# mpi_measure PLACE MTU PEER: NetPIPE and mpi_bench, MPI_RUNS runs each;
# the medians go to lat[]/bw[] under "mpi-PLACE,MTU,0,PEER/PROGRAM,SIZE"
# and lines to the TSV (provider PEER, endpoint the program).
mpi_measure()
{
	local place=$1 mtu=$2 peer=$3 sec=mpi-$1 out=/tmp/bench-mpi.out r size
	local -A mlat mbw

	for r in $(seq "$MPI_RUNS"); do
		if mpi_run "$place" "$peer" "$out" NPopenmpi -l 8 \
			-u "$(echo "$MPI_SIZES" | tr ' ' '\n' | sort -n | tail -1)" \
			-p 0 -n "${SWNIC_BENCH_NP_REPEAT:-20}" -o /tmp/bench-np.out; then
			# NetPIPE's file: bytes, Mbit/s, one-way seconds.
			while read -r size mbps secs; do
				mlat[NPmpi,$size]="${mlat[NPmpi,$size]:-} $(awk -v s="$secs" 'BEGIN { printf "%.2f", s * 1e6 }')"
				mbw[NPmpi,$size]="${mbw[NPmpi,$size]:-} $(awk -v m="$mbps" 'BEGIN { printf "%.2f", m / 8 }')"
			done < /tmp/bench-np.out
		else
			echo "bench: NPopenmpi over $peer ($place) failed: $(tail -3 "$out" | tr '\n' ' ')" >&2
		fi
		if mpi_run "$place" "$peer" "$out" "$SWNIC_REPO/selftests/mpi/out/mpi_bench" \
			-s "$(echo "$MPI_SIZES" | tr ' ' ,)"; then
			while read -r what size us mbs; do
				case $what in
				pingpong) mlat[mpi_bench,$size]="${mlat[mpi_bench,$size]:-} $us" ;;
				bw) mbw[mpi_bench,$size]="${mbw[mpi_bench,$size]:-} $mbs" ;;
				allreduce) mlat[allreduce,$size]="${mlat[allreduce,$size]:-} $us" ;;
				esac
			done < "$out"
		else
			echo "bench: mpi_bench over $peer ($place) failed: $(tail -3 "$out" | tr '\n' ' ')" >&2
		fi
	done
	local prog key ls bs
	for prog in NPmpi mpi_bench allreduce; do
		for size in $MPI_SIZES; do
			key="$sec,$mtu,0,$peer/$prog,$size"
			ls=${mlat[$prog,$size]:-} bs=${mbw[$prog,$size]:-}
			lat[$key]=$(echo "$ls" | median)
			bw[$key]=$(echo "$bs" | median)
			[ "$prog" = allreduce ] && bw[$key]=-
			echo "# $sec mtu $mtu $peer $prog $size: usec$ls  MB/s$bs" >&2
			ls=${ls# } bs=${bs# }
			printf '%s\t%s\t0\t%s\t%s\t%s\t%s\t%s\t-\t%s\t%s\n' "$sec" "$mtu" \
				"$peer" "$prog" "$size" "${lat[$key]}" "${bw[$key]}" \
				"${ls// /,}" "${bs// /,}" >> "$tsv"
		done
	done
}

section_mpi()
{
	local place mtu peer size hdr row p title where

	if [ ! -x "$SWNIC_REPO/selftests/mpi/out/mpi_bench" ] ||
	   ! command -v NPopenmpi >/dev/null || ! command -v mpirun >/dev/null; then
		echo "bench: mpi: needs mpirun, NPopenmpi (netpipe-openmpi) and mpi_bench" >&2
		return 0
	fi
	for place in host wire; do
		mtu=-
		if [ "$place" = wire ]; then
			mtu=$MPI_MTU
			wire_up "$mtu" || continue
		fi
		for peer in $MPI_PEERS; do
			mpi_measure "$place" "$mtu" "$peer"
		done
		[ "$place" = wire ] && wire_down

		where="one host"
		[ "$place" = wire ] && where="two hosts (namespaces over veth, MTU $mtu)"
		k() { echo "mpi-$place,$mtu,0,$1/$2,$3"; }
		hdr=size
		for p in $MPI_PEERS; do hdr="$hdr	$p-us	$p-MB/s"; done
		for p in $MPI_PEERS; do [ "$p" = swnic ] || hdr="$hdr	lat/$p	bw/$p"; done
		{
			echo "$hdr"
			for size in $MPI_SIZES; do
				row=$size
				for p in $MPI_PEERS; do
					row="$row	${lat[$(k "$p" NPmpi "$size")]:--}	${bw[$(k "$p" NPmpi "$size")]:--}"
				done
				for p in $MPI_PEERS; do
					[ "$p" = swnic ] && continue
					row="$row	$(ratio "${lat[$(k swnic NPmpi "$size")]:--}" "${lat[$(k "$p" NPmpi "$size")]:--}")"
					row="$row	$(ratio "${bw[$(k swnic NPmpi "$size")]:--}" "${bw[$(k "$p" NPmpi "$size")]:--}")"
				done
				echo "$row"
			done
		} | table "Open MPI, $where: NetPIPE (NPopenmpi), one-way latency (usec) and bandwidth (MB/s)" \
			"swnic: --mca pml cm --mca mtl ofi, FI_PROVIDER=swnic; tcp;ofi_rxm: the same MTL over libfabric's tcp; ob1-tcp: Open MPI's TCP BTL" \
			"lat/P and bw/P are swnic's over P's; median of $MPI_RUNS run(s), NetPIPE's repeat count ${SWNIC_BENCH_NP_REPEAT:-20}"
		hdr=size
		for p in $MPI_PEERS; do hdr="$hdr	$p-pp-us	$p-bw-MB/s	$p-allreduce-us"; done
		{
			echo "$hdr"
			for size in $MPI_SIZES; do
				row=$size
				for p in $MPI_PEERS; do
					row="$row	${lat[$(k "$p" mpi_bench "$size")]:--}	${bw[$(k "$p" mpi_bench "$size")]:--}	${lat[$(k "$p" allreduce "$size")]:--}"
				done
				echo "$row"
			done
		} | table "Open MPI, $where: mpi_bench, ping-pong one-way latency (usec), windowed bandwidth (MB/s, 16 in flight) and allreduce time (usec, 2 ranks)" \
			"median of $MPI_RUNS run(s); each run averages its iterations (selftests/mpi/mpi_bench.c)"
	done
}

# ---- JSON ------------------------------------------------------------------

write_json()
{
	[ -n "$json" ] || return 0
	jq -R -s --arg kernel "$(uname -r)" --argjson runs "$RUNS" \
	   --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --argjson cpus "$(nproc)" '
		def num: if . == "-" or . == "" then null else tonumber end;
		def list: if . == "-" or . == "" then [] else split(",") | map(num) end;
		split("\n") | map(select(length > 0) | split("\t")) | .[1:] |
		{ kernel: $kernel, date: $date, cpus: $cpus, runs: $runs,
		  tool: "fi_pingpong", units: { lat: "usec one-way", bw: "MB/s" },
		  results: map({ section: .[0], mtu: (.[1] | num),
				 loss_pct: (.[2] | num), provider: .[3],
				 endpoint: (if .[4] == "-" then null else .[4] end),
				 size: (.[5] | num), lat_us: (.[6] | num),
				 bw_MBps: (.[7] | num), kept_pct: (.[8] | num),
				 lat_runs: (.[9] | list), bw_runs: (.[10] | list) }) }' \
		"$tsv" > "$json.tmp" && mv "$json.tmp" "$json"
}

trap 'wire_down; exit 130' INT TERM
{
	# TCG runs rep movsb ~10x slower than user copies (vm.sh, SWNIC_VM_CPU)
	printf '# swnic bench\n\nkernel %s, %s CPUs (kernel copies with %s), fi_pingpong, median of %s runs, %s\n' \
		"$(uname -r)" "$(nproc)" \
		"$(grep -qw erms /proc/cpuinfo && echo 'rep movsb: ERMS' ||
		   echo 'moves: no ERMS')" \
		"$RUNS" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >> "$md"
for s in $SECTIONS; do
	case $s in
	host) section_host ;;
	reg) section_reg ;;
	wire) section_wire ;;
	stream) section_stream ;;
	loss) section_loss ;;
	soak) section_soak ;;
	mpi) section_mpi ;;
	*) echo "bench: no section '$s' (host, reg, wire, stream, loss, soak, mpi)" >&2; exit 2 ;;
	esac
	write_json
done
[ -n "$OUT" ] && printf '\nwritten: %s %s %s\n' "$md" "$json" "$tsv"
exit 0
