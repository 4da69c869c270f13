/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_DEVICE_H
#define _SWNIC_DEVICE_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/netdevice.h>
#include <linux/ratelimit.h>
#include <linux/xarray.h>
#include <linux/types.h>

#include "mr_stats.h"
#include "stats.h"
#include <linux/swnic.h>
#include <linux/swnic_netlink.h>
#include <linux/swnic_queue.h>

#define SWNIC_MAX_DEVICES	64

/* Fixed limits of the engine, reported by QUERY_DEVICE. */
#define SWNIC_MAX_EQ		256
#define SWNIC_MAX_CNTR		1024
#define SWNIC_MAX_AV		64
#define SWNIC_MAX_CQ_ENTRIES	65536
#define SWNIC_MAX_SQ_ENTRIES	16384
#define SWNIC_MAX_RQ_ENTRIES	16384
#define SWNIC_MAX_IOV		4
#define SWNIC_MAX_INJECT	SWNIC_INLINE_MAX
#define SWNIC_MAX_ERR_DATA	64
#define SWNIC_MAX_MSG_SIZE	SZ_1G
#define SWNIC_MAX_MR_SIZE	(SZ_1G * 1024ULL)

/* Per-device limits an administrator can change (netlink DEV_SET). */
struct swnic_limits {
	u32 max_domains;	/* open domains on the device */
	u32 max_domains_per_user;	/* of one uid (CAP_NET_ADMIN: no limit) */
	u32 max_mr;		/* MRs per domain */
	u32 max_ep;		/* endpoints per domain */
	u32 max_cq;		/* CQs per domain */
	u64 max_pinned;		/* pinned bytes over all domains, 0 = none */
};

/*
 * A virtual NIC. Its memory lives as long as its struct device: every open
 * domain holds a reference (swnic_device_get/put). Unpublishing it
 * (swnic_device_destroy) is a separate step from freeing it: a destroyed
 * device is off the list and its char device is gone, but open domains keep
 * it alive until they close.
 */
struct swnic_device {
	struct device dev;		/* refcount and sysfs; release frees */
	struct cdev cdev;		/* /dev/<name> */
	struct list_head list;		/* on swnic_devices, swnic_devices_lock; RCU */
	u32 index;			/* immutable; also the char dev minor */
	char name[SWNIC_NAME_MAX];	/* immutable */

	struct mutex lock;		/* protects everything below */
	struct list_head domains;	/* struct swnic_domain.dev_node */
	u32 ndomains;			/* length of @domains */
	/*
	 * Of @domains, those opened in a network namespace the device has
	 * left since (swnic_domain.orphan): while any is open, it is bound
	 * or set up nowhere else.
	 */
	u32 norphans;
	/*
	 * Domains whose file is closed but which are still referenced; one
	 * whose CQ, counter or endpoint files are open (swnic_domain.files)
	 * counts against the domain limits. Released in any context: a
	 * spinlock of their own.
	 */
	spinlock_t closed_lock;
	struct list_head closed_domains;	/* swnic_domain.closed_node */
	bool dead;			/* destroyed: no new domains */
	u32 state;			/* SWNIC_DEV_STATE_* */
	int ifindex;			/* bound netdev, 0 = local only */
	struct swnic_limits limits;
	/* bound netdev (bind.c): changed under RTNL + @lock, read under RCU */
	struct net_device __rcu *netdev;
	netdevice_tracker netdev_tracker;	/* @netdev's reference */
	struct list_head services;	/* struct swnic_service.node */
	u32 next_svc_id;		/* last service id given */
	struct swnic_stats stats;	/* counters (stats.h), atomic */
	struct swnic_mr_stats mr_stats;	/* MR counters, all domains (mr.h) */

	/* Endpoints by port (ep.c): RCU lookups, entries freed after a GP. */
	struct xarray ports;
	/*
	 * Endpoints (ports) alive per uid, of every domain, closed ones'
	 * too (ep.c: swnic_domain_nep_add()): the per-user quota. Before,
	 * a walk of the open domains missed the endpoints of a domain whose
	 * file was closed, which keep their ports until their own close.
	 */
	struct mutex user_eps_lock;
	struct xarray user_eps;		/* xa_mk_value(count) by uid */
	u32 port_next;			/* next ephemeral port to try */
	struct ratelimit_state limit_events;	/* LIMIT_HIT events */
};

/* Serialises device creation/destruction and the device list. */
extern struct mutex swnic_devices_lock;
extern struct list_head swnic_devices;
/* Bumped on every change to the device list (netlink dump consistency). */
extern unsigned int swnic_devices_gen;

int swnic_device_init(void);
void swnic_device_exit(void);
void swnic_device_destroy_all(void);

struct swnic_device *swnic_device_create(const char *name, u8 state);
void swnic_device_destroy(struct swnic_device *sdev);

struct swnic_device *swnic_device_lookup_index(u32 index);
struct swnic_device *swnic_device_lookup_name(const char *name);

static inline void swnic_device_get(struct swnic_device *sdev)
{
	get_device(&sdev->dev);
}

static inline void swnic_device_put(struct swnic_device *sdev)
{
	put_device(&sdev->dev);
}

#endif /* _SWNIC_DEVICE_H */
