// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Triggered operations (fi_trigger(3)): the kernel keeps a triggered
 * operation and starts it when a counter reaches its threshold
 * (include/uapi/linux/swnic_queue.h, struct swnic_sqe_trigger), so nothing
 * here polls. What is offered:
 *
 *  - FI_TRIGGER on sends, tagged sends, RMA reads/writes, atomics
 *    (atomic.c) and, with SWNIC_FEAT_TRIG_RECV, receives and tagged
 *    receives (msg.c, SWNIC_IOCTL_TRIG_RECV): fi_*msg with a struct
 *    fi_triggered_context of event FI_TRIGGER_THRESHOLD as the context;
 *    the threshold is compared with the counter's success value
 *    (fi_cntr_read). FI_TRIGGER_XPU is -FI_ENOSYS; an endpoint without
 *    FI_TRIGGER gets -FI_EINVAL. Endpoints and the contexts of scalable
 *    endpoints alike.
 *  - Deferred work (fi_control(domain, FI_QUEUE_WORK/FI_CANCEL_WORK/
 *    FI_FLUSH_WORK)): FI_OP_SEND, FI_OP_TSEND, FI_OP_READ, FI_OP_WRITE,
 *    FI_OP_ATOMIC, FI_OP_FETCH_ATOMIC, FI_OP_COMPARE_ATOMIC, FI_OP_RECV
 *    and FI_OP_TRECV (SWNIC_FEAT_TRIG_RECV), FI_OP_CNTR_SET and
 *    FI_OP_CNTR_ADD; the threshold is compared with success + error
 *    values, as fi_trigger(3) says. Other op types are -FI_ENOSYS.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include <rdma/fi_trigger.h>

#include "ep.h"

static int swnic_trig_errno(int err)
{
	switch (err) {
	case ENOENT:
		return -FI_EINVAL;	/* a counter closed meanwhile */
	case ENOSPC:
		return -FI_EAGAIN;
	default:
		return -err;
	}
}

/* The kernel id of @fid, a counter of @dom. */
static int swnic_trig_cntr_id(struct swnic_domain *dom, struct fid_cntr *fid,
			      uint32_t *id)
{
	struct swnic_cntr *cntr = fid ? swnic_cntr_of(&fid->fid) : NULL;

	if (!cntr || swnic_cntr_domain(cntr) != dom)
		return -FI_EINVAL;
	*id = swnic_cntr_kernel_id(cntr);
	return 0;
}

/**
 * swnic_trig_from_context() - the condition of an FI_TRIGGER operation
 * @ep: the endpoint it is posted to
 * @context: the operation's context, a struct fi_triggered_context
 * @trig: filled in
 */
int swnic_trig_from_context(struct swnic_ep *ep, void *context,
			    struct swnic_sqe_trigger *trig)
{
	const struct fi_triggered_context *tc = context;

	if (!(ep->caps & FI_TRIGGER) ||
	    !(ep->domain->dev.attr.features & SWNIC_FEAT_TRIGGER))
		return -FI_EINVAL;
	if (!tc)
		return -FI_EINVAL;
	if (tc->event_type == FI_TRIGGER_XPU)
		return -FI_ENOSYS;
	if (tc->event_type != FI_TRIGGER_THRESHOLD)
		return -FI_EINVAL;
	memset(trig, 0, sizeof(*trig));
	trig->threshold = tc->trigger.threshold.threshold;
	return swnic_trig_cntr_id(ep->domain, tc->trigger.threshold.cntr,
				  &trig->cntr_id);
}

/*
 * The endpoint of a deferred operation: one of @dom's, or a transmit or
 * receive context of one of its scalable endpoints.
 */
static struct swnic_ep *swnic_trig_ep(struct swnic_domain *dom,
				      struct fid_ep *fid)
{
	struct swnic_ep *ep;

	if (!fid)
		return NULL;
	ep = swnic_ep_or_ctx_of_fid(&fid->fid);
	return ep && ep->domain == dom ? ep : NULL;
}

/* FI_OP_CNTR_SET / FI_OP_CNTR_ADD */
static int swnic_trig_queue_cntr(struct swnic_domain *dom,
				 const struct fi_deferred_work *work)
{
	struct swnic_trig_cntr c = {
		.size = sizeof(c),
		.threshold = work->threshold,
		.cookie = (uintptr_t)work,
		.trig_flags = SWNIC_TRIG_F_SUM,
	};
	int ret;

	/* fi_trigger(3): counter work updates no completion counter. */
	if (!work->op.cntr || work->completion_cntr)
		return -FI_EINVAL;
	ret = swnic_trig_cntr_id(dom, work->triggering_cntr, &c.cntr_id);
	if (!ret)
		ret = swnic_trig_cntr_id(dom, work->op.cntr->cntr, &c.target);
	if (ret)
		return ret;
	c.flags = work->op_type == FI_OP_CNTR_SET ? SWNIC_CNTR_UPD_SET : 0;
	c.value = work->op.cntr->value;
	if (ioctl(dom->fd, SWNIC_IOCTL_TRIG_CNTR, &c))
		return swnic_trig_errno(errno);
	return 0;
}

/* Deferred FI_OP_RECV / FI_OP_TRECV: a triggered receive. */
static int swnic_trig_post_recv(struct swnic_ep *ep,
				const struct fi_deferred_work *work,
				uint64_t flags,
				const struct swnic_sqe_trigger *trig)
{
	const struct fi_msg_tagged *tm;
	const struct fi_msg *m;

	if (!(ep->domain->dev.attr.features & SWNIC_FEAT_TRIG_RECV))
		return -FI_ENOSYS;
	if (work->op_type == FI_OP_RECV) {
		m = &work->op.msg->msg;
		return swnic_ep_post_recv_trig(ep, m->msg_iov, m->iov_count,
					       m->addr, 0, 0, m->context,
					       flags, false, m->desc, trig);
	}
	tm = &work->op.tagged->msg;
	return swnic_ep_post_recv_trig(ep, tm->msg_iov, tm->iov_count,
				       tm->addr, tm->tag, tm->ignore,
				       tm->context, flags, true, tm->desc,
				       trig);
}

/*
 * The endpoint, flags and context of deferred data transfer @work.
 * Return: 0, -FI_EINVAL (no operation), -FI_ENOSYS (not one).
 */
static int swnic_trig_work_op(const struct fi_deferred_work *work,
			      struct fid_ep **ep, uint64_t *flags,
			      void **context)
{
	switch (work->op_type) {
	case FI_OP_SEND:
	case FI_OP_RECV:
		if (!work->op.msg)
			return -FI_EINVAL;
		*ep = work->op.msg->ep;
		*flags = work->op.msg->flags;
		*context = work->op.msg->msg.context;
		return 0;
	case FI_OP_TSEND:
	case FI_OP_TRECV:
		if (!work->op.tagged)
			return -FI_EINVAL;
		*ep = work->op.tagged->ep;
		*flags = work->op.tagged->flags;
		*context = work->op.tagged->msg.context;
		return 0;
	case FI_OP_READ:
	case FI_OP_WRITE:
		if (!work->op.rma)
			return -FI_EINVAL;
		*ep = work->op.rma->ep;
		*flags = work->op.rma->flags;
		*context = work->op.rma->msg.context;
		return 0;
	case FI_OP_ATOMIC:
		if (!work->op.atomic)
			return -FI_EINVAL;
		*ep = work->op.atomic->ep;
		*flags = work->op.atomic->flags;
		*context = work->op.atomic->msg.context;
		return 0;
	case FI_OP_FETCH_ATOMIC:
		if (!work->op.fetch_atomic)
			return -FI_EINVAL;
		*ep = work->op.fetch_atomic->ep;
		*flags = work->op.fetch_atomic->flags;
		*context = work->op.fetch_atomic->msg.context;
		return 0;
	case FI_OP_COMPARE_ATOMIC:
		if (!work->op.compare_atomic)
			return -FI_EINVAL;
		*ep = work->op.compare_atomic->ep;
		*flags = work->op.compare_atomic->flags;
		*context = work->op.compare_atomic->msg.context;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* Post deferred data transfer @work: a triggered SQE (or receive). */
static int swnic_trig_post_xfer(struct swnic_domain *dom,
				const struct fi_deferred_work *work)
{
	struct swnic_sqe_trigger trig = {
		.threshold = work->threshold,
		.flags = SWNIC_TRIG_F_SUM | SWNIC_TRIG_F_CNTR,
	};
	const struct fi_op_fetch_atomic *fa;
	const struct fi_op_compare_atomic *ca;
	const struct fi_msg_tagged *tm;
	const struct fi_msg_rma *rm;
	const struct fi_msg *m;
	struct fid_ep *fid;
	struct swnic_ep *ep;
	uint64_t flags;
	void *context;
	int ret;

	ret = swnic_trig_work_op(work, &fid, &flags, &context);
	if (ret)
		return ret;
	ep = swnic_trig_ep(dom, fid);
	if (!ep)
		return -FI_EINVAL;
	ret = swnic_trig_cntr_id(dom, work->triggering_cntr, &trig.cntr_id);
	if (ret)
		return ret;
	/* The completion counter instead of the endpoint's (0: none). */
	if (work->completion_cntr) {
		ret = swnic_trig_cntr_id(dom, work->completion_cntr,
					 &trig.comp_cntr);
		if (ret)
			return ret;
	}
	/* No completion at the endpoint unless asked (fi_trigger(3)). */
	flags |= FI_TRIGGER;
	if (!(flags & FI_COMPLETION))
		flags |= SWNIC_OP_NO_COMPLETION;

	switch (work->op_type) {
	case FI_OP_SEND:
		m = &work->op.msg->msg;
		return swnic_ep_post_send_trig(ep, SWNIC_OP_SEND, m->msg_iov,
					       m->iov_count, m->addr, 0,
					       m->data, 0, 0, m->context,
					       flags, m->desc, &trig);
	case FI_OP_TSEND:
		tm = &work->op.tagged->msg;
		return swnic_ep_post_send_trig(ep, SWNIC_OP_TSEND,
					       tm->msg_iov, tm->iov_count,
					       tm->addr, tm->tag, tm->data, 0,
					       0, tm->context, flags, tm->desc,
					       &trig);
	case FI_OP_READ:
	case FI_OP_WRITE:
		rm = &work->op.rma->msg;
		if (rm->rma_iov_count != 1 || !rm->rma_iov)
			return -FI_EINVAL;
		return swnic_ep_post_send_trig(ep, work->op_type == FI_OP_READ ?
					       SWNIC_OP_READ : SWNIC_OP_WRITE,
					       rm->msg_iov, rm->iov_count,
					       rm->addr, 0, rm->data,
					       rm->rma_iov[0].addr,
					       rm->rma_iov[0].key, rm->context,
					       flags, rm->desc, &trig);
	case FI_OP_ATOMIC:
		return swnic_atomic_post_trig(ep, SWNIC_OP_ATOMIC,
					      &work->op.atomic->msg, NULL, 0,
					      NULL, 0, flags, &trig);
	case FI_OP_FETCH_ATOMIC:
		fa = work->op.fetch_atomic;
		return swnic_atomic_post_trig(ep, SWNIC_OP_FETCH_ATOMIC,
					      &fa->msg, NULL, 0,
					      fa->fetch.msg_iov,
					      fa->fetch.iov_count, flags,
					      &trig);
	case FI_OP_COMPARE_ATOMIC:
		ca = work->op.compare_atomic;
		return swnic_atomic_post_trig(ep, SWNIC_OP_COMPARE_ATOMIC,
					      &ca->msg, ca->compare.msg_iov,
					      ca->compare.iov_count,
					      ca->fetch.msg_iov,
					      ca->fetch.iov_count, flags,
					      &trig);
	default:
		return swnic_trig_post_recv(ep, work, flags, &trig);
	}
}

_Static_assert(sizeof(struct swnic_op_ref) <=
	       sizeof(((struct fi_deferred_work *)0)->context),
	       "a deferred work's context holds its op");

/*
 * FI_QUEUE_WORK of a data transfer. The op its post took is kept in the
 * work's context, the provider's (fi_context2): FI_CANCEL_WORK cancels
 * that op, whatever other operations share the transfer's context.
 */
static int swnic_trig_queue_xfer(struct swnic_domain *dom,
				 struct fi_deferred_work *work)
{
	int ret;

	memset(&work->context, 0, sizeof(work->context));
	swnic_post_last = (struct swnic_op_ref){ 0 };
	ret = swnic_trig_post_xfer(dom, work);
	if (!ret)
		memcpy(&work->context, &swnic_post_last,
		       sizeof(swnic_post_last));
	return ret;
}

static int swnic_trig_queue_work(struct swnic_domain *dom,
				 struct fi_deferred_work *work)
{
	if (!work)
		return -FI_EINVAL;
	if (!(dom->dev.attr.features & SWNIC_FEAT_TRIGGER))
		return -FI_ENOSYS;
	switch (work->op_type) {
	case FI_OP_CNTR_SET:
	case FI_OP_CNTR_ADD:
		return swnic_trig_queue_cntr(dom, work);
	default:
		/* Data transfers; an unknown op is -FI_ENOSYS. */
		return swnic_trig_queue_xfer(dom, work);
	}
}

static int swnic_trig_cancel_work(struct swnic_domain *dom,
				  const struct fi_deferred_work *work)
{
	struct swnic_trig_cancel c = {
		.size = sizeof(c),
		.flags = SWNIC_TRIG_CANCEL_COOKIE,
		.cookie = (uintptr_t)work,
	};
	struct swnic_op_ref ref;
	struct swnic_ep *ep;
	struct fid_ep *fid;
	uint64_t flags;
	void *context;
	int ret;

	if (!work)
		return -FI_EINVAL;
	if (!(dom->dev.attr.features & SWNIC_FEAT_TRIGGER))
		return -FI_ENOSYS;
	if (work->op_type == FI_OP_CNTR_SET || work->op_type == FI_OP_CNTR_ADD) {
		if (ioctl(dom->fd, SWNIC_IOCTL_TRIG_CANCEL, &c))
			return errno == ENOENT ? -FI_ENOENT : -errno;
		return 0;
	}
	ret = swnic_trig_work_op(work, &fid, &flags, &context);
	if (ret)
		return ret;
	ep = swnic_trig_ep(dom, fid);
	if (!ep)
		return -FI_EINVAL;
	/* As fi_cancel, it completes with FI_ECANCELED. */
	memcpy(&ref, &work->context, sizeof(ref));
	return swnic_ep_cancel_op(ep, &ref);
}

/*
 * FI_FLUSH_WORK: all deferred work of the domain (NULL), or what waits on
 * work->triggering_cntr.
 */
static int swnic_trig_flush_work(struct swnic_domain *dom,
				 const struct fi_deferred_work *work)
{
	struct swnic_trig_cancel c = { .size = sizeof(c) };
	int ret;

	if (!(dom->dev.attr.features & SWNIC_FEAT_TRIGGER))
		return -FI_ENOSYS;
	if (work && work->triggering_cntr) {
		ret = swnic_trig_cntr_id(dom, work->triggering_cntr,
					 &c.cntr_id);
		if (ret)
			return ret;
		c.flags = SWNIC_TRIG_CANCEL_CNTR;
	}
	/*
	 * Deferred work only, not FI_TRIGGER operations (fi_trigger(3)). An
	 * older module cancels them all: it cannot tell them apart.
	 */
	if (dom->dev.attr.features & SWNIC_FEAT_TRIG_CANCEL_SUM)
		c.flags |= SWNIC_TRIG_CANCEL_SUM;
	if (ioctl(dom->fd, SWNIC_IOCTL_TRIG_CANCEL, &c))
		return swnic_trig_errno(errno);
	return 0;
}

/* fi_control(domain, FI_QUEUE_WORK / FI_CANCEL_WORK / FI_FLUSH_WORK) */
int swnic_trig_domain_control(struct swnic_domain *dom, int command,
			      void *arg)
{
	switch (command) {
	case FI_QUEUE_WORK:
		return swnic_trig_queue_work(dom, arg);
	case FI_CANCEL_WORK:
		return swnic_trig_cancel_work(dom, arg);
	case FI_FLUSH_WORK:
		return swnic_trig_flush_work(dom, arg);
	default:
		return -FI_ENOSYS;
	}
}
