/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uffd_util.h - memory a userfaultfd nobody serves holds back: the pages a
 * hostile process can give the kernel to fault on, and wait for for ever
 * if the kernel would wait.
 */
#ifndef SWNIC_UFFD_UTIL_H
#define SWNIC_UFFD_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Two pages: page 0 is there, filled with 'h'; page 1 is held back by a
 * userfaultfd nobody serves (uffd_serve() gives it, zeroed). Return: the
 * userfaultfd, with *@buf set; or -errno, with *@buf NULL if there is no
 * userfaultfd here (the test skips), else MAP_FAILED.
 */
static inline int uffd_half_held(char **buf)
{
	size_t psz = getpagesize();
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	int uffd, err;

	*buf = NULL;
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		return -errno;
	*buf = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*buf == MAP_FAILED || ioctl(uffd, UFFDIO_API, &api))
		goto err;
	memset(*buf, 'h', psz);
	reg.range.start = (uintptr_t)*buf + psz;
	reg.range.len = psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		goto err;
	return uffd;
err:
	err = -errno;
	if (*buf != MAP_FAILED)
		munmap(*buf, 2 * psz);
	*buf = MAP_FAILED;
	close(uffd);
	return err;
}

/* Page 1 of a uffd_half_held() buffer comes, zeroed. */
static inline int uffd_serve(int uffd, char *buf)
{
	size_t psz = getpagesize();
	struct uffdio_zeropage zp = {
		.range = { .start = (uintptr_t)buf + psz, .len = psz },
	};

	return ioctl(uffd, UFFDIO_ZEROPAGE, &zp);
}

#endif /* SWNIC_UFFD_UTIL_H */
