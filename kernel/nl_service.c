// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink: services - SVC_GET, SVC_NEW, SVC_DEL, SVC_SET (their events are
 * built in nl_events.c). The services themselves are service.c's; their
 * list is sdev->services, under sdev->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "compat.h"
#include "device.h"
#include "nl_internal.h"
#include "service.h"

/* The service named by SVC_ID or SVC_AUTH_KEY. sdev->lock held. */
static struct swnic_service *swnic_nl_svc_find(struct swnic_device *sdev,
					       struct nlattr **attrs,
					       struct netlink_ext_ack *extack)
{
	struct swnic_service *svc;

	lockdep_assert_held(&sdev->lock);
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

/**
 * swnic_nl_fill_svc() - one service message: SVC_GET's reply, dump and
 *	events
 * @skb: the message
 * @sdev: the service's device; its lock is held
 * @svc: the service
 * @ns: the user namespace its members are shown in
 * @portid: the requester's port (0 for events)
 * @seq: the request's sequence number (0 for events)
 * @flags: NLM_F_MULTI in dumps, else 0
 * @cmd: SWNIC_NL_CMD_SVC_*
 * @cb: the dump's callback, NULL outside dumps
 *
 * Return: 0 or -EMSGSIZE (nothing added).
 */
int swnic_nl_fill_svc(struct sk_buff *skb, struct swnic_device *sdev,
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
	ret = swnic_nl_reply(msg, info, ret);
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
	/* One value for the whole dump: it spans devices. */
	cb->seq = atomic_read(&swnic_services_gen) + swnic_devices_gen;
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
	return swnic_nl_dump_end(skb, ret);
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
	struct swnic_nl_event event = { };
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
	} else if (swnic_nl_dev_moved(info, sdev)) {
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
		swnic_nl_svc_event(sdev, svc, SWNIC_NL_CMD_SVC_NEW, &event);
	mutex_unlock(&sdev->lock);
	if (ret)
		goto err_free;
	swnic_nl_event_send(&event, GFP_KERNEL);
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
	struct swnic_nl_event event = { };
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
	if (swnic_nl_dev_moved(info, sdev)) {
		ret = -ENODEV;
	} else if (IS_ERR(svc)) {
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
		swnic_nl_svc_event(sdev, svc, SWNIC_NL_CMD_SVC_DEL, &event);
		swnic_service_free(svc);
	}
	mutex_unlock(&sdev->lock);
	swnic_nl_event_send(&event, GFP_KERNEL);
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
	struct swnic_nl_event event = { };
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
	if (swnic_nl_dev_moved(info, sdev)) {
		ret = -ENODEV;
	} else if (IS_ERR(svc)) {
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
		swnic_nl_svc_event(sdev, svc, SWNIC_NL_CMD_SVC_SET, &event);
	}
	mutex_unlock(&sdev->lock);
	swnic_nl_event_send(&event, GFP_KERNEL);
out_free:
	kfree(members);
out_put:
	swnic_device_put(sdev);
	return ret;
}
