// SPDX-License-Identifier: GPL-2.0
/*
 * The send side of an endpoint: consume its send queue - validate each
 * work request, hand it to the transport that reaches its destination
 * (transport.h), complete it (complete.c). In the poster's context: its
 * doorbell, or its domain's engine on its mm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/uaccess.h>

#include "atomic.h"
#include "complete.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "engine.h"
#include "ep.h"
#include "recv.h"
#include "send.h"
#include "transport.h"
#include "trig.h"

#define SWNIC_SQE_FLAGS	(SWNIC_SQE_COMPLETION | SWNIC_SQE_REMOTE_DATA | \
			 SWNIC_SQE_INLINE | SWNIC_SQE_DELIVERY | \
			 SWNIC_SQE_FENCE | SWNIC_SQE_TRIGGER)

static int swnic_sqe_check(const struct swnic_sqe *sqe)
{
	if (sqe->flags & ~SWNIC_SQE_FLAGS)
		return -EOPNOTSUPP;
	if (swnic_atomic_opcode(sqe->opcode))
		return swnic_atomic_check(sqe);
	if (sqe->__pad[0] || sqe->__pad[1] || sqe->__pad[2])
		return -EINVAL;
	switch (sqe->opcode) {
	case SWNIC_OP_SEND:
	case SWNIC_OP_TSEND:
		break;
	case SWNIC_OP_WRITE:
	case SWNIC_OP_READ:
		if (sqe->flags & SWNIC_SQE_INLINE && sqe->opcode == SWNIC_OP_READ)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (sqe->flags & SWNIC_SQE_INLINE) {
		/* A trigger's condition is where an inline payload would be. */
		if (sqe->flags & SWNIC_SQE_TRIGGER)
			return -EINVAL;
		return sqe->len <= SWNIC_INLINE_MAX ? 0 : -EINVAL;
	}
	if (sqe->len > SWNIC_MAX_MSG_SIZE ||
	    !access_ok(u64_to_user_ptr(sqe->addr), sqe->len))
		return -EINVAL;
	return 0;
}

/*
 * Execute one validated work request through the transport that reaches
 * its destination. Return: 0, SWNIC_DELIVER_DEFERRED, or the poster's
 * error.
 */
static int swnic_send_exec(struct swnic_ep *ep, const struct swnic_sqe *sqe)
{
	const void *kbuf = sqe->flags & SWNIC_SQE_INLINE ? sqe->inline_data : NULL;
	const struct swnic_transport *t;

	/* Its device left the domain's namespace: it reaches no one. */
	if (READ_ONCE(ep->dom->orphan))
		return -ENETDOWN;
	t = swnic_transport_for(ep->dom->sdev, (__force __be32)sqe->dest_addr);
	if (!t)
		return -EHOSTUNREACH;
	switch (sqe->opcode) {
	case SWNIC_OP_SEND:
	case SWNIC_OP_TSEND:
		return t->send(ep, sqe, kbuf);
	case SWNIC_OP_WRITE:
		return t->rma_write(ep, sqe, kbuf);
	case SWNIC_OP_READ:
		return t->rma_read(ep, sqe);
	case SWNIC_OP_ATOMIC:
	case SWNIC_OP_FETCH_ATOMIC:
	case SWNIC_OP_COMPARE_ATOMIC:
		return t->atomic ? t->atomic(ep, sqe, kbuf) : -EOPNOTSUPP;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * Let go of the SQ after consuming it. Triggered work that found it held
 * (swnic_send_run_one()) waits on its domain's retry list: it is tried
 * now, not a tick later, so that an owner that keeps ringing does not
 * hold its own triggered work back.
 */
static void swnic_send_sq_unlock(struct swnic_ep *ep)
{
	mutex_unlock(&ep->sq_lock);
	if (READ_ONCE(ep->sq_contended)) {
		WRITE_ONCE(ep->sq_contended, false);
		swnic_trig_retry_soon(ep->dom);
	}
}

static int swnic_send_sq_locked(struct swnic_ep *ep, bool engine, bool retry);

/*
 * Consume the send queue. Each entry first reserves its completion slot,
 * so a full CQ stops consumption instead of losing a completion. With
 * RM_ENABLED a target that is out of resources (EAGAIN) leaves the entry in
 * the ring to be retried at the next doorbell or engine round. In an
 * @engine round, an entry whose memory is out of reach for now (a
 * receiver, or the poster itself, that keeps its mmap lock) is left in
 * the ring for a later round too, for up to SWNIC_ROUND_FAULT_TIMEOUT
 * (then it is a fault), so that it holds back none of the domain's other
 * engine endpoints.
 *
 * Return: entries consumed, or -EPIPE if the ring is broken.
 */
int swnic_send_process_sq(struct swnic_ep *ep, bool engine)
{
	int ret;

	mutex_lock(&ep->sq_lock);
	ret = swnic_send_sq_locked(ep, engine, false);
	swnic_send_sq_unlock(ep);
	return ret;
}

/**
 * swnic_send_retry_head() - the kernel's own retry of a left SQ head
 * @ep: the endpoint, in a worker on its owner's mm (engine.c)
 *
 * Runs the head only, as a round (memory out of reach leaves it for a
 * later try): what the owner published behind it is for the owner's
 * doorbell, in its own call, which the head's completion wakes it to
 * ring. Never waits for sq_lock: the owner's call may keep it as long as
 * it likes (waiting for its own memory).
 *
 * Return: entries consumed (0 or 1), -EPIPE if the ring is broken, or
 * -EBUSY if someone holds sq_lock.
 */
int swnic_send_retry_head(struct swnic_ep *ep)
{
	int ret;

	if (!mutex_trylock(&ep->sq_lock))
		return -EBUSY;
	ret = swnic_send_sq_locked(ep, true, true);
	swnic_send_sq_unlock(ep);
	return ret;
}

/* @retry: the kernel's own retry of the head (a round: @engine too). */
static int swnic_send_sq_locked(struct swnic_ep *ep, bool engine, bool retry)
{
	struct swnic_sqe sqe;
	int avail, all, done = 0, ret;
	bool later = false, refused = false, silent = false;

	all = swnic_ring_avail(&ep->sq);
	if (all < 0) {
		swnic_fault_reached(&ep->engine_fault);
		return all;
	}
	avail = retry ? min(all, 1) : all;
	ep->round = engine ? &ep->engine_fault : NULL;
	while (done < avail) {
		/* Its file is released: its port may not stay its own. */
		if (READ_ONCE(ep->closing))
			break;
		/*
		 * The caller is being killed: what is left waits in the
		 * ring (each send may wait for its target's memory).
		 */
		if (fatal_signal_pending(current))
			break;
		if (!swnic_cq_reserve(ep->tx_cq))
			break;
		swnic_ring_peek(&ep->sq, &sqe);
		/*
		 * A fence: nothing earlier may still be completing. The
		 * deferred completions counted are those of the TX CQ (every
		 * endpoint on it: a shared CQ fences more, never less). The
		 * provider rings again when it reads completions.
		 */
		if ((sqe.flags & SWNIC_SQE_FENCE) &&
		    atomic_read(&ep->tx_cq->deferred)) {
			swnic_cq_unreserve(ep->tx_cq);
			break;
		}
		if (test_and_clear_bit(swnic_ring_slot_index(&ep->sq, 0),
				       ep->sq_cancelled))
			ret = -ECANCELED;
		else
			ret = swnic_sqe_check(&sqe);
		if (!ret && (sqe.flags & SWNIC_SQE_TRIGGER)) {
			/* Kept by the kernel with its CQ slot (trig.c). */
			ret = swnic_trig_queue_sqe(ep, &sqe);
			if (!ret) {
				silent = true;	/* completes when it runs */
				swnic_fault_reached(&ep->engine_fault);
				swnic_ring_consume(&ep->sq);
				done++;
				continue;
			}
		} else if (!ret) {
			ret = swnic_send_exec(ep, &sqe);
		}
		if (ret == -EAGAIN && (ep->flags & SWNIC_EP_F_RM_ENABLED)) {
			swnic_cq_unreserve(ep->tx_cq);
			refused = true;
			break;
		}
		if (ret == -SWNIC_EFAULTLATER) {
			swnic_cq_unreserve(ep->tx_cq);
			swnic_fault_later(&ep->engine_fault);
			later = true;
			break;
		}
		swnic_fault_reached(&ep->engine_fault);

		ep->tx_ops++;
		if (ret < 0)
			ep->tx_errors++;
		else
			ep->tx_bytes += sqe.len;
		/* A deferred send's slot is held until a receive takes it. */
		if (ret != SWNIC_DELIVER_DEFERRED)
			swnic_complete_send(ep, &sqe, ret);
		/* Gone with no completion to write, now or later. */
		silent = ret >= 0 && !(sqe.flags & SWNIC_SQE_COMPLETION);
		swnic_ring_consume(&ep->sq);
		done++;
	}
	/*
	 * Only an operation this round left at the head waits: one that
	 * stopped for another reason (the CQ full, a fence) starts its bound
	 * anew when it is tried again, and the engine may park the endpoint.
	 */
	if (!later)
		swnic_fault_reached(&ep->engine_fault);
	ep->round = NULL;
	/*
	 * What waits at the head for the target's room or for memory is
	 * tried again without the owner: it may sleep on its CQ's fd, which
	 * only the completion makes readable. So is what waits behind a head
	 * that the kernel's own retry ran with no completion to write:
	 * nothing would wake the owner to ring for it.
	 */
	swnic_engine_sq_retry(ep, refused || later,
			      retry && silent && all > done);
	return done;
}

/**
 * swnic_send_run_one() - run a triggered SQE whose threshold was met
 * @ep: the poster; the SQE's TX CQ slot is reserved
 * @sqe: the SQE, without SWNIC_SQE_TRIGGER
 * @status: 0 to run it, or the error to complete it with unrun
 * @trig: the triggered work (its completion counter, trig.c)
 * @last: an RM_ENABLED target out of resources completes it with EAGAIN
 *	  (else it is left to be tried again)
 * @fault: its wait for memory out of reach: a round, as the engine's
 *
 * In the trigger workqueue with the poster's mm (trig.c), through the
 * same checks, transports and completion as the SQ's entries. Memory out
 * of reach (the receiver's, or the poster's own: either may keep its mmap
 * lock) leaves it to be tried again, as in an engine round, until its
 * last try (@fault): a worker of the queue every user's triggered work
 * shares never sleeps on it, nor on the SQ's lock, which the owner's
 * doorbell holds meanwhile.
 *
 * Return: -EAGAIN if it was not run and is to be tried again (its slot
 * stays reserved), else 0.
 */
int swnic_send_run_one(struct swnic_ep *ep, const struct swnic_sqe *sqe,
		       int status, struct swnic_trig *trig, bool last,
		       struct swnic_fault_wait *fault)
{
	int ret = status;

	if (!mutex_trylock(&ep->sq_lock)) {
		/*
		 * The owner's doorbell consumes the SQ, and in its own call
		 * may wait for its own memory as long as it likes (it keeps
		 * its mmap lock): a worker of the queue every user's
		 * triggered work shares does not wait for it. Tried again
		 * when the doorbell lets go (swnic_send_sq_unlock()), or a
		 * tick later, for as long as it is held. Work to complete
		 * unrun, or on its last try (the domain's file is closed:
		 * cancelled), completes without it: no one else runs it.
		 */
		if (!ret && !READ_ONCE(fault->last)) {
			WRITE_ONCE(ep->sq_contended, true);
			return -EAGAIN;
		}
		if (READ_ONCE(ep->closing))
			swnic_cq_unreserve(ep->tx_cq);
		else
			swnic_complete_send_trig(ep, trig, sqe,
						 ret ?: -ECANCELED);
		return 0;
	}
	/* Released meanwhile: dropped, as trig.c drops it for a dead one. */
	if (READ_ONCE(ep->closing)) {
		swnic_cq_unreserve(ep->tx_cq);
		mutex_unlock(&ep->sq_lock);
		return 0;
	}
	ep->trig_running = trig;
	ep->round = fault;
	if (!ret)
		ret = swnic_sqe_check(sqe);
	if (!ret)
		ret = swnic_send_exec(ep, sqe);
	if (ret == -SWNIC_EFAULTLATER)
		swnic_fault_later(fault);
	else
		swnic_fault_reached(fault);
	ep->round = NULL;
	if (ret == -SWNIC_EFAULTLATER ||
	    (ret == -EAGAIN && (ep->flags & SWNIC_EP_F_RM_ENABLED) && !last)) {
		ep->trig_running = NULL;
		mutex_unlock(&ep->sq_lock);
		return -EAGAIN;
	}
	ep->tx_ops++;
	if (ret < 0)
		ep->tx_errors++;
	else
		ep->tx_bytes += sqe->len;
	if (ret != SWNIC_DELIVER_DEFERRED)
		swnic_complete_send(ep, sqe, ret);
	ep->trig_running = NULL;
	mutex_unlock(&ep->sq_lock);
	return 0;
}

/**
 * swnic_send_cancel() - SWNIC_IOCTL_EP_CANCEL with SWNIC_CANCEL_SEND
 * @ep: the endpoint, in its owner's context
 * @context: the SQE's context
 * @trig: an SQE with SWNIC_SQE_TRIGGER only (SWNIC_CANCEL_TRIG)
 *
 * Marks the first unconsumed, not yet cancelled SQE with @context: its
 * consumption (the caller rings the doorbell) completes it with ECANCELED
 * instead of executing it.
 *
 * Return: 0, -ENOENT if no such SQE waits, -EPIPE if the ring is broken.
 */
int swnic_send_cancel(struct swnic_ep *ep, u64 context, bool trig)
{
	struct swnic_sqe sqe;
	int avail, i, ret = -ENOENT;

	/* A triggered SQE the kernel keeps completes with ECANCELED soon. */
	if (!swnic_trig_cancel_sqe(ep, context))
		return 0;
	mutex_lock(&ep->sq_lock);
	avail = swnic_ring_avail(&ep->sq);
	if (avail < 0)
		ret = avail;
	for (i = 0; i < avail; i++) {
		u32 slot = swnic_ring_slot_index(&ep->sq, i);

		swnic_ring_peek_at(&ep->sq, i, &sqe);
		if (sqe.context != context || test_bit(slot, ep->sq_cancelled) ||
		    (trig && !(sqe.flags & SWNIC_SQE_TRIGGER)))
			continue;
		set_bit(slot, ep->sq_cancelled);
		ret = 0;
		break;
	}
	mutex_unlock(&ep->sq_lock);
	return ret;
}
