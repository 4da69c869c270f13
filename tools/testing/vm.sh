#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh - run a command inside a qemu VM that boots one of Debian's kernels
# with the swnic module loaded.
#
# Usage: tools/testing/vm.sh [--kernel TAG] [--share DIR]... [--timeout SECS]
#                            [--mem MB] [--smp N] [--no-module] [--verbose]
#                            [--net LPORT:RPORT:N] [-- CMD [ARGS...]]
#
# Boots $SWNIC_CACHE/k/TAG (default 6.12; see setup.sh) under TCG. The
# guest sees the host's / read-only at the same paths (9p) -- the
# repository too: write to /tmp or to a --share DIR, which is mounted
# writable at the same path. On top: tmpfs on /tmp /run /var/tmp /dev/shm,
# devtmpfs, devpts, proc, sysfs, debugfs, tracefs, hugetlbfs on
# /dev/hugepages, lo up, hostname swnic-vm, and the kernel's own modules on
# /lib/modules (modprobe works for in-tree modules). Unless --no-module it
# runs `insmod $REPO/build/TAG/swnic.ko` (built for that kernel: checked
# before booting), then CMD (default: selftests/run.sh) in $REPO with
#
#   SWNIC_REPO=$REPO  SWNIC_KERNEL=TAG  SWNIC_KVER=<release>  SWNIC_VM=1
#   SWNIC_MODULE=$REPO/build/TAG/swnic.ko  (to rmmod/insmod with params)
#   FI_PROVIDER_PATH=$REPO/lib  PATH=$REPO/tools/swnic:<system path>
#   HOME=/tmp/home  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
#
# plus the caller's SWNIC_* and FI_* variables (but SWNIC_VM_*; ours win).
# CMD runs as root with stdin /dev/null; its stdout and stderr, merged,
# stream to our stdout (a serial port: ~150 KB/s).
#
# Options: --timeout SECS bounds the whole run, boot included (default
# 3600); CMD is stopped a little earlier so the guest can still show what
# was running and the kernel log. --mem MB (default 3072), --smp N
# (default 2). --verbose streams the kernel console to stderr and prints
# the boot time.
#
# --net LPORT:RPORT:N gives the guest a virtio-net NIC whose frames go as
# UDP datagrams from 127.0.0.1:LPORT to 127.0.0.1:RPORT on the build
# machine (qemu's dgram netdev): two VMs with their ports swapped are
# joined by a wire, as two hosts on one link, and nothing leaves the
# build machine. In the guest the NIC is up as SWNIC_VM_NETDEV with
# address 10.99.0.N/24 (MAC 52:54:00:99:00:N).
#
# Exit status: CMD's; 124 if CMD or the VM did not finish in time; 125 if
# the VM failed (boot, insmod, mounts, kernel panic). A guest whose kernel
# dies before the guest's init starts (so before swnic is loaded), or
# whose init has not started within SWNIC_VM_BOOT_SECS (default 300: a
# hung boot; a stock kernel boots in ~8 s, the debug one in ~70 s), is
# booted again, up to SWNIC_VM_BOOT_TRIES times in all (default 3), each
# failed boot named on stderr with its console's tail. After a non-zero
# status the kernel console log and the guest's dmesg are kept in a
# temporary directory named on stderr, with the console's tail when the
# guest died.
#
# Environment: SWNIC_CACHE (default ~/.cache/swnic), SWNIC_VM_TIMEOUT
# (the default --timeout), SWNIC_VM_MEM (the default --mem),
# SWNIC_VM_APPEND (more kernel command line, e.g. ignore_loglevel),
# SWNIC_VM_KEEP=1 (keep the temporary directory always), SWNIC_VM_CPU
# (qemu's -cpu, default max). TCG runs the kernel's `rep movsb` copies
# (ERMS/FSRM) about 10 times slower than user space's vector copies -
# 230 against 2400 MB/s in the 6.1 guest - which no real CPU does;
# SWNIC_VM_CPU=max,erms=off,fsrm=off makes the kernel copy with moves
# (770-1000 MB/s), for measuring with a real host's cost ratios.

set -eu
set -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
CACHE=${SWNIC_CACHE:-$HOME/.cache/swnic}

# Modules the initramfs loads to reach the 9p root (plus their dependencies,
# from modules.dep; those built into the kernel are skipped).
INITRD_MODULES="virtio_pci 9pnet_virtio 9p"
P9OPTS=trans=virtio,version=9p2000.L,msize=512000

tag=6.12
timeout=${SWNIC_VM_TIMEOUT:-3600}
mem=${SWNIC_VM_MEM:-3072}
smp=2
module=1
verbose=0
net=
shares=()
cmd=()

usage()
{
	sed -n '7,9s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	echo "(--help for more)" >&2
	exit 2
}

help()
{
	sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit 0
}

die() { printf 'vm.sh: %s\n' "$*" >&2; exit 125; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; tag=$2; shift 2 ;;
	--kernel=*) tag=${1#*=}; shift ;;
	--share) [ $# -ge 2 ] || usage; shares+=("$2"); shift 2 ;;
	--share=*) shares+=("${1#*=}"); shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
	--timeout=*) timeout=${1#*=}; shift ;;
	--mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
	--mem=*) mem=${1#*=}; shift ;;
	--smp) [ $# -ge 2 ] || usage; smp=$2; shift 2 ;;
	--smp=*) smp=${1#*=}; shift ;;
	--no-module) module=0; shift ;;
	--net) [ $# -ge 2 ] || usage; net=$2; shift 2 ;;
	--net=*) net=${1#*=}; shift ;;
	-v|--verbose) verbose=1; shift ;;
	-h|--help) help ;;
	--) shift; cmd=("$@"); break ;;
	*) usage ;;
	esac
done
[ ${#cmd[@]} -gt 0 ] || cmd=(selftests/run.sh)
tries=${SWNIC_VM_BOOT_TRIES:-3}
boot_secs=${SWNIC_VM_BOOT_SECS:-300}
case $timeout$mem$smp$tries$boot_secs in
*[!0-9]*) die "--timeout, --mem, --smp, SWNIC_VM_BOOT_TRIES and SWNIC_VM_BOOT_SECS take numbers" ;;
esac
[ "$timeout" -ge 10 ] || die "--timeout must be at least 10 seconds"
if [ -n "$net" ]; then
	IFS=: read -r net_l net_r net_n <<< "$net"
	case $net_l:$net_r:$net_n in
	*[!0-9:]*|:*|*::*|*:) die "--net takes LPORT:RPORT:N (numbers)" ;;
	esac
	[ "$net_n" -ge 1 ] && [ "$net_n" -le 254 ] || die "--net: N is 1..254"
fi

kdir=$CACHE/k/$tag
[ -f "$kdir/kver" ] || die "no kernel '$tag' in $CACHE/k: run tools/testing/setup.sh"
kdir=$(cd "$kdir" && pwd -P)
kver=$(cat "$kdir/kver")
moddir=$kdir/lib/modules
[ -d "$moddir/$kver" ] || die "$moddir/$kver missing: rerun tools/testing/setup.sh"
[ -d /lib/modules ] || die "/lib/modules missing on the host: run tools/testing/setup.sh"

ko=$REPO/build/$tag/swnic.ko
if [ "$module" = 1 ]; then
	[ -f "$ko" ] || die "no $ko: run 'make module K=$tag'"
	magic=$(modinfo -F vermagic "$ko" 2>/dev/null) || true
	[ "${magic%% *}" = "$kver" ] ||
		die "$ko is built for '${magic%% *}', not $kver: run 'make module K=$tag'"
fi

for i in "${!shares[@]}"; do
	[ -d "${shares[$i]}" ] || die "--share ${shares[$i]}: not a directory"
	shares[i]=$(cd "${shares[$i]}" && pwd -P)
done

# ---- initramfs: busybox + the 9p modules, cached per kernel --------------

BUSYBOX=$(command -v busybox) || die "busybox not found: run tools/testing/setup.sh"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
	die "$BUSYBOX is not static: install busybox-static"
fi

# Module paths (relative to $moddir/$kver) in load order.
initrd_modules()
{
	awk -v want="$INITRD_MODULES" '
	function name(p) { sub(/.*\//, "", p); sub(/\.ko(\.[a-z0-9]+)?$/, "", p)
			   gsub(/-/, "_", p); return p }
	function load(n,   i, k, d) {
		if (n in done) return
		done[n] = 1
		if (n in builtin) return
		if (!(n in path)) { print "missing module " n > "/dev/stderr"; bad = 1; return }
		k = split(deps[n], d, " ")
		for (i = k; i >= 1; i--) load(name(d[i]))
		print path[n]
	}
	FILENAME ~ /modules\.builtin$/ { builtin[name($1)] = 1; next }
	{ p = $1; sub(/:$/, "", p); n = name(p); path[n] = p
	  $1 = ""; deps[n] = $0 }
	END { k = split(want, w, " "); for (i = 1; i <= k; i++) load(w[i]); exit bad }
	' "$moddir/$kver/modules.builtin" "$moddir/$kver/modules.dep"
}

# The initramfs /init: load modules, mount the host root and the job share,
# switch_root into the host system and run the job's init (vm-guest.sh).
initrd_init()
{
	cat <<-EOF
	#!/bin/sh
	# generated by swnic tools/testing/vm.sh for $kver
	export PATH=/bin
	mount -t devtmpfs devtmpfs /dev
	exec </dev/console >/dev/console 2>&1
	fail() {
		echo "swnic-vm: initramfs: \$*"
		cat /proc/cmdline 2>/dev/null
		poweroff -f
		sleep 30
	}
	mount -t proc proc /proc
	for m in $(initrd_modules | sed 's|.*/||; s/\.ko.*$/.ko/' | tr '\n' ' '); do
		insmod /modules/\$m || fail "insmod \$m"
	done
	r=/newroot
	mount -t 9p -o $P9OPTS,ro,cache=loose swnic_root \$r || fail "mount 9p root"
	mount -t 9p -o $P9OPTS,rw,cache=none swnic_job /job || fail "mount 9p job"
	[ -f /job/init ] || fail "no init in the job share"
	mount -o bind "\$r$moddir" \$r/lib/modules || fail "bind /lib/modules"
	# Host paths under the tmpfs mounts below that the job needs (the
	# repository, when it lives in /tmp): held aside, then put back on top.
	i=0
	while read -r p; do
		mkdir -p /keep/\$i
		mount -o bind "\$r\$p" /keep/\$i || fail "bind \$p"
		i=\$((i + 1))
	done < /job/keep
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs \$r/tmp
	mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs \$r/run
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs \$r/var/tmp
	mount -t devtmpfs devtmpfs \$r/dev
	mkdir -p \$r/dev/shm \$r/dev/pts \$r/dev/hugepages
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs \$r/dev/shm
	mount -t devpts -o mode=0620,ptmxmode=0666 devpts \$r/dev/pts
	mount -t hugetlbfs hugetlbfs \$r/dev/hugepages
	mount -t proc proc \$r/proc
	mount -t sysfs sysfs \$r/sys
	i=0
	while read -r p; do
		mkdir -p "\$r\$p"
		mount -o move /keep/\$i "\$r\$p" || fail "move \$p"
		i=\$((i + 1))
	done < /job/keep
	mkdir -p \$r/run/swnic
	mount -o move /job \$r/run/swnic || fail "move the job share"
	umount /proc
	exec switch_root \$r /bin/bash /run/swnic/init
	fail "switch_root"
	EOF
}

build_initramfs()
{
	local init key out stage m dst

	init=$(initrd_init) || die "cannot resolve initramfs modules for $kver"
	key=$( { echo "$init"; stat -L -c '%s %Y' "$BUSYBOX"; } | sha256sum | cut -c1-16)
	out=$CACHE/initramfs/$kver-$key.cpio
	if [ -s "$out" ]; then
		echo "$out"
		return
	fi

	mkdir -p "$CACHE/initramfs"
	stage=$(mktemp -d "$CACHE/initramfs/.stage.XXXXXX")
	mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules,job,keep}
	cp "$BUSYBOX" "$stage/bin/busybox"
	for m in sh mount umount mkdir insmod switch_root poweroff sleep cat; do
		ln -s busybox "$stage/bin/$m"
	done
	for m in $(initrd_modules); do
		dst=$stage/modules/$(basename "${m%.ko*}").ko
		case $m in
		*.ko) cp "$moddir/$kver/$m" "$dst" ;;
		*.ko.xz) xz -dc "$moddir/$kver/$m" > "$dst" ;;
		*.ko.zst) zstd -qdc "$moddir/$kver/$m" > "$dst" ;;
		*.ko.gz) gzip -dc "$moddir/$kver/$m" > "$dst" ;;
		*) die "unknown module format: $m" ;;
		esac
	done
	echo "$init" > "$stage/init"
	chmod 0755 "$stage/init"
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$stage.cpio"
	mv "$stage.cpio" "$out"
	rm -rf "$stage"
	# Older initramfs for this kernel (vm.sh changed) are no longer needed.
	find "$CACHE/initramfs" -maxdepth 1 -name "$kver-*.cpio" ! -name "${out##*/}" \
		-mmin +60 -delete
	echo "$out"
}

initrd=$(build_initramfs)

# ---- the job: what the guest's init runs ----------------------------------

# Logs of failed runs are kept (see the end); a day is long enough.
find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'swnic-vm.*' -mtime +0 \
	-exec rm -rf {} + 2>/dev/null || true
tmp=$(mktemp -d "${TMPDIR:-/tmp}/swnic-vm.XXXXXX")
job=$tmp/job
mkdir "$job"
qpid=
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup()
{
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	[ -n "${tailpid:-}" ] && kill "$tailpid" 2>/dev/null
	wait 2>/dev/null
	if [ "${keep:-1}" = 0 ] && [ "${SWNIC_VM_KEEP:-0}" = 0 ]; then
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'echo "vm.sh: interrupted" >&2; exit 130' INT TERM HUP

start=$(date +%s.%N)
# The guest stops CMD a little before our deadline, so that it can still
# report what was running; its clock is the host's (RTC at boot).
deadline=$(( ${start%.*} + timeout - (timeout > 60 ? 15 : timeout / 4) ))

passenv=()
while IFS= read -r name; do
	passenv+=("$name=${!name}")
done < <(compgen -e | grep -E '^(SWNIC|FI)_' | grep -vxE 'SWNIC_VM_[A-Z_]*' || true)

quote()
{
	local a

	for a in "$@"; do
		printf '%q ' "$a"
	done
}

{
	echo '#!/bin/bash'
	echo "# generated by $REPO/tools/testing/vm.sh"
	printf 'VM_REPO=%q\n' "$REPO"
	printf 'VM_TAG=%q\n' "$tag"
	printf 'VM_KVER=%q\n' "$kver"
	printf 'VM_MODULE=%q\n' "$module"
	printf 'VM_KO=%q\n' "$ko"
	printf 'VM_DEADLINE=%q\n' "$deadline"
	printf 'VM_NET=%q\n' "${net_n:-}"
	printf 'VM_SHARES=(%s)\n' "$(quote "${shares[@]+"${shares[@]}"}")"
	printf 'VM_ENV=(%s)\n' "$(quote "${passenv[@]+"${passenv[@]}"}")"
	printf 'VM_CMD=(%s)\n' "$(quote "${cmd[@]}")"
	printf '. %q\n' "$REPO/tools/testing/vm-guest.sh"
} > "$job/init"

# The guest mounts tmpfs over these: what it needs from under them (only
# the repository, today) is carried over by the initramfs.
: > "$job/keep"
case $REPO/ in
/tmp/*|/run/*|/var/tmp/*|/dev/*) echo "$REPO" >> "$job/keep" ;;
esac

# ---- qemu -----------------------------------------------------------------

# The uncompressed kernel boots seconds faster (PVH entry, no decompressor).
kernel=$kdir/vmlinuz
[ -s "$kdir/vmlinux" ] && kernel=$kdir/vmlinux

append="console=ttyS0,115200 loglevel=5 panic=-1 rdinit=/init"
append="$append mitigations=off random.trust_cpu=on"
append="$append ${SWNIC_VM_APPEND:-}"

qemu=(qemu-system-x86_64
	-accel "tcg,thread=multi" -cpu "${SWNIC_VM_CPU:-max}" -smp "$smp" -m "$mem"
	-machine pc -nodefaults -no-user-config -display none -no-reboot
	-kernel "$kernel" -initrd "$initrd" -append "$append"
	-chardev "file,id=con,path=$tmp/console.log" -serial chardev:con
	-chardev "stdio,id=out,signal=off" -serial chardev:out
	-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
	-device "virtio-9p-pci,fsdev=root,mount_tag=swnic_root"
	-fsdev "local,id=job,path=$job,security_model=none"
	-device "virtio-9p-pci,fsdev=job,mount_tag=swnic_job")
if [ -n "$net" ]; then
	qemu+=(-netdev "dgram,id=wire,local.type=inet,local.host=127.0.0.1,local.port=$net_l,remote.type=inet,remote.host=127.0.0.1,remote.port=$net_r"
	       -device "virtio-net-pci,netdev=wire,mac=52:54:00:99:00:$(printf %02x "$net_n")")
fi
for i in "${!shares[@]}"; do
	qemu+=(-fsdev "local,id=sh$i,path=${shares[$i]},security_model=none,multidevs=remap"
	       -device "virtio-9p-pci,fsdev=sh$i,mount_tag=swnic_sh$i")
done

console_tail()
{
	echo "vm.sh: ---- last lines of the kernel console (${2:-$tmp/console.log}) ----" >&2
	tail -n "${1:-40}" "${2:-$tmp/console.log}" | tr -d '\r' >&2
	echo "vm.sh: ----" >&2
}

keep=1
try=1
while :; do
	: > "$tmp/console.log"
	if [ "$verbose" = 1 ]; then
		tail -n +1 -f "$tmp/console.log" >&2 &
		tailpid=$!
	fi
	left=$(( ${start%.*} + timeout - $(date +%s) ))
	[ "$left" -ge 1 ] || left=1
	timeout -k 5 "$left" "${qemu[@]}" < /dev/null &
	qpid=$!
	# Until the guest's init has marked the job share, watch for a
	# boot that hangs (no console output, no progress) and stop it.
	hung=
	boot_by=$(( $(date +%s) + boot_secs ))
	while [ ! -e "$job/booted" ] && kill -0 "$qpid" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$boot_by" ]; then
			hung=1
			kill "$qpid" 2>/dev/null || true
			break
		fi
		sleep 1
	done
	rc=0
	wait "$qpid" || rc=$?
	qpid=
	[ -n "${tailpid:-}" ] && { sleep 0.2; kill "$tailpid" 2>/dev/null || true; tailpid=; }

	# The guest's init marks the job share before it does anything
	# else (vm-guest.sh). A guest that stopped without that mark died in
	# the kernel's own boot, before swnic or any test touched it: seen
	# under multi-threaded TCG as an oops in freshly patched kernel text
	# (sched_clock_cpu, 6.12). That is the emulator's, not ours: boot
	# again, saying so, and keep the failed boot's console.
	if [ -n "$hung" ]; then
		why="the guest's init had not started after ${boot_secs}s (a hung boot): stopped"
	else
		why="the kernel died while booting, before the guest's init ran, qemu exit $rc"
	fi
	if [ -e "$job/booted" ] || [ -s "$job/status" ] || [ "$try" -ge "$tries" ] ||
	   { [ -z "$hung" ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; }; }; then
		break
	fi
	cp "$tmp/console.log" "$tmp/console.boot$try.log"
	echo "vm.sh: [$tag] $why (attempt $try of $tries); booting again" >&2
	console_tail 25 "$tmp/console.boot$try.log"
	try=$((try + 1))
done

end=$(date +%s.%N)
wall=$(echo "$start $end" | awk '{ printf "%.1f", $2 - $1 }')

if [ -s "$job/status" ]; then
	status=$(cat "$job/status")
	if [ "$verbose" = 1 ] && [ -e "$job/started" ]; then
		boot=$(stat -c %.9Y "$job/started" |
		       awk -v s="$start" '{ printf "%.1f", $1 - s }')
		echo "vm.sh: [$tag] boot-to-command ${boot}s (guest uptime $(cat "$job/uptime")s), wall ${wall}s" >&2
	fi
elif [ -n "$hung" ]; then
	echo "vm.sh: [$tag] $why (boot $try of $tries, the last)" >&2
	console_tail 60
	status=125
elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "vm.sh: [$tag] the VM did not finish within ${timeout}s (hung guest?): killed" >&2
	console_tail 60
	status=124
else
	if grep -q 'Kernel panic' "$tmp/console.log"; then
		echo "vm.sh: [$tag] kernel panic after ${wall}s" >&2
	else
		echo "vm.sh: [$tag] the VM stopped after ${wall}s without reporting a status (qemu exit $rc)" >&2
	fi
	console_tail 60
	status=125
fi

if [ "$status" != 0 ]; then
	echo "vm.sh: [$tag] exit status $status after ${wall}s; console log and dmesg kept in $tmp" >&2
elif [ "$try" -gt 1 ]; then
	echo "vm.sh: [$tag] the failed boots' console logs are kept in $tmp" >&2
else
	keep=0
fi
exit "$status"
