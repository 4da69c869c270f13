#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# setup.sh - prepare this machine to build and test swnic.
#
# Idempotent; a second run with everything in place takes about a second.
#
#  - installs the Debian packages the build, `make deb` (debhelper,
#    dh-dkms, lintian), the VM (dkms for test_deb.sh) and `make bench`
#    (netpipe-openmpi; libibverbs-dev and ibverbs-providers for its reg
#    section) need (apt-get, only
#    when dpkg says something is missing);
#  - unpacks Debian's current 6.1 and 6.12 kernels (image, headers, kbuild)
#    into $SWNIC_CACHE/k/<kver>/ and points the tags $SWNIC_CACHE/k/6.1 and
#    $SWNIC_CACHE/k/6.12 at them. Each tree has:
#        vmlinuz                 the kernel
#        vmlinux                 the same, uncompressed (what the VM boots)
#        build                   a KDIR for `make -C build M=... modules`
#        lib/modules/<kver>/     the kernel's modules, depmod'ed
#        kver                    the kernel release string
#    When Debian moves the ABI number a new tree appears; old ones stay
#    until removed by hand.
#  - extracts kselftest_harness.h + kselftest.h into $SWNIC_CACHE/ksft/ and
#    checkpatch.pl (+ its data files) into $SWNIC_CACHE/checkpatch/ from
#    Debian's linux-source-6.1, without keeping that package around.
#
# Usage: tools/testing/setup.sh [-q]      (-q: print nothing when up to date)

set -eu
set -o pipefail

CACHE=${SWNIC_CACHE:-$HOME/.cache/swnic}
QUIET=0
[ "${1:-}" = "-q" ] && QUIET=1

# tag -> Debian metapackage whose first dependency names the current ABI.
KERNEL_TAGS="6.1:linux-headers-amd64 6.12:linux-headers-6.12-amd64"

PACKAGES="build-essential gcc-12 pkg-config perl pahole libelf1 libssl3 zlib1g
	  libfabric-dev libfabric-bin libmnl-dev libjson-c-dev openmpi-bin
	  libopenmpi-dev
	  qemu-system-x86 busybox-static kmod cpio xz-utils zstd iproute2 jq
	  procps util-linux coreutils debootstrap iputils-ping ethtool
	  gnuplot-nox
	  debhelper dh-dkms dkms lintian netpipe-openmpi
	  libibverbs-dev ibverbs-providers"

KSFT_FILES="tools/testing/selftests/kselftest_harness.h
	    tools/testing/selftests/kselftest.h"
CHECKPATCH_FILES="scripts/checkpatch.pl scripts/spelling.txt
		  scripts/const_structs.checkpatch"

APT_GET=(apt-get -o APT::Sandbox::User=root)
NTAGS=$(echo "$KERNEL_TAGS" | wc -w)

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

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

apt_updated=0
apt_update()
{
	[ "$apt_updated" = 1 ] && return 0
	log "apt-get update"
	as_root "${APT_GET[@]}" -qq update
	apt_updated=1
}

install_packages()
{
	local have missing p

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

	log "installing:$missing"
	apt_update
	# shellcheck disable=SC2086
	as_root env DEBIAN_FRONTEND=noninteractive "${APT_GET[@]}" -qq install -y \
		--no-install-recommends $missing >/dev/null
}

# apt-get download into the current directory; refresh the lists once if
# the mirror no longer has the version they name.
apt_download()
{
	"${APT_GET[@]}" -qq download "$@" 2>/dev/null && return 0
	apt_update
	"${APT_GET[@]}" -qq download "$@"
}

# The current ABI release for each tag, cached until the apt lists change.
KVERS_FILE=$CACHE/k/.kvers
resolve_kvers()
{
	local metas="" t lists=/var/lib/apt/lists

	if [ -s "$KVERS_FILE" ] && [ "$KVERS_FILE" -nt "$lists" ]; then
		return 0
	fi
	for t in $KERNEL_TAGS; do
		metas="$metas ${t#*:}"
	done
	# shellcheck disable=SC2086
	query() { apt-cache depends $metas 2>/dev/null | awk -v tags="$KERNEL_TAGS" '
		BEGIN { n = split(tags, a, " ")
			for (i = 1; i <= n; i++) { split(a[i], p, ":"); tag[p[2]] = p[1] } }
		/^[^ ]/ { cur = $1; next }
		cur in tag && /Depends: linux-headers-/ && !(cur in done) {
			sub(/.*Depends: linux-headers-/, "")
			print tag[cur], $0; done[cur] = 1 }'; }
	mkdir -p "$CACHE/k"
	query > "$KVERS_FILE.tmp"
	if [ "$(wc -l < "$KVERS_FILE.tmp")" -ne "$NTAGS" ]; then
		apt_update
		query > "$KVERS_FILE.tmp"
	fi
	[ "$(wc -l < "$KVERS_FILE.tmp")" -eq "$NTAGS" ] ||
		die "cannot resolve kernel ABIs from: $metas"
	mv "$KVERS_FILE.tmp" "$KVERS_FILE"
}

# Unpack image + headers + kbuild of one release into $CACHE/k/$kver.
unpack_kernel()
{
	local kver=$1 dir=$CACHE/k/$1 tmp deps common kbuild image f mf

	if [ -e "$dir/.complete" ]; then
		return 0
	fi
	log "unpacking kernel $kver"
	tmp=$(mktemp -d "$CACHE/k/.tmp.$kver.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT

	deps=$(apt-cache depends "linux-headers-$kver" 2>/dev/null) || true
	if [ -z "$deps" ]; then
		apt_update
		deps=$(apt-cache depends "linux-headers-$kver")
	fi
	common=$(echo "$deps" | sed -n 's/.*Depends: \(linux-headers-.*-common\)$/\1/p' | head -1)
	kbuild=$(echo "$deps" | sed -n 's/.*Depends: \(linux-kbuild-.*\)$/\1/p' | head -1)
	if [ -z "$common" ] || [ -z "$kbuild" ]; then
		die "linux-headers-$kver: cannot find its -common/kbuild packages"
	fi
	image=linux-image-$kver
	apt-cache show "$image" >/dev/null 2>&1 || image=$image-unsigned

	mkdir "$tmp/debs" "$tmp/root"
	(cd "$tmp/debs" && apt_download "$image" "linux-headers-$kver" "$common" "$kbuild")
	for f in "$tmp"/debs/*.deb; do
		dpkg-deb -x "$f" "$tmp/root"
	done
	rm -rf "$tmp/debs"

	# Debian 12 images ship /lib/modules; be ready for /usr/lib/modules.
	if [ ! -d "$tmp/root/lib/modules/$kver" ] &&
	   [ -d "$tmp/root/usr/lib/modules/$kver" ]; then
		mkdir -p "$tmp/root/lib/modules"
		mv "$tmp/root/usr/lib/modules/$kver" "$tmp/root/lib/modules/"
	fi
	[ -d "$tmp/root/lib/modules/$kver/kernel" ] || die "$image: no modules"
	[ -f "$tmp/root/boot/vmlinuz-$kver" ] || die "$image: no vmlinuz"

	# The arch headers include the common ones by absolute path.
	mf=$tmp/root/usr/src/linux-headers-$kver/Makefile
	sed -i "s|^include /usr/src/|include $dir/usr/src/|" "$mf"
	grep -q "^include $dir/usr/src/$common/Makefile" "$mf" ||
		die "unexpected $mf: $(head -3 "$mf")"
	ln -sfn "../../../usr/src/linux-headers-$kver" "$tmp/root/lib/modules/$kver/build"
	ln -sfn "../../../usr/src/$common" "$tmp/root/lib/modules/$kver/source"

	depmod -b "$tmp/root" "$kver"

	# The tree is the root of the unpacked packages, plus short names.
	ln -s "boot/vmlinuz-$kver" "$tmp/root/vmlinuz"
	ln -s "usr/src/linux-headers-$kver" "$tmp/root/build"
	echo "$kver" > "$tmp/root/kver"
	touch "$tmp/root/.complete"
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
	rm -rf "$tmp"
	trap - EXIT
}

# The uncompressed kernel, booted by qemu through its PVH entry point: this
# skips the decompressor, which takes seconds under TCG (6.1's is xz).
# Best effort: vm.sh falls back to vmlinuz without it.
extract_vmlinux()
{
	local dir=$CACHE/k/$1 img setup off len magic out

	[ -s "$dir/vmlinux" ] && return 0
	img=$dir/vmlinuz
	grep -q '^CONFIG_PVH=y' "$dir/build/.config" 2>/dev/null || return 0
	u8() { od -An -tu"$2" -j "$1" -N "$2" "$img" | tr -d ' '; }
	setup=$(u8 0x1f1 1)
	off=$(( (setup + 1) * 512 + $(u8 0x248 4) ))
	len=$(u8 0x24c 4)
	magic=$(od -An -tx1 -j "$off" -N 4 "$img" | tr -d ' ')
	payload() { dd if="$img" iflag=skip_bytes,count_bytes skip="$off" count="$1" status=none; }
	out=$dir/vmlinux.tmp
	case $magic in
	fd377a58) payload "$len" | xz -dc --single-stream > "$out" ;;
	28b52ffd) payload $((len - 4)) | zstd -qdc > "$out" ;;
	*) log "$1: kernel payload $magic: not extracting vmlinux"; return 0 ;;
	esac
	if [ "$(od -An -tx1 -N 4 "$out" | tr -d ' ')" = 7f454c46 ]; then
		mv "$out" "$dir/vmlinux"
	else
		rm -f "$out"
		log "$1: could not extract vmlinux; the VM boots vmlinuz"
	fi
}

# Point $CACHE/k/<tag> at the current tree (atomically).
link_tag()
{
	local tag=$1 kver=$2 link=$CACHE/k/$1

	[ "$(readlink "$link" 2>/dev/null)" = "$kver" ] && return 0
	ln -sfn "$kver" "$link.new"
	mv -T "$link.new" "$link"
	log "k/$tag -> $kver"
}

# The few files we need from the kernel source, without keeping the package.
extract_source_files()
{
	local f need=0 tmp src inner pats=()

	for f in $KSFT_FILES; do
		[ -s "$CACHE/ksft/${f##*/}" ] || need=1
	done
	for f in $CHECKPATCH_FILES; do
		[ -s "$CACHE/checkpatch/${f##*/}" ] || need=1
	done
	[ "$need" = 0 ] && return 0

	src=linux-source-6.1
	log "extracting kselftest harness and checkpatch from $src"
	tmp=$(mktemp -d "$CACHE/.tmp.src.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt_download "$src")
	inner=$(dpkg-deb -c "$tmp"/"$src"_*.deb | awk '
		$NF ~ /\/usr\/src\/linux-source-.*\.tar\.xz$/ && !f { print $NF; f = 1 }')
	[ -n "$inner" ] || die "$src: no source tarball inside"
	for f in $KSFT_FILES $CHECKPATCH_FILES; do
		pats+=("*/$f")
	done
	dpkg-deb --fsys-tarfile "$tmp"/"$src"_*.deb | tar -xOf - "$inner" |
		xz -dc | tar -xf - -C "$tmp" --wildcards --strip-components=1 \
			"${pats[@]}"
	mkdir -p "$CACHE/ksft" "$CACHE/checkpatch"
	for f in $KSFT_FILES; do
		install -m 0644 "$tmp/$f" "$CACHE/ksft/"
	done
	for f in $CHECKPATCH_FILES; do
		install -m 0644 "$tmp/$f" "$CACHE/checkpatch/"
	done
	chmod +x "$CACHE/checkpatch/checkpatch.pl"
	dpkg-deb -f "$tmp"/"$src"_*.deb Version > "$CACHE/checkpatch/VERSION"
	cp "$CACHE/checkpatch/VERSION" "$CACHE/ksft/VERSION"
	rm -rf "$tmp"
	trap - EXIT
}

main()
{
	local tag kver line summary=""

	install_packages
	mkdir -p "$CACHE/k"

	# One setup at a time per cache (make check in two trees, CI retries).
	exec 9> "$CACHE/.setup.lock"
	flock 9

	# The VM bind-mounts the kernel's modules on /lib/modules: the mount
	# point must exist in the (read-only) host root it boots from.
	[ -d /lib/modules ] || as_root mkdir -p /lib/modules

	resolve_kvers
	while read -r tag kver; do
		unpack_kernel "$kver"
		extract_vmlinux "$kver"
		link_tag "$tag" "$kver"
		summary="$summary $tag=$kver"
	done < "$KVERS_FILE"

	extract_source_files

	for line in $KERNEL_TAGS; do
		tag=${line%%:*}
		[ -e "$CACHE/k/$tag/build/Makefile" ] ||
			die "k/$tag: incomplete tree"
	done
	[ "$QUIET" = 1 ] || log "ready in $CACHE:$summary"
}

main
