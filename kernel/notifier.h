/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_NOTIFIER_H
#define _SWNIC_NOTIFIER_H

#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct swnic_domain;
struct swnic_mr;

/*
 * The invalidation page of a domain: a struct swnic_inval_page header and
 * a ring of struct swnic_inval_rec, written only by the kernel and mapped
 * read-only into the process. Single producer (under @lock); readers are
 * lock-free and detect overflow from the generation (see uapi swnic.h).
 */
struct swnic_inval {
	spinlock_t lock;		/* serialises writers, protects @gen */
	struct page *page;		/* the shared page */
	struct swnic_inval_page *hdr;	/* its kernel address */
	struct swnic_inval_rec *ring;	/* entry 0 */
	u32 entries;			/* power of 2 */
	u64 gen;			/* records published */
};

extern const struct mmu_interval_notifier_ops swnic_mr_notifier_ops;

void swnic_mr_revoke_work(struct work_struct *work);
void swnic_mr_verify_work(struct work_struct *work);

int swnic_inval_init(struct swnic_inval *inv);
void swnic_inval_destroy(struct swnic_inval *inv);
void swnic_inval_push(struct swnic_inval *inv, u64 addr, u64 length, u64 key);
u64 swnic_inval_gen(struct swnic_inval *inv);
int swnic_inval_mmap(struct swnic_domain *dom, u32 id,
		     struct vm_area_struct *vma);

#endif /* _SWNIC_NOTIFIER_H */
