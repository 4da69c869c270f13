/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gauge_util.h - the module-wide gauges of live objects (netlink STAT_GET
 * without a device or domain: `swnic stat show`'s "*" line), for tests
 * that check that whatever a process made is gone after it ends.
 */
#ifndef SWNIC_GAUGE_UTIL_H
#define SWNIC_GAUGE_UTIL_H

#include <stdio.h>
#include <unistd.h>

#include "nl_util.h"

struct gauges {
	uint64_t domains;
	uint64_t endpoints;
	uint64_t cqs;
	uint64_t mrs;
	uint64_t pinned_bytes;
	uint64_t unexpected_msgs;
	uint64_t unexpected_bytes;
	uint64_t triggered_ops;
	unsigned int found;		/* how many of the above were reported */
};

/* Call @fn(name, value, @data) for each counter of a STAT_GET reply. */
static inline void stats_each(const struct nlmsghdr *nlh,
			      void (*fn)(const char *, uint64_t, void *),
			      void *data)
{
	const struct nlattr *entry, *a;
	struct nlc_attrs t;

	nlc_attrs(nlh, &t);
	if (!t.tb[SWNIC_A_STATS])
		return;
	mnl_attr_for_each_nested(entry, t.tb[SWNIC_A_STATS]) {
		const char *name = NULL;
		const struct nlattr *value = NULL;

		mnl_attr_for_each_nested(a, entry) {
			if (mnl_attr_get_type(a) == SWNIC_A_STAT_NAME)
				name = mnl_attr_get_str(a);
			else if (mnl_attr_get_type(a) == SWNIC_A_STAT_VALUE)
				value = a;
		}
		if (name && value)
			fn(name, mnl_attr_get_u64(value), data);
	}
}

/* STAT_GET of domain @dom_id, or module-wide (0), through @cb. */
static inline int stats_get(uint32_t dom_id, mnl_cb_t cb, void *data)
{
	struct nlc_reply r = { .cb = cb, .data = data };
	struct nlc *c = calloc(1, sizeof(*c));
	struct nlmsghdr *nlh;
	int ret;

	if (!c)
		return -ENOMEM;
	ret = nlc_open(c);
	if (!ret) {
		nlh = nlc_msg(c, SWNIC_NL_CMD_STAT_GET, 0);
		if (dom_id)
			mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, dom_id);
		ret = nlc_talk(c, nlh, &r);
	}
	nlc_close(c);
	free(c);
	return ret;
}

static inline void gauges_one(const char *name, uint64_t value, void *data)
{
	static const struct {
		const char *name;
		size_t off;
	} names[] = {
		{ "domains", offsetof(struct gauges, domains) },
		{ "endpoints", offsetof(struct gauges, endpoints) },
		{ "cqs", offsetof(struct gauges, cqs) },
		{ "mrs", offsetof(struct gauges, mrs) },
		{ "pinned_bytes", offsetof(struct gauges, pinned_bytes) },
		{ "unexpected_msgs", offsetof(struct gauges, unexpected_msgs) },
		{ "unexpected_bytes", offsetof(struct gauges, unexpected_bytes) },
		{ "triggered_ops", offsetof(struct gauges, triggered_ops) },
	};
	struct gauges *g = data;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i].name)) {
			*(uint64_t *)((char *)g + names[i].off) = value;
			g->found++;
		}
}

static inline int gauges_cb(const struct nlmsghdr *nlh, void *data)
{
	stats_each(nlh, gauges_one, data);
	return MNL_CB_OK;
}

/* Read the module-wide gauges. Return: 0, -ENOENT if one is missing. */
static inline int gauges_read(struct gauges *g)
{
	int ret;

	memset(g, 0, sizeof(*g));
	ret = stats_get(0, gauges_cb, g);
	if (!ret && g->found != 8)
		ret = -ENOENT;
	return ret;
}

struct stat_one {
	const char *name;
	uint64_t value;
	bool found;
};

static inline void stat_one_match(const char *name, uint64_t value,
				  void *data)
{
	struct stat_one *s = data;

	if (!strcmp(name, s->name)) {
		s->value = value;
		s->found = true;
	}
}

static inline int stat_one_cb(const struct nlmsghdr *nlh, void *data)
{
	stats_each(nlh, stat_one_match, data);
	return MNL_CB_OK;
}

/*
 * Read one named counter of a domain (STAT_GET with its id: `swnic stat
 * show domain ID`). Return: 0, -ENOENT if the domain has no such counter.
 */
static inline int stat_read_domain(uint32_t dom_id, const char *name,
				   uint64_t *value)
{
	struct stat_one s = { .name = name };
	int ret = stats_get(dom_id, stat_one_cb, &s);

	if (!ret && !s.found)
		ret = -ENOENT;
	*value = s.value;
	return ret;
}

/* Equal live objects (domains, endpoints, CQs, MRs, pinned bytes)? */
static inline bool gauges_equal_objects(const struct gauges *a,
					const struct gauges *b)
{
	return a->domains == b->domains && a->endpoints == b->endpoints &&
	       a->cqs == b->cqs && a->mrs == b->mrs &&
	       a->pinned_bytes == b->pinned_bytes;
}

/* ... and the same unexpected messages buffered? */
static inline bool gauges_equal(const struct gauges *a, const struct gauges *b)
{
	return gauges_equal_objects(a, b) &&
	       a->unexpected_msgs == b->unexpected_msgs &&
	       a->unexpected_bytes == b->unexpected_bytes;
}

static inline void gauges_print(const char *what, const struct gauges *g)
{
	fprintf(stderr, "# %s: domains %llu endpoints %llu cqs %llu mrs %llu pinned_bytes %llu unexpected_msgs %llu unexpected_bytes %llu\n",
		what, (unsigned long long)g->domains,
		(unsigned long long)g->endpoints, (unsigned long long)g->cqs,
		(unsigned long long)g->mrs,
		(unsigned long long)g->pinned_bytes,
		(unsigned long long)g->unexpected_msgs,
		(unsigned long long)g->unexpected_bytes);
}

/*
 * Read the gauges until they equal @start (all of them, or only the
 * objects if @objects_only), at most ~10 s: what a dead process held is
 * released when its last user lets go (an engine round on its memory, an
 * access holding a revoked MR's pins), not always before waitpid()
 * returns. @now gets the last reading. Return: 0 or -errno of a read.
 */
static inline int gauges_wait(const struct gauges *start, struct gauges *now,
			      bool objects_only)
{
	int ret = 0;
	bool eq = false;

	for (int i = 0; i < 1000; i++) {
		ret = gauges_read(now);
		eq = !ret && (objects_only ? gauges_equal_objects(start, now) :
			      gauges_equal(start, now));
		if (ret || eq)
			break;
		usleep(10000);
	}
	if (!ret && !eq) {
		gauges_print("expected", start);
		gauges_print("now", now);
	}
	return ret;
}

static inline int gauges_settle(const struct gauges *start, struct gauges *now)
{
	return gauges_wait(start, now, false);
}

/* Poll the triggered_ops gauge until it is @want (5 s). */
static inline bool gauges_triggered_back(uint64_t want)
{
	struct gauges g;

	for (int i = 0; i < 500; i++) {
		if (!gauges_read(&g) && g.triggered_ops == want)
			return true;
		usleep(10000);
	}
	return false;
}

/* The kernel's taint flags; bit 9 (TAINT_WARN) is set by any WARN. */
static inline unsigned long kernel_tainted(void)
{
	unsigned long t = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (f) {
		if (fscanf(f, "%lu", &t) != 1)
			t = 0;
		fclose(f);
	}
	return t;
}

#define TAINT_WARN_BIT	(1UL << 9)

#endif /* SWNIC_GAUGE_UTIL_H */
