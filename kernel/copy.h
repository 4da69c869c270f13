/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_COPY_H
#define _SWNIC_COPY_H

#include <linux/jiffies.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/uio.h>

/*
 * Returned (negated) by a SWNIC_COPY_NOFAULT copy that would have had to
 * fault a page in or wait for a lock. Never reaches user space: the
 * caller drops its locks, faults in (swnic_fault_in_*) and tries again.
 */
#define SWNIC_EFAULTIN		4000
/*
 * Returned (negated) by a delivery in a wire round whose destination is
 * still out of reach after one fault-in, or whose mmap lock is taken: the
 * round leaves it to a later one (udp_exec.c). Never reaches user space.
 */
#define SWNIC_EFAULTLATER	4001

/*
 * How long memory that faults in but stays out of reach (its process's
 * other threads mapping memory, its mmap lock taken) is retried in the
 * call that wants it - a sender's own doorbell, sleeping in it - before
 * the operation is a fault (EFAULT).
 */
#define SWNIC_FAULT_TIMEOUT	(2 * HZ)

/*
 * How long a round - a wire round, an engine round - leaves such an
 * operation to later rounds before it is a fault: as long as a wire
 * target without room for a message is tried (SWNIC_DELIVER_TIMEOUT,
 * udp_exec.c). A receiver whose memory is out of reach is one not ready
 * yet, and no caller sleeps meanwhile: the round serves everyone else. The
 * lock may be the kernel's own business: khugepaged, at nice 19, holds a
 * process's mmap lock for writing while it collapses huge pages, and on a
 * host whose CPUs are busy it may not run again for seconds. 2 s made
 * such a legit receiver's messages from the wire faults.
 */
#define SWNIC_ROUND_FAULT_TIMEOUT	(10 * HZ)

/*
 * ... and how many tries it takes at least: rounds come a tick apart
 * when the wire is quiet, but far apart when it is flooded or the kernel
 * slow (a debug one), and a receiver that only happened to be mapping
 * memory at two such tries is no keeper of its lock.
 */
#define SWNIC_FAULT_MIN_TRIES	16

/**
 * struct swnic_fault_wait - an operation left for later by a round
 * @since: jiffies of its first try that found memory out of reach
 *	(-SWNIC_EFAULTLATER); 0: it waits for none
 * @tries: such tries since
 * @last: no later round will come (swnic_fault_give_up())
 *
 * Its try after SWNIC_ROUND_FAULT_TIMEOUT and SWNIC_FAULT_MIN_TRIES is the
 * last, which makes it a fault. Zeroed: waits for nothing.
 */
struct swnic_fault_wait {
	unsigned long since;
	unsigned int tries;
	bool last;
};

static inline void swnic_fault_later(struct swnic_fault_wait *w)
{
	if (!w->since)
		WRITE_ONCE(w->since, jiffies ?: 1);
	if (w->tries < UINT_MAX)
		w->tries++;
}

/* Reached (or failed): a later wait starts anew; a give-up stays. */
static inline void swnic_fault_reached(struct swnic_fault_wait *w)
{
	WRITE_ONCE(w->since, 0);
	w->tries = 0;
}

static inline bool swnic_fault_waits(const struct swnic_fault_wait *w)
{
	return READ_ONCE(w->since);
}

static inline bool swnic_fault_last_try(const struct swnic_fault_wait *w)
{
	return w->last || (w->since && w->tries >= SWNIC_FAULT_MIN_TRIES &&
			   time_after(jiffies,
				      w->since + SWNIC_ROUND_FAULT_TIMEOUT));
}

/* Its next try is its last: nothing will run it again (a closing domain). */
static inline void swnic_fault_give_up(struct swnic_fault_wait *w)
{
	w->last = true;
}

/* swnic_copy_to_mm() flags */
#define SWNIC_COPY_NOFAULT	BIT(0)	/* under a lock: never sleep on memory */

/*
 * A kernel source that is not one buffer: a wire message still in the
 * packets it came in (udp_exec.c). @read copies @n bytes from offset
 * @off of it to @to; it cannot fault.
 */
struct swnic_kmsg {
	int (*read)(const struct swnic_kmsg *km, u64 off, void *to, size_t n);
};

/*
 * The source of a message being copied into pages: the current process's
 * memory (@usrc; from SWNIC_COPY_NT_MIN bytes on read with streaming
 * stores, as the data is for another process and a large message would
 * only evict the sender's working set), a kernel buffer (@ksrc) or a
 * kernel message in pieces (@km, at @kpos). Consumed in order by
 * swnic_copy_src_to(); swnic_copy_src_end() fences streaming stores before
 * the caller publishes a completion.
 */
struct swnic_copy_src {
	const void __user *usrc;
	const void *ksrc;
	const struct swnic_kmsg *km;
	u64 kpos;
	struct iov_iter iter;
	bool nt;
};

#define SWNIC_COPY_NT_MIN	(64 * 1024)

void swnic_copy_src_init(struct swnic_copy_src *s, const void __user *usrc,
			 const void *ksrc, size_t len);
void swnic_copy_src_init_kmsg(struct swnic_copy_src *s,
			      const struct swnic_kmsg *km);
int swnic_copy_src_to(struct swnic_copy_src *s, void *kaddr, size_t n);
void swnic_copy_src_end(struct swnic_copy_src *s);
unsigned long swnic_copy_folio_run(struct page *page, unsigned long max);

int swnic_copy_to_mm(struct mm_struct *mm, u64 dst, const void __user *usrc,
		     const void *ksrc, size_t len, unsigned int flags);
int swnic_copy_src_to_mm(struct mm_struct *mm, u64 dst,
			 struct swnic_copy_src *src, size_t len,
			 unsigned int flags);
int swnic_fault_in_mm(struct mm_struct *mm, u64 addr, size_t len, bool write);
int swnic_fault_in_mm_try(struct mm_struct *mm, u64 addr, size_t len,
			  bool write);
/*
 * May the caller wait for @mm's mmap lock? Only for its own, in its own
 * call: another process may keep its lock as long as it likes (copy.c),
 * and a kernel thread serves others too.
 */
static inline bool swnic_may_wait_mm(const struct mm_struct *mm)
{
	return mm == current->mm && !(current->flags & PF_KTHREAD);
}

int swnic_fault_in_mm_nowait(struct mm_struct *mm, u64 addr, size_t len,
			     bool write);

/* Tries of memory out of reach that yield before ones that sleep a tick. */
#define SWNIC_FAULT_SPINS	4

/*
 * An operation's retries of memory out of reach: swnic_fault_retry(), or
 * swnic_recv_rq_work() across its runs (its deadline is its own).
 */
struct swnic_fault_retry {
	unsigned long deadline;
	unsigned int tries;
};

bool swnic_fault_retry(struct swnic_fault_retry *r);

/*
 * The _nowait functions below take @later: what to return at once when
 * the current process's memory is out of reach now (its mmap lock taken,
 * or a page gone again once faulted in), instead of trying again for
 * SWNIC_FAULT_TIMEOUT. 0 in the process's own call, which may wait that
 * long; in a round (the domain's engine, the trigger worker: kernel
 * workers that serve others too), -SWNIC_EFAULTLATER, so that the
 * operation is tried again in a later round and no worker sleeps on a
 * lock its owner may keep, or -EFAULT on the operation's last try
 * (swnic_ep_later()). Only for what may be tried again whole: nothing of
 * the operation is done yet, or doing it again is the same.
 */
long swnic_pin_user_nowait(unsigned long start, unsigned long nr,
			   unsigned int flags, struct page **pages, int later);
int swnic_pin_user_all(unsigned long start, unsigned long n,
		       unsigned int flags, struct page **pages, int later,
		       bool fast);
int swnic_copy_from_user_nowait(void *to, const void __user *from, size_t n,
				int later);
int swnic_copy_to_user_nowait(void __user *to, const void *from, size_t n,
			      int later);

#endif /* _SWNIC_COPY_H */
