// SPDX-License-Identifier: GPL-2.0
/*
 * wire_sep - scalable endpoints between two hosts (test_wire_sep.sh runs
 * it in two network namespaces). Each side opens a SEP with two transmit
 * and two receive contexts, each with its own CQ, on an AV with
 * rx_ctx_bits 1, and they swap the SEPs' names over a TCP socket (port
 * 27992). Then, checking each result:
 *   1. the initiator's transmit context i sends to the target's receive
 *      context 1 - i (fi_rx_addr): each arrives on that context's CQ only,
 *      its source (FI_SOURCE) the initiator's SEP, and each send completes
 *      on the CQ of the context that posted it;
 *   2. a 256 KiB tagged message with remote CQ data from transmit
 *      context 0 to receive context 1 (many packets, all placed there);
 *   3. the target answers from its transmit context 1 to the initiator's
 *      receive context 1, its source the target's SEP.
 * Exit status 0 when every check passed.
 */
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

#define OOB_PORT	27992
#define NCTX		2
#define BIG		(256 << 10)

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;

struct sep {
	struct fid_ep *sep;
	struct fid_av *av;
	struct fid_ep *tx[NCTX], *rx[NCTX];
	struct fid_cq *txcq[NCTX], *rxcq[NCTX];
	fi_addr_t peer;
};

static void setup(const char *node)
{
	struct fi_info *hints = wire_hints(FI_MSG | FI_TAGGED | FI_SOURCE |
					   FI_NAMED_RX_CTX);

	hints->ep_attr->tx_ctx_cnt = NCTX;
	hints->ep_attr->rx_ctx_cnt = NCTX;
	info = wire_getinfo(hints, node);
	wire_domain_open(info, &fabric, &domain);
}

static void sep_open(struct sep *s)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .rx_ctx_bits = 1 };
	int ret, i;

	if ((ret = fi_scalable_ep(domain, info, &s->sep, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &s->av, NULL)) ||
	    (ret = fi_scalable_ep_bind(s->sep, &s->av->fid, 0)))
		die("scalable endpoint", ret);
	for (i = 0; i < NCTX; i++) {
		if ((ret = fi_tx_context(s->sep, i, NULL, &s->tx[i], NULL)) ||
		    (ret = fi_cq_open(domain, &cq_attr, &s->txcq[i], NULL)) ||
		    (ret = fi_ep_bind(s->tx[i], &s->txcq[i]->fid,
				      FI_TRANSMIT)) ||
		    (ret = fi_enable(s->tx[i])) ||
		    (ret = fi_rx_context(s->sep, i, NULL, &s->rx[i], NULL)) ||
		    (ret = fi_cq_open(domain, &cq_attr, &s->rxcq[i], NULL)) ||
		    (ret = fi_ep_bind(s->rx[i], &s->rxcq[i]->fid, FI_RECV)) ||
		    (ret = fi_enable(s->rx[i])))
			die("contexts", ret);
	}
	if ((ret = fi_enable(s->sep)))
		die("fi_enable", ret);
}

static int run_target(void)
{
	static uint8_t big[BIG];
	struct fi_cq_tagged_entry e;
	uint64_t buf[NCTX] = { 0 }, msg = 4242;
	struct sep s;
	fi_addr_t src;
	int sock, i;

	memset(&s, 0, sizeof(s));
	sep_open(&s);
	sock = wire_oob_accept(OOB_PORT, WIRE_OOB_IPV4);
	wire_swap_names(sock, &s.sep, 1, s.av, &s.peer);
	for (i = 0; i < NCTX; i++)
		if (fi_recv(s.rx[i], &buf[i], 8, NULL, FI_ADDR_UNSPEC,
			    &buf[i]))
			die("fi_recv", -FI_EIO);
	if (fi_trecv(s.rx[1], big, BIG, NULL, s.peer, 7, 0, big))
		die("fi_trecv", -FI_EIO);
	wire_sync(sock, true);

	for (i = 0; i < NCTX; i++) {
		ssize_t n = wire_cq_get(s.rxcq[i], &e, &src);

		CHECK(n == 1 && e.op_context == &buf[i] &&
		      buf[i] == 1000u + (1 - i),
		      "rx context %d got tx context %d's message", i, 1 - i);
		CHECK(n == 1 && src == s.peer,
		      "rx context %d: the source is the peer's SEP", i);
	}
	{
		ssize_t n = wire_cq_get(s.rxcq[1], &e, &src);
		int good = n == 1 && e.op_context == big && e.len == BIG &&
			   (e.flags & FI_REMOTE_CQ_DATA) && e.data == 99;

		for (i = 0; i < BIG && good; i++)
			good = big[i] == (uint8_t)(i * 7);
		CHECK(good, "256 KiB tagged with data placed in rx context 1");
		CHECK(fi_cq_read(s.rxcq[0], &e, 1) == -FI_EAGAIN,
		      "rx context 0 got nothing else");
	}
	wire_sync(sock, false);
	if (fi_send(s.tx[1], &msg, 8, NULL, fi_rx_addr(s.peer, 1, 1), &msg))
		die("fi_send", -FI_EIO);
	CHECK(wire_cq_get(s.txcq[1], &e, NULL) == 1 && e.op_context == &msg,
	      "the answer completed on tx context 1");
	wire_sync(sock, false);
	close(sock);
	return failures ? 1 : 0;
}

static int run_initiator(const char *node)
{
	static uint8_t big[BIG];
	struct fi_cq_tagged_entry e;
	uint64_t msg[NCTX], buf = 0;
	struct sep s;
	fi_addr_t src;
	int sock, i;

	memset(&s, 0, sizeof(s));
	sep_open(&s);
	sock = wire_oob_connect(node, OOB_PORT, WIRE_OOB_IPV4);
	wire_swap_names(sock, &s.sep, 1, s.av, &s.peer);
	if (fi_recv(s.rx[1], &buf, 8, NULL, FI_ADDR_UNSPEC, &buf))
		die("fi_recv", -FI_EIO);
	wire_sync(sock, false);
	for (i = 0; i < NCTX; i++) {
		msg[i] = 1000u + i;
		if (fi_send(s.tx[i], &msg[i], 8, NULL,
			    fi_rx_addr(s.peer, 1 - i, 1), &msg[i]))
			die("fi_send", -FI_EIO);
		CHECK(wire_cq_get(s.txcq[i], &e, NULL) == 1 &&
		      e.op_context == &msg[i],
		      "send %d completed on tx context %d", i, i);
		CHECK(fi_cq_read(s.txcq[1 - i], &e, 1) == -FI_EAGAIN,
		      "and not on tx context %d", 1 - i);
	}
	for (i = 0; i < BIG; i++)
		big[i] = (uint8_t)(i * 7);
	if (fi_tsenddata(s.tx[0], big, BIG, NULL, 99,
			 fi_rx_addr(s.peer, 1, 1), 7, big))
		die("fi_tsenddata", -FI_EIO);
	CHECK(wire_cq_get(s.txcq[0], &e, NULL) == 1 && e.op_context == big,
	      "256 KiB tagged send completed on tx context 0");
	wire_sync(sock, true);
	CHECK(wire_cq_get(s.rxcq[1], &e, &src) == 1 && buf == 4242 &&
	      src == s.peer,
	      "rx context 1 got the answer, from the target's SEP");
	CHECK(fi_cq_read(s.rxcq[0], &e, 1) == -FI_EAGAIN,
	      "rx context 0 got nothing");
	wire_sync(sock, true);
	close(sock);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "-s")) {
		setup(NULL);
		return run_target();
	}
	if (argc == 2) {
		setup(NULL);
		return run_initiator(argv[1]);
	}
	fprintf(stderr, "usage: wire_sep -s | wire_sep TARGET_IPV4\n");
	return 2;
}
