// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The registration cache and the invalidation page.
 *
 * Registering is expensive (the kernel pins and accounts every page), and
 * applications re-register the same buffers. The cache keeps kernel
 * registrations of local-access MRs (no FI_REMOTE_* access, provider keys,
 * pinned) after their last MR closes, and serves a new registration from
 * any cached one that covers its range with at least its access rights.
 * Remote-access registrations are never cached: closing their MR must
 * revoke the key at once (fi_mr(3)).
 *
 * A cached registration goes stale when the pages behind its range change
 * (munmap, mremap, madvise(DONTNEED), ...). The provider does not hook
 * malloc/munmap to notice: the kernel's MMU notifier revokes the MR and
 * publishes a record on the domain's invalidation page (read-only mapping,
 * protocol in <linux/swnic.h>). Before every lookup the cache consumes new
 * records and drops the entries they name; if it fell behind by a ring's
 * worth of records it drops everything (a flush), never trusting a slot
 * the kernel may have reused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mr.h"

/* Receive buffers remembered, to register those posted again. */
#define SWNIC_RECV_SEEN		16

struct swnic_mr_cache {
	pthread_mutex_t lock;		/* protects everything below */
	struct swnic_list entries;	/* every cached registration */
	struct swnic_list unused;	/* refs == 0, least recently used first */
	size_t nentries;
	size_t nunused;
	size_t max_unused;
	uint64_t seen;			/* invalidation generation consumed */
	uint64_t hits, misses, evictions, invalidations, flushes;
	/*
	 * Receive buffers posted once and not registered (by address):
	 * a second post of one registers it (swnic_mr_cache_recv()).
	 */
	struct { uint64_t addr, len; } recv_seen[SWNIC_RECV_SEEN];
	bool recv_reg_off;		/* one was over a limit: no more */
};

/* Map the domain's invalidation page (once); the caller holds ctl_lock. */
static int swnic_inval_map_locked(struct swnic_domain *dom)
{
	struct swnic_inval_query q = { .size = sizeof(q) };
	void *page;

	if (dom->inval)
		return 0;
	if (!(dom->dev.attr.features & SWNIC_FEAT_INVAL_PAGE))
		return -FI_ENOSYS;
	if (ioctl(dom->fd, SWNIC_IOCTL_INVAL_QUERY, &q))
		return -errno;
	if (q.entry_size < sizeof(struct swnic_inval_rec) || !q.entries ||
	    (q.entries & (q.entries - 1)) ||
	    q.ring_offset + (uint64_t)q.entries * q.entry_size > q.mmap_size)
		return -FI_EINVAL;
	page = mmap(NULL, q.mmap_size, PROT_READ, MAP_SHARED, dom->fd,
		    (off_t)q.mmap_offset);
	if (page == MAP_FAILED)
		return -errno;
	dom->inval = page;
	dom->inval_len = q.mmap_size;
	dom->inval_ring = (const volatile struct swnic_inval_rec *)
			  ((const char *)page + q.ring_offset);
	dom->inval_entries = q.entries;
	return 0;
}

int swnic_inval_map(struct swnic_domain *dom)
{
	int ret;

	pthread_mutex_lock(&dom->ctl_lock);
	ret = swnic_inval_map_locked(dom);
	pthread_mutex_unlock(&dom->ctl_lock);
	return ret;
}

int swnic_mr_cache_init(struct swnic_domain *dom)
{
	struct swnic_mr_cache *cache;
	int ret;

	if (!swnic_params.mr_cache)
		return 0;
	if (!(dom->dev.attr.features & SWNIC_FEAT_MR))
		return 0;
	/* Without invalidations a cache could hand out stale pages: none. */
	ret = swnic_inval_map(dom);
	if (ret) {
		SWNIC_INFO(FI_LOG_MR,
			   "%s: no invalidation page (%s): registration cache off\n",
			   dom->dev.name, fi_strerror(-ret));
		return 0;
	}
	cache = calloc(1, sizeof(*cache));
	if (!cache)
		return -FI_ENOMEM;
	pthread_mutex_init(&cache->lock, NULL);
	swnic_list_init(&cache->entries);
	swnic_list_init(&cache->unused);
	cache->max_unused = swnic_params.mr_cache_max;
	cache->seen = __atomic_load_n(&dom->inval->gen, __ATOMIC_ACQUIRE);
	dom->mr_cache = cache;
	return 0;
}

/* Take @kmr off the cache; deregister it if no MR uses it. */
static void swnic_mr_cache_detach(struct swnic_domain *dom,
				  struct swnic_kmr *kmr)
{
	struct swnic_mr_cache *cache = dom->mr_cache;

	swnic_list_del(&kmr->node);
	cache->nentries--;
	kmr->cached = false;
	if (!kmr->refs) {
		swnic_list_del(&kmr->lru);
		cache->nunused--;
		swnic_kmr_dereg(dom, kmr);
		free(kmr);
	}
}

static void swnic_mr_cache_flush(struct swnic_domain *dom)
{
	struct swnic_mr_cache *cache = dom->mr_cache;
	struct swnic_list *pos, *tmp;

	swnic_list_for_each_safe(pos, tmp, &cache->entries)
		swnic_mr_cache_detach(dom, swnic_list_entry(pos,
						struct swnic_kmr, node));
}

static struct swnic_kmr *swnic_mr_cache_find_key(struct swnic_mr_cache *cache,
						 uint64_t key)
{
	struct swnic_list *pos;
	struct swnic_kmr *kmr;

	swnic_list_for_each(pos, &cache->entries) {
		kmr = swnic_list_entry(pos, struct swnic_kmr, node);
		if (kmr->key == key)
			return kmr;
	}
	return NULL;
}

/*
 * Consume the invalidation records published since the last look (see the
 * reader protocol in <linux/swnic.h>), up to generation @gen, which is
 * past what the cache has seen. Caller holds the cache lock.
 */
static void swnic_mr_cache_sync_slow(struct swnic_domain *dom, uint64_t gen)
{
	struct swnic_mr_cache *cache = dom->mr_cache;
	const volatile struct swnic_inval_rec *slot;
	uint64_t gen2, n, mask = dom->inval_entries - 1;
	struct swnic_inval_rec rec;
	struct swnic_kmr *kmr;
	uint64_t *keys;
	size_t i, nkeys = 0;

	if (gen - cache->seen >= dom->inval_entries)
		goto overflow;
	keys = calloc(gen - cache->seen, sizeof(*keys));
	if (!keys)
		goto overflow;
	for (n = cache->seen + 1; n != gen + 1; n++) {
		slot = &dom->inval_ring[(n - 1) & mask];
		rec.gen = slot->gen;
		rec.key = slot->key;
		if (rec.gen != n) {
			free(keys);
			goto overflow;
		}
		keys[nkeys++] = rec.key;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	gen2 = __atomic_load_n(&dom->inval->gen, __ATOMIC_ACQUIRE);
	if (gen2 - cache->seen >= dom->inval_entries) {
		/* A slot may have been rewritten while we copied it. */
		free(keys);
		goto overflow;
	}
	for (i = 0; i < nkeys; i++) {
		kmr = swnic_mr_cache_find_key(cache, keys[i]);
		if (!kmr)
			continue;
		cache->invalidations++;
		swnic_mr_cache_detach(dom, kmr);
	}
	free(keys);
	cache->seen = gen;
	return;

overflow:
	SWNIC_INFO(FI_LOG_MR, "%s: invalidation ring overflow: cache flushed\n",
		   dom->dev.name);
	cache->flushes++;
	swnic_mr_cache_flush(dom);
	cache->seen = __atomic_load_n(&dom->inval->gen, __ATOMIC_ACQUIRE);
}

/*
 * Before every lookup (caller holds the cache lock). Nothing new is the
 * common case, and a cache hit's cost: one load, no call.
 */
static inline void swnic_mr_cache_sync(struct swnic_domain *dom)
{
	uint64_t gen = __atomic_load_n(&dom->inval->gen, __ATOMIC_ACQUIRE);

	if (gen != dom->mr_cache->seen)
		swnic_mr_cache_sync_slow(dom, gen);
}

/*
 * Registration flags two MRs of local rights only must share to share a
 * registration. SWNIC_MR_REG_VIRT_ADDR says how peers address an MR; the
 * owner's accesses name a virtual address with it or without it
 * (kernel/mr_access.c swnic_mr_target_offset()), and a peer's need a
 * remote right: the receive buffers the cache registers (flags 0) serve
 * the application's FI_MR_VIRT_ADDR MRs of them, and the other way round.
 */
static uint32_t swnic_mr_cache_flags(uint32_t reg_flags, uint32_t access)
{
	if (!(access & (SWNIC_MR_ACCESS_REMOTE_READ |
			SWNIC_MR_ACCESS_REMOTE_WRITE)))
		reg_flags &= ~SWNIC_MR_REG_VIRT_ADDR;
	return reg_flags;
}

/* A cached registration that covers @mr's range with its rights, or NULL. */
static struct swnic_kmr *swnic_mr_cache_find(struct swnic_mr_cache *cache,
					     const struct swnic_mr *mr)
{
	uint32_t flags = swnic_mr_cache_flags(mr->reg_flags, mr->access);
	struct swnic_list *pos;
	struct swnic_kmr *kmr;

	swnic_list_for_each(pos, &cache->entries) {
		kmr = swnic_list_entry(pos, struct swnic_kmr, node);
		if (swnic_range_within(mr->addr, mr->length, kmr->addr,
				       kmr->length) &&
		    (kmr->access & mr->access) == mr->access &&
		    swnic_mr_cache_flags(kmr->reg_flags, kmr->access) ==
		    flags &&
		    kmr->auth_key == mr->auth_key)
			return kmr;
	}
	return NULL;
}

/* Keep at most @keep registrations nobody uses: drop the oldest. */
static void swnic_mr_cache_trim(struct swnic_domain *dom, size_t keep)
{
	struct swnic_mr_cache *cache = dom->mr_cache;
	struct swnic_kmr *kmr;

	while (cache->nunused > keep) {
		kmr = swnic_list_entry(cache->unused.next, struct swnic_kmr,
				       lru);
		cache->evictions++;
		swnic_mr_cache_detach(dom, kmr);
	}
}

/*
 * Deregister every cached registration no MR uses, so that what they
 * pinned is charged no more. Return: whether there was any.
 */
bool swnic_mr_cache_reclaim(struct swnic_domain *dom)
{
	struct swnic_mr_cache *cache = dom->mr_cache;
	bool any;

	if (!cache)
		return false;
	pthread_mutex_lock(&cache->lock);
	any = cache->nunused;
	swnic_mr_cache_trim(dom, 0);
	pthread_mutex_unlock(&cache->lock);
	return any;
}

int swnic_mr_cache_get(struct swnic_domain *dom, struct swnic_mr *mr,
		       struct swnic_kmr **out, bool reclaim)
{
	struct swnic_mr_cache *cache = dom->mr_cache;
	struct swnic_kmr *kmr;
	int ret;

	pthread_mutex_lock(&cache->lock);
	swnic_mr_cache_sync(dom);
	kmr = swnic_mr_cache_find(cache, mr);
	if (kmr) {
		if (!kmr->refs++) {
			swnic_list_del(&kmr->lru);
			cache->nunused--;
		}
		cache->hits++;
		pthread_mutex_unlock(&cache->lock);
		*out = kmr;
		return 0;
	}
	cache->misses++;
	pthread_mutex_unlock(&cache->lock);

	/* Register outside the lock: pinning can take a while. */
	kmr = calloc(1, sizeof(*kmr));
	if (!kmr)
		return -FI_ENOMEM;
	kmr->addr = mr->addr;
	kmr->length = mr->length;
	kmr->access = mr->access;
	kmr->reg_flags = mr->reg_flags;
	kmr->auth_key = mr->auth_key;
	ret = reclaim ? swnic_kmr_reg_reclaim(dom, kmr, 0) :
			swnic_kmr_reg(dom, kmr, 0);
	if (ret) {
		free(kmr);
		return ret;
	}
	kmr->refs = 1;
	swnic_list_init(&kmr->lru);
	pthread_mutex_lock(&cache->lock);
	kmr->cached = true;
	swnic_list_add_tail(&cache->entries, &kmr->node);
	cache->nentries++;
	/*
	 * A revocation between MR_REG and here may have been consumed by
	 * another thread's sync before the entry was on the list. Ask the
	 * kernel now: any later revocation publishes a record past what the
	 * cache has seen, which the next sync will find.
	 */
	if (swnic_kmr_state(dom, kmr) != SWNIC_MR_STATE_VALID) {
		cache->invalidations++;
		swnic_mr_cache_detach(dom, kmr);
	}
	pthread_mutex_unlock(&cache->lock);
	*out = kmr;
	return 0;
}

void swnic_mr_cache_put(struct swnic_domain *dom, struct swnic_kmr *kmr)
{
	struct swnic_mr_cache *cache = dom->mr_cache;

	pthread_mutex_lock(&cache->lock);
	if (--kmr->refs) {
		pthread_mutex_unlock(&cache->lock);
		return;
	}
	if (!kmr->cached) {
		/* Invalidated while in use: nothing left to keep it for. */
		pthread_mutex_unlock(&cache->lock);
		swnic_kmr_dereg(dom, kmr);
		free(kmr);
		return;
	}
	swnic_list_add_tail(&cache->unused, &kmr->lru);
	cache->nunused++;
	swnic_mr_cache_sync(dom);
	swnic_mr_cache_trim(dom, cache->max_unused);
	pthread_mutex_unlock(&cache->lock);
}

/* A cached pinned registration with the RECV right over the range. */
static struct swnic_kmr *swnic_mr_cache_find_recv(struct swnic_mr_cache *cache,
						  uint64_t addr, uint64_t len)
{
	struct swnic_list *pos;
	struct swnic_kmr *kmr;

	swnic_list_for_each(pos, &cache->entries) {
		kmr = swnic_list_entry(pos, struct swnic_kmr, node);
		if (swnic_kmr_recv_covers(kmr, addr, len))
			return kmr;
	}
	return NULL;
}

/*
 * The handle of a cached registration that a receive into [@addr, @addr +
 * @len) can name (SWNIC_RQE_MR), or 0. A buffer not cached is registered
 * the second time it is posted (with every local right, so that the
 * application's own registrations of it find it too), not the first: a
 * buffer received into once would pay a registration for one copy.
 * The receive holds no reference: an entry evicted or invalidated
 * meanwhile leaves a handle the kernel no longer finds over the buffer,
 * and it then pins the buffer for the copy, as without one.
 */
uint32_t swnic_mr_cache_recv(struct swnic_domain *dom, uint64_t addr,
			     uint64_t len)
{
	struct swnic_mr_cache *cache = dom->mr_cache;
	struct swnic_mr tmp = {
		.addr = addr,
		.length = len,
		.access = SWNIC_MR_ACCESS_SEND | SWNIC_MR_ACCESS_RECV |
			  SWNIC_MR_ACCESS_READ | SWNIC_MR_ACCESS_WRITE,
	};
	struct swnic_kmr *kmr;
	uint32_t handle = 0;
	size_t slot;
	int ret;

	if (!cache || !len)
		return 0;
	pthread_mutex_lock(&cache->lock);
	swnic_mr_cache_sync(dom);
	kmr = swnic_mr_cache_find_recv(cache, addr, len);
	if (kmr) {
		handle = kmr->handle;
		if (!kmr->refs) {
			/* Recently used: the last to be evicted. */
			swnic_list_del(&kmr->lru);
			swnic_list_add_tail(&cache->unused, &kmr->lru);
		}
		pthread_mutex_unlock(&cache->lock);
		return handle;
	}
	slot = (addr >> 12 ^ len) % SWNIC_RECV_SEEN;
	if (cache->recv_reg_off || cache->recv_seen[slot].addr != addr ||
	    cache->recv_seen[slot].len != len) {
		cache->recv_seen[slot].addr = addr;
		cache->recv_seen[slot].len = len;
		pthread_mutex_unlock(&cache->lock);
		return 0;
	}
	cache->recv_seen[slot].addr = 0;
	cache->recv_seen[slot].len = 0;
	pthread_mutex_unlock(&cache->lock);

	/*
	 * Never at the cost of what the cache keeps for others (no reclaim).
	 * Over a limit (RLIMIT_MEMLOCK, the device's), receives of this
	 * domain copy as before from now on: the application's own
	 * registrations need what is left.
	 */
	ret = swnic_mr_cache_get(dom, &tmp, &kmr, false);
	if (ret) {
		SWNIC_INFO(FI_LOG_MR, "%s: receive buffer not registered (%s)\n",
			   dom->dev.name, fi_strerror(-ret));
		if (ret == -FI_ENOMEM || ret == -FI_ENOSPC) {
			pthread_mutex_lock(&cache->lock);
			cache->recv_reg_off = true;
			pthread_mutex_unlock(&cache->lock);
		}
		return 0;
	}
	handle = kmr->handle;
	swnic_mr_cache_put(dom, kmr);
	return handle;
}

void swnic_mr_cache_stats(struct swnic_domain *dom, struct fi_swnic_stats *s)
{
	struct swnic_mr_cache *cache = dom->mr_cache;

	if (!cache)
		return;
	pthread_mutex_lock(&cache->lock);
	swnic_mr_cache_sync(dom);
	s->cache_hits = cache->hits;
	s->cache_misses = cache->misses;
	s->cache_evictions = cache->evictions;
	s->cache_invalidations = cache->invalidations;
	s->cache_flushes = cache->flushes;
	s->cache_entries = cache->nentries;
	s->cache_unused = cache->nunused;
	s->inval_gen = cache->seen;
	pthread_mutex_unlock(&cache->lock);
}

void swnic_mr_cache_fini(struct swnic_domain *dom)
{
	struct swnic_mr_cache *cache = dom->mr_cache;

	if (cache) {
		/* No MR is open (fi_close checked): every entry is unused. */
		pthread_mutex_lock(&cache->lock);
		swnic_mr_cache_flush(dom);
		pthread_mutex_unlock(&cache->lock);
		pthread_mutex_destroy(&cache->lock);
		free(cache);
		dom->mr_cache = NULL;
	}
	if (dom->inval) {
		munmap((void *)dom->inval, dom->inval_len);
		dom->inval = NULL;
	}
}
