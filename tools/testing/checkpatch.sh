#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.sh - the kernel's checkpatch.pl (from Debian's linux-source-6.1,
# cached by setup.sh) over the kernel code and the uapi headers.
#
# Usage: tools/testing/checkpatch.sh [FILE...]
#        (default: kernel/*.[ch] include/uapi/linux/*.h)
# Exit status non-zero on any error, warning or (--strict) check.

set -eu

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
CACHE=${SWNIC_CACHE:-$HOME/.cache/swnic}
CHECKPATCH=$CACHE/checkpatch/checkpatch.pl

[ -f "$CHECKPATCH" ] || { echo "checkpatch.sh: no $CHECKPATCH: run tools/testing/setup.sh" >&2; exit 2; }

cd "$REPO"
if [ $# -eq 0 ]; then
	shopt -s nullglob
	set -- kernel/*.[ch] include/uapi/linux/*.h
fi
[ $# -gt 0 ] || { echo "checkpatch.sh: nothing to check"; exit 0; }

# kernel/compat.h is the one file whose job is to test the kernel version
# (out-of-tree code supporting two kernels): there, and only there, the
# LINUX_VERSION_CODE warning and its CONSTANT_COMPARISON false positive
# are expected.
compat=() others=()
for f in "$@"; do
	if [ "$f" = kernel/compat.h ]; then compat+=("$f"); else others+=("$f"); fi
done

rc=0
if [ ${#others[@]} -gt 0 ]; then
	perl "$CHECKPATCH" --no-tree --strict --terse --show-types \
		-f "${others[@]}" || rc=$?
fi
if [ ${#compat[@]} -gt 0 ]; then
	perl "$CHECKPATCH" --no-tree --strict --terse --show-types \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON \
		-f "${compat[@]}" || rc=$?
fi
if [ "$rc" = 0 ]; then
	echo "checkpatch.sh: $# files clean"
else
	echo "checkpatch.sh: problems found in the files above" >&2
fi
exit "$rc"
