// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: sending packets. Packet buffers, the checksum, UDP (GSO)
 * sends of a peer's packets, the window, retransmissions, and the
 * packets a message is cut into.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "udp_internal.h"

/*
 * The allocation flags of a packet's memory: charged to @memcg (set
 * active by the caller), it never waits - no reclaim, no throttling, no
 * OOM killer in a user's cgroup while the namespace's wire is held: a
 * charge that fails is "no memory" for now, and the tick tries again.
 */
static gfp_t swnic_tx_gfp(const struct mem_cgroup *memcg)
{
	return memcg ? GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT :
		       GFP_KERNEL | __GFP_NOWARN;
}

/* Pages of a packet's own (@len bytes), or NULL. */
static void *swnic_txbuf_own(size_t len, gfp_t gfp)
{
	struct page *page = alloc_pages(gfp | __GFP_COMP, get_order(len));

	return page ? page_address(page) : NULL;
}

/* Let go of ring slot @i's page (those in use live on while used). */
static void swnic_txpage_drop(struct swnic_wnet *wn, unsigned int i)
{
	if (wn->txpages[i]) {
		put_page(wn->txpages[i]);
		wn->ntxpages--;
	}
	wn->txpages[i] = NULL;
	mem_cgroup_put(wn->txpage_memcg[i]);
	wn->txpage_memcg[i] = NULL;
}

/*
 * A buffer of @len bytes for a packet of @memcg's (wn->lock held, @memcg
 * active), or NULL, for swnic_txbuf_put(). A page of the ring holds the
 * packets of one cgroup only, the one it is charged to (NULL: answers,
 * charged to none): a user's packets kept in another's page made the
 * other pay for them. Each page is filled on from where its last packet
 * ended (from its start once its packets are gone), so that users, or
 * requests and answers, taking turns - as a peer's requests and our
 * answers do, or two users' posts to one peer - each go on in a page of
 * theirs rather than take a fresh page at every turn. A cursor per kind
 * ([1] requests, [0] answers) is where the search starts.
 */
static void *swnic_txbuf_get(struct swnic_wnet *wn, size_t len,
			     struct mem_cgroup *memcg, gfp_t more)
{
	unsigned int k = !!memcg, i = 0, n;
	gfp_t gfp = swnic_tx_gfp(memcg) | more;
	struct page *page = NULL;
	void *buf;

	if (len > SWNIC_TXPAGE_SIZE)
		return swnic_txbuf_own(len, gfp);
	/* A page of @memcg's with room, from the cursor on ... */
	for (n = 0; n < SWNIC_TXPAGES; n++) {
		i = (wn->txpage_cur[k] + n) % SWNIC_TXPAGES;
		page = wn->txpages[i];
		if (!page || wn->txpage_memcg[i] != memcg)
			continue;
		if (page_ref_count(page) == 1)	/* its packets are gone */
			wn->txpage_off[i] = 0;
		if (wn->txpage_off[i] + len <= SWNIC_TXPAGE_SIZE)
			break;
	}
	/* ... else a fresh one in the slot after the cursor. */
	if (n == SWNIC_TXPAGES) {
		i = (wn->txpage_cur[k] + 1) % SWNIC_TXPAGES;
		swnic_txpage_drop(wn, i);	/* freed by its last user */
		page = alloc_pages(gfp | __GFP_COMP | __GFP_NORETRY,
				   SWNIC_TXPAGE_ORDER);
		if (!page)	/* no 32 KiB in a row: its own */
			return swnic_txbuf_own(len, gfp);
		wn->txpages[i] = page;
		swnic_memcg_get(memcg);
		wn->txpage_memcg[i] = memcg;
		wn->txpage_off[i] = 0;
		wn->ntxpages++;
		wn->txpage_allocs++;
	}
	wn->txpage_cur[k] = i;
	get_page(page);
	buf = page_address(page) + wn->txpage_off[i];
	/* Packets of a send, all as long, in a row (MTU - 28 is 4n). */
	wn->txpage_off[i] = ALIGN(wn->txpage_off[i] + len, 4);
	wn->spare_at = jiffies;
	return buf;
}

/* Let go of a packet's buffer (an skb that took its page keeps it). */
static void swnic_txbuf_put(void *buf)
{
	put_page(virt_to_head_page(buf));
}

/* Let go of the kept pages (those in use live on while used). */
void swnic_txpages_free(struct swnic_wnet *wn)
{
	unsigned int i;

	for (i = 0; i < SWNIC_TXPAGES; i++)
		swnic_txpage_drop(wn, i);
	memset(wn->txpage_off, 0, sizeof(wn->txpage_off));
}

/*
 * A buffer of @len bytes for a packet of @memcg's (see swnic_txpkt), or
 * NULL: charged to it, whichever task makes it - the poster, another
 * poster to the same peer, the worker at an ACK. @more: allocation flags
 * added to swnic_tx_gfp()'s.
 */
static void *swnic_txbuf_charged(struct swnic_wnet *wn, size_t len,
				 struct mem_cgroup *memcg, gfp_t more)
{
	struct mem_cgroup *old = set_active_memcg(memcg);
	void *buf = swnic_txbuf_get(wn, len, memcg, more);

	set_active_memcg(old);
	return buf;
}

/*
 * A packet of @len bytes; @memcg: a request's poster's domain's, charged
 * the packet for as long as it is kept for retransmission - which a peer
 * that stops answering makes the peer timeout.
 */
static struct swnic_txpkt *swnic_txpkt_alloc(struct swnic_wnet *wn,
					     size_t len,
					     struct mem_cgroup *memcg)
{
	struct mem_cgroup *old = set_active_memcg(memcg);
	struct swnic_txpkt *t = kmalloc(sizeof(*t), swnic_tx_gfp(memcg));

	if (t) {
		*t = (struct swnic_txpkt) { .len = len, .memcg = memcg };
		t->buf = swnic_txbuf_get(wn, len, memcg, 0);
		if (t->buf) {
			swnic_memcg_get(memcg);
		} else {
			kfree(t);
			t = NULL;
		}
	}
	set_active_memcg(old);
	return t;
}

void swnic_txpkt_free(struct swnic_wnet *wn, struct swnic_txpkt *t)
{
	swnic_txbuf_put(t->buf);
	mem_cgroup_put(t->memcg);
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
	u8 ctl[CMSG_SPACE(sizeof(u16)) + CMSG_SPACE(sizeof(int)) +
	       CMSG_SPACE(sizeof(struct in6_pktinfo))] __aligned(8) = {};
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
	/* A context made with no route: from the one the route picks now. */
	if (ipv6_addr_any(&p->local) && !swnic_peer_bind(wn, p))
		return -ENETUNREACH;
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
		cm = (void *)(ctl + clen);
	}
	/*
	 * From the context's address (struct swnic_peer's @local), where
	 * the route would pick another; the stack refuses it (EINVAL) once
	 * it is no longer ours, and the peer times out.
	 */
	if (p->v6 && !ipv6_addr_any(&p->local)) {
		struct in6_pktinfo *pi = (void *)CMSG_DATA(cm);

		cm->cmsg_level = SOL_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(*pi));
		pi->ipi6_addr = p->local;
		clen += CMSG_SPACE(sizeof(*pi));
	} else if (!p->v6 && ipv6_addr_v4mapped(&p->local)) {
		struct in_pktinfo *pi = (void *)CMSG_DATA(cm);

		cm->cmsg_level = SOL_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(*pi));
		pi->ipi_spec_dst.s_addr = p->local.s6_addr32[3];
		clen += CMSG_SPACE(sizeof(*pi));
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

void swnic_udp_xmit(struct swnic_wnet *wn, struct swnic_peer *p,
		    void *buf, size_t len, u8 tos)
{
	struct kvec iov = { .iov_base = buf, .iov_len = len };

	swnic_pkt_seal(buf, len);
	swnic_udp_send1(wn, p, &iov, tos);
}

void swnic_hdr_init(struct swnic_peer *p, struct swnic_wire_hdr *h,
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
void swnic_send_ctl(struct swnic_wnet *wn, struct swnic_peer *p,
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
void swnic_send_reset(struct swnic_wnet *wn, struct swnic_peer *p,
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
void swnic_arm_exact(struct swnic_wnet *wn, ktime_t at)
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
 *
 * To a peer that never named us, packets in flight count too: at most
 * SWNIC_WIN_UNPROVEN of our requests' (@req), and as many of our answers'
 * to its requests (@req false), each kind apart. Counted together, a
 * host that forges a peer's address (a new one's, or one that failed
 * since) with 16 requests shut the window with their answers - which the
 * peer, knowing nothing of them, never acknowledges - and a user's posts
 * to the real peer waited behind them until the peer timeout, which the
 * forger could start again at will. Our requests go, and the real
 * peer's RESET (they name the forged incarnation) resets the context.
 * Not counted at all, a forger's requests drew a full window of answers,
 * kept until the peer timeout.
 */
static bool swnic_wnd_open(const struct swnic_peer *p, bool req)
{
	const struct swnic_txpkt *t;

	if (list_empty(&p->unacked))
		return true;
	t = list_first_entry(&p->unacked, struct swnic_txpkt, node);
	if (p->snd_nxt - t->psn >= SWNIC_WIN)
		return false;
	return p->proven ||
	       (req ? p->inflight_req : p->inflight - p->inflight_req) <
	       SWNIC_WIN_UNPROVEN;
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
	p->inflight_req += t->req;
	p->tx_bytes += t->len;
}

void swnic_retransmit(struct swnic_wnet *wn, struct swnic_peer *p,
		      struct swnic_txpkt *t)
{
	struct swnic_wire_hdr *h;
	struct kvec iov;
	u8 *buf;

	t->stamp = ktime_get();
	if (t->resends < U8_MAX)
		t->resends++;
	p->retx++;
	wn->retx_pkts++;
	/*
	 * Sent, a packet's bytes may be an skb's still (spliced: a queue,
	 * a receiver on this host keeping it): changed in a copy of them,
	 * never in place. The copy replaces a buffer charged already, which
	 * goes right after: charged past the poster's limit if need be
	 * (__GFP_HIGH), or a poster at its limit would never resend a lost
	 * packet, and the window - everyone's to the peer - would stay shut
	 * behind it. No memory at all: this send is lost, as one the stack
	 * dropped, and loss recovery tries again.
	 */
	buf = swnic_txbuf_charged(wn, t->len, t->memcg, __GFP_HIGH);
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

void swnic_txmsg_unpin(struct swnic_txmsg *tm)
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

void swnic_txmsg_free(struct swnic_txmsg *tm)
{
	swnic_txmsg_unpin(tm);
	if (tm->ep)
		swnic_ep_put(tm->ep);
	if (tm->dst)
		swnic_ep_put(tm->dst);
	mem_cgroup_put(tm->memcg);
	kfree(tm->abuf);
	kfree(tm);
}

/* Complete one of our requests with @err (0 or a positive errno). */
void swnic_req_done(struct swnic_peer *p, struct swnic_txmsg *tm,
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
int swnic_read_mr(struct swnic_peer *p, struct swnic_txmsg *tm,
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
	/*
	 * One read, however many packets: counted once its last data is
	 * read - a read the MR refuses (key, rights, range), at any of its
	 * packets, is not. (Once: @counted guards against a packet made
	 * twice.)
	 */
	if (!ret && pos + len >= tm->len && !tm->counted) {
		tm->counted = true;
		swnic_mr_ref_count(&ref, t.access);
		swnic_cntr_inc(tm->dst->cntr[SWNIC_EP_CNTR_REMOTE_READ], false);
	}
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
	t = swnic_txpkt_alloc(wn, hlen + n,
			      tm->kind == SWNIC_TX_REQ ? tm->memcg : NULL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->tos = tm->tos;
	h = (void *)t->buf;

	if (tm->kind == SWNIC_TX_REQ) {
		struct swnic_wire_msg *m = (void *)(h + 1);

		h->type = tm->m.opcode == SWNIC_OP_READ ? SWNIC_PKT_READ_REQ :
							  SWNIC_PKT_DATA;
		if (!tm->id_set) {
			tm->msg_id = p->next_msg_id++;
			tm->m.msg_id = cpu_to_be32(tm->msg_id);
			tm->id_set = true;
		}
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
	return READ_ONCE(swnic_tx_splice);
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

	while (n < max && !tm->last &&
	       swnic_wnd_open(p, tm->kind == SWNIC_TX_REQ)) {
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
/*
 * An answer to a peer's request goes on its queue. A peer that ACKs
 * nothing keeps our window shut, and its answers would pile up there as
 * fast as its requests come: so they are counted (swnic_rx_run() runs no
 * more of its requests at SWNIC_MAX_ANSWERS) and charged to the
 * namespace's receive budget (rx_mem_mb) until they are sent. An answer to
 * a request that did not name us is charged to the unproven share too, as
 * the request was: a forger's requests from made-up sources, answered and
 * never ACKed, filled the whole budget with answers, and every peer's
 * messages were dropped (drop_no_mem).
 */
void swnic_answer_queue(struct swnic_wnet *wn, struct swnic_peer *p,
			struct swnic_txmsg *tm)
{
	list_add_tail(&tm->node, &p->txq);
	p->nanswers++;
	wn->rx_mem += sizeof(*tm);
	if (tm->unproven)
		wn->rx_unproven += sizeof(*tm);
}

/* An answer of swnic_answer_queue() leaves @p's queue: sent, or dropped. */
void swnic_answer_free(struct swnic_wnet *wn, struct swnic_peer *p,
		       struct swnic_txmsg *tm)
{
	p->nanswers--;
	wn->rx_mem -= sizeof(*tm);
	if (tm->unproven)
		wn->rx_unproven -= sizeof(*tm);
	swnic_txmsg_free(tm);
}

/*
 * Messages it goes past without sending any while their kind's share is
 * full to a peer that never named us, at most: the walk stops there, so
 * that a queue of thousands - one user may have SWNIC_MAX_MSGS to each of
 * its peers - costs no more each round. What waits behind that many goes
 * at a later round.
 */
#define SWNIC_PUMP_PASS_MAX	64

void swnic_peer_pump(struct swnic_wnet *wn, struct swnic_peer *p)
{
	unsigned int passed = 0, answers = p->nanswers;
	struct swnic_txmsg *tm, *tmp;
	bool shut[2] = {};	/* to an unproven peer: [1] requests, [0] not */
	u32 gen;
	int ret;

	lockdep_assert_held(&wn->lock);
	gen = ++wn->pump_gen ?: ++wn->pump_gen;	/* 0: no round */
	list_for_each_entry_safe(tm, tmp, &p->txq, node) {
		bool req = tm->kind == SWNIC_TX_REQ;

		if (!req && answers)
			answers--;	/* answers left behind this one */
		if (shut[req]) {
			/* Nothing of the other kind left that may go: done. */
			if (shut[!req] || (req && !answers))
				break;
			/*
			 * Answers passed while only their share is shut do
			 * not count: there are SWNIC_MAX_ANSWERS_UNPROVEN at
			 * most (shut only to an unproven peer). Counted, a
			 * forger's 100 requests from a new peer's address left
			 * 84 answers waiting, and our requests to the real
			 * peer behind them never went: ETIMEDOUT.
			 */
			if (req && ++passed > SWNIC_PUMP_PASS_MAX)
				break;
			continue;
		}
		if (swnic_fault_waits(&tm->fault) &&
		    time_before(jiffies, tm->fault_next))
			continue;
		/*
		 * After a request of an endpoint's whose cgroup had no room,
		 * none of that endpoint's goes this round: a later one
		 * (smaller) could otherwise take its place, and its number,
		 * and overtake it. Passed at the cost of a compare, and not
		 * counted: a walk that stopped after 64 of them, or at the
		 * ninth cgroup out of room (an array of eight), stopped at
		 * the same place every round for as long as their users
		 * stayed at their limits - every other user's requests to
		 * the peer behind them waited, and the peer, answering
		 * probes, never timed out.
		 */
		if (req && tm->ep && tm->ep->wire_full_gen == gen)
			continue;
		ret = 0;
		while (!ret && !tm->last && swnic_wnd_open(p, req))
			ret = swnic_txmsg_send(wn, p, tm);
		/*
		 * A request whose poster's cgroup has no room for its next
		 * packet waits for it (the tick tries again), as one whose
		 * memory is out of reach does, and the requests after it -
		 * other users' too - go on meanwhile: one user at its limit
		 * would otherwise stop everyone's traffic to the peer, for
		 * as long as it stays there.
		 */
		if (ret == -SWNIC_EFAULTLATER)
			continue;
		if (ret == -ENOMEM && req && tm->memcg && tm->ep) {
			tm->ep->wire_full_gen = gen;
			continue;
		}
		/*
		 * The window is shut, or no memory. To a peer that never
		 * named us, a kind's share may be full but not the other's.
		 */
		if (!tm->last && !p->proven && ret != -ENOMEM &&
		    swnic_wnd_open(p, !req)) {
			shut[req] = true;
			continue;
		}
		if (!tm->last)
			break;
		list_del(&tm->node);
		if (tm->kind == SWNIC_TX_REQ) {
			/* Its pages stay pinned: a restarted peer needs it again. */
			list_add_tail(&tm->node, &p->waiting);
		} else {
			swnic_answer_free(wn, p, tm);
		}
	}
}

