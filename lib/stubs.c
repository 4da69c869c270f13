// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Operations an object does not support, for the fi_ops_* tables of every
 * object: each only returns the error fi_*(3) gives for it (mostly
 * -FI_ENOSYS). A leaf: it uses libfabric's public headers and its own
 * stubs.h only. Stubs that log a reason stay with their object (ep.c's
 * scalable endpoints and shared contexts, domain.c's poll sets), and so
 * does domain.c's query_collective for now.
 */
#include "stubs.h"

/* ---- fi_ops ------------------------------------------------------------- */

int swnic_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int swnic_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int swnic_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		      void **ops, void *context)
{
	return -FI_ENOSYS;
}

int swnic_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int swnic_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		     void *ops, void *context)
{
	return -FI_ENOSYS;
}

/* ---- fi_ops_ep ---------------------------------------------------------- */

/* Nothing was posted, so nothing can be cancelled. */
ssize_t swnic_no_cancel(fid_t fid, void *context)
{
	return -FI_ENOENT;
}

int swnic_no_setopt(fid_t fid, int level, int optname, const void *optval,
		    size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

int swnic_no_getopt(fid_t fid, int level, int optname, void *optval,
		    size_t *optlen)
{
	return -FI_ENOPROTOOPT;
}

int swnic_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		    struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

int swnic_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

ssize_t swnic_no_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

/* ---- fi_ops_cm ------------------------------------------------------------ */

int swnic_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int swnic_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		     size_t paramlen)
{
	return -FI_ENOSYS;
}

int swnic_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int swnic_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int swnic_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		    size_t paramlen)
{
	return -FI_ENOSYS;
}

int swnic_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int swnic_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		  struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

/* ---- fi_ops_av -------------------------------------------------------------- */

int swnic_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		    struct fid_av_set **av_set, void *context)
{
	return -FI_ENOSYS;
}

