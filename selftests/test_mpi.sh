#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Open MPI (Debian's openmpi-bin) over swnic: the cm PML with the OFI MTL
# restricted to the swnic provider, 2 ranks on this host, running
# selftests/mpi/mpi_basic.c (send/recv 1 B..1 MiB with every byte checked,
# allreduce, barrier). Open MPI's OFI MTL asks for FI_REMOTE_COMM even for
# a one-host job, hence FI_SWNIC_REMOTE_COMM=1.
. "$(dirname "$0")/lib.sh"

require_cmd mpirun
prog="$SWNIC_REPO/selftests/mpi/out/mpi_basic"
[ -x "$prog" ] || skip_all "mpi_basic not built (no mpicc?)"

OUT=/tmp/test_mpi.out
# mpi REMOTE_COMM DOORBELL_ENGINE MPIRUN-ARGS...
mpi()
{
	_rc=$1 _db=$2
	shift 2
	env FI_SWNIC_REMOTE_COMM="$_rc" FI_SWNIC_DOORBELL_ENGINE="$_db" \
		OMPI_MCA_btl=self timeout 180 \
		mpirun --allow-run-as-root --oversubscribe --bind-to none \
		--mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include swnic "$@" >"$OUT" 2>&1
}

for doorbell in 0 1; do
	mode=$([ "$doorbell" = 1 ] && echo engine || echo syscall)
	if mpi 1 "$doorbell" -np 2 -x FI_SWNIC_DOORBELL_ENGINE \
		-x FI_SWNIC_REMOTE_COMM "$prog"; then
		ok "mpirun -np 2 over swnic exits 0 ($mode doorbell)"
	else
		not_ok "mpirun -np 2 over swnic exits 0 ($mode doorbell)" \
			"$(tail -5 "$OUT")"
	fi
	for n in 1 64 4096 65536 1048576; do
		check "send/recv $n bytes checked ($mode doorbell)" \
			grep -qx "ok send/recv $n bytes" "$OUT"
	done
	check "allreduce over 2 ranks ($mode doorbell)" \
		grep -qx "ok allreduce 3 over 2 ranks" "$OUT"
done

# Without the opt-in the OFI MTL finds no provider: swnic does not claim
# to reach other hosts.
if mpi 0 0 -np 2 -x FI_SWNIC_REMOTE_COMM "$prog"; then
	not_ok "without FI_SWNIC_REMOTE_COMM=1 the OFI MTL does not select swnic"
else
	ok "without FI_SWNIC_REMOTE_COMM=1 the OFI MTL does not select swnic"
fi
tap_done
