// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: scheduling and progress only. A doorbell progresses an
 * endpoint's rings (recv_rq.c, then send.c) in the poster's context, or puts
 * the endpoint on its domain's engine (SWNIC_EP_F_DB_ENGINE), a work item
 * on an unbound workqueue that runs on the poster's mm, with the
 * NEED_WAKEUP protocol of include/uapi/linux/swnic_queue.h between it and
 * user space.
 *
 * An engine per domain, not per device: what it runs may wait for memory
 * out of reach (an owner, or a receiver, that keeps its mmap lock: in
 * later rounds, up to SWNIC_ROUND_FAULT_TIMEOUT, copy.h). That wait then
 * holds back the operations behind it in its endpoint's SQ, and no other
 * endpoint: each domain's work runs in a worker of its own, up to the
 * workqueue's limit of active items, and no worker sleeps on such memory
 * (a round that made no progress comes again a tick later, queued).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/workqueue.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>

#include "cq.h"
#include "cntr.h"
#include "device.h"
#include "domain.h"
#include "engine.h"
#include "ep.h"
#include "recv.h"
#include "send.h"
#include "stats.h"

/* Polling rounds without work before an endpoint is put to sleep. */
#define SWNIC_ENGINE_IDLE_ROUNDS	64

static struct workqueue_struct *swnic_engine_wq;

int swnic_engine_init(void)
{
	swnic_engine_wq = alloc_workqueue("swnic-engine", WQ_UNBOUND,
					  WQ_UNBOUND_MAX_ACTIVE);
	return swnic_engine_wq ? 0 : -ENOMEM;
}

/*
 * Engine items queued or waiting a tick, each holding a domain reference:
 * module exit waits for them, as destroy_workqueue() does not wait for a
 * timer (swnic_engine_queue()).
 */
static atomic_t swnic_engine_items = ATOMIC_INIT(0);

/* Module exit: every file is closed, so no round queues another. */
void swnic_engine_exit(void)
{
	wait_var_event(&swnic_engine_items,
		       !atomic_read(&swnic_engine_items));
	destroy_workqueue(swnic_engine_wq);
}

/* An item of @dom's engine ends, or was not queued: its reference goes. */
static void swnic_engine_item_put(struct swnic_domain *dom)
{
	swnic_domain_put(dom);
	if (atomic_dec_and_test(&swnic_engine_items))
		wake_up_var(&swnic_engine_items);
}

/*
 * Queue @dom's engine in @delay jiffies (0: now, even if it waits a tick):
 * the item holds a domain reference until it ends. Queued while it runs,
 * it runs once more after.
 */
static void swnic_engine_queue(struct swnic_domain *dom, unsigned long delay)
{
	struct delayed_work *dw = &dom->engine.work;
	bool pending;

	swnic_domain_get(dom);
	atomic_inc(&swnic_engine_items);
	if (delay)
		pending = !queue_delayed_work(swnic_engine_wq, dw, delay);
	else
		pending = mod_delayed_work(swnic_engine_wq, dw, 0);
	/* Queued already: that item holds its own. */
	if (pending)
		swnic_engine_item_put(dom);
}

/* Both rings, receives first so that sends to ourselves can match. */
static int swnic_ep_process(struct swnic_ep *ep, struct swnic_ep_doorbell *db)
{
	int rq = 0, sq;

	if (!db || !(db->flags & SWNIC_DB_SQ) || !swnic_recv_rq_lazy_idle(ep))
		rq = swnic_recv_process_rq(ep, !db);
	if (rq < 0)
		return rq;
	/* A shared receive context sends nothing: its SQ is never read. */
	sq = swnic_ep_is_srx(ep) ? 0 : swnic_send_process_sq(ep, !db);
	if (sq < 0)
		return sq;
	if (db) {
		db->rq_done = rq;
		db->sq_done = sq;
	}
	return rq + sq;
}

/*
 * Should the engine keep polling @ep? Only if user space produced entries
 * the last round did not look at. Entries it looked at and left (the TX
 * CQ full, an RM_ENABLED target out of resources) wait for the doorbell
 * user space rings once the situation can have changed: polling them
 * again would spin. A broken ring ends the endpoint's progress for good.
 * Lockless (under the engine lock): reads only, see swnic_ring_changed().
 */
static bool swnic_ep_engine_busy(struct swnic_ep *ep)
{
	if (swnic_ring_is_broken(&ep->sq) || swnic_ring_is_broken(&ep->rq))
		return false;
	/* A member's own RQ is never read: its changes are no work. */
	return swnic_ring_kicked(&ep->sq) || swnic_ring_changed(&ep->sq) ||
	       (!ep->srx && swnic_ring_changed(&ep->rq));
}

/**
 * swnic_engine_doorbell() - SWNIC_IOCTL_EP_DOORBELL
 * @ep: the endpoint, in the caller's (its owner's) context
 * @db: the answer: entries consumed in this call
 *
 * Return: 0, or -EPIPE if a ring is broken.
 */
int swnic_engine_doorbell(struct swnic_ep *ep, struct swnic_ep_doorbell *db)
{
	struct swnic_engine *eng = &ep->dom->engine;
	int ret;

	db->rq_done = 0;
	db->sq_done = 0;
	/*
	 * Broken for good, whoever found it (the engine, or a look this
	 * doorbell would not take: an idle lazy RQ with SWNIC_DB_SQ).
	 */
	if (swnic_ring_is_broken(&ep->sq) || swnic_ring_is_broken(&ep->rq))
		return -EPIPE;
	if (ep->flags & SWNIC_EP_F_DB_ENGINE) {
		/*
		 * Awake: user space need not call again. If the engine parks
		 * the endpoint meanwhile it raises the flag again first. The
		 * kick makes the engine look once more even if its last
		 * round, before this doorbell, saw no room in the CQ.
		 */
		swnic_ring_set_flags(&ep->sq, 0, SWNIC_RING_F_NEED_WAKEUP);
		swnic_ring_kick(&ep->sq);
		spin_lock(&eng->lock);
		if (!ep->engine_active) {
			ep->engine_active = true;
			list_add_tail(&ep->engine_node, &eng->eps);
			eng->nr++;
		}
		spin_unlock(&eng->lock);
		/* Ours is a reference too: its put there is not the last. */
		swnic_engine_queue(ep->dom, 0);
		return 0;
	}
	ret = swnic_ep_process(ep, db);
	return ret < 0 ? ret : 0;
}

/* Take @ep off its engine's list; called once its fd is closed. */
void swnic_engine_remove(struct swnic_ep *ep)
{
	struct swnic_engine *eng = &ep->dom->engine;

	spin_lock(&eng->lock);
	if (ep->engine_active) {
		list_del_init(&ep->engine_node);
		ep->engine_active = false;
		eng->nr--;
	}
	spin_unlock(&eng->lock);
}

/*
 * One engine round on @ep, on its owner's mm and charging its owner's
 * memory cgroup: what the round allocates for the poster (GFP_ACCOUNT:
 * unexpected messages, ...) is the poster's, as in the syscall doorbell,
 * not the worker's (the root cgroup's). Return: entries consumed, or
 * -ESRCH if its owner's memory is gone.
 */
static int swnic_engine_run_ep(struct swnic_ep *ep, bool sq_only)
{
	struct mm_struct *mm = ep->dom->mm;
	struct mem_cgroup *memcg, *old_memcg;
	int ret;

	if (!mmget_not_zero(mm)) {
		if (sq_only)
			return -ESRCH;	/* it is not queued again */
		swnic_ring_take_kick(&ep->sq);	/* nothing left to do */
		/*
		 * Nor will what waited be tried again: the engine parks the
		 * endpoint at once (a forked child may keep its file open for
		 * long, and write its rings).
		 */
		mutex_lock(&ep->sq_lock);
		swnic_fault_reached(&ep->engine_fault);
		mutex_unlock(&ep->sq_lock);
		return -ESRCH;
	}
	/*
	 * What user space released before a doorbell, this round sees (a
	 * retry of the SQ's head leaves the kick to the engine's rounds).
	 */
	if (!sq_only)
		swnic_ring_take_kick(&ep->sq);
	memcg = swnic_domain_memcg(ep->dom);
	old_memcg = set_active_memcg(memcg);
	kthread_use_mm(mm);
	ret = sq_only ? swnic_send_retry_head(ep) :
			swnic_ep_process(ep, NULL);
	kthread_unuse_mm(mm);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
	mmput(mm);
	if (ret == -EBUSY)
		return ret;
	return ret > 0 ? ret : 0;
}

/*
 * The longest wait between two tries of an SQ's head that a target out of
 * resources refused: what a send waits at most, once the target has room,
 * if its owner sleeps meanwhile (InfiniBand's longest RNR timer is 655
 * ms). Reached after about half a second of refusals; then each waiting
 * endpoint costs a worker's try twice a second.
 */
#define SWNIC_SQ_RETRY_MAX	(HZ / 2)
/* Tried again this soon when the owner's call held the SQ. */
#define SWNIC_SQ_RETRY_BUSY	(HZ / 10)

/**
 * swnic_engine_sq_retry() - try the SQ's head again later, if it waits
 * @ep: the endpoint, under its sq_lock, after a pass over its SQ
 * @left: the pass left the head to be tried again: an RM_ENABLED target
 *	  out of resources refused it (-EAGAIN), or, in a round, its memory
 *	  was out of reach (-SWNIC_EFAULTLATER)
 * @next: a retry ran the head, which wrote no completion (an inject),
 *	  and entries wait behind it: nothing would wake the owner for them,
 *	  so the next is tried a tick later
 *
 * The provider's progress tries it at each CQ read, but an application
 * that sleeps on its CQ's (or counter's) fd reads nothing until a
 * completion wakes it, and none comes for a send that waits: the target
 * reading its CQ or posting receives tells the sender nothing. So, as a
 * NIC's RNR retry timer, a worker tries the head again on its owner's mm,
 * a tick later, then at doubling delays up to SWNIC_SQ_RETRY_MAX while its
 * own tries leave it; a pass that leaves nothing resets the delay. Only
 * the head is tried (swnic_send_retry_head()), and only if no one holds
 * the SQ. The completion it writes wakes the sleeper. It runs until the
 * send goes (completed, or failed: an RM_ENABLED send is refused for as
 * long as the target keeps its CQ full, as libfabric's FI_RM_ENABLED
 * asks) or the endpoint closes.
 */
void swnic_engine_sq_retry(struct swnic_ep *ep, bool left, bool next)
{
	unsigned long delay = ep->sq_retry_delay;

	lockdep_assert_held(&ep->sq_lock);
	if (!left && !next) {
		ep->sq_retry_delay = 0;
		return;
	}
	/* The head went: the next entry's first try comes a tick later. */
	if (!left)
		delay = 0;
	delay = clamp(delay, 1UL, (unsigned long)SWNIC_SQ_RETRY_MAX);
	/* Its own tries back off; the owner's passes, which poll, do not. */
	if (swnic_ep_in_sq_retry(ep))
		ep->sq_retry_delay = min(2 * delay,
					 (unsigned long)SWNIC_SQ_RETRY_MAX);
	else
		ep->sq_retry_delay = delay;
	kref_get(&ep->ref);
	/* Queued already: that one holds its own (the caller holds one). */
	if (!queue_delayed_work(swnic_engine_wq, &ep->sq_retry, delay))
		swnic_ep_put(ep);
}

/* The retry of an SQ's head (swnic_engine_sq_retry()); holds a reference. */
void swnic_engine_sq_retry_work(struct work_struct *work)
{
	struct swnic_ep *ep = container_of(to_delayed_work(work),
					   struct swnic_ep, sq_retry);

	/*
	 * Its pass queues it again while the head is still left. A pass of
	 * the owner's own (a doorbell, which may wait for its memory as long
	 * as it likes), a trigger's or a cancel's holds the SQ: tried again
	 * a little later, with this reference, not waited for.
	 */
	if (!READ_ONCE(ep->closing)) {
		struct swnic_domain *dom = ep->dom;
		bool busy = swnic_engine_run_ep(ep, true) == -EBUSY;

		swnic_stat_inc(dom->sdev, dom, busy ?
			       SWNIC_STAT_SQ_RETRIES_BUSY :
			       SWNIC_STAT_SQ_RETRIES);
		if (busy && queue_delayed_work(swnic_engine_wq, &ep->sq_retry,
					       SWNIC_SQ_RETRY_BUSY))
			return;
	}
	swnic_ep_put(ep);
}

/*
 * Put an endpoint that made no progress to sleep: raise NEED_WAKEUP (one
 * flag, in the SQ's flags word, for both rings), then look once more
 * under the engine lock, so that an entry user space published before it
 * saw the flag is not missed (user space: write tail, full barrier, read
 * flags, doorbell). Entries that are there but were already looked at do
 * not keep it (swnic_ep_engine_busy()): they wait for a doorbell, which
 * the provider rings when it frees CQ slots (lib/cq.c). A doorbell that
 * ran before the look below saw the endpoint still listed and did not
 * list it again, but it kicked the SQ after user space's stores (new
 * entries, freed CQ slots), so the look keeps the endpoint for another
 * round, which starts by taking the kick; one that runs after lists it
 * again.
 */
static void swnic_engine_park(struct swnic_engine *eng, struct swnic_ep *ep,
			      bool gone)
{
	swnic_ring_set_flags(&ep->sq, SWNIC_RING_F_NEED_WAKEUP, 0);
	/* Flag store before the tail loads; pairs with user space's barrier. */
	smp_mb();

	spin_lock(&eng->lock);
	/*
	 * Kept, the flag stays: at most one needless doorbell. An endpoint
	 * whose owner's memory is gone (@gone) is parked whatever its rings
	 * say: no round consumes them any more, so a tail ahead of what the
	 * last one saw - a forked child of the owner may write it - would
	 * keep it busy for good.
	 */
	if (ep->engine_active && (gone || !swnic_ep_engine_busy(ep))) {
		list_del_init(&ep->engine_node);
		ep->engine_active = false;
		eng->nr--;
	}
	spin_unlock(&eng->lock);
}

/*
 * The domain's engine: rounds over its busy endpoints, round robin, until
 * none is left (each is parked after SWNIC_ENGINE_IDLE_ROUNDS rounds of
 * the engine without progress, at once if its owner's memory is gone).
 * A doorbell that lists an endpoint after the last look queues the item
 * again. An endpoint whose next operation waits for memory out of reach
 * (ep->engine_fault) is not parked: it is tried again each round until
 * the operation ends, and once a whole round made no progress, the next
 * comes a tick later, queued again: no worker sleeps meanwhile (the
 * queue's workers serve every domain).
 */
static void swnic_engine_work(struct work_struct *work)
{
	struct swnic_engine *eng = container_of(to_delayed_work(work),
						struct swnic_engine, work);
	struct swnic_domain *dom = container_of(eng, struct swnic_domain,
						engine);
	unsigned int idle = 0, nr;
	struct swnic_ep *ep;
	int ret;

	for (;;) {
		spin_lock(&eng->lock);
		ep = list_first_entry_or_null(&eng->eps, struct swnic_ep,
					      engine_node);
		if (!ep) {
			spin_unlock(&eng->lock);
			break;
		}
		/* Round robin: the next endpoint goes first next time. */
		list_move_tail(&ep->engine_node, &eng->eps);
		nr = eng->nr;
		kref_get(&ep->ref);
		spin_unlock(&eng->lock);

		ret = swnic_engine_run_ep(ep, false);
		if (ret == -ESRCH) {
			swnic_engine_park(eng, ep, true);
		} else if (ret) {
			idle = 0;
		} else if (swnic_fault_waits(&ep->engine_fault) &&
			   !swnic_ring_is_broken(&ep->rq)) {
			if (++idle >= nr) {
				swnic_ep_put(ep);
				swnic_engine_queue(dom, 1);
				break;
			}
		} else if (++idle >= SWNIC_ENGINE_IDLE_ROUNDS) {
			swnic_engine_park(eng, ep, false);
			idle = 0;
		}
		swnic_ep_put(ep);
		cond_resched();
	}
	/* May be the last reference: the domain goes, this item with it. */
	swnic_engine_item_put(dom);
}

void swnic_engine_domain_init(struct swnic_domain *dom)
{
	struct swnic_engine *eng = &dom->engine;

	spin_lock_init(&eng->lock);
	INIT_LIST_HEAD(&eng->eps);
	INIT_DELAYED_WORK(&eng->work, swnic_engine_work);
}
