// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8) mr: the memory regions of the domains you may see.
 */
#include <linux/swnic.h>
#include <string.h>

#include "swnic.h"

static void mr_usage(void)
{
	fprintf(stderr,
		"Usage: swnic mr show [dev DEV] [domain ID]\n"
		"Without CAP_NET_ADMIN only your own domains' MRs are shown.\n");
}

static const char *mr_state_name(uint32_t state)
{
	switch (state) {
	case SWNIC_MR_STATE_VALID:
		return "valid";
	case SWNIC_MR_STATE_REVOKED:
		return "revoked";
	default:
		return "unknown";
	}
}

/* Access rights as libfabric names them, e.g. "send,recv,remote_write". */
static void mr_access_str(uint32_t access, char *buf, size_t len)
{
	static const char *const names[] = {
		"send", "recv", "read", "write", "remote_read", "remote_write",
	};
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (access & (1U << i))
			n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
				      n ? "," : "", names[i]);
	if (!n)
		snprintf(buf, len, "none");
}

void mr_print(const struct sw_attrs *a)
{
	char access[80];
	uint64_t v64;
	uint32_t v;

	pr_str("dev", attr_str(a->tb[SWNIC_A_DEV_NAME]));
	if (attr_u32(a->tb[SWNIC_A_DOMAIN_ID], &v))
		pr_u32("domain", v);
	if (attr_u32(a->tb[SWNIC_A_MR_HANDLE], &v))
		pr_u32("handle", v);
	if (attr_u64(a->tb[SWNIC_A_MR_KEY], &v64))
		pr_hex64("key", v64);
	if (attr_u64(a->tb[SWNIC_A_MR_ADDR], &v64))
		pr_hex64("addr", v64);
	if (attr_u64(a->tb[SWNIC_A_MR_LENGTH], &v64))
		pr_u64("length", v64);
	if (attr_u32(a->tb[SWNIC_A_MR_ACCESS], &v)) {
		mr_access_str(v, access, sizeof(access));
		pr_str("access", access);
	}
	if (attr_u32(a->tb[SWNIC_A_MR_FLAGS], &v))
		pr_str("mode", v & SWNIC_MR_REG_ODP ? "odp" : "pinned");
	if (attr_u32(a->tb[SWNIC_A_MR_STATE], &v))
		pr_str("state", mr_state_name(v));
	if (attr_u32(a->tb[SWNIC_A_MR_AUTH_KEY], &v))
		pr_u32("auth_key", v);
	if (attr_u64(a->tb[SWNIC_A_MR_PINNED_PAGES], &v64))
		pr_u64("pinned_pages", v64);
	if (attr_u64(a->tb[SWNIC_A_MR_REVOCATIONS], &v64))
		pr_u64("revocations", v64);
	if (attr_u64(a->tb[SWNIC_A_MR_INVALIDATIONS], &v64))
		pr_u64("invalidations", v64);
}

static int mr_show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sw_attrs a;

	if (nl_parse(nlh, &a) < 0)
		return MNL_CB_ERROR;
	pr_row_begin();
	mr_print(&a);
	pr_row_end();
	return MNL_CB_OK;
}

struct mr_filter {
	const char *dev;
	bool has_domain;
	uint32_t domain;
};

static int mr_put_filter(struct nlmsghdr *nlh, void *data)
{
	const struct mr_filter *f = data;

	if (f->dev && nl_put_dev(nlh, f->dev))
		return -1;
	if (f->has_domain)
		mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, f->domain);
	return 0;
}

static int mr_show(struct sw *sw)
{
	struct mr_filter f = { 0 };

	while (sw_argc(sw)) {
		if (sw_argv_is(sw, "dev")) {
			if (sw_need_arg(sw, "dev", &f.dev))
				return -1;
		} else if (sw_argv_is(sw, "domain")) {
			if (sw_arg_u32(sw, "domain", &f.domain))
				return -1;
			f.has_domain = true;
		} else {
			return sw_unknown_arg(sw, mr_usage);
		}
	}
	pr_begin(PR_TABLE);
	if (nl_dump(sw, SWNIC_NL_CMD_MR_GET, mr_put_filter, &f, mr_show_cb,
		    NULL)) {
		pr_discard();
		return -1;
	}
	return pr_end();
}

int cmd_mr(struct sw *sw)
{
	static const struct sw_cmd cmds[] = {
		{ "show", mr_show },
		{ "list", mr_show },
		{ NULL, NULL },
	};

	return sw_exec(sw, cmds, "mr command", mr_usage);
}
