/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_COPY_H
#define _SWNIC_COPY_H

#include <linux/mm_types.h>
#include <linux/types.h>

/*
 * Returned (negated) by a SWNIC_COPY_NOFAULT copy that would have had to
 * fault a page in or wait for a lock. Never reaches user space: the
 * caller drops its locks, faults in (swnic_fault_in_*) and tries again.
 */
#define SWNIC_EFAULTIN		4000

/* swnic_copy_to_mm() flags */
#define SWNIC_COPY_NOFAULT	BIT(0)	/* under a lock: never sleep on memory */

int swnic_copy_to_mm(struct mm_struct *mm, u64 dst, const void __user *usrc,
		     const void *ksrc, size_t len, unsigned int flags);
int swnic_fault_in_mm(struct mm_struct *mm, u64 addr, size_t len, bool write);

#endif /* _SWNIC_COPY_H */
