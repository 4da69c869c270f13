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
 *
 * The files (what they share is in udp_internal.h):
 * - udp.c: this overview, the module parameters, the worker and its
 *   rounds (the sockets read, the timer, busy polling, inline sections),
 *   and each namespace's wire made and torn down;
 * - udp_sock.c: the UDP sockets, and the addresses devices and endpoints
 *   are known by (IPv6 names included);
 * - udp_post.c: the transport ops, which turn an SQE into a request;
 * - udp_tx.c: packets out: buffers, checksums, GSO sends, the window,
 *   retransmissions;
 * - udp_rx.c: packets in: ACKs, fragments of requests, answers;
 * - udp_exec.c: messages received, run at their target in their peer's
 *   order, and sends held for a receive (delivery complete);
 * - udp_peer.c: peer contexts, IPv6 names, a peer's timers, and what
 *   netlink shows of peers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "udp_internal.h"

unsigned int swnic_udp_port = SWNIC_WIRE_UDP_PORT;
module_param_named(udp_port, swnic_udp_port, uint, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of the wire in every network namespace (default 4793)");

/*
 * Only a peer's wire socket sends from udp_port: a datagram from another
 * source port is some user's, who could write any uid and auth key into
 * it (udp_rx.c). For fuzzing the wire from ordinary sockets only.
 */
bool swnic_udp_any_sport;
module_param_named(udp_any_sport, swnic_udp_any_sport, bool, 0644);
MODULE_PARM_DESC(udp_any_sport, "take datagrams from any UDP source port, not only udp_port: for fuzzing only, it lets any user forge uids and keys (default N)");

unsigned int swnic_peer_timeout_ms = 5000;
module_param_named(peer_timeout_ms, swnic_peer_timeout_ms, uint, 0644);
MODULE_PARM_DESC(peer_timeout_ms, "a peer silent this long fails what was sent to it (ms, default 5000)");

unsigned int swnic_peer_idle_ms = 10000;
module_param_named(peer_idle_ms, swnic_peer_idle_ms, uint, 0644);
MODULE_PARM_DESC(peer_idle_ms, "a peer context idle this long may be reused once a namespace has 1024 (ms, default 10000)");

unsigned int swnic_rx_mem_mb = 512;
module_param_named(rx_mem_mb, swnic_rx_mem_mb, uint, 0644);
MODULE_PARM_DESC(rx_mem_mb, "MiB of messages being received a namespace may hold (default 512)");

/* UDP GSO sends hand the packets' pages to the stack (swnic_udp_sendv()). */
bool swnic_tx_splice = true;
module_param_named(tx_splice, swnic_tx_splice, bool, 0644);
MODULE_PARM_DESC(tx_splice, "UDP GSO sends take the packets' pages rather than copy them, where the kernel can (default 1)");

/*
 * A SEND, TSEND or WRITE of at least rx_keep_kb KiB stays in the packets it
 * came in until it runs, and is copied once, from them to its destination
 * (swnic_rxmsg_keep()); a smaller one is reassembled in a buffer first.
 */
unsigned int swnic_rx_keep_kb = 16;
module_param_named(rx_keep_kb, swnic_rx_keep_kb, uint, 0644);
MODULE_PARM_DESC(rx_keep_kb, "KiB from which a received message is kept in its packets, not copied to a buffer (0: never; default 16)");

unsigned int swnic_udp_net_id;

/* ---- the worker, its rounds, and who runs them ------------------------- */

/*
 * The next datagram of @sk (a burst, if the device or GRO made one), UDP's
 * checksum checked; an IPv4 packet routed here as a broadcast or multicast
 * (a subnet's broadcast address, which its header does not tell, as well
 * as 255.255.255.255 and groups) dropped: peers send to our unicast
 * address. UDP drops the route before it queues a packet, so the address
 * is looked up again. An empty datagram is dropped as short.
 *
 * Return: the datagram; NULL if there was none (*@taken false) or the one
 * taken was dropped (*@taken true: it counts against the round's batch
 * as a packet would, or a flood of them would keep the round going).
 */
static struct sk_buff *swnic_udp_dequeue(struct swnic_wnet *wn,
					 struct sock *sk, bool *taken)
{
	struct sk_buff *skb;
	int off = 0, err;

	skb = __skb_recv_udp(sk, MSG_DONTWAIT, &off, &err);
	*taken = skb;
	if (!skb)
		return NULL;
	if (!udp_skb_csum_unnecessary(skb) &&
	    __udp_lib_checksum_complete(skb)) {
		swnic_drop(wn, SWNIC_DROP_CSUM);
		kfree_skb(skb);
		return NULL;
	}
	if (skb->protocol == htons(ETH_P_IP) &&
	    inet_addr_type(wn->net, ip_hdr(skb)->daddr) != RTN_LOCAL) {
		swnic_drop(wn, SWNIC_DROP_ADDR);
		kfree_skb(skb);
		return NULL;
	}
	if (!skb->len) {
		swnic_drop(wn, SWNIC_DROP_SHORT);
		kfree_skb(skb);
		return NULL;
	}
	return skb;
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
 * Take up to SWNIC_BATCH packets from the sockets, in turn, a datagram
 * dropped on the way counting as one. A burst (UDP GSO from a local
 * sender, or GRO) is taken whole: its packets are gso_size bytes each,
 * the last maybe shorter.
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
			bool taken;

			if (!socks[i])
				continue;
			skb = swnic_udp_dequeue(wn, socks[i]->sk, &taken);
			got += taken;
			if (!skb) {
				n += taken;
				continue;
			}
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
void swnic_udp_data_ready(struct sock *sk)
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

/* ---- a namespace's wire: made and gone ---------------------------------- */

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
	hash_init(wn->peer_hash);
	wn->peer_seed = get_random_u32();
	xa_init(&wn->users6);
	xa_init(&wn->unheard);
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
	/* Each context's count went with it. */
	WARN_ON(!xa_empty(&wn->unheard));
	xa_destroy(&wn->unheard);
	swnic_kept_free(wn, true);
	/* Every held send was its peer's: forgotten, or freed with it. */
	WARN_ON(!list_empty(&wn->held_done));
	/*
	 * Readers look names up under RCU, by the count first: the count
	 * goes, then the table after a grace period.
	 */
	WRITE_ONCE(wn->nnames6, 0);
	names6 = wn->names6;
	xa_for_each(&wn->users6, idx, u)
		kfree(u);
	xa_destroy(&wn->users6);
	mutex_unlock(&wn->lock);
	if (names6) {
		synchronize_rcu();
		wn->names6 = NULL;
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
	if (!swnic_udp_port || swnic_udp_port > U16_MAX)
		return -EINVAL;
	return register_pernet_subsys(&swnic_udp_net_ops);
}

void swnic_udp_exit(void)
{
	unregister_pernet_subsys(&swnic_udp_net_ops);
}

