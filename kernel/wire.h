/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wire's packet formats (Documentation/wire.rst). Every field is big
 * endian; every packet starts with struct swnic_wire_hdr right after the
 * UDP header. Nothing here is trusted before udp_rx.c has checked it.
 */
#ifndef _SWNIC_WIRE_H
#define _SWNIC_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

#define SWNIC_WIRE_VERSION	2
/* The UDP port of every namespace's socket unless the module is told. */
#define SWNIC_WIRE_UDP_PORT	4793

/* Packet types */
enum {
	SWNIC_PKT_DATA = 1,	/* reliable: a fragment of a message */
	SWNIC_PKT_READ_REQ,	/* reliable: an RMA read request */
	SWNIC_PKT_RESP,		/* reliable: a message's outcome (or read data) */
	SWNIC_PKT_ACK,		/* unreliable: cumulative ACK + SACK bitmap */
	SWNIC_PKT_RESET,	/* unreliable: "I do not know you", restart */
	SWNIC_PKT_PING,		/* unreliable: are you there? (an ACK answers) */
	__SWNIC_PKT_MAX
};

/**
 * struct swnic_wire_hdr - every packet (16 bytes)
 * @version: SWNIC_WIRE_VERSION
 * @type: SWNIC_PKT_*
 * @csum: the Internet checksum of the whole packet (this field 0 while it
 *	  is computed): end to end, because not every path checks UDP's
 *	  (veth trusts its peer's), and a corrupted PSN or length must
 *	  never be taken
 * @src_inc: the sender's incarnation towards this peer: random, new with
 *	     every peer context (a reloaded module, a new namespace, a peer
 *	     context reset after a timeout); PSNs start at 0 in each
 * @dst_inc: the receiver's incarnation as the sender knows it, 0 if it
 *	     knows none yet; a stale one is answered with a RESET
 * @psn: reliable packets: the packet sequence number; ACK: the cumulative
 *	 ACK (the next PSN expected); RESET: 0
 */
struct swnic_wire_hdr {
	__u8 version;
	__u8 type;
	__sum16 csum;
	__be32 src_inc;
	__be32 dst_inc;
	__be32 psn;
};

/* ACK: which PSNs after the cumulative ACK arrived (psn + 1 + bit). */
#define SWNIC_SACK_BITS		256

/**
 * struct swnic_wire_ack - ACK payload (36 bytes)
 * @sack: PSN psn + 1 + i arrived if bit i (of word i / 32, bit i % 32)
 * @dups: reliable packets of the ACK's receiver that arrived twice, a
 *	  running count (mod 2^32): a rise means a retransmission was
 *	  spurious, and the sender widens its reordering window. An ACK of
 *	  32 bytes (without it) is taken, as saying nothing of duplicates.
 */
struct swnic_wire_ack {
	__be32 sack[SWNIC_SACK_BITS / 32];
	__be32 dups;
};

/*
 * A PING naming no one (dst_inc 0) is answered only if it is at least as
 * long as the ACK it draws: any host may send one from any address, and a
 * 16-byte PING drawing a 52-byte ACK made us an amplifier aimed at that
 * address. Ours are padded (zeros after the header) while we know no
 * incarnation of the peer.
 */
#define SWNIC_PING_ANON_LEN	(sizeof(struct swnic_wire_hdr) + \
				 sizeof(struct swnic_wire_ack))

/* struct swnic_wire_msg flags */
#define SWNIC_MSGF_REMOTE_DATA	BIT(0)	/* @data is remote CQ data */
#define SWNIC_MSGF_DELIVERY	BIT(1)	/* delivery complete wanted */
/*
 * The sender takes a HELD answer (struct swnic_wire_resp.flags): a
 * DELIVERY send the target buffers as unexpected is answered HELD at once
 * and finally when a receive takes it. Without this flag the target
 * answers as soon as it buffered the message (wire.rst).
 */
#define SWNIC_MSGF_HOLD		BIT(2)
/*
 * The sender takes the answer to this message as the acknowledgment of
 * all its packets: the target need not ACK them on their own. Without it
 * (an older module) every packet is ACKed, as before.
 */
#define SWNIC_MSGF_RESP_ACKS	BIT(3)

/**
 * struct swnic_wire_msg - DATA and READ_REQ: the message a fragment is of
 * (72 bytes); every fragment carries it whole, so each is placed on its
 * own, in whatever order fragments arrive
 * @msg_id: the sender's message number to this peer
 * @opcode: SWNIC_OP_* (SEND, TSEND, WRITE, the three ATOMICs; READ for
 *	    READ_REQ)
 * @flags: SWNIC_MSGF_*
 * @ep_type: the sending endpoint's type (SWNIC_EP_*)
 * @src_port: the sending endpoint
 * @dst_port: the target endpoint
 * @auth_key: the auth key the sender uses (0: none, then @uid counts)
 * @uid: the sending domain's owner (init_user_ns), for auth key 0
 * @frag: payload bytes of every fragment but the last (the sender's MTU
 *	  less the headers): fragment i is at offset i * @frag, so the
 *	  target knows which fragments it has, and a message is whole only
 *	  when each arrived (no holes, whatever the fragments claim)
 * @len: the message's length
 * @offset: this fragment's offset in the message
 * @tag: TSEND: the tag; atomics: the op (bits 0-7) and datatype (8-15)
 * @data: REMOTE_DATA: the remote CQ data; atomics: the element count
 * @raddr: WRITE/READ/atomics: target address or offset
 * @rkey: WRITE/READ/atomics: target MR key
 *
 * An atomic's payload is its operands, then for COMPARE_ATOMIC its
 * compare values; a fetching one is answered with the old values as RESP
 * payload, as read data.
 */
struct swnic_wire_msg {
	__be32 msg_id;
	__u8 opcode;
	__u8 flags;
	__u8 ep_type;
	__u8 __pad;
	__be16 src_port;
	__be16 dst_port;
	__be32 auth_key;
	__be32 uid;
	__be32 frag;
	__be64 len;
	__be64 offset;
	__be64 tag;
	__be64 data;
	__be64 raddr;
	__be64 rkey;
};

/* struct swnic_wire_resp flags */
/*
 * Not the outcome yet: the target holds the message (a DELIVERY | HOLD
 * send buffered as unexpected) and sends its outcome in another RESP
 * when a receive takes it or it is dropped; @status and @len are 0.
 */
#define SWNIC_RESPF_HELD	BIT(0)
#define SWNIC_RESPF_ALL		SWNIC_RESPF_HELD

/**
 * struct swnic_wire_resp - RESP: a message's outcome (24 bytes), after
 * the target placed it (or failed to); for an RMA read it carries the read
 * data at @offset, @len bytes of it in this packet
 * @msg_id: the message it answers
 * @status: 0 or a positive errno (the initiator's error)
 * @offset: READ data: where in the read this packet's payload goes
 * @len: READ data: payload bytes in this packet; 0 for a final status
 * @flags: SWNIC_RESPF_* (0 before there was HELD)
 */
struct swnic_wire_resp {
	__be32 msg_id;
	__be32 status;
	__be64 offset;
	__be32 len;
	__be32 flags;
};

static inline void swnic_wire_build_bug_on(void)
{
	BUILD_BUG_ON(sizeof(struct swnic_wire_hdr) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_wire_ack) != 36);
	BUILD_BUG_ON(sizeof(struct swnic_wire_msg) != 72);
	BUILD_BUG_ON(sizeof(struct swnic_wire_resp) != 24);
}

#endif /* _SWNIC_WIRE_H */
