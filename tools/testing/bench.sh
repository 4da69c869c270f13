#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - run inside the VM (make bench): fi_pingpong (Debian's, rdm
# endpoints) over swnic beside libfabric's shm and tcp providers, in the same
# boot, plus memcpy bandwidth as the ceiling of a one-copy transport.
# Prints one table: medians of RUNS runs, one-way latency (usec/xfer) and
# bandwidth (MB/s) per size, and swnic's ratios to shm and to memcpy.
#
# Environment: RUNS (default 3), SIZES (default "8 4096 65536 1048576"),
# PROVIDERS (default "swnic shm tcp").

set -u

RUNS=${RUNS:-3}
SIZES=${SIZES:-"8 4096 65536 1048576"}
PROVIDERS=${PROVIDERS:-"swnic shm tcp"}
port=47600
# The client's CPU: the one after the server's, if the VM has two.
client_cpu=$(( $(nproc) > 1 ? 1 : 0 ))

# Iterations per size: enough to measure, bounded in the slow guest.
iters()
{
	if [ "$1" -le 4096 ]; then echo 2000
	elif [ "$1" -le 65536 ]; then echo 500
	else echo 100
	fi
}

# A size as fi_pingpong names it.
human()
{
	if [ $(($1 % 1048576)) = 0 ]; then echo "$(($1 / 1048576))m"
	elif [ $(($1 % 1024)) = 0 ]; then echo "$(($1 / 1024))k"
	else echo "$1"
	fi
}

# One run: prints "usec MBps" or "- -" if the run failed.
run_one()
{
	local prov=$1 size=$2 n out
	n=$(iters "$size")
	port=$((port + 1))
	# Server and client on CPUs of their own: two busy-polling processes
	# sharing one CPU measure the scheduler, not the transport.
	timeout 120 taskset -c 0 fi_pingpong -p "$prov" -e rdm -S "$size" \
		-I "$n" -B "$port" >/dev/null 2>&1 &
	local srv=$!
	for _ in $(seq 300); do
		[ -n "$(ss -Hltn "sport = :$port")" ] && break
		sleep 0.1
	done
	out=$(timeout 120 taskset -c "$client_cpu" fi_pingpong -p "$prov" \
		-e rdm -S "$size" -I "$n" -P "$port" 127.0.0.1 2>/dev/null)
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

declare -A lat bw
for prov in $PROVIDERS; do
	for size in $SIZES; do
		ls="" bs=""
		for _ in $(seq "$RUNS"); do
			r=$(run_one "$prov" "$size")
			ls="$ls ${r% *}" bs="$bs ${r#* }"
		done
		lat[$prov,$size]=$(echo "$ls" | median)
		bw[$prov,$size]=$(echo "$bs" | median)
		echo "# $prov $size: usec$ls  MB/s$bs" >&2
	done
done
memcpy=$("$SWNIC_REPO/tools/testing/memcpy_bw" 1048576)

printf '\nfi_pingpong -e rdm, one-way latency (usec) and bandwidth (MB/s), median of %s runs, kernel %s\n\n' \
	"$RUNS" "$(uname -r)"
printf '%-8s' size
for prov in $PROVIDERS; do printf ' %10s %10s' "$prov-us" "$prov-MB/s"; done
printf ' %10s %10s %12s\n' lat/shm bw/shm bw/memcpy
for size in $SIZES; do
	printf '%-8s' "$size"
	for prov in $PROVIDERS; do
		printf ' %10s %10s' "${lat[$prov,$size]}" "${bw[$prov,$size]}"
	done
	printf ' %10s %10s %12s\n' \
		"$(ratio "${lat[swnic,$size]:--}" "${lat[shm,$size]:--}")" \
		"$(ratio "${bw[swnic,$size]:--}" "${bw[shm,$size]:--}")" \
		"$(ratio "${bw[swnic,$size]:--}" "$memcpy")"
done
printf '\nmemcpy 1 MiB in the guest: %s MB/s\n' "$memcpy"
printf 'targets: 8 B latency lat/shm <= 1.00; 1 MiB bandwidth bw/shm >= 1.00 and bw/memcpy >= 0.80\n'
