// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink: every message multicast to the "events" group (nl_events.h).
 * An object's event carries what its GET reply does: both come from its
 * fill function. Events are dropped while the family is not registered.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pid_namespace.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "bind.h"
#include "device.h"
#include "domain.h"
#include "mr.h"
#include "nl_internal.h"
#include "stats.h"

/* Events are dropped before the family is registered and after. */
static bool swnic_nl_events_on;

/**
 * swnic_nl_events_enable() - start or stop sending events
 * @on: true once the family is registered, false before unregistering it
 */
void swnic_nl_events_enable(bool on)
{
	WRITE_ONCE(swnic_nl_events_on, on);
}

/**
 * swnic_nl_dev_net() - the namespace besides init_net that hears of a device
 * @sdev: the device
 *
 * Return: @sdev's namespace, referenced, or NULL if that is init_net (or
 * is going away).
 */
struct net *swnic_nl_dev_net(struct swnic_device *sdev)
{
	struct net *net;

	rcu_read_lock();
	net = swnic_device_net(sdev);
	net = net_eq(net, &init_net) ? NULL : maybe_get_net(net);
	rcu_read_unlock();
	return net;
}

/* @msg (or NULL: nothing) to @net's listeners; consumed. */
static void swnic_nl_event_send_to(struct net *net, struct sk_buff *msg,
				   gfp_t gfp)
{
	if (msg && READ_ONCE(swnic_nl_events_on))
		genlmsg_multicast_netns(&swnic_genl_family, net, msg, 0,
					SWNIC_NL_MCGRP_EVENTS, gfp);
	else
		nlmsg_free(msg);
}

/**
 * swnic_nl_event_send() - send an event to the events group
 * @ev: the event; its messages and namespace reference are consumed
 * @gfp: allocation context
 */
void swnic_nl_event_send(struct swnic_nl_event *ev, gfp_t gfp)
{
	if (ev->net) {
		swnic_nl_event_send_to(ev->net, ev->ns_msg, gfp);
		put_net(ev->net);
	}
	swnic_nl_event_send_to(&init_net, ev->msg, gfp);
	memset(ev, 0, sizeof(*ev));
}

/**
 * swnic_nl_multicast() - send an event that shows no ids to the events group
 * @sdev: the device it is about (for its namespace), or NULL
 * @msg: the message; consumed
 * @gfp: allocation context
 *
 * Listeners in init_net get it, and those in @sdev's namespace: the same
 * message, which carries no uid or pid (those are swnic_nl_event's).
 */
void swnic_nl_multicast(struct swnic_device *sdev, struct sk_buff *msg,
			gfp_t gfp)
{
	struct swnic_nl_event ev = { .msg = msg };

	if (sdev && READ_ONCE(swnic_nl_events_on)) {
		ev.net = swnic_nl_dev_net(sdev);
		if (ev.net)
			ev.ns_msg = skb_clone(msg, gfp);
	}
	swnic_nl_event_send(&ev, gfp);
}

/*
 * A pid as the owner of @user_ns shows it: in the outermost of its pid
 * namespaces that @user_ns, or a namespace it owns, owns (a container's
 * own pids); 0 if none is (a host process, as seen from a container).
 */
static pid_t swnic_nl_owner_pid(struct pid *pid, struct user_namespace *user_ns)
{
	const struct user_namespace *u;
	unsigned int i;

	for (i = 0; pid && i <= pid->level; i++)
		for (u = pid->numbers[i].ns->user_ns; u; u = u->parent)
			if (u == user_ns)
				return pid->numbers[i].nr;
	return 0;
}

/* ---- devices -------------------------------------------------------------- */

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

/**
 * swnic_nl_notify_dev_left() - tell a namespace that a device left it
 * @sdev: the device, unbound from a netdev of @net
 * @net: its namespace before, from swnic_nl_dev_net(), or NULL (nothing
 *	 to tell); the reference is consumed
 *
 * @net's listeners hear DEV_DEL, as rtnetlink's hear RTM_DELLINK of a
 * netdev that moved away: the device is no longer theirs to see. If it
 * is in @net still (bound there again meanwhile), nothing is sent.
 */
void swnic_nl_notify_dev_left(struct swnic_device *sdev, struct net *net)
{
	struct sk_buff *msg = NULL;
	bool gone;

	if (!net)
		return;
	rcu_read_lock();
	gone = !net_eq(swnic_device_net(sdev), net);
	rcu_read_unlock();
	if (gone)
		msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (msg && swnic_nl_fill_dev(msg, sdev, 0, 0, 0,
				     SWNIC_NL_CMD_DEV_DEL, NULL)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	swnic_nl_event_send_to(net, msg, GFP_KERNEL);
	put_net(net);
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

/* ---- domains and MRs ----------------------------------------------------- */

/* One domain event message for listeners of @user_ns's namespaces. */
static struct sk_buff *swnic_nl_domain_msg(struct swnic_domain *dom, u8 cmd,
					   struct user_namespace *user_ns)
{
	struct sk_buff *msg;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (msg && swnic_nl_fill_domain(msg, dom, user_ns,
					swnic_nl_owner_pid(dom->pid, user_ns),
					0, 0, 0, cmd, NULL)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

/*
 * A domain event: init_net's listeners see the opener's uid and pid as the
 * host numbers them, those of the device's namespace as its owner does.
 * May sleep.
 */
static void swnic_nl_notify_domain(struct swnic_domain *dom, u8 cmd)
{
	struct swnic_nl_event ev = { };

	if (!READ_ONCE(swnic_nl_events_on))
		return;
	ev.net = swnic_nl_dev_net(dom->sdev);
	if (ev.net)
		ev.ns_msg = swnic_nl_domain_msg(dom, cmd, ev.net->user_ns);
	ev.msg = swnic_nl_domain_msg(dom, cmd, &init_user_ns);
	swnic_nl_event_send(&ev, GFP_KERNEL);
}

/**
 * swnic_nl_domain_opened() - account for and announce a new domain
 * @dom: the domain, published; no lock held
 */
void swnic_nl_domain_opened(struct swnic_domain *dom)
{
	atomic_inc(&swnic_nl_domains_gen);
	swnic_obj_inc(SWNIC_OBJ_DOMAINS);
	swnic_stat_inc(dom->sdev, dom, SWNIC_STAT_DOMAINS_OPENED);
	swnic_nl_notify_domain(dom, SWNIC_NL_CMD_DOMAIN_NEW);
}

/**
 * swnic_nl_domain_closed() - account for and announce a closed domain
 * @dom: the domain, unpublished; no lock held
 */
void swnic_nl_domain_closed(struct swnic_domain *dom)
{
	atomic_inc(&swnic_nl_domains_gen);
	swnic_obj_dec(SWNIC_OBJ_DOMAINS);
	swnic_stat_inc(dom->sdev, dom, SWNIC_STAT_DOMAINS_CLOSED);
	swnic_nl_notify_domain(dom, SWNIC_NL_CMD_DOMAIN_DEL);
}

/**
 * swnic_nl_mr_revoked() - announce that an MR was revoked
 * @dom: the MR's domain, referenced
 * @info: a snapshot of the MR
 *
 * Process context (the MR code calls it from a work item).
 */
void swnic_nl_mr_revoked(struct swnic_domain *dom,
			 const struct swnic_mr_info *info)
{
	struct sk_buff *msg;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (swnic_nl_fill_mr(msg, dom, info, 0, 0, 0, SWNIC_NL_CMD_MR_REVOKED,
			     NULL)) {
		nlmsg_free(msg);
		return;
	}
	swnic_nl_multicast(dom->sdev, msg, GFP_KERNEL);
}

/* ---- services ------------------------------------------------------------ */

/* One service event message for listeners of @user_ns's namespaces. */
static struct sk_buff *swnic_nl_svc_msg(struct swnic_device *sdev,
					const struct swnic_service *svc, u8 cmd,
					struct user_namespace *user_ns)
{
	struct sk_buff *msg;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (msg && swnic_nl_fill_svc(msg, sdev, svc, user_ns, 0, 0, 0, cmd,
				     NULL)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

/**
 * swnic_nl_svc_event() - an event about a service, to send once unlocked
 * @sdev: the service's device; its lock is held
 * @svc: the service
 * @cmd: SWNIC_NL_CMD_SVC_NEW, _SVC_DEL or _SVC_SET
 * @ev: where to build it (zeroed), for swnic_nl_event_send(@ev, GFP_KERNEL)
 *
 * Members' uids and gids are shown to init_net's listeners as the host
 * numbers them, to those of the device's namespace as its owner does.
 */
void swnic_nl_svc_event(struct swnic_device *sdev,
			const struct swnic_service *svc, u8 cmd,
			struct swnic_nl_event *ev)
{
	lockdep_assert_held(&sdev->lock);
	if (!READ_ONCE(swnic_nl_events_on))
		return;
	ev->net = swnic_nl_dev_net(sdev);
	if (ev->net)
		ev->ns_msg = swnic_nl_svc_msg(sdev, svc, cmd,
					      ev->net->user_ns);
	ev->msg = swnic_nl_svc_msg(sdev, svc, cmd, &init_user_ns);
}
