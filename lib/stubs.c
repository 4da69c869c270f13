// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Operations an object does not support, for the fi_ops_* tables of every
 * object: each only returns the error fi_*(3) gives for it (mostly
 * -FI_ENOSYS). A leaf: it uses libfabric's public headers and its own
 * stubs.h only. Stubs that log a reason stay with their object (ep.c's
 * scalable endpoints and shared contexts, domain.c's poll sets), and so
 * does domain.c's query_collective for now.
 */
#include "stubs.h"

/* ---- fi_ops ------------------------------------------------------------- */

int swnic_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int swnic_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int swnic_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		      void **ops, void *context)
{
	return -FI_ENOSYS;
}

int swnic_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int swnic_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		     void *ops, void *context)
{
	return -FI_ENOSYS;
}

/* ---- fi_ops_ep ---------------------------------------------------------- */

/* Nothing was posted, so nothing can be cancelled. */
ssize_t swnic_no_cancel(fid_t fid, void *context)
{
	return -FI_ENOENT;
}

int swnic_no_setopt(fid_t fid, int level, int optname, const void *optval,
		    size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

int swnic_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		    struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

int swnic_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

ssize_t swnic_no_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

/* ---- fi_ops_cm ------------------------------------------------------------ */

int swnic_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int swnic_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		     size_t paramlen)
{
	return -FI_ENOSYS;
}

int swnic_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int swnic_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int swnic_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		    size_t paramlen)
{
	return -FI_ENOSYS;
}

int swnic_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int swnic_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		  struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

/* ---- fi_ops_av -------------------------------------------------------------- */

int swnic_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		    struct fid_av_set **av_set, void *context)
{
	return -FI_ENOSYS;
}

/* ---- atomics ---------------------------------------------------------------- */

/*
 * swnic offers no FI_ATOMIC capability, so fi_getinfo never reports it and
 * fi_query_atomic answers -FI_EOPNOTSUPP. An application that calls an
 * atomic operation anyway gets -FI_ENOSYS, not a crash.
 */
int swnic_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		       enum fi_op op, struct fi_atomic_attr *attr,
		       uint64_t flags)
{
	return -FI_EOPNOTSUPP;
}

static ssize_t swnic_atomic_write(struct fid_ep *ep, const void *buf,
				  size_t count, void *desc, fi_addr_t dest,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype dt, enum fi_op op, void *ctx)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				   void **desc, size_t count, fi_addr_t dest,
				   uint64_t addr, uint64_t key,
				   enum fi_datatype dt, enum fi_op op, void *ctx)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_writemsg(struct fid_ep *ep,
				     const struct fi_msg_atomic *msg,
				     uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_inject(struct fid_ep *ep, const void *buf,
				   size_t count, fi_addr_t dest, uint64_t addr,
				   uint64_t key, enum fi_datatype dt,
				   enum fi_op op)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_readwrite(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t dest,
				      uint64_t addr, uint64_t key,
				      enum fi_datatype dt, enum fi_op op,
				      void *ctx)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_readwritev(struct fid_ep *ep,
				       const struct fi_ioc *iov, void **desc,
				       size_t count, struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       fi_addr_t dest, uint64_t addr,
				       uint64_t key, enum fi_datatype dt,
				       enum fi_op op, void *ctx)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_readwritemsg(struct fid_ep *ep,
					 const struct fi_msg_atomic *msg,
					 struct fi_ioc *resultv,
					 void **result_desc,
					 size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_compwrite(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc,
				      const void *compare, void *compare_desc,
				      void *result, void *result_desc,
				      fi_addr_t dest, uint64_t addr,
				      uint64_t key, enum fi_datatype dt,
				      enum fi_op op, void *ctx)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_compwritev(struct fid_ep *ep,
				       const struct fi_ioc *iov, void **desc,
				       size_t count,
				       const struct fi_ioc *comparev,
				       void **compare_desc,
				       size_t compare_count,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       fi_addr_t dest, uint64_t addr,
				       uint64_t key, enum fi_datatype dt,
				       enum fi_op op, void *ctx)
{
	return -FI_ENOSYS;
}

static ssize_t swnic_atomic_compwritemsg(struct fid_ep *ep,
					 const struct fi_msg_atomic *msg,
					 const struct fi_ioc *comparev,
					 void **compare_desc,
					 size_t compare_count,
					 struct fi_ioc *resultv,
					 void **result_desc,
					 size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int swnic_atomic_valid(struct fid_ep *ep, enum fi_datatype dt,
			      enum fi_op op, size_t *count)
{
	return -FI_EOPNOTSUPP;
}

struct fi_ops_atomic swnic_no_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = swnic_atomic_write,
	.writev = swnic_atomic_writev,
	.writemsg = swnic_atomic_writemsg,
	.inject = swnic_atomic_inject,
	.readwrite = swnic_atomic_readwrite,
	.readwritev = swnic_atomic_readwritev,
	.readwritemsg = swnic_atomic_readwritemsg,
	.compwrite = swnic_atomic_compwrite,
	.compwritev = swnic_atomic_compwritev,
	.compwritemsg = swnic_atomic_compwritemsg,
	.writevalid = swnic_atomic_valid,
	.readwritevalid = swnic_atomic_valid,
	.compwritevalid = swnic_atomic_valid,
};
