// SPDX-License-Identifier: GPL-2.0
/*
 * The character device: open = a new domain, ioctl = control commands on
 * it, release = the domain's end. Every ioctl goes through one table that
 * enforces the extensible-struct contract of include/uapi/linux/swnic.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "chardev.h"
#include "device.h"
#include "domain.h"

static int swnic_query_device(struct swnic_domain *dom, void *arg)
{
	struct swnic_query_device *q = arg;
	struct swnic_device *sdev = dom->sdev;

	if (q->flags)
		return -EOPNOTSUPP;
	if (q->__reserved)
		return -EINVAL;

	q->features = SWNIC_FEAT_QUERY;
	strscpy(q->name, sdev->name, sizeof(q->name));
	q->dev_index = sdev->index;
	q->domain_id = dom->id;
	q->page_size = PAGE_SIZE;

	mutex_lock(&sdev->lock);
	q->ifindex = sdev->ifindex;
	q->max_mr = sdev->limits.max_mr;
	q->max_ep = sdev->limits.max_ep;
	q->max_cq = sdev->limits.max_cq;
	q->max_pinned = sdev->limits.max_pinned;
	mutex_unlock(&sdev->lock);

	q->max_eq = SWNIC_MAX_EQ;
	q->max_cntr = SWNIC_MAX_CNTR;
	q->max_av = SWNIC_MAX_AV;
	q->max_cq_entries = SWNIC_MAX_CQ_ENTRIES;
	q->max_sq_entries = SWNIC_MAX_SQ_ENTRIES;
	q->max_rq_entries = SWNIC_MAX_RQ_ENTRIES;
	q->max_iov = SWNIC_MAX_IOV;
	q->max_rma_iov = SWNIC_MAX_IOV;
	q->max_inject = SWNIC_MAX_INJECT;
	q->max_err_data = SWNIC_MAX_ERR_DATA;
	q->mr_key_size = sizeof(u64);
	q->cq_data_size = sizeof(u64);
	q->mr_iov_limit = 1;
	q->max_auth_key_size = sizeof(u32);
	q->max_msg_size = SWNIC_MAX_MSG_SIZE;
	q->max_mr_size = SWNIC_MAX_MR_SIZE;
	return 0;
}

/**
 * struct swnic_ioctl_op - one ioctl command
 * @size: the kernel's size of the command's struct
 * @min_size: the struct's first released size; anything shorter is EINVAL
 * @handler: runs on the kernel's copy; its output is copied back
 */
struct swnic_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	int (*handler)(struct swnic_domain *dom, void *arg);
};

#define SWNIC_IOCTL_OP(_cmd, _fn, _struct, _last)			\
	[SWNIC_CMD_##_cmd - SWNIC_CMD_BASE] = {				\
		.size = sizeof(_struct),				\
		.min_size = offsetofend(_struct, _last),		\
		.handler = _fn,						\
	}

/* Union of every command's struct: the kernel's copy lives on the stack. */
union swnic_ioctl_buf {
	struct swnic_query_device query_device;
};

static const struct swnic_ioctl_op swnic_ioctl_ops[] = {
	SWNIC_IOCTL_OP(QUERY_DEVICE, swnic_query_device,
		       struct swnic_query_device, max_pinned),
};

static long swnic_chardev_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	struct swnic_domain *dom = file->private_data;
	void __user *uarg = (void __user *)arg;
	const struct swnic_ioctl_op *op;
	union swnic_ioctl_buf buf;
	unsigned int nr;
	u32 usize;
	int ret;

	if (_IOC_TYPE(cmd) != SWNIC_TYPE || _IOC_DIR(cmd) != _IOC_NONE ||
	    _IOC_SIZE(cmd))
		return -ENOTTY;
	nr = _IOC_NR(cmd);
	if (nr < SWNIC_CMD_BASE || nr >= SWNIC_CMD_BASE + ARRAY_SIZE(swnic_ioctl_ops))
		return -ENOTTY;
	op = &swnic_ioctl_ops[nr - SWNIC_CMD_BASE];
	if (!op->handler)
		return -ENOTTY;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;

	ret = op->handler(dom, &buf);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &buf, min_t(u32, usize, op->size)))
		return -EFAULT;
	return 0;
}

static int swnic_chardev_open(struct inode *inode, struct file *file)
{
	struct swnic_device *sdev =
		container_of(inode->i_cdev, struct swnic_device, cdev);
	struct swnic_domain *dom;
	int ret;

	/* A domain belongs to a process's address space. */
	if (!current->mm)
		return -EINVAL;
	ret = swnic_domain_open(sdev, &dom);
	if (ret)
		return ret;
	file->private_data = dom;
	return nonseekable_open(inode, file);
}

static int swnic_chardev_release(struct inode *inode, struct file *file)
{
	swnic_domain_close(file->private_data);
	return 0;
}

const struct file_operations swnic_chardev_fops = {
	.owner = THIS_MODULE,
	.open = swnic_chardev_open,
	.release = swnic_chardev_release,
	.unlocked_ioctl = swnic_chardev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};
