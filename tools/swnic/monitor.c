// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8) monitor: print events as they happen (needs CAP_NET_ADMIN).
 */
#include <stdlib.h>
#include <string.h>

#include "swnic.h"

static void monitor_usage(void)
{
	fprintf(stderr,
		"Usage: swnic monitor [count N]\n"
		"Prints device, domain, service, MR revocation and limit\n"
		"events, one a line (-j: one JSON object a line); stops after\n"
		"N events if given. Events the kernel dropped, the monitor not\n"
		"keeping up, are an \"event lost\" line. Needs CAP_NET_ADMIN.\n");
}

static const char *limit_name(uint32_t limit)
{
	switch (limit) {
	case SWNIC_LIMIT_DEV_DOMAINS:
		return "dev_max_domains";
	case SWNIC_LIMIT_DEV_MR:
		return "dev_max_mr";
	case SWNIC_LIMIT_DEV_EP:
		return "dev_max_ep";
	case SWNIC_LIMIT_DEV_CQ:
		return "dev_max_cq";
	case SWNIC_LIMIT_DEV_PINNED:
		return "dev_max_pinned";
	case SWNIC_LIMIT_SVC_DOMAINS:
		return "svc_max_domains";
	default:
		return "unknown";
	}
}

struct monitor {
	bool counted;
	uint64_t left;
};

static int monitor_cb(const struct nlmsghdr *nlh, void *data)
{
	static const struct {
		uint8_t cmd;
		const char *name;
		void (*print)(const struct sw_attrs *a);
	} events[] = {
		{ SWNIC_NL_CMD_DEV_NEW, "dev_add", dev_print },
		{ SWNIC_NL_CMD_DEV_DEL, "dev_del", dev_print },
		{ SWNIC_NL_CMD_DEV_SET, "dev_set", dev_print },
		{ SWNIC_NL_CMD_DOMAIN_NEW, "domain_open", domain_print },
		{ SWNIC_NL_CMD_DOMAIN_DEL, "domain_close", domain_print },
		{ SWNIC_NL_CMD_SVC_NEW, "service_add", service_print },
		{ SWNIC_NL_CMD_SVC_DEL, "service_del", service_print },
		{ SWNIC_NL_CMD_SVC_SET, "service_set", service_print },
		{ SWNIC_NL_CMD_MR_REVOKED, "mr_revoked", mr_print },
		{ SWNIC_NL_CMD_LIMIT_HIT, "limit_hit", NULL },
	};
	struct monitor *m = data;
	struct sw_attrs a;
	uint32_t v;
	size_t i;

	if (nl_parse(nlh, &a) < 0)
		return MNL_CB_ERROR;
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (events[i].cmd == nl_cmd(nlh))
			break;
	pr_row_begin();
	if (i == sizeof(events) / sizeof(events[0])) {
		pr_str("event", "unknown");
		pr_u32("cmd", nl_cmd(nlh));
	} else {
		pr_str("event", events[i].name);
	}
	if (i < sizeof(events) / sizeof(events[0]) && events[i].print) {
		events[i].print(&a);
	} else if (nl_cmd(nlh) == SWNIC_NL_CMD_LIMIT_HIT) {
		pr_str("dev", attr_str(a.tb[SWNIC_A_DEV_NAME]));
		if (attr_u32(a.tb[SWNIC_A_DOMAIN_ID], &v))
			pr_u32("domain", v);
		if (attr_u32(a.tb[SWNIC_A_LIMIT], &v))
			pr_str("limit", limit_name(v));
	}
	pr_row_end();
	if (m->counted && !--m->left)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

/* Events were dropped (ENOBUFS): say where, in the stream too. */
static void monitor_lost(void *data)
{
	fprintf(stderr,
		"swnic: monitor: events were lost: the kernel had no room\n");
	pr_row_begin();
	pr_str("event", "lost");
	pr_row_end();
}

int cmd_monitor(struct sw *sw)
{
	struct monitor m = { 0 };

	while (sw_argc(sw)) {
		if (sw_argv_is(sw, "help")) {
			monitor_usage();
			return 0;
		}
		if (!sw_argv_is(sw, "count"))
			return sw_unknown_arg(sw, monitor_usage);
		if (sw_arg_u64(sw, "count", &m.left))
			return -1;
		m.counted = true;
	}
	if (m.counted && !m.left)
		return 0;
	if (nl_subscribe(sw))
		return -1;
	pr_begin(PR_LINES);
	return nl_recv_events(sw, monitor_cb, monitor_lost, &m);
}
