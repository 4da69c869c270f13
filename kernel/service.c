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
 * Lock order: dom->lock, then sdev->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "bind.h"
#include "compat.h"
#include "device.h"
#include "domain.h"
#include "mr.h"
#include "netlink.h"
#include "service.h"

static bool default_open;
module_param(default_open, bool, 0444);
MODULE_PARM_DESC(default_open,
		 "Open every device's default service (auth key 1) to all users (default: no, members and administrators only)");

static struct swnic_service *swnic_service_alloc(void)
{
	struct swnic_service *svc = kzalloc(sizeof(*svc), GFP_KERNEL);

	if (svc) {
		INIT_LIST_HEAD(&svc->node);
		svc->max_domains = SWNIC_LIMIT_MAX;
	}
	return svc;
}

/* Publish @svc on @sdev with the next id. sdev->lock held. */
static int swnic_service_add(struct swnic_device *sdev,
			     struct swnic_service *svc)
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
	swnic_obj_inc(SWNIC_OBJ_SERVICES);
	return 0;
}

static void swnic_service_free(struct swnic_service *svc)
{
	list_del(&svc->node);
	swnic_obj_dec(SWNIC_OBJ_SERVICES);
	kfree(svc);
}

static struct swnic_service *swnic_service_find_id(struct swnic_device *sdev,
						   u32 id)
{
	struct swnic_service *svc;

	lockdep_assert_held(&sdev->lock);
	list_for_each_entry(svc, &sdev->services, node)
		if (svc->id == id)
			return svc;
	return NULL;
}

static struct swnic_service *swnic_service_find_key(struct swnic_device *sdev,
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
	swnic_service_detach(dom);
}

/* Does @dom own objects bound to its auth key? dom->lock held. */
static bool swnic_domain_has_objects(struct swnic_domain *dom)
{
	struct swnic_mr_counters mrc;

	lockdep_assert_held(&dom->lock);
	swnic_mr_domain_counters(dom, &mrc);
	return dom->ncq || dom->nep || mrc.mrs;
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
 * swnic_auth_key_ioctl() - SWNIC_IOCTL_AUTH_KEY: report or take an auth key
 * @dom: the domain of the file
 * @arg: struct swnic_auth_key, the kernel's copy
 *
 * Return: 0 or the errno documented in include/uapi/linux/swnic.h.
 */
int swnic_auth_key_ioctl(struct swnic_domain *dom, void *arg)
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

/* ---- netlink -------------------------------------------------------------- */

/* The service named by SVC_ID or SVC_AUTH_KEY. sdev->lock held. */
static struct swnic_service *swnic_nl_svc_find(struct swnic_device *sdev,
					       struct nlattr **attrs,
					       struct netlink_ext_ack *extack)
{
	struct swnic_service *svc;

	if (attrs[SWNIC_A_SVC_ID]) {
		svc = swnic_service_find_id(sdev,
					    nla_get_u32(attrs[SWNIC_A_SVC_ID]));
		if (!svc)
			NL_SET_ERR_MSG_ATTR(extack, attrs[SWNIC_A_SVC_ID],
					    "no service with this id on the device");
	} else if (attrs[SWNIC_A_SVC_AUTH_KEY]) {
		svc = swnic_service_find_key(sdev,
					     nla_get_u32(attrs[SWNIC_A_SVC_AUTH_KEY]));
		if (!svc)
			NL_SET_ERR_MSG_ATTR(extack, attrs[SWNIC_A_SVC_AUTH_KEY],
					    "no service with this auth key on the device");
	} else {
		NL_SET_ERR_MSG(extack,
			       "service id or auth key attribute required");
		return ERR_PTR(-EINVAL);
	}
	return svc ?: ERR_PTR(-ENOENT);
}

static int swnic_nl_fill_members(struct sk_buff *skb,
				 const struct swnic_service *svc,
				 struct user_namespace *ns)
{
	struct nlattr *nest;
	u32 i;

	nest = nla_nest_start(skb, SWNIC_A_SVC_MEMBERS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < svc->nuids; i++)
		if (nla_put_u32(skb, SWNIC_A_MEMBER_UID,
				from_kuid_munged(ns, svc->uids[i])))
			goto err_cancel;
	for (i = 0; i < svc->ngids; i++)
		if (nla_put_u32(skb, SWNIC_A_MEMBER_GID,
				from_kgid_munged(ns, svc->gids[i])))
			goto err_cancel;
	nla_nest_end(skb, nest);
	return 0;

err_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* One service message; sdev->lock held. @cb is the dump's, or NULL. */
static int swnic_nl_fill_svc(struct sk_buff *skb, struct swnic_device *sdev,
			     const struct swnic_service *svc,
			     struct user_namespace *ns, u32 portid, u32 seq,
			     int flags, u8 cmd, struct netlink_callback *cb)
{
	void *hdr;

	lockdep_assert_held(&sdev->lock);
	hdr = genlmsg_put(skb, portid, seq, &swnic_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (swnic_nl_put_dev_id(skb, sdev) ||
	    nla_put_u32(skb, SWNIC_A_SVC_ID, svc->id) ||
	    nla_put_u32(skb, SWNIC_A_SVC_AUTH_KEY, svc->auth_key) ||
	    nla_put_u32(skb, SWNIC_A_SVC_FLAGS, svc->flags) ||
	    nla_put_u32(skb, SWNIC_A_SVC_MAX_DOMAINS, svc->max_domains) ||
	    nla_put_u32(skb, SWNIC_A_SVC_DOMAINS, svc->ndomains) ||
	    swnic_nl_fill_members(skb, svc, ns)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* A message about @svc for the events group; sdev->lock held. */
static struct sk_buff *swnic_nl_svc_event(struct swnic_device *sdev,
					  const struct swnic_service *svc,
					  u8 cmd)
{
	struct sk_buff *msg;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	if (swnic_nl_fill_svc(msg, sdev, svc, &init_user_ns, 0, 0, 0, cmd,
			      NULL)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void swnic_nl_svc_send_event(struct swnic_device *sdev,
				    struct sk_buff *msg)
{
	if (msg)
		swnic_nl_multicast(sdev, msg, GFP_KERNEL);
}

/**
 * swnic_nl_svc_get_doit() - SVC_GET of one service (SVC_ID or SVC_AUTH_KEY)
 * @skb: the request
 * @info: its attributes
 *
 * Return: 0 or -errno.
 */
int swnic_nl_svc_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct swnic_device *sdev;
	struct swnic_service *svc;
	struct sk_buff *msg;
	int ret;

	sdev = swnic_nl_dev_get(skb, info->attrs, info->extack);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out_put;
	}
	mutex_lock(&sdev->lock);
	svc = swnic_nl_svc_find(sdev, info->attrs, info->extack);
	if (IS_ERR(svc))
		ret = PTR_ERR(svc);
	else
		ret = swnic_nl_fill_svc(msg, sdev, svc, swnic_nl_user_ns(skb),
					info->snd_portid, info->snd_seq, 0,
					SWNIC_NL_CMD_SVC_GET, NULL);
	mutex_unlock(&sdev->lock);
	if (ret) {
		nlmsg_free(msg);
		goto out_put;
	}
	ret = genlmsg_reply(msg, info);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/* Resolve an SVC_GET dump's device filter into cb->args[0] and [2]. */
static int swnic_nl_svc_dump_filter(struct netlink_callback *cb,
				    struct netlink_ext_ack *extack)
{
	struct nlattr **attrs = swnic_genl_dump_attrs(cb);
	struct swnic_device *sdev;

	if (!attrs[SWNIC_A_DEV_INDEX] && !attrs[SWNIC_A_DEV_NAME])
		return 0;
	sdev = swnic_nl_dev_get(cb->skb, attrs, extack);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	cb->args[0] = sdev->index;
	cb->args[2] = sdev->index + 1;
	swnic_device_put(sdev);
	return 0;
}

/**
 * swnic_nl_svc_get_dump_start() - resolve the device filter of an SVC_GET dump
 * @cb: the dump, before its first part
 *
 * As swnic_nl_dump_start(): without an extack here (6.1), the error is
 * reported by the first part (cb->args[3]).
 *
 * Return: 0 or -ENODEV.
 */
int swnic_nl_svc_get_dump_start(struct netlink_callback *cb)
{
	int ret = swnic_nl_svc_dump_filter(cb, cb->extack);

	if (ret && !cb->extack) {
		cb->args[3] = 1;
		return 0;
	}
	return ret;
}

/**
 * swnic_nl_svc_get_dumpit() - SVC_GET dump, of one device if DEV_* given
 * @skb: the part being filled
 * @cb: the dump; cb->args[0] is the index of the device being dumped,
 *	cb->args[1] the next service id on it (ids grow along the list),
 *	cb->args[2] the device filter (index + 1, 0: all), cb->args[3] set
 *	if resolving it failed
 *
 * Return: the part's length, 0 at the end, or -errno.
 */
int swnic_nl_svc_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct user_namespace *ns = swnic_nl_user_ns(cb->skb);
	struct swnic_service *svc;
	struct swnic_device *sdev;
	int ret = 0;

	if (cb->args[3])
		return swnic_nl_svc_dump_filter(cb, cb->extack) ?: -ENODEV;
	for (; cb->args[0] < SWNIC_MAX_DEVICES; cb->args[0]++, cb->args[1] = 0) {
		if (cb->args[2] && cb->args[0] + 1 != cb->args[2])
			break;
		sdev = swnic_device_lookup_index(cb->args[0]);
		if (!sdev)
			continue;
		if (!swnic_nl_sees_dev(cb->skb, sdev)) {
			swnic_device_put(sdev);
			continue;
		}
		mutex_lock(&sdev->lock);
		/* Moves when a service is added or deleted. */
		cb->seq = sdev->next_svc_id + swnic_devices_gen;
		list_for_each_entry(svc, &sdev->services, node)
			cb->seq += svc->id;
		list_for_each_entry(svc, &sdev->services, node) {
			if (svc->id < cb->args[1])
				continue;
			ret = swnic_nl_fill_svc(skb, sdev, svc, ns,
						NETLINK_CB(cb->skb).portid,
						cb->nlh->nlmsg_seq, NLM_F_MULTI,
						SWNIC_NL_CMD_SVC_GET, cb);
			if (ret)
				break;
			cb->args[1] = svc->id + 1;
		}
		mutex_unlock(&sdev->lock);
		swnic_device_put(sdev);
		if (ret)
			break;
	}
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
}

/* Parse SVC_MEMBERS (already validated) into @svc's uids and gids. */
static int swnic_nl_parse_members(const struct nlattr *nest,
				  struct user_namespace *ns,
				  struct swnic_service *svc,
				  struct netlink_ext_ack *extack)
{
	const struct nlattr *a;
	u32 i, n = 0;
	int rem;

	svc->nuids = 0;
	svc->ngids = 0;
	nla_for_each_nested(a, nest, rem) {
		if (++n > SWNIC_SVC_MAX_MEMBERS) {
			NL_SET_ERR_MSG_ATTR(extack, nest,
					    "too many members (at most 64)");
			return -EINVAL;
		}
		if (nla_type(a) == SWNIC_A_MEMBER_UID) {
			kuid_t uid = make_kuid(ns, nla_get_u32(a));

			if (!uid_valid(uid)) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "uid not mapped in the caller's user namespace");
				return -EINVAL;
			}
			for (i = 0; i < svc->nuids; i++)
				if (uid_eq(svc->uids[i], uid))
					break;
			if (i == svc->nuids)
				svc->uids[svc->nuids++] = uid;
		} else {
			kgid_t gid = make_kgid(ns, nla_get_u32(a));

			if (!gid_valid(gid)) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "gid not mapped in the caller's user namespace");
				return -EINVAL;
			}
			for (i = 0; i < svc->ngids; i++)
				if (gid_eq(svc->gids[i], gid))
					break;
			if (i == svc->ngids)
				svc->gids[svc->ngids++] = gid;
		}
	}
	return 0;
}

/**
 * swnic_nl_svc_new_doit() - SVC_NEW: a service with a new auth key
 * @skb: the request
 * @info: its attributes: the device, SVC_AUTH_KEY, optional flags, members
 *	 and max domains
 *
 * Return: 0 or -errno (-EEXIST for a key the device has already).
 */
int swnic_nl_svc_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct sk_buff *event = NULL;
	struct swnic_service *svc;
	struct swnic_device *sdev;
	u32 key;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SWNIC_A_SVC_AUTH_KEY))
		return -EINVAL;
	if (attrs[SWNIC_A_SVC_ID]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[SWNIC_A_SVC_ID],
				    "the kernel chooses service ids");
		return -EINVAL;
	}
	sdev = swnic_nl_dev_get(skb, attrs, info->extack);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ret = swnic_nl_dev_admin(skb, sdev, info->extack);
	if (ret)
		goto out_put;

	svc = swnic_service_alloc();
	if (!svc) {
		ret = -ENOMEM;
		goto out_put;
	}
	key = nla_get_u32(attrs[SWNIC_A_SVC_AUTH_KEY]);
	svc->auth_key = key;
	if (attrs[SWNIC_A_SVC_FLAGS])
		svc->flags = nla_get_u32(attrs[SWNIC_A_SVC_FLAGS]);
	if (attrs[SWNIC_A_SVC_MAX_DOMAINS])
		svc->max_domains = nla_get_u32(attrs[SWNIC_A_SVC_MAX_DOMAINS]);
	if (attrs[SWNIC_A_SVC_MEMBERS]) {
		ret = swnic_nl_parse_members(attrs[SWNIC_A_SVC_MEMBERS],
					     swnic_nl_user_ns(skb), svc,
					     info->extack);
		if (ret)
			goto err_free;
	}

	mutex_lock(&sdev->lock);
	if (sdev->dead) {
		NL_SET_ERR_MSG(info->extack, "the device is being destroyed");
		ret = -ENODEV;
	} else if (swnic_service_find_key(sdev, key)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[SWNIC_A_SVC_AUTH_KEY],
				    "the device has a service with this auth key");
		ret = -EEXIST;
	} else {
		ret = swnic_service_add(sdev, svc);
		if (ret)
			NL_SET_ERR_MSG(info->extack,
				       "the device has too many services");
	}
	if (!ret)
		event = swnic_nl_svc_event(sdev, svc, SWNIC_NL_CMD_SVC_NEW);
	mutex_unlock(&sdev->lock);
	if (ret)
		goto err_free;
	swnic_nl_svc_send_event(sdev, event);
	swnic_device_put(sdev);
	return 0;

err_free:
	kfree(svc);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/**
 * swnic_nl_svc_del_doit() - SVC_DEL of a service no domain uses
 * @skb: the request
 * @info: its attributes
 *
 * Return: 0 or -errno (-EBUSY while domains use it).
 */
int swnic_nl_svc_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *event = NULL;
	struct swnic_service *svc;
	struct swnic_device *sdev;
	int ret;

	sdev = swnic_nl_dev_get(skb, info->attrs, info->extack);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ret = swnic_nl_dev_admin(skb, sdev, info->extack);
	if (ret)
		goto out_put;

	mutex_lock(&sdev->lock);
	svc = swnic_nl_svc_find(sdev, info->attrs, info->extack);
	if (IS_ERR(svc)) {
		ret = PTR_ERR(svc);
	} else if (svc->id == SWNIC_SVC_DEFAULT_ID) {
		NL_SET_ERR_MSG(info->extack,
			       "the default service cannot be deleted (disable it instead)");
		ret = -EINVAL;
	} else if (svc->ndomains) {
		NL_SET_ERR_MSG(info->extack,
			       "domains use this service: close them first");
		ret = -EBUSY;
	} else {
		event = swnic_nl_svc_event(sdev, svc, SWNIC_NL_CMD_SVC_DEL);
		swnic_service_free(svc);
	}
	mutex_unlock(&sdev->lock);
	swnic_nl_svc_send_event(sdev, event);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/**
 * swnic_nl_svc_set_doit() - SVC_SET: flags, members or max domains
 * @skb: the request
 * @info: its attributes
 *
 * Return: 0 or -errno.
 */
int swnic_nl_svc_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct swnic_service *svc, *members = NULL;
	struct sk_buff *event = NULL;
	struct swnic_device *sdev;
	int ret;

	if (!attrs[SWNIC_A_SVC_FLAGS] && !attrs[SWNIC_A_SVC_MAX_DOMAINS] &&
	    !attrs[SWNIC_A_SVC_MEMBERS]) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to change: give flags, max domains or members");
		return -EINVAL;
	}
	sdev = swnic_nl_dev_get(skb, attrs, info->extack);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ret = swnic_nl_dev_admin(skb, sdev, info->extack);
	if (ret)
		goto out_put;
	if (attrs[SWNIC_A_SVC_MEMBERS]) {
		members = swnic_service_alloc();
		if (!members) {
			ret = -ENOMEM;
			goto out_put;
		}
		ret = swnic_nl_parse_members(attrs[SWNIC_A_SVC_MEMBERS],
					     swnic_nl_user_ns(skb), members,
					     info->extack);
		if (ret)
			goto out_free;
	}

	mutex_lock(&sdev->lock);
	svc = swnic_nl_svc_find(sdev, attrs, info->extack);
	if (IS_ERR(svc)) {
		ret = PTR_ERR(svc);
	} else {
		/* Domains that use the service keep it: this binds new ones. */
		if (attrs[SWNIC_A_SVC_FLAGS])
			svc->flags = nla_get_u32(attrs[SWNIC_A_SVC_FLAGS]);
		if (attrs[SWNIC_A_SVC_MAX_DOMAINS])
			svc->max_domains =
				nla_get_u32(attrs[SWNIC_A_SVC_MAX_DOMAINS]);
		if (members) {
			svc->nuids = members->nuids;
			svc->ngids = members->ngids;
			memcpy(svc->uids, members->uids, sizeof(svc->uids));
			memcpy(svc->gids, members->gids, sizeof(svc->gids));
		}
		event = swnic_nl_svc_event(sdev, svc, SWNIC_NL_CMD_SVC_SET);
	}
	mutex_unlock(&sdev->lock);
	swnic_nl_svc_send_event(sdev, event);
out_free:
	kfree(members);
out_put:
	swnic_device_put(sdev);
	return ret;
}
