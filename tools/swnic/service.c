// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8) service: auth keys and who may use them (CXI-style services).
 */
#include <errno.h>
#include <string.h>

#include "swnic.h"

static void service_usage(void)
{
	fprintf(stderr,
		"Usage: swnic service show [DEV] [key KEY | id ID]\n"
		"       swnic service add DEV key KEY [uid UID]... [gid GID]...\n"
		"                         [open] [disabled] [max_domains N]\n"
		"       swnic service del DEV { key KEY | id ID }\n"
		"       swnic service set DEV { key KEY | id ID } [uid UID]...\n"
		"                         [gid GID]... [nomembers] [open | closed]\n"
		"                         [enabled | disabled] [max_domains N]\n"
		"A domain may take KEY (SWNIC_IOCTL_AUTH_KEY) if the service is\n"
		"open or lists its uid or one of its gids, or with CAP_NET_ADMIN.\n"
		"uid/gid given to set replace the member list. Changes need\n"
		"CAP_NET_ADMIN.\n");
}

void service_print(const struct sw_attrs *a)
{
	const struct nlattr *m;
	uint32_t v, flags = 0;

	pr_str("dev", attr_str(a->tb[SWNIC_A_DEV_NAME]));
	if (attr_u32(a->tb[SWNIC_A_SVC_ID], &v))
		pr_u32("id", v);
	if (attr_u32(a->tb[SWNIC_A_SVC_AUTH_KEY], &v))
		pr_u32("auth_key", v);
	if (attr_u32(a->tb[SWNIC_A_SVC_FLAGS], &flags)) {
		pr_bool("open", flags & SWNIC_SVC_F_OPEN);
		pr_bool("enabled", !(flags & SWNIC_SVC_F_DISABLED));
	}
	if (attr_u32(a->tb[SWNIC_A_SVC_MAX_DOMAINS], &v))
		pr_u32("max_domains", v);
	if (attr_u32(a->tb[SWNIC_A_SVC_DOMAINS], &v))
		pr_u32("domains", v);
	if (!a->tb[SWNIC_A_SVC_MEMBERS])
		return;
	pr_list_begin("uids");
	mnl_attr_for_each_nested(m, a->tb[SWNIC_A_SVC_MEMBERS])
		if (mnl_attr_get_type(m) == SWNIC_A_MEMBER_UID &&
		    attr_u32(m, &v))
			pr_list_u32(v);
	pr_list_end();
	pr_list_begin("gids");
	mnl_attr_for_each_nested(m, a->tb[SWNIC_A_SVC_MEMBERS])
		if (mnl_attr_get_type(m) == SWNIC_A_MEMBER_GID &&
		    attr_u32(m, &v))
			pr_list_u32(v);
	pr_list_end();
}

static int service_show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sw_attrs a;

	if (nl_parse(nlh, &a) < 0)
		return MNL_CB_ERROR;
	pr_row_begin();
	service_print(&a);
	pr_row_end();
	return MNL_CB_OK;
}

/* Which service: "key KEY" or "id ID". */
struct service_which {
	uint16_t type;			/* SWNIC_A_SVC_AUTH_KEY or _ID */
	uint32_t val;
};

/* Parse "key KEY" or "id ID"; the current argument is the word. */
static int service_parse_which(struct sw *sw, struct service_which *w)
{
	bool key = sw_argv_is(sw, "key");

	w->type = key ? SWNIC_A_SVC_AUTH_KEY : SWNIC_A_SVC_ID;
	return sw_arg_u32(sw, key ? "key" : "id", &w->val);
}

static int service_put_which(struct sw *sw, struct nlmsghdr *nlh)
{
	struct service_which w;

	if (service_parse_which(sw, &w))
		return -1;
	mnl_attr_put_u32(nlh, w.type, w.val);
	return 0;
}

static int service_put_dev(struct nlmsghdr *nlh, void *data)
{
	return data ? nl_put_dev(nlh, data) : 0;
}

static int service_show(struct sw *sw)
{
	const char *dev = NULL;
	struct nlmsghdr *nlh;
	bool which = false;
	int ret;

	if (nl_open(sw))
		return -1;
	nlh = nl_msg(sw, SWNIC_NL_CMD_SVC_GET, NLM_F_ACK);
	if (sw_argc(sw) && !sw_argv_is(sw, "key") && !sw_argv_is(sw, "id")) {
		dev = sw_argv(sw);
		if (nl_put_dev(nlh, dev))
			return -1;
		sw_next(sw);
	}
	if (sw_argv_is(sw, "key") || sw_argv_is(sw, "id")) {
		if (!dev) {
			fprintf(stderr, "swnic: service show: key and id need a device\n");
			return -1;
		}
		if (service_put_which(sw, nlh))
			return -1;
		which = true;
	}
	if (sw_argc(sw))
		return sw_unknown_arg(sw, service_usage);

	pr_begin(PR_TABLE);
	if (which)
		ret = nl_run(sw, nlh, service_show_cb, NULL);
	else
		ret = nl_dump(sw, SWNIC_NL_CMD_SVC_GET, service_put_dev,
			      (void *)dev, service_show_cb, NULL);
	if (ret) {
		pr_discard();
		return ret;
	}
	return pr_end();
}

/* Options shared by add and set. */
struct service_opts {
	uint32_t uids[SWNIC_SVC_MAX_MEMBERS];
	uint32_t gids[SWNIC_SVC_MAX_MEMBERS];
	unsigned int nuids, ngids;
	bool members;			/* put SVC_MEMBERS */
	uint32_t set, clear;		/* flag changes */
	bool has_max;
	uint32_t max_domains;
};

/* One option at the current argument: 1 parsed, 0 not an option, -1. */
static int service_opt(struct sw *sw, struct service_opts *o, bool set)
{
	static const struct {
		const char *word;
		uint32_t set, clear;
		bool for_set;		/* only for "service set" */
	} flags[] = {
		{ "open", SWNIC_SVC_F_OPEN, 0, false },
		{ "disabled", SWNIC_SVC_F_DISABLED, 0, false },
		{ "closed", 0, SWNIC_SVC_F_OPEN, true },
		{ "enabled", 0, SWNIC_SVC_F_DISABLED, true },
	};
	uint32_t v;
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!sw_argv_is(sw, flags[i].word) || (flags[i].for_set && !set))
			continue;
		o->set = (o->set & ~flags[i].clear) | flags[i].set;
		o->clear = (o->clear & ~flags[i].set) | flags[i].clear;
		sw_next(sw);
		return 1;
	}
	if (sw_argv_is(sw, "uid") || sw_argv_is(sw, "gid")) {
		bool uid = sw_argv_is(sw, "uid");

		if (sw_arg_u32(sw, uid ? "uid" : "gid", &v))
			return -1;
		if (o->nuids + o->ngids >= SWNIC_SVC_MAX_MEMBERS) {
			fprintf(stderr, "swnic: at most %d members\n",
				SWNIC_SVC_MAX_MEMBERS);
			return -1;
		}
		if (uid)
			o->uids[o->nuids++] = v;
		else
			o->gids[o->ngids++] = v;
		o->members = true;
		return 1;
	}
	if (set && sw_argv_is(sw, "nomembers")) {
		o->members = true;
		sw_next(sw);
		return 1;
	}
	if (sw_argv_is(sw, "max_domains")) {
		if (sw_arg_u32(sw, "max_domains", &o->max_domains))
			return -1;
		o->has_max = true;
		return 1;
	}
	return 0;
}

static void service_put_opts(struct nlmsghdr *nlh,
			     const struct service_opts *o, bool put_flags,
			     uint32_t flags)
{
	struct nlattr *nest;
	unsigned int i;

	if (put_flags)
		mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, flags);
	if (o->has_max)
		mnl_attr_put_u32(nlh, SWNIC_A_SVC_MAX_DOMAINS, o->max_domains);
	if (o->members) {
		nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);
		for (i = 0; i < o->nuids; i++)
			mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_UID, o->uids[i]);
		for (i = 0; i < o->ngids; i++)
			mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_GID, o->gids[i]);
		mnl_attr_nest_end(nlh, nest);
	}
}

static int service_need_dev(struct sw *sw, const char *cmd, const char **dev)
{
	if (!sw_argc(sw)) {
		fprintf(stderr, "swnic: service %s: which device?\n", cmd);
		service_usage();
		return -1;
	}
	*dev = sw_argv(sw);
	sw_next(sw);
	return nl_open(sw);
}

static int service_add(struct sw *sw)
{
	struct service_opts o = { 0 };
	struct nlmsghdr *nlh;
	bool key = false;
	const char *dev;
	uint32_t v;
	int ret;

	if (service_need_dev(sw, "add", &dev))
		return -1;
	nlh = nl_msg(sw, SWNIC_NL_CMD_SVC_NEW, NLM_F_ACK);
	if (nl_put_dev(nlh, dev))
		return -1;
	while (sw_argc(sw)) {
		if (sw_argv_is(sw, "key")) {
			if (sw_arg_u32(sw, "key", &v))
				return -1;
			mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, v);
			key = true;
			continue;
		}
		ret = service_opt(sw, &o, false);
		if (ret < 0)
			return -1;
		if (!ret)
			return sw_unknown_arg(sw, service_usage);
	}
	if (!key) {
		fprintf(stderr, "swnic: service add: \"key KEY\" is needed\n");
		return -1;
	}
	service_put_opts(nlh, &o, o.set, o.set);
	return nl_run(sw, nlh, NULL, NULL);
}

static int service_del(struct sw *sw)
{
	struct nlmsghdr *nlh;
	const char *dev;

	if (service_need_dev(sw, "del", &dev))
		return -1;
	nlh = nl_msg(sw, SWNIC_NL_CMD_SVC_DEL, NLM_F_ACK);
	if (nl_put_dev(nlh, dev))
		return -1;
	if (!sw_argv_is(sw, "key") && !sw_argv_is(sw, "id")) {
		fprintf(stderr, "swnic: service del: \"key KEY\" or \"id ID\" is needed\n");
		return -1;
	}
	if (service_put_which(sw, nlh))
		return -1;
	if (sw_argc(sw))
		return sw_unknown_arg(sw, service_usage);
	return nl_run(sw, nlh, NULL, NULL);
}

static int service_flags_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sw_attrs a;

	if (nl_parse(nlh, &a) < 0 ||
	    !attr_u32(a.tb[SWNIC_A_SVC_FLAGS], data))
		return MNL_CB_ERROR;
	return MNL_CB_OK;
}

static int service_set(struct sw *sw)
{
	struct service_opts o = { 0 };
	struct service_which w;
	struct nlmsghdr *nlh;
	uint32_t flags = 0;
	const char *dev;
	int ret;

	if (service_need_dev(sw, "set", &dev))
		return -1;
	if (!sw_argv_is(sw, "key") && !sw_argv_is(sw, "id")) {
		fprintf(stderr, "swnic: service set: \"key KEY\" or \"id ID\" is needed\n");
		return -1;
	}
	if (service_parse_which(sw, &w))
		return -1;
	while (sw_argc(sw)) {
		ret = service_opt(sw, &o, true);
		if (ret < 0)
			return -1;
		if (!ret)
			return sw_unknown_arg(sw, service_usage);
	}
	if (!o.set && !o.clear && !o.has_max && !o.members) {
		fprintf(stderr, "swnic: service set: nothing to change\n");
		service_usage();
		return -1;
	}
	/* Flags are replaced as a whole: read them first. */
	if (o.set || o.clear) {
		nlh = nl_msg(sw, SWNIC_NL_CMD_SVC_GET, NLM_F_ACK);
		if (nl_put_dev(nlh, dev))
			return -1;
		mnl_attr_put_u32(nlh, w.type, w.val);
		if (nl_run(sw, nlh, service_flags_cb, &flags))
			return -1;
		flags = (flags & ~o.clear) | o.set;
	}

	nlh = nl_msg(sw, SWNIC_NL_CMD_SVC_SET, NLM_F_ACK);
	if (nl_put_dev(nlh, dev))
		return -1;
	mnl_attr_put_u32(nlh, w.type, w.val);
	service_put_opts(nlh, &o, o.set || o.clear, flags);
	return nl_run(sw, nlh, NULL, NULL);
}

int cmd_service(struct sw *sw)
{
	static const struct sw_cmd cmds[] = {
		{ "show", service_show },
		{ "list", service_show },
		{ "add", service_add },
		{ "del", service_del },
		{ "set", service_set },
		{ NULL, NULL },
	};

	return sw_exec(sw, cmds, "service command", service_usage);
}
