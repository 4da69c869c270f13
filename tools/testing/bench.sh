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
#   SWNIC_BENCH_SECTIONS               "host wire stream loss"
#   SWNIC_BENCH_SIZES (SIZES)          host sizes ("8 4096 65536 1048576")
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
#   SWNIC_BENCH_ITERS                  iterations of every run (default:
#                                      by size, bounded for the slow guest)
#   SWNIC_BENCH_OUT                    results directory (none)

set -u

RUNS=${SWNIC_BENCH_RUNS:-${RUNS:-3}}
SECTIONS=${SWNIC_BENCH_SECTIONS:-"host wire stream loss"}
SIZES=${SWNIC_BENCH_SIZES:-${SIZES:-"8 4096 65536 1048576"}}
PROVIDERS=${SWNIC_BENCH_PROVIDERS:-${PROVIDERS:-"swnic shm tcp"}}
WIRE_SIZES=${SWNIC_BENCH_WIRE_SIZES:-"8 64 4096 65536 1048576 16777216"}
WIRE_PEERS=${SWNIC_BENCH_WIRE_PEERS:-"swnic:rdm tcp;ofi_rxm:rdm tcp:msg"}
MTUS=${SWNIC_BENCH_MTUS:-"1500 9000"}
LOSSES=${SWNIC_BENCH_LOSSES:-"0.1 1 5"}
LOSS_PEERS=${SWNIC_BENCH_LOSS_PEERS:-"swnic:rdm tcp;ofi_rxm:rdm"}
LOSS_SIZE=1048576
ITERS=${SWNIC_BENCH_ITERS:-}
OUT=${SWNIC_BENCH_OUT:-}

port=47600
# The client's CPU: the one after the server's, if the VM has two.
client_cpu=$(( $(nproc) > 1 ? 1 : 0 ))

# The two "hosts" of the wire and loss sections.
NS_A=swnicba NS_B=swnicbb
VETH_A=swba VETH_B=swbb
ADDR_A=10.78.0.1 ADDR_B=10.78.0.2

if [ -n "$OUT" ]; then
	mkdir -p "$OUT" || exit 1
	md=$OUT/bench.md tsv=$OUT/bench.tsv json=$OUT/bench.json
	rm -f "$md" "$json" "$OUT"/bench-*.svg
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
		if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'
}

percent()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.0f", 100 * a / b }'
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

section_host()
{
	local prov size memcpy hdr row

	for prov in $PROVIDERS; do
		for size in $SIZES; do
			measure host - 0 "" "" 127.0.0.1 "$prov" rdm "$size"
		done
	done
	memcpy=$("$SWNIC_REPO/tools/testing/memcpy_bw" 1048576)
	printf 'host\t-\t0\tmemcpy\t-\t1048576\t-\t%s\t-\t-\t%s\n' \
		"$memcpy" "$memcpy" >> "$tsv"

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
			row="$row	$(ratio "${bw[host,-,0,swnic,$size]:--}" "$memcpy")"
			echo "$row"
		done
	} | table "One host: fi_pingpong -e rdm over 127.0.0.1, one-way latency (usec) and bandwidth (MB/s), median of $RUNS runs" \
		"memcpy 1 MiB in the guest: $memcpy MB/s" \
		"targets: 8 B latency lat/shm <= 1.00; 1 MiB bandwidth bw/shm >= 1.00 and bw/memcpy >= 0.80"
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
	printf '# swnic bench\n\nkernel %s, %s CPUs, fi_pingpong, median of %s runs, %s\n' \
		"$(uname -r)" "$(nproc)" "$RUNS" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >> "$md"
for s in $SECTIONS; do
	case $s in
	host) section_host ;;
	wire) section_wire ;;
	stream) section_stream ;;
	loss) section_loss ;;
	*) echo "bench: no section '$s' (host, wire, stream, loss)" >&2; exit 2 ;;
	esac
	write_json
done
[ -n "$OUT" ] && printf '\nwritten: %s %s %s\n' "$md" "$json" "$tsv"
exit 0
