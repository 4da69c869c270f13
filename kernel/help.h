/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_HELP_H
#define _SWNIC_HELP_H

#include <linux/types.h>

struct swnic_cq;
struct swnic_mr_ref;

int swnic_help_copy_in(struct swnic_cq *cq, struct swnic_mr_ref *ref,
		       const void __user *usrc, u64 len);
int swnic_cq_ioctl_help(struct swnic_cq *cq, void *arg);

#endif /* _SWNIC_HELP_H */
