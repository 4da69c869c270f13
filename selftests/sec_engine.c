// SPDX-License-Identifier: GPL-2.0
/*
 * The engine must not spin on an endpoint that cannot progress: an
 * engine-mode endpoint whose TX CQ is full with more SQEs pending is
 * parked (NEED_WAKEUP) until user space rings the doorbell, and the
 * engine then uses no CPU. Draining the CQ and ringing the
 * doorbell completes the rest.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cpu_util.h"
#include "mr_util.h"
#include "swnic_rings.h"

#define CQ_ENTRIES	4
#define SQES		32

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

/*
 * Room in @a's TX CQ and a doorbell each time: the SQ's rest completes,
 * in order (and @refused: ECONNREFUSED). Return: completions read.
 */
static int drain_ringing(struct __test_metadata *_metadata, struct t_ep *a,
			 struct t_cq *txcq, bool refused)
{
	long deadline = now_ms() + 20000;
	struct swnic_cqe c;
	int done = 0;

	while (done < SQES && now_ms() < deadline) {
		int popped = 0;

		while (t_cq_pop(txcq, &c)) {
			if (refused) {
				EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
				EXPECT_EQ(ECONNREFUSED, c.err);
			}
			EXPECT_EQ((uint64_t)done, c.context);
			done++;
			popped++;
		}
		if (!popped) {
			usleep(1000);
			continue;
		}
		EXPECT_EQ(0, t_doorbell(a, NULL));
	}
	return done;
}

/*
 * An engine endpoint @a (a TX CQ of CQ_ENTRIES, an SQ of @sq entries) and
 * @gone, a port nobody listens on: every send to it fails with a CQE.
 * @sends of them (contexts 0 on) are in @a's SQ, no doorbell rung yet.
 */
static void engine_ep(struct __test_metadata *_metadata, int dom,
		      struct t_cq *txcq, struct t_cq *rxcq, struct t_ep *a,
		      struct t_ep *gone, uint32_t sq, int sends)
{
	static const char msg[16] = "nobody home";

	ASSERT_EQ(0, t_cq_create(dom, CQ_ENTRIES, txcq));
	ASSERT_EQ(0, t_cq_create(dom, 64, rxcq));
	ASSERT_EQ(CQ_ENTRIES, txcq->ring.entries);
	ASSERT_EQ(0, t_ep_create(dom, rxcq, rxcq, SWNIC_EP_F_DB_SYSCALL, 0,
				 16, gone));
	t_ep_destroy(gone);
	ASSERT_EQ(0, t_ep_create(dom, txcq, rxcq, SWNIC_EP_F_DB_ENGINE, 0,
				 sq, a));
	for (int i = 0; i < sends; i++) {
		struct swnic_sqe s = t_send(msg, sizeof(msg), gone, i);

		ASSERT_EQ(0, t_ring_push(&a->sq, &s));
	}
}

TEST(stuck_endpoint_does_not_spin)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	struct t_cq txcq = {}, rxcq = {};
	struct t_ep a = {}, gone = {};
	long t0, t1, hz = sysconf(_SC_CLK_TCK), deadline;

	if (dom < 0)
		SKIP(return, "no %s (module not loaded)", DEV_PATH);
	engine_ep(_metadata, dom, &txcq, &rxcq, &a, &gone, 64, SQES);
	ASSERT_EQ(0, kick(&a));

	/* The engine fills the CQ and stops with SQEs left. */
	deadline = now_ms() + 10000;
	while (cq_used(&txcq) < CQ_ENTRIES && now_ms() < deadline)
		usleep(1000);
	ASSERT_EQ(CQ_ENTRIES, cq_used(&txcq));
	usleep(300000);
	ASSERT_NE(atomic_load(a.sq.head), atomic_load(a.sq.tail));
	ASSERT_EQ(CQ_ENTRIES, cq_used(&txcq));

	/*
	 * It waits for a doorbell: no CPU meanwhile. Sleeping here, the
	 * guest is idle but for that: less than a quarter of a CPU over
	 * 2 s, where an engine that spins keeps one CPU busy (2 s of CPU).
	 */
	t0 = cpu_ticks_all();
	ASSERT_LE(0, t0);
	sleep(2);
	t1 = cpu_ticks_all();
	TH_LOG("all CPUs: %ld ticks busy in 2 s (%ld/s)", t1 - t0, hz);
	EXPECT_GT(hz / 2, t1 - t0);
	EXPECT_TRUE(atomic_load(a.sq.flags) & SWNIC_RING_F_NEED_WAKEUP);

	/* Room in the CQ and a doorbell: the rest completes. */
	EXPECT_EQ(SQES, drain_ringing(_metadata, &a, &txcq, true));
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
	engine_ep(_metadata, dom, &txcq, &rxcq, &a, &gone, 16, 0);
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

/*
 * Moves an SQ's tail between two values that hold entries each time the
 * engine starts to park the endpoint, until told.
 */
struct flipper {
	struct t_ep *ep;
	uint32_t tail;			/* the real one: tail - 1 is the other */
	atomic_int mark;		/* 1: the test's window starts */
	atomic_int stop;
	long cpu_ms;			/* its own CPU time in that window */
};

static long thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *flip(void *arg)
{
	struct flipper *f = arg;
	unsigned long i = 0;
	long from = -1;

	while (!atomic_load(&f->stop)) {
		if (from < 0 && atomic_load(&f->mark))
			from = thread_cpu_ms();
		/*
		 * The engine is parking it (the flag appears first, then it
		 * looks at the tail): clear the flag, move the tail.
		 */
		if (atomic_load(f->ep->sq.flags) & SWNIC_RING_F_NEED_WAKEUP) {
			atomic_store(f->ep->sq.flags, 0);
			atomic_store(f->ep->sq.tail, f->tail - (++i & 1));
		}
	}
	atomic_store(f->ep->sq.tail, f->tail);
	f->cpu_ms = from < 0 ? 0 : thread_cpu_ms() - from;
	return NULL;
}

/*
 * A producer index moved back and forth is no work: an endpoint that
 * cannot progress (its TX CQ full) whose owner flips its SQ's tail
 * between two values, both with entries the engine already saw, each
 * time the engine starts to park it, is parked all the same. Before, a
 * flip counted as new entries, and the domain's engine - a kernel
 * worker, its CPU nobody's - polled for as long as a thread of the owner
 * watched and flipped.
 */
TEST(flipped_tail_is_no_work)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	struct t_cq txcq = {}, rxcq = {};
	struct t_ep a = {}, gone = {};
	struct flipper f = { .ep = &a };
	long t0, t1, hz = sysconf(_SC_CLK_TCK), deadline, others;
	pthread_t t;

	if (dom < 0)
		SKIP(return, "no %s (module not loaded)", DEV_PATH);
	engine_ep(_metadata, dom, &txcq, &rxcq, &a, &gone, 64, SQES);
	/* Flipping from the start: an engine that never parked. */
	f.tail = atomic_load(a.sq.tail);
	ASSERT_EQ(0, pthread_create(&t, NULL, flip, &f));
	ASSERT_EQ(0, t_doorbell(&a, NULL));
	deadline = now_ms() + 10000;
	while (cq_used(&txcq) < CQ_ENTRIES && now_ms() < deadline)
		usleep(1000);
	ASSERT_EQ(CQ_ENTRIES, cq_used(&txcq));
	ASSERT_LT(atomic_load(a.sq.head) + 1, f.tail);

	/* The guest's CPU over 2 s, but the flipper's own: the engine's. */
	t0 = cpu_ticks_all();
	ASSERT_LE(0, t0);
	atomic_store(&f.mark, 1);
	sleep(2);
	atomic_store(&f.stop, 1);
	pthread_join(t, NULL);
	t1 = cpu_ticks_all();
	others = t1 - t0 - f.cpu_ms * hz / 1000;
	TH_LOG("flipper %ld ms of CPU, the rest %ld ticks (%ld/s)", f.cpu_ms,
	       others, hz);
	EXPECT_GT(hz / 2, others);

	/* Room in the CQ and a doorbell: the rest completes. */
	EXPECT_EQ(SQES, drain_ringing(_metadata, &a, &txcq, false));
	t_ep_destroy(&a);
	close(txcq.fd);
	close(rxcq.fd);
	close(dom);
}

TEST_HARNESS_MAIN
