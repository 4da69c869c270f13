/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * swnic provider - endpoints and the data path over the kernel's rings
 * (include/uapi/linux/swnic_queue.h, Documentation/datapath.rst).
 *
 * Posting (post.c, the one producer of work requests) writes an entry
 * into the endpoint's mmapped SQ or RQ. A send rings the doorbell (a
 * syscall in SYSCALL mode; in ENGINE mode only when the kernel raised
 * NEED_WAKEUP); a receive only while the kernel says unexpected messages
 * wait (the RQ is lazy: senders take receives from it). Every work request but an inline inject carries a pointer to a
 * struct swnic_op in its context; the kernel answers each with a CQE, so
 * the provider learns when an operation is done and frees its op, wakes
 * counter waiters and applies selective completion itself. An inject
 * holds nothing: the kernel reports it only if it fails (its context
 * then names the endpoint, swnic_inject_handle()).
 * Reading a completion is a ring read in the CQ's progress function: no
 * syscall.
 */
#ifndef SWNIC_PROV_EP_H
#define SWNIC_PROV_EP_H

#include <stdatomic.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "post.h"

struct swnic_cq;
struct swnic_cntr;
struct swnic_cm_conn;
struct swnic_cm_req;
struct swnic_av;

/* Counters an endpoint bumps, by fi_ep_bind flag. */
enum swnic_ep_cntr {
	SWNIC_CNTR_SEND = SWNIC_EP_CNTR_SEND,
	SWNIC_CNTR_RECV = SWNIC_EP_CNTR_RECV,
	SWNIC_CNTR_READ = SWNIC_EP_CNTR_READ,
	SWNIC_CNTR_WRITE = SWNIC_EP_CNTR_WRITE,
	SWNIC_CNTR_REMOTE_READ = SWNIC_EP_CNTR_REMOTE_READ,
	SWNIC_CNTR_REMOTE_WRITE = SWNIC_EP_CNTR_REMOTE_WRITE,
	SWNIC_CNTR_MAX = SWNIC_EP_CNTR_MAX
};

struct swnic_ep {
	struct fid_ep ep_fid;
	struct swnic_domain *domain;
	struct fi_info *info;		/* our copy of what it was opened with */
	enum fi_ep_type type;
	uint64_t caps;
	uint64_t tx_op_flags;		/* defaults for fi_send & co */
	uint64_t rx_op_flags;
	size_t min_multi_recv;
	uint32_t addr_format;

	struct swnic_cq *tx_cq;
	struct swnic_cq *rx_cq;
	bool tx_selective;		/* FI_SELECTIVE_COMPLETION on the tx CQ */
	bool rx_selective;
	struct swnic_cq *own_cq;	/* counters only: tx and rx, discarding */
	/*
	 * The CQ the kernel completes its sends on, from fi_enable: tx_cq,
	 * else (bound FI_RECV only) rx_cq, else own_cq. Where the SQ
	 * entries the kernel leaves are retried from.
	 */
	struct swnic_cq *sq_cq;
	/*
	 * The same for its receives: rx_cq, else (bound FI_TRANSMIT only)
	 * tx_cq, else own_cq. Freeing its slots wakes the engine for the
	 * RQ entries it left (cq.c's progress).
	 */
	struct swnic_cq *rq_cq;
	/* the CQs its counters progress (swnic_cntr_add_cq), from fi_enable */
	struct swnic_cq *cntr_cq[2];
	uint32_t cntr_cq_added;		/* bit 2 * counter + j: cntr_cq[j] added */
	struct swnic_cntr *cntr[SWNIC_CNTR_MAX];
	struct swnic_av *av;
	/* a context of this scalable endpoint (sep.c), or NULL */
	struct swnic_sep *sep;
	int sep_index;			/* its index there */
	struct swnic_stx *stx;		/* bound shared transmit context */
	/*
	 * The shared receive context it is bound to (srx.c), or NULL; an
	 * SRX's own handle (fclass FI_CLASS_SRX_CTX): the SRX itself. A
	 * member's is cleared under its rq_cq's lock (swnic_cq_srx_leave()).
	 */
	struct swnic_srx *srx;
	struct swnic_list srx_node;	/* on its SRX's members, srx->lock */

	struct sockaddr_in addr;	/* port 0 until enabled, unless set */
	pthread_mutex_t enable_lock;	/* serialises swnic_ep_enable() */
	bool enabled;			/* set under enable_lock, once */
	bool engine;			/* ENGINE doorbell mode */
	bool rm_enabled;
	bool fence_used;		/* FI_FENCE posted: progress re-rings */
	int fd;				/* the kernel endpoint */
	/*
	 * FI_AV_AUTH_KEY: the kernel's key index (SQE key_index) of each of
	 * the AV's keys it had when the endpoint was enabled.
	 */
	uint32_t nkeys;
	uint16_t key_index[SWNIC_EP_AUTH_KEYS_MAX];
	struct swnic_uring sq;
	struct swnic_uring rq;

	/*
	 * FI_EP_MSG (cm.c). The connection state and the peer's address are
	 * written by the CM under swnic_cm_lock; the data path reads
	 * cm_state (acquire), then peer.
	 */
	struct swnic_eq *eq;		/* bound EQ: CM events */
	struct swnic_cm_conn *conn;	/* NULL until connect/accept */
	struct swnic_cm_req *connreq;	/* from info->handle, until accept */
	_Atomic int cm_state;		/* enum swnic_cm_state */
	struct sockaddr_in peer;	/* the connected peer's endpoint */

	struct swnic_lock lock;		/* data lock: rings and op pools */
	struct swnic_op_pool tx_pool;
	struct swnic_op_pool rx_pool;
	struct swnic_list cq_node[2];	/* on the tx [0] and rx [1] CQ's list */
};

/* The endpoint of one of @cq's list nodes. */
static inline struct swnic_ep *swnic_ep_of_cq_node(struct swnic_list *node,
						   struct swnic_cq *cq)
{
	struct swnic_ep *ep = swnic_container_of(node, struct swnic_ep,
						 cq_node[0]);

	/* Not ep's tx CQ: it is the rx node, one element further on. */
	if (ep->tx_cq != cq)
		ep = swnic_container_of(node, struct swnic_ep, cq_node[1]);
	return ep;
}

/*
 * Internal operation flag (a bit libfabric 1.17 leaves unused): the
 * operation reports no completion whatever the endpoint's defaults, as
 * fi_inject(3) says of the inject calls.
 */
#define SWNIC_OP_NO_COMPLETION	(1ULL << 62)

/* Provider limits of its own (the kernel's are in the device query). */
#define SWNIC_EP_DEF_SIZE	256

/* ep.c */
int swnic_ep_dest(struct swnic_ep *ep, fi_addr_t fi_addr,
		  struct sockaddr_in *sin, uint16_t *key_index);
bool swnic_ep_wants_completion(const struct swnic_ep *ep, bool tx,
			       uint64_t flags);
int swnic_ep_recv_src(struct swnic_ep *ep, fi_addr_t src, uint64_t flags,
		      struct swnic_rqe *rqe);
int swnic_ep_src_kslot(const struct swnic_ep *ep, uint16_t key_index);

/* cm.c: connection management of FI_EP_MSG endpoints */
enum swnic_cm_state {
	SWNIC_CM_IDLE,
	SWNIC_CM_CONNECTING,	/* fi_connect sent, no answer yet */
	SWNIC_CM_ACCEPTING,	/* fi_accept sent; the peer is known */
	SWNIC_CM_CONNECTED,
	SWNIC_CM_SHUTDOWN,	/* either side shut it down */
};

/* Bytes of connection data fi_connect/accept/reject carry. */
#define SWNIC_CM_DATA_MAX	256

extern struct fi_ops_cm swnic_ep_cm_ops;
int swnic_cm_ep_init(struct swnic_ep *ep, const struct fi_info *info);
void swnic_cm_ep_close(struct swnic_ep *ep);
int swnic_ep_enable(struct swnic_ep *ep);
void swnic_ep_take_from_peer(struct swnic_ep *ep);
int swnic_ep_setname(fid_t fid, void *addr, size_t addrlen);
int swnic_ep_getname(fid_t fid, void *addr, size_t *addrlen);

/* msg.c, rma.c: the data-path ops tables (atomics: stubs.c) */
extern struct fi_ops_msg swnic_msg_ops;
extern struct fi_ops_tagged swnic_tagged_ops;
extern struct fi_ops_rma swnic_rma_ops;
ssize_t swnic_ep_post_send_trig(struct swnic_ep *ep, uint8_t opcode,
				const struct iovec *iov, size_t count,
				fi_addr_t dest, uint64_t tag, uint64_t data,
				uint64_t raddr, uint64_t rkey, void *context,
				uint64_t flags, void **desc,
				const struct swnic_sqe_trigger *trig);
ssize_t swnic_ep_post_send(struct swnic_ep *ep, uint8_t opcode,
			   const struct iovec *iov, size_t count,
			   fi_addr_t dest, uint64_t tag, uint64_t data,
			   uint64_t raddr, uint64_t rkey, void *context,
			   uint64_t flags, void **desc);
ssize_t swnic_ep_post_recv_trig(struct swnic_ep *ep, const struct iovec *iov,
				size_t count, fi_addr_t src, uint64_t tag,
				uint64_t ignore, void *context,
				uint64_t flags, bool tagged, void **desc,
				const struct swnic_sqe_trigger *trig);
ssize_t swnic_atomic_post_trig(struct swnic_ep *ep, uint8_t opcode,
			       const struct fi_msg_atomic *msg,
			       const struct fi_ioc *cmp, size_t cmp_count,
			       struct fi_ioc *res, size_t res_count,
			       uint64_t flags,
			       const struct swnic_sqe_trigger *trig);

/* mr.c: the device memory (FI_HMEM override) descriptors name */
void swnic_desc_hmem(void **desc, size_t count, struct swnic_hmem *hmem);

/* progress.c: the kernel's completions into the provider's CQ */
void swnic_cqe_complete(struct swnic_cq *cq, const struct swnic_cqe *kc,
			const void *inline_data);
int swnic_errno_to_fi(int err);

/* Hooks into cq.c, av.c and cntr.c. */
struct swnic_cq *swnic_cq_of(struct fid *fid);
int swnic_cq_open_discard(struct swnic_domain *dom, size_t size,
			  struct swnic_cq **out);
void swnic_cq_close_discard(struct swnic_cq *cq);
struct swnic_domain *swnic_cq_domain(const struct swnic_cq *cq);
void swnic_cq_hold(struct swnic_cq *cq, int delta);
bool swnic_cq_poll_ready(struct swnic_cq *cq);
bool swnic_cntr_poll_changed(struct swnic_cntr *cntr);
int swnic_cq_kernel_id(struct swnic_cq *cq, uint32_t *id);
void swnic_cq_add_ep(struct swnic_cq *cq, struct swnic_ep *ep);
void swnic_cq_retire_ep(struct swnic_cq *cq, struct swnic_ep *ep);
void swnic_cq_del_ep(struct swnic_cq *cq, struct swnic_ep *ep);
bool swnic_cq_srx_reports(struct swnic_cq *cq, const struct swnic_srx *srx);
void swnic_cq_srx_leave(struct swnic_cq *cq, struct swnic_ep *ep);
int swnic_cq_report(struct swnic_cq *cq, void *context, uint64_t flags,
		    size_t len, void *buf, uint64_t data, uint64_t tag,
		    fi_addr_t src, const struct sockaddr_in *from);
int swnic_cq_write(struct swnic_cq *cq, void *context, uint64_t flags,
		   size_t len, uint64_t data, uint64_t tag, int err);
int swnic_cq_write_locked(struct swnic_cq *cq, void *context, uint64_t flags,
			  size_t len, uint64_t data, uint64_t tag, int err);
int swnic_cq_lock_room(struct swnic_cq *cq);
void swnic_cq_unlock(struct swnic_cq *cq);
int swnic_cq_report_err(struct swnic_cq *cq, void *context, uint64_t flags,
			size_t len, void *buf, uint64_t data, uint64_t tag,
			size_t olen, int err, int prov_errno);
struct swnic_cntr *swnic_cntr_of(struct fid *fid);
struct swnic_ep *swnic_ep_of_fid(struct fid *fid);
struct swnic_ep *swnic_ep_or_ctx_of_fid(struct fid *fid);
int swnic_ep_cancel_op(struct swnic_ep *ep, const struct swnic_op_ref *ref);
/* sep.c: the handle of a scalable endpoint, or NULL */
struct swnic_ep *swnic_sep_handle_of_fid(struct fid *fid);
void swnic_cntr_signal(struct swnic_cntr *cntr);
uint32_t swnic_cntr_kernel_id(const struct swnic_cntr *cntr);
struct swnic_domain *swnic_cntr_domain(const struct swnic_cntr *cntr);

/* trigger.c: FI_TRIGGER and deferred work */
int swnic_trig_from_context(struct swnic_ep *ep, void *context,
			    struct swnic_sqe_trigger *trig);
struct swnic_ep *swnic_ep_checked(struct fid *fid);
void swnic_cntr_bind(struct swnic_cntr *cntr, int delta);
int swnic_cntr_add_cq(struct swnic_cntr *cntr, struct swnic_cq *cq);
void swnic_cntr_del_cq(struct swnic_cntr *cntr, struct swnic_cq *cq);
void swnic_cq_progress_all(struct swnic_cq *cq);
int swnic_cq_wait_fd(struct swnic_cq *cq);
void swnic_cq_stir(struct swnic_cq *cq);
bool swnic_ep_sq_waits(struct swnic_ep *ep);
void swnic_ep_sq_retry(struct swnic_ep *ep);
struct swnic_av *swnic_av_of(struct fid *fid);
struct swnic_domain *swnic_av_domain(const struct swnic_av *av);
int swnic_av_addr(struct swnic_av *av, fi_addr_t fi_addr,
		  struct sockaddr_in *sin, uint32_t *kslot);
uint32_t swnic_av_auth_keys(struct swnic_av *av, uint32_t *keys);
fi_addr_t swnic_av_reverse(struct swnic_av *av, const struct sockaddr_in *sin,
			   int kslot);
uint32_t swnic_av_key_handle(struct swnic_av *av, fi_addr_t h);
void swnic_av_bind_ep(struct swnic_av *av, int delta);
fi_addr_t swnic_av_rx_split(const struct swnic_av *av, fi_addr_t fi_addr,
			    uint32_t *rx_index);

/*
 * sep.c: scalable endpoints and shared transmit contexts. A context of
 * a SEP is a struct swnic_ep of its own (fclass FI_CLASS_TX_CTX or
 * FI_CLASS_RX_CTX) with @sep set; the SEP is one too, never enabled (it
 * has no data path of its own, fi_endpoint(3)).
 */
struct swnic_sep;
struct swnic_stx;
int swnic_sep_ctx_enable(struct swnic_ep *ep, uint16_t *group,
			 uint16_t *port);
void swnic_sep_ctx_close(struct swnic_ep *ep);
struct swnic_stx *swnic_stx_of(struct fid *fid);
int swnic_stx_bind(struct swnic_ep *ep, struct swnic_stx *stx);
void swnic_stx_unbind(struct swnic_stx *stx);
int swnic_ep_new(struct swnic_domain *dom, const struct fi_info *info,
		 size_t fclass, void *context, struct swnic_ep **out);
struct fi_ops *swnic_ep_fi_ops_get(void);

/* srx.c: shared receive contexts */
struct swnic_srx;
bool swnic_ep_is_srx(const struct swnic_ep *ep);
struct swnic_srx *swnic_srx_of(struct fid *fid);
int swnic_srx_bind(struct swnic_ep *ep, struct swnic_srx *srx);
void swnic_srx_unbind(struct swnic_ep *ep);
bool swnic_srx_rq_waits(const struct swnic_srx *srx);
void swnic_srx_doorbell(struct swnic_srx *srx);
int swnic_srx_ep_enable(struct swnic_ep *ep, struct swnic_cq *rx_cq,
			int *srx_fd);
void swnic_srx_forget_cq(struct swnic_cq *cq);
bool swnic_srx_av_differs(struct swnic_srx *srx, struct swnic_av *av);
struct swnic_cq *swnic_srx_cq(struct swnic_ep *h);
bool swnic_srx_msg_only(struct swnic_ep *h);

#endif /* SWNIC_PROV_EP_H */
