/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * swnic provider - the "not supported" entries of the fi_ops_* tables
 * (stubs.c). Includes libfabric's public headers only.
 */
#ifndef SWNIC_PROV_STUBS_H
#define SWNIC_PROV_STUBS_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

/* fi_ops */
int swnic_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int swnic_no_control(struct fid *fid, int command, void *arg);
int swnic_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		      void **ops, void *context);
int swnic_no_tostr(const struct fid *fid, char *buf, size_t len);
int swnic_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		     void *ops, void *context);

/* fi_ops_ep */
ssize_t swnic_no_cancel(fid_t fid, void *context);
int swnic_no_setopt(fid_t fid, int level, int optname, const void *optval,
		    size_t optlen);
int swnic_no_getopt(fid_t fid, int level, int optname, void *optval,
		    size_t *optlen);
int swnic_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		    struct fid_ep **tx_ep, void *context);
int swnic_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context);
ssize_t swnic_no_size_left(struct fid_ep *ep);

/* fi_ops_cm */
int swnic_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int swnic_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		     size_t paramlen);
int swnic_no_listen(struct fid_pep *pep);
int swnic_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int swnic_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		    size_t paramlen);
int swnic_no_shutdown(struct fid_ep *ep, uint64_t flags);
int swnic_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		  struct fid_mc **mc, void *context);

/* fi_ops_av */
int swnic_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		    struct fid_av_set **av_set, void *context);

/* Atomics (atomic.c): fi_ops_domain's query_atomic, the endpoints' ops. */
int swnic_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		       enum fi_op op, struct fi_atomic_attr *attr,
		       uint64_t flags);
extern struct fi_ops_atomic swnic_atomic_ops;

#endif /* SWNIC_PROV_STUBS_H */
