// SPDX-License-Identifier: GPL-2.0
/*
 * The engine thread must not spin on an endpoint that cannot progress:
 * an engine-mode endpoint whose TX CQ is full with more SQEs pending is
 * parked (NEED_WAKEUP) until user space rings the doorbell, and the
 * engine thread then uses no CPU. Draining the CQ and ringing the
 * doorbell completes the rest.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "mr_util.h"
#include "swnic_rings.h"

#define ENGINE_COMM	"swnic-swnic0"
#define CQ_ENTRIES	4
#define SQES		32

/* The pid of the engine thread of swnic0, or -1. */
static pid_t engine_pid(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t pid = -1;

	if (!d)
		return -1;
	while (pid < 0 && (e = readdir(d))) {
		char path[300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strcmp(comm, ENGINE_COMM "\n"))
			pid = atoi(e->d_name);
		fclose(f);
	}
	closedir(d);
	return pid;
}

/* utime + stime of @pid in clock ticks, or -1. */
static long cpu_ticks(pid_t pid)
{
	unsigned long utime, stime;
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* After comm: state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime.
	 */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &utime, &stime) != 2)
		return -1;
	return utime + stime;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t cq_used(struct t_cq *cq)
{
	return atomic_load(cq->ring.tail) - atomic_load(cq->ring.head);
}

/* Ring the doorbell if the engine asked for it. */
static int kick(struct t_ep *ep)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(ep->sq.flags) & SWNIC_RING_F_NEED_WAKEUP)
		return t_doorbell(ep, NULL);
	return 0;
}

TEST(stuck_endpoint_does_not_spin)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	struct t_cq txcq = {}, rxcq = {};
	struct t_ep a = {}, gone = {};
	struct swnic_cqe c;
	char msg[16] = "nobody home";
	long t0, t1, hz = sysconf(_SC_CLK_TCK), deadline;
	pid_t pid;
	int i, done;

	if (dom < 0)
		SKIP(return, "no %s (module not loaded)", DEV_PATH);
	pid = engine_pid();
	ASSERT_LT(0, pid) TH_LOG("no %s thread", ENGINE_COMM);
	ASSERT_EQ(0, t_cq_create(dom, CQ_ENTRIES, &txcq));
	ASSERT_EQ(0, t_cq_create(dom, 64, &rxcq));
	ASSERT_EQ(CQ_ENTRIES, txcq.ring.entries);
	/* A port nobody listens on: every send fails with a CQE. */
	ASSERT_EQ(0, t_ep_create(dom, &rxcq, &rxcq, SWNIC_EP_F_DB_SYSCALL, 0,
				 16, &gone));
	t_ep_destroy(&gone);
	ASSERT_EQ(0, t_ep_create(dom, &txcq, &rxcq, SWNIC_EP_F_DB_ENGINE, 0,
				 64, &a));
	for (i = 0; i < SQES; i++) {
		struct swnic_sqe s = t_send(msg, sizeof(msg), &gone, i);

		ASSERT_EQ(0, t_ring_push(&a.sq, &s));
	}
	ASSERT_EQ(0, kick(&a));

	/* The engine fills the CQ and stops with SQEs left. */
	deadline = now_ms() + 10000;
	while (cq_used(&txcq) < CQ_ENTRIES && now_ms() < deadline)
		usleep(1000);
	ASSERT_EQ(CQ_ENTRIES, cq_used(&txcq));
	usleep(300000);
	ASSERT_NE(atomic_load(a.sq.head), atomic_load(a.sq.tail));
	ASSERT_EQ(CQ_ENTRIES, cq_used(&txcq));

	/* It waits for a doorbell: no CPU meanwhile. */
	t0 = cpu_ticks(pid);
	ASSERT_LE(0, t0);
	sleep(2);
	t1 = cpu_ticks(pid);
	TH_LOG("engine thread: %ld ticks of CPU in 2 s (%ld/s)", t1 - t0, hz);
	EXPECT_GT(hz / 5, t1 - t0);
	EXPECT_TRUE(atomic_load(a.sq.flags) & SWNIC_RING_F_NEED_WAKEUP);

	/* Room in the CQ and a doorbell: the rest completes. */
	done = 0;
	deadline = now_ms() + 20000;
	while (done < SQES && now_ms() < deadline) {
		int popped = 0;

		while (t_cq_pop(&txcq, &c)) {
			EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
			EXPECT_EQ(ECONNREFUSED, c.err);
			EXPECT_EQ((uint64_t)done, c.context);
			done++;
			popped++;
		}
		if (!popped) {
			usleep(1000);
			continue;
		}
		ASSERT_EQ(0, t_doorbell(&a, NULL));
	}
	EXPECT_EQ(SQES, done);
	EXPECT_EQ(atomic_load(a.sq.tail), atomic_load(a.sq.head));

	t_ep_destroy(&a);
	close(txcq.fd);
	close(rxcq.fd);
	close(dom);
}

/*
 * Parked, an endpoint still gets new entries in through the NEED_WAKEUP
 * protocol: post, full barrier, doorbell if the flag is set. Many rounds
 * of "fill the CQ, drain it, post more" must all complete.
 */
TEST(parked_endpoint_wakes_for_new_entries)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	struct t_cq txcq = {}, rxcq = {};
	struct t_ep a = {}, gone = {};
	struct swnic_cqe c;
	char msg[16] = "nobody home";
	long deadline;
	int posted = 0, done = 0;

	if (dom < 0)
		SKIP(return, "no %s (module not loaded)", DEV_PATH);
	ASSERT_EQ(0, t_cq_create(dom, CQ_ENTRIES, &txcq));
	ASSERT_EQ(0, t_cq_create(dom, 64, &rxcq));
	ASSERT_EQ(0, t_ep_create(dom, &rxcq, &rxcq, SWNIC_EP_F_DB_SYSCALL, 0,
				 16, &gone));
	t_ep_destroy(&gone);
	ASSERT_EQ(0, t_ep_create(dom, &txcq, &rxcq, SWNIC_EP_F_DB_ENGINE, 0,
				 16, &a));
	deadline = now_ms() + 60000;
	while (done < 2000 && now_ms() < deadline) {
		int popped = 0;

		while (posted - done < 12) {
			struct swnic_sqe s = t_send(msg, sizeof(msg), &gone,
						    posted);

			if (t_ring_push(&a.sq, &s))
				break;
			posted++;
		}
		ASSERT_EQ(0, kick(&a));
		while (t_cq_pop(&txcq, &c)) {
			EXPECT_EQ((uint64_t)done, c.context);
			done++;
			popped++;
		}
		/* Slots freed: the provider's doorbell (lib/cq.c). */
		if (popped && atomic_load(a.sq.head) != atomic_load(a.sq.tail))
			ASSERT_EQ(0, t_doorbell(&a, NULL));
		if (!popped)
			usleep(100);
	}
	EXPECT_LE(2000, done);
	t_ep_destroy(&a);
	close(txcq.fd);
	close(rxcq.fd);
	close(dom);
}

TEST_HARNESS_MAIN
