// SPDX-License-Identifier: GPL-2.0
/*
 * RMA through MR keys: writes and reads into a target's registered memory,
 * with and without remote CQ data, VA and offset addressing, every check
 * (key, access right, bounds, revocation) and a target that never runs.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "swnic_rings.h"

#define DEV_PATH "/dev/swnic0"
#define MR_LEN (3 * 4096)

static int mr_reg(int dom, void *addr, uint64_t len, uint32_t access,
		  uint32_t flags, uint64_t *key, uint32_t *handle)
{
	struct swnic_mr_reg r = {
		.size = sizeof(r), .flags = flags, .addr = (uintptr_t)addr,
		.length = len, .access = access,
	};

	if (ioctl(dom, SWNIC_IOCTL_MR_REG, &r))
		return -errno;
	*key = r.key;
	if (handle)
		*handle = r.handle;
	return 0;
}

FIXTURE(rma)
{
	int da, db;
	struct t_cq ca, cb;
	struct t_ep a, b;
	uint8_t *target;		/* B's registered memory */
	uint64_t key;			/* VA-addressed, remote read + write */
};

FIXTURE_SETUP(rma)
{
	self->da = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	self->db = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->da);
	ASSERT_LE(0, self->db);
	ASSERT_EQ(0, t_cq_create(self->da, 64, &self->ca));
	ASSERT_EQ(0, t_cq_create(self->db, 64, &self->cb));
	ASSERT_EQ(0, t_ep_create(self->da, &self->ca, &self->ca, 0, 0, 32,
				 &self->a));
	ASSERT_EQ(0, t_ep_create(self->db, &self->cb, &self->cb, 0, 0, 32,
				 &self->b));
	self->target = mmap(NULL, MR_LEN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->target);
	memset(self->target, 0, MR_LEN);
	ASSERT_EQ(0, mr_reg(self->db, self->target, MR_LEN,
			    SWNIC_MR_ACCESS_REMOTE_READ |
			    SWNIC_MR_ACCESS_REMOTE_WRITE,
			    SWNIC_MR_REG_VIRT_ADDR, &self->key, NULL));
}

FIXTURE_TEARDOWN(rma)
{
	t_ep_destroy(&self->a);
	t_ep_destroy(&self->b);
	close(self->ca.fd);
	close(self->cb.fd);
	close(self->da);
	close(self->db);
	munmap(self->target, MR_LEN);
}

static struct swnic_sqe rma_sqe(uint8_t op, void *buf, uint64_t len,
				uint64_t raddr, uint64_t rkey,
				const struct t_ep *to, uint64_t ctx)
{
	struct swnic_sqe s = t_send(buf, len, to, ctx);

	s.opcode = op;
	s.raddr = raddr;
	s.rkey = rkey;
	return s;
}

/* Post on a, ring, and return a's completion. */
static struct swnic_cqe post(struct __test_metadata *_metadata,
			     FIXTURE_DATA(rma) *self, struct swnic_sqe *s)
{
	struct swnic_cqe c = {};

	EXPECT_EQ(0, t_ring_push(&self->a.sq, s));
	EXPECT_EQ(0, t_doorbell(&self->a, NULL));
	EXPECT_EQ(1, t_cq_pop(&self->ca, &c));
	return c;
}

TEST_F(rma, write_across_pages)
{
	uint8_t src[6000];
	uint64_t at = (uintptr_t)self->target + 1000;
	struct swnic_sqe s = rma_sqe(SWNIC_OP_WRITE, src, sizeof(src), at,
				     self->key, &self->b, 1);
	struct swnic_cqe c;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + 5);
	c = post(_metadata, self, &s);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(SWNIC_CQE_RMA_WRITE, c.flags);
	EXPECT_EQ(sizeof(src), c.len);
	EXPECT_EQ(0, memcmp(self->target + 1000, src, sizeof(src)));
	EXPECT_EQ(0, self->target[999]);
	EXPECT_EQ(0, self->target[1000 + sizeof(src)]);
	/* No remote CQ data asked: the target sees no completion. */
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
}

TEST_F(rma, write_with_remote_cq_data)
{
	uint64_t v = 0xfeedface;
	struct swnic_sqe s = rma_sqe(SWNIC_OP_WRITE, &v, sizeof(v),
				     (uintptr_t)self->target, self->key,
				     &self->b, 1);
	struct swnic_cqe c;

	s.flags |= SWNIC_SQE_REMOTE_DATA;
	s.data = 77;
	c = post(_metadata, self, &s);
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(SWNIC_CQE_REMOTE_WRITE | SWNIC_CQE_REMOTE_DATA, c.flags);
	EXPECT_EQ(77, c.data);
	EXPECT_EQ(sizeof(v), c.len);
	EXPECT_EQ(self->a.port, c.src_port);
	EXPECT_EQ(0, memcmp(self->target, &v, sizeof(v)));
}

TEST_F(rma, inline_write)
{
	struct swnic_sqe s = rma_sqe(SWNIC_OP_WRITE, NULL, 5,
				     (uintptr_t)self->target + 10, self->key,
				     &self->b, 1);
	struct swnic_cqe c;

	s.flags |= SWNIC_SQE_INLINE;
	memcpy(s.inline_data, "hello", 5);
	c = post(_metadata, self, &s);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(0, memcmp(self->target + 10, "hello", 5));
}

TEST_F(rma, read_back)
{
	uint8_t dst[4096 + 100];
	struct swnic_sqe s = rma_sqe(SWNIC_OP_READ, dst, sizeof(dst),
				     (uintptr_t)self->target + 4000, self->key,
				     &self->b, 9);
	struct swnic_cqe c;

	for (int i = 0; i < MR_LEN; i++)
		self->target[i] = (uint8_t)(i ^ 0x5a);
	memset(dst, 0, sizeof(dst));
	c = post(_metadata, self, &s);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(SWNIC_CQE_RMA_READ, c.flags);
	EXPECT_EQ(9, c.context);
	EXPECT_EQ(0, memcmp(dst, self->target + 4000, sizeof(dst)));
}

TEST_F(rma, offset_addressing)
{
	uint64_t key = 0, v = 0x0102030405060708ULL;
	struct swnic_sqe s;
	struct swnic_cqe c;

	/* Without VIRT_ADDR a peer addresses the MR from offset 0. */
	ASSERT_EQ(0, mr_reg(self->db, self->target + 4096, 4096,
			    SWNIC_MR_ACCESS_REMOTE_WRITE, 0, &key, NULL));
	s = rma_sqe(SWNIC_OP_WRITE, &v, sizeof(v), 8, key, &self->b, 1);
	c = post(_metadata, self, &s);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(0, memcmp(self->target + 4096 + 8, &v, sizeof(v)));
}

TEST_F(rma, every_check_refuses)
{
	uint8_t buf[64] = { 0xee };
	uint8_t before[MR_LEN];
	uint64_t ro_key = 0;
	uintptr_t base = (uintptr_t)self->target;
	struct swnic_sqe s;
	struct swnic_cqe c;

	memcpy(before, self->target, MR_LEN);
	ASSERT_EQ(0, mr_reg(self->db, self->target, 4096,
			    SWNIC_MR_ACCESS_REMOTE_READ,
			    SWNIC_MR_REG_VIRT_ADDR, &ro_key, NULL));

	/* Unknown key. */
	s = rma_sqe(SWNIC_OP_WRITE, buf, 8, base, self->key ^ 0x10000, &self->b, 1);
	c = post(_metadata, self, &s);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_NE(0, c.err);
	/* Read-only MR written. */
	s = rma_sqe(SWNIC_OP_WRITE, buf, 8, base, ro_key, &self->b, 2);
	c = post(_metadata, self, &s);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_NE(0, c.err);
	/* Past the end, and before the start. */
	s = rma_sqe(SWNIC_OP_WRITE, buf, 64, base + MR_LEN - 32, self->key,
		    &self->b, 3);
	c = post(_metadata, self, &s);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	s = rma_sqe(SWNIC_OP_WRITE, buf, 8, base - 8, self->key, &self->b, 4);
	c = post(_metadata, self, &s);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	/* The key of B's MR is B's: A's own domain has no such MR. */
	s = rma_sqe(SWNIC_OP_WRITE, buf, 8, base, self->key, &self->a, 5);
	c = post(_metadata, self, &s);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	/* A read into an unwritable local buffer faults. */
	s = rma_sqe(SWNIC_OP_READ, (void *)"const", 4, base, self->key,
		    &self->b, 6);
	c = post(_metadata, self, &s);
	EXPECT_EQ(EFAULT, c.err);

	EXPECT_EQ(0, memcmp(before, self->target, MR_LEN));
}

/* An atomic SQE: every field the kernel takes is checked. */
TEST_F(rma, atomic_fields_are_validated)
{
	uint64_t one = 1, res = 0, cmp = 5, *t = (uint64_t *)self->target;
	uintptr_t base = (uintptr_t)self->target;
	static const struct {
		uint8_t opcode, op, dt, apad;
		uint32_t flags;
		uint64_t len;
		int err;
	} bad[] = {
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_NUM, SWNIC_ADT_UINT64, 0, 0, 8,
		  EOPNOTSUPP },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_NUM, 0, 0, 8,
		  EOPNOTSUPP },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_ATOMIC_READ, SWNIC_ADT_UINT64, 0, 0,
		  8, EOPNOTSUPP },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_CSWAP, SWNIC_ADT_UINT64, 0, 0, 8,
		  EOPNOTSUPP },
		{ SWNIC_OP_COMPARE_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_UINT64, 0, 0,
		  8, EOPNOTSUPP },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_BOR, SWNIC_ADT_DOUBLE, 0, 0, 8,
		  EOPNOTSUPP },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_MIN, SWNIC_ADT_DOUBLE_COMPLEX, 0, 0,
		  16, EOPNOTSUPP },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_UINT64, 1, 0, 8,
		  EINVAL },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_UINT64, 0, 0, 0,
		  EINVAL },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_UINT64, 0, 0, 12,
		  EINVAL },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_UINT8, 0, 0,
		  SWNIC_ATOMIC_MAX + 1, EINVAL },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_UINT64, 0,
		  SWNIC_SQE_REMOTE_DATA, 8, EINVAL },
		{ SWNIC_OP_ATOMIC, SWNIC_AOP_SUM, SWNIC_ADT_UINT64, 0,
		  SWNIC_SQE_DELIVERY, 8, EINVAL },
		{ SWNIC_OP_COMPARE_ATOMIC, SWNIC_AOP_CSWAP, SWNIC_ADT_UINT64, 0,
		  SWNIC_SQE_INLINE, 8, EINVAL },
	};
	struct swnic_sqe s;
	struct swnic_cqe c;

	*t = 5;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = rma_sqe(bad[i].opcode, &one, bad[i].len, base, self->key,
			    &self->b, 10 + i);
		s.atomic_op = bad[i].op;
		s.datatype = bad[i].dt;
		s.__apad = bad[i].apad;
		s.flags |= bad[i].flags;
		s.tag = (uintptr_t)&res;
		s.data = (uintptr_t)&cmp;
		c = post(_metadata, self, &s);
		EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
		EXPECT_EQ(bad[i].err, c.err) TH_LOG("case %zu", i);
	}
	EXPECT_EQ(5, *t);

	/* A result buffer in the kernel's half, or not writable. */
	s = rma_sqe(SWNIC_OP_FETCH_ATOMIC, &one, 8, base, self->key, &self->b,
		    30);
	s.atomic_op = SWNIC_AOP_SUM;
	s.datatype = SWNIC_ADT_UINT64;
	s.tag = 0xffff888000000000ULL;
	c = post(_metadata, self, &s);
	EXPECT_EQ(EINVAL, c.err);
	s.tag = (uintptr_t)"const";
	c = post(_metadata, self, &s);
	EXPECT_EQ(EFAULT, c.err);
	EXPECT_EQ(5, *t);

	/* The same, valid: applied, old value fetched. */
	s.tag = (uintptr_t)&res;
	c = post(_metadata, self, &s);
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(5, res);
	EXPECT_EQ(6, *t);
	/* Compare: swap 6 for 1 where the compare value (6) is equal. */
	cmp = 6;
	s.opcode = SWNIC_OP_COMPARE_ATOMIC;
	s.atomic_op = SWNIC_AOP_CSWAP;
	s.data = (uintptr_t)&cmp;
	c = post(_metadata, self, &s);
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(6, res);
	EXPECT_EQ(1, *t);
	/* Inline operand. */
	s = rma_sqe(SWNIC_OP_ATOMIC, NULL, 8, base, self->key, &self->b, 31);
	s.atomic_op = SWNIC_AOP_SUM;
	s.datatype = SWNIC_ADT_UINT64;
	s.flags |= SWNIC_SQE_INLINE;
	memcpy(s.inline_data, &one, 8);
	c = post(_metadata, self, &s);
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(2, *t);
}

#if defined(__x86_64__)
/*
 * Ring @s's doorbell with the x87 control word @cw, then clear what the
 * call left pending and restore the default. Nothing between the two
 * fldcw runs x87 code but the kernel's.
 */
static int doorbell_with_x87_cw(struct t_ep *ep, uint16_t cw)
{
	const uint16_t dflt = 0x037f;
	int ret;

	__asm__ volatile("fldcw %0" : : "m"(cw));
	ret = t_doorbell(ep, NULL);
	__asm__ volatile("fnclex\n\tfldcw %0" : : "m"(dflt));
	return ret;
}

/*
 * The long doubles are x87 code in the kernel: they run with the default
 * x87 modes, not those the caller left. A precision of 24 bits would
 * round 1 + 2^-60 to 1; every exception unmasked (an inexact sum) would
 * raise #MF in the kernel, an oops.
 */
TEST_F(rma, long_double_atomics_use_the_default_x87_modes)
{
	long double *t = (long double *)(self->target + 64);
	long double opnd = 0x1p-60L, want = 1.0L + 0x1p-60L;
	uint64_t base = (uintptr_t)t;
	struct swnic_sqe s;
	struct swnic_cqe c = {};

	ASSERT_NE(1.0L, want);
	*t = 1.0L;
	s = rma_sqe(SWNIC_OP_ATOMIC, &opnd, sizeof(opnd), base, self->key,
		    &self->b, 40);
	s.atomic_op = SWNIC_AOP_SUM;
	s.datatype = SWNIC_ADT_LONG_DOUBLE;

	/* Single precision (PC 00), exceptions masked. */
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, doorbell_with_x87_cw(&self->a, 0x007f));
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %u", c.err);
	EXPECT_TRUE(*t == want) TH_LOG("1 + 2^-60 came out %La", *t);

	/* Extended precision, every exception unmasked: inexact. */
	opnd = 0x1p-70L;
	*t = 1.0L;
	s.context = 41;
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, doorbell_with_x87_cw(&self->a, 0x0340));
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %u", c.err);
	EXPECT_TRUE(*t == 1.0L + 0x1p-70L) TH_LOG("came out %La", *t);
}
#endif

TEST_F(rma, munmap_revokes_key)
{
	uint64_t key = 0, v = 1;
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct swnic_sqe s;
	struct swnic_cqe c;

	ASSERT_NE(MAP_FAILED, p);
	p[0] = 0;
	ASSERT_EQ(0, mr_reg(self->db, p, 4096, SWNIC_MR_ACCESS_REMOTE_WRITE,
			    SWNIC_MR_REG_VIRT_ADDR, &key, NULL));
	s = rma_sqe(SWNIC_OP_WRITE, &v, 8, (uintptr_t)p, key, &self->b, 1);
	c = post(_metadata, self, &s);
	ASSERT_EQ(0, c.err);
	ASSERT_EQ(0, munmap(p, 4096));
	c = post(_metadata, self, &s);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_NE(0, c.err);
}

/* The target process sleeps in pause(): RMA needs nothing from it. */
TEST(target_never_runs)
{
	struct {
		uint64_t key;
		uint64_t addr;
		uint16_t port;
	} info;
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC), pfd[2], status;
	struct t_cq cq = {};
	struct t_ep ep = {}, peer = {};
	uint8_t out[256], in[256];
	struct swnic_sqe s;
	struct swnic_cqe c;
	pid_t pid;

	ASSERT_LE(0, dom);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static uint8_t mem[256];
		int d = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		struct t_cq ccq = {};
		struct t_ep cep = {};

		if (d < 0 || t_cq_create(d, 8, &ccq) ||
		    t_ep_create(d, &ccq, &ccq, 0, 0, 8, &cep) ||
		    mr_reg(d, mem, sizeof(mem), SWNIC_MR_ACCESS_REMOTE_READ |
			   SWNIC_MR_ACCESS_REMOTE_WRITE,
			   SWNIC_MR_REG_VIRT_ADDR, &info.key, NULL))
			_exit(2);
		info.addr = (uintptr_t)mem;
		info.port = cep.port;
		if (write(pfd[1], &info, sizeof(info)) != sizeof(info))
			_exit(3);
		for (;;)
			pause();
	}
	ASSERT_EQ(sizeof(info), read(pfd[0], &info, sizeof(info)));
	ASSERT_EQ(0, t_cq_create(dom, 8, &cq));
	ASSERT_EQ(0, t_ep_create(dom, &cq, &cq, 0, 0, 8, &ep));
	peer.addr = ep.addr;
	peer.port = info.port;
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(255 - i);

	s = rma_sqe(SWNIC_OP_WRITE, out, sizeof(out), info.addr, info.key,
		    &peer, 1);
	ASSERT_EQ(0, t_ring_push(&ep.sq, &s));
	s = rma_sqe(SWNIC_OP_READ, in, sizeof(in), info.addr, info.key,
		    &peer, 2);
	ASSERT_EQ(0, t_ring_push(&ep.sq, &s));
	ASSERT_EQ(0, t_doorbell(&ep, NULL));
	ASSERT_EQ(1, t_cq_pop(&cq, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&cq, &c));
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Its endpoint is gone with it. */
	ASSERT_EQ(0, t_ring_push(&ep.sq, &s));
	ASSERT_EQ(0, t_doorbell(&ep, NULL));
	ASSERT_EQ(1, t_cq_pop(&cq, &c));
	EXPECT_EQ(ECONNREFUSED, c.err);
	t_ep_destroy(&ep);
	close(cq.fd);
	close(dom);
}

TEST_HARNESS_MAIN
