// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-range MRs (fi_mr_regv / fi_mr_regattr with several iovs,
 * SWNIC_MR_REG_IOV): one key covers the concatenation of the ranges,
 * addressed by offset or, with FI_MR_VIRT_ADDR, from the first range's
 * address; RMA writes and reads and atomics that cross range boundaries
 * land in the right pages; out-of-bounds accesses fail with ERANGE; and
 * the kernel's checks of the raw registration (bad segments, forged keys,
 * segments deregistered under the MR, the segments' own keys).
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "prov_util.h"
#include "mr_util.h"

#define WAIT_MS		5000
#define MEM_LEN		(4 * PAGE)

/* The three ranges, out of address order, one across a page boundary. */
#define S0_OFF		128
#define S0_LEN		1000
#define S1_OFF		(3 * PAGE - 304)
#define S1_LEN		608
#define S2_OFF		2048
#define S2_LEN		200
#define TOTAL		(S0_LEN + S1_LEN + S2_LEN)

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
};

FIXTURE(iov)
{
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct prov_ctx peer;		/* b and the MRs */
	struct side a, b;
	uint8_t *mem;
	struct fid_mr *mr;
	uint64_t key;
	struct iovec iov[3];
};

FIXTURE_VARIANT(iov)
{
	int mr_mode;
	bool odp;
};

FIXTURE_VARIANT_ADD(iov, pinned)
{
	.mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		   FI_MR_PROV_KEY,
};

FIXTURE_VARIANT_ADD(iov, offsets)
{
	.mr_mode = FI_MR_ALLOCATED | FI_MR_PROV_KEY,
};

FIXTURE_VARIANT_ADD(iov, odp)
{
	.mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY,
	.odp = true,
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

FIXTURE_SETUP(iov)
{
	struct prov_ctx local;
	struct fi_info *hints;
	char name[64];
	size_t len = sizeof(name);

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
	hints->domain_attr->mr_mode = variant->mr_mode;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	ASSERT_EQ(0, fi_fabric(self->info->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &self->domain, NULL));
	local = (struct prov_ctx){ .info = self->info, .fabric = self->fabric,
				   .domain = self->domain };
	ASSERT_EQ(0, prov_open_peer(&self->peer, &local, hints));
	fi_freeinfo(hints);
	/* The kernel of this tree has it: one without fails here. */
	ASSERT_TRUE(prov_feature(self->domain, SWNIC_FEAT_MR_IOV));
	ASSERT_EQ(SWNIC_MR_IOV_MAX, self->info->domain_attr->mr_iov_limit);
	side_open(_metadata, self->domain, self->info, &self->a);
	side_open(_metadata, self->peer.domain, self->peer.info, &self->b);
	ASSERT_EQ(0, fi_getname(&self->b.ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(self->a.av, name, 1, &self->a.peer, 0,
				  NULL));

	self->mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	memset(self->mem, 0xee, MEM_LEN);
	self->iov[0] = (struct iovec){ self->mem + S0_OFF, S0_LEN };
	self->iov[1] = (struct iovec){ self->mem + S1_OFF, S1_LEN };
	self->iov[2] = (struct iovec){ self->mem + S2_OFF, S2_LEN };
	ASSERT_EQ(0, fi_mr_regv(self->peer.domain, self->iov, 3,
				FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				&self->mr, NULL));
	self->key = fi_mr_key(self->mr);
}

FIXTURE_TEARDOWN(iov)
{
	if (self->mr)
		fi_close(&self->mr->fid);
	side_close(&self->a);
	side_close(&self->b);
	prov_close(&self->peer);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
	if (self->mem && self->mem != MAP_FAILED)
		munmap(self->mem, MEM_LEN);
}

/* The RMA address of byte @off of the concatenation. */
static uint64_t raddr(FIXTURE_DATA(iov) *self, uint64_t off)
{
	if (self->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)self->iov[0].iov_base + off;
	return off;
}

/* Byte @off of the concatenation, in the registered memory. */
static uint8_t *at(FIXTURE_DATA(iov) *self, uint64_t off)
{
	for (int i = 0; i < 3; i++) {
		if (off < self->iov[i].iov_len)
			return (uint8_t *)self->iov[i].iov_base + off;
		off -= self->iov[i].iov_len;
	}
	return NULL;
}

/* One completion on @cq: 0, or -err of an error completion. */
static int cq_wait(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = {};

	for (int i = 0; i < WAIT_MS; i++) {
		ssize_t n = fi_cq_read(cq, &e, 1);

		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			if (fi_cq_readerr(cq, &err, 0) != 1)
				return -FI_EOTHER;
			return -err.err;
		}
		if (n != -FI_EAGAIN)
			return (int)n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

TEST_F(iov, write_and_read_across_ranges)
{
	uint8_t src[TOTAL], back[TOTAL];
	uint64_t i;

	for (i = 0; i < TOTAL; i++)
		src[i] = (uint8_t)(i * 13 + 1);
	/* The whole concatenation. */
	ASSERT_EQ(0, fi_write(self->a.ep, src, TOTAL, NULL, self->a.peer,
			      raddr(self, 0), self->key, NULL));
	ASSERT_EQ(0, cq_wait(self->a.cq));
	for (i = 0; i < TOTAL; i++)
		ASSERT_EQ(src[i], *at(self, i)) TH_LOG("byte %lu", (long)i);
	/* Around the ranges: untouched. */
	EXPECT_EQ(0xee, self->mem[S0_OFF - 1]);
	EXPECT_EQ(0xee, self->mem[S0_OFF + S0_LEN]);
	EXPECT_EQ(0xee, self->mem[S1_OFF - 1]);
	EXPECT_EQ(0xee, self->mem[S1_OFF + S1_LEN]);
	EXPECT_EQ(0xee, self->mem[S2_OFF + S2_LEN]);

	/* A write across range 0 -> 1, a read across 1 -> 2. */
	memset(src, 0x5a, 40);
	ASSERT_EQ(0, fi_write(self->a.ep, src, 40, NULL, self->a.peer,
			      raddr(self, S0_LEN - 20), self->key, NULL));
	ASSERT_EQ(0, cq_wait(self->a.cq));
	EXPECT_EQ(0x5a, self->mem[S0_OFF + S0_LEN - 20]);
	EXPECT_EQ(0x5a, self->mem[S0_OFF + S0_LEN - 1]);
	EXPECT_EQ(0x5a, self->mem[S1_OFF]);
	EXPECT_EQ(0x5a, self->mem[S1_OFF + 19]);
	EXPECT_NE(0x5a, self->mem[S1_OFF + 20]);
	memset(back, 0, sizeof(back));
	ASSERT_EQ(0, fi_read(self->a.ep, back, 300, NULL, self->a.peer,
			     raddr(self, S0_LEN + S1_LEN - 150), self->key,
			     NULL));
	ASSERT_EQ(0, cq_wait(self->a.cq));
	for (i = 0; i < 300; i++)
		ASSERT_EQ(*at(self, S0_LEN + S1_LEN - 150 + i), back[i]);
	EXPECT_EQ(0, memcmp(back, self->mem + S1_OFF + S1_LEN - 150, 150));
	EXPECT_EQ(0, memcmp(back + 150, self->mem + S2_OFF, 150));
}

TEST_F(iov, out_of_bounds_fails)
{
	uint8_t buf[64] = { 1 };

	ASSERT_EQ(0, fi_write(self->a.ep, buf, 10, NULL, self->a.peer,
			      raddr(self, TOTAL - 5), self->key, NULL));
	EXPECT_EQ(-ERANGE, cq_wait(self->a.cq));
	EXPECT_EQ(0xee, self->mem[S2_OFF + S2_LEN]);
	ASSERT_EQ(0, fi_read(self->a.ep, buf, 1, NULL, self->a.peer,
			     raddr(self, TOTAL), self->key, NULL));
	EXPECT_EQ(-ERANGE, cq_wait(self->a.cq));
	if (self->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) {
		/* Below the first range's address. */
		ASSERT_EQ(0, fi_read(self->a.ep, buf, 1, NULL, self->a.peer,
				     raddr(self, 0) - 1, self->key, NULL));
		EXPECT_EQ(-ERANGE, cq_wait(self->a.cq));
	}
	/* Another key. */
	ASSERT_EQ(0, fi_read(self->a.ep, buf, 1, NULL, self->a.peer,
			     raddr(self, 0), self->key + 1, NULL));
	EXPECT_EQ(-FI_ENOKEY, cq_wait(self->a.cq));
}

TEST_F(iov, atomics_across_ranges)
{
	uint64_t ones[4] = { 1, 1, 1, 1 }, v[4] = { 10, 20, 30, 40 }, r;
	uint64_t old[2], base;
	struct iovec odd[2], odd3[3];
	struct fid_mr *mr;
	uint8_t *p;

	/* Four u64: the last of range 0 and the first three of range 1. */
	memcpy(at(self, S0_LEN - 8), &v[0], 8);
	memcpy(at(self, S0_LEN), &v[1], 24);
	ASSERT_EQ(0, fi_atomic(self->a.ep, ones, 4, NULL, self->a.peer,
			       raddr(self, S0_LEN - 8), self->key, FI_UINT64,
			       FI_SUM, NULL));
	ASSERT_EQ(0, cq_wait(self->a.cq));
	memcpy(&r, self->mem + S0_OFF + S0_LEN - 8, 8);
	EXPECT_EQ(11, r);
	memcpy(&r, self->mem + S1_OFF, 8);
	EXPECT_EQ(21, r);
	memcpy(&r, self->mem + S1_OFF + 16, 8);
	EXPECT_EQ(41, r);
	/* Fetching, in range 2. */
	memcpy(at(self, S0_LEN + S1_LEN + 8), &v[3], 8);
	ASSERT_EQ(0, fi_fetch_atomic(self->a.ep, ones, 1, NULL, &r, NULL,
				     self->a.peer,
				     raddr(self, S0_LEN + S1_LEN + 8),
				     self->key, FI_UINT64, FI_SUM, NULL));
	ASSERT_EQ(0, cq_wait(self->a.cq));
	EXPECT_EQ(40, r);
	memcpy(&r, self->mem + S2_OFF + 8, 8);
	EXPECT_EQ(41, r);

	/* An element across two ranges (12 + 20 bytes) is refused. */
	p = self->mem + 3 * PAGE;
	memset(p, 0, 64);
	odd[0] = (struct iovec){ p, 12 };
	odd[1] = (struct iovec){ p + 32, 20 };
	ASSERT_EQ(0, fi_mr_regv(self->peer.domain, odd, 2,
				FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				&mr, NULL));
	ASSERT_EQ(0, fi_atomic(self->a.ep, ones, 1, NULL, self->a.peer,
			       (self->info->domain_attr->mr_mode &
				FI_MR_VIRT_ADDR ? (uintptr_t)p : 0) + 8,
			       fi_mr_key(mr), FI_UINT64, FI_SUM, NULL));
	EXPECT_EQ(-ERANGE, cq_wait(self->a.cq));
	EXPECT_EQ(0, p[8]);
	EXPECT_EQ(0, p[32]);
	/* A u32 that fits range 0's end is fine. */
	ASSERT_EQ(0, fi_atomic(self->a.ep, ones, 1, NULL, self->a.peer,
			       (self->info->domain_attr->mr_mode &
				FI_MR_VIRT_ADDR ? (uintptr_t)p : 0) + 8,
			       fi_mr_key(mr), FI_UINT32, FI_SUM, NULL));
	EXPECT_EQ(0, cq_wait(self->a.cq));
	EXPECT_EQ(1, p[8]);
	EXPECT_EQ(0, fi_close(&mr->fid));

	/*
	 * Element 0 fits range 0 (8 bytes), element 1 straddles ranges 1
	 * (4) and 2: refused before anything is applied, the fetched old
	 * values too. Before, element 0 was added to, then ERANGE.
	 */
	memset(p, 0, 96);
	odd3[0] = (struct iovec){ p, 8 };
	odd3[1] = (struct iovec){ p + 32, 4 };
	odd3[2] = (struct iovec){ p + 64, 20 };
	ASSERT_EQ(0, fi_mr_regv(self->peer.domain, odd3, 3,
				FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				&mr, NULL));
	base = self->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
	       (uintptr_t)p : 0;
	ASSERT_EQ(0, fi_atomic(self->a.ep, ones, 2, NULL, self->a.peer, base,
			       fi_mr_key(mr), FI_UINT64, FI_SUM, NULL));
	EXPECT_EQ(-ERANGE, cq_wait(self->a.cq));
	memcpy(&r, p, 8);
	EXPECT_EQ(0, r);
	old[0] = old[1] = 77;
	ASSERT_EQ(0, fi_fetch_atomic(self->a.ep, ones, 2, NULL, old, NULL,
				     self->a.peer, base, fi_mr_key(mr),
				     FI_UINT64, FI_SUM, NULL));
	EXPECT_EQ(-ERANGE, cq_wait(self->a.cq));
	memcpy(&r, p, 8);
	EXPECT_EQ(0, r);
	EXPECT_EQ(0, p[32]);
	EXPECT_EQ(0, fi_close(&mr->fid));
}

TEST_F(iov, regv_limits)
{
	struct iovec many[SWNIC_MR_IOV_MAX + 1], bad[2];
	struct fid_mr *mr;
	int i;

	for (i = 0; i <= SWNIC_MR_IOV_MAX; i++)
		many[i] = (struct iovec){ self->mem + i * 64, 64 };
	ASSERT_EQ(0, fi_mr_regv(self->domain, many, SWNIC_MR_IOV_MAX,
				FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(-FI_EINVAL, fi_mr_regv(self->domain, many,
					 SWNIC_MR_IOV_MAX + 1,
					 FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	bad[0] = many[0];
	bad[1] = (struct iovec){ self->mem + 512, 0 };
	EXPECT_EQ(-FI_EINVAL, fi_mr_regv(self->domain, bad, 2,
					 FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	/* Memory that is not mapped in one range (pinned: now). */
	bad[1] = (struct iovec){ (void *)8, 64 };
	if (!variant->odp)
		EXPECT_NE(0, fi_mr_regv(self->domain, bad, 2, FI_REMOTE_READ,
					0, 0, 0, &mr, NULL));
}

/* ---- the raw ABI ---------------------------------------------------------- */

static int reg_iov(int fd, const uint32_t *handles, uint32_t n,
		   uint32_t access, uint32_t flags, uint64_t *key,
		   uint32_t *handle)
{
	struct swnic_mr_reg r = {
		.size = sizeof(r), .flags = SWNIC_MR_REG_IOV | flags,
		.access = access, .nsegs = n, .segs = (uintptr_t)handles,
	};

	if (ioctl(fd, SWNIC_IOCTL_MR_REG, &r))
		return -errno;
	*key = r.key;
	*handle = r.handle;
	return 0;
}

TEST(raw_iov_checks)
{
	uint8_t *mem, buf[256], out[256];
	uint32_t h[4] = {}, hp = 0, hp2 = 0, hbad[2];
	struct swnic_mr_query q;
	uint64_t kseg = 0, kp = 0, kp2 = 0;
	int fd, i;

	PROV_REQUIRE_DEVICE();
	PROV_ONE_HOST();
	fd = mr_open();
	ASSERT_LE(0, fd);
	mem = map_anon(4 * PAGE);
	ASSERT_NE(NULL, mem);
	memset(mem, 0, 4 * PAGE);
	/* Segments: local rights only (RECV: writable pins). */
	ASSERT_EQ(0, mr_reg_full(fd, mem + PAGE - 64, 128,
				 SWNIC_MR_ACCESS_RECV, 0, 0, 0, &kseg, &h[0]));
	ASSERT_EQ(0, mr_reg_full(fd, mem + 3 * PAGE, 100,
				 SWNIC_MR_ACCESS_RECV, 0, 0, 0, &kseg, &h[1]));
	ASSERT_EQ(0, mr_reg_full(fd, mem, 64, SWNIC_MR_ACCESS_SEND, 0, 0, 0,
				 &kseg, &h[2]));
	ASSERT_EQ(0, reg_iov(fd, h, 2, SWNIC_MR_ACCESS_REMOTE_READ |
			     SWNIC_MR_ACCESS_REMOTE_WRITE |
			     SWNIC_MR_ACCESS_SEND, 0, &kp, &hp));
	ASSERT_EQ(0, mr_query(fd, hp, &q));
	EXPECT_EQ((uintptr_t)(mem + PAGE - 64), q.addr);
	EXPECT_EQ(228, q.length);
	EXPECT_EQ(SWNIC_MR_REG_IOV, q.reg_flags);

	/* A peer's write and read across the boundary (offset 100..140). */
	for (i = 0; i < 40; i++)
		buf[i] = (uint8_t)(i + 1);
	ASSERT_EQ(0, mr_poke(fd, kp, 100, buf, 40));
	EXPECT_EQ(0, memcmp(mem + PAGE - 64 + 100, buf, 28));
	EXPECT_EQ(0, memcmp(mem + 3 * PAGE, buf + 28, 12));
	ASSERT_EQ(0, mr_peek(fd, kp, 100, out, 40));
	EXPECT_EQ(0, memcmp(out, buf, 40));
	/* Bounds: the sum, not either segment. */
	EXPECT_EQ(0, mr_peek(fd, kp, 0, out, 228));
	EXPECT_EQ(-ERANGE, mr_peek(fd, kp, 1, out, 228));
	EXPECT_EQ(-ERANGE, mr_peek(fd, kp, 228, out, 1));
	EXPECT_EQ(-ERANGE, mr_peek(fd, kp, UINT64_MAX, out, 2));
	/* Forged keys; a segment's own key has no remote right. */
	EXPECT_EQ(-ENOKEY, mr_peek(fd, kp ^ 0x100, 0, out, 1));
	EXPECT_EQ(-EACCES, mr_peek(fd, kseg, 0, out, 1));
	/* The owner's own access by address: in the segment that has it. */
	EXPECT_EQ(0, mr_access(fd, 0, SWNIC_MR_ACCESS_F_LOCAL,
			       SWNIC_MR_ACCESS_SEND, kp, 0,
			       (uintptr_t)(mem + 3 * PAGE), out, 12));
	EXPECT_EQ(0, memcmp(out, buf + 28, 12));
	EXPECT_EQ(-ERANGE, mr_access(fd, 0, SWNIC_MR_ACCESS_F_LOCAL,
				     SWNIC_MR_ACCESS_SEND, kp, 0,
				     (uintptr_t)(mem + PAGE + 60), out, 8));

	/* Bad registrations. */
	EXPECT_EQ(-EINVAL, reg_iov(fd, h, 0, SWNIC_MR_ACCESS_REMOTE_READ, 0,
				   &kp2, &hp2));
	EXPECT_EQ(-EINVAL, reg_iov(fd, h, SWNIC_MR_IOV_MAX + 1,
				   SWNIC_MR_ACCESS_REMOTE_READ, 0, &kp2, &hp2));
	hbad[0] = h[0];
	hbad[1] = 0xdead;
	EXPECT_EQ(-EINVAL, reg_iov(fd, hbad, 2, SWNIC_MR_ACCESS_REMOTE_READ,
				   0, &kp2, &hp2));
	hbad[1] = hp;		/* an IOV MR as a segment */
	EXPECT_EQ(-EINVAL, reg_iov(fd, hbad, 2, SWNIC_MR_ACCESS_REMOTE_READ,
				   0, &kp2, &hp2));
	/* Peers' writes need writable segments. */
	hbad[1] = h[2];
	EXPECT_EQ(-EINVAL, reg_iov(fd, hbad, 2, SWNIC_MR_ACCESS_REMOTE_WRITE,
				   0, &kp2, &hp2));
	EXPECT_EQ(0, reg_iov(fd, hbad, 2, SWNIC_MR_ACCESS_REMOTE_READ, 0,
			     &kp2, &hp2));
	EXPECT_EQ(0, mr_dereg(fd, hp2));
	EXPECT_EQ(-EINVAL, reg_iov(fd, h, 2, SWNIC_MR_ACCESS_REMOTE_READ,
				   SWNIC_MR_REG_ODP, &kp2, &hp2));
	EXPECT_EQ(-EFAULT, reg_iov(fd, (uint32_t *)8, 2,
				   SWNIC_MR_ACCESS_REMOTE_READ, 0, &kp2, &hp2));
	{
		struct swnic_mr_reg r = {
			.size = sizeof(r), .flags = SWNIC_MR_REG_IOV,
			.addr = (uintptr_t)mem, .length = 64,
			.access = SWNIC_MR_ACCESS_REMOTE_READ, .nsegs = 1,
			.segs = (uintptr_t)h,
		};

		EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_MR_REG, &r));
		EXPECT_EQ(EINVAL, errno);
		/* Segments without REG_IOV. */
		r.flags = 0;
		EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_MR_REG, &r));
		EXPECT_EQ(EINVAL, errno);
		r.nsegs = 0;
		r.__reserved3 = 1;
		EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_MR_REG, &r));
		EXPECT_EQ(EINVAL, errno);
	}

	/* A segment deregistered under the MR: its part is gone. */
	ASSERT_EQ(0, mr_dereg(fd, h[1]));
	EXPECT_EQ(0, mr_peek(fd, kp, 0, out, 128));
	EXPECT_EQ(-ENOKEY, mr_peek(fd, kp, 120, out, 16));
	EXPECT_EQ(-ENOKEY, mr_peek(fd, kp, 128, out, 1));
	/* A refresh says so (and pins nothing of it again). */
	EXPECT_EQ(-EFAULT, mr_refresh(fd, hp, NULL));
	/* ...and a new IOV MR cannot take it. */
	EXPECT_EQ(-EINVAL, reg_iov(fd, h, 2, SWNIC_MR_ACCESS_REMOTE_READ, 0,
				   &kp2, &hp2));
	EXPECT_EQ(0, mr_dereg(fd, hp));
	EXPECT_EQ(-ENOKEY, mr_peek(fd, kp, 0, out, 1));
	EXPECT_EQ(0, mr_dereg(fd, h[0]));
	EXPECT_EQ(0, mr_dereg(fd, h[2]));

	/* The domain closes with an IOV MR and its segments registered. */
	ASSERT_EQ(0, mr_reg_full(fd, mem, 64, SWNIC_MR_ACCESS_RECV, 0, 0, 0,
				 &kseg, &h[0]));
	ASSERT_EQ(0, reg_iov(fd, h, 1, SWNIC_MR_ACCESS_REMOTE_WRITE, 0, &kp,
			     &hp));
	close(fd);
	munmap(mem, 4 * PAGE);
}

/*
 * A file the caller may only read, mapped read-only: its segment pins the
 * page cache's own pages (read-only). No IOV MR with a right the kernel
 * writes for - RECV, READ, REMOTE_WRITE - may take that segment, and the
 * file is never written through one.
 */
TEST(raw_iov_read_only_segment_is_never_written)
{
	static const uint32_t writes[] = {
		SWNIC_MR_ACCESS_RECV, SWNIC_MR_ACCESS_READ,
		SWNIC_MR_ACCESS_REMOTE_WRITE,
	};
	char path[] = "/tmp/swnic-mr-iov-ro.XXXXXX", text[PAGE];
	uint8_t payload[64], *p;
	uint64_t kseg = 0, k = 0;
	uint32_t h = 0, hi = 0;
	int fd, ffd;
	size_t i;

	PROV_REQUIRE_DEVICE();
	PROV_ONE_HOST();
	memset(text, 'r', sizeof(text));
	ffd = mkstemp(path);
	ASSERT_LE(0, ffd);
	ASSERT_EQ((ssize_t)sizeof(text), write(ffd, text, sizeof(text)));
	close(ffd);
	ffd = open(path, O_RDONLY);
	unlink(path);
	ASSERT_LE(0, ffd);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, ffd, 0);
	ASSERT_NE(MAP_FAILED, p);
	fd = mr_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mr_reg_full(fd, p, PAGE, SWNIC_MR_ACCESS_SEND, 0, 0, 0,
				 &kseg, &h));
	for (i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
		EXPECT_EQ(-EINVAL, reg_iov(fd, &h, 1, writes[i] |
					   SWNIC_MR_ACCESS_SEND, 0, &k, &hi));
	/* Reading it is fine; writing through it is refused. */
	ASSERT_EQ(0, reg_iov(fd, &h, 1, SWNIC_MR_ACCESS_SEND |
			     SWNIC_MR_ACCESS_REMOTE_READ, 0, &k, &hi));
	memset(payload, 'X', sizeof(payload));
	EXPECT_NE(0, mr_access(fd, 0, SWNIC_MR_ACCESS_F_LOCAL |
			       SWNIC_MR_ACCESS_F_WRITE, SWNIC_MR_ACCESS_RECV,
			       k, 0, (uintptr_t)p, payload, sizeof(payload)));
	EXPECT_NE(0, mr_poke(fd, k, 0, payload, sizeof(payload)));
	EXPECT_EQ(0, memcmp(p, text, sizeof(text)));
	EXPECT_EQ(0, mr_dereg(fd, hi));
	EXPECT_EQ(0, mr_dereg(fd, h));
	close(fd);
	munmap(p, PAGE);
	close(ffd);
}

TEST_HARNESS_MAIN
