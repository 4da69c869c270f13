#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - build a 6.12 debug kernel for the VM (make check-debug).
#
# Idempotent; a second run with the tree in place takes well under a second.
#
# Builds Debian's linux-source-6.12 (installed with apt-get when missing)
# with KASAN (generic, inline), lockdep (PROVE_LOCKING), kmemleak (on at
# boot, no scan thread: check-debug.sh scans), UBSAN, DEBUG_ATOMIC_SLEEP,
# DEBUG_VM, DEBUG_LIST and fault injection (failslab, fail_page_alloc,
# usercopy, debugfs, stacktrace filter: /proc/self/task/*/fail-nth), plus
# what the VM and the suite need, from `make defconfig` + kvm_guest.config
# minus the big driver stacks (17 CPU-minutes, 3 GB of disk).
# The tree is laid out like setup.sh's:
#
#    $SWNIC_CACHE/k/<kver>/
#        build/                  the source tree, built in place: a KDIR for
#                                `make -C build M=... modules`
#        vmlinuz, vmlinux        -> build/arch/x86/boot/bzImage, build/vmlinux
#        lib/modules/<kver>/     its modules, depmod'ed
#        kver                    <version>-dbg-<key>
#    $SWNIC_CACHE/k/6.12-debug -> <kver>
#
# <key> hashes the linux-source-6.12 package version and the configuration
# below: changing either builds a new tree (the old debug trees are then
# removed). An interrupted build resumes where it stopped.
#
# Usage: tools/testing/debug-kernel.sh [-q]    (-q: print nothing when built)
#
# Environment: SWNIC_CACHE (default ~/.cache/swnic), SWNIC_DEBUG_JOBS (make
# -j, default: CPUs + 1).

set -eu
set -o pipefail

CACHE=${SWNIC_CACHE:-$HOME/.cache/swnic}
TAG=6.12-debug
SRCPKG=linux-source-6.12
QUIET=0
[ "${1:-}" = "-q" ] && QUIET=1

PACKAGES="build-essential bc bison flex libelf-dev libssl-dev cpio kmod
	  xz-utils $SRCPKG"

# Turned off after `make defconfig kvm_guest.config`: what the VM has no
# use for and takes long to build.
TRIM="WERROR DRM SOUND USB_SUPPORT HID WLAN WIRELESS CFG80211 MAC80211 RFKILL
      ETHERNET NETCONSOLE AGP I2C WATCHDOG PCCARD ATA SCSI MD NFS_FS NETFILTER
      NETLABEL EXT4_FS ISO9660_FS MSDOS_FS VFAT_FS HOTPLUG_PCI
      MACINTOSH_DRIVERS INPUT_JOYSTICK INPUT_TABLET INPUT_TOUCHSCREEN
      INPUT_MISC HIBERNATION INTEL_IOMMU AMD_IOMMU SECURITY_SELINUX KEXEC
      CRASH_DUMP X86_CHECK_BIOS_CORRUPTION PM_DEBUG CGROUP_DEBUG
      PROVIDE_OHCI1394_DMA_INIT EARLY_PRINTK_DBGP DEBUG_INFO_BTF
      LOCALVERSION_AUTO"

# The configuration on top (the cache key hashes it: edit freely).
FRAGMENT='
# The VM: PVH boots vmlinux directly; 9p root, virtio, in the kernel.
CONFIG_PVH=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_NET_9P=y
CONFIG_NET_9P_VIRTIO=y
CONFIG_9P_FS=y
CONFIG_DEVTMPFS=y
CONFIG_TMPFS=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_MAGIC_SYSRQ=y
CONFIG_HZ_250=y
# CONFIG_HZ_1000 is not set
CONFIG_PREEMPT=y
# CONFIG_PREEMPT_VOLUNTARY is not set
CONFIG_LOG_BUF_SHIFT=21
CONFIG_DEBUG_INFO_NONE=y

# The suite and the module: hmm_range_fault (HMM_MIRROR, selected by
# on-demand paging), namespaces, veth, netem, hugepages, rxe.
CONFIG_INFINIBAND=m
CONFIG_INFINIBAND_USER_ACCESS=m
CONFIG_INFINIBAND_ON_DEMAND_PAGING=y
CONFIG_RDMA_RXE=m
CONFIG_USERFAULTFD=y
CONFIG_NAMESPACES=y
CONFIG_USER_NS=y
CONFIG_NET_NS=y
CONFIG_MEMCG=y
CONFIG_HUGETLBFS=y
CONFIG_TRANSPARENT_HUGEPAGE=y
CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS=y
CONFIG_IPV6=y
CONFIG_VETH=m
CONFIG_NET_SCHED=y
CONFIG_NET_SCH_NETEM=m
# test_wire.sh, test_wire6.sh: DSCP counted by a u32 filter on clsact.
CONFIG_NET_SCH_INGRESS=m
CONFIG_NET_CLS_U32=m
CONFIG_NET_CLS_ACT=y
CONFIG_NET_ACT_GACT=m
# sec_boundary: FUSE servers that never answer (the pages of a receiver,
# the keeper of an mmap lock); prov_ep, dp_queue: cpu.max holds a sender
# back.
CONFIG_FUSE_FS=y
CONFIG_CGROUP_SCHED=y
CONFIG_FAIR_GROUP_SCHED=y
CONFIG_CFS_BANDWIDTH=y
CONFIG_DEBUG_FS=y
CONFIG_FTRACE=y
CONFIG_KALLSYMS_ALL=y

# The checkers.
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_INLINE=y
CONFIG_KASAN_VMALLOC=y
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_DEBUG_VM=y
CONFIG_DEBUG_LIST=y
CONFIG_DEBUG_KMEMLEAK=y
# CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF is not set
# CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN is not set
CONFIG_UBSAN=y
CONFIG_FAULT_INJECTION=y
CONFIG_FAILSLAB=y
CONFIG_FAIL_PAGE_ALLOC=y
CONFIG_FAULT_INJECTION_USERCOPY=y
CONFIG_FAULT_INJECTION_DEBUG_FS=y
CONFIG_FAULT_INJECTION_STACKTRACE_FILTER=y
'
# Symbols without a prompt that must come out =y (selected by the above).
REQUIRE="HMM_MIRROR MMU_NOTIFIER TRACING LOCKDEP PROVE_RCU UBSAN_BOUNDS
	 STACKTRACE"

# Bump when the way the tree is built changes (not the configuration).
RECIPE=1

APT_GET=(apt-get -o APT::Sandbox::User=root)

log() { [ "$QUIET" = 1 ] || printf 'debug-kernel: %s\n' "$*" >&2; }
say() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }

as_root()
{
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "need root for: $*"
	fi
}

# The Debian packages the build needs; linux-source-6.12 comes from
# bookworm-security or bookworm-backports on Debian 12.
install_packages()
{
	local have missing p cand

	# shellcheck disable=SC2086
	have=" $(dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' $PACKAGES \
		 2>/dev/null | awk '$2 == "ii" { printf "%s ", $1 }') " || true
	missing=
	for p in $PACKAGES; do
		case $have in
		*" $p "*) ;;
		*) missing="$missing $p" ;;
		esac
	done
	[ -z "$missing" ] && return 0

	candidate() { apt-cache policy "$SRCPKG" 2>/dev/null | awk '/Candidate:/ { print $2 }'; }
	cand=$(candidate)
	case $cand in
	''|'(none)')
		say "apt-get update"
		as_root "${APT_GET[@]}" -qq update
		cand=$(candidate)
		;;
	esac
	case $cand in
	''|'(none)') die "apt has no $SRCPKG: enable bookworm-security or bookworm-backports" ;;
	esac
	say "installing:$missing"
	# shellcheck disable=SC2086
	if ! as_root env DEBIAN_FRONTEND=noninteractive "${APT_GET[@]}" -qq install -y \
		--no-install-recommends $missing >/dev/null; then
		as_root "${APT_GET[@]}" -qq update
		# shellcheck disable=SC2086
		as_root env DEBIAN_FRONTEND=noninteractive "${APT_GET[@]}" -qq install -y \
			--no-install-recommends $missing >/dev/null
	fi
}

# Set the fragment's and TRIM's values in .config (in $PWD).
apply_config()
{
	local line sym val

	for sym in $TRIM; do
		scripts/config --disable "$sym"
	done
	while IFS= read -r line; do
		case $line in
		'# CONFIG_'*' is not set')
			sym=${line#\# CONFIG_}; sym=${sym%% *}
			scripts/config --disable "$sym" ;;
		'#'*|'') ;;
		CONFIG_*=y) sym=${line%%=*}; scripts/config --enable "${sym#CONFIG_}" ;;
		CONFIG_*=m) sym=${line%%=*}; scripts/config --module "${sym#CONFIG_}" ;;
		CONFIG_*=\"*) sym=${line%%=*}; val=${line#*=\"}
			scripts/config --set-str "${sym#CONFIG_}" "${val%\"}" ;;
		CONFIG_*=*) sym=${line%%=*}; scripts/config --set-val "${sym#CONFIG_}" "${line#*=}" ;;
		*) die "bad fragment line: $line" ;;
		esac
	done <<< "$FRAGMENT"
}

# Did every value take (a missing dependency drops it silently)?
check_config()
{
	local line sym want got bad=""

	while IFS= read -r line; do
		case $line in
		'# CONFIG_'*' is not set')
			sym=${line#\# }; sym=${sym%% *}; want=n ;;
		'#'*|'') continue ;;
		*) sym=${line%%=*}; want=${line#*=} ;;
		esac
		got=$(grep -m1 "^$sym=" .config | cut -d= -f2-) || true
		[ -n "$got" ] || got=n
		[ "$got" = "$want" ] || bad="$bad $sym=$got(want $want)"
	done <<< "$FRAGMENT"
	for sym in $TRIM; do
		grep -q "^CONFIG_$sym=" .config && bad="$bad CONFIG_$sym(want n)"
	done
	for sym in $REQUIRE; do
		grep -q "^CONFIG_$sym=y" .config || bad="$bad CONFIG_$sym(want y)"
	done
	[ -z "$bad" ] || die "configuration did not take:$bad (see $PWD/.config)"
}

# Unpack, configure, build and install the tree into $dir (the final place:
# the build records absolute paths).
build_tree()
{
	local dir=$1 kver=$2 src=$1/build tarball jobs t0 blog

	tarball=$(dpkg -L "$SRCPKG" | grep '/usr/src/linux-source-.*\.tar\.xz$') ||
		die "$SRCPKG: no source tarball"
	tarball=${tarball%%$'\n'*}
	mkdir -p "$dir"
	blog=$dir/build.log
	if [ ! -e "$src/.unpacked" ]; then
		say "unpacking $tarball into $src"
		rm -rf "$src"
		mkdir -p "$src"
		tar -xJf "$tarball" -C "$src" --strip-components=1
		touch "$src/.unpacked"
	fi
	cd "$src"
	[ "$(make -s kernelversion)" = "${kver%%-*}" ] ||
		die "$tarball is $(make -s kernelversion), expected ${kver%%-*}"

	# Always from scratch: a stale .config must not leak into this key.
	say "configuring $kver"
	{
		make defconfig
		make kvm_guest.config
		apply_config
		scripts/config --set-str LOCALVERSION "-dbg-${kver##*-dbg-}"
		make olddefconfig
		apply_config
		make olddefconfig
	} > "$dir/config.log" 2>&1 || { tail -n 20 "$dir/config.log" >&2; die "make config failed"; }
	check_config
	printf '%s\n' "$FRAGMENT" > "$dir/config.fragment"

	jobs=${SWNIC_DEBUG_JOBS:-$(($(nproc) + 1))}
	say "building $kver with -j$jobs (17 CPU-minutes; log: $blog)"
	t0=$SECONDS
	if ! make -j"$jobs" LOCALVERSION= all > "$blog" 2>&1; then
		tail -n 40 "$blog" >&2
		die "kernel build failed (log: $blog)"
	fi
	[ "$(make -s LOCALVERSION= kernelrelease)" = "$kver" ] ||
		die "built $(make -s LOCALVERSION= kernelrelease), expected $kver"
	rm -rf "${dir:?}/lib"
	make LOCALVERSION= INSTALL_MOD_PATH="$dir" modules_install >> "$blog" 2>&1 ||
		{ tail -n 20 "$blog" >&2; die "modules_install failed (log: $blog)"; }
	[ -f "$dir/lib/modules/$kver/modules.dep" ] || die "modules_install: no modules.dep"
	say "built $kver in $(( (SECONDS - t0) / 60 ))m$(( (SECONDS - t0) % 60 ))s"
	cd - >/dev/null

	ln -sfn build/arch/x86/boot/bzImage "$dir/vmlinuz"
	ln -sfn build/vmlinux "$dir/vmlinux"
	echo "$kver" > "$dir/kver"
}

main()
{
	local version key kver dir link old

	install_packages
	mkdir -p "$CACHE/k"

	version=$(dpkg-query -W -f '${Version}' "$SRCPKG")
	key=$(printf '%s\n' "$version" "$RECIPE" "$TRIM" "$FRAGMENT" "$REQUIRE" |
	      sha256sum | cut -c1-8)
	# 6.12.117-1~deb12u1 -> 6.12.117
	kver=${version%-*}-dbg-$key
	dir=$CACHE/k/$kver
	link=$CACHE/k/$TAG

	if [ ! -e "$dir/.complete" ]; then
		exec 9> "$CACHE/k/.debug-kernel.lock"
		flock 9
	fi
	if [ ! -e "$dir/.complete" ]; then
		df -Pk "$CACHE/k" | awk 'NR == 2 && $4 < 4 * 1024 * 1024 {
			printf "debug-kernel: warning: %d GB free in %s; the build needs about 3\n",
				$4 / 1024 / 1024, $6 > "/dev/stderr" }'
		build_tree "$dir" "$kver"
		printf 'source %s %s\nkey %s\n' "$SRCPKG" "$version" "$key" > "$dir/.swnic-debug"
		touch "$dir/.complete"
	fi

	if [ "$(readlink "$link" 2>/dev/null)" != "$kver" ]; then
		ln -sfn "$kver" "$link.new"
		mv -T "$link.new" "$link"
		log "k/$TAG -> $kver"
		# Earlier debug trees (another key) take gigabytes each.
		for old in "$CACHE"/k/*/.swnic-debug; do
			old=${old%/.swnic-debug}
			# (Not the tags: symlinks, this one to $dir.)
			if [ -L "$old" ] || [ ! -e "$old/.swnic-debug" ] ||
			   [ "$old" = "$dir" ]; then
				continue
			fi
			log "removing the old debug tree $old"
			rm -rf "$old"
		done
	fi
	log "ready: $CACHE/k/$TAG -> $kver"
}

main
