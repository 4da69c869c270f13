/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_MMAP_H
#define _SWNIC_MMAP_H

#include <linux/fs.h>
#include <linux/mm_types.h>

int swnic_domain_mmap(struct file *file, struct vm_area_struct *vma);

#endif /* _SWNIC_MMAP_H */
