// SPDX-License-Identifier: GPL-2.0
/*
 * wire_dc - FI_DELIVERY_COMPLETE across the wire (test_wire_dc.sh runs it
 * in two network namespaces, with a short peer timeout). A delivery-
 * complete send that the target buffers as unexpected completes at the
 * initiator only once a receive at the target takes it; if the target's
 * endpoint closes first, it fails.
 *
 * The target (-s) opens an RDM endpoint and sends its address over a TCP
 * socket (port 27991). The initiator (given the target's IPv4 address):
 *   1. sends 64 KiB with fi_sendmsg(FI_DELIVERY_COMPLETE) and 100 bytes
 *      with fi_tsendmsg(FI_DELIVERY_COMPLETE); the target has posted no
 *      receive. For -w ms (several peer timeouts: only keepalives keep
 *      the peer from failing them) no completion may come; with -c, the
 *      wire shows both held (`swnic -j peer show`: held_waiting 2).
 *   2. tells the target, which posts the receive, checks the data and
 *      says so; then the untagged send completes (the tagged one not: for
 *      1 s nothing more comes); then the target posts the tagged receive,
 *      and the tagged send completes.
 *   3. sends 4 KiB with FI_DELIVERY_COMPLETE, sees no completion for 1 s,
 *      and tells the target, which closes its endpoint with the message
 *      still buffered: the send fails (FI_ECONNABORTED, its fi_cq_strerror
 *      text "Software caused connection abort").
 * With -k, the initiator sends one such message, checks that it stays
 * waiting for -w ms, prints "waiting", and then expects it to fail with
 * ETIMEDOUT ("Connection timed out") within 60 s: test_wire_dc.sh cuts the
 * target's link and deletes its namespace meanwhile (-s -k: the target
 * only waits). With -r as well, it expects ECONNRESET ("Connection reset
 * by peer") instead: test_wire_dc.sh restarts the target meanwhile (a new
 * namespace with its address: a new incarnation), which must answer the
 * initiator's keepalive to its old incarnation with a RESET.
 * Exit status 0 when every check passed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "wire_util.h"

#define OOB_PORT	27991
#define LEN_A		65536
#define LEN_B		100
#define LEN_C		4096
#define TAG_B		0x7a6bULL

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_ep *ep;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fi_info *info;
static int wait_ms = 2000;	/* -w: the quiet window */

static void setup(const char *node)
{
	struct fi_info *hints = wire_hints(FI_MSG | FI_TAGGED);
	int ret;

	hints->mode = FI_CONTEXT;
	info = wire_getinfo(hints, node);
	wire_domain_open(info, &fabric, &domain);
	if ((ret = wire_ep_open(domain, info, FI_CQ_FORMAT_TAGGED, &ep, &cq,
				&av)) ||
	    (ret = fi_enable(ep)))
		die("setup", ret);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Poll the CQ for up to @ms. Return: 1 (a completion, in @e), -1 (an error
 * completion, in @err), 0 (none came).
 */
static int poll_cq(int ms, struct fi_cq_tagged_entry *e,
		   struct fi_cq_err_entry *err)
{
	double end = now_ms() + ms;
	ssize_t n;

	do {
		n = fi_cq_read(cq, e, 1);
		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			fi_cq_readerr(cq, err, 0);
			return -1;
		}
		if (n != -FI_EAGAIN)
			die("fi_cq_read", (int)n);
		usleep(200);
	} while (now_ms() < end);
	return 0;
}

/* No completion of any kind for @ms. */
static void expect_quiet(int ms, const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int r = poll_cq(ms, &e, &err);

	CHECK(r == 0, "%s: no completion for %d ms (got %s%s)", what, ms,
	      r > 0 ? "a completion" : r < 0 ? "an error: " : "none",
	      r < 0 ? fi_strerror(err.err) : "");
}

/* The target's out-of-band port at @node: an IPv4 address, or die. */
static int oob_connect(const char *node)
{
	struct in_addr a;

	if (inet_pton(AF_INET, node, &a) != 1)
		die("an IPv4 address", -FI_EINVAL);
	return wire_oob_connect(node, OOB_PORT, WIRE_OOB_IPV4);
}

static void oob_put(int s, char c)
{
	wire_send(s, &c, 1, "out-of-band write");
}

static char oob_get(int s)
{
	char c;

	wire_recv(s, &c, 1, "out-of-band read");
	return c;
}

static char pattern(size_t i, int seed)
{
	return (char)(i * 13 + seed);
}

static size_t check_pattern(const char *buf, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len && buf[i] == pattern(i, seed); i++)
		;
	return i;
}

/* Post a receive (tagged if @tag), wait for it, check its data. */
static void target_recv(int s, char *buf, size_t len, int tagged, int seed)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	ssize_t ret;
	int r;

	memset(buf, 0, len);
	ret = tagged ? fi_trecv(ep, buf, len, NULL, FI_ADDR_UNSPEC, TAG_B, 0,
				NULL) :
		       fi_recv(ep, buf, len, NULL, FI_ADDR_UNSPEC, NULL);
	if (ret)
		die("fi_recv", (int)ret);
	r = poll_cq(30000, &e, &err);
	CHECK(r == 1 && e.len == len && (e.flags & FI_RECV) &&
	      check_pattern(buf, len, seed) == len,
	      "target: the %s receive took the held message, data checked (%d, %zu bytes)",
	      tagged ? "tagged" : "untagged", r, r == 1 ? e.len : 0);
	oob_put(s, failures ? 1 : 0);
}

static int run_target(int kill_mode)
{
	char addr[64], *buf = malloc(LEN_A);
	size_t addrlen = sizeof(addr);
	int s, ret;

	setup(NULL);
	ret = fi_getname(&ep->fid, addr, &addrlen);
	if (ret)
		die("fi_getname", ret);
	s = wire_oob_accept(OOB_PORT, WIRE_OOB_IPV4);
	wire_send(s, &addrlen, sizeof(addrlen), "out-of-band address");
	wire_send(s, addr, addrlen, "out-of-band address");
	if (kill_mode) {
		oob_get(s);	/* killed meanwhile */
		return 0;
	}
	/* 2: the receives, when the initiator says. */
	if (oob_get(s) != 'R')
		die("protocol", -FI_EIO);
	target_recv(s, buf, LEN_A, 0, 1);
	if (oob_get(s) != 'T')
		die("protocol", -FI_EIO);
	target_recv(s, buf, LEN_B, 1, 2);
	/* 3: close the endpoint with a message buffered. */
	if (oob_get(s) != 'C')
		die("protocol", -FI_EIO);
	ret = fi_close(&ep->fid);
	CHECK(!ret, "target: endpoint closed with a held message (%d)", ret);
	ep = NULL;
	oob_put(s, 0);
	ret = oob_get(s);	/* the initiator's verdict */
	close(s);
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	free(buf);
	return failures || ret ? 1 : 0;
}

/* A delivery-complete send of @len bytes (pattern @seed), tagged if @tag. */
static void dc_send(char *buf, size_t len, int seed, int tagged, void *ctx,
		    fi_addr_t dest)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged tmsg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest,
		.tag = TAG_B, .context = ctx,
	};
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .context = ctx,
	};
	uint64_t flags = FI_DELIVERY_COMPLETE | FI_COMPLETION;
	ssize_t ret;

	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(i, seed);
	do {
		ret = tagged ? fi_tsendmsg(ep, &tmsg, flags) :
			       fi_sendmsg(ep, &msg, flags);
	} while (ret == -FI_EAGAIN);
	if (ret)
		die("send", (int)ret);
}

/* The wire of this namespace shows @n of our sends held by the peer. */
static void check_held(int n)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "swnic -j peer show | jq -e '[.[] | select(.peer != \"*\") | .held_waiting] | add == %d' >/dev/null",
		 n);
	CHECK(system(cmd) == 0, "the wire shows %d send(s) held by the peer (held_waiting)",
	      n);
	if (failures)
		system("swnic -j peer show | jq -c .");
}

/* Wait for the completion of @ctx, successful, of @len bytes. */
static void expect_done(void *ctx, size_t len, const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int r = poll_cq(30000, &e, &err);

	CHECK(r == 1 && e.op_context == ctx && (e.flags & FI_SEND),
	      "%s: completed after the target's receive took it (%s%s)", what,
	      r == 1 ? (e.op_context == ctx ? "its completion" :
			"another's completion") :
	      r < 0 ? "error: " : "none in 30 s",
	      r < 0 ? fi_strerror(err.err) : "");
	(void)len;
}

/* Wait up to @ms for the error completion of @ctx: its err, or 0. */
static int expect_error(void *ctx, int ms, const char *what, int want,
			const char *text)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char buf[128];
	const char *str = "";
	int r = poll_cq(ms, &e, &err);

	if (r < 0)
		str = fi_cq_strerror(cq, err.prov_errno, err.err_data, buf,
				     sizeof(buf));
	CHECK(r < 0 && err.op_context == ctx && err.err == want &&
	      err.prov_errno == want && str && strcasestr(str, text),
	      "%s: error completion %d (%s), prov_errno %d: \"%s\"", what,
	      r < 0 ? err.err : 0, r < 0 ? fi_strerror(err.err) :
	      r > 0 ? "a success" : "none", r < 0 ? err.prov_errno : 0,
	      str ? str : "");
	return r < 0 ? err.err : 0;
}

static int run_initiator(const char *node, int kill_mode, int restart,
			 int peer_check)
{
	char addr[64], *a = malloc(LEN_A), *b = malloc(LEN_B);
	char *c = malloc(LEN_C);
	struct fi_context ctx_a, ctx_b, ctx_c;
	size_t addrlen;
	fi_addr_t dest;
	int s, ret;

	setup(node);
	s = oob_connect(node);
	wire_recv(s, &addrlen, sizeof(addrlen), "out-of-band address");
	if (addrlen > sizeof(addr))
		die("out-of-band address", -FI_EIO);
	wire_recv(s, addr, addrlen, "out-of-band address");
	ret = fi_av_insert(av, addr, 1, &dest, 0, NULL);
	if (ret != 1)
		die("fi_av_insert", ret);

	if (kill_mode) {
		dc_send(c, LEN_C, 3, 0, &ctx_c, dest);
		expect_quiet(wait_ms, "a send held by a live peer");
		if (peer_check)
			check_held(1);
		printf("waiting\n");
		fflush(stdout);
		if (restart)
			expect_error(&ctx_c, 60000,
				     "the held send, its peer restarted",
				     FI_ECONNRESET, "reset");
		else
			expect_error(&ctx_c, 60000,
				     "the held send, its peer gone",
				     FI_ETIMEDOUT, "timed out");
		return failures ? 1 : 0;
	}

	/* 1: held, while the peer lives (keepalives). */
	dc_send(a, LEN_A, 1, 0, &ctx_a, dest);
	dc_send(b, LEN_B, 2, 1, &ctx_b, dest);
	expect_quiet(wait_ms, "two delivery-complete sends, no receive posted");
	if (peer_check)
		check_held(2);
	/* 2: the receives. */
	oob_put(s, 'R');
	CHECK(oob_get(s) == 0, "the target received the untagged send");
	expect_done(&ctx_a, LEN_A, "the untagged send");
	expect_quiet(1000, "the tagged send, still held");
	oob_put(s, 'T');
	CHECK(oob_get(s) == 0, "the target received the tagged send");
	expect_done(&ctx_b, LEN_B, "the tagged send");
	if (peer_check)
		check_held(0);
	/* 3: the target's endpoint closes on a held message. */
	dc_send(c, LEN_C, 3, 0, &ctx_c, dest);
	expect_quiet(1000, "a delivery-complete send, no receive posted");
	oob_put(s, 'C');
	oob_get(s);
	expect_error(&ctx_c, 30000, "the held send, its endpoint closed",
		     FI_ECONNABORTED, "abort");
	oob_put(s, failures ? 1 : 0);
	close(s);
	fi_close(&ep->fid);
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	free(a);
	free(b);
	free(c);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int opt, target = 0, kill_mode = 0, restart = 0, peer_check = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "sckrw:")) != -1) {
		switch (opt) {
		case 's':
			target = 1;
			break;
		case 'c':
			peer_check = 1;
			break;
		case 'k':
			kill_mode = 1;
			break;
		case 'r':
			restart = 1;
			break;
		case 'w':
			wait_ms = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (target)
		return run_target(kill_mode);
	if (optind != argc - 1)
		goto usage;
	if (restart && !kill_mode)
		goto usage;
	return run_initiator(argv[optind], kill_mode, restart, peer_check);
usage:
	fprintf(stderr, "usage: wire_dc -s [-k] | wire_dc [-c] [-k [-r]] [-w MS] TARGET-IPV4\n");
	return 2;
}
