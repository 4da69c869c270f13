// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of the character device: open/close, SWNIC_IOCTL_QUERY_DEVICE
 * and the extensible-struct contract every ioctl shares (short, exact,
 * long-with-zeros, long-with-garbage, reserved, unknown flags, unknown
 * command, bad pointer).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/swnic.h>

#include "kselftest_harness.h"

#define DEV_PATH "/dev/swnic0"

/* A query struct followed by bytes a newer user space might send. */
struct query_long {
	struct swnic_query_device q;
	uint8_t tail[64];
};

static int query(int fd, void *buf, uint32_t size)
{
	memcpy(buf, &size, sizeof(size));
	return ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, buf);
}

FIXTURE(dev)
{
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", DEV_PATH, strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(chardev_is_world_accessible)
{
	struct stat st;

	ASSERT_EQ(0, stat(DEV_PATH, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666, st.st_mode & 0777);
}

TEST_F(dev, query_exact)
{
	struct swnic_query_device q = {};

	ASSERT_EQ(0, query(self->fd, &q, sizeof(q)));
	EXPECT_EQ(sizeof(q), q.size);
	EXPECT_STREQ("swnic0", (char *)q.name);
	EXPECT_TRUE(q.features & SWNIC_FEAT_QUERY);
	EXPECT_EQ((uint32_t)getpagesize(), q.page_size);
	EXPECT_EQ(0, q.ifindex);
	EXPECT_LT(0, q.max_mr);
	EXPECT_LT(0, q.max_cq);
	EXPECT_LT(0, q.max_ep);
	EXPECT_LT(0, q.max_eq);
	EXPECT_LT(0, q.max_cntr);
	EXPECT_LT(0, q.max_cq_entries);
	EXPECT_LT(0, q.max_iov);
	EXPECT_EQ(8, q.mr_key_size);
	EXPECT_EQ(8, q.cq_data_size);
	EXPECT_LT(0, q.max_msg_size);
	EXPECT_LE(q.max_msg_size, q.max_mr_size);
	EXPECT_EQ(0, q.__reserved);
}

TEST_F(dev, query_short_is_einval)
{
	struct swnic_query_device q = {};
	uint32_t sizes[] = { 0, 4, 8, offsetof(struct swnic_query_device, max_pinned) };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&q, 0xa5, sizeof(q));
		ASSERT_EQ(-1, query(self->fd, &q, sizes[i]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("size %u", sizes[i]);
		/* Nothing was written back. */
		EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, q.features);
	}
}

TEST_F(dev, query_long_with_zeros)
{
	struct query_long l = {};

	ASSERT_EQ(0, query(self->fd, &l, sizeof(l)));
	EXPECT_STREQ("swnic0", (char *)l.q.name);
	/* The kernel writes back only what it knows; the tail is left alone. */
	for (size_t i = 0; i < sizeof(l.tail); i++)
		ASSERT_EQ(0, l.tail[i]);
}

TEST_F(dev, query_long_with_garbage_is_e2big)
{
	struct query_long l = {};

	l.tail[sizeof(l.tail) - 1] = 1;
	ASSERT_EQ(-1, query(self->fd, &l, sizeof(l)));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(0, l.q.name[0]);
}

TEST_F(dev, query_reserved_is_einval)
{
	struct swnic_query_device q = { .__reserved = 1 };

	ASSERT_EQ(-1, query(self->fd, &q, sizeof(q)));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, query_unknown_flags_is_eopnotsupp)
{
	for (int bit = 0; bit < 32; bit++) {
		struct swnic_query_device q = { .flags = 1U << bit };

		ASSERT_EQ(-1, query(self->fd, &q, sizeof(q)));
		EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("flag bit %d", bit);
	}
}

TEST_F(dev, query_bad_pointer_is_efault)
{
	ASSERT_EQ(-1, ioctl(self->fd, SWNIC_IOCTL_QUERY_DEVICE, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, SWNIC_IOCTL_QUERY_DEVICE, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, unknown_commands_are_enotty)
{
	struct query_long l = {};
	unsigned long cmds[] = {
		_IO(SWNIC_TYPE, SWNIC_CMD_LAST),
		_IO(SWNIC_TYPE, SWNIC_CMD_BASE - 1),
		_IO(SWNIC_TYPE, 0),
		_IO(SWNIC_TYPE, 0xff),
		_IO(SWNIC_TYPE + 1, SWNIC_CMD_QUERY_DEVICE),
		_IOWR(SWNIC_TYPE, SWNIC_CMD_QUERY_DEVICE, struct swnic_query_device),
		TCGETS,
	};

	l.q.size = sizeof(l.q);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ASSERT_EQ(-1, ioctl(self->fd, cmds[i], &l));
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd %#lx", cmds[i]);
	}
}

TEST_F(dev, each_open_is_its_own_domain)
{
	struct swnic_query_device a = {}, b = {};
	int fd2 = open(DEV_PATH, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, query(self->fd, &a, sizeof(a)));
	ASSERT_EQ(0, query(fd2, &b, sizeof(b)));
	EXPECT_NE(a.domain_id, b.domain_id);
	EXPECT_EQ(a.dev_index, b.dev_index);
	close(fd2);
}

TEST_F(dev, not_seekable)
{
	ASSERT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
}

TEST(many_opens_and_closes)
{
	/* Opening and closing must not leak: 2000 domains come and go. */
	for (int i = 0; i < 2000; i++) {
		int fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd) TH_LOG("open #%d: %s", i, strerror(errno));
		ASSERT_EQ(0, close(fd));
	}
}

TEST(missing_device_is_enoent)
{
	ASSERT_EQ(-1, open("/dev/swnic63", O_RDWR));
	EXPECT_EQ(ENOENT, errno);
}

TEST_HARNESS_MAIN
