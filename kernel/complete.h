/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_COMPLETE_H
#define _SWNIC_COMPLETE_H

#include <linux/types.h>

#include <linux/swnic_queue.h>

struct swnic_cntr;
struct swnic_cq;
struct swnic_ep;
struct swnic_trig;

/*
 * A send's completion that waits for a later event (SWNIC_SQE_DELIVERY: a
 * receive taking the message): its CQ slot is reserved at the start.
 */
struct swnic_deferred {
	struct swnic_cq *cq;		/* referenced, a slot reserved; or NULL */
	struct swnic_cntr *cntr;	/* the sender's, referenced, or NULL */
	u64 context;
	u32 flags;			/* the CQE's: SWNIC_CQE_SEND [| TAGGED]... */
	bool success;			/* post on success too (COMPLETION) */
	/*
	 * Or, instead of a CQ: called once with the outcome (0 or a
	 * positive errno), under the receiver's rx_lock (the wire's sender
	 * is on another host: its answer goes out later, udp_exec.c).
	 */
	void (*fn)(void *arg, int err);
	void *arg;
};

int swnic_complete_recv(struct swnic_ep *ep, const struct swnic_cqe *cqe,
			const void *data, u32 len, bool reserved);
int swnic_complete_recv_to(struct swnic_ep *ep, const struct swnic_cqe *cqe,
			   const void *data, u32 len, bool reserved,
			   struct swnic_cntr *cntr);
void swnic_complete_rma_target(struct swnic_ep *dst, struct swnic_ep *src,
			       const struct swnic_sqe *sqe);
void swnic_complete_send_trig(struct swnic_ep *ep, struct swnic_trig *trig,
			      const struct swnic_sqe *sqe, int ret);
void swnic_complete_send(struct swnic_ep *ep, const struct swnic_sqe *sqe,
			 int ret);
void swnic_deferred_hold(struct swnic_deferred *d, struct swnic_ep *src,
			 const struct swnic_sqe *sqe);
void swnic_deferred_init(struct swnic_deferred *d, struct swnic_ep *src,
			 const struct swnic_sqe *sqe);
void swnic_complete_deferred(struct swnic_deferred *d, u32 len, int err);

#endif /* _SWNIC_COMPLETE_H */
