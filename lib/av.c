// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address vectors (fi_av(3)).
 *
 * An swnic address is an IPv4 address and a port (struct sockaddr_in, or
 * "fi_swnic://A.B.C.D:PORT" with FI_ADDR_STR), packed here into a 48-bit
 * key: ip << 16 | port.
 *
 *  - FI_AV_MAP: the fi_addr_t is that key, so a send decodes its target
 *    without a lookup (the kernel SQE carries ip and port);
 *  - FI_AV_TABLE: the fi_addr_t is the index of the entry, the lowest free
 *    one, in insertion order.
 * Both keep the entries in one array and a hash of key -> entry, used for
 * MAP lookups, duplicate MAP inserts (reference counted) and, with the data
 * path, for turning a completion's source into its fi_addr_t or its
 * FI_AV_USER_ID identifier.
 *
 * FI_AV_AUTH_KEY domains (libfabric 2.x): fi_av_insert_auth_key keeps up
 * to SWNIC_EP_AUTH_KEYS_MAX keys; its handle is SWNIC_AV_AUTH_HANDLE | slot.
 * An address inserted with FI_AUTH_KEY carries slot + 1 in bits 48..55 of
 * its entry's key (so of a MAP fi_addr_t); 0 is no key: the domain's.
 * Endpoints take the AV's keys when enabled (ep.c); the kernel decides
 * whether they may and whether a peer holds the key a send names.
 *
 * Named AVs (FI_SHARED_AV, SWNIC_FEAT_SHARED_AV): the kernel holds a
 * table of count entries under the name (SWNIC_IOCTL_AV_OPEN) that every
 * process with the AV maps read-only. The creator keeps its entries here
 * as for any AV, preallocated to count entries, and writes each change to
 * the kernel's table (SWNIC_IOCTL_AV_WRITE) at the entry's index. An
 * opener (FI_READ) inserts nothing: before each lookup it copies the
 * table again if its seqcount moved, and rebuilds its entries from it, so
 * a TABLE index or a MAP address means the same in every process.
 *
 * AV changes are control operations: always under the AV's mutex.
 * FI_EVENT makes inserts report to the bound EQ (errors with the index of
 * the failed address in data, then FI_AV_COMPLETE with the count).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ep.h"
#include "swnic.h"

#define SWNIC_AV_DEF_COUNT	64
#define SWNIC_AV_SHARED_DEF_COUNT	1024	/* a named AV's, count 0 */
#define SWNIC_AV_KEY_MASK	((1ULL << 48) - 1)
#define SWNIC_AV_KSLOT_SHIFT	48
#define SWNIC_AV_ENTRY_MASK	((1ULL << 56) - 1)	/* key and kslot */
#define SWNIC_AV_AUTH_HANDLE	(1ULL << 62)
/* rx_ctx_bits: the bits above a MAP address's key and kslot */
#define SWNIC_AV_RX_BITS_MAX	6
#define SWNIC_AV_HASH_EMPTY	0
#define SWNIC_AV_HASH_DEAD	UINT32_MAX

struct swnic_av_entry {
	/* kslot << 48 | ip << 16 | port, host order */
	uint64_t key;
	fi_addr_t user_id;		/* FI_AV_USER_ID, else FI_ADDR_NOTAVAIL */
	uint32_t refs;			/* 0: slot free */
};

struct swnic_av {
	struct fid_av av_fid;
	struct swnic_domain *domain;
	enum fi_av_type type;
	uint32_t addr_format;		/* the domain's */
	uint64_t flags;			/* fi_av_attr.flags */
	/*
	 * FI_AV_USER_ID opened with API 1.20 or later: ids come from
	 * fi_av_set_user_id(), FI_ADDR_NOTAVAIL until then. Before 1.20 the
	 * ids are in fi_addr at every insert.
	 */
	bool ids_later;
	int rx_ctx_bits;		/* fi_rx_addr's index bits (top of fi_addr) */
	pthread_mutex_t lock;		/* protects everything below */
	struct swnic_av_entry *entries;
	size_t nentries;		/* array length */
	size_t used;			/* slots in use */
	size_t lowest_free;		/* no free slot below this */
	uint32_t *hash;			/* entry index + 1, 0 empty, DEAD */
	size_t hash_size;		/* power of two, > 2 * used */
	struct swnic_eq *eq;		/* FI_EVENT */
	atomic_uint binds;		/* endpoints using the AV */
	/* FI_AV_AUTH_KEY: keys, only ever added (nkeys atomic for MAP) */
	uint32_t auth_keys[SWNIC_EP_AUTH_KEYS_MAX];
	atomic_uint nkeys;
	/* FI_AV_USER_ID: the keys' ids (fi_av_set_user_id with FI_AUTH_KEY) */
	fi_addr_t key_user_id[SWNIC_EP_AUTH_KEYS_MAX];
	/* Named AVs: the kernel's table (kfd -1 for a private AV) */
	int kfd;
	bool reader;			/* FI_READ: an opener, never writes */
	const struct swnic_av_table *tab;	/* mapped read-only */
	size_t map_size;
	uint64_t *snap;			/* reader: the entries last copied */
	uint64_t seen_seq;		/* reader: tab->seq they were copied at */
	bool synced;
};

#define swnic_av(f) swnic_container_of(f, struct swnic_av, av_fid)

static uint64_t swnic_av_key(const struct sockaddr_in *sin)
{
	return ((uint64_t)ntohl(sin->sin_addr.s_addr) << 16) |
	       ntohs(sin->sin_port);
}

static void swnic_av_key_addr(uint64_t key, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl((uint32_t)(key >> 16));
	sin->sin_port = htons((uint16_t)key);
}

static size_t swnic_av_hash_slot(uint64_t key, size_t size)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 32;
	return (size_t)key & (size - 1);
}

/* The entry index of @key, or -1. */
static ssize_t swnic_av_find(const struct swnic_av *av, uint64_t key)
{
	size_t i, slot;
	uint32_t v;

	if (!av->hash_size)
		return -1;
	slot = swnic_av_hash_slot(key, av->hash_size);
	for (i = 0; i < av->hash_size; i++) {
		v = av->hash[(slot + i) & (av->hash_size - 1)];
		if (v == SWNIC_AV_HASH_EMPTY)
			return -1;
		if (v != SWNIC_AV_HASH_DEAD && av->entries[v - 1].key == key &&
		    av->entries[v - 1].refs)
			return v - 1;
	}
	return -1;
}

static void swnic_av_hash_put(struct swnic_av *av, uint64_t key, size_t idx)
{
	size_t slot = swnic_av_hash_slot(key, av->hash_size);
	uint32_t *v;

	for (;; slot = (slot + 1) & (av->hash_size - 1)) {
		v = &av->hash[slot];
		if (*v == SWNIC_AV_HASH_EMPTY || *v == SWNIC_AV_HASH_DEAD) {
			*v = (uint32_t)idx + 1;
			return;
		}
	}
}

static void swnic_av_hash_del(struct swnic_av *av, uint64_t key, size_t idx)
{
	size_t i, slot = swnic_av_hash_slot(key, av->hash_size);
	uint32_t *v;

	for (i = 0; i < av->hash_size; i++) {
		v = &av->hash[(slot + i) & (av->hash_size - 1)];
		if (*v == SWNIC_AV_HASH_EMPTY)
			return;
		if (*v == idx + 1) {
			*v = SWNIC_AV_HASH_DEAD;
			return;
		}
	}
}

/* Make room for one more entry (array and hash). */
static int swnic_av_grow(struct swnic_av *av)
{
	struct swnic_av_entry *entries;
	uint32_t *hash, *old = av->hash;
	size_t n, i, old_size = av->hash_size;

	if (av->lowest_free >= av->nentries) {
		if (av->kfd >= 0)	/* a named AV has its count, no more */
			return -FI_ENOSPC;
		n = av->nentries ? av->nentries * 2 : SWNIC_AV_DEF_COUNT;
		if (n >= SWNIC_AV_HASH_DEAD)
			return -FI_ENOSPC;
		entries = realloc(av->entries, n * sizeof(*entries));
		if (!entries)
			return -FI_ENOMEM;
		memset(entries + av->nentries, 0,
		       (n - av->nentries) * sizeof(*entries));
		av->entries = entries;
		av->nentries = n;
	}
	if (av->hash_size > 2 * (av->used + 1))
		return 0;
	n = av->hash_size ? av->hash_size * 2 : 2 * SWNIC_AV_DEF_COUNT;
	hash = calloc(n, sizeof(*hash));
	if (!hash)
		return -FI_ENOMEM;
	av->hash = hash;
	av->hash_size = n;
	for (i = 0; i < old_size; i++)
		if (old[i] != SWNIC_AV_HASH_EMPTY && old[i] != SWNIC_AV_HASH_DEAD)
			swnic_av_hash_put(av, av->entries[old[i] - 1].key,
					  old[i] - 1);
	free(old);
	return 0;
}

static fi_addr_t swnic_av_fi_addr(const struct swnic_av *av, size_t idx)
{
	return av->type == FI_AV_MAP ? av->entries[idx].key : idx;
}

/* The entry of @fi_addr, or -1 if it names none. */
static ssize_t swnic_av_entry_of(const struct swnic_av *av, fi_addr_t fi_addr)
{
	if (av->type == FI_AV_MAP)
		return fi_addr & ~SWNIC_AV_ENTRY_MASK ? -1 :
		       swnic_av_find(av, fi_addr);
	if (fi_addr >= av->nentries || !av->entries[fi_addr].refs)
		return -1;
	return (ssize_t)fi_addr;
}

/* Named AVs: write entry @idx (0: empty) to the kernel's table. */
static int swnic_av_publish(struct swnic_av *av, size_t idx, uint64_t val)
{
	struct swnic_av_write w = {
		.size = sizeof(w),
		.first = (uint32_t)idx,
		.n = 1,
		.entries = (uintptr_t)&val,
	};

	if (av->kfd < 0)
		return 0;
	if (val)
		val = (val & SWNIC_AV_KEY_MASK) | SWNIC_AV_ENTRY_VALID;
	if (ioctl(av->kfd, SWNIC_IOCTL_AV_WRITE, &w)) {
		SWNIC_WARN(FI_LOG_AV, "AV_WRITE: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * An opener's view: copy the kernel's table again if the creator changed
 * it since the last copy, and rebuild the entries and hash from it. The
 * caller holds the lock. A creator that keeps writing may make the copy
 * retry; after a bounded number of tries the last good copy stays.
 */
static void swnic_av_sync(struct swnic_av *av)
{
	const uint64_t *ent;
	uint64_t s1, s2;
	size_t i, n;
	int tries;

	if (!av->reader)
		return;
	ent = (const uint64_t *)((const char *)av->tab +
				 av->tab->entries_offset);
	n = av->nentries;
	for (tries = 0; tries < 1000; tries++) {
		s1 = __atomic_load_n(&av->tab->seq, __ATOMIC_ACQUIRE);
		if (av->synced && s1 == av->seen_seq)
			return;
		if (s1 & 1) {
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++)
			av->snap[i] = __atomic_load_n(&ent[i],
						      __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&av->tab->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			break;
	}
	if (tries == 1000)
		return;
	memset(av->entries, 0, n * sizeof(*av->entries));
	memset(av->hash, 0, av->hash_size * sizeof(*av->hash));
	av->used = 0;
	av->lowest_free = n;
	for (i = 0; i < n; i++) {
		if (!(av->snap[i] & SWNIC_AV_ENTRY_VALID)) {
			if (i < av->lowest_free)
				av->lowest_free = i;
			continue;
		}
		av->entries[i].key = av->snap[i] & SWNIC_AV_KEY_MASK;
		av->entries[i].user_id = FI_ADDR_NOTAVAIL;
		av->entries[i].refs = 1;
		av->used++;
		swnic_av_hash_put(av, av->entries[i].key, i);
	}
	av->seen_seq = s1;
	av->synced = true;
}

/* Can the domain's device reach @sin? */
static int swnic_av_check_addr(const struct swnic_av *av,
			       const struct sockaddr_in *sin)
{
	const struct swnic_dev *dev = &av->domain->dev;

	if (sin->sin_addr.s_addr == htonl(INADDR_ANY))
		return -FI_EADDRNOTAVAIL;
	if (!dev->attr.ifindex &&
	    sin->sin_addr.s_addr != dev->addr.sin_addr.s_addr)
		return -FI_EHOSTUNREACH;
	return 0;
}

/* Insert one address; the caller holds the lock. */
static int swnic_av_insert_one(struct swnic_av *av,
			       const struct sockaddr_in *sin, uint64_t kslot,
			       fi_addr_t user_id, fi_addr_t *fi_addr)
{
	uint64_t key = swnic_av_key(sin) | kslot << SWNIC_AV_KSLOT_SHIFT;
	struct swnic_av_entry *e;
	ssize_t idx;
	int ret;

	ret = swnic_av_check_addr(av, sin);
	if (ret)
		return ret;
	if (av->type == FI_AV_MAP) {
		idx = swnic_av_find(av, key);
		if (idx >= 0) {
			av->entries[idx].refs++;
			av->entries[idx].user_id = user_id;
			*fi_addr = key;
			return 0;
		}
	}
	ret = swnic_av_grow(av);
	if (ret)
		return ret;
	idx = (ssize_t)av->lowest_free;
	ret = swnic_av_publish(av, (size_t)idx, key);
	if (ret)
		return ret;
	e = &av->entries[idx];
	e->key = key;
	e->user_id = user_id;
	e->refs = 1;
	av->used++;
	while (av->lowest_free < av->nentries &&
	       av->entries[av->lowest_free].refs)
		av->lowest_free++;
	swnic_av_hash_put(av, key, (size_t)idx);
	*fi_addr = swnic_av_fi_addr(av, (size_t)idx);
	return 0;
}

#if SWNIC_FI_HAVE_2
/*
 * The key slot + 1 of auth key handle @h (FI_AUTH_KEY inserts), or 0 if
 * it names no key of @av. The caller holds the lock.
 */
static uint64_t swnic_av_handle_kslot(struct swnic_av *av, fi_addr_t h)
{
	if ((h & ~(fi_addr_t)(SWNIC_EP_AUTH_KEYS_MAX - 1)) !=
	    SWNIC_AV_AUTH_HANDLE)
		return 0;
	h &= SWNIC_EP_AUTH_KEYS_MAX - 1;
	return h < atomic_load(&av->nkeys) ? h + 1 : 0;
}
#endif

static int swnic_av_check_flags(struct swnic_av *av, uint64_t flags,
				fi_addr_t *fi_addr, void *context)
{
	if (av->reader) {
		SWNIC_WARN(FI_LOG_AV, "AV opened read-only (FI_READ)\n");
		return -FI_EACCES;
	}
#if SWNIC_FI_HAVE_2
	if (flags & FI_AUTH_KEY) {
		if (!av->domain->av_auth_key) {
			SWNIC_WARN(FI_LOG_AV,
				   "FI_AUTH_KEY: the domain is not FI_AV_AUTH_KEY\n");
			return -FI_EINVAL;
		}
		if (!fi_addr || (flags & FI_AV_USER_ID))
			return -FI_EINVAL;
		flags &= ~FI_AUTH_KEY;
	}
#endif
	if (flags & ~(FI_MORE | FI_SYNC_ERR | FI_AV_USER_ID))
		return -FI_EBADFLAGS;
	/* FI_SYNC_ERR: @context is the array of errors (fi_av(3)). */
	if ((flags & FI_SYNC_ERR) && ((av->flags & FI_EVENT) || !context))
		return -FI_EINVAL;
	if ((flags & FI_AV_USER_ID) && av->ids_later) {
		SWNIC_WARN(FI_LOG_AV,
			   "FI_AV_USER_ID per insert: this AV takes its ids from fi_av_set_user_id\n");
		return -FI_EINVAL;
	}
	if ((flags & FI_AV_USER_ID) ||
	    ((av->flags & FI_AV_USER_ID) && !av->ids_later)) {
		if (!fi_addr) {
			SWNIC_WARN(FI_LOG_AV,
				   "FI_AV_USER_ID needs the ids in fi_addr\n");
			return -FI_EINVAL;
		}
	}
	if ((av->flags & FI_EVENT) && !av->eq)
		return -FI_ENOEQ;
	return 0;
}

/*
 * Insert @count addresses from @sins (NULL entries failed to parse, their
 * error in @errs). Reports per address like fi_av_insert(3).
 */
static int swnic_av_insert_addrs(struct swnic_av *av,
				 const struct sockaddr_in *sins,
				 const int *errs, size_t count,
				 fi_addr_t *fi_addr, uint64_t flags,
				 void *context)
{
	bool user_id = (flags & FI_AV_USER_ID) ||
		       ((av->flags & FI_AV_USER_ID) && !av->ids_later);
	int *sync_err = flags & FI_SYNC_ERR ? context : NULL;
	fi_addr_t out, id;
	size_t i, done = 0;
	uint64_t kslot = 0;
	int ret;

	pthread_mutex_lock(&av->lock);
	for (i = 0; i < count; i++) {
		id = user_id ? fi_addr[i] : FI_ADDR_NOTAVAIL;
		ret = errs[i];
#if SWNIC_FI_HAVE_2
		if (!ret && (flags & FI_AUTH_KEY)) {
			/* fi_addr[i] names the key the address goes with. */
			kslot = swnic_av_handle_kslot(av, fi_addr[i]);
			if (!kslot)
				ret = -FI_EINVAL;
		}
#endif
		if (!ret)
			ret = swnic_av_insert_one(av, &sins[i], kslot, id, &out);
		if (fi_addr)
			fi_addr[i] = ret ? FI_ADDR_NOTAVAIL : out;
		if (sync_err)
			sync_err[i] = -ret;
		if (!ret)
			done++;
		else if (av->flags & FI_EVENT)
			swnic_eq_report_err(av->eq, &av->av_fid.fid, context, i,
					    -ret, 0);
		else
			SWNIC_INFO(FI_LOG_AV, "address %zu: %s\n", i,
				   fi_strerror(-ret));
	}
	pthread_mutex_unlock(&av->lock);

	if (av->flags & FI_EVENT) {
		swnic_eq_report(av->eq, FI_AV_COMPLETE, &av->av_fid.fid, context,
				done);
		return 0;
	}
	return (int)done;
}

static int swnic_av_insert(struct fid_av *av_fid, const void *addr,
			   size_t count, fi_addr_t *fi_addr, uint64_t flags,
			   void *context)
{
	struct swnic_av *av = swnic_av(av_fid);
	struct sockaddr_in *sins;
	const char *const *strs = addr;
	size_t i, len;
	int *errs, ret;

	ret = swnic_av_check_flags(av, flags, fi_addr, context);
	if (ret)
		return ret;
	if (count && !addr)
		return -FI_EINVAL;
	sins = calloc(count ? count : 1, sizeof(*sins));
	errs = calloc(count ? count : 1, sizeof(*errs));
	if (!sins || !errs) {
		ret = -FI_ENOMEM;
		goto out;
	}
	len = swnic_addr_len(av->addr_format);
	for (i = 0; i < count; i++) {
		if (av->addr_format == FI_ADDR_STR)
			errs[i] = strs[i] ? swnic_addr_parse_str(strs[i],
								 &sins[i]) :
					    -FI_EINVAL;
		else
			errs[i] = swnic_addr_read(av->addr_format,
						  (const char *)addr + i * len,
						  len, &sins[i]);
	}
	ret = swnic_av_insert_addrs(av, sins, errs, count, fi_addr, flags,
				    context);
out:
	free(sins);
	free(errs);
	return ret;
}

/* node/service to an address, as fi_getinfo and fi_av_insertsvc read them. */
static int swnic_av_resolve(struct swnic_av *av, const char *node,
			    const char *service, struct sockaddr_in *sin)
{
	uint16_t port;

	if (!node)
		return -FI_EINVAL;
	if (!swnic_addr_parse_str(node, sin))
		return service ? -FI_EINVAL : 0;
	if (!service || swnic_addr_parse_service(service, &port))
		return -FI_EINVAL;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (swnic_addr_is_local_host(node)) {
		sin->sin_addr = av->domain->dev.addr.sin_addr;
		return 0;
	}
	return swnic_addr_resolve_node(node, false,
				       av->domain->dev.attr.ifindex != 0,
				       &sin->sin_addr) ? -FI_EADDRNOTAVAIL : 0;
}

static int swnic_av_insertsvc(struct fid_av *av_fid, const char *node,
			      const char *service, fi_addr_t *fi_addr,
			      uint64_t flags, void *context)
{
	struct swnic_av *av = swnic_av(av_fid);
	struct sockaddr_in sin;
	int err, ret;

	ret = swnic_av_check_flags(av, flags, fi_addr, context);
	if (ret)
		return ret;
	err = swnic_av_resolve(av, node, service, &sin);
	return swnic_av_insert_addrs(av, &sin, &err, 1, fi_addr, flags,
				     context);
}

/* The i-th node of a symmetric range: dotted quads and "name<N>" count up. */
static int swnic_av_sym_node(const char *node, size_t i, char *buf,
			     size_t len)
{
	struct in_addr ip;
	struct in6_addr ip6;
	size_t n = strlen(node), digits = 0;
	unsigned long base;
	uint32_t low;

	if (inet_pton(AF_INET, node, &ip) == 1) {
		ip.s_addr = htonl(ntohl(ip.s_addr) + (uint32_t)i);
		return inet_ntop(AF_INET, &ip, buf, (socklen_t)len) ? 0 :
		       -FI_EINVAL;
	}
	/* IPv6: counted up in its last 32 bits. */
	if (inet_pton(AF_INET6, node, &ip6) == 1) {
		memcpy(&low, &ip6.s6_addr[12], 4);
		low = htonl(ntohl(low) + (uint32_t)i);
		memcpy(&ip6.s6_addr[12], &low, 4);
		return inet_ntop(AF_INET6, &ip6, buf, (socklen_t)len) ? 0 :
		       -FI_EINVAL;
	}
	if (!i) {
		snprintf(buf, len, "%s", node);
		return 0;
	}
	while (digits < n && node[n - 1 - digits] >= '0' &&
	       node[n - 1 - digits] <= '9')
		digits++;
	if (!digits)
		return -FI_EINVAL;
	base = strtoul(node + n - digits, NULL, 10);
	snprintf(buf, len, "%.*s%lu", (int)(n - digits), node, base + i);
	return 0;
}

static int swnic_av_insertsym(struct fid_av *av_fid, const char *node,
			      size_t nodecnt, const char *service,
			      size_t svccnt, fi_addr_t *fi_addr,
			      uint64_t flags, void *context)
{
	struct swnic_av *av = swnic_av(av_fid);
	size_t count, i, j, k;
	struct sockaddr_in *sins;
	char name[256], svc[8];
	uint16_t port;
	int *errs, ret;

	ret = swnic_av_check_flags(av, flags, fi_addr, context);
	if (ret)
		return ret;
	if (!node || !service || !nodecnt || !svccnt ||
	    swnic_addr_parse_service(service, &port) ||
	    (size_t)port + svccnt - 1 > UINT16_MAX)
		return -FI_EINVAL;
	/* More addresses than a size_t counts: no array would hold them. */
	if (nodecnt > SIZE_MAX / svccnt)
		return -FI_EINVAL;
	count = nodecnt * svccnt;
	sins = calloc(count, sizeof(*sins));
	errs = calloc(count, sizeof(*errs));
	if (!sins || !errs) {
		ret = -FI_ENOMEM;
		goto out;
	}
	for (i = 0, k = 0; i < nodecnt; i++) {
		ret = swnic_av_sym_node(node, i, name, sizeof(name));
		for (j = 0; j < svccnt; j++, k++) {
			snprintf(svc, sizeof(svc), "%u",
				 (unsigned int)(port + j) & 0xffff);
			errs[k] = ret ? ret :
				  swnic_av_resolve(av, name, svc, &sins[k]);
		}
	}
	ret = swnic_av_insert_addrs(av, sins, errs, count, fi_addr, flags,
				    context);
out:
	free(sins);
	free(errs);
	return ret;
}

static int swnic_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			   size_t count, uint64_t flags)
{
	struct swnic_av *av = swnic_av(av_fid);
	struct swnic_av_entry *e;
	ssize_t idx;
	size_t i;
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;
	if (av->reader)
		return -FI_EACCES;
	pthread_mutex_lock(&av->lock);
	for (i = 0; i < count; i++) {
		idx = swnic_av_entry_of(av, fi_addr[i]);
		if (idx < 0) {
			ret = -FI_EINVAL;
			continue;
		}
		e = &av->entries[idx];
		if (--e->refs)
			continue;
		swnic_av_hash_del(av, e->key, (size_t)idx);
		swnic_av_publish(av, (size_t)idx, 0);
		av->used--;
		if ((size_t)idx < av->lowest_free)
			av->lowest_free = (size_t)idx;
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

/*
 * Write @sin in the AV's format into @addr (truncated), *addrlen: needed.
 * Return: 0, or the error of an IPv6 name no device knows (any more).
 */
static int swnic_av_format(const struct swnic_av *av,
			   const struct sockaddr_in *sin, void *addr,
			   size_t *addrlen)
{
	char buf[64];
	size_t need, n;
	int ret;

	if (av->addr_format == FI_ADDR_STR) {
		ret = swnic_addr_to_str(sin, buf, sizeof(buf));
		if (ret < 0)
			return ret;
		need = (size_t)ret + 1;
		n = need < *addrlen ? need : *addrlen;
		if (n > sizeof(buf))
			n = sizeof(buf);
		if (addr && n) {
			memcpy(addr, buf, n);
			((char *)addr)[n - 1] = '\0';
		}
	} else {
		/* FI_SOCKADDR_IN6: the address (IPv6, or IPv4-mapped) */
		struct sockaddr_in6 sin6;
		const void *src = sin;
		void *dup = NULL;

		need = sizeof(*sin);
		if (av->addr_format == FI_SOCKADDR_IN6 ||
		    swnic_addr_is_v6(sin->sin_addr)) {
			ret = swnic_addr_dup(FI_SOCKADDR_IN6, sin, &dup,
					     &need);
			if (ret)
				return ret;
			memcpy(&sin6, dup, sizeof(sin6));
			src = &sin6;
			free(dup);
		}
		n = need < *addrlen ? need : *addrlen;
		if (addr && n)
			memcpy(addr, src, n);
	}
	*addrlen = need;
	return 0;
}

static int swnic_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr,
			   void *addr, size_t *addrlen)
{
	struct swnic_av *av = swnic_av(av_fid);
	struct sockaddr_in sin;
	ssize_t idx;

	if (!addrlen)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->lock);
	swnic_av_sync(av);
	idx = swnic_av_entry_of(av, fi_addr);
	if (idx >= 0)
		swnic_av_key_addr(av->entries[idx].key, &sin);
	pthread_mutex_unlock(&av->lock);
	if (idx < 0)
		return -FI_EINVAL;
	return swnic_av_format(av, &sin, addr, addrlen);
}

static const char *swnic_av_straddr(struct fid_av *av_fid, const void *addr,
				    char *buf, size_t *len)
{
	struct swnic_av *av = swnic_av(av_fid);
	struct sockaddr_in sin;
	char tmp[64];
	size_t need, n;

	if (!addr || !buf || !len)
		return NULL;
	if (av->addr_format == FI_ADDR_STR ?
	    swnic_addr_parse_str(addr, &sin) :
	    swnic_addr_read(av->addr_format, addr,
			    swnic_addr_len(av->addr_format), &sin)) {
		snprintf(tmp, sizeof(tmp), "(not an swnic address)");
	} else if (swnic_addr_to_str(&sin, tmp, sizeof(tmp)) < 0) {
		/*
		 * An IPv6 name no device knows: its dotted form, which
		 * fi_av_insert reads back to the same address.
		 */
		swnic_addr_to_str4(&sin, tmp, sizeof(tmp));
	}
	need = strlen(tmp) + 1;
	n = need < *len ? need : *len;
	if (n) {
		memcpy(buf, tmp, n);
		buf[n - 1] = '\0';
	}
	*len = need;
	return buf;
}

static int swnic_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct swnic_av *av =
		swnic_container_of(fid, struct swnic_av, av_fid.fid);
	struct swnic_eq *eq = swnic_eq_from_fid(bfid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (!eq)
		return -FI_EINVAL;
	ret = swnic_eq_bind_check(eq, av->domain->fabric, FI_LOG_AV,
				  "fi_av_bind");
	if (ret)
		return ret;
	pthread_mutex_lock(&av->lock);
	if (av->eq) {
		ret = -FI_EALREADY;
	} else {
		swnic_eq_bind_get(eq);
		av->eq = eq;
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

/* ---- the data path's side (ep.h) --------------------------------------- */

static struct fi_ops swnic_av_fi_ops;

struct swnic_av *swnic_av_of(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_AV || fid->ops != &swnic_av_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_av, av_fid.fid);
}

/* The domain @av was opened on (fi_ep_bind checks it is the endpoint's). */
struct swnic_domain *swnic_av_domain(const struct swnic_av *av)
{
	return av->domain;
}

/* The address of @fi_addr: -FI_EINVAL if it names no entry. */
static int swnic_av_addr_base(struct swnic_av *av, fi_addr_t fi_addr,
			      struct sockaddr_in *sin, uint32_t *kslot);

/*
 * fi_rx_addr(3): split @fi_addr into the address and the index of a
 * receive context of a scalable endpoint there (0 without rx_ctx_bits).
 */
fi_addr_t swnic_av_rx_split(const struct swnic_av *av, fi_addr_t fi_addr,
			    uint32_t *rx_index)
{
	int bits = av->rx_ctx_bits;

	*rx_index = 0;
	if (!bits || fi_addr == FI_ADDR_UNSPEC || fi_addr == FI_ADDR_NOTAVAIL)
		return fi_addr;
	*rx_index = (uint32_t)(fi_addr >> (64 - bits));
	return fi_addr & (~0ULL >> bits);
}

int swnic_av_addr(struct swnic_av *av, fi_addr_t fi_addr,
		  struct sockaddr_in *sin, uint32_t *kslot)
{
	uint32_t rx_index;
	int ret;

	fi_addr = swnic_av_rx_split(av, fi_addr, &rx_index);
	ret = swnic_av_addr_base(av, fi_addr, sin, kslot);
	if (ret || !rx_index)
		return ret;
	/* Receive context i of a scalable endpoint: its port + i. */
	if (ntohs(sin->sin_port) + rx_index > UINT16_MAX)
		return -FI_EINVAL;
	sin->sin_port = htons((uint16_t)(ntohs(sin->sin_port) + rx_index));
	return 0;
}

static int swnic_av_addr_base(struct swnic_av *av, fi_addr_t fi_addr,
			      struct sockaddr_in *sin, uint32_t *kslot)
{
	ssize_t idx;

	/* A MAP address is the key itself: no lookup on the send path. */
	if (av->type == FI_AV_MAP) {
		if (fi_addr & ~SWNIC_AV_ENTRY_MASK)
			return -FI_EINVAL;
		*kslot = (uint32_t)(fi_addr >> SWNIC_AV_KSLOT_SHIFT);
		if (*kslot > atomic_load(&av->nkeys))
			return -FI_EINVAL;
		swnic_av_key_addr(fi_addr, sin);
		return 0;
	}
	pthread_mutex_lock(&av->lock);
	swnic_av_sync(av);
	idx = swnic_av_entry_of(av, fi_addr);
	if (idx >= 0) {
		swnic_av_key_addr(av->entries[idx].key, sin);
		*kslot = (uint32_t)(av->entries[idx].key >>
				    SWNIC_AV_KSLOT_SHIFT);
	}
	pthread_mutex_unlock(&av->lock);
	return idx < 0 ? -FI_EINVAL : 0;
}

/*
 * The AV's auth keys, for an endpoint being enabled. Return: how many
 * (copied to @keys, slot order).
 */
#if SWNIC_FI_HAVE_2
/* The key slot + 1 of auth key handle @h, or 0 if it names no key. */
uint32_t swnic_av_key_handle(struct swnic_av *av, fi_addr_t h)
{
	uint32_t kslot;

	pthread_mutex_lock(&av->lock);
	kslot = (uint32_t)swnic_av_handle_kslot(av, h);
	pthread_mutex_unlock(&av->lock);
	return kslot;
}
#endif

uint32_t swnic_av_auth_keys(struct swnic_av *av, uint32_t *keys)
{
	uint32_t n;

	pthread_mutex_lock(&av->lock);
	n = atomic_load(&av->nkeys);
	memcpy(keys, av->auth_keys, n * sizeof(*keys));
	pthread_mutex_unlock(&av->lock);
	return n;
}

/*
 * The fi_addr_t (or FI_AV_USER_ID) of a completion's source: the entry of
 * @sin with key slot @kslot (0: no key), or, if @kslot is negative (the
 * kernel does not say which key), of @sin under any key.
 */
fi_addr_t swnic_av_reverse(struct swnic_av *av, const struct sockaddr_in *sin,
			   int kslot)
{
	fi_addr_t ret = FI_ADDR_NOTAVAIL;
	ssize_t idx;
	uint64_t k;

	pthread_mutex_lock(&av->lock);
	swnic_av_sync(av);
	if (kslot >= 0) {
		idx = swnic_av_find(av, swnic_av_key(sin) |
					(uint64_t)kslot << SWNIC_AV_KSLOT_SHIFT);
	} else {
		/* The address without a key first, then with each key. */
		idx = swnic_av_find(av, swnic_av_key(sin));
		for (k = 1; idx < 0 && k <= atomic_load(&av->nkeys); k++)
			idx = swnic_av_find(av, swnic_av_key(sin) |
						k << SWNIC_AV_KSLOT_SHIFT);
	}
	if (idx >= 0)
		ret = av->entries[idx].user_id != FI_ADDR_NOTAVAIL ||
		      av->ids_later ?
		      av->entries[idx].user_id : swnic_av_fi_addr(av, idx);
	pthread_mutex_unlock(&av->lock);
	return ret;
}

void swnic_av_bind_ep(struct swnic_av *av, int delta)
{
	if (delta > 0)
		atomic_fetch_add(&av->binds, 1);
	else
		atomic_fetch_sub(&av->binds, 1);
}

static int swnic_av_close(struct fid *fid)
{
	struct swnic_av *av =
		swnic_container_of(fid, struct swnic_av, av_fid.fid);
	unsigned int binds = atomic_load(&av->binds);

	if (binds) {
		SWNIC_WARN(FI_LOG_AV, "AV %p is still used by %u endpoint(s)\n",
			   (void *)fid, binds);
		return -FI_EBUSY;
	}
	if (av->eq)
		swnic_eq_bind_put(av->eq);
	swnic_domain_child(av->domain, SWNIC_CHILD_AV, -1);
	if (av->kfd >= 0) {
		munmap((void *)av->tab, av->map_size);
		close(av->kfd);
	}
	free(av->snap);
	pthread_mutex_destroy(&av->lock);
	free(av->entries);
	free(av->hash);
	free(av);
	return 0;
}

static struct fi_ops swnic_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_av_close,
	.bind = swnic_av_bind,
	.control = swnic_no_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

#if SWNIC_FI_HAVE_2
/*
 * fi_av_set_user_id(): the id completions from @fi_addr's peer carry or,
 * with FI_AUTH_KEY, the id of auth key handle @fi_addr (fi_av(3): what
 * FI_SOURCE_ERR events would report for unknown peers using that key;
 * swnic reports no such events, so it is kept, and checked, only).
 */
static int swnic_av_set_user_id(struct fid_av *av_fid, fi_addr_t fi_addr,
				fi_addr_t user_id, uint64_t flags)
{
	struct swnic_av *av = swnic_av(av_fid);
	uint64_t kslot;
	ssize_t idx;

	if (flags & ~FI_AUTH_KEY)
		return -FI_EBADFLAGS;
	if (av->reader)
		return -FI_EACCES;
	if (!(av->flags & FI_AV_USER_ID)) {
		SWNIC_WARN(FI_LOG_AV, "AV not opened with FI_AV_USER_ID\n");
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&av->lock);
	if (flags & FI_AUTH_KEY) {
		kslot = av->domain->av_auth_key ?
			swnic_av_handle_kslot(av, fi_addr) : 0;
		if (kslot)
			av->key_user_id[kslot - 1] = user_id;
		pthread_mutex_unlock(&av->lock);
		return kslot ? 0 : -FI_EINVAL;
	}
	idx = swnic_av_entry_of(av, fi_addr);
	if (idx >= 0)
		av->entries[idx].user_id = user_id;
	pthread_mutex_unlock(&av->lock);
	return idx < 0 ? -FI_EINVAL : 0;
}

/* fi_av_insert_auth_key(): a key (a u32, a service's) for the endpoints. */
static int swnic_av_insert_auth_key(struct fid_av *av_fid,
				    const void *auth_key, size_t auth_key_size,
				    fi_addr_t *fi_addr, uint64_t flags)
{
	struct swnic_av *av = swnic_av(av_fid);
	uint32_t key, i, n;
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (!av->domain->av_auth_key) {
		SWNIC_WARN(FI_LOG_AV, "the domain is not FI_AV_AUTH_KEY\n");
		return -FI_EINVAL;
	}
	if (!auth_key || auth_key_size != sizeof(key) || !fi_addr)
		return -FI_EINVAL;
	memcpy(&key, auth_key, sizeof(key));
	if (!key)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->lock);
	n = atomic_load(&av->nkeys);
	for (i = 0; i < n && av->auth_keys[i] != key; i++)
		;
	if (i == n) {
		if (n >= SWNIC_EP_AUTH_KEYS_MAX) {
			ret = -FI_ENOSPC;
		} else {
			av->auth_keys[n] = key;
			av->key_user_id[n] = FI_ADDR_NOTAVAIL;
			atomic_store(&av->nkeys, n + 1);
		}
	}
	pthread_mutex_unlock(&av->lock);
	if (!ret)
		*fi_addr = SWNIC_AV_AUTH_HANDLE | i;
	return ret;
}

/* fi_av_lookup_auth_key(): of a key handle or of an address inserted so. */
static int swnic_av_lookup_auth_key(struct fid_av *av_fid, fi_addr_t fi_addr,
				    void *auth_key, size_t *auth_key_size)
{
	struct swnic_av *av = swnic_av(av_fid);
	uint64_t kslot;
	uint32_t key = 0;
	ssize_t idx;

	if (!auth_key_size || (*auth_key_size && !auth_key))
		return -FI_EINVAL;
	pthread_mutex_lock(&av->lock);
	kslot = swnic_av_handle_kslot(av, fi_addr);
	if (!kslot) {
		idx = swnic_av_entry_of(av, fi_addr);
		if (idx >= 0)
			kslot = av->entries[idx].key >> SWNIC_AV_KSLOT_SHIFT;
	}
	if (kslot)
		key = av->auth_keys[kslot - 1];
	pthread_mutex_unlock(&av->lock);
	if (!kslot)
		return -FI_EINVAL;
	if (*auth_key_size)
		memcpy(auth_key, &key, *auth_key_size < sizeof(key) ?
		       *auth_key_size : sizeof(key));
	*auth_key_size = sizeof(key);
	return 0;
}
#endif

static struct fi_ops_av swnic_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = swnic_av_insert,
	.insertsvc = swnic_av_insertsvc,
	.insertsym = swnic_av_insertsym,
	.remove = swnic_av_remove,
	.lookup = swnic_av_lookup,
	.straddr = swnic_av_straddr,
	.av_set = swnic_no_av_set,
#if SWNIC_FI_HAVE_2
	.insert_auth_key = swnic_av_insert_auth_key,
	.lookup_auth_key = swnic_av_lookup_auth_key,
	.set_user_id = swnic_av_set_user_id,
#endif
};

/* Undo swnic_av_shared_open(). */
static void swnic_av_shared_free(struct swnic_av *av)
{
	if (av->tab)
		munmap((void *)av->tab, av->map_size);
	close(av->kfd);
	free(av->entries);
	free(av->hash);
	free(av->snap);
}

/*
 * A named AV: create the kernel's table (or open it with FI_READ), map
 * it, and size the entries to its count. *@type: the AV's type; an
 * opener's FI_AV_UNSPEC becomes the creator's, and another fails.
 */
static int swnic_av_shared_open(struct swnic_av *av, struct fi_av_attr *attr,
				enum fi_av_type *type)
{
	struct swnic_av_open o = { .size = sizeof(o) };
	size_t n, len = strlen(attr->name);
	void *map;
	int ret;

	if (!len || len >= sizeof(o.name)) {
		SWNIC_WARN(FI_LOG_AV, "AV name of %zu bytes\n", len);
		return -FI_EINVAL;
	}
	memcpy(o.name, attr->name, len);
	av->reader = attr->flags & FI_READ;
	if (!av->reader) {
		o.flags = SWNIC_AV_OPEN_CREATE;
		o.count = attr->count ? (uint32_t)attr->count :
					SWNIC_AV_SHARED_DEF_COUNT;
		if (attr->count > SWNIC_AV_COUNT_MAX) {
			SWNIC_WARN(FI_LOG_AV, "named AV of %zu entries: %u at most\n",
				   attr->count, SWNIC_AV_COUNT_MAX);
			return -FI_EINVAL;
		}
		o.type = *type;
	}
	if (ioctl(av->domain->fd, SWNIC_IOCTL_AV_OPEN, &o)) {
		ret = -errno;
		SWNIC_WARN(FI_LOG_AV, "AV_OPEN %s: %s\n", attr->name,
			   strerror(errno));
		/* One writer per name: a second creator is refused. */
		return ret == -EEXIST ? -FI_EBUSY : ret;
	}
	av->kfd = o.fd;
	if (av->reader && *type != FI_AV_UNSPEC && (uint32_t)*type != o.type) {
		SWNIC_WARN(FI_LOG_AV, "AV %s is of type %u\n", attr->name,
			   o.type);
		close(av->kfd);
		return -FI_EINVAL;
	}
	*type = (enum fi_av_type)o.type;
	map = mmap(NULL, o.mmap_size, PROT_READ, MAP_SHARED, av->kfd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		close(av->kfd);
		return ret;
	}
	av->tab = map;
	av->map_size = o.mmap_size;
	av->nentries = o.count;
	for (n = SWNIC_AV_DEF_COUNT; n <= 2 * (size_t)o.count + 2; n *= 2)
		;
	av->hash_size = n;
	av->entries = calloc(o.count, sizeof(*av->entries));
	av->hash = calloc(n, sizeof(*av->hash));
	av->snap = av->reader ? calloc(o.count, sizeof(*av->snap)) : NULL;
	if (!av->entries || !av->hash || (av->reader && !av->snap)) {
		swnic_av_shared_free(av);
		return -FI_ENOMEM;
	}
	/* MAP addresses are the addresses: the same at any map_addr. */
	if (!attr->map_addr)
		attr->map_addr = map;
	return 0;
}

int swnic_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		  struct fid_av **av_fid, void *context)
{
	struct swnic_domain *dom =
		swnic_container_of(domain, struct swnic_domain, domain_fid);
	enum fi_av_type type;
	struct swnic_av *av;
	int ret;

	if (!attr || !av_fid)
		return -FI_EINVAL;
	if (attr->flags & ~(FI_EVENT | FI_SYMMETRIC | FI_READ |
			    FI_AV_USER_ID)) {
		SWNIC_WARN(FI_LOG_AV, "AV flags %#llx not supported\n",
			   (unsigned long long)attr->flags);
		return -FI_EBADFLAGS;
	}
	if (attr->name &&
	    !(dom->dev.attr.features & SWNIC_FEAT_SHARED_AV)) {
		SWNIC_WARN(FI_LOG_AV, "named (shared) AVs need a newer kernel\n");
		return -FI_ENOSYS;
	}
	if ((attr->flags & FI_READ) && !attr->name) {
		SWNIC_WARN(FI_LOG_AV, "FI_READ: only a named AV is opened\n");
		return -FI_EINVAL;
	}
	if (attr->name && (dom->av_auth_key ||
			   (attr->flags & (FI_AV_USER_ID | FI_READ)) ==
			   (FI_AV_USER_ID | FI_READ))) {
		SWNIC_WARN(FI_LOG_AV, "named AVs hold no auth keys and openers no ids\n");
		return -FI_EINVAL;
	}
	if ((attr->flags & FI_AV_USER_ID) && !(dom->caps & FI_AV_USER_ID)) {
		SWNIC_WARN(FI_LOG_AV, "FI_AV_USER_ID AVs need the domain capability\n");
		return -FI_EINVAL;
	}
	/*
	 * A receive context index is added to the address's port (the
	 * kernel's port blocks): it takes the top bits a MAP address leaves.
	 */
	if (attr->rx_ctx_bits < 0 || attr->rx_ctx_bits > SWNIC_AV_RX_BITS_MAX ||
	    (attr->rx_ctx_bits &&
	     !(dom->dev.attr.features & SWNIC_FEAT_PORT_BLOCK))) {
		SWNIC_WARN(FI_LOG_AV, "rx_ctx_bits %d: 0 to %d\n",
			   attr->rx_ctx_bits,
			   dom->dev.attr.features & SWNIC_FEAT_PORT_BLOCK ?
			   SWNIC_AV_RX_BITS_MAX : 0);
		return -FI_EINVAL;
	}
	type = attr->type ? attr->type : dom->av_type;
	if (!type && (attr->flags & FI_READ))
		type = FI_AV_UNSPEC;	/* the creator's */
	else if (!type)
		type = FI_AV_TABLE;
	if (type != FI_AV_MAP && type != FI_AV_TABLE &&
	    !(type == FI_AV_UNSPEC && (attr->flags & FI_READ))) {
		SWNIC_WARN(FI_LOG_AV, "AV type %d unknown\n", attr->type);
		return -FI_EINVAL;
	}
	if (dom->av_type && type != FI_AV_UNSPEC && type != dom->av_type) {
		SWNIC_WARN(FI_LOG_AV, "domain %s was opened for AV type %d\n",
			   dom->dev.name, dom->av_type);
		return -FI_EINVAL;
	}
	if (atomic_load(&dom->children[SWNIC_CHILD_AV]) >=
	    dom->dev.attr.max_av) {
		SWNIC_WARN(FI_LOG_AV, "domain %s has its %u AVs\n",
			   dom->dev.name, dom->dev.attr.max_av);
		return -FI_ENOSPC;
	}
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->domain = dom;
	av->addr_format = dom->addr_format;
	av->flags = attr->flags;
	av->rx_ctx_bits = attr->rx_ctx_bits;
	av->ids_later = (attr->flags & FI_AV_USER_ID) &&
			!FI_VERSION_LT(dom->api_version, FI_VERSION(1, 20));
	av->kfd = -1;
	if (attr->name) {
		ret = swnic_av_shared_open(av, attr, &type);
		if (!ret && dom->av_type && type != dom->av_type) {
			SWNIC_WARN(FI_LOG_AV, "named AV of type %d, domain's %d\n",
				   type, dom->av_type);
			swnic_av_shared_free(av);
			ret = -FI_EINVAL;
		}
		if (ret) {
			free(av);
			return ret;
		}
	}
	av->type = type;	/* a named AV's: the creator's */
	pthread_mutex_init(&av->lock, NULL);
	atomic_init(&av->binds, 0);
	atomic_init(&av->nkeys, 0);
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &swnic_av_fi_ops;
	av->av_fid.ops = &swnic_av_ops;
	swnic_domain_child(dom, SWNIC_CHILD_AV, 1);
	attr->type = type;
	*av_fid = &av->av_fid;
	return 0;
}
