// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints: the device's port table, the endpoint file (mmap of its SQ
 * and RQ, the doorbell), and the receive side - posted receives, matching
 * of sends and tagged sends against them, unexpected messages.
 *
 * rx_lock is taken by every sender to an endpoint, by its owner and by the
 * engine. Whoever holds it never sleeps on user memory, which the other
 * process controls (a userfaultfd can hold a fault back forever): copies
 * under it are SWNIC_COPY_NOFAULT, and one that would fault gives up the
 * lock, faults in and starts over (struct swnic_fault).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <net/ip.h>

#include "bind.h"
#include "chardev.h"
#include "cntr.h"
#include "copy.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "engine.h"
#include "ep.h"
#include "netlink.h"
#include "stats.h"

/*
 * Attempts at a transfer whose pages keep going away between the fault-in
 * and the copy under rx_lock; then a page that is not there is a fault.
 */
#define SWNIC_FAULT_TRIES	4

/* What a NOFAULT copy under rx_lock needs faulted in before a retry. */
struct swnic_fault {
	const void __user *src;		/* in the current address space */
	size_t src_len;
	struct mm_struct *mm;		/* the destination's */
	u64 dst;
	size_t dst_len;
};

static void swnic_fault_set_dst(struct swnic_fault *f, struct mm_struct *mm,
				u64 dst, size_t len)
{
	f->mm = mm;
	f->dst = dst;
	f->dst_len = len;
}

/* Fault in what @f names, with no lock held. Return: 0 or -errno. */
static int swnic_fault_in(const struct swnic_fault *f)
{
	int ret = 0;

	if (f->src_len)
		ret = swnic_fault_in_mm(current->mm, (u64)(uintptr_t)f->src,
					f->src_len, false);
	if (!ret && f->dst_len)
		ret = swnic_fault_in_mm(f->mm, f->dst, f->dst_len, true);
	return ret;
}

/* A posted receive: the validated copy of its RQE. */
struct swnic_recv {
	struct list_head node;
	struct swnic_rqe rqe;
	u64 used;			/* MULTI_RECV: bytes filled so far */
};

/* A message that arrived before a matching receive was posted. */
struct swnic_unexp {
	struct list_head node;
	bool tagged;
	bool has_data;
	bool claimed;			/* reserved by a peek: @claim names it */
	u64 claim;
	u64 tag;
	u64 data;
	__be32 src_addr;
	u16 src_port;
	u32 len;
	/* SWNIC_SQE_DELIVERY: the sender's completion, posted when taken */
	struct swnic_cq *notify_cq;	/* referenced, a slot reserved */
	struct swnic_cntr *notify_cntr;	/* the sender's, referenced, or NULL */
	u64 notify_context;
	u32 notify_flags;		/* SWNIC_CQE_SEND [| TAGGED] */
	bool notify_success;		/* post on success too (COMPLETION) */
	u8 payload[];
};

/*
 * Complete the delivery-complete send that buffered @u: @err 0 when a
 * receive took it (or FI_DISCARD dropped it), else why it never will be.
 */
static void swnic_unexp_notify(struct swnic_unexp *u, int err)
{
	struct swnic_cqe cqe = {
		.context = u->notify_context,
		.flags = u->notify_flags,
	};

	if (!u->notify_cq)
		return;
	if (err) {
		cqe.flags |= SWNIC_CQE_ERROR;
		cqe.err = err;
	} else {
		cqe.len = u->len;
	}
	if (err || u->notify_success)
		swnic_cq_post(u->notify_cq, &cqe, true);
	else
		swnic_cq_unreserve(u->notify_cq);
	swnic_cq_put(u->notify_cq);
	u->notify_cq = NULL;
	if (u->notify_cntr) {
		swnic_cntr_inc(u->notify_cntr, err);
		swnic_cntr_put(u->notify_cntr);
		u->notify_cntr = NULL;
	}
}

/**
 * swnic_ep_rx_post() - post a receive completion of @ep and count it
 * @ep: the endpoint (its rx_lock held)
 * @cqe: the completion
 * @reserved: a slot was reserved (swnic_cq_reserve)
 *
 * Return: 0, or -EAGAIN if unreserved and the CQ is full (not counted).
 */
int swnic_ep_rx_post(struct swnic_ep *ep, const struct swnic_cqe *cqe,
		     bool reserved)
{
	return swnic_ep_rx_post_inline(ep, cqe, NULL, 0, reserved);
}

/* The same, with @len bytes of @data in the entry (SWNIC_CQE_INLINE). */
int swnic_ep_rx_post_inline(struct swnic_ep *ep, const struct swnic_cqe *cqe,
			    const void *data, u32 len, bool reserved)
{
	int ret = swnic_cq_post_inline(ep->rx_cq, cqe, data, len, reserved);

	if (!ret)
		swnic_cntr_inc(ep->cntr[SWNIC_EP_CNTR_RECV],
			       cqe->flags & SWNIC_CQE_ERROR);
	return ret;
}

static void swnic_ep_put_cntrs(struct swnic_ep *ep)
{
	for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++)
		if (ep->cntr[i])
			swnic_cntr_put(ep->cntr[i]);
}

static void swnic_ep_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct swnic_ep, rcu));
}

static void swnic_ep_release(struct kref *ref)
{
	struct swnic_ep *ep = container_of(ref, struct swnic_ep, ref);

	swnic_ring_free(&ep->sq);
	swnic_ring_free(&ep->rq);
	bitmap_free(ep->sq_cancelled);
	swnic_cq_put(ep->tx_cq);
	swnic_cq_put(ep->rx_cq);
	swnic_ep_put_cntrs(ep);
	swnic_domain_put(ep->dom);
	mutex_destroy(&ep->sq_lock);
	mutex_destroy(&ep->rx_lock);
	call_rcu(&ep->rcu, swnic_ep_free_rcu);
	swnic_obj_dec(SWNIC_OBJ_ENDPOINTS);
}

void swnic_ep_put(struct swnic_ep *ep)
{
	kref_put(&ep->ref, swnic_ep_release);
}

bool swnic_addr_is_local(__be32 addr)
{
	return !addr || ipv4_is_loopback(addr);
}

/**
 * swnic_ep_lookup() - find the endpoint at @addr:@port of a device
 * @sdev: the device: ports are its own, as are its endpoints' peers
 * @addr: IPv4 address (network order); only this host's are reachable yet
 * @port: the endpoint's port
 *
 * Return: the endpoint with a reference held, or NULL.
 */
struct swnic_ep *swnic_ep_lookup(struct swnic_device *sdev, __be32 addr,
				 u16 port)
{
	struct swnic_ep *ep;

	if (!swnic_addr_is_local(addr))
		return NULL;
	rcu_read_lock();
	ep = xa_load(&sdev->ports, port);
	if (ep && !kref_get_unless_zero(&ep->ref))
		ep = NULL;
	rcu_read_unlock();
	return ep;
}

/* The module-wide gauges of buffered unexpected messages. */
static void swnic_ep_unexp_account(long msgs, long bytes)
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
static void swnic_ep_unexp_changed(struct swnic_ep *ep)
{
	lockdep_assert_held(&ep->rx_lock);
	if (list_empty(&ep->unexp))
		swnic_ring_set_flags(&ep->rq, 0, SWNIC_RING_F_NEED_WAKEUP);
	else
		swnic_ring_set_flags(&ep->rq, SWNIC_RING_F_NEED_WAKEUP, 0);
}

static int __swnic_ep_process_rq(struct swnic_ep *ep, bool hard,
				 struct swnic_fault *fault);

/* A posted receive leaves (rx_lock held). */
static void swnic_ep_recv_free(struct swnic_ep *ep, struct swnic_recv *recv)
{
	lockdep_assert_held(&ep->rx_lock);
	ep->nrecvs--;
	kfree(recv);
}

static bool swnic_recv_matches(const struct swnic_rqe *rqe, bool tagged,
			       u64 tag, __be32 src_addr, u16 src_port)
{
	if (tagged && ((rqe->tag ^ tag) & ~rqe->ignore))
		return false;
	if ((rqe->flags & SWNIC_RQE_DIRECTED) &&
	    (rqe->src_port != src_port ||
	     (rqe->src_addr && (__force __be32)rqe->src_addr != src_addr)))
		return false;
	return true;
}

static struct swnic_recv *swnic_ep_match_recv(struct swnic_ep *ep,
					      bool tagged, u64 tag,
					      __be32 src_addr, u16 src_port)
{
	struct list_head *list = tagged ? &ep->trecvs : &ep->recvs;
	struct swnic_recv *recv;

	lockdep_assert_held(&ep->rx_lock);
	list_for_each_entry(recv, list, node)
		if (swnic_recv_matches(&recv->rqe, tagged, tag, src_addr,
				       src_port))
			return recv;
	return NULL;
}

static struct swnic_unexp *swnic_ep_match_unexp(struct swnic_ep *ep,
						const struct swnic_rqe *rqe)
{
	bool tagged = rqe->flags & SWNIC_RQE_TAGGED;
	bool claim = rqe->flags & SWNIC_RQE_CLAIM;
	struct swnic_unexp *u;

	lockdep_assert_held(&ep->rx_lock);
	list_for_each_entry(u, &ep->unexp, node) {
		/* A claimed message goes only to the receive naming it. */
		if (u->claimed || claim) {
			if (u->claimed && claim && u->claim == rqe->tag)
				return u;
			continue;
		}
		if (u->tagged == tagged &&
		    swnic_recv_matches(rqe, tagged, u->tag, u->src_addr,
				       u->src_port))
			return u;
	}
	return NULL;
}

/* The completion of @len bytes of a message landing in @rqe at @off. */
static void swnic_recv_cqe(struct swnic_cqe *cqe, const struct swnic_rqe *rqe,
			   u64 off, u64 msg_len, bool tagged, u64 tag,
			   bool has_data, u64 data, __be32 src_addr,
			   u16 src_port)
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
 * swnic_ep_deliver() under @dst's rx_lock. @head holds the first bytes of
 * a user source (as many as a CQE takes). Return: as swnic_ep_deliver(),
 * or -SWNIC_EFAULTIN with @fault set (nothing changed) unless @hard.
 */
static int __swnic_ep_deliver(struct swnic_ep *dst, struct swnic_ep *src,
			      const struct swnic_sqe *sqe, const void *kbuf,
			      const u8 *head, bool hard,
			      struct swnic_fault *fault)
{
	const void __user *usrc = kbuf ? NULL : u64_to_user_ptr(sqe->addr);
	bool tagged = sqe->opcode == SWNIC_OP_TSEND;
	bool has_data = sqe->flags & SWNIC_SQE_REMOTE_DATA;
	struct swnic_recv *recv;
	struct swnic_unexp *u;
	struct swnic_cqe cqe;
	int ret = 0;

	lockdep_assert_held(&dst->rx_lock);
	if (dst->dead)
		return -ECONNREFUSED;
	/* Receives posted without a doorbell (a broken RQ is its owner's). */
	__swnic_ep_process_rq(dst, false, NULL);

	recv = swnic_ep_match_recv(dst, tagged, sqe->tag, src->addr, src->port);
	if (recv) {
		u64 off = recv->used;
		u64 n = min(sqe->len, recv->rqe.len - off);
		bool inl = n && n <= SWNIC_CQE_INLINE_MAX &&
			   dst->rx_cq->inline_data;
		u8 data[SWNIC_CQE_INLINE_MAX];

		if (!swnic_cq_reserve(dst->rx_cq))
			return -EAGAIN;
		swnic_recv_cqe(&cqe, &recv->rqe, off, sqe->len, tagged,
			       sqe->tag, has_data, sqe->data, src->addr,
			       src->port);
		if (inl) {
			/* Small: in the CQE; the receiver's provider places it. */
			memcpy(data, kbuf ?: head, n);
			cqe.flags |= SWNIC_CQE_INLINE;
		} else {
			ret = swnic_copy_to_mm(dst->dom->mm, recv->rqe.addr + off,
					       usrc, kbuf, n, SWNIC_COPY_NOFAULT);
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
		if (ret || swnic_recv_consume(recv, n, &cqe)) {
			list_del(&recv->node);
			swnic_ep_recv_free(dst, recv);
		}
		swnic_ep_rx_post_inline(dst, &cqe,
					cqe.flags & SWNIC_CQE_INLINE ? data : NULL,
					cqe.flags & SWNIC_CQE_INLINE ? n : 0,
					true);
		dst->rx_ops++;
		dst->rx_bytes += n;
		return ret;
	}

	if (dst->unexp_msgs >= SWNIC_UNEXP_MAX_MSGS ||
	    sqe->len > SWNIC_UNEXP_MAX_BYTES - dst->unexp_bytes)
		return -EAGAIN;
	/* Charged to the sender's memory cgroup: it made the copy happen. */
	u = kvmalloc(struct_size(u, payload, sqe->len), GFP_KERNEL_ACCOUNT);
	if (!u)
		return -ENOMEM;
	if (kbuf)
		memcpy(u->payload, kbuf, sqe->len);
	else
		ret = swnic_copy_from_user_nofault(u->payload, usrc, sqe->len);
	if (ret) {
		kvfree(u);
		if (!hard) {
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
	u->len = sqe->len;
	u->notify_cq = NULL;
	u->notify_cntr = NULL;
	if (sqe->flags & SWNIC_SQE_DELIVERY) {
		swnic_cq_get(src->tx_cq);
		u->notify_cq = src->tx_cq;
		u->notify_cntr = src->cntr[SWNIC_EP_CNTR_SEND];
		if (u->notify_cntr)
			swnic_cntr_get(u->notify_cntr);
		u->notify_context = sqe->context;
		u->notify_flags = SWNIC_CQE_SEND |
				  (tagged ? SWNIC_CQE_TAGGED : 0);
		u->notify_success = sqe->flags & SWNIC_SQE_COMPLETION;
		ret = SWNIC_DELIVER_DEFERRED;
	}
	list_add_tail(&u->node, &dst->unexp);
	dst->unexp_msgs++;
	dst->unexp_bytes += u->len;
	swnic_ep_unexp_account(1, u->len);
	swnic_ep_unexp_changed(dst);
	/*
	 * A receive published after our look at the RQ, by a poster that saw
	 * no NEED_WAKEUP, is taken now (flag store before the tail load; pairs
	 * with the poster's full barrier between its tail store and flag load).
	 */
	smp_mb();
	__swnic_ep_process_rq(dst, false, NULL);
	return ret;
}

/**
 * swnic_ep_deliver() - deliver a send or tagged send into @dst
 * @dst: the target endpoint
 * @src: the sending endpoint
 * @sqe: the validated work request
 * @kbuf: the payload if inline, else NULL (it is at sqe->addr in the
 *	  current address space)
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
 * target's CQ or unexpected buffer is full: retry later), -EFAULT,
 * -ENOMEM, -EINTR (the sender was killed while waiting).
 */
int swnic_ep_deliver(struct swnic_ep *dst, struct swnic_ep *src,
		     const struct swnic_sqe *sqe, const void *kbuf)
{
	const void __user *usrc = u64_to_user_ptr(sqe->addr);
	size_t hlen = min_t(u64, sqe->len, SWNIC_CQE_INLINE_MAX);
	u8 head[SWNIC_CQE_INLINE_MAX];
	bool hard = false;
	int tries, ret;

	for (tries = 1; ; tries++) {
		struct swnic_fault fault = {};

		/* What a CQE can carry is read first, with no lock held. */
		ret = kbuf ? 0 : swnic_copy_from_user_nofault(head, usrc, hlen);
		if (ret && hard)
			return -EFAULT;
		if (ret) {
			fault.src = usrc;
			fault.src_len = hlen;
		} else {
			if (mutex_lock_killable(&dst->rx_lock))
				return -EINTR;
			ret = __swnic_ep_deliver(dst, src, sqe, kbuf, head,
						 hard, &fault);
			mutex_unlock(&dst->rx_lock);
			if (ret != -SWNIC_EFAULTIN)
				return ret;
		}
		ret = swnic_fault_in(&fault);
		if (ret == -EINTR)
			return ret;
		/* Unmapped, or pages that keep going: report the fault. */
		hard = ret || tries >= SWNIC_FAULT_TRIES;
	}
}

/* ---- the receive queue -------------------------------------------------- */

#define SWNIC_RQE_FLAGS	(SWNIC_RQE_TAGGED | SWNIC_RQE_MULTI_RECV | \
			 SWNIC_RQE_DIRECTED | SWNIC_RQE_CLAIM)

static int swnic_rqe_check(const struct swnic_rqe *rqe)
{
	if (rqe->flags & ~SWNIC_RQE_FLAGS)
		return -EOPNOTSUPP;
	if (rqe->__pad[0] || rqe->__pad[1] || rqe->__pad[2])
		return -EINVAL;
	if ((rqe->flags & SWNIC_RQE_MULTI_RECV) &&
	    (rqe->flags & SWNIC_RQE_TAGGED))
		return -EINVAL;
	if ((rqe->flags & SWNIC_RQE_CLAIM) &&
	    (rqe->flags & (SWNIC_RQE_MULTI_RECV | SWNIC_RQE_DIRECTED) ||
	     !(rqe->flags & SWNIC_RQE_TAGGED)))
		return -EINVAL;
	if (rqe->len > SWNIC_MAX_MSG_SIZE ||
	    !access_ok(u64_to_user_ptr(rqe->addr), rqe->len))
		return -EINVAL;
	return 0;
}

/*
 * Complete an unexpected message into the receive just posted. Return: 0,
 * or -SWNIC_EFAULTIN with @fault set and nothing changed (unless @hard).
 */
static int swnic_ep_take_unexp(struct swnic_ep *ep, struct swnic_recv *recv,
			       struct swnic_unexp *u, struct swnic_cqe *cqe,
			       bool hard, struct swnic_fault *fault)
{
	u64 off = recv->used;
	u64 n = min_t(u64, u->len, recv->rqe.len - off);
	u64 dst = recv->rqe.addr + off;
	int ret = 0;

	swnic_recv_cqe(cqe, &recv->rqe, off, u->len, u->tagged, u->tag,
		       u->has_data, u->data, u->src_addr, u->src_port);
	/*
	 * The receiver's own context (its doorbell, or the engine on its mm),
	 * or a sender's that took the receive from the lazy RQ.
	 */
	if (current->mm == ep->dom->mm) {
		pagefault_disable();
		if (__copy_to_user_inatomic(u64_to_user_ptr(dst), u->payload,
					    n))
			ret = -SWNIC_EFAULTIN;
		pagefault_enable();
	} else {
		ret = swnic_copy_to_mm(ep->dom->mm, dst, NULL, u->payload, n,
				       SWNIC_COPY_NOFAULT);
	}
	if (ret == -SWNIC_EFAULTIN && !hard) {
		if (fault)
			swnic_fault_set_dst(fault, ep->dom->mm, dst, n);
		return ret;
	}
	if (ret == -SWNIC_EFAULTIN)
		ret = -EFAULT;
	if (ret) {
		cqe->flags |= SWNIC_CQE_ERROR;
		cqe->err = -ret;
		cqe->len = 0;
	}
	list_del(&u->node);
	ep->unexp_msgs--;
	ep->unexp_bytes -= u->len;
	swnic_ep_unexp_account(-1, -(long)u->len);
	ep->rx_ops++;
	ep->rx_bytes += n;
	swnic_unexp_notify(u, 0);
	kvfree(u);
	recv->used += n;
	swnic_ep_unexp_changed(ep);
	return 0;
}

/*
 * Post one receive: drain matching unexpected messages into it, then keep
 * it if it still has room. Return: -EAGAIN if the CQ has no room or the
 * endpoint holds as many receives as its RQ has entries, -SWNIC_EFAULTIN
 * if a page of the buffer must be faulted in first (the RQE stays in the
 * ring in both cases), else 0.
 */
static int swnic_ep_post_recv(struct swnic_ep *ep, const struct swnic_rqe *rqe,
			      bool hard, struct swnic_fault *fault)
{
	struct swnic_recv *recv;
	struct swnic_unexp *u;
	struct swnic_cqe cqe;
	int ret;

	/* Receives are bounded as the RQ is: one user cannot pile them up. */
	if (ep->nrecvs >= ep->rq.entries)
		return -EAGAIN;
	recv = kzalloc(sizeof(*recv), GFP_KERNEL_ACCOUNT);
	if (!recv)
		return -ENOMEM;
	recv->rqe = *rqe;
	ep->nrecvs++;

	while ((u = swnic_ep_match_unexp(ep, rqe))) {
		bool multi = rqe->flags & SWNIC_RQE_MULTI_RECV;

		if (!swnic_cq_reserve(ep->rx_cq)) {
			if (!recv->used) {
				swnic_ep_recv_free(ep, recv);
				return -EAGAIN;
			}
			/* Partly filled multi-recv: keep it posted. */
			break;
		}
		ret = swnic_ep_take_unexp(ep, recv, u, &cqe, hard, fault);
		if (ret) {
			swnic_cq_unreserve(ep->rx_cq);
			if (!recv->used) {
				swnic_ep_recv_free(ep, recv);
				return ret;
			}
			/* Partly filled: posted; the rest at the next try. */
			break;
		}
		if (!multi || cqe.err ||
		    recv->rqe.len - recv->used < recv->rqe.min_free ||
		    recv->rqe.len == recv->used) {
			if (multi)
				cqe.flags |= SWNIC_CQE_MULTI_RECV;
			swnic_ep_rx_post(ep, &cqe, true);
			swnic_ep_recv_free(ep, recv);
			return 0;
		}
		swnic_ep_rx_post(ep, &cqe, true);
	}
	/* A claimed message that is not there: the receive fails. */
	if (rqe->flags & SWNIC_RQE_CLAIM) {
		swnic_ep_recv_free(ep, recv);
		memset(&cqe, 0, sizeof(cqe));
		cqe.context = rqe->context;
		cqe.flags = SWNIC_CQE_RECV | SWNIC_CQE_TAGGED | SWNIC_CQE_ERROR;
		cqe.err = ENOMSG;
		return swnic_ep_rx_post(ep, &cqe, false);
	}
	list_add_tail(&recv->node, rqe->flags & SWNIC_RQE_TAGGED ?
		      &ep->trecvs : &ep->recvs);
	return 0;
}

/*
 * Consume the receive queue, in any context. A receive whose buffer must
 * be faulted in stops consumption: with @fault (the owner's context) the
 * caller faults it in and comes back; a sender's context leaves it to the
 * owner, whose doorbell the RQ asks for while messages wait.
 */
static int __swnic_ep_process_rq(struct swnic_ep *ep, bool hard,
				 struct swnic_fault *fault)
{
	struct swnic_rqe rqe;
	int avail, done = 0, ret;

	lockdep_assert_held(&ep->rx_lock);
	/* Closed: what is left in the RQ is never posted (nor freed). */
	if (ep->dead)
		return 0;
	avail = swnic_ring_avail(&ep->rq);
	if (avail < 0)
		return avail;
	while (done < avail) {
		swnic_ring_peek(&ep->rq, &rqe);
		ret = swnic_rqe_check(&rqe);
		if (!ret)
			ret = swnic_ep_post_recv(ep, &rqe, hard, fault);
		if (ret == -EAGAIN || ret == -SWNIC_EFAULTIN)
			break;
		if (ret) {
			struct swnic_cqe cqe = {
				.context = rqe.context,
				.flags = SWNIC_CQE_RECV | SWNIC_CQE_ERROR,
				.err = -ret,
			};

			if (swnic_ep_rx_post(ep, &cqe, false))
				break;
		}
		swnic_ring_consume(&ep->rq);
		done++;
	}
	return done;
}

/**
 * swnic_ep_process_rq() - consume the receive queue
 * @ep: the endpoint (its owner's doorbell, or the engine on its mm)
 *
 * Return: RQEs consumed, -EPIPE if the ring is broken, -EINTR if the
 * caller was killed while it waited.
 */
int swnic_ep_process_rq(struct swnic_ep *ep)
{
	bool hard = false;
	int tries, ret, done = 0;

	for (tries = 1; ; tries++) {
		struct swnic_fault fault = {};

		if (mutex_lock_killable(&ep->rx_lock))
			return -EINTR;
		ret = __swnic_ep_process_rq(ep, hard, &fault);
		mutex_unlock(&ep->rx_lock);
		if (ret < 0)
			return ret;
		done += ret;
		if (!fault.dst_len)
			return done;
		ret = swnic_fault_in(&fault);
		if (ret == -EINTR)
			return ret;
		hard = ret || tries >= SWNIC_FAULT_TRIES;
	}
}

/* Unpost the receive posted with @context and complete it as cancelled. */
static int swnic_ep_cancel(struct swnic_ep *ep, u64 context)
{
	struct list_head *lists[] = { &ep->recvs, &ep->trecvs };
	struct swnic_recv *recv = NULL, *r;
	struct swnic_cqe cqe = {};
	int i, ret;

	/* Receives still in the ring are posted first, so they are found. */
	ret = swnic_ep_process_rq(ep);
	if (ret < 0)
		return ret;

	if (mutex_lock_killable(&ep->rx_lock))
		return -EINTR;
	for (i = 0; i < ARRAY_SIZE(lists) && !recv; i++)
		list_for_each_entry(r, lists[i], node)
			if (r->rqe.context == context) {
				recv = r;
				break;
			}
	if (!recv) {
		ret = -ENOENT;
		goto out_unlock;
	}
	cqe.context = context;
	cqe.buf = recv->rqe.addr + recv->used;
	cqe.flags = SWNIC_CQE_RECV | SWNIC_CQE_ERROR;
	if (recv->rqe.flags & SWNIC_RQE_TAGGED)
		cqe.flags |= SWNIC_CQE_TAGGED;
	if (recv->rqe.flags & SWNIC_RQE_MULTI_RECV)
		cqe.flags |= SWNIC_CQE_MULTI_RECV;
	cqe.err = ECANCELED;
	ret = swnic_ep_rx_post(ep, &cqe, false);
	if (!ret) {
		list_del(&recv->node);
		swnic_ep_recv_free(ep, recv);
	}
out_unlock:
	mutex_unlock(&ep->rx_lock);
	return ret;
}

#define SWNIC_PEEK_FLAGS (SWNIC_PEEK_CLAIM | SWNIC_PEEK_DISCARD | \
			  SWNIC_PEEK_DIRECTED)

/* FI_PEEK on the unexpected tagged messages, claiming or discarding one. */
static int swnic_ep_peek(struct swnic_ep *ep, struct swnic_ep_peek *p)
{
	struct swnic_rqe rqe = {
		.flags = SWNIC_RQE_TAGGED,
		.tag = p->tag,
		.ignore = p->ignore,
	};
	struct swnic_unexp *u;
	int ret = 0;

	if (p->flags & ~SWNIC_PEEK_FLAGS)
		return -EOPNOTSUPP;
	if (p->__reserved)
		return -EINVAL;
	if (p->flags & SWNIC_PEEK_DIRECTED) {
		rqe.flags |= SWNIC_RQE_DIRECTED;
		rqe.src_addr = p->src_addr;
		rqe.src_port = p->src_port;
	}
	/* CLAIM | DISCARD names an already claimed message by its claim. */
	if ((p->flags & SWNIC_PEEK_CLAIM) && (p->flags & SWNIC_PEEK_DISCARD)) {
		rqe.flags = SWNIC_RQE_TAGGED | SWNIC_RQE_CLAIM;
		rqe.tag = p->claim;
	}

	if (mutex_lock_killable(&ep->rx_lock))
		return -EINTR;
	/* Receives still in the (lazy) RQ take their messages first. */
	__swnic_ep_process_rq(ep, false, NULL);
	u = swnic_ep_match_unexp(ep, &rqe);
	if (!u) {
		ret = -ENOMSG;
		goto out_unlock;
	}
	p->tag = u->tag;
	p->len = u->len;
	p->data = u->data;
	p->has_data = u->has_data;
	p->src_addr = (__force u32)u->src_addr;
	p->src_port = u->src_port;
	if (p->flags & SWNIC_PEEK_DISCARD) {
		list_del(&u->node);
		ep->unexp_msgs--;
		ep->unexp_bytes -= u->len;
		swnic_ep_unexp_account(-1, -(long)u->len);
		/* The application got it and chose to drop it: delivered. */
		swnic_unexp_notify(u, 0);
		kvfree(u);
		swnic_ep_unexp_changed(ep);
	} else if (p->flags & SWNIC_PEEK_CLAIM) {
		u->claimed = true;
		u->claim = p->claim;
	}
out_unlock:
	mutex_unlock(&ep->rx_lock);
	return ret;
}

/* The endpoint fd's commands (the table is chardev.c's). */

/* SWNIC_IOCTL_EP_DOORBELL */
int swnic_ep_ioctl_doorbell(struct swnic_ep *ep, void *arg)
{
	struct swnic_ep_doorbell *db = arg;

	if (db->flags)
		return -EOPNOTSUPP;
	/* Only the process that owns the rings' buffers may drive them. */
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	return swnic_engine_doorbell(ep, db);
}

/* SWNIC_IOCTL_EP_CANCEL */
int swnic_ep_ioctl_cancel(struct swnic_ep *ep, void *arg)
{
	struct swnic_ep_cancel *c = arg;

	if (c->flags & ~SWNIC_CANCEL_SEND)
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	if (c->flags & SWNIC_CANCEL_SEND)
		return swnic_engine_cancel_send(ep, c->context);
	return swnic_ep_cancel(ep, c->context);
}

/* SWNIC_IOCTL_EP_PEEK */
int swnic_ep_ioctl_peek(struct swnic_ep *ep, void *arg)
{
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	return swnic_ep_peek(ep, arg);
}

static long swnic_ep_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	return swnic_ioctl(cmd, arg, NULL, file->private_data);
}

static int swnic_ep_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct swnic_ep *ep = file->private_data;

	switch (vma->vm_pgoff) {
	case SWNIC_EP_MMAP_SQ:
		return swnic_ring_mmap(&ep->sq, vma);
	case SWNIC_EP_MMAP_RQ:
		return swnic_ring_mmap(&ep->rq, vma);
	default:
		return -EINVAL;
	}
}

static int swnic_ep_file_release(struct inode *inode, struct file *file)
{
	struct swnic_ep *ep = file->private_data;
	struct swnic_domain *dom = ep->dom;
	struct swnic_recv *recv, *rtmp;
	struct swnic_unexp *u, *utmp;

	/* Unpublish: no new lookups; deliveries in flight see @dead. */
	xa_erase(&dom->sdev->ports, ep->port);
	swnic_engine_remove(ep);

	mutex_lock(&ep->rx_lock);
	ep->dead = true;
	list_for_each_entry_safe(recv, rtmp, &ep->recvs, node)
		swnic_ep_recv_free(ep, recv);
	list_for_each_entry_safe(recv, rtmp, &ep->trecvs, node)
		swnic_ep_recv_free(ep, recv);
	list_for_each_entry_safe(u, utmp, &ep->unexp, node) {
		/* Never to be received: a delivery-complete send fails. */
		swnic_unexp_notify(u, ECONNABORTED);
		kvfree(u);
	}
	INIT_LIST_HEAD(&ep->recvs);
	INIT_LIST_HEAD(&ep->trecvs);
	INIT_LIST_HEAD(&ep->unexp);
	swnic_ep_unexp_account(-(long)ep->unexp_msgs, -(long)ep->unexp_bytes);
	ep->unexp_msgs = 0;
	ep->unexp_bytes = 0;
	swnic_ep_unexp_changed(ep);
	mutex_unlock(&ep->rx_lock);

	mutex_lock(&dom->lock);
	dom->nep--;
	mutex_unlock(&dom->lock);
	swnic_ep_put(ep);
	return 0;
}

static const struct file_operations swnic_ep_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = swnic_ep_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = swnic_ep_mmap,
	.release = swnic_ep_file_release,
};

#define SWNIC_EP_FLAGS	(SWNIC_EP_F_DB_SYSCALL | SWNIC_EP_F_DB_ENGINE | \
			 SWNIC_EP_F_RM_ENABLED)

/*
 * Reserve @port (0: an ephemeral one) on the device for @ep. The slot
 * holds no endpoint yet - lookups find nothing there - until
 * swnic_ep_publish() once nothing can fail any more: a lookup must never
 * find an endpoint that an error path frees.
 */
/*
 * Endpoints (each a port) of @dom's owner on its device: one user holds at
 * most SWNIC_PORTS_PER_USER of the device's ports, administrators
 * excepted. Return: 0 or -EDQUOT.
 */
static int swnic_ep_user_quota(struct swnic_domain *dom)
{
	struct swnic_device *sdev = dom->sdev;
	struct swnic_domain *d;
	u32 n = 0;

	if (swnic_device_capable(sdev, CAP_NET_ADMIN, false))
		return 0;
	mutex_lock(&sdev->lock);
	list_for_each_entry(d, &sdev->domains, dev_node)
		if (uid_eq(d->uid, dom->uid))
			n += READ_ONCE(d->nep);
	mutex_unlock(&sdev->lock);
	return n >= SWNIC_PORTS_PER_USER ? -EDQUOT : 0;
}

static int swnic_ep_reserve_port(struct swnic_ep *ep, u16 port)
{
	struct swnic_device *sdev = ep->dom->sdev;
	u32 id;
	int ret;

	if (port) {
		if (port < 1024 &&
		    !swnic_device_capable(sdev, CAP_NET_BIND_SERVICE, true))
			return -EACCES;
		ret = xa_insert(&sdev->ports, port, NULL, GFP_KERNEL_ACCOUNT);
		return ret == -EBUSY ? -EADDRINUSE : ret;
	}
	ret = xa_alloc_cyclic(&sdev->ports, &id, NULL,
			      XA_LIMIT(SWNIC_PORT_EPHEMERAL_MIN,
				       SWNIC_PORT_EPHEMERAL_MAX),
			      &sdev->port_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		return ret == -EBUSY ? -EADDRNOTAVAIL : ret;
	ep->port = id;
	return 0;
}

/* Make @ep reachable at its reserved port: storing into a reserved slot
 * allocates nothing, so this cannot fail.
 */
static void swnic_ep_publish(struct swnic_ep *ep)
{
	void *old = xa_store(&ep->dom->sdev->ports, ep->port, ep, GFP_KERNEL);

	WARN_ON_ONCE(xa_is_err(old) || old);
}

/* SWNIC_IOCTL_EP_CREATE */
int swnic_ep_create(struct swnic_domain *dom, void *arg)
{
	struct swnic_ep_create *c = arg;
	struct swnic_ep *ep;
	int fd, ret;

	if (c->flags & ~SWNIC_EP_FLAGS)
		return -EOPNOTSUPP;
	if (c->__reserved || c->__pad)
		return -EINVAL;
	if ((c->flags & SWNIC_EP_F_DB_SYSCALL) &&
	    (c->flags & SWNIC_EP_F_DB_ENGINE))
		return -EINVAL;
	/* Datagram endpoints are served reliably: a permitted strengthening. */
	if (c->type != SWNIC_EP_RDM && c->type != SWNIC_EP_DGRAM)
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		return -ENOMEM;
	kref_init(&ep->ref);
	mutex_init(&ep->sq_lock);
	mutex_init(&ep->rx_lock);
	INIT_LIST_HEAD(&ep->recvs);
	INIT_LIST_HEAD(&ep->trecvs);
	INIT_LIST_HEAD(&ep->unexp);
	INIT_LIST_HEAD(&ep->engine_node);
	ep->type = c->type;
	ep->flags = c->flags;
	ep->addr = htonl(INADDR_LOOPBACK);
	ep->dom = dom;
	swnic_domain_get(dom);

	ep->tx_cq = swnic_cq_lookup(dom, c->tx_cq);
	ep->rx_cq = swnic_cq_lookup(dom, c->rx_cq);
	if (!ep->tx_cq || !ep->rx_cq) {
		ret = -ENOENT;
		goto err_cqs;
	}
	for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++) {
		if (!c->cntr[i])
			continue;
		ep->cntr[i] = swnic_cntr_lookup(dom, c->cntr[i]);
		if (!ep->cntr[i]) {
			ret = -ENOENT;
			goto err_cqs;
		}
	}
	ret = swnic_ring_init(&ep->sq, c->sq_entries, SWNIC_MAX_SQ_ENTRIES,
			      sizeof(struct swnic_sqe));
	if (ret)
		goto err_cqs;
	ret = swnic_ring_init(&ep->rq, c->rq_entries, SWNIC_MAX_RQ_ENTRIES,
			      sizeof(struct swnic_rqe));
	if (ret)
		goto err_sq;
	ep->sq_cancelled = bitmap_zalloc(ep->sq.entries, GFP_KERNEL_ACCOUNT);
	if (!ep->sq_cancelled) {
		ret = -ENOMEM;
		goto err_rq;
	}

	mutex_lock(&dom->lock);
	if (dom->nep >= dom->sdev->limits.max_ep) {
		mutex_unlock(&dom->lock);
		swnic_nl_limit_hit(dom->sdev, dom, SWNIC_LIMIT_DEV_EP);
		ret = -ENOSPC;
		goto err_rq;
	}
	dom->nep++;
	mutex_unlock(&dom->lock);

	ep->port = c->port;
	ret = swnic_ep_user_quota(dom);
	if (ret) {
		swnic_nl_limit_hit(dom->sdev, dom, SWNIC_LIMIT_DEV_EP);
		goto err_count;
	}
	ret = swnic_ep_reserve_port(ep, c->port);
	if (ret)
		goto err_count;
	/* From here the file's release undoes everything above. */
	fd = swnic_ioctl_new_file(arg, "[swnic-ep]", &swnic_ep_fops, ep);
	if (fd < 0) {
		ret = fd;
		xa_release(&dom->sdev->ports, ep->port);
		goto err_count;
	}
	swnic_obj_inc(SWNIC_OBJ_ENDPOINTS);

	c->port = ep->port;
	c->addr = (__force u32)ep->addr;
	c->fd = fd;
	c->ep_id = ep->port;
	swnic_ring_info(&ep->sq, (u64)SWNIC_EP_MMAP_SQ << PAGE_SHIFT, &c->sq);
	swnic_ring_info(&ep->rq, (u64)SWNIC_EP_MMAP_RQ << PAGE_SHIFT, &c->rq);
	if (ep->flags & SWNIC_EP_F_DB_ENGINE)
		swnic_ring_set_flags(&ep->sq, SWNIC_RING_F_NEED_WAKEUP, 0);
	swnic_ring_set_flags(&ep->rq, SWNIC_RING_F_LAZY, 0);
	swnic_ep_publish(ep);
	return 0;

err_count:
	mutex_lock(&dom->lock);
	dom->nep--;
	mutex_unlock(&dom->lock);
err_rq:
	bitmap_free(ep->sq_cancelled);
	swnic_ring_free(&ep->rq);
err_sq:
	swnic_ring_free(&ep->sq);
err_cqs:
	if (ep->tx_cq)
		swnic_cq_put(ep->tx_cq);
	if (ep->rx_cq)
		swnic_cq_put(ep->rx_cq);
	swnic_ep_put_cntrs(ep);
	swnic_domain_put(dom);
	mutex_destroy(&ep->sq_lock);
	mutex_destroy(&ep->rx_lock);
	kfree(ep);
	return ret;
}
