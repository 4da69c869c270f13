// SPDX-License-Identifier: GPL-2.0
/*
 * The "events" multicast group: device added/changed/removed, domain
 * opened/closed (with the opener's pid, as the host numbers it, and comm),
 * MR revoked (when the pages behind it are unmapped), limit hit (domains
 * per device, MRs per domain, domains per service) - each checked against
 * what the test did. What listeners in other namespaces see:
 * test_netns.sh.
 */
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "mr_util.h"
#include "nl_util.h"
#include "sys_util.h"

#include <linux/swnic_queue.h>

#define DEV	"swnicev1"

FIXTURE(ev)
{
	struct nlc *c;			/* requests */
	struct nlc *ev;			/* subscribed to the events group */
};

FIXTURE_SETUP(ev)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	self->c = malloc(sizeof(*self->c));
	self->ev = malloc(sizeof(*self->ev));
	ASSERT_NE(NULL, self->c);
	ASSERT_NE(NULL, self->ev);
	ret = nlc_open(self->c);
	if (ret == -ENOENT)
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, nlc_open(self->ev));
	ASSERT_NE(0, self->ev->mcgrp_events);
	ASSERT_EQ(0, mnl_socket_setsockopt(self->ev->nl, NETLINK_ADD_MEMBERSHIP,
					   &self->ev->mcgrp_events,
					   sizeof(self->ev->mcgrp_events)));
	nlh = nlc_msg(self->c, SWNIC_NL_CMD_DEV_DEL, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, DEV);
	mnl_attr_put_u32(nlh, SWNIC_A_FLAGS, SWNIC_DEV_DEL_F_FORCE);
	nlc_talk(self->c, nlh, &r);
}

FIXTURE_TEARDOWN(ev)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh;

	if (self->c && self->c->nl) {
		nlh = nlc_msg(self->c, SWNIC_NL_CMD_DEV_DEL, 0);
		mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, DEV);
		mnl_attr_put_u32(nlh, SWNIC_A_FLAGS, SWNIC_DEV_DEL_F_FORCE);
		nlc_talk(self->c, nlh, &r);
		nlc_close(self->c);
	}
	if (self->ev)
		nlc_close(self->ev);
	free(self->c);
	free(self->ev);
}

/*
 * The next event with command @cmd (others are skipped), within 5 s.
 * Return: a pointer into ev->buf, valid until the next read, or NULL.
 */
static const struct nlmsghdr *next_event(struct nlc *ev, uint8_t cmd,
					 struct nlc_attrs *t)
{
	static int left;
	static const struct nlmsghdr *nlh;
	struct pollfd pfd = { .fd = mnl_socket_get_fd(ev->nl), .events = POLLIN };
	ssize_t len;

	for (;;) {
		while (nlh && mnl_nlmsg_ok(nlh, left)) {
			const struct nlmsghdr *cur = nlh;

			nlh = mnl_nlmsg_next(nlh, &left);
			if (cur->nlmsg_type == ev->family && nlc_cmd(cur) == cmd) {
				nlc_attrs(cur, t);
				return cur;
			}
		}
		if (poll(&pfd, 1, 5000) != 1)
			return NULL;
		len = mnl_socket_recvfrom(ev->nl, ev->buf, sizeof(ev->buf));
		if (len <= 0)
			return NULL;
		nlh = (const struct nlmsghdr *)ev->buf;
		left = len;
	}
}

static const char *attr_str(const struct nlc_attrs *t, int type)
{
	return t->tb[type] ? mnl_attr_get_str(t->tb[type]) : "";
}

static int dev_new(struct nlc *c, const char *name)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_NEW, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, name);
	return nlc_talk(c, nlh, &r);
}

static int dev_set_u32(struct nlc *c, const char *name, int type, uint32_t v)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_SET, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, name);
	mnl_attr_put_u32(nlh, type, v);
	return nlc_talk(c, nlh, &r);
}

static uint32_t domain_id(int fd)
{
	struct swnic_query_device q = { .size = sizeof(q) };

	return ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &q) ? 0 : q.domain_id;
}

TEST_F(ev, device_lifecycle)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh;
	struct nlc_attrs t;

	ASSERT_EQ(0, dev_new(self->c, DEV));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_DEV_NEW, &t));
	EXPECT_STREQ(DEV, attr_str(&t, SWNIC_A_DEV_NAME));
	EXPECT_EQ(SWNIC_DEV_STATE_UP, nlc_u32(&t, SWNIC_A_DEV_STATE));

	ASSERT_EQ(0, dev_set_u32(self->c, DEV, SWNIC_A_DEV_STATE,
				 SWNIC_DEV_STATE_DOWN));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_DEV_SET, &t));
	EXPECT_STREQ(DEV, attr_str(&t, SWNIC_A_DEV_NAME));
	EXPECT_EQ(SWNIC_DEV_STATE_DOWN, nlc_u32(&t, SWNIC_A_DEV_STATE));

	nlh = nlc_msg(self->c, SWNIC_NL_CMD_DEV_DEL, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, DEV);
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_DEV_DEL, &t));
	EXPECT_STREQ(DEV, attr_str(&t, SWNIC_A_DEV_NAME));
}

TEST_F(ev, domain_open_close_with_pid_and_comm)
{
	struct nlc_attrs t;
	uint32_t id;
	int fd;

	ASSERT_EQ(0, prctl(PR_SET_NAME, "nl_events_test"));
	fd = mr_open();
	ASSERT_LE(0, fd);
	id = domain_id(fd);
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_DOMAIN_NEW, &t));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	EXPECT_EQ(getpid(), nlc_u32(&t, SWNIC_A_DOMAIN_PID));
	EXPECT_EQ(getuid(), nlc_u32(&t, SWNIC_A_DOMAIN_UID));
	EXPECT_STREQ("nl_events_test", attr_str(&t, SWNIC_A_DOMAIN_COMM));
	EXPECT_STREQ("swnic0", attr_str(&t, SWNIC_A_DEV_NAME));
	close(fd);
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_DOMAIN_DEL, &t));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	EXPECT_EQ(getpid(), nlc_u32(&t, SWNIC_A_DOMAIN_PID));
}

/*
 * Listeners in init_net see the opener's pid as the host numbers it, even
 * when the opener is in a pid namespace of its own (where it is 1).
 */
TEST_F(ev, domain_event_pid_is_the_hosts)
{
	struct nlc_attrs t;
	int p[2], q[2], st;
	uint32_t id = 0;
	pid_t child;
	char byte;

	if (unshare(CLONE_NEWPID))
		SKIP(return, "no pid namespace: %s", strerror(errno));
	child = sys_fork_pidns(p, q);	/* pid 1 of the new namespace */
	ASSERT_LE(0, child);
	if (!child) {
		int fd = mr_open();

		if (fd < 0 || getpid() != 1)
			_exit(2);
		id = domain_id(fd);
		if (write(p[1], &id, sizeof(id)) != sizeof(id))
			_exit(2);
		/* Close the domain once the test has read its open event. */
		_exit(read(q[0], &byte, 1) == 0 ? 0 : 3);
	}
	ASSERT_EQ(sizeof(id), read(p[0], &id, sizeof(id)));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_DOMAIN_NEW, &t));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	EXPECT_EQ(child, nlc_u32(&t, SWNIC_A_DOMAIN_PID))
		TH_LOG("the opener's pid here, not in its namespace");
	close(q[1]);
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_DOMAIN_DEL, &t));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	EXPECT_EQ(child, nlc_u32(&t, SWNIC_A_DOMAIN_PID))
		TH_LOG("closed by its last process, in that namespace");
	close(p[0]);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("%#x", st);
}

TEST_F(ev, mr_revoked_when_unmapped)
{
	struct nlc_attrs t;
	uint32_t id, h;
	uint64_t key;
	char *buf;
	int fd;

	buf = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	fd = mr_open();
	ASSERT_LE(0, fd);
	id = domain_id(fd);
	ASSERT_EQ(0, mr_reg(fd, buf, 4 * PAGE, RW_ALL, 0, &key, &h));
	ASSERT_EQ(0, munmap(buf + PAGE, PAGE));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_MR_REVOKED, &t));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	EXPECT_EQ(h, nlc_u32(&t, SWNIC_A_MR_HANDLE));
	EXPECT_EQ(key, nlc_u64(&t, SWNIC_A_MR_KEY));
	EXPECT_EQ((uintptr_t)buf, nlc_u64(&t, SWNIC_A_MR_ADDR));
	EXPECT_EQ(4 * PAGE, nlc_u64(&t, SWNIC_A_MR_LENGTH));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, nlc_u32(&t, SWNIC_A_MR_STATE));
	EXPECT_EQ(1, nlc_u64(&t, SWNIC_A_MR_REVOCATIONS));
	close(fd);
	munmap(buf, 4 * PAGE);
}

TEST_F(ev, limits_hit)
{
	char path[32] = "/dev/" DEV;
	struct nlc_attrs t;
	uint32_t id;
	char *buf;
	int a, b;

	ASSERT_EQ(0, dev_new(self->c, DEV));
	ASSERT_EQ(0, dev_set_u32(self->c, DEV, SWNIC_A_DEV_MAX_DOMAINS, 1));
	ASSERT_EQ(0, dev_set_u32(self->c, DEV, SWNIC_A_DEV_MAX_MR, 1));
	a = open(path, O_RDWR);
	ASSERT_LE(0, a);
	id = domain_id(a);
	b = open(path, O_RDWR);
	EXPECT_EQ(-1, b);
	EXPECT_EQ(EMFILE, errno);
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_LIMIT_HIT, &t));
	EXPECT_STREQ(DEV, attr_str(&t, SWNIC_A_DEV_NAME));
	EXPECT_EQ(SWNIC_LIMIT_DEV_DOMAINS, nlc_u32(&t, SWNIC_A_LIMIT));
	EXPECT_EQ(NULL, t.tb[SWNIC_A_DOMAIN_ID]);

	buf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, mr_reg(a, buf, PAGE, RW_ALL, 0, NULL, NULL));
	EXPECT_EQ(-ENOSPC, mr_reg(a, buf + PAGE, PAGE, RW_ALL, 0, NULL, NULL));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_LIMIT_HIT, &t));
	EXPECT_EQ(SWNIC_LIMIT_DEV_MR, nlc_u32(&t, SWNIC_A_LIMIT));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	close(a);
	munmap(buf, 2 * PAGE);
}

/*
 * Any user can hit a limit in a loop: events are rate limited per device
 * (10 a second), so a loop cannot flood the listeners.
 */
TEST_F(ev, limit_hit_events_are_rate_limited)
{
	char path[32] = "/dev/" DEV;
	struct nlc_attrs t;
	int a, b, i, n = 0;

	ASSERT_EQ(0, dev_new(self->c, DEV));
	ASSERT_EQ(0, dev_set_u32(self->c, DEV, SWNIC_A_DEV_MAX_DOMAINS, 1));
	a = open(path, O_RDWR);
	ASSERT_LE(0, a);
	for (i = 0; i < 500; i++) {
		b = open(path, O_RDWR);
		ASSERT_EQ(-1, b);
	}
	while (next_event(self->ev, SWNIC_NL_CMD_LIMIT_HIT, &t))
		n++;
	TH_LOG("%d events for 500 hits", n);
	EXPECT_LE(1, n);
	EXPECT_GT(100, n);
	close(a);
}

/* The data path's limits: CQs and endpoints per domain. */
TEST_F(ev, queue_limits_hit)
{
	char path[32] = "/dev/" DEV;
	struct swnic_cq_create cq = { .size = sizeof(cq) };
	struct swnic_ep_create ep = {
		.size = sizeof(ep), .type = SWNIC_EP_RDM,
	};
	struct nlc_attrs t;
	uint32_t id;
	int a, first;

	ASSERT_EQ(0, dev_new(self->c, DEV));
	ASSERT_EQ(0, dev_set_u32(self->c, DEV, SWNIC_A_DEV_MAX_CQ, 1));
	ASSERT_EQ(0, dev_set_u32(self->c, DEV, SWNIC_A_DEV_MAX_EP, 1));
	a = open(path, O_RDWR);
	ASSERT_LE(0, a);
	id = domain_id(a);

	ASSERT_EQ(0, ioctl(a, SWNIC_IOCTL_CQ_CREATE, &cq));
	ASSERT_EQ(-1, ioctl(a, SWNIC_IOCTL_CQ_CREATE, &cq));
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_LIMIT_HIT, &t));
	EXPECT_EQ(SWNIC_LIMIT_DEV_CQ, nlc_u32(&t, SWNIC_A_LIMIT));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));

	ep.tx_cq = ep.rx_cq = cq.cq_id;
	ASSERT_EQ(0, ioctl(a, SWNIC_IOCTL_EP_CREATE, &ep));
	first = ep.fd;
	ep.port = 0;
	ASSERT_EQ(-1, ioctl(a, SWNIC_IOCTL_EP_CREATE, &ep));
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_LIMIT_HIT, &t));
	EXPECT_EQ(SWNIC_LIMIT_DEV_EP, nlc_u32(&t, SWNIC_A_LIMIT));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	close(first);
	close(cq.fd);
	close(a);
}

TEST_F(ev, service_limit_hit)
{
	struct swnic_auth_key k = { .size = sizeof(k), .auth_key = 98 };
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh;
	struct nlc_attrs t;
	int a, b;

	ASSERT_EQ(0, dev_new(self->c, DEV));
	nlh = nlc_msg(self->c, SWNIC_NL_CMD_SVC_NEW, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, DEV);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, 98);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, SWNIC_SVC_F_OPEN);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_MAX_DOMAINS, 1);
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	a = open("/dev/" DEV, O_RDWR);
	b = open("/dev/" DEV, O_RDWR);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, ioctl(a, SWNIC_IOCTL_AUTH_KEY, &k));
	k.auth_key = 98;
	EXPECT_EQ(-1, ioctl(b, SWNIC_IOCTL_AUTH_KEY, &k));
	EXPECT_EQ(EDQUOT, errno);
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_LIMIT_HIT, &t));
	EXPECT_EQ(SWNIC_LIMIT_SVC_DOMAINS, nlc_u32(&t, SWNIC_A_LIMIT));
	EXPECT_EQ(domain_id(b), nlc_u32(&t, SWNIC_A_DOMAIN_ID));
	close(a);
	close(b);
}

TEST_F(ev, service_events)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh;
	struct nlc_attrs t;
	uint32_t id;

	ASSERT_EQ(0, dev_new(self->c, DEV));
	nlh = nlc_msg(self->c, SWNIC_NL_CMD_SVC_NEW, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, DEV);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, 99);
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_SVC_NEW, &t));
	EXPECT_EQ(99, nlc_u32(&t, SWNIC_A_SVC_AUTH_KEY));
	id = nlc_u32(&t, SWNIC_A_SVC_ID);

	memset(&r, 0, sizeof(r));
	nlh = nlc_msg(self->c, SWNIC_NL_CMD_SVC_SET, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, DEV);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_ID, id);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_MAX_DOMAINS, 5);
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_SVC_SET, &t));
	EXPECT_EQ(5, nlc_u32(&t, SWNIC_A_SVC_MAX_DOMAINS));

	memset(&r, 0, sizeof(r));
	nlh = nlc_msg(self->c, SWNIC_NL_CMD_SVC_DEL, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, DEV);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_ID, id);
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	ASSERT_NE(NULL, next_event(self->ev, SWNIC_NL_CMD_SVC_DEL, &t));
	EXPECT_EQ(id, nlc_u32(&t, SWNIC_A_SVC_ID));
}

TEST_HARNESS_MAIN
