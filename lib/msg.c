// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Messages and tagged messages (fi_msg(3), fi_tagged(3)): each post is one
 * entry in the endpoint's SQ or RQ. Matching happens in the kernel. A
 * single buffer goes to the kernel as is (one copy, sender's pages to
 * receiver's); several are gathered into a bounce buffer (sends) or
 * scattered from one at completion (receives). Payloads up to the inject
 * size travel inside the SQE. The entries are built here and produced by
 * post.c (ring slot, tail, doorbell).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ep.h"
#include "mr.h"

#define swnic_ep_from(f) swnic_container_of(f, struct swnic_ep, ep_fid)

/*
 * The bytes of @iov; SIZE_MAX if they do not add up in a size_t, or for
 * iovs the caller refuses next (too many, or none given): neither is
 * read, and SIZE_MAX is over any max_msg_size.
 */
static size_t swnic_iov_len(const struct iovec *iov, size_t count)
{
	size_t len = 0;

	if (count > SWNIC_MAX_IOV_PROV || (count && !iov))
		return SIZE_MAX;
	for (size_t i = 0; i < count; i++) {
		if (iov[i].iov_len > SIZE_MAX - len)
			return SIZE_MAX;
		len += iov[i].iov_len;
	}
	return len;
}

static void swnic_iov_gather(void *dst, const struct iovec *iov, size_t count)
{
	char *p = dst;

	for (size_t i = 0; i < count; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
}

static uint64_t swnic_send_cflags(uint8_t opcode)
{
	switch (opcode) {
	case SWNIC_OP_TSEND:
		return FI_SEND | FI_TAGGED;
	case SWNIC_OP_WRITE:
		return FI_RMA | FI_WRITE;
	case SWNIC_OP_READ:
		return FI_RMA | FI_READ;
	default:
		return FI_SEND | FI_MSG;
	}
}

static uint8_t swnic_send_kind(uint8_t opcode)
{
	switch (opcode) {
	case SWNIC_OP_WRITE:
		return SWNIC_CNTR_WRITE;
	case SWNIC_OP_READ:
		return SWNIC_CNTR_READ;
	default:
		return SWNIC_CNTR_SEND;
	}
}

/**
 * swnic_ep_post_send_trig() - post a send, tagged send, RMA write or read
 *
 * @flags are the operation's flags (fi_*msg) or the endpoint's defaults;
 * FI_INJECT carries the payload in the SQE (len <= inject_size) and, as
 * fi_inject(3), generates no completion when it comes from an inject call
 * (the callers pass FI_INJECT without FI_COMPLETION for those).
 * @trig: a triggered operation's condition (trigger.c), or NULL. Its SQE
 * cannot carry the payload (the condition is there), so an FI_INJECT one
 * is copied to a buffer the op owns until it completes.
 */
ssize_t swnic_ep_post_send_trig(struct swnic_ep *ep, uint8_t opcode,
				const struct iovec *iov, size_t count,
				fi_addr_t dest, uint64_t tag, uint64_t data,
				uint64_t raddr, uint64_t rkey, void *context,
				uint64_t flags, void **desc,
				const struct swnic_sqe_trigger *trig)
{
	struct swnic_sqe sqe = {
		.opcode = opcode,
		.flags = SWNIC_SQE_COMPLETION,
		.tag = tag,
		.data = data,
		.raddr = raddr,
		.rkey = rkey,
	};
	size_t len = swnic_iov_len(iov, count);
	bool inline_ok = !trig && opcode != SWNIC_OP_READ &&
			 len <= SWNIC_INLINE_MAX;
	bool copy;
	struct swnic_op op = { 0 };
	struct swnic_hmem hmem;
	struct sockaddr_in sin;
	void *bounce = NULL;
	ssize_t ret;

	/*
	 * FI_INJECT is a send's or a write's (fi_rma(3)): in an endpoint's
	 * op_flags, it does not make its reads fail.
	 */
	if (opcode == SWNIC_OP_READ)
		flags &= ~(uint64_t)FI_INJECT;
	copy = trig && (flags & FI_INJECT);
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	/* A receive context (a SEP's, or shared) only receives. */
	if (ep->ep_fid.fid.fclass == FI_CLASS_RX_CTX ||
	    ep->ep_fid.fid.fclass == FI_CLASS_SRX_CTX)
		return -FI_EOPNOTSUPP;
	if (count > SWNIC_MAX_IOV_PROV || (count && !iov))
		return -FI_EINVAL;
	if (len > ep->info->ep_attr->max_msg_size)
		return -FI_EMSGSIZE;
	swnic_desc_hmem(desc, count, &hmem);
	if ((flags & FI_INJECT) && (trig ? len > SWNIC_INLINE_MAX : !inline_ok))
		return -FI_EINVAL;
	ret = swnic_ep_dest(ep, dest, &sin, &sqe.key_index);
	if (ret)
		return ret;
	sqe.dest_addr = sin.sin_addr.s_addr;
	sqe.dest_port = ntohs(sin.sin_port);
	sqe.len = len;
	if (flags & FI_REMOTE_CQ_DATA)
		sqe.flags |= SWNIC_SQE_REMOTE_DATA;
	/*
	 * A send completes once the target has the data (FI_TRANSMIT_
	 * COMPLETE, which implies FI_INJECT_COMPLETE); FI_DELIVERY_COMPLETE
	 * waits until a receive took it. RMA completes after placement.
	 */
	if ((flags & FI_DELIVERY_COMPLETE) &&
	    (opcode == SWNIC_OP_SEND || opcode == SWNIC_OP_TSEND))
		sqe.flags |= SWNIC_SQE_DELIVERY;
	/* fi_endpoint(3) FI_FENCE: only with the capability. */
	if (flags & FI_FENCE) {
		if (!(ep->caps & FI_FENCE))
			return -FI_EINVAL;
		sqe.flags |= SWNIC_SQE_FENCE;
		ep->fence_used = true;
	}

	if (hmem.iface != FI_HMEM_SYSTEM) {
		/*
		 * Device memory (registered with an HMEM override): the
		 * kernel cannot reach it, the override's copies stage it.
		 */
		bounce = malloc(len ? len : 1);
		if (!bounce)
			return -FI_ENOMEM;
		if (opcode != SWNIC_OP_READ) {
			ret = swnic_copy_from_iface(ep->domain, bounce, len,
						    hmem.iface, hmem.device,
						    iov, count, 0);
			if (ret != (ssize_t)len) {
				free(bounce);
				return ret < 0 ? ret : -FI_EIO;
			}
		}
		if (inline_ok && (flags & FI_INJECT)) {
			sqe.flags |= SWNIC_SQE_INLINE;
			memcpy(sqe.inline_data, bounce, len);
			free(bounce);
			bounce = NULL;
		} else {
			sqe.addr = (uintptr_t)bounce;
		}
	} else if (inline_ok && ((flags & FI_INJECT) || count != 1)) {
		sqe.flags |= SWNIC_SQE_INLINE;
		swnic_iov_gather(sqe.inline_data, iov, count);
	} else if (count == 1 && !copy) {
		sqe.addr = (uintptr_t)iov[0].iov_base;
	} else {
		/* Gathered (sends, writes) or scattered at completion (reads). */
		bounce = malloc(len);
		if (!bounce)
			return -FI_ENOMEM;
		if (opcode != SWNIC_OP_READ)
			swnic_iov_gather(bounce, iov, count);
		sqe.addr = (uintptr_t)bounce;
	}

	/*
	 * An inject carrying its payload needs no op: nothing is held until
	 * it completes and fi_inject(3) reports no completion, so the kernel
	 * is asked for a CQE only if it fails (swnic_inject_handle()). Else
	 * injects would stall once tx_attr->size of them waited for an
	 * unread CQ.
	 */
	if ((flags & SWNIC_OP_NO_COMPLETION) && (sqe.flags & SWNIC_SQE_INLINE)) {
		sqe.flags &= ~SWNIC_SQE_COMPLETION;
		sqe.context = swnic_inject_handle(ep, false);
		return swnic_post_sq(ep, &sqe, NULL);
	}

	if (trig) {
		sqe.flags |= SWNIC_SQE_TRIGGER;
		memcpy(sqe.inline_data, trig, sizeof(*trig));
	}
	op.context = context;
	op.kind = swnic_send_kind(opcode);
	op.flags = swnic_send_cflags(opcode);
	if (swnic_ep_wants_completion(ep, true, flags) &&
	    !(flags & SWNIC_OP_NO_COMPLETION))
		op.flags |= FI_COMPLETION;
	op.bounce = bounce;
	/* A read through a bounce buffer is scattered at completion. */
	if (bounce && opcode == SWNIC_OP_READ) {
		memcpy(op.iov, iov, count * sizeof(*iov));
		op.iov_count = count;
		op.hmem = hmem;
	}
	return swnic_post_sq(ep, &sqe, &op);
}

ssize_t swnic_ep_post_send(struct swnic_ep *ep, uint8_t opcode,
			   const struct iovec *iov, size_t count,
			   fi_addr_t dest, uint64_t tag, uint64_t data,
			   uint64_t raddr, uint64_t rkey, void *context,
			   uint64_t flags, void **desc)
{
	struct swnic_sqe_trigger trig;
	int ret;

	if (!(flags & FI_TRIGGER))
		return swnic_ep_post_send_trig(ep, opcode, iov, count, dest,
					       tag, data, raddr, rkey, context,
					       flags, desc, NULL);
	ret = swnic_trig_from_context(ep, context, &trig);
	if (ret)
		return ret;
	return swnic_ep_post_send_trig(ep, opcode, iov, count, dest, tag, data,
				       raddr, rkey, context, flags, desc,
				       &trig);
}

/*
 * fi_tagged(3) FI_PEEK (with FI_CLAIM or FI_DISCARD) and FI_CLAIM |
 * FI_DISCARD: asked of the kernel's unexpected messages at once; the answer
 * is a completion (or an FI_ENOMSG error) on the receive CQ. A claim is
 * named by the operation's context, which FI_CLAIM receives pass again.
 */
static ssize_t swnic_ep_peek(struct swnic_ep *ep, fi_addr_t src, uint64_t tag,
			     uint64_t ignore, void *context, uint64_t flags)
{
	struct swnic_ep_peek p = {
		.size = sizeof(p),
		.tag = tag,
		.ignore = ignore,
		.claim = (uintptr_t)context,
	};
	uint64_t cflags = FI_RECV | FI_TAGGED;
	/* An SRX answers on its oldest endpoint's CQ (srx.c), held. */
	bool srx = swnic_ep_is_srx(ep);
	struct swnic_cq *cq = srx ? swnic_srx_cq(ep) : ep->rx_cq;
	struct sockaddr_in sin;
	fi_addr_t from;
	ssize_t ret;

	if (!cq)
		return -FI_ENOCQ;
	if (flags & FI_CLAIM)
		p.flags |= SWNIC_PEEK_CLAIM;
	if (flags & FI_DISCARD)
		p.flags |= SWNIC_PEEK_DISCARD;
	/*
	 * An SRX of connected endpoints only names no source, as for its
	 * receives (swnic_ep_recv_src()).
	 */
	if ((ep->caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC &&
	    !(srx && !ep->av && swnic_srx_msg_only(ep))) {
		uint32_t rx_index;

		if (ep->av)
			src = swnic_av_rx_split(ep->av, src, &rx_index);
		ret = swnic_ep_dest(ep, src, &sin, NULL);
		if (ret)
			goto out;
		p.flags |= SWNIC_PEEK_DIRECTED;
		p.src_addr = sin.sin_addr.s_addr;
		p.src_port = ntohs(sin.sin_port);
	}
	/*
	 * The answer's room first: a claim or a discard takes the message,
	 * which a full CQ would lose with its answer. Held until written.
	 */
	ret = swnic_cq_lock_room(cq);
	if (ret)
		goto out;
	if (ioctl(ep->fd, SWNIC_IOCTL_EP_PEEK, &p)) {
		ret = errno == ENOMSG ?
		      swnic_cq_write_locked(cq, context, cflags, 0, 0, tag,
					    FI_ENOMSG) : -errno;
	} else {
		if (p.has_data)
			cflags |= FI_REMOTE_CQ_DATA;
		/*
		 * fi_tagged(3): the answer carries the message's source, as
		 * its receive's completion would (swnic_cqe_src()); the
		 * kernel does not say which key it came with: any of the
		 * sender's will do.
		 */
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = p.src_addr;
		sin.sin_port = htons(p.src_port);
		from = ep->av ? swnic_av_reverse(ep->av, &sin, -1) :
				FI_ADDR_NOTAVAIL;
		ret = swnic_cq_report(cq, context, cflags, p.len, NULL,
				      p.data, p.tag, from, &sin);
	}
	swnic_cq_unlock(cq);
out:
	if (srx)
		swnic_cq_hold(cq, -1);
	return ret;
}

/**
 * swnic_ep_post_recv_trig() - post a receive or tagged receive
 *
 * @trig: a triggered receive's condition (trigger.c: FI_TRIGGER or
 * deferred work), or NULL; the kernel keeps it until it is due.
 */
ssize_t swnic_ep_post_recv_trig(struct swnic_ep *ep, const struct iovec *iov,
				size_t count, fi_addr_t src, uint64_t tag,
				uint64_t ignore, void *context,
				uint64_t flags, bool tagged, void **desc,
				const struct swnic_sqe_trigger *trig)
{
	struct swnic_rqe rqe = { .tag = tag, .ignore = ignore };
	size_t len = swnic_iov_len(iov, count);
	struct swnic_op op = { 0 };
	struct swnic_hmem hmem;
	void *bounce = NULL;
	ssize_t ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	/* A transmit context of a scalable endpoint only sends. */
	if (ep->ep_fid.fid.fclass == FI_CLASS_TX_CTX)
		return -FI_EOPNOTSUPP;
	/* An endpoint with a shared receive context receives through it. */
	if (ep->srx && !swnic_ep_is_srx(ep))
		return -FI_EOPNOTSUPP;
	/* The kernel keeps no triggered receive of an SRX (no CQ of its own). */
	if (trig && swnic_ep_is_srx(ep))
		return -FI_ENOSYS;
	/* Too many, none given, or more bytes than a size_t holds. */
	if (count > SWNIC_MAX_IOV_PROV || (count && !iov) || len == SIZE_MAX)
		return -FI_EINVAL;
	/* A peek is answered at once: it cannot wait for a trigger. */
	if (trig && (flags & (FI_PEEK | FI_DISCARD)))
		return -FI_EINVAL;
	if (flags & (FI_PEEK | FI_CLAIM | FI_DISCARD)) {
		if (!tagged)
			return -FI_EOPNOTSUPP;
		if ((flags & FI_PEEK) || (flags & FI_DISCARD))
			return swnic_ep_peek(ep, src, tag, ignore, context,
					     flags);
		/* FI_CLAIM: receive the message claimed under @context. */
		if (flags & FI_MULTI_RECV)
			return -FI_EINVAL;
		rqe.flags |= SWNIC_RQE_CLAIM;
		rqe.tag = (uintptr_t)context;
		src = FI_ADDR_UNSPEC;
	}
	if (tagged)
		rqe.flags |= SWNIC_RQE_TAGGED;
	swnic_desc_hmem(desc, count, &hmem);
	if (flags & FI_MULTI_RECV) {
		if (tagged || count != 1)
			return -FI_EINVAL;
		if (hmem.iface != FI_HMEM_SYSTEM)
			return -FI_EOPNOTSUPP;
		rqe.flags |= SWNIC_RQE_MULTI_RECV;
		rqe.min_free = ep->min_multi_recv;
	}
	if ((ep->caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC) {
		ret = swnic_ep_recv_src(ep, src, flags, &rqe);
		if (ret)
			return ret;
	}
	rqe.len = len;
	if (count == 1 && hmem.iface == FI_HMEM_SYSTEM) {
		rqe.addr = (uintptr_t)iov[0].iov_base;
		rqe.mr = swnic_mr_recv_handle(ep->domain, desc ? desc[0] : NULL,
					      rqe.addr, len);
		if (rqe.mr)
			rqe.flags |= SWNIC_RQE_MR;
	} else if (count >= 1) {
		/* Scattered at completion (through the override for HMEM). */
		bounce = malloc(len ? len : 1);
		if (!bounce)
			return -FI_ENOMEM;
		rqe.addr = (uintptr_t)bounce;
	}

	op.context = context;
	op.kind = SWNIC_CNTR_RECV;
	op.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	/* Deferred work reports no completion unless asked (trigger.c). */
	if (swnic_ep_wants_completion(ep, false, flags) &&
	    !(flags & SWNIC_OP_NO_COMPLETION))
		op.flags |= FI_COMPLETION;
	op.multi_recv = flags & FI_MULTI_RECV;
	op.bounce = bounce;
	op.buf = count ? iov[0].iov_base : NULL;
	if (bounce) {
		memcpy(op.iov, iov, count * sizeof(*iov));
		op.iov_count = count;
		op.hmem = hmem;
	}
	if (trig)
		return swnic_post_rq_trig(ep, &rqe, &op, trig);
	return swnic_post_rq(ep, &rqe, &op);
}

static ssize_t swnic_ep_post_recv(struct swnic_ep *ep, const struct iovec *iov,
				  size_t count, fi_addr_t src, uint64_t tag,
				  uint64_t ignore, void *context,
				  uint64_t flags, bool tagged, void **desc)
{
	struct swnic_sqe_trigger trig;
	int ret;

	if (!(flags & FI_TRIGGER))
		return swnic_ep_post_recv_trig(ep, iov, count, src, tag,
					       ignore, context, flags, tagged,
					       desc, NULL);
	/* A transmit context of a scalable endpoint only sends. */
	if (ep->ep_fid.fid.fclass == FI_CLASS_TX_CTX)
		return -FI_EOPNOTSUPP;
	ret = swnic_trig_from_context(ep, context, &trig);
	if (ret)
		return ret;
	if (!(ep->domain->dev.attr.features & SWNIC_FEAT_TRIG_RECV))
		return -FI_ENOSYS;
	return swnic_ep_post_recv_trig(ep, iov, count, src, tag, ignore,
				       context, flags, tagged, desc, &trig);
}

/* ---- fi_ops_msg ---------------------------------------------------------- */

static ssize_t swnic_recv(struct fid_ep *ep_fid, void *buf, size_t len,
			  void *desc, fi_addr_t src, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return swnic_ep_post_recv(ep, &iov, 1, src, 0, 0, context,
				  ep->rx_op_flags, false, &desc);
}

static ssize_t swnic_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t src,
			   void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	return swnic_ep_post_recv(ep, iov, count, src, 0, 0, context,
				  ep->rx_op_flags, false, desc);
}

static ssize_t swnic_recvmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			     uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	if (!msg)
		return -FI_EINVAL;
	return swnic_ep_post_recv(ep, msg->msg_iov, msg->iov_count, msg->addr,
				  0, 0, msg->context, flags, false, msg->desc);
}

static ssize_t swnic_send(struct fid_ep *ep_fid, const void *buf, size_t len,
			  void *desc, fi_addr_t dest, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_SEND, &iov, 1, dest, 0, 0, 0, 0,
				  context, ep->tx_op_flags, &desc);
}

static ssize_t swnic_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t dest,
			   void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	return swnic_ep_post_send(ep, SWNIC_OP_SEND, iov, count, dest, 0, 0, 0,
				  0, context, ep->tx_op_flags, desc);
}

static ssize_t swnic_sendmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			     uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	if (!msg)
		return -FI_EINVAL;
	return swnic_ep_post_send(ep, SWNIC_OP_SEND, msg->msg_iov,
				  msg->iov_count, msg->addr, 0, msg->data, 0, 0,
				  msg->context, flags, msg->desc);
}

static ssize_t swnic_inject(struct fid_ep *ep_fid, const void *buf,
			    size_t len, fi_addr_t dest)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_SEND, &iov, 1, dest, 0, 0, 0, 0,
				  NULL, FI_INJECT | SWNIC_OP_NO_COMPLETION, NULL);
}

static ssize_t swnic_senddata(struct fid_ep *ep_fid, const void *buf,
			      size_t len, void *desc, uint64_t data,
			      fi_addr_t dest, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_SEND, &iov, 1, dest, 0, data, 0,
				  0, context, ep->tx_op_flags | FI_REMOTE_CQ_DATA, &desc);
}

static ssize_t swnic_injectdata(struct fid_ep *ep_fid, const void *buf,
				size_t len, uint64_t data, fi_addr_t dest)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_SEND, &iov, 1, dest, 0, data, 0,
				  0, NULL, FI_INJECT | FI_REMOTE_CQ_DATA |
				  SWNIC_OP_NO_COMPLETION, NULL);
}

struct fi_ops_msg swnic_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = swnic_recv,
	.recvv = swnic_recvv,
	.recvmsg = swnic_recvmsg,
	.send = swnic_send,
	.sendv = swnic_sendv,
	.sendmsg = swnic_sendmsg,
	.inject = swnic_inject,
	.senddata = swnic_senddata,
	.injectdata = swnic_injectdata,
};

/* ---- fi_ops_tagged ------------------------------------------------------- */

static ssize_t swnic_trecv(struct fid_ep *ep_fid, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return swnic_ep_post_recv(ep, &iov, 1, src, tag, ignore, context,
				  ep->rx_op_flags & ~FI_MULTI_RECV, true, &desc);
}

static ssize_t swnic_trecvv(struct fid_ep *ep_fid, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t tag, uint64_t ignore, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	return swnic_ep_post_recv(ep, iov, count, src, tag, ignore, context,
				  ep->rx_op_flags & ~FI_MULTI_RECV, true, desc);
}

static ssize_t swnic_trecvmsg(struct fid_ep *ep_fid,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	if (!msg)
		return -FI_EINVAL;
	return swnic_ep_post_recv(ep, msg->msg_iov, msg->iov_count, msg->addr,
				  msg->tag, msg->ignore, msg->context, flags,
				  true, msg->desc);
}

static ssize_t swnic_tsend(struct fid_ep *ep_fid, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag,
			   void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_TSEND, &iov, 1, dest, tag, 0, 0,
				  0, context, ep->tx_op_flags, &desc);
}

static ssize_t swnic_tsendv(struct fid_ep *ep_fid, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	return swnic_ep_post_send(ep, SWNIC_OP_TSEND, iov, count, dest, tag, 0,
				  0, 0, context, ep->tx_op_flags, desc);
}

static ssize_t swnic_tsendmsg(struct fid_ep *ep_fid,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	if (!msg)
		return -FI_EINVAL;
	return swnic_ep_post_send(ep, SWNIC_OP_TSEND, msg->msg_iov,
				  msg->iov_count, msg->addr, msg->tag,
				  msg->data, 0, 0, msg->context, flags, msg->desc);
}

static ssize_t swnic_tinject(struct fid_ep *ep_fid, const void *buf,
			     size_t len, fi_addr_t dest, uint64_t tag)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_TSEND, &iov, 1, dest, tag, 0, 0,
				  0, NULL, FI_INJECT | SWNIC_OP_NO_COMPLETION, NULL);
}

static ssize_t swnic_tsenddata(struct fid_ep *ep_fid, const void *buf,
			       size_t len, void *desc, uint64_t data,
			       fi_addr_t dest, uint64_t tag, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_TSEND, &iov, 1, dest, tag, data,
				  0, 0, context,
				  ep->tx_op_flags | FI_REMOTE_CQ_DATA, &desc);
}

static ssize_t swnic_tinjectdata(struct fid_ep *ep_fid, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t tag)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_TSEND, &iov, 1, dest, tag, data,
				  0, 0, NULL, FI_INJECT | FI_REMOTE_CQ_DATA |
				  SWNIC_OP_NO_COMPLETION, NULL);
}

struct fi_ops_tagged swnic_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = swnic_trecv,
	.recvv = swnic_trecvv,
	.recvmsg = swnic_trecvmsg,
	.send = swnic_tsend,
	.sendv = swnic_tsendv,
	.sendmsg = swnic_tsendmsg,
	.inject = swnic_tinject,
	.senddata = swnic_tsenddata,
	.injectdata = swnic_tinjectdata,
};
