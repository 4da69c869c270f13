// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues. Each CQ is a file (anon inode): mmap maps its ring,
 * poll() waits for completions. A poster that must not lose its completion
 * reserves a slot before it starts the work (swnic_cq_reserve), so the
 * ring can never overrun; completions for a peer's work are posted only if
 * a slot is free, else the peer's work fails with EAGAIN and is retried.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>

#include "chardev.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "nl_events.h"
#include "stats.h"

/*
 * The last reference: the file's, an endpoint's or a deferred completion's,
 * in any context. Only now does the CQ stop counting against max_cq; its
 * domain reference keeps the count there until then.
 */
static void swnic_cq_release(struct kref *ref)
{
	struct swnic_cq *cq = container_of(ref, struct swnic_cq, ref);

	swnic_ring_free(&cq->ring);
	atomic_dec(&cq->dom->ncq);
	swnic_domain_put(cq->dom);
	kfree(cq);
	swnic_obj_dec(SWNIC_OBJ_CQS);
}

void swnic_cq_put(struct swnic_cq *cq)
{
	kref_put(&cq->ref, swnic_cq_release);
}

/* Return: the CQ @id of @dom with a reference held, or NULL. */
struct swnic_cq *swnic_cq_lookup(struct swnic_domain *dom, u32 id)
{
	struct swnic_cq *cq;

	xa_lock(&dom->cqs);
	cq = xa_load(&dom->cqs, id);
	if (cq)
		swnic_cq_get(cq);
	xa_unlock(&dom->cqs);
	return cq;
}

/* Promise the caller one slot for a completion it will post. */
bool swnic_cq_reserve(struct swnic_cq *cq)
{
	bool ok;

	spin_lock(&cq->lock);
	ok = swnic_ring_space(&cq->ring) > cq->reserved;
	if (ok)
		cq->reserved++;
	spin_unlock(&cq->lock);
	return ok;
}

void swnic_cq_unreserve(struct swnic_cq *cq)
{
	spin_lock(&cq->lock);
	if (!WARN_ON_ONCE(!cq->reserved))
		cq->reserved--;
	spin_unlock(&cq->lock);
}

/* A CQ entry with room for an inline payload (SWNIC_CQ_F_INLINE_DATA). */
struct swnic_cq_entry {
	struct swnic_cqe cqe;
	u8 data[SWNIC_CQE_INLINE_MAX];
};

/**
 * swnic_cq_post_inline() - write a completion carrying a small payload
 * @cq: the CQ; without SWNIC_CQ_F_INLINE_DATA @data must be NULL
 * @cqe: the completion (SWNIC_CQE_INLINE set by the caller with @data)
 * @data: @len bytes, at most SWNIC_CQE_INLINE_MAX, or NULL
 * @len: bytes of @data
 * @reserved: the caller holds a slot from swnic_cq_reserve()
 *
 * Return: as swnic_cq_post().
 */
int swnic_cq_post_inline(struct swnic_cq *cq, const struct swnic_cqe *cqe,
			 const void *data, u32 len, bool reserved)
{
	struct swnic_cq_entry *e;
	int ret = 0;

	BUILD_BUG_ON(sizeof(*e) != 128);
	if (WARN_ON_ONCE(data && (!cq->inline_data ||
				  len > SWNIC_CQE_INLINE_MAX)))
		return -EINVAL;

	spin_lock(&cq->lock);
	if (reserved) {
		if (!WARN_ON_ONCE(!cq->reserved))
			cq->reserved--;
	} else if (swnic_ring_space(&cq->ring) <= cq->reserved) {
		ret = -EAGAIN;
		goto out_unlock;
	}
	/* Written in place: no copy of the entry on the stack first. */
	e = swnic_ring_produce_slot(&cq->ring);
	if (!e) {
		cq->overflows++;
		swnic_ring_set_flags(&cq->ring, SWNIC_RING_F_OVERFLOW, 0);
		ret = -EAGAIN;
		goto out_unlock;
	}
	e->cqe = *cqe;
	if (cq->inline_data) {
		/* Whole entries only: no stale bytes of an earlier payload. */
		memset(e->data, 0, sizeof(e->data));
		if (len)
			memcpy(e->data, data, len);
	}
	swnic_ring_produce_end(&cq->ring);
out_unlock:
	spin_unlock(&cq->lock);
	/* A spinning reader is the common case: no wait queue lock for it. */
	if (!ret && wq_has_sleeper(&cq->wq))
		wake_up_interruptible(&cq->wq);
	return ret;
}

/**
 * swnic_cq_post() - write a completion and wake waiters
 * @cq: the CQ
 * @cqe: the completion
 * @reserved: the caller holds a slot from swnic_cq_reserve()
 *
 * Return: 0, or -EAGAIN if there was no free slot (never with @reserved,
 * unless user space moved its head backwards - then the completion is
 * counted as an overflow and flagged in the ring).
 */
int swnic_cq_post(struct swnic_cq *cq, const struct swnic_cqe *cqe,
		  bool reserved)
{
	return swnic_cq_post_inline(cq, cqe, NULL, 0, reserved);
}

static __poll_t swnic_cq_poll(struct file *file, poll_table *wait)
{
	struct swnic_cq *cq = file->private_data;

	/*
	 * Its completions are the owner's, as its mapping: another holder
	 * of the file (a forked child) may not watch them come, nor make
	 * every completion pay for its wakeup. A kernel thread polls for
	 * the one that queued it (AIO's poll completes in a worker): the
	 * first poll, in the caller's context, decided that.
	 */
	if (current->mm && !swnic_domain_is_owner(cq->dom))
		return EPOLLERR;
	poll_wait(file, &cq->wq, wait);
	/* Queued before the look at the ring: pairs with wq_has_sleeper(). */
	smp_mb();
	return swnic_ring_empty(&cq->ring) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static int swnic_cq_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct swnic_cq *cq = file->private_data;

	if (vma->vm_pgoff)
		return -EINVAL;
	/* Its completions (inline data too): the owner's, as its rings. */
	if (!swnic_domain_is_owner(cq->dom))
		return -EACCES;
	return swnic_ring_mmap(&cq->ring, vma);
}

static int swnic_cq_file_release(struct inode *inode, struct file *file)
{
	struct swnic_cq *cq = file->private_data;
	struct swnic_domain *dom = cq->dom;

	/*
	 * Unpublish: no new endpoint can bind it; bound ones keep a ref,
	 * and it counts until the last goes (swnic_cq_release()).
	 */
	xa_erase(&dom->cqs, cq->id);
	atomic_dec(&dom->files);
	swnic_cq_put(cq);
	return 0;
}

static long swnic_cq_file_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	return swnic_ioctl_cq(cmd, arg, file->private_data);
}

static const struct file_operations swnic_cq_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = swnic_cq_file_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = swnic_cq_poll,
	.mmap = swnic_cq_mmap,
	.release = swnic_cq_file_release,
};

/* SWNIC_IOCTL_CQ_CREATE */
int swnic_cq_create(struct swnic_domain *dom, void *arg)
{
	struct swnic_cq_create *c = arg;
	struct swnic_cq *cq;
	int fd, ret;

	if (c->flags & ~SWNIC_CQ_F_INLINE_DATA)
		return -EOPNOTSUPP;
	if (c->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;

	/*
	 * Counted from before anything is allocated until its final
	 * release: a CQ outlives its file while endpoints or deferred
	 * completions hold it. dom->lock orders the count with other
	 * creates (and with an auth key's change, service.c).
	 */
	mutex_lock(&dom->lock);
	if (atomic_read(&dom->ncq) >= dom->sdev->limits.max_cq) {
		mutex_unlock(&dom->lock);
		swnic_nl_limit_hit(dom->sdev, dom, SWNIC_LIMIT_DEV_CQ);
		return -ENOSPC;
	}
	atomic_inc(&dom->ncq);
	mutex_unlock(&dom->lock);

	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq) {
		atomic_dec(&dom->ncq);
		return -ENOMEM;
	}
	kref_init(&cq->ref);
	swnic_obj_inc(SWNIC_OBJ_CQS);
	spin_lock_init(&cq->lock);
	init_waitqueue_head(&cq->wq);
	cq->dom = dom;
	cq->inline_data = c->flags & SWNIC_CQ_F_INLINE_DATA;
	swnic_domain_get(dom);

	ret = swnic_ring_init(&cq->ring, c->entries, SWNIC_MAX_CQ_ENTRIES,
			      cq->inline_data ? sizeof(struct swnic_cq_entry) :
			      sizeof(struct swnic_cqe));
	if (ret)
		goto err_put;

	/* Reserved, published once nothing can fail (as a counter). */
	ret = xa_alloc(&dom->cqs, &cq->id, NULL, xa_limit_31b, GFP_KERNEL);
	if (ret)
		goto err_put;

	fd = swnic_ioctl_new_file(arg, "[swnic-cq]", &swnic_cq_fops, cq);
	if (fd < 0) {
		ret = fd;
		goto err_xa;
	}
	swnic_xa_publish(&dom->cqs, cq->id, cq);
	atomic_inc(&dom->files);
	c->fd = fd;
	c->cq_id = cq->id;
	swnic_ring_info(&cq->ring, 0, &c->ring);
	return 0;

err_xa:
	xa_erase(&dom->cqs, cq->id);
err_put:
	swnic_cq_put(cq);		/* uncounts it */
	return ret;
}
