// SPDX-License-Identifier: GPL-2.0
/*
 * sec_addr6 - IPv6 peers' names against local users (uapi swnic.h,
 * SWNIC_IOCTL_ADDR6; Documentation/security.rst). Each test runs in a
 * network namespace of its own (a fresh name table) with a device bound
 * to its loopback:
 *
 * - a user without CAP_NET_ADMIN makes SWNIC_ADDR6_PER_USER names, then
 *   EDQUOT; another user still makes its own; naming an address that has
 *   a name already costs nothing; CAP_NET_ADMIN is not capped;
 * - users together make half of the table, then EDQUOT;
 * - another user's name of a peer without traffic is not another's to
 *   look up (ENOENT) nor to send to (EHOSTUNREACH, and no peer context is
 *   made for it); naming the address itself makes it the user's too.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "swnic_rings.h"
#include "sys_util.h"

#define DEV		"swnic6q"
#define DEV_PATH	"/dev/" DEV
#define UID_A		4721
#define UID_B		4722

/* Run @fn's ioctl with @euid as the effective uid (capabilities drop). */
static int ioctl_as(uid_t euid, int fd, unsigned long cmd, void *arg)
{
	int ret, err;

	if (euid && setresuid(-1, euid, -1))
		return -errno;
	ret = ioctl(fd, cmd, arg);
	err = errno;
	if (euid && setresuid(-1, 0, -1))
		abort();
	return ret ? -err : 0;
}

static int open_as(uid_t euid)
{
	int fd, err;

	if (setresuid(-1, euid, -1))
		return -errno;
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	err = errno;
	if (setresuid(-1, 0, -1))
		abort();
	return fd < 0 ? -err : fd;
}

/* fd00:<net>::<host>, a unicast address no one answers for here. */
static void addr_of(uint8_t *a, unsigned int net, unsigned int host)
{
	memset(a, 0, 16);
	a[0] = 0xfd;
	a[2] = net >> 8;
	a[3] = net;
	a[14] = host >> 8;
	a[15] = host;
}

/* The name of fd00:<net>::<host> (made if need be), as @euid. */
static int name_as(uid_t euid, int fd, unsigned int net, unsigned int host,
		   uint32_t *name)
{
	struct swnic_addr6 a = { .size = sizeof(a) };
	int ret;

	addr_of(a.addr, net, host);
	ret = ioctl_as(euid, fd, SWNIC_IOCTL_ADDR6, &a);
	if (!ret && name)
		*name = a.name;
	return ret;
}

/* LOOKUP of @name as @euid; the address in @addr. */
static int lookup_as(uid_t euid, int fd, uint32_t name, uint8_t *addr)
{
	struct swnic_addr6 a = {
		.size = sizeof(a), .flags = SWNIC_ADDR6_LOOKUP, .name = name,
	};
	int ret;

	ret = ioctl_as(euid, fd, SWNIC_IOCTL_ADDR6, &a);
	if (!ret && addr)
		memcpy(addr, a.addr, 16);
	return ret;
}

FIXTURE(addr6)
{
	int dummy;
};

FIXTURE_SETUP(addr6)
{
	if (access("/dev/swnic0", F_OK))
		SETUP_SKIP("no swnic module");
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, sys_run("ip link set lo up && swnic dev add " DEV
			     " netdev lo >/dev/null"));
}

FIXTURE_TEARDOWN(addr6)
{
	sys_run("swnic dev del " DEV " force >/dev/null 2>&1");
}

TEST_F(addr6, per_user_cap)
{
	int fa = open_as(UID_A), fb = open_as(UID_B), fr;
	uint32_t first, again, n;
	unsigned int i;

	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	for (i = 0; i < SWNIC_ADDR6_PER_USER; i++)
		ASSERT_EQ(0, name_as(UID_A, fa, 1, i + 1, &n)) {
			TH_LOG("name %u of user A", i);
		}
	/* Before the per-user cap, A went on to half of the table. */
	EXPECT_EQ(-EDQUOT, name_as(UID_A, fa, 1, i + 1, NULL));
	/* An address with a name already costs nothing. */
	ASSERT_EQ(0, name_as(UID_A, fa, 1, 1, &first));
	ASSERT_EQ(0, name_as(UID_A, fa, 1, 1, &again));
	EXPECT_EQ(first, again);
	/* Another user has its own share, and may name A's addresses. */
	EXPECT_EQ(0, name_as(UID_B, fb, 2, 1, NULL));
	ASSERT_EQ(0, name_as(UID_B, fb, 1, 1, &n));
	EXPECT_EQ(first, n);
	/* CAP_NET_ADMIN is not capped. */
	fr = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fr);
	EXPECT_EQ(0, name_as(0, fr, 3, 1, NULL));
	close(fr);
	close(fb);
	close(fa);
}

TEST_F(addr6, users_share_half)
{
	unsigned int users = SWNIC_MAX_ADDR6 / 2 / SWNIC_ADDR6_PER_USER, u, i;
	int fd[8], fr;

	ASSERT_GE(8, users + 1);
	for (u = 0; u <= users; u++) {
		fd[u] = open_as(UID_A + 10 + u);
		ASSERT_LE(0, fd[u]);
	}
	for (u = 0; u < users; u++)
		for (i = 0; i < SWNIC_ADDR6_PER_USER; i++)
			ASSERT_EQ(0, name_as(UID_A + 10 + u, fd[u], 10 + u,
					     i + 1, NULL));
	/* Half of the table is made: the next user gets none. */
	EXPECT_EQ(-EDQUOT, name_as(UID_A + 10 + users, fd[users], 99, 1,
				   NULL));
	fr = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fr);
	EXPECT_EQ(0, name_as(0, fr, 3, 1, NULL));
	close(fr);
	for (u = 0; u <= users; u++)
		close(fd[u]);
}

TEST_F(addr6, lookup_is_the_namers)
{
	int fa = open_as(UID_A), fb = open_as(UID_B), fr;
	uint8_t want[16], got[16];
	uint32_t name, nb;

	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	ASSERT_EQ(0, name_as(UID_A, fa, 7, 7, &name));
	addr_of(want, 7, 7);
	ASSERT_EQ(0, lookup_as(UID_A, fa, name, got));
	EXPECT_EQ(0, memcmp(want, got, 16));
	/* Before: any user read every name's address. */
	EXPECT_EQ(-ENOENT, lookup_as(UID_B, fb, name, got));
	/* An administrator may. */
	fr = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fr);
	EXPECT_EQ(0, lookup_as(0, fr, name, got));
	close(fr);
	/* B names the address itself: the name is B's to use too. */
	ASSERT_EQ(0, name_as(UID_B, fb, 7, 7, &nb));
	EXPECT_EQ(name, nb);
	EXPECT_EQ(0, lookup_as(UID_B, fb, name, got));
	EXPECT_EQ(0, memcmp(want, got, 16));
	/* A name no one has. */
	EXPECT_EQ(-ENOENT, lookup_as(UID_A, fa, htonl(4000), got));
	close(fb);
	close(fa);
}

TEST_F(addr6, send_needs_the_name)
{
	int fa = open_as(UID_A), fb = open_as(UID_B);
	struct swnic_cqe c = {};
	struct t_cq cq = {};
	struct t_ep ep = {}, to = { .port = 1 };
	struct swnic_sqe s;
	char byte = 'x';

	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	ASSERT_EQ(0, name_as(UID_A, fa, 8, 8, &to.addr));
	ASSERT_EQ(0, t_cq_create(fb, 64, &cq));
	ASSERT_EQ(0, t_ep_create(fb, &cq, &cq, 0, 0, 64, &ep));
	s = t_send(&byte, 1, &to, 42);
	ASSERT_EQ(0, t_ring_push(&ep.sq, &s));
	ASSERT_EQ(0, t_doorbell(&ep, NULL));
	ASSERT_EQ(0, t_cq_wait(&cq, &c, 10000));
	EXPECT_EQ(42, c.context);
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(EHOSTUNREACH, c.err);
	/* No peer context was made: the name is still not B's to see. */
	EXPECT_EQ(-ENOENT, lookup_as(UID_B, fb, to.addr, NULL));
	t_ep_destroy(&ep);
	munmap(cq.ring.map, cq.ring.size);
	close(cq.fd);
	close(fb);
	close(fa);
}

TEST_HARNESS_MAIN
