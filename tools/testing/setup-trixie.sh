#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# setup-trixie.sh - the Debian 13 lane: a Debian 13 (trixie) root and its
# own 6.12 kernel, as a user of the current Debian stable has them.
#
# Idempotent; a second run with everything in place takes a second.
#
#  - $SWNIC_CACHE/root/trixie: `debootstrap --variant=minbase trixie` with
#    Debian 13's kernel (image, headers, kbuild, gcc-14), libfabric 2.x,
#    Open MPI 5, the build dependencies and the tools the selftests call,
#    and Debian 13's packaging tools (build-essential, debhelper, dh-dkms,
#    dkms, lintian).
#    The mirror is the one this machine's apt configuration names for
#    Debian (its sources files); nothing else is downloaded.
#  - $SWNIC_CACHE/k/<kver>: that kernel as setup.sh lays out its trees
#    (vmlinuz, vmlinux, lib/modules/<kver>, build, kver), pointing into
#    the root, and the tag $SWNIC_CACHE/k/6.12-trixie, so that
#    `vm.sh --kernel 6.12-trixie` boots it.
#
# The provider, tool, selftests and module of this lane are built inside
# the root (tools/testing/trixie.sh), and the VM runs them there.
#
# Usage: tools/testing/setup-trixie.sh [-q]

set -eu
set -o pipefail

CACHE=${SWNIC_CACHE:-$HOME/.cache/swnic}
ROOT=$CACHE/root/trixie
TAG=6.12-trixie
QUIET=0
[ "${1:-}" = "-q" ] && QUIET=1

# Bump to rebuild the root when this list changes.
ROOT_VERSION=1
# debootstrap's own resolver takes the simple ones; apt the rest.
BASE_PACKAGES="libfabric-dev libfabric-bin gcc make libc6-dev pkg-config
	       libjson-c-dev libmnl-dev iproute2 kmod procps jq iputils-ping
	       ethtool util-linux"
APT_PACKAGES="linux-image-amd64 linux-headers-amd64 openmpi-bin
	      libopenmpi-dev"
# Added to a root made before them (no new debootstrap): Debian 13's
# packaging tools, for `make deb` in the root and test_deb.sh (dkms).
EXTRA_PACKAGES="build-essential debhelper dh-dkms dkms lintian xz-utils"

log() { printf 'setup-trixie: %s\n' "$*" >&2; }
die() { printf 'setup-trixie: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"

# The Debian archive this machine's apt uses (deb822 or one-line format).
debian_mirror()
{
	local f uri

	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk '
			/^URIs:/ { u = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++)
					if ($i !~ /-security$/ && $i !~ /-/) s = 1 }
			/^$/ { if (u != "" && s && u !~ /security/) { found = 1; exit }
			       u = ""; s = 0 }
			END { if (u != "" && s && u !~ /security/) print u }' "$f")
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '$1 == "deb" && $0 !~ /security/ && $0 ~ / main/ {
			for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {
				print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	return 1
}

make_root()
{
	local mirror tmp

	if [ -e "$ROOT/.complete" ] &&
	   [ "$(cat "$ROOT/.complete")" = "$ROOT_VERSION" ]; then
		return 0
	fi
	command -v debootstrap >/dev/null ||
		die "no debootstrap: run tools/testing/setup.sh first"
	mirror=$(debian_mirror) || die "no Debian mirror in this machine's apt sources"
	log "debootstrap trixie from $mirror (about a minute)"
	mkdir -p "$CACHE/root"
	tmp=$(mktemp -d "$CACHE/root/.tmp.trixie.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# shellcheck disable=SC2086
	debootstrap --variant=minbase \
		--include="$(echo $BASE_PACKAGES | tr ' ' ,)" \
		trixie "$tmp" "$mirror" > "$tmp.log" 2>&1 ||
		{ tail -20 "$tmp.log" >&2; die "debootstrap failed (log: $tmp.log)"; }
	log "apt-get install in the root: $(echo $APT_PACKAGES)"
	# shellcheck disable=SC2086
	chroot "$tmp" env DEBIAN_FRONTEND=noninteractive \
		apt-get -o APT::Sandbox::User=root -y \
		--no-install-recommends install $APT_PACKAGES >> "$tmp.log" 2>&1 ||
		{ tail -20 "$tmp.log" >&2; die "apt-get in the root failed (log: $tmp.log)"; }
	chroot "$tmp" apt-get clean
	rm -f "$tmp.log"
	# Mount points the VM binds into the root (its / is read-only there).
	mkdir -p "$tmp/src" "$tmp/ksft" "$tmp/dev/hugepages"
	chmod 0755 "$tmp"	# mktemp's 0700: others could not reach /
	echo "$ROOT_VERSION" > "$tmp/.complete"
	rm -rf "$ROOT"
	mv "$tmp" "$ROOT"
	trap - EXIT
}

# EXTRA_PACKAGES into the root, those it lacks.
root_extras()
{
	local have missing="" p

	# shellcheck disable=SC2086
	have=" $(chroot "$ROOT" dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' \
		 $EXTRA_PACKAGES 2>/dev/null | awk '$2 == "ii" { printf "%s ", $1 }') " || true
	for p in $EXTRA_PACKAGES; do
		case $have in
		*" $p "*) ;;
		*) missing="$missing $p" ;;
		esac
	done
	[ -z "$missing" ] && return 0
	log "apt-get install in the root:$missing"
	# shellcheck disable=SC2086
	{ chroot "$ROOT" apt-get -o APT::Sandbox::User=root -qq update &&
	  chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive \
		apt-get -o APT::Sandbox::User=root -y --no-install-recommends \
		install $missing && chroot "$ROOT" apt-get clean; } \
		> "$CACHE/root/.extras.log" 2>&1 ||
		{ tail -20 "$CACHE/root/.extras.log" >&2; die "apt-get in the root failed"; }
}

# $CACHE/k/<kver>: the root's kernel in setup.sh's layout, by symlinks.
make_kernel_tree()
{
	local kver dir link=$CACHE/k/$TAG

	kver=$(basename "$(ls -d "$ROOT"/usr/lib/modules/*/kernel | head -1 |
			   xargs dirname)")
	[ -n "$kver" ] && [ -f "$ROOT/boot/vmlinuz-$kver" ] ||
		die "no kernel in $ROOT"
	dir=$CACHE/k/$kver
	if [ ! -e "$dir/.complete" ]; then
		rm -rf "$dir"
		mkdir -p "$dir/lib/modules"
		ln -s "$ROOT/usr/lib/modules/$kver" "$dir/lib/modules/$kver"
		ln -s "$ROOT/boot/vmlinuz-$kver" "$dir/vmlinuz"
		ln -s "$ROOT/usr/src/linux-headers-$kver" "$dir/build"
		echo "$kver" > "$dir/kver"
		# The uncompressed kernel, as setup.sh makes it (PVH boot).
		CACHE=$CACHE bash -c '
			log() { printf "setup-trixie: %s\n" "$*" >&2; }
			. /dev/stdin
			extract_vmlinux "$1"' _ "$kver" < <(
			sed -n '/^extract_vmlinux()/,/^}/p' \
				"$(dirname "$0")/setup.sh")
		touch "$dir/.complete"
	fi
	if [ "$(readlink "$link" 2>/dev/null)" != "$kver" ]; then
		ln -sfn "$kver" "$link.new"
		mv -T "$link.new" "$link"
		log "k/$TAG -> $kver"
	fi
	cp -u "$CACHE"/ksft/*.h "$ROOT/ksft/"
	[ "$QUIET" = 1 ] || log "ready: $ROOT, k/$TAG=$kver"
}

mkdir -p "$CACHE/k"
exec 9> "$CACHE/.setup-trixie.lock"
flock 9
make_root
root_extras
make_kernel_tree
