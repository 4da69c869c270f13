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

# The data path: Debian's fi_pingpong, server in the background and client
# to it, two processes exchanging over the kernel's rings (data checked).
pingpong='fi_pingpong -p swnic -e rdm -c -I 1000 -S 4096'
step "$pingpong -B 27600 >/tmp/srv.log 2>&1 &
for i in \$(seq 300); do ss -Hltn 'sport = :27600' | grep -q . && break; sleep 0.1; done
$pingpong -P 27600 127.0.0.1 && wait"

# The same over a connection (FI_EP_MSG): passive endpoint, connect/accept.
pingpong='fi_pingpong -p swnic -e msg -c -I 1000 -S 4096'
step "$pingpong -B 27601 >/tmp/srv.log 2>&1 &
for i in \$(seq 300); do ss -Hltn 'sport = :27601' | grep -q . && break; sleep 0.1; done
$pingpong -P 27601 127.0.0.1 && wait"

# What the kernel saw: the domains and their counters, then the MRs.
step 'swnic stat show dev swnic0'

# Open MPI over swnic: 2 ranks, send/recv and allreduce checked.
step 'FI_SWNIC_REMOTE_COMM=1 OMPI_MCA_btl=self mpirun --allow-run-as-root \
	--oversubscribe -np 2 -x FI_SWNIC_REMOTE_COMM --mca pml cm --mca mtl ofi \
	--mca mtl_ofi_provider_include swnic selftests/mpi/out/mpi_basic'

echo
if [ "$failed" = 0 ]; then
	echo "demo: all steps succeeded"
else
	echo "demo: $failed step(s) failed"
fi
[ "$failed" = 0 ]
