/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the wire's files share (kernel/udp*.c; nothing else includes it):
 * the namespace's wire, its peers, the messages being sent and received,
 * and the functions one file of the wire calls in another. udp.c has the
 * overview and the locking rules.
 */
#ifndef _SWNIC_UDP_INTERNAL_H
#define _SWNIC_UDP_INTERNAL_H

#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/ipv6.h>
#include <net/checksum.h>
#include <net/addrconf.h>
#include <net/inet_ecn.h>
#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/udp.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <net/ipv6.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>

#include "atomic.h"
#include "bind.h"
#include "cntr.h"
#include "complete.h"
#include "copy.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "ep.h"
#include "mr.h"
#include "recv.h"
#include "stats.h"
#include "transport.h"
#include "udp.h"
#include "wire.h"

/* Module parameters (udp.c has their descriptions). */
extern unsigned int swnic_udp_port, swnic_peer_timeout_ms, swnic_peer_idle_ms;
extern bool swnic_udp_any_sport;
extern unsigned int swnic_rx_mem_mb, swnic_rx_keep_kb;
extern bool swnic_tx_splice;

#define SWNIC_WIN		256	/* PSNs in flight to a peer, oldest to next */
/*
 * ... to a peer no packet naming us came from yet: TCP's initial window,
 * about. Until it answers, nobody knows it is there: 256 unanswered
 * contexts a user may make (SWNIC_PEERS_UNHEARD) kept a full window each
 * until the peer timeout, 96 MiB at MTU 1500, 590 MiB at 9000. Its first
 * ACK opens the window, an RTT later.
 */
#define SWNIC_WIN_UNPROVEN	16
#define SWNIC_RX_WIN		1024	/* PSNs tracked past the cumulative ACK */
#define SWNIC_REO_MIN_US	250	/* RACK reordering window, at least */
#define SWNIC_REO_MULT_MAX	16	/* ... grown to at most 16 times that */
#define SWNIC_REO_CLEAN		4096	/* ACKs without a spurious one: shrink */
#define SWNIC_MAX_PEERS		1024	/* peer contexts per namespace */
#define SWNIC_PEERS_PER_SEC	256	/* new peer contexts per second */
/* Contexts one user's posts made that have not heard back, at most */
#define SWNIC_PEERS_UNHEARD	(SWNIC_MAX_PEERS / 4)
#define SWNIC_PEER_HASH_BITS	8	/* buckets of wn->peer_hash: 256 */
#define SWNIC_MAX_MSGS		4096	/* requests outstanding to a peer */
/*
 * Requests of a peer taken past the oldest not run yet (exec_next): those
 * outstanding, and as many run ahead of a waiting one (swnic_rx_run()).
 */
#define SWNIC_RX_AHEAD		(2 * SWNIC_MAX_MSGS)
/*
 * The part of the receive budget (rx_mem_mb) that messages may hold which
 * packets not naming our incarnation made, all peers together: 1/8. Any
 * host can send those from any address, having never heard from us.
 */
#define SWNIC_RX_UNPROVEN_SHARE	8
/*
 * The part of the receive budget one peer's messages may hold: 1/2. One
 * host that starts large messages and never ends them (any host can be
 * a proven peer) leaves the other half to the others; and a message
 * larger than this share can never be taken, so it is refused at once
 * (ENOBUFS), not left to be sent again for ever.
 */
#define SWNIC_RX_PEER_SHARE	2
/*
 * A peer's answers waiting to go (HELD, then the outcome: two per request
 * it may have outstanding, at most): past that, its requests wait to run.
 * A peer is a remote host (address and port) here: all its contexts
 * together, one per address of ours it sends to (swnic_peer_host_use()).
 */
#define SWNIC_MAX_ANSWERS	(2 * SWNIC_MAX_MSGS)
/*
 * ... and to contexts no packet naming us came to: their answers may fill
 * the window once, no more (a forged source's go nowhere, never ACKed).
 */
#define SWNIC_MAX_ANSWERS_UNPROVEN	SWNIC_WIN
/* A peer's retired incarnations remembered (swnic_peer_retire()) */
#define SWNIC_OLD_INCS		4
#define SWNIC_RCVBUF		(16 << 20) /* each socket's queue for the worker */
#define SWNIC_POLL_FALLBACK_US	400	/* busy polling: the worker's turn */
#define SWNIC_RTO_INIT_US	20000
/* Answers to a peer that never named us go again this often at most. */
#define SWNIC_UNPROVEN_RESENDS	2
#define SWNIC_RTO_MIN_US	10000	/* 4 ms fired spuriously: wire.rst */
#define SWNIC_RTO_MAX_US	1000000
#define SWNIC_RETX_BURST	64	/* timeout retransmissions per tick */
#define SWNIC_PTO_MIN_US	1000	/* tail loss probe after 2 srtt, >= */
/* While a peer is busy the worker looks at it this often, at least. */
#define SWNIC_TICK_US		4000
#define SWNIC_BATCH		64	/* packets per worker round */
/* A fragment's payload (struct swnic_wire_msg.frag): MTU 576 to 64K. */
#define SWNIC_FRAG_MIN		256
#define SWNIC_FRAG_MAX		65535
#define SWNIC_GSO_SEGS		64	/* packets per UDP GSO send, at most */
#define SWNIC_GSO_BYTES		60000	/* bytes per UDP GSO send (IPv4: < 64K) */
/*
 * Packets' buffers come from pages a namespace keeps, SWNIC_TXPAGES of
 * SWNIC_TXPAGE_SIZE in a ring, one packet after the other (a send's
 * packets are contiguous, so its fragments coalesce). A page is used
 * again once nothing refers to it - no packet waiting for its ACK, no skb
 * a send made of it - as a fresh page is zeroed (init_on_alloc); a packet
 * larger than a page gets pages of its own.
 */
#define SWNIC_TXPAGE_ORDER	3
#define SWNIC_TXPAGE_SIZE	(PAGE_SIZE << SWNIC_TXPAGE_ORDER)
#define SWNIC_TXPAGES		64
/* Page fragments of one spliced send (the skb's, and one to spare). */
#define SWNIC_SPLICE_FRAGS	(MAX_SKB_FRAGS - 1)
/*
 * A message the target cannot take yet (EAGAIN) is retried this long: as
 * one whose receive buffer is out of reach (copy.h).
 */
#define SWNIC_DELIVER_TIMEOUT	SWNIC_ROUND_FAULT_TIMEOUT
/* ... and one the target's memory cgroup has no room for, this often. */
#define SWNIC_NOMEM_RETRY	(HZ / 20)

/* Drop reasons (counted per namespace, shown by netlink). */
enum {
	SWNIC_DROP_SHORT,	/* shorter than its headers */
	SWNIC_DROP_CSUM,	/* checksum wrong: corrupted on the way */
	SWNIC_DROP_VERSION,	/* unknown version or type */
	SWNIC_DROP_STALE,	/* for an older incarnation (RESET sent) */
	SWNIC_DROP_WINDOW,	/* PSN outside the receive window */
	SWNIC_DROP_DUP,		/* PSN received already */
	SWNIC_DROP_BAD_MSG,	/* fragment inconsistent with its message */
	SWNIC_DROP_NO_MEM,	/* over rx_mem_mb, or no memory */
	SWNIC_DROP_PEERS,	/* peer context limit or rate hit */
	SWNIC_DROP_QUEUE,	/* a socket's queue full (or UDP checksum) */
	SWNIC_DROP_NO_DEV,	/* no swnic device bound to the netdev */
	SWNIC_DROP_ADDR,	/* not from a peer's wire port, or to a group */
	SWNIC_DROP_UNPROVEN,	/* not naming us, over their share of rx_mem_mb */
	SWNIC_DROP_TOO_BIG,	/* a message over a peer's share: refused */
	__SWNIC_DROP_NUM
};

/* An IPv6 peer's address; its name is its place in the table, + 1. */
struct swnic_name6 {
	struct in6_addr addr;
	int ifindex;			/* link-local: its netdev, else 0 */
	u16 next;			/* next of its hash bucket, + 1; 0: none */
	/*
	 * Every user of the namespace may learn and use it: it has a peer
	 * context (which swnic peer show shows to all), or it is the
	 * namespace's own. Else only the users who named it (and admins).
	 */
	bool public;
};

#define SWNIC_NAME6_BUCKETS	1024	/* power of 2 */

/*
 * The names of a namespace: entries by name, and hashed by address
 * (under wn->lock; the seed is random, so that a flood of chosen source
 * addresses cannot make one long chain).
 */
struct swnic_names6 {
	u32 seed;
	u16 head[SWNIC_NAME6_BUCKETS];	/* first entry + 1; 0: none */
	struct swnic_name6 e[SWNIC_MAX_ADDR6];
};

/*
 * What one user (euid) did with the names of a namespace: names it made
 * without CAP_NET_ADMIN (capped at SWNIC_ADDR6_PER_USER) and the names it
 * asked for (SWNIC_IOCTL_ADDR6), which it may look up and send to.
 */
struct swnic_name6_user {
	u32 made;
	DECLARE_BITMAP(named, SWNIC_MAX_ADDR6);
};

/*
 * A reassembly buffer kept: init_on_alloc (Debian's default) zeroes every
 * fresh one, a pass over each received byte that a kept one is spared.
 */
struct swnic_rxbuf {
	void *buf;
	size_t size;
};

#define SWNIC_RX_SPARES		4
#define SWNIC_RX_SPARE_MIN	(64 << 10)
#define SWNIC_RX_SPARE_MAX	(16 << 20)

struct swnic_wnet {
	struct net *net;
	struct mutex lock;		/* everything below */
	struct socket *sock;		/* NULL until first needed */
	struct socket *sock6;		/* IPv6: NULL until then, or if none */
	/*
	 * IPv6 peers' names: only ever appended (under @lock), read without
	 * it: @names6 is set before @nnames6 first grows, each entry's
	 * address before @nnames6 covers it (release/acquire). Freed with
	 * the namespace, after @nnames6 is 0 and an RCU grace period.
	 */
	struct swnic_names6 *names6;
	u32 nnames6;
	u32 user_names6;		/* of them, made by unprivileged ioctls */
	u32 net_names6;			/* ... for packets' sources (cap below) */
	struct xarray users6;		/* swnic_name6_user by uid, @lock */
	/* By uid: contexts its posts made, not heard from yet (value) */
	struct xarray unheard;
	u32 pump_gen;			/* swnic_peer_pump()'s rounds, never 0 */
	int sk_drops[2];		/* the sockets' sk_drops, counted */
	struct kthread_worker *worker;	/* with @sock, until the namespace goes */
	struct kthread_work work;
	struct hrtimer timer;		/* the next RTO, probe or tick */
	/*
	 * Busy polling (swnic_udp_poll()): while an application polls, a
	 * packet does not wake the worker; @poll_timer does, after
	 * SWNIC_POLL_FALLBACK_US, if no round read the sockets since.
	 */
	struct hrtimer poll_timer;
	atomic_t rx_ready;		/* data_ready calls while @polling */
	int rx_seen;			/* @rx_ready as a round began reading */
	int rx_armed;			/* @rx_ready as @poll_timer was armed */
	bool polling;			/* an application polls */
	struct list_head peers;
	/*
	 * The same peers by address and port, for each packet to find its
	 * own (swnic_peer_find(): the contexts of one remote address, one
	 * per address of ours it talks with, share a bucket). The seed is
	 * random, so that sources chosen by a flood do not share one bucket.
	 */
	DECLARE_HASHTABLE(peer_hash, SWNIC_PEER_HASH_BITS);
	u32 peer_seed;
	u32 npeers;
	u32 peers_gen;			/* bumped when @peers changes */
	u64 rx_mem;			/* bytes of messages being received */
	/*
	 * Of it, the messages (buffers and records) that packets not naming
	 * our incarnation made (SWNIC_RX_UNPROVEN_SHARE, swnic_rx_fragment()).
	 */
	u64 rx_unproven;
	/*
	 * Reassembly buffers kept for the next messages (swnic_rxbuf_get()),
	 * within the rx_mem_mb budget with @rx_mem, freed after a second
	 * unused.
	 */
	struct swnic_rxbuf spares[SWNIC_RX_SPARES];
	u64 spare_mem;
	unsigned long spare_at;		/* jiffies: last kept or reused */
	u64 spare_reuses;		/* messages given a kept buffer */
	u64 rx_kept;			/* messages kept in their packets */
	u64 rx_kept_copied;		/* ... fragments of them copied */
	u64 rx_passed;			/* requests run past a waiting one */
	u64 fault_waits;		/* rounds that left one out of reach */
	/* Pages for packets' buffers, kept (swnic_txbuf_get()) */
	struct page *txpages[SWNIC_TXPAGES];
	/* ... the cgroup each is charged to and holds packets of (ref'd) */
	struct mem_cgroup *txpage_memcg[SWNIC_TXPAGES];
	/* Where each page's next packet goes (swnic_txbuf_get()) */
	unsigned int txpage_off[SWNIC_TXPAGES];
	/* The page being filled: [0] answers, [1] requests */
	unsigned int txpage_cur[2];
	u32 ntxpages;
	u64 txpage_allocs;		/* pages allocated for it (not reused) */
	bool dead;
	struct ratelimit_state peer_limit;
	atomic64_t drops[__SWNIC_DROP_NUM];
	u64 tx_pkts, rx_pkts, retx_pkts;
	u64 tx_errors;			/* packets the stack refused (lost) */
	u64 gso_sends;			/* UDP GSO sends (of several packets) */
	u64 tx_spliced;			/* ... that took the packets' pages */
	u64 gso_recvs;			/* bursts received (taken whole) */
	u64 polls;			/* rounds run by busy polling */
	atomic64_t poll_fallbacks;	/* ... that left packets to the worker */
	atomic64_t rx_kicks;		/* worker wakeups by data_ready */
	atomic64_t rx_inline;		/* ... left to an inline section */
	u64 inline_rounds;		/* rounds run by inline sections */
	atomic64_t inline_full;		/* sections not opened: bucket full */
	u64 probes;			/* tail loss probes */
	u64 rto_fires;			/* retransmit timeouts that fired */
	u64 rack_retx;			/* packets RACK found lost */
	u64 spurious;			/* retransmissions that arrived twice */
	/* Delivery complete: sends held for a receive (struct swnic_held) */
	struct list_head held_done;	/* their outcome is known */
	bool held_dead;			/* the worker is going: no more kicks */
	u64 held_taken, held_failed;	/* held sends answered, by outcome */
	u64 keepalives;			/* PINGs sent */
	u64 peers_evicted;		/* idle contexts reused for new peers */
	u64 peers_capped;		/* posts refused: SWNIC_PEERS_UNHEARD */
};

/* A reliable packet sent and not yet acknowledged. */
struct swnic_txpkt {
	struct list_head node;		/* peer->unacked, PSN order */
	u32 psn;
	bool req;			/* a fragment of our request @req_id */
	u32 req_id;
	ktime_t stamp;			/* last (re)transmission */
	u8 tos;				/* its IP TOS: DSCP << 2 */
	u8 resends;			/* times sent again: no RTT sample */
	u16 poff;			/* payload offset, if @pcsum is its sum */
	__wsum pcsum;			/* the payload's, summed as it was copied */
	u32 len;
	u8 *buf;			/* swnic_txbuf_get() */
	/* A request's: its poster's, charged @buf and this (referenced) */
	struct mem_cgroup *memcg;
};

enum swnic_txkind {
	SWNIC_TX_REQ,			/* our request: fragments of a message */
	SWNIC_TX_READ_DATA,		/* a peer's read: data from our MR */
	SWNIC_TX_STATUS,		/* a peer's request: its outcome */
	SWNIC_TX_ATOMIC_DATA,		/* a peer's atomic: the old values */
};

/* Something to send: a request of ours, or an answer to a peer's. */
struct swnic_txmsg {
	struct list_head node;		/* peer->txq, then peer->waiting */
	enum swnic_txkind kind;
	u32 msg_id;
	u32 frag;			/* payload bytes per packet */
	u64 len, pos;			/* bytes, bytes sent */
	struct swnic_wire_msg m;	/* REQ: every fragment's header */
	/* REQ: the source (pinned) or inline bytes */
	struct page **pages;
	unsigned long npages;
	unsigned int off;
	u8 inl[SWNIC_INLINE_MAX];
	bool inline_src;
	/* REQ: the poster and its completion */
	struct swnic_ep *ep;
	/* REQ: the poster's domain's cgroup, charged the packets (ref'd) */
	struct mem_cgroup *memcg;
	struct swnic_deferred done;
	bool last;			/* its last packet is made */
	/*
	 * REQ: @msg_id given, at its first packet (swnic_txmsg_make()): a
	 * request that cannot make that packet yet (no room in its
	 * poster's cgroup) takes no id, so the target, which runs a
	 * peer's requests in id order, is not left waiting for it.
	 */
	bool id_set;
	u8 tos;				/* its packets' IP TOS */
	u64 got;			/* READ: bytes placed */
	int err;			/* READ: placement failed */
	/* READ_DATA: where the data comes from */
	struct swnic_ep *dst;
	u32 auth_key;
	u64 raddr, rkey;
	/* READ_DATA: the MR's pages out of reach, not tried before next */
	struct swnic_fault_wait fault;
	unsigned long fault_next;
	u32 status;			/* STATUS: positive errno */
	u32 resp_flags;			/* STATUS: SWNIC_RESPF_* */
	bool held;			/* REQ: the target holds it (HELD) */
	bool counted;			/* READ_DATA: all read, counted */
	/* STATUS etc.: answers an unproven request: in wn->rx_unproven */
	bool unproven;
	/*
	 * Atomics: REQ, the operands (and compare values) the packets are
	 * made from, the result going to @pages; ATOMIC_DATA, the results.
	 */
	void *abuf;
	u32 rlen;			/* REQ: result bytes expected */
};

/*
 * A fragment of a kept message: in @skb at @off, or - when keeping its
 * packet would cost more than the message's share of the budget allows -
 * copied to @buf.
 */
struct swnic_rxpiece {
	struct sk_buff *skb;
	union {
		unsigned int off;
		void *buf;
	};
};

/* A peer's request being received, or waiting for its turn. */
struct swnic_rxmsg {
	struct list_head node;		/* peer->rxmsgs, by msg_id */
	u32 msg_id;
	struct swnic_wire_msg m;	/* from the first fragment */
	u64 len, got;
	void *buf;			/* the message (len bytes), or: */
	struct swnic_rxpiece *pieces;	/* kept: per fragment */
	struct swnic_kmsg km;		/* reads @pieces */
	struct sk_buff *last_skb;	/* kept, and charged to @used */
	size_t used;			/* of @size (kept) */
	size_t size;			/* charged: @buf's (>= @len), or kept's */
	unsigned long *frags;		/* which fragments arrived */
	u8 tos;				/* of its first packet: the answer's */
	/*
	 * The netdev its first packet came in on: it runs on that one's
	 * device (security.rst), whichever a later packet of the peer's
	 * came in on.
	 */
	int ifindex;
	unsigned long since;		/* first try to execute it */
	unsigned long retry_at;		/* no memory: not tried before */
	/* its destination out of reach (EFAULTLATER) */
	struct swnic_fault_wait fault;
	/*
	 * Executed, its payload freed: a record that takes its packets sent
	 * again, until every earlier message is executed too (exec_next).
	 */
	bool done;
	/* Made by a packet not naming us: in wn->rx_unproven, as rx_mem */
	bool unproven;
};

/*
 * A peer's delivery-complete send (DELIVERY | HOLD) that we buffered as
 * unexpected: answered HELD, its outcome comes when a receive takes it
 * (or it is dropped), from recv.c under the receiver's rx_lock, through
 * swnic_held_notify() - which must not take wn->lock (taken before
 * rx_lock). So the outcome goes on wn->held_done under swnic_held_lock and
 * the worker sends it. The record lives until then, or, when the peer
 * context forgets it first (the peer restarted, timed out, the namespace
 * went: @wn NULL), until the message is taken or dropped.
 */
struct swnic_held {
	struct list_head node;		/* peer->held (wn->lock) */
	struct list_head done_node;	/* wn->held_done (swnic_held_lock) */
	struct swnic_wnet *wn;		/* NULL once forgotten */
	struct swnic_peer *peer;
	struct swnic_txmsg *tm;		/* its final answer, made beforehand */
	int err;			/* the outcome: 0 or a positive errno */
	bool done;			/* on wn->held_done */
};

struct swnic_peer {
	struct list_head node;		/* wn->peers */
	struct hlist_node hnode;	/* wn->peer_hash */
	__be32 ip;			/* IPv4 address, or IPv6 name */
	__be16 port;
	bool v6;			/* @ip is the name of: */
	struct in6_addr addr6;
	int scope;			/* link-local: the netdev's ifindex */
	int ifindex;			/* where its requests come in */
	/*
	 * Our address in this context (IPv4 as v4-mapped; any: no route
	 * when it was made, the route's from its first packet on, see
	 * swnic_peer_bind()): a context is a pair of addresses, (@local,
	 * @ip), not a remote address alone. A multi-homed host seen at two
	 * of its addresses, or sending from another than the one we send
	 * to, has a context per pair, as it has one per pair for us: one
	 * context for both would see two incarnations of it, taking turns.
	 * Every packet of the context goes from @local (IP_PKTINFO), so the
	 * peer sees one pair too. swnic_peer_get_posted() explains @dialled.
	 */
	struct in6_addr local;
	bool dialled;			/* the one posts to @ip/@port use */
	u32 my_inc, their_inc;
	/*
	 * The peer's incarnations @their_inc was before, latest first (0:
	 * none): a packet of one still on its way is dropped, not taken for
	 * a new incarnation (swnic_peer_retire()).
	 */
	u32 old_inc[SWNIC_OLD_INCS];
	bool anon;			/* @my_inc sent a packet naming none */
	bool proven;			/* a packet naming us came, ever */
	unsigned long heard;		/* jiffies: last valid packet */
	/* made by a post of @maker's, no packet naming us heard since */
	bool unheard;
	kuid_t maker;
	/* sending */
	u32 snd_nxt, snd_una;
	struct list_head unacked;	/* swnic_txpkt */
	u32 inflight;
	u32 inflight_req;		/* ... of them, of our requests */
	struct list_head txq;		/* swnic_txmsg with packets to make */
	struct list_head waiting;	/* our requests awaiting their answer */
	u32 nmsgs;			/* on txq and waiting */
	u32 next_msg_id;
	/* No request of ours outstanding is older (swnic_rx_resp()) */
	u32 msg_floor;
	u32 acked_req;			/* highest request with a packet ACKed */
	bool acked_any;			/* ... if any */
	u32 srtt_us, rttvar_us, rto_us;
	u32 min_rtt_us;			/* the least RTT sampled, 0 = none */
	u32 reo_mult;			/* RACK's window, in SWNIC_REO_MIN_US */
	u32 reo_clean;			/* packets ACKed since a spurious one */
	u32 dups_seen;			/* its last ACK's @dups */
	ktime_t rto_mark;		/* last ACK progress or RTO */
	ktime_t last_tx;		/* last new packet sent */
	bool probed;			/* tail probe sent since progress */
	unsigned long gso_when;		/* jiffies: @gso looked up */
	bool gso;			/* UDP GSO sends to it */
	/* receiving */
	u32 rcv_nxt;
	DECLARE_BITMAP(rcv_map, SWNIC_RX_WIN);	/* PSN % SWNIC_RX_WIN */
	/*
	 * The last swnic_rx_run() left a request whole but not run (no room
	 * at its target yet, its memory out of reach, our answers to the
	 * peer stuck): the rounds run it again. Else what waits, waits for
	 * packets, which run it as they come.
	 */
	bool rx_retry;
	bool ack_due;			/* packets came since our last ACK */
	bool ack_now;			/* ... that no answer of ours covers */
	u8 ack_tos;			/* of the last request packet: ACKs' */
	u32 rx_dups;			/* its packets that came twice */
	struct list_head rxmsgs;
	struct xarray rxids;		/* @rxmsgs by msg_id */
	u32 exec_next;			/* next msg_id to execute */
	struct list_head held;		/* its sends we hold: swnic_held */
	u32 nheld;
	/* our requests it holds (HELD answers) */
	u32 nheld_waiting;
	/* our answers on @txq, each charged to wn->rx_mem until it went */
	u32 nanswers;
	u64 rx_mem;			/* of wn->rx_mem: its messages' */
	unsigned long ping_at;		/* jiffies: our last PING */
	/* jiffies: last look for requests of closed endpoints (all kinds) */
	unsigned long closed_at;
	/* statistics */
	u64 tx_bytes, rx_bytes, retx;
	u64 drops[__SWNIC_DROP_NUM];	/* of its packets, by reason */
};

extern unsigned int swnic_udp_net_id;
extern spinlock_t swnic_held_lock;

/*
 * Each namespace's wire has a worker thread of its own, at the lowest
 * real-time priority (sched_set_fifo_low): applications busy-poll their
 * CQs on every CPU, and a worker of normal priority, even at nice -20,
 * waits for the spinning task's time slice to end before it runs
 * (EEVDF's run-to-parity: ~1.5 ms at two CPUs) - every packet's
 * latency would be that. A real-time thread preempts at once.
 */
static inline void swnic_wire_kick(struct swnic_wnet *wn)
{
	kthread_queue_work(wn->worker, &wn->work);
}

static inline struct swnic_wnet *swnic_wnet(struct net *net)
{
	return net_generic(net, swnic_udp_net_id);
}

static inline bool psn_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline void swnic_drop(struct swnic_wnet *wn, unsigned int why)
{
	atomic64_inc(&wn->drops[why]);
}

/* A drop of a packet known to come from @p: counted for it as well. */
static inline void swnic_peer_drop(struct swnic_wnet *wn, struct swnic_peer *p,
				   unsigned int why)
{
	swnic_drop(wn, why);
	p->drops[why]++;
}

/* swnic_peer_reset_tx() flags */
#define SWNIC_RESET_RETRY	BIT(0)	/* what was never seen goes again */
#define SWNIC_RESET_KEEP_INC	BIT(1)	/* our old packets name another */

/* udp_tx.c */
void swnic_txpages_free(struct swnic_wnet *wn);
void swnic_txpkt_free(struct swnic_wnet *wn, struct swnic_txpkt *t);
void swnic_udp_xmit(struct swnic_wnet *wn, struct swnic_peer *p,
		    void *buf, size_t len, u8 tos);
void swnic_hdr_init(struct swnic_peer *p, struct swnic_wire_hdr *h,
		    u8 type, u32 psn);
void swnic_send_ctl(struct swnic_wnet *wn, struct swnic_peer *p,
		    u8 type);
void swnic_send_reset(struct swnic_wnet *wn, struct swnic_peer *p,
		      u32 inc, u32 named);
void swnic_arm_exact(struct swnic_wnet *wn, ktime_t at);
/*
 * A request whose answer carries data (a read's, a fetching atomic's): a
 * target runs it only for a packet that names it (swnic_rx_packet()).
 */
static inline bool swnic_op_needs_name(u8 opcode)
{
	return opcode == SWNIC_OP_READ || opcode == SWNIC_OP_FETCH_ATOMIC ||
	       opcode == SWNIC_OP_COMPARE_ATOMIC;
}

void swnic_retransmit(struct swnic_wnet *wn, struct swnic_peer *p,
		      struct swnic_txpkt *t);
void swnic_txmsg_unpin(struct swnic_txmsg *tm);
void swnic_txmsg_free(struct swnic_txmsg *tm);
void swnic_req_done(struct swnic_peer *p, struct swnic_txmsg *tm,
		    int err);
int swnic_read_mr(struct swnic_peer *p, struct swnic_txmsg *tm,
		  u64 pos, void *buf, u32 len);
void swnic_peer_pump(struct swnic_wnet *wn, struct swnic_peer *p);
/* The share of rx_mem_mb what packets not naming us make may hold */
static inline u64 swnic_rx_unproven_share(void)
{
	return ((u64)READ_ONCE(swnic_rx_mem_mb) << 20) /
	       SWNIC_RX_UNPROVEN_SHARE;
}

void swnic_answer_queue(struct swnic_wnet *wn, struct swnic_peer *p,
			struct swnic_txmsg *tm);
void swnic_answer_free(struct swnic_wnet *wn, struct swnic_peer *p,
		       struct swnic_txmsg *tm);

/* udp_peer.c */
void swnic_peer_reset_rx(struct swnic_wnet *wn, struct swnic_peer *p);
void swnic_peer_reset_tx(struct swnic_wnet *wn, struct swnic_peer *p,
			 int err, unsigned int flags);
bool swnic_name6_addr(struct swnic_wnet *wn, __be32 name,
		      struct in6_addr *addr, int *ifindex);
__be32 swnic_name6_get(struct swnic_wnet *wn,
		       const struct in6_addr *addr, int ifindex,
		       bool create);
struct swnic_name6_user *swnic_name6_user(struct swnic_wnet *wn,
					  kuid_t uid, bool create);
bool swnic_name6_may_use(struct swnic_wnet *wn, __be32 name,
			 kuid_t uid);
void swnic_name6_publish(struct swnic_wnet *wn, __be32 name);
bool swnic_addr6_unicast(const struct in6_addr *addr);
int swnic_addr6_scope(const struct in6_addr *addr, int ifindex);
void swnic_peer_free(struct swnic_wnet *wn, struct swnic_peer *p);
bool swnic_peer_room(struct swnic_wnet *wn);
struct swnic_peer *swnic_peer_get(struct swnic_wnet *wn, __be32 ip,
				  __be16 port, const struct in6_addr *local,
				  bool create, bool remote);
struct swnic_peer *swnic_peer_get_posted(struct swnic_wnet *wn, __be32 ip,
					 __be16 port, kuid_t uid);
bool swnic_peer_post_refused(struct swnic_wnet *wn, __be32 ip, __be16 port,
			     kuid_t uid);
void swnic_peer_heard(struct swnic_wnet *wn, struct swnic_peer *p);
bool swnic_peer_bind(struct swnic_wnet *wn, struct swnic_peer *p);
/* A remote host's contexts together (swnic_peer_host_use()) */
struct swnic_host_use {
	u64 rx_mem;		/* their messages' share of the budget */
	u32 answers;		/* our answers waiting to go */
	u32 unproven;		/* ... of those, to contexts not proven */
	u32 held;		/* their sends we hold for a receive */
};

void swnic_peer_host_use(struct swnic_wnet *wn, const struct swnic_peer *p,
			 struct swnic_host_use *u);
void swnic_peer_retire(struct swnic_peer *p, u32 inc);
bool swnic_peer_retired(const struct swnic_peer *p, u32 inc);
void swnic_tick(struct swnic_wnet *wn);
bool swnic_ack_implied(struct swnic_peer *p);

/* udp_exec.c */
void *swnic_rxbuf_get(struct swnic_wnet *wn, u64 len, size_t *size);
void swnic_rxbuf_put(struct swnic_wnet *wn, void *buf, size_t size);
void swnic_kept_free(struct swnic_wnet *wn, bool all);
int swnic_rxmsg_read(const struct swnic_kmsg *km, u64 off, void *to,
		     size_t n);
bool swnic_rxmsg_keep(struct swnic_wnet *wn, struct swnic_rxmsg *rm,
		      u64 idx, struct sk_buff *skb, unsigned int off,
		      unsigned int n);
void swnic_rxmsg_free(struct swnic_wnet *wn, struct swnic_peer *p,
		      struct swnic_rxmsg *rm);
void swnic_rx_skb_kept(struct sk_buff *skb);
void swnic_held_forget(struct swnic_wnet *wn, struct swnic_peer *p);
void swnic_held_run(struct swnic_wnet *wn);
bool swnic_rx_exec(struct swnic_wnet *wn, struct swnic_device *sdev,
		   struct swnic_peer *p, struct swnic_rxmsg *rm);
struct swnic_device *swnic_rx_device(struct net *net, int ifindex);
void swnic_rx_run(struct swnic_wnet *wn, struct swnic_peer *p);

/* udp_post.c */
u32 swnic_udp_frag(struct swnic_device *sdev, size_t hlen, bool v6);
struct net *swnic_udp_get_net(struct swnic_device *sdev);

/* udp_rx.c */
void swnic_rx_packet(struct swnic_wnet *wn, struct sk_buff *skb,
		     unsigned int base, unsigned int plen);

/* udp.c */
void swnic_udp_data_ready(struct sock *sk);

#endif /* _SWNIC_UDP_INTERNAL_H */
