/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory registration internals: kernel registrations (struct swnic_kmr),
 * the MR objects applications hold (struct swnic_mr) and the registration
 * cache (mr_cache.c).
 */
#ifndef SWNIC_MR_H
#define SWNIC_MR_H

#include "swnic.h"

/*
 * One kernel MR (SWNIC_IOCTL_MR_REG). Remote-access registrations belong
 * to exactly one swnic_mr; local-access ones may be shared through the
 * cache by several swnic_mrs and outlive them while unused.
 */
struct swnic_kmr {
	uint32_t handle;		/* the kernel's domain-local handle */
	uint64_t key;
	uint64_t addr;
	uint64_t length;
	uint32_t access;		/* SWNIC_MR_ACCESS_* */
	uint32_t reg_flags;		/* SWNIC_MR_REG_* */
	uint32_t auth_key;
	uint32_t npeers;		/* SWNIC_MR_REG_PEERS: 1, else 0 */
	struct swnic_mr_peer peer;	/* the one peer that may access it */
	/* SWNIC_MR_REG_IOV: the segments' kernel MRs (owned by the MR) */
	uint32_t nsegs;
	uint32_t seg_handles[SWNIC_MR_IOV_MAX];
	/* Cache state, under the cache's lock (or owned by one MR). */
	unsigned int refs;		/* swnic_mrs using it */
	bool cached;			/* on the cache's list */
	struct swnic_list node;		/* cache->entries */
	struct swnic_list lru;		/* cache->unused, when refs == 0 */
};

enum swnic_mr_state {
	SWNIC_MR_PENDING,		/* FI_REG_MR: registration queued */
	SWNIC_MR_READY,
	SWNIC_MR_FAILED,		/* FI_REG_MR: the error went to the EQ */
};

/*
 * An application's MR. Kept small (the segments of a multi-range MR live
 * apart): a registration served by the cache is little more than its
 * allocation.
 */
struct swnic_mr {
	struct fid_mr mr_fid;
	struct swnic_domain *domain;
	struct swnic_kmr *kmr;		/* NULL unless READY */
	uint64_t addr;			/* the range as registered */
	uint64_t length;
	uint32_t access;		/* SWNIC_MR_ACCESS_* */
	uint32_t reg_flags;		/* SWNIC_MR_REG_* */
	uint64_t requested_key;
	uint32_t auth_key;
	uint32_t npeers;		/* FI_DIRECTED_RECV: 1 peer, else 0 */
	struct swnic_mr_peer peer;	/* the peer the region is limited to */
	bool cacheable;
	/*
	 * Several iovs (fi_mr_regv): one kernel MR per range (segment, local
	 * rights only, so its own key reaches nothing) and one SWNIC_MR_REG_IOV
	 * MR over them whose key peers use. @addr is the first range's,
	 * @length the sum.
	 */
	size_t nsegs;
	struct swnic_kmr *segs;		/* nsegs (addr, length: the range), or NULL */
	/*
	 * Device memory (an iface other than FI_HMEM_SYSTEM, with the
	 * domain's HMEM override): not registered with the kernel; the
	 * data path stages it through the override's copies.
	 */
	enum fi_hmem_iface iface;
	uint64_t device;
	/* The counter fi_mr_bind gave it, held (its binds) until close. */
	_Atomic(struct swnic_cntr *) cntr;
	void *context;			/* for the FI_MR_COMPLETE event */
	enum swnic_mr_state state;	/* under the async worker's lock */
	struct swnic_list async_node;	/* on the worker's queue */
};

int swnic_kmr_reg(struct swnic_domain *dom, struct swnic_kmr *kmr,
		  uint64_t requested_key);
int swnic_kmr_reg_reclaim(struct swnic_domain *dom, struct swnic_kmr *kmr,
			  uint64_t requested_key);
void swnic_kmr_dereg(struct swnic_domain *dom, struct swnic_kmr *kmr);
int swnic_kmr_state(struct swnic_domain *dom, const struct swnic_kmr *kmr);
uint32_t swnic_mr_recv_handle(struct swnic_domain *dom, void *desc,
			      uint64_t addr, uint64_t len);

/* Is [@a, @a + @len) within [@b, @b + @blen)? Neither end may wrap. */
static inline bool swnic_range_within(uint64_t a, uint64_t len, uint64_t b,
				      uint64_t blen)
{
	return a >= b && len <= blen && a - b <= blen - len;
}

/*
 * Can a receive into [@addr, @addr + @len) name @kmr (SWNIC_RQE_MR)? The
 * kernel's own test, made before it is asked: pinned pages of one range
 * (not ODP, not REG_IOV) with the RECV right, over all of the buffer.
 */
static inline bool swnic_kmr_recv_covers(const struct swnic_kmr *kmr,
					 uint64_t addr, uint64_t len)
{
	return !kmr->nsegs && !(kmr->reg_flags & SWNIC_MR_REG_ODP) &&
	       (kmr->access & SWNIC_MR_ACCESS_RECV) &&
	       swnic_range_within(addr, len, kmr->addr, kmr->length);
}

/* The registration cache; every call is a no-op when it is disabled. */
int swnic_mr_cache_init(struct swnic_domain *dom);
void swnic_mr_cache_fini(struct swnic_domain *dom);
static inline bool swnic_mr_cache_enabled(const struct swnic_domain *dom)
{
	return dom->mr_cache != NULL;
}

/*
 * A registration for @mr: from the cache, or made and cached. @reclaim:
 * an application's registration, which may take what the cache keeps
 * unused if pinning is over a limit.
 */
int swnic_mr_cache_get(struct swnic_domain *dom, struct swnic_mr *mr,
		       struct swnic_kmr **kmr, bool reclaim);
void swnic_mr_cache_put(struct swnic_domain *dom, struct swnic_kmr *kmr);
/* Deregister what the cache keeps unused: did it keep any? */
bool swnic_mr_cache_reclaim(struct swnic_domain *dom);
/* A cached registration's handle for a receive buffer, or 0. */
uint32_t swnic_mr_cache_recv(struct swnic_domain *dom, uint64_t addr,
			     uint64_t len);
void swnic_mr_cache_stats(struct swnic_domain *dom, struct fi_swnic_stats *s);
int swnic_inval_map(struct swnic_domain *dom);

#endif /* SWNIC_MR_H */
