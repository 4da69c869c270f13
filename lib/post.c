// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ring/post layer: every work request the provider gives the kernel
 * (sends, tagged sends, RMA, receives; msg.c and rma.c build them) is
 * produced here, following include/uapi/linux/swnic_queue.h and
 * Documentation/datapath.rst. Also the mapping of kernel rings (SQ, RQ
 * and the CQ's, cq.c), the pools of operations in flight and the doorbell.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "ep.h"

/* ---- rings ------------------------------------------------------------ */

int swnic_uring_map(struct swnic_uring *r, int fd,
		    const struct swnic_ring_info *info)
{
	uint8_t *base;

	if (!info->entries || (info->entries & (info->entries - 1)) ||
	    info->array >= info->mmap_size)
		return -FI_EINVAL;
	base = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, (off_t)info->mmap_offset);
	if (base == MAP_FAILED)
		return -errno;
	r->map = base;
	r->map_len = info->mmap_size;
	r->head = (_Atomic uint32_t *)(base + info->head);
	r->tail = (_Atomic uint32_t *)(base + info->tail);
	r->flags = (const _Atomic uint32_t *)(base + info->flags);
	r->array = base + info->array;
	r->entries = info->entries;
	r->entry_size = info->entry_size;
	r->local = 0;
	return 0;
}

void swnic_uring_unmap(struct swnic_uring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

/* ---- operations in flight ------------------------------------------------ */

/*
 * Arrays of ops are never given back to the allocator. A closed
 * endpoint's completions may still wait in a CQ's kernel ring - those
 * made before it closed, and its sends on the wire, which complete when
 * the peer answers - naming its ops by address. So its arrays retire
 * here instead, every op's generation moved on, and later pools take
 * them: a completion whose handle carries an older generation is stale
 * and dropped, as fi_endpoint(3) has a closed endpoint's operations
 * discarded, and it never touches memory an endpoint gave back (nor a
 * receive buffer the application freed after closing it). 16 bits of
 * generation: a stale completion would have to wait unread while its
 * array was retired 65536 times to be taken for a live one.
 */
struct swnic_op_array {
	struct swnic_op_array *next;
	struct swnic_op *ops;
	size_t cap;
};

static pthread_mutex_t swnic_op_arrays_lock = PTHREAD_MUTEX_INITIALIZER;
static struct swnic_op_array *swnic_op_arrays;	/* retired */

/* The least retired array of at least @size ops, or a new one. */
static struct swnic_op *swnic_op_array_get(size_t size, size_t *cap)
{
	struct swnic_op_array **pp, **best = NULL, *a;
	struct swnic_op *ops;

	pthread_mutex_lock(&swnic_op_arrays_lock);
	for (pp = &swnic_op_arrays; *pp; pp = &(*pp)->next)
		if ((*pp)->cap >= size && (!best || (*pp)->cap < (*best)->cap))
			best = pp;
	a = best ? *best : NULL;
	if (a)
		*best = a->next;
	pthread_mutex_unlock(&swnic_op_arrays_lock);
	if (a) {
		ops = a->ops;
		*cap = a->cap;
		free(a);
		return ops;
	}
	ops = calloc(size, sizeof(*ops));
	/* The generation takes the address's top bits. */
	if (ops && (uintptr_t)(ops + size) >> SWNIC_OP_GEN_SHIFT) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "op array above 2^%d: %p\n",
			   SWNIC_OP_GEN_SHIFT, (void *)ops);
		free(ops);
		return NULL;
	}
	*cap = size;
	return ops;
}

/* Completions naming any of @n ops at @ops are stale from now on. */
static void swnic_ops_retire(struct swnic_op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		atomic_fetch_add_explicit(&ops[i].gen, 1, memory_order_release);
}

static void swnic_op_array_put(struct swnic_op *ops, size_t cap)
{
	struct swnic_op_array *a = malloc(sizeof(*a));

	swnic_ops_retire(ops, cap);
	if (!a)
		return;		/* kept, unused: never freed */
	a->ops = ops;
	a->cap = cap;
	pthread_mutex_lock(&swnic_op_arrays_lock);
	a->next = swnic_op_arrays;
	swnic_op_arrays = a;
	pthread_mutex_unlock(&swnic_op_arrays_lock);
}

int swnic_op_pool_init(struct swnic_ep *ep, struct swnic_op_pool *pool,
		       size_t size)
{
	pool->ops = swnic_op_array_get(size, &pool->cap);
	if (!pool->ops)
		return -FI_ENOMEM;
	pool->size = size;
	pool->used = 0;
	pool->free = NULL;
	for (size_t i = size; i-- > 0;) {
		struct swnic_op *op = &pool->ops[i];

		op->ep = ep;
		op->context = NULL;
		op->bounce = NULL;
		op->free = true;
		op->next = pool->free;
		pool->free = op;
	}
	return 0;
}

/*
 * @ep closes: its ops' completions are stale from now on. Called under the
 * lock of each CQ that reports them (swnic_cq_retire_ep()), which a read
 * holds from taking a completion's op to its last use of the endpoint.
 */
void swnic_op_pool_retire(struct swnic_op_pool *pool)
{
	if (pool->ops)
		swnic_ops_retire(pool->ops, pool->size);
}

/* @ep closed (its CQs' locks taken since): its ops' completions are stale. */
void swnic_op_pool_fini(struct swnic_op_pool *pool)
{
	if (!pool->ops)
		return;
	for (size_t i = 0; i < pool->size; i++) {
		free(pool->ops[i].bounce);
		pool->ops[i].bounce = NULL;
	}
	swnic_op_array_put(pool->ops, pool->cap);
	pool->ops = NULL;
}

_Thread_local struct swnic_op_ref swnic_post_last;

/* The op a kernel completion names, or NULL if its endpoint closed since. */
struct swnic_op *swnic_op_of_handle(__u64 handle)
{
	struct swnic_op *op;

	op = (struct swnic_op *)(uintptr_t)(handle &
					    ((1ULL << SWNIC_OP_GEN_SHIFT) - 1));
	if (atomic_load_explicit(&op->gen, memory_order_acquire) !=
	    (uint16_t)(handle >> SWNIC_OP_GEN_SHIFT))
		return NULL;
	return op;
}

/* The context of an inline inject of @ep (post.h). */
__u64 swnic_inject_handle(struct swnic_ep *ep, bool atomic)
{
	return swnic_op_handle(&ep->tx_pool.ops[0]) | SWNIC_INJECT_HANDLE |
	       (atomic ? SWNIC_INJECT_ATOMIC : 0);
}

/* Caller holds ep->lock. NULL when every op is in flight. */
struct swnic_op *swnic_op_get(struct swnic_ep *ep, struct swnic_op_pool *pool)
{
	struct swnic_op *op = pool->free;

	if (!op)
		return NULL;
	pool->free = op->next;
	pool->used++;
	op->use++;
	op->free = false;
	op->bounce = NULL;
	op->iov_count = 0;
	op->hmem.iface = FI_HMEM_SYSTEM;
	op->multi_recv = false;
	op->buf = NULL;
	return op;
}

void swnic_op_put(struct swnic_op_pool *pool, struct swnic_op *op)
{
	free(op->bounce);
	op->bounce = NULL;
	op->free = true;
	op->next = pool->free;
	pool->free = op;
	pool->used--;
}

/* Copy what a post says of its operation into @op, fresh from the pool. */
static void swnic_op_fill(struct swnic_op *op, const struct swnic_op *tmpl)
{
	op->context = tmpl->context;
	op->flags = tmpl->flags;
	op->kind = tmpl->kind;
	op->multi_recv = tmpl->multi_recv;
	op->bounce = tmpl->bounce;
	op->buf = tmpl->buf;
	op->iov_count = tmpl->iov_count;
	memcpy(op->iov, tmpl->iov, tmpl->iov_count * sizeof(*op->iov));
	op->hmem = tmpl->hmem;
}

/* ---- doorbells ------------------------------------------------------------- */

static int swnic_ep_doorbell_flags(struct swnic_ep *ep, uint32_t flags)
{
	struct swnic_ep_doorbell db = { .size = sizeof(db), .flags = flags };

	if (ioctl(ep->fd, SWNIC_IOCTL_EP_DOORBELL, &db)) {
		SWNIC_WARN(FI_LOG_EP_DATA, "doorbell: %s\n", strerror(errno));
		return errno == EPIPE ? -FI_EIO : -errno;
	}
	return 0;
}

int swnic_ep_doorbell(struct swnic_ep *ep)
{
	return swnic_ep_doorbell_flags(ep, 0);
}

/*
 * Does the kernel ask for a doorbell in @r's flags word? The tail store
 * before the flag load: the full barrier pairs with the kernel's (it sets
 * the flag, then looks at the ring once more).
 */
static bool swnic_uring_need_wakeup(const struct swnic_uring *r)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(r->flags, memory_order_relaxed) &
	       SWNIC_RING_F_NEED_WAKEUP;
}

/* ---- production ------------------------------------------------------------- */

/*
 * Produce @e into @r (ep->sq or ep->rq; ep->lock held) and ring the
 * doorbell if the kernel needs one:
 *  - a lazy RQ (SWNIC_RING_F_LAZY) is taken by senders without a
 *    doorbell, so it is rung only on the RQ's NEED_WAKEUP (unexpected
 *    messages wait for this receive) or when @force (a claim, which
 *    completes at once, found or not);
 *  - otherwise (SQ, eager RQ) always in SYSCALL mode, and in ENGINE mode
 *    only when the idle engine raised NEED_WAKEUP in the SQ's flags word.
 * A full ring is given one doorbell to drain (the kernel may have stopped
 * at a full CQ that has room now). Return: 0 or -FI_EAGAIN.
 */
static int swnic_ring_produce(struct swnic_ep *ep, struct swnic_uring *r,
			      const void *e, bool force)
{
	bool lazy = r == &ep->rq &&
		    (atomic_load_explicit(r->flags, memory_order_relaxed) &
		     SWNIC_RING_F_LAZY);
	uint32_t head = atomic_load_explicit(r->head, memory_order_acquire);
	bool wake;

	/* Reserve a slot. */
	if (r->local - head >= r->entries) {
		swnic_ep_doorbell(ep);
		head = atomic_load_explicit(r->head, memory_order_acquire);
		if (r->local - head >= r->entries)
			return -FI_EAGAIN;
	}
	/* Fill it, then publish the tail: the entry before the index. */
	memcpy(swnic_uring_slot(r, r->local), e, r->entry_size);
	r->local++;
	atomic_store_explicit(r->tail, r->local, memory_order_release);

	if (lazy) {
		wake = swnic_uring_need_wakeup(r) || force;
	} else {
		wake = !ep->engine || swnic_uring_need_wakeup(&ep->sq);
	}
	/*
	 * Rung for an SQE: a lazy RQ's receives may wait for the sender that
	 * takes them (SWNIC_DB_SQ), rather than for a lock its delivery holds.
	 */
	if (wake)
		swnic_ep_doorbell_flags(ep, r == &ep->sq &&
				       (ep->domain->dev.attr.features &
					SWNIC_FEAT_DB_SQ) ? SWNIC_DB_SQ : 0);
	if (r == &ep->sq)
		swnic_ep_sq_retry(ep);
	return 0;
}

/*
 * Does @ep's SQ hold entries the kernel left (a target out of resources, a
 * fence, the engine not there yet) that only progress's doorbells move on,
 * the endpoint relying on them?
 */
bool swnic_ep_sq_waits(struct swnic_ep *ep)
{
	return (ep->rm_enabled || ep->fence_used) &&
	       ep->sq.local != atomic_load(ep->sq.head);
}

/* Entries of swnic_ep_sq_waits(): its CQ's reads must not skip progress. */
void swnic_ep_sq_retry(struct swnic_ep *ep)
{
	if (swnic_ep_sq_waits(ep))
		swnic_cq_stir(ep->sq_cq);
}

/* One post: an op from @pool if @tmpl, the entry, the doorbell. */
static int swnic_post(struct swnic_ep *ep, struct swnic_uring *r,
		      struct swnic_op_pool *pool, void *entry,
		      __u64 *entry_context, const struct swnic_op *tmpl,
		      bool force)
{
	struct swnic_op *op = NULL;
	int ret;

	swnic_lock_acquire(&ep->lock);
	if (tmpl) {
		op = swnic_op_get(ep, pool);
		if (!op) {
			swnic_lock_release(&ep->lock);
			free(tmpl->bounce);
			return -FI_EAGAIN;
		}
		swnic_op_fill(op, tmpl);
		*entry_context = swnic_op_handle(op);
	}
	ret = swnic_ring_produce(ep, r, entry, force);
	if (ret && op)
		swnic_op_put(pool, op);
	else if (op)
		swnic_post_last = (struct swnic_op_ref){ *entry_context,
							  op->use };
	swnic_lock_release(&ep->lock);
	return ret;
}

int swnic_post_sq(struct swnic_ep *ep, struct swnic_sqe *sqe,
		  const struct swnic_op *op)
{
	return swnic_post(ep, &ep->sq, &ep->tx_pool, sqe, &sqe->context, op,
			  false);
}

int swnic_post_rq(struct swnic_ep *ep, struct swnic_rqe *rqe,
		  const struct swnic_op *op)
{
	return swnic_post(ep, &ep->rq, &ep->rx_pool, rqe, &rqe->context, op,
			  rqe->flags & SWNIC_RQE_CLAIM);
}

/*
 * A triggered receive (SWNIC_IOCTL_TRIG_RECV): an op from the RX pool, as
 * swnic_post_rq's, but handed to the kernel with its condition instead of
 * through the RQ. Return: 0, -FI_EAGAIN (no op, the receive CQ is full or
 * too much triggered work waits), -FI_EINVAL (a counter closed meanwhile)
 * or the kernel's error.
 */
int swnic_post_rq_trig(struct swnic_ep *ep, struct swnic_rqe *rqe,
		       const struct swnic_op *tmpl,
		       const struct swnic_sqe_trigger *trig)
{
	struct swnic_trig_recv tr = {
		.size = sizeof(tr),
		.trig = *trig,
	};
	struct swnic_op *op;
	int ret = 0;

	swnic_lock_acquire(&ep->lock);
	op = swnic_op_get(ep, &ep->rx_pool);
	if (!op) {
		swnic_lock_release(&ep->lock);
		free(tmpl->bounce);
		return -FI_EAGAIN;
	}
	swnic_op_fill(op, tmpl);
	rqe->context = swnic_op_handle(op);
	tr.rqe = *rqe;
	if (ioctl(ep->fd, SWNIC_IOCTL_TRIG_RECV, &tr)) {
		int err = errno;

		ret = err == ENOENT ? -FI_EINVAL :
		      err == ENOSPC || err == EAGAIN ? -FI_EAGAIN : -err;
		/* The op owns the bounce buffer now. */
		swnic_op_put(&ep->rx_pool, op);
	} else {
		swnic_post_last = (struct swnic_op_ref){ rqe->context,
							  op->use };
	}
	swnic_lock_release(&ep->lock);
	return ret;
}
