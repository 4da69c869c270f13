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
#include <sched.h>
#include <stdbool.h>
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

#include "harness_util.h"
#include "sys_util.h"

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

/*
 * Skip the test if there is no device: from a FIXTURE_SETUP, or from a
 * TEST body before it has made anything (SETUP_SKIP, harness_util.h: the
 * test's process ends here, no body or teardown runs).
 */
#define PROV_REQUIRE_DEVICE()						\
	do {								\
		if (!prov_have_device())				\
			SETUP_SKIP("no %s (module not loaded)", PROV_DEV); \
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
	bool shared;		/* a peer borrowing another ctx's objects */
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
	if (ctx->shared) {
		memset(ctx, 0, sizeof(*ctx));
		return;
	}
	if (ctx->domain)
		fi_close(&ctx->domain->fid);
	if (ctx->fabric)
		fi_close(&ctx->fabric->fid);
	fi_freeinfo(ctx->info);
	memset(ctx, 0, sizeof(*ctx));
}

/*
 * Two hosts. The two-sided tests put their target (or peer) side - its
 * endpoint, CQ, counters, AV, MRs - on a peer domain from
 * prov_open_peer(). In-host (the default) that is the test's own domain,
 * as before, and every transfer takes the `local` transport. With
 * SWNIC_PROV_PEER_NETNS=/run/netns/NAME in the environment
 * (selftests/test_prov_wire.sh sets it) the peer domain is opened in that
 * network namespace - another host (DESIGN.md), whose swnic device is
 * bound to the other end of a veth pair - so the same tests run over the
 * wire (kernel/udp*.c). A domain must be opened by a thread in its
 * device's namespace (the kernel checks it, and the provider finds its
 * devices and their addresses there); once open it serves any thread, so
 * the calling thread enters the peer's namespace only around
 * fi_getinfo + fi_fabric + fi_domain.
 */
static inline const char *prov_peer_netns(void)
{
	const char *ns = getenv("SWNIC_PROV_PEER_NETNS");

	return ns && *ns ? ns : NULL;
}

/* Do the tests' two sides sit on two hosts (over the wire)? */
static inline bool prov_across(void)
{
	return prov_peer_netns() != NULL;
}


/*
 * Run @fn(@arg) in network namespace @path (this thread only), then come
 * back: its result, or -errno if the namespace cannot be entered.
 */
static inline int prov_in_netns(const char *path, int (*fn)(void *),
				void *arg)
{
	int home, peer, ret;

	home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		return -errno;
	peer = open(path, O_RDONLY | O_CLOEXEC);
	if (peer < 0) {
		ret = -errno;
		close(home);
		return ret;
	}
	if (setns(peer, CLONE_NEWNET)) {
		ret = -errno;
		goto out;
	}
	ret = fn(arg);
	if (setns(home, CLONE_NEWNET)) {
		/* Never go on in the wrong namespace. */
		perror("prov_in_netns: setns back");
		abort();
	}
out:
	close(peer);
	close(home);
	return ret;
}

struct prov_open_args {
	struct prov_ctx *ctx;
	struct fi_info *hints;
};

static inline int prov_open_fn(void *arg)
{
	struct prov_open_args *a = arg;

	return prov_open(a->ctx, a->hints);
}

/*
 * prov_open_peer() - the peer side's fabric and domain
 * @peer: out; prov_close() it (before @local)
 * @local: the test's own (already open)
 * @hints: as for prov_open() (NULL: any RDM info); used only across
 *
 * In-host: @local's objects, shared (so the tests mean what they meant
 * with one domain). Across: a domain on the peer namespace's device, from
 * the same hints, which must not be @local's device.
 */
static inline int prov_open_peer(struct prov_ctx *peer,
				 const struct prov_ctx *local,
				 struct fi_info *hints)
{
	struct prov_open_args a = { .ctx = peer, .hints = hints };
	int ret;

	if (!prov_across()) {
		*peer = *local;
		peer->shared = true;
		return 0;
	}
	ret = prov_in_netns(prov_peer_netns(), prov_open_fn, &a);
	if (ret)
		return ret;
	if (!strcmp(peer->info->domain_attr->name,
		    local->info->domain_attr->name)) {
		fprintf(stderr, "prov_open_peer: %s is in both namespaces\n",
			local->info->domain_attr->name);
		return -FI_EOTHER;
	}
	return 0;
}

/*
 * A test of one host's device alone (raw ioctls on /dev/swnic0, which
 * belongs to the initial namespace): it has no second side to move to
 * another host, and runs in-host.
 */
#define PROV_ONE_HOST()							\
	do {								\
		if (prov_across())					\
			SETUP_SKIP("one host's device alone: runs in-host"); \
	} while (0)

/*
 * Run @fn(@arg) as the peer host would: in its namespace across (for the
 * calls that open a domain of their own inside the provider - fi_listen,
 * and fi_accept or fi_close of a MSG endpoint, which open the domain's
 * connection-management port), else here.
 */
static inline int prov_peer_run(int (*fn)(void *), void *arg)
{
	return prov_across() ? prov_in_netns(prov_peer_netns(), fn, arg) :
			       fn(arg);
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
