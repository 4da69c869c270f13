// SPDX-License-Identifier: GPL-2.0
/*
 * Counters. Each counter is a file (anon inode) whose one page holds the
 * two words of struct swnic_cntr_words; mmap maps it read-only. The data
 * path increments them where operations complete (the poster's context, a
 * peer's, the engine's), so reading a counter is a load, no syscall. Its
 * owner may also sleep until it changes: poll() of the file, armed by a
 * read() of it (SWNIC_FEAT_CNTR_POLL).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "chardev.h"
#include "cntr.h"
#include "device.h"
#include "domain.h"
#include "mmap.h"
#include "trig.h"

static void swnic_cntr_release(struct kref *ref)
{
	struct swnic_cntr *cntr = container_of(ref, struct swnic_cntr, ref);

	if (cntr->page)
		__free_page(cntr->page);
	/* Counted until now (endpoints, deferred completions hold it). */
	atomic_dec(&cntr->dom->ncntr);
	swnic_domain_put(cntr->dom);
	kfree(cntr);
}

void swnic_cntr_put(struct swnic_cntr *cntr)
{
	kref_put(&cntr->ref, swnic_cntr_release);
}

/* Return: the counter @id of @dom with a reference held, or NULL. */
struct swnic_cntr *swnic_cntr_lookup(struct swnic_domain *dom, u32 id)
{
	struct swnic_cntr *cntr;

	xa_lock(&dom->cntrs);
	cntr = xa_load(&dom->cntrs, id);
	if (cntr)
		swnic_cntr_get(cntr);
	xa_unlock(&dom->cntrs);
	return cntr;
}

/*
 * The words, read-only (only the kernel writes them), to the owner only,
 * as read() and the rings: a process the file was passed to learns
 * nothing of the owner's operations. Nor does a child forked afterwards
 * inherit the mapping (VM_DONTCOPY, as a ring's).
 */
static int swnic_cntr_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct swnic_cntr *cntr = file->private_data;
	int ret;

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (!swnic_domain_is_owner(cntr->dom))
		return -EACCES;
	ret = swnic_mmap_prepare(vma, SWNIC_MAP_OWNER);
	if (ret)
		return ret;
	return vm_insert_page(vma, vma->vm_start, cntr->page);
}

/* Wake the counter's pollers (swnic_cntr_changed(): there are some). */
void swnic_cntr_wake(struct swnic_cntr *cntr)
{
	wake_up_poll(&cntr->wq, EPOLLIN | EPOLLRDNORM);
}

static u64 swnic_cntr_sum(struct swnic_cntr *cntr)
{
	return (u64)atomic64_read(cntr->value) + (u64)atomic64_read(cntr->err);
}

/*
 * read(): the words, and poll() is armed with what it returned. A change
 * between the loads makes the sum (or @gen) differ from the counter's at
 * once: a wakeup too many, never one lost. Only the owner's process, as
 * for its rings: another holder of the file would disarm the owner's poll.
 */
static ssize_t swnic_cntr_read(struct file *file, char __user *buf,
			       size_t len, loff_t *ppos)
{
	struct swnic_cntr *cntr = file->private_data;
	struct swnic_cntr_words w;
	s64 gen;

	if (len < sizeof(w))
		return -EINVAL;
	if (!swnic_domain_is_owner(cntr->dom))
		return -EACCES;
	gen = atomic64_read(&cntr->gen);
	smp_rmb();	/* the generation, then the words it covers */
	w.value = atomic64_read(cntr->value);
	w.err = atomic64_read(cntr->err);
	atomic64_set(&cntr->armed, w.value + w.err);
	atomic64_set(&cntr->armed_gen, gen);
	if (copy_to_user(buf, &w, sizeof(w)))
		return -EFAULT;
	return sizeof(w);
}

static __poll_t swnic_cntr_poll(struct file *file, poll_table *wait)
{
	struct swnic_cntr *cntr = file->private_data;

	/* The owner's, as its read(): see swnic_cq_poll(). */
	if (current->mm && !swnic_domain_is_owner(cntr->dom))
		return EPOLLERR;
	poll_wait(file, &cntr->wq, wait);
	/* Queued before the look: pairs with swnic_cntr_changed()'s. */
	smp_mb();
	return swnic_cntr_sum(cntr) != (u64)atomic64_read(&cntr->armed) ||
	       atomic64_read(&cntr->gen) != atomic64_read(&cntr->armed_gen) ?
	       EPOLLIN | EPOLLRDNORM : 0;
}

static int swnic_cntr_file_release(struct inode *inode, struct file *file)
{
	struct swnic_cntr *cntr = file->private_data;
	struct swnic_domain *dom = cntr->dom;

	/* Unpublish: no new endpoint can bind it; bound ones keep a ref. */
	xa_erase(&dom->cntrs, cntr->id);
	/* What waits on it is cancelled (struct swnic_sqe_trigger). */
	swnic_trig_cntr_closed(cntr);
	atomic_dec(&dom->files);
	swnic_cntr_put(cntr);
	return 0;
}

static const struct file_operations swnic_cntr_fops = {
	.owner = THIS_MODULE,
	.mmap = swnic_cntr_mmap,
	.read = swnic_cntr_read,
	.poll = swnic_cntr_poll,
	.llseek = noop_llseek,
	.release = swnic_cntr_file_release,
};

/* SWNIC_IOCTL_CNTR_CREATE */
int swnic_cntr_create(struct swnic_domain *dom, void *arg)
{
	struct swnic_cntr_create *c = arg;
	struct swnic_cntr_words *words;
	struct swnic_cntr *cntr;
	int fd, ret;

	BUILD_BUG_ON(sizeof(struct swnic_cntr_words) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_cntr_create) != 24);
	if (c->flags)
		return -EOPNOTSUPP;
	if (c->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;

	/*
	 * Counted from before anything is allocated until its final
	 * release (swnic_cntr_release()), as a CQ.
	 */
	mutex_lock(&dom->lock);
	if (atomic_read(&dom->ncntr) >= SWNIC_MAX_CNTR) {
		mutex_unlock(&dom->lock);
		return -ENOSPC;
	}
	atomic_inc(&dom->ncntr);
	mutex_unlock(&dom->lock);

	cntr = kzalloc(sizeof(*cntr), GFP_KERNEL_ACCOUNT);
	if (!cntr) {
		atomic_dec(&dom->ncntr);
		return -ENOMEM;
	}
	kref_init(&cntr->ref);
	cntr->dom = dom;
	swnic_trig_cntr_init(cntr);
	init_waitqueue_head(&cntr->wq);
	swnic_domain_get(dom);
	/* Charged to the caller's memory cgroup, like every object it makes. */
	cntr->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!cntr->page) {
		ret = -ENOMEM;
		goto err_put;
	}
	words = page_address(cntr->page);
	cntr->value = (atomic64_t *)&words->value;
	cntr->err = (atomic64_t *)&words->err;

	/*
	 * The id is reserved, not published: a counter is found by its id
	 * (swnic_cntr_lookup()) only once nothing can fail. Work triggered
	 * on a counter found meanwhile and then undone here would wait
	 * forever, holding the domain: only its file's release cancels it.
	 */
	ret = xa_alloc(&dom->cntrs, &cntr->id, NULL, xa_limit_31b,
		       GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_put;
	fd = swnic_ioctl_new_file(arg, "[swnic-cntr]", &swnic_cntr_fops, cntr);
	if (fd < 0) {
		ret = fd;
		goto err_xa;
	}
	swnic_xa_publish(&dom->cntrs, cntr->id, cntr);
	atomic_inc(&dom->files);
	c->fd = fd;
	c->cntr_id = cntr->id;
	c->mmap_size = PAGE_SIZE;
	return 0;

err_xa:
	xa_erase(&dom->cntrs, cntr->id);
err_put:
	swnic_cntr_put(cntr);		/* uncounts it */
	return ret;
}
