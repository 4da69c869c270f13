// SPDX-License-Identifier: GPL-2.0
/*
 * wire_srx - a shared receive context between two hosts (test_wire_srx.sh
 * runs it in two network namespaces). The target opens an SRX and two
 * RDM endpoints bound to it, each with its own CQ, on one AV; the
 * initiator two plain endpoints. They swap the endpoints' names over a
 * TCP socket (port 27993). Then, checking each result:
 *   1. three receives posted to the SRX (two untagged, then a 256 KiB
 *      tagged one) are taken, in posting order, by messages from both
 *      initiator endpoints to both target endpoints: each completes on
 *      the CQ of the endpoint it arrived at, its source (FI_SOURCE) the
 *      initiator endpoint that sent it; the tagged one with its data and
 *      remote CQ data placed across many packets;
 *   2. a message that arrives over the wire before any receive waits in
 *      the SRX, and the receive posted afterwards takes it, completing on
 *      the CQ of the endpoint it arrived at.
 * Exit status 0 when every check passed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "wire_util.h"

#define OOB_PORT	27993
#define NEP		2
#define BIG		(256 << 10)

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;

struct side {
	struct fid_av *av;
	struct fid_ep *srx;		/* the target's, else NULL */
	struct fid_ep *ep[NEP];
	struct fid_cq *cq[NEP];
	fi_addr_t peer[NEP];
};

static void setup(bool shared)
{
	struct fi_info *hints = wire_hints(FI_MSG | FI_TAGGED | FI_SOURCE);

	if (shared)
		hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	info = wire_getinfo(hints, NULL);
	wire_domain_open(info, &fabric, &domain);
}

static void side_open(struct side *s, bool shared)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret, i;

	if ((ret = fi_av_open(domain, &av_attr, &s->av, NULL)))
		die("fi_av_open", ret);
	if (shared && (ret = fi_srx_context(domain, NULL, &s->srx, NULL)))
		die("fi_srx_context", ret);
	for (i = 0; i < NEP; i++) {
		if ((ret = fi_endpoint(domain, info, &s->ep[i], NULL)) ||
		    (ret = fi_cq_open(domain, &cq_attr, &s->cq[i], NULL)) ||
		    (ret = fi_ep_bind(s->ep[i], &s->cq[i]->fid,
				      FI_TRANSMIT | FI_RECV)) ||
		    (ret = fi_ep_bind(s->ep[i], &s->av->fid, 0)) ||
		    (shared &&
		     (ret = fi_ep_bind(s->ep[i], &s->srx->fid, 0))) ||
		    (ret = fi_enable(s->ep[i])))
			die("endpoints", ret);
	}
}

static int run_target(void)
{
	static uint8_t big[BIG];
	struct fi_cq_tagged_entry e;
	uint64_t buf[3] = { 0 };
	struct side s;
	fi_addr_t src;
	ssize_t n;
	int sock, i;

	memset(&s, 0, sizeof(s));
	side_open(&s, true);
	sock = wire_oob_accept(OOB_PORT, WIRE_OOB_IPV4);
	wire_swap_names(sock, s.ep, NEP, s.av, s.peer);
	for (i = 0; i < 2; i++)
		if (fi_recv(s.srx, &buf[i], 8, NULL, FI_ADDR_UNSPEC, &buf[i]))
			die("fi_recv", -FI_EIO);
	if (fi_trecv(s.srx, big, BIG, NULL, FI_ADDR_UNSPEC, 7, 0, big))
		die("fi_trecv", -FI_EIO);
	wire_sync(sock, true);
	/* Initiator 0 -> endpoint 1, initiator 1 -> endpoint 0, then big. */
	wire_sync(sock, false);
	n = wire_cq_get(s.cq[1], &e, &src);
	CHECK(n == 1 && e.op_context == &buf[0] && buf[0] == 1000,
	      "receive 0 took the first message, on endpoint 1's CQ");
	CHECK(n == 1 && src == s.peer[0], "its source is initiator 0");
	n = wire_cq_get(s.cq[0], &e, &src);
	CHECK(n == 1 && e.op_context == &buf[1] && buf[1] == 1001,
	      "receive 1 took the second message, on endpoint 0's CQ");
	CHECK(n == 1 && src == s.peer[1], "its source is initiator 1");
	{
		int good;

		n = wire_cq_get(s.cq[0], &e, &src);
		good = n == 1 && e.op_context == big && e.len == BIG &&
		       (e.flags & FI_REMOTE_CQ_DATA) && e.data == 99 &&
		       e.tag == 7 && src == s.peer[0];
		for (i = 0; i < BIG && good; i++)
			good = big[i] == (uint8_t)(i * 7);
		CHECK(good, "256 KiB tagged with data placed through the SRX");
	}
	CHECK(fi_cq_read(s.cq[1], &e, 1) == -FI_EAGAIN,
	      "endpoint 1 got nothing else");
	/* An unexpected message at endpoint 1, then its receive. */
	wire_sync(sock, false);
	if (fi_recv(s.srx, &buf[2], 8, NULL, FI_ADDR_UNSPEC, &buf[2]))
		die("fi_recv", -FI_EIO);
	n = wire_cq_get(s.cq[1], &e, &src);
	CHECK(n == 1 && e.op_context == &buf[2] && buf[2] == 1002 &&
	      src == s.peer[1],
	      "the unexpected message waited in the SRX for its receive");
	CHECK(fi_cq_read(s.cq[0], &e, 1) == -FI_EAGAIN,
	      "endpoint 0 got nothing else");
	wire_sync(sock, true);
	close(sock);
	return failures ? 1 : 0;
}

static int run_initiator(const char *node)
{
	static uint8_t big[BIG];
	struct fi_cq_tagged_entry e;
	uint64_t msg[3] = { 1000, 1001, 1002 };
	struct side s;
	int sock, i;

	memset(&s, 0, sizeof(s));
	side_open(&s, false);
	sock = wire_oob_connect(node, OOB_PORT, WIRE_OOB_IPV4);
	wire_swap_names(sock, s.ep, NEP, s.av, s.peer);
	wire_sync(sock, false);
	if (fi_send(s.ep[0], &msg[0], 8, NULL, s.peer[1], &msg[0]))
		die("fi_send", -FI_EIO);
	CHECK(wire_cq_get(s.cq[0], &e, NULL) == 1 && e.op_context == &msg[0],
	      "send 0 completed");
	if (fi_send(s.ep[1], &msg[1], 8, NULL, s.peer[0], &msg[1]))
		die("fi_send", -FI_EIO);
	CHECK(wire_cq_get(s.cq[1], &e, NULL) == 1 && e.op_context == &msg[1],
	      "send 1 completed");
	for (i = 0; i < BIG; i++)
		big[i] = (uint8_t)(i * 7);
	if (fi_tsenddata(s.ep[0], big, BIG, NULL, 99, s.peer[0], 7, big))
		die("fi_tsenddata", -FI_EIO);
	CHECK(wire_cq_get(s.cq[0], &e, NULL) == 1 && e.op_context == big,
	      "256 KiB tagged send completed");
	wire_sync(sock, true);
	if (fi_send(s.ep[1], &msg[2], 8, NULL, s.peer[1], &msg[2]))
		die("fi_send", -FI_EIO);
	CHECK(wire_cq_get(s.cq[1], &e, NULL) == 1 && e.op_context == &msg[2],
	      "send 2 (unexpected there) completed");
	wire_sync(sock, true);
	wire_sync(sock, false);
	close(sock);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "-s")) {
		setup(true);
		return run_target();
	}
	if (argc == 2) {
		setup(false);
		return run_initiator(argv[1]);
	}
	fprintf(stderr, "usage: wire_srx -s | wire_srx TARGET_IPV4\n");
	return 2;
}
