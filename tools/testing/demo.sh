#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - show swnic at work; runs inside the VM (make demo:
# tools/testing/vm.sh --kernel $(K) -- tools/testing/demo.sh).
#
# Each step is printed as "$ command" and run; the exit status is 0 only if
# every step succeeded.

set -u

failed=0

step()
{
	printf '\n$ %s\n' "$1"
	if ! bash -c "$1"; then
		printf '!! failed: %s\n' "$1"
		failed=$((failed + 1))
	fi
}

echo "swnic demo on $(uname -r)"

# The module, its char devices, the management tool, the provider.
step 'lsmod | grep swnic'
step 'ls -l /dev/swnic*'
step 'swnic dev show'
step 'fi_info -p swnic'

# Data path, once it exists: a ping-pong between two processes over the
# provider (server in the background, client to it), e.g.
#   step 'fi_pingpong -p swnic -e rdm -I 100 & sleep 1; fi_pingpong -p swnic -e rdm -I 100 localhost; wait'

echo
if [ "$failed" = 0 ]; then
	echo "demo: all steps succeeded"
else
	echo "demo: $failed step(s) failed"
fi
[ "$failed" = 0 ]
