// SPDX-License-Identifier: GPL-2.0
/*
 * Registration cost: one register + deregister pair of a SIZE-byte buffer,
 * in microseconds (median of ITERS pairs), through
 *
 *   swnic       fi_mr_reg + fi_close on libfabric's swnic provider, remote
 *               read/write access (never served by the registration cache:
 *               every pair pins and unpins in the kernel)
 *   swnic-hit   the same with local access only (FI_SEND | FI_RECV) after
 *               one registration warmed lib/mr_cache.c: every pair is a
 *               cache hit
 *   verbs       ibv_reg_mr + ibv_dereg_mr (local write, remote read/write)
 *               on the verbs device DEV (rdma_rxe's rxe0 in make bench)
 *
 * Usage: reg_bench swnic|swnic-hit|verbs[:DEV] SIZE [ITERS]
 * The buffer is touched before the clock starts, so page faults are not
 * counted. A cache hit is too short to time one by one (reading the clock
 * costs about as much in the guest): hits are timed in batches of
 * HIT_BATCH pairs, each batch one sample of its mean. Prints "<usec>";
 * exits non-zero with a message if it cannot.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <infiniband/verbs.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define HIT_BATCH	100

static double *runs;

static int fab_bench(void *buf, size_t size, int iters, int hit)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	uint64_t access = hit ? FI_SEND | FI_RECV :
			  FI_REMOTE_READ | FI_REMOTE_WRITE;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_mr *mr, *warm = NULL;
	int ret, i;

	if (!hints)
		return -1;
	hints->fabric_attr->prov_name = strdup("swnic");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (ret) {
		fprintf(stderr, "fi_getinfo: %s\n", fi_strerror(-ret));
		return -1;
	}
	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	if (!ret)
		ret = fi_domain(fabric, info, &domain, NULL);
	if (ret) {
		fprintf(stderr, "fi_fabric/fi_domain: %s\n", fi_strerror(-ret));
		return -1;
	}
	if (hit) {
		ret = fi_mr_reg(domain, buf, size, access, 0, 0, 0, &warm, NULL);
		if (!ret)
			ret = fi_close(&warm->fid);
		if (ret) {
			fprintf(stderr, "warm-up fi_mr_reg: %s\n",
				fi_strerror(-ret));
			return -1;
		}
	}
	for (i = 0; i < iters; i++) {
		int batch = hit ? HIT_BATCH : 1, j;
		double t = now_us();

		for (j = 0; j < batch; j++) {
			ret = fi_mr_reg(domain, buf, size, access, 0, 0, 0,
					&mr, NULL);
			if (!ret)
				ret = fi_close(&mr->fid);
			if (ret) {
				fprintf(stderr, "fi_mr_reg/fi_close: %s\n",
					fi_strerror(-ret));
				return -1;
			}
		}
		runs[i] = (now_us() - t) / batch;
	}
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	hints->fabric_attr->prov_name = NULL;
	fi_freeinfo(hints);
	return 0;
}

static int verbs_bench(const char *name, void *buf, size_t size, int iters)
{
	struct ibv_device **list = ibv_get_device_list(NULL), *dev = NULL;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev) {
		fprintf(stderr, "no verbs device %s\n", name ? name : "");
		return -1;
	}
	ctx = ibv_open_device(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		fprintf(stderr, "ibv_open_device/ibv_alloc_pd failed\n");
		return -1;
	}
	for (i = 0; i < iters; i++) {
		double t = now_us();

		mr = ibv_reg_mr(pd, buf, size, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_WRITE);
		if (!mr || ibv_dereg_mr(mr)) {
			perror("ibv_reg_mr/ibv_dereg_mr");
			return -1;
		}
		runs[i] = now_us() - t;
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

int main(int argc, char **argv)
{
	size_t size = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
	int iters = argc > 3 ? atoi(argv[3]) : 100, ret;
	const char *mode = argc > 1 ? argv[1] : "";
	void *buf;

	if (!size || iters <= 0) {
		fprintf(stderr,
			"usage: reg_bench swnic|swnic-hit|verbs[:DEV] SIZE [ITERS]\n");
		return 2;
	}
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	runs = calloc(iters, sizeof(*runs));
	if (buf == MAP_FAILED || !runs)
		return 1;
	memset(buf, 1, size);
	if (!strcmp(mode, "swnic"))
		ret = fab_bench(buf, size, iters, 0);
	else if (!strcmp(mode, "swnic-hit"))
		ret = fab_bench(buf, size, iters, 1);
	else if (!strncmp(mode, "verbs", 5))
		ret = verbs_bench(mode[5] == ':' ? mode + 6 : NULL, buf, size,
				  iters);
	else
		ret = -1;
	if (ret)
		return 1;
	qsort(runs, iters, sizeof(*runs), cmp);
	printf("%.2f\n", runs[iters / 2]);
	return 0;
}
