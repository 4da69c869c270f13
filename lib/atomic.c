// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Atomics (fi_atomic(3)): base, fetch and compare operations on a peer's
 * registered memory, executed by the target's kernel on the MR's pages
 * (SWNIC_OP_*ATOMIC, include/uapi/linux/swnic_queue.h), so the target
 * never has to run. Every operation and datatype of libfabric 1.17 but
 * FI_INT128/FI_UINT128; logical and bitwise operations on integers only,
 * MIN/MAX and the ordered compare-and-swaps not on complex types. A
 * single call carries up to SWNIC_ATOMIC_MAX bytes of elements (the
 * count the valid calls report); results are in the buffer before the
 * completion (delivery complete).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ep.h"
#include "post.h"

#define swnic_ep_from(f) swnic_container_of(f, struct swnic_ep, ep_fid)

/* The kernel's op and datatype numbers are libfabric's. */
static_assert((int)FI_MSWAP == (int)SWNIC_AOP_MSWAP, "fi_op");
static_assert((int)FI_ATOMIC_READ == (int)SWNIC_AOP_ATOMIC_READ, "fi_op");
static_assert((int)FI_LONG_DOUBLE_COMPLEX ==
	      (int)SWNIC_ADT_LONG_DOUBLE_COMPLEX, "fi_datatype");
static_assert((int)FI_FLOAT == (int)SWNIC_ADT_FLOAT, "fi_datatype");
static_assert(sizeof(long double) == 16, "x86-64 long double");

static bool swnic_dt_int(enum fi_datatype dt)
{
	return dt <= FI_UINT64;
}

static bool swnic_dt_complex(enum fi_datatype dt)
{
	return dt == FI_FLOAT_COMPLEX || dt == FI_DOUBLE_COMPLEX ||
	       dt == FI_LONG_DOUBLE_COMPLEX;
}

/* Is @op on @dt an operation of @opcode? As the kernel's table. */
static bool swnic_atomic_ok(uint8_t opcode, enum fi_op op, enum fi_datatype dt)
{
	if ((unsigned int)dt >= SWNIC_ADT_NUM ||
	    (unsigned int)op >= SWNIC_AOP_NUM)
		return false;
	switch (opcode) {
	case SWNIC_OP_ATOMIC:
		if (op > FI_BXOR && op != FI_ATOMIC_WRITE)
			return false;
		break;
	case SWNIC_OP_FETCH_ATOMIC:
		if (op > FI_ATOMIC_WRITE)
			return false;
		break;
	default:
		if (op < FI_CSWAP)
			return false;
	}
	switch (op) {
	case FI_MIN:
	case FI_MAX:
	case FI_CSWAP_LE:
	case FI_CSWAP_LT:
	case FI_CSWAP_GE:
	case FI_CSWAP_GT:
		return !swnic_dt_complex(dt);
	case FI_LOR:
	case FI_LAND:
	case FI_BOR:
	case FI_BAND:
	case FI_LXOR:
	case FI_BXOR:
	case FI_MSWAP:
		return swnic_dt_int(dt);
	default:
		return true;
	}
}

static int swnic_atomic_count(const struct swnic_domain *dom, uint8_t opcode,
			      enum fi_datatype dt, enum fi_op op,
			      size_t *count)
{
	if (!(dom->dev.attr.features & SWNIC_FEAT_ATOMIC) ||
	    !swnic_atomic_ok(opcode, op, dt))
		return -FI_EOPNOTSUPP;
	if (count)
		*count = SWNIC_ATOMIC_MAX / swnic_adt_size(dt);
	return 0;
}

/* fi_query_atomic(3): what the domain's endpoints take. */
int swnic_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		       enum fi_op op, struct fi_atomic_attr *attr,
		       uint64_t flags)
{
	struct swnic_domain *dom = swnic_container_of(domain,
						      struct swnic_domain,
						      domain_fid);
	uint8_t opcode = SWNIC_OP_ATOMIC;
	int ret;

	if (!attr || (flags & ~(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC |
				FI_TAGGED)))
		return -FI_EINVAL;
	if ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC))
		return -FI_EINVAL;
	/* Atomics into tagged receive buffers are not offered. */
	if (flags & FI_TAGGED)
		return -FI_EOPNOTSUPP;
	if (flags & FI_FETCH_ATOMIC)
		opcode = SWNIC_OP_FETCH_ATOMIC;
	else if (flags & FI_COMPARE_ATOMIC)
		opcode = SWNIC_OP_COMPARE_ATOMIC;
	ret = swnic_atomic_count(dom, opcode, datatype, op, &attr->count);
	if (!ret)
		attr->size = swnic_adt_size(datatype);
	return ret;
}

static int swnic_ep_atomic_count(struct swnic_ep *ep, uint8_t opcode,
				 enum fi_datatype dt, enum fi_op op,
				 size_t *count)
{
	if (!count)
		return -FI_EINVAL;
	if (!(ep->caps & FI_ATOMIC))
		return -FI_EOPNOTSUPP;
	return swnic_atomic_count(ep->domain, opcode, dt, op, count);
}

static int swnic_atomic_writevalid(struct fid_ep *ep_fid, enum fi_datatype dt,
				   enum fi_op op, size_t *count)
{
	return swnic_ep_atomic_count(swnic_ep_from(ep_fid), SWNIC_OP_ATOMIC, dt,
				     op, count);
}

static int swnic_atomic_readwritevalid(struct fid_ep *ep_fid,
				       enum fi_datatype dt, enum fi_op op,
				       size_t *count)
{
	return swnic_ep_atomic_count(swnic_ep_from(ep_fid),
				     SWNIC_OP_FETCH_ATOMIC, dt, op, count);
}

static int swnic_atomic_compwritevalid(struct fid_ep *ep_fid,
				       enum fi_datatype dt, enum fi_op op,
				       size_t *count)
{
	return swnic_ep_atomic_count(swnic_ep_from(ep_fid),
				     SWNIC_OP_COMPARE_ATOMIC, dt, op, count);
}

/* Elements in @n iocs, or SIZE_MAX if too many to add. */
static size_t swnic_ioc_count(const struct fi_ioc *ioc, size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		if (ioc[i].count > SIZE_MAX - total)
			return SIZE_MAX;
		total += ioc[i].count;
	}
	return total;
}

static void swnic_ioc_gather(uint8_t *dst, const struct fi_ioc *ioc, size_t n,
			     size_t size)
{
	for (size_t i = 0; i < n; i++) {
		memcpy(dst, ioc[i].addr, ioc[i].count * size);
		dst += ioc[i].count * size;
	}
}

/* The buffers of one atomic, as the application gave them. */
struct swnic_atomic_req {
	uint8_t opcode;
	enum fi_op op;
	enum fi_datatype dt;
	const struct fi_ioc *opnd;
	size_t opnd_count;
	const struct fi_ioc *cmp;
	size_t cmp_count;
	const struct fi_ioc *res;
	size_t res_count;
	fi_addr_t dest;
	uint64_t addr, key;
	size_t rma_count;		/* fi_rma_ioc count, 0: not given */
	void *context;
	uint64_t flags;
	/* Deferred work's condition (trigger.c); else FI_TRIGGER's, if set */
	const struct swnic_sqe_trigger *trig;
};

static ssize_t swnic_atomic_post(struct swnic_ep *ep,
				 const struct swnic_atomic_req *r)
{
	struct swnic_sqe sqe = {
		.opcode = r->opcode,
		.flags = SWNIC_SQE_COMPLETION,
		.raddr = r->addr,
		.rkey = r->key,
	};
	bool compare = r->opcode == SWNIC_OP_COMPARE_ATOMIC;
	bool fetch = r->opcode != SWNIC_OP_ATOMIC;
	bool reading = r->op == FI_ATOMIC_READ;
	bool scatter = fetch && r->res_count > 1;
	const struct swnic_sqe_trigger *trig = r->trig;
	struct swnic_sqe_trigger tc;
	struct swnic_op op = { 0 };
	struct sockaddr_in sin;
	size_t n, size, len;
	uint8_t *bounce = NULL;
	bool copy;
	ssize_t ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & FI_ATOMIC))
		return -FI_EOPNOTSUPP;
	if (r->flags & FI_TAGGED)
		return -FI_EOPNOTSUPP;
	if (!trig && (r->flags & FI_TRIGGER)) {
		/* The context is a struct fi_triggered_context (trigger.c). */
		ret = swnic_trig_from_context(ep, r->context, &tc);
		if (ret)
			return ret;
		trig = &tc;
	}
	/*
	 * A triggered SQE holds its condition where an inline operand would
	 * be, and a compare's values never ride in it: an FI_INJECT operand
	 * that is not inline is copied to a buffer the op owns. FI_INJECT
	 * frees the buffers sent, not the results (fi_atomic(3)): a fetching
	 * atomic takes it too, as the endpoint's default flags may give it.
	 */
	copy = (r->flags & FI_INJECT) && !reading;
	ret = swnic_atomic_count(ep->domain, r->opcode, r->dt, r->op, NULL);
	if (ret)
		return ret;
	if (r->opnd_count > SWNIC_MAX_IOV_PROV ||
	    r->cmp_count > SWNIC_MAX_IOV_PROV ||
	    r->res_count > SWNIC_MAX_IOV_PROV ||
	    (r->opnd_count && !r->opnd) || (r->cmp_count && !r->cmp) ||
	    (r->res_count && !r->res))
		return -FI_EINVAL;
	size = swnic_adt_size(r->dt);
	n = swnic_ioc_count(r->opnd, r->opnd_count);
	if (!n)
		return -FI_EINVAL;
	if (n > SWNIC_ATOMIC_MAX / size)
		return -FI_EMSGSIZE;
	if ((compare && swnic_ioc_count(r->cmp, r->cmp_count) != n) ||
	    (fetch && swnic_ioc_count(r->res, r->res_count) != n) ||
	    (r->rma_count && r->rma_count != n))
		return -FI_EINVAL;
	len = n * size;
	if ((r->flags & FI_INJECT) && len > ep->info->tx_attr->inject_size)
		return -FI_EINVAL;
	ret = swnic_ep_dest(ep, r->dest, &sin, &sqe.key_index);
	if (ret)
		return ret;
	sqe.dest_addr = sin.sin_addr.s_addr;
	sqe.dest_port = ntohs(sin.sin_port);
	sqe.atomic_op = r->op;
	sqe.datatype = r->dt;
	sqe.len = len;
	/* fi_endpoint(3) FI_FENCE: only with the capability (as msg.c). */
	if (r->flags & FI_FENCE) {
		if (!(ep->caps & FI_FENCE))
			return -FI_EINVAL;
		sqe.flags |= SWNIC_SQE_FENCE;
		ep->fence_used = true;
	}

	if (!trig && !reading && !compare && !scatter &&
	    len <= SWNIC_INLINE_MAX &&
	    ((r->flags & FI_INJECT) || r->opnd_count != 1)) {
		/* The operand in the SQE: the caller's buffer is free now. */
		sqe.flags |= SWNIC_SQE_INLINE;
		swnic_ioc_gather(sqe.inline_data, r->opnd, r->opnd_count,
				 size);
	} else if ((!reading && r->opnd_count != 1) || r->cmp_count > 1 ||
		   scatter || copy) {
		/* Gathered (and results scattered at completion). */
		bounce = malloc(3 * len);
		if (!bounce)
			return -FI_ENOMEM;
		if (!reading) {
			swnic_ioc_gather(bounce, r->opnd, r->opnd_count, size);
			sqe.addr = (uintptr_t)bounce;
		}
		if (compare) {
			swnic_ioc_gather(bounce + len, r->cmp, r->cmp_count,
					 size);
			sqe.data = (uintptr_t)(bounce + len);
		}
	} else if (!reading) {
		sqe.addr = (uintptr_t)r->opnd[0].addr;
	}
	if (compare && !sqe.data)
		sqe.data = (uintptr_t)r->cmp[0].addr;
	if (fetch && !scatter) {
		sqe.tag = (uintptr_t)r->res[0].addr;
	} else if (scatter) {
		op.buf = bounce + 2 * len;
		sqe.tag = (uintptr_t)op.buf;
		for (size_t i = 0; i < r->res_count; i++) {
			op.iov[i].iov_base = r->res[i].addr;
			op.iov[i].iov_len = r->res[i].count * size;
		}
		op.iov_count = r->res_count;
	}

	/* An inject's needs no op, as for fi_inject (msg.c). */
	if ((r->flags & SWNIC_OP_NO_COMPLETION) &&
	    (sqe.flags & SWNIC_SQE_INLINE)) {
		sqe.flags &= ~SWNIC_SQE_COMPLETION;
		sqe.context = swnic_inject_handle(ep, true);
		return swnic_post_sq(ep, &sqe, NULL);
	}
	if (trig) {
		sqe.flags |= SWNIC_SQE_TRIGGER;
		memcpy(sqe.inline_data, trig, sizeof(*trig));
	}
	op.context = r->context;
	op.kind = fetch ? SWNIC_CNTR_READ : SWNIC_CNTR_WRITE;
	op.flags = FI_ATOMIC | (fetch ? FI_READ : FI_WRITE);
	if (swnic_ep_wants_completion(ep, true, r->flags) &&
	    !(r->flags & SWNIC_OP_NO_COMPLETION))
		op.flags |= FI_COMPLETION;
	op.bounce = bounce;
	return swnic_post_sq(ep, &sqe, &op);
}

static ssize_t swnic_atomic_write(struct fid_ep *ep_fid, const void *buf,
				  size_t count, void *desc, fi_addr_t dest,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype dt, enum fi_op op, void *ctx)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct swnic_atomic_req r = {
		.opcode = SWNIC_OP_ATOMIC, .op = op, .dt = dt,
		.opnd = &ioc, .opnd_count = 1,
		.dest = dest, .addr = addr, .key = key,
		.context = ctx, .flags = ep->tx_op_flags,
	};

	return swnic_atomic_post(ep, &r);
}

static ssize_t swnic_atomic_writev(struct fid_ep *ep_fid,
				   const struct fi_ioc *iov, void **desc,
				   size_t count, fi_addr_t dest, uint64_t addr,
				   uint64_t key, enum fi_datatype dt,
				   enum fi_op op, void *ctx)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct swnic_atomic_req r = {
		.opcode = SWNIC_OP_ATOMIC, .op = op, .dt = dt,
		.opnd = iov, .opnd_count = count,
		.dest = dest, .addr = addr, .key = key,
		.context = ctx, .flags = ep->tx_op_flags,
	};

	return swnic_atomic_post(ep, &r);
}

/* The fi_msg_atomic part of a request. Return: 0 or -FI_EINVAL. */
static int swnic_atomic_msg(const struct fi_msg_atomic *msg, uint8_t opcode,
			    uint64_t flags, struct swnic_atomic_req *r)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	*r = (struct swnic_atomic_req) {
		.opcode = opcode, .op = msg->op, .dt = msg->datatype,
		.opnd = msg->msg_iov, .opnd_count = msg->iov_count,
		.dest = msg->addr, .addr = msg->rma_iov[0].addr,
		.key = msg->rma_iov[0].key,
		.rma_count = msg->rma_iov[0].count,
		.context = msg->context, .flags = flags,
	};
	return 0;
}

static ssize_t swnic_atomic_writemsg(struct fid_ep *ep_fid,
				     const struct fi_msg_atomic *msg,
				     uint64_t flags)
{
	struct swnic_atomic_req r;
	int ret = swnic_atomic_msg(msg, SWNIC_OP_ATOMIC, flags, &r);

	return ret ?: swnic_atomic_post(swnic_ep_from(ep_fid), &r);
}

static ssize_t swnic_atomic_inject(struct fid_ep *ep_fid, const void *buf,
				   size_t count, fi_addr_t dest, uint64_t addr,
				   uint64_t key, enum fi_datatype dt,
				   enum fi_op op)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct swnic_atomic_req r = {
		.opcode = SWNIC_OP_ATOMIC, .op = op, .dt = dt,
		.opnd = &ioc, .opnd_count = 1,
		.dest = dest, .addr = addr, .key = key,
		.flags = FI_INJECT | SWNIC_OP_NO_COMPLETION,
	};

	return swnic_atomic_post(swnic_ep_from(ep_fid), &r);
}

static ssize_t swnic_atomic_readwrite(struct fid_ep *ep_fid, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t dest,
				      uint64_t addr, uint64_t key,
				      enum fi_datatype dt, enum fi_op op,
				      void *ctx)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct swnic_atomic_req r = {
		.opcode = SWNIC_OP_FETCH_ATOMIC, .op = op, .dt = dt,
		.opnd = &ioc, .opnd_count = 1, .res = &res, .res_count = 1,
		.dest = dest, .addr = addr, .key = key,
		.context = ctx, .flags = ep->tx_op_flags,
	};

	return swnic_atomic_post(ep, &r);
}

static ssize_t swnic_atomic_readwritev(struct fid_ep *ep_fid,
				       const struct fi_ioc *iov, void **desc,
				       size_t count, struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       fi_addr_t dest, uint64_t addr,
				       uint64_t key, enum fi_datatype dt,
				       enum fi_op op, void *ctx)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct swnic_atomic_req r = {
		.opcode = SWNIC_OP_FETCH_ATOMIC, .op = op, .dt = dt,
		.opnd = iov, .opnd_count = count,
		.res = resultv, .res_count = result_count,
		.dest = dest, .addr = addr, .key = key,
		.context = ctx, .flags = ep->tx_op_flags,
	};

	return swnic_atomic_post(ep, &r);
}

static ssize_t swnic_atomic_readwritemsg(struct fid_ep *ep_fid,
					 const struct fi_msg_atomic *msg,
					 struct fi_ioc *resultv,
					 void **result_desc,
					 size_t result_count, uint64_t flags)
{
	struct swnic_atomic_req r;
	int ret = swnic_atomic_msg(msg, SWNIC_OP_FETCH_ATOMIC, flags, &r);

	if (ret)
		return ret;
	r.res = resultv;
	r.res_count = result_count;
	return swnic_atomic_post(swnic_ep_from(ep_fid), &r);
}

static ssize_t swnic_atomic_compwrite(struct fid_ep *ep_fid, const void *buf,
				      size_t count, void *desc,
				      const void *compare, void *compare_desc,
				      void *result, void *result_desc,
				      fi_addr_t dest, uint64_t addr,
				      uint64_t key, enum fi_datatype dt,
				      enum fi_op op, void *ctx)
{
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *)compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct swnic_atomic_req r = {
		.opcode = SWNIC_OP_COMPARE_ATOMIC, .op = op, .dt = dt,
		.opnd = &ioc, .opnd_count = 1, .cmp = &cmp, .cmp_count = 1,
		.res = &res, .res_count = 1,
		.dest = dest, .addr = addr, .key = key,
		.context = ctx, .flags = ep->tx_op_flags,
	};

	return swnic_atomic_post(ep, &r);
}

static ssize_t swnic_atomic_compwritev(struct fid_ep *ep_fid,
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
	struct swnic_ep *ep = swnic_ep_from(ep_fid);
	struct swnic_atomic_req r = {
		.opcode = SWNIC_OP_COMPARE_ATOMIC, .op = op, .dt = dt,
		.opnd = iov, .opnd_count = count,
		.cmp = comparev, .cmp_count = compare_count,
		.res = resultv, .res_count = result_count,
		.dest = dest, .addr = addr, .key = key,
		.context = ctx, .flags = ep->tx_op_flags,
	};

	return swnic_atomic_post(ep, &r);
}

static ssize_t swnic_atomic_compwritemsg(struct fid_ep *ep_fid,
					 const struct fi_msg_atomic *msg,
					 const struct fi_ioc *comparev,
					 void **compare_desc,
					 size_t compare_count,
					 struct fi_ioc *resultv,
					 void **result_desc,
					 size_t result_count, uint64_t flags)
{
	struct swnic_atomic_req r;
	int ret = swnic_atomic_msg(msg, SWNIC_OP_COMPARE_ATOMIC, flags, &r);

	if (ret)
		return ret;
	r.cmp = comparev;
	r.cmp_count = compare_count;
	r.res = resultv;
	r.res_count = result_count;
	return swnic_atomic_post(swnic_ep_from(ep_fid), &r);
}

/**
 * swnic_atomic_post_trig() - post deferred atomic work (trigger.c)
 * @ep: the endpoint
 * @opcode: SWNIC_OP_ATOMIC, _FETCH_ATOMIC or _COMPARE_ATOMIC
 * @msg: the operation, as fi_atomicmsg's
 * @cmp, @cmp_count: COMPARE's compare values
 * @res, @res_count: FETCH's and COMPARE's results
 * @flags: the operation's flags (FI_TRIGGER and the completion flags)
 * @trig: the condition
 */
ssize_t swnic_atomic_post_trig(struct swnic_ep *ep, uint8_t opcode,
			       const struct fi_msg_atomic *msg,
			       const struct fi_ioc *cmp, size_t cmp_count,
			       struct fi_ioc *res, size_t res_count,
			       uint64_t flags,
			       const struct swnic_sqe_trigger *trig)
{
	struct swnic_atomic_req r;
	int ret = swnic_atomic_msg(msg, opcode, flags, &r);

	if (ret)
		return ret;
	r.cmp = cmp;
	r.cmp_count = cmp_count;
	r.res = res;
	r.res_count = res_count;
	r.trig = trig;
	return swnic_atomic_post(ep, &r);
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
	.writevalid = swnic_atomic_writevalid,
	.readwritevalid = swnic_atomic_readwritevalid,
	.compwritevalid = swnic_atomic_compwritevalid,
};
