#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_wire_mpi.sh - Open MPI across two hosts over swnic's wire: two
# network namespaces joined by veth, a swnic device in each bound to its
# end, and a 2-rank job (cm PML, OFI MTL, provider swnic) with one rank in
# each namespace - mpirun in the first launches the second rank's daemon
# in the other namespace through selftests/wire/netns-rsh, as it would
# over ssh. The ranks run selftests/mpi/mpi_basic.c (send/recv 1 B..1 MiB
# every byte checked, allreduce, barrier). FI_REMOTE_COMM comes from the
# bound devices: no FI_SWNIC_REMOTE_COMM.
#
# swnic-timeout: 600

. "$(dirname "$0")/lib.sh"

require_cmd mpirun ip swnic
prog="$SWNIC_REPO/selftests/mpi/out/mpi_basic"
[ -x "$prog" ] || skip_all "mpi_basic not built (no mpicc?)"
# Open MPI 5's launcher (PRRTE) maps both ranks onto one node when the
# nodes are namespaces of one machine (it sees one host and its slots):
# the job would not cross. Open MPI across hosts is tested with Debian
# 12's Open MPI 4.1: here and between two VMs (tools/testing/two-vm.sh).
case $(mpirun --version 2>/dev/null | head -1) in
*"Open MPI) "[5-9]*) skip_all "Open MPI 5 (PRRTE) does not place ranks on namespaces of one machine" ;;
esac
OUT=/tmp/test_wire_mpi.out
cleanup()
{
	wire_pair_del
}
trap cleanup EXIT

wire_pair m 10.80.0

rm -f /tmp/netns-rsh.log
for doorbell in 0 1; do
	mode=$([ "$doorbell" = 1 ] && echo engine || echo syscall)
	# The launcher agent and the daemons' network: Open MPI 4 (orted)
	# and 5 (PRRTE's prted) name them differently.
	if $A env FI_SWNIC_DOORBELL_ENGINE=$doorbell OMPI_MCA_btl=self \
		OMPI_MCA_plm_rsh_agent="$SWNIC_REPO/selftests/wire/netns-rsh" \
		PRTE_MCA_plm_ssh_agent="$SWNIC_REPO/selftests/wire/netns-rsh" \
		OMPI_MCA_oob_tcp_if_include=10.80.0.0/24 \
		PRTE_MCA_prte_if_include=10.80.0.0/24 \
		timeout 300 mpirun --allow-run-as-root --bind-to none \
		--host $ADDR_A:1,$ADDR_B:1 -np 2 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include swnic \
		-x FI_SWNIC_DOORBELL_ENGINE -x FI_PROVIDER_PATH -x PATH \
		"$prog" >"$OUT" 2>&1; then
		ok "mpirun -np 2 across two hosts over swnic exits 0 ($mode doorbell)"
	else
		not_ok "mpirun -np 2 across two hosts over swnic exits 0 ($mode doorbell)" \
			"$(tail -8 "$OUT")"
	fi
	for n in 1 64 4096 65536 1048576; do
		check "send/recv $n bytes across, checked ($mode doorbell)" \
			grep -qx "ok send/recv $n bytes" "$OUT"
	done
	check "allreduce over 2 ranks on 2 hosts ($mode doorbell)" \
		grep -qx "ok allreduce 3 over 2 ranks" "$OUT"
done
check "the second rank ran in the other namespace" \
	grep -qx "$ADDR_B swnicmb" /tmp/netns-rsh.log
tap_done
