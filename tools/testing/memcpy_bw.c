// SPDX-License-Identifier: GPL-2.0
/*
 * The ceiling for a one-copy transport: memcpy bandwidth of SIZE-byte
 * buffers (default 1 MiB), in MB/s (10^6 bytes/s, as fi_pingpong reports),
 * median of 5 runs of enough copies to take ~100 ms each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	char *src = malloc(size), *dst = malloc(size);
	double runs[5];
	unsigned long n = 1;

	if (!src || !dst || !size)
		return 1;
	memset(src, 1, size);
	memset(dst, 2, size);
	/* Calibrate: double the copies until one run takes >= 100 ms. */
	for (;;) {
		double t = now();

		for (unsigned long i = 0; i < n; i++) {
			memcpy(dst, src, size);
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		if (now() - t >= 0.1)
			break;
		n *= 2;
	}
	for (int r = 0; r < 5; r++) {
		double t = now();

		for (unsigned long i = 0; i < n; i++) {
			memcpy(dst, src, size);
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		runs[r] = (double)size * n / (now() - t) / 1e6;
	}
	qsort(runs, 5, sizeof(runs[0]), cmp);
	printf("%.0f\n", runs[2]);
	free(src);
	free(dst);
	return 0;
}
