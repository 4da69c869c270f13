// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8) dev: show, add, delete and change devices.
 */
#include <errno.h>
#include <string.h>

#include <net/if.h>

#include "swnic.h"

static void dev_usage(void)
{
	fprintf(stderr,
		"Usage: swnic dev show [DEV]\n"
		"       swnic dev add NAME [netdev IFNAME | ifindex IFINDEX]\n"
		"       swnic dev del DEV [force]\n"
		"       swnic dev set DEV [state { up | down }]\n"
		"                         [netdev IFNAME | ifindex IFINDEX]\n"
		"                         [max_domains N] [max_mr N] [max_ep N]\n"
		"                         [max_cq N] [max_pinned SIZE]\n"
		"                         [max_domains_per_user N]\n"
		"DEV is a device name or index; SIZE takes a K, M, G or T suffix;\n"
		"max_pinned 0 means no limit; ifindex 0 unbinds the netdev.\n"
		"Changes need CAP_NET_ADMIN.\n");
}

const char *dev_state_name(uint32_t state)
{
	switch (state) {
	case SWNIC_DEV_STATE_DOWN:
		return "down";
	case SWNIC_DEV_STATE_UP:
		return "up";
	default:
		return "unknown";
	}
}

/* The device's attributes, as columns/keys of the current row. */
void dev_print(const struct sw_attrs *a)
{
	static const struct {
		const char *key;
		unsigned int attr;
	} limits[] = {
		{ "domains", SWNIC_A_DEV_DOMAINS },
		{ "max_domains", SWNIC_A_DEV_MAX_DOMAINS },
		{ "max_domains_per_user", SWNIC_A_DEV_MAX_DOMAINS_PER_USER },
		{ "max_mr", SWNIC_A_DEV_MAX_MR },
		{ "max_ep", SWNIC_A_DEV_MAX_EP },
		{ "max_cq", SWNIC_A_DEV_MAX_CQ },
	};
	uint32_t v;
	uint64_t v64;
	size_t i;

	if (attr_u32(a->tb[SWNIC_A_DEV_INDEX], &v))
		pr_u32("index", v);
	pr_str("name", attr_str(a->tb[SWNIC_A_DEV_NAME]));
	if (attr_u32(a->tb[SWNIC_A_DEV_STATE], &v))
		pr_str("state", dev_state_name(v));
	pr_str("netdev", attr_str(a->tb[SWNIC_A_DEV_IFNAME]));
	if (attr_u32(a->tb[SWNIC_A_DEV_IFINDEX], &v))
		pr_u32("ifindex", v);
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (attr_u32(a->tb[limits[i].attr], &v))
			pr_u32(limits[i].key, v);
	if (attr_u64(a->tb[SWNIC_A_DEV_MAX_PINNED], &v64))
		pr_u64("max_pinned", v64);
}

static int dev_show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sw_attrs a;

	if (nl_parse(nlh, &a) < 0)
		return MNL_CB_ERROR;
	pr_row_begin();
	dev_print(&a);
	pr_row_end();
	return MNL_CB_OK;
}

static int dev_show(struct sw *sw)
{
	struct nlmsghdr *nlh;
	const char *dev = NULL;
	int ret;

	if (sw_argc(sw)) {
		dev = sw_argv(sw);
		sw_next(sw);
	}
	if (sw_argc(sw))
		return sw_unknown_arg(sw, dev_usage);

	pr_begin(PR_TABLE);
	if (dev) {
		if (nl_open(sw))
			return -1;
		nlh = nl_msg(sw, SWNIC_NL_CMD_DEV_GET, NLM_F_ACK);
		if (nl_put_dev(nlh, dev))
			return -1;
		ret = nl_run(sw, nlh, dev_show_cb, NULL);
	} else {
		ret = nl_dump(sw, SWNIC_NL_CMD_DEV_GET, NULL, NULL,
			      dev_show_cb, NULL);
	}
	if (ret) {
		pr_discard();
		return ret;
	}
	return pr_end();
}

/* "netdev IFNAME" or "ifindex N", the current argument being the key. */
static int dev_put_netdev(struct sw *sw, struct nlmsghdr *nlh)
{
	const char *s;
	uint32_t v;

	if (sw_argv_is(sw, "netdev")) {
		if (sw_need_arg(sw, "netdev", &s))
			return -1;
		return nl_put_name(nlh, SWNIC_A_DEV_IFNAME, "netdev name", s,
				   IFNAMSIZ);
	}
	if (sw_arg_u32(sw, "ifindex", &v))
		return -1;
	mnl_attr_put_u32(nlh, SWNIC_A_DEV_IFINDEX, v);
	return 0;
}

static int dev_add(struct sw *sw)
{
	struct nlmsghdr *nlh;
	const char *name;

	if (!sw_argc(sw)) {
		fprintf(stderr, "swnic: dev add: a device name is needed\n");
		dev_usage();
		return -1;
	}
	if (nl_open(sw))
		return -1;
	name = sw_argv(sw);
	sw_next(sw);
	nlh = nl_msg(sw, SWNIC_NL_CMD_DEV_NEW, NLM_F_ACK);
	if (nl_put_name(nlh, SWNIC_A_DEV_NAME, "device name", name,
			SWNIC_NAME_MAX))
		return -1;
	while (sw_argc(sw)) {
		if (sw_argv_is(sw, "netdev") || sw_argv_is(sw, "ifindex")) {
			if (dev_put_netdev(sw, nlh))
				return -1;
		} else {
			return sw_unknown_arg(sw, dev_usage);
		}
	}
	return nl_run(sw, nlh, NULL, NULL);
}

static int dev_del(struct sw *sw)
{
	struct nlmsghdr *nlh;
	uint32_t flags = 0;
	const char *dev;

	if (!sw_argc(sw)) {
		fprintf(stderr, "swnic: dev del: which device?\n");
		dev_usage();
		return -1;
	}
	if (nl_open(sw))
		return -1;
	dev = sw_argv(sw);
	sw_next(sw);
	while (sw_argc(sw)) {
		if (!sw_argv_is(sw, "force"))
			return sw_unknown_arg(sw, dev_usage);
		flags |= SWNIC_DEV_DEL_F_FORCE;
		sw_next(sw);
	}
	nlh = nl_msg(sw, SWNIC_NL_CMD_DEV_DEL, NLM_F_ACK);
	if (nl_put_dev(nlh, dev))
		return -1;
	if (flags)
		mnl_attr_put_u32(nlh, SWNIC_A_FLAGS, flags);
	return nl_run(sw, nlh, NULL, NULL);
}

static int dev_set(struct sw *sw)
{
	static const struct {
		const char *key;
		unsigned int attr;
	} limits[] = {
		{ "max_domains", SWNIC_A_DEV_MAX_DOMAINS },
		{ "max_domains_per_user", SWNIC_A_DEV_MAX_DOMAINS_PER_USER },
		{ "max_mr", SWNIC_A_DEV_MAX_MR },
		{ "max_ep", SWNIC_A_DEV_MAX_EP },
		{ "max_cq", SWNIC_A_DEV_MAX_CQ },
	};
	struct nlmsghdr *nlh;
	const char *dev, *s;
	uint64_t v64;
	uint32_t v;
	size_t i;

	if (!sw_argc(sw)) {
		fprintf(stderr, "swnic: dev set: which device?\n");
		dev_usage();
		return -1;
	}
	if (nl_open(sw))
		return -1;
	dev = sw_argv(sw);
	sw_next(sw);
	nlh = nl_msg(sw, SWNIC_NL_CMD_DEV_SET, NLM_F_ACK);
	if (nl_put_dev(nlh, dev))
		return -1;
	if (!sw_argc(sw)) {
		fprintf(stderr, "swnic: dev set: nothing to change\n");
		dev_usage();
		return -1;
	}
	while (sw_argc(sw)) {
		for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
			if (sw_argv_is(sw, limits[i].key))
				break;
		if (i < sizeof(limits) / sizeof(limits[0])) {
			if (sw_arg_u32(sw, limits[i].key, &v))
				return -1;
			mnl_attr_put_u32(nlh, limits[i].attr, v);
		} else if (sw_argv_is(sw, "max_pinned")) {
			if (sw_arg_u64(sw, "max_pinned", &v64))
				return -1;
			mnl_attr_put_u64(nlh, SWNIC_A_DEV_MAX_PINNED, v64);
		} else if (sw_argv_is(sw, "state")) {
			if (sw_need_arg(sw, "state", &s))
				return -1;
			if (!strcmp(s, "up")) {
				v = SWNIC_DEV_STATE_UP;
			} else if (!strcmp(s, "down")) {
				v = SWNIC_DEV_STATE_DOWN;
			} else {
				fprintf(stderr,
					"swnic: state is \"up\" or \"down\"\n");
				return -1;
			}
			mnl_attr_put_u32(nlh, SWNIC_A_DEV_STATE, v);
		} else if (sw_argv_is(sw, "netdev") ||
			   sw_argv_is(sw, "ifindex")) {
			if (dev_put_netdev(sw, nlh))
				return -1;
		} else {
			return sw_unknown_arg(sw, dev_usage);
		}
	}
	return nl_run(sw, nlh, NULL, NULL);
}

int cmd_dev(struct sw *sw)
{
	static const struct sw_cmd cmds[] = {
		{ "show", dev_show },
		{ "list", dev_show },
		{ "add", dev_add },
		{ "del", dev_del },
		{ "set", dev_set },
		{ NULL, NULL },
	};

	return sw_exec(sw, cmds, "dev command", dev_usage);
}
