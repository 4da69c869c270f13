// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive contexts in the kernel ABI (SWNIC_FEAT_SRX,
 * SWNIC_EP_F_SRX and SWNIC_EP_F_SRX_JOIN): the create contract and
 * hostile fds (another domain's context, a plain endpoint, a member, a
 * file that is not swnic's, no file at all); receives of the context
 * taken by messages arriving at either member and completed on that
 * member's CQ; completions that belong to no message on the oldest
 * member's CQ, and none while no endpoint has joined; a context's SQ
 * never read; a context closed before its members; members and context
 * closed while a sender keeps sending to them.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "swnic_rings.h"

#define DEV_PATH "/dev/swnic0"

/* A shared receive context of @dom (only its RQ is mapped). */
static int t_srx_create(int dom, uint32_t entries, struct t_ep *srx)
{
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_RDM,
		.flags = SWNIC_EP_F_SRX | SWNIC_EP_F_DB_SYSCALL,
		.sq_entries = 1, .rq_entries = entries,
	};
	int ret;

	if (ioctl(dom, SWNIC_IOCTL_EP_CREATE, &c))
		return -errno;
	memset(srx, 0, sizeof(*srx));
	srx->fd = c.fd;
	ret = t_ring_map(&srx->sq, c.fd, &c.sq);
	return ret ? ret : t_ring_map(&srx->rq, c.fd, &c.rq);
}

/* An endpoint of @dom, completing on @cq, that joins the context @srx_fd. */
static int t_member_create(int dom, const struct t_cq *cq, int srx_fd,
			   struct t_ep *ep)
{
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_RDM,
		.flags = SWNIC_EP_F_SRX_JOIN | SWNIC_EP_F_DB_SYSCALL,
		.tx_cq = cq->id, .rx_cq = cq->id,
		.sq_entries = 16, .rq_entries = 16, .srx_fd = srx_fd,
	};
	int ret;

	if (ioctl(dom, SWNIC_IOCTL_EP_CREATE, &c))
		return -errno;
	ep->fd = c.fd;
	ep->port = c.port;
	ep->addr = c.addr;
	ret = t_ring_map(&ep->sq, c.fd, &c.sq);
	return ret ? ret : t_ring_map(&ep->rq, c.fd, &c.rq);
}

FIXTURE(srx)
{
	int da, db;			/* the members' domain, the sender's */
	struct t_cq c1, c2, cs;
	struct t_ep srx, m1, m2, s;
};

FIXTURE_SETUP(srx)
{
	struct swnic_query_device q = { .size = sizeof(q) };

	self->srx.fd = self->m1.fd = self->m2.fd = self->s.fd = -1;
	self->da = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	self->db = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->da);
	ASSERT_LE(0, self->db);
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	if (!(q.features & SWNIC_FEAT_SRX))
		SETUP_SKIP("the module has no shared receive contexts");
	ASSERT_EQ(0, t_cq_create(self->da, 64, &self->c1));
	ASSERT_EQ(0, t_cq_create(self->da, 64, &self->c2));
	ASSERT_EQ(0, t_cq_create(self->db, 64, &self->cs));
	ASSERT_EQ(0, t_srx_create(self->da, 16, &self->srx));
	ASSERT_EQ(0, t_member_create(self->da, &self->c1, self->srx.fd,
				     &self->m1));
	ASSERT_EQ(0, t_member_create(self->da, &self->c2, self->srx.fd,
				     &self->m2));
	ASSERT_EQ(0, t_ep_create(self->db, &self->cs, &self->cs,
				 SWNIC_EP_F_DB_SYSCALL, 0, 16, &self->s));
}

FIXTURE_TEARDOWN(srx)
{
	t_ep_destroy(&self->m1);
	t_ep_destroy(&self->m2);
	t_ep_destroy(&self->srx);
	t_ep_destroy(&self->s);
	close(self->da);
	close(self->db);
}

/* The sender sends @buf to @to; its completion's error. */
static int send_to(struct __test_metadata *_metadata, FIXTURE_DATA(srx) *self,
		   const void *buf, size_t len, const struct t_ep *to)
{
	struct swnic_sqe s = t_send(buf, len, to, 1);
	struct swnic_cqe c;

	EXPECT_EQ(0, t_ring_push(&self->s.sq, &s));
	EXPECT_EQ(0, t_doorbell(&self->s, NULL));
	EXPECT_EQ(0, t_cq_wait(&self->cs, &c, 5000));
	return c.err;
}

static int create_err(int dom, struct swnic_ep_create *c)
{
	int ret = ioctl(dom, SWNIC_IOCTL_EP_CREATE, c);

	if (!ret) {
		close(c->fd);
		return 0;
	}
	return errno;
}

TEST_F(srx, create_contract_and_hostile_fds)
{
	struct swnic_ep_create base = {
		.size = sizeof(base), .type = SWNIC_EP_RDM,
		.flags = SWNIC_EP_F_SRX_JOIN | SWNIC_EP_F_DB_SYSCALL,
		.tx_cq = self->c1.id, .rx_cq = self->c1.id,
		.sq_entries = 16, .rq_entries = 16,
	};
	struct swnic_ep_create c;
	struct t_ep other;
	int devnull = open("/dev/null", O_RDONLY);

	ASSERT_LE(0, devnull);
	/* A context: no CQ, counter, port, DSCP, engine, RM or joining. */
	c = base;
	c.flags = SWNIC_EP_F_SRX;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.tx_cq = c.rx_cq = 0;
	EXPECT_EQ(0, create_err(self->da, &c));
	c.port = 4000;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.port = 0;
	c.cntr[0] = 1;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.cntr[0] = 0;
	c.dscp = 8;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.dscp = 0;
	c.flags = SWNIC_EP_F_SRX | SWNIC_EP_F_DB_ENGINE;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.flags = SWNIC_EP_F_SRX | SWNIC_EP_F_RM_ENABLED;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.flags = SWNIC_EP_F_SRX | SWNIC_EP_F_SRX_JOIN;
	c.srx_fd = self->srx.fd;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	/* srx_fd only with JOIN; the reserved word 0. */
	c = base;
	c.flags = SWNIC_EP_F_DB_SYSCALL;
	c.srx_fd = self->srx.fd;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c = base;
	c.srx_fd = self->srx.fd;
	c.__reserved3 = 1;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	/* What srx_fd may not be. */
	c = base;
	c.srx_fd = -1;
	EXPECT_EQ(EBADF, create_err(self->da, &c));
	c.srx_fd = 1 << 20;
	EXPECT_EQ(EBADF, create_err(self->da, &c));
	c.srx_fd = devnull;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.srx_fd = self->da;		/* a domain */
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.srx_fd = self->c1.fd;		/* a CQ */
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.srx_fd = self->s.fd;		/* a plain endpoint */
	EXPECT_EQ(EINVAL, create_err(self->db, &c));
	c.srx_fd = self->m1.fd;		/* a member */
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	/* Another domain's context. */
	ASSERT_EQ(0, t_srx_create(self->db, 8, &other));
	c.srx_fd = other.fd;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.tx_cq = c.rx_cq = self->cs.id;
	EXPECT_EQ(0, create_err(self->db, &c));
	t_ep_destroy(&other);
	close(devnull);
}

/*
 * Receives of the context, taken by what arrives at either member, in
 * posting order, each completing on the member it arrived at; what
 * arrives first waits in the context for the next receive.
 */
TEST_F(srx, members_share_the_receives)
{
	char dst[3][8] = { { 0 } }, one[8] = "one", two[8] = "two",
	     three[8] = "three";
	struct swnic_ep_doorbell db;
	struct swnic_cqe c;
	struct swnic_rqe r;

	for (int i = 0; i < 2; i++) {
		r = t_recv(dst[i], 8, 10 + i);
		ASSERT_EQ(0, t_ring_push(&self->srx.rq, &r));
	}
	/* The RQ is lazy: the senders take the receives from it. */
	EXPECT_EQ(0, send_to(_metadata, self, two, 8, &self->m2));
	EXPECT_EQ(0, send_to(_metadata, self, one, 8, &self->m1));
	ASSERT_EQ(0, t_cq_wait(&self->c2, &c, 5000));
	EXPECT_EQ(10, c.context);
	EXPECT_EQ(self->s.port, c.src_port);
	EXPECT_STREQ("two", dst[0]);
	ASSERT_EQ(0, t_cq_wait(&self->c1, &c, 5000));
	EXPECT_EQ(11, c.context);
	EXPECT_STREQ("one", dst[1]);
	EXPECT_EQ(0, t_cq_pop(&self->c1, &c));
	EXPECT_EQ(0, t_cq_pop(&self->c2, &c));

	/* Unexpected at m1: the context asks for a doorbell, and takes it. */
	EXPECT_EQ(0, send_to(_metadata, self, three, 8, &self->m1));
	EXPECT_TRUE(atomic_load(self->srx.rq.flags) & SWNIC_RING_F_NEED_WAKEUP);
	r = t_recv(dst[2], 8, 12);
	ASSERT_EQ(0, t_ring_push(&self->srx.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->srx, NULL));
	ASSERT_EQ(0, t_cq_wait(&self->c1, &c, 5000));
	EXPECT_EQ(12, c.context);
	EXPECT_STREQ("three", dst[2]);
	EXPECT_FALSE(atomic_load(self->srx.rq.flags) &
		     SWNIC_RING_F_NEED_WAKEUP);
	/* A member's own RQ is never read. */
	r = t_recv(dst[0], 8, 13);
	ASSERT_EQ(0, t_ring_push(&self->m1.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->m1, &db));
	EXPECT_EQ(0, db.rq_done);
}

/* Cancel: on the oldest member's CQ; with no member, nowhere: ENOTCONN. */
TEST_F(srx, cancel_goes_to_the_oldest_member)
{
	struct swnic_ep_cancel k = { .size = sizeof(k), .context = 0x55 };
	char dst[8];
	struct swnic_rqe r = t_recv(dst, 8, 0x55);
	struct swnic_cqe c;
	struct t_ep lone;

	ASSERT_EQ(0, t_ring_push(&self->srx.rq, &r));
	ASSERT_EQ(0, ioctl(self->srx.fd, SWNIC_IOCTL_EP_CANCEL, &k));
	ASSERT_EQ(0, t_cq_wait(&self->c1, &c, 5000));
	EXPECT_EQ(0x55, c.context);
	EXPECT_EQ(ECANCELED, c.err);
	/* m1 gone: m2 is the oldest. */
	t_ep_destroy(&self->m1);
	ASSERT_EQ(0, t_ring_push(&self->srx.rq, &r));
	ASSERT_EQ(0, ioctl(self->srx.fd, SWNIC_IOCTL_EP_CANCEL, &k));
	ASSERT_EQ(0, t_cq_wait(&self->c2, &c, 5000));
	EXPECT_EQ(ECANCELED, c.err);
	/* A member cancels nothing of the context's; nor sends of it. */
	ASSERT_EQ(0, t_ring_push(&self->srx.rq, &r));
	ASSERT_EQ(-1, ioctl(self->m2.fd, SWNIC_IOCTL_EP_CANCEL, &k));
	EXPECT_EQ(ENOENT, errno);
	k.flags = SWNIC_CANCEL_SEND;
	ASSERT_EQ(-1, ioctl(self->srx.fd, SWNIC_IOCTL_EP_CANCEL, &k));
	EXPECT_EQ(ENOENT, errno);
	k.flags = 0;
	ASSERT_EQ(0, ioctl(self->srx.fd, SWNIC_IOCTL_EP_CANCEL, &k));
	ASSERT_EQ(0, t_cq_wait(&self->c2, &c, 5000));

	/* A context no endpoint joined has no CQ to tell: it stays. */
	ASSERT_EQ(0, t_srx_create(self->da, 8, &lone));
	ASSERT_EQ(0, t_ring_push(&lone.rq, &r));
	ASSERT_EQ(-1, ioctl(lone.fd, SWNIC_IOCTL_EP_CANCEL, &k));
	EXPECT_EQ(ENOTCONN, errno);
	t_ep_destroy(&lone);
}

/*
 * A create that joins a context and then fails leaves no member behind:
 * the context, which no endpoint joined, still has no CQ to tell of a
 * cancel (ENOTCONN), and closes. It used to keep a failed create whose SQ
 * was refused (too large) as its member after freeing it: a cancel then
 * completed through freed memory, and the context was never freed.
 */
TEST_F(srx, a_failed_join_leaves_no_member)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_ep_cancel k = { .size = sizeof(k), .context = 0x77 };
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_RDM,
		.flags = SWNIC_EP_F_SRX_JOIN | SWNIC_EP_F_DB_SYSCALL,
		.tx_cq = self->c1.id, .rx_cq = self->c1.id,
		.sq_entries = 16, .rq_entries = 16,
	};
	char dst[8];
	struct swnic_rqe r = t_recv(dst, 8, 0x77);
	struct swnic_cqe cqe;
	struct t_ep lone;

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	ASSERT_EQ(0, t_srx_create(self->da, 8, &lone));
	c.srx_fd = lone.fd;
	/* Refused after the join: its SQ ... */
	c.sq_entries = q.max_sq_entries + 1;
	EXPECT_EQ(EINVAL, create_err(self->da, &c));
	c.sq_entries = 16;
	/* ... its port, taken ... */
	c.port = self->m1.port;
	EXPECT_EQ(EADDRINUSE, create_err(self->da, &c));
	c.port = 0;
	/* ... its RQ (a member's is the smallest: never refused). */
	c.rq_entries = 1U << 30;
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	close(c.fd);

	ASSERT_EQ(0, t_ring_push(&lone.rq, &r));
	ASSERT_EQ(-1, ioctl(lone.fd, SWNIC_IOCTL_EP_CANCEL, &k));
	EXPECT_EQ(ENOTCONN, errno);
	/* Nothing was told on the would-be members' CQ. */
	EXPECT_EQ(0, t_cq_pop(&self->c1, &cqe));
	t_ep_destroy(&lone);
}

/* Whatever is written into a context's SQ is never read. */
TEST_F(srx, context_sq_is_never_read)
{
	char buf[8] = "x";
	struct swnic_sqe s = t_send(buf, 8, &self->s, 1);
	struct swnic_ep_doorbell db;
	struct swnic_cqe c;

	ASSERT_EQ(0, t_ring_push(&self->srx.sq, &s));
	ASSERT_EQ(0, t_doorbell(&self->srx, &db));
	EXPECT_EQ(0, db.sq_done);
	EXPECT_EQ(0, t_cq_pop(&self->cs, &c));
}

/*
 * A context closed before its members (a process may close fds in any
 * order): its members refuse what arrives; a member that closes later
 * takes its buffered messages with it.
 */
TEST_F(srx, context_closed_before_members)
{
	char msg[8] = "late";

	EXPECT_EQ(0, send_to(_metadata, self, msg, 8, &self->m2));
	t_ep_destroy(&self->srx);
	EXPECT_EQ(ECONNREFUSED, send_to(_metadata, self, msg, 8, &self->m1));
	t_ep_destroy(&self->m2);
	EXPECT_EQ(ECONNREFUSED, send_to(_metadata, self, msg, 8, &self->m1));
}

struct race {
	FIXTURE_DATA(srx) *self;
	_Atomic int stop;
	_Atomic int sent;
	int ok, refused, full, other, timeouts;
	int other_err;			/* the last unexpected error */
};

/* Send to m1 and m2 in turn, one at a time, until told to stop. */
static void *race_sender(void *arg)
{
	struct race *r = arg;
	struct t_ep to[2] = { r->self->m1, r->self->m2 };
	char msg[8] = "race";

	for (int i = 0; !atomic_load(&r->stop) && i < 1000000; i++) {
		struct swnic_sqe s = t_send(msg, 8, &to[i % 2], i);
		struct swnic_cqe c;

		if (t_ring_push(&r->self->s.sq, &s) ||
		    t_doorbell(&r->self->s, NULL)) {
			r->other++;
			break;
		}
		if (t_cq_wait(&r->self->cs, &c, 5000)) {
			r->timeouts++;
			break;
		}
		if (!c.err)
			r->ok++;
		else if (c.err == ECONNREFUSED)
			r->refused++;
		else if (c.err == EAGAIN)
			r->full++;	/* the context's unexpected queue */
		else
			r->other_err = c.err;
		if (c.err && c.err != ECONNREFUSED && c.err != EAGAIN)
			r->other++;
		atomic_fetch_add(&r->sent, 1);
	}
	return NULL;
}

/*
 * A sender keeps sending to both members while the receives are posted
 * and then the members and the context close, in the order a careless
 * process might: every send completes - delivered (a receive, or the
 * context's unexpected queue), refused once closed, or EAGAIN while that
 * queue is full - and nothing else happens (the kernel log is checked by
 * run.sh).
 */
TEST_F(srx, close_while_messages_arrive)
{
	struct race r = { .self = self };
	char dst[8][8];
	struct swnic_cqe c;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, race_sender, &r));
	for (int i = 0; i < 8; i++) {
		struct swnic_rqe q = t_recv(dst[i], 8, i);

		ASSERT_EQ(0, t_ring_push(&self->srx.rq, &q));
		ASSERT_EQ(0, t_doorbell(&self->srx, NULL));
		usleep(1000);
	}
	usleep(20000);
	t_ep_destroy(&self->m1);
	usleep(20000);
	t_ep_destroy(&self->srx);
	usleep(20000);
	t_ep_destroy(&self->m2);
	/* Some more sends to the closed ones, then stop (bounded). */
	{
		int base = atomic_load(&r.sent);

		for (int i = 0; i < 5000 && atomic_load(&r.sent) < base + 20;
		     i++)
			usleep(1000);
	}
	atomic_store(&r.stop, 1);
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, r.timeouts);
	EXPECT_EQ(0, r.other) TH_LOG("error %d", r.other_err);
	EXPECT_EQ(atomic_load(&r.sent), r.ok + r.refused + r.full);
	EXPECT_LT(0, r.refused);
	EXPECT_LT(0, r.ok);
	/* The receives posted took messages, each on one member's CQ. */
	while (t_cq_pop(&self->c1, &c) || t_cq_pop(&self->c2, &c))
		EXPECT_EQ(0, c.err);
}

TEST_HARNESS_MAIN
