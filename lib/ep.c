// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Endpoints (fi_endpoint(3)): binding to CQs, counters and an AV, enabling
 * (the kernel endpoint and its rings), names, options, and the helpers
 * the operations of msg.c and rma.c share (destination, completion
 * choice); those post through post.c. Every kind is a kernel endpoint;
 * an FI_EP_MSG endpoint also has a connection, which cm.c manages and
 * which gives its sends their destination. Scalable endpoints and shared
 * transmit contexts are sep.c's; their contexts are endpoints of this
 * file with a few hooks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ep.h"

/*
 * The sockaddr of @fi_addr, through the bound AV; a MSG endpoint's is its
 * peer's (fi_msg(3): the address is ignored), once connected.
 */
int swnic_ep_dest(struct swnic_ep *ep, fi_addr_t fi_addr,
		  struct sockaddr_in *sin, uint16_t *key_index)
{
	uint32_t kslot = 0;
	int state, ret;

	if (ep->type == FI_EP_MSG) {
		state = atomic_load_explicit(&ep->cm_state,
					     memory_order_acquire);
		if (state != SWNIC_CM_ACCEPTING && state != SWNIC_CM_CONNECTED)
			return -FI_ENOTCONN;
		*sin = ep->peer;
		return 0;
	}
	if (!ep->av)
		return -FI_ENOAV;
	ret = swnic_av_addr(ep->av, fi_addr, sin, &kslot);
	if (ret || !key_index)
		return ret;
	/*
	 * An address inserted with an auth key (FI_AV_AUTH_KEY) is reached
	 * with that key, which the endpoint must have taken when enabled
	 * (later keys do not propagate, fi_av(3)). 0: the domain's.
	 */
	if (kslot > ep->nkeys) {
		SWNIC_WARN(FI_LOG_EP_DATA,
			   "auth key %u of the AV came after fi_enable\n",
			   kslot - 1);
		return -FI_EINVAL;
	}
	*key_index = kslot ? ep->key_index[kslot - 1] : 0;
	return 0;
}

/*
 * FI_AV_AUTH_KEY: give the kernel endpoint the AV's keys. Each is the
 * kernel's decision (the caller's membership of the key's service).
 */
static int swnic_ep_take_av_keys(struct swnic_ep *ep)
{
	uint32_t keys[SWNIC_EP_AUTH_KEYS_MAX], i, n;
	struct swnic_ep_auth_key k = { .size = sizeof(k) };

	n = swnic_av_auth_keys(ep->av, keys);
	for (i = 0; i < n; i++) {
		k.auth_key = keys[i];
		if (ioctl(ep->fd, SWNIC_IOCTL_EP_AUTH_KEY, &k)) {
			int err = errno;

			SWNIC_WARN(FI_LOG_EP_CTRL, "auth key %u: %s\n",
				   keys[i], strerror(err));
			return err == EPERM || err == ENOKEY ||
			       err == EKEYREVOKED ? -FI_EACCES : -err;
		}
		ep->key_index[i] = (uint16_t)k.index;
	}
	ep->nkeys = n;
	return 0;
}

/*
 * Whether the kernel says which key a message came with: on an
 * FI_AV_AUTH_KEY endpoint, completions and directed receives then name
 * (address, key) pairs, as the AV's entries do.
 */
static bool swnic_ep_recv_keys(const struct swnic_ep *ep)
{
	return ep->domain->av_auth_key &&
	       (ep->domain->dev.attr.features & SWNIC_FEAT_RECV_KEY);
}

/*
 * The AV key slot (0: no key) of the kernel's @key_index on a received
 * message, or -1 if it is not known (any key of the source will do).
 */
int swnic_ep_src_kslot(const struct swnic_ep *ep, uint16_t key_index)
{
	uint32_t i;

	if (!swnic_ep_recv_keys(ep))
		return -1;
	for (i = 0; i < ep->nkeys; i++)
		if (ep->key_index[i] == key_index)
			return (int)i + 1;
	/* A key the endpoint holds but its AV does not name: no entry. */
	return key_index ? SWNIC_EP_AUTH_KEYS_MAX + 1 : 0;
}

/*
 * A directed receive's source (FI_DIRECTED_RECV): an address of the AV,
 * which on an FI_AV_AUTH_KEY endpoint also selects the key (an address
 * inserted without one: the domain's), or with FI_AUTH_KEY an auth key
 * handle: any address, that key.
 */
int swnic_ep_recv_src(struct swnic_ep *ep, fi_addr_t src, uint64_t flags,
		      struct swnic_rqe *rqe)
{
	struct sockaddr_in sin;
	uint16_t key_index = 0;
	int ret;

	/* An SRX of connected endpoints only: as on those, no source. */
	if (swnic_ep_is_srx(ep) && !ep->av && swnic_srx_msg_only(ep))
		return 0;
#if SWNIC_FI_HAVE_2
	if (flags & FI_AUTH_KEY) {
		uint32_t kslot;

		if (!swnic_ep_recv_keys(ep) || !ep->av)
			return -FI_EINVAL;
		kslot = swnic_av_key_handle(ep->av, src);
		if (!kslot || kslot > ep->nkeys)
			return -FI_EINVAL;
		rqe->flags |= SWNIC_RQE_KEY;
		rqe->key_index = ep->key_index[kslot - 1];
		return 0;
	}
#endif
	/* A scalable endpoint sends from its address, whatever context. */
	if (ep->av) {
		uint32_t rx_index;

		src = swnic_av_rx_split(ep->av, src, &rx_index);
	}
	ret = swnic_ep_dest(ep, src, &sin, &key_index);
	if (ret)
		return ret;
	rqe->flags |= SWNIC_RQE_DIRECTED;
	rqe->src_addr = sin.sin_addr.s_addr;
	rqe->src_port = ntohs(sin.sin_port);
	if (ep->type != FI_EP_MSG && swnic_ep_recv_keys(ep)) {
		rqe->flags |= SWNIC_RQE_KEY;
		rqe->key_index = key_index;
	}
	return 0;
}

/* Does an operation with @flags report a completion (fi_cq(3))? */
bool swnic_ep_wants_completion(const struct swnic_ep *ep, bool tx,
			       uint64_t flags)
{
	if (tx ? !ep->tx_selective : !ep->rx_selective)
		return true;
	return flags & FI_COMPLETION;
}

/* ---- fi_ops --------------------------------------------------------------- */

static struct swnic_ep *swnic_ep_of(struct fid *fid)
{
	return swnic_container_of(fid, struct swnic_ep, ep_fid.fid);
}

static struct fi_ops swnic_ep_fi_ops;

/* @fid as a swnic endpoint, or NULL if it is none. */
struct swnic_ep *swnic_ep_checked(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EP || fid->ops != &swnic_ep_fi_ops)
		return NULL;
	return swnic_ep_of(fid);
}

_Static_assert(2 * SWNIC_CNTR_MAX <= 32, "cntr_cq_added has a bit for each");

/* Take back the CQs swnic_ep_add_cntr_cqs() gave @ep's counters. */
static void swnic_ep_del_cntr_cqs(struct swnic_ep *ep)
{
	for (int i = 0; i < SWNIC_CNTR_MAX; i++)
		for (int j = 0; j < 2; j++)
			if (ep->cntr_cq_added & (1U << (2 * i + j)))
				swnic_cntr_del_cq(ep->cntr[i], ep->cntr_cq[j]);
	ep->cntr_cq_added = 0;
}

/*
 * Counters progress the CQs their completions arrive on: @ep's counters
 * progress @tx and @rx from now on. Each add that took is recorded, so
 * that only those are taken back (one refused must not take another
 * endpoint's reference at close). Return: 0, or -FI_ENOMEM and none.
 */
static int swnic_ep_add_cntr_cqs(struct swnic_ep *ep, struct swnic_cq *tx,
				 struct swnic_cq *rx)
{
	int ret;

	ep->cntr_cq[0] = tx;
	ep->cntr_cq[1] = rx;
	for (int i = 0; i < SWNIC_CNTR_MAX; i++) {
		for (int j = 0; j < 2 && ep->cntr[i]; j++) {
			ret = swnic_cntr_add_cq(ep->cntr[i], ep->cntr_cq[j]);
			if (ret) {
				swnic_ep_del_cntr_cqs(ep);
				return ret;
			}
			ep->cntr_cq_added |= 1U << (2 * i + j);
		}
	}
	return 0;
}

static int swnic_ep_close(struct fid *fid)
{
	struct swnic_ep *ep = swnic_ep_of(fid);

	/* Before anything goes: its CQs may be read meanwhile. */
	if (ep->tx_cq)
		swnic_cq_retire_ep(ep->tx_cq, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		swnic_cq_retire_ep(ep->rx_cq, ep);
	if (ep->sep)
		swnic_sep_ctx_close(ep);
	if (ep->stx)
		swnic_stx_unbind(ep->stx);
	if (ep->srx && !swnic_ep_is_srx(ep))
		swnic_srx_unbind(ep);
	if (ep->type == FI_EP_MSG)
		swnic_cm_ep_close(ep);
	if (ep->eq)
		swnic_eq_bind_put(ep->eq);
	if (ep->tx_cq)
		swnic_cq_del_ep(ep->tx_cq, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		swnic_cq_del_ep(ep->rx_cq, ep);
	for (int i = 0; i < SWNIC_CNTR_MAX; i++)
		if (ep->cntr[i])
			swnic_cntr_bind(ep->cntr[i], -1);
	if (ep->av)
		swnic_av_bind_ep(ep->av, -1);
	if (ep->enabled) {
		swnic_uring_unmap(&ep->sq);
		swnic_uring_unmap(&ep->rq);
		close(ep->fd);
	}
	/*
	 * Its counters stop progressing its CQs, which may close after it
	 * (before the counters) - or, its own, now.
	 */
	swnic_ep_del_cntr_cqs(ep);
	if (ep->own_cq)
		swnic_cq_close_discard(ep->own_cq);
	swnic_op_pool_fini(&ep->tx_pool);
	swnic_op_pool_fini(&ep->rx_pool);
	swnic_lock_destroy(&ep->lock);
	pthread_mutex_destroy(&ep->enable_lock);
	swnic_domain_child(ep->domain, SWNIC_CHILD_EP, -1);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int swnic_ep_bind_cq(struct swnic_ep *ep, struct swnic_cq *cq,
			    uint64_t flags)
{
	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EINVAL;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL;
	/*
	 * Bound already for the other direction (fi_endpoint(3) allows
	 * separate calls): on the CQ's list once, by the node its role now
	 * names (ep->cq_node[]), so it leaves and comes back.
	 */
	if (ep->tx_cq == cq || ep->rx_cq == cq)
		swnic_cq_del_ep(cq, ep);
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	swnic_cq_add_ep(cq, ep);
	return 0;
}

static int swnic_ep_bind_cntr(struct swnic_ep *ep, struct swnic_cntr *cntr,
			      uint64_t flags)
{
	static const uint64_t kinds[SWNIC_CNTR_MAX] = {
		[SWNIC_CNTR_SEND] = FI_SEND,
		[SWNIC_CNTR_RECV] = FI_RECV,
		[SWNIC_CNTR_READ] = FI_READ,
		[SWNIC_CNTR_WRITE] = FI_WRITE,
		[SWNIC_CNTR_REMOTE_READ] = FI_REMOTE_READ,
		[SWNIC_CNTR_REMOTE_WRITE] = FI_REMOTE_WRITE,
	};

	if (flags & ~(FI_SEND | FI_RECV | FI_READ | FI_WRITE |
		      FI_REMOTE_READ | FI_REMOTE_WRITE) || !flags)
		return -FI_EBADFLAGS;
	/* fi_endpoint(3): counting RMA at the target needs FI_RMA_EVENT. */
	if ((flags & (FI_REMOTE_READ | FI_REMOTE_WRITE)) &&
	    !(ep->caps & FI_RMA_EVENT)) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "FI_REMOTE_READ/WRITE counters need an endpoint with FI_RMA_EVENT\n");
		return -FI_EINVAL;
	}
	for (int i = 0; i < SWNIC_CNTR_MAX; i++) {
		if (!(flags & kinds[i]))
			continue;
		if (ep->cntr[i])
			return -FI_EINVAL;
	}
	for (int i = 0; i < SWNIC_CNTR_MAX; i++) {
		if (flags & kinds[i]) {
			ep->cntr[i] = cntr;
			swnic_cntr_bind(cntr, 1);
		}
	}
	return 0;
}

static int swnic_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_of(fid);
	struct swnic_cntr *cntr;
	struct swnic_srx *srx;
	struct swnic_stx *stx;
	struct swnic_cq *cq;
	struct swnic_av *av;
	struct swnic_eq *eq;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->enabled) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "bind after fi_enable\n");
		return -FI_EOPBADSTATE;
	}
	/*
	 * fi_endpoint(3): CQs, counters, AVs and shared contexts bound to an
	 * endpoint are of its domain (an EQ: of its fabric). Another's would
	 * be named to the kernel by an id of the wrong domain, and outlive
	 * the bind's checks: refused before anything changes.
	 */
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		cq = swnic_cq_of(bfid);
		if (!cq)
			return -FI_EINVAL;
		if (swnic_cq_domain(cq) != ep->domain) {
			SWNIC_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: a CQ of another domain\n");
			return -FI_EINVAL;
		}
		return swnic_ep_bind_cq(ep, cq, flags);
	case FI_CLASS_CNTR:
		cntr = swnic_cntr_of(bfid);
		if (!cntr)
			return -FI_EINVAL;
		if (swnic_cntr_domain(cntr) != ep->domain) {
			SWNIC_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: a counter of another domain\n");
			return -FI_EINVAL;
		}
		return swnic_ep_bind_cntr(ep, cntr, flags);
	case FI_CLASS_STX_CTX:
		stx = swnic_stx_of(bfid);
		if (!stx || flags)
			return -FI_EINVAL;
		return swnic_stx_bind(ep, stx);
	case FI_CLASS_SRX_CTX:
		srx = swnic_srx_of(bfid);
		if (!srx || flags)
			return -FI_EINVAL;
		return swnic_srx_bind(ep, srx);
	case FI_CLASS_AV:
		/* A context of a scalable endpoint uses the SEP's AV. */
		if (ep->sep)
			return -FI_EINVAL;
		av = swnic_av_of(bfid);
		if (!av || flags)
			return -FI_EINVAL;
		if (swnic_av_domain(av) != ep->domain) {
			SWNIC_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: an AV of another domain\n");
			return -FI_EINVAL;
		}
		if (ep->av)
			return -FI_EINVAL;
		/* Checked again at fi_enable, when the SRX takes its AV. */
		if (ep->srx && ep->type != FI_EP_MSG &&
		    swnic_srx_av_differs(ep->srx, av))
			return -FI_EINVAL;
		ep->av = av;
		swnic_av_bind_ep(av, 1);
		return 0;
	case FI_CLASS_EQ:
		/* Connection events (MSG); other kinds never report any. */
		eq = swnic_eq_from_fid(bfid);
		if (!eq || flags)
			return -FI_EINVAL;
		if (swnic_eq_bind_check(eq, ep->domain->fabric,
					FI_LOG_EP_CTRL, "fi_ep_bind"))
			return -FI_EINVAL;
		/* As fi_connect takes the domain's: under its ctl_lock. */
		pthread_mutex_lock(&ep->domain->ctl_lock);
		if (ep->eq) {
			pthread_mutex_unlock(&ep->domain->ctl_lock);
			return -FI_EINVAL;
		}
		ep->eq = eq;
		swnic_eq_bind_get(eq);
		pthread_mutex_unlock(&ep->domain->ctl_lock);
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static uint32_t swnic_ep_kernel_type(enum fi_ep_type type)
{
	return type == FI_EP_DGRAM ? SWNIC_EP_DGRAM : SWNIC_EP_RDM;
}

/*
 * An endpoint bound to counters but no CQ (fi_endpoint(3)): its
 * completions go to a CQ of its own that only counts (the kernel counts,
 * the CQ drops them once progress has freed their operations). Made here,
 * bound by swnic_ep_enable_locked() only once the endpoint is enabled and
 * closed by it if fi_enable fails: a failed fi_enable leaves the endpoint
 * free to bind a CQ of its own, and holds no CQ (nor its kernel CQ, which
 * counts against the domain's) until the endpoint closes.
 */
static int swnic_ep_counters_only(struct swnic_ep *ep)
{
	bool counted = false;
	size_t size;
	int ret;

	for (int i = 0; i < SWNIC_CNTR_MAX; i++)
		counted |= ep->cntr[i] != NULL;
	if (!counted) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "fi_enable: no CQ or counter bound\n");
		return -FI_ENOCQ;
	}
	size = ep->info->tx_attr->size + ep->info->rx_attr->size;
	if (size > ep->domain->dev.attr.max_cq_entries)
		size = ep->domain->dev.attr.max_cq_entries;
	ret = swnic_cq_open_discard(ep->domain, size, &ep->own_cq);
	if (ret) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "fi_enable: counters-only CQ: %d\n",
			   ret);
		return ret;
	}
	return 0;
}

static int swnic_ep_enable_locked(struct swnic_ep *ep)
{
	struct swnic_domain *dom = ep->domain;
	struct swnic_ep_create c = {
		.size = sizeof(c),
		.type = swnic_ep_kernel_type(ep->type),
		.flags = ep->engine ? SWNIC_EP_F_DB_ENGINE : SWNIC_EP_F_DB_SYSCALL,
		.sq_entries = (uint32_t)ep->info->tx_attr->size,
		.rq_entries = (uint32_t)ep->info->rx_attr->size,
		.port = ntohs(ep->addr.sin_port),
	};
	struct swnic_cq *tx = ep->tx_cq ? ep->tx_cq : ep->rx_cq;
	struct swnic_cq *rx = ep->rx_cq ? ep->rx_cq : ep->tx_cq;
	bool counters_only = !tx;
	bool took_sep_av = false;
	int ret;

	if (ep->enabled)
		return 0;
	/* fi_endpoint(3) tx_ctx_cnt: FI_SHARED_CONTEXT needs its context. */
	if (ep->info->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT && !ep->stx) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_enable: FI_SHARED_CONTEXT without a bound fi_stx_context\n");
		return -FI_EINVAL;
	}
	/* rx_ctx_cnt: FI_SHARED_CONTEXT receives through its context. */
	if (ep->info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT && !ep->srx) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_enable: FI_SHARED_CONTEXT without a bound fi_srx_context\n");
		return -FI_EINVAL;
	}
	/*
	 * A context of a scalable endpoint: a port of the SEP's block. The
	 * block stays the SEP's; the AV the context takes is given back if
	 * fi_enable fails (err_sep).
	 */
	if (ep->sep) {
		took_sep_av = !ep->av;
		ret = swnic_sep_ctx_enable(ep, &c.group, &c.port);
		if (ret)
			return ret;
	}
	if (counters_only) {
		ret = swnic_ep_counters_only(ep);
		if (ret)
			goto err_sep;
		tx = rx = ep->own_cq;
	}
	/* A connected endpoint sends to its peer: it needs no AV. */
	if (!ep->av && ep->type != FI_EP_MSG) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "fi_enable: no AV bound\n");
		ret = -FI_ENOAV;
		goto err_own_cq;
	}
	/*
	 * The SRX keeps what it took (the receive CQ, forgotten when that
	 * closes; the first member's AV, the endpoint's own): the SRX's,
	 * which a later fi_enable of the endpoint takes again as it is.
	 */
	if (ep->srx) {
		ret = swnic_srx_ep_enable(ep, rx, &c.srx_fd);
		if (ret)
			goto err_own_cq;
		c.flags |= SWNIC_EP_F_SRX_JOIN;
	}
	if (ep->rm_enabled)
		c.flags |= SWNIC_EP_F_RM_ENABLED;
	/* Its traffic class, else the domain's, as its packets' DSCP. */
	c.dscp = swnic_tclass_dscp(ep->info->tx_attr->tclass ?
				   ep->info->tx_attr->tclass : dom->tclass);
	if (c.dscp && !(dom->dev.attr.features & SWNIC_FEAT_DSCP)) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_enable: tclass: the kernel sets no DSCP (old module)\n");
		c.dscp = 0;
	}
	ret = swnic_cq_kernel_id(tx, &c.tx_cq);
	if (!ret)
		ret = swnic_cq_kernel_id(rx, &c.rx_cq);
	if (ret)
		goto err_own_cq;
	/* The kernel counts every kind where it completes. */
	for (int i = 0; i < SWNIC_CNTR_MAX; i++)
		if (ep->cntr[i])
			c.cntr[i] = swnic_cntr_kernel_id(ep->cntr[i]);
	if (ioctl(dom->fd, SWNIC_IOCTL_EP_CREATE, &c)) {
		ret = -errno;
		SWNIC_WARN(FI_LOG_EP_CTRL, "kernel endpoint: %s\n",
			   strerror(errno));
		goto err_own_cq;
	}
	ep->fd = c.fd;
	ret = swnic_uring_map(&ep->sq, c.fd, &c.sq);
	if (!ret)
		ret = swnic_uring_map(&ep->rq, c.fd, &c.rq);
	if (!ret && ep->domain->av_auth_key && ep->av)
		ret = swnic_ep_take_av_keys(ep);
	if (!ret)
		ret = swnic_ep_add_cntr_cqs(ep, tx, rx);
	if (ret) {
		swnic_uring_unmap(&ep->sq);
		swnic_uring_unmap(&ep->rq);
		close(c.fd);
		ep->fd = -1;
		ep->nkeys = 0;
		goto err_own_cq;
	}
	ep->addr.sin_family = AF_INET;
	ep->addr.sin_port = htons(c.port);
	ep->addr.sin_addr.s_addr = c.addr;
	if (counters_only) {
		/* Both directions, reporting only what asks (and dropped). */
		ep->tx_cq = ep->rx_cq = ep->own_cq;
		ep->tx_selective = ep->rx_selective = true;
		swnic_cq_add_ep(ep->own_cq, ep);
	}
	ep->sq_cq = tx;
	ep->rq_cq = rx;
	ep->enabled = true;
	return 0;

	/*
	 * Failed: the endpoint is left as it was, so that fi_enable may be
	 * tried again once the cause is fixed (another port, a bound AV, a
	 * CQ bound instead of the counters-only one) and fi_close has
	 * nothing more to free than before. The counters-only CQ, not bound
	 * yet, goes - with its kernel CQ, if it got one.
	 */
err_own_cq:
	if (counters_only) {
		swnic_cq_close_discard(ep->own_cq);
		ep->own_cq = NULL;
	}
err_sep:
	if (took_sep_av && ep->av) {
		swnic_av_bind_ep(ep->av, -1);
		ep->av = NULL;
	}
	return ret;
}

/*
 * fi_enable, and fi_connect/fi_accept of an endpoint not enabled yet:
 * once, whichever threads ask at the same time (FI_THREAD_SAFE) - two
 * kernel endpoints would leak the first's fd and mappings.
 */
int swnic_ep_enable(struct swnic_ep *ep)
{
	int ret;

	pthread_mutex_lock(&ep->enable_lock);
	ret = swnic_ep_enable_locked(ep);
	pthread_mutex_unlock(&ep->enable_lock);
	return ret;
}

/*
 * A connected MSG endpoint takes messages from its peer (ep->peer) only:
 * another endpoint that learnt its address is refused by the kernel
 * (ECONNREFUSED) and fills none of its receives. A kernel without
 * SWNIC_FEAT_EP_PEER takes them from anyone, as before.
 *
 * On this host or across the wire alike: ep->peer is the address the
 * peer's CM message came from as our kernel saw it (swnic_cm_sender()),
 * which its data packets carry too - not the device's address the
 * message gives, which a host with several addresses may not send from.
 */
void swnic_ep_take_from_peer(struct swnic_ep *ep)
{
	struct swnic_ep_peer p = {
		.size = sizeof(p),
		.flags = SWNIC_EP_PEER_ONE,
		.addr = ep->peer.sin_addr.s_addr,
		.port = ntohs(ep->peer.sin_port),
	};

	if (ep->fd < 0 ||
	    !(ep->domain->dev.attr.features & SWNIC_FEAT_EP_PEER))
		return;
	if (ioctl(ep->fd, SWNIC_IOCTL_EP_PEER, &p))
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "cannot limit the endpoint to its peer: %s\n",
			   strerror(errno));
}

static int swnic_ep_control(struct fid *fid, int command, void *arg)
{
	struct swnic_ep *ep = swnic_ep_of(fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_ENABLE:
		return swnic_ep_enable(ep);
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & FI_TRANSMIT) && (*flags & FI_RECV))
			return -FI_EINVAL;
		*flags = (*flags & FI_RECV) ? ep->rx_op_flags | FI_RECV :
					      ep->tx_op_flags | FI_TRANSMIT;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~(FI_RECV | FI_TRANSMIT);
		else
			ep->tx_op_flags = *flags & ~(FI_RECV | FI_TRANSMIT);
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops swnic_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_ep_close,
	.bind = swnic_ep_bind,
	.control = swnic_ep_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

/* The endpoints' fi_ops (a SEP's handle closes as an endpoint). */
struct fi_ops *swnic_ep_fi_ops_get(void)
{
	return &swnic_ep_fi_ops;
}

/* A swnic endpoint's fid (fi_mr_bind), or NULL. */
struct swnic_ep *swnic_ep_of_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EP || fid->ops != &swnic_ep_fi_ops)
		return NULL;
	return swnic_ep_of(fid);
}

/* An endpoint, or a transmit or receive context of a scalable endpoint. */
struct swnic_ep *swnic_ep_or_ctx_of_fid(struct fid *fid)
{
	if (!fid || fid->ops != &swnic_ep_fi_ops)
		return NULL;
	switch (fid->fclass) {
	case FI_CLASS_EP:
	case FI_CLASS_TX_CTX:
	case FI_CLASS_RX_CTX:
		return swnic_ep_of(fid);
	default:
		return NULL;
	}
}

/* ---- fi_ops_ep -------------------------------------------------------------- */

/*
 * Ask the kernel to cancel the ops of @pool with @context: the first it
 * still holds completes with FI_ECANCELED. Caller holds ep->lock.
 */
static ssize_t swnic_ep_cancel_pool(struct swnic_ep *ep,
				    struct swnic_op_pool *pool, void *context,
				    uint32_t flags)
{
	struct swnic_ep_cancel c = { .size = sizeof(c), .flags = flags };

	for (size_t i = 0; i < pool->size; i++) {
		struct swnic_op *op = &pool->ops[i];

		if (op->free || op->context != context)
			continue;
		c.context = swnic_op_handle(op);
		if (!ioctl(ep->fd, SWNIC_IOCTL_EP_CANCEL, &c))
			return 0;
		if (errno != ENOENT)
			return -errno;
	}
	return -FI_ENOENT;
}

/*
 * fi_cancel: a posted receive is unposted; a send (or RMA) the kernel has
 * not consumed yet (waiting behind a full CQ, a busy target or the
 * engine) is dropped from the SQ. Either completes with FI_ECANCELED. A
 * send already done, or buffered at its target, cannot be recalled:
 * -FI_ENOENT.
 */
static ssize_t swnic_ep_cancel(fid_t fid, void *context)
{
	struct swnic_ep *ep = swnic_ep_of(fid);
	ssize_t ret;

	if (!ep->enabled)
		return -FI_ENOENT;
	/* The lock keeps the op from completing and being reused meanwhile. */
	swnic_lock_acquire(&ep->lock);
	ret = swnic_ep_cancel_pool(ep, &ep->rx_pool, context, 0);
	if (ret == -FI_ENOENT)
		ret = swnic_ep_cancel_pool(ep, &ep->tx_pool, context,
					   SWNIC_CANCEL_SEND);
	swnic_lock_release(&ep->lock);
	return ret;
}

/* Is @op (any address) one of @pool's ops? */
static bool swnic_op_pool_has(const struct swnic_op_pool *pool,
			      const struct swnic_op *op)
{
	uintptr_t base = (uintptr_t)pool->ops, at = (uintptr_t)op;

	return pool->ops && at >= base &&
	       at < (uintptr_t)(pool->ops + pool->size) &&
	       (at - base) % sizeof(*op) == 0;
}

/*
 * Cancel the operation of @ref - that op of @ep, if it is still in the
 * use @ref names - as fi_cancel would, but that one only: deferred work
 * (FI_CANCEL_WORK) whose context other operations may share. @ref may be
 * anything the application left in its work: it is checked against the
 * endpoint's own pools before it is followed. Only work still waiting
 * for its trigger is cancelled. Return: 0, -FI_ENOENT (run or done
 * already, or no such op) or the kernel's error.
 */
int swnic_ep_cancel_op(struct swnic_ep *ep, const struct swnic_op_ref *ref)
{
	struct swnic_ep_cancel c = {
		.size = sizeof(c),
		.context = ref->handle,
	};
	struct swnic_op *op = (struct swnic_op *)(uintptr_t)
		(ref->handle & ((1ULL << SWNIC_OP_GEN_SHIFT) - 1));
	int ret = -FI_ENOENT;

	if (!ep->enabled || !ref->handle)
		return -FI_ENOENT;
	/* As swnic_ep_cancel: the op can be neither put back nor reused. */
	swnic_lock_acquire(&ep->lock);
	if (swnic_op_pool_has(&ep->tx_pool, op))
		c.flags = SWNIC_CANCEL_SEND;
	else if (!swnic_op_pool_has(&ep->rx_pool, op))
		goto out;
	/*
	 * Work that ran is no longer deferred work: a receive it posted
	 * stays posted. An older module cannot tell them apart.
	 */
	if (ep->domain->dev.attr.features & SWNIC_FEAT_CANCEL_TRIG)
		c.flags |= SWNIC_CANCEL_TRIG;
	if (op->free || op->use != ref->use ||
	    swnic_op_handle(op) != ref->handle)
		goto out;
	if (!ioctl(ep->fd, SWNIC_IOCTL_EP_CANCEL, &c))
		ret = 0;
	else if (errno != ENOENT)
		ret = -errno;
out:
	swnic_lock_release(&ep->lock);
	return ret;
}

static int swnic_ep_getopt(fid_t fid, int level, int optname, void *optval,
			   size_t *optlen)
{
	struct swnic_ep *ep = swnic_ep_of(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (!optval || !optlen || *optlen < sizeof(size_t))
			return -FI_EINVAL;
		*(size_t *)optval = ep->min_multi_recv;
		*optlen = sizeof(size_t);
		return 0;
	case FI_OPT_CM_DATA_SIZE:
		if (!optval || !optlen || *optlen < sizeof(size_t))
			return -FI_EINVAL;
		*(size_t *)optval = ep->type == FI_EP_MSG ? SWNIC_CM_DATA_MAX : 0;
		*optlen = sizeof(size_t);
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int swnic_ep_setopt(fid_t fid, int level, int optname,
			   const void *optval, size_t optlen)
{
	struct swnic_ep *ep = swnic_ep_of(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname != FI_OPT_MIN_MULTI_RECV)
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(size_t))
		return -FI_EINVAL;
	ep->min_multi_recv = *(const size_t *)optval;
	return 0;
}

/*
 * fi_endpoint(3): a lower bound of the posts that will not fail with
 * -FI_EAGAIN. A post needs an op of the pool (twice the ring: an op is
 * also held by a completion not read yet) and a slot of the ring, which
 * the kernel frees as it takes entries: the least of the two, read under
 * the data lock that posts hold.
 */
static ssize_t swnic_ep_size_left(struct swnic_ep *ep,
				  struct swnic_op_pool *pool,
				  struct swnic_uring *r)
{
	size_t ops, slots;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	swnic_lock_acquire(&ep->lock);
	ops = pool->size - pool->used;
	slots = r->entries - (r->local -
			      atomic_load_explicit(r->head,
						   memory_order_acquire));
	swnic_lock_release(&ep->lock);
	return (ssize_t)(ops < slots ? ops : slots);
}

static ssize_t swnic_ep_rx_size_left(struct fid_ep *ep_fid)
{
	struct swnic_ep *ep = swnic_ep_of(&ep_fid->fid);

	return swnic_ep_size_left(ep, &ep->rx_pool, &ep->rq);
}

static ssize_t swnic_ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct swnic_ep *ep = swnic_ep_of(&ep_fid->fid);

	return swnic_ep_size_left(ep, &ep->tx_pool, &ep->sq);
}

static struct fi_ops_ep swnic_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = swnic_ep_cancel,
	.getopt = swnic_ep_getopt,
	.setopt = swnic_ep_setopt,
	.tx_ctx = swnic_no_tx_ctx,
	.rx_ctx = swnic_no_rx_ctx,
	.rx_size_left = swnic_ep_rx_size_left,
	.tx_size_left = swnic_ep_tx_size_left,
};

/* ---- fi_ops_cm --------------------------------------------------------------- */

int swnic_ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct swnic_ep *ep = swnic_ep_of(fid);
	struct sockaddr_in sin;
	int ret;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	ret = swnic_addr_read(ep->addr_format, addr, addrlen, &sin);
	if (ret)
		return ret;
	ep->addr.sin_port = sin.sin_port;
	return 0;
}

int swnic_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct swnic_ep *ep = swnic_ep_of(fid);

	if (!addrlen)
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	return swnic_addr_copy_out(ep->addr_format, &ep->addr, addr, addrlen);
}

/* ---- construction ------------------------------------------------------------ */

static bool swnic_doorbell_engine(void)
{
	return swnic_params.doorbell_engine;
}

int swnic_endpoint(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **ep_out, void *context)
{
	struct swnic_domain *dom = swnic_domain_registered(domain);
	struct swnic_ep *ep;
	int ret;

	if (!dom || !info || !info->ep_attr || !ep_out)
		return -FI_EINVAL;
	/*
	 * fi_endpoint(3): shared contexts are offered (fi_stx_context, and
	 * fi_srx_context where the module has them); several contexts are a
	 * scalable endpoint's (fi_scalable_ep).
	 */
	if (info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT &&
	    !swnic_max_ep_srx_ctx(&dom->dev)) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "shared receive contexts: the module has none (max_ep_srx_ctx 0)\n");
		return -FI_ENOSYS;
	}
	if ((info->ep_attr->tx_ctx_cnt > 1 &&
	     info->ep_attr->tx_ctx_cnt != FI_SHARED_CONTEXT) ||
	    (info->ep_attr->rx_ctx_cnt > 1 &&
	     info->ep_attr->rx_ctx_cnt != FI_SHARED_CONTEXT)) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "several contexts: open a scalable endpoint\n");
		return -FI_EINVAL;
	}
	ret = swnic_ep_new(dom, info, FI_CLASS_EP, context, &ep);
	if (ret)
		return ret;
	*ep_out = &ep->ep_fid;
	return 0;
}

/*
 * A new endpoint (or context, @fclass) of @dom for @info: not enabled.
 */
int swnic_ep_new(struct swnic_domain *dom, const struct fi_info *info,
		 size_t fclass, void *context, struct swnic_ep **ep_out)
{
	struct swnic_ep *ep;
	size_t tx_size, rx_size;
	int ret;

	if (info->ep_attr->type != FI_EP_RDM &&
	    info->ep_attr->type != FI_EP_DGRAM &&
	    info->ep_attr->type != FI_EP_MSG) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "endpoint type %s is not supported\n",
			   fi_tostr(&info->ep_attr->type, FI_TYPE_EP_TYPE));
		return -FI_ENOSYS;
	}
	/*
	 * fi_endpoint(3): only peers with the endpoint's auth key reach it.
	 * The kernel keeps an endpoint reachable with its domain's key, so
	 * an endpoint key is taken only as its domain's (fi_getinfo offers
	 * no other): any other would be ignored.
	 */
	if (info->ep_attr->auth_key_size &&
	    !FI_VERSION_LT(dom->api_version, FI_VERSION(1, 5))) {
		uint32_t k;

		if (info->ep_attr->auth_key_size != sizeof(k) ||
		    !info->ep_attr->auth_key) {
			SWNIC_WARN(FI_LOG_EP_CTRL,
				   "endpoint auth_key_size %zu: swnic keys are %zu bytes\n",
				   info->ep_attr->auth_key_size, sizeof(k));
			return -FI_EINVAL;
		}
		memcpy(&k, info->ep_attr->auth_key, sizeof(k));
		if (!swnic_domain_has_key(dom, k)) {
			SWNIC_WARN(FI_LOG_EP_CTRL,
				   "endpoint auth key %u is not its domain's: swnic endpoints use their domain's key\n",
				   k);
			return -FI_EINVAL;
		}
	}
	/* ep_cnt is the kernel's max_ep: it says no at fi_enable. */
	ret = swnic_domain_reserve(dom, SWNIC_CHILD_EP, SWNIC_NO_LIMIT,
				   FI_LOG_EP_CTRL, "ep_cnt", "endpoints");
	if (ret)
		return ret;

	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		ret = -FI_ENOMEM;
		goto err_reserved;
	}
	ep->info = fi_dupinfo((struct fi_info *)info);
	if (!ep->info) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	if (!ep->info->tx_attr->size)
		ep->info->tx_attr->size = SWNIC_EP_DEF_SIZE;
	if (!ep->info->rx_attr->size)
		ep->info->rx_attr->size = SWNIC_EP_DEF_SIZE;
	tx_size = ep->info->tx_attr->size;
	rx_size = ep->info->rx_attr->size;
	if (tx_size > dom->dev.attr.max_sq_entries ||
	    rx_size > dom->dev.attr.max_rq_entries) {
		ret = -FI_EINVAL;
		goto err_info;
	}

	ep->ep_fid.fid.fclass = fclass;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &swnic_ep_fi_ops;
	ep->ep_fid.ops = &swnic_ep_ops;
	ep->ep_fid.cm = &swnic_ep_cm_ops;
	ep->ep_fid.msg = &swnic_msg_ops;
	ep->ep_fid.rma = &swnic_rma_ops;
	ep->ep_fid.tagged = &swnic_tagged_ops;
	ep->ep_fid.atomic = &swnic_atomic_ops;
	ep->domain = dom;
	ep->type = info->ep_attr->type;
	ep->caps = ep->info->caps;
	ep->tx_op_flags = ep->info->tx_attr->op_flags;
	ep->rx_op_flags = ep->info->rx_attr->op_flags;
	ep->addr_format = info->addr_format == FI_FORMAT_UNSPEC ?
			  dom->addr_format : info->addr_format;
	ep->min_multi_recv = 64;
	ep->engine = swnic_doorbell_engine();
	ep->rm_enabled = dom->resource_mgmt == FI_RM_ENABLED;
	ep->fd = -1;
	ep->addr.sin_family = AF_INET;
	if (info->src_addr) {
		struct sockaddr_in sin;

		if (!swnic_addr_read(info->addr_format, info->src_addr,
				     info->src_addrlen, &sin))
			ep->addr.sin_port = sin.sin_port;
	}
	swnic_lock_init(&ep->lock, dom->data_locks);
	pthread_mutex_init(&ep->enable_lock, NULL);
	swnic_list_init(&ep->cq_node[0]);
	swnic_list_init(&ep->cq_node[1]);
	swnic_list_init(&ep->srx_node);
	/* Each op holds one kernel entry or one unreaped completion. */
	ret = swnic_op_pool_init(ep, &ep->tx_pool, tx_size * 2);
	if (!ret)
		ret = swnic_op_pool_init(ep, &ep->rx_pool, rx_size * 2);
	if (!ret && ep->type == FI_EP_MSG)
		ret = swnic_cm_ep_init(ep, info);
	if (ret)
		goto err_pools;

	*ep_out = ep;
	return 0;

err_pools:
	swnic_op_pool_fini(&ep->tx_pool);
	swnic_op_pool_fini(&ep->rx_pool);
	swnic_lock_destroy(&ep->lock);
	pthread_mutex_destroy(&ep->enable_lock);
err_info:
	fi_freeinfo(ep->info);
err_free:
	free(ep);
err_reserved:
	swnic_domain_child(dom, SWNIC_CHILD_EP, -1);
	return ret;
}
