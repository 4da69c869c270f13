// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: registration, deregistration, queries, refresh and the
 * lifetimes of MRs and of a domain's MR state. Keys and lookups are in
 * mr_key.c, the access checks in mr_access.c, pinning in umem.c, the MMU
 * notifiers and the invalidation page in notifier.c.
 *
 * Unpublishing an MR (deregistration, domain close) is separate from
 * freeing it: lookups under RCU may still hold it, and accesses in flight
 * keep its pages until they end.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cntr.h"
#include "device.h"
#include "domain.h"
#include "mr.h"
#include "nl_events.h"
#include "notifier.h"
#include "service.h"
#include "umem.h"

#define SWNIC_MR_REG_ALL	(SWNIC_MR_REG_ODP | SWNIC_MR_REG_USER_KEY | \
				 SWNIC_MR_REG_VIRT_ADDR | SWNIC_MR_REG_PEERS | \
				 SWNIC_MR_REG_IOV)

/* Pin attempts that may lose a race with an invalidation of the range. */
#define SWNIC_MR_PIN_TRIES	8

/* ---- counters ------------------------------------------------------------ */

/**
 * swnic_mr_stat_add() - add to a counter of a domain and of its device
 * @mrd: the MR domain
 * @offset: offsetof(struct swnic_mr_stats, counter)
 * @v: the amount (negative for gauges going down)
 */
void swnic_mr_stat_add(struct swnic_mr_domain *mrd, size_t offset, s64 v)
{
	atomic64_add(v, (atomic64_t *)((char *)&mrd->stats + offset));
	atomic64_add(v, (atomic64_t *)((char *)&mrd->sdev->mr_stats + offset));
}

/**
 * swnic_mr_domain_count() - a domain's MRs, those being registered too
 * @dom: the domain (a closed one has none)
 *
 * Return: the count; registrations that have counted themselves but not
 * yet finished are in it (swnic_mr_reserve()).
 */
u32 swnic_mr_domain_count(struct swnic_domain *dom)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain_get_rcu(dom);
	u32 n;

	if (!mrd)
		return 0;
	mutex_lock(&mrd->lock);
	n = mrd->nmr;
	mutex_unlock(&mrd->lock);
	swnic_mr_domain_put(mrd);
	return n;
}

/**
 * swnic_mr_domain_counters() - a domain's MR counters
 * @dom: the domain (open or not: a closed one reads as all zero)
 * @c: out
 */
void swnic_mr_domain_counters(struct swnic_domain *dom,
			      struct swnic_mr_counters *c)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain_get_rcu(dom);

	memset(c, 0, sizeof(*c));
	if (!mrd)
		return;
	swnic_mr_stats_read(&mrd->stats, c);
	swnic_mr_domain_put(mrd);
}

/**
 * swnic_mr_device_counters() - a device's MR counters, all domains
 * @sdev: the device
 * @c: out
 */
void swnic_mr_device_counters(struct swnic_device *sdev,
			      struct swnic_mr_counters *c)
{
	swnic_mr_stats_read(&sdev->mr_stats, c);
}

/**
 * swnic_mr_features() - what memory registration offers (QUERY_DEVICE)
 *
 * Return: the SWNIC_FEAT_* bits of the MR code.
 */
u64 swnic_mr_features(void)
{
	return SWNIC_FEAT_MR | SWNIC_FEAT_MR_ODP | SWNIC_FEAT_INVAL_PAGE |
	       SWNIC_FEAT_MR_ACCESS | SWNIC_FEAT_MR_PEERS | SWNIC_FEAT_MR_IOV;
}

/* ---- the MR domain ------------------------------------------------------- */

struct workqueue_struct *swnic_mr_wq;

/**
 * swnic_mr_init() - set up the MR code (first thing at module load)
 *
 * Return: 0 or -ENOMEM.
 */
int swnic_mr_init(void)
{
	swnic_mr_wq = alloc_workqueue("swnic_mr", WQ_UNBOUND, 0);
	return swnic_mr_wq ? 0 : -ENOMEM;
}

/**
 * swnic_mr_exit() - undo swnic_mr_init() (last thing at module unload)
 *
 * Runs the deferred work still queued (unpinning, frees) first.
 */
void swnic_mr_exit(void)
{
	destroy_workqueue(swnic_mr_wq);
	rcu_barrier();
}

/* The last reference went, maybe where sleeping is not allowed. */
static void swnic_mr_domain_release_work(struct work_struct *work)
{
	struct swnic_mr_domain *mrd =
		container_of(work, struct swnic_mr_domain, release_work);

	WARN_ON(!xa_empty(&mrd->mrs));
	swnic_mr_keys_destroy(mrd);
	swnic_inval_destroy(&mrd->inval);
	mmdrop(mrd->mm);
	swnic_device_put(mrd->sdev);
	mutex_destroy(&mrd->lock);
	kfree_rcu(mrd, rcu);
}

static void swnic_mr_domain_release(struct kref *ref)
{
	struct swnic_mr_domain *mrd =
		container_of(ref, struct swnic_mr_domain, ref);

	queue_work(swnic_mr_wq, &mrd->release_work);
}

/**
 * swnic_mr_domain_put() - drop a reference to an MR domain
 * @mrd: the MR domain
 *
 * Context: any but hardirq; the last reference frees from swnic_mr_wq.
 */
void swnic_mr_domain_put(struct swnic_mr_domain *mrd)
{
	kref_put(&mrd->ref, swnic_mr_domain_release);
}

/**
 * swnic_mr_domain_get_rcu() - a domain's MR state, referenced
 * @dom: the domain, referenced by the caller
 *
 * Return: the MR domain with a reference, or NULL once @dom closed.
 */
struct swnic_mr_domain *swnic_mr_domain_get_rcu(struct swnic_domain *dom)
{
	struct swnic_mr_domain *mrd;

	rcu_read_lock();
	mrd = rcu_dereference(dom->mr);
	if (mrd && !kref_get_unless_zero(&mrd->ref))
		mrd = NULL;
	rcu_read_unlock();
	return mrd;
}

/* The MR domain of an open file's domain (the file pins it). */
static struct swnic_mr_domain *swnic_mr_domain(struct swnic_domain *dom)
{
	return rcu_dereference_protected(dom->mr, true);
}

/**
 * swnic_mr_domain_init() - set up a new domain's MR state
 * @dom: the domain being opened by the current process
 *
 * Return: 0 or -ENOMEM.
 */
int swnic_mr_domain_init(struct swnic_domain *dom)
{
	struct swnic_mr_domain *mrd;
	int ret;

	mrd = kzalloc(sizeof(*mrd), GFP_KERNEL_ACCOUNT);
	if (!mrd)
		return -ENOMEM;
	kref_init(&mrd->ref);
	mutex_init(&mrd->lock);
	xa_init_flags(&mrd->mrs, XA_FLAGS_ALLOC1);
	atomic_set(&mrd->releases, 0);
	INIT_WORK(&mrd->release_work, swnic_mr_domain_release_work);
	RCU_INIT_POINTER(mrd->dom, dom);

	ret = swnic_mr_keys_init(mrd);
	if (ret)
		goto err_free;
	ret = swnic_inval_init(&mrd->inval);
	if (ret)
		goto err_keys;

	mrd->mm = dom->mm;
	mmgrab(mrd->mm);
	mrd->sdev = dom->sdev;
	swnic_device_get(mrd->sdev);
	rcu_assign_pointer(dom->mr, mrd);
	return 0;

err_keys:
	swnic_mr_keys_destroy(mrd);
err_free:
	mutex_destroy(&mrd->lock);
	kfree(mrd);
	return ret;
}

/* ---- MR lifetime ---------------------------------------------------------- */

static void swnic_mr_release(struct kref *ref)
{
	struct swnic_mr *mr = container_of(ref, struct swnic_mr, ref);

	u32 i;

	WARN_ON(mr->umem);
	for (i = 0; i < mr->nsegs; i++)
		swnic_mr_put(mr->segs[i]);
	if (mr->cntr)
		swnic_cntr_put(mr->cntr);
	swnic_mr_domain_put(mr->mrd);
	kfree_rcu(mr, rcu);
}

/**
 * swnic_mr_put() - drop a reference to an MR
 * @mr: the MR
 *
 * Context: any but hardirq.
 */
void swnic_mr_put(struct swnic_mr *mr)
{
	kref_put(&mr->ref, swnic_mr_release);
}

/*
 * Pin @mr's range and make it VALID if it is still in @from. The pins are
 * taken after the notifier's sequence is read and installed only if no
 * invalidation ran meanwhile, so an MR never holds pages its range no
 * longer maps. Called from the owner's context (pinning uses current->mm).
 */
static int swnic_mr_pin(struct swnic_mr *mr, u32 from)
{
	bool writable = mr->access & SWNIC_MR_ACCESS_WRITES;
	struct swnic_umem *umem;
	unsigned long seq;
	int tries;

	for (tries = 0; tries < SWNIC_MR_PIN_TRIES; tries++) {
		if (tries && fatal_signal_pending(current))
			return -EINTR;
		seq = mmu_interval_read_begin(&mr->notifier);
		umem = swnic_umem_pin(mr->mrd, mr->addr, mr->length, writable);
		if (IS_ERR(umem))
			return PTR_ERR(umem);

		spin_lock_bh(&mr->lock);
		if (mmu_interval_read_retry(&mr->notifier, seq)) {
			spin_unlock_bh(&mr->lock);
			swnic_umem_put(umem);
			continue;
		}
		if (mr->state == from) {
			mr->umem = umem;
			mr->state = SWNIC_MR_STATE_VALID;
			umem = NULL;
		}
		spin_unlock_bh(&mr->lock);
		swnic_umem_put(umem);	/* lost to a concurrent refresh */
		return 0;
	}
	return -EAGAIN;
}

/*
 * Undo a registration that was published or not: stop the notifier, drop
 * the pins, drop the caller's reference (the table's, once published).
 */
static void swnic_mr_teardown(struct swnic_mr *mr)
{
	struct swnic_umem *umem;

	spin_lock_bh(&mr->lock);
	mr->state = SWNIC_MR_STATE_DEAD;
	umem = mr->umem;
	mr->umem = NULL;
	spin_unlock_bh(&mr->lock);

	/* A REG_IOV MR has no notifier: its segments have theirs. */
	if (!mr->nsegs)
		mmu_interval_notifier_remove(&mr->notifier);
	/*
	 * Nothing can queue them any more: let the last ones finish (a
	 * check waiting to retry sees the MR dead and stops).
	 */
	flush_delayed_work(&mr->verify_work);
	flush_work(&mr->revoke_work);
	swnic_umem_put(umem);
	swnic_mr_put(mr);
}

/* The peers of a REG_PEERS registration; all zero without it. */
static int swnic_mr_check_peers(const struct swnic_mr_reg *r)
{
	static const struct swnic_mr_peer none;
	u32 i;

	if (!(r->flags & SWNIC_MR_REG_PEERS)) {
		if (r->npeers)
			return -EINVAL;
		for (i = 0; i < SWNIC_MR_PEERS_MAX; i++)
			if (memcmp(&r->peers[i], &none, sizeof(none)))
				return -EINVAL;
		return 0;
	}
	if (!r->npeers || r->npeers > SWNIC_MR_PEERS_MAX)
		return -EINVAL;
	for (i = 0; i < SWNIC_MR_PEERS_MAX; i++) {
		const struct swnic_mr_peer *p = &r->peers[i];

		if (p->flags & ~SWNIC_MR_PEER_ADDR)
			return -EOPNOTSUPP;
		if (p->__reserved ||
		    (i >= r->npeers && memcmp(p, &none, sizeof(none))))
			return -EINVAL;
	}
	return 0;
}

static int swnic_mr_check_reg(struct swnic_domain *dom,
			      const struct swnic_mr_reg *r)
{
	int ret;

	if (r->flags & ~SWNIC_MR_REG_ALL ||
	    r->access & ~SWNIC_MR_ACCESS_ALL)
		return -EOPNOTSUPP;
	if (r->__reserved || r->__reserved2 || r->__reserved3)
		return -EINVAL;
	ret = swnic_mr_check_peers(r);
	if (ret)
		return ret;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;
	if (r->flags & SWNIC_MR_REG_IOV) {
		/* The segments say where and how; checked as they are taken. */
		if (!r->access || r->addr || r->length ||
		    (r->flags & SWNIC_MR_REG_ODP) ||
		    !r->nsegs || r->nsegs > SWNIC_MR_IOV_MAX)
			return -EINVAL;
	} else if (r->nsegs || r->segs) {
		return -EINVAL;
	} else if (!r->access || !r->length || r->length > SWNIC_MAX_MR_SIZE ||
		   r->addr + r->length < r->addr ||
		   !access_ok(u64_to_user_ptr(r->addr), r->length)) {
		return -EINVAL;
	}
	if (!(r->flags & SWNIC_MR_REG_USER_KEY) && r->requested_key)
		return -EINVAL;
	return 0;
}

/* Keep the peers of a REG_PEERS MR; key 0 stands for the MR's own. */
static void swnic_mr_set_peers(struct swnic_mr *mr,
			       const struct swnic_mr_reg *r)
{
	u32 i;

	if (!(r->flags & SWNIC_MR_REG_PEERS))
		return;
	mr->npeers = r->npeers;
	for (i = 0; i < r->npeers; i++) {
		mr->peers[i] = r->peers[i];
		if (!mr->peers[i].auth_key)
			mr->peers[i].auth_key = mr->auth_key;
	}
}

/* Count @mrd's new MR against the device's max_mr. */
static int swnic_mr_reserve(struct swnic_mr_domain *mrd)
{
	u32 max_mr;
	int ret = 0;

	mutex_lock(&mrd->sdev->lock);
	max_mr = mrd->sdev->limits.max_mr;
	mutex_unlock(&mrd->sdev->lock);

	mutex_lock(&mrd->lock);
	if (mrd->dead)
		ret = -ENODEV;
	else if (mrd->nmr >= max_mr)
		ret = -ENOSPC;
	else
		mrd->nmr++;
	mutex_unlock(&mrd->lock);
	return ret;
}

static void swnic_mr_unreserve(struct swnic_mr_domain *mrd)
{
	mutex_lock(&mrd->lock);
	mrd->nmr--;
	mutex_unlock(&mrd->lock);
}

/*
 * REG_IOV: take the segments @r names into @mr (each referenced) and set
 * its address and length from them. Return: 0, -EFAULT, -EINVAL.
 */
static int swnic_mr_take_segs(struct swnic_mr_domain *mrd, struct swnic_mr *mr,
			      const struct swnic_mr_reg *r)
{
	u32 handles[SWNIC_MR_IOV_MAX];
	struct swnic_mr *seg;
	u64 total = 0;
	u32 i, state;

	if (copy_from_user(handles, u64_to_user_ptr(r->segs),
			   r->nsegs * sizeof(handles[0])))
		return -EFAULT;
	for (i = 0; i < r->nsegs; i++) {
		seg = swnic_mr_lookup_handle(mrd, handles[i]);
		if (!seg)
			return -EINVAL;
		/* Held from here on: swnic_mr_release() puts it. */
		mr->segs[mr->nsegs++] = seg;
		spin_lock_bh(&seg->lock);
		state = seg->state;
		spin_unlock_bh(&seg->lock);
		if (seg->nsegs || state == SWNIC_MR_STATE_DEAD)
			return -EINVAL;
		/*
		 * Any right the kernel writes pages for (local RECV/READ
		 * too) needs segments that pinned their pages writable.
		 */
		if ((r->access & SWNIC_MR_ACCESS_WRITES) &&
		    !(seg->access & SWNIC_MR_ACCESS_WRITES))
			return -EINVAL;
		mr->seg_off[i] = total;
		total += seg->length;
		if (total > SWNIC_MAX_MR_SIZE)
			return -EINVAL;
	}
	mr->addr = mr->segs[0]->addr;
	mr->length = total;
	return 0;
}

/**
 * swnic_mr_reg() - SWNIC_IOCTL_MR_REG
 * @dom: the caller's domain
 * @arg: struct swnic_mr_reg
 *
 * Return: 0 or the errno documented in the uapi header.
 */
int swnic_mr_reg(struct swnic_domain *dom, void *arg)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain(dom);
	struct swnic_mr_reg *r = arg;
	struct swnic_mr *mr;
	u32 auth_key;
	int ret;

	ret = swnic_mr_check_reg(dom, r);
	if (ret)
		return ret;
	/*
	 * The key is read and the MR counted under dom->lock: the domain
	 * takes another key only with no MR counted (service.c), so an MR
	 * never carries a key its domain has left.
	 */
	mutex_lock(&dom->lock);
	auth_key = swnic_domain_auth_key(dom);
	/*
	 * An MR is reachable under the auth key its domain uses (service.c
	 * checked the process may use it); naming another one takes an admin.
	 */
	if (r->auth_key && r->auth_key != auth_key && !capable(CAP_NET_ADMIN))
		ret = -EKEYREJECTED;
	else
		ret = swnic_mr_reserve(mrd);
	mutex_unlock(&dom->lock);
	if (ret) {
		if (ret == -ENOSPC)
			swnic_nl_limit_hit(dom->sdev, dom, SWNIC_LIMIT_DEV_MR);
		return ret;
	}

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		ret = -ENOMEM;
		goto err_reserve;
	}
	kref_init(&mr->ref);
	spin_lock_init(&mr->lock);
	INIT_WORK(&mr->revoke_work, swnic_mr_revoke_work);
	INIT_DELAYED_WORK(&mr->verify_work, swnic_mr_verify_work);
	swnic_mr_domain_get(mrd);
	mr->mrd = mrd;
	mr->access = r->access;
	mr->flags = r->flags;
	mr->auth_key = r->auth_key ?: auth_key;
	mr->addr = r->addr;
	mr->length = r->length;
	swnic_mr_set_peers(mr, r);
	mr->state = (r->flags & SWNIC_MR_REG_ODP) ? SWNIC_MR_STATE_VALID :
						    SWNIC_MR_STATE_REVOKED;

	if (r->flags & SWNIC_MR_REG_IOV) {
		/* No pages of its own: valid while it is registered. */
		mr->state = SWNIC_MR_STATE_VALID;
		ret = swnic_mr_take_segs(mrd, mr, r);
		if (ret) {
			mr->state = SWNIC_MR_STATE_DEAD;
			swnic_mr_put(mr);
			goto err_reserve;
		}
		ret = swnic_mr_key_assign(mrd, mr, r->requested_key);
		if (ret)
			goto err_teardown;
		goto publish;
	}
	ret = mmu_interval_notifier_insert(&mr->notifier, current->mm,
					   r->addr, r->length,
					   &swnic_mr_notifier_ops);
	if (ret) {
		swnic_mr_put(mr);
		goto err_reserve;
	}
	ret = swnic_mr_key_assign(mrd, mr, r->requested_key);
	if (ret)
		goto err_teardown;
	if (!(r->flags & SWNIC_MR_REG_ODP)) {
		ret = swnic_mr_pin(mr, SWNIC_MR_STATE_REVOKED);
		if (ret == -EDQUOT)
			swnic_nl_limit_hit(dom->sdev, dom,
					   SWNIC_LIMIT_DEV_PINNED);
		if (ret)
			goto err_key;
	}
publish:
	/*
	 * Once published, the MR is the table's: another thread of the
	 * process may deregister and free it before we go on. Take what we
	 * answer, and count it, first.
	 */
	r->key = mr->key;
	r->handle = mr->handle;
	swnic_mr_stat_inc(mrd, mrs);
	ret = swnic_mr_publish(mrd, mr);
	if (ret) {
		swnic_mr_stat_add(mrd, offsetof(struct swnic_mr_stats, mrs),
				  -1);
		goto err_key;
	}
	swnic_mr_stat_inc(mrd, registrations);
	return 0;

err_key:
	swnic_mr_key_release(mrd, mr);
err_teardown:
	swnic_mr_teardown(mr);
err_reserve:
	swnic_mr_unreserve(mrd);
	return ret;
}

/* Unpublish and tear down one MR. */
static void swnic_mr_destroy(struct swnic_mr_domain *mrd, struct swnic_mr *mr)
{
	swnic_mr_teardown(mr);
	swnic_mr_stat_add(mrd, offsetof(struct swnic_mr_stats, mrs), -1);
}

/**
 * swnic_mr_dereg() - SWNIC_IOCTL_MR_DEREG
 * @dom: the caller's domain
 * @arg: struct swnic_mr_dereg
 *
 * The key fails from return on. Accesses in flight finish on the pages
 * they hold; the last of them unpins.
 *
 * Return: 0, -ENOENT (no such handle), -EACCES, the generic errnos.
 */
int swnic_mr_dereg(struct swnic_domain *dom, void *arg)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain(dom);
	struct swnic_mr_dereg *d = arg;
	struct swnic_mr *mr;

	if (d->flags)
		return -EOPNOTSUPP;
	if (d->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;

	mutex_lock(&mrd->lock);
	mr = xa_load(&mrd->mrs, d->handle);
	if (mr)
		swnic_mr_unpublish(mrd, mr);
	mutex_unlock(&mrd->lock);
	if (!mr)
		return -ENOENT;
	swnic_mr_destroy(mrd, mr);
	return 0;
}

/**
 * swnic_mr_bind_cntr() - SWNIC_IOCTL_MR_BIND_CNTR
 * @dom: the caller's domain
 * @arg: struct swnic_mr_bind_cntr
 *
 * Return: 0, -ENOENT, -EBUSY, -EACCES, the generic errnos.
 */
int swnic_mr_bind_cntr(struct swnic_domain *dom, void *arg)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain(dom);
	struct swnic_mr_bind_cntr *b = arg;
	struct swnic_cntr *cntr;
	struct swnic_mr *mr;
	u32 access = 0;
	int ret = 0;

	if (b->flags & ~(SWNIC_MR_BIND_REMOTE_READ | SWNIC_MR_BIND_REMOTE_WRITE))
		return -EOPNOTSUPP;
	if (!b->flags || b->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;
	if (b->flags & SWNIC_MR_BIND_REMOTE_READ)
		access |= SWNIC_MR_ACCESS_REMOTE_READ;
	if (b->flags & SWNIC_MR_BIND_REMOTE_WRITE)
		access |= SWNIC_MR_ACCESS_REMOTE_WRITE;

	mr = swnic_mr_lookup_handle(mrd, b->handle);
	if (!mr)
		return -ENOENT;
	cntr = swnic_cntr_lookup(dom, b->cntr_id);
	if (!cntr) {
		swnic_mr_put(mr);
		return -ENOENT;
	}
	spin_lock_bh(&mr->lock);
	if (mr->cntr) {
		ret = -EBUSY;
	} else {
		mr->cntr_access = access;
		/* the lookup's reference; readers: swnic_mr_ref_count() */
		smp_store_release(&mr->cntr, cntr);
		cntr = NULL;
	}
	spin_unlock_bh(&mr->lock);
	if (cntr)
		swnic_cntr_put(cntr);
	swnic_mr_put(mr);
	return ret;
}

/**
 * swnic_mr_info_fill() - snapshot an MR
 * @mr: the MR, referenced by the caller
 * @info: out
 */
void swnic_mr_info_fill(struct swnic_mr *mr, struct swnic_mr_info *info)
{
	*info = (struct swnic_mr_info) {
		.handle = mr->handle,
		.key = mr->key,
		.addr = mr->addr,
		.length = mr->length,
		.access = mr->access,
		.flags = mr->flags,
		.auth_key = mr->auth_key,
		.revocations = atomic64_read(&mr->revocations),
		.invalidations = atomic64_read(&mr->invalidations),
		.refaults = atomic64_read(&mr->refaults),
	};
	spin_lock_bh(&mr->lock);
	info->state = mr->state;
	if (mr->umem) {
		info->extents = mr->umem->nextents;
		info->pinned_bytes = swnic_umem_bytes(mr->umem);
	}
	spin_unlock_bh(&mr->lock);
}

/**
 * swnic_mr_next() - the first MR of a domain from a handle on (dumps)
 * @dom: the domain, referenced by the caller
 * @handle: in: first handle to consider; out: the handle found
 * @info: out: its snapshot
 *
 * Iterate with *handle = 0, then *handle + 1 after each hit.
 *
 * Return: 0, or -ENOENT when there is none (or the domain closed).
 */
int swnic_mr_next(struct swnic_domain *dom, unsigned long *handle,
		  struct swnic_mr_info *info)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain_get_rcu(dom);
	struct swnic_mr *mr;
	int ret = -ENOENT;

	if (!mrd)
		return ret;
	for (;;) {
		rcu_read_lock();
		mr = xa_find(&mrd->mrs, handle, U32_MAX, XA_PRESENT);
		if (mr && !kref_get_unless_zero(&mr->ref)) {
			/* Being freed: look past it. */
			rcu_read_unlock();
			++*handle;
			continue;
		}
		rcu_read_unlock();
		break;
	}
	if (mr) {
		swnic_mr_info_fill(mr, info);
		swnic_mr_put(mr);
		ret = 0;
	}
	swnic_mr_domain_put(mrd);
	return ret;
}

/**
 * swnic_mr_query() - SWNIC_IOCTL_MR_QUERY
 * @dom: the caller's domain
 * @arg: struct swnic_mr_query
 *
 * Counters are read after queued unpinning has finished, so they are
 * settled as of the call.
 *
 * Return: 0, -ENOENT (no such handle), -EACCES, -EINTR (a fatal signal
 * while waiting for the unpinning), the generic errnos.
 */
int swnic_mr_query(struct swnic_domain *dom, void *arg)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain(dom);
	struct swnic_mr_query *q = arg;
	struct swnic_mr_info info;
	struct swnic_mr *mr;

	if (q->flags & ~SWNIC_MR_QUERY_COUNTERS)
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;

	if (!(q->flags & SWNIC_MR_QUERY_COUNTERS)) {
		mr = swnic_mr_lookup_handle(mrd, q->handle);
		if (!mr)
			return -ENOENT;
		/* A check after a huge page split is part of the state. */
		flush_delayed_work(&mr->verify_work);
		swnic_mr_info_fill(mr, &info);
		swnic_mr_put(mr);
		q->state = info.state;
		q->key = info.key;
		q->addr = info.addr;
		q->length = info.length;
		q->access = info.access;
		q->reg_flags = info.flags;
		q->auth_key = info.auth_key;
		q->extents = info.extents;
		q->pinned_bytes = info.pinned_bytes;
		q->revocations = info.revocations;
		q->invalidations = info.invalidations;
		q->refaults = info.refaults;
	}
	if (swnic_umem_flush_killable(mrd))
		return -EINTR;
	swnic_mr_stats_read(&mrd->stats, &q->domain);
	swnic_mr_device_counters(dom->sdev, &q->device);
	return 0;
}

/*
 * ODP refresh: is every byte of the range in a mapping the MR's rights
 * can use? Nothing is faulted in (a sparse MR stays sparse).
 */
static int swnic_mr_odp_check(struct swnic_mr *mr)
{
	bool write = mr->access & SWNIC_MR_ACCESS_WRITES;
	unsigned long addr = mr->addr, end = mr->addr + mr->length;
	struct mm_struct *mm = mr->mrd->mm;
	struct vm_area_struct *vma;
	int ret = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr ||
		    !(vma->vm_flags & VM_READ) ||
		    (write && !(vma->vm_flags & VM_WRITE)) ||
		    (vma->vm_flags & (VM_IO | VM_PFNMAP))) {
			ret = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/* Pin (or fault) @mr's pages again; *@state: its state after. */
static int swnic_mr_refresh_one(struct swnic_domain *dom, struct swnic_mr *mr,
				u32 *state)
{
	int ret = 0;

	/*
	 * A REG_IOV MR's segment deregistered under it: nothing to pin (nor
	 * charge, nor to fail on the pin limits): its part is gone.
	 */
	spin_lock_bh(&mr->lock);
	*state = mr->state;
	spin_unlock_bh(&mr->lock);
	if (*state == SWNIC_MR_STATE_DEAD)
		return -ENOENT;
	if (mr->flags & SWNIC_MR_REG_ODP)
		ret = swnic_mr_odp_check(mr);
	else if (!mr->nsegs)
		ret = swnic_mr_pin(mr, SWNIC_MR_STATE_REVOKED);
	if (ret == -EDQUOT)
		swnic_nl_limit_hit(dom->sdev, dom, SWNIC_LIMIT_DEV_PINNED);
	if (!ret) {
		spin_lock_bh(&mr->lock);
		*state = mr->state;
		spin_unlock_bh(&mr->lock);
		if (*state == SWNIC_MR_STATE_DEAD)
			ret = -ENOENT;
	}
	return ret;
}

/**
 * swnic_mr_refresh() - SWNIC_IOCTL_MR_REFRESH
 * @dom: the caller's domain
 * @arg: struct swnic_mr_refresh
 *
 * Return: 0, -ENOENT, -EFAULT (range not mapped now), -EACCES, pinning's
 * errnos (EPERM, EDQUOT, ENOMEM), the generic errnos. A REG_IOV MR
 * refreshes each segment and reports the state of the worst.
 */
int swnic_mr_refresh(struct swnic_domain *dom, void *arg)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain(dom);
	struct swnic_mr_refresh *f = arg;
	struct swnic_mr *mr;
	int ret;

	if (f->flags)
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;

	mr = swnic_mr_lookup_handle(mrd, f->handle);
	if (!mr)
		return -ENOENT;
	if (mr->nsegs) {
		/* REG_IOV: each segment, then the worst of their states. */
		u32 i, state = SWNIC_MR_STATE_VALID, st;

		for (i = 0, ret = 0; i < mr->nsegs && !ret; i++) {
			ret = swnic_mr_refresh_one(dom, mr->segs[i], &st);
			if (ret == -ENOENT) {
				ret = -EFAULT;	/* the segment is gone */
				break;
			}
			if (st != SWNIC_MR_STATE_VALID)
				state = st;
		}
		if (!ret)
			ret = swnic_mr_refresh_one(dom, mr, &st);
		f->state = state;
	} else {
		ret = swnic_mr_refresh_one(dom, mr, &f->state);
	}
	swnic_mr_put(mr);
	return ret;
}

/**
 * swnic_inval_query() - SWNIC_IOCTL_INVAL_QUERY
 * @dom: the caller's domain
 * @arg: struct swnic_inval_query
 *
 * Return: 0, -EACCES, the generic errnos.
 */
int swnic_inval_query(struct swnic_domain *dom, void *arg)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain(dom);
	struct swnic_inval_query *q = arg;

	if (q->flags)
		return -EOPNOTSUPP;
	if (q->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;

	q->mmap_offset = SWNIC_MMAP_OFFSET(SWNIC_MMAP_INVAL, 0);
	q->mmap_size = PAGE_SIZE;
	q->gen = swnic_inval_gen(&mrd->inval);
	q->ring_offset = mrd->inval.hdr->ring_offset;
	q->entries = mrd->inval.entries;
	q->entry_size = sizeof(struct swnic_inval_rec);
	return 0;
}

/**
 * swnic_mr_domain_destroy() - release every MR of a closing domain
 * @dom: the domain; its file is being released
 *
 * Afterwards no MR of @dom is reachable, no notifier is registered and no
 * page is pinned except by accesses still in flight (they unpin when they
 * end). Counters drop accordingly.
 */
void swnic_mr_domain_destroy(struct swnic_domain *dom)
{
	struct swnic_mr_domain *mrd = swnic_mr_domain(dom);
	struct swnic_mr *mr;
	unsigned long idx;

	if (!mrd)
		return;
	mutex_lock(&mrd->lock);
	mrd->dead = true;
	mutex_unlock(&mrd->lock);

	xa_for_each(&mrd->mrs, idx, mr) {
		mutex_lock(&mrd->lock);
		swnic_mr_unpublish(mrd, mr);
		mutex_unlock(&mrd->lock);
		swnic_mr_destroy(mrd, mr);
		cond_resched();
	}
	swnic_umem_flush(mrd);

	RCU_INIT_POINTER(dom->mr, NULL);
	RCU_INIT_POINTER(mrd->dom, NULL);
	swnic_mr_domain_put(mrd);
}
