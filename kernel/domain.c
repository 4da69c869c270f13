// SPDX-License-Identifier: GPL-2.0
/*
 * swnic domains: the context behind every open file of a device. A domain
 * is published in two places - its device's list (for limits and dumps) and
 * the global id table (for lookups by id) - and unpublished from both before
 * its resources are released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/nsproxy.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "bind.h"
#include "device.h"
#include "domain.h"
#include "ep.h"
#include "mr.h"
#include "nl_events.h"
#include "service.h"

/* Domains by id; lookups under RCU, entries freed after a grace period. */
static DEFINE_XARRAY_ALLOC1(swnic_domain_xa);
static u32 swnic_domain_next_id;

static void swnic_domain_release(struct kref *ref)
{
	struct swnic_domain *dom = container_of(ref, struct swnic_domain, ref);
	struct swnic_device *sdev = dom->sdev;
	unsigned long flags;

	spin_lock_irqsave(&sdev->closed_lock, flags);
	list_del_init(&dom->closed_node);
	spin_unlock_irqrestore(&sdev->closed_lock, flags);
	WARN_ON(!xa_empty(&dom->cqs));
	xa_destroy(&dom->cqs);
	WARN_ON(!xa_empty(&dom->cntrs));
	xa_destroy(&dom->cntrs);
	mmdrop(dom->mm);
	mem_cgroup_put(dom->memcg);
	put_pid(dom->pid);
	swnic_device_put(dom->sdev);
	mutex_destroy(&dom->lock);
	kfree_rcu(dom, rcu);
}

void swnic_domain_put(struct swnic_domain *dom)
{
	kref_put(&dom->ref, swnic_domain_release);
}

/**
 * swnic_domain_open() - create a domain on @sdev for the current process
 * @sdev: the device; the domain takes its own reference
 * @cred: the credentials the file is opened with: the domain's owner
 * @out: the new domain, holding the caller's (the file's) reference
 *
 * A device is used from its own network namespace only: another
 * namespace is another host, which reaches it over the wire.
 *
 * Return: 0, -ENODEV if the device is destroyed or down, -ENXIO from
 * another network namespace, -EMFILE at the device's domain limit, or
 * -EDQUOT at its per-user one, -ENOMEM.
 */
int swnic_domain_open(struct swnic_device *sdev, const struct cred *cred,
		      struct swnic_domain **out)
{
	struct swnic_domain *dom, *d;
	u32 mine = 0, closed = 0;
	int ret;

	dom = kzalloc(sizeof(*dom), GFP_KERNEL_ACCOUNT);
	if (!dom)
		return -ENOMEM;
	kref_init(&dom->ref);
	mutex_init(&dom->lock);
	INIT_LIST_HEAD(&dom->dev_node);
	INIT_LIST_HEAD(&dom->closed_node);
	INIT_LIST_HEAD(&dom->port_blocks);
	xa_init_flags(&dom->cqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&dom->cntrs, XA_FLAGS_ALLOC1);
	swnic_trig_domain_init(dom);
	swnic_engine_domain_init(dom);
	dom->pid = get_task_pid(current, PIDTYPE_TGID);
	dom->uid = cred->euid;
	get_task_comm(dom->comm, current);
	dom->mm = current->mm;
	mmgrab(dom->mm);
	dom->memcg = get_mem_cgroup_from_mm(current->mm);
	dom->sdev = sdev;
	swnic_device_get(sdev);
	ret = swnic_mr_domain_init(dom);
	if (ret) {
		swnic_domain_put(dom);
		return ret;
	}

	mutex_lock(&sdev->lock);
	if (sdev->dead || sdev->state != SWNIC_DEV_STATE_UP) {
		ret = -ENODEV;
		goto err_unlock;
	}
	if (!net_eq(current->nsproxy->net_ns, swnic_device_net(sdev))) {
		ret = -ENXIO;
		goto err_unlock;
	}
	/*
	 * A closed domain whose CQs, counters or endpoints are still open
	 * counts: or a user would close domain after domain, keeping max_cq
	 * CQs and the counters of each, with no bound. What others hold of
	 * it (a deferred completion at a peer) does not count.
	 */
	spin_lock_irq(&sdev->closed_lock);
	list_for_each_entry(d, &sdev->closed_domains, closed_node) {
		if (!atomic_read(&d->files))
			continue;
		closed++;
		mine += uid_eq(d->uid, dom->uid);
	}
	spin_unlock_irq(&sdev->closed_lock);
	if (sdev->ndomains + closed >= sdev->limits.max_domains) {
		ret = -EMFILE;
		goto err_unlock;
	}
	/* No one user takes every domain of the device from the others. */
	list_for_each_entry(d, &sdev->domains, dev_node)
		mine += uid_eq(d->uid, dom->uid);
	if (mine >= sdev->limits.max_domains_per_user &&
	    !__swnic_device_capable(sdev, CAP_NET_ADMIN, true)) {
		ret = -EDQUOT;
		goto err_unlock;
	}
	ret = xa_alloc_cyclic(&swnic_domain_xa, &dom->id, dom, xa_limit_31b,
			      &swnic_domain_next_id, GFP_KERNEL);
	if (ret < 0)
		goto err_unlock;
	list_add_tail(&dom->dev_node, &sdev->domains);
	sdev->ndomains++;
	swnic_service_domain_open(dom);
	mutex_unlock(&sdev->lock);

	swnic_nl_domain_opened(dom);
	*out = dom;
	return 0;

err_unlock:
	mutex_unlock(&sdev->lock);
	if (ret == -EMFILE || ret == -EDQUOT)
		swnic_nl_limit_hit(sdev, NULL, SWNIC_LIMIT_DEV_DOMAINS);
	swnic_mr_domain_destroy(dom);
	swnic_domain_put(dom);
	return ret;
}

/**
 * swnic_domain_close() - end a domain
 * @dom: the domain of a file being released
 *
 * Unpublishes @dom, releases what it owns and drops the file's reference.
 */
void swnic_domain_close(struct swnic_domain *dom)
{
	struct swnic_device *sdev = dom->sdev;

	WRITE_ONCE(dom->closed, true);
	/*
	 * @closed before the auth key is cleared below: a sender that reads
	 * the cleared key also sees @closed (pairs with the smp_rmb() in
	 * swnic_sqe_exec()).
	 */
	smp_wmb();
	mutex_lock(&sdev->lock);
	swnic_service_domain_close(dom);
	list_del_init(&dom->dev_node);
	sdev->ndomains--;
	sdev->norphans -= dom->orphan;
	/* Counted on while its own files are open (swnic_domain_open()). */
	spin_lock_irq(&sdev->closed_lock);
	list_add_tail(&dom->closed_node, &sdev->closed_domains);
	spin_unlock_irq(&sdev->closed_lock);
	mutex_unlock(&sdev->lock);
	xa_erase(&swnic_domain_xa, dom->id);
	swnic_nl_domain_closed(dom);

	swnic_mr_domain_destroy(dom);
	swnic_trig_domain_closed(dom);
	swnic_port_blocks_release(dom);
	swnic_domain_put(dom);
}

/* Return: the domain with id @id with a reference held, or NULL. */
struct swnic_domain *swnic_domain_lookup(u32 id)
{
	struct swnic_domain *dom;

	rcu_read_lock();
	dom = xa_load(&swnic_domain_xa, id);
	if (dom && !kref_get_unless_zero(&dom->ref))
		dom = NULL;
	rcu_read_unlock();
	return dom;
}

/**
 * swnic_domain_find_next() - the live domain with the lowest id >= *@id
 * @id: in: where to start; out: the id of the domain found
 *
 * For walks that resume by id (netlink dumps).
 *
 * Return: the domain with a reference held, or NULL when none is left.
 */
struct swnic_domain *swnic_domain_find_next(u32 *id)
{
	unsigned long index = *id;
	struct swnic_domain *dom;

	rcu_read_lock();
	for (;;) {
		dom = xa_find(&swnic_domain_xa, &index, U32_MAX, XA_PRESENT);
		if (!dom || kref_get_unless_zero(&dom->ref))
			break;
		if (index == U32_MAX) {
			dom = NULL;
			break;
		}
		index++;
	}
	rcu_read_unlock();
	if (dom)
		*id = index;
	return dom;
}
