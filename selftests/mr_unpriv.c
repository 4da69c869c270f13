// SPDX-License-Identifier: GPL-2.0
/*
 * MRs of an unprivileged user (uid/gid 65534, no groups, no capabilities,
 * as `setpriv --reuid=65534 --regid=65534 --clear-groups` gives): pinning
 * is charged to pinned_vm and refused over RLIMIT_MEMLOCK with EPERM (and
 * counted), on-demand MRs pin nothing and are not limited, foreign auth
 * keys are refused. Run as root, each test drops privileges in its own
 * process; run unprivileged, it uses the caller's.
 */
#include <grp.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "mr_util.h"

#define LIMIT_PAGES	16

/* Does this process have CAP_IPC_LOCK (bit 14) in its effective set? */
static int has_ipc_lock(void)
{
	unsigned long long caps = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return !!(caps & (1ULL << 14));
}

FIXTURE(unpriv)
{
	int fd;
	char *mem;
	long base;
};

FIXTURE_SETUP(unpriv)
{
	struct rlimit rl = { LIMIT_PAGES * PAGE, LIMIT_PAGES * PAGE };

	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	if (geteuid() == 0) {
		ASSERT_EQ(0, setgroups(0, NULL));
		ASSERT_EQ(0, setresgid(65534, 65534, 65534));
		ASSERT_EQ(0, setresuid(65534, 65534, 65534));
	}
	if (has_ipc_lock())
		SETUP_SKIP("cannot shed CAP_IPC_LOCK");
	self->fd = mr_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s as uid %d: %s", DEV_PATH,
				      getuid(), strerror(errno));
	self->mem = map_anon(4 * LIMIT_PAGES * PAGE);
	ASSERT_NE(NULL, self->mem);
	memset(self->mem, 3, 4 * LIMIT_PAGES * PAGE);
	self->base = vm_pinned_kb();
	ASSERT_EQ(0, self->base);
}

FIXTURE_TEARDOWN(unpriv)
{
	close(self->fd);
}

TEST_F(unpriv, memlock_limit_is_eperm)
{
	struct swnic_mr_query q0, q;
	uint32_t h1, h2;

	ASSERT_EQ(0, mr_counters(self->fd, &q0));
	/* Up to the limit, in two registrations. */
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, 10 * PAGE, RW_ALL, 0, NULL,
			    &h1));
	ASSERT_EQ(0, mr_reg(self->fd, self->mem + 10 * PAGE, 6 * PAGE,
			    SWNIC_MR_ACCESS_SEND, 0, NULL, &h2));
	EXPECT_EQ(LIMIT_PAGES * 4, vm_pinned_kb());
	/* One page more is refused, and nothing stays charged. */
	EXPECT_EQ(-EPERM, mr_reg(self->fd, self->mem + 20 * PAGE, PAGE,
				 RW_ALL, 0, NULL, NULL));
	EXPECT_EQ(-EPERM, mr_reg(self->fd, self->mem, 3 * LIMIT_PAGES * PAGE,
				 RW_ALL, 0, NULL, NULL));
	EXPECT_EQ(LIMIT_PAGES * 4, vm_pinned_kb());
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	EXPECT_EQ(q0.domain.memlock_denied + 2, q.domain.memlock_denied);
	EXPECT_LE(q0.device.memlock_denied + 2, q.device.memlock_denied);
	EXPECT_EQ(LIMIT_PAGES * PAGE, q.domain.pinned_bytes);
	EXPECT_EQ(2, q.domain.mrs);

	/* On demand pins nothing: no limit applies. */
	EXPECT_EQ(0, mr_reg(self->fd, self->mem, 4 * LIMIT_PAGES * PAGE,
			    RW_ALL, SWNIC_MR_REG_ODP, NULL, NULL));
	/* Freed pins make room again. */
	ASSERT_EQ(0, mr_dereg(self->fd, h2));
	EXPECT_EQ(10 * 4, vm_pinned_kb());
	EXPECT_EQ(0, mr_reg(self->fd, self->mem + 20 * PAGE, 6 * PAGE, RW_ALL,
			    0, NULL, NULL));
	EXPECT_EQ(-EPERM, mr_reg(self->fd, self->mem, PAGE, RW_ALL, 0, NULL,
				 NULL));
	ASSERT_EQ(0, mr_dereg(self->fd, h1));
}

/* Pins of all the process's domains add up against one limit. */
TEST_F(unpriv, limit_spans_domains)
{
	int other = mr_open();

	ASSERT_LE(0, other);
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, 12 * PAGE, RW_ALL, 0, NULL,
			    NULL));
	EXPECT_EQ(-EPERM, mr_reg(other, self->mem, 5 * PAGE, RW_ALL, 0, NULL,
				 NULL));
	EXPECT_EQ(0, mr_reg(other, self->mem, 4 * PAGE, RW_ALL, 0, NULL,
			    NULL));
	close(other);
	EXPECT_EQ(12 * 4, vm_pinned_kb());
}

/* A revoked MR gives its pages back to the limit; refresh charges again. */
TEST_F(unpriv, revoked_pages_are_uncharged)
{
	uint32_t h;

	ASSERT_EQ(0, mr_reg(self->fd, self->mem, LIMIT_PAGES * PAGE, RW_ALL, 0,
			    NULL, &h));
	ASSERT_EQ(0, madvise(self->mem, PAGE, MADV_DONTNEED));
	ASSERT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
	EXPECT_EQ(0, vm_pinned_kb());
	ASSERT_EQ(0, mr_reg(self->fd, self->mem + LIMIT_PAGES * PAGE,
			    LIMIT_PAGES * PAGE, RW_ALL, 0, NULL, NULL));
	/* No room left to refresh the first one. */
	EXPECT_EQ(-EPERM, mr_refresh(self->fd, h, NULL));
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self->fd, h));
}

/*
 * A refresh right after the revocation: the revoked pins, which a worker
 * gives back, are waited for rather than counted against the limit.
 */
TEST_F(unpriv, refresh_right_after_revocation)
{
	uint32_t h, state = 0;

	for (int i = 0; i < 50; i++) {
		ASSERT_EQ(0, mr_reg(self->fd, self->mem, LIMIT_PAGES * PAGE,
				    RW_ALL, 0, NULL, &h));
		ASSERT_EQ(0, madvise(self->mem, PAGE, MADV_DONTNEED));
		ASSERT_EQ(0, mr_refresh(self->fd, h, &state))
			TH_LOG("round %d", i);
		EXPECT_EQ(SWNIC_MR_STATE_VALID, state);
		ASSERT_EQ(0, mr_dereg(self->fd, h));
	}
	EXPECT_EQ(0, vm_pinned_kb());
}

TEST_F(unpriv, foreign_auth_key_is_rejected)
{
	uint32_t ak = dom_auth_key(self->fd);
	struct swnic_mr_query q;
	uint32_t h;

	EXPECT_EQ(-EKEYREJECTED, mr_reg_full(self->fd, self->mem, PAGE, RW_ALL,
					     SWNIC_MR_REG_ODP, 0, ak + 77,
					     NULL, NULL));
	/* Its own domain's key, by name or by default, is fine. */
	if (ak)
		EXPECT_EQ(0, mr_reg_full(self->fd, self->mem, PAGE, RW_ALL,
					 SWNIC_MR_REG_ODP, 0, ak, NULL, NULL));
	ASSERT_EQ(0, mr_reg(self->fd, self->mem, PAGE, RW_ALL,
			    SWNIC_MR_REG_ODP, NULL, &h));
	ASSERT_EQ(0, mr_query(self->fd, h, &q));
	EXPECT_EQ(ak, q.auth_key);
}

TEST_HARNESS_MAIN
