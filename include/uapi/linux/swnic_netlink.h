/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * swnic: generic netlink family "swnic" - the management ABI.
 *
 * Documentation/netlink/specs/swnic.yaml describes every command and
 * attribute. Conventions:
 *  - Integers are u32 or u64 (u64 attributes are padded with SWNIC_A_PAD).
 *  - Every rejected request carries an extack message naming the attribute.
 *  - Commands that change state need CAP_NET_ADMIN in the caller's user
 *    namespace (GENL_UNS_ADMIN_PERM) for the network namespace involved.
 *  - Enums only ever grow at the end; retired values stay as comments.
 */
#ifndef _UAPI_LINUX_SWNIC_NETLINK_H
#define _UAPI_LINUX_SWNIC_NETLINK_H

#define SWNIC_GENL_NAME		"swnic"
#define SWNIC_GENL_VERSION	1
#define SWNIC_GENL_MCGRP_EVENTS	"events"

/* Device states (SWNIC_A_DEV_STATE). */
#define SWNIC_DEV_STATE_DOWN	0
#define SWNIC_DEV_STATE_UP	1

enum swnic_nl_cmd {
	SWNIC_NL_CMD_UNSPEC,
	SWNIC_NL_CMD_DEV_GET,		/* doit by index/name, or dump */
	SWNIC_NL_CMD_DEV_NEW,		/* create; also the "added" event */
	SWNIC_NL_CMD_DEV_DEL,		/* destroy; also the "removed" event */
	SWNIC_NL_CMD_DEV_SET,		/* change state/limits; also an event */
	__SWNIC_NL_CMD_MAX,
	SWNIC_NL_CMD_MAX = __SWNIC_NL_CMD_MAX - 1
};

enum swnic_nl_attr {
	SWNIC_A_UNSPEC,
	SWNIC_A_PAD,			/* padding for u64 attributes */
	SWNIC_A_DEV_INDEX,		/* u32: device index */
	SWNIC_A_DEV_NAME,		/* string: device name, < SWNIC_NAME_MAX */
	SWNIC_A_DEV_IFINDEX,		/* u32: bound netdev, 0 = local only */
	SWNIC_A_DEV_IFNAME,		/* string: bound netdev name (out, or in) */
	SWNIC_A_DEV_STATE,		/* u32: SWNIC_DEV_STATE_* */
	SWNIC_A_DEV_DOMAINS,		/* u32: domains open now (out) */
	SWNIC_A_DEV_MAX_DOMAINS,	/* u32: limit of open domains */
	SWNIC_A_DEV_MAX_MR,		/* u32: MRs per domain */
	SWNIC_A_DEV_MAX_EP,		/* u32: endpoints per domain */
	SWNIC_A_DEV_MAX_CQ,		/* u32: CQs per domain */
	SWNIC_A_DEV_MAX_PINNED,		/* u64: pinned bytes on the device */
	__SWNIC_A_MAX,
	SWNIC_A_MAX = __SWNIC_A_MAX - 1
};

#endif /* _UAPI_LINUX_SWNIC_NETLINK_H */
