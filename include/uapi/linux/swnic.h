/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * swnic: a software RDMA NIC for libfabric - character device ABI.
 *
 * Each swnic device has a character device /dev/swnicN. Every open file of
 * it is a *domain*: the context that owns memory registrations, queues and
 * endpoints. Closing the file (or the process dying) releases all of it.
 *
 * Ioctl contract (all commands, iommufd style):
 *
 *  - The argument is a pointer to a struct whose first member is
 *    "__u32 size", set by user space to sizeof() the struct it was built
 *    with. Structs only ever grow at the end.
 *  - size < the first released size of that struct        -> EINVAL
 *  - size > the kernel's size and the extra bytes are not
 *    all zero                                              -> E2BIG
 *  - a non-zero __reserved member                          -> EINVAL
 *  - an unknown bit in a flags member                      -> EOPNOTSUPP
 *  - an unknown command number                             -> ENOTTY
 *  - output members are written back for min(size, kernel size) bytes.
 *  - a struct that cannot be read, or written back    -> EFAULT,
 *    before the command does anything (but the doorbell and CQ help,
 *    whose answers are counts of what they did). A struct whose mapping
 *    the caller's other threads change during the call may still be
 *    EFAULT after the command took effect: the caller's own race.
 *
 * Capability discovery is by the features bitmask of SWNIC_IOCTL_QUERY_DEVICE
 * (SWNIC_FEAT_*), never by version numbers.
 */
#ifndef _UAPI_LINUX_SWNIC_H
#define _UAPI_LINUX_SWNIC_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define SWNIC_NAME_MAX		16	/* device name incl. NUL, as IFNAMSIZ */
#define SWNIC_DEV_PREFIX	"swnic"	/* char devices are /dev/<device name> */

#define SWNIC_TYPE		0xE5	/* ioctl type ('magic') */
#define SWNIC_CMD_BASE		0x80

enum {
	SWNIC_CMD_QUERY_DEVICE = SWNIC_CMD_BASE,
	SWNIC_CMD_MR_REG,
	SWNIC_CMD_MR_DEREG,
	SWNIC_CMD_MR_QUERY,
	SWNIC_CMD_MR_REFRESH,
	SWNIC_CMD_MR_ACCESS,
	SWNIC_CMD_INVAL_QUERY,
	SWNIC_CMD_CQ_CREATE,		/* swnic_queue.h */
	SWNIC_CMD_EP_CREATE,		/* swnic_queue.h */
	SWNIC_CMD_EP_DOORBELL,		/* swnic_queue.h, on an endpoint fd */
	SWNIC_CMD_AUTH_KEY,		/* the domain's auth key (service) */
	SWNIC_CMD_EP_CANCEL,		/* swnic_queue.h, on an endpoint fd */
	SWNIC_CMD_EP_PEEK,		/* swnic_queue.h, on an endpoint fd */
	SWNIC_CMD_CNTR_CREATE,		/* swnic_queue.h */
	SWNIC_CMD_EP_AUTH_KEY,		/* swnic_queue.h, on an endpoint fd */
	SWNIC_CMD_MR_BIND_CNTR,		/* an MR's remote-access counter */
	SWNIC_CMD_CNTR_UPDATE,		/* swnic_queue.h (SWNIC_FEAT_TRIGGER) */
	SWNIC_CMD_TRIG_CNTR,		/* swnic_queue.h (SWNIC_FEAT_TRIGGER) */
	SWNIC_CMD_TRIG_CANCEL,		/* swnic_queue.h (SWNIC_FEAT_TRIGGER) */
	SWNIC_CMD_AV_OPEN,		/* a shared AV (SWNIC_FEAT_SHARED_AV) */
	SWNIC_CMD_AV_WRITE,		/* on a shared AV's fd */
	SWNIC_CMD_PORT_BLOCK,		/* SWNIC_FEAT_PORT_BLOCK */
	SWNIC_CMD_ADDR6,		/* an IPv6 peer's name (WIRE_IPV6) */
	SWNIC_CMD_TRIG_RECV,		/* swnic_queue.h (SWNIC_FEAT_TRIG_RECV) */
	SWNIC_CMD_CQ_HELP,		/* swnic_queue.h, on a CQ fd (COPY_HELP) */
	SWNIC_CMD_EP_PEER,		/* swnic_queue.h, on an endpoint fd */
	/* new commands go here, never in between */
	SWNIC_CMD_LAST,
};

/* Features a device offers (struct swnic_query_device.features). */
#define SWNIC_FEAT_QUERY	(1ULL << 0)	/* QUERY_DEVICE (always set) */
#define SWNIC_FEAT_MR		(1ULL << 1)	/* MR_REG/DEREG/QUERY/REFRESH */
#define SWNIC_FEAT_MR_ODP	(1ULL << 2)	/* SWNIC_MR_REG_ODP */
#define SWNIC_FEAT_INVAL_PAGE	(1ULL << 3)	/* INVAL_QUERY + its mmap */
#define SWNIC_FEAT_MR_ACCESS	(1ULL << 4)	/* MR_ACCESS test hook */
#define SWNIC_FEAT_AUTH_KEY	(1ULL << 5)	/* AUTH_KEY (services) */
/* EP_AUTH_KEY and struct swnic_sqe.key_index: several keys per endpoint */
#define SWNIC_FEAT_EP_AUTH_KEYS	(1ULL << 6)
/* Receives learn and select the sender's auth key: struct swnic_cqe and
 * struct swnic_rqe key_index, SWNIC_RQE_KEY
 */
#define SWNIC_FEAT_RECV_KEY	(1ULL << 7)
/* The wire: a device bound to a netdev reaches other hosts (UDP). */
#define SWNIC_FEAT_WIRE		(1ULL << 8)
/* SWNIC_MR_REG_PEERS: MRs limited to some peers (struct swnic_mr_peer) */
#define SWNIC_FEAT_MR_PEERS	(1ULL << 9)
/* Atomics: SWNIC_OP_ATOMIC, _FETCH_ATOMIC, _COMPARE_ATOMIC (swnic_queue.h) */
#define SWNIC_FEAT_ATOMIC	(1ULL << 10)
/* SWNIC_SQE_FENCE: fenced work requests (swnic_queue.h) */
#define SWNIC_FEAT_FENCE	(1ULL << 11)
/* SWNIC_IOCTL_MR_BIND_CNTR: counters of peers' accesses to one MR */
#define SWNIC_FEAT_MR_CNTR	(1ULL << 12)
/*
 * Triggered work (swnic_queue.h): SWNIC_SQE_TRIGGER, CNTR_UPDATE,
 * TRIG_CNTR and TRIG_CANCEL; the kernel starts work when a counter
 * reaches a threshold.
 */
#define SWNIC_FEAT_TRIGGER	(1ULL << 13)
/* SWNIC_IOCTL_AV_OPEN: named address vectors held by the kernel */
#define SWNIC_FEAT_SHARED_AV	(1ULL << 14)
/*
 * SWNIC_MR_REG_IOV: an MR that is the concatenation of other MRs of the
 * domain (fi_mr_regv with several iovs); mr_iov_limit is its limit.
 */
#define SWNIC_FEAT_MR_IOV	(1ULL << 15)
/* struct swnic_ep_create.dscp: the endpoint's wire packets' DSCP */
#define SWNIC_FEAT_DSCP		(1ULL << 16)
/*
 * PORT_BLOCK, and struct swnic_ep_create.group: a run of consecutive
 * ports reserved for a domain, whose endpoints share one address (the
 * provider's scalable endpoints: receive context i at the block's first
 * port + i, transmit contexts sending from the first port).
 */
#define SWNIC_FEAT_PORT_BLOCK	(1ULL << 17)
/* The wire over IPv6: SWNIC_IOCTL_ADDR6 names IPv6 peers (struct swnic_addr6) */
#define SWNIC_FEAT_WIRE_IPV6	(1ULL << 21)
/*
 * Shared receive contexts: SWNIC_EP_F_SRX and SWNIC_EP_F_SRX_JOIN with
 * struct swnic_ep_create.srx_fd (swnic_queue.h)
 */
#define SWNIC_FEAT_SRX		(1ULL << 22)
/*
 * Triggered receives (SWNIC_IOCTL_TRIG_RECV, swnic_queue.h); triggered
 * work an RM_ENABLED target refuses (EAGAIN) is retried for
 * SWNIC_TRIG_RETRY_MS; SWNIC_PORT_BLOCK_FIXED, a block at a chosen port.
 */
#define SWNIC_FEAT_TRIG_RECV	(1ULL << 23)
/* Busy polling of the wire: SWNIC_DB_POLL (struct swnic_ep_doorbell) */
#define SWNIC_FEAT_WIRE_POLL	(1ULL << 24)
/* Receives into registered memory: SWNIC_RQE_MR (swnic_queue.h) */
#define SWNIC_FEAT_RECV_MR	(1ULL << 25)
/* A receiver's poll shares a large copy: SWNIC_IOCTL_CQ_HELP (swnic_queue.h) */
#define SWNIC_FEAT_COPY_HELP	(1ULL << 26)
/* A doorbell for the SQ may leave a lazy RQ to senders: SWNIC_DB_SQ */
#define SWNIC_FEAT_DB_SQ	(1ULL << 27)
/* A counter's fd polls: read() and poll() (struct swnic_cntr_words) */
#define SWNIC_FEAT_CNTR_POLL	(1ULL << 28)
/* An endpoint takes sends from one peer only: SWNIC_IOCTL_EP_PEER */
#define SWNIC_FEAT_EP_PEER	(1ULL << 29)
/* SWNIC_IOCTL_TRIG_CANCEL takes SWNIC_TRIG_CANCEL_SUM (swnic_queue.h) */
#define SWNIC_FEAT_TRIG_CANCEL_SUM (1ULL << 30)
/* SWNIC_IOCTL_EP_CANCEL takes SWNIC_CANCEL_TRIG (swnic_queue.h) */
#define SWNIC_FEAT_CANCEL_TRIG	(1ULL << 31)

/**
 * struct swnic_query_device - SWNIC_IOCTL_QUERY_DEVICE
 *
 * Reports the device behind this file, its limits and the domain the file
 * is. Limits are per domain unless named otherwise; they are what the
 * provider reports as fi_domain_attr values.
 */
struct swnic_query_device {
	__u32 size;			/* in: sizeof(struct swnic_query_device) */
	__u32 flags;			/* in: must be 0 */
	__aligned_u64 features;		/* out: SWNIC_FEAT_* */
	__u8 name[SWNIC_NAME_MAX];	/* out: device name, NUL terminated */
	__u32 dev_index;		/* out: device index (netlink DEV_INDEX) */
	__u32 domain_id;		/* out: id of the domain this file is */
	__u32 ifindex;			/* out: bound netdev, 0 if local only */
	__u32 page_size;		/* out: kernel PAGE_SIZE */
	__u32 max_mr;			/* out: memory regions per domain */
	__u32 max_cq;			/* out: completion queues per domain */
	__u32 max_eq;			/* out: event queues per domain */
	__u32 max_ep;			/* out: endpoints per domain */
	__u32 max_cntr;			/* out: counters per domain */
	__u32 max_av;			/* out: address vectors per domain */
	__u32 max_cq_entries;		/* out: entries of one CQ ring */
	__u32 max_sq_entries;		/* out: entries of one send queue */
	__u32 max_rq_entries;		/* out: entries of one receive queue */
	__u32 max_iov;			/* out: iov entries per message */
	__u32 max_rma_iov;		/* out: remote iov entries per RMA */
	__u32 max_inject;		/* out: inject (inline) bytes */
	__u32 max_err_data;		/* out: bytes of provider error data */
	__u32 mr_key_size;		/* out: bytes of an MR key */
	__u32 cq_data_size;		/* out: bytes of remote CQ data */
	__u32 mr_iov_limit;		/* out: iov entries per registration */
	__u32 max_auth_key_size;	/* out: bytes of an auth key */
	__u32 __reserved;		/* must be 0 */
	__aligned_u64 max_msg_size;	/* out: bytes of one message */
	__aligned_u64 max_mr_size;	/* out: bytes of one registration */
	__aligned_u64 max_pinned;	/* out: pinned bytes per device, 0 = none */
};

#define SWNIC_IOCTL_QUERY_DEVICE	_IO(SWNIC_TYPE, SWNIC_CMD_QUERY_DEVICE)

/*
 * mmap offsets of a domain's file. Every mappable object is reported by its
 * query ioctl with an mmap_offset (and size); pass both to mmap() unchanged.
 * The kernel encodes the object in the offset:
 *
 *   offset = type << SWNIC_MMAP_TYPE_SHIFT | id << SWNIC_MMAP_ID_SHIFT
 *
 * (bits 39..32: SWNIC_MMAP_* type, bits 31..16: object id, low bits 0), so
 * the offset fits 32-bit mmap2 and is page aligned for pages up to 64 KiB.
 * An offset naming no object of this domain fails with EINVAL; a writable
 * mapping of a read-only object with EACCES; a mapping from another process
 * than the one that opened the file with EACCES. No swnic mapping - of this
 * file or of any object's fd - is executable (PROT_EXEC: EPERM; mprotect()
 * cannot add it); a ring maps MAP_SHARED only (else EINVAL), a read-only
 * object MAP_SHARED or MAP_PRIVATE.
 */
#define SWNIC_MMAP_TYPE_SHIFT	32
#define SWNIC_MMAP_TYPE_MASK	0xffULL
#define SWNIC_MMAP_ID_SHIFT	16
#define SWNIC_MMAP_ID_MASK	0xffffULL
#define SWNIC_MMAP_OFFSET(type, id)					\
	(((__u64)(type) << SWNIC_MMAP_TYPE_SHIFT) |			\
	 ((__u64)(id) << SWNIC_MMAP_ID_SHIFT))

/* Object types of a domain's mmap offsets; 0 is never valid. */
#define SWNIC_MMAP_INVAL	1	/* the invalidation page (read-only) */

/* ---- memory registration ------------------------------------------------
 *
 * Documentation/mr.rst describes the model. In short: an MR is a range of
 * the registering process's memory, named by a domain-local handle (for the
 * control ioctls) and a 64-bit key (for access by the data path and peers).
 * Every MR ioctl must come from the process that opened the file (not a
 * forked child): others get EACCES.
 *
 * Errors of SWNIC_IOCTL_MR_REG, beyond the generic contract:
 *   EINVAL   length 0, range overflows or is not user memory, access 0,
 *            length above max_mr_size, a user key with USER_KEY unset
 *   EOPNOTSUPP unknown flag or access bit
 *   EFAULT   part of the range is not mapped (or not writable when the
 *            access needs writes)
 *   EPERM    pinning would exceed RLIMIT_MEMLOCK (pinned_vm) and the
 *            caller lacks CAP_IPC_LOCK
 *   EDQUOT   pinning would exceed the device's max_pinned
 *   ENOSPC   the domain has max_mr MRs
 *   EEXIST   USER_KEY and the key is in use under the same auth key
 *   EKEYREJECTED an auth key other than the domain's, without CAP_NET_ADMIN
 *   EINVAL   SWNIC_MR_REG_PEERS with @npeers 0 or above SWNIC_MR_PEERS_MAX,
 *            or @npeers / @peers not all zero without it, or a non-zero
 *            __reserved of a peer
 *   EOPNOTSUPP an unknown SWNIC_MR_PEER_* flag
 *   EAGAIN   the range kept changing while it was being pinned
 *   ENOMEM   kernel memory
 */

/* Access rights of an MR (libfabric's FI_* access flags, one to one). */
#define SWNIC_MR_ACCESS_SEND		(1U << 0)	/* FI_SEND: send source */
#define SWNIC_MR_ACCESS_RECV		(1U << 1)	/* FI_RECV: recv target */
#define SWNIC_MR_ACCESS_READ		(1U << 2)	/* FI_READ: RMA read dest */
#define SWNIC_MR_ACCESS_WRITE		(1U << 3)	/* FI_WRITE: RMA write src */
#define SWNIC_MR_ACCESS_REMOTE_READ	(1U << 4)	/* FI_REMOTE_READ */
#define SWNIC_MR_ACCESS_REMOTE_WRITE	(1U << 5)	/* FI_REMOTE_WRITE */
#define SWNIC_MR_ACCESS_ALL		0x3fU

/* Registration flags (struct swnic_mr_reg.flags, swnic_mr_query.reg_flags). */
#define SWNIC_MR_REG_ODP	(1U << 0)	/* on demand: pin nothing */
#define SWNIC_MR_REG_USER_KEY	(1U << 1)	/* use @requested_key */
/* Peers address the MR by virtual address, not by offset (FI_MR_VIRT_ADDR). */
#define SWNIC_MR_REG_VIRT_ADDR	(1U << 2)
/*
 * Only the peers listed in @peers may access the MR remotely (libfabric's
 * FI_DIRECTED_RECV with FI_AV_AUTH_KEY: an MR limited to an address or an
 * auth key). The owning domain's own (local) accesses are not limited.
 */
#define SWNIC_MR_REG_PEERS	(1U << 3)
/*
 * SWNIC_FEAT_MR_IOV: the MR is the concatenation, in order, of the
 * @nsegs MRs (segments) whose handles are at @segs, registered by this
 * domain before (neither REG_IOV MRs themselves nor being deregistered).
 * The kernel sets its address to the first segment's and its length to
 * their sum: a peer addresses byte i of the concatenation at offset i, or
 * with SWNIC_MR_REG_VIRT_ADDR at the first segment's address + i; each
 * piece of an access goes to its segment's pages, checked against that
 * segment's bounds and state. The segments keep their own pins, notifier
 * and key (their own rights: register them with local rights only);
 * the MR holds them until it is deregistered, and an access to a segment
 * that was revoked or deregistered fails as for that segment
 * (EKEYREVOKED, ENOKEY). @addr and @length must be 0, REG_ODP is not
 * allowed (the segments say how they are held); with any right the
 * kernel writes pages for (SWNIC_MR_ACCESS_RECV, READ or REMOTE_WRITE)
 * every segment must have pinned its pages writable (one of those rights
 * itself): else EINVAL, as pages pinned read-only may be the page cache
 * of a file the caller may only read.
 * EINVAL: @nsegs 0 or above SWNIC_MR_IOV_MAX, a handle that is no
 * segment as above (also ENOENT-free: a wrong handle is EINVAL), a sum
 * above max_mr_size; @nsegs or @segs not 0 without REG_IOV.
 */
#define SWNIC_MR_REG_IOV	(1U << 4)

/* Segments of a SWNIC_MR_REG_IOV MR (the device's mr_iov_limit). */
#define SWNIC_MR_IOV_MAX	8

/* Entries of struct swnic_mr_reg.peers. */
#define SWNIC_MR_PEERS_MAX	4

/* struct swnic_mr_peer flags */
#define SWNIC_MR_PEER_ADDR	(1U << 0)	/* match @addr and @port too */

/**
 * struct swnic_mr_peer - who may access an MR registered with
 * SWNIC_MR_REG_PEERS (16 bytes)
 *
 * A peer's access matches an entry when it comes with the entry's auth key
 * - the key the peer's operation named (its domain's or one its endpoint
 * holds), not the key the MR is found under - and, with
 * SWNIC_MR_PEER_ADDR, from the endpoint at @addr:@port (the address and
 * port its completions report as the source; @addr 0: any address). An
 * access that matches no entry fails with EACCES, as does one whose
 * source the kernel does not know (SWNIC_IOCTL_MR_ACCESS: no endpoint).
 */
struct swnic_mr_peer {
	__u32 auth_key;			/* its auth key, 0 = the MR's */
	__u32 flags;			/* SWNIC_MR_PEER_* */
	__u32 addr;			/* PEER_ADDR: IPv4, network order */
	__u16 port;			/* PEER_ADDR: its endpoint's port */
	__u16 __reserved;		/* must be 0 */
};

/* MR states (struct swnic_mr_query.state). */
#define SWNIC_MR_STATE_VALID	1	/* accessible through its key */
#define SWNIC_MR_STATE_REVOKED	2	/* pages changed: key refused */

/**
 * struct swnic_mr_reg - SWNIC_IOCTL_MR_REG: register a memory region
 *
 * Pinned (default): the pages are pinned now and charged to the process's
 * pinned_vm. SWNIC_MR_REG_ODP: nothing is pinned; pages are faulted in at
 * access time. Both are watched by an MMU notifier (see Documentation).
 */
struct swnic_mr_reg {
	__u32 size;			/* in: sizeof(struct swnic_mr_reg) */
	__u32 flags;			/* in: SWNIC_MR_REG_* */
	__aligned_u64 addr;		/* in: start address in this process */
	__aligned_u64 length;		/* in: bytes, > 0 */
	__aligned_u64 requested_key;	/* in: key if SWNIC_MR_REG_USER_KEY */
	__u32 access;			/* in: SWNIC_MR_ACCESS_*, not 0 */
	__u32 auth_key;			/* in: auth key, 0 = the domain's */
	__aligned_u64 key;		/* out: the MR's key */
	__u32 handle;			/* out: domain-local handle of the MR */
	__u32 __reserved;		/* must be 0 */
	/* Since SWNIC_FEAT_MR_PEERS; older callers' size ends above. */
	__u32 npeers;			/* in: REG_PEERS: entries of @peers */
	__u32 __reserved2;		/* must be 0 */
	struct swnic_mr_peer peers[SWNIC_MR_PEERS_MAX];	/* in: REG_PEERS */
	/* Since SWNIC_FEAT_MR_IOV; older callers' size ends above. */
	__u32 nsegs;			/* in: REG_IOV: handles at @segs */
	__u32 __reserved3;		/* must be 0 */
	__aligned_u64 segs;		/* in: REG_IOV: user pointer, __u32[] */
};

/**
 * struct swnic_mr_dereg - SWNIC_IOCTL_MR_DEREG: deregister an MR
 *
 * The key is refused from return on; an access in flight keeps the pages
 * until it ends. ENOENT: no MR with that handle.
 */
struct swnic_mr_dereg {
	__u32 size;			/* in: sizeof(struct swnic_mr_dereg) */
	__u32 flags;			/* in: must be 0 */
	__u32 handle;			/* in: from swnic_mr_reg.handle */
	__u32 __reserved;		/* must be 0 */
};

/**
 * struct swnic_mr_counters - MR statistics of a domain or a device
 *
 * Exact at the time of the query. Gauges (mrs, pinned_bytes) return to 0
 * when every MR is gone; the rest only grow.
 */
struct swnic_mr_counters {
	__aligned_u64 mrs;		/* MRs registered now */
	__aligned_u64 pinned_bytes;	/* bytes pinned now */
	__aligned_u64 registrations;	/* successful MR_REG calls */
	__aligned_u64 revocations;	/* pinned MRs revoked by the notifier */
	__aligned_u64 invalidations;	/* ODP MRs whose pages were dropped */
	__aligned_u64 refaults;		/* ODP faults after an invalidation */
	__aligned_u64 memlock_denied;	/* MR_REG refused over RLIMIT_MEMLOCK */
	__aligned_u64 access_denied;	/* accesses refused by a check */
};

/* SWNIC_IOCTL_MR_QUERY flags. */
#define SWNIC_MR_QUERY_COUNTERS	(1U << 0)	/* counters only, no MR */

/**
 * struct swnic_mr_query - SWNIC_IOCTL_MR_QUERY: an MR and the counters
 *
 * Without SWNIC_MR_QUERY_COUNTERS, @handle names an MR (ENOENT if none) and
 * the MR fields are filled; the counters are always filled.
 */
struct swnic_mr_query {
	__u32 size;			/* in: sizeof(struct swnic_mr_query) */
	__u32 flags;			/* in: SWNIC_MR_QUERY_* */
	__u32 handle;			/* in: the MR */
	__u32 state;			/* out: SWNIC_MR_STATE_* */
	__aligned_u64 key;		/* out: its key */
	__aligned_u64 addr;		/* out: its start address */
	__aligned_u64 length;		/* out: its length in bytes */
	__u32 access;			/* out: SWNIC_MR_ACCESS_* */
	__u32 reg_flags;		/* out: SWNIC_MR_REG_* */
	__u32 auth_key;			/* out: its auth key */
	__u32 extents;			/* out: contiguous runs of its pins */
	__aligned_u64 pinned_bytes;	/* out: bytes it pins now */
	__aligned_u64 revocations;	/* out: times it was revoked */
	__aligned_u64 invalidations;	/* out: ODP invalidations */
	__aligned_u64 refaults;		/* out: ODP faults after invalidation */
	struct swnic_mr_counters domain;	/* out: this domain's */
	struct swnic_mr_counters device;	/* out: the device's, all domains */
};

/**
 * struct swnic_mr_refresh - SWNIC_IOCTL_MR_REFRESH: revalidate an MR
 *
 * Pinned: pins the pages now mapped at the MR's range again and makes a
 * revoked MR valid with its key unchanged (fi_mr_refresh). ODP: faults the
 * range in. EFAULT if the range is not (all) mapped now: the MR stays as
 * it was. ENOENT: no MR with that handle.
 */
struct swnic_mr_refresh {
	__u32 size;			/* in: sizeof(struct swnic_mr_refresh) */
	__u32 flags;			/* in: must be 0 */
	__u32 handle;			/* in: the MR */
	__u32 state;			/* out: SWNIC_MR_STATE_* after refresh */
};

/* SWNIC_IOCTL_MR_ACCESS flags. */
#define SWNIC_MR_ACCESS_F_WRITE	(1U << 0)	/* @buf into the MR, not out */
#define SWNIC_MR_ACCESS_F_LOCAL	(1U << 1)	/* the owner's: local right, VA */

/**
 * struct swnic_mr_access - SWNIC_IOCTL_MR_ACCESS: a kernel-side access
 *
 * Test hook for the kernel access API: copies @len bytes between @buf (in
 * the caller) and the MR named by @key in domain @domain_id, through the
 * same checks the data path makes. Without SWNIC_MR_ACCESS_F_LOCAL it is a
 * peer's access (auth key, remote access bits, addressing per the MR's
 * SWNIC_MR_REG_VIRT_ADDR); with it, @domain_id must be this domain.
 * Errors: ENOENT no such domain, ENOKEY unknown key or another auth key,
 * EKEYREVOKED a revoked MR, EACCES access bits, ERANGE out of the MR's
 * bounds, EINVAL @len 0 or above SWNIC_MR_ACCESS_MAX_LEN, EFAULT @buf (or
 * an ODP page that cannot be faulted in).
 */
struct swnic_mr_access {
	__u32 size;			/* in: sizeof(struct swnic_mr_access) */
	__u32 flags;			/* in: SWNIC_MR_ACCESS_F_* */
	__aligned_u64 key;		/* in: the key */
	__aligned_u64 addr;		/* in: VA or offset into the MR */
	__aligned_u64 len;		/* in: bytes, <= 1 MiB */
	__aligned_u64 buf;		/* in: user buffer of @len bytes */
	__u32 access;			/* in: one SWNIC_MR_ACCESS_* right */
	/* in: 0 or this domain's own auth key, which is the accessor's
	 * (the kernel's choice, never the caller's); another: EKEYREJECTED
	 */
	__u32 auth_key;
	__u32 domain_id;		/* in: target domain, 0 = this one */
	__u32 __reserved;		/* must be 0 */
};

#define SWNIC_MR_ACCESS_MAX_LEN	(1U << 20)

/* ---- the invalidation page ----------------------------------------------
 *
 * One page per domain, mapped read-only (SWNIC_IOCTL_INVAL_QUERY gives its
 * offset). The kernel appends a record every time it revokes a pinned MR
 * and then publishes the record by storing @gen (release). A reader keeps
 * the last generation it handled, @seen:
 *
 *   g = load_acquire(&page->gen);         nothing new if g == seen
 *   if (g - seen >= entries) -> overflow: treat every MR as invalidated
 *   for n in seen+1 .. g: copy ring[(n - 1) & (entries - 1)] to a local;
 *   then rmb; g2 = load(&page->gen);
 *   if (g2 - seen >= entries) a copied slot may have been reused while it
 *   was copied -> overflow; else the copies (rec.gen == n) are valid;
 *   seen = g.
 *
 * The kernel never waits for readers, so overflow is detected by each
 * reader from the counters, never lost silently.
 */

/**
 * struct swnic_inval_rec - one revocation (32 bytes)
 */
struct swnic_inval_rec {
	__aligned_u64 gen;		/* generation this record published */
	__aligned_u64 addr;		/* the MR's start address */
	__aligned_u64 length;		/* the MR's length */
	__aligned_u64 key;		/* the MR's key */
};

/**
 * struct swnic_inval_page - layout of the start of the invalidation page
 */
struct swnic_inval_page {
	__aligned_u64 gen;		/* records ever published (release) */
	__u32 entries;			/* ring entries, a power of 2 */
	__u32 ring_offset;		/* byte offset of ring entry 0 */
	__aligned_u64 __pad[6];		/* rest of the cache line */
};

/**
 * struct swnic_inval_query - SWNIC_IOCTL_INVAL_QUERY: the invalidation page
 */
struct swnic_inval_query {
	__u32 size;			/* in: sizeof(struct swnic_inval_query) */
	__u32 flags;			/* in: must be 0 */
	__aligned_u64 mmap_offset;	/* out: mmap offset on this file */
	__aligned_u64 mmap_size;	/* out: bytes to map (read-only) */
	__aligned_u64 gen;		/* out: current generation */
	__u32 ring_offset;		/* out: offset of ring entry 0 */
	__u32 entries;			/* out: ring entries, a power of 2 */
	__u32 entry_size;		/* out: sizeof(struct swnic_inval_rec) */
	__u32 __reserved;		/* must be 0 */
};

/* struct swnic_mr_bind_cntr.flags: which accesses to count */
#define SWNIC_MR_BIND_REMOTE_READ	(1U << 0)
#define SWNIC_MR_BIND_REMOTE_WRITE	(1U << 1)

/**
 * struct swnic_mr_bind_cntr - SWNIC_IOCTL_MR_BIND_CNTR (SWNIC_FEAT_MR_CNTR)
 *
 * Counts every peer access to the MR @handle that the kernel admits (the
 * key, right and range checked) and performs, once per operation, in the
 * success word of counter @cntr_id
 * (SWNIC_IOCTL_CNTR_CREATE) of the same domain: reads if @flags has
 * SWNIC_MR_BIND_REMOTE_READ, writes if SWNIC_MR_BIND_REMOTE_WRITE
 * (libfabric's FI_MR_RMA_EVENT); an atomic counts as a write, or as a
 * read if it fetches. An MR has at most one counter, bound once; it is
 * held until the MR is gone.
 *
 * Errors, beyond the generic contract:
 *   ENOENT       no MR @handle, or no counter @cntr_id
 *   EBUSY        the MR already has a counter
 *   EOPNOTSUPP   unknown @flags
 *   EINVAL       @flags 0, @__reserved not 0
 *   EACCES       the caller is not the process that opened the file
 */
struct swnic_mr_bind_cntr {
	__u32 size;			/* in: sizeof(struct swnic_mr_bind_cntr) */
	__u32 flags;			/* in: SWNIC_MR_BIND_* */
	__u32 handle;			/* in: the MR (swnic_mr_reg.handle) */
	__u32 cntr_id;			/* in: the counter */
	__aligned_u64 __reserved;	/* must be 0 */
};

#define SWNIC_IOCTL_MR_REG		_IO(SWNIC_TYPE, SWNIC_CMD_MR_REG)
#define SWNIC_IOCTL_MR_DEREG		_IO(SWNIC_TYPE, SWNIC_CMD_MR_DEREG)
#define SWNIC_IOCTL_MR_QUERY		_IO(SWNIC_TYPE, SWNIC_CMD_MR_QUERY)
#define SWNIC_IOCTL_MR_REFRESH		_IO(SWNIC_TYPE, SWNIC_CMD_MR_REFRESH)
#define SWNIC_IOCTL_MR_ACCESS		_IO(SWNIC_TYPE, SWNIC_CMD_MR_ACCESS)
#define SWNIC_IOCTL_INVAL_QUERY		_IO(SWNIC_TYPE, SWNIC_CMD_INVAL_QUERY)
#define SWNIC_IOCTL_MR_BIND_CNTR	_IO(SWNIC_TYPE, SWNIC_CMD_MR_BIND_CNTR)

/* ---- auth keys -----------------------------------------------------------
 *
 * A domain uses one auth key, the key of one of its device's services
 * (netlink SVC_*, `swnic service`): at open, the default key
 * (SWNIC_AUTH_KEY_DEFAULT in swnic_netlink.h) if the default service admits
 * the opening process, else none (0) until the domain takes one with
 * SWNIC_IOCTL_AUTH_KEY.
 */

/**
 * struct swnic_auth_key - SWNIC_IOCTL_AUTH_KEY: report or take an auth key
 *
 * With a non-zero @auth_key, the domain first switches to the service of
 * that key if the calling process may use it: the service is open, or
 * lists the process's euid, egid or a supplementary gid, or the process
 * has CAP_NET_ADMIN over the device's network namespace. Then (and with
 * @auth_key 0, only) it reports the domain's key in @auth_key (0 if it has
 * none) and its service in @svc_id. Changing a service's members later
 * does not affect domains already using it.
 *
 * Errors, beyond the generic contract:
 *   ENOKEY       no service with this auth key on the device
 *   EKEYREVOKED  the service is disabled
 *   EPERM        the process may not use the service
 *   EDQUOT       the service is used by its max_domains domains
 *   EBUSY        the domain already has MRs, CQs or endpoints
 *   EACCES       the caller is not the process that opened the file
 */
struct swnic_auth_key {
	__u32 size;			/* in: sizeof(struct swnic_auth_key) */
	__u32 flags;			/* in: must be 0 */
	__u32 auth_key;			/* in: key to take, 0 = none; out: own */
	__u32 svc_id;			/* out: its service's id, 0 = no key */
};

#define SWNIC_IOCTL_AUTH_KEY		_IO(SWNIC_TYPE, SWNIC_CMD_AUTH_KEY)

/* ---- shared address vectors (SWNIC_FEAT_SHARED_AV) ------------------------
 *
 * A shared AV is a table of @count 64-bit entries held by the kernel under
 * a name, so that several processes see one fi_addr_t -> address mapping
 * (libfabric's named AVs, fi_av_attr.name). Names are private to the
 * device, the creating user (euid) and the creating domain's auth key: a
 * process of another user, or of a domain with another auth key, never
 * finds the AV (ENOENT), nor learns whether it exists.
 *
 * SWNIC_IOCTL_AV_OPEN on a device fd creates (SWNIC_AV_OPEN_CREATE) or
 * opens an AV and returns a new fd for it. Only the creator's fd writes
 * (SWNIC_IOCTL_AV_WRITE); every fd maps the table read-only (mmap of
 * @mmap_size bytes at offset 0). The AV and its name live while any fd or
 * mapping of it does, the creator's or an opener's; once the creator's fd
 * is closed the table no longer changes.
 *
 * The table starts with struct swnic_av_table. Writers follow a seqcount:
 * @seq is odd while entries change, then even again (release). A reader
 * copies the entries between two equal even loads of @seq (acquire).
 *
 * Errors of SWNIC_IOCTL_AV_OPEN, beyond the generic contract:
 *   EINVAL   an empty name, one not NUL terminated within
 *            SWNIC_AV_NAME_MAX, or with a character outside 0x21..0x7e;
 *            CREATE with @count 0 or above SWNIC_AV_COUNT_MAX; @count,
 *            @type not 0 without CREATE
 *   EEXIST   CREATE and the name exists (for this user and auth key)
 *   ENOENT   no such AV (for this user and auth key)
 *   ENOSPC   the user has SWNIC_AV_SHARED_MAX shared AVs on the device
 *   EACCES   the caller is not the process that opened the file
 * SWNIC_IOCTL_AV_WRITE: EPERM on an fd that did not create the AV,
 * EINVAL an entry with bits in SWNIC_AV_ENTRY_RSVD, or a range outside
 * the table, EFAULT @entries.
 */
#define SWNIC_AV_NAME_MAX	64	/* name bytes incl. NUL */
#define SWNIC_AV_COUNT_MAX	(1U << 16)	/* entries of one AV */
#define SWNIC_AV_SHARED_MAX	16	/* shared AVs per user and device */
#define SWNIC_AV_WRITE_MAX	1024	/* entries per AV_WRITE */

/* An entry: 0 = empty, else SWNIC_AV_ENTRY_VALID | ip << 16 | port. */
#define SWNIC_AV_ENTRY_VALID	(1ULL << 63)
#define SWNIC_AV_ENTRY_RSVD	(~(SWNIC_AV_ENTRY_VALID | ((1ULL << 48) - 1)))

/* struct swnic_av_open.flags */
#define SWNIC_AV_OPEN_CREATE	(1U << 0)	/* create; else open existing */

/**
 * struct swnic_av_table - the start of a shared AV's mapping
 */
struct swnic_av_table {
	__aligned_u64 seq;		/* seqcount of the entries */
	__u32 count;			/* entries */
	__u32 type;			/* the creator's @type */
	__aligned_u64 entries_offset;	/* byte offset of entry 0 */
	__aligned_u64 __pad[5];		/* rest of the cache line */
};

/**
 * struct swnic_av_open - SWNIC_IOCTL_AV_OPEN: create or open a shared AV
 */
struct swnic_av_open {
	__u32 size;			/* in: sizeof(struct swnic_av_open) */
	__u32 flags;			/* in: SWNIC_AV_OPEN_* */
	__u8 name[SWNIC_AV_NAME_MAX];	/* in: its name, NUL terminated */
	__u32 count;			/* in: CREATE: entries; out: entries */
	__u32 type;			/* in: CREATE: opaque to the kernel;
					 * out: the creator's
					 */
	__s32 fd;			/* out: the AV's fd */
	__u32 __reserved;		/* must be 0 */
	__aligned_u64 mmap_size;	/* out: bytes to map at offset 0 */
};

/**
 * struct swnic_av_write - SWNIC_IOCTL_AV_WRITE: set entries of a shared AV
 *
 * Entries @first .. @first + @n - 1 take the @n values at @entries.
 */
struct swnic_av_write {
	__u32 size;			/* in: sizeof(struct swnic_av_write) */
	__u32 flags;			/* in: must be 0 */
	__u32 first;			/* in: first entry */
	__u32 n;			/* in: entries, 1..SWNIC_AV_WRITE_MAX */
	__aligned_u64 entries;		/* in: user pointer to __u64[@n] */
};

#define SWNIC_IOCTL_AV_OPEN		_IO(SWNIC_TYPE, SWNIC_CMD_AV_OPEN)
#define SWNIC_IOCTL_AV_WRITE		_IO(SWNIC_TYPE, SWNIC_CMD_AV_WRITE)
/* Ports one block holds at most. */
#define SWNIC_PORT_BLOCK_MAX		64
/* Blocks one domain holds at most. */
#define SWNIC_PORT_BLOCKS_MAX		64

/**
 * struct swnic_port_block - SWNIC_IOCTL_PORT_BLOCK (SWNIC_FEAT_PORT_BLOCK)
 *
 * Reserves @count (1..SWNIC_PORT_BLOCK_MAX) consecutive ephemeral ports of
 * the device for the domain and reports the first in @base. Nothing is
 * reachable there until the domain creates an endpoint at one of them
 * with struct swnic_ep_create.group = @base; such an endpoint's work
 * requests carry @base as their source port, whatever its own (so peers
 * see every endpoint of the block as one address), and its port goes back
 * to the block when it closes. The block counts @count endpoints against
 * the domain's max_ep and the user's ports until released; an endpoint
 * at one of its ports is one of those (it is not counted again), one of
 * the block at a port of its own (port 0) counts as any other. Once the
 * block is released, its members still open count on their own.
 *
 * With SWNIC_PORT_BLOCK_RELEASE, releases the block at @base: its free
 * ports at once, the others as their endpoints close (the first port once
 * the last endpoint of the block has closed, so no one else sends from it
 * meanwhile). Closing the domain releases its blocks.
 *
 * Errors, beyond the generic contract: EINVAL (a @count out of range),
 * ENOENT (RELEASE: no such block), ENOSPC (max_ep, or
 * SWNIC_PORT_BLOCKS_MAX blocks), EDQUOT (the user's ports),
 * EADDRNOTAVAIL (no run of free ports found), EPERM (not the process that
 * opened the domain).
 */
struct swnic_port_block {
	__u32 size;			/* in: sizeof(struct swnic_port_block) */
	__u32 flags;			/* in: SWNIC_PORT_BLOCK_* */
	__u16 count;			/* in: ports (not with RELEASE) */
	__u16 base;			/* out: first port; in with RELEASE */
	__u32 __reserved;		/* must be 0 */
};

#define SWNIC_PORT_BLOCK_RELEASE	(1U << 0)
/*
 * (SWNIC_FEAT_TRIG_RECV) The block starts at @base, given: ports
 * @base .. @base + @count - 1, none of them taken (EADDRINUSE), all
 * below 65536 (EINVAL); one below 1024 needs CAP_NET_BIND_SERVICE
 * (EACCES). Not with RELEASE.
 */
#define SWNIC_PORT_BLOCK_FIXED		(1U << 1)

#define SWNIC_IOCTL_PORT_BLOCK		_IO(SWNIC_TYPE, SWNIC_CMD_PORT_BLOCK)
/*
 * IPv6 peers (SWNIC_FEAT_WIRE_IPV6). Work requests, receives and
 * completions name a peer by 32 bits (swnic_queue.h: dest_addr, src_addr,
 * addr): an IPv4 address, or, for an IPv6 peer, its name in the
 * namespace of the device's netdev - a value in 0.0.0.1 to 0.255.255.255
 * (network order), which is never an IPv4 peer. A name is made for an
 * address (and its scope) once and stays that address's until the
 * namespace goes: SWNIC_MAX_ADDR6 per namespace, made by
 * SWNIC_IOCTL_ADDR6 or by a peer's first packet. Names are never reused
 * (a name held anywhere always means the same address), so the table is
 * shared out: users without CAP_NET_ADMIN over the device's namespace
 * make at most half of the names together, SWNIC_ADDR6_PER_USER each
 * (by effective uid).
 *
 * A name is public - every user of the namespace may look it up and
 * send to it - once it has a peer context (traffic went either way;
 * swnic peer show lists its address to everyone) or if it is the
 * namespace's own address. Before that, only the users who named its
 * address with SWNIC_IOCTL_ADDR6 (and CAP_NET_ADMIN) may: to another
 * user, LOOKUP says ENOENT and a work request to it fails EHOSTUNREACH.
 */
#define SWNIC_MAX_ADDR6		4096
#define SWNIC_ADDR6_PER_USER	512

/* Is @a (network order) an IPv6 peer's name? */
static __inline__ int swnic_addr_is_name6(__u32 a)
{
	const __u8 *b = (const __u8 *)&a;

	return a && !b[0];
}

/* struct swnic_addr6.flags */
/* @name in, @addr/@scope_id out: the address a name stands for */
#define SWNIC_ADDR6_LOOKUP	(1U << 0)

/**
 * struct swnic_addr6 - SWNIC_IOCTL_ADDR6: an IPv6 peer's 32-bit name
 *
 * Without flags: the name of @addr (made if it has none), in @name. A
 * link-local @addr is of the device's netdev: @scope_id is 0 or its
 * ifindex (and reads back as the ifindex). An IPv4-mapped @addr names
 * the IPv4 address itself. With SWNIC_ADDR6_LOOKUP: the address of
 * @name.
 *
 * Errors, beyond the generic contract:
 *   ENETDOWN      the device is not bound to a netdev
 *   EADDRNOTAVAIL not a unicast address (multicast, ::, loopback), or a
 *                 link-local one with another scope
 *   ENOSPC        the namespace has SWNIC_MAX_ADDR6 names
 *   EDQUOT        names are never freed: callers without CAP_NET_ADMIN
 *                 (over the device's namespace) made half of them
 *                 already, or the domain's user SWNIC_ADDR6_PER_USER;
 *                 the rest is kept for other users and the network's
 *                 peers
 *   ENOMEM        no memory for the user's record of its names
 *   EPERM         not the process that opened the domain
 *   ENOENT        LOOKUP: no such name, or one that is neither public
 *                 nor named by the domain's user (see above)
 *   EAFNOSUPPORT  the kernel has no IPv6
 */
struct swnic_addr6 {
	__u32 size;			/* in: sizeof(struct swnic_addr6) */
	__u32 flags;			/* in: SWNIC_ADDR6_* */
	__u8 addr[16];			/* in/out: the address, network order */
	__u32 scope_id;			/* in/out: link-local: the ifindex */
	__u32 name;			/* out/in: its name, network order */
};

#define SWNIC_IOCTL_ADDR6		_IO(SWNIC_TYPE, SWNIC_CMD_ADDR6)

#endif /* _UAPI_LINUX_SWNIC_H */
