/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * swnic: generic netlink family "swnic" - the management ABI.
 *
 * Documentation/netlink/specs/swnic.yaml describes every command and
 * attribute. Conventions:
 *  - Integers are u32 or u64 (u64 attributes are padded with SWNIC_A_PAD).
 *  - Each command has a strict policy: an attribute of the wrong size or
 *    type, an unknown flag, or one the command does not take fails with
 *    EINVAL, an integer out of its range with ERANGE. Every rejected
 *    request carries an extack message and the offset of the attribute at
 *    fault (NLMSGERR_ATTR_OFFS) or the type of a missing one
 *    (NLMSGERR_ATTR_MISS_TYPE).
 *  - Commands that change state need CAP_NET_ADMIN over the caller's
 *    network namespace (GENL_UNS_ADMIN_PERM) and over the device's: the
 *    namespace of its bound netdev, else init_net. DEV_NEW needs
 *    CAP_NET_ADMIN in the initial user namespace.
 *  - Anyone may read devices, services, module counters and the wire's
 *    peers and counters of their own network namespace; domains, their
 *    MRs and counters are shown to their owner (same uid) and to the
 *    device's administrators only.
 *  - Events go to the "events" group (joining needs CAP_NET_ADMIN) of
 *    init_net and of the device's namespace: DEV_NEW/DEL/SET, DOMAIN_NEW/
 *    DEL, SVC_NEW/DEL/SET, MR_REVOKED, LIMIT_HIT, with the attributes of
 *    the matching GET.
 *  - Dumps resume across messages; one that raced a change of the set it
 *    walks has NLM_F_DUMP_INTR on its messages: run it again.
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

/* Largest value of a count limit (SWNIC_A_DEV_MAX_*, SWNIC_A_SVC_MAX_*). */
#define SWNIC_LIMIT_MAX		(1U << 24)

/* Request flags of DEV_DEL (SWNIC_A_FLAGS). */
#define SWNIC_DEV_DEL_F_FORCE	(1U << 0)	/* even while domains are open */

/*
 * Services (auth keys). Each device has its own services; the default
 * service (SWNIC_SVC_DEFAULT_ID, auth key SWNIC_AUTH_KEY_DEFAULT) exists
 * from the device's creation and cannot be deleted. It is closed (no
 * SWNIC_SVC_F_OPEN, no members) unless the module's default_open=1 made
 * it open; an administrator opens it, or names its members, with SVC_SET.
 */
#define SWNIC_SVC_DEFAULT_ID	1
#define SWNIC_AUTH_KEY_DEFAULT	1
#define SWNIC_SVC_MAX_MEMBERS	64	/* uids + gids of one service */

/* Service flags (SWNIC_A_SVC_FLAGS). */
#define SWNIC_SVC_F_OPEN	(1U << 0)	/* any uid may use it */
#define SWNIC_SVC_F_DISABLED	(1U << 1)	/* no domain may take its key */
#define SWNIC_SVC_F_ALL		(SWNIC_SVC_F_OPEN | SWNIC_SVC_F_DISABLED)

/* Limits named by LIMIT_HIT events (SWNIC_A_LIMIT). */
#define SWNIC_LIMIT_DEV_DOMAINS	1	/* device's max domains */
#define SWNIC_LIMIT_DEV_MR	2	/* device's MRs per domain */
#define SWNIC_LIMIT_DEV_EP	3	/* device's endpoints per domain */
#define SWNIC_LIMIT_DEV_CQ	4	/* device's CQs per domain */
#define SWNIC_LIMIT_DEV_PINNED	5	/* device's pinned bytes */
#define SWNIC_LIMIT_SVC_DOMAINS	6	/* service's max domains */

enum swnic_nl_cmd {
	SWNIC_NL_CMD_UNSPEC,
	SWNIC_NL_CMD_DEV_GET,		/* doit by index/name, or dump */
	SWNIC_NL_CMD_DEV_NEW,		/* create; also the "added" event */
	SWNIC_NL_CMD_DEV_DEL,		/* destroy; also the "removed" event */
	SWNIC_NL_CMD_DEV_SET,		/* change state/limits; also an event */
	SWNIC_NL_CMD_DOMAIN_GET,	/* doit by DOMAIN_ID, or dump */
	SWNIC_NL_CMD_DOMAIN_NEW,	/* event only: a domain was opened */
	SWNIC_NL_CMD_DOMAIN_DEL,	/* event only: a domain was closed */
	SWNIC_NL_CMD_STAT_GET,		/* counters: module, device or domain */
	SWNIC_NL_CMD_STAT_RESET,	/* zero a device's or domain's counters */
	SWNIC_NL_CMD_SVC_GET,		/* doit by SVC_ID, or dump */
	SWNIC_NL_CMD_SVC_NEW,		/* create; also an event */
	SWNIC_NL_CMD_SVC_DEL,		/* destroy; also an event */
	SWNIC_NL_CMD_SVC_SET,		/* change; also an event */
	SWNIC_NL_CMD_LIMIT_HIT,		/* event only: a request hit a limit */
	SWNIC_NL_CMD_MR_GET,		/* dump of MRs (by domain, device) */
	SWNIC_NL_CMD_MR_REVOKED,	/* event only: an MR was revoked */
	/*
	 * Dump of the wire (Documentation/wire.rst) of the caller's network
	 * namespace: first one message with its counters (SWNIC_A_STATS:
	 * packets, drops by reason), then one per peer context (PEER_*, and
	 * SWNIC_A_STATS: its packets dropped by reason, drop_<reason>).
	 */
	SWNIC_NL_CMD_PEER_GET,
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
	SWNIC_A_FLAGS,			/* u32: request flags, per command */
	SWNIC_A_DOMAIN_ID,		/* u32: domain id */
	SWNIC_A_DOMAIN_PID,		/* u32: pid (tgid) that opened it */
	SWNIC_A_DOMAIN_UID,		/* u32: uid that opened it */
	SWNIC_A_DOMAIN_COMM,		/* string: command that opened it */
	SWNIC_A_DOMAIN_AUTH_KEY,	/* u32: auth key in use, 0 = none */
	SWNIC_A_DOMAIN_MRS,		/* u32: memory regions */
	SWNIC_A_DOMAIN_PINNED,		/* u64: bytes pinned */
	SWNIC_A_DOMAIN_EPS,		/* u32: endpoints */
	SWNIC_A_DOMAIN_CQS,		/* u32: completion queues */
	SWNIC_A_STATS,			/* nest: SWNIC_A_STATS_ENTRY, repeated */
	SWNIC_A_SVC_ID,			/* u32: service id, unique per device */
	SWNIC_A_SVC_AUTH_KEY,		/* u32: the service's auth key, != 0 */
	SWNIC_A_SVC_FLAGS,		/* u32: SWNIC_SVC_F_* */
	SWNIC_A_SVC_MEMBERS,		/* nest: enum swnic_nl_member_attr */
	/* u32: domains using the key at once (an endpoint holding it as
	 * its own, SWNIC_IOCTL_EP_AUTH_KEY, counts as one)
	 */
	SWNIC_A_SVC_MAX_DOMAINS,
	SWNIC_A_SVC_DOMAINS,		/* u32: domains using the key now (out) */
	SWNIC_A_LIMIT,			/* u32: SWNIC_LIMIT_* (LIMIT_HIT) */
	SWNIC_A_MR_HANDLE,		/* u32: MR handle, unique per domain */
	SWNIC_A_MR_KEY,			/* u64: MR key */
	SWNIC_A_MR_ADDR,		/* u64: start address */
	SWNIC_A_MR_LENGTH,		/* u64: length in bytes */
	SWNIC_A_MR_ACCESS,		/* u32: SWNIC_MR_ACCESS_* (swnic.h) */
	SWNIC_A_MR_FLAGS,		/* u32: SWNIC_MR_REG_*, ODP = the mode */
	SWNIC_A_MR_STATE,		/* u32: SWNIC_MR_STATE_* (swnic.h) */
	SWNIC_A_MR_AUTH_KEY,		/* u32: auth key it is reachable under */
	SWNIC_A_MR_PINNED_PAGES,	/* u64: pages it pins now */
	SWNIC_A_MR_REVOCATIONS,		/* u64: times it was revoked */
	SWNIC_A_MR_INVALIDATIONS,	/* u64: ODP invalidations */
	SWNIC_A_DEV_MAX_DOMAINS_PER_USER, /* u32: open domains of one uid */
	/* binary: a peer's IPv4 (4 bytes) or IPv6 (16) address, network order */
	SWNIC_A_PEER_ADDR,
	SWNIC_A_PEER_PORT,		/* u32: its UDP port */
	SWNIC_A_PEER_LOCAL_INC,		/* u32: our incarnation towards it */
	SWNIC_A_PEER_REMOTE_INC,	/* u32: its incarnation, 0 = unknown */
	SWNIC_A_PEER_SRTT,		/* u32: smoothed RTT (us), 0 = no sample */
	SWNIC_A_PEER_RTTVAR,		/* u32: RTT variation (us) */
	SWNIC_A_PEER_RTO,		/* u32: retransmit timeout (us) */
	SWNIC_A_PEER_INFLIGHT,		/* u32: packets sent, not acknowledged */
	SWNIC_A_PEER_MSGS,		/* u32: our requests not answered yet */
	SWNIC_A_PEER_SILENT_MS,		/* u32: ms since its last valid packet */
	SWNIC_A_PEER_RETX,		/* u64: packets retransmitted to it */
	SWNIC_A_PEER_TX_BYTES,		/* u64: bytes of reliable packets sent */
	SWNIC_A_PEER_RX_BYTES,		/* u64: bytes of reliable packets taken */
	SWNIC_A_PEER_HELD,		/* u32: its sends we hold for a receive */
	SWNIC_A_PEER_HELD_WAITING,	/* u32: our sends it holds */
	SWNIC_A_PEER_ANSWERS,		/* u32: our answers to it not sent yet */
	/*
	 * binary: our address in the context (as PEER_ADDR), where it is
	 * known yet: a context is a pair of addresses
	 */
	SWNIC_A_PEER_LOCAL_ADDR,
	__SWNIC_A_MAX,
	SWNIC_A_MAX = __SWNIC_A_MAX - 1
};

/* Inside SWNIC_A_STATS: one nest per counter. */
enum swnic_nl_stats_attr {
	SWNIC_A_STATS_UNSPEC,
	SWNIC_A_STATS_ENTRY,		/* nest: enum swnic_nl_stat_attr */
	__SWNIC_A_STATS_MAX,
	SWNIC_A_STATS_MAX = __SWNIC_A_STATS_MAX - 1
};

/* Inside SWNIC_A_STATS_ENTRY: a named counter. */
enum swnic_nl_stat_attr {
	SWNIC_A_STAT_UNSPEC,
	SWNIC_A_STAT_PAD,		/* padding for u64 attributes */
	SWNIC_A_STAT_NAME,		/* string: counter name */
	SWNIC_A_STAT_VALUE,		/* u64: counter value */
	__SWNIC_A_STAT_MAX,
	SWNIC_A_STAT_MAX = __SWNIC_A_STAT_MAX - 1
};

/* Inside SWNIC_A_SVC_MEMBERS: any number of uids and gids. */
enum swnic_nl_member_attr {
	SWNIC_A_MEMBER_UNSPEC,
	SWNIC_A_MEMBER_UID,		/* u32: a member uid */
	SWNIC_A_MEMBER_GID,		/* u32: a member gid */
	__SWNIC_A_MEMBER_MAX,
	SWNIC_A_MEMBER_MAX = __SWNIC_A_MEMBER_MAX - 1
};

#endif /* _UAPI_LINUX_SWNIC_NETLINK_H */
