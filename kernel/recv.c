// SPDX-License-Identifier: GPL-2.0
/*
 * The receive side of an endpoint: its receive queue and posted
 * receives, the matching of sends and tagged sends against them (tag and
 * ignore bits, directed receives, FI_PEEK/CLAIM/DISCARD), and the bounded
 * queue of unexpected messages. A transport hands every arriving message
 * to swnic_recv_deliver(); completions are written through complete.c.
 * This file takes what arrives; recv_rq.c, what the owner posts.
 *
 * An endpoint that joined a shared receive context (SWNIC_EP_F_SRX_JOIN)
 * has the context's receive side (swnic_ep_rx()): the context's RQ,
 * posted receives and unexpected messages, under the context's rx_lock,
 * hold what arrives at any of its members. A message still completes on
 * the CQ and counters of the endpoint it arrived at (fi_endpoint(3):
 * shared receive contexts have no CQ of their own); an unexpected one
 * remembers that endpoint, and leaves with it.
 *
 * rx_lock is taken by every sender to an endpoint, by its owner and by the
 * engine. Whoever holds it never sleeps on user memory, which the other
 * process controls (a userfaultfd can hold a fault back forever): copies
 * under it are SWNIC_COPY_NOFAULT, and one that would fault gives up the
 * lock, faults in and starts over (struct swnic_fault).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "recv_internal.h"

void swnic_fault_set_dst(struct swnic_fault *f, struct mm_struct *mm,
			 u64 dst, size_t len)
{
	f->mm = mm;
	f->dst = dst;
	f->dst_len = len;
}

/*
 * Fault in what @f names, with no lock held. The destination's mmap lock
 * (another process's) is only tried: its owner may keep it as long as it
 * likes - a thread of it stuck in its own FUSE server's read under the
 * lock (a read of /proc/PID/mem), another queued behind it to write - and
 * the caller (a sender, an engine, a wire round) must not wait
 * for that: -EAGAIN, and the caller tries again within its bound. So is
 * the source's, in a kernel thread that serves others too. Return: 0 or
 * -errno.
 */
int swnic_fault_in(const struct swnic_fault *f)
{
	int ret = 0;

	if (f->src_len)
		ret = swnic_fault_in_mm_nowait(current->mm,
					       (u64)(uintptr_t)f->src,
					       f->src_len, false);
	if (!ret && f->dst_len)
		ret = swnic_fault_in_mm_try(f->mm, f->dst, f->dst_len, true);
	return ret;
}

/*
 * An unexpected message of @len bytes: the payload after the header in one
 * slab object, or in an allocation of its own where two take less, and
 * always past the slab sizes (else vmalloc(): up to SWNIC_UNEXP_MAX_BYTES,
 * more than kmalloc() may give) - a power-of-two payload with its header
 * was rounded up to twice its size (a 64 KiB message took 128 KiB).
 * Charged to the active memory cgroup (the sender's, or for the wire the
 * target's), under the receiver's rx_lock (and in a wire round under its
 * namespace's wire): one that is at its limit is reclaimed from a little
 * (once for a slab object, a few times for a vmalloc()'s pages), and
 * never made to invoke its OOM killer - on the wire that killed the
 * receiver for messages it had not received yet. NULL: no room (the
 * caller's no room, swnic_recv_deliver()), as a socket drops what its
 * cgroup cannot take.
 */
#define SWNIC_UNEXP_GFP		(GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

/*
 * kvmalloc() as it was, but for the vmalloc() fallback's pages, which
 * take no __GFP_NORETRY: a few reclaim passes each, no OOM killer.
 * (kvmalloc() given __GFP_RETRY_MAYFAIL would also try its contiguous
 * block harder - compaction, under rx_lock - before the fallback.)
 */
static void *swnic_unexp_payload_alloc(u32 len)
{
	void *p = kmalloc(len, SWNIC_UNEXP_GFP | __GFP_NORETRY);

	if (!p && len > PAGE_SIZE)
		p = __vmalloc(len, SWNIC_UNEXP_GFP | __GFP_RETRY_MAYFAIL);
	return p;
}

static struct swnic_unexp *swnic_unexp_alloc(u32 len)
{
	size_t one = struct_size_t(struct swnic_unexp, inl, len);
	struct swnic_unexp *u;

	if (one <= KMALLOC_MAX_CACHE_SIZE &&
	    kmalloc_size_roundup(one) <=
	    kmalloc_size_roundup(sizeof(*u)) + kmalloc_size_roundup(len)) {
		u = kmalloc(one, SWNIC_UNEXP_GFP | __GFP_NORETRY);
		if (u)
			u->payload = u->inl;
		return u;
	}
	u = kmalloc(sizeof(*u), SWNIC_UNEXP_GFP | __GFP_NORETRY);
	if (!u)
		return NULL;
	u->payload = swnic_unexp_payload_alloc(len);
	if (!u->payload) {
		kfree(u);
		return NULL;
	}
	return u;
}

void swnic_unexp_free(struct swnic_unexp *u)
{
	if (u->payload != u->inl)
		kvfree(u->payload);
	kfree(u);
}

/* The module-wide gauges of buffered unexpected messages. */
void swnic_recv_unexp_account(long msgs, long bytes)
{
	swnic_obj_add(SWNIC_OBJ_UNEXP_MSGS, msgs);
	swnic_obj_add(SWNIC_OBJ_UNEXP_BYTES, bytes);
}

/* ---- matching ----------------------------------------------------------- */

/*
 * The RQ is lazy (SWNIC_RING_F_LAZY): a sender takes the receives posted
 * there before it matches, so posting a receive needs no doorbell - except
 * while unexpected messages wait, which only a doorbell matches against a
 * new receive. NEED_WAKEUP in the RQ's flags word says so; call this after
 * every change of the unexpected list.
 */
void swnic_recv_unexp_changed(struct swnic_ep *ep)
{
	lockdep_assert_held(&ep->rx_lock);
	if (list_empty(&ep->unexp))
		swnic_ring_set_flags(&ep->rq, 0, SWNIC_RING_F_NEED_WAKEUP);
	else
		swnic_ring_set_flags(&ep->rq, SWNIC_RING_F_NEED_WAKEUP, 0);
}

/*
 * A posted receive leaves (rx_lock held). The endpoint keeps one for the
 * next post: a ping-pong posts and completes one receive per message.
 */
void swnic_recv_free(struct swnic_ep *ep, struct swnic_recv *recv)
{
	lockdep_assert_held(&ep->rx_lock);
	ep->nrecvs--;
	if (recv->cntr)
		swnic_cntr_put(recv->cntr);
	if (!ep->recv_spare && !ep->dead)
		ep->recv_spare = recv;
	else
		kfree(recv);
}

/*
 * Under rx_lock, maybe in another user's task or a wire round (a lazy RQ
 * is taken by its senders): a cgroup at its limit fails it (the receive
 * completes with ENOMEM) rather than reclaim at length, or OOM-kill, there.
 */
struct swnic_recv *swnic_recv_alloc(struct swnic_ep *ep)
{
	struct swnic_recv *recv = ep->recv_spare;

	lockdep_assert_held(&ep->rx_lock);
	if (!recv)
		return kzalloc(sizeof(*recv), GFP_KERNEL_ACCOUNT |
			       __GFP_NORETRY | __GFP_NOWARN);
	ep->recv_spare = NULL;
	memset(recv, 0, sizeof(*recv));
	return recv;
}

/* The counter @recv's completions count in. */
struct swnic_cntr *swnic_recv_cntr(struct swnic_ep *ep,
				   const struct swnic_recv *recv)
{
	return recv->own_cntr ? recv->cntr : ep->cntr[SWNIC_EP_CNTR_RECV];
}

static bool swnic_recv_matches(const struct swnic_rqe *rqe, bool tagged,
			       u64 tag, __be32 src_addr, u16 src_port,
			       u16 key_index)
{
	if (tagged && ((rqe->tag ^ tag) & ~rqe->ignore))
		return false;
	if ((rqe->flags & SWNIC_RQE_KEY) && rqe->key_index != key_index)
		return false;
	if ((rqe->flags & SWNIC_RQE_DIRECTED) &&
	    (rqe->src_port != src_port ||
	     (rqe->src_addr && (__force __be32)rqe->src_addr != src_addr)))
		return false;
	return true;
}

static struct swnic_recv *swnic_recv_match(struct swnic_ep *ep,
					   bool tagged, u64 tag,
					   __be32 src_addr, u16 src_port,
					   u16 key_index)
{
	struct list_head *list = tagged ? &ep->trecvs : &ep->recvs;
	struct swnic_recv *recv;

	lockdep_assert_held(&ep->rx_lock);
	list_for_each_entry(recv, list, node)
		if (swnic_recv_matches(&recv->rqe, tagged, tag, src_addr,
				       src_port, key_index))
			return recv;
	return NULL;
}

struct swnic_unexp *swnic_recv_match_unexp(struct swnic_ep *ep,
					   const struct swnic_rqe *rqe)
{
	bool tagged = rqe->flags & SWNIC_RQE_TAGGED;
	bool claim = rqe->flags & SWNIC_RQE_CLAIM;
	struct swnic_unexp *u;

	lockdep_assert_held(&ep->rx_lock);
	list_for_each_entry(u, &ep->unexp, node) {
		/*
		 * Buffered before its endpoint was given its one peer
		 * (SWNIC_IOCTL_EP_PEER): another's stays unseen until the
		 * close, as if it had been refused.
		 */
		if (!swnic_ep_takes_from(u->ep, u->src_addr, u->src_port))
			continue;
		/* A claimed message goes only to the receive naming it. */
		if (u->claimed || claim) {
			if (u->claimed && claim && u->claim == rqe->tag)
				return u;
			continue;
		}
		if (u->tagged == tagged &&
		    swnic_recv_matches(rqe, tagged, u->tag, u->src_addr,
				       u->src_port, u->key_index))
			return u;
	}
	return NULL;
}

/* The completion of @len bytes of a message landing in @rqe at @off. */
void swnic_recv_cqe(struct swnic_cqe *cqe, const struct swnic_rqe *rqe,
		    u64 off, u64 msg_len, bool tagged, u64 tag,
		    bool has_data, u64 data, __be32 src_addr,
		    u16 src_port, u16 key_index)
{
	u64 room = rqe->len - off;

	memset(cqe, 0, sizeof(*cqe));
	cqe->context = rqe->context;
	cqe->buf = rqe->addr + off;
	cqe->len = min(msg_len, room);
	cqe->flags = SWNIC_CQE_RECV;
	if (tagged) {
		cqe->flags |= SWNIC_CQE_TAGGED;
		cqe->tag = tag;
	}
	if (has_data) {
		cqe->flags |= SWNIC_CQE_REMOTE_DATA;
		cqe->data = data;
	}
	cqe->src_addr = (__force u32)src_addr;
	cqe->src_port = src_port;
	cqe->key_index = key_index;
	if (msg_len > room) {
		cqe->flags |= SWNIC_CQE_ERROR;
		cqe->err = EMSGSIZE;
		cqe->olen = msg_len - room;
	}
}

/*
 * A multi-receive buffer is released once less than min_free is left: its
 * last completion carries SWNIC_CQE_MULTI_RECV. Return: true if released.
 */
static bool swnic_recv_consume(struct swnic_recv *recv, u64 n,
			       struct swnic_cqe *cqe)
{
	if (!(recv->rqe.flags & SWNIC_RQE_MULTI_RECV))
		return true;
	recv->used += n;
	if (recv->rqe.len - recv->used >= recv->rqe.min_free &&
	    recv->rqe.len > recv->used)
		return false;
	cqe->flags |= SWNIC_CQE_MULTI_RECV;
	return true;
}

/*
 * Copy @n bytes of a message to @off in @recv's buffer, under @dst's
 * rx_lock: into the pages of the MR the receive named (SWNIC_RQE_MR) if it
 * still covers them, else pinning the buffer in the receiver's memory for
 * the copy. Return: as swnic_copy_to_mm() with SWNIC_COPY_NOFAULT.
 */
static int swnic_recv_copy(struct swnic_ep *dst, struct swnic_recv *recv,
			   u64 off, const void __user *usrc, const void *kbuf,
			   const struct swnic_kmsg *kmsg, u64 n)
{
	u64 addr = recv->rqe.addr + off;
	struct swnic_copy_src src;
	struct swnic_mr_ref ref;
	int ret;

	if (kmsg)
		swnic_copy_src_init_kmsg(&src, kmsg);
	else
		swnic_copy_src_init(&src, usrc, kbuf, n);
	if (!(recv->rqe.flags & SWNIC_RQE_MR) ||
	    swnic_mr_ref_get_recv(dst->dom, recv->rqe.mr, addr, n, &ref)) {
		ret = swnic_copy_src_to_mm(dst->dom->mm, addr, &src, n,
					   SWNIC_COPY_NOFAULT);
		swnic_copy_src_end(&src);
		return ret;
	}
	/* A large one: shared with the receiver's poll, if it helps. */
	ret = usrc ? swnic_help_copy_in(dst->rx_cq, &ref, usrc, n) : -EAGAIN;
	if (ret == -EAGAIN) {
		if (usrc)
			pagefault_disable();
		ret = swnic_mr_ref_copy_src_in(&ref, &src, n);
		if (usrc)
			pagefault_enable();
	}
	swnic_copy_src_end(&src);
	swnic_mr_ref_put(&ref);
	/* A source page that was not there: fault it in, try again. */
	if (ret == -EFAULT && usrc)
		ret = -SWNIC_EFAULTIN;
	if (!ret)
		swnic_stat_inc(dst->dom->sdev, dst->dom, SWNIC_STAT_RECV_MR);
	return ret;
}

/*
 * swnic_recv_deliver() under @dst's rx_lock. @head holds the first bytes of
 * a user source (as many as a CQE takes). Return: as swnic_recv_deliver(),
 * or -SWNIC_EFAULTIN with @fault set (nothing changed) unless @hard.
 */
static int __swnic_recv_deliver(struct swnic_ep *dst,
				const struct swnic_msg_src *src,
				const struct swnic_sqe *sqe, const void *kbuf,
				const u8 *head, bool hard,
				struct swnic_fault *fault,
				struct swnic_fault *rq_fault)
{
	const void __user *usrc = kbuf || src->kmsg ? NULL :
				  u64_to_user_ptr(sqe->addr);
	bool tagged = sqe->opcode == SWNIC_OP_TSEND;
	bool has_data = sqe->flags & SWNIC_SQE_REMOTE_DATA;
	struct swnic_ep *rx = swnic_ep_rx(dst);
	struct swnic_recv *recv;
	struct swnic_unexp *u;
	struct swnic_cqe cqe;
	u16 key_index;
	int ret = 0;

	lockdep_assert_held(&rx->rx_lock);
	if (dst->dead || rx->dead)
		return -ECONNREFUSED;
	/* A connected endpoint's peer only (SWNIC_IOCTL_EP_PEER). */
	if (!swnic_ep_takes_from(dst, src->addr, src->port))
		return -ECONNREFUSED;
	/* The key it came with (the transport checked @dst holds it). */
	key_index = swnic_ep_key_index(dst, src->auth_key);
	/* Receives posted without a doorbell (a broken RQ is its owner's). */
	swnic_recv_sender_rq(rx, rq_fault);

	recv = swnic_recv_match(rx, tagged, sqe->tag, src->addr, src->port,
				key_index);
	if (recv) {
		u64 off = recv->used;
		u64 n = min(sqe->len, recv->rqe.len - off);
		bool inl = n && n <= SWNIC_CQE_INLINE_MAX &&
			   dst->rx_cq->inline_data;
		u8 data[SWNIC_CQE_INLINE_MAX];
		bool done;

		if (!swnic_cq_reserve(dst->rx_cq))
			return -EAGAIN;
		swnic_recv_cqe(&cqe, &recv->rqe, off, sqe->len, tagged,
			       sqe->tag, has_data, sqe->data, src->addr,
			       src->port, key_index);
		if (inl) {
			/* Small: in the CQE; the receiver's provider places it. */
			memcpy(data, kbuf ?: head, n);
			cqe.flags |= SWNIC_CQE_INLINE;
		} else {
			ret = swnic_recv_copy(dst, recv, off, usrc, kbuf,
					      src->kmsg, n);
		}
		if (ret == -SWNIC_EFAULTIN && !hard) {
			swnic_cq_unreserve(dst->rx_cq);
			if (usrc) {
				fault->src = usrc;
				fault->src_len = n;
			}
			swnic_fault_set_dst(fault, dst->dom->mm,
					    recv->rqe.addr + off, n);
			return ret;
		}
		if (ret == -SWNIC_EFAULTIN)
			ret = -EFAULT;
		if (ret == -ESRCH) {
			/*
			 * The receiver's process has exited (its files are
			 * not closed yet): the endpoint is gone for good.
			 */
			swnic_cq_unreserve(dst->rx_cq);
			dst->dead = true;
			return -ECONNREFUSED;
		}
		if (ret) {
			cqe.flags |= SWNIC_CQE_ERROR;
			cqe.err = -ret;
			cqe.len = 0;
		}
		done = ret || swnic_recv_consume(recv, n, &cqe);
		/* A multi-receive an error frees says so, as at cancel. */
		if (ret && (recv->rqe.flags & SWNIC_RQE_MULTI_RECV))
			cqe.flags |= SWNIC_CQE_MULTI_RECV;
		if (done)
			list_del(&recv->node);
		swnic_complete_recv_to(dst, &cqe,
				       cqe.flags & SWNIC_CQE_INLINE ? data : NULL,
				       cqe.flags & SWNIC_CQE_INLINE ? n : 0,
				       true, swnic_recv_cntr(dst, recv));
		if (done)
			swnic_recv_free(rx, recv);
		dst->rx_ops++;
		dst->rx_bytes += n;
		return ret;
	}

	if (rx->unexp_msgs >= SWNIC_UNEXP_MAX_MSGS ||
	    sqe->len > SWNIC_UNEXP_MAX_BYTES - rx->unexp_bytes)
		return -EAGAIN;
	/* Charged to the sender's memory cgroup: it made the copy happen. */
	u = swnic_unexp_alloc(sqe->len);
	if (!u)
		return -ENOMEM;	/* no room: swnic_recv_deliver() */
	if (kbuf)
		memcpy(u->payload, kbuf, sqe->len);
	else if (src->kmsg)
		ret = src->kmsg->read(src->kmsg, 0, u->payload, sqe->len);
	else
		ret = copy_from_user_nofault(u->payload, usrc, sqe->len) ?
		      -SWNIC_EFAULTIN : 0;
	if (ret) {
		swnic_unexp_free(u);
		if (!hard && usrc) {
			fault->src = usrc;
			fault->src_len = sqe->len;
			return ret;
		}
		return -EFAULT;
	}
	u->tagged = tagged;
	u->claimed = false;
	u->tag = sqe->tag;
	u->has_data = has_data;
	u->data = sqe->data;
	u->src_addr = src->addr;
	u->src_port = src->port;
	u->key_index = key_index;
	u->len = sqe->len;
	u->ep = dst;
	u->notify = (struct swnic_deferred) {};
	if (src->ep)
		swnic_deferred_init(&u->notify, src->ep, sqe);
	else if (src->notify && (sqe->flags & SWNIC_SQE_DELIVERY))
		u->notify = (struct swnic_deferred) {
			.fn = src->notify,
			.arg = src->notify_arg,
		};
	if (u->notify.cq || u->notify.fn)
		ret = SWNIC_DELIVER_DEFERRED;
	list_add_tail(&u->node, &rx->unexp);
	rx->unexp_msgs++;
	rx->unexp_bytes += u->len;
	swnic_recv_unexp_account(1, u->len);
	swnic_recv_unexp_changed(rx);
	/*
	 * A receive published after our look at the RQ, by a poster that saw
	 * no NEED_WAKEUP, is taken now (flag store before the tail load; pairs
	 * with the poster's full barrier between its tail store and flag load).
	 */
	smp_mb();
	swnic_recv_sender_rq(rx, rq_fault);
	return ret;
}

/**
 * swnic_recv_deliver() - deliver a send or tagged send into @dst
 * @dst: the target endpoint
 * @src: the sender: its address, and its endpoint if on this host
 * @sqe: the validated work request
 * @kbuf: the payload if inline, else NULL (it is at sqe->addr in the
 *	  current address space, or in @src->kmsg)
 *
 * Called in the sender's context. One copy: from the sender's memory to
 * the posted receive buffer, or into a bounded kernel buffer if no receive
 * matches yet. Pages of either side that are not there are faulted in
 * with @dst's rx_lock dropped.
 *
 * Return: 0, SWNIC_DELIVER_DEFERRED (a SWNIC_SQE_DELIVERY send was
 * buffered: its completion, in the slot the caller reserved on @src's
 * transmit CQ, is posted when a receive takes it), or the sender's error:
 * -ECONNREFUSED (endpoint closed, or its process exited), -EAGAIN (the
 * target's CQ or unexpected buffer is full, or the memory cgroup charged
 * for the buffer: retry later), -EFAULT, -EINTR (the sender was killed
 * while waiting). In a wire round (@src->round) a full cgroup is -ENOMEM:
 * no room too, but every try reclaims in it (swnic_unexp_alloc()), so the
 * wire tries again less often.
 */
int swnic_recv_deliver(struct swnic_ep *dst, const struct swnic_msg_src *src,
		       const struct swnic_sqe *sqe, const void *kbuf)
{
	struct swnic_ep *rx = swnic_ep_rx(dst);
	const void __user *usrc = u64_to_user_ptr(sqe->addr);
	size_t hlen = min_t(u64, sqe->len, SWNIC_CQE_INLINE_MAX);
	struct swnic_fault_retry retry = {};
	u8 head[SWNIC_CQE_INLINE_MAX];
	bool hard = false;
	int ret;

	for (;;) {
		struct swnic_fault fault = {}, rq_fault = {};

		/* What a CQE can carry is read first, with no lock held. */
		if (src->kmsg)
			ret = src->kmsg->read(src->kmsg, 0, head, hlen) ?
			      -EFAULT : 0;
		else
			ret = !kbuf && copy_from_user_nofault(head, usrc,
							      hlen) ?
			      -SWNIC_EFAULTIN : 0;
		if (ret == -EFAULT)
			return ret;
		if (ret && hard)
			return -EFAULT;
		if (ret) {
			fault.src = usrc;
			fault.src_len = hlen;
		} else {
			if (mutex_lock_killable(&rx->rx_lock))
				return -EINTR;
			ret = __swnic_recv_deliver(dst, src, sqe, kbuf, head,
						   hard, &fault, &rq_fault);
			mutex_unlock(&rx->rx_lock);
			/*
			 * The receiver's RQ stopped at a receive to fault in
			 * (a buffered message for it): finish it here, or in
			 * a worker if the wire waits for us.
			 */
			if (rq_fault.dst_len && src->round)
				swnic_recv_rq_defer(rx);
			else if (rq_fault.dst_len)
				swnic_recv_process_rq_faulting(rx, &rq_fault, true);
			if (ret == -ENOMEM && !src->round)
				return -EAGAIN;
			if (ret != -SWNIC_EFAULTIN)
				return ret;
		}
		ret = swnic_fault_in(&fault);
		if (ret == -EINTR)
			return ret;
		/*
		 * A round faults in once, never waiting for the receiver's
		 * mmap lock: its other threads may hold it as long as they
		 * like, and the namespace's wire would wait with us.
		 */
		if (src->round && (ret == -EAGAIN || (!ret && retry.tries))) {
			if (!src->last_try)
				return -SWNIC_EFAULTLATER;
			ret = -EFAULT;	/* one more try, then the fault */
		}
		/*
		 * Killed while the receiver's memory is out of reach: the
		 * send ends, the receive stays posted. Waiting on, it would
		 * keep a dying sender for SWNIC_FAULT_TIMEOUT per message.
		 */
		if (fatal_signal_pending(current))
			return -EINTR;
		/*
		 * Unmapped, or out of reach (a page, or its mmap lock:
		 * -EAGAIN) for too long: the fault.
		 */
		hard = (ret && ret != -EAGAIN) || !swnic_fault_retry(&retry);
	}
}
