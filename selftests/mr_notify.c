// SPDX-License-Identifier: GPL-2.0
/*
 * MMU notifiers of MRs: munmap, mremap and MADV_DONTNEED revoke a pinned
 * MR (key refused, counter bumped, a record in the invalidation page);
 * mprotect and fork's write-protect do not; an on-demand MR drops its pages
 * and sees the new ones at the next access; REFRESH revalidates; the ring
 * of the invalidation page reports overflow instead of losing records.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mr_util.h"

#define NPAGES	4

FIXTURE(ntf)
{
	int fd;
	char *mem;
	struct inval_reader inv;
	long pin_base;
};

FIXTURE_SETUP(ntf)
{
	self->fd = mr_open();
	ASSERT_LE(0, self->fd);
	self->pin_base = vm_pinned_kb();
	self->mem = map_anon(NPAGES * PAGE);
	ASSERT_NE(NULL, self->mem);
	memset(self->mem, 'a', NPAGES * PAGE);
	ASSERT_EQ(0, inval_map(self->fd, &self->inv));
	ASSERT_EQ(0, self->inv.seen);
}

FIXTURE_TEARDOWN(ntf)
{
	close(self->fd);
	munmap(self->mem, NPAGES * PAGE);
}

/* The MR is revoked, counted once, recorded once, and unpinned. */
static void expect_revoked(struct __test_metadata *_metadata,
			   FIXTURE_DATA(ntf) *self, uint32_t handle,
			   uint64_t key, const void *addr, uint64_t len)
{
	struct swnic_inval_rec rec[4];
	struct swnic_mr_query q;
	char c;

	ASSERT_EQ(0, mr_query(self->fd, handle, &q));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, q.state);
	EXPECT_EQ(1, q.revocations);
	EXPECT_EQ(0, q.pinned_bytes);
	EXPECT_EQ(1, q.domain.revocations);
	EXPECT_EQ(0, q.domain.pinned_bytes);
	EXPECT_EQ(self->pin_base, vm_pinned_kb());
	EXPECT_EQ(-EKEYREVOKED, mr_peek(self->fd, key, 0, &c, 1));

	ASSERT_EQ(1, inval_read(&self->inv, rec, 4));
	EXPECT_EQ(1, rec[0].gen);
	EXPECT_EQ((uintptr_t)addr, rec[0].addr);
	EXPECT_EQ(len, rec[0].length);
	EXPECT_EQ(key, rec[0].key);
	EXPECT_EQ(1, self->inv.page->gen);
}

TEST_F(ntf, munmap_revokes)
{
	uint64_t key;
	uint32_t h;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL, 0,
			    &key, &h));
	EXPECT_EQ(self->pin_base + NPAGES * 4, vm_pinned_kb());
	/* One page in the middle is enough. */
	ASSERT_EQ(0, munmap(self->mem + PAGE, PAGE));
	expect_revoked(_metadata, self, h, key, self->mem, NPAGES * PAGE);
	/* Deregistering a revoked MR is fine. */
	ASSERT_EQ(0, mr_dereg(self->fd, h));
}

TEST_F(ntf, munmap_elsewhere_does_not_revoke)
{
	uint64_t key;
	uint32_t h;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem + PAGE, PAGE, RW_ALL, 0, &key,
			    &h));
	ASSERT_EQ(0, munmap(self->mem, PAGE));
	ASSERT_EQ(0, munmap(self->mem + 2 * PAGE, PAGE));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, mr_state(self->fd, h));
	EXPECT_EQ(0, self->inv.page->gen);
}

TEST_F(ntf, mremap_revokes)
{
	char *dst = map_anon(NPAGES * PAGE), *moved;
	uint64_t key;
	uint32_t h;

	ASSERT_NE(NULL, dst);
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL, 0,
			    &key, &h));
	moved = mremap(self->mem, NPAGES * PAGE, NPAGES * PAGE,
		       MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, moved);
	expect_revoked(_metadata, self, h, key, self->mem, NPAGES * PAGE);
	/* The old range is gone: put something there for the teardown. */
	self->mem = moved;
}

TEST_F(ntf, dontneed_revokes_pinned)
{
	uint64_t key;
	uint32_t h;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL, 0,
			    &key, &h));
	ASSERT_EQ(0, madvise(self->mem + 2 * PAGE, PAGE, MADV_DONTNEED));
	expect_revoked(_metadata, self, h, key, self->mem, NPAGES * PAGE);
}

TEST_F(ntf, mprotect_does_not_revoke)
{
	uint64_t key;
	uint32_t h;
	char c;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL, 0,
			    &key, &h));
	ASSERT_EQ(0, mprotect(self->mem, NPAGES * PAGE, PROT_READ));
	ASSERT_EQ(0, mprotect(self->mem, NPAGES * PAGE, PROT_NONE));
	ASSERT_EQ(0, mprotect(self->mem, NPAGES * PAGE,
			      PROT_READ | PROT_WRITE));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, mr_state(self->fd, h));
	self->mem[5] = 'P';
	ASSERT_EQ(0, mr_peek(self->fd, key, 5, &c, 1));
	EXPECT_EQ('P', c);
	EXPECT_EQ(0, self->inv.page->gen);
}

/* Parent writes after fork (COW): the MR keeps the parent's pages. */
TEST_F(ntf, fork_cow_write_in_parent)
{
	struct swnic_mr_query q;
	int to_child[2], to_parent[2], status;
	uint64_t key, okey;
	uint32_t h, oh;
	char c, buf[8];
	pid_t pid;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL, 0,
			    &key, &h));
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL,
			    SWNIC_MR_REG_ODP, &okey, &oh));
	ASSERT_EQ(0, mr_peek(self->fd, okey, 0, &c, 1));
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Wait for the parent's write, check ours is untouched. */
		if (read(to_child[0], &c, 1) != 1)
			_exit(2);
		_exit(self->mem[0] == 'a' && self->mem[PAGE] == 'a' ? 0 : 1);
	}
	self->mem[0] = 'P';
	memcpy(self->mem + PAGE, "parent", 7);
	ASSERT_EQ(1, write(to_child[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Pinned: still valid, and the key sees the parent's new bytes. */
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, q.state);
	EXPECT_EQ(0, q.revocations);
	ASSERT_EQ(0, mr_peek(self->fd, key, 0, &c, 1));
	EXPECT_EQ('P', c);
	ASSERT_EQ(0, mr_peek(self->fd, key, PAGE, buf, 7));
	EXPECT_STREQ("parent", buf);
	/* A peer's write lands where the parent reads. */
	ASSERT_EQ(0, mr_poke(self->fd, key, 2, "W", 1));
	EXPECT_EQ('W', self->mem[2]);
	/* On demand: sees the parent's pages too. */
	ASSERT_EQ(0, mr_peek(self->fd, okey, PAGE, buf, 7));
	EXPECT_STREQ("parent", buf);
	EXPECT_EQ(0, self->inv.page->gen);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

TEST_F(ntf, dontneed_on_demand_refaults)
{
	struct swnic_mr_query q0, q;
	uint64_t key;
	uint32_t h;
	char buf[8];

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL,
			    SWNIC_MR_REG_ODP, &key, &h));
	memcpy(self->mem + PAGE, "before", 7);
	ASSERT_EQ(0, mr_peek(self->fd, key, PAGE, buf, 7));
	EXPECT_STREQ("before", buf);
	ASSERT_EQ(0, mr_query(self->fd, h, &q0));

	ASSERT_EQ(0, madvise(self->mem, NPAGES * PAGE, MADV_DONTNEED));
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, q.state);
	EXPECT_EQ(q0.invalidations + 1, q.invalidations);
	EXPECT_EQ(q0.refaults, q.refaults);
	EXPECT_EQ(0, q.revocations);

	/* New page, new content: seen through the key. */
	memcpy(self->mem + PAGE, "after!", 7);
	ASSERT_EQ(0, mr_peek(self->fd, key, PAGE, buf, 7));
	EXPECT_STREQ("after!", buf);
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(q0.refaults + 1, q.refaults);
	EXPECT_EQ(q0.domain.refaults + 1, q.domain.refaults);
	EXPECT_EQ(q0.domain.invalidations + 1, q.domain.invalidations);
	/* And a peer's write reaches the new page. */
	ASSERT_EQ(0, mr_poke(self->fd, key, 3 * PAGE, "peer", 5));
	EXPECT_STREQ("peer", self->mem + 3 * PAGE);
	/* Nothing was revoked: nothing in the ring. */
	EXPECT_EQ(0, self->inv.page->gen);
	EXPECT_EQ(0, q.pinned_bytes);
}

TEST_F(ntf, on_demand_unmapped_then_remapped)
{
	uint64_t key;
	uint32_t h, st = 0;
	char *p, c;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL,
			    SWNIC_MR_REG_ODP, &key, &h));
	ASSERT_EQ(0, munmap(self->mem + PAGE, PAGE));
	EXPECT_EQ(-EFAULT, mr_peek(self->fd, key, PAGE, &c, 1));
	EXPECT_EQ(0, mr_peek(self->fd, key, 0, &c, 1));
	EXPECT_EQ(-EFAULT, mr_refresh(self->fd, h, NULL));
	p = mmap(self->mem + PAGE, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(self->mem + PAGE, p);
	p[0] = 'n';
	ASSERT_EQ(0, mr_refresh(self->fd, h, &st));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, st);
	ASSERT_EQ(0, mr_peek(self->fd, key, PAGE, &c, 1));
	EXPECT_EQ('n', c);
	/* Read-only memory cannot back a writable on-demand MR. */
	ASSERT_EQ(0, mprotect(self->mem, PAGE, PROT_READ));
	EXPECT_EQ(-EFAULT, mr_refresh(self->fd, h, NULL));
	EXPECT_EQ(-EFAULT, mr_poke(self->fd, key, 0, "x", 1));
	ASSERT_EQ(0, mprotect(self->mem, PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, self->inv.page->gen);
}

TEST_F(ntf, refresh_revalidates)
{
	uint64_t key;
	uint32_t h, st = 0;
	char *p, buf[8];

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL, 0,
			    &key, &h));
	/* Valid: nothing to do. */
	ASSERT_EQ(0, mr_refresh(self->fd, h, &st));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, st);

	ASSERT_EQ(0, munmap(self->mem + PAGE, PAGE));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
	/* Still a hole: refused, stays revoked, nothing pinned. */
	EXPECT_EQ(-EFAULT, mr_refresh(self->fd, h, NULL));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
	EXPECT_EQ(self->pin_base, vm_pinned_kb());

	p = mmap(self->mem + PAGE, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(self->mem + PAGE, p);
	memcpy(p, "fresh", 6);
	ASSERT_EQ(0, mr_refresh(self->fd, h, &st));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, st);
	EXPECT_EQ(self->pin_base + NPAGES * 4, vm_pinned_kb());
	/* Same key, new pages. */
	ASSERT_EQ(0, mr_peek(self->fd, key, PAGE, buf, 6));
	EXPECT_STREQ("fresh", buf);
	/* And it is watched again. */
	ASSERT_EQ(0, madvise(self->mem, PAGE, MADV_DONTNEED));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
	EXPECT_EQ(2, self->inv.page->gen);
}

TEST_F(ntf, records_in_order)
{
	struct swnic_inval_rec rec[8];
	uint64_t keys[3];
	uint32_t h[3];
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mr_reg(self->fd, self->mem + i * PAGE, PAGE,
				    RW_ALL, 0, &keys[i], &h[i]));
	/* Revoke the last, then the first, then the middle one. */
	ASSERT_EQ(0, madvise(self->mem + 2 * PAGE, PAGE, MADV_DONTNEED));
	ASSERT_EQ(0, madvise(self->mem, PAGE, MADV_DONTNEED));
	ASSERT_EQ(0, madvise(self->mem + PAGE, PAGE, MADV_DONTNEED));
	ASSERT_EQ(3, inval_read(&self->inv, rec, 8));
	EXPECT_EQ(keys[2], rec[0].key);
	EXPECT_EQ(keys[0], rec[1].key);
	EXPECT_EQ(keys[1], rec[2].key);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i + 1, rec[i].gen);
	EXPECT_EQ((uintptr_t)self->mem, rec[1].addr);
	EXPECT_EQ(PAGE, rec[1].length);
	/* Nothing new. */
	EXPECT_EQ(0, inval_read(&self->inv, rec, 8));
}

/* More revocations than entries at once: the reader is told. */
TEST_F(ntf, ring_overflow_is_flagged)
{
	struct swnic_inval_rec rec[8];
	struct swnic_mr_query q;
	uint32_t n = self->inv.entries + 5, i;
	uint64_t key;
	char *buf = map_anon(PAGE);

	ASSERT_NE(NULL, buf);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, mr_reg(self->fd, buf, PAGE, RW_ALL, 0, NULL,
				    NULL));
	ASSERT_EQ(0, munmap(buf, PAGE));
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(n, q.domain.revocations);
	EXPECT_EQ(n, self->inv.page->gen);
	EXPECT_EQ(-EOVERFLOW, inval_read(&self->inv, rec, 8));
	/* The reader starts over and keeps up from there. */
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, PAGE, RW_ALL, 0, &key, NULL));
	ASSERT_EQ(0, madvise(self->mem, PAGE, MADV_DONTNEED));
	ASSERT_EQ(1, inval_read(&self->inv, rec, 8));
	EXPECT_EQ(key, rec[0].key);
	EXPECT_EQ(n + 1, rec[0].gen);
	/* A reader exactly one ring behind has lost the oldest record. */
	self->inv.seen = n + 1 - self->inv.entries;
	EXPECT_EQ(-EOVERFLOW, inval_read(&self->inv, rec, 8));
	/* One less behind: everything is still there. */
	struct swnic_inval_rec *all = calloc(self->inv.entries, sizeof(*all));

	ASSERT_NE(NULL, all);
	self->inv.seen = n + 2 - self->inv.entries;
	EXPECT_EQ(self->inv.entries - 1,
		  (uint32_t)inval_read(&self->inv, all, self->inv.entries));
	EXPECT_EQ(n + 2 - self->inv.entries + 1, all[0].gen);
	EXPECT_EQ(n + 1, all[self->inv.entries - 2].gen);
	free(all);
}

/* Revoked while a peer keeps accessing: refused from then on, no crash. */
TEST_F(ntf, revoke_under_access)
{
	uint32_t me = mr_domain_id(self->fd), ak = dom_auth_key(self->fd);
	int status, i, ret;
	uint64_t key;
	uint32_t h;
	pid_t pid;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, NPAGES * PAGE, RW_ALL, 0,
			    &key, &h));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* A domain of its own in the child reads through the key. */
		char *buf = malloc(NPAGES * PAGE);
		int peer = mr_open();

		for (i = 0; buf && peer >= 0 && i < 1000000; i++) {
			ret = mr_access(peer, me, 0,
					SWNIC_MR_ACCESS_REMOTE_READ, key, ak,
					0, buf, NPAGES * PAGE);
			if (ret == -EKEYREVOKED)
				_exit(0);
			if (ret)
				_exit(2);
		}
		_exit(1);
	}
	usleep(50000);
	ASSERT_EQ(0, munmap(self->mem, NPAGES * PAGE));
	self->mem = map_anon(NPAGES * PAGE);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
}

TEST_HARNESS_MAIN
