// SPDX-License-Identifier: GPL-2.0
/*
 * Shared address vectors (SWNIC_FEAT_SHARED_AV, libfabric's named AVs).
 *
 * A shared AV is a table of 64-bit entries in vmalloc memory (charged to
 * the creator's memory cgroup, like the rings) that every fd of it maps
 * read-only; only the fd that created it writes, and
 * only through SWNIC_IOCTL_AV_WRITE, which checks every entry. The kernel
 * never reads the entries for itself: they are what the provider sends
 * to, and every send is checked by the data path as any other.
 *
 * Names are private to (device, euid, auth key): another user, or another
 * service, neither opens nor learns of the AV. All AVs are on one list
 * under one mutex (few AVs, control path only). Each fd holds a reference
 * (a mapping holds its file); the last one unlinks the name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swnic.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "av.h"
#include "chardev.h"
#include "device.h"
#include "domain.h"
#include "mmap.h"

struct swnic_av_shared {
	struct kref ref;
	struct list_head node;		/* on swnic_avs, swnic_avs_lock */
	struct swnic_device *sdev;	/* holds a device reference */
	kuid_t uid;			/* the creator's euid */
	u32 auth_key;			/* the creator domain's auth key */
	char name[SWNIC_AV_NAME_MAX];
	u32 count;
	struct mutex lock;		/* serialises writes */
	struct swnic_av_table *table;	/* vmalloc, @size bytes, zeroed */
	size_t size;
};

/* One fd of a shared AV: the creator's writes, the others only map. */
struct swnic_av_file {
	struct swnic_av_shared *av;
	bool writer;
};

static DEFINE_MUTEX(swnic_avs_lock);
static LIST_HEAD(swnic_avs);

static void swnic_av_release(struct kref *ref)
{
	struct swnic_av_shared *av =
		container_of(ref, struct swnic_av_shared, ref);

	list_del(&av->node);
	swnic_device_put(av->sdev);
	mutex_destroy(&av->lock);
	vfree(av->table);
	kfree(av);
}

static void swnic_av_put(struct swnic_av_shared *av)
{
	mutex_lock(&swnic_avs_lock);
	kref_put(&av->ref, swnic_av_release);
	mutex_unlock(&swnic_avs_lock);
}

static int swnic_av_file_release(struct inode *inode, struct file *file)
{
	struct swnic_av_file *f = file->private_data;

	swnic_av_put(f->av);
	kfree(f);
	return 0;
}

static long swnic_av_file_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	return swnic_ioctl_av(cmd, arg, file->private_data);
}

/*
 * The whole table, read-only, from offset 0: each page inserted (and
 * referenced by the mapping), as remap_vmalloc_range() would for a
 * vmalloc_user() area, which could not be charged.
 */
static int swnic_av_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct swnic_av_file *f = file->private_data;
	size_t len = PAGE_ALIGN(f->av->size), off;
	int ret;

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != len)
		return -EINVAL;
	/* Shared by name with other processes: a child may inherit it. */
	ret = swnic_mmap_prepare(vma, 0);
	if (ret)
		return ret;
	for (off = 0; off < len; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page((char *)f->av->table + off));
		if (ret)
			return ret;
	}
	return 0;
}

static const struct file_operations swnic_av_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = swnic_av_file_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = swnic_av_file_mmap,
	.release = swnic_av_file_release,
};

/* A name: 1..SWNIC_AV_NAME_MAX - 1 printable, non-blank bytes, then NUL. */
static int swnic_av_check_name(const u8 *name)
{
	size_t i;

	for (i = 0; i < SWNIC_AV_NAME_MAX && name[i]; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return -EINVAL;
	if (!i || i == SWNIC_AV_NAME_MAX)
		return -EINVAL;
	for (; i < SWNIC_AV_NAME_MAX; i++)
		if (name[i])
			return -EINVAL;
	return 0;
}

/* The AV @name of @dom's user and key, or NULL; swnic_avs_lock held. */
static struct swnic_av_shared *swnic_av_find(struct swnic_domain *dom,
					     const char *name, u32 *nmine)
{
	struct swnic_av_shared *av, *found = NULL;
	u32 key = READ_ONCE(dom->auth_key);

	*nmine = 0;
	list_for_each_entry(av, &swnic_avs, node) {
		if (av->sdev != dom->sdev || !uid_eq(av->uid, dom->uid))
			continue;
		(*nmine)++;
		if (av->auth_key == key && !strcmp(av->name, name))
			found = av;
	}
	return found;
}

static struct swnic_av_shared *swnic_av_new(struct swnic_domain *dom,
					    const struct swnic_av_open *o)
{
	struct swnic_av_shared *av;

	av = kzalloc(sizeof(*av), GFP_KERNEL_ACCOUNT);
	if (!av)
		return NULL;
	av->size = sizeof(*av->table) + (size_t)o->count * sizeof(u64);
	/* Charged: user space decides how many AVs of what size exist. */
	av->table = __vmalloc(PAGE_ALIGN(av->size),
			      GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (!av->table) {
		kfree(av);
		return NULL;
	}
	av->table->count = o->count;
	av->table->type = o->type;
	av->table->entries_offset = sizeof(*av->table);
	kref_init(&av->ref);
	mutex_init(&av->lock);
	av->count = o->count;
	av->uid = dom->uid;
	av->auth_key = READ_ONCE(dom->auth_key);
	memcpy(av->name, o->name, SWNIC_AV_NAME_MAX);
	av->sdev = dom->sdev;
	swnic_device_get(av->sdev);
	return av;
}

/**
 * swnic_av_open_ioctl() - SWNIC_IOCTL_AV_OPEN
 * @dom: the domain whose user and auth key scope the name
 * @arg: struct swnic_av_open
 *
 * Return: 0 with @fd set, or a negative errno (see the uapi header).
 */
int swnic_av_open_ioctl(struct swnic_domain *dom, void *arg)
{
	struct swnic_av_open *o = arg;
	bool create = o->flags & SWNIC_AV_OPEN_CREATE;
	struct swnic_av_shared *av;
	struct swnic_av_file *f;
	u32 nmine;
	int ret;

	if (o->flags & ~SWNIC_AV_OPEN_CREATE)
		return -EOPNOTSUPP;
	if (o->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;
	ret = swnic_av_check_name(o->name);
	if (ret)
		return ret;
	if (create ? !o->count || o->count > SWNIC_AV_COUNT_MAX :
	    o->count || o->type)
		return -EINVAL;
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;

	mutex_lock(&swnic_avs_lock);
	av = swnic_av_find(dom, o->name, &nmine);
	if (create && av) {
		ret = -EEXIST;
	} else if (!create && !av) {
		ret = -ENOENT;
	} else if (create && nmine >= SWNIC_AV_SHARED_MAX) {
		ret = -ENOSPC;
	} else if (create) {
		av = swnic_av_new(dom, o);
		if (av)
			list_add_tail(&av->node, &swnic_avs);
		else
			ret = -ENOMEM;
	} else {
		kref_get(&av->ref);
	}
	mutex_unlock(&swnic_avs_lock);
	if (ret) {
		kfree(f);
		return ret;
	}

	f->av = av;
	f->writer = create;
	ret = swnic_ioctl_new_file(arg, "[swnic-av]", &swnic_av_fops, f);
	if (ret < 0) {
		swnic_av_put(av);
		kfree(f);
		return ret;
	}
	o->fd = ret;
	o->count = av->count;
	o->type = av->table->type;
	o->mmap_size = PAGE_ALIGN(av->size);
	return 0;
}

/**
 * swnic_av_write_ioctl() - SWNIC_IOCTL_AV_WRITE, on the creator's fd
 * @f: the AV's file
 * @arg: struct swnic_av_write
 *
 * Return: 0, -EPERM from an opener's fd, -EINVAL for a bad range or entry,
 * -EFAULT.
 */
int swnic_av_write_ioctl(struct swnic_av_file *f, void *arg)
{
	struct swnic_av_write *w = arg;
	struct swnic_av_shared *av = f->av;
	u64 *vals, *ent;
	u32 i;
	int ret = 0;

	if (w->flags)
		return -EOPNOTSUPP;
	if (!f->writer)
		return -EPERM;
	if (!w->n || w->n > SWNIC_AV_WRITE_MAX || w->first >= av->count ||
	    w->n > av->count - w->first)
		return -EINVAL;
	vals = memdup_user(u64_to_user_ptr(w->entries),
			   (size_t)w->n * sizeof(u64));
	if (IS_ERR(vals))
		return PTR_ERR(vals);
	for (i = 0; i < w->n; i++)
		if ((vals[i] & SWNIC_AV_ENTRY_RSVD) ||
		    (vals[i] && !(vals[i] & SWNIC_AV_ENTRY_VALID)))
			ret = -EINVAL;
	if (!ret) {
		ent = (u64 *)((char *)av->table + sizeof(*av->table));
		mutex_lock(&av->lock);
		WRITE_ONCE(av->table->seq, av->table->seq + 1);
		/* odd @seq before the entries: readers retry */
		smp_wmb();
		for (i = 0; i < w->n; i++)
			WRITE_ONCE(ent[w->first + i], vals[i]);
		/* the entries before the even @seq */
		smp_store_release(&av->table->seq, av->table->seq + 1);
		mutex_unlock(&av->lock);
	}
	kfree(vals);
	return ret;
}
