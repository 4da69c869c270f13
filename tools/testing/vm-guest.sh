# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# vm-guest.sh - the VM's init (PID 1) after switch_root; see vm.sh.
#
# Sourced by /run/swnic/init, which vm.sh writes on the job share with:
#   VM_REPO VM_TAG VM_KVER VM_MODULE VM_KO VM_DEADLINE VM_SHARES VM_ENV VM_CMD
# Sets up the rest of the system, loads swnic, runs VM_CMD with its output
# on ttyS1 (the host's stdout), writes its status to /run/swnic/status and
# powers off. PID 1 must never exit, so nothing here uses `set -e`.

JOB=/run/swnic
OUT=/dev/ttyS1
P9OPTS=trans=virtio,version=9p2000.L,msize=512000

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8
umask 022

vm_poweroff()
{
	# Let ttyS1 drain (stty waits for it), then power off at once.
	stty -F "$OUT" raw -echo 2>/dev/null
	busybox poweroff -f 2>/dev/null
	echo o > /proc/sysrq-trigger
	sleep 60
}

vm_finish()
{
	local st=$1

	dmesg > "$JOB/dmesg" 2>/dev/null
	echo "$st" > "$JOB/status.tmp" && mv "$JOB/status.tmp" "$JOB/status"
	echo "SWNIC-VM-EXIT=$st" > /dev/console
	vm_poweroff
}

# The tail of the kernel log since the system was up (see vm_setup).
vm_dmesg_tail()
{
	echo "vm: ---- dmesg tail ----"
	dmesg | awk '/swnic-vm: up/ { n = 0 } { l[n++] = $0 }
		     END { for (i = (n > '"$1"' ? n - '"$1"' : 0); i < n; i++) print l[i] }'
	echo "vm: ----"
}

vm_fail()
{
	echo "vm: $*"
	vm_dmesg_tail 25
	vm_finish 125
}

vm_setup()
{
	local i p

	# Marks where the kernel log of this job starts (run.sh checks it).
	echo "swnic-vm: up, kernel $VM_KVER" > /dev/kmsg
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	echo swnic-vm > /proc/sys/kernel/hostname
	ip link set lo up || vm_fail "cannot bring lo up"
	mkdir -p /tmp/home

	for i in "${!VM_SHARES[@]}"; do
		p=${VM_SHARES[$i]}
		mkdir -p "$p" 2>/dev/null
		mount -t 9p -o "$P9OPTS,rw,cache=none" "swnic_sh$i" "$p" ||
			vm_fail "cannot mount --share $p"
	done
}

# Static keys held on for the whole boot. Tests turn some of the kernel's
# static keys on and off, test after test: a CPU quota (cpu.max, in
# selftests/cpu_util.h) the scheduler's CFS-bandwidth key, a memory cgroup
# the socket-accounting key, a ping (SO_TIMESTAMP) the packet-timestamp
# key, a tc qdisc the ingress/egress hooks' keys, a wire socket (each
# namespace's) the UDP-encapsulation keys. Each time the kernel patches
# its text through int3 breakpoints, and under TCG another vCPU can still
# run the breakpoint once the patch is done: an "Oops: int3" at the key's
# branch (6.12 guests: put_prev_entity() running dp_queue,
# netif_rx_internal() running test_wire_fuzz.sh). Not swnic's, but a red
# run. Held on from here, before any test, those keys never change again;
# what holds them does nothing else: an empty cgroup with a quota of ten
# CPUs and a memory controller, a ping of 127.0.0.1 once an hour, an
# empty clsact on lo, an unused VXLAN device on lo (IPv4 and IPv6). The
# kernel's one-time secrets (DO_ONCE: TCP sequence numbers, the inet and
# UDP hash tables) flip a key at their first use, from a worker, while
# other CPUs run that code (secure_tcp_seq_and_ts_off() running
# test_wire.sh's first TCP connection): a TCP connection and a UDP
# datagram to closed ports on lo use them first, here.
vm_hold_static_keys()
{
	local cg=/run/swnic-cg

	if mkdir -p "$cg" && mount -t cgroup2 cgroup2 "$cg" 2>/dev/null; then
		if ! { echo "+cpu +memory" > "$cg/cgroup.subtree_control" &&
		       mkdir -p "$cg/swnic-vm-hold" &&
		       echo "1000000 100000" > "$cg/swnic-vm-hold/cpu.max"; } 2>/dev/null
		then
			echo "vm: cannot hold a CPU quota (cgroup2 cpu, memory)"
		fi
		umount "$cg"
	fi
	rmdir "$cg" 2>/dev/null
	ping -q -n -i 3600 127.0.0.1 >/dev/null 2>&1 &
	tc qdisc add dev lo clsact 2>/dev/null ||
		echo "vm: cannot hold the tc hooks (clsact on lo)"
	modprobe vxlan 2>/dev/null
	{ ip link add swnic-hold4 type vxlan id 4242 dstport 4242 \
		local 127.0.0.1 dev lo &&
	  ip link set swnic-hold4 up &&
	  ip link add swnic-hold6 type vxlan id 4243 dstport 4243 \
		local ::1 dev lo &&
	  ip link set swnic-hold6 up; } 2>/dev/null ||
		echo "vm: cannot hold the UDP encapsulation keys (vxlan)"
	{ : > /dev/tcp/127.0.0.1/9; } 2>/dev/null
	{ : > /dev/tcp/::1/9; } 2>/dev/null
	{ : > /dev/udp/127.0.0.1/9; } 2>/dev/null
	{ : > /dev/udp/::1/9; } 2>/dev/null
	sleep 0.2	# the keys are flipped by a worker
}

vm_load_module()
{
	local err

	echo "swnic-vm: insmod $VM_KO" > /dev/kmsg
	# What modprobe would load first (modinfo's depends: udp_tunnel).
	modprobe -a udp_tunnel 2>/dev/null
	if ! err=$(insmod "$VM_KO" 2>&1); then
		vm_fail "insmod $VM_KO failed: $err"
	fi
}

# --net: the virtio NIC, up, 10.99.0.N/24.
vm_setup_net()
{
	local i nd=

	modprobe virtio_net || vm_fail "modprobe virtio_net"
	for i in $(seq 50); do
		for nd in /sys/class/net/*; do
			nd=${nd##*/}
			[ "$nd" != lo ] && [ -e "/sys/class/net/$nd/device" ] && break 2
			nd=
		done
		sleep 0.1
	done
	[ -n "$nd" ] || vm_fail "--net: no NIC appeared"
	ip addr add "10.99.0.$VM_NET/24" dev "$nd" && ip link set "$nd" up ||
		vm_fail "--net: cannot set up $nd"
	export SWNIC_VM_NETDEV=$nd
}

vm_run()
{
	local now left st e watchdog

	for e in "${VM_ENV[@]}"; do
		export "${e?}"
	done
	export SWNIC_VM=1 SWNIC_REPO="$VM_REPO" SWNIC_KERNEL="$VM_TAG"
	export SWNIC_KVER="$VM_KVER" SWNIC_MODULE="$VM_KO"
	export FI_PROVIDER_PATH="$VM_REPO/lib"
	export PATH="$VM_REPO/tools/swnic:$PATH"
	export HOME=/tmp/home
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

	now=$(date +%s)
	left=$((VM_DEADLINE - now))
	[ "$left" -ge 5 ] || left=5

	cut -d' ' -f1 /proc/uptime > "$JOB/uptime"
	: > "$JOB/started"
	cd "$VM_REPO" || vm_fail "no $VM_REPO"
	# Just before the timeout fires, show what is still running and where
	# it blocks (sysrq-w: stacks of blocked tasks), even if it never dies.
	{
		sleep $((left - 1))
		: > /tmp/.vm-timeout
		echo "vm: '${VM_CMD[*]}' still running after $((left - 1))s; processes:"
		# shellcheck disable=SC2009  # the forest, minus kernel threads
		ps -eo pid,stat,wchan:28,etime,args --forest | grep -v ' \[[^]]*\]$'
		echo w > /proc/sysrq-trigger
		vm_dmesg_tail 60
	} &
	watchdog=$!
	timeout -k 10 "$left" "${VM_CMD[@]}"
	st=$?
	kill "$watchdog" 2>/dev/null
	cd /
	if [ -e /tmp/.vm-timeout ]; then
		sleep 1	# the watchdog's report
		echo "vm: '${VM_CMD[*]}' timed out after ${left}s (status $st)"
		st=124
	fi
	vm_finish "$st"
}

# First of all: the kernel booted as far as our init (vm.sh boots again
# only a guest that never got here).
: > "$JOB/booted"
stty -F "$OUT" raw -echo 2>/dev/null
exec < /dev/null > "$OUT" 2>&1

vm_setup
vm_hold_static_keys
[ -n "${VM_NET:-}" ] && vm_setup_net
[ "$VM_MODULE" = 1 ] && vm_load_module
vm_run
