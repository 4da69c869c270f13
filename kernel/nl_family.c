// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "swnic": its policies, its ops table, the
 * events group and its registration, and who may see or change what. The
 * commands are in nl_dev.c, nl_domain.c, nl_service.c and nl_stats.c (also
 * the wire's PEER_GET), the events in nl_events.c. include/uapi/linux/swnic_netlink.h and
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
#include <linux/netdevice.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "bind.h"
#include "device.h"
#include "domain.h"
#include "nl_internal.h"

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

/* PEER_GET: the caller's namespace, nothing to choose. */
static const struct nla_policy swnic_nl_peer_policy[SWNIC_A_MAX + 1] = {
	[SWNIC_A_UNSPEC] = { .type = NLA_UNSPEC },
};

/* ---- who may see or change what --------------------------------------- */

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

/**
 * swnic_nl_dev_moved() - did a device leave the requester's namespace?
 * @info: the request, which found @sdev in its namespace (swnic_nl_dev_get())
 *	  and whose administrator it is (swnic_nl_dev_admin())
 * @sdev: the device; the caller holds its lock
 *
 * A device's namespace is its netdev's, and changes when the netdev goes
 * (swnic_bind_netdev_gone(): the device is then the initial namespace's)
 * under the device's lock - also between a request's checks and its
 * change. A change checks again, under the lock it makes the change in,
 * so that the administrator of the namespace a device has left changes
 * nothing of it.
 *
 * Return: true (the extack says so) if @sdev is in another namespace now:
 * the request fails with -ENODEV.
 */
bool swnic_nl_dev_moved(struct genl_info *info, struct swnic_device *sdev)
{
	lockdep_assert_held(&sdev->lock);
	if (net_eq(swnic_device_net(sdev), genl_info_net(info)))
		return false;
	NL_SET_ERR_MSG(info->extack,
		       "the device left the caller's network namespace");
	return true;
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
 * @admin: a dump part's answer to "is the requester an administrator?"
 *	   (-1: not asked yet), or NULL to ask for @dom alone
 *
 * A dump part asks once: a capability check that fails is an audit
 * record, and an unprivileged user's dump would leave one per other
 * user's domain. Every device a dump shows is in the requester's
 * namespace, so the answer is the same for all of them.
 *
 * Return: true for the domain's owner (same uid) and for administrators
 * (CAP_NET_ADMIN over the device's namespace).
 */
bool swnic_nl_sees_domain(const struct sk_buff *skb, struct swnic_domain *dom,
			  s8 *admin)
{
	const struct cred *cred = swnic_nl_cred(skb);

	if (!swnic_nl_sees_dev(skb, dom->sdev))
		return false;
	if (uid_eq(dom->uid, cred->uid) || uid_eq(dom->uid, cred->euid))
		return true;
	if (!admin)
		return swnic_nl_capable(skb, dom->sdev);
	if (*admin < 0)
		*admin = swnic_nl_capable(skb, dom->sdev);
	return *admin;
}

/* ---- replies ------------------------------------------------------------ */

/**
 * swnic_nl_reply() - send a doit's reply, or drop it
 * @msg: the reply, filled by a swnic_nl_fill_*() function; consumed
 * @info: the request
 * @ret: what filling @msg returned
 *
 * Return: @ret if it is an error (@msg freed), else genlmsg_reply()'s.
 */
int swnic_nl_reply(struct sk_buff *msg, struct genl_info *info, int ret)
{
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/**
 * swnic_nl_dump_end() - what a dumpit returns after filling a part
 * @skb: the part
 * @ret: 0 if the dump is through, -EMSGSIZE if @skb is full, or -errno
 *
 * A full part ends here and the next one resumes where it stopped: only a
 * message too big for an empty part is an error.
 *
 * Return: the part's length (0 at the end), or -errno.
 */
int swnic_nl_dump_end(struct sk_buff *skb, int ret)
{
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
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
	{
		.cmd = SWNIC_NL_CMD_PEER_GET,
		.dumpit = swnic_nl_peer_get_dumpit,
		.policy = swnic_nl_peer_policy,
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
		swnic_nl_events_enable(true);
	return ret;
}

void swnic_genl_exit(void)
{
	swnic_nl_events_enable(false);
	genl_unregister_family(&swnic_genl_family);
}
