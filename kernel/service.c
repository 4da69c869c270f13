// SPDX-License-Identifier: GPL-2.0
/*
 * Services: auth keys, who may use them, and how many domains at once.
 *
 * A device's services live on sdev->services under sdev->lock, ordered by
 * id. A domain points to the service whose key it uses (dom->svc, counted
 * in svc->ndomains); a service in use cannot be deleted, so the pointer
 * stays valid until the domain detaches, and the device (which every
 * domain holds) frees its services when it is released.
 *
 * Lock order: dom->lock, then sdev->lock. Netlink's commands on services
 * are in nl_service.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "bind.h"
#include "device.h"
#include "domain.h"
#include "ep.h"
#include "mr.h"
#include "nl_events.h"
#include "service.h"

static bool default_open;
module_param(default_open, bool, 0444);
MODULE_PARM_DESC(default_open,
		 "Open every device's default service (auth key 1) to all users (default: no, members and administrators only)");

/**
 * swnic_service_alloc() - a new service, not yet on a device
 *
 * Return: the service (no members, no domain limit), or NULL.
 */
struct swnic_service *swnic_service_alloc(void)
{
	struct swnic_service *svc = kzalloc(sizeof(*svc), GFP_KERNEL);

	if (svc) {
		INIT_LIST_HEAD(&svc->node);
		svc->max_domains = SWNIC_LIMIT_MAX;
	}
	return svc;
}

/*
 * Moves whenever a service of any device is added or removed: the SVC_GET
 * dump's consistency sequence (one value for the whole dump, which spans
 * devices).
 */
atomic_t swnic_services_gen = ATOMIC_INIT(1);

/**
 * swnic_service_add() - publish a service on a device with the next id
 * @sdev: the device; its lock is held
 * @svc: the service, from swnic_service_alloc()
 *
 * Return: 0, or -ENOSPC (too many services, or no id left).
 */
int swnic_service_add(struct swnic_device *sdev, struct swnic_service *svc)
{
	struct swnic_service *s;
	unsigned int n = 0;

	lockdep_assert_held(&sdev->lock);
	list_for_each_entry(s, &sdev->services, node)
		n++;
	if (n >= SWNIC_SVC_MAX || sdev->next_svc_id == U32_MAX)
		return -ENOSPC;
	svc->id = ++sdev->next_svc_id;
	list_add_tail(&svc->node, &sdev->services);
	atomic_inc(&swnic_services_gen);
	swnic_obj_inc(SWNIC_OBJ_SERVICES);
	return 0;
}

/**
 * swnic_service_free() - unpublish and free a service
 * @svc: the service, on its device's list; the device's lock is held (or
 *	 the device is being released) and no domain uses it
 */
void swnic_service_free(struct swnic_service *svc)
{
	list_del(&svc->node);
	atomic_inc(&swnic_services_gen);
	swnic_obj_dec(SWNIC_OBJ_SERVICES);
	kfree(svc);
}

/* Return: @sdev's service with id @id, or NULL. sdev->lock held. */
struct swnic_service *swnic_service_find_id(struct swnic_device *sdev, u32 id)
{
	struct swnic_service *svc;

	lockdep_assert_held(&sdev->lock);
	list_for_each_entry(svc, &sdev->services, node)
		if (svc->id == id)
			return svc;
	return NULL;
}

/* Return: @sdev's service with auth key @auth_key, or NULL. sdev->lock held. */
struct swnic_service *swnic_service_find_key(struct swnic_device *sdev,
					     u32 auth_key)
{
	struct swnic_service *svc;

	lockdep_assert_held(&sdev->lock);
	list_for_each_entry(svc, &sdev->services, node)
		if (svc->auth_key == auth_key)
			return svc;
	return NULL;
}

/**
 * swnic_service_device_init() - give a new device its default service
 * @sdev: the device, not yet published
 *
 * Return: 0 or -ENOMEM.
 */
int swnic_service_device_init(struct swnic_device *sdev)
{
	struct swnic_service *svc;
	int ret;

	svc = swnic_service_alloc();
	if (!svc)
		return -ENOMEM;
	svc->auth_key = SWNIC_AUTH_KEY_DEFAULT;
	/*
	 * Who shares the default key is the administrator's choice: open to
	 * everyone only if asked (default_open=1, or `swnic service set`).
	 */
	svc->flags = default_open ? SWNIC_SVC_F_OPEN : 0;
	mutex_lock(&sdev->lock);
	ret = swnic_service_add(sdev, svc);
	mutex_unlock(&sdev->lock);
	if (ret)
		kfree(svc);
	return ret;
}

/**
 * swnic_service_device_fini() - free a device's services
 * @sdev: the device being released (no domain left)
 */
void swnic_service_device_fini(struct swnic_device *sdev)
{
	struct swnic_service *svc, *tmp;

	list_for_each_entry_safe(svc, tmp, &sdev->services, node) {
		WARN_ON(svc->ndomains);
		swnic_service_free(svc);
	}
}

/* Is the current process a member of @svc? */
static bool swnic_service_admits(const struct swnic_service *svc)
{
	kuid_t euid = current_euid();
	u32 i;

	if (svc->flags & SWNIC_SVC_F_OPEN)
		return true;
	for (i = 0; i < svc->nuids; i++)
		if (uid_eq(svc->uids[i], euid))
			return true;
	for (i = 0; i < svc->ngids; i++)
		if (in_egroup_p(svc->gids[i]))
			return true;
	return false;
}

static void swnic_service_attach(struct swnic_domain *dom,
				 struct swnic_service *svc)
{
	lockdep_assert_held(&dom->sdev->lock);
	svc->ndomains++;
	dom->svc = svc;
	WRITE_ONCE(dom->auth_key, svc->auth_key);
}

static void swnic_service_detach(struct swnic_domain *dom)
{
	lockdep_assert_held(&dom->sdev->lock);
	if (!dom->svc)
		return;
	dom->svc->ndomains--;
	dom->svc = NULL;
	WRITE_ONCE(dom->auth_key, 0);
}

/**
 * swnic_service_domain_open() - give a new domain the default auth key
 * @dom: the domain being opened, by the current process
 *
 * The domain takes the default service if that admits the process (open,
 * or a member, or an administrator), is enabled and has room; otherwise it
 * has no auth key until it takes one with SWNIC_IOCTL_AUTH_KEY.
 * Called with the device's lock held.
 */
void swnic_service_domain_open(struct swnic_domain *dom)
{
	struct swnic_device *sdev = dom->sdev;
	struct swnic_service *svc;

	lockdep_assert_held(&sdev->lock);
	svc = swnic_service_find_id(sdev, SWNIC_SVC_DEFAULT_ID);
	if (!svc || (svc->flags & SWNIC_SVC_F_DISABLED) ||
	    svc->ndomains >= svc->max_domains)
		return;
	if (swnic_service_admits(svc) ||
	    __swnic_device_capable(sdev, CAP_NET_ADMIN, false))
		swnic_service_attach(dom, svc);
}

/**
 * swnic_service_domain_close() - release a closing domain's service
 * @dom: the domain; the device's lock is held
 */
void swnic_service_domain_close(struct swnic_domain *dom)
{
	lockdep_assert_held(&dom->sdev->lock);
	swnic_service_detach(dom);
}

/* Does @dom own objects bound to its auth key? dom->lock held. */
static bool swnic_domain_has_objects(struct swnic_domain *dom)
{
	lockdep_assert_held(&dom->lock);
	/* MRs being registered count: they took the key under dom->lock. */
	return atomic_read(&dom->ncq) || dom->nep ||
	       swnic_mr_domain_count(dom);
}

/*
 * May the current process use @svc on @sdev? Return: 0 or the errno of
 * SWNIC_IOCTL_AUTH_KEY (and EP_AUTH_KEY). sdev->lock held.
 */
static int swnic_service_may_use(struct swnic_device *sdev,
				 struct swnic_domain *dom,
				 struct swnic_service *svc, bool *limit)
{
	lockdep_assert_held(&sdev->lock);
	if (!svc)
		return -ENOKEY;
	if (svc->flags & SWNIC_SVC_F_DISABLED)
		return -EKEYREVOKED;
	if (!swnic_service_admits(svc) &&
	    !__swnic_device_capable(sdev, CAP_NET_ADMIN, true)) {
		swnic_stat_inc(sdev, dom, SWNIC_STAT_AUTH_KEY_DENIED);
		return -EPERM;
	}
	if (svc->ndomains >= svc->max_domains) {
		swnic_stat_inc(sdev, dom, SWNIC_STAT_LIMITS_HIT);
		*limit = true;
		return -EDQUOT;
	}
	return 0;
}

/**
 * swnic_service_ep_add_key() - SWNIC_IOCTL_EP_AUTH_KEY: one more key for
 *	an endpoint, validated as a domain's is
 * @ep: the endpoint, its file open, in the calling process
 * @auth_key: the key, from user space
 * @index: out: its key index (0: the domain's own key)
 *
 * Return: 0 or the errno documented in include/uapi/linux/swnic_queue.h.
 */
int swnic_service_ep_add_key(struct swnic_ep *ep, u32 auth_key, u32 *index)
{
	struct swnic_domain *dom = ep->dom;
	struct swnic_device *sdev = dom->sdev;
	struct swnic_service *svc;
	bool limit = false;
	int ret = 0;
	u32 i, n;

	if (!auth_key)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;
	if (mutex_lock_killable(&dom->lock))
		return -EINTR;
	mutex_lock(&sdev->lock);
	n = ep->nkeys;
	if (READ_ONCE(dom->closed)) {
		ret = -EPERM;
		goto out;
	}
	if (dom->auth_key == auth_key) {
		*index = 0;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (ep->auth_keys[i] == auth_key) {
			*index = i + 1;
			goto out;
		}
	}
	if (n >= SWNIC_EP_AUTH_KEYS_MAX) {
		ret = -ENOSPC;
		goto out;
	}
	svc = swnic_service_find_key(sdev, auth_key);
	ret = swnic_service_may_use(sdev, dom, svc, &limit);
	if (ret)
		goto out;
	svc->ndomains++;
	ep->key_svcs[n] = svc;
	ep->auth_keys[n] = auth_key;
	/* The key before the count: pairs with swnic_ep_sqe_key(). */
	smp_store_release(&ep->nkeys, n + 1);
	*index = n + 1;
	swnic_stat_inc(sdev, dom, SWNIC_STAT_AUTH_KEY_SETS);
out:
	mutex_unlock(&sdev->lock);
	mutex_unlock(&dom->lock);
	if (limit)
		swnic_nl_limit_hit(sdev, dom, SWNIC_LIMIT_SVC_DOMAINS);
	return ret;
}

/**
 * swnic_service_ep_release() - drop an endpoint's own keys
 * @ep: the endpoint whose file is being released, its port unpublished
 */
void swnic_service_ep_release(struct swnic_ep *ep)
{
	struct swnic_device *sdev = ep->dom->sdev;
	u32 i;

	mutex_lock(&sdev->lock);
	for (i = 0; i < ep->nkeys; i++) {
		ep->key_svcs[i]->ndomains--;
		ep->key_svcs[i] = NULL;
	}
	/*
	 * After @closing (swnic_ep_file_release()): a sender that finds the
	 * keys gone finds it closing too (swnic_ep_key_refused()).
	 */
	smp_store_release(&ep->nkeys, 0);
	mutex_unlock(&sdev->lock);
}

/* Switch @dom to the service of @auth_key. dom->lock held. */
static int swnic_domain_take_key(struct swnic_domain *dom, u32 auth_key)
{
	struct swnic_device *sdev = dom->sdev;
	struct swnic_service *svc;
	bool limit = false;
	int ret = 0;

	lockdep_assert_held(&dom->lock);
	if (!swnic_domain_is_owner(dom))
		return -EACCES;
	if (swnic_domain_has_objects(dom))
		return -EBUSY;

	mutex_lock(&sdev->lock);
	svc = swnic_service_find_key(sdev, auth_key);
	if (!svc) {
		ret = -ENOKEY;
	} else if (svc == dom->svc) {
		ret = 0;
	} else if (svc->flags & SWNIC_SVC_F_DISABLED) {
		ret = -EKEYREVOKED;
	} else if (!swnic_service_admits(svc) &&
		   !__swnic_device_capable(sdev, CAP_NET_ADMIN, true)) {
		swnic_stat_inc(sdev, dom, SWNIC_STAT_AUTH_KEY_DENIED);
		ret = -EPERM;
	} else if (svc->ndomains >= svc->max_domains) {
		swnic_stat_inc(sdev, dom, SWNIC_STAT_LIMITS_HIT);
		limit = true;
		ret = -EDQUOT;
	} else {
		swnic_service_detach(dom);
		swnic_service_attach(dom, svc);
		swnic_stat_inc(sdev, dom, SWNIC_STAT_AUTH_KEY_SETS);
	}
	mutex_unlock(&sdev->lock);
	if (limit)
		swnic_nl_limit_hit(sdev, dom, SWNIC_LIMIT_SVC_DOMAINS);
	return ret;
}

/**
 * swnic_domain_set_auth_key() - SWNIC_IOCTL_AUTH_KEY: take an auth key (if
 *	one is given) and report the one the domain uses
 * @dom: the domain of the file
 * @arg: struct swnic_auth_key, the kernel's copy
 *
 * Return: 0 or the errno documented in include/uapi/linux/swnic.h.
 */
int swnic_domain_set_auth_key(struct swnic_domain *dom, void *arg)
{
	struct swnic_auth_key *k = arg;
	struct swnic_device *sdev = dom->sdev;
	int ret = 0;

	if (k->flags)
		return -EOPNOTSUPP;

	mutex_lock(&dom->lock);
	if (k->auth_key)
		ret = swnic_domain_take_key(dom, k->auth_key);
	if (!ret) {
		mutex_lock(&sdev->lock);
		k->auth_key = dom->auth_key;
		k->svc_id = dom->svc ? dom->svc->id : 0;
		mutex_unlock(&sdev->lock);
	}
	mutex_unlock(&dom->lock);
	return ret;
}
