// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8) stat: counters of the module, of devices and of domains.
 */
#include <string.h>

#include "swnic.h"

static void stat_usage(void)
{
	fprintf(stderr,
		"Usage: swnic stat show [dev DEV | domain ID]\n"
		"       swnic stat reset { dev DEV | domain ID }\n"
		"Without arguments, show lists the module-wide object counts\n"
		"and every device's counters. reset needs CAP_NET_ADMIN; it\n"
		"zeroes counters, not gauges (objects alive now).\n");
}

/* Call @fn for each counter (name and value) of a SWNIC_A_STATS nest. */
void stat_for_each(const struct nlattr *stats,
		   void (*fn)(const char *name, uint64_t value, void *arg),
		   void *arg)
{
	const struct nlattr *entry, *a;

	mnl_attr_for_each_nested(entry, stats) {
		const char *name = NULL;
		uint64_t value;
		bool has_value = false;

		if (mnl_attr_get_type(entry) != SWNIC_A_STATS_ENTRY)
			continue;
		mnl_attr_for_each_nested(a, entry) {
			if (mnl_attr_get_type(a) == SWNIC_A_STAT_NAME)
				name = attr_str(a);
			else if (mnl_attr_get_type(a) == SWNIC_A_STAT_VALUE)
				has_value = attr_u64(a, &value);
		}
		if (name && has_value)
			fn(name, value, arg);
	}
}

static void stat_print_one(const char *name, uint64_t value, void *arg)
{
	pr_map_u64(name, value);
}

/* The counters of SWNIC_A_STATS as a map "counter" -> value. */
void stat_print_entries(const struct nlattr *stats)
{
	pr_map_begin("counters", "counter", "value");
	stat_for_each(stats, stat_print_one, NULL);
	pr_map_end();
}

static int stat_show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sw_attrs a;
	uint32_t v;

	if (nl_parse(nlh, &a) < 0)
		return MNL_CB_ERROR;
	pr_row_begin();
	if (a.tb[SWNIC_A_DEV_NAME])
		pr_str("dev", attr_str(a.tb[SWNIC_A_DEV_NAME]));
	else
		pr_str("dev", "*");
	if (attr_u32(a.tb[SWNIC_A_DOMAIN_ID], &v))
		pr_u32("domain", v);
	if (a.tb[SWNIC_A_STATS])
		stat_print_entries(a.tb[SWNIC_A_STATS]);
	pr_row_end();
	return MNL_CB_OK;
}

/* Parse "dev DEV" or "domain ID" into the request. */
static int stat_target(struct sw *sw, struct nlmsghdr *nlh, bool *any,
		       void (*usage)(void))
{
	const char *dev;
	uint32_t id;

	*any = false;
	while (sw_argc(sw)) {
		if (sw_argv_is(sw, "dev")) {
			if (sw_need_arg(sw, "dev", &dev) ||
			    nl_put_dev(nlh, dev))
				return -1;
		} else if (sw_argv_is(sw, "domain")) {
			if (sw_arg_u32(sw, "domain", &id))
				return -1;
			mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
		} else {
			return sw_unknown_arg(sw, usage);
		}
		*any = true;
	}
	return 0;
}

static int stat_show(struct sw *sw)
{
	struct nlmsghdr *nlh;
	bool any;
	int ret;

	if (nl_open(sw))
		return -1;
	nlh = nl_msg(sw, SWNIC_NL_CMD_STAT_GET, NLM_F_ACK);
	if (stat_target(sw, nlh, &any, stat_usage))
		return -1;
	pr_begin(PR_TABLE);
	if (any)
		ret = nl_run(sw, nlh, stat_show_cb, NULL);
	else
		ret = nl_dump(sw, SWNIC_NL_CMD_STAT_GET, NULL, NULL,
			      stat_show_cb, NULL);
	if (ret) {
		pr_discard();
		return ret;
	}
	return pr_end();
}

static int stat_reset(struct sw *sw)
{
	struct nlmsghdr *nlh;
	bool any;

	if (nl_open(sw))
		return -1;
	nlh = nl_msg(sw, SWNIC_NL_CMD_STAT_RESET, NLM_F_ACK);
	if (stat_target(sw, nlh, &any, stat_usage))
		return -1;
	if (!any) {
		fprintf(stderr, "swnic: stat reset: which device or domain?\n");
		stat_usage();
		return -1;
	}
	return nl_run(sw, nlh, NULL, NULL);
}

int cmd_stat(struct sw *sw)
{
	static const struct sw_cmd cmds[] = {
		{ "show", stat_show },
		{ "list", stat_show },
		{ "reset", stat_reset },
		{ NULL, NULL },
	};

	return sw_exec(sw, cmds, "stat command", stat_usage);
}
