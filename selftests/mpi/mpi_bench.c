// SPDX-License-Identifier: GPL-2.0
/*
 * A 2-rank MPI benchmark for make bench (tools/testing/bench.sh), in the
 * manner of the OSU micro-benchmarks: for each message size,
 *
 *   pingpong SIZE USEC MBPS   blocking send/recv ping-pong between ranks 0
 *                             and 1: one-way latency, and SIZE / latency
 *   bw SIZE - MBPS            ranks 0 -> 1: a window of WINDOW
 *                             MPI_Isend/MPI_Irecv, then a 1-byte ack
 *   allreduce SIZE USEC -     MPI_Allreduce (MPI_SUM of doubles, every
 *                             rank) of SIZE bytes: time per call
 *
 * each line printed by rank 0. The received data of the first iteration
 * of every size is checked; a wrong byte aborts the job.
 *
 * Usage: mpi_bench [-m MAX-SIZE] [-s SIZES,...] [-n ITER-SCALE]
 *   -s  the sizes (bytes, comma separated; default 8,64,...,MAX by 8x)
 *   -m  the largest default size (default 1 MiB)
 *   -n  iterations in percent of the defaults (default 100), which are
 *       bounded for a slow (emulated) machine
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW		16
#define MAX_SIZES	32

static int rank;

static void die(const char *what)
{
	fprintf(stderr, "mpi_bench: rank %d: %s\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static int iters(long size, int scale)
{
	int n;

	if (size <= 4096)
		n = 1000;
	else if (size <= 65536)
		n = 200;
	else if (size <= 1 << 20)
		n = 30;
	else
		n = 5;
	n = n * scale / 100;
	return n < 2 ? 2 : n;
}

static void fill(char *p, long n, int seed)
{
	for (long i = 0; i < n; i++)
		p[i] = (char)(i * 7 + seed);
}

static void verify(const char *p, long n, int seed, const char *what)
{
	for (long i = 0; i < n; i++)
		if (p[i] != (char)(i * 7 + seed))
			die(what);
}

static void pingpong(char *sbuf, char *rbuf, long size, int n)
{
	int peer = rank ^ 1;
	double t0 = 0;

	for (int i = -1; i < n; i++) {	/* i == -1: warm-up, checked */
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0) {
			MPI_Send(sbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, 1,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, 1,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
		}
		if (i == -1 && rank < 2)
			verify(rbuf, size, 1, "pingpong: wrong data");
	}
	if (rank == 0) {
		double us = (MPI_Wtime() - t0) * 1e6 / n / 2;

		printf("pingpong %ld %.2f %.2f\n", size, us, size / us);
	}
}

static void bandwidth(char *sbuf, char *rbuf, long size, int n)
{
	MPI_Request req[WINDOW];
	int peer = rank ^ 1;
	char ack = 0;
	double t0 = 0;

	for (int i = -1; i < n; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 2,
					  MPI_COMM_WORLD, &req[w]);
			MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			/* One buffer per request: each is checked. */
			for (int w = 0; w < WINDOW; w++)
				MPI_Irecv(rbuf + (i == -1 ? w * size : 0),
					  (int)size, MPI_CHAR, peer, 2,
					  MPI_COMM_WORLD, &req[w]);
			MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
			if (i == -1)
				for (int w = 0; w < WINDOW; w++)
					verify(rbuf + w * size, size, 1,
					       "bw: wrong data");
			MPI_Send(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
		}
	}
	if (rank == 0) {
		double s = MPI_Wtime() - t0;

		printf("bw %ld - %.2f\n", size, (double)size * WINDOW * n / s / 1e6);
	}
}

static void allreduce(double *in, double *out, long size, int n, int nranks)
{
	long cnt = size / (long)sizeof(double);
	double t0 = 0;

	if (cnt < 1)
		cnt = 1;
	for (long i = 0; i < cnt; i++)
		in[i] = (double)(rank + 1) * (double)(i % 100);
	for (int i = -1; i < n; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		MPI_Allreduce(in, out, (int)cnt, MPI_DOUBLE, MPI_SUM,
			      MPI_COMM_WORLD);
		if (i == -1) {
			double f = (double)nranks * (nranks + 1) / 2;

			for (long j = 0; j < cnt; j++)
				if (out[j] != f * (double)(j % 100))
					die("allreduce: wrong sum");
		}
	}
	if (rank == 0)
		printf("allreduce %ld %.2f -\n", cnt * (long)sizeof(double),
		       (MPI_Wtime() - t0) * 1e6 / n);
}

int main(int argc, char **argv)
{
	long sizes[MAX_SIZES], max = 1 << 20, big = 0;
	int nsizes = 0, scale = 100, nranks, opt;
	char *sbuf, *rbuf, *s;
	double *din, *dout;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "m:s:n:")) != -1) {
		switch (opt) {
		case 'm':
			max = atol(optarg);
			break;
		case 's':
			for (s = strtok(optarg, ","); s && nsizes < MAX_SIZES;
			     s = strtok(NULL, ","))
				sizes[nsizes++] = atol(s);
			break;
		case 'n':
			scale = atoi(optarg);
			break;
		default:
			die("usage: mpi_bench [-m MAX] [-s SIZES] [-n SCALE]");
		}
	}
	if (nranks < 2)
		die("needs 2 ranks");
	if (!nsizes)
		for (long n = 8; n <= max && nsizes < MAX_SIZES; n *= 8)
			sizes[nsizes++] = n;
	for (int i = 0; i < nsizes; i++) {
		if (sizes[i] < 1 || sizes[i] > 1L << 28 || scale < 1)
			die("bad size or scale");
		if (sizes[i] > big)
			big = sizes[i];
	}
	sbuf = malloc(big);
	rbuf = malloc(big * WINDOW);
	din = malloc(big < 8 ? 8 : big);
	dout = malloc(big < 8 ? 8 : big);
	if (!sbuf || !rbuf || !din || !dout)
		die("out of memory");
	fill(sbuf, big, 1);

	if (rank == 0)
		printf("# mpi_bench: %d ranks, window %d\n", nranks, WINDOW);
	for (int i = 0; i < nsizes; i++)
		pingpong(sbuf, rbuf, sizes[i], iters(sizes[i], scale));
	for (int i = 0; i < nsizes; i++)
		bandwidth(sbuf, rbuf, sizes[i], iters(sizes[i], scale));
	for (int i = 0; i < nsizes; i++)
		allreduce(din, dout, sizes[i], iters(sizes[i], scale), nranks);
	fflush(stdout);
	free(sbuf);
	free(rbuf);
	free(din);
	free(dout);
	MPI_Finalize();
	return 0;
}
