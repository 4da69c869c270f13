// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive contexts (fi_endpoint(3) fi_srx_context, rx_ctx_cnt =
 * FI_SHARED_CONTEXT): fi_getinfo offers one per endpoint; two endpoints
 * bound to one SRX take messages from two senders into the receives
 * posted to the SRX, in posting order, each completing on the CQ of the
 * endpoint it arrived at with its source (FI_SOURCE); tagged receives
 * with ignore bits; messages that arrive before their receive; one
 * multi-receive buffer filled through both endpoints; fi_cancel on the
 * SRX; an FI_PEEK letting go of the CQ it answered on; close ordering
 * (-FI_EBUSY); a closed endpoint's waiting messages go with it; and the
 * error paths.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <rdma/fi_tagged.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "prov_util.h"

#define NEP	2

FIXTURE(srx)
{
	struct fi_info *info;		/* a member's (FI_SHARED_CONTEXT) */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *srx;
	struct fid_ep *ep[NEP];		/* members of the SRX */
	struct fid_cq *ecq[NEP];
	struct fid_ep *snd[NEP];	/* senders of their own */
	struct fid_cq *scq[NEP];
	fi_addr_t ep_addr[NEP], snd_addr[NEP];
};

static struct fid_cq *cq_open(struct __test_metadata *_metadata,
			      struct fid_domain *domain)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 64 };
	struct fid_cq *cq = NULL;

	EXPECT_EQ(0, fi_cq_open(domain, &attr, &cq, NULL));
	return cq;
}

static fi_addr_t insert_name(struct __test_metadata *_metadata,
			     struct fid_av *av, fid_t fid)
{
	char name[64];
	size_t len = sizeof(name);
	fi_addr_t a = FI_ADDR_NOTAVAIL;

	EXPECT_EQ(0, fi_getname(fid, name, &len));
	EXPECT_EQ(1, fi_av_insert(av, name, 1, &a, 0, NULL));
	return a;
}

/* An endpoint of @info with its own CQ and @av, bound to @srx if not NULL. */
static void ep_open(struct __test_metadata *_metadata,
		    FIXTURE_DATA(srx) *self, struct fi_info *info,
		    struct fid_ep *srx, struct fid_ep **ep, struct fid_cq **cq)
{
	ASSERT_EQ(0, fi_endpoint(self->domain, info, ep, NULL));
	*cq = cq_open(_metadata, self->domain);
	ASSERT_NE(NULL, *cq);
	ASSERT_EQ(0, fi_ep_bind(*ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(*ep, &self->av->fid, 0));
	if (srx)
		ASSERT_EQ(0, fi_ep_bind(*ep, &srx->fid, 0));
	ASSERT_EQ(0, fi_enable(*ep));
}

FIXTURE_SETUP(srx)
{
	struct fi_av_attr aattr = { .type = FI_AV_TABLE };
	struct fi_info *hints, *sinfo;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV |
		      FI_MULTI_RECV;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &sinfo));
	ASSERT_EQ(0, fi_fabric(sinfo->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, sinfo, &self->domain, NULL));
	if (!prov_feature(self->domain, SWNIC_FEAT_SRX)) {
		fi_freeinfo(sinfo);
		fi_freeinfo(hints);
		SETUP_SKIP("the module has no shared receive contexts");
	}
	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	fi_freeinfo(hints);

	ASSERT_EQ(0, fi_av_open(self->domain, &aattr, &self->av, NULL));
	ASSERT_EQ(0, fi_srx_context(self->domain, NULL, &self->srx, NULL));
	for (int i = 0; i < NEP; i++) {
		ep_open(_metadata, self, self->info, self->srx, &self->ep[i],
			&self->ecq[i]);
		ep_open(_metadata, self, sinfo, NULL, &self->snd[i],
			&self->scq[i]);
	}
	fi_freeinfo(sinfo);
	for (int i = 0; i < NEP; i++) {
		self->ep_addr[i] = insert_name(_metadata, self->av,
					       &self->ep[i]->fid);
		self->snd_addr[i] = insert_name(_metadata, self->av,
						&self->snd[i]->fid);
	}
}

FIXTURE_TEARDOWN(srx)
{
	for (int i = 0; i < NEP; i++) {
		if (self->ep[i])
			fi_close(&self->ep[i]->fid);
		if (self->snd[i])
			fi_close(&self->snd[i]->fid);
	}
	if (self->srx)
		fi_close(&self->srx->fid);
	for (int i = 0; i < NEP; i++) {
		if (self->ecq[i])
			fi_close(&self->ecq[i]->fid);
		if (self->scq[i])
			fi_close(&self->scq[i]->fid);
	}
	if (self->av)
		fi_close(&self->av->fid);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
}

/* One completion within 5 s (or -FI_ETIMEDOUT), and its source. */
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

/* One error completion within 5 s. */
static ssize_t cq_get_err(struct fid_cq *cq, struct fi_cq_err_entry *e)
{
	struct fi_cq_tagged_entry t;

	for (int i = 0; i < 5000; i++) {
		ssize_t n = fi_cq_read(cq, &t, 1);

		if (n == -FI_EAVAIL) {
			memset(e, 0, sizeof(*e));
			return fi_cq_readerr(cq, e, 0);
		}
		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

/* Sender @s sends @v to member @to (tagged if @tag), and its send completes. */
static void send_one(struct __test_metadata *_metadata,
		     FIXTURE_DATA(srx) *self, int s, int to, uint64_t *v,
		     bool tagged, uint64_t tag)
{
	struct fi_cq_tagged_entry e;

	ssize_t ret;

	if (tagged)
		ret = fi_tsend(self->snd[s], v, sizeof(*v), NULL,
			       self->ep_addr[to], tag, v);
	else
		ret = fi_send(self->snd[s], v, sizeof(*v), NULL,
			      self->ep_addr[to], v);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, cq_get(self->scq[s], &e, NULL));
	EXPECT_EQ(v, e.op_context);
}

/* The next completion of member @ep: @ctx, from sender @from. */
static void expect_recv(struct __test_metadata *_metadata,
			FIXTURE_DATA(srx) *self, int ep, void *ctx, int from,
			uint64_t flags)
{
	struct fi_cq_tagged_entry e;
	fi_addr_t src = FI_ADDR_NOTAVAIL;

	ASSERT_EQ(1, cq_get(self->ecq[ep], &e, &src));
	EXPECT_EQ(ctx, e.op_context);
	EXPECT_EQ(FI_RECV | flags, e.flags & (FI_RECV | flags));
	EXPECT_EQ(self->snd_addr[from], src);
}

static void expect_none(struct __test_metadata *_metadata,
			FIXTURE_DATA(srx) *self)
{
	struct fi_cq_tagged_entry e;

	for (int i = 0; i < NEP; i++)
		EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->ecq[i], &e, 1));
}

TEST_F(srx, getinfo_offers_one_per_endpoint)
{
	struct fi_info *hints = prov_hints(), *info = NULL;

	EXPECT_EQ(1, self->info->domain_attr->max_ep_srx_ctx);
	EXPECT_EQ(FI_SHARED_CONTEXT, self->info->ep_attr->rx_ctx_cnt);
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->max_ep_srx_ctx = 2;
	EXPECT_EQ(-FI_ENODATA, prov_getinfo(NULL, NULL, 0, hints, &info));
	hints->domain_attr->max_ep_srx_ctx = 1;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_EQ(1, info->domain_attr->max_ep_srx_ctx);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/*
 * Four receives on the SRX; four messages from two senders to both
 * members: receive i takes message i, whichever member it arrived at,
 * and completes on that member's CQ.
 */
TEST_F(srx, receives_match_in_posting_order_across_endpoints)
{
	static const int from[4] = { 0, 1, 0, 1 }, to[4] = { 0, 1, 1, 0 };
	uint64_t buf[4] = { 0 }, msg[4] = { 11, 22, 33, 44 };

	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, fi_recv(self->srx, &buf[i], sizeof(buf[i]), NULL,
				     FI_ADDR_UNSPEC, &buf[i]));
	for (int i = 0; i < 4; i++)
		send_one(_metadata, self, from[i], to[i], &msg[i], false, 0);
	/* Member 0 got messages 0 and 3, member 1 messages 1 and 2. */
	expect_recv(_metadata, self, 0, &buf[0], from[0], FI_MSG);
	expect_recv(_metadata, self, 0, &buf[3], from[3], FI_MSG);
	expect_recv(_metadata, self, 1, &buf[1], from[1], FI_MSG);
	expect_recv(_metadata, self, 1, &buf[2], from[2], FI_MSG);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(msg[i], buf[i]);
	expect_none(_metadata, self);
}

TEST_F(srx, tagged_receives_match_tags_across_endpoints)
{
	uint64_t buf[3] = { 0 }, msg[3] = { 1, 2, 3 }, plain = 9, pbuf = 0;
	struct fi_cq_tagged_entry e;

	ASSERT_EQ(0, fi_trecv(self->srx, &buf[0], 8, NULL, FI_ADDR_UNSPEC,
			      0x10, 0, &buf[0]));
	ASSERT_EQ(0, fi_trecv(self->srx, &buf[1], 8, NULL, FI_ADDR_UNSPEC,
			      0x20, 0, &buf[1]));
	ASSERT_EQ(0, fi_trecv(self->srx, &buf[2], 8, NULL, FI_ADDR_UNSPEC,
			      0x100, 0xff, &buf[2]));
	/* An untagged message takes no tagged receive: it waits. */
	send_one(_metadata, self, 1, 1, &plain, false, 0);
	expect_none(_metadata, self);
	send_one(_metadata, self, 0, 1, &msg[1], true, 0x20);
	send_one(_metadata, self, 1, 0, &msg[0], true, 0x10);
	send_one(_metadata, self, 0, 0, &msg[2], true, 0x1ab);
	ASSERT_EQ(1, cq_get(self->ecq[1], &e, NULL));
	EXPECT_EQ(&buf[1], e.op_context);
	EXPECT_EQ(0x20, e.tag);
	EXPECT_TRUE(e.flags & FI_TAGGED);
	ASSERT_EQ(1, cq_get(self->ecq[0], &e, NULL));
	EXPECT_EQ(&buf[0], e.op_context);
	EXPECT_EQ(0x10, e.tag);
	ASSERT_EQ(1, cq_get(self->ecq[0], &e, NULL));
	EXPECT_EQ(&buf[2], e.op_context);
	EXPECT_EQ(0x1ab, e.tag);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(msg[i], buf[i]);
	/* The untagged one, for the first untagged receive. */
	ASSERT_EQ(0, fi_recv(self->srx, &pbuf, 8, NULL, FI_ADDR_UNSPEC,
			     &pbuf));
	expect_recv(_metadata, self, 1, &pbuf, 1, FI_MSG);
	EXPECT_EQ(plain, pbuf);
	expect_none(_metadata, self);
}

/* Messages that arrive first wait, oldest first, for the SRX's receives. */
TEST_F(srx, unexpected_messages_wait_for_the_srx)
{
	static const int from[3] = { 0, 1, 0 }, to[3] = { 1, 0, 0 };
	uint64_t buf[3] = { 0 }, msg[3] = { 5, 6, 7 };

	for (int i = 0; i < 3; i++)
		send_one(_metadata, self, from[i], to[i], &msg[i], false, 0);
	expect_none(_metadata, self);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, fi_recv(self->srx, &buf[i], 8, NULL,
				     FI_ADDR_UNSPEC, &buf[i]));
	expect_recv(_metadata, self, 1, &buf[0], 0, FI_MSG);
	expect_recv(_metadata, self, 0, &buf[1], 1, FI_MSG);
	expect_recv(_metadata, self, 0, &buf[2], 0, FI_MSG);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(msg[i], buf[i]);
	expect_none(_metadata, self);
}

/* A directed receive on the SRX takes only its sender's message. */
TEST_F(srx, directed_receive_on_the_srx)
{
	uint64_t buf = 0, m0 = 1, m1 = 2, rest = 0;

	ASSERT_EQ(0, fi_recv(self->srx, &buf, 8, NULL, self->snd_addr[1],
			     &buf));
	send_one(_metadata, self, 0, 0, &m0, false, 0);
	expect_none(_metadata, self);
	send_one(_metadata, self, 1, 0, &m1, false, 0);
	expect_recv(_metadata, self, 0, &buf, 1, FI_MSG);
	EXPECT_EQ(m1, buf);
	ASSERT_EQ(0, fi_recv(self->srx, &rest, 8, NULL, FI_ADDR_UNSPEC,
			     &rest));
	expect_recv(_metadata, self, 0, &rest, 0, FI_MSG);
	EXPECT_EQ(m0, rest);
}

/* One multi-receive buffer, filled through both members. */
TEST_F(srx, multi_recv_buffer_spans_endpoints)
{
	uint64_t msg[3] = { 0x1111, 0x2222, 0x3333 };
	uint64_t buf[3] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct fi_msg m = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = buf,
	};
	static const int to[3] = { 0, 1, 1 };
	struct fi_cq_tagged_entry e;
	size_t min = sizeof(uint64_t);

	if (!(self->info->caps & FI_MULTI_RECV))
		SKIP(return, "no FI_MULTI_RECV");
	ASSERT_EQ(0, fi_setopt(&self->srx->fid, FI_OPT_ENDPOINT,
			       FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)));
	ASSERT_EQ(0, fi_recvmsg(self->srx, &m, FI_MULTI_RECV));
	for (int i = 0; i < 3; i++)
		send_one(_metadata, self, i % 2, to[i], &msg[i], false, 0);
	ASSERT_EQ(1, cq_get(self->ecq[0], &e, NULL));
	EXPECT_EQ((void *)buf, e.op_context);
	EXPECT_EQ(&buf[0], e.buf);
	EXPECT_FALSE(e.flags & FI_MULTI_RECV);
	ASSERT_EQ(1, cq_get(self->ecq[1], &e, NULL));
	EXPECT_EQ(&buf[1], e.buf);
	EXPECT_FALSE(e.flags & FI_MULTI_RECV);
	/* The last fills it: released. */
	ASSERT_EQ(1, cq_get(self->ecq[1], &e, NULL));
	EXPECT_EQ(&buf[2], e.buf);
	EXPECT_TRUE(e.flags & FI_MULTI_RECV);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(msg[i], buf[i]);
	expect_none(_metadata, self);
}

/* fi_cancel on the SRX: the receive goes, on the oldest member's CQ. */
TEST_F(srx, cancel_on_the_srx)
{
	uint64_t buf = 0, other = 0, m = 77;
	struct fi_cq_err_entry err;

	ASSERT_EQ(0, fi_recv(self->srx, &buf, 8, NULL, FI_ADDR_UNSPEC, &buf));
	ASSERT_EQ(0, fi_cancel(&self->srx->fid, &buf));
	ASSERT_EQ(1, cq_get_err(self->ecq[0], &err));
	EXPECT_EQ(&buf, err.op_context);
	EXPECT_EQ(FI_ECANCELED, err.err);
	EXPECT_EQ(-FI_ENOENT, fi_cancel(&self->srx->fid, &buf));
	/* Gone for good: the next message waits for the next receive. */
	send_one(_metadata, self, 0, 1, &m, false, 0);
	expect_none(_metadata, self);
	EXPECT_EQ(0, buf);
	ASSERT_EQ(0, fi_recv(self->srx, &other, 8, NULL, FI_ADDR_UNSPEC,
			     &other));
	expect_recv(_metadata, self, 1, &other, 0, FI_MSG);
	EXPECT_EQ(m, other);
}

/*
 * FI_PEEK on the SRX answers on the oldest member's CQ; FI_CLAIM then
 * takes the claimed message, which completes where it arrived.
 */
TEST_F(srx, peek_and_claim_on_the_srx)
{
	uint64_t m = 0xabc, buf = 0;
	struct iovec iov = { .iov_base = &buf, .iov_len = sizeof(buf) };
	struct fi_msg_tagged t = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = 0x42, .context = &buf,
	};
	struct fi_cq_err_entry err;
	struct fi_cq_tagged_entry e;

	/* Nothing there yet: FI_ENOMSG. */
	ASSERT_EQ(0, fi_trecvmsg(self->srx, &t, FI_PEEK));
	ASSERT_EQ(1, cq_get_err(self->ecq[0], &err));
	EXPECT_EQ(FI_ENOMSG, err.err);
	send_one(_metadata, self, 0, 1, &m, true, 0x42);
	ASSERT_EQ(0, fi_trecvmsg(self->srx, &t, FI_PEEK | FI_CLAIM));
	ASSERT_EQ(1, cq_get(self->ecq[0], &e, NULL));
	EXPECT_EQ(&buf, e.op_context);
	EXPECT_EQ(sizeof(m), e.len);
	EXPECT_EQ(0x42, e.tag);
	/* Claimed: no other receive takes it. */
	ASSERT_EQ(0, fi_trecvmsg(self->srx, &t, FI_PEEK));
	ASSERT_EQ(1, cq_get_err(self->ecq[0], &err));
	EXPECT_EQ(FI_ENOMSG, err.err);
	ASSERT_EQ(0, fi_trecvmsg(self->srx, &t, FI_CLAIM));
	ASSERT_EQ(1, cq_get(self->ecq[1], &e, NULL));
	EXPECT_EQ(&buf, e.op_context);
	EXPECT_EQ(m, buf);
	expect_none(_metadata, self);
}

/*
 * A peek on the SRX holds the oldest member's CQ only while it answers
 * there (a member closing meanwhile must not leave the CQ to be freed
 * under it): answered, or refused before (a source no AV entry names),
 * it lets go, and the member then its CQ close as ever. The race itself
 * has no deterministic test.
 */
TEST_F(srx, peek_lets_its_cq_go)
{
	uint64_t buf = 0;
	struct iovec iov = { .iov_base = &buf, .iov_len = sizeof(buf) };
	struct fi_msg_tagged t = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = 0x42, .context = &buf,
	};
	struct fi_cq_err_entry err;

	ASSERT_EQ(0, fi_trecvmsg(self->srx, &t, FI_PEEK));
	ASSERT_EQ(1, cq_get_err(self->ecq[0], &err));
	EXPECT_EQ(FI_ENOMSG, err.err);
	t.addr = 1000;
	EXPECT_GT(0, fi_trecvmsg(self->srx, &t, FI_PEEK));
	ASSERT_EQ(0, fi_close(&self->ep[0]->fid));
	self->ep[0] = NULL;
	EXPECT_EQ(0, fi_close(&self->ecq[0]->fid));
	self->ecq[0] = NULL;
	/* The next member answers now. */
	t.addr = FI_ADDR_UNSPEC;
	ASSERT_EQ(0, fi_trecvmsg(self->srx, &t, FI_PEEK));
	ASSERT_EQ(1, cq_get_err(self->ecq[1], &err));
	EXPECT_EQ(FI_ENOMSG, err.err);
}

/*
 * A receive of the SRX counts on the FI_RECV counter of the endpoint its
 * message arrived at, as it completes on that endpoint's CQ.
 */
TEST_F(srx, counts_on_the_arrival_endpoint)
{
	struct fi_cntr_attr cattr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	uint64_t m[2] = { 1, 2 }, buf[2] = { 0 };
	struct fi_cq_tagged_entry e;
	struct fid_cntr *cntr;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t addr;

	ASSERT_EQ(0, fi_cntr_open(self->domain, &cattr, &cntr, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	cq = cq_open(_metadata, self->domain);
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &cntr->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->srx->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	addr = insert_name(_metadata, self->av, &ep->fid);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, fi_recv(self->srx, &buf[i], 8, NULL,
				     FI_ADDR_UNSPEC, &buf[i]));
	/* One to the counted endpoint, one to member 0. */
	ASSERT_EQ(0, fi_send(self->snd[0], &m[0], 8, NULL, addr, &m[0]));
	ASSERT_EQ(1, cq_get(self->scq[0], &e, NULL));
	send_one(_metadata, self, 1, 0, &m[1], false, 0);
	EXPECT_EQ(0, fi_cntr_wait(cntr, 1, 5000));
	expect_recv(_metadata, self, 0, &buf[1], 1, FI_MSG);
	EXPECT_EQ(1, fi_cntr_read(cntr));
	EXPECT_EQ(0, fi_cntr_readerr(cntr));
	EXPECT_EQ(m[0], buf[0]);
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
	EXPECT_EQ(0, fi_close(&cntr->fid));
}

/*
 * fi_cq(3) FI_SELECTIVE_COMPLETION: a receive of the SRX completes as the
 * binding of the endpoint it arrived at says. A member whose CQ is bound
 * FI_RECV | FI_SELECTIVE_COMPLETION reports only the receive that asked
 * (FI_COMPLETION); its counter counts both. A member bound without it
 * reports every one.
 */
TEST_F(srx, selective_completion_of_the_arrival_endpoint)
{
	struct fi_cntr_attr cattr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	uint64_t m[3] = { 1, 2, 3 }, buf[3] = { 0 };
	struct iovec iov = { .iov_base = &buf[1], .iov_len = 8 };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = &buf[1],
	};
	struct fi_cq_tagged_entry e;
	struct fid_cntr *cntr;
	struct fid_cq *cq, *cq2;
	struct fid_ep *ep, *ep2;
	fi_addr_t addr;

	ASSERT_EQ(0, fi_cntr_open(self->domain, &cattr, &cntr, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	cq = cq_open(_metadata, self->domain);
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV |
				FI_SELECTIVE_COMPLETION));
	ASSERT_EQ(0, fi_ep_bind(ep, &cntr->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->srx->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	/*
	 * A member bound to that CQ to transmit only receives on another:
	 * it has no say there. Before, it made the CQ report them.
	 */
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep2, NULL));
	cq2 = cq_open(_metadata, self->domain);
	ASSERT_EQ(0, fi_ep_bind(ep2, &cq->fid, FI_TRANSMIT));
	ASSERT_EQ(0, fi_ep_bind(ep2, &cq2->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep2, &self->av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep2, &self->srx->fid, 0));
	ASSERT_EQ(0, fi_enable(ep2));
	addr = insert_name(_metadata, self->av, &ep->fid);
	ASSERT_EQ(0, fi_recv(self->srx, &buf[0], 8, NULL, FI_ADDR_UNSPEC,
			     &buf[0]));
	ASSERT_EQ(0, fi_recvmsg(self->srx, &msg, FI_COMPLETION));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, fi_send(self->snd[0], &m[i], 8, NULL, addr,
				     &m[i]));
		ASSERT_EQ(1, cq_get(self->scq[0], &e, NULL));
	}
	EXPECT_EQ(0, fi_cntr_wait(cntr, 2, 5000));
	ASSERT_EQ(1, cq_get(cq, &e, NULL));
	EXPECT_EQ(&buf[1], e.op_context);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(cq, &e, 1));
	EXPECT_EQ(m[0], buf[0]);
	EXPECT_EQ(m[1], buf[1]);

	/* Member 0's CQ is not selective: it reports what did not ask. */
	ASSERT_EQ(0, fi_recv(self->srx, &buf[2], 8, NULL, FI_ADDR_UNSPEC,
			     &buf[2]));
	send_one(_metadata, self, 1, 0, &m[2], false, 0);
	expect_recv(_metadata, self, 0, &buf[2], 1, FI_MSG);
	EXPECT_EQ(m[2], buf[2]);
	expect_none(_metadata, self);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(cq2, &e, 1));
	EXPECT_EQ(0, fi_close(&ep2->fid));
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&cq2->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
	EXPECT_EQ(0, fi_close(&cntr->fid));
}

/*
 * fi_msg(3): a connected endpoint ignores a receive's address. An SRX of
 * connected endpoints only (no AV; the SRX itself offers FI_TAGGED and
 * FI_DIRECTED_RECV) ignores an FI_PEEK's too, as it does its receives':
 * answered on the member's CQ (nothing there: FI_ENOMSG), not refused
 * for the lack of an AV.
 */
TEST_F(srx, peek_on_an_srx_of_connected_endpoints_ignores_the_source)
{
	struct fi_info *hints = prov_hints(), *info = NULL;
	uint64_t buf = 0;
	struct iovec iov = { .iov_base = &buf, .iov_len = sizeof(buf) };
	struct fi_msg_tagged t = {
		.msg_iov = &iov, .iov_count = 1, .addr = 0,
		.tag = 0x42, .context = &buf,
	};
	struct fi_cq_err_entry err;
	struct fid_ep *srx, *ep;
	struct fid_cq *cq;

	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->addr_format = FI_SOCKADDR_IN;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	fi_freeinfo(hints);
	info->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	ASSERT_EQ(0, fi_srx_context(self->domain, NULL, &srx, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, info, &ep, NULL));
	cq = cq_open(_metadata, self->domain);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &srx->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));

	ASSERT_EQ(0, fi_trecvmsg(srx, &t, FI_PEEK));
	ASSERT_EQ(1, cq_get_err(cq, &err));
	EXPECT_EQ(FI_ENOMSG, err.err);
	EXPECT_EQ(&buf, err.op_context);
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&srx->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
	fi_freeinfo(info);
}

TEST_F(srx, close_while_bound_is_ebusy)
{
	EXPECT_EQ(-FI_EBUSY, fi_close(&self->srx->fid));
	EXPECT_EQ(-FI_EBUSY, fi_close(&self->domain->fid));
	ASSERT_EQ(0, fi_close(&self->ep[0]->fid));
	self->ep[0] = NULL;
	EXPECT_EQ(-FI_EBUSY, fi_close(&self->srx->fid));
	ASSERT_EQ(0, fi_close(&self->ep[1]->fid));
	self->ep[1] = NULL;
	EXPECT_EQ(0, fi_close(&self->srx->fid));
	self->srx = NULL;
}

/*
 * A member that closes takes the messages that arrived at it and wait
 * unexpected; the SRX and the other member go on.
 */
TEST_F(srx, closed_endpoint_takes_its_waiting_messages)
{
	uint64_t m0 = 100, m1 = 200, buf = 0;

	send_one(_metadata, self, 0, 0, &m0, false, 0);
	ASSERT_EQ(0, fi_close(&self->ep[0]->fid));
	self->ep[0] = NULL;
	ASSERT_EQ(0, fi_recv(self->srx, &buf, 8, NULL, FI_ADDR_UNSPEC, &buf));
	expect_none(_metadata, self);
	send_one(_metadata, self, 1, 1, &m1, false, 0);
	expect_recv(_metadata, self, 1, &buf, 1, FI_MSG);
	EXPECT_EQ(m1, buf);
}

/*
 * Sixteen messages wait at the SRX, arrived at a member whose CQ has eight
 * entries; then sixteen receives are posted to the SRX. Each fi_recv
 * rings (the SRX's RQ asks for it while messages wait), and the kernel
 * takes eight of them, the CQ's size, and leaves the rest in the SRX's
 * RQ (recv_rq.c: -EAGAIN). Nothing posts or arrives any more: reading the
 * member's CQ must ring the SRX again once it freed slots, though the
 * SRX is on no CQ's list of endpoints.
 */
TEST_F(srx, receives_behind_a_full_member_cq_all_complete)
{
	enum { CQ_SIZE = 8, N = 2 * CQ_SIZE };
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_TAGGED, .size = CQ_SIZE,
	};
	uint64_t msg[N], buf[N] = { 0 };
	struct fi_cq_tagged_entry e;
	fi_addr_t addr, src;
	struct fid_ep *ep;
	struct fid_cq *cq;
	int i;

	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_cq_open(self->domain, &attr, &cq, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->srx->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	addr = insert_name(_metadata, self->av, &ep->fid);

	/* Each buffered at the SRX (transmit complete) before the next. */
	for (i = 0; i < N; i++) {
		msg[i] = 1000 + i;
		ASSERT_EQ(0, fi_send(self->snd[0], &msg[i], sizeof(msg[i]),
				     NULL, addr, &msg[i]));
		ASSERT_EQ(1, cq_get(self->scq[0], &e, NULL));
		ASSERT_EQ(&msg[i], e.op_context);
	}
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, fi_recv(self->srx, &buf[i], sizeof(buf[i]), NULL,
				     FI_ADDR_UNSPEC, &buf[i]));
	for (i = 0; i < N; i++) {
		src = FI_ADDR_NOTAVAIL;
		ASSERT_EQ(1, cq_get(cq, &e, &src)) {
			TH_LOG("completion %d of %d", i, N);
		}
		EXPECT_EQ(&buf[i], e.op_context);
		EXPECT_EQ(self->snd_addr[0], src);
		EXPECT_EQ(msg[i], buf[i]);
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(cq, &e, 1));
	expect_none(_metadata, self);
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
}

TEST_F(srx, error_paths)
{
	struct fi_info *plain = fi_dupinfo(self->info);
	struct fi_rx_attr ra = { .caps = FI_RMA | FI_RECV };
	struct fid_ep *ep, *ep2, *srx2;
	struct fid_cq *cq;
	struct fid_av *av2;
	struct fi_av_attr aattr = { .type = FI_AV_TABLE };
	uint64_t v = 0;
	char name[64];
	size_t len = sizeof(name);

	/* What an SRX does not offer, and what it is not. */
	EXPECT_EQ(-FI_EINVAL, fi_srx_context(self->domain, &ra, &srx2, NULL));
	ra.caps = FI_MSG;
	ra.size = self->info->rx_attr->size + 1;
	EXPECT_EQ(-FI_EINVAL, fi_srx_context(self->domain, &ra, &srx2, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_send(self->srx, &v, 8, NULL,
					  self->snd_addr[0], NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_tsend(self->srx, &v, 8, NULL,
					   self->snd_addr[0], 1, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_getname(&self->srx->fid, name, &len));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(self->srx, &self->ecq[0]->fid,
					 FI_RECV));
	/* One SRX per endpoint, and not after fi_enable. */
	EXPECT_NE(0, fi_ep_bind(self->ep[0], &self->srx->fid, 0));
	/* Its endpoints receive through it, not on their own. */
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_recv(self->ep[0], &v, 8, NULL,
					  FI_ADDR_UNSPEC, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_trecv(self->ep[1], &v, 8, NULL,
					   FI_ADDR_UNSPEC, 0, 0, NULL));

	/* An endpoint that did not ask for a shared context takes none. */
	plain->ep_attr->rx_ctx_cnt = 1;
	ASSERT_EQ(0, fi_endpoint(self->domain, plain, &ep, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &self->srx->fid, 0));
	EXPECT_EQ(0, fi_close(&ep->fid));

	/* FI_SHARED_CONTEXT without an SRX bound does not enable. */
	cq = cq_open(_metadata, self->domain);
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->av->fid, 0));
	EXPECT_EQ(-FI_EINVAL, fi_enable(ep));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->srx->fid, 0));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &self->srx->fid, 0));
	EXPECT_EQ(0, fi_enable(ep));
	EXPECT_EQ(0, fi_close(&ep->fid));

	/* The SRX's connectionless endpoints share one AV. */
	ASSERT_EQ(0, fi_av_open(self->domain, &aattr, &av2, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->srx->fid, 0));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &av2->fid, 0));
	EXPECT_EQ(0, fi_close(&ep->fid));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av2->fid, 0));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &self->srx->fid, 0));
	EXPECT_EQ(0, fi_close(&ep->fid));
	/* An SRX takes its first endpoint's AV when that one is enabled. */
	ASSERT_EQ(0, fi_srx_context(self->domain, NULL, &srx2, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep2, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep2, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &self->av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep2, &av2->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &srx2->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep2, &srx2->fid, 0));
	EXPECT_EQ(0, fi_enable(ep));
	EXPECT_EQ(-FI_EINVAL, fi_enable(ep2));
	EXPECT_EQ(0, fi_close(&ep2->fid));
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&srx2->fid));
	EXPECT_EQ(0, fi_close(&av2->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
	fi_freeinfo(plain);
}

/* fi_ep_bind of an SRX of another domain is refused. */
TEST_F(srx, srx_of_another_domain_is_refused)
{
	struct fid_domain *dom2;
	struct fid_ep *srx2, *ep;

	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &dom2, NULL));
	ASSERT_EQ(0, fi_srx_context(dom2, NULL, &srx2, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &srx2->fid, 0));
	EXPECT_EQ(0, fi_close(&ep->fid));
	/* The domain's children first. */
	EXPECT_EQ(-FI_EBUSY, fi_close(&dom2->fid));
	EXPECT_EQ(0, fi_close(&srx2->fid));
	EXPECT_EQ(0, fi_close(&dom2->fid));
}

/*
 * A reader of a CQ inside the provider: the HMEM override's copy_to is
 * called while fi_cq_read holds the CQ's lock, between taking an SRX
 * receive's op for live and its last use of the op and the SRX. It says
 * it is in, and stays up to 2 s, or until the SRX's close has returned.
 */
static struct {
	atomic_int inside;		/* the reader is in copy_to */
	atomic_int closed;		/* fi_close(srx) has returned */
	atomic_int closed_inside;	/* ... while the reader was in */
} race;

static ssize_t race_copy_from(void *dest, size_t size,
			      enum fi_hmem_iface iface, uint64_t device,
			      const struct iovec *iov, size_t count,
			      uint64_t offset)
{
	(void)dest; (void)iface; (void)device; (void)iov; (void)count;
	(void)offset;
	return (ssize_t)size;
}

static ssize_t race_copy_to(enum fi_hmem_iface iface, uint64_t device,
			    const struct iovec *iov, size_t count,
			    uint64_t offset, const void *src, size_t size)
{
	(void)iface; (void)device; (void)offset;
	if (count && iov[0].iov_len >= size)
		memcpy(iov[0].iov_base, src, size);
	atomic_store(&race.inside, 1);
	for (int i = 0; i < 2000 && !atomic_load(&race.closed); i++)
		usleep(1000);
	if (atomic_load(&race.closed))
		atomic_store(&race.closed_inside, 1);
	atomic_store(&race.inside, 0);
	return (ssize_t)size;
}

struct race_read {
	struct fid_cq *cq;
	ssize_t ret;
};

static void *race_reader(void *arg)
{
	struct race_read *r = arg;
	struct fi_cq_tagged_entry e;

	/* The completion is stale once the SRX has closed: none or one. */
	r->ret = fi_cq_read(r->cq, &e, 1);
	return NULL;
}

static void *race_closer(void *arg)
{
	struct fid_ep *srx = arg;
	intptr_t ret = fi_close(&srx->fid);

	atomic_store(&race.closed, 1);
	return (void *)ret;
}

/*
 * An SRX's receive completes on the CQ of the endpoint its message
 * arrived at, which outlives the endpoint. Closing the SRX while another
 * thread reads that CQ (FI_THREAD_SAFE) retires its completions under
 * the CQ's lock, as an endpoint's close does: the close waits for a
 * reader that has taken such a completion for live to finish with it,
 * and never frees the SRX under it.
 */
TEST_F(srx, close_waits_for_a_reader_of_its_completion)
{
	struct fi_hmem_override_ops ops = {
		.size = sizeof(ops),
		.copy_from_hmem_iov = race_copy_from,
		.copy_to_hmem_iov = race_copy_to,
	};
	static uint64_t dev_rx;
	struct fi_mr_attr attr = { 0 };
	struct iovec iov = { &dev_rx, sizeof(dev_rx) };
	struct race_read r = { 0 };
	struct fi_cq_tagged_entry e;
	pthread_t reader, closer;
	uint64_t v = 0x5352585241434531ULL;
	struct fid_mr *mr;
	void *desc, *cret;
	int i;

	ASSERT_EQ(0, fi_set_ops(&self->domain->fid, FI_SET_OPS_HMEM_OVERRIDE,
				0, &ops, NULL));
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = FI_RECV;
	attr.iface = FI_HMEM_CUDA;
	ASSERT_EQ(0, fi_mr_regattr(self->domain, &attr, 0, &mr));
	desc = fi_mr_desc(mr);
	ASSERT_EQ(0, fi_recv(self->srx, &dev_rx, sizeof(dev_rx), desc,
			     FI_ADDR_UNSPEC, &dev_rx));
	/* Its completion is in member 0's CQ when the send completes. */
	ASSERT_EQ(0, fi_send(self->snd[0], &v, sizeof(v), NULL,
			     self->ep_addr[0], &v));
	ASSERT_EQ(1, cq_get(self->scq[0], &e, NULL));
	/* Unread, its endpoint gone: the SRX closes (no member left). */
	for (i = 0; i < NEP; i++) {
		ASSERT_EQ(0, fi_close(&self->ep[i]->fid));
		self->ep[i] = NULL;
	}

	r.cq = self->ecq[0];
	ASSERT_EQ(0, pthread_create(&reader, NULL, race_reader, &r));
	for (i = 0; i < 5000 && !atomic_load(&race.inside); i++)
		usleep(1000);
	ASSERT_EQ(1, atomic_load(&race.inside))
		TH_LOG("the reader never took the SRX's completion");
	ASSERT_EQ(0, pthread_create(&closer, NULL, race_closer, self->srx));
	self->srx = NULL;
	pthread_join(reader, NULL);
	pthread_join(closer, &cret);
	EXPECT_EQ(0, atomic_load(&race.closed_inside))
		TH_LOG("fi_close(srx) returned while a reader used its completion");
	EXPECT_EQ(0, (intptr_t)cret);
	/* Taken before the close: reported, its data in place. */
	EXPECT_EQ(1, r.ret);
	EXPECT_EQ(v, dev_rx);
	EXPECT_EQ(0, fi_close(&mr->fid));
}

/* A scalable endpoint takes no SRX (fi_scalable_ep_bind: an AV only). */
TEST_F(srx, scalable_endpoint_takes_no_srx)
{
	struct fi_info *info = fi_dupinfo(self->info);
	struct fid_ep *sep;

	if (!prov_feature(self->domain, SWNIC_FEAT_PORT_BLOCK)) {
		fi_freeinfo(info);
		SKIP(return, "no scalable endpoints");
	}
	info->ep_attr->tx_ctx_cnt = 2;
	info->ep_attr->rx_ctx_cnt = 2;
	ASSERT_EQ(0, fi_scalable_ep(self->domain, info, &sep, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_scalable_ep_bind(sep, &self->srx->fid, 0));
	EXPECT_EQ(0, fi_close(&sep->fid));
	fi_freeinfo(info);
}

TEST_HARNESS_MAIN
