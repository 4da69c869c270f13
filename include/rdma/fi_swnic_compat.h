/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One source for libfabric 1.17 (Debian 12) and 2.x (Debian 13).
 *
 * libfabric 2.0 deprecates names that applications written for 1.x still
 * pass and that a provider must therefore still understand: its headers
 * define them with a "GCC warning" pragma, so every use is a warning (an
 * error under -Werror). It also drops FI_PROV_SPECIFIC. The values are
 * part of the ABI and do not change, so they are spelt once here, without
 * the pragma, and checked against the 1.x headers, which define them
 * plainly. Everything else that differs is tested on FI_MAJOR_VERSION /
 * FI_MINOR_VERSION where it is used, through SWNIC_FI_HAVE_2.
 */
#ifndef _FI_SWNIC_COMPAT_H_
#define _FI_SWNIC_COMPAT_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

/* The headers are libfabric 2.x's: 2.x API names and semantics exist. */
#define SWNIC_FI_HAVE_2		(FI_MAJOR_VERSION >= 2)

/* fi_domain_attr.mr_mode before 1.5 (deprecated in 2.0) */
#define SWNIC_MR_UNSPEC		0
#define SWNIC_MR_BASIC		(1 << 0)
#define SWNIC_MR_SCALABLE	(1 << 1)

/* fi_tx_attr / fi_rx_attr ordering (deprecated in 2.0) */
#define SWNIC_ORDER_NONE	0ULL
#define SWNIC_ORDER_STRICT	0x1FFULL
#define SWNIC_ORDER_DATA	(1ULL << 16)

/* fi_domain_bind() flag: asynchronous registration (deprecated in 2.0) */
#define SWNIC_REG_MR		(1ULL << 59)

/* The provider-specific bit of fi_ep_attr.protocol (removed in 2.0). */
#define SWNIC_PROV_SPECIFIC	(1U << 31)

/*
 * Around code that calls what 2.x deprecates but still offers (fi_av_bind,
 * wait and poll sets): applications do, so the tests do too.
 */
#define SWNIC_DEPRECATED_BEGIN						\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define SWNIC_DEPRECATED_END	_Pragma("GCC diagnostic pop")

#if !SWNIC_FI_HAVE_2
_Static_assert(SWNIC_MR_UNSPEC == FI_MR_UNSPEC, "FI_MR_UNSPEC");
_Static_assert(SWNIC_MR_BASIC == FI_MR_BASIC, "FI_MR_BASIC");
_Static_assert(SWNIC_MR_SCALABLE == FI_MR_SCALABLE, "FI_MR_SCALABLE");
_Static_assert(SWNIC_ORDER_NONE == FI_ORDER_NONE, "FI_ORDER_NONE");
_Static_assert(SWNIC_ORDER_STRICT == FI_ORDER_STRICT, "FI_ORDER_STRICT");
_Static_assert(SWNIC_ORDER_DATA == FI_ORDER_DATA, "FI_ORDER_DATA");
_Static_assert(SWNIC_REG_MR == FI_REG_MR, "FI_REG_MR");
_Static_assert(SWNIC_PROV_SPECIFIC == FI_PROV_SPECIFIC, "FI_PROV_SPECIFIC");
#endif

#endif /* _FI_SWNIC_COMPAT_H_ */
