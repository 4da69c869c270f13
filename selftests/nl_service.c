// SPDX-License-Identifier: GPL-2.0
/*
 * Services and SWNIC_IOCTL_AUTH_KEY: a domain takes an auth key only if
 * its process may use the service (member uid, gid or supplementary gid,
 * an open service, or CAP_NET_ADMIN), the service is enabled and has room;
 * the ioctl's ABI contract; a service in use cannot be deleted.
 */
#include <grp.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "mr_util.h"
#include "nl_util.h"

#define KEY	7100		/* services this test makes: KEY.. */
#define UID	4321		/* a member uid */
#define GID	5432		/* a member gid */

static int auth_key(int fd, uint32_t key, uint32_t *out, uint32_t *svc)
{
	struct swnic_auth_key k = { .size = sizeof(k), .auth_key = key };
	int ret = ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &k) ? -errno : 0;

	if (out)
		*out = k.auth_key;
	if (svc)
		*svc = k.svc_id;
	return ret;
}

/* SVC_NEW on swnic0: @key, members, @flags, @max_domains (0: default). */
static int svc_new(struct nlc *c, uint32_t key, int uid, int gid,
		   uint32_t flags, uint32_t max_domains)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_NEW, 0);
	struct nlattr *nest;

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, flags);
	if (max_domains)
		mnl_attr_put_u32(nlh, SWNIC_A_SVC_MAX_DOMAINS, max_domains);
	nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);
	if (uid >= 0)
		mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_UID, uid);
	if (gid >= 0)
		mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_GID, gid);
	mnl_attr_nest_end(nlh, nest);
	return nlc_talk(c, nlh, &r);
}

static int svc_del(struct nlc *c, uint32_t key, struct nlc_reply *r)
{
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_DEL, 0);

	memset(r, 0, sizeof(*r));
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	return nlc_talk(c, nlh, r);
}

static int svc_set_flags(struct nlc *c, uint32_t key, uint32_t flags)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_SET, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, flags);
	return nlc_talk(c, nlh, &r);
}

/*
 * Fork a child with the given credentials (no capabilities unless @uid is
 * 0) that opens a domain and asks for @key. Return: the ioctl's result
 * (0 or an errno), 100 if the credentials could not be set.
 */
static int try_as(uid_t uid, gid_t gid, gid_t supp, uint32_t key)
{
	int status, fd, ret;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		gid_t groups[1] = { supp };

		if (setgroups(supp ? 1 : 0, groups) ||
		    setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			_exit(100);
		fd = mr_open();
		if (fd < 0)
			_exit(101);
		ret = auth_key(fd, key, NULL, NULL);
		_exit(-ret);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(svc)
{
	struct nlc *c;
};

FIXTURE_SETUP(svc)
{
	struct nlc_reply r;
	int ret, i;

	self->c = malloc(sizeof(*self->c));
	ASSERT_NE(NULL, self->c);
	ret = nlc_open(self->c);
	if (ret == -ENOENT)
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	ASSERT_EQ(0, ret);
	for (i = 0; i < 4; i++)
		svc_del(self->c, KEY + i, &r);
}

FIXTURE_TEARDOWN(svc)
{
	struct nlc_reply r;
	int i;

	if (!self->c)
		return;
	for (i = 0; i < 4; i++)
		svc_del(self->c, KEY + i, &r);
	/* The default service is closed unless the admin opens it. */
	svc_set_flags(self->c, SWNIC_AUTH_KEY_DEFAULT, 0);
	nlc_close(self->c);
	free(self->c);
}

TEST_F(svc, default_key_at_open)
{
	uint32_t key, id;
	int fd = mr_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, auth_key(fd, 0, &key, &id));
	EXPECT_EQ(SWNIC_AUTH_KEY_DEFAULT, key);
	EXPECT_EQ(SWNIC_SVC_DEFAULT_ID, id);
	close(fd);
}

TEST_F(svc, member_uid_gid_and_supplementary_gid)
{
	int ret;

	ASSERT_EQ(0, svc_new(self->c, KEY, UID, GID, 0, 0));
	ret = try_as(UID, 60000, 0, KEY);
	if (ret == 100)
		SKIP(return, "cannot change credentials");
	EXPECT_EQ(0, ret) TH_LOG("member uid: %s", strerror(ret));
	EXPECT_EQ(0, try_as(60000, GID, 0, KEY)) TH_LOG("member gid");
	EXPECT_EQ(0, try_as(60000, 60000, GID, KEY)) TH_LOG("supplementary");
	EXPECT_EQ(EPERM, try_as(60000, 60000, 0, KEY)) TH_LOG("non-member");
	EXPECT_EQ(EPERM, try_as(65534, 65534, 0, KEY)) TH_LOG("nobody");
}

TEST_F(svc, open_service_admits_anyone)
{
	ASSERT_EQ(0, svc_new(self->c, KEY, -1, -1, SWNIC_SVC_F_OPEN, 0));
	EXPECT_EQ(0, try_as(65534, 65534, 0, KEY));
}

TEST_F(svc, admin_bypasses_membership)
{
	uint32_t key, id;
	int fd;

	ASSERT_EQ(0, svc_new(self->c, KEY, UID, -1, 0, 0));
	fd = mr_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, auth_key(fd, KEY, &key, &id));
	EXPECT_EQ(KEY, key);
	EXPECT_NE(SWNIC_SVC_DEFAULT_ID, id);
	close(fd);
}

TEST_F(svc, disabled_unknown_and_full)
{
	uint32_t key;
	int a, b, c;

	ASSERT_EQ(0, svc_new(self->c, KEY, -1, -1, SWNIC_SVC_F_DISABLED, 0));
	ASSERT_EQ(0, svc_new(self->c, KEY + 1, -1, -1, 0, 1));
	a = mr_open();
	b = mr_open();
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	EXPECT_EQ(-EKEYREVOKED, auth_key(a, KEY, NULL, NULL));
	EXPECT_EQ(-ENOKEY, auth_key(a, KEY + 3, NULL, NULL));
	EXPECT_EQ(0, auth_key(a, KEY + 1, NULL, NULL));
	EXPECT_EQ(-EDQUOT, auth_key(b, KEY + 1, NULL, NULL));
	/* Leaving the service makes room. */
	EXPECT_EQ(0, auth_key(a, SWNIC_AUTH_KEY_DEFAULT, NULL, NULL));
	EXPECT_EQ(0, auth_key(b, KEY + 1, NULL, NULL));
	/* A failed switch keeps the domain's key. */
	c = mr_open();
	ASSERT_LE(0, c);
	EXPECT_EQ(-ENOKEY, auth_key(c, KEY + 3, NULL, NULL));
	EXPECT_EQ(0, auth_key(c, 0, &key, NULL));
	EXPECT_EQ(SWNIC_AUTH_KEY_DEFAULT, key);
	close(a);
	close(b);
	close(c);
}

TEST_F(svc, restricted_default_leaves_no_key)
{
	uint32_t key = 1;
	int status, fd;
	pid_t pid;

	ASSERT_EQ(0, svc_set_flags(self->c, SWNIC_AUTH_KEY_DEFAULT, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		fd = mr_open();
		if (fd < 0 || auth_key(fd, 0, &key, NULL))
			_exit(101);
		_exit(key == 0 ? 0 : 102);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 100)
		SKIP(return, "cannot change credentials");
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Root (an administrator) still gets it. */
	fd = mr_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, auth_key(fd, 0, &key, NULL));
	EXPECT_EQ(SWNIC_AUTH_KEY_DEFAULT, key);
	close(fd);
}

TEST_F(svc, key_is_fixed_once_objects_exist)
{
	char *buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint32_t h;
	int fd;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, svc_new(self->c, KEY, -1, -1, SWNIC_SVC_F_OPEN, 0));
	fd = mr_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mr_reg(fd, buf, PAGE, RW_ALL, 0, NULL, &h));
	EXPECT_EQ(-EBUSY, auth_key(fd, KEY, NULL, NULL));
	ASSERT_EQ(0, mr_dereg(fd, h));
	EXPECT_EQ(0, auth_key(fd, KEY, NULL, NULL));
	close(fd);
	munmap(buf, PAGE);
}

TEST_F(svc, only_the_opener_may_switch)
{
	int status, fd;
	pid_t pid;

	ASSERT_EQ(0, svc_new(self->c, KEY, -1, -1, SWNIC_SVC_F_OPEN, 0));
	fd = mr_open();
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(-auth_key(fd, KEY, NULL, NULL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(EACCES, WEXITSTATUS(status));
	close(fd);
}

TEST_F(svc, service_in_use_is_not_deleted)
{
	struct nlc_reply r;
	int fd;

	ASSERT_EQ(0, svc_new(self->c, KEY, -1, -1, SWNIC_SVC_F_OPEN, 0));
	fd = mr_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, auth_key(fd, KEY, NULL, NULL));
	EXPECT_EQ(-EBUSY, svc_del(self->c, KEY, &r));
	EXPECT_TRUE(strstr(r.msg, "domains use this service") != NULL);
	close(fd);
	EXPECT_EQ(0, svc_del(self->c, KEY, &r));
}

/* The ioctl's extensible-struct contract. */
TEST(auth_key_abi)
{
	struct {
		struct swnic_auth_key k;
		uint8_t tail[16];
	} big;
	int fd = mr_open();

	if (fd < 0)
		SKIP(return, "no /dev/swnic0");
	memset(&big, 0, sizeof(big));
	big.k.size = offsetof(struct swnic_auth_key, svc_id);
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &big));
	EXPECT_EQ(EINVAL, errno) TH_LOG("short");

	big.k.size = sizeof(big);
	EXPECT_EQ(0, ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &big)) TH_LOG("long, zeros");
	EXPECT_EQ(SWNIC_AUTH_KEY_DEFAULT, big.k.auth_key);

	big.k.auth_key = 0;
	big.tail[3] = 1;
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &big));
	EXPECT_EQ(E2BIG, errno) TH_LOG("long, garbage");

	memset(&big, 0, sizeof(big));
	big.k.size = sizeof(big.k);
	big.k.flags = 1;
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &big));
	EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("unknown flag");

	big.k.flags = 0;
	big.k.svc_id = 99;		/* an output: ignored on input */
	EXPECT_EQ(0, ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &big));
	EXPECT_EQ(SWNIC_SVC_DEFAULT_ID, big.k.svc_id);
	close(fd);
}

TEST(auth_key_feature_bit)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	int fd = mr_open();

	if (fd < 0)
		SKIP(return, "no /dev/swnic0");
	ASSERT_EQ(0, ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_AUTH_KEY);
	close(fd);
}

TEST_HARNESS_MAIN
