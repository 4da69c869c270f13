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
	/* new commands go here, never in between */
	SWNIC_CMD_LAST,
};

/* Features a device offers (struct swnic_query_device.features). */
#define SWNIC_FEAT_QUERY	(1ULL << 0)	/* QUERY_DEVICE (always set) */

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

#endif /* _UAPI_LINUX_SWNIC_H */
