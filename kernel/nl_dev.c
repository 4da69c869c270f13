// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink: devices - DEV_GET, DEV_NEW, DEV_DEL, DEV_SET, and the helpers
 * the other command files use to find the device a request names.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/netdevice.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "bind.h"
#include "device.h"
#include "nl_internal.h"

/* ---- finding devices ------------------------------------------------------ */

/**
 * swnic_nl_dev_by_index_locked() - the listed device with an index
 * @index: the index
 *
 * Return: the device (not referenced), or NULL. Caller holds
 * swnic_devices_lock.
 */
struct swnic_device *swnic_nl_dev_by_index_locked(u32 index)
{
	struct swnic_device *sdev;

	lockdep_assert_held(&swnic_devices_lock);
	list_for_each_entry(sdev, &swnic_devices, list)
		if (sdev->index == index)
			return sdev;
	return NULL;
}

/**
 * swnic_nl_dev_get() - the device a request names
 * @skb: the request: only devices of its namespace are found
 * @attrs: the request's attributes: DEV_INDEX or DEV_NAME
 * @extack: for the error message
 *
 * Return: the device, referenced, or an ERR_PTR (-EINVAL, -ENODEV).
 */
struct swnic_device *swnic_nl_dev_get(const struct sk_buff *skb,
				      struct nlattr **attrs,
				      struct netlink_ext_ack *extack)
{
	struct swnic_device *sdev;
	struct nlattr *attr;

	if (attrs[SWNIC_A_DEV_INDEX] && attrs[SWNIC_A_DEV_NAME]) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[SWNIC_A_DEV_NAME],
				    "give the device index or name, not both");
		return ERR_PTR(-EINVAL);
	}
	if (attrs[SWNIC_A_DEV_INDEX]) {
		attr = attrs[SWNIC_A_DEV_INDEX];
		sdev = swnic_device_lookup_index(nla_get_u32(attr));
	} else if (attrs[SWNIC_A_DEV_NAME]) {
		attr = attrs[SWNIC_A_DEV_NAME];
		sdev = swnic_device_lookup_name(nla_data(attr));
	} else {
		NL_SET_ERR_MSG(extack,
			       "device index or name attribute required");
		return ERR_PTR(-EINVAL);
	}
	/*
	 * A device of another namespace is none, with the same answer: no
	 * one probes for the names and indexes of other namespaces' devices.
	 */
	if (sdev && !swnic_nl_sees_dev(skb, sdev)) {
		swnic_device_put(sdev);
		sdev = NULL;
	}
	if (!sdev) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "no such device in this network namespace");
		return ERR_PTR(-ENODEV);
	}
	return sdev;
}

/**
 * swnic_nl_put_dev_id() - add DEV_INDEX and DEV_NAME (immutable fields)
 * @skb: the message
 * @sdev: the device
 *
 * Return: 0 or -EMSGSIZE.
 */
int swnic_nl_put_dev_id(struct sk_buff *skb, struct swnic_device *sdev)
{
	if (nla_put_u32(skb, SWNIC_A_DEV_INDEX, sdev->index) ||
	    nla_put_string(skb, SWNIC_A_DEV_NAME, sdev->name))
		return -EMSGSIZE;
	return 0;
}

/* ---- devices -------------------------------------------------------------- */

/**
 * swnic_nl_fill_dev() - one device message: DEV_GET's reply, dump and events
 * @skb: the message
 * @sdev: the device
 * @portid: the requester's port (0 for events)
 * @seq: the request's sequence number (0 for events)
 * @flags: NLM_F_MULTI in dumps, else 0
 * @cmd: SWNIC_NL_CMD_DEV_*
 * @cb: the dump's callback, NULL outside dumps
 *
 * Return: 0 or -EMSGSIZE (nothing added).
 */
int swnic_nl_fill_dev(struct sk_buff *skb, struct swnic_device *sdev,
		      u32 portid, u32 seq, int flags, u8 cmd,
		      struct netlink_callback *cb)
{
	char ifname[IFNAMSIZ] = "";
	struct net_device *nd;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &swnic_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);

	mutex_lock(&sdev->lock);
	nd = rcu_dereference_protected(sdev->netdev,
				       lockdep_is_held(&sdev->lock));
	if (nd)
		strscpy(ifname, nd->name, sizeof(ifname));
	if (swnic_nl_put_dev_id(skb, sdev) ||
	    nla_put_u32(skb, SWNIC_A_DEV_IFINDEX, sdev->ifindex) ||
	    (nd && nla_put_string(skb, SWNIC_A_DEV_IFNAME, ifname)) ||
	    nla_put_u32(skb, SWNIC_A_DEV_STATE, sdev->state) ||
	    nla_put_u32(skb, SWNIC_A_DEV_DOMAINS, sdev->ndomains) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_DOMAINS, sdev->limits.max_domains) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_MR, sdev->limits.max_mr) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_EP, sdev->limits.max_ep) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_CQ, sdev->limits.max_cq) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_DOMAINS_PER_USER,
			sdev->limits.max_domains_per_user) ||
	    nla_put_u64_64bit(skb, SWNIC_A_DEV_MAX_PINNED,
			      sdev->limits.max_pinned, SWNIC_A_PAD)) {
		mutex_unlock(&sdev->lock);
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	mutex_unlock(&sdev->lock);
	genlmsg_end(skb, hdr);
	return 0;
}

/* DEV_GET of the device named by DEV_INDEX or DEV_NAME. */
int swnic_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct swnic_device *sdev;
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
	ret = swnic_nl_fill_dev(msg, sdev, info->snd_portid, info->snd_seq, 0,
				SWNIC_NL_CMD_DEV_GET, NULL);
	ret = swnic_nl_reply(msg, info, ret);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/* DEV_GET dump; cb->args[0]: index of the next device to dump. */
int swnic_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct swnic_device *sdev;
	int ret = 0;

	mutex_lock(&swnic_devices_lock);
	cb->seq = swnic_devices_gen;
	for (; cb->args[0] < SWNIC_MAX_DEVICES; cb->args[0]++) {
		sdev = swnic_nl_dev_by_index_locked(cb->args[0]);
		if (!sdev || !swnic_nl_sees_dev(cb->skb, sdev))
			continue;
		ret = swnic_nl_fill_dev(skb, sdev, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI,
					SWNIC_NL_CMD_DEV_GET, cb);
		if (ret)
			break;
	}
	mutex_unlock(&swnic_devices_lock);
	return swnic_nl_dump_end(skb, ret);
}

static bool swnic_nl_dev_name_ok(const char *name)
{
	size_t len = strlen(name), plen = strlen(SWNIC_DEV_PREFIX), i;

	if (len <= plen || len >= SWNIC_NAME_MAX ||
	    strncmp(name, SWNIC_DEV_PREFIX, plen))
		return false;
	for (i = plen; i < len; i++)
		if (!isalnum(name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

/* DEV_NEW: a device, bound to a netdev if one is named. */
int swnic_nl_dev_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct nlattr *ifname = attrs[SWNIC_A_DEV_IFNAME];
	struct nlattr *ifindex = attrs[SWNIC_A_DEV_IFINDEX];
	struct swnic_device *sdev;
	const char *name;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SWNIC_A_DEV_NAME))
		return -EINVAL;
	name = nla_data(attrs[SWNIC_A_DEV_NAME]);
	if (!swnic_nl_dev_name_ok(name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[SWNIC_A_DEV_NAME],
				    "a device name is \"swnic\" then letters, digits, '_' or '-', 15 characters at most");
		return -EINVAL;
	}
	if (ifname && ifindex) {
		NL_SET_ERR_MSG_ATTR(info->extack, ifname,
				    "give the netdev by index or by name, not both");
		return -EINVAL;
	}
	/*
	 * Devices (minors, char devices) are global: only the
	 * initial namespace's administrator makes them. A bound one is then
	 * administered from its netdev's namespace too.
	 */
	if (!netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "creating a device needs CAP_NET_ADMIN in the initial user namespace");
		return -EPERM;
	}

	/*
	 * One to bind is made down: its node appears at once, and a host
	 * user who opened it before the bind would have a domain in the
	 * netdev's namespace, never having been there.
	 */
	sdev = swnic_device_create(name, ifname || ifindex ?
				   SWNIC_DEV_STATE_DOWN : SWNIC_DEV_STATE_UP);
	if (IS_ERR(sdev)) {
		ret = PTR_ERR(sdev);
		if (ret == -EEXIST)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[SWNIC_A_DEV_NAME],
					    "a device with this name exists");
		else if (ret == -ENOSPC)
			NL_SET_ERR_MSG(info->extack,
				       "no device index is free");
		return ret;
	}
	/* Listed: a reference of our own, whoever destroys it meanwhile. */
	swnic_device_get(sdev);
	if (ifname || ifindex) {
		ret = swnic_device_bind(sdev, genl_info_net(info),
					ifindex ? nla_get_u32(ifindex) : 0,
					ifname ? nla_data(ifname) : NULL, NULL,
					info->extack);
		if (ret) {
			bool mine;

			/*
			 * The device was listed meanwhile: a DEV_DEL may
			 * have found it. Whoever marks it dead destroys it.
			 */
			mutex_lock(&sdev->lock);
			mine = !sdev->dead;
			sdev->dead = true;
			mutex_unlock(&sdev->lock);
			if (mine)
				swnic_device_destroy(sdev);
			goto out_put;
		}
		/* Up once bound, unless its netdev went meanwhile. */
		mutex_lock(&sdev->lock);
		if (!sdev->dead && rcu_access_pointer(sdev->netdev))
			WRITE_ONCE(sdev->state, SWNIC_DEV_STATE_UP);
		mutex_unlock(&sdev->lock);
	}
	swnic_nl_notify_dev(sdev, SWNIC_NL_CMD_DEV_NEW);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/* DEV_DEL: destroy a device (with domains open: only if forced). */
int swnic_nl_dev_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *flags = info->attrs[SWNIC_A_FLAGS];
	bool force = flags && (nla_get_u32(flags) & SWNIC_DEV_DEL_F_FORCE);
	struct swnic_device *sdev;
	int ret;

	/*
	 * Devices are the host's, as they are made: a namespace's
	 * administrator sets the one bound there down, but deletes none
	 * (domains that host users opened before it was bound go with it).
	 */
	if (!netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "deleting a device needs CAP_NET_ADMIN in the initial user namespace");
		return -EPERM;
	}
	sdev = swnic_nl_dev_get(skb, info->attrs, info->extack);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ret = swnic_nl_dev_admin(skb, sdev, info->extack);
	if (ret)
		goto out_put;

	/* Decide and mark dead at once: no domain opens in between. */
	mutex_lock(&sdev->lock);
	if (sdev->dead) {
		NL_SET_ERR_MSG(info->extack, "the device is being destroyed");
		ret = -ENODEV;
	} else if (sdev->ndomains && !force) {
		NL_SET_ERR_MSG(info->extack,
			       "domains are open on the device (force deletes it anyway)");
		ret = -EBUSY;
	} else {
		sdev->dead = true;
	}
	mutex_unlock(&sdev->lock);
	if (ret)
		goto out_put;

	swnic_nl_notify_dev(sdev, SWNIC_NL_CMD_DEV_DEL);
	swnic_device_destroy(sdev);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/* DEV_SET: state, netdev binding, limits. */
int swnic_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	static const int changes[] = {
		SWNIC_A_DEV_STATE, SWNIC_A_DEV_IFINDEX, SWNIC_A_DEV_IFNAME,
		SWNIC_A_DEV_MAX_DOMAINS, SWNIC_A_DEV_MAX_MR, SWNIC_A_DEV_MAX_EP,
		SWNIC_A_DEV_MAX_CQ, SWNIC_A_DEV_MAX_PINNED,
		SWNIC_A_DEV_MAX_DOMAINS_PER_USER,
	};
	struct nlattr **attrs = info->attrs;
	struct nlattr *ifname = attrs[SWNIC_A_DEV_IFNAME];
	struct nlattr *ifindex = attrs[SWNIC_A_DEV_IFINDEX];
	struct swnic_device *sdev;
	bool any = false;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(changes); i++)
		any |= !!attrs[changes[i]];
	if (!any) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to change: give a state, a netdev or limits");
		return -EINVAL;
	}
	if (ifname && ifindex) {
		NL_SET_ERR_MSG_ATTR(info->extack, ifname,
				    "give the netdev by index or by name, not both");
		return -EINVAL;
	}
	sdev = swnic_nl_dev_get(skb, attrs, info->extack);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ret = swnic_nl_dev_admin(skb, sdev, info->extack);
	if (ret)
		goto out_put;
	/*
	 * Unbound, the device is the initial namespace's, with its state,
	 * limits, services and open domains: an administrator of another
	 * namespace would hand the host's users a device it configured,
	 * whose endpoints it keeps, up. (Its netdev going - deleted, or its
	 * namespace gone - unbinds it too, but down: for the host's
	 * administrator to look at before it serves anyone.)
	 */
	if (ifindex && !nla_get_u32(ifindex) &&
	    !net_eq(genl_info_net(info), &init_net) &&
	    !netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "unbound, the device moves to the initial network namespace: CAP_NET_ADMIN there is needed");
		ret = -EPERM;
		goto out_put;
	}

	/*
	 * Bind first: if that fails, nothing changed. Unbind last: the
	 * device is the initial namespace's then. Each step checks that the
	 * device is still in the caller's namespace (swnic_nl_dev_moved()).
	 */
	if (ifname || (ifindex && nla_get_u32(ifindex))) {
		ret = swnic_device_bind(sdev, genl_info_net(info),
					ifindex ? nla_get_u32(ifindex) : 0,
					ifname ? nla_data(ifname) : NULL,
					genl_info_net(info), info->extack);
		if (ret)
			goto out_put;
	}

	mutex_lock(&sdev->lock);
	if (swnic_nl_dev_moved(info, sdev)) {
		mutex_unlock(&sdev->lock);
		ret = -ENODEV;
		goto out_put;
	}
	/* Refused before anything changes (swnic_device_unbind()). */
	if (ifindex && !nla_get_u32(ifindex) &&
	    !net_eq(genl_info_net(info), &init_net) && sdev->ndomains) {
		mutex_unlock(&sdev->lock);
		NL_SET_ERR_MSG(info->extack,
			       "domains are open on the device in its network namespace");
		ret = -EBUSY;
		goto out_put;
	}
	if (attrs[SWNIC_A_DEV_STATE] && sdev->norphans &&
	    nla_get_u32(attrs[SWNIC_A_DEV_STATE]) == SWNIC_DEV_STATE_UP) {
		mutex_unlock(&sdev->lock);
		NL_SET_ERR_MSG(info->extack, SWNIC_ORPHANS_MSG);
		ret = -EBUSY;
		goto out_put;
	}
	if (attrs[SWNIC_A_DEV_STATE])
		WRITE_ONCE(sdev->state,
			   nla_get_u32(attrs[SWNIC_A_DEV_STATE]));
	if (attrs[SWNIC_A_DEV_MAX_DOMAINS])
		sdev->limits.max_domains =
			nla_get_u32(attrs[SWNIC_A_DEV_MAX_DOMAINS]);
	if (attrs[SWNIC_A_DEV_MAX_MR])
		sdev->limits.max_mr = nla_get_u32(attrs[SWNIC_A_DEV_MAX_MR]);
	if (attrs[SWNIC_A_DEV_MAX_EP])
		sdev->limits.max_ep = nla_get_u32(attrs[SWNIC_A_DEV_MAX_EP]);
	if (attrs[SWNIC_A_DEV_MAX_CQ])
		sdev->limits.max_cq = nla_get_u32(attrs[SWNIC_A_DEV_MAX_CQ]);
	if (attrs[SWNIC_A_DEV_MAX_PINNED])
		sdev->limits.max_pinned =
			nla_get_u64(attrs[SWNIC_A_DEV_MAX_PINNED]);
	if (attrs[SWNIC_A_DEV_MAX_DOMAINS_PER_USER])
		sdev->limits.max_domains_per_user =
			nla_get_u32(attrs[SWNIC_A_DEV_MAX_DOMAINS_PER_USER]);
	mutex_unlock(&sdev->lock);

	if (ifindex && !nla_get_u32(ifindex)) {
		ret = swnic_device_unbind(sdev, genl_info_net(info),
					  info->extack);
		if (ret)
			goto out_put;
	}
	swnic_nl_notify_dev(sdev, SWNIC_NL_CMD_DEV_SET);
out_put:
	swnic_device_put(sdev);
	return ret;
}
