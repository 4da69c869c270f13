// SPDX-License-Identifier: GPL-2.0
/*
 * One-copy transfers between address spaces: the destination's pages are
 * pinned for the length of the copy only (no long-term pin, nothing to
 * account), and the source is read straight from the current process's
 * memory (the poster's: its own syscall, or the engine running on its mm).
 */
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/magic.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "compat.h"
#include "copy.h"

#define SWNIC_COPY_CHUNK	64	/* pages pinned at a time */

/**
 * swnic_copy_folio_run() - pages one copy may cover from @page
 * @page: the first
 * @max: at most this many: the pages from @page on that the caller knows
 *	 to follow it (pinned in a row, or physically contiguous)
 *
 * Those of its folio (a transparent or hugetlb huge page), never across
 * folios, even physically adjacent ones: hardened usercopy allows a copy
 * from user space to span one folio only. Without a direct map for every
 * page (HIGHMEM) each page is mapped on its own.
 *
 * Return: 1 to @max.
 */
unsigned long swnic_copy_folio_run(struct page *page, unsigned long max)
{
	struct folio *folio = page_folio(page);

	if (IS_ENABLED(CONFIG_HIGHMEM) || !folio_test_large(folio))
		return 1;
	return min(max, folio_nr_pages(folio) -
			(page_to_pfn(page) - folio_pfn(folio)));
}

/*
 * How many of @pages (at most @n), pinned one by one, follow the first
 * within its folio, so that one copy covers them.
 */
static long swnic_copy_run(struct page **pages, long n)
{
	unsigned long pfn = page_to_pfn(pages[0]);
	long i, max = swnic_copy_folio_run(pages[0], n);

	for (i = 1; i < max; i++)
		if (page_to_pfn(pages[i]) != pfn + i)
			break;
	return i;
}

/**
 * swnic_copy_src_init() - start copying a message
 * @s: out
 * @usrc: source in the current address space, or NULL to use @ksrc
 * @ksrc: kernel source, used when @usrc is NULL
 * @len: bytes in all
 */
void swnic_copy_src_init(struct swnic_copy_src *s, const void __user *usrc,
			 const void *ksrc, size_t len)
{
	s->usrc = usrc;
	s->ksrc = ksrc;
	s->km = NULL;
	s->nt = usrc && len >= SWNIC_COPY_NT_MIN;
	if (s->nt)
		iov_iter_ubuf(&s->iter, ITER_SOURCE, (void __user *)usrc, len);
}

/**
 * swnic_copy_src_init_kmsg() - start copying a kernel message in pieces
 * @s: out
 * @km: the message, read from its start
 */
void swnic_copy_src_init_kmsg(struct swnic_copy_src *s,
			      const struct swnic_kmsg *km)
{
	*s = (struct swnic_copy_src) { .km = km };
}

/**
 * swnic_copy_src_to() - copy the next @n bytes of a message to @kaddr
 * @s: from swnic_copy_src_init()
 * @kaddr: destination, within one folio
 * @n: bytes
 *
 * Return: 0, or -EFAULT: the user source is not mapped (or, with page
 * faults disabled, not present).
 */
int swnic_copy_src_to(struct swnic_copy_src *s, void *kaddr, size_t n)
{
	if (s->nt)
		return copy_from_iter_nocache(kaddr, n, &s->iter) == n ?
		       0 : -EFAULT;
	if (s->usrc) {
		if (copy_from_user(kaddr, s->usrc, n))
			return -EFAULT;
		s->usrc += n;
		return 0;
	}
	if (s->km) {
		s->kpos += n;
		return s->km->read(s->km, s->kpos - n, kaddr, n);
	}
	memcpy(kaddr, s->ksrc, n);
	s->ksrc += n;
	return 0;
}

/**
 * swnic_copy_src_end() - the copy is over, done or not
 * @s: from swnic_copy_src_init()
 */
void swnic_copy_src_end(struct swnic_copy_src *s)
{
	if (s->nt)
		wmb();	/* streaming stores before the caller's CQE store */
}

/**
 * swnic_copy_to_mm() - copy into another process's memory
 * @mm: the destination address space (its owner may be running or not)
 * @dst: destination address in @mm
 * @usrc: source in the current address space, or NULL to use @ksrc
 * @ksrc: kernel source, used when @usrc is NULL
 * @len: bytes
 * @flags: SWNIC_COPY_NOFAULT: the caller holds a lock that others (other
 *	   processes, the engine) wait for, so the copy must not sleep on
 *	   memory that either process controls (a page to fault in, which a
 *	   userfaultfd can hold back forever, or @mm's mmap lock): it fails
 *	   with -SWNIC_EFAULTIN instead, and the caller faults in with no
 *	   lock held and tries again.
 *
 * Return: 0, -EFAULT if either side is not mapped/writable, -ESRCH if @mm
 * has exited, -SWNIC_EFAULTIN (NOFAULT only), -EINTR if a fatal signal
 * interrupted a long copy.
 */
int swnic_copy_to_mm(struct mm_struct *mm, u64 dst, const void __user *usrc,
		     const void *ksrc, size_t len, unsigned int flags)
{
	struct swnic_copy_src src;
	int ret;

	swnic_copy_src_init(&src, usrc, ksrc, len);
	ret = swnic_copy_src_to_mm(mm, dst, &src, len, flags);
	swnic_copy_src_end(&src);
	return ret;
}

/**
 * swnic_copy_src_to_mm() - swnic_copy_to_mm() from a source already begun
 * @mm: the destination address space
 * @dst: destination address in @mm
 * @src: the next @len bytes of it are copied (the caller ends it)
 * @len: bytes
 * @flags: as swnic_copy_to_mm()'s
 *
 * Return: as swnic_copy_to_mm().
 */
int swnic_copy_src_to_mm(struct mm_struct *mm, u64 dst,
			 struct swnic_copy_src *src, size_t len,
			 unsigned int flags)
{
	bool nofault = flags & SWNIC_COPY_NOFAULT;
	const void __user *usrc = src->usrc;
	struct page *pages[SWNIC_COPY_CHUNK];
	int ret = 0;

	if (!len)
		return 0;
	if (dst + len < dst)
		return -EFAULT;
	if (!mmget_not_zero(mm))
		return -ESRCH;

	while (len) {
		unsigned long start = dst & PAGE_MASK;
		unsigned long off = dst & ~PAGE_MASK;
		unsigned long nr = min_t(unsigned long, SWNIC_COPY_CHUNK,
					 DIV_ROUND_UP(off + len, PAGE_SIZE));
		long pinned, i, run;

		if (nofault) {
			if (!mmap_read_trylock(mm)) {
				ret = -SWNIC_EFAULTIN;
				break;
			}
			pinned = swnic_pin_user_pages_remote(mm, start, nr,
							     FOLL_WRITE |
							     FOLL_NOFAULT,
							     pages);
		} else {
			if (mmap_read_lock_killable(mm)) {
				ret = -EINTR;
				break;
			}
			pinned = swnic_pin_user_pages_remote(mm, start, nr,
							     FOLL_WRITE, pages);
		}
		mmap_read_unlock(mm);
		if (pinned <= 0) {
			ret = nofault ? -SWNIC_EFAULTIN : -EFAULT;
			break;
		}

		if (nofault && usrc)
			pagefault_disable();
		for (i = 0; i < pinned && len; i += run) {
			size_t n;
			void *kaddr;

			/*
			 * The pages of one huge page that follow each other
			 * are copied in one go: one call per run, not one per
			 * 4 KiB page.
			 */
			run = swnic_copy_run(pages + i, pinned - i);
			n = min_t(size_t, len, (size_t)run * PAGE_SIZE - off);
			run = DIV_ROUND_UP(off + n, PAGE_SIZE);
			kaddr = run > 1 ? page_address(pages[i]) :
				kmap_local_page(pages[i]);

			ret = swnic_copy_src_to(src, kaddr + off, n);
			if (run == 1)
				kunmap_local(kaddr);
			if (ret)
				break;
			dst += n;
			len -= n;
			off = 0;
		}
		if (nofault && usrc) {
			pagefault_enable();
			/* A source page that was not there: fault it in. */
			if (ret == -EFAULT)
				ret = -SWNIC_EFAULTIN;
		}
		unpin_user_pages_dirty_lock(pages, pinned, true);
		if (ret)
			break;
		if (len && !nofault) {
			/* Long copies yield, and end with their caller. */
			cond_resched();
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
		}
	}
	mmput(mm);
	return ret;
}

/*
 * Is @vma's I/O served by a process? A FUSE file's pages come from its
 * server, which any user may run and which may never answer: a fault on
 * one waits for it (its read, or page_mkwrite waiting for writeback),
 * uninterruptibly in a kernel thread - in a wire round, holding the
 * namespace's wire. FOLL_NOWAIT is no bound: a server that declines
 * asynchronous reads, or readahead, is read synchronously all the same.
 * So such pages are taken only as they are mapped, and anything that
 * needs a fault is a fault - as for a userfaultfd.
 */
static bool swnic_vma_user_io(const struct vm_area_struct *vma)
{
	return vma->vm_file &&
	       file_inode(vma->vm_file)->i_sb->s_magic == FUSE_SUPER_MAGIC;
}

/*
 * Pin up to @nr pages of @mm from @start, within the mapping @start is
 * in, through GUP without retry, as a NIC pins: a page that a userfaultfd
 * holds back is a fault (handle_userfault() refuses such faults), and so
 * is a FUSE file's page that needs a read (swnic_vma_user_io()). @try:
 * never wait for @mm's mmap lock (-EAGAIN). Return: pages pinned (> 0),
 * -EFAULT, -EAGAIN or -EINTR.
 */
static long swnic_pin_vma_pages(struct mm_struct *mm, unsigned long start,
				unsigned long nr, unsigned int flags,
				struct page **pages, bool try)
{
	struct vm_area_struct *vma;
	long got;

	if (try && !mmap_read_trylock(mm))
		return -EAGAIN;
	if (!try && mmap_read_lock_killable(mm))
		return -EINTR;
	/* One mapping at a time: each its own flags. */
	vma = vma_lookup(mm, start);
	if (!vma) {
		mmap_read_unlock(mm);
		return -EFAULT;
	}
	nr = min(nr, (vma->vm_end - start) >> PAGE_SHIFT);
	if (swnic_vma_user_io(vma))
		flags |= FOLL_NOFAULT;
	got = swnic_pin_user_pages_remote(mm, start, nr, flags, pages);
	mmap_read_unlock(mm);
	return got > 0 ? got : -EFAULT;
}

static int __swnic_fault_in_mm(struct mm_struct *mm, u64 addr, size_t len,
			       bool write, bool try)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned long end;
	int ret = 0;

	if (!len)
		return 0;
	if (check_add_overflow(addr, (u64)len, &addr))
		return -EFAULT;
	end = PAGE_ALIGN(addr);
	/*
	 * Through GUP, also for the current mm: fault_in_writeable() would
	 * store zeroes into pages that hold live data.
	 */
	if (!mmget_not_zero(mm))
		return -ESRCH;
	while (start < end) {
		struct page *pages[SWNIC_COPY_CHUNK];
		unsigned long nr = min_t(unsigned long, SWNIC_COPY_CHUNK,
					 (end - start) >> PAGE_SHIFT);
		long got;

		got = swnic_pin_vma_pages(mm, start, nr,
					  write ? FOLL_WRITE : 0, pages, try);
		if (got < 0) {
			ret = got;
			break;
		}
		unpin_user_pages(pages, got);
		start += got << PAGE_SHIFT;
		cond_resched();
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	mmput(mm);
	return ret;
}

/**
 * swnic_fault_in_mm() - fault in a range of an address space, no lock held
 * @mm: the address space (the current one's, or another process's)
 * @addr: start
 * @len: bytes
 * @write: for writing
 *
 * What a NOFAULT copy could not do, done where sleeping harms no one but
 * the caller: killable, and only the caller waits. Through GUP without
 * retry, as a NIC pins: a page that a userfaultfd holds back is a fault
 * (handle_userfault() refuses such faults), so no one - not the engine
 * thread either - ever waits for another process's userfaultfd. Nor for
 * its FUSE server (swnic_vma_user_io()).
 *
 * Return: 0, -EFAULT if some of the range cannot be faulted in, -ESRCH if
 * @mm has exited, -EINTR on a fatal signal.
 */
int swnic_fault_in_mm(struct mm_struct *mm, u64 addr, size_t len, bool write)
{
	return __swnic_fault_in_mm(mm, addr, len, write, false);
}

/*
 * swnic_fault_in_mm_try() - as swnic_fault_in_mm(), but never waits for
 * @mm's mmap lock, which its owner's threads may hold (for writing) as
 * long as they please: -EAGAIN if it is taken. For a caller that holds
 * what others wait for (a wire round, its namespace's wire).
 */
int swnic_fault_in_mm_try(struct mm_struct *mm, u64 addr, size_t len,
			  bool write)
{
	return __swnic_fault_in_mm(mm, addr, len, write, true);
}

/**
 * swnic_fault_retry() - wait a little before trying memory out of reach
 * @r: zeroed before the first try of an operation
 *
 * After a fault-in that succeeded but left the copy short, or one that
 * found the mmap lock taken: yield for the first SWNIC_FAULT_SPINS tries,
 * then sleep a tick at a time.
 *
 * Return: false once SWNIC_FAULT_TIMEOUT has passed since the first
 * call, or at once if the caller is being killed: time to give up (the
 * operation is a fault). A caller whose giving up would fail another
 * process's operation looks for the fatal signal first and ends with
 * -EINTR instead (swnic_recv_deliver()).
 */
bool swnic_fault_retry(struct swnic_fault_retry *r)
{
	if (fatal_signal_pending(current))
		return false;
	if (!r->tries++)
		r->deadline = jiffies + SWNIC_FAULT_TIMEOUT;
	if (time_after(jiffies, r->deadline))
		return false;
	if (r->tries <= SWNIC_FAULT_SPINS)
		cond_resched();
	else
		schedule_timeout_uninterruptible(1);
	return true;
}

/**
 * swnic_fault_in_mm_nowait() - swnic_fault_in_mm() where the caller may
 * wait for @mm's mmap lock (swnic_may_wait_mm()), else
 * swnic_fault_in_mm_try()
 * @mm: the address space
 * @addr: start
 * @len: bytes
 * @write: for writing
 *
 * Return: as those.
 */
int swnic_fault_in_mm_nowait(struct mm_struct *mm, u64 addr, size_t len,
			     bool write)
{
	return __swnic_fault_in_mm(mm, addr, len, write,
				   !swnic_may_wait_mm(mm));
}

/**
 * swnic_pin_user_nowait() - pin pages of the current process's memory
 * without waiting for another process
 * @start: page-aligned address
 * @nr: pages, > 0
 * @flags: FOLL_WRITE or 0
 * @pages: out: @nr entries at least
 * @later: 0, or what to return at once for a mmap lock taken (copy.h)
 *
 * pin_user_pages_fast() serves a missing page as a fault of the caller
 * would: it waits for the userfaultfd that holds it back, or for the FUSE
 * server of a file. That is the caller's own business in its syscall,
 * but not in its domain's engine (SWNIC_EP_F_DB_ENGINE), a kernel worker:
 * a page held back for good would hold the worker, and the domain's
 * engine endpoints, for good, and the owner's exit would wait for them
 * (engine.c). Here such a page is a fault (swnic_pin_vma_pages()), and
 * in a kernel thread the mmap lock is only tried: one its owner keeps (a
 * reader stuck in its own FUSE server's read, a writer queued behind) is
 * waited for at most SWNIC_FAULT_TIMEOUT, and in a round not at all
 * (@later). In its own call, the caller waits for its own lock.
 *
 * Return: pages pinned, from 1 to @nr (the rest may be in another
 * mapping: call again), or -EFAULT, -EINTR, @later.
 */
long swnic_pin_user_nowait(unsigned long start, unsigned long nr,
			   unsigned int flags, struct page **pages, int later)
{
	struct swnic_fault_retry retry = {};
	long got;

	for (;;) {
		got = swnic_pin_vma_pages(current->mm, start, nr, flags, pages,
					  !swnic_may_wait_mm(current->mm));
		if (got != -EAGAIN)
			return got;
		if (later)
			return later;
		if (!swnic_fault_retry(&retry))
			return -EFAULT;
	}
}

/**
 * swnic_pin_user_all() - pin every page of a range of the current
 * process's memory, or none
 * @start: page-aligned address
 * @n: pages, > 0
 * @flags: FOLL_WRITE or 0
 * @pages: out: @n entries
 * @later: as for swnic_pin_user_nowait()
 * @fast: in the process's own call, pin_user_pages_fast(), which may wait
 *	  for its own pager as its own fault would (the wait is its own,
 *	  and holds no lock); else, and in a kernel thread always,
 *	  swnic_pin_user_nowait()
 *
 * Return: 0 with all @n pages pinned, or -errno with none.
 */
int swnic_pin_user_all(unsigned long start, unsigned long n,
		       unsigned int flags, struct page **pages, int later,
		       bool fast)
{
	unsigned long done = 0;
	long got;

	while (done < n) {
		unsigned long at = start + done * PAGE_SIZE;
		long nr = min_t(unsigned long, n - done, 512);

		if (fast && swnic_may_wait_mm(current->mm))
			got = pin_user_pages_fast(at, nr, flags, pages + done);
		else
			got = swnic_pin_user_nowait(at, nr, flags, pages + done,
						    later);
		if (got <= 0) {
			unpin_user_pages(pages, done);
			return got ?: -EFAULT;
		}
		done += got;
	}
	return 0;
}

/* What swnic_user_nowait() does to the user range. */
enum swnic_uop {
	SWNIC_UOP_READ,
	SWNIC_UOP_WRITE,
};

static int swnic_user_nowait(enum swnic_uop op, void *k, void __user *u,
			     size_t n, int later)
{
	struct swnic_fault_retry retry = {};
	long left;
	int ret;

	for (;;) {
		switch (op) {
		case SWNIC_UOP_READ:
			left = copy_from_user_nofault(k, u, n);
			break;
		default:
			left = copy_to_user_nofault(u, k, n);
			break;
		}
		if (!left)
			return 0;
		/*
		 * A kernel thread serving others only tries the mmap lock;
		 * in its own call the caller waits for its own.
		 */
		ret = swnic_fault_in_mm_nowait(current->mm, (u64)(uintptr_t)u,
					       n, op != SWNIC_UOP_READ);
		if (ret && ret != -EAGAIN)
			return ret == -ESRCH ? -EFAULT : ret;
		/*
		 * A round waits for nothing: not for the lock, nor for a
		 * page that is gone again once faulted in.
		 */
		if (later && (ret || retry.tries))
			return later;
		/* In reach again, or not yet: tried again, within a bound. */
		if (!swnic_fault_retry(&retry))
			return -EFAULT;
	}
}

/**
 * swnic_copy_from_user_nowait() - copy_from_user() that never waits for
 * another process
 * @to: kernel destination
 * @from: the current process's memory
 * @n: bytes
 * @later: 0, or what to return at once for memory out of reach (copy.h)
 *
 * A copy with page faults disabled; what it could not reach is faulted in
 * through GUP without retry (swnic_fault_in_mm()) and the copy tried
 * again, for up to SWNIC_FAULT_TIMEOUT. A page that a userfaultfd or a
 * FUSE server holds back is a fault, not a wait; and in a kernel thread
 * the mmap lock is only tried (swnic_pin_user_nowait()).
 *
 * Context: process or kthread_use_mm(); may sleep.
 * Return: 0, -EFAULT, -EINTR on a fatal signal, @later.
 */
int swnic_copy_from_user_nowait(void *to, const void __user *from, size_t n,
				int later)
{
	return swnic_user_nowait(SWNIC_UOP_READ, to, (void __user *)from, n,
				 later);
}

/**
 * swnic_copy_to_user_nowait() - copy_to_user() that never waits for
 * another process: as swnic_copy_from_user_nowait()
 * @to: the current process's memory
 * @from: kernel source
 * @n: bytes
 * @later: as there
 *
 * Return: 0, -EFAULT, -EINTR on a fatal signal, @later.
 */
int swnic_copy_to_user_nowait(void __user *to, const void *from, size_t n,
			      int later)
{
	return swnic_user_nowait(SWNIC_UOP_WRITE, (void *)from, to, n, later);
}
