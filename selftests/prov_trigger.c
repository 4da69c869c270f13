// SPDX-License-Identifier: GPL-2.0
/*
 * Triggered operations and deferred work (fi_trigger(3)) through the
 * public libfabric API: the kernel keeps a triggered send, tagged send,
 * RMA, atomic or receive and starts it when a counter reaches the
 * threshold - counters changed by fi_cntr_add/set, by completions and by
 * peers' RMA - in the order of the thresholds; cancelling, flushing,
 * closing the counter or the endpoint (nothing left behind: the module's
 * triggered_ops gauge), a target out of resources, and the requests swnic
 * refuses (with the documented errors). Every wait is bounded.
 */
#include <sys/wait.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

#include "kselftest_harness.h"
#include "gauge_util.h"
#include "prov_util.h"

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
};

FIXTURE(trig)
{
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cntr *c;		/* the triggering counter */
	struct side a, b;
};

static struct fi_info *trig_hints(uint64_t caps)
{
	struct fi_info *hints = prov_hints();

	if (!hints)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = caps;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	return hints;
}

static void side_open(struct __test_metadata *_metadata,
		      FIXTURE_DATA(trig) *self, struct fi_info *info,
		      struct side *s)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED, .size = 64,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	ASSERT_EQ(0, fi_endpoint(self->domain, info, &s->ep, NULL));
	ASSERT_EQ(0, fi_cq_open(self->domain, &cq_attr, &s->cq, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain, &av_attr, &s->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->av->fid, 0));
}

static void side_close(struct side *s)
{
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->av)
		fi_close(&s->av->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
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

static struct fid_cntr *cntr_open(struct __test_metadata *_metadata,
				  struct fid_domain *domain)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fid_cntr *c = NULL;

	EXPECT_EQ(0, fi_cntr_open(domain, &attr, &c, NULL));
	return c;
}

FIXTURE_SETUP(trig)
{
	struct fi_info *hints;

	PROV_REQUIRE_DEVICE();
	hints = trig_hints(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |
			   FI_RMA_EVENT | FI_TRIGGER);
	ASSERT_NE(NULL, hints);
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	fi_freeinfo(hints);
	ASSERT_EQ(0, fi_fabric(self->info->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &self->domain, NULL));
	self->c = cntr_open(_metadata, self->domain);
	ASSERT_NE(NULL, self->c);
	side_open(_metadata, self, self->info, &self->a);
	side_open(_metadata, self, self->info, &self->b);
	ASSERT_EQ(0, fi_enable(self->a.ep));
	ASSERT_EQ(0, fi_enable(self->b.ep));
	connect_to(_metadata, &self->a, &self->b);
	connect_to(_metadata, &self->b, &self->a);
}

FIXTURE_TEARDOWN(trig)
{
	side_close(&self->a);
	side_close(&self->b);
	if (self->c)
		fi_close(&self->c->fid);
	if (self->domain)
		EXPECT_EQ(0, fi_close(&self->domain->fid));
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
}

/* RMA address of an MR's start (fi_mr(3) FI_MR_VIRT_ADDR or offsets). */
static uint64_t rma_base(const struct fi_info *info, const void *base)
{
	return info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
	       (uintptr_t)base : 0;
}

/* One completion within @ms: 1, -FI_EAVAIL (an error) or -FI_ETIMEDOUT. */
static ssize_t cq_get_ms(struct fid_cq *cq, struct fi_cq_tagged_entry *e,
			 int ms)
{
	for (int i = 0; i < ms; i++) {
		ssize_t n = fi_cq_read(cq, e, 1);

		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

static ssize_t cq_get(struct fid_cq *cq, struct fi_cq_tagged_entry *e)
{
	return cq_get_ms(cq, e, 5000);
}

/* No completion for @ms: what a triggered operation not yet due shows. */
static bool cq_quiet(struct fid_cq *cq, int ms)
{
	struct fi_cq_tagged_entry e;

	for (int i = 0; i < ms; i++) {
		if (fi_cq_read(cq, &e, 1) != -FI_EAGAIN)
			return false;
		usleep(1000);
	}
	return true;
}

/* The error completion waiting on @cq (after cq_get gave -FI_EAVAIL). */
static int cq_err(struct fid_cq *cq, void **context)
{
	struct fi_cq_err_entry err = { 0 };

	if (fi_cq_readerr(cq, &err, 0) != 1)
		return -1;
	*context = err.op_context;
	return err.err;
}

static void tctx_init(struct fi_triggered_context *t, struct fid_cntr *c,
		      size_t threshold)
{
	memset(t, 0, sizeof(*t));
	t->event_type = FI_TRIGGER_THRESHOLD;
	t->trigger.threshold.cntr = c;
	t->trigger.threshold.threshold = threshold;
}

static ssize_t trig_send(struct fid_ep *ep, const void *buf, size_t len,
			 fi_addr_t dest, struct fi_triggered_context *t,
			 uint64_t flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .context = t,
	};

	return fi_sendmsg(ep, &msg, flags | FI_TRIGGER | FI_COMPLETION);
}

static ssize_t trig_tsend(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t tag,
			  struct fi_triggered_context *t)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .tag = tag,
		.context = t,
	};

	return fi_tsendmsg(ep, &msg, FI_TRIGGER | FI_COMPLETION);
}

/* fi_getinfo reports FI_TRIGGER (transmit and receive) when asked. */
TEST_F(trig, trigger_cap_reported)
{
	EXPECT_TRUE(self->info->caps & FI_TRIGGER);
	EXPECT_TRUE(self->info->tx_attr->caps & FI_TRIGGER);
	EXPECT_TRUE(self->info->rx_attr->caps & FI_TRIGGER);
}

/* A secondary capability: not reported unless asked for. */
TEST_F(trig, trigger_cap_only_when_asked)
{
	struct fi_info *hints = trig_hints(FI_MSG), *info;

	ASSERT_NE(NULL, hints);
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	for (struct fi_info *cur = info; cur; cur = cur->next) {
		EXPECT_FALSE(cur->caps & FI_TRIGGER);
		EXPECT_FALSE(cur->tx_attr->caps & FI_TRIGGER);
	}
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* Held by the kernel until fi_cntr_add brings the counter to 2. */
TEST_F(trig, send_waits_for_threshold)
{
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	char out[32] = "triggered", in[32] = "";

	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     in));
	tctx_init(&t, self->c, 2);
	ASSERT_EQ(0, trig_send(self->a.ep, out, sizeof(out), self->a.peer, &t,
			       0));
	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	EXPECT_EQ(0, fi_cntr_add(self->c, 1));
	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	EXPECT_TRUE(cq_quiet(self->a.cq, 1));
	EXPECT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_EQ((void *)in, e.op_context);
	EXPECT_STREQ("triggered", in);
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t, e.op_context);
	EXPECT_EQ(FI_SEND | FI_MSG, e.flags);
	EXPECT_EQ(2, fi_cntr_read(self->c));
}

/* A threshold already met starts at once; FI_INJECT data is copied. */
TEST_F(trig, met_threshold_and_inject)
{
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	char out[16] = "now", in[16] = "";

	ASSERT_EQ(0, fi_cntr_set(self->c, 5));
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	tctx_init(&t, self->c, 0);
	ASSERT_EQ(0, trig_send(self->a.ep, out, sizeof(out), self->a.peer, &t,
			       FI_INJECT));
	/* Reusable at once (FI_INJECT), though it ran later. */
	strcpy(out, "changed");
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_STREQ("now", in);
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t, e.op_context);
}

/*
 * Thresholds 3, 1, 2, 2 met by one fi_cntr_set: they run by threshold,
 * equal ones in the order they were posted.
 */
TEST_F(trig, thresholds_run_in_order)
{
	static const size_t thr[4] = { 3, 1, 2, 2 };
	static const uint64_t want[4] = { 1, 2, 3, 0 };
	struct fi_triggered_context t[4];
	struct fi_cq_tagged_entry e;
	uint64_t out[4], in[4];

	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, fi_trecv(self->b.ep, &in[i], sizeof(in[i]), NULL,
				      FI_ADDR_UNSPEC, 0, ~0ULL, &in[i]));
	for (int i = 0; i < 4; i++) {
		out[i] = i;
		tctx_init(&t[i], self->c, thr[i]);
		ASSERT_EQ(0, trig_tsend(self->a.ep, &out[i], sizeof(out[i]),
					self->a.peer, 100 + i, &t[i]));
	}
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
	ASSERT_EQ(0, fi_cntr_set(self->c, 10));
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(1, cq_get(self->b.cq, &e));
		EXPECT_EQ(&in[i], e.op_context);
		EXPECT_EQ(want[i], in[i]);
		EXPECT_EQ(100 + want[i], e.tag);
	}
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(1, cq_get(self->a.cq, &e));
}

/* A completion counted by the kernel triggers: a chain of two sends. */
TEST_F(trig, completion_counter_triggers)
{
	struct fid_cntr *sent = cntr_open(_metadata, self->domain);
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	struct side s = { 0 };
	char in[2][8] = { "", "" };

	ASSERT_NE(NULL, sent);
	side_open(_metadata, self, self->info, &s);
	ASSERT_EQ(0, fi_ep_bind(s.ep, &sent->fid, FI_SEND));
	ASSERT_EQ(0, fi_enable(s.ep));
	connect_to(_metadata, &s, &self->b);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, fi_recv(self->b.ep, in[i], sizeof(in[i]), NULL,
				     FI_ADDR_UNSPEC, NULL));
	tctx_init(&t, sent, 1);
	ASSERT_EQ(0, trig_send(s.ep, "second", 7, s.peer, &t, 0));
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
	ASSERT_EQ(0, fi_send(s.ep, "first", 6, NULL, s.peer, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_STREQ("first", in[0]);
	EXPECT_STREQ("second", in[1]);
	EXPECT_EQ(0, fi_cntr_wait(sent, 2, 5000));
	side_close(&s);
	fi_close(&sent->fid);
}

/*
 * A peer's RMA write counted at the target (FI_RMA_EVENT) triggers the
 * target's send: the target process does nothing in between.
 */
TEST_F(trig, remote_write_triggers)
{
	static char target[64];
	struct fid_cntr *rw = cntr_open(_metadata, self->domain);
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	struct side s = { 0 };
	struct fid_mr *mr;
	char in[8] = "";

	ASSERT_NE(NULL, rw);
	side_open(_metadata, self, self->info, &s);
	ASSERT_EQ(0, fi_ep_bind(s.ep, &rw->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(0, fi_enable(s.ep));
	connect_to(_metadata, &s, &self->a);
	connect_to(_metadata, &self->a, &s);
	ASSERT_EQ(0, fi_mr_reg(self->domain, target, sizeof(target),
			       FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(0, fi_recv(self->a.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	tctx_init(&t, rw, 1);
	ASSERT_EQ(0, trig_send(s.ep, "ack", 4, s.peer, &t, 0));
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	ASSERT_EQ(0, fi_write(self->a.ep, "data", 5, NULL, self->a.peer,
			      rma_base(self->info, target), fi_mr_key(mr),
			      NULL));
	/* The write's completion and the triggered send's arrival. */
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_STREQ("ack", in);
	EXPECT_STREQ("data", target);
	ASSERT_EQ(1, cq_get(s.cq, &e));
	EXPECT_EQ(&t, e.op_context);
	fi_close(&mr->fid);
	side_close(&s);
	fi_close(&rw->fid);
}

/* Triggered RMA write and read: nothing moves before the threshold. */
TEST_F(trig, triggered_rma)
{
	static char target[64] = "old", back[64];
	struct fi_triggered_context tw, tr;
	struct fi_cq_tagged_entry e;
	struct fi_rma_iov rma;
	struct iovec iov;
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .iov_count = 1, .rma_iov = &rma,
		.rma_iov_count = 1,
	};
	struct fid_mr *mr;

	ASSERT_EQ(0, fi_mr_reg(self->domain, target, sizeof(target),
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			       NULL));
	rma.addr = rma_base(self->info, target);
	rma.len = 4;
	rma.key = fi_mr_key(mr);
	msg.addr = self->a.peer;

	iov.iov_base = "new";
	iov.iov_len = 4;
	tctx_init(&tw, self->c, 1);
	msg.context = &tw;
	ASSERT_EQ(0, fi_writemsg(self->a.ep, &msg, FI_TRIGGER | FI_COMPLETION));
	iov.iov_base = back;
	tctx_init(&tr, self->c, 2);
	msg.context = &tr;
	ASSERT_EQ(0, fi_readmsg(self->a.ep, &msg, FI_TRIGGER | FI_COMPLETION));

	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	EXPECT_STREQ("old", target);
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&tw, e.op_context);
	EXPECT_EQ(FI_RMA | FI_WRITE, e.flags);
	EXPECT_STREQ("new", target);
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	EXPECT_STREQ("", back);
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&tr, e.op_context);
	EXPECT_STREQ("new", back);
	fi_close(&mr->fid);
}

/* What swnic refuses, with the documented errors. */
TEST_F(trig, bad_requests)
{
	struct fid_domain *other_dom;
	struct fid_cntr *foreign;
	struct fi_triggered_context t;
	struct fi_info *info;
	struct side plain = { 0 };
	char buf[8];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = &t,
	};
	struct fi_msg_tagged tmsg = { 0 };

	/* No counter; an unknown event; XPU triggers. */
	tctx_init(&t, NULL, 1);
	EXPECT_EQ(-FI_EINVAL, trig_send(self->a.ep, buf, 8, self->a.peer, &t,
					0));
	tctx_init(&t, self->c, 1);
	t.event_type = 77;
	EXPECT_EQ(-FI_EINVAL, trig_send(self->a.ep, buf, 8, self->a.peer, &t,
					0));
	t.event_type = FI_TRIGGER_XPU;
	EXPECT_EQ(-FI_ENOSYS, trig_send(self->a.ep, buf, 8, self->a.peer, &t,
					0));
	/* A counter of another domain. */
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &other_dom, NULL));
	foreign = cntr_open(_metadata, other_dom);
	ASSERT_NE(NULL, foreign);
	tctx_init(&t, foreign, 1);
	EXPECT_EQ(-FI_EINVAL, trig_send(self->a.ep, buf, 8, self->a.peer, &t,
					0));
	fi_close(&foreign->fid);
	fi_close(&other_dom->fid);
	/* A triggered receive without a counter; a triggered peek. */
	tctx_init(&t, NULL, 1);
	EXPECT_EQ(-FI_EINVAL, fi_recvmsg(self->b.ep, &msg, FI_TRIGGER));
	tctx_init(&t, self->c, 1);
	tmsg.msg_iov = &iov;
	tmsg.iov_count = 1;
	tmsg.addr = FI_ADDR_UNSPEC;
	tmsg.context = &t;
	EXPECT_EQ(-FI_EINVAL, fi_trecvmsg(self->b.ep, &tmsg,
					  FI_TRIGGER | FI_PEEK));
	/* An endpoint opened without FI_TRIGGER. */
	info = fi_dupinfo(self->info);
	ASSERT_NE(NULL, info);
	info->caps &= ~FI_TRIGGER;
	info->tx_attr->caps &= ~FI_TRIGGER;
	side_open(_metadata, self, info, &plain);
	ASSERT_EQ(0, fi_enable(plain.ep));
	connect_to(_metadata, &plain, &self->b);
	EXPECT_EQ(-FI_EINVAL, trig_send(plain.ep, buf, 8, plain.peer, &t, 0));
	side_close(&plain);
	fi_freeinfo(info);
	/* Nothing was queued: nothing runs. */
	ASSERT_EQ(0, fi_cntr_add(self->c, 10));
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
}

/* fi_cancel: a waiting triggered send completes with FI_ECANCELED. */
TEST_F(trig, cancel_waiting)
{
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	void *ctx = NULL;
	char in[8] = "";

	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	/* The largest threshold: never met here. */
	tctx_init(&t, self->c, (size_t)-1);
	ASSERT_EQ(0, trig_send(self->a.ep, "x", 2, self->a.peer, &t, 0));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1000));
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	ASSERT_EQ(0, fi_cancel(&self->a.ep->fid, &t));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e));
	EXPECT_EQ(FI_ECANCELED, cq_err(self->a.cq, &ctx));
	EXPECT_EQ(&t, ctx);
	EXPECT_EQ(-FI_ENOENT, fi_cancel(&self->a.ep->fid, &t));
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
}

/*
 * Closing the triggering counter cancels what waits on it (FI_ECANCELED
 * completions); closing the endpoint discards its waiting operations.
 */
TEST_F(trig, close_with_pending_work)
{
	struct fid_cntr *c2 = cntr_open(_metadata, self->domain);
	struct fi_triggered_context t[3];
	struct fi_cq_tagged_entry e;
	struct side s = { 0 };
	void *ctx = NULL;
	char in[8] = "";

	ASSERT_NE(NULL, c2);
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	tctx_init(&t[0], c2, 5);
	ASSERT_EQ(0, trig_send(self->a.ep, "c2", 3, self->a.peer, &t[0], 0));
	tctx_init(&t[1], c2, 6);
	ASSERT_EQ(0, trig_send(self->a.ep, "c2", 3, self->a.peer, &t[1], 0));
	ASSERT_EQ(0, fi_close(&c2->fid));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e));
		EXPECT_EQ(FI_ECANCELED, cq_err(self->a.cq, &ctx));
		EXPECT_EQ(&t[i], ctx);
	}

	side_open(_metadata, self, self->info, &s);
	ASSERT_EQ(0, fi_enable(s.ep));
	connect_to(_metadata, &s, &self->b);
	tctx_init(&t[2], self->c, 3);
	ASSERT_EQ(0, trig_send(s.ep, "gone", 5, s.peer, &t[2], 0));
	side_close(&s);
	ASSERT_EQ(0, fi_cntr_add(self->c, 3));
	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	EXPECT_STREQ("", in);
}

/* Deferred work: a send and counter updates queued on the domain. */
TEST_F(trig, deferred_work)
{
	struct fid_cntr *done = cntr_open(_metadata, self->domain);
	struct fid_cntr *tgt = cntr_open(_metadata, self->domain);
	struct fi_deferred_work wsend = { 0 }, wadd = { 0 }, wset = { 0 };
	struct fi_op_msg opm = { 0 };
	struct fi_op_cntr opa = { 0 }, ops = { 0 };
	struct fi_cq_tagged_entry e;
	struct iovec iov = { .iov_base = "work", .iov_len = 5 };
	char in[8] = "";

	ASSERT_NE(NULL, done);
	ASSERT_NE(NULL, tgt);
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	opm.ep = self->a.ep;
	opm.msg.msg_iov = &iov;
	opm.msg.iov_count = 1;
	opm.msg.addr = self->a.peer;
	opm.msg.context = &wsend;
	wsend.threshold = 2;
	wsend.triggering_cntr = self->c;
	wsend.completion_cntr = done;
	wsend.op_type = FI_OP_SEND;
	wsend.op.msg = &opm;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wsend));

	opa.cntr = tgt;
	opa.value = 5;
	wadd.threshold = 3;
	wadd.triggering_cntr = self->c;
	wadd.op_type = FI_OP_CNTR_ADD;
	wadd.op.cntr = &opa;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wadd));
	ops.cntr = tgt;
	ops.value = 100;
	wset.threshold = 4;
	wset.triggering_cntr = self->c;
	wset.op_type = FI_OP_CNTR_SET;
	wset.op.cntr = &ops;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wset));

	/* Success plus error values count for deferred work. */
	ASSERT_EQ(0, fi_cntr_adderr(self->c, 1));
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_STREQ("work", in);
	/* The completion counter counts it; the endpoint reports nothing. */
	EXPECT_EQ(0, fi_cntr_wait(done, 1, 5000));
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	EXPECT_EQ(0, fi_cntr_read(tgt));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	EXPECT_EQ(0, fi_cntr_wait(tgt, 5, 5000));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	EXPECT_EQ(0, fi_cntr_wait(tgt, 100, 5000));
	EXPECT_EQ(100, fi_cntr_read(tgt));
	fi_close(&done->fid);
	fi_close(&tgt->fid);
}

/* Deferred work refused, cancelled and flushed. */
TEST_F(trig, deferred_work_errors_cancel_flush)
{
	struct fid_cntr *tgt = cntr_open(_metadata, self->domain);
	struct fi_deferred_work w = { 0 }, ws = { 0 };
	struct fi_op_msg opm = { 0 };
	struct fi_op_cntr opc = { 0 };
	struct fi_cq_tagged_entry e;
	struct iovec iov = { .iov_base = "x", .iov_len = 2 };
	void *ctx = NULL;
	char in[8] = "";

	ASSERT_NE(NULL, tgt);
	EXPECT_EQ(-FI_EINVAL, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 NULL));
	/* An op type swnic does not know; an op without its struct. */
	opm.ep = self->b.ep;
	opm.msg.msg_iov = &iov;
	opm.msg.iov_count = 1;
	opm.msg.addr = FI_ADDR_UNSPEC;
	w.threshold = 1;
	w.triggering_cntr = self->c;
	w.op_type = (enum fi_op_type)99;
	w.op.msg = &opm;
	EXPECT_EQ(-FI_ENOSYS, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 &w));
	w.op_type = FI_OP_ATOMIC;
	w.op.atomic = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 &w));
	w.op_type = FI_OP_RECV;
	w.op.msg = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 &w));
	/* A "counter" that is a CQ: refused, nothing queued. */
	w.op.msg = &opm;
	w.triggering_cntr = (struct fid_cntr *)self->a.cq;
	EXPECT_EQ(-FI_EINVAL, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 &w));
	w.triggering_cntr = self->c;
	/* Counter work takes no completion counter; it needs a trigger. */
	opc.cntr = tgt;
	opc.value = 7;
	w.op_type = FI_OP_CNTR_ADD;
	w.op.cntr = &opc;
	w.completion_cntr = tgt;
	EXPECT_EQ(-FI_EINVAL, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 &w));
	w.completion_cntr = NULL;
	w.triggering_cntr = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 &w));

	/* Cancelled counter work never runs; a second cancel finds none. */
	w.triggering_cntr = self->c;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &w));
	EXPECT_EQ(0, fi_control(&self->domain->fid, FI_CANCEL_WORK, &w));
	EXPECT_EQ(-FI_ENOENT, fi_control(&self->domain->fid, FI_CANCEL_WORK,
					 &w));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	usleep(50000);
	EXPECT_EQ(0, fi_cntr_read(tgt));

	/* A flushed send completes with FI_ECANCELED, never sent. */
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	opm.ep = self->a.ep;
	opm.msg.addr = self->a.peer;
	opm.msg.context = &ws;
	ws.threshold = 10;
	ws.triggering_cntr = self->c;
	ws.op_type = FI_OP_SEND;
	ws.op.msg = &opm;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &ws));
	w.threshold = 15;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &w));
	EXPECT_EQ(0, fi_control(&self->domain->fid, FI_FLUSH_WORK, NULL));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e));
	EXPECT_EQ(FI_ECANCELED, cq_err(self->a.cq, &ctx));
	EXPECT_EQ(&ws, ctx);
	ASSERT_EQ(0, fi_cntr_set(self->c, 20));
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
	EXPECT_EQ(0, fi_cntr_read(tgt));
	fi_close(&tgt->fid);
}

/*
 * FI_FLUSH_WORK cancels deferred work only (fi_trigger(3)): an FI_TRIGGER
 * send waiting on the same counter stays, whether the flush names no
 * counter or that one, and runs at its threshold.
 */
TEST_F(trig, flush_work_leaves_triggered_ops)
{
	struct fi_deferred_work ws = { 0 }, wf = { 0 };
	struct fi_op_msg opm = { 0 };
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	struct iovec iov = { .iov_base = "w", .iov_len = 2 };
	void *ctx = NULL;
	char in[8] = "";

	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	tctx_init(&t, self->c, 5);
	ASSERT_EQ(0, trig_send(self->a.ep, "t", 2, self->a.peer, &t, 0));
	opm.ep = self->a.ep;
	opm.msg.msg_iov = &iov;
	opm.msg.iov_count = 1;
	opm.msg.addr = self->a.peer;
	opm.msg.context = &ws;
	ws.threshold = 5;
	ws.triggering_cntr = self->c;
	ws.op_type = FI_OP_SEND;
	ws.op.msg = &opm;
	wf.triggering_cntr = self->c;
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					&ws));
		EXPECT_EQ(0, fi_control(&self->domain->fid, FI_FLUSH_WORK,
					i ? &wf : NULL));
		ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e));
		EXPECT_EQ(FI_ECANCELED, cq_err(self->a.cq, &ctx));
		EXPECT_EQ(&ws, ctx) TH_LOG("flush %d", i);
		EXPECT_TRUE(cq_quiet(self->a.cq, 50)) TH_LOG("flush %d", i);
	}
	/* The triggered send runs at its threshold. */
	ASSERT_EQ(0, fi_cntr_set(self->c, 5));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t, e.op_context);
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_STREQ("t", in);
}

/*
 * FI_CANCEL_WORK cancels the deferred work's own operation, not another
 * one with the same context (NULL here, which fi_trigger(3) allows): a
 * receive posted with it before stays posted, and work that already ran
 * cancels nothing.
 */
TEST_F(trig, cancel_work_is_the_works_own)
{
	struct fi_deferred_work ws = { 0 };
	struct fi_op_msg opm = { 0 };
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;
	struct iovec iov = { .iov_base = "x", .iov_len = 2 };
	char in[8] = "", in2[8] = "", peer_in[8] = "";

	ASSERT_EQ(0, fi_recv(self->a.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	opm.ep = self->a.ep;
	opm.msg.msg_iov = &iov;
	opm.msg.iov_count = 1;
	opm.msg.addr = self->a.peer;
	opm.msg.context = NULL;
	ws.threshold = 10;
	ws.triggering_cntr = self->c;
	ws.op_type = FI_OP_SEND;
	ws.op.msg = &opm;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &ws));
	EXPECT_EQ(0, fi_control(&self->domain->fid, FI_CANCEL_WORK, &ws));
	/* The send is cancelled, not the receive. */
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e));
	ASSERT_EQ(1, fi_cq_readerr(self->a.cq, &err, 0));
	EXPECT_EQ(FI_ECANCELED, err.err);
	EXPECT_NE(0, err.flags & FI_SEND);
	EXPECT_EQ(0, err.flags & FI_RECV);
	EXPECT_EQ(-FI_ENOENT, fi_control(&self->domain->fid, FI_CANCEL_WORK,
					 &ws));
	/* The receive still waits: b's message lands in it. */
	ASSERT_EQ(0, fi_send(self->b.ep, "y", 2, NULL, self->b.peer, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_NE(0, e.flags & FI_RECV);
	EXPECT_STREQ("y", in);

	/* Work that ran: cancelling it leaves a receive of its context. */
	ASSERT_EQ(0, fi_recv(self->b.ep, peer_in, sizeof(peer_in), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_recv(self->a.ep, in2, sizeof(in2), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ws.threshold = 1;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &ws));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_STREQ("x", peer_in);
	/* Its own completion is not reported (no FI_COMPLETION). */
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	EXPECT_EQ(-FI_ENOENT, fi_control(&self->domain->fid, FI_CANCEL_WORK,
					 &ws));
	ASSERT_EQ(0, fi_send(self->b.ep, "z", 2, NULL, self->b.peer, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_NE(0, e.flags & FI_RECV);
	EXPECT_STREQ("z", in2);
}

/*
 * A deferred FI_OP_RECV that ran is a posted receive, no longer deferred
 * work: FI_CANCEL_WORK says -FI_ENOENT and the receive stays posted for
 * the next message. One still waiting is cancelled, as before.
 */
TEST_F(trig, cancel_work_leaves_the_receive_it_posted)
{
	struct fi_deferred_work wr = { 0 };
	struct fi_msg_tagged tm = { 0 };
	struct fi_op_msg opm = { 0 };
	struct fi_op_tagged opt = { 0 };
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;
	char in[8] = "", tin[8] = "";
	struct iovec iov = { .iov_base = in, .iov_len = sizeof(in) };
	struct iovec tiov = { .iov_base = tin, .iov_len = sizeof(tin) };
	struct gauges g0;

	opm.ep = self->a.ep;
	opm.msg.msg_iov = &iov;
	opm.msg.iov_count = 1;
	opm.msg.addr = FI_ADDR_UNSPEC;
	opm.msg.context = &wr;
	opm.flags = FI_COMPLETION;
	wr.triggering_cntr = self->c;
	wr.op_type = FI_OP_RECV;
	wr.op.msg = &opm;

	/* Still waiting: cancelled, FI_ECANCELED, then nothing to cancel. */
	wr.threshold = 5;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wr));
	EXPECT_EQ(0, fi_control(&self->domain->fid, FI_CANCEL_WORK, &wr));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e));
	ASSERT_EQ(1, fi_cq_readerr(self->a.cq, &err, 0));
	EXPECT_EQ(FI_ECANCELED, err.err);
	EXPECT_EQ(&wr, err.op_context);
	EXPECT_EQ(-FI_ENOENT, fi_control(&self->domain->fid, FI_CANCEL_WORK,
					 &wr));

	/* Due at once: it runs, and the cancel finds nothing waiting. */
	ASSERT_EQ(0, gauges_read(&g0));
	wr.threshold = 1;
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wr));
	/* It ran (the kernel holds it no more) and completed nothing. */
	ASSERT_TRUE(gauges_triggered_back(g0.triggered_ops));
	ASSERT_TRUE(cq_quiet(self->a.cq, 50));
	EXPECT_EQ(-FI_ENOENT, fi_control(&self->domain->fid, FI_CANCEL_WORK,
					 &wr));
	/* No FI_ECANCELED: the receive is still posted and takes b's send. */
	ASSERT_EQ(0, fi_send(self->b.ep, "run", 4, NULL, self->b.peer, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&wr, e.op_context);
	EXPECT_NE(0, e.flags & FI_RECV);
	EXPECT_STREQ("run", in);

	/* The same for a tagged one, due when its counter gets there. */
	tm.msg_iov = &tiov;
	tm.iov_count = 1;
	tm.addr = FI_ADDR_UNSPEC;
	tm.tag = 0x42;
	tm.context = &wr;
	opt.ep = self->a.ep;
	opt.msg = tm;
	opt.flags = FI_COMPLETION;
	wr.op_type = FI_OP_TRECV;
	wr.op.tagged = &opt;
	wr.threshold = 2;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wr));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_TRUE(gauges_triggered_back(g0.triggered_ops));
	ASSERT_TRUE(cq_quiet(self->a.cq, 50));
	EXPECT_EQ(-FI_ENOENT, fi_control(&self->domain->fid, FI_CANCEL_WORK,
					 &wr));
	ASSERT_EQ(0, fi_tsend(self->b.ep, "tag", 4, NULL, self->b.peer, 0x42,
			      NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_NE(0, e.flags & FI_TAGGED);
	EXPECT_EQ(0x42, e.tag);
	EXPECT_STREQ("tag", tin);
}

/* Post a triggered (tagged) receive of @len bytes at @buf. */
static ssize_t trig_recv(struct fid_ep *ep, void *buf, size_t len, bool tagged,
			 uint64_t tag, struct fi_triggered_context *t)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = t,
	};
	struct fi_msg_tagged tmsg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = tag, .context = t,
	};

	if (tagged)
		return fi_trecvmsg(ep, &tmsg, FI_TRIGGER | FI_COMPLETION);
	return fi_recvmsg(ep, &msg, FI_TRIGGER | FI_COMPLETION);
}

/*
 * A triggered receive is posted only at its threshold: a message that
 * came earlier waits unexpected until then, and lands at once after.
 */
TEST_F(trig, recv_waits_for_threshold)
{
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	char in[32] = "";

	tctx_init(&t, self->c, 2);
	ASSERT_EQ(0, trig_recv(self->b.ep, in, sizeof(in), false, 0, &t));
	ASSERT_EQ(0, fi_send(self->a.ep, "early bird", 11, NULL, self->a.peer,
			     NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	EXPECT_STREQ("", in);
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_EQ(&t, e.op_context);
	EXPECT_EQ(FI_RECV | FI_MSG, e.flags);
	EXPECT_EQ(11, e.len);
	EXPECT_STREQ("early bird", in);
}

/*
 * A triggered tagged receive matches by tag once posted: the message
 * with another tag stays unexpected; one sent after the threshold lands.
 */
TEST_F(trig, trecv_matches_after_threshold)
{
	struct fi_triggered_context t[2];
	struct fi_cq_tagged_entry e;
	uint64_t in[2] = { 0, 0 }, out7 = 7007, out8 = 8008, rest = 0;
	void *ctx = NULL;

	tctx_init(&t[0], self->c, 1);
	ASSERT_EQ(0, trig_recv(self->b.ep, &in[0], sizeof(in[0]), true, 7,
			       &t[0]));
	tctx_init(&t[1], self->c, 3);
	ASSERT_EQ(0, trig_recv(self->b.ep, &in[1], sizeof(in[1]), true, 9,
			       &t[1]));
	ASSERT_EQ(0, fi_tsend(self->a.ep, &out8, sizeof(out8), NULL,
			      self->a.peer, 8, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	/* Posted now (the counter is 1), but tag 8 is not its tag. */
	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	ASSERT_EQ(0, fi_tsend(self->a.ep, &out7, sizeof(out7), NULL,
			      self->a.peer, 7, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_EQ(&t[0], e.op_context);
	EXPECT_EQ(FI_RECV | FI_TAGGED, e.flags);
	EXPECT_EQ(7, e.tag);
	EXPECT_EQ(7007, in[0]);
	EXPECT_EQ(0, in[1]);
	/* The message tagged 8 is still there for a receive of its own. */
	ASSERT_EQ(0, fi_trecv(self->b.ep, &rest, sizeof(rest), NULL,
			      FI_ADDR_UNSPEC, 8, 0, &rest));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_EQ(&rest, e.op_context);
	EXPECT_EQ(8008, rest);
	ASSERT_EQ(0, fi_cancel(&self->b.ep->fid, &t[1]));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e));
	EXPECT_EQ(FI_ECANCELED, cq_err(self->b.cq, &ctx));
	EXPECT_EQ(&t[1], ctx);
}

/* An MR over @buf for atomics, and its fi_rma_ioc. */
static struct fid_mr *atomic_mr(struct __test_metadata *_metadata,
				FIXTURE_DATA(trig) *self, void *buf, size_t len,
				struct fi_rma_ioc *rma)
{
	struct fid_mr *mr = NULL;

	EXPECT_EQ(0, fi_mr_reg(self->domain, buf, len,
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			       NULL));
	if (mr) {
		rma->addr = rma_base(self->info, buf);
		rma->count = 1;
		rma->key = fi_mr_key(mr);
	}
	return mr;
}

/*
 * Triggered atomic, fetching atomic and compare-and-swap: the target
 * holds its value until each threshold, then changes exactly once; an
 * FI_INJECT operand is the value at the post.
 */
TEST_F(trig, triggered_atomics)
{
	static uint64_t target = 10;
	uint64_t add = 5, inj = 100, one = 1, cmp = 16, swap = 1000;
	uint64_t res1 = 0, res2 = 0;
	struct fi_triggered_context t[4];
	struct fi_cq_tagged_entry e;
	struct fi_ioc opnd = { .addr = &add, .count = 1 };
	struct fi_ioc res = { .addr = &res1, .count = 1 };
	struct fi_ioc cmpv = { .addr = &cmp, .count = 1 };
	struct fi_rma_ioc rma;
	struct fi_msg_atomic msg = {
		.msg_iov = &opnd, .iov_count = 1, .rma_iov = &rma,
		.rma_iov_count = 1, .datatype = FI_UINT64, .op = FI_SUM,
	};
	struct fid_mr *mr = atomic_mr(_metadata, self, &target,
				      sizeof(target), &rma);

	ASSERT_NE(NULL, mr);
	msg.addr = self->a.peer;
	tctx_init(&t[0], self->c, 1);
	msg.context = &t[0];
	ASSERT_EQ(0, fi_atomicmsg(self->a.ep, &msg, FI_TRIGGER | FI_COMPLETION));
	/* An injected operand: the value now, not at the threshold. */
	opnd.addr = &inj;
	tctx_init(&t[1], self->c, 2);
	msg.context = &t[1];
	ASSERT_EQ(0, fi_atomicmsg(self->a.ep, &msg,
				  FI_TRIGGER | FI_COMPLETION | FI_INJECT));
	inj = 99999;
	opnd.addr = &one;
	tctx_init(&t[2], self->c, 3);
	msg.context = &t[2];
	ASSERT_EQ(0, fi_fetch_atomicmsg(self->a.ep, &msg, &res, NULL, 1,
					FI_TRIGGER | FI_COMPLETION));
	opnd.addr = &swap;
	res.addr = &res2;
	msg.op = FI_CSWAP;
	tctx_init(&t[3], self->c, 4);
	msg.context = &t[3];
	ASSERT_EQ(0, fi_compare_atomicmsg(self->a.ep, &msg, &cmpv, NULL, 1,
					  &res, NULL, 1,
					  FI_TRIGGER | FI_COMPLETION));

	EXPECT_TRUE(cq_quiet(self->a.cq, 100));
	EXPECT_EQ(10, target);
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t[0], e.op_context);
	EXPECT_EQ(FI_ATOMIC | FI_WRITE, e.flags);
	EXPECT_EQ(15, target);
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t[1], e.op_context);
	EXPECT_EQ(115, target);
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t[2], e.op_context);
	EXPECT_EQ(FI_ATOMIC | FI_READ, e.flags);
	EXPECT_EQ(115, res1);
	EXPECT_EQ(116, target);
	/* The compare fails (116 != 16): nothing swapped, old value back. */
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t[3], e.op_context);
	EXPECT_EQ(116, res2);
	EXPECT_EQ(116, target);
	fi_close(&mr->fid);
}

/*
 * Deferred receives, tagged receives and the three atomics: each at its
 * threshold (success + error values), counted by the completion
 * counter, reported at the endpoint only with FI_COMPLETION.
 */
TEST_F(trig, deferred_recv_and_atomics)
{
	static uint64_t target = 1;
	struct fid_cntr *done = cntr_open(_metadata, self->domain);
	struct fi_deferred_work wr = { 0 }, wt = { 0 }, wa = { 0 };
	struct fi_deferred_work wf = { 0 }, wc = { 0 };
	struct fi_op_msg opr = { 0 };
	struct fi_op_tagged opt = { 0 };
	struct fi_op_atomic opa = { 0 };
	struct fi_op_fetch_atomic opf = { 0 };
	struct fi_op_compare_atomic opc = { 0 };
	uint64_t two = 2, three = 3, cmp = 6, swap = 50, res1 = 0, res2 = 0;
	struct fi_ioc io2 = { .addr = &two, .count = 1 };
	struct fi_ioc io3 = { .addr = &three, .count = 1 };
	struct fi_ioc ioswap = { .addr = &swap, .count = 1 };
	struct fi_ioc iocmp = { .addr = &cmp, .count = 1 };
	struct fi_ioc iores1 = { .addr = &res1, .count = 1 };
	struct fi_ioc iores2 = { .addr = &res2, .count = 1 };
	char in1[8] = "", in2[8] = "";
	struct iovec v1 = { .iov_base = in1, .iov_len = sizeof(in1) };
	struct iovec v2 = { .iov_base = in2, .iov_len = sizeof(in2) };
	struct fi_cq_tagged_entry e;
	struct fi_rma_ioc rma;
	struct fid_mr *mr = atomic_mr(_metadata, self, &target,
				      sizeof(target), &rma);

	ASSERT_NE(NULL, done);
	ASSERT_NE(NULL, mr);
	/* Two messages wait at b, unexpected. */
	ASSERT_EQ(0, fi_send(self->a.ep, "m1", 3, NULL, self->a.peer, NULL));
	ASSERT_EQ(0, fi_tsend(self->a.ep, "t9", 3, NULL, self->a.peer, 9,
			      NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));

	opr.ep = self->b.ep;
	opr.msg.msg_iov = &v1;
	opr.msg.iov_count = 1;
	opr.msg.addr = FI_ADDR_UNSPEC;
	opr.msg.context = &wr;
	wr.threshold = 1;
	wr.triggering_cntr = self->c;
	wr.completion_cntr = done;
	wr.op_type = FI_OP_RECV;
	wr.op.msg = &opr;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wr));
	opt.ep = self->b.ep;
	opt.msg.msg_iov = &v2;
	opt.msg.iov_count = 1;
	opt.msg.addr = FI_ADDR_UNSPEC;
	opt.msg.tag = 9;
	opt.msg.context = &wt;
	wt = wr;
	wt.op_type = FI_OP_TRECV;
	wt.op.tagged = &opt;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wt));

	opa.ep = self->a.ep;
	opa.msg.msg_iov = &io2;
	opa.msg.iov_count = 1;
	opa.msg.addr = self->a.peer;
	opa.msg.rma_iov = &rma;
	opa.msg.rma_iov_count = 1;
	opa.msg.datatype = FI_UINT64;
	opa.msg.op = FI_SUM;
	opa.msg.context = &wa;
	wa.threshold = 2;
	wa.triggering_cntr = self->c;
	wa.completion_cntr = done;
	wa.op_type = FI_OP_ATOMIC;
	wa.op.atomic = &opa;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wa));
	opf.ep = self->a.ep;
	opf.msg = opa.msg;
	opf.msg.msg_iov = &io3;
	opf.msg.context = &wf;
	opf.fetch.msg_iov = &iores1;
	opf.fetch.iov_count = 1;
	wf = wa;
	wf.threshold = 3;
	wf.op_type = FI_OP_FETCH_ATOMIC;
	wf.op.fetch_atomic = &opf;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wf));
	opc.ep = self->a.ep;
	opc.msg = opa.msg;
	opc.msg.msg_iov = &ioswap;
	opc.msg.op = FI_CSWAP;
	opc.msg.context = &wc;
	opc.fetch.msg_iov = &iores2;
	opc.fetch.iov_count = 1;
	opc.compare.msg_iov = &iocmp;
	opc.compare.iov_count = 1;
	opc.flags = FI_COMPLETION;
	wc = wa;
	wc.threshold = 4;
	wc.op_type = FI_OP_COMPARE_ATOMIC;
	wc.op.compare_atomic = &opc;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wc));

	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	EXPECT_STREQ("", in1);
	/* An error counts for deferred work: both receives are posted. */
	ASSERT_EQ(0, fi_cntr_adderr(self->c, 1));
	EXPECT_EQ(0, fi_cntr_wait(done, 2, 5000));
	EXPECT_STREQ("m1", in1);
	EXPECT_STREQ("t9", in2);
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
	EXPECT_EQ(1, target);
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	EXPECT_EQ(0, fi_cntr_wait(done, 3, 5000));
	EXPECT_EQ(3, target);
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	EXPECT_EQ(0, fi_cntr_wait(done, 4, 5000));
	EXPECT_EQ(3, res1);
	EXPECT_EQ(6, target);
	EXPECT_TRUE(cq_quiet(self->a.cq, 50));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	/* FI_COMPLETION: this one is reported at the endpoint. */
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&wc, e.op_context);
	EXPECT_EQ(0, fi_cntr_wait(done, 5, 5000));
	EXPECT_EQ(6, res2);
	EXPECT_EQ(50, target);
	EXPECT_EQ(0, fi_cntr_readerr(done));
	fi_close(&mr->fid);
	fi_close(&done->fid);
}

/* FI_CANCEL_WORK and FI_FLUSH_WORK of receives and atomics. */
TEST_F(trig, cancel_flush_recv_and_atomic)
{
	static uint64_t target = 42;
	struct fi_deferred_work wr = { 0 }, wa = { 0 }, wr2 = { 0 };
	struct fi_op_msg opr = { 0 };
	struct fi_op_atomic opa = { 0 };
	uint64_t one = 1;
	struct fi_ioc io = { .addr = &one, .count = 1 };
	char in[8] = "";
	struct iovec v = { .iov_base = in, .iov_len = sizeof(in) };
	struct fi_cq_tagged_entry e;
	struct fi_rma_ioc rma;
	void *ctx = NULL;
	struct fid_mr *mr = atomic_mr(_metadata, self, &target,
				      sizeof(target), &rma);

	ASSERT_NE(NULL, mr);
	opr.ep = self->b.ep;
	opr.msg.msg_iov = &v;
	opr.msg.iov_count = 1;
	opr.msg.addr = FI_ADDR_UNSPEC;
	opr.msg.context = &wr;
	wr.threshold = 10;
	wr.triggering_cntr = self->c;
	wr.op_type = FI_OP_RECV;
	wr.op.msg = &opr;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wr));
	EXPECT_EQ(0, fi_control(&self->domain->fid, FI_CANCEL_WORK, &wr));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e));
	EXPECT_EQ(FI_ECANCELED, cq_err(self->b.cq, &ctx));
	EXPECT_EQ(&wr, ctx);
	EXPECT_EQ(-FI_ENOENT, fi_control(&self->domain->fid, FI_CANCEL_WORK,
					 &wr));

	/* Flushed by their counter: an atomic and a receive. */
	opa.ep = self->a.ep;
	opa.msg.msg_iov = &io;
	opa.msg.iov_count = 1;
	opa.msg.addr = self->a.peer;
	opa.msg.rma_iov = &rma;
	opa.msg.rma_iov_count = 1;
	opa.msg.datatype = FI_UINT64;
	opa.msg.op = FI_SUM;
	opa.msg.context = &wa;
	wa.threshold = 11;
	wa.triggering_cntr = self->c;
	wa.op_type = FI_OP_ATOMIC;
	wa.op.atomic = &opa;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wa));
	wr2 = wr;
	wr2.threshold = 12;
	opr.msg.context = &wr2;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &wr2));
	EXPECT_EQ(0, fi_control(&self->domain->fid, FI_FLUSH_WORK, &wa));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e));
	EXPECT_EQ(FI_ECANCELED, cq_err(self->a.cq, &ctx));
	EXPECT_EQ(&wa, ctx);
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e));
	EXPECT_EQ(FI_ECANCELED, cq_err(self->b.cq, &ctx));
	EXPECT_EQ(&wr2, ctx);
	/* Nothing is left to run. */
	ASSERT_EQ(0, fi_cntr_set(self->c, 20));
	ASSERT_EQ(0, fi_send(self->a.ep, "x", 2, NULL, self->a.peer, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_TRUE(cq_quiet(self->b.cq, 100));
	EXPECT_EQ(42, target);
	EXPECT_STREQ("", in);
	fi_close(&mr->fid);
}

/*
 * Closing the counter cancels a waiting receive (FI_ECANCELED);
 * closing the endpoint or the domain with receives, atomics, sends and
 * counter work pending leaves nothing behind in the kernel.
 */
TEST_F(trig, close_with_pending_recv_and_atomic)
{
	static uint64_t target;
	struct fid_cntr *c2 = cntr_open(_metadata, self->domain);
	struct fi_triggered_context t[4];
	struct fi_cq_tagged_entry e;
	struct gauges g0, g1;
	struct side s = { 0 };
	uint64_t one = 1;
	struct fi_ioc io = { .addr = &one, .count = 1 };
	struct fi_rma_ioc rma;
	struct fi_msg_atomic amsg = {
		.msg_iov = &io, .iov_count = 1, .rma_iov = &rma,
		.rma_iov_count = 1, .datatype = FI_UINT64, .op = FI_SUM,
	};
	struct fid_domain *dom2, *keep;
	struct fi_deferred_work w = { 0 };
	struct fi_op_cntr opc = { 0 };
	struct fid_cntr *c3;
	struct fid_mr *mr;
	void *ctx = NULL;
	char in[8] = "", in2[8] = "";

	ASSERT_NE(NULL, c2);
	ASSERT_EQ(0, gauges_read(&g0));
	tctx_init(&t[0], c2, 5);
	ASSERT_EQ(0, trig_recv(self->b.ep, in, sizeof(in), false, 0, &t[0]));
	ASSERT_EQ(0, fi_close(&c2->fid));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e));
	EXPECT_EQ(FI_ECANCELED, cq_err(self->b.cq, &ctx));
	EXPECT_EQ(&t[0], ctx);

	/* An endpoint closed with a receive and an atomic waiting. */
	mr = atomic_mr(_metadata, self, &target, sizeof(target), &rma);
	ASSERT_NE(NULL, mr);
	side_open(_metadata, self, self->info, &s);
	ASSERT_EQ(0, fi_enable(s.ep));
	connect_to(_metadata, &s, &self->b);
	tctx_init(&t[1], self->c, 100);
	ASSERT_EQ(0, trig_recv(s.ep, in2, sizeof(in2), false, 0, &t[1]));
	amsg.addr = s.peer;
	tctx_init(&t[2], self->c, 100);
	amsg.context = &t[2];
	ASSERT_EQ(0, fi_atomicmsg(s.ep, &amsg, FI_TRIGGER | FI_COMPLETION));
	ASSERT_EQ(0, gauges_read(&g1));
	EXPECT_EQ(g0.triggered_ops + 2, g1.triggered_ops);
	side_close(&s);
	EXPECT_TRUE(gauges_triggered_back(g0.triggered_ops));
	ASSERT_EQ(0, fi_cntr_set(self->c, 200));
	EXPECT_EQ(0, target);
	EXPECT_STREQ("", in2);

	/* A second domain closed with triggered work of each kind waiting. */
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &dom2, NULL));
	c3 = cntr_open(_metadata, dom2);
	ASSERT_NE(NULL, c3);
	keep = self->domain;
	self->domain = dom2;
	side_open(_metadata, self, self->info, &s);
	self->domain = keep;
	ASSERT_EQ(0, fi_enable(s.ep));
	connect_to(_metadata, &s, &self->b);
	tctx_init(&t[3], c3, 50);
	ASSERT_EQ(0, trig_recv(s.ep, in2, sizeof(in2), false, 0, &t[3]));
	ASSERT_EQ(0, trig_send(s.ep, "never", 6, s.peer, &t[3], 0));
	opc.cntr = c3;
	opc.value = 1;
	w.threshold = 50;
	w.triggering_cntr = c3;
	w.op_type = FI_OP_CNTR_ADD;
	w.op.cntr = &opc;
	ASSERT_EQ(0, fi_control(&dom2->fid, FI_QUEUE_WORK, &w));
	ASSERT_EQ(0, gauges_read(&g1));
	EXPECT_EQ(g0.triggered_ops + 3, g1.triggered_ops);
	side_close(&s);
	fi_close(&c3->fid);
	EXPECT_EQ(0, fi_close(&dom2->fid));
	EXPECT_TRUE(gauges_triggered_back(g0.triggered_ops));
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
	fi_close(&mr->fid);
}

/*
 * A triggered send to a target out of resources (its unexpected buffer
 * full: an RM_ENABLED endpoint gets EAGAIN) is tried again until the
 * target has room, and then delivered once.
 */
TEST_F(trig, rm_enabled_target_full_is_retried)
{
	const size_t big = 4 << 20;
	char *buf = malloc(big), *back = malloc(big);
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	char in[8] = "";

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, back);
	ASSERT_EQ(FI_RM_ENABLED, self->info->domain_attr->resource_mgmt);
	memset(buf, 'x', big);
	/* 4 MiB buffered at b, unexpected: all it takes. */
	ASSERT_EQ(0, fi_send(self->a.ep, buf, big, NULL, self->a.peer, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	tctx_init(&t, self->c, 1);
	ASSERT_EQ(0, trig_send(self->a.ep, "late", 5, self->a.peer, &t, 0));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	EXPECT_TRUE(cq_quiet(self->a.cq, 300));
	/* Room at b: the retry gets through, once. */
	ASSERT_EQ(0, fi_recv(self->b.ep, back, big, NULL, FI_ADDR_UNSPEC,
			     back));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_EQ(back, e.op_context);
	EXPECT_EQ(big, e.len);
	EXPECT_EQ(0, memcmp(buf, back, big));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&t, e.op_context);
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     in));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_STREQ("late", in);
	EXPECT_TRUE(cq_quiet(self->b.cq, 50));
	free(buf);
	free(back);
}

/* ... and completes with FI_EAGAIN once the retry time is over. */
TEST_F(trig, rm_enabled_retry_gives_up)
{
	const size_t big = 4 << 20;
	char *buf = malloc(big);
	struct fi_triggered_context t;
	struct fi_cq_tagged_entry e;
	void *ctx = NULL;

	ASSERT_NE(NULL, buf);
	memset(buf, 'y', big);
	ASSERT_EQ(0, fi_send(self->a.ep, buf, big, NULL, self->a.peer, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	tctx_init(&t, self->c, 1);
	ASSERT_EQ(0, trig_send(self->a.ep, "late", 5, self->a.peer, &t, 0));
	ASSERT_EQ(0, fi_cntr_add(self->c, 1));
	/* SWNIC_TRIG_RETRY_MS is 5 s; give it 15. */
	ASSERT_EQ(-FI_EAVAIL, cq_get_ms(self->a.cq, &e, 15000));
	EXPECT_EQ(FI_EAGAIN, cq_err(self->a.cq, &ctx));
	EXPECT_EQ(&t, ctx);
	free(buf);
}

/* The gauge: back where it was once triggered work is gone. */
TEST_F(trig, no_triggered_op_left_behind)
{
	struct fi_triggered_context t[3];
	struct gauges g0, g1;
	struct side s = { 0 };
	char in[8];

	ASSERT_EQ(0, gauges_read(&g0));
	side_open(_metadata, self, self->info, &s);
	ASSERT_EQ(0, fi_enable(s.ep));
	connect_to(_metadata, &s, &self->b);
	tctx_init(&t[0], self->c, 1000);
	ASSERT_EQ(0, trig_recv(s.ep, in, sizeof(in), false, 0, &t[0]));
	tctx_init(&t[1], self->c, 1000);
	ASSERT_EQ(0, trig_recv(s.ep, in, sizeof(in), true, 3, &t[1]));
	tctx_init(&t[2], self->c, 1000);
	ASSERT_EQ(0, trig_send(s.ep, "z", 2, s.peer, &t[2], 0));
	ASSERT_EQ(0, gauges_read(&g1));
	EXPECT_EQ(g0.triggered_ops + 3, g1.triggered_ops);
	side_close(&s);
	EXPECT_TRUE(gauges_triggered_back(g0.triggered_ops));
}

/* An endpoint of @dom bound to a new CQ and AV (the child's: no harness). */
static int child_side(struct fid_domain *dom, struct fi_info *info,
		      struct side *s)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED, .size = 64,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	if (fi_endpoint(dom, info, &s->ep, NULL) ||
	    fi_cq_open(dom, &cq_attr, &s->cq, NULL) ||
	    fi_av_open(dom, &av_attr, &s->av, NULL) ||
	    fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV) ||
	    fi_ep_bind(s->ep, &s->av->fid, 0) || fi_enable(s->ep))
		return -1;
	return 0;
}

/*
 * The child: a domain of its own with a triggered send being retried (its
 * target's unexpected buffer full), a triggered receive and send waiting
 * for their threshold - then it exits without closing anything.
 */
static int exit_with_work_child(struct fi_info *info)
{
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP };
	const size_t big = 4 << 20;
	struct fi_triggered_context t[3];
	struct fi_cq_tagged_entry e;
	struct fid_fabric *fabric;
	struct fid_domain *dom;
	struct side a = { 0 }, b = { 0 };
	struct fid_cntr *c;
	char *buf = calloc(1, big), in[8], name[64];
	size_t len = sizeof(name);

	if (!buf || fi_fabric(info->fabric_attr, &fabric, NULL) ||
	    fi_domain(fabric, info, &dom, NULL) ||
	    fi_cntr_open(dom, &cattr, &c, NULL) ||
	    child_side(dom, info, &a) || child_side(dom, info, &b) ||
	    fi_getname(&b.ep->fid, name, &len) ||
	    fi_av_insert(a.av, name, 1, &a.peer, 0, NULL) != 1)
		return 2;
	if (fi_send(a.ep, buf, big, NULL, a.peer, NULL) ||
	    cq_get(a.cq, &e) != 1)
		return 3;
	tctx_init(&t[0], c, 1);
	tctx_init(&t[1], c, 1000);
	tctx_init(&t[2], c, 1000);
	if (trig_send(a.ep, "late", 5, a.peer, &t[0], 0) ||
	    trig_recv(b.ep, in, sizeof(in), false, 0, &t[1]) ||
	    trig_send(a.ep, "x", 2, a.peer, &t[2], 0) || fi_cntr_add(c, 1))
		return 4;
	/* Being retried now; nothing completes. */
	if (!cq_quiet(a.cq, 200))
		return 5;
	return 0;
}

/*
 * A process that exits while its triggered work is being retried and
 * more waits for a threshold: the kernel cancels it all with the domain,
 * and nothing is left (gauges back where they were).
 */
TEST_F(trig, exit_with_work_retrying_leaves_nothing)
{
	struct gauges g0, g1;
	int status;
	pid_t pid;

	ASSERT_EQ(0, gauges_read(&g0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(exit_with_work_child(self->info));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(gauges_triggered_back(g0.triggered_ops));
	/* Domains, endpoints, CQs, MRs, unexpected messages: all gone. */
	ASSERT_EQ(0, gauges_settle(&g0, &g1));
	EXPECT_TRUE(gauges_equal(&g0, &g1));
}

TEST_HARNESS_MAIN
