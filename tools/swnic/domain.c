// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8) domain: the open domains (files of /dev/swnic*) and what they
 * hold. Users see their own domains; administrators see all.
 */
#include <string.h>

#include "swnic.h"

static void domain_usage(void)
{
	fprintf(stderr,
		"Usage: swnic domain show [dev DEV] [id ID]\n"
		"Without CAP_NET_ADMIN only your own domains are shown.\n");
}

void domain_print(const struct sw_attrs *a)
{
	uint32_t v;
	uint64_t v64;

	if (attr_u32(a->tb[SWNIC_A_DOMAIN_ID], &v))
		pr_u32("id", v);
	pr_str("dev", attr_str(a->tb[SWNIC_A_DEV_NAME]));
	if (attr_u32(a->tb[SWNIC_A_DOMAIN_PID], &v))
		pr_u32("pid", v);
	pr_str("comm", attr_str(a->tb[SWNIC_A_DOMAIN_COMM]));
	if (attr_u32(a->tb[SWNIC_A_DOMAIN_UID], &v))
		pr_u32("uid", v);
	if (attr_u32(a->tb[SWNIC_A_DOMAIN_AUTH_KEY], &v))
		pr_u32("auth_key", v);
	if (attr_u32(a->tb[SWNIC_A_DOMAIN_MRS], &v))
		pr_u32("mrs", v);
	if (attr_u64(a->tb[SWNIC_A_DOMAIN_PINNED], &v64))
		pr_u64("pinned", v64);
	if (attr_u32(a->tb[SWNIC_A_DOMAIN_EPS], &v))
		pr_u32("eps", v);
	if (attr_u32(a->tb[SWNIC_A_DOMAIN_CQS], &v))
		pr_u32("cqs", v);
}

static int domain_show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sw_attrs a;

	if (nl_parse(nlh, &a) < 0)
		return MNL_CB_ERROR;
	pr_row_begin();
	domain_print(&a);
	pr_row_end();
	return MNL_CB_OK;
}

static int domain_put_filter(struct nlmsghdr *nlh, void *data)
{
	const char *dev = data;

	return dev ? nl_put_dev(nlh, dev) : 0;
}

static int domain_show(struct sw *sw)
{
	const char *dev = NULL;
	struct nlmsghdr *nlh;
	bool has_id = false;
	uint32_t id = 0;
	int ret;

	while (sw_argc(sw)) {
		if (sw_argv_is(sw, "dev")) {
			if (sw_need_arg(sw, "dev", &dev))
				return -1;
		} else if (sw_argv_is(sw, "id")) {
			if (sw_arg_u32(sw, "id", &id))
				return -1;
			has_id = true;
		} else {
			return sw_unknown_arg(sw, domain_usage);
		}
	}
	pr_begin(PR_TABLE);
	if (has_id) {
		if (nl_open(sw))
			return -1;
		nlh = nl_msg(sw, SWNIC_NL_CMD_DOMAIN_GET, NLM_F_ACK);
		mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
		if (dev && nl_put_dev(nlh, dev))
			return -1;
		ret = nl_run(sw, nlh, domain_show_cb, NULL);
	} else {
		ret = nl_dump(sw, SWNIC_NL_CMD_DOMAIN_GET, domain_put_filter,
			      (void *)dev, domain_show_cb, NULL);
	}
	if (ret) {
		pr_discard();
		return ret;
	}
	return pr_end();
}

int cmd_domain(struct sw *sw)
{
	static const struct sw_cmd cmds[] = {
		{ "show", domain_show },
		{ "list", domain_show },
		{ NULL, NULL },
	};

	return sw_exec(sw, cmds, "domain command", domain_usage);
}
