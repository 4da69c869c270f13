// SPDX-License-Identifier: GPL-2.0
/*
 * MRs in numbers: 100 000 registrations and deregistrations (the rate is
 * printed, not asserted), the per-domain max_mr limit, and a process killed
 * with 10 000 MRs leaving no pin, key or counter behind.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "mr_util.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Register and deregister @n MRs in batches; print the rates. */
static void churn(struct __test_metadata *_metadata, int fd, char *mem,
		  uint32_t n, uint32_t batch, uint32_t flags, const char *what)
{
	uint32_t *h = calloc(batch, sizeof(*h)), i, done;
	double t_reg = 0, t_dereg = 0, t0;

	ASSERT_NE(NULL, h);
	for (done = 0; done < n; done += batch) {
		t0 = now();
		for (i = 0; i < batch; i++)
			ASSERT_EQ(0, mr_reg(fd, mem + (i % 64) * PAGE, PAGE,
					    RW_ALL, flags, NULL, &h[i]));
		t_reg += now() - t0;
		t0 = now();
		for (i = 0; i < batch; i++)
			ASSERT_EQ(0, mr_dereg(fd, h[i]));
		t_dereg += now() - t0;
	}
	printf("# %u %s MRs: %.0f reg/s, %.0f dereg/s\n", n, what,
	       n / t_reg, n / t_dereg);
	fflush(stdout);
	free(h);
}

/* Each of these runs for seconds in an emulated VM. */
FIXTURE(scale)
{
	int unused;
};

FIXTURE_SETUP(scale)
{
}

FIXTURE_TEARDOWN(scale)
{
}

TEST_F_TIMEOUT(scale, hundred_thousand, 240)
{
	struct swnic_mr_query q;
	int fd = mr_open();
	char *mem = map_anon(64 * PAGE);
	long base = vm_pinned_kb();

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, mem);
	memset(mem, 1, 64 * PAGE);
	churn(_metadata, fd, mem, 50000, 10000, 0, "pinned 4 KiB");
	churn(_metadata, fd, mem, 50000, 10000, SWNIC_MR_REG_ODP,
	      "on-demand 4 KiB");
	ASSERT_EQ(0, mr_counters(fd, &q));
	EXPECT_EQ(100000, q.domain.registrations);
	EXPECT_EQ(0, q.domain.mrs);
	EXPECT_EQ(0, q.domain.pinned_bytes);
	EXPECT_EQ(base, vm_pinned_kb());
	close(fd);
}

TEST_F_TIMEOUT(scale, max_mr_is_enospc, 240)
{
	struct swnic_query_device d = { .size = sizeof(d) };
	int fd = mr_open();
	char *mem = map_anon(PAGE);
	uint32_t i, h = 0, first = 0;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &d));
	if (d.max_mr > 200000)
		SKIP(return, "max_mr %u is too many to fill here", d.max_mr);
	for (i = 0; i < d.max_mr; i++) {
		ASSERT_EQ(0, mr_reg(fd, mem, PAGE, RW_ALL, SWNIC_MR_REG_ODP,
				    NULL, &h));
		if (!i)
			first = h;
	}
	EXPECT_EQ(-ENOSPC, mr_reg(fd, mem, PAGE, RW_ALL, SWNIC_MR_REG_ODP,
				  NULL, NULL));
	EXPECT_EQ(-ENOSPC, mr_reg(fd, mem, PAGE, RW_ALL, 0, NULL, NULL));
	/* One freed, one more fits. */
	ASSERT_EQ(0, mr_dereg(fd, first));
	EXPECT_EQ(0, mr_reg(fd, mem, PAGE, RW_ALL, 0, NULL, NULL));
	/* Another domain has its own budget. */
	int other = mr_open();

	ASSERT_LE(0, other);
	EXPECT_EQ(0, mr_reg(other, mem, PAGE, RW_ALL, 0, NULL, NULL));
	close(other);
	close(fd);
}

/*
 * A child registers 10 000 MRs (pinned and on demand, some revoked), then
 * is killed. Afterwards the device's counters show nothing left.
 */
TEST_F_TIMEOUT(scale, kill_with_ten_thousand, 240)
{
	enum { N = 10000 };
	struct swnic_mr_query before, q;
	int fd = mr_open(), p[2], status;
	long report[3];
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mr_counters(fd, &before));
	ASSERT_EQ(0, before.device.mrs);
	ASSERT_EQ(0, before.device.pinned_bytes);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int cfd = mr_open();
		char *mem = map_anon(256 * PAGE);
		long base = vm_pinned_kb();
		uint32_t i;

		if (cfd < 0 || !mem)
			_exit(1);
		memset(mem, 2, 256 * PAGE);
		/* A first round, closed: pinned_vm comes back. */
		for (i = 0; i < N / 10; i++)
			if (mr_reg(cfd, mem + (i % 256) * PAGE, PAGE, RW_ALL, 0,
				   NULL, NULL))
				_exit(2);
		close(cfd);
		report[0] = base;
		report[1] = vm_pinned_kb();
		/* The real round, never cleaned up. */
		cfd = mr_open();
		for (i = 0; i < N; i++)
			if (mr_reg(cfd, mem + (i % 256) * PAGE, PAGE, RW_ALL,
				   i % 4 == 3 ? SWNIC_MR_REG_ODP : 0, NULL,
				   NULL))
				_exit(3);
		/* Revoke some of them too. */
		madvise(mem, PAGE, MADV_DONTNEED);
		report[2] = vm_pinned_kb();
		if (write(p[1], report, sizeof(report)) != sizeof(report))
			_exit(4);
		pause();
		_exit(5);
	}
	close(p[1]);
	ASSERT_EQ(sizeof(report), read(p[0], report, sizeof(report)));
	close(p[0]);
	EXPECT_EQ(report[0], report[1]) TH_LOG("VmPin after close");
	/* 7500 pinned MRs, less the revoked ones on page 0. */
	EXPECT_LT(report[0] + 7000 * 4, report[2]);

	ASSERT_EQ(0, mr_counters(fd, &q));
	EXPECT_EQ(N, q.device.mrs);
	EXPECT_LT(7000 * PAGE, q.device.pinned_bytes);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));

	ASSERT_EQ(0, mr_counters(fd, &q));
	EXPECT_EQ(0, q.device.mrs);
	EXPECT_EQ(0, q.device.pinned_bytes);
	EXPECT_EQ(before.device.registrations + N + N / 10,
		  q.device.registrations);
	close(fd);
}

TEST_HARNESS_MAIN
