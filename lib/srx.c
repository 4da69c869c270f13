// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive contexts (fi_srx_context, fi_endpoint(3) "shared
 * contexts").
 *
 * A shared receive context (SRX) is a kernel object of its own
 * (SWNIC_EP_F_SRX): an RQ, the posted receives and the unexpected
 * messages, with no address and no CQ. Endpoints that ask for one
 * (ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT) are bound to it with
 * fi_ep_bind before fi_enable, and their kernel endpoints join it
 * (SWNIC_EP_F_SRX_JOIN): whatever arrives at any of them - on this host
 * or over the wire - is matched, in the kernel, against the receives
 * posted to the SRX (fi_recv, fi_trecv & co on the SRX's fid) and, if
 * none matches, waits in the SRX's unexpected queue for one.
 *
 * As fi_endpoint(3) says, a shared receive context has no CQ or counters
 * of its own: a receive completes on the CQ (and counters) bound to the
 * endpoint the message arrived at. Completions that belong to no message
 * - fi_cancel, an FI_PEEK's answer, a failed FI_CLAIM - go to the receive
 * CQ of the oldest endpoint still bound (the kernel does the same for the
 * ones it writes). The SRX's handle is a struct swnic_ep (fclass
 * FI_CLASS_SRX_CTX), enabled at once, whose receive ops are the
 * endpoints'; it never sends.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ep.h"

struct swnic_srx {
	struct swnic_ep *h;		/* the SRX's fid */
	pthread_mutex_t lock;		/* members, av */
	struct swnic_list members;	/* bound endpoints, oldest first */
	size_t nmembers;
	struct fi_rx_attr attr;		/* members use a subset */

	/*
	 * The CQs the kernel writes its receives' completions to (its
	 * members' receive CQs, which may outlive them), still open:
	 * swnic_srxs_lock.
	 */
	struct swnic_list node;		/* on swnic_srxs */
	struct swnic_cq **cqs;
	size_t ncqs, cqs_cap;
};

/*
 * Open SRXs, for a CQ that closes to leave their lists (a lock taken
 * with no CQ's lock held; a CQ's lock may be taken under it).
 */
static pthread_mutex_t swnic_srxs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct swnic_list swnic_srxs = { &swnic_srxs, &swnic_srxs };

static struct fi_ops swnic_srx_fi_ops;

/* Receive capabilities an SRX offers when asked for none in particular. */
#define SWNIC_SRX_CAPS	(FI_MSG | FI_TAGGED | FI_RECV | FI_DIRECTED_RECV | \
			 FI_MULTI_RECV | FI_SOURCE)

bool swnic_ep_is_srx(const struct swnic_ep *ep)
{
	return ep->ep_fid.fid.fclass == FI_CLASS_SRX_CTX;
}

struct swnic_srx *swnic_srx_of(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_SRX_CTX ||
	    fid->ops != &swnic_srx_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_ep, ep_fid.fid)->srx;
}

/*
 * fi_ep_bind of an SRX: the endpoint must ask for one (rx_ctx_cnt
 * FI_SHARED_CONTEXT), be of the SRX's domain, not be bound to one yet,
 * and use a subset of its attributes (fi_endpoint(3) fi_srx_context).
 */
int swnic_srx_bind(struct swnic_ep *ep, struct swnic_srx *srx)
{
	const struct fi_rx_attr *ra = ep->info->rx_attr;

	if (ep->srx || ep->sep || ep->ep_fid.fid.fclass != FI_CLASS_EP) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_ep_bind srx: not an endpoint, or bound already\n");
		return -FI_EINVAL;
	}
	if (srx->h->domain != ep->domain) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "shared receive context of another domain\n");
		return -FI_EINVAL;
	}
	if (ep->info->ep_attr->rx_ctx_cnt != FI_SHARED_CONTEXT) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_ep_bind srx: the endpoint's rx_ctx_cnt is not FI_SHARED_CONTEXT\n");
		return -FI_EINVAL;
	}
	/* Of the receive capabilities, none the SRX lacks. */
	if (ra->caps & SWNIC_SRX_CAPS & ~srx->attr.caps) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_ep_bind srx: rx_attr is not a subset of the context's\n");
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&srx->lock);
	/* fi_endpoint(3): connectionless members share one AV. */
	if (ep->type != FI_EP_MSG && ep->av && srx->h->av &&
	    ep->av != srx->h->av) {
		pthread_mutex_unlock(&srx->lock);
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_ep_bind srx: its endpoints must share one AV\n");
		return -FI_EINVAL;
	}
	ep->srx = srx;
	swnic_list_add_tail(&srx->members, &ep->srx_node);
	srx->nmembers++;
	pthread_mutex_unlock(&srx->lock);
	return 0;
}

/*
 * The endpoint closes: it leaves its SRX - first for the progress of the
 * CQ its receives complete on, which rings the SRX through it
 * (swnic_cq_progress()): the SRX may close once it has left.
 */
void swnic_srx_unbind(struct swnic_ep *ep)
{
	struct swnic_srx *srx = ep->srx;

	swnic_cq_srx_leave(ep->rq_cq, ep);
	pthread_mutex_lock(&srx->lock);
	swnic_list_del(&ep->srx_node);
	srx->nmembers--;
	pthread_mutex_unlock(&srx->lock);
}

/*
 * Has @srx receives in its RQ that wait for a doorbell? Those the kernel
 * left (no room in the CQ of the member a buffered message arrived at,
 * recv_rq.c: -EAGAIN) while messages wait buffered - its NEED_WAKEUP -
 * and nothing but a doorbell matches them. For the progress of a CQ a
 * member completes its receives on, with that CQ's lock held (the member
 * is bound, its SRX open: swnic_srx_unbind()).
 */
bool swnic_srx_rq_waits(const struct swnic_srx *srx)
{
	const struct swnic_uring *r = &srx->h->rq;

	return atomic_load_explicit(r->tail, memory_order_relaxed) !=
	       atomic_load_explicit(r->head, memory_order_relaxed) &&
	       (atomic_load_explicit(r->flags, memory_order_relaxed) &
		SWNIC_RING_F_NEED_WAKEUP);
}

/* Ring @srx's doorbell (as for swnic_srx_rq_waits()). */
void swnic_srx_doorbell(struct swnic_srx *srx)
{
	swnic_ep_doorbell(srx->h);
}

/* Would @av be a second AV among the SRX's connectionless endpoints? */
bool swnic_srx_av_differs(struct swnic_srx *srx, struct swnic_av *av)
{
	bool differs;

	pthread_mutex_lock(&srx->lock);
	differs = srx->h->av && srx->h->av != av;
	pthread_mutex_unlock(&srx->lock);
	if (differs)
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_ep_bind av: the SRX's endpoints must share one AV\n");
	return differs;
}

/* The kernel will write completions of @srx's receives to @cq. */
static int swnic_srx_add_cq(struct swnic_srx *srx, struct swnic_cq *cq)
{
	struct swnic_cq **cqs;
	int ret = 0;

	pthread_mutex_lock(&swnic_srxs_lock);
	for (size_t i = 0; i < srx->ncqs; i++)
		if (srx->cqs[i] == cq)
			goto out;
	if (srx->ncqs == srx->cqs_cap) {
		cqs = realloc(srx->cqs, (srx->cqs_cap * 2 + 2) * sizeof(*cqs));
		if (!cqs) {
			ret = -FI_ENOMEM;
			goto out;
		}
		srx->cqs = cqs;
		srx->cqs_cap = srx->cqs_cap * 2 + 2;
	}
	srx->cqs[srx->ncqs++] = cq;
out:
	pthread_mutex_unlock(&swnic_srxs_lock);
	return ret;
}

/* @cq closes (nobody reads it any more): no SRX retires under its lock. */
void swnic_srx_forget_cq(struct swnic_cq *cq)
{
	struct swnic_list *pos;

	pthread_mutex_lock(&swnic_srxs_lock);
	swnic_list_for_each(pos, &swnic_srxs) {
		struct swnic_srx *srx = swnic_list_entry(pos, struct swnic_srx,
							 node);

		for (size_t i = 0; i < srx->ncqs; i++) {
			if (srx->cqs[i] == cq) {
				srx->cqs[i] = srx->cqs[--srx->ncqs];
				break;
			}
		}
	}
	pthread_mutex_unlock(&swnic_srxs_lock);
}

/*
 * fi_enable of a member: the SRX's fd for its kernel endpoint to join,
 * whose receives complete on @rx_cq. The SRX takes the first
 * connectionless member's AV (completions name their sources through
 * it); the others must have the same.
 */
int swnic_srx_ep_enable(struct swnic_ep *ep, struct swnic_cq *rx_cq,
			int *srx_fd)
{
	struct swnic_srx *srx = ep->srx;
	int ret;

	ret = swnic_srx_add_cq(srx, rx_cq);
	if (ret)
		return ret;

	pthread_mutex_lock(&srx->lock);
	if (ep->type != FI_EP_MSG && ep->av) {
		if (!srx->h->av) {
			srx->h->av = ep->av;
			swnic_av_bind_ep(ep->av, 1);
		} else if (srx->h->av != ep->av) {
			SWNIC_WARN(FI_LOG_EP_CTRL,
				   "fi_enable: the SRX's endpoints must share one AV\n");
			ret = -FI_EINVAL;
		}
	}
	*srx_fd = srx->h->fd;
	pthread_mutex_unlock(&srx->lock);
	return ret;
}

/*
 * Are the SRX's endpoints (one at least) all connected ones? Their
 * receives name no source (fi_msg(3): the address is ignored).
 */
bool swnic_srx_msg_only(struct swnic_ep *h)
{
	struct swnic_srx *srx = h->srx;
	struct swnic_list *pos;
	bool msg = false;

	pthread_mutex_lock(&srx->lock);
	swnic_list_for_each(pos, &srx->members) {
		struct swnic_ep *ep = swnic_list_entry(pos, struct swnic_ep,
						       srx_node);

		msg = ep->type == FI_EP_MSG;
		if (!msg)
			break;
	}
	pthread_mutex_unlock(&srx->lock);
	return msg;
}

/*
 * Where completions of an SRX that belong to no message go: the receive
 * CQ of its oldest member that has one, held (swnic_cq_hold) for the
 * caller to write to and then let go, as a member that closes meanwhile
 * may leave its CQ to be closed too. Taken while the member holds it
 * (an endpoint leaves its SRX before its CQs). NULL: no member yet.
 */
struct swnic_cq *swnic_srx_cq(struct swnic_ep *h)
{
	struct swnic_srx *srx = h->srx;
	struct swnic_cq *cq = NULL;
	struct swnic_list *pos;

	pthread_mutex_lock(&srx->lock);
	swnic_list_for_each(pos, &srx->members) {
		struct swnic_ep *ep = swnic_list_entry(pos, struct swnic_ep,
						       srx_node);

		if (ep->rx_cq) {
			cq = ep->rx_cq;
			swnic_cq_hold(cq, 1);
			break;
		}
	}
	pthread_mutex_unlock(&srx->lock);
	return cq;
}

/* ---- the SRX's fid ---------------------------------------------------------- */

static int swnic_srx_close(struct fid *fid)
{
	struct swnic_srx *srx = swnic_srx_of(fid);
	struct swnic_ep *h = srx->h;
	int ret;

	pthread_mutex_lock(&srx->lock);
	if (srx->nmembers) {
		pthread_mutex_unlock(&srx->lock);
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "shared receive context: %zu endpoints still bound\n",
			   srx->nmembers);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&srx->lock);
	/*
	 * Its receives' completions may wait in its (former) members' CQs,
	 * which live on, naming its ops: stale from now on, made so under
	 * each CQ's lock as an endpoint's are (swnic_cq_retire_ep), so a
	 * reader of one (FI_THREAD_SAFE) that took such an op for live has
	 * finished with it - and with the handle - before it goes.
	 */
	pthread_mutex_lock(&swnic_srxs_lock);
	swnic_list_del(&srx->node);
	for (size_t i = 0; i < srx->ncqs; i++)
		swnic_cq_retire_ep(srx->cqs[i], h);
	pthread_mutex_unlock(&swnic_srxs_lock);
	free(srx->cqs);
	/*
	 * The handle is an endpoint: its close unmaps the RQ, closes the
	 * kernel context (its receives go, without completions, as
	 * fi_close(3) allows) and gives the AV back.
	 */
	h->srx = NULL;
	h->ep_fid.fid.ops = swnic_ep_fi_ops_get();
	ret = fi_close(&h->ep_fid.fid);
	pthread_mutex_destroy(&srx->lock);
	free(srx);
	return ret;
}

static int swnic_srx_control(struct fid *fid, int command, void *arg)
{
	struct swnic_srx *srx = swnic_srx_of(fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_ENABLE:
		/* Enabled when opened. */
		return 0;
	case FI_GETOPSFLAG:
		if (!flags || (*flags & FI_TRANSMIT))
			return -FI_EINVAL;
		*flags = srx->h->rx_op_flags | FI_RECV;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags || (*flags & FI_TRANSMIT))
			return -FI_EINVAL;
		srx->h->rx_op_flags = *flags & ~FI_RECV;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static int swnic_srx_bind_fid(struct fid *fid, struct fid *bfid,
			      uint64_t flags)
{
	(void)fid;
	(void)bfid;
	(void)flags;
	/* fi_endpoint(3): an SRX has no CQ or counters; endpoints bind it. */
	SWNIC_WARN(FI_LOG_EP_CTRL,
		   "shared receive context: bind it to endpoints, not them to it\n");
	return -FI_EINVAL;
}

static struct fi_ops swnic_srx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_srx_close,
	.bind = swnic_srx_bind_fid,
	.control = swnic_srx_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static int swnic_srx_getname(fid_t fid, void *addr, size_t *addrlen)
{
	(void)fid;
	(void)addr;
	(void)addrlen;
	/* It has no address: its endpoints do. */
	return -FI_ENOSYS;
}

static int swnic_srx_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid;
	(void)addr;
	(void)addrlen;
	return -FI_ENOSYS;
}

static struct fi_ops_cm swnic_srx_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = swnic_srx_setname,
	.getname = swnic_srx_getname,
	.getpeer = swnic_no_getpeer,
	.connect = swnic_no_connect,
	.listen = swnic_no_listen,
	.accept = swnic_no_accept,
	.reject = swnic_no_reject,
	.shutdown = swnic_no_shutdown,
	.join = swnic_no_join,
};

/* The kernel's shared receive context behind @h, its RQ mapped. */
static int swnic_srx_kernel(struct swnic_ep *h)
{
	struct swnic_ep_create c = {
		.size = sizeof(c),
		.type = SWNIC_EP_RDM,
		.flags = SWNIC_EP_F_SRX | SWNIC_EP_F_DB_SYSCALL,
		.sq_entries = 1,
		.rq_entries = (uint32_t)h->info->rx_attr->size,
	};
	int ret;

	if (ioctl(h->domain->fd, SWNIC_IOCTL_EP_CREATE, &c)) {
		ret = errno == ENOSPC || errno == EDQUOT ? -FI_ENOSPC : -errno;
		SWNIC_WARN(FI_LOG_EP_CTRL, "kernel shared receive context: %s\n",
			   strerror(errno));
		return ret;
	}
	h->fd = c.fd;
	ret = swnic_uring_map(&h->sq, c.fd, &c.sq);
	if (!ret)
		ret = swnic_uring_map(&h->rq, c.fd, &c.rq);
	if (ret) {
		swnic_uring_unmap(&h->sq);
		swnic_uring_unmap(&h->rq);
		close(c.fd);
		h->fd = -1;
		return ret;
	}
	h->enabled = true;
	return 0;
}

int swnic_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context)
{
	struct swnic_domain *dom = swnic_domain_registered(domain);
	struct swnic_srx *srx;
	struct fi_info *info;
	int ret;

	if (!dom || !rx_ep)
		return -FI_EINVAL;
	if (!swnic_max_ep_srx_ctx(&dom->dev)) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "shared receive contexts: the module has none (max_ep_srx_ctx 0)\n");
		return -FI_ENOSYS;
	}
	/*
	 * An endpoint's rx_attr will do (its RMA and atomic capabilities are
	 * the endpoint's business, not the SRX's), as long as it receives
	 * messages or tagged messages.
	 */
	if (attr && attr->caps && !(attr->caps & (FI_MSG | FI_TAGGED))) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "shared receive context: neither FI_MSG nor FI_TAGGED\n");
		return -FI_EINVAL;
	}
	if (attr && attr->size > dom->dev.attr.max_rq_entries)
		return -FI_EINVAL;
	info = fi_allocinfo();
	if (!info)
		return -FI_ENOMEM;
	info->ep_attr->type = FI_EP_RDM;
	info->ep_attr->max_msg_size = dom->dev.attr.max_msg_size;
	info->tx_attr->size = 1;
	if (attr)
		*info->rx_attr = *attr;
	info->rx_attr->caps = info->rx_attr->caps ?
			      info->rx_attr->caps & SWNIC_SRX_CAPS :
			      SWNIC_SRX_CAPS;
	if (!info->rx_attr->size)
		info->rx_attr->size = SWNIC_EP_DEF_SIZE;
	info->caps = info->rx_attr->caps;

	srx = calloc(1, sizeof(*srx));
	if (!srx) {
		ret = -FI_ENOMEM;
		goto out_info;
	}
	pthread_mutex_init(&srx->lock, NULL);
	swnic_list_init(&srx->members);
	srx->attr = *info->rx_attr;
	ret = swnic_ep_new(dom, info, FI_CLASS_SRX_CTX, context, &srx->h);
	if (ret)
		goto err_srx;
	srx->h->srx = srx;
	/* The kernel refuses ENGINE mode here: the lazy RQ needs none. */
	srx->h->engine = false;
	/*
	 * Its receives carry FI_COMPLETION only if asked: whether one that
	 * did not ask reports is for the CQ binding of the endpoint it
	 * completes at (FI_SELECTIVE_COMPLETION, swnic_cq_srx_reports()).
	 */
	srx->h->rx_selective = true;
	ret = swnic_srx_kernel(srx->h);
	if (ret) {
		srx->h->srx = NULL;
		fi_close(&srx->h->ep_fid.fid);
		goto err_srx;
	}
	srx->h->ep_fid.fid.ops = &swnic_srx_fi_ops;
	srx->h->ep_fid.cm = &swnic_srx_cm_ops;
	pthread_mutex_lock(&swnic_srxs_lock);
	swnic_list_add_tail(&swnic_srxs, &srx->node);
	pthread_mutex_unlock(&swnic_srxs_lock);
	if (attr)
		*attr = srx->attr;
	*rx_ep = &srx->h->ep_fid;
	fi_freeinfo(info);
	return 0;

err_srx:
	pthread_mutex_destroy(&srx->lock);
	free(srx);
out_info:
	fi_freeinfo(info);
	return ret;
}
