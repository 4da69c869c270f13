/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_CHARDEV_H
#define _SWNIC_CHARDEV_H

#include <linux/fs.h>

extern const struct file_operations swnic_chardev_fops;

#endif /* _SWNIC_CHARDEV_H */
