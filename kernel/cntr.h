/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_CNTR_H
#define _SWNIC_CNTR_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/wait.h>

struct swnic_domain;

/*
 * A counter: two words in a page the kernel increments and its owner maps
 * read-only (struct swnic_cntr_words). Its fd holds one reference, each
 * endpoint counting into it another (and each delivery-complete send
 * waiting to be received).
 */
struct swnic_cntr {
	struct kref ref;
	struct swnic_domain *dom;	/* holds a domain reference */
	u32 id;				/* in dom->cntrs */
	struct page *page;		/* the words; charged to the creator */
	atomic64_t *value;		/* &words->value in @page */
	atomic64_t *err;		/* &words->err in @page */
	/*
	 * Triggered work waiting on it (trig.c), under dom->trig.lock, by
	 * threshold then submission: [0] on its value, [1] on value + err
	 * (SWNIC_TRIG_F_SUM). Apart, so that a large error count does not
	 * make every change walk the work that waits on the value.
	 */
	struct list_head trigs[2];
	atomic64_t trig_min[2];		/* lowest threshold of each, S64_MAX */
	bool trig_closed;		/* fd closed: no more work waits on it */
	/*
	 * poll() of its fd: value + err and @gen at the last read() of it.
	 * @gen moves with every update and set (swnic_cntr_apply()): a set
	 * may bring the sum back to what was read.
	 */
	wait_queue_head_t wq;
	atomic64_t armed, armed_gen, gen;
};

void swnic_trig_check(struct swnic_cntr *cntr);
void swnic_cntr_wake(struct swnic_cntr *cntr);

/*
 * May @cntr have reached a threshold waiting on it? After a change,
 * ordered by a full barrier (pairs with the one in swnic_trig_add()).
 */
static inline bool swnic_trig_due(struct swnic_cntr *cntr)
{
	u64 value = atomic64_read(cntr->value);

	return value >= (u64)atomic64_read(&cntr->trig_min[0]) ||
	       value + (u64)atomic64_read(cntr->err) >=
	       (u64)atomic64_read(&cntr->trig_min[1]);
}

/*
 * After a change of @cntr, ordered by a full barrier (pairs with the one
 * in swnic_trig_add(), and with the one in the fd's poll()): triggered
 * work that may be due, and pollers.
 */
static inline void swnic_cntr_changed(struct swnic_cntr *cntr)
{
	if (unlikely(swnic_trig_due(cntr)))
		swnic_trig_check(cntr);
	/* The caller's barrier orders the change before this look. */
	if (unlikely(waitqueue_active(&cntr->wq)))
		swnic_cntr_wake(cntr);
}

int swnic_cntr_create(struct swnic_domain *dom, void *arg);
struct swnic_cntr *swnic_cntr_lookup(struct swnic_domain *dom, u32 id);
void swnic_cntr_put(struct swnic_cntr *cntr);

static inline void swnic_cntr_get(struct swnic_cntr *cntr)
{
	kref_get(&cntr->ref);
}

/* Count one operation, done or failed; @cntr may be NULL (not counted). */
static inline void swnic_cntr_inc(struct swnic_cntr *cntr, bool error)
{
	if (!cntr)
		return;
	atomic64_inc(error ? cntr->err : cntr->value);
	smp_mb__after_atomic();	/* see swnic_cntr_changed() */
	swnic_cntr_changed(cntr);
}

#endif /* _SWNIC_CNTR_H */
