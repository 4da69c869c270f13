// SPDX-License-Identifier: GPL-2.0
/*
 * The receive queue: the receives an endpoint's owner posts (RQEs taken
 * from its RQ by a doorbell, a sender, the engine or a worker), checked
 * and matched against the unexpected messages waiting; cancelling,
 * peeking, triggered receives, and flushing at close. recv.c matches
 * what arrives against them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>

#include "recv_internal.h"

static int swnic_recv_consume_rq(struct swnic_ep *ep, bool hard,
				 struct swnic_fault *fault, bool sender);

/*
 * Consume @ep's RQ, faulting in with rx_lock dropped whatever a receive
 * needs (a buffered message copied into its buffer); @first: a fault an
 * earlier pass under the lock ran into, or NULL. In the owner's context,
 * or a sender's whose pass stopped at such a page: the RQ never waits
 * for a doorbell that may not come. Memory out of reach is tried for
 * SWNIC_FAULT_TIMEOUT (swnic_fault_retry()), the caller waiting; a worker
 * never waits so: swnic_recv_rq_work(). @sender: a sender's context, which
 * takes receives only (swnic_recv_consume_rq()).
 * Return: RQEs consumed, or -errno.
 */
int swnic_recv_process_rq_faulting(struct swnic_ep *ep,
				   const struct swnic_fault *first, bool sender)
{
	struct swnic_fault_retry retry = {};
	struct swnic_fault fault = {};
	bool hard = false;
	int ret, done = 0;

	if (first)
		fault = *first;
	for (;;) {
		if (fault.dst_len) {
			ret = swnic_fault_in(&fault);
			/* Killed: the receive stays in the RQ, not failed. */
			if (ret == -EINTR || fatal_signal_pending(current))
				return -EINTR;
			/* -EAGAIN: its mmap lock taken, tried again */
			hard = (ret && ret != -EAGAIN) ||
			       !swnic_fault_retry(&retry);
		}
		fault = (struct swnic_fault) {};
		if (mutex_lock_killable(&ep->rx_lock))
			return -EINTR;
		ret = swnic_recv_consume_rq(ep, hard, &fault, sender);
		mutex_unlock(&ep->rx_lock);
		if (ret < 0)
			return ret;
		done += ret;
		/*
		 * A receive was taken: the fault to come is another's, which
		 * gets its own SWNIC_FAULT_TIMEOUT, not what is left of this
		 * one's - in the receiver's own call. A sender's call (which
		 * holds its SQ) keeps one budget in all: afresh at each
		 * receive, a receiver that kept its mmap lock taken and posted
		 * one more faulting receive every 2 s held the sender's
		 * syscall for as long as it liked.
		 */
		if (ret && !sender)
			retry = (struct swnic_fault_retry) {};
		if (!fault.dst_len)
			return done;
	}
}

/*
 * Finish the RQ of the endpoint whose rq_work this is; holds a reference.
 * For a round (the wire's, or its domain's engine), which waits for a
 * receiver's memory out of reach as long as any round does
 * (SWNIC_ROUND_FAULT_TIMEOUT, copy.h): a receive that takes a buffered
 * message is not a fault while khugepaged keeps the receiver's mmap lock a
 * few seconds. The worker never sleeps on it: the
 * work tries again a tick later (@ep->rq_retry keeps count), so that a
 * receiver that keeps its mmap lock holds no worker of the queue every
 * user's triggered operations share (before, up to 10 s per receive).
 */
void swnic_recv_rq_work(struct work_struct *work)
{
	struct swnic_ep *ep = container_of(to_delayed_work(work),
					   struct swnic_ep, rq_work);
	struct swnic_fault_retry *r = &ep->rq_retry;
	struct swnic_fault fault = {};
	bool hard = false;
	int ret;

	for (;;) {
		mutex_lock(&ep->rx_lock);
		ret = __swnic_recv_process_rq(ep, hard, &fault);
		mutex_unlock(&ep->rx_lock);
		if (ret < 0 || !fault.dst_len)
			break;
		/* Progress: the next receive's wait starts afresh. */
		if (ret)
			*r = (struct swnic_fault_retry) {};
		ret = swnic_fault_in(&fault);
		fault = (struct swnic_fault) {};
		if (!r->tries++)
			r->deadline = jiffies + SWNIC_ROUND_FAULT_TIMEOUT;
		/* A fault, or out of reach for too long: the receive fails. */
		hard = (ret && ret != -EAGAIN) ||
		       time_after(jiffies, r->deadline);
		/* In reach now: again at once, a few times. */
		if (hard || (!ret && r->tries <= SWNIC_FAULT_SPINS))
			continue;
		/* Again a tick later, with our reference. */
		if (!swnic_trig_queue_delayed(&ep->rq_work, 1))
			swnic_ep_put(ep);	/* queued meanwhile: its own */
		return;
	}
	*r = (struct swnic_fault_retry) {};
	swnic_ep_put(ep);
}

/*
 * A wire round found a receive of @ep's RQ to fault in (a buffered message
 * for it) and must not wait for the receiver's memory: a worker finishes
 * the RQ, as the receiver's next doorbell may never come.
 */
void swnic_recv_rq_defer(struct swnic_ep *ep)
{
	kref_get(&ep->ref);
	if (!swnic_trig_queue_delayed(&ep->rq_work, 0))
		swnic_ep_put(ep);
}

/* ---- the receive queue -------------------------------------------------- */

#define SWNIC_RQE_FLAGS	(SWNIC_RQE_TAGGED | SWNIC_RQE_MULTI_RECV | \
			 SWNIC_RQE_DIRECTED | SWNIC_RQE_CLAIM | SWNIC_RQE_KEY | \
			 SWNIC_RQE_MR)

int swnic_rqe_check(const struct swnic_rqe *rqe)
{
	if (rqe->flags & ~SWNIC_RQE_FLAGS)
		return -EOPNOTSUPP;
	if (!(rqe->flags & SWNIC_RQE_MR) && rqe->mr)
		return -EINVAL;
	if ((rqe->flags & SWNIC_RQE_KEY) ?
	    rqe->key_index > SWNIC_EP_AUTH_KEYS_MAX : rqe->key_index)
		return -EINVAL;
	if ((rqe->flags & SWNIC_RQE_MULTI_RECV) &&
	    (rqe->flags & SWNIC_RQE_TAGGED))
		return -EINVAL;
	if ((rqe->flags & SWNIC_RQE_CLAIM) &&
	    (rqe->flags & (SWNIC_RQE_MULTI_RECV | SWNIC_RQE_DIRECTED |
			   SWNIC_RQE_KEY) ||
	     !(rqe->flags & SWNIC_RQE_TAGGED)))
		return -EINVAL;
	if (rqe->len > SWNIC_MAX_MSG_SIZE ||
	    !access_ok(u64_to_user_ptr(rqe->addr), rqe->len))
		return -EINVAL;
	return 0;
}

/*
 * Where @ep's (the holder of a receive side) completions go that belong to
 * no message - a receive cancelled, refused or whose claim is not there:
 * its own CQ, or, for a shared receive context, the CQ of its oldest
 * member. NULL: a context no endpoint has joined (yet, or any more).
 */
static struct swnic_ep *swnic_recv_err_ep(struct swnic_ep *ep)
{
	lockdep_assert_held(&ep->rx_lock);
	if (!swnic_ep_is_srx(ep))
		return ep;
	return list_first_entry_or_null(&ep->srx_members, struct swnic_ep,
					srx_node);
}

/*
 * Complete an unexpected message into the receive just posted. Return: 0,
 * or -SWNIC_EFAULTIN with @fault set and nothing changed (unless @hard).
 */
static int swnic_recv_take_unexp(struct swnic_ep *ep, struct swnic_recv *recv,
				 struct swnic_unexp *u, struct swnic_cqe *cqe,
				 bool hard, struct swnic_fault *fault)
{
	u64 off = recv->used;
	u64 n = min_t(u64, u->len, recv->rqe.len - off);
	u64 dst = recv->rqe.addr + off;
	int ret = 0;

	swnic_recv_cqe(cqe, &recv->rqe, off, u->len, u->tagged, u->tag,
		       u->has_data, u->data, u->src_addr, u->src_port,
		       u->key_index);
	/*
	 * The receiver's own context (its doorbell, or the engine on its mm),
	 * or a sender's that took the receive from the lazy RQ.
	 */
	if (current->mm == ep->dom->mm) {
		if (copy_to_user_nofault(u64_to_user_ptr(dst), u->payload, n))
			ret = -SWNIC_EFAULTIN;
	} else {
		ret = swnic_copy_to_mm(ep->dom->mm, dst, NULL, u->payload, n,
				       SWNIC_COPY_NOFAULT);
	}
	if (ret == -SWNIC_EFAULTIN && !hard) {
		if (fault)
			swnic_fault_set_dst(fault, ep->dom->mm, dst, n);
		return ret;
	}
	if (ret == -ESRCH) {
		/*
		 * The receiver's process has exited (a child keeps its file
		 * open): gone for good, as for a delivery. The message
		 * stays, and its sender learns at the close that it was
		 * never received (ECONNABORTED), not that it was.
		 */
		ep->dead = true;
		return -ECONNREFUSED;
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
	swnic_recv_unexp_account(-1, -(long)u->len);
	u->ep->rx_ops++;
	u->ep->rx_bytes += n;
	/*
	 * A delivery-complete sender learns its own receive's outcome: a
	 * receive that faulted never got the message, so it fails as a
	 * delivery into a posted receive would (truncation is no error of
	 * the send's: the message was received).
	 */
	swnic_complete_deferred(&u->notify, u->len, -ret);
	swnic_unexp_free(u);
	recv->used += n;
	swnic_recv_unexp_changed(ep);
	return 0;
}

/*
 * Post one receive: drain matching unexpected messages into it, then keep
 * it if it still has room. @cntr: a triggered receive's counter (TRIG_F_
 * CNTR; *@cntr NULL: none), or NULL for the endpoint's. @partial: for the
 * RQ's head, &ep->rq_partial: if set, the receive to go on with (@rqe is
 * not read); a multi-receive that took messages and must stop before the
 * rest is left there, not posted, so that no later message overtakes the
 * ones still buffered for it. Return: -EAGAIN if the CQ has no room or
 * the endpoint holds as many receives as its RQ has entries,
 * -SWNIC_EFAULTIN if a page of the buffer must be faulted in first (the
 * RQE stays in the ring in both cases), else 0.
 */
static int swnic_recv_post(struct swnic_ep *ep, const struct swnic_rqe *rqe,
			   struct swnic_cntr **cntr,
			   struct swnic_recv **partial, bool hard,
			   struct swnic_fault *fault)
{
	struct swnic_recv *recv = partial ? *partial : NULL;
	struct swnic_unexp *u;
	struct swnic_cqe cqe;
	int ret;

	if (recv) {
		*partial = NULL;
		rqe = &recv->rqe;
		goto drain;
	}
	/* Receives are bounded as the RQ is: one user cannot pile them up. */
	if (ep->nrecvs >= ep->rq.entries)
		return -EAGAIN;
	recv = swnic_recv_alloc(ep);
	if (!recv)
		return -ENOMEM;
	recv->rqe = *rqe;
	if (cntr) {
		recv->own_cntr = true;
		recv->cntr = *cntr;
		if (recv->cntr)
			swnic_cntr_get(recv->cntr);
	}
	ep->nrecvs++;

drain:
	while ((u = swnic_recv_match_unexp(ep, rqe))) {
		bool multi = rqe->flags & SWNIC_RQE_MULTI_RECV;
		/* Its completion goes where it arrived (@u is gone after). */
		struct swnic_ep *to = u->ep;

		if (!swnic_cq_reserve(to->rx_cq)) {
			ret = -EAGAIN;
			goto stop;
		}
		ret = swnic_recv_take_unexp(ep, recv, u, &cqe, hard, fault);
		if (ret) {
			swnic_cq_unreserve(to->rx_cq);
			goto stop;
		}
		if (!multi || cqe.err ||
		    recv->rqe.len - recv->used < recv->rqe.min_free ||
		    recv->rqe.len == recv->used) {
			if (multi)
				cqe.flags |= SWNIC_CQE_MULTI_RECV;
			swnic_complete_recv_to(to, &cqe, NULL, 0, true,
					       swnic_recv_cntr(to, recv));
			swnic_recv_free(ep, recv);
			return 0;
		}
		swnic_complete_recv_to(to, &cqe, NULL, 0, true,
				       swnic_recv_cntr(to, recv));
	}
	/* A claimed message that is not there: the receive fails. */
	if (rqe->flags & SWNIC_RQE_CLAIM) {
		struct swnic_ep *to = swnic_recv_err_ep(ep);

		/* A context no one joined: the claim waits in the RQ. */
		if (!to) {
			swnic_recv_free(ep, recv);
			return -EAGAIN;
		}
		memset(&cqe, 0, sizeof(cqe));
		cqe.context = rqe->context;
		cqe.flags = SWNIC_CQE_RECV | SWNIC_CQE_TAGGED | SWNIC_CQE_ERROR;
		cqe.err = ENOMSG;
		ret = swnic_complete_recv_to(to, &cqe, NULL, 0, false,
					     swnic_recv_cntr(to, recv));
		swnic_recv_free(ep, recv);
		return ret;
	}
post:
	list_add_tail(&recv->node, rqe->flags & SWNIC_RQE_TAGGED ?
		      &ep->trecvs : &ep->recvs);
	return 0;

stop:
	if (!recv->used) {
		swnic_recv_free(ep, recv);
		return ret;
	}
	/* Partly filled multi-receive of the RQ: the rest at the next look. */
	if (partial) {
		*partial = recv;
		return ret;
	}
	/*
	 * A triggered one has no place in the RQ: posted as it is, it takes
	 * what arrives from now on, and the next receive posted what is
	 * still buffered.
	 */
	goto post;
}

/*
 * Consume the receive queue, in any context. A receive whose buffer must
 * be faulted in stops consumption: with @fault (the owner's context) the
 * caller faults it in and comes back; a sender's context leaves it to the
 * owner, whose doorbell the RQ asks for while messages wait.
 *
 * A @sender takes receives only. It stops at a claim, which completes at
 * once and for which the owner rings anyway (datapath.rst, *Lazy receive
 * queue*), and at an RQE in error: each frees its slot for another
 * without a message, so an owner who kept its RQ full of them, never
 * ringing, would have every delivery to it - another user's syscall, a
 * shared worker of the wire - complete its whole RQ over and over, each
 * claim against every message it buffers. A receive stays posted until a
 * message fills it; no memory for one (-ENOMEM) stops a sender too: the
 * owner's receive is not failed for it.
 *
 * Out of the owner's context (a sender's, a wire round, rq_work), the
 * receives are the owner's and are charged to its memory cgroup, not to
 * the sender's (nor to no one, in a worker).
 */
static int swnic_recv_consume_rq(struct swnic_ep *ep, bool hard,
				 struct swnic_fault *fault, bool sender)
{
	struct mem_cgroup *memcg = NULL, *old_memcg = NULL;
	struct swnic_rqe rqe;
	int avail, done = 0, ret;

	lockdep_assert_held(&ep->rx_lock);
	/*
	 * Closed: what is left in the RQ is never posted (nor freed). A
	 * member of a shared receive context: its own RQ is never read.
	 */
	if (ep->dead || ep->srx)
		return 0;
	avail = swnic_ring_avail(&ep->rq);
	if (avail <= 0)
		return avail;
	if (current->mm != ep->dom->mm) {
		memcg = swnic_domain_memcg(ep->dom);
		old_memcg = set_active_memcg(memcg);
	}
	while (done < avail) {
		if (ep->rq_partial) {
			rqe = ep->rq_partial->rqe;	/* for an error's CQE */
			ret = swnic_recv_post(ep, NULL, NULL, &ep->rq_partial,
					      hard, fault);
		} else {
			swnic_ring_peek(&ep->rq, &rqe);
			ret = swnic_rqe_check(&rqe);
			if (sender && (ret || (rqe.flags & SWNIC_RQE_CLAIM)))
				break;
			if (!ret)
				ret = swnic_recv_post(ep, &rqe, NULL,
						      &ep->rq_partial, hard,
						      fault);
		}
		/* Dead: its process exited (swnic_recv_take_unexp()). */
		if (ret == -EAGAIN || ret == -SWNIC_EFAULTIN ||
		    (sender && ret == -ENOMEM) || ep->dead)
			break;
		if (ret) {
			struct swnic_ep *to = swnic_recv_err_ep(ep);
			struct swnic_cqe cqe = {
				.context = rqe.context,
				.flags = SWNIC_CQE_RECV | SWNIC_CQE_ERROR,
				.err = -ret,
			};

			if (!to || swnic_complete_recv(to, &cqe, NULL, 0, false))
				break;
		}
		swnic_ring_consume(&ep->rq);
		done++;
		/*
		 * @hard is for the receive at the head, whose fault the
		 * caller faulted in; a receive behind it has not faulted yet
		 * and gets its own fault in first.
		 */
		hard = false;
	}
	if (memcg) {
		set_active_memcg(old_memcg);
		mem_cgroup_put(memcg);
	}
	return done;
}

int __swnic_recv_process_rq(struct swnic_ep *ep, bool hard,
			    struct swnic_fault *fault)
{
	return swnic_recv_consume_rq(ep, hard, fault, false);
}

/**
 * swnic_recv_sender_rq() - a delivery takes the receives posted lazily
 * @ep: the receiving endpoint; its receive lock held
 * @fault: as for __swnic_recv_process_rq()
 *
 * Only receives: see swnic_recv_consume_rq().
 *
 * Return: RQEs consumed, or -EPIPE if the ring is broken.
 */
int swnic_recv_sender_rq(struct swnic_ep *ep, struct swnic_fault *fault)
{
	return swnic_recv_consume_rq(ep, false, fault, true);
}

/**
 * swnic_recv_rq_lazy_idle() - may @ep's RQ wait for the next sender?
 * @ep: the endpoint
 *
 * A lazy RQ while no unexpected message waits for a receive (no
 * NEED_WAKEUP): a sender takes its receives before it matches. Lockless:
 * a delivery that sets NEED_WAKEUP looks at the RQ again after it (see
 * swnic_recv_unexp_changed()), so a receive the owner published before
 * this doorbell is never left behind a waiting message.
 */
bool swnic_recv_rq_lazy_idle(struct swnic_ep *ep)
{
	u32 f = swnic_ring_kflags(&ep->rq);

	return (f & SWNIC_RING_F_LAZY) && !(f & SWNIC_RING_F_NEED_WAKEUP);
}

/**
 * swnic_recv_process_rq() - consume the receive queue
 * @ep: the endpoint (its owner's doorbell, or the engine on its mm)
 * @round: the engine's round: a receive whose buffer must be faulted in
 *	   (a buffered message taken into it) is left to rq_work, as for a
 *	   wire round, which never sleeps on the owner's mmap lock; the
 *	   engine's worker serves the domain's other endpoints meanwhile
 *
 * Return: RQEs consumed, -EPIPE if the ring is broken, -EINTR if the
 * caller was killed while it waited.
 */
int swnic_recv_process_rq(struct swnic_ep *ep, bool round)
{
	struct swnic_fault fault = {};
	int ret;

	/* A member's receives are its shared receive context's. */
	if (ep->srx)
		return 0;
	if (!round)
		return swnic_recv_process_rq_faulting(ep, NULL, false);
	mutex_lock(&ep->rx_lock);
	ret = __swnic_recv_process_rq(ep, false, &fault);
	mutex_unlock(&ep->rx_lock);
	if (ret >= 0 && fault.dst_len)
		swnic_recv_rq_defer(ep);
	return ret;
}

/* Unpost the receive posted with @context and complete it as cancelled. */
int swnic_recv_cancel(struct swnic_ep *ep, u64 context)
{
	struct list_head *lists[] = { &ep->recvs, &ep->trecvs };
	struct swnic_recv *recv = NULL, *r;
	struct swnic_cqe cqe = {};
	struct swnic_ep *to;
	int i, ret;

	/* A member posts no receives of its own: its context's fd does. */
	if (ep->srx)
		return -ENOENT;
	/* A triggered receive the kernel keeps completes with ECANCELED soon. */
	if (!swnic_trig_cancel_rqe(ep, context))
		return 0;
	/* Receives still in the ring are posted first, so they are found. */
	ret = swnic_recv_process_rq(ep, false);
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
		/*
		 * Not posted yet: it may still be in the RQ, behind a full CQ
		 * or a failed allocation. Only an empty RQ means "no such".
		 */
		ret = swnic_ring_avail(&ep->rq) > 0 ? -EAGAIN : -ENOENT;
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
	/* A context no endpoint has joined has no CQ to tell: it stays. */
	to = swnic_recv_err_ep(ep);
	ret = to ? swnic_complete_recv_to(to, &cqe, NULL, 0, false,
					  swnic_recv_cntr(to, recv)) :
		   -ENOTCONN;
	if (!ret) {
		list_del(&recv->node);
		swnic_recv_free(ep, recv);
	}
out_unlock:
	mutex_unlock(&ep->rx_lock);
	return ret;
}

/*
 * Post a triggered receive behind the receives its owner posted before it
 * was due (rx_lock held): those in the RQ - a lazy one waits for the
 * next sender - and the multi-receive left part-filled at its head
 * (ep->rq_partial) are taken first, or the triggered one, posted ahead of
 * them, would take their messages. One of them that cannot be posted yet
 * (no room in the CQ or for receives, a page of its buffer to fault in,
 * which rq_work does) holds it back: -EAGAIN, tried again later. A broken
 * RQ is its owner's business: it holds nothing back.
 */
static int swnic_recv_trig_post(struct swnic_ep *ep,
				const struct swnic_rqe *rqe,
				struct swnic_cntr **cntr, bool hard,
				struct swnic_fault *fault)
{
	struct swnic_fault rq_fault = {};

	__swnic_recv_process_rq(ep, false, &rq_fault);
	if (rq_fault.dst_len)
		swnic_recv_rq_defer(ep);
	if (ep->rq_partial || swnic_ring_avail(&ep->rq) > 0)
		return -EAGAIN;
	return swnic_recv_post(ep, rqe, cntr, NULL, hard, fault);
}

/**
 * swnic_recv_run_trig() - post a triggered receive whose threshold was met
 * @ep: the endpoint; a slot of its receive CQ is reserved for the receive
 * @rqe: the receive, checked when it was queued
 * @cntr: its counter (TRIG_F_CNTR; *@cntr NULL: none), or NULL for the
 *	  endpoint's RECV counter
 * @status: 0 to post it, or the error to complete it with unposted
 * @last: give up: a receive that cannot be posted now completes with
 *	  EAGAIN
 * @wait: its wait for memory out of reach, across its tries
 *
 * In the trigger workqueue with the poster's mm (trig.c), behind what the
 * RQ holds (swnic_recv_trig_post()). Pages of the
 * buffer (a buffered message taken into it) are faulted in with rx_lock
 * dropped, as for the RQ, but the mmap lock is only tried: taken, the
 * receive is tried again later (-EAGAIN), until its last try (@wait),
 * which makes it a fault. Its owner may keep that lock as long as it
 * likes, and the worker serves every user's triggered work.
 *
 * Return: 0 (posted or completed: the slot is used or given back), or
 * -EAGAIN (not now and not @last, or its memory out of reach: the slot
 * stays reserved).
 */
int swnic_recv_run_trig(struct swnic_ep *ep, const struct swnic_rqe *rqe,
			struct swnic_cntr **cntr, int status, bool last,
			struct swnic_fault_wait *wait)
{
	struct swnic_fault fault = {};
	struct swnic_cqe cqe = {
		.context = rqe->context,
		.buf = rqe->addr,
		.flags = SWNIC_CQE_RECV | SWNIC_CQE_ERROR,
	};
	bool hard = false, faulted = false;
	int ret = status;

	if (rqe->flags & SWNIC_RQE_TAGGED)
		cqe.flags |= SWNIC_CQE_TAGGED;
	if (rqe->flags & SWNIC_RQE_MULTI_RECV)
		cqe.flags |= SWNIC_CQE_MULTI_RECV;
	for (;;) {
		if (fault.dst_len) {
			/*
			 * A failure is hard; the mmap lock taken (-EAGAIN),
			 * or a page gone again once faulted in, is for a
			 * later try, until the last.
			 */
			ret = swnic_fault_in(&fault);
			if (ret == -EAGAIN || (!ret && faulted)) {
				if (!swnic_fault_last_try(wait)) {
					swnic_fault_later(wait);
					return -EAGAIN;
				}
				ret = -EFAULT;
			}
			hard = ret != 0;
			faulted = true;
			ret = status;
		}
		fault = (struct swnic_fault) {};
		mutex_lock(&ep->rx_lock);
		if (ep->dead) {
			/* Closed: nobody reads the CQ any more. */
			mutex_unlock(&ep->rx_lock);
			swnic_cq_unreserve(ep->rx_cq);
			return 0;
		}
		if (!status)
			ret = swnic_recv_trig_post(ep, rqe, cntr, hard, &fault);
		if (ret == -SWNIC_EFAULTIN) {
			mutex_unlock(&ep->rx_lock);
			continue;
		}
		swnic_fault_reached(wait);
		if (ret == -EAGAIN && !last) {
			mutex_unlock(&ep->rx_lock);
			return ret;
		}
		if (ret) {
			cqe.err = -ret;
			swnic_complete_recv_to(ep, &cqe, NULL, 0, true,
					       cntr ? *cntr :
					       ep->cntr[SWNIC_EP_CNTR_RECV]);
			ep->rx_ops++;
		} else {
			swnic_cq_unreserve(ep->rx_cq);
		}
		mutex_unlock(&ep->rx_lock);
		return 0;
	}
}

#define SWNIC_PEEK_FLAGS (SWNIC_PEEK_CLAIM | SWNIC_PEEK_DISCARD | \
			  SWNIC_PEEK_DIRECTED)

/* FI_PEEK on the unexpected tagged messages, claiming or discarding one. */
int swnic_recv_peek(struct swnic_ep *ep, struct swnic_ep_peek *p)
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
	/* A member's unexpected messages are its context's. */
	ep = swnic_ep_rx(ep);
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

	/*
	 * Receives still in the (lazy) RQ take their messages first (a
	 * broken RQ is its owner's business: the peek still answers).
	 */
	ret = swnic_recv_process_rq_faulting(ep, NULL, false);
	if (ret == -EINTR)
		return ret;
	ret = 0;
	if (mutex_lock_killable(&ep->rx_lock))
		return -EINTR;
	/* And those posted since. */
	__swnic_recv_process_rq(ep, false, NULL);
	u = swnic_recv_match_unexp(ep, &rqe);
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
		swnic_recv_unexp_account(-1, -(long)u->len);
		/* The application got it and chose to drop it: delivered. */
		swnic_complete_deferred(&u->notify, u->len, 0);
		swnic_unexp_free(u);
		swnic_recv_unexp_changed(ep);
	} else if (p->flags & SWNIC_PEEK_CLAIM) {
		u->claimed = true;
		u->claim = p->claim;
	}
out_unlock:
	mutex_unlock(&ep->rx_lock);
	return ret;
}

/*
 * A member of a shared receive context closes: it leaves the context, and
 * the messages that arrived at it and wait there unexpected go with it
 * (their completions had nowhere to go). The context's receives stay.
 */
static void swnic_recv_flush_member(struct swnic_ep *ep)
{
	struct swnic_ep *rx = ep->srx;
	struct swnic_unexp *u, *utmp;

	mutex_lock(&rx->rx_lock);
	ep->dead = true;
	list_del_init(&ep->srx_node);
	list_for_each_entry_safe(u, utmp, &rx->unexp, node) {
		if (u->ep != ep)
			continue;
		list_del(&u->node);
		rx->unexp_msgs--;
		rx->unexp_bytes -= u->len;
		swnic_recv_unexp_account(-1, -(long)u->len);
		swnic_complete_deferred(&u->notify, u->len, ECONNABORTED);
		swnic_unexp_free(u);
	}
	swnic_recv_unexp_changed(rx);
	mutex_unlock(&rx->rx_lock);
}

/**
 * swnic_recv_flush() - an endpoint's receive side ends with its file
 * @ep: the endpoint, unpublished: no new deliveries start
 *
 * Deliveries in flight see @dead. Posted receives go; buffered messages
 * are dropped, and a delivery-complete send among them fails.
 */
void swnic_recv_flush(struct swnic_ep *ep)
{
	struct swnic_recv *recv, *rtmp;
	struct swnic_unexp *u, *utmp;

	if (ep->srx) {
		swnic_recv_flush_member(ep);
		return;
	}
	mutex_lock(&ep->rx_lock);
	ep->dead = true;
	list_for_each_entry_safe(recv, rtmp, &ep->recvs, node)
		swnic_recv_free(ep, recv);
	list_for_each_entry_safe(recv, rtmp, &ep->trecvs, node)
		swnic_recv_free(ep, recv);
	if (ep->rq_partial)
		swnic_recv_free(ep, ep->rq_partial);
	ep->rq_partial = NULL;
	list_for_each_entry_safe(u, utmp, &ep->unexp, node) {
		/* Never to be received: a delivery-complete send fails. */
		swnic_complete_deferred(&u->notify, u->len, ECONNABORTED);
		swnic_unexp_free(u);
	}
	kfree(ep->recv_spare);
	ep->recv_spare = NULL;
	INIT_LIST_HEAD(&ep->recvs);
	INIT_LIST_HEAD(&ep->trecvs);
	INIT_LIST_HEAD(&ep->unexp);
	swnic_recv_unexp_account(-(long)ep->unexp_msgs,
				 -(long)ep->unexp_bytes);
	ep->unexp_msgs = 0;
	ep->unexp_bytes = 0;
	swnic_recv_unexp_changed(ep);
	mutex_unlock(&ep->rx_lock);
}
