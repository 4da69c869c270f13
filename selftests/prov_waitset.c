// SPDX-License-Identifier: GPL-2.0
/*
 * Wait sets and poll sets (fi_poll(3)) through the public libfabric API:
 * fi_wait on a set of an EQ, a CQ and a counter opened with FI_WAIT_SET
 * (returns when any has something, times out otherwise, wakes a blocked
 * thread, its fd polls), fi_trywait on a set, fi_poll on a set of a CQ
 * and a counter, and the errors both give. Deprecated in libfabric 2.x,
 * still part of its API. Every wait is bounded. The receiver b is the
 * peer's (prov_open_peer()): across - another host, another fabric - it
 * reports to a CQ of its own, and the set sees the sender's completions
 * (written when the wire's acknowledgement comes back); in-host both
 * endpoints report to the set's CQ.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "kselftest_harness.h"
#include "prov_util.h"

SWNIC_DEPRECATED_BEGIN

struct side {
	struct fid_ep *ep;
	struct fid_av *av;
	fi_addr_t peer;
};

FIXTURE(ws)
{
	struct prov_ctx ctx;
	struct prov_ctx peer;		/* b's */
	struct fid_cq *cq;		/* of both endpoints (in-host) */
	struct fid_cq *bcq;		/* b's own (across) */
	struct side a, b;
};

static void side_open(struct __test_metadata *_metadata,
		      struct prov_ctx *ctx, struct side *s)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	ASSERT_EQ(0, fi_endpoint(ctx->domain, ctx->info, &s->ep, NULL));
	ASSERT_EQ(0, fi_av_open(ctx->domain, &av_attr, &s->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->av->fid, 0));
}

static void side_close(struct side *s)
{
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->av)
		fi_close(&s->av->fid);
	memset(s, 0, sizeof(*s));
}

static void connect_to(struct __test_metadata *_metadata, struct side *from,
		       struct side *to)
{
	char name[64];
	size_t len = sizeof(name);

	ASSERT_EQ(0, fi_getname(&to->ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(from->av, name, 1, &from->peer, 0, NULL));
}

/*
 * Endpoints a -> b whose completions go to @cq (and counter @sent); b's
 * to a CQ of its own across.
 */
static void pair_open(struct __test_metadata *_metadata,
		      FIXTURE_DATA(ws) *self, struct fid_cq *cq,
		      struct fid_cntr *sent)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_cq *bcq = cq;

	side_open(_metadata, &self->ctx, &self->a);
	side_open(_metadata, &self->peer, &self->b);
	if (prov_across()) {
		ASSERT_EQ(0, fi_cq_open(self->peer.domain, &cq_attr,
					&self->bcq, NULL));
		bcq = self->bcq;
	}
	ASSERT_EQ(0, fi_ep_bind(self->a.ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(self->b.ep, &bcq->fid, FI_TRANSMIT | FI_RECV));
	if (sent)
		ASSERT_EQ(0, fi_ep_bind(self->a.ep, &sent->fid, FI_SEND));
	ASSERT_EQ(0, fi_enable(self->a.ep));
	ASSERT_EQ(0, fi_enable(self->b.ep));
	connect_to(_metadata, &self->a, &self->b);
}

FIXTURE_SETUP(ws)
{
	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&self->ctx, NULL));
	ASSERT_EQ(0, prov_open_peer(&self->peer, &self->ctx, NULL));
}

FIXTURE_TEARDOWN(ws)
{
	side_close(&self->a);
	side_close(&self->b);
	if (self->bcq)
		fi_close(&self->bcq->fid);
	prov_close(&self->peer);
	prov_close(&self->ctx);
}

static int trywait_set(struct fid_fabric *fabric, struct fid_wait *set)
{
	struct fid *fids[1] = { &set->fid };

	return fi_trywait(fabric, fids, 1);
}

/* A message a -> b, both completions on the CQ (not read here). */
static void one_message(struct __test_metadata *_metadata,
			FIXTURE_DATA(ws) *self, char *in)
{
	ASSERT_EQ(0, fi_recv(self->b.ep, in, 8, NULL, FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(self->a.ep, "msg", 4, NULL, self->a.peer, NULL));
}

/* Read every completion there is, for up to @ms. */
static int cq_drain(struct fid_cq *cq, int want, int ms)
{
	struct fi_cq_entry e;
	int got = 0;

	for (int i = 0; i < ms && got < want; i++) {
		if (fi_cq_read(cq, &e, 1) == 1)
			got++;
		else
			usleep(1000);
	}
	return got;
}

/*
 * one_message()'s completions: the send's and the receive's on the set's
 * CQ in-host; across the receive's is on b's own CQ.
 */
static void drain_pair(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ws) *self)
{
	if (!self->bcq) {
		EXPECT_EQ(2, cq_drain(self->cq, 2, 5000));
		return;
	}
	EXPECT_EQ(1, cq_drain(self->cq, 1, 5000));
	EXPECT_EQ(1, cq_drain(self->bcq, 1, 5000));
}

static void wait_set_members(struct __test_metadata *_metadata,
			     FIXTURE_DATA(ws) *self, enum fi_wait_obj obj)
{
	struct fi_wait_attr wattr = { .wait_obj = obj };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT,
				      .wait_obj = FI_WAIT_SET };
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = FI_WAIT_SET };
	struct fi_eq_attr eattr = { .wait_obj = FI_WAIT_SET,
				    .flags = FI_WRITE };
	struct fi_eq_entry ee = { .context = self };
	enum fi_wait_obj got;
	struct fid_wait *set;
	struct fid_cntr *c;
	struct fid_eq *eq;
	uint32_t event;
	char in[8];

	ASSERT_EQ(0, fi_wait_open(self->ctx.fabric, &wattr, &set));
	cq_attr.wait_set = set;
	cattr.wait_set = set;
	eattr.wait_set = set;
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &self->cq, NULL));
	ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, &cattr, &c, NULL));
	ASSERT_EQ(0, fi_eq_open(self->ctx.fabric, &eattr, &eq, NULL));
	ASSERT_EQ(0, fi_control(&self->cq->fid, FI_GETWAITOBJ, &got));
	EXPECT_EQ(FI_WAIT_SET, got);
	pair_open(_metadata, self, self->cq, NULL);

	/* Nothing yet: the wait times out. */
	EXPECT_EQ(-FI_ETIMEDOUT, fi_wait(set, 50));
	EXPECT_EQ(0, trywait_set(self->ctx.fabric, set));
	/* An EQ event. */
	ASSERT_EQ(sizeof(ee), fi_eq_write(eq, FI_NOTIFY, &ee, sizeof(ee), 0));
	EXPECT_EQ(0, fi_wait(set, 1000));
	EXPECT_EQ(-FI_EAGAIN, trywait_set(self->ctx.fabric, set));
	ASSERT_EQ(sizeof(ee), fi_eq_read(eq, &event, &ee, sizeof(ee), 0));
	EXPECT_EQ(-FI_ETIMEDOUT, fi_wait(set, 20));
	/* A counter change, reported once. */
	ASSERT_EQ(0, fi_cntr_add(c, 2));
	EXPECT_EQ(0, fi_wait(set, 1000));
	EXPECT_EQ(-FI_ETIMEDOUT, fi_wait(set, 20));
	/* Completions the kernel wrote: the wait returns while unread. */
	one_message(_metadata, self, in);
	EXPECT_EQ(0, fi_wait(set, 5000));
	EXPECT_EQ(0, fi_wait(set, 100));
	drain_pair(_metadata, self);
	EXPECT_EQ(-FI_ETIMEDOUT, fi_wait(set, 20));

	/* Members first: a set with members stays open. */
	EXPECT_EQ(-FI_EBUSY, fi_close(&set->fid));
	side_close(&self->a);
	side_close(&self->b);
	EXPECT_EQ(0, fi_close(&self->cq->fid));
	self->cq = NULL;
	EXPECT_EQ(0, fi_close(&c->fid));
	EXPECT_EQ(0, fi_close(&eq->fid));
	EXPECT_EQ(0, fi_close(&set->fid));
}

TEST_F(ws, wait_set_fd)
{
	wait_set_members(_metadata, self, FI_WAIT_UNSPEC);
}

TEST_F(ws, wait_set_mutex_cond)
{
	wait_set_members(_metadata, self, FI_WAIT_MUTEX_COND);
}

static void *add_later(void *arg)
{
	usleep(200000);
	fi_cntr_add(arg, 1);
	return NULL;
}

/* A thread blocked in fi_wait wakes up; the set's fd polls readable. */
TEST_F(ws, wait_wakes_thread_and_fd)
{
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT,
				      .wait_obj = FI_WAIT_SET };
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = FI_WAIT_SET };
	struct fid_wait *set;
	struct fid_cntr *c;
	struct timespec t0;
	struct pollfd pfd = { .events = POLLIN };
	pthread_t th;
	char in[8];

	ASSERT_EQ(0, fi_wait_open(self->ctx.fabric, &wattr, &set));
	cq_attr.wait_set = set;
	cattr.wait_set = set;
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &self->cq, NULL));
	ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, &cattr, &c, NULL));
	pair_open(_metadata, self, self->cq, NULL);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&th, NULL, add_later, c));
	EXPECT_EQ(0, fi_wait(set, 5000));
	EXPECT_LT(sys_ms_since(&t0), 4000);
	pthread_join(th, NULL);

	ASSERT_EQ(0, fi_control(&set->fid, FI_GETWAIT, &pfd.fd));
	EXPECT_EQ(0, trywait_set(self->ctx.fabric, set));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	one_message(_metadata, self, in);
	EXPECT_EQ(1, poll(&pfd, 1, 5000));
	drain_pair(_metadata, self);

	side_close(&self->a);
	side_close(&self->b);
	fi_close(&self->cq->fid);
	self->cq = NULL;
	fi_close(&c->fid);
	EXPECT_EQ(0, fi_close(&set->fid));
}

TEST_F(ws, wait_set_errors)
{
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_NONE };
	struct fi_cq_attr cq_attr = { .wait_obj = FI_WAIT_SET };
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = FI_WAIT_SET };
	struct fi_eq_attr eattr = { .wait_obj = FI_WAIT_SET };
	struct fid_wait *set;
	struct fid_cntr *c;
	struct fid_eq *eq;
	struct fid_cq *cq;

	/* FI_WAIT_SET needs a set. */
	EXPECT_EQ(-FI_EINVAL, fi_cq_open(self->ctx.domain, &cq_attr, &cq,
					 NULL));
	EXPECT_EQ(-FI_EINVAL, fi_cntr_open(self->ctx.domain, &cattr, &c,
					   NULL));
	EXPECT_EQ(-FI_EINVAL, fi_eq_open(self->ctx.fabric, &eattr, &eq, NULL));
	/* A set waits on something; flags are none. */
	EXPECT_EQ(-FI_EINVAL, fi_wait_open(self->ctx.fabric, &wattr, &set));
	wattr.wait_obj = FI_WAIT_SET;
	EXPECT_EQ(-FI_EINVAL, fi_wait_open(self->ctx.fabric, &wattr, &set));
	wattr.wait_obj = FI_WAIT_FD;
	wattr.flags = 1;
	EXPECT_EQ(-FI_EBADFLAGS, fi_wait_open(self->ctx.fabric, &wattr, &set));
	/* An empty set times out; the fabric waits for it. */
	wattr.flags = 0;
	ASSERT_EQ(0, fi_wait_open(self->ctx.fabric, &wattr, &set));
	EXPECT_EQ(-FI_ETIMEDOUT, fi_wait(set, 10));
	EXPECT_EQ(0, fi_close(&set->fid));
}

struct spinner {
	struct fid_wait *set;
	atomic_int stop;
	atomic_ulong waits;
};

/* fi_wait on the set without sleeping: its members are checked each time. */
static void *wait_spin(void *arg)
{
	struct spinner *sp = arg;

	while (!atomic_load(&sp->stop)) {
		fi_wait(sp->set, 0);
		atomic_fetch_add(&sp->waits, 1);
	}
	return NULL;
}

/*
 * A CQ of a set closes while other threads are in fi_wait on the set:
 * they must not look at it (its kernel ring, its fd) once its close has
 * begun. Each round the CQ has a kernel ring (an enabled endpoint made
 * it); the waiters check it as fast as they can. A race: a provider that
 * tears the CQ down before it leaves the set crashes here (SIGSEGV on
 * the unmapped ring) in most runs, not in every one.
 */
TEST_F(ws, cq_close_while_waiting)
{
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT,
				      .wait_obj = FI_WAIT_SET };
	struct spinner sp = { 0 };
	struct timespec t0;
	pthread_t th[2];
	struct fid_ep *ep;
	struct fid_av *av;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int rounds = 0;

	ASSERT_EQ(0, fi_wait_open(self->ctx.fabric, &wattr, &sp.set));
	cq_attr.wait_set = sp.set;
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &av, NULL));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, wait_spin, &sp));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (; rounds < 3000 && sys_ms_since(&t0) < 20000; rounds++) {
		ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &self->cq,
					NULL));
		ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &ep,
					 NULL));
		ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
		ASSERT_EQ(0, fi_ep_bind(ep, &self->cq->fid,
					FI_TRANSMIT | FI_RECV));
		ASSERT_EQ(0, fi_enable(ep));
		ASSERT_EQ(0, fi_close(&ep->fid));
		ASSERT_EQ(0, fi_close(&self->cq->fid));
		self->cq = NULL;
	}
	atomic_store(&sp.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	TH_LOG("%d rounds, %lu waits", rounds, atomic_load(&sp.waits));
	EXPECT_LT(0, rounds);
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&sp.set->fid));
}

/* fi_poll: the contexts of a non-empty CQ and of a changed counter. */
TEST_F(ws, poll_set)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_eq_attr eattr = { 0 };
	struct fi_poll_attr pattr = { 0 };
	struct fid_poll *ps;
	struct fid_cntr *sent;
	struct fid_eq *eq;
	void *ctx[4] = { 0 };
	char in[8];
	int n;

	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &self->cq,
				(void *)0xc0));
	ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, &cattr, &sent,
				  (void *)0xc1));
	pair_open(_metadata, self, self->cq, sent);
	pattr.flags = 1;
	EXPECT_EQ(-FI_EBADFLAGS, fi_poll_open(self->ctx.domain, &pattr, &ps));
	pattr.flags = 0;
	ASSERT_EQ(0, fi_poll_open(self->ctx.domain, &pattr, &ps));
	ASSERT_EQ(0, fi_poll_add(ps, &self->cq->fid, 0));
	ASSERT_EQ(0, fi_poll_add(ps, &sent->fid, 0));
	EXPECT_EQ(-FI_EALREADY, fi_poll_add(ps, &sent->fid, 0));
	ASSERT_EQ(0, fi_eq_open(self->ctx.fabric, &eattr, &eq, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_poll_add(ps, &eq->fid, 0));
	fi_close(&eq->fid);
	/* Members cannot close while in the set. */
	EXPECT_EQ(-FI_EBUSY, fi_close(&sent->fid));

	EXPECT_EQ(0, fi_poll(ps, ctx, 4));
	one_message(_metadata, self, in);
	/* The CQ (not empty) and the counter (the kernel counted the send). */
	for (int i = 0; i < 5000; i++) {
		n = fi_poll(ps, ctx, 4);
		if (n == 2 || (n == 1 && ctx[0] == (void *)0xc1))
			break;
		usleep(1000);
	}
	EXPECT_TRUE(n >= 1);
	drain_pair(_metadata, self);
	/* The counter is reported once per change, the CQ while unread. */
	EXPECT_EQ(0, fi_poll(ps, ctx, 4));
	/* The application's own fi_cntr_add is no event (fi_poll(3)). */
	ASSERT_EQ(0, fi_cntr_add(sent, 1));
	EXPECT_EQ(0, fi_poll(ps, ctx, 4));
	/* A count smaller than the events: at most that many. */
	one_message(_metadata, self, in);
	for (int i = 0; i < 5000; i++) {
		n = fi_poll(ps, ctx, 1);
		if (n)
			break;
		usleep(1000);
	}
	EXPECT_EQ(1, n);
	drain_pair(_metadata, self);

	EXPECT_EQ(0, fi_poll_del(ps, &sent->fid, 0));
	EXPECT_EQ(-FI_ENOENT, fi_poll_del(ps, &sent->fid, 0));
	side_close(&self->a);
	side_close(&self->b);
	EXPECT_EQ(0, fi_close(&sent->fid));
	/* Closing the set lets its members go. */
	EXPECT_EQ(0, fi_close(&ps->fid));
	EXPECT_EQ(0, fi_close(&self->cq->fid));
	self->cq = NULL;
}

SWNIC_DEPRECATED_END

TEST_HARNESS_MAIN
