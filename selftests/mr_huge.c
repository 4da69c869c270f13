// SPDX-License-Identifier: GPL-2.0
/*
 * Hugepage-backed MRs (hugetlbfs and THP): pinned as runs of contiguous
 * pages, not page by page (the MR's extent count stays at most one per huge
 * page), accounted exactly, readable across huge page boundaries and
 * revoked like any other. The test reserves hugetlb pages itself
 * (vm.nr_hugepages) and gives them back.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mr_util.h"

#define HPAGE		(2UL * 1024 * 1024)
#define NR_PROC		"/proc/sys/vm/nr_hugepages"

static long read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* kB of THP in this process (smaps_rollup AnonHugePages). */
static long anon_huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Register @len bytes of @mem; check compactness, accounting, access. */
static void check_huge_mr(struct __test_metadata *_metadata, int fd,
			  char *mem, uint64_t len)
{
	long base = vm_pinned_kb();
	struct swnic_mr_query q;
	uint64_t key, off;
	uint32_t h;
	char buf[16];

	ASSERT_EQ(0, mr_reg(fd, mem, len, RW_ALL, 0, &key, &h));
	ASSERT_EQ(0, mr_query(fd, h, &q));
	EXPECT_EQ(len, q.pinned_bytes);
	EXPECT_LE(1, q.extents);
	EXPECT_GE(len / HPAGE, q.extents);
	EXPECT_EQ(base + (long)(len / 1024), vm_pinned_kb());
	TH_LOG("%lu MiB pinned in %u runs", (unsigned long)(len >> 20),
	       q.extents);

	/* Across every huge page boundary, both ways. */
	for (off = HPAGE - 8; off + 16 <= len; off += HPAGE) {
		memcpy(mem + off, "0123456789abcdef", 16);
		ASSERT_EQ(0, mr_peek(fd, key, off, buf, 16));
		ASSERT_EQ(0, memcmp(buf, "0123456789abcdef", 16));
		ASSERT_EQ(0, mr_poke(fd, key, off, "FEDCBA9876543210", 16));
		ASSERT_EQ(0, memcmp(mem + off, "FEDCBA9876543210", 16));
	}
	ASSERT_EQ(0, mr_dereg(fd, h));
	EXPECT_EQ(base, vm_pinned_kb());
}

FIXTURE(hugetlb)
{
	int fd;
	long saved;
	long npages;
	char *mem;
};

FIXTURE_SETUP(hugetlb)
{
	long want = 512;	/* 1 GiB */

	self->saved = -1;
	self->mem = NULL;
	self->fd = mr_open();
	ASSERT_LE(0, self->fd);
	self->saved = read_long(NR_PROC);
	if (self->saved < 0)
		SKIP(return, "no %s: kernel without hugetlbfs", NR_PROC);
	if (write_long(NR_PROC, self->saved + want) && self->saved < 16)
		SKIP(return, "cannot reserve huge pages (not root?)");
	/* The VM may give fewer; anything from 32 MiB up will do. */
	self->npages = read_long(NR_PROC) - self->saved;
	if (self->npages > want)
		self->npages = want;
	if (self->npages < 16)
		SKIP(return, "only %ld huge pages could be reserved",
		     self->npages);
	self->mem = mmap(NULL, self->npages * HPAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (self->mem == MAP_FAILED) {
		self->mem = NULL;
		SKIP(return, "MAP_HUGETLB: %s", strerror(errno));
	}
	memset(self->mem, 0x11, self->npages * HPAGE);
}

FIXTURE_TEARDOWN(hugetlb)
{
	if (self->mem)
		munmap(self->mem, self->npages * HPAGE);
	close(self->fd);
	if (self->saved >= 0)
		write_long(NR_PROC, self->saved);
}

TEST_F_TIMEOUT(hugetlb, pinned_compactly, 120)
{
	check_huge_mr(_metadata, self->fd, self->mem, self->npages * HPAGE);
}

TEST_F_TIMEOUT(hugetlb, unaligned_part, 120)
{
	struct swnic_mr_query q;
	uint32_t h;

	/* From the middle of one huge page to the middle of another. */
	ASSERT_EQ(0, mr_reg(self->fd, self->mem + HPAGE / 2 + 100,
			    3 * HPAGE, RW_ALL, 0, NULL, &h));
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(3 * HPAGE + PAGE, q.pinned_bytes);
	EXPECT_GE(4, q.extents);
	ASSERT_EQ(0, mr_dereg(self->fd, h));
}

TEST_F_TIMEOUT(hugetlb, munmap_revokes, 120)
{
	struct inval_reader inv = {};
	struct swnic_inval_rec rec[2];
	long base = vm_pinned_kb();
	uint64_t key;
	uint32_t h;

	ASSERT_EQ(0, inval_map(self->fd, &inv));
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, 4 * HPAGE, RW_ALL, 0, &key,
			    &h));
	ASSERT_EQ(0, munmap(self->mem + 2 * HPAGE, HPAGE));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
	EXPECT_EQ(base, vm_pinned_kb());
	ASSERT_EQ(1, inval_read(&inv, rec, 2));
	EXPECT_EQ(key, rec[0].key);
	/* Give the rest back in pieces. */
	munmap(self->mem, 2 * HPAGE);
	munmap(self->mem + 3 * HPAGE, (self->npages - 3) * HPAGE);
	self->mem = NULL;
}

FIXTURE(thp)
{
	int fd;
	char *raw, *mem;
	size_t len;
};

FIXTURE_SETUP(thp)
{
	char mode[64] = "";
	FILE *f;

	self->raw = NULL;
	self->fd = mr_open();
	ASSERT_LE(0, self->fd);
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = '\0';
		fclose(f);
	}
	if (!strstr(mode, "[always]") && !strstr(mode, "[madvise]"))
		SKIP(return, "transparent hugepages are off (%s)", mode);
	self->len = 16 * HPAGE;
	self->raw = map_anon(self->len + HPAGE);
	ASSERT_NE(NULL, self->raw);
	self->mem = (char *)(((uintptr_t)self->raw + HPAGE - 1) & ~(HPAGE - 1));
	ASSERT_EQ(0, madvise(self->mem, self->len, MADV_HUGEPAGE));
	memset(self->mem, 0x22, self->len);
	if (anon_huge_kb() < (long)(HPAGE / 1024))
		SKIP(return, "no THP could be allocated");
}

FIXTURE_TEARDOWN(thp)
{
	if (self->raw)
		munmap(self->raw, self->len + HPAGE);
	close(self->fd);
}

TEST_F_TIMEOUT(thp, pinned_compactly, 120)
{
	struct swnic_mr_query q;
	uint32_t h;
	long thp = anon_huge_kb() * 1024;

	TH_LOG("%ld of %zu bytes are THP", thp, self->len);
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, self->len, RW_ALL, 0, NULL,
			    &h));
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(self->len, q.pinned_bytes);
	/* One run per huge page at most, plus one per 4 KiB page not in one. */
	EXPECT_GE((self->len - thp) / PAGE + thp / HPAGE, q.extents);
	EXPECT_GT(self->len / PAGE / 4, q.extents);
	ASSERT_EQ(0, mr_dereg(self->fd, h));
	if (thp == (long)self->len)
		check_huge_mr(_metadata, self->fd, self->mem, self->len);
}

/* fork write-protects; a pinned THP must stay with the parent, valid. */
TEST_F_TIMEOUT(thp, fork_keeps_mr, 120)
{
	struct swnic_mr_query q;
	uint64_t key;
	uint32_t h;
	int status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, self->len, RW_ALL, 0, &key,
			    &h));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(self->mem[HPAGE] == 0x22 ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	self->mem[HPAGE + 1] = 'p';
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, q.state);
	EXPECT_EQ(0, q.revocations);
	ASSERT_EQ(0, mr_peek(self->fd, key, HPAGE + 1, &c, 1));
	EXPECT_EQ('p', c);
}

/* Splitting a pinned THP keeps its pages: the MR stays valid. */
TEST_F_TIMEOUT(thp, split_keeps_mr, 120)
{
	struct inval_reader inv = {};
	struct swnic_inval_rec rec[2];
	uint64_t key;
	uint32_t h;
	char c;

	ASSERT_EQ(0, inval_map(self->fd, &inv));
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, self->len, RW_ALL, 0, &key,
			    &h));
	/* mprotect of one 4 KiB page splits its huge page. */
	ASSERT_EQ(0, mprotect(self->mem + 3 * HPAGE + PAGE, PAGE, PROT_READ));
	ASSERT_EQ(0, mprotect(self->mem + 3 * HPAGE + PAGE, PAGE,
			      PROT_READ | PROT_WRITE));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, mr_state(self->fd, h));
	self->mem[3 * HPAGE + PAGE] = 's';
	ASSERT_EQ(0, mr_peek(self->fd, key, 3 * HPAGE + PAGE, &c, 1));
	EXPECT_EQ('s', c);
	EXPECT_EQ(0, inval_read(&inv, rec, 2));

	/* Dropping a whole huge page is a change: revoked after the check. */
	ASSERT_EQ(0, madvise(self->mem + 5 * HPAGE, HPAGE, MADV_DONTNEED));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
	ASSERT_EQ(1, inval_read(&inv, rec, 2));
	EXPECT_EQ(key, rec[0].key);
	EXPECT_EQ(-EKEYREVOKED, mr_peek(self->fd, key, 0, &c, 1));
}

TEST_HARNESS_MAIN
