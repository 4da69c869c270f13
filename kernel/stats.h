/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Named counters of devices and domains, reported by netlink STAT_GET and
 * zeroed by STAT_RESET. A counter is bumped for a domain and its device
 * together (swnic_stat_inc()), so a device's counter also counts the
 * domains that are gone. The MR code keeps its own counters (mr_stats.h);
 * they are reported here too, relative to the last reset. Module-wide
 * gauges of live objects let tests check that everything created was
 * destroyed.
 */
#ifndef _SWNIC_STATS_H
#define _SWNIC_STATS_H

#include <linux/atomic.h>
#include <linux/types.h>

struct sk_buff;
struct swnic_device;
struct swnic_domain;

/* Counter ids; names in stats.c. */
enum swnic_stat {
	SWNIC_STAT_DOMAINS_OPENED,	/* device: domains opened */
	SWNIC_STAT_DOMAINS_CLOSED,	/* device: domains closed */
	SWNIC_STAT_LIMITS_HIT,		/* requests refused by a limit */
	SWNIC_STAT_AUTH_KEY_SETS,	/* auth keys taken through the ioctl */
	SWNIC_STAT_AUTH_KEY_DENIED,	/* auth keys refused to non-members */
	SWNIC_STAT_RECV_MR,		/* deliveries into a receive's MR */
	SWNIC_STAT_COPY_HELP,		/* bytes receivers' polls copied */
	SWNIC_STAT_SQ_RETRIES,		/* the kernel's tries of a left SQ head */
	SWNIC_STAT_SQ_RETRIES_BUSY,	/* ... that found the SQ held */
	__SWNIC_STAT_NUM
};

/* Entries of struct swnic_mr_counters (all __u64). */
#define SWNIC_STAT_MR_NUM	8

/* A set of counters; embedded in devices and domains, zeroed with them. */
struct swnic_stats {
	atomic64_t v[__SWNIC_STAT_NUM];
	atomic64_t mr_base[SWNIC_STAT_MR_NUM];	/* MR counters at reset */
};

/* Module-wide gauges of live objects. */
enum swnic_obj {
	SWNIC_OBJ_DEVICES,		/* devices, until freed */
	SWNIC_OBJ_DOMAINS,		/* domains, until closed */
	SWNIC_OBJ_SERVICES,		/* services, until freed */
	SWNIC_OBJ_ENDPOINTS,		/* endpoints, until freed */
	SWNIC_OBJ_CQS,			/* completion queues, until freed */
	SWNIC_OBJ_UNEXP_MSGS,		/* unexpected messages buffered */
	SWNIC_OBJ_UNEXP_BYTES,		/* their payload bytes */
	SWNIC_OBJ_TRIGGERED,		/* triggered work the kernel holds */
	SWNIC_OBJ_WIRE_HELD,		/* wire peers' sends held for a receive */
	__SWNIC_OBJ_NUM
};

extern atomic_long_t swnic_objects[__SWNIC_OBJ_NUM];

static inline void swnic_obj_inc(enum swnic_obj obj)
{
	atomic_long_inc(&swnic_objects[obj]);
}

static inline void swnic_obj_dec(enum swnic_obj obj)
{
	atomic_long_dec(&swnic_objects[obj]);
}

static inline void swnic_obj_add(enum swnic_obj obj, long n)
{
	atomic_long_add(n, &swnic_objects[obj]);
}

void swnic_stat_add(struct swnic_device *sdev, struct swnic_domain *dom,
		    enum swnic_stat stat, u64 n);

static inline void swnic_stat_inc(struct swnic_device *sdev,
				  struct swnic_domain *dom,
				  enum swnic_stat stat)
{
	swnic_stat_add(sdev, dom, stat, 1);
}

void swnic_stats_reset(struct swnic_device *sdev, struct swnic_domain *dom);
int swnic_stats_fill(struct sk_buff *skb, struct swnic_device *sdev,
		     struct swnic_domain *dom);
int swnic_stats_fill_objects(struct sk_buff *skb);
int swnic_stats_put(struct sk_buff *skb, const char *name, u64 value);

#endif /* _SWNIC_STATS_H */
