// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues (fi_cq(3)).
 *
 * A CQ reads completions from sources, in this order:
 *  1. its error list (any error makes reads fail with -FI_EAVAIL until
 *     fi_cq_readerr takes it);
 *  2. its software ring: completions the provider makes itself and those
 *     an application appends through FI_SWNIC_CQ_OPS_1;
 *  3. (with the data path) the kernel's CQ ring of struct swnic_cqe
 *     (swnic_queue.h), read without a syscall; its fd joins the CQ's wait
 *     object (swnic_wait_add_fd) so FI_WAIT_FD stays one pollable fd.
 * Every source is converted to the generic struct swnic_cq_entry and
 * written out in the CQ's format.
 *
 * Locking: the data lock is real only when the domain's threading model
 * needs it (FI_THREAD_SAFE/FID/ENDPOINT); under FI_THREAD_DOMAIN and
 * FI_THREAD_COMPLETION the application serialises and no lock is taken.
 * fi_cq_signal may come from any thread: it only touches atomics and the
 * wait object.
 *
 * A read that would find nothing to do skips the data lock (a spinning
 * application's poll is mostly these): swnic_cq_quiet() looks, without
 * the lock, at the kernel ring's indices and at @stirred, which whatever
 * gives progress work outside the kernel ring sets - a completion or an
 * error the provider queued, SQ entries the kernel left for progress to
 * retry. A locked read clears it first and sets it again if it leaves
 * such work, so a concurrent setter is never lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ep.h"
#include "swnic.h"

#define SWNIC_CQ_DEF_SIZE	1024

/* One completion, whatever its source. */
struct swnic_cq_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
	/* A receive's sender as the kernel saw it (CQE), else 0. */
	uint32_t from_addr;
	uint16_t from_port;
};

struct swnic_cq_err {
	struct swnic_list node;
	struct fi_cq_err_entry entry;	/* err_data points to @err_data */
	fi_addr_t src;
	uint8_t err_data[];
};

struct swnic_cq {
	struct fid_cq cq_fid;
	struct swnic_domain *domain;
	enum fi_cq_format format;
	size_t entry_size;
	enum fi_cq_wait_cond wait_cond;
	struct swnic_wait wait;
	atomic_uint signal_gen;		/* fi_cq_signal calls */

	struct swnic_lock lock;		/* data lock: all below */
	struct swnic_cq_entry *ring;	/* software ring, @size entries */
	size_t size;			/* a power of two */
	size_t head, tail;		/* free-running */
	struct swnic_list errors;
	size_t nerrors;
	uint8_t *err_data;		/* readerr's buffer, until next read */
	atomic_uint binds;		/* endpoints/counters bound to it */
	bool discard;			/* a counters-only endpoint's: drop all */

	/* The kernel's CQ ring, made when the first endpoint is enabled. */
	int kfd;			/* -1 until then */
	uint32_t kid;
	struct swnic_uring kring;
	struct swnic_list eps;		/* bound endpoints (ep->cq_node[]) */
	/* busy polling: empty reads before the next (its device unbound) */
	unsigned int poll_skip;

	atomic_bool kready;		/* @kring mapped (release) */
	atomic_bool stirred;		/* see the top of this file */
};

static struct fi_ops swnic_cq_fi_ops;
static int swnic_cq_close(struct fid *fid);

static struct swnic_cq *swnic_cq_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_CQ || fid->ops != &swnic_cq_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_cq, cq_fid.fid);
}

#define swnic_cq(f) swnic_container_of(f, struct swnic_cq, cq_fid)

static size_t swnic_cq_format_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

/* Write @e in the CQ's format at @out. */
static void swnic_cq_format(const struct swnic_cq *cq,
			    const struct swnic_cq_entry *e, void *out)
{
	struct fi_cq_tagged_entry *t = out;

	/* The formats share their leading members in this order. */
	switch (cq->format) {
	case FI_CQ_FORMAT_TAGGED:
		t->tag = e->tag;
		/* fall through */
	case FI_CQ_FORMAT_DATA:
		t->buf = e->buf;
		t->data = e->data;
		/* fall through */
	case FI_CQ_FORMAT_MSG:
		t->flags = e->flags;
		t->len = e->len;
		/* fall through */
	default:
		t->op_context = e->op_context;
		break;
	}
}

static size_t swnic_cq_avail(const struct swnic_cq *cq)
{
	return cq->tail - cq->head;
}

/* Nothing left to read: clear the wait object (level semantics). */
static void swnic_cq_update_wait(struct swnic_cq *cq)
{
	if (!swnic_cq_avail(cq) && !cq->nerrors)
		swnic_wait_clear(&cq->wait);
}

/*
 * Progress, with the data lock held: move the kernel's completions into
 * this CQ (as long as it has room: the kernel ring keeps the rest), and
 * ring the doorbell of endpoints whose rings the kernel left entries in:
 * RM_ENABLED ones (a peer was out of resources), so they are retried,
 * ENGINE ones once slots of their CQ were freed, and in either mode
 * receives left behind buffered messages once slots of their CQ were
 * freed. The engine does not poll entries it could not complete (it
 * would spin): it waits for this doorbell to say their CQ has room again.
 *
 * Receives: the RQ is lazy, its receives otherwise wait for the next
 * sender with no doorbell; but a sender only takes them, it matches no
 * buffered message to them - that takes a doorbell, and the kernel asks
 * for one with the RQ's NEED_WAKEUP while such messages wait. A receive
 * still in the RQ then is one the doorbell left (no CQ room while it
 * took them, recv_rq.c: -EAGAIN), and nothing but this rings for it
 * again; without NEED_WAKEUP (a ping-pong) no syscall is added. A
 * member of a shared receive context posts none of its own: the SRX's
 * RQ holds them, the SRX is on no CQ's list, and its members complete
 * them on theirs - the SRX is rung, on the same condition, once for all
 * its members of this CQ.
 */
static bool swnic_cq_srx_rung(struct swnic_cq *cq, struct swnic_list *upto,
			      const struct swnic_srx *srx);

static void swnic_cq_progress(struct swnic_cq *cq)
{
	struct swnic_uring *r = &cq->kring;
	struct swnic_list *pos;
	struct swnic_cqe kc;
	bool freed = false;
	uint32_t tail;

	if (cq->kfd < 0)
		return;
	tail = atomic_load_explicit(r->tail, memory_order_acquire);
	while (r->local != tail && swnic_cq_avail(cq) + cq->nerrors < cq->size) {
		const uint8_t *slot = swnic_uring_slot(r, r->local);
		bool inl;

		memcpy(&kc, slot, sizeof(kc));
		/* A small message rode in the entry: put in place. */
		inl = (kc.flags & SWNIC_CQE_INLINE) &&
		      kc.len <= SWNIC_CQE_INLINE_MAX &&
		      r->entry_size >= sizeof(kc) + kc.len;
		swnic_cqe_complete(cq, &kc, inl ? slot + sizeof(kc) : NULL);
		r->local++;
		atomic_store_explicit(r->head, r->local, memory_order_release);
		freed = true;
	}
	swnic_list_for_each(pos, &cq->eps) {
		struct swnic_ep *ep = swnic_ep_of_cq_node(pos, cq);
		bool sq_left, rq_left, rq_waits;

		if (!ep->enabled)
			continue;
		sq_left = ep->sq_cq == cq &&
			  ep->sq.local != atomic_load(ep->sq.head);
		rq_left = ep->rq_cq == cq &&
			  ep->rq.local != atomic_load(ep->rq.head);
		rq_waits = rq_left &&
			   (atomic_load_explicit(ep->rq.flags,
						 memory_order_relaxed) &
			    SWNIC_RING_F_NEED_WAKEUP);
		/* A fenced SQE waits for completions like these. */
		if (((ep->rm_enabled || ep->fence_used) && sq_left) ||
		    (ep->engine && freed && (sq_left || rq_left)) ||
		    (freed && rq_waits))
			swnic_ep_doorbell(ep);
		/* ep->srx: cleared under this lock (swnic_cq_srx_leave()). */
		if (freed && ep->rq_cq == cq && ep->srx &&
		    !swnic_ep_is_srx(ep) && swnic_srx_rq_waits(ep->srx) &&
		    !swnic_cq_srx_rung(cq, pos, ep->srx))
			swnic_srx_doorbell(ep->srx);
		/* What the doorbell left keeps this CQ's reads coming here. */
		if (sq_left)
			swnic_ep_sq_retry(ep);
	}
}

/*
 * Did this progress look at @srx already, for a member ahead of @upto
 * (and ring it if it had to)?
 */
static bool swnic_cq_srx_rung(struct swnic_cq *cq, struct swnic_list *upto,
			      const struct swnic_srx *srx)
{
	struct swnic_list *pos;

	swnic_list_for_each(pos, &cq->eps) {
		struct swnic_ep *ep = swnic_ep_of_cq_node(pos, cq);

		if (pos == upto)
			break;
		if (ep->enabled && ep->rq_cq == cq && ep->srx == srx)
			return true;
	}
	return false;
}

/*
 * Busy polling, with the data lock held, when a read found nothing: have
 * the kernel take what the wire brought for the namespace of the CQ's
 * device in our context (SWNIC_DB_POLL), then move its completions.
 * Where the device is not bound to a netdev (no wire: one-host traffic
 * completes without a thread hop anyway), or the kernel cannot, it is
 * asked again only every SWNIC_CQ_POLL_SKIP empty reads.
 */
#define SWNIC_CQ_POLL_SKIP	4096

static void swnic_cq_busy_poll(struct swnic_cq *cq)
{
	struct swnic_ep_doorbell db = {
		.size = sizeof(db),
		.flags = SWNIC_DB_POLL,
	};
	struct swnic_list *pos;

	if (!swnic_params.busy_poll || cq->kfd < 0 ||
	    !(cq->domain->dev.attr.features & SWNIC_FEAT_WIRE_POLL))
		return;
	if (cq->poll_skip) {
		cq->poll_skip--;
		return;
	}
	/* Every endpoint of the CQ is of its domain: any one will do. */
	swnic_list_for_each(pos, &cq->eps) {
		struct swnic_ep *ep = swnic_ep_of_cq_node(pos, cq);

		if (!ep->enabled)
			continue;
		if (ioctl(ep->fd, SWNIC_IOCTL_EP_DOORBELL, &db) || !db.polled)
			cq->poll_skip = SWNIC_CQ_POLL_SKIP;
		else
			swnic_cq_progress(cq);
		return;
	}
}

/*
 * With the data lock held, when a read found nothing: if a peer on this
 * host is copying a large message into one of our receives and shares the
 * copy (SWNIC_RING_F_HELP), take chunks of it in our context - we would
 * only spin meanwhile - then move the completions it may have brought.
 */
static void swnic_cq_help(struct swnic_cq *cq)
{
	struct swnic_cq_help h = { .size = sizeof(h) };

	if (!swnic_params.copy_help || cq->kfd < 0 ||
	    !(cq->domain->dev.attr.features & SWNIC_FEAT_COPY_HELP) ||
	    !(atomic_load_explicit(cq->kring.flags, memory_order_relaxed) &
	      SWNIC_RING_F_HELP))
		return;
	if (!ioctl(cq->kfd, SWNIC_IOCTL_CQ_HELP, &h))
		swnic_cq_progress(cq);
}

/* Progress from outside the CQ (counters): takes the data lock. */
void swnic_cq_progress_all(struct swnic_cq *cq)
{
	swnic_lock_acquire(&cq->lock);
	swnic_cq_progress(cq);
	swnic_lock_release(&cq->lock);
}

/* Completions the kernel wrote that progress has not taken yet. */
static bool swnic_cq_kernel_pending(struct swnic_cq *cq)
{
	return cq->kfd >= 0 && cq->kring.local !=
	       atomic_load_explicit(cq->kring.tail, memory_order_acquire);
}

/*
 * For a thread that waits for what progress of @cq may bring (a counter's
 * fi_cntr_wait), after progress: the fd to sleep on, which the kernel makes
 * readable when it writes a completion to the ring; -1 if @cq has no
 * kernel ring; -FI_EAGAIN if progress cannot wait for the kernel - the
 * ring holds completions it had no room for, or an endpoint's SQ holds
 * entries that only progress retries (swnic_ep_sq_waits()).
 */
int swnic_cq_wait_fd(struct swnic_cq *cq)
{
	struct swnic_list *pos;
	int fd = cq->kfd;

	if (fd < 0)
		return -1;
	swnic_lock_acquire(&cq->lock);
	if (swnic_cq_kernel_pending(cq))
		fd = -FI_EAGAIN;
	swnic_list_for_each(pos, &cq->eps) {
		struct swnic_ep *ep = swnic_ep_of_cq_node(pos, cq);

		if (ep->enabled && ep->sq_cq == cq && swnic_ep_sq_waits(ep))
			fd = -FI_EAGAIN;
	}
	swnic_lock_release(&cq->lock);
	return fd;
}

/* Progress has work outside the kernel ring: see the top of this file. */
void swnic_cq_stir(struct swnic_cq *cq)
{
	if (cq)
		atomic_store(&cq->stirred, true);
}

/*
 * Would a read find nothing and do nothing? Without the data lock: the
 * kernel ring's indices are atomics; a read that loses a race with a
 * producer reports nothing, as it would have an instant earlier.
 */
static bool swnic_cq_quiet(struct swnic_cq *cq)
{
	const struct swnic_uring *r = &cq->kring;

	if (atomic_load(&cq->stirred))
		return false;
	if (atomic_load_explicit(&cq->kready, memory_order_acquire)) {
		if (atomic_load_explicit(r->head, memory_order_relaxed) !=
		    atomic_load_explicit(r->tail, memory_order_acquire))
			return false;
		/* A copy to share, or the wire to poll: the locked path. */
		if (swnic_params.busy_poll ||
		    (atomic_load_explicit(r->flags, memory_order_relaxed) &
		     SWNIC_RING_F_HELP))
			return false;
	}
	return true;
}

/* fi_cq_readfrom, and into @from (if not NULL) swnic_cq_read_from()'s. */
static ssize_t swnic_cq_read_common(struct fid_cq *cq_fid, void *buf,
				    size_t count, fi_addr_t *src_addr,
				    struct sockaddr_in *from)
{
	struct swnic_cq *cq = swnic_cq(cq_fid);
	const struct swnic_cq_entry *e;
	size_t i, n;
	ssize_t ret;

	if (count && !buf)
		return -FI_EINVAL;
	if (swnic_cq_quiet(cq))
		return -FI_EAGAIN;
	swnic_lock_acquire(&cq->lock);
	/* Before looking: a setter meanwhile is seen by the next read. */
	atomic_store(&cq->stirred, false);
	swnic_cq_progress(cq);
	n = swnic_cq_avail(cq);
	if (!n && !cq->nerrors) {
		swnic_cq_help(cq);
		swnic_cq_busy_poll(cq);
		n = swnic_cq_avail(cq);
	}
	if (cq->nerrors) {
		ret = -FI_EAVAIL;
		goto out;
	}
	if (!n) {
		ret = -FI_EAGAIN;
		goto out;
	}
	if (n > count)
		n = count;
	for (i = 0; i < n; i++) {
		e = &cq->ring[(cq->head + i) & (cq->size - 1)];
		swnic_cq_format(cq, e, (char *)buf + i * cq->entry_size);
		if (src_addr)
			src_addr[i] = e->src;
		if (from) {
			memset(&from[i], 0, sizeof(from[i]));
			from[i].sin_family = AF_INET;
			from[i].sin_addr.s_addr = e->from_addr;
			from[i].sin_port = htons(e->from_port);
		}
	}
	cq->head += n;
	swnic_cq_update_wait(cq);
	ret = (ssize_t)n;
out:
	if (swnic_cq_avail(cq) || cq->nerrors)
		swnic_cq_stir(cq);
	swnic_lock_release(&cq->lock);
	return ret;
}

static ssize_t swnic_cq_readfrom(struct fid_cq *cq_fid, void *buf,
				 size_t count, fi_addr_t *src_addr)
{
	return swnic_cq_read_common(cq_fid, buf, count, src_addr, NULL);
}

static ssize_t swnic_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return swnic_cq_read_common(cq_fid, buf, count, NULL, NULL);
}

/**
 * swnic_cq_read_from() - fi_cq_read, with whom each message came from
 * @cq_fid: a CQ of this provider's
 * @buf: as fi_cq_read's
 * @count: as fi_cq_read's
 * @from: @count entries, out: for each completion read, a received
 *	message's sender as the kernel saw it, in the provider's own form
 *	(addr.c: an IPv4 address, or an IPv6 peer's name in the namespace
 *	of the CQ's device; the sending endpoint's port), all 0 but
 *	sin_family for other completions
 *
 * For the provider's own endpoints (the CM ports, cm.c): FI_SOURCE gives
 * an AV entry, which a sender it never heard of has none of.
 */
ssize_t swnic_cq_read_from(struct fid_cq *cq_fid, void *buf, size_t count,
			   struct sockaddr_in *from)
{
	return swnic_cq_read_common(cq_fid, buf, count, NULL, from);
}

static ssize_t swnic_cq_readerr(struct fid_cq *cq_fid,
				struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct swnic_cq *cq = swnic_cq(cq_fid);
	struct swnic_cq_err *err;
	ssize_t ret;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;

	swnic_lock_acquire(&cq->lock);
	swnic_cq_progress(cq);
	if (!cq->nerrors) {
		ret = -FI_EAGAIN;
		goto out;
	}
	err = swnic_list_entry(cq->errors.next, struct swnic_cq_err, node);
	buf->op_context = err->entry.op_context;
	buf->flags = err->entry.flags;
	buf->len = err->entry.len;
	buf->buf = err->entry.buf;
	buf->data = err->entry.data;
	buf->tag = err->entry.tag;
	buf->olen = err->entry.olen;
	buf->err = err->entry.err;
	buf->prov_errno = err->entry.prov_errno;
	swnic_err_data_out(cq->domain->api_version, err->err_data,
			   err->entry.err_data_size, &buf->err_data,
			   &buf->err_data_size, &cq->err_data);
	if (!(flags & FI_PEEK)) {
		swnic_list_del(&err->node);
		cq->nerrors--;
		free(err);
		swnic_cq_update_wait(cq);
	}
	ret = 1;
out:
	swnic_lock_release(&cq->lock);
	return ret;
}

/* Is there an error, or at least @threshold completions, to read? */
static bool swnic_cq_ready(struct swnic_cq *cq, size_t threshold)
{
	bool ready;

	swnic_lock_acquire(&cq->lock);
	swnic_cq_progress(cq);
	ready = cq->nerrors || swnic_cq_avail(cq) >= threshold;
	swnic_lock_release(&cq->lock);
	return ready;
}

/*
 * Wait up to @left ms (-1: no bound) for a CQ with a kernel ring. The
 * kernel's completions do not signal the wait object, so its ring's fd is
 * polled: with an fd wait object the object's own (which holds the ring's,
 * and which the provider's completions and fi_cq_signal make readable),
 * else the ring's, in slices of 10 ms (the provider's completions are
 * then seen at the next). Both stay readable while the CQ holds entries:
 * below the caller's threshold a turn sleeps a millisecond instead.
 *
 * With nothing to read, the object's fd must not stay readable: a signal
 * no read took (fi_cq_signal before this read began, @gen its count then)
 * would make every turn's poll return at once, a CPU busy until the
 * timeout. It is cleared; fi_cq_signal counts before it makes the fd
 * readable, so one sent during this read is either seen in @gen after
 * the clear or leaves the fd readable, and wakes the read either way.
 */
static void swnic_cq_poll_kernel(struct swnic_cq *cq, int left,
				 unsigned int gen)
{
	struct pollfd p = { .events = POLLIN };
	int slice = left < 0 || left > 10 ? 10 : left;
	bool ready;

	swnic_lock_acquire(&cq->lock);
	swnic_cq_progress(cq);
	ready = cq->nerrors || swnic_cq_avail(cq);
	if (!ready && cq->wait.type == FI_WAIT_FD)
		swnic_wait_drain(&cq->wait);
	swnic_lock_release(&cq->lock);
	if (ready) {
		poll(NULL, 0, 1);
		return;
	}
	if (atomic_load(&cq->signal_gen) != gen)
		return;
	p.fd = cq->wait.type == FI_WAIT_FD ? cq->wait.epfd : cq->kfd;
	poll(&p, 1, slice);
}

/*
 * Blocking read: returns completions once @threshold (FI_CQ_COND_THRESHOLD)
 * are there, or whatever there is when the timeout expires; -FI_EAGAIN if
 * nothing came, or if fi_cq_signal woke the thread up.
 */
static ssize_t swnic_cq_sreadfrom(struct fid_cq *cq_fid, void *buf,
				  size_t count, fi_addr_t *src_addr,
				  const void *cond, int timeout)
{
	struct swnic_cq *cq = swnic_cq(cq_fid);
	unsigned int gen = atomic_load(&cq->signal_gen);
	uint64_t start = swnic_now_ms();
	size_t threshold = 1;
	bool signalled;
	unsigned int seq;
	ssize_t ret;
	int left;

	if (cq->wait.type == FI_WAIT_NONE) {
		SWNIC_WARN(FI_LOG_CQ, "fi_cq_sread on a CQ without a wait object\n");
		return -FI_EINVAL;
	}
	/* fi_cq(3): "the cond field is interpreted as a size_t threshold". */
	if (cq->wait_cond == FI_CQ_COND_THRESHOLD)
		threshold = (size_t)(uintptr_t)cond;
	if (threshold > count)
		threshold = count;
	if (!threshold)
		threshold = 1;

	for (;;) {
		seq = swnic_wait_seq(&cq->wait);
		left = swnic_timeout_left(timeout, start);
		signalled = atomic_load(&cq->signal_gen) != gen;
		if (!left || signalled || swnic_cq_ready(cq, threshold)) {
			ret = swnic_cq_readfrom(cq_fid, buf, count, src_addr);
			if (ret != -FI_EAGAIN)
				return ret;
			if (!left || signalled) {
				/* Woken by fi_cq_signal, or out of time. */
				swnic_lock_acquire(&cq->lock);
				swnic_cq_update_wait(cq);
				swnic_lock_release(&cq->lock);
				return -FI_EAGAIN;
			}
		}
		if (cq->kfd >= 0) {
			swnic_cq_poll_kernel(cq, left, gen);
			continue;
		}
		ret = swnic_wait_wait(&cq->wait, seq, left);
		if (ret && ret != -FI_ETIMEDOUT)
			return ret;
	}
}

static ssize_t swnic_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			      const void *cond, int timeout)
{
	return swnic_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int swnic_cq_signal(struct fid_cq *cq_fid)
{
	struct swnic_cq *cq = swnic_cq(cq_fid);

	if (cq->wait.type == FI_WAIT_NONE)
		return -FI_ENOSYS;
	atomic_fetch_add(&cq->signal_gen, 1);
	swnic_wait_set(&cq->wait);
	return 0;
}

static const char *swnic_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				     const void *err_data, char *buf,
				     size_t len)
{
	return swnic_strerror(prov_errno, buf, len);
}

/* ---- producers ------------------------------------------------------------ */

/* Append a completion, lock held: -FI_EAGAIN when full (never overrun). */
static ssize_t swnic_cq_push_locked(struct swnic_cq *cq,
				    const struct swnic_cq_entry *e)
{
	if (cq->discard)
		return 0;
	if (swnic_cq_avail(cq) + cq->nerrors >= cq->size)
		return -FI_EAGAIN;
	cq->ring[cq->tail & (cq->size - 1)] = *e;
	cq->tail++;
	swnic_cq_stir(cq);
	swnic_wait_set(&cq->wait);
	return 0;
}

static ssize_t swnic_cq_push(struct swnic_cq *cq,
			     const struct swnic_cq_entry *e)
{
	ssize_t ret;

	swnic_lock_acquire(&cq->lock);
	ret = swnic_cq_push_locked(cq, e);
	swnic_lock_release(&cq->lock);
	return ret;
}

static ssize_t swnic_cq_push_err(struct swnic_cq *cq,
				 const struct fi_cq_err_entry *entry,
				 fi_addr_t src, bool locked)
{
	size_t n = entry->err_data ? entry->err_data_size : 0;
	struct swnic_cq_err *err;
	ssize_t ret = 0;

	if (cq->discard)
		return 0;	/* the counters counted it */
	if (n > cq->domain->dev.attr.max_err_data)
		n = cq->domain->dev.attr.max_err_data;
	err = calloc(1, sizeof(*err) + n);
	if (!err)
		return -FI_ENOMEM;
	err->entry = *entry;
	err->entry.err_data = n ? err->err_data : NULL;
	err->entry.err_data_size = n;
	if (n)
		memcpy(err->err_data, entry->err_data, n);
	err->src = src;

	if (!locked)
		swnic_lock_acquire(&cq->lock);
	if (swnic_cq_avail(cq) + cq->nerrors >= cq->size) {
		ret = -FI_EAGAIN;
	} else {
		swnic_list_add_tail(&cq->errors, &err->node);
		cq->nerrors++;
		swnic_cq_stir(cq);
		swnic_wait_set(&cq->wait);
	}
	if (!locked)
		swnic_lock_release(&cq->lock);
	if (ret)
		free(err);
	return ret;
}

/* ---- the data path's side (ep.h) --------------------------------------- */

/*
 * The CQ of an endpoint bound to counters only (fi_endpoint(3) allows it):
 * the kernel needs a CQ to complete into, and progress to free the
 * operations; what it completes is counted by the kernel and dropped here.
 * Reading the counters progresses it (swnic_cntr_add_cq).
 */
int swnic_cq_open_discard(struct swnic_domain *dom, size_t size,
			  struct swnic_cq **out)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT,
				   .size = size };
	struct fid_cq *cq_fid;
	int ret;

	ret = swnic_cq_open(&dom->domain_fid, &attr, &cq_fid, NULL);
	if (ret)
		return ret;
	*out = swnic_cq(cq_fid);
	(*out)->discard = true;
	return 0;
}

void swnic_cq_close_discard(struct swnic_cq *cq)
{
	swnic_cq_close(&cq->cq_fid.fid);
}

struct swnic_cq *swnic_cq_of(struct fid *fid)
{
	return swnic_cq_from_fid(fid);
}

struct swnic_domain *swnic_cq_domain(const struct swnic_cq *cq)
{
	return cq->domain;
}

/*
 * A poll set, or an SRX's answer on its way (swnic_srx_cq), holds @cq
 * (fi_close is -FI_EBUSY meanwhile).
 */
void swnic_cq_hold(struct swnic_cq *cq, int delta)
{
	if (delta > 0)
		atomic_fetch_add(&cq->binds, 1);
	else
		atomic_fetch_sub(&cq->binds, 1);
}

/* fi_poll: progressed, has @cq a completion or an error to read? */
bool swnic_cq_poll_ready(struct swnic_cq *cq)
{
	bool ready;

	swnic_lock_acquire(&cq->lock);
	swnic_cq_progress(cq);
	ready = swnic_cq_avail(cq) || cq->nerrors ||
		swnic_cq_kernel_pending(cq);
	swnic_lock_release(&cq->lock);
	return ready;
}

/* The kernel CQ behind @cq, made on first use. */
int swnic_cq_kernel_id(struct swnic_cq *cq, uint32_t *id)
{
	struct swnic_cq_create c = { .size = sizeof(c) };
	int err, ret = 0;

	swnic_lock_acquire(&cq->lock);
	if (cq->kfd >= 0)
		goto out;
	c.entries = (uint32_t)cq->size;
	/* Small receives complete without a page pin in the kernel. */
	c.flags = SWNIC_CQ_F_INLINE_DATA;
	err = ioctl(cq->domain->fd, SWNIC_IOCTL_CQ_CREATE, &c);
	if (err && errno == EOPNOTSUPP) {
		/* A kernel without it: every receive is placed by the kernel. */
		c.flags = 0;
		err = ioctl(cq->domain->fd, SWNIC_IOCTL_CQ_CREATE, &c);
	}
	if (err) {
		ret = -errno;
		SWNIC_WARN(FI_LOG_CQ, "kernel CQ: %s\n", strerror(errno));
		goto out;
	}
	ret = swnic_uring_map(&cq->kring, c.fd, &c.ring);
	if (!ret && (cq->wait.type == FI_WAIT_FD))
		ret = swnic_wait_add_fd(&cq->wait, c.fd);
	if (ret) {
		swnic_uring_unmap(&cq->kring);
		close(c.fd);
		goto out;
	}
	cq->kfd = c.fd;
	cq->kid = c.cq_id;
	atomic_store_explicit(&cq->kready, true, memory_order_release);
	/* A thread in fi_cq_sread() sleeps on the provider's wait: poll. */
	swnic_wait_kick(&cq->wait);
out:
	if (!ret)
		*id = cq->kid;
	swnic_lock_release(&cq->lock);
	return ret;
}

void swnic_cq_add_ep(struct swnic_cq *cq, struct swnic_ep *ep)
{
	int i = ep->tx_cq == cq ? 0 : 1;

	atomic_fetch_add(&cq->binds, 1);
	swnic_lock_acquire(&cq->lock);
	swnic_list_add_tail(&cq->eps, &ep->cq_node[i]);
	swnic_lock_release(&cq->lock);
}

/*
 * @ep closes: a thread reading @cq meanwhile (FI_THREAD_SAFE) must not take
 * a completion of it for live, nor use it once it is freed.
 */
void swnic_cq_retire_ep(struct swnic_cq *cq, struct swnic_ep *ep)
{
	swnic_lock_acquire(&cq->lock);
	swnic_op_pool_retire(&ep->tx_pool);
	swnic_op_pool_retire(&ep->rx_pool);
	swnic_lock_release(&cq->lock);
}

void swnic_cq_del_ep(struct swnic_cq *cq, struct swnic_ep *ep)
{
	int i = ep->tx_cq == cq ? 0 : 1;

	swnic_lock_acquire(&cq->lock);
	swnic_list_del(&ep->cq_node[i]);
	swnic_lock_release(&cq->lock);
	atomic_fetch_sub(&cq->binds, 1);
}

/*
 * Does a receive of @srx that did not ask for a completion (FI_COMPLETION)
 * report one on @cq, where it completed? Not if the SRX's endpoints that
 * complete receives there all bound it FI_RECV | FI_SELECTIVE_COMPLETION
 * (fi_cq(3)); the kernel does not say at which of them the message
 * arrived. With @cq's lock held (its list of endpoints).
 */
bool swnic_cq_srx_reports(struct swnic_cq *cq, const struct swnic_srx *srx)
{
	struct swnic_list *pos;
	bool seen = false;

	swnic_list_for_each(pos, &cq->eps) {
		struct swnic_ep *ep = swnic_ep_of_cq_node(pos, cq);
		/* Where the kernel completes its receives (swnic_ep_enable). */
		struct swnic_cq *rcq = ep->rx_cq ? ep->rx_cq : ep->tx_cq;

		/* A member bound here to transmit only receives elsewhere. */
		if (ep->srx != srx || swnic_ep_is_srx(ep) || rcq != cq)
			continue;
		if (!ep->rx_cq || !ep->rx_selective)
			return true;
		seen = true;
	}
	/* Its endpoints closed since: reported, as it was posted. */
	return !seen;
}

/*
 * @ep leaves its SRX (swnic_srx_unbind()): from now on no progress of
 * @cq, the CQ its receives complete on (NULL: never enabled), rings the
 * SRX through it, which may close once @ep has left.
 */
void swnic_cq_srx_leave(struct swnic_cq *cq, struct swnic_ep *ep)
{
	if (!cq) {
		ep->srx = NULL;
		return;
	}
	swnic_lock_acquire(&cq->lock);
	ep->srx = NULL;
	swnic_lock_release(&cq->lock);
}

/* From a posting path (lock not held): a completion, or an error one. */
int swnic_cq_write(struct swnic_cq *cq, void *context, uint64_t flags,
		   size_t len, uint64_t data, uint64_t tag, int err)
{
	int ret;

	swnic_lock_acquire(&cq->lock);
	ret = swnic_cq_write_locked(cq, context, flags, len, data, tag, err);
	swnic_lock_release(&cq->lock);
	return ret;
}

/* swnic_cq_write() with @cq's lock held (swnic_cq_lock_room()). */
int swnic_cq_write_locked(struct swnic_cq *cq, void *context, uint64_t flags,
			  size_t len, uint64_t data, uint64_t tag, int err)
{
	if (err)
		return swnic_cq_report_err(cq, context, flags, len, NULL, data,
					   tag, 0, err, err);
	return swnic_cq_report(cq, context, flags, len, NULL, data, tag,
			       FI_ADDR_NOTAVAIL, NULL);
}

/*
 * Lock @cq if it has room for one more completion: 0, and the caller
 * writes it (swnic_cq_write_locked()) and unlocks (swnic_cq_unlock());
 * else -FI_EAGAIN, unlocked. For what must not happen unless its
 * completion can be written: a peek that claims or discards a message.
 */
int swnic_cq_lock_room(struct swnic_cq *cq)
{
	swnic_lock_acquire(&cq->lock);
	if (!cq->discard && swnic_cq_avail(cq) + cq->nerrors >= cq->size) {
		swnic_lock_release(&cq->lock);
		return -FI_EAGAIN;
	}
	return 0;
}

void swnic_cq_unlock(struct swnic_cq *cq)
{
	swnic_lock_release(&cq->lock);
}

/*
 * From progress (lock held): a successful completion; @from: a receive's
 * sender as the kernel saw it (swnic_cq_read_from()), or NULL.
 */
int swnic_cq_report(struct swnic_cq *cq, void *context, uint64_t flags,
		    size_t len, void *buf, uint64_t data, uint64_t tag,
		    fi_addr_t src, const struct sockaddr_in *from)
{
	struct swnic_cq_entry e = {
		.op_context = context, .flags = flags, .len = len, .buf = buf,
		.data = data, .tag = tag, .src = src,
	};

	if (from) {
		e.from_addr = from->sin_addr.s_addr;
		e.from_port = ntohs(from->sin_port);
	}

	return (int)swnic_cq_push_locked(cq, &e);
}

/* From progress (lock held): an error completion. */
int swnic_cq_report_err(struct swnic_cq *cq, void *context, uint64_t flags,
			size_t len, void *buf, uint64_t data, uint64_t tag,
			size_t olen, int err, int prov_errno)
{
	struct fi_cq_err_entry e = {
		.op_context = context, .flags = flags, .len = len, .buf = buf,
		.data = data, .tag = tag, .olen = olen, .err = err,
		.prov_errno = prov_errno,
	};

	return (int)swnic_cq_push_err(cq, &e, FI_ADDR_NOTAVAIL, true);
}

static ssize_t swnic_cq_ext_write(struct fid_cq *cq_fid,
				  const struct fi_cq_tagged_entry *entry,
				  fi_addr_t src_addr)
{
	struct swnic_cq *cq = swnic_cq_from_fid(cq_fid ? &cq_fid->fid : NULL);
	struct swnic_cq_entry e;

	if (!cq || !entry)
		return -FI_EINVAL;
	e.op_context = entry->op_context;
	e.flags = entry->flags;
	e.len = entry->len;
	e.buf = entry->buf;
	e.data = entry->data;
	e.tag = entry->tag;
	e.src = src_addr;
	e.from_addr = 0;
	e.from_port = 0;
	return swnic_cq_push(cq, &e);
}

static ssize_t swnic_cq_ext_writeerr(struct fid_cq *cq_fid,
				     const struct fi_cq_err_entry *entry,
				     fi_addr_t src_addr)
{
	struct swnic_cq *cq = swnic_cq_from_fid(cq_fid ? &cq_fid->fid : NULL);

	if (!cq || !entry || entry->err <= 0)
		return -FI_EINVAL;
	return swnic_cq_push_err(cq, entry, src_addr, false);
}

static struct fi_swnic_ops_cq swnic_cq_ext_ops = {
	.size = sizeof(struct fi_swnic_ops_cq),
	.write = swnic_cq_ext_write,
	.writeerr = swnic_cq_ext_writeerr,
};

static int swnic_cq_ops_open(struct fid *fid, const char *name,
			     uint64_t flags, void **ops, void *context)
{
	if (!name || !ops)
		return -FI_EINVAL;
	if (strcmp(name, FI_SWNIC_CQ_OPS_1))
		return -FI_ENOSYS;
	if (flags)
		return -FI_EBADFLAGS;
	*ops = &swnic_cq_ext_ops;
	return 0;
}

/* ---- the fid ---------------------------------------------------------------- */

int swnic_cq_trywait(struct fid *fid)
{
	struct swnic_cq *cq = swnic_cq_from_fid(fid);
	int ret;

	if (!cq || cq->wait.type != FI_WAIT_FD)
		return -FI_EINVAL;
	swnic_lock_acquire(&cq->lock);
	swnic_cq_progress(cq);
	ret = swnic_cq_avail(cq) || cq->nerrors || swnic_cq_kernel_pending(cq) ?
	      -FI_EAGAIN : 0;
	if (!ret)
		swnic_wait_clear(&cq->wait);
	swnic_lock_release(&cq->lock);
	return ret;
}

static int swnic_cq_control(struct fid *fid, int command, void *arg)
{
	struct swnic_cq *cq = swnic_cq_from_fid(fid);

	return swnic_wait_control(&cq->wait, command, arg);
}

static int swnic_cq_close(struct fid *fid)
{
	struct swnic_cq *cq = swnic_cq_from_fid(fid);
	unsigned int binds = atomic_load(&cq->binds);
	struct swnic_list *pos, *tmp;

	if (binds) {
		SWNIC_WARN(FI_LOG_CQ, "CQ %p is still bound to %u object(s)\n",
			   (void *)fid, binds);
		return -FI_EBUSY;
	}
	/*
	 * Out of its wait set first: a thread in fi_wait checks (progresses)
	 * the set's members under the set's lock, so once it has left, none
	 * looks at its ring, fd or errors any more.
	 */
	swnic_wait_leave(&cq->wait);
	/* An SRX that completed to it must not lock it from now on. */
	swnic_srx_forget_cq(cq);
	swnic_list_for_each_safe(pos, tmp, &cq->errors)
		free(swnic_list_entry(pos, struct swnic_cq_err, node));
	if (cq->kfd >= 0) {
		swnic_uring_unmap(&cq->kring);
		close(cq->kfd);
		cq->kfd = -1;
	}
	swnic_wait_fini(&cq->wait);
	swnic_lock_destroy(&cq->lock);
	swnic_domain_child(cq->domain, SWNIC_CHILD_CQ, -1);
	free(cq->err_data);
	free(cq->ring);
	free(cq);
	return 0;
}

static struct fi_ops swnic_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_cq_close,
	.bind = swnic_no_bind,
	.control = swnic_cq_control,
	.ops_open = swnic_cq_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static struct fi_ops_cq swnic_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = swnic_cq_read,
	.readfrom = swnic_cq_readfrom,
	.readerr = swnic_cq_readerr,
	.sread = swnic_cq_sread,
	.sreadfrom = swnic_cq_sreadfrom,
	.signal = swnic_cq_signal,
	.strerror = swnic_cq_strerror,
};

static size_t swnic_pow2(size_t n)
{
	size_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

int swnic_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		  struct fid_cq **cq_fid, void *context)
{
	struct swnic_domain *dom =
		swnic_container_of(domain, struct swnic_domain, domain_fid);
	const struct swnic_query_device *q = &dom->dev.attr;
	struct swnic_cq *cq;
	size_t size;
	int ret;

	if (!attr || !cq_fid)
		return -FI_EINVAL;
	if (attr->flags & ~FI_AFFINITY) {
		SWNIC_WARN(FI_LOG_CQ, "CQ flags %#llx not supported\n",
			   (unsigned long long)attr->flags);
		return -FI_EBADFLAGS;
	}
	if (attr->format != FI_CQ_FORMAT_UNSPEC &&
	    !swnic_cq_format_size(attr->format)) {
		SWNIC_WARN(FI_LOG_CQ, "CQ format %d unknown\n", attr->format);
		return -FI_EINVAL;
	}
	if (attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD) {
		SWNIC_WARN(FI_LOG_CQ, "CQ wait_cond %d unknown\n",
			   attr->wait_cond);
		return -FI_EINVAL;
	}
	if (attr->size > q->max_cq_entries) {
		SWNIC_WARN(FI_LOG_CQ, "CQ size %zu > %u\n", attr->size,
			   q->max_cq_entries);
		return -FI_EINVAL;
	}
	ret = swnic_domain_reserve(dom, SWNIC_CHILD_CQ, q->max_cq, FI_LOG_CQ,
				   "cq_cnt", "CQs");
	if (ret)
		return ret;
	size = attr->size ? attr->size : SWNIC_CQ_DEF_SIZE;
	if (size > q->max_cq_entries)
		size = q->max_cq_entries;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		ret = -FI_ENOMEM;
		goto err_reserved;
	}
	cq->size = swnic_pow2(size);
	cq->ring = calloc(cq->size, sizeof(*cq->ring));
	if (!cq->ring) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	ret = swnic_wait_init_attr(&cq->wait, attr->wait_obj, attr->wait_set);
	if (ret)
		goto err_ring;
	cq->domain = dom;
	cq->format = attr->format ? attr->format : FI_CQ_FORMAT_CONTEXT;
	cq->entry_size = swnic_cq_format_size(cq->format);
	cq->wait_cond = attr->wait_cond;
	atomic_init(&cq->signal_gen, 0);
	atomic_init(&cq->binds, 0);
	swnic_lock_init(&cq->lock, dom->data_locks);
	swnic_list_init(&cq->errors);
	swnic_list_init(&cq->eps);
	cq->kfd = -1;
	atomic_init(&cq->kready, false);
	atomic_init(&cq->stirred, false);

	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &swnic_cq_fi_ops;
	cq->cq_fid.ops = &swnic_cq_ops;
	attr->format = cq->format;
	swnic_wait_member(&cq->wait, &cq->cq_fid.fid);
	*cq_fid = &cq->cq_fid;
	return 0;

err_ring:
	free(cq->ring);
err_free:
	free(cq);
err_reserved:
	swnic_domain_child(dom, SWNIC_CHILD_CQ, -1);
	return ret;
}
