// SPDX-License-Identifier: GPL-2.0
/*
 * What one small message costs the CPU on one host: two endpoints of one
 * process, driven by one thread, send SIZE bytes back and forth - post a
 * receive at one, send to it from the other, read both completions, and
 * the same the other way. Nothing waits for another CPU, so every cycle
 * spent is on the message's path, and a profile of it (perf record) has
 * no spinning peer in it: what fi_pingpong's one-way latency is made of,
 * without its scheduling noise.
 *
 * Usage: cpu_lat PROV SIZE [ITERS]   (PROV: swnic, shm, ...; SIZE <= 64 KiB)
 * Prints "<usec>", the mean per message over ITERS round trips (after
 * 1000 unmeasured ones); exits non-zero with a message if it cannot.
 *
 * CPU_LAT_CNTR=none|unspec|fd: each endpoint also counts its sends and
 * receives in a counter with that wait object, as an application that
 * waits on counters has them (what counting costs the path).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define MAX_SIZE	65536
#define WARMUP		1000

struct side {
	struct fid_cq *cq;
	struct fid_cntr *cntr;
	struct fid_ep *ep;
	struct fid_mr *mr;
	void *desc;
	fi_addr_t peer;
	char buf[2][MAX_SIZE];	/* receive, send */
};

static struct side sides[2];

static void die(const char *what, long ret)
{
	fprintf(stderr, "%s: %s\n", what, fi_strerror((int)-ret));
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Drive both sides' progress (a provider may need it to free a slot). */
static void progress(void)
{
	fi_cq_read(sides[0].cq, NULL, 0);
	fi_cq_read(sides[1].cq, NULL, 0);
}

static void wait_comp(struct side *s)
{
	struct fi_cq_err_entry err;
	struct fi_cq_entry e;
	ssize_t ret;

	while ((ret = fi_cq_read(s->cq, &e, 1)) == -FI_EAGAIN)
		;
	if (ret == 1)
		return;
	if (ret == -FI_EAVAIL && fi_cq_readerr(s->cq, &err, 0) == 1)
		die("completion", -err.err);
	die("fi_cq_read", ret);
}

/* One message from @from to @to; both completions read. */
static void one_way(struct side *from, struct side *to, size_t size,
		    struct fi_context *ctx)
{
	ssize_t ret;

	while ((ret = fi_recv(to->ep, to->buf[0], size, to->desc, FI_ADDR_UNSPEC,
			      &ctx[0])) == -FI_EAGAIN)
		progress();
	if (ret)
		die("fi_recv", ret);
	while ((ret = fi_send(from->ep, from->buf[1], size, from->desc,
			      from->peer, &ctx[1])) == -FI_EAGAIN)
		progress();
	if (ret)
		die("fi_send", ret);
	wait_comp(to);
	wait_comp(from);
}

/* CPU_LAT_CNTR: the counters' wait object, or -1 for no counters. */
static int cntr_wait_obj(void)
{
	const char *v = getenv("CPU_LAT_CNTR");

	if (!v || !*v)
		return -1;
	if (!strcmp(v, "none"))
		return FI_WAIT_NONE;
	if (!strcmp(v, "unspec"))
		return FI_WAIT_UNSPEC;
	if (!strcmp(v, "fd"))
		return FI_WAIT_FD;
	fprintf(stderr, "CPU_LAT_CNTR: none, unspec or fd\n");
	exit(2);
}

static void open_side(struct fid_domain *domain, struct fi_info *info,
		      struct fid_av *av, struct side *s, uint64_t key)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_CONTEXT,
		.size = 128,
	};
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	int wait = cntr_wait_obj();
	int ret;

	ret = fi_cq_open(domain, &cq_attr, &s->cq, NULL);
	if (!ret)
		ret = fi_endpoint(domain, info, &s->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret && wait >= 0) {
		cntr_attr.wait_obj = wait;
		ret = fi_cntr_open(domain, &cntr_attr, &s->cntr, NULL);
		if (!ret)
			ret = fi_ep_bind(s->ep, &s->cntr->fid,
					 FI_SEND | FI_RECV);
	}
	if (!ret)
		ret = fi_ep_bind(s->ep, &av->fid, 0);
	if (!ret)
		ret = fi_enable(s->ep);
	if (ret)
		die("endpoint", ret);
	ret = fi_mr_reg(domain, s->buf, sizeof(s->buf), FI_SEND | FI_RECV, 0,
			key, 0, &s->mr, NULL);
	if (ret)
		die("fi_mr_reg", ret);
	s->desc = fi_mr_desc(s->mr);
}

int main(int argc, char **argv)
{
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fi_av_attr av_attr = { .type = FI_AV_MAP };
	struct fi_context ctx[2];
	struct fid_av *av;
	long iters, n;
	size_t size;
	double t0 = 0;
	char *end;
	bool bad;
	int ret, i;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s PROV SIZE [ITERS]\n", argv[0]);
		return 2;
	}
	size = strtoul(argv[2], &end, 0);
	bad = *end || end == argv[2] || size > MAX_SIZE;
	iters = 20000;
	if (argc > 3) {
		iters = strtol(argv[3], &end, 0);
		bad |= *end || end == argv[3] || iters <= 0;
	}
	if (bad) {
		fprintf(stderr, "SIZE: a number up to %d; ITERS: a number > 0\n",
			MAX_SIZE);
		return 2;
	}

	hints = fi_allocinfo();
	if (!hints)
		return 1;
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (ret)
		die("fi_getinfo", ret);
	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	if (!ret)
		ret = fi_domain(fabric, info, &domain, NULL);
	if (!ret)
		ret = fi_av_open(domain, &av_attr, &av, NULL);
	if (ret)
		die("fabric/domain/av", ret);
	for (i = 0; i < 2; i++)
		open_side(domain, info, av, &sides[i], i + 1);
	for (i = 0; i < 2; i++) {
		char name[256];
		size_t len = sizeof(name);

		ret = fi_getname(&sides[i].ep->fid, name, &len);
		if (ret)
			die("fi_getname", ret);
		if (fi_av_insert(av, name, 1, &sides[1 - i].peer, 0, NULL) != 1)
			die("fi_av_insert", -FI_EINVAL);
	}

	for (n = -WARMUP; n < iters; n++) {
		if (!n)
			t0 = now_us();
		one_way(&sides[0], &sides[1], size, ctx);
		one_way(&sides[1], &sides[0], size, ctx);
	}
	printf("%.2f\n", (now_us() - t0) / iters / 2);

	for (i = 0; i < 2; i++) {
		fi_close(&sides[i].ep->fid);
		fi_close(&sides[i].mr->fid);
		fi_close(&sides[i].cq->fid);
		if (sides[i].cntr)
			fi_close(&sides[i].cntr->fid);
	}
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}
