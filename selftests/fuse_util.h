/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A FUSE server that never answers a read of one of its files: "f", "g"
 * and "d", FUSE_STALL_SIZE bytes each; a read of "g" is answered (zeroes),
 * one of "d" too but only after delay_ms, a read of "f" never is, so its
 * pages can be mapped but never come in.
 * What a hostile user builds to hold back a kernel that waits for its
 * memory's I/O. Spoken straight to /dev/fuse (no libfuse); the mount needs
 * CAP_SYS_ADMIN. fuse_stall_stop() unmounts and closes the connection,
 * which fails the reads still waiting (ENOTCONN).
 */
#ifndef _SWNIC_FUSE_UTIL_H
#define _SWNIC_FUSE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define FUSE_STALL_SIZE		(1 << 20)
#define FUSE_STALL_INO		2	/* "f" */
#define FUSE_ANSWER_INO		3	/* "g" */
#define FUSE_DELAY_INO		4	/* "d" */

struct fuse_stall {
	int fd;				/* /dev/fuse */
	char dir[64];			/* the mount point */
	char path[80];			/* "f" */
	char path_ok[80];		/* "g" */
	char path_delay[80];		/* "d" */
	pthread_t thread;
	atomic_int stop;
	atomic_int reads;		/* reads of "f", left unanswered */
	atomic_int reads_ok;		/* reads of "g", answered */
	atomic_int reads_delayed;	/* reads of "d", as they came */
	atomic_int delay_ms;		/* ... and answered this late */
	atomic_int inited;
};

static void fuse_stall_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	a->blksize = 4096;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
	} else {
		a->mode = S_IFREG | 0666;
		a->size = FUSE_STALL_SIZE;
		a->blocks = FUSE_STALL_SIZE / 512;
	}
}

static void fuse_stall_reply(struct fuse_stall *s, uint64_t unique, int err,
			     const void *body, size_t len)
{
	struct fuse_out_header h = {
		.len = sizeof(h) + (err ? 0 : len),
		.error = err,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)body, .iov_len = err ? 0 : len },
	};

	if (writev(s->fd, iov, 2) < 0 && errno != ENOENT)
		perror("fuse reply");
}

static void fuse_stall_serve(struct fuse_stall *s,
			     const struct fuse_in_header *in, const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *ii = arg;
		struct fuse_init_out io = {
			.major = FUSE_KERNEL_VERSION,
			.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
				 ii->minor : FUSE_KERNEL_MINOR_VERSION,
			.max_readahead = ii->max_readahead,
			.max_background = 16,
			.congestion_threshold = 12,
			.max_write = 4096,
		};

		fuse_stall_reply(s, in->unique, 0, &io, sizeof(io));
		atomic_store(&s->inited, 1);
		break;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out e = {
			.nodeid = !strcmp(arg, "f") ? FUSE_STALL_INO :
				  !strcmp(arg, "g") ? FUSE_ANSWER_INO :
				  !strcmp(arg, "d") ? FUSE_DELAY_INO : 0,
			.generation = 1,
		};

		if (!e.nodeid) {
			fuse_stall_reply(s, in->unique, -ENOENT, NULL, 0);
			break;
		}
		fuse_stall_attr(&e.attr, e.nodeid);
		fuse_stall_reply(s, in->unique, 0, &e, sizeof(e));
		break;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out a = { 0 };

		fuse_stall_attr(&a.attr, in->nodeid);
		fuse_stall_reply(s, in->unique, 0, &a, sizeof(a));
		break;
	}
	case FUSE_OPEN: {
		struct fuse_open_out o = { .fh = 1 };

		fuse_stall_reply(s, in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = arg;
		static const char zeroes[1 << 17];

		if (in->nodeid == FUSE_DELAY_INO) {
			atomic_fetch_add(&s->reads_delayed, 1);
			usleep(atomic_load(&s->delay_ms) * 1000);
		} else if (in->nodeid == FUSE_ANSWER_INO) {
			atomic_fetch_add(&s->reads_ok, 1);
		}
		if (in->nodeid == FUSE_ANSWER_INO ||
		    in->nodeid == FUSE_DELAY_INO) {
			fuse_stall_reply(s, in->unique, 0, zeroes,
					 r->size < sizeof(zeroes) ?
					 r->size : sizeof(zeroes));
			break;
		}
		/* The point: never answered. */
		atomic_fetch_add(&s->reads, 1);
		break;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;			/* no answer expected */
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_DESTROY:
		fuse_stall_reply(s, in->unique, 0, NULL, 0);
		break;
	default:
		fuse_stall_reply(s, in->unique, -ENOSYS, NULL, 0);
		break;
	}
}

static void *fuse_stall_main(void *arg)
{
	struct fuse_stall *s = arg;
	static char buf[FUSE_MIN_READ_BUFFER + 65536];

	while (!atomic_load(&s->stop)) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		const struct fuse_in_header *in = (void *)buf;
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = read(s->fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN ||
			      errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*in))
			break;
		fuse_stall_serve(s, in, in + 1);
	}
	return NULL;
}

/*
 * Mount it on a new directory under /tmp and start serving. Return: 0,
 * -ENODEV without FUSE, or another -errno.
 */
static int fuse_stall_start(struct fuse_stall *s)
{
	char opts[128];
	int i, err;

	memset(s, 0, sizeof(*s));
	if (system("modprobe fuse 2>/dev/null")) {
		/* Built in, or missing: /dev/fuse says which. */
	}
	s->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	snprintf(s->dir, sizeof(s->dir), "/tmp/swnic-fuse-XXXXXX");
	if (!mkdtemp(s->dir)) {
		err = -errno;
		close(s->fd);
		return err;
	}
	snprintf(s->path, sizeof(s->path), "%s/f", s->dir);
	snprintf(s->path_ok, sizeof(s->path_ok), "%s/g", s->dir);
	snprintf(s->path_delay, sizeof(s->path_delay), "%s/d", s->dir);
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 s->fd);
	if (mount("swnic-stall", s->dir, "fuse", MS_NOSUID | MS_NODEV,
		  opts)) {
		err = -errno;
		rmdir(s->dir);
		close(s->fd);
		return err;
	}
	if (pthread_create(&s->thread, NULL, fuse_stall_main, s)) {
		umount2(s->dir, MNT_DETACH);
		rmdir(s->dir);
		close(s->fd);
		return -EAGAIN;
	}
	for (i = 0; i < 500 && !atomic_load(&s->inited); i++)
		usleep(10000);
	return 0;
}

static void fuse_stall_stop(struct fuse_stall *s)
{
	umount2(s->dir, MNT_DETACH);
	atomic_store(&s->stop, 1);
	pthread_join(s->thread, NULL);
	/* The connection goes: reads still waiting fail. */
	close(s->fd);
	rmdir(s->dir);
}

/*
 * Keeping a process's mmap lock: one thread reads the process's own memory
 * through /proc/self/mem at a page of the stalled file (mem_read_one():
 * the read holds the lock while it waits for the server, which never
 * answers), another then asks for the lock to write (map_one(): an mmap)
 * and waits behind it, so every new reader waits too, or fails to try.
 * Both threads must exist before: a thread's stack is an mmap too.
 */
struct mem_read {
	int fd;
	off_t at;
	volatile int done;
};

/* Read a byte of our own memory through /proc/self/mem. */
static inline void *mem_read_one(void *arg)
{
	struct mem_read *m = arg;
	char c;

	if (pread(m->fd, &c, 1, m->at) < 0)
		c = 0;
	m->done = 1;
	return NULL;
}

/* *@state: 0 wait, 1 map now, 2 mapped. */
static inline void *map_one(void *arg)
{
	volatile int *state = arg;
	void *p;

	while (*state == 0)
		usleep(1000);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	*state = 2;
	return NULL;
}

/* A process's own keeping of its mmap lock, from start to end. */
struct lock_keep {
	struct fuse_stall fs;		/* the server that never answers */
	struct mem_read mr;		/* the reader's page */
	volatile int mapped;		/* the mapper's state (map_one()) */
	pthread_t reader, mapper;
};

/*
 * Ready to keep the lock: the FUSE server started, its stalled file
 * mapped, /proc/self/mem open and the mapper waiting (both threads are
 * made before the lock is kept: lock_keep_start() makes the reader).
 * Return: 0; 1 without FUSE (the caller skips); -1 on another failure.
 */
static inline int lock_keep_prepare(struct lock_keep *k)
{
	char *stall;
	int fd;

	memset((void *)k, 0, sizeof(*k));
	if (fuse_stall_start(&k->fs))
		return 1;
	fd = open(k->fs.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	stall = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	k->mr.fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	k->mr.at = (off_t)(uintptr_t)stall;
	if (stall == MAP_FAILED || k->mr.fd < 0 ||
	    pthread_create(&k->mapper, NULL, map_one, (void *)&k->mapped))
		return -1;
	return 0;
}

/*
 * Keep the lock now: start the reader, let the mapper queue behind it.
 * Return: 1 if the lock is kept (the read waits, and the mmap behind it),
 * 0 if not, -1 if the reader could not be made.
 */
static inline int lock_keep_start(struct lock_keep *k)
{
	int i;

	if (pthread_create(&k->reader, NULL, mem_read_one, &k->mr))
		return -1;
	for (i = 0; i < 500 && !atomic_load(&k->fs.reads); i++)
		usleep(10000);
	k->mapped = 1;
	usleep(300000);
	return atomic_load(&k->fs.reads) && !k->mr.done && k->mapped == 1;
}

/* Once the FUSE mount was forced off (the read fails): both threads end. */
static inline void lock_keep_join(struct lock_keep *k)
{
	pthread_join(k->reader, NULL);
	pthread_join(k->mapper, NULL);
}

#endif /* _SWNIC_FUSE_UTIL_H */
