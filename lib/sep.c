// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Scalable endpoints and shared transmit contexts (fi_endpoint(3),
 * fi_scalable_ep(3)).
 *
 * A scalable endpoint (SEP) has one address: the first port of a block
 * of consecutive ports the kernel reserves for it (SWNIC_IOCTL_PORT_BLOCK).
 * Its receive context i is a kernel endpoint at that port + i, so a peer
 * names it with fi_rx_addr(addr, i, rx_ctx_bits): the AV adds i to the
 * port (av.c), on one host as over the wire, with no change to the wire
 * format. Its transmit contexts are kernel endpoints of their own that
 * join the block, so their messages carry the SEP's address as source
 * (FI_SOURCE, FI_DIRECTED_RECV and MR peer checks see the SEP). Each
 * context is a struct swnic_ep with its own CQs and counters; the SEP is
 * one as well, never enabled: it has no data path (its posts fail with
 * -FI_EOPBADSTATE).
 *
 * A shared transmit context (fi_stx_context) is shared by the endpoints
 * bound to it: posts go through the endpoint, and each operation
 * completes on the CQ and counters bound to the endpoint that posted it
 * (fi_endpoint(3) "shared contexts"). Each endpoint keeps its own kernel
 * send queue, sized by its tx_attr: a faithful emulation, which shares
 * the attributes and not a queue (no ordering is defined between
 * endpoints in any case). Shared receive contexts are srx.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ep.h"

struct swnic_sep {
	struct swnic_ep *h;		/* the SEP's fid (never enabled) */
	pthread_mutex_t lock;		/* contexts and the block */
	size_t tx_cnt, rx_cnt;
	struct swnic_ep **tx, **rx;	/* open contexts by index */
	size_t nctx;			/* open contexts */
	uint16_t base;			/* the block's first port, 0: none */
};

struct swnic_stx {
	struct fid_stx stx_fid;
	struct swnic_domain *domain;
	struct fi_tx_attr attr;
	atomic_uint binds;		/* endpoints bound to it */
};

static struct swnic_sep *swnic_sep_of(struct fid *fid)
{
	return swnic_container_of(fid, struct swnic_ep, ep_fid.fid)->sep;
}

/*
 * Reserve the SEP's block, once: at @port (fi_setname), or where the
 * kernel finds room (0). Caller holds sep->lock.
 */
static int swnic_sep_block(struct swnic_sep *sep, uint16_t port)
{
	struct swnic_port_block b = {
		.size = sizeof(b),
		.count = (uint16_t)sep->rx_cnt,
		.flags = port ? SWNIC_PORT_BLOCK_FIXED : 0,
		.base = port,
	};

	if (sep->base)
		return 0;
	if (ioctl(sep->h->domain->fd, SWNIC_IOCTL_PORT_BLOCK, &b)) {
		int err = errno;

		SWNIC_WARN(FI_LOG_EP_CTRL, "scalable endpoint: ports: %s\n",
			   strerror(err));
		return err == ENOSPC || err == EDQUOT ? -FI_ENOSPC :
		       err == EADDRNOTAVAIL ? -FI_EADDRNOTAVAIL :
		       err == EADDRINUSE ? -FI_EADDRINUSE :
		       err == EACCES ? -FI_EACCES : -err;
	}
	sep->base = b.base;
	return 0;
}

/*
 * fi_enable of a context: its kernel endpoint joins the SEP's block, a
 * receive context at the block's port + its index. It takes the SEP's AV.
 */
int swnic_sep_ctx_enable(struct swnic_ep *ep, uint16_t *group, uint16_t *port)
{
	struct swnic_sep *sep = ep->sep;
	int ret;

	if (!sep->h->av) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_enable: the scalable endpoint has no AV\n");
		return -FI_ENOAV;
	}
	pthread_mutex_lock(&sep->lock);
	ret = swnic_sep_block(sep, 0);
	if (!ret) {
		*group = sep->base;
		*port = ep->ep_fid.fid.fclass == FI_CLASS_RX_CTX ?
			(uint16_t)(sep->base + ep->sep_index) : 0;
		if (!ep->av) {
			ep->av = sep->h->av;
			swnic_av_bind_ep(ep->av, 1);
		}
	}
	pthread_mutex_unlock(&sep->lock);
	return ret;
}

/* A context closes: its slot is free again. */
void swnic_sep_ctx_close(struct swnic_ep *ep)
{
	struct swnic_sep *sep = ep->sep;

	if (ep == sep->h)
		return;
	pthread_mutex_lock(&sep->lock);
	if (ep->ep_fid.fid.fclass == FI_CLASS_TX_CTX)
		sep->tx[ep->sep_index] = NULL;
	else
		sep->rx[ep->sep_index] = NULL;
	sep->nctx--;
	pthread_mutex_unlock(&sep->lock);
}

/* ---- the SEP's fid ---------------------------------------------------------- */

static int swnic_sep_close(struct fid *fid)
{
	struct swnic_sep *sep = swnic_sep_of(fid);
	struct swnic_port_block b = {
		.size = sizeof(b),
		.flags = SWNIC_PORT_BLOCK_RELEASE,
	};
	int ret;

	pthread_mutex_lock(&sep->lock);
	if (sep->nctx) {
		pthread_mutex_unlock(&sep->lock);
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "scalable endpoint: %zu contexts still open\n",
			   sep->nctx);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&sep->lock);
	if (sep->base) {
		b.base = sep->base;
		if (ioctl(sep->h->domain->fd, SWNIC_IOCTL_PORT_BLOCK, &b))
			SWNIC_WARN(FI_LOG_EP_CTRL, "port block %u: %s\n",
				   sep->base, strerror(errno));
	}
	/* The handle is an endpoint never enabled: its own close frees it. */
	sep->h->sep = NULL;
	sep->h->ep_fid.fid.ops = swnic_ep_fi_ops_get();
	ret = fi_close(&sep->h->ep_fid.fid);
	pthread_mutex_destroy(&sep->lock);
	free(sep->tx);
	free(sep->rx);
	free(sep);
	return ret;
}

static int swnic_sep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct swnic_sep *sep = swnic_sep_of(fid);
	struct swnic_av *av;

	if (!bfid)
		return -FI_EINVAL;
	/* fi_scalable_ep_bind: an AV (CQs and counters go to contexts). */
	if (bfid->fclass != FI_CLASS_AV)
		return -FI_EINVAL;
	av = swnic_av_of(bfid);
	if (!av || flags)
		return -FI_EINVAL;
	/* fi_endpoint(3): an AV of the endpoint's domain. */
	if (swnic_av_domain(av) != sep->h->domain) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "fi_scalable_ep_bind: an AV of another domain\n");
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&sep->lock);
	if (sep->h->av) {
		pthread_mutex_unlock(&sep->lock);
		return -FI_EINVAL;
	}
	sep->h->av = av;
	swnic_av_bind_ep(av, 1);
	pthread_mutex_unlock(&sep->lock);
	return 0;
}

static int swnic_sep_control(struct fid *fid, int command, void *arg)
{
	struct swnic_sep *sep = swnic_sep_of(fid);
	int ret;

	(void)arg;
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	if (!sep->h->av)
		return -FI_ENOAV;
	/* Its address exists from here: the block. */
	pthread_mutex_lock(&sep->lock);
	ret = swnic_sep_block(sep, 0);
	pthread_mutex_unlock(&sep->lock);
	return ret;
}

static struct fi_ops swnic_sep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_sep_close,
	.bind = swnic_sep_bind,
	.control = swnic_sep_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

struct swnic_ep *swnic_sep_handle_of_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_SEP ||
	    fid->ops != &swnic_sep_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_ep, ep_fid.fid);
}

/* The index'th context of @sep, a new swnic_ep of @fclass. */
static int swnic_sep_ctx(struct fid_ep *sep_fid, int index, size_t fclass,
			 const struct fi_tx_attr *tx_attr,
			 const struct fi_rx_attr *rx_attr,
			 struct fid_ep **out, void *context)
{
	struct swnic_sep *sep = swnic_sep_of(&sep_fid->fid);
	bool tx = fclass == FI_CLASS_TX_CTX;
	size_t cnt = tx ? sep->tx_cnt : sep->rx_cnt;
	struct swnic_ep **slot;
	struct fi_info *info;
	struct swnic_ep *ep;
	int ret;

	if (!out || index < 0 || (size_t)index >= cnt) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "%s context %d: the SEP has %zu\n",
			   tx ? "transmit" : "receive", index, cnt);
		return -FI_EINVAL;
	}
	info = fi_dupinfo(sep->h->info);
	if (!info)
		return -FI_ENOMEM;
	/*
	 * Per-context attributes: a subset of the SEP's (fi_endpoint(3)),
	 * applied where they are the endpoint's own.
	 */
	if (tx && tx_attr) {
		if (tx_attr->caps & ~info->tx_attr->caps) {
			ret = -FI_EINVAL;
			goto out_info;
		}
		if (tx_attr->caps)
			info->tx_attr->caps = tx_attr->caps;
		if (tx_attr->size)
			info->tx_attr->size = tx_attr->size;
		info->tx_attr->op_flags = tx_attr->op_flags;
	}
	if (!tx && rx_attr) {
		if (rx_attr->caps & ~info->rx_attr->caps) {
			ret = -FI_EINVAL;
			goto out_info;
		}
		if (rx_attr->caps)
			info->rx_attr->caps = rx_attr->caps;
		if (rx_attr->size)
			info->rx_attr->size = rx_attr->size;
		info->rx_attr->op_flags = rx_attr->op_flags;
	}
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;

	pthread_mutex_lock(&sep->lock);
	slot = tx ? &sep->tx[index] : &sep->rx[index];
	if (*slot) {
		pthread_mutex_unlock(&sep->lock);
		SWNIC_WARN(FI_LOG_EP_CTRL, "context %d is open already\n",
			   index);
		ret = -FI_EBUSY;
		goto out_info;
	}
	ret = swnic_ep_new(sep->h->domain, info, fclass, context, &ep);
	if (!ret) {
		ep->sep = sep;
		ep->sep_index = index;
		*slot = ep;
		sep->nctx++;
		*out = &ep->ep_fid;
	}
	pthread_mutex_unlock(&sep->lock);
	if (!ret && tx && tx_attr)
		*(struct fi_tx_attr *)tx_attr = *ep->info->tx_attr;
	if (!ret && !tx && rx_attr)
		*(struct fi_rx_attr *)rx_attr = *ep->info->rx_attr;
out_info:
	fi_freeinfo(info);
	return ret;
}

static int swnic_sep_tx_ctx(struct fid_ep *sep, int index,
			    struct fi_tx_attr *attr, struct fid_ep **tx_ep,
			    void *context)
{
	return swnic_sep_ctx(sep, index, FI_CLASS_TX_CTX, attr, NULL, tx_ep,
			     context);
}

static int swnic_sep_rx_ctx(struct fid_ep *sep, int index,
			    struct fi_rx_attr *attr, struct fid_ep **rx_ep,
			    void *context)
{
	return swnic_sep_ctx(sep, index, FI_CLASS_RX_CTX, NULL, attr, rx_ep,
			     context);
}

static struct fi_ops_ep swnic_sep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = swnic_no_cancel,
	.getopt = swnic_no_getopt,
	.setopt = swnic_no_setopt,
	.tx_ctx = swnic_sep_tx_ctx,
	.rx_ctx = swnic_sep_rx_ctx,
	.rx_size_left = swnic_no_size_left,
	.tx_size_left = swnic_no_size_left,
};

/* fi_getname: the block's first port, once it exists (fi_enable). */
static int swnic_sep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct swnic_sep *sep = swnic_sep_of(fid);
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (!addrlen)
		return -FI_EINVAL;
	pthread_mutex_lock(&sep->lock);
	sin.sin_port = htons(sep->base);
	sin.sin_addr = sep->h->domain->dev.addr.sin_addr;
	pthread_mutex_unlock(&sep->lock);
	if (!sin.sin_port)
		return -FI_EOPBADSTATE;
	return swnic_addr_copy_out(sep->h->addr_format, &sin, addr, addrlen);
}

/*
 * fi_setname: the SEP's address is the block's first port, so the block
 * is reserved here, at that port (rx_ctx_cnt ports from it; port 0: where
 * the kernel finds room), and setname fails as the reservation does
 * (-FI_EADDRINUSE, -FI_EACCES below 1024, -FI_EINVAL past the last port).
 * The host part must be the domain's address (or any). Once the SEP has
 * an address (fi_enable, an enabled context, an earlier fi_setname) it
 * cannot change: -FI_EOPBADSTATE.
 */
static int swnic_sep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct swnic_sep *sep = swnic_sep_of(fid);
	struct swnic_domain *dom = sep->h->domain;
	struct sockaddr_in sin;
	int ret;

	if (!(dom->dev.attr.features & SWNIC_FEAT_TRIG_RECV))
		return -FI_ENOSYS;	/* no SWNIC_PORT_BLOCK_FIXED */
	ret = swnic_addr_read(sep->h->addr_format, addr, addrlen, &sin);
	if (ret)
		return ret;
	if (sin.sin_addr.s_addr != INADDR_ANY &&
	    sin.sin_addr.s_addr != dom->dev.addr.sin_addr.s_addr)
		return -FI_EADDRNOTAVAIL;
	pthread_mutex_lock(&sep->lock);
	if (sep->base)
		ret = -FI_EOPBADSTATE;
	else
		ret = swnic_sep_block(sep, ntohs(sin.sin_port));
	pthread_mutex_unlock(&sep->lock);
	return ret;
}

static struct fi_ops_cm swnic_sep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = swnic_sep_setname,
	.getname = swnic_sep_getname,
	.getpeer = swnic_no_getpeer,
	.connect = swnic_no_connect,
	.listen = swnic_no_listen,
	.accept = swnic_no_accept,
	.reject = swnic_no_reject,
	.shutdown = swnic_no_shutdown,
	.join = swnic_no_join,
};

int swnic_scalable_ep(struct fid_domain *domain, struct fi_info *info,
		      struct fid_ep **sep_out, void *context)
{
	struct swnic_domain *dom = swnic_domain_registered(domain);
	struct swnic_sep *sep;
	size_t tx_cnt, rx_cnt, max;
	int ret;

	if (!dom || !info || !info->ep_attr || !sep_out)
		return -FI_EINVAL;
	max = swnic_max_ep_ctx(&dom->dev);
	if (!(dom->dev.attr.features & SWNIC_FEAT_PORT_BLOCK)) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "scalable endpoints: the module has no port blocks\n");
		return -FI_ENOSYS;
	}
	if (info->ep_attr->type != FI_EP_RDM &&
	    info->ep_attr->type != FI_EP_DGRAM) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "scalable endpoints: FI_EP_RDM or FI_EP_DGRAM\n");
		return -FI_ENOSYS;
	}
	tx_cnt = info->ep_attr->tx_ctx_cnt ? info->ep_attr->tx_ctx_cnt : 1;
	rx_cnt = info->ep_attr->rx_ctx_cnt ? info->ep_attr->rx_ctx_cnt : 1;
	if (tx_cnt == FI_SHARED_CONTEXT || rx_cnt == FI_SHARED_CONTEXT ||
	    tx_cnt > max || rx_cnt > max) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "scalable endpoint: %zu/%zu contexts, max_ep_tx/rx_ctx %zu\n",
			   tx_cnt, rx_cnt, max);
		return -FI_EINVAL;
	}
	sep = calloc(1, sizeof(*sep));
	if (!sep)
		return -FI_ENOMEM;
	sep->tx = calloc(tx_cnt, sizeof(*sep->tx));
	sep->rx = calloc(rx_cnt, sizeof(*sep->rx));
	if (!sep->tx || !sep->rx) {
		ret = -FI_ENOMEM;
		goto err;
	}
	sep->tx_cnt = tx_cnt;
	sep->rx_cnt = rx_cnt;
	pthread_mutex_init(&sep->lock, NULL);
	ret = swnic_ep_new(dom, info, FI_CLASS_SEP, context, &sep->h);
	if (ret) {
		pthread_mutex_destroy(&sep->lock);
		goto err;
	}
	sep->h->sep = sep;
	sep->h->sep_index = -1;
	sep->h->ep_fid.fid.ops = &swnic_sep_fi_ops;
	sep->h->ep_fid.ops = &swnic_sep_ops;
	sep->h->ep_fid.cm = &swnic_sep_cm_ops;
	*sep_out = &sep->h->ep_fid;
	return 0;

err:
	free(sep->tx);
	free(sep->rx);
	free(sep);
	return ret;
}

/* ---- shared transmit contexts -------------------------------------------- */

static struct fi_ops swnic_stx_fi_ops;

struct swnic_stx *swnic_stx_of(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_STX_CTX ||
	    fid->ops != &swnic_stx_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_stx, stx_fid.fid);
}

/*
 * fi_ep_bind of a shared transmit context: the endpoint must ask for one
 * (tx_ctx_cnt FI_SHARED_CONTEXT), be of its domain, and use a subset of
 * its attributes (fi_endpoint(3) fi_stx_context).
 */
int swnic_stx_bind(struct swnic_ep *ep, struct swnic_stx *stx)
{
	const struct fi_tx_attr *ta = ep->info->tx_attr;

	if (ep->stx || ep->sep)
		return -FI_EINVAL;
	if (stx->domain != ep->domain) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "shared transmit context of another domain\n");
		return -FI_EINVAL;
	}
	if (ep->info->ep_attr->tx_ctx_cnt != FI_SHARED_CONTEXT) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_ep_bind stx: the endpoint's tx_ctx_cnt is not FI_SHARED_CONTEXT\n");
		return -FI_EINVAL;
	}
	if ((stx->attr.caps && (ta->caps & ~stx->attr.caps)) ||
	    ta->size > stx->attr.size) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_ep_bind stx: tx_attr is not a subset of the context's\n");
		return -FI_EINVAL;
	}
	ep->stx = stx;
	atomic_fetch_add(&stx->binds, 1);
	return 0;
}

void swnic_stx_unbind(struct swnic_stx *stx)
{
	atomic_fetch_sub(&stx->binds, 1);
}

static int swnic_stx_close(struct fid *fid)
{
	struct swnic_stx *stx = swnic_container_of(fid, struct swnic_stx,
						   stx_fid.fid);

	if (atomic_load(&stx->binds))
		return -FI_EBUSY;
	swnic_domain_child(stx->domain, SWNIC_CHILD_EP, -1);
	free(stx);
	return 0;
}

static struct fi_ops swnic_stx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_stx_close,
	.bind = swnic_no_bind,
	.control = swnic_no_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static struct fi_ops_ep swnic_stx_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = swnic_no_cancel,
	.getopt = swnic_no_getopt,
	.setopt = swnic_no_setopt,
	.tx_ctx = swnic_no_tx_ctx,
	.rx_ctx = swnic_no_rx_ctx,
	.rx_size_left = swnic_no_size_left,
	.tx_size_left = swnic_no_size_left,
};

int swnic_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		  struct fid_stx **stx_out, void *context)
{
	struct swnic_domain *dom = swnic_domain_registered(domain);
	struct swnic_stx *stx;
	int ret;

	if (!dom || !stx_out)
		return -FI_EINVAL;
	if (attr && attr->size > dom->dev.attr.max_sq_entries)
		return -FI_EINVAL;
	ret = swnic_domain_reserve(dom, SWNIC_CHILD_EP, SWNIC_NO_LIMIT,
				   FI_LOG_EP_CTRL, "ep_cnt", "endpoints");
	if (ret)
		return ret;
	stx = calloc(1, sizeof(*stx));
	if (!stx) {
		swnic_domain_child(dom, SWNIC_CHILD_EP, -1);
		return -FI_ENOMEM;
	}
	stx->stx_fid.fid.fclass = FI_CLASS_STX_CTX;
	stx->stx_fid.fid.context = context;
	stx->stx_fid.fid.ops = &swnic_stx_fi_ops;
	stx->stx_fid.ops = &swnic_stx_ops;
	stx->domain = dom;
	if (attr)
		stx->attr = *attr;
	if (!stx->attr.size) {
		stx->attr.size = dom->dev.attr.max_sq_entries;
		if (attr)
			attr->size = stx->attr.size;
	}
	*stx_out = &stx->stx_fid;
	return 0;
}
