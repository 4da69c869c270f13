// SPDX-License-Identifier: GPL-2.0
/*
 * Atomics: fi_atomic(3) operations executed by the target's kernel on the
 * target MR's pages (no target process involved), for the local transport
 * in the initiator's context and for the wire in the target's worker.
 *
 * The MR access API (mr.h) checks key, auth key, right and bounds and
 * hands out the pages, as for RMA. Each element is read, computed and
 * written back under one of a stripe of spinlocks chosen by the physical
 * address of its first byte, so swnic atomics on the same address - from
 * any MR, domain or peer - exclude each other. An element may straddle a
 * page boundary: the walk is cut so that both of its pages come in the
 * same walk (for an ODP MR, in the same hold of the MR's lock, which keeps
 * the pages the range's), and it is updated as one under the lock.
 * Floating-point types are computed by atomic_fp.c with the FPU, between
 * kernel_fpu_begin_mask() and kernel_fpu_end(); integers here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86_64
#include <asm/fpu/api.h>
#endif

#include "atomic.h"
#include "cntr.h"
#include "copy.h"
#include "domain.h"
#include "ep.h"
#include "mr.h"

#define SWNIC_ATOMIC_LOCK_BITS	8
static spinlock_t swnic_atomic_locks[1 << SWNIC_ATOMIC_LOCK_BITS] = {
	[0 ... (1 << SWNIC_ATOMIC_LOCK_BITS) - 1] =
		__SPIN_LOCK_UNLOCKED(swnic_atomic_locks)
};

/* Datatype classes, and which each op is valid for. */
#define SWNIC_DTC_INT	BIT(0)
#define SWNIC_DTC_REAL	BIT(1)		/* float, double, long double */
#define SWNIC_DTC_CPLX	BIT(2)		/* the complex types */
#define SWNIC_DTC_ALL	(SWNIC_DTC_INT | SWNIC_DTC_REAL | SWNIC_DTC_CPLX)

static const u8 swnic_aop_classes[SWNIC_AOP_NUM] = {
	[SWNIC_AOP_MIN] = SWNIC_DTC_INT | SWNIC_DTC_REAL,
	[SWNIC_AOP_MAX] = SWNIC_DTC_INT | SWNIC_DTC_REAL,
	[SWNIC_AOP_SUM] = SWNIC_DTC_ALL,
	[SWNIC_AOP_PROD] = SWNIC_DTC_ALL,
	[SWNIC_AOP_LOR] = SWNIC_DTC_INT,
	[SWNIC_AOP_LAND] = SWNIC_DTC_INT,
	[SWNIC_AOP_BOR] = SWNIC_DTC_INT,
	[SWNIC_AOP_BAND] = SWNIC_DTC_INT,
	[SWNIC_AOP_LXOR] = SWNIC_DTC_INT,
	[SWNIC_AOP_BXOR] = SWNIC_DTC_INT,
	[SWNIC_AOP_ATOMIC_READ] = SWNIC_DTC_ALL,
	[SWNIC_AOP_ATOMIC_WRITE] = SWNIC_DTC_ALL,
	[SWNIC_AOP_CSWAP] = SWNIC_DTC_ALL,
	[SWNIC_AOP_CSWAP_NE] = SWNIC_DTC_ALL,
	[SWNIC_AOP_CSWAP_LE] = SWNIC_DTC_INT | SWNIC_DTC_REAL,
	[SWNIC_AOP_CSWAP_LT] = SWNIC_DTC_INT | SWNIC_DTC_REAL,
	[SWNIC_AOP_CSWAP_GE] = SWNIC_DTC_INT | SWNIC_DTC_REAL,
	[SWNIC_AOP_CSWAP_GT] = SWNIC_DTC_INT | SWNIC_DTC_REAL,
	[SWNIC_AOP_MSWAP] = SWNIC_DTC_INT,
};

static u8 swnic_adt_class(u8 dt)
{
	switch (dt) {
	case SWNIC_ADT_FLOAT:
	case SWNIC_ADT_DOUBLE:
	case SWNIC_ADT_LONG_DOUBLE:
		return SWNIC_DTC_REAL;
	case SWNIC_ADT_FLOAT_COMPLEX:
	case SWNIC_ADT_DOUBLE_COMPLEX:
	case SWNIC_ADT_LONG_DOUBLE_COMPLEX:
		return SWNIC_DTC_CPLX;
	default:
		return SWNIC_DTC_INT;
	}
}

/**
 * swnic_atomic_valid() - is @op on @dt an operation of @opcode?
 * @opcode: SWNIC_OP_ATOMIC (write ops, ATOMIC_WRITE), FETCH_ATOMIC (those
 *	    and ATOMIC_READ) or COMPARE_ATOMIC (CSWAP..MSWAP)
 * @op: SWNIC_AOP_*
 * @dt: SWNIC_ADT_*
 *
 * Return: 0, or -EOPNOTSUPP.
 */
int swnic_atomic_valid(u8 opcode, u8 op, u8 dt)
{
	bool ok;

	if (op >= SWNIC_AOP_NUM || dt >= SWNIC_ADT_NUM)
		return -EOPNOTSUPP;
	switch (opcode) {
	case SWNIC_OP_ATOMIC:
		ok = op <= SWNIC_AOP_BXOR || op == SWNIC_AOP_ATOMIC_WRITE;
		break;
	case SWNIC_OP_FETCH_ATOMIC:
		ok = op <= SWNIC_AOP_ATOMIC_WRITE;
		break;
	case SWNIC_OP_COMPARE_ATOMIC:
		ok = op >= SWNIC_AOP_CSWAP;
		break;
	default:
		ok = false;
	}
	/* Floating point needs the kernel's FPU code (x86-64 only). */
	if (!IS_ENABLED(CONFIG_X86_64) &&
	    swnic_adt_class(dt) != SWNIC_DTC_INT &&
	    op != SWNIC_AOP_ATOMIC_READ && op != SWNIC_AOP_ATOMIC_WRITE)
		ok = false;
	return ok && (swnic_aop_classes[op] & swnic_adt_class(dt)) ?
	       0 : -EOPNOTSUPP;
}

/**
 * swnic_atomic_check() - validate an atomic SQE (send.c, before executing)
 * @sqe: the kernel's copy
 *
 * Return: 0, -EOPNOTSUPP (op, datatype or combination), -EINVAL (the
 * rest), as swnic_queue.h documents.
 */
int swnic_atomic_check(const struct swnic_sqe *sqe)
{
	u32 size;
	int ret;

	if (sqe->flags & (SWNIC_SQE_REMOTE_DATA | SWNIC_SQE_DELIVERY) ||
	    sqe->__apad)
		return -EINVAL;
	ret = swnic_atomic_valid(sqe->opcode, sqe->atomic_op, sqe->datatype);
	if (ret)
		return ret;
	size = swnic_adt_size(sqe->datatype);
	if (!sqe->len || sqe->len > SWNIC_ATOMIC_MAX || sqe->len % size)
		return -EINVAL;
	if (sqe->flags & SWNIC_SQE_INLINE) {
		if (sqe->opcode == SWNIC_OP_COMPARE_ATOMIC ||
		    sqe->len > SWNIC_INLINE_MAX)
			return -EINVAL;
	} else if (sqe->atomic_op != SWNIC_AOP_ATOMIC_READ &&
		   !access_ok(u64_to_user_ptr(sqe->addr), sqe->len)) {
		return -EINVAL;
	}
	if (swnic_atomic_fetches(sqe->opcode) &&
	    !access_ok(u64_to_user_ptr(sqe->tag), sqe->len))
		return -EINVAL;
	if (sqe->opcode == SWNIC_OP_COMPARE_ATOMIC &&
	    !access_ok(u64_to_user_ptr(sqe->data), sqe->len))
		return -EINVAL;
	return 0;
}

/* ---- one element ------------------------------------------------------ */

static u64 swnic_int_load(const void *p, u32 size, bool sign)
{
	switch (size) {
	case 1:
		return sign ? (u64)(s64)*(const s8 *)p : *(const u8 *)p;
	case 2:
		return sign ? (u64)(s64)*(const s16 *)p : *(const u16 *)p;
	case 4:
		return sign ? (u64)(s64)*(const s32 *)p : *(const u32 *)p;
	default:
		return *(const u64 *)p;
	}
}

static void swnic_int_store(void *p, u32 size, u64 v)
{
	switch (size) {
	case 1:
		*(u8 *)p = v;
		break;
	case 2:
		*(u16 *)p = v;
		break;
	case 4:
		*(u32 *)p = v;
		break;
	default:
		*(u64 *)p = v;
	}
}

/* Is a < b, for the datatype's signedness? */
static bool swnic_int_less(u64 a, u64 b, bool sign)
{
	return sign ? (s64)a < (s64)b : a < b;
}

/* Integers: signed types have even SWNIC_ADT_* values. */
static void swnic_atomic_int(const struct swnic_atomic *a, void *target,
			     const void *operand, const void *compare)
{
	bool sign = !(a->dt & 1), swap = false;
	u64 t = swnic_int_load(target, a->size, sign);
	u64 b = swnic_int_load(operand, a->size, sign);
	u64 c = compare ? swnic_int_load(compare, a->size, sign) : 0;

	switch (a->op) {
	case SWNIC_AOP_MIN:
		if (swnic_int_less(b, t, sign))
			t = b;
		break;
	case SWNIC_AOP_MAX:
		if (swnic_int_less(t, b, sign))
			t = b;
		break;
	case SWNIC_AOP_SUM:
		t += b;
		break;
	case SWNIC_AOP_PROD:
		t *= b;
		break;
	case SWNIC_AOP_LOR:
		t = t || b;
		break;
	case SWNIC_AOP_LAND:
		t = t && b;
		break;
	case SWNIC_AOP_BOR:
		t |= b;
		break;
	case SWNIC_AOP_BAND:
		t &= b;
		break;
	case SWNIC_AOP_LXOR:
		t = !t != !b;
		break;
	case SWNIC_AOP_BXOR:
		t ^= b;
		break;
	case SWNIC_AOP_CSWAP:
		swap = c == t;
		break;
	case SWNIC_AOP_CSWAP_NE:
		swap = c != t;
		break;
	case SWNIC_AOP_CSWAP_LE:
		swap = !swnic_int_less(t, c, sign);
		break;
	case SWNIC_AOP_CSWAP_LT:
		swap = swnic_int_less(c, t, sign);
		break;
	case SWNIC_AOP_CSWAP_GE:
		swap = !swnic_int_less(c, t, sign);
		break;
	case SWNIC_AOP_CSWAP_GT:
		swap = swnic_int_less(t, c, sign);
		break;
	case SWNIC_AOP_MSWAP:
		t = (b & c) | (t & ~c);
		break;
	}
	if (swap)
		t = b;
	swnic_int_store(target, a->size, t);
}

/*
 * Apply @a's element @i to @elem (a 16-byte aligned copy of the target's
 * bytes), saving the old value to the result. Under the element's lock.
 */
static void swnic_atomic_elem(const struct swnic_atomic *a, u32 i, u8 *elem)
{
	u8 opnd[32] __aligned(16), cmp[32] __aligned(16);
	u32 off = i * a->size;

	if (a->result)
		memcpy(a->result + off, elem, a->size);
	switch (a->op) {
	case SWNIC_AOP_ATOMIC_READ:
		return;
	case SWNIC_AOP_ATOMIC_WRITE:
		memcpy(elem, a->operand + off, a->size);
		return;
	}
	memcpy(opnd, a->operand + off, a->size);
	if (a->compare)
		memcpy(cmp, a->compare + off, a->size);
	if (swnic_adt_class(a->dt) == SWNIC_DTC_INT) {
		swnic_atomic_int(a, elem, opnd, a->compare ? cmp : NULL);
		return;
	}
#ifdef CONFIG_X86_64
	/*
	 * Not kernel_fpu_begin(): on x86-64 it resets MXCSR only, and the
	 * long doubles are x87 code, which would run with the x87 control
	 * word, status and stack of whichever task last ran here - a
	 * precision of its choice, or an unmasked exception that raises #MF
	 * in the kernel. KFPU_387 runs fninit.
	 */
	kernel_fpu_begin_mask(KFPU_387 | KFPU_MXCSR);
	swnic_atomic_fp(a->op, a->dt, elem, opnd, cmp);
	kernel_fpu_end();
#endif
}

/* ---- the walk over the target's pages ----------------------------------- */

struct swnic_atomic_walk {
	const struct swnic_atomic *a;
	u32 i;				/* next element */
	bool write;			/* write elements back */
	/* the start of an element the previous page piece ended in */
	struct page *part_page;
	unsigned int part_off, part_len;
};

static spinlock_t *swnic_atomic_lock(struct page *page, unsigned int off)
{
	u64 phys = ((u64)page_to_pfn(page) << PAGE_SHIFT) + off;

	return &swnic_atomic_locks[hash_64(phys >> 5, SWNIC_ATOMIC_LOCK_BITS)];
}

/* An element in one piece, at @kaddr (a page of @page). */
static void swnic_atomic_whole(struct swnic_atomic_walk *w, struct page *page,
			       void *kaddr, unsigned int off)
{
	const struct swnic_atomic *a = w->a;
	u8 elem[32] __aligned(16);
	spinlock_t *lock = swnic_atomic_lock(page, off);

	spin_lock_bh(lock);
	memcpy(elem, kaddr + off, a->size);
	swnic_atomic_elem(a, w->i++, elem);
	if (w->write)
		memcpy(kaddr + off, elem, a->size);
	spin_unlock_bh(lock);
}

/* The element w->part_* began, ending at the start of @kaddr's page. */
static void swnic_atomic_split(struct swnic_atomic_walk *w, void *kaddr)
{
	const struct swnic_atomic *a = w->a;
	unsigned int head = w->part_len, rest = a->size - head;
	u8 elem[32] __aligned(16);
	spinlock_t *lock = swnic_atomic_lock(w->part_page, w->part_off);
	void *pkaddr = kmap_local_page(w->part_page);

	spin_lock_bh(lock);
	memcpy(elem, pkaddr + w->part_off, head);
	memcpy(elem + head, kaddr, rest);
	swnic_atomic_elem(a, w->i++, elem);
	if (w->write) {
		memcpy(pkaddr + w->part_off, elem, head);
		memcpy(kaddr, elem + head, rest);
	}
	spin_unlock_bh(lock);
	kunmap_local(pkaddr);
	w->part_len = 0;
}

/*
 * swnic_mr_page_fn: the elements in one page piece. For an ODP MR under
 * the MR's lock: nothing here sleeps or faults.
 */
static int swnic_atomic_page(void *ctx, struct page *page, unsigned int off,
			     unsigned int len)
{
	struct swnic_atomic_walk *w = ctx;
	u32 size = w->a->size;
	void *kaddr = kmap_local_page(page);
	unsigned int end = off + len;

	if (w->part_len) {
		unsigned int rest = size - w->part_len;

		/* The walk is cut at element ends: the rest is here. */
		if (WARN_ON_ONCE(off || len < rest)) {
			kunmap_local(kaddr);
			return -EIO;
		}
		swnic_atomic_split(w, kaddr);
		off = rest;
	}
	for (; end - off >= size; off += size)
		swnic_atomic_whole(w, page, kaddr, off);
	if (off < end) {
		w->part_page = page;
		w->part_off = off;
		w->part_len = end - off;
	}
	kunmap_local(kaddr);
	return 0;
}

/* A walk that only reaches the pages (their faults are its work). */
static int swnic_atomic_reach(void *ctx, struct page *page,
			      unsigned int offset, unsigned int len)
{
	return 0;
}

/**
 * swnic_atomic_apply() - execute an atomic on a target's MR
 * @dom: the domain that owns the MR (the caller holds a reference)
 * @t: the access: key, addr, auth key and source set; len and access are
 *     set here from @a
 * @a: the atomic, with its operands (and result buffer) in kernel memory
 *
 * Context: process (an ODP MR's pages may have to be faulted in).
 * Return: 0 or the initiator's error, from the MR checks as for RMA
 * (-ENOKEY, -EKEYREVOKED, -EACCES, -ERANGE, ODP faults). On an error
 * after the first element, the elements before it were applied; never
 * on -SWNIC_EFAULTLATER (@a->round: try again later).
 */
int swnic_atomic_apply(struct swnic_domain *dom, struct swnic_mr_target *t,
		       const struct swnic_atomic *a)
{
	struct swnic_atomic_walk w = {
		.a = a,
		.write = a->op != SWNIC_AOP_ATOMIC_READ,
	};
	u64 len = (u64)a->count * a->size, pos, n, va, span;
	struct swnic_mr_ref ref;
	int ret;

	t->len = len;
	t->access = w.write ? SWNIC_MR_ACCESS_REMOTE_WRITE :
			      SWNIC_MR_ACCESS_REMOTE_READ;
	ret = swnic_mr_ref_get(dom, t, &ref);
	if (ret)
		return ret;
	/* Fetching (or comparing) writes need the right to read too. */
	if (w.write && swnic_atomic_fetches(a->opcode) &&
	    !(ref.mr->access & SWNIC_MR_ACCESS_REMOTE_READ)) {
		ret = -EACCES;
		goto out;
	}
	/*
	 * One walk applies it all: at most two pages (SWNIC_ATOMIC_MAX), which
	 * an ODP walk reaches first and then holds at once, so a round that
	 * finds them out of reach leaves the atomic whole to a later round,
	 * never half applied. A REG_IOV MR's walk stays in one segment: an
	 * atomic over two is two walks, so in a round all its pages are
	 * reached first; a page dropped again between the walks is a fault.
	 * An element straddling two segments is refused before any is
	 * applied: an ERANGE that had changed the first elements (a lock
	 * word taken) and lost their old values lied to the initiator.
	 */
	for (pos = 0; pos < len; pos += n) {
		n = min_t(u64, len - pos, swnic_mr_ref_span(&ref, pos, &va));
		if (n < len - pos && n % a->size) {
			ret = -ERANGE;
			goto out;
		}
	}
	if (a->round) {
		ref.round = true;
		ref.last_try = a->last_try;
		if (swnic_mr_ref_span(&ref, 0, &va) < len) {
			ret = swnic_mr_ref_walk(&ref, 0, len,
						swnic_atomic_reach, NULL);
			if (ret)
				goto out;
			ref.last_try = true;
		}
	}
	for (pos = 0; pos < len && !ret; pos += n) {
		span = swnic_mr_ref_span(&ref, pos, &va);
		n = min_t(u64, len - pos, span);
		ret = swnic_mr_ref_walk(&ref, pos, n, swnic_atomic_page, &w);
		w.part_len = 0;
	}
	/* As the endpoint's counters count it: a write, or a read. */
	if (!ret)
		swnic_mr_ref_count(&ref, a->opcode == SWNIC_OP_ATOMIC ?
				   SWNIC_MR_ACCESS_REMOTE_WRITE :
				   SWNIC_MR_ACCESS_REMOTE_READ);
out:
	swnic_mr_ref_put(&ref);
	return ret;
}

/* ---- the local transport ------------------------------------------------ */

/*
 * The result buffer's pages (@len bytes at @addr, at most two pages),
 * pinned before the atomic applies: once applied it cannot be tried
 * again, so its old values then go where nothing is left to fault in or
 * wait for - in a worker, no lock a user may keep. Never waiting for a
 * pager, in the poster's own call too (swnic_pin_user_nowait()); @later
 * as there. Return: pages pinned, or -errno.
 */
static int swnic_atomic_result_pin(u64 addr, u32 len, struct page **pages,
				   int later)
{
	int n = DIV_ROUND_UP((addr & ~PAGE_MASK) + len, PAGE_SIZE);

	BUILD_BUG_ON(SWNIC_ATOMIC_MAX > PAGE_SIZE);	/* two pages at most */
	return swnic_pin_user_all(addr & PAGE_MASK, n, FOLL_WRITE, pages,
				  later, false) ?: n;
}

/* The old values into the pinned result pages (@write), then unpinned. */
static void swnic_atomic_result_put(struct page **pages, int n, u64 addr,
				    const u8 *res, u32 len, bool write)
{
	unsigned int off = addr & ~PAGE_MASK, chunk;
	int i;

	for (i = 0; write && i < n; i++) {
		chunk = min_t(u32, len, PAGE_SIZE - off);
		memcpy_to_page(pages[i], off, res, chunk);
		res += chunk;
		len -= chunk;
		off = 0;
	}
	unpin_user_pages_dirty_lock(pages, n, write);
}

/**
 * swnic_atomic_exec() - an atomic of @src on @dst's memory, on one host
 * @dst: the target endpoint (its domain owns the MR)
 * @src: the initiator, in whose context this runs
 * @sqe: the validated work request
 * @kbuf: INLINE: the operand, else NULL for sqe->addr
 *
 * The old values are in the poster's result buffer before this returns
 * (and so before the completion). The target counts it as FI_RMA_EVENT:
 * ATOMIC as a remote write, FETCH and COMPARE as a remote read.
 *
 * Return: 0 or the initiator's error, as swnic_rma_write().
 */
int swnic_atomic_exec(struct swnic_ep *dst, struct swnic_ep *src,
		      const struct swnic_sqe *sqe, const void *kbuf)
{
	struct swnic_mr_target t = {
		.key = sqe->rkey,
		.addr = sqe->raddr,
	};
	struct swnic_atomic a = {
		.opcode = sqe->opcode,
		.op = sqe->atomic_op,
		.dt = sqe->datatype,
		.size = swnic_adt_size(sqe->datatype),
		/* A round's: an ODP target out of reach is for later. */
		.round = swnic_ep_defers(src),
		.last_try = swnic_ep_last_try(src),
	};
	/* So are its own buffers, until it is applied (not after). */
	int later = swnic_ep_later(src);
	u32 dkey = READ_ONCE(dst->dom->auth_key), len = sqe->len;
	struct page *rpages[2];
	int npages = 0, ret;
	u8 *buf;

	a.count = len / a.size;
	ret = swnic_ep_sqe_key(src, sqe, &t.auth_key);
	if (ret)
		return ret;
	swnic_mr_target_from(&t, t.auth_key, src->addr,
			     swnic_ep_src_port(src));
	if (t.auth_key != dkey) {
		/* Its own keys go as it closes: refused, not EACCES. */
		if (!swnic_ep_holds_key(dst, t.auth_key))
			return swnic_ep_key_refused(dst);
		t.auth_key = dkey;
	}

	buf = kmalloc(3 * len, SWNIC_POST_GFP);
	if (!buf)
		return -ENOMEM;
	/* The initiator's buffers: never waiting for its pager (copy.c). */
	ret = 0;
	if (a.op != SWNIC_AOP_ATOMIC_READ) {
		void __user *op = u64_to_user_ptr(sqe->addr);

		if (kbuf)
			memcpy(buf, kbuf, len);
		else
			ret = swnic_copy_from_user_nowait(buf, op, len, later);
		if (ret)
			goto out;
		a.operand = buf;
	}
	if (sqe->opcode == SWNIC_OP_COMPARE_ATOMIC) {
		ret = swnic_copy_from_user_nowait(buf + len,
						  u64_to_user_ptr(sqe->data),
						  len, later);
		if (ret)
			goto out;
		a.compare = buf + len;
	}
	/* The result buffer must take the old values: pinned first. */
	if (swnic_atomic_fetches(sqe->opcode)) {
		npages = swnic_atomic_result_pin(sqe->tag, len, rpages, later);
		if (npages < 0) {
			ret = npages;
			goto out;
		}
		a.result = buf + 2 * len;
	}

	ret = swnic_atomic_apply(dst->dom, &t, &a);
	if (npages > 0)
		swnic_atomic_result_put(rpages, npages, sqe->tag, a.result, len,
					!ret);
	if (!ret)
		swnic_cntr_inc(dst->cntr[a.opcode == SWNIC_OP_ATOMIC ?
					 SWNIC_EP_CNTR_REMOTE_WRITE :
					 SWNIC_EP_CNTR_REMOTE_READ], false);
	else if (swnic_domain_exited(dst->dom))
		ret = -ECONNREFUSED;
out:
	kfree(buf);
	return ret;
}
