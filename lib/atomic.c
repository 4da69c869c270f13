// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Atomics: swnic offers no FI_ATOMIC capability, so fi_getinfo never
 * reports it and fi_query_atomic answers -FI_EOPNOTSUPP. An application
 * that calls an atomic operation anyway gets -FI_ENOSYS, not a crash.
 */
#include <rdma/fi_atomic.h>

#include "ep.h"

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

struct fi_ops_atomic swnic_atomic_ops = {
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
