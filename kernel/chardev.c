// SPDX-License-Identifier: GPL-2.0
/*
 * The character device: open = a new domain, ioctl = control commands on
 * it, release = the domain's end. Every ioctl goes through one table that
 * enforces the extensible-struct contract of include/uapi/linux/swnic.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/ipv6.h>

#include "av.h"
#include "chardev.h"
#include "cntr.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "ep.h"
#include "help.h"
#include "mmap.h"
#include "mr.h"
#include "service.h"
#include "trig.h"
#include "udp.h"

static int swnic_query_device(struct swnic_domain *dom, void *arg)
{
	struct swnic_query_device *q = arg;
	struct swnic_device *sdev = dom->sdev;

	if (q->flags)
		return -EOPNOTSUPP;
	if (q->__reserved)
		return -EINVAL;

	q->features = SWNIC_FEAT_QUERY | SWNIC_FEAT_AUTH_KEY |
		      SWNIC_FEAT_EP_AUTH_KEYS | SWNIC_FEAT_RECV_KEY |
		      SWNIC_FEAT_WIRE | SWNIC_FEAT_ATOMIC | SWNIC_FEAT_FENCE |
		      SWNIC_FEAT_MR_CNTR | SWNIC_FEAT_TRIGGER | SWNIC_FEAT_DSCP |
		      SWNIC_FEAT_SHARED_AV |
		      SWNIC_FEAT_PORT_BLOCK | SWNIC_FEAT_TRIG_RECV |
		      SWNIC_FEAT_SRX | SWNIC_FEAT_WIRE_POLL |
		      SWNIC_FEAT_RECV_MR | SWNIC_FEAT_COPY_HELP |
		      SWNIC_FEAT_DB_SQ | SWNIC_FEAT_CNTR_POLL |
		      SWNIC_FEAT_EP_PEER | SWNIC_FEAT_TRIG_CANCEL_SUM |
		      SWNIC_FEAT_CANCEL_TRIG |
		      (ipv6_mod_enabled() ? SWNIC_FEAT_WIRE_IPV6 : 0) |
		      swnic_mr_features();
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
	q->max_rma_iov = 1;		/* one raddr/rkey per SQE */
	q->max_inject = SWNIC_MAX_INJECT;
	q->max_err_data = SWNIC_MAX_ERR_DATA;
	q->mr_key_size = sizeof(u64);
	q->cq_data_size = sizeof(u64);
	q->mr_iov_limit = SWNIC_MR_IOV_MAX;
	q->max_auth_key_size = sizeof(u32);
	q->max_msg_size = SWNIC_MAX_MSG_SIZE;
	q->max_mr_size = SWNIC_MAX_MR_SIZE;
	return 0;
}

/**
 * struct swnic_ioctl_op - one ioctl command, of the device fd or of an
 * object's fd: one table, one extensible-struct contract for all
 * @size: the kernel's size of the command's struct
 * @min_size: the struct's first released size; anything shorter is EINVAL
 * @handler: device fd: runs on the kernel's copy; its output is copied back
 * @ep_handler: the same, for a command on an endpoint fd
 * @av_handler: the same, for a command on a shared AV's fd
 * @cq_handler: the same, for a command on a CQ's fd
 * @datapath: the doorbell and CQ help, whose struct is not probed for
 *	      writing before they run (swnic_ioctl_run())
 */
struct swnic_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	bool datapath;
	int (*handler)(struct swnic_domain *dom, void *arg);
	int (*ep_handler)(struct swnic_ep *ep, void *arg);
	int (*av_handler)(struct swnic_av_file *av, void *arg);
	int (*cq_handler)(struct swnic_cq *cq, void *arg);
};

/*
 * A command's struct must fit the kernel's copy (union swnic_ioctl_buf,
 * which lists them): else the table does not build.
 */
#define SWNIC_IOCTL_ENTRY(_cmd, _struct, _last, ...)			\
	[SWNIC_CMD_##_cmd - SWNIC_CMD_BASE] = {				\
		.size = sizeof(_struct) + BUILD_BUG_ON_ZERO(sizeof(_struct) >	\
				sizeof(union swnic_ioctl_buf)),		\
		.min_size = offsetofend(_struct, _last),		\
		__VA_ARGS__						\
	}

#define SWNIC_IOCTL_OP(_cmd, _fn, _struct, _last, ...)			\
	SWNIC_IOCTL_ENTRY(_cmd, _struct, _last, .handler = _fn, __VA_ARGS__)
#define SWNIC_IOCTL_EP_OP(_cmd, _fn, _struct, _last, ...)		\
	SWNIC_IOCTL_ENTRY(_cmd, _struct, _last, .ep_handler = _fn, __VA_ARGS__)
#define SWNIC_IOCTL_AV_OP(_cmd, _fn, _struct, _last, ...)		\
	SWNIC_IOCTL_ENTRY(_cmd, _struct, _last, .av_handler = _fn, __VA_ARGS__)
#define SWNIC_IOCTL_CQ_OP(_cmd, _fn, _struct, _last, ...)		\
	SWNIC_IOCTL_ENTRY(_cmd, _struct, _last, .cq_handler = _fn, __VA_ARGS__)

/* Union of every command's struct: the kernel's copy lives on the stack. */
union swnic_ioctl_buf {
	u32 size;			/* the first word of every struct */
	struct swnic_query_device query_device;
	struct swnic_mr_reg mr_reg;
	struct swnic_mr_dereg mr_dereg;
	struct swnic_mr_query mr_query;
	struct swnic_mr_refresh mr_refresh;
	struct swnic_mr_access mr_access;
	struct swnic_inval_query inval_query;
	struct swnic_cq_create cq_create;
	struct swnic_ep_create ep_create;
	struct swnic_auth_key auth_key;
	struct swnic_cntr_create cntr_create;
	struct swnic_ep_doorbell ep_doorbell;
	struct swnic_ep_cancel ep_cancel;
	struct swnic_ep_peek ep_peek;
	struct swnic_ep_auth_key ep_auth_key;
	struct swnic_trig_recv trig_recv;
	struct swnic_cq_help cq_help;
	struct swnic_mr_bind_cntr mr_bind_cntr;
	struct swnic_cntr_update cntr_update;
	struct swnic_trig_cntr trig_cntr;
	struct swnic_trig_cancel trig_cancel;
	struct swnic_av_open av_open;
	struct swnic_av_write av_write;
	struct swnic_port_block port_block;
	struct swnic_addr6 addr6;
	struct swnic_ep_peer ep_peer;
};

/*
 * One ioctl call: the kernel's copy of the struct, and a file descriptor
 * the handler created for user space. The fd is installed only after the
 * struct naming it reached user space, so a failed copy leaks nothing.
 */
struct swnic_ioctl_call {
	union swnic_ioctl_buf buf;	/* first: handlers get &buf */
	struct file *file;
	int fd;
};

/**
 * swnic_ioctl_defer_fd() - hand a new object's file to user space
 * @arg: the handler's argument (the struct being answered)
 * @fd: a reserved fd (get_unused_fd_flags)
 * @file: the file to install at @fd once the answer is copied out
 *
 * If the copy-out fails, @file is released and @fd freed instead.
 */
void swnic_ioctl_defer_fd(void *arg, int fd, struct file *file)
{
	struct swnic_ioctl_call *call =
		container_of(arg, struct swnic_ioctl_call, buf);

	call->fd = fd;
	call->file = file;
}

/**
 * swnic_ioctl_new_file() - a new object's file, for user space
 * @arg: the handler's argument (the struct being answered)
 * @name: the anon inode's name
 * @fops: the file's operations
 * @priv: its private data (the object; the file's release drops it)
 *
 * Reserves an fd and makes the file, which is installed once the answer
 * reached user space (swnic_ioctl_defer_fd()). The handler must not fail
 * after this succeeded.
 *
 * Return: the fd to report, or a negative errno (nothing left to undo).
 */
int swnic_ioctl_new_file(void *arg, const char *name,
			 const struct file_operations *fops, void *priv)
{
	struct file *file;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	file = anon_inode_getfile(name, fops, priv, O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	swnic_ioctl_defer_fd(arg, fd, file);
	return fd;
}

static const struct swnic_ioctl_op swnic_ioctl_ops[] = {
	SWNIC_IOCTL_OP(QUERY_DEVICE, swnic_query_device,
		       struct swnic_query_device, max_pinned),
	SWNIC_IOCTL_OP(MR_REG, swnic_mr_reg, struct swnic_mr_reg, __reserved),
	SWNIC_IOCTL_OP(MR_DEREG, swnic_mr_dereg,
		       struct swnic_mr_dereg, __reserved),
	SWNIC_IOCTL_OP(MR_QUERY, swnic_mr_query, struct swnic_mr_query, device),
	SWNIC_IOCTL_OP(MR_REFRESH, swnic_mr_refresh,
		       struct swnic_mr_refresh, state),
	SWNIC_IOCTL_OP(MR_ACCESS, swnic_mr_access_test,
		       struct swnic_mr_access, __reserved),
	SWNIC_IOCTL_OP(INVAL_QUERY, swnic_inval_query,
		       struct swnic_inval_query, __reserved),
	SWNIC_IOCTL_OP(CQ_CREATE, swnic_cq_create,
		       struct swnic_cq_create, ring),
	SWNIC_IOCTL_OP(EP_CREATE, swnic_ep_create,
		       struct swnic_ep_create, rq),
	SWNIC_IOCTL_OP(AUTH_KEY, swnic_domain_set_auth_key,
		       struct swnic_auth_key, svc_id),
	SWNIC_IOCTL_OP(CNTR_CREATE, swnic_cntr_create,
		       struct swnic_cntr_create, __reserved),
	SWNIC_IOCTL_EP_OP(EP_DOORBELL, swnic_ep_ioctl_doorbell,
			  struct swnic_ep_doorbell, flags, .datapath = true),
	SWNIC_IOCTL_EP_OP(EP_CANCEL, swnic_ep_ioctl_cancel,
			  struct swnic_ep_cancel, context),
	SWNIC_IOCTL_EP_OP(EP_PEEK, swnic_ep_ioctl_peek,
			  struct swnic_ep_peek, __reserved),
	SWNIC_IOCTL_EP_OP(EP_AUTH_KEY, swnic_ep_ioctl_auth_key,
			  struct swnic_ep_auth_key, index),
	SWNIC_IOCTL_OP(MR_BIND_CNTR, swnic_mr_bind_cntr,
		       struct swnic_mr_bind_cntr, __reserved),
	SWNIC_IOCTL_OP(CNTR_UPDATE, swnic_trig_ioctl_cntr_update,
		       struct swnic_cntr_update, value),
	SWNIC_IOCTL_OP(TRIG_CNTR, swnic_trig_ioctl_cntr,
		       struct swnic_trig_cntr, __reserved),
	SWNIC_IOCTL_OP(TRIG_CANCEL, swnic_trig_ioctl_cancel,
		       struct swnic_trig_cancel, cookie),
	SWNIC_IOCTL_OP(AV_OPEN, swnic_av_open_ioctl,
		       struct swnic_av_open, mmap_size),
	SWNIC_IOCTL_AV_OP(AV_WRITE, swnic_av_write_ioctl,
			  struct swnic_av_write, entries),
	SWNIC_IOCTL_OP(PORT_BLOCK, swnic_port_block_ioctl,
		       struct swnic_port_block, __reserved),
	SWNIC_IOCTL_OP(ADDR6, swnic_udp_ioctl_addr6,
		       struct swnic_addr6, name),
	SWNIC_IOCTL_EP_OP(TRIG_RECV, swnic_trig_ioctl_recv,
			  struct swnic_trig_recv, rqe),
	SWNIC_IOCTL_CQ_OP(CQ_HELP, swnic_cq_ioctl_help,
			  struct swnic_cq_help, copied, .datapath = true),
	SWNIC_IOCTL_EP_OP(EP_PEER, swnic_ep_ioctl_peer,
			  struct swnic_ep_peer, __reserved),
};

/*
 * One ioctl on a device fd (@dom), an endpoint fd (@ep), a shared AV's fd
 * (@av) or a CQ fd (@cq): exactly one is set. Return: the handler's answer; -ENOTTY for
 * a command of another kind of fd; -EINVAL, -E2BIG, -EFAULT for a struct
 * that breaks the contract.
 */
static long swnic_ioctl_run(unsigned int cmd, unsigned long arg,
			    struct swnic_domain *dom, struct swnic_ep *ep,
			    struct swnic_av_file *av, struct swnic_cq *cq)
{
	void __user *uarg = (void __user *)arg;
	const struct swnic_ioctl_op *op;
	struct swnic_ioctl_call call = { .fd = -1 };
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
	if (dom ? !op->handler : ep ? !op->ep_handler :
	    av ? !op->av_handler : !op->cq_handler)
		return -ENOTTY;

	/*
	 * Every struct starts with its size. The common case, a caller of
	 * this ABI's size, is one read; otherwise (an older or newer
	 * caller's size, or a struct that is not all there to read) the size
	 * is read first and the struct copied to its rules. The one read
	 * never faults: past a shorter struct it must not fault in (or wait
	 * on a userfaultfd for) memory that the caller's struct does not
	 * cover.
	 */
	if (!copy_from_user_nofault(&call.buf, uarg, op->size) &&
	    call.buf.size == op->size) {
		usize = op->size;
	} else {
		if (get_user(usize, (u32 __user *)uarg))
			return -EFAULT;
		if (usize < op->min_size)
			return -EINVAL;
		ret = copy_struct_from_user(&call.buf, op->size, uarg, usize);
		if (ret)
			return ret;
	}
	/*
	 * An answer that cannot be copied out (a read-only struct) must
	 * find nothing done: an MR registered, ports reserved, an MR gone,
	 * of which the caller would know nothing. So the struct is written
	 * back as it was read first, and EFAULT is answered before anything
	 * changes. The data path's doorbell and CQ help skip this: their
	 * answers are counts, and what they consumed is in the rings.
	 */
	if (!op->datapath &&
	    copy_to_user(uarg, &call.buf, min_t(u32, usize, op->size)))
		return -EFAULT;

	if (dom)
		ret = op->handler(dom, &call.buf);
	else if (ep)
		ret = op->ep_handler(ep, &call.buf);
	else if (av)
		ret = op->av_handler(av, &call.buf);
	else
		ret = op->cq_handler(cq, &call.buf);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &call.buf, min_t(u32, usize, op->size))) {
		if (call.file) {
			fput(call.file);
			put_unused_fd(call.fd);
		}
		return -EFAULT;
	}
	if (call.file)
		fd_install(call.fd, call.file);
	return 0;
}

/**
 * swnic_ioctl() - one ioctl on a device fd (@dom) or an endpoint fd (@ep)
 * @cmd: the command
 * @arg: its struct, in user space
 * @dom: the device fd's domain, or NULL
 * @ep: the endpoint fd's endpoint, or NULL
 *
 * Return: the handler's answer; -ENOTTY for a command of the other kind
 * of fd; -EINVAL, -E2BIG, -EFAULT for a struct that breaks the contract.
 */
long swnic_ioctl(unsigned int cmd, unsigned long arg, struct swnic_domain *dom,
		 struct swnic_ep *ep)
{
	return swnic_ioctl_run(cmd, arg, dom, ep, NULL, NULL);
}

/**
 * swnic_ioctl_av() - one ioctl on a shared AV's fd
 * @cmd: the command
 * @arg: its struct, in user space
 * @av: the fd's AV
 *
 * Return: as swnic_ioctl().
 */
long swnic_ioctl_av(unsigned int cmd, unsigned long arg,
		    struct swnic_av_file *av)
{
	return swnic_ioctl_run(cmd, arg, NULL, NULL, av, NULL);
}

/**
 * swnic_ioctl_cq() - one ioctl on a CQ's fd
 * @cmd: the command
 * @arg: its struct, in user space
 * @cq: the fd's CQ
 *
 * Return: as swnic_ioctl().
 */
long swnic_ioctl_cq(unsigned int cmd, unsigned long arg, struct swnic_cq *cq)
{
	return swnic_ioctl_run(cmd, arg, NULL, NULL, NULL, cq);
}

static long swnic_chardev_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	return swnic_ioctl(cmd, arg, file->private_data, NULL);
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
	ret = swnic_domain_open(sdev, file->f_cred, &dom);
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
	.mmap = swnic_domain_mmap,
};
