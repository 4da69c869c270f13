// SPDX-License-Identifier: GPL-2.0
/*
 * The provider's error paths through the public libfabric API: full
 * transmit and receive queues and a full receive CQ under FI_RM_ENABLED
 * (-FI_EAGAIN or waiting, never an overrun or a lost completion), RMA
 * with bad keys, out of bounds and without the access right (each an
 * error completion with its exact err, the target untouched), and a peer
 * killed mid-stream (FI_ECONNREFUSED, nothing left in the module).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <rdma/fi_rma.h>

#include "kselftest_harness.h"
#include "prov_util.h"
#include "gauge_util.h"

#define TX_SIZE		8
#define RX_SIZE		8
#define MSG_LEN		1024		/* past inject_size: sent from memory */

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
};

FIXTURE(robust)
{
	struct gauges start;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct side a, b;
};

static struct fi_info *robust_hints(void)
{
	struct fi_info *hints = prov_hints();

	if (!hints)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	hints->tx_attr->size = TX_SIZE;
	hints->rx_attr->size = RX_SIZE;
	return hints;
}

FIXTURE_SETUP(robust)
{
	struct fi_info *hints;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, gauges_read(&self->start));
	hints = robust_hints();
	ASSERT_NE(NULL, hints);
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	fi_freeinfo(hints);
	ASSERT_EQ(FI_RM_ENABLED, self->info->domain_attr->resource_mgmt);
	ASSERT_EQ(TX_SIZE, self->info->tx_attr->size);
	ASSERT_EQ(RX_SIZE, self->info->rx_attr->size);
	ASSERT_EQ(0, fi_fabric(self->info->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &self->domain, NULL));
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

FIXTURE_TEARDOWN(robust)
{
	side_close(&self->a);
	side_close(&self->b);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
}

static int side_open(struct fid_domain *domain, struct fi_info *info,
		     struct side *s, size_t cq_size)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA, .size = cq_size,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	return fi_endpoint(domain, info, &s->ep, NULL) ||
	       fi_cq_open(domain, &cq_attr, &s->cq, NULL) ||
	       fi_av_open(domain, &av_attr, &s->av, NULL) ||
	       fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV) ||
	       fi_ep_bind(s->ep, &s->av->fid, 0) || fi_enable(s->ep);
}

/* Insert the endpoint named @name into @from's AV as its peer. */
static int add_peer(struct side *from, const void *name)
{
	return fi_av_insert(from->av, name, 1, &from->peer, 0, NULL) == 1 ?
	       0 : -1;
}

static int connect_to(struct side *from, struct side *to)
{
	char name[64];
	size_t len = sizeof(name);

	if (fi_getname(&to->ep->fid, name, &len))
		return -1;
	return add_peer(from, name);
}

/* Both sides in this fixture's domain, each the other's peer. */
static void open_pair(struct __test_metadata *_metadata,
		      FIXTURE_DATA(robust) *self, size_t a_cq, size_t b_cq)
{
	ASSERT_EQ(0, side_open(self->domain, self->info, &self->a, a_cq));
	ASSERT_EQ(0, side_open(self->domain, self->info, &self->b, b_cq));
	ASSERT_EQ(0, connect_to(&self->a, &self->b));
	ASSERT_EQ(0, connect_to(&self->b, &self->a));
}

/* One completion or error (waiting up to ~10 s): 1, or -FI_EAVAIL. */
static ssize_t cq_get(struct fid_cq *cq, struct fi_cq_data_entry *e)
{
	for (int i = 0; i < 10000; i++) {
		ssize_t n = fi_cq_read(cq, e, 1);

		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

/* The error completion that must come next on @cq. */
static int cq_get_err(struct fid_cq *cq, struct fi_cq_err_entry *err)
{
	struct fi_cq_data_entry e;
	ssize_t n = cq_get(cq, &e);

	if (n != -FI_EAVAIL)
		return -1;
	memset(err, 0, sizeof(*err));
	return fi_cq_readerr(cq, err, 0) == 1 ? 0 : -1;
}

static void fill(void *p, size_t len, unsigned int i)
{
	uint8_t *b = p;

	for (size_t k = 0; k < len; k++)
		b[k] = (uint8_t)(i * 29 + k * 3 + 7);
}

static bool has_pattern(const void *p, size_t len, unsigned int i)
{
	const uint8_t *b = p;

	for (size_t k = 0; k < len; k++)
		if (b[k] != (uint8_t)(i * 29 + k * 3 + 7))
			return false;
	return true;
}

/* ---- full queues -------------------------------------------------------- */

/* fi_endpoint(3)'s size_left calls: deprecated, still offered and used. */
SWNIC_DEPRECATED_BEGIN
static ssize_t tx_left(struct fid_ep *ep)
{
	return fi_tx_size_left(ep);
}

static ssize_t rx_left(struct fid_ep *ep)
{
	return fi_rx_size_left(ep);
}
SWNIC_DEPRECATED_END

#define MAX_POSTS	(16 * TX_SIZE)
#define SMALL_CQ	4

/*
 * Sends posted without reading the CQ fill the transmit side: at least
 * tx_attr->size are taken, then -FI_EAGAIN (no overrun), and
 * fi_tx_size_left (fi_endpoint(3): a lower bound of the posts that will
 * not fail with -FI_EAGAIN) is 0 then; each taken send
 * completes exactly once, and after the CQ is read posting works again.
 */
TEST_F(robust, tx_full_eagain_then_each_completion_once)
{
	static uint8_t msg[MAX_POSTS + 1][MSG_LEN], rbuf[MSG_LEN];
	struct fi_context ctx[MAX_POSTS + 1];
	bool seen[MAX_POSTS + 1] = {};
	struct fi_cq_data_entry e;
	ssize_t ret = 0;
	int n, i;

	open_pair(_metadata, self, 4 * MAX_POSTS, 4 * MAX_POSTS);
	/* fi_tx_size_left: a lower bound of the posts taken, 0 when full. */
	ASSERT_LE(TX_SIZE, tx_left(self->a.ep));
	for (n = 0; n < MAX_POSTS; n++) {
		fill(msg[n], MSG_LEN, n);
		ret = fi_send(self->a.ep, msg[n], MSG_LEN, NULL, self->a.peer,
			      &ctx[n]);
		if (ret)
			break;
	}
	ASSERT_EQ(-FI_EAGAIN, ret);
	ASSERT_LE(TX_SIZE, n);
	TH_LOG("%d sends taken with tx size %d", n, TX_SIZE);
	EXPECT_EQ(0, tx_left(self->a.ep));

	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, cq_get(self->a.cq, &e));
		ASSERT_EQ(FI_SEND | FI_MSG, e.flags);
		ASSERT_LE(&ctx[0], (struct fi_context *)e.op_context);
		ASSERT_GT(&ctx[n], (struct fi_context *)e.op_context);
		ASSERT_FALSE(seen[(struct fi_context *)e.op_context - ctx]);
		seen[(struct fi_context *)e.op_context - ctx] = true;
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));

	/* Room again. */
	fill(msg[n], MSG_LEN, n);
	ASSERT_EQ(0, fi_send(self->a.ep, msg[n], MSG_LEN, NULL, self->a.peer,
			     &ctx[n]));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&ctx[n], e.op_context);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));

	/* Every message arrived once, in order. */
	for (i = 0; i <= n; i++) {
		memset(rbuf, 0, sizeof(rbuf));
		ASSERT_EQ(0, fi_recv(self->b.ep, rbuf, sizeof(rbuf), NULL,
				     FI_ADDR_UNSPEC, &ctx[0]));
		ASSERT_EQ(1, cq_get(self->b.cq, &e));
		ASSERT_EQ(FI_RECV | FI_MSG, e.flags);
		ASSERT_EQ(MSG_LEN, e.len);
		ASSERT_TRUE(has_pattern(rbuf, MSG_LEN, i));
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
}

/*
 * The sender's own CQ is smaller than its queue and not read: the kernel
 * stops taking sends when the CQ is full, the queue fills, posts get
 * -FI_EAGAIN (and fi_tx_size_left is 0, though the endpoint has ops
 * left); reading the CQ brings every completion exactly once, in order,
 * and nothing is lost.
 */
TEST_F(robust, small_tx_cq_never_overruns)
{
	static uint8_t msg[MAX_POSTS][MSG_LEN], rbuf[MSG_LEN];
	struct fi_context ctx[MAX_POSTS], rctx;
	struct fi_cq_data_entry e;
	ssize_t ret = 0;
	int n, i;

	open_pair(_metadata, self, SMALL_CQ, 4 * MAX_POSTS);
	for (n = 0; n < MAX_POSTS; n++) {
		fill(msg[n], MSG_LEN, n);
		ret = fi_send(self->a.ep, msg[n], MSG_LEN, NULL, self->a.peer,
			      &ctx[n]);
		if (ret)
			break;
	}
	ASSERT_EQ(-FI_EAGAIN, ret);
	ASSERT_LE(TX_SIZE, n);
	TH_LOG("%d sends taken with a %d-entry CQ and tx size %d", n,
	       SMALL_CQ, TX_SIZE);
	/* The SQ is full (ops are left): no post would be taken. */
	EXPECT_EQ(0, tx_left(self->a.ep));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, cq_get(self->a.cq, &e));
		ASSERT_EQ(&ctx[i], e.op_context);
		ASSERT_EQ(FI_SEND | FI_MSG, e.flags);
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, fi_recv(self->b.ep, rbuf, sizeof(rbuf), NULL,
				     FI_ADDR_UNSPEC, &rctx));
		ASSERT_EQ(1, cq_get(self->b.cq, &e));
		ASSERT_TRUE(has_pattern(rbuf, MSG_LEN, i));
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
}

/*
 * An endpoint with a receive CQ only and a send counter: the kernel puts
 * its sends' completions on the receive CQ (it needs one for each
 * direction), which only counts them. Sends the kernel left in the SQ
 * while that CQ was full (FI_RM_ENABLED) must be retried from there too:
 * a counter that waits for all of them gets them all, none is reported.
 */
TEST_F(robust, recv_only_cq_send_counter_takes_every_send)
{
	static uint8_t msg[2 * TX_SIZE][MSG_LEN], rbuf[2 * TX_SIZE][MSG_LEN];
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA, .size = TX_SIZE,
	};
	struct fi_cntr_attr cntr_attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_info *ainfo = fi_dupinfo(self->info);
	struct fi_info *binfo = fi_dupinfo(self->info);
	struct fi_context ctx[2 * TX_SIZE], rctx[2 * TX_SIZE];
	struct fi_cq_data_entry e;
	struct fid_cntr *cntr;
	int i;

	ASSERT_NE(NULL, ainfo);
	ASSERT_NE(NULL, binfo);
	ainfo->tx_attr->size = 2 * TX_SIZE;
	binfo->rx_attr->size = 2 * TX_SIZE;
	ASSERT_EQ(0, fi_cntr_open(self->domain, &cntr_attr, &cntr, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, ainfo, &self->a.ep, NULL));
	ASSERT_EQ(0, fi_cq_open(self->domain, &cq_attr, &self->a.cq, NULL));
	ASSERT_EQ(0, fi_av_open(self->domain,
				&(struct fi_av_attr){ .type = FI_AV_TABLE },
				&self->a.av, NULL));
	ASSERT_EQ(0, fi_ep_bind(self->a.ep, &self->a.cq->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(self->a.ep, &cntr->fid, FI_SEND));
	ASSERT_EQ(0, fi_ep_bind(self->a.ep, &self->a.av->fid, 0));
	ASSERT_EQ(0, fi_enable(self->a.ep));
	ASSERT_EQ(0, side_open(self->domain, binfo, &self->b, 4 * MAX_POSTS));
	ASSERT_EQ(0, connect_to(&self->a, &self->b));
	for (i = 0; i < 2 * TX_SIZE; i++)
		ASSERT_EQ(0, fi_recv(self->b.ep, rbuf[i], MSG_LEN, NULL,
				     FI_ADDR_UNSPEC, &rctx[i]));
	for (i = 0; i < 2 * TX_SIZE; i++) {
		fill(msg[i], MSG_LEN, i);
		ASSERT_EQ(0, fi_send(self->a.ep, msg[i], MSG_LEN, NULL,
				     self->a.peer, &ctx[i]));
	}
	EXPECT_EQ(0, fi_cntr_wait(cntr, 2 * TX_SIZE, 2000));
	EXPECT_EQ(2 * TX_SIZE, fi_cntr_read(cntr));
	EXPECT_EQ(0, fi_cntr_readerr(cntr));
	for (i = 0; i < 2 * TX_SIZE; i++) {
		ASSERT_EQ(1, cq_get(self->b.cq, &e));
		ASSERT_EQ(&rctx[i], e.op_context);
		ASSERT_TRUE(has_pattern(rbuf[i], MSG_LEN, i));
	}
	/* Sends have no CQ: none is reported on the receive CQ. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	side_close(&self->a);
	fi_close(&cntr->fid);
	fi_freeinfo(ainfo);
	fi_freeinfo(binfo);
}

/*
 * The same for receives: posted until -FI_EAGAIN (fi_rx_size_left 0
 * then), each completes once.
 */
TEST_F(robust, rx_full_eagain_then_each_completion_once)
{
	static uint8_t rbuf[MAX_POSTS + 1][MSG_LEN], msg[MSG_LEN];
	struct fi_context ctx[MAX_POSTS + 1], sctx;
	bool seen[MAX_POSTS + 1] = {};
	struct fi_cq_data_entry e;
	ssize_t ret = 0;
	int n, i;

	open_pair(_metadata, self, 4 * MAX_POSTS, 4 * MAX_POSTS);
	ASSERT_LE(RX_SIZE, rx_left(self->b.ep));
	for (n = 0; n < MAX_POSTS; n++) {
		ret = fi_recv(self->b.ep, rbuf[n], MSG_LEN, NULL,
			      FI_ADDR_UNSPEC, &ctx[n]);
		if (ret)
			break;
	}
	ASSERT_EQ(-FI_EAGAIN, ret);
	ASSERT_LE(RX_SIZE, n);
	TH_LOG("%d receives taken with rx size %d", n, RX_SIZE);
	EXPECT_EQ(0, rx_left(self->b.ep));

	for (i = 0; i < n; i++) {
		fill(msg, MSG_LEN, i);
		ASSERT_EQ(0, fi_send(self->a.ep, msg, MSG_LEN, NULL,
				     self->a.peer, &sctx));
		ASSERT_EQ(1, cq_get(self->a.cq, &e));
		ASSERT_EQ(&sctx, e.op_context);
	}
	for (i = 0; i < n; i++) {
		int k;

		ASSERT_EQ(1, cq_get(self->b.cq, &e));
		ASSERT_EQ(FI_RECV | FI_MSG, e.flags);
		k = (struct fi_context *)e.op_context - ctx;
		ASSERT_LE(0, k);
		ASSERT_GT(n, k);
		ASSERT_FALSE(seen[k]);
		seen[k] = true;
		/* Receives are matched in the order they were posted. */
		ASSERT_EQ(i, k);
		ASSERT_TRUE(has_pattern(rbuf[k], MSG_LEN, i));
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));

	/* Room again. */
	ASSERT_EQ(0, fi_recv(self->b.ep, rbuf[n], MSG_LEN, NULL,
			     FI_ADDR_UNSPEC, &ctx[n]));
	fill(msg, MSG_LEN, n);
	ASSERT_EQ(0, fi_send(self->a.ep, msg, MSG_LEN, NULL, self->a.peer,
			     &sctx));
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_EQ(&ctx[n], e.op_context);
	EXPECT_TRUE(has_pattern(rbuf[n], MSG_LEN, n));
}

#define WAITERS		12		/* sends into a receiver's 4-entry CQ */

/*
 * The receiver's CQ is small and not read: the sender's operations wait
 * (queued, FI_RM_ENABLED), none fails and none is lost; as the receiver
 * reads, the rest go through, each completing exactly once on both sides.
 */
TEST_F(robust, full_receive_cq_makes_sends_wait)
{
	static uint8_t rbuf[WAITERS][MSG_LEN], msg[WAITERS][MSG_LEN];
	struct fi_context rctx[WAITERS], sctx[WAITERS];
	bool sent[WAITERS] = {};
	struct fi_cq_data_entry e;
	int received = 0, completed = 0;

	open_pair(_metadata, self, 64, SMALL_CQ);
	for (int i = 0; i < WAITERS; i++)
		ASSERT_EQ(0, fi_recv(self->b.ep, rbuf[i], MSG_LEN, NULL,
				     FI_ADDR_UNSPEC, &rctx[i]));
	for (int i = 0; i < WAITERS; i++) {
		fill(msg[i], MSG_LEN, i);
		ASSERT_EQ(0, fi_send(self->a.ep, msg[i], MSG_LEN, NULL,
				     self->a.peer, &sctx[i]));
	}
	/* Only what fits in B's CQ went; the rest waits, without error. */
	for (int i = 0; i < SMALL_CQ; i++) {
		ASSERT_EQ(1, cq_get(self->a.cq, &e));
		ASSERT_EQ(&sctx[i], e.op_context);
		sent[i] = true;
		completed++;
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));

	/* B reads; each read lets A's waiting sends through. */
	for (int round = 0; round < 1000 && received < WAITERS; round++) {
		ssize_t n;

		while ((n = fi_cq_read(self->b.cq, &e, 1)) == 1) {
			ASSERT_EQ(&rctx[received], e.op_context);
			ASSERT_EQ(MSG_LEN, e.len);
			ASSERT_TRUE(has_pattern(rbuf[received], MSG_LEN,
						received));
			received++;
		}
		ASSERT_EQ(-FI_EAGAIN, n);
		while ((n = fi_cq_read(self->a.cq, &e, 1)) == 1) {
			int k = (struct fi_context *)e.op_context - sctx;

			ASSERT_LE(0, k);
			ASSERT_GT(WAITERS, k);
			ASSERT_FALSE(sent[k]);
			sent[k] = true;
			completed++;
		}
		ASSERT_EQ(-FI_EAGAIN, n);
	}
	EXPECT_EQ(WAITERS, received);
	EXPECT_EQ(WAITERS, completed);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->b.cq, &e, 1));
}

/* A fabric and a domain of a test's own, with the robust hints. */
struct own_domain {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
};

/*
 * @engine: FI_SWNIC_DOORBELL_ENGINE, read once per process (each harness
 * test runs in one of its own).
 */
static void own_domain_open(struct __test_metadata *_metadata,
			    const char *engine, struct own_domain *d)
{
	struct fi_info *hints;

	ASSERT_EQ(0, setenv("FI_SWNIC_DOORBELL_ENGINE", engine, 1));
	hints = robust_hints();
	ASSERT_NE(NULL, hints);
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &d->info));
	fi_freeinfo(hints);
	ASSERT_EQ(0, fi_fabric(d->info->fabric_attr, &d->fab, NULL));
	ASSERT_EQ(0, fi_domain(d->fab, d->info, &d->dom, NULL));
}

static void own_domain_close(struct own_domain *d)
{
	fi_close(&d->dom->fid);
	fi_close(&d->fab->fid);
	fi_freeinfo(d->info);
}

/*
 * A sleeper's endpoints in @d: A with an FI_WAIT_FD CQ for both
 * directions (its fd in *@fd) and @cntr, if any, counting its sends; B,
 * A's peer, whose CQ holds SMALL_CQ completions.
 */
static void sleeper_open(struct __test_metadata *_metadata,
			 struct own_domain *d, struct fid_cntr *cntr,
			 struct side *a, struct side *b, int *fd)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA, .size = 64,
		.wait_obj = FI_WAIT_FD,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	ASSERT_EQ(0, fi_endpoint(d->dom, d->info, &a->ep, NULL));
	ASSERT_EQ(0, fi_cq_open(d->dom, &cq_attr, &a->cq, NULL));
	ASSERT_EQ(0, fi_av_open(d->dom, &av_attr, &a->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(a->ep, &a->cq->fid, FI_TRANSMIT | FI_RECV));
	if (cntr)
		ASSERT_EQ(0, fi_ep_bind(a->ep, &cntr->fid, FI_SEND));
	ASSERT_EQ(0, fi_ep_bind(a->ep, &a->av->fid, 0));
	ASSERT_EQ(0, fi_enable(a->ep));
	ASSERT_EQ(0, side_open(d->dom, d->info, b, SMALL_CQ));
	ASSERT_EQ(0, connect_to(a, b));
	ASSERT_EQ(0, fi_control(&a->cq->fid, FI_GETWAIT, fd));
}

/*
 * An application that sleeps on its CQ's or counter's fd while a send
 * waits in its SQ: B's CQ is full, so the kernel left A's last send at the
 * SQ head (FI_RM_ENABLED, the default), and fi_trywait lets A sleep (there
 * is nothing to read). B then reads its CQ, which tells A nothing; A does
 * nothing but sleep. The kernel tries the send again by itself (an RNR
 * retry, engine.c), so its completion wakes A's fds. Before, nothing
 * tried it: A slept for good. @engine: FI_SWNIC_DOORBELL_ENGINE, read once
 * per process (each harness test runs in one of its own).
 */
static void sleeper_woken_when_target_has_room(struct __test_metadata *_metadata,
					       const char *engine, bool in_set)
{
	static uint8_t msg[SMALL_CQ + 1][MSG_LEN], rbuf[SMALL_CQ + 1][MSG_LEN];
	struct fi_cntr_attr cntr_attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_FD,
	};
	struct fi_context sctx[SMALL_CQ + 1], rctx[SMALL_CQ + 1];
	struct side a = {}, b = {};
	struct fi_cq_data_entry e;
	struct own_domain d;
	struct fi_wait_attr wait_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fid_wait *set = NULL;
	struct fid_cntr *cntr;
	struct fid *cqf, *cntrf;
	struct pollfd p[2];
	int i, ret;

	own_domain_open(_metadata, engine, &d);
	if (in_set) {
		SWNIC_DEPRECATED_BEGIN
		ASSERT_EQ(0, fi_wait_open(d.fab, &wait_attr, &set));
		SWNIC_DEPRECATED_END
		cntr_attr.wait_obj = FI_WAIT_SET;
		cntr_attr.wait_set = set;
	}
	ASSERT_EQ(0, fi_cntr_open(d.dom, &cntr_attr, &cntr, NULL));
	sleeper_open(_metadata, &d, cntr, &a, &b, &p[0].fd);
	if (!in_set)
		ASSERT_EQ(0, fi_control(&cntr->fid, FI_GETWAIT, &p[1].fd));
	cqf = &a.cq->fid;
	cntrf = in_set ? &set->fid : &cntr->fid;

	for (i = 0; i < SMALL_CQ + 1; i++)
		ASSERT_EQ(0, fi_recv(b.ep, rbuf[i], MSG_LEN, NULL,
				     FI_ADDR_UNSPEC, &rctx[i]));
	for (i = 0; i < SMALL_CQ + 1; i++) {
		fill(msg[i], MSG_LEN, i);
		ASSERT_EQ(0, fi_send(a.ep, msg[i], MSG_LEN, NULL, a.peer,
				     &sctx[i]));
	}
	/* What fits in B's CQ went; the last send waits in A's SQ. */
	for (i = 0; i < SMALL_CQ; i++) {
		ASSERT_EQ(1, cq_get(a.cq, &e));
		ASSERT_EQ(&sctx[i], e.op_context);
	}
	usleep(200 * 1000);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(a.cq, &e, 1));
	EXPECT_EQ(SMALL_CQ, fi_cntr_read(cntr));

	/* Nothing to read: both may sleep (the counter's, once it saw). */
	EXPECT_EQ(0, fi_trywait(d.fab, &cqf, 1));
	ret = fi_trywait(d.fab, &cntrf, 1);
	if (ret)
		ret = fi_trywait(d.fab, &cntrf, 1);
	EXPECT_EQ(0, ret);
	/* Whatever those calls set going (an engine's rounds) is over. */
	usleep(300 * 1000);

	/* B makes room; A, asleep, is told nothing of it. */
	for (i = 0; i < SMALL_CQ; i++) {
		ASSERT_EQ(1, cq_get(b.cq, &e));
		ASSERT_EQ(&rctx[i], e.op_context);
	}
	/* In a wait set, the counter its only member: fi_wait sleeps. */
	if (in_set) {
		SWNIC_DEPRECATED_BEGIN
		EXPECT_EQ(0, fi_wait(set, 5000)) {
			TH_LOG("%s doorbell: the wait set slept on a send that waits",
			       *engine == '1' ? "engine" : "syscall");
		}
		SWNIC_DEPRECATED_END
	}
	for (i = 0; i < (in_set ? 1 : 2); i++) {
		p[i].events = POLLIN;
		p[i].revents = 0;
		EXPECT_EQ(1, poll(&p[i], 1, 5000)) {
			TH_LOG("%s doorbell: A's %s fd slept on a send that waits",
			       *engine == '1' ? "engine" : "syscall",
			       i ? "counter's" : "CQ's");
		}
	}
	ASSERT_EQ(1, fi_cq_read(a.cq, &e, 1));
	EXPECT_EQ(&sctx[SMALL_CQ], e.op_context);
	EXPECT_EQ(SMALL_CQ + 1, fi_cntr_read(cntr));
	ASSERT_EQ(1, cq_get(b.cq, &e));
	EXPECT_EQ(&rctx[SMALL_CQ], e.op_context);
	EXPECT_TRUE(has_pattern(rbuf[SMALL_CQ], MSG_LEN, SMALL_CQ));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(a.cq, &e, 1));
	side_close(&a);
	side_close(&b);
	fi_close(&cntr->fid);
	if (set)
		fi_close(&set->fid);
	own_domain_close(&d);
}

TEST(sleeper_woken_when_target_has_room_syscall)
{
	PROV_REQUIRE_DEVICE();
	sleeper_woken_when_target_has_room(_metadata, "0", false);
}

TEST(sleeper_woken_when_target_has_room_engine)
{
	PROV_REQUIRE_DEVICE();
	sleeper_woken_when_target_has_room(_metadata, "1", false);
}

/*
 * The same, the counter the only member of a wait set (fi_wait). Unlike
 * the two above, this passed without the kernel's retry as well: the
 * set's wait looked again at short intervals. It stays, so that the
 * set's wait keeps ending once the target has room.
 */
TEST(sleeper_in_a_wait_set_woken_when_target_has_room)
{
	PROV_REQUIRE_DEVICE();
	sleeper_woken_when_target_has_room(_metadata, "0", true);
}

/*
 * The refused head is an inject (no completion), a send waits behind it,
 * and A sleeps on its CQ's fd. The kernel's retry sends the inject, which
 * wakes no one, so it must go on to the send, whose completion does.
 * Found by review of the retry, which ran the head only and stopped.
 */
TEST(sleeper_woken_for_a_send_behind_a_refused_inject)
{
	static uint8_t msg[SMALL_CQ + 2][MSG_LEN], rbuf[SMALL_CQ + 2][MSG_LEN];
	struct fi_context sctx[SMALL_CQ + 2], rctx[SMALL_CQ + 2];
	struct side a = {}, b = {};
	struct fi_cq_data_entry e;
	struct own_domain d;
	struct pollfd p = { .events = POLLIN };
	struct fid *cqf;
	int i;

	PROV_REQUIRE_DEVICE();
	own_domain_open(_metadata, "0", &d);
	ASSERT_LE(8, d.info->tx_attr->inject_size);
	sleeper_open(_metadata, &d, NULL, &a, &b, &p.fd);
	cqf = &a.cq->fid;

	for (i = 0; i < SMALL_CQ + 2; i++) {
		ASSERT_EQ(0, fi_recv(b.ep, rbuf[i], MSG_LEN, NULL,
				     FI_ADDR_UNSPEC, &rctx[i]));
		fill(msg[i], MSG_LEN, i);
	}
	for (i = 0; i < SMALL_CQ; i++)
		ASSERT_EQ(0, fi_send(a.ep, msg[i], MSG_LEN, NULL, a.peer,
				     &sctx[i]));
	/* B's CQ full: the inject is refused, the send waits behind it. */
	ASSERT_EQ(0, fi_inject(a.ep, msg[SMALL_CQ], 8, a.peer));
	ASSERT_EQ(0, fi_send(a.ep, msg[SMALL_CQ + 1], MSG_LEN, NULL, a.peer,
			     &sctx[SMALL_CQ + 1]));
	for (i = 0; i < SMALL_CQ; i++) {
		ASSERT_EQ(1, cq_get(a.cq, &e));
		ASSERT_EQ(&sctx[i], e.op_context);
	}
	usleep(200 * 1000);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(a.cq, &e, 1));
	EXPECT_EQ(0, fi_trywait(d.fab, &cqf, 1));
	usleep(300 * 1000);

	/* B makes room; A only sleeps on its CQ's fd. */
	for (i = 0; i < SMALL_CQ; i++) {
		ASSERT_EQ(1, cq_get(b.cq, &e));
		ASSERT_EQ(&rctx[i], e.op_context);
	}
	EXPECT_EQ(1, poll(&p, 1, 5000))
		TH_LOG("slept on a send behind an inject that went");
	ASSERT_EQ(1, fi_cq_read(a.cq, &e, 1));
	EXPECT_EQ(&sctx[SMALL_CQ + 1], e.op_context);
	for (i = SMALL_CQ; i < SMALL_CQ + 2; i++) {
		ASSERT_EQ(1, cq_get(b.cq, &e));
		EXPECT_EQ(&rctx[i], e.op_context);
		EXPECT_TRUE(has_pattern(rbuf[i], i == SMALL_CQ ? 8 : MSG_LEN,
					i));
	}
	side_close(&a);
	side_close(&b);
	own_domain_close(&d);
}

/*
 * Sixteen messages wait buffered at A, whose receive CQ has eight entries;
 * then sixteen receives are posted. The kernel takes eight of them, the
 * CQ's size, and leaves the rest in the RQ (-EAGAIN): it looks at them
 * again only at a doorbell, which no post or message brings now - the
 * one cq.c's progress rings once it freed slots of the CQ the receives
 * complete on. @engine: FI_SWNIC_DOORBELL_ENGINE, read once per process
 * (each harness test runs in one of its own). @transmit_only: A's CQ is
 * bound for FI_TRANSMIT only, its receives counted: the kernel completes
 * them on that CQ (it needs one for each direction), which only counts
 * them; else the CQ reports each, in order.
 */
static void receive_buffered_behind_full_cq(struct __test_metadata *_metadata,
					    const char *engine,
					    bool transmit_only)
{
	static uint8_t msg[2 * RX_SIZE][MSG_LEN], rbuf[2 * RX_SIZE][MSG_LEN];
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA, .size = RX_SIZE,
	};
	struct fi_cntr_attr cntr_attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_context sctx, rctx[2 * RX_SIZE];
	struct side a = {}, b = {};
	struct fi_cq_data_entry e;
	struct own_domain d;
	struct fi_info *ainfo;
	struct fid_cntr *cntr;
	int i;

	own_domain_open(_metadata, engine, &d);
	ainfo = fi_dupinfo(d.info);
	ASSERT_NE(NULL, ainfo);
	ainfo->rx_attr->size = 2 * RX_SIZE;
	ASSERT_EQ(0, fi_cntr_open(d.dom, &cntr_attr, &cntr, NULL));
	ASSERT_EQ(0, fi_endpoint(d.dom, ainfo, &a.ep, NULL));
	ASSERT_EQ(0, fi_cq_open(d.dom, &cq_attr, &a.cq, NULL));
	ASSERT_EQ(0, fi_av_open(d.dom, &av_attr, &a.av, NULL));
	ASSERT_EQ(0, fi_ep_bind(a.ep, &a.cq->fid, transmit_only ?
				FI_TRANSMIT : FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(a.ep, &cntr->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(a.ep, &a.av->fid, 0));
	ASSERT_EQ(0, fi_enable(a.ep));
	ASSERT_EQ(0, side_open(d.dom, d.info, &b, 4 * MAX_POSTS));
	ASSERT_EQ(0, connect_to(&b, &a));

	/* Each buffered at A (transmit complete) before the next. */
	for (i = 0; i < 2 * RX_SIZE; i++) {
		fill(msg[i], MSG_LEN, i);
		ASSERT_EQ(0, fi_send(b.ep, msg[i], MSG_LEN, NULL, b.peer,
				     &sctx));
		ASSERT_EQ(1, cq_get(b.cq, &e));
		ASSERT_EQ(&sctx, e.op_context);
	}
	for (i = 0; i < 2 * RX_SIZE; i++)
		ASSERT_EQ(0, fi_recv(a.ep, rbuf[i], MSG_LEN, NULL,
				     FI_ADDR_UNSPEC, &rctx[i]));
	/* The kernel takes RX_SIZE of them and leaves the rest. */
	usleep(500 * 1000);
	if (transmit_only) {
		EXPECT_EQ(0, fi_cntr_wait(cntr, 2 * RX_SIZE, 2000));
	} else {
		for (i = 0; i < 2 * RX_SIZE; i++) {
			ASSERT_EQ(1, cq_get(a.cq, &e)) {
				TH_LOG("completion %d of %d", i, 2 * RX_SIZE);
			}
			EXPECT_EQ(&rctx[i], e.op_context);
			EXPECT_EQ(MSG_LEN, e.len);
		}
	}
	EXPECT_EQ(2 * RX_SIZE, fi_cntr_read(cntr));
	EXPECT_EQ(0, fi_cntr_readerr(cntr));
	for (i = 0; i < 2 * RX_SIZE; i++) {
		EXPECT_TRUE(has_pattern(rbuf[i], MSG_LEN, i)) {
			TH_LOG("receive %d", i);
		}
	}
	/* Each reported once, or (transmit only) none. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(a.cq, &e, 1));
	side_close(&a);
	side_close(&b);
	fi_close(&cntr->fid);
	fi_freeinfo(ainfo);
	own_domain_close(&d);
}

TEST(engine_transmit_only_cq_receives_every_buffered_message)
{
	PROV_REQUIRE_DEVICE();
	receive_buffered_behind_full_cq(_metadata, "1", true);
}

/*
 * SYSCALL doorbells (the default): each fi_recv rang while messages
 * waited, and the kernel left the receives it had no CQ room for; reading
 * the CQ, or waiting on the counter, must ring again for them.
 */
TEST(syscall_receives_every_buffered_message_behind_full_cq)
{
	PROV_REQUIRE_DEVICE();
	receive_buffered_behind_full_cq(_metadata, "0", false);
}

TEST(syscall_transmit_only_cq_receives_every_buffered_message)
{
	PROV_REQUIRE_DEVICE();
	receive_buffered_behind_full_cq(_metadata, "0", true);
}

/* ---- RMA errors --------------------------------------------------------- */

/*
 * The RMA address of @p in an MR starting at @base: a virtual address or
 * an offset, as the domain's mr_mode says (fi_mr(3) FI_MR_VIRT_ADDR).
 */
static uint64_t raddr(const struct fi_info *info, const void *base,
		      const void *p)
{
	if (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)p;
	return (uintptr_t)p - (uintptr_t)base;
}

/* Register @len bytes at @buf; the key is the provider's or @ukey. */
static int mr_reg(struct fid_domain *domain, const struct fi_info *info,
		  void *buf, size_t len, uint64_t access, uint64_t ukey,
		  struct fid_mr **mr)
{
	if (info->domain_attr->mr_mode & FI_MR_PROV_KEY)
		ukey = 0;
	return fi_mr_reg(domain, buf, len, access, 0, ukey, 0, mr, NULL);
}

#define TGT_LEN		8192

/* Post one RMA on a and return its error completion (err, prov_errno). */
static void rma_fails(struct __test_metadata *_metadata,
		      FIXTURE_DATA(robust) *self, bool write, void *buf,
		      size_t len, uint64_t addr, uint64_t key, int err)
{
	struct fi_cq_err_entry ce;
	struct fi_context ctx;

	if (write) {
		ASSERT_EQ(0, fi_write(self->a.ep, buf, len, NULL, self->a.peer,
				      addr, key, &ctx));
	} else {
		ASSERT_EQ(0, fi_read(self->a.ep, buf, len, NULL, self->a.peer,
				     addr, key, &ctx));
	}
	ASSERT_EQ(0, cq_get_err(self->a.cq, &ce));
	EXPECT_EQ(&ctx, ce.op_context);
	EXPECT_EQ(FI_RMA | (write ? FI_WRITE : FI_READ), ce.flags);
	EXPECT_EQ(err, ce.err) {
		TH_LOG("%s: %s (prov_errno %d)", write ? "write" : "read",
		       fi_strerror(ce.err), ce.prov_errno);
	}
}

/*
 * fi_write/fi_read with a wrong key, another domain's key, past the
 * region's end (or before its start), without the access right, and
 * after the MR is closed: each an error completion with its own err -
 * FI_ENOKEY for no such key (libfabric's, not the errno ENOKEY),
 * ERANGE for the bounds, FI_EACCES for the right - and the target's
 * memory (and the reader's buffer) unchanged.
 */
TEST_F(robust, rma_bad_key_bounds_access)
{
	static uint8_t tgt[TGT_LEN], ro[TGT_LEN], before[TGT_LEN];
	static uint8_t other[4096], local[TGT_LEN], lbefore[TGT_LEN];
	struct fi_cq_data_entry e;
	struct fid_domain *dom2;
	struct fid_mr *mr, *ro_mr, *wo_mr, *mr2, *closed;
	uint64_t key, ro_key, wo_key, key2, closed_key;
	const struct fi_info *info = self->info;
	uint64_t t = raddr(info, tgt, tgt);

	open_pair(_metadata, self, 64, 64);
	fill(tgt, TGT_LEN, 1);
	fill(ro, TGT_LEN, 2);
	fill(local, TGT_LEN, 3);
	memcpy(before, tgt, TGT_LEN);
	memcpy(lbefore, local, TGT_LEN);
	ASSERT_EQ(0, mr_reg(self->domain, info, tgt, TGT_LEN,
			    FI_REMOTE_READ | FI_REMOTE_WRITE, 0x7100, &mr));
	ASSERT_EQ(0, mr_reg(self->domain, info, ro, TGT_LEN, FI_REMOTE_READ,
			    0x7101, &ro_mr));
	ASSERT_EQ(0, mr_reg(self->domain, info, tgt, TGT_LEN, FI_REMOTE_WRITE,
			    0x7102, &wo_mr));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &dom2, NULL));
	ASSERT_EQ(0, mr_reg(dom2, info, other, sizeof(other),
			    FI_REMOTE_READ | FI_REMOTE_WRITE, 0x7103, &mr2));
	key = fi_mr_key(mr);
	ro_key = fi_mr_key(ro_mr);
	wo_key = fi_mr_key(wo_mr);
	key2 = fi_mr_key(mr2);
	ASSERT_NE(key, key2);

	/* No MR with that key at the target. */
	rma_fails(_metadata, self, true, local, 64, t, key ^ 0x5a5a0000,
		  FI_ENOKEY);
	rma_fails(_metadata, self, false, local, 64, t, key ^ 0x5a5a0000,
		  FI_ENOKEY);
	/* The key of an MR of another domain. */
	rma_fails(_metadata, self, true, local, 64, raddr(info, other, other),
		  key2, FI_ENOKEY);
	rma_fails(_metadata, self, true, local, 64, t, key2, FI_ENOKEY);
	/* Past the end, across it, and before the start. */
	rma_fails(_metadata, self, true, local, 64, t + TGT_LEN, key, ERANGE);
	rma_fails(_metadata, self, true, local, 64, t + TGT_LEN - 32, key,
		  ERANGE);
	rma_fails(_metadata, self, false, local, 64, t + TGT_LEN - 32, key,
		  ERANGE);
	rma_fails(_metadata, self, true, local, 64, t - 64, key, ERANGE);
	rma_fails(_metadata, self, true, local, TGT_LEN, t + 64, key, ERANGE);
	/* Without FI_REMOTE_WRITE, and without FI_REMOTE_READ. */
	rma_fails(_metadata, self, true, local, 64, raddr(info, ro, ro), ro_key,
		  FI_EACCES);
	rma_fails(_metadata, self, false, local, 64, t, wo_key, FI_EACCES);
	/* A closed MR: its key is gone. */
	ASSERT_EQ(0, mr_reg(self->domain, info, tgt, TGT_LEN, FI_REMOTE_WRITE,
			    0x7104, &closed));
	closed_key = fi_mr_key(closed);
	ASSERT_EQ(0, fi_close(&closed->fid));
	rma_fails(_metadata, self, true, local, 64, t, closed_key, FI_ENOKEY);

	EXPECT_EQ(0, memcmp(before, tgt, TGT_LEN));
	EXPECT_TRUE(has_pattern(ro, TGT_LEN, 2));
	EXPECT_EQ(0, memcmp(lbefore, local, TGT_LEN));
	for (size_t i = 0; i < sizeof(other); i++)
		ASSERT_EQ(0, other[i]);

	/* The good key still works. */
	ASSERT_EQ(0, fi_write(self->a.ep, local, 64, NULL, self->a.peer,
			      t + 64, key, NULL));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(0, memcmp(tgt + 64, local, 64));
	fi_close(&mr->fid);
	fi_close(&ro_mr->fid);
	fi_close(&wo_mr->fid);
	fi_close(&mr2->fid);
	fi_close(&dom2->fid);
}

/*
 * The target munmaps its MR's memory while the initiator keeps writing:
 * from the first failure on every write fails with EKEYREVOKED (an errno
 * libfabric has no FI_ name for), and the new memory at that address
 * stays untouched.
 */
TEST_F(robust, rma_after_munmap_is_revoked)
{
	static uint8_t local[4096];
	struct fid_mr *mr;
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry ce;
	uint8_t *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *again;
	uint64_t key;

	ASSERT_NE(MAP_FAILED, p);
	open_pair(_metadata, self, 64, 64);
	memset(p, 0, 4 * 4096);
	memset(local, 0xcc, sizeof(local));
	ASSERT_EQ(0, mr_reg(self->domain, self->info, p, 4 * 4096,
			    FI_REMOTE_WRITE, 0x7200, &mr));
	key = fi_mr_key(mr);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, fi_write(self->a.ep, local, sizeof(local), NULL,
				      self->a.peer,
				      raddr(self->info, p, p + i * 4096), key,
				      NULL));
		ASSERT_EQ(1, cq_get(self->a.cq, &e));
	}
	ASSERT_EQ(0xcc, p[3 * 4096]);
	ASSERT_EQ(0, munmap(p, 4 * 4096));
	again = mmap(p, 4 * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(p, again);
	for (int i = 0; i < 8; i++) {
		ASSERT_EQ(0, fi_write(self->a.ep, local, sizeof(local), NULL,
				      self->a.peer,
				      raddr(self->info, p, p + (i % 4) * 4096),
				      key, NULL));
		ASSERT_EQ(0, cq_get_err(self->a.cq, &ce));
		EXPECT_EQ(EKEYREVOKED, ce.err);
		EXPECT_EQ(EKEYREVOKED, ce.prov_errno);
	}
	for (int i = 0; i < 4 * 4096; i++)
		ASSERT_EQ(0, again[i]);
	fi_close(&mr->fid);
	munmap(again, 4 * 4096);
}

/* ---- a peer killed mid-stream ------------------------------------------- */

#define KP_RECVS	2
#define KP_UNEXP	4

/* B: a fresh provider instance; takes KP_RECVS messages, then waits. */
static void kp_receiver(int to_a, int from_a)
{
	static uint8_t buf[KP_RECVS][MSG_LEN];
	struct fi_info *hints = robust_hints(), *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct side b = {};
	struct fi_cq_data_entry e;
	char name[64], go;
	size_t len = sizeof(name);

	if (prov_getinfo(NULL, NULL, 0, hints, &info) ||
	    fi_fabric(info->fabric_attr, &fab, NULL) ||
	    fi_domain(fab, info, &dom, NULL) || side_open(dom, info, &b, 64) ||
	    fi_getname(&b.ep->fid, name, &len))
		_exit(2);
	for (int i = 0; i < KP_RECVS; i++)
		if (fi_recv(b.ep, buf[i], MSG_LEN, NULL, FI_ADDR_UNSPEC, NULL))
			_exit(3);
	if (write(to_a, name, len) != (ssize_t)len)
		_exit(4);
	for (int i = 0; i < KP_RECVS; i++)
		if (cq_get(b.cq, &e) != 1 || !has_pattern(buf[i], MSG_LEN, i))
			_exit(5);
	if (write(to_a, "r", 1) != 1)
		_exit(6);
	/* Killed in here, A's later messages buffered unexpected. */
	if (read(from_a, &go, 1) < 0)
		_exit(7);
	_exit(8);
}

/*
 * B is killed while receiving from A: A's next send completes with an
 * error completion, err FI_ECONNREFUSED; A goes on talking to C; once
 * all is closed the module holds nothing more than before.
 */
TEST_F(robust, killed_peer_is_refused)
{
	static uint8_t msg[KP_RECVS + KP_UNEXP][MSG_LEN], cbuf[MSG_LEN];
	struct fi_context ctx[KP_RECVS + KP_UNEXP + 1], cctx;
	int to_a[2], from_a[2], status;
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry ce;
	struct gauges g;
	char name[64], cname[64], r;
	size_t clen = sizeof(cname);
	fi_addr_t c_addr;
	ssize_t len;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_a));
	ASSERT_EQ(0, pipe(from_a));
	/* B forks before A has anything open. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_a[0]);
		close(from_a[1]);
		kp_receiver(to_a[1], from_a[0]);
	}
	close(to_a[1]);
	close(from_a[0]);
	/* A and C in this process. */
	open_pair(_metadata, self, 64, 64);
	len = read(to_a[0], name, sizeof(name));
	ASSERT_LT(0, len);
	ASSERT_EQ(0, add_peer(&self->a, name));	/* replaces C as a's peer */

	for (int i = 0; i < KP_RECVS + KP_UNEXP; i++) {
		fill(msg[i], MSG_LEN, i);
		ASSERT_EQ(0, fi_send(self->a.ep, msg[i], MSG_LEN, NULL,
				     self->a.peer, &ctx[i]));
		ASSERT_EQ(1, cq_get(self->a.cq, &e));
		ASSERT_EQ(&ctx[i], e.op_context);
	}
	ASSERT_EQ(1, read(to_a[0], &r, 1));
	ASSERT_EQ(0, gauges_read(&g));
	EXPECT_EQ(self->start.unexpected_msgs + KP_UNEXP, g.unexpected_msgs);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));

	/* B's address: an error completion, not a hang. */
	ASSERT_EQ(0, fi_send(self->a.ep, msg[0], MSG_LEN, NULL, self->a.peer,
			     &ctx[KP_RECVS + KP_UNEXP]));
	ASSERT_EQ(0, cq_get_err(self->a.cq, &ce));
	EXPECT_EQ(&ctx[KP_RECVS + KP_UNEXP], ce.op_context);
	EXPECT_EQ(FI_SEND | FI_MSG, ce.flags);
	EXPECT_EQ(FI_ECONNREFUSED, ce.err);
	EXPECT_EQ(ECONNREFUSED, ce.prov_errno);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));

	/* C (self->b) still hears from A. */
	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, cname, &clen));
	ASSERT_EQ(1, fi_av_insert(self->a.av, cname, 1, &c_addr, 0, NULL));
	ASSERT_EQ(0, fi_recv(self->b.ep, cbuf, sizeof(cbuf), NULL,
			     FI_ADDR_UNSPEC, &cctx));
	ASSERT_EQ(0, fi_send(self->a.ep, msg[1], MSG_LEN, NULL, c_addr,
			     &ctx[0]));
	ASSERT_EQ(1, cq_get(self->a.cq, &e));
	EXPECT_EQ(&ctx[0], e.op_context);
	ASSERT_EQ(1, cq_get(self->b.cq, &e));
	EXPECT_EQ(&cctx, e.op_context);
	EXPECT_TRUE(has_pattern(cbuf, MSG_LEN, 1));

	side_close(&self->a);
	side_close(&self->b);
	fi_close(&self->domain->fid);
	self->domain = NULL;
	fi_close(&self->fabric->fid);
	self->fabric = NULL;
	close(to_a[0]);
	close(from_a[1]);
	ASSERT_EQ(0, gauges_settle(&self->start, &g));
	EXPECT_TRUE(gauges_equal(&self->start, &g));
}

/* ---- the receiver's address space changing under a transfer ------------- */

#define CHURN_MSGS	2000

static volatile bool churn_stop;

/*
 * What a multithreaded application does beside its transfers: map and
 * unmap memory (malloc of large blocks, thread stacks), which takes its
 * mmap lock for writing, again and again.
 */
static void *churn_thread(void *arg)
{
	while (!churn_stop) {
		void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return (void *)1;
		*(volatile char *)p = 1;
		mprotect(p, 1 << 16, PROT_READ);
		munmap(p, 1 << 16);
	}
	return NULL;
}

/* CHURN_MSGS sends into posted receives; 0 if each arrived intact. */
static int churn_run(void)
{
	static uint8_t msg[MSG_LEN], rbuf[MSG_LEN];
	struct fi_info *hints = robust_hints(), *info;
	struct fi_cq_data_entry e;
	struct fi_context sctx, rctx;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct side a = {}, b = {};
	pthread_t churn;
	void *churn_ret;
	int ret = 0;

	if (!hints || prov_getinfo(NULL, NULL, 0, hints, &info) ||
	    fi_fabric(info->fabric_attr, &fab, NULL) ||
	    fi_domain(fab, info, &dom, NULL) || side_open(dom, info, &a, 64) ||
	    side_open(dom, info, &b, 64) || connect_to(&a, &b))
		return 2;
	if (pthread_create(&churn, NULL, churn_thread, NULL))
		return 3;
	for (int i = 0; i < CHURN_MSGS && !ret; i++) {
		fill(msg, MSG_LEN, i);
		memset(rbuf, 0, sizeof(rbuf));
		if (fi_recv(b.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC,
			    &rctx) ||
		    fi_send(a.ep, msg, MSG_LEN, NULL, a.peer, &sctx))
			ret = 4;
		else if (cq_get(a.cq, &e) != 1 || e.op_context != &sctx)
			ret = 5;	/* an error completion: EFAULT */
		else if (cq_get(b.cq, &e) != 1 || e.op_context != &rctx ||
			 e.len != MSG_LEN || !has_pattern(rbuf, MSG_LEN, i))
			ret = 6;
	}
	churn_stop = true;
	pthread_join(churn, &churn_ret);
	side_close(&a);
	side_close(&b);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return ret ?: churn_ret ? 7 : 0;
}

/*
 * The receiver maps and unmaps memory all the while (another thread of
 * it): the copies into its buffers, which must not wait for its mmap
 * lock under the endpoint's receive lock, wait their turn and never turn
 * into a fault. Each doorbell mode in a fresh process (the provider reads
 * the mode once).
 */
TEST(receiver_mapping_memory_never_fails_a_send)
{
	PROV_REQUIRE_DEVICE();
	for (int engine = 0; engine <= 1; engine++) {
		int status;
		pid_t pid;

		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			setenv("FI_SWNIC_DOORBELL_ENGINE", engine ? "1" : "0", 1);
			_exit(churn_run());
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) {
			TH_LOG("%s doorbell: exit %d (5: a send failed)",
			       engine ? "engine" : "syscall",
			       WEXITSTATUS(status));
		}
	}
}

TEST_HARNESS_MAIN
