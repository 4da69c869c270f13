// SPDX-License-Identifier: GPL-2.0
/*
 * The data path when peers misbehave or die, through the raw kernel ABI:
 * a receiver killed mid-stream (with sends of ours outstanding and
 * messages of ours queued at it), RMA into a process being killed, a
 * process that exits or is killed with sends, unexpected messages, MRs
 * and an RMA read in flight, and an MR revoked (munmap) or deregistered
 * while a peer loops RMA against it.
 * Each ends by checking the module's gauges (endpoints, CQs, domains,
 * MRs, pinned bytes, unexpected messages and bytes) are back at their
 * start and that the kernel logged no warning.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "mr_util.h"
#include "swnic_rings.h"
#include "gauge_util.h"

#define KIB		1024UL

static int dom_open(void)
{
	return open(DEV_PATH, O_RDWR | O_CLOEXEC);
}

/* Fill @len bytes at @p with the pattern of message @i. */
static void fill(void *p, size_t len, unsigned int i)
{
	uint8_t *b = p;

	for (size_t k = 0; k < len; k++)
		b[k] = (uint8_t)(i * 31 + k * 7 + 1);
}

static bool has_pattern(const void *p, size_t len, unsigned int i)
{
	const uint8_t *b = p;

	for (size_t k = 0; k < len; k++)
		if (b[k] != (uint8_t)(i * 31 + k * 7 + 1))
			return false;
	return true;
}

static int read_full(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static int write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/* The endpoint at @port on this host, as a destination. */
static struct t_ep peer_at(uint16_t port)
{
	struct t_ep p = { .fd = -1, .addr = htonl(INADDR_LOOPBACK),
			  .port = port };

	return p;
}

/*
 * Wait until an engine-mode SQ has stopped with entries left: the engine
 * raises NEED_WAKEUP after its idle rounds, and keeps the entries (a peer
 * out of resources) for later rounds. Bounded: ~30 s.
 */
static int engine_stalled(struct t_ep *ep)
{
	for (int i = 0; i < 3000; i++) {
		uint32_t flags = atomic_load(ep->sq.flags);
		uint32_t head = atomic_load(ep->sq.head);

		if ((flags & SWNIC_RING_F_NEED_WAKEUP) &&
		    head != atomic_load(ep->sq.tail))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* ---- a receiver killed mid-stream ------------------------------------- */

#define KP_MSG		(64 * KIB)
#define KP_RECVS	4		/* receives B posts */
#define KP_SENDS	100		/* 6.4 MiB: more than B may buffer */

FIXTURE(killed_peer)
{
	struct gauges start;
	long vmpin;
};

FIXTURE_VARIANT(killed_peer)
{
	uint32_t a_flags;		/* A's doorbell mode */
};

FIXTURE_VARIANT_ADD(killed_peer, syscall_doorbell)
{
	.a_flags = SWNIC_EP_F_DB_SYSCALL,
};

FIXTURE_VARIANT_ADD(killed_peer, engine)
{
	.a_flags = SWNIC_EP_F_DB_ENGINE,
};

FIXTURE_SETUP(killed_peer)
{
	if (access(DEV_PATH, R_OK | W_OK))
		SETUP_SKIP("no %s (module not loaded)", DEV_PATH);
	ASSERT_EQ(0, gauges_read(&self->start));
	self->vmpin = vm_pinned_kb();
}

FIXTURE_TEARDOWN(killed_peer)
{
}

/* B: post KP_RECVS receives, report its port, take them, then wait. */
static void kp_receiver(int to_a, int from_a)
{
	static uint8_t buf[KP_RECVS][KP_MSG];
	struct t_cq cq = {};
	struct t_ep ep = {};
	struct swnic_cqe c;
	int d = dom_open(), got = 0;
	char go;

	if (d < 0 || t_cq_create(d, 64, &cq) ||
	    t_ep_create(d, &cq, &cq, SWNIC_EP_F_DB_SYSCALL, 0, 64, &ep))
		_exit(2);
	for (int i = 0; i < KP_RECVS; i++) {
		struct swnic_rqe r = t_recv(buf[i], KP_MSG, i);

		if (t_ring_push(&ep.rq, &r))
			_exit(3);
	}
	if (t_doorbell(&ep, NULL) ||
	    write_full(to_a, &ep.port, sizeof(ep.port)))
		_exit(4);
	while (got < KP_RECVS) {
		if (t_cq_wait(&cq, &c, 30000) || c.err ||
		    !has_pattern(buf[c.context], KP_MSG, c.context))
			_exit(5);
		got++;
	}
	if (write_full(to_a, &got, sizeof(got)))
		_exit(6);
	/* Mid-stream: A's messages keep coming; B is killed in here. */
	read_full(from_a, &go, 1);
	_exit(7);
}

/*
 * B receives from A and is SIGKILLed mid-stream: A's sends still in its
 * SQ (B's unexpected buffer was full) and new ones complete with
 * ECONNREFUSED, each exactly once; nothing of B is left in the module;
 * A goes on talking to C.
 */
TEST_F(killed_peer, sends_fail_refused_and_nothing_is_left)
{
	static uint8_t msg[KP_SENDS][KP_MSG];
	static uint8_t cbuf[KP_MSG];
	int da = dom_open(), dc = dom_open(), to_a[2], from_a[2], got, status;
	int done = 0, refused = 0;
	bool seen[KP_SENDS + 1] = {};
	struct swnic_ep_doorbell db;
	struct t_cq acq = {}, ccq = {};
	struct t_ep a = {}, c = {}, b;
	struct gauges g;
	struct swnic_cqe e;
	struct swnic_sqe s;
	struct swnic_rqe r;
	uint16_t bport;
	pid_t pid;

	ASSERT_LE(0, da);
	ASSERT_LE(0, dc);
	ASSERT_EQ(0, pipe(to_a));
	ASSERT_EQ(0, pipe(from_a));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_a[0]);
		close(from_a[1]);
		kp_receiver(to_a[1], from_a[0]);
	}
	close(to_a[1]);
	close(from_a[0]);
	ASSERT_EQ(0, read_full(to_a[0], &bport, sizeof(bport)));
	b = peer_at(bport);

	ASSERT_EQ(0, t_cq_create(da, 256, &acq));
	ASSERT_EQ(0, t_ep_create(da, &acq, &acq,
				 variant->a_flags | SWNIC_EP_F_RM_ENABLED, 0,
				 128, &a));
	for (int i = 0; i < KP_SENDS; i++) {
		fill(msg[i], KP_MSG, i);
		s = t_send(msg[i], KP_MSG, &b, i);
		ASSERT_EQ(0, t_ring_push(&a.sq, &s));
	}
	ASSERT_EQ(0, t_doorbell(&a, &db));
	if (variant->a_flags & SWNIC_EP_F_DB_ENGINE)
		ASSERT_EQ(0, engine_stalled(&a));
	/* B's receives took the first ones, its buffer the next ones. */
	while (t_cq_pop(&acq, &e)) {
		ASSERT_EQ(0, e.err);
		ASSERT_EQ(done, e.context);
		done++;
	}
	ASSERT_LT(KP_RECVS, done);
	ASSERT_GT(KP_SENDS, done);	/* the rest waits in A's SQ */
	ASSERT_EQ(done, atomic_load(a.sq.head));
	ASSERT_EQ(0, read_full(to_a[0], &got, sizeof(got)));
	ASSERT_EQ(KP_RECVS, got);
	ASSERT_EQ(0, gauges_read(&g));
	EXPECT_EQ(self->start.unexpected_msgs + done - KP_RECVS,
		  g.unexpected_msgs);
	EXPECT_EQ(self->start.unexpected_bytes + (done - KP_RECVS) * KP_MSG,
		  g.unexpected_bytes);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	/* B's buffered messages went with it. */
	ASSERT_EQ(0, gauges_read(&g));
	EXPECT_EQ(self->start.unexpected_msgs, g.unexpected_msgs);
	EXPECT_EQ(self->start.unexpected_bytes, g.unexpected_bytes);

	/* The outstanding sends complete, refused, and one more too. */
	s = t_send(msg[0], KP_MSG, &b, KP_SENDS);
	ASSERT_EQ(0, t_ring_push(&a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&a, NULL));
	for (int i = done; i <= KP_SENDS; i++) {
		ASSERT_EQ(0, t_cq_wait(&acq, &e, 30000));
		EXPECT_EQ(SWNIC_CQE_SEND | SWNIC_CQE_ERROR, e.flags);
		EXPECT_EQ(ECONNREFUSED, e.err);
		ASSERT_GE(KP_SENDS, e.context);
		ASSERT_LE(done, e.context);
		EXPECT_FALSE(seen[e.context]);
		seen[e.context] = true;
		refused++;
	}
	EXPECT_EQ(KP_SENDS + 1 - done, refused);
	EXPECT_EQ(0, t_cq_pop(&acq, &e));	/* exactly once each */

	/* A still talks to C. */
	ASSERT_EQ(0, t_cq_create(dc, 8, &ccq));
	ASSERT_EQ(0, t_ep_create(dc, &ccq, &ccq, SWNIC_EP_F_DB_SYSCALL, 0, 8,
				 &c));
	memset(cbuf, 0, sizeof(cbuf));
	r = t_recv(cbuf, sizeof(cbuf), 77);
	ASSERT_EQ(0, t_ring_push(&c.rq, &r));
	ASSERT_EQ(0, t_doorbell(&c, NULL));
	s = t_send(msg[3], KP_MSG, &c, 78);
	ASSERT_EQ(0, t_ring_push(&a.sq, &s));
	ASSERT_EQ(0, t_doorbell(&a, NULL));
	ASSERT_EQ(0, t_cq_wait(&acq, &e, 30000));
	EXPECT_EQ(0, e.err);
	EXPECT_EQ(78, e.context);
	ASSERT_EQ(0, t_cq_wait(&ccq, &e, 30000));
	EXPECT_EQ(0, e.err);
	EXPECT_EQ(77, e.context);
	EXPECT_TRUE(has_pattern(cbuf, KP_MSG, 3));

	t_ep_destroy(&a);
	t_ep_destroy(&c);
	munmap(acq.ring.map, acq.ring.size);
	munmap(ccq.ring.map, ccq.ring.size);
	close(acq.fd);
	close(ccq.fd);
	close(da);
	close(dc);
	close(to_a[0]);
	close(from_a[1]);
	ASSERT_EQ(0, gauges_settle(&self->start, &g));
	EXPECT_TRUE(gauges_equal(&self->start, &g));
	EXPECT_EQ(self->vmpin, vm_pinned_kb());
}

#define KS_MSG		(4 * KIB)
#define KS_MAX_SENDS	20000

/* B: keeps 32 receives posted and takes what comes, until killed. */
static void ks_receiver(int to_a)
{
	static uint8_t buf[32][KS_MSG];
	struct t_cq cq = {};
	struct t_ep ep = {};
	struct swnic_cqe c;
	int d = dom_open();

	if (d < 0 || t_cq_create(d, 64, &cq) ||
	    t_ep_create(d, &cq, &cq, SWNIC_EP_F_DB_SYSCALL, 0, 32, &ep))
		_exit(2);
	for (int i = 0; i < 32; i++) {
		struct swnic_rqe r = t_recv(buf[i], KS_MSG, i);

		t_ring_push(&ep.rq, &r);
	}
	if (t_doorbell(&ep, NULL) ||
	    write_full(to_a, &ep.port, sizeof(ep.port)))
		_exit(4);
	for (;;) {
		struct swnic_rqe r;

		if (t_cq_wait(&cq, &c, -1))
			_exit(5);
		r = t_recv(buf[c.context], KS_MSG, c.context);
		t_ring_push(&ep.rq, &r);
		t_doorbell(&ep, NULL);
	}
}

/*
 * A streams into B while B is killed and exits: each send completes once,
 * either delivered or ECONNREFUSED - also while B's process is half gone
 * (its memory torn down, its files not yet closed) - and once refused,
 * always refused.
 */
TEST_F(killed_peer, killed_while_receiving)
{
	static uint8_t msg[KS_MSG];
	int da = dom_open(), to_a[2], status, sent = 0, completed = 0;
	int ok = 0, refused = 0;
	bool killed = false;
	struct t_cq acq = {};
	struct t_ep a = {}, b;
	struct gauges g;
	uint16_t bport;
	pid_t pid;

	ASSERT_LE(0, da);
	ASSERT_EQ(0, pipe(to_a));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_a[0]);
		ks_receiver(to_a[1]);
	}
	close(to_a[1]);
	ASSERT_EQ(0, read_full(to_a[0], &bport, sizeof(bport)));
	b = peer_at(bport);
	ASSERT_EQ(0, t_cq_create(da, 64, &acq));
	ASSERT_EQ(0, t_ep_create(da, &acq, &acq,
				 variant->a_flags | SWNIC_EP_F_RM_ENABLED, 0,
				 16, &a));
	fill(msg, sizeof(msg), 1);

	while (!refused && sent < KS_MAX_SENDS) {
		struct swnic_cqe e;

		while (sent - completed < 16) {
			struct swnic_sqe s = t_send(msg, KS_MSG, &b, sent);

			if (t_ring_push(&a.sq, &s))
				break;
			sent++;
		}
		ASSERT_EQ(0, t_doorbell(&a, NULL));
		if (!killed && ok >= 64) {
			ASSERT_EQ(0, kill(pid, SIGKILL));
			killed = true;
		}
		/* B may be behind by a full buffer: its sends wait in A's SQ. */
		ASSERT_EQ(0, t_cq_wait_ringing(&a, &acq, &e, 20000));
		do {
			ASSERT_EQ(completed, e.context);
			completed++;
			if (!e.err && !refused) {
				ok++;
				continue;
			}
			/* Never ESRCH, EFAULT...: the peer is just gone. */
			ASSERT_EQ(ECONNREFUSED, e.err);
			refused++;
		} while (t_cq_pop(&acq, &e));
	}
	ASSERT_LT(0, refused);
	ASSERT_LE(64, ok);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* In flight when the first was refused: refused too. */
	while (completed < sent) {
		struct swnic_cqe e;

		ASSERT_EQ(0, t_cq_wait_ringing(&a, &acq, &e, 20000));
		ASSERT_EQ(completed, e.context);
		EXPECT_EQ(ECONNREFUSED, e.err);
		completed++;
	}

	t_ep_destroy(&a);
	munmap(acq.ring.map, acq.ring.size);
	close(acq.fd);
	close(da);
	close(to_a[0]);
	ASSERT_EQ(0, gauges_settle(&self->start, &g));
	EXPECT_TRUE(gauges_equal(&self->start, &g));
}

/* ---- RMA into a process being killed ---------------------------------- */

#define KR_LEN		(64 * KIB)
#define KR_OPS		200000		/* bound, should B not die */

struct kr_info {
	uint16_t port;
	uint16_t pad[3];
	uint64_t key;
	uint64_t addr;
};

FIXTURE(rma_killed)
{
	struct gauges start;
};

FIXTURE_VARIANT(rma_killed)
{
	uint32_t reg_flags;
};

FIXTURE_VARIANT_ADD(rma_killed, pinned)
{
	.reg_flags = 0,
};

FIXTURE_VARIANT_ADD(rma_killed, odp)
{
	.reg_flags = SWNIC_MR_REG_ODP,
};

FIXTURE_SETUP(rma_killed)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	int d = dom_open();

	if (d < 0)
		SETUP_SKIP("no %s (module not loaded)", DEV_PATH);
	ASSERT_EQ(0, ioctl(d, SWNIC_IOCTL_QUERY_DEVICE, &q));
	close(d);
	if ((variant->reg_flags & SWNIC_MR_REG_ODP) &&
	    !(q.features & SWNIC_FEAT_MR_ODP))
		SETUP_SKIP("no on-demand registration on this kernel");
	ASSERT_EQ(0, gauges_read(&self->start));
}

FIXTURE_TEARDOWN(rma_killed)
{
}

/*
 * A loops RMA writes and reads into B's MR while B is killed: each op
 * succeeds or fails with ECONNREFUSED - never a fault or another key,
 * whatever point of its exit B is at - and once refused, always.
 */
TEST_F(rma_killed, refused_once_gone)
{
	static uint8_t buf[KR_LEN];
	int da = dom_open(), to_a[2], status, ok = 0, k;
	struct t_cq cq = {};
	struct t_ep a = {}, b;
	struct kr_info info;
	struct gauges g;
	bool killed = false;
	pid_t pid;

	ASSERT_LE(0, da);
	ASSERT_EQ(0, pipe(to_a));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint8_t *mem = map_anon(KR_LEN);
		struct t_cq bcq = {};
		struct t_ep bep = {};
		int d = dom_open();

		if (d < 0 || !mem || t_cq_create(d, 8, &bcq) ||
		    t_ep_create(d, &bcq, &bcq, 0, 0, 8, &bep))
			_exit(2);
		memset(mem, 0x33, KR_LEN);
		if (mr_reg(d, mem, KR_LEN, SWNIC_MR_ACCESS_REMOTE_READ |
			   SWNIC_MR_ACCESS_REMOTE_WRITE,
			   SWNIC_MR_REG_VIRT_ADDR | variant->reg_flags,
			   &info.key, NULL))
			_exit(3);
		info.port = bep.port;
		info.addr = (uintptr_t)mem;
		if (write_full(to_a[1], &info, sizeof(info)))
			_exit(4);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, read_full(to_a[0], &info, sizeof(info)));
	b = peer_at(info.port);
	ASSERT_EQ(0, t_cq_create(da, 8, &cq));
	ASSERT_EQ(0, t_ep_create(da, &cq, &cq, 0, 0, 8, &a));

	for (k = 0; k < KR_OPS; k++) {
		struct swnic_sqe s = t_send(buf, KR_LEN, &b, k);
		struct swnic_cqe c;

		s.opcode = k & 1 ? SWNIC_OP_READ : SWNIC_OP_WRITE;
		s.raddr = info.addr;
		s.rkey = info.key;
		ASSERT_EQ(0, t_ring_push(&a.sq, &s));
		ASSERT_EQ(0, t_doorbell(&a, NULL));
		ASSERT_EQ(1, t_cq_pop(&cq, &c));
		if (c.err) {
			ASSERT_EQ(ECONNREFUSED, c.err) {
				TH_LOG("op %d (%s), %d before it succeeded", k,
				       k & 1 ? "read" : "write", ok);
			}
			break;
		}
		ok++;
		if (!killed && ok >= 32) {
			ASSERT_EQ(0, kill(pid, SIGKILL));
			killed = true;
		}
	}
	ASSERT_GT(KR_OPS, k);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	for (int i = 0; i < 8; i++) {
		struct swnic_sqe s = t_send(buf, KR_LEN, &b, i);
		struct swnic_cqe c;

		s.opcode = i & 1 ? SWNIC_OP_READ : SWNIC_OP_WRITE;
		s.raddr = info.addr;
		s.rkey = info.key;
		ASSERT_EQ(0, t_ring_push(&a.sq, &s));
		ASSERT_EQ(0, t_doorbell(&a, NULL));
		ASSERT_EQ(1, t_cq_pop(&cq, &c));
		EXPECT_EQ(ECONNREFUSED, c.err);
	}

	t_ep_destroy(&a);
	munmap(cq.ring.map, cq.ring.size);
	close(cq.fd);
	close(da);
	close(to_a[0]);
	close(to_a[1]);
	ASSERT_EQ(0, gauges_settle(&self->start, &g));
	EXPECT_TRUE(gauges_equal(&self->start, &g));
}

/* ---- a process that ends mid-transfer ------------------------------- */

#define PX_MSG		(64 * KIB)
#define PX_SENDS	96		/* 6 MiB at P: more than it buffers */
#define PX_TO_X		8		/* P's messages left unexpected at X */
#define PX_TO_X_MSG	(256 * KIB)
#define PX_P_MR		(1024 * KIB)	/* P's MR, read by X */
#define PX_X_MR		(2048 * KIB)	/* X's own pinned MR */

struct px_info {
	uint16_t port;			/* X's sending endpoint */
	uint16_t pad[3];
};

struct px_go {
	uint16_t port;			/* P's endpoint */
	uint16_t pad[3];
	uint64_t key;			/* P's MR, VA addressed */
	uint64_t addr;
};

FIXTURE(process_exit)
{
	struct gauges start;
	long vmpin;
};

FIXTURE_VARIANT(process_exit)
{
	bool sigkill;
};

FIXTURE_VARIANT_ADD(process_exit, exit)
{
	.sigkill = false,
};

FIXTURE_VARIANT_ADD(process_exit, sigkill)
{
	.sigkill = true,
};

FIXTURE_SETUP(process_exit)
{
	if (access(DEV_PATH, R_OK | W_OK))
		SETUP_SKIP("no %s (module not loaded)", DEV_PATH);
	ASSERT_EQ(0, gauges_read(&self->start));
	self->vmpin = vm_pinned_kb();
}

FIXTURE_TEARDOWN(process_exit)
{
}

/*
 * X: sends into P (engine, RM_ENABLED) until P's buffer is full, keeps a
 * pinned MR, has P's messages buffered unexpected at itself and an RMA
 * read of P's MR in flight on a second endpoint - and then exits or is
 * killed.
 */
static void px_child(int to_p, int from_p, bool sigkill)
{
	static uint8_t msg[PX_SENDS][PX_MSG];
	uint8_t *mine = map_anon(PX_X_MR), *rd = map_anon(PX_P_MR);
	uint32_t eflags = SWNIC_EP_F_DB_ENGINE | SWNIC_EP_F_RM_ENABLED;
	struct t_cq cq = {};
	struct t_ep x1 = {}, x2 = {}, p;
	struct px_info info = {};
	struct px_go go;
	struct swnic_sqe s;
	uint64_t key;
	int d = dom_open();
	char ready = 1;

	if (d < 0 || !mine || !rd || t_cq_create(d, 256, &cq) ||
	    t_ep_create(d, &cq, &cq, eflags, 0, 128, &x1) ||
	    t_ep_create(d, &cq, &cq, eflags, 0, 8, &x2))
		_exit(2);
	memset(mine, 1, PX_X_MR);
	if (mr_reg(d, mine, PX_X_MR, SWNIC_MR_ACCESS_REMOTE_READ |
		   SWNIC_MR_ACCESS_REMOTE_WRITE, SWNIC_MR_REG_VIRT_ADDR, &key,
		   NULL))
		_exit(3);
	info.port = x1.port;
	if (write_full(to_p, &info, sizeof(info)) ||
	    read_full(from_p, &go, sizeof(go)))
		_exit(4);
	p = peer_at(go.port);
	for (int i = 0; i < PX_SENDS; i++) {
		fill(msg[i], PX_MSG, i);
		s = t_send(msg[i], PX_MSG, &p, i);
		if (t_ring_push(&x1.sq, &s))
			_exit(5);
	}
	s = t_send(rd, PX_P_MR, &p, 1000);
	s.opcode = SWNIC_OP_READ;
	s.raddr = go.addr;
	s.rkey = go.key;
	if (t_ring_push(&x2.sq, &s) || t_doorbell(&x1, NULL) ||
	    t_doorbell(&x2, NULL))
		_exit(6);
	if (!sigkill)
		exit(0);
	if (write_full(to_p, &ready, 1))
		_exit(7);
	for (;;)
		pause();
}

/*
 * X ends with all of that in flight: its objects, pins and buffered
 * messages are gone, P's pinned memory (VmPin) is what P itself pinned,
 * and the messages X did get through to P are intact.
 */
TEST_F(process_exit, nothing_is_left)
{
	static uint8_t tox[PX_TO_X][PX_TO_X_MSG], rbuf[PX_MSG];
	uint8_t *pmr = map_anon(PX_P_MR);
	int dp = dom_open(), to_p[2], from_p[2], status, got = 0;
	struct gauges g, mine;
	struct px_info info;
	struct px_go go = {};
	struct t_cq cq = {};
	struct t_ep ep = {}, x;
	struct swnic_cqe e;
	uint32_t handle;
	pid_t pid;

	ASSERT_LE(0, dp);
	ASSERT_NE(NULL, pmr);
	fill(pmr, PX_P_MR, 9);
	ASSERT_EQ(0, t_cq_create(dp, 64, &cq));
	ASSERT_EQ(0, t_ep_create(dp, &cq, &cq, SWNIC_EP_F_DB_SYSCALL, 0, 64,
				 &ep));
	ASSERT_EQ(0, mr_reg(dp, pmr, PX_P_MR, SWNIC_MR_ACCESS_REMOTE_READ,
			    SWNIC_MR_REG_VIRT_ADDR, &go.key, &handle));
	ASSERT_EQ(self->vmpin + (long)(PX_P_MR / KIB), vm_pinned_kb());
	/* What P owns: the gauges must come back to this once X is gone. */
	ASSERT_EQ(0, gauges_read(&mine));
	go.port = ep.port;
	go.addr = (uintptr_t)pmr;

	ASSERT_EQ(0, pipe(to_p));
	ASSERT_EQ(0, pipe(from_p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_p[0]);
		close(from_p[1]);
		px_child(to_p[1], from_p[0], variant->sigkill);
	}
	close(to_p[1]);
	close(from_p[0]);
	ASSERT_EQ(0, read_full(to_p[0], &info, sizeof(info)));
	x = peer_at(info.port);
	/* P's messages wait at X, unexpected. */
	for (int i = 0; i < PX_TO_X; i++) {
		struct swnic_sqe s;

		fill(tox[i], PX_TO_X_MSG, 50 + i);
		s = t_send(tox[i], PX_TO_X_MSG, &x, i);
		ASSERT_EQ(0, t_ring_push(&ep.sq, &s));
	}
	ASSERT_EQ(0, t_doorbell(&ep, NULL));
	for (int i = 0; i < PX_TO_X; i++) {
		ASSERT_EQ(1, t_cq_pop(&cq, &e));
		ASSERT_EQ(0, e.err);
	}
	ASSERT_EQ(0, write_full(from_p[1], &go, sizeof(go)));
	if (variant->sigkill) {
		char ready;

		ASSERT_EQ(0, read_full(to_p[0], &ready, 1));
		ASSERT_EQ(0, kill(pid, SIGKILL));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (variant->sigkill) {
		ASSERT_TRUE(WIFSIGNALED(status));
	} else {
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}

	/* Nothing of X is left: only P's own objects (and what X sent P). */
	ASSERT_EQ(0, gauges_wait(&mine, &g, true));
	EXPECT_EQ(mine.domains, g.domains);
	EXPECT_EQ(mine.endpoints, g.endpoints);
	EXPECT_EQ(mine.cqs, g.cqs);
	EXPECT_EQ(mine.mrs, g.mrs);
	EXPECT_EQ(mine.pinned_bytes, g.pinned_bytes);
	EXPECT_EQ(self->vmpin + (long)(PX_P_MR / KIB), vm_pinned_kb());

	/* What X's sends delivered before it ended is there, in order. */
	for (;;) {
		struct swnic_rqe r = t_recv(rbuf, sizeof(rbuf), got);

		ASSERT_EQ(0, t_ring_push(&ep.rq, &r));
		ASSERT_EQ(0, t_doorbell(&ep, NULL));
		if (!t_cq_pop(&cq, &e))
			break;		/* nothing buffered: stays posted */
		ASSERT_EQ(0, e.err);
		ASSERT_EQ(got, e.context);
		ASSERT_EQ(PX_MSG, e.len);
		ASSERT_TRUE(has_pattern(rbuf, PX_MSG, got));
		got++;
	}
	ASSERT_GE(PX_SENDS, got);
	ASSERT_EQ(0, gauges_read(&g));
	EXPECT_EQ(self->start.unexpected_msgs, g.unexpected_msgs);
	EXPECT_EQ(self->start.unexpected_bytes, g.unexpected_bytes);
	/* P's MR was only read: unchanged. */
	EXPECT_TRUE(has_pattern(pmr, PX_P_MR, 9));

	ASSERT_EQ(0, mr_dereg(dp, handle));
	t_ep_destroy(&ep);
	munmap(cq.ring.map, cq.ring.size);
	close(cq.fd);
	close(dp);
	close(to_p[0]);
	close(from_p[1]);
	ASSERT_EQ(0, gauges_settle(&self->start, &g));
	EXPECT_TRUE(gauges_equal(&self->start, &g));
	EXPECT_EQ(self->vmpin, vm_pinned_kb());
	munmap(pmr, PX_P_MR);
}

/* ---- an MR revoked while a peer uses it -------------------------------- */

#define RV_PAGES	16
#define RV_LEN		(RV_PAGES * PAGE)
#define RV_BEFORE	20		/* ops that succeed before revoking */
#define RV_AFTER	32		/* ops the initiator posts after */
#define RV_MAX_OPS	1000000		/* bound, should the target not act */

/* Shared between the target (parent) and the initiator (child). */
struct rv_shared {
	_Atomic int ops;		/* completed by the initiator */
	_Atomic int revoked;		/* set by the target after revoking */
	int first_after;		/* first op posted after seeing it */
	int first_fail;			/* first op that failed */
	int fail_err;			/* its errno */
	int other_err;			/* a later failure with another errno */
	int ok_after_fail;		/* successes after the first failure */
	int read_bad;			/* successful reads that saw garbage */
};

FIXTURE(revoke)
{
	struct gauges start;
};

FIXTURE_VARIANT(revoke)
{
	bool munmap;		/* else deregistered */
	int err;		/* what every op after it gets */
};

FIXTURE_VARIANT_ADD(revoke, munmap)
{
	.munmap = true,
	.err = EKEYREVOKED,
};

FIXTURE_VARIANT_ADD(revoke, dereg)
{
	.munmap = false,
	.err = ENOKEY,
};

FIXTURE_SETUP(revoke)
{
	if (access(DEV_PATH, R_OK | W_OK))
		SETUP_SKIP("no %s (module not loaded)", DEV_PATH);
	ASSERT_EQ(0, gauges_read(&self->start));
}

FIXTURE_TEARDOWN(revoke)
{
}

/* The initiator: alternate writes and reads of a page until told. */
static void rv_initiator(struct rv_shared *sh, uint16_t port, uint64_t key,
			 uintptr_t base)
{
	static uint8_t wbuf[PAGE], rbuf[PAGE];
	struct t_ep t = peer_at(port);
	struct t_cq cq = {};
	struct t_ep ep = {};
	int d = dom_open(), after = 0;

	if (d < 0 || t_cq_create(d, 8, &cq) ||
	    t_ep_create(d, &cq, &cq, SWNIC_EP_F_DB_SYSCALL, 0, 8, &ep))
		_exit(2);
	sh->first_after = -1;
	sh->first_fail = -1;
	for (int k = 0; k < RV_MAX_OPS && after < RV_AFTER; k++) {
		bool write = !(k & 1), revoked = atomic_load(&sh->revoked);
		struct swnic_sqe s;
		struct swnic_cqe c;

		if (revoked && sh->first_after < 0)
			sh->first_after = k;
		/* What is written after the revocation must land nowhere. */
		memset(wbuf, revoked ? 0xee : 0x11, PAGE);
		memset(rbuf, 0, PAGE);
		s = t_send(write ? wbuf : rbuf, PAGE, &t, k);
		s.opcode = write ? SWNIC_OP_WRITE : SWNIC_OP_READ;
		s.raddr = base + (k % RV_PAGES) * PAGE;
		s.rkey = key;
		if (t_ring_push(&ep.sq, &s) || t_doorbell(&ep, NULL) ||
		    !t_cq_pop(&cq, &c) || c.context != (uint64_t)k)
			_exit(3);
		if (c.err && sh->first_fail < 0) {
			sh->first_fail = k;
			sh->fail_err = c.err;
		} else if (c.err && c.err != sh->fail_err) {
			sh->other_err = c.err;
		} else if (!c.err && sh->first_fail >= 0) {
			sh->ok_after_fail++;
		}
		if (!write && !c.err)
			for (size_t i = 0; i < PAGE; i++)
				if (rbuf[i] != 0x5a && rbuf[i] != 0x11) {
					sh->read_bad++;
					break;
				}
		atomic_store(&sh->ops, k + 1);
		if (revoked)
			after++;
	}
	_exit(0);
}

/*
 * The target revokes its MR (munmap) or deregisters it while a peer loops
 * RMA writes and reads against it: every op from the first failure on
 * fails with the one error (EKEYREVOKED, ENOKEY), all those posted after
 * the revocation do, none succeeds after a failure, nothing lands in the
 * new mapping at that address (or the deregistered memory), and the
 * kernel does not warn.
 */
TEST_F(revoke, every_op_after_fails_and_lands_nowhere)
{
	struct rv_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long tainted = kernel_tainted();
	uint8_t *region = map_anon(RV_LEN), *again;
	int dt = dom_open(), status;
	struct t_cq cq = {};
	struct t_ep ep = {};
	struct gauges g;
	uint32_t handle;
	uint64_t key;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_NE(NULL, region);
	ASSERT_LE(0, dt);
	memset(region, 0x5a, RV_LEN);
	ASSERT_EQ(0, t_cq_create(dt, 8, &cq));
	ASSERT_EQ(0, t_ep_create(dt, &cq, &cq, SWNIC_EP_F_DB_SYSCALL, 0, 8,
				 &ep));
	ASSERT_EQ(0, mr_reg(dt, region, RV_LEN, SWNIC_MR_ACCESS_REMOTE_READ |
			    SWNIC_MR_ACCESS_REMOTE_WRITE,
			    SWNIC_MR_REG_VIRT_ADDR, &key, &handle));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		rv_initiator(sh, ep.port, key, (uintptr_t)region);

	for (int i = 0; i < 3000 && atomic_load(&sh->ops) < RV_BEFORE; i++)
		usleep(10000);
	ASSERT_LE(RV_BEFORE, atomic_load(&sh->ops));
	if (variant->munmap) {
		ASSERT_EQ(0, munmap(region, RV_LEN));
		/* New memory at the same address: it must stay zero. */
		again = mmap(region, RV_LEN, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS |
			     MAP_FIXED_NOREPLACE, -1, 0);
		ASSERT_EQ(region, again);
		memset(again, 0, RV_LEN);
		EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(dt, handle));
	} else {
		ASSERT_EQ(0, mr_dereg(dt, handle));
	}
	atomic_store(&sh->revoked, 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	TH_LOG("%d ops, first failure %d, first posted after %d",
	       atomic_load(&sh->ops), sh->first_fail, sh->first_after);
	ASSERT_LE(0, sh->first_after);
	ASSERT_LE(sh->first_after + RV_AFTER, atomic_load(&sh->ops));
	ASSERT_LE(RV_BEFORE, sh->first_fail);
	ASSERT_GE(sh->first_after, sh->first_fail);
	EXPECT_EQ(variant->err, sh->fail_err);
	EXPECT_EQ(0, sh->other_err);
	EXPECT_EQ(0, sh->ok_after_fail);
	EXPECT_EQ(0, sh->read_bad);
	if (variant->munmap) {
		for (size_t i = 0; i < RV_LEN; i++)
			ASSERT_EQ(0, region[i]);
	} else {
		for (size_t i = 0; i < RV_LEN; i++)
			ASSERT_NE(0xee, region[i]);
	}
	EXPECT_EQ(0, (kernel_tainted() & ~tainted) & TAINT_WARN_BIT);

	if (variant->munmap)
		ASSERT_EQ(0, mr_dereg(dt, handle));
	t_ep_destroy(&ep);
	munmap(cq.ring.map, cq.ring.size);
	close(cq.fd);
	close(dt);
	munmap(region, RV_LEN);
	munmap(sh, sizeof(*sh));
	ASSERT_EQ(0, gauges_settle(&self->start, &g));
	EXPECT_TRUE(gauges_equal(&self->start, &g));
}

TEST_HARNESS_MAIN
