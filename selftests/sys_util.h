/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sys_util.h - writing a control file (cgroupfs, procfs, sysfs) in one
 * write(), as the kernel takes them: its error is the write's; entering a
 * network namespace; reading a wire counter through the swnic tool;
 * elapsed milliseconds; a shell command's exit status.
 */
#ifndef SWNIC_SYS_UTIL_H
#define SWNIC_SYS_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Run @cmd with sh -c: its exit status, or -1 if it did not exit. */
static inline int sys_run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Milliseconds of CLOCK_MONOTONIC since @t0. */
static inline long sys_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Leave the process no fd to make (EMFILE): RLIMIT_NOFILE's soft limit at
 * the lowest free fd. @old: the limits, to restore with setrlimit().
 * Return: 0 or -errno.
 */
static inline int sys_no_fd_left(struct rlimit *old)
{
	struct rlimit lim;
	int low = fcntl(0, F_DUPFD_CLOEXEC, 0);

	if (low < 0)
		return -errno;
	close(low);
	if (getrlimit(RLIMIT_NOFILE, old))
		return -errno;
	lim = *old;
	lim.rlim_cur = low;
	return setrlimit(RLIMIT_NOFILE, &lim) ? -errno : 0;
}

/* Write @s to @path: 0 or -errno (of the open or the write). */
static inline int sys_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Move this thread into the network namespace at @path (/run/netns/NAME)
 * for good, NULL: stay. 0 or -errno.
 */
static inline int sys_enter_netns(const char *path)
{
	int fd, ret = 0;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * A wire counter (swnic -j peer show, the namespace's "*" row) of the
 * network namespace named @netns (ip netns), NULL: this one. -1: none.
 */
static inline long long sys_wire_counter(const char *netns, const char *name)
{
	long long v = -1;
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "%s%s%sswnic -j peer show | jq '.[] | select(.peer == \"*\") | "
		 ".counters.%s // 0'", netns ? "ip netns exec " : "",
		 netns ?: "", netns ? " " : "", name);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	pclose(f);
	return v;
}

/*
 * Once the caller has unshared its pid namespace (CLONE_NEWPID): fork the
 * new namespace's pid 1, with two pipes to it - @up, the child writes
 * up[1] and the caller reads up[0]; @down, the other way - each end closed
 * where it is not used. Return: fork()'s, or -1 (errno set).
 */
static inline pid_t sys_fork_pidns(int up[2], int down[2])
{
	pid_t child;

	if (pipe(up))
		return -1;
	if (pipe(down)) {
		close(up[0]);
		close(up[1]);
		return -1;
	}
	child = fork();
	if (child < 0)
		return -1;
	close(child ? up[1] : up[0]);
	close(child ? down[0] : down[1]);
	return child;
}

#endif /* SWNIC_SYS_UTIL_H */
