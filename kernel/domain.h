/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_DOMAIN_H
#define _SWNIC_DOMAIN_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "engine.h"
#include "stats.h"
#include "trig.h"

struct swnic_device;
struct swnic_mr_domain;

/*
 * A domain: one open file of a device's char device. The file holds the
 * initial reference; anything working on the domain outside a syscall on
 * that file (netlink dumps, in-flight operations) holds its own.
 */
struct swnic_domain {
	struct kref ref;
	struct swnic_device *sdev;	/* holds a device reference */
	struct list_head dev_node;	/* on sdev->domains, sdev->lock */
	/* closed, still referenced: on sdev->closed_domains, closed_lock */
	struct list_head closed_node;
	/*
	 * Its CQ, counter and endpoint files open: while any is, a closed
	 * domain counts against the domain limits (swnic_domain_open()).
	 * References others hold (a peer's deferred completion) do not.
	 */
	atomic_t files;
	u32 id;				/* immutable, unique while alive */

	/* The process that opened the file: immutable. */
	struct pid *pid;		/* its thread group's, referenced */
	kuid_t uid;
	char comm[TASK_COMM_LEN];
	struct mm_struct *mm;		/* mmgrab'ed: owner of registrations */
	/*
	 * Its memory cgroup (referenced), charged what the kernel keeps for
	 * the domain wherever it runs - as a socket's, its creator's, even
	 * once that process is gone and its mm has no owner.
	 */
	struct mem_cgroup *memcg;

	struct mutex lock;		/* serialises control operations */
	/*
	 * CQs and counters alive, until their final release (which may run
	 * in any context: atomic); a create checks and adds under @lock.
	 */
	atomic_t ncq;
	u32 nep;			/* endpoints alive, @lock */
	atomic_t ncntr;
	struct list_head port_blocks;	/* struct swnic_port_block, @lock */
	u32 nblocks;			/* on @port_blocks, @lock */
	struct xarray cqs;		/* CQs by id (xa_lock) */
	struct xarray cntrs;		/* counters by id (xa_lock) */
	/* service.c: changed under @lock and sdev->lock */
	struct swnic_service *svc;	/* service of @auth_key, or NULL */
	u32 auth_key;			/* 0 = none; READ_ONCE() unlocked */
	/*
	 * Set once the file is released, before @auth_key is cleared:
	 * its endpoints that live on (their own files still open) are
	 * gone for peers. READ_ONCE() after reading @auth_key, smp_rmb().
	 */
	bool closed;
	/*
	 * Set (sdev->lock) when the device leaves the network namespace the
	 * domain was opened in - its netdev there went - never cleared:
	 * nothing of the domain reaches a peer, local or on a wire, nor is
	 * reached; its posts fail with ENETDOWN. READ_ONCE() unlocked.
	 */
	bool orphan;
	struct swnic_stats stats;	/* counters (stats.h), atomic */
	struct swnic_trig_domain trig;	/* triggered work (trig.c) */
	struct swnic_engine engine;	/* its engine endpoints' rounds */
	/* MRs (mr.h): set at open, NULL once closed, freed after RCU */
	struct swnic_mr_domain __rcu *mr;
	struct rcu_head rcu;		/* frees after RCU lookups end */
};

int swnic_domain_open(struct swnic_device *sdev, const struct cred *cred,
		      struct swnic_domain **out);
void swnic_domain_close(struct swnic_domain *dom);

struct swnic_domain *swnic_domain_lookup(u32 id);
struct swnic_domain *swnic_domain_find_next(u32 *id);
void swnic_domain_put(struct swnic_domain *dom);

static inline void swnic_domain_get(struct swnic_domain *dom)
{
	kref_get(&dom->ref);
}

/*
 * Has the process that opened @dom exited? Its memory is torn down from
 * then on (MRs revoked, pages gone) and never comes back: the domain is
 * dead to peers even while its files are still being released.
 */
static inline bool swnic_domain_exited(const struct swnic_domain *dom)
{
	return !atomic_read(&dom->mm->mm_users);
}

/*
 * Publish @entry at @index of @xa, which an xa_alloc() of NULL reserved:
 * an object is made findable by its id once nothing can fail. Storing into
 * a reserved slot allocates nothing, so this cannot fail.
 */
static inline void swnic_xa_publish(struct xarray *xa, u32 index, void *entry)
{
	void *old = xa_store(xa, index, entry, GFP_KERNEL);

	WARN_ON_ONCE(xa_is_err(old) || old);
}

/* Is the caller the process that opened @dom (not e.g. a forked child)? */
static inline bool swnic_domain_is_owner(const struct swnic_domain *dom)
{
	return current->mm == dom->mm;
}

/* Take a reference to @memcg, if any (mem_cgroup_put() gives it back). */
static inline void swnic_memcg_get(struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	if (memcg)
		css_get(&memcg->css);
#endif
}

/* @dom's memory cgroup, referenced (mem_cgroup_put()), or NULL. */
static inline struct mem_cgroup *swnic_domain_memcg(struct swnic_domain *dom)
{
	swnic_memcg_get(dom->memcg);
	return dom->memcg;
}

#endif /* _SWNIC_DOMAIN_H */
