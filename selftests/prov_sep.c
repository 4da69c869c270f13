// SPDX-License-Identifier: GPL-2.0
/*
 * Scalable endpoints and shared contexts (fi_endpoint(3), fi_av(3)
 * rx_ctx_bits and fi_rx_addr): the domain's max_ep_*_ctx as they are;
 * transmit contexts sending to a named receive context of another SEP,
 * each completion on its own context's CQ, the source being the SEP;
 * a regular endpoint reaching a receive context; tagged messages between
 * contexts; a shared transmit context used by two endpoints, each
 * operation completing on its endpoint's CQ; fi_setname choosing the
 * SEP's port; MRs bound to a SEP and its contexts (FI_MR_ENDPOINT);
 * triggered operations and deferred work on contexts; and the error
 * paths. Shared receive contexts are prov_srx.c's. The receiving side
 * of the transfers between two endpoints is the peer's
 * (prov_open_peer()): another host's when SWNIC_PROV_PEER_NETNS names
 * one.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

#include "kselftest_harness.h"
#include "prov_util.h"

#define NCTX	3
#define RXBITS	2

FIXTURE(sep)
{
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct prov_ctx peer;	/* the receiving side */
};

FIXTURE_SETUP(sep)
{
	struct prov_ctx local;
	struct fi_info *hints;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_NAMED_RX_CTX |
		      FI_DIRECTED_RECV;
	hints->ep_attr->tx_ctx_cnt = NCTX;
	hints->ep_attr->rx_ctx_cnt = NCTX;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	ASSERT_EQ(0, fi_fabric(self->info->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &self->domain, NULL));
	local = (struct prov_ctx){ .info = self->info, .fabric = self->fabric,
				   .domain = self->domain };
	ASSERT_EQ(0, prov_open_peer(&self->peer, &local, hints));
	fi_freeinfo(hints);
}

FIXTURE_TEARDOWN(sep)
{
	prov_close(&self->peer);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
}

/* One completion within 5 s (or -FI_ETIMEDOUT); the source too. */
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

static struct fid_cq *cq_open(struct __test_metadata *_metadata,
			      struct fid_domain *domain)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 64 };
	struct fid_cq *cq = NULL;

	EXPECT_EQ(0, fi_cq_open(domain, &attr, &cq, NULL));
	return cq;
}

static struct fid_av *av_open(struct __test_metadata *_metadata,
			      struct fid_domain *domain, int bits)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .rx_ctx_bits = bits };
	struct fid_av *av = NULL;

	EXPECT_EQ(0, fi_av_open(domain, &attr, &av, NULL));
	return av;
}

/* A SEP with NCTX transmit and receive contexts, each with its own CQ. */
struct sep {
	struct fid_ep *sep;
	struct fid_av *av;
	struct fid_ep *tx[NCTX], *rx[NCTX];
	struct fid_cq *txcq[NCTX], *rxcq[NCTX];
};

/*
 * ... on @domain from @info, named @port by fi_setname first (0: not
 * named).
 */
static void sep_open_on(struct __test_metadata *_metadata,
			struct fid_domain *domain, struct fi_info *info,
			struct sep *s, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	ASSERT_EQ(0, fi_scalable_ep(domain, info, &s->sep, NULL));
	s->av = av_open(_metadata, domain, RXBITS);
	ASSERT_NE(NULL, s->av);
	ASSERT_EQ(0, fi_scalable_ep_bind(s->sep, &s->av->fid, 0));
	if (port) {
		struct sockaddr_in sin = {
			.sin_family = AF_INET,
			.sin_port = htons(port),
		};

		ASSERT_EQ(0, fi_setname(&s->sep->fid, &sin, sizeof(sin)));
	}
	for (int i = 0; i < NCTX; i++) {
		ASSERT_EQ(0, fi_tx_context(s->sep, i, NULL, &s->tx[i], NULL));
		s->txcq[i] = cq_open(_metadata, domain);
		ASSERT_EQ(0, fi_ep_bind(s->tx[i], &s->txcq[i]->fid,
					FI_TRANSMIT));
		ASSERT_EQ(0, fi_enable(s->tx[i]));
		ASSERT_EQ(0, fi_rx_context(s->sep, i, NULL, &s->rx[i], NULL));
		s->rxcq[i] = cq_open(_metadata, domain);
		ASSERT_EQ(0, fi_ep_bind(s->rx[i], &s->rxcq[i]->fid, FI_RECV));
		ASSERT_EQ(0, fi_enable(s->rx[i]));
	}
	ASSERT_EQ(0, fi_enable(s->sep));
}

/* ... of this test's domain. */
static void sep_open_at(struct __test_metadata *_metadata,
			FIXTURE_DATA(sep) *self, struct fi_info *info,
			struct sep *s, uint16_t port)
{
	sep_open_on(_metadata, self->domain, info, s, port);
}

static void sep_open(struct __test_metadata *_metadata,
		     FIXTURE_DATA(sep) *self, struct sep *s)
{
	sep_open_at(_metadata, self, self->info, s, 0);
}

/* The sending SEP a here, the receiving b on the peer's domain. */
static void sep_pair_open(struct __test_metadata *_metadata,
			  FIXTURE_DATA(sep) *self, struct sep *a,
			  struct sep *b)
{
	sep_open_on(_metadata, self->domain, self->info, a, 0);
	sep_open_on(_metadata, self->peer.domain, self->peer.info, b, 0);
}

static void sep_close(struct sep *s)
{
	for (int i = 0; i < NCTX; i++) {
		if (s->tx[i])
			fi_close(&s->tx[i]->fid);
		if (s->rx[i])
			fi_close(&s->rx[i]->fid);
		if (s->txcq[i])
			fi_close(&s->txcq[i]->fid);
		if (s->rxcq[i])
			fi_close(&s->rxcq[i]->fid);
	}
	if (s->sep)
		fi_close(&s->sep->fid);
	if (s->av)
		fi_close(&s->av->fid);
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

TEST_F(sep, domain_reports_context_limits)
{
	struct fi_domain_attr *d = self->info->domain_attr;

	EXPECT_LT(1, d->max_ep_tx_ctx);
	EXPECT_LT(1, d->max_ep_rx_ctx);
	EXPECT_EQ(1, d->max_ep_stx_ctx);
	/* One shared receive context, where the module has them. */
	EXPECT_EQ(prov_feature(self->domain, SWNIC_FEAT_SRX) ? 1 : 0,
		  d->max_ep_srx_ctx);
	EXPECT_EQ(NCTX, self->info->ep_attr->tx_ctx_cnt);
	EXPECT_EQ(NCTX, self->info->ep_attr->rx_ctx_cnt);
	EXPECT_TRUE(self->info->caps & FI_NAMED_RX_CTX);
}

TEST_F(sep, hints_beyond_limits_find_nothing)
{
	struct fi_info *hints = prov_hints(), *info = NULL;

	hints->ep_attr->type = FI_EP_RDM;
	hints->ep_attr->rx_ctx_cnt = self->info->domain_attr->max_ep_rx_ctx + 1;
	EXPECT_EQ(-FI_ENODATA, prov_getinfo(NULL, NULL, 0, hints, &info));
	hints->ep_attr->rx_ctx_cnt = 0;
	hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_EQ(FI_SHARED_CONTEXT, info->ep_attr->tx_ctx_cnt);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* Each tx context i of A sends to rx context (i + 1) % NCTX of B. */
TEST_F(sep, tx_contexts_reach_named_rx_contexts)
{
	struct fi_cq_tagged_entry e;
	struct sep a, b;
	fi_addr_t b_addr, a_in_b, src;
	uint64_t buf[NCTX], msg;
	int ctx[NCTX];

	sep_pair_open(_metadata, self, &a, &b);
	b_addr = insert_name(_metadata, a.av, &b.sep->fid);
	a_in_b = insert_name(_metadata, b.av, &a.sep->fid);
	for (int i = 0; i < NCTX; i++) {
		buf[i] = 0;
		ASSERT_EQ(0, fi_recv(b.rx[i], &buf[i], sizeof(buf[i]), NULL,
				     FI_ADDR_UNSPEC, &ctx[i]));
	}
	for (int i = 0; i < NCTX; i++) {
		int to = (i + 1) % NCTX;

		msg = 100 + to;
		ASSERT_EQ(0, fi_send(a.tx[i], &msg, sizeof(msg), NULL,
				     fi_rx_addr(b_addr, to, RXBITS), &msg));
		ASSERT_EQ(1, cq_get(a.txcq[i], &e, NULL));
		EXPECT_EQ(&msg, e.op_context);
		EXPECT_TRUE(e.flags & FI_SEND);
		/* The completion is the tx context's own. */
		for (int j = 0; j < NCTX; j++)
			if (j != i)
				EXPECT_EQ(-FI_EAGAIN,
					  fi_cq_read(a.txcq[j], &e, 1));
		ASSERT_EQ(1, cq_get(b.rxcq[to], &e, &src));
		EXPECT_EQ(&ctx[to], e.op_context);
		EXPECT_EQ(100 + to, buf[to]);
		/* FI_SOURCE: every context sends as the SEP. */
		EXPECT_EQ(a_in_b, src);
		for (int j = 0; j < NCTX; j++)
			if (j != to)
				EXPECT_EQ(-FI_EAGAIN,
					  fi_cq_read(b.rxcq[j], &e, 1));
	}
	sep_close(&a);
	sep_close(&b);
}

TEST_F(sep, tagged_and_directed_between_contexts)
{
	struct fi_cq_tagged_entry e;
	struct sep a, b;
	fi_addr_t b_addr, a_in_b, src;
	uint64_t buf = 0, msg = 77;

	sep_pair_open(_metadata, self, &a, &b);
	b_addr = insert_name(_metadata, a.av, &b.sep->fid);
	a_in_b = insert_name(_metadata, b.av, &a.sep->fid);
	/* Directed at A: any of its contexts, named by the SEP's address. */
	ASSERT_EQ(0, fi_trecv(b.rx[2], &buf, sizeof(buf), NULL, a_in_b,
			      0x55, 0, &buf));
	ASSERT_EQ(0, fi_tsenddata(a.tx[1], &msg, sizeof(msg), NULL, 9,
				  fi_rx_addr(b_addr, 2, RXBITS), 0x55, &msg));
	ASSERT_EQ(1, cq_get(a.txcq[1], &e, NULL));
	ASSERT_EQ(1, cq_get(b.rxcq[2], &e, &src));
	EXPECT_EQ(&buf, e.op_context);
	EXPECT_EQ(0x55, e.tag);
	EXPECT_TRUE(e.flags & FI_REMOTE_CQ_DATA);
	EXPECT_EQ(9, e.data);
	EXPECT_EQ(77, buf);
	EXPECT_EQ(a_in_b, src);
	sep_close(&a);
	sep_close(&b);
}

/* A regular endpoint reaches receive context 1; context 0 is the SEP. */
TEST_F(sep, regular_endpoint_reaches_rx_context)
{
	struct fi_info *info = fi_dupinfo(self->info);
	struct fi_cq_tagged_entry e;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	struct sep b;
	fi_addr_t b_addr;
	uint64_t buf[2] = { 0, 0 }, msg = 5;

	sep_open_on(_metadata, self->peer.domain, self->peer.info, &b,
		    0);
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;
	ASSERT_EQ(0, fi_endpoint(self->domain, info, &ep, NULL));
	cq = cq_open(_metadata, self->domain);
	av = av_open(_metadata, self->domain, RXBITS);
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	b_addr = insert_name(_metadata, av, &b.sep->fid);
	ASSERT_EQ(0, fi_recv(b.rx[0], &buf[0], 8, NULL, FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_recv(b.rx[1], &buf[1], 8, NULL, FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(ep, &msg, 8, NULL, fi_rx_addr(b_addr, 1, RXBITS),
			     NULL));
	ASSERT_EQ(1, cq_get(cq, &e, NULL));
	ASSERT_EQ(1, cq_get(b.rxcq[1], &e, NULL));
	EXPECT_EQ(5, buf[1]);
	msg = 6;
	ASSERT_EQ(0, fi_send(ep, &msg, 8, NULL, b_addr, NULL));
	ASSERT_EQ(1, cq_get(cq, &e, NULL));
	ASSERT_EQ(1, cq_get(b.rxcq[0], &e, NULL));
	EXPECT_EQ(6, buf[0]);
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_freeinfo(info);
	sep_close(&b);
}

TEST_F(sep, error_paths)
{
	struct fid_ep *sep, *tx, *rx, *tx2;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fi_av_attr bad = { .type = FI_AV_TABLE, .rx_ctx_bits = 9 };
	uint64_t v = 0;

	/* rx_ctx_bits beyond what an address leaves. */
	EXPECT_EQ(-FI_EINVAL, fi_av_open(self->domain, &bad, &av, NULL));

	ASSERT_EQ(0, fi_scalable_ep(self->domain, self->info, &sep, NULL));
	/* Contexts beyond the counts. */
	EXPECT_EQ(-FI_EINVAL, fi_tx_context(sep, NCTX, NULL, &tx, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_rx_context(sep, -1, NULL, &rx, NULL));
	ASSERT_EQ(0, fi_tx_context(sep, 0, NULL, &tx, NULL));
	EXPECT_EQ(-FI_EBUSY, fi_tx_context(sep, 0, NULL, &tx2, NULL));
	ASSERT_EQ(0, fi_rx_context(sep, 0, NULL, &rx, NULL));
	cq = cq_open(_metadata, self->domain);
	ASSERT_EQ(0, fi_ep_bind(tx, &cq->fid, FI_TRANSMIT));
	ASSERT_EQ(0, fi_ep_bind(rx, &cq->fid, FI_RECV));
	/* The SEP has no AV yet. */
	EXPECT_EQ(-FI_ENOAV, fi_enable(tx));
	av = av_open(_metadata, self->domain, RXBITS);
	/* A context takes the SEP's AV, not one of its own. */
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(tx, &av->fid, 0));
	ASSERT_EQ(0, fi_scalable_ep_bind(sep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(tx));
	ASSERT_EQ(0, fi_enable(rx));
	/* No data path on the SEP itself; contexts keep to their side. */
	EXPECT_EQ(-FI_EOPBADSTATE, fi_send(sep, &v, 8, NULL, 0, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_recv(tx, &v, 8, NULL, 0, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_send(rx, &v, 8, NULL, 0, NULL));
	/* fi_endpoint(3): closing the SEP before its contexts is EBUSY. */
	EXPECT_EQ(-FI_EBUSY, fi_close(&sep->fid));
	EXPECT_EQ(0, fi_close(&tx->fid));
	EXPECT_EQ(-FI_EBUSY, fi_close(&sep->fid));
	EXPECT_EQ(0, fi_close(&rx->fid));
	EXPECT_EQ(0, fi_close(&sep->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
}

TEST_F(sep, more_contexts_than_max_is_einval)
{
	struct fi_info *info = fi_dupinfo(self->info);
	struct fid_ep *sep;

	info->ep_attr->rx_ctx_cnt = info->domain_attr->max_ep_rx_ctx + 1;
	EXPECT_EQ(-FI_EINVAL, fi_scalable_ep(self->domain, info, &sep, NULL));
	info->ep_attr->rx_ctx_cnt = 1;
	info->ep_attr->tx_ctx_cnt = info->domain_attr->max_ep_tx_ctx + 1;
	EXPECT_EQ(-FI_EINVAL, fi_scalable_ep(self->domain, info, &sep, NULL));
	/* Several contexts are for fi_scalable_ep, not fi_endpoint. */
	info->ep_attr->tx_ctx_cnt = 2;
	EXPECT_EQ(-FI_EINVAL, fi_endpoint(self->domain, info, &sep, NULL));
	fi_freeinfo(info);
}

/* Two endpoints share a transmit context: completions stay theirs. */
TEST_F(sep, stx_shared_by_two_endpoints)
{
	struct fi_info *info = fi_dupinfo(self->info);
	struct fi_info *rinfo = fi_dupinfo(self->peer.info);
	struct fi_cq_tagged_entry e;
	struct fid_ep *ep[2], *r;
	struct fid_cq *cq[2], *rcq;
	struct fid_av *av, *rav;
	struct fid_stx *stx;
	struct fi_tx_attr ta = { 0 };
	fi_addr_t ra;
	uint64_t msg[2] = { 1, 2 }, buf[2] = { 0, 0 }, v;

	ASSERT_EQ(0, fi_stx_context(self->domain, &ta, &stx, NULL));
	EXPECT_LT(0, ta.size);
	av = av_open(_metadata, self->domain, 0);
	info->ep_attr->rx_ctx_cnt = 1;
	info->ep_attr->tx_ctx_cnt = 1;
	/* The receiver: the peer's (its own AV). */
	rinfo->ep_attr->rx_ctx_cnt = 1;
	rinfo->ep_attr->tx_ctx_cnt = 1;
	ASSERT_EQ(0, fi_endpoint(self->peer.domain, rinfo, &r, NULL));
	rcq = cq_open(_metadata, self->peer.domain);
	rav = av_open(_metadata, self->peer.domain, 0);
	ASSERT_NE(NULL, rav);
	ASSERT_EQ(0, fi_ep_bind(r, &rcq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(r, &rav->fid, 0));
	/* Only an endpoint that asks for a shared context takes one. */
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(r, &stx->fid, 0));
	ASSERT_EQ(0, fi_enable(r));
	ra = insert_name(_metadata, av, &r->fid);

	info->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, fi_endpoint(self->domain, info, &ep[i], NULL));
		cq[i] = cq_open(_metadata, self->domain);
		ASSERT_EQ(0, fi_ep_bind(ep[i], &cq[i]->fid,
					FI_TRANSMIT | FI_RECV));
		ASSERT_EQ(0, fi_ep_bind(ep[i], &av->fid, 0));
		if (i == 0)
			/* FI_SHARED_CONTEXT without the context. */
			EXPECT_EQ(-FI_EINVAL, fi_enable(ep[i]));
		ASSERT_EQ(0, fi_ep_bind(ep[i], &stx->fid, 0));
		/* One shared transmit context per endpoint. */
		EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep[i], &stx->fid, 0));
		ASSERT_EQ(0, fi_enable(ep[i]));
	}
	EXPECT_EQ(-FI_EBUSY, fi_close(&stx->fid));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, fi_recv(r, &buf[i], 8, NULL, FI_ADDR_UNSPEC,
				     &buf[i]));
	ASSERT_EQ(0, fi_send(ep[1], &msg[1], 8, NULL, ra, &msg[1]));
	ASSERT_EQ(0, fi_send(ep[0], &msg[0], 8, NULL, ra, &msg[0]));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(1, cq_get(cq[i], &e, NULL));
		EXPECT_EQ(&msg[i], e.op_context);
		EXPECT_EQ(-FI_EAGAIN, fi_cq_read(cq[i], &e, 1));
	}
	ASSERT_EQ(1, cq_get(rcq, &e, NULL));
	ASSERT_EQ(1, cq_get(rcq, &e, NULL));
	EXPECT_EQ(3, buf[0] + buf[1]);
	for (int i = 0; i < 2; i++) {
		fi_close(&ep[i]->fid);
		fi_close(&cq[i]->fid);
	}
	EXPECT_EQ(0, fi_close(&stx->fid));
	fi_close(&r->fid);
	fi_close(&rcq->fid);
	fi_close(&rav->fid);
	fi_close(&av->fid);
	fi_freeinfo(info);
	fi_freeinfo(rinfo);
	(void)v;
}

/* fi_ep_bind of a transmit context of another domain. */
TEST_F(sep, stx_of_another_domain_is_refused)
{
	struct fi_info *info = fi_dupinfo(self->info);
	struct fid_domain *dom2;
	struct fid_stx *stx;
	struct fid_ep *ep;

	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &dom2, NULL));
	ASSERT_EQ(0, fi_stx_context(dom2, NULL, &stx, NULL));
	info->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	info->ep_attr->rx_ctx_cnt = 1;
	ASSERT_EQ(0, fi_endpoint(self->domain, info, &ep, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_ep_bind(ep, &stx->fid, 0));
	fi_close(&ep->fid);
	EXPECT_EQ(0, fi_close(&stx->fid));
	EXPECT_EQ(0, fi_close(&dom2->fid));
	fi_freeinfo(info);
}

/* The port of @fid's name. */
static uint16_t name_port(struct __test_metadata *_metadata, fid_t fid)
{
	struct sockaddr_in sin = { 0 };
	size_t len = sizeof(sin);

	EXPECT_EQ(0, fi_getname(fid, &sin, &len));
	return ntohs(sin.sin_port);
}

/*
 * fi_setname on a SEP chooses its address: the block of receive contexts
 * starts at the port given, and peers reach context i at port + i. A
 * taken port, a block past the last port, another host's address and a
 * second fi_setname fail with the errors fi_cm(3) leaves to the provider.
 */
TEST_F(sep, setname_chooses_the_address)
{
	uint16_t port = 20000 + (uint16_t)(getpid() % 20000);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct fi_cq_tagged_entry e;
	struct fid_ep *sep2;
	struct fid_av *av2;
	struct sep a, b;
	fi_addr_t b_addr;
	uint64_t buf = 0, msg = 31;

	sep_open_at(_metadata, self, self->info, &b, port);
	EXPECT_EQ(port, name_port(_metadata, &b.sep->fid));
	/* Named once: the block exists now. */
	sin.sin_port = htons(port + 10);
	EXPECT_EQ(-FI_EOPBADSTATE, fi_setname(&b.sep->fid, &sin, sizeof(sin)));

	sep_open(_metadata, self, &a);
	b_addr = insert_name(_metadata, a.av, &b.sep->fid);
	ASSERT_EQ(0, fi_recv(b.rx[2], &buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			     &buf));
	ASSERT_EQ(0, fi_send(a.tx[0], &msg, sizeof(msg), NULL,
			     fi_rx_addr(b_addr, 2, RXBITS), &msg));
	ASSERT_EQ(1, cq_get(a.txcq[0], &e, NULL));
	ASSERT_EQ(1, cq_get(b.rxcq[2], &e, NULL));
	EXPECT_EQ(&buf, e.op_context);
	EXPECT_EQ(31, buf);

	ASSERT_EQ(0, fi_scalable_ep(self->domain, self->info, &sep2, NULL));
	av2 = av_open(_metadata, self->domain, RXBITS);
	ASSERT_NE(NULL, av2);
	ASSERT_EQ(0, fi_scalable_ep_bind(sep2, &av2->fid, 0));
	/* Overlapping b's block (its last port). */
	sin.sin_port = htons(port + NCTX - 1);
	EXPECT_EQ(-FI_EADDRINUSE, fi_setname(&sep2->fid, &sin, sizeof(sin)));
	/* NCTX ports from 65534 run past the last port. */
	sin.sin_port = htons(65534);
	EXPECT_EQ(-FI_EINVAL, fi_setname(&sep2->fid, &sin, sizeof(sin)));
	/* Not this host's address. */
	sin.sin_port = htons(port + 2 * NCTX);
	sin.sin_addr.s_addr = htonl(0xc0000201);	/* 192.0.2.1 */
	EXPECT_EQ(-FI_EADDRNOTAVAIL, fi_setname(&sep2->fid, &sin,
						 sizeof(sin)));
	EXPECT_EQ(-FI_EINVAL, fi_setname(&sep2->fid, &sin, 2));
	/* Nothing was taken: the next port block is there to have. */
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	EXPECT_EQ(0, fi_setname(&sep2->fid, &sin, sizeof(sin)));
	EXPECT_EQ(port + 2 * NCTX, name_port(_metadata, &sep2->fid));
	EXPECT_EQ(0, fi_close(&sep2->fid));
	EXPECT_EQ(0, fi_close(&av2->fid));
	sep_close(&a);
	sep_close(&b);
	/* Closed: its ports are free again. */
	sep_open_at(_metadata, self, self->info, &b, port);
	EXPECT_EQ(port, name_port(_metadata, &b.sep->fid));
	sep_close(&b);
}

/*
 * fi_mr_bind to an endpoint (FI_MR_ENDPOINT, which swnic never needs but
 * accepts): a SEP and its contexts are endpoints too; flags must be 0;
 * another domain's SEP is refused.
 */
TEST_F(sep, mr_bind_to_sep_and_contexts)
{
	static char region[64];
	struct fid_domain *other;
	struct fid_ep *osep;
	struct fid_mr *mr;
	struct sep a;

	sep_open(_metadata, self, &a);
	ASSERT_EQ(0, fi_mr_reg(self->domain, region, sizeof(region),
			       FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL));
	EXPECT_EQ(0, fi_mr_bind(mr, &a.sep->fid, 0));
	EXPECT_EQ(0, fi_mr_bind(mr, &a.tx[1]->fid, 0));
	EXPECT_EQ(0, fi_mr_bind(mr, &a.rx[2]->fid, 0));
	EXPECT_EQ(-FI_EBADFLAGS, fi_mr_bind(mr, &a.rx[0]->fid, FI_RECV));
	EXPECT_EQ(-FI_EBADFLAGS, fi_mr_bind(mr, &a.sep->fid, FI_RECV));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &other, NULL));
	ASSERT_EQ(0, fi_scalable_ep(other, self->info, &osep, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_mr_bind(mr, &osep->fid, 0));
	/* Not an endpoint at all. */
	EXPECT_EQ(-FI_EINVAL, fi_mr_bind(mr, &a.av->fid, 0));
	fi_close(&osep->fid);
	fi_close(&other->fid);
	fi_close(&mr->fid);
	sep_close(&a);
}

static struct fid_cntr *sep_cntr(struct __test_metadata *_metadata,
				 struct fid_domain *domain)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *c = NULL;

	EXPECT_EQ(0, fi_cntr_open(domain, &attr, &c, NULL));
	return c;
}

/*
 * Triggered operations on a SEP's contexts (FI_TRIGGER): a triggered
 * send from a transmit context, a triggered receive on a receive
 * context, and deferred work naming a transmit context, each at its
 * threshold and not before.
 */
TEST_F(sep, triggered_ops_on_contexts)
{
	struct fi_info *hints = prov_hints(), *info;
	struct fi_triggered_context ts, tr;
	struct fi_deferred_work w = { 0 };
	struct fi_op_msg opm = { 0 };
	struct fi_cq_tagged_entry e;
	struct fid_cntr *c;
	struct sep a, b;
	fi_addr_t b_addr;
	uint64_t out = 41, out2 = 42, in = 0, in2 = 0;
	struct iovec iov = { .iov_base = &in, .iov_len = sizeof(in) };
	struct iovec iov2 = { .iov_base = &out2, .iov_len = sizeof(out2) };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = &tr,
	};

	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = self->info->caps | FI_TRIGGER;
	hints->ep_attr->tx_ctx_cnt = NCTX;
	hints->ep_attr->rx_ctx_cnt = NCTX;
	hints->domain_attr->mr_mode = self->info->domain_attr->mr_mode;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	fi_freeinfo(hints);
	c = sep_cntr(_metadata, self->domain);
	ASSERT_NE(NULL, c);
	sep_open_at(_metadata, self, info, &a, 0);
	sep_open_at(_metadata, self, info, &b, 0);
	b_addr = insert_name(_metadata, a.av, &b.sep->fid);

	/* A triggered receive on b's context 1, a triggered send to it. */
	memset(&tr, 0, sizeof(tr));
	tr.event_type = FI_TRIGGER_THRESHOLD;
	tr.trigger.threshold.cntr = c;
	tr.trigger.threshold.threshold = 2;
	ASSERT_EQ(0, fi_recvmsg(b.rx[1], &msg, FI_TRIGGER | FI_COMPLETION));
	ts = tr;
	ts.trigger.threshold.threshold = 1;
	iov.iov_base = &out;
	msg.addr = fi_rx_addr(b_addr, 1, RXBITS);
	msg.context = &ts;
	ASSERT_EQ(0, fi_sendmsg(a.tx[2], &msg, FI_TRIGGER | FI_COMPLETION));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(a.txcq[2], &e, 1));
	usleep(50000);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(a.txcq[2], &e, 1));
	ASSERT_EQ(0, fi_cntr_add(c, 1));
	ASSERT_EQ(1, cq_get(a.txcq[2], &e, NULL));
	EXPECT_EQ(&ts, e.op_context);
	/* Sent, buffered at b: the receive is not posted yet. */
	usleep(50000);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(b.rxcq[1], &e, 1));
	EXPECT_EQ(0, in);
	ASSERT_EQ(0, fi_cntr_add(c, 1));
	ASSERT_EQ(1, cq_get(b.rxcq[1], &e, NULL));
	EXPECT_EQ(&tr, e.op_context);
	EXPECT_EQ(41, in);

	/* Deferred work on a transmit context. */
	in = 0;
	ASSERT_EQ(0, fi_recv(b.rx[0], &in2, sizeof(in2), NULL, FI_ADDR_UNSPEC,
			     &in2));
	opm.ep = a.tx[0];
	opm.msg.msg_iov = &iov2;
	opm.msg.iov_count = 1;
	opm.msg.addr = fi_rx_addr(b_addr, 0, RXBITS);
	opm.msg.context = &w;
	opm.flags = FI_COMPLETION;
	w.threshold = 4;
	w.triggering_cntr = c;
	w.op_type = FI_OP_SEND;
	w.op.msg = &opm;
	ASSERT_EQ(0, fi_control(&self->domain->fid, FI_QUEUE_WORK, &w));
	ASSERT_EQ(0, fi_cntr_add(c, 1));
	usleep(50000);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(b.rxcq[0], &e, 1));
	ASSERT_EQ(0, fi_cntr_add(c, 1));
	ASSERT_EQ(1, cq_get(a.txcq[0], &e, NULL));
	EXPECT_EQ(&w, e.op_context);
	ASSERT_EQ(1, cq_get(b.rxcq[0], &e, NULL));
	EXPECT_EQ(42, in2);
	/* The SEP itself is no endpoint for deferred work. */
	opm.ep = a.sep;
	EXPECT_EQ(-FI_EINVAL, fi_control(&self->domain->fid, FI_QUEUE_WORK,
					 &w));
	sep_close(&a);
	sep_close(&b);
	fi_close(&c->fid);
	fi_freeinfo(info);
}

TEST_HARNESS_MAIN
