/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test-side view of swnic's data-path rings (include/uapi/linux/swnic_queue.h):
 * create CQs and endpoints on a domain fd, map their rings, post work
 * requests and reap completions, exactly as the ABI describes.
 */
#ifndef SWNIC_TEST_RINGS_H
#define SWNIC_TEST_RINGS_H

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <arpa/inet.h>

#include <linux/swnic.h>
#include <linux/swnic_queue.h>

struct t_ring {
	void *map;
	size_t size;
	_Atomic uint32_t *head, *tail, *flags;
	uint8_t *array;
	uint32_t entries, entry_size;
};

struct t_cq {
	int fd;
	uint32_t id;
	struct t_ring ring;
};

struct t_ep {
	int fd;
	uint16_t port;
	uint32_t addr;
	struct t_ring sq, rq;
};

static inline int t_ring_map(struct t_ring *r, int fd,
			     const struct swnic_ring_info *info)
{
	r->size = info->mmap_size;
	r->map = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      info->mmap_offset);
	if (r->map == MAP_FAILED)
		return -errno;
	r->head = (void *)((char *)r->map + info->head);
	r->tail = (void *)((char *)r->map + info->tail);
	r->flags = (void *)((char *)r->map + info->flags);
	r->array = (uint8_t *)r->map + info->array;
	r->entries = info->entries;
	r->entry_size = info->entry_size;
	return 0;
}

static inline int t_cq_create(int dom, uint32_t entries, struct t_cq *cq)
{
	struct swnic_cq_create c = { .size = sizeof(c), .entries = entries };

	if (ioctl(dom, SWNIC_IOCTL_CQ_CREATE, &c))
		return -errno;
	cq->fd = c.fd;
	cq->id = c.cq_id;
	return t_ring_map(&cq->ring, c.fd, &c.ring);
}

static inline int t_ep_create(int dom, const struct t_cq *tx,
			      const struct t_cq *rx, uint32_t flags,
			      uint16_t port, uint32_t entries, struct t_ep *ep)
{
	struct swnic_ep_create c = {
		.size = sizeof(c), .flags = flags, .type = SWNIC_EP_RDM,
		.tx_cq = tx->id, .rx_cq = rx->id, .port = port,
		.sq_entries = entries, .rq_entries = entries,
	};
	int ret;

	if (ioctl(dom, SWNIC_IOCTL_EP_CREATE, &c))
		return -errno;
	ep->fd = c.fd;
	ep->port = c.port;
	ep->addr = c.addr;
	ret = t_ring_map(&ep->sq, c.fd, &c.sq);
	return ret ? ret : t_ring_map(&ep->rq, c.fd, &c.rq);
}

/* Unmap a CQ's ring and close it: only then is the CQ gone. */
static inline void t_cq_destroy(struct t_cq *cq)
{
	munmap(cq->ring.map, cq->ring.size);
	close(cq->fd);
}

/* Unmap the rings and close: only then is the endpoint (and port) gone. */
static inline void t_ep_destroy(struct t_ep *ep)
{
	if (ep->fd < 0)
		return;		/* destroyed already */
	munmap(ep->sq.map, ep->sq.size);
	munmap(ep->rq.map, ep->rq.size);
	close(ep->fd);
	ep->fd = -1;
}

/* Producer side (SQ, RQ). Return: 0, or -EAGAIN if the ring is full. */
static inline int t_ring_push(struct t_ring *r, const void *entry)
{
	uint32_t tail = atomic_load_explicit(r->tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(r->head, memory_order_acquire);

	if (tail - head >= r->entries)
		return -EAGAIN;
	memcpy(r->array + (size_t)(tail & (r->entries - 1)) * r->entry_size,
	       entry, r->entry_size);
	atomic_store_explicit(r->tail, tail + 1, memory_order_release);
	return 0;
}

/* Consumer side (CQ). Return: 1 with *cqe filled, or 0 if empty. */
static inline int t_cq_pop(struct t_cq *cq, struct swnic_cqe *cqe)
{
	struct t_ring *r = &cq->ring;
	uint32_t head = atomic_load_explicit(r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(r->tail, memory_order_acquire);

	if (head == tail)
		return 0;
	memcpy(cqe, r->array + (size_t)(head & (r->entries - 1)) * r->entry_size,
	       sizeof(*cqe));
	atomic_store_explicit(r->head, head + 1, memory_order_release);
	return 1;
}

static inline int t_doorbell_flags(struct t_ep *ep, uint32_t flags,
				   struct swnic_ep_doorbell *out)
{
	struct swnic_ep_doorbell db = { .size = sizeof(db), .flags = flags };

	if (ioctl(ep->fd, SWNIC_IOCTL_EP_DOORBELL, &db))
		return -errno;
	if (out)
		*out = db;
	return 0;
}

static inline int t_doorbell(struct t_ep *ep, struct swnic_ep_doorbell *out)
{
	return t_doorbell_flags(ep, 0, out);
}

/* Wait (poll on the CQ fd) for one completion; -ETIMEDOUT after @ms. */
static inline int t_cq_wait(struct t_cq *cq, struct swnic_cqe *cqe, int ms)
{
	struct pollfd p = { .fd = cq->fd, .events = POLLIN };

	while (!t_cq_pop(cq, cqe)) {
		int n = poll(&p, 1, ms);

		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/*
 * As t_cq_wait(), for the TX CQ of an RM_ENABLED endpoint @ep: sends a
 * target had no room for (its unexpected buffer full: EAGAIN) stay in the
 * SQ until the next doorbell, which nothing but the poster rings (the
 * provider rings on each CQ read, lib/cq.c). So ring every 10 ms while
 * waiting; -ETIMEDOUT after @ms.
 */
static inline int t_cq_wait_ringing(struct t_ep *ep, struct t_cq *cq,
				    struct swnic_cqe *cqe, int ms)
{
	struct pollfd p = { .fd = cq->fd, .events = POLLIN };

	for (int waited = 0; !t_cq_pop(cq, cqe); waited += 10) {
		int ret = t_doorbell(ep, NULL);

		if (ret)
			return ret;
		if (t_cq_pop(cq, cqe))
			break;
		if (waited >= ms)
			return -ETIMEDOUT;
		if (poll(&p, 1, 10) < 0)
			return -errno;
	}
	return 0;
}

static inline struct swnic_sqe t_send(const void *buf, uint64_t len,
				      const struct t_ep *to, uint64_t ctx)
{
	struct swnic_sqe s = {
		.opcode = SWNIC_OP_SEND, .flags = SWNIC_SQE_COMPLETION,
		.context = ctx, .addr = (uintptr_t)buf, .len = len,
		.dest_addr = to->addr, .dest_port = to->port,
	};
	return s;
}

static inline struct swnic_rqe t_recv(void *buf, uint64_t len, uint64_t ctx)
{
	struct swnic_rqe r = {
		.context = ctx, .addr = (uintptr_t)buf, .len = len,
	};
	return r;
}

/* A multi-receive: released once fewer than @min_free bytes are left. */
static inline struct swnic_rqe t_recv_multi(void *buf, uint64_t len,
					    uint64_t ctx, uint64_t min_free)
{
	struct swnic_rqe r = t_recv(buf, len, ctx);

	r.flags = SWNIC_RQE_MULTI_RECV;
	r.min_free = min_free;
	return r;
}

#endif /* SWNIC_TEST_RINGS_H */
