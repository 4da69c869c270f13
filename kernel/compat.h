/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel APIs that differ between the kernels swnic supports
 * (Debian's 6.1 and 6.12). Nothing else may test LINUX_VERSION_CODE.
 */
#ifndef _SWNIC_COMPAT_H
#define _SWNIC_COMPAT_H

#include <linux/version.h>

/* 6.2 made struct class's devnode callback take a const struct device. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SWNIC_DEVNODE_CONST const
#else
#define SWNIC_DEVNODE_CONST
#endif

/* 6.5 dropped the vmas argument of pin_user_pages_remote(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define swnic_pin_user_pages_remote(mm, start, nr, flags, pages) \
	pin_user_pages_remote(mm, start, nr, flags, pages, NULL)
#else
#define swnic_pin_user_pages_remote(mm, start, nr, flags, pages) \
	pin_user_pages_remote(mm, start, nr, flags, pages, NULL, NULL)
#endif

/* 6.6 moved a dump's parsed attributes into a struct genl_info. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define swnic_genl_dump_attrs(cb)	(genl_info_dump(cb)->attrs)
#else
#define swnic_genl_dump_attrs(cb)	(genl_dumpit_info(cb)->attrs)
#endif

/* 6.3 made vma->vm_flags read-only: changes go through helpers. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define swnic_vm_flags_set(vma, flags)		vm_flags_set(vma, flags)
#define swnic_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define swnic_vm_flags_set(vma, flags)		((vma)->vm_flags |= (flags))
#define swnic_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

#endif /* _SWNIC_COMPAT_H */
