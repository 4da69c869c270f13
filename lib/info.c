// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fi_getinfo for swnic. libfabric 1.17's core matches nothing itself: every
 * hint is checked here, as fi_getinfo(3) says -
 *
 *  - a non-zero hint must be supported or the answer is -FI_ENODATA; zero
 *    hints are wildcards (mode bits excepted: zero means "no mode");
 *  - primary capabilities only when asked, with all their modifiers unless
 *    some are named; secondary capabilities when asked (or free);
 *  - mode bits swnic does not need are cleared (it needs none);
 *  - node/service (FI_SOURCE, FI_NUMERICHOST, FI_ADDR_STR nodes) resolve to
 *    a device's address; a node no device can reach fails at once.
 *
 * Every rejection is logged at FI_LOG_INFO with its reason
 * (FI_LOG_LEVEL=info FI_LOG_PROV=swnic).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swnic.h"
#include "attr.h"

#define SWNIC_NOMATCH(...)						\
	({								\
		SWNIC_INFO(FI_LOG_CORE, __VA_ARGS__);			\
		-FI_ENODATA;						\
	})

/* Endpoint types in the order they are offered: best first. */
static const enum fi_ep_type swnic_ep_types[] = {
	FI_EP_RDM, FI_EP_MSG, FI_EP_DGRAM,
};

/* What a getinfo call asks of the addresses, resolved once per call. */
struct swnic_addr_req {
	uint32_t fmt;			/* the output address format */
	bool fmt_unspec;		/* ... chosen by the addresses */
	bool has_src, has_dest;
	bool src_local, dest_local;	/* "localhost" / this host's name */
	struct sockaddr_in src, dest;	/* port in network order */
};

/* Can @caps make this endpoint the target of RMA? */
static bool swnic_rma_target(uint64_t caps)
{
	if (!(caps & (FI_RMA | FI_ATOMIC)))
		return false;
	/* No RMA modifier at all means all of them. */
	return !(caps & SWNIC_RMA_MODS) ||
	       (caps & (FI_REMOTE_READ | FI_REMOTE_WRITE));
}

/* Capabilities the device's kernel features allow for @type. */
static uint64_t swnic_offered_caps(const struct swnic_dev *dev,
				   enum fi_ep_type type)
{
	uint64_t caps = swnic_ep_caps(type, dev);

	/* No MR ioctls: nothing can be the target of RMA. */
	if (!(dev->attr.features & SWNIC_FEAT_MR))
		caps &= ~(FI_RMA | FI_ATOMIC | SWNIC_RMA_MODS | FI_RMA_EVENT);
	/* A kernel without atomics (SWNIC_OP_*ATOMIC). */
	if (!(dev->attr.features & SWNIC_FEAT_ATOMIC))
		caps &= ~FI_ATOMIC;
	return caps;
}

static void swnic_log_caps(const char *what, uint64_t caps)
{
	char buf[512];

	SWNIC_INFO(FI_LOG_CORE, "%s not supported: %s\n", what,
		   fi_tostr_r(buf, sizeof(buf), &caps, FI_TYPE_CAPS));
}

/*
 * Narrow @offered to what @want asks (fi_getinfo(3) "CAPABILITIES").
 * Return: 0 with *out set, or -FI_ENODATA.
 */
static int swnic_caps_narrow(uint64_t offered, uint64_t want, uint64_t *out)
{
	uint64_t caps, mods;

	if (!want) {
		*out = offered;
		return 0;
	}
	if (want & ~offered) {
		swnic_log_caps("capabilities", want & ~offered);
		return -FI_ENODATA;
	}
	caps = want & (SWNIC_PRIMARY_CAPS | SWNIC_SECONDARY_CAPS);
	mods = want & SWNIC_PRIMARY_MODS;
	if ((mods & SWNIC_RMA_MODS) && !(caps & (FI_RMA | FI_ATOMIC)))
		return SWNIC_NOMATCH("FI_READ/WRITE/REMOTE_* need FI_RMA\n");
	/* Events at the RMA target need RMA to target it. */
	if ((caps & FI_RMA_EVENT) && !(caps & (FI_RMA | FI_ATOMIC)))
		return SWNIC_NOMATCH("FI_RMA_EVENT needs FI_RMA or FI_ATOMIC\n");

	if (caps & (FI_MSG | FI_TAGGED))
		caps |= mods & SWNIC_MSG_MODS ? mods & SWNIC_MSG_MODS :
						offered & SWNIC_MSG_MODS;
	else
		caps |= mods & SWNIC_MSG_MODS;
	if (caps & (FI_RMA | FI_ATOMIC))
		caps |= mods & SWNIC_RMA_MODS ? mods & SWNIC_RMA_MODS :
						offered & SWNIC_RMA_MODS;

	/* Free secondary capabilities, and reach if the app left it open. */
	if (caps & (FI_MSG | FI_TAGGED))
		caps |= offered & SWNIC_FREE_CAPS;
	if (!(want & (FI_LOCAL_COMM | FI_REMOTE_COMM)))
		caps |= offered & (FI_LOCAL_COMM | FI_REMOTE_COMM);
	*out = caps;
	return 0;
}

/* Narrow a tx/rx caps hint; @side is what the info's side offers. */
static int swnic_side_caps(uint64_t side, uint64_t want, uint64_t *out)
{
	if (!want) {
		*out = side;
		return 0;
	}
	if (want & ~side) {
		swnic_log_caps("tx/rx capabilities", want & ~side);
		return -FI_ENODATA;
	}
	*out = want;
	return 0;
}

bool swnic_tclass_valid(uint32_t tclass)
{
	if (tclass == FI_TC_UNSPEC)
		return true;
	if (tclass & FI_TC_DSCP)
		return (tclass & ~(uint32_t)(FI_TC_DSCP | 0x3f)) == 0;
	return tclass >= FI_TC_BEST_EFFORT && tclass <= FI_TC_NETWORK_CTRL;
}

/*
 * The DSCP of a (valid) traffic class on the wire: FI_TC_DSCP's own, else
 * the code point RFC 4594 gives such traffic (best effort: default).
 */
uint8_t swnic_tclass_dscp(uint32_t tclass)
{
	if (tclass & FI_TC_DSCP)
		return tclass & 0x3f;
	switch (tclass) {
	case FI_TC_LOW_LATENCY:
		return 46;	/* EF: expedited forwarding */
	case FI_TC_DEDICATED_ACCESS:
		return 34;	/* AF41 */
	case FI_TC_BULK_DATA:
		return 10;	/* AF11: high-throughput data */
	case FI_TC_SCAVENGER:
		return 8;	/* CS1: lower effort */
	case FI_TC_NETWORK_CTRL:
		return 48;	/* CS6: network control */
	default:
		return 0;	/* FI_TC_UNSPEC, FI_TC_BEST_EFFORT */
	}
}

/* Limits: a non-zero hint above the device's value cannot be served. */
#define SWNIC_CHECK_MAX(hint, max, name)				\
	do {								\
		if ((hint) && (uint64_t)(hint) > (uint64_t)(max))	\
			return SWNIC_NOMATCH("%s %zu > %zu\n", name,	\
					     (size_t)(hint),		\
					     (size_t)(max));		\
	} while (0)

/*
 * The registration mode a domain gets for @user (the application's
 * mr_mode) and @caps. See SWNIC_MR_MODE: pinned registration needs
 * FI_MR_ALLOCATED; without it the kernel's on-demand registration serves
 * ranges that are not backed yet. Keys are the kernel's whenever the
 * application lets it choose (FI_MR_PROV_KEY): index plus a random tag,
 * where an application's own keys are guessable. Return: 0 with *out, or
 * -FI_ENODATA.
 */
static int swnic_mr_mode(const struct swnic_dev *dev, int user,
			 uint32_t version, uint64_t caps, int *out)
{
	bool target = swnic_rma_target(caps);
	bool odp = dev->attr.features & SWNIC_FEAT_MR_ODP;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		switch (user) {
		case SWNIC_MR_UNSPEC:
		case SWNIC_MR_BASIC:
			*out = SWNIC_MR_BASIC;
			return 0;
		case SWNIC_MR_SCALABLE:
			if (target && !odp)
				return SWNIC_NOMATCH("SWNIC_MR_SCALABLE needs on-demand registration\n");
			*out = SWNIC_MR_SCALABLE;
			return 0;
		default:
			return SWNIC_NOMATCH("mr_mode %#x invalid before API 1.5\n",
					     user);
		}
	}
	if (user & SWNIC_MR_BASIC) {
		if (user & ~SWNIC_MR_BASIC)
			return SWNIC_NOMATCH("SWNIC_MR_BASIC must be alone\n");
		*out = SWNIC_MR_BASIC;
		return 0;
	}
	if (user & SWNIC_MR_SCALABLE) {
		if (user & ~SWNIC_MR_SCALABLE)
			return SWNIC_NOMATCH("SWNIC_MR_SCALABLE must be alone\n");
		if (target && !odp)
			return SWNIC_NOMATCH("SWNIC_MR_SCALABLE needs on-demand registration\n");
		*out = SWNIC_MR_SCALABLE;
		return 0;
	}
	if (!target) {
		*out = user & FI_MR_PROV_KEY;
		return 0;
	}
	if (user & FI_MR_ALLOCATED) {
		*out = FI_MR_ALLOCATED | (user & FI_MR_PROV_KEY);
		return 0;
	}
	if (!odp)
		return SWNIC_NOMATCH("mr_mode lacks FI_MR_ALLOCATED and the kernel has no on-demand registration\n");
	*out = user & FI_MR_PROV_KEY;
	return 0;
}

/*
 * An auth key names a service of the device (`swnic service`). Whether
 * this process may use it is the kernel's decision: ask it on a domain of
 * our own, so that fi_getinfo never offers what fi_domain would refuse.
 */
static int swnic_check_auth_key(const struct swnic_dev *dev,
				const uint8_t *key, size_t size,
				uint32_t version, bool domain)
{
	uint32_t k;
	int ret;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5)) || !size)
		return 0;
#if SWNIC_FI_HAVE_2
	/*
	 * FI_AV_AUTH_KEY (1.20): a domain's endpoints take their keys from
	 * the AV, each one checked by the kernel when an endpoint takes it
	 * (SWNIC_IOCTL_EP_AUTH_KEY, at fi_enable).
	 */
	if (size == FI_AV_AUTH_KEY) {
		if (!domain || FI_VERSION_LT(version, FI_VERSION(1, 20)))
			return SWNIC_NOMATCH("auth_key_size FI_AV_AUTH_KEY: a domain attribute of API 1.20+\n");
		if (key)
			return SWNIC_NOMATCH("FI_AV_AUTH_KEY with a key\n");
		if (!(dev->attr.features & SWNIC_FEAT_EP_AUTH_KEYS))
			return SWNIC_NOMATCH("%s: the kernel has no endpoint auth keys\n",
					     dev->name);
		return 0;
	}
#endif
	if (!key)
		return SWNIC_NOMATCH("auth_key_size %zu without a key\n", size);
	if (size != dev->attr.max_auth_key_size || size != sizeof(k))
		return SWNIC_NOMATCH("auth_key_size %zu, swnic keys are %u bytes\n",
				     size, dev->attr.max_auth_key_size);
	if (!(dev->attr.features & SWNIC_FEAT_AUTH_KEY))
		return SWNIC_NOMATCH("%s: the kernel has no auth keys\n",
				     dev->name);
	memcpy(&k, key, sizeof(k));
	ret = swnic_dev_auth_key_ok(dev->name, k);
	if (ret)
		return SWNIC_NOMATCH("%s: auth key %u: %s\n", dev->name, k,
				     fi_strerror(-ret));
	return 0;
}

/* FI_PROGRESS_CONTROL_UNIFIED, an API 2.x value. */
static bool swnic_control_unified(enum fi_progress progress, uint32_t version)
{
#if SWNIC_FI_HAVE_2
	return progress == FI_PROGRESS_CONTROL_UNIFIED &&
	       !FI_VERSION_LT(version, FI_VERSION(2, 0));
#else
	return false;
#endif
}

/**
 * swnic_check_domain_attr() - can @dev serve domain attributes @attr?
 *
 * Used for getinfo hints and again by fi_domain() on the info it is given.
 */
int swnic_check_domain_attr(const struct swnic_dev *dev,
			    const struct fi_domain_attr *attr,
			    uint32_t version, uint64_t caps)
{
	const struct swnic_query_device *q = &dev->attr;
	uint64_t dcaps = swnic_domain_caps(dev);
	int mr_mode;

	if (attr->name && strcmp(attr->name, dev->name))
		return -FI_ENODATA;
	switch (attr->threading) {
	case FI_THREAD_UNSPEC:
	case FI_THREAD_SAFE:
	case FI_THREAD_FID:
	case FI_THREAD_DOMAIN:
	case FI_THREAD_COMPLETION:
	case FI_THREAD_ENDPOINT:
		break;
	default:
		return SWNIC_NOMATCH("threading %d unknown\n", attr->threading);
	}
	/*
	 * The kernel progresses everything: AUTO, and MANUAL (a subset).
	 * CONTROL_UNIFIED (2.x) lets the application serialize control and
	 * data calls; the provider's locks stay, which is allowed.
	 */
	if (attr->control_progress > FI_PROGRESS_MANUAL &&
	    !swnic_control_unified(attr->control_progress, version))
		return SWNIC_NOMATCH("control_progress %d unknown\n",
				     attr->control_progress);
	if (attr->data_progress > FI_PROGRESS_MANUAL)
		return SWNIC_NOMATCH("data_progress %d unknown\n",
				     attr->data_progress);
	if (attr->resource_mgmt > FI_RM_ENABLED)
		return SWNIC_NOMATCH("resource_mgmt %d unknown\n",
				     attr->resource_mgmt);
	if (attr->av_type > FI_AV_TABLE)
		return SWNIC_NOMATCH("av_type %d unknown\n", attr->av_type);
	if (swnic_mr_mode(dev, attr->mr_mode, version, caps, &mr_mode))
		return -FI_ENODATA;
	SWNIC_CHECK_MAX(attr->mr_key_size, q->mr_key_size, "mr_key_size");
	SWNIC_CHECK_MAX(attr->cq_data_size, q->cq_data_size, "cq_data_size");
	SWNIC_CHECK_MAX(attr->cq_cnt, q->max_cq, "cq_cnt");
	SWNIC_CHECK_MAX(attr->ep_cnt, q->max_ep, "ep_cnt");
	SWNIC_CHECK_MAX(attr->tx_ctx_cnt, q->max_ep, "tx_ctx_cnt");
	SWNIC_CHECK_MAX(attr->rx_ctx_cnt, q->max_ep, "rx_ctx_cnt");
	SWNIC_CHECK_MAX(attr->max_ep_tx_ctx, swnic_max_ep_ctx(dev),
			"max_ep_tx_ctx");
	SWNIC_CHECK_MAX(attr->max_ep_rx_ctx, swnic_max_ep_ctx(dev),
			"max_ep_rx_ctx");
	SWNIC_CHECK_MAX(attr->max_ep_stx_ctx, 1, "max_ep_stx_ctx");
	SWNIC_CHECK_MAX(attr->max_ep_srx_ctx, swnic_max_ep_srx_ctx(dev),
			"max_ep_srx_ctx");
	SWNIC_CHECK_MAX(attr->cntr_cnt, q->max_cntr, "cntr_cnt");
	SWNIC_CHECK_MAX(attr->mr_iov_limit, q->mr_iov_limit, "mr_iov_limit");
	SWNIC_CHECK_MAX(attr->max_err_data, q->max_err_data, "max_err_data");
	SWNIC_CHECK_MAX(attr->mr_cnt, q->max_mr, "mr_cnt");
	if (attr->caps & ~dcaps) {
		swnic_log_caps("domain capabilities", attr->caps & ~dcaps);
		return -FI_ENODATA;
	}
	if (!swnic_tclass_valid(attr->tclass))
		return SWNIC_NOMATCH("tclass %#x invalid\n", attr->tclass);
#if SWNIC_FI_HAVE_2
	SWNIC_CHECK_MAX(attr->max_ep_auth_key, swnic_max_ep_auth_key(dev),
			"max_ep_auth_key");
#endif
	return swnic_check_auth_key(dev, attr->auth_key, attr->auth_key_size,
				    version, true);
}

/*
 * Narrow the domain attributes of @fi to @hint (already checked); @want is
 * the hints' info caps. Domain primary capabilities (FI_DIRECTED_RECV,
 * FI_AV_USER_ID) are reported only if asked for, unless nothing was.
 */
static int swnic_alter_domain_attr(struct fi_info *fi,
				   const struct swnic_dev *dev,
				   const struct fi_domain_attr *hint,
				   uint64_t want, uint32_t version)
{
	struct fi_domain_attr *attr = fi->domain_attr;
	uint64_t asked = want | (hint ? hint->caps : 0);

	/*
	 * No hints: every mode the application could support, which before
	 * API 1.5 is the unspecified mode (FI_MR_BASIC), not the 1.5 bits.
	 */
	int user = hint ? hint->mr_mode :
		   FI_VERSION_LT(version, FI_VERSION(1, 5)) ? SWNIC_MR_UNSPEC :
		   FI_MR_ALLOCATED;

	if (swnic_mr_mode(dev, user, version, fi->caps, &attr->mr_mode))
		return -FI_ENODATA;
	attr->caps = (attr->caps & ~(FI_LOCAL_COMM | FI_REMOTE_COMM)) |
		     (fi->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM));
	if (asked)
		attr->caps &= ~(SWNIC_DOMAIN_PRIMARY & ~asked);
	if (!hint)
		return 0;
	if (hint->threading)
		attr->threading = hint->threading;
	if (hint->control_progress)
		attr->control_progress = hint->control_progress;
	if (hint->data_progress)
		attr->data_progress = hint->data_progress;
	if (hint->resource_mgmt)
		attr->resource_mgmt = hint->resource_mgmt;
	if (hint->av_type)
		attr->av_type = hint->av_type;
	if (hint->tclass)
		attr->tclass = hint->tclass;
#if SWNIC_FI_HAVE_2
	if (hint->auth_key_size == FI_AV_AUTH_KEY) {
		attr->auth_key = NULL;
		attr->auth_key_size = FI_AV_AUTH_KEY;
		return 0;
	}
#endif
	if (hint->auth_key_size && !FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		attr->auth_key = malloc(hint->auth_key_size);
		if (!attr->auth_key)
			return -FI_ENOMEM;
		memcpy(attr->auth_key, hint->auth_key, hint->auth_key_size);
		attr->auth_key_size = hint->auth_key_size;
	}
	return 0;
}

static int swnic_check_ep_attr(const struct fi_info *fi,
			       const struct swnic_dev *dev,
			       const struct fi_ep_attr *hint,
			       uint32_t version)
{
	const struct fi_ep_attr *attr = fi->ep_attr;

	if (hint->type && hint->type != attr->type)
		return -FI_ENODATA;
	if (hint->protocol && hint->protocol != attr->protocol)
		return SWNIC_NOMATCH("protocol %#x\n", hint->protocol);
	if (hint->protocol_version > attr->protocol_version)
		return SWNIC_NOMATCH("protocol_version %u\n",
				     hint->protocol_version);
	SWNIC_CHECK_MAX(hint->max_msg_size, attr->max_msg_size,
			"max_msg_size");
	SWNIC_CHECK_MAX(hint->msg_prefix_size, 0, "msg_prefix_size");
	SWNIC_CHECK_MAX(hint->max_order_raw_size, attr->max_order_raw_size,
			"max_order_raw_size");
	SWNIC_CHECK_MAX(hint->max_order_war_size, attr->max_order_war_size,
			"max_order_war_size");
	SWNIC_CHECK_MAX(hint->max_order_waw_size, attr->max_order_waw_size,
			"max_order_waw_size");
	if (hint->mem_tag_format && !(fi->caps & FI_TAGGED))
		return SWNIC_NOMATCH("mem_tag_format without FI_TAGGED\n");
	/* Shared receive contexts where the module has them. */
	if (hint->rx_ctx_cnt == FI_SHARED_CONTEXT &&
	    !fi->domain_attr->max_ep_srx_ctx)
		return SWNIC_NOMATCH("shared receive contexts: the module has none\n");
	if (hint->tx_ctx_cnt != FI_SHARED_CONTEXT)
		SWNIC_CHECK_MAX(hint->tx_ctx_cnt, fi->domain_attr->max_ep_tx_ctx,
				"ep tx_ctx_cnt");
	if (hint->rx_ctx_cnt != FI_SHARED_CONTEXT)
		SWNIC_CHECK_MAX(hint->rx_ctx_cnt,
				fi->domain_attr->max_ep_rx_ctx,
				"ep rx_ctx_cnt");
	/*
	 * Several contexts are a scalable endpoint's (fi_endpoint opens one
	 * of each): FI_EP_RDM or FI_EP_DGRAM, none of them shared
	 * (fi_scalable_ep). For an unspecified type only the MSG answer goes.
	 */
	if ((hint->tx_ctx_cnt > 1 && hint->tx_ctx_cnt != FI_SHARED_CONTEXT) ||
	    (hint->rx_ctx_cnt > 1 && hint->rx_ctx_cnt != FI_SHARED_CONTEXT)) {
		if (attr->type == FI_EP_MSG)
			return SWNIC_NOMATCH("several contexts: not FI_EP_MSG\n");
		if (hint->tx_ctx_cnt == FI_SHARED_CONTEXT ||
		    hint->rx_ctx_cnt == FI_SHARED_CONTEXT)
			return SWNIC_NOMATCH("several contexts, and shared ones\n");
	}
	return swnic_check_auth_key(dev, hint->auth_key, hint->auth_key_size,
				    version, false);
}

static int swnic_alter_ep_attr(struct fi_info *fi,
			       const struct fi_ep_attr *hint,
			       uint32_t version)
{
	struct fi_ep_attr *attr = fi->ep_attr;

	if (hint->mem_tag_format)
		attr->mem_tag_format = hint->mem_tag_format;
	if (hint->max_msg_size)
		attr->max_msg_size = hint->max_msg_size;
	/* The contexts asked for (a scalable endpoint's), or shared. */
	if (hint->tx_ctx_cnt)
		attr->tx_ctx_cnt = hint->tx_ctx_cnt;
	if (hint->rx_ctx_cnt)
		attr->rx_ctx_cnt = hint->rx_ctx_cnt;
	if (hint->auth_key_size && !FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		attr->auth_key = malloc(hint->auth_key_size);
		if (!attr->auth_key)
			return -FI_ENOMEM;
		memcpy(attr->auth_key, hint->auth_key, hint->auth_key_size);
		attr->auth_key_size = hint->auth_key_size;
	}
	return 0;
}

/*
 * fi_endpoint(3): only peers with the endpoint's key may reach it. The
 * kernel always lets an endpoint take its domain's key too (see
 * swnic_domain_has_key()), so an endpoint key (checked already) is
 * offered only as its domain's: the same as the domain key asked for, or
 * the key of the open domain named; with neither, the answer's domain
 * takes it as well, so that fi_domain enforces it.
 */
static int swnic_ep_key_of_domain(struct fi_info *fi,
				  const struct fi_info *hints,
				  uint32_t version)
{
	const struct fi_ep_attr *eh = hints->ep_attr;
	struct fi_domain_attr *attr = fi->domain_attr;
	struct swnic_domain *dom;
	uint32_t k;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5)) || !eh->auth_key_size)
		return 0;
	memcpy(&k, eh->auth_key, sizeof(k));
#if SWNIC_FI_HAVE_2
	if (attr->auth_key_size == FI_AV_AUTH_KEY)
		return SWNIC_NOMATCH("an endpoint auth key in an FI_AV_AUTH_KEY domain\n");
#endif
	if (attr->auth_key_size)
		return attr->auth_key_size == sizeof(k) &&
		       !memcmp(attr->auth_key, &k, sizeof(k)) ? 0 :
		       SWNIC_NOMATCH("endpoint auth key %u is not the domain's\n",
				     k);
	if (hints->domain_attr && hints->domain_attr->domain) {
		dom = swnic_domain_registered(hints->domain_attr->domain);
		if (!dom || !swnic_domain_has_key(dom, k))
			return SWNIC_NOMATCH("endpoint auth key %u is not the open domain's\n",
					     k);
	}
	attr->auth_key = malloc(sizeof(k));
	if (!attr->auth_key)
		return -FI_ENOMEM;
	memcpy(attr->auth_key, &k, sizeof(k));
	attr->auth_key_size = sizeof(k);
	return 0;
}

static int swnic_check_tx_attr(struct fi_tx_attr *attr,
			       const struct fi_tx_attr *hint)
{
	uint64_t caps;

	if (swnic_side_caps(attr->caps, hint->caps, &caps))
		return -FI_ENODATA;
	if (hint->op_flags & ~SWNIC_TX_OP_FLAGS)
		return SWNIC_NOMATCH("tx op_flags %#llx\n",
				     (unsigned long long)hint->op_flags);
	/*
	 * fi_getinfo(3): a non-zero hint must be supported. An order asked
	 * for and not kept (atomic orders without FI_ATOMIC, any order on
	 * DGRAM) makes this fi_info no match, as the util providers do.
	 */
	if (hint->msg_order & ~attr->msg_order)
		return SWNIC_NOMATCH("tx msg_order %#llx: keeping only %#llx\n",
				     (unsigned long long)hint->msg_order,
				     (unsigned long long)attr->msg_order);
	if (hint->comp_order & ~attr->comp_order)
		return SWNIC_NOMATCH("tx comp_order %#llx\n",
				     (unsigned long long)hint->comp_order);
	SWNIC_CHECK_MAX(hint->inject_size, attr->inject_size, "inject_size");
	SWNIC_CHECK_MAX(hint->size, attr->size, "tx size");
	SWNIC_CHECK_MAX(hint->iov_limit, attr->iov_limit, "tx iov_limit");
	SWNIC_CHECK_MAX(hint->rma_iov_limit, attr->rma_iov_limit,
			"rma_iov_limit");
	if (!swnic_tclass_valid(hint->tclass))
		return SWNIC_NOMATCH("tx tclass %#x\n", hint->tclass);

	attr->caps = caps;
	attr->op_flags = hint->op_flags;
	if (hint->msg_order)
		attr->msg_order &= hint->msg_order;
	if (hint->inject_size)
		attr->inject_size = hint->inject_size;
	if (hint->size)
		attr->size = hint->size;
	if (hint->iov_limit)
		attr->iov_limit = hint->iov_limit;
	if (hint->rma_iov_limit)
		attr->rma_iov_limit = hint->rma_iov_limit;
	attr->tclass = hint->tclass;
	return 0;
}

static int swnic_check_rx_attr(struct fi_rx_attr *attr,
			       const struct fi_rx_attr *hint)
{
	uint64_t caps;

	if (swnic_side_caps(attr->caps, hint->caps, &caps))
		return -FI_ENODATA;
	if (hint->op_flags & ~SWNIC_RX_OP_FLAGS)
		return SWNIC_NOMATCH("rx op_flags %#llx\n",
				     (unsigned long long)hint->op_flags);
	/*
	 * fi_getinfo(3): a non-zero hint must be supported. An order asked
	 * for and not kept (atomic orders without FI_ATOMIC, any order on
	 * DGRAM) makes this fi_info no match, as the util providers do.
	 */
	if (hint->msg_order & ~attr->msg_order)
		return SWNIC_NOMATCH("rx msg_order %#llx: keeping only %#llx\n",
				     (unsigned long long)hint->msg_order,
				     (unsigned long long)attr->msg_order);
	if (hint->comp_order & ~attr->comp_order)
		return SWNIC_NOMATCH("rx comp_order %#llx\n",
				     (unsigned long long)hint->comp_order);
	SWNIC_CHECK_MAX(hint->total_buffered_recv, attr->total_buffered_recv,
			"total_buffered_recv");
	SWNIC_CHECK_MAX(hint->size, attr->size, "rx size");
	SWNIC_CHECK_MAX(hint->iov_limit, attr->iov_limit, "rx iov_limit");

	attr->caps = caps;
	attr->op_flags = hint->op_flags;
	if (hint->msg_order)
		attr->msg_order &= hint->msg_order;
	if (hint->size)
		attr->size = hint->size;
	if (hint->iov_limit)
		attr->iov_limit = hint->iov_limit;
	return 0;
}

/* Is @ip (network order) this device's address? (0.0.0.0: any.) */
static bool swnic_dev_is_src(const struct swnic_dev *dev, struct in_addr ip)
{
	return ip.s_addr == htonl(INADDR_ANY) ||
	       ip.s_addr == dev->addr.sin_addr.s_addr;
}

/* Can @dev reach @ip? A local device reaches this host's 127.0.0.1 only. */
static bool swnic_dev_reaches(const struct swnic_dev *dev, struct in_addr ip)
{
	if (ip.s_addr == htonl(INADDR_ANY))
		return false;
	if (!dev->attr.ifindex)
		return ip.s_addr == dev->addr.sin_addr.s_addr;
	return true;
}

/* Fill in the src/dest addresses of @fi for @dev, or refuse the device. */
static int swnic_info_addrs(struct fi_info *fi, const struct swnic_dev *dev,
			    const struct swnic_addr_req *req)
{
	struct sockaddr_in src = dev->addr, dest;
	char buf[INET_ADDRSTRLEN];
	int ret;

	if (req->has_src) {
		if (!req->src_local &&
		    !swnic_dev_is_src(dev, req->src.sin_addr))
			return SWNIC_NOMATCH("%s: source %s is not the device's\n",
					     dev->name,
					     inet_ntop(AF_INET,
						       &req->src.sin_addr,
						       buf, sizeof(buf)));
		src.sin_port = req->src.sin_port;
	}
	if (req->has_dest) {
		dest = req->dest;
		if (req->dest_local)
			dest.sin_addr = dev->addr.sin_addr;
		if (!swnic_dev_reaches(dev, dest.sin_addr))
			return SWNIC_NOMATCH("%s: cannot reach %s\n", dev->name,
					     inet_ntop(AF_INET,
						       &dest.sin_addr, buf,
						       sizeof(buf)));
	}

	/* IPv6 addresses (the device's or the peer's): FI_SOCKADDR_IN6. */
	fi->addr_format = req->fmt;
	if (req->fmt_unspec && (swnic_addr_is_v6(src.sin_addr) ||
				(req->has_dest &&
				 swnic_addr_is_v6(dest.sin_addr))))
		fi->addr_format = FI_SOCKADDR_IN6;
	/* ... which only a device on the wire with IPv6 has. */
	if (fi->addr_format == FI_SOCKADDR_IN6 &&
	    (!dev->attr.ifindex ||
	     !(dev->attr.features & SWNIC_FEAT_WIRE_IPV6)))
		return SWNIC_NOMATCH("%s: no IPv6 (local-only device)\n",
				     dev->name);
	ret = swnic_addr_dup(fi->addr_format, &src, &fi->src_addr,
			     &fi->src_addrlen);
	if (ret == -FI_EINVAL)	/* an IPv6 device, FI_SOCKADDR_IN asked */
		return SWNIC_NOMATCH("%s: its address is not in format %u\n",
				     dev->name, fi->addr_format);
	if (ret)
		return ret;
	if (req->has_dest)
		ret = swnic_addr_dup(fi->addr_format, &dest, &fi->dest_addr,
				     &fi->dest_addrlen);
	return ret;
}

/* Check @fi (offered by @dev) against @hints and narrow it. */
static int swnic_info_match(struct fi_info *fi, const struct swnic_dev *dev,
			    const struct fi_info *hints, uint32_t version,
			    const struct swnic_addr_req *req)
{
	uint64_t offered = fi->caps, caps;
	enum fi_ep_type type = fi->ep_attr->type;
	int ret;

	if (hints && hints->ep_attr && hints->ep_attr->type &&
	    hints->ep_attr->type != type)
		return -FI_ENODATA;

	ret = swnic_caps_narrow(offered, hints ? hints->caps : 0, &caps);
	if (ret)
		return ret;
	fi->caps = caps;
	fi->tx_attr->caps &= caps;
	fi->rx_attr->caps &= caps;
	if (!(caps & FI_RMA))
		fi->tx_attr->rma_iov_limit = caps & FI_ATOMIC ? 1 : 0;
	if (!(caps & (FI_RMA | FI_ATOMIC))) {
		/* Data ordering is of RMA and atomics (max_order_*). */
		fi->ep_attr->max_order_raw_size = 0;
		fi->ep_attr->max_order_war_size = 0;
		fi->ep_attr->max_order_waw_size = 0;
	}
	if (!(caps & FI_ATOMIC)) {
		fi->tx_attr->msg_order &= ~SWNIC_ATOMIC_ORDER;
		fi->rx_attr->msg_order &= ~SWNIC_ATOMIC_ORDER;
	}
	if (!(caps & FI_TAGGED))
		fi->ep_attr->mem_tag_format = 0;

	ret = swnic_info_addrs(fi, dev, req);
	if (ret)
		return ret;
	if (!hints)
		return swnic_alter_domain_attr(fi, dev, NULL, 0, version);

	/*
	 * fi_getinfo(3): a passive endpoint as hints->handle is copied to
	 * the answer's (for the FI_EP_MSG endpoints it serves); swnic knows
	 * no other handle.
	 */
	if (hints->handle) {
		if (!swnic_is_pep(hints->handle))
			return SWNIC_NOMATCH("hints->handle names no swnic passive endpoint\n");
		if (type != FI_EP_MSG)
			return -FI_ENODATA;
		fi->handle = hints->handle;
	}

	if (hints->fabric_attr) {
		if (hints->fabric_attr->name &&
		    strcmp(hints->fabric_attr->name, SWNIC_FABRIC_NAME))
			return -FI_ENODATA;
		if (hints->fabric_attr->fabric &&
		    !swnic_fabric_registered(hints->fabric_attr->fabric))
			return SWNIC_NOMATCH("hints fabric is not an open swnic fabric\n");
	}
	if (hints->domain_attr) {
		const struct fi_domain_attr *dh = hints->domain_attr;
		struct swnic_domain *dom;

		if (dh->domain) {
			dom = swnic_domain_registered(dh->domain);
			if (!dom)
				return SWNIC_NOMATCH("hints domain is not an open swnic domain\n");
			if (strcmp(dom->dev.name, dev->name))
				return -FI_ENODATA;
		}
		ret = swnic_check_domain_attr(dev, dh, version, caps);
		if (ret)
			return ret;
#if SWNIC_FI_HAVE_2
		/* fi_domain(3): for connectionless endpoints. */
		if (dh->auth_key_size == FI_AV_AUTH_KEY &&
		    fi->ep_attr->type == FI_EP_MSG)
			return SWNIC_NOMATCH("FI_AV_AUTH_KEY: connectionless endpoints only\n");
#endif
		ret = swnic_alter_domain_attr(fi, dev, dh, hints->caps,
					      version);
		if (ret)
			return ret;
	} else {
		ret = swnic_alter_domain_attr(fi, dev, NULL, hints->caps,
					      version);
		if (ret)
			return ret;
	}
	if (hints->ep_attr) {
		ret = swnic_check_ep_attr(fi, dev, hints->ep_attr, version);
		if (ret)
			return ret;
		ret = swnic_alter_ep_attr(fi, hints->ep_attr, version);
		if (ret)
			return ret;
		ret = swnic_ep_key_of_domain(fi, hints, version);
		if (ret)
			return ret;
	}
	if (hints->tx_attr) {
		ret = swnic_check_tx_attr(fi->tx_attr, hints->tx_attr);
		if (ret)
			return ret;
	}
	if (hints->rx_attr) {
		ret = swnic_check_rx_attr(fi->rx_attr, hints->rx_attr);
		if (ret)
			return ret;
	}
	/* Modes: swnic needs none, so whatever the app supports is fine. */
	fi->mode = 0;
	return 0;
}

/* Output fabric/domain: the first open instance, as fi_getinfo(3) says. */
static void swnic_info_instances(struct fi_info *fi,
				 const struct fi_info *hints)
{
	fi->fabric_attr->fabric = hints && hints->fabric_attr &&
				  hints->fabric_attr->fabric ?
				  hints->fabric_attr->fabric :
				  swnic_fabric_first();
	fi->domain_attr->domain = hints && hints->domain_attr &&
				  hints->domain_attr->domain ?
				  hints->domain_attr->domain :
				  swnic_domain_first(fi->domain_attr->name);
}

/* Resolve node/service/hint addresses once for the whole call. */
static int swnic_addr_request(const char *node, const char *service,
			      uint64_t flags, const struct fi_info *hints,
			      bool remote_ok, struct swnic_addr_req *req)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	bool local = false, have_node = false;
	uint16_t port = 0;
	int ret;

	memset(req, 0, sizeof(*req));
	req->fmt = hints ? hints->addr_format : FI_FORMAT_UNSPEC;
	if (!swnic_addr_format_ok(req->fmt))
		return SWNIC_NOMATCH("addr_format %u not supported\n",
				     req->fmt);
	if (req->fmt == FI_FORMAT_UNSPEC) {
		req->fmt = FI_SOCKADDR_IN;
		req->fmt_unspec = true;
	}

	if ((flags & FI_SOURCE) && !node && !service)
		return -FI_EINVAL;

	if (node) {
		have_node = true;
		if (!swnic_addr_parse_str(node, &sin)) {
			if (service)
				return SWNIC_NOMATCH("FI_ADDR_STR node with a service\n");
		} else if (!strncmp(node, "fi_", 3) && strstr(node, "://")) {
			return SWNIC_NOMATCH("%s: not an swnic address\n", node);
		} else if (swnic_addr_is_local_host(node) &&
			   !(flags & FI_NUMERICHOST)) {
			local = true;
		} else {
			ret = swnic_addr_resolve_node(node,
						      flags & FI_NUMERICHOST,
						      remote_ok,
						      &sin.sin_addr);
			if (ret)
				return SWNIC_NOMATCH("%s: no swnic device reaches it\n",
						     node);
		}
	}
	if (service) {
		if (swnic_addr_parse_service(service, &port))
			return SWNIC_NOMATCH("service %s is not a port\n",
					     service);
		sin.sin_port = htons(port);
	}

	if (flags & FI_SOURCE) {
		/* node/service name the source: hints' src_addr is ignored. */
		req->has_src = true;
		req->src = sin;
		req->src_local = local || !have_node;
	} else if (node || service) {
		req->has_dest = true;
		req->dest = sin;
		req->dest_local = local || !have_node;
	}
	if (!(flags & FI_SOURCE) && hints && hints->src_addr &&
	    hints->src_addrlen) {
		if (swnic_addr_read(hints->addr_format, hints->src_addr,
				    hints->src_addrlen, &req->src))
			return SWNIC_NOMATCH("hints src_addr is not an swnic address\n");
		req->has_src = true;
	}
	/*
	 * fi_getinfo(3): hints' dest_addr is used when node and service are
	 * NULL or FI_SOURCE is set (they name the source then).
	 */
	if ((!(node || service) || (flags & FI_SOURCE)) && hints &&
	    hints->dest_addr && hints->dest_addrlen) {
		if (swnic_addr_read(hints->addr_format, hints->dest_addr,
				    hints->dest_addrlen, &req->dest))
			return SWNIC_NOMATCH("hints dest_addr is not an swnic address\n");
		req->has_dest = true;
	}
	return 0;
}

/* FI_PROV_ATTR_ONLY: one fi_info, whether or not a device is there. */
static int swnic_prov_attr_only(const struct swnic_dev *devs, size_t ndevs,
				struct fi_info **info)
{
	struct swnic_dev none = { .name = SWNIC_DEV_PREFIX "0" };
	struct fi_info *fi;

	none.addr.sin_family = AF_INET;
	none.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fi = swnic_info_alloc(ndevs ? &devs[0] : &none, FI_EP_RDM);
	if (!fi)
		return -FI_ENOMEM;
	*info = fi;
	return 0;
}

/*
 * Devices bound to a netdev first (in their order), then local-only ones:
 * a bound device reaches this host's peers too (directly) and other
 * hosts besides, so an application that takes the first answer - as
 * fi_pingpong's server does, with no node to choose by - gets the device
 * its peers on other hosts can reach.
 */
static void swnic_devs_bound_first(struct swnic_dev *devs, size_t ndevs)
{
	size_t i, j;

	for (i = 1; i < ndevs; i++) {
		struct swnic_dev tmp = devs[i];

		if (!tmp.attr.ifindex)
			continue;
		for (j = i; j > 0 && !devs[j - 1].attr.ifindex; j--)
			devs[j] = devs[j - 1];
		devs[j] = tmp;
	}
}

int swnic_getinfo(uint32_t version, const char *node, const char *service,
		  uint64_t flags, const struct fi_info *hints,
		  struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head, *fi;
	struct swnic_addr_req req;
	struct swnic_dev *devs;
	size_t ndevs, d, t;
	bool remote_ok = false;
	int ret;

	*info = NULL;
	/*
	 * Any 1.x API, and 2.x when built against 2.x headers: an application
	 * gets the semantics of the version it asks for, up to the newest
	 * this provider was built for (SWNIC_FI_VERSION).
	 */
	if (FI_MAJOR(version) < 1 || FI_VERSION_LT(SWNIC_FI_VERSION, version))
		return SWNIC_NOMATCH("API %u.%u not supported (newest %u.%u)\n",
				     FI_MAJOR(version), FI_MINOR(version),
				     FI_MAJOR(SWNIC_FI_VERSION),
				     FI_MINOR(SWNIC_FI_VERSION));
	if ((flags & SWNIC_CORE_PROV_ONLY) && !swnic_params.layering)
		return SWNIC_NOMATCH("not offering MSG/DGRAM endpoints to a utility provider: swnic's own RDM endpoints are native (FI_SWNIC_LAYERING=1 allows it)\n");

	ret = swnic_dev_scan(&devs, &ndevs);
	if (ret)
		return ret;
	if (flags & FI_PROV_ATTR_ONLY) {
		ret = swnic_prov_attr_only(devs, ndevs, info);
		free(devs);
		return ret;
	}
	if (!ndevs) {
		free(devs);
		return SWNIC_NOMATCH("no swnic device (is the module loaded?)\n");
	}
	for (d = 0; d < ndevs; d++)
		if (devs[d].attr.ifindex)
			remote_ok = true;
	swnic_devs_bound_first(devs, ndevs);

	ret = swnic_addr_request(node, service, flags, hints, remote_ok, &req);
	if (ret)
		goto out;

	for (d = 0; d < ndevs; d++) {
		if (hints && hints->domain_attr && hints->domain_attr->name &&
		    strcmp(hints->domain_attr->name, devs[d].name))
			continue;
		for (t = 0; t < SWNIC_ARRAY_SIZE(swnic_ep_types); t++) {
			fi = swnic_info_alloc(&devs[d], swnic_ep_types[t]);
			if (!fi) {
				ret = -FI_ENOMEM;
				goto out;
			}
			fi->caps = swnic_offered_caps(&devs[d],
						      swnic_ep_types[t]);
			fi->tx_attr->caps &= fi->caps;
			fi->rx_attr->caps &= fi->caps;
			ret = swnic_info_match(fi, &devs[d], hints, version,
					       &req);
			if (ret == -FI_ENOMEM) {
				fi_freeinfo(fi);
				goto out;
			}
			if (ret) {
				fi_freeinfo(fi);
				continue;
			}
			swnic_info_instances(fi, hints);
			*tail = fi;
			tail = &fi->next;
		}
	}
	ret = head ? 0 : -FI_ENODATA;
out:
	free(devs);
	if (ret) {
		fi_freeinfo(head);
		return ret;
	}
	*info = head;
	return 0;
}
