#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# trixie.sh - the Debian 13 lane: build swnic inside the Debian 13 root
# and run commands there in the VM.
#
# Usage:
#   tools/testing/trixie.sh build
#       On the build machine (root): copy this tree's sources to
#       $ROOT/src/swnic and build module (for the root's kernel), provider,
#       tool, selftests and the Debian packages (make deb) there, with
#       Debian 13's gcc, libfabric 2.x, Open MPI and debhelper: as a user
#       of Debian 13 builds them.
#   tools/testing/trixie.sh run CMD [ARGS...]
#       In the VM booted with `vm.sh --kernel 6.12-trixie --no-module`:
#       load the module built above, make the root a system (proc, sys,
#       dev, tmpfs on /tmp and /run over the read-only 9p view of it) and
#       run CMD there, in /src/swnic, with vm.sh's environment pointed at
#       the root's build.
#   tools/testing/trixie.sh check
#       On the build machine: setup-trixie.sh, build, then the suite in the
#       VM (what `make check` runs for the lane 6.12-trixie).
#
# $ROOT is $SWNIC_CACHE/root/trixie (setup-trixie.sh makes it).

set -eu
set -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
CACHE=${SWNIC_CACHE:-$HOME/.cache/swnic}
# vm.sh passes SWNIC_* on to the guest, whose HOME is another.
export SWNIC_CACHE=$CACHE
ROOT=$CACHE/root/trixie
TAG=6.12-trixie
SRC=/src/swnic

die() { printf 'trixie.sh: error: %s\n' "$*" >&2; exit 1; }

build()
{
	local kver

	[ -e "$ROOT/.complete" ] || die "no root at $ROOT: run tools/testing/setup-trixie.sh"
	kver=$(cat "$CACHE/k/$TAG/kver")
	# The tree as git sees it (tracked and new files), not its build output.
	rm -rf "$ROOT$SRC.new"
	mkdir -p "$ROOT$SRC.new"
	(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 tar -cf - --no-recursion --ignore-failed-read) |
		tar -xf - -C "$ROOT$SRC.new"
	# Keep the old build output: make rebuilds only what changed - if it
	# was built from this very tree. Another checkout's build can be newer
	# than our sources (tar keeps their times), and make would keep it.
	echo "$REPO" > "$ROOT$SRC.new/.trixie-origin"
	if [ -d "$ROOT$SRC" ] &&
	   [ "$(cat "$ROOT$SRC/.trixie-origin" 2>/dev/null)" = "$REPO" ]; then
		(cd "$ROOT$SRC" && tar -cf - build/$TAG selftests/out \
			selftests/mpi/out lib/*.so tools/swnic/swnic 2>/dev/null) |
			tar -xpf - -C "$ROOT$SRC.new" 2>/dev/null || true
	fi
	rm -rf "$ROOT$SRC"
	mv "$ROOT$SRC.new" "$ROOT$SRC"
	chroot "$ROOT" sh -c "cd $SRC && make --no-print-directory -j$(nproc) \
		SWNIC_CACHE=/ K=$TAG KDIR=/usr/src/linux-headers-$kver \
		module lib tool selftests deb"
}

run()
{
	local m

	[ "${SWNIC_KERNEL:-}" = "$TAG" ] || die "run: not in a $TAG VM"
	[ $# -gt 0 ] || set -- selftests/run.sh
	modprobe -a udp_tunnel 2>/dev/null
	insmod "$ROOT$SRC/build/$TAG/swnic.ko" || die "insmod"
	# A mount point of its own: `ip netns exec` remounts / as a slave.
	mount --bind "$ROOT" "$ROOT"
	for m in proc sys dev; do
		mount --rbind "/$m" "$ROOT/$m"
	done
	for m in tmp run; do
		mount -t tmpfs "$m" "$ROOT/$m"
	done
	mkdir -p "$ROOT/tmp/home"
	# What the caller passed on for the tests (vm.sh: SWNIC_*, FI_*).
	local -a pass=()
	local kv
	env -0 > /tmp/trixie.env	# no /dev/fd in the guest for <(...)
	while IFS= read -r -d '' kv; do
		case $kv in
		FI_PROVIDER_PATH=*|SWNIC_REPO=*|SWNIC_MODULE=*|SWNIC_CACHE=*) ;;
		FI_*=*|SWNIC_*=*) pass+=("$kv") ;;
		esac
	done < /tmp/trixie.env
	# The root becomes the mount namespace's root (pivot_root, not
	# chroot: a chrooted process may not create user namespaces, which
	# test_netns.sh does); the VM's own root is let go.
	exec unshare --mount --propagation private sh -c '
		cd "$1" && pivot_root . mnt && /mnt/bin/umount -l /mnt &&
		shift && exec "$@"' _ "$ROOT" env -i "${pass[@]}" \
		PATH="$SRC/tools/swnic:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		HOME=/tmp/home TERM=dumb LANG=C.UTF-8 \
		SWNIC_REPO="$SRC" SWNIC_KERNEL="$TAG" SWNIC_VM=1 \
		SWNIC_KVER="$(uname -r)" \
		SWNIC_MODULE="$SRC/build/$TAG/swnic.ko" \
		FI_PROVIDER_PATH="$SRC/lib" \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		sh -c 'cd "$0" && exec "$@"' "$SRC" "$@"
}

# One build or lane at a time: $ROOT$SRC is the build, and the suite's
# programs, of whichever checkout built last. A second checkout's lane,
# started while one ran, replaced the first's programs under its suite,
# which then failed (exit 127). Held until the lane's VM is done.
lock()
{
	exec 9>"$CACHE/root/trixie.lock"
	flock 9
}

case ${1:-} in
build)	lock; build ;;
run)	shift; run "$@" ;;
check)
	"$REPO/tools/testing/setup-trixie.sh" -q
	lock
	build
	shift
	exec "$REPO/tools/testing/vm.sh" --kernel "$TAG" --no-module "$@" \
		-- "$REPO/tools/testing/trixie.sh" run selftests/run.sh ;;
*)	echo "usage: $0 build | run [CMD...] | check [VM.SH OPTIONS]" >&2
	exit 2 ;;
esac
