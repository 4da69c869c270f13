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
	r->mem = vmalloc_user(r->size);
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

/* Maps the whole ring; the vma's offset has been decoded by the caller. */
int swnic_ring_mmap(struct swnic_ring *r, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != r->size)
		return -EINVAL;
	return remap_vmalloc_range(vma, r->mem, 0);
}

static void *swnic_ring_slot(struct swnic_ring *r, u32 idx)
{
	return r->array + (size_t)(idx & (r->entries - 1)) * r->entry_size;
}

static void swnic_ring_break(struct swnic_ring *r)
{
	r->broken = true;
	swnic_ring_set_flags(r, SWNIC_RING_F_BROKEN, 0);
}

/**
 * swnic_ring_avail() - entries user space has produced and the kernel not
 * yet consumed
 * @r: a ring the kernel consumes
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
	return n;
}

/* Copies the next entry out; only valid after swnic_ring_avail() > 0. */
void swnic_ring_peek(struct swnic_ring *r, void *entry)
{
	memcpy(entry, swnic_ring_slot(r, r->kidx), r->entry_size);
}

/* Copies the @n-th unconsumed entry out; valid for @n < swnic_ring_avail(). */
void swnic_ring_peek_at(struct swnic_ring *r, u32 n, void *entry)
{
	memcpy(entry, swnic_ring_slot(r, r->kidx + n), r->entry_size);
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
	u32 head = READ_ONCE(*r->head);
	u32 used = r->kidx - head;

	/* A head ahead of our tail, or too far behind, leaves no room. */
	if (used > r->entries)
		return 0;
	return r->entries - used;
}

/**
 * swnic_ring_produce() - publish one entry
 * @r: a ring the kernel produces into
 * @entry: r->entry_size bytes
 *
 * Return: 0, or -ENOSPC if the consumer has not released a slot.
 */
int swnic_ring_produce(struct swnic_ring *r, const void *entry)
{
	if (!swnic_ring_space(r))
		return -ENOSPC;
	memcpy(swnic_ring_slot(r, r->kidx), entry, r->entry_size);
	r->kidx++;
	/* Pairs with user space's load-acquire of tail before the entry. */
	smp_store_release(r->tail, r->kidx);
	return 0;
}

/* Has user space consumed everything the kernel produced? */
bool swnic_ring_empty(struct swnic_ring *r)
{
	return READ_ONCE(*r->head) == r->kidx;
}

/* The flags word is kernel-owned: user space writes to it are overwritten. */
void swnic_ring_set_flags(struct swnic_ring *r, u32 set, u32 clear)
{
	r->kflags = (r->kflags & ~clear) | set;
	WRITE_ONCE(*r->flags, r->kflags);
}
