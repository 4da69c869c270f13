// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_rings: the rings user space shares with the kernel are hostile
 * ground. In each round one process has an endpoint (SYSCALL or ENGINE
 * doorbell mode, per variant) with its CQs, a counter and an MR, and a
 * forked peer process has the same; both send, receive and do RMA to each
 * other. Meanwhile a hostile thread scribbles random values on every word
 * the process can write in its SQ, RQ and CQs (producer and consumer
 * indices, flags words, entries), tries to make the counter's page
 * writable, and another thread keeps posting, ringing the doorbell,
 * cancelling, peeking and reaping completions.
 *
 * Asserts: the kernel survives (run.sh checks dmesg, and the taint flags
 * are checked here); the doorbell answers 0 or EPIPE (broken ring: in
 * ENGINE mode once the engine found it so) and, once EPIPE, EPIPE ever
 * after;
 * cancel and peek only their documented errnos; the peer, whose rings
 * nobody touches, never sees an error from its own doorbell; the kernel
 * never writes to the parts of a ring mapping that are neither an index,
 * nor a flags word, nor an entry; counter words only grow and their page
 * never becomes writable; after each round everything is closed and the
 * module-wide gauges (endpoints, CQs, MRs, pinned bytes, unexpected
 * messages, domains) are back at their start.
 *
 * SWNIC_FUZZ_SEED=N replays a run (the seed is printed first; thread
 * timing makes it a replay of the same choices, not of the same
 * interleaving), SWNIC_FUZZ_ITERS=N sets the posting thread's operations
 * per variant.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/swnic.h>
#include <linux/swnic_queue.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "fuzz_util.h"
#include "swnic_rings.h"

#define DEV_PATH	"/dev/swnic0"
#define DEFAULT_ITERS	400000
#define ROUNDS		16
#define BUF_SIZE	(64 * 1024)
#define RING_ENTRIES	64
/*
 * The buffers the work requests point at live far from everything else
 * (high half 0x1000): the hostile thread mangles addresses in entries, and
 * the kernel writes received data wherever an RQE says. Such an address
 * must not reach this process's heap, stack or libraries.
 */
#define BUF_ADDR	0x100000000000ULL
#define NO_HIGH_MIN	0x5000		/* high halves of our other mappings */
#define NO_HIGH_MAX	0x8000

/* What each side tells the other. */
struct peer_info {
	uint16_t port;
	uint64_t key;
	uint64_t addr;
};

/* One side's objects. */
struct side {
	int dom;
	struct t_cq txcq, rxcq;
	struct t_ep ep;
	int cntr_fd;
	const volatile struct swnic_cntr_words *cntr;
	uint8_t *buf;
	uint64_t key;
	uint32_t mode;
};

/* A round of the main process. */
struct round {
	struct fz_rng r;	/* the posting thread's */
	struct fz_rng hr;	/* the hostile thread's */
	struct side a;
	struct peer_info peer;
	unsigned long ops;
	unsigned int intensity;	/* hostile writes on indices, per 100000 */
	_Atomic bool stop;
	struct fz_stats *st;	/* the posting thread's */
	struct fz_stats *hst;	/* the hostile thread's */
	_Atomic unsigned long scribbles;
	bool broken;		/* the doorbell answered EPIPE */
};

/* ---- setting up a side -------------------------------------------------- */

static int side_open(struct side *s, uint32_t mode)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };
	struct swnic_ep_create ec = { .size = sizeof(ec), .type = SWNIC_EP_RDM,
				      .sq_entries = RING_ENTRIES,
				      .rq_entries = RING_ENTRIES };
	struct swnic_mr_reg mr = { .size = sizeof(mr), .length = BUF_SIZE,
				   .access = SWNIC_MR_ACCESS_ALL };
	void *p;
	int ret;

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->dom = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (s->dom < 0)
		return -errno;
	ret = t_cq_create(s->dom, 2 * RING_ENTRIES, &s->txcq);
	if (!ret)
		ret = t_cq_create(s->dom, 2 * RING_ENTRIES, &s->rxcq);
	if (ret)
		return ret;
	if (ioctl(s->dom, SWNIC_IOCTL_CNTR_CREATE, &cc))
		return -errno;
	s->cntr_fd = cc.fd;
	p = mmap(NULL, cc.mmap_size, PROT_READ, MAP_SHARED, cc.fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	s->cntr = p;
	ec.flags = mode;
	ec.tx_cq = s->txcq.id;
	ec.rx_cq = s->rxcq.id;
	for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++)
		ec.cntr[i] = cc.cntr_id;
	if (ioctl(s->dom, SWNIC_IOCTL_EP_CREATE, &ec))
		return -errno;
	s->ep.fd = ec.fd;
	s->ep.port = ec.port;
	s->ep.addr = ec.addr;
	ret = t_ring_map(&s->ep.sq, ec.fd, &ec.sq);
	if (!ret)
		ret = t_ring_map(&s->ep.rq, ec.fd, &ec.rq);
	if (ret)
		return ret;
	s->buf = mmap((void *)BUF_ADDR, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE |
		      MAP_FIXED_NOREPLACE, -1, 0);
	if (s->buf == MAP_FAILED)
		return -errno;
	memset(s->buf, 0x11, BUF_SIZE);
	mr.addr = (uintptr_t)s->buf;
	if (ioctl(s->dom, SWNIC_IOCTL_MR_REG, &mr))
		return -errno;
	s->key = mr.key;
	return 0;
}

static void side_close(struct side *s)
{
	t_ep_destroy(&s->ep);
	munmap(s->txcq.ring.map, s->txcq.ring.size);
	munmap(s->rxcq.ring.map, s->rxcq.ring.size);
	close(s->txcq.fd);
	close(s->rxcq.fd);
	if (s->cntr)
		munmap((void *)s->cntr, 4096);
	close(s->cntr_fd);
	close(s->dom);
	if (s->buf && s->buf != MAP_FAILED)
		munmap(s->buf, BUF_SIZE);
}

/* ---- work requests ---------------------------------------------------------- */

/* A work request that makes sense (mostly) to @to, or to ourselves. */
static void make_sqe(struct fz_rng *r, struct side *s, const struct peer_info *to,
		     uint64_t ctx, struct swnic_sqe *q)
{
	uint32_t len = fz_below(r, 2048);

	memset(q, 0, sizeof(*q));
	q->context = ctx;
	q->dest_addr = htonl(INADDR_LOOPBACK);
	q->dest_port = fz_chance(r, 85) ? to->port : s->ep.port;
	q->addr = (uintptr_t)s->buf + fz_below(r, BUF_SIZE - len);
	q->len = len;
	q->tag = fz_below(r, 4);
	q->flags = SWNIC_SQE_COMPLETION;
	switch (fz_below(r, 6)) {
	case 0:
		q->opcode = SWNIC_OP_TSEND;
		break;
	case 1:
		q->opcode = SWNIC_OP_WRITE;
		q->rkey = to->key;
		q->raddr = fz_below(r, BUF_SIZE - len);
		if (fz_chance(r, 30))
			q->flags |= SWNIC_SQE_REMOTE_DATA;
		break;
	case 2:
		q->opcode = SWNIC_OP_READ;
		q->rkey = to->key;
		q->raddr = fz_below(r, BUF_SIZE - len);
		break;
	default:
		q->opcode = SWNIC_OP_SEND;
		if (fz_chance(r, 20))
			q->flags |= SWNIC_SQE_DELIVERY;
		if (fz_chance(r, 20)) {
			q->flags |= SWNIC_SQE_INLINE;
			q->len %= SWNIC_INLINE_MAX + 1;
		}
		break;
	}
	if (q->dest_port == s->ep.port && q->rkey)
		q->rkey = s->key;
	if (fz_chance(r, 5)) {
		/* Triggered: maybe not a counter, maybe met, maybe never. */
		struct swnic_sqe_trigger t = {
			.threshold = fz_below(r, 8),
			.cntr_id = fz_below(r, 4),
			.flags = fz_below(r, 8),
			.comp_cntr = fz_below(r, 3),
			.__reserved = fz_chance(r, 95) ? 0 : 1,
		};

		q->flags |= SWNIC_SQE_TRIGGER;
		if (!(q->flags & SWNIC_SQE_INLINE) || fz_chance(r, 50)) {
			q->flags &= ~SWNIC_SQE_INLINE;
			memcpy(q->inline_data, &t, sizeof(t));
		}
	}
	if (fz_chance(r, 5))
		q->flags |= 1U << fz_below(r, 32);	/* an unknown flag, maybe */
}

static void make_rqe(struct fz_rng *r, struct side *s, uint64_t ctx,
		     struct swnic_rqe *q)
{
	uint32_t len = 1 + fz_below(r, 4096);

	memset(q, 0, sizeof(*q));
	q->context = ctx;
	q->addr = (uintptr_t)s->buf + fz_below(r, BUF_SIZE - len);
	q->len = len;
	q->tag = fz_below(r, 4);
	switch (fz_below(r, 6)) {
	case 0:
		q->flags = SWNIC_RQE_TAGGED;
		break;
	case 1:
		q->flags = SWNIC_RQE_MULTI_RECV;
		q->min_free = fz_below(r, 512);
		break;
	case 2:
		q->flags = SWNIC_RQE_TAGGED | SWNIC_RQE_CLAIM;
		break;
	default:
		break;
	}
}

static const struct fz_errset *cqe_errs(void)
{
	static struct fz_errset e;
	static bool init;

	if (!init) {
		e = FZ_ERRS(EINVAL, EOPNOTSUPP, EFAULT, ECONNREFUSED, EACCES,
			    EAGAIN, ENOKEY, EKEYREVOKED, EKEYREJECTED, ERANGE,
			    EMSGSIZE, ECANCELED, ENOMSG, ECONNABORTED, ENOMEM,
			    ENOENT, ENOSPC);
		init = true;
	}
	return &e;
}

/* Reap what a CQ holds; their errors must be ones the data path makes. */
static void drain(struct fz_stats *st, struct t_cq *cq, bool hostile)
{
	struct swnic_cqe c;

	for (int n = 0; n < 512 && t_cq_pop(cq, &c); n++) {
		/* A scribbled CQ hands back scribbled entries: not checked. */
		if (hostile)
			continue;
		fz_check(st, "cqe", c.flags & SWNIC_CQE_ERROR ? c.err : 0,
			 cqe_errs(), "completion flags 0x%x context %llu",
			 c.flags, (unsigned long long)c.context);
	}
}

/* ---- the peer process --------------------------------------------------------- */

/* Send, receive, RMA to @to until @stop is readable. Exit status: 0 or 1. */
static int peer_main(uint32_t mode, uint64_t seed, int info_wr, int info_rd,
		     int stop)
{
	static struct fz_stats st;
	struct fz_errset db_errs = fz_errs(0);
	struct pollfd p = { .fd = stop, .events = POLLIN };
	struct peer_info me, to;
	struct fz_rng r;
	struct side s;
	uint64_t ctx = 1ULL << 40;

	fz_rng_init(&r, seed, 0x9ee2);
	if (side_open(&s, mode))
		return 2;
	me = (struct peer_info){ s.ep.port, s.key, (uintptr_t)s.buf };
	if (write(info_wr, &me, sizeof(me)) != sizeof(me) ||
	    read(info_rd, &to, sizeof(to)) != sizeof(to))
		return 3;
	while (!poll(&p, 1, 0)) {
		struct swnic_ep_doorbell db = { .size = sizeof(db) };
		struct swnic_sqe q;
		struct swnic_rqe rq;
		int err;

		for (int i = fz_below(&r, 4); i > 0; i--) {
			make_rqe(&r, &s, ctx++, &rq);
			t_ring_push(&s.ep.rq, &rq);
		}
		for (int i = fz_below(&r, 4); i > 0; i--) {
			make_sqe(&r, &s, &to, ctx++, &q);
			t_ring_push(&s.ep.sq, &q);
		}
		err = ioctl(s.ep.fd, SWNIC_IOCTL_EP_DOORBELL, &db) ? errno : 0;
		fz_check(&st, "peer doorbell", err, &db_errs,
			 "the peer's own rings are untouched");
		drain(&st, &s.txcq, false);
		drain(&st, &s.rxcq, false);
		if (fz_chance(&r, 10))
			usleep(fz_below(&r, 500));
	}
	side_close(&s);
	if (st.bad)
		fz_report(&st, "peer");
	return st.bad ? 1 : 0;
}

/* ---- the main process' threads ------------------------------------------------ */

/* Every word of a ring user space may write (indices, flags, entries). */
static void scribble_ring(struct fz_rng *r, struct t_ring *t, unsigned int intensity,
			  uint32_t *seen)
{
	uint32_t v;

	switch (fz_below(r, 100000) < intensity ? fz_below(r, 3) : 3) {
	case 0:		/* the index user space owns, or the kernel's */
	case 1: {
		_Atomic uint32_t *w = fz_chance(r, 50) ? t->head : t->tail;
		uint32_t cur = atomic_load(w);

		switch (fz_below(r, 5)) {
		case 0:
			v = cur + 1;
			break;
		case 1:
			v = cur - 1;
			break;
		case 2:
			v = cur + t->entries + fz_below(r, 3);
			break;
		default:
			v = fz_u32(r);
			break;
		}
		atomic_store(w, v);
		break;
	}
	case 2:		/* the flags word, kernel-owned */
		atomic_store(t->flags, fz_u32(r));
		break;
	default: {	/* an entry: garbage, or a plausible one mangled */
		uint32_t e = fz_below(r, t->entries);
		uint8_t *p = t->array + (size_t)e * t->entry_size;
		uint32_t off = 4 * fz_below(r, t->entry_size / 4);

		v = fz_chance(r, 30) ? *seen : fz_u32(r);
		/* The high half of an address: never into our own memory. */
		if (off % 8 == 4 && v >= NO_HIGH_MIN && v < NO_HIGH_MAX)
			v = (BUF_ADDR >> 32) + (v & 1);
		memcpy(p + off, &v, sizeof(v));
		*seen = v;
		break;
	}
	}
}

static void *hostile_thread(void *arg)
{
	struct round *rd = arg;
	struct t_ring *rings[] = { &rd->a.ep.sq, &rd->a.ep.rq,
				   &rd->a.txcq.ring, &rd->a.rxcq.ring };
	struct fz_errset eacces = FZ_ERRS(EACCES);
	uint32_t seen = 0;

	while (!atomic_load(&rd->stop)) {
		if (fz_chance(&rd->hr, 1)) {
			/* The counter stays the kernel's. */
			void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				       rd->a.cntr_fd, 0);
			int err = p == MAP_FAILED ? errno : 0;

			fz_check(rd->hst, "cntr mmap", err, &eacces,
				 "the counter's page mapped writable");
			err = mprotect((void *)rd->a.cntr, 4096,
				       PROT_READ | PROT_WRITE) ? errno : 0;
			fz_check(rd->hst, "cntr mprotect", err, &eacces,
				 "the counter's page made writable");
			if (p != MAP_FAILED)
				munmap(p, 4096);
		}
		scribble_ring(&rd->hr, rings[fz_below(&rd->hr, ARRAY_SIZE(rings))],
			      rd->intensity, &seen);
		rd->scribbles++;
		if (fz_chance(&rd->hr, 20))
			sched_yield();
	}
	return NULL;
}

static void *poster_thread(void *arg)
{
	struct round *rd = arg;
	struct side *s = &rd->a;
	struct fz_errset db_errs = FZ_ERRS(EPIPE);
	struct fz_errset epipe = FZ_ERRS(EPIPE);
	struct fz_errset cancel_errs = FZ_ERRS(ENOENT, EAGAIN, EPIPE);
	struct fz_errset peek_errs = FZ_ERRS(ENOMSG);
	struct fz_errset none = fz_errs(0);
	uint64_t ctx = 1, value = 0, errs = 0;

	for (unsigned long i = 0; i < rd->ops; i++) {
		struct swnic_sqe q;
		struct swnic_rqe rq;
		int err;

		/* About as many scribbles as operations: let it catch up. */
		for (int n = 0; n < 100 && atomic_load(&rd->scribbles) < i; n++)
			sched_yield();

		switch (fz_below(&rd->r, 10)) {
		case 0: case 1: case 2:
			make_sqe(&rd->r, s, &rd->peer, ctx++, &q);
			t_ring_push(&s->ep.sq, &q);
			break;
		case 3: case 4:
			make_rqe(&rd->r, s, ctx++, &rq);
			t_ring_push(&s->ep.rq, &rq);
			break;
		case 5: case 6: {
			struct swnic_ep_doorbell db = { .size = sizeof(db) };

			if (s->mode == SWNIC_EP_F_DB_ENGINE && fz_chance(&rd->r, 50) &&
			    !(atomic_load(s->ep.sq.flags) & SWNIC_RING_F_NEED_WAKEUP))
				break;	/* as a provider would: only when asked */
			err = ioctl(s->ep.fd, SWNIC_IOCTL_EP_DOORBELL, &db) ? errno : 0;
			/* Broken is for good. */
			fz_check(rd->st, "doorbell", err, rd->broken ? &epipe : &db_errs,
				 "doorbell (mode 0x%x)%s", s->mode,
				 rd->broken ? " after an EPIPE" : "");
			rd->broken |= err == EPIPE;
			break;
		}
		case 7: {
			struct swnic_ep_cancel c = { .size = sizeof(c) };

			c.flags = fz_chance(&rd->r, 50) ? SWNIC_CANCEL_SEND : 0;
			c.context = ctx - 1 - fz_below(&rd->r, ctx < 16 ? ctx : 16);
			err = ioctl(s->ep.fd, SWNIC_IOCTL_EP_CANCEL, &c) ? errno : 0;
			fz_check(rd->st, "cancel", err, &cancel_errs, "cancel 0x%x",
				 c.flags);
			break;
		}
		case 8: {
			struct swnic_ep_peek k = { .size = sizeof(k) };

			k.flags = fz_below(&rd->r, 4);
			k.tag = fz_below(&rd->r, 4);
			k.claim = fz_below(&rd->r, 4);
			err = ioctl(s->ep.fd, SWNIC_IOCTL_EP_PEEK, &k) ? errno : 0;
			fz_check(rd->st, "peek", err, &peek_errs, "peek 0x%x", k.flags);
			break;
		}
		default: {
			/* Counters only grow; the CQs are reaped (unchecked). */
			uint64_t v = s->cntr->value, e = s->cntr->err;

			if (v < value || e < errs)
				fz_check(rd->st, "counter", EILSEQ, &none,
					 "counter went from %llu/%llu to %llu/%llu",
					 (unsigned long long)value,
					 (unsigned long long)errs,
					 (unsigned long long)v, (unsigned long long)e);
			value = v;
			errs = e;
			drain(rd->st, &s->txcq, true);
			drain(rd->st, &s->rxcq, true);
			break;
		}
		}
	}
	atomic_store(&rd->stop, true);
	return NULL;
}

/*
 * The bytes of a ring mapping that are neither an index, nor the flags
 * word, nor an entry: the kernel must never write them (nor did we).
 */
static bool ring_pad_clean(const struct t_ring *t)
{
	const uint8_t *p = t->map;
	size_t head = (const uint8_t *)t->head - p, tail = (const uint8_t *)t->tail - p;
	size_t flags = (const uint8_t *)t->flags - p, array = t->array - p;
	size_t end = array + (size_t)t->entries * t->entry_size;

	for (size_t i = 0; i < t->size; i++) {
		if ((i >= head && i < head + 4) || (i >= tail && i < tail + 4) ||
		    (i >= flags && i < flags + 4) || (i >= array && i < end))
			continue;
		if (p[i])
			return false;
	}
	return true;
}

/* ---- the test ------------------------------------------------------------------- */

FIXTURE(rings)
{
	struct fz_gauges start;
	unsigned long taint;
};

FIXTURE_VARIANT(rings)
{
	uint32_t mode;
};

FIXTURE_VARIANT_ADD(rings, syscall)
{
	.mode = SWNIC_EP_F_DB_SYSCALL,
};

FIXTURE_VARIANT_ADD(rings, engine)
{
	.mode = SWNIC_EP_F_DB_ENGINE,
};

FIXTURE_SETUP(rings)
{
	if (access(DEV_PATH, R_OK | W_OK))
		SETUP_SKIP("no %s (module not loaded)", DEV_PATH);
	ASSERT_EQ(0, fz_gauges_read(&self->start));
	self->taint = fz_tainted();
}

FIXTURE_TEARDOWN(rings)
{
}

TEST_F_TIMEOUT(rings, hostile, 900)
{
	unsigned long iters = fz_iters(DEFAULT_ITERS);
	char name[64];
	struct fz_rng top;
	struct fz_gauges now;
	static struct round rd;
	static struct fz_stats post_st, host_st;
	unsigned long bad = 0, scribbles = 0, broken = 0;
	double t0 = fz_now();

	snprintf(name, sizeof(name), "rings.hostile.%s",
		 variant->mode == SWNIC_EP_F_DB_ENGINE ? "engine" : "syscall");
	fz_announce(name, iters);
	fz_catch_faults();
	fz_rng_init(&top, fz_seed(), fz_salt(name));

	for (int round = 0; round < ROUNDS; round++) {
		int info_a[2], info_b[2], stop[2], status;
		uint64_t peer_seed = fz_next(&top);
		struct peer_info me;
		pthread_t h, p;
		pid_t pid;

		memset(&rd, 0, sizeof(rd));
		rd.st = &post_st;
		rd.hst = &host_st;
		fz_rng_init(&rd.r, fz_next(&top), 1);
		fz_rng_init(&rd.hr, fz_next(&top), 2);
		rd.ops = iters / ROUNDS;
		/* From no broken index at all to a storm of them. */
		rd.intensity = (const unsigned int[]){
			0, 0, 0, 1, 1, 2, 3, 5, 8, 13, 20, 50, 100, 300, 1000, 10000,
		}[round];
		ASSERT_EQ(0, pipe2(info_a, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(info_b, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(stop, O_CLOEXEC));
		fflush(stdout);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(stop[1]);
			_exit(peer_main(variant->mode, peer_seed, info_b[1],
					info_a[0], stop[0]));
		}
		close(stop[0]);
		ASSERT_EQ(0, side_open(&rd.a, variant->mode));
		me = (struct peer_info){ rd.a.ep.port, rd.a.key, (uintptr_t)rd.a.buf };
		ASSERT_EQ(sizeof(me), write(info_a[1], &me, sizeof(me)));
		ASSERT_EQ(sizeof(rd.peer), read(info_b[0], &rd.peer, sizeof(rd.peer)));

		ASSERT_EQ(0, pthread_create(&h, NULL, hostile_thread, &rd));
		ASSERT_EQ(0, pthread_create(&p, NULL, poster_thread, &rd));
		pthread_join(p, NULL);
		pthread_join(h, NULL);

		/* Whatever happened, the kernel wrote only where it may. */
		EXPECT_TRUE(ring_pad_clean(&rd.a.ep.sq)) TH_LOG("SQ padding written");
		EXPECT_TRUE(ring_pad_clean(&rd.a.ep.rq)) TH_LOG("RQ padding written");
		EXPECT_TRUE(ring_pad_clean(&rd.a.txcq.ring)) TH_LOG("tx CQ padding written");
		EXPECT_TRUE(ring_pad_clean(&rd.a.rxcq.ring)) TH_LOG("rx CQ padding written");

		/* The peer goes on until we have closed everything. */
		side_close(&rd.a);
		close(stop[1]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("round %d: the peer's status 0x%x", round, status);
		close(info_a[0]);
		close(info_a[1]);
		close(info_b[0]);
		close(info_b[1]);

		scribbles += rd.scribbles;
		broken += rd.broken;
		EXPECT_EQ(0, fz_gauges_settle(&self->start, &now, 10000))
			TH_LOG("round %d (intensity %u): objects left behind", round,
			       rd.intensity);
		if (!_metadata->passed)
			break;
	}
	printf("# %d rounds, %lu scribbles, %lu broken rings seen, %.1f s\n",
	       ROUNDS, scribbles, broken, fz_now() - t0);
	bad = fz_report(&post_st, "posting thread") +
	      fz_report(&host_st, "hostile thread");
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, fz_new_taint(self->taint))
		TH_LOG("the kernel was tainted (WARN/Oops/lockup): see dmesg");
	if (!_metadata->passed)
		TH_LOG("replay: SWNIC_FUZZ_SEED=%" PRIu64 " SWNIC_FUZZ_ITERS=%lu",
		       fz_seed(), iters);
}

TEST_HARNESS_MAIN
