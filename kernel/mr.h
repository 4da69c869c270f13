/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory regions: what the rest of the module may use.
 *
 * Control (ioctls on the domain's file): swnic_mr_reg/dereg/query/refresh
 * and swnic_inval_query. Data path: swnic_mr_ref_get() resolves a key into
 * a reference on the MR and its pages, swnic_mr_ref_walk() hands out the
 * pages, swnic_mr_ref_put() lets go. Netlink: swnic_mr_next() and the
 * counters below. Documentation/mr.rst has the model.
 */
#ifndef _SWNIC_MR_H
#define _SWNIC_MR_H

#include <linux/kref.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "mr_stats.h"
#include "notifier.h"

struct swnic_copy_src;
struct swnic_kmsg;
struct swnic_device;
struct swnic_domain;
struct swnic_umem;

/*
 * Handles of a domain's MRs: 1 to SWNIC_MR_HANDLE_MAX, the low bits of a
 * provider key; the rest of the key (40 bits) is random (mr_key.c).
 */
#define SWNIC_MR_HANDLE_BITS	24
#define SWNIC_MR_HANDLE_MAX	((1U << SWNIC_MR_HANDLE_BITS) - 1)

/* Kernel-only state of an MR that is being torn down. */
#define SWNIC_MR_STATE_DEAD	0

/* Access rights the kernel writes pages for (the others read them). */
#define SWNIC_MR_ACCESS_WRITES	(SWNIC_MR_ACCESS_RECV | SWNIC_MR_ACCESS_READ | \
				 SWNIC_MR_ACCESS_REMOTE_WRITE)
#define SWNIC_MR_ACCESS_LOCAL	(SWNIC_MR_ACCESS_SEND | SWNIC_MR_ACCESS_RECV | \
				 SWNIC_MR_ACCESS_READ | SWNIC_MR_ACCESS_WRITE)
#define SWNIC_MR_ACCESS_REMOTE	(SWNIC_MR_ACCESS_REMOTE_READ | \
				 SWNIC_MR_ACCESS_REMOTE_WRITE)

/*
 * The MR state of one domain (dom->mr). The domain holds a reference until
 * it closes; every MR and every pinned umem holds one too, so counters stay
 * valid until the last page is unpinned. It holds what those need of the
 * domain itself, not the domain. Freed after an RCU grace period.
 */
struct swnic_mr_domain {
	struct kref ref;
	struct swnic_device *sdev;	/* holds a reference: its counters */
	struct mm_struct *mm;		/* mmgrab'ed: the owner's, charged */
	struct swnic_domain __rcu *dom;	/* while open (events), RCU */
	struct mutex lock;		/* serialises publish/unpublish below */
	struct xarray mrs;		/* handle -> MR, RCU lookups, @lock */
	u32 next_handle;		/* cyclic handle cursor, @lock */
	u32 nmr;			/* MRs published or being made, @lock */
	bool dead;			/* domain closing: no new MRs, @lock */
	struct rhashtable user_keys;	/* (auth key, key) -> MR, @lock */
	struct swnic_mr_stats stats;	/* this domain's counters */
	struct swnic_inval inval;	/* the invalidation page */
	atomic_t releases;		/* async umem releases queued */
	struct work_struct release_work; /* the last put frees from here */
	struct rcu_head rcu;
};

/* Key of the user-key table: unique per (domain, auth key). */
struct swnic_mr_ukey {
	u64 key;
	u32 auth_key;
	u32 zero;			/* padding, always 0 (hashed) */
};

/*
 * A memory region. Published in its domain's @mrs (and @user_keys) with
 * the table's reference; lookups take theirs with kref_get_unless_zero()
 * under RCU. Deregistration unpublishes, marks it DEAD, removes the
 * notifier and drops the pins; the struct goes with the last reference.
 */
struct swnic_mr {
	struct kref ref;
	struct swnic_mr_domain *mrd;	/* holds a reference */
	struct rcu_head rcu;

	/* Immutable once published. */
	u32 handle;			/* index in mrd->mrs */
	u32 access;			/* SWNIC_MR_ACCESS_* */
	u32 flags;			/* SWNIC_MR_REG_* */
	u32 auth_key;			/* the domain's when registered */
	u64 key;
	u64 addr;			/* as registered (any alignment) */
	u64 length;
	struct swnic_mr_ukey ukey;	/* USER_KEY: the hashed key */
	struct rhash_head ukey_node;	/* USER_KEY: in mrd->user_keys */
	/*
	 * REG_IOV: the segments, in order, each referenced, and the offset
	 * of each in the concatenation. @nsegs 0: an MR of its own pages.
	 */
	u32 nsegs;
	struct swnic_mr *segs[SWNIC_MR_IOV_MAX];
	u64 seg_off[SWNIC_MR_IOV_MAX];
	/* REG_PEERS: who may access it remotely; 0 = every peer */
	u32 npeers;
	struct swnic_mr_peer peers[SWNIC_MR_PEERS_MAX];	/* key 0 resolved */

	/*
	 * @lock protects @state, @umem and the ODP flags, and is the lock the
	 * notifier sequence is set and checked under (mmu_interval_set_seq /
	 * mmu_interval_read_retry). Taken in the notifier and by the data
	 * path (maybe in softirq): _bh, never sleep under it.
	 */
	spinlock_t lock;
	u32 state;			/* SWNIC_MR_STATE_* */
	struct swnic_umem *umem;	/* pinned mode: pages while VALID */
	bool odp_mapped;		/* ODP: pages faulted since last inval */
	bool odp_dropped;		/* ODP: an invalidation dropped them */
	bool verify_pending;		/* pinned: @verify_work is queued */
	unsigned long verify_deadline;	/* jiffies: give up the check */
	unsigned long verify_idx;	/* pages compared so far */
	struct mmu_interval_notifier notifier;

	/*
	 * SWNIC_IOCTL_MR_BIND_CNTR: counts peer accesses of the kinds in
	 * @cntr_access (swnic_mr_ref_count()). Set once under @lock
	 * (@cntr_access first, @cntr published with release), referenced,
	 * put when the MR is released.
	 */
	struct swnic_cntr *cntr;
	u32 cntr_access;		/* SWNIC_MR_ACCESS_REMOTE_* */

	atomic64_t revocations;
	atomic64_t invalidations;
	atomic64_t refaults;
	struct work_struct revoke_work;	/* reports a revocation (netlink) */
	struct delayed_work verify_work; /* checks pages after a THP split */
};

/* Snapshot of one MR, for dumps and events. */
struct swnic_mr_info {
	u32 handle;
	u32 state;			/* SWNIC_MR_STATE_* */
	u64 key;
	u64 addr;
	u64 length;
	u32 access;			/* SWNIC_MR_ACCESS_* */
	u32 flags;			/* SWNIC_MR_REG_* */
	u32 auth_key;
	u32 extents;			/* runs of pinned pages */
	u64 pinned_bytes;
	u64 revocations;
	u64 invalidations;
	u64 refaults;
};

/* What an access names (the data path's view of a request). */
struct swnic_mr_target {
	u64 key;
	u64 addr;			/* VA or offset, see @flags */
	u64 len;			/* > 0 */
	u32 access;			/* exactly one SWNIC_MR_ACCESS_* right */
	u32 auth_key;			/* the MR's, looked up under */
	u32 flags;			/* SWNIC_MR_TARGET_* */
	/* A peer's: who it is, for MRs limited to some (REG_PEERS) */
	u32 from_key;			/* FROM_KEY: the key it came with */
	__be32 from_addr;		/* FROM_ADDR: its endpoint's address */
	u16 from_port;			/* FROM_ADDR: and port */
};

/*
 * The owning domain's own access: local rights, @addr is a virtual
 * address. Without it the access is a peer's: remote rights, addressing
 * per SWNIC_MR_REG_VIRT_ADDR. Both name the MR by (auth key, key).
 */
#define SWNIC_MR_TARGET_LOCAL		BIT(0)
/*
 * A peer's access names the auth key it came with (@from_key: the one its
 * operation named, before the transport maps it to the key the target's
 * MRs are under) and, with FROM_ADDR, the endpoint it came from. An MR
 * registered with SWNIC_MR_REG_PEERS admits only accesses whose source
 * matches one of its peers: without these flags, none.
 */
#define SWNIC_MR_TARGET_FROM_KEY	BIT(1)
#define SWNIC_MR_TARGET_FROM_ADDR	BIT(2)
#define SWNIC_MR_TARGET_FLAGS		(SWNIC_MR_TARGET_LOCAL | \
					 SWNIC_MR_TARGET_FROM_KEY | \
					 SWNIC_MR_TARGET_FROM_ADDR)

/**
 * swnic_mr_target_from() - say who a peer's access comes from
 * @t: the access
 * @auth_key: the key the peer's operation came with (0: none)
 * @addr: the peer endpoint's address (as completions report it)
 * @port: and its port
 */
static inline void swnic_mr_target_from(struct swnic_mr_target *t,
					u32 auth_key, __be32 addr, u16 port)
{
	t->flags |= SWNIC_MR_TARGET_FROM_KEY | SWNIC_MR_TARGET_FROM_ADDR;
	t->from_key = auth_key;
	t->from_addr = addr;
	t->from_port = port;
}

/* A resolved access: holds the MR and, pinned, its pages until _put(). */
struct swnic_mr_ref {
	struct swnic_mr *mr;
	struct swnic_umem *umem;	/* pinned mode, else NULL */
	u64 start;			/* byte offset of the access in the MR */
	u64 len;
	bool write;			/* the kernel writes the pages */
	/*
	 * A wire round's (set after swnic_mr_ref_get()): an ODP window whose
	 * pages do not come at the first fault-in, whose mmap lock is taken
	 * or that is invalidated meanwhile is -SWNIC_EFAULTLATER, for a later
	 * round - or -EFAULT on its @last_try (the fault deadline passed).
	 * Never a sleep, nor a wait for the mmap lock.
	 */
	bool round;
	bool last_try;
	/*
	 * Jiffies its ODP windows slept for pages or an mmap lock another
	 * process keeps, or spent on looks an invalidation undid:
	 * SWNIC_ODP_TIMEOUT_MS for the whole access.
	 */
	unsigned long stalled;
};

/*
 * Called for each page piece of an access; non-zero stops the walk. For
 * an ODP MR it runs under the MR's spinlock (the pages are only the
 * range's while no invalidation runs): it must not sleep or fault.
 */
typedef int (*swnic_mr_page_fn)(void *ctx, struct page *page,
				unsigned int offset, unsigned int len);

/* Deferred MR work (unpinning, events, frees); drained at module exit. */
extern struct workqueue_struct *swnic_mr_wq;

int swnic_mr_init(void);
void swnic_mr_exit(void);

/* chardev ioctls (the struct is the kernel's copy, see chardev.c) */
int swnic_mr_reg(struct swnic_domain *dom, void *arg);
int swnic_mr_dereg(struct swnic_domain *dom, void *arg);
int swnic_mr_query(struct swnic_domain *dom, void *arg);
int swnic_mr_refresh(struct swnic_domain *dom, void *arg);
int swnic_mr_access_test(struct swnic_domain *dom, void *arg);
int swnic_mr_bind_cntr(struct swnic_domain *dom, void *arg);
int swnic_inval_query(struct swnic_domain *dom, void *arg);
u64 swnic_mr_features(void);

/* domain lifetime (domain.c) */
int swnic_mr_domain_init(struct swnic_domain *dom);
void swnic_mr_domain_destroy(struct swnic_domain *dom);

/* data path */
int swnic_mr_ref_get(struct swnic_domain *dom, const struct swnic_mr_target *t,
		     struct swnic_mr_ref *ref);
void swnic_mr_ref_count(const struct swnic_mr_ref *ref, u32 access);
int swnic_mr_ref_walk(struct swnic_mr_ref *ref, u64 pos, u64 len,
		      swnic_mr_page_fn fn, void *ctx);
int swnic_mr_ref_copy_to(struct swnic_mr_ref *ref, u64 pos, const void *buf,
			 u64 len);
int swnic_mr_ref_copy_kmsg(struct swnic_mr_ref *ref, u64 pos,
			   const struct swnic_kmsg *km, u64 len);
int swnic_mr_ref_copy_from(struct swnic_mr_ref *ref, u64 pos, void *buf,
			   u64 len);
void swnic_mr_ref_put(struct swnic_mr_ref *ref);
int swnic_mr_ref_get_recv(struct swnic_domain *dom, u32 handle, u64 addr,
			  u64 len, struct swnic_mr_ref *ref);
int swnic_mr_ref_copy_in(struct swnic_mr_ref *ref, const void __user *usrc,
			 const void *ksrc, u64 len);
int swnic_mr_ref_copy_src_in(struct swnic_mr_ref *ref,
			     struct swnic_copy_src *src, u64 len);
u64 swnic_mr_ref_span(const struct swnic_mr_ref *ref, u64 pos, u64 *va);

/* netlink: dumps and counters */
int swnic_mr_next(struct swnic_domain *dom, unsigned long *handle,
		  struct swnic_mr_info *info);
u32 swnic_mr_domain_count(struct swnic_domain *dom);
void swnic_mr_domain_counters(struct swnic_domain *dom,
			      struct swnic_mr_counters *c);
void swnic_mr_device_counters(struct swnic_device *sdev,
			      struct swnic_mr_counters *c);

/* internal to the MR files (mr*.c, notifier.c, umem.c) */
struct swnic_mr_domain *swnic_mr_domain_get_rcu(struct swnic_domain *dom);
void swnic_mr_domain_put(struct swnic_mr_domain *mrd);
int swnic_mr_keys_init(struct swnic_mr_domain *mrd);
void swnic_mr_keys_destroy(struct swnic_mr_domain *mrd);
struct swnic_mr *swnic_mr_lookup_key(struct swnic_mr_domain *mrd,
				     u32 auth_key, u64 key);
struct swnic_mr *swnic_mr_lookup_handle(struct swnic_mr_domain *mrd,
					u32 handle);
int swnic_mr_key_assign(struct swnic_mr_domain *mrd, struct swnic_mr *mr,
			u64 user_key);
void swnic_mr_key_release(struct swnic_mr_domain *mrd, struct swnic_mr *mr);
int swnic_mr_publish(struct swnic_mr_domain *mrd, struct swnic_mr *mr);
void swnic_mr_unpublish(struct swnic_mr_domain *mrd, struct swnic_mr *mr);
void swnic_mr_put(struct swnic_mr *mr);
void swnic_mr_stat_add(struct swnic_mr_domain *mrd, size_t offset, s64 v);
void swnic_mr_info_fill(struct swnic_mr *mr, struct swnic_mr_info *info);

#define swnic_mr_stat_inc(mrd, field)					\
	swnic_mr_stat_add(mrd, offsetof(struct swnic_mr_stats, field), 1)

static inline void swnic_mr_get(struct swnic_mr *mr)
{
	kref_get(&mr->ref);
}

static inline void swnic_mr_domain_get(struct swnic_mr_domain *mrd)
{
	kref_get(&mrd->ref);
}

#endif /* _SWNIC_MR_H */
