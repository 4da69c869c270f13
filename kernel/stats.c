// SPDX-License-Identifier: GPL-2.0
/*
 * Named counters of devices and domains, and module-wide object gauges;
 * their netlink attributes (STAT_GET itself is nl_stats.c's).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/netlink.h>

#include "device.h"
#include "domain.h"
#include "mr.h"
#include "stats.h"

atomic_long_t swnic_objects[__SWNIC_OBJ_NUM];

static const struct {
	const char *name;
	bool domain;		/* also kept per domain */
} swnic_stat_desc[__SWNIC_STAT_NUM] = {
	[SWNIC_STAT_DOMAINS_OPENED] = { "domains_opened", false },
	[SWNIC_STAT_DOMAINS_CLOSED] = { "domains_closed", false },
	[SWNIC_STAT_LIMITS_HIT] = { "limits_hit", true },
	[SWNIC_STAT_AUTH_KEY_SETS] = { "auth_key_sets", true },
	[SWNIC_STAT_AUTH_KEY_DENIED] = { "auth_key_denied", true },
	[SWNIC_STAT_RECV_MR] = { "recv_mr_copies", true },
	[SWNIC_STAT_COPY_HELP] = { "copy_help_bytes", true },
	[SWNIC_STAT_SQ_RETRIES] = { "sq_retries", true },
	[SWNIC_STAT_SQ_RETRIES_BUSY] = { "sq_retries_busy", true },
};

/* The MR counters, by their place in struct swnic_mr_counters. */
#define SWNIC_STAT_MR(_field, _name, _gauge) {				\
	.name = _name,							\
	.offset = offsetof(struct swnic_mr_counters, _field),		\
	.gauge = _gauge,						\
}

static const struct {
	const char *name;
	size_t offset;
	bool gauge;		/* a level, not an event count: never reset */
} swnic_stat_mr[] = {
	SWNIC_STAT_MR(mrs, "mrs", true),
	SWNIC_STAT_MR(pinned_bytes, "pinned_bytes", true),
	SWNIC_STAT_MR(registrations, "mr_registrations", false),
	SWNIC_STAT_MR(revocations, "mr_revocations", false),
	SWNIC_STAT_MR(invalidations, "mr_invalidations", false),
	SWNIC_STAT_MR(refaults, "mr_refaults", false),
	SWNIC_STAT_MR(memlock_denied, "mr_memlock_denied", false),
	SWNIC_STAT_MR(access_denied, "mr_access_denied", false),
};

static_assert(ARRAY_SIZE(swnic_stat_mr) == SWNIC_STAT_MR_NUM);
static_assert(sizeof(struct swnic_mr_counters) ==
	      SWNIC_STAT_MR_NUM * sizeof(u64));

static const char *const swnic_obj_names[__SWNIC_OBJ_NUM] = {
	[SWNIC_OBJ_DEVICES] = "devices",
	[SWNIC_OBJ_DOMAINS] = "domains",
	[SWNIC_OBJ_SERVICES] = "services",
	[SWNIC_OBJ_ENDPOINTS] = "endpoints",
	[SWNIC_OBJ_CQS] = "cqs",
	[SWNIC_OBJ_UNEXP_MSGS] = "unexpected_msgs",
	[SWNIC_OBJ_UNEXP_BYTES] = "unexpected_bytes",
	[SWNIC_OBJ_TRIGGERED] = "triggered_ops",
	[SWNIC_OBJ_WIRE_HELD] = "wire_held",
};

static u64 swnic_mr_counter(const struct swnic_mr_counters *c, int i)
{
	return *(const u64 *)((const char *)c + swnic_stat_mr[i].offset);
}

/**
 * swnic_stat_add() - count events (or bytes) on a device and, if given, a
 *	domain; swnic_stat_inc() counts one
 * @sdev: the device
 * @dom: the domain (of @sdev) the event belongs to, or NULL
 * @stat: the counter
 * @n: how many
 *
 * Lockless; any context.
 */
void swnic_stat_add(struct swnic_device *sdev, struct swnic_domain *dom,
		    enum swnic_stat stat, u64 n)
{
	atomic64_add(n, &sdev->stats.v[stat]);
	if (dom && swnic_stat_desc[stat].domain)
		atomic64_add(n, &dom->stats.v[stat]);
}

/* @dom's MR counters, or @sdev's when @dom is NULL. */
static void swnic_stats_mr_read(struct swnic_device *sdev,
				struct swnic_domain *dom,
				struct swnic_mr_counters *c)
{
	if (dom)
		swnic_mr_domain_counters(dom, c);
	else
		swnic_mr_device_counters(sdev, c);
}

/**
 * swnic_stats_reset() - zero the counters of a device or of a domain
 * @sdev: the device, when @dom is NULL
 * @dom: the domain, or NULL
 *
 * Gauges (what is alive now) are not counters and stay.
 */
void swnic_stats_reset(struct swnic_device *sdev, struct swnic_domain *dom)
{
	struct swnic_stats *stats = dom ? &dom->stats : &sdev->stats;
	struct swnic_mr_counters c;
	int i;

	for (i = 0; i < __SWNIC_STAT_NUM; i++)
		atomic64_set(&stats->v[i], 0);
	swnic_stats_mr_read(sdev, dom, &c);
	for (i = 0; i < SWNIC_STAT_MR_NUM; i++)
		if (!swnic_stat_mr[i].gauge)
			atomic64_set(&stats->mr_base[i],
				     swnic_mr_counter(&c, i));
}

/**
 * swnic_stats_put() - add one named counter to an open SWNIC_A_STATS nest
 * @skb: the message
 * @name: the counter's name
 * @value: its value
 *
 * Return: 0 or -EMSGSIZE (nothing added).
 */
int swnic_stats_put(struct sk_buff *skb, const char *name, u64 value)
{
	struct nlattr *entry;

	entry = nla_nest_start(skb, SWNIC_A_STATS_ENTRY);
	if (!entry)
		return -EMSGSIZE;
	if (nla_put_string(skb, SWNIC_A_STAT_NAME, name) ||
	    nla_put_u64_64bit(skb, SWNIC_A_STAT_VALUE, value,
			      SWNIC_A_STAT_PAD)) {
		nla_nest_cancel(skb, entry);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, entry);
	return 0;
}

/**
 * swnic_stats_fill() - add the counters of a device or of a domain
 * @skb: the message, inside a SWNIC_A_STATS nest
 * @sdev: the device, when @dom is NULL
 * @dom: the domain, or NULL
 *
 * Return: 0 or -EMSGSIZE.
 */
int swnic_stats_fill(struct sk_buff *skb, struct swnic_device *sdev,
		     struct swnic_domain *dom)
{
	struct swnic_stats *stats = dom ? &dom->stats : &sdev->stats;
	struct swnic_mr_counters c;
	u64 v;
	int i;

	for (i = 0; i < __SWNIC_STAT_NUM; i++) {
		if (dom && !swnic_stat_desc[i].domain)
			continue;
		if (swnic_stats_put(skb, swnic_stat_desc[i].name,
				    atomic64_read(&stats->v[i])))
			return -EMSGSIZE;
	}
	swnic_stats_mr_read(sdev, dom, &c);
	for (i = 0; i < SWNIC_STAT_MR_NUM; i++) {
		v = swnic_mr_counter(&c, i);
		if (!swnic_stat_mr[i].gauge)
			v -= atomic64_read(&stats->mr_base[i]);
		if (swnic_stats_put(skb, swnic_stat_mr[i].name, v))
			return -EMSGSIZE;
	}
	return 0;
}

/**
 * swnic_stats_fill_objects() - add the module-wide gauges of live objects
 * @skb: the message, inside a SWNIC_A_STATS nest
 *
 * MRs and pinned bytes are summed over the devices on the list.
 * Caller holds swnic_devices_lock.
 *
 * Return: 0 or -EMSGSIZE.
 */
int swnic_stats_fill_objects(struct sk_buff *skb)
{
	struct swnic_mr_counters c;
	struct swnic_device *sdev;
	u64 mrs = 0, pinned = 0;
	int i;

	lockdep_assert_held(&swnic_devices_lock);
	for (i = 0; i < __SWNIC_OBJ_NUM; i++)
		if (swnic_stats_put(skb, swnic_obj_names[i],
				    atomic_long_read(&swnic_objects[i])))
			return -EMSGSIZE;
	list_for_each_entry(sdev, &swnic_devices, list) {
		swnic_mr_device_counters(sdev, &c);
		mrs += c.mrs;
		pinned += c.pinned_bytes;
	}
	if (swnic_stats_put(skb, "mrs", mrs) ||
	    swnic_stats_put(skb, "pinned_bytes", pinned))
		return -EMSGSIZE;
	return 0;
}
