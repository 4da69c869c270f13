// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of the memory-registration ioctls (MR_REG, MR_DEREG, MR_QUERY,
 * MR_REFRESH, MR_ACCESS, INVAL_QUERY): the extensible-struct contract for
 * each (short, exact, long with zeros, long with garbage, reserved, unknown
 * flags, bad pointer), feature bits, the owner-only rule, malformed
 * requests and the mmap offset scheme of the invalidation page.
 */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mr_util.h"

/* A struct followed by bytes a newer user space might send. */
#define BUF_LEN		512
#define NO_FIELD	((size_t)-1)

FIXTURE(mr_abi)
{
	int fd;
	char *mem;		/* 4 pages, registered as @handle */
	uint64_t key;
	uint32_t handle;
};

typedef void (*prep_fn)(FIXTURE_DATA(mr_abi) *self, void *buf);

FIXTURE_VARIANT(mr_abi)
{
	unsigned long cmd;
	size_t size;		/* the kernel's (this header's) size */
	size_t min_size;	/* first released size */
	size_t reserved;	/* offset of a __u32 __reserved, or NO_FIELD */
	size_t flags;		/* offset of the __u32 flags */
	prep_fn prep;		/* fill a valid request (size excluded) */
};

static void prep_reg(FIXTURE_DATA(mr_abi) *self, void *buf)
{
	struct swnic_mr_reg *r = buf;

	r->addr = (uintptr_t)self->mem;
	r->length = PAGE;
	r->access = SWNIC_MR_ACCESS_SEND;
}

static void prep_dereg(FIXTURE_DATA(mr_abi) *self, void *buf)
{
	struct swnic_mr_dereg *d = buf;
	uint32_t handle = 0;

	/* Each call deregisters an MR of its own. */
	mr_reg(self->fd, self->mem, PAGE, SWNIC_MR_ACCESS_SEND, 0, NULL,
	       &handle);
	d->handle = handle;
}

static void prep_query(FIXTURE_DATA(mr_abi) *self, void *buf)
{
	((struct swnic_mr_query *)buf)->handle = self->handle;
}

static void prep_refresh(FIXTURE_DATA(mr_abi) *self, void *buf)
{
	((struct swnic_mr_refresh *)buf)->handle = self->handle;
}

static void prep_access(FIXTURE_DATA(mr_abi) *self, void *buf)
{
	static char out[64];
	struct swnic_mr_access *a = buf;

	a->key = self->key;
	a->addr = 0;			/* offset addressing */
	a->len = sizeof(out);
	a->buf = (uintptr_t)out;
	a->access = SWNIC_MR_ACCESS_REMOTE_READ;
	a->auth_key = dom_auth_key(self->fd);
}

static void prep_inval(FIXTURE_DATA(mr_abi) *self, void *buf)
{
}

#define ABI_VARIANT(_name, _cmd, _struct, _last, _res, _prep)		\
	FIXTURE_VARIANT_ADD(mr_abi, _name) {				\
		.cmd = _cmd,						\
		.size = sizeof(_struct),				\
		.min_size = offsetof(_struct, _last) +			\
			    sizeof(((_struct *)0)->_last),		\
		.reserved = _res,					\
		.flags = offsetof(_struct, flags),			\
		.prep = _prep,						\
	}

ABI_VARIANT(mr_reg, SWNIC_IOCTL_MR_REG, struct swnic_mr_reg, __reserved,
	    offsetof(struct swnic_mr_reg, __reserved), prep_reg);
ABI_VARIANT(mr_dereg, SWNIC_IOCTL_MR_DEREG, struct swnic_mr_dereg,
	    __reserved, offsetof(struct swnic_mr_dereg, __reserved),
	    prep_dereg);
ABI_VARIANT(mr_query, SWNIC_IOCTL_MR_QUERY, struct swnic_mr_query, device,
	    NO_FIELD, prep_query);
ABI_VARIANT(mr_refresh, SWNIC_IOCTL_MR_REFRESH, struct swnic_mr_refresh,
	    state, NO_FIELD, prep_refresh);
ABI_VARIANT(mr_access, SWNIC_IOCTL_MR_ACCESS, struct swnic_mr_access,
	    __reserved, offsetof(struct swnic_mr_access, __reserved),
	    prep_access);
ABI_VARIANT(inval_query, SWNIC_IOCTL_INVAL_QUERY, struct swnic_inval_query,
	    __reserved, offsetof(struct swnic_inval_query, __reserved),
	    prep_inval);

FIXTURE_SETUP(mr_abi)
{
	self->fd = mr_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", DEV_PATH, strerror(errno));
	self->mem = map_anon(4 * PAGE);
	ASSERT_NE(NULL, self->mem);
	memset(self->mem, 0x5a, 4 * PAGE);
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, 4 * PAGE, RW_ALL, 0,
			    &self->key, &self->handle));
}

FIXTURE_TEARDOWN(mr_abi)
{
	close(self->fd);
	munmap(self->mem, 4 * PAGE);
}

/* Issue the variant's ioctl with a valid request of @size bytes. */
static int call(FIXTURE_DATA(mr_abi) *self,
		const FIXTURE_VARIANT(mr_abi) *variant, uint8_t *buf,
		uint32_t size)
{
	variant->prep(self, buf);
	memcpy(buf, &size, sizeof(size));
	return ioctl(self->fd, variant->cmd, buf) ? -errno : 0;
}

TEST_F(mr_abi, exact)
{
	uint8_t buf[BUF_LEN] = {};

	ASSERT_EQ(0, call(self, variant, buf, variant->size));
}

TEST_F(mr_abi, first_released_size)
{
	uint8_t buf[BUF_LEN] = {};

	ASSERT_EQ(0, call(self, variant, buf, variant->min_size));
}

/*
 * A struct that ends where readable memory ends: the kernel must not read
 * past the size it is given (one released before ours ends sooner).
 */
TEST_F(mr_abi, sizes_at_the_end_of_memory)
{
	uint8_t *map = map_anon(2 * PAGE), *buf;

	ASSERT_NE(NULL, map);
	ASSERT_EQ(0, mprotect(map + PAGE, PAGE, PROT_NONE));
	buf = map + PAGE - variant->min_size;
	memset(map, 0, PAGE);
	EXPECT_EQ(0, call(self, variant, buf, variant->min_size));
	buf = map + PAGE - variant->size;
	memset(map, 0, PAGE);
	EXPECT_EQ(0, call(self, variant, buf, variant->size));
	/* Longer than what is there: the size says so, the read faults. */
	buf = map + PAGE - variant->size;
	memset(map, 0, PAGE);
	EXPECT_EQ(-EFAULT, call(self, variant, buf, variant->size + 8));
	munmap(map, 2 * PAGE);
}

TEST_F(mr_abi, short_is_einval)
{
	uint8_t buf[BUF_LEN] = {};

	EXPECT_EQ(-EINVAL, call(self, variant, buf, variant->min_size - 1));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(-EINVAL, call(self, variant, buf, 4));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(-EINVAL, call(self, variant, buf, 0));
}

TEST_F(mr_abi, long_with_zeros)
{
	uint8_t buf[BUF_LEN] = {};

	ASSERT_EQ(0, call(self, variant, buf, variant->size + 64));
}

TEST_F(mr_abi, long_with_garbage_is_e2big)
{
	uint8_t buf[BUF_LEN] = {};

	buf[variant->size + 13] = 1;
	ASSERT_EQ(-E2BIG, call(self, variant, buf, variant->size + 64));
}

TEST_F(mr_abi, reserved_is_einval)
{
	uint8_t buf[BUF_LEN] = {};
	uint32_t one = 1;

	if (variant->reserved == NO_FIELD)
		SKIP(return, "this struct has no reserved field");
	memcpy(buf + variant->reserved, &one, sizeof(one));
	ASSERT_EQ(-EINVAL, call(self, variant, buf, variant->size));
}

TEST_F(mr_abi, unknown_flags_are_eopnotsupp)
{
	uint8_t buf[BUF_LEN] = {};
	uint32_t bit = 1U << 31;

	memcpy(buf + variant->flags, &bit, sizeof(bit));
	ASSERT_EQ(-EOPNOTSUPP, call(self, variant, buf, variant->size));
}

TEST_F(mr_abi, bad_pointer_is_efault)
{
	ASSERT_EQ(-1, ioctl(self->fd, variant->cmd, (void *)8));
	ASSERT_EQ(EFAULT, errno);
}

/*
 * A struct the kernel cannot write its answer into (read-only) is EFAULT
 * before anything is done: no MR registered or deregistered unknown to
 * the caller.
 */
TEST_F(mr_abi, read_only_struct_is_efault_and_changes_nothing)
{
	uint8_t *map = map_anon(PAGE);
	struct swnic_mr_query q0, q;

	ASSERT_NE(NULL, map);
	memset(map, 0, PAGE);
	variant->prep(self, map);
	memcpy(map, &(uint32_t){ variant->size }, sizeof(uint32_t));
	ASSERT_EQ(0, mr_counters(self->fd, &q0));
	ASSERT_EQ(0, mprotect(map, PAGE, PROT_READ));
	ASSERT_EQ(-1, ioctl(self->fd, variant->cmd, map));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(q0.domain.mrs, q.domain.mrs);
	EXPECT_EQ(q0.domain.pinned_bytes, q.domain.pinned_bytes);
	munmap(map, PAGE);
}

/* Forked children share the file but not the address space: refused. */
TEST_F(mr_abi, other_process_is_eacces)
{
	uint8_t buf[BUF_LEN] = {};
	int status;
	pid_t pid;

	variant->prep(self, buf);
	memcpy(buf, &(uint32_t){ variant->size }, sizeof(uint32_t));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int ret = ioctl(self->fd, variant->cmd, buf) ? errno : 0;

		_exit(ret == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* The owner still can. */
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, call(self, variant, buf, variant->size));
}

/* ---- not per ioctl ------------------------------------------------------ */

TEST(features)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	int fd = mr_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_MR);
	EXPECT_TRUE(q.features & SWNIC_FEAT_MR_ODP);
	EXPECT_TRUE(q.features & SWNIC_FEAT_INVAL_PAGE);
	EXPECT_TRUE(q.features & SWNIC_FEAT_MR_ACCESS);
	EXPECT_EQ(8, q.mr_key_size);
	close(fd);
}

TEST(unknown_access_bits_are_eopnotsupp)
{
	int fd = mr_open();
	char *mem = map_anon(PAGE);
	char out[8];
	uint64_t key = 0;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, mem);
	EXPECT_EQ(-EOPNOTSUPP, mr_reg(fd, mem, PAGE, 1U << 6, 0, NULL, NULL));
	EXPECT_EQ(-EOPNOTSUPP, mr_reg(fd, mem, PAGE, 1U << 31, 0, NULL, NULL));
	ASSERT_EQ(0, mr_reg(fd, mem, PAGE, RW_ALL, 0, &key, NULL));
	EXPECT_EQ(-EOPNOTSUPP, mr_access(fd, 0, 0, 1U << 6, key, 0,
					 (uintptr_t)mem, out, sizeof(out)));
	close(fd);
}

TEST(unknown_handles_are_enoent)
{
	int fd = mr_open();
	struct swnic_mr_query q;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOENT, mr_dereg(fd, 12345));
	EXPECT_EQ(-ENOENT, mr_dereg(fd, 0));
	EXPECT_EQ(-ENOENT, mr_query(fd, 12345, &q));
	EXPECT_EQ(-ENOENT, mr_refresh(fd, 12345, NULL));
	/* Counters need no MR. */
	EXPECT_EQ(0, mr_counters(fd, &q));
	close(fd);
}

TEST(malformed_access_is_einval)
{
	int fd = mr_open(), other = mr_open();
	char *mem = map_anon(PAGE);
	uint32_t ak, me;
	char out[16];
	uint64_t key = 0;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, mr_reg(fd, mem, PAGE, RW_ALL, 0, &key, NULL));
	ak = dom_auth_key(fd);
	me = mr_domain_id(fd);
	/* Length 0 and above the hook's maximum. */
	EXPECT_EQ(-EINVAL, mr_access(fd, 0, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				     key, ak, (uintptr_t)mem, out, 0));
	EXPECT_EQ(-EINVAL, mr_access(fd, 0, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				     key, ak, (uintptr_t)mem, out,
				     SWNIC_MR_ACCESS_MAX_LEN + 1));
	/* The direction must match the right. */
	EXPECT_EQ(-EINVAL, mr_access(fd, 0, SWNIC_MR_ACCESS_F_WRITE,
				     SWNIC_MR_ACCESS_REMOTE_READ, key, ak,
				     (uintptr_t)mem, out, sizeof(out)));
	EXPECT_EQ(-EINVAL, mr_access(fd, 0, 0, SWNIC_MR_ACCESS_REMOTE_WRITE,
				     key, ak, (uintptr_t)mem, out, sizeof(out)));
	/* One right at a time, of the right side. */
	EXPECT_EQ(-EINVAL, mr_access(fd, 0, 0, SWNIC_MR_ACCESS_REMOTE_READ |
				     SWNIC_MR_ACCESS_SEND, key, ak,
				     (uintptr_t)mem, out, sizeof(out)));
	EXPECT_EQ(-EINVAL, mr_access(fd, 0, 0, SWNIC_MR_ACCESS_SEND, key, ak,
				     (uintptr_t)mem, out, sizeof(out)));
	EXPECT_EQ(-EINVAL, mr_access(fd, 0, SWNIC_MR_ACCESS_F_LOCAL,
				     SWNIC_MR_ACCESS_REMOTE_READ, key, ak,
				     (uintptr_t)mem, out, sizeof(out)));
	/* A local access is the owner's only. */
	EXPECT_EQ(-EINVAL, mr_access(other, me, SWNIC_MR_ACCESS_F_LOCAL,
				     SWNIC_MR_ACCESS_SEND, key, ak,
				     (uintptr_t)mem, out, sizeof(out)));
	/* No such domain. */
	EXPECT_EQ(-ENOENT, mr_access(fd, 0x7ffffff0, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, key, ak,
				     0, out, sizeof(out)));
	/* A bad user buffer, to read into and to write from. */
	EXPECT_EQ(-EFAULT, mr_access(fd, 0, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				     key, ak, 0, (void *)8, sizeof(out)));
	EXPECT_EQ(-EFAULT, mr_access(fd, 0, SWNIC_MR_ACCESS_F_WRITE,
				     SWNIC_MR_ACCESS_REMOTE_WRITE, key, ak, 0,
				     (void *)8, sizeof(out)));
	close(other);
	close(fd);
}

/* ---- mmap --------------------------------------------------------------- */

FIXTURE(mmap)
{
	int fd;
	struct swnic_inval_query q;
};

FIXTURE_SETUP(mmap)
{
	self->fd = mr_open();
	ASSERT_LE(0, self->fd);
	memset(&self->q, 0, sizeof(self->q));
	self->q.size = sizeof(self->q);
	ASSERT_EQ(0, ioctl(self->fd, SWNIC_IOCTL_INVAL_QUERY, &self->q));
}

FIXTURE_TEARDOWN(mmap)
{
	close(self->fd);
}

static int try_map(int fd, size_t len, int prot, int flags, uint64_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

TEST_F(mmap, query_describes_the_page)
{
	EXPECT_EQ(SWNIC_MMAP_OFFSET(SWNIC_MMAP_INVAL, 0), self->q.mmap_offset);
	EXPECT_EQ((uint64_t)getpagesize(), self->q.mmap_size);
	EXPECT_EQ(sizeof(struct swnic_inval_rec), self->q.entry_size);
	EXPECT_EQ(sizeof(struct swnic_inval_page), self->q.ring_offset);
	EXPECT_LE(16, self->q.entries);
	EXPECT_EQ(0, self->q.entries & (self->q.entries - 1));
	EXPECT_GE(self->q.mmap_size,
		  self->q.ring_offset +
		  (uint64_t)self->q.entries * self->q.entry_size);
	EXPECT_EQ(0, self->q.gen);
}

TEST_F(mmap, page_header_matches_query)
{
	const struct swnic_inval_page *pg;

	pg = mmap(NULL, self->q.mmap_size, PROT_READ, MAP_SHARED, self->fd,
		  self->q.mmap_offset);
	ASSERT_NE(MAP_FAILED, pg);
	EXPECT_EQ(self->q.entries, pg->entries);
	EXPECT_EQ(self->q.ring_offset, pg->ring_offset);
	EXPECT_EQ(0, pg->gen);
	munmap((void *)pg, self->q.mmap_size);
}

TEST_F(mmap, read_only)
{
	void *p;

	EXPECT_EQ(-EACCES, try_map(self->fd, self->q.mmap_size,
				   PROT_READ | PROT_WRITE, MAP_SHARED,
				   self->q.mmap_offset));
	p = mmap(NULL, self->q.mmap_size, PROT_READ, MAP_SHARED, self->fd,
		 self->q.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, self->q.mmap_size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(p, self->q.mmap_size);
	/* A private mapping cannot be made writable either. */
	p = mmap(NULL, self->q.mmap_size, PROT_READ, MAP_PRIVATE, self->fd,
		 self->q.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, self->q.mmap_size, PROT_READ | PROT_WRITE));
	munmap(p, self->q.mmap_size);
}

TEST_F(mmap, bad_offsets_are_einval)
{
	size_t len = self->q.mmap_size;
	uint64_t inval = SWNIC_MMAP_OFFSET(SWNIC_MMAP_INVAL, 0);

	EXPECT_EQ(-EINVAL, try_map(self->fd, len, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(-EINVAL, try_map(self->fd, len, PROT_READ, MAP_SHARED,
				   SWNIC_MMAP_OFFSET(0xff, 0)));
	EXPECT_EQ(-EINVAL, try_map(self->fd, len, PROT_READ, MAP_SHARED,
				   SWNIC_MMAP_OFFSET(SWNIC_MMAP_INVAL, 1)));
	/* Stray page bits below the id. */
	EXPECT_EQ(-EINVAL, try_map(self->fd, len, PROT_READ, MAP_SHARED,
				   inval + getpagesize()));
	/* Bits above the type. */
	EXPECT_EQ(-EINVAL, try_map(self->fd, len, PROT_READ, MAP_SHARED,
				   inval | (1ULL << 40)));
	/* More than the page. */
	EXPECT_EQ(-EINVAL, try_map(self->fd, 2 * len, PROT_READ, MAP_SHARED,
				   inval));
}

TEST_F(mmap, other_process_is_eacces)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(try_map(self->fd, self->q.mmap_size, PROT_READ,
			      MAP_SHARED, self->q.mmap_offset) == -EACCES ?
		      0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
