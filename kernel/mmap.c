// SPDX-License-Identifier: GPL-2.0
/*
 * mmap of a domain's file. The offset names the object (io_uring style):
 * SWNIC_MMAP_OFFSET(type, id) in include/uapi/linux/swnic.h. One table maps
 * each type to the handler that maps objects of that type; a new mappable
 * object adds a SWNIC_MMAP_* type to the uapi header and a line here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/swnic.h>

#include "domain.h"
#include "mmap.h"
#include "notifier.h"

/**
 * struct swnic_mmap_type - how objects of one SWNIC_MMAP_* type are mapped
 * @mmap: maps object @id of @dom into @vma (whole vma, from its start);
 *	  the dispatcher already checked the owner and the offset's form
 */
struct swnic_mmap_type {
	int (*mmap)(struct swnic_domain *dom, u32 id,
		    struct vm_area_struct *vma);
};

static const struct swnic_mmap_type swnic_mmap_types[] = {
	[SWNIC_MMAP_INVAL] = { .mmap = swnic_inval_mmap },
};

/**
 * swnic_domain_mmap() - the char device's .mmap
 * @file: a domain's file
 * @vma: the new mapping; vm_pgoff carries the object's offset
 *
 * Return: 0, -EINVAL for an offset naming no object type or with stray
 * bits, -EACCES from another process than the domain's, or the type's
 * handler's error.
 */
int swnic_domain_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct swnic_domain *dom = file->private_data;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 type = (off >> SWNIC_MMAP_TYPE_SHIFT) & SWNIC_MMAP_TYPE_MASK;
	u64 id = (off >> SWNIC_MMAP_ID_SHIFT) & SWNIC_MMAP_ID_MASK;

	BUILD_BUG_ON(SWNIC_MMAP_ID_SHIFT + 16 != SWNIC_MMAP_TYPE_SHIFT);

	if (off != SWNIC_MMAP_OFFSET(type, id) ||
	    type >= ARRAY_SIZE(swnic_mmap_types) ||
	    !swnic_mmap_types[type].mmap)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;
	return swnic_mmap_types[type].mmap(dom, id, vma);
}
