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
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "compat.h"
#include "copy.h"

#define SWNIC_COPY_CHUNK	64	/* pages pinned at a time */

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
 *
 * Return: 0, -EFAULT if either side is not mapped/writable, -ESRCH if @mm
 * has exited.
 */
int swnic_copy_to_mm(struct mm_struct *mm, u64 dst, const void __user *usrc,
		     const void *ksrc, size_t len)
{
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
		long pinned, i;

		mmap_read_lock(mm);
		pinned = swnic_pin_user_pages_remote(mm, start, nr, FOLL_WRITE,
						     pages);
		mmap_read_unlock(mm);
		if (pinned <= 0) {
			ret = -EFAULT;
			break;
		}

		for (i = 0; i < pinned && len; i++) {
			size_t n = min_t(size_t, len, PAGE_SIZE - off);
			void *kaddr = kmap_local_page(pages[i]);

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
			kunmap_local(kaddr);
			if (ret)
				break;
			dst += n;
			len -= n;
			off = 0;
		}
		unpin_user_pages_dirty_lock(pages, pinned, true);
		if (ret)
			break;
	}
	if (nt)
		wmb();	/* streaming stores before the caller's CQE store */
	mmput(mm);
	return ret;
}
