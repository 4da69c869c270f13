// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: receiving packets. ACKs, fragments of requests, answers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "udp_internal.h"

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
	p->inflight_req -= t->req;
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
		if (!t->resends)
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
		if (!t->resends)
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
		    (!t->resends || ktime_us_delta(now, t->stamp) >=
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

/* ---- receiving: fragments, answers, packets ----------------------------- */

/* The traffic class (DSCP) a packet came with: its answers get it too. */
static u8 swnic_skb_tos(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IPV6))
		return ipv6_get_dsfield(ipv6_hdr(skb)) & ~INET_ECN_MASK;
	return ip_hdr(skb)->tos & ~INET_ECN_MASK;
}

/*
 * The first message of @p after @id in msg_id order (@id within the
 * window of ids it may have: SWNIC_RX_AHEAD from exec_next), or NULL.
 */
static struct swnic_rxmsg *swnic_rxmsg_after(struct swnic_peer *p, u32 id)
{
	u32 end = p->exec_next + SWNIC_RX_AHEAD - 1;
	unsigned long i = (u32)(id + 1);
	struct swnic_rxmsg *rm;

	if (id == end)
		return NULL;
	if (i <= end)
		return xa_find(&p->rxids, &i, end, XA_PRESENT);
	/* The window wraps: up to U32_MAX, then from 0. */
	rm = xa_find(&p->rxids, &i, U32_MAX, XA_PRESENT);
	if (rm)
		return rm;
	i = 0;
	return xa_find(&p->rxids, &i, end, XA_PRESENT);
}

/*
 * Make @rm (already in p->rxids, @rm->size set) message @m of @len bytes
 * whose first packet is @skb: charged, with its record, to the budget and
 * to the peer's share, and placed in msg_id order - before the next
 * message the peer has, if any.
 */
static void swnic_rxmsg_add(struct swnic_wnet *wn, struct swnic_peer *p,
			    struct swnic_rxmsg *rm,
			    const struct swnic_wire_msg *m, u64 len,
			    struct sk_buff *skb)
{
	struct swnic_rxmsg *pos;

	rm->msg_id = be32_to_cpu(m->msg_id);
	rm->m = *m;
	rm->len = len;
	rm->tos = swnic_skb_tos(skb);
	rm->ifindex = skb->skb_iif;
	wn->rx_mem += rm->size + sizeof(*rm);
	p->rx_mem += rm->size + sizeof(*rm);
	pos = swnic_rxmsg_after(p, rm->msg_id);
	list_add_tail(&rm->node, pos ? &pos->node : &p->rxmsgs);
}

/*
 * A message of a proven peer larger than its share of the receive budget
 * (SWNIC_RX_PEER_SHARE): it can never be taken. Before, its fragments
 * were dropped (drop_no_mem) and sent again for as long as the peer
 * lived: the initiator's request never completed. Now it is refused at
 * its first fragment - a record, done, that takes its other fragments
 * and drops them, and the answer ENOBUFS, which completes the request at
 * the initiator before it sends the rest. Both are charged to the budget
 * as any record and answer are, and within it: refusals are no way
 * around it. Return: 1 (the peer's run sends the answer, and frees the
 * record in its turn), or -1 over the budget, at the peer's cap of
 * answers or with no memory for them (the fragment comes again).
 */
static int swnic_rx_refuse(struct swnic_wnet *wn, struct swnic_peer *p,
			   const struct swnic_wire_msg *m, struct sk_buff *skb,
			   u64 budget, u64 peer_share)
{
	u32 id = be32_to_cpu(m->msg_id);
	struct swnic_host_use host;
	struct swnic_rxmsg *rm;
	struct swnic_txmsg *tm;

	swnic_peer_host_use(wn, p, &host);
	if (wn->rx_mem + sizeof(*rm) + sizeof(*tm) > budget ||
	    host.rx_mem + sizeof(*rm) > peer_share ||
	    host.answers >= SWNIC_MAX_ANSWERS) {
		swnic_peer_drop(wn, p, SWNIC_DROP_NO_MEM);
		return -1;
	}
	rm = kzalloc(sizeof(*rm), GFP_KERNEL);
	tm = kzalloc(sizeof(*tm), GFP_KERNEL);
	if (!rm || !tm || xa_insert(&p->rxids, id, rm, GFP_KERNEL)) {
		kfree(tm);
		kfree(rm);
		swnic_peer_drop(wn, p, SWNIC_DROP_NO_MEM);
		return -1;
	}
	rm->done = true;
	swnic_rxmsg_add(wn, p, rm, m, be64_to_cpu(m->len), skb);

	tm->msg_id = id;
	tm->tos = rm->tos;
	tm->kind = SWNIC_TX_STATUS;
	tm->status = ENOBUFS;
	swnic_answer_queue(wn, p, tm);
	swnic_peer_drop(wn, p, SWNIC_DROP_TOO_BIG);
	return 1;
}

/*
 * A fragment of a request: into its message. @proven: its packet names our
 * incarnation. Return: -1 to drop it; 1 if it made its message whole (a
 * request with no payload is whole as it comes), the one time the peer's
 * requests may have become runnable (else the rounds retry those that
 * were whole and did not run); 0 if it was taken otherwise - a walk of
 * the peer's records per packet was CPU at the sender's choice.
 */
static int swnic_rx_fragment(struct swnic_wnet *wn, struct swnic_peer *p,
			     bool proven, const struct swnic_wire_msg *m,
			     struct sk_buff *skb, unsigned int off,
			     unsigned int n)
{
	u32 id = be32_to_cpu(m->msg_id), frag = be32_to_cpu(m->frag), rem;
	u64 len = be64_to_cpu(m->len), at = be64_to_cpu(m->offset), idx;
	u64 table, need, budget, share, peer_share;
	struct swnic_host_use host;
	struct swnic_rxmsg *rm, *pos;
	unsigned int keep_kb;
	bool keep, fresh = false;

	if (m->opcode == SWNIC_OP_READ) {
		/* It asks for len bytes, at most what a post may (wire.rst). */
		if (len > SWNIC_MAX_MSG_SIZE) {
			swnic_peer_drop(wn, p, SWNIC_DROP_BAD_MSG);
			return -1;
		}
		len = 0;	/* the request has no payload */
	}
	if (len > SWNIC_MAX_MSG_SIZE || at > len || n > len - at ||
	    (n == 0 && len != 0))
		return -1;
	/*
	 * Of a message run and forgotten: taken, so that it is acknowledged,
	 * and ignored. A refused message's fragments come after its record
	 * went (swnic_rx_refuse()); dropped, they were sent again for ever.
	 */
	if (psn_before(id, p->exec_next))
		return 0;
	/* Fragment i at i * frag, each frag long but the last. */
	idx = len ? div_u64_rem(at, max(frag, 1U), &rem) : 0;
	if (len && (frag < SWNIC_FRAG_MIN || frag > SWNIC_FRAG_MAX || rem ||
		    n != min_t(u64, frag, len - at))) {
		swnic_peer_drop(wn, p, SWNIC_DROP_BAD_MSG);
		return -1;
	}
	/*
	 * By its id: a peer may have SWNIC_RX_AHEAD messages, and a packet
	 * of any of them may come next (a walk of the list was one per
	 * packet, at the sender's choice).
	 */
	pos = xa_load(&p->rxids, id);
	if (pos)
		goto found;
	/* Not taken yet: the sender tries again once earlier ones ran. */
	if (id - p->exec_next >= SWNIC_RX_AHEAD) {
		swnic_peer_drop(wn, p, SWNIC_DROP_WINDOW);
		return -1;
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
	budget = (u64)READ_ONCE(swnic_rx_mem_mb) << 20;
	keep_kb = READ_ONCE(swnic_rx_keep_kb);
	keep = len && keep_kb && len >= (u64)keep_kb << 10 &&
	       skb_is_gso(skb) &&
	       (m->opcode == SWNIC_OP_SEND || m->opcode == SWNIC_OP_TSEND ||
		m->opcode == SWNIC_OP_WRITE);
	table = keep ? DIV_ROUND_UP_ULL(len, frag) * sizeof(*rm->pieces) : 0;
	need = keep ? 2 * len + table : len;
	/* Its record too: a request with no payload is not free either. */
	need += sizeof(*rm);
	/*
	 * A packet that does not name us may come from any host, from any
	 * address, having never heard from us: one claiming a message of
	 * the whole budget held it, for as long as its sender kept the
	 * context alive (with PINGs), and every other peer's messages were
	 * dropped. What such packets make holds a share of the budget only;
	 * over it, the sender gets an ACK, which names us, and its packets
	 * sent again name us too (a peer's first message is late by its
	 * loss recovery).
	 */
	share = budget / SWNIC_RX_UNPROVEN_SHARE;
	/* Its record too, and its buffer may be a spare of twice its length. */
	if (!proven && wn->rx_unproven + 2 * len + sizeof(*rm) > share) {
		p->ack_due = true;
		p->ack_now = true;
		swnic_peer_drop(wn, p, SWNIC_DROP_UNPROVEN);
		return -1;
	}
	/*
	 * Nor may one peer's messages hold more than SWNIC_RX_PEER_SHARE of
	 * the budget: a message over it would never be taken, and is
	 * refused; others wait, not acknowledged, until the peer's earlier
	 * ones ran.
	 */
	peer_share = budget / SWNIC_RX_PEER_SHARE;
	if (len + sizeof(*rm) > peer_share)
		return swnic_rx_refuse(wn, p, m, skb, budget, peer_share);
	if (wn->rx_mem + wn->spare_mem + need > budget)
		swnic_kept_free(wn, false);
	swnic_peer_host_use(wn, p, &host);
	if (wn->rx_mem + len + sizeof(*rm) > budget ||
	    host.rx_mem + len + sizeof(*rm) > peer_share) {
		swnic_peer_drop(wn, p, SWNIC_DROP_NO_MEM);
		return -1;
	}
	if (wn->rx_mem + need > budget || host.rx_mem + need > peer_share ||
	    (!proven && wn->rx_unproven + need > share))
		keep = false;
	rm = kzalloc(sizeof(*rm), GFP_KERNEL);
	if (!rm)
		return -1;
	if (keep) {
		rm->size = 2 * len + table;
		rm->used = table;
		rm->km.read = swnic_rxmsg_read;
		rm->pieces = kvzalloc(table, GFP_KERNEL | __GFP_NOWARN);
	} else if (len) {
		rm->buf = swnic_rxbuf_get(wn, len, &rm->size);
	}
	if (len)
		rm->frags = kvcalloc(BITS_TO_LONGS(DIV_ROUND_UP_ULL(len, frag)),
				     sizeof(long), GFP_KERNEL | __GFP_NOWARN);
	if ((len && (!(rm->buf || rm->pieces) || !rm->frags)) ||
	    xa_insert(&p->rxids, id, rm, GFP_KERNEL)) {
		swnic_rxbuf_put(wn, rm->buf, rm->size);
		kvfree(rm->pieces);
		kvfree(rm->frags);
		kfree(rm);
		swnic_peer_drop(wn, p, SWNIC_DROP_NO_MEM);
		return -1;
	}
	wn->rx_kept += keep;
	if (!proven) {
		rm->unproven = true;
		wn->rx_unproven += rm->size + sizeof(*rm);
	}
	swnic_rxmsg_add(wn, p, rm, m, len, skb);
	fresh = true;
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
		return -1;
	}
	/*
	 * A fragment we have (sent again under another PSN, which only a
	 * hostile peer does), or of a request executed already, is taken
	 * once: each byte is counted once, each request run once.
	 */
	if (rm->done || !n || test_bit(idx, rm->frags))
		return !len && fresh;
	if (rm->pieces ? !swnic_rxmsg_keep(wn, rm, idx, skb, off, n) :
	    skb_copy_bits(skb, off, rm->buf + at, n))
		return -1;
	set_bit(idx, rm->frags);
	rm->got += n;
	return rm->got >= rm->len;
}

/*
 * Place @n bytes of @skb from @off at @at of @tm's buffer, pinned when it
 * was posted: an answer's data (a read's, a fetching atomic's old
 * values), its bounds checked by the caller. They count as got either
 * way; a copy that fails makes the request's outcome EIO.
 */
static void swnic_rx_place(struct swnic_txmsg *tm, u64 at,
			   struct sk_buff *skb, unsigned int off,
			   unsigned int n)
{
	tm->got += n;
	at += tm->off;
	while (n) {
		struct page *page = tm->pages[at >> PAGE_SHIFT];
		u32 poff = at & ~PAGE_MASK;
		u32 c = min_t(u32, n, PAGE_SIZE - poff);
		void *kaddr = kmap_local_page(page);
		int ret = skb_copy_bits(skb, off, kaddr + poff, c);

		kunmap_local(kaddr);
		if (ret) {
			tm->err = EIO;
			return;
		}
		off += c;
		at += c;
		n -= c;
	}
}

/*
 * Take the receive lock of @tm's endpoint to place an answer's data in
 * its poster's buffer - unless the endpoint is closed: fi_close() may
 * have returned, and the buffer be the application's again (freed, and
 * given to something else). The request then fails, unplaced. The
 * endpoint's release sets @dead under this lock.
 */
static bool swnic_rx_place_lock(struct swnic_peer *p, struct swnic_txmsg *tm)
{
	struct swnic_ep *rx = swnic_ep_rx(tm->ep);

	mutex_lock(&rx->rx_lock);
	if (!tm->ep->dead)
		return true;
	mutex_unlock(&rx->rx_lock);
	swnic_req_done(p, tm, ECANCELED);
	return false;
}

static void swnic_rx_place_unlock(struct swnic_txmsg *tm)
{
	mutex_unlock(&swnic_ep_rx(tm->ep)->rx_lock);
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
	if (!swnic_rx_place_lock(p, tm))
		return;
	swnic_rx_place(tm, at, skb, off, n);
	swnic_rx_place_unlock(tm);
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
	u32 floor = p->next_msg_id;
	struct swnic_txmsg *tm;

	swnic_rx_implicit_ack(wn, p, id);
	/*
	 * Our requests outstanding are from @msg_floor up to the next: an
	 * answer to none of them - completed long ago, never made - is
	 * ignored before walking thousands of requests (the peer's choice,
	 * every packet). One not found in the walk raises the floor to the
	 * oldest that is outstanding.
	 */
	if (id - p->msg_floor >= p->next_msg_id - p->msg_floor)
		return;
	list_for_each_entry(tm, &p->waiting, node) {
		if (tm->msg_id == id)
			goto found;
		if (tm->msg_id - p->msg_floor < floor - p->msg_floor)
			floor = tm->msg_id;
	}
	list_for_each_entry(tm, &p->txq, node) {
		if (tm->kind != SWNIC_TX_REQ || !tm->id_set)
			continue;
		if (tm->msg_id == id) {
			/*
			 * A request still being sent is answered only when
			 * the target refused it at its first fragment
			 * (ENOBUFS: swnic_rx_refuse()): done, its other
			 * fragments are not sent.
			 */
			if (status && !(be32_to_cpu(r->flags) &
					SWNIC_RESPF_HELD))
				swnic_req_done(p, tm, min_t(u32, status, 4095));
			return;
		}
		if (tm->msg_id - p->msg_floor < floor - p->msg_floor)
			floor = tm->msg_id;
	}
	p->msg_floor = floor;
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
	if (!swnic_rx_place_lock(p, tm))
		return;
	swnic_rx_place(tm, at, skb, off, n);
	swnic_rx_place_unlock(tm);
	/*
	 * Answers in range, each counted: done once they add up to the
	 * read. Only a hostile target sends overlapping ones, to the
	 * poster's own buffer - which it could fill with anything anyway -
	 * but the completion never says more was read than was asked.
	 */
	if (tm->got >= be64_to_cpu(tm->m.len)) {
		tm->len = be64_to_cpu(tm->m.len);
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
	/*
	 * A context is made for it, or an idle one reused; its name stays
	 * (udp_peer.c): so packets make at most SWNIC_MAX_PEERS names, in
	 * all, and the rest of the table stays the users'. The rate limit
	 * first: it bounds the scans for a context to reuse too.
	 */
	if (!create || wn->net_names6 >= SWNIC_MAX_PEERS ||
	    !__ratelimit(&wn->peer_limit) || !swnic_peer_room(wn)) {
		swnic_drop(wn, SWNIC_DROP_PEERS);
		return 0;
	}
	*limited = true;
	name = swnic_name6_get(wn, saddr,
			       swnic_addr6_scope(saddr, skb->skb_iif), true);
	if (!name)
		swnic_drop(wn, SWNIC_DROP_PEERS);
	else
		wn->net_names6++;
	return name;
}

/*
 * The first ACK of a peer told us its incarnation: our requests that it
 * refuses unless they name it (reads and fetching atomics, refused as
 * drop_unproven) and that it has not acknowledged go again at once,
 * naming it - not after a retransmission timeout (there is no RTT yet,
 * and its ACK showed nothing lost).
 */
static void swnic_rx_first_ack(struct swnic_wnet *wn, struct swnic_peer *p)
{
	const size_t hlen = sizeof(struct swnic_wire_hdr);
	const struct swnic_wire_hdr *h;
	const struct swnic_wire_msg *m;
	struct swnic_txpkt *t, *tmp;

	list_for_each_entry_safe(t, tmp, &p->unacked, node) {
		h = (const void *)t->buf;
		m = (const void *)(t->buf + hlen);
		if (t->req && !h->dst_inc && t->len >= hlen + sizeof(*m) &&
		    swnic_op_needs_name(m->opcode))
			swnic_retransmit(wn, p, t);
	}
}

/*
 * An ACK to the peer's incarnation @inc, which we do not take for its own
 * yet (swnic_rx_packet()): it tells the peer ours, and nothing else (we
 * took nothing of it).
 */
static void swnic_rx_ack_unlearnt(struct swnic_wnet *wn,
				  struct swnic_peer *p, u32 inc)
{
	u32 known = p->their_inc;

	p->their_inc = inc;
	swnic_send_ctl(wn, p, SWNIC_PKT_ACK);
	p->their_inc = known;
}

/* Take one packet (worker). */
void swnic_rx_packet(struct swnic_wnet *wn, struct sk_buff *skb,
		     unsigned int base, unsigned int plen)
{
	unsigned int len = base + plen;
	unsigned int off = base + sizeof(struct swnic_wire_hdr);
	bool v6 = skb->protocol == htons(ETH_P_IPV6);
	struct swnic_wire_hdr h;
	struct swnic_peer *p;
	struct in6_addr daddr;
	u32 src_inc, dst_inc, psn;
	__be32 saddr = v6 ? 0 : ip_hdr(skb)->saddr;
	__be16 sport = udp_hdr(skb)->source;
	bool create, limited = false, learnt = false;
	int whole = 0;

	wn->rx_pkts++;
	/*
	 * A peer's kernel sends from its wire socket, on udp_port, which
	 * no user can bind while it is open. From any other port the sender
	 * is a user of that host, and every field is its choice: the uid
	 * that a message without an auth key is delivered for, the key.
	 */
	if (sport != htons(swnic_udp_port) && !READ_ONCE(swnic_udp_any_sport)) {
		swnic_drop(wn, SWNIC_DROP_ADDR);
		return;
	}
	/*
	 * Within the packet (@plen), not the skb: a burst's next segment
	 * is not this packet's, nor covered by its checksum.
	 */
	if (plen < sizeof(h) || skb_copy_bits(skb, base, &h, sizeof(h))) {
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
	 * A PING naming no one draws an ACK: shorter than that, it would
	 * make us an amplifier aimed at its (forged) source (wire.h).
	 */
	if (h.type == SWNIC_PKT_PING && !dst_inc &&
	    plen < SWNIC_PING_ANON_LEN) {
		swnic_drop(wn, SWNIC_DROP_SHORT);
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
	/*
	 * Its context is that of the address pair: the address it came to
	 * is the one it knows us by, and every packet of ours in that
	 * context goes from there. A new IPv6 name was rate-limited
	 * already: not twice.
	 */
	if (v6)
		daddr = ipv6_hdr(skb)->daddr;
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &daddr);
	p = swnic_peer_get(wn, saddr, sport, &daddr, create, !limited);
	if (!p) {
		swnic_drop(wn, SWNIC_DROP_PEERS);
		return;
	}

	/*
	 * From an incarnation of the peer that a later one replaced: old,
	 * still on its way (or replayed). It may name us - we kept our
	 * incarnation - but must not reset the context under the live one,
	 * nor run again what it asked; nor is it answered with a RESET.
	 */
	if (swnic_peer_retired(p, src_inc)) {
		swnic_peer_drop(wn, p, SWNIC_DROP_STALE);
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
		if (p->their_inc != src_inc)
			swnic_peer_retire(p, p->their_inc);
		p->their_inc = src_inc;
		swnic_peer_heard(wn, p);
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
	/*
	 * A packet that does not name us may come from any host, from any
	 * address. ACKs and answers always name us (they answer packets of
	 * ours, which told our incarnation): one that does not is forged,
	 * and would complete our requests, or fill their buffers, with what
	 * a host that never heard from us chose.
	 */
	if (!dst_inc &&
	    (h.type == SWNIC_PKT_ACK || h.type == SWNIC_PKT_RESP)) {
		swnic_peer_drop(wn, p, SWNIC_DROP_UNPROVEN);
		return;
	}
	/*
	 * A packet naming nobody, to a context that knows no incarnation of
	 * the peer yet while packets of ours naming none are unacknowledged
	 * (our first requests): any host may have sent it. Learnt, a
	 * forger's (a PING from the peer's address, dst_inc 0) made the real
	 * peer's answer, which names us, look like a new incarnation: our
	 * first requests went again, under a new incarnation of ours, and
	 * the peer ran them twice. The real peer names us in its answer. A
	 * peer whose first packets cross ours gets an ACK naming it (not
	 * learnt), which tells it who we are: it sends them again naming us.
	 */
	if (!dst_inc && !p->their_inc && p->anon &&
	    !list_empty(&p->unacked)) {
		/* No larger than the packet: not an amplifier (wire.h). */
		if (plen >= SWNIC_PING_ANON_LEN)
			swnic_rx_ack_unlearnt(wn, p, src_inc);
		swnic_peer_drop(wn, p, SWNIC_DROP_UNPROVEN);
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

		learnt = !known;
		if (known) {
			swnic_peer_reset_rx(wn, p);
			swnic_peer_reset_tx(wn, p, ECONNRESET,
					    SWNIC_RESET_RETRY |
					    SWNIC_RESET_KEEP_INC);
		}
		swnic_peer_retire(p, p->their_inc);
		p->their_inc = src_inc;
		if (known)
			swnic_peer_pump(wn, p);
	}
	/*
	 * Only a packet naming us says the peer lives: a forger's PINGs and
	 * requests kept its context, our answers' retransmissions and its
	 * messages' memory alive for as long as it sent them.
	 */
	if (dst_inc)
		swnic_peer_heard(wn, p);

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
		if (learnt)
			swnic_rx_first_ack(wn, p);
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

		if (len - off < sizeof(r) ||
		    skb_copy_bits(skb, off, &r, sizeof(r)) ||
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

		if (len - off < sizeof(m) ||
		    skb_copy_bits(skb, off, &m, sizeof(m))) {
			swnic_peer_drop(wn, p, SWNIC_DROP_SHORT);
			return;
		}
		off += sizeof(m);
		/* A read is a READ_REQ, and only a READ_REQ is a read. */
		if (h.type == SWNIC_PKT_READ_REQ ? m.opcode != SWNIC_OP_READ :
		    m.opcode == SWNIC_OP_READ) {
			swnic_peer_drop(wn, p, SWNIC_DROP_BAD_MSG);
			return;
		}
		/*
		 * A read's answer is as long as it asks (up to 1 GiB), a
		 * fetching atomic's up to SWNIC_ATOMIC_MAX: run for a packet
		 * that does not name us, each is a reflection a forged
		 * source aims at its victim. The ACK names us, and the
		 * request sent again does (swnic_rx_first_ack()).
		 */
		if (!dst_inc && swnic_op_needs_name(m.opcode)) {
			p->ack_due = true;
			p->ack_now = true;
			swnic_peer_drop(wn, p, SWNIC_DROP_UNPROVEN);
			return;
		}
		/* Past the checks above, a packet naming us names us now. */
		whole = swnic_rx_fragment(wn, p, dst_inc != 0, &m, skb, off,
					  len - off);
		if (whole < 0) {
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
		if (whole > 0)
			swnic_rx_run(wn, p);
	}
}

