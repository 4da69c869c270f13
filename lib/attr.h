/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Capability sets and fixed protocol properties of swnic endpoints, named
 * once here and used by attr.c (what is offered) and info.c (hint checks).
 */
#ifndef SWNIC_ATTR_H
#define SWNIC_ATTR_H

#include "swnic.h"

/* fi_getinfo(3) capability classes. */
#define SWNIC_PRIMARY_CAPS	(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
				 FI_MULTICAST | FI_NAMED_RX_CTX | \
				 FI_DIRECTED_RECV | FI_VARIABLE_MSG | \
				 FI_HMEM | FI_COLLECTIVE | FI_AV_USER_ID)
#define SWNIC_MSG_MODS		(FI_SEND | FI_RECV)
#define SWNIC_RMA_MODS		(FI_READ | FI_WRITE | FI_REMOTE_READ | \
				 FI_REMOTE_WRITE)
#define SWNIC_PRIMARY_MODS	(SWNIC_MSG_MODS | SWNIC_RMA_MODS)
#define SWNIC_SECONDARY_CAPS	(FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | \
				 FI_SHARED_AV | FI_TRIGGER | FI_FENCE | \
				 FI_LOCAL_COMM | FI_REMOTE_COMM | \
				 FI_SOURCE_ERR | FI_RMA_PMEM)

/*
 * Secondary capabilities swnic reports without being asked, because they
 * cost nothing: FI_MULTI_RECV (a receive flag). FI_SOURCE is only given on
 * request (it makes receives look up their source), FI_REMOTE_COMM only if
 * the application did not restrict itself to FI_LOCAL_COMM.
 */
#define SWNIC_FREE_CAPS		(FI_MULTI_RECV)

/*
 * Per endpoint type. The data path (kernel engine, swnic_queue.h) carries
 * messages, tagged messages matched in the kernel (with source matching),
 * RMA read/write, remote CQ data and multi-receive buffers, and reports
 * the source address of every receive.
 */
#define SWNIC_RDM_CAPS		(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | \
				 SWNIC_PRIMARY_MODS | FI_DIRECTED_RECV | \
				 FI_AV_USER_ID | FI_MULTI_RECV | FI_SOURCE | \
				 FI_RMA_EVENT)
#define SWNIC_MSG_CAPS		(FI_MSG | FI_RMA | FI_ATOMIC | SWNIC_PRIMARY_MODS | \
				 FI_MULTI_RECV | FI_RMA_EVENT)
#define SWNIC_DGRAM_CAPS	(FI_MSG | SWNIC_MSG_MODS | FI_MULTI_RECV | \
				 FI_SOURCE | FI_AV_USER_ID)

/* Capabilities of a domain (fi_domain_attr.caps), besides LOCAL/REMOTE. */
#define SWNIC_DOMAIN_CAPS	(FI_DIRECTED_RECV | FI_AV_USER_ID)
#define SWNIC_DOMAIN_PRIMARY	(FI_DIRECTED_RECV | FI_AV_USER_ID)

/* Which capabilities belong to the transmit and the receive side. */
#define SWNIC_TX_CAPS		(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | \
				 FI_SEND | FI_READ | FI_WRITE | FI_FENCE | \
				 FI_LOCAL_COMM | FI_REMOTE_COMM | FI_TRIGGER | \
				 FI_NAMED_RX_CTX)
#define SWNIC_RX_CAPS		(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | \
				 FI_RECV | \
				 FI_REMOTE_READ | FI_REMOTE_WRITE | \
				 FI_DIRECTED_RECV | FI_MULTI_RECV | FI_SOURCE | \
				 FI_RMA_EVENT | FI_LOCAL_COMM | FI_REMOTE_COMM | \
				 FI_NAMED_RX_CTX)

/* Operation flags an endpoint accepts as defaults (fi_tx/rx_attr). */
#define SWNIC_TX_OP_FLAGS	(FI_COMPLETION | FI_INJECT | \
				 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
				 FI_DELIVERY_COMPLETE)
#define SWNIC_RX_OP_FLAGS	(FI_COMPLETION | FI_MULTI_RECV)

/*
 * Everything posted to one peer is executed there in the order posted:
 * on one host by the poster's kernel context (one send queue, consumed in
 * order, a stalled entry stalls those behind it), across the wire by the
 * target kernel in msg_id order. Sends, RMA reads and writes are ordered
 * among themselves (atomics: SWNIC_ATOMIC_ORDER).
 */
#define SWNIC_MSG_ORDER		(FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | \
				 FI_ORDER_WAR | FI_ORDER_WAW | FI_ORDER_WAS | \
				 FI_ORDER_SAR | FI_ORDER_SAW | FI_ORDER_SAS | \
				 FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW | \
				 FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW)
/*
 * Atomics to one peer are applied in the order posted (the poster's
 * context on one host; the target's per-peer execution order on the
 * wire), fetches and updates alike.
 */
#define SWNIC_ATOMIC_ORDER	(FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | \
				 FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW)

/* Tags are 64 bits, all usable: no bits reserved by the provider. */
#define SWNIC_TAG_FORMAT	0xaaaaaaaaaaaaaaaaULL

/*
 * Memory registration modes swnic needs: the kernel pins the pages of a
 * region peers may access, so those must be backed (FI_MR_ALLOCATED). Keys
 * may be the application's or the kernel's and regions may be addressed
 * by offset or by virtual address (the kernel does both), so FI_MR_PROV_KEY
 * and FI_MR_VIRT_ADDR are honoured when set, never required. Local buffers
 * need no registration: FI_MR_LOCAL is never required.
 */
#define SWNIC_MR_MODE		(FI_MR_ALLOCATED)
#define SWNIC_MR_MODE_HONOURED	(FI_MR_ALLOCATED | FI_MR_PROV_KEY | \
				 FI_MR_VIRT_ADDR | FI_MR_LOCAL | \
				 FI_MR_MMU_NOTIFY)

#endif /* SWNIC_ATTR_H */
