// SPDX-License-Identifier: GPL-2.0
/*
 * Rings shared with user space: allocation, mapping, and the two halves of
 * the producer/consumer protocol. Everything user space can write is read
 * once, bounded and copied before use.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "mmap.h"
#include "ring.h"

/* Header layout: each index on its own cache line. */
#define SWNIC_RING_HEAD_OFF	0
#define SWNIC_RING_TAIL_OFF	64
#define SWNIC_RING_FLAGS_OFF	128
#define SWNIC_RING_ARRAY_OFF	256

/**
 * swnic_ring_init() - allocate a ring
 * @r: the ring
 * @min_entries: entries asked for; rounded up to a power of two (0: 64)
 * @max_entries: the device's limit; more is EINVAL
 * @entry_size: bytes per entry, a multiple of 8
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int swnic_ring_init(struct swnic_ring *r, u32 min_entries, u32 max_entries,
		    u32 entry_size)
{
	u32 entries = min_entries ? min_entries : 64;

	if (entries > max_entries)
		return -EINVAL;
	entries = roundup_pow_of_two(entries);
	memset(r, 0, sizeof(*r));
	r->entries = entries;
	r->entry_size = entry_size;
	r->size = PAGE_ALIGN(SWNIC_RING_ARRAY_OFF + (size_t)entries * entry_size);
	spin_lock_init(&r->flags_lock);
	/*
	 * Charged to the caller's memory cgroup: user space decides how
	 * many rings of what size exist. vmalloc_user() cannot account,
	 * so the pages are mapped one by one (swnic_ring_mmap()).
	 */
	r->mem = __vmalloc(r->size,
			   GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (!r->mem)
		return -ENOMEM;
	r->head = r->mem + SWNIC_RING_HEAD_OFF;
	r->tail = r->mem + SWNIC_RING_TAIL_OFF;
	r->flags = r->mem + SWNIC_RING_FLAGS_OFF;
	r->array = r->mem + SWNIC_RING_ARRAY_OFF;
	return 0;
}

void swnic_ring_free(struct swnic_ring *r)
{
	vfree(r->mem);
	r->mem = NULL;
}

void swnic_ring_info(const struct swnic_ring *r, u64 mmap_offset,
		     struct swnic_ring_info *info)
{
	info->mmap_offset = mmap_offset;
	info->mmap_size = r->size;
	info->head = SWNIC_RING_HEAD_OFF;
	info->tail = SWNIC_RING_TAIL_OFF;
	info->flags = SWNIC_RING_FLAGS_OFF;
	info->array = SWNIC_RING_ARRAY_OFF;
	info->entries = r->entries;
	info->entry_size = r->entry_size;
}

/*
 * Maps the whole ring; the vma's offset has been decoded by the caller.
 * Each page of the vmalloc area is inserted (and referenced by the
 * mapping), as remap_vmalloc_range() would for a vmalloc_user() area.
 *
 * A ring is its owner's alone (the callers check who maps it), and so is
 * the mapping: a child forked afterwards does not inherit it
 * (VM_DONTCOPY, what rdma-core's MADV_DONTFORK does for verbs' queues).
 * Inherited, the child's SQEs would run on its parent's memory and its
 * RQEs would place peers' messages there. Only the owner can undo it
 * (madvise(MADV_DOFORK) on its own mapping). A ring is mapped shared, and
 * never executable (swnic_mmap_prepare()).
 */
int swnic_ring_mmap(struct swnic_ring *r, struct vm_area_struct *vma)
{
	unsigned long off;
	int ret;

	if (vma->vm_end - vma->vm_start != r->size)
		return -EINVAL;
	ret = swnic_mmap_prepare(vma, SWNIC_MAP_RING | SWNIC_MAP_OWNER);
	if (ret)
		return ret;
	for (off = 0; off < r->size; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(r->mem + off));
		if (ret)
			return ret;
	}
	return 0;
}

static void *swnic_ring_slot(struct swnic_ring *r, u32 idx)
{
	return r->array + (size_t)(idx & (r->entries - 1)) * r->entry_size;
}

static void swnic_ring_break(struct swnic_ring *r)
{
	WRITE_ONCE(r->broken, true);
	swnic_ring_set_flags(r, SWNIC_RING_F_BROKEN, 0);
}

/**
 * swnic_ring_avail() - entries user space has produced and the kernel not
 * yet consumed
 * @r: a ring the kernel consumes, with its owner's lock held (the one
 *     that serialises swnic_ring_consume(): @r->kidx is stable)
 *
 * The producer index is read once and remembered (swnic_ring_changed()).
 * Only a consumer may call this: a lockless caller could pair a tail
 * read before a concurrent consumption with the kidx after it, see
 * "tail - kidx" wrap and break a sane ring.
 *
 * Return: the count, or -EPIPE if the producer index is impossible (the
 * ring is then broken for good).
 */
int swnic_ring_avail(struct swnic_ring *r)
{
	u32 tail, n;

	if (r->broken)
		return -EPIPE;
	/* Pairs with user space's store-release of tail after the entries. */
	tail = smp_load_acquire(r->tail);
	n = tail - r->kidx;
	if (n > r->entries) {
		swnic_ring_break(r);
		return -EPIPE;
	}
	/*
	 * The furthest index seen: one moved back and forth again is no
	 * new entry (swnic_ring_changed()), or flipping it would keep an
	 * engine that cannot progress polling for good.
	 */
	if ((s32)(tail - r->seen) > 0)
		WRITE_ONCE(r->seen, tail);
	return n;
}

/**
 * swnic_ring_changed() - has user space produced since the last look?
 * @r: a ring the kernel consumes; no lock needed
 *
 * True if the producer index is past the furthest one swnic_ring_avail()
 * read: entries the consumer has not looked at yet. Entries it did look
 * at but could not consume (a full CQ, a target out of resources) do not
 * count: they wait for a doorbell. Nor does an index moved back (only a
 * hostile producer does that; what it then publishes again below the
 * furthest index waits for a doorbell too). Reads only; a broken ring
 * never changes.
 */
bool swnic_ring_changed(const struct swnic_ring *r)
{
	if (READ_ONCE(r->broken))
		return false;
	return (s32)(READ_ONCE(*r->tail) - READ_ONCE(r->seen)) > 0;
}

/*
 * Entries are copied a word at a time: their size is a multiple of 8 and
 * small (64 or 128 bytes), where the kernel's memcpy() is a `rep movsb`
 * whose start-up costs more than the copy (and which TCG emulates byte by
 * byte). Every completion and every SQE and RQE crosses here.
 */
static void swnic_ring_copy(void *dst, const void *src, u32 size)
{
	u64 *d = dst;
	const u64 *s = src;
	u32 i;

	for (i = 0; i < size / sizeof(u64); i++)
		d[i] = s[i];
}

/* Copies the next entry out; only valid after swnic_ring_avail() > 0. */
void swnic_ring_peek(struct swnic_ring *r, void *entry)
{
	swnic_ring_copy(entry, swnic_ring_slot(r, r->kidx), r->entry_size);
}

/* Copies the @n-th unconsumed entry out; valid for @n < swnic_ring_avail(). */
void swnic_ring_peek_at(struct swnic_ring *r, u32 n, void *entry)
{
	swnic_ring_copy(entry, swnic_ring_slot(r, r->kidx + n), r->entry_size);
}

/* Releases the peeked entry's slot back to user space. */
void swnic_ring_consume(struct swnic_ring *r)
{
	r->kidx++;
	/* The entry was copied out before the slot is handed back. */
	smp_store_release(r->head, r->kidx);
}

/* Free slots in a ring the kernel produces into. */
u32 swnic_ring_space(struct swnic_ring *r)
{
	/* The consumer is done with a slot before it releases it. */
	u32 head = smp_load_acquire(r->head);
	u32 used = r->kidx - head;

	/* A head ahead of our tail, or too far behind, leaves no room. */
	if (used > r->entries)
		return 0;
	return r->entries - used;
}

/**
 * swnic_ring_produce_slot() - the slot the next entry is written into
 * @r: a ring the kernel produces into
 *
 * The caller writes the whole entry (r->entry_size bytes: no stale bytes
 * of an earlier one) and then publishes it with swnic_ring_produce_end();
 * user space reads the slot only after that.
 *
 * Return: the slot, or NULL if the consumer has not released one.
 */
void *swnic_ring_produce_slot(struct swnic_ring *r)
{
	if (!swnic_ring_space(r))
		return NULL;
	return swnic_ring_slot(r, r->kidx);
}

/* Publishes the entry written into swnic_ring_produce_slot()'s slot. */
void swnic_ring_produce_end(struct swnic_ring *r)
{
	r->kidx++;
	/* Pairs with user space's load-acquire of tail before the entry. */
	smp_store_release(r->tail, r->kidx);
}

/* Has user space consumed everything the kernel produced? */
bool swnic_ring_empty(struct swnic_ring *r)
{
	return READ_ONCE(*r->head) == r->kidx;
}

/*
 * The flags word is kernel-owned: user space writes to it are overwritten.
 * Callers hold different locks (the SQ's NEED_WAKEUP: the engine and the
 * doorbell under sq_lock; the RQ's: rx_lock; BROKEN: whoever consumes;
 * the CQ's OVERFLOW: cq->lock): the read-modify-write of @kflags and the
 * store that publishes it are one step under @flags_lock, so neither a
 * concurrent change nor the order of two stores can lose a flag.
 * Context: a task (never an interrupt: the wire's timers only wake its
 * worker); the caller's barriers order it against other words.
 */
void swnic_ring_set_flags(struct swnic_ring *r, u32 set, u32 clear)
{
	spin_lock(&r->flags_lock);
	r->kflags = (r->kflags & ~clear) | set;
	WRITE_ONCE(*r->flags, r->kflags);
	spin_unlock(&r->flags_lock);
}
