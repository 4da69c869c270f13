/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_MMAP_H
#define _SWNIC_MMAP_H

#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/mm_types.h>

int swnic_domain_mmap(struct file *file, struct vm_area_struct *vma);

/* What an object's mapping is (swnic_mmap_prepare()). */
#define SWNIC_MAP_RING		BIT(0)	/* user space writes it: shared only */
#define SWNIC_MAP_OWNER		BIT(1)	/* its owner's: no child inherits it */

int swnic_mmap_prepare(struct vm_area_struct *vma, unsigned int how);

#endif /* _SWNIC_MMAP_H */
