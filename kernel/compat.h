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

#endif /* _SWNIC_COMPAT_H */
