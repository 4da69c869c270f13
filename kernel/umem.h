/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_UMEM_H
#define _SWNIC_UMEM_H

#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct swnic_mr_domain;

/*
 * A run of physically contiguous pinned pages. Hugepage-backed memory (THP,
 * hugetlbfs) pins into one run per huge page or longer, so a 1 GiB range of
 * 2 MiB pages costs 512 runs, not 262144 page pointers.
 */
struct swnic_umem_extent {
	unsigned long pfn;	/* first page frame of the run */
	u32 first;		/* index of its first page in the umem */
	u32 npages;		/* pages in the run */
};

/*
 * Pinned user memory. Immutable once pinned; lives until its last reference
 * goes (the MR's while valid, plus one per access in flight). Its pages are
 * charged to the owning domain's mm (pinned_vm) and counters until then.
 */
struct swnic_umem {
	struct kref ref;
	struct swnic_mr_domain *mrd;	/* charged owner: holds a reference */
	unsigned long addr;		/* page-aligned start */
	unsigned long npages;		/* pages pinned */
	bool writable;			/* pinned FOLL_WRITE: dirty on unpin */
	bool hugetlb;			/* some pages are hugetlbfs pages */
	u32 nextents;			/* used entries of @ext */
	struct swnic_umem_extent *ext;	/* sorted by first, kvmalloc'ed */
	struct work_struct release_work; /* swnic_umem_put_async() */
};

struct swnic_umem *swnic_umem_pin(struct swnic_mr_domain *mrd,
				  unsigned long addr, u64 length,
				  bool writable);
void swnic_umem_put(struct swnic_umem *umem);
void swnic_umem_put_async(struct swnic_umem *umem);
void swnic_umem_flush(struct swnic_mr_domain *mrd);
int swnic_umem_flush_killable(struct swnic_mr_domain *mrd);

struct page *swnic_umem_page(const struct swnic_umem *umem,
			     unsigned long idx, unsigned long *contig);

static inline void swnic_umem_get(struct swnic_umem *umem)
{
	kref_get(&umem->ref);
}

static inline u64 swnic_umem_bytes(const struct swnic_umem *umem)
{
	return (u64)umem->npages << PAGE_SHIFT;
}

#endif /* _SWNIC_UMEM_H */
