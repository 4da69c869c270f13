/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpu_util.h - put two threads of a test on CPUs of their own, for tests
 * whose subject is two CPUs working at once (a copy shared with the
 * receiver's poll): the guest's scheduler must not put both on one.
 */
#ifndef SWNIC_CPU_UTIL_H
#define SWNIC_CPU_UTIL_H

#include <pthread.h>
#include <sched.h>

/* The first two CPUs this thread may run on; how many there are (0-2). */
static inline int cpu_pick2(int cpu[2])
{
	cpu_set_t cpus;
	int n = 0;

	cpu[0] = cpu[1] = -1;
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &cpus))
			cpu[n++] = c;
	return n;
}

/* Bind the calling thread to CPU @cpu alone: 0, or an error number. */
static inline int cpu_pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

#endif /* SWNIC_CPU_UTIL_H */
