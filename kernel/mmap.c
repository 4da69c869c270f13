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

#include "compat.h"
#include "domain.h"
#include "mmap.h"
#include "notifier.h"

/**
 * swnic_mmap_prepare() - the rules every swnic mapping follows
 * @vma: a new mapping of a ring, a counter, the invalidation page or an AV,
 *	 whose offset and size its handler checked
 * @how: SWNIC_MAP_* flags
 *
 * No mapping is executable: PROT_EXEC is refused, and VM_MAYEXEC cleared
 * so that mprotect() cannot add it later. A ring (SWNIC_MAP_RING), which
 * user space and the kernel both write, is mapped shared only: in a
 * private mapping a write copies the page, and from then on neither side
 * sees the other's indices and entries. Every other object is read-only,
 * now and later (VM_MAYWRITE cleared), and maps private or shared alike:
 * never written, its pages are never copied. An owner's object
 * (SWNIC_MAP_OWNER) is not inherited by a child forked afterwards
 * (VM_DONTCOPY; only the owner can undo it, with MADV_DOFORK). No mapping
 * grows (mremap()) or lands in a core dump.
 *
 * Return: 0, -EPERM (executable, but for READ_IMPLIES_EXEC's PROT_EXEC,
 * dropped), -EINVAL (a ring mapped private) or
 * -EACCES (a read-only object mapped writable).
 */
int swnic_mmap_prepare(struct vm_area_struct *vma, unsigned int how)
{
	vm_flags_t set = VM_DONTEXPAND | VM_DONTDUMP;

	/*
	 * A process whose personality has READ_IMPLIES_EXEC (setarch -X)
	 * gets PROT_EXEC added to every readable mapping it asks for: not
	 * asked for, it is dropped instead of refused.
	 */
	if ((vma->vm_flags & VM_EXEC) &&
	    (current->personality & READ_IMPLIES_EXEC))
		swnic_vm_flags_clear(vma, VM_EXEC);
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (how & SWNIC_MAP_RING) {
		if (!(vma->vm_flags & VM_SHARED))
			return -EINVAL;
	} else {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		swnic_vm_flags_clear(vma, VM_MAYWRITE);
	}
	if (how & SWNIC_MAP_OWNER)
		set |= VM_DONTCOPY;
	swnic_vm_flags_clear(vma, VM_MAYEXEC);
	swnic_vm_flags_set(vma, set);
	return 0;
}

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
