// SPDX-License-Identifier: GPL-2.0
/*
 * Binding devices to netdevs. The device holds a tracked reference on its
 * netdev; a netdevice notifier drops it when the netdev is unregistered
 * (deleted, or its namespace dies or it moves to another one), which
 * leaves the device unbound and down.
 *
 * sdev->netdev changes under RTNL and the device's lock and is read under
 * either of them or RCU. Lock order: RTNL, swnic_devices_lock, sdev->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/rtnetlink.h>
#include <net/netlink.h>

#include "bind.h"
#include "device.h"
#include "domain.h"
#include "nl_events.h"
#include "udp.h"

/**
 * swnic_device_net() - the network namespace that owns a device
 * @sdev: the device; the caller holds its lock or rcu_read_lock()
 *
 * Return: the bound netdev's namespace, or &init_net when unbound.
 */
struct net *swnic_device_net(struct swnic_device *sdev)
{
	struct net_device *nd;

	nd = rcu_dereference_check(sdev->netdev,
				   lockdep_is_held(&sdev->lock) ||
				   lockdep_rtnl_is_held());
	return nd ? dev_net(nd) : &init_net;
}

/**
 * __swnic_device_capable() - has the current task @cap over @sdev's namespace?
 * @sdev: the device; the caller holds its lock
 * @cap: the capability
 * @audit: audit the check (the caller is asking for a privilege), or not
 *	   (it is only choosing a limit)
 *
 * Return: true if capable in the user namespace owning the device's
 * network namespace.
 */
bool __swnic_device_capable(struct swnic_device *sdev, int cap, bool audit)
{
	struct user_namespace *ns;

	lockdep_assert_held(&sdev->lock);
	ns = swnic_device_net(sdev)->user_ns;
	return audit ? ns_capable(ns, cap) : ns_capable_noaudit(ns, cap);
}

/* The same, taking the device's lock. */
bool swnic_device_capable(struct swnic_device *sdev, int cap, bool audit)
{
	bool ret;

	mutex_lock(&sdev->lock);
	ret = __swnic_device_capable(sdev, cap, audit);
	mutex_unlock(&sdev->lock);
	return ret;
}

/*
 * Point @sdev at @nd (NULL: unbind) and return the old netdev, whose
 * reference (tracked by @old_tracker) the caller drops after an RCU grace
 * period. RTNL and the device's lock held.
 */
static struct net_device *
swnic_device_set_netdev(struct swnic_device *sdev, struct net_device *nd,
			netdevice_tracker *old_tracker)
{
	struct net_device *old;

	ASSERT_RTNL();
	lockdep_assert_held(&sdev->lock);
	old = rcu_dereference_protected(sdev->netdev, true);
	*old_tracker = sdev->netdev_tracker;
	if (nd)
		netdev_hold(nd, &sdev->netdev_tracker, GFP_KERNEL);
	rcu_assign_pointer(sdev->netdev, nd);
	sdev->ifindex = nd ? nd->ifindex : 0;
	return old;
}

static void swnic_netdev_put(struct net_device *old,
			     netdevice_tracker *tracker)
{
	if (!old)
		return;
	synchronize_net();
	netdev_put(old, tracker);
}

/**
 * swnic_device_bind() - bind a device to a netdev, replacing any binding
 * @sdev: the device
 * @net: the namespace to find the netdev in (the caller's)
 * @ifindex: the netdev's index, or 0 to find it by @ifname
 * @ifname: the netdev's name when @ifindex is 0
 * @from: the namespace the caller administers @sdev as, which @sdev must
 *	  still be in (checked under its lock: see swnic_nl_dev_moved());
 *	  NULL for the initial namespace's administrator making it
 * @extack: for the error message
 *
 * Return: 0, -ENODEV if there is no such netdev, @sdev is destroyed or
 * has left @from.
 */
int swnic_device_bind(struct swnic_device *sdev, struct net *net,
		      int ifindex, const char *ifname, struct net *from,
		      struct netlink_ext_ack *extack)
{
	netdevice_tracker old_tracker;
	struct net_device *nd, *old = NULL;
	int ret = 0;

	rtnl_lock();
	nd = ifindex ? __dev_get_by_index(net, ifindex)
		     : __dev_get_by_name(net, ifname);
	if (!nd || nd->reg_state != NETREG_REGISTERED) {
		NL_SET_ERR_MSG(extack,
			       "no such netdev in the caller's network namespace");
		ret = -ENODEV;
		goto out_rtnl;
	}
	mutex_lock(&sdev->lock);
	if (sdev->dead) {
		NL_SET_ERR_MSG(extack, "the device is being destroyed");
		ret = -ENODEV;
	} else if (from && !net_eq(swnic_device_net(sdev), from)) {
		NL_SET_ERR_MSG(extack,
			       "the device left the caller's network namespace");
		ret = -ENODEV;
	} else if (sdev->norphans) {
		NL_SET_ERR_MSG(extack, SWNIC_ORPHANS_MSG);
		ret = -EBUSY;
	} else if (rcu_access_pointer(sdev->netdev) != nd) {
		old = swnic_device_set_netdev(sdev, nd, &old_tracker);
	}
	mutex_unlock(&sdev->lock);
	swnic_netdev_put(old, &old_tracker);
out_rtnl:
	rtnl_unlock();
	/*
	 * The namespace's wire listens from now on, as a NIC does once it
	 * is up: a peer of this host's previous life (a module reloaded, a
	 * namespace made again) gets its RESET at once, not only once an
	 * application is back. Best effort: a port taken is reported
	 * (rate-limited), and each new endpoint tries again, and fails with
	 * the reason.
	 */
	if (!ret)
		swnic_udp_open(net);
	return ret;
}

/*
 * @sdev leaves the namespace its domains were opened in: those closed
 * already whose endpoints' or CQs' files are still open are orphans too.
 * They count against nothing (swnic_device_bind()), but must send no
 * more: an endpoint's file outlives its domain's. Caller holds sdev->lock.
 */
static void swnic_device_orphan_closed(struct swnic_device *sdev)
{
	struct swnic_domain *dom;

	lockdep_assert_held(&sdev->lock);
	spin_lock_irq(&sdev->closed_lock);
	list_for_each_entry(dom, &sdev->closed_domains, closed_node)
		WRITE_ONCE(dom->orphan, true);
	spin_unlock_irq(&sdev->closed_lock);
}

/**
 * swnic_device_unbind() - make a device local only
 * @sdev: the device
 * @from: as for swnic_device_bind(); NULL when it is destroyed
 * @extack: for the error message, or NULL
 *
 * Return: 0, -ENODEV if @sdev has left @from, -EBUSY if it would leave
 * another namespace than the initial one with domains opened there.
 */
int swnic_device_unbind(struct swnic_device *sdev, struct net *from,
			struct netlink_ext_ack *extack)
{
	netdevice_tracker old_tracker;
	struct net_device *old = NULL;
	struct net *left = NULL;
	int ret = 0;

	rtnl_lock();
	mutex_lock(&sdev->lock);
	if (from && !net_eq(swnic_device_net(sdev), from)) {
		NL_SET_ERR_MSG(extack,
			       "the device left the caller's network namespace");
		ret = -ENODEV;
	} else if (from && !net_eq(from, &init_net) && sdev->ndomains) {
		/* They would be the host's: as orphans, or on its wire. */
		NL_SET_ERR_MSG(extack,
			       "domains are open on the device in its network namespace");
		ret = -EBUSY;
	} else {
		/* Destroyed (no @from), it was DEV_DEL'd everywhere. */
		if (from)
			left = swnic_nl_dev_net(sdev);
		if (from && !net_eq(from, &init_net))
			swnic_device_orphan_closed(sdev);
		old = swnic_device_set_netdev(sdev, NULL, &old_tracker);
	}
	mutex_unlock(&sdev->lock);
	swnic_netdev_put(old, &old_tracker);
	rtnl_unlock();
	swnic_nl_notify_dev_left(sdev, left);
	return ret;
}

/*
 * The netdev @nd goes away: unbind every device bound to it, set it down.
 * A device that was another namespace's is the initial one's from now on:
 * the domains opened there are orphans (swnic_domain.orphan), and keep it
 * from being bound or set up until they are closed. That namespace's
 * listeners hear DEV_DEL, the initial one's DEV_SET.
 */
static void swnic_bind_netdev_gone(struct net_device *nd)
{
	bool left = !net_eq(dev_net(nd), &init_net);
	netdevice_tracker old_tracker;
	struct swnic_device *sdev;
	struct swnic_domain *dom;
	struct net_device *old;
	struct net *net;
	u32 orphans;

	ASSERT_RTNL();
	mutex_lock(&swnic_devices_lock);
	list_for_each_entry(sdev, &swnic_devices, list) {
		if (rcu_access_pointer(sdev->netdev) != nd)
			continue;
		mutex_lock(&sdev->lock);
		/* NULL if the namespace itself is going: no one to tell. */
		net = swnic_nl_dev_net(sdev);
		old = swnic_device_set_netdev(sdev, NULL, &old_tracker);
		WRITE_ONCE(sdev->state, SWNIC_DEV_STATE_DOWN);
		list_for_each_entry(dom, &sdev->domains, dev_node) {
			if (!left || dom->orphan)
				continue;
			WRITE_ONCE(dom->orphan, true);
			sdev->norphans++;
		}
		if (left)
			swnic_device_orphan_closed(sdev);
		orphans = sdev->norphans;
		mutex_unlock(&sdev->lock);
		swnic_netdev_put(old, &old_tracker);
		pr_info("device %s: netdev %s is gone, device down (%u domains left behind)\n",
			sdev->name, nd->name, orphans);
		swnic_nl_notify_dev_left(sdev, net);
		swnic_nl_notify_dev(sdev, SWNIC_NL_CMD_DEV_SET);
	}
	mutex_unlock(&swnic_devices_lock);
}

static int swnic_bind_netdev_event(struct notifier_block *nb,
				   unsigned long event, void *ptr)
{
	struct net_device *nd = netdev_notifier_info_to_dev(ptr);

	if (event == NETDEV_UNREGISTER)
		swnic_bind_netdev_gone(nd);
	return NOTIFY_DONE;
}

static struct notifier_block swnic_bind_notifier = {
	.notifier_call = swnic_bind_netdev_event,
};

int __init swnic_bind_init(void)
{
	return register_netdevice_notifier(&swnic_bind_notifier);
}

void swnic_bind_exit(void)
{
	unregister_netdevice_notifier(&swnic_bind_notifier);
}
