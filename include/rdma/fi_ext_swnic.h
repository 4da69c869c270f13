/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fi_ext_swnic.h - swnic provider extensions for libfabric applications.
 *
 * Installed with the provider (libswnic-fi.so). Applications reach these
 * interfaces with fi_open_ops() on a swnic object:
 *
 *	struct fi_swnic_ops_domain *ops;
 *
 *	ret = fi_open_ops(&domain->fid, FI_SWNIC_DOMAIN_OPS_1, 0,
 *			  (void **)&ops, NULL);
 *
 * Versioning: the name carries the interface version. A struct of a given
 * name only ever grows at its end; its "size" member (set by the provider)
 * says which members exist, so test with FI_CHECK_OP(ops, struct
 * fi_swnic_ops_domain, member) before calling a member newer than the
 * first release. An incompatible change gets a new name (..._v2) and the
 * provider keeps answering the old one.
 *
 * The structures passed to the calls start with "size_t size" (or the
 * kernel's "__u32 size"), set by the caller to sizeof() the struct it was
 * built with; the provider fills what both sides know.
 *
 * fi_swnic(7) documents every call.
 */
#ifndef FI_EXT_SWNIC_H
#define FI_EXT_SWNIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <linux/swnic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fi_open_ops() names. */
#define FI_SWNIC_DOMAIN_OPS_1	"swnic_domain_ops_v1"	/* on a domain */
#define FI_SWNIC_CQ_OPS_1	"swnic_cq_ops_v1"	/* on a CQ */

/* Provider specific error codes (fi_eq_err_entry/fi_cq_err_entry.prov_errno)
 * are the kernel's positive errno values; fi_eq_strerror()/fi_cq_strerror()
 * print them.
 */

/* swnic_flags of fi_swnic_ops_domain.mr_regattr(). */
#define FI_SWNIC_MR_ODP		(1ULL << 0)	/* on demand: pin nothing */
#define FI_SWNIC_MR_PINNED	(1ULL << 1)	/* pin, whatever the domain's
						 * default (FI_SWNIC_MR_ODP) */

/**
 * struct fi_swnic_stats - counters of a domain, its device and its
 * registration cache (fi_swnic_ops_domain.query_stats)
 */
struct fi_swnic_stats {
	size_t size;				/* in: sizeof(this struct) */
	struct swnic_mr_counters domain;	/* kernel: this domain's MRs */
	struct swnic_mr_counters device;	/* kernel: the whole device */
	uint64_t cache_hits;		/* registrations served by the cache */
	uint64_t cache_misses;		/* registrations the kernel made */
	uint64_t cache_evictions;	/* unused entries dropped for room */
	uint64_t cache_invalidations;	/* entries dropped: pages changed */
	uint64_t cache_flushes;		/* whole cache dropped: ring overflow */
	uint64_t cache_entries;		/* entries in the cache now */
	uint64_t cache_unused;		/* of which no MR uses now */
	uint64_t inval_gen;		/* invalidation generation consumed */
};

/**
 * struct fi_swnic_inval_page - the domain's invalidation page
 *
 * A read-only mapping of the kernel's page (struct swnic_inval_page and its
 * ring of struct swnic_inval_rec, protocol in <linux/swnic.h>). Valid
 * until the domain is closed. The provider's registration cache is one of
 * its readers; an application may be another.
 */
struct fi_swnic_inval_page {
	size_t size;				/* in: sizeof(this struct) */
	const volatile struct swnic_inval_page *page;	/* out: the mapping */
	size_t length;				/* out: bytes mapped */
	const volatile struct swnic_inval_rec *ring;	/* out: entry 0 */
	uint32_t entries;			/* out: ring entries */
};

/**
 * struct fi_swnic_ops_domain - FI_SWNIC_DOMAIN_OPS_1
 * @size: sizeof() the provider's struct
 * @query_device: the kernel's SWNIC_IOCTL_QUERY_DEVICE answer for this
 *	domain; @attr->size must be set (the kernel's size contract applies)
 * @query_stats: kernel MR counters of the domain and the device, and the
 *	provider's registration cache counters
 * @mr_regattr: fi_mr_regattr() with swnic flags (FI_SWNIC_MR_*): choose
 *	on-demand or pinned registration per MR
 * @inval_page: map (once per domain) and return the invalidation page
 * @mr_query: the kernel's view of an MR (state, pinned bytes, counters);
 *	@query->size must be set, the provider fills in the handle
 */
struct fi_swnic_ops_domain {
	size_t size;
	int (*query_device)(struct fid_domain *domain,
			    struct swnic_query_device *attr);
	int (*query_stats)(struct fid_domain *domain,
			   struct fi_swnic_stats *stats);
	int (*mr_regattr)(struct fid_domain *domain,
			  const struct fi_mr_attr *attr, uint64_t flags,
			  uint64_t swnic_flags, struct fid_mr **mr);
	int (*inval_page)(struct fid_domain *domain,
			  struct fi_swnic_inval_page *page);
	int (*mr_query)(struct fid_mr *mr, struct swnic_mr_query *query);
};

/**
 * struct fi_swnic_ops_cq - FI_SWNIC_CQ_OPS_1
 * @size: sizeof() the provider's struct
 * @write: append a completion of the application's own to the CQ, in the
 *	CQ's format (the fields of @entry the format has); it is read, and
 *	wakes waiters, as any completion
 * @writeerr: append an error completion (@entry->err > 0); err_data is
 *	copied, up to the domain's max_err_data bytes
 *
 * Both return 0, or -FI_EAGAIN when the CQ is full.
 */
struct fi_swnic_ops_cq {
	size_t size;
	ssize_t (*write)(struct fid_cq *cq,
			 const struct fi_cq_tagged_entry *entry,
			 fi_addr_t src_addr);
	ssize_t (*writeerr)(struct fid_cq *cq,
			    const struct fi_cq_err_entry *entry,
			    fi_addr_t src_addr);
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_SWNIC_H */
