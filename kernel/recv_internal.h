/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the receive side's two files share (recv.c, recv_rq.c; nothing
 * else includes it): posted receives, unexpected messages, faults under
 * rx_lock, and the functions one calls in the other.
 */
#ifndef _SWNIC_RECV_INTERNAL_H
#define _SWNIC_RECV_INTERNAL_H

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "cntr.h"
#include "complete.h"
#include "copy.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "ep.h"
#include "help.h"
#include "mr.h"
#include "recv.h"
#include "stats.h"
#include "trig.h"

/*
 * A copy under rx_lock that finds a page missing, or the destination's
 * mmap lock taken, faults in with no lock held and tries again. When the
 * fault-in succeeds the cause was short and benign: khugepaged
 * collapsing the pages, migration, reclaim. When it finds the mmap lock
 * taken it may be benign (the receiver's other threads mapping or
 * unmapping memory) or not (a receiver that keeps its lock: copy.c), and
 * it does not wait for it. Either way, try again, yielding, then a tick
 * at a time; only a destination that stays out of reach for
 * SWNIC_FAULT_TIMEOUT gets the fault (a hostile receiver holds back the
 * messages sent to it, and no more): swnic_fault_retry(). A wire round
 * tries again in later rounds instead, and a worker finishing an RQ for
 * one, for SWNIC_ROUND_FAULT_TIMEOUT (the lock may be khugepaged's, for
 * seconds: copy.h). A fault-in that fails is a fault at once.
 */

/* What a NOFAULT copy under rx_lock needs faulted in before a retry. */
struct swnic_fault {
	const void __user *src;		/* in the current address space */
	size_t src_len;
	struct mm_struct *mm;		/* the destination's */
	u64 dst;
	size_t dst_len;
};

/* A posted receive: the validated copy of its RQE. */
struct swnic_recv {
	struct list_head node;
	struct swnic_rqe rqe;
	u64 used;			/* MULTI_RECV: bytes filled so far */
	/* A triggered receive's (TRIG_F_CNTR): referenced, or NULL */
	struct swnic_cntr *cntr;
	bool own_cntr;			/* count in @cntr, not the RECV one */
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
	u16 key_index;			/* the sender's key, as the ep holds it */
	u32 len;
	/*
	 * The endpoint it arrived at, whose CQ its receive completes on: the
	 * holder of the list itself, or a member of that shared receive
	 * context, whose flush takes it off (so it is never left dangling).
	 */
	struct swnic_ep *ep;
	/* SWNIC_SQE_DELIVERY: the sender's completion, posted when taken */
	struct swnic_deferred notify;
	u8 *payload;			/* @inl, or an allocation of its own */
	u8 inl[];
};

/* recv.c */
void swnic_fault_set_dst(struct swnic_fault *f, struct mm_struct *mm,
			 u64 dst, size_t len);
int swnic_fault_in(const struct swnic_fault *f);
void swnic_unexp_free(struct swnic_unexp *u);
void swnic_recv_unexp_account(long msgs, long bytes);
void swnic_recv_unexp_changed(struct swnic_ep *ep);
void swnic_recv_free(struct swnic_ep *ep, struct swnic_recv *recv);
struct swnic_recv *swnic_recv_alloc(struct swnic_ep *ep);
struct swnic_cntr *swnic_recv_cntr(struct swnic_ep *ep,
				   const struct swnic_recv *recv);
struct swnic_unexp *swnic_recv_match_unexp(struct swnic_ep *ep,
					   const struct swnic_rqe *rqe);
void swnic_recv_cqe(struct swnic_cqe *cqe, const struct swnic_rqe *rqe,
		    u64 off, u64 msg_len, bool tagged, u64 tag,
		    bool has_data, u64 data, __be32 src_addr,
		    u16 src_port, u16 key_index);

/* recv_rq.c */
int swnic_recv_process_rq_faulting(struct swnic_ep *ep,
				   const struct swnic_fault *first, bool sender);
void swnic_recv_rq_defer(struct swnic_ep *ep);
int __swnic_recv_process_rq(struct swnic_ep *ep, bool hard,
			    struct swnic_fault *fault);
int swnic_recv_sender_rq(struct swnic_ep *ep, struct swnic_fault *fault);

#endif /* _SWNIC_RECV_INTERNAL_H */
