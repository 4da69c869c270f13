/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transports the engine drives, behind one interface. send.c hands
 * each validated work request to the transport that reaches its
 * destination address and never knows which one that is: `local`
 * (local.c) is the copy between the endpoints of one host; the wire's UDP
 * transport goes beside it. Each operation resolves the peer itself,
 * checks what the peer accepts (auth key, state), moves the data and
 * returns the poster's outcome: 0, SWNIC_DELIVER_DEFERRED (recv.h) or
 * -errno.
 */
#ifndef _SWNIC_TRANSPORT_H
#define _SWNIC_TRANSPORT_H

#include <linux/types.h>

#include <linux/swnic_queue.h>

struct swnic_device;
struct swnic_ep;

/**
 * struct swnic_transport - one way to reach peers
 * @name: for logs and statistics
 * @max_msg_size: largest message (MTU-bound transports: their payload)
 * @reaches: is @addr a peer this transport reaches from @sdev?
 * @send: a send or tagged send; @kbuf is its inline payload, else NULL
 * @rma_write: an RMA write into the peer's MR; @kbuf as for @send
 * @rma_read: an RMA read from the peer's MR
 * @atomic: an atomic (SWNIC_OP_*ATOMIC) on the peer's MR; @kbuf is its
 *	    inline operand, else NULL (NULL: not offered)
 */
struct swnic_transport {
	const char *name;
	u64 max_msg_size;
	bool (*reaches)(struct swnic_device *sdev, __be32 addr);
	int (*send)(struct swnic_ep *src, const struct swnic_sqe *sqe,
		    const void *kbuf);
	int (*rma_write)(struct swnic_ep *src, const struct swnic_sqe *sqe,
			 const void *kbuf);
	int (*rma_read)(struct swnic_ep *src, const struct swnic_sqe *sqe);
	int (*atomic)(struct swnic_ep *src, const struct swnic_sqe *sqe,
		      const void *kbuf);
};

extern const struct swnic_transport swnic_transport_local;

const struct swnic_transport *swnic_transport_for(struct swnic_device *sdev,
						  __be32 addr);

#endif /* _SWNIC_TRANSPORT_H */
