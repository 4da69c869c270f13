// SPDX-License-Identifier: GPL-2.0
/*
 * One-copy transfers between address spaces: the destination's pages are
 * pinned for the length of the copy only (no long-term pin, nothing to
 * account), and the source is read straight from the current process's
 * memory (the poster's: its own syscall, or the engine running on its mm).
 */
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "compat.h"
#include "copy.h"

#define SWNIC_COPY_CHUNK	64	/* pages pinned at a time */

/*
 * How many of @pages (at most @n) follow the first within its folio (a
 * transparent or hugetlb huge page), so that one copy covers them. Never
 * across folios, even physically adjacent ones: hardened usercopy allows
 * a copy from user space to span one folio only. Without a direct map
 * for every page (HIGHMEM) each page is mapped on its own.
 */
static long swnic_copy_run(struct page **pages, long n)
{
	struct folio *folio = page_folio(pages[0]);
	unsigned long pfn = page_to_pfn(pages[0]);
	long i;

	if (IS_ENABLED(CONFIG_HIGHMEM) || !folio_test_large(folio))
		return 1;
	for (i = 1; i < n; i++)
		if (page_folio(pages[i]) != folio ||
		    page_to_pfn(pages[i]) != pfn + i)
			break;
	return i;
}

/*
 * From this size on, a copy from user memory uses streaming stores
 * (copy_from_iter_nocache): the data is for another process, most likely
 * on another CPU, and a large message only evicts the sender's working
 * set from its cache.
 */
#define SWNIC_COPY_NT_MIN	(64 * 1024)

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
	bool nofault = flags & SWNIC_COPY_NOFAULT;
	bool nt = usrc && len >= SWNIC_COPY_NT_MIN;
	struct page *pages[SWNIC_COPY_CHUNK];
	struct iov_iter iter;
	int ret = 0;

	if (!len)
		return 0;
	if (dst + len < dst)
		return -EFAULT;
	if (!mmget_not_zero(mm))
		return -ESRCH;
	if (nt)
		iov_iter_ubuf(&iter, ITER_SOURCE, (void __user *)usrc, len);

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

			if (nt) {
				if (copy_from_iter_nocache(kaddr + off, n,
							   &iter) != n)
					ret = -EFAULT;
			} else if (usrc) {
				if (copy_from_user(kaddr + off, usrc, n))
					ret = -EFAULT;
				usrc += n;
			} else {
				memcpy(kaddr + off, ksrc, n);
				ksrc += n;
			}
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
	if (nt)
		wmb();	/* streaming stores before the caller's CQE store */
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
 * thread either - ever waits for another process's userfaultfd.
 *
 * Return: 0, -EFAULT if some of the range cannot be faulted in, -ESRCH if
 * @mm has exited, -EINTR on a fatal signal.
 */
int swnic_fault_in_mm(struct mm_struct *mm, u64 addr, size_t len, bool write)
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

		if (mmap_read_lock_killable(mm)) {
			ret = -EINTR;
			break;
		}
		got = swnic_pin_user_pages_remote(mm, start, nr,
						  write ? FOLL_WRITE : 0, pages);
		mmap_read_unlock(mm);
		if (got <= 0) {
			ret = -EFAULT;
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
