// SPDX-License-Identifier: GPL-2.0
/*
 * Atomics through the public libfabric API (fi_atomic(3)) between RDM
 * endpoints of one process - initiators a and c, target b with the MR, on
 * the peer domain (prov_open_peer(): the same domain in-host, another
 * host's across): every operation on every datatype swnic
 * documents as valid, with the target's values and the fetched values
 * checked against a reference (atomic_ref.h); the valid calls and
 * fi_query_atomic; the v/msg/inject forms; refusals (combinations, sizes,
 * keys, bounds, access rights); two initiators adding to one counter at
 * once; elements straddling a page boundary. Each on a pinned MR, an
 * on-demand (ODP) one, and one addressed by offsets.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "prov_util.h"
#include "atomic_ref.h"

#define PAGE		4096
#define MR_LEN		(4 * PAGE)

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
};

FIXTURE(atomic)
{
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct prov_ctx peer;		/* b and the MRs */
	struct side a, b, c;
	uint8_t *mem;			/* MR_LEN bytes, registered */
	struct fid_mr *mr;
	uint64_t key;
};

FIXTURE_VARIANT(atomic)
{
	int mr_mode;
	bool odp;
};

FIXTURE_VARIANT_ADD(atomic, pinned)
{
	.mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		   FI_MR_PROV_KEY,
};

FIXTURE_VARIANT_ADD(atomic, odp)
{
	.mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY,
	.odp = true,
};

FIXTURE_VARIANT_ADD(atomic, offsets)
{
	.mr_mode = FI_MR_ALLOCATED | FI_MR_PROV_KEY,
};

static void side_open(struct __test_metadata *_metadata,
		      struct fid_domain *domain, struct fi_info *info,
		      struct side *s)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 64 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	ASSERT_EQ(0, fi_endpoint(domain, info, &s->ep, NULL));
	ASSERT_EQ(0, fi_cq_open(domain, &cq_attr, &s->cq, NULL));
	ASSERT_EQ(0, fi_av_open(domain, &av_attr, &s->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->av->fid, 0));
	ASSERT_EQ(0, fi_enable(s->ep));
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

static void connect_to(struct __test_metadata *_metadata, struct side *from,
		       struct side *to)
{
	char name[64];
	size_t len = sizeof(name);

	ASSERT_EQ(0, fi_getname(&to->ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(from->av, name, 1, &from->peer, 0, NULL));
}

static struct fid_mr *reg(struct __test_metadata *_metadata,
			  FIXTURE_DATA(atomic) *self, void *buf, size_t len,
			  uint64_t access)
{
	struct fid_mr *mr = NULL;

	EXPECT_EQ(0, fi_mr_reg(self->peer.domain, buf, len, access, 0, 0, 0,
			       &mr, NULL));
	return mr;
}

FIXTURE_SETUP(atomic)
{
	struct prov_ctx local;
	struct fi_info *hints;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_ATOMIC;
	hints->domain_attr->mr_mode = variant->mr_mode;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	ASSERT_EQ(0, fi_fabric(self->info->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &self->domain, NULL));
	local = (struct prov_ctx){ .info = self->info, .fabric = self->fabric,
				   .domain = self->domain };
	ASSERT_EQ(0, prov_open_peer(&self->peer, &local, hints));
	fi_freeinfo(hints);
	if (variant->odp && !prov_feature(self->peer.domain, SWNIC_FEAT_MR_ODP))
		SETUP_SKIP("the kernel has no on-demand registration");
	side_open(_metadata, self->domain, self->info, &self->a);
	side_open(_metadata, self->peer.domain, self->peer.info, &self->b);
	side_open(_metadata, self->domain, self->info, &self->c);
	connect_to(_metadata, &self->a, &self->b);
	connect_to(_metadata, &self->c, &self->b);
	self->mem = mmap(NULL, MR_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	memset(self->mem, 0, MR_LEN);
	self->mr = reg(_metadata, self, self->mem, MR_LEN,
		       FI_REMOTE_READ | FI_REMOTE_WRITE);
	ASSERT_NE(NULL, self->mr);
	self->key = fi_mr_key(self->mr);
}

FIXTURE_TEARDOWN(atomic)
{
	if (self->mr)
		fi_close(&self->mr->fid);
	side_close(&self->a);
	side_close(&self->b);
	side_close(&self->c);
	prov_close(&self->peer);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
	if (self->mem && self->mem != MAP_FAILED)
		munmap(self->mem, MR_LEN);
}

/* The RMA address of @p, in an MR registered at @base. */
static uint64_t raddr(FIXTURE_DATA(atomic) *self, const void *base,
		      const void *p)
{
	if (self->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)p;
	return (uintptr_t)p - (uintptr_t)base;
}

static struct at_peer peer_at(FIXTURE_DATA(atomic) *self, struct side *s,
			      size_t off)
{
	return (struct at_peer) {
		.ep = s->ep, .cq = s->cq, .addr = s->peer,
		.raddr = raddr(self, self->mem, self->mem + off),
		.key = self->key, .local = self->mem + off,
	};
}

TEST_F(atomic, getinfo_offers_atomics_with_their_order)
{
	EXPECT_TRUE(self->info->caps & FI_ATOMIC);
	EXPECT_TRUE(self->info->tx_attr->caps & FI_ATOMIC);
	EXPECT_TRUE(self->info->rx_attr->caps & FI_ATOMIC);
	EXPECT_EQ(FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |
		  FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW,
		  self->info->tx_attr->msg_order &
		  (FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |
		   FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW));
	EXPECT_TRUE(prov_feature(self->domain, SWNIC_FEAT_ATOMIC));
}

/* The valid calls and fi_query_atomic: the documented table, counts. */
TEST_F(atomic, valid_calls_and_query_agree_with_the_table)
{
	static const uint64_t qflags[] = { 0, FI_FETCH_ATOMIC,
					   FI_COMPARE_ATOMIC };
	struct fi_atomic_attr attr;
	int ndt = FI_LONG_DOUBLE_COMPLEX + 3;	/* and INT128, UINT128 */

	for (int kind = AT_BASE; kind <= AT_COMPARE; kind++) {
		for (int dt = 0; dt < ndt; dt++) {
			for (int op = 0; op < AT_NOP; op++) {
				bool ok = at_valid(kind, op, dt);
				size_t count = 0;
				int ret, q;

				if (kind == AT_BASE)
					ret = fi_atomicvalid(self->a.ep, dt, op,
							     &count);
				else if (kind == AT_FETCH)
					ret = fi_fetch_atomicvalid(self->a.ep,
								   dt, op,
								   &count);
				else
					ret = fi_compare_atomicvalid(self->a.ep,
								     dt, op,
								     &count);
				memset(&attr, 0, sizeof(attr));
				q = fi_query_atomic(self->domain, dt, op,
						    &attr, qflags[kind]);
				EXPECT_EQ(ok ? 0 : -FI_EOPNOTSUPP, ret)
					TH_LOG("%s op %d dt %d",
					       at_kind_name[kind], op, dt);
				EXPECT_EQ(ret, q);
				if (!ok)
					continue;
				EXPECT_EQ(AT_MAX / at_size[dt], count);
				EXPECT_EQ(count, attr.count);
				EXPECT_EQ(at_size[dt], attr.size);
			}
		}
	}
	EXPECT_EQ(-FI_EINVAL, fi_query_atomic(self->domain, FI_INT32, FI_SUM,
					      &attr, FI_FETCH_ATOMIC |
					      FI_COMPARE_ATOMIC));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_query_atomic(self->domain, FI_INT32,
						  FI_SUM, &attr, FI_TAGGED));
}

/* Every valid combination does what fi_atomic(3) defines. */
TEST_F(atomic, every_op_on_every_datatype)
{
	struct at_peer p = peer_at(self, &self->a, 64);
	int runs = 0;

	for (int kind = AT_BASE; kind <= AT_COMPARE; kind++) {
		for (int dt = 0; dt < AT_NDT; dt++) {
			for (int op = 0; op < AT_NOP; op++) {
				char why[128];

				if (!at_valid(kind, op, dt))
					continue;
				EXPECT_EQ(0, at_run(&p, kind, op, dt, why,
						    sizeof(why)))
					TH_LOG("%s op %d dt %d: %s",
					       at_kind_name[kind], op, dt, why);
				runs++;
			}
		}
	}
	/*
	 * Base: 8 integer types x 11 ops, 3 real x 5, 3 complex x 3 = 112;
	 * fetch (and ATOMIC_READ): 8 x 12 + 3 x 6 + 3 x 4 = 126; compare:
	 * 8 x 7 + 3 x 6 + 3 x 2 = 80.
	 */
	EXPECT_EQ(112 + 126 + 80, runs);
}

/* Invalid combinations are refused at once; nothing is posted. */
TEST_F(atomic, invalid_combinations_are_refused)
{
	float f = 1, r;
	uint64_t u = 1, ur;
	struct at_peer p = peer_at(self, &self->a, 0);

	EXPECT_EQ(-FI_EOPNOTSUPP, fi_atomic(p.ep, &f, 1, NULL, p.addr,
					    p.raddr, p.key, FI_FLOAT, FI_BOR,
					    NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_atomic(p.ep, &f, 1, NULL, p.addr,
					    p.raddr, p.key, FI_FLOAT_COMPLEX,
					    FI_MIN, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_atomic(p.ep, &u, 1, NULL, p.addr,
					    p.raddr, p.key, FI_UINT64,
					    FI_ATOMIC_READ, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_atomic(p.ep, &u, 1, NULL, p.addr,
					    p.raddr, p.key, FI_UINT64,
					    FI_CSWAP, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_fetch_atomic(p.ep, &u, 1, NULL, &ur,
						  NULL, p.addr, p.raddr, p.key,
						  FI_UINT64, FI_MSWAP, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_compare_atomic(p.ep, &u, 1, NULL, &u,
						    NULL, &ur, NULL, p.addr,
						    p.raddr, p.key, FI_UINT64,
						    FI_SUM, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_compare_atomic(p.ep, &f, 1, NULL, &f,
						    NULL, &r, NULL, p.addr,
						    p.raddr, p.key, FI_FLOAT,
						    FI_MSWAP, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_atomic(p.ep, &u, 1, NULL, p.addr,
					    p.raddr, p.key, FI_INT128, FI_SUM,
					    NULL));
	/* Sizes: none, or more than a call carries. */
	EXPECT_EQ(-FI_EINVAL, fi_atomic(p.ep, &u, 0, NULL, p.addr, p.raddr,
					p.key, FI_UINT64, FI_SUM, NULL));
	EXPECT_EQ(-FI_EMSGSIZE, fi_atomic(p.ep, self->mem, AT_MAX / 8 + 1,
					  NULL, p.addr, p.raddr, p.key,
					  FI_UINT64, FI_SUM, NULL));
	/* An inject larger than inject_size. */
	EXPECT_EQ(-FI_EINVAL, fi_inject_atomic(p.ep, self->mem, 64, p.addr,
					       p.raddr, p.key, FI_UINT8,
					       FI_SUM));
	{
		struct fi_cq_tagged_entry e;

		EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->a.cq, &e, 1));
	}
}

static int expect_error(struct fid_cq *cq)
{
	int ret = at_wait(cq, NULL);

	return ret < 0 && ret != -FI_ETIMEDOUT ? ret : 0;
}

/* Keys, bounds and access rights: error completions, target untouched. */
TEST_F(atomic, bad_key_bounds_and_rights_fail_in_the_completion)
{
	uint64_t one = 1, res = 7, *t = (uint64_t *)self->mem;
	struct at_peer p = peer_at(self, &self->a, 0);
	uint8_t *ro = self->mem + 2 * PAGE, *wo = self->mem + 3 * PAGE;
	struct fid_mr *mr_ro, *mr_wo;
	uint64_t k_ro, k_wo;

	*t = 40;
	ASSERT_EQ(0, fi_atomic(p.ep, &one, 1, NULL, p.addr, p.raddr,
			       p.key + 1, FI_UINT64, FI_SUM, NULL));
	EXPECT_EQ(-FI_ENOKEY, expect_error(p.cq));
	ASSERT_EQ(0, fi_atomic(p.ep, &one, 1, NULL, p.addr,
			       raddr(self, self->mem, self->mem + MR_LEN - 4),
			       p.key, FI_UINT64, FI_SUM, NULL));
	EXPECT_EQ(-ERANGE, expect_error(p.cq));
	EXPECT_EQ(40, *t);

	/* Access rights: write needs REMOTE_WRITE, read REMOTE_READ, both. */
	fi_close(&self->mr->fid);
	self->mr = NULL;
	mr_ro = reg(_metadata, self, ro, PAGE, FI_REMOTE_READ);
	mr_wo = reg(_metadata, self, wo, PAGE, FI_REMOTE_WRITE);
	ASSERT_NE(NULL, mr_ro);
	ASSERT_NE(NULL, mr_wo);
	k_ro = fi_mr_key(mr_ro);
	k_wo = fi_mr_key(mr_wo);
	*(uint64_t *)ro = 5;
	*(uint64_t *)wo = 6;
	ASSERT_EQ(0, fi_atomic(p.ep, &one, 1, NULL, p.addr,
			       raddr(self, ro, ro), k_ro, FI_UINT64, FI_SUM,
			       NULL));
	EXPECT_EQ(-FI_EACCES, expect_error(p.cq));
	ASSERT_EQ(0, fi_fetch_atomic(p.ep, &one, 1, NULL, &res, NULL, p.addr,
				     raddr(self, ro, ro), k_ro, FI_UINT64,
				     FI_SUM, NULL));
	EXPECT_EQ(-FI_EACCES, expect_error(p.cq));
	ASSERT_EQ(0, fi_fetch_atomic(p.ep, &one, 1, NULL, &res, NULL, p.addr,
				     raddr(self, wo, wo), k_wo, FI_UINT64,
				     FI_SUM, NULL));
	EXPECT_EQ(-FI_EACCES, expect_error(p.cq));
	ASSERT_EQ(0, fi_compare_atomic(p.ep, &one, 1, NULL, &one, NULL, &res,
				       NULL, p.addr, raddr(self, wo, wo), k_wo,
				       FI_UINT64, FI_CSWAP, NULL));
	EXPECT_EQ(-FI_EACCES, expect_error(p.cq));
	ASSERT_EQ(0, fi_fetch_atomic(p.ep, NULL, 1, NULL, &res, NULL, p.addr,
				     raddr(self, wo, wo), k_wo, FI_UINT64,
				     FI_ATOMIC_READ, NULL));
	EXPECT_EQ(-FI_EACCES, expect_error(p.cq));
	EXPECT_EQ(5, *(uint64_t *)ro);
	EXPECT_EQ(6, *(uint64_t *)wo);

	/* What each right allows works. */
	ASSERT_EQ(0, fi_fetch_atomic(p.ep, NULL, 1, NULL, &res, NULL, p.addr,
				     raddr(self, ro, ro), k_ro, FI_UINT64,
				     FI_ATOMIC_READ, NULL));
	EXPECT_EQ(0, at_wait(p.cq, NULL));
	EXPECT_EQ(5, res);
	ASSERT_EQ(0, fi_atomic(p.ep, &one, 1, NULL, p.addr,
			       raddr(self, wo, wo), k_wo, FI_UINT64, FI_SUM,
			       NULL));
	EXPECT_EQ(0, at_wait(p.cq, NULL));
	EXPECT_EQ(7, *(uint64_t *)wo);
	fi_close(&mr_ro->fid);
	fi_close(&mr_wo->fid);
}

/* fi_atomicv/fetch/compare v and msg forms, with several iocs; inject. */
TEST_F(atomic, iov_msg_and_inject_forms)
{
	uint64_t *t = (uint64_t *)(self->mem + 128);
	uint64_t o1[2] = { 1, 2 }, o2[1] = { 3 }, r1[1], r2[2];
	uint64_t c1[1] = { 10 }, c2[2] = { 99, 30 };
	struct fi_ioc opv[2] = { { o1, 2 }, { o2, 1 } };
	struct fi_ioc resv[2] = { { r1, 1 }, { r2, 2 } };
	struct fi_ioc cmpv[2] = { { c1, 1 }, { c2, 2 } };
	struct fi_rma_ioc rma = {
		.addr = raddr(self, self->mem, t), .count = 3, .key = self->key,
	};
	struct fi_msg_atomic msg = {
		.msg_iov = opv, .iov_count = 2, .addr = self->a.peer,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = FI_UINT64,
		.op = FI_CSWAP,
	};
	struct fid_ep *ep = self->a.ep;
	uint64_t flags = 0;

	t[0] = 10; t[1] = 20; t[2] = 30;
	ASSERT_EQ(0, fi_atomicv(ep, opv, NULL, 2, self->a.peer, rma.addr,
				self->key, FI_UINT64, FI_SUM, NULL));
	ASSERT_EQ(0, at_wait(self->a.cq, &flags));
	EXPECT_EQ(FI_ATOMIC | FI_WRITE, flags);
	EXPECT_EQ(11, t[0]);
	EXPECT_EQ(22, t[1]);
	EXPECT_EQ(33, t[2]);

	ASSERT_EQ(0, fi_fetch_atomicv(ep, opv, NULL, 2, resv, NULL, 2,
				      self->a.peer, rma.addr, self->key,
				      FI_UINT64, FI_BXOR, NULL));
	ASSERT_EQ(0, at_wait(self->a.cq, &flags));
	EXPECT_EQ(FI_ATOMIC | FI_READ, flags);
	EXPECT_EQ(11, r1[0]);
	EXPECT_EQ(22, r2[0]);
	EXPECT_EQ(33, r2[1]);
	EXPECT_EQ(10, t[0]);
	EXPECT_EQ(20, t[1]);
	EXPECT_EQ(34, t[2]);

	/* Compare msg: swap where compare equals (0 and 2), not at 1. */
	c2[1] = 34;
	ASSERT_EQ(0, fi_compare_atomicmsg(ep, &msg, cmpv, NULL, 2, resv, NULL,
					  2, FI_COMPLETION));
	ASSERT_EQ(0, at_wait(self->a.cq, &flags));
	EXPECT_EQ(1, t[0]);
	EXPECT_EQ(20, t[1]);
	EXPECT_EQ(3, t[2]);
	EXPECT_EQ(10, r1[0]);
	EXPECT_EQ(20, r2[0]);
	EXPECT_EQ(34, r2[1]);

	/* Fetch msg with an rma_ioc count that disagrees: refused. */
	msg.op = FI_SUM;
	rma.count = 2;
	EXPECT_EQ(-FI_EINVAL, fi_fetch_atomicmsg(ep, &msg, resv, NULL, 2, 0));
	rma.count = 3;
	ASSERT_EQ(0, fi_atomicmsg(ep, &msg, FI_COMPLETION));
	ASSERT_EQ(0, at_wait(self->a.cq, NULL));
	EXPECT_EQ(2, t[0]);
	EXPECT_EQ(22, t[1]);
	EXPECT_EQ(6, t[2]);

	/* Inject: no completion; the buffer is free at once. */
	o1[0] = 100;
	ASSERT_EQ(0, fi_inject_atomic(ep, o1, 1, self->a.peer, rma.addr,
				      self->key, FI_UINT64, FI_SUM));
	o1[0] = 0;
	ASSERT_EQ(0, fi_fetch_atomic(ep, NULL, 1, NULL, r1, NULL, self->a.peer,
				     rma.addr, self->key, FI_UINT64,
				     FI_ATOMIC_READ, NULL));
	ASSERT_EQ(0, at_wait(self->a.cq, NULL));
	EXPECT_EQ(102, r1[0]);
	EXPECT_EQ(102, t[0]);
}

/*
 * FI_INJECT frees the buffers an atomic sends, not its results
 * (fi_atomic(3)): in the endpoint's default flags (tx_attr->op_flags) it
 * leaves fi_fetch_atomic and fi_compare_atomic working, their operand and
 * compare values free at once, their results written at completion.
 */
TEST_F(atomic, default_inject_takes_fetch_and_compare)
{
	struct fi_info *info = fi_dupinfo(self->info);
	uint64_t *t = (uint64_t *)(self->mem + 256);
	uint64_t addr = raddr(self, self->mem, t);
	uint64_t opnd = 5, cmp = 15, res = 0, flags = 0;
	struct side d = { 0 };

	ASSERT_NE(NULL, info);
	info->tx_attr->op_flags |= FI_INJECT;
	side_open(_metadata, self->domain, info, &d);
	connect_to(_metadata, &d, &self->b);
	*t = 10;
	ASSERT_EQ(0, fi_fetch_atomic(d.ep, &opnd, 1, NULL, &res, NULL, d.peer,
				     addr, self->key, FI_UINT64, FI_SUM,
				     &res));
	opnd = 1000;
	ASSERT_EQ(0, at_wait(d.cq, &flags));
	EXPECT_EQ(FI_ATOMIC | FI_READ, flags);
	EXPECT_EQ(10, res);
	EXPECT_EQ(15, *t);
	opnd = 99;
	ASSERT_EQ(0, fi_compare_atomic(d.ep, &opnd, 1, NULL, &cmp, NULL, &res,
				       NULL, d.peer, addr, self->key,
				       FI_UINT64, FI_CSWAP, &res));
	opnd = cmp = 1000;
	ASSERT_EQ(0, at_wait(d.cq, &flags));
	EXPECT_EQ(FI_ATOMIC | FI_READ, flags);
	EXPECT_EQ(15, res);
	EXPECT_EQ(99, *t);
	side_close(&d);
	fi_freeinfo(info);
}

/*
 * fi_endpoint(3) FI_FENCE, as for the other operations: refused
 * (-FI_EINVAL) without the capability; with it, a fenced atomic waits
 * for the completion of what was posted before it - a delivery-complete
 * send its target holds, unreceived - and is applied after it.
 */
TEST_F(atomic, fence_needs_the_cap_and_fences)
{
	struct fi_info *info = fi_dupinfo(self->info);
	uint64_t *t = (uint64_t *)(self->mem + 512);
	uint64_t one = 1, v = 7, got = 0;
	struct fi_ioc ioc = { .addr = &one, .count = 1 };
	struct fi_rma_ioc rma = {
		.addr = raddr(self, self->mem, t), .count = 1, .key = self->key,
	};
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc, .iov_count = 1, .addr = self->a.peer,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = FI_UINT64,
		.op = FI_SUM,
	};
	struct iovec siov = { .iov_base = &v, .iov_len = sizeof(v) };
	struct fi_msg sm = { .msg_iov = &siov, .iov_count = 1 };
	struct fi_cq_tagged_entry e;
	struct side f = { 0 };

	ASSERT_NE(NULL, info);
	*t = 0;
	EXPECT_EQ(-FI_EINVAL, fi_atomicmsg(self->a.ep, &msg,
					   FI_COMPLETION | FI_FENCE));

	info->caps |= FI_FENCE;
	side_open(_metadata, self->domain, info, &f);
	connect_to(_metadata, &f, &self->b);
	msg.addr = sm.addr = f.peer;
	ASSERT_EQ(0, fi_sendmsg(f.ep, &sm, FI_COMPLETION |
				FI_DELIVERY_COMPLETE));
	ASSERT_EQ(0, fi_atomicmsg(f.ep, &msg, FI_COMPLETION | FI_FENCE));
	usleep(100000);
	/* Reading progresses (a doorbell): the fence holds. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(f.cq, &e, 1));
	usleep(100000);
	EXPECT_EQ(0, __atomic_load_n(t, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, fi_recv(self->b.ep, &got, sizeof(got), NULL,
			     FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, at_wait(self->b.cq, NULL));
	EXPECT_EQ(7, got);
	ASSERT_EQ(0, at_wait(f.cq, NULL));
	ASSERT_EQ(0, at_wait(f.cq, NULL));
	EXPECT_EQ(1, *t);
	side_close(&f);
	fi_freeinfo(info);
}

/* An element across a page boundary is applied as one. */
TEST_F(atomic, elements_straddling_a_page)
{
	for (int dt = 0; dt < AT_NDT; dt++) {
		struct at_peer p = peer_at(self, &self->a,
					   PAGE - at_size[dt] / 2);
		char why[128];

		if (at_size[dt] < 2)
			continue;
		EXPECT_EQ(0, at_run(&p, AT_COMPARE, FI_CSWAP, dt, why,
				    sizeof(why)))
			TH_LOG("dt %d: %s", dt, why);
		EXPECT_EQ(0, at_run(&p, AT_FETCH, FI_SUM, dt, why,
				    sizeof(why)))
			TH_LOG("dt %d: %s", dt, why);
	}
}

/* Each initiator's: fewer across, where each is a round trip on the wire. */
#define INCREMENTS	3000
#define INCREMENTS_WIRE	200

struct adder {
	struct side *s;
	uint64_t raddr, key;
	int n;
	int failures;
};

static void *add_ones(void *arg)
{
	struct adder *ad = arg;
	uint64_t one = 1, old;

	for (int i = 0; i < ad->n; i++) {
		int ret;

		if (i & 1)
			ret = fi_fetch_atomic(ad->s->ep, &one, 1, NULL, &old,
					      NULL, ad->s->peer, ad->raddr,
					      ad->key, FI_UINT64, FI_SUM, NULL);
		else
			ret = fi_atomic(ad->s->ep, &one, 1, NULL, ad->s->peer,
					ad->raddr, ad->key, FI_UINT64, FI_SUM,
					NULL);
		if (ret == -FI_EAGAIN) {
			i--;
			continue;
		}
		if (ret || at_wait(ad->s->cq, NULL))
			ad->failures++;
	}
	return NULL;
}

/* Two initiators adding 1 to the same word at once: the exact sum. */
TEST_F_TIMEOUT(atomic, concurrent_increments_sum_exactly, 240)
{
	uint64_t *t = (uint64_t *)(self->mem + PAGE + 8);
	uint64_t ra = raddr(self, self->mem, t);
	int n = prov_across() ? INCREMENTS_WIRE : INCREMENTS;
	struct adder x = { .s = &self->a, .raddr = ra, .key = self->key,
			   .n = n };
	struct adder y = { .s = &self->c, .raddr = ra, .key = self->key,
			   .n = n };
	struct timespec t0;
	pthread_t tx, ty;

	*t = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&tx, NULL, add_ones, &x));
	ASSERT_EQ(0, pthread_create(&ty, NULL, add_ones, &y));
	pthread_join(tx, NULL);
	pthread_join(ty, NULL);
	TH_LOG("2 x %d increments in %ld ms", n, sys_ms_since(&t0));
	EXPECT_EQ(0, x.failures);
	EXPECT_EQ(0, y.failures);
	EXPECT_EQ(2 * n, *t);
}

TEST_HARNESS_MAIN
