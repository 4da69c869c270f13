// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints: the host-wide port table, the endpoint file (mmap of its SQ
 * and RQ, the doorbell), and the receive side - posted receives, matching
 * of sends and tagged sends against them, unexpected messages.
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

#define SWNIC_PORT_EPHEMERAL_MIN	32768
#define SWNIC_PORT_EPHEMERAL_MAX	60999

/* Endpoints by port, host-wide; RCU lookups, entries freed after a GP. */
static DEFINE_XARRAY_ALLOC(swnic_ports);
static u32 swnic_port_next = SWNIC_PORT_EPHEMERAL_MIN;

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
 * swnic_ep_lookup() - find the endpoint at @addr:@port
 * @addr: IPv4 address (network order); only this host's are reachable yet
 * @port: the endpoint's port
 *
 * Return: the endpoint with a reference held, or NULL.
 */
struct swnic_ep *swnic_ep_lookup(__be32 addr, u16 port)
{
	struct swnic_ep *ep;

	if (!swnic_addr_is_local(addr))
		return NULL;
	rcu_read_lock();
	ep = xa_load(&swnic_ports, port);
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

static int __swnic_ep_process_rq(struct swnic_ep *ep);

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
 * matches yet.
 *
 * Return: 0, SWNIC_DELIVER_DEFERRED (a SWNIC_SQE_DELIVERY send was
 * buffered: its completion, in the slot the caller reserved on @src's
 * transmit CQ, is posted when a receive takes it), or the sender's error:
 * -ECONNREFUSED (endpoint closed, or its process exited), -EAGAIN (the
 * target's CQ or unexpected buffer is full: retry later), -EFAULT,
 * -ENOMEM.
 */
int swnic_ep_deliver(struct swnic_ep *dst, struct swnic_ep *src,
		     const struct swnic_sqe *sqe, const void *kbuf)
{
	const void __user *usrc = kbuf ? NULL : u64_to_user_ptr(sqe->addr);
	bool tagged = sqe->opcode == SWNIC_OP_TSEND;
	bool has_data = sqe->flags & SWNIC_SQE_REMOTE_DATA;
	struct swnic_recv *recv;
	struct swnic_unexp *u;
	struct swnic_cqe cqe;
	int ret = 0;

	mutex_lock(&dst->rx_lock);
	if (dst->dead) {
		ret = -ECONNREFUSED;
		goto out_unlock;
	}
	/* Receives posted without a doorbell (a broken RQ is its owner's). */
	__swnic_ep_process_rq(dst);

	recv = swnic_ep_match_recv(dst, tagged, sqe->tag, src->addr, src->port);
	if (recv) {
		u64 off = recv->used;
		u64 n = min(sqe->len, recv->rqe.len - off);
		bool inl = n && n <= SWNIC_CQE_INLINE_MAX &&
			   dst->rx_cq->inline_data;
		u8 data[SWNIC_CQE_INLINE_MAX];

		if (!swnic_cq_reserve(dst->rx_cq)) {
			ret = -EAGAIN;
			goto out_unlock;
		}
		swnic_recv_cqe(&cqe, &recv->rqe, off, sqe->len, tagged,
			       sqe->tag, has_data, sqe->data, src->addr,
			       src->port);
		if (inl) {
			/* Small: in the CQE; the receiver's provider places it. */
			if (kbuf)
				memcpy(data, kbuf, n);
			else if (copy_from_user(data, usrc, n))
				ret = -EFAULT;
			if (!ret)
				cqe.flags |= SWNIC_CQE_INLINE;
		} else {
			ret = swnic_copy_to_mm(dst->dom->mm, recv->rqe.addr + off,
					       usrc, kbuf, n);
		}
		if (ret == -ESRCH) {
			/*
			 * The receiver's process has exited (its files are
			 * not closed yet): the endpoint is gone for good.
			 */
			swnic_cq_unreserve(dst->rx_cq);
			dst->dead = true;
			ret = -ECONNREFUSED;
			goto out_unlock;
		}
		if (ret) {
			cqe.flags |= SWNIC_CQE_ERROR;
			cqe.err = -ret;
			cqe.len = 0;
		}
		if (ret || swnic_recv_consume(recv, n, &cqe)) {
			list_del(&recv->node);
			kfree(recv);
		}
		swnic_ep_rx_post_inline(dst, &cqe,
					cqe.flags & SWNIC_CQE_INLINE ? data : NULL,
					cqe.flags & SWNIC_CQE_INLINE ? n : 0,
					true);
		dst->rx_ops++;
		dst->rx_bytes += n;
		goto out_unlock;
	}

	if (dst->unexp_msgs >= SWNIC_UNEXP_MAX_MSGS ||
	    sqe->len > SWNIC_UNEXP_MAX_BYTES - dst->unexp_bytes) {
		ret = -EAGAIN;
		goto out_unlock;
	}
	/* Charged to the sender's memory cgroup: it made the copy happen. */
	u = kvmalloc(struct_size(u, payload, sqe->len), GFP_KERNEL_ACCOUNT);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	if (kbuf) {
		memcpy(u->payload, kbuf, sqe->len);
	} else if (copy_from_user(u->payload, usrc, sqe->len)) {
		kvfree(u);
		ret = -EFAULT;
		goto out_unlock;
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
	__swnic_ep_process_rq(dst);
out_unlock:
	mutex_unlock(&dst->rx_lock);
	return ret;
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

/* Complete an unexpected message into the receive just posted. */
static void swnic_ep_take_unexp(struct swnic_ep *ep, struct swnic_recv *recv,
				struct swnic_unexp *u, struct swnic_cqe *cqe)
{
	u64 off = recv->used;
	u64 n = min_t(u64, u->len, recv->rqe.len - off);

	int ret = 0;

	swnic_recv_cqe(cqe, &recv->rqe, off, u->len, u->tagged, u->tag,
		       u->has_data, u->data, u->src_addr, u->src_port);
	/*
	 * The receiver's own context (its doorbell, or the engine on its mm),
	 * or a sender's that took the receive from the lazy RQ.
	 */
	if (current->mm == ep->dom->mm) {
		if (copy_to_user(u64_to_user_ptr(recv->rqe.addr + off),
				 u->payload, n))
			ret = -EFAULT;
	} else {
		ret = swnic_copy_to_mm(ep->dom->mm, recv->rqe.addr + off, NULL,
				       u->payload, n);
	}
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
}

/*
 * Post one receive: drain matching unexpected messages into it, then keep
 * it if it still has room. Return: -EAGAIN if the CQ has no room (the RQE
 * stays in the ring), else 0.
 */
static int swnic_ep_post_recv(struct swnic_ep *ep, const struct swnic_rqe *rqe)
{
	struct swnic_recv *recv;
	struct swnic_unexp *u;
	struct swnic_cqe cqe;

	recv = kzalloc(sizeof(*recv), GFP_KERNEL_ACCOUNT);
	if (!recv)
		return -ENOMEM;
	recv->rqe = *rqe;

	while ((u = swnic_ep_match_unexp(ep, rqe))) {
		bool multi = rqe->flags & SWNIC_RQE_MULTI_RECV;

		if (!swnic_cq_reserve(ep->rx_cq)) {
			if (!recv->used) {
				kfree(recv);
				return -EAGAIN;
			}
			/* Partly filled multi-recv: keep it posted. */
			break;
		}
		swnic_ep_take_unexp(ep, recv, u, &cqe);
		if (!multi || cqe.err ||
		    recv->rqe.len - recv->used < recv->rqe.min_free ||
		    recv->rqe.len == recv->used) {
			if (multi)
				cqe.flags |= SWNIC_CQE_MULTI_RECV;
			swnic_ep_rx_post(ep, &cqe, true);
			kfree(recv);
			return 0;
		}
		swnic_ep_rx_post(ep, &cqe, true);
	}
	/* A claimed message that is not there: the receive fails. */
	if (rqe->flags & SWNIC_RQE_CLAIM) {
		kfree(recv);
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

/* Consume the receive queue, in any context. */
static int __swnic_ep_process_rq(struct swnic_ep *ep)
{
	struct swnic_rqe rqe;
	int avail, done = 0, ret;

	lockdep_assert_held(&ep->rx_lock);
	avail = swnic_ring_avail(&ep->rq);
	if (avail < 0)
		return avail;
	while (done < avail) {
		swnic_ring_peek(&ep->rq, &rqe);
		ret = swnic_rqe_check(&rqe);
		if (!ret)
			ret = swnic_ep_post_recv(ep, &rqe);
		if (ret == -EAGAIN)
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
 * Return: RQEs consumed, or -EPIPE if the ring is broken.
 */
int swnic_ep_process_rq(struct swnic_ep *ep)
{
	int ret;

	mutex_lock(&ep->rx_lock);
	ret = __swnic_ep_process_rq(ep);
	mutex_unlock(&ep->rx_lock);
	return ret;
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

	mutex_lock(&ep->rx_lock);
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
		kfree(recv);
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

	mutex_lock(&ep->rx_lock);
	/* Receives still in the (lazy) RQ take their messages first. */
	__swnic_ep_process_rq(ep);
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

/* The extensible-struct contract of swnic.h for the endpoint's ioctls. */
static int swnic_ep_copy_in(void *karg, size_t ksize, void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < ksize)
		return -EINVAL;
	return copy_struct_from_user(karg, ksize, uarg, usize);
}

static long swnic_ep_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct swnic_ep *ep = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct swnic_ep_doorbell db;
	struct swnic_ep_cancel cancel;
	struct swnic_ep_peek peek;
	int ret;

	switch (cmd) {
	case SWNIC_IOCTL_EP_DOORBELL:
		ret = swnic_ep_copy_in(&db, sizeof(db), uarg);
		if (!ret && db.flags)
			ret = -EOPNOTSUPP;
		break;
	case SWNIC_IOCTL_EP_CANCEL:
		ret = swnic_ep_copy_in(&cancel, sizeof(cancel), uarg);
		if (!ret && (cancel.flags & ~SWNIC_CANCEL_SEND))
			ret = -EOPNOTSUPP;
		break;
	case SWNIC_IOCTL_EP_PEEK:
		ret = swnic_ep_copy_in(&peek, sizeof(peek), uarg);
		break;
	default:
		return -ENOTTY;
	}
	if (ret)
		return ret;
	/* Only the process that owns the rings' buffers may drive them. */
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;

	if (cmd == SWNIC_IOCTL_EP_CANCEL && (cancel.flags & SWNIC_CANCEL_SEND))
		return swnic_engine_cancel_send(ep, cancel.context);
	if (cmd == SWNIC_IOCTL_EP_CANCEL)
		return swnic_ep_cancel(ep, cancel.context);
	if (cmd == SWNIC_IOCTL_EP_PEEK) {
		ret = swnic_ep_peek(ep, &peek);
		if (ret)
			return ret;
		return copy_to_user(uarg, &peek, sizeof(peek)) ? -EFAULT : 0;
	}
	ret = swnic_engine_doorbell(ep, &db);
	if (ret)
		return ret;
	return copy_to_user(uarg, &db, sizeof(db)) ? -EFAULT : 0;
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
	xa_erase(&swnic_ports, ep->port);
	swnic_engine_remove(ep);

	mutex_lock(&ep->rx_lock);
	ep->dead = true;
	list_for_each_entry_safe(recv, rtmp, &ep->recvs, node)
		kfree(recv);
	list_for_each_entry_safe(recv, rtmp, &ep->trecvs, node)
		kfree(recv);
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

static int swnic_ep_bind_port(struct swnic_ep *ep, u16 port)
{
	u32 id;
	int ret;

	if (port) {
		if (port < 1024 && !capable(CAP_NET_BIND_SERVICE))
			return -EACCES;
		ret = xa_insert(&swnic_ports, port, ep, GFP_KERNEL);
		return ret == -EBUSY ? -EADDRINUSE : ret;
	}
	ret = xa_alloc_cyclic(&swnic_ports, &id, ep,
			      XA_LIMIT(SWNIC_PORT_EPHEMERAL_MIN,
				       SWNIC_PORT_EPHEMERAL_MAX),
			      &swnic_port_next, GFP_KERNEL);
	if (ret < 0)
		return ret == -EBUSY ? -EADDRNOTAVAIL : ret;
	ep->port = id;
	return 0;
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
	ret = swnic_ep_bind_port(ep, c->port);
	if (ret)
		goto err_count;
	/* From here the file's release undoes everything above. */
	fd = swnic_ioctl_new_file(arg, "[swnic-ep]", &swnic_ep_fops, ep);
	if (fd < 0) {
		ret = fd;
		xa_erase(&swnic_ports, ep->port);
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
