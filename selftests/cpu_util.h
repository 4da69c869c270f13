/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpu_util.h - for tests whose subject is CPUs at work: how busy the guest
 * is (cpu_ticks_all: a kernel worker that spins), and two CPUs working at
 * once (a copy shared with the receiver's poll): put two threads on CPUs
 * of their own, so the guest's scheduler never puts both on one, and hold
 * one of them back (cpu_slow) so that the other surely runs while it is
 * midway.
 */
#ifndef SWNIC_CPU_UTIL_H
#define SWNIC_CPU_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys_util.h"

/*
 * CPU time spent by every task of the guest, in clock ticks (/proc/stat:
 * user, nice, system, irq, softirq), or -1. A domain's engine runs in a
 * workqueue's worker, not in a thread of its own: an engine spinning
 * shows here as a CPU busy all along.
 */
static inline long cpu_ticks_all(void)
{
	unsigned long long v[7];
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6]);
	fclose(f);
	if (n != 7)
		return -1;
	/* user nice system idle iowait irq softirq: all but idle, iowait */
	return (long)(v[0] + v[1] + v[2] + v[5] + v[6]);
}

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

/*
 * A thread held to a millisecond of CPU time per 20 ms: cgroup v2's
 * cpu.max on a threaded cgroup of this process's own. A call that copies
 * for longer in the kernel is stopped midway (at the copy's next
 * rescheduling point) for the rest of the period, whatever the host does
 * with the guest's vCPUs meanwhile - so a thread on another CPU that is
 * to take part in that copy surely runs while it is half done. Whether it
 * would without being held back depends on the host: in a loaded VM a
 * vCPU may not run for milliseconds, longer than a whole copy takes.
 */
struct cpu_slow {
	char mnt[32];		/* our cgroup2 mount */
	char home[160];		/* the process's cgroup before, under it */
	char dom[64];		/* the process's cgroup */
	char slow[80];		/* its threaded child, with cpu.max */
};

static inline int cpu_slow_write(const char *dir, const char *file,
				 const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return sys_write_str(path, val);
}

static inline int cpu_slow_move(const char *dir, const char *file, long id)
{
	char v[24];

	snprintf(v, sizeof(v), "%ld", id);
	return cpu_slow_write(dir, file, v);
}

/* Where this process's cgroup is under our mount ("0::PATH"). */
static inline void cpu_slow_home(struct cpu_slow *cs)
{
	char line[128];
	FILE *f = fopen("/proc/self/cgroup", "re");

	cs->home[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::/", 4)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(cs->home, sizeof(cs->home), "%s%s", cs->mnt,
				 line + 3);
			break;
		}
	fclose(f);
}

/* Undo what cpu_slow_init() did, from any point of it. */
static inline void cpu_slow_fini(struct cpu_slow *cs)
{
	if (!cs->mnt[0])
		return;
	/* Back where it was (a service's cgroup on a host), else the root. */
	if (!cs->home[0] ||
	    cpu_slow_move(cs->home, "cgroup.procs", getpid()))
		cpu_slow_move(cs->mnt, "cgroup.procs", getpid());
	rmdir(cs->slow);
	rmdir(cs->dom);
	umount2(cs->mnt, MNT_DETACH);
	rmdir(cs->mnt);
	cs->mnt[0] = 0;
}

/*
 * Move this process into a cgroup of its own with a held-back child for
 * cpu_slow_enter(). Return: 0, or a negative errno (no cgroup2 with the
 * cpu controller here; @what says which step failed).
 */
static inline int cpu_slow_init(struct cpu_slow *cs, const char **what)
{
	int ret;

	memset(cs, 0, sizeof(*cs));
	strcpy(cs->mnt, "/tmp/swnic-cg.XXXXXX");
	*what = "mkdtemp";
	if (!mkdtemp(cs->mnt)) {
		cs->mnt[0] = 0;
		return -errno;
	}
	*what = "mount cgroup2";
	if (mount("cgroup2", cs->mnt, "cgroup2", 0, NULL)) {
		ret = -errno;
		rmdir(cs->mnt);
		cs->mnt[0] = 0;
		return ret;
	}
	cpu_slow_home(cs);
	snprintf(cs->dom, sizeof(cs->dom), "%s/swnic-%d", cs->mnt, getpid());
	snprintf(cs->slow, sizeof(cs->slow), "%s/slow", cs->dom);
	*what = "the cpu controller";
	ret = cpu_slow_write(cs->mnt, "cgroup.subtree_control", "+cpu");
	if (!ret) {
		*what = "mkdir";
		if (mkdir(cs->dom, 0755) || mkdir(cs->slow, 0755))
			ret = -errno;
	}
	if (!ret) {
		*what = "a threaded cgroup";
		ret = cpu_slow_write(cs->slow, "cgroup.type", "threaded");
	}
	if (!ret) {
		*what = "moving the process";
		ret = cpu_slow_move(cs->dom, "cgroup.procs", getpid());
	}
	if (!ret) {
		*what = "the cpu controller below";
		ret = cpu_slow_write(cs->dom, "cgroup.subtree_control",
				     "+cpu");
	}
	if (!ret) {
		*what = "cpu.max";
		ret = cpu_slow_write(cs->slow, "cpu.max", "1000 20000");
	}
	if (ret)
		cpu_slow_fini(cs);
	return ret;
}

/*
 * Hold the calling thread back from now on; threads it creates meanwhile
 * are held back too. Return: 0, or a negative errno.
 */
static inline int cpu_slow_enter(struct cpu_slow *cs)
{
	return cpu_slow_move(cs->slow, "cgroup.threads", gettid());
}

/* How many times the held-back cgroup was stopped so far; -1: unknown. */
static inline long cpu_slow_throttled(struct cpu_slow *cs)
{
	char path[128], line[64];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", cs->slow);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nr_throttled %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Let the calling thread run freely again. */
static inline int cpu_slow_leave(struct cpu_slow *cs)
{
	return cpu_slow_move(cs->dom, "cgroup.threads", gettid());
}

#endif /* SWNIC_CPU_UTIL_H */
