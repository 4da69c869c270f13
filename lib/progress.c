// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * From the kernel's completions to the application's: a CQ's progress
 * drains its kernel ring and hands every struct swnic_cqe here. The CQE's
 * context is the struct swnic_op its work request carried; the op says
 * whether the application wants a completion (selective completion,
 * injects), which counter to bump, and where to scatter a bounced receive.
 */
#include <errno.h>
#include <string.h>

#include "ep.h"

/* The kernel's positive errno as libfabric's (also positive) error. */
int swnic_errno_to_fi(int err)
{
	/* Where libfabric has a name of its own, it is not the errno. */
	switch (err) {
	case EMSGSIZE:
		return FI_ETRUNC;
	case ENOKEY:
		return FI_ENOKEY;
	default:
		return err;
	}
}

static uint64_t swnic_cqe_fi_flags(const struct swnic_op *op,
				   const struct swnic_cqe *kc)
{
	uint64_t flags = op->flags & ~FI_COMPLETION;

	if (kc->flags & SWNIC_CQE_REMOTE_DATA)
		flags |= FI_REMOTE_CQ_DATA;
	if (kc->flags & SWNIC_CQE_MULTI_RECV)
		flags |= FI_MULTI_RECV;
	return flags;
}

/* The fi_cq flags of an op-less inject's (error) completion. */
static uint64_t swnic_cqe_inject_flags(const struct swnic_cqe *kc)
{
	if (kc->context & SWNIC_INJECT_ATOMIC)
		return FI_ATOMIC | FI_WRITE;
	if (kc->flags & SWNIC_CQE_RMA_WRITE)
		return FI_RMA | FI_WRITE;
	return FI_SEND | (kc->flags & SWNIC_CQE_TAGGED ? FI_TAGGED : FI_MSG);
}

/*
 * An inline inject that failed (msg.c and atomic.c post them without an
 * op): the kernel counted it; it is reported on its endpoint's TX CQ,
 * and on no other - one bound FI_RECV only gets the endpoint's transmit
 * completions because the kernel needs a CQ for them, and its reader
 * posted nothing there. Of an endpoint closed since: discarded.
 */
static void swnic_cqe_inject_failed(struct swnic_cq *cq,
				    const struct swnic_cqe *kc)
{
	struct swnic_op *op = swnic_op_of_handle(kc->context &
						 ~SWNIC_INJECT_BITS);
	struct swnic_ep *ep;
	int kind;

	if (!op)
		return;
	ep = op->ep;
	if (ep->tx_cq == cq)
		swnic_cq_report_err(cq, NULL, swnic_cqe_inject_flags(kc), 0,
				    NULL, 0, 0, 0, swnic_errno_to_fi(kc->err),
				    kc->err);
	/* The kernel counted it: wake the counter's waiters. */
	kind = kc->flags & SWNIC_CQE_RMA_WRITE ? SWNIC_CNTR_WRITE :
						 SWNIC_CNTR_SEND;
	if (ep->cntr[kind])
		swnic_cntr_signal(ep->cntr[kind]);
}

static void swnic_op_scatter(struct swnic_op *op, const char *p, size_t len)
{
	if (op->hmem.iface != FI_HMEM_SYSTEM) {
		ssize_t ret = swnic_copy_to_iface(op->ep->domain,
						  op->hmem.iface,
						  op->hmem.device, op->iov,
						  op->iov_count, 0, p, len);

		if (ret != (ssize_t)len)
			SWNIC_WARN(FI_LOG_EP_DATA,
				   "HMEM override copy_to: %zd of %zu bytes\n",
				   ret, len);
		return;
	}

	for (size_t i = 0; i < op->iov_count && len; i++) {
		size_t n = op->iov[i].iov_len < len ? op->iov[i].iov_len : len;

		memcpy(op->iov[i].iov_base, p, n);
		p += n;
		len -= n;
	}
}

/* A receive's sender as the kernel saw it (the provider's own form). */
static struct sockaddr_in swnic_cqe_from(const struct swnic_cqe *kc)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(kc->src_port),
		.sin_addr.s_addr = kc->src_addr,
	};

	return sin;
}

static fi_addr_t swnic_cqe_src(struct swnic_ep *ep, const struct swnic_cqe *kc,
			       const struct sockaddr_in *from)
{
	if (!ep->av || !(kc->flags & SWNIC_CQE_RECV))
		return FI_ADDR_NOTAVAIL;
	/* FI_AV_AUTH_KEY: the entry of the address and the key it came with. */
	return swnic_av_reverse(ep->av, from,
				swnic_ep_src_kslot(ep, kc->key_index));
}

/**
 * swnic_cqe_complete() - turn one kernel completion into the application's
 * @cq: the CQ whose kernel ring held @kc (the caller holds its lock)
 * @kc: the kernel's completion
 * @inline_data: the message that rode in its entry (SWNIC_CQE_INLINE), or
 *	NULL: put in place if the receive is still the application's
 */
void swnic_cqe_complete(struct swnic_cq *cq, const struct swnic_cqe *kc,
			const void *inline_data)
{
	bool error = kc->flags & SWNIC_CQE_ERROR;
	bool rx = kc->flags & SWNIC_CQE_RECV;
	struct swnic_op_pool *pool;
	bool report, srx;
	struct swnic_op *op;
	struct swnic_ep *ep;
	uint64_t flags;
	void *buf;

	if (!kc->context && (kc->flags & SWNIC_CQE_REMOTE_WRITE)) {
		/* A peer's RMA write with remote CQ data. */
		swnic_cq_report(cq, NULL, FI_RMA | FI_REMOTE_WRITE |
				FI_REMOTE_CQ_DATA, kc->len, NULL, kc->data, 0,
				FI_ADDR_NOTAVAIL, NULL);
		return;
	}
	if (kc->context & SWNIC_INJECT_HANDLE) {
		swnic_cqe_inject_failed(cq, kc);
		return;
	}
	/*
	 * Of an endpoint closed since (the CQ read nothing of it before):
	 * discarded, and its receive buffer, which the application may have
	 * freed, is not written.
	 */
	op = swnic_op_of_handle(kc->context);
	if (!op)
		return;
	if (inline_data)
		memcpy((void *)(uintptr_t)kc->buf, inline_data, kc->len);
	ep = op->ep;
	pool = rx ? &ep->rx_pool : &ep->tx_pool;

	swnic_lock_acquire(&ep->lock);
	flags = swnic_cqe_fi_flags(op, kc);
	buf = rx ? (void *)(uintptr_t)kc->buf : NULL;
	if (rx && op->bounce) {
		swnic_op_scatter(op, op->bounce, kc->len);
		buf = op->buf;
	} else if (!rx && op->iov_count && !error) {
		/*
		 * A read through a bounce buffer, or a fetching atomic's
		 * results (gathered at op->buf): into the caller's iovs.
		 */
		swnic_op_scatter(op, op->flags & FI_ATOMIC ? op->buf :
				 op->bounce, kc->len);
	}
	/*
	 * An endpoint without a CQ for this direction has its completions
	 * on its other CQ (the kernel needs both): count them, report none.
	 */
	report = (rx ? ep->rx_cq : ep->tx_cq) == cq;
	/*
	 * A receive of a shared receive context completes on the CQ of the
	 * endpoint its message arrived at, whichever that is, as that
	 * endpoint's binding says (FI_SELECTIVE_COMPLETION).
	 */
	srx = rx && swnic_ep_is_srx(ep);
	if (srx)
		report = true;
	if (report && error) {
		swnic_cq_report_err(cq, op->context, flags, kc->len, buf,
				    kc->data, kc->tag, kc->olen,
				    swnic_errno_to_fi(kc->err), kc->err);
	} else if (report && ((op->flags & FI_COMPLETION) ||
			      (kc->flags & SWNIC_CQE_MULTI_RECV) ||
			      (srx && swnic_cq_srx_reports(cq, ep->srx)))) {
		struct sockaddr_in from = swnic_cqe_from(kc);

		/*
		 * A multi-receive buffer's release is reported even where
		 * its other completions are not (fi_msg(3)).
		 */
		swnic_cq_report(cq, op->context, flags, kc->len,
				(flags & FI_MULTI_RECV) || op->multi_recv ?
				buf : NULL, kc->data, kc->tag,
				swnic_cqe_src(ep, kc, &from),
				rx ? &from : NULL);
	}
	/* The kernel counted it: wake the counter's waiters. */
	if (ep->cntr[op->kind])
		swnic_cntr_signal(ep->cntr[op->kind]);
	/* A multi-receive buffer stays posted until the kernel releases it. */
	if (!op->multi_recv || error || (kc->flags & SWNIC_CQE_MULTI_RECV))
		swnic_op_put(pool, op);
	swnic_lock_release(&ep->lock);
}
