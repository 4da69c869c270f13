/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_RING_H
#define _SWNIC_RING_H

#include <linux/mm_types.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/swnic_queue.h>

/*
 * A ring shared with user space (layout in include/uapi/linux/swnic_queue.h).
 *
 * Producer/consumer contract: for the side the kernel owns it keeps the
 * index in @kidx and only ever publishes it (smp_store_release); it never
 * reads its own index back from shared memory. The other side's index is
 * read once per batch (smp_load_acquire or READ_ONCE), bounded against
 * @kidx, and entries are copied out before they are validated. Callers
 * serialise all use of one ring's indices (the owning object's lock); the
 * only lockless readers are swnic_ring_changed() and swnic_ring_is_broken()
 * (the engine deciding whether to sleep), which modify nothing. The flags
 * word has writers under different locks (the ring's owner, the engine):
 * it is updated under @flags_lock so that no change is lost.
 */
struct swnic_ring {
	void *mem;		/* __vmalloc(ACCOUNT): header + entries */
	size_t size;		/* bytes of @mem, page aligned */
	u32 entries;		/* power of two */
	u32 entry_size;		/* bytes */
	u32 kidx;		/* the kernel's own index (head or tail) */
	u32 seen;		/* consumer: furthest producer index read */
	u32 kicked;		/* consumer: a doorbell since the last round */
	spinlock_t flags_lock;	/* @kflags and the shared flags word */
	u32 kflags;		/* the kernel's copy of the flags word */
	bool broken;		/* a hostile index was seen: ring is dead */
	u32 *head;		/* shared: consumer index */
	u32 *tail;		/* shared: producer index */
	u32 *flags;		/* shared: SWNIC_RING_F_* (kernel-written) */
	u8 *array;		/* shared: entry 0 */
};

int swnic_ring_init(struct swnic_ring *r, u32 min_entries, u32 max_entries,
		    u32 entry_size);
void swnic_ring_free(struct swnic_ring *r);
void swnic_ring_info(const struct swnic_ring *r, u64 mmap_offset,
		     struct swnic_ring_info *info);
int swnic_ring_mmap(struct swnic_ring *r, struct vm_area_struct *vma);

/* Consumer side (SQ, RQ: the kernel consumes). */
int swnic_ring_avail(struct swnic_ring *r);
void swnic_ring_peek(struct swnic_ring *r, void *entry);
void swnic_ring_peek_at(struct swnic_ring *r, u32 n, void *entry);

/* The array slot of the @n-th entry not yet consumed. */
static inline u32 swnic_ring_slot_index(const struct swnic_ring *r, u32 n)
{
	return (r->kidx + n) & (r->entries - 1);
}

void swnic_ring_consume(struct swnic_ring *r);
bool swnic_ring_changed(const struct swnic_ring *r);

/*
 * A doorbell says "look again" even with no new entries (CQ slots were
 * freed, a target has room again): the engine must not park the ring's
 * endpoint on what it saw before the doorbell. Ordered after the caller's
 * earlier stores, and against the engine's swnic_ring_take_kick().
 */
static inline void swnic_ring_kick(struct swnic_ring *r)
{
	/* After user space's stores; pairs with the xchg() below. */
	smp_store_release(&r->kicked, 1);
}

/* The engine, before a round: clears and returns the kick (full barrier). */
static inline bool swnic_ring_take_kick(struct swnic_ring *r)
{
	return xchg(&r->kicked, 0);
}

static inline bool swnic_ring_kicked(const struct swnic_ring *r)
{
	return READ_ONCE(r->kicked);
}

/* Lockless: has the ring been marked broken (it never recovers)? */
static inline bool swnic_ring_is_broken(const struct swnic_ring *r)
{
	return READ_ONCE(r->broken);
}

/* Producer side (CQ: the kernel produces). */
u32 swnic_ring_space(struct swnic_ring *r);
void *swnic_ring_produce_slot(struct swnic_ring *r);
void swnic_ring_produce_end(struct swnic_ring *r);
bool swnic_ring_empty(struct swnic_ring *r);

void swnic_ring_set_flags(struct swnic_ring *r, u32 set, u32 clear);

/* The flags word as the kernel last set it (user writes do not count). */
static inline u32 swnic_ring_kflags(const struct swnic_ring *r)
{
	return READ_ONCE(r->kflags);
}

#endif /* _SWNIC_RING_H */
