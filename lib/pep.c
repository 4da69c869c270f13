// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Passive endpoints (fi_endpoint(3) fi_passive_ep, fi_cm(3) fi_listen,
 * fi_reject): an FI_EP_MSG listener. Listening opens a CM port of its own
 * at the endpoint's address; connection requests arriving there become
 * FI_CONNREQ events on the bound EQ (cm.c, which also runs the rest of
 * the connection). Options: FI_OPT_CM_DATA_SIZE only.
 */
#include <stdlib.h>

#include "cm.h"

#define swnic_pep_of(f) swnic_container_of(f, struct swnic_pep, pep_fid.fid)

static int swnic_pep_close(struct fid *fid)
{
	struct swnic_pep *pep = swnic_pep_of(fid);
	struct swnic_cm_port *port;

	swnic_cm_pep_del(pep);
	pthread_mutex_lock(&swnic_cm_lock);
	port = pep->port;
	pep->port = NULL;
	if (port)
		swnic_cm_port_drop_pep(port);
	pthread_mutex_unlock(&swnic_cm_lock);
	if (port)
		swnic_cm_port_close(port);
	if (pep->eq)
		swnic_eq_bind_put(pep->eq);
	swnic_fabric_child(pep->fabric, &pep->fabric->npeps, -1);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static int swnic_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct swnic_pep *pep = swnic_pep_of(fid);
	struct swnic_eq *eq = swnic_eq_from_fid(bfid);

	if (!eq)
		return bfid ? -FI_ENOSYS : -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (swnic_eq_bind_check(eq, pep->fabric, FI_LOG_EP_CTRL,
				"fi_pep_bind"))
		return -FI_EINVAL;
	pthread_mutex_lock(&swnic_cm_lock);
	if (pep->eq) {
		pthread_mutex_unlock(&swnic_cm_lock);
		return -FI_EINVAL;
	}
	pep->eq = eq;
	swnic_eq_bind_get(eq);
	pthread_mutex_unlock(&swnic_cm_lock);
	return 0;
}

/* fi_control FI_BACKLOG (fi_endpoint(3)): the requests held unanswered. */
static int swnic_pep_control(struct fid *fid, int command, void *arg)
{
	struct swnic_pep *pep = swnic_pep_of(fid);
	int backlog;

	if (command != FI_BACKLOG)
		return -FI_ENOSYS;
	if (!arg)
		return -FI_EINVAL;
	backlog = *(int *)arg;
	if (backlog <= 0)
		return -FI_EINVAL;
	pthread_mutex_lock(&swnic_cm_lock);
	pep->backlog = (unsigned int)backlog;
	pthread_mutex_unlock(&swnic_cm_lock);
	return 0;
}

static struct fi_ops swnic_pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_pep_close,
	.bind = swnic_pep_bind,
	.control = swnic_pep_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static int swnic_pep_listen(struct fid_pep *pep_fid)
{
	struct swnic_pep *pep = swnic_pep_of(&pep_fid->fid);
	struct swnic_cm_port *port;
	struct sockaddr_in bind;
	int ret;

	if (!pep->eq) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "fi_listen: no EQ bound\n");
		return -FI_ENOEQ;
	}
	/*
	 * Claim it under the lock before opening a port: of two threads
	 * listening at once one opens it, the other is told it is busy.
	 */
	pthread_mutex_lock(&swnic_cm_lock);
	if (pep->port)
		ret = 0;		/* listening already */
	else if (pep->listening)
		ret = -FI_EBUSY;	/* another thread is opening its port */
	else
		ret = 1;
	pep->listening = true;
	bind = pep->addr;
	pthread_mutex_unlock(&swnic_cm_lock);
	if (ret <= 0)
		return ret;
	ret = swnic_cm_port_open(pep->fabric, pep->info->domain_attr->name,
				 &bind, pep, &port);
	pthread_mutex_lock(&swnic_cm_lock);
	if (ret) {
		pep->listening = false;
	} else {
		pep->port = port;
		pep->addr = swnic_cm_port_addr(port);
	}
	pthread_mutex_unlock(&swnic_cm_lock);
	return ret;
}

static int swnic_pep_reject(struct fid_pep *pep_fid, fid_t handle,
			    const void *param, size_t paramlen)
{
	struct swnic_pep *pep = swnic_pep_of(&pep_fid->fid);
	int ret;

	/* fi_cm(3): data beyond FI_OPT_CM_DATA_SIZE is truncated (cm.c). */
	if (paramlen && !param)
		return -FI_EINVAL;
	pthread_mutex_lock(&swnic_cm_lock);
	ret = pep->port ? swnic_cm_req_reject(pep, pep->port, handle, param,
					      paramlen) : -FI_EINVAL;
	pthread_mutex_unlock(&swnic_cm_lock);
	return ret;
}

static int swnic_pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct swnic_pep *pep = swnic_pep_of(fid);
	struct sockaddr_in sin;
	int ret;

	ret = swnic_addr_read(pep->addr_format, addr, addrlen, &sin);
	if (ret)
		return ret;
	pthread_mutex_lock(&swnic_cm_lock);
	if (pep->listening)
		ret = -FI_EOPBADSTATE;
	else
		pep->addr.sin_port = sin.sin_port;
	pthread_mutex_unlock(&swnic_cm_lock);
	return ret;
}

static int swnic_pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct swnic_pep *pep = swnic_pep_of(fid);

	if (!addrlen)
		return -FI_EINVAL;
	/* The address is the kernel's once listening. */
	if (!pep->port)
		return -FI_EOPBADSTATE;
	return swnic_addr_copy_out(pep->addr_format, &pep->addr, addr, addrlen);
}

static struct fi_ops_cm swnic_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = swnic_pep_setname,
	.getname = swnic_pep_getname,
	.getpeer = swnic_no_getpeer,
	.connect = swnic_no_connect,
	.listen = swnic_pep_listen,
	.accept = swnic_no_accept,
	.reject = swnic_pep_reject,
	.shutdown = swnic_no_shutdown,
	.join = swnic_no_join,
};

static int swnic_pep_getopt(fid_t fid, int level, int optname, void *optval,
			    size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen || *optlen < sizeof(size_t))
		return -FI_EINVAL;
	*(size_t *)optval = SWNIC_CM_DATA_MAX;
	*optlen = sizeof(size_t);
	return 0;
}

/* Is @fid a swnic passive endpoint (fi_getinfo's hints->handle)? */
bool swnic_is_pep(const struct fid *fid)
{
	return fid && fid->fclass == FI_CLASS_PEP &&
	       fid->ops == &swnic_pep_fi_ops;
}

static struct fi_ops_ep swnic_pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = swnic_no_cancel,
	.getopt = swnic_pep_getopt,
	.setopt = swnic_no_setopt,	/* CM data size is fixed */
	.tx_ctx = swnic_no_tx_ctx,
	.rx_ctx = swnic_no_rx_ctx,
	.rx_size_left = swnic_no_size_left,
	.tx_size_left = swnic_no_size_left,
};

/**
 * swnic_passive_ep() - fi_passive_ep: an FI_EP_MSG listener
 * @fabric: the fabric
 * @info: an FI_EP_MSG fi_info of swnic (its src_addr's port, if any, is
 *        where it listens; else the kernel picks one at fi_listen)
 * @pep_out: the passive endpoint
 * @context: the application's
 */
int swnic_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_pep **pep_out, void *context)
{
	struct swnic_fabric *fab = swnic_fabric_registered(fabric);
	struct swnic_pep *pep;

	if (!fab || !info || !pep_out || !info->ep_attr || !info->domain_attr ||
	    !info->domain_attr->name)
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_MSG) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "passive endpoints are FI_EP_MSG only\n");
		return -FI_EINVAL;
	}
	if (!swnic_addr_format_ok(info->addr_format))
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		free(pep);
		return -FI_ENOMEM;
	}
	pep->fabric = fab;
	pep->addr_format = info->addr_format == FI_FORMAT_UNSPEC ?
			   FI_SOCKADDR_IN : info->addr_format;
	pep->addr.sin_family = AF_INET;
	if (info->src_addr &&
	    swnic_addr_read(info->addr_format, info->src_addr,
			    info->src_addrlen, &pep->addr)) {
		fi_freeinfo(pep->info);
		free(pep);
		return -FI_EINVAL;
	}
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &swnic_pep_fi_ops;
	pep->pep_fid.ops = &swnic_pep_ops;
	pep->pep_fid.cm = &swnic_pep_cm_ops;
	pep->backlog = SWNIC_CM_BACKLOG;
	swnic_cm_pep_add(pep);
	/* The fabric cannot close under it (fi_close -FI_EBUSY). */
	swnic_fabric_child(fab, &fab->npeps, 1);
	*pep_out = &pep->pep_fid;
	return 0;
}
