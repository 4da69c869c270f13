/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_CHARDEV_H
#define _SWNIC_CHARDEV_H

#include <linux/fs.h>

extern const struct file_operations swnic_chardev_fops;

void swnic_ioctl_defer_fd(void *arg, int fd, struct file *file);

#endif /* _SWNIC_CHARDEV_H */
