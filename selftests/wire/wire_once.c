// SPDX-License-Identifier: GPL-2.0
/*
 * wire_once - one send, received once (test_wire_spoof.sh runs it in two
 * network namespaces). The target (-s) opens an RDM endpoint, posts four
 * receives and sends its address over a TCP socket (port 27991). The
 * initiator (given TARGET-IPV4, the target's address on the wire) sends
 * one 64-byte message, makes GO-FILE as soon as it is posted (the test's
 * forger waits for it: a packet forged while the first round trip is
 * under way), waits for its completion and tells the target, which then waits
 * 3 s more and counts the messages it got: exactly one, data checked.
 * A request run twice at the target (the initiator sent it again under a
 * new incarnation) shows as two. Exit status 0 when every check passed.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "wire_util.h"

#define OOB_PORT	27991
#define LEN		64
#define NRECV		4

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_ep *ep;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fi_info *info;

static void setup(const char *node)
{
	struct fi_info *hints = wire_hints(FI_MSG);
	int ret;

	info = wire_getinfo(hints, node);
	wire_domain_open(info, &fabric, &domain);
	if ((ret = wire_ep_open(domain, info, FI_CQ_FORMAT_TAGGED, &ep, &cq,
				&av)) ||
	    (ret = fi_enable(ep)))
		die("setup", ret);
}

static void teardown(void)
{
	fi_close(&ep->fid);
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Completions for @ms: receives counted, data checked; errors counted. */
static void count_recvs(long ms, int *n, int *bad, int *errs)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	long end = now_ms() + ms;
	ssize_t r;
	int i;

	while (now_ms() < end) {
		r = fi_cq_read(cq, &e, 1);
		if (r == 1) {
			const unsigned char *b = e.op_context;

			(*n)++;
			for (i = 0; i < LEN; i++)
				if (!b || b[i] != (unsigned char)(i * 7 + 1))
					break;
			*bad += e.len != LEN || i != LEN;
		} else if (r == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(cq, &err, 0);
			(*errs)++;
		} else if (r != -FI_EAGAIN) {
			die("fi_cq_read", (int)r);
		} else {
			usleep(1000);
		}
	}
}

static int run_target(void)
{
	static unsigned char bufs[NRECV][LEN];
	char addr[64], c;
	size_t addrlen = sizeof(addr);
	int s, i, n = 0, bad = 0, errs = 0, ret;

	setup(NULL);
	for (i = 0; i < NRECV; i++) {
		ret = (int)fi_recv(ep, bufs[i], LEN, NULL, FI_ADDR_UNSPEC,
				   bufs[i]);
		if (ret)
			die("fi_recv", ret);
	}
	ret = fi_getname(&ep->fid, addr, &addrlen);
	if (ret)
		die("fi_getname", ret);
	s = wire_oob_accept(OOB_PORT, WIRE_OOB_IPV4);
	wire_send(s, &addrlen, sizeof(addrlen), "out-of-band address");
	wire_send(s, addr, addrlen, "out-of-band address");
	/* Until the initiator's send completed, then 3 s more. */
	wire_recv(s, &c, 1, "out-of-band read");
	count_recvs(3000, &n, &bad, &errs);
	CHECK(n == 1 && !bad && !errs,
	      "target: the message was received exactly once (%d times, %d bad, %d errors)",
	      n, bad, errs);
	close(s);
	teardown();
	return failures ? 1 : 0;
}

static int run_initiator(const char *node, const char *go)
{
	unsigned char buf[LEN];
	struct fi_cq_tagged_entry e;
	char addr[64];
	size_t addrlen;
	fi_addr_t peer;
	ssize_t r;
	int s, i, ret;
	long t0;

	setup(node);
	s = wire_oob_connect(node, OOB_PORT, WIRE_OOB_IPV4);
	wire_recv(s, &addrlen, sizeof(addrlen), "out-of-band address");
	if (addrlen > sizeof(addr))
		die("out-of-band address", -FI_EINVAL);
	wire_recv(s, addr, addrlen, "out-of-band address");
	if (fi_av_insert(av, addr, 1, &peer, 0, NULL) != 1)
		die("fi_av_insert", -FI_EINVAL);
	for (i = 0; i < LEN; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	do {
		ret = (int)fi_send(ep, buf, LEN, NULL, peer, NULL);
	} while (ret == -FI_EAGAIN);
	if (ret)
		die("fi_send", ret);
	t0 = now_ms();
	printf("wire_once: sent\n");
	fflush(stdout);
	if (go) {
		ret = open(go, O_WRONLY | O_CREAT, 0644);
		if (ret < 0)
			die("the go file", -FI_EIO);
		close(ret);
	}
	r = wire_cq_get(cq, &e, NULL);
	CHECK(r == 1 && (e.flags & FI_SEND),
	      "initiator: the send completed, %ld ms after the post (%zd)",
	      now_ms() - t0, r);
	wire_send(s, "d", 1, "out-of-band write");
	close(s);
	teardown();
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "-s"))
		return run_target();
	if ((argc == 2 || argc == 3) && argv[1][0] != '-')
		return run_initiator(argv[1], argc == 3 ? argv[2] : NULL);
	fprintf(stderr, "usage: wire_once -s | wire_once TARGET-IPV4 [GO-FILE]\n");
	return 2;
}
