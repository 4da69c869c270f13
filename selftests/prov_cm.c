// SPDX-License-Identifier: GPL-2.0
/*
 * FI_EP_MSG connection management through the public libfabric API
 * (fi_cm(3), fi_eq(3)): a passive endpoint listens, fi_connect and
 * fi_accept carry connection data, FI_CONNREQ / FI_CONNECTED /
 * FI_SHUTDOWN arrive on the EQs without the application reading anything
 * (the EQ's fd becomes readable), rejections are FI_ECONNREFUSED error
 * events with the rejecter's data, and every misuse fails with its errno.
 * The listening side (passive endpoint, its EQ, the accepted endpoints)
 * is the peer's (prov_open_peer()): another host's when
 * SWNIC_PROV_PEER_NETNS names one, where it makes its CM calls
 * (prov_peer_run()); the connecting side is this host's.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <rdma/fi_rma.h>

#include "kselftest_harness.h"
#include "prov_util.h"

struct conn_side {
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_ep *ep;
};

FIXTURE(cm)
{
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct prov_ctx peer;		/* the listener's */
	struct fid_eq *peq;		/* the passive endpoint's */
	struct fid_pep *pep;
	struct sockaddr_in pep_addr;
	struct conn_side cli, srv;
	struct fi_info *req;		/* the last FI_CONNREQ's info */
};

static void eq_open(struct __test_metadata *_metadata,
		    struct fid_fabric *fabric, struct fid_eq **eq)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD };

	ASSERT_EQ(0, fi_eq_open(fabric, &attr, eq, NULL));
}

/*
 * An active endpoint from @info with its own EQ and CQ, enabled: the
 * connecting side's (@peer false) or the listener's.
 */
static void side_open(struct __test_metadata *_metadata,
		      FIXTURE_DATA(cm) *self, struct conn_side *s,
		      struct fi_info *info, bool peer)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG,
				      .size = 64 };
	struct fid_domain *domain = peer ? self->peer.domain : self->domain;

	eq_open(_metadata, peer ? self->peer.fabric : self->fabric, &s->eq);
	ASSERT_EQ(0, fi_cq_open(domain, &cq_attr, &s->cq, NULL));
	ASSERT_EQ(0, fi_endpoint(domain, info, &s->ep, s));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->eq->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_enable(s->ep));
}

static void side_close(struct conn_side *s)
{
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
	if (s->eq)
		fi_close(&s->eq->fid);
	memset(s, 0, sizeof(*s));
}

/* The listener's calls, made where it lives (prov_peer_run()). */
static int side_close_fn(void *s)
{
	side_close(s);
	return 0;
}

static void peer_side_close(struct conn_side *s)
{
	prov_peer_run(side_close_fn, s);
}

static int ep_close_fn(void *ep)
{
	return fi_close(&((struct fid_ep *)ep)->fid);
}

static int listen_fn(void *pep)
{
	return fi_listen(pep);
}

struct accept_args {
	struct fid_ep *ep;
	const void *param;
	size_t len;
};

static int accept_fn(void *arg)
{
	struct accept_args *a = arg;

	return fi_accept(a->ep, a->param, a->len);
}

static int peer_accept(struct fid_ep *ep, const void *param, size_t len)
{
	struct accept_args a = { .ep = ep, .param = param, .len = len };

	return prov_peer_run(accept_fn, &a);
}

/*
 * Wait up to 5 s for an event on @eq without reading anything else (the
 * provider's thread must queue it). Returns fi_eq_sread's result.
 */
static ssize_t eq_wait(struct fid_eq *eq, uint32_t *event, void *buf,
		       size_t len)
{
	return fi_eq_sread(eq, event, buf, len, 5000, 0);
}

FIXTURE_SETUP(cm)
{
	struct prov_ctx local;
	struct fi_info *hints;
	size_t len = sizeof(self->pep_addr);

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->addr_format = FI_SOCKADDR_IN;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &self->info));
	ASSERT_EQ(FI_EP_MSG, self->info->ep_attr->type);
	ASSERT_EQ(0, fi_fabric(self->info->fabric_attr, &self->fabric, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &self->domain, NULL));
	local = (struct prov_ctx){ .info = self->info, .fabric = self->fabric,
				   .domain = self->domain };
	ASSERT_EQ(0, prov_open_peer(&self->peer, &local, hints));
	fi_freeinfo(hints);
	eq_open(_metadata, self->peer.fabric, &self->peq);
	ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info,
				   &self->pep, self));
	ASSERT_EQ(-FI_EOPBADSTATE, fi_getname(&self->pep->fid,
					      &self->pep_addr, &len));
	ASSERT_EQ(-FI_ENOEQ, prov_peer_run(listen_fn, self->pep));
	ASSERT_EQ(0, fi_pep_bind(self->pep, &self->peq->fid, 0));
	ASSERT_EQ(0, prov_peer_run(listen_fn, self->pep));
	ASSERT_EQ(0, fi_getname(&self->pep->fid, &self->pep_addr, &len));
	ASSERT_EQ(sizeof(self->pep_addr), len);
	ASSERT_NE(0, self->pep_addr.sin_port);
	side_open(_metadata, self, &self->cli, self->info, false);
}

FIXTURE_TEARDOWN(cm)
{
	side_close(&self->cli);
	peer_side_close(&self->srv);
	if (self->req)
		fi_freeinfo(self->req);
	if (self->pep)
		fi_close(&self->pep->fid);
	if (self->peq)
		fi_close(&self->peq->fid);
	prov_close(&self->peer);
	if (self->domain)
		fi_close(&self->domain->fid);
	if (self->fabric)
		fi_close(&self->fabric->fid);
	fi_freeinfo(self->info);
}

/* Connection data: an fi_eq_cm_entry and what follows it. */
struct cm_event {
	struct fi_eq_cm_entry entry;
	char data[256];
};

/* The client connects with @param; the passive side's FI_CONNREQ. */
static void connect_req(struct __test_metadata *_metadata,
			FIXTURE_DATA(cm) *self, const char *param)
{
	size_t plen = param ? strlen(param) + 1 : 0;
	struct cm_event ev;
	uint32_t event;

	ASSERT_EQ(0, fi_connect(self->cli.ep, &self->pep_addr, param, plen));
	ASSERT_EQ((ssize_t)(sizeof(ev.entry) + plen),
		  eq_wait(self->peq, &event, &ev, sizeof(ev)));
	ASSERT_EQ(FI_CONNREQ, event);
	ASSERT_EQ(&self->pep->fid, ev.entry.fid);
	ASSERT_NE(NULL, ev.entry.info);
	ASSERT_NE(NULL, ev.entry.info->handle);
	ASSERT_EQ(FI_CLASS_CONNREQ, ev.entry.info->handle->fclass);
	ASSERT_EQ(FI_EP_MSG, ev.entry.info->ep_attr->type);
	if (plen) {
		ASSERT_STREQ(param, ev.data);
	}
	self->req = ev.entry.info;
}

/* Accept the pending request with @param: FI_CONNECTED on both sides. */
static void accept_req(struct __test_metadata *_metadata,
		       FIXTURE_DATA(cm) *self, const char *param)
{
	size_t plen = param ? strlen(param) + 1 : 0;
	struct cm_event ev;
	uint32_t event;

	side_open(_metadata, self, &self->srv, self->req, true);
	ASSERT_EQ(0, peer_accept(self->srv.ep, param, plen));
	ASSERT_EQ((ssize_t)sizeof(ev.entry),
		  eq_wait(self->srv.eq, &event, &ev, sizeof(ev)));
	ASSERT_EQ(FI_CONNECTED, event);
	ASSERT_EQ(&self->srv.ep->fid, ev.entry.fid);
	ASSERT_EQ((ssize_t)(sizeof(ev.entry) + plen),
		  eq_wait(self->cli.eq, &event, &ev, sizeof(ev)));
	ASSERT_EQ(FI_CONNECTED, event);
	ASSERT_EQ(&self->cli.ep->fid, ev.entry.fid);
	if (plen) {
		ASSERT_STREQ(param, ev.data);
	}
}

static ssize_t cq_wait(struct fid_cq *cq, struct fi_cq_msg_entry *e)
{
	for (int i = 0; i < 5000; i++) {
		ssize_t n = fi_cq_read(cq, e, 1);

		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

/* @from sends @len bytes of @c to @to, which receives and checks them. */
static void transfer(struct __test_metadata *_metadata, struct conn_side *from,
		     struct conn_side *to, char c, size_t len)
{
	struct fi_cq_msg_entry e;
	char *tx = malloc(len), *rx = calloc(1, len);

	ASSERT_NE(NULL, tx);
	ASSERT_NE(NULL, rx);
	memset(tx, c, len);
	ASSERT_EQ(0, fi_recv(to->ep, rx, len, NULL, 0, rx));
	/* The address is ignored: a connected endpoint has one peer. */
	ASSERT_EQ(0, fi_send(from->ep, tx, len, NULL, 12345, tx));
	ASSERT_EQ(1, cq_wait(from->cq, &e));
	ASSERT_EQ(tx, e.op_context);
	ASSERT_EQ(1, cq_wait(to->cq, &e));
	ASSERT_EQ(rx, e.op_context);
	ASSERT_EQ(len, e.len);
	ASSERT_EQ(0, memcmp(tx, rx, len));
	free(tx);
	free(rx);
}

/* @ep's own address, or its peer's. */
static void sockaddr_of(struct __test_metadata *_metadata, struct fid_ep *ep,
			struct sockaddr_in *sin, bool peer)
{
	size_t len = sizeof(*sin);

	if (peer) {
		ASSERT_EQ(0, fi_getpeer(ep, sin, &len));
	} else {
		ASSERT_EQ(0, fi_getname(&ep->fid, sin, &len));
	}
	ASSERT_EQ(sizeof(*sin), len);
}

/*
 * The address this host's packets to @to carry, as the peer's kernel sees
 * them: in-host the sender's own (@own); across, the source address the
 * route to @to picks - not the device's when the host has several
 * (test_prov_wire.sh makes one so).
 */
static void source_to(struct __test_metadata *_metadata,
		      const struct sockaddr_in *to,
		      const struct sockaddr_in *own, struct in_addr *src)
{
	struct sockaddr_in sin = *to, me;
	socklen_t len = sizeof(me);
	int fd;

	if (!prov_across()) {
		*src = own->sin_addr;
		return;
	}
	sin.sin_port = htons(9);	/* any: a UDP connect sends nothing */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&me, &len));
	close(fd);
	*src = me.sin_addr;
}

TEST_F(cm, connect_accept_with_data_then_transfer)
{
	struct sockaddr_in a, b, cli_name;
	struct sockaddr_in *dest;
	struct in_addr src;

	connect_req(_metadata, self, "hello from the client");
	/*
	 * The request names the connecting endpoint: its port, at the
	 * address its packets come from.
	 */
	sockaddr_of(_metadata, self->cli.ep, &cli_name, false);
	source_to(_metadata, &self->pep_addr, &cli_name, &src);
	dest = self->req->dest_addr;
	ASSERT_NE(NULL, dest);
	ASSERT_EQ(cli_name.sin_port, dest->sin_port);
	ASSERT_EQ(src.s_addr, dest->sin_addr.s_addr);
	accept_req(_metadata, self, "welcome");

	/* Each side's peer is the other's name, as its packets carry it. */
	sockaddr_of(_metadata, self->cli.ep, &a, true);
	sockaddr_of(_metadata, self->srv.ep, &b, false);
	ASSERT_EQ(b.sin_port, a.sin_port);
	ASSERT_EQ(b.sin_addr.s_addr, a.sin_addr.s_addr);
	sockaddr_of(_metadata, self->srv.ep, &a, true);
	ASSERT_EQ(cli_name.sin_port, a.sin_port);
	ASSERT_EQ(src.s_addr, a.sin_addr.s_addr);
	/* The accepted endpoint has an address of its own. */
	ASSERT_NE(self->pep_addr.sin_port, b.sin_port);

	transfer(_metadata, &self->cli, &self->srv, 'c', 100);
	transfer(_metadata, &self->srv, &self->cli, 's', 70000);
}

/*
 * A connected endpoint may receive through a shared receive context
 * (fi_srx_context): the receive posted to the SRX takes what the peer
 * sends, completing on the endpoint's CQ.
 */
TEST_F(cm, connected_endpoint_receives_through_an_srx)
{
	struct fi_info *info = fi_dupinfo(self->info);
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG,
				      .size = 64 };
	struct conn_side c = { 0 };
	struct fi_cq_msg_entry e;
	struct fid_ep *srx;
	uint64_t v = 0x5a5a, rx = 0;

	if (!prov_feature(self->domain, SWNIC_FEAT_SRX)) {
		fi_freeinfo(info);
		SKIP(return, "the module has no shared receive contexts");
	}
	/* A connecting endpoint of its own, bound to an SRX. */
	side_close(&self->cli);
	info->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	ASSERT_EQ(0, fi_srx_context(self->domain, NULL, &srx, NULL));
	eq_open(_metadata, self->fabric, &c.eq);
	ASSERT_EQ(0, fi_cq_open(self->domain, &cq_attr, &c.cq, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, info, &c.ep, &c));
	ASSERT_EQ(0, fi_ep_bind(c.ep, &c.eq->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(c.ep, &c.cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(c.ep, &srx->fid, 0));
	ASSERT_EQ(0, fi_enable(c.ep));
	self->cli = c;
	connect_req(_metadata, self, NULL);
	accept_req(_metadata, self, NULL);

	ASSERT_EQ(0, fi_recv(srx, &rx, sizeof(rx), NULL, 0, &rx));
	ASSERT_EQ(0, fi_send(self->srv.ep, &v, sizeof(v), NULL, 0, &v));
	ASSERT_EQ(1, cq_wait(self->srv.cq, &e));
	ASSERT_EQ(1, cq_wait(self->cli.cq, &e));
	EXPECT_EQ(&rx, e.op_context);
	EXPECT_EQ(sizeof(v), e.len);
	EXPECT_EQ(v, rx);
	EXPECT_EQ(-FI_EBUSY, fi_close(&srx->fid));
	side_close(&self->cli);
	EXPECT_EQ(0, fi_close(&srx->fid));
	fi_freeinfo(info);
}

TEST_F(cm, rma_over_the_connection)
{
	char target[4096], src[4096], back[4096];
	struct fi_cq_msg_entry e;
	struct fid_mr *mr;
	uint64_t base;

	connect_req(_metadata, self, NULL);
	accept_req(_metadata, self, NULL);
	memset(target, 0, sizeof(target));
	memset(src, 'w', sizeof(src));
	/* The target is the accepted endpoint's: the listener's memory. */
	ASSERT_EQ(0, fi_mr_reg(self->peer.domain, target, sizeof(target),
			       FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 7, 0, &mr,
			       NULL));
	base = self->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
	       (uintptr_t)target : 0;
	/* The destination address is ignored: the peer is the target. */
	ASSERT_EQ(0, fi_write(self->cli.ep, src, 1000, NULL, 999, base + 100,
			      fi_mr_key(mr), src));
	ASSERT_EQ(1, cq_wait(self->cli.cq, &e));
	ASSERT_EQ((void *)src, e.op_context);
	ASSERT_TRUE(e.flags & FI_WRITE);
	ASSERT_EQ(0, memcmp(target + 100, src, 1000));
	ASSERT_EQ(0, target[99]);
	ASSERT_EQ(0, target[1100]);
	ASSERT_EQ(0, fi_read(self->cli.ep, back, 1000, NULL, 0, base + 100,
			     fi_mr_key(mr), back));
	ASSERT_EQ(1, cq_wait(self->cli.cq, &e));
	ASSERT_EQ((void *)back, e.op_context);
	ASSERT_EQ(0, memcmp(back, src, 1000));
	fi_close(&mr->fid);
}

struct stranger {
	struct prov_ctx ctx;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
};

static int stranger_open_fn(void *arg)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG,
				      .size = 16 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct stranger *st = arg;
	int ret;

	ret = prov_open(&st->ctx, NULL);
	if (!ret)
		ret = fi_cq_open(st->ctx.domain, &cq_attr, &st->cq, NULL);
	if (!ret)
		ret = fi_av_open(st->ctx.domain, &av_attr, &st->av, NULL);
	if (!ret)
		ret = fi_endpoint(st->ctx.domain, st->ctx.info, &st->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(st->ep, &st->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(st->ep, &st->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(st->ep);
	return ret;
}

static void stranger_close(struct stranger *st)
{
	if (st->ep)
		fi_close(&st->ep->fid);
	if (st->av)
		fi_close(&st->av->fid);
	if (st->cq)
		fi_close(&st->cq->fid);
	prov_close(&st->ctx);
}

/*
 * A stranger - an RDM endpoint of a domain of its own, same user and key,
 * on the listener's host (@far) or on the connector's - learnt the
 * address of @to as its host knows it (@peer's fi_getpeer: where its
 * packets come from) and sends it @msg: refused (FI_ECONNREFUSED), and
 * the receive @to has posted (into @rx) stays empty.
 */
static void stranger_is_refused(struct __test_metadata *_metadata,
				struct conn_side *to, struct conn_side *peer,
				bool far, char *msg, const char *rx)
{
	struct fi_cq_err_entry err = { 0 };
	struct stranger st = { 0 };
	struct fi_cq_msg_entry e;
	struct sockaddr_in name;
	ssize_t n = -FI_EAGAIN;
	fi_addr_t dest;

	sockaddr_of(_metadata, peer->ep, &name, true);
	ASSERT_EQ(0, far ? prov_peer_run(stranger_open_fn, &st) :
			   stranger_open_fn(&st));
	ASSERT_EQ(1, fi_av_insert(st.av, &name, 1, &dest, 0, NULL));
	ASSERT_EQ(0, fi_send(st.ep, msg, strlen(msg) + 1, NULL, dest, msg));
	/* Across, the refusal comes back over the wire: bounded, 10 s. */
	for (int i = 0; i < 10000 && n == -FI_EAGAIN; i++) {
		n = fi_cq_read(st.cq, &e, 1);
		if (n == -FI_EAGAIN)
			usleep(1000);
	}
	EXPECT_EQ(-FI_EAVAIL, n) TH_LOG("the stranger's send: %zd", n);
	if (n == -FI_EAVAIL) {
		ASSERT_EQ(1, fi_cq_readerr(st.cq, &err, 0));
		EXPECT_EQ((void *)msg, err.op_context);
		EXPECT_EQ(FI_ECONNREFUSED, err.err);
	}
	/* Its receive still waits, for the peer. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(to->cq, &e, 1));
	EXPECT_STREQ("", rx);
	stranger_close(&st);
}

/*
 * A connected endpoint takes messages from its peer only, on one host
 * and across the wire, on either side of the connection: a stranger
 * that learnt the accepted endpoint's address (on the connector's host),
 * or the connector's (on the listener's host), and sends to it is
 * refused (FI_ECONNREFUSED) and fills none of its receives; the peer's
 * message then takes the receive. Before, the stranger's message
 * completed the receive as if the peer had sent it - across the wire
 * always: a peer there was not limited, its packets' source address
 * not known.
 */
TEST_F(cm, connected_endpoint_takes_its_peers_messages_only)
{
	char srv_rx[32] = "", cli_rx[32] = "";
	char to_srv[32] = "from the peer", to_cli[32] = "from the acceptor";
	char bad[32] = "stranger", bad2[32] = "stranger too";
	struct fi_cq_msg_entry e;

	connect_req(_metadata, self, NULL);
	accept_req(_metadata, self, NULL);
	if (!prov_feature(self->domain, SWNIC_FEAT_EP_PEER))
		SKIP(return, "the module has no SWNIC_FEAT_EP_PEER");
	ASSERT_EQ(0, fi_recv(self->srv.ep, srv_rx, sizeof(srv_rx), NULL, 0,
			     srv_rx));
	ASSERT_EQ(0, fi_recv(self->cli.ep, cli_rx, sizeof(cli_rx), NULL, 0,
			     cli_rx));

	stranger_is_refused(_metadata, &self->srv, &self->cli, false, bad,
			    srv_rx);
	stranger_is_refused(_metadata, &self->cli, &self->srv, true, bad2,
			    cli_rx);

	ASSERT_EQ(0, fi_send(self->cli.ep, to_srv, sizeof(to_srv), NULL, 0,
			     to_srv));
	ASSERT_EQ(1, cq_wait(self->cli.cq, &e));
	ASSERT_EQ(1, cq_wait(self->srv.cq, &e));
	EXPECT_EQ((void *)srv_rx, e.op_context);
	EXPECT_STREQ("from the peer", srv_rx);
	ASSERT_EQ(0, fi_send(self->srv.ep, to_cli, sizeof(to_cli), NULL, 0,
			     to_cli));
	ASSERT_EQ(1, cq_wait(self->srv.cq, &e));
	ASSERT_EQ(1, cq_wait(self->cli.cq, &e));
	EXPECT_EQ((void *)cli_rx, e.op_context);
	EXPECT_STREQ("from the acceptor", cli_rx);
}

TEST_F(cm, eq_fd_wakes_without_reading)
{
	struct fi_eq_cm_entry entry;
	struct pollfd pfd = { .events = POLLIN };
	uint32_t event;

	ASSERT_EQ(0, fi_control(&self->peq->fid, FI_GETWAIT, &pfd.fd));
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, fi_connect(self->cli.ep, &self->pep_addr, NULL, 0));
	/* Only the provider's progress can make it readable. */
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	ASSERT_EQ(sizeof(entry), fi_eq_read(self->peq, &event, &entry,
					    sizeof(entry), 0));
	ASSERT_EQ(FI_CONNREQ, event);
	self->req = entry.info;
}

TEST_F(cm, reject_is_econnrefused_with_data)
{
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_cm_entry entry;
	uint32_t event;

	connect_req(_metadata, self, NULL);
	ASSERT_EQ(0, fi_reject(self->pep, self->req->handle, "go away", 8));
	/* The handle is answered: it cannot be used again. */
	ASSERT_EQ(-FI_EINVAL, fi_reject(self->pep, self->req->handle, NULL, 0));
	ASSERT_EQ(-FI_EINVAL, fi_endpoint(self->peer.domain, self->req,
					  &self->srv.ep, NULL));
	ASSERT_EQ(-FI_EAVAIL, eq_wait(self->cli.eq, &event, &entry,
				      sizeof(entry)));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->cli.eq, &err, 0));
	ASSERT_EQ(FI_ECONNREFUSED, err.err);
	ASSERT_EQ(&self->cli.ep->fid, err.fid);
	ASSERT_EQ(8, err.err_data_size);
	ASSERT_STREQ("go away", (char *)err.err_data);
	/* Refused: no peer, no sends; and it may try again. */
	ASSERT_EQ(-FI_ENOTCONN, fi_send(self->cli.ep, "x", 1, NULL, 0, NULL));
	fi_freeinfo(self->req);
	self->req = NULL;
	connect_req(_metadata, self, "again");
	accept_req(_metadata, self, NULL);
	transfer(_metadata, &self->cli, &self->srv, 'a', 1);
}

/*
 * fi_reject(3) answers a request of the passive endpoint's own: another
 * listener's is -FI_EINVAL and stays, for its own listener to answer.
 */
TEST_F(cm, reject_of_another_listeners_request_is_einval)
{
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_cm_entry entry;
	struct fid_pep *other;
	uint32_t event;

	ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info, &other,
				   NULL));
	ASSERT_EQ(0, fi_pep_bind(other, &self->peq->fid, 0));
	ASSERT_EQ(0, prov_peer_run(listen_fn, other));
	connect_req(_metadata, self, NULL);
	EXPECT_EQ(-FI_EINVAL, fi_reject(other, self->req->handle, "no", 3));
	/* Still unanswered: its own listener refuses it. */
	ASSERT_EQ(0, fi_reject(self->pep, self->req->handle, "go away", 8));
	ASSERT_EQ(-FI_EAVAIL, eq_wait(self->cli.eq, &event, &entry,
				      sizeof(entry)));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->cli.eq, &err, 0));
	EXPECT_EQ(FI_ECONNREFUSED, err.err);
	ASSERT_EQ(8, err.err_data_size);
	EXPECT_STREQ("go away", (char *)err.err_data);
	EXPECT_EQ(0, fi_close(&other->fid));
}

/*
 * A thread's cache of freed chunks (glibc's tcache): TCACHE_BINS sizes,
 * from 24 usable bytes by 16, at most TCACHE_FILL chunks each.
 */
#define TCACHE_BINS	64
#define TCACHE_FILL	7

/*
 * Take TCACHE_FILL chunks of every cached size into @held (the cache
 * empty then, whatever it held): false if one of them is @avoid.
 */
static bool tcache_drain(void *held[TCACHE_BINS][TCACHE_FILL],
			 const void *avoid)
{
	bool ok = true;

	for (int b = 0; b < TCACHE_BINS; b++) {
		for (int i = 0; i < TCACHE_FILL; i++) {
			held[b][i] = malloc(24 + 16 * b);
			ok &= held[b][i] != avoid;
		}
	}
	return ok;
}

/* Free what tcache_drain() took: the cache full. */
static void tcache_release(void *held[TCACHE_BINS][TCACHE_FILL])
{
	for (int b = 0; b < TCACHE_BINS; b++)
		for (int i = 0; i < TCACHE_FILL; i++)
			free(held[b][i]);
}

/*
 * A request of a closed listener is no listener's: a passive endpoint
 * the allocator put where the closed one was (what the request's stale
 * owner pointed to) cannot fi_reject it either (-FI_EINVAL); the request
 * stays, for an endpoint opened with its fi_info to accept.
 *
 * The new passive endpoint must take the closed one's memory, which the
 * test arranges: with every tcache bin full while the listener closes,
 * its chunk goes to a bin of the arena's, and with them empty again the
 * next allocation of its size takes it from there (glibc's calloc before
 * 2.41 never looks in the tcache; 2.41's looks there first).
 */
TEST_F(cm, reject_of_a_closed_listeners_request_is_einval)
{
	enum { TRIES = 8 };
	static void *held[TCACHE_BINS][TCACHE_FILL];
	struct fid_pep *old, *peps[TRIES] = { NULL }, *pep = NULL;
	struct sockaddr_in addr;
	size_t len = sizeof(addr);
	struct cm_event ev;
	uint32_t event;
	bool drained;
	void *was;
	int n;

	ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info, &old,
				   NULL));
	ASSERT_EQ(0, fi_pep_bind(old, &self->peq->fid, 0));
	ASSERT_EQ(0, prov_peer_run(listen_fn, old));
	ASSERT_EQ(0, fi_getname(&old->fid, &addr, &len));
	ASSERT_EQ(0, fi_connect(self->cli.ep, &addr, NULL, 0));
	ASSERT_EQ((ssize_t)sizeof(ev.entry),
		  eq_wait(self->peq, &event, &ev, sizeof(ev)));
	ASSERT_EQ(FI_CONNREQ, event);
	ASSERT_EQ(&old->fid, ev.entry.fid);
	self->req = ev.entry.info;

	was = old;
	tcache_drain(held, NULL);
	tcache_release(held);
	ASSERT_EQ(0, fi_close(&old->fid));
	drained = tcache_drain(held, was);
	for (n = 0; n < TRIES && !pep; n++) {
		ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info,
					   &peps[n], NULL));
		if ((void *)peps[n] == was)
			pep = peps[n];
	}
	tcache_release(held);
	if (!pep) {
		for (int i = 0; i < n; i++)
			fi_close(&peps[i]->fid);
		SKIP(return, "no passive endpoint where the closed one was%s",
		     drained ? "" : " (it was not in the arena's bins)");
	}
	ASSERT_EQ(0, fi_pep_bind(pep, &self->peq->fid, 0));
	ASSERT_EQ(0, prov_peer_run(listen_fn, pep));
	EXPECT_EQ(-FI_EINVAL, fi_reject(pep, self->req->handle, "no", 3));
	EXPECT_EQ(-FI_EINVAL, fi_reject(self->pep, self->req->handle, NULL,
					0));
	/* Still unanswered: accepted, the connector is connected. */
	accept_req(_metadata, self, NULL);
	transfer(_metadata, &self->cli, &self->srv, 'c', 1);
	for (int i = 0; i < n; i++)
		EXPECT_EQ(0, fi_close(&peps[i]->fid));
}

TEST_F(cm, nobody_listening_is_econnrefused)
{
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_cm_entry entry;
	struct sockaddr_in gone = self->pep_addr;
	uint32_t event;

	fi_close(&self->pep->fid);
	self->pep = NULL;
	ASSERT_EQ(0, fi_connect(self->cli.ep, &gone, NULL, 0));
	ASSERT_EQ(-FI_EAVAIL, eq_wait(self->cli.eq, &event, &entry,
				      sizeof(entry)));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->cli.eq, &err, 0));
	ASSERT_EQ(FI_ECONNREFUSED, err.err);
	ASSERT_EQ(&self->cli.ep->fid, err.fid);
}

TEST_F(cm, shutdown_reaches_the_peer)
{
	struct fi_eq_cm_entry entry;
	uint32_t event;

	connect_req(_metadata, self, NULL);
	accept_req(_metadata, self, NULL);
	ASSERT_EQ(-FI_EBADFLAGS, fi_shutdown(self->cli.ep, 1));
	ASSERT_EQ(0, fi_shutdown(self->cli.ep, 0));
	ASSERT_EQ(sizeof(entry), eq_wait(self->srv.eq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_SHUTDOWN, event);
	ASSERT_EQ(&self->srv.ep->fid, entry.fid);
	/* Both sides are disconnected now. */
	ASSERT_EQ(-FI_ENOTCONN, fi_send(self->cli.ep, "x", 1, NULL, 0, NULL));
	ASSERT_EQ(-FI_ENOTCONN, fi_send(self->srv.ep, "x", 1, NULL, 0, NULL));
	ASSERT_EQ(-FI_ENOTCONN, fi_shutdown(self->cli.ep, 0));
	ASSERT_EQ(-FI_ENOTCONN, fi_shutdown(self->srv.ep, 0));
	/* The one that shut down gets no event of its own. */
	ASSERT_EQ(-FI_EAGAIN, fi_eq_read(self->cli.eq, &event, &entry,
					 sizeof(entry), 0));
}

TEST_F(cm, closing_a_connected_endpoint_shuts_down_the_peer)
{
	struct fi_eq_cm_entry entry;
	uint32_t event;

	connect_req(_metadata, self, NULL);
	accept_req(_metadata, self, NULL);
	prov_peer_run(ep_close_fn, self->srv.ep);
	self->srv.ep = NULL;
	ASSERT_EQ(sizeof(entry), eq_wait(self->cli.eq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_SHUTDOWN, event);
	ASSERT_EQ(&self->cli.ep->fid, entry.fid);
}

/* The connector gave up (closed) before the answer: the acceptor learns. */
TEST_F(cm, accepting_a_closed_connector_shuts_down)
{
	struct fi_eq_cm_entry entry;
	struct conn_side other = { 0 };
	struct cm_event ev;
	uint32_t event;

	connect_req(_metadata, self, NULL);
	/* Another connection keeps the process's CM port open. */
	side_open(_metadata, self, &other, self->info, false);
	ASSERT_EQ(0, fi_connect(other.ep, &self->pep_addr, NULL, 0));
	ASSERT_EQ(sizeof(ev.entry), eq_wait(self->peq, &event, &ev,
					    sizeof(ev)));
	ASSERT_EQ(FI_CONNREQ, event);
	fi_freeinfo(ev.entry.info);	/* left unanswered */
	fi_close(&self->cli.ep->fid);
	self->cli.ep = NULL;

	side_open(_metadata, self, &self->srv, self->req, true);
	ASSERT_EQ(0, peer_accept(self->srv.ep, NULL, 0));
	ASSERT_EQ(sizeof(entry), eq_wait(self->srv.eq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_CONNECTED, event);
	ASSERT_EQ(sizeof(entry), eq_wait(self->srv.eq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_SHUTDOWN, event);
	ASSERT_EQ(&self->srv.ep->fid, entry.fid);
	side_close(&other);
}

TEST_F(cm, closing_an_unaccepted_endpoint_rejects)
{
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_cm_entry entry;
	uint32_t event;

	connect_req(_metadata, self, NULL);
	side_open(_metadata, self, &self->srv, self->req, true);
	prov_peer_run(ep_close_fn, self->srv.ep);
	self->srv.ep = NULL;
	ASSERT_EQ(-FI_EAVAIL, eq_wait(self->cli.eq, &event, &entry,
				      sizeof(entry)));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->cli.eq, &err, 0));
	ASSERT_EQ(FI_ECONNREFUSED, err.err);
}

TEST_F(cm, misuse_fails_with_its_errno)
{
	char big[300] = { 0 };
	struct fid_ep *ep;
	struct fid_pep *pep2;
	size_t sz, len;

	/* Not connected yet: no peer to send to or to name. */
	ASSERT_EQ(-FI_ENOTCONN, fi_send(self->cli.ep, "x", 1, NULL, 0, NULL));
	len = sizeof(struct sockaddr_in);
	ASSERT_EQ(-FI_ENOTCONN, fi_getpeer(self->cli.ep, big, &len));
	ASSERT_EQ(-FI_ENOTCONN, fi_shutdown(self->cli.ep, 0));
	/* Connection data is at most FI_OPT_CM_DATA_SIZE bytes. */
	len = sizeof(sz);
	ASSERT_EQ(0, fi_getopt(&self->cli.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_CM_DATA_SIZE, &sz, &len));
	ASSERT_EQ(256, sz);
	ASSERT_EQ(0, fi_getopt(&self->pep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_CM_DATA_SIZE, &sz, &len));
	ASSERT_EQ(256, sz);
	ASSERT_EQ(-FI_EINVAL, fi_connect(self->cli.ep, &self->pep_addr, NULL,
					 1));
	ASSERT_EQ(-FI_EINVAL, fi_connect(self->cli.ep, NULL, NULL, 0));
	/* Accepting needs a request; connecting needs an EQ. */
	ASSERT_EQ(-FI_EOPBADSTATE, fi_accept(self->cli.ep, NULL, 0));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &ep, NULL));
	ASSERT_EQ(-FI_ENOEQ, fi_connect(ep, &self->pep_addr, NULL, 0));
	fi_close(&ep->fid);
	/* Twice: the first attempt is under way, then connected. */
	ASSERT_EQ(0, fi_connect(self->cli.ep, &self->pep_addr, NULL, 0));
	ASSERT_EQ(-FI_EALREADY, fi_connect(self->cli.ep, &self->pep_addr,
					   NULL, 0));
	/* A second listener cannot take the first one's address. */
	ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info, &pep2,
				   NULL));
	ASSERT_EQ(0, fi_pep_bind(pep2, &self->peq->fid, 0));
	ASSERT_EQ(0, fi_setname(&pep2->fid, &self->pep_addr,
				sizeof(self->pep_addr)));
	ASSERT_EQ(-FI_EADDRINUSE, prov_peer_run(listen_fn, pep2));
	fi_close(&pep2->fid);
	/* Passive endpoints are FI_EP_MSG only. */
	self->info->ep_attr->type = FI_EP_RDM;
	ASSERT_EQ(-FI_EINVAL, fi_passive_ep(self->fabric, self->info, &pep2,
					    NULL));
	self->info->ep_attr->type = FI_EP_MSG;
}

/*
 * fi_cm(3): fi_connect, fi_accept and fi_reject silently truncate data
 * beyond FI_OPT_CM_DATA_SIZE (256 bytes here) - not an error.
 */
TEST_F(cm, data_beyond_cm_data_size_is_truncated)
{
	struct fi_eq_err_entry err = { 0 };
	char big[300];
	struct cm_event ev;
	uint32_t event;

	memset(big, 'b', sizeof(big));
	ASSERT_EQ(0, fi_connect(self->cli.ep, &self->pep_addr, big,
				sizeof(big)));
	ASSERT_EQ((ssize_t)(sizeof(ev.entry) + 256),
		  eq_wait(self->peq, &event, &ev, sizeof(ev)));
	ASSERT_EQ(FI_CONNREQ, event);
	EXPECT_EQ(0, memcmp(ev.data, big, 256));
	self->req = ev.entry.info;
	ASSERT_EQ(0, fi_reject(self->pep, self->req->handle, big,
			       sizeof(big)));
	ASSERT_EQ(-FI_EAVAIL, eq_wait(self->cli.eq, &event, &ev, sizeof(ev)));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->cli.eq, &err, 0));
	EXPECT_EQ(FI_ECONNREFUSED, err.err);
	EXPECT_EQ(256, err.err_data_size);
	fi_freeinfo(self->req);
	self->req = NULL;

	connect_req(_metadata, self, NULL);
	side_open(_metadata, self, &self->srv, self->req, true);
	ASSERT_EQ(0, peer_accept(self->srv.ep, big, sizeof(big)));
	ASSERT_EQ((ssize_t)(sizeof(ev.entry) + 256),
		  eq_wait(self->cli.eq, &event, &ev, sizeof(ev)));
	ASSERT_EQ(FI_CONNECTED, event);
	EXPECT_EQ(0, memcmp(ev.data, big, 256));
}

/*
 * fi_eq(3): the connection data returned is limited to the buffer space
 * provided - an event with data read into a bare struct fi_eq_cm_entry
 * gives the entry (and what of the data fits), not -FI_ETOOSMALL.
 */
TEST_F(cm, cm_event_with_data_fits_a_bare_entry)
{
	struct {
		struct fi_eq_cm_entry entry;
		char data[2];
	} part;
	struct fi_eq_cm_entry entry;
	uint32_t event;

	ASSERT_EQ(0, fi_connect(self->cli.ep, &self->pep_addr, "hello", 6));
	ASSERT_EQ(sizeof(entry), eq_wait(self->peq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_CONNREQ, event);
	ASSERT_EQ(&self->pep->fid, entry.fid);
	ASSERT_NE(NULL, entry.info);
	self->req = entry.info;
	side_open(_metadata, self, &self->srv, self->req, true);
	ASSERT_EQ(0, peer_accept(self->srv.ep, "welcome", 8));
	ASSERT_EQ(sizeof(entry), eq_wait(self->srv.eq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_CONNECTED, event);
	/* A buffer with room for part of the data: that part. */
	ASSERT_EQ(sizeof(part), fi_eq_sread(self->cli.eq, &event, &part,
					    sizeof(part), 5000, FI_PEEK));
	ASSERT_EQ(FI_CONNECTED, event);
	EXPECT_EQ(0, memcmp(part.data, "we", 2));
	/* The header alone does not fit: too small, and nothing is lost. */
	ASSERT_EQ(-FI_ETOOSMALL, fi_eq_read(self->cli.eq, &event, &entry,
					    sizeof(entry) - 1, 0));
	ASSERT_EQ(sizeof(entry), fi_eq_read(self->cli.eq, &event, &entry,
					    sizeof(entry), 0));
	ASSERT_EQ(FI_CONNECTED, event);
	ASSERT_EQ(&self->cli.ep->fid, entry.fid);
	ASSERT_EQ(-FI_EAGAIN, fi_eq_read(self->cli.eq, &event, &entry,
					 sizeof(entry), 0));
	transfer(_metadata, &self->cli, &self->srv, 'd', 10);
}

TEST_F(cm, connect_enables_the_endpoint)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_eq_cm_entry entry;
	struct conn_side s = { 0 };
	uint32_t event;

	eq_open(_metadata, self->fabric, &s.eq);
	ASSERT_EQ(0, fi_cq_open(self->domain, &cq_attr, &s.cq, NULL));
	ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &s.ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(s.ep, &s.eq->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_connect(s.ep, &self->pep_addr, NULL, 0));
	ASSERT_EQ(sizeof(entry), eq_wait(self->peq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_CONNREQ, event);
	self->req = entry.info;
	side_close(&self->cli);
	self->cli = s;
	accept_req(_metadata, self, NULL);
	transfer(_metadata, &self->srv, &self->cli, 'e', 4096);
}

/* Client and server in two processes, as fi_pingpong -e msg runs them. */
TEST_F(cm, peer_in_another_process)
{
	struct fi_eq_cm_entry entry;
	uint32_t event;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The child connects from a fabric and domain of its own. */
		struct fi_info *hints = prov_hints();
		struct fid_fabric *fabric;
		struct fid_domain *domain;
		struct fid_eq *eq;
		struct fid_cq *cq;
		struct fid_ep *ep;
		struct fi_info *fi;
		struct fi_cq_msg_entry e;
		struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
		struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
		char buf[64] = { 0 };

		hints->ep_attr->type = FI_EP_MSG;
		hints->caps = FI_MSG;
		if (prov_getinfo(NULL, NULL, 0, hints, &fi) ||
		    fi_fabric(fi->fabric_attr, &fabric, NULL) ||
		    fi_domain(fabric, fi, &domain, NULL) ||
		    fi_eq_open(fabric, &eq_attr, &eq, NULL) ||
		    fi_cq_open(domain, &cq_attr, &cq, NULL) ||
		    fi_endpoint(domain, fi, &ep, NULL) ||
		    fi_ep_bind(ep, &eq->fid, 0) ||
		    fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) ||
		    fi_enable(ep) ||
		    fi_recv(ep, buf, sizeof(buf), NULL, 0, NULL) ||
		    fi_connect(ep, &self->pep_addr, "child", 6))
			_exit(10);
		if (fi_eq_sread(eq, &event, &entry, sizeof(entry), 5000, 0) !=
		    sizeof(entry) || event != FI_CONNECTED)
			_exit(11);
		if (cq_wait(cq, &e) != 1 || strcmp(buf, "ping"))
			_exit(12);
		if (fi_send(ep, "pong", 5, NULL, 0, NULL) || cq_wait(cq, &e) != 1)
			_exit(13);
		/* Wait for the parent's shutdown before closing. */
		if (fi_eq_sread(eq, &event, &entry, sizeof(entry), 5000, 0) !=
		    sizeof(entry) || event != FI_SHUTDOWN)
			_exit(14);
		fi_close(&ep->fid);
		fi_close(&cq->fid);
		fi_close(&eq->fid);
		fi_close(&domain->fid);
		fi_close(&fabric->fid);
		fi_freeinfo(fi);
		fi_freeinfo(hints);
		_exit(0);
	}
	{
		struct cm_event ev;
		struct fi_cq_msg_entry e;
		char buf[64] = { 0 };

		ASSERT_EQ(sizeof(ev.entry) + 6,
			  eq_wait(self->peq, &event, &ev, sizeof(ev)));
		ASSERT_EQ(FI_CONNREQ, event);
		ASSERT_STREQ("child", ev.data);
		self->req = ev.entry.info;
		side_open(_metadata, self, &self->srv, self->req, true);
		ASSERT_EQ(0, fi_recv(self->srv.ep, buf, sizeof(buf), NULL, 0,
				     NULL));
		ASSERT_EQ(0, peer_accept(self->srv.ep, NULL, 0));
		ASSERT_EQ(sizeof(entry), eq_wait(self->srv.eq, &event, &entry,
						 sizeof(entry)));
		ASSERT_EQ(FI_CONNECTED, event);
		ASSERT_EQ(0, fi_send(self->srv.ep, "ping", 5, NULL, 0, NULL));
		ASSERT_EQ(1, cq_wait(self->srv.cq, &e));	/* the send */
		ASSERT_EQ(1, cq_wait(self->srv.cq, &e));	/* the pong */
		ASSERT_STREQ("pong", buf);
		ASSERT_EQ(0, fi_shutdown(self->srv.ep, 0));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/* Open file descriptors of this process. */
static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* One of two threads running @fn(@arg) at once (race_two()). */
struct race {
	pthread_barrier_t *go;
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

static void *racer(void *arg)
{
	struct race *r = arg;

	pthread_barrier_wait(r->go);
	r->ret = r->fn(r->arg);
	return NULL;
}

/*
 * @fn(@arg) on two threads at once. Return: how many of them got 0 (-1
 * if a thread could not start); the other's answer must be @busy.
 */
static int race_two(struct __test_metadata *_metadata, int (*fn)(void *),
		    void *arg, int busy)
{
	struct race r[2];
	pthread_barrier_t go;
	pthread_t t[2];
	int n, ok = 0;

	if (pthread_barrier_init(&go, NULL, 2))
		return -1;
	for (n = 0; n < 2; n++) {
		r[n] = (struct race){ .go = &go, .fn = fn, .arg = arg };
		if (pthread_create(&t[n], NULL, racer, &r[n]))
			break;
	}
	if (n < 2) {
		/* One started alone waits at the barrier for ever. */
		if (n) {
			pthread_cancel(t[0]);
			pthread_join(t[0], NULL);
		}
		pthread_barrier_destroy(&go);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		if (!r[i].ret)
			ok++;
		else
			EXPECT_EQ(busy, r[i].ret);
	}
	pthread_barrier_destroy(&go);
	return ok;
}

static int peer_listen_fn(void *pep)
{
	return prov_peer_run(listen_fn, pep);
}

/*
 * Two threads listening on one passive endpoint at once: one port is
 * opened, the other thread is told so (0 or -FI_EBUSY), and closing the
 * passive endpoint leaves nothing behind (no second port, which would
 * hold its domain's, CQ's and eventfd's descriptors and a pointer to the
 * freed passive endpoint).
 */
TEST_F(cm, concurrent_listens_open_one_port)
{
	for (int round = 0; round < 4; round++) {
		struct fid_pep *pep;
		int before;

		before = fd_count();
		ASSERT_LT(0, before);
		ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info,
					   &pep, NULL));
		ASSERT_EQ(0, fi_pep_bind(pep, &self->peq->fid, 0));
		EXPECT_LE(1, race_two(_metadata, peer_listen_fn, pep,
				      -FI_EBUSY));
		ASSERT_EQ(0, fi_close(&pep->fid));
		EXPECT_EQ(before, fd_count());
	}
}

/*
 * fi_endpoint(3): an active endpoint may be opened from an fi_info whose
 * handle is a passive endpoint (as fi_getinfo gives for hints->handle).
 */
TEST_F(cm, endpoint_from_a_passive_endpoint_handle)
{
	struct fi_info *hints = fi_dupinfo(self->info), *info;
	struct fid_pep *pep;
	struct fid_ep *ep = NULL;

	ASSERT_NE(NULL, hints);
	ASSERT_EQ(0, fi_passive_ep(self->fabric, self->info, &pep, NULL));
	hints->handle = &pep->fid;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	ASSERT_EQ(&pep->fid, info->handle);
	EXPECT_EQ(0, fi_endpoint(self->domain, info, &ep, NULL));
	if (ep)
		EXPECT_EQ(0, fi_close(&ep->fid));
	hints->handle = NULL;
	fi_freeinfo(hints);
	fi_freeinfo(info);
	EXPECT_EQ(0, fi_close(&pep->fid));
}

/* The connectors' side of a flood: @n endpoints on the client's EQ, CQ. */
static void open_connectors(struct __test_metadata *_metadata,
			    FIXTURE_DATA(cm) *self, struct fid_ep **eps, int n)
{
	for (int i = 0; i < n; i++) {
		ASSERT_EQ(0, fi_endpoint(self->domain, self->info, &eps[i],
					 NULL));
		ASSERT_EQ(0, fi_ep_bind(eps[i], &self->cli.eq->fid, 0));
		ASSERT_EQ(0, fi_ep_bind(eps[i], &self->cli.cq->fid,
					FI_TRANSMIT | FI_RECV));
		ASSERT_EQ(0, fi_enable(eps[i]));
	}
}

/* FI_ECONNREFUSED errors on @eq until it is quiet for 2 s. */
static int refusals(struct __test_metadata *_metadata, struct fid_eq *eq)
{
	struct fi_eq_err_entry err;
	struct fi_eq_cm_entry entry;
	uint32_t event;
	int n = 0;

	while (fi_eq_sread(eq, &event, &entry, sizeof(entry), 2000, 0) ==
	       -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		EXPECT_EQ(sizeof(err), fi_eq_readerr(eq, &err, 0));
		EXPECT_EQ(FI_ECONNREFUSED, err.err);
		n++;
	}
	return n;
}

/* Read @eq's queued FI_CONNREQs (none of them overrun); keep the first. */
static int connreqs(struct __test_metadata *_metadata, struct fid_eq *eq,
		    struct fi_info **first)
{
	struct cm_event ev;
	uint32_t event;
	ssize_t ret;
	int n = 0;

	while ((ret = fi_eq_read(eq, &event, &ev, sizeof(ev), 0)) > 0) {
		EXPECT_EQ(FI_CONNREQ, event);
		if (!n && first)
			*first = ev.entry.info;
		else
			fi_freeinfo(ev.entry.info);
		n++;
	}
	EXPECT_EQ(-FI_EAGAIN, ret);	/* not -FI_EAVAIL: no overrun */
	return n;
}

/*
 * A flood of connection requests to a listener whose EQ is small: what
 * does not fit is refused (FI_ECONNREFUSED at once, not a request lost),
 * the EQ is never overrun, and an endpoint accepted on that same EQ
 * still gets its FI_CONNECTED and then its FI_SHUTDOWN.
 */
TEST_F(cm, request_flood_never_overruns_the_listeners_eq)
{
	enum { N = 24 };
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD, .size = 8 };
	struct sockaddr_in addr;
	size_t len = sizeof(addr);
	struct fi_info *req = NULL;
	struct fi_eq_cm_entry entry;
	struct conn_side acc = { 0 };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fid_ep *eps[N];
	struct fid_pep *pep;
	struct fid_eq *eq;
	uint32_t event;
	int refused, queued;

	ASSERT_EQ(0, fi_eq_open(self->peer.fabric, &attr, &eq, NULL));
	ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info, &pep,
				   NULL));
	ASSERT_EQ(0, fi_pep_bind(pep, &eq->fid, 0));
	ASSERT_EQ(0, prov_peer_run(listen_fn, pep));
	ASSERT_EQ(0, fi_getname(&pep->fid, &addr, &len));
	open_connectors(_metadata, self, eps, N);
	for (int i = 0; i < N; i++)
		ASSERT_EQ(0, fi_connect(eps[i], &addr, NULL, 0));
	refused = refusals(_metadata, self->cli.eq);
	queued = connreqs(_metadata, eq, &req);
	/* Every request is queued or refused; the EQ was never full. */
	EXPECT_EQ(N, refused + queued);
	EXPECT_LT(queued, (int)attr.size);
	ASSERT_LT(0, queued);
	ASSERT_NE(NULL, req);

	/* The accepting endpoint's events go to the listener's EQ. */
	ASSERT_EQ(0, fi_cq_open(self->peer.domain, &cq_attr, &acc.cq, NULL));
	ASSERT_EQ(0, fi_endpoint(self->peer.domain, req, &acc.ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(acc.ep, &eq->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(acc.ep, &acc.cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, peer_accept(acc.ep, NULL, 0));
	ASSERT_EQ(sizeof(entry), eq_wait(eq, &event, &entry, sizeof(entry)));
	EXPECT_EQ(FI_CONNECTED, event);
	EXPECT_EQ(&acc.ep->fid, entry.fid);
	ASSERT_EQ(sizeof(entry), eq_wait(self->cli.eq, &event, &entry,
					 sizeof(entry)));
	ASSERT_EQ(FI_CONNECTED, event);
	for (int i = 0; i < N; i++) {
		if (entry.fid == &eps[i]->fid)
			ASSERT_EQ(0, fi_shutdown(eps[i], 0));
	}
	ASSERT_EQ(sizeof(entry), eq_wait(eq, &event, &entry, sizeof(entry)));
	EXPECT_EQ(FI_SHUTDOWN, event);
	EXPECT_EQ(&acc.ep->fid, entry.fid);

	prov_peer_run(ep_close_fn, acc.ep);
	fi_close(&acc.cq->fid);
	fi_freeinfo(req);
	for (int i = 0; i < N; i++)
		fi_close(&eps[i]->fid);
	fi_close(&pep->fid);
	fi_close(&eq->fid);
}

/*
 * fi_cm(3): the backlog bounds the requests a listener holds, and
 * fi_control FI_BACKLOG sets it. Those beyond it are refused at once.
 */
TEST_F(cm, backlog_bounds_pending_requests)
{
	enum { N = 5 };
	struct sockaddr_in addr;
	size_t len = sizeof(addr);
	struct fid_ep *eps[N];
	struct fid_pep *pep;
	int two = 2, zero = 0;

	ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info, &pep,
				   NULL));
	ASSERT_EQ(-FI_EINVAL, fi_control(&pep->fid, FI_BACKLOG, &zero));
	ASSERT_EQ(0, fi_control(&pep->fid, FI_BACKLOG, &two));
	ASSERT_EQ(0, fi_pep_bind(pep, &self->peq->fid, 0));
	ASSERT_EQ(0, prov_peer_run(listen_fn, pep));
	ASSERT_EQ(0, fi_getname(&pep->fid, &addr, &len));
	open_connectors(_metadata, self, eps, N);
	for (int i = 0; i < N; i++)
		ASSERT_EQ(0, fi_connect(eps[i], &addr, NULL, 0));
	EXPECT_EQ(N - 2, refusals(_metadata, self->cli.eq));
	EXPECT_EQ(2, connreqs(_metadata, self->peq, NULL));
	/* Answered (here: by closing the listener), they free the backlog. */
	for (int i = 0; i < N; i++)
		fi_close(&eps[i]->fid);
	fi_close(&pep->fid);
}

struct connect_args {
	struct fid_ep *ep;
	struct sockaddr_in *addr;
};

static int connect_fn(void *arg)
{
	struct connect_args *c = arg;

	return fi_connect(c->ep, c->addr, NULL, 0);
}

/*
 * FI_THREAD_SAFE: two threads connect one endpoint that is not enabled
 * yet and has no EQ of its own (its domain's is the default) at once.
 * One connects, the other is told it is under way; the endpoint takes
 * the domain's EQ once (the EQ closes after the domain and endpoint) and
 * is enabled once (closing it leaves no descriptor behind).
 */
TEST_F(cm, concurrent_connects_enable_once)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fid_domain *dom;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct cm_event ev;
	uint32_t event;
	int before;

	ASSERT_EQ(0, fi_eq_open(self->fabric, &attr, &eq, NULL));
	ASSERT_EQ(0, fi_domain(self->fabric, self->info, &dom, NULL));
	ASSERT_EQ(0, fi_domain_bind(dom, &eq->fid, 0));
	ASSERT_EQ(0, fi_cq_open(dom, &cq_attr, &cq, NULL));
	for (int round = 0; round < 20; round++) {
		struct connect_args c;
		struct fid_ep *ep;

		before = fd_count();
		ASSERT_LT(0, before);
		ASSERT_EQ(0, fi_endpoint(dom, self->info, &ep, NULL));
		ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
		c = (struct connect_args){ .ep = ep, .addr = &self->pep_addr };
		EXPECT_EQ(1, race_two(_metadata, connect_fn, &c,
				      -FI_EALREADY));
		/* One request; refused, so that it leaves the backlog. */
		ASSERT_EQ(sizeof(ev.entry), eq_wait(self->peq, &event, &ev,
						    sizeof(ev)));
		ASSERT_EQ(FI_CONNREQ, event);
		EXPECT_EQ(0, fi_reject(self->pep, ev.entry.info->handle, NULL,
				       0));
		fi_freeinfo(ev.entry.info);
		EXPECT_EQ(-FI_EAGAIN, fi_eq_read(self->peq, &event, &ev,
						 sizeof(ev), 0));
		ASSERT_EQ(0, fi_close(&ep->fid));
		/* Nothing left behind (the first round opens the CM port). */
		if (round)
			EXPECT_EQ(before, fd_count());
	}
	EXPECT_EQ(0, fi_close(&cq->fid));
	EXPECT_EQ(0, fi_close(&dom->fid));
	EXPECT_EQ(0, fi_close(&eq->fid));
}

/* The ids of this process's threads, up to @max: how many. */
static int task_ids(int *ids, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			ids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

struct starve_connect {
	struct fid_ep **eps;
	int n;
	struct sockaddr_in *addr;
	atomic_int done;
	int ret;
};

static void *connect_all(void *arg)
{
	struct starve_connect *c = arg;

	for (int i = 0; i < c->n && !c->ret; i++)
		c->ret = fi_connect(c->eps[i], c->addr, NULL, 0);
	atomic_store(&c->done, 1);
	return NULL;
}

/*
 * Requests that reached a listener which closes before its CM thread
 * read them (in its CQ, or beyond its posted receives in the kernel's
 * unexpected queue) are refused: each connector gets FI_ECONNREFUSED,
 * none waits for ever. The listener's CM thread is kept off the CPU (it
 * shares one with this thread, which runs SCHED_FIFO without blocking)
 * from before the requests arrive until the close has told it to stop,
 * so none is dispatched.
 */
TEST_F(cm, requests_unread_at_listener_close_are_refused)
{
	enum { N = 20, MAXT = 64 };
	struct sched_param fifo = { .sched_priority = 10 };
	struct sched_param other = { .sched_priority = 0 };
	int before[MAXT], after[MAXT], nb, na, cm_tid = 0;
	struct starve_connect c = { 0 };
	struct sockaddr_in addr;
	size_t len = sizeof(addr);
	struct fid_ep *eps[N];
	struct timespec t0;
	struct fid_pep *pep;
	cpu_set_t cpu0, cpu1;
	pthread_attr_t ta;
	bool sent;
	pthread_t th;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, fi_passive_ep(self->peer.fabric, self->peer.info, &pep,
				   NULL));
	ASSERT_EQ(0, fi_pep_bind(pep, &self->peq->fid, 0));
	open_connectors(_metadata, self, eps, N);
	/* The client's shared CM port exists already (the fixture's). */
	nb = task_ids(before, MAXT);
	ASSERT_EQ(0, prov_peer_run(listen_fn, pep));
	na = task_ids(after, MAXT);
	for (int i = 0; i < na; i++) {
		bool old = false;

		for (int j = 0; j < nb; j++)
			old |= after[i] == before[j];
		if (!old) {
			ASSERT_EQ(0, cm_tid);	/* one new thread */
			cm_tid = after[i];
		}
	}
	ASSERT_NE(0, cm_tid);
	ASSERT_EQ(0, fi_getname(&pep->fid, &addr, &len));
	usleep(100000);			/* it sleeps in poll() */

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(cm_tid, sizeof(cpu0), &cpu0));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));
	if (sched_setscheduler(0, SCHED_FIFO, &fifo))
		SKIP(return, "no SCHED_FIFO: %s", strerror(errno));
	c = (struct starve_connect){ .eps = eps, .n = N, .addr = &addr };
	/*
	 * The connector runs beside us, on another CPU and as an ordinary
	 * thread: not our SCHED_FIFO and CPU, which a new thread would
	 * inherit - it would not run until the close.
	 */
	CPU_ZERO(&cpu1);
	CPU_SET(1, &cpu1);
	if (pthread_attr_init(&ta) ||
	    pthread_attr_setinheritsched(&ta, PTHREAD_EXPLICIT_SCHED) ||
	    pthread_attr_setschedpolicy(&ta, SCHED_OTHER) ||
	    pthread_attr_setschedparam(&ta, &other) ||
	    pthread_attr_setaffinity_np(&ta, sizeof(cpu1), &cpu1) ||
	    pthread_create(&th, &ta, connect_all, &c)) {
		sched_setscheduler(0, SCHED_OTHER, &other);
		ASSERT_TRUE(false);
	}
	pthread_attr_destroy(&ta);
	/* Spin (no blocking: the CM thread would run) until all are sent. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!atomic_load(&c.done) && sys_ms_since(&t0) < 20000)
		;
	sent = atomic_load(&c.done);
	/* And a little longer: the last request is on its way. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (sys_ms_since(&t0) < 300)
		;
	fi_close(&pep->fid);
	sched_setscheduler(0, SCHED_OTHER, &other);
	pthread_join(th, NULL);
	ASSERT_EQ(0, c.ret);
	/* Sent while the listener was open: else the close came first. */
	ASSERT_TRUE(sent) TH_LOG("the requests went only after the close");

	/* Nothing reached the listener's EQ; every connector is refused. */
	EXPECT_EQ(0, connreqs(_metadata, self->peq, NULL));
	EXPECT_EQ(N, refusals(_metadata, self->cli.eq));
	for (int i = 0; i < N; i++)
		fi_close(&eps[i]->fid);
}

/* fi_wait_open: deprecated in libfabric 2.x, still part of its API. */
SWNIC_DEPRECATED_BEGIN

/*
 * fi_fabric(3): a fabric closes after everything opened from it - its
 * passive endpoints too, listening or not, as its domains, EQs and wait
 * sets: -FI_EBUSY until then, and nothing lost by the refusal.
 */
TEST(fabric_close_busy_with_passive_endpoints)
{
	struct fi_eq_attr eattr = { .wait_obj = FI_WAIT_NONE };
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_wait *wait;
	struct fid_pep *pep, *pep2;
	struct fid_eq *eq;
	int ret;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_MSG;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	fi_freeinfo(hints);
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fabric, NULL));

	/* A passive endpoint, not listening. */
	ASSERT_EQ(0, fi_passive_ep(fabric, info, &pep, NULL));
	ret = fi_close(&fabric->fid);
	EXPECT_EQ(-FI_EBUSY, ret);
	if (ret == 0) {
		/* Closed under it: nothing more to test on it. */
		fi_close(&pep->fid);
		fi_freeinfo(info);
		return;
	}
	/* It still works: an EQ bound, listening, closed. */
	ASSERT_EQ(0, fi_eq_open(fabric, &eattr, &eq, NULL));
	ASSERT_EQ(0, fi_pep_bind(pep, &eq->fid, 0));
	EXPECT_EQ(0, fi_listen(pep));
	EXPECT_EQ(-FI_EBUSY, fi_close(&fabric->fid));
	EXPECT_EQ(0, fi_close(&pep->fid));
	EXPECT_EQ(-FI_EBUSY, fi_close(&fabric->fid));	/* the EQ */
	EXPECT_EQ(0, fi_close(&eq->fid));

	/* Two of them: busy until the last closes. */
	ASSERT_EQ(0, fi_passive_ep(fabric, info, &pep, NULL));
	ASSERT_EQ(0, fi_passive_ep(fabric, info, &pep2, NULL));
	EXPECT_EQ(0, fi_close(&pep->fid));
	EXPECT_EQ(-FI_EBUSY, fi_close(&fabric->fid));
	EXPECT_EQ(0, fi_close(&pep2->fid));

	/* The others opened from it, as before. */
	ASSERT_EQ(0, fi_domain(fabric, info, &domain, NULL));
	EXPECT_EQ(-FI_EBUSY, fi_close(&fabric->fid));
	EXPECT_EQ(0, fi_close(&domain->fid));
	ASSERT_EQ(0, fi_wait_open(fabric, &wattr, &wait));
	EXPECT_EQ(-FI_EBUSY, fi_close(&fabric->fid));
	EXPECT_EQ(0, fi_close(&wait->fid));

	EXPECT_EQ(0, fi_close(&fabric->fid));
	fi_freeinfo(info);
}

SWNIC_DEPRECATED_END

TEST_HARNESS_MAIN
