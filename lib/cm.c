// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection management of FI_EP_MSG endpoints (fi_cm(3)): fi_connect,
 * fi_accept, fi_shutdown and their EQ events (FI_CONNREQ, FI_CONNECTED,
 * FI_SHUTDOWN, FI_ECONNREFUSED errors), the CM ports and their protocol.
 * The passive endpoint (fi_passive_ep, fi_listen, fi_reject) is pep.c's;
 * what the two share is in cm.h.
 *
 * A MSG endpoint's data path is a kernel endpoint like any other whose
 * sends all go to one peer, and which, once connected, takes that peer's
 * sends only (SWNIC_IOCTL_EP_PEER: set before the ACCEPT goes, and by the
 * connector as it takes the ACCEPT). Connections are negotiated by the
 * provider over CM ports: kernel RDM endpoints of an internal domain, one
 * per listening passive endpoint (at its address) and one per fabric and
 * device that the process's connections share. Each port has a thread
 * that reads the port's CQ and queues events on the EQs, so connection
 * events arrive while the application does not read anything (control
 * progress is FI_PROGRESS_AUTO) and the EQ's fd works.
 *
 * The protocol (struct swnic_cm_msg), one message each way per step:
 *
 *   REQ       connecting port -> passive endpoint's port: the active
 *             endpoint's data address, its connection id, the user's data
 *   ACCEPT    accepting endpoint's port -> connecting port: its data
 *             address and connection id. The acceptor reports
 *             FI_CONNECTED once the kernel delivered it, the connector on
 *             receipt.
 *   REJECT    -> connecting port: fi_reject, or no listener took it
 *   SHUTDOWN  either way: fi_shutdown or fi_close of a connected endpoint
 *
 * The peer is where its CM message came from, as the kernel saw it (the
 * CQE's source: an IPv4 address, or an IPv6 peer's name in our own
 * namespace), at the ports the message names. A host's CM ports and data
 * endpoints share its namespace's wire socket and route, so that is the
 * source its data packets carry too, and the one address its kernel
 * answers from - not always the device's address the message gives: a
 * host with several addresses sends from the one its route picks
 * (swnic_cm_sender()).
 *
 * A message names its receiver by connection id. Ids are random 64-bit
 * values, fresh for each connection (only the peer learns one), so a late
 * message for a closed connection finds nothing and is dropped (a late
 * ACCEPT is answered with SHUTDOWN, so the acceptor does not wait for a
 * peer that is gone). A SHUTDOWN must also come from the peer's CM port,
 * as its ACCEPT or REQ named it.
 *
 * Locking: swnic_cm_lock (a control-path mutex, never taken on the data
 * path) protects the connection, request and port lists and every
 * endpoint's cm_state, conn, connreq and peer. Ports are closed (their
 * thread joined) without it.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "cm.h"

#define SWNIC_CM_MAGIC		0x53434d31	/* "SCM1" */
#define SWNIC_CM_RX		16		/* receives a port keeps posted */
#define SWNIC_CM_QUEUE		64		/* a port's SQ and RQ entries */

enum swnic_cm_type {
	SWNIC_CM_MSG_REQ = 1,
	SWNIC_CM_MSG_ACCEPT,
	SWNIC_CM_MSG_REJECT,
	SWNIC_CM_MSG_SHUTDOWN,
};

/*
 * What CM ports send each other (all of one host: native byte order). Of
 * @cm and @data a receiver takes only the data endpoint's port: the
 * sender's address and CM port are what the kernel saw it send from
 * (swnic_cm_sender()).
 */
struct swnic_cm_msg {
	uint32_t magic;
	uint8_t type;			/* enum swnic_cm_type */
	uint8_t pad;
	uint16_t paramlen;		/* bytes of param */
	uint64_t src_id;		/* the sender's connection id */
	uint64_t dst_id;		/* the receiver's (0 in a REQ) */
	struct sockaddr_in cm;		/* the sender's CM port */
	struct sockaddr_in data;	/* the sender's data endpoint */
	uint8_t param[SWNIC_CM_DATA_MAX];
};

#define SWNIC_CM_HDR_LEN	offsetof(struct swnic_cm_msg, param)

struct swnic_cm_port;

/* A posted receive (in the port) or a send in flight (allocated). */
struct swnic_cm_buf {
	bool rx;
	fi_addr_t dest;			/* send: its AV entry */
	struct swnic_cm_msg msg;
};

struct swnic_cm_port {
	struct swnic_list node;		/* on swnic_cm_shared, if shared */
	struct swnic_fabric *fabric;
	char dev[SWNIC_NAME_MAX];
	struct swnic_pep *pep;		/* the passive endpoint's, or NULL */
	unsigned int refs;		/* shared: connections using it */
	struct fid_domain *domain;	/* internal, FI_THREAD_SAFE */
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	struct sockaddr_in addr;
	int cq_fd;			/* the CQ's wait fd */
	int stop_fd;			/* eventfd: the thread must stop */
	atomic_bool stop;		/* the same, seen at every pass */
	pthread_t thread;
	bool thread_started;
	struct swnic_cm_buf rx[SWNIC_CM_RX];
};

/* An endpoint's connection (fi_connect or fi_accept). */
struct swnic_cm_conn {
	struct swnic_list node;		/* on swnic_cm_conns */
	uint64_t id;
	struct swnic_ep *ep;
	struct swnic_cm_port *port;	/* shared, referenced */
	struct sockaddr_in peer_cm;	/* the peer's CM port */
	uint64_t peer_id;
};

/* A connection request: the handle of FI_CONNREQ's fi_info. */
struct swnic_cm_req {
	struct fid fid;			/* FI_CLASS_CONNREQ */
	struct swnic_list node;		/* on swnic_cm_reqs while unanswered */
	struct swnic_pep *pep;		/* whose backlog it counts in, or NULL */
	struct sockaddr_in peer_cm;
	uint64_t peer_id;
	struct sockaddr_in peer;	/* the connecting endpoint */
};

pthread_mutex_t swnic_cm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct swnic_list swnic_cm_conns = { &swnic_cm_conns, &swnic_cm_conns };
static struct swnic_list swnic_cm_reqs = { &swnic_cm_reqs, &swnic_cm_reqs };
static struct swnic_list swnic_cm_shared = { &swnic_cm_shared,
					     &swnic_cm_shared };
static struct swnic_list swnic_cm_peps = { &swnic_cm_peps, &swnic_cm_peps };

static struct swnic_cm_conn *swnic_cm_conn_find(uint64_t id);

/*
 * A fresh connection id: random, so that nobody but the peer it was sent
 * to can name the connection (an off-path sender cannot guess it), and
 * unique among the process's connections. Caller holds swnic_cm_lock.
 */
static uint64_t swnic_cm_new_id(void)
{
	static uint64_t fallback;
	uint64_t id;

	do {
		if (getrandom(&id, sizeof(id), 0) != sizeof(id)) {
			/* No entropy source: unique at least. */
			if (!fallback)
				fallback = (uint64_t)getpid() << 32 ^
					   swnic_now_ms() << 8;
			id = ++fallback * 0x9e3779b97f4a7c15ULL;
		}
	} while (!id || swnic_cm_conn_find(id));
	return id;
}

static struct swnic_cm_conn *swnic_cm_conn_find(uint64_t id)
{
	struct swnic_list *pos;

	swnic_list_for_each(pos, &swnic_cm_conns) {
		struct swnic_cm_conn *conn =
			swnic_list_entry(pos, struct swnic_cm_conn, node);

		if (conn->id == id)
			return conn;
	}
	return NULL;
}

/* @fid if it is an unanswered request of ours, else NULL. */
static struct swnic_cm_req *swnic_cm_req_find(const struct fid *fid)
{
	struct swnic_list *pos;

	if (!fid)
		return NULL;
	swnic_list_for_each(pos, &swnic_cm_reqs) {
		struct swnic_cm_req *req =
			swnic_list_entry(pos, struct swnic_cm_req, node);

		if (&req->fid == fid)
			return req;
	}
	return NULL;
}

static void swnic_cm_req_free(struct swnic_cm_req *req)
{
	swnic_list_del(&req->node);
	free(req);
}

/* Requests @pep holds unanswered (its backlog's use). */
static unsigned int swnic_cm_pep_pending(const struct swnic_pep *pep)
{
	struct swnic_list *pos;
	unsigned int n = 0;

	swnic_list_for_each(pos, &swnic_cm_reqs) {
		if (swnic_list_entry(pos, struct swnic_cm_req, node)->pep == pep)
			n++;
	}
	return n;
}

/* @fid if it is a live passive endpoint, else NULL (never dereferenced). */
static struct swnic_pep *swnic_cm_pep_find(const struct fid *fid)
{
	struct swnic_list *pos;

	swnic_list_for_each(pos, &swnic_cm_peps) {
		struct swnic_pep *pep =
			swnic_list_entry(pos, struct swnic_pep, node);

		if (&pep->pep_fid.fid == fid)
			return pep;
	}
	return NULL;
}

/* ---- messages ------------------------------------------------------------- */

/*
 * IPv6: the provider's addresses are names of its own namespace's
 * (addr.c), which mean nothing to the peer. A sender on an IPv6 device
 * puts its IPv6 address in the message instead, in the two sockaddr_ins
 * (its CM port and its data endpoint are of one device, one address):
 * both sin_family AF_INET6, address bytes 0-3 in cm.sin_addr, 4-11 in
 * cm.sin_zero, 12-15 in data.sin_addr, the ports where they are. This
 * provider's receiver reads none of it (swnic_cm_sender()); an older
 * one named the address in its own namespace.
 */
static void swnic_cm_encode6(struct swnic_cm_msg *m)
{
	struct sockaddr_in6 s6;

	if (!swnic_addr_is_v6(m->cm.sin_addr) ||
	    swnic_addr6_lookup(m->cm.sin_addr, &s6))
		return;
	m->cm.sin_family = AF_INET6;
	m->data.sin_family = AF_INET6;
	memcpy(&m->cm.sin_addr, &s6.sin6_addr.s6_addr[0], 4);
	memcpy(m->cm.sin_zero, &s6.sin6_addr.s6_addr[4], 8);
	memcpy(&m->data.sin_addr, &s6.sin6_addr.s6_addr[12], 4);
	memset(m->data.sin_zero, 0, sizeof(m->data.sin_zero));
}

/* Is @a one of this network namespace's IPv4 addresses? */
static bool swnic_cm_addr_is_ours(struct in_addr a)
{
	struct ifaddrs *ifa, *i;
	bool ours = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !ours; i = i->ifa_next)
		ours = i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		       ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
		       a.s_addr;
	freeifaddrs(ifa);
	return ours;
}

/*
 * At the receiver: @m's sender is where the kernel saw it come from
 * (@from, swnic_cq_read_from(): its address, and the CM port it sent
 * from) - put in @m->cm, for the rest of the CM to read; its data
 * endpoint is swnic_cm_peer_data()'s. Not the address in @m: that is the
 * sender's device's, while its packets - the CM port's and the data
 * endpoint's alike - carry the source its route picks, which on a host
 * with several addresses may be another, and its kernel answers our
 * packets from that one only (a peer addressed at the other would be
 * refused its own data, or be unreachable). For an IPv6 sender the
 * kernel's name of its address in our namespace: made when its first
 * packet came, so naming it costs nothing more.
 */
static void swnic_cm_sender(struct swnic_cm_msg *m,
			    const struct sockaddr_in *from)
{
	m->cm = *from;
}

/*
 * The data endpoint of @m's sender (swnic_cm_sender() done): the address
 * it came from, at the port @m names. On this host (an address of our
 * namespace's), the data endpoint's own address, as @m gives it - local
 * delivery names a sender by the address its kernel endpoint took at
 * creation, and the shared CM port may be older than a device's new
 * address. Only for a REQ taken and an ACCEPT awaited: the address
 * lookup is not made for every message any host sends.
 */
static struct sockaddr_in swnic_cm_peer_data(const struct swnic_cm_msg *m)
{
	struct sockaddr_in data = m->cm;

	data.sin_port = m->data.sin_port;
	if (m->data.sin_family == AF_INET &&
	    swnic_cm_addr_is_ours(m->data.sin_addr))
		data.sin_addr = m->data.sin_addr;
	return data;
}

/* Does @m come from @peer's address (@port: and from that very CM port)? */
static bool swnic_cm_from(const struct swnic_cm_msg *m,
			  const struct sockaddr_in *peer, bool port)
{
	if (m->cm.sin_addr.s_addr != peer->sin_addr.s_addr)
		return false;
	return !port || m->cm.sin_port == peer->sin_port;
}

/* Send one message from @port to the port at @to. Holds swnic_cm_lock. */
static int swnic_cm_send(struct swnic_cm_port *port,
			 const struct sockaddr_in *to, uint8_t type,
			 uint64_t src_id, uint64_t dst_id,
			 const struct sockaddr_in *data, const void *param,
			 size_t paramlen)
{
	struct swnic_cm_buf *tx;
	ssize_t ret;

	/* fi_cm(3): data that does not fit is silently truncated. */
	if (paramlen > SWNIC_CM_DATA_MAX)
		paramlen = SWNIC_CM_DATA_MAX;
	tx = calloc(1, sizeof(*tx));
	if (!tx)
		return -FI_ENOMEM;
	tx->msg.magic = SWNIC_CM_MAGIC;
	tx->msg.type = type;
	tx->msg.paramlen = (uint16_t)paramlen;
	tx->msg.src_id = src_id;
	tx->msg.dst_id = dst_id;
	tx->msg.cm = port->addr;
	if (data)
		tx->msg.data = *data;
	if (paramlen)
		memcpy(tx->msg.param, param, paramlen);
	swnic_cm_encode6(&tx->msg);
	ret = fi_av_insert(port->av, to, 1, &tx->dest, 0, NULL);
	if (ret != 1) {
		free(tx);
		return ret < 0 ? (int)ret : -FI_EINVAL;
	}
	ret = fi_send(port->ep, &tx->msg, SWNIC_CM_HDR_LEN + paramlen, NULL,
		      tx->dest, tx);
	if (ret) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "CM send: %s\n",
			   fi_strerror((int)-ret));
		fi_av_remove(port->av, &tx->dest, 1, 0);
		free(tx);
	}
	return (int)ret;
}

static void swnic_cm_set_state(struct swnic_ep *ep, enum swnic_cm_state state)
{
	atomic_store_explicit(&ep->cm_state, state, memory_order_release);
}

static int swnic_cm_state(struct swnic_ep *ep)
{
	return atomic_load_explicit(&ep->cm_state, memory_order_acquire);
}

static bool swnic_cm_state_connected(int state)
{
	return state == SWNIC_CM_ACCEPTING || state == SWNIC_CM_CONNECTED;
}

/* A REQ at a passive endpoint's port: FI_CONNREQ, or a REJECT. */
static void swnic_cm_got_req(struct swnic_cm_port *port,
			     struct swnic_cm_msg *msg)
{
	struct swnic_pep *pep = port->pep;
	struct swnic_cm_req *req = NULL;
	struct fi_info *info = NULL;
	int ret = -FI_ECONNREFUSED;

	if (!pep || !pep->eq)
		goto reject;
	/* A listener's backlog: a flood of REQs is refused, not queued. */
	if (swnic_cm_pep_pending(pep) >= pep->backlog) {
		ret = -FI_EAGAIN;
		goto reject;
	}
	req = calloc(1, sizeof(*req));
	info = fi_dupinfo(pep->info);
	if (!req || !info) {
		ret = -FI_ENOMEM;
		goto reject;
	}
	req->fid.fclass = FI_CLASS_CONNREQ;
	req->pep = pep;
	req->peer_cm = msg->cm;
	req->peer_id = msg->src_id;
	req->peer = swnic_cm_peer_data(msg);
	/* The accepting endpoint gets an address of its own. */
	free(info->src_addr);
	info->src_addr = NULL;
	info->src_addrlen = 0;
	free(info->dest_addr);
	info->dest_addr = NULL;
	ret = swnic_addr_dup(pep->addr_format, &req->peer, &info->dest_addr,
			     &info->dest_addrlen);
	if (ret)
		goto reject;
	info->handle = &req->fid;
	swnic_list_add_tail(&swnic_cm_reqs, &req->node);
	ret = swnic_eq_report_cm(pep->eq, FI_CONNREQ, &pep->pep_fid.fid, info,
				 msg->param, msg->paramlen);
	if (!ret)
		return;
	swnic_list_del(&req->node);
reject:
	SWNIC_WARN(FI_LOG_EP_CTRL, "connection request refused: %s\n",
		   fi_strerror(-ret));
	free(req);
	fi_freeinfo(info);
	swnic_cm_send(port, &msg->cm, SWNIC_CM_MSG_REJECT, 0, msg->src_id, NULL,
		      NULL, 0);
}

static void swnic_cm_got_accept(struct swnic_cm_port *port,
				const struct swnic_cm_msg *msg,
				struct swnic_cm_conn *conn)
{
	struct swnic_ep *ep;

	if (!conn || swnic_cm_state(conn->ep) != SWNIC_CM_CONNECTING) {
		/*
		 * Nobody waits for it (closed, or gave up): say so, as the
		 * connection the acceptor knows (its peer id is ours).
		 */
		swnic_cm_send(port, &msg->cm, SWNIC_CM_MSG_SHUTDOWN,
			      msg->dst_id, msg->src_id, NULL, NULL, 0);
		return;
	}
	/*
	 * Its id, random and sent only to the listener, says it is the
	 * answer: the address it came from is the acceptor's as its packets
	 * carry it (swnic_cm_sender()), not always the one dialled
	 * (127.0.0.1, another address of the host), so it is not checked.
	 */
	ep = conn->ep;
	conn->peer_id = msg->src_id;
	conn->peer_cm = msg->cm;
	ep->peer = swnic_cm_peer_data(msg);
	swnic_ep_take_from_peer(ep);
	swnic_cm_set_state(ep, SWNIC_CM_CONNECTED);
	swnic_eq_report_cm(ep->eq, FI_CONNECTED, &ep->ep_fid.fid, NULL,
			   msg->param, msg->paramlen);
}

static void swnic_cm_got_reject(const struct swnic_cm_msg *msg,
				struct swnic_cm_conn *conn)
{
	struct swnic_ep *ep;

	/* Its id says it is the answer, as an ACCEPT's. */
	if (!conn || swnic_cm_state(conn->ep) != SWNIC_CM_CONNECTING)
		return;
	ep = conn->ep;
	swnic_cm_set_state(ep, SWNIC_CM_IDLE);
	swnic_eq_report_err_data(ep->eq, &ep->ep_fid.fid, ep->ep_fid.fid.context,
				 0, FI_ECONNREFUSED, ECONNREFUSED, msg->param,
				 msg->paramlen);
}

static void swnic_cm_got_shutdown(const struct swnic_cm_msg *msg,
				  struct swnic_cm_conn *conn)
{
	struct swnic_ep *ep;

	/* From the peer's own CM port, as its connection. */
	if (!conn || conn->peer_id != msg->src_id ||
	    !swnic_cm_from(msg, &conn->peer_cm, true) ||
	    !swnic_cm_state_connected(swnic_cm_state(conn->ep)))
		return;
	ep = conn->ep;
	swnic_cm_set_state(ep, SWNIC_CM_SHUTDOWN);
	swnic_eq_report_cm(ep->eq, FI_SHUTDOWN, &ep->ep_fid.fid, NULL, NULL, 0);
}

/* Are @len bytes at @msg a whole CM message, its data included? */
static bool swnic_cm_msg_whole(const struct swnic_cm_msg *msg, size_t len)
{
	return len >= SWNIC_CM_HDR_LEN && msg->magic == SWNIC_CM_MAGIC &&
	       msg->paramlen <= SWNIC_CM_DATA_MAX &&
	       len >= SWNIC_CM_HDR_LEN + msg->paramlen;
}

/* A message at @port, from @from (swnic_cm_sender()). */
static void swnic_cm_recv(struct swnic_cm_port *port,
			  struct swnic_cm_msg *msg, size_t len,
			  const struct sockaddr_in *from)
{
	struct swnic_cm_conn *conn;

	if (!swnic_cm_msg_whole(msg, len)) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "CM: dropped a malformed message\n");
		return;
	}
	swnic_cm_sender(msg, from);
	switch (msg->type) {
	case SWNIC_CM_MSG_REQ:
		swnic_cm_got_req(port, msg);
		return;
	case SWNIC_CM_MSG_ACCEPT:
	case SWNIC_CM_MSG_REJECT:
	case SWNIC_CM_MSG_SHUTDOWN:
		break;
	default:
		SWNIC_WARN(FI_LOG_EP_CTRL, "CM: unknown message %u\n",
			   msg->type);
		return;
	}
	conn = swnic_cm_conn_find(msg->dst_id);
	if (!conn && msg->type != SWNIC_CM_MSG_ACCEPT)
		return;
	if (msg->type == SWNIC_CM_MSG_ACCEPT)
		swnic_cm_got_accept(port, msg, conn);
	else if (msg->type == SWNIC_CM_MSG_REJECT)
		swnic_cm_got_reject(msg, conn);
	else
		swnic_cm_got_shutdown(msg, conn);
}

/* A send of ours completed (@err: 0 or its FI_ errno). */
static void swnic_cm_sent(const struct swnic_cm_msg *msg, int err)
{
	struct swnic_cm_conn *conn;
	struct swnic_ep *ep;

	if (msg->type != SWNIC_CM_MSG_REQ && msg->type != SWNIC_CM_MSG_ACCEPT)
		return;		/* REJECT, SHUTDOWN: nobody to tell */
	conn = swnic_cm_conn_find(msg->src_id);
	if (!conn)
		return;
	ep = conn->ep;
	if (msg->type == SWNIC_CM_MSG_REQ) {
		/* No one at that address: the connection is refused. */
		if (err && swnic_cm_state(ep) == SWNIC_CM_CONNECTING) {
			swnic_cm_set_state(ep, SWNIC_CM_IDLE);
			swnic_eq_report_err(ep->eq, &ep->ep_fid.fid,
					    ep->ep_fid.fid.context, 0, err,
					    err);
		}
		return;
	}
	if (swnic_cm_state(ep) != SWNIC_CM_ACCEPTING)
		return;
	if (err) {
		swnic_cm_set_state(ep, SWNIC_CM_IDLE);
		swnic_eq_report_err(ep->eq, &ep->ep_fid.fid,
				    ep->ep_fid.fid.context, 0, err, err);
		return;
	}
	swnic_cm_set_state(ep, SWNIC_CM_CONNECTED);
	swnic_eq_report_cm(ep->eq, FI_CONNECTED, &ep->ep_fid.fid, NULL, NULL, 0);
}

/*
 * The port closes: a REQ it received but never dispatched is refused, so
 * that its connector is not left waiting for an answer for ever. Other
 * messages (answers to connections of this port's) are dropped.
 */
static void swnic_cm_refuse(struct swnic_cm_port *port,
			    struct swnic_cm_msg *msg, size_t len,
			    const struct sockaddr_in *from)
{
	if (!swnic_cm_msg_whole(msg, len) || msg->type != SWNIC_CM_MSG_REQ)
		return;
	swnic_cm_sender(msg, from);
	swnic_cm_send(port, &msg->cm, SWNIC_CM_MSG_REJECT, 0, msg->src_id,
		      NULL, NULL, 0);
}

/*
 * What a completion of @port's CQ is for: acting on it (the thread), or,
 * closing, refusing the requests received (and receiving again, so that
 * those waiting in the kernel's unexpected queue come out too), or only
 * releasing its buffer.
 */
enum swnic_cm_mode {
	SWNIC_CM_DISPATCH,
	SWNIC_CM_REFUSE,
	SWNIC_CM_RELEASE,
};

/* At most this many completions are refused when a port closes. */
#define SWNIC_CM_REFUSE_MAX	(4 * SWNIC_CM_QUEUE)

/*
 * One completion of @port's CQ, as @mode says (@from: a receive's sender,
 * swnic_cq_read_from()). Holds swnic_cm_lock if dispatching.
 */
static void swnic_cm_complete(struct swnic_cm_port *port,
			      struct swnic_cm_buf *buf, size_t len, int err,
			      const struct sockaddr_in *from,
			      enum swnic_cm_mode mode)
{
	if (!buf)
		return;
	if (!buf->rx) {
		if (mode == SWNIC_CM_DISPATCH)
			swnic_cm_sent(&buf->msg, err);
		fi_av_remove(port->av, &buf->dest, 1, 0);
		free(buf);
		return;
	}
	if (mode == SWNIC_CM_RELEASE || err == FI_ECANCELED)
		return;
	if (!err && mode == SWNIC_CM_DISPATCH)
		swnic_cm_recv(port, &buf->msg, len, from);
	else if (!err)
		swnic_cm_refuse(port, &buf->msg, len, from);
	if (fi_recv(port->ep, &buf->msg, sizeof(buf->msg), NULL,
		    FI_ADDR_UNSPEC, buf))
		SWNIC_WARN(FI_LOG_EP_CTRL, "CM: could not repost a receive\n");
}

/* Read what @port's CQ holds. Return: entries handled, or 0. */
static int swnic_cm_poll(struct swnic_cm_port *port, enum swnic_cm_mode mode)
{
	bool dispatch = mode == SWNIC_CM_DISPATCH;
	struct fi_cq_msg_entry ent[8];
	struct sockaddr_in from[SWNIC_ARRAY_SIZE(ent)];
	struct fi_cq_err_entry err;
	ssize_t n;

	n = swnic_cq_read_from(port->cq, ent, SWNIC_ARRAY_SIZE(ent), from);
	if (n > 0) {
		if (dispatch)
			pthread_mutex_lock(&swnic_cm_lock);
		for (ssize_t i = 0; i < n; i++)
			swnic_cm_complete(port, ent[i].op_context, ent[i].len,
					  0, &from[i], mode);
		if (dispatch)
			pthread_mutex_unlock(&swnic_cm_lock);
		return (int)n;
	}
	if (n != -FI_EAVAIL)
		return 0;
	memset(&err, 0, sizeof(err));
	if (fi_cq_readerr(port->cq, &err, 0) <= 0)
		return 0;
	if (dispatch)
		pthread_mutex_lock(&swnic_cm_lock);
	swnic_cm_complete(port, err.op_context, 0, err.err, NULL, mode);
	if (dispatch)
		pthread_mutex_unlock(&swnic_cm_lock);
	return 1;
}

static void *swnic_cm_thread(void *arg)
{
	struct swnic_cm_port *port = arg;
	struct pollfd pfd[2] = {
		{ .fd = port->cq_fd, .events = POLLIN },
		{ .fd = port->stop_fd, .events = POLLIN },
	};

	/* Checked at every pass: a peer's flood of REQs must not hold it. */
	while (!atomic_load_explicit(&port->stop, memory_order_acquire)) {
		if (swnic_cm_poll(port, SWNIC_CM_DISPATCH))
			continue;
		/* Sleep only if the CQ is really empty (level-triggered fd). */
		if (swnic_cq_trywait(&port->cq->fid) == -FI_EAGAIN)
			continue;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
	}
	return NULL;
}

/* ---- ports ----------------------------------------------------------------- */

void swnic_cm_port_close(struct swnic_cm_port *port)
{
	uint64_t one = 1;

	if (port->thread_started) {
		atomic_store_explicit(&port->stop, true, memory_order_release);
		if (write(port->stop_fd, &one, sizeof(one)) != sizeof(one))
			SWNIC_WARN(FI_LOG_EP_CTRL, "CM: cannot stop a thread\n");
		pthread_join(port->thread, NULL);
	}
	/*
	 * Requests the thread did not dispatch - in the CQ, or beyond the
	 * posted receives in the kernel's unexpected queue, which each
	 * receive posted again drains - are refused (bounded: a peer's flood
	 * must not hold the close). Then sends are done once posted (syscall
	 * doorbell): free their buffers.
	 */
	if (port->cq && port->thread_started) {
		int n, left = SWNIC_CM_REFUSE_MAX;

		while (left > 0 && (n = swnic_cm_poll(port, SWNIC_CM_REFUSE)))
			left -= n;
	}
	while (port->cq && swnic_cm_poll(port, SWNIC_CM_RELEASE))
		;
	if (port->ep)
		fi_close(&port->ep->fid);
	if (port->av)
		fi_close(&port->av->fid);
	if (port->cq)
		fi_close(&port->cq->fid);
	if (port->domain)
		fi_close(&port->domain->fid);
	if (port->stop_fd >= 0)
		close(port->stop_fd);
	free(port);
}

/* The fi_info of a port's internal domain and endpoint on @dev. */
static int swnic_cm_port_info(struct swnic_fabric *fab, const char *dev,
			      const struct sockaddr_in *bind,
			      struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_MSG;
	/* Any: the port speaks the provider's inner form (below). */
	hints->addr_format = FI_FORMAT_UNSPEC;
	hints->ep_attr->type = FI_EP_RDM;
	hints->tx_attr->size = SWNIC_CM_QUEUE;
	hints->rx_attr->size = SWNIC_CM_QUEUE;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->domain_attr->name = strdup(dev);
	if (!hints->domain_attr->name) {
		fi_freeinfo(hints);
		return -FI_ENOMEM;
	}
	ret = swnic_getinfo(fab->api_version, NULL, NULL, 0, hints, info);
	fi_freeinfo(hints);
	if (ret)
		return ret;
	/*
	 * The port's endpoint and AV take the provider's own sockaddr_in,
	 * whose address is an IPv6 peer's name for an IPv6 device (addr.c):
	 * FI_SOCKADDR_IN, read and written as is, never translated.
	 */
	free((*info)->src_addr);
	(*info)->src_addr = NULL;
	(*info)->src_addrlen = 0;
	(*info)->addr_format = FI_SOCKADDR_IN;
	if (bind) {
		(*info)->src_addr = malloc(sizeof(*bind));
		if ((*info)->src_addr) {
			memcpy((*info)->src_addr, bind, sizeof(*bind));
			(*info)->src_addrlen = sizeof(*bind);
		} else {
			ret = -FI_ENOMEM;
		}
	}
	if (ret) {
		fi_freeinfo(*info);
		*info = NULL;
	}
	return ret;
}

/*
 * Open a CM port on device @dev of @fab, at @bind's port (or any), and
 * start its thread. Return: 0 and *out, or a negative FI_ errno.
 */
int swnic_cm_port_open(struct swnic_fabric *fab, const char *dev,
		       const struct sockaddr_in *bind, struct swnic_pep *pep,
		       struct swnic_cm_port **out)
{
	struct fi_cq_attr cq_attr = {
		.size = 2 * SWNIC_CM_QUEUE,
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_FD,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_MAP };
	struct swnic_cm_port *port;
	struct fi_info *info = NULL;
	struct swnic_ep *ep;
	int ret;

	port = calloc(1, sizeof(*port));
	if (!port)
		return -FI_ENOMEM;
	port->stop_fd = -1;
	atomic_init(&port->stop, false);
	port->fabric = fab;
	port->pep = pep;
	snprintf(port->dev, sizeof(port->dev), "%s", dev);
	swnic_list_init(&port->node);

	ret = swnic_cm_port_info(fab, dev, bind, &info);
	if (ret)
		goto err;
	ret = swnic_domain_open2(&fab->fabric_fid, info, &port->domain,
				 SWNIC_DOMAIN_INTERNAL, NULL);
	if (!ret)
		ret = fi_cq_open(port->domain, &cq_attr, &port->cq, NULL);
	if (!ret)
		ret = fi_av_open(port->domain, &av_attr, &port->av, NULL);
	if (!ret)
		ret = fi_endpoint(port->domain, info, &port->ep, NULL);
	if (ret)
		goto err;
	/* A send is delivered when fi_send returns: closing loses nothing. */
	ep = swnic_container_of(port->ep, struct swnic_ep, ep_fid);
	ep->engine = false;
	ret = fi_ep_bind(port->ep, &port->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(port->ep, &port->av->fid, 0);
	if (!ret)
		ret = fi_enable(port->ep);
	if (ret)
		goto err;
	port->addr = ep->addr;
	for (int i = 0; i < SWNIC_CM_RX; i++) {
		port->rx[i].rx = true;
		ret = (int)fi_recv(port->ep, &port->rx[i].msg,
				   sizeof(port->rx[i].msg), NULL,
				   FI_ADDR_UNSPEC, &port->rx[i]);
		if (ret)
			goto err;
	}
	ret = fi_control(&port->cq->fid, FI_GETWAIT, &port->cq_fd);
	if (ret)
		goto err;
	port->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (port->stop_fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = -pthread_create(&port->thread, NULL, swnic_cm_thread, port);
	if (ret)
		goto err;
	port->thread_started = true;
	fi_freeinfo(info);
	*out = port;
	return 0;
err:
	SWNIC_WARN(FI_LOG_EP_CTRL, "CM port on %s: %s\n", dev,
		   fi_strerror(-ret));
	fi_freeinfo(info);
	swnic_cm_port_close(port);
	return ret;
}

/* The port @dom's connections share, referenced. Holds swnic_cm_lock. */
static int swnic_cm_port_get(struct swnic_domain *dom,
			     struct swnic_cm_port **out)
{
	struct swnic_cm_port *port;
	struct swnic_list *pos;
	int ret;

	swnic_list_for_each(pos, &swnic_cm_shared) {
		port = swnic_list_entry(pos, struct swnic_cm_port, node);
		if (port->fabric == dom->fabric &&
		    !strcmp(port->dev, dom->dev.name)) {
			port->refs++;
			*out = port;
			return 0;
		}
	}
	ret = swnic_cm_port_open(dom->fabric, dom->dev.name, NULL, NULL, &port);
	if (ret)
		return ret;
	port->refs = 1;
	swnic_list_add_tail(&swnic_cm_shared, &port->node);
	*out = port;
	return 0;
}

/*
 * Drop a reference. Holds swnic_cm_lock. Return: the port if that was the
 * last one: the caller closes it after unlocking.
 */
static struct swnic_cm_port *swnic_cm_port_put(struct swnic_cm_port *port)
{
	if (--port->refs)
		return NULL;
	swnic_list_del(&port->node);
	return port;
}

struct sockaddr_in swnic_cm_port_addr(const struct swnic_cm_port *port)
{
	return port->addr;
}

void swnic_cm_port_drop_pep(struct swnic_cm_port *port)
{
	struct swnic_pep *pep = port->pep;
	struct swnic_list *pos;

	port->pep = NULL;
	/*
	 * Its unanswered requests are no listener's any more: a passive
	 * endpoint allocated where it was must neither answer them
	 * (fi_reject) nor count them in its backlog. They stay, for an
	 * endpoint opened with their fi_info to accept.
	 */
	swnic_list_for_each(pos, &swnic_cm_reqs) {
		struct swnic_cm_req *req =
			swnic_list_entry(pos, struct swnic_cm_req, node);

		if (req->pep == pep)
			req->pep = NULL;
	}
}

void swnic_cm_pep_add(struct swnic_pep *pep)
{
	pthread_mutex_lock(&swnic_cm_lock);
	swnic_list_add_tail(&swnic_cm_peps, &pep->node);
	pthread_mutex_unlock(&swnic_cm_lock);
}

void swnic_cm_pep_del(struct swnic_pep *pep)
{
	pthread_mutex_lock(&swnic_cm_lock);
	swnic_list_del(&pep->node);
	pthread_mutex_unlock(&swnic_cm_lock);
}

/* @pep answers only its own backlog's. Holds swnic_cm_lock. */
int swnic_cm_req_reject(const struct swnic_pep *pep,
			struct swnic_cm_port *port, fid_t handle,
			const void *param, size_t paramlen)
{
	struct swnic_cm_req *req = swnic_cm_req_find(handle);
	int ret;

	if (!req || req->pep != pep)
		return -FI_EINVAL;
	ret = swnic_cm_send(port, &req->peer_cm, SWNIC_CM_MSG_REJECT, 0,
			    req->peer_id, NULL, param, paramlen);
	if (!ret)
		swnic_cm_req_free(req);
	return ret;
}

/* ---- active endpoints ------------------------------------------------------- */

/**
 * swnic_cm_ep_init() - connection state of a new MSG endpoint
 * @ep: the endpoint
 * @info: what it is opened with; info->handle may name a request it is
 *        to accept (FI_CONNREQ's fi_info)
 */
int swnic_cm_ep_init(struct swnic_ep *ep, const struct fi_info *info)
{
	struct swnic_cm_req *req;
	struct swnic_pep *pep = NULL;

	atomic_init(&ep->cm_state, SWNIC_CM_IDLE);
	if (!info->handle)
		return 0;
	/*
	 * The handle is looked up, never dereferenced: a stale one (answered,
	 * its endpoint closed, its listener gone) is freed memory.
	 */
	pthread_mutex_lock(&swnic_cm_lock);
	req = swnic_cm_req_find(info->handle);
	if (req) {
		swnic_list_del(&req->node);
		swnic_list_init(&req->node);
		req->pep = NULL;	/* out of the backlog: the app took it */
		ep->connreq = req;
	} else {
		/*
		 * fi_endpoint(3): an active endpoint may take a passive one's
		 * properties (fi_getinfo hands the passive endpoint out as
		 * info->handle): its address's port, unless it listens there.
		 */
		pep = swnic_cm_pep_find(info->handle);
		if (pep && !pep->listening && !ep->addr.sin_port)
			ep->addr.sin_port = pep->addr.sin_port;
	}
	pthread_mutex_unlock(&swnic_cm_lock);
	if (!req && !pep) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_endpoint: info->handle is neither an unanswered connection request nor a passive endpoint\n");
		return -FI_EINVAL;
	}
	return 0;
}

/**
 * swnic_cm_ep_close() - a MSG endpoint goes away
 * @ep: the endpoint
 *
 * A connected peer is told (FI_SHUTDOWN there); a request the endpoint was
 * opened for but never accepted is rejected.
 */
void swnic_cm_ep_close(struct swnic_ep *ep)
{
	struct swnic_cm_port *dead = NULL, *port;
	struct swnic_cm_conn *conn;

	pthread_mutex_lock(&swnic_cm_lock);
	conn = ep->conn;
	if (ep->connreq) {
		if (!swnic_cm_port_get(ep->domain, &port)) {
			swnic_cm_send(port, &ep->connreq->peer_cm,
				      SWNIC_CM_MSG_REJECT, 0, ep->connreq->peer_id,
				      NULL, NULL, 0);
			dead = swnic_cm_port_put(port);
		}
		free(ep->connreq);
		ep->connreq = NULL;
	}
	if (conn) {
		if (swnic_cm_state_connected(swnic_cm_state(ep)))
			swnic_cm_send(conn->port, &conn->peer_cm,
				      SWNIC_CM_MSG_SHUTDOWN, conn->id,
				      conn->peer_id, NULL, NULL, 0);
		swnic_list_del(&conn->node);
		if (!dead)
			dead = swnic_cm_port_put(conn->port);
		else
			swnic_cm_port_put(conn->port);
		ep->conn = NULL;
		free(conn);
	}
	swnic_cm_set_state(ep, SWNIC_CM_IDLE);
	pthread_mutex_unlock(&swnic_cm_lock);
	if (dead)
		swnic_cm_port_close(dead);
}

/* The endpoint's connection, made if needed. Holds swnic_cm_lock. */
static int swnic_cm_conn_get(struct swnic_ep *ep)
{
	struct swnic_cm_conn *conn;
	int ret;

	if (ep->conn)
		return 0;
	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -FI_ENOMEM;
	ret = swnic_cm_port_get(ep->domain, &conn->port);
	if (ret) {
		free(conn);
		return ret;
	}
	conn->ep = ep;
	swnic_list_add_tail(&swnic_cm_conns, &conn->node);
	ep->conn = conn;
	return 0;
}

/* What fi_connect and fi_accept check before anything changes. */
static int swnic_cm_ep_ready(struct swnic_ep *ep, const void *param,
			     size_t paramlen)
{
	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	/* More than FI_OPT_CM_DATA_SIZE is truncated (swnic_cm_send()). */
	if (paramlen && !param)
		return -FI_EINVAL;
	if (!ep->eq) {
		/*
		 * fi_domain(3): the domain's EQ is the default for the
		 * control events of its endpoints that have none. Checked
		 * again under the lock: another thread may have taken it.
		 */
		struct swnic_domain *dom = ep->domain;

		pthread_mutex_lock(&dom->ctl_lock);
		if (!ep->eq && dom->eq) {
			ep->eq = dom->eq;
			swnic_eq_bind_get(ep->eq);
		}
		pthread_mutex_unlock(&dom->ctl_lock);
	}
	if (!ep->eq) {
		SWNIC_WARN(FI_LOG_EP_CTRL, "no EQ bound (endpoint or domain) for connection events\n");
		return -FI_ENOEQ;
	}
	/* fi_cm(3): connecting enables the endpoint if the app did not. */
	return ep->enabled ? 0 : swnic_ep_enable(ep);
}

static int swnic_cm_busy(int state)
{
	switch (state) {
	case SWNIC_CM_IDLE:
		return 0;
	case SWNIC_CM_CONNECTING:
		return -FI_EALREADY;
	case SWNIC_CM_SHUTDOWN:
		return -FI_EOPBADSTATE;
	default:
		return -FI_EISCONN;
	}
}

#define swnic_ep_from_fid_ep(f) swnic_container_of(f, struct swnic_ep, ep_fid)

static int swnic_ep_connect(struct fid_ep *ep_fid, const void *addr,
			    const void *param, size_t paramlen)
{
	struct swnic_ep *ep = swnic_ep_from_fid_ep(ep_fid);
	struct sockaddr_in to;
	size_t addrlen;
	int ret;

	if (!addr)
		return -FI_EINVAL;
	addrlen = ep->addr_format == FI_ADDR_STR ?
		  strnlen(addr, SWNIC_ADDR_STRLEN) + 1 :
		  swnic_addr_len(ep->addr_format);
	ret = swnic_addr_read(ep->addr_format, addr, addrlen, &to);
	if (ret)
		return ret;
	ret = swnic_cm_ep_ready(ep, param, paramlen);
	if (ret)
		return ret;

	pthread_mutex_lock(&swnic_cm_lock);
	ret = ep->connreq ? -FI_EOPBADSTATE : swnic_cm_busy(swnic_cm_state(ep));
	if (!ret)
		ret = swnic_cm_conn_get(ep);
	if (ret)
		goto out;
	ep->conn->id = swnic_cm_new_id();
	swnic_cm_set_state(ep, SWNIC_CM_CONNECTING);
	ret = swnic_cm_send(ep->conn->port, &to, SWNIC_CM_MSG_REQ, ep->conn->id,
			    0, &ep->addr, param, paramlen);
	if (ret)
		swnic_cm_set_state(ep, SWNIC_CM_IDLE);
out:
	pthread_mutex_unlock(&swnic_cm_lock);
	return ret;
}

static int swnic_ep_accept(struct fid_ep *ep_fid, const void *param,
			   size_t paramlen)
{
	struct swnic_ep *ep = swnic_ep_from_fid_ep(ep_fid);
	struct swnic_cm_req *req;
	int ret;

	if (ep->type == FI_EP_MSG && !ep->connreq) {
		SWNIC_WARN(FI_LOG_EP_CTRL,
			   "fi_accept: the endpoint was not opened for a connection request\n");
		return -FI_EOPBADSTATE;
	}
	ret = swnic_cm_ep_ready(ep, param, paramlen);
	if (ret)
		return ret;

	pthread_mutex_lock(&swnic_cm_lock);
	req = ep->connreq;
	ret = req ? swnic_cm_conn_get(ep) : -FI_EOPBADSTATE;
	if (ret)
		goto out;
	ep->conn->id = swnic_cm_new_id();
	ep->conn->peer_id = req->peer_id;
	ep->conn->peer_cm = req->peer_cm;
	ep->peer = req->peer;
	/* Before the ACCEPT: the peer may send once it has it. */
	swnic_ep_take_from_peer(ep);
	swnic_cm_set_state(ep, SWNIC_CM_ACCEPTING);
	ret = swnic_cm_send(ep->conn->port, &req->peer_cm, SWNIC_CM_MSG_ACCEPT,
			    ep->conn->id, req->peer_id, &ep->addr, param,
			    paramlen);
	if (ret) {
		swnic_cm_set_state(ep, SWNIC_CM_IDLE);
		goto out;
	}
	ep->connreq = NULL;
	free(req);
out:
	pthread_mutex_unlock(&swnic_cm_lock);
	return ret;
}

static int swnic_ep_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct swnic_ep *ep = swnic_ep_from_fid_ep(ep_fid);
	struct swnic_cm_conn *conn;
	int ret = 0;

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&swnic_cm_lock);
	conn = ep->conn;
	if (!conn || !swnic_cm_state_connected(swnic_cm_state(ep))) {
		ret = -FI_ENOTCONN;
		goto out;
	}
	swnic_cm_set_state(ep, SWNIC_CM_SHUTDOWN);
	ret = swnic_cm_send(conn->port, &conn->peer_cm, SWNIC_CM_MSG_SHUTDOWN,
			    conn->id, conn->peer_id, NULL, NULL, 0);
out:
	pthread_mutex_unlock(&swnic_cm_lock);
	return ret;
}

static int swnic_ep_getpeer(struct fid_ep *ep_fid, void *addr,
			    size_t *addrlen)
{
	struct swnic_ep *ep = swnic_ep_from_fid_ep(ep_fid);
	struct sockaddr_in peer;
	int ret;

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	if (!addrlen)
		return -FI_EINVAL;
	pthread_mutex_lock(&swnic_cm_lock);
	ret = swnic_cm_state(ep) == SWNIC_CM_IDLE ||
	      swnic_cm_state(ep) == SWNIC_CM_CONNECTING ? -FI_ENOTCONN : 0;
	peer = ep->peer;
	pthread_mutex_unlock(&swnic_cm_lock);
	if (ret)
		return ret;
	return swnic_addr_copy_out(ep->addr_format, &peer, addr, addrlen);
}

struct fi_ops_cm swnic_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = swnic_ep_setname,
	.getname = swnic_ep_getname,
	.getpeer = swnic_ep_getpeer,
	.connect = swnic_ep_connect,
	.listen = swnic_no_listen,
	.accept = swnic_ep_accept,
	.reject = swnic_no_reject,
	.shutdown = swnic_ep_shutdown,
	.join = swnic_no_join,
};

void swnic_cm_info_free(struct fi_info *info)
{
	struct swnic_cm_req *req;

	if (!info)
		return;
	pthread_mutex_lock(&swnic_cm_lock);
	req = swnic_cm_req_find(info->handle);
	if (req)
		swnic_cm_req_free(req);
	pthread_mutex_unlock(&swnic_cm_lock);
	info->handle = NULL;
	fi_freeinfo(info);
}
