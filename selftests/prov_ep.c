// SPDX-License-Identifier: GPL-2.0
/*
 * Provider data path through the public libfabric API: RDM endpoints over
 * the kernel's rings - sends, tagged sends, injects, remote CQ data,
 * readfrom, truncation, multi-receive, selective completion, counters, RMA
 * through registered memory, buffers across two mappings and RMA into an
 * on-demand MR a userfaultfd holds back (both also through the engine
 * doorbell, fixture ep_engine), and a peer in another process. The
 * receiving (target) side b, its MRs and counters are the peer's
 * (prov_open_peer()): another host's when SWNIC_PROV_PEER_NETNS names one,
 * so every transfer crosses the wire; the same domain in-host.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/wait.h>

#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "kselftest_harness.h"
#include "prov_util.h"
#include "gauge_util.h"
#include "cpu_util.h"
#include "uffd_util.h"

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
};

FIXTURE(ep)
{
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct prov_ctx peer;		/* b's (across: another host's) */
	struct side a, b;
};

static int side_open(struct __test_metadata *_metadata,
		     struct fid_domain *domain, struct fi_info *info,
		     struct side *s, uint64_t cq_flags)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED, .size = 64,
		.wait_obj = FI_WAIT_FD,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	ASSERT_EQ(0, fi_endpoint(domain, info, &s->ep, NULL));
	ASSERT_EQ(0, fi_cq_open(domain, &cq_attr, &s->cq, NULL));
	ASSERT_EQ(0, fi_av_open(domain, &av_attr, &s->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->cq->fid,
				FI_TRANSMIT | FI_RECV | cq_flags));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->av->fid, 0));
	ASSERT_EQ(0, fi_enable(s->ep));
	return 0;
}

static void side_close(struct side *s)
{
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->av)
		fi_close(&s->av->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
}

/* Insert @to's name into @from's AV. */
static void connect_to(struct __test_metadata *_metadata, struct side *from,
		       struct side *to)
{
	char name[64];
	size_t len = sizeof(name);

	ASSERT_EQ(0, fi_getname(&to->ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(from->av, name, 1, &from->peer, 0, NULL));
}

static void ep_open_sides(struct __test_metadata *_metadata,
			  FIXTURE_DATA(ep) *self)
{
	struct prov_ctx local;
	struct fi_info *hints;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_DIRECTED_RECV |
		      FI_SOURCE | FI_MULTI_RECV;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	ASSERT_EQ(0, fi_fabric(self->info->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &self->domain, NULL));
	local = (struct prov_ctx){ .info = self->info, .fabric = self->fabric,
				   .domain = self->domain };
	ASSERT_EQ(0, prov_open_peer(&self->peer, &local, hints));
	fi_freeinfo(hints);
	side_open(_metadata, self->domain, self->info, &self->a, 0);
	side_open(_metadata, self->peer.domain, self->peer.info, &self->b, 0);
	connect_to(_metadata, &self->a, &self->b);
	connect_to(_metadata, &self->b, &self->a);
}

static void ep_close_sides(FIXTURE_DATA(ep) *self)
{
	side_close(&self->a);
	side_close(&self->b);
	prov_close(&self->peer);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
}

FIXTURE_SETUP(ep)
{
	ep_open_sides(_metadata, self);
}

FIXTURE_TEARDOWN(ep)
{
	ep_close_sides(self);
}

/*
 * The same two sides, their endpoints progressed by the device's engine
 * thread (FI_SWNIC_DOORBELL_ENGINE), which never waits for a poster's
 * mmap lock or pager: the provider reads the mode once, and the harness
 * runs each test's setup in a process of its own.
 */
FIXTURE(ep_engine)
{
	FIXTURE_DATA(ep) d;
};

FIXTURE_SETUP(ep_engine)
{
	ASSERT_EQ(0, setenv("FI_SWNIC_DOORBELL_ENGINE", "1", 1));
	ep_open_sides(_metadata, &self->d);
}

FIXTURE_TEARDOWN(ep_engine)
{
	ep_close_sides(&self->d);
}

/* RMA address of @p in an MR starting at @base (fi_mr(3) FI_MR_VIRT_ADDR). */
static uint64_t rma_addr(const struct fi_info *info, const void *base,
			 const void *p)
{
	if (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)p;
	return (uintptr_t)p - (uintptr_t)base;
}

/* Read one completion (waiting up to 5 s); -FI_EAVAIL for an error. */
static ssize_t cq_get(struct fid_cq *cq, struct fi_cq_tagged_entry *e,
		      fi_addr_t *src)
{
	fi_addr_t dummy;

	for (int i = 0; i < 5000; i++) {
		ssize_t n = fi_cq_readfrom(cq, e, 1, src ? src : &dummy);

		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

TEST_F(ep, getname_is_sockaddr_in)
{
	struct sockaddr_in sin;
	size_t len = 0;

	ASSERT_EQ(-FI_ETOOSMALL, fi_getname(&self->a.ep->fid, &sin, &len));
	ASSERT_EQ(sizeof(sin), len);
	ASSERT_EQ(0, fi_getname(&self->a.ep->fid, &sin, &len));
	EXPECT_EQ(AF_INET, sin.sin_family);
	EXPECT_NE(0, sin.sin_port);
	if (!prov_across()) {
		/* A device bound to no netdev: this host only. */
		EXPECT_EQ(htonl(INADDR_LOOPBACK), sin.sin_addr.s_addr);
	} else {
		struct sockaddr_in peer;

		/* Its netdev's address; the peer's host has another. */
		EXPECT_NE(htonl(INADDR_LOOPBACK), sin.sin_addr.s_addr);
		EXPECT_NE(htonl(INADDR_ANY), sin.sin_addr.s_addr);
		len = sizeof(peer);
		ASSERT_EQ(0, fi_getname(&self->b.ep->fid, &peer, &len));
		EXPECT_NE(sin.sin_addr.s_addr, peer.sin_addr.s_addr);
	}
}

TEST_F(ep, send_recv_readfrom)
{
	char out[4096], in[4096] = "";
	struct fi_cq_tagged_entry e;
	fi_addr_t src = 0;
	int ctx_s, ctx_r;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i * 31);
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     &ctx_r));
	ASSERT_EQ(0, fi_send(self->a.ep, out, sizeof(out), NULL, self->a.peer,
			     &ctx_s));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(&ctx_s, e.op_context);
	EXPECT_EQ(FI_SEND | FI_MSG, e.flags);
	ASSERT_EQ(1, cq_get(self->b.cq, &e, &src));
	EXPECT_EQ(&ctx_r, e.op_context);
	EXPECT_EQ(FI_RECV | FI_MSG, e.flags);
	EXPECT_EQ(sizeof(out), e.len);
	EXPECT_EQ(0, memcmp(out, in, sizeof(out)));
	/* The sender, as B's AV knows it. */
	EXPECT_EQ(self->b.peer, src);
}

/*
 * fi_cq(3) completion semantics: FI_TRANSMIT_COMPLETE once the target has
 * the data (here: buffered as unexpected), FI_DELIVERY_COMPLETE only once a
 * receive took it. The doorbell is a syscall that does the transfer, so
 * "not complete yet" is exact, not a matter of waiting. Across, the
 * target holds a delivery-complete send it buffered until a receive takes
 * it (Documentation/wire.rst, delivery complete); it executes a peer's
 * messages in their order, so a transmit-complete send's completion says
 * that the delivery-complete one posted before it is held already.
 */
static void delivery_complete_across(struct __test_metadata *_metadata,
				     FIXTURE_DATA(ep) *self,
				     struct fi_msg *msg)
{
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;
	char in[64] = "";
	int ctx_d, ctx_t, ctx_r[3];

	/* b has one message buffered already (the transmit-complete one). */
	msg->context = &ctx_d;
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, msg, FI_DELIVERY_COMPLETE |
				FI_COMPLETION));
	msg->context = &ctx_t;
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, msg, FI_TRANSMIT_COMPLETE |
				FI_COMPLETION));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(&ctx_t, e.op_context);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	/* The first receive takes the first message: still not delivered. */
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     &ctx_r[0]));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(&ctx_r[0], e.op_context);
	usleep(200000);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	/* The second takes the delivery-complete one: now it completes. */
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     &ctx_r[1]));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(&ctx_r[1], e.op_context);
	EXPECT_STREQ("delivered", in);
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(&ctx_d, e.op_context);
	EXPECT_EQ(FI_SEND | FI_MSG, e.flags);
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     &ctx_r[2]));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(&ctx_r[2], e.op_context);

	/* The target goes away before receiving a held send: it fails. */
	msg->context = &ctx_d;
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, msg, FI_DELIVERY_COMPLETE |
				FI_COMPLETION));
	msg->context = &ctx_t;
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, msg, FI_TRANSMIT_COMPLETE |
				FI_COMPLETION));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(&ctx_t, e.op_context);
	fi_close(&self->b.ep->fid);
	self->b.ep = NULL;
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->a.cq, &err, 0));
	EXPECT_EQ(&ctx_d, err.op_context);
	EXPECT_EQ(FI_ECONNABORTED, err.err);

	/* And one sent to an endpoint that is gone is refused. */
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, msg, FI_DELIVERY_COMPLETE |
				FI_COMPLETION));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->a.cq, &err, 0));
	EXPECT_EQ(&ctx_t, err.op_context);
	EXPECT_EQ(FI_ECONNREFUSED, err.err);
}

TEST_F(ep, transmit_and_delivery_complete)
{
	char out[64] = "delivered", in[64] = "";
	struct iovec iov = { .iov_base = out, .iov_len = sizeof(out) };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = self->a.peer,
	};
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;
	int ctx_t, ctx_d, ctx_r[2];

	msg.context = &ctx_t;
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, &msg, FI_TRANSMIT_COMPLETE |
				FI_COMPLETION));
	if (prov_across()) {
		/* Complete once the target acknowledged it. */
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
		EXPECT_EQ(&ctx_t, e.op_context);
		delivery_complete_across(_metadata, self, &msg);
		return;
	}
	ASSERT_EQ(1, fi_cq_read(self->a.cq, &e, 1));
	EXPECT_EQ(&ctx_t, e.op_context);

	msg.context = &ctx_d;
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, &msg, FI_DELIVERY_COMPLETE |
				FI_COMPLETION));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	/* The first receive takes the first message: still not delivered. */
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     &ctx_r[0]));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(&ctx_r[0], e.op_context);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     &ctx_r[1]));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(&ctx_r[1], e.op_context);
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(&ctx_d, e.op_context);
	EXPECT_EQ(FI_SEND | FI_MSG, e.flags);
	EXPECT_STREQ("delivered", in);

	/* The target goes away before receiving: the send fails. */
	msg.context = &ctx_d;
	ASSERT_EQ(0, fi_sendmsg(self->a.ep, &msg, FI_DELIVERY_COMPLETE |
				FI_COMPLETION));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	fi_close(&self->b.ep->fid);
	self->b.ep = NULL;
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->a.cq, &err, 0));
	EXPECT_EQ(&ctx_d, err.op_context);
	EXPECT_EQ(FI_ECONNABORTED, err.err);
}

TEST_F(ep, tagged_inject_and_data)
{
	uint64_t v = 42, got = 0;
	struct fi_cq_tagged_entry e;

	ASSERT_EQ(0, fi_trecv(self->b.ep, &got, sizeof(got), NULL,
			      FI_ADDR_UNSPEC, 0x1200, 0xff, NULL));
	ASSERT_EQ(0, fi_tinjectdata(self->a.ep, &v, sizeof(v), 7,
				    self->a.peer, 0x1234));
	v = 0;		/* inject: the buffer is free at once */
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, e.flags);
	EXPECT_EQ(0x1234, e.tag);
	EXPECT_EQ(7, e.data);
	EXPECT_EQ(42, got);
	/* An inject reports no completion to the sender. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
}

/*
 * fi_inject(3) reports no completion, so an application may never read its
 * transmit CQ: injects must not stall once tx_attr->size of them are done.
 */
TEST_F(ep, injects_need_no_cq_read)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_tagged_entry e;
	struct fi_info *info = fi_dupinfo(self->info);
	struct fi_cq_err_entry err = { 0 };
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	char name[64];
	size_t len = sizeof(name);
	fi_addr_t peer;
	uint32_t v, got;

	ASSERT_NE(NULL, info);
	info->tx_attr->size = 8;
	ASSERT_EQ(0, fi_endpoint(self->domain, info, &ep, NULL));
	ASSERT_EQ(0, fi_cq_open(self->domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &peer, 0, NULL));
	/* Ten times the transmit size, the CQ never read. */
	for (v = 0; v < 80; v++)
		ASSERT_EQ(0, fi_inject(ep, &v, sizeof(v), peer));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(cq, &e, 1));
	/* All arrived, in order. */
	for (v = 0; v < 80; v++) {
		ASSERT_EQ(0, fi_recv(self->b.ep, &got, sizeof(got), NULL,
				     FI_ADDR_UNSPEC, NULL));
		ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
		EXPECT_EQ(v, got);
	}
	/* A failed inject still says so: an error with no context. */
	fi_close(&self->b.ep->fid);
	self->b.ep = NULL;
	ASSERT_EQ(0, fi_inject(ep, &v, sizeof(v), peer));
	ASSERT_EQ(-FI_EAVAIL, cq_get(cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(cq, &err, 0));
	EXPECT_EQ(NULL, err.op_context);
	EXPECT_EQ(FI_ECONNREFUSED, err.err);
	EXPECT_EQ(FI_SEND | FI_MSG, err.flags);
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_freeinfo(info);
}

/*
 * Receive completions suppressed (FI_SELECTIVE_COMPLETION, a receive
 * without FI_COMPLETION): a multi-receive buffer's release is still
 * reported (fi_msg(3)), once, and nothing else is. Before, nothing was.
 */
TEST_F(ep, multi_recv_release_is_reported_with_selective_completion)
{
	char buf[256], m[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = FI_ADDR_UNSPEC };
	struct fi_cq_tagged_entry e;
	size_t min = 100;

	side_close(&self->b);
	memset(&self->b, 0, sizeof(self->b));
	side_open(_metadata, self->peer.domain, self->peer.info, &self->b,
		  FI_SELECTIVE_COMPLETION);
	connect_to(_metadata, &self->a, &self->b);
	ASSERT_EQ(0, fi_setopt(&self->b.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)));
	ASSERT_EQ(0, fi_recvmsg(self->b.ep, &msg, FI_MULTI_RECV));
	for (int i = 0; i < 3; i++) {
		memset(m, '0' + i, sizeof(m));
		ASSERT_EQ(0, fi_send(self->a.ep, m, sizeof(m), NULL,
				     self->a.peer, NULL));
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	}
	/* 256 - 3 * 64 = 64 < 100: released with the third message. */
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_TRUE(e.flags & FI_MULTI_RECV);
	EXPECT_EQ(buf + 128, (char *)e.buf);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
	EXPECT_EQ('2', buf[191]);
}

/*
 * Bad iovs get an error and send nothing: lengths that add up past
 * SIZE_MAX (before, they wrapped to a small one, and the gather ran over
 * the stack), or none given for a count.
 */
TEST_F(ep, iovs_that_overflow_or_are_missing_are_refused)
{
	static char a[16];
	struct iovec bad[2] = { { a, sizeof(a) }, { a, SIZE_MAX - 7 } };
	struct fi_cq_tagged_entry e;

	EXPECT_EQ(-FI_EMSGSIZE, fi_sendv(self->a.ep, bad, NULL, 2,
					 self->a.peer, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_sendv(self->a.ep, NULL, NULL, 2,
				       self->a.peer, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_recvv(self->b.ep, bad, NULL, 2,
				       FI_ADDR_UNSPEC, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_recvv(self->b.ep, NULL, NULL, 2,
				       FI_ADDR_UNSPEC, NULL));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
}

/*
 * FI_INJECT in an endpoint's transmit op_flags is for its sends and
 * writes (fi_rma(3)): its reads still work. Before, every fi_read failed
 * with -FI_EINVAL.
 */
TEST_F(ep, inject_in_op_flags_leaves_reads_alone)
{
	static char target[4096], local[4096];
	uint64_t flags = FI_TRANSMIT | FI_INJECT;
	struct fi_cq_tagged_entry e;
	struct fid_mr *mr;

	/*
	 * Written before it is registered for reading only: its pages are
	 * the ones pinned then (a later write would copy them).
	 */
	target[100] = 'R';
	ASSERT_EQ(0, fi_mr_reg(self->peer.domain, target, sizeof(target),
			       FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(0, fi_control(&self->a.ep->fid, FI_SETOPSFLAG, &flags));
	ASSERT_EQ(0, fi_read(self->a.ep, local, 200, NULL, self->a.peer,
			     rma_addr(self->info, target, target),
			     fi_mr_key(mr), NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ('R', local[100]);
	fi_close(&mr->fid);
}

TEST_F(ep, sendv_recvv_gather_scatter)
{
	char a1[3] = "ab", a2[5000], b1[100], b2[6000];
	struct iovec out[2] = { { a1, 2 }, { a2, sizeof(a2) } };
	struct iovec in[2] = { { b1, sizeof(b1) }, { b2, sizeof(b2) } };
	struct fi_cq_tagged_entry e;

	memset(a2, 'z', sizeof(a2));
	ASSERT_EQ(0, fi_recvv(self->b.ep, in, NULL, 2, FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_sendv(self->a.ep, out, NULL, 2, self->a.peer, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(5002, e.len);
	EXPECT_EQ('a', b1[0]);
	EXPECT_EQ('b', b1[1]);
	EXPECT_EQ('z', b1[2]);
	EXPECT_EQ('z', b2[5002 - 100 - 1]);
}

/* b's registration cache counters. */
static void b_stats(struct __test_metadata *_metadata, FIXTURE_DATA(ep) *self,
		    struct fi_swnic_stats *st)
{
	struct fi_swnic_ops_domain *ops = prov_ext(self->peer.domain);

	ASSERT_NE(NULL, ops);
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	ASSERT_EQ(0, ops->query_stats(self->peer.domain, st));
}

/* Deliveries into receives' MRs in b's domain (in-host only: 0 across). */
static uint64_t b_counter(struct __test_metadata *_metadata,
			  FIXTURE_DATA(ep) *self, const char *name)
{
	struct fi_swnic_ops_domain *ops = prov_ext(self->peer.domain);
	struct swnic_query_device q = { .size = sizeof(q) };
	uint64_t v = 0;

	if (prov_across())
		return 0;
	EXPECT_EQ(0, ops->query_device(self->peer.domain, &q));
	EXPECT_EQ(0, stat_read_domain(q.domain_id, name, &v));
	return v;
}

static uint64_t b_recv_mr(struct __test_metadata *_metadata,
			  FIXTURE_DATA(ep) *self)
{
	return b_counter(_metadata, self, "recv_mr_copies");
}

/* One message of @len from a into @in (posted with @desc), checked. */
static void recv_one(struct __test_metadata *_metadata, FIXTURE_DATA(ep) *self,
		     unsigned char *in, void *desc, size_t len, int seed)
{
	unsigned char *out = malloc(len);
	struct fi_cq_tagged_entry e;

	ASSERT_NE(NULL, out);
	for (size_t i = 0; i < len; i++)
		out[i] = (unsigned char)(i * 17 + seed + (i >> 12));
	memset(in, 0, len);
	ASSERT_EQ(0, fi_recv(self->b.ep, in, len, desc, FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(self->a.ep, out, len, NULL, self->a.peer, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(len, e.len);
	EXPECT_EQ(0, memcmp(out, in, len));
	free(out);
}

/*
 * Receives into registered memory (SWNIC_RQE_MR): a large buffer posted a
 * second time is registered through the cache (FI_SWNIC_RECV_REG_MIN),
 * not the first time; a receive whose descriptor names an MR over its
 * buffer uses that one at any size. In-host the kernel's recv_mr_copies
 * shows the messages went into the MR's pages. A buffer whose pages
 * changed is written in its new pages.
 */
TEST_F(ep, receives_into_registered_buffers)
{
	size_t len = 256 * 1024, small = 8192;
	unsigned char *in = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fi_swnic_stats st0, st;
	struct fid_mr *mr;
	uint64_t c0;

	ASSERT_NE(MAP_FAILED, in);
	if (!prov_feature(self->peer.domain, SWNIC_FEAT_RECV_MR))
		SKIP(goto out, "the kernel has no SWNIC_FEAT_RECV_MR");
	b_stats(_metadata, self, &st0);
	c0 = b_recv_mr(_metadata, self);

	/* First post: remembered, not registered. */
	recv_one(_metadata, self, in, NULL, len, 1);
	b_stats(_metadata, self, &st);
	EXPECT_EQ(st0.cache_misses, st.cache_misses);
	EXPECT_EQ(st0.domain.mrs, st.domain.mrs);
	EXPECT_EQ(c0, b_recv_mr(_metadata, self));

	/* Second: registered (one more kernel MR, cached), used. */
	recv_one(_metadata, self, in, NULL, len, 2);
	b_stats(_metadata, self, &st);
	EXPECT_EQ(st0.cache_misses + 1, st.cache_misses);
	EXPECT_EQ(st0.cache_entries + 1, st.cache_entries);
	EXPECT_EQ(st0.domain.mrs + 1, st.domain.mrs);
	if (!prov_across())
		EXPECT_EQ(c0 + 1, b_recv_mr(_metadata, self));

	/* Third: the cached registration again, nothing new. */
	recv_one(_metadata, self, in, NULL, len, 3);
	b_stats(_metadata, self, &st);
	EXPECT_EQ(st0.cache_misses + 1, st.cache_misses);
	EXPECT_EQ(st0.domain.mrs + 1, st.domain.mrs);
	if (!prov_across())
		EXPECT_EQ(c0 + 2, b_recv_mr(_metadata, self));

	/* New pages at the buffer's address: the entry goes, bytes land. */
	ASSERT_EQ(in, mmap(in, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	recv_one(_metadata, self, in, NULL, len, 4);
	b_stats(_metadata, self, &st);
	EXPECT_EQ(st0.cache_invalidations + 1, st.cache_invalidations);
	EXPECT_EQ(st0.domain.mrs, st.domain.mrs);
	if (!prov_across())
		EXPECT_EQ(c0 + 2, b_recv_mr(_metadata, self));

	/* A small receive whose descriptor names an MR over its buffer. */
	ASSERT_EQ(0, fi_mr_reg(self->peer.domain, in, len, FI_RECV, 0, 0, 0,
			       &mr, NULL));
	recv_one(_metadata, self, in + 100, fi_mr_desc(mr), small, 5);
	if (!prov_across())
		EXPECT_EQ(c0 + 3, b_recv_mr(_metadata, self));
	EXPECT_EQ(0, fi_close(&mr->fid));
out:
	munmap(in, len);
}

/*
 * A span: @pages pages at one address, two mappings - a memfd's pages (the
 * first half, rounded up) then anonymous memory. Neither is touched: the
 * kernel's first access faults each in.
 */
struct span {
	unsigned char *p;
	size_t pages, file_len;
	int fd;
};

static int span_open(struct span *sp, size_t pages)
{
	size_t psz = getpagesize();

	*sp = (struct span){ .pages = pages, .fd = -1, .p = MAP_FAILED,
			     .file_len = (pages + 1) / 2 * psz };
	sp->fd = memfd_create("swnic-span", MFD_CLOEXEC);
	if (sp->fd < 0 || ftruncate(sp->fd, sp->file_len))
		return -1;
	sp->p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sp->p == MAP_FAILED)
		return -1;
	if (mmap(sp->p, sp->file_len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, sp->fd, 0) != sp->p)
		return -1;
	return 0;
}

static void span_close(struct span *sp)
{
	if (sp->p != MAP_FAILED)
		munmap(sp->p, sp->pages * getpagesize());
	if (sp->fd >= 0)
		close(sp->fd);
}

/*
 * Fill @len bytes at @off of a span: its file part with pwrite() (page
 * cache only, still unmapped here), the rest in place.
 */
static void span_fill(struct span *sp, size_t off, const unsigned char *src,
		      size_t len)
{
	size_t in_file = off < sp->file_len ? sp->file_len - off : 0;

	if (in_file > len)
		in_file = len;
	if (in_file && pwrite(sp->fd, src, in_file, off) != (ssize_t)in_file)
		memset(sp->p + off, 0, len);	/* the memcmp() will say */
	memcpy(sp->p + off + in_file, src + in_file, len - in_file);
}

/*
 * A buffer that spans two mappings - a memfd's page-cache pages, then
 * anonymous pages, none of them mapped yet - as every transfer's source
 * and destination: send and receive (posted three times, so that the
 * receive is registered through the cache from its second post), and an
 * RMA write from it into, and a read into it from, a target MR that spans
 * two such mappings too. The kernel reaches each mapping's pages on its
 * own (in-host in the poster's and the receiver's mm; across the wire the
 * sender's pages are pinned per mapping). Every byte is checked.
 */
static void across_two_mappings(struct __test_metadata *_metadata,
				FIXTURE_DATA(ep) *self)
{
	static const size_t sizes[] = { 3, 40 };	/* pages */
	size_t psz = getpagesize();

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t pages = sizes[k], len = pages * psz - 200;
		/* source, destination, read destination, RMA target */
		struct span sp[4];
		unsigned char *s, *d, *r, *t, *want = malloc(len);
		struct fi_cq_tagged_entry e;
		struct fid_mr *mr;
		uint64_t key;

		ASSERT_NE(NULL, want);
		for (int i = 0; i < 4; i++) {
			ASSERT_EQ(0, span_open(&sp[i], pages))
				TH_LOG("span %d: %s", i, strerror(errno));
		}
		s = sp[0].p;
		d = sp[1].p;
		r = sp[2].p;
		t = sp[3].p;

		for (int round = 0; round < 3; round++) {
			for (size_t i = 0; i < len; i++)
				want[i] = (unsigned char)(i * 13 + round +
							  (i >> 12));
			span_fill(&sp[0], 100, want, len);
			ASSERT_EQ(0, fi_recv(self->b.ep, d + 100, len, NULL,
					     FI_ADDR_UNSPEC, NULL));
			ASSERT_EQ(0, fi_send(self->a.ep, s + 100, len, NULL,
					     self->a.peer, NULL));
			ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
			ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
			EXPECT_EQ(len, e.len);
			EXPECT_EQ(0, memcmp(want, d + 100, len))
				TH_LOG("%zu pages, round %d: received", pages,
				       round);
			EXPECT_EQ(0, d[99]);
			EXPECT_EQ(0, d[100 + len]);
		}

		ASSERT_EQ(0, fi_mr_reg(self->peer.domain, t, pages * psz,
				       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0,
				       0, &mr, NULL));
		key = fi_mr_key(mr);
		ASSERT_EQ(0, fi_write(self->a.ep, s + 100, len, NULL,
				      self->a.peer, rma_addr(self->info, t,
							     t + 100),
				      key, NULL));
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
		EXPECT_EQ(FI_RMA | FI_WRITE, e.flags);
		EXPECT_EQ(0, memcmp(want, t + 100, len))
			TH_LOG("%zu pages: RMA write", pages);

		for (size_t i = 0; i < len; i++)
			want[i] = (unsigned char)(i * 7 + 5 + (i >> 12));
		span_fill(&sp[3], 100, want, len);
		ASSERT_EQ(0, fi_read(self->a.ep, r + 100, len, NULL,
				     self->a.peer, rma_addr(self->info, t,
							    t + 100),
				     key, NULL));
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
		EXPECT_EQ(FI_RMA | FI_READ, e.flags);
		EXPECT_EQ(0, memcmp(want, r + 100, len))
			TH_LOG("%zu pages: RMA read", pages);
		EXPECT_EQ(0, r[99]);
		EXPECT_EQ(0, r[100 + len]);
		EXPECT_EQ(0, fi_close(&mr->fid));

		free(want);
		for (int i = 0; i < 4; i++)
			span_close(&sp[i]);
	}
}

TEST_F(ep, buffers_across_two_mappings)
{
	across_two_mappings(_metadata, self);
}

/* The engine pins a wire send's pages one mapping at a time. */
TEST_F(ep_engine, buffers_across_two_mappings)
{
	across_two_mappings(_metadata, &self->d);
}

/* A receiver spinning on its CQ, as applications that wait do. */
struct spinner {
	struct fid_cq *cq;
	struct fi_cq_tagged_entry e;
	ssize_t ret;
	_Atomic int spinning;	/* its first read is done */
	int cpu;		/* spin_cq_on(): the CPU it runs on */
};

static void *spin_cq(void *arg)
{
	struct spinner *sp = arg;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sp->ret = fi_cq_read(sp->cq, &sp->e, 1);
		atomic_store(&sp->spinning, 1);
		if (sp->ret != -FI_EAGAIN)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 60);
	return NULL;
}

static void *spin_cq_on(void *arg)
{
	struct spinner *sp = arg;

	if (cpu_pin(sp->cpu)) {
		sp->ret = -FI_EOTHER;
		atomic_store(&sp->spinning, 1);
		return NULL;
	}
	return spin_cq(arg);
}

/*
 * A large message from this host into a registered receive buffer: the
 * receiver's CQ read, spinning meanwhile, takes part in the copy
 * (SWNIC_IOCTL_CQ_HELP; FI_SWNIC_COPY_HELP), and every byte lands right.
 * The buffer is registered from its second post (recv_reg_min).
 *
 * The sender (this thread) and the spinner run on CPUs of their own, and
 * the sender is held back during its sends (cpu_slow: a millisecond of
 * CPU time per 20 ms, enforced at the next tick, 4 ms at most later): a
 * 32 MiB copy (8 jobs, some 10 ms of the sender's time) is stopped midway
 * for most of a period - so the spinner surely runs while a job is
 * published, however the host runs the guest's vCPUs. Three rounds, data
 * checked in each; a round nobody helped (that makes the kernel skip the
 * next 8 large copies) only adds rounds, at most 20.
 */
TEST_F_TIMEOUT(ep, receiver_poll_helps_large_copies, 300)
{
	size_t len = 32 << 20;
	unsigned char *in = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *out = malloc(len);
	struct fi_cq_tagged_entry e;
	struct cpu_slow cs = {};
	const char *what;
	int cpu[2], ret;
	uint64_t h0, h1;

	ASSERT_NE(MAP_FAILED, in);
	ASSERT_NE(NULL, out);
	if (prov_across())
		SKIP(goto out, "one host only: the wire copies from its own buffer");
	if (!prov_feature(self->peer.domain, SWNIC_FEAT_COPY_HELP))
		SKIP(goto out, "the kernel has no SWNIC_FEAT_COPY_HELP");
	if (cpu_pick2(cpu) < 2)
		SKIP(goto out, "one CPU: nobody to share a copy with");
	ret = cpu_slow_init(&cs, &what);
	if (ret)
		SKIP(goto out, "no cgroup to hold the sender back: %s: %s",
		     what, strerror(-ret));
	ASSERT_EQ(0, cpu_pin(cpu[0]));
	h0 = b_counter(_metadata, self, "copy_help_bytes");
	for (int round = 0; round < 20; round++) {
		if (round >= 3 &&
		    b_counter(_metadata, self, "copy_help_bytes") > h0)
			break;
		struct spinner sp = { .cq = self->b.cq, .cpu = cpu[1] };
		pthread_t t;

		for (size_t i = 0; i < len; i++)
			out[i] = (unsigned char)(i * 29 + round + (i >> 12));
		memset(in, 0, len);
		ASSERT_EQ(0, fi_recv(self->b.ep, in, len, NULL, FI_ADDR_UNSPEC,
				     NULL));
		ASSERT_EQ(0, pthread_create(&t, NULL, spin_cq_on, &sp));
		/* It spins before the send comes. */
		for (int i = 0; i < 5000 && !atomic_load(&sp.spinning); i++)
			usleep(1000);
		usleep(1000);
		/* The first post is not registered: nothing to share. */
		if (round)
			ASSERT_EQ(0, cpu_slow_enter(&cs));
		ret = fi_send(self->a.ep, out, len, NULL, self->a.peer, NULL);
		if (round)
			ASSERT_EQ(0, cpu_slow_leave(&cs));
		ASSERT_EQ(0, ret);
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
		ASSERT_EQ(0, pthread_join(t, NULL));
		ASSERT_EQ(1, sp.ret);
		EXPECT_EQ(len, sp.e.len);
		EXPECT_EQ(0, memcmp(out, in, len));
	}
	/* Registered from the second post on, its copies were shared. */
	h1 = b_counter(_metadata, self, "copy_help_bytes");
	EXPECT_LT(h0, h1);
	TH_LOG("the receiver's polls copied %llu bytes; the sender was held "
	       "back %ld times", (unsigned long long)(h1 - h0),
	       cpu_slow_throttled(&cs));
out:
	cpu_slow_fini(&cs);
	free(out);
	munmap(in, len);
}

TEST_F(ep, truncation_is_an_error_completion)
{
	char out[100], in[10];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = {};

	memset(out, 'x', sizeof(out));
	ASSERT_EQ(0, fi_recv(self->b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     NULL));
	ASSERT_EQ(0, fi_send(self->a.ep, out, sizeof(out), NULL, self->a.peer,
			     NULL));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->b.cq, &err, 0));
	EXPECT_EQ(FI_ETRUNC, err.err);
	EXPECT_EQ(sizeof(in), err.len);
	EXPECT_EQ(sizeof(out) - sizeof(in), err.olen);
}

TEST_F(ep, rma_write_read_with_keys)
{
	static char target[8192], local[8192];
	struct fid_mr *mr;
	struct fi_cq_tagged_entry e;
	uint64_t key;

	ASSERT_EQ(0, fi_mr_reg(self->peer.domain, target, sizeof(target),
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			       NULL));
	key = fi_mr_key(mr);
	memset(local, 'w', sizeof(local));
	ASSERT_EQ(0, fi_write(self->a.ep, local, sizeof(local), NULL,
			      self->a.peer, rma_addr(self->info, target, target),
			      key, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(FI_RMA | FI_WRITE, e.flags);
	EXPECT_EQ('w', target[0]);
	EXPECT_EQ('w', target[sizeof(target) - 1]);

	target[100] = 'R';
	ASSERT_EQ(0, fi_read(self->a.ep, local, 200, NULL, self->a.peer,
			     rma_addr(self->info, target, target), key, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(FI_RMA | FI_READ, e.flags);
	EXPECT_EQ('R', local[100]);

	/* A wrong key fails with an error completion, nothing written. */
	ASSERT_EQ(0, fi_write(self->a.ep, "x", 1, NULL, self->a.peer,
			      rma_addr(self->info, target, target), key + 1,
			      NULL));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e, NULL));
	fi_close(&mr->fid);
}

/* The error completion of the next operation of @cq: its err. */
static int cq_err(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = { 0 };

	if (cq_get(cq, &e, NULL) != -FI_EAVAIL)
		return -1;
	if (fi_cq_readerr(cq, &err, 0) != 1)
		return -2;
	return err.err;
}

/*
 * An on-demand (ODP) target MR whose second page a userfaultfd nobody
 * serves holds back. The kernel faults a target's pages in as an RMA
 * reaches them (in-host in the initiator's call or its domain's engine,
 * across the wire in a round that holds its namespace's wire) and never
 * waits for a userfaultfd: an RMA that reaches the held page is a fault
 * at once (FI_EFAULT), one that stays on the page that is there goes
 * through, and so does a send after them. Once the page is served, the
 * write that failed goes through.
 */
static void odp_page_held(struct __test_metadata *_metadata,
			  FIXTURE_DATA(ep) *self)
{
	struct fi_swnic_ops_domain *ops = prov_ext(self->peer.domain);
	size_t psz = getpagesize();
	struct fi_cq_tagged_entry e;
	struct fi_mr_attr attr;
	struct iovec iov;
	struct fid_mr *mr;
	char *t, *local, c = 0;
	uint64_t key;
	int uffd;

	if (!prov_feature(self->peer.domain, SWNIC_FEAT_MR_ODP))
		SKIP(return, "the kernel has no on-demand registration");
	uffd = uffd_half_held(&t);
	if (uffd < 0 && !t)
		SKIP(return, "no userfaultfd: %s", strerror(-uffd));
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(-uffd));
	local = malloc(2 * psz);
	ASSERT_NE(NULL, local);
	memset(local, 'w', 2 * psz);
	iov = (struct iovec){ .iov_base = t, .iov_len = 2 * psz };
	attr = (struct fi_mr_attr){ .mr_iov = &iov, .iov_count = 1,
				    .access = FI_REMOTE_READ |
					      FI_REMOTE_WRITE };
	ASSERT_EQ(0, ops->mr_regattr(self->peer.domain, &attr, 0,
				     FI_SWNIC_MR_ODP, &mr));
	key = fi_mr_key(mr);

	/* Across both pages, and on the held one only: faults. */
	ASSERT_EQ(0, fi_write(self->a.ep, local, 2 * psz, NULL, self->a.peer,
			      rma_addr(self->info, t, t), key, NULL));
	EXPECT_EQ(FI_EFAULT, cq_err(self->a.cq)) TH_LOG("write");
	ASSERT_EQ(0, fi_read(self->a.ep, local, 8, NULL, self->a.peer,
			     rma_addr(self->info, t, t + psz), key, NULL));
	EXPECT_EQ(FI_EFAULT, cq_err(self->a.cq)) TH_LOG("read");
	EXPECT_EQ('w', local[0]);

	/* The page that is there. */
	memset(local, 'x', psz);
	ASSERT_EQ(0, fi_write(self->a.ep, local, psz, NULL, self->a.peer,
			      rma_addr(self->info, t, t), key, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ('x', t[0]);
	EXPECT_EQ('x', t[psz - 1]);
	t[10] = 'R';
	ASSERT_EQ(0, fi_read(self->a.ep, local + psz, 16, NULL, self->a.peer,
			     rma_addr(self->info, t, t), key, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ('R', local[psz + 10]);

	/* A send between the two goes on. */
	ASSERT_EQ(0, fi_recv(self->b.ep, &c, 1, NULL, FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(self->a.ep, "s", 1, NULL, self->a.peer, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ('s', c);

	/* Served: the write that failed goes through. */
	ASSERT_EQ(0, uffd_serve(uffd, t));
	memset(local, 'y', 2 * psz);
	ASSERT_EQ(0, fi_write(self->a.ep, local, 2 * psz, NULL, self->a.peer,
			      rma_addr(self->info, t, t), key, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(0, memcmp(local, t, 2 * psz));

	EXPECT_EQ(0, fi_close(&mr->fid));
	close(uffd);
	munmap(t, 2 * psz);
	free(local);
}

TEST_F(ep, rma_into_odp_page_held_by_userfaultfd)
{
	odp_page_held(_metadata, self);
}

/* In-host, the engine, a kernel worker, reaches the target's pages. */
TEST_F(ep_engine, rma_into_odp_page_held_by_userfaultfd)
{
	odp_page_held(_metadata, &self->d);
}

/*
 * FI_RMA_EVENT: counters bound with FI_REMOTE_WRITE / FI_REMOTE_READ count
 * peers' RMA into the target's memory. The kernel counts them: the target
 * process runs nothing and reads no CQ.
 */
TEST_F(ep, remote_rma_counted_at_target)
{
	static char target[4096], local[4096];
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_cntr *rw, *rr, *mine;
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;
	struct fid_ep *t, *plain;
	struct fid_cq *tcq;
	struct fid_av *tav;
	struct fi_info *info;
	struct fid_mr *mr;
	char name[64];
	size_t len = sizeof(name);
	fi_addr_t to;
	uint64_t key, base;

	/* The target t, its counters and MR: the peer's. */
	info = fi_dupinfo(self->peer.info);
	ASSERT_NE(NULL, info);
	info->caps |= FI_RMA_EVENT;
	ASSERT_EQ(0, fi_cntr_open(self->peer.domain, &cattr, &rw, NULL));
	ASSERT_EQ(0, fi_cntr_open(self->peer.domain, &cattr, &rr, NULL));
	ASSERT_EQ(0, fi_cntr_open(self->peer.domain, &cattr, &mine, NULL));
	/* Without FI_RMA_EVENT an endpoint cannot count them. */
	ASSERT_EQ(0, fi_endpoint(self->peer.domain, self->peer.info, &plain,
				 NULL));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(plain, &rw->fid, FI_REMOTE_WRITE));
	EXPECT_EQ(0, fi_close(&plain->fid));

	ASSERT_EQ(0, fi_endpoint(self->peer.domain, info, &t, NULL));
	ASSERT_EQ(0, fi_cq_open(self->peer.domain, &cq_attr, &tcq, NULL));
	ASSERT_EQ(0, fi_av_open(self->peer.domain, &av_attr, &tav, NULL));
	ASSERT_EQ(0, fi_ep_bind(t, &tcq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(t, &tav->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(t, &rw->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(0, fi_ep_bind(t, &rr->fid, FI_REMOTE_READ));
	ASSERT_EQ(0, fi_ep_bind(t, &mine->fid, FI_WRITE | FI_READ));
	ASSERT_EQ(0, fi_enable(t));
	ASSERT_EQ(0, fi_getname(&t->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(self->a.av, name, 1, &to, 0, NULL));

	ASSERT_EQ(0, fi_mr_reg(self->peer.domain, target, sizeof(target),
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			       NULL));
	key = fi_mr_key(mr);
	base = rma_addr(self->info, target, target);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, fi_write(self->a.ep, local, 100, NULL, to,
				      base + 100 * i, key, NULL));
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	}
	ASSERT_EQ(0, fi_read(self->a.ep, local, 100, NULL, to, base, key,
			     NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	/* A refused write reaches nothing: not counted at the target. */
	ASSERT_EQ(0, fi_write(self->a.ep, local, 1, NULL, to, base, key + 1,
			      NULL));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->a.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->a.cq, &err, 0));
	EXPECT_EQ(FI_ENOKEY, err.err);

	EXPECT_EQ(3, fi_cntr_read(rw));
	EXPECT_EQ(0, fi_cntr_readerr(rw));
	EXPECT_EQ(1, fi_cntr_read(rr));
	/* The target's own RMA counter saw none of it. */
	EXPECT_EQ(0, fi_cntr_read(mine));
	/* fi_cntr_set/add work on top of the kernel's count. */
	EXPECT_EQ(0, fi_cntr_set(rw, 10));
	EXPECT_EQ(10, fi_cntr_read(rw));
	ASSERT_EQ(0, fi_write(self->a.ep, local, 1, NULL, to, base, key, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(11, fi_cntr_read(rw));
	EXPECT_EQ(0, fi_cntr_wait(rw, 11, 1000));

	fi_close(&mr->fid);
	EXPECT_EQ(0, fi_close(&t->fid));
	fi_close(&tcq->fid);
	fi_close(&tav->fid);
	fi_close(&rw->fid);
	fi_close(&rr->fid);
	fi_close(&mine->fid);
	fi_freeinfo(info);
}

TEST_F(ep, writedata_completes_at_target)
{
	static uint64_t target;
	struct fid_mr *mr;
	struct fi_cq_tagged_entry e;
	uint64_t v = 99;

	ASSERT_EQ(0, fi_mr_reg(self->peer.domain, &target, sizeof(target),
			       FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	ASSERT_EQ(0, fi_writedata(self->a.ep, &v, sizeof(v), NULL, 0xdada,
				  self->a.peer,
				  rma_addr(self->info, &target, &target),
				  fi_mr_key(mr), NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, e.flags);
	EXPECT_EQ(0xdada, e.data);
	EXPECT_EQ(99, target);
	fi_close(&mr->fid);
}

TEST_F(ep, multi_recv_buffer)
{
	char buf[256], m[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = FI_ADDR_UNSPEC };
	struct fi_cq_tagged_entry e;
	size_t min = 100;
	int seen_release = 0;

	ASSERT_EQ(0, fi_setopt(&self->b.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)));
	ASSERT_EQ(0, fi_recvmsg(self->b.ep, &msg, FI_MULTI_RECV));
	for (int i = 0; i < 3; i++) {
		memset(m, '0' + i, sizeof(m));
		ASSERT_EQ(0, fi_send(self->a.ep, m, sizeof(m), NULL,
				     self->a.peer, NULL));
		ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
		EXPECT_EQ(buf + 64 * i, (char *)e.buf);
		seen_release += !!(e.flags & FI_MULTI_RECV);
	}
	/* 256 - 3 * 64 = 64 < 100: released with the third message. */
	EXPECT_EQ(1, seen_release);
	EXPECT_EQ('2', buf[191]);
}

TEST_F(ep, counters_count_completions)
{
	struct fid_cntr *tx, *rx;
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fid_ep *ep;
	struct fid_av *av;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	char name[64], buf[8] = "cnt";
	size_t len = sizeof(name);
	fi_addr_t peer;
	struct fi_cq_tagged_entry e;

	/* A third endpoint with counters and a selective-completion CQ. */
	ASSERT_EQ(0, fi_cntr_open(self->domain, &attr, &tx, NULL));
	ASSERT_EQ(0, fi_cntr_open(self->domain, &attr, &rx, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->a.cq->fid,
				FI_TRANSMIT | FI_SELECTIVE_COMPLETION));
	ASSERT_EQ(0, fi_ep_bind(ep, &tx->fid, FI_SEND));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	/* Counting at the RMA target needs FI_RMA_EVENT, not asked here. */
	ASSERT_EQ(-FI_EINVAL, fi_ep_bind(ep, &rx->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &peer, 0, NULL));

	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
				     FI_ADDR_UNSPEC, NULL));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, fi_send(ep, buf, sizeof(buf), NULL, peer, NULL));
	ASSERT_EQ(0, fi_cntr_wait(tx, 3, 5000));
	EXPECT_EQ(3, fi_cntr_read(tx));
	/* Selective completion: sends without FI_COMPLETION report nothing. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));

	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&tx->fid);
	fi_close(&rx->fid);
}

/* No transmit CQ: sends are counted, and reported nowhere. */
TEST_F(ep, sends_without_tx_cq_only_count)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_tagged_entry e;
	struct fid_cntr *tx;
	struct fid_ep *ep;
	struct fid_av *av;
	char name[64], buf[8] = "rxonly";
	size_t len = sizeof(name);
	fi_addr_t peer;

	ASSERT_EQ(0, fi_cntr_open(self->domain, &attr, &tx, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->a.cq->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &tx->fid, FI_SEND));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &peer, 0, NULL));

	ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(ep, buf, sizeof(buf), NULL, peer, NULL));
	ASSERT_EQ(0, fi_cntr_wait(tx, 1, 5000));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));

	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&tx->fid);
}

TEST_F(ep, poll_on_cq_fd)
{
	struct fi_cq_tagged_entry e;
	struct pollfd p = { .events = POLLIN };
	struct fid *fids[1] = { &self->b.cq->fid };
	char buf[16] = "wake";

	ASSERT_EQ(0, fi_control(&self->b.cq->fid, FI_GETWAIT, &p.fd));
	ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(FI_SUCCESS, fi_trywait(self->peer.fabric, fids, 1));
	ASSERT_EQ(0, fi_send(self->a.ep, buf, sizeof(buf), NULL, self->a.peer,
			     NULL));
	EXPECT_EQ(1, poll(&p, 1, 5000));
	EXPECT_EQ(1, fi_cq_read(self->b.cq, &e, 1));
}

/*
 * fi_endpoint(3): closing an endpoint discards its outstanding operations.
 * Completions of b's receives wait unread in the CQ's kernel ring when b
 * closes: they are never reported, nor mistaken for the operations of an
 * endpoint opened after it on the same CQ (which may take the memory b's
 * gave back), and their data is not written to the receive buffers, which
 * are the application's again once b closed.
 */
TEST_F(ep, close_discards_unread_completions)
{
	struct fid *fids[1] = { &self->b.cq->fid };
	struct pollfd p = { .events = POLLIN };
	char bufs[4][16], in[16] = "", out[16];
	struct fi_cq_tagged_entry e;
	struct fid_ep *b2;
	fi_addr_t to_b2;
	char name[64];
	size_t len = sizeof(name);
	int ctx[4], ctx2;

	ASSERT_EQ(0, fi_control(&self->b.cq->fid, FI_GETWAIT, &p.fd));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, fi_recv(self->b.ep, bufs[i], sizeof(bufs[i]), NULL,
				     FI_ADDR_UNSPEC, &ctx[i]));
	ASSERT_EQ(FI_SUCCESS, fi_trywait(self->peer.fabric, fids, 1));
	for (int i = 0; i < 4; i++) {
		snprintf(out, sizeof(out), "old %d", i);
		ASSERT_EQ(0, fi_send(self->a.ep, out, sizeof(out), NULL,
				     self->a.peer, NULL));
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	}
	/* b's completions are in the kernel's ring, not read. */
	ASSERT_EQ(1, poll(&p, 1, 5000));
	ASSERT_EQ(0, fi_close(&self->b.ep->fid));
	self->b.ep = NULL;
	memset(bufs, 0, sizeof(bufs));

	/* Another endpoint on the same CQ, with a receive posted. */
	ASSERT_EQ(0, fi_endpoint(self->peer.domain, self->peer.info, &b2,
				 NULL));
	self->b.ep = b2;
	ASSERT_EQ(0, fi_ep_bind(b2, &self->b.cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(b2, &self->b.av->fid, 0));
	ASSERT_EQ(0, fi_enable(b2));
	ASSERT_EQ(0, fi_recv(b2, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx2));
	usleep(100000);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
	for (int i = 0; i < 4; i++)
		for (size_t j = 0; j < sizeof(bufs[i]); j++)
			ASSERT_EQ(0, bufs[i][j]);

	/* b2 works: its receive completes with its own context. */
	ASSERT_EQ(0, fi_getname(&b2->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(self->a.av, name, 1, &to_b2, 0, NULL));
	snprintf(out, sizeof(out), "new");
	ASSERT_EQ(0, fi_send(self->a.ep, out, sizeof(out), NULL, to_b2, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(&ctx2, e.op_context);
	EXPECT_EQ(FI_RECV | FI_MSG, e.flags);
	EXPECT_STREQ("new", in);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
}

TEST_F(ep, cancel_posted_receive)
{
	char buf[16], out[16] = "after";
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = {};
	int ctx;

	ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, &ctx));
	ASSERT_EQ(0, fi_cancel(&self->b.ep->fid, &ctx));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->b.cq, &err, 0));
	EXPECT_EQ(FI_ECANCELED, err.err);
	EXPECT_EQ(&ctx, err.op_context);
	EXPECT_TRUE(err.flags & FI_RECV);
	/* Gone: a second cancel finds nothing, and a send is unexpected. */
	EXPECT_EQ(-FI_ENOENT, fi_cancel(&self->b.ep->fid, &ctx));
	EXPECT_EQ(-FI_ENOENT, fi_cancel(&self->b.ep->fid, &err));
	ASSERT_EQ(0, fi_send(self->a.ep, out, sizeof(out), NULL, self->a.peer,
			     NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
	/* The next receive takes the message waiting in the kernel. */
	ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, &ctx));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_STREQ("after", buf);
}

/* A send the kernel has not consumed (its CQ is full) can be cancelled. */
TEST_F(ep, cancel_waiting_send)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 4 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	char name[64], buf[8];
	size_t len = sizeof(name);
	fi_addr_t peer;
	int ctx[6], ok = 0, cancelled = 0;

	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_cq_open(self->domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &peer, 0, NULL));

	/* Six sends, nobody reading the 4-entry CQ: two wait in the SQ. */
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(0, fi_send(ep, "abc", 4, NULL, peer, &ctx[i]));
	EXPECT_EQ(-FI_ENOENT, fi_cancel(&ep->fid, &ctx[0]));	/* done */
	EXPECT_EQ(0, fi_cancel(&ep->fid, &ctx[5]));
	EXPECT_EQ(-FI_ENOENT, fi_cancel(&ep->fid, &ctx[5]));
	for (int i = 0; i < 100 && ok + cancelled < 6; i++) {
		ssize_t n = fi_cq_read(cq, &e, 1);

		if (n == 1) {
			EXPECT_NE(&ctx[5], e.op_context);
			ok++;
		} else if (n == -FI_EAVAIL) {
			ASSERT_EQ(1, fi_cq_readerr(cq, &err, 0));
			EXPECT_EQ(&ctx[5], err.op_context);
			EXPECT_EQ(FI_ECANCELED, err.err);
			cancelled++;
		} else {
			usleep(1000);
		}
	}
	EXPECT_EQ(5, ok);
	EXPECT_EQ(1, cancelled);
	/* The target got five messages. */
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
				     FI_ADDR_UNSPEC, NULL));
		ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	}
	ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, NULL));
	EXPECT_EQ(-FI_ETIMEDOUT, cq_get(self->b.cq, &e, NULL));
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
}

static void tsend(struct __test_metadata *_metadata, FIXTURE_DATA(ep) *self,
		  uint64_t v, uint64_t tag)
{
	struct fi_cq_tagged_entry e;

	ASSERT_EQ(0, fi_tsenddata(self->a.ep, &v, sizeof(v), NULL, v,
				  self->a.peer, tag, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
}

static ssize_t trecvmsg(FIXTURE_DATA(ep) *self, uint64_t *buf, uint64_t tag,
			void *ctx, uint64_t flags)
{
	struct iovec iov = { buf, sizeof(*buf) };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = tag, .context = ctx,
	};

	return fi_trecvmsg(self->b.ep, &m, flags);
}

TEST_F(ep, peek_claim_discard)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = {};
	struct fi_context c1, c2, c3;
	uint64_t got = 0;
	fi_addr_t src;

	/*
	 * Peek: the message is described and stays; its answer names the
	 * sender, as B's AV knows it (fi_tagged(3): FI_SOURCE), as every
	 * successful peek's does below.
	 */
	tsend(_metadata, self, 11, 0x55);
	ASSERT_EQ(0, trecvmsg(self, &got, 0x55, &c1, FI_PEEK));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, &src));
	EXPECT_EQ(self->b.peer, src);
	EXPECT_EQ(&c1, e.op_context);
	EXPECT_EQ(FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, e.flags);
	EXPECT_EQ(sizeof(got), e.len);
	EXPECT_EQ(0x55, e.tag);
	EXPECT_EQ(11, e.data);
	ASSERT_EQ(0, fi_trecv(self->b.ep, &got, sizeof(got), NULL,
			      FI_ADDR_UNSPEC, 0x55, 0, &c2));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(11, got);

	/* Nothing to peek at: FI_ENOMSG. */
	ASSERT_EQ(0, trecvmsg(self, &got, 0x66, &c1, FI_PEEK));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->b.cq, &err, 0));
	EXPECT_EQ(FI_ENOMSG, err.err);
	EXPECT_EQ(&c1, err.op_context);

	/* Claim: no other receive takes it, the claiming one does. */
	tsend(_metadata, self, 22, 0x77);
	ASSERT_EQ(0, trecvmsg(self, &got, 0x77, &c1, FI_PEEK | FI_CLAIM));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, &src));
	EXPECT_EQ(self->b.peer, src);
	ASSERT_EQ(0, fi_trecv(self->b.ep, &got, sizeof(got), NULL,
			      FI_ADDR_UNSPEC, 0x77, 0, &c3));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
	got = 0;
	ASSERT_EQ(0, trecvmsg(self, &got, 0, &c1, FI_CLAIM));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(&c1, e.op_context);
	EXPECT_EQ(22, got);
	ASSERT_EQ(0, fi_cancel(&self->b.ep->fid, &c3));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->b.cq, &err, 0));
	EXPECT_EQ(FI_ECANCELED, err.err);

	/* Discard: peeked and dropped; a claimed one dropped by its claim. */
	tsend(_metadata, self, 33, 0x88);
	ASSERT_EQ(0, trecvmsg(self, &got, 0x88, &c1, FI_PEEK | FI_DISCARD));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, &src));
	EXPECT_EQ(self->b.peer, src);
	EXPECT_EQ(33, e.data);
	ASSERT_EQ(0, trecvmsg(self, &got, 0x88, &c1, FI_PEEK));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->b.cq, &err, 0));
	EXPECT_EQ(FI_ENOMSG, err.err);
	tsend(_metadata, self, 44, 0x99);
	ASSERT_EQ(0, trecvmsg(self, &got, 0x99, &c2, FI_PEEK | FI_CLAIM));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, &src));
	EXPECT_EQ(self->b.peer, src);
	ASSERT_EQ(0, trecvmsg(self, &got, 0, &c2, FI_CLAIM | FI_DISCARD));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, &src));
	EXPECT_EQ(self->b.peer, src);
	EXPECT_EQ(44, e.data);
	ASSERT_EQ(0, trecvmsg(self, &got, 0, &c2, FI_CLAIM));
	ASSERT_EQ(-FI_EAVAIL, cq_get(self->b.cq, &e, NULL));
	ASSERT_EQ(1, fi_cq_readerr(self->b.cq, &err, 0));
	EXPECT_EQ(FI_ENOMSG, err.err);
}

/*
 * A peek that claims a message while the CQ has no room for its answer:
 * -FI_EAGAIN, and the message stays to be claimed once there is room.
 * Before, the kernel claimed it, the answer was not written, and the
 * next try found nothing (FI_ENOMSG): the message was lost.
 */
TEST_F(ep, peek_claim_with_a_full_cq_loses_nothing)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = {};
	struct fi_context c1, c2;
	uint64_t got = 0;
	int n = 0, ret;

	tsend(_metadata, self, 55, 0xab);
	/* Fill the CQ with answers of peeks at nothing (FI_ENOMSG). */
	while ((ret = trecvmsg(self, &got, 0xcd, &c2, FI_PEEK)) == 0 &&
	       n < 1000)
		n++;
	ASSERT_EQ(-FI_EAGAIN, ret) TH_LOG("after %d peeks", n);
	EXPECT_EQ(-FI_EAGAIN, trecvmsg(self, &got, 0xab, &c1,
				       FI_PEEK | FI_CLAIM));
	/* Room again: the claim finds the message. */
	while (fi_cq_readerr(self->b.cq, &err, 0) == 1)
		n--;
	EXPECT_EQ(0, n);
	ASSERT_EQ(0, trecvmsg(self, &got, 0xab, &c1, FI_PEEK | FI_CLAIM));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL)) {
		if (fi_cq_readerr(self->b.cq, &err, 0) == 1)
			TH_LOG("the claim's answer: error %d", err.err);
	}
	EXPECT_EQ(&c1, e.op_context);
	EXPECT_EQ(55, e.data);
	ASSERT_EQ(0, trecvmsg(self, &got, 0, &c1, FI_CLAIM));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));
	EXPECT_EQ(55, got);
}

TEST_F(ep, enable_needs_cq_and_av)
{
	struct fid_ep *ep;

	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	EXPECT_EQ(-FI_ENOCQ, fi_enable(ep));
	EXPECT_EQ(-FI_EOPBADSTATE, fi_send(ep, "x", 1, NULL, 0, NULL));
	fi_close(&ep->fid);
}

/*
 * A failed fi_enable binds nothing: an endpoint bound to a counter alone
 * whose fi_enable fails (no AV) may still take a CQ for both directions
 * and then enable, its completions on that CQ - not on the counters-only
 * CQ the failed attempt had made.
 */
TEST_F(ep, failed_enable_leaves_cq_unbound)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_tagged_entry e;
	struct fid_cntr *tx;
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;
	char name[64], buf[8] = "late-cq";
	struct fi_context ctx;
	size_t len = sizeof(name);
	fi_addr_t peer;

	ASSERT_EQ(0, fi_cntr_open(self->domain, &attr, &tx, NULL));
	ASSERT_EQ(0, fi_cq_open(self->domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &tx->fid, FI_SEND));
	EXPECT_EQ(-FI_ENOAV, fi_enable(ep));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_enable(ep));

	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &peer, 0, NULL));
	ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(ep, buf, sizeof(buf), NULL, peer, &ctx));
	ASSERT_EQ(1, cq_get(cq, &e, NULL));
	EXPECT_EQ((void *)&ctx, e.op_context);
	ASSERT_EQ(0, fi_cntr_wait(tx, 1, 5000));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));

	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
	EXPECT_EQ(0, fi_close(&tx->fid));
}

/* Open file descriptors of this process (a kernel CQ is one). */
static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * How many more CQs @domain opens (its cq_cnt less those it has, the
 * provider's own counters-only CQs included), each closed again.
 */
static int cq_room(struct fid_domain *domain)
{
	struct fi_cq_attr attr = { .size = 1 };
	struct fid_cq **cqs = NULL, **more;
	int n = 0, cap = 0;

	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			more = realloc(cqs, cap * sizeof(*cqs));
			if (!more)
				break;
			cqs = more;
		}
		if (fi_cq_open(domain, &attr, &cqs[n], NULL))
			break;
		n++;
	}
	for (int i = 0; i < n; i++)
		fi_close(&cqs[i]->fid);
	free(cqs);
	return n;
}

/*
 * A failed fi_enable of an endpoint bound to counters alone leaves
 * nothing behind: the CQ of its own the attempt made is closed again -
 * before the kernel CQ behind it (no AV) and after (the kernel refuses
 * the endpoint: its port is taken) - so the domain can open as many CQs
 * as before and no fd is left open. Once the cause is gone the endpoint
 * enables, with one such CQ, and counts its sends.
 */
TEST_F(ep, failed_counters_only_enable_leaves_no_cq)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct sockaddr_in taken, sin;
	struct fi_cq_tagged_entry e;
	struct side holder = { 0 };
	int room, fds;
	struct fid_cntr *tx;
	struct fid_ep *ep;
	struct fid_av *av;
	char name[64], buf[8] = "cntonly";
	size_t len = sizeof(name);
	fi_addr_t peer;

	ASSERT_EQ(0, fi_cntr_open(self->domain, &attr, &tx, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &tx->fid, FI_SEND));
	room = cq_room(self->domain);
	ASSERT_LT(1, room);

	/* No AV: refused before the CQ has a kernel CQ. */
	EXPECT_EQ(-FI_ENOAV, fi_enable(ep));
	EXPECT_EQ(room, cq_room(self->domain));

	/* The port of another endpoint: the kernel refuses the endpoint. */
	side_open(_metadata, self->domain, self->info, &holder, 0);
	len = sizeof(taken);
	ASSERT_EQ(0, fi_getname(&holder.ep->fid, &taken, &len));
	ASSERT_EQ(0, fi_setname(&ep->fid, &taken, sizeof(taken)));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	room = cq_room(self->domain);
	fds = fd_count();
	ASSERT_LT(0, fds);
	EXPECT_EQ(-FI_EADDRINUSE, fi_enable(ep));
	EXPECT_EQ(fds, fd_count());
	EXPECT_EQ(room, cq_room(self->domain));
	EXPECT_EQ(-FI_EADDRINUSE, fi_enable(ep));
	EXPECT_EQ(fds, fd_count());
	EXPECT_EQ(room, cq_room(self->domain));

	/* The port is free again: enabled there, with one CQ of its own. */
	side_close(&holder);
	room = cq_room(self->domain);
	ASSERT_EQ(0, fi_enable(ep));
	EXPECT_EQ(room - 1, cq_room(self->domain));
	len = sizeof(sin);
	ASSERT_EQ(0, fi_getname(&ep->fid, &sin, &len));
	EXPECT_EQ(taken.sin_port, sin.sin_port);

	len = sizeof(name);
	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &peer, 0, NULL));
	ASSERT_EQ(0, fi_recv(self->b.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(ep, buf, sizeof(buf), NULL, peer, NULL));
	ASSERT_EQ(0, fi_cntr_wait(tx, 1, 5000));
	EXPECT_EQ(1, fi_cntr_read(tx));
	ASSERT_EQ(1, cq_get(self->b.cq, &e, NULL));

	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(room, cq_room(self->domain));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&tx->fid));
}

TEST_F(ep, domain_close_busy_with_endpoints)
{
	EXPECT_EQ(-FI_EBUSY, fi_close(&self->domain->fid));
}

/*
 * fi_endpoint(3): what an endpoint is bound to belongs to its domain (an
 * EQ to its fabric). A CQ, counter or AV of another domain, or an EQ of
 * another fabric, is -FI_EINVAL and changes nothing: the endpoint can
 * still take its own, and the other domain's objects are not held.
 */
TEST(bind_objects_of_another_domain)
{
	struct fi_cq_attr cattr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_cntr_attr nattr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_av_attr aattr = { .type = FI_AV_TABLE };
	struct fi_eq_attr eattr = { .wait_obj = FI_WAIT_NONE };
	struct fid_cq *cq, *cq2;
	struct fid_cntr *cntr, *cntr2;
	struct fid_av *av, *av2;
	struct fid_eq *eq, *eq2;
	struct fid_domain *dom2;
	struct fid_fabric *fab2;
	struct prov_ctx ctx;
	struct fid_ep *ep;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	/* The same device and fabric, another domain; another fabric. */
	ASSERT_EQ(0, fi_domain(ctx.fabric, ctx.info, &dom2, NULL));
	ASSERT_EQ(0, fi_fabric(ctx.info->fabric_attr, &fab2, NULL));
	ASSERT_EQ(0, fi_cq_open(dom2, &cattr, &cq2, NULL));
	ASSERT_EQ(0, fi_cntr_open(dom2, &nattr, &cntr2, NULL));
	ASSERT_EQ(0, fi_av_open(dom2, &aattr, &av2, NULL));
	ASSERT_EQ(0, fi_eq_open(fab2, &eattr, &eq2, NULL));
	ASSERT_EQ(0, fi_cq_open(ctx.domain, &cattr, &cq, NULL));
	ASSERT_EQ(0, fi_cntr_open(ctx.domain, &nattr, &cntr, NULL));
	ASSERT_EQ(0, fi_av_open(ctx.domain, &aattr, &av, NULL));
	ASSERT_EQ(0, fi_eq_open(ctx.fabric, &eattr, &eq, NULL));
	ASSERT_EQ(0, fi_endpoint(ctx.domain, ctx.info, &ep, NULL));

	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &cq2->fid,
					 FI_TRANSMIT | FI_RECV));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &cntr2->fid, FI_SEND | FI_RECV));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &av2->fid, 0));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &eq2->fid, 0));

	/* Nothing of them held: they close while the endpoint is open. */
	EXPECT_EQ(0, fi_close(&cq2->fid));
	EXPECT_EQ(0, fi_close(&cntr2->fid));
	EXPECT_EQ(0, fi_close(&av2->fid));
	EXPECT_EQ(0, fi_close(&eq2->fid));
	EXPECT_EQ(0, fi_close(&dom2->fid));
	EXPECT_EQ(0, fi_close(&fab2->fid));

	/* Nothing taken on the endpoint: its own bind and it enables. */
	EXPECT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	EXPECT_EQ(0, fi_ep_bind(ep, &cntr->fid, FI_SEND | FI_RECV));
	EXPECT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	EXPECT_EQ(0, fi_ep_bind(ep, &eq->fid, 0));
	EXPECT_EQ(0, fi_enable(ep));

	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&eq->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&cntr->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
	prov_close(&ctx);
}

/* Two processes, as fi_pingpong: the data crosses address spaces. */
TEST_F(ep, cross_process)
{
	char name[64], buf[1 << 16];
	size_t len = sizeof(name);
	int p2c[2], c2p[2], status;
	struct fi_cq_tagged_entry e;
	pid_t pid;

	ASSERT_EQ(0, pipe(p2c));
	ASSERT_EQ(0, pipe(c2p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/*
		 * A fresh provider instance in the child (own domain), on
		 * the peer's host across.
		 */
		struct fi_info *hints = prov_hints(), *info;
		struct fid_fabric *fab;
		struct fid_domain *dom;
		struct fid_ep *cep;
		struct fid_cq *cq;
		struct fid_av *av;
		struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT };
		struct fi_av_attr aa = { .type = FI_AV_MAP };
		fi_addr_t peer;
		char cname[64];
		size_t clen = sizeof(cname);

		hints->ep_attr->type = FI_EP_RDM;
		hints->caps = FI_MSG;
		if (prov_across() && sys_enter_netns(prov_peer_netns()))
			_exit(7);
		if (prov_getinfo(NULL, NULL, 0, hints, &info) ||
		    fi_fabric(info->fabric_attr, &fab, NULL) ||
		    fi_domain(fab, info, &dom, NULL) ||
		    fi_endpoint(dom, info, &cep, NULL) ||
		    fi_cq_open(dom, &ca, &cq, NULL) ||
		    fi_av_open(dom, &aa, &av, NULL) ||
		    fi_ep_bind(cep, &cq->fid, FI_TRANSMIT | FI_RECV) ||
		    fi_ep_bind(cep, &av->fid, 0) || fi_enable(cep) ||
		    fi_getname(&cep->fid, cname, &clen))
			_exit(2);
		if (read(p2c[0], name, sizeof(name)) <= 0 ||
		    fi_av_insert(av, name, 1, &peer, 0, NULL) != 1)
			_exit(3);
		if (fi_recv(cep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, NULL))
			_exit(4);
		if (write(c2p[1], cname, clen) != (ssize_t)clen)
			_exit(5);
		while (fi_cq_read(cq, &e, 1) == -FI_EAGAIN)
			;
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i]++;
		if (fi_send(cep, buf, sizeof(buf), NULL, peer, NULL))
			_exit(6);
		while (fi_cq_read(cq, &e, 1) == -FI_EAGAIN)
			;
		_exit(0);
	}
	ASSERT_EQ(0, fi_getname(&self->a.ep->fid, name, &len));
	ASSERT_EQ((ssize_t)len, write(p2c[1], name, len));
	ASSERT_LT(0, read(c2p[0], name, sizeof(name)));
	ASSERT_EQ(1, fi_av_insert(self->a.av, name, 1, &self->a.peer, 0, NULL));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)i;
	ASSERT_EQ(0, fi_recv(self->a.ep, buf, sizeof(buf), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(self->a.ep, buf, sizeof(buf), NULL, self->a.peer,
			     NULL));
	for (int got = 0; got < 2; got++)
		ASSERT_EQ(1, cq_get(self->a.cq, &e, NULL));
	for (size_t i = 0; i < sizeof(buf); i++)
		ASSERT_EQ((char)(i + 1), buf[i]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
