// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "swnic": its policies and commands, devices
 * and the events group (domains and MRs are in nl_domain.c, counters in
 * stats.c, services in service.c). include/uapi/linux/swnic_netlink.h and
 * Documentation/netlink/specs/swnic.yaml describe it.
 *
 * Every command has its own strict policy. Changes need CAP_NET_ADMIN over
 * the caller's network namespace (GENL_UNS_ADMIN_PERM) and over the
 * device's (bind.c: the bound netdev's namespace, else init_net). A device
 * exists for netlink only in its own namespace (swnic_nl_sees_dev()):
 * anyone there may read it and its services; domains, and their counters,
 * only their owner (same uid) and administrators of the device see.
 *
 * Events go to listeners in init_net and, for a device bound into another
 * namespace, in that namespace too; joining the group needs CAP_NET_ADMIN.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/netdevice.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "bind.h"
#include "compat.h"
#include "device.h"
#include "domain.h"
#include "mr.h"
#include "netlink.h"
#include "service.h"
#include "stats.h"

enum swnic_nl_mcgrp {
	SWNIC_NL_MCGRP_EVENTS,
};

/* Events are dropped before the family is registered and after. */
static bool swnic_genl_registered;

/* ---- policies ------------------------------------------------------------ */

/* Not const: 6.1's struct nla_policy points to them without const. */
static struct netlink_range_validation swnic_nl_ifindex_range = {
	.min = 1,
	.max = INT_MAX,
};

static struct netlink_range_validation swnic_nl_ifindex0_range = {
	.min = 0,
	.max = INT_MAX,
};

static struct netlink_range_validation swnic_nl_limit_range = {
	.min = 1,
	.max = SWNIC_LIMIT_MAX,
};

static struct netlink_range_validation swnic_nl_id_range = {
	.min = 1,
	.max = INT_MAX,
};

#define SWNIC_NL_POLICY_DEV						\
	[SWNIC_A_DEV_INDEX] = NLA_POLICY_MAX(NLA_U32, SWNIC_MAX_DEVICES - 1), \
	[SWNIC_A_DEV_NAME] = { .type = NLA_NUL_STRING,			\
			       .len = SWNIC_NAME_MAX - 1 }

#define SWNIC_NL_POLICY_IFNAME						\
	[SWNIC_A_DEV_IFNAME] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 }

#define SWNIC_NL_POLICY_SVC						\
	[SWNIC_A_SVC_ID] = NLA_POLICY_MIN(NLA_U32, 1),			\
	[SWNIC_A_SVC_AUTH_KEY] = NLA_POLICY_MIN(NLA_U32, 1)

#define SWNIC_NL_POLICY_SVC_SET						\
	[SWNIC_A_SVC_FLAGS] = NLA_POLICY_MASK(NLA_U32, SWNIC_SVC_F_ALL), \
	[SWNIC_A_SVC_MEMBERS] = NLA_POLICY_NESTED(swnic_nl_member_policy), \
	[SWNIC_A_SVC_MAX_DOMAINS] =					\
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_limit_range)

static const struct nla_policy swnic_nl_member_policy[SWNIC_A_MEMBER_MAX + 1] = {
	[SWNIC_A_MEMBER_UID] = { .type = NLA_U32 },
	[SWNIC_A_MEMBER_GID] = { .type = NLA_U32 },
};

static const struct nla_policy swnic_nl_dev_get_policy[SWNIC_A_MAX + 1] = {
	SWNIC_NL_POLICY_DEV,
};

static const struct nla_policy swnic_nl_dev_new_policy[SWNIC_A_MAX + 1] = {
	[SWNIC_A_DEV_NAME] = { .type = NLA_NUL_STRING,
			       .len = SWNIC_NAME_MAX - 1 },
	[SWNIC_A_DEV_IFINDEX] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_ifindex_range),
	SWNIC_NL_POLICY_IFNAME,
};

static const struct nla_policy swnic_nl_dev_del_policy[SWNIC_A_MAX + 1] = {
	SWNIC_NL_POLICY_DEV,
	[SWNIC_A_FLAGS] = NLA_POLICY_MASK(NLA_U32, SWNIC_DEV_DEL_F_FORCE),
};

static const struct nla_policy swnic_nl_dev_set_policy[SWNIC_A_MAX + 1] = {
	SWNIC_NL_POLICY_DEV,
	[SWNIC_A_DEV_STATE] = NLA_POLICY_MAX(NLA_U32, SWNIC_DEV_STATE_UP),
	[SWNIC_A_DEV_IFINDEX] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_ifindex0_range),
	SWNIC_NL_POLICY_IFNAME,
	[SWNIC_A_DEV_MAX_DOMAINS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_limit_range),
	[SWNIC_A_DEV_MAX_MR] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_limit_range),
	[SWNIC_A_DEV_MAX_EP] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_limit_range),
	[SWNIC_A_DEV_MAX_CQ] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_limit_range),
	[SWNIC_A_DEV_MAX_PINNED] = { .type = NLA_U64 },
	[SWNIC_A_DEV_MAX_DOMAINS_PER_USER] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_limit_range),
};

/* DOMAIN_GET, STAT_GET, STAT_RESET: a device and/or a domain. */
static const struct nla_policy swnic_nl_domain_policy[SWNIC_A_MAX + 1] = {
	SWNIC_NL_POLICY_DEV,
	[SWNIC_A_DOMAIN_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &swnic_nl_id_range),
};

/* SVC_GET, SVC_DEL */
static const struct nla_policy swnic_nl_svc_policy[SWNIC_A_MAX + 1] = {
	SWNIC_NL_POLICY_DEV,
	SWNIC_NL_POLICY_SVC,
};

static const struct nla_policy swnic_nl_svc_new_policy[SWNIC_A_MAX + 1] = {
	SWNIC_NL_POLICY_DEV,
	[SWNIC_A_SVC_AUTH_KEY] = NLA_POLICY_MIN(NLA_U32, 1),
	SWNIC_NL_POLICY_SVC_SET,
};

static const struct nla_policy swnic_nl_svc_set_policy[SWNIC_A_MAX + 1] = {
	SWNIC_NL_POLICY_DEV,
	SWNIC_NL_POLICY_SVC,
	SWNIC_NL_POLICY_SVC_SET,
};

/* ---- helpers shared with service.c -------------------------------------- */

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
 * swnic_nl_sees_dev() - is a device in the requester's network namespace?
 * @skb: the request (in dumps, cb->skb)
 * @sdev: the device
 *
 * A device belongs to one namespace (swnic_device_net()): that of its
 * netdev, or the initial one while unbound. Netlink shows it there only,
 * as it does a netdev: another namespace is another host.
 *
 * Return: true if @sdev is in the namespace of @skb's socket.
 */
bool swnic_nl_sees_dev(const struct sk_buff *skb, struct swnic_device *sdev)
{
	bool ret;

	rcu_read_lock();
	ret = net_eq(sock_net(skb->sk), swnic_device_net(sdev));
	rcu_read_unlock();
	return ret;
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

	if (attrs[SWNIC_A_DEV_INDEX] && attrs[SWNIC_A_DEV_NAME]) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[SWNIC_A_DEV_NAME],
				    "give the device index or name, not both");
		return ERR_PTR(-EINVAL);
	}
	if (attrs[SWNIC_A_DEV_INDEX]) {
		sdev = swnic_device_lookup_index(nla_get_u32(attrs[SWNIC_A_DEV_INDEX]));
		if (!sdev)
			NL_SET_ERR_MSG_ATTR(extack, attrs[SWNIC_A_DEV_INDEX],
					    "no device with this index");
	} else if (attrs[SWNIC_A_DEV_NAME]) {
		sdev = swnic_device_lookup_name(nla_data(attrs[SWNIC_A_DEV_NAME]));
		if (!sdev)
			NL_SET_ERR_MSG_ATTR(extack, attrs[SWNIC_A_DEV_NAME],
					    "no device with this name");
	} else {
		NL_SET_ERR_MSG(extack,
			       "device index or name attribute required");
		return ERR_PTR(-EINVAL);
	}
	if (sdev && !swnic_nl_sees_dev(skb, sdev)) {
		swnic_device_put(sdev);
		sdev = NULL;
		NL_SET_ERR_MSG(extack,
			       "no such device in this network namespace");
	}
	return sdev ?: ERR_PTR(-ENODEV);
}

/* Has the requester of @skb CAP_NET_ADMIN over @sdev's namespace? */
static bool swnic_nl_capable(const struct sk_buff *skb,
			     struct swnic_device *sdev)
{
	bool ok;

	mutex_lock(&sdev->lock);
	ok = netlink_ns_capable(skb, swnic_device_net(sdev)->user_ns,
				CAP_NET_ADMIN);
	mutex_unlock(&sdev->lock);
	return ok;
}

/**
 * swnic_nl_dev_admin() - may the requester change a device?
 * @skb: the request
 * @sdev: the device
 * @extack: for the error message
 *
 * Return: 0, or -EPERM without CAP_NET_ADMIN over the device's namespace.
 */
int swnic_nl_dev_admin(struct sk_buff *skb, struct swnic_device *sdev,
		       struct netlink_ext_ack *extack)
{
	if (swnic_nl_capable(skb, sdev))
		return 0;
	NL_SET_ERR_MSG(extack,
		       "CAP_NET_ADMIN over the device's network namespace is needed");
	return -EPERM;
}

/* The credentials the requester opened its socket with. */
static const struct cred *swnic_nl_cred(const struct sk_buff *skb)
{
	const struct sock *sk = NETLINK_CB(skb).sk;

	if (sk && sk->sk_socket && sk->sk_socket->file)
		return sk->sk_socket->file->f_cred;
	return current_cred();
}

/**
 * swnic_nl_user_ns() - the user namespace a requester's ids are in
 * @skb: the request (in dumps, cb->skb)
 *
 * Return: the user namespace of the credentials that opened the socket.
 */
struct user_namespace *swnic_nl_user_ns(const struct sk_buff *skb)
{
	return swnic_nl_cred(skb)->user_ns;
}

/**
 * swnic_nl_sees_domain() - may a requester see a domain?
 * @skb: the request
 * @dom: the domain
 *
 * Return: true for the domain's owner (same uid) and for administrators
 * (CAP_NET_ADMIN over the device's namespace).
 */
bool swnic_nl_sees_domain(const struct sk_buff *skb, struct swnic_domain *dom)
{
	const struct cred *cred = swnic_nl_cred(skb);

	if (!swnic_nl_sees_dev(skb, dom->sdev))
		return false;
	if (uid_eq(dom->uid, cred->uid) || uid_eq(dom->uid, cred->euid))
		return true;
	return swnic_nl_capable(skb, dom->sdev);
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

/**
 * swnic_nl_multicast() - send an event to the events group
 * @sdev: the device it is about (for its namespace), or NULL
 * @msg: the message; consumed
 * @gfp: allocation context
 *
 * Listeners in init_net get it, and those in @sdev's namespace.
 */
void swnic_nl_multicast(struct swnic_device *sdev, struct sk_buff *msg,
			gfp_t gfp)
{
	struct sk_buff *clone;
	struct net *net = NULL;

	if (!READ_ONCE(swnic_genl_registered)) {
		nlmsg_free(msg);
		return;
	}
	if (sdev) {
		rcu_read_lock();
		net = swnic_device_net(sdev);
		net = net_eq(net, &init_net) ? NULL : maybe_get_net(net);
		rcu_read_unlock();
	}
	if (net) {
		clone = skb_clone(msg, gfp);
		if (clone)
			genlmsg_multicast_netns(&swnic_genl_family, net, clone,
						0, SWNIC_NL_MCGRP_EVENTS, gfp);
		put_net(net);
	}
	genlmsg_multicast_netns(&swnic_genl_family, &init_net, msg, 0,
				SWNIC_NL_MCGRP_EVENTS, gfp);
}

/* ---- devices -------------------------------------------------------------- */

/* @cb is the dump's callback, NULL outside dumps. */
static int swnic_nl_fill_dev(struct sk_buff *skb, struct swnic_device *sdev,
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

/**
 * swnic_nl_notify_dev() - tell listeners about a device
 * @sdev: the device
 * @cmd: SWNIC_NL_CMD_DEV_NEW (added), _DEV_DEL (removed) or _DEV_SET
 *	 (state, limits or binding changed)
 */
void swnic_nl_notify_dev(struct swnic_device *sdev, u8 cmd)
{
	struct sk_buff *msg;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (swnic_nl_fill_dev(msg, sdev, 0, 0, 0, cmd, NULL)) {
		nlmsg_free(msg);
		return;
	}
	swnic_nl_multicast(sdev, msg, GFP_KERNEL);
}

static int swnic_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
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
	if (ret) {
		nlmsg_free(msg);
		goto out_put;
	}
	ret = genlmsg_reply(msg, info);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/* cb->args[0]: index of the next device to dump. */
static int swnic_nl_dev_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
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

	/* A full skb ends this part; the next part resumes at args[0]. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
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

static int swnic_nl_dev_new_doit(struct sk_buff *skb, struct genl_info *info)
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
	 * Devices (minors, char devices, engine threads) are global: only the
	 * initial namespace's administrator makes them. A bound one is then
	 * administered from its netdev's namespace too.
	 */
	if (!netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "creating a device needs CAP_NET_ADMIN in the initial user namespace");
		return -EPERM;
	}

	sdev = swnic_device_create(name, 0);
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
	if (ifname || ifindex) {
		ret = swnic_device_bind(sdev, genl_info_net(info),
					ifindex ? nla_get_u32(ifindex) : 0,
					ifname ? nla_data(ifname) : NULL,
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
			return ret;
		}
	}
	swnic_nl_notify_dev(sdev, SWNIC_NL_CMD_DEV_NEW);
	return 0;
}

static int swnic_nl_dev_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *flags = info->attrs[SWNIC_A_FLAGS];
	bool force = flags && (nla_get_u32(flags) & SWNIC_DEV_DEL_F_FORCE);
	struct swnic_device *sdev;
	int ret;

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

static int swnic_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
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

	/* Bind first: if that fails, nothing changed. */
	if (ifname || (ifindex && nla_get_u32(ifindex))) {
		ret = swnic_device_bind(sdev, genl_info_net(info),
					ifindex ? nla_get_u32(ifindex) : 0,
					ifname ? nla_data(ifname) : NULL,
					info->extack);
		if (ret)
			goto out_put;
	} else if (ifindex) {
		swnic_device_unbind(sdev);
	}

	mutex_lock(&sdev->lock);
	if (attrs[SWNIC_A_DEV_STATE])
		sdev->state = nla_get_u32(attrs[SWNIC_A_DEV_STATE]);
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

	swnic_nl_notify_dev(sdev, SWNIC_NL_CMD_DEV_SET);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/* ---- limits --------------------------------------------------------------- */

/**
 * swnic_nl_limit_hit() - count and announce a request refused by a limit
 * @sdev: the device
 * @dom: the domain that made the request, or NULL (e.g. an open)
 * @limit: SWNIC_LIMIT_*
 *
 * Any context.
 */
void swnic_nl_limit_hit(struct swnic_device *sdev, struct swnic_domain *dom,
			u32 limit)
{
	struct sk_buff *msg;
	void *hdr;

	swnic_stat_inc(sdev, dom, SWNIC_STAT_LIMITS_HIT);
	/*
	 * Any user can hit a limit in a loop: the counter above counts them
	 * all, the events are rate limited per device.
	 */
	if (!__ratelimit(&sdev->limit_events))
		return;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &swnic_genl_family, 0,
			  SWNIC_NL_CMD_LIMIT_HIT);
	if (!hdr ||
	    swnic_nl_put_dev_id(msg, sdev) ||
	    (dom && nla_put_u32(msg, SWNIC_A_DOMAIN_ID, dom->id)) ||
	    nla_put_u32(msg, SWNIC_A_LIMIT, limit)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	swnic_nl_multicast(sdev, msg, GFP_ATOMIC);
}

/* ---- the family ----------------------------------------------------------- */

static const struct genl_ops swnic_nl_ops[] = {
	{
		.cmd = SWNIC_NL_CMD_DEV_GET,
		.doit = swnic_nl_dev_get_doit,
		.dumpit = swnic_nl_dev_get_dumpit,
		.policy = swnic_nl_dev_get_policy,
		.maxattr = SWNIC_A_MAX,
	},
	{
		.cmd = SWNIC_NL_CMD_DEV_NEW,
		.doit = swnic_nl_dev_new_doit,
		.policy = swnic_nl_dev_new_policy,
		.maxattr = SWNIC_A_MAX,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SWNIC_NL_CMD_DEV_DEL,
		.doit = swnic_nl_dev_del_doit,
		.policy = swnic_nl_dev_del_policy,
		.maxattr = SWNIC_A_MAX,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SWNIC_NL_CMD_DEV_SET,
		.doit = swnic_nl_dev_set_doit,
		.policy = swnic_nl_dev_set_policy,
		.maxattr = SWNIC_A_MAX,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SWNIC_NL_CMD_DOMAIN_GET,
		.start = swnic_nl_dump_start,
		.doit = swnic_nl_domain_get_doit,
		.dumpit = swnic_nl_domain_get_dumpit,
		.policy = swnic_nl_domain_policy,
		.maxattr = SWNIC_A_MAX,
	},
	{
		.cmd = SWNIC_NL_CMD_STAT_GET,
		.doit = swnic_nl_stat_get_doit,
		.dumpit = swnic_nl_stat_get_dumpit,
		.policy = swnic_nl_domain_policy,
		.maxattr = SWNIC_A_MAX,
	},
	{
		.cmd = SWNIC_NL_CMD_STAT_RESET,
		.doit = swnic_nl_stat_reset_doit,
		.policy = swnic_nl_domain_policy,
		.maxattr = SWNIC_A_MAX,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SWNIC_NL_CMD_SVC_GET,
		.start = swnic_nl_svc_get_dump_start,
		.doit = swnic_nl_svc_get_doit,
		.dumpit = swnic_nl_svc_get_dumpit,
		.policy = swnic_nl_svc_policy,
		.maxattr = SWNIC_A_MAX,
	},
	{
		.cmd = SWNIC_NL_CMD_SVC_NEW,
		.doit = swnic_nl_svc_new_doit,
		.policy = swnic_nl_svc_new_policy,
		.maxattr = SWNIC_A_MAX,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SWNIC_NL_CMD_SVC_DEL,
		.doit = swnic_nl_svc_del_doit,
		.policy = swnic_nl_svc_policy,
		.maxattr = SWNIC_A_MAX,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SWNIC_NL_CMD_SVC_SET,
		.doit = swnic_nl_svc_set_doit,
		.policy = swnic_nl_svc_set_policy,
		.maxattr = SWNIC_A_MAX,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SWNIC_NL_CMD_MR_GET,
		.start = swnic_nl_dump_start,
		.dumpit = swnic_nl_mr_get_dumpit,
		.policy = swnic_nl_domain_policy,
		.maxattr = SWNIC_A_MAX,
	},
};

static const struct genl_multicast_group swnic_nl_mcgrps[] = {
	[SWNIC_NL_MCGRP_EVENTS] = {
		.name = SWNIC_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

struct genl_family swnic_genl_family __ro_after_init = {
	.name = SWNIC_GENL_NAME,
	.version = SWNIC_GENL_VERSION,
	.maxattr = SWNIC_A_MAX,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = swnic_nl_ops,
	.n_ops = ARRAY_SIZE(swnic_nl_ops),
	.mcgrps = swnic_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(swnic_nl_mcgrps),
	.resv_start_op = SWNIC_NL_CMD_DEV_GET,
};

int __init swnic_genl_init(void)
{
	int ret;

	ret = genl_register_family(&swnic_genl_family);
	if (!ret)
		WRITE_ONCE(swnic_genl_registered, true);
	return ret;
}

void swnic_genl_exit(void)
{
	WRITE_ONCE(swnic_genl_registered, false);
	genl_unregister_family(&swnic_genl_family);
}
