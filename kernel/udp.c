// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: the transport that reaches peers on other hosts (and in other
 * network namespaces, which are other hosts) over UDP. Documentation/
 * wire.rst has the packet formats, the peer state machine and the loss
 * recovery; in short:
 *
 * - One kernel UDP socket per network namespace (pernet) and family (IPv4,
 *   and IPv6 when the kernel has it), port udp_port, opened when a
 *   device is bound to a netdev there (or an endpoint of it is made).
 *   Their data_ready hook wakes the namespace's worker, which reads
 *   them (UDP_GRO: bursts whole) and does all the rest in process
 *   context - unless the datagram came in the context of a task that
 *   runs the round itself when it is done sending (inline sections:
 *   over veth, the sender's doorbell takes what it delivered).
 *   An IPv6 peer is named by 32 bits, as an IPv4 one is by its address
 *   (uapi swnic.h, struct swnic_addr6): the engine, the rings and the
 *   MRs' peer lists see only names.
 * - A peer context per remote (address, port): reliable, unordered packet
 *   delivery with 32-bit PSNs, cumulative ACK + SACK, RACK-style loss
 *   detection (a packet sent a reordering window before one that arrived
 *   is lost), and a retransmit timeout from the measured RTT with backoff
 *   for the tail. No handshake: a context is made by
 *   the first packet, named by a random incarnation on each side; a peer
 *   that restarts (or forgot us) is detected by its incarnation, and a
 *   peer that stays silent for peer_timeout_ms fails everything sent to it.
 * - Messages (requests): a send, tagged send, RMA write or read request,
 *   cut into MTU-sized fragments that each carry the whole message header
 *   and their offset. The target reassembles each message, then executes
 *   the messages of a peer context in their order (the ordering fi_info
 *   reports) and answers each with a RESP carrying its outcome - or, for
 *   a read, the data. The initiator's completion is posted when that
 *   answer arrives: after the data is placed (delivery complete).
 * - Every packet is hostile: lengths, types, incarnations, windows, and
 *   for every message the endpoint, its type, the auth key and the MR's
 *   key, bounds and access are checked; drops are counted by reason.
 *
 * Locking: one mutex per namespace (wn->lock) serialises the worker and
 * the posters; posters pin their buffers before taking it and copy
 * nothing from user memory under it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
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

static unsigned int udp_port = SWNIC_WIRE_UDP_PORT;
module_param(udp_port, uint, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of the wire in every network namespace (default 4793)");

static unsigned int peer_timeout_ms = 5000;
module_param(peer_timeout_ms, uint, 0644);
MODULE_PARM_DESC(peer_timeout_ms, "a peer silent this long fails what was sent to it (ms, default 5000)");

static unsigned int peer_idle_ms = 10000;
module_param(peer_idle_ms, uint, 0644);
MODULE_PARM_DESC(peer_idle_ms, "a peer context idle this long may be reused once a namespace has 1024 (ms, default 10000)");

static unsigned int rx_mem_mb = 512;
module_param(rx_mem_mb, uint, 0644);
MODULE_PARM_DESC(rx_mem_mb, "MiB of messages being received a namespace may hold (default 512)");

/* UDP GSO sends hand the packets' pages to the stack (swnic_udp_sendv()). */
static bool tx_splice = true;
module_param(tx_splice, bool, 0644);
MODULE_PARM_DESC(tx_splice, "UDP GSO sends take the packets' pages rather than copy them, where the kernel can (default 1)");

/*
 * A SEND, TSEND or WRITE of at least rx_keep_kb KiB stays in the packets it
 * came in until it runs, and is copied once, from them to its destination
 * (swnic_rxmsg_keep()); a smaller one is reassembled in a buffer first.
 */
static unsigned int rx_keep_kb = 16;
module_param(rx_keep_kb, uint, 0644);
MODULE_PARM_DESC(rx_keep_kb, "KiB from which a received message is kept in its packets, not copied to a buffer (0: never; default 16)");

#define SWNIC_WIN		256	/* PSNs in flight to a peer, oldest to next */
#define SWNIC_RX_WIN		1024	/* PSNs tracked past the cumulative ACK */
#define SWNIC_REO_MIN_US	250	/* RACK reordering window, at least */
#define SWNIC_REO_MULT_MAX	16	/* ... grown to at most 16 times that */
#define SWNIC_REO_CLEAN		4096	/* ACKs without a spurious one: shrink */
#define SWNIC_MAX_PEERS		1024	/* peer contexts per namespace */
#define SWNIC_PEERS_PER_SEC	256	/* new peer contexts per second */
#define SWNIC_MAX_MSGS		4096	/* requests outstanding to a peer */
/*
 * Requests of a peer taken past the oldest not run yet (exec_next): those
 * outstanding, and as many run ahead of a waiting one (swnic_rx_run()).
 */
#define SWNIC_RX_AHEAD		(2 * SWNIC_MAX_MSGS)
#define SWNIC_RCVBUF		(16 << 20) /* each socket's queue for the worker */
#define SWNIC_POLL_FALLBACK_US	400	/* busy polling: the worker's turn */
#define SWNIC_RTO_INIT_US	20000
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
	SWNIC_DROP_ADDR,	/* IPv6: not from a unicast peer, or to a group */
	__SWNIC_DROP_NUM
};

/* Their names in netlink (PEER_GET's counters, Documentation/wire.rst). */
static const char *const swnic_drop_names[__SWNIC_DROP_NUM] = {
	[SWNIC_DROP_SHORT] = "drop_short",
	[SWNIC_DROP_CSUM] = "drop_checksum",
	[SWNIC_DROP_VERSION] = "drop_version",
	[SWNIC_DROP_STALE] = "drop_stale",
	[SWNIC_DROP_WINDOW] = "drop_window",
	[SWNIC_DROP_DUP] = "drop_dup",
	[SWNIC_DROP_BAD_MSG] = "drop_bad_msg",
	[SWNIC_DROP_NO_MEM] = "drop_no_mem",
	[SWNIC_DROP_PEERS] = "drop_peers",
	[SWNIC_DROP_QUEUE] = "drop_queue",
	[SWNIC_DROP_NO_DEV] = "drop_no_dev",
	[SWNIC_DROP_ADDR] = "drop_addr",
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
	struct xarray users6;		/* swnic_name6_user by uid, @lock */
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
	u32 npeers;
	u32 peers_gen;			/* bumped when @peers changes */
	u64 rx_mem;			/* bytes of messages being received */
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
	unsigned int txpage_cur, txpage_off;
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
};

/* A reliable packet sent and not yet acknowledged. */
struct swnic_txpkt {
	struct list_head node;		/* peer->unacked, PSN order */
	u32 psn;
	bool retx;			/* sent again: no RTT sample */
	bool req;			/* a fragment of our request @req_id */
	u32 req_id;
	ktime_t stamp;			/* last (re)transmission */
	u8 tos;				/* its IP TOS: DSCP << 2 */
	u16 poff;			/* payload offset, if @pcsum is its sum */
	__wsum pcsum;			/* the payload's, summed as it was copied */
	u32 len;
	u8 *buf;			/* swnic_txbuf_get() */
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
	struct swnic_deferred done;
	bool last;			/* its last packet is made */
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
	unsigned long since;		/* first try to execute it */
	unsigned long retry_at;		/* no memory: not tried before */
	/* its destination out of reach (EFAULTLATER) */
	struct swnic_fault_wait fault;
	/*
	 * Executed, its payload freed: a record that takes its packets sent
	 * again, until every earlier message is executed too (exec_next).
	 */
	bool done;
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

static DEFINE_SPINLOCK(swnic_held_lock);

struct swnic_peer {
	struct list_head node;		/* wn->peers */
	__be32 ip;			/* IPv4 address, or IPv6 name */
	__be16 port;
	bool v6;			/* @ip is the name of: */
	struct in6_addr addr6;
	int scope;			/* link-local: the netdev's ifindex */
	int ifindex;			/* where its requests come in */
	u32 my_inc, their_inc;
	bool anon;			/* @my_inc sent a packet naming none */
	unsigned long heard;		/* jiffies: last valid packet */
	/* sending */
	u32 snd_nxt, snd_una;
	struct list_head unacked;	/* swnic_txpkt */
	u32 inflight;
	struct list_head txq;		/* swnic_txmsg with packets to make */
	struct list_head waiting;	/* our requests awaiting their answer */
	u32 nmsgs;			/* on txq and waiting */
	u32 next_msg_id;
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
	bool ack_due;			/* packets came since our last ACK */
	bool ack_now;			/* ... that no answer of ours covers */
	u8 ack_tos;			/* of the last request packet: ACKs' */
	u32 rx_dups;			/* its packets that came twice */
	struct list_head rxmsgs;
	u32 exec_next;			/* next msg_id to execute */
	struct list_head held;		/* its sends we hold: swnic_held */
	u32 nheld;
	/* our requests it holds (HELD answers) */
	u32 nheld_waiting;
	unsigned long ping_at;		/* jiffies: our last PING */
	/* statistics */
	u64 tx_bytes, rx_bytes, retx;
	u64 drops[__SWNIC_DROP_NUM];	/* of its packets, by reason */
};

static unsigned int swnic_udp_net_id;

/*
 * Each namespace's wire has a worker thread of its own, at the lowest
 * real-time priority (sched_set_fifo_low): applications busy-poll their
 * CQs on every CPU, and a worker of normal priority, even at nice -20,
 * waits for the spinning task's time slice to end before it runs
 * (EEVDF's run-to-parity: ~1.5 ms at two CPUs) - every packet's
 * latency would be that. A real-time thread preempts at once.
 */
static void swnic_wire_kick(struct swnic_wnet *wn)
{
	kthread_queue_work(wn->worker, &wn->work);
}

static struct swnic_wnet *swnic_wnet(struct net *net)
{
	return net_generic(net, swnic_udp_net_id);
}

static inline bool psn_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static void swnic_drop(struct swnic_wnet *wn, unsigned int why)
{
	atomic64_inc(&wn->drops[why]);
}

/* A drop of a packet known to come from @p: counted for it as well. */
static void swnic_peer_drop(struct swnic_wnet *wn, struct swnic_peer *p,
			    unsigned int why)
{
	swnic_drop(wn, why);
	p->drops[why]++;
}

/*
 * The reasons a packet can be dropped for once its peer is known (the
 * others happen before: checksum, version, peers, queue).
 */
static const u8 swnic_peer_drop_reasons[] = {
	SWNIC_DROP_SHORT, SWNIC_DROP_STALE, SWNIC_DROP_WINDOW, SWNIC_DROP_DUP,
	SWNIC_DROP_BAD_MSG, SWNIC_DROP_NO_MEM, SWNIC_DROP_NO_DEV,
};

static_assert(ARRAY_SIZE(swnic_peer_drop_reasons) <= SWNIC_PEER_DROPS_MAX);

/* ---- sending packets ---------------------------------------------------- */

/* Pages of a packet's own (@len bytes), or NULL. */
static void *swnic_txbuf_own(size_t len)
{
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_NOWARN,
					get_order(len));

	return page ? page_address(page) : NULL;
}

/*
 * A buffer of @len bytes for a packet (wn->lock held), or NULL, for
 * swnic_txbuf_put().
 */
static void *swnic_txbuf_get(struct swnic_wnet *wn, size_t len)
{
	struct page *page = wn->txpages[wn->txpage_cur];
	unsigned int i, n;
	void *buf;

	if (len > SWNIC_TXPAGE_SIZE)
		return swnic_txbuf_own(len);
	if (!page || wn->txpage_off + len > SWNIC_TXPAGE_SIZE) {
		/* The next free page of the ring ... */
		for (n = 1; n < SWNIC_TXPAGES; n++) {
			i = (wn->txpage_cur + n) % SWNIC_TXPAGES;
			page = wn->txpages[i];
			if (page && page_ref_count(page) == 1)
				break;
		}
		/* ... else a fresh one in the next slot. */
		if (n == SWNIC_TXPAGES) {
			i = (wn->txpage_cur + 1) % SWNIC_TXPAGES;
			if (wn->txpages[i]) {
				/* freed by its last user */
				put_page(wn->txpages[i]);
				wn->ntxpages--;
			}
			page = alloc_pages(GFP_KERNEL | __GFP_COMP |
					   __GFP_NOWARN | __GFP_NORETRY,
					   SWNIC_TXPAGE_ORDER);
			wn->txpages[i] = page;
			if (!page)	/* no 32 KiB in a row: its own */
				return swnic_txbuf_own(len);
			wn->ntxpages++;
			wn->txpage_allocs++;
		}
		wn->txpage_cur = i;
		wn->txpage_off = 0;
	}
	get_page(page);
	buf = page_address(page) + wn->txpage_off;
	/* Packets of a send, all as long, in a row (MTU - 28 is 4n). */
	wn->txpage_off = ALIGN(wn->txpage_off + len, 4);
	wn->spare_at = jiffies;
	return buf;
}

/* Let go of a packet's buffer (an skb that took its page keeps it). */
static void swnic_txbuf_put(void *buf)
{
	put_page(virt_to_head_page(buf));
}

/* Let go of the kept pages (those in use live on while used). */
static void swnic_txpages_free(struct swnic_wnet *wn)
{
	unsigned int i;

	for (i = 0; i < SWNIC_TXPAGES; i++) {
		if (wn->txpages[i])
			put_page(wn->txpages[i]);
		wn->txpages[i] = NULL;
	}
	wn->ntxpages = 0;
	wn->txpage_off = 0;
}

/* A packet of @len bytes. */
static struct swnic_txpkt *swnic_txpkt_alloc(struct swnic_wnet *wn,
					     size_t len)
{
	struct swnic_txpkt *t = kmalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return NULL;
	*t = (struct swnic_txpkt) { .len = len };
	t->buf = swnic_txbuf_get(wn, len);
	if (!t->buf) {
		kfree(t);
		return NULL;
	}
	return t;
}

static void swnic_txpkt_free(struct swnic_wnet *wn, struct swnic_txpkt *t)
{
	swnic_txbuf_put(t->buf);
	kfree(t);
}

/* Our end-to-end checksum over the whole packet (@buf, @len bytes). */
static void swnic_pkt_seal(void *buf, size_t len)
{
	struct swnic_wire_hdr *h = buf;

	h->csum = 0;
	h->csum = csum_fold(csum_partial(buf, len, 0));
}

/*
 * Seal a reliable packet: its payload was summed as it was copied in
 * (@t->pcsum, swnic_txmsg_copy()), so only the headers are read again.
 */
static void swnic_txpkt_seal(struct swnic_txpkt *t)
{
	struct swnic_wire_hdr *h = (void *)t->buf;
	__wsum sum;

	if (!t->poff) {
		swnic_pkt_seal(t->buf, t->len);
		return;
	}
	h->csum = 0;
	sum = csum_partial(t->buf, t->poff, 0);
	h->csum = csum_fold(csum_block_add(sum, t->pcsum, t->poff));
}

/*
 * Send sealed packets to @p: one datagram per kvec, or with @gso the
 * kvecs (each @gso bytes but the last) as one UDP GSO send that the stack
 * cuts into datagrams at @gso bytes - after the qdisc, in the device or
 * just before it - so the stack is crossed once for all of them. With
 * @splice (packets' buffers from swnic_txbuf_get(), at most
 * SWNIC_SPLICE_FRAGS page fragments in all) the skb takes their pages
 * rather than a copy (MSG_SPLICE_PAGES; where the kernel has none, or the
 * device does no scatter-gather, the stack copies).
 */
static int swnic_udp_sendv(struct swnic_wnet *wn, struct swnic_peer *p,
			   struct kvec *iov, unsigned int n, size_t len,
			   u16 gso, u8 tos, bool splice)
{
	u8 ctl[CMSG_SPACE(sizeof(u16)) + CMSG_SPACE(sizeof(int))]
		__aligned(8) = {};
	struct cmsghdr *cm = (void *)ctl;
	size_t clen = 0;
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = p->ip,
		.sin_port = p->port,
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = p->addr6,
		.sin6_port = p->port,
		.sin6_scope_id = p->scope,
	};
	struct msghdr msg = {
		.msg_name = &sin,
		.msg_namelen = sizeof(sin),
		.msg_flags = MSG_DONTWAIT,
	};
	struct socket *sock = wn->sock;

	if (p->v6) {
		msg.msg_name = &sin6;
		msg.msg_namelen = sizeof(sin6);
		sock = wn->sock6;
	}
	if (!sock)
		return -ENOTCONN;
	if (gso) {
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(u16));
		*(u16 *)CMSG_DATA(cm) = gso;
		clen += CMSG_SPACE(sizeof(u16));
		cm = (void *)(ctl + clen);
	}
	if (tos) {	/* the traffic class of the endpoint's work */
		cm->cmsg_level = p->v6 ? SOL_IPV6 : SOL_IP;
		cm->cmsg_type = p->v6 ? IPV6_TCLASS : IP_TOS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)CMSG_DATA(cm) = tos;
		clen += CMSG_SPACE(sizeof(int));
	}
	if (clen) {
		msg.msg_control = ctl;
		msg.msg_controllen = clen;
	}
#ifdef MSG_SPLICE_PAGES
	if (splice) {
		struct bio_vec bv[SWNIC_GSO_SEGS];
		unsigned int i;

		for (i = 0; i < n && i < ARRAY_SIZE(bv); i++)
			bvec_set_page(&bv[i], virt_to_page(iov[i].iov_base),
				      iov[i].iov_len,
				      offset_in_page(iov[i].iov_base));
		iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, i, len);
		msg.msg_flags |= MSG_SPLICE_PAGES;
		return sock_sendmsg(sock, &msg);
	}
#endif
	return kernel_sendmsg(sock, &msg, iov, n, len);
}

/* Send one sealed packet, counted as sent or refused. */
static void swnic_udp_send1(struct swnic_wnet *wn, struct swnic_peer *p,
			    struct kvec *iov, u8 tos)
{
	/* A packet the stack drops is lost like any other: recovered. */
	if (swnic_udp_sendv(wn, p, iov, 1, iov->iov_len, 0, tos, false) >= 0)
		wn->tx_pkts++;
	else
		wn->tx_errors++;
}

static void swnic_udp_xmit(struct swnic_wnet *wn, struct swnic_peer *p,
			   void *buf, size_t len, u8 tos)
{
	struct kvec iov = { .iov_base = buf, .iov_len = len };

	swnic_pkt_seal(buf, len);
	swnic_udp_send1(wn, p, &iov, tos);
}

static void swnic_hdr_init(struct swnic_peer *p, struct swnic_wire_hdr *h,
			   u8 type, u32 psn)
{
	p->anon |= !p->their_inc;
	*h = (struct swnic_wire_hdr) {
		.version = SWNIC_WIRE_VERSION,
		.type = type,
		.src_inc = cpu_to_be32(p->my_inc),
		.dst_inc = cpu_to_be32(p->their_inc),
		.psn = cpu_to_be32(psn),
	};
}

/* An unreliable control packet: ACK (with the SACK bitmap) or RESET. */
static void swnic_send_ctl(struct swnic_wnet *wn, struct swnic_peer *p,
			   u8 type)
{
	struct {
		struct swnic_wire_hdr h;
		struct swnic_wire_ack a;
	} pkt = {};
	size_t len = sizeof(pkt.h);
	u32 i;

	swnic_hdr_init(p, &pkt.h, type, type == SWNIC_PKT_ACK ? p->rcv_nxt : 0);
	if (type == SWNIC_PKT_ACK) {
		for (i = 0; i < SWNIC_SACK_BITS; i++) {
			u32 psn = p->rcv_nxt + 1 + i;

			if (test_bit(psn % SWNIC_RX_WIN, p->rcv_map))
				pkt.a.sack[i / 32] |= cpu_to_be32(BIT(i % 32));
		}
		pkt.a.dups = cpu_to_be32(p->rx_dups);
		len = sizeof(pkt);
		p->ack_due = false;
		p->ack_now = false;
	}
	swnic_udp_xmit(wn, p, &pkt, len, type == SWNIC_PKT_ACK ? p->ack_tos : 0);
}

/*
 * A RESET to the peer's incarnation @inc (not the one we know, maybe),
 * refusing a packet of it that named @named of ours (0: none). Its PSN
 * echoes @named: the peer takes the RESET only if that is whom it names
 * now, so that one drawn by a packet older than what it knows of us is
 * not taken for a new refusal.
 */
static void swnic_send_reset(struct swnic_wnet *wn, struct swnic_peer *p,
			     u32 inc, u32 named)
{
	struct swnic_wire_hdr h;

	swnic_hdr_init(p, &h, SWNIC_PKT_RESET, named);
	h.dst_inc = cpu_to_be32(inc);
	swnic_udp_xmit(wn, p, &h, sizeof(h), 0);
}

#define SWNIC_TIMER_SLACK_NS	(50 * NSEC_PER_USEC)

/* Have the worker run at @at, or earlier (wn->lock held). */
static void swnic_arm(struct swnic_wnet *wn, ktime_t at)
{
	if (wn->dead || (hrtimer_is_queued(&wn->timer) &&
			 !ktime_after(hrtimer_get_expires(&wn->timer), at)))
		return;
	hrtimer_start_range_ns(&wn->timer, at, SWNIC_TIMER_SLACK_NS,
			       HRTIMER_MODE_ABS);
}

/*
 * Have the worker run at @at (KTIME_MAX: not for a deadline), neither
 * earlier nor later: swnic_tick() knows every deadline left (wn->lock
 * held). A timer left at the probe time of a packet that its answer has
 * acknowledged since woke the worker for nothing, up to once a
 * millisecond in a ping-pong, and it took the wire's lock from the
 * applications.
 */
static void swnic_arm_exact(struct swnic_wnet *wn, ktime_t at)
{
	s64 late;

	if (wn->dead)
		return;
	if (at == KTIME_MAX) {
		/* Running already: its kick costs one round at most. */
		hrtimer_try_to_cancel(&wn->timer);
		return;
	}
	late = ktime_to_ns(ktime_sub(hrtimer_get_expires(&wn->timer), at));
	if (hrtimer_is_queued(&wn->timer) && late >= 0 &&
	    late <= SWNIC_TIMER_SLACK_NS)
		return;
	hrtimer_start_range_ns(&wn->timer, at, SWNIC_TIMER_SLACK_NS,
			       HRTIMER_MODE_ABS);
}

/*
 * May a new packet go to @p? The window spans PSNs, from the oldest not
 * yet ACKed to the next, not a count of packets in flight: packets SACKed
 * past a lost one leave the count, and a count would let the PSNs run
 * beyond what an ACK's bitmap speaks of - RACK would not see their loss,
 * the RTO alone would, and the receiver drops what lies past its window.
 * Under heavy loss a message then crawled from RTO to RTO.
 */
static bool swnic_wnd_open(const struct swnic_peer *p)
{
	const struct swnic_txpkt *t;

	if (list_empty(&p->unacked))
		return true;
	t = list_first_entry(&p->unacked, struct swnic_txpkt, node);
	return p->snd_nxt - t->psn < SWNIC_WIN;
}

static_assert(SWNIC_WIN <= SWNIC_SACK_BITS && SWNIC_WIN <= SWNIC_RX_WIN);

/* Give @t (a reliable packet) the next PSN and keep it until ACKed. */
static void swnic_track(struct swnic_wnet *wn, struct swnic_peer *p,
			struct swnic_txpkt *t)
{
	struct swnic_wire_hdr *h = (void *)t->buf;

	t->psn = p->snd_nxt++;
	swnic_hdr_init(p, h, h->type, t->psn);
	t->stamp = ktime_get();
	p->last_tx = t->stamp;
	if (list_empty(&p->unacked)) {
		/* The RTO runs from now. */
		p->rto_mark = t->stamp;
		p->probed = false;
		swnic_arm(wn, ktime_add_us(t->stamp,
					   min(p->rto_us, SWNIC_PTO_MIN_US)));
	}
	list_add_tail(&t->node, &p->unacked);
	p->inflight++;
	p->tx_bytes += t->len;
}

static void swnic_retransmit(struct swnic_wnet *wn, struct swnic_peer *p,
			     struct swnic_txpkt *t)
{
	struct swnic_wire_hdr *h;
	struct kvec iov;
	u8 *buf;

	t->retx = true;
	t->stamp = ktime_get();
	p->retx++;
	wn->retx_pkts++;
	/*
	 * Sent, a packet's bytes may be an skb's still (spliced: a queue,
	 * a receiver on this host keeping it): changed in a copy of them,
	 * never in place. No memory for the copy: this send is lost, as
	 * one the stack dropped, and loss recovery tries again.
	 */
	buf = swnic_txbuf_get(wn, t->len);
	if (!buf) {
		wn->tx_errors++;
		return;
	}
	memcpy(buf, t->buf, t->len);
	swnic_txbuf_put(t->buf);
	t->buf = buf;
	h = (void *)t->buf;
	iov = (struct kvec) { .iov_base = t->buf, .iov_len = t->len };

	/* The receiver may have learnt of us since: name it. */
	h->dst_inc = cpu_to_be32(p->their_inc);
	p->anon |= !p->their_inc;
	swnic_txpkt_seal(t);
	swnic_udp_send1(wn, p, &iov, t->tos);
}

/*
 * Copy @len bytes at @pos of a request's source to @buf, summing them on
 * the way: one pass over the data, not two. Return: their checksum.
 */
static __wsum swnic_txmsg_copy(struct swnic_txmsg *tm, u64 pos, u8 *buf,
			       u32 len)
{
	u64 at = tm->off + pos;
	__wsum sum = 0;
	u32 done = 0;

	if (!len)
		return 0;
	if (tm->abuf)
		return csum_partial_copy_nocheck(tm->abuf + pos, buf, len);
	if (tm->inline_src)
		return csum_partial_copy_nocheck(tm->inl + pos, buf, len);
	while (done < len) {
		struct page *page = tm->pages[at >> PAGE_SHIFT];
		u32 off = at & ~PAGE_MASK;
		u32 n = min_t(u32, len - done, PAGE_SIZE - off);
		void *from = kmap_local_page(page);

		sum = csum_block_add(sum, csum_partial_copy_nocheck(from + off,
								    buf + done,
								    n),
				     done);
		kunmap_local(from);
		done += n;
		at += n;
	}
	return sum;
}

static void swnic_txmsg_unpin(struct swnic_txmsg *tm)
{
	if (!tm->pages)
		return;
	/* A read's destination was written: dirty. */
	if (tm->m.opcode == SWNIC_OP_READ || swnic_atomic_fetches(tm->m.opcode))
		unpin_user_pages_dirty_lock(tm->pages, tm->npages, true);
	else
		unpin_user_pages(tm->pages, tm->npages);
	kvfree(tm->pages);
	tm->pages = NULL;
}

static void swnic_txmsg_free(struct swnic_txmsg *tm)
{
	swnic_txmsg_unpin(tm);
	if (tm->ep)
		swnic_ep_put(tm->ep);
	if (tm->dst)
		swnic_ep_put(tm->dst);
	kfree(tm->abuf);
	kfree(tm);
}

/* Complete one of our requests with @err (0 or a positive errno). */
static void swnic_req_done(struct swnic_peer *p, struct swnic_txmsg *tm,
			   int err)
{
	list_del(&tm->node);
	p->nmsgs--;
	if (tm->held)
		p->nheld_waiting--;
	swnic_complete_deferred(&tm->done, err ? 0 : tm->len, err);
	swnic_txmsg_free(tm);
}

/* Read @len bytes at @pos of peer @p's read from our MR. */
static int swnic_read_mr(struct swnic_peer *p, struct swnic_txmsg *tm,
			 u64 pos, void *buf, u32 len)
{
	struct swnic_mr_target t = {
		.key = tm->rkey,
		.addr = tm->raddr + pos,
		.len = len,
		.access = SWNIC_MR_ACCESS_REMOTE_READ,
		.auth_key = tm->auth_key,
	};
	struct swnic_mr_ref ref;
	int ret;

	/* tm->m: the read request, for MRs limited to some peers. */
	swnic_mr_target_from(&t, be32_to_cpu(tm->m.auth_key), p->ip,
			     be16_to_cpu(tm->m.src_port));
	ret = swnic_mr_ref_get(tm->dst->dom, &t, &ref);
	if (ret)
		return ret;
	/*
	 * Under the namespace's wire: an on-demand MR's pages that do not
	 * come at once (their owner keeps its mmap lock) are for a later
	 * try, until SWNIC_ROUND_FAULT_TIMEOUT made them a fault - as a request's
	 * destination is (swnic_rx_exec()). Waiting for them here held
	 * every packet of the namespace back, up to a second per read.
	 */
	ref.round = true;
	ref.last_try = swnic_fault_last_try(&tm->fault);
	ret = swnic_mr_ref_copy_from(&ref, 0, buf, len);
	if (!ret && !pos)	/* one read, however many packets */
		swnic_mr_ref_count(&ref, t.access);
	swnic_mr_ref_put(&ref);
	if (ret == -SWNIC_EFAULTLATER) {
		swnic_fault_later(&tm->fault);
		tm->fault_next = jiffies + 1;
	} else if (!ret) {
		swnic_fault_reached(&tm->fault);
	}
	return ret;
}

/*
 * Make the next packet of @tm, ready for swnic_track() (the caller sends
 * it). Return: the packet; NULL if @tm changed to a status answer (a read
 * from an MR that went away: make again); ERR_PTR(-ENOMEM), or
 * ERR_PTR(-SWNIC_EFAULTLATER): a read's data is out of reach for now.
 */
static struct swnic_txpkt *swnic_txmsg_make(struct swnic_wnet *wn,
					    struct swnic_peer *p,
					    struct swnic_txmsg *tm)
{
	size_t hlen = sizeof(struct swnic_wire_hdr);
	u32 n = min_t(u64, tm->len - tm->pos, tm->frag);
	struct swnic_wire_hdr *h;
	struct swnic_txpkt *t;
	int ret;

	if (tm->kind == SWNIC_TX_REQ)
		hlen += sizeof(struct swnic_wire_msg);
	else
		hlen += sizeof(struct swnic_wire_resp);
	if (tm->kind == SWNIC_TX_STATUS ||
	    (tm->kind == SWNIC_TX_REQ && tm->m.opcode == SWNIC_OP_READ))
		n = 0;
	t = swnic_txpkt_alloc(wn, hlen + n);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->tos = tm->tos;
	h = (void *)t->buf;

	if (tm->kind == SWNIC_TX_REQ) {
		struct swnic_wire_msg *m = (void *)(h + 1);

		h->type = tm->m.opcode == SWNIC_OP_READ ? SWNIC_PKT_READ_REQ :
							  SWNIC_PKT_DATA;
		t->req = true;
		t->req_id = tm->msg_id;
		*m = tm->m;
		m->offset = cpu_to_be64(tm->pos);
		t->pcsum = swnic_txmsg_copy(tm, tm->pos, (u8 *)(m + 1), n);
		t->poff = hlen;
	} else {
		struct swnic_wire_resp *r = (void *)(h + 1);

		h->type = SWNIC_PKT_RESP;
		*r = (struct swnic_wire_resp) {
			.msg_id = cpu_to_be32(tm->msg_id),
			.status = cpu_to_be32(tm->status),
			.offset = cpu_to_be64(tm->pos),
			.len = cpu_to_be32(n),
			.flags = cpu_to_be32(tm->resp_flags),
		};
		if (tm->kind == SWNIC_TX_READ_DATA) {
			ret = swnic_read_mr(p, tm, tm->pos, r + 1, n);
			if (ret == -SWNIC_EFAULTLATER) {
				swnic_txpkt_free(wn, t);
				return ERR_PTR(ret);
			}
			if (ret) {
				/* The MR went away: the read's outcome now. */
				swnic_txpkt_free(wn, t);
				tm->kind = SWNIC_TX_STATUS;
				tm->status = -ret;
				return NULL;
			}
		}
		if (tm->kind == SWNIC_TX_ATOMIC_DATA) {
			t->pcsum = swnic_txmsg_copy(tm, tm->pos, (u8 *)(r + 1),
						    n);
			t->poff = hlen;
		}
	}
	tm->pos += n;
	if (tm->kind == SWNIC_TX_STATUS || tm->pos >= tm->len)
		tm->last = true;
	return t;
}

/* swnic_peer_gso() for an IPv6 peer: its route in the namespace. */
static bool swnic_peer_gso6(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct flowi6 fl6 = {
		.daddr = p->addr6,
		.flowi6_oif = p->scope,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;
	netdev_features_t f;
	bool ok = false;

	dst = ip6_route_output(wn->net, NULL, &fl6);
	if (!dst->error) {
		f = dst->dev->features;
		ok = (f & NETIF_F_GSO) && (f & NETIF_F_SG) &&
		     (f & (NETIF_F_HW_CSUM | NETIF_F_IPV6_CSUM));
	}
	dst_release(dst);
	return ok;
}

/*
 * Can packets to @p go as UDP GSO sends? When the route's device does
 * generic segmentation (not turned off: `ethtool -K DEV gso off` makes
 * every packet its own send, as TCP's segments then are) and checksum
 * offload, which UDP GSO needs. Looked up again every second.
 */
static bool swnic_peer_gso(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct flowi4 fl4 = {
		.daddr = p->ip,
		.flowi4_proto = IPPROTO_UDP,
	};
	netdev_features_t f;
	struct rtable *rt;

	if (p->gso_when && time_before(jiffies, p->gso_when + HZ))
		return p->gso;
	p->gso_when = jiffies ?: 1;
	p->gso = false;
	if (p->v6)
		return p->gso = swnic_peer_gso6(wn, p);
	rt = ip_route_output_key(wn->net, &fl4);
	if (IS_ERR(rt))
		return false;
	f = rt->dst.dev->features;
	p->gso = (f & NETIF_F_GSO) && (f & NETIF_F_SG) &&
		 (f & (NETIF_F_HW_CSUM | NETIF_F_IP_CSUM));
	ip_rt_put(rt);
	return p->gso;
}

/*
 * The page fragments a spliced send adds for a packet's buffer (@buf,
 * @len bytes): one per page it touches, but the first if it goes on from
 * where the previous packet's buffer (ending at @prev) ended in that page.
 */
static unsigned int swnic_buf_frags(const void *buf, size_t len,
				    const void *prev)
{
	unsigned long a = (unsigned long)buf;
	unsigned int n = ((a + len - 1) >> PAGE_SHIFT) - (a >> PAGE_SHIFT) + 1;

	return n - (buf == prev && offset_in_page(a));
}

/* Sends take the packets' pages: if wanted, and if the kernel can. */
static bool swnic_splice_on(void)
{
#ifdef MSG_SPLICE_PAGES
	return READ_ONCE(tx_splice);
#else
	return false;
#endif
}

/*
 * Send the next packets of @tm that the window allows: with UDP GSO as
 * many equal-sized ones as one send takes (a message's fragments are, but
 * its last), else one. Return: 0; -ENOMEM if out of memory (the tick
 * retries); -SWNIC_EFAULTLATER if @tm's next packet is a read's data out
 * of reach for now (the tick tries again, other messages may go first).
 */
static int swnic_txmsg_send(struct swnic_wnet *wn, struct swnic_peer *p,
			    struct swnic_txmsg *tm)
{
	unsigned int max = swnic_peer_gso(wn, p) ? SWNIC_GSO_SEGS : 1;
	bool splice = max > 1 && swnic_splice_on();
	unsigned int n = 0, i, frags = 0;
	struct kvec iov[SWNIC_GSO_SEGS];
	struct swnic_txpkt *t;
	size_t bytes = 0;
	int ok = 0;
	int ret;

	while (n < max && !tm->last && swnic_wnd_open(p)) {
		/* Spliced, the next packet's pages must fit, at worst. */
		if (splice && n && frags + 1 +
		    DIV_ROUND_UP(iov[0].iov_len, PAGE_SIZE) > SWNIC_SPLICE_FRAGS)
			break;
		t = swnic_txmsg_make(wn, p, tm);
		if (IS_ERR(t)) {
			ok = PTR_ERR(t);
			break;
		}
		if (!t)
			continue;	/* now a status: make that */
		swnic_track(wn, p, t);
		swnic_txpkt_seal(t);
		frags += swnic_buf_frags(t->buf, t->len,
					 n ? iov[n - 1].iov_base +
					     iov[n - 1].iov_len : NULL);
		iov[n++] = (struct kvec) { .iov_base = t->buf,
					   .iov_len = t->len };
		bytes += t->len;
		if (n == 1)	/* a send of at most SWNIC_GSO_BYTES */
			max = min_t(unsigned int, max,
				    max_t(unsigned int, SWNIC_GSO_BYTES / t->len, 1));
		else if (t->len < iov[0].iov_len)
			break;	/* the last may be shorter, only */
	}
	if (n > 1) {
		ret = swnic_udp_sendv(wn, p, iov, n, bytes, iov[0].iov_len,
				      tm->tos, splice);
		/*
		 * Not spliced after all (EMSGSIZE: fragments): copied. Not
		 * a send dropped for want of memory, which a copy repeats.
		 */
		if (ret < 0 && splice && ret != -ENOBUFS && ret != -ENOMEM &&
		    ret != -EAGAIN) {
			splice = false;
			ret = swnic_udp_sendv(wn, p, iov, n, bytes,
					      iov[0].iov_len, tm->tos, false);
		}
		if (ret >= 0) {
			wn->tx_pkts += n;
			wn->gso_sends++;
			wn->tx_spliced += splice;
			return ok;
		}
		/* Dropped by the stack: lost, and recovered, as any. */
		if (ret != -EINVAL && ret != -EIO) {
			wn->tx_errors += n;
			return ok;
		}
		/* Refused (no offload after all): one by one. */
		p->gso = false;
	}
	for (i = 0; i < n; i++)
		swnic_udp_send1(wn, p, &iov[i], tm->tos);
	return ok;
}

/*
 * Send what the window allows, message after message; one whose read data
 * is out of reach for now waits, and the next ones go past it. A waiting
 * one is tried again a tick later at the soonest, not at every call (each
 * ACK): a peer with thousands of reads waiting must not make every ACK
 * thousands of MR walks under the wire's lock.
 */
static void swnic_peer_pump(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct swnic_txmsg *tm, *tmp;
	int ret;

	lockdep_assert_held(&wn->lock);
	list_for_each_entry_safe(tm, tmp, &p->txq, node) {
		if (swnic_fault_waits(&tm->fault) &&
		    time_before(jiffies, tm->fault_next))
			continue;
		ret = 0;
		while (!ret && !tm->last && swnic_wnd_open(p))
			ret = swnic_txmsg_send(wn, p, tm);
		if (ret == -SWNIC_EFAULTLATER)
			continue;
		if (!tm->last)		/* the window is shut, or no memory */
			break;
		list_del(&tm->node);
		if (tm->kind == SWNIC_TX_REQ) {
			/* Its pages stay pinned: a restarted peer needs it again. */
			list_add_tail(&tm->node, &p->waiting);
		} else {
			swnic_txmsg_free(tm);
		}
	}
}

/* ---- peer contexts ------------------------------------------------------ */

static u32 swnic_new_inc(void)
{
	u32 inc;

	do {
		inc = get_random_u32();
	} while (!inc);
	return inc;
}

/*
 * A buffer for a message of @len bytes (> 0) to be reassembled in: a
 * kept one at most twice that size, else a new one. Its contents are
 * whatever was there: a message is whole only when each fragment arrived.
 */
static void *swnic_rxbuf_get(struct swnic_wnet *wn, u64 len, size_t *size)
{
	struct swnic_rxbuf *b, *best = NULL;
	void *buf;

	for (b = wn->spares; b < wn->spares + SWNIC_RX_SPARES; b++)
		if (b->buf && b->size >= len && b->size / 2 <= len &&
		    (!best || b->size < best->size))
			best = b;
	if (!best) {
		*size = len;
		return kvmalloc(len, GFP_KERNEL);
	}
	buf = best->buf;
	*size = best->size;
	best->buf = NULL;
	wn->spare_mem -= *size;
	wn->spare_at = jiffies;
	wn->spare_reuses++;
	return buf;
}

/* Keep @buf (@size bytes) for a later message, or free it. */
static void swnic_rxbuf_put(struct swnic_wnet *wn, void *buf, size_t size)
{
	struct swnic_rxbuf *b, *slot = NULL;

	if (buf && size >= SWNIC_RX_SPARE_MIN && size <= SWNIC_RX_SPARE_MAX)
		for (b = wn->spares; b < wn->spares + SWNIC_RX_SPARES; b++)
			if (!slot || !b->buf ||
			    (slot->buf && b->size < slot->size))
				slot = b;
	/* The smallest kept gives way to a larger one. */
	if (slot && slot->buf && slot->size >= size)
		slot = NULL;
	if (!slot) {
		kvfree(buf);
		return;
	}
	if (slot->buf) {
		wn->spare_mem -= slot->size;
		kvfree(slot->buf);
	}
	*slot = (struct swnic_rxbuf) { .buf = buf, .size = size };
	wn->spare_mem += size;
	wn->spare_at = jiffies;
}

/* Free the kept buffers (those of packets too, @all). */
static void swnic_kept_free(struct swnic_wnet *wn, bool all)
{
	struct swnic_rxbuf *b;

	for (b = wn->spares; b < wn->spares + SWNIC_RX_SPARES; b++) {
		kvfree(b->buf);
		b->buf = NULL;
	}
	wn->spare_mem = 0;
	if (all)
		swnic_txpages_free(wn);
}

/* Bytes per fragment of @rm (checked on its first: >= SWNIC_FRAG_MIN). */
static u32 swnic_rxmsg_frag(const struct swnic_rxmsg *rm)
{
	return be32_to_cpu(rm->m.frag);
}

/* Fragment @idx of kept message @rm: its length. */
static unsigned int swnic_rxpiece_len(const struct swnic_rxmsg *rm, u64 idx)
{
	u32 frag = swnic_rxmsg_frag(rm);

	return min_t(u64, frag, rm->len - idx * frag);
}

/* swnic_kmsg.read of a kept message: what arrived, whatever it is in. */
static int swnic_rxmsg_read(const struct swnic_kmsg *km, u64 off, void *to,
			    size_t n)
{
	const struct swnic_rxmsg *rm = container_of(km, struct swnic_rxmsg,
						    km);
	u64 idx;
	u32 at;

	if (off > rm->len || n > rm->len - off)
		return -EFAULT;
	idx = div_u64_rem(off, swnic_rxmsg_frag(rm), &at);
	while (n) {
		const struct swnic_rxpiece *pc = &rm->pieces[idx];
		unsigned int c = min_t(size_t, n,
				       swnic_rxpiece_len(rm, idx) - at);

		if (!pc->skb)
			memcpy(to, pc->buf + at, c);
		else if (skb_copy_bits(pc->skb, pc->off + at, to, c))
			return -EFAULT;
		to += c;
		n -= c;
		at = 0;
		idx++;
	}
	return 0;
}

/*
 * Keep fragment @idx (@n bytes at @off in @skb) of @rm in its packet, or
 * copy it. A message reserves twice its length and its table of pieces
 * (swnic_rx_fragment()); each packet it keeps is charged whole (its
 * truesize) the first time, once per message, even if others keep it
 * too, so a peer cannot hold more than the budget by spreading messages
 * over packets. A packet is kept only if the fragments still to come
 * could all be copied in what is left: a message admitted always
 * completes.
 */
static bool swnic_rxmsg_keep(struct swnic_wnet *wn, struct swnic_rxmsg *rm,
			     u64 idx, struct sk_buff *skb, unsigned int off,
			     unsigned int n)
{
	struct swnic_rxpiece *pc = &rm->pieces[idx];
	u64 rest = rm->len - rm->got - n;

	if (skb == rm->last_skb ||
	    rm->used + skb->truesize + rest <= rm->size) {
		if (skb != rm->last_skb) {
			rm->used += skb->truesize;
			rm->last_skb = skb;
		}
		pc->skb = skb_get(skb);
		pc->off = off;
		return true;
	}
	pc->buf = kmalloc(n, GFP_KERNEL);
	if (!pc->buf || skb_copy_bits(skb, off, pc->buf, n)) {
		kfree(pc->buf);
		pc->buf = NULL;
		return false;
	}
	rm->used += n;
	wn->rx_kept_copied++;
	return true;
}

/* Free @rm's payload: executed, it is kept only as a record (@done). */
static void swnic_rxmsg_release(struct swnic_wnet *wn, struct swnic_rxmsg *rm)
{
	u64 i, n;

	wn->rx_mem -= rm->size;	/* the buffer's: maybe more */
	swnic_rxbuf_put(wn, rm->buf, rm->size);
	rm->buf = NULL;
	rm->size = 0;
	if (rm->pieces) {
		n = DIV_ROUND_UP_ULL(rm->len, swnic_rxmsg_frag(rm));
		for (i = 0; i < n; i++) {
			if (!test_bit(i, rm->frags))
				continue;
			if (rm->pieces[i].skb)
				consume_skb(rm->pieces[i].skb);
			else
				kfree(rm->pieces[i].buf);
		}
		kvfree(rm->pieces);
		rm->pieces = NULL;
	}
	kvfree(rm->frags);
	rm->frags = NULL;
}

/*
 * Is this @rm's last try at a receive buffer out of reach? Its first try
 * that found one so (-SWNIC_EFAULTLATER) is SWNIC_ROUND_FAULT_TIMEOUT ago, and
 * SWNIC_FAULT_MIN_TRIES tries.
 */
static bool swnic_rxmsg_last_try(const struct swnic_rxmsg *rm)
{
	return swnic_fault_last_try(&rm->fault);
}

static void swnic_rxmsg_free(struct swnic_wnet *wn, struct swnic_rxmsg *rm)
{
	list_del(&rm->node);
	swnic_rxmsg_release(wn, rm);
	wn->rx_mem -= sizeof(*rm);
	kfree(rm);
}

/*
 * A packet a message keeps (@skb, ours alone once its burst is read): it
 * lets go of what it holds of the stack - route, conntrack entry,
 * extensions - which a kept packet must not pin.
 */
static void swnic_rx_skb_kept(struct sk_buff *skb)
{
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb_ext_reset(skb);
}

/* ---- delivery complete: sends held for a receive ------------------------ */

static void swnic_held_free(struct swnic_held *h)
{
	swnic_txmsg_free(h->tm);
	kfree(h);
	swnic_obj_add(SWNIC_OBJ_WIRE_HELD, -1);
}

/*
 * struct swnic_deferred.fn of a held send: a receive took it (@err 0; or
 * FI_DISCARD dropped it, which is the application's delivery too), or it
 * never will be (its endpoint closed: ECONNABORTED). Called once, under
 * the receiver's rx_lock: queue the outcome for the worker.
 */
static void swnic_held_notify(void *arg, int err)
{
	struct swnic_held *h = arg;
	struct swnic_wnet *wn;

	spin_lock(&swnic_held_lock);
	wn = h->wn;
	if (wn) {
		h->err = err;
		h->done = true;
		list_add_tail(&h->done_node, &wn->held_done);
		if (!wn->held_dead)
			swnic_wire_kick(wn);
	}
	spin_unlock(&swnic_held_lock);
	if (!wn)	/* its peer context forgot it: nobody to tell */
		swnic_held_free(h);
}

/* The peer context forgets the sends it held (wn->lock held). */
static void swnic_held_forget(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct swnic_held *h, *tmp;
	bool done;

	lockdep_assert_held(&wn->lock);
	list_for_each_entry_safe(h, tmp, &p->held, node) {
		list_del(&h->node);
		spin_lock(&swnic_held_lock);
		done = h->done;
		if (done)
			list_del(&h->done_node);
		else
			h->wn = NULL;	/* swnic_held_notify() frees it */
		spin_unlock(&swnic_held_lock);
		if (done)
			swnic_held_free(h);
	}
	p->nheld = 0;
}

/* Send the outcomes of the held sends that have one (worker). */
static void swnic_held_run(struct swnic_wnet *wn)
{
	struct swnic_held *h, *tmp;
	struct swnic_peer *p;
	LIST_HEAD(done);

	lockdep_assert_held(&wn->lock);
	spin_lock(&swnic_held_lock);
	list_splice_init(&wn->held_done, &done);
	spin_unlock(&swnic_held_lock);
	/* Off wn->held_done, but still on their peers: no one else frees. */
	list_for_each_entry_safe(h, tmp, &done, done_node) {
		p = h->peer;
		list_del(&h->done_node);
		list_del(&h->node);
		p->nheld--;
		if (h->err)
			wn->held_failed++;
		else
			wn->held_taken++;
		h->tm->status = h->err;
		list_add_tail(&h->tm->node, &p->txq);
		h->tm = NULL;
		kfree(h);
		swnic_obj_add(SWNIC_OBJ_WIRE_HELD, -1);
		swnic_peer_pump(wn, p);
	}
}

/* Forget what we received from the peer's old incarnation. */
static void swnic_peer_reset_rx(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct swnic_rxmsg *rm, *tmp;

	list_for_each_entry_safe(rm, tmp, &p->rxmsgs, node)
		swnic_rxmsg_free(wn, rm);
	swnic_held_forget(wn, p);
	p->rcv_nxt = 0;
	p->exec_next = 0;
	bitmap_zero(p->rcv_map, SWNIC_RX_WIN);
	p->ack_due = false;
	p->ack_now = false;
	p->rx_dups = 0;
}

/* swnic_peer_reset_tx() flags */
#define SWNIC_RESET_RETRY	BIT(0)	/* what was never seen goes again */
#define SWNIC_RESET_KEEP_INC	BIT(1)	/* our old packets name another */

/*
 * Start again towards the peer, from PSN 0: it restarted, forgot us, or
 * stopped answering. Our requests fail with @err, except, with
 * SWNIC_RESET_RETRY, those the old incarnation never acknowledged a
 * packet of: nothing of them was seen, and they go again, first to the
 * new incarnation (in their order, numbered from 0 as its context
 * expects). Answers to the old incarnation's requests are dropped: their
 * initiator is gone.
 *
 * Our packets still on their way must not be taken for the new ones, so
 * we start a new incarnation too - unless the caller knows that they all
 * name an incarnation of the peer that is not the one we name from now on
 * (SWNIC_RESET_KEEP_INC), which drops them, and none of ours named none
 * (@p->anon). Keeping it then is what lets two ends settle that learn of
 * each other's new incarnation at once: were each to start another on
 * learning of the other's, they would chase each other until the
 * requests failed.
 */
static void swnic_peer_reset_tx(struct swnic_wnet *wn, struct swnic_peer *p,
				int err, unsigned int flags)
{
	bool retry = flags & SWNIC_RESET_RETRY;

	struct swnic_txmsg *tm, *ttmp;
	struct swnic_txpkt *t, *tmp;
	LIST_HEAD(again);

	list_for_each_entry_safe(t, tmp, &p->unacked, node) {
		list_del(&t->node);
		swnic_txpkt_free(wn, t);
	}
	p->inflight = 0;
	/* Oldest first: the waiting requests were made before the queued. */
	list_splice_tail_init(&p->txq, &p->waiting);
	list_for_each_entry_safe(tm, ttmp, &p->waiting, node) {
		if (tm->kind != SWNIC_TX_REQ) {
			list_del(&tm->node);
			swnic_txmsg_free(tm);
		} else if (retry && !tm->held &&
			   (!p->acked_any ||
			    psn_before(p->acked_req, tm->msg_id))) {
			list_move_tail(&tm->node, &again);
		} else {
			swnic_req_done(p, tm, err);
		}
	}
	if (!(flags & SWNIC_RESET_KEEP_INC) || p->anon) {
		p->my_inc = swnic_new_inc();
		p->anon = false;
	}
	p->snd_nxt = 0;
	p->snd_una = 0;
	p->next_msg_id = 0;
	p->acked_any = false;
	p->rto_us = SWNIC_RTO_INIT_US;
	p->srtt_us = 0;
	p->min_rtt_us = 0;
	p->reo_mult = 1;
	p->reo_clean = 0;
	p->dups_seen = 0;
	list_for_each_entry(tm, &again, node) {
		tm->msg_id = p->next_msg_id++;
		tm->m.msg_id = cpu_to_be32(tm->msg_id);
		tm->pos = 0;
		tm->last = false;	/* every packet is made again */
		tm->got = 0;
		tm->err = 0;
	}
	list_splice_tail(&again, &p->txq);
}

/* ---- IPv6 peers' names ---------------------------------------------------- */

/*
 * Names are never reclaimed, and cannot safely be: once handed out, a
 * name lives where the kernel cannot see it - in a process's AVs and its
 * library's cache, in completions' source addresses, in a shared AV's
 * table, in MR peer lists, in work requests not yet posted. A name
 * reused for another address would silently send a stale holder's data
 * to another host; a name made to fail would fail a peer an application
 * still holds. So the table is bounded instead (SWNIC_MAX_ADDR6): peer
 * contexts (never freed either) make at most SWNIC_MAX_PEERS names,
 * users without CAP_NET_ADMIN at most half of the table together and
 * SWNIC_ADDR6_PER_USER each.
 */

/*
 * The address IPv6 name @name stands for (any context: under the lock or
 * RCU, or with the namespace referenced). Return: false if none.
 */
static bool swnic_name6_addr(struct swnic_wnet *wn, __be32 name,
			     struct in6_addr *addr, int *ifindex)
{
	/* Pairs with swnic_name6_get(): entries below it are written. */
	u32 n = smp_load_acquire(&wn->nnames6), i = ntohl(name) - 1;

	if (!swnic_addr_is_name6((__force u32)name) || i >= n)
		return false;
	*addr = wn->names6->e[i].addr;
	*ifindex = wn->names6->e[i].ifindex;
	return true;
}

static u32 swnic_name6_hash(const struct swnic_names6 *t,
			    const struct in6_addr *addr, int ifindex)
{
	return jhash2((const u32 *)addr, 4, t->seed ^ ifindex) &
	       (SWNIC_NAME6_BUCKETS - 1);
}

/* The entry of name @name (under wn->lock), or NULL. */
static struct swnic_name6 *swnic_name6_entry(struct swnic_wnet *wn,
					     __be32 name)
{
	u32 i = ntohl(name) - 1;

	lockdep_assert_held(&wn->lock);
	if (!swnic_addr_is_name6((__force u32)name) || i >= wn->nnames6)
		return NULL;
	return &wn->names6->e[i];
}

/*
 * The name of @addr (@ifindex: link-local, its netdev; else 0), made if
 * @create and the namespace has room (under wn->lock). Return: 0 if none.
 */
static __be32 swnic_name6_get(struct swnic_wnet *wn,
			      const struct in6_addr *addr, int ifindex,
			      bool create)
{
	struct swnic_names6 *t = wn->names6;
	u32 n = wn->nnames6, h, i;

	lockdep_assert_held(&wn->lock);
	if (t) {
		h = swnic_name6_hash(t, addr, ifindex);
		for (i = t->head[h]; i; i = t->e[i - 1].next)
			if (ipv6_addr_equal(&t->e[i - 1].addr, addr) &&
			    t->e[i - 1].ifindex == ifindex)
				return htonl(i);
	}
	if (!create || n >= SWNIC_MAX_ADDR6 || wn->dead)
		return 0;
	if (!t) {
		t = kvzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
		if (!t)
			return 0;
		t->seed = get_random_u32();
		wn->names6 = t;
		h = swnic_name6_hash(t, addr, ifindex);
	}
	t->e[n].addr = *addr;
	t->e[n].ifindex = ifindex;
	t->e[n].next = t->head[h];
	t->head[h] = n + 1;
	/* Pairs with swnic_name6_addr(): the entry before its count. */
	smp_store_release(&wn->nnames6, n + 1);
	return htonl(n + 1);
}

/* The record of @uid's names (under wn->lock), made if @create. */
static struct swnic_name6_user *swnic_name6_user(struct swnic_wnet *wn,
						 kuid_t uid, bool create)
{
	unsigned long idx = from_kuid(&init_user_ns, uid);
	struct swnic_name6_user *u;

	lockdep_assert_held(&wn->lock);
	u = xa_load(&wn->users6, idx);
	if (u || !create)
		return u;
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return NULL;
	if (xa_err(xa_store(&wn->users6, idx, u, GFP_KERNEL_ACCOUNT))) {
		kfree(u);
		return NULL;
	}
	return u;
}

/*
 * May @uid's domains learn and use name @name (under wn->lock)? A public
 * name (a peer context's, or the namespace's own), or one @uid named.
 */
static bool swnic_name6_may_use(struct swnic_wnet *wn, __be32 name,
				kuid_t uid)
{
	struct swnic_name6 *e = swnic_name6_entry(wn, name);
	struct swnic_name6_user *u;

	if (!e)
		return false;
	if (e->public)
		return true;
	u = swnic_name6_user(wn, uid, false);
	return u && test_bit(ntohl(name) - 1, u->named);
}

/* Name @name is one every user of the namespace may see (under wn->lock). */
static void swnic_name6_publish(struct swnic_wnet *wn, __be32 name)
{
	struct swnic_name6 *e = swnic_name6_entry(wn, name);

	if (e)
		e->public = true;
}

/*
 * Can @addr be an IPv6 peer's address? Unicast, not this host's loopback
 * nor IPv4-mapped (an IPv4 peer is named by its IPv4 address).
 */
static bool swnic_addr6_unicast(const struct in6_addr *addr)
{
	int type = ipv6_addr_type(addr);

	return !(type & (IPV6_ADDR_MULTICAST | IPV6_ADDR_LOOPBACK |
			 IPV6_ADDR_MAPPED)) && type != IPV6_ADDR_ANY;
}

/* The scope a packet's or a user's @addr is named in: see swnic_name6. */
static int swnic_addr6_scope(const struct in6_addr *addr, int ifindex)
{
	return ipv6_addr_type(addr) & IPV6_ADDR_LINKLOCAL ? ifindex : 0;
}

static struct swnic_peer *swnic_peer_find(struct swnic_wnet *wn, __be32 ip,
					  __be16 port)
{
	struct swnic_peer *p;

	list_for_each_entry(p, &wn->peers, node)
		if (p->ip == ip && p->port == port)
			return p;
	return NULL;
}

static void swnic_peer_free(struct swnic_wnet *wn, struct swnic_peer *p)
{
	swnic_peer_reset_tx(wn, p, ECONNABORTED, 0);
	swnic_peer_reset_rx(wn, p);
	list_del(&p->node);
	wn->npeers--;
	wn->peers_gen++;
	kfree(p);
}

/* Nothing in flight to or from @p. */
static bool swnic_peer_quiet(const struct swnic_peer *p)
{
	return list_empty(&p->unacked) && list_empty(&p->waiting) &&
	       list_empty(&p->txq) && list_empty(&p->rxmsgs);
}

/*
 * The context to reuse when the namespace has SWNIC_MAX_PEERS: the one
 * heard from longest ago of those idle - nothing in flight either way,
 * none of its sends held, no ACK due, silent for peer_idle_ms. Without
 * this, a namespace that heard from 1024 sources (forged ones too: a
 * request makes a context) could never make another, not even to post
 * to a new peer. Should an evicted peer talk again, a new context is
 * made: its first packet draws a RESET (its incarnation is new, or ours
 * is), and the requests no incarnation acknowledged go again, as after
 * any restart. Return: the context, or NULL if none is idle enough.
 */
static struct swnic_peer *swnic_peer_evictable(struct swnic_wnet *wn)
{
	unsigned long idle = msecs_to_jiffies(READ_ONCE(peer_idle_ms));
	struct swnic_peer *p, *old = NULL;

	list_for_each_entry(p, &wn->peers, node) {
		if (!swnic_peer_quiet(p) || p->nheld || p->nheld_waiting ||
		    p->ack_due || time_before(jiffies, p->heard + idle))
			continue;
		if (!old || time_before(p->heard, old->heard))
			old = p;
	}
	return old;
}

/* May one more context be made (reusing an idle one if need be)? */
static bool swnic_peer_room(struct swnic_wnet *wn)
{
	return wn->npeers < SWNIC_MAX_PEERS || swnic_peer_evictable(wn);
}

/*
 * The peer context for @ip/@port; made if @create (capped, reusing an
 * idle one at the cap; and when @remote, made by a packet, rate-limited
 * too).
 */
static struct swnic_peer *swnic_peer_get(struct swnic_wnet *wn, __be32 ip,
					 __be16 port, bool create, bool remote)
{
	struct swnic_peer *p = swnic_peer_find(wn, ip, port);

	if (p || !create)
		return p;
	/* Rate-limited when made by packets, not by posters; capped. */
	if (remote && !__ratelimit(&wn->peer_limit))
		return NULL;
	if (wn->npeers >= SWNIC_MAX_PEERS) {
		p = swnic_peer_evictable(wn);
		if (!p)
			return NULL;
		swnic_peer_free(wn, p);
		wn->peers_evicted++;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	if (swnic_addr_is_name6((__force u32)ip)) {
		if (!swnic_name6_addr(wn, ip, &p->addr6, &p->scope)) {
			kfree(p);
			return NULL;
		}
		/* Its address is in swnic peer show from now on. */
		swnic_name6_publish(wn, ip);
		p->v6 = true;
	}
	p->ip = ip;
	p->port = port;
	p->my_inc = swnic_new_inc();
	p->rto_us = SWNIC_RTO_INIT_US;
	p->reo_mult = 1;
	p->heard = jiffies;
	INIT_LIST_HEAD(&p->unacked);
	INIT_LIST_HEAD(&p->txq);
	INIT_LIST_HEAD(&p->waiting);
	INIT_LIST_HEAD(&p->rxmsgs);
	INIT_LIST_HEAD(&p->held);
	list_add_tail(&p->node, &wn->peers);
	wn->npeers++;
	wn->peers_gen++;
	return p;
}

/* ---- posting: the transport ops ---------------------------------------- */

/* Payload bytes a packet of @kind carries on @sdev's netdev. */
static u32 swnic_udp_frag(struct swnic_device *sdev, size_t hlen, bool v6)
{
	struct net_device *nd;
	u32 mtu = 1500;

	rcu_read_lock();
	nd = rcu_dereference(sdev->netdev);
	if (nd)
		mtu = READ_ONCE(nd->mtu);
	rcu_read_unlock();
	mtu = max_t(u32, mtu, 576);
	return mtu - (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) -
	       sizeof(struct udphdr) - sizeof(struct swnic_wire_hdr) - hlen;
}

/*
 * The namespace of @sdev's netdev, referenced (its wire state must not go
 * away under a poster), or NULL if the device is not bound (any more).
 */
static struct net *swnic_udp_get_net(struct swnic_device *sdev)
{
	struct net_device *nd;
	struct net *net = NULL;

	rcu_read_lock();
	nd = rcu_dereference(sdev->netdev);
	if (nd)
		net = maybe_get_net(dev_net(nd));
	rcu_read_unlock();
	return net;
}

/*
 * Pin the poster's buffer: the source a request's packets are made from
 * later, or where a read's data lands (@gup_flags FOLL_WRITE) - in the
 * worker, which must never fault or take the poster's mmap lock. In the
 * domain's engine, a kernel worker that must not wait for user space, a
 * page that the poster's userfaultfd or FUSE server holds back is a
 * fault, not a wait (swnic_pin_user_nowait()); in the poster's own call
 * the fast pin may wait for it, as the poster's own fault would.
 */
static int swnic_txmsg_pin(struct swnic_txmsg *tm, u64 addr, u64 len,
			   unsigned int gup_flags)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned long n = DIV_ROUND_UP((addr & ~PAGE_MASK) + len, PAGE_SIZE);
	long done = 0, ret;

	tm->pages = kvmalloc_array(n, sizeof(*tm->pages), GFP_KERNEL_ACCOUNT);
	if (!tm->pages)
		return -ENOMEM;
	tm->off = addr & ~PAGE_MASK;
	while (done < n) {
		unsigned long at = start + done * PAGE_SIZE;
		long nr = min_t(long, n - done, 512);

		if (swnic_may_wait_mm(current->mm))
			ret = pin_user_pages_fast(at, nr, gup_flags,
						  tm->pages + done);
		else
			ret = swnic_pin_user_nowait(at, nr, gup_flags,
						    tm->pages + done);
		if (ret <= 0) {
			unpin_user_pages(tm->pages, done);
			kvfree(tm->pages);
			tm->pages = NULL;
			return ret ?: -EFAULT;
		}
		done += ret;
	}
	tm->npages = n;
	return 0;
}

/*
 * An atomic's request: its operands (then its compare values) copied as
 * the payload, the op, datatype and count in the header (wire.rst), the
 * result buffer pinned for the old values the answer brings.
 */
static int swnic_udp_atomic_prep(struct swnic_txmsg *tm,
				 const struct swnic_sqe *sqe, const void *kbuf)
{
	bool compare = sqe->opcode == SWNIC_OP_COMPARE_ATOMIC;
	u32 len = sqe->len, plen = 0;

	if (sqe->atomic_op != SWNIC_AOP_ATOMIC_READ)
		plen = compare ? 2 * len : len;
	if (plen) {
		tm->abuf = kmalloc(plen, GFP_KERNEL_ACCOUNT);
		if (!tm->abuf)
			return -ENOMEM;
		void __user *op = u64_to_user_ptr(sqe->addr);
		void __user *cmp = u64_to_user_ptr(sqe->data);
		int ret = 0;

		/* Never waiting for the poster's pager (copy.c). */
		if (kbuf)
			memcpy(tm->abuf, kbuf, len);
		else
			ret = swnic_copy_from_user_nowait(tm->abuf, op, len);
		if (!ret && compare)
			ret = swnic_copy_from_user_nowait(tm->abuf + len, cmp,
							  len);
		if (ret)
			return ret;
	}
	tm->len = plen;
	tm->m.len = cpu_to_be64(plen);
	tm->m.tag = cpu_to_be64(sqe->atomic_op | sqe->datatype << 8);
	tm->m.data = cpu_to_be64(len / swnic_adt_size(sqe->datatype));
	if (!swnic_atomic_fetches(sqe->opcode))
		return 0;
	tm->rlen = len;
	return swnic_txmsg_pin(tm, sqe->tag, len, FOLL_WRITE);
}

/* Queue a request of @src to the peer that @sqe names. */
static int __swnic_udp_request(struct swnic_wnet *wn, struct swnic_ep *src,
			       const struct swnic_sqe *sqe, const void *kbuf)
{
	struct swnic_txmsg *tm;
	struct swnic_peer *p;
	u32 key;
	int ret;

	ret = swnic_ep_sqe_key(src, sqe, &key);
	if (ret)
		return ret;
	tm = kzalloc(sizeof(*tm), GFP_KERNEL_ACCOUNT);
	if (!tm)
		return -ENOMEM;
	tm->kind = SWNIC_TX_REQ;
	tm->tos = src->dscp << 2;
	tm->len = sqe->opcode == SWNIC_OP_READ ? 0 : sqe->len;
	tm->frag = swnic_udp_frag(src->dom->sdev, sizeof(tm->m),
				  swnic_addr_is_name6(sqe->dest_addr));
	tm->m = (struct swnic_wire_msg) {
		.opcode = sqe->opcode,
		.flags = (sqe->flags & SWNIC_SQE_REMOTE_DATA ?
			  SWNIC_MSGF_REMOTE_DATA : 0) |
			 (sqe->flags & SWNIC_SQE_DELIVERY ?
			  SWNIC_MSGF_DELIVERY | SWNIC_MSGF_HOLD : 0) |
			 SWNIC_MSGF_RESP_ACKS,
		.ep_type = src->type,
		.src_port = cpu_to_be16(swnic_ep_src_port(src)),
		.dst_port = cpu_to_be16(sqe->dest_port),
		.auth_key = cpu_to_be32(key),
		.uid = cpu_to_be32(from_kuid_munged(&init_user_ns,
						    src->dom->uid)),
		.frag = cpu_to_be32(tm->frag),
		.len = cpu_to_be64(sqe->len),
		.tag = cpu_to_be64(sqe->tag),
		.data = cpu_to_be64(sqe->data),
		.raddr = cpu_to_be64(sqe->raddr),
		.rkey = cpu_to_be64(sqe->rkey),
	};
	if (swnic_atomic_opcode(sqe->opcode)) {
		ret = swnic_udp_atomic_prep(tm, sqe, kbuf);
		if (ret) {
			swnic_txmsg_free(tm);
			return ret;
		}
	} else if (kbuf) {
		memcpy(tm->inl, kbuf, sqe->len);
		tm->inline_src = true;
	} else if (sqe->len) {
		ret = swnic_txmsg_pin(tm, sqe->addr, sqe->len,
				      sqe->opcode == SWNIC_OP_READ ?
				      FOLL_WRITE : 0);
		if (ret) {
			kfree(tm);
			return ret;
		}
	}

	mutex_lock(&wn->lock);
	ret = -ENETDOWN;
	if (wn->dead || !wn->sock)
		goto err;
	/*
	 * An IPv6 name, but no IPv6 socket; or a name that is neither
	 * public nor named by the poster's user (one it can only have
	 * guessed: it would publish another user's peer).
	 */
	ret = -EHOSTUNREACH;
	if (swnic_addr_is_name6(sqe->dest_addr) &&
	    (!wn->sock6 ||
	     !swnic_name6_may_use(wn, (__force __be32)sqe->dest_addr,
				  src->dom->uid)))
		goto err;
	ret = -EAGAIN;
	p = swnic_peer_get(wn, (__force __be32)sqe->dest_addr,
			   htons(udp_port), true, false);
	if (!p || p->nmsgs >= SWNIC_MAX_MSGS)
		goto err;
	kref_get(&src->ref);
	tm->ep = src;
	swnic_deferred_hold(&tm->done, src, sqe);
	tm->msg_id = p->next_msg_id++;
	tm->m.msg_id = cpu_to_be32(tm->msg_id);
	if (list_empty(&p->unacked) && list_empty(&p->waiting))
		p->heard = jiffies;	/* the silence starts now */
	list_add_tail(&tm->node, &p->txq);
	p->nmsgs++;
	swnic_peer_pump(wn, p);
	mutex_unlock(&wn->lock);
	return SWNIC_DELIVER_DEFERRED;
err:
	mutex_unlock(&wn->lock);
	swnic_txmsg_free(tm);
	return ret;
}

static int swnic_udp_request(struct swnic_ep *src, const struct swnic_sqe *sqe,
			     const void *kbuf)
{
	struct net *net = swnic_udp_get_net(src->dom->sdev);
	int ret;

	if (!net)
		return -EHOSTUNREACH;
	ret = __swnic_udp_request(swnic_wnet(net), src, sqe, kbuf);
	put_net(net);
	return ret;
}

static int swnic_udp_send(struct swnic_ep *src, const struct swnic_sqe *sqe,
			  const void *kbuf)
{
	return swnic_udp_request(src, sqe, kbuf);
}

static int swnic_udp_rma_read(struct swnic_ep *src,
			      const struct swnic_sqe *sqe)
{
	return swnic_udp_request(src, sqe, NULL);
}

/**
 * swnic_udp_reaches() - is @addr a peer on another host, through @sdev?
 * @sdev: a device; bound to a netdev it reaches every other address
 * @addr: IPv4 or an IPv6 peer's name, network order (the local
 *	  transport took this host's)
 *
 * Return: true if the device is bound and @addr is a unicast address.
 */
bool swnic_udp_reaches(struct swnic_device *sdev, __be32 addr)
{
	struct net_device *nd;
	struct in6_addr a6;
	bool ret = false;
	int ifindex;

	if (!swnic_addr_is_name6((__force u32)addr))
		return rcu_access_pointer(sdev->netdev) && addr &&
		       !ipv4_is_multicast(addr) && !ipv4_is_lbcast(addr) &&
		       !ipv4_is_zeronet(addr);
	/* An IPv6 peer's name: one the namespace has. */
	rcu_read_lock();
	nd = rcu_dereference(sdev->netdev);
	if (nd)
		ret = swnic_name6_addr(swnic_wnet(dev_net(nd)), addr, &a6,
				       &ifindex);
	rcu_read_unlock();
	return ret;
}

const struct swnic_transport swnic_transport_udp = {
	.name = "udp",
	.max_msg_size = SWNIC_MAX_MSG_SIZE,
	.reaches = swnic_udp_reaches,
	.send = swnic_udp_send,
	.rma_write = swnic_udp_send,
	.rma_read = swnic_udp_rma_read,
	.atomic = swnic_udp_request,
};

/* ---- receiving: acknowledgments ---------------------------------------- */

static void swnic_rtt_sample(struct swnic_peer *p, s64 us)
{
	u32 rtt = clamp_t(s64, us, 1, SWNIC_RTO_MAX_US);

	if (!p->min_rtt_us || rtt < p->min_rtt_us)
		p->min_rtt_us = rtt;
	if (!p->srtt_us) {
		p->srtt_us = rtt;
		p->rttvar_us = rtt / 2;
	} else {
		u32 d = abs((s32)(p->srtt_us - rtt));

		p->rttvar_us = (3 * p->rttvar_us + d) / 4;
		p->srtt_us = (7 * p->srtt_us + rtt) / 8;
	}
	p->rto_us = clamp_t(u32, p->srtt_us + 4 * p->rttvar_us,
			    SWNIC_RTO_MIN_US, SWNIC_RTO_MAX_US);
}

/* @t (reliable, ours) arrived: it goes. */
static void swnic_pkt_acked(struct swnic_wnet *wn, struct swnic_peer *p,
			    struct swnic_txpkt *t)
{
	if (t->req && (!p->acked_any || psn_before(p->acked_req, t->req_id))) {
		p->acked_req = t->req_id;
		p->acked_any = true;
	}
	list_del(&t->node);
	p->inflight--;
	swnic_txpkt_free(wn, t);
}

/*
 * An answer to our request @id came: the target answers a request only
 * once it has all of it, so every packet of the request arrived. They
 * are acknowledged by it (the target sends no ACK of its own for packets
 * its answers cover: swnic_ack_implied()); the RTT is sampled from them
 * as from an ACK.
 */
static void swnic_rx_implicit_ack(struct swnic_wnet *wn, struct swnic_peer *p,
				  u32 id)
{
	struct swnic_txpkt *t, *tmp;
	ktime_t now = ktime_get();
	bool progress = false;

	list_for_each_entry_safe(t, tmp, &p->unacked, node) {
		if (!t->req || t->req_id != id)
			continue;
		if (!t->retx)
			swnic_rtt_sample(p, ktime_us_delta(now, t->stamp));
		swnic_pkt_acked(wn, p, t);
		progress = true;
	}
	if (!progress)
		return;
	p->rto_mark = now;
	p->probed = false;
	swnic_peer_pump(wn, p);
}

static void swnic_rx_ack(struct swnic_wnet *wn, struct swnic_peer *p,
			 u32 cum, const struct swnic_wire_ack *a, u32 dups)
{
	struct swnic_txpkt *t, *tmp;
	ktime_t now = ktime_get(), rack = 0;
	bool progress = false;
	s64 reo;

	if (psn_before(p->snd_nxt, cum))
		return;		/* acknowledges what we never sent */
	list_for_each_entry_safe(t, tmp, &p->unacked, node) {
		u32 d = t->psn - cum - 1;
		bool sacked = !psn_before(t->psn, cum) && d < SWNIC_SACK_BITS &&
			      (be32_to_cpu(a->sack[d / 32]) & BIT(d % 32));

		if (!psn_before(t->psn, cum) && !sacked)
			continue;
		if (!t->retx)
			swnic_rtt_sample(p, ktime_us_delta(now, t->stamp));
		/*
		 * The latest transmission known to have arrived (RACK). A
		 * retransmission only if acknowledged at least the least
		 * round trip after it went (RFC 8985): sooner, it is the
		 * original that arrived (the retransmission was spurious),
		 * and its time would make every packet sent before it look
		 * lost - a cascade of spurious retransmissions. Later ones
		 * the peer reports in @dups, and the window grows.
		 */
		if (ktime_after(t->stamp, rack) &&
		    (!t->retx || ktime_us_delta(now, t->stamp) >=
				 p->min_rtt_us)) {
			rack = t->stamp;
		}
		swnic_pkt_acked(wn, p, t);
		progress = true;
	}
	if (psn_before(p->snd_una, cum))
		p->snd_una = cum;
	if (progress) {
		p->rto_mark = now;
		p->probed = false;
	}
	/*
	 * Retransmissions the peer got twice (it counts them): the path
	 * reorders more than RACK's window allowed - packets sent from two
	 * CPUs take two backlogs - so the window grows, as RACK's does on
	 * DSACK (RFC 8985); after SWNIC_REO_CLEAN packets ACKed with none,
	 * it shrinks again.
	 */
	if ((s32)(dups - p->dups_seen) > 0) {	/* not an older ACK's */
		wn->spurious += dups - p->dups_seen;
		p->dups_seen = dups;
		p->reo_mult = min_t(u32, p->reo_mult + 1, SWNIC_REO_MULT_MAX);
		p->reo_clean = 0;
	} else if (progress && ++p->reo_clean >= SWNIC_REO_CLEAN) {
		p->reo_mult = max_t(u32, p->reo_mult - 1, 1);
		p->reo_clean = 0;
	}
	/*
	 * RACK: a packet (or its retransmission) sent a reordering window
	 * before one that arrived is lost: send it again now, without
	 * waiting for the timeout. A lost retransmission is found the same
	 * way, by its own time. Only of packets this ACK can speak of: one
	 * past its bitmap may have arrived (the receiver tracks more than
	 * the bitmap shows), and once a retransmission is acknowledged,
	 * every packet first sent before it would look lost.
	 */
	reo = (s64)p->reo_mult * max_t(s64, p->srtt_us / 4, SWNIC_REO_MIN_US);
	if (rack) {
		list_for_each_entry(t, &p->unacked, node)
			if (t->psn - cum <= SWNIC_SACK_BITS &&
			    ktime_us_delta(rack, t->stamp) > reo) {
				swnic_retransmit(wn, p, t);
				wn->rack_retx++;
			}
	}
	swnic_peer_pump(wn, p);
}

/* ---- receiving: executing a peer's requests ----------------------------- */

/* The endpoint a message names, if it takes it. Return: 0 or -errno. */
static int swnic_rx_target(struct swnic_device *sdev,
			   const struct swnic_wire_msg *m, struct swnic_ep **out,
			   u32 *mr_key)
{
	u32 want = be32_to_cpu(m->auth_key), key;
	struct swnic_ep *ep;

	ep = swnic_ep_lookup(sdev, be16_to_cpu(m->dst_port));
	if (!ep)
		return -ECONNREFUSED;
	key = READ_ONCE(ep->dom->auth_key);
	smp_rmb();	/* pairs with swnic_domain_close() */
	if (ep->type != m->ep_type || READ_ONCE(ep->dom->closed) ||
	    swnic_domain_exited(ep->dom) || READ_ONCE(ep->dead)) {
		swnic_ep_put(ep);
		return -ECONNREFUSED;
	}
	/*
	 * As on one host: a key reaches targets holding it; without one, a
	 * domain reaches its own user's (the uid the peer's kernel names).
	 */
	if (want ? key != want && !swnic_ep_holds_key(ep, want) :
	    (key || from_kuid_munged(&init_user_ns, ep->dom->uid) !=
		    be32_to_cpu(m->uid))) {
		swnic_ep_put(ep);
		return -EACCES;
	}
	*mr_key = key;	/* the MRs of its domain are under the domain's key */
	*out = ep;
	return 0;
}

/* An RMA write: place it in the target's MR, count, post remote data. */
static int swnic_rx_write(struct swnic_ep *dst, struct swnic_peer *p,
			  struct swnic_rxmsg *rm, u32 mr_key)
{
	bool notify = rm->m.flags & SWNIC_MSGF_REMOTE_DATA;
	struct swnic_mr_target t = {
		.key = be64_to_cpu(rm->m.rkey),
		.addr = be64_to_cpu(rm->m.raddr),
		.len = rm->len,
		.access = SWNIC_MR_ACCESS_REMOTE_WRITE,
		.auth_key = mr_key,
	};
	struct swnic_cqe cqe = {
		.flags = SWNIC_CQE_REMOTE_WRITE | SWNIC_CQE_REMOTE_DATA,
		.data = be64_to_cpu(rm->m.data),
		.len = rm->len,
		.src_addr = (__force u32)p->ip,
		.src_port = be16_to_cpu(rm->m.src_port),
	};
	struct swnic_mr_ref ref;
	int ret;

	if (notify && !swnic_cq_reserve(dst->rx_cq))
		return -EAGAIN;
	swnic_mr_target_from(&t, be32_to_cpu(rm->m.auth_key), p->ip,
			     be16_to_cpu(rm->m.src_port));
	if (rm->len) {
		ret = swnic_mr_ref_get(dst->dom, &t, &ref);
		if (!ret) {
			ref.round = true;
			ref.last_try = swnic_rxmsg_last_try(rm);
			ret = rm->pieces ?
			      swnic_mr_ref_copy_kmsg(&ref, 0, &rm->km,
						     rm->len) :
			      swnic_mr_ref_copy_to(&ref, 0, rm->buf, rm->len);
			if (!ret)
				swnic_mr_ref_count(&ref, t.access);
			swnic_mr_ref_put(&ref);
		}
		if (ret) {
			if (notify)
				swnic_cq_unreserve(dst->rx_cq);
			return ret;
		}
	}
	swnic_cntr_inc(dst->cntr[SWNIC_EP_CNTR_REMOTE_WRITE], false);
	if (notify)
		swnic_cq_post(dst->rx_cq, &cqe, true);
	return 0;
}

/*
 * A peer's atomic: check what the header says against the payload, apply
 * it to the target's MR, count it; a fetching one answers with the old
 * values (@tm becomes ATOMIC_DATA).
 */
static int swnic_rx_atomic(struct swnic_device *sdev, struct swnic_ep *dst,
			   struct swnic_peer *p, struct swnic_rxmsg *rm,
			   u32 mr_key, struct swnic_txmsg *tm)
{
	const struct swnic_wire_msg *m = &rm->m;
	u64 tag = be64_to_cpu(m->tag), count = be64_to_cpu(m->data), len;
	struct swnic_atomic a = {
		.opcode = m->opcode,
		.op = tag & 0xff,
		.dt = (tag >> 8) & 0xff,
		.round = true,
		.last_try = swnic_rxmsg_last_try(rm),
	};
	struct swnic_mr_target t = {
		.key = be64_to_cpu(m->rkey),
		.addr = be64_to_cpu(m->raddr),
		.auth_key = mr_key,
	};
	bool compare = a.opcode == SWNIC_OP_COMPARE_ATOMIC;
	int ret;

	if (tag >> 16)
		return -EINVAL;
	ret = swnic_atomic_valid(a.opcode, a.op, a.dt);
	if (ret)
		return ret;
	a.size = swnic_adt_size(a.dt);
	if (!count || count > SWNIC_ATOMIC_MAX / a.size)
		return -EINVAL;
	a.count = count;
	len = count * a.size;
	if (rm->len != (a.op == SWNIC_AOP_ATOMIC_READ ? 0 :
			compare ? 2 * len : len))
		return -EINVAL;
	if (rm->len)
		a.operand = rm->buf;
	if (compare)
		a.compare = (u8 *)rm->buf + len;
	if (swnic_atomic_fetches(a.opcode)) {
		a.result = kmalloc(len, GFP_KERNEL);
		if (!a.result)
			return -EAGAIN;
	}
	swnic_mr_target_from(&t, be32_to_cpu(m->auth_key), p->ip,
			     be16_to_cpu(m->src_port));
	ret = swnic_atomic_apply(dst->dom, &t, &a);
	if (ret) {
		kfree(a.result);
		return ret;
	}
	swnic_cntr_inc(dst->cntr[a.opcode == SWNIC_OP_ATOMIC ?
				 SWNIC_EP_CNTR_REMOTE_WRITE :
				 SWNIC_EP_CNTR_REMOTE_READ], false);
	if (a.result) {
		tm->kind = SWNIC_TX_ATOMIC_DATA;
		tm->abuf = a.result;
		tm->len = len;
		tm->frag = swnic_udp_frag(sdev, sizeof(struct swnic_wire_resp),
					  p->v6);
	}
	return 0;
}

static void swnic_queue_answer(struct swnic_peer *p, struct swnic_txmsg *tm)
{
	list_add_tail(&tm->node, &p->txq);
}

/*
 * A peer's send or tagged send, into @dst's posted receive or unexpected
 * queue. A delivery-complete one the initiator lets us hold (DELIVERY |
 * HOLD) that is buffered as unexpected is answered HELD (@tm), and its
 * outcome later (struct swnic_held). Return: 0 or -errno.
 */
static int swnic_rx_send(struct swnic_wnet *wn, struct swnic_ep *dst,
			 struct swnic_peer *p, struct swnic_rxmsg *rm,
			 struct swnic_txmsg *tm)
{
	const struct swnic_wire_msg *m = &rm->m;
	struct swnic_sqe sqe = {
		.opcode = m->opcode,
		.flags = m->flags & SWNIC_MSGF_REMOTE_DATA ?
			 SWNIC_SQE_REMOTE_DATA : 0,
		.len = rm->len,
		.tag = be64_to_cpu(m->tag),
		.data = be64_to_cpu(m->data),
	};
	struct swnic_msg_src src = {
		.addr = p->ip,
		.port = be16_to_cpu(m->src_port),
		.auth_key = be32_to_cpu(m->auth_key),
		.round = true,
		.last_try = swnic_rxmsg_last_try(rm),
	};
	struct swnic_held *h = NULL;
	int err;

	if ((m->flags & (SWNIC_MSGF_DELIVERY | SWNIC_MSGF_HOLD)) ==
	    (SWNIC_MSGF_DELIVERY | SWNIC_MSGF_HOLD)) {
		/* Bounded: a peer cannot pin our memory without end. */
		if (p->nheld >= SWNIC_MAX_MSGS)
			return -EAGAIN;
		h = kzalloc(sizeof(*h), GFP_KERNEL);
		if (h)
			h->tm = kzalloc(sizeof(*h->tm), GFP_KERNEL);
		if (!h || !h->tm) {
			kfree(h);
			return -EAGAIN;
		}
		swnic_obj_add(SWNIC_OBJ_WIRE_HELD, 1);
		*h->tm = (struct swnic_txmsg) {
			.kind = SWNIC_TX_STATUS,
			.msg_id = tm->msg_id,
			.tos = tm->tos,
		};
		/* Before it can be notified: the worker finds it by these. */
		h->wn = wn;
		h->peer = p;
		sqe.flags |= SWNIC_SQE_DELIVERY;
		src.notify = swnic_held_notify;
		src.notify_arg = h;
	}
	if (rm->pieces)
		src.kmsg = &rm->km;
	err = swnic_recv_deliver(dst, &src, &sqe,
				 rm->pieces ? NULL : rm->buf ?: "");
	if (err != SWNIC_DELIVER_DEFERRED) {
		if (h)
			swnic_held_free(h);
		return err;
	}
	/* Held (maybe taken already: then on wn->held_done, sent later). */
	list_add_tail(&h->node, &p->held);
	p->nheld++;
	tm->resp_flags = SWNIC_RESPF_HELD;
	return 0;
}

/*
 * Execute @rm (complete, its turn). Return: false to retry it later (the
 * target is out of resources).
 */
static bool swnic_rx_exec(struct swnic_wnet *wn, struct swnic_device *sdev,
			  struct swnic_peer *p, struct swnic_rxmsg *rm)
{
	const struct swnic_wire_msg *m = &rm->m;
	struct mem_cgroup *memcg, *old_memcg;
	struct swnic_txmsg *tm;
	struct swnic_ep *dst = NULL;
	u32 mr_key = 0;
	int err;

	tm = kzalloc(sizeof(*tm), GFP_KERNEL);
	if (!tm)
		return false;
	tm->msg_id = rm->msg_id;
	tm->tos = rm->tos;	/* the answer travels as the request did */
	tm->kind = SWNIC_TX_STATUS;
	err = sdev ? swnic_rx_target(sdev, m, &dst, &mr_key) : -ECONNREFUSED;
	if (err)
		goto answer;

	/*
	 * What the request makes the kernel keep for the target (an
	 * unexpected message, the receive it takes from its RQ) is charged
	 * to the target's owner, as a socket's receive memory is to the
	 * socket's: not to whichever task runs the round - an inline
	 * section's or a busy poller's, another user's maybe - nor to none
	 * (the worker's).
	 */
	memcg = get_mem_cgroup_from_mm(dst->dom->mm);
	old_memcg = set_active_memcg(memcg);
	switch (m->opcode) {
	case SWNIC_OP_SEND:
	case SWNIC_OP_TSEND:
		err = swnic_rx_send(wn, dst, p, rm, tm);
		break;
	case SWNIC_OP_WRITE:
		err = swnic_rx_write(dst, p, rm, mr_key);
		break;
	case SWNIC_OP_READ:
		/* Its answer is the data, read from the MR as it is sent. */
		tm->kind = SWNIC_TX_READ_DATA;
		tm->len = be64_to_cpu(m->len);
		tm->frag = swnic_udp_frag(sdev, sizeof(struct swnic_wire_resp),
					  p->v6);
		tm->raddr = be64_to_cpu(m->raddr);
		tm->rkey = be64_to_cpu(m->rkey);
		tm->auth_key = mr_key;
		tm->m = *m;	/* who asked: swnic_read_mr() */
		tm->dst = dst;
		dst = NULL;
		swnic_cntr_inc(tm->dst->cntr[SWNIC_EP_CNTR_REMOTE_READ], false);
		if (!tm->len)
			tm->kind = SWNIC_TX_STATUS;
		err = 0;
		break;
	case SWNIC_OP_ATOMIC:
	case SWNIC_OP_FETCH_ATOMIC:
	case SWNIC_OP_COMPARE_ATOMIC:
		err = swnic_rx_atomic(sdev, dst, p, rm, mr_key, tm);
		break;
	default:
		err = -EOPNOTSUPP;
	}
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
	if (dst)
		swnic_ep_put(dst);
	/*
	 * EINTR is not the target's answer: the round runs in a task with a
	 * fatal signal (an inline section's, a busy poller's), whose killable
	 * waits gave up. Another round takes the message again, as one the
	 * target had no room for - a send (nothing was delivered) or a write
	 * (the same bytes again); an atomic may have applied some of its
	 * elements, and answers so.
	 */
	if (err == -EINTR && m->opcode != SWNIC_OP_SEND &&
	    m->opcode != SWNIC_OP_TSEND && m->opcode != SWNIC_OP_WRITE)
		goto answer;
	/*
	 * Its receive buffer is out of reach for now (the receiver's other
	 * threads hold its mmap lock, or the page went again): a later round
	 * tries again, until SWNIC_ROUND_FAULT_TIMEOUT made it a fault. Meanwhile
	 * the wire serves everyone else, the peer's requests to other
	 * endpoints too (swnic_rx_run()).
	 */
	if (err == -SWNIC_EFAULTLATER) {
		swnic_fault_later(&rm->fault);
		wn->fault_waits++;
		swnic_txmsg_free(tm);
		return false;
	}
	swnic_fault_reached(&rm->fault);
	/*
	 * No memory for it in the receiver's cgroup: no room, as a full
	 * unexpected buffer, but tried again only SWNIC_NOMEM_RETRY later -
	 * each try reclaims in that cgroup, under the namespace's wire.
	 */
	if (err == -ENOMEM) {
		rm->retry_at = jiffies + SWNIC_NOMEM_RETRY;
		err = -EAGAIN;
	}
	if ((err == -EAGAIN || err == -EINTR) &&
	    time_before(jiffies, rm->since + SWNIC_DELIVER_TIMEOUT)) {
		swnic_txmsg_free(tm);
		return false;
	}
answer:
	tm->status = -err;
	swnic_queue_answer(p, tm);
	return true;
}

/* The swnic device a packet that came in on @ifindex is for. */
static struct swnic_device *swnic_rx_device(struct net *net, int ifindex)
{
	struct swnic_device *sdev, *found = NULL;
	struct net_device *nd;

	/*
	 * Under RCU, not swnic_devices_lock: no lock every namespace's
	 * wire would share per packet, nor one a user listing devices
	 * holds. A device on the list holds the list's reference until a
	 * grace period after it left (swnic_device_destroy()).
	 */
	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &swnic_devices, list) {
		nd = rcu_dereference(sdev->netdev);
		if (nd && nd->ifindex == ifindex && net_eq(dev_net(nd), net) &&
		    READ_ONCE(sdev->state) == SWNIC_DEV_STATE_UP) {
			swnic_device_get(sdev);
			found = sdev;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * Destinations whose waiting requests later ones to other destinations
 * pass, at most: past that many, the rest wait their turn. Nor are
 * requests run more than SWNIC_RX_PASS_AHEAD past the oldest waiting one:
 * an initiator has at most SWNIC_MAX_MSGS unanswered, so its requests stay
 * within SWNIC_RX_AHEAD of it and none is refused (swnic_rx_fragment()).
 */
#define SWNIC_RX_PASS_MAX	16
#define SWNIC_RX_PASS_AHEAD	1024

/*
 * Execute the peer's complete requests. In order of msg_id to each
 * destination endpoint (libfabric orders an endpoint pair's operations),
 * but not across them: a request its target cannot take yet (no room,
 * EAGAIN; its buffer not within reach now) or not all received yet holds
 * back the later requests to that endpoint only - one endpoint that does
 * not read its CQ, or a large message arriving, must not stall the
 * peer's traffic to every other. A gap (a request we know nothing of yet:
 * its packets are lost) stops the run, as its destination is unknown.
 * Executed requests past a waiting one stay as records (@done) until
 * exec_next reaches them: their packets sent again are taken, not run.
 */
static void swnic_rx_run(struct swnic_wnet *wn, struct swnic_peer *p,
			 struct swnic_device *sdev)
{
	__be16 waiting[SWNIC_RX_PASS_MAX];
	struct swnic_rxmsg *rm, *tmp;
	unsigned int nwaiting = 0, i;
	u32 id = p->exec_next;

	list_for_each_entry(rm, &p->rxmsgs, node) {
		if (rm->msg_id != id++ ||
		    (nwaiting && id - p->exec_next > SWNIC_RX_PASS_AHEAD))
			break;
		if (rm->done)
			continue;
		for (i = 0; i < nwaiting; i++)
			if (waiting[i] == rm->m.dst_port)
				break;
		if (i < nwaiting)
			continue;
		if (rm->got >= rm->len &&
		    (!rm->retry_at || time_after_eq(jiffies, rm->retry_at))) {
			if (!rm->since)
				rm->since = jiffies ?: 1;
			if (swnic_rx_exec(wn, sdev, p, rm)) {
				/* Who takes no answer as an ACK gets ACKs. */
				if (!(rm->m.flags & SWNIC_MSGF_RESP_ACKS))
					p->ack_now = true;
				rm->done = true;
				swnic_rxmsg_release(wn, rm);
				wn->rx_passed += nwaiting > 0;
				continue;
			}
			/* Keep the peer from timing us out while we wait. */
			p->ack_due = true;
			p->ack_now = true;
		}
		if (nwaiting == SWNIC_RX_PASS_MAX)
			break;
		waiting[nwaiting++] = rm->m.dst_port;
	}
	list_for_each_entry_safe(rm, tmp, &p->rxmsgs, node) {
		if (!rm->done || rm->msg_id != p->exec_next)
			break;
		p->exec_next++;
		swnic_rxmsg_free(wn, rm);
	}
	swnic_peer_pump(wn, p);
}

/* The traffic class (DSCP) a packet came with: its answers get it too. */
static u8 swnic_skb_tos(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IPV6))
		return ipv6_get_dsfield(ipv6_hdr(skb)) & ~INET_ECN_MASK;
	return ip_hdr(skb)->tos & ~INET_ECN_MASK;
}

/* A fragment of a request: into its message. Return: false to drop it. */
static bool swnic_rx_fragment(struct swnic_wnet *wn, struct swnic_peer *p,
			      const struct swnic_wire_msg *m, struct sk_buff *skb,
			      unsigned int off, unsigned int n)
{
	u32 id = be32_to_cpu(m->msg_id), frag = be32_to_cpu(m->frag), rem;
	u64 len = be64_to_cpu(m->len), at = be64_to_cpu(m->offset), idx;
	u64 table, need, budget;
	struct swnic_rxmsg *rm, *pos;
	unsigned int keep_kb;
	bool keep;

	if (m->opcode == SWNIC_OP_READ)
		len = 0;	/* the request has no payload */
	if (len > SWNIC_MAX_MSG_SIZE || at > len || n > len - at ||
	    (n == 0 && len != 0) || psn_before(id, p->exec_next))
		return false;
	/* Fragment i at i * frag, each frag long but the last. */
	idx = len ? div_u64_rem(at, max(frag, 1U), &rem) : 0;
	if (len && (frag < SWNIC_FRAG_MIN || frag > SWNIC_FRAG_MAX || rem ||
		    n != min_t(u64, frag, len - at))) {
		swnic_peer_drop(wn, p, SWNIC_DROP_BAD_MSG);
		return false;
	}
	/* From the newest: records of requests run ahead come first. */
	list_for_each_entry_reverse(pos, &p->rxmsgs, node)
		if (pos->msg_id == id)
			goto found;
	/* Not taken yet: the sender tries again once earlier ones ran. */
	if (id - p->exec_next >= SWNIC_RX_AHEAD) {
		swnic_peer_drop(wn, p, SWNIC_DROP_WINDOW);
		return false;
	}
	/*
	 * New: made in order of msg_id, charged to the namespace's budget
	 * (buffers kept for reuse give way). Kept if it comes in bursts
	 * (UDP GSO or GRO): a packet per skb costs more kept (its truesize,
	 * and on this host the sender's page it holds, which the sender's
	 * socket then allocates - zeroed - anew) than a copy. A kept one
	 * reserves twice its length and its table of pieces; if that does
	 * not fit, it is copied, in less.
	 */
	budget = (u64)READ_ONCE(rx_mem_mb) << 20;
	keep_kb = READ_ONCE(rx_keep_kb);
	keep = len && keep_kb && len >= (u64)keep_kb << 10 &&
	       skb_is_gso(skb) &&
	       (m->opcode == SWNIC_OP_SEND || m->opcode == SWNIC_OP_TSEND ||
		m->opcode == SWNIC_OP_WRITE);
	table = keep ? DIV_ROUND_UP_ULL(len, frag) * sizeof(*rm->pieces) : 0;
	need = keep ? 2 * len + table : len;
	/* Its record too: a request with no payload is not free either. */
	need += sizeof(*rm);
	if (wn->rx_mem + wn->spare_mem + need > budget)
		swnic_kept_free(wn, false);
	if (wn->rx_mem + len + sizeof(*rm) > budget) {
		swnic_peer_drop(wn, p, SWNIC_DROP_NO_MEM);
		return false;
	}
	if (wn->rx_mem + need > budget)
		keep = false;
	rm = kzalloc(sizeof(*rm), GFP_KERNEL);
	if (!rm)
		return false;
	if (keep) {
		rm->size = 2 * len + table;
		rm->used = table;
		rm->km.read = swnic_rxmsg_read;
		rm->pieces = kvzalloc(table, GFP_KERNEL);
	} else if (len) {
		rm->buf = swnic_rxbuf_get(wn, len, &rm->size);
	}
	if (len) {
		rm->frags = kvcalloc(BITS_TO_LONGS(DIV_ROUND_UP_ULL(len, frag)),
				     sizeof(long), GFP_KERNEL);
		if (!(rm->buf || rm->pieces) || !rm->frags) {
			swnic_rxbuf_put(wn, rm->buf, rm->size);
			kvfree(rm->pieces);
			kvfree(rm->frags);
			kfree(rm);
			swnic_peer_drop(wn, p, SWNIC_DROP_NO_MEM);
			return false;
		}
	}
	wn->rx_kept += keep;
	rm->msg_id = id;
	rm->m = *m;
	rm->len = len;
	rm->tos = swnic_skb_tos(skb);
	wn->rx_mem += rm->size + sizeof(*rm);
	list_for_each_entry_reverse(pos, &p->rxmsgs, node)
		if (psn_before(pos->msg_id, id))
			break;
	list_add(&rm->node, &pos->node);
	pos = rm;
found:
	rm = pos;
	/* Every fragment names the same message. */
	if (rm->m.opcode != m->opcode || rm->m.len != m->len ||
	    rm->m.dst_port != m->dst_port || rm->m.tag != m->tag ||
	    rm->m.auth_key != m->auth_key || rm->m.rkey != m->rkey ||
	    rm->m.raddr != m->raddr || rm->m.src_port != m->src_port ||
	    rm->m.frag != m->frag) {
		swnic_peer_drop(wn, p, SWNIC_DROP_BAD_MSG);
		return false;
	}
	/*
	 * A fragment we have (sent again under another PSN, which only a
	 * hostile peer does), or of a request executed already, is taken
	 * once: each byte is counted once, each request run once.
	 */
	if (rm->done || !n || test_bit(idx, rm->frags))
		return true;
	if (rm->pieces ? !swnic_rxmsg_keep(wn, rm, idx, skb, off, n) :
	    skb_copy_bits(skb, off, rm->buf + at, n))
		return false;
	set_bit(idx, rm->frags);
	rm->got += n;
	return true;
}

/*
 * The answer to one of our fetching atomics: the old values, into the
 * poster's result buffer (pinned when it posted), or its error.
 */
static void swnic_rx_atomic_resp(struct swnic_peer *p, struct swnic_txmsg *tm,
				 u32 status, u64 at, struct sk_buff *skb,
				 unsigned int off, unsigned int n)
{
	if (status || !n) {
		/* A success with no data is not an answer to a fetch. */
		swnic_req_done(p, tm, status ? min_t(u32, status, 4095) : EIO);
		return;
	}
	if (at > tm->rlen || n > tm->rlen - at || !tm->pages)
		return;
	at += tm->off;
	while (n) {
		struct page *page = tm->pages[at >> PAGE_SHIFT];
		u32 poff = at & ~PAGE_MASK;
		u32 c = min_t(u32, n, PAGE_SIZE - poff);
		void *kaddr = kmap_local_page(page);
		int ret = skb_copy_bits(skb, off, kaddr + poff, c);

		kunmap_local(kaddr);
		if (ret)
			tm->err = EIO;
		off += c;
		at += c;
		n -= c;
		tm->got += c;
	}
	if (tm->got >= tm->rlen) {
		tm->len = tm->rlen;	/* the completion's length */
		swnic_req_done(p, tm, tm->err);
	}
}

/* An answer to one of our requests. */
static void swnic_rx_resp(struct swnic_wnet *wn, struct swnic_peer *p,
			  const struct swnic_wire_resp *r, struct sk_buff *skb,
			  unsigned int off, unsigned int n)
{
	u32 id = be32_to_cpu(r->msg_id), status = be32_to_cpu(r->status);
	u64 at = be64_to_cpu(r->offset);
	struct swnic_txmsg *tm;
	int ret;

	swnic_rx_implicit_ack(wn, p, id);
	list_for_each_entry(tm, &p->waiting, node)
		if (tm->msg_id == id)
			goto found;
	return;		/* failed or completed already */
found:
	if (be32_to_cpu(r->flags) & SWNIC_RESPF_HELD) {
		/*
		 * The target holds our delivery-complete send until a
		 * receive takes it: its outcome comes later. Meanwhile it is
		 * acknowledged (a restarted peer fails it, never gets it
		 * again: its source pages can go) and the peer's liveness is
		 * probed (swnic_tick()). Only a send that asked for it.
		 */
		if (tm->held || (tm->m.flags & SWNIC_MSGF_HOLD) == 0 ||
		    (tm->m.opcode != SWNIC_OP_SEND &&
		     tm->m.opcode != SWNIC_OP_TSEND))
			return;
		tm->held = true;
		p->nheld_waiting++;
		swnic_txmsg_unpin(tm);
		return;
	}
	if (swnic_atomic_fetches(tm->m.opcode)) {
		swnic_rx_atomic_resp(p, tm, status, at, skb, off, n);
		return;
	}
	if (tm->m.opcode != SWNIC_OP_READ || status || !n) {
		if (tm->m.opcode == SWNIC_OP_READ && !status &&
		    be64_to_cpu(tm->m.len))
			return;	/* a zero-length answer to a read of data */
		swnic_req_done(p, tm, tm->err ?: min_t(u32, status, 4095));
		return;
	}
	/* Read data: into the poster's buffer, pinned when it posted. */
	if (at > be64_to_cpu(tm->m.len) || n > be64_to_cpu(tm->m.len) - at ||
	    !tm->pages)
		return;
	at += tm->off;
	while (n) {
		struct page *page = tm->pages[at >> PAGE_SHIFT];
		u32 poff = at & ~PAGE_MASK;
		u32 c = min_t(u32, n, PAGE_SIZE - poff);
		void *kaddr = kmap_local_page(page);

		ret = skb_copy_bits(skb, off, kaddr + poff, c);
		kunmap_local(kaddr);
		if (ret) {
			tm->err = EIO;
			tm->got += n;
			break;
		}
		off += c;
		at += c;
		n -= c;
		tm->got += c;
	}
	if (tm->got >= be64_to_cpu(tm->m.len)) {
		tm->len = tm->got;
		swnic_req_done(p, tm, tm->err);
	}
}

/*
 * The name of an IPv6 packet's source, made if @create and a peer context
 * may be made by a packet now (capped and rate-limited as those are: a
 * flood of forged sources cannot fill the namespace's names). Return: 0
 * (dropped and counted) or the name.
 */
static __be32 swnic_rx_name6(struct swnic_wnet *wn, struct sk_buff *skb,
			     bool create, bool *limited)
{
	const struct in6_addr *saddr = &ipv6_hdr(skb)->saddr;
	__be32 name;

	/* From a peer's unicast address, to ours (not a group's). */
	if (!swnic_addr6_unicast(saddr) ||
	    ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr)) {
		swnic_drop(wn, SWNIC_DROP_ADDR);
		return 0;
	}
	name = swnic_name6_get(wn, saddr,
			       swnic_addr6_scope(saddr, skb->skb_iif), false);
	if (name)
		return name;
	if (!create || !swnic_peer_room(wn) ||
	    !__ratelimit(&wn->peer_limit)) {
		swnic_drop(wn, SWNIC_DROP_PEERS);
		return 0;
	}
	*limited = true;
	name = swnic_name6_get(wn, saddr,
			       swnic_addr6_scope(saddr, skb->skb_iif), true);
	if (!name)
		swnic_drop(wn, SWNIC_DROP_PEERS);
	return name;
}

/* Take one packet (worker). */
static void swnic_rx_packet(struct swnic_wnet *wn, struct sk_buff *skb,
			    unsigned int base, unsigned int plen)
{
	unsigned int len = base + plen;
	unsigned int off = base + sizeof(struct swnic_wire_hdr);
	bool v6 = skb->protocol == htons(ETH_P_IPV6);
	struct swnic_device *sdev = NULL;
	struct swnic_wire_hdr h;
	struct swnic_peer *p;
	u32 src_inc, dst_inc, psn;
	__be32 saddr = v6 ? 0 : ip_hdr(skb)->saddr;
	__be16 sport = udp_hdr(skb)->source;
	bool ok = true, create, limited = false;

	wn->rx_pkts++;
	if (skb_copy_bits(skb, base, &h, sizeof(h))) {
		swnic_drop(wn, SWNIC_DROP_SHORT);
		return;
	}
	if (csum_fold(skb_checksum(skb, base, plen, 0))) {
		swnic_drop(wn, SWNIC_DROP_CSUM);
		return;
	}
	if (h.version != SWNIC_WIRE_VERSION || !h.type ||
	    h.type >= __SWNIC_PKT_MAX) {
		swnic_drop(wn, SWNIC_DROP_VERSION);
		return;
	}
	src_inc = be32_to_cpu(h.src_inc);
	dst_inc = be32_to_cpu(h.dst_inc);
	psn = be32_to_cpu(h.psn);
	if (!src_inc) {
		swnic_drop(wn, SWNIC_DROP_VERSION);
		return;
	}
	/*
	 * Only requests may make a context, answers need ours - and a
	 * PING: a peer probing an older us (this module restarted, or the
	 * namespace made again) must get its RESET, or it would learn of
	 * the restart only from the silence, after the peer timeout.
	 */
	create = h.type == SWNIC_PKT_DATA || h.type == SWNIC_PKT_READ_REQ ||
		 h.type == SWNIC_PKT_PING;
	if (v6) {
		saddr = swnic_rx_name6(wn, skb, create, &limited);
		if (!saddr)
			return;
	} else if (ipv4_is_zeronet(saddr) || ipv4_is_multicast(saddr) ||
		   ipv4_is_lbcast(saddr) ||
		   ipv4_is_multicast(ip_hdr(skb)->daddr) ||
		   ipv4_is_lbcast(ip_hdr(skb)->daddr)) {
		/* 0.x.x.x are IPv6 names: never an IPv4 packet's source. */
		swnic_drop(wn, SWNIC_DROP_ADDR);
		return;
	}
	/* A new IPv6 name was rate-limited already: not twice. */
	p = swnic_peer_get(wn, saddr, sport, create, !limited);
	if (!p) {
		swnic_drop(wn, SWNIC_DROP_PEERS);
		return;
	}

	if (h.type == SWNIC_PKT_RESET) {
		/*
		 * The peer forgot us: only a RESET naming us now, refusing a
		 * packet that named whom we name now (its PSN), counts. Our
		 * packets to an incarnation before it are dropped there.
		 */
		if (dst_inc != p->my_inc || psn != p->their_inc) {
			swnic_peer_drop(wn, p, SWNIC_DROP_STALE);
			return;
		}
		swnic_peer_reset_tx(wn, p, ECONNRESET, SWNIC_RESET_RETRY |
				    (p->their_inc && p->their_inc != src_inc ?
				     SWNIC_RESET_KEEP_INC : 0));
		swnic_peer_reset_rx(wn, p);
		p->their_inc = src_inc;
		p->heard = jiffies;
		swnic_peer_pump(wn, p);
		return;
	}
	if ((dst_inc && dst_inc != p->my_inc) ||
	    (!dst_inc && p->their_inc && src_inc != p->their_inc)) {
		/*
		 * For an older us, or a new incarnation of a peer we know
		 * that does not name us yet: answer with a RESET naming its
		 * incarnation and take nothing. A restarted peer gets the
		 * RESET, and names us from then on; a host that only forges
		 * packets from the peer's address never sees our incarnation,
		 * so it cannot reset a live context.
		 */
		swnic_send_reset(wn, p, src_inc, dst_inc);
		swnic_peer_drop(wn, p, SWNIC_DROP_STALE);
		return;
	}
	if (src_inc != p->their_inc) {
		/*
		 * A new incarnation of the peer, proven (it names us, or we
		 * knew none): what it sent before is gone, and so is what it
		 * had received from us. Ours still on their way name the one
		 * before, and it drops them: we may stay who we are.
		 */
		bool known = p->their_inc;

		if (known) {
			swnic_peer_reset_rx(wn, p);
			swnic_peer_reset_tx(wn, p, ECONNRESET,
					    SWNIC_RESET_RETRY |
					    SWNIC_RESET_KEEP_INC);
		}
		p->their_inc = src_inc;
		if (known)
			swnic_peer_pump(wn, p);
	}
	p->heard = jiffies;

	if (h.type == SWNIC_PKT_PING) {
		/* A peer waiting for a send we hold: an ACK says we live. */
		p->ack_due = true;
		p->ack_now = true;
		return;
	}
	if (h.type == SWNIC_PKT_ACK) {
		struct swnic_wire_ack a = {};
		size_t alen = min_t(size_t, len - off, sizeof(a));

		/* @dups came later: an ACK without it says nothing of them. */
		if (alen < offsetof(struct swnic_wire_ack, dups) ||
		    skb_copy_bits(skb, off, &a, alen)) {
			swnic_peer_drop(wn, p, SWNIC_DROP_SHORT);
			return;
		}
		swnic_rx_ack(wn, p, psn, &a,
			     alen == sizeof(a) ? be32_to_cpu(a.dups) :
			     p->dups_seen);
		return;
	}

	/* Reliable: once per PSN, inside the window. */
	if (!psn_before(psn, p->rcv_nxt) && psn - p->rcv_nxt >= SWNIC_RX_WIN) {
		swnic_peer_drop(wn, p, SWNIC_DROP_WINDOW);
		return;
	}
	if (psn_before(psn, p->rcv_nxt) ||
	    test_bit(psn % SWNIC_RX_WIN, p->rcv_map)) {
		swnic_peer_drop(wn, p, SWNIC_DROP_DUP);
		p->rx_dups++;		/* the sender learns it was spurious */
		p->ack_due = true;	/* or our ACK was lost */
		p->ack_now = true;
		return;
	}

	if (h.type == SWNIC_PKT_RESP) {
		struct swnic_wire_resp r;

		if (skb_copy_bits(skb, off, &r, sizeof(r)) ||
		    be32_to_cpu(r.len) != len - off - sizeof(r)) {
			swnic_peer_drop(wn, p, SWNIC_DROP_SHORT);
			return;
		}
		/* HELD says nothing else: no status, no data. */
		if (be32_to_cpu(r.flags) & ~SWNIC_RESPF_ALL ||
		    (be32_to_cpu(r.flags) & SWNIC_RESPF_HELD &&
		     (r.status || r.len || r.offset))) {
			swnic_peer_drop(wn, p, SWNIC_DROP_BAD_MSG);
			return;
		}
		swnic_rx_resp(wn, p, &r, skb, off + sizeof(r),
			      be32_to_cpu(r.len));
	} else {
		struct swnic_wire_msg m;

		if (skb_copy_bits(skb, off, &m, sizeof(m))) {
			swnic_peer_drop(wn, p, SWNIC_DROP_SHORT);
			return;
		}
		off += sizeof(m);
		ok = swnic_rx_fragment(wn, p, &m, skb, off, len - off);
		if (!ok) {
			/* Not taken: not acknowledged, the sender retries. */
			return;
		}
	}
	set_bit(psn % SWNIC_RX_WIN, p->rcv_map);
	p->rx_bytes += len;
	while (test_bit(p->rcv_nxt % SWNIC_RX_WIN, p->rcv_map))
		clear_bit(p->rcv_nxt++ % SWNIC_RX_WIN, p->rcv_map);
	p->ack_due = true;
	if (h.type == SWNIC_PKT_RESP)
		p->ack_now = true;	/* answers are acknowledged by ACKs */
	if (h.type != SWNIC_PKT_RESP) {
		p->ack_tos = swnic_skb_tos(skb);
		p->ifindex = skb->skb_iif;
		sdev = swnic_rx_device(wn->net, p->ifindex);
		if (!sdev)
			swnic_peer_drop(wn, p, SWNIC_DROP_NO_DEV);
		swnic_rx_run(wn, p, sdev);
		if (sdev)
			swnic_device_put(sdev);
	}
}

/* ---- the worker and the timer ------------------------------------------- */

/*
 * The tail loss probe's timeout: two RTTs (an ACK that took one should
 * be back) and the reordering window, at least SWNIC_PTO_MIN_US.
 */
static u32 swnic_pto_us(struct swnic_peer *p)
{
	if (!p->srtt_us)
		return p->rto_us;
	return max_t(u32, 2 * p->srtt_us + max_t(u32, p->srtt_us / 4,
						 SWNIC_REO_MIN_US),
		     SWNIC_PTO_MIN_US);
}

/* @p was silent for peer_timeout_ms: everything to it fails. */
static void swnic_peer_fail(struct swnic_wnet *wn, struct swnic_peer *p)
{
	if (p->v6)
		pr_debug("peer [%pI6c]:%u silent for %u ms: failed\n",
			 &p->addr6, ntohs(p->port), peer_timeout_ms);
	else
		pr_debug("peer %pI4:%u silent for %u ms: failed\n",
			 &p->ip, ntohs(p->port), peer_timeout_ms);
	swnic_peer_reset_tx(wn, p, ETIMEDOUT, 0);
	swnic_peer_reset_rx(wn, p);
	p->their_inc = 0;
}

/*
 * Our sends a peer holds whose endpoint closed: nobody waits for their
 * outcome any more, and they must not keep it (and its CQ) without end.
 */
static void swnic_held_closed(struct swnic_peer *p)
{
	struct swnic_txmsg *tm, *tmp;

	list_for_each_entry_safe(tm, tmp, &p->waiting, node)
		if (tm->held && READ_ONCE(tm->ep->dead))
			swnic_req_done(p, tm, ECANCELED);
}

/*
 * Everything we sent @p is acknowledged and we await its answers only:
 * it holds sends of ours until its application receives them, which may
 * be long, or it executes our requests. Its silence is not a failure
 * then, its death is - and its restart, which nothing we send would show
 * us. Probe it (PING: a live peer answers with an ACK, a restarted one
 * with a RESET) each quarter of the peer timeout that nothing came from
 * it, and fail it after a silent timeout as any peer. Return: when to
 * look again.
 */
/* A PING: the peer's ACK says it lives. */
static void swnic_ping(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct swnic_wire_hdr h;

	swnic_hdr_init(p, &h, SWNIC_PKT_PING, 0);
	swnic_udp_xmit(wn, p, &h, sizeof(h), 0);
	wn->keepalives++;
	p->ping_at = jiffies;
}

static ktime_t swnic_keepalive(struct swnic_wnet *wn, struct swnic_peer *p,
			       ktime_t now, unsigned long timeout)
{
	unsigned long every = max(timeout / 4, 1UL), last, at;

	if (time_after(jiffies, p->heard + timeout)) {
		swnic_peer_fail(wn, p);
		return KTIME_MAX;
	}
	last = time_after(p->ping_at, p->heard) ? p->ping_at : p->heard;
	if (!time_before(jiffies, last + every)) {
		swnic_ping(wn, p);
		last = jiffies;
	}
	at = min(last + every, p->heard + timeout + 1);
	return ktime_add_ns(now, jiffies_to_nsecs(max_t(long, at - jiffies,
							1)));
}

/*
 * Probe, retransmit what timed out, fail peers that stay silent; then arm
 * the timer for the earliest deadline left.
 */
static void swnic_tick(struct swnic_wnet *wn)
{
	unsigned long timeout;
	ktime_t now = ktime_get(), next = KTIME_MAX, at;
	struct swnic_peer *p, *tmp;

	timeout = msecs_to_jiffies(max(READ_ONCE(peer_timeout_ms), 10U));
	list_for_each_entry_safe(p, tmp, &wn->peers, node) {
		struct swnic_txpkt *t;
		int burst = 0;

		if (!list_empty(&p->rxmsgs)) {
			struct swnic_device *sdev;

			sdev = swnic_rx_device(wn->net, p->ifindex);
			swnic_rx_run(wn, p, sdev);
			if (sdev)
				swnic_device_put(sdev);
		}
		if (swnic_peer_quiet(p))
			continue;
		if (p->nheld_waiting)
			swnic_held_closed(p);
		/*
		 * Busy: looked at again, for its silence and its retries;
		 * but a peer we only await answers from is probed.
		 */
		if (list_empty(&p->unacked) && list_empty(&p->txq) &&
		    list_empty(&p->rxmsgs)) {
			if (p->nmsgs)
				next = min(next, swnic_keepalive(wn, p, now,
								 timeout));
			continue;
		}
		next = min(next, ktime_add_us(now, SWNIC_TICK_US));
		if (time_after(jiffies, p->heard + timeout)) {
			swnic_peer_fail(wn, p);
			continue;
		}
		/*
		 * Not heard for a quarter of the timeout: probed as well,
		 * every eighth. Its retransmissions back off to an RTO of a
		 * second, and five in a row can all go unanswered under
		 * heavy loss (one in 170 at 20 % each way): a live peer gets
		 * more chances than that before it is failed.
		 */
		if (time_after(jiffies, p->heard + timeout / 4) &&
		    time_after(jiffies, p->ping_at + max(timeout / 8, 1UL)))
			swnic_ping(wn, p);
		swnic_peer_pump(wn, p);
		if (list_empty(&p->unacked))
			continue;
		/*
		 * The retransmit timeout: no ACK progress for an RTO. The
		 * oldest packets go again (the tail, which RACK cannot see
		 * lost: nothing after it arrived) and the RTO backs off.
		 */
		at = ktime_add_us(p->rto_mark, p->rto_us);
		if (!ktime_before(now, at)) {
			wn->rto_fires++;
			list_for_each_entry(t, &p->unacked, node) {
				swnic_retransmit(wn, p, t);
				if (++burst >= SWNIC_RETX_BURST)
					break;
			}
			p->rto_us = min(p->rto_us * 2, (u32)SWNIC_RTO_MAX_US);
			p->rto_mark = now;
			at = ktime_add_us(now, p->rto_us);
		}
		next = min(next, at);
		/*
		 * The tail loss probe: nothing more to send and no ACK for
		 * two RTTs after the last packet: its loss, or of some
		 * before it, is likely. The last packet goes again, once:
		 * the ACK it brings back shows which are missing, and RACK
		 * sends those - well before the RTO.
		 */
		if (p->probed || !list_empty(&p->txq))
			continue;
		at = ktime_add_us(p->last_tx, swnic_pto_us(p));
		if (ktime_before(now, at)) {
			next = min(next, at);
			continue;
		}
		t = list_last_entry(&p->unacked, struct swnic_txpkt, node);
		swnic_retransmit(wn, p, t);
		p->probed = true;
		wn->probes++;
	}
	/* Buffers kept for reuse go after a second unused. */
	if (wn->spare_mem || wn->ntxpages) {
		long left = wn->spare_at + HZ - jiffies;

		if (left <= 0)
			swnic_kept_free(wn, true);
		else
			next = min(next, ktime_add_ms(now,
						      jiffies_to_msecs(left)));
	}
	swnic_arm_exact(wn, next);
}

/*
 * Do our answers acknowledge all that came from @p since our last ACK?
 * Only packets of requests came (no answer, duplicate or PING: those
 * want an ACK), from an initiator that takes an answer as the ACK of its
 * request's packets (SWNIC_MSGF_RESP_ACKS); every request is executed
 * (none partly received, none waiting for an earlier one or for room),
 * with no hole in the PSNs (a SACK would help the sender), and every
 * answer went out. A lost answer costs nothing more: the initiator's
 * tail loss probe sends a packet again, and its duplicate is ACKed.
 */
static bool swnic_ack_implied(struct swnic_peer *p)
{
	struct swnic_txmsg *tm;

	if (p->ack_now || !list_empty(&p->rxmsgs) ||
	    !bitmap_empty(p->rcv_map, SWNIC_RX_WIN))
		return false;
	list_for_each_entry(tm, &p->txq, node)
		if (tm->kind != SWNIC_TX_REQ)
			return false;
	return true;
}

/*
 * The next datagram of @sk (a burst, if the device or GRO made one), UDP's
 * checksum checked; an IPv4 packet routed here as a broadcast or multicast
 * (a subnet's broadcast address, which its header does not tell, as well
 * as 255.255.255.255 and groups) dropped: peers send to our unicast
 * address. UDP drops the route before it queues a packet, so the address
 * is looked up again.
 */
static struct sk_buff *swnic_udp_dequeue(struct swnic_wnet *wn,
					 struct sock *sk)
{
	struct sk_buff *skb;
	int off = 0, err;

	while ((skb = __skb_recv_udp(sk, MSG_DONTWAIT, &off, &err))) {
		if (!udp_skb_csum_unnecessary(skb) &&
		    __udp_lib_checksum_complete(skb)) {
			swnic_drop(wn, SWNIC_DROP_CSUM);
			kfree_skb(skb);
			continue;
		}
		if (skb->protocol == htons(ETH_P_IP) &&
		    inet_addr_type(wn->net, ip_hdr(skb)->daddr) != RTN_LOCAL) {
			swnic_drop(wn, SWNIC_DROP_ADDR);
			kfree_skb(skb);
			continue;
		}
		return skb;
	}
	return NULL;
}

/* Does @sock have datagrams queued? */
static bool swnic_udp_pending(struct socket *sock)
{
	return sock &&
	       (!skb_queue_empty_lockless(&udp_sk(sock->sk)->reader_queue) ||
		!skb_queue_empty_lockless(&sock->sk->sk_receive_queue));
}

/* Count what UDP dropped for a full queue since last time. */
static void swnic_udp_drops(struct swnic_wnet *wn, struct socket *sock,
			    int *seen)
{
	int d;

	if (!sock)
		return;
	d = atomic_read(&sock->sk->sk_drops);
	if (d != *seen)
		atomic64_add((u32)(d - *seen), &wn->drops[SWNIC_DROP_QUEUE]);
	*seen = d;
}

/*
 * Take up to SWNIC_BATCH packets from the sockets, in turn. A burst (UDP
 * GSO from a local sender, or GRO) is taken whole: its packets are
 * gso_size bytes each, the last maybe shorter.
 */
static bool swnic_udp_rx_batch(struct swnic_wnet *wn)
{
	struct socket *socks[2] = { wn->sock, wn->sock6 };
	unsigned int n = 0, i, got = 1;
	struct sk_buff *skb;

	while (n < SWNIC_BATCH && got) {
		/*
		 * What swnic_udp_data_ready() counted so far is queued, and
		 * read below (the last pass finds the queues empty).
		 */
		WRITE_ONCE(wn->rx_seen, atomic_read_acquire(&wn->rx_ready));
		got = 0;
		for (i = 0; i < ARRAY_SIZE(socks); i++) {
			unsigned int seg, at;

			if (!socks[i])
				continue;
			skb = swnic_udp_dequeue(wn, socks[i]->sk);
			if (!skb)
				continue;
			got++;
			seg = skb->len;
			if (skb_is_gso(skb)) {
				seg = skb_shinfo(skb)->gso_size ?: skb->len;
				wn->gso_recvs++;
			}
			for (at = 0; at < skb->len; at += seg, n++)
				swnic_rx_packet(wn, skb, at,
						min(seg, skb->len - at));
			if (skb_shared(skb))
				swnic_rx_skb_kept(skb);
			consume_skb(skb);
		}
	}
	for (i = 0; i < ARRAY_SIZE(socks); i++)
		swnic_udp_drops(wn, socks[i], &wn->sk_drops[i]);
	return swnic_udp_pending(wn->sock) || swnic_udp_pending(wn->sock6);
}

/*
 * One round of the wire (wn->lock held): what came in, sends held by
 * targets that were taken, timers; then the round's ACKs. Return: true if
 * packets are left for another.
 */
static bool swnic_wire_round(struct swnic_wnet *wn)
{
	struct swnic_peer *p;
	bool more = false;

	if (!wn->dead) {
		more = swnic_udp_rx_batch(wn);
		swnic_held_run(wn);
		swnic_tick(wn);
	}
	/* One ACK per peer per round (coalesced), unless answers did. */
	list_for_each_entry(p, &wn->peers, node) {
		if (!p->ack_due)
			continue;
		if (swnic_ack_implied(p))
			p->ack_due = false;
		else
			swnic_send_ctl(wn, p, SWNIC_PKT_ACK);
	}
	return more;
}

static void swnic_udp_work(struct kthread_work *work)
{
	struct swnic_wnet *wn = container_of(work, struct swnic_wnet, work);
	bool more;

	mutex_lock(&wn->lock);
	more = swnic_wire_round(wn);
	mutex_unlock(&wn->lock);
	if (more)
		swnic_wire_kick(wn);
}

/**
 * swnic_udp_poll() - busy polling: a round of the wire, in the caller
 * @sdev: the device of the caller's endpoint
 *
 * An application spinning on its CQ for a peer on another host takes what
 * came in for its device's namespace itself (SWNIC_DB_POLL), rather than
 * waiting for the namespace's worker to be woken and scheduled. Only if
 * packets wait and no one holds the wire (the worker or a poster is at
 * it, or another poller): it comes back at once otherwise. Nothing in a
 * round depends on whose context it runs in: written for the worker, a
 * kthread without an mm, it reaches users' memory only through pinned
 * pages and the copy helpers (recv.c), which take any mm.
 *
 * Return: true if @sdev is bound to a netdev (there is a wire to poll).
 */
bool swnic_udp_poll(struct swnic_device *sdev)
{
	struct net *net = swnic_udp_get_net(sdev);
	struct swnic_wnet *wn;
	bool more = false;

	if (!net)
		return false;
	wn = swnic_wnet(net);
	if (!READ_ONCE(wn->polling))
		WRITE_ONCE(wn->polling, true);
	if ((swnic_udp_pending(READ_ONCE(wn->sock)) ||
	     swnic_udp_pending(READ_ONCE(wn->sock6))) &&
	    !fatal_signal_pending(current) && mutex_trylock(&wn->lock)) {
		wn->polls++;
		more = swnic_wire_round(wn);
		mutex_unlock(&wn->lock);
		if (more)
			swnic_wire_kick(wn);
	}
	put_net(net);
	return true;
}

/*
 * Inline sections (struct swnic_udp_inline). Over veth or loopback, the
 * namespace a packet is for receives it in the softirq that runs as the
 * sender's send leaves its BH-disabled section: in the sender's context.
 * Waking that namespace's worker for it cost a wakeup and two context
 * switches per packet, three packets per one-way message (the request,
 * its answer, the answer's ACK), each worker preempting a spinning
 * application. In a section, the sender runs those rounds itself after
 * its sends, as a busy poller does (swnic_udp_poll(): nothing in a round
 * depends on whose context it runs in), and the packets its rounds send
 * are taken in turn, up to SWNIC_INLINE_ROUNDS rounds; what is left goes
 * to the workers. Sections are found by task, in a hash: the softirq only
 * knows `current`. Doorbells open them, the workers do not: a receiver's
 * worker would run the sender's rounds too (the ACKs it sent, the sends
 * they let go), on one CPU where two worked, and a 1 MiB ping-pong lost
 * a fifth of its bandwidth.
 *
 * A section's task may block before it ends (faulting in its buffers,
 * a userfaultfd of its own, behind its own SQ's lock). So a bucket lists
 * SWNIC_INLINE_PER_BUCKET sections at most, and one that finds its bucket
 * full does nothing (counted: inline_full): a user who parks threads in
 * doorbells must not make every datagram's lookup a long scan under a
 * lock that every doorbell of the host takes. And a section holds no
 * reference: it names a namespace only while listed under its bucket's
 * lock, and a namespace going takes itself off every section
 * (swnic_inline_forget()) before its worker goes; the round takes a
 * reference first. And a datagram taken arms the busy-polling fallback:
 * if no round read the socket within SWNIC_POLL_FALLBACK_US, the worker
 * is woken after all.
 */
#define SWNIC_INLINE_BITS	8
#define SWNIC_INLINE_PER_BUCKET	4
#define SWNIC_INLINE_ROUNDS	16
#define SWNIC_INLINE_RMEM	(32 << 10)

static struct swnic_inline_bucket {
	spinlock_t lock;		/* @head, @n, and its sections' fields */
	struct hlist_head head;
	unsigned int n;			/* sections listed */
} swnic_inline_tab[1 << SWNIC_INLINE_BITS];

static struct swnic_inline_bucket *swnic_inline_bucket(void)
{
	return &swnic_inline_tab[hash_ptr(current, SWNIC_INLINE_BITS)];
}

/* The current task's open section, or NULL; bucket lock held. */
static struct swnic_udp_inline *
swnic_inline_find(struct swnic_inline_bucket *b)
{
	struct swnic_udp_inline *il;

	hlist_for_each_entry(il, &b->head, node)
		if (il->task == current)
			return il;
	return NULL;
}

/**
 * swnic_udp_inline_begin() - open an inline section
 * @il: the section, on the caller's stack until swnic_udp_inline_end()
 * @sdev: the device of the doorbell that opens it (counted there if its
 *	bucket is full)
 *
 * Process context. One per task at a time: a nested one does nothing, and
 * so does one whose bucket is full (its datagrams wake the workers).
 */
void swnic_udp_inline_begin(struct swnic_udp_inline *il,
			    struct swnic_device *sdev)
{
	struct swnic_inline_bucket *b = swnic_inline_bucket();
	bool full = false;
	struct net *net;

	il->task = current;
	il->n = 0;
	spin_lock_bh(&b->lock);
	/* Nested, the open one takes the datagrams. */
	il->listed = false;
	if (!swnic_inline_find(b)) {
		full = b->n >= SWNIC_INLINE_PER_BUCKET;
		il->listed = !full;
	}
	if (il->listed) {
		hlist_add_head(&il->node, &b->head);
		b->n++;
	}
	spin_unlock_bh(&b->lock);
	if (full) {
		net = swnic_udp_get_net(sdev);
		if (net) {
			atomic64_inc(&swnic_wnet(net)->inline_full);
			put_net(net);
		}
	}
}

/*
 * data_ready of @sk, in softirq: if the task it runs in has a section
 * open, the section takes @wn's round - unless more than
 * SWNIC_INLINE_RMEM bytes wait on the socket: a bulk transfer's bursts
 * go to the worker, on another CPU, while the sender sends on. Run in the
 * sender, the receiver's rounds took turns with its sends on one CPU,
 * and a 1 MiB ping-pong lost a fifth of its bandwidth. A datagram taken
 * is counted (rx_inline); the caller arms busy polling's fallback for it.
 * Return: taken.
 */
static bool swnic_inline_take(struct swnic_wnet *wn, struct sock *sk)
{
	struct swnic_inline_bucket *b;
	struct swnic_udp_inline *il;
	bool taken = false;
	unsigned int i;

	if (!in_serving_softirq() || in_hardirq() ||
	    sk_rmem_alloc_get(sk) > SWNIC_INLINE_RMEM)
		return false;
	b = swnic_inline_bucket();
	/*
	 * Only the current task's own section matters, and it put that
	 * section on this bucket itself, before this softirq ran in its
	 * context (a migration since orders it): an empty bucket needs no
	 * lock (the two-VM lane's NAPI in the idle task, a task that rang
	 * no doorbell).
	 */
	if (hlist_empty(&b->head))
		return false;
	spin_lock(&b->lock);
	il = swnic_inline_find(b);
	for (i = 0; il && i < il->n && !taken; i++)
		taken = il->wn[i] == wn;
	if (il && !taken && il->n < SWNIC_INLINE_WNETS) {
		il->wn[il->n++] = wn;
		taken = true;
	}
	spin_unlock(&b->lock);
	if (taken)
		atomic64_inc(&wn->rx_inline);
	return taken;
}

/*
 * A namespace goes (.exit, after its sockets and an RCU grace period: no
 * data_ready names it any more): off every section, before its worker.
 */
static void swnic_inline_forget(struct swnic_wnet *wn)
{
	struct swnic_udp_inline *il;
	unsigned int i, j, k;

	for (i = 0; i < ARRAY_SIZE(swnic_inline_tab); i++) {
		spin_lock_bh(&swnic_inline_tab[i].lock);
		hlist_for_each_entry(il, &swnic_inline_tab[i].head, node) {
			for (j = 0, k = 0; j < il->n; j++)
				if (il->wn[j] != wn)
					il->wn[k++] = il->wn[j];
			il->n = k;
		}
		spin_unlock_bh(&swnic_inline_tab[i].lock);
	}
}

/*
 * A section's round of @wn. If another holds the wire (a poster, or a
 * round), we wait: the holder is short, and it may be past its reads.
 * Leaving it to the worker cost a wakeup, and a worker that contended for
 * the lock with the applications, for most packets of a ping-pong.
 */
static void swnic_inline_round(struct swnic_wnet *wn)
{
	bool more;

	/* Killed meanwhile: the worker takes it. */
	if (mutex_lock_killable(&wn->lock)) {
		swnic_wire_kick(wn);
		return;
	}
	wn->inline_rounds++;
	more = swnic_wire_round(wn);
	mutex_unlock(&wn->lock);
	if (more)
		swnic_wire_kick(wn);
}

/**
 * swnic_udp_inline_end() - close an inline section: run its rounds
 * @il: the section
 *
 * Process context, no lock held (a round takes the wire's, and delivers
 * into endpoints, CQs and MRs). The section stays open while its rounds
 * run, so what their sends deliver here is taken too, within the budget.
 * A task being killed leaves the rounds to the workers: a round must not
 * fail a peer's message for the signal of a task that only passed by.
 */
void swnic_udp_inline_end(struct swnic_udp_inline *il)
{
	struct swnic_inline_bucket *b = swnic_inline_bucket();
	unsigned int budget = SWNIC_INLINE_ROUNDS, i;
	struct swnic_wnet *wn;
	struct net *net;

	if (!il->listed)
		return;
	for (;;) {
		spin_lock_bh(&b->lock);
		if (!il->n || !budget || fatal_signal_pending(current))
			break;
		wn = il->wn[0];
		il->n--;
		memmove(&il->wn[0], &il->wn[1], il->n * sizeof(il->wn[0]));
		/* Listed, @wn is there; going, its net has no reference. */
		net = maybe_get_net(wn->net);
		spin_unlock_bh(&b->lock);
		if (!net)
			continue;
		budget--;
		swnic_inline_round(wn);
		put_net(net);
	}
	/* What is left (listed: the workers are there) goes to them. */
	for (i = 0; i < il->n; i++)
		swnic_wire_kick(il->wn[i]);
	hlist_del(&il->node);
	b->n--;
	spin_unlock_bh(&b->lock);
}

static enum hrtimer_restart swnic_udp_timer(struct hrtimer *t)
{
	struct swnic_wnet *wn = container_of(t, struct swnic_wnet, timer);

	swnic_wire_kick(wn);
	return HRTIMER_NORESTART;
}

static ktime_t swnic_poll_fallback(void)
{
	return ns_to_ktime(SWNIC_POLL_FALLBACK_US * NSEC_PER_USEC);
}

/*
 * Softirq: a socket has datagrams (or bursts) for the worker - or, while
 * an application busy-polls, for it: then the worker is woken only if no
 * round read the sockets within SWNIC_POLL_FALLBACK_US (the application
 * stopped polling). Waking it for every packet regardless made a spinning
 * application's latency worse, not better: the worker, a real-time
 * thread, took the CPU from one of the pingpong's two spinning sides, or
 * spun on the lock the poller held.
 */
static void swnic_udp_data_ready(struct sock *sk)
{
	struct swnic_wnet *wn;
	int n;

	rcu_read_lock();
	wn = rcu_dereference_sk_user_data(sk);
	if (wn && !READ_ONCE(wn->polling) && !swnic_inline_take(wn, sk)) {
		atomic64_inc(&wn->rx_kicks);
		swnic_wire_kick(wn);
	} else if (wn) {
		/*
		 * Counted only while someone polls or a section took it (the
		 * worker takes the rest), ordered after the datagram was
		 * queued, as a round reads the count before the queue
		 * (swnic_udp_rx_batch()).
		 */
		n = atomic_inc_return(&wn->rx_ready);
		if (!hrtimer_is_queued(&wn->poll_timer)) {
			WRITE_ONCE(wn->rx_armed, n);
			hrtimer_start(&wn->poll_timer, swnic_poll_fallback(),
				      HRTIMER_MODE_REL);
		}
	}
	rcu_read_unlock();
}

/*
 * Busy polling's fallback. If a round began reading after the datagram
 * that armed it came, it was taken: what came since gets its own time.
 * If not, it waited SWNIC_POLL_FALLBACK_US: nobody polls any more, and
 * the worker takes it, and is woken for every datagram again until an
 * application polls.
 */
static enum hrtimer_restart swnic_udp_poll_timer(struct hrtimer *t)
{
	struct swnic_wnet *wn = container_of(t, struct swnic_wnet,
					     poll_timer);
	int seen, ready;

	/*
	 * The core took the timer off its queue before calling us; a
	 * data_ready counts its datagram (atomic_inc_return(), a full
	 * barrier), then looks whether the timer is queued. With a full
	 * barrier here too, either we see its datagram or it sees the timer
	 * off the queue and starts it: never neither (store buffering).
	 */
	smp_mb();
	seen = READ_ONCE(wn->rx_seen);
	ready = atomic_read(&wn->rx_ready);
	if (seen == ready)
		return HRTIMER_NORESTART;
	if (seen - READ_ONCE(wn->rx_armed) < 0) {
		atomic64_inc(&wn->poll_fallbacks);
		WRITE_ONCE(wn->polling, false);
		swnic_wire_kick(wn);
		return HRTIMER_NORESTART;
	}
	/*
	 * Armed again with hrtimer_start(), not forwarded: while this runs
	 * the timer is not queued, and a data_ready on another CPU may start
	 * it - hrtimer_forward() of a queued timer is a WARN.
	 */
	WRITE_ONCE(wn->rx_armed, ready);
	hrtimer_start(t, swnic_poll_fallback(), HRTIMER_MODE_REL);
	return HRTIMER_NORESTART;
}

/*
 * Make a namespace's socket the wire's: its datagrams go to the worker,
 * which reads them (UDP_GRO: a burst stays whole, where a tunnel's
 * encap_rcv would have it cut into single packets first -
 * udp_unexpected_gso()).
 *
 * The send buffer is what every peer's window may have on its way at once
 * (a packet is charged until the device sends it, or veth hands it over).
 * The default (wmem_default, ~208 KiB) is less than one peer's window of
 * 256 full packets: a burst overran it, and the stack refused packets
 * (tx_errors) that only the RTO recovered. The packets are ours already
 * (kept until ACKed), so this bounds no memory that the windows do not.
 * The receive buffer bounds what waits for the worker (over it, UDP drops
 * and drop_queue counts).
 */
static int swnic_udp_sock_setup(struct swnic_wnet *wn, struct socket *sock)
{
	struct sock *sk = sock->sk;
	int one = 1, ret;

	ret = sock->ops->setsockopt(sock, SOL_UDP, UDP_GRO,
				    KERNEL_SOCKPTR(&one), sizeof(one));
	if (ret)
		return ret;
	lock_sock(sk);
	sk->sk_userlocks |= SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK;
	WRITE_ONCE(sk->sk_sndbuf, 8 << 20);
	WRITE_ONCE(sk->sk_rcvbuf, SWNIC_RCVBUF);
	release_sock(sk);
	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, wn);
	sk->sk_data_ready = swnic_udp_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	return 0;
}

/*
 * udp_sock_create6() (ip6_udp_tunnel.ko) for our one configuration, made
 * here so that the module needs no more than udp_tunnel.ko: a kernel
 * socket on [::]:udp_port, IPv6 only (IPv4 has its own), checksums on both
 * ways (IPv6 requires them; UDP GSO needs them).
 */
static int swnic_udp_sock_create6(struct net *net, struct socket **sockp)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(udp_port),
	};
	struct socket *sock;
	int ret;

	ret = sock_create_kern(net, AF_INET6, SOCK_DGRAM, 0, &sock);
	if (ret)
		return ret;
	ret = ip6_sock_set_v6only(sock->sk) ?:
	      kernel_bind(sock, (struct sockaddr *)&sin6, sizeof(sin6));
	if (ret) {
		sock_release(sock);
		return ret;
	}
	udp_set_no_check6_tx(sock->sk, false);
	udp_set_no_check6_rx(sock->sk, false);
	*sockp = sock;
	return 0;
}

/*
 * The namespace's IPv6 socket, set up as vxlan and geneve set theirs up
 * (setup_udp_tunnel_sock()). A kernel without IPv6 (ipv6.disable=1) has
 * IPv4 only.
 */
static void swnic_udp_open6(struct swnic_wnet *wn)
{
	struct socket *sock;
	int ret;

	if (wn->sock6 || !ipv6_mod_enabled())
		return;
	ret = swnic_udp_sock_create6(wn->net, &sock);
	if (!ret) {
		ret = swnic_udp_sock_setup(wn, sock);
		if (ret)
			udp_tunnel_sock_release(sock);
	}
	if (ret) {
		pr_warn_ratelimited("wire: UDP port %u (IPv6): error %d\n",
				    udp_port, ret);
		return;
	}
	wn->sk_drops[1] = 0;
	WRITE_ONCE(wn->sock6, sock);
}

/**
 * swnic_udp_open() - make sure @net has the wire's sockets
 * @net: the namespace of a bound device that gets an endpoint
 *
 * The IPv4 socket must open; the IPv6 one is opened beside it if it can
 * be (else IPv6 peers are unreachable, and a device with only IPv6
 * addresses gets no endpoints: swnic_udp_ep_addr()).
 *
 * Return: 0, or why the socket could not be opened (EADDRINUSE...).
 */
int swnic_udp_open(struct net *net)
{
	struct swnic_wnet *wn = swnic_wnet(net);
	struct udp_port_cfg ucfg = {
		.family = AF_INET,
		.local_ip.s_addr = htonl(INADDR_ANY),
		.local_udp_port = htons(udp_port),
		/* UDP GSO needs them (and offload makes them cheap). */
		.use_udp_checksums = true,
	};
	struct socket *sock;
	int ret = 0;

	mutex_lock(&wn->lock);
	if (wn->dead)
		goto out;
	if (wn->sock) {
		swnic_udp_open6(wn);
		goto out;
	}
	if (!wn->worker) {
		struct kthread_worker *w;

		w = kthread_create_worker(0, "swnic-wire/%u", net->ns.inum);
		if (IS_ERR(w)) {
			ret = PTR_ERR(w);
			goto out;
		}
		sched_set_fifo_low(w->task);
		wn->worker = w;	/* before any packet can come in */
	}
	ret = udp_sock_create4(net, &ucfg, &sock);
	if (ret) {
		pr_warn_ratelimited("wire: UDP port %u: error %d\n", udp_port,
				    ret);
		goto out;
	}
	ret = swnic_udp_sock_setup(wn, sock);
	if (ret) {
		udp_tunnel_sock_release(sock);
		pr_warn_ratelimited("wire: UDP port %u: error %d\n", udp_port,
				    ret);
		goto out;
	}
	wn->sk_drops[0] = 0;
	WRITE_ONCE(wn->sock, sock);
	swnic_udp_open6(wn);
out:
	mutex_unlock(&wn->lock);
	return ret;
}

/*
 * @nd's first IPv6 address usable as a peer's (not tentative: DAD done),
 * a global one before a link-local one. Return: false if it has none.
 */
static bool swnic_netdev_addr6(struct net_device *nd, struct in6_addr *addr,
			       int *ifindex)
{
	struct inet6_ifaddr *ifp;
	struct inet6_dev *idev;
	bool found = false;

	idev = in6_dev_get(nd);
	if (!idev)
		return false;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		if (ifp->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED) ||
		    !swnic_addr6_unicast(&ifp->addr))
			continue;
		if (found && (!(ipv6_addr_type(addr) & IPV6_ADDR_LINKLOCAL) ||
			      ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL))
			continue;
		*addr = ifp->addr;
		found = true;
	}
	read_unlock_bh(&idev->lock);
	*ifindex = swnic_addr6_scope(addr, nd->ifindex);
	in6_dev_put(idev);
	return found;
}

/**
 * swnic_udp_ep_addr() - the address of a new endpoint of @sdev
 * @sdev: its device
 * @addr: in: loopback; out: for a bound device, its netdev's (first)
 *	  IPv4 address, else the name of its (first) IPv6 address, with
 *	  the namespace's wire socket(s) opened
 *
 * Return: 0, or why the wire's socket could not be opened (ENETDOWN: a
 * netdev with only IPv6 addresses, and no IPv6 socket).
 */
int swnic_udp_ep_addr(struct swnic_device *sdev, __be32 *addr)
{
	struct in6_addr a6 = {};
	struct in_device *in_dev;
	struct net_device *nd;
	struct in_ifaddr *ifa;
	struct net *net = NULL;
	struct swnic_wnet *wn;
	bool v6 = false;
	int ret, scope = 0;

	rcu_read_lock();
	nd = rcu_dereference(sdev->netdev);
	if (nd) {
		net = maybe_get_net(dev_net(nd));
		in_dev = __in_dev_get_rcu(nd);
		ifa = in_dev ? rcu_dereference(in_dev->ifa_list) : NULL;
		if (ifa)
			*addr = ifa->ifa_local;
		else
			v6 = swnic_netdev_addr6(nd, &a6, &scope);
	}
	rcu_read_unlock();
	if (!net)
		return 0;
	ret = swnic_udp_open(net);
	if (!ret && v6) {
		wn = swnic_wnet(net);
		mutex_lock(&wn->lock);
		if (!wn->sock6)
			ret = -ENETDOWN;
		else
			*addr = swnic_name6_get(wn, &a6, scope, true);
		/* The namespace's own address: ip addr shows it to all. */
		swnic_name6_publish(wn, *addr);
		mutex_unlock(&wn->lock);
		if (!ret && !*addr)
			ret = -ENOSPC;
	}
	put_net(net);
	return ret;
}

/**
 * swnic_udp_name_local() - is @name an IPv6 address of @sdev's namespace?
 * @sdev: a device; bound to a netdev, its namespace is this host
 * @name: an IPv6 peer's name (swnic_addr_is_name6())
 *
 * Return: true if the name's address is this host's (the local transport
 * takes it, as it takes this host's IPv4 addresses).
 */
bool swnic_udp_name_local(struct swnic_device *sdev, __be32 name)
{
	struct net_device *nd;
	struct in6_addr a6;
	bool ret = false;
	int ifindex;

	rcu_read_lock();
	nd = rcu_dereference(sdev->netdev);
	if (nd && swnic_name6_addr(swnic_wnet(dev_net(nd)), name, &a6,
				   &ifindex))
		ret = ipv6_chk_addr(dev_net(nd), &a6, NULL, 0);
	rcu_read_unlock();
	return ret;
}

/**
 * swnic_udp_ioctl_addr6() - SWNIC_IOCTL_ADDR6 (struct swnic_addr6)
 * @dom: the domain whose device's namespace names the address
 * @arg: the kernel's copy of the struct
 *
 * Return: 0, or the error the uapi documents.
 */
int swnic_udp_ioctl_addr6(struct swnic_domain *dom, void *arg)
{
	struct swnic_name6_user *u;
	struct swnic_addr6 *a = arg;
	struct in6_addr a6 = {};
	struct swnic_wnet *wn;
	int ifindex = 0, ret = 0;
	bool admin, may_make;
	__be32 name;
	u32 made;
	struct net *net;

	if (a->flags & ~SWNIC_ADDR6_LOOKUP)
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;
	if (!ipv6_mod_enabled())
		return -EAFNOSUPPORT;
	net = swnic_udp_get_net(dom->sdev);
	if (!net)
		return -ENETDOWN;
	wn = swnic_wnet(net);
	admin = swnic_device_capable(dom->sdev, CAP_NET_ADMIN, false);
	if (a->flags & SWNIC_ADDR6_LOOKUP) {
		/*
		 * Another user's peer that has no traffic yet is that user's
		 * to know: as if there were no such name.
		 */
		name = (__force __be32)a->name;
		mutex_lock(&wn->lock);
		if (!(admin || swnic_name6_may_use(wn, name, dom->uid)) ||
		    !swnic_name6_addr(wn, name, &a6, &ifindex))
			ret = -ENOENT;
		mutex_unlock(&wn->lock);
		memcpy(a->addr, &a6, sizeof(a->addr));
		a->scope_id = ifindex;
		goto out;
	}
	memcpy(&a6, a->addr, sizeof(a6));
	if (ipv6_addr_v4mapped(&a6)) {
		a->name = (__force u32)a6.s6_addr32[3];
		a->scope_id = 0;
		goto out;
	}
	ifindex = READ_ONCE(dom->sdev->ifindex);
	if (!swnic_addr6_unicast(&a6) ||
	    (ipv6_addr_type(&a6) & IPV6_ADDR_LINKLOCAL && a->scope_id &&
	     a->scope_id != ifindex)) {
		ret = -EADDRNOTAVAIL;
		goto out;
	}
	ifindex = swnic_addr6_scope(&a6, ifindex);
	a->scope_id = ifindex;
	/*
	 * Names are never reclaimed (see swnic_name6_addr()): users without
	 * CAP_NET_ADMIN may make half of them, SWNIC_ADDR6_PER_USER each,
	 * so that no one user takes the others' share and the rest stays
	 * for the network's peers.
	 */
	mutex_lock(&wn->lock);
	ret = -ENOMEM;
	u = swnic_name6_user(wn, dom->uid, true);
	if (!u)
		goto out_unlock;
	may_make = admin || (wn->user_names6 < SWNIC_MAX_ADDR6 / 2 &&
			     u->made < SWNIC_ADDR6_PER_USER);
	made = wn->nnames6;
	name = swnic_name6_get(wn, &a6, ifindex, may_make);
	made = wn->nnames6 - made;
	a->name = (__force u32)name;
	ret = may_make ? -ENOSPC : -EDQUOT;
	if (!name)
		goto out_unlock;
	if (!admin) {
		wn->user_names6 += made;
		u->made += made;
	}
	set_bit(ntohl(name) - 1, u->named);
	ret = 0;
out_unlock:
	mutex_unlock(&wn->lock);
out:
	put_net(net);
	return ret;
}

/* ---- statistics (netlink's PEER_GET) ------------------------------------ */

/**
 * swnic_udp_counters() - the wire counters of a network namespace
 * @net: the namespace
 * @fn: called for each counter (name, value) under the wire's lock; a
 *	non-zero return stops the walk and is returned
 * @arg: @fn's argument
 *
 * Packets sent, received and retransmitted, peer contexts, bytes of
 * messages being received, and the drops by reason.
 *
 * Return: 0, or what @fn returned.
 */
int swnic_udp_counters(struct net *net,
		       int (*fn)(void *arg, const char *name, u64 value),
		       void *arg)
{
	struct swnic_wnet *wn = swnic_wnet(net);
	u64 held = 0, held_waiting = 0;
	struct swnic_peer *p;
	int i, ret;

	mutex_lock(&wn->lock);
	list_for_each_entry(p, &wn->peers, node) {
		held += p->nheld;
		held_waiting += p->nheld_waiting;
	}
	ret = fn(arg, "tx_packets", wn->tx_pkts) ?:
	      fn(arg, "tx_errors", wn->tx_errors) ?:
	      fn(arg, "rx_packets", wn->rx_pkts) ?:
	      fn(arg, "retx_packets", wn->retx_pkts) ?:
	      fn(arg, "gso_sends", wn->gso_sends) ?:
	      fn(arg, "gso_recvs", wn->gso_recvs) ?:
	      fn(arg, "tx_spliced", wn->tx_spliced) ?:
	      fn(arg, "tx_pages", wn->ntxpages) ?:
	      fn(arg, "tx_page_allocs", wn->txpage_allocs) ?:
	      fn(arg, "busy_polls", wn->polls) ?:
	      fn(arg, "poll_fallbacks", atomic64_read(&wn->poll_fallbacks)) ?:
	      fn(arg, "rx_kicks", atomic64_read(&wn->rx_kicks)) ?:
	      fn(arg, "rx_inline", atomic64_read(&wn->rx_inline)) ?:
	      fn(arg, "inline_rounds", wn->inline_rounds) ?:
	      fn(arg, "inline_full", atomic64_read(&wn->inline_full)) ?:
	      fn(arg, "tail_probes", wn->probes) ?:
	      fn(arg, "rto_fires", wn->rto_fires) ?:
	      fn(arg, "rack_retx", wn->rack_retx) ?:
	      fn(arg, "spurious_retx", wn->spurious) ?:
	      fn(arg, "peers", wn->npeers) ?:
	      fn(arg, "rx_mem_bytes", wn->rx_mem) ?:
	      fn(arg, "rx_spare_bytes", wn->spare_mem) ?:
	      fn(arg, "rx_buf_reuses", wn->spare_reuses) ?:
	      fn(arg, "rx_kept", wn->rx_kept) ?:
	      fn(arg, "rx_kept_copied", wn->rx_kept_copied) ?:
	      fn(arg, "rx_passed", wn->rx_passed) ?:
	      fn(arg, "fault_waits", wn->fault_waits) ?:
	      fn(arg, "held", held) ?:
	      fn(arg, "held_waiting", held_waiting) ?:
	      fn(arg, "held_taken", wn->held_taken) ?:
	      fn(arg, "held_failed", wn->held_failed) ?:
	      fn(arg, "keepalives", wn->keepalives) ?:
	      fn(arg, "peers_evicted", wn->peers_evicted);
	for (i = 0; !ret && i < __SWNIC_DROP_NUM; i++)
		ret = fn(arg, swnic_drop_names[i] ?: "drop_other",
			 atomic64_read(&wn->drops[i]));
	mutex_unlock(&wn->lock);
	return ret;
}

/**
 * swnic_udp_peers() - the peer contexts of a network namespace
 * @net: the namespace
 * @pos: in: the first peer to show (its place on the list); out: the one
 *	 @fn stopped at, or past the last
 * @gen: out: the generation of the list (changes with the set of peers)
 * @fn: called for each peer under the wire's lock; a non-zero return
 *	stops the walk and is returned
 * @arg: @fn's argument
 *
 * Return: 0 at the end of the list, or what @fn returned.
 */
int swnic_udp_peers(struct net *net, unsigned long *pos, unsigned int *gen,
		    int (*fn)(void *arg, const struct swnic_peer_info *info),
		    void *arg)
{
	struct swnic_wnet *wn = swnic_wnet(net);
	unsigned long i = 0, now = jiffies;
	struct swnic_peer_info info;
	unsigned int j;
	struct swnic_peer *p;
	int ret = 0;

	mutex_lock(&wn->lock);
	*gen = wn->peers_gen;
	list_for_each_entry(p, &wn->peers, node) {
		if (i++ < *pos)
			continue;
		info = (struct swnic_peer_info) {
			.ip = p->ip,
			.v6 = p->v6,
			.addr6 = p->addr6,
			.port = ntohs(p->port),
			.my_inc = p->my_inc,
			.their_inc = p->their_inc,
			.srtt_us = p->srtt_us,
			.rttvar_us = p->rttvar_us,
			.rto_us = p->rto_us,
			.inflight = p->inflight,
			.msgs = p->nmsgs,
			.held = p->nheld,
			.held_waiting = p->nheld_waiting,
			.silent_ms = jiffies_to_msecs(now - p->heard),
			.retx = p->retx,
			.tx_bytes = p->tx_bytes,
			.rx_bytes = p->rx_bytes,
		};
		for (j = 0; j < ARRAY_SIZE(swnic_peer_drop_reasons); j++) {
			unsigned int why = swnic_peer_drop_reasons[j];

			info.drop_names[j] = swnic_drop_names[why];
			info.drops[j] = p->drops[why];
		}
		info.ndrops = j;
		ret = fn(arg, &info);
		if (ret)
			break;
		(*pos)++;
	}
	mutex_unlock(&wn->lock);
	return ret;
}

static int __net_init swnic_udp_net_init(struct net *net)
{
	struct swnic_wnet *wn = swnic_wnet(net);

	wn->net = net;
	mutex_init(&wn->lock);
	kthread_init_work(&wn->work, swnic_udp_work);
	hrtimer_init(&wn->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	wn->timer.function = swnic_udp_timer;
	hrtimer_init(&wn->poll_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	wn->poll_timer.function = swnic_udp_poll_timer;
	INIT_LIST_HEAD(&wn->peers);
	xa_init(&wn->users6);
	INIT_LIST_HEAD(&wn->held_done);
	ratelimit_state_init(&wn->peer_limit, HZ, SWNIC_PEERS_PER_SEC);
	ratelimit_set_flags(&wn->peer_limit, RATELIMIT_MSG_ON_RELEASE);
	return 0;
}

/*
 * Before any device of the namespace goes, its wire sockets go. A UDP
 * socket keeps the input route of a packet it received early-demuxed
 * (sk_rx_dst), and a multicast packet's route holds the namespace's
 * loopback device: kept until .exit, which runs after the devices' exit,
 * it would keep lo from ever being freed (the namespace's cleanup, and
 * rmmod, would hang). Posters and the worker see @dead, and no socket.
 */
static void __net_exit swnic_udp_net_pre_exit(struct net *net)
{
	struct swnic_wnet *wn = swnic_wnet(net);
	struct socket *sock, *sock6;

	mutex_lock(&wn->lock);
	wn->dead = true;
	sock = wn->sock;
	sock6 = wn->sock6;
	wn->sock = NULL;
	wn->sock6 = NULL;
	mutex_unlock(&wn->lock);
	/* A held send's outcome may come any time: it kicks no more. */
	spin_lock(&swnic_held_lock);
	wn->held_dead = true;
	spin_unlock(&swnic_held_lock);
	/* No packet comes in after this. */
	if (sock)
		udp_tunnel_sock_release(sock);
	if (sock6)
		udp_tunnel_sock_release(sock6);
}

static void __net_exit swnic_udp_net_exit(struct net *net)
{
	struct swnic_wnet *wn = swnic_wnet(net);
	struct swnic_name6_user *u;
	struct swnic_names6 *names6;
	struct swnic_peer *p, *tmp;
	unsigned long idx;

	/* The sockets went in .pre_exit: no packet comes in any more. */
	synchronize_rcu();
	swnic_inline_forget(wn);
	hrtimer_cancel(&wn->poll_timer);
	/* The work re-arms the timer and the timer queues the work. */
	hrtimer_cancel(&wn->timer);
	if (wn->worker)
		kthread_cancel_work_sync(&wn->work);
	hrtimer_cancel(&wn->timer);
	if (wn->worker)
		kthread_destroy_worker(wn->worker);
	wn->worker = NULL;
	mutex_lock(&wn->lock);
	list_for_each_entry_safe(p, tmp, &wn->peers, node)
		swnic_peer_free(wn, p);
	swnic_kept_free(wn, true);
	/* Every held send was its peer's: forgotten, or freed with it. */
	WARN_ON(!list_empty(&wn->held_done));
	/*
	 * Readers look names up under RCU, by the count first: the count
	 * goes, then the table after a grace period.
	 */
	WRITE_ONCE(wn->nnames6, 0);
	names6 = wn->names6;
	wn->names6 = NULL;
	xa_for_each(&wn->users6, idx, u)
		kfree(u);
	xa_destroy(&wn->users6);
	mutex_unlock(&wn->lock);
	if (names6) {
		synchronize_rcu();
		kvfree(names6);
	}
}

static struct pernet_operations swnic_udp_net_ops = {
	.init = swnic_udp_net_init,
	.pre_exit = swnic_udp_net_pre_exit,
	.exit = swnic_udp_net_exit,
	.id = &swnic_udp_net_id,
	.size = sizeof(struct swnic_wnet),
};

int __init swnic_udp_init(void)
{
	unsigned int i;

	swnic_wire_build_bug_on();
	for (i = 0; i < ARRAY_SIZE(swnic_inline_tab); i++) {
		spin_lock_init(&swnic_inline_tab[i].lock);
		INIT_HLIST_HEAD(&swnic_inline_tab[i].head);
	}
	if (!udp_port || udp_port > U16_MAX)
		return -EINVAL;
	return register_pernet_subsys(&swnic_udp_net_ops);
}

void swnic_udp_exit(void)
{
	unregister_pernet_subsys(&swnic_udp_net_ops);
}
