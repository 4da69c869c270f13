/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_CHARDEV_H
#define _SWNIC_CHARDEV_H

#include <linux/fs.h>

struct swnic_domain;
struct swnic_ep;
struct swnic_av_file;
struct swnic_cq;

extern const struct file_operations swnic_chardev_fops;

long swnic_ioctl(unsigned int cmd, unsigned long arg, struct swnic_domain *dom,
		 struct swnic_ep *ep);
long swnic_ioctl_av(unsigned int cmd, unsigned long arg,
		    struct swnic_av_file *av);
long swnic_ioctl_cq(unsigned int cmd, unsigned long arg, struct swnic_cq *cq);

void swnic_ioctl_defer_fd(void *arg, int fd, struct file *file);
int swnic_ioctl_new_file(void *arg, const char *name,
			 const struct file_operations *fops, void *priv);

#endif /* _SWNIC_CHARDEV_H */
