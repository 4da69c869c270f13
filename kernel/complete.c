// SPDX-License-Identifier: GPL-2.0
/*
 * Completions: every CQ entry and counter update the data path makes -
 * a receive's, a send's (at once, or deferred until a receive takes it).
 * The CQ slot of each was reserved before the work started (cq.c), so a
 * completion is never lost to a full CQ.
 */
#include "cntr.h"
#include "trig.h"
#include "complete.h"
#include "cq.h"
#include "ep.h"

/**
 * swnic_complete_recv_to() - post a receive completion of @ep, count it
 * @ep: the endpoint the message arrived at (the rx_lock of its receive
 *	side held: its own, or its shared receive context's)
 * @cqe: the completion
 * @data: @len bytes carried in the entry (SWNIC_CQE_INLINE), or NULL
 * @len: bytes at @data
 * @reserved: a slot was reserved (swnic_cq_reserve)
 * @cntr: the counter it counts in (a triggered receive's), or NULL
 *
 * Return: 0, or -EAGAIN if unreserved and the CQ is full (not counted).
 */
int swnic_complete_recv_to(struct swnic_ep *ep, const struct swnic_cqe *cqe,
			   const void *data, u32 len, bool reserved,
			   struct swnic_cntr *cntr)
{
	int ret;

	lockdep_assert_held(&swnic_ep_rx(ep)->rx_lock);
	ret = swnic_cq_post_inline(ep->rx_cq, cqe, data, len, reserved);
	if (!ret)
		swnic_cntr_inc(cntr, cqe->flags & SWNIC_CQE_ERROR);
	return ret;
}

/* As swnic_complete_recv_to(), counted in the endpoint's RECV counter. */
int swnic_complete_recv(struct swnic_ep *ep, const struct swnic_cqe *cqe,
			const void *data, u32 len, bool reserved)
{
	return swnic_complete_recv_to(ep, cqe, data, len, reserved,
				      ep->cntr[SWNIC_EP_CNTR_RECV]);
}

/**
 * swnic_complete_rma_target() - a peer's RMA reached @dst's memory
 * @dst: the target endpoint
 * @src: the initiator
 * @sqe: the RMA; a write with remote CQ data has a slot reserved on
 *	 @dst's receive CQ
 *
 * The target counts what reached its memory (FI_RMA_EVENT) and, for a
 * write with remote CQ data, gets a completion - with no target process
 * involved.
 */
void swnic_complete_rma_target(struct swnic_ep *dst, struct swnic_ep *src,
			       const struct swnic_sqe *sqe)
{
	bool write = sqe->opcode == SWNIC_OP_WRITE;
	struct swnic_cqe cqe = {
		.flags = SWNIC_CQE_REMOTE_WRITE | SWNIC_CQE_REMOTE_DATA,
		.data = sqe->data,
		.len = sqe->len,
		.src_addr = (__force u32)src->addr,
		.src_port = swnic_ep_src_port(src),
	};

	swnic_cntr_inc(dst->cntr[write ? SWNIC_EP_CNTR_REMOTE_WRITE :
					 SWNIC_EP_CNTR_REMOTE_READ], false);
	if (write && (sqe->flags & SWNIC_SQE_REMOTE_DATA))
		swnic_cq_post(dst->rx_cq, &cqe, true);
}

/* Which of the poster's counters an SQE counts in. */
static unsigned int swnic_sqe_cntr(const struct swnic_sqe *sqe)
{
	switch (sqe->opcode) {
	case SWNIC_OP_WRITE:
	case SWNIC_OP_ATOMIC:
		return SWNIC_EP_CNTR_WRITE;
	case SWNIC_OP_READ:
	case SWNIC_OP_FETCH_ATOMIC:
	case SWNIC_OP_COMPARE_ATOMIC:
		return SWNIC_EP_CNTR_READ;
	default:
		return SWNIC_EP_CNTR_SEND;
	}
}

static u32 swnic_sqe_cqe_flags(const struct swnic_sqe *sqe)
{
	switch (sqe->opcode) {
	case SWNIC_OP_TSEND:
		return SWNIC_CQE_SEND | SWNIC_CQE_TAGGED;
	case SWNIC_OP_WRITE:
	case SWNIC_OP_ATOMIC:
		return SWNIC_CQE_RMA_WRITE;
	case SWNIC_OP_READ:
	case SWNIC_OP_FETCH_ATOMIC:
	case SWNIC_OP_COMPARE_ATOMIC:
		return SWNIC_CQE_RMA_READ;
	default:
		return SWNIC_CQE_SEND;
	}
}

/**
 * swnic_complete_send_trig() - complete an SQE into its slot
 * @ep: the poster; a TX CQ slot is reserved
 * @trig: the triggered work it is (its counter, trig.c), or NULL
 * @sqe: the work request
 * @ret: its outcome: 0, or the poster's -errno
 *
 * Counts it, and posts its completion if it failed or asked for one
 * (SWNIC_SQE_COMPLETION), else gives the slot back. Needs no lock of the
 * poster's: for work no one else can be running.
 */
void swnic_complete_send_trig(struct swnic_ep *ep, struct swnic_trig *trig,
			      const struct swnic_sqe *sqe, int ret)
{
	struct swnic_cqe cqe = { .context = sqe->context };

	swnic_cntr_inc(swnic_trig_cntr(trig, ep, swnic_sqe_cntr(sqe)), ret);
	cqe.flags = swnic_sqe_cqe_flags(sqe);
	if (ret) {
		cqe.flags |= SWNIC_CQE_ERROR;
		cqe.err = -ret;
	} else {
		cqe.len = sqe->len;
	}
	if (ret || (sqe->flags & SWNIC_SQE_COMPLETION))
		swnic_cq_post(ep->tx_cq, &cqe, true);
	else
		swnic_cq_unreserve(ep->tx_cq);
}

/**
 * swnic_complete_send() - complete the SQE being run into its slot
 * @ep: the poster (its sq_lock held); a TX CQ slot is reserved
 * @sqe: the work request
 * @ret: its outcome: 0, or the poster's -errno
 *
 * As swnic_complete_send_trig(), for the triggered work being run if any.
 */
void swnic_complete_send(struct swnic_ep *ep, const struct swnic_sqe *sqe,
			 int ret)
{
	lockdep_assert_held(&ep->sq_lock);
	swnic_complete_send_trig(ep, ep->trig_running, sqe, ret);
}

/**
 * swnic_deferred_hold() - hold a work request's completion for later
 * @d: where
 * @src: the poster; its TX CQ slot for @sqe is reserved
 * @sqe: the work request (any opcode: the wire completes every one when
 *	 the peer answers)
 */
void swnic_deferred_hold(struct swnic_deferred *d, struct swnic_ep *src,
			 const struct swnic_sqe *sqe)
{
	*d = (struct swnic_deferred) {};
	swnic_cq_get(src->tx_cq);
	d->cq = src->tx_cq;
	atomic_inc(&d->cq->deferred);	/* what a fence waits for */
	d->cntr = swnic_trig_sqe_cntr(src, swnic_sqe_cntr(sqe));
	if (d->cntr)
		swnic_cntr_get(d->cntr);
	d->context = sqe->context;
	d->flags = swnic_sqe_cqe_flags(sqe);
	d->success = sqe->flags & SWNIC_SQE_COMPLETION;
}

/**
 * swnic_deferred_init() - hold a send's completion until a receive takes it
 * @d: where (zeroed for a send that needs none)
 * @src: the sender; its TX CQ slot for @sqe is reserved
 * @sqe: the send; only SWNIC_SQE_DELIVERY sends defer
 */
void swnic_deferred_init(struct swnic_deferred *d, struct swnic_ep *src,
			 const struct swnic_sqe *sqe)
{
	if (!(sqe->flags & SWNIC_SQE_DELIVERY)) {
		*d = (struct swnic_deferred) {};
		return;
	}
	swnic_deferred_hold(d, src, sqe);
}

/**
 * swnic_complete_deferred() - complete a deferred send
 * @d: its completion (nothing happens if none was deferred)
 * @len: bytes sent
 * @err: 0 when a receive took it (or FI_DISCARD dropped it), else why it
 *	 never will be
 */
void swnic_complete_deferred(struct swnic_deferred *d, u32 len, int err)
{
	struct swnic_cqe cqe = {
		.context = d->context,
		.flags = d->flags,
	};
	void (*fn)(void *arg, int err) = d->fn;

	if (fn) {
		d->fn = NULL;
		fn(d->arg, err);
		return;
	}
	if (!d->cq)
		return;
	if (err) {
		cqe.flags |= SWNIC_CQE_ERROR;
		cqe.err = err;
	} else {
		cqe.len = len;
	}
	/* Before the CQE: its reader's doorbell must find a fence open. */
	atomic_dec(&d->cq->deferred);
	if (err || d->success)
		swnic_cq_post(d->cq, &cqe, true);
	else
		swnic_cq_unreserve(d->cq);
	swnic_cq_put(d->cq);
	d->cq = NULL;
	if (d->cntr) {
		swnic_cntr_inc(d->cntr, err);
		swnic_cntr_put(d->cntr);
		d->cntr = NULL;
	}
}
