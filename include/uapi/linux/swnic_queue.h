/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * swnic: the data-path ABI - completion queues, endpoints and their rings.
 *
 * Objects. SWNIC_IOCTL_CQ_CREATE and SWNIC_IOCTL_EP_CREATE on a domain's
 * file each return a new file descriptor for the object (O_CLOEXEC). The
 * object lives until that fd is closed and unmapped; it holds its domain.
 *
 * Rings (io_uring style). Each ring lives in kernel memory and is mapped by
 * mmap(obj_fd, ring.mmap_offset, ring.mmap_size), MAP_SHARED (a private
 * mapping is EINVAL) and never executable (EPERM). A ring is a header page
 * (head, tail and flags words on separate cache lines at the offsets
 * given) followed by `entries` (a power of two) entries of `entry_size`
 * bytes. Indices are free-running __u32s; entry i is at (i & (entries - 1)).
 *
 *   SQ, RQ:  user space produces (writes entries, then tail with release
 *            ordering), the kernel consumes (head). CQ: the reverse.
 *
 * The kernel keeps its own copy of every index it owns and treats every
 * word user space can write as hostile: it reads the producer index once
 * (acquire), bounds it, copies each entry before validating it, and never
 * writes beyond entries the consumer has released. An entry that fails
 * validation completes with an error CQE (never a crash, never an
 * overrun); an index that is out of bounds marks the ring broken
 * (SWNIC_RING_F_BROKEN) and the endpoint stops.
 *
 * Doorbells. After producing SQ/RQ entries user space makes them visible to
 * the kernel. In SWNIC_EP_F_DB_SYSCALL mode (default) it calls
 * SWNIC_IOCTL_EP_DOORBELL on the endpoint's fd, which consumes the rings in
 * the caller's context. In SWNIC_EP_F_DB_ENGINE mode the engine of the
 * endpoint's domain (a kernel worker, one per domain) polls the rings of
 * its busy endpoints; when it goes idle it sets SWNIC_RING_F_NEED_WAKEUP
 * in the SQ's flags word and user space must then call the doorbell once
 * to wake it.
 *
 * Lazy receive queue. An RQ whose flags word has SWNIC_RING_F_LAZY is also
 * consumed by any sender delivering to the endpoint, before it matches, so
 * a receive needs no doorbell - except while the endpoint holds unexpected
 * messages, which only the doorbell matches against new receives: then the
 * kernel sets SWNIC_RING_F_NEED_WAKEUP in the RQ's flags word. User space
 * writes the RQE and the tail, issues a full barrier, and calls the
 * doorbell if it sees NEED_WAKEUP there (or if the RQ is full, or for an
 * RQE with SWNIC_RQE_CLAIM, which completes at once either way). The kernel
 * sets the flag, issues a full barrier, and looks at the RQ once more, so
 * a receive is never left behind a waiting message. A doorbell still
 * consumes the RQ at once, as without LAZY.
 *
 * Completions are read from the CQ ring without a syscall; poll() on the
 * CQ's fd reports POLLIN while the CQ is not empty (FI_WAIT_FD).
 */
#ifndef _UAPI_LINUX_SWNIC_QUEUE_H
#define _UAPI_LINUX_SWNIC_QUEUE_H

#include <linux/types.h>
#include <linux/swnic.h>

/* Flags word of a ring (kernel-written). */
#define SWNIC_RING_F_NEED_WAKEUP	(1U << 0)	/* SQ, LAZY RQ: doorbell */
#define SWNIC_RING_F_BROKEN		(1U << 1)	/* bad index seen: ring dead */
#define SWNIC_RING_F_OVERFLOW		(1U << 2)	/* CQ: a completion was lost */
#define SWNIC_RING_F_LAZY		(1U << 3)	/* RQ: taken without a doorbell */
#define SWNIC_RING_F_HELP		(1U << 4)	/* CQ: a copy to share */

/**
 * struct swnic_ring_info - where a ring is and how it is laid out
 */
struct swnic_ring_info {
	__aligned_u64 mmap_offset;	/* out: mmap offset on the object's fd */
	__aligned_u64 mmap_size;	/* out: bytes to map */
	__u32 head;			/* out: offset of the consumer index */
	__u32 tail;			/* out: offset of the producer index */
	__u32 flags;			/* out: offset of the flags word */
	__u32 array;			/* out: offset of entry 0 */
	__u32 entries;			/* out: number of entries, power of 2 */
	__u32 entry_size;		/* out: bytes per entry */
};

/* ---- completion queues ------------------------------------------------ */

/* CQE flags: which operation completed (libfabric's FI_* completion flags
 * are mapped to and from these by the provider).
 */
#define SWNIC_CQE_SEND		(1U << 0)
#define SWNIC_CQE_RECV		(1U << 1)
#define SWNIC_CQE_TAGGED	(1U << 2)
#define SWNIC_CQE_RMA_WRITE	(1U << 3)	/* local write completed */
#define SWNIC_CQE_RMA_READ	(1U << 4)	/* local read completed */
#define SWNIC_CQE_REMOTE_WRITE	(1U << 5)	/* a peer wrote with CQ data */
#define SWNIC_CQE_REMOTE_DATA	(1U << 6)	/* @data is valid */
#define SWNIC_CQE_MULTI_RECV	(1U << 7)	/* multi-recv buffer released */
#define SWNIC_CQE_ERROR		(1U << 8)	/* @err is set */
/* recv: the payload follows the CQE in its entry (SWNIC_CQ_F_INLINE_DATA);
 * the consumer copies its @len bytes to @buf before it releases the entry.
 */
#define SWNIC_CQE_INLINE	(1U << 9)

/**
 * struct swnic_cqe - one completion (64 bytes)
 */
struct swnic_cqe {
	__aligned_u64 context;		/* the work request's context */
	__aligned_u64 buf;		/* recv: where the data starts */
	__aligned_u64 len;		/* bytes transferred */
	__aligned_u64 data;		/* remote CQ data (REMOTE_DATA) */
	__aligned_u64 tag;		/* tagged recv: the sender's tag */
	__aligned_u64 olen;		/* error: bytes that did not fit */
	__u32 flags;			/* SWNIC_CQE_* */
	__s32 err;			/* ERROR: positive errno */
	__u32 src_addr;			/* recv: sender's IPv4 (network order) */
	__u16 src_port;			/* recv: sender's port (host order) */
	/*
	 * recv (SWNIC_FEAT_RECV_KEY): the auth key the sender used, as the
	 * receiving endpoint's key index - n for the key it holds as index
	 * n (SWNIC_IOCTL_EP_AUTH_KEY), 0 for its domain's key (or none).
	 * Padding before, so 0 there too.
	 */
	__u16 key_index;
};

/* struct swnic_cq_create.flags */
/* Entries are 128 bytes: a struct swnic_cqe, then up to
 * SWNIC_CQE_INLINE_MAX bytes of a small received message (SWNIC_CQE_INLINE),
 * which the kernel then does not write into the receiver's buffer itself.
 */
#define SWNIC_CQ_F_INLINE_DATA	(1U << 0)

#define SWNIC_CQE_INLINE_MAX	64

/**
 * struct swnic_cq_create - SWNIC_IOCTL_CQ_CREATE on a domain fd
 */
struct swnic_cq_create {
	__u32 size;			/* in: sizeof(struct swnic_cq_create) */
	__u32 flags;			/* in: SWNIC_CQ_F_* */
	__u32 entries;			/* in: minimum entries (rounded up) */
	__s32 fd;			/* out: the CQ's file descriptor */
	__u32 cq_id;			/* out: id to name it in EP_CREATE */
	__u32 __reserved;		/* must be 0 */
	struct swnic_ring_info ring;	/* out: the CQ ring */
};

/* ---- counters ----------------------------------------------------------- */

/*
 * A counter is two 64-bit words the kernel increments and user space maps
 * read-only (mmap offset 0 of the counter's fd): the operations of the
 * endpoints counting into it that completed, and those that failed. Only
 * the kernel writes them (a writable mapping is EACCES); a user-space
 * "set" keeps its own offset. Only its owner maps it (EACCES in another
 * process), and a child forked afterwards does not inherit the mapping. The
 * counter lives while its fd is open or its page mapped (closing the fd
 * after mmap costs no fd per counter); its id names it in EP_CREATE as
 * long as it lives.
 */
struct swnic_cntr_words {
	__aligned_u64 value;		/* operations completed */
	__aligned_u64 err;		/* operations failed */
};

/*
 * A counter's fd (SWNIC_FEAT_CNTR_POLL), for its owner: read() of 16
 * bytes or more returns the two words, and poll() reports POLLIN once
 * either has changed since the last read() (their sum differs from what
 * it returned), until the next read(). So one consumer sleeps until the
 * counter moves past what it saw, e.g. in epoll beside other fds: what
 * the kernel counts (completions, peers' RMA) wakes it, with no one
 * reading a CQ. A read() of less is EINVAL, by another process EACCES.
 */

/**
 * struct swnic_cntr_create - SWNIC_IOCTL_CNTR_CREATE on a domain fd
 */
struct swnic_cntr_create {
	__u32 size;			/* in: sizeof(struct swnic_cntr_create) */
	__u32 flags;			/* in: must be 0 */
	__s32 fd;			/* out: the counter's file descriptor */
	__u32 cntr_id;			/* out: id to name it in EP_CREATE */
	__u32 mmap_size;		/* out: bytes to map at offset 0 */
	__u32 __reserved;		/* must be 0 */
};

/*
 * struct swnic_ep_create.cntr[]: what an endpoint counts where. Sends count
 * when they complete (for SWNIC_SQE_DELIVERY: when received); REMOTE_READ
 * and REMOTE_WRITE count peers' RMA into this endpoint's domain's memory
 * regions (libfabric's FI_RMA_EVENT).
 */
#define SWNIC_EP_CNTR_SEND		0	/* sends and tagged sends */
#define SWNIC_EP_CNTR_RECV		1	/* receive completions */
#define SWNIC_EP_CNTR_READ		2	/* RMA reads it posted */
#define SWNIC_EP_CNTR_WRITE		3	/* RMA writes it posted */
#define SWNIC_EP_CNTR_REMOTE_READ	4	/* peers' reads through it */
#define SWNIC_EP_CNTR_REMOTE_WRITE	5	/* peers' writes through it */
#define SWNIC_EP_CNTR_MAX		6

/* ---- endpoints ---------------------------------------------------------- */

/* Endpoint types (struct swnic_ep_create.type). */
#define SWNIC_EP_RDM		1	/* reliable, unconnected */
#define SWNIC_EP_MSG		2	/* reliable, connected */
#define SWNIC_EP_DGRAM		3	/* unreliable, unconnected */

/* struct swnic_ep_create.flags */
#define SWNIC_EP_F_DB_SYSCALL	(1U << 0)	/* doorbell consumes inline */
#define SWNIC_EP_F_DB_ENGINE	(1U << 1)	/* the domain's engine polls */
#define SWNIC_EP_F_RM_ENABLED	(1U << 2)	/* never overrun: EAGAIN */
/*
 * SWNIC_FEAT_SRX: a shared receive context, not an endpoint: it has an RQ
 * (its receives are matched against what arrives at every endpoint that
 * joined it) and no port, no SQ work, no CQ (tx_cq, rx_cq and cntr[] 0),
 * doorbell SYSCALL only. Not with group or SRX_JOIN.
 */
#define SWNIC_EP_F_SRX		(1U << 8)
/*
 * SWNIC_FEAT_SRX: the endpoint joins the shared receive context at
 * struct swnic_ep_create.srx_fd: messages arriving at it match the
 * context's receives and unexpected queue, its own RQ is never read, and
 * its receive completions still go to its own rx_cq and counters.
 */
#define SWNIC_EP_F_SRX_JOIN	(1U << 9)

/* SQE opcodes */
#define SWNIC_OP_SEND		1	/* message to @dest */
#define SWNIC_OP_TSEND		2	/* tagged message to @dest */
#define SWNIC_OP_WRITE		3	/* RMA write to @raddr/@rkey at @dest */
#define SWNIC_OP_READ		4	/* RMA read from @raddr/@rkey at @dest */
/* Atomics (SWNIC_FEAT_ATOMIC): see "Atomics" below. */
#define SWNIC_OP_ATOMIC		5	/* @atomic_op on @raddr/@rkey */
#define SWNIC_OP_FETCH_ATOMIC	6	/* ... and the old values to @tag */
#define SWNIC_OP_COMPARE_ATOMIC	7	/* ... with the compare buffer @data */

/* SQE flags */
#define SWNIC_SQE_COMPLETION	(1U << 0)	/* write a CQE on success */
#define SWNIC_SQE_REMOTE_DATA	(1U << 1)	/* deliver @data to the target */
#define SWNIC_SQE_INLINE	(1U << 2)	/* payload in @inline_data */
/*
 * SEND/TSEND: complete only once the message is in a receive buffer
 * (FI_DELIVERY_COMPLETE). A message the target buffers as unexpected keeps
 * the sender's CQ slot until a receive takes it (or FI_DISCARD drops it);
 * if the target endpoint closes first the send completes with ECONNABORTED.
 * Without it a send completes once the target has the data, in a receive
 * buffer or its unexpected-message buffer (FI_TRANSMIT_COMPLETE).
 */
#define SWNIC_SQE_DELIVERY	(1U << 3)
/*
 * FI_FENCE (SWNIC_FEAT_FENCE): the work request starts only once every
 * earlier one of the endpoint has completed - the kernel stops consuming
 * the send queue at it while completions into the endpoint's transmit CQ
 * are outstanding (deferred: across the wire, or delivery-complete sends
 * buffered at their target), and goes on at a later doorbell.
 */
#define SWNIC_SQE_FENCE		(1U << 4)
/*
 * Triggered (SWNIC_FEAT_TRIGGER): @inline_data holds a struct
 * swnic_sqe_trigger instead of a payload (so not with INLINE). Consuming
 * the SQE validates it and keeps it in the kernel, holding its CQ slot,
 * until the counter it names reaches the threshold; then the kernel runs
 * it as it runs any SQE (same checks, same transports, local or wire) and
 * completes it on the transmit CQ. See struct swnic_sqe_trigger.
 */
#define SWNIC_SQE_TRIGGER	(1U << 6)

#define SWNIC_INLINE_MAX	56

/*
 * Atomics (SWNIC_FEAT_ATOMIC), fi_atomic(3) executed by the target's
 * kernel on the target MR's pages, with no target process involved:
 *
 *   @opcode     ATOMIC (write ops and ATOMIC_WRITE), FETCH_ATOMIC (the
 *               same and ATOMIC_READ, the old values returned),
 *               COMPARE_ATOMIC (CSWAP..MSWAP, the old values returned)
 *   @atomic_op  SWNIC_AOP_* (the values of libfabric's enum fi_op)
 *   @datatype   SWNIC_ADT_* (the values of libfabric's enum fi_datatype)
 *   @addr/@len  the operand: @len / size bytes elements (or, with INLINE,
 *               in @inline_data; not for COMPARE_ATOMIC); for ATOMIC_READ
 *               @len only gives the count (@addr is not read)
 *   @tag        FETCH/COMPARE: where the @len bytes of old values go
 *   @data       COMPARE: the compare buffer, @len bytes
 *   @raddr/@rkey the target, as for RMA, @len bytes of it
 *
 * @len is a non-zero multiple of the datatype's size (swnic_adt_size()) of
 * at most SWNIC_ATOMIC_MAX bytes; the target needs no alignment. Each
 * element is updated atomically against every other swnic atomic on the
 * same address (a lock in the target's kernel, by physical address), not
 * against CPU stores. Access: ATOMIC needs the MR's REMOTE_WRITE right,
 * FETCH with ATOMIC_READ its REMOTE_READ, other FETCH and COMPARE both.
 * The completion follows the update at the target (delivery complete);
 * FETCH/COMPARE results are in the buffer at @tag before it. Floating
 * point is IEEE (long double: x86 80-bit extended in 16 bytes) computed
 * by the kernel with the FPU; complex SUM/PROD are computed by parts,
 * ((a+bi)(c+di) = (ac-bd) + (ad+bc)i). Valid combinations:
 *
 *   MIN, MAX, CSWAP_LE/LT/GE/GT  integers and real floating types
 *   SUM, PROD, ATOMIC_READ/WRITE, CSWAP, CSWAP_NE   every datatype
 *   LOR, LAND, LXOR, BOR, BAND, BXOR, MSWAP          integers only
 *
 * The logical ops take non-zero as true and store 0 or 1. An invalid
 * combination, op or datatype completes with EOPNOTSUPP; a bad @len,
 * REMOTE_DATA or DELIVERY flag, INLINE on COMPARE, or a non-zero
 * @__apad with EINVAL; then the MR checks of RMA (ENOKEY, EKEYREVOKED,
 * EKEYREJECTED, EACCES, ERANGE), EFAULT for the poster's buffers.
 */
enum {
	SWNIC_AOP_MIN, SWNIC_AOP_MAX, SWNIC_AOP_SUM, SWNIC_AOP_PROD,
	SWNIC_AOP_LOR, SWNIC_AOP_LAND, SWNIC_AOP_BOR, SWNIC_AOP_BAND,
	SWNIC_AOP_LXOR, SWNIC_AOP_BXOR, SWNIC_AOP_ATOMIC_READ,
	SWNIC_AOP_ATOMIC_WRITE, SWNIC_AOP_CSWAP, SWNIC_AOP_CSWAP_NE,
	SWNIC_AOP_CSWAP_LE, SWNIC_AOP_CSWAP_LT, SWNIC_AOP_CSWAP_GE,
	SWNIC_AOP_CSWAP_GT, SWNIC_AOP_MSWAP,
	SWNIC_AOP_NUM
};

enum {
	SWNIC_ADT_INT8, SWNIC_ADT_UINT8, SWNIC_ADT_INT16, SWNIC_ADT_UINT16,
	SWNIC_ADT_INT32, SWNIC_ADT_UINT32, SWNIC_ADT_INT64, SWNIC_ADT_UINT64,
	SWNIC_ADT_FLOAT, SWNIC_ADT_DOUBLE, SWNIC_ADT_FLOAT_COMPLEX,
	SWNIC_ADT_DOUBLE_COMPLEX, SWNIC_ADT_LONG_DOUBLE,
	SWNIC_ADT_LONG_DOUBLE_COMPLEX,
	SWNIC_ADT_NUM
};

/* Bytes of one element of datatype @dt (< SWNIC_ADT_NUM). */
static __inline__ __u32 swnic_adt_size(__u32 dt)
{
	if (dt >= SWNIC_ADT_LONG_DOUBLE_COMPLEX)
		return 32;
	if (dt >= SWNIC_ADT_DOUBLE_COMPLEX)
		return 16;
	if (dt >= SWNIC_ADT_DOUBLE)
		return 8;
	if (dt == SWNIC_ADT_FLOAT)
		return 4;
	return 1U << (dt >> 1);
}

/* Bytes of operand (and of compare values, of results) per atomic. */
#define SWNIC_ATOMIC_MAX	512

/**
 * struct swnic_sqe - one send-queue work request (128 bytes)
 */
struct swnic_sqe {
	__u8 opcode;			/* SWNIC_OP_* */
	union {
		__u8 __pad[3];		/* 0, but for the atomics: */
		struct {
			__u8 atomic_op;	/* SWNIC_AOP_* */
			__u8 datatype;	/* SWNIC_ADT_* */
			__u8 __apad;	/* 0 */
		};
	};
	__u32 flags;			/* SWNIC_SQE_* */
	__aligned_u64 context;		/* returned in the CQE */
	__aligned_u64 addr;		/* local buffer (poster's address) */
	__aligned_u64 len;		/* bytes */
	__aligned_u64 tag;		/* TSEND: the tag; atomics: results */
	__aligned_u64 data;		/* REMOTE_DATA: remote CQ data; */
					/* COMPARE_ATOMIC: compare buffer */
	__aligned_u64 raddr;		/* RMA: target address or offset */
	__aligned_u64 rkey;		/* RMA: target MR key */
	__u32 dest_addr;		/* target IPv4 (network order) */
	__u16 dest_port;		/* target endpoint port (host order) */
	/*
	 * The auth key the work request uses: 0 = the domain's (as before
	 * SWNIC_FEAT_EP_AUTH_KEYS, when this was padding), n = the key
	 * SWNIC_IOCTL_EP_AUTH_KEY gave the endpoint as index n. An index the
	 * endpoint holds no key at completes with ENOKEY; a target endpoint
	 * that holds neither that key as its domain's nor as one of its own
	 * with EACCES.
	 */
	__u16 key_index;
	__u8 inline_data[SWNIC_INLINE_MAX]; /* INLINE: the payload */
};

/* struct swnic_sqe_trigger.flags */
/* Compare the threshold with value + err, not value alone. */
#define SWNIC_TRIG_F_SUM	(1U << 0)
/*
 * Count the work's completion into @comp_cntr (0: nowhere) instead of the
 * endpoint's counter for the operation (libfabric's deferred work).
 */
#define SWNIC_TRIG_F_CNTR	(1U << 1)

/*
 * Per domain, triggered work requests waiting for their counter or to be
 * run; more complete with ENOSPC (SQEs) or fail with ENOSPC (TRIG_CNTR).
 */
#define SWNIC_TRIG_MAX		4096

/**
 * struct swnic_sqe_trigger - the condition of a SWNIC_SQE_TRIGGER SQE
 *
 * The SQE runs once counter @cntr_id of the endpoint's domain has value
 * (or value + err, SWNIC_TRIG_F_SUM) >= @threshold: at once if it
 * already has. Counters change from completions, peers' RMA events,
 * SWNIC_IOCTL_CNTR_UPDATE and triggered counter work, and every change
 * is checked. Work whose thresholds are met runs in the order they were
 * met (by threshold, then by submission), on the kernel's workqueue with
 * the poster's mm, one at a time per domain.
 *
 * Completion (transmit CQ, with the SQE's context): as the SQE's flags
 * ask, or with err ECANCELED, without running, when it is cancelled
 * (SWNIC_IOCTL_EP_CANCEL with SWNIC_CANCEL_SEND and its context,
 * SWNIC_IOCTL_TRIG_CANCEL), or when the counter's fd or the domain's is
 * closed first. If the endpoint's fd is closed (or its owner exits)
 * first, it is dropped without a completion (its CQ slot is given back),
 * since no one is left to read it. An RM_ENABLED target
 * out of resources (EAGAIN) gets it again, a few times a second, for
 * SWNIC_TRIG_RETRY_MS (SWNIC_FEAT_TRIG_RECV; before, it completed with
 * EAGAIN at once); then it completes with EAGAIN. A bad
 * condition completes it with EINVAL (unknown flags, reserved not 0, or
 * INLINE) or ENOENT (no such counter); ENOSPC: SWNIC_TRIG_MAX wait.
 */
struct swnic_sqe_trigger {
	__aligned_u64 threshold;
	__u32 cntr_id;			/* the triggering counter */
	__u32 flags;			/* SWNIC_TRIG_F_* */
	__u32 comp_cntr;		/* TRIG_F_CNTR: counter id, or 0 */
	__u32 __reserved;		/* 0 */
};

/* RQE flags */
#define SWNIC_RQE_TAGGED	(1U << 0)	/* match tagged sends */
#define SWNIC_RQE_MULTI_RECV	(1U << 1)	/* buffer takes many messages */
#define SWNIC_RQE_DIRECTED	(1U << 2)	/* only from @src_addr/@src_port */
/* Take the message SWNIC_IOCTL_EP_PEEK claimed with claim == @tag. */
#define SWNIC_RQE_CLAIM		(1U << 3)
/*
 * Only messages sent with the auth key the endpoint holds at @key_index
 * (0: its domain's; SWNIC_FEAT_RECV_KEY), from any source or, with
 * DIRECTED as well, from @src_addr/@src_port only. Not with CLAIM.
 */
#define SWNIC_RQE_KEY		(1U << 4)
/*
 * @mr is the handle of an MR of the endpoint's domain, registered over
 * the buffer (SWNIC_FEAT_RECV_MR): a hint, not a right. If that MR is
 * still valid, pinned (not ODP, not REG_IOV), has the RECV right and
 * covers the bytes a message brings, they go straight into its pages;
 * otherwise the buffer is written as without the flag.
 */
#define SWNIC_RQE_MR		(1U << 5)

/**
 * struct swnic_rqe - one posted receive (64 bytes)
 */
struct swnic_rqe {
	__aligned_u64 context;		/* returned in the CQE */
	__aligned_u64 addr;		/* buffer (poster's address) */
	__aligned_u64 len;		/* bytes */
	__aligned_u64 tag;		/* TAGGED: tag to match */
	__aligned_u64 ignore;		/* TAGGED: tag bits to ignore */
	__aligned_u64 min_free;		/* MULTI_RECV: release below this */
	__u32 flags;			/* SWNIC_RQE_* */
	__u32 src_addr;			/* DIRECTED: sender IPv4 */
	__u16 src_port;			/* DIRECTED: sender port */
	__u16 key_index;		/* KEY: the sender's key's index, else 0 */
	__u32 mr;			/* MR: an MR's handle, else 0 */
};

/**
 * struct swnic_ep_create - SWNIC_IOCTL_EP_CREATE on a domain fd
 *
 * The port names the endpoint on its device (each device has a port space
 * of its own); 0 asks the kernel to pick a free one (EADDRNOTAVAIL when
 * none is left). Ports below 1024 need CAP_NET_BIND_SERVICE (EACCES). A
 * port in use is EADDRINUSE. ENOSPC: the domain has max_ep endpoints;
 * EDQUOT: the user holds a quarter of the device's ephemeral ports (not
 * for administrators). EPERM: the caller is not the process that opened
 * the domain (as for every data-path object and command).
 */
struct swnic_ep_create {
	__u32 size;			/* in: sizeof(struct swnic_ep_create) */
	__u32 flags;			/* in: SWNIC_EP_F_* */
	__u32 type;			/* in: SWNIC_EP_* */
	__u32 tx_cq;			/* in: cq_id for send completions */
	__u32 rx_cq;			/* in: cq_id for recv completions */
	__u32 sq_entries;		/* in: minimum SQ entries */
	__u32 rq_entries;		/* in: minimum RQ entries */
	__u16 port;			/* in/out: the endpoint's port */
	/*
	 * in: the DSCP (0-63) of the IP packets that carry its work requests
	 * over the wire (SWNIC_FEAT_DSCP; before it, padding that had to be
	 * 0): libfabric's traffic class (fi_tx_attr.tclass)
	 */
	__u8 dscp;
	__u8 __pad;			/* 0 */
	__u32 addr;			/* out: the endpoint's IPv4 address */
	__s32 fd;			/* out: the endpoint's fd */
	__u32 ep_id;			/* out: id (netlink dumps) */
	__u32 __reserved;		/* must be 0 */
	struct swnic_ring_info sq;	/* out: send queue */
	struct swnic_ring_info rq;	/* out: receive queue */
	__u32 cntr[SWNIC_EP_CNTR_MAX];	/* in: counter ids (0: none) */
	/*
	 * in (SWNIC_FEAT_PORT_BLOCK; before it the struct ended above): the
	 * first port of a block of the domain (struct swnic_port_block), or
	 * 0. The endpoint joins it: @port is one of the block's (taken from
	 * it, EADDRINUSE if an endpoint has it) or 0 (an ephemeral port of
	 * its own), and its work requests carry @group as their source port.
	 * ENOENT: no such block; EINVAL: @port outside it.
	 */
	__u16 group;
	__u16 __pad2;			/* 0 */
	__u32 __reserved2;		/* must be 0 */
	/*
	 * in (SWNIC_FEAT_SRX; before it the struct ended above): with
	 * SWNIC_EP_F_SRX_JOIN, the fd of a shared receive context
	 * (SWNIC_EP_F_SRX) of the same domain, else 0. EBADF: not an open
	 * fd; EINVAL: not a shared receive context, or one of another domain
	 * (or closed).
	 */
	__s32 srx_fd;
	__u32 __reserved3;		/* must be 0 */
};

/*
 * struct swnic_ep_doorbell flags (SWNIC_FEAT_WIRE_POLL): busy polling. The
 * rings are not looked at; instead what the wire brought the namespace of
 * the endpoint's device is taken now, in the caller's context, as the
 * namespace's worker would once woken and scheduled (a round of it, if no
 * one else is at it). For an application that spins on its CQ waiting for
 * a peer on another host: it saves the worker's wakeup on the way.
 */
#define SWNIC_DB_POLL		(1U << 0)

/*
 * Doorbell flag (SWNIC_FEAT_DB_SQ): rung for the SQ. The RQ is consumed
 * only if it needs the doorbell - not lazy, or unexpected messages wait
 * (NEED_WAKEUP); otherwise its receives are left to the next sender, which
 * takes them before it matches, as it takes those posted with no doorbell.
 * The owner then never waits for the receive side a delivery holds.
 */
#define SWNIC_DB_SQ		(1U << 1)

/**
 * struct swnic_ep_doorbell - SWNIC_IOCTL_EP_DOORBELL on an endpoint fd
 *
 * Consumes the SQ and RQ (SYSCALL mode) or wakes the engine (ENGINE mode);
 * or, with SWNIC_DB_POLL, polls the wire. Returns 0, or EPIPE if a ring is
 * broken.
 */
struct swnic_ep_doorbell {
	__u32 size;			/* in: sizeof(struct swnic_ep_doorbell) */
	__u32 flags;			/* in: 0, SWNIC_DB_POLL or SWNIC_DB_SQ */
	__u32 sq_done;			/* out: SQ entries consumed */
	__u32 rq_done;			/* out: RQ entries consumed */
	/*
	 * out (SWNIC_FEAT_WIRE_POLL; before it the struct ended above):
	 * with SWNIC_DB_POLL, 1 if the device is bound to a netdev (the
	 * wire was looked at), 0 if not (polling is of no use until it is).
	 */
	__u32 polled;
	__u32 __reserved;		/* 0 */
};

/**
 * struct swnic_ep_cancel - SWNIC_IOCTL_EP_CANCEL on an endpoint fd
 *
 * Unposts the receive whose RQE carried @context (receives still in the
 * RQ are posted first) and completes it on the receive CQ with
 * SWNIC_CQE_ERROR, err ECANCELED (and SWNIC_CQE_MULTI_RECV for a
 * multi-receive buffer, which is released). ENOENT: no such receive is
 * posted (it completed, or never was); EAGAIN: the CQ has no free slot,
 * or receives are still waiting in the RQ (reap completions, try again).
 * A triggered receive still waiting for its threshold (struct
 * swnic_trig_recv) is cancelled too: it completes with ECANCELED, in the
 * slot it holds, as soon as the kernel's workqueue gets to it.
 *
 * With SWNIC_CANCEL_SEND it cancels the SQE with @context that the kernel
 * has not consumed yet (waiting behind a full CQ, a target out of
 * resources, or the engine): it completes on the transmit CQ with err
 * ECANCELED, without being executed, when the SQ is next consumed (the
 * call itself consumes it in SYSCALL mode). ENOENT: no such SQE waits.
 *
 * With SWNIC_CANCEL_TRIG (SWNIC_FEAT_CANCEL_TRIG) only triggered work that
 * has not run yet is cancelled: a receive of SWNIC_IOCTL_TRIG_RECV still
 * waiting for its threshold (not one it posted since), or, with
 * SWNIC_CANCEL_SEND, an SQE with SWNIC_SQE_TRIGGER the kernel keeps or
 * has not consumed. ENOENT otherwise, whatever else carries @context.
 */
struct swnic_ep_cancel {
	__u32 size;			/* in: sizeof(struct swnic_ep_cancel) */
	__u32 flags;			/* in: SWNIC_CANCEL_* */
	__aligned_u64 context;		/* in: the RQE's or SQE's context */
};

#define SWNIC_CANCEL_SEND	(1U << 0)	/* an SQE, not a receive */
#define SWNIC_CANCEL_TRIG	(1U << 1)	/* triggered work not yet run */

/* struct swnic_ep_peek.flags */
#define SWNIC_PEEK_CLAIM	(1U << 0)	/* keep it for SWNIC_RQE_CLAIM */
#define SWNIC_PEEK_DISCARD	(1U << 1)	/* drop the match */
#define SWNIC_PEEK_DIRECTED	(1U << 2)	/* only from @src_addr/@src_port */

/**
 * struct swnic_ep_peek - SWNIC_IOCTL_EP_PEEK on an endpoint fd
 *
 * Looks for the oldest unexpected tagged message matching @tag/@ignore
 * (and the source, with DIRECTED), as fi_tagged(3) FI_PEEK. Found: the
 * message's length, tag, data and source are returned; with CLAIM it is
 * kept for the receive whose RQE has SWNIC_RQE_CLAIM and tag == @claim
 * (no other receive matches it); with DISCARD it is dropped. ENOMSG: no
 * such message. With CLAIM | DISCARD, the message claimed with @claim is
 * dropped (ENOMSG if there is none).
 */
struct swnic_ep_peek {
	__u32 size;			/* in: sizeof(struct swnic_ep_peek) */
	__u32 flags;			/* in: SWNIC_PEEK_* */
	__aligned_u64 tag;		/* in: tag; out: the message's tag */
	__aligned_u64 ignore;		/* in: tag bits to ignore */
	__aligned_u64 claim;		/* in: CLAIM: the claim's name */
	__aligned_u64 len;		/* out: bytes of the message */
	__aligned_u64 data;		/* out: remote CQ data, if @has_data */
	__u32 src_addr;			/* in (DIRECTED)/out: sender IPv4 */
	__u16 src_port;			/* in (DIRECTED)/out: sender port */
	__u8 has_data;			/* out: the message carries CQ data */
	__u8 __reserved;		/* must be 0 */
};

/* Auth keys an endpoint holds besides its domain's (SWNIC_IOCTL_EP_AUTH_KEY). */
#define SWNIC_EP_AUTH_KEYS_MAX	16

/**
 * struct swnic_ep_auth_key - SWNIC_IOCTL_EP_AUTH_KEY on an endpoint fd
 *
 * Gives the endpoint one more auth key (libfabric's FI_AV_AUTH_KEY), under
 * the rules SWNIC_IOCTL_AUTH_KEY applies to a domain's: the key's service
 * must admit the calling process (open, a member, or CAP_NET_ADMIN over
 * the device's network namespace), be enabled and have room - each
 * endpoint holding the key counts as one of the service's domains until
 * the endpoint's file is closed. The endpoint then sends with it (SQEs
 * with @index as key_index) and takes traffic and RMA sent with it, as it
 * does with its domain's key; RMA so accepted reaches the memory regions
 * of the endpoint's domain. Keys are never taken back; holding a key
 * already held (or the domain's) returns its index again (0: the
 * domain's).
 *
 * Errors, beyond the generic contract:
 *   EINVAL       @auth_key 0
 *   ENOKEY       no service with this auth key on the device
 *   EKEYREVOKED  the service is disabled
 *   EPERM        the process may not use the service, or is not the one
 *                that opened the domain
 *   EDQUOT       the service is used by its max_domains domains
 *   ENOSPC       the endpoint holds SWNIC_EP_AUTH_KEYS_MAX keys
 */
struct swnic_ep_auth_key {
	__u32 size;			/* in: sizeof(struct swnic_ep_auth_key) */
	__u32 flags;			/* in: must be 0 */
	__u32 auth_key;			/* in: the key */
	__u32 index;			/* out: its key_index for SQEs */
};

/* struct swnic_ep_peer.flags: whom the endpoint takes sends from */
#define SWNIC_EP_PEER_ANY	0		/* anyone (as created) */
#define SWNIC_EP_PEER_ONE	(1U << 0)	/* @addr:@port only */
#define SWNIC_EP_PEER_NONE	(1U << 1)	/* no one */

/**
 * struct swnic_ep_peer - SWNIC_IOCTL_EP_PEER on an endpoint fd
 *
 * Whom the endpoint takes SENDs and TSENDs from, on this host and over the
 * wire (a connected FI_EP_MSG endpoint's peer): with ONE, only from the
 * endpoint at @addr:@port (as a receive's CQE names its sender); with
 * NONE, from no one; with neither, from anyone. A send it does not take
 * completes at its sender with ECONNREFUSED and takes no receive; one
 * buffered before the setting is taken by no receive either (it goes at
 * the close: ECONNABORTED to a sender that waits for delivery). RMA
 * and atomics go to memory regions, not endpoints: their keys say who
 * may. Only the process that opened the domain may set it (EPERM).
 *
 * Errors, beyond the generic contract: EINVAL, ONE and NONE together, or
 * an address or port without ONE.
 */
struct swnic_ep_peer {
	__u32 size;			/* in: sizeof(struct swnic_ep_peer) */
	__u32 flags;			/* in: SWNIC_EP_PEER_* */
	__u32 addr;			/* in: the peer's IPv4 (or name) */
	__u16 port;			/* in: the peer's port */
	__u16 __reserved;		/* must be 0 */
};

/* struct swnic_cntr_update.flags */
#define SWNIC_CNTR_UPD_SET	(1U << 0)	/* set, not add */
#define SWNIC_CNTR_UPD_ERR	(1U << 1)	/* the err word, not value */

/**
 * struct swnic_cntr_update - SWNIC_IOCTL_CNTR_UPDATE on a domain fd
 *
 * Adds @value to (or with SET sets to @value) a word of counter @cntr_id
 * (libfabric's fi_cntr_add/set/adderr/seterr), and starts the triggered
 * work whose threshold that meets. ENOENT: no such counter.
 */
struct swnic_cntr_update {
	__u32 size;			/* in: sizeof(struct swnic_cntr_update) */
	__u32 flags;			/* in: SWNIC_CNTR_UPD_* */
	__u32 cntr_id;			/* in */
	__u32 __reserved;		/* must be 0 */
	__aligned_u64 value;		/* in */
};

/**
 * struct swnic_trig_cntr - SWNIC_IOCTL_TRIG_CNTR on a domain fd
 *
 * Triggered counter work (libfabric's deferred FI_OP_CNTR_SET/ADD): once
 * counter @cntr_id reaches @threshold (as struct swnic_sqe_trigger, with
 * @trig_flags SWNIC_TRIG_F_SUM or 0), counter @target is updated as
 * SWNIC_IOCTL_CNTR_UPDATE with @flags would. @cookie names it for
 * SWNIC_IOCTL_TRIG_CANCEL. Nothing completes; cancelling drops it.
 * ENOENT: no such counter; ENOSPC: SWNIC_TRIG_MAX wait.
 */
struct swnic_trig_cntr {
	__u32 size;			/* in: sizeof(struct swnic_trig_cntr) */
	__u32 flags;			/* in: SWNIC_CNTR_UPD_* */
	__u32 cntr_id;			/* in: the triggering counter */
	__u32 target;			/* in: the counter to update */
	__aligned_u64 threshold;	/* in */
	__aligned_u64 value;		/* in */
	__aligned_u64 cookie;		/* in */
	__u32 trig_flags;		/* in: SWNIC_TRIG_F_SUM or 0 */
	__u32 __reserved;		/* must be 0 */
};

/* struct swnic_trig_cancel.flags: which waiting work to cancel */
#define SWNIC_TRIG_CANCEL_CNTR	(1U << 0)	/* triggered by @cntr_id only */
#define SWNIC_TRIG_CANCEL_COOKIE (1U << 1)	/* counter work with @cookie */
/* Work whose condition has SWNIC_TRIG_F_SUM only (SWNIC_FEAT_TRIG_CANCEL_SUM) */
#define SWNIC_TRIG_CANCEL_SUM	(1U << 2)

/**
 * struct swnic_trig_cancel - SWNIC_IOCTL_TRIG_CANCEL on a domain fd
 *
 * Cancels the domain's triggered work that waits for its threshold: all
 * of it, that of one triggering counter (CANCEL_CNTR), or the counter
 * work named @cookie (CANCEL_COOKIE); with CANCEL_SUM, of those only the
 * work whose condition has SWNIC_TRIG_F_SUM (libfabric's deferred work,
 * not its FI_TRIGGER operations). Cancelled SQEs complete with
 * ECANCELED (struct swnic_sqe_trigger), triggered receives too (struct
 * swnic_trig_recv); counter work is dropped.
 * @count: out, how many were cancelled; ENOENT if COOKIE found none.
 */
struct swnic_trig_cancel {
	__u32 size;			/* in: sizeof(struct swnic_trig_cancel) */
	__u32 flags;			/* in: SWNIC_TRIG_CANCEL_* */
	__u32 cntr_id;			/* in: CANCEL_CNTR */
	__u32 count;			/* out */
	__aligned_u64 cookie;		/* in: CANCEL_COOKIE */
};

/* How long triggered work a target refuses for now (EAGAIN) is retried. */
#define SWNIC_TRIG_RETRY_MS	5000

/**
 * struct swnic_trig_recv - SWNIC_IOCTL_TRIG_RECV on an endpoint fd
 *
 * A triggered receive (SWNIC_FEAT_TRIG_RECV; libfabric's FI_TRIGGER on
 * fi_recv/fi_trecv and deferred FI_OP_RECV/TRECV): the kernel keeps @rqe,
 * holding a slot of the endpoint's receive CQ, until counter
 * @trig.cntr_id reaches @trig.threshold (as struct swnic_sqe_trigger:
 * SWNIC_TRIG_F_SUM, the same order and the same limit SWNIC_TRIG_MAX),
 * then posts it as if it came from the RQ. With SWNIC_TRIG_F_CNTR its
 * completions count into counter @trig.comp_cntr (0: none) instead of
 * the endpoint's RECV counter. While the endpoint already holds as many
 * receives as its RQ has entries, or its CQ is full, posting is retried
 * for SWNIC_TRIG_RETRY_MS, then it completes with EAGAIN.
 *
 * Completion (receive CQ, @rqe.context): as any receive's; with err
 * ECANCELED, unposted, when it is cancelled before its threshold
 * (SWNIC_IOCTL_EP_CANCEL with its context, SWNIC_IOCTL_TRIG_CANCEL) or
 * its counter's fd or the domain's is closed; dropped with no completion
 * if the endpoint's fd is closed first.
 *
 * Errors, beyond the generic contract: EINVAL (unknown trigger flags,
 * @trig.__reserved not 0, comp_cntr without TRIG_F_CNTR), EOPNOTSUPP or
 * EINVAL (an RQE the RQ would refuse: unknown flags, bad combinations,
 * @mr without SWNIC_RQE_MR, a buffer out of the user's address space),
 * ENOENT (no such counter), EAGAIN (the receive CQ is full), ENOSPC
 * (SWNIC_TRIG_MAX wait), EPERM (not the process that opened the domain),
 * EOPNOTSUPP (a shared receive context, or an endpoint that joined one:
 * SWNIC_FEAT_SRX).
 */
struct swnic_trig_recv {
	__u32 size;			/* in: sizeof(struct swnic_trig_recv) */
	__u32 flags;			/* in: must be 0 */
	struct swnic_sqe_trigger trig;	/* in: the condition */
	struct swnic_rqe rqe;		/* in: the receive */
};

/**
 * struct swnic_cq_help - SWNIC_IOCTL_CQ_HELP on a CQ fd
 *
 * SWNIC_FEAT_COPY_HELP. A large message (SWNIC_HELP_MIN bytes or more)
 * from a sender on this host into a receive that names its buffer's MR
 * (SWNIC_RQE_MR) is copied by the sender's call a chunk at a time; while
 * it is, the kernel sets SWNIC_RING_F_HELP in the flags word of the
 * receive's CQ. A consumer that polls the CQ and finds it empty and the
 * flag set may call this: its call then takes chunks of that copy too,
 * so two CPUs copy the message instead of one, and returns once none is
 * left. The copy runs between pages the kernel holds - the sender's,
 * the MR's - and never touches the caller's memory otherwise; the
 * completion is posted as always, once every chunk is in place. With no
 * copy to share, it returns 0 at once (@copied 0). Only the process that
 * opened the domain may call it (EPERM), as only it maps the CQ's ring.
 */
struct swnic_cq_help {
	__u32 size;			/* in: sizeof(struct swnic_cq_help) */
	__u32 flags;			/* in: must be 0 */
	__aligned_u64 copied;		/* out: bytes this call copied */
};

#define SWNIC_HELP_MIN		(256 * 1024)

#define SWNIC_IOCTL_CQ_CREATE		_IO(SWNIC_TYPE, SWNIC_CMD_CQ_CREATE)
#define SWNIC_IOCTL_EP_CREATE		_IO(SWNIC_TYPE, SWNIC_CMD_EP_CREATE)
#define SWNIC_IOCTL_EP_DOORBELL		_IO(SWNIC_TYPE, SWNIC_CMD_EP_DOORBELL)
#define SWNIC_IOCTL_EP_CANCEL		_IO(SWNIC_TYPE, SWNIC_CMD_EP_CANCEL)
#define SWNIC_IOCTL_EP_PEEK		_IO(SWNIC_TYPE, SWNIC_CMD_EP_PEEK)
#define SWNIC_IOCTL_CNTR_CREATE		_IO(SWNIC_TYPE, SWNIC_CMD_CNTR_CREATE)
#define SWNIC_IOCTL_EP_AUTH_KEY		_IO(SWNIC_TYPE, SWNIC_CMD_EP_AUTH_KEY)
#define SWNIC_IOCTL_CNTR_UPDATE		_IO(SWNIC_TYPE, SWNIC_CMD_CNTR_UPDATE)
#define SWNIC_IOCTL_TRIG_CNTR		_IO(SWNIC_TYPE, SWNIC_CMD_TRIG_CNTR)
#define SWNIC_IOCTL_TRIG_CANCEL		_IO(SWNIC_TYPE, SWNIC_CMD_TRIG_CANCEL)
#define SWNIC_IOCTL_TRIG_RECV		_IO(SWNIC_TYPE, SWNIC_CMD_TRIG_RECV)
#define SWNIC_IOCTL_CQ_HELP		_IO(SWNIC_TYPE, SWNIC_CMD_CQ_HELP)
#define SWNIC_IOCTL_EP_PEER		_IO(SWNIC_TYPE, SWNIC_CMD_EP_PEER)

#endif /* _UAPI_LINUX_SWNIC_QUEUE_H */
