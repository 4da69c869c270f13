// SPDX-License-Identifier: GPL-2.0
/*
 * wire_hol - one endpoint that cannot take a peer's messages holds back
 * that endpoint's traffic only (test_wire_hol.sh runs it in two network
 * namespaces). The target opens two RDM endpoints, each with its own CQ;
 * the initiator two, of which it sends from the first. They swap names
 * over a TCP socket (port 27994). Then, checking each result:
 *   1. the initiator sends SENDS 1 MiB messages to target endpoint 0,
 *      which posts no receive: its unexpected buffer (4 MiB) takes the
 *      first UNEXP, the others must wait for room at the target;
 *   2. meanwhile SMALL 8-byte sends to target endpoint 1 complete, and
 *      arrive intact, while endpoint 0's waiting sends still wait (they
 *      were sent first, from the same endpoint to the same host);
 *   3. one more 1 MiB send to endpoint 0, then the target posts its
 *      receives: all SENDS + 1 arrive intact in the order they were sent,
 *      and every send completes without error;
 *   4. the target's endpoint 1 receives CHURN_MSGS 32 KiB messages, into
 *      a buffer whose pages it drops before each, while another thread
 *      of it maps and unmaps memory and changes the protection of a
 *      16 MiB mapping all the while (its mmap lock taken for writing
 *      again and again): each arrives intact, none is a fault.
 * Exit status 0 when every check passed.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "wire_util.h"

#define OOB_PORT	27994
#define NEP		2
#define BIG		(1 << 20)
#define UNEXP		4	/* SWNIC_UNEXP_MAX_BYTES / BIG */
#define SENDS		6
#define SMALL		20
#define CHURN_LEN	(32 << 10)	/* below the provider's FI_SWNIC_RECV_REG_MIN */
#define CHURN_MSGS	50

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;

struct side {
	struct fid_ep *ep[NEP];
	struct fid_cq *cq[NEP];
	struct fid_av *av[NEP];
	fi_addr_t peer[NEP];
};

static void side_open(struct side *s)
{
	struct fi_info *hints = wire_hints(FI_MSG);
	int ret, i;

	info = wire_getinfo(hints, NULL);
	wire_domain_open(info, &fabric, &domain);
	for (i = 0; i < NEP; i++) {
		ret = wire_ep_open(domain, info, FI_CQ_FORMAT_TAGGED, &s->ep[i],
				   &s->cq[i], &s->av[i]);
		if (ret || (ret = fi_enable(s->ep[i])))
			die("endpoints", ret);
	}
}

/* Message @seq: every 8-byte word is seq << 32 | index. */
static void fill(uint64_t *buf, size_t len, uint64_t seq)
{
	for (size_t i = 0; i < len / 8; i++)
		buf[i] = seq << 32 | i;
}

static bool is_msg(const uint64_t *buf, size_t len, uint64_t seq)
{
	for (size_t i = 0; i < len / 8; i++)
		if (buf[i] != (seq << 32 | i))
			return false;
	return true;
}

static volatile bool churn_stop;

#define CHURN_REGION	(16 << 20)

/*
 * What a multithreaded application does beside: map and unmap memory, and
 * change the protection of a large mapping of its own (each call holds
 * the mmap lock for writing while it walks the mapping's pages).
 */
static void *churn_thread(void *arg)
{
	char *region = arg;

	while (!churn_stop) {
		size_t len = 1 << 20;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return (void *)1;
		p[0] = 1;
		munmap(p, len);
		if (mprotect(region, CHURN_REGION, PROT_READ) ||
		    mprotect(region, CHURN_REGION, PROT_READ | PROT_WRITE))
			return (void *)1;
	}
	return NULL;
}

static int run_target(void)
{
	struct fi_cq_tagged_entry e;
	uint64_t *big[SENDS + 1], small[SMALL], *cbuf;
	struct side s = {};
	pthread_t churn;
	void *churn_ret;
	char *region;
	bool good;
	int sock, i;
	ssize_t n;

	side_open(&s);
	sock = wire_oob_accept(OOB_PORT, WIRE_OOB_IPV4);
	/* The initiator's first endpoint sends to both: one AV. */
	wire_swap_names(sock, s.ep, NEP, s.av[0], s.peer);
	for (i = 0; i < SMALL; i++)
		if (fi_recv(s.ep[1], &small[i], 8, NULL, FI_ADDR_UNSPEC,
			    &small[i]))
			die("fi_recv", -FI_EIO);
	wire_sync(sock, true);

	/* 1-2: endpoint 1's messages pass endpoint 0's waiting ones. */
	wire_sync(sock, false);
	for (i = 0, good = true; i < SMALL && good; i++) {
		n = wire_cq_get(s.cq[1], &e, NULL);
		good = n == 1 && e.op_context == &small[i] &&
		       small[i] == 1000 + (uint64_t)i;
	}
	CHECK(good, "%d sends to endpoint 1 arrived, in order and intact",
	      SMALL);
	CHECK(fi_cq_read(s.cq[0], &e, 1) == -FI_EAGAIN,
	      "endpoint 0, with no receive posted, completed nothing");

	/* 3: its receives take every message, in the order sent. */
	wire_sync(sock, false);
	for (i = 0; i <= SENDS; i++) {
		big[i] = calloc(1, BIG);
		if (!big[i] || fi_recv(s.ep[0], big[i], BIG, NULL,
				       FI_ADDR_UNSPEC, big[i]))
			die("fi_recv", -FI_EIO);
	}
	for (i = 0, good = true; i <= SENDS && good; i++) {
		n = wire_cq_get(s.cq[0], &e, NULL);
		good = n == 1 && e.op_context == big[i] && e.len == BIG &&
		       is_msg(big[i], BIG, i + 1);
		if (!good)
			printf("# receive %d: %zd, len %zu, seq %llu\n", i, n,
			       n == 1 ? e.len : 0,
			       (unsigned long long)(big[i][0] >> 32));
	}
	CHECK(good, "endpoint 0's %d messages arrived intact, in order",
	      SENDS + 1);
	for (i = 0; i <= SENDS; i++)
		free(big[i]);

	/* 4: receives while another thread maps memory all the while. */
	cbuf = malloc(CHURN_LEN);
	region = mmap(NULL, CHURN_REGION, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!cbuf || region == MAP_FAILED ||
	    pthread_create(&churn, NULL, churn_thread, region))
		die("churn", -FI_ENOMEM);
	for (i = 0, good = true; i < CHURN_MSGS && good; i++) {
		/* The pages go, to be faulted in again by the kernel. */
		madvise(cbuf, CHURN_LEN, MADV_DONTNEED);
		if (fi_recv(s.ep[1], cbuf, CHURN_LEN, NULL, FI_ADDR_UNSPEC,
			    cbuf))
			die("fi_recv", -FI_EIO);
		wire_sync(sock, true);
		n = wire_cq_get(s.cq[1], &e, NULL);
		good = n == 1 && e.op_context == cbuf && e.len == CHURN_LEN &&
		       is_msg(cbuf, CHURN_LEN, 100 + i);
		if (!good) {
			struct fi_cq_err_entry err = {};

			if (n == -FI_EAVAIL)
				fi_cq_readerr(s.cq[1], &err, 0);
			printf("# message %d: %zd (%s)\n", i, n,
			       fi_strerror(err.err));
		}
	}
	churn_stop = true;
	pthread_join(churn, &churn_ret);
	CHECK(good && !churn_ret,
	      "%d messages into a process mapping memory all the while: intact",
	      CHURN_MSGS);
	free(cbuf);
	munmap(region, CHURN_REGION);
	wire_sync(sock, true);
	close(sock);
	return failures ? 1 : 0;
}

static int run_initiator(const char *node)
{
	struct fi_cq_tagged_entry e;
	uint64_t *big[SENDS + 1], small[SMALL], *cbuf;
	bool waiting[SENDS + 1] = { false }, good;
	struct side s = {};
	int sock, i, got, early;
	ssize_t n;

	side_open(&s);
	sock = wire_oob_connect(node, OOB_PORT, WIRE_OOB_IPV4);
	/* The initiator's first endpoint sends to both: one AV. */
	wire_swap_names(sock, s.ep, NEP, s.av[0], s.peer);
	wire_sync(sock, false);

	/* 1: more than endpoint 0 can take; UNEXP complete, the rest wait. */
	for (i = 0; i <= SENDS; i++) {
		big[i] = malloc(BIG);
		if (!big[i])
			die("malloc", -FI_ENOMEM);
		fill(big[i], BIG, i + 1);
	}
	for (i = 0; i < SENDS; i++) {
		if (fi_send(s.ep[0], big[i], BIG, NULL, s.peer[0], big[i]))
			die("fi_send", -FI_EIO);
		waiting[i] = true;
	}
	for (i = 0, good = true; i < UNEXP && good; i++) {
		n = wire_cq_get(s.cq[0], &e, NULL);
		good = n == 1 && e.op_context == big[i];
		waiting[i] = !good;
	}
	CHECK(good, "the %d sends the target's unexpected buffer takes completed",
	      UNEXP);

	/* 2: the small sends complete while the others still wait. */
	for (i = 0; i < SMALL; i++) {
		small[i] = 1000 + i;
		if (fi_send(s.ep[0], &small[i], 8, NULL, s.peer[1], &small[i]))
			die("fi_send", -FI_EIO);
	}
	for (got = 0, early = 0; got < SMALL;) {
		n = wire_cq_get(s.cq[0], &e, NULL);
		if (n != 1)
			break;
		for (i = 0; i < SENDS; i++)
			if (e.op_context == big[i] && waiting[i]) {
				waiting[i] = false;
				early++;
			}
		got += e.op_context >= (void *)small &&
		       e.op_context < (void *)(small + SMALL);
	}
	if (n != 1) {
		struct fi_cq_err_entry err = {};

		if (n == -FI_EAVAIL)
			fi_cq_readerr(s.cq[0], &err, 0);
		printf("# completion: %zd (%s)\n", n, fi_strerror(err.err));
	}
	CHECK(got == SMALL && !early,
	      "%d sends to endpoint 1 completed while %d to endpoint 0 waited (%d of those came first)",
	      got, SENDS - UNEXP, early);

	/* 3: one more to endpoint 0, after the waiting ones. */
	if (fi_send(s.ep[0], big[SENDS], BIG, NULL, s.peer[0], big[SENDS]))
		die("fi_send", -FI_EIO);
	waiting[SENDS] = true;
	wire_sync(sock, true);
	wire_sync(sock, true);
	for (good = true; good;) {
		for (i = 0; i <= SENDS && !waiting[i]; i++)
			;
		if (i > SENDS)
			break;
		n = wire_cq_get(s.cq[0], &e, NULL);
		good = n == 1;
		for (i = 0; i <= SENDS && good; i++)
			if (e.op_context == big[i])
				waiting[i] = false;
	}
	CHECK(good, "every send to endpoint 0 completed without error");
	for (i = 0; i <= SENDS; i++)
		free(big[i]);

	/* 4: into a receiver that maps memory all the while. */
	cbuf = malloc(CHURN_LEN);
	if (!cbuf)
		die("malloc", -FI_ENOMEM);
	for (i = 0, good = true; i < CHURN_MSGS && good; i++) {
		fill(cbuf, CHURN_LEN, 100 + i);
		wire_sync(sock, false);
		if (fi_send(s.ep[0], cbuf, CHURN_LEN, NULL, s.peer[1], cbuf))
			die("fi_send", -FI_EIO);
		n = wire_cq_get(s.cq[0], &e, NULL);
		good = n == 1 && e.op_context == cbuf;
	}
	CHECK(good, "%d sends into a process mapping memory completed",
	      CHURN_MSGS);
	free(cbuf);
	wire_sync(sock, false);
	close(sock);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "-s"))
		return run_target();
	if (argc == 2)
		return run_initiator(argv[1]);
	fprintf(stderr, "usage: wire_hol -s | wire_hol TARGET_IPV4\n");
	return 2;
}
