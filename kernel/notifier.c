// SPDX-License-Identifier: GPL-2.0
/*
 * MMU notifiers of MRs and the invalidation page that tells user space.
 *
 * Every MR has an mmu_interval_notifier on its range. Its callback runs
 * under the mm's locks, possibly where it may not sleep: it only takes the
 * MR's spinlock, bumps counters, writes a record into the invalidation page
 * and hands everything that may sleep (unpinning, netlink) to workqueues.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/hmm.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>

#include "domain.h"
#include "mmap.h"
#include "mr.h"
#include "nl_events.h"
#include "notifier.h"
#include "umem.h"

/*
 * Does @event mean the pages behind the range may change? The three that
 * keep the pages are left alone: mprotect/NUMA hinting, the write-protect
 * of fork (pinned anonymous pages stay with the parent: the child gets
 * copies) and soft-dirty clearing. Everything else - munmap, mremap,
 * MADV_DONTNEED, migration, process exit - and any event a newer kernel
 * adds, revokes.
 */
static bool swnic_mr_event_revokes(enum mmu_notifier_event event)
{
	switch (event) {
	case MMU_NOTIFY_PROTECTION_VMA:
	case MMU_NOTIFY_PROTECTION_PAGE:
	case MMU_NOTIFY_SOFT_DIRTY:
		return false;
	default:
		return true;
	}
}

static void swnic_mr_invalidate_odp(struct swnic_mr *mr)
{
	lockdep_assert_held(&mr->lock);

	/* Pages faulted in since the last invalidation are dropped. */
	if (mr->odp_mapped) {
		mr->odp_mapped = false;
		mr->odp_dropped = true;
		atomic64_inc(&mr->invalidations);
		swnic_mr_stat_inc(mr->mrd, invalidations);
	}
}

/*
 * Take a VALID pinned MR's pages away (mr->lock held). Returns them for
 * swnic_mr_revoked() to drop once the lock is released, or NULL if the MR
 * was not valid.
 */
static struct swnic_umem *swnic_mr_revoke_locked(struct swnic_mr *mr)
{
	struct swnic_umem *umem;

	lockdep_assert_held(&mr->lock);
	if (mr->state != SWNIC_MR_STATE_VALID)
		return NULL;
	umem = mr->umem;
	mr->umem = NULL;
	mr->state = SWNIC_MR_STATE_REVOKED;
	mr->verify_idx = 0;	/* a refresh pins anew */
	return umem;
}

/*
 * Tell everyone that @mr was revoked, then drop its pages. @quiet: the
 * process is exiting (its mm has no users left); the MR goes with its
 * file and nobody is left to tell.
 */
static void swnic_mr_revoked(struct swnic_mr *mr, struct swnic_umem *umem,
			     bool quiet)
{
	if (!quiet) {
		atomic64_inc(&mr->revocations);
		swnic_mr_stat_inc(mr->mrd, revocations);
		swnic_inval_push(&mr->mrd->inval, mr->addr, mr->length, mr->key);
		swnic_mr_get(mr);
		if (!queue_work(swnic_mr_wq, &mr->revoke_work))
			swnic_mr_put(mr);
	}
	/* In-flight accesses keep their own references to the pages. */
	swnic_umem_put_async(umem);
}

/*
 * A PMD split or collapse (fork of a pinned THP, mprotect of part of
 * one, khugepaged) clears exactly one huge page's range and maps the same
 * pages again. The fork of private hugetlbfs memory clears its whole VMA
 * (copy-on-write), yet pinned pages stay with the parent (the child gets
 * copies). Nothing else that keeps the pages clears; such an event is
 * checked once it is over instead of revoking on sight. Called under
 * @mr->lock, the MR valid.
 */
static bool swnic_mr_event_may_keep(const struct swnic_mr *mr,
				    const struct mmu_notifier_range *range)
{
	if (range->event != MMU_NOTIFY_CLEAR ||
	    !IS_ALIGNED(range->start, PMD_SIZE) ||
	    !IS_ALIGNED(range->end, PMD_SIZE))
		return false;
	return range->end - range->start == PMD_SIZE || mr->umem->hugetlb;
}

/*
 * A check after such an event that is not done within this bound revokes:
 * also when the process keeps its mmap lock, or keeps invalidating the
 * range (ms). It tries the lock again every SWNIC_VERIFY_RETRY_MS.
 */
#define SWNIC_VERIFY_TIMEOUT_MS	1000
#define SWNIC_VERIFY_RETRY_MS	10
#define SWNIC_VERIFY_RETRY	msecs_to_jiffies(SWNIC_VERIFY_RETRY_MS)

static bool swnic_mr_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct swnic_mr *mr = container_of(mni, struct swnic_mr, notifier);
	struct swnic_umem *umem;

	spin_lock_bh(&mr->lock);
	mmu_interval_set_seq(mni, cur_seq);
	if (mr->flags & SWNIC_MR_REG_ODP) {
		/* ODP holds no pages: any change just means "fault again". */
		swnic_mr_invalidate_odp(mr);
		spin_unlock_bh(&mr->lock);
		return true;
	}
	if (mr->state != SWNIC_MR_STATE_VALID ||
	    !swnic_mr_event_revokes(range->event)) {
		spin_unlock_bh(&mr->lock);
		return true;
	}
	if (swnic_mr_event_may_keep(mr, range)) {
		/* Pages compared before this event count no more. */
		mr->verify_idx = 0;
		if (!mr->verify_pending) {
			mr->verify_pending = true;
			mr->verify_deadline = jiffies +
				msecs_to_jiffies(SWNIC_VERIFY_TIMEOUT_MS);
			swnic_mr_get(mr);
			queue_delayed_work(swnic_mr_wq, &mr->verify_work, 0);
		}
		spin_unlock_bh(&mr->lock);
		return true;
	}
	umem = swnic_mr_revoke_locked(mr);
	spin_unlock_bh(&mr->lock);

	swnic_mr_revoked(mr, umem, range->event == MMU_NOTIFY_RELEASE);
	return true;
}

/* Pages compared per hmm_range_fault() snapshot: one page of pfns. */
#define SWNIC_VERIFY_BATCH	(PAGE_SIZE / sizeof(unsigned long))

/*
 * Compare pages from @mr->verify_idx on, recording progress there. Return:
 * 1 all kept, 0 one moved (or cannot tell), -EAGAIN the mmap lock was
 * busy (try again later, from where it stopped).
 *
 * A snapshot (nothing is faulted in): a page not present counts as moved.
 * The mmap lock is only tried, never waited for: the process may keep it
 * as long as it likes (a thread in a fault that waits for a FUSE server,
 * a writer queued behind it), and a worker waiting for it would wait as
 * long, holding one of the workqueue's slots that every user's unpinning
 * needs. Context: process, may sleep (waits for invalidations in
 * progress, which the kernel ends).
 */
static int swnic_mr_pages_kept(struct swnic_mr *mr, struct swnic_umem *umem,
			       unsigned long deadline)
{
	struct mm_struct *mm = mr->mrd->mm;
	struct hmm_range range = { .notifier = &mr->notifier };
	unsigned long i, n, idx, contig;
	unsigned long *pfns;
	int kept = 1, ret;

	/* Exiting: MMU_NOTIFY_RELEASE takes the MR down (quietly). */
	if (!mmget_not_zero(mm))
		return 1;
	pfns = (unsigned long *)__get_free_page(GFP_KERNEL);
	if (!pfns) {
		mmput(mm);
		return 0;	/* cannot tell: revoke, to be safe */
	}
	range.hmm_pfns = pfns;
	spin_lock_bh(&mr->lock);
	idx = mr->verify_idx;
	spin_unlock_bh(&mr->lock);
	for (; kept == 1 && idx < umem->npages; idx += n) {
		n = min(umem->npages - idx, SWNIC_VERIFY_BATCH);
		range.start = umem->addr + (idx << PAGE_SHIFT);
		range.end = range.start + (n << PAGE_SHIFT);
		do {
			range.notifier_seq = mmu_interval_read_begin(&mr->notifier);
			if (!mmap_read_trylock(mm)) {
				ret = -EAGAIN;
				break;
			}
			ret = hmm_range_fault(&range);
			mmap_read_unlock(mm);
			cond_resched();
		} while (ret == -EBUSY && time_before(jiffies, deadline));
		if (ret) {
			kept = ret == -EAGAIN ? -EAGAIN : 0;
			break;
		}
		for (i = 0; i < n; i++) {
			if (!(pfns[i] & HMM_PFN_VALID) ||
			    hmm_pfn_to_page(pfns[i]) !=
			    swnic_umem_page(umem, idx + i, &contig)) {
				kept = 0;
				break;
			}
		}
		cond_resched();
	}
	/* Progress is kept unless an event since made it void. */
	spin_lock_bh(&mr->lock);
	if (!mr->verify_pending)
		mr->verify_idx = kept == -EAGAIN ? idx : 0;
	spin_unlock_bh(&mr->lock);
	mmput(mm);
	free_page((unsigned long)pfns);
	return kept;
}

/**
 * swnic_mr_verify_work() - revoke a pinned MR whose pages did change
 * @work: the MR's verify_work; the MR holds a reference for it
 *
 * After an event that may have kept the pages (swnic_mr_event_may_keep),
 * compares them with the mapping and revokes the MR if they differ. Until
 * then the MR stays valid on the pages it pinned. While the process keeps
 * its mmap lock the check is tried again every SWNIC_VERIFY_RETRY_MS; a
 * check not done within SWNIC_VERIFY_TIMEOUT_MS of the event revokes (safe:
 * the owner can register again, and it was the owner that kept its lock).
 */
void swnic_mr_verify_work(struct work_struct *work)
{
	struct swnic_mr *mr = container_of(to_delayed_work(work),
					   struct swnic_mr, verify_work);
	unsigned long deadline;
	struct swnic_umem *umem;
	bool again = false;
	int kept;

	spin_lock_bh(&mr->lock);
	mr->verify_pending = false;
	deadline = mr->verify_deadline;
	umem = mr->state == SWNIC_MR_STATE_VALID ? mr->umem : NULL;
	if (umem)
		swnic_umem_get(umem);
	spin_unlock_bh(&mr->lock);
	if (!umem)
		goto out;

	kept = swnic_mr_pages_kept(mr, umem, deadline);
	if (kept == -EAGAIN && time_before(jiffies, deadline)) {
		/*
		 * Again later, keeping our reference - unless an event
		 * meanwhile queued a check of its own, or the MR went.
		 */
		spin_lock_bh(&mr->lock);
		if (mr->umem == umem && !mr->verify_pending) {
			mr->verify_pending = true;
			again = true;
			queue_delayed_work(swnic_mr_wq, &mr->verify_work,
					   SWNIC_VERIFY_RETRY);
		}
		spin_unlock_bh(&mr->lock);
	} else if (kept != 1) {
		struct swnic_umem *gone = NULL;

		spin_lock_bh(&mr->lock);
		if (mr->umem == umem)
			gone = swnic_mr_revoke_locked(mr);
		spin_unlock_bh(&mr->lock);
		if (gone)
			swnic_mr_revoked(mr, gone, false);
	}
	swnic_umem_put(umem);
	if (again)
		return;
out:
	swnic_mr_put(mr);
}

const struct mmu_interval_notifier_ops swnic_mr_notifier_ops = {
	.invalidate = swnic_mr_invalidate,
};

/**
 * swnic_mr_revoke_work() - report a revocation from process context
 * @work: the MR's revoke_work; the MR holds a reference for it
 *
 * This is the one place an "MR revoked" event leaves the MR code: the
 * netlink family announces it to its event group (the invalidation page
 * and the counters already have it). Nothing is announced for a domain
 * that closed meanwhile.
 */
void swnic_mr_revoke_work(struct work_struct *work)
{
	struct swnic_mr *mr = container_of(work, struct swnic_mr, revoke_work);
	struct swnic_domain *dom;
	struct swnic_mr_info info;

	rcu_read_lock();
	dom = rcu_dereference(mr->mrd->dom);
	if (dom && !kref_get_unless_zero(&dom->ref))
		dom = NULL;
	rcu_read_unlock();
	if (dom) {
		swnic_mr_info_fill(mr, &info);
		swnic_nl_mr_revoked(dom, &info);
		swnic_domain_put(dom);
	}
	swnic_mr_put(mr);
}

/* ---- the invalidation page ---------------------------------------------- */

/**
 * swnic_inval_init() - allocate and lay out an invalidation page
 * @inv: embedded in its MR domain
 *
 * Return: 0 or -ENOMEM.
 */
int swnic_inval_init(struct swnic_inval *inv)
{
	size_t ring_off = sizeof(struct swnic_inval_page);

	BUILD_BUG_ON(sizeof(struct swnic_inval_page) != 64);
	BUILD_BUG_ON(sizeof(struct swnic_inval_rec) != 32);

	spin_lock_init(&inv->lock);
	inv->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!inv->page)
		return -ENOMEM;
	inv->hdr = page_address(inv->page);
	inv->ring = (void *)inv->hdr + ring_off;
	inv->entries = rounddown_pow_of_two((PAGE_SIZE - ring_off) /
					    sizeof(struct swnic_inval_rec));
	inv->gen = 0;
	inv->hdr->entries = inv->entries;
	inv->hdr->ring_offset = ring_off;
	return 0;
}

/**
 * swnic_inval_destroy() - drop the kernel's reference to the page
 * @inv: the invalidation page; mappings hold references of their own
 */
void swnic_inval_destroy(struct swnic_inval *inv)
{
	put_page(inv->page);
}

/**
 * swnic_inval_push() - publish an invalidation record
 * @inv: the domain's page
 * @addr: start of the revoked range
 * @length: its length
 * @key: the revoked key
 *
 * The record is complete before the generation that names it is visible
 * (release); the slot it reuses is no longer covered by the previous
 * generation when its first byte changes (wmb), so a reader that re-checks
 * the generation after copying can tell a torn copy.
 *
 * Context: any; takes @inv->lock.
 */
void swnic_inval_push(struct swnic_inval *inv, u64 addr, u64 length, u64 key)
{
	struct swnic_inval_rec *rec;
	unsigned long flags;
	u64 gen;

	spin_lock_irqsave(&inv->lock, flags);
	gen = inv->gen + 1;
	rec = &inv->ring[(gen - 1) & (inv->entries - 1)];
	/* The previous gen is visible before this slot starts to change. */
	smp_wmb();
	WRITE_ONCE(rec->gen, gen);
	WRITE_ONCE(rec->addr, addr);
	WRITE_ONCE(rec->length, length);
	WRITE_ONCE(rec->key, key);
	/* The record is complete before its gen is (pairs with acquire). */
	smp_store_release(&inv->hdr->gen, gen);
	inv->gen = gen;
	spin_unlock_irqrestore(&inv->lock, flags);
}

/**
 * swnic_inval_gen() - the generation published last
 * @inv: the invalidation page
 *
 * Return: the number of records ever published.
 */
u64 swnic_inval_gen(struct swnic_inval *inv)
{
	unsigned long flags;
	u64 gen;

	spin_lock_irqsave(&inv->lock, flags);
	gen = inv->gen;
	spin_unlock_irqrestore(&inv->lock, flags);
	return gen;
}

/**
 * swnic_inval_mmap() - map the domain's invalidation page (SWNIC_MMAP_INVAL)
 * @dom: the domain (the caller checked it is the owner's)
 * @id: object id from the offset, must be 0
 * @vma: exactly one page, read-only and not executable
 *
 * Return: 0, -EINVAL (id or size), -EPERM (executable), -EACCES
 * (writable), -ENODEV (closing).
 */
int swnic_inval_mmap(struct swnic_domain *dom, u32 id,
		     struct vm_area_struct *vma)
{
	struct swnic_mr_domain *mrd;
	struct page *page;
	int ret;

	if (id)
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	/* Read-only, the owner's alone as its rings: no child inherits it. */
	ret = swnic_mmap_prepare(vma, SWNIC_MAP_OWNER);
	if (ret)
		return ret;

	rcu_read_lock();
	mrd = rcu_dereference(dom->mr);
	page = mrd ? mrd->inval.page : NULL;
	if (page)
		get_page(page);
	rcu_read_unlock();
	if (!page)
		return -ENODEV;

	ret = vm_insert_page(vma, vma->vm_start, page);
	put_page(page);
	return ret;
}
