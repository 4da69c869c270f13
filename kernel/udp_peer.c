// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: peer contexts. Making, finding, resetting and freeing them;
 * IPv6 peers' names; their timers (RTO, tail loss probe, keepalive,
 * silence); what netlink shows of them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "udp_internal.h"

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
	[SWNIC_DROP_UNPROVEN] = "drop_unproven",
	[SWNIC_DROP_TOO_BIG] = "drop_too_big",
};

/*
 * The reasons a packet can be dropped for once its peer is known (the
 * others happen before: checksum, version, peers, queue).
 */
static const u8 swnic_peer_drop_reasons[] = {
	SWNIC_DROP_SHORT, SWNIC_DROP_STALE, SWNIC_DROP_WINDOW, SWNIC_DROP_DUP,
	SWNIC_DROP_BAD_MSG, SWNIC_DROP_NO_MEM, SWNIC_DROP_NO_DEV,
	SWNIC_DROP_UNPROVEN, SWNIC_DROP_TOO_BIG,
};

static_assert(ARRAY_SIZE(swnic_peer_drop_reasons) <= SWNIC_PEER_DROPS_MAX);

/* ---- peer contexts ------------------------------------------------------ */

static u32 swnic_new_inc(void)
{
	u32 inc;

	do {
		inc = get_random_u32();
	} while (!inc);
	return inc;
}

/* Forget what we received from the peer's old incarnation. */
void swnic_peer_reset_rx(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct swnic_rxmsg *rm, *tmp;

	list_for_each_entry_safe(rm, tmp, &p->rxmsgs, node)
		swnic_rxmsg_free(wn, p, rm);
	swnic_held_forget(wn, p);
	p->rcv_nxt = 0;
	p->exec_next = 0;
	bitmap_zero(p->rcv_map, SWNIC_RX_WIN);
	p->ack_due = false;
	p->ack_now = false;
	p->rx_dups = 0;
}

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
void swnic_peer_reset_tx(struct swnic_wnet *wn, struct swnic_peer *p,
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
	p->inflight_req = 0;
	/* Oldest first: the waiting requests were made before the queued. */
	list_splice_tail_init(&p->txq, &p->waiting);
	list_for_each_entry_safe(tm, ttmp, &p->waiting, node) {
		if (tm->kind != SWNIC_TX_REQ) {
			list_del(&tm->node);
			swnic_answer_free(wn, p, tm);
		} else if (retry && !tm->held &&
			   (!tm->id_set || !p->acked_any ||
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
	p->msg_floor = 0;
	p->acked_any = false;
	p->rto_us = SWNIC_RTO_INIT_US;
	p->srtt_us = 0;
	p->min_rtt_us = 0;
	p->reo_mult = 1;
	p->reo_clean = 0;
	p->dups_seen = 0;
	list_for_each_entry(tm, &again, node) {
		tm->id_set = false;	/* numbered again as they go */
		tm->pos = 0;
		tm->last = false;	/* every packet is made again */
		tm->got = 0;
		tm->err = 0;
	}
	list_splice_tail(&again, &p->txq);
}

/*
 * The peer's incarnation @their_inc gives way to another: @inc, the one
 * it was, is retired. A peer never comes back as an incarnation it was
 * (each is new, at random), so a packet of one retired is an old one
 * still on its way - delayed, duplicated or replayed - and taking it for
 * a new incarnation reset the context under the live one: both then
 * reset again and again, or wedged.
 */
void swnic_peer_retire(struct swnic_peer *p, u32 inc)
{
	if (!inc || swnic_peer_retired(p, inc))
		return;
	memmove(&p->old_inc[1], &p->old_inc[0],
		sizeof(p->old_inc) - sizeof(p->old_inc[0]));
	p->old_inc[0] = inc;
}

bool swnic_peer_retired(const struct swnic_peer *p, u32 inc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(p->old_inc); i++)
		if (inc && p->old_inc[i] == inc)
			return true;
	return false;
}

/* ---- IPv6 peers' names ---------------------------------------------------- */

/*
 * Names are never reclaimed, and cannot safely be: once handed out, a
 * name lives where the kernel cannot see it - in a process's AVs and its
 * library's cache, in completions' source addresses, in a shared AV's
 * table, in MR peer lists, in work requests not yet posted. A name
 * reused for another address would silently send a stale holder's data
 * to another host; a name made to fail would fail a peer an application
 * still holds. So the table is bounded instead (SWNIC_MAX_ADDR6): packets'
 * sources make at most SWNIC_MAX_PEERS names in all (their contexts are
 * reused once idle, their names are not: swnic_rx_name6()), users
 * without CAP_NET_ADMIN at most half of the table together and
 * SWNIC_ADDR6_PER_USER each.
 */

/*
 * The address IPv6 name @name stands for (any context: under the lock or
 * RCU, or with the namespace referenced). Return: false if none.
 */
bool swnic_name6_addr(struct swnic_wnet *wn, __be32 name,
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
__be32 swnic_name6_get(struct swnic_wnet *wn,
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
struct swnic_name6_user *swnic_name6_user(struct swnic_wnet *wn,
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
bool swnic_name6_may_use(struct swnic_wnet *wn, __be32 name,
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
void swnic_name6_publish(struct swnic_wnet *wn, __be32 name)
{
	struct swnic_name6 *e = swnic_name6_entry(wn, name);

	if (e)
		e->public = true;
}

/*
 * Can @addr be an IPv6 peer's address? Unicast, not this host's loopback
 * nor IPv4-mapped (an IPv4 peer is named by its IPv4 address).
 */
bool swnic_addr6_unicast(const struct in6_addr *addr)
{
	int type = ipv6_addr_type(addr);

	return !(type & (IPV6_ADDR_MULTICAST | IPV6_ADDR_LOOPBACK |
			 IPV6_ADDR_MAPPED)) && type != IPV6_ADDR_ANY;
}

/* The scope a packet's or a user's @addr is named in: see swnic_name6. */
int swnic_addr6_scope(const struct in6_addr *addr, int ifindex)
{
	return ipv6_addr_type(addr) & IPV6_ADDR_LINKLOCAL ? ifindex : 0;
}

static u32 swnic_peer_hash(struct swnic_wnet *wn, __be32 ip, __be16 port)
{
	return jhash_2words((__force u32)ip, (__force u16)port, wn->peer_seed);
}

/*
 * The context of @ip/@port with our address @local - each packet's, by
 * a lookup in a hash table: a walk of the list of up to SWNIC_MAX_PEERS
 * contexts was one per packet, in the worker every peer of the
 * namespace shares.
 */
static struct swnic_peer *swnic_peer_find(struct swnic_wnet *wn, __be32 ip,
					  __be16 port,
					  const struct in6_addr *local)
{
	struct swnic_peer *p;

	hash_for_each_possible(wn->peer_hash, p, hnode,
			       swnic_peer_hash(wn, ip, port))
		if (p->ip == ip && p->port == port &&
		    ipv6_addr_equal(&p->local, local))
			return p;
	return NULL;
}

/**
 * swnic_peer_host_use() - what @p's host holds of us, all its contexts'
 * @wn: the namespace's wire (lock held)
 * @p: one context of the host (remote address and port)
 * @u: filled in
 *
 * A host has a context per address of ours it talks to; its caps are the
 * host's however many of those it sends to - per context, a host would
 * have them once per address of ours: its messages' share of the receive
 * budget (@u->rx_mem), our answers waiting to go to it (@u->answers,
 * SWNIC_MAX_ANSWERS; @u->unproven of them to its contexts no packet
 * naming us came to, SWNIC_MAX_ANSWERS_UNPROVEN) and its sends we hold
 * for a receive (@u->held, struct swnic_held: SWNIC_MAX_MSGS).
 */
void swnic_peer_host_use(struct swnic_wnet *wn, const struct swnic_peer *p,
			 struct swnic_host_use *u)
{
	struct swnic_peer *q;

	*u = (struct swnic_host_use){};
	hash_for_each_possible(wn->peer_hash, q, hnode,
			       swnic_peer_hash(wn, p->ip, p->port)) {
		if (q->ip != p->ip || q->port != p->port)
			continue;
		u->rx_mem += q->rx_mem;
		u->answers += q->nanswers;
		if (!q->proven)
			u->unproven += q->nanswers;
		u->held += q->nheld;
	}
}

/* The dialled context of @ip/@port (swnic_peer_get_posted()), or NULL. */
static struct swnic_peer *swnic_peer_find_dialled(struct swnic_wnet *wn,
						  __be32 ip, __be16 port)
{
	struct swnic_peer *p;

	hash_for_each_possible(wn->peer_hash, p, hnode,
			       swnic_peer_hash(wn, ip, port))
		if (p->ip == ip && p->port == port && p->dialled)
			return p;
	return NULL;
}

/*
 * The address our packets to @ip go from, as the namespace's routes pick
 * it (an IPv6 name's address and scope looked up): into @local, left
 * any if there is no route (yet).
 */
static void swnic_route_source(struct swnic_wnet *wn, __be32 ip,
			       __be16 port, struct in6_addr *local)
{
	*local = in6addr_any;
	if (swnic_addr_is_name6((__force u32)ip)) {
		struct flowi6 fl6 = {
			.flowi6_proto = IPPROTO_UDP,
			.fl6_dport = port,
			.fl6_sport = htons(swnic_udp_port),
		};
		struct dst_entry *dst;

		if (!wn->sock6 ||
		    !swnic_name6_addr(wn, ip, &fl6.daddr, &fl6.flowi6_oif) ||
		    ip6_dst_lookup(wn->net, wn->sock6->sk, &dst, &fl6))
			return;
		dst_release(dst);
		*local = fl6.saddr;
	} else {
		struct flowi4 fl4 = {
			.daddr = ip,
			.flowi4_proto = IPPROTO_UDP,
			.fl4_dport = port,
			.fl4_sport = htons(swnic_udp_port),
		};
		struct rtable *rt = ip_route_output_key(wn->net, &fl4);

		if (IS_ERR(rt))
			return;
		ip_rt_put(rt);
		ipv6_addr_set_v4mapped(fl4.saddr, local);
	}
}

/*
 * @p's address of ours, if its route gave none when it was made (no route
 * then): the one the route picks now, called before each packet of @p
 * goes (swnic_udp_sendv()). So no packet of a context ever leaves from an
 * address it is not bound to: while it has none, nothing of it leaves (as
 * there is no route), and no packet of its peer is its (swnic_peer_get()).
 * Return: false if there is still no route, or if a context of that pair
 * exists already (made since by its peer's packets, or an earlier
 * dialled one): two contexts of one pair were two incarnations of ours to
 * the peer, taking turns; this one is not sent from, and fails by its
 * silence.
 */
bool swnic_peer_bind(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct in6_addr local;

	lockdep_assert_held(&wn->lock);
	if (!ipv6_addr_any(&p->local))
		return true;
	swnic_route_source(wn, p->ip, p->port, &local);
	if (ipv6_addr_any(&local) || swnic_peer_find(wn, p->ip, p->port, &local))
		return false;
	p->local = local;
	return true;
}

static bool swnic_peer_quiet(const struct swnic_peer *p);
static struct swnic_peer *swnic_peer_settle(struct swnic_wnet *wn,
					    struct swnic_peer *p);

/*
 * The context posts to @ip/@port go through: the dialled one while
 * anything is in flight to or from it (so that messages stay in order);
 * else the one of our address the route picks now (@local: that
 * address), or NULL if there is none yet. A route that picks another
 * source from then on (an address added, or renumbered) is followed at
 * the first post that finds the dialled context quiet.
 */
static struct swnic_peer *swnic_peer_for_post(struct swnic_wnet *wn,
					      __be32 ip, __be16 port,
					      struct in6_addr *local)
{
	struct swnic_peer *p = swnic_peer_find_dialled(wn, ip, port);

	*local = in6addr_any;
	if (p && !swnic_peer_quiet(p))
		return p;
	swnic_route_source(wn, ip, port, local);
	if (p && (ipv6_addr_any(local) || ipv6_addr_equal(&p->local, local)))
		return p;
	return swnic_peer_find(wn, ip, port, local);
}

/* @p is the context posts to its remote address go through, alone. */
static void swnic_peer_dial(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct swnic_peer *q;

	if (p->dialled)
		return;
	hash_for_each_possible(wn->peer_hash, q, hnode,
			       swnic_peer_hash(wn, p->ip, p->port))
		if (q->ip == p->ip && q->port == p->port)
			q->dialled = false;
	p->dialled = true;
}

/* ---- contexts a user's posts made, not heard from ------------------------ */

static unsigned long swnic_unheard_count(struct swnic_wnet *wn,
					 unsigned long key)
{
	void *e = xa_load(&wn->unheard, key);

	return xa_is_value(e) ? xa_to_value(e) : 0;
}

/* One fewer for @key (replacing an entry allocates nothing). */
static void swnic_unheard_put(struct swnic_wnet *wn, unsigned long key)
{
	unsigned long n = swnic_unheard_count(wn, key);

	if (n <= 1)
		xa_erase(&wn->unheard, key);
	else
		xa_store(&wn->unheard, key, xa_mk_value(n - 1), GFP_NOWAIT);
}

static void swnic_peer_unheard_end(struct swnic_wnet *wn,
				   struct swnic_peer *p)
{
	if (!p->unheard)
		return;
	p->unheard = false;
	swnic_unheard_put(wn, from_kuid(&init_user_ns, p->maker));
}

/* A packet naming us came from @p: it lives, and its maker's count drops. */
void swnic_peer_heard(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct swnic_txpkt *t;

	/*
	 * Proven now: answers held back (swnic_may_resend()) go again at
	 * this round's tick, not after an RTO that backed off meanwhile.
	 */
	if (!p->proven) {
		list_for_each_entry(t, &p->unacked, node) {
			if (t->req || t->resends < SWNIC_UNPROVEN_RESENDS)
				continue;
			p->rto_us = SWNIC_RTO_INIT_US;
			p->rto_mark = ktime_sub_us(ktime_get(),
						   SWNIC_RTO_INIT_US);
			break;
		}
	}
	p->heard = jiffies;
	p->proven = true;
	swnic_peer_unheard_end(wn, p);
}

/*
 * The context a post of @uid's to @ip/@port goes through. A new one - or
 * one whose peer we know nothing of (it never spoke, or failed by its
 * silence since) and no one is charged for - counts against @uid until
 * the peer is heard from (a packet naming us) or fails, at most
 * SWNIC_PEERS_UNHEARD: one user posting to addresses that never answer -
 * they keep their contexts busy until the peer timeout, and the user may
 * post again - could otherwise hold every context of the namespace, and
 * every other user's first post to a new peer would fail (EAGAIN) for as
 * long as it went on. Past the cap its posts are refused (EAGAIN: an
 * RM_ENABLED endpoint's SQE stays for the next doorbell) until one of
 * its peers answers or fails.
 */
struct swnic_peer *swnic_peer_get_posted(struct swnic_wnet *wn, __be32 ip,
					 __be16 port, kuid_t uid)
{
	unsigned long key = from_kuid(&init_user_ns, uid), n;
	struct in6_addr local;
	struct swnic_peer *p = swnic_peer_for_post(wn, ip, port, &local);

	if (p && ipv6_addr_any(&p->local))
		p = swnic_peer_settle(wn, p);
	if (p && (p->unheard || p->their_inc)) {
		swnic_peer_dial(wn, p);
		return p;
	}
	n = swnic_unheard_count(wn, key);
	if (n >= SWNIC_PEERS_UNHEARD) {
		wn->peers_capped++;
		return NULL;
	}
	if (xa_is_err(xa_store(&wn->unheard, key, xa_mk_value(n + 1),
			       GFP_KERNEL)))
		return NULL;
	if (!p)
		p = swnic_peer_get(wn, ip, port, &local, true, false);
	if (!p) {
		swnic_unheard_put(wn, key);
		return NULL;
	}
	p->unheard = true;
	p->maker = uid;
	swnic_peer_dial(wn, p);
	return p;
}

/*
 * Would swnic_peer_get_posted() and the post's capacity check refuse a
 * post of @uid's to @ip/@port for now (EAGAIN)? Its context holds
 * SWNIC_MAX_MSGS requests, or it would be a new unheard one past @uid's
 * cap. Asked (wn->lock held) before a post allocates and pins anything,
 * so that one tried again until the peer has room - a triggered SQE,
 * every SWNIC_TRIG_RETRY_TICK - does not pin and unpin its whole buffer
 * each time. Changes nothing but the count of refusals.
 */
bool swnic_peer_post_refused(struct swnic_wnet *wn, __be32 ip, __be16 port,
			     kuid_t uid)
{
	struct in6_addr local;
	struct swnic_peer *p;

	lockdep_assert_held(&wn->lock);
	p = swnic_peer_for_post(wn, ip, port, &local);
	if (p && p->nmsgs >= SWNIC_MAX_MSGS)
		return true;
	if (p && (p->unheard || p->their_inc))
		return false;
	if (swnic_unheard_count(wn, from_kuid(&init_user_ns, uid)) <
	    SWNIC_PEERS_UNHEARD)
		return false;
	wn->peers_capped++;
	return true;
}

void swnic_peer_free(struct swnic_wnet *wn, struct swnic_peer *p)
{
	swnic_peer_unheard_end(wn, p);
	swnic_peer_reset_tx(wn, p, ECONNABORTED, 0);
	swnic_peer_reset_rx(wn, p);
	list_del(&p->node);
	hash_del(&p->hnode);
	wn->npeers--;
	wn->peers_gen++;
	xa_destroy(&p->rxids);
	kfree(p);
}

/* Nothing in flight to or from @p. */
static bool swnic_peer_quiet(const struct swnic_peer *p)
{
	return list_empty(&p->unacked) && list_empty(&p->waiting) &&
	       list_empty(&p->txq) && list_empty(&p->rxmsgs);
}

/*
 * @p was dialled with no route (its @local any); the route picks an
 * address of ours now, but its pair's context @q exists already: made
 * since by a packet of the peer's to that address (a forged one will
 * do), or dialled before. Nothing of @p's ever left (swnic_udp_sendv()
 * sends nothing of a context with no address), so its requests go again
 * from @q, after @q's, numbered as @q's (a reset's retry: from their
 * first packet); @q is the dialled one from now on, and @p goes. Before,
 * @p would not bind (two contexts of one pair are two incarnations of
 * ours, taking turns), sent nothing and failed by its silence.
 */
static void swnic_peer_move(struct swnic_wnet *wn, struct swnic_peer *p,
			    struct swnic_peer *q)
{
	struct swnic_txmsg *tm, *tmp;

	swnic_peer_reset_tx(wn, p, ECONNABORTED, SWNIC_RESET_RETRY);
	if (list_empty(&q->unacked) && list_empty(&q->waiting))
		q->heard = jiffies;	/* the silence starts now */
	list_for_each_entry_safe(tm, tmp, &p->txq, node) {
		list_move_tail(&tm->node, &q->txq);
		p->nmsgs--;
		q->nmsgs++;
	}
	/* Its maker's count of contexts not heard from goes with them. */
	if (p->unheard && !q->unheard && !q->their_inc) {
		p->unheard = false;
		q->unheard = true;
		q->maker = p->maker;
	}
	swnic_peer_dial(wn, q);
	swnic_peer_free(wn, p);
}

/*
 * @p, dialled with no route, once the route picks an address of ours:
 * bound to it (as swnic_peer_bind() does at its next packet), or, if
 * that pair has a context already, its requests moved there
 * (swnic_peer_move()). Return: the context @p's requests are on now.
 */
static struct swnic_peer *swnic_peer_settle(struct swnic_wnet *wn,
					    struct swnic_peer *p)
{
	struct in6_addr local;
	struct swnic_peer *q;

	lockdep_assert_held(&wn->lock);
	if (!ipv6_addr_any(&p->local))
		return p;
	swnic_route_source(wn, p->ip, p->port, &local);
	if (ipv6_addr_any(&local))
		return p;
	q = swnic_peer_find(wn, p->ip, p->port, &local);
	if (!q) {
		p->local = local;
		return p;
	}
	/*
	 * All at once, when they fit: a context has SWNIC_MAX_MSGS at
	 * most, which the peer's caps count on (held sends). Until then
	 * they wait here, and posts too (@p stays dialled); @q, dialled by
	 * no one, only drains.
	 */
	if (p->nmsgs + q->nmsgs > SWNIC_MAX_MSGS)
		return p;
	swnic_peer_move(wn, p, q);
	return q;
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
	unsigned long idle = msecs_to_jiffies(READ_ONCE(swnic_peer_idle_ms));
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
bool swnic_peer_room(struct swnic_wnet *wn)
{
	return wn->npeers < SWNIC_MAX_PEERS || swnic_peer_evictable(wn);
}

/*
 * The peer context for @ip/@port with our address @local; made if
 * @create (capped, reusing an idle one at the cap; and when @remote, made
 * by a packet, rate-limited too). A packet's is its pair's alone: a
 * context dialled with no route (its @local any) sent nothing yet, so no
 * packet answers it, and it takes its address from the route when it
 * first sends (swnic_peer_bind()). Before, it took the packets of its
 * peer's address and port to any address of ours until one named it: a
 * peer dialling another address of ours meanwhile was answered by it,
 * from the address its route picked later.
 */
struct swnic_peer *swnic_peer_get(struct swnic_wnet *wn, __be32 ip,
				  __be16 port, const struct in6_addr *local,
				  bool create, bool remote)
{
	struct swnic_peer *p = swnic_peer_find(wn, ip, port, local);

	if (p)
		return p;
	if (!create)
		return NULL;
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
	p->local = *local;
	p->my_inc = swnic_new_inc();
	p->rto_us = SWNIC_RTO_INIT_US;
	p->reo_mult = 1;
	p->heard = jiffies;
	p->closed_at = jiffies;
	INIT_LIST_HEAD(&p->unacked);
	INIT_LIST_HEAD(&p->txq);
	INIT_LIST_HEAD(&p->waiting);
	INIT_LIST_HEAD(&p->rxmsgs);
	xa_init(&p->rxids);
	INIT_LIST_HEAD(&p->held);
	list_add_tail(&p->node, &wn->peers);
	hash_add(wn->peer_hash, &p->hnode, swnic_peer_hash(wn, ip, port));
	wn->npeers++;
	wn->peers_gen++;
	return p;
}

/* ---- a peer's timers: retransmission, probes, silence ------------------- */

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
			 &p->addr6, ntohs(p->port), swnic_peer_timeout_ms);
	else
		pr_debug("peer %pI4:%u silent for %u ms: failed\n",
			 &p->ip, ntohs(p->port), swnic_peer_timeout_ms);
	swnic_peer_reset_tx(wn, p, ETIMEDOUT, 0);
	swnic_peer_reset_rx(wn, p);
	p->their_inc = 0;
	/* Its maker's posts may go elsewhere (the next post pays again). */
	swnic_peer_unheard_end(wn, p);
	/* ... and from the address the route picks then. */
	p->dialled = false;
}

/*
 * Our requests a peer has not answered whose endpoint closed: nobody
 * waits for their outcome any more, and they must not keep it - its CQ,
 * a read's pinned pages - without end. Sends the peer holds (@all false)
 * are looked at every round: it may hold them as long as its application
 * likes. All of them each quarter of the peer timeout (swnic_tick()): a
 * peer that answers our probes, or sends us anything, but never answers
 * a request would keep them as long. An answer that comes after finds no
 * request, and is ignored.
 */
static void swnic_waiting_closed(struct swnic_peer *p, bool all)
{
	struct swnic_txmsg *tm, *tmp;

	list_for_each_entry_safe(tm, tmp, &p->waiting, node)
		if ((all || tm->held) && READ_ONCE(tm->ep->dead))
			swnic_req_done(p, tm, ECANCELED);
}

/* A PING: the peer's ACK says it lives. */
static void swnic_ping(struct swnic_wnet *wn, struct swnic_peer *p)
{
	struct {
		struct swnic_wire_hdr h;
		u8 pad[SWNIC_PING_ANON_LEN - sizeof(struct swnic_wire_hdr)];
	} pkt = {};

	/* Naming no one, it is answered only as long as the ACK (wire.h). */
	swnic_hdr_init(p, &pkt.h, SWNIC_PKT_PING, 0);
	swnic_udp_xmit(wn, p, &pkt, pkt.h.dst_inc ? sizeof(pkt.h) :
		       sizeof(pkt), 0);
	wn->keepalives++;
	p->ping_at = jiffies;
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
 * May @t go again at a timeout? Our requests may, to anyone. Answers to a
 * peer that never named us (!p->proven) go again twice at most: such a
 * request may come from a forged source, and answers sent again and
 * again, with pings, until the peer timeout made each forged request of
 * ~88 bytes some 17 packets at its victim. A real peer names us once an
 * answer, or our ACK of its request sent again, told it who we are: from
 * then on its answers go again as any (swnic_peer_heard() restarts the
 * RTO), and it probes us while it waits for them.
 */
static bool swnic_may_resend(const struct swnic_peer *p,
			     const struct swnic_txpkt *t)
{
	return p->proven || t->req || t->resends < SWNIC_UNPROVEN_RESENDS;
}

/*
 * Probe, retransmit what timed out, fail peers that stay silent; then arm
 * the timer for the earliest deadline left.
 */
void swnic_tick(struct swnic_wnet *wn)
{
	unsigned long timeout;
	ktime_t now = ktime_get(), next = KTIME_MAX, at;
	struct swnic_peer *p, *tmp;

	timeout = msecs_to_jiffies(max(READ_ONCE(swnic_peer_timeout_ms), 10U));
	list_for_each_entry_safe(p, tmp, &wn->peers, node) {
		struct swnic_txpkt *t;
		int burst = 0;

		/*
		 * Messages that wait for their packets only run as those
		 * come (swnic_rx_packet()): a walk of them all each round
		 * was one per round per peer, as long as a peer chose to
		 * leave one incomplete.
		 */
		if (!list_empty(&p->rxmsgs) && p->rx_retry)
			swnic_rx_run(wn, p);
		if (swnic_peer_quiet(p))
			continue;
		/* Dialled with no route: bound, or moved, once there is one. */
		if (ipv6_addr_any(&p->local) && swnic_peer_settle(wn, p) != p) {
			next = min(next, ktime_add_us(now, SWNIC_TICK_US));
			continue;	/* @p is gone; its pair's looked at */
		}
		if (p->nmsgs &&
		    !time_before(jiffies, p->closed_at + timeout / 4)) {
			swnic_waiting_closed(p, true);
			p->closed_at = jiffies;
		} else if (p->nheld_waiting) {
			swnic_waiting_closed(p, false);
		}
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
		if (p->proven && time_after(jiffies, p->heard + timeout / 4) &&
		    time_after(jiffies, p->ping_at + max(timeout / 8, 1UL)))
			swnic_ping(wn, p);
		swnic_peer_pump(wn, p);
		/*
		 * Still no route (swnic_peer_settle()): nothing of @p's
		 * left, none of it was lost - no retransmission, and no RTO
		 * backed off for it. Looked at each tick, its packets go as
		 * soon as a route is there; they waited for a backed-off RTO
		 * before, on top of the silence the peer timeout counts.
		 */
		if (list_empty(&p->unacked) || ipv6_addr_any(&p->local))
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
				if (!swnic_may_resend(p, t))
					continue;
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
		p->probed = true;
		if (!swnic_may_resend(p, t))
			continue;
		swnic_retransmit(wn, p, t);
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
bool swnic_ack_implied(struct swnic_peer *p)
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
	      fn(arg, "rx_unproven_bytes", wn->rx_unproven) ?:
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
	      fn(arg, "peers_evicted", wn->peers_evicted) ?:
	      fn(arg, "peers_capped", wn->peers_capped) ?:
	      fn(arg, "addr6_names", wn->nnames6) ?:
	      fn(arg, "addr6_names_net", wn->net_names6);
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
			.local = p->local,
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
			.answers = p->nanswers,
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

