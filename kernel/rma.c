// SPDX-License-Identifier: GPL-2.0
/*
 * RMA: writes into and reads from a target's memory region, named by its
 * key, in the initiator's context. The target process does not run: the
 * MR access API (mr.h) checks key, auth key, access right and bounds and
 * hands out the pages; one copy moves the data between them and the
 * initiator's buffer. That buffer is read and written without waiting for
 * its owner's pager (a userfaultfd, a FUSE server: copy.c): the engine
 * thread that may run the copy serves other endpoints too.
 */
#include <linux/highmem.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cntr.h"
#include "complete.h"
#include "copy.h"
#include "cq.h"
#include "domain.h"
#include "ep.h"
#include "mr.h"
#include "rma.h"

/*
 * One side of the copy: the initiator's user buffer or inline bytes;
 * @later: what that buffer out of reach now makes of the RMA
 * (swnic_ep_later()). Either way round, an RMA tried again whole copies
 * the same bytes again.
 */
struct swnic_rma_ctx {
	void __user *ubuf;
	const void *kbuf;
	bool to_mr;
	int later;
};

static int swnic_rma_page(void *arg, struct page *page, unsigned int off,
			  unsigned int len)
{
	struct swnic_rma_ctx *c = arg;
	void *kaddr = kmap_local_page(page);
	int ret = 0;

	if (!c->to_mr) {
		ret = swnic_copy_to_user_nowait(c->ubuf, kaddr + off, len,
						c->later);
		c->ubuf += len;
	} else if (c->kbuf) {
		memcpy(kaddr + off, c->kbuf, len);
		c->kbuf += len;
	} else {
		ret = swnic_copy_from_user_nowait(kaddr + off, c->ubuf, len,
						  c->later);
		c->ubuf += len;
	}
	kunmap_local(kaddr);
	return ret;
}

/* Bytes moved between two chances to reschedule (pinned MRs). */
#define SWNIC_RMA_CHUNK		SZ_1M
/* ODP MRs: the bounce buffer (pages are used under the MR's spinlock). */
#define SWNIC_RMA_BOUNCE	SZ_64K

/* Pinned: the pages stay, the user copy goes straight to or from them. */
static int swnic_rma_move_pinned(struct swnic_mr_ref *ref, u64 len,
				 struct swnic_rma_ctx *ctx)
{
	u64 pos, n;
	int ret = 0;

	for (pos = 0; pos < len && !ret; pos += n) {
		n = min_t(u64, len - pos, SWNIC_RMA_CHUNK);
		if (pos) {
			/* A poster that is being killed stops here. */
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
		ret = swnic_mr_ref_walk(ref, pos, n, swnic_rma_page, ctx);
	}
	return ret;
}

/*
 * ODP: the walk uses the pages under the MR's lock, where user memory
 * cannot be touched (it may fault): bounce through a kernel buffer.
 */
static int swnic_rma_move_odp(struct swnic_mr_ref *ref, u64 len,
			      struct swnic_rma_ctx *ctx)
{
	size_t size = min_t(u64, len, SWNIC_RMA_BOUNCE);
	u64 pos, n;
	void *buf;
	int ret = 0;

	/* Inline bytes are in the kernel already. */
	if (ctx->kbuf)
		return swnic_mr_ref_copy_to(ref, 0, ctx->kbuf, len);
	buf = kvmalloc(size, SWNIC_POST_GFP);
	if (!buf)
		return -ENOMEM;
	for (pos = 0; pos < len && !ret; pos += n) {
		n = min_t(u64, len - pos, size);
		if (pos) {
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
		}
		if (ctx->to_mr) {
			ret = swnic_copy_from_user_nowait(buf, ctx->ubuf + pos,
							  n, ctx->later) ?:
			      swnic_mr_ref_copy_to(ref, pos, buf, n);
		} else {
			ret = swnic_mr_ref_copy_from(ref, pos, buf, n) ?:
			      swnic_copy_to_user_nowait(ctx->ubuf + pos, buf,
							n, ctx->later);
		}
	}
	kvfree(buf);
	return ret;
}

static int swnic_rma_copy(struct swnic_ep *dst, struct swnic_ep *src,
			  const struct swnic_sqe *sqe, u32 access,
			  struct swnic_rma_ctx *ctx)
{
	struct swnic_mr_target t = {
		.key = sqe->rkey,
		.addr = sqe->raddr,
		.len = sqe->len,
		.access = access,
		.auth_key = READ_ONCE(src->dom->auth_key),
	};
	struct swnic_mr_ref ref;
	u32 dkey = READ_ONCE(dst->dom->auth_key);
	int ret;

	/*
	 * The initiator's key (its domain's or, by key_index, one of its
	 * own) must be @dst's domain's, or one @dst holds itself: then it
	 * reaches the MRs of @dst's domain, registered under that domain's
	 * key. The transport checked it already; so does the MR lookup.
	 */
	ret = swnic_ep_sqe_key(src, sqe, &t.auth_key);
	if (ret)
		return ret;
	/* Who asks, with the key it named: for MRs limited to some peers. */
	swnic_mr_target_from(&t, t.auth_key, src->addr,
			     swnic_ep_src_port(src));
	if (t.auth_key != dkey) {
		/* Its own keys go as it closes: refused, not EACCES. */
		if (!swnic_ep_holds_key(dst, t.auth_key))
			return swnic_ep_key_refused(dst);
		t.auth_key = dkey;
	}
	if (!sqe->len)
		return 0;
	ret = swnic_mr_ref_get(dst->dom, &t, &ref);
	if (!ret) {
		/*
		 * A round's: an ODP target out of reach is for later, and
		 * so is the initiator's own buffer.
		 */
		ref.round = swnic_ep_defers(src);
		ref.last_try = swnic_ep_last_try(src);
		ctx->later = swnic_ep_later(src);
		if (ref.umem)
			ret = swnic_rma_move_pinned(&ref, sqe->len, ctx);
		else
			ret = swnic_rma_move_odp(&ref, sqe->len, ctx);
		if (!ret)
			swnic_mr_ref_count(&ref, t.access);
		swnic_mr_ref_put(&ref);
	}
	/*
	 * The target exited meanwhile: its MRs were revoked or its pages
	 * dropped by the teardown, not by anything the initiator did.
	 */
	if (ret && swnic_domain_exited(dst->dom))
		return -ECONNREFUSED;
	return ret;
}

/**
 * swnic_rma_write() - SWNIC_OP_WRITE: copy into the target's MR
 * @dst: the target endpoint (its domain owns the MR)
 * @src: the initiator
 * @sqe: the validated work request (rkey, raddr, len, data)
 * @kbuf: inline payload, or NULL for sqe->addr in the current mm
 *
 * With SWNIC_SQE_REMOTE_DATA the target's receive CQ gets a completion; its
 * slot is reserved first, so a full CQ fails the write with -EAGAIN before
 * any byte moves.
 *
 * Return: 0 or the initiator's error: from the MR checks -ENOKEY (no such
 * key), -EKEYREVOKED, -EKEYREJECTED (another auth key), -EACCES (right
 * missing), -ERANGE (out of bounds); -EFAULT; -EAGAIN; -ECONNREFUSED (the
 * target's process exited).
 */
int swnic_rma_write(struct swnic_ep *dst, struct swnic_ep *src,
		    const struct swnic_sqe *sqe, const void *kbuf)
{
	struct swnic_rma_ctx ctx = {
		.ubuf = u64_to_user_ptr(sqe->addr),
		.kbuf = kbuf,
		.to_mr = true,
	};
	bool notify = sqe->flags & SWNIC_SQE_REMOTE_DATA;
	int ret;

	if (notify && !swnic_cq_reserve(dst->rx_cq))
		return -EAGAIN;
	ret = swnic_rma_copy(dst, src, sqe, SWNIC_MR_ACCESS_REMOTE_WRITE, &ctx);
	if (ret) {
		if (notify)
			swnic_cq_unreserve(dst->rx_cq);
		return ret;
	}
	swnic_complete_rma_target(dst, src, sqe);
	return 0;
}

/**
 * swnic_rma_read() - SWNIC_OP_READ: copy from the target's MR
 * @dst: the target endpoint (its domain owns the MR)
 * @src: the initiator
 * @sqe: the validated work request; the data lands at sqe->addr
 *
 * Return: 0 or the initiator's error, as swnic_rma_write().
 */
int swnic_rma_read(struct swnic_ep *dst, struct swnic_ep *src,
		   const struct swnic_sqe *sqe)
{
	struct swnic_rma_ctx ctx = { .ubuf = u64_to_user_ptr(sqe->addr) };
	int ret;

	ret = swnic_rma_copy(dst, src, sqe, SWNIC_MR_ACCESS_REMOTE_READ, &ctx);
	if (!ret)
		swnic_complete_rma_target(dst, src, sqe);
	return ret;
}
