// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel access API of MRs: resolve (key, address, length, right) into
 * a reference on the MR and its pages, and walk those pages.
 *
 * Every access is checked here and nowhere else: the key under the
 * accessor's auth key, the MR's state, the right asked for against the
 * MR's rights, and the bounds, with the address taken as a virtual address
 * (the owner's accesses, FI_MR_VIRT_ADDR MRs) or an offset.
 *
 * Pinned MRs: the reference holds the umem, so the pages stay pinned even
 * if the MR is revoked or deregistered meanwhile. ODP MRs: pages are
 * faulted in with hmm_range_fault() a window at a time and held with a
 * page reference while the caller uses them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cntr.h"
#include "copy.h"
#include "domain.h"
#include "mr.h"
#include "umem.h"

/* Pages an ODP walk faults in and holds at a time. */
#define SWNIC_ODP_WINDOW	16

/* Give up faulting an ODP window that keeps being invalidated (ms). */
#define SWNIC_ODP_TIMEOUT_MS	1000

/* Return: the byte offset of @t in @mr, or a negative errno. */
static s64 swnic_mr_target_offset(const struct swnic_mr *mr,
				  const struct swnic_mr_target *t)
{
	u64 start = t->addr;
	u32 i;

	/*
	 * The owner's access to a REG_IOV MR names a virtual address: the
	 * segment holding all of it, at its offset in the concatenation.
	 */
	if ((t->flags & SWNIC_MR_TARGET_LOCAL) && mr->nsegs) {
		for (i = 0; i < mr->nsegs; i++) {
			const struct swnic_mr *seg = mr->segs[i];

			if (t->addr >= seg->addr &&
			    t->addr - seg->addr <= seg->length &&
			    t->len <= seg->length - (t->addr - seg->addr))
				return mr->seg_off[i] + (t->addr - seg->addr);
		}
		return -ERANGE;
	}

	if ((t->flags & SWNIC_MR_TARGET_LOCAL) ||
	    (mr->flags & SWNIC_MR_REG_VIRT_ADDR)) {
		if (t->addr < mr->addr)
			return -ERANGE;
		start = t->addr - mr->addr;
	}
	if (start > mr->length || t->len > mr->length - start)
		return -ERANGE;
	return start;
}

static int swnic_mr_check_right(const struct swnic_mr_target *t)
{
	u32 allowed = (t->flags & SWNIC_MR_TARGET_LOCAL) ?
		      SWNIC_MR_ACCESS_LOCAL : SWNIC_MR_ACCESS_REMOTE;

	if (t->flags & ~SWNIC_MR_TARGET_FLAGS || !t->len ||
	    hweight32(t->access) != 1 || !(t->access & allowed))
		return -EINVAL;
	return 0;
}

/*
 * Does @mr admit the source of @t? Every access to an MR without a peer
 * list, and the owner's own; else a peer's that matches an entry: the
 * key it came with and, if the entry names one, its endpoint's address
 * (0: any) and port, as directed receives match a sender.
 */
static bool swnic_mr_peer_allowed(const struct swnic_mr *mr,
				  const struct swnic_mr_target *t)
{
	u32 i;

	if (!mr->npeers || (t->flags & SWNIC_MR_TARGET_LOCAL))
		return true;
	if (!(t->flags & SWNIC_MR_TARGET_FROM_KEY))
		return false;
	for (i = 0; i < mr->npeers; i++) {
		const struct swnic_mr_peer *p = &mr->peers[i];

		if (p->auth_key != t->from_key)
			continue;
		if (!(p->flags & SWNIC_MR_PEER_ADDR))
			return true;
		if (!(t->flags & SWNIC_MR_TARGET_FROM_ADDR) ||
		    p->port != t->from_port)
			continue;
		if (!p->addr || (__force __be32)p->addr == t->from_addr)
			return true;
	}
	return false;
}

/*
 * Take @mr's pages for an access if it is VALID: *@umem is its pinned
 * umem, referenced, or NULL for an ODP MR. Return: 0, -EKEYREVOKED
 * (revoked), -ENOKEY (being deregistered).
 */
static int swnic_mr_take_umem(struct swnic_mr *mr, struct swnic_umem **umem)
{
	int ret = 0;

	*umem = NULL;
	spin_lock_bh(&mr->lock);
	if (mr->state == SWNIC_MR_STATE_VALID) {
		*umem = mr->umem;
		if (*umem)
			swnic_umem_get(*umem);
	} else {
		ret = mr->state == SWNIC_MR_STATE_REVOKED ? -EKEYREVOKED :
							    -ENOKEY;
	}
	spin_unlock_bh(&mr->lock);
	return ret;
}

/**
 * swnic_mr_ref_get() - check an access and take a reference for it
 * @dom: the domain that owns the MR (for a peer's access, the target);
 *	 the caller holds a reference on it
 * @t: what is accessed, how, by whom
 * @ref: out: the reference, for swnic_mr_ref_walk() and swnic_mr_ref_put()
 *
 * Context: any but hardirq; does not sleep.
 * Return: 0, -EINVAL malformed @t, -ENOKEY no MR with that key under that
 * auth key (or being deregistered), -EKEYREVOKED revoked, -EACCES the MR
 * lacks the right or does not admit @t's source (SWNIC_MR_REG_PEERS),
 * -ERANGE outside the MR.
 */
int swnic_mr_ref_get(struct swnic_domain *dom, const struct swnic_mr_target *t,
		     struct swnic_mr_ref *ref)
{
	struct swnic_mr_domain *mrd;
	struct swnic_mr *mr;
	s64 start;
	int ret;

	ret = swnic_mr_check_right(t);
	if (ret)
		return ret;
	mrd = swnic_mr_domain_get_rcu(dom);
	if (!mrd)
		return -ENOKEY;

	mr = swnic_mr_lookup_key(mrd, t->auth_key, t->key);
	if (!mr) {
		ret = -ENOKEY;
		goto err_denied;
	}
	if (!(mr->access & t->access) || !swnic_mr_peer_allowed(mr, t)) {
		ret = -EACCES;
		goto err_mr;
	}
	start = swnic_mr_target_offset(mr, t);
	if (start < 0) {
		ret = start;
		goto err_mr;
	}

	*ref = (struct swnic_mr_ref) {
		.mr = mr,
		.start = start,
		.len = t->len,
		.write = t->access & SWNIC_MR_ACCESS_WRITES,
	};
	ret = swnic_mr_take_umem(mr, &ref->umem);
	if (ret)
		goto err_mr;
	swnic_mr_domain_put(mrd);
	return 0;

err_mr:
	swnic_mr_put(mr);
err_denied:
	swnic_mr_stat_inc(mrd, access_denied);
	swnic_mr_domain_put(mrd);
	return ret;
}

/**
 * swnic_mr_ref_count() - count a peer access that moved its data
 * @ref: from swnic_mr_ref_get()
 * @access: SWNIC_MR_ACCESS_REMOTE_READ or SWNIC_MR_ACCESS_REMOTE_WRITE
 *
 * The MR's counter (SWNIC_IOCTL_MR_BIND_CNTR, libfabric's FI_MR_RMA_EVENT)
 * counts it if bound for that kind. Called once per operation, by the
 * transport, whatever number of references the operation took.
 *
 * Context: any but hardirq.
 */
void swnic_mr_ref_count(const struct swnic_mr_ref *ref, u32 access)
{
	struct swnic_mr *mr = ref->mr;
	/* Pairs with the release in swnic_mr_bind_cntr(); held by the MR. */
	struct swnic_cntr *cntr = smp_load_acquire(&mr->cntr);

	if (cntr && (mr->cntr_access & access))
		swnic_cntr_inc(cntr, false);
}

/**
 * swnic_mr_ref_put() - end an access
 * @ref: from swnic_mr_ref_get()
 *
 * Context: any but hardirq. If the MR was revoked or deregistered
 * meanwhile, the pages are unpinned from a workqueue.
 */
void swnic_mr_ref_put(struct swnic_mr_ref *ref)
{
	swnic_umem_put_async(ref->umem);
	swnic_mr_put(ref->mr);
	ref->umem = NULL;
	ref->mr = NULL;
}

static int swnic_mr_walk_pinned(struct swnic_mr_ref *ref, u64 off, u64 len,
				swnic_mr_page_fn fn, void *ctx)
{
	struct swnic_umem *umem = ref->umem;
	unsigned long idx, contig = 0;
	struct page *page = NULL;
	unsigned int pgoff, n;
	int ret;

	/* @off: from the start of the umem's first page. */
	off += ref->mr->addr - umem->addr;
	while (len) {
		idx = off >> PAGE_SHIFT;
		pgoff = offset_in_page(off);
		if (!contig)
			page = swnic_umem_page(umem, idx, &contig);
		else
			page = nth_page(page, 1);
		contig--;
		n = min_t(u64, len, PAGE_SIZE - pgoff);
		ret = fn(ctx, page, pgoff, n);
		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

/* An ODP window's wait: a tick asleep, counted against @ref's access. */
static void swnic_odp_nap(struct swnic_mr_ref *ref)
{
	unsigned long j = jiffies;

	schedule_timeout_uninterruptible(1);
	ref->stalled += max(jiffies - j, 1UL);
}

/*
 * One ODP window: fault in the @npages pages of @mr from @start, then call
 * @fn on the pieces of [@pgoff, @pgoff + @len) of them with mr->lock held
 * and the notifier sequence checked under it (Documentation/mm/hmm.rst:
 * driver lock, mmu_interval_read_retry(), then use the pages). An
 * invalidation of the window takes mr->lock, so it waits for the copy to
 * end before the pages go; one that ran since the fault makes us fault
 * again instead of touching pages the process no longer maps.
 *
 * The walk itself never faults: a page that is not there (or not writable
 * for a write) is faulted in as a copy's destination is
 * (swnic_fault_in_mm(): never by a FUSE server's read, which may never
 * come), and the window is looked at again. hmm_range_fault() with
 * HMM_PFN_REQ_FAULT waited for such a read - for ever, uninterruptibly,
 * in a wire round too.
 *
 * Bounded: gives up after SWNIC_ODP_TIMEOUT_MS of invalidations (-EBUSY)
 * or of a page that does not come in, or of an mmap lock its owner keeps
 * (-EFAULT: only the caller's own, in its own call, is waited for), and
 * on a fatal signal (-EINTR). The time asleep, and that of looks an
 * invalidation undid, counts for the whole access (@ref's stalled): an
 * owner that let its lock go just before each window's second ran out
 * kept a 1 GiB write of another's asleep for hours, 64 KiB a second.
 */
static int swnic_mr_odp_window(struct swnic_mr_ref *ref, unsigned long start,
			       unsigned int npages, unsigned int pgoff,
			       u64 len, swnic_mr_page_fn fn, void *ctx)
{
	unsigned long budget = msecs_to_jiffies(SWNIC_ODP_TIMEOUT_MS);
	unsigned long timeout = jiffies + budget, pass_at;
	struct page *dirty[SWNIC_ODP_WINDOW];
	struct swnic_mr *mr = ref->mr;
	struct mm_struct *mm = mr->mrd->mm;
	unsigned long pfns[SWNIC_ODP_WINDOW];
	struct hmm_range range = {
		.notifier = &mr->notifier,
		.start = start,
		.end = start + ((unsigned long)npages << PAGE_SHIFT),
		.hmm_pfns = pfns,
		/* A snapshot: the faults are ours, below. */
		.default_flags = 0,
	};
	unsigned long need = HMM_PFN_VALID | (ref->write ? HMM_PFN_WRITE : 0);
	/* A wire round's: out of reach now is later, or on its last try a fault */
	int later = ref->last_try ? -EFAULT : -SWNIC_EFAULTLATER;
	unsigned int i, n, ndirty = 0, passes = 0;
	bool waiting = false;
	int ret;

	if (!mmget_not_zero(mm))
		return -EFAULT;
	for (;;) {
		/*
		 * Not in a round: it may run in any task that passed by (a
		 * poster to the same peer, an inline section), and a peer's
		 * read failed EINTR for another user's death. A round never
		 * sleeps here, and looks twice at most.
		 */
		if (!ref->round && fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		/* A round looks twice; the wire must not wait for more. */
		if (ref->round && ++passes > 2) {
			ret = later;
			break;
		}
		if (time_after(jiffies, timeout) || ref->stalled > budget) {
			ret = waiting ? -EFAULT : -EBUSY;
			break;
		}
		pass_at = jiffies;
		range.notifier_seq = mmu_interval_read_begin(&mr->notifier);
		if (!mmap_read_trylock(mm)) {
			if (ref->round) {
				ret = later;
				break;
			}
			/* Another's lock, kept as long as it likes: not ours. */
			if (!swnic_may_wait_mm(mm)) {
				waiting = true;
				swnic_odp_nap(ref);
				continue;
			}
			if (mmap_read_lock_killable(mm)) {
				ret = -EINTR;
				break;
			}
		}
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
		if (ret == -EBUSY) {
			/* Invalidated meanwhile: that time counts too. */
			ref->stalled += jiffies - pass_at;
			cond_resched();
			continue;
		}
		if (ret) {
			ret = -EFAULT;
			break;
		}
		for (i = 0; i < npages && (pfns[i] & need) == need; i++)
			;
		if (i < npages) {
			ret = (ref->round ? swnic_fault_in_mm_try :
			       swnic_fault_in_mm_nowait)(mm, start +
						  ((unsigned long)i << PAGE_SHIFT),
						  (u64)(npages - i) << PAGE_SHIFT,
						  ref->write);
			if (ret == -EAGAIN && ref->round) {
				ret = later;
				break;
			}
			if (ret == -EAGAIN) {
				/* Its mmap lock taken: looked at again. */
				waiting = true;
				swnic_odp_nap(ref);
				continue;
			}
			if (ret == -EINTR && ref->round) {
				/* A passer-by's signal: never the peer's fault. */
				ret = -SWNIC_EFAULTLATER;
				break;
			}
			if (ret) {
				ret = ret == -EINTR ? ret : -EFAULT;
				break;
			}
			/* Looked at again: at once, then a tick apart. */
			if (waiting && !ref->round)
				swnic_odp_nap(ref);
			else
				cond_resched();
			waiting = true;
			continue;
		}
		waiting = false;

		spin_lock_bh(&mr->lock);
		if (mr->state != SWNIC_MR_STATE_VALID) {
			spin_unlock_bh(&mr->lock);
			ret = -ENOKEY;
			break;
		}
		if (mmu_interval_read_retry(&mr->notifier,
					    range.notifier_seq)) {
			spin_unlock_bh(&mr->lock);
			ref->stalled += jiffies - pass_at;
			cond_resched();
			continue;
		}
		/* The pages are the range's until we unlock: copy now. */
		for (i = 0; i < npages && !ret; i++) {
			struct page *page = hmm_pfn_to_page(pfns[i]);

			n = min_t(u64, len, PAGE_SIZE - pgoff);
			ret = fn(ctx, page, pgoff, n);
			if (ref->write) {
				/* Dirtied below, where that may sleep. */
				get_page(page);
				dirty[ndirty++] = page;
			}
			len -= n;
			pgoff = 0;
		}
		if (mr->odp_dropped) {
			mr->odp_dropped = false;
			atomic64_inc(&mr->refaults);
			swnic_mr_stat_inc(mr->mrd, refaults);
		}
		mr->odp_mapped = true;
		spin_unlock_bh(&mr->lock);
		break;
	}
	mmput(mm);
	for (i = 0; i < ndirty; i++) {
		set_page_dirty_lock(dirty[i]);
		put_page(dirty[i]);
	}
	return ret;
}

static int swnic_mr_walk_odp(struct swnic_mr_ref *ref, u64 off, u64 len,
			     swnic_mr_page_fn fn, void *ctx)
{
	unsigned long va = ref->mr->addr + off;
	unsigned int npages, pgoff;
	u64 n;
	int ret = 0;

	might_sleep();
	while (len && !ret) {
		pgoff = offset_in_page(va);
		npages = min_t(u64, SWNIC_ODP_WINDOW,
			       DIV_ROUND_UP(pgoff + len, PAGE_SIZE));
		n = min_t(u64, len, ((u64)npages << PAGE_SHIFT) - pgoff);
		ret = swnic_mr_odp_window(ref, va & PAGE_MASK, npages, pgoff,
					  n, fn, ctx);
		va += n;
		len -= n;
		if (len && !ret)
			cond_resched();
	}
	return ret;
}

/*
 * REG_IOV: walk [@off, @off + @len) of the concatenation, one segment at
 * a time. Each piece takes what an access to that segment would: its
 * state checked, its pins held while the piece is walked; the bounds are
 * the segment's own (the piece never leaves it).
 */
static int swnic_mr_walk_segs(struct swnic_mr_ref *ref, u64 off, u64 len,
			      swnic_mr_page_fn fn, void *ctx)
{
	const struct swnic_mr *mr = ref->mr;
	u32 i;
	int ret = 0;

	for (i = 0; i < mr->nsegs && len && !ret; i++) {
		struct swnic_mr *seg = mr->segs[i];
		struct swnic_mr_ref piece = {
			.mr = seg,
			.write = ref->write,
			.round = ref->round,
			.last_try = ref->last_try,
		};
		u64 so = mr->seg_off[i], n;

		if (off >= so + seg->length)
			continue;
		n = min_t(u64, len, so + seg->length - off);
		/* Never write pages a segment pinned read-only. */
		if (ref->write && !(seg->access & SWNIC_MR_ACCESS_WRITES)) {
			ret = -EACCES;
			break;
		}
		ret = swnic_mr_take_umem(seg, &piece.umem);
		if (ret)
			break;
		piece.start = off - so;
		piece.len = n;
		if (piece.umem)
			ret = swnic_mr_walk_pinned(&piece, off - so, n, fn, ctx);
		else
			ret = swnic_mr_walk_odp(&piece, off - so, n, fn, ctx);
		swnic_umem_put_async(piece.umem);
		off += n;
		len -= n;
	}
	if (!ret && len)	/* cannot be: the access was bounds checked */
		ret = -ERANGE;
	return ret;
}

/**
 * swnic_mr_ref_span() - where part of an access is in its owner's memory
 * @ref: from swnic_mr_ref_get()
 * @pos: byte offset from the start of the access (< its length)
 * @va: out: the virtual address (in the MR owner) of byte @pos
 *
 * Return: the bytes from @pos that are contiguous in the owner's memory:
 * to the end of the access, or of the REG_IOV segment @pos is in.
 */
u64 swnic_mr_ref_span(const struct swnic_mr_ref *ref, u64 pos, u64 *va)
{
	const struct swnic_mr *mr = ref->mr;
	u64 off = ref->start + pos, end = ref->start + ref->len, so;
	u32 i;

	for (i = mr->nsegs; i-- > 0;) {
		so = mr->seg_off[i];
		if (off < so)
			continue;
		*va = mr->segs[i]->addr + (off - so);
		return min(end, so + mr->segs[i]->length) - off;
	}
	*va = mr->addr + off;
	return end - off;
}

/**
 * swnic_mr_ref_walk() - call @fn for each page piece of part of an access
 * @ref: from swnic_mr_ref_get()
 * @pos: byte offset from the start of the access
 * @len: bytes; @pos + @len must not exceed the access's length
 * @fn: called with each page, offset in it and length, in address order;
 *	writes through the page if the access is a writing one
 * @ctx: for @fn
 *
 * Context: pinned MRs: any but hardirq, as @fn allows; no lock is held
 * while @fn runs and nothing yields: callers walk long accesses in
 * pieces. ODP MRs: process context, may sleep (faults, rescheduling
 * between windows); @fn runs under mr->lock (a spinlock, BH off), so that
 * no invalidation can take the pages while it uses them: it must not
 * sleep or fault (no user copies: bounce through a kernel buffer).
 * Return: 0, -ERANGE beyond the access, @fn's non-zero return, or for ODP
 * -EFAULT (not mapped), -ENOKEY (deregistered), -EBUSY (kept changing),
 * -EINTR (fatal signal).
 */
int swnic_mr_ref_walk(struct swnic_mr_ref *ref, u64 pos, u64 len,
		      swnic_mr_page_fn fn, void *ctx)
{
	if (pos > ref->len || len > ref->len - pos)
		return -ERANGE;
	if (ref->mr->nsegs)
		return swnic_mr_walk_segs(ref, ref->start + pos, len, fn, ctx);
	if (ref->umem)
		return swnic_mr_walk_pinned(ref, ref->start + pos, len, fn, ctx);
	return swnic_mr_walk_odp(ref, ref->start + pos, len, fn, ctx);
}

struct swnic_mr_copy {
	char *buf;
	bool to_mr;
	const struct swnic_kmsg *km;	/* to the MR from it, at @kpos */
	u64 kpos;
};

static int swnic_mr_copy_page(void *ctx, struct page *page,
			      unsigned int offset, unsigned int len)
{
	struct swnic_mr_copy *c = ctx;
	void *kaddr;
	int ret;

	if (c->km) {
		kaddr = kmap_local_page(page);
		ret = c->km->read(c->km, c->kpos, kaddr + offset, len);
		kunmap_local(kaddr);
		flush_dcache_page(page);
		c->kpos += len;
		return ret;
	}
	if (c->to_mr)
		memcpy_to_page(page, offset, c->buf, len);
	else
		memcpy_from_page(c->buf, page, offset, len);
	c->buf += len;
	return 0;
}

/**
 * swnic_mr_ref_copy_to() - copy a kernel buffer into an access's pages
 * @ref: a writing access (RECV, READ, REMOTE_WRITE)
 * @pos: byte offset from the start of the access
 * @buf: source
 * @len: bytes
 *
 * Return: 0, -EPERM for a reading access, or swnic_mr_ref_walk()'s errors.
 */
int swnic_mr_ref_copy_to(struct swnic_mr_ref *ref, u64 pos, const void *buf,
			 u64 len)
{
	struct swnic_mr_copy c = { .buf = (char *)buf, .to_mr = true };

	if (!ref->write)
		return -EPERM;
	return swnic_mr_ref_walk(ref, pos, len, swnic_mr_copy_page, &c);
}

/**
 * swnic_mr_ref_copy_kmsg() - copy a kernel message into an access's pages
 * @ref: a writing access (RECV, READ, REMOTE_WRITE)
 * @pos: byte offset from the start of the access
 * @km: source, read from its start (one page's piece at a time, between
 *	which an ODP access may sleep)
 * @len: bytes
 *
 * Return: as swnic_mr_ref_copy_to(), or @km's read error.
 */
int swnic_mr_ref_copy_kmsg(struct swnic_mr_ref *ref, u64 pos,
			   const struct swnic_kmsg *km, u64 len)
{
	struct swnic_mr_copy c = { .km = km };

	if (!ref->write)
		return -EPERM;
	return swnic_mr_ref_walk(ref, pos, len, swnic_mr_copy_page, &c);
}

/**
 * swnic_mr_ref_copy_from() - copy an access's pages into a kernel buffer
 * @ref: a reading access (SEND, WRITE, REMOTE_READ)
 * @pos: byte offset from the start of the access
 * @buf: destination
 * @len: bytes
 *
 * Return: 0, -EPERM for a writing access, or swnic_mr_ref_walk()'s errors.
 */
int swnic_mr_ref_copy_from(struct swnic_mr_ref *ref, u64 pos, void *buf,
			   u64 len)
{
	struct swnic_mr_copy c = { .buf = buf, .to_mr = false };

	if (ref->write)
		return -EPERM;
	return swnic_mr_ref_walk(ref, pos, len, swnic_mr_copy_page, &c);
}

/**
 * swnic_mr_ref_get_recv() - the owner's pinned MR under a receive buffer
 * @dom: the domain that posted the receive
 * @handle: the handle the receive named (SWNIC_RQE_MR): a hint
 * @addr: the bytes to write: a virtual address in @dom's memory
 * @len: bytes, not 0
 * @ref: out: a writing reference, for swnic_mr_ref_copy_in()
 *
 * The receive's owner registered the buffer (the provider's registration
 * cache does), so its pages are pinned already, and kept those of the
 * range by the MR's notifier: an invalidation revokes the MR. A delivery
 * then writes them directly instead of pinning the buffer for each
 * message. Only a valid pinned MR of @dom, of its own pages (not ODP, not
 * REG_IOV), with the RECV right, covering all of [@addr, @addr + @len)
 * serves: whatever MR the handle names now, it maps exactly those bytes.
 *
 * Context: any but hardirq; does not sleep.
 * Return: 0, or -ENOENT: no such MR (the caller copies without it).
 */
int swnic_mr_ref_get_recv(struct swnic_domain *dom, u32 handle, u64 addr,
			  u64 len, struct swnic_mr_ref *ref)
{
	struct swnic_mr_target t = {
		.flags = SWNIC_MR_TARGET_LOCAL,
		.addr = addr,
		.len = len,
	};
	struct swnic_mr_domain *mrd;
	struct swnic_mr *mr;
	s64 start;

	mrd = swnic_mr_domain_get_rcu(dom);
	if (!mrd)
		return -ENOENT;
	mr = swnic_mr_lookup_handle(mrd, handle);
	swnic_mr_domain_put(mrd);
	if (!mr)
		return -ENOENT;
	if (mr->nsegs || !(mr->access & SWNIC_MR_ACCESS_RECV) || !len)
		goto err;
	start = swnic_mr_target_offset(mr, &t);
	if (start < 0)
		goto err;

	*ref = (struct swnic_mr_ref) {
		.mr = mr,
		.start = start,
		.len = len,
		.write = true,
	};
	/* Valid and pinned (an ODP MR has no umem to write through). */
	if (!swnic_mr_take_umem(mr, &ref->umem) && ref->umem)
		return 0;
err:
	swnic_mr_put(mr);
	return -ENOENT;
}

/**
 * swnic_mr_ref_copy_in() - copy a message into all of a pinned access
 * @ref: from swnic_mr_ref_get_recv()
 * @usrc: source in the current address space, or NULL to use @ksrc
 * @ksrc: kernel source, used when @usrc is NULL
 * @len: bytes: the access's length
 *
 * Never sleeps or faults the destination in (its pages are pinned); a
 * caller that must not sleep on the source disables page faults around
 * the call. A fault may leave part of the destination written.
 *
 * Return: 0, -EFAULT (the source), -ERANGE (@len is not the access's).
 */
int swnic_mr_ref_copy_in(struct swnic_mr_ref *ref, const void __user *usrc,
			 const void *ksrc, u64 len)
{
	struct swnic_copy_src src;
	int ret;

	swnic_copy_src_init(&src, usrc, ksrc, len);
	ret = swnic_mr_ref_copy_src_in(ref, &src, len);
	swnic_copy_src_end(&src);
	return ret;
}

/**
 * swnic_mr_ref_copy_src_in() - swnic_mr_ref_copy_in() from a source begun
 * @ref: from swnic_mr_ref_get_recv()
 * @src: its next @len bytes are copied (the caller ends it)
 * @len: bytes: the access's length
 *
 * Return: as swnic_mr_ref_copy_in().
 */
int swnic_mr_ref_copy_src_in(struct swnic_mr_ref *ref,
			     struct swnic_copy_src *src, u64 len)
{
	struct swnic_umem *umem = ref->umem;
	u64 off;
	int ret = 0;

	if (len != ref->len || !umem || !ref->write)
		return -ERANGE;
	/* From the start of the umem's first page. */
	off = ref->start + (ref->mr->addr - umem->addr);
	while (len && !ret) {
		unsigned int pgoff = offset_in_page(off);
		unsigned long contig, run, i;
		struct page *page;
		void *kaddr;
		size_t n;

		/* The pages of a huge page in one go, not 4 KiB at a time. */
		page = swnic_umem_page(umem, off >> PAGE_SHIFT, &contig);
		run = swnic_copy_folio_run(page, contig);
		n = min_t(u64, len, run * PAGE_SIZE - pgoff);
		run = DIV_ROUND_UP(pgoff + n, PAGE_SIZE);
		kaddr = run > 1 ? page_address(page) : kmap_local_page(page);
		ret = swnic_copy_src_to(src, kaddr + pgoff, n);
		if (run == 1)
			kunmap_local(kaddr);
		for (i = 0; i < run; i++)
			flush_dcache_page(nth_page(page, i));
		off += n;
		len -= n;
	}
	return ret;
}

/* Bytes an MR_ACCESS copies between two chances to reschedule. */
#define SWNIC_MR_ACCESS_CHUNK	SZ_64K

/*
 * The domain an MR_ACCESS names, with a reference: this one, or another
 * open domain of the same device (domain ids name domains per device).
 */
static struct swnic_domain *swnic_mr_access_domain(struct swnic_domain *dom,
						   u32 id)
{
	struct swnic_domain *target;

	if (!id || id == dom->id) {
		swnic_domain_get(dom);
		return dom;
	}
	target = swnic_domain_lookup(id);
	if (target && target->sdev != dom->sdev) {
		swnic_domain_put(target);
		target = NULL;
	}
	return target;
}

/* Copy between @ref and @buf a chunk at a time: yield, and stop if killed. */
static int swnic_mr_access_copy(struct swnic_mr_ref *ref, void *buf, u64 len,
				bool write)
{
	u64 pos, n;
	int ret = 0;

	for (pos = 0; pos < len && !ret; pos += n) {
		n = min_t(u64, len - pos, SWNIC_MR_ACCESS_CHUNK);
		if (pos) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
		if (write)
			ret = swnic_mr_ref_copy_to(ref, pos, buf + pos, n);
		else
			ret = swnic_mr_ref_copy_from(ref, pos, buf + pos, n);
	}
	return ret;
}

/**
 * swnic_mr_access_test() - SWNIC_IOCTL_MR_ACCESS: access an MR as a peer
 *	would, the API's test hook
 * @dom: the caller's domain
 * @arg: struct swnic_mr_access
 *
 * Makes the access the data path would make, through the same checks, and
 * copies between the MR and the caller's buffer. It grants nothing a peer
 * on this host could not do: a peer's access to another domain needs its
 * key, the MR's remote rights and the auth key of the MR - and a peer's
 * auth key is its domain's (the service it joined), never one it names.
 * So is the caller's here: a->auth_key may only repeat it (or be 0).
 *
 * Return: 0, the errnos of swnic_mr_ref_get() and swnic_mr_ref_walk(),
 * -EKEYREJECTED (an auth key that is not the domain's), -ENOENT (no such
 * domain on this device), -EINVAL, -EFAULT, -EACCES (not the owner),
 * -EINTR (fatal signal).
 */
int swnic_mr_access_test(struct swnic_domain *dom, void *arg)
{
	struct swnic_mr_access *a = arg;
	bool local = a->flags & SWNIC_MR_ACCESS_F_LOCAL;
	bool write = a->flags & SWNIC_MR_ACCESS_F_WRITE;
	u32 auth_key = READ_ONCE(dom->auth_key);
	struct swnic_mr_target t = {
		.key = a->key,
		.addr = a->addr,
		.len = a->len,
		.access = a->access,
		.auth_key = auth_key,
		/* A domain's access: its key, but no endpoint address. */
		.flags = local ? SWNIC_MR_TARGET_LOCAL :
				 SWNIC_MR_TARGET_FROM_KEY,
		.from_key = auth_key,
	};
	struct swnic_domain *target;
	struct swnic_mr_ref ref;
	void *buf;
	int ret;

	if (a->flags & ~(SWNIC_MR_ACCESS_F_WRITE | SWNIC_MR_ACCESS_F_LOCAL) ||
	    a->access & ~SWNIC_MR_ACCESS_ALL)
		return -EOPNOTSUPP;
	if (a->__reserved)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EACCES;
	/* The accessor's auth key is its domain's: 0 says "mine". */
	if (a->auth_key && a->auth_key != auth_key)
		return -EKEYREJECTED;
	if (!a->len || a->len > SWNIC_MR_ACCESS_MAX_LEN ||
	    write != !!(a->access & SWNIC_MR_ACCESS_WRITES))
		return -EINVAL;
	if (local && a->domain_id && a->domain_id != dom->id)
		return -EINVAL;

	buf = kvmalloc(a->len, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	if (write && copy_from_user(buf, u64_to_user_ptr(a->buf), a->len)) {
		ret = -EFAULT;
		goto out_buf;
	}
	target = swnic_mr_access_domain(dom, a->domain_id);
	if (!target) {
		ret = -ENOENT;
		goto out_buf;
	}
	/* As on the data path: without an auth key, one's own user only. */
	if (!t.auth_key && target != dom && !uid_eq(target->uid, dom->uid)) {
		ret = -EACCES;
		goto out_dom;
	}

	ret = swnic_mr_ref_get(target, &t, &ref);
	if (ret)
		goto out_dom;
	ret = swnic_mr_access_copy(&ref, buf, a->len, write);
	if (!ret)
		swnic_mr_ref_count(&ref, t.access);
	swnic_mr_ref_put(&ref);
	if (!ret && !write &&
	    copy_to_user(u64_to_user_ptr(a->buf), buf, a->len))
		ret = -EFAULT;
out_dom:
	swnic_domain_put(target);
out_buf:
	kvfree(buf);
	return ret;
}
