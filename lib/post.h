/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * swnic provider - the ring/post layer (post.c): the one place that
 * produces work requests into an endpoint's kernel rings.
 *
 * A post takes an op from the endpoint's pool (none for an inline inject),
 * reserves a slot in the SQ or RQ (a full ring gets one doorbell to
 * drain), fills the entry, publishes the tail with a release store and
 * rings the doorbell as include/uapi/linux/swnic_queue.h asks: always in
 * SYSCALL mode, only on the SQ's NEED_WAKEUP in ENGINE mode, and for a
 * lazy RQ only on the RQ's NEED_WAKEUP or for a claim. The mapping of
 * kernel rings (also the CQ's, cq.c) and the op pools live here too.
 */
#ifndef SWNIC_PROV_POST_H
#define SWNIC_PROV_POST_H

#include <stdatomic.h>

#include <linux/swnic_queue.h>

#include "swnic.h"

struct swnic_ep;

/* iov entries per operation (the kernel's max_iov is the same). */
#define SWNIC_MAX_IOV_PROV	4

/* A mapped kernel ring (user side of the protocol). */
struct swnic_uring {
	void *map;
	size_t map_len;
	_Atomic uint32_t *head;
	_Atomic uint32_t *tail;
	const _Atomic uint32_t *flags;
	uint8_t *array;
	uint32_t entries;
	uint32_t entry_size;
	uint32_t local;		/* our index: tail (SQ/RQ) or head (CQ) */
};

static inline void *swnic_uring_slot(struct swnic_uring *r, uint32_t idx)
{
	return r->array + (size_t)(idx & (r->entries - 1)) * r->entry_size;
}

/* Device memory an operation's buffers are in (FI_HMEM_SYSTEM: none). */
struct swnic_hmem {
	enum fi_hmem_iface iface;
	uint64_t device;
};

/*
 * One operation in flight in the kernel. The kernel knows it by its
 * handle (swnic_op_handle()): its address and, in the top bits, its
 * generation, which changes when its endpoint closes - a completion still
 * naming it then is stale (swnic_op_of_handle()).
 */
struct swnic_op {
	_Atomic uint16_t gen;
	struct swnic_ep *ep;
	void *context;			/* the application's */
	uint64_t flags;			/* FI_* completion flags + FI_COMPLETION */
	uint8_t kind;			/* SWNIC_CNTR_* it counts as */
	bool free;			/* on the free list */
	bool multi_recv;
	void *bounce;			/* gathered/scattered copy, or NULL */
	struct iovec iov[SWNIC_MAX_IOV_PROV];	/* recv, read: where to scatter */
	size_t iov_count;
	struct swnic_hmem hmem;		/* scatter through the HMEM override */
	void *buf;			/* recv: the (first) buffer */
	uint64_t use;			/* how often the pool handed it out */
	struct swnic_op *next;		/* free list */
};

struct swnic_op_pool {
	struct swnic_op *ops;
	struct swnic_op *free;
	size_t size;
	size_t cap;			/* of @ops: at least @size */
	size_t used;
};

#define SWNIC_OP_GEN_SHIFT	48

static inline __u64 swnic_op_handle(const struct swnic_op *op)
{
	return (uintptr_t)op |
	       (__u64)atomic_load_explicit(&op->gen, memory_order_relaxed)
	       << SWNIC_OP_GEN_SHIFT;
}

struct swnic_op *swnic_op_of_handle(__u64 handle);

/*
 * One use of an op: its handle and the use it was handed out for. Deferred
 * work (trigger.c) is named by the op its post took, not by its context,
 * which other operations may share (and an op is reused once done).
 */
struct swnic_op_ref {
	__u64 handle;			/* 0: none */
	uint64_t use;
};

/* The op the calling thread's last post of an op took. */
extern _Thread_local struct swnic_op_ref swnic_post_last;

/*
 * An inline inject holds no op, yet the completion the kernel writes if
 * it fails must find its endpoint (its TX CQ, its counter): its SQE
 * carries the handle of the first op of the endpoint's TX pool - whose
 * generation says whether the endpoint closed since - with
 * SWNIC_INJECT_HANDLE set (an op's address is never odd), and
 * SWNIC_INJECT_ATOMIC for an atomic's (the kernel reports those as RMA
 * writes).
 */
#define SWNIC_INJECT_HANDLE	1ULL
#define SWNIC_INJECT_ATOMIC	2ULL
#define SWNIC_INJECT_BITS	(SWNIC_INJECT_HANDLE | SWNIC_INJECT_ATOMIC)

_Static_assert(_Alignof(struct swnic_op) > SWNIC_INJECT_BITS,
	       "an op's handle has no room for the inject bits");

__u64 swnic_inject_handle(struct swnic_ep *ep, bool atomic);

int swnic_uring_map(struct swnic_uring *r, int fd,
		    const struct swnic_ring_info *info);
void swnic_uring_unmap(struct swnic_uring *r);

int swnic_op_pool_init(struct swnic_ep *ep, struct swnic_op_pool *pool,
		       size_t size);
void swnic_op_pool_retire(struct swnic_op_pool *pool);
void swnic_op_pool_fini(struct swnic_op_pool *pool);
struct swnic_op *swnic_op_get(struct swnic_ep *ep, struct swnic_op_pool *pool);
void swnic_op_put(struct swnic_op_pool *pool, struct swnic_op *op);

int swnic_ep_doorbell(struct swnic_ep *ep);

/*
 * Post one work request: @op (a template: context, flags, kind, bounce,
 * receive buffers) is copied into an op of the endpoint's pool whose
 * address becomes the entry's context; NULL posts the entry alone (an
 * inline inject, whose context is swnic_inject_handle()'s). Takes
 * ep->lock. The post owns @op->bounce: it is freed if the post fails.
 * Return: 0 or -FI_EAGAIN (no op, or the ring is full).
 */
int swnic_post_sq(struct swnic_ep *ep, struct swnic_sqe *sqe,
		  const struct swnic_op *op);
int swnic_post_rq(struct swnic_ep *ep, struct swnic_rqe *rqe,
		  const struct swnic_op *op);
int swnic_post_rq_trig(struct swnic_ep *ep, struct swnic_rqe *rqe,
		       const struct swnic_op *op,
		       const struct swnic_sqe_trigger *trig);

#endif /* SWNIC_PROV_POST_H */
