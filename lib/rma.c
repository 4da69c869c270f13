// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RMA (fi_rma(3)): writes and reads of a peer's registered memory, named by
 * its key; the kernel checks the key, access and bounds and copies in the
 * initiator's context, so the target never has to run.
 */
#include "ep.h"

#define swnic_ep_from(f) swnic_container_of(f, struct swnic_ep, ep_fid)

static ssize_t swnic_rma_read(struct fid_ep *ep_fid, void *buf, size_t len,
			      void *desc, fi_addr_t src, uint64_t addr,
			      uint64_t key, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_READ, &iov, 1, src, 0, 0, addr,
				  key, context, ep->tx_op_flags, &desc);
}

static ssize_t swnic_rma_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src,
			       uint64_t addr, uint64_t key, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	return swnic_ep_post_send(ep, SWNIC_OP_READ, iov, count, src, 0, 0,
				  addr, key, context, ep->tx_op_flags, desc);
}

static ssize_t swnic_rma_readmsg(struct fid_ep *ep_fid,
				 const struct fi_msg_rma *msg, uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	return swnic_ep_post_send(ep, SWNIC_OP_READ, msg->msg_iov,
				  msg->iov_count, msg->addr, 0, 0,
				  msg->rma_iov[0].addr, msg->rma_iov[0].key,
				  msg->context, flags, msg->desc);
}

static ssize_t swnic_rma_write(struct fid_ep *ep_fid, const void *buf,
			       size_t len, void *desc, fi_addr_t dest,
			       uint64_t addr, uint64_t key, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_WRITE, &iov, 1, dest, 0, 0, addr,
				  key, context, ep->tx_op_flags, &desc);
}

static ssize_t swnic_rma_writev(struct fid_ep *ep_fid, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t dest,
				uint64_t addr, uint64_t key, void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	return swnic_ep_post_send(ep, SWNIC_OP_WRITE, iov, count, dest, 0, 0,
				  addr, key, context, ep->tx_op_flags, desc);
}

static ssize_t swnic_rma_writemsg(struct fid_ep *ep_fid,
				  const struct fi_msg_rma *msg, uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);

	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	return swnic_ep_post_send(ep, SWNIC_OP_WRITE, msg->msg_iov,
				  msg->iov_count, msg->addr, 0, msg->data,
				  msg->rma_iov[0].addr, msg->rma_iov[0].key,
				  msg->context, flags, msg->desc);
}

static ssize_t swnic_rma_inject(struct fid_ep *ep_fid, const void *buf,
				size_t len, fi_addr_t dest, uint64_t addr,
				uint64_t key)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_WRITE, &iov, 1, dest, 0, 0, addr,
				  key, NULL, FI_INJECT | SWNIC_OP_NO_COMPLETION, NULL);
}

static ssize_t swnic_rma_writedata(struct fid_ep *ep_fid, const void *buf,
				   size_t len, void *desc, uint64_t data,
				   fi_addr_t dest, uint64_t addr, uint64_t key,
				   void *context)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_WRITE, &iov, 1, dest, 0, data,
				  addr, key, context,
				  ep->tx_op_flags | FI_REMOTE_CQ_DATA, &desc);
}

static ssize_t swnic_rma_injectdata(struct fid_ep *ep_fid, const void *buf,
				    size_t len, uint64_t data, fi_addr_t dest,
				    uint64_t addr, uint64_t key)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_ep_post_send(ep, SWNIC_OP_WRITE, &iov, 1, dest, 0, data,
				  addr, key, NULL, FI_INJECT | FI_REMOTE_CQ_DATA |
				  SWNIC_OP_NO_COMPLETION, NULL);
}

struct fi_ops_rma swnic_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = swnic_rma_read,
	.readv = swnic_rma_readv,
	.readmsg = swnic_rma_readmsg,
	.write = swnic_rma_write,
	.writev = swnic_rma_writev,
	.writemsg = swnic_rma_writemsg,
	.inject = swnic_rma_inject,
	.writedata = swnic_rma_writedata,
	.injectdata = swnic_rma_injectdata,
};
