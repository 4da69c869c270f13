/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_CQ_H
#define _SWNIC_CQ_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "ring.h"

struct swnic_domain;
struct swnic_help_job;

/*
 * A completion queue: a ring the kernel produces into from any context
 * that completes work (the poster's, a peer's, the engine's), and user
 * space consumes without syscalls. Its fd holds one reference, each bound
 * endpoint another.
 */
struct swnic_cq {
	struct kref ref;
	struct swnic_domain *dom;	/* holds a domain reference */
	u32 id;				/* in dom->cqs */
	spinlock_t lock;		/* serialises producers of @ring (tasks only) */
	struct swnic_ring ring;
	wait_queue_head_t wq;		/* poll() waiters */
	u32 reserved;			/* slots promised to posters, @lock */
	atomic_t deferred;		/* held completions (swnic_deferred) */
	u64 overflows;			/* completions refused: ring was full */
	bool inline_data;		/* immutable: SWNIC_CQ_F_INLINE_DATA */
	/* help.c: the copy shared now (set and cleared under @lock) */
	struct swnic_help_job __rcu *help_job;
	atomic_t help_skip;		/* large copies not to share */
};

int swnic_cq_create(struct swnic_domain *dom, void *arg);
struct swnic_cq *swnic_cq_lookup(struct swnic_domain *dom, u32 id);
void swnic_cq_put(struct swnic_cq *cq);

static inline void swnic_cq_get(struct swnic_cq *cq)
{
	kref_get(&cq->ref);
}

bool swnic_cq_reserve(struct swnic_cq *cq);
void swnic_cq_unreserve(struct swnic_cq *cq);
int swnic_cq_post_inline(struct swnic_cq *cq, const struct swnic_cqe *cqe,
			 const void *data, u32 len, bool reserved);
int swnic_cq_post(struct swnic_cq *cq, const struct swnic_cqe *cqe,
		  bool reserved);

#endif /* _SWNIC_CQ_H */
