#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-plot.sh - draw the plots of a bench run on the host (make bench runs
# it after the VM): reads DIR/bench.tsv, written by bench.sh in the guest,
# and writes with gnuplot, swnic beside every peer:
#
#   DIR/bench-host.svg  one host: latency vs size and bandwidth vs size
#                       (memcpy bandwidth as the ceiling)
#   DIR/bench-wire.svg  two hosts over veth: the same, each peer at each MTU
#                       (solid 1500, dashed 9000)
#   DIR/bench-stream.svg  two hosts, fi_stream: streaming bandwidth vs size,
#                       each peer at each MTU (solid 1500, dashed 9000)
#   DIR/bench-loss.svg  two hosts under netem loss: 1 MiB goodput kept in %
#                       of lossless, with issue 14's targets
#   DIR/bench-mpi-host.svg, DIR/bench-mpi-wire.svg  Open MPI on one host and
#                       across two: NetPIPE (solid), mpi_bench ping-pong and
#                       windowed bandwidth (dashed), allreduce (dotted), swnic
#                       beside tcp (OFI MTL over tcp;ofi_rxm, ob1's TCP BTL)
#   DIR/summary.md      a short summary to paste: swnic's small-message
#                       latency and large-message bandwidth beside every peer,
#                       per section; registration cost beside rdma_rxe's
#                       (also printed)
#   DIR/bench-twovm.svg two VMs (two-vm.sh --bench): swnic, tcp;ofi_rxm and
#                       verbs;ofi_rxm on soft-RoCE
#
# A plot whose section did not run is not drawn. The plots drawn are linked
# at the end of DIR/bench.md (once).
#
# Usage: tools/testing/bench-plot.sh DIR

set -eu

[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
tsv=$dir/bench.tsv
[ -s "$tsv" ] || { echo "bench-plot: no $tsv (run make bench)" >&2; exit 1; }
command -v gnuplot >/dev/null ||
	{ echo "bench-plot: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gnuplot's quoting: single quotes, each ' doubled.
q() { printf "'%s'" "${1//\'/\'\'}"; }

# Colours: swnic always the same, each peer its own.
colour()
{
	case $1 in
	swnic) echo "#d62728" ;;
	shm) echo "#1f77b4" ;;
	tcp) echo "#2ca02c" ;;
	"tcp;ofi_rxm") echo "#ff7f0e" ;;
	ob1-tcp) echo "#8c564b" ;;
	"verbs;ofi_rxm") echo "#e377c2" ;;
	memcpy) echo "#000000" ;;
	*) echo "#9467bd" ;;
	esac
}

# A size as a tic label: 8, 64, 4K, 1M.
label()
{
	if [ $(($1 % 1048576)) = 0 ]; then echo "$(($1 / 1048576))M"
	elif [ $(($1 % 1024)) = 0 ]; then echo "$(($1 / 1024))K"
	else echo "$1"
	fi
}

# One data file per series of SECTION: "size lat bw" lines, by size, and an
# index line "file provider endpoint mtu" each. Columns of the TSV: section
# mtu loss provider endpoint size lat_us bw_MBps kept lat_runs bw_runs.
series()
{
	awk -F'\t' -v s="$1" -v d="$tmp" '
		NR > 1 && $1 == s && $3 == 0 && $4 != "memcpy" {
			k = $4 "\t" $5 "\t" $2
			if (!(k in f)) { f[k] = d "/" s "-" ++n ".dat"; o[n] = k }
			print $6, $7, $8 > f[k]
		}
		END { for (i = 1; i <= n; i++) print f[o[i]] "\t" o[i] }' "$tsv" |
		while IFS=$'\t' read -r file prov ep mtu; do
			sort -n -o "$file" "$file"
			printf '%s\t%s\t%s\t%s\n' "$file" "$prov" "$ep" "$mtu"
		done
}

# xtics for the sizes of SECTION.
xtics()
{
	local s tics=""

	while read -r s; do
		tics="$tics${tics:+, }\"$(label "$s")\" $s"
	done < <(awk -F'\t' -v s="$1" \
		 'NR > 1 && $1 == s && $4 != "memcpy" { print $6 }' "$tsv" | sort -nu)
	echo "($tics)"
}

header()
{
	cat <<-EOF
	set terminal svg size 1200,480 dynamic noenhanced font "sans,12" background "white"
	set output $(q "$1")
	set datafile missing "-"
	set grid
	set key top left
	set logscale x 2
	set logscale y
	set xlabel "message size (bytes)"
	set xtics $2
	set offsets graph 0.05, graph 0.05, 0, 0
	set multiplot layout 1,2 title $(q "$3")
	EOF
}

# size_plots SECTION TITLE BW-KEY EXTRA-BW-PLOT: the latency and bandwidth
# panels (BW-KEY: where the bandwidth panel's key goes).
size_plots()
{
	local sec=$1 title=$2 bwkey=$3 extra=$4 idx lat="" bw="" file prov ep mtu name dt
	local out=$dir/bench-$sec.svg

	idx=$(series "$sec")
	[ -n "$idx" ] || return 0
	while IFS=$'\t' read -r file prov ep mtu; do
		name="$prov ($ep)"
		dt=1
		if [ "$mtu" != - ]; then
			name="$name MTU $mtu"
			[ "$mtu" -gt 1500 ] && dt=2
		fi
		# MPI: the dash tells the program apart.
		case $sec:$ep in
		mpi-*:NPmpi) dt=1 ;;
		mpi-*:mpi_bench) dt=2 ;;
		mpi-*:allreduce) dt=3 ;;
		esac
		lat="$lat${lat:+, }$(q "$file") using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb \"$(colour "$prov")\" dt $dt title $(q "$name")"
		# allreduce has no bandwidth.
		[ "$ep" = allreduce ] && continue
		bw="$bw${bw:+, }$(q "$file") using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb \"$(colour "$prov")\" dt $dt title $(q "$name")"
	done <<< "$idx"
	{
		header "$out" "$(xtics "$sec")" "$title"
		echo 'set ylabel "one-way latency (usec)"'
		echo "plot $lat"
		echo 'set ylabel "bandwidth (MB/s)"'
		echo "set key $bwkey"
		echo "plot $bw$extra"
		echo 'unset multiplot'
	} > "$tmp/$sec.gp"
	gnuplot "$tmp/$sec.gp"
	echo "$out"
}

meta=$(awk -F'\t' 'NR > 1 { n++ } END { print n + 0 }' "$tsv")
[ "$meta" -gt 0 ] || { echo "bench-plot: $tsv has no figures" >&2; exit 1; }

memcpy=$(awk -F'\t' 'NR > 1 && $4 == "memcpy" && $6 == 1048576 && $8 != "-" { print $8 }' "$tsv")
extra=
[ -n "$memcpy" ] &&
	extra=", $memcpy with lines lw 1 lc rgb \"#000000\" dt 3 title 'memcpy 1 MiB (ceiling)'"
size_plots host "swnic bench, one host (fi_pingpong over 127.0.0.1, medians)" "bottom right" "$extra"
size_plots wire "swnic bench, two hosts (namespaces over veth, fi_pingpong, medians)" "top left" ""
size_plots mpi-host "swnic bench, Open MPI on one host (NetPIPE solid, mpi_bench dashed, allreduce dotted)" "top left" ""
size_plots mpi-wire "swnic bench, Open MPI across two hosts (namespaces over veth; NetPIPE solid, mpi_bench dashed, allreduce dotted)" "top left" ""

# Stream: bandwidth vs size only (fi_stream measures no latency).
stream_idx=$(series stream)
if [ -n "$stream_idx" ]; then
	out=$dir/bench-stream.svg
	plots=
	while IFS=$'\t' read -r file prov ep mtu; do
		dt=1
		[ "$mtu" -gt 1500 ] && dt=2
		plots="$plots${plots:+, }$(q "$file") using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb \"$(colour "$prov")\" dt $dt title $(q "$prov ($ep) MTU $mtu")"
	done <<< "$stream_idx"
	cat > "$tmp/stream.gp" <<-EOF
	set terminal svg size 800,480 dynamic noenhanced font "sans,12" background "white"
	set output $(q "$out")
	set datafile missing "-"
	set grid
	set key top left
	set title "swnic bench, two hosts (namespaces over veth): fi_stream, many messages in flight, medians"
	set logscale x 2
	set logscale y
	set xlabel "message size (bytes)"
	set ylabel "bandwidth (MB/s)"
	set xtics $(xtics stream)
	set offsets graph 0.05, graph 0.05, 0, 0
	plot $plots
	EOF
	gnuplot "$tmp/stream.gp"
	echo "$out"
fi

size_plots twovm "swnic bench, two VMs (virtio-net over loopback, fi_pingpong; verbs on soft-RoCE)" "top left" ""

# Loss: kept % of lossless per loss rate, one line per provider.
loss_idx=$(awk -F'\t' -v d="$tmp" '
	NR > 1 && $1 == "loss" {
		k = $4 "\t" $5
		if (!(k in f)) { f[k] = d "/loss-" ++n ".dat"; o[n] = k }
		print $3, ($9 == "" ? "-" : $9), $8 > f[k]
	}
	END { for (i = 1; i <= n; i++) print f[o[i]] "\t" o[i] }' "$tsv")
if [ -n "$loss_idx" ]; then
	out=$dir/bench-loss.svg
	printf '0 100\n0.1 90\n1 70\n5 40\n' > "$tmp/target.dat"
	plots="$(q "$tmp/target.dat") using 1:2 with points pt 6 ps 1.5 lc rgb \"#000000\" title 'target (issue 14)'"
	while IFS=$'\t' read -r file prov ep; do
		plots="$plots, $(q "$file") using 1:2 with linespoints lw 2 pt 7 lc rgb \"$(colour "$prov")\" title $(q "$prov ($ep)")"
	done <<< "$loss_idx"
	cat > "$tmp/loss.gp" <<-EOF
	set terminal svg size 800,480 dynamic noenhanced font "sans,12" background "white"
	set output $(q "$out")
	set datafile missing "-"
	set grid
	set key bottom left
	set title "swnic bench, two hosts under netem loss (MTU 1500, GSO off): 1 MiB goodput kept"
	set xlabel "netem loss on both ends (%)"
	set ylabel "goodput, % of lossless"
	set logscale x
	set xrange [0.05:8]
	set yrange [0:*]
	set xtics ("0.1" 0.1, "1" 1, "5" 5)
	plot $plots
	EOF
	gnuplot "$tmp/loss.gp"
	echo "$out"
fi

# The summary: per section (and MTU, and MPI program), swnic's latency at
# the smallest size and bandwidth at the largest beside every peer's, with
# swnic's ratio; under loss, the goodput kept.
summary=$dir/summary.md
{
	printf '## swnic bench: summary\n\n'
	grep -m1 '^kernel ' "$dir/bench.md" 2>/dev/null | sed 's/$/\n/'
	awk -F'\t' '
	function title(sec, mtu, ep, loss,  t) {
		t = sec
		if (sec == "host") t = "One host, fi_pingpong (rdm)"
		if (sec == "wire") t = "Two hosts (veth, MTU " mtu "), fi_pingpong"
		if (sec == "twovm") t = "Two VMs (virtio-net, MTU " mtu "), fi_pingpong"
		if (sec == "mpi-host") t = "Open MPI, one host, " ep
		if (sec == "mpi-wire") t = "Open MPI, two hosts (veth, MTU " mtu "), " ep
		return t (loss + 0 != 0 ? ", " loss " % netem loss" : "")
	}
	function num(v) { return v != "-" && v != "" }
	function cmp2(a, b) { return num(a) && num(b) && b > 0 ? sprintf(" [rxe/swnic %.2f]", a / b) : "" }
	function cmp(a, b) { return num(a) && num(b) && b > 0 ? sprintf(" [swnic/peer %.2f]", a / b) : "" }
	NR == 1 || $4 == "memcpy" { next }
	$1 == "reg" {
		if (!($6 in rseen)) { rseen[$6] = 1; rsize[++nr] = $6 }
		reg[$6, $4] = $7
		next
	}
	$1 == "loss" {
		if (!($3 in lseen)) { lseen[$3] = 1; losses[++nl] = $3 }
		kept[$3, $4] = $9; bwl[$3, $4] = $8
		if (!($4 in lp)) { lp[$4] = 1; lprov[++nlp] = $4 }
		next
	}
	{
		# A lossy run (the twovm section has some) is a group of its own.
		g = $1 SUBSEP ($1 ~ /^mpi/ ? $2 SUBSEP $5 : $2) SUBSEP $3
		if (!(g in seen)) { seen[g] = 1; grp[++ng] = g; gsec[g] = $1; gmtu[g] = $2
				    gep[g] = $1 ~ /^mpi/ ? $5 : ""; gloss[g] = $3 }
		if (!((g, $4) in hp)) { hp[g, $4] = 1; prov[g, ++np[g]] = $4 }
		if (!(g in lo) || $6 + 0 < lo[g]) lo[g] = $6 + 0
		if (!(g in hi) || $6 + 0 > hi[g]) hi[g] = $6 + 0
		lat[g, $4, $6 + 0] = $7; bw[g, $4, $6 + 0] = $8
	}
	function size(n) { return n % 1048576 == 0 ? n / 1048576 " MiB" : n % 1024 == 0 ? n / 1024 " KiB" : n " B" }
	END {
		for (i = 1; i <= ng; i++) {
			g = grp[i]
			sw = (g, "swnic") in hp
			l = ""; b = ""
			for (j = 1; j <= np[g]; j++) {
				p = prov[g, j]
				if (p == "swnic") continue
				lv = lat[g, p, lo[g]]; bv = bw[g, p, hi[g]]
				l = l sprintf("%s %s%s; ", p, lv, cmp(lat[g, "swnic", lo[g]], lv))
				b = b sprintf("%s %s%s; ", p, bv, cmp(bw[g, "swnic", hi[g]], bv))
			}
			sub(/; $/, "", l); sub(/; $/, "", b)
			line = "- **" title(gsec[g], gmtu[g], gep[g], gloss[g]) "**: "
			# Under loss only the goodput.
			if (gloss[g] + 0 == 0 && num(lat[g, "swnic", lo[g]]))
				line = line size(lo[g]) " latency swnic " lat[g, "swnic", lo[g]] " usec" (l != "" ? " (" l ")" : "") "; "
			if (num(bw[g, "swnic", hi[g]]))
				line = line size(hi[g]) " bandwidth swnic " bw[g, "swnic", hi[g]] " MB/s" (b != "" ? " (" b ")" : "")
			sub(/; $/, "", line)
			if (sw) print line
		}
		if (nr) {
			line = "- **Registration, usec per register + deregister (rxe/swnic)**: "
			for (i = 1; i <= nr; i++) {
				s = rsize[i]
				line = line size(s) " swnic " reg[s, "swnic"] " (cache hit " reg[s, "swnic-hit"] "), rxe " reg[s, "rxe"] cmp2(reg[s, "rxe"], reg[s, "swnic"]) "; "
			}
			sub(/; $/, "", line)
			print line
		}
		if (nl) {
			line = "- **Two hosts under netem loss, 1 MiB goodput kept (% of lossless)**: "
			for (i = 1; i <= nl; i++) {
				if (losses[i] == 0) continue
				line = line losses[i] "% loss:"
				for (j = 1; j <= nlp; j++)
					line = line " " lprov[j] " " kept[losses[i], lprov[j]] "%"
				line = line "; "
			}
			sub(/; $/, "", line)
			print line
		}
	}' "$tsv"
	[ -f "$dir/soak.json" ] && jq -r '"- **Soak** (two hosts, 1 % loss, \(.secs) s, seed \(.seed)): " +
		(if .ok then "held" else "FAILED" end) +
		" - client exit \(.client_exit), server exit \(.server_exit), in flight after \(.in_flight_after), objects released \(.objects_released), retransmits \(.retransmits); " +
		(.client | split("\n") | map(select(startswith("soak "))) | first // "no result")' \
		"$dir/soak.json"
	printf '\nLatency one-way in usec, bandwidth in MB/s (medians). [swnic/peer R]: swnic over that peer\n'
	printf '(latency: below 1 is faster; bandwidth: above 1 is more).\n'
	printf 'Full tables: bench.md; plots: bench-*.svg; every figure: bench.json.\n'
} > "$summary"
cat "$summary"

md=$dir/bench.md
if [ -f "$md" ] && ! grep -q '^### Plots' "$md"; then
	printf '\n### Plots\n\n' >> "$md"
	for sec in host wire stream loss mpi-host mpi-wire twovm; do
		[ -f "$dir/bench-$sec.svg" ] &&
			printf '![%s](bench-%s.svg)\n\n' "$sec" "$sec" >> "$md"
	done
fi
exit 0
