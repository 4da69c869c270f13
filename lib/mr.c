// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions (fi_mr(3)) over the kernel's SWNIC_IOCTL_MR_* commands.
 *
 * Registration: fi_mr_reg/regv/regattr all end in swnic_mr_create(). The
 * domain's mr_mode decides the kernel flags: FI_MR_VIRT_ADDR (or BASIC)
 * makes peers address the region by virtual address, else by offset;
 * without FI_MR_PROV_KEY (or BASIC) the application's requested_key is
 * used. Regions are pinned unless the domain registers on demand (no
 * FI_MR_ALLOCATED, or FI_SWNIC_MR_ODP=1) or the application asked for it
 * per MR (fi_swnic_ops_domain.mr_regattr with FI_SWNIC_MR_ODP).
 *
 * With an EQ bound to the domain with FI_REG_MR, registration is
 * asynchronous: the call returns the MR at once and a worker thread of the
 * domain registers it and reports FI_MR_COMPLETE (or an error event) on
 * the EQ. A kernel without MR ioctls (no SWNIC_FEAT_MR) gets -FI_ENOSYS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ep.h"
#include "mr.h"

static struct fi_ops swnic_mr_fi_ops;

#define SWNIC_FI_ACCESS	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)

struct swnic_mr_async {
	pthread_t thread;
	pthread_mutex_t lock;		/* queue, MR states, stop */
	pthread_cond_t cond;		/* queue non-empty, or a state change */
	struct swnic_list queue;
	bool stop;
};

static uint32_t swnic_mr_access(uint64_t access)
{
	uint32_t a = 0;

	a |= access & FI_SEND ? SWNIC_MR_ACCESS_SEND : 0;
	a |= access & FI_RECV ? SWNIC_MR_ACCESS_RECV : 0;
	a |= access & FI_READ ? SWNIC_MR_ACCESS_READ : 0;
	a |= access & FI_WRITE ? SWNIC_MR_ACCESS_WRITE : 0;
	a |= access & FI_REMOTE_READ ? SWNIC_MR_ACCESS_REMOTE_READ : 0;
	a |= access & FI_REMOTE_WRITE ? SWNIC_MR_ACCESS_REMOTE_WRITE : 0;
	return a;
}

/* Kernel errno of a registration to a fabric errno (fi_mr(3) ERRORS). */
static int swnic_mr_errno(int err)
{
	switch (err) {
	case EEXIST:
		return -FI_ENOKEY;	/* requested_key in use */
	case EDQUOT:
		return -FI_ENOSPC;	/* device's pinned-bytes limit */
	case EPERM:
		return -FI_ENOMEM;	/* RLIMIT_MEMLOCK */
	default:
		return -err;
	}
}

int swnic_kmr_reg(struct swnic_domain *dom, struct swnic_kmr *kmr,
		  uint64_t requested_key)
{
	struct swnic_mr_reg reg = {
		.size = sizeof(reg),
		.flags = kmr->reg_flags,
		.addr = kmr->addr,
		.length = kmr->length,
		.requested_key = requested_key,
		.access = kmr->access,
		.auth_key = kmr->auth_key,
		.npeers = kmr->npeers,
		.peers[0] = kmr->peer,
		.nsegs = kmr->nsegs,
		.segs = kmr->nsegs ? (uintptr_t)kmr->seg_handles : 0,
	};
	int ret;

	if (ioctl(dom->fd, SWNIC_IOCTL_MR_REG, &reg)) {
		ret = errno;
		SWNIC_INFO(FI_LOG_MR, "%s: MR_REG %#llx+%llu: %s\n",
			   dom->dev.name, (unsigned long long)kmr->addr,
			   (unsigned long long)kmr->length, strerror(ret));
		return swnic_mr_errno(ret);
	}
	kmr->handle = reg.handle;
	kmr->key = reg.key;
	return 0;
}

/*
 * swnic_kmr_reg() for an application's MR: if pinning is over a limit
 * (RLIMIT_MEMLOCK, the device's pinned bytes) and the registration cache
 * keeps registrations nobody uses - its own pins, which the application
 * never asked to keep - they go, and it is tried once more.
 */
int swnic_kmr_reg_reclaim(struct swnic_domain *dom, struct swnic_kmr *kmr,
			  uint64_t requested_key)
{
	int ret = swnic_kmr_reg(dom, kmr, requested_key);

	if ((ret == -FI_ENOMEM || ret == -FI_ENOSPC) &&
	    swnic_mr_cache_reclaim(dom))
		ret = swnic_kmr_reg(dom, kmr, requested_key);
	return ret;
}

void swnic_kmr_dereg(struct swnic_domain *dom, struct swnic_kmr *kmr)
{
	struct swnic_mr_dereg dereg = {
		.size = sizeof(dereg),
		.handle = kmr->handle,
	};

	if (ioctl(dom->fd, SWNIC_IOCTL_MR_DEREG, &dereg))
		SWNIC_WARN(FI_LOG_MR, "%s: MR_DEREG %u: %s\n", dom->dev.name,
			   kmr->handle, strerror(errno));
}

/* The kernel's SWNIC_MR_STATE_* of @kmr, or -errno. */
int swnic_kmr_state(struct swnic_domain *dom, const struct swnic_kmr *kmr)
{
	struct swnic_mr_query q = { .size = sizeof(q), .handle = kmr->handle };

	if (ioctl(dom->fd, SWNIC_IOCTL_MR_QUERY, &q))
		return -errno;
	return (int)q.state;
}

static void swnic_mr_unregister_segs(struct swnic_mr *mr, size_t n)
{
	while (n--)
		swnic_kmr_dereg(mr->domain, &mr->segs[n]);
}

/*
 * The segments of a multi-range MR: each range a kernel MR of local
 * rights only (the kernel pins it writable if peers may write, RECV),
 * held the way the whole MR asks (pinned or ODP).
 */
static int swnic_mr_register_segs(struct swnic_mr *mr)
{
	uint32_t access = mr->access & (SWNIC_MR_ACCESS_REMOTE_WRITE |
					SWNIC_MR_ACCESS_RECV |
					SWNIC_MR_ACCESS_READ) ?
			  SWNIC_MR_ACCESS_RECV : SWNIC_MR_ACCESS_SEND;
	size_t i;
	int ret;

	for (i = 0; i < mr->nsegs; i++) {
		struct swnic_kmr *k = &mr->segs[i];	/* addr, length set */

		k->access = access;
		k->reg_flags = mr->reg_flags & SWNIC_MR_REG_ODP;
		k->auth_key = mr->auth_key;
		ret = swnic_kmr_reg_reclaim(mr->domain, k, 0);
		if (ret) {
			swnic_mr_unregister_segs(mr, i);
			return ret;
		}
	}
	return 0;
}

/* Make the kernel registration of a (validated) MR. */
static int swnic_mr_register(struct swnic_mr *mr)
{
	struct swnic_domain *dom = mr->domain;
	struct swnic_kmr *kmr;
	int ret;

	if (mr->cacheable)
		return swnic_mr_cache_get(dom, mr, &mr->kmr, true);
	if (mr->nsegs) {
		ret = swnic_mr_register_segs(mr);
		if (ret)
			return ret;
	}

	kmr = calloc(1, sizeof(*kmr));
	if (!kmr) {
		swnic_mr_unregister_segs(mr, mr->nsegs);
		return -FI_ENOMEM;
	}
	kmr->addr = mr->nsegs ? 0 : mr->addr;	/* REG_IOV: the kernel's */
	kmr->length = mr->nsegs ? 0 : mr->length;
	kmr->nsegs = (uint32_t)mr->nsegs;
	for (size_t i = 0; i < mr->nsegs; i++)
		kmr->seg_handles[i] = mr->segs[i].handle;
	kmr->access = mr->access;
	kmr->reg_flags = mr->nsegs ?
			 (mr->reg_flags & ~SWNIC_MR_REG_ODP) | SWNIC_MR_REG_IOV :
			 mr->reg_flags;
	kmr->auth_key = mr->auth_key;
	kmr->npeers = mr->npeers;
	kmr->peer = mr->peer;
	kmr->refs = 1;
	swnic_list_init(&kmr->node);
	swnic_list_init(&kmr->lru);
	ret = swnic_kmr_reg_reclaim(dom, kmr, mr->requested_key);
	if (ret) {
		free(kmr);
		swnic_mr_unregister_segs(mr, mr->nsegs);
		return ret;
	}
	mr->kmr = kmr;
	return 0;
}

static void swnic_mr_unregister(struct swnic_mr *mr)
{
	if (!mr->kmr)
		return;
	if (mr->cacheable) {
		swnic_mr_cache_put(mr->domain, mr->kmr);
	} else {
		swnic_kmr_dereg(mr->domain, mr->kmr);
		free(mr->kmr);
		swnic_mr_unregister_segs(mr, mr->nsegs);
	}
	mr->kmr = NULL;
}

static void swnic_mr_ready(struct swnic_mr *mr)
{
	mr->mr_fid.key = mr->kmr->key;
	mr->state = SWNIC_MR_READY;
}

/* ---- asynchronous registration (FI_REG_MR) ----------------------------- */

static void *swnic_mr_async_worker(void *arg)
{
	struct swnic_domain *dom = arg;
	struct swnic_mr_async *async = dom->mr_async;
	struct swnic_mr *mr;
	struct swnic_eq *eq;
	int ret;

	pthread_mutex_lock(&async->lock);
	for (;;) {
		while (swnic_list_empty(&async->queue) && !async->stop)
			pthread_cond_wait(&async->cond, &async->lock);
		if (swnic_list_empty(&async->queue))
			break;
		mr = swnic_list_entry(async->queue.next, struct swnic_mr,
				      async_node);
		swnic_list_del(&mr->async_node);
		pthread_mutex_unlock(&async->lock);

		ret = swnic_mr_register(mr);
		eq = dom->eq;

		pthread_mutex_lock(&async->lock);
		if (ret)
			mr->state = SWNIC_MR_FAILED;
		else
			swnic_mr_ready(mr);
		pthread_cond_broadcast(&async->cond);
		/* Report under the lock: the MR cannot be closed under us. */
		if (ret)
			swnic_eq_report_err(eq, &mr->mr_fid.fid, mr->context,
					    0, -ret, -ret);
		else
			swnic_eq_report(eq, FI_MR_COMPLETE, &mr->mr_fid.fid,
					mr->context, 0);
	}
	pthread_mutex_unlock(&async->lock);
	return NULL;
}

static int swnic_mr_async_start(struct swnic_domain *dom)
{
	struct swnic_mr_async *async;
	int ret = 0;

	pthread_mutex_lock(&dom->ctl_lock);
	if (dom->mr_async)
		goto out;
	async = calloc(1, sizeof(*async));
	if (!async) {
		ret = -FI_ENOMEM;
		goto out;
	}
	pthread_mutex_init(&async->lock, NULL);
	pthread_cond_init(&async->cond, NULL);
	swnic_list_init(&async->queue);
	dom->mr_async = async;
	ret = -pthread_create(&async->thread, NULL, swnic_mr_async_worker, dom);
	if (ret) {
		dom->mr_async = NULL;
		pthread_cond_destroy(&async->cond);
		pthread_mutex_destroy(&async->lock);
		free(async);
	}
out:
	pthread_mutex_unlock(&dom->ctl_lock);
	return ret;
}

static void swnic_mr_async_stop(struct swnic_domain *dom)
{
	struct swnic_mr_async *async = dom->mr_async;

	if (!async)
		return;
	pthread_mutex_lock(&async->lock);
	async->stop = true;
	pthread_cond_broadcast(&async->cond);
	pthread_mutex_unlock(&async->lock);
	pthread_join(async->thread, NULL);
	pthread_cond_destroy(&async->cond);
	pthread_mutex_destroy(&async->lock);
	free(async);
	dom->mr_async = NULL;
}

/* ---- the MR fid ------------------------------------------------------------ */

/*
 * The device memory @count descriptors name (fi_mr_desc of MRs of this
 * provider, or NULL): the first one registered with an iface other than
 * FI_HMEM_SYSTEM, else FI_HMEM_SYSTEM.
 */
void swnic_desc_hmem(void **desc, size_t count, struct swnic_hmem *hmem)
{
	hmem->iface = FI_HMEM_SYSTEM;
	hmem->device = 0;
	for (size_t i = 0; desc && i < count; i++) {
		const struct swnic_mr *mr = desc[i];

		if (mr && mr->mr_fid.fid.ops == &swnic_mr_fi_ops &&
		    mr->iface != FI_HMEM_SYSTEM) {
			hmem->iface = mr->iface;
			hmem->device = mr->device;
			return;
		}
	}
}

/*
 * The MR a receive into [@addr, @addr + @len) names (SWNIC_RQE_MR), or 0:
 * the kernel then writes the pinned pages of that registration of the
 * buffer rather than pin the buffer for each message. The one @desc names
 * if it is a pinned registration of the buffer, else one the cache holds
 * (from recv_reg_min bytes on).
 */
uint32_t swnic_mr_recv_handle(struct swnic_domain *dom, void *desc,
			      uint64_t addr, uint64_t len)
{
	const struct swnic_mr *mr = desc;
	const struct swnic_kmr *kmr;

	if (!(dom->dev.attr.features & SWNIC_FEAT_RECV_MR) || !len)
		return 0;
	if (mr && mr->mr_fid.fid.ops == &swnic_mr_fi_ops &&
	    mr->domain == dom) {
		kmr = mr->kmr;
		if (kmr && swnic_kmr_recv_covers(kmr, addr, len))
			return kmr->handle;
	}
	if (!swnic_params.recv_reg_min || len < swnic_params.recv_reg_min ||
	    swnic_params.mr_odp)
		return 0;
	return swnic_mr_cache_recv(dom, addr, len);
}

/*
 * MR objects: the domain keeps the last one freed for the next
 * registration. A registration the cache serves costs little more than
 * its allocation (a register + close pair that reuses it frees nothing).
 */
static struct swnic_mr *swnic_mr_alloc(struct swnic_domain *dom)
{
	struct swnic_mr *mr = atomic_exchange(&dom->mr_spare, NULL);

	return mr ? mr : malloc(sizeof(*mr));
}

static void swnic_mr_free(struct swnic_mr *mr)
{
	struct swnic_mr *old;

	free(mr->segs);
	old = atomic_exchange(&mr->domain->mr_spare, mr);
	free(old);
}

static int swnic_mr_close(struct fid *fid)
{
	struct swnic_mr *mr =
		swnic_container_of(fid, struct swnic_mr, mr_fid.fid);
	struct swnic_domain *dom = mr->domain;
	struct swnic_mr_async *async = dom->mr_async;
	struct swnic_cntr *cntr;

	/* A queued registration finishes (and reports) before the close. */
	if (async) {
		pthread_mutex_lock(&async->lock);
		while (mr->state == SWNIC_MR_PENDING)
			pthread_cond_wait(&async->cond, &async->lock);
		pthread_mutex_unlock(&async->lock);
	}
	swnic_mr_unregister(mr);
	cntr = atomic_load(&mr->cntr);
	if (cntr)
		swnic_cntr_bind(cntr, -1);
	/* Kept for reuse before the domain may close (and free it). */
	swnic_mr_free(mr);
	swnic_domain_child(dom, SWNIC_CHILD_MR, -1);
	return 0;
}

/*
 * fi_mr_bind to a counter (FI_MR_RMA_EVENT): the kernel counts every peer
 * access to the region it admits, of the kinds @flags names, in the
 * counter's success value (SWNIC_IOCTL_MR_BIND_CNTR). One counter per MR,
 * of its domain (kernel counter ids are per domain), held until the MR
 * closes: fi_close of the counter is -FI_EBUSY meanwhile (fi_cntr(3)).
 */
static int swnic_mr_bind_cntr(struct swnic_mr *mr, struct fid *bfid,
			      uint64_t flags)
{
	struct swnic_domain *dom = mr->domain;
	struct swnic_cntr *cntr = swnic_cntr_of(bfid), *none = NULL;
	struct swnic_mr_bind_cntr b = { .size = sizeof(b) };

	if (!cntr)
		return -FI_EINVAL;
	if (swnic_cntr_domain(cntr) != dom) {
		SWNIC_WARN(FI_LOG_MR, "fi_mr_bind: a counter of another domain\n");
		return -FI_EINVAL;
	}
	if (flags & ~(FI_REMOTE_READ | FI_REMOTE_WRITE))
		return -FI_EBADFLAGS;
	if (!flags)
		return -FI_EINVAL;
	if (!(dom->dev.attr.features & SWNIC_FEAT_MR_CNTR)) {
		SWNIC_WARN(FI_LOG_MR,
			   "%s: the kernel has no per-MR counters (SWNIC_FEAT_MR_CNTR)\n",
			   dom->dev.name);
		return -FI_ENOSYS;
	}
	if (mr->state != SWNIC_MR_READY || !mr->kmr)
		return -FI_EOPBADSTATE;
	/* As the kernel: one counter per MR. */
	if (!atomic_compare_exchange_strong(&mr->cntr, &none, cntr))
		return -FI_EBUSY;
	swnic_cntr_bind(cntr, 1);
	/* A cached region has no remote access: nothing will ever count. */
	if (mr->cacheable)
		return 0;
	b.handle = mr->kmr->handle;
	b.cntr_id = swnic_cntr_kernel_id(cntr);
	if (flags & FI_REMOTE_READ)
		b.flags |= SWNIC_MR_BIND_REMOTE_READ;
	if (flags & FI_REMOTE_WRITE)
		b.flags |= SWNIC_MR_BIND_REMOTE_WRITE;
	if (ioctl(dom->fd, SWNIC_IOCTL_MR_BIND_CNTR, &b)) {
		int err = errno;

		SWNIC_WARN(FI_LOG_MR, "MR counter: %s\n", strerror(err));
		atomic_store(&mr->cntr, NULL);
		swnic_cntr_bind(cntr, -1);
		return err == EBUSY ? -FI_EBUSY : -err;
	}
	return 0;
}

static int swnic_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct swnic_mr *mr =
		swnic_container_of(fid, struct swnic_mr, mr_fid.fid);
	struct swnic_ep *ep;

	if (!bfid)
		return -FI_EINVAL;
	switch (bfid->fclass) {
	case FI_CLASS_CNTR:
		return swnic_mr_bind_cntr(mr, bfid, flags);
	case FI_CLASS_EP:
	case FI_CLASS_SEP:
	case FI_CLASS_TX_CTX:
	case FI_CLASS_RX_CTX:
		/*
		 * FI_MR_ENDPOINT: swnic registers per domain and never
		 * requires it; an application that binds anyway may, to an
		 * endpoint of the MR's domain - a scalable endpoint or one
		 * of its contexts too (the region stays reachable through
		 * every endpoint of the domain).
		 */
		ep = bfid->fclass == FI_CLASS_SEP ?
		     swnic_sep_handle_of_fid(bfid) :
		     swnic_ep_or_ctx_of_fid(bfid);
		if (!ep || ep->domain != mr->domain)
			return -FI_EINVAL;
		if (flags)
			return -FI_EBADFLAGS;
		return 0;
	default:
		return -FI_EINVAL;
	}
}

/* fi_mr_refresh: the pages behind the range changed; pin/fault them again. */
static int swnic_mr_refresh(struct swnic_mr *mr, struct fi_mr_modify *mod)
{
	struct swnic_mr_refresh ref = { .size = sizeof(ref) };
	size_t i;

	if (!mod)
		return -FI_EINVAL;
	if (mod->flags)
		return -FI_EBADFLAGS;
	for (i = 0; i < mod->attr.iov_count; i++) {
		uint64_t a = (uintptr_t)mod->attr.mr_iov[i].iov_base;
		uint64_t l = mod->attr.mr_iov[i].iov_len;
		bool in = !mr->nsegs &&
			  swnic_range_within(a, l, mr->addr, mr->length);

		/* A multi-range MR: within one of its ranges. */
		for (size_t j = 0; j < mr->nsegs && !in; j++)
			in = swnic_range_within(a, l, mr->segs[j].addr,
						mr->segs[j].length);
		if (!in)
			return -FI_EINVAL;
	}
	if (mr->state != SWNIC_MR_READY)
		return -FI_EOPBADSTATE;
	ref.handle = mr->kmr->handle;
	if (ioctl(mr->domain->fd, SWNIC_IOCTL_MR_REFRESH, &ref))
		return -errno;
	return 0;
}

/* fi_mr_raw_attr: the key as bytes, and the base peers address from. */
static int swnic_mr_raw(struct swnic_mr *mr, struct fi_mr_raw_attr *raw)
{
	if (!raw || !raw->key_size)
		return -FI_EINVAL;
	if (raw->flags)
		return -FI_EBADFLAGS;
	if (mr->state != SWNIC_MR_READY)
		return -FI_EOPBADSTATE;
	if (*raw->key_size < sizeof(uint64_t)) {
		*raw->key_size = sizeof(uint64_t);
		return -FI_ETOOSMALL;
	}
	if (raw->base_addr)
		*raw->base_addr = mr->reg_flags & SWNIC_MR_REG_VIRT_ADDR ?
				  mr->addr : 0;
	if (raw->raw_key)
		memcpy(raw->raw_key, &mr->kmr->key, sizeof(uint64_t));
	*raw->key_size = sizeof(uint64_t);
	return 0;
}

static int swnic_mr_control(struct fid *fid, int command, void *arg)
{
	struct swnic_mr *mr =
		swnic_container_of(fid, struct swnic_mr, mr_fid.fid);

	switch (command) {
	case FI_REFRESH:
		return swnic_mr_refresh(mr, arg);
	case FI_ENABLE:
		/*
		 * MRs are enabled when registered (swnic requires neither
		 * FI_MR_RMA_EVENT nor FI_MR_ENDPOINT); counters and endpoints
		 * may be bound before or after.
		 */
		return 0;
	case FI_GET_RAW_MR:
		return swnic_mr_raw(mr, arg);
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops swnic_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_mr_close,
	.bind = swnic_mr_bind,
	.control = swnic_mr_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

#if SWNIC_FI_HAVE_2
/*
 * FI_AV_AUTH_KEY: the fi_mr_auth_key of a registration. src_addr
 * FI_ADDR_UNSPEC: every key of the AV. Else (FI_DIRECTED_RECV domains)
 * the one peer the region is limited to, which the kernel enforces
 * (SWNIC_MR_REG_PEERS): with FI_AUTH_KEY an auth key handle (any address
 * that comes with that key), else an address of the AV (that endpoint,
 * with the key it was inserted with; none: the domain's).
 */
static int swnic_mr_limit(struct swnic_domain *dom,
			  const struct fi_mr_attr *attr, uint64_t flags,
			  struct swnic_mr *mr)
{
	uint32_t keys[SWNIC_EP_AUTH_KEYS_MAX], nkeys, kslot;
	struct fi_mr_auth_key mak;
	struct sockaddr_in sin;
	struct swnic_av *av;
	int ret;

	if (attr->auth_key_size != sizeof(mak) || !attr->auth_key)
		return -FI_EINVAL;
	memcpy(&mak, attr->auth_key, sizeof(mak));
	if (mak.src_addr == FI_ADDR_UNSPEC)
		return flags & FI_AUTH_KEY ? -FI_EINVAL : 0;
	if (!(dom->caps & FI_DIRECTED_RECV)) {
		SWNIC_WARN(FI_LOG_MR,
			   "fi_mr_auth_key.src_addr needs a FI_DIRECTED_RECV domain\n");
		return -FI_EINVAL;
	}
	if (!(dom->dev.attr.features & SWNIC_FEAT_MR_PEERS)) {
		SWNIC_WARN(FI_LOG_MR,
			   "%s: the kernel cannot limit a region to some peers\n",
			   dom->dev.name);
		return -FI_EOPNOTSUPP;
	}
	av = mak.av ? swnic_av_of(&mak.av->fid) : NULL;
	if (!av)
		return -FI_EINVAL;
	if (flags & FI_AUTH_KEY) {
		kslot = swnic_av_key_handle(av, mak.src_addr);
		if (!kslot)
			return -FI_EINVAL;
	} else {
		ret = swnic_av_addr(av, mak.src_addr, &sin, &kslot);
		if (ret)
			return ret;
		mr->peer.flags = SWNIC_MR_PEER_ADDR;
		mr->peer.addr = sin.sin_addr.s_addr;
		mr->peer.port = ntohs(sin.sin_port);
	}
	/* The key's value; slot 0 (an address without one): the domain's. */
	nkeys = swnic_av_auth_keys(av, keys);
	if (kslot > nkeys)
		return -FI_EINVAL;
	mr->peer.auth_key = kslot ? keys[kslot - 1] : 0;
	mr->npeers = 1;
	mr->reg_flags |= SWNIC_MR_REG_PEERS;
	return 0;
}
#endif

/* Validate a registration request and fill in an MR (not registered). */
static int swnic_mr_prepare(struct swnic_domain *dom,
			    const struct fi_mr_attr *attr, uint64_t flags,
			    uint64_t swnic_flags, struct swnic_mr *mr)
{
	bool v15 = !FI_VERSION_LT(dom->api_version, FI_VERSION(1, 5));
	bool basic = dom->mr_mode & SWNIC_MR_BASIC ||
		     (!v15 && dom->mr_mode == SWNIC_MR_UNSPEC);
	bool odp = dom->mr_odp;
	uint64_t known_flags = 0;
	enum fi_hmem_iface iface = FI_HMEM_SYSTEM;

	if (!attr || !attr->mr_iov)
		return -FI_EINVAL;
	if (!attr->iov_count || attr->iov_count > dom->dev.attr.mr_iov_limit) {
		SWNIC_WARN(FI_LOG_MR, "iov_count %zu (mr_iov_limit %u)\n",
			   attr->iov_count, dom->dev.attr.mr_iov_limit);
		return -FI_EINVAL;
	}
	/* As the kernel: no empty range, none past the address space. */
	for (size_t i = 0; i < attr->iov_count; i++)
		if (!attr->mr_iov[i].iov_len ||
		    attr->mr_iov[i].iov_len >
		    UINTPTR_MAX - (uintptr_t)attr->mr_iov[i].iov_base)
			return -FI_EINVAL;
	/*
	 * fi_mr(3): iface (from API 1.10 on) "is ignored unless the
	 * application has requested the FI_HMEM capability", which swnic
	 * never offers; device memory is the HMEM override's (fi_set_ops),
	 * which the application asks for. Without it the region is host
	 * memory, whatever iface says.
	 */
	if (!FI_VERSION_LT(dom->api_version, FI_VERSION(1, 10)) &&
	    (dom->hmem_override || (dom->info_caps & FI_HMEM)))
		iface = attr->iface;
	else if (attr->iface != FI_HMEM_SYSTEM)
		SWNIC_INFO(FI_LOG_MR, "iface %d ignored: no FI_HMEM, no HMEM override\n",
			   attr->iface);
	if (attr->iov_count > 1 && iface != FI_HMEM_SYSTEM) {
		SWNIC_WARN(FI_LOG_MR, "several iovs of device memory\n");
		return -FI_EOPNOTSUPP;
	}
	if (attr->offset) {
		SWNIC_WARN(FI_LOG_MR, "offset is reserved and must be 0\n");
		return -FI_EINVAL;
	}
	if (!attr->access || attr->access & ~(SWNIC_FI_ACCESS | FI_COLLECTIVE)) {
		SWNIC_WARN(FI_LOG_MR, "access %#llx invalid\n",
			   (unsigned long long)attr->access);
		return -FI_EINVAL;
	}
	if (iface != FI_HMEM_SYSTEM) {
		/* Copied through the override: swnic reaches host memory only. */
		if (!dom->hmem_override)
			return -FI_EOPNOTSUPP;
		if (attr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) {
			SWNIC_WARN(FI_LOG_MR,
				   "iface %d: peers cannot reach device memory (the kernel places remote accesses)\n",
				   iface);
			return -FI_EOPNOTSUPP;
		}
		mr->iface = iface;
		mr->device = attr->device.reserved;
	}
#if SWNIC_FI_HAVE_2
	/* The region's src_addr is an auth key handle (swnic_mr_limit). */
	if ((flags & FI_AUTH_KEY) && !dom->av_auth_key) {
		SWNIC_WARN(FI_LOG_MR, "FI_AUTH_KEY: the domain is not FI_AV_AUTH_KEY\n");
		return -FI_EINVAL;
	}
	known_flags |= FI_AUTH_KEY;
#endif
	/* fi_mr(3): a region to be bound to counters (FI_MR_RMA_EVENT). */
	known_flags |= FI_RMA_EVENT;
	if (flags & ~known_flags) {
		SWNIC_WARN(FI_LOG_MR, "registration flags %#llx not supported\n",
			   (unsigned long long)flags);
		return -FI_EBADFLAGS;
	}
	if (swnic_flags & ~(FI_SWNIC_MR_ODP | FI_SWNIC_MR_PINNED) ||
	    (swnic_flags & FI_SWNIC_MR_ODP && swnic_flags & FI_SWNIC_MR_PINNED))
		return -FI_EBADFLAGS;
	if (swnic_flags & FI_SWNIC_MR_ODP)
		odp = true;
	if (swnic_flags & FI_SWNIC_MR_PINNED)
		odp = false;
	if (odp && !(dom->dev.attr.features & SWNIC_FEAT_MR_ODP)) {
		SWNIC_WARN(FI_LOG_MR, "%s: the kernel has no on-demand registration\n",
			   dom->dev.name);
		return -FI_EOPNOTSUPP;
	}

	mr->domain = dom;
	mr->addr = (uintptr_t)attr->mr_iov[0].iov_base;
	mr->length = attr->mr_iov[0].iov_len;
	if (attr->iov_count > 1) {
		/* Peers address the concatenation (SWNIC_MR_REG_IOV). */
		mr->segs = calloc(attr->iov_count, sizeof(*mr->segs));
		if (!mr->segs)
			return -FI_ENOMEM;
		mr->nsegs = attr->iov_count;
		for (size_t i = 0; i < attr->iov_count; i++) {
			mr->segs[i].addr = (uintptr_t)attr->mr_iov[i].iov_base;
			mr->segs[i].length = attr->mr_iov[i].iov_len;
		}
		for (size_t i = 1; i < attr->iov_count; i++) {
			if (mr->length + attr->mr_iov[i].iov_len < mr->length)
				return -FI_EINVAL;
			mr->length += attr->mr_iov[i].iov_len;
		}
	}
	mr->access = swnic_mr_access(attr->access);
	mr->context = attr->context;
	mr->auth_key = 0;		/* the kernel domain's key */
#if SWNIC_FI_HAVE_2
	/*
	 * FI_AV_AUTH_KEY: the region is reachable with every key of the AV
	 * that an endpoint of the domain holds (the kernel lets RMA sent
	 * with a key the target endpoint holds reach its domain's MRs), or
	 * with FI_DIRECTED_RECV and a src_addr, only by that peer.
	 */
	if (dom->av_auth_key && attr->auth_key_size) {
		int ret = swnic_mr_limit(dom, attr, flags, mr);

		if (ret)
			return ret;
		goto keyed;
	}
	if (flags & FI_AUTH_KEY)
		return -FI_EINVAL;	/* no fi_mr_auth_key to apply it to */
#endif
	if (v15 && attr->auth_key_size) {
		if (attr->auth_key_size != sizeof(uint32_t) || !attr->auth_key)
			return -FI_EINVAL;
		memcpy(&mr->auth_key, attr->auth_key, sizeof(uint32_t));
	}
#if SWNIC_FI_HAVE_2
keyed:
#endif
	if (basic || dom->mr_mode & FI_MR_VIRT_ADDR)
		mr->reg_flags |= SWNIC_MR_REG_VIRT_ADDR;
	if (!basic && !(dom->mr_mode & FI_MR_PROV_KEY)) {
		mr->reg_flags |= SWNIC_MR_REG_USER_KEY;
		mr->requested_key = attr->requested_key;
	}
	if (odp)
		mr->reg_flags |= SWNIC_MR_REG_ODP;
	mr->cacheable = swnic_mr_cache_enabled(dom) && !odp && !mr->nsegs &&
			!(mr->access & (SWNIC_MR_ACCESS_REMOTE_READ |
					SWNIC_MR_ACCESS_REMOTE_WRITE)) &&
			!mr->npeers &&
			!(mr->reg_flags & SWNIC_MR_REG_USER_KEY);

	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = &swnic_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = FI_KEY_NOTAVAIL;
	return 0;
}

static int swnic_mr_create(struct swnic_domain *dom,
			   const struct fi_mr_attr *attr, uint64_t flags,
			   uint64_t swnic_flags, struct fid_mr **mr_fid)
{
	struct swnic_mr_async *async;
	struct swnic_mr *mr;
	int ret;

	if (!mr_fid)
		return -FI_EINVAL;
	if (!(dom->dev.attr.features & SWNIC_FEAT_MR)) {
		SWNIC_WARN(FI_LOG_MR, "%s: the kernel has no memory registration\n",
			   dom->dev.name);
		return -FI_ENOSYS;
	}
	mr = swnic_mr_alloc(dom);
	if (!mr)
		return -FI_ENOMEM;
	*mr = (struct swnic_mr){ .domain = dom };
	ret = swnic_mr_prepare(dom, attr, flags, swnic_flags, mr);
	if (ret)
		goto err_free;
	if (mr->iface != FI_HMEM_SYSTEM) {
		/* Local access only, staged by the override: nothing to pin. */
		mr->state = SWNIC_MR_READY;
		swnic_domain_child(dom, SWNIC_CHILD_MR, 1);
		*mr_fid = &mr->mr_fid;
		if (dom->eq && (dom->eq_flags & SWNIC_REG_MR))
			swnic_eq_report(dom->eq, FI_MR_COMPLETE,
					&mr->mr_fid.fid, mr->context, 0);
		return 0;
	}

	if (dom->eq && (dom->eq_flags & SWNIC_REG_MR)) {
		ret = swnic_mr_async_start(dom);
		if (ret)
			goto err_free;
		async = dom->mr_async;
		mr->state = SWNIC_MR_PENDING;
		swnic_domain_child(dom, SWNIC_CHILD_MR, 1);
		pthread_mutex_lock(&async->lock);
		swnic_list_add_tail(&async->queue, &mr->async_node);
		pthread_cond_broadcast(&async->cond);
		pthread_mutex_unlock(&async->lock);
		*mr_fid = &mr->mr_fid;
		return 0;
	}

	ret = swnic_mr_register(mr);
	if (ret)
		goto err_free;
	swnic_mr_ready(mr);
	swnic_domain_child(dom, SWNIC_CHILD_MR, 1);
	*mr_fid = &mr->mr_fid;
	return 0;

err_free:
	swnic_mr_free(mr);
	return ret;
}

static struct swnic_domain *swnic_mr_domain(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_DOMAIN)
		return NULL;
	return swnic_container_of(fid, struct swnic_domain, domain_fid.fid);
}

static int swnic_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			    uint64_t flags, struct fid_mr **mr)
{
	struct swnic_domain *dom = swnic_mr_domain(fid);

	if (!dom)
		return -FI_EINVAL;
	return swnic_mr_create(dom, attr, flags, 0, mr);
}

static int swnic_mr_regv(struct fid *fid, const struct iovec *iov,
			 size_t count, uint64_t access, uint64_t offset,
			 uint64_t requested_key, uint64_t flags,
			 struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return swnic_mr_regattr(fid, &attr, flags, mr);
}

static int swnic_mr_reg(struct fid *fid, const void *buf, size_t len,
			uint64_t access, uint64_t offset,
			uint64_t requested_key, uint64_t flags,
			struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return swnic_mr_regv(fid, &iov, 1, access, offset, requested_key,
			     flags, mr, context);
}

struct fi_ops_mr swnic_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = swnic_mr_reg,
	.regv = swnic_mr_regv,
	.regattr = swnic_mr_regattr,
};

/* ---- domain setup and FI_SWNIC_DOMAIN_OPS_1 --------------------------- */

int swnic_mr_domain_init(struct swnic_domain *dom)
{
	bool target = dom->info_caps & (FI_RMA | FI_ATOMIC) &&
		      (!(dom->info_caps & (FI_READ | FI_WRITE | FI_REMOTE_READ |
					   FI_REMOTE_WRITE)) ||
		       dom->info_caps & (FI_REMOTE_READ | FI_REMOTE_WRITE));
	bool unbacked = !(dom->mr_mode & (FI_MR_ALLOCATED | SWNIC_MR_BASIC)) &&
			!(FI_VERSION_LT(dom->api_version, FI_VERSION(1, 5)) &&
			  dom->mr_mode == SWNIC_MR_UNSPEC);

	/* Peers may target ranges not backed yet: register on demand. */
	dom->mr_odp = swnic_params.mr_odp || (target && unbacked);
	if (dom->mr_odp && !(dom->dev.attr.features & SWNIC_FEAT_MR_ODP)) {
		SWNIC_INFO(FI_LOG_MR,
			   "%s: no on-demand registration in the kernel: pinning\n",
			   dom->dev.name);
		dom->mr_odp = false;
	}
	return swnic_mr_cache_init(dom);
}

void swnic_mr_domain_fini(struct swnic_domain *dom)
{
	swnic_mr_async_stop(dom);
	swnic_mr_cache_fini(dom);
	free(atomic_exchange(&dom->mr_spare, NULL));
}

static int swnic_ext_query_stats(struct fid_domain *domain,
				 struct fi_swnic_stats *stats)
{
	struct swnic_domain *dom =
		swnic_container_of(domain, struct swnic_domain, domain_fid);
	struct swnic_mr_query q = {
		.size = sizeof(q),
		.flags = SWNIC_MR_QUERY_COUNTERS,
	};
	struct fi_swnic_stats s = { .size = sizeof(s) };

	if (!stats || stats->size < offsetof(struct fi_swnic_stats, cache_hits))
		return -FI_EINVAL;
	if (dom->dev.attr.features & SWNIC_FEAT_MR) {
		if (ioctl(dom->fd, SWNIC_IOCTL_MR_QUERY, &q))
			return -errno;
		s.domain = q.domain;
		s.device = q.device;
	}
	swnic_mr_cache_stats(dom, &s);
	memcpy(stats, &s, stats->size < sizeof(s) ? stats->size : sizeof(s));
	stats->size = stats->size < sizeof(s) ? stats->size : sizeof(s);
	return 0;
}

static int swnic_ext_mr_regattr(struct fid_domain *domain,
				const struct fi_mr_attr *attr, uint64_t flags,
				uint64_t swnic_flags, struct fid_mr **mr)
{
	struct swnic_domain *dom = swnic_mr_domain(domain ? &domain->fid : NULL);

	if (!dom)
		return -FI_EINVAL;
	return swnic_mr_create(dom, attr, flags, swnic_flags, mr);
}

int swnic_domain_inval_page(struct fid_domain *domain,
			    struct fi_swnic_inval_page *page)
{
	struct swnic_domain *dom =
		swnic_container_of(domain, struct swnic_domain, domain_fid);
	int ret;

	if (!page || page->size < sizeof(*page))
		return -FI_EINVAL;
	ret = swnic_inval_map(dom);
	if (ret)
		return ret;
	page->page = dom->inval;
	page->length = dom->inval_len;
	page->ring = dom->inval_ring;
	page->entries = dom->inval_entries;
	return 0;
}

static int swnic_ext_mr_query(struct fid_mr *mr_fid,
			      struct swnic_mr_query *query)
{
	struct swnic_mr *mr;

	if (!mr_fid || !query || mr_fid->fid.ops != &swnic_mr_fi_ops)
		return -FI_EINVAL;
	mr = swnic_container_of(mr_fid, struct swnic_mr, mr_fid);
	if (mr->state != SWNIC_MR_READY)
		return -FI_EOPBADSTATE;
	query->handle = mr->kmr->handle;
	query->flags &= ~SWNIC_MR_QUERY_COUNTERS;
	return ioctl(mr->domain->fd, SWNIC_IOCTL_MR_QUERY, query) ? -errno : 0;
}

static int swnic_ext_query_device(struct fid_domain *domain,
				  struct swnic_query_device *attr)
{
	struct swnic_domain *dom =
		swnic_container_of(domain, struct swnic_domain, domain_fid);

	if (!attr)
		return -FI_EINVAL;
	return ioctl(dom->fd, SWNIC_IOCTL_QUERY_DEVICE, attr) ? -errno : 0;
}

static struct fi_swnic_ops_domain swnic_domain_ext_ops = {
	.size = sizeof(struct fi_swnic_ops_domain),
	.query_device = swnic_ext_query_device,
	.query_stats = swnic_ext_query_stats,
	.mr_regattr = swnic_ext_mr_regattr,
	.inval_page = swnic_domain_inval_page,
	.mr_query = swnic_ext_mr_query,
};

int swnic_mr_open_ops(struct swnic_domain *dom, void **ops)
{
	*ops = &swnic_domain_ext_ops;
	return 0;
}
