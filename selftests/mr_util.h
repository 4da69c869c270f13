/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the memory-registration selftests (mr_*.c): thin wrappers of
 * the MR ioctls that return 0 or -errno, the invalidation-page reader the
 * provider is meant to implement, and /proc readers.
 */
#ifndef _SWNIC_MR_UTIL_H
#define _SWNIC_MR_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/swnic.h>

#define DEV_PATH	"/dev/swnic0"
#define PAGE		4096UL
#define RW_ALL		SWNIC_MR_ACCESS_ALL

static inline int mr_open(void)
{
	return open(DEV_PATH, O_RDWR | O_CLOEXEC);
}

static inline int mr_reg_full(int fd, const void *addr, uint64_t len,
			      uint32_t access, uint32_t flags,
			      uint64_t ukey, uint32_t auth_key,
			      uint64_t *key, uint32_t *handle)
{
	struct swnic_mr_reg r = {
		.size = sizeof(r), .flags = flags, .addr = (uintptr_t)addr,
		.length = len, .access = access, .requested_key = ukey,
		.auth_key = auth_key,
	};

	int ret = ioctl(fd, SWNIC_IOCTL_MR_REG, &r) ? -errno : 0;

	if (key)
		*key = r.key;
	if (handle)
		*handle = r.handle;
	return ret;
}

static inline int mr_reg(int fd, const void *addr, uint64_t len,
			 uint32_t access, uint32_t flags, uint64_t *key,
			 uint32_t *handle)
{
	return mr_reg_full(fd, addr, len, access, flags, 0, 0, key, handle);
}

static inline int mr_dereg(int fd, uint32_t handle)
{
	struct swnic_mr_dereg d = { .size = sizeof(d), .handle = handle };

	return ioctl(fd, SWNIC_IOCTL_MR_DEREG, &d) ? -errno : 0;
}

static inline int mr_query(int fd, uint32_t handle, struct swnic_mr_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = handle;
	return ioctl(fd, SWNIC_IOCTL_MR_QUERY, q) ? -errno : 0;
}

static inline int mr_counters(int fd, struct swnic_mr_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->flags = SWNIC_MR_QUERY_COUNTERS;
	return ioctl(fd, SWNIC_IOCTL_MR_QUERY, q) ? -errno : 0;
}

/* Return: SWNIC_MR_STATE_* or -errno. */
static inline int mr_state(int fd, uint32_t handle)
{
	struct swnic_mr_query q;
	int ret = mr_query(fd, handle, &q);

	return ret ? ret : (int)q.state;
}

static inline int mr_refresh(int fd, uint32_t handle, uint32_t *state)
{
	struct swnic_mr_refresh f = { .size = sizeof(f), .handle = handle };

	if (ioctl(fd, SWNIC_IOCTL_MR_REFRESH, &f))
		return -errno;
	if (state)
		*state = f.state;
	return 0;
}

/* A kernel-side access through a key (SWNIC_IOCTL_MR_ACCESS). */
static inline int mr_access(int fd, uint32_t domain_id, uint32_t flags,
			    uint32_t access, uint64_t key, uint32_t auth_key,
			    uint64_t addr, void *buf, uint64_t len)
{
	struct swnic_mr_access a = {
		.size = sizeof(a), .flags = flags, .key = key, .addr = addr,
		.len = len, .buf = (uintptr_t)buf, .access = access,
		.auth_key = auth_key, .domain_id = domain_id,
	};

	return ioctl(fd, SWNIC_IOCTL_MR_ACCESS, &a) ? -errno : 0;
}

/* The auth key @fd's domain uses (its MRs' unless they name another). */
static inline uint32_t dom_auth_key(int fd)
{
	struct swnic_auth_key k = { .size = sizeof(k) };

	if (ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &k))
		return 0;
	return k.auth_key;
}

/* A peer's read of @len bytes at @addr (VA or offset) through @key. */
static inline int mr_peek(int fd, uint64_t key, uint64_t addr, void *buf,
			  uint64_t len)
{
	return mr_access(fd, 0, 0, SWNIC_MR_ACCESS_REMOTE_READ, key,
			 dom_auth_key(fd), addr, buf, len);
}

/* A peer's write. */
static inline int mr_poke(int fd, uint64_t key, uint64_t addr,
			  const void *buf, uint64_t len)
{
	return mr_access(fd, 0, SWNIC_MR_ACCESS_F_WRITE,
			 SWNIC_MR_ACCESS_REMOTE_WRITE, key, dom_auth_key(fd),
			 addr, (void *)buf, len);
}

static inline uint32_t mr_domain_id(int fd)
{
	struct swnic_query_device q = { .size = sizeof(q) };

	if (ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &q))
		return 0;
	return q.domain_id;
}

/* ---- the invalidation page, read as a provider would ----------------- */

struct inval_reader {
	const volatile struct swnic_inval_page *page;
	const volatile struct swnic_inval_rec *ring;
	uint32_t entries;
	uint64_t seen;
};

static inline int inval_map(int fd, struct inval_reader *r)
{
	struct swnic_inval_query q = { .size = sizeof(q) };
	void *p;

	if (ioctl(fd, SWNIC_IOCTL_INVAL_QUERY, &q))
		return -errno;
	p = mmap(NULL, q.mmap_size, PROT_READ, MAP_SHARED, fd, q.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	r->page = p;
	r->ring = (const volatile void *)((char *)p + q.ring_offset);
	r->entries = q.entries;
	r->seen = q.gen;
	return 0;
}

/*
 * Read records published since the last call into @out (at most @max).
 * Return: the number read, or -EOVERFLOW if records were lost (the reader
 * then starts over from the current generation).
 */
static inline int inval_read(struct inval_reader *r,
			     struct swnic_inval_rec *out, int max)
{
	uint64_t g = __atomic_load_n(&r->page->gen, __ATOMIC_ACQUIRE);
	uint64_t n, g2;
	int i = 0;

	if (g - r->seen >= r->entries) {
		r->seen = g;
		return -EOVERFLOW;
	}
	for (n = r->seen + 1; n <= g && i < max; n++, i++) {
		const volatile struct swnic_inval_rec *s =
			&r->ring[(n - 1) & (r->entries - 1)];

		out[i].gen = s->gen;
		out[i].addr = s->addr;
		out[i].length = s->length;
		out[i].key = s->key;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	g2 = __atomic_load_n(&r->page->gen, __ATOMIC_RELAXED);
	if (g2 - r->seen >= r->entries) {
		r->seen = g2;
		return -EOVERFLOW;
	}
	r->seen += i;
	return i;
}

/* ---- /proc ------------------------------------------------------------- */

/* Return: the VmPin of this process in KiB, or -1. */
static inline long vm_pinned_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static inline void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#endif /* _SWNIC_MR_UTIL_H */
