// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned user memory: FOLL_LONGTERM pins charged to the owner's pinned_vm
 * against RLIMIT_MEMLOCK (CAP_IPC_LOCK exempt, still counted) and to the
 * device's max_pinned, kept as runs of contiguous pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "device.h"
#include "domain.h"
#include "mr.h"
#include "umem.h"

/* Pages pinned per pin_user_pages_fast() call: one page of pointers. */
#define SWNIC_UMEM_BATCH	(PAGE_SIZE / sizeof(struct page *))

/* Grow @umem->ext to hold at least @need runs. */
static int swnic_umem_ext_reserve(struct swnic_umem *umem, u32 *cap, u32 need)
{
	struct swnic_umem_extent *ext;
	u32 ncap;

	if (need <= *cap)
		return 0;
	ncap = max3(need, *cap * 2, 16U);
	ext = kvmalloc_array(ncap, sizeof(*ext), GFP_KERNEL_ACCOUNT);
	if (!ext)
		return -ENOMEM;
	if (umem->nextents)
		memcpy(ext, umem->ext, umem->nextents * sizeof(*ext));
	kvfree(umem->ext);
	umem->ext = ext;
	*cap = ncap;
	return 0;
}

/* Give back unused capacity once pinning is done (hugepages: a lot). */
static void swnic_umem_ext_trim(struct swnic_umem *umem, u32 cap)
{
	struct swnic_umem_extent *ext;

	if (cap <= 2 * umem->nextents + 16)
		return;
	ext = kvmalloc_array(umem->nextents, sizeof(*ext), GFP_KERNEL_ACCOUNT);
	if (!ext)
		return;		/* keeping the larger array is harmless */
	memcpy(ext, umem->ext, umem->nextents * sizeof(*ext));
	kvfree(umem->ext);
	umem->ext = ext;
}

/*
 * Append @n freshly pinned pages, merging physically contiguous ones. On
 * failure the pages not appended are unpinned here: those that were are
 * the umem's, and swnic_umem_unpin() unpins them (once).
 */
static int swnic_umem_add(struct swnic_umem *umem, u32 *cap,
			  struct page **pages, unsigned long n)
{
	struct swnic_umem_extent *last;
	unsigned long i, pfn;
	int ret;

	for (i = 0; i < n; i++) {
		pfn = page_to_pfn(pages[i]);
		last = umem->nextents ? &umem->ext[umem->nextents - 1] : NULL;
		if (last && last->pfn + last->npages == pfn &&
		    last->npages < U32_MAX) {
			last->npages++;
			continue;
		}
		ret = swnic_umem_ext_reserve(umem, cap, umem->nextents + 1);
		if (ret) {
			unpin_user_pages(pages + i, n - i);
			umem->npages += i;
			return ret;
		}
		umem->ext[umem->nextents++] = (struct swnic_umem_extent) {
			.pfn = pfn,
			.first = umem->npages + i,
			.npages = 1,
		};
	}
	umem->npages += n;
	return 0;
}

static void swnic_umem_unpin(struct swnic_umem *umem)
{
	u32 i;

	for (i = 0; i < umem->nextents; i++) {
		unpin_user_page_range_dirty_lock(pfn_to_page(umem->ext[i].pfn),
						 umem->ext[i].npages,
						 umem->writable);
		cond_resched();
	}
}

/*
 * Charge @npages to the owner's pinned_vm and the device. Called in the
 * owner's context (capable() is the caller's).
 */
static int swnic_umem_charge(struct swnic_mr_domain *mrd,
			     unsigned long npages)
{
	struct swnic_device *sdev = mrd->sdev;
	struct mm_struct *mm = mrd->mm;
	u64 bytes = (u64)npages << PAGE_SHIFT;
	unsigned long limit;
	u64 max_pinned;
	s64 pinned;

	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -EPERM;
	}

	mutex_lock(&sdev->lock);
	max_pinned = sdev->limits.max_pinned;
	mutex_unlock(&sdev->lock);
	pinned = atomic64_add_return(bytes, &sdev->mr_stats.pinned_bytes);
	if (max_pinned && pinned > max_pinned) {
		atomic64_sub(bytes, &sdev->mr_stats.pinned_bytes);
		atomic64_sub(npages, &mm->pinned_vm);
		return -EDQUOT;
	}
	atomic64_add(bytes, &mrd->stats.pinned_bytes);
	return 0;
}

static void swnic_umem_uncharge(struct swnic_mr_domain *mrd,
				unsigned long npages)
{
	atomic64_sub(npages, &mrd->mm->pinned_vm);
	swnic_mr_stat_add(mrd, offsetof(struct swnic_mr_stats, pinned_bytes),
			  -((s64)npages << PAGE_SHIFT));
}

/**
 * swnic_umem_pin() - pin a range of the current process for long-term use
 * @mrd: the MR domain to charge; must belong to current->mm
 * @addr: start of the range (any alignment)
 * @length: bytes, > 0, already checked for overflow and access_ok()
 * @writable: pin for writing (FOLL_WRITE)
 *
 * Return: the umem with one reference, or ERR_PTR: -EPERM over
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK, -EDQUOT over the device's
 * max_pinned, -EFAULT (or gup's error) for memory that cannot be pinned,
 * -EINTR on a fatal signal, -ENOMEM.
 */
struct swnic_umem *swnic_umem_pin(struct swnic_mr_domain *mrd,
				  unsigned long addr, u64 length,
				  bool writable)
{
	unsigned int gup_flags = FOLL_LONGTERM | (writable ? FOLL_WRITE : 0);
	unsigned long start = addr & PAGE_MASK;
	unsigned long npages, done = 0;
	struct swnic_umem *umem;
	struct page **pages;
	u32 cap = 0;
	long i;
	int ret;

	npages = (PAGE_ALIGN(addr + length) - start) >> PAGE_SHIFT;
	if (npages > U32_MAX)
		return ERR_PTR(-EINVAL);

	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return ERR_PTR(-ENOMEM);
	kref_init(&umem->ref);
	umem->addr = start;
	umem->writable = writable;

	/*
	 * The batch's page vector, as long as the batch: a small region
	 * needs a few words, not a page (which the allocator may zero on
	 * every registration: init_on_alloc).
	 */
	pages = kmalloc_array(min_t(unsigned long, npages, SWNIC_UMEM_BATCH),
			      sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		ret = -ENOMEM;
		goto err_umem;
	}

	/*
	 * Pins on their way out - a revoked MR's, which a worker unpins -
	 * are charged until they are gone: over a limit, wait for them and
	 * try once more (a refresh right after a revocation).
	 */
	ret = swnic_umem_charge(mrd, npages);
	if ((ret == -EPERM || ret == -EDQUOT) &&
	    atomic_read(&mrd->releases)) {
		ret = swnic_umem_flush_killable(mrd);
		if (!ret)
			ret = swnic_umem_charge(mrd, npages);
	}
	if (ret == -EPERM)
		swnic_mr_stat_inc(mrd, memlock_denied);
	if (ret)
		goto err_pages;

	while (done < npages) {
		long n = min_t(unsigned long, npages - done, SWNIC_UMEM_BATCH);

		n = pin_user_pages_fast(start + (done << PAGE_SHIFT), n,
					gup_flags, pages);
		if (n <= 0) {
			ret = n ? n : -EFAULT;
			goto err_unpin;
		}
		ret = swnic_umem_add(umem, &cap, pages, n);
		if (ret)
			goto err_unpin;
		for (i = 0; i < n && !umem->hugetlb; i++)
			umem->hugetlb = folio_test_hugetlb(page_folio(pages[i]));
		done += n;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		cond_resched();
	}
	kfree(pages);
	swnic_umem_ext_trim(umem, cap);

	swnic_mr_domain_get(mrd);
	umem->mrd = mrd;
	return umem;

err_unpin:
	swnic_umem_unpin(umem);
	swnic_umem_uncharge(mrd, npages);
err_pages:
	kfree(pages);
err_umem:
	kvfree(umem->ext);
	kfree(umem);
	return ERR_PTR(ret);
}

static void swnic_umem_release(struct kref *ref)
{
	struct swnic_umem *umem = container_of(ref, struct swnic_umem, ref);
	struct swnic_mr_domain *mrd = umem->mrd;

	swnic_umem_unpin(umem);
	swnic_umem_uncharge(mrd, umem->npages);
	kvfree(umem->ext);
	kfree(umem);
	swnic_mr_domain_put(mrd);
}

/**
 * swnic_umem_put() - drop a reference, unpinning on the last one
 * @umem: the umem, may be NULL
 *
 * Context: may sleep.
 */
void swnic_umem_put(struct swnic_umem *umem)
{
	might_sleep();
	if (umem)
		kref_put(&umem->ref, swnic_umem_release);
}

static void swnic_umem_release_work(struct work_struct *work)
{
	struct swnic_umem *umem =
		container_of(work, struct swnic_umem, release_work);
	struct swnic_mr_domain *mrd = umem->mrd;

	/* The umem's own reference keeps @mrd alive until here. */
	swnic_mr_domain_get(mrd);
	swnic_umem_release(&umem->ref);
	if (atomic_dec_and_test(&mrd->releases))
		wake_up_var(&mrd->releases);
	swnic_mr_domain_put(mrd);
}

static void swnic_umem_queue_release(struct kref *ref)
{
	struct swnic_umem *umem = container_of(ref, struct swnic_umem, ref);

	atomic_inc(&umem->mrd->releases);
	INIT_WORK(&umem->release_work, swnic_umem_release_work);
	queue_work(swnic_mr_wq, &umem->release_work);
}

/**
 * swnic_umem_put_async() - drop a reference without sleeping
 * @umem: the umem, may be NULL
 *
 * The last reference's unpinning (which may sleep) runs from swnic_mr_wq;
 * swnic_umem_flush() waits for it.
 *
 * Context: any but hardirq.
 */
void swnic_umem_put_async(struct swnic_umem *umem)
{
	if (umem)
		kref_put(&umem->ref, swnic_umem_queue_release);
}

/**
 * swnic_umem_flush() - wait for queued releases of @mrd's umems
 * @mrd: the MR domain
 *
 * Afterwards every umem released so far is unpinned and uncharged.
 */
void swnic_umem_flush(struct swnic_mr_domain *mrd)
{
	wait_var_event(&mrd->releases, !atomic_read(&mrd->releases));
}

/**
 * swnic_umem_flush_killable() - swnic_umem_flush() for a caller's ioctl
 * @mrd: the MR domain
 *
 * The wait is on a worker no caller controls; a fatal signal ends it.
 *
 * Return: 0, or -EINTR if a fatal signal came first.
 */
int swnic_umem_flush_killable(struct swnic_mr_domain *mrd)
{
	return wait_var_event_killable(&mrd->releases,
				       !atomic_read(&mrd->releases));
}

/**
 * swnic_umem_page() - the page at index @idx of the umem
 * @umem: a pinned umem
 * @idx: page index, < umem->npages
 * @contig: out: pages from @idx on that are contiguous with it (>= 1)
 *
 * Return: the page. O(log runs).
 */
struct page *swnic_umem_page(const struct swnic_umem *umem,
			     unsigned long idx, unsigned long *contig)
{
	const struct swnic_umem_extent *e;
	u32 lo = 0, hi = umem->nextents;

	/* Last run whose first page is <= idx. */
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (umem->ext[mid].first <= idx)
			lo = mid;
		else
			hi = mid;
	}
	e = &umem->ext[lo];
	*contig = e->first + e->npages - idx;
	return pfn_to_page(e->pfn + (idx - e->first));
}
