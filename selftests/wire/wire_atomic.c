// SPDX-License-Identifier: GPL-2.0
/*
 * wire_atomic - atomics between two hosts (test_wire_atomic.sh runs it in
 * two network namespaces). The target (-s) opens an RDM endpoint with
 * FI_ATOMIC, registers a two-page buffer for remote read and write and a
 * page for remote read only, and sends its address and the MRs' keys and
 * addresses over a TCP socket (port 27991). The initiator then, checking
 * each result against the reference of atomic_ref.h:
 *   1. runs every valid op x datatype combination (base, fetch, compare)
 *      on the target: set by ATOMIC_WRITE, applied, read back by
 *      ATOMIC_READ, fetched values checked;
 *   2. the same for elements straddling the target's page boundary;
 *   3. a wrong key, a range past the MR, a write and a fetching write to
 *      the read-only MR: error completions (FI_ENOKEY, ERANGE, FI_EACCES);
 *   4. two endpoints in two threads add 1 to the same word N times each:
 *      the word is 2N.
 * Then it tells the target, which checks that word in its own memory. No
 * target process code runs for the atomics: the target only waits. Every
 * wait is bounded. Exit status 0 when every check passed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "../atomic_ref.h"
#include "wire_util.h"

#define OOB_PORT	27991
#define PAGE		4096
#define ADDS		500
#define SUM_OFF		(PAGE + 512)	/* the word both threads add to */

struct target_info {
	char addr[64];
	size_t addrlen;
	uint64_t key_rw, addr_rw, key_ro, addr_ro;
};

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fi_info *info;

struct side {
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;
	fi_addr_t peer;
};

static void setup(const char *node)
{
	info = wire_getinfo(wire_hints(FI_MSG | FI_ATOMIC), node);
	wire_domain_open(info, &fabric, &domain);
}

static void side_open(struct side *s)
{
	int ret;

	if ((ret = wire_ep_open(domain, info, FI_CQ_FORMAT_TAGGED, &s->ep,
				&s->cq, &s->av)) ||
	    (ret = fi_enable(s->ep)))
		die("endpoint", ret);
}

static int run_target(void)
{
	uint8_t *rw = aligned_alloc(PAGE, 2 * PAGE);
	uint8_t *ro = aligned_alloc(PAGE, PAGE);
	struct fid_mr *mr_rw, *mr_ro;
	struct target_info ti = {};
	struct side s = {};
	char done;
	int sock, ret, virt;

	setup(NULL);
	side_open(&s);
	memset(rw, 0, 2 * PAGE);
	memset(ro, 0x11, PAGE);
	if ((ret = fi_mr_reg(domain, rw, 2 * PAGE,
			     FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr_rw,
			     NULL)) ||
	    (ret = fi_mr_reg(domain, ro, PAGE, FI_REMOTE_READ, 0, 0, 0, &mr_ro,
			     NULL)))
		die("fi_mr_reg", ret);
	ti.addrlen = sizeof(ti.addr);
	ret = fi_getname(&s.ep->fid, ti.addr, &ti.addrlen);
	if (ret)
		die("fi_getname", ret);
	/* Without FI_MR_VIRT_ADDR, remote addresses are offsets in the MR. */
	virt = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
	ti.key_rw = fi_mr_key(mr_rw);
	ti.addr_rw = virt ? (uintptr_t)rw : 0;
	ti.key_ro = fi_mr_key(mr_ro);
	ti.addr_ro = virt ? (uintptr_t)ro : 0;
	sock = wire_oob_accept(OOB_PORT, WIRE_OOB_DUAL);
	wire_send(sock, &ti, sizeof(ti), "out-of-band exchange");
	wire_recv(sock, &done, 1, "out-of-band exchange");
	CHECK(*(volatile uint64_t *)(rw + SUM_OFF) == 2 * ADDS,
	      "target: the word both added to is %d (%llu)", 2 * ADDS,
	      (unsigned long long)*(volatile uint64_t *)(rw + SUM_OFF));
	CHECK(ro[0] == 0x11 && ro[PAGE - 1] == 0x11,
	      "target: the read-only MR is untouched");
	done = failures ? 1 : 0;
	wire_send(sock, &done, 1, "out-of-band result");
	close(sock);
	fi_close(&mr_rw->fid);
	fi_close(&mr_ro->fid);
	return failures ? 1 : 0;
}

struct adder {
	struct side *s;
	uint64_t raddr, key;
	int failures;
};

static void *add_ones(void *arg)
{
	struct adder *ad = arg;
	uint64_t one = 1, old;

	for (int i = 0; i < ADDS; i++) {
		int ret;

		if (i & 1)
			ret = fi_fetch_atomic(ad->s->ep, &one, 1, NULL, &old,
					      NULL, ad->s->peer, ad->raddr,
					      ad->key, FI_UINT64, FI_SUM, NULL);
		else
			ret = fi_atomic(ad->s->ep, &one, 1, NULL, ad->s->peer,
					ad->raddr, ad->key, FI_UINT64, FI_SUM,
					NULL);
		if (ret == -FI_EAGAIN) {
			i--;
			usleep(100);
			continue;
		}
		if (ret || at_wait(ad->s->cq, NULL))
			ad->failures++;
	}
	return NULL;
}

static int run_initiator(const char *node)
{
	struct target_info ti;
	struct side a = {}, b = {};
	struct at_peer p;
	uint64_t one = 1, res, zero = 0;
	int sock, ret, runs = 0, bad = 0;
	pthread_t tx, ty;
	char done = 0, why[128];

	setup(node);
	side_open(&a);
	side_open(&b);
	sock = wire_oob_connect(node, OOB_PORT, WIRE_OOB_DUAL);
	wire_recv(sock, &ti, sizeof(ti), "out-of-band read");
	if (fi_av_insert(a.av, ti.addr, 1, &a.peer, 0, NULL) != 1 ||
	    fi_av_insert(b.av, ti.addr, 1, &b.peer, 0, NULL) != 1)
		die("fi_av_insert", -FI_EINVAL);
	p = (struct at_peer) {
		.ep = a.ep, .cq = a.cq, .addr = a.peer,
		.raddr = ti.addr_rw + 64, .key = ti.key_rw,
	};

	for (int kind = AT_BASE; kind <= AT_COMPARE; kind++)
		for (int dt = 0; dt < AT_NDT; dt++)
			for (int op = 0; op < AT_NOP; op++) {
				if (!at_valid(kind, op, dt))
					continue;
				runs++;
				if (!at_run(&p, kind, op, dt, why,
					    sizeof(why)))
					continue;
				bad++;
				printf("# %s op %d dt %d: %s\n",
				       at_kind_name[kind], op, dt, why);
			}
	CHECK(runs == 318 && !bad,
	      "every op x datatype across, values checked (%d runs, %d bad)",
	      runs, bad);

	bad = 0;
	for (int dt = 1; dt < AT_NDT; dt++) {
		p.raddr = ti.addr_rw + PAGE - at_size[dt] / 2;
		if (at_run(&p, AT_COMPARE, FI_CSWAP, dt, why, sizeof(why)) ||
		    at_run(&p, AT_FETCH, FI_SUM, dt, why, sizeof(why))) {
			bad++;
			printf("# straddling dt %d: %s\n", dt, why);
		}
	}
	CHECK(!bad, "elements straddling the target's page boundary");

	p.raddr = ti.addr_rw;
	p.key = ti.key_rw + 977;
	ret = at_post(&p, AT_BASE, FI_SUM, FI_UINT64, &one, NULL, NULL, 1,
		      NULL);
	CHECK(ret == -FI_ENOKEY, "a key that does not exist: %d (%s)", ret,
	      fi_strerror(-ret));
	p.key = ti.key_rw;
	p.raddr = ti.addr_rw + 2 * PAGE - 4;
	ret = at_post(&p, AT_BASE, FI_SUM, FI_UINT64, &one, NULL, NULL, 1,
		      NULL);
	CHECK(ret == -ERANGE, "past the MR's end: %d (%s)", ret,
	      fi_strerror(-ret));
	p.key = ti.key_ro;
	p.raddr = ti.addr_ro;
	ret = at_post(&p, AT_BASE, FI_SUM, FI_UINT64, &one, NULL, NULL, 1,
		      NULL);
	CHECK(ret == -FI_EACCES, "an update of the read-only MR: %d (%s)",
	      ret, fi_strerror(-ret));
	ret = at_post(&p, AT_FETCH, FI_SUM, FI_UINT64, &one, NULL, &res, 1,
		      NULL);
	CHECK(ret == -FI_EACCES, "a fetching update of it: %d (%s)", ret,
	      fi_strerror(-ret));
	ret = at_post(&p, AT_FETCH, FI_ATOMIC_READ, FI_UINT64, NULL, NULL,
		      &res, 1, NULL);
	CHECK(!ret && res == 0x1111111111111111ULL,
	      "an atomic read of it: %d, %#llx", ret, (unsigned long long)res);

	p.key = ti.key_rw;
	p.raddr = ti.addr_rw + SUM_OFF;
	ret = at_post(&p, AT_BASE, FI_ATOMIC_WRITE, FI_UINT64, &zero, NULL,
		      NULL, 1, NULL);
	{
		struct adder x = { .s = &a, .raddr = p.raddr, .key = p.key };
		struct adder y = { .s = &b, .raddr = p.raddr, .key = p.key };

		pthread_create(&tx, NULL, add_ones, &x);
		pthread_create(&ty, NULL, add_ones, &y);
		pthread_join(tx, NULL);
		pthread_join(ty, NULL);
		ret = ret ?: at_post(&p, AT_FETCH, FI_ATOMIC_READ, FI_UINT64,
				     NULL, NULL, &res, 1, NULL);
		CHECK(!ret && !x.failures && !y.failures && res == 2 * ADDS,
		      "two endpoints adding %d each at once: %llu (%d, %d/%d)",
		      ADDS, (unsigned long long)res, ret, x.failures,
		      y.failures);
	}

	wire_send(sock, &done, 1, "out-of-band end");
	wire_recv(sock, &done, 1, "out-of-band end");
	CHECK(!done, "the target's checks passed");
	close(sock);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "-s"))
		return run_target();
	if (argc == 2)
		return run_initiator(argv[1]);
	fprintf(stderr, "usage: wire_atomic -s | wire_atomic TARGET-IPV4\n");
	return 2;
}
