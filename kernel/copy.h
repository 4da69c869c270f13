/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_COPY_H
#define _SWNIC_COPY_H

#include <linux/mm_types.h>
#include <linux/types.h>

int swnic_copy_to_mm(struct mm_struct *mm, u64 dst, const void __user *usrc,
		     const void *ksrc, size_t len);

#endif /* _SWNIC_COPY_H */
