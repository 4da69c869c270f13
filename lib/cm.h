/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * swnic provider - what the connection manager (cm.c) and the passive
 * endpoint (pep.c) share: the passive endpoint's object, whose FI_CONNREQ
 * events cm.c raises when a REQ reaches its port, and the CM port calls a
 * listener needs. Everything here is under swnic_cm_lock unless said.
 */
#ifndef SWNIC_PROV_CM_H
#define SWNIC_PROV_CM_H

#include <pthread.h>

#include "ep.h"

struct swnic_cm_port;

/*
 * Connection requests a passive endpoint holds unanswered (FI_CONNREQ
 * queued or unread, no endpoint opened for it yet) unless fi_control
 * FI_BACKLOG says otherwise: more are rejected at once.
 */
#define SWNIC_CM_BACKLOG	128

struct swnic_pep {
	struct fid_pep pep_fid;
	struct swnic_fabric *fabric;
	struct fi_info *info;
	uint32_t addr_format;
	struct sockaddr_in addr;	/* port 0 until listening, unless set */
	struct swnic_eq *eq;
	struct swnic_cm_port *port;	/* once listening */
	struct swnic_list node;		/* on the CM's list of live ones */
	bool listening;			/* fi_listen claimed it (port opening) */
	unsigned int backlog;		/* FI_BACKLOG: pending requests held */
};

/* Protects the CM's lists, ports' pep and every endpoint's CM state. */
extern pthread_mutex_t swnic_cm_lock;

/*
 * Open a CM port on device @dev of @fab, at @bind's port (or any), for
 * @pep's requests (or NULL: a shared port) and start its thread. Without
 * swnic_cm_lock. Return: 0 and *out, or a negative FI_ errno.
 */
int swnic_cm_port_open(struct swnic_fabric *fab, const char *dev,
		       const struct sockaddr_in *bind, struct swnic_pep *pep,
		       struct swnic_cm_port **out);
/* Stop a port's thread and free it; without swnic_cm_lock. */
void swnic_cm_port_close(struct swnic_cm_port *port);
/* The kernel's address of @port (fixed once open). */
struct sockaddr_in swnic_cm_port_addr(const struct swnic_cm_port *port);
/*
 * @port no longer passes requests to its passive endpoint, which leaves
 * the requests it holds unanswered to no listener. Holds swnic_cm_lock.
 */
void swnic_cm_port_drop_pep(struct swnic_cm_port *port);
/* A passive endpoint is born / goes away (info->handle may name it). */
void swnic_cm_pep_add(struct swnic_pep *pep);
void swnic_cm_pep_del(struct swnic_pep *pep);
/*
 * Answer the unanswered request @handle (FI_CONNREQ's info->handle) of
 * @pep's backlog with REJECT and @param from @port. Return: 0, -FI_EINVAL
 * if @handle is not one (or another listener's), or the send's error
 * (the request stays then).
 */
int swnic_cm_req_reject(const struct swnic_pep *pep,
			struct swnic_cm_port *port, fid_t handle,
			const void *param, size_t paramlen);

#endif /* SWNIC_PROV_CM_H */
