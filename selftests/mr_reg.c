// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration: sizes and alignments, rejected ranges, pinned_vm
 * accounting, keys (provider keys unpredictable and not reused, user keys
 * unique per auth key), and every check of the kernel access API (key,
 * domain, auth key, access rights, bounds, VA vs offset addressing),
 * exercised through SWNIC_IOCTL_MR_ACCESS. Also deregistration racing with
 * accesses in flight.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "mr_util.h"

#define MiB	(1024UL * 1024)
#define GiB	(1024UL * MiB)

FIXTURE(reg)
{
	int fd;
};

FIXTURE_SETUP(reg)
{
	self->fd = mr_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", DEV_PATH, strerror(errno));
}

FIXTURE_TEARDOWN(reg)
{
	close(self->fd);
}

/* Register @len bytes at @mem, check query and a peer round trip. */
static void reg_roundtrip(struct __test_metadata *_metadata, int fd,
			  char *mem, uint64_t len, uint32_t flags)
{
	struct swnic_mr_query q;
	uint64_t pinned, key;
	uint32_t handle;
	char in[64], out[64];

	memset(in, 0xa5, sizeof(in));
	ASSERT_EQ(0, mr_reg(fd, mem, len, RW_ALL, flags | SWNIC_MR_REG_VIRT_ADDR,
			    &key, &handle));
	ASSERT_EQ(0, mr_query(fd, handle, &q));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, q.state);
	EXPECT_EQ(key, q.key);
	EXPECT_EQ((uintptr_t)mem, q.addr);
	EXPECT_EQ(len, q.length);
	EXPECT_EQ(RW_ALL, q.access);
	EXPECT_EQ(flags | SWNIC_MR_REG_VIRT_ADDR, q.reg_flags);
	pinned = ((((uintptr_t)mem + len + PAGE - 1) & ~(PAGE - 1)) -
		  ((uintptr_t)mem & ~(PAGE - 1)));
	if (flags & SWNIC_MR_REG_ODP) {
		EXPECT_EQ(0, q.pinned_bytes);
		EXPECT_EQ(0, q.extents);
	} else {
		EXPECT_EQ(pinned, q.pinned_bytes);
		EXPECT_LE(1, q.extents);
		EXPECT_GE(pinned / PAGE, q.extents);
	}
	/* First and last bytes, through the key. */
	ASSERT_EQ(0, mr_poke(fd, key, (uintptr_t)mem, in, 1));
	ASSERT_EQ(0, mr_poke(fd, key, (uintptr_t)mem + len - 1, in, 1));
	EXPECT_EQ((char)0xa5, mem[0]);
	EXPECT_EQ((char)0xa5, mem[len - 1]);
	mem[len - 1] = 0x3c;
	ASSERT_EQ(0, mr_peek(fd, key, (uintptr_t)mem + len - 1, out, 1));
	EXPECT_EQ(0x3c, out[0]);
	ASSERT_EQ(0, mr_dereg(fd, handle));
	EXPECT_EQ(-ENOENT, mr_query(fd, handle, &q));
	EXPECT_EQ(-ENOKEY, mr_peek(fd, key, (uintptr_t)mem, out, 1));
}

TEST_F(reg, page_4k)
{
	char *mem = map_anon(PAGE);

	ASSERT_NE(NULL, mem);
	reg_roundtrip(_metadata, self->fd, mem, PAGE, 0);
	reg_roundtrip(_metadata, self->fd, mem, PAGE, SWNIC_MR_REG_ODP);
	munmap(mem, PAGE);
}

TEST_F(reg, one_mib)
{
	char *mem = map_anon(MiB);

	ASSERT_NE(NULL, mem);
	memset(mem, 1, MiB);
	reg_roundtrip(_metadata, self->fd, mem, MiB, 0);
	reg_roundtrip(_metadata, self->fd, mem, MiB, SWNIC_MR_REG_ODP);
	munmap(mem, MiB);
}

/* 1 GiB, almost all never touched: on demand, nothing is allocated. */
TEST_F(reg, one_gib_sparse_on_demand)
{
	char *mem = mmap(NULL, GiB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct swnic_mr_query q;
	uint64_t key = 0;
	uint32_t handle;
	char buf[32] = "in the middle of a gigabyte";
	char out[32];

	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, mr_reg(self->fd, mem, GiB, RW_ALL,
			    SWNIC_MR_REG_ODP, &key, &handle));
	ASSERT_EQ(0, mr_query(self->fd, handle, &q));
	EXPECT_EQ(0, q.pinned_bytes);
	EXPECT_EQ(GiB, q.length);
	/* Offset addressing: the middle, and the very end. */
	ASSERT_EQ(0, mr_poke(self->fd, key, GiB / 2 + 100, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(mem + GiB / 2 + 100, buf, sizeof(buf)));
	mem[GiB - 1] = 'z';
	ASSERT_EQ(0, mr_peek(self->fd, key, GiB - 1, out, 1));
	EXPECT_EQ('z', out[0]);
	ASSERT_EQ(0, mr_refresh(self->fd, handle, NULL));
	ASSERT_EQ(0, mr_dereg(self->fd, handle));
	munmap(mem, GiB);
}

/* Unaligned start and length: exactly the bytes asked for. */
TEST_F(reg, unaligned)
{
	char *mem = map_anon(4 * PAGE);
	char *start = mem + PAGE - 7;
	uint64_t len = 2 * PAGE + 11, key;
	struct swnic_mr_query q;
	uint32_t handle;
	char out[4];

	ASSERT_NE(NULL, mem);
	memset(mem, 0, 4 * PAGE);
	reg_roundtrip(_metadata, self->fd, start, len, 0);
	reg_roundtrip(_metadata, self->fd, start, 1, 0);
	reg_roundtrip(_metadata, self->fd, start, len, SWNIC_MR_REG_ODP);

	ASSERT_EQ(0, mr_reg(self->fd, start, len, RW_ALL,
			    SWNIC_MR_REG_VIRT_ADDR, &key, &handle));
	ASSERT_EQ(0, mr_query(self->fd, handle, &q));
	/* 7 bytes of page 0, 2 pages, 4 bytes of page 3: 4 pages pinned. */
	EXPECT_EQ(4 * PAGE, q.pinned_bytes);
	/* One byte before and after the range are outside the MR. */
	EXPECT_EQ(-ERANGE, mr_peek(self->fd, key, (uintptr_t)start - 1, out, 1));
	EXPECT_EQ(-ERANGE, mr_peek(self->fd, key, (uintptr_t)start + len,
				   out, 1));
	EXPECT_EQ(-ERANGE, mr_peek(self->fd, key, (uintptr_t)start + len - 3,
				   out, 4));
	EXPECT_EQ(0, mr_peek(self->fd, key, (uintptr_t)start + len - 4, out, 4));
	munmap(mem, 4 * PAGE);
}

TEST_F(reg, bad_ranges_are_einval)
{
	char *mem = map_anon(PAGE);

	ASSERT_NE(NULL, mem);
	/* Zero length. */
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, mem, 0, RW_ALL, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, mem, 0, RW_ALL, SWNIC_MR_REG_ODP,
				  NULL, NULL));
	/* No access rights. */
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, mem, PAGE, 0, 0, NULL, NULL));
	/* Wrapping around the address space. */
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, mem, UINT64_MAX, RW_ALL, 0, NULL,
				  NULL));
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, (void *)(uintptr_t)-PAGE, 2 * PAGE,
				  RW_ALL, SWNIC_MR_REG_ODP, NULL, NULL));
	/* Kernel addresses. */
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, (void *)0xffff888000000000UL, PAGE,
				  RW_ALL, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, (void *)0xffffffff81000000UL, PAGE,
				  RW_ALL, SWNIC_MR_REG_ODP, NULL, NULL));
	/* Straddling the end of user space. */
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, (void *)0x7ffffffff000UL, 2 * PAGE,
				  RW_ALL, 0, NULL, NULL));
	/* Above the largest registration. */
	EXPECT_EQ(-EINVAL, mr_reg(self->fd, mem, (1ULL << 40) + PAGE, RW_ALL,
				  SWNIC_MR_REG_ODP, NULL, NULL));
	/* A requested key without USER_KEY. */
	EXPECT_EQ(-EINVAL, mr_reg_full(self->fd, mem, PAGE, RW_ALL, 0, 42, 0,
				       NULL, NULL));
	munmap(mem, PAGE);
}

TEST_F(reg, unmapped_memory_is_efault)
{
	char *mem = map_anon(3 * PAGE);
	char *ro;

	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, munmap(mem + PAGE, PAGE));
	EXPECT_EQ(-EFAULT, mr_reg(self->fd, mem, 3 * PAGE, RW_ALL, 0, NULL,
				  NULL));
	/* Read-only memory can back read rights only. */
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-EFAULT, mr_reg(self->fd, ro, PAGE,
				  SWNIC_MR_ACCESS_REMOTE_WRITE, 0, NULL, NULL));
	EXPECT_EQ(0, mr_reg(self->fd, ro, PAGE, SWNIC_MR_ACCESS_REMOTE_READ |
			    SWNIC_MR_ACCESS_SEND, 0, NULL, NULL));
	munmap(mem, 3 * PAGE);
}

TEST_F(reg, pinned_vm_accounting)
{
	long base = vm_pinned_kb();
	char *mem = map_anon(64 * PAGE);
	struct swnic_mr_query q0, q;
	uint32_t h1, h2, h3;

	ASSERT_LE(0, base);
	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, mr_counters(self->fd, &q0));
	EXPECT_EQ(0, q0.domain.mrs);
	EXPECT_EQ(0, q0.domain.pinned_bytes);

	ASSERT_EQ(0, mr_reg(self->fd, mem, 16 * PAGE, RW_ALL, 0, NULL, &h1));
	ASSERT_EQ(0, mr_reg(self->fd, mem + 16 * PAGE, 48 * PAGE,
			    SWNIC_MR_ACCESS_SEND, 0, NULL, &h2));
	/* The same pages twice are charged twice (as ib_umem does). */
	ASSERT_EQ(0, mr_reg(self->fd, mem, 16 * PAGE, RW_ALL, 0, NULL, &h3));
	/* On demand pins nothing. */
	ASSERT_EQ(0, mr_reg(self->fd, mem, 64 * PAGE, RW_ALL, SWNIC_MR_REG_ODP,
			    NULL, NULL));
	EXPECT_EQ(base + 80 * 4, vm_pinned_kb());
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(4, q.domain.mrs);
	EXPECT_EQ(80 * PAGE, q.domain.pinned_bytes);
	EXPECT_EQ(4, q.domain.registrations);
	EXPECT_LE(80 * PAGE, q.device.pinned_bytes);
	EXPECT_LE(4, q.device.mrs);

	ASSERT_EQ(0, mr_dereg(self->fd, h2));
	EXPECT_EQ(base + 32 * 4, vm_pinned_kb());
	ASSERT_EQ(0, mr_dereg(self->fd, h1));
	ASSERT_EQ(0, mr_dereg(self->fd, h3));
	EXPECT_EQ(base, vm_pinned_kb());
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(1, q.domain.mrs);
	EXPECT_EQ(0, q.domain.pinned_bytes);

	/* Closing the file releases the rest. */
	ASSERT_EQ(0, mr_reg(self->fd, mem, 64 * PAGE, RW_ALL, 0, NULL, NULL));
	EXPECT_EQ(base + 64 * 4, vm_pinned_kb());
	close(self->fd);
	EXPECT_EQ(base, vm_pinned_kb());
	self->fd = mr_open();
	munmap(mem, 64 * PAGE);
}

/* The device's max_pinned (netlink, `swnic dev set`) bounds every domain. */
TEST_F(reg, device_max_pinned_is_edquot)
{
	char *mem = map_anon(32 * PAGE);
	struct swnic_mr_query q;
	char cmd[128];
	uint32_t h;
	int ret;

	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	snprintf(cmd, sizeof(cmd),
		 "swnic dev set swnic0 max_pinned %llu >/dev/null 2>&1",
		 (unsigned long long)(q.device.pinned_bytes + 16 * PAGE));
	if (system(cmd))
		SKIP(return, "cannot set max_pinned with the swnic tool");
	ASSERT_EQ(0, mr_reg(self->fd, mem, 10 * PAGE, RW_ALL, 0, NULL, &h));
	ret = mr_reg(self->fd, mem, 7 * PAGE, RW_ALL, 0, NULL, NULL);
	EXPECT_EQ(-EDQUOT, ret);
	/* On demand pins nothing; the rest still fits. */
	EXPECT_EQ(0, mr_reg(self->fd, mem, 32 * PAGE, RW_ALL, SWNIC_MR_REG_ODP,
			    NULL, NULL));
	EXPECT_EQ(0, mr_reg(self->fd, mem, 6 * PAGE, RW_ALL, 0, NULL, NULL));
	EXPECT_EQ(-EDQUOT, mr_reg(self->fd, mem, PAGE, RW_ALL, 0, NULL, NULL));
	/* Nothing of a refused registration stays charged. */
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(16 * PAGE, q.domain.pinned_bytes);
	ASSERT_EQ(0, mr_dereg(self->fd, h));
	EXPECT_EQ(0, mr_reg(self->fd, mem, 10 * PAGE, RW_ALL, 0, NULL, NULL));
	ASSERT_EQ(0, system("swnic dev set swnic0 max_pinned 0"));
	EXPECT_EQ(0, mr_reg(self->fd, mem, 32 * PAGE, RW_ALL, 0, NULL, NULL));
	munmap(mem, 32 * PAGE);
}

/* ---- keys ----------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

TEST_F(reg, provider_keys_unpredictable)
{
	enum { N = 256 };
	uint64_t keys[N], sorted[N], deltas = 0;
	uint32_t handles[N], bits;
	char *mem = map_anon(PAGE);
	int i, same_high = 0;

	ASSERT_NE(NULL, mem);
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, mr_reg(self->fd, mem, PAGE, RW_ALL,
				    SWNIC_MR_REG_ODP, &keys[i], &handles[i]));
	for (i = 1; i < N; i++) {
		/* Not a counter: the random half differs, steps vary. */
		if (keys[i] >> 32 == keys[i - 1] >> 32)
			same_high++;
		if (keys[i] - keys[i - 1] != keys[1] - keys[0])
			deltas++;
	}
	EXPECT_GT(3, same_high);
	EXPECT_LT(N - 4, deltas);
	/*
	 * 40 random bits over a 24-bit handle: bits 24 to 31 too, which a
	 * 32-bit handle left 0 (a key then took 2^31 guesses on average).
	 */
	for (i = 0, bits = 0; i < N; i++) {
		EXPECT_EQ(handles[i], keys[i] & 0xffffff);
		bits |= keys[i] >> 24 & 0xff;
	}
	EXPECT_EQ(0xff, bits);
	memcpy(sorted, keys, sizeof(keys));
	qsort(sorted, N, sizeof(sorted[0]), cmp_u64);
	for (i = 1; i < N; i++)
		ASSERT_NE(sorted[i - 1], sorted[i]);

	/* A freed key is not handed out again soon: same handle, no reuse. */
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, mr_dereg(self->fd, handles[i]));
	for (i = 0; i < N; i++) {
		uint64_t k;
		uint32_t h;

		ASSERT_EQ(0, mr_reg(self->fd, mem, PAGE, RW_ALL,
				    SWNIC_MR_REG_ODP, &k, &h));
		ASSERT_EQ(NULL, bsearch(&k, sorted, N, sizeof(k), cmp_u64));
		EXPECT_NE(handles[i], h);
	}
	munmap(mem, PAGE);
}

TEST_F(reg, user_keys)
{
	char *mem = map_anon(PAGE);
	uint32_t ak = dom_auth_key(self->fd);
	uint64_t key, pkey;
	uint32_t h1, h2;
	char out[8];
	int other;

	ASSERT_NE(NULL, mem);
	strcpy(mem, "userkey");
	ASSERT_EQ(0, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
				 SWNIC_MR_REG_USER_KEY, 0x1234, 0, &key, &h1));
	EXPECT_EQ(0x1234, key);
	/* Same key, same auth key: taken. */
	EXPECT_EQ(-EEXIST, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
				       SWNIC_MR_REG_USER_KEY, 0x1234, 0, NULL,
				       NULL));
	/* Key 0 and all-ones are keys like any other. */
	ASSERT_EQ(0, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
				 SWNIC_MR_REG_USER_KEY, 0, 0, &key, NULL));
	EXPECT_EQ(0, key);
	ASSERT_EQ(0, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
				 SWNIC_MR_REG_USER_KEY, UINT64_MAX, 0, NULL,
				 NULL));
	ASSERT_EQ(0, mr_peek(self->fd, 0x1234, 0, out, 8));
	EXPECT_STREQ("userkey", out);

	/* A provider key cannot be claimed as a user key. */
	ASSERT_EQ(0, mr_reg(self->fd, mem, PAGE, RW_ALL, 0, &pkey, NULL));
	EXPECT_EQ(-EEXIST, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
				       SWNIC_MR_REG_USER_KEY, pkey, 0, NULL,
				       NULL));

	/* Freed, the key can be taken again. */
	ASSERT_EQ(0, mr_dereg(self->fd, h1));
	EXPECT_EQ(-ENOKEY, mr_peek(self->fd, 0x1234, 0, out, 8));
	ASSERT_EQ(0, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
				 SWNIC_MR_REG_USER_KEY, 0x1234, 0, NULL, &h2));

	/* Another domain has keys of its own. */
	other = mr_open();
	ASSERT_LE(0, other);
	ASSERT_EQ(0, mr_reg_full(other, mem, PAGE, RW_ALL,
				 SWNIC_MR_REG_USER_KEY, 0x1234, 0, NULL, NULL));
	close(other);

	/* Another auth key is another namespace (admins may name one). */
	if (geteuid() == 0) {
		ASSERT_EQ(0, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
					 SWNIC_MR_REG_USER_KEY, 0x1234,
					 ak + 1000, NULL, NULL));
		EXPECT_EQ(-EEXIST, mr_reg_full(self->fd, mem, PAGE, RW_ALL,
					       SWNIC_MR_REG_USER_KEY, 0x1234,
					       ak + 1000, NULL, NULL));
		/*
		 * Each reachable only under its own auth key - which an
		 * accessor cannot name: it is its domain's (sec_auth.c).
		 */
		strcpy(mem, "second");
		EXPECT_EQ(-EKEYREJECTED, mr_access(self->fd, 0, 0,
						   SWNIC_MR_ACCESS_REMOTE_READ,
						   0x1234, ak + 1000, 0, out,
						   7));
		EXPECT_EQ(-EKEYREJECTED, mr_access(self->fd, 0, 0,
						   SWNIC_MR_ACCESS_REMOTE_READ,
						   0x1234, ak + 2000, 0, out,
						   7));
	}
	munmap(mem, PAGE);
}

/* ---- the access checks ----------------------------------------------------- */

FIXTURE(acc)
{
	int fd, peer;
	char *mem;
	uint32_t ak;
};

FIXTURE_SETUP(acc)
{
	self->fd = mr_open();
	self->peer = mr_open();
	ASSERT_LE(0, self->fd);
	ASSERT_LE(0, self->peer);
	self->mem = map_anon(4 * PAGE);
	ASSERT_NE(NULL, self->mem);
	memset(self->mem, 'm', 4 * PAGE);
	self->ak = dom_auth_key(self->fd);
}

FIXTURE_TEARDOWN(acc)
{
	close(self->peer);
	close(self->fd);
	munmap(self->mem, 4 * PAGE);
}

FIXTURE_VARIANT(acc)
{
	uint32_t flags;
};

FIXTURE_VARIANT_ADD(acc, pinned) { .flags = 0 };
FIXTURE_VARIANT_ADD(acc, on_demand) { .flags = SWNIC_MR_REG_ODP };

/* Each right alone: only that right (and its direction) is granted. */
TEST_F(acc, rights_enforced)
{
	static const uint32_t rights[] = {
		SWNIC_MR_ACCESS_SEND, SWNIC_MR_ACCESS_RECV,
		SWNIC_MR_ACCESS_READ, SWNIC_MR_ACCESS_WRITE,
		SWNIC_MR_ACCESS_REMOTE_READ, SWNIC_MR_ACCESS_REMOTE_WRITE,
	};
	uint32_t writes = SWNIC_MR_ACCESS_RECV | SWNIC_MR_ACCESS_READ |
			  SWNIC_MR_ACCESS_REMOTE_WRITE;
	uint32_t me = mr_domain_id(self->fd);
	unsigned int i, j;
	char buf[16];

	for (i = 0; i < 6; i++) {
		uint64_t key;

		ASSERT_EQ(0, mr_reg(self->fd, self->mem, 4 * PAGE, rights[i],
				    variant->flags, &key, NULL));
		for (j = 0; j < 6; j++) {
			uint32_t r = rights[j];
			bool local = r & (SWNIC_MR_ACCESS_SEND |
					  SWNIC_MR_ACCESS_RECV |
					  SWNIC_MR_ACCESS_READ |
					  SWNIC_MR_ACCESS_WRITE);
			uint32_t fl = (local ? SWNIC_MR_ACCESS_F_LOCAL : 0) |
				      ((r & writes) ? SWNIC_MR_ACCESS_F_WRITE : 0);
			int ret;

			memset(buf, 'w', sizeof(buf));
			/* Local from the owner; remote from the peer domain. */
			if (local)
				ret = mr_access(self->fd, 0, fl, r, key,
						self->ak, (uintptr_t)self->mem,
						buf, sizeof(buf));
			else
				ret = mr_access(self->peer, me, fl, r, key,
						self->ak, 0, buf, sizeof(buf));
			if (i == j) {
				EXPECT_EQ(0, ret) TH_LOG("right %#x", r);
			} else {
				EXPECT_EQ(-EACCES, ret)
					TH_LOG("MR %#x, asked %#x", rights[i], r);
			}
		}
	}
}

/* A peer in another domain reads and writes, with the owner's auth key. */
TEST_F(acc, peer_domain_and_auth_key)
{
	uint32_t me = mr_domain_id(self->fd);
	uint64_t key = 0;
	char buf[8];

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, 4 * PAGE,
			    SWNIC_MR_ACCESS_REMOTE_READ |
			    SWNIC_MR_ACCESS_REMOTE_WRITE,
			    variant->flags, &key, NULL));
	ASSERT_EQ(0, mr_access(self->peer, me, SWNIC_MR_ACCESS_F_WRITE,
			       SWNIC_MR_ACCESS_REMOTE_WRITE, key, self->ak,
			       PAGE, "fromB", 6));
	EXPECT_STREQ("fromB", self->mem + PAGE);
	ASSERT_EQ(0, mr_access(self->peer, me, 0, SWNIC_MR_ACCESS_REMOTE_READ,
			       key, self->ak, PAGE, buf, 6));
	EXPECT_STREQ("fromB", buf);
	/* Another auth key than its domain's: the accessor cannot name one. */
	EXPECT_EQ(-EKEYREJECTED, mr_access(self->peer, me, 0,
					   SWNIC_MR_ACCESS_REMOTE_READ, key,
					   self->ak + 1, PAGE, buf, 6));
	/* 0 is the accessor's own (here the same as the owner's). */
	ASSERT_EQ(0, mr_access(self->peer, me, 0, SWNIC_MR_ACCESS_REMOTE_READ,
			       key, 0, PAGE, buf, 6));
	EXPECT_STREQ("fromB", buf);
	/* The key means nothing in another domain. */
	EXPECT_EQ(-ENOKEY, mr_access(self->fd, mr_domain_id(self->peer), 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, key,
				     self->ak, PAGE, buf, 6));
	/* A guessed key: flip the random half, then the index. */
	EXPECT_EQ(-ENOKEY, mr_access(self->peer, me, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ,
				     key ^ (1ULL << 40), self->ak, PAGE,
				     buf, 6));
	EXPECT_EQ(-ENOKEY, mr_access(self->peer, me, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, key + 1,
				     self->ak, PAGE, buf, 6));
}

TEST_F(acc, offset_vs_virtual_addressing)
{
	uint32_t me = mr_domain_id(self->fd);
	char *start = self->mem + 100;
	uint64_t koff, kva;
	char buf[8];

	memcpy(start + PAGE, "offset!", 8);
	ASSERT_EQ(0, mr_reg(self->fd, start, 2 * PAGE, RW_ALL, variant->flags,
			    &koff, NULL));
	ASSERT_EQ(0, mr_reg(self->fd, start, 2 * PAGE, RW_ALL,
			    variant->flags | SWNIC_MR_REG_VIRT_ADDR, &kva,
			    NULL));
	/* Offsets from the MR's first byte. */
	ASSERT_EQ(0, mr_access(self->peer, me, 0, SWNIC_MR_ACCESS_REMOTE_READ,
			       koff, self->ak, PAGE, buf, 8));
	EXPECT_STREQ("offset!", buf);
	EXPECT_EQ(-ERANGE, mr_access(self->peer, me, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, koff,
				     self->ak, 2 * PAGE - 7, buf, 8));
	EXPECT_EQ(-ERANGE, mr_access(self->peer, me, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, koff,
				     self->ak, (uintptr_t)start + PAGE, buf,
				     8));
	/* Virtual addresses. */
	ASSERT_EQ(0, mr_access(self->peer, me, 0, SWNIC_MR_ACCESS_REMOTE_READ,
			       kva, self->ak, (uintptr_t)start + PAGE, buf,
			       8));
	EXPECT_STREQ("offset!", buf);
	EXPECT_EQ(-ERANGE, mr_access(self->peer, me, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, kva,
				     self->ak, PAGE, buf, 8));
	EXPECT_EQ(-ERANGE, mr_access(self->peer, me, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, kva,
				     self->ak, (uintptr_t)start - 1, buf, 8));
	EXPECT_EQ(-ERANGE, mr_access(self->peer, me, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, kva,
				     self->ak, UINT64_MAX - 3, buf, 8));
	/* The owner's local accesses are by VA whatever the MR's mode. */
	ASSERT_EQ(0, mr_access(self->fd, 0, SWNIC_MR_ACCESS_F_LOCAL,
			       SWNIC_MR_ACCESS_SEND, koff, self->ak,
			       (uintptr_t)start + PAGE, buf, 8));
	EXPECT_STREQ("offset!", buf);
}

/* Denied accesses are counted. */
TEST_F(acc, denials_counted)
{
	struct swnic_mr_query q0, q;
	uint64_t key = 0;
	char buf[8];

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, PAGE,
			    SWNIC_MR_ACCESS_REMOTE_READ, variant->flags, &key,
			    NULL));
	ASSERT_EQ(0, mr_counters(self->fd, &q0));
	EXPECT_EQ(-ENOKEY, mr_peek(self->fd, key + 1, 0, buf, 1));
	EXPECT_EQ(-EACCES, mr_poke(self->fd, key, 0, buf, 1));
	EXPECT_EQ(-ERANGE, mr_peek(self->fd, key, PAGE, buf, 1));
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(q0.domain.access_denied + 3, q.domain.access_denied);
	EXPECT_LE(q0.device.access_denied + 3, q.device.access_denied);
}

/* ---- deregistration while in use ------------------------------------------ */

struct racer {
	int fd;
	uint64_t *key;
	char *mem;
	int stop;
	long ok, gone;
	int bad;
};

static void *access_loop(void *arg)
{
	struct racer *r = arg;
	char *buf = malloc(1 << 20);
	int ret;

	while (buf && !__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		ret = mr_peek(r->fd, __atomic_load_n(r->key, __ATOMIC_RELAXED),
			      0, buf, 1 << 20);
		if (!ret)
			r->ok++;
		else if (ret == -ENOKEY)
			r->gone++;
		else
			r->bad = ret;
	}
	free(buf);
	return NULL;
}

TEST_F(reg, dereg_while_in_use)
{
	struct swnic_mr_query q;
	struct racer r = { .fd = self->fd };
	uint64_t key, k;
	pthread_t t[2];
	uint32_t h;
	int i;

	r.mem = map_anon(1 << 20);
	ASSERT_NE(NULL, r.mem);
	memset(r.mem, 7, 1 << 20);
	r.key = &key;
	ASSERT_EQ(0, mr_reg(self->fd, r.mem, 1 << 20, RW_ALL, 0, &key, &h));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, access_loop, &r));
	for (i = 0; i < 200; i++) {
		usleep(1000);
		ASSERT_EQ(0, mr_dereg(self->fd, h));
		ASSERT_EQ(0, mr_reg(self->fd, r.mem, 1 << 20, RW_ALL,
				    i & 1 ? SWNIC_MR_REG_ODP : 0, &k, &h));
		__atomic_store_n(&key, k, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, r.bad);
	EXPECT_LT(0, r.ok);
	TH_LOG("%ld accesses done, %ld refused after deregistration",
	       r.ok, r.gone);
	ASSERT_EQ(0, mr_dereg(self->fd, h));
	/* Every pin of the 200 MRs is gone once in-flight accesses ended. */
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(0, q.domain.pinned_bytes);
	EXPECT_EQ(0, q.domain.mrs);
	munmap(r.mem, 1 << 20);
}

TEST_HARNESS_MAIN
