// SPDX-License-Identifier: GPL-2.0
/*
 * Hugepage-backed MRs (hugetlbfs and THP): pinned as runs of contiguous
 * pages, not page by page (the MR's extent count stays at most one per huge
 * page), accounted exactly, readable across huge page boundaries and
 * revoked like any other. The test reserves hugetlb pages itself
 * (vm.nr_hugepages) and gives them back.
 */
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "fuse_util.h"
#include "mr_util.h"
#include "nl_util.h"

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
		SETUP_SKIP("no %s: kernel without hugetlbfs", NR_PROC);
	/*
	 * From here a skip puts nr_hugepages back itself: SETUP_SKIP() runs
	 * no teardown, and the pool would stay grown after the test.
	 */
	if (write_long(NR_PROC, self->saved + want) && self->saved < 16) {
		write_long(NR_PROC, self->saved);
		SETUP_SKIP("cannot reserve huge pages (not root?)");
	}
	/* The VM may give fewer; anything from 32 MiB up will do. */
	self->npages = read_long(NR_PROC) - self->saved;
	if (self->npages > want)
		self->npages = want;
	if (self->npages < 16) {
		write_long(NR_PROC, self->saved);
		SETUP_SKIP("only %ld huge pages could be reserved",
			   self->npages);
	}
	self->mem = mmap(NULL, self->npages * HPAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (self->mem == MAP_FAILED) {
		int err = errno;

		self->mem = NULL;
		write_long(NR_PROC, self->saved);
		SETUP_SKIP("MAP_HUGETLB: %s", strerror(err));
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

/*
 * fork of private hugetlb memory clears its whole VMA (copy-on-write): the
 * pinned pages stay with the parent, so the MR stays valid on them.
 */
TEST_F_TIMEOUT(hugetlb, fork_keeps_mr, 120)
{
	struct inval_reader inv = {};
	struct swnic_inval_rec rec[2];
	struct swnic_mr_query q;
	uint64_t key;
	uint32_t h;
	int status;
	char c;
	pid_t pid;
	long have = read_long(NR_PROC);

	/* The child's copies of the pinned pages are huge pages too. */
	if (write_long(NR_PROC, have + 4) || read_long(NR_PROC) < have + 4)
		SKIP(return, "no 4 more huge pages for the child");
	ASSERT_EQ(0, inval_map(self->fd, &inv));
	ASSERT_EQ(0, mr_reg(self->fd, self->mem + HPAGE, 4 * HPAGE, RW_ALL, 0,
			    &key, &h));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The child's copy: the contents as of fork, its own now. */
		if (self->mem[2 * HPAGE] != 0x11)
			_exit(1);
		self->mem[2 * HPAGE] = 'c';
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	self->mem[2 * HPAGE + 1] = 'p';
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, q.state);
	EXPECT_EQ(0, q.revocations);
	EXPECT_EQ(0, inval_read(&inv, rec, 2));
	/* The parent's write is in the MR; the child's is not. */
	ASSERT_EQ(0, mr_peek(self->fd, key, HPAGE + 1, &c, 1));
	EXPECT_EQ('p', c);
	ASSERT_EQ(0, mr_peek(self->fd, key, HPAGE, &c, 1));
	EXPECT_EQ(0x11, c);

	/* Dropping its pages is still a change: revoked after the check. */
	ASSERT_EQ(0, madvise(self->mem, self->npages * HPAGE, MADV_DONTNEED));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
	ASSERT_EQ(1, inval_read(&inv, rec, 2));
	EXPECT_EQ(key, rec[0].key);
	EXPECT_EQ(-EKEYREVOKED, mr_peek(self->fd, key, 0, &c, 1));
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
		SETUP_SKIP("transparent hugepages are off (%s)", mode);
	self->len = 16 * HPAGE;
	self->raw = map_anon(self->len + HPAGE);
	ASSERT_NE(NULL, self->raw);
	self->mem = (char *)(((uintptr_t)self->raw + HPAGE - 1) & ~(HPAGE - 1));
	ASSERT_EQ(0, madvise(self->mem, self->len, MADV_HUGEPAGE));
	memset(self->mem, 0x22, self->len);
	if (anon_huge_kb() < (long)(HPAGE / 1024))
		SETUP_SKIP("no THP could be allocated");
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

/* ---- a check that finds the mmap lock kept -------------------------------- */

#define WQ_CPUMASK	"/sys/devices/virtual/workqueue/cpumask"
#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"
#define FAIR_SERVER	"/sys/kernel/debug/sched/fair_server/cpu1/runtime"

/* What the keeper tells the test, in turn. */
struct vk_msg {
	uint32_t domain, handle;	/* its MR */
	int stalled;			/* 1: its lock is kept */
	char dir[64];			/* its FUSE mount, to end the stall */
};

static int on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The keeper, on CPU 0: registers one THP (pinned) and says so; on a byte
 * from @in splits it (an mprotect of one 4 KiB page, which queues the MR's
 * check), then keeps its mmap lock (fuse_util.h) and says so; on the next
 * byte (the test has forced its FUSE mount off) it exits.
 */
static void vk_keeper(int in, int out)
{
	char *raw = map_anon(2 * HPAGE), *mem, c;
	struct vk_msg m = { 0 };
	struct lock_keep k;
	int fd = mr_open(), ret;

	if (fd < 0 || !raw || on_cpu(0))
		_exit(2);
	mem = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	if (madvise(mem, HPAGE, MADV_HUGEPAGE))
		_exit(2);
	memset(mem, 0x33, HPAGE);
	if (anon_huge_kb() < (long)(HPAGE / 1024))
		_exit(5);	/* no THP: the test skips */
	if (mr_reg(fd, mem, HPAGE, RW_ALL, 0, NULL, &m.handle))
		_exit(2);
	m.domain = mr_domain_id(fd);
	ret = lock_keep_prepare(&k);
	if (ret)
		_exit(ret > 0 ? 4 : 3);	/* 4: no FUSE, the test skips */
	snprintf(m.dir, sizeof(m.dir), "%s", k.fs.dir);
	if (write(out, &m, sizeof(m)) != sizeof(m) || read(in, &c, 1) != 1)
		_exit(3);

	if (mprotect(mem + PAGE, PAGE, PROT_READ))
		_exit(3);
	m.stalled = lock_keep_start(&k);
	if (m.stalled < 0)
		_exit(3);
	if (write(out, &m, sizeof(m)) != sizeof(m) || read(in, &c, 1) != 1)
		_exit(3);
	lock_keep_join(&k);
	fuse_stall_stop(&k.fs);
	m.stalled = 0;
	_exit(write(out, &m, sizeof(m)) == sizeof(m) ? 0 : 3);
}

/* A real-time spinner on CPU 1, until *@stop or 20 s; *@running once on. */
static void vk_spinner(volatile int *stop, volatile int *running)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec t0, t;

	if (on_cpu(1) || sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*running = 1;
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (!*stop && t.tv_sec - t0.tv_sec < 20);
	_exit(0);
}

static int read_str(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return -1;
	ret = fgets(buf, len, f) ? 0 : -1;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

static int write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(s, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

struct vk_state {
	uint32_t handle;
	int state;			/* -1 until seen */
};

static int vk_state_cb(const struct nlmsghdr *nlh, void *data)
{
	struct vk_state *v = data;
	struct nlc_attrs t;

	nlc_attrs(nlh, &t);
	if (nlc_u32(&t, SWNIC_A_MR_HANDLE) == v->handle)
		v->state = nlc_u32(&t, SWNIC_A_MR_STATE);
	return MNL_CB_OK;
}

/* The state of MR @handle of domain @domain, as netlink dumps it. */
static int vk_mr_state(struct nlc *c, uint32_t domain, uint32_t handle)
{
	struct vk_state v = { .handle = handle, .state = -1 };
	struct nlc_reply r = { .cb = vk_state_cb, .data = &v };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);

	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, domain);
	return nlc_talk(c, nlh, &r) ?: v.state;
}

FIXTURE(kept_lock)
{
	pid_t keeper, spinner;
	int to[2], from[2];
	volatile int *flags;		/* shared: [0] stop, [1] running */
	char cpumask[64], rt[32], fair[32];
	bool changed;
	char dir[64];
	struct nlc *c;
};

FIXTURE_SETUP(kept_lock)
{
	char mode[64] = "";

	self->keeper = self->spinner = 0;
	self->changed = false;
	self->dir[0] = '\0';
	self->fair[0] = '\0';
	self->flags = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->flags);
	self->c = calloc(1, sizeof(*self->c));
	ASSERT_NE(NULL, self->c);
	ASSERT_EQ(0, nlc_open(self->c));
	ASSERT_EQ(0, pipe(self->to));
	ASSERT_EQ(0, pipe(self->from));
	if (geteuid())
		SETUP_SKIP("not root: needs the workqueue and RT settings");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SETUP_SKIP("one CPU: needs two");
	read_str("/sys/kernel/mm/transparent_hugepage/enabled", mode,
		 sizeof(mode));
	if (!strstr(mode, "[always]") && !strstr(mode, "[madvise]"))
		SETUP_SKIP("transparent hugepages are off (%s)", mode);
	if (read_str(WQ_CPUMASK, self->cpumask, sizeof(self->cpumask)) ||
	    read_str(RT_RUNTIME, self->rt, sizeof(self->rt)))
		SETUP_SKIP("no %s or %s", WQ_CPUMASK, RT_RUNTIME);
	read_str(FAIR_SERVER, self->fair, sizeof(self->fair));
}

/* Give the workqueues and the scheduler their settings back. */
static void vk_restore(FIXTURE_DATA(kept_lock) *self)
{
	if (self->spinner > 0) {
		self->flags[0] = 1;
		waitpid(self->spinner, NULL, 0);
		self->spinner = 0;
	}
	if (!self->changed)
		return;
	if (self->fair[0])
		write_str(FAIR_SERVER, self->fair);
	write_str(RT_RUNTIME, self->rt);
	write_str(WQ_CPUMASK, self->cpumask);
	self->changed = false;
}

FIXTURE_TEARDOWN(kept_lock)
{
	vk_restore(self);
	if (self->dir[0])
		umount2(self->dir, MNT_FORCE);
	if (self->keeper > 0) {
		kill(self->keeper, SIGKILL);
		waitpid(self->keeper, NULL, 0);
	}
	if (self->dir[0]) {
		umount2(self->dir, MNT_DETACH);
		rmdir(self->dir);
	}
	nlc_close(self->c);
	free(self->c);
}

/* Say @c to the keeper (0: nothing) and take its next message into *@m. */
static int vk_say(FIXTURE_DATA(kept_lock) *self, char c, struct vk_msg *m)
{
	struct pollfd pf = { .fd = self->from[0], .events = POLLIN };

	if (c && write(self->to[1], &c, 1) != 1)
		return -1;
	return poll(&pf, 1, 20000) == 1 &&
	       read(self->from[0], m, sizeof(*m)) == sizeof(*m) ? 0 : -1;
}

/*
 * After a huge page split the MR's pages are compared with the mapping.
 * The process may keep its mmap lock meanwhile (for good: its own FUSE
 * server never answers): the check must not wait for it, since a worker
 * waiting there holds a slot of the workqueue every user's unpinning
 * needs (256 such MRs took them all) and hangs uninterruptibly. It gives
 * up after its bound (1 s) and revokes the MR: safe, as the owner can
 * register again. To have the check run only once the lock is kept, the
 * test keeps its worker off the CPUs meanwhile: unbound workqueues on CPU
 * 1 only, where a real-time task spins (with RT throttling off).
 */
TEST_F_TIMEOUT(kept_lock, check_does_not_wait_for_it, 120)
{
	struct timespec t0, t;
	struct vk_msg m;
	int st, state = -1;
	double secs = 0;
	char go = 'g';

	self->keeper = fork();
	ASSERT_LE(0, self->keeper);
	if (!self->keeper)
		vk_keeper(self->to[0], self->from[1]);
	if (vk_say(self, 0, &m)) {
		waitpid(self->keeper, &st, 0);
		self->keeper = 0;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 4)
			SKIP(return, "no FUSE");
		if (WIFEXITED(st) && WEXITSTATUS(st) == 5)
			SKIP(return, "no THP could be allocated");
		ASSERT_TRUE(0) TH_LOG("the keeper failed: status %#x", st);
	}
	snprintf(self->dir, sizeof(self->dir), "%s", m.dir);
	ASSERT_EQ(SWNIC_MR_STATE_VALID,
		  vk_mr_state(self->c, m.domain, m.handle));

	/* Unbound workers on CPU 1 only, and CPU 1 taken. */
	self->changed = true;
	ASSERT_EQ(0, write_str(WQ_CPUMASK, "2"));
	ASSERT_EQ(0, write_str(RT_RUNTIME, "-1"));
	if (self->fair[0])
		ASSERT_EQ(0, write_str(FAIR_SERVER, "0"));
	self->spinner = fork();
	ASSERT_LE(0, self->spinner);
	if (!self->spinner)
		vk_spinner(&self->flags[0], &self->flags[1]);
	for (int i = 0; i < 500 && !self->flags[1]; i++)
		usleep(10000);
	ASSERT_EQ(1, self->flags[1]);

	/* The split, then the lock kept; then the check may run. */
	ASSERT_EQ(0, vk_say(self, go, &m));
	ASSERT_EQ(1, m.stalled);
	vk_restore(self);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 100; i++) {
		state = vk_mr_state(self->c, m.domain, m.handle);
		if (state != SWNIC_MR_STATE_VALID)
			break;
		usleep(100000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	secs = t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9;
	/* Revoked within the bound, while the lock is still kept. */
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, state)
		TH_LOG("state %d after %.1f s: the check waits for the lock",
		       state, secs);
	if (state == SWNIC_MR_STATE_REVOKED)
		TH_LOG("revoked %.2f s after the lock was kept", secs);

	umount2(self->dir, MNT_FORCE);
	ASSERT_EQ(0, vk_say(self, 'r', &m));
	ASSERT_EQ(self->keeper, waitpid(self->keeper, &st, 0));
	self->keeper = 0;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST_HARNESS_MAIN
