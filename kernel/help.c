// SPDX-License-Identifier: GPL-2.0
/*
 * Shared copies: the receiver's poll takes part in a large one-host copy.
 *
 * A one-host send is copied by the sender's call (its doorbell, or the
 * engine on its mm) while the receiver, polling its CQ for the completion,
 * spins. From SWNIC_HELP_MIN bytes on, if the receive names its buffer's
 * MR (so the destination's pages are pinned already), the sender takes
 * references on its source pages, publishes the copy on the receive's CQ
 * as a job of SWNIC_HELP_CHUNK chunks and flags the CQ's ring
 * (SWNIC_RING_F_HELP). The sender and whoever calls SWNIC_IOCTL_CQ_HELP on
 * that CQ then take chunks until none is left; the sender waits for the
 * helpers' last chunks, unpublishes the job and posts the completion as
 * always. Two CPUs copy the message instead of one - as a receiver-driven
 * copy does (libfabric's shm pulls large messages with process_vm_readv)
 * - and neither process gets the other's memory: the copy is between
 * pages the kernel holds, and a helper learns nothing it is not sent.
 *
 * A receiver that does not help (it sleeps in poll(), or its provider is
 * older) costs the sender the page references and a job for nothing; a
 * job that no one helped makes the CQ skip the next SWNIC_HELP_SKIP ones.
 */
#include <linux/completion.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swnic_queue.h>

#include "cq.h"
#include "domain.h"
#include "help.h"
#include "mr.h"
#include "stats.h"
#include "umem.h"

#define SWNIC_HELP_CHUNK	SZ_64K
#define SWNIC_HELP_PIECE	SZ_4M	/* the most one job covers */
#define SWNIC_HELP_PAGES	(SWNIC_HELP_PIECE / PAGE_SIZE + 1)
#define SWNIC_HELP_SKIP		8

/**
 * struct swnic_help_job - a copy the receive's CQ shares
 * @users: the sender and the helpers that found it; the last frees it
 * @done: completed with the last chunk
 * @src: the sender's pages, referenced by it until every chunk is done
 * @src_off: offset of the first byte in @src[0]
 * @umem: the receive's MR's pages (the sender holds the MR's reference)
 * @dst_off: offset of the first byte from the start of @umem's first page
 * @len: bytes
 * @nchunks: SWNIC_HELP_CHUNK chunks in @len
 * @next: the next chunk to take; @nchunks once all are taken
 * @finished: chunks copied
 * @helped: bytes the helpers copied
 * @rcu: freed after a grace period: a helper may still be looking at it
 *
 * A chunk is taken and copied with preemption disabled, so a chunk taken
 * is a chunk soon done: the sender waits for the chunks (@done), never
 * for a helper that is not running. Once @finished is @nchunks nobody
 * touches @src or @umem again; only @users keeps the struct.
 */
struct swnic_help_job {
	refcount_t users;
	struct completion done;
	struct page **src;
	unsigned int src_off;
	struct swnic_umem *umem;
	u64 dst_off;
	u64 len;
	u32 nchunks;
	atomic_t next;
	atomic_t finished;
	atomic64_t helped;
	struct rcu_head rcu;
};

/* Copy chunk @i: between pages, with streaming stores, never faulting. */
static u64 swnic_help_chunk(struct swnic_help_job *job, u32 i)
{
	u64 pos = (u64)i * SWNIC_HELP_CHUNK;
	u64 n = min_t(u64, job->len - pos, SWNIC_HELP_CHUNK);
	u64 s = job->src_off + pos, d = job->dst_off + pos;
	u64 left = n;

	while (left) {
		unsigned int so = offset_in_page(s), doff = offset_in_page(d);
		size_t k = min_t(u64, left, PAGE_SIZE - max(so, doff));
		unsigned long contig;
		struct page *dp;
		void *sa, *da;

		dp = swnic_umem_page(job->umem, d >> PAGE_SHIFT, &contig);
		sa = kmap_local_page(job->src[s >> PAGE_SHIFT]);
		da = kmap_local_page(dp);
		memcpy_flushcache(da + doff, sa + so, k);
		kunmap_local(da);
		kunmap_local(sa);
		flush_dcache_page(dp);
		s += k;
		d += k;
		left -= k;
	}
	wmb();	/* the streaming stores before the chunk counts as done */
	return n;
}

/*
 * Take chunks until none is left; a helper's count in @job->helped before
 * its chunk counts as done. Return: the bytes copied.
 */
static u64 swnic_help_run(struct swnic_help_job *job, bool helper)
{
	u64 copied = 0, n;
	u32 i;

	for (;;) {
		preempt_disable();
		/* Never past the last: a helper's calls cannot wrap it. */
		i = atomic_fetch_add_unless(&job->next, 1, job->nchunks);
		if (i >= job->nchunks) {
			preempt_enable();
			break;
		}
		n = swnic_help_chunk(job, i);
		if (helper)
			atomic64_add(n, &job->helped);
		copied += n;
		if (atomic_inc_return(&job->finished) == job->nchunks)
			complete(&job->done);
		preempt_enable();
		cond_resched();
	}
	return copied;
}

static void swnic_help_job_put(struct swnic_help_job *job)
{
	if (refcount_dec_and_test(&job->users))
		kfree_rcu(job, rcu);
}

static void swnic_help_put_pages(struct page **pages, int n)
{
	while (n > 0)
		put_page(pages[--n]);
}

/*
 * Share [@start, @start + @len) into @dst_off: one job. Return: 0, or
 * -EAGAIN (nothing copied): the source's pages are not all present, or
 * another copy is shared on @cq now.
 */
static int swnic_help_piece(struct swnic_cq *cq, struct swnic_umem *umem,
			    u64 dst_off, unsigned long start, u64 len,
			    struct page **pages)
{
	int nr = DIV_ROUND_UP(offset_in_page(start) + len, PAGE_SIZE);
	struct swnic_help_job *job;
	u64 helped;
	int got;

	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!job)
		return -EAGAIN;
	/*
	 * References, not pins: short-term reads, as a copy_from_user()
	 * would do. Lockless and never faulting (the caller holds the
	 * receiver's rx_lock: it must not wait on the sender's mmap lock or
	 * page faults); a page that is not present makes the caller copy
	 * the ordinary way, which faults it in with no lock held.
	 */
	got = get_user_pages_fast_only(start & PAGE_MASK, nr, 0, pages);
	if (got != nr) {
		swnic_help_put_pages(pages, got);
		kfree(job);
		return -EAGAIN;
	}
	refcount_set(&job->users, 1);
	init_completion(&job->done);
	job->src = pages;
	job->src_off = offset_in_page(start);
	job->umem = umem;
	job->dst_off = dst_off;
	job->len = len;
	job->nchunks = DIV_ROUND_UP(len, SWNIC_HELP_CHUNK);

	spin_lock(&cq->lock);
	if (rcu_access_pointer(cq->help_job)) {
		spin_unlock(&cq->lock);
		swnic_help_put_pages(pages, nr);
		kfree(job);
		return -EAGAIN;
	}
	rcu_assign_pointer(cq->help_job, job);
	spin_unlock(&cq->lock);
	swnic_ring_set_flags(&cq->ring, SWNIC_RING_F_HELP, 0);

	swnic_help_run(job, false);

	/* No new helper; the chunks helpers took are being copied now. */
	swnic_ring_set_flags(&cq->ring, 0, SWNIC_RING_F_HELP);
	spin_lock(&cq->lock);
	RCU_INIT_POINTER(cq->help_job, NULL);
	spin_unlock(&cq->lock);
	wait_for_completion(&job->done);

	helped = atomic64_read(&job->helped);
	if (helped)
		swnic_stat_add(cq->dom->sdev, cq->dom, SWNIC_STAT_COPY_HELP,
			       helped);
	else
		atomic_set(&cq->help_skip, SWNIC_HELP_SKIP);
	swnic_help_put_pages(pages, nr);
	swnic_help_job_put(job);
	return 0;
}

/**
 * swnic_help_copy_in() - copy a large message into a receive's MR, shared
 *	with the receiver's poll
 * @cq: the receive's CQ, where the job is published
 * @ref: from swnic_mr_ref_get_recv(): the receive's bytes in its MR
 * @usrc: the source, in the current address space
 * @len: bytes: the access's length
 *
 * Context: process, may sleep (waiting for a helper's last chunk); the
 * caller may hold the receiver's rx_lock: nothing here waits on either
 * process's memory.
 * Return: 0, -EFAULT (the source), -EINTR (a fatal signal, between two
 * jobs), or -EAGAIN if nothing was copied: the message is too short, or
 * not to be shared now (the caller copies it with swnic_mr_ref_copy_in()).
 */
int swnic_help_copy_in(struct swnic_cq *cq, struct swnic_mr_ref *ref,
		       const void __user *usrc, u64 len)
{
	unsigned long start = (unsigned long)usrc;
	u64 dst_off, done = 0;
	struct page **pages;
	int ret = 0;

	if (len < SWNIC_HELP_MIN || len != ref->len || !ref->umem ||
	    !ref->write || atomic_dec_if_positive(&cq->help_skip) >= 0 ||
	    rcu_access_pointer(cq->help_job))
		return -EAGAIN;
	pages = kvmalloc_array(min_t(u64, SWNIC_HELP_PAGES,
				     DIV_ROUND_UP(offset_in_page(start) + len,
						  PAGE_SIZE)),
			       sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return -EAGAIN;
	dst_off = ref->start + (ref->mr->addr - ref->umem->addr);

	while (done < len) {
		u64 n = min_t(u64, len - done, SWNIC_HELP_PIECE);

		/* A sender being killed stops, as a long copy does. */
		if (done && fatal_signal_pending(current)) {
			kvfree(pages);
			return -EINTR;
		}
		if (swnic_help_piece(cq, ref->umem, dst_off + done,
				     start + done, n, pages))
			break;
		done += n;
	}
	kvfree(pages);
	if (!done)
		return -EAGAIN;
	if (done < len) {
		/* The rest the ordinary way, as the caller would have. */
		struct swnic_mr_ref rest = *ref;

		rest.start += done;
		rest.len = len - done;
		pagefault_disable();
		ret = swnic_mr_ref_copy_in(&rest, usrc + done, NULL, rest.len);
		pagefault_enable();
	}
	return ret;
}

/**
 * swnic_cq_ioctl_help() - SWNIC_IOCTL_CQ_HELP: take chunks of the copy
 *	the CQ shares now, if any
 * @cq: the CQ whose fd the caller holds
 * @arg: struct swnic_cq_help
 *
 * Only the domain's owner helps, as only it maps the CQ's ring: another
 * process holding the fd (a forked child) would spend its CPU on the
 * owner's copies and learn their sizes.
 *
 * Return: 0 (with @copied), -EOPNOTSUPP for unknown flags, -EPERM for a
 * caller that is not the domain's owner.
 */
int swnic_cq_ioctl_help(struct swnic_cq *cq, void *arg)
{
	struct swnic_cq_help *h = arg;
	struct swnic_help_job *job;

	if (h->flags)
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(cq->dom))
		return -EPERM;
	h->copied = 0;
	rcu_read_lock();
	job = rcu_dereference(cq->help_job);
	if (!job || !refcount_inc_not_zero(&job->users)) {
		rcu_read_unlock();
		return 0;
	}
	rcu_read_unlock();

	h->copied = swnic_help_run(job, true);
	swnic_help_job_put(job);
	return 0;
}
