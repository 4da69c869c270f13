// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fi_info swnic offers for a device: one per endpoint type, every
 * limit from the kernel's SWNIC_IOCTL_QUERY_DEVICE answer. info.c narrows
 * these to an application's hints.
 */
#include <stdlib.h>
#include <string.h>

#include "swnic.h"
#include "attr.h"

/* Capabilities of each endpoint type (before hints narrow them). */
static uint64_t swnic_type_caps(enum fi_ep_type type)
{
	switch (type) {
	case FI_EP_RDM:
		return SWNIC_RDM_CAPS;
	case FI_EP_MSG:
		return SWNIC_MSG_CAPS;
	case FI_EP_DGRAM:
		return SWNIC_DGRAM_CAPS;
	default:
		return 0;
	}
}

/*
 * What the device reaches: every device reaches this host's domains; one
 * bound to a netdev reaches other hosts over the kernel's wire
 * (FI_REMOTE_COMM). Open MPI's OFI MTL asks for FI_REMOTE_COMM even for a
 * one-host job, so the FI_SWNIC_REMOTE_COMM parameter lets the user claim
 * it for a local-only device: a send to another host then completes with
 * FI_EHOSTUNREACH.
 */
static uint64_t swnic_comm_caps(const struct swnic_dev *dev)
{
	bool wire = dev->attr.ifindex &&
		    (dev->attr.features & SWNIC_FEAT_WIRE);

	return FI_LOCAL_COMM |
	       (wire || swnic_params.remote_comm ? FI_REMOTE_COMM : 0);
}

/* FI_SHARED_AV: named AVs held by the kernel (av.c). */
static uint64_t swnic_shared_caps(const struct swnic_dev *dev)
{
	return dev->attr.features & SWNIC_FEAT_SHARED_AV ? FI_SHARED_AV : 0;
}

/*
 * FI_TRIGGER: triggered sends, tagged sends, RMA and atomics, which the
 * kernel starts when a counter reaches a threshold (SWNIC_FEAT_TRIGGER,
 * trigger.c), and receives (SWNIC_FEAT_TRIG_RECV).
 */
uint64_t swnic_ep_caps(enum fi_ep_type type, const struct swnic_dev *dev)
{
	uint64_t caps = swnic_type_caps(type);

	if (!caps)
		return 0;
	/* The kernel stops its send queue at a fenced work request. */
	if (dev->attr.features & SWNIC_FEAT_FENCE)
		caps |= FI_FENCE;
	if (dev->attr.features & SWNIC_FEAT_TRIGGER)
		caps |= FI_TRIGGER;
	/* Receive contexts of scalable endpoints named by fi_rx_addr. */
	if ((dev->attr.features & SWNIC_FEAT_PORT_BLOCK) && type != FI_EP_MSG)
		caps |= FI_NAMED_RX_CTX;
	return caps | swnic_shared_caps(dev) | swnic_comm_caps(dev);
}

uint64_t swnic_domain_caps(const struct swnic_dev *dev)
{
	return SWNIC_DOMAIN_CAPS | swnic_shared_caps(dev) |
	       swnic_comm_caps(dev);
}

/*
 * Auth keys one connectionless endpoint holds: its domain's, or with
 * FI_AV_AUTH_KEY (libfabric 2.x) as many of its AV's as the kernel gives
 * an endpoint.
 */
/*
 * Transmit and receive contexts of a scalable endpoint: a receive context
 * is a kernel endpoint at the SEP's port block (SWNIC_FEAT_PORT_BLOCK)
 * plus its index, so a block's size bounds both; an older module has none.
 */
size_t swnic_max_ep_ctx(const struct swnic_dev *dev)
{
	return dev->attr.features & SWNIC_FEAT_PORT_BLOCK ?
	       SWNIC_PORT_BLOCK_MAX : 1;
}

/*
 * Shared receive contexts an endpoint uses: one, where the module has
 * them (SWNIC_FEAT_SRX, lib/srx.c), else none.
 */
size_t swnic_max_ep_srx_ctx(const struct swnic_dev *dev)
{
	return dev->attr.features & SWNIC_FEAT_SRX ? 1 : 0;
}

size_t swnic_max_ep_auth_key(const struct swnic_dev *dev)
{
#if SWNIC_FI_HAVE_2
	if (dev->attr.features & SWNIC_FEAT_EP_AUTH_KEYS)
		return SWNIC_EP_AUTH_KEYS_MAX;
#endif
	return 1;
}

/**
 * swnic_info_alloc() - the fi_info for endpoints of @type on @dev
 *
 * Everything the device offers: the caller narrows it. Returns NULL on
 * allocation failure.
 */
struct fi_info *swnic_info_alloc(const struct swnic_dev *dev,
				 enum fi_ep_type type)
{
	const struct swnic_query_device *q = &dev->attr;
	struct fi_domain_attr *dom;
	struct fi_info *fi;
	uint64_t caps = swnic_ep_caps(type, dev);

	fi = fi_allocinfo();
	if (!fi)
		return NULL;

	fi->caps = caps;
	fi->mode = 0;			/* swnic needs no mode bit */
	fi->addr_format = FI_SOCKADDR_IN;

	fi->tx_attr->caps = caps & SWNIC_TX_CAPS;
	fi->tx_attr->mode = 0;
	fi->tx_attr->op_flags = 0;
	fi->tx_attr->msg_order = type == FI_EP_DGRAM ? SWNIC_ORDER_NONE :
						      SWNIC_MSG_ORDER;
	if (caps & FI_ATOMIC)
		fi->tx_attr->msg_order |= SWNIC_ATOMIC_ORDER;
	fi->tx_attr->comp_order = SWNIC_ORDER_NONE;
	fi->tx_attr->inject_size = q->max_inject;
	fi->tx_attr->size = q->max_sq_entries;
	fi->tx_attr->iov_limit = q->max_iov;
	/*
	 * A work request names one remote range (struct swnic_sqe): one
	 * rma_iov entry, whatever an older kernel reported.
	 */
	fi->tx_attr->rma_iov_limit = caps & FI_RMA ?
				     (q->max_rma_iov < 1 ? q->max_rma_iov : 1) :
				     0;
	fi->tx_attr->tclass = FI_TC_UNSPEC;

	fi->rx_attr->caps = caps & SWNIC_RX_CAPS;
	/* Triggered receives (trigger.c): a receive capability too. */
	if (q->features & SWNIC_FEAT_TRIG_RECV)
		fi->rx_attr->caps |= caps & FI_TRIGGER;
	fi->rx_attr->mode = 0;
	fi->rx_attr->op_flags = 0;
	fi->rx_attr->msg_order = fi->tx_attr->msg_order;
	fi->rx_attr->comp_order = SWNIC_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = q->max_rq_entries;
	fi->rx_attr->iov_limit = q->max_iov;

	fi->ep_attr->type = type;
	fi->ep_attr->protocol = SWNIC_PROTO;
	fi->ep_attr->protocol_version = SWNIC_PROTO_VERSION;
	fi->ep_attr->max_msg_size = q->max_msg_size;
	fi->ep_attr->msg_prefix_size = 0;
	/*
	 * RMA to one peer is executed in the order posted, data included
	 * (on one host in the poster's context, across the wire in msg_id
	 * order at the target): any size is ordered.
	 */
	if (type != FI_EP_DGRAM && (caps & FI_RMA)) {
		fi->ep_attr->max_order_raw_size = q->max_msg_size;
		fi->ep_attr->max_order_war_size = q->max_msg_size;
		fi->ep_attr->max_order_waw_size = q->max_msg_size;
	}
	fi->ep_attr->mem_tag_format = caps & FI_TAGGED ? SWNIC_TAG_FORMAT : 0;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;
	fi->ep_attr->auth_key_size = 0;

	dom = fi->domain_attr;
	dom->name = strdup(dev->name);
	dom->threading = FI_THREAD_SAFE;
	dom->control_progress = FI_PROGRESS_AUTO;
	dom->data_progress = FI_PROGRESS_AUTO;
	dom->resource_mgmt = FI_RM_ENABLED;
	dom->av_type = FI_AV_UNSPEC;
	dom->mr_mode = SWNIC_MR_MODE;
	dom->mr_key_size = q->mr_key_size;
	dom->cq_data_size = q->cq_data_size;
	dom->cq_cnt = q->max_cq;
	dom->ep_cnt = q->max_ep;
	dom->tx_ctx_cnt = q->max_ep;
	dom->rx_ctx_cnt = q->max_ep;
	dom->max_ep_tx_ctx = swnic_max_ep_ctx(dev);
	dom->max_ep_rx_ctx = swnic_max_ep_ctx(dev);
	/* An endpoint uses at most one shared transmit context. */
	dom->max_ep_stx_ctx = 1;
	/* And one shared receive context, if the module has them. */
	dom->max_ep_srx_ctx = swnic_max_ep_srx_ctx(dev);
	dom->cntr_cnt = q->max_cntr;
	dom->mr_iov_limit = q->mr_iov_limit;
	dom->caps = swnic_domain_caps(dev);
	dom->mode = 0;
	dom->auth_key = NULL;
	dom->auth_key_size = 0;
	dom->max_err_data = q->max_err_data;
	dom->mr_cnt = q->max_mr;
	dom->tclass = FI_TC_UNSPEC;
#if SWNIC_FI_HAVE_2
	/* Its domain's, or those of the AV with FI_AV_AUTH_KEY. */
	dom->max_ep_auth_key = swnic_max_ep_auth_key(dev);
	dom->max_group_id = 0;
#endif

	fi->fabric_attr->name = strdup(SWNIC_FABRIC_NAME);
	fi->fabric_attr->prov_version = SWNIC_PROV_VERSION;
	/* prov_name stays NULL: the core sets it (and appends utility names). */

	if (!dom->name || !fi->fabric_attr->name) {
		fi_freeinfo(fi);
		return NULL;
	}
	return fi;
}
