// SPDX-License-Identifier: GPL-2.0
/*
 * Every attribute of every command of the "swnic" netlink family, sent
 * malformed (wrong type, wrong length, out of range, unknown flag, not
 * allowed for the command, unknown): the kernel refuses the request with
 * an extack message that points at the attribute, and nothing crashes.
 * Out-of-range integers fail with ERANGE (the kernel's policy code), every
 * other malformation with EINVAL. Then the checks the handlers make
 * (missing or conflicting attributes), and admin permission on every
 * change.
 */
#include <grp.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "nl_util.h"

/* One malformed attribute in an otherwise valid request. */
FIXTURE(policy)
{
	struct nlc c;
};

FIXTURE_VARIANT(policy)
{
	uint8_t cmd;
	bool dump;
	bool dev;			/* put DEV_NAME "swnic0" first */
	uint16_t type;			/* the malformed attribute */
	uint16_t len;			/* its payload length */
	uint8_t data[24];		/* its payload */
	bool nested;			/* wrap it in an SVC_MEMBERS nest */
	int err;			/* the expected -errno */
};

#define U32(v)	{ (v) & 0xff, ((v) >> 8) & 0xff, ((v) >> 16) & 0xff, \
		  ((v) >> 24) & 0xff }

FIXTURE_SETUP(policy)
{
	int ret = nlc_open(&self->c);

	if (ret == -ENOENT)
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(policy)
{
	nlc_close(&self->c);
}

/* DEV_GET */
FIXTURE_VARIANT_ADD(policy, dev_get_index_short) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .type = SWNIC_A_DEV_INDEX, .len = 2,
	.err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_get_index_long) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .type = SWNIC_A_DEV_INDEX, .len = 8,
	.err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_get_index_range) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .type = SWNIC_A_DEV_INDEX, .len = 4,
	.data = U32(64), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_get_name_no_nul) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .type = SWNIC_A_DEV_NAME, .len = 6,
	.data = "swnic0", .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_get_name_too_long) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .type = SWNIC_A_DEV_NAME, .len = 21,
	.data = "swnic0123456789abcde", .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_get_name_empty) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .type = SWNIC_A_DEV_NAME, .len = 0,
	.err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_get_state_not_allowed) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .dev = true, .type = SWNIC_A_DEV_STATE,
	.len = 4, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_get_dump_index_range) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .dump = true, .type = SWNIC_A_DEV_INDEX,
	.len = 4, .data = U32(1000), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_get_unknown_attr) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .dev = true, .type = SWNIC_A_MAX + 1,
	.len = 4, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_get_output_attr) {
	.cmd = SWNIC_NL_CMD_DEV_GET, .dev = true, .type = SWNIC_A_DEV_DOMAINS,
	.len = 4, .err = -EINVAL,
};

/* DEV_NEW */
FIXTURE_VARIANT_ADD(policy, dev_new_name_u32) {
	.cmd = SWNIC_NL_CMD_DEV_NEW, .type = SWNIC_A_DEV_NAME, .len = 4,
	.data = U32(0x41424344), .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_new_ifindex_zero) {
	.cmd = SWNIC_NL_CMD_DEV_NEW, .type = SWNIC_A_DEV_IFINDEX, .len = 4,
	.data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_new_ifindex_negative) {
	.cmd = SWNIC_NL_CMD_DEV_NEW, .type = SWNIC_A_DEV_IFINDEX, .len = 4,
	.data = U32(0x80000000u), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_new_ifindex_short) {
	.cmd = SWNIC_NL_CMD_DEV_NEW, .type = SWNIC_A_DEV_IFINDEX, .len = 1,
	.err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_new_ifname_too_long) {
	.cmd = SWNIC_NL_CMD_DEV_NEW, .type = SWNIC_A_DEV_IFNAME, .len = 20,
	.data = "abcdefghijklmnopqrs", .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_new_flags_not_allowed) {
	.cmd = SWNIC_NL_CMD_DEV_NEW, .type = SWNIC_A_FLAGS, .len = 4,
	.err = -EINVAL,
};

/* DEV_DEL */
FIXTURE_VARIANT_ADD(policy, dev_del_unknown_flag) {
	.cmd = SWNIC_NL_CMD_DEV_DEL, .dev = true, .type = SWNIC_A_FLAGS,
	.len = 4, .data = U32(1u << 5), .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_del_flags_short) {
	.cmd = SWNIC_NL_CMD_DEV_DEL, .dev = true, .type = SWNIC_A_FLAGS,
	.len = 2, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_del_index_range) {
	.cmd = SWNIC_NL_CMD_DEV_DEL, .type = SWNIC_A_DEV_INDEX, .len = 4,
	.data = U32(64), .err = -ERANGE,
};

/* DEV_SET */
FIXTURE_VARIANT_ADD(policy, dev_set_state_range) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_STATE,
	.len = 4, .data = U32(2), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_set_state_long) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_STATE,
	.len = 8, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_set_max_domains_zero) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true,
	.type = SWNIC_A_DEV_MAX_DOMAINS, .len = 4, .data = U32(0),
	.err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_set_max_domains_huge) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true,
	.type = SWNIC_A_DEV_MAX_DOMAINS, .len = 4,
	.data = U32(SWNIC_LIMIT_MAX + 1), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_set_max_mr_zero) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_MAX_MR,
	.len = 4, .data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_set_max_ep_zero) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_MAX_EP,
	.len = 4, .data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_set_max_cq_short) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_MAX_CQ,
	.len = 3, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_set_max_pinned_u32) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true,
	.type = SWNIC_A_DEV_MAX_PINNED, .len = 4, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_set_ifindex_negative) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_IFINDEX,
	.len = 4, .data = U32(0xffffffffu), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, dev_set_ifname_no_nul) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_IFNAME,
	.len = 2, .data = "lo", .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, dev_set_domains_not_allowed) {
	.cmd = SWNIC_NL_CMD_DEV_SET, .dev = true, .type = SWNIC_A_DEV_DOMAINS,
	.len = 4, .err = -EINVAL,
};

/* DOMAIN_GET, MR_GET, STAT_GET, STAT_RESET */
FIXTURE_VARIANT_ADD(policy, domain_get_id_zero) {
	.cmd = SWNIC_NL_CMD_DOMAIN_GET, .type = SWNIC_A_DOMAIN_ID, .len = 4,
	.data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, domain_get_id_short) {
	.cmd = SWNIC_NL_CMD_DOMAIN_GET, .type = SWNIC_A_DOMAIN_ID, .len = 2,
	.err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, domain_dump_id_range) {
	.cmd = SWNIC_NL_CMD_DOMAIN_GET, .dump = true,
	.type = SWNIC_A_DOMAIN_ID, .len = 4, .data = U32(0x80000000u),
	.err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, domain_dump_pid_not_allowed) {
	.cmd = SWNIC_NL_CMD_DOMAIN_GET, .dump = true,
	.type = SWNIC_A_DOMAIN_PID, .len = 4, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, mr_dump_domain_zero) {
	.cmd = SWNIC_NL_CMD_MR_GET, .dump = true, .type = SWNIC_A_DOMAIN_ID,
	.len = 4, .data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, mr_dump_key_not_allowed) {
	.cmd = SWNIC_NL_CMD_MR_GET, .dump = true, .type = SWNIC_A_MR_KEY,
	.len = 8, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, stat_get_domain_short) {
	.cmd = SWNIC_NL_CMD_STAT_GET, .type = SWNIC_A_DOMAIN_ID, .len = 1,
	.err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, stat_get_dev_name_u32) {
	.cmd = SWNIC_NL_CMD_STAT_GET, .type = SWNIC_A_DEV_NAME, .len = 4,
	.data = U32(0x41414141), .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, stat_reset_domain_zero) {
	.cmd = SWNIC_NL_CMD_STAT_RESET, .type = SWNIC_A_DOMAIN_ID, .len = 4,
	.data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, stat_reset_stats_not_allowed) {
	.cmd = SWNIC_NL_CMD_STAT_RESET, .dev = true, .type = SWNIC_A_STATS,
	.len = 0, .err = -EINVAL,
};

/* SVC_* */
FIXTURE_VARIANT_ADD(policy, svc_get_id_zero) {
	.cmd = SWNIC_NL_CMD_SVC_GET, .dev = true, .type = SWNIC_A_SVC_ID,
	.len = 4, .data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, svc_get_key_long) {
	.cmd = SWNIC_NL_CMD_SVC_GET, .dev = true, .type = SWNIC_A_SVC_AUTH_KEY,
	.len = 8, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_new_key_zero) {
	.cmd = SWNIC_NL_CMD_SVC_NEW, .dev = true, .type = SWNIC_A_SVC_AUTH_KEY,
	.len = 4, .data = U32(0), .err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, svc_new_unknown_flag) {
	.cmd = SWNIC_NL_CMD_SVC_NEW, .dev = true, .type = SWNIC_A_SVC_FLAGS,
	.len = 4, .data = U32(1u << 2), .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_new_members_not_nested) {
	.cmd = SWNIC_NL_CMD_SVC_NEW, .dev = true, .type = SWNIC_A_SVC_MEMBERS,
	.len = 2, .data = { 0xe8, 0x03 }, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_new_member_uid_short) {
	.cmd = SWNIC_NL_CMD_SVC_NEW, .dev = true, .nested = true,
	.type = SWNIC_A_MEMBER_UID, .len = 2, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_new_member_unknown) {
	.cmd = SWNIC_NL_CMD_SVC_NEW, .dev = true, .nested = true,
	.type = SWNIC_A_MEMBER_MAX + 1, .len = 4, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_new_max_domains_zero) {
	.cmd = SWNIC_NL_CMD_SVC_NEW, .dev = true,
	.type = SWNIC_A_SVC_MAX_DOMAINS, .len = 4, .data = U32(0),
	.err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, svc_new_id_not_allowed) {
	.cmd = SWNIC_NL_CMD_SVC_NEW, .dev = true, .type = SWNIC_A_SVC_ID,
	.len = 4, .data = U32(5), .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_set_unknown_flag) {
	.cmd = SWNIC_NL_CMD_SVC_SET, .dev = true, .type = SWNIC_A_SVC_FLAGS,
	.len = 4, .data = U32(0x80000000u), .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_set_member_gid_long) {
	.cmd = SWNIC_NL_CMD_SVC_SET, .dev = true, .nested = true,
	.type = SWNIC_A_MEMBER_GID, .len = 8, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_set_max_domains_huge) {
	.cmd = SWNIC_NL_CMD_SVC_SET, .dev = true,
	.type = SWNIC_A_SVC_MAX_DOMAINS, .len = 4, .data = U32(0xffffffffu),
	.err = -ERANGE,
};
FIXTURE_VARIANT_ADD(policy, svc_del_id_short) {
	.cmd = SWNIC_NL_CMD_SVC_DEL, .dev = true, .type = SWNIC_A_SVC_ID,
	.len = 3, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_del_members_not_allowed) {
	.cmd = SWNIC_NL_CMD_SVC_DEL, .dev = true, .type = SWNIC_A_SVC_MEMBERS,
	.len = 0, .err = -EINVAL,
};
FIXTURE_VARIANT_ADD(policy, svc_dump_dev_index_short) {
	.cmd = SWNIC_NL_CMD_SVC_GET, .dump = true, .type = SWNIC_A_DEV_INDEX,
	.len = 2, .err = -EINVAL,
};

/* An event-only command has no handler. */
FIXTURE_VARIANT_ADD(policy, event_cmd_is_not_a_request) {
	.cmd = SWNIC_NL_CMD_DOMAIN_NEW, .dev = true, .type = SWNIC_A_DOMAIN_ID,
	.len = 4, .data = U32(1), .err = -EOPNOTSUPP,
};

TEST_F(policy, rejected_with_extack)
{
	struct nlc_reply r = { 0 };
	struct nlattr *bad, *nest = NULL;
	struct nlmsghdr *nlh;

	nlh = nlc_msg(&self->c, variant->cmd, variant->dump ? NLM_F_DUMP : 0);
	if (variant->dev)
		mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	if (variant->nested)
		nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);
	bad = (struct nlattr *)mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put(nlh, variant->type, variant->len, variant->data);
	if (nest)
		mnl_attr_nest_end(nlh, nest);

	nlc_talk(&self->c, nlh, &r);
	ASSERT_EQ(variant->err, r.error) TH_LOG("extack: \"%s\"", r.msg);
	if (variant->err == -EOPNOTSUPP)
		return;
	EXPECT_NE('\0', r.msg[0]) TH_LOG("no extack message");
	ASSERT_TRUE(r.has_offs) TH_LOG("no attribute offset: \"%s\"", r.msg);
	EXPECT_EQ(nlc_offset(nlh, bad), r.offs) TH_LOG("\"%s\"", r.msg);
	EXPECT_EQ(0, r.nmsgs);
}

/* ---- the handlers' own checks --------------------------------------------- */

FIXTURE(handler)
{
	struct nlc c;
	struct nlc_reply r;
	struct nlmsghdr *nlh;
};

FIXTURE_SETUP(handler)
{
	int ret = nlc_open(&self->c);

	if (ret == -ENOENT)
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	ASSERT_EQ(0, ret);
	memset(&self->r, 0, sizeof(self->r));
}

FIXTURE_TEARDOWN(handler)
{
	nlc_close(&self->c);
}

TEST_F(handler, dev_new_needs_a_name)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_NEW, 0);
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	ASSERT_TRUE(self->r.has_miss);
	EXPECT_EQ(SWNIC_A_DEV_NAME, self->r.miss_type);
}

TEST_F(handler, dev_new_bad_name)
{
	static const char *const names[] = { "null", "swnic", "swnic/0",
					     "swnic 1", "swnic.." };
	struct nlattr *a;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		memset(&self->r, 0, sizeof(self->r));
		self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_NEW, 0);
		a = (struct nlattr *)mnl_nlmsg_get_payload_tail(self->nlh);
		mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, names[i]);
		ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r))
			TH_LOG("name \"%s\"", names[i]);
		EXPECT_TRUE(strstr(self->r.msg, "device name") != NULL)
			TH_LOG("\"%s\"", self->r.msg);
		EXPECT_EQ(nlc_offset(self->nlh, a), self->r.offs);
	}
}

TEST_F(handler, dev_index_and_name_conflict)
{
	struct nlattr *name;

	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_GET, 0);
	mnl_attr_put_u32(self->nlh, SWNIC_A_DEV_INDEX, 0);
	name = (struct nlattr *)mnl_nlmsg_get_payload_tail(self->nlh);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnic0");
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "not both") != NULL);
	EXPECT_EQ(nlc_offset(self->nlh, name), self->r.offs);
}

TEST_F(handler, dev_get_needs_a_device)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_GET, 0);
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "index or name") != NULL);
}

TEST_F(handler, dev_new_netdev_by_index_and_name)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_NEW, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnicpol1");
	mnl_attr_put_u32(self->nlh, SWNIC_A_DEV_IFINDEX, 1);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_IFNAME, "lo");
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "not both") != NULL);
}

TEST_F(handler, dev_new_unknown_ifindex)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_NEW, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnicpol1");
	mnl_attr_put_u32(self->nlh, SWNIC_A_DEV_IFINDEX, 0x7ffffff0);
	ASSERT_EQ(-ENODEV, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "no such netdev") != NULL);
	/* The half-made device is gone again. */
	memset(&self->r, 0, sizeof(self->r));
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_GET, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnicpol1");
	EXPECT_EQ(-ENODEV, nlc_talk(&self->c, self->nlh, &self->r));
}

TEST_F(handler, dev_set_nothing_to_change)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnic0");
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "nothing to change") != NULL);
}

TEST_F(handler, domain_get_needs_an_id)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DOMAIN_GET, 0);
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	ASSERT_TRUE(self->r.has_miss);
	EXPECT_EQ(SWNIC_A_DOMAIN_ID, self->r.miss_type);
}

TEST_F(handler, dump_of_unknown_device)
{
	struct nlattr *a;

	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_DOMAIN_GET, NLM_F_DUMP);
	a = (struct nlattr *)mnl_nlmsg_get_payload_tail(self->nlh);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnicnone");
	ASSERT_EQ(-ENODEV, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "no such device") != NULL)
		TH_LOG("\"%s\"", self->r.msg);
	/* 6.1 reports no offsets for errors found in a dump's callbacks. */
	if (self->r.has_offs)
		EXPECT_EQ(nlc_offset(self->nlh, a), self->r.offs);
}

TEST_F(handler, service_dump_of_unknown_device)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_SVC_GET, NLM_F_DUMP);
	mnl_attr_put_u32(self->nlh, SWNIC_A_DEV_INDEX, 63);
	ASSERT_EQ(-ENODEV, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "no such device") != NULL)
		TH_LOG("\"%s\"", self->r.msg);
}

TEST_F(handler, stat_device_and_domain_conflict)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_STAT_GET, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(self->nlh, SWNIC_A_DOMAIN_ID, 1);
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "not both") != NULL);
}

TEST_F(handler, stat_reset_needs_a_target)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_STAT_RESET, 0);
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_NE('\0', self->r.msg[0]);
}

TEST_F(handler, svc_new_needs_a_key)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_SVC_NEW, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnic0");
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	ASSERT_TRUE(self->r.has_miss);
	EXPECT_EQ(SWNIC_A_SVC_AUTH_KEY, self->r.miss_type);
}

TEST_F(handler, svc_set_needs_a_service)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_SVC_SET, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(self->nlh, SWNIC_A_SVC_FLAGS, 0);
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "id or auth key") != NULL);
}

TEST_F(handler, svc_too_many_members)
{
	struct nlattr *nest;
	int i;

	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_SVC_NEW, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(self->nlh, SWNIC_A_SVC_AUTH_KEY, 31337);
	nest = mnl_attr_nest_start(self->nlh, SWNIC_A_SVC_MEMBERS);
	for (i = 0; i <= SWNIC_SVC_MAX_MEMBERS; i++)
		mnl_attr_put_u32(self->nlh, SWNIC_A_MEMBER_UID, 2000 + i);
	mnl_attr_nest_end(self->nlh, nest);
	ASSERT_EQ(-EINVAL, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "too many members") != NULL);
	EXPECT_EQ(nlc_offset(self->nlh, nest), self->r.offs);
}

TEST_F(handler, svc_unknown_service)
{
	self->nlh = nlc_msg(&self->c, SWNIC_NL_CMD_SVC_DEL, 0);
	mnl_attr_put_strz(self->nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(self->nlh, SWNIC_A_SVC_ID, 0x7fffffff);
	ASSERT_EQ(-ENOENT, nlc_talk(&self->c, self->nlh, &self->r));
	EXPECT_TRUE(strstr(self->r.msg, "no service") != NULL);
}

/* ---- admin permission on every change ------------------------------------- */

/* Run @fn in a child as uid/gid 65534 without capabilities. */
static int as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Exit 0 if every change is refused with EPERM and reads still work. */
static int nobody_changes(void *arg)
{
	static const uint8_t cmds[] = {
		SWNIC_NL_CMD_DEV_NEW, SWNIC_NL_CMD_DEV_DEL,
		SWNIC_NL_CMD_DEV_SET, SWNIC_NL_CMD_STAT_RESET,
		SWNIC_NL_CMD_SVC_NEW, SWNIC_NL_CMD_SVC_DEL,
		SWNIC_NL_CMD_SVC_SET,
	};
	struct nlc_reply r;
	struct nlmsghdr *nlh;
	struct nlc *c = arg;
	unsigned int i;

	if (nlc_open(c))
		return 1;
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		memset(&r, 0, sizeof(r));
		nlh = nlc_msg(c, cmds[i], 0);
		mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
		mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, 1);
		if (nlc_talk(c, nlh, &r) != -EPERM)
			return 10 + i;
	}
	memset(&r, 0, sizeof(r));
	nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_GET, NLM_F_DUMP);
	if (nlc_talk(c, nlh, &r) || !r.nmsgs)
		return 2;
	/* The events group is for administrators. */
	if (!c->mcgrp_events ||
	    !mnl_socket_setsockopt(c->nl, NETLINK_ADD_MEMBERSHIP,
				   &c->mcgrp_events, sizeof(c->mcgrp_events)) ||
	    errno != EPERM)
		return 3;
	return 0;
}

TEST(unprivileged_changes_are_refused)
{
	struct nlc *c = malloc(sizeof(*c));
	int ret;

	ASSERT_NE(NULL, c);
	ret = as_nobody(nobody_changes, c);
	free(c);
	if (ret == 100)
		SKIP(return, "cannot switch to uid 65534");
	ASSERT_EQ(0, ret) TH_LOG("10+n: command n was not refused with EPERM");
}

TEST_HARNESS_MAIN
