/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_EP_H
#define _SWNIC_EP_H

#include <linux/bitmap.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <linux/types.h>

#include <linux/swnic.h>
#include <linux/swnic_queue.h>

#include "copy.h"
#include "ring.h"

struct swnic_cntr;
struct swnic_cq;
struct swnic_device;
struct swnic_domain;
struct swnic_service;
struct swnic_trig;

/*
 * A run of consecutive ports reserved for a domain (SWNIC_IOCTL_PORT_BLOCK):
 * the endpoints that join it send from its first port. Referenced by its
 * domain's list until released, and by each endpoint of it until that
 * endpoint's file is released; the last reference (process context)
 * gives the first port back.
 */
struct swnic_pblock {
	struct kref ref;
	struct list_head node;		/* on dom->port_blocks, dom->lock */
	struct swnic_device *sdev;	/* the ports' device (members hold it) */
	u16 base;			/* immutable */
	u16 count;			/* immutable */
	bool dead;			/* released, dom->lock */
	/* ports taken by an endpoint, dom->lock */
	DECLARE_BITMAP(used, SWNIC_PORT_BLOCK_MAX);
};

/* mmap page offsets on an endpoint's fd. */
#define SWNIC_EP_MMAP_SQ	0
#define SWNIC_EP_MMAP_RQ	0x10000		/* in pages */

/* Ports an endpoint gets when it asks for none (per device). */
#define SWNIC_PORT_EPHEMERAL_MIN	32768
#define SWNIC_PORT_EPHEMERAL_MAX	60999
/* Endpoints of one user on a device: a quarter of the ephemeral ports. */
#define SWNIC_PORTS_PER_USER	\
	((SWNIC_PORT_EPHEMERAL_MAX - SWNIC_PORT_EPHEMERAL_MIN + 1) / 4)

/* Bounds of the kernel memory an endpoint may hold for unexpected sends. */
/*
 * What a post allocates in the poster's call (a wire request and its page
 * vector or operands, a triggered op, an in-host RMA's or atomic's bounce
 * buffer), charged to its memory cgroup: at the cgroup's limit, after a
 * few reclaim passes, the post fails (-ENOMEM: an error completion, or
 * the doorbell's) rather than invoke the cgroup's OOM killer. The wire's
 * packets, charged without waiting, took the last of a full cgroup's
 * room; the poster's next post then killed it, and the freed room let
 * its queued send fill the window to the peer for every user of it.
 */
#define SWNIC_POST_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
			 __GFP_NOWARN)

#define SWNIC_UNEXP_MAX_BYTES	(4U << 20)
#define SWNIC_UNEXP_MAX_MSGS	1024

/*
 * An endpoint: a send queue the kernel consumes in the poster's context
 * (doorbell syscall or its domain's engine on the poster's mm), and a
 * receive side others deliver into. Published in the host-wide port table
 * while its fd is open; lookups hold a reference.
 */
struct swnic_ep {
	struct kref ref;
	struct rcu_head rcu;
	struct swnic_domain *dom;	/* holds a domain reference */
	u16 port;			/* immutable; key in the port table */
	__be32 addr;			/* immutable */
	u32 type;			/* immutable: SWNIC_EP_* */
	u8 dscp;			/* immutable: its wire packets' DSCP */
	u32 flags;			/* immutable: SWNIC_EP_F_* */
	/*
	 * The port block it joined, or NULL: set before it is published,
	 * dropped by its file's release (not to be followed after it).
	 */
	struct swnic_pblock *block;
	/*
	 * @port is one of @block's, joined for (not an ephemeral port, which
	 * a dead block's range may give out again): set at creation, cleared
	 * only by an endpoint's creation that fails.
	 */
	bool block_port;
	u16 src_port;			/* immutable: its block's first port */
	struct swnic_cq *tx_cq;		/* immutable, referenced */
	struct swnic_cq *rx_cq;		/* immutable, referenced */
	/* SWNIC_EP_CNTR_*: immutable, referenced, NULL if not counted */
	struct swnic_cntr *cntr[SWNIC_EP_CNTR_MAX];

	/*
	 * Auth keys it holds besides its domain's (SWNIC_IOCTL_EP_AUTH_KEY),
	 * each attached to its service. Only ever added, under dom->lock and
	 * sdev->lock, until the file's release drops them (after the port is
	 * unpublished): @auth_keys[i] is written before @nkeys is raised
	 * (release), so a lockless reader that loads @nkeys (acquire) reads
	 * only keys that were validated. A key index n is @auth_keys[n - 1].
	 */
	u32 nkeys;
	u32 auth_keys[SWNIC_EP_AUTH_KEYS_MAX];
	struct swnic_service *key_svcs[SWNIC_EP_AUTH_KEYS_MAX];

	struct mutex sq_lock;		/* SQ consumption (one poster) */
	bool closing;			/* file released: no more sends */
	struct swnic_ring sq;
	unsigned long *sq_cancelled;	/* SQ slots cancelled, sq_lock */
	/* The triggered SQE being run (trig.c), sq_lock; else NULL */
	struct swnic_trig *trig_running;
	/* Triggered work found sq_lock held: the holder lets it try now. */
	bool sq_contended;

	/*
	 * Receive side: RQ consumption, posted receives, unexpected messages
	 * and every delivery into this endpoint. Taken after a poster's
	 * sq_lock, never the other way round.
	 */
	struct mutex rx_lock;
	/*
	 * The shared receive context it joined (SWNIC_EP_F_SRX_JOIN), or
	 * NULL: immutable, referenced. Its receive side is then the
	 * context's: the context's rx_lock, lists and RQ stand for this
	 * endpoint's (swnic_ep_rx()), and @dead is under that lock.
	 */
	struct swnic_ep *srx;
	/*
	 * A shared receive context: the endpoints that joined it and are
	 * still open, oldest first; a member: its node there. Both under the
	 * context's rx_lock.
	 */
	struct list_head srx_members;
	struct list_head srx_node;
	struct swnic_ring rq;
	struct list_head recvs;		/* untagged posted receives */
	struct list_head trecvs;	/* tagged posted receives */
	/* unexpected messages, oldest first (of any member, for a context) */
	struct list_head unexp;
	u32 unexp_msgs;
	u32 unexp_bytes;
	u32 nrecvs;			/* posted receives, <= rq.entries */
	/* the last receive to leave, kept for the next to be posted */
	struct swnic_recv *recv_spare;
	/*
	 * The RQE at the RQ's head, a multi-receive that took buffered
	 * messages and stopped before the rest (a full CQ, a page to fault
	 * in): it stays in the ring, and this copy, with what it took, is
	 * what the next look at the RQ goes on with (swnic_recv_post()).
	 */
	struct swnic_recv *rq_partial;
	/* finishes the RQ for a wire round (swnic_recv_rq_defer()) */
	struct delayed_work rq_work;
	/*
	 * Whom it takes sends from (SWNIC_IOCTL_EP_PEER), one word read
	 * locklessly: 0 anyone; else SWNIC_EP_PEER_* << 48 | port << 32 |
	 * addr.
	 */
	u64 peer;
	struct swnic_fault_retry rq_retry;	/* rq_work's, across its runs */
	bool dead;			/* fd closed or owner exited: refused */

	struct list_head engine_node;	/* on its domain engine's list */
	bool engine_active;		/* on that list (engine lock) */
	/*
	 * A round runs the operation at the SQ's head (its engine's: @round
	 * is @engine_fault) or a triggered one (trig.c: the operation's
	 * own): memory out of reach, the receiver's or its own, leaves it
	 * for a later round (-SWNIC_EFAULTLATER), counted in *@round,
	 * instead of holding a worker that serves others too (the engine's
	 * other endpoints, every user's triggered work). NULL in the
	 * owner's own call. Under sq_lock.
	 */
	struct swnic_fault_wait *round;
	struct swnic_fault_wait engine_fault;
	/*
	 * The SQ's head left by a target out of resources (RM_ENABLED:
	 * -EAGAIN) or, in a round, by memory out of reach: tried again by
	 * this work after @sq_retry_delay jiffies, doubled up to
	 * SWNIC_SQ_RETRY_MAX while it is left, as a NIC's RNR retry timer
	 * (engine.c). Holds a reference while queued; @sq_retry_delay is
	 * under sq_lock.
	 */
	struct delayed_work sq_retry;
	unsigned long sq_retry_delay;
	/*
	 * The wire's pump round (struct swnic_wnet's @pump_gen) in which a
	 * request of its found no room in its memory cgroup: its later ones
	 * wait for a later round (swnic_peer_pump()). Under the wire's lock.
	 */
	u32 wire_full_gen;

	/* Statistics, under the lock of their side. */
	u64 tx_ops, tx_bytes, tx_errors;
	u64 rx_ops, rx_bytes;
};

/* Is this the kernel's own retry of @ep's SQ head (engine.c)? */
static inline bool swnic_ep_in_sq_retry(const struct swnic_ep *ep)
{
	return current_work() == &ep->sq_retry.work;
}

/*
 * May @ep's operation now be left for a later round, and is this its last
 * try (SWNIC_ROUND_FAULT_TIMEOUT since the first, or no round will come
 * again)? Under sq_lock.
 */
static inline bool swnic_ep_defers(const struct swnic_ep *ep)
{
	return !!ep->round;
}

static inline bool swnic_ep_last_try(const struct swnic_ep *ep)
{
	return ep->round && swnic_fault_last_try(ep->round);
}

/*
 * What its own memory out of reach now makes of @ep's operation, for the
 * copy.c _nowait functions: in a round, -SWNIC_EFAULTLATER (-EFAULT on
 * its last try); in its owner's call 0, which waits a while.
 */
static inline int swnic_ep_later(const struct swnic_ep *ep)
{
	if (!swnic_ep_defers(ep))
		return 0;
	return swnic_ep_last_try(ep) ? -EFAULT : -SWNIC_EFAULTLATER;
}

int swnic_ep_create(struct swnic_domain *dom, void *arg);
int swnic_ep_ioctl_doorbell(struct swnic_ep *ep, void *arg);
int swnic_ep_ioctl_cancel(struct swnic_ep *ep, void *arg);
int swnic_ep_ioctl_peek(struct swnic_ep *ep, void *arg);
int swnic_ep_ioctl_auth_key(struct swnic_ep *ep, void *arg);
int swnic_ep_ioctl_peer(struct swnic_ep *ep, void *arg);
bool swnic_ep_takes_from(const struct swnic_ep *ep, __be32 addr, u16 port);
bool swnic_ep_holds_key(const struct swnic_ep *ep, u32 auth_key);
int swnic_ep_key_refused(const struct swnic_ep *ep);
u16 swnic_ep_key_index(const struct swnic_ep *ep, u32 auth_key);
int swnic_ep_sqe_key(const struct swnic_ep *ep, const struct swnic_sqe *sqe,
		     u32 *auth_key);
struct swnic_ep *swnic_ep_lookup(struct swnic_device *sdev, u16 port);
int swnic_port_block_ioctl(struct swnic_domain *dom, void *arg);
void swnic_port_blocks_release(struct swnic_domain *dom);

/*
 * The source port of @ep's work requests: its block's first port, which
 * stays reserved for the block while @ep's file is open, else its own.
 */
static inline u16 swnic_ep_src_port(const struct swnic_ep *ep)
{
	return ep->src_port ?: ep->port;
}

void swnic_ep_put(struct swnic_ep *ep);

/* Is @ep a shared receive context (never an endpoint that takes traffic)? */
static inline bool swnic_ep_is_srx(const struct swnic_ep *ep)
{
	return ep->flags & SWNIC_EP_F_SRX;
}

/*
 * The holder of @ep's receive side (rx_lock, RQ, posted receives and
 * unexpected messages): its shared receive context, or itself.
 */
static inline struct swnic_ep *swnic_ep_rx(struct swnic_ep *ep)
{
	return ep->srx ?: ep;
}

#endif /* _SWNIC_EP_H */
