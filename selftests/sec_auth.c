// SPDX-License-Identifier: GPL-2.0
/*
 * Auth-key isolation of SWNIC_IOCTL_MR_ACCESS: the accessor's auth key is
 * its domain's (the service it joined), never one it names. A domain of
 * one job must not read another job's MR by passing that job's auth key,
 * nor name a domain of another device.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "mr_util.h"
#include "nl_util.h"

#define KEY_B	7300		/* the other job's service */
#define KEY_C	7301		/* a third job's */
#define DEV2	"swnicsec1"	/* a second device */

static int svc_new(struct nlc *c, const char *dev, uint32_t key)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_NEW, 0);
	struct nlattr *nest;

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, dev);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, 0);
	nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);
	mnl_attr_nest_end(nlh, nest);
	return nlc_talk(c, nlh, &r);
}

static void svc_del(struct nlc *c, uint32_t key)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_DEL, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	nlc_talk(c, nlh, &r);
}

static int dev_new(struct nlc *c, const char *name)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_NEW, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, name);
	return nlc_talk(c, nlh, &r);
}

static void dev_del(struct nlc *c, const char *name)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_DEL, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, name);
	mnl_attr_put_u32(nlh, SWNIC_A_FLAGS, SWNIC_DEV_DEL_F_FORCE);
	nlc_talk(c, nlh, &r);
}

static int take_key(int fd, uint32_t key)
{
	struct swnic_auth_key k = { .size = sizeof(k), .auth_key = key };

	return ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &k) ? -errno : 0;
}

FIXTURE(auth)
{
	struct nlc *c;
	int a, b;		/* job A (default key), job B (KEY_B) */
	uint32_t ak;
	char *mem;		/* B's secret */
	uint64_t key;		/* B's MR */
};

FIXTURE_SETUP(auth)
{
	int ret;

	self->a = self->b = -1;
	self->c = malloc(sizeof(*self->c));
	ASSERT_NE(NULL, self->c);
	ret = nlc_open(self->c);
	if (ret == -ENOENT) {
		free(self->c);
		self->c = NULL;
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	}
	ASSERT_EQ(0, ret);
	svc_del(self->c, KEY_B);
	ASSERT_EQ(0, svc_new(self->c, "swnic0", KEY_B));

	self->a = mr_open();
	self->b = mr_open();
	ASSERT_LE(0, self->a);
	ASSERT_LE(0, self->b);
	ASSERT_EQ(0, take_key(self->b, KEY_B));
	ASSERT_EQ(KEY_B, dom_auth_key(self->b));
	self->ak = dom_auth_key(self->a);
	ASSERT_NE(KEY_B, self->ak);

	self->mem = map_anon(PAGE);
	ASSERT_NE(NULL, self->mem);
	strcpy(self->mem, "B's secret");
	ASSERT_EQ(0, mr_reg(self->b, self->mem, PAGE,
			    SWNIC_MR_ACCESS_REMOTE_READ |
			    SWNIC_MR_ACCESS_REMOTE_WRITE, 0, &self->key, NULL));
}

FIXTURE_TEARDOWN(auth)
{
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
	if (self->mem)
		munmap(self->mem, PAGE);
	if (self->c) {
		svc_del(self->c, KEY_B);
		nlc_close(self->c);
		free(self->c);
	}
}

/* A names B's auth key: it is not A's, so the access is refused. */
TEST_F(auth, foreign_auth_key_is_rejected)
{
	uint32_t b = mr_domain_id(self->b);
	char buf[16] = "";

	EXPECT_EQ(-EKEYREJECTED,
		  mr_access(self->a, b, 0, SWNIC_MR_ACCESS_REMOTE_READ,
			    self->key, KEY_B, 0, buf, 11));
	EXPECT_STRNE("B's secret", buf);
	EXPECT_EQ(-EKEYREJECTED,
		  mr_access(self->a, b, SWNIC_MR_ACCESS_F_WRITE,
			    SWNIC_MR_ACCESS_REMOTE_WRITE, self->key, KEY_B, 0,
			    "A was here", 11));
	EXPECT_STREQ("B's secret", self->mem);
	/* Under A's own key (named or 0) B's key does not exist. */
	EXPECT_EQ(-ENOKEY, mr_access(self->a, b, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, self->key,
				     0, 0, buf, 11));
	EXPECT_EQ(-ENOKEY, mr_access(self->a, b, 0,
				     SWNIC_MR_ACCESS_REMOTE_READ, self->key,
				     self->ak, 0, buf, 11));
}

/* The same, from a process without any capability. */
TEST_F(auth, foreign_auth_key_is_rejected_unprivileged)
{
	uint32_t b = mr_domain_id(self->b);
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char buf[16] = "";
		int a, ret;

		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		a = mr_open();
		if (a < 0)
			_exit(101);
		ret = mr_access(a, b, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				self->key, KEY_B, 0, buf, 11);
		if (!strcmp(buf, "B's secret"))
			_exit(102);
		_exit(ret == -EKEYREJECTED ? 0 : 103);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 100 || WEXITSTATUS(status) == 101)
		SKIP(return, "cannot open %s as nobody", DEV_PATH);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The key's owner and its peers under the same key (0 or named) may. */
TEST_F(auth, own_auth_key_works)
{
	uint32_t b = mr_domain_id(self->b);
	char buf[16] = "";
	int peer = mr_open();

	ASSERT_LE(0, peer);
	ASSERT_EQ(0, take_key(peer, KEY_B));
	ASSERT_EQ(0, mr_access(peer, b, 0, SWNIC_MR_ACCESS_REMOTE_READ,
			       self->key, 0, 0, buf, 11));
	EXPECT_STREQ("B's secret", buf);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, mr_access(peer, b, 0, SWNIC_MR_ACCESS_REMOTE_READ,
			       self->key, KEY_B, 0, buf, 11));
	EXPECT_STREQ("B's secret", buf);
	/* Its own former key is no longer its own. */
	EXPECT_EQ(-EKEYREJECTED, mr_access(peer, b, 0,
					   SWNIC_MR_ACCESS_REMOTE_READ,
					   self->key, self->ak, 0, buf, 11));
	close(peer);
}

/*
 * A domain of another device does not see swnic0's domains, even under
 * the same auth key there.
 */
TEST_F(auth, other_device_domain_is_not_found)
{
	uint32_t b = mr_domain_id(self->b);
	char path[32] = "/dev/" DEV2;
	char buf[16] = "";
	int fd = -1, i;

	dev_del(self->c, DEV2);
	ASSERT_EQ(0, dev_new(self->c, DEV2));
	/* udev-less guest: devtmpfs makes the node, maybe a bit later. */
	for (i = 0; i < 100; i++) {
		fd = open(path, O_RDWR);
		if (fd >= 0 || errno != ENOENT)
			break;
		usleep(10000);
	}
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
	/* Even with the same auth key there. */
	ASSERT_EQ(0, svc_new(self->c, DEV2, KEY_B));
	ASSERT_EQ(0, take_key(fd, KEY_B));
	EXPECT_EQ(-ENOENT, mr_access(fd, b, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				     self->key, KEY_B, 0, buf, 11));
	EXPECT_EQ(-ENOENT, mr_access(fd, b, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				     self->key, 0, 0, buf, 11));
	EXPECT_STRNE("B's secret", buf);
	close(fd);
	dev_del(self->c, DEV2);
}

/* Registers and checks MRs of @fd while the test switches its key. */
struct reg_race {
	int fd;
	char *buf;
	size_t len;
	atomic_int stop;
	int regs;			/* registrations made */
	int stale;			/* of them, under a key left */
	int err;			/* a failure other than EBUSY, or 0 */
};

static void *reg_race_one(void *arg)
{
	struct reg_race *r = arg;

	while (!atomic_load(&r->stop) && !r->err) {
		struct swnic_mr_query q;
		uint32_t h, now;

		r->err = -mr_reg(r->fd, r->buf, r->len, RW_ALL, 0, NULL, &h);
		if (r->err)
			break;
		r->regs++;
		/* With the MR there the domain's key stays: compare. */
		r->err = -mr_query(r->fd, h, &q);
		now = dom_auth_key(r->fd);
		if (q.auth_key != now)
			r->stale++;
		if (!r->err)
			r->err = -mr_dereg(r->fd, h);
	}
	return NULL;
}

/*
 * A domain takes another auth key only while it has no MR, nor one being
 * registered: a registration reads the key it is reachable under at its
 * start and pins for long after (64 MiB here), and a key switch in that
 * while left the new MR under the key the domain had left - reachable by
 * that service's members, which the domain was no longer one of, and the
 * service deletable with it in use.
 */
TEST_F_TIMEOUT(auth, key_switch_waits_for_a_registration, 120)
{
	struct reg_race r = { .len = 64UL << 20 };
	int switched = 0, busy = 0, i;
	pthread_t t;

	svc_del(self->c, KEY_C);
	ASSERT_EQ(0, svc_new(self->c, "swnic0", KEY_C));
	r.fd = mr_open();
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, take_key(r.fd, KEY_C));
	r.buf = map_anon(r.len);
	ASSERT_NE(NULL, r.buf);
	ASSERT_EQ(0, pthread_create(&t, NULL, reg_race_one, &r));
	for (i = 0; i < 20000 && r.regs < 40; i++) {
		int ret = take_key(r.fd, i & 1 ? KEY_C : KEY_B);

		if (!ret)
			switched++;
		else if (ret == -EBUSY)
			busy++;
		else
			ASSERT_EQ(0, ret);
		usleep(100);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	TH_LOG("%d registrations, %d key switches, %d refused", r.regs,
	       switched, busy);
	EXPECT_EQ(0, r.err);
	EXPECT_LT(0, r.regs);
	EXPECT_LT(0, busy);	/* the race was run */
	EXPECT_EQ(0, r.stale) TH_LOG("%d MRs under a key the domain left",
				     r.stale);
	munmap(r.buf, r.len);
	close(r.fd);
	svc_del(self->c, KEY_C);
}

TEST_HARNESS_MAIN
