// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink: counters - STAT_GET (module-wide, a device's, a domain's) and
 * STAT_RESET. The counters and their names are stats.c's. And the wire's:
 * PEER_GET, its counters and peer contexts (udp_peer.c's).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>
#include <net/ipv6.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "device.h"
#include "domain.h"
#include "nl_internal.h"
#include "stats.h"
#include "udp.h"

/*
 * A STAT_GET message, for the reply and the dump: module-wide (both NULL;
 * swnic_devices_lock held), a device's or a domain's.
 */
static int swnic_nl_fill_stats(struct sk_buff *skb, struct swnic_device *sdev,
			       struct swnic_domain *dom, u32 portid, u32 seq,
			       int flags, struct netlink_callback *cb)
{
	struct nlattr *nest;
	void *hdr;

	if (!sdev && !dom)
		lockdep_assert_held(&swnic_devices_lock);
	hdr = genlmsg_put(skb, portid, seq, &swnic_genl_family, flags,
			  SWNIC_NL_CMD_STAT_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (dom)
		sdev = dom->sdev;
	if (sdev && swnic_nl_put_dev_id(skb, sdev))
		goto err_cancel;
	if (dom && nla_put_u32(skb, SWNIC_A_DOMAIN_ID, dom->id))
		goto err_cancel;
	nest = nla_nest_start(skb, SWNIC_A_STATS);
	if (!nest)
		goto err_cancel;
	if (dom || sdev ? swnic_stats_fill(skb, sdev, dom) :
	    swnic_stats_fill_objects(skb))
		goto err_cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * The object of a STAT_GET/STAT_RESET request: a domain (DOMAIN_ID), a
 * device (DEV_*), or neither (module-wide). Referenced.
 */
static int swnic_nl_stat_target(struct sk_buff *skb, struct genl_info *info,
				struct swnic_device **sdev,
				struct swnic_domain **dom)
{
	*sdev = NULL;
	*dom = NULL;
	if (info->attrs[SWNIC_A_DOMAIN_ID]) {
		if (info->attrs[SWNIC_A_DEV_INDEX] ||
		    info->attrs[SWNIC_A_DEV_NAME]) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[SWNIC_A_DOMAIN_ID],
					    "give a device or a domain, not both");
			return -EINVAL;
		}
		*dom = swnic_nl_domain_get(skb, info);
		return PTR_ERR_OR_ZERO(*dom);
	}
	if (info->attrs[SWNIC_A_DEV_INDEX] || info->attrs[SWNIC_A_DEV_NAME]) {
		*sdev = swnic_nl_dev_get(skb, info->attrs, info->extack);
		return PTR_ERR_OR_ZERO(*sdev);
	}
	return 0;
}

/**
 * swnic_nl_stat_get_doit() - STAT_GET of a domain, a device or the module
 * @skb: the request
 * @info: its attributes: DOMAIN_ID, DEV_*, or neither (module-wide)
 *
 * Return: 0 or -errno.
 */
int swnic_nl_stat_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct swnic_device *sdev;
	struct swnic_domain *dom;
	struct sk_buff *msg;
	int ret;

	ret = swnic_nl_stat_target(skb, info, &sdev, &dom);
	if (ret)
		return ret;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out_put;
	}
	/* The module-wide gauges sum over the device list. */
	mutex_lock(&swnic_devices_lock);
	ret = swnic_nl_fill_stats(msg, sdev, dom, info->snd_portid,
				  info->snd_seq, 0, NULL);
	mutex_unlock(&swnic_devices_lock);
	ret = swnic_nl_reply(msg, info, ret);
out_put:
	if (dom)
		swnic_domain_put(dom);
	if (sdev)
		swnic_device_put(sdev);
	return ret;
}

/**
 * swnic_nl_stat_get_dumpit() - STAT_GET dump: module-wide, then each device
 * @skb: the part being filled
 * @cb: the dump; cb->args[0] is 0 before the module-wide message, then the
 *	next device index + 1
 *
 * Return: the part's length, 0 at the end, or -errno.
 */
int swnic_nl_stat_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u32 portid = NETLINK_CB(cb->skb).portid, seq = cb->nlh->nlmsg_seq;
	struct swnic_device *sdev;
	int ret = 0;

	mutex_lock(&swnic_devices_lock);
	cb->seq = swnic_devices_gen;
	if (!cb->args[0]) {
		ret = swnic_nl_fill_stats(skb, NULL, NULL, portid, seq,
					  NLM_F_MULTI, cb);
		if (!ret)
			cb->args[0] = 1;
	}
	for (; !ret && cb->args[0] <= SWNIC_MAX_DEVICES; cb->args[0]++) {
		sdev = swnic_nl_dev_by_index_locked(cb->args[0] - 1);
		if (!sdev || !swnic_nl_sees_dev(cb->skb, sdev))
			continue;
		ret = swnic_nl_fill_stats(skb, sdev, NULL, portid, seq,
					  NLM_F_MULTI, cb);
		if (ret)
			break;
	}
	mutex_unlock(&swnic_devices_lock);
	return swnic_nl_dump_end(skb, ret);
}

/**
 * swnic_nl_stat_reset_doit() - STAT_RESET of a device's or a domain's counters
 * @skb: the request
 * @info: its attributes: DEV_* or DOMAIN_ID
 *
 * Return: 0 or -errno.
 */
int swnic_nl_stat_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct swnic_device *sdev, *admin;
	struct swnic_domain *dom;
	int ret;

	ret = swnic_nl_stat_target(skb, info, &sdev, &dom);
	if (ret)
		return ret;
	if (!sdev && !dom) {
		NL_SET_ERR_MSG(info->extack,
			       "give the device or the domain whose counters to reset");
		return -EINVAL;
	}
	admin = dom ? dom->sdev : sdev;
	ret = swnic_nl_dev_admin(skb, admin, info->extack);
	if (!ret) {
		/* Checked again under the lock, as every change is. */
		mutex_lock(&admin->lock);
		if (swnic_nl_dev_moved(info, admin))
			ret = -ENODEV;
		else
			swnic_stats_reset(sdev, dom);
		mutex_unlock(&admin->lock);
	}
	if (dom)
		swnic_domain_put(dom);
	if (sdev)
		swnic_device_put(sdev);
	return ret;
}

/* ---- the wire: PEER_GET ------------------------------------------------- */

/* A PEER_GET dump part being filled. */
struct swnic_nl_peer_arg {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	bool incs;		/* the incarnations shown: an administrator */
};

static int swnic_nl_put_wire_stat(void *arg, const char *name, u64 value)
{
	return swnic_stats_put(arg, name, value);
}

/* The namespace's message: its wire counters. */
static int swnic_nl_fill_wire(struct sk_buff *skb, struct net *net,
			      struct netlink_callback *cb)
{
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &swnic_genl_family, NLM_F_MULTI,
			  SWNIC_NL_CMD_PEER_GET);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	nest = nla_nest_start(skb, SWNIC_A_STATS);
	if (!nest ||
	    swnic_udp_counters(net, swnic_nl_put_wire_stat, skb)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
}

/* Our address in a peer's context, if it has one yet. */
static int swnic_nl_put_peer_local(struct sk_buff *skb,
				   const struct swnic_peer_info *info)
{
	if (ipv6_addr_any(&info->local))
		return 0;
	if (info->v6)
		return nla_put_in6_addr(skb, SWNIC_A_PEER_LOCAL_ADDR,
					&info->local);
	return nla_put_in_addr(skb, SWNIC_A_PEER_LOCAL_ADDR,
			       info->local.s6_addr32[3]);
}

/* A peer's message (under the wire's lock). */
static int swnic_nl_fill_peer(void *arg, const struct swnic_peer_info *info)
{
	struct swnic_nl_peer_arg *a = arg;
	struct sk_buff *skb = a->skb;
	struct nlattr *nest;
	unsigned int i;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(a->cb->skb).portid,
			  a->cb->nlh->nlmsg_seq, &swnic_genl_family,
			  NLM_F_MULTI, SWNIC_NL_CMD_PEER_GET);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(a->cb, hdr);
	if ((info->v6 ? nla_put_in6_addr(skb, SWNIC_A_PEER_ADDR,
					 &info->addr6) :
	     nla_put_in_addr(skb, SWNIC_A_PEER_ADDR, info->ip)) ||
	    nla_put_u32(skb, SWNIC_A_PEER_PORT, info->port) ||
	    swnic_nl_put_peer_local(skb, info) ||
	    (a->incs &&
	     (nla_put_u32(skb, SWNIC_A_PEER_LOCAL_INC, info->my_inc) ||
	      nla_put_u32(skb, SWNIC_A_PEER_REMOTE_INC, info->their_inc))) ||
	    nla_put_u32(skb, SWNIC_A_PEER_SRTT, info->srtt_us) ||
	    nla_put_u32(skb, SWNIC_A_PEER_RTTVAR, info->rttvar_us) ||
	    nla_put_u32(skb, SWNIC_A_PEER_RTO, info->rto_us) ||
	    nla_put_u32(skb, SWNIC_A_PEER_INFLIGHT, info->inflight) ||
	    nla_put_u32(skb, SWNIC_A_PEER_MSGS, info->msgs) ||
	    nla_put_u32(skb, SWNIC_A_PEER_HELD, info->held) ||
	    nla_put_u32(skb, SWNIC_A_PEER_HELD_WAITING, info->held_waiting) ||
	    nla_put_u32(skb, SWNIC_A_PEER_ANSWERS, info->answers) ||
	    nla_put_u32(skb, SWNIC_A_PEER_SILENT_MS, info->silent_ms) ||
	    nla_put_u64_64bit(skb, SWNIC_A_PEER_RETX, info->retx,
			      SWNIC_A_PAD) ||
	    nla_put_u64_64bit(skb, SWNIC_A_PEER_TX_BYTES, info->tx_bytes,
			      SWNIC_A_PAD) ||
	    nla_put_u64_64bit(skb, SWNIC_A_PEER_RX_BYTES, info->rx_bytes,
			      SWNIC_A_PAD))
		goto err;
	/* Its drops, as the namespace's counters are (drop_<reason>). */
	nest = nla_nest_start(skb, SWNIC_A_STATS);
	if (!nest)
		goto err;
	for (i = 0; i < info->ndrops; i++)
		if (swnic_stats_put(skb, info->drop_names[i], info->drops[i]))
			goto err;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
err:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * swnic_nl_peer_get_dumpit() - PEER_GET dump: the wire of the caller's
 * network namespace, its counters then each peer context
 * @skb: the part being filled
 * @cb: the dump; cb->args[0] is 0 before the counters' message, then 1;
 *	cb->args[1] the place of the next peer on the namespace's list
 *
 * Return: the part's length, 0 at the end, or -errno.
 */
int swnic_nl_peer_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct swnic_nl_peer_arg arg = { .skb = skb, .cb = cb };
	struct net *net = sock_net(cb->skb->sk);
	int ret = 0;

	/*
	 * The incarnations are the wire's secret against forged packets
	 * (a host that never hears ours cannot reset nor answer): to the
	 * namespace's administrators only. Asked once a part.
	 */
	arg.incs = netlink_net_capable(cb->skb, CAP_NET_ADMIN);

	if (!cb->args[0]) {
		ret = swnic_nl_fill_wire(skb, net, cb);
		if (!ret)
			cb->args[0] = 1;
	}
	if (!ret)
		ret = swnic_udp_peers(net, &cb->args[1], &cb->seq,
				      swnic_nl_fill_peer, &arg);
	return swnic_nl_dump_end(skb, ret);
}
