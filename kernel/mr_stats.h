/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MR counters, kept per domain and per device (struct swnic_device embeds
 * one, so this header stays free of MR internals).
 */
#ifndef _SWNIC_MR_STATS_H
#define _SWNIC_MR_STATS_H

#include <linux/atomic.h>
#include <linux/swnic.h>

/*
 * Every counter is updated with atomics where its event happens, for the
 * domain and its device together (swnic_mr_stat_add()), so both are exact
 * at any time. Gauges go up and down; the others only grow.
 */
struct swnic_mr_stats {
	atomic64_t mrs;			/* gauge: MRs registered */
	atomic64_t pinned_bytes;	/* gauge: bytes pinned */
	atomic64_t registrations;	/* successful registrations */
	atomic64_t revocations;		/* pinned MRs revoked */
	atomic64_t invalidations;	/* ODP MRs whose pages were dropped */
	atomic64_t refaults;		/* ODP faults after an invalidation */
	atomic64_t memlock_denied;	/* registrations over RLIMIT_MEMLOCK */
	atomic64_t access_denied;	/* accesses refused by a check */
};

/* Copy @s into the uapi form. */
static inline void swnic_mr_stats_read(const struct swnic_mr_stats *s,
				       struct swnic_mr_counters *c)
{
	c->mrs = atomic64_read(&s->mrs);
	c->pinned_bytes = atomic64_read(&s->pinned_bytes);
	c->registrations = atomic64_read(&s->registrations);
	c->revocations = atomic64_read(&s->revocations);
	c->invalidations = atomic64_read(&s->invalidations);
	c->refaults = atomic64_read(&s->refaults);
	c->memlock_denied = atomic64_read(&s->memlock_denied);
	c->access_denied = atomic64_read(&s->access_denied);
}

#endif /* _SWNIC_MR_STATS_H */
