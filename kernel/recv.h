/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_RECV_H
#define _SWNIC_RECV_H

#include <linux/types.h>

#include <linux/swnic_queue.h>

#include "copy.h"

struct swnic_cntr;
struct swnic_kmsg;
struct swnic_ep;
struct work_struct;

/*
 * Where a message comes from: the address its receiver sees and, for a
 * sender on this host, its endpoint (its deferred completion is posted by
 * the receive that takes the message). The wire's senders have none.
 */
struct swnic_msg_src {
	struct swnic_ep *ep;
	__be32 addr;
	u16 port;
	u32 auth_key;		/* the key it was sent with (0: none) */
	/*
	 * No @ep (the wire): a SWNIC_SQE_DELIVERY send buffered as unexpected
	 * calls @notify(@notify_arg, outcome) when a receive takes it or it
	 * is dropped (struct swnic_deferred.fn); NULL: no deferral.
	 */
	void (*notify)(void *arg, int err);
	void *notify_arg;
	/*
	 * The wire: the payload in the packets it came in (the caller's
	 * kbuf is NULL then), read by swnic_recv_deliver() in place.
	 */
	const struct swnic_kmsg *kmsg;
	/*
	 * A wire round delivers it, holding its namespace's wire: a
	 * destination still out of reach after one fault-in (or whose mmap
	 * lock is taken) is -SWNIC_EFAULTLATER, for a later round, not
	 * retried here; receives of the RQ to fault in are finished by a
	 * worker. @last_try: the fault deadline passed: a destination still
	 * out of reach after that fault-in is a fault.
	 */
	bool round;
	bool last_try;
};

/* swnic_recv_deliver(): buffered, the sender's completion comes later. */
#define SWNIC_DELIVER_DEFERRED	1

int swnic_recv_deliver(struct swnic_ep *dst, const struct swnic_msg_src *src,
		       const struct swnic_sqe *sqe, const void *kbuf);
int swnic_recv_process_rq(struct swnic_ep *ep, bool round);
void swnic_recv_rq_work(struct work_struct *work);
bool swnic_recv_rq_lazy_idle(struct swnic_ep *ep);
int swnic_recv_cancel(struct swnic_ep *ep, u64 context);
int swnic_recv_peek(struct swnic_ep *ep, struct swnic_ep_peek *p);
void swnic_recv_flush(struct swnic_ep *ep);
int swnic_rqe_check(const struct swnic_rqe *rqe);
int swnic_recv_run_trig(struct swnic_ep *ep, const struct swnic_rqe *rqe,
			struct swnic_cntr **cntr, int status, bool last,
			struct swnic_fault_wait *wait);

#endif /* _SWNIC_RECV_H */
