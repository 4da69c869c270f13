/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the provider tests (selftests/prov_*.c): they use only the
 * public libfabric API (and <rdma/fi_ext_swnic.h>) against the system
 * libfabric, which loads lib/libswnic-fi.so through FI_PROVIDER_PATH.
 */
#ifndef SWNIC_PROV_UTIL_H
#define SWNIC_PROV_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_swnic.h>
#include <rdma/fi_swnic_compat.h>

/*
 * Load only swnic and the utility providers that could layer over it
 * (unless the caller chose): initialising every other provider costs ~1 s
 * per test process in the VM and tests nothing here.
 */
__attribute__((constructor)) static void prov_limit_providers(void)
{
	setenv("FI_PROVIDER", "swnic,ofi_rxm,ofi_rxd", 0);
}

#define PROV_API	FI_VERSION(1, 17)
#define PROV_DEV	"/dev/swnic0"

/*
 * Tests that check the provider's FI_WARN lines call this first, before
 * libfabric reads its environment (each harness test runs in a fresh
 * child, so it is per test).
 */
static inline void prov_log_warnings(void)
{
	setenv("FI_LOG_LEVEL", "warn", 1);
}

static inline int prov_have_device(void)
{
	return access(PROV_DEV, R_OK | W_OK) == 0;
}

#define PROV_REQUIRE_DEVICE()						\
	do {								\
		if (!prov_have_device())				\
			SKIP(return, "no %s (module not loaded)", PROV_DEV); \
	} while (0)

/* Hints naming the swnic provider (and nothing else). */
static inline struct fi_info *prov_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (hints)
		hints->fabric_attr->prov_name = strdup("swnic");
	return hints;
}

static inline int prov_getinfo(const char *node, const char *service,
			       uint64_t flags, const struct fi_info *hints,
			       struct fi_info **info)
{
	return fi_getinfo(PROV_API, node, service, flags, hints, info);
}

static inline int prov_count(const struct fi_info *info)
{
	int n = 0;

	for (; info; info = info->next)
		n++;
	return n;
}

/* A fabric and a domain from @hints (or any swnic RDM info if NULL). */
struct prov_ctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
};

static inline int prov_open(struct prov_ctx *ctx, struct fi_info *hints)
{
	struct fi_info *h = hints ? hints : prov_hints();
	int ret;

	memset(ctx, 0, sizeof(*ctx));
	if (!hints)
		h->ep_attr->type = FI_EP_RDM;
	ret = prov_getinfo(NULL, NULL, 0, h, &ctx->info);
	if (!hints)
		fi_freeinfo(h);
	if (ret)
		return ret;
	ret = fi_fabric(ctx->info->fabric_attr, &ctx->fabric, NULL);
	if (ret)
		return ret;
	return fi_domain(ctx->fabric, ctx->info, &ctx->domain, NULL);
}

static inline void prov_close(struct prov_ctx *ctx)
{
	if (ctx->domain)
		fi_close(&ctx->domain->fid);
	if (ctx->fabric)
		fi_close(&ctx->fabric->fid);
	fi_freeinfo(ctx->info);
	memset(ctx, 0, sizeof(*ctx));
}

/*
 * Capture what libfabric logs to stderr between begin and end (the
 * provider's FI_WARN lines), into a NUL-terminated buffer.
 */
struct prov_capture {
	int saved;
	FILE *file;
	char text[8192];
};

static inline int prov_capture_begin(struct prov_capture *cap)
{
	fflush(stderr);
	cap->file = tmpfile();
	if (!cap->file)
		return -1;
	cap->saved = dup(STDERR_FILENO);
	return dup2(fileno(cap->file), STDERR_FILENO) < 0 ? -1 : 0;
}

static inline const char *prov_capture_end(struct prov_capture *cap)
{
	size_t n;

	fflush(stderr);
	dup2(cap->saved, STDERR_FILENO);
	close(cap->saved);
	rewind(cap->file);
	n = fread(cap->text, 1, sizeof(cap->text) - 1, cap->file);
	cap->text[n] = '\0';
	fclose(cap->file);
	return cap->text;
}

/* The domain extension ops (FI_SWNIC_DOMAIN_OPS_1). */
static inline struct fi_swnic_ops_domain *prov_ext(struct fid_domain *domain)
{
	struct fi_swnic_ops_domain *ops = NULL;

	if (fi_open_ops(&domain->fid, FI_SWNIC_DOMAIN_OPS_1, 0,
			(void **)&ops, NULL))
		return NULL;
	return ops;
}

static inline int prov_feature(struct fid_domain *domain, uint64_t feat)
{
	struct fi_swnic_ops_domain *ops = prov_ext(domain);
	struct swnic_query_device q = { .size = sizeof(q) };

	return ops && !ops->query_device(domain, &q) &&
	       (q.features & feat) == feat;
}

#endif /* SWNIC_PROV_UTIL_H */
