// SPDX-License-Identifier: GPL-2.0
/*
 * Data-path ABI tests: CQs and endpoints, their mmapped rings, sends and
 * tagged sends matched in the kernel, unexpected messages, truncation,
 * multi-receive, both doorbell modes, and hostile ring contents.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "swnic_rings.h"
#include "mr_util.h"
#include "gauge_util.h"
#include "cpu_util.h"
#include "sys_util.h"

#define DEV_PATH "/dev/swnic0"

FIXTURE(dp)
{
	int da, db;			/* two domains */
	struct t_cq ca, cb;		/* one CQ each (tx and rx) */
	struct t_ep a, b;		/* one endpoint each */
};

FIXTURE_SETUP(dp)
{
	self->da = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	self->db = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->da);
	ASSERT_LE(0, self->db);
	ASSERT_EQ(0, t_cq_create(self->da, 64, &self->ca));
	ASSERT_EQ(0, t_cq_create(self->db, 64, &self->cb));
	ASSERT_EQ(0, t_ep_create(self->da, &self->ca, &self->ca,
				 SWNIC_EP_F_DB_SYSCALL, 0, 32, &self->a));
	ASSERT_EQ(0, t_ep_create(self->db, &self->cb, &self->cb,
				 SWNIC_EP_F_DB_SYSCALL, 0, 32, &self->b));
}

FIXTURE_TEARDOWN(dp)
{
	t_ep_destroy(&self->a);
	t_ep_destroy(&self->b);
	close(self->ca.fd);
	close(self->cb.fd);
	close(self->da);
	close(self->db);
}

/* When set, the sender's doorbell is held back (cpu_util.h). */
static struct cpu_slow *slow_sender;

/* Post a receive on b, a send from a, and ring both doorbells. */
static void exchange(struct __test_metadata *_metadata, FIXTURE_DATA(dp) *self,
		     struct swnic_sqe *s, struct swnic_rqe *r)
{
	int ret;

	if (r) {
		ASSERT_EQ(0, t_ring_push(&self->b.rq, r));
		ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	}
	ASSERT_EQ(0, t_ring_push(&self->a.sq, s));
	if (slow_sender)
		ASSERT_EQ(0, cpu_slow_enter(slow_sender));
	ret = t_doorbell(&self->a, NULL);
	if (slow_sender)
		ASSERT_EQ(0, cpu_slow_leave(slow_sender));
	ASSERT_EQ(0, ret);
}

TEST_F(dp, endpoint_addresses)
{
	EXPECT_EQ(htonl(INADDR_LOOPBACK), self->a.addr);
	EXPECT_NE(0, self->a.port);
	EXPECT_NE(self->a.port, self->b.port);
	EXPECT_EQ(0, *self->a.sq.flags & SWNIC_RING_F_NEED_WAKEUP);
}

TEST_F(dp, send_recv_one_copy)
{
	char src[300], dst[512];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 0xb0b);
	struct swnic_sqe s = t_send(src, sizeof(src), &self->b, 0xa11ce);
	struct swnic_cqe c;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)(i * 7 + 1);
	memset(dst, 0, sizeof(dst));
	s.flags |= SWNIC_SQE_REMOTE_DATA;
	s.data = 0x1234;
	exchange(_metadata, self, &s, &r);

	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0xa11ce, c.context);
	EXPECT_EQ(SWNIC_CQE_SEND, c.flags);
	EXPECT_EQ(sizeof(src), c.len);

	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(0xb0b, c.context);
	EXPECT_EQ(SWNIC_CQE_RECV | SWNIC_CQE_REMOTE_DATA, c.flags);
	EXPECT_EQ(sizeof(src), c.len);
	EXPECT_EQ((uintptr_t)dst, c.buf);
	EXPECT_EQ(0x1234, c.data);
	EXPECT_EQ(self->a.port, c.src_port);
	EXPECT_EQ(self->a.addr, c.src_addr);
	EXPECT_EQ(0, memcmp(src, dst, sizeof(src)));
	EXPECT_EQ(0, dst[sizeof(src)]);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
}

/*
 * One large send into @dst at @off: every byte lands, the ones around it
 * stay. @mr: the handle of an MR the receive names (SWNIC_RQE_MR), or 0.
 * The kernel copies runs of physically contiguous pages in one go (a huge
 * page is one run; ordinary pages make runs of every length), so
 * unaligned starts and ends inside a run must be exact. @given: the
 * source, untouched before the send; NULL: a pattern in fresh memory.
 */
static void large_copy_from(struct __test_metadata *_metadata,
			    FIXTURE_DATA(dp) *self, unsigned char *dst,
			    size_t dst_len, size_t off, size_t len, uint32_t mr,
			    unsigned char *given)
{
	unsigned char *src = given ?: malloc(len);
	struct swnic_rqe r = t_recv(dst + off, len, 0xb0b);
	struct swnic_sqe s = t_send(src, len, &self->b, 0xa11ce);
	struct swnic_cqe c;
	size_t i;

	ASSERT_NE(NULL, src);
	if (mr) {
		r.flags |= SWNIC_RQE_MR;
		r.mr = mr;
	}
	for (i = 0; !given && i < len; i++)
		src[i] = (unsigned char)(i * 131 + (i >> 12) + 7);
	memset(dst, 0x5a, dst_len);
	exchange(_metadata, self, &s, &r);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(len, c.len);
	EXPECT_EQ(0, memcmp(src, dst + off, len));
	for (i = 0; i < off; i++)
		if (dst[i] != 0x5a)
			break;
	EXPECT_EQ(off, i);
	for (i = off + len; i < dst_len; i++)
		if (dst[i] != 0x5a)
			break;
	EXPECT_EQ(dst_len, i);
	if (!given)
		free(src);
}

static void large_copy(struct __test_metadata *_metadata,
		       FIXTURE_DATA(dp) *self, unsigned char *dst,
		       size_t dst_len, size_t off, size_t len, uint32_t mr)
{
	large_copy_from(_metadata, self, dst, dst_len, off, len, mr, NULL);
}

/* Deliveries into a receive's MR so far, in domain @dom. */
static uint64_t recv_mr_copies(struct __test_metadata *_metadata, int dom)
{
	uint64_t v = 0;

	EXPECT_EQ(0, stat_read_domain(mr_domain_id(dom), "recv_mr_copies", &v));
	return v;
}

/*
 * large_copy() twice: into @dst as it is mapped (pinned for the copy),
 * then through an MR over all of it (SWNIC_RQE_MR: the MR's pages, runs
 * taken from its extents), which must have been used.
 */
static void large_copy_both(struct __test_metadata *_metadata,
			    FIXTURE_DATA(dp) *self, unsigned char *dst,
			    size_t dst_len, size_t off, size_t len)
{
	uint64_t before;
	uint32_t h;

	large_copy(_metadata, self, dst, dst_len, off, len, 0);
	ASSERT_EQ(0, mr_reg(self->db, dst, dst_len, SWNIC_MR_ACCESS_RECV, 0,
			    NULL, &h));
	before = recv_mr_copies(_metadata, self->db);
	large_copy(_metadata, self, dst, dst_len, off, len, h);
	EXPECT_EQ(before + 1, recv_mr_copies(_metadata, self->db));
	EXPECT_EQ(0, mr_dereg(self->db, h));
}

TEST_F(dp, large_copy_across_page_runs)
{
	size_t len = 1 << 21;
	unsigned char *dst, *raw;
	int had = -1;
	FILE *nr;

	/* Ordinary pages, touched in reverse so that few neighbour. */
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	for (size_t i = len; i; i -= 4096)
		dst[i - 1] = 1;
	large_copy_both(_metadata, self, dst, len, 4095, len - 4095 - 4097);
	large_copy_both(_metadata, self, dst, len, 1, 70001);
	munmap(dst, len);

	/*
	 * Transparent huge pages, several in a row: copies cross from one
	 * to the next, which may well be its physical neighbour, and a run
	 * must end at the folio (hardened usercopy stops a copy that spans
	 * two with a kernel BUG).
	 */
	raw = mmap(NULL, 5 * len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	dst = (unsigned char *)(((uintptr_t)raw + len - 1) & ~(len - 1));
	madvise(dst, 4 * len, MADV_HUGEPAGE);
	memset(dst, 1, 4 * len);
	large_copy_both(_metadata, self, dst, 4 * len, len - 12345, 2 * len + 777);
	large_copy_both(_metadata, self, dst, 4 * len, 0, 4 * len);
	munmap(raw, 5 * len);

	/* A huge page: one run of 512 pages (reserved here if none is). */
	nr = fopen("/proc/sys/vm/nr_hugepages", "r+");
	if (nr && fscanf(nr, "%d", &had) == 1 && !had) {
		rewind(nr);
		fprintf(nr, "1\n");
		fflush(nr);
	}
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (dst != MAP_FAILED) {
		large_copy_both(_metadata, self, dst, len, 123, len - 123 - 5);
		large_copy_both(_metadata, self, dst, len, 8191, 300000);
		munmap(dst, len);
	}
	if (nr && !had) {
		rewind(nr);
		fprintf(nr, "0\n");
	}
	if (nr)
		fclose(nr);
	if (dst == MAP_FAILED)
		SKIP(return, "no huge page: %s", strerror(errno));
}

/* ---- receives into registered memory (SWNIC_RQE_MR) -------------------- */

/* @len bytes of fresh memory, all 1s, registered with the RECV right. */
static unsigned char *recv_mr_buffer(int dom, size_t len, uint32_t *h)
{
	unsigned char *p = map_anon(len);

	if (!p)
		return NULL;
	memset(p, 1, len);
	if (mr_reg(dom, p, len, SWNIC_MR_ACCESS_RECV, 0, NULL, h)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

TEST_F(dp, recv_into_registered_memory)
{
	size_t len = 1 << 20, all = len + 2 * PAGE;
	uint32_t h;
	unsigned char *dst = recv_mr_buffer(self->db, all, &h);
	uint64_t before;

	ASSERT_NE(NULL, dst);
	before = recv_mr_copies(_metadata, self->db);
	/* Streaming stores from an unaligned start; a piece across a page. */
	large_copy(_metadata, self, dst, all, 123, len, h);
	large_copy(_metadata, self, dst, all, PAGE - 1, 5000, h);
	/* All of the MR, to its last byte. */
	large_copy(_metadata, self, dst, all, 0, all, h);
	EXPECT_EQ(before + 3, recv_mr_copies(_metadata, self->db));
	EXPECT_EQ(0, mr_dereg(self->db, h));

	/* Deregistered: the same receive is written as without an MR. */
	large_copy(_metadata, self, dst, all, 7, 70000, h);
	EXPECT_EQ(before + 3, recv_mr_copies(_metadata, self->db));
	munmap(dst, all);
}

/*
 * The handle is a hint: a receive that names an MR that cannot take the
 * message (another buffer's, one without the RECV right, on-demand, too
 * short, another domain's, none) still gets every byte in its buffer and
 * nothing lands anywhere else.
 */
TEST_F(dp, recv_mr_hint_is_checked)
{
	size_t len = 64 * 1024;
	unsigned char *buf = map_anon(4 * len);
	unsigned char *dst = buf, *other = buf + 2 * len, *x = buf + 3 * len;
	struct swnic_rqe r = t_recv(dst, 8, 0xbad);
	struct swnic_cqe c;
	uint32_t h[6], ha;
	uint64_t before;
	size_t i, n = 0;

	ASSERT_NE(NULL, buf);
	memset(buf, 0x77, 4 * len);
	ASSERT_EQ(0, mr_reg(self->db, other, len, SWNIC_MR_ACCESS_RECV, 0,
			    NULL, &h[n++]));
	ASSERT_EQ(0, mr_reg(self->db, dst, 2 * len, SWNIC_MR_ACCESS_SEND, 0,
			    NULL, &h[n++]));
	ASSERT_EQ(0, mr_reg(self->db, dst, len / 2, SWNIC_MR_ACCESS_RECV, 0,
			    NULL, &h[n++]));
	if (!mr_reg(self->db, dst, 2 * len, SWNIC_MR_ACCESS_RECV,
		    SWNIC_MR_REG_ODP, NULL, &h[n]))
		n++;
	h[n++] = 0xfffffff0;
	/* Domain a's MR over x: b's receives look in b's MRs only. */
	ASSERT_EQ(0, mr_reg(self->da, x, len, SWNIC_MR_ACCESS_RECV, 0, NULL,
			    &ha));
	h[n++] = ha;

	before = recv_mr_copies(_metadata, self->db);
	for (i = 0; i < n; i++) {
		size_t j;

		large_copy(_metadata, self, dst, 2 * len, 1, len, h[i]);
		for (j = 0; j < 2 * len; j++) {
			if (other[j] != 0x77)
				break;
		}
		EXPECT_EQ(2 * len, j) {
			TH_LOG("hint %zu wrote elsewhere", i);
		}
	}
	EXPECT_EQ(before, recv_mr_copies(_metadata, self->db));

	/* A handle without the flag is refused. */
	r.mr = h[0];
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(0xbad, c.context);
	EXPECT_EQ(EINVAL, c.err);
	EXPECT_EQ(0, mr_dereg(self->da, ha));
	for (i = 0; i + 2 < n; i++)
		EXPECT_EQ(0, mr_dereg(self->db, h[i]));
	munmap(buf, 4 * len);
}

/*
 * The buffer's pages change after the receive was posted (a new mapping
 * at its address): the MR's notifier revoked it, and the message lands in
 * the buffer's new pages, not in the ones the MR had pinned.
 */
TEST_F(dp, recv_mr_after_remap)
{
	size_t len = 256 * 1024;
	unsigned char *dst = map_anon(len), *src = malloc(len);
	struct swnic_rqe r = t_recv(dst, len, 0xb0b);
	struct swnic_sqe s = t_send(src, len, &self->b, 0xa11ce);
	struct swnic_cqe c;
	uint64_t before;
	uint32_t h;

	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, src);
	memset(dst, 1, len);
	for (size_t i = 0; i < len; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	ASSERT_EQ(0, mr_reg(self->db, dst, len, SWNIC_MR_ACCESS_RECV, 0, NULL,
			    &h));
	before = recv_mr_copies(_metadata, self->db);
	r.flags |= SWNIC_RQE_MR;
	r.mr = h;
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));

	ASSERT_EQ(dst, mmap(dst, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->db, h));

	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(len, c.len);
	EXPECT_EQ(0, memcmp(src, dst, len));
	EXPECT_EQ(before, recv_mr_copies(_metadata, self->db));
	EXPECT_EQ(0, mr_dereg(self->db, h));
	munmap(dst, len);
	free(src);
}

/*
 * A source whose pages are not mapped yet (a file's, never touched): the
 * copy into the MR stops at the fault, the doorbell faults the source in
 * and delivers again, into the MR.
 */
TEST_F(dp, recv_mr_source_faults_in)
{
	size_t len = 512 * 1024;
	unsigned char *dst = map_anon(len), *pattern = malloc(len), *src;
	struct swnic_rqe r = t_recv(dst, len, 0xb0b);
	struct swnic_sqe s;
	struct swnic_cqe c;
	uint64_t before;
	uint32_t h;
	int fd = memfd_create("swnic-src", MFD_CLOEXEC);

	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, pattern);
	ASSERT_LE(0, fd);
	for (size_t i = 0; i < len; i++)
		pattern[i] = (unsigned char)(i * 13 + (i >> 12));
	ASSERT_EQ((ssize_t)len, pwrite(fd, pattern, len, 0));
	src = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, src);
	memset(dst, 1, len);
	ASSERT_EQ(0, mr_reg(self->db, dst, len, SWNIC_MR_ACCESS_RECV, 0, NULL,
			    &h));
	before = recv_mr_copies(_metadata, self->db);
	r.flags |= SWNIC_RQE_MR;
	r.mr = h;
	s = t_send(src, len, &self->b, 0xa11ce);
	exchange(_metadata, self, &s, &r);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(0, memcmp(pattern, dst, len));
	EXPECT_EQ(before + 1, recv_mr_copies(_metadata, self->db));
	EXPECT_EQ(0, mr_dereg(self->db, h));
	munmap(src, len);
	close(fd);
	munmap(dst, len);
	free(pattern);
}

/* ---- large copies shared with the receiver's poll (SWNIC_IOCTL_CQ_HELP) */

static uint64_t copy_help_bytes(struct __test_metadata *_metadata, int dom)
{
	uint64_t v = 0;

	EXPECT_EQ(0, stat_read_domain(mr_domain_id(dom), "copy_help_bytes", &v));
	return v;
}

struct helper {
	int cq_fd;
	_Atomic int stop;
	uint64_t copied;	/* what its calls copied */
	uint64_t calls, helped;	/* calls; those that copied something */
	int err;		/* the first failure's errno */
	int cpu;		/* the CPU it runs on, -1: any */
};

/* The receiver's poll: while its CQ is empty, help whatever it shares. */
static void *helper_main(void *arg)
{
	struct helper *hp = arg;

	if (hp->cpu >= 0)
		hp->err = cpu_pin(hp->cpu);
	while (!atomic_load(&hp->stop)) {
		struct swnic_cq_help h = { .size = sizeof(h), .copied = 99 };

		if (ioctl(hp->cq_fd, SWNIC_IOCTL_CQ_HELP, &h)) {
			if (!hp->err)
				hp->err = errno;
			continue;
		}
		hp->calls++;
		hp->copied += h.copied;
		hp->helped += !!h.copied;
	}
	return NULL;
}

/*
 * Large sends into a receive's MR while a thread of the receiver calls
 * CQ_HELP on its CQ, as the provider's CQ read does: every byte lands
 * where it belongs whoever copied it (both copy by 64 KiB chunks, from
 * the sender's pages at its own offset into the MR's at the receive's),
 * the helper's bytes are counted exactly, and the flag is gone after.
 * A 9 MiB message is shared as three jobs (4 MiB at most each), a 48 MiB
 * one as twelve.
 *
 * The sender (this thread) and the helper run on CPUs of their own, and
 * the sender's doorbells are held back (cpu_slow: a millisecond of CPU
 * time per 20 ms, enforced at the next tick, 4 ms at most later): the
 * 48 MiB copy (some 15 ms of the sender's time) is stopped midway, for
 * most of a period, more than once - so the helper surely runs while a
 * job is published, however the host runs the guest's vCPUs. Two rounds
 * of the 7 cases; a round nobody helped (a copy nobody helped makes the
 * kernel skip the next 8 large copies) only adds rounds, at most 20.
 */
TEST_F_TIMEOUT(dp, large_copy_shared_with_receiver_poll, 300)
{
	static const size_t cases[][2] = {	/* offset, length */
		{ 123, 1 << 20 }, { PAGE - 1, 300001 }, { 0, 4 << 20 },
		{ 77, (9 << 20) + 5 }, { 5000, 256 * 1024 }, { 1, 2 << 20 },
		{ PAGE + 1, 48 << 20 },
	};
	size_t all = (48 << 20) + 2 * PAGE;
	struct helper hp = { .cq_fd = self->cb.fd, .cpu = -1 };
	struct cpu_slow cs = {};
	uint64_t before, mr_before;
	unsigned int round, i;
	const char *what;
	unsigned char *dst;
	int cpu[2], ret;
	pthread_t t;
	uint32_t h;

	if (cpu_pick2(cpu) < 2)
		SKIP(return, "one CPU: nobody to share a copy with");
	ret = cpu_slow_init(&cs, &what);
	if (ret)
		SKIP(return, "no cgroup to hold the sender back: %s: %s",
		     what, strerror(-ret));
	dst = recv_mr_buffer(self->db, all, &h);
	ASSERT_NE(NULL, dst);
	ASSERT_EQ(0, cpu_pin(cpu[0]));
	hp.cpu = cpu[1];
	before = copy_help_bytes(_metadata, self->db);
	mr_before = recv_mr_copies(_metadata, self->db);
	ASSERT_EQ(0, pthread_create(&t, NULL, helper_main, &hp));
	slow_sender = &cs;
	for (round = 0; round < 20; round++) {
		if (round >= 2 &&
		    copy_help_bytes(_metadata, self->db) > before)
			break;
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			large_copy(_metadata, self, dst, all, cases[i][0],
				   cases[i][1], h);
	}
	slow_sender = NULL;
	atomic_store(&hp.stop, 1);
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, hp.err);
	EXPECT_LT(0, hp.calls);
	/* Two CPUs, a spinning helper, a held-back sender: it took part. */
	EXPECT_LT(0, hp.helped);
	EXPECT_LT(0, hp.copied);
	EXPECT_EQ(before + hp.copied, copy_help_bytes(_metadata, self->db));
	EXPECT_EQ(mr_before + round * ARRAY_SIZE(cases),
		  recv_mr_copies(_metadata, self->db));
	EXPECT_EQ(0, atomic_load(self->cb.ring.flags) & SWNIC_RING_F_HELP);
	TH_LOG("helper: %llu of its %llu calls copied %llu bytes in %u "
	       "rounds; the sender was held back %ld times",
	       (unsigned long long)hp.helped, (unsigned long long)hp.calls,
	       (unsigned long long)hp.copied, round, cpu_slow_throttled(&cs));
	EXPECT_EQ(0, mr_dereg(self->db, h));
	munmap(dst, all);
	cpu_slow_fini(&cs);
}

/*
 * A source whose pages were never touched is not shared (the kernel takes
 * no page that is not there): it is faulted in and copied the ordinary
 * way. Then nobody helps: the sender copies all of it itself, every byte
 * right, nothing counted.
 */
TEST_F(dp, large_copy_unshared)
{
	size_t len = 3 << 20, all = len + PAGE;
	uint32_t h;
	unsigned char *dst = recv_mr_buffer(self->db, all, &h);
	unsigned char *fresh = map_anon(len);
	uint64_t before, mr_before;
	unsigned int i;

	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, fresh);
	before = copy_help_bytes(_metadata, self->db);
	mr_before = recv_mr_copies(_metadata, self->db);

	/*
	 * First (a copy no one helped makes the CQ skip the next ones); its
	 * zeros are read only after the send.
	 */
	large_copy_from(_metadata, self, dst, all, 9, len, h, fresh);
	for (i = 0; i < 3; i++)
		large_copy(_metadata, self, dst, all, i * 1000, len - 7, h);
	EXPECT_EQ(before, copy_help_bytes(_metadata, self->db));
	EXPECT_EQ(mr_before + 4, recv_mr_copies(_metadata, self->db));
	EXPECT_EQ(0, atomic_load(self->cb.ring.flags) & SWNIC_RING_F_HELP);
	EXPECT_EQ(0, mr_dereg(self->db, h));
	munmap(fresh, len);
	munmap(dst, all);
}

/*
 * The ioctl's contract: on a CQ's fd only, by the domain's owner only;
 * nothing to do is no error.
 */
TEST_F(dp, cq_help_abi)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_cq_help h = { .size = sizeof(h), .copied = 99 };
	int status;
	pid_t pid;

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_COPY_HELP);
	/* No copy shared now. */
	ASSERT_EQ(0, ioctl(self->cb.fd, SWNIC_IOCTL_CQ_HELP, &h));
	EXPECT_EQ(0, h.copied);
	/* Flags it does not know; a struct shorter than its first size. */
	h.flags = 1;
	ASSERT_EQ(-1, ioctl(self->cb.fd, SWNIC_IOCTL_CQ_HELP, &h));
	EXPECT_EQ(EOPNOTSUPP, errno);
	h.flags = 0;
	h.size = offsetof(struct swnic_cq_help, copied);
	ASSERT_EQ(-1, ioctl(self->cb.fd, SWNIC_IOCTL_CQ_HELP, &h));
	EXPECT_EQ(EINVAL, errno);
	h.size = sizeof(h);
	/* Not on a device's or an endpoint's fd; their commands not here. */
	ASSERT_EQ(-1, ioctl(self->db, SWNIC_IOCTL_CQ_HELP, &h));
	EXPECT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_CQ_HELP, &h));
	EXPECT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->cb.fd, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->cb.fd, SWNIC_IOCTL_EP_DOORBELL, &h));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(0, atomic_load(self->cb.ring.flags) & SWNIC_RING_F_HELP);
	/* Only the domain's owner helps: not a child holding the CQ's fd. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (ioctl(self->cb.fd, SWNIC_IOCTL_CQ_HELP, &h) != -1)
			_exit(1);
		_exit(errno == EPERM ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child's CQ_HELP: %s",
						 WEXITSTATUS(status) == 1 ?
						 "it helped" : "not EPERM");
	ASSERT_EQ(0, ioctl(self->cb.fd, SWNIC_IOCTL_CQ_HELP, &h));
}

TEST_F(dp, no_completion_unless_asked)
{
	char buf[8] = "abcdefg", dst[8];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe s = t_send(buf, sizeof(buf), &self->b, 2);
	struct swnic_cqe c;

	s.flags = 0;
	exchange(_metadata, self, &s, &r);
	EXPECT_EQ(0, t_cq_pop(&self->ca, &c));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_STREQ("abcdefg", dst);
}

TEST_F(dp, inline_send)
{
	char dst[SWNIC_INLINE_MAX];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe s = t_send(NULL, 0, &self->b, 2);
	struct swnic_cqe c;

	s.flags |= SWNIC_SQE_INLINE;
	s.len = sizeof(dst);
	memset(s.inline_data, 0x5a, sizeof(s.inline_data));
	exchange(_metadata, self, &s, &r);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(SWNIC_INLINE_MAX, c.len);
	for (size_t i = 0; i < sizeof(dst); i++)
		ASSERT_EQ(0x5a, (unsigned char)dst[i]);

	/* More than fits inline is refused with an error completion. */
	s.len = SWNIC_INLINE_MAX + 1;
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(SWNIC_CQE_SEND | SWNIC_CQE_ERROR, c.flags);
	EXPECT_EQ(EINVAL, c.err);
}

TEST_F(dp, unexpected_then_recv)
{
	char msg[3][16] = { "first", "second", "third" }, dst[16];
	struct swnic_cqe c;

	for (int i = 0; i < 3; i++) {
		struct swnic_sqe s = t_send(msg[i], sizeof(msg[i]), &self->b, i);

		exchange(_metadata, self, &s, NULL);
		ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
		EXPECT_EQ(0, c.err);
	}
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	/* Receives posted later take the buffered messages in order. */
	for (int i = 0; i < 3; i++) {
		struct swnic_rqe r = t_recv(dst, sizeof(dst), 100 + i);

		ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
		ASSERT_EQ(0, t_doorbell(&self->b, NULL));
		ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
		EXPECT_EQ(100 + i, c.context);
		EXPECT_STREQ(msg[i], dst);
	}
}

/*
 * A receive whose buffer faults fails alone: the receive posted behind it
 * in the same doorbell, into a buffer never touched yet (faulted in when
 * its copy gets there), takes the next buffered message. Before, the
 * fault of the first failed every later receive of the pass with EFAULT,
 * threw their messages away and told a delivery-complete sender of one
 * that it had been received.
 */
TEST_F(dp, unexpected_fault_fails_only_its_receive)
{
	char msg[2][16] = { "first", "second" }, *gone, *fresh;
	struct swnic_sqe s;
	struct swnic_rqe r;
	struct swnic_cqe c;

	s = t_send(msg[0], sizeof(msg[0]), &self->b, 1);
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	s = t_send(msg[1], sizeof(msg[1]), &self->b, 2);
	s.flags |= SWNIC_SQE_DELIVERY;
	exchange(_metadata, self, &s, NULL);
	EXPECT_EQ(0, t_cq_pop(&self->ca, &c));

	/*
	 * B: mapped, never touched (no page yet). A: unmapped, after B is
	 * mapped, so that B's mapping does not take its place.
	 */
	fresh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fresh);
	gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, 4096));
	r = t_recv(gone, sizeof(msg[0]), 100);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	r = t_recv(fresh, sizeof(msg[1]), 101);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));

	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(100, c.context);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(EFAULT, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(101, c.context);
	EXPECT_EQ(0, c.flags & SWNIC_CQE_ERROR)
		TH_LOG("the receive behind the fault failed: err %u", c.err);
	EXPECT_EQ(0, c.err);
	EXPECT_STREQ(msg[1], fresh);
	/* The delivery-complete sender: its own receive's outcome. */
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(2, c.context);
	EXPECT_EQ(0, c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	munmap(fresh, 4096);
}

/*
 * A delivery-complete send whose receive faults was not received: its
 * sender learns the receive's error, not success.
 */
TEST_F(dp, delivery_complete_reports_its_receive_fault)
{
	char msg[16] = "lost", *gone;
	struct swnic_sqe s = t_send(msg, sizeof(msg), &self->b, 5);
	struct swnic_rqe r;
	struct swnic_cqe c;

	s.flags |= SWNIC_SQE_DELIVERY;
	exchange(_metadata, self, &s, NULL);
	EXPECT_EQ(0, t_cq_pop(&self->ca, &c));
	gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, 4096));
	r = t_recv(gone, sizeof(msg), 50);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(50, c.context);
	EXPECT_EQ(EFAULT, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(5, c.context);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR)
		TH_LOG("the sender was told its send was received");
	EXPECT_EQ(EFAULT, c.err);
}

TEST_F(dp, delivery_complete_waits_for_a_receive)
{
	char msg[2][16] = { "delivered", "never taken" }, dst[16];
	struct swnic_sqe s = t_send(msg[0], sizeof(msg[0]), &self->b, 7);
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 70);
	struct swnic_cqe c;

	/* Buffered as unexpected: no completion for the sender yet. */
	s.flags |= SWNIC_SQE_DELIVERY;
	exchange(_metadata, self, &s, NULL);
	EXPECT_EQ(0, t_cq_pop(&self->ca, &c));
	/* The receive takes it: both sides complete. */
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(70, c.context);
	EXPECT_STREQ(msg[0], dst);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(7, c.context);
	EXPECT_EQ(0, c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(SWNIC_CQE_SEND, c.flags);
	EXPECT_EQ(sizeof(msg[0]), c.len);

	/* A posted receive takes it at once: completes at once. */
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(7, c.context);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));

	/* The target closes with it unreceived: the send fails. */
	s = t_send(msg[1], sizeof(msg[1]), &self->b, 8);
	s.flags |= SWNIC_SQE_DELIVERY;
	exchange(_metadata, self, &s, NULL);
	EXPECT_EQ(0, t_cq_pop(&self->ca, &c));
	t_ep_destroy(&self->b);
	self->b.fd = -1;
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(8, c.context);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(ECONNABORTED, c.err);
}

TEST_F(dp, delivery_complete_holds_the_cq_slot)
{
	struct swnic_sqe s = t_send("x", 2, &self->b, 1);
	struct swnic_ep_doorbell db;
	struct swnic_cqe c;
	struct t_cq small;
	struct t_ep a2;
	char dst[4];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 100);

	/* A 4-entry transmit CQ: at most 4 sends can be outstanding. */
	ASSERT_EQ(0, t_cq_create(self->da, 4, &small));
	ASSERT_EQ(4, small.ring.entries);
	ASSERT_EQ(0, t_ep_create(self->da, &small, &self->ca,
				 SWNIC_EP_F_DB_SYSCALL | SWNIC_EP_F_RM_ENABLED,
				 0, 8, &a2));
	s.flags |= SWNIC_SQE_DELIVERY;
	for (int i = 0; i < 6; i++) {
		s.context = i;
		ASSERT_EQ(0, t_ring_push(&a2.sq, &s));
	}
	/* Four are buffered at b, each holding its slot; two wait. */
	ASSERT_EQ(0, t_doorbell(&a2, &db));
	EXPECT_EQ(4, db.sq_done);
	EXPECT_EQ(0, t_cq_pop(&small, &c));
	/* A receive takes the first: its completion uses its slot. */
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	/* Still no room for the fifth until that completion is read. */
	ASSERT_EQ(0, t_doorbell(&a2, &db));
	EXPECT_EQ(0, db.sq_done);
	ASSERT_EQ(1, t_cq_pop(&small, &c));
	EXPECT_EQ(0, c.context);
	EXPECT_EQ(0, c.flags & SWNIC_CQE_ERROR);
	ASSERT_EQ(0, t_doorbell(&a2, &db));
	EXPECT_EQ(1, db.sq_done);
	EXPECT_EQ(0, t_cq_pop(&small, &c));
	/* b goes away: the four still buffered fail, in order. */
	t_ep_destroy(&self->b);
	self->b.fd = -1;
	for (int i = 1; i <= 4; i++) {
		ASSERT_EQ(1, t_cq_pop(&small, &c));
		EXPECT_EQ(i, c.context);
		EXPECT_EQ(ECONNABORTED, c.err);
	}
	t_ep_destroy(&a2);
	close(small.fd);
}

TEST_F(dp, lazy_rq_needs_no_doorbell)
{
	char src[3][16] = { "lazy", "waits", "late" }, dst[3][16] = {};
	struct swnic_rqe r = t_recv(dst[0], sizeof(dst[0]), 1);
	struct swnic_sqe s = t_send(src[0], sizeof(src[0]), &self->b, 2);
	struct swnic_cqe c;

	EXPECT_TRUE(*self->b.rq.flags & SWNIC_RING_F_LAZY);
	EXPECT_FALSE(*self->b.rq.flags & SWNIC_RING_F_NEED_WAKEUP);

	/* A receive posted without a doorbell is taken by the sender. */
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(1, c.context);
	EXPECT_EQ(SWNIC_CQE_RECV, c.flags);
	EXPECT_STREQ("lazy", dst[0]);
	EXPECT_EQ(*self->b.rq.tail, *self->b.rq.head);

	/* A message with no receive waits, and the kernel asks for a doorbell. */
	s.addr = (uintptr_t)src[1];
	exchange(_metadata, self, &s, NULL);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	EXPECT_TRUE(*self->b.rq.flags & SWNIC_RING_F_NEED_WAKEUP);

	/* A receive posted then, without the doorbell, is not matched... */
	r = t_recv(dst[1], sizeof(dst[1]), 3);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	/* ...until the doorbell, or the next sender, takes it: in order. */
	r = t_recv(dst[2], sizeof(dst[2]), 4);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	s.addr = (uintptr_t)src[2];
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(3, c.context);
	EXPECT_STREQ("waits", dst[1]);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(4, c.context);
	EXPECT_STREQ("late", dst[2]);
	EXPECT_FALSE(*self->b.rq.flags & SWNIC_RING_F_NEED_WAKEUP);
}

/*
 * A doorbell rung for the SQ (SWNIC_DB_SQ) leaves a lazy RQ's receives to
 * the next sender, unless a message waits for them; it sends as ever.
 */
TEST_F(dp, sq_doorbell_leaves_lazy_rq_to_senders)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_ep_doorbell db;
	char src[3][8] = { "first", "early", "next" }, dst[3][8] = {};
	struct swnic_rqe r = t_recv(dst[0], sizeof(dst[0]), 1);
	struct swnic_sqe s = t_send(src[0], sizeof(src[0]), &self->b, 2);
	struct swnic_cqe c;

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_DB_SQ);

	/* Nothing waits: the receive stays in the ring, nothing completes. */
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell_flags(&self->b, SWNIC_DB_SQ, &db));
	EXPECT_EQ(0, db.rq_done);
	EXPECT_EQ(0, db.sq_done);
	EXPECT_EQ(*self->b.rq.head + 1, *self->b.rq.tail);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));

	/* The sender's own SQ doorbell sends; it takes the receive. */
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, t_doorbell_flags(&self->a, SWNIC_DB_SQ, &db));
	EXPECT_EQ(1, db.sq_done);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(1, c.context);
	EXPECT_EQ(0, c.err);
	EXPECT_STREQ("first", dst[0]);
	EXPECT_EQ(*self->b.rq.tail, *self->b.rq.head);

	/* A message waits (NEED_WAKEUP): the SQ doorbell takes the RQ too. */
	s.addr = (uintptr_t)src[1];
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_TRUE(*self->b.rq.flags & SWNIC_RING_F_NEED_WAKEUP);
	r = t_recv(dst[1], sizeof(dst[1]), 3);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell_flags(&self->b, SWNIC_DB_SQ, &db));
	EXPECT_EQ(1, db.rq_done);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(3, c.context);
	EXPECT_STREQ("early", dst[1]);
	EXPECT_FALSE(*self->b.rq.flags & SWNIC_RING_F_NEED_WAKEUP);

	/* The plain doorbell still takes the RQ at once. */
	r = t_recv(dst[2], sizeof(dst[2]), 4);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, &db));
	EXPECT_EQ(1, db.rq_done);
	EXPECT_EQ(*self->b.rq.tail, *self->b.rq.head);
	s.addr = (uintptr_t)src[2];
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(4, c.context);
	EXPECT_STREQ("next", dst[2]);

	/* Flags it does not know. */
	EXPECT_EQ(-EOPNOTSUPP,
		  t_doorbell_flags(&self->a, SWNIC_DB_SQ | 1U << 5, NULL));
}

/* Another process's send takes a receive posted without a doorbell. */
TEST(lazy_rq_cross_process)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC), status;
	static char src[3 * 4096], dst[3 * 4096];
	struct swnic_rqe r = t_recv(dst + 100, sizeof(dst) - 100, 6);
	struct t_cq cq = {};
	struct t_ep ep = {};
	struct swnic_cqe c;
	pid_t pid;

	ASSERT_LE(0, dom);
	ASSERT_EQ(0, t_cq_create(dom, 16, &cq));
	ASSERT_EQ(0, t_ep_create(dom, &cq, &cq, 0, 0, 16, &ep));
	ASSERT_EQ(0, t_ring_push(&ep.rq, &r));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int d = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		struct swnic_sqe s = t_send(src, sizeof(src) - 100, &ep, 5);
		struct t_cq ccq = {};
		struct t_ep cep = {};

		memset(src, 0x3c, sizeof(src));
		if (d < 0 || t_cq_create(d, 16, &ccq) ||
		    t_ep_create(d, &ccq, &ccq, 0, 0, 16, &cep))
			_exit(2);
		if (t_ring_push(&cep.sq, &s) || t_doorbell(&cep, NULL))
			_exit(3);
		if (t_cq_wait(&ccq, &c, 5000) || c.err)
			_exit(4);
		_exit(0);
	}
	/* No doorbell here: the child's send found the receive in the RQ. */
	ASSERT_EQ(0, t_cq_wait(&cq, &c, 5000));
	EXPECT_EQ(6, c.context);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(sizeof(src) - 100, c.len);
	for (size_t i = 0; i < sizeof(dst); i++)
		ASSERT_EQ(i < 100 ? 0 : 0x3c, (unsigned char)dst[i]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	t_ep_destroy(&ep);
	close(cq.fd);
	close(dom);
}

/* Map a ring as its consumer would. Return: 0 (unmapped again) or errno. */
static int ring_map_err(int fd, const struct swnic_ring_info *info)
{
	void *p = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, info->mmap_offset);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, info->mmap_size);
	return 0;
}

/*
 * The rings are their owner's, as the domain's pages are: a process the
 * files were passed to (here a child, through fork; SCM_RIGHTS alike)
 * cannot map them. Its SQEs would run on the owner's memory, and a peer's
 * message would be copied wherever its receives (RQEs) said, anywhere in
 * the owner's address space; the CQ shows the owner's completions.
 */
TEST(rings_map_to_their_owner_only)
{
	struct swnic_cq_create cc = { .size = sizeof(cc), .entries = 16 };
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_RDM,
		.sq_entries = 16, .rq_entries = 16,
	};
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC), status;
	pid_t pid;

	ASSERT_LE(0, dom);
	ASSERT_EQ(0, ioctl(dom, SWNIC_IOCTL_CQ_CREATE, &cc));
	c.tx_cq = c.rx_cq = cc.cq_id;
	ASSERT_EQ(0, ioctl(dom, SWNIC_IOCTL_EP_CREATE, &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (ring_map_err(c.fd, &c.sq) != EACCES)
			_exit(1);
		if (ring_map_err(c.fd, &c.rq) != EACCES)
			_exit(2);
		if (ring_map_err(cc.fd, &cc.ring) != EACCES)
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("ring %d was mapped",
						 WEXITSTATUS(status));
	/* The owner maps each. */
	EXPECT_EQ(0, ring_map_err(c.fd, &c.sq));
	EXPECT_EQ(0, ring_map_err(c.fd, &c.rq));
	EXPECT_EQ(0, ring_map_err(cc.fd, &cc.ring));
	close(c.fd);
	close(cc.fd);
	close(dom);
}

/*
 * Nor does a child forked after the owner mapped them inherit the
 * mappings: its SQEs would run on its parent's memory and its RQEs place
 * peers' messages there. The owner's mappings stay.
 */
TEST(rings_not_inherited_by_fork)
{
	struct swnic_cq_create cc = { .size = sizeof(cc), .entries = 16 };
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_RDM,
		.sq_entries = 16, .rq_entries = 16,
	};
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC), status, i;
	struct t_ring r[3];
	unsigned char vec[64];
	pid_t pid;

	ASSERT_LE(0, dom);
	ASSERT_EQ(0, ioctl(dom, SWNIC_IOCTL_CQ_CREATE, &cc));
	c.tx_cq = c.rx_cq = cc.cq_id;
	ASSERT_EQ(0, ioctl(dom, SWNIC_IOCTL_EP_CREATE, &c));
	ASSERT_EQ(0, t_ring_map(&r[0], c.fd, &c.sq));
	ASSERT_EQ(0, t_ring_map(&r[1], c.fd, &c.rq));
	ASSERT_EQ(0, t_ring_map(&r[2], cc.fd, &cc.ring));
	for (i = 0; i < 3; i++)
		ASSERT_GE(sizeof(vec) * getpagesize(), r[i].size);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* mincore(): ENOMEM where nothing is mapped */
		for (i = 0; i < 3; i++)
			if (!mincore(r[i].map, r[i].size, vec) ||
			    errno != ENOMEM)
				_exit(1 + i);
		/* and a touch is a fault */
		signal(SIGSEGV, SIG_DFL);
		*(volatile uint32_t *)r[0].tail = 1;
		_exit(4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		TH_LOG("child: exit %d (ring %d was inherited)",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		       WIFEXITED(status) ? WEXITSTATUS(status) - 1 : -1);
	/* The parent's rings are still mapped, and still its own. */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, mincore(r[i].map, r[i].size, vec));
	EXPECT_EQ(0, *(volatile uint32_t *)r[0].tail);
	for (i = 0; i < 3; i++)
		munmap(r[i].map, r[i].size);
	close(c.fd);
	close(cc.fd);
	close(dom);
}

/* With SWNIC_CQ_F_INLINE_DATA small messages ride in the receive's CQE. */
TEST_F(dp, inline_data_cq)
{
	struct swnic_cq_create cc = {
		.size = sizeof(cc), .flags = SWNIC_CQ_F_INLINE_DATA,
	};
	char small[8] = "tiny", big[100], dst[128], trunc[4];
	struct t_cq icq = { .fd = -1 };
	struct t_ep ep = {};
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe s = t_send(small, sizeof(small), &ep, 2);
	struct swnic_cqe c;
	const uint8_t *payload;
	uint32_t head;

	ASSERT_EQ(0, ioctl(self->db, SWNIC_IOCTL_CQ_CREATE, &cc));
	icq.fd = cc.fd;
	icq.id = cc.cq_id;
	ASSERT_EQ(128, cc.ring.entry_size);
	ASSERT_EQ(0, t_ring_map(&icq.ring, cc.fd, &cc.ring));
	ASSERT_EQ(0, t_ep_create(self->db, &icq, &icq, 0, 0, 16, &ep));
	s.dest_addr = ep.addr;
	s.dest_port = ep.port;
	memset(dst, 0, sizeof(dst));

	/* Small: the payload follows the CQE; the buffer is left alone. */
	ASSERT_EQ(0, t_ring_push(&ep.rq, &r));
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	head = *icq.ring.head;
	payload = icq.ring.array + (head & (icq.ring.entries - 1)) * 128 +
		  sizeof(c);
	ASSERT_EQ(1, t_cq_pop(&icq, &c));
	EXPECT_EQ(SWNIC_CQE_RECV | SWNIC_CQE_INLINE, c.flags);
	EXPECT_EQ(sizeof(small), c.len);
	EXPECT_EQ((uintptr_t)dst, c.buf);
	EXPECT_EQ(0, memcmp(payload, small, sizeof(small)));
	EXPECT_EQ(0, payload[sizeof(small)]);
	EXPECT_EQ(0, dst[0]);

	/* Beyond SWNIC_CQE_INLINE_MAX the kernel places it, as always. */
	memset(big, 'b', sizeof(big));
	s.addr = (uintptr_t)big;
	s.len = sizeof(big);
	ASSERT_EQ(0, t_ring_push(&ep.rq, &r));
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	ASSERT_EQ(1, t_cq_pop(&icq, &c));
	EXPECT_EQ(SWNIC_CQE_RECV, c.flags);
	EXPECT_EQ(0, memcmp(dst, big, sizeof(big)));

	/* Truncated: what fits rides inline, with the error. */
	r = t_recv(trunc, sizeof(trunc), 3);
	s.addr = (uintptr_t)small;
	s.len = sizeof(small);
	ASSERT_EQ(0, t_ring_push(&ep.rq, &r));
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	head = *icq.ring.head;
	payload = icq.ring.array + (head & (icq.ring.entries - 1)) * 128 +
		  sizeof(c);
	ASSERT_EQ(1, t_cq_pop(&icq, &c));
	EXPECT_EQ(SWNIC_CQE_RECV | SWNIC_CQE_INLINE | SWNIC_CQE_ERROR, c.flags);
	EXPECT_EQ(EMSGSIZE, c.err);
	EXPECT_EQ(sizeof(trunc), c.len);
	EXPECT_EQ(0, memcmp(payload, "tiny", sizeof(trunc)));

	/* The send's own completion is an ordinary one. */
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
		EXPECT_EQ(0, c.err);
	}
	t_ep_destroy(&ep);
	munmap(icq.ring.map, icq.ring.size);
	close(icq.fd);
}

TEST_F(dp, truncation_reports_overflow)
{
	char src[100], dst[40];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe s = t_send(src, sizeof(src), &self->b, 2);
	struct swnic_cqe c;

	memset(src, 'x', sizeof(src));
	exchange(_metadata, self, &s, &r);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(EMSGSIZE, c.err);
	EXPECT_EQ(sizeof(dst), c.len);
	EXPECT_EQ(sizeof(src) - sizeof(dst), c.olen);
}

TEST_F(dp, tagged_matching_with_ignore_bits)
{
	uint64_t got[2] = {};
	char p1[8] = "one", p2[8] = "two";
	struct swnic_rqe r = t_recv(got, 8, 1);
	struct swnic_rqe r2 = t_recv(&got[1], 8, 2);
	struct swnic_sqe s = t_send(p1, 8, &self->b, 3);
	struct swnic_cqe c;

	/* Receive 1 wants tag 0xab00 with the low byte ignored. */
	r.flags = SWNIC_RQE_TAGGED;
	r.tag = 0xab00;
	r.ignore = 0xff;
	r2.flags = SWNIC_RQE_TAGGED;
	r2.tag = 0x7;
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r2));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));

	/* An untagged send never matches a tagged receive. */
	exchange(_metadata, self, &s, NULL);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));

	s.opcode = SWNIC_OP_TSEND;
	s.tag = 0x7;
	s.addr = (uintptr_t)p2;
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(2, c.context);
	EXPECT_EQ(SWNIC_CQE_RECV | SWNIC_CQE_TAGGED, c.flags);
	EXPECT_EQ(0x7, c.tag);
	EXPECT_STREQ("two", (char *)&got[1]);

	s.tag = 0xab42;
	s.addr = (uintptr_t)p1;
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(1, c.context);
	EXPECT_EQ(0xab42, c.tag);
	EXPECT_STREQ("one", (char *)&got[0]);
}

TEST_F(dp, directed_receive_filters_source)
{
	char dst[8] = "", src[8] = "hello";
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe s = t_send(src, sizeof(src), &self->b, 2);
	struct swnic_cqe c;

	r.flags = SWNIC_RQE_DIRECTED;
	r.src_port = self->a.port + 1;	/* somebody else */
	exchange(_metadata, self, &s, &r);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));	/* went to unexpected */

	r.src_port = self->a.port;
	r.src_addr = self->a.addr;
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_STREQ("hello", dst);
}

TEST_F(dp, multi_recv_buffer)
{
	char buf[64], m[3][20];
	struct swnic_rqe r = t_recv_multi(buf, sizeof(buf), 9, 20);
	struct swnic_cqe c;

	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	for (int i = 0; i < 3; i++) {
		struct swnic_sqe s = t_send(m[i], sizeof(m[i]), &self->b, i);

		memset(m[i], 'a' + i, sizeof(m[i]));
		exchange(_metadata, self, &s, NULL);
		ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
		EXPECT_EQ(9, c.context);
		EXPECT_EQ((uintptr_t)buf + 20 * i, c.buf);
		EXPECT_EQ(20, c.len);
		/* 64 - 60 = 4 bytes left < min_free: released with the third. */
		EXPECT_EQ(i == 2, !!(c.flags & SWNIC_CQE_MULTI_RECV));
	}
	EXPECT_EQ('c', buf[59]);
}

/* A sends @len bytes of @c to @to; its completion is popped from ca. */
static void send_fill(struct __test_metadata *_metadata,
		      FIXTURE_DATA(dp) *self, const struct t_ep *to,
		      char *buf, size_t len, char c, uint64_t ctx)
{
	struct swnic_sqe s = t_send(buf, len, to, ctx);
	struct swnic_cqe cqe;

	memset(buf, c, len);
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &cqe));
	EXPECT_EQ(ctx, cqe.context);
	EXPECT_EQ(0, cqe.err);
}

/* The next completion of @cq is the multi-receive's, of @len at @buf. */
static void expect_piece(struct __test_metadata *_metadata, struct t_cq *cq,
			 const char *buf, size_t len, char c)
{
	struct swnic_cqe cqe = {};

	ASSERT_EQ(1, t_cq_pop(cq, &cqe)) TH_LOG("no piece of %zu bytes", len);
	EXPECT_EQ(9, cqe.context);
	EXPECT_EQ(0, cqe.err);
	EXPECT_EQ(len, cqe.len);
	EXPECT_EQ((uintptr_t)buf, cqe.buf);
	EXPECT_EQ(c, buf[0]);
	EXPECT_EQ(c, buf[len - 1]);
}

/*
 * A multi-receive that takes buffered messages and stops before the last
 * - its CQ full - goes on with them, in order, before anything that
 * arrives later: not posted with the rest left behind.
 */
TEST_F(dp, multi_recv_stopped_by_a_full_cq_keeps_the_order)
{
	static char src[512], small[8], mbuf[4096];
	struct swnic_rqe r = t_recv(small, sizeof(small), 1);
	struct swnic_cqe c;
	struct t_cq cq;
	struct t_ep rx;

	/* An endpoint whose receive CQ has two slots. */
	ASSERT_EQ(0, t_cq_create(self->db, 2, &cq));
	ASSERT_EQ(0, t_ep_create(self->db, &self->cb, &cq,
				 SWNIC_EP_F_DB_SYSCALL, 0, 8, &rx));
	/* One slot taken: a message into a plain receive, not read. */
	ASSERT_EQ(0, t_ring_push(&rx.rq, &r));
	ASSERT_EQ(0, t_doorbell(&rx, NULL));
	send_fill(_metadata, self, &rx, src, 8, 'z', 1);
	/* Buffered: 100 bytes of 'a', 200 of 'b'. */
	send_fill(_metadata, self, &rx, src, 100, 'a', 2);
	send_fill(_metadata, self, &rx, src, 200, 'b', 3);

	/* The multi-receive takes 'a' into the last slot; 'b' must wait. */
	r = t_recv_multi(mbuf, sizeof(mbuf), 9, 16);
	ASSERT_EQ(0, t_ring_push(&rx.rq, &r));
	ASSERT_EQ(0, t_doorbell(&rx, NULL));
	ASSERT_EQ(1, t_cq_pop(&cq, &c));
	EXPECT_EQ(1, c.context);
	expect_piece(_metadata, &cq, mbuf, 100, 'a');
	EXPECT_EQ(0, t_cq_pop(&cq, &c));

	/*
	 * Room again; 300 bytes of 'c' arrive, with no doorbell of the
	 * receiver's. 'b' is placed first, then 'c' after it.
	 */
	send_fill(_metadata, self, &rx, src, 300, 'c', 4);
	expect_piece(_metadata, &cq, mbuf + 100, 200, 'b');
	expect_piece(_metadata, &cq, mbuf + 300, 300, 'c');
	EXPECT_EQ(0, t_cq_pop(&cq, &c));

	t_ep_destroy(&rx);
	t_cq_destroy(&cq);
}

/*
 * The same stop at a page of the buffer not yet faulted in: the receiver's
 * doorbell faults it in and places the rest, not only the first.
 */
TEST_F(dp, multi_recv_stopped_by_a_fault_takes_the_rest)
{
	static char src[8192];
	struct swnic_rqe r;
	struct swnic_cqe c;
	char *mbuf;

	mbuf = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mbuf);
	/* Buffered: 100 bytes of 'a', then 8000 of 'b' into the next page. */
	send_fill(_metadata, self, &self->b, src, 100, 'a', 2);
	send_fill(_metadata, self, &self->b, src, 8000, 'b', 3);

	r = t_recv_multi(mbuf, 4 * 4096, 9, 16);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	expect_piece(_metadata, &self->cb, mbuf, 100, 'a');
	expect_piece(_metadata, &self->cb, mbuf + 100, 8000, 'b');
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	munmap(mbuf, 4 * 4096);
}

/*
 * A multi-receive that a fault frees (a message that reaches a page it
 * may not write) says so with SWNIC_CQE_MULTI_RECV on its error, as a
 * cancelled one does: the application learns the buffer is its own again.
 * Before, the error came without the flag.
 */
TEST_F(dp, multi_recv_freed_by_a_fault_says_so)
{
	static char src[6000];
	struct swnic_rqe r;
	struct swnic_cqe c;
	char *mbuf;

	mbuf = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mbuf);
	r = t_recv_multi(mbuf, 2 * 4096, 9, 16);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(0, mprotect(mbuf + 4096, 4096, PROT_READ));

	send_fill(_metadata, self, &self->b, src, 100, 'a', 2);
	expect_piece(_metadata, &self->cb, mbuf, 100, 'a');
	/* 5000 bytes at offset 100: into the read-only page. */
	memset(src, 'b', 5000);
	{
		struct swnic_sqe s = t_send(src, 5000, &self->b, 3);

		exchange(_metadata, self, &s, NULL);
	}
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(9, c.context);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(EFAULT, c.err);
	EXPECT_TRUE(c.flags & SWNIC_CQE_MULTI_RECV)
		TH_LOG("the freed multi-receive's error lacks the flag");
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(3, c.context);
	/* Freed: nothing more completes from it. */
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	munmap(mbuf, 2 * 4096);
}

TEST_F(dp, bad_work_requests_complete_with_errors)
{
	struct swnic_sqe s = t_send(NULL, 8, &self->b, 7);
	struct swnic_cqe c;

	s.opcode = 99;
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(7, c.context);
	EXPECT_EQ(EOPNOTSUPP, c.err);

	s = t_send((void *)0xffff880000000000ULL, 8, &self->b, 8);
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(EINVAL, c.err);		/* kernel address */

	s = t_send((void *)4096, 8, &self->b, 9);	/* unmapped */
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(EFAULT, c.err);

	s = t_send(&c, 8, &self->b, 10);
	s.__pad[1] = 1;
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(EINVAL, c.err);

	s = t_send(&c, 8, &self->b, 10);
	s.key_index = 1;			/* no key of its own */
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(ENOKEY, c.err);

	s = t_send(&c, 8, &self->b, 11);
	s.dest_port = 1;			/* nobody there */
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(ECONNREFUSED, c.err);

	s = t_send(&c, 8, &self->b, 12);
	s.dest_addr = htonl(0x0a000001);	/* 10.0.0.1: not this host */
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(EHOSTUNREACH, c.err);
}

TEST_F(dp, cq_full_stops_consumption_without_overrun)
{
	char dst[8];
	struct swnic_ep_doorbell db;
	struct swnic_cqe c;
	int sent = 0;

	/* 64-entry CQ, sends completing into it, nobody reaping. */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 32; i++) {
			struct swnic_sqe s = t_send(dst, 1, &self->b, sent + i);

			s.dest_port = 1;	/* each completes with an error */
			ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
		}
		ASSERT_EQ(0, t_doorbell(&self->a, &db));
		sent += db.sq_done;
		/* The third round finds the CQ full: nothing is taken. */
		EXPECT_EQ(round < 2 ? 32 : 0, db.sq_done);
	}
	EXPECT_EQ(64, sent);
	EXPECT_EQ(0, *self->ca.ring.flags & SWNIC_RING_F_OVERFLOW);
	for (int i = 0; i < 64; i++) {
		ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
		EXPECT_EQ(i, c.context);
	}
	/* Room again: the rest is consumed. */
	ASSERT_EQ(0, t_doorbell(&self->a, &db));
	EXPECT_EQ(32, db.sq_done);
}

TEST_F(dp, hostile_tail_breaks_ring)
{
	struct swnic_cqe c;

	atomic_store(self->a.sq.tail, 1000);	/* beyond any entry */
	EXPECT_EQ(-EPIPE, t_doorbell(&self->a, NULL));
	EXPECT_TRUE(*self->a.sq.flags & SWNIC_RING_F_BROKEN);
	EXPECT_EQ(0, t_cq_pop(&self->ca, &c));
	/* The other endpoint is unaffected. */
	EXPECT_EQ(0, t_doorbell(&self->b, NULL));
}

TEST_F(dp, hostile_cq_head_never_overruns)
{
	struct swnic_ep_doorbell db;
	char buf[8];

	/* A head far ahead of the tail leaves no room: nothing is written. */
	atomic_store(self->ca.ring.head, 5000);
	for (int i = 0; i < 4; i++) {
		struct swnic_sqe s = t_send(buf, 1, &self->b, i);

		ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	}
	ASSERT_EQ(0, t_doorbell(&self->a, &db));
	EXPECT_EQ(0, db.sq_done);
	EXPECT_EQ(0, atomic_load(self->ca.ring.tail));
}

TEST_F(dp, port_in_use_and_bad_create)
{
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_RDM,
		.tx_cq = self->ca.id, .rx_cq = self->ca.id,
		.port = self->b.port,
	};
	struct swnic_query_device q = { .size = sizeof(q) };
	struct t_ep e;

	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EADDRINUSE, errno);

	c.port = 0;
	c.tx_cq = 12345;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(ENOENT, errno);

	c.tx_cq = c.rx_cq = self->ca.id;
	c.flags = SWNIC_EP_F_DB_SYSCALL | SWNIC_EP_F_DB_ENGINE;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.flags = 1U << 31;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EOPNOTSUPP, errno);
	c.flags = 0;
	c.type = 77;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EOPNOTSUPP, errno);
	c.type = SWNIC_EP_MSG;		/* connected endpoints: not yet */
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EOPNOTSUPP, errno);
	c.type = SWNIC_EP_RDM;
	c.__reserved = 1;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.__reserved = 0;
	c.__pad = 1;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.__pad = 0;
	c.dscp = 64;			/* DSCP is 6 bits */
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.dscp = 0;
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_DSCP);
	c.sq_entries = q.max_sq_entries + 1;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);

	/* While its rings are mapped the endpoint lives on... */
	ASSERT_EQ(0, close(self->b.fd));
	ASSERT_EQ(-EADDRINUSE, t_ep_create(self->db, &self->cb, &self->cb, 0,
					   self->b.port, 8, &e));
	/* ...and unmapping them frees its port. */
	munmap(self->b.sq.map, self->b.sq.size);
	munmap(self->b.rq.map, self->b.rq.size);
	ASSERT_EQ(0, t_ep_create(self->db, &self->cb, &self->cb, 0,
				 self->b.port, 8, &e));
	self->b = e;
}

TEST_F(dp, cancel_a_waiting_send)
{
	struct swnic_ep_cancel cancel = { .size = sizeof(cancel),
					  .flags = SWNIC_CANCEL_SEND };
	struct swnic_ep_doorbell db;
	struct swnic_cqe c;
	struct t_cq small;
	struct t_ep a2;
	char dst[6][4];
	int i, got = 0;

	/* A 4-entry transmit CQ nobody reads: sends 5 and 6 wait in the SQ. */
	ASSERT_EQ(0, t_cq_create(self->da, 4, &small));
	ASSERT_EQ(0, t_ep_create(self->da, &small, &self->ca,
				 SWNIC_EP_F_DB_SYSCALL | SWNIC_EP_F_RM_ENABLED,
				 0, 8, &a2));
	for (i = 0; i < 6; i++) {
		struct swnic_rqe r = t_recv(dst[i], sizeof(dst[i]), 100 + i);
		struct swnic_sqe s = t_send("abc", 4, &self->b, i);

		ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
		ASSERT_EQ(0, t_ring_push(&a2.sq, &s));
	}
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(0, t_doorbell(&a2, &db));
	EXPECT_EQ(4, db.sq_done);

	/* Consumed already: not found. Waiting: cancelled, once. */
	cancel.context = 0;
	ASSERT_EQ(-1, ioctl(a2.fd, SWNIC_IOCTL_EP_CANCEL, &cancel));
	EXPECT_EQ(ENOENT, errno);
	cancel.context = 5;
	ASSERT_EQ(0, ioctl(a2.fd, SWNIC_IOCTL_EP_CANCEL, &cancel));
	ASSERT_EQ(-1, ioctl(a2.fd, SWNIC_IOCTL_EP_CANCEL, &cancel));
	EXPECT_EQ(ENOENT, errno);
	cancel.flags = 1U << 7;
	ASSERT_EQ(-1, ioctl(a2.fd, SWNIC_IOCTL_EP_CANCEL, &cancel));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* Room again: the fifth goes, the sixth completes cancelled. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, t_cq_pop(&small, &c));
		EXPECT_EQ(i, c.context);
		EXPECT_EQ(0, c.flags & SWNIC_CQE_ERROR);
	}
	ASSERT_EQ(0, t_doorbell(&a2, &db));
	EXPECT_EQ(2, db.sq_done);
	ASSERT_EQ(1, t_cq_pop(&small, &c));
	EXPECT_EQ(4, c.context);
	EXPECT_EQ(0, c.flags & SWNIC_CQE_ERROR);
	ASSERT_EQ(1, t_cq_pop(&small, &c));
	EXPECT_EQ(5, c.context);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(ECANCELED, c.err);
	/* The target saw five messages, never the cancelled one. */
	while (t_cq_pop(&self->cb, &c) == 1)
		got++;
	EXPECT_EQ(5, got);
	t_ep_destroy(&a2);
	close(small.fd);
}

/* A counter of the domain @d, its words mapped. Return: its id, or 0. */
static __u32 cntr_mapped(int d, const volatile struct swnic_cntr_words **w)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	void *p;

	if (ioctl(d, SWNIC_IOCTL_CNTR_CREATE, &cc))
		return 0;
	p = mmap(NULL, cc.mmap_size, PROT_READ, MAP_SHARED, cc.fd, 0);
	close(cc.fd);		/* the mapping keeps it */
	if (p == MAP_FAILED)
		return 0;
	*w = p;
	return cc.cntr_id;
}

/* Counter work on @d: when @cntr reaches @threshold, set @target to @v. */
static int trig_set(int d, __u32 cntr, __u64 threshold, __u32 trig_flags,
		    __u32 target, __u64 v)
{
	struct swnic_trig_cntr t = {
		.size = sizeof(t), .flags = SWNIC_CNTR_UPD_SET,
		.cntr_id = cntr, .target = target, .threshold = threshold,
		.value = v, .trig_flags = trig_flags,
	};

	return ioctl(d, SWNIC_IOCTL_TRIG_CNTR, &t) ? -errno : 0;
}

static int cntr_update(int d, __u32 cntr, __u32 flags, __u64 v)
{
	struct swnic_cntr_update u = {
		.size = sizeof(u), .flags = flags, .cntr_id = cntr, .value = v,
	};

	return ioctl(d, SWNIC_IOCTL_CNTR_UPDATE, &u) ? -errno : 0;
}

/* Wait up to 5 s for @w's value to be @v. */
static bool cntr_becomes(const volatile struct swnic_cntr_words *w, __u64 v)
{
	for (int i = 0; i < 500 && w->value != v; i++)
		usleep(10000);
	return w->value == v;
}

/*
 * Work waiting on a counter's value and work waiting on its value plus
 * errors (SWNIC_TRIG_F_SUM) is kept apart, so that a large error count
 * does not make every change of the counter walk the work that waits on
 * its value; what is met still runs in one order, by threshold then
 * submission, across both. Each piece of work here sets counter @t to
 * its own number: the last to run leaves its number there.
 */
TEST_F(dp, trig_value_and_sum_work_in_one_order)
{
	const volatile struct swnic_cntr_words *wc = NULL, *wt = NULL;
	__u32 c = cntr_mapped(self->da, &wc), t = cntr_mapped(self->da, &wt);
	int i;

	ASSERT_NE(0, c);
	ASSERT_NE(0, t);
	/* At 5: a sum (1st), a value (2nd); at 4, a sum (3rd) runs first. */
	ASSERT_EQ(0, trig_set(self->da, c, 5, SWNIC_TRIG_F_SUM, t, 1));
	ASSERT_EQ(0, trig_set(self->da, c, 5, 0, t, 2));
	ASSERT_EQ(0, trig_set(self->da, c, 4, SWNIC_TRIG_F_SUM, t, 3));
	/* 1000 on the value at 100, and one at 7. */
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(0, trig_set(self->da, c, 100, 0, t, 100));
	ASSERT_EQ(0, trig_set(self->da, c, 7, 0, t, 7));

	/* Errors meet no work on the value, the sums up to 4 (3rd). */
	ASSERT_EQ(0, cntr_update(self->da, c, SWNIC_CNTR_UPD_ERR, 4));
	EXPECT_TRUE(cntr_becomes(wt, 3)) TH_LOG("%llu", wt->value);
	/* Value 1 (sum 5): the sum at 5 runs, not the value at 5. */
	ASSERT_EQ(0, cntr_update(self->da, c, 0, 1));
	EXPECT_TRUE(cntr_becomes(wt, 1)) TH_LOG("%llu", wt->value);
	/* Errors far past every threshold: still nothing on the value. */
	ASSERT_EQ(0, cntr_update(self->da, c, SWNIC_CNTR_UPD_ERR, 1000));
	usleep(100000);
	EXPECT_EQ(1, wt->value);
	/* Value 5, then 7: the value's work at each, in turn. */
	ASSERT_EQ(0, cntr_update(self->da, c, 0, 4));
	EXPECT_TRUE(cntr_becomes(wt, 2)) TH_LOG("%llu", wt->value);
	ASSERT_EQ(0, cntr_update(self->da, c, 0, 2));
	EXPECT_TRUE(cntr_becomes(wt, 7)) TH_LOG("%llu", wt->value);
	/* 1000 left, all on the value at 100. */
	ASSERT_EQ(0, cntr_update(self->da, c, SWNIC_CNTR_UPD_SET, 100));
	EXPECT_TRUE(cntr_becomes(wt, 100)) TH_LOG("%llu", wt->value);
	munmap((void *)wc, 4096);
	munmap((void *)wt, 4096);
}

/*
 * Work met together runs by threshold, then submission, whichever word it
 * waits on: here a sum before a value at one threshold, both met by one
 * change of the value.
 */
TEST_F(dp, trig_met_together_run_in_submission_order)
{
	const volatile struct swnic_cntr_words *wc = NULL, *wt = NULL;
	__u32 c = cntr_mapped(self->da, &wc), t = cntr_mapped(self->da, &wt);

	ASSERT_NE(0, c);
	ASSERT_NE(0, t);
	ASSERT_EQ(0, trig_set(self->da, c, 3, SWNIC_TRIG_F_SUM, t, 1));
	ASSERT_EQ(0, trig_set(self->da, c, 3, 0, t, 2));
	ASSERT_EQ(0, cntr_update(self->da, c, 0, 3));
	EXPECT_TRUE(cntr_becomes(wt, 2)) TH_LOG("%llu", wt->value);
	/* The other way round: a value before a sum. */
	ASSERT_EQ(0, trig_set(self->da, c, 6, 0, t, 3));
	ASSERT_EQ(0, trig_set(self->da, c, 6, SWNIC_TRIG_F_SUM, t, 4));
	ASSERT_EQ(0, cntr_update(self->da, c, 0, 3));
	EXPECT_TRUE(cntr_becomes(wt, 4)) TH_LOG("%llu", wt->value);
	munmap((void *)wc, 4096);
	munmap((void *)wt, 4096);
}

/*
 * Triggered work posted after the domain's file is closed, through an
 * endpoint's and a counter's fds kept open, is refused (ECANCELED, as the
 * close cancels what waits), not kept: a closed domain counts against no
 * limit of its user, so what it kept would escape them all.
 */
TEST(trig_after_domain_close_is_refused)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	struct swnic_trig_recv tr = { .size = sizeof(tr) };
	struct swnic_ep_doorbell db = {};
	struct gauges g0, g1;
	struct swnic_cqe c;
	struct t_cq cq = {};
	struct t_ep e = {};
	char buf[8] = {};
	int d, i;

	d = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, d);
	ASSERT_EQ(0, t_cq_create(d, 16, &cq));
	ASSERT_EQ(0, t_ep_create(d, &cq, &cq, SWNIC_EP_F_DB_SYSCALL, 0, 8,
				 &e));
	ASSERT_EQ(0, ioctl(d, SWNIC_IOCTL_CNTR_CREATE, &cc));
	ASSERT_EQ(0, gauges_read(&g0));
	ASSERT_EQ(0, close(d));

	/* Thresholds never reached: kept, they would wait for good. */
	struct swnic_sqe_trigger t = {
		.threshold = 1ULL << 62, .cntr_id = cc.cntr_id,
	};

	for (i = 0; i < 4; i++) {
		struct swnic_sqe s = t_send(buf, sizeof(buf), &e, i);

		s.flags |= SWNIC_SQE_TRIGGER;
		memcpy(s.inline_data, &t, sizeof(t));
		ASSERT_EQ(0, t_ring_push(&e.sq, &s));
	}
	ASSERT_EQ(0, t_doorbell(&e, &db));
	EXPECT_EQ(4, db.sq_done);
	/* Each completes at once, refused; none is left with the kernel. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, t_cq_pop(&cq, &c)) TH_LOG("SQE %d kept", i);
		EXPECT_EQ(i, c.context);
		EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
		EXPECT_EQ(ECANCELED, c.err);
	}
	tr.trig = t;
	tr.rqe = t_recv(buf, sizeof(buf), 99);
	EXPECT_EQ(-1, ioctl(e.fd, SWNIC_IOCTL_TRIG_RECV, &tr));
	EXPECT_EQ(ECANCELED, errno);
	EXPECT_EQ(0, t_cq_pop(&cq, &c));
	ASSERT_EQ(0, gauges_read(&g1));
	EXPECT_EQ(g0.triggered_ops, g1.triggered_ops);

	t_ep_destroy(&e);
	t_cq_destroy(&cq);
	close(cc.fd);
}

/*
 * A triggered receive that becomes due is posted behind the receives its
 * owner posted before it: one still in the lazy RQ (no doorbell; the next
 * sender would take it) takes the next message, not the triggered one.
 */
TEST_F(dp, trig_recv_goes_behind_the_rq)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	struct swnic_trig_recv tr = { .size = sizeof(tr) };
	char src[2][8] = { "first", "second" }, dst[2][8] = {};
	struct swnic_rqe r = t_recv(dst[0], sizeof(dst[0]), 1);
	struct swnic_sqe s = t_send(src[0], sizeof(src[0]), &self->b, 3);
	struct gauges g0;
	struct swnic_cqe c;

	ASSERT_TRUE(*self->b.rq.flags & SWNIC_RING_F_LAZY);
	ASSERT_EQ(0, ioctl(self->db, SWNIC_IOCTL_CNTR_CREATE, &cc));
	ASSERT_EQ(0, gauges_read(&g0));
	/* R1 in the RQ, not consumed; then T, due at 1. */
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	tr.trig.threshold = 1;
	tr.trig.cntr_id = cc.cntr_id;
	tr.rqe = t_recv(dst[1], sizeof(dst[1]), 2);
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_TRIG_RECV, &tr));
	ASSERT_EQ(0, cntr_update(self->db, cc.cntr_id, 0, 1));
	/* T ran (posted, or failed): the kernel holds it no more. */
	ASSERT_TRUE(gauges_triggered_back(g0.triggered_ops));
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));

	/* The first message is R1's, the second T's. */
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(1, c.context);
	EXPECT_EQ(0, c.err);
	EXPECT_STREQ("first", dst[0]);
	s.addr = (uintptr_t)src[1];
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(2, c.context);
	EXPECT_EQ(0, c.err);
	EXPECT_STREQ("second", dst[1]);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	close(cc.fd);
}

/* A thread that polls a counter's fd for up to 10 s. */
struct cntr_poller {
	int fd;
	int ret;		/* poll()'s */
	short revents;
	long ms;		/* how long it took */
};

static void *cntr_poll_thread(void *arg)
{
	struct cntr_poller *p = arg;
	struct pollfd pf = { .fd = p->fd, .events = POLLIN };
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	p->ret = poll(&pf, 1, 10000);
	p->ms = sys_ms_since(&t0);
	p->revents = pf.revents;
	return NULL;
}

static int cntr_readable(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, 0);
}

/*
 * A counter's fd (SWNIC_FEAT_CNTR_POLL): read() returns its words and
 * arms poll(), which is readable once they changed since, until the next
 * read(). A poller sleeping on it is woken by an update, and by an
 * operation the kernel counts - a receive, with no one reading the CQ.
 * Another process holding the file may not read (disarm) it.
 */
TEST_F(dp, cntr_fd_polls_until_it_changes)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	struct swnic_ep_create c = {
		.size = sizeof(c), .flags = SWNIC_EP_F_DB_SYSCALL,
		.type = SWNIC_EP_RDM, .tx_cq = self->cb.id, .rx_cq = self->cb.id,
		.sq_entries = 16, .rq_entries = 16,
	};
	struct swnic_cntr_words w = { 1, 1 };
	struct cntr_poller p = { .ret = -2 };
	char msg[16] = "counted", dst[16];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe sq;
	struct swnic_cqe ce;
	struct t_ep e = { .fd = -1 };
	uint8_t small[8];
	pthread_t th;
	int status;
	pid_t pid;

	ASSERT_EQ(0, ioctl(self->db, SWNIC_IOCTL_CNTR_CREATE, &cc));
	p.fd = cc.fd;
	/* Nothing changed since it was made; a short read is refused. */
	EXPECT_EQ(0, cntr_readable(cc.fd));
	EXPECT_EQ(-1, read(cc.fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(sizeof(w), read(cc.fd, &w, sizeof(w)));
	EXPECT_EQ(0, w.value);
	EXPECT_EQ(0, w.err);

	/* An update wakes a poller, which stays readable until a read. */
	ASSERT_EQ(0, pthread_create(&th, NULL, cntr_poll_thread, &p));
	usleep(200000);
	ASSERT_EQ(0, cntr_update(self->db, cc.cntr_id, 0, 2));
	pthread_join(th, NULL);
	EXPECT_EQ(1, p.ret);
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_GT(5000, p.ms);
	EXPECT_EQ(1, cntr_readable(cc.fd));
	ASSERT_EQ(sizeof(w), read(cc.fd, &w, sizeof(w)));
	EXPECT_EQ(2, w.value);
	EXPECT_EQ(0, cntr_readable(cc.fd));
	/* An error counts as a change. */
	ASSERT_EQ(0, cntr_update(self->db, cc.cntr_id, SWNIC_CNTR_UPD_ERR, 1));
	EXPECT_EQ(1, cntr_readable(cc.fd));
	ASSERT_EQ(sizeof(w), read(cc.fd, &w, sizeof(w)));
	EXPECT_EQ(1, w.err);
	/* So are sets, even back to what was read. */
	ASSERT_EQ(0, cntr_update(self->db, cc.cntr_id, SWNIC_CNTR_UPD_SET, 7));
	ASSERT_EQ(0, cntr_update(self->db, cc.cntr_id, SWNIC_CNTR_UPD_SET, 2));
	EXPECT_EQ(1, cntr_readable(cc.fd));
	ASSERT_EQ(sizeof(w), read(cc.fd, &w, sizeof(w)));
	EXPECT_EQ(2, w.value);
	EXPECT_EQ(0, cntr_readable(cc.fd));

	/* A receive the kernel counts wakes it: the CQ is left unread. */
	c.cntr[SWNIC_EP_CNTR_RECV] = cc.cntr_id;
	ASSERT_EQ(0, ioctl(self->db, SWNIC_IOCTL_EP_CREATE, &c));
	e.fd = c.fd;
	ASSERT_EQ(0, t_ring_map(&e.sq, c.fd, &c.sq));
	ASSERT_EQ(0, t_ring_map(&e.rq, c.fd, &c.rq));
	ASSERT_EQ(0, t_ring_push(&e.rq, &r));
	ASSERT_EQ(0, t_doorbell(&e, NULL));
	p.ret = -2;
	ASSERT_EQ(0, pthread_create(&th, NULL, cntr_poll_thread, &p));
	usleep(200000);
	sq = t_send(msg, sizeof(msg), &e, 2);
	sq.dest_addr = c.addr;
	sq.dest_port = c.port;
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &sq));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	pthread_join(th, NULL);
	EXPECT_EQ(1, p.ret);
	EXPECT_GT(5000, p.ms);
	ASSERT_EQ(sizeof(w), read(cc.fd, &w, sizeof(w)));
	EXPECT_EQ(3, w.value);
	EXPECT_EQ(0, memcmp(dst, msg, sizeof(msg)));
	EXPECT_EQ(1, t_cq_pop(&self->ca, &ce));

	/* Another process with the file: refused, and the owner's stays. */
	ASSERT_EQ(0, cntr_update(self->db, cc.cntr_id, 0, 1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(read(cc.fd, &w, sizeof(w)) == -1 && errno == EACCES ?
		      0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(1, cntr_readable(cc.fd));
	t_ep_destroy(&e);
	close(cc.fd);
}

/* A thread that triggers counter work on counter @id, which is not there. */
struct cntr_race {
	int da;
	__u32 id, target;
	volatile int stop;
	unsigned long tries, took;
};

static void *trig_on_id(void *arg)
{
	struct cntr_race *r = arg;
	struct swnic_trig_cntr t = {
		.size = sizeof(t), .cntr_id = r->id, .target = r->target,
		.threshold = 1ULL << 40, .value = 1,
	};

	while (!r->stop) {
		r->tries++;
		if (!ioctl(r->da, SWNIC_IOCTL_TRIG_CNTR, &t))
			r->took++;
	}
	return NULL;
}

/*
 * A counter whose CNTR_CREATE fails (no fd left for it) was never there:
 * work triggered on its id meanwhile is refused. The kernel used to list
 * the counter before it made its fd, so such work could land on it, and
 * then waited for good on a counter that no file closes and no domain
 * walk finds, holding the domain and its mm after the process was gone.
 */
TEST_F(dp, cntr_create_that_fails_publishes_nothing)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	struct cntr_race r = { .da = self->da };
	unsigned long creates = 0, emfile = 0;
	struct timespec t0;
	struct rlimit old;
	pthread_t th;

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_CNTR_CREATE, &cc));
	r.target = cc.cntr_id;
	/* The lowest free id: the one every create below reserves. */
	r.id = cc.cntr_id + 1;
	/* No fd left: each create reserves its id, then fails. */
	ASSERT_EQ(0, sys_no_fd_left(&old));

	ASSERT_EQ(0, pthread_create(&th, NULL, trig_on_id, &r));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct swnic_cntr_create fc = { .size = sizeof(fc) };

		creates++;
		if (ioctl(self->da, SWNIC_IOCTL_CNTR_CREATE, &fc) < 0 &&
		    errno == EMFILE)
			emfile++;
	} while (creates < 200000 && sys_ms_since(&t0) < 2000);
	r.stop = 1;
	pthread_join(th, NULL);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));

	TH_LOG("%lu creates, %lu triggers tried", creates, r.tries);
	EXPECT_EQ(creates, emfile);
	ASSERT_LT(0, r.tries);
	EXPECT_EQ(0, r.took);
	close(cc.fd);
}

TEST_F(dp, counters_count_in_the_kernel)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_RDM,
		.tx_cq = self->ca.id, .rx_cq = self->ca.id,
		.flags = SWNIC_EP_F_DB_SYSCALL,
	};
	const volatile struct swnic_cntr_words *w;
	struct swnic_cqe cqe;
	struct t_ep e = { .fd = -1 };
	char buf[8];
	int i;

	/* The ABI: flags and reserved fields are checked. */
	cc.flags = 1;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_CNTR_CREATE, &cc));
	EXPECT_EQ(EOPNOTSUPP, errno);
	cc.flags = 0;
	cc.__reserved = 1;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_CNTR_CREATE, &cc));
	EXPECT_EQ(EINVAL, errno);
	cc.__reserved = 0;
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_CNTR_CREATE, &cc));
	ASSERT_LT(0, cc.cntr_id);
	/* Only the kernel writes the words. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, cc.mmap_size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, cc.fd, 0));
	w = mmap(NULL, cc.mmap_size, PROT_READ, MAP_SHARED, cc.fd, 0);
	ASSERT_NE(MAP_FAILED, w);
	EXPECT_EQ(-1, mprotect((void *)w, cc.mmap_size, PROT_WRITE));
	/* The mapping keeps it alive without the fd. */
	close(cc.fd);

	/* Endpoints name counters by id; an unknown id is refused. */
	c.cntr[SWNIC_EP_CNTR_SEND] = cc.cntr_id + 100;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	EXPECT_EQ(ENOENT, errno);
	c.cntr[SWNIC_EP_CNTR_SEND] = cc.cntr_id;
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	e.fd = c.fd;
	ASSERT_EQ(0, t_ring_map(&e.sq, c.fd, &c.sq));
	ASSERT_EQ(0, t_ring_map(&e.rq, c.fd, &c.rq));

	/* Two sends that arrive (buffered at b), one to nobody. */
	for (i = 0; i < 3; i++) {
		struct swnic_sqe s = t_send("hi", 3, &self->b, i);

		if (i == 2)
			s.dest_port = 1;	/* no endpoint there */
		ASSERT_EQ(0, t_ring_push(&e.sq, &s));
	}
	ASSERT_EQ(0, t_doorbell(&e, NULL));
	/* Counted where they completed, before anyone read a CQE. */
	EXPECT_EQ(2, w->value);
	EXPECT_EQ(1, w->err);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(1, t_cq_pop(&self->ca, &cqe));
	/* Receives are not counted in a send counter. */
	{
		struct swnic_rqe r = t_recv(buf, sizeof(buf), 9);

		ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
		ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	}
	EXPECT_EQ(2, w->value);
	t_ep_destroy(&e);
	/* The endpoint is gone: the counter still reads (until unmapped). */
	EXPECT_EQ(2, w->value);
	munmap((void *)w, cc.mmap_size);
}

TEST_F(dp, cq_create_abi)
{
	struct {
		struct swnic_cq_create c;
		uint64_t tail;
	} l = { .c = { .size = sizeof(l) } };
	struct swnic_cq_create c = { .size = sizeof(c), .flags = 1U << 31 };

	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_CQ_CREATE, &c));
	EXPECT_EQ(EOPNOTSUPP, errno);
	c.flags = 0;
	c.__reserved = 1;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_CQ_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.__reserved = 0;
	c.size = offsetof(struct swnic_cq_create, ring);
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_CQ_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	l.tail = 1;
	ASSERT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_CQ_CREATE, &l));
	EXPECT_EQ(E2BIG, errno);
	l.tail = 0;
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_CQ_CREATE, &l));
	EXPECT_LE(0, l.c.fd);
	EXPECT_EQ(64, l.c.ring.entries);	/* 0 asks for the default */
	EXPECT_EQ(sizeof(struct swnic_cqe), l.c.ring.entry_size);
	/* Only the whole ring maps, at offset 0. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, l.c.fd,
				   l.c.ring.mmap_size));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, l.c.ring.mmap_size * 2, PROT_READ,
				   MAP_SHARED, l.c.fd, 0));
	close(l.c.fd);
}

TEST_F(dp, poll_wakes_on_completion)
{
	struct pollfd p = { .fd = self->cb.fd, .events = POLLIN };
	char src[4] = "abc", dst[4];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe s = t_send(src, sizeof(src), &self->b, 2);
	struct swnic_cqe c;

	EXPECT_EQ(0, poll(&p, 1, 0));
	exchange(_metadata, self, &s, &r);
	EXPECT_EQ(1, poll(&p, 1, 1000));
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(0, poll(&p, 1, 0));
}

TEST_F(dp, cancel_receive)
{
	char dst[8];
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 0x77);
	struct swnic_ep_cancel c = { .size = sizeof(c), .context = 0x77 };
	struct {
		struct swnic_ep_cancel c;
		uint64_t tail;
	} l = { .c = c, .tail = 1 };
	struct swnic_cqe cqe;

	/* Still in the ring: cancel posts it first, then unposts it. */
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &cqe));
	EXPECT_EQ(0x77, cqe.context);
	EXPECT_EQ(SWNIC_CQE_RECV | SWNIC_CQE_ERROR, cqe.flags);
	EXPECT_EQ(ECANCELED, cqe.err);
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(ENOENT, errno);

	/* The contract: flags, size, trailing bytes, the domain fd. */
	c.flags = 1U << 31;
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(EOPNOTSUPP, errno);
	c.flags = 0;
	c.size = 8;
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(EINVAL, errno);
	l.c.size = sizeof(l);
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &l));
	EXPECT_EQ(E2BIG, errno);
	c.size = sizeof(c);
	ASSERT_EQ(-1, ioctl(self->db, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(ENOTTY, errno);
}

/*
 * SWNIC_CANCEL_TRIG cancels only triggered work that has not run: a
 * triggered receive still waiting for its threshold, a trigger SQE not
 * consumed. A receive a triggered one posted, a plain receive or send
 * with the same context, stays (ENOENT).
 */
TEST_F(dp, cancel_trig_takes_only_waiting_work)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	struct swnic_trig_recv tr = { .size = sizeof(tr) };
	struct swnic_ep_cancel c = { .size = sizeof(c),
				     .flags = SWNIC_CANCEL_TRIG };
	char src[8] = "ran", dst[3][8] = {};
	struct swnic_sqe s = t_send(src, sizeof(src), &self->b, 3);
	struct swnic_sqe_trigger t = { .threshold = 1ULL << 40 };
	struct swnic_cntr_create ca = { .size = sizeof(ca) };
	struct swnic_query_device q = { .size = sizeof(q) };
	struct gauges g0;
	struct swnic_cqe cqe;

	ASSERT_EQ(0, ioctl(self->db, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_CANCEL_TRIG);
	ASSERT_EQ(0, ioctl(self->db, SWNIC_IOCTL_CNTR_CREATE, &cc));
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_CNTR_CREATE, &ca));
	tr.trig.cntr_id = cc.cntr_id;

	/* Waiting for its threshold: cancelled, ECANCELED, then gone. */
	tr.trig.threshold = 5;
	tr.rqe = t_recv(dst[0], sizeof(dst[0]), 7);
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_TRIG_RECV, &tr));
	c.context = 7;
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	ASSERT_EQ(0, t_cq_wait(&self->cb, &cqe, 5000));
	EXPECT_EQ(7, cqe.context);
	EXPECT_EQ(SWNIC_CQE_RECV | SWNIC_CQE_ERROR, cqe.flags);
	EXPECT_EQ(ECANCELED, cqe.err);
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(ENOENT, errno);

	/* Due: posted, it is an ordinary receive, which the flag leaves. */
	ASSERT_EQ(0, gauges_read(&g0));
	tr.trig.threshold = 1;
	tr.rqe = t_recv(dst[1], sizeof(dst[1]), 8);
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_TRIG_RECV, &tr));
	ASSERT_EQ(0, cntr_update(self->db, cc.cntr_id, 0, 1));
	ASSERT_TRUE(gauges_triggered_back(g0.triggered_ops));
	c.context = 8;
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(ENOENT, errno);
	exchange(_metadata, self, &s, NULL);
	ASSERT_EQ(1, t_cq_pop(&self->ca, &cqe));
	EXPECT_EQ(3, cqe.context);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &cqe));
	EXPECT_EQ(8, cqe.context);
	EXPECT_EQ(0, cqe.err);
	EXPECT_STREQ("ran", dst[1]);

	/* A plain posted receive: left by the flag, cancelled without. */
	struct swnic_rqe r = t_recv(dst[2], sizeof(dst[2]), 9);

	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	c.context = 9;
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(ENOENT, errno);
	c.flags = 0;
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &cqe));
	EXPECT_EQ(9, cqe.context);
	EXPECT_EQ(ECANCELED, cqe.err);

	/* Sends not consumed yet: a plain SQE stays, a trigger SQE goes. */
	c.flags = SWNIC_CANCEL_SEND | SWNIC_CANCEL_TRIG;
	s.context = 10;
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	t.cntr_id = ca.cntr_id;
	s.context = 11;
	s.flags |= SWNIC_SQE_TRIGGER;
	memcpy(s.inline_data, &t, sizeof(t));
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	c.context = 10;
	ASSERT_EQ(-1, ioctl(self->a.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(ENOENT, errno);
	c.context = 11;
	ASSERT_EQ(0, ioctl(self->a.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	/* The call consumed the SQ: 10 went (no receive: it waits), 11 not. */
	ASSERT_EQ(0, t_cq_wait(&self->ca, &cqe, 5000));
	EXPECT_EQ(10, cqe.context);
	EXPECT_EQ(0, cqe.err);
	ASSERT_EQ(0, t_cq_wait(&self->ca, &cqe, 5000));
	EXPECT_EQ(11, cqe.context);
	EXPECT_EQ(ECANCELED, cqe.err);
	EXPECT_EQ(0, t_cq_pop(&self->ca, &cqe));

	/* Unknown flags beside it are refused. */
	c.flags = SWNIC_CANCEL_TRIG | 1U << 2;
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_CANCEL, &c));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(cc.fd);
	close(ca.fd);
}

TEST_F(dp, peek_abi)
{
	struct swnic_ep_peek p = { .size = sizeof(p), .tag = 5 };
	char buf[4] = "pk";
	struct swnic_sqe s = t_send(buf, sizeof(buf), &self->b, 1);
	struct swnic_rqe r = t_recv(buf, sizeof(buf), 2);
	struct swnic_cqe c;

	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_PEEK, &p));
	EXPECT_EQ(ENOMSG, errno);
	s.opcode = SWNIC_OP_TSEND;
	s.tag = 5;
	s.flags = SWNIC_SQE_REMOTE_DATA;
	s.data = 9;
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_EP_PEEK, &p));
	EXPECT_EQ(sizeof(buf), p.len);
	EXPECT_EQ(1, p.has_data);
	EXPECT_EQ(9, p.data);
	EXPECT_EQ(self->a.port, p.src_port);
	p.flags = 1U << 7;
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_PEEK, &p));
	EXPECT_EQ(EOPNOTSUPP, errno);
	p.flags = 0;
	p.__reserved = 1;
	ASSERT_EQ(-1, ioctl(self->b.fd, SWNIC_IOCTL_EP_PEEK, &p));
	EXPECT_EQ(EINVAL, errno);
	/* A claim receive must be tagged, and not directed or multi. */
	r.flags = SWNIC_RQE_CLAIM;
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(EINVAL, c.err);
}

/*
 * A sender takes the receives posted without a doorbell, and only them:
 * a claim, which completes at once, and an RQE in error wait for their
 * owner's doorbell (the provider rings for a claim), with what is behind
 * them. Else a receiver that kept its RQ full of them, never ringing,
 * would have every delivery to it complete them all over again.
 */
TEST_F(dp, a_sender_leaves_claims_and_bad_rqes_to_the_owner)
{
	char src[8] = "behind", dst[8] = "";
	struct swnic_sqe s = t_send(src, sizeof(src), &self->b, 1);
	struct swnic_rqe claim = t_recv(NULL, 0, 2);
	struct swnic_rqe bad = t_recv(dst, sizeof(dst), 3);
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 4);
	struct swnic_cqe c;

	claim.flags = SWNIC_RQE_TAGGED | SWNIC_RQE_CLAIM;
	claim.tag = 9;
	bad.flags = 1U << 15;
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &claim));
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &bad));
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	/* Sent (buffered at b), and none of b's RQEs taken. */
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(*self->b.rq.tail, *self->b.rq.head + 3);
	EXPECT_STREQ("", dst);

	/* b's doorbell: the claim fails, the bad RQE too, r takes it. */
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(2, c.context);
	EXPECT_EQ(ENOMSG, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(3, c.context);
	EXPECT_EQ(EOPNOTSUPP, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(4, c.context);
	EXPECT_EQ(0, c.err);
	EXPECT_STREQ("behind", dst);
}

static int ep_peer(int fd, uint32_t flags, uint32_t addr, uint16_t port)
{
	struct swnic_ep_peer p = {
		.size = sizeof(p), .flags = flags, .addr = addr, .port = port,
	};

	return ioctl(fd, SWNIC_IOCTL_EP_PEER, &p) ? -errno : 0;
}

/* A one-byte send from @from to b; its completion's error (0: taken). */
static uint32_t send_byte_to_b(struct __test_metadata *_metadata,
			       FIXTURE_DATA(dp) *self, struct t_ep *from,
			       struct t_cq *cq, const char *byte, uint64_t ctx)
{
	struct swnic_sqe s = t_send(byte, 1, &self->b, ctx);
	struct swnic_cqe c = { 0 };

	EXPECT_EQ(0, t_ring_push(&from->sq, &s));
	EXPECT_EQ(0, t_doorbell(from, NULL));
	EXPECT_EQ(1, t_cq_pop(cq, &c));
	EXPECT_EQ(ctx, c.context);
	return c.flags & SWNIC_CQE_ERROR ? c.err : 0;
}

/*
 * SWNIC_IOCTL_EP_PEER: with ONE, b takes sends from a only - another
 * endpoint's (c) is ECONNREFUSED and takes none of b's receives, nor
 * does one c sent before (buffered); with NONE from no one; with neither
 * from anyone again. Its arguments are checked, and it is the owner's.
 */
TEST_F(dp, ep_peer_takes_sends_from_one_peer)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	char got[2] = "";
	struct swnic_rqe r = t_recv(got, 1, 50);
	struct swnic_cqe c;
	struct t_ep cep;
	int status;
	pid_t pid;

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	ASSERT_TRUE(q.features & SWNIC_FEAT_EP_PEER);
	ASSERT_EQ(0, t_ep_create(self->da, &self->ca, &self->ca,
				 SWNIC_EP_F_DB_SYSCALL, 0, 8, &cep));
	EXPECT_EQ(-EINVAL, ep_peer(self->b.fd, SWNIC_EP_PEER_ONE |
				   SWNIC_EP_PEER_NONE, 0, 0));
	EXPECT_EQ(-EINVAL, ep_peer(self->b.fd, 0, self->a.addr, 0));
	EXPECT_EQ(-EINVAL, ep_peer(self->b.fd, 0, 0, self->a.port));
	EXPECT_EQ(-EOPNOTSUPP, ep_peer(self->b.fd, 1U << 5, 0, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(ep_peer(self->b.fd, SWNIC_EP_PEER_NONE, 0, 0) == -EPERM ?
		      0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("another process set the owner's endpoint's peer");

	/* c's byte, buffered before b has its peer. */
	EXPECT_EQ(0, send_byte_to_b(_metadata, self, &cep, &self->ca, "C",
				    49));
	ASSERT_EQ(0, ep_peer(self->b.fd, SWNIC_EP_PEER_ONE, self->a.addr,
			     self->a.port));
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	EXPECT_EQ(ECONNREFUSED,
		  send_byte_to_b(_metadata, self, &cep, &self->ca, "c", 51));
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c)) TH_LOG("c's byte was taken");
	EXPECT_EQ(0, send_byte_to_b(_metadata, self, &self->a, &self->ca,
				    "a", 52));
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(50, c.context);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ('a', got[0]);

	ASSERT_EQ(0, ep_peer(self->b.fd, SWNIC_EP_PEER_NONE, 0, 0));
	EXPECT_EQ(ECONNREFUSED,
		  send_byte_to_b(_metadata, self, &self->a, &self->ca, "a", 53));
	ASSERT_EQ(0, ep_peer(self->b.fd, 0, 0, 0));
	EXPECT_EQ(0, send_byte_to_b(_metadata, self, &cep, &self->ca, "c",
				    54));
	t_ep_destroy(&cep);
}

/* Busy polling (SWNIC_DB_POLL) is of the wire only: the rings stay. */
TEST_F(dp, busy_poll_abi)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_ep_doorbell db = {
		.size = sizeof(db), .flags = SWNIC_DB_POLL, .polled = 7,
	};
	char src[8] = "polled", dst[8] = "";
	struct swnic_sqe s = t_send(src, sizeof(src), &self->b, 1);
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 2);
	struct swnic_cqe c;

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_WIRE_POLL);
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_ring_push(&self->a.sq, &s));
	/* The device is bound to no netdev (endpoint_addresses): no wire. */
	ASSERT_EQ(0, ioctl(self->a.fd, SWNIC_IOCTL_EP_DOORBELL, &db));
	EXPECT_EQ(0, db.polled);
	EXPECT_EQ(0, db.sq_done);
	db.polled = 7;
	ASSERT_EQ(0, ioctl(self->b.fd, SWNIC_IOCTL_EP_DOORBELL, &db));
	EXPECT_EQ(0, db.polled);
	EXPECT_EQ(0, db.rq_done);
	/* Neither ring was taken: nothing sent, nothing completed. */
	EXPECT_EQ(0, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
	EXPECT_STREQ("", dst);
	/* Flags it does not know; the reserved word. */
	db.flags = SWNIC_DB_POLL | 1U << 5;
	ASSERT_EQ(-1, ioctl(self->a.fd, SWNIC_IOCTL_EP_DOORBELL, &db));
	EXPECT_EQ(EOPNOTSUPP, errno);
	db.flags = SWNIC_DB_POLL;
	db.__reserved = 1;
	ASSERT_EQ(-1, ioctl(self->a.fd, SWNIC_IOCTL_EP_DOORBELL, &db));
	EXPECT_EQ(EINVAL, errno);
	/* The plain doorbell takes the rings as ever. */
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->ca, &c));
	EXPECT_EQ(0, c.err);
	ASSERT_EQ(1, t_cq_pop(&self->cb, &c));
	EXPECT_EQ(0, c.err);
	EXPECT_STREQ("polled", dst);
}

/* Datagram and reliable endpoints do not talk to each other. */
TEST_F(dp, endpoint_types_must_match)
{
	struct swnic_ep_create c = {
		.size = sizeof(c), .type = SWNIC_EP_DGRAM,
		.tx_cq = self->ca.id, .rx_cq = self->ca.id,
	};
	struct t_ep d = {};
	char buf[4] = "dg", dst[4] = "";
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);
	struct swnic_sqe s = t_send(buf, sizeof(buf), &self->b, 2);
	struct swnic_cqe cqe;

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_EP_CREATE, &c));
	d.fd = c.fd;
	d.port = c.port;
	d.addr = c.addr;
	ASSERT_EQ(0, t_ring_map(&d.sq, c.fd, &c.sq));
	ASSERT_EQ(0, t_ring_map(&d.rq, c.fd, &c.rq));
	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));

	ASSERT_EQ(0, t_ring_push(&d.sq, &s));		/* dgram -> rdm */
	ASSERT_EQ(0, t_doorbell(&d, NULL));
	ASSERT_EQ(1, t_cq_pop(&self->ca, &cqe));
	EXPECT_EQ(ECONNREFUSED, cqe.err);
	EXPECT_EQ(0, t_cq_pop(&self->cb, &cqe));
	t_ep_destroy(&d);
}

/* A peer in another process: data crosses address spaces, one copy. */
TEST(cross_process_pingpong)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC), status;
	int pipefd[2];
	struct t_cq cq = {};
	struct t_ep ep = {}, peer = {};
	struct swnic_cqe c;
	uint16_t child_port;
	uint64_t v = 0x1122334455667788ULL, back = 0;
	struct swnic_rqe r = t_recv(&back, sizeof(back), 3);
	struct swnic_sqe s;
	pid_t pid;

	ASSERT_LE(0, dom);
	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, t_cq_create(dom, 64, &cq));
	ASSERT_EQ(0, t_ep_create(dom, &cq, &cq, 0, 0, 16, &ep));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The child has its own domain; the parent's is not usable. */
		int d = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		struct t_cq ccq = {};
		struct t_ep cep = {};

		v = 0;
		r = t_recv(&v, sizeof(v), 1);

		if (d < 0 || t_cq_create(d, 64, &ccq) ||
		    t_ep_create(d, &ccq, &ccq, 0, 0, 16, &cep))
			_exit(2);
		if (t_doorbell(&ep, NULL) != -EPERM)
			_exit(3);
		/* Nor poll the wire through the parent's endpoint. */
		if (ioctl(ep.fd, SWNIC_IOCTL_EP_DOORBELL,
			  &(struct swnic_ep_doorbell){
				.size = sizeof(struct swnic_ep_doorbell),
				.flags = SWNIC_DB_POLL }) != -1 ||
		    errno != EPERM)
			_exit(7);
		t_ring_push(&cep.rq, &r);
		t_doorbell(&cep, NULL);
		if (write(pipefd[1], &cep.port, sizeof(cep.port)) != 2)
			_exit(4);
		if (t_cq_wait(&ccq, &c, 5000) || v != 0x1122334455667788ULL)
			_exit(5);
		v++;
		s = t_send(&v, sizeof(v), &ep, 2);
		t_ring_push(&cep.sq, &s);
		t_doorbell(&cep, NULL);
		if (t_cq_wait(&ccq, &c, 5000) || c.err)
			_exit(6);
		_exit(0);
	}
	ASSERT_EQ(2, read(pipefd[0], &child_port, 2));
	peer.addr = ep.addr;
	peer.port = child_port;
	s = t_send(&v, sizeof(v), &peer, 4);
	ASSERT_EQ(0, t_ring_push(&ep.rq, &r));
	ASSERT_EQ(0, t_ring_push(&ep.sq, &s));
	ASSERT_EQ(0, t_doorbell(&ep, NULL));
	for (int got = 0; got < 2; got++) {
		ASSERT_EQ(0, t_cq_wait(&cq, &c, 5000));
		EXPECT_EQ(0, c.err);
	}
	EXPECT_EQ(0x1122334455667789ULL, back);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(ep.fd);
	close(cq.fd);
	close(dom);
}

/*
 * A broken ring is EPIPE at every doorbell from then on, in engine mode
 * too: the engine, not the doorbell, finds it broken.
 */
TEST(engine_mode_broken_ring_is_epipe)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	struct t_cq cq = {};
	struct t_ep a = {};
	int ret = 0;

	ASSERT_LE(0, dom);
	ASSERT_EQ(0, t_cq_create(dom, 64, &cq));
	ASSERT_EQ(0, t_ep_create(dom, &cq, &cq, SWNIC_EP_F_DB_ENGINE, 0, 16, &a));
	atomic_store(a.sq.tail, 1000);	/* beyond any entry */
	for (int i = 0; i < 500 && !ret; i++) {
		ret = t_doorbell(&a, NULL);
		if (!ret)
			usleep(10000);
	}
	EXPECT_EQ(-EPIPE, ret);
	EXPECT_TRUE(*a.sq.flags & SWNIC_RING_F_BROKEN);
	EXPECT_EQ(-EPIPE, t_doorbell(&a, NULL));
	close(a.fd);
	close(cq.fd);
	close(dom);
}

/* Engine doorbell: after one wakeup the thread moves data on its own. */
TEST(engine_mode_progress)
{
	int dom = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	struct t_cq cq = {};
	struct t_ep a = {}, b = {};
	struct swnic_cqe c;
	char src[32] = "engine", dst[32] = "";
	struct swnic_rqe r = t_recv(dst, sizeof(dst), 1);

	ASSERT_LE(0, dom);
	ASSERT_EQ(0, t_cq_create(dom, 64, &cq));
	ASSERT_EQ(0, t_ep_create(dom, &cq, &cq, SWNIC_EP_F_DB_ENGINE, 0, 16, &a));
	ASSERT_EQ(0, t_ep_create(dom, &cq, &cq, SWNIC_EP_F_DB_SYSCALL, 0, 16, &b));
	ASSERT_TRUE(*a.sq.flags & SWNIC_RING_F_NEED_WAKEUP);
	ASSERT_EQ(0, t_ring_push(&b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&b, NULL));

	for (int i = 0; i < 50; i++) {
		struct swnic_sqe s = t_send(src, sizeof(src), &b, i);

		s.flags = 0;
		/* A full SQ waits for the engine: it is consuming on its own. */
		for (int spins = 0; t_ring_push(&a.sq, &s) == -EAGAIN; spins++) {
			ASSERT_LT(spins, 5000);
			usleep(1000);
		}
		atomic_thread_fence(memory_order_seq_cst);
		if (*a.sq.flags & SWNIC_RING_F_NEED_WAKEUP)
			ASSERT_EQ(0, t_doorbell(&a, NULL));
		if (i == 0) {
			ASSERT_EQ(0, t_cq_wait(&cq, &c, 5000));
			EXPECT_STREQ("engine", dst);
		}
	}
	/* All 50 consumed by the engine (49 went to the unexpected queue). */
	for (int i = 0; i < 500 && atomic_load(a.sq.head) != 50; i++)
		usleep(10000);
	EXPECT_EQ(50, atomic_load(a.sq.head));
	close(a.fd);
	close(b.fd);
	close(cq.fd);
	close(dom);
}

TEST_HARNESS_MAIN
