// SPDX-License-Identifier: GPL-2.0
/*
 * Counters of the swnic provider (fi_cntr(3)): values and error values,
 * fi_cntr_wait (threshold met, timeout, woken by another thread, ended by
 * an error), wait objects (FD with poll() and fi_trywait, MUTEX_COND),
 * operation flags, attribute checks, cntr_cnt from the kernel, and exact
 * sums from concurrent threads, a counter outliving the endpoints and
 * CQs it counted from, and a blocked fi_cntr_wait woken by the kernel
 * counting a peer's RMA writes at the target - the peer's host's counter
 * across (SWNIC_PROV_PEER_NETNS, prov_open_peer()), so the writes and the
 * wake-up come over the wire - whether the counter is bound to the
 * target endpoint or only to the written MR (fi_mr_bind, FI_RMA_EVENT:
 * no CQ to progress). A thread in fi_cntr_wait on an fd (or unspecified)
 * wait object sleeps until something changes: it is switched out a few
 * times, not once a millisecond.
 */
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "prov_util.h"

FIXTURE(cntr)
{
	struct prov_ctx ctx;
	struct fid_cntr *cntr;
};

FIXTURE_SETUP(cntr)
{
	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&self->ctx, NULL));
	self->cntr = NULL;
}

FIXTURE_TEARDOWN(cntr)
{
	if (self->cntr)
		fi_close(&self->cntr->fid);
	prov_close(&self->ctx);
}

static int open_cntr(FIXTURE_DATA(cntr) *self, enum fi_wait_obj wait)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = wait,
	};

	return fi_cntr_open(self->ctx.domain, &attr, &self->cntr, NULL);
}

/* The calling thread's voluntary context switches so far. */
static long thread_sleeps(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/*
 * Most a waiter with the kernel counter's fd sleeps in 100 ms or more:
 * it looks again every 50 ms at most (lib/cntr.c), more when woken. A
 * waiter that polls every millisecond is switched out 100 times or more.
 */
#define SLEEPS_MAX	30

TEST_F(cntr, values)
{
	ASSERT_EQ(0, open_cntr(self, FI_WAIT_NONE));
	EXPECT_EQ(FI_CLASS_CNTR, self->cntr->fid.fclass);
	EXPECT_EQ(0, fi_cntr_read(self->cntr));
	EXPECT_EQ(0, fi_cntr_readerr(self->cntr));
	EXPECT_EQ(0, fi_cntr_add(self->cntr, 5));
	EXPECT_EQ(0, fi_cntr_add(self->cntr, 7));
	EXPECT_EQ(12, fi_cntr_read(self->cntr));
	EXPECT_EQ(0, fi_cntr_set(self->cntr, 100));
	EXPECT_EQ(100, fi_cntr_read(self->cntr));
	EXPECT_EQ(0, fi_cntr_adderr(self->cntr, 2));
	EXPECT_EQ(2, fi_cntr_readerr(self->cntr));
	EXPECT_EQ(0, fi_cntr_seterr(self->cntr, 9));
	EXPECT_EQ(9, fi_cntr_readerr(self->cntr));
	/* The two values are independent. */
	EXPECT_EQ(100, fi_cntr_read(self->cntr));
	EXPECT_EQ(0, fi_cntr_set(self->cntr, UINT64_MAX));
	EXPECT_EQ(0, fi_cntr_add(self->cntr, 1));
	EXPECT_EQ(0, fi_cntr_read(self->cntr));
}

TEST_F(cntr, default_attr_and_errors)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *c;

	/* NULL attributes: a counter without a wait object. */
	ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, NULL, &self->cntr, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_cntr_wait(self->cntr, 1, 10));
	attr.events = 5;
	EXPECT_EQ(-FI_EINVAL, fi_cntr_open(self->ctx.domain, &attr, &c, NULL));
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.flags = 1;
	EXPECT_EQ(-FI_EBADFLAGS, fi_cntr_open(self->ctx.domain, &attr, &c,
					      NULL));
	attr.flags = 0;
	/* FI_WAIT_SET needs attr->wait_set (prov_waitset). */
	attr.wait_obj = FI_WAIT_SET;
	EXPECT_EQ(-FI_EINVAL, fi_cntr_open(self->ctx.domain, &attr, &c, NULL));
}

TEST_F(cntr, ops_flags)
{
	uint64_t flags = FI_SEND | FI_WRITE, got = 0;

	ASSERT_EQ(0, open_cntr(self, FI_WAIT_NONE));
	ASSERT_EQ(0, fi_control(&self->cntr->fid, FI_SETOPSFLAG, &flags));
	ASSERT_EQ(0, fi_control(&self->cntr->fid, FI_GETOPSFLAG, &got));
	EXPECT_EQ(flags, got);
}

struct adder {
	struct fid_cntr *cntr;
	int delay_ms;
	int err;
	int n;
};

static void *add_later(void *arg)
{
	struct adder *a = arg;
	int i;

	for (i = 0; i < a->n; i++) {
		usleep(a->delay_ms * 1000);
		if (a->err)
			fi_cntr_adderr(a->cntr, 1);
		else
			fi_cntr_add(a->cntr, 1);
	}
	return NULL;
}

static void wait_cycle(struct __test_metadata *_metadata,
		       FIXTURE_DATA(cntr) *self, enum fi_wait_obj wait)
{
	struct adder a = { .delay_ms = 50, .n = 3 };
	struct timespec t0;
	pthread_t thread;
	long ms, sleeps;
	int ret;

	ASSERT_EQ(0, open_cntr(self, wait));
	a.cntr = self->cntr;
	ASSERT_EQ(0, fi_cntr_set(self->cntr, 10));
	EXPECT_EQ(0, fi_cntr_wait(self->cntr, 10, 0));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	sleeps = thread_sleeps();
	ret = fi_cntr_wait(self->cntr, 11, 150);
	sleeps = thread_sleeps() - sleeps;
	ms = sys_ms_since(&t0);
	EXPECT_EQ(-FI_ETIMEDOUT, ret);
	EXPECT_LE(140, ms);
	/* With an fd, the thread slept: it did not poll each millisecond. */
	if (wait == FI_WAIT_FD || wait == FI_WAIT_UNSPEC)
		EXPECT_GE(SLEEPS_MAX, sleeps);
	EXPECT_EQ(0, fi_cntr_readerr(self->cntr));

	/* Three adds from another thread reach the threshold. */
	ASSERT_EQ(0, pthread_create(&thread, NULL, add_later, &a));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = fi_cntr_wait(self->cntr, 13, -1);
	ms = sys_ms_since(&t0);
	pthread_join(thread, NULL);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(13, fi_cntr_read(self->cntr));
	EXPECT_LE(140, ms);

	/* An error ends the wait. */
	a.err = 1;
	a.n = 1;
	ASSERT_EQ(0, pthread_create(&thread, NULL, add_later, &a));
	ret = fi_cntr_wait(self->cntr, 1000, 5000);
	pthread_join(thread, NULL);
	EXPECT_EQ(-FI_EAVAIL, ret);
	EXPECT_EQ(1, fi_cntr_readerr(self->cntr));
}

TEST_F(cntr, wait_fd)
{
	wait_cycle(_metadata, self, FI_WAIT_FD);
}

TEST_F(cntr, wait_unspec)
{
	wait_cycle(_metadata, self, FI_WAIT_UNSPEC);
}

TEST_F(cntr, wait_mutex_cond)
{
	struct fi_mutex_cond mc = { 0 };

	wait_cycle(_metadata, self, FI_WAIT_MUTEX_COND);
	ASSERT_EQ(0, fi_control(&self->cntr->fid, FI_GETWAIT, &mc));
	EXPECT_NE(NULL, mc.mutex);
}

TEST_F(cntr, wait_yield)
{
	wait_cycle(_metadata, self, FI_WAIT_YIELD);
}

TEST_F(cntr, fd_poll_and_trywait)
{
	struct pollfd p = { .events = POLLIN };
	struct fid *fids[1];

	ASSERT_EQ(0, open_cntr(self, FI_WAIT_FD));
	ASSERT_EQ(0, fi_control(&self->cntr->fid, FI_GETWAIT, &p.fd));
	fids[0] = &self->cntr->fid;
	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(0, fi_trywait(self->ctx.fabric, fids, 1));
	ASSERT_EQ(0, fi_cntr_add(self->cntr, 1));
	/* A change the application has not seen makes the fd readable. */
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(-FI_EAGAIN, fi_trywait(self->ctx.fabric, fids, 1));
	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(0, fi_trywait(self->ctx.fabric, fids, 1));
}

TEST_F(cntr, cntr_cnt_limit)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct fid_cntr **c;
	size_t i;

	ASSERT_EQ(0, prov_ext(self->ctx.domain)->query_device(self->ctx.domain,
							      &q));
	EXPECT_EQ(q.max_cntr, self->ctx.info->domain_attr->cntr_cnt);
	ASSERT_LT(0, q.max_cntr);
	c = calloc(q.max_cntr, sizeof(*c));
	ASSERT_NE(NULL, c);
	for (i = 0; i < q.max_cntr; i++)
		ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, NULL, &c[i], NULL));
	EXPECT_EQ(-FI_ENOSPC, fi_cntr_open(self->ctx.domain, NULL,
					   &self->cntr, NULL));
	for (i = 0; i < q.max_cntr; i++)
		EXPECT_EQ(0, fi_close(&c[i]->fid));
	free(c);
}

static void *add_many(void *arg)
{
	struct fid_cntr *cntr = arg;
	int i;

	for (i = 0; i < 100000; i++) {
		fi_cntr_add(cntr, 1);
		fi_cntr_adderr(cntr, 2);
	}
	return NULL;
}

TEST_F(cntr, concurrent_adds)
{
	pthread_t t[4];
	int i;

	ASSERT_EQ(0, open_cntr(self, FI_WAIT_FD));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, add_many, self->cntr));
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(400000, fi_cntr_read(self->cntr));
	EXPECT_EQ(800000, fi_cntr_readerr(self->cntr));
}

struct waiter {
	struct fid_cntr *cntr;
	uint64_t threshold;
	int ret;
	long ms;		/* how long fi_cntr_wait took */
	long sleeps;		/* voluntary context switches meanwhile */
};

static void *wait_for(void *arg)
{
	struct waiter *w = arg;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	w->sleeps = thread_sleeps();
	w->ret = fi_cntr_wait(w->cntr, w->threshold, 10000);
	w->sleeps = thread_sleeps() - w->sleeps;
	w->ms = sys_ms_since(&t0);
	return NULL;
}

/* One completion on @cq within 10 s: 0, or a negative error. */
static int cq_one(struct fid_cq *cq)
{
	struct fi_cq_entry e;
	struct fi_cq_err_entry err = { 0 };

	for (int i = 0; i < 10000; i++) {
		ssize_t n = fi_cq_read(cq, &e, 1);

		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL)
			return fi_cq_readerr(cq, &err, 0) == 1 ? -err.err :
								 -FI_EOTHER;
		if (n != -FI_EAGAIN)
			return (int)n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

/* RDM with RMA to a peer's memory that counts it (FI_RMA_EVENT). */
static struct fi_info *rma_event_hints(void)
{
	struct fi_info *hints = prov_hints();

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA | FI_RMA_EVENT;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	return hints;
}

TEST_F(cntr, wait_woken_by_a_peers_writes)
{
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_ep *ep, *t;
	struct fid_cq *cq, *tcq;
	struct fid_av *av, *tav;
	struct fid_cntr *rw;
	struct fid_mr *mr;
	struct prov_ctx l, peer;
	struct fi_info *hints = rma_event_hints();
	struct waiter w = { .threshold = 3 };
	static char target[4096];
	char src[64], name[64];
	size_t len = sizeof(name);
	uint64_t base;
	fi_addr_t to;
	pthread_t th;

	/* The initiator's own domain, and the target's (the peer's). */
	ASSERT_EQ(0, prov_open(&l, hints));
	ASSERT_EQ(0, prov_open_peer(&peer, &l, hints));
	fi_freeinfo(hints);

	ASSERT_EQ(0, fi_cntr_open(peer.domain, &cattr, &rw, NULL));
	ASSERT_EQ(0, fi_endpoint(peer.domain, peer.info, &t, NULL));
	ASSERT_EQ(0, fi_cq_open(peer.domain, &cq_attr, &tcq, NULL));
	ASSERT_EQ(0, fi_av_open(peer.domain, &av_attr, &tav, NULL));
	ASSERT_EQ(0, fi_ep_bind(t, &tcq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(t, &tav->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(t, &rw->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(0, fi_enable(t));
	ASSERT_EQ(0, fi_mr_reg(peer.domain, target, sizeof(target),
			       FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	base = l.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
	       (uintptr_t)target : 0;

	ASSERT_EQ(0, fi_endpoint(l.domain, l.info, &ep, NULL));
	ASSERT_EQ(0, fi_cq_open(l.domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_av_open(l.domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&t->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &to, 0, NULL));

	/* A thread blocks on the target's counter before anything comes. */
	w.cntr = rw;
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_for, &w));
	usleep(100 * 1000);
	for (int i = 0; i < 3; i++) {
		memset(src, 'a' + i, sizeof(src));
		ASSERT_EQ(0, fi_write(ep, src, sizeof(src), NULL, to,
				      base + 64 * i, fi_mr_key(mr), NULL));
		ASSERT_EQ(0, cq_one(cq));
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.ret);
	/* It slept: the kernel's counter and CQ woke it (100 ms or more). */
	EXPECT_GE(SLEEPS_MAX, w.sleeps) {
		TH_LOG("%ld sleeps in %ld ms", w.sleeps, w.ms);
	}
	EXPECT_EQ(3, fi_cntr_read(rw));
	EXPECT_EQ(0, fi_cntr_readerr(rw));
	EXPECT_EQ('a', target[0]);
	EXPECT_EQ('c', target[191]);
	/* The target's process read nothing: its CQ is empty. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(tcq, &src, 1));

	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&mr->fid);
	fi_close(&t->fid);
	fi_close(&tav->fid);
	fi_close(&tcq->fid);
	fi_close(&rw->fid);
	prov_close(&peer);
	prov_close(&l);
}

/*
 * A counter bound only to an MR (fi_mr_bind, FI_REMOTE_WRITE) of the
 * peer's domain - to no endpoint, so it has no CQ to progress - and an
 * endpoint that writes to that MR: in-host, the endpoint itself is the
 * target's; across, an endpoint of the peer's host is.
 */
struct bound_mr {
	struct prov_ctx l, peer;
	struct fid_ep *ep, *t;
	struct fid_cq *cq, *tcq;
	struct fid_av *av, *tav;
	struct fid_cntr *rw;
	struct fid_mr *mr;
	uint64_t base;
	fi_addr_t to;
	bool open;
};

static char bound_target[4096];

/* Return: 0, or 1 to skip (no such info or kernel); asserts otherwise. */
static int bound_mr_open(struct __test_metadata *_metadata,
			 struct bound_mr *b, enum fi_wait_obj wait_obj)
{
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = wait_obj };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *hints = rma_event_hints();
	char name[64];
	size_t len = sizeof(name);
	int ret;

	memset(b, 0, sizeof(*b));
	memset(bound_target, 0, sizeof(bound_target));
	ret = prov_open(&b->l, hints);
	if (ret == -FI_ENODATA) {
		fi_freeinfo(hints);
		return 1;
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, prov_open_peer(&b->peer, &b->l, hints));
	fi_freeinfo(hints);
	b->open = true;
	if (!prov_feature(b->peer.domain, SWNIC_FEAT_MR_CNTR))
		return 1;

	/* The target's MR, and a counter bound to it alone. */
	ASSERT_EQ(0, fi_cntr_open(b->peer.domain, &cattr, &b->rw, NULL));
	ASSERT_EQ(0, fi_mr_reg(b->peer.domain, bound_target,
			       sizeof(bound_target), FI_REMOTE_WRITE, 0, 0,
			       FI_RMA_EVENT, &b->mr, NULL));
	ASSERT_EQ(0, fi_mr_bind(b->mr, &b->rw->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(0, fi_mr_enable(b->mr));
	b->base = b->l.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
		  (uintptr_t)bound_target : 0;

	ASSERT_EQ(0, fi_endpoint(b->l.domain, b->l.info, &b->ep, NULL));
	ASSERT_EQ(0, fi_cq_open(b->l.domain, &cq_attr, &b->cq, NULL));
	ASSERT_EQ(0, fi_av_open(b->l.domain, &av_attr, &b->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(b->ep, &b->cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(b->ep, &b->av->fid, 0));
	ASSERT_EQ(0, fi_enable(b->ep));
	if (prov_across()) {
		ASSERT_EQ(0, fi_endpoint(b->peer.domain, b->peer.info, &b->t,
					 NULL));
		ASSERT_EQ(0, fi_cq_open(b->peer.domain, &cq_attr, &b->tcq,
					NULL));
		ASSERT_EQ(0, fi_av_open(b->peer.domain, &av_attr, &b->tav,
					NULL));
		ASSERT_EQ(0, fi_ep_bind(b->t, &b->tcq->fid,
					FI_TRANSMIT | FI_RECV));
		ASSERT_EQ(0, fi_ep_bind(b->t, &b->tav->fid, 0));
		ASSERT_EQ(0, fi_enable(b->t));
	}
	ASSERT_EQ(0, fi_getname(b->t ? &b->t->fid : &b->ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(b->av, name, 1, &b->to, 0, NULL));
	return 0;
}

static void bound_mr_close(struct bound_mr *b)
{
	struct fid *fids[] = {
		b->ep ? &b->ep->fid : NULL, b->av ? &b->av->fid : NULL,
		b->cq ? &b->cq->fid : NULL, b->t ? &b->t->fid : NULL,
		b->tav ? &b->tav->fid : NULL, b->tcq ? &b->tcq->fid : NULL,
		b->mr ? &b->mr->fid : NULL, b->rw ? &b->rw->fid : NULL,
	};

	for (size_t i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
		if (fids[i])
			fi_close(fids[i]);
	if (b->open) {
		prov_close(&b->peer);
		prov_close(&b->l);
	}
}

/*
 * fi_mr(3) FI_RMA_EVENT: the kernel counts an RMA write into the MR as it
 * lands, and that ends a fi_cntr_wait already blocked on it, long before
 * its 10 s timeout. Nothing else is progressed until the wait is over:
 * the initiator's CQ is read after it.
 */
TEST_F(cntr, wait_woken_by_writes_to_a_bound_mr)
{
	struct waiter w = { .threshold = 1 };
	struct bound_mr b;
	char src[64];
	pthread_t th;

	if (bound_mr_open(_metadata, &b, FI_WAIT_UNSPEC)) {
		bound_mr_close(&b);
		SKIP(return, "no FI_RMA_EVENT info, or no per-MR counters");
	}
	/* A thread blocks on the counter before the write comes. */
	w.cntr = b.rw;
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_for, &w));
	usleep(100 * 1000);
	memset(src, 'w', sizeof(src));
	ASSERT_EQ(0, fi_write(b.ep, src, sizeof(src), NULL, b.to, b.base,
			      fi_mr_key(b.mr), NULL));
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_GT(5000, w.ms);
	EXPECT_GE(SLEEPS_MAX, w.sleeps) {
		TH_LOG("%ld sleeps in %ld ms", w.sleeps, w.ms);
	}
	ASSERT_EQ(0, cq_one(b.cq));
	EXPECT_EQ(1, fi_cntr_read(b.rw));
	EXPECT_EQ(0, fi_cntr_readerr(b.rw));
	EXPECT_EQ('w', bound_target[0]);
	EXPECT_EQ('w', bound_target[63]);
	bound_mr_close(&b);
}

/*
 * The same counter with FI_WAIT_FD, waited on as fi_cntr(3) and
 * fi_trywait(3) say: fi_trywait, then poll() of its fd
 * (fi_control FI_GETWAIT). A write into the MR - which only the kernel
 * sees - makes the fd readable; fi_trywait then says -FI_EAGAIN, as the
 * counter was not read since, and after a read the fd sleeps again.
 */
TEST_F(cntr, fd_readable_on_writes_to_a_bound_mr)
{
	struct timespec t0;
	struct bound_mr b;
	struct fid *fids[1];
	struct pollfd pf = { .events = POLLIN };
	char src[64];
	long ms;

	if (bound_mr_open(_metadata, &b, FI_WAIT_FD)) {
		bound_mr_close(&b);
		SKIP(return, "no FI_RMA_EVENT info, or no per-MR counters");
	}
	if (!prov_feature(b.peer.domain, SWNIC_FEAT_CNTR_POLL)) {
		bound_mr_close(&b);
		SKIP(return, "the kernel's counters have no fd to poll");
	}
	fids[0] = &b.rw->fid;
	ASSERT_EQ(0, fi_control(&b.rw->fid, FI_GETWAIT, &pf.fd));
	ASSERT_EQ(0, fi_trywait(b.peer.fabric, fids, 1));
	EXPECT_EQ(0, poll(&pf, 1, 0));

	memset(src, 'f', sizeof(src));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, fi_write(b.ep, src, sizeof(src), NULL, b.to, b.base,
			      fi_mr_key(b.mr), NULL));
	EXPECT_EQ(1, poll(&pf, 1, 10000));
	ms = sys_ms_since(&t0);
	EXPECT_GT(5000, ms) TH_LOG("the fd was readable after %ld ms", ms);
	/* Counted, not yet seen: blocking now could miss it. */
	EXPECT_EQ(-FI_EAGAIN, fi_trywait(b.peer.fabric, fids, 1));
	EXPECT_EQ(1, fi_cntr_read(b.rw));
	EXPECT_EQ(0, fi_trywait(b.peer.fabric, fids, 1));
	EXPECT_EQ(0, poll(&pf, 1, 0));
	/* A second write, read before the fd is: fi_trywait is 0 again. */
	ASSERT_EQ(0, fi_write(b.ep, src, sizeof(src), NULL, b.to, b.base,
			      fi_mr_key(b.mr), NULL));
	EXPECT_EQ(1, poll(&pf, 1, 10000));
	EXPECT_EQ(2, fi_cntr_read(b.rw));
	EXPECT_EQ(0, fi_trywait(b.peer.fabric, fids, 1));
	EXPECT_EQ(0, poll(&pf, 1, 0));
	ASSERT_EQ(0, cq_one(b.cq));
	EXPECT_EQ('f', bound_target[0]);
	ASSERT_EQ(0, cq_one(b.cq));
	bound_mr_close(&b);
}

/*
 * A counter progresses every CQ its endpoints' completions arrive on, be
 * they more than 16: here 17 endpoints with a small CQ each count their
 * sends into it, the 17th's without completions (FI_SELECTIVE_
 * COMPLETION), which only the counter's progress moves on.
 */
TEST_F(cntr, progresses_the_cqs_of_17_endpoints)
{
	enum { N = 17, SENDS = 16 };
	struct fi_cq_attr small = { .format = FI_CQ_FORMAT_CONTEXT, .size = 4 };
	struct fi_cq_attr big = { .format = FI_CQ_FORMAT_CONTEXT, .size = 64 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_ep *ep[N] = { 0 }, *rx;
	struct fid_cq *cq[N] = { 0 }, *rxcq;
	struct fi_cq_entry e;
	struct fid_av *av;
	char bufs[SENDS][8];
	char name[64];
	size_t len = sizeof(name);
	fi_addr_t dest;
	ssize_t ret = 0;
	int i, got = 0;

	ASSERT_EQ(0, open_cntr(self, FI_WAIT_UNSPEC));
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &av, NULL));
	/* The receiver, not counted. */
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &big, &rxcq, NULL));
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &rx, NULL));
	ASSERT_EQ(0, fi_ep_bind(rx, &rxcq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(rx, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(rx));
	for (i = 0; i < SENDS; i++)
		ASSERT_EQ(0, fi_recv(rx, bufs[i], sizeof(bufs[i]), NULL,
				     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_getname(&rx->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &dest, 0, NULL));

	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &small, &cq[i],
					NULL));
		ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info,
					 &ep[i], NULL));
		ASSERT_EQ(0, fi_ep_bind(ep[i], &cq[i]->fid,
					FI_TRANSMIT | FI_RECV |
					FI_SELECTIVE_COMPLETION));
		ASSERT_EQ(0, fi_ep_bind(ep[i], &av->fid, 0));
		ASSERT_EQ(0, fi_ep_bind(ep[i], &self->cntr->fid, FI_SEND));
		ASSERT_EQ(0, fi_enable(ep[i]));
	}
	/* An application that only looks at its counter. */
	for (i = 0; i < SENDS; i++) {
		for (int tries = 0; tries < 5000; tries++) {
			ret = fi_send(ep[N - 1], "x", 2, NULL, dest, NULL);
			if (ret != -FI_EAGAIN)
				break;
			fi_cntr_read(self->cntr);
			usleep(1000);
		}
		ASSERT_EQ(0, ret) TH_LOG("send %d", i);
	}
	EXPECT_EQ(0, fi_cntr_wait(self->cntr, SENDS, 5000));
	EXPECT_EQ(SENDS, fi_cntr_read(self->cntr));
	for (int tries = 0; got < SENDS && tries < 5000; tries++) {
		if (fi_cq_read(rxcq, &e, 1) == 1)
			got++;
		else
			usleep(1000);
	}
	EXPECT_EQ(SENDS, got);

	for (i = 0; i < N; i++) {
		EXPECT_EQ(0, fi_close(&ep[i]->fid));
		EXPECT_EQ(0, fi_close(&cq[i]->fid));
	}
	EXPECT_EQ(0, fi_close(&rx->fid));
	EXPECT_EQ(0, fi_close(&rxcq->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
	/* No CQ closed above is left to the counter. */
	EXPECT_EQ(SENDS, fi_cntr_read(self->cntr));
	EXPECT_EQ(-FI_ETIMEDOUT, fi_cntr_wait(self->cntr, SENDS + 1, 50));
}

TEST_HARNESS_MAIN

/*
 * A counter outlives the endpoint that counted into it and that
 * endpoint's CQ: reading and waiting on it afterwards must not touch the
 * closed CQ (freed memory, filled with junk here by M_PERTURB so that
 * touching it crashes), and the counter keeps its value.
 */
TEST_F(cntr, outlives_its_endpoint_and_cq)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_cq *cq, *cq2;
	struct fid_av *av;
	struct fid_ep *ep, *ep2;

	ASSERT_EQ(1, mallopt(M_PERTURB, 0xa5));
	ASSERT_EQ(0, open_cntr(self, FI_WAIT_UNSPEC));
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &cq2, NULL));
	/* Two endpoints count into it, one CQ each. */
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &ep, NULL));
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &ep2, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep2, &cq2->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep2, &av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->cntr->fid, FI_SEND | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep2, &self->cntr->fid, FI_SEND));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_enable(ep2));
	ASSERT_EQ(0, fi_cntr_add(self->cntr, 3));

	/* The first endpoint and its CQ go; the counter still works. */
	ASSERT_EQ(0, fi_close(&ep->fid));
	ASSERT_EQ(0, fi_close(&cq->fid));
	EXPECT_EQ(3, fi_cntr_read(self->cntr));
	EXPECT_EQ(0, fi_cntr_wait(self->cntr, 3, 100));
	EXPECT_EQ(-FI_ETIMEDOUT, fi_cntr_wait(self->cntr, 4, 50));

	/* And the second: nothing left to progress. */
	ASSERT_EQ(0, fi_close(&ep2->fid));
	ASSERT_EQ(0, fi_close(&cq2->fid));
	EXPECT_EQ(3, fi_cntr_read(self->cntr));
	EXPECT_EQ(-FI_ETIMEDOUT, fi_cntr_wait(self->cntr, 4, 50));
	EXPECT_EQ(0, fi_close(&av->fid));
}
