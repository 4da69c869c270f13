// SPDX-License-Identifier: GPL-2.0
/*
 * Triggered work: work requests the kernel keeps until a counter reaches a
 * threshold (libfabric's FI_TRIGGER and deferred work, include/uapi/linux/
 * swnic_queue.h struct swnic_sqe_trigger). Entries wait on their counter's
 * list, sorted by threshold then submission; every change of a counter
 * (swnic_cntr_inc(), CNTR_UPDATE, triggered counter work) checks the head
 * of that list against the counter and moves what is met, in order, to the
 * domain's ready list. A work item runs the ready list: an SQE through the
 * endpoint's normal send path (send.c) on the poster's mm and memory
 * cgroup, as the engine does; counter work by updating its target.
 *
 * A triggered receive (SWNIC_IOCTL_TRIG_RECV) waits the same way, holding
 * a slot of the endpoint's receive CQ, and is posted to the endpoint by
 * recv_rq.c when due. Work a target refuses for now (EAGAIN: an RM_ENABLED
 * peer out of resources, a receive the endpoint has no room for yet)
 * waits on the domain's retry list and is tried again every
 * SWNIC_TRIG_RETRY_TICK, until SWNIC_TRIG_RETRY_MS after its first try;
 * then it completes with EAGAIN. So does work whose memory is out of
 * reach now (its poster, or a receiver on this host, keeps its mmap lock),
 * until SWNIC_ROUND_FAULT_TIMEOUT after its first such try, as in an
 * engine round (copy.h); then it is a fault. The queue's workers serve
 * every user's triggered work: none sleeps on a lock a user may keep.
 *
 * Lifetimes: an entry holds references to its endpoint and counters; the
 * queued work items hold one to the domain. Closing a counter's fd, an
 * endpoint's fd or the domain's cancels what waits on it: SQEs complete
 * with ECANCELED on the endpoint's transmit CQ (their slot was reserved
 * when they were consumed), receives on its receive CQ, counter work is
 * dropped. Work posted after the domain's file is closed (through an
 * endpoint's fd kept open) is refused as if cancelled by that close:
 * ECANCELED, nothing kept.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "cntr.h"
#include "cq.h"
#include "domain.h"
#include "ep.h"
#include "recv.h"
#include "send.h"
#include "stats.h"
#include "trig.h"

#define SWNIC_TRIG_RETRY_TICK	(HZ / 20)

struct swnic_trig {
	struct list_head node;		/* cntr->trigs, or dom ready list */
	struct swnic_domain *dom;
	struct swnic_cntr *cntr;	/* triggering; referenced */
	u64 threshold;
	u64 seq;
	u32 tflags;			/* SWNIC_TRIG_F_* */
	/* 0, -ECANCELED (complete unrun), -ESHUTDOWN (drop: no one left) */
	int status;
	/* An SQE or receive (@ep != NULL) or counter work (@ep == NULL). */
	struct swnic_ep *ep;		/* referenced */
	struct swnic_cntr *comp;	/* SQE, recv: TRIG_F_CNTR's; work: target */
	bool recv;			/* @rqe, not @sqe */
	struct swnic_sqe sqe;
	struct swnic_rqe rqe;
	unsigned long deadline;		/* refused (EAGAIN): retried until */
	struct swnic_fault_wait fault;	/* its memory out of reach: since */
	u32 upd_flags;			/* counter work: SWNIC_CNTR_UPD_* */
	u64 value;
	u64 cookie;
};

static struct workqueue_struct *swnic_trig_wq;

int swnic_trig_init(void)
{
	swnic_trig_wq = alloc_workqueue("swnic-trig", WQ_UNBOUND, 0);
	return swnic_trig_wq ? 0 : -ENOMEM;
}

/*
 * Work done for a user elsewhere, on the same unbound workqueue (an
 * endpoint's RQ finished for a wire round: recv_rq.c), in @delay jiffies.
 * Return: false if @dwork was queued already.
 */
bool swnic_trig_queue_delayed(struct delayed_work *dwork, unsigned long delay)
{
	return queue_delayed_work(swnic_trig_wq, dwork, delay);
}

/* Module exit: every domain is gone, so every item ran (holds a ref). */
void swnic_trig_exit(void)
{
	destroy_workqueue(swnic_trig_wq);
}

static void swnic_trig_work(struct work_struct *work);
static void swnic_trig_retry_work(struct work_struct *work);

void swnic_trig_domain_init(struct swnic_domain *dom)
{
	struct swnic_trig_domain *td = &dom->trig;

	spin_lock_init(&td->lock);
	INIT_LIST_HEAD(&td->ready);
	INIT_LIST_HEAD(&td->retry);
	INIT_WORK(&td->work, swnic_trig_work);
	INIT_DELAYED_WORK(&td->retry_work, swnic_trig_retry_work);
}

void swnic_trig_cntr_init(struct swnic_cntr *cntr)
{
	for (int i = 0; i < 2; i++) {
		INIT_LIST_HEAD(&cntr->trigs[i]);
		atomic64_set(&cntr->trig_min[i], S64_MAX);
	}
}

static void swnic_trig_free(struct swnic_trig *t)
{
	swnic_obj_dec(SWNIC_OBJ_TRIGGERED);
	if (t->ep)
		swnic_ep_put(t->ep);
	if (t->comp)
		swnic_cntr_put(t->comp);
	swnic_cntr_put(t->cntr);
	kfree(t);
}

/* The lowest thresholds waiting on @cntr, for swnic_trig_due(). */
static void swnic_trig_update_min(struct swnic_cntr *cntr)
{
	struct swnic_trig *t;

	for (int i = 0; i < 2; i++) {
		t = list_first_entry_or_null(&cntr->trigs[i],
					     struct swnic_trig, node);
		atomic64_set(&cntr->trig_min[i],
			     t ? (s64)min_t(u64, t->threshold, S64_MAX) :
			     S64_MAX);
	}
}

/* Which of its counter's lists @t waits on. */
static struct list_head *swnic_trig_list(const struct swnic_trig *t)
{
	return &t->cntr->trigs[!!(t->tflags & SWNIC_TRIG_F_SUM)];
}

/*
 * Of an entry of each list (either NULL), the one that comes first: by
 * threshold, then submission - the one order work on a counter runs in.
 */
static struct swnic_trig *swnic_trig_earlier(struct swnic_trig *a,
					     struct swnic_trig *b)
{
	if (!a || !b)
		return a ?: b;
	if (a->threshold != b->threshold)
		return a->threshold < b->threshold ? a : b;
	return a->seq < b->seq ? a : b;
}

/* Queue the domain's work item (td->lock held); it holds a domain ref. */
static void swnic_trig_kick(struct swnic_domain *dom)
{
	swnic_domain_get(dom);
	if (!queue_work(swnic_trig_wq, &dom->trig.work))
		swnic_domain_put(dom);
}

static bool swnic_trig_met(const struct swnic_trig *t, u64 value, u64 sum)
{
	return t->threshold <= ((t->tflags & SWNIC_TRIG_F_SUM) ? sum : value);
}

/*
 * Move what @cntr now meets to the ready list, in threshold then
 * submission order; td->lock held. Each list is sorted: its first entry
 * not met ends it, and the walk visits what moves, and one more a list.
 */
static void swnic_trig_scan(struct swnic_cntr *cntr)
{
	struct swnic_domain *dom = cntr->dom;
	struct swnic_trig *t;
	u64 value, sum;
	bool moved = false;

	value = atomic64_read(cntr->value);
	sum = value + atomic64_read(cntr->err);
	for (;;) {
		struct swnic_trig *a, *b;

		a = list_first_entry_or_null(&cntr->trigs[0],
					     struct swnic_trig, node);
		b = list_first_entry_or_null(&cntr->trigs[1],
					     struct swnic_trig, node);
		if (a && !swnic_trig_met(a, value, sum))
			a = NULL;
		if (b && !swnic_trig_met(b, value, sum))
			b = NULL;
		t = swnic_trig_earlier(a, b);
		if (!t)
			break;
		list_move_tail(&t->node, &dom->trig.ready);
		moved = true;
	}
	swnic_trig_update_min(cntr);
	if (moved)
		swnic_trig_kick(dom);
}

/**
 * swnic_trig_check() - a counter changed: start what it now triggers
 * @cntr: the counter; after the change, ordered by a full barrier
 *
 * Called from swnic_cntr_inc() when the counter may have reached the
 * lowest threshold waiting on it, in any context.
 */
void swnic_trig_check(struct swnic_cntr *cntr)
{
	struct swnic_trig_domain *td = &cntr->dom->trig;
	unsigned long irqflags;

	spin_lock_irqsave(&td->lock, irqflags);
	swnic_trig_scan(cntr);
	spin_unlock_irqrestore(&td->lock, irqflags);
}

/*
 * Add @t to its counter's list (sorted by threshold; equal thresholds in
 * submission order), then look at the counter once more: a change that
 * read the old minimum before the entry was there is not missed (the
 * barrier pairs with the one in swnic_cntr_inc()). Return: 0, -ENOENT
 * (its counter's fd closed), -ECANCELED (the domain's), -ENOSPC.
 */
static int swnic_trig_add(struct swnic_trig *t)
{
	struct swnic_trig_domain *td = &t->dom->trig;
	struct swnic_cntr *cntr = t->cntr;
	struct swnic_trig *pos;
	unsigned long irqflags;

	spin_lock_irqsave(&td->lock, irqflags);
	if (cntr->trig_closed) {
		/* Its fd was closed after the lookup. */
		spin_unlock_irqrestore(&td->lock, irqflags);
		return -ENOENT;
	}
	/*
	 * The domain's file is closed (an endpoint's or counter's fd kept):
	 * what waited was cancelled then, and so is what comes later, at
	 * once. Else it would wait outside every limit: nothing counts a
	 * closed domain against its user, and its entries stay until the
	 * last fd goes.
	 */
	if (td->closed) {
		spin_unlock_irqrestore(&td->lock, irqflags);
		return -ECANCELED;
	}
	if (td->count >= SWNIC_TRIG_MAX) {
		spin_unlock_irqrestore(&td->lock, irqflags);
		return -ENOSPC;
	}
	td->count++;
	t->seq = td->seq++;
	list_for_each_entry_reverse(pos, swnic_trig_list(t), node)
		if (pos->threshold <= t->threshold)
			break;
	list_add(&t->node, &pos->node);
	swnic_trig_update_min(cntr);
	/* Minimum store before the counter loads; pairs with cntr.h's. */
	smp_mb();
	swnic_trig_scan(cntr);
	spin_unlock_irqrestore(&td->lock, irqflags);
	return 0;
}

static struct swnic_trig *swnic_trig_alloc(struct swnic_domain *dom,
					   u32 cntr_id, u64 threshold,
					   u32 tflags, int *err)
{
	struct swnic_trig *t;

	t = kzalloc(sizeof(*t), SWNIC_POST_GFP);
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	swnic_obj_inc(SWNIC_OBJ_TRIGGERED);
	t->dom = dom;
	t->threshold = threshold;
	t->tflags = tflags;
	t->cntr = swnic_cntr_lookup(dom, cntr_id);
	if (!t->cntr) {
		swnic_obj_dec(SWNIC_OBJ_TRIGGERED);
		kfree(t);
		*err = -ENOENT;
		return NULL;
	}
	return t;
}

/**
 * swnic_trig_queue_sqe() - keep a SWNIC_SQE_TRIGGER SQE until its threshold
 * @ep: the poster (sq_lock held); the SQE's TX CQ slot is reserved and
 *	stays so until the SQE completes
 * @sqe: the SQE, checked but for its trigger
 *
 * Return: 0 (the kernel owns it now), or the error it completes with.
 */
int swnic_trig_queue_sqe(struct swnic_ep *ep, const struct swnic_sqe *sqe)
{
	struct swnic_sqe_trigger trig;
	struct swnic_trig *t;
	int ret;

	BUILD_BUG_ON(sizeof(trig) > sizeof(sqe->inline_data));
	memcpy(&trig, sqe->inline_data, sizeof(trig));
	if ((sqe->flags & SWNIC_SQE_INLINE) || trig.__reserved ||
	    (trig.flags & ~(SWNIC_TRIG_F_SUM | SWNIC_TRIG_F_CNTR)) ||
	    (!(trig.flags & SWNIC_TRIG_F_CNTR) && trig.comp_cntr))
		return -EINVAL;
	t = swnic_trig_alloc(ep->dom, trig.cntr_id, trig.threshold, trig.flags,
			     &ret);
	if (!t)
		return ret;
	if ((trig.flags & SWNIC_TRIG_F_CNTR) && trig.comp_cntr) {
		t->comp = swnic_cntr_lookup(ep->dom, trig.comp_cntr);
		if (!t->comp) {
			swnic_trig_free(t);
			return -ENOENT;
		}
	}
	t->sqe = *sqe;
	t->sqe.flags &= ~SWNIC_SQE_TRIGGER;
	memset(t->sqe.inline_data, 0, sizeof(t->sqe.inline_data));
	kref_get(&ep->ref);
	t->ep = ep;
	ret = swnic_trig_add(t);
	if (ret)
		swnic_trig_free(t);
	return ret;
}

/* The entry at @pos or after it, in list @head, that @match picks; NULL. */
static struct swnic_trig *swnic_trig_next_match(struct list_head *pos,
						struct list_head *head,
						bool (*match)(struct swnic_trig *,
							      const void *),
						const void *arg)
{
	struct swnic_trig *t;

	for (; pos != head; pos = pos->next) {
		t = list_entry(pos, struct swnic_trig, node);
		if (!match || match(t, arg))
			return t;
	}
	return NULL;
}

/*
 * Cancel @cntr's waiting entries @match picks (the first only, if @first),
 * in threshold then submission order across its two lists: to the ready
 * list, ECANCELED. @match is asked once an entry, with @first also of
 * the next candidate of each list (it may change only what it picks,
 * as swnic_trig_match_ep(), used without @first, does). Return: how many.
 */
static unsigned int swnic_trig_cancel_cntr(struct swnic_cntr *cntr,
					   bool (*match)(struct swnic_trig *,
							 const void *),
					   const void *arg, bool first)
{
	struct list_head *ready = &cntr->dom->trig.ready;
	struct list_head *ha = &cntr->trigs[0], *hb = &cntr->trigs[1];
	struct swnic_trig *a, *b, *t;
	unsigned int n = 0;

	a = swnic_trig_next_match(ha->next, ha, match, arg);
	b = swnic_trig_next_match(hb->next, hb, match, arg);
	while ((t = swnic_trig_earlier(a, b))) {
		/* The next candidate of its list, before it leaves that. */
		if (t == a)
			a = swnic_trig_next_match(t->node.next, ha, match, arg);
		else
			b = swnic_trig_next_match(t->node.next, hb, match, arg);
		if (!t->status)
			t->status = -ECANCELED;
		list_move_tail(&t->node, ready);
		n++;
		if (first)
			break;
	}
	return n;
}

/* Cancel the waiting entries @match picks: to the ready list, ECANCELED. */
static unsigned int swnic_trig_cancel(struct swnic_domain *dom,
				      struct swnic_cntr *only,
				      bool (*match)(struct swnic_trig *t,
						    const void *arg),
				      const void *arg, bool first)
{
	struct swnic_trig_domain *td = &dom->trig;
	struct swnic_cntr *cntr;
	struct swnic_trig *t, *tmp;
	unsigned long irqflags, id;
	unsigned int n = 0;

	/*
	 * Walk the counters of the domain, or just @only (the xarray's lock
	 * nests outside ours, never the other way). A counter whose fd is
	 * closing may be gone from it already: swnic_trig_cntr_closed()
	 * cancels its work.
	 */
	xa_lock_irqsave(&dom->cntrs, irqflags);
	spin_lock(&td->lock);
	xa_for_each(&dom->cntrs, id, cntr) {
		if (only && cntr != only)
			continue;
		n += swnic_trig_cancel_cntr(cntr, match, arg, first);
		swnic_trig_update_min(cntr);
		if (first && n)
			break;
	}
	/* Work met but refused for now, waiting to be tried again. */
	list_for_each_entry_safe(t, tmp, &td->retry, node) {
		if (first && n)
			break;
		if ((only && t->cntr != only) || (match && !match(t, arg)))
			continue;
		if (!t->status)
			t->status = -ECANCELED;
		list_move_tail(&t->node, &td->ready);
		n++;
	}
	if (n)
		swnic_trig_kick(dom);
	spin_unlock(&td->lock);
	xa_unlock_irqrestore(&dom->cntrs, irqflags);
	return n;
}

static bool swnic_trig_match_ep(struct swnic_trig *t, const void *arg)
{
	if (t->ep != arg)
		return false;
	t->status = -ESHUTDOWN;		/* cancelled without a completion */
	return true;
}

struct swnic_trig_sqe_match {
	struct swnic_ep *ep;
	u64 context;
};

static bool swnic_trig_match_sqe(struct swnic_trig *t, const void *arg)
{
	const struct swnic_trig_sqe_match *m = arg;

	return t->ep == m->ep && !t->recv && t->sqe.context == m->context;
}

static bool swnic_trig_match_rqe(struct swnic_trig *t, const void *arg)
{
	const struct swnic_trig_sqe_match *m = arg;

	return t->ep == m->ep && t->recv && t->rqe.context == m->context;
}

struct swnic_trig_cancel_match {
	u32 flags;			/* SWNIC_TRIG_CANCEL_COOKIE, _SUM */
	u64 cookie;
};

/* What SWNIC_IOCTL_TRIG_CANCEL's flags pick. */
static bool swnic_trig_match_cancel(struct swnic_trig *t, const void *arg)
{
	const struct swnic_trig_cancel_match *m = arg;

	if ((m->flags & SWNIC_TRIG_CANCEL_COOKIE) &&
	    (t->ep || t->cookie != m->cookie))
		return false;
	return !(m->flags & SWNIC_TRIG_CANCEL_SUM) ||
	       (t->tflags & SWNIC_TRIG_F_SUM);
}

/* SWNIC_IOCTL_EP_CANCEL of a triggered SQE. Return: 0 or -ENOENT. */
int swnic_trig_cancel_sqe(struct swnic_ep *ep, u64 context)
{
	struct swnic_trig_sqe_match m = { .ep = ep, .context = context };

	return swnic_trig_cancel(ep->dom, NULL, swnic_trig_match_sqe, &m,
				 true) ? 0 : -ENOENT;
}

/* SWNIC_IOCTL_EP_CANCEL of a triggered receive. Return: 0 or -ENOENT. */
int swnic_trig_cancel_rqe(struct swnic_ep *ep, u64 context)
{
	struct swnic_trig_sqe_match m = { .ep = ep, .context = context };

	return swnic_trig_cancel(ep->dom, NULL, swnic_trig_match_rqe, &m,
				 true) ? 0 : -ENOENT;
}

/*
 * The counter's fd is closed (it is no longer in dom->cntrs): what waits
 * on it is cancelled, and nothing can wait on it any more.
 */
void swnic_trig_cntr_closed(struct swnic_cntr *cntr)
{
	struct swnic_trig_domain *td = &cntr->dom->trig;
	unsigned long irqflags;
	bool moved;

	spin_lock_irqsave(&td->lock, irqflags);
	cntr->trig_closed = true;
	moved = swnic_trig_cancel_cntr(cntr, NULL, NULL, false);
	swnic_trig_update_min(cntr);
	if (moved)
		swnic_trig_kick(cntr->dom);
	spin_unlock_irqrestore(&td->lock, irqflags);
}

/* The endpoint's fd is closed: its SQEs are dropped, CQ slots returned. */
void swnic_trig_ep_closed(struct swnic_ep *ep)
{
	swnic_trig_cancel(ep->dom, NULL, swnic_trig_match_ep, ep, false);
}

/*
 * The domain's file is closed: everything it waits for is cancelled, and
 * nothing is retried any more (so no timer outlives the domain's file,
 * nor the module, once the work queued here has run).
 */
void swnic_trig_domain_closed(struct swnic_domain *dom)
{
	struct swnic_trig_domain *td = &dom->trig;
	unsigned long irqflags;

	spin_lock_irqsave(&td->lock, irqflags);
	td->closed = true;
	spin_unlock_irqrestore(&td->lock, irqflags);
	swnic_trig_cancel(dom, NULL, NULL, NULL, false);
	/* A pending retry tick holds a domain reference: drop it. */
	if (cancel_delayed_work_sync(&td->retry_work))
		swnic_domain_put(dom);
}

/*
 * Counter an SQE of @ep counts into, for complete.c: the endpoint's own
 * (@idx) unless it is triggered work @t with a counter of its own
 * (TRIG_F_CNTR).
 */
struct swnic_cntr *swnic_trig_cntr(struct swnic_trig *t, struct swnic_ep *ep,
				   unsigned int idx)
{
	if (t && (t->tflags & SWNIC_TRIG_F_CNTR))
		return t->comp;
	return ep->cntr[idx];
}

/* Counter the SQE being run counts into (sq_lock held). */
struct swnic_cntr *swnic_trig_sqe_cntr(struct swnic_ep *ep, unsigned int idx)
{
	return swnic_trig_cntr(ep->trig_running, ep, idx);
}

static void swnic_cntr_apply(struct swnic_cntr *cntr, u32 flags, u64 value)
{
	atomic64_t *word = (flags & SWNIC_CNTR_UPD_ERR) ? cntr->err : cntr->value;

	/* Before the word: poll() sees a change even if the sum is as was. */
	atomic64_inc(&cntr->gen);
	smp_mb__after_atomic();	/* pairs with the smp_rmb() of read() */
	if (flags & SWNIC_CNTR_UPD_SET)
		atomic64_set(word, value);
	else
		atomic64_add(value, word);
	smp_mb();	/* see swnic_cntr_changed() */
	swnic_cntr_changed(cntr);
}

/* Run @t's SQE or receive; status: 0, or the error to complete it with. */
static int swnic_trig_run_op(struct swnic_trig *t, int status, bool last)
{
	struct swnic_cntr **cntr;

	if (!t->recv)
		return swnic_send_run_one(t->ep, &t->sqe, status, t, last,
					  &t->fault);
	cntr = (t->tflags & SWNIC_TRIG_F_CNTR) ? &t->comp : NULL;
	return swnic_recv_run_trig(t->ep, &t->rqe, cntr, status, last,
				   &t->fault);
}

/*
 * Run one SQE or receive whose threshold was met (or that was
 * cancelled). Return: -EAGAIN if it is to be tried again later, else 0.
 */
static int swnic_trig_run_xfer(struct swnic_trig *t)
{
	struct swnic_ep *ep = t->ep;
	struct mm_struct *mm = ep->dom->mm;
	struct mem_cgroup *memcg, *old_memcg;
	int status = t->status;
	bool last;
	int ret;

	/*
	 * The endpoint's file is closed, or its owner gone: nobody is left
	 * to read a completion (fi_close discards what is outstanding).
	 */
	if (status == -ESHUTDOWN || READ_ONCE(ep->dead) ||
	    !mmget_not_zero(mm)) {
		swnic_cq_unreserve(t->recv ? ep->rx_cq : ep->tx_cq);
		return 0;
	}
	if (status) {
		swnic_trig_run_op(t, status, true);
		mmput(mm);
		return 0;
	}
	if (!t->deadline)
		t->deadline = jiffies + msecs_to_jiffies(SWNIC_TRIG_RETRY_MS);
	last = time_after_eq(jiffies, t->deadline);
	/* Closing: tried once more, at once (swnic_trig_retry()). */
	if (READ_ONCE(ep->dom->trig.closed)) {
		last = true;
		swnic_fault_give_up(&t->fault);
	}
	memcg = swnic_domain_memcg(ep->dom);
	old_memcg = set_active_memcg(memcg);
	kthread_use_mm(mm);
	ret = swnic_trig_run_op(t, 0, last);
	kthread_unuse_mm(mm);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
	mmput(mm);
	return ret;
}

/*
 * Refused for now: onto the retry list, tried again in a tick. Once the
 * domain's file is closed, at once, for the last time.
 */
static void swnic_trig_retry(struct swnic_domain *dom, struct swnic_trig *t)
{
	struct swnic_trig_domain *td = &dom->trig;
	unsigned long irqflags;

	spin_lock_irqsave(&td->lock, irqflags);
	td->count++;
	if (td->closed) {
		list_add_tail(&t->node, &td->ready);
		swnic_trig_kick(dom);
	} else {
		list_add_tail(&t->node, &td->retry);
		swnic_domain_get(dom);
		if (!queue_delayed_work(swnic_trig_wq, &td->retry_work,
					SWNIC_TRIG_RETRY_TICK))
			swnic_domain_put(dom);
	}
	spin_unlock_irqrestore(&td->lock, irqflags);
}

/**
 * swnic_trig_retry_soon() - try what waits on the retry list now
 * @dom: the domain
 *
 * Any context. Once the domain's file is closed nothing waits there.
 */
void swnic_trig_retry_soon(struct swnic_domain *dom)
{
	struct swnic_trig_domain *td = &dom->trig;
	unsigned long irqflags;

	spin_lock_irqsave(&td->lock, irqflags);
	if (!td->closed) {
		/* A pending tick holds a reference already; an idle one not. */
		swnic_domain_get(dom);
		if (mod_delayed_work(swnic_trig_wq, &td->retry_work, 0))
			swnic_domain_put(dom);
	}
	spin_unlock_irqrestore(&td->lock, irqflags);
}

/* A tick later: what waits on the retry list is ready again. */
static void swnic_trig_retry_work(struct work_struct *work)
{
	struct swnic_domain *dom = container_of(to_delayed_work(work),
						struct swnic_domain,
						trig.retry_work);
	struct swnic_trig_domain *td = &dom->trig;
	unsigned long irqflags;

	spin_lock_irqsave(&td->lock, irqflags);
	if (!list_empty(&td->retry)) {
		list_splice_tail_init(&td->retry, &td->ready);
		swnic_trig_kick(dom);
	}
	spin_unlock_irqrestore(&td->lock, irqflags);
	swnic_domain_put(dom);
}

static void swnic_trig_work(struct work_struct *work)
{
	struct swnic_domain *dom = container_of(work, struct swnic_domain,
						trig.work);
	struct swnic_trig_domain *td = &dom->trig;
	struct swnic_trig *t;
	unsigned long irqflags;

	for (;;) {
		spin_lock_irqsave(&td->lock, irqflags);
		t = list_first_entry_or_null(&td->ready, struct swnic_trig,
					     node);
		if (t) {
			list_del(&t->node);
			td->count--;
		}
		spin_unlock_irqrestore(&td->lock, irqflags);
		if (!t)
			break;
		if (t->ep && swnic_trig_run_xfer(t) == -EAGAIN) {
			swnic_trig_retry(dom, t);
			cond_resched();
			continue;
		}
		if (!t->ep && !t->status)
			swnic_cntr_apply(t->comp, t->upd_flags, t->value);
		swnic_trig_free(t);
		cond_resched();
	}
	swnic_domain_put(dom);
}

/* SWNIC_IOCTL_CNTR_UPDATE */
int swnic_trig_ioctl_cntr_update(struct swnic_domain *dom, void *arg)
{
	struct swnic_cntr_update *u = arg;
	struct swnic_cntr *cntr;

	if (u->flags & ~(SWNIC_CNTR_UPD_SET | SWNIC_CNTR_UPD_ERR))
		return -EOPNOTSUPP;
	if (u->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;
	cntr = swnic_cntr_lookup(dom, u->cntr_id);
	if (!cntr)
		return -ENOENT;
	swnic_cntr_apply(cntr, u->flags, u->value);
	swnic_cntr_put(cntr);
	return 0;
}

/* SWNIC_IOCTL_TRIG_CNTR */
int swnic_trig_ioctl_cntr(struct swnic_domain *dom, void *arg)
{
	struct swnic_trig_cntr *c = arg;
	struct swnic_trig *t;
	int ret;

	if (c->flags & ~(SWNIC_CNTR_UPD_SET | SWNIC_CNTR_UPD_ERR) ||
	    c->trig_flags & ~SWNIC_TRIG_F_SUM)
		return -EOPNOTSUPP;
	if (c->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;
	t = swnic_trig_alloc(dom, c->cntr_id, c->threshold, c->trig_flags,
			     &ret);
	if (!t)
		return ret;
	t->comp = swnic_cntr_lookup(dom, c->target);
	if (!t->comp) {
		swnic_trig_free(t);
		return -ENOENT;
	}
	t->upd_flags = c->flags;
	t->value = c->value;
	t->cookie = c->cookie;
	ret = swnic_trig_add(t);
	if (ret)
		swnic_trig_free(t);
	return ret;
}

/* SWNIC_IOCTL_TRIG_RECV, on an endpoint's fd */
int swnic_trig_ioctl_recv(struct swnic_ep *ep, void *arg)
{
	struct swnic_trig_recv *r = arg;
	struct swnic_sqe_trigger *trig = &r->trig;
	struct swnic_trig *t;
	int ret;

	if (r->flags)
		return -EOPNOTSUPP;
	if (trig->__reserved ||
	    (trig->flags & ~(SWNIC_TRIG_F_SUM | SWNIC_TRIG_F_CNTR)) ||
	    (!(trig->flags & SWNIC_TRIG_F_CNTR) && trig->comp_cntr))
		return -EINVAL;
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	/*
	 * Not on a shared receive context (no CQ to hold a slot of) nor on
	 * a member of one (its receives are the context's).
	 */
	if (swnic_ep_is_srx(ep) || ep->srx)
		return -EOPNOTSUPP;
	ret = swnic_rqe_check(&r->rqe);
	if (ret)
		return ret;
	t = swnic_trig_alloc(ep->dom, trig->cntr_id, trig->threshold,
			     trig->flags, &ret);
	if (!t)
		return ret;
	if ((trig->flags & SWNIC_TRIG_F_CNTR) && trig->comp_cntr) {
		t->comp = swnic_cntr_lookup(ep->dom, trig->comp_cntr);
		if (!t->comp) {
			swnic_trig_free(t);
			return -ENOENT;
		}
	}
	/* Its completion's slot, held until it is posted or completes. */
	if (!swnic_cq_reserve(ep->rx_cq)) {
		swnic_trig_free(t);
		return -EAGAIN;
	}
	t->recv = true;
	t->rqe = r->rqe;
	kref_get(&ep->ref);
	t->ep = ep;
	ret = swnic_trig_add(t);
	if (ret) {
		swnic_cq_unreserve(ep->rx_cq);
		swnic_trig_free(t);
	}
	return ret;
}

/* SWNIC_IOCTL_TRIG_CANCEL */
int swnic_trig_ioctl_cancel(struct swnic_domain *dom, void *arg)
{
	struct swnic_trig_cancel *c = arg;
	struct swnic_trig_cancel_match m = {
		.flags = c->flags &
			 (SWNIC_TRIG_CANCEL_COOKIE | SWNIC_TRIG_CANCEL_SUM),
		.cookie = c->cookie,
	};
	struct swnic_cntr *only = NULL;

	if (c->flags & ~(SWNIC_TRIG_CANCEL_CNTR | SWNIC_TRIG_CANCEL_COOKIE |
			 SWNIC_TRIG_CANCEL_SUM))
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;
	if (c->flags & SWNIC_TRIG_CANCEL_CNTR) {
		only = swnic_cntr_lookup(dom, c->cntr_id);
		if (!only)
			return -ENOENT;
	}
	c->count = swnic_trig_cancel(dom, only,
				     m.flags ? swnic_trig_match_cancel : NULL,
				     &m, c->flags & SWNIC_TRIG_CANCEL_COOKIE);
	if (only)
		swnic_cntr_put(only);
	if ((c->flags & SWNIC_TRIG_CANCEL_COOKIE) && !c->count)
		return -ENOENT;
	return 0;
}
