// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: messages received, and running them in their peer's order
 * (sends, writes, atomics, reads) at their target; sends held for a
 * receive (delivery complete).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "udp_internal.h"

/* Every namespace's wn->held_done, and its records' @wn and @done. */
DEFINE_SPINLOCK(swnic_held_lock);

/*
 * A buffer for a message of @len bytes (> 0) to be reassembled in: a
 * kept one at most twice that size, else a new one. Its contents are
 * whatever was there: a message is whole only when each fragment arrived.
 */
void *swnic_rxbuf_get(struct swnic_wnet *wn, u64 len, size_t *size)
{
	struct swnic_rxbuf *b, *best = NULL;
	void *buf;

	for (b = wn->spares; b < wn->spares + SWNIC_RX_SPARES; b++)
		if (b->buf && b->size >= len && b->size / 2 <= len &&
		    (!best || b->size < best->size))
			best = b;
	if (!best) {
		*size = len;
		return kvmalloc(len, GFP_KERNEL | __GFP_NOWARN);
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
void swnic_rxbuf_put(struct swnic_wnet *wn, void *buf, size_t size)
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
void swnic_kept_free(struct swnic_wnet *wn, bool all)
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
int swnic_rxmsg_read(const struct swnic_kmsg *km, u64 off, void *to,
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
bool swnic_rxmsg_keep(struct swnic_wnet *wn, struct swnic_rxmsg *rm,
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
static void swnic_rxmsg_release(struct swnic_wnet *wn, struct swnic_peer *p,
				struct swnic_rxmsg *rm)
{
	u64 i, n;

	wn->rx_mem -= rm->size;	/* the buffer's: maybe more */
	p->rx_mem -= rm->size;
	if (rm->unproven)
		wn->rx_unproven -= rm->size;
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

void swnic_rxmsg_free(struct swnic_wnet *wn, struct swnic_peer *p,
		      struct swnic_rxmsg *rm)
{
	xa_erase(&p->rxids, rm->msg_id);
	list_del(&rm->node);
	swnic_rxmsg_release(wn, p, rm);
	wn->rx_mem -= sizeof(*rm);
	p->rx_mem -= sizeof(*rm);
	if (rm->unproven)
		wn->rx_unproven -= sizeof(*rm);
	kfree(rm);
}

/*
 * A packet a message keeps (@skb, ours alone once its burst is read): it
 * lets go of what it holds of the stack - route, conntrack entry,
 * extensions - which a kept packet must not pin.
 */
void swnic_rx_skb_kept(struct sk_buff *skb)
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
void swnic_held_forget(struct swnic_wnet *wn, struct swnic_peer *p)
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
void swnic_held_run(struct swnic_wnet *wn)
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
		swnic_answer_queue(wn, p, h->tm);
		h->tm = NULL;
		kfree(h);
		swnic_obj_add(SWNIC_OBJ_WIRE_HELD, -1);
		swnic_peer_pump(wn, p);
	}
}

/* ---- executing a peer's requests --------------------------------------- */

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
	    READ_ONCE(ep->dom->orphan) || swnic_domain_exited(ep->dom) ||
	    READ_ONCE(ep->dead)) {
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
		/* Its own keys go as it closes: refused, not EACCES. */
		int ret = swnic_ep_key_refused(ep);

		swnic_ep_put(ep);
		return ret;
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
		struct swnic_host_use host;

		/*
		 * Bounded: a peer cannot pin our memory without end - nor
		 * once per address of ours it sends to (its host's sum).
		 */
		swnic_peer_host_use(wn, p, &host);
		if (host.held >= SWNIC_MAX_MSGS)
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
			.unproven = tm->unproven,
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
bool swnic_rx_exec(struct swnic_wnet *wn, struct swnic_device *sdev,
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
	tm->unproven = rm->unproven;
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
	memcg = swnic_domain_memcg(dst->dom);
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
		/* Counted once all its data is read (swnic_read_mr()). */
		if (!tm->len) {
			swnic_cntr_inc(tm->dst->cntr[SWNIC_EP_CNTR_REMOTE_READ],
				       false);
			tm->kind = SWNIC_TX_STATUS;
		}
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
	swnic_answer_queue(wn, p, tm);
	return true;
}

/* The swnic device a packet that came in on @ifindex is for. */
struct swnic_device *swnic_rx_device(struct net *net, int ifindex)
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
 * Run @p's whole request @rm if its time came (swnic_rx_run()), on the
 * device of the netdev it came in on: *@sdev, for *@sdev_if (0: none
 * looked up yet), kept across the run. Return: true if it ran.
 */
static bool swnic_rx_try(struct swnic_wnet *wn, struct swnic_peer *p,
			 struct swnic_rxmsg *rm, struct swnic_device **sdev,
			 int *sdev_if)
{
	if (rm->retry_at && time_before(jiffies, rm->retry_at))
		return false;
	if (!rm->since)
		rm->since = jiffies ?: 1;
	if (!*sdev_if || rm->ifindex != *sdev_if) {
		if (*sdev)
			swnic_device_put(*sdev);
		*sdev = swnic_rx_device(wn->net, rm->ifindex);
		*sdev_if = rm->ifindex;
	}
	/* No device there: refused (an answer says so). */
	if (!*sdev)
		swnic_peer_drop(wn, p, SWNIC_DROP_NO_DEV);
	if (swnic_rx_exec(wn, *sdev, p, rm))
		return true;
	/* Keep the peer from timing us out meanwhile. */
	p->ack_due = true;
	p->ack_now = true;
	return false;
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
void swnic_rx_run(struct swnic_wnet *wn, struct swnic_peer *p)
{
	__be16 waiting[SWNIC_RX_PASS_MAX];
	struct swnic_device *sdev = NULL;
	struct swnic_rxmsg *rm, *tmp;
	unsigned int nwaiting = 0, i;
	u32 id = p->exec_next, others, others_unproven;
	struct swnic_host_use host;
	bool retry = false;
	int sdev_if = 0;

	/*
	 * The answers of the host's other contexts: none of them changes
	 * while this one's requests run (a held send's outcome is queued
	 * by the worker's swnic_held_run()).
	 */
	swnic_peer_host_use(wn, p, &host);
	others = host.answers - p->nanswers;
	others_unproven = host.unproven - (p->proven ? 0 : p->nanswers);
	list_for_each_entry(rm, &p->rxmsgs, node) {
		if (rm->msg_id != id++ ||
		    (nwaiting && id - p->exec_next > SWNIC_RX_PASS_AHEAD))
			break;
		if (rm->done)
			continue;
		/*
		 * Its answers do not go (it ACKs nothing): run no more of its
		 * requests, which wait within SWNIC_RX_AHEAD and the budget.
		 * A context never heard from gets a window of answers, no
		 * more; and a request that did not name us runs only while
		 * its answer fits the unproven share, as the request did.
		 * Both caps are the host's, all its contexts together.
		 */
		if (others + p->nanswers >= SWNIC_MAX_ANSWERS ||
		    (!p->proven && others_unproven + p->nanswers >=
		     SWNIC_MAX_ANSWERS_UNPROVEN) ||
		    (rm->unproven &&
		     wn->rx_unproven + sizeof(struct swnic_txmsg) >
		     swnic_rx_unproven_share())) {
			retry = true;
			break;
		}
		for (i = 0; i < nwaiting; i++)
			if (waiting[i] == rm->m.dst_port)
				break;
		if (i < nwaiting)
			continue;
		if (rm->got >= rm->len) {
			if (swnic_rx_try(wn, p, rm, &sdev, &sdev_if)) {
				/* Who takes no answer as an ACK gets ACKs. */
				if (!(rm->m.flags & SWNIC_MSGF_RESP_ACKS))
					p->ack_now = true;
				rm->done = true;
				swnic_rxmsg_release(wn, p, rm);
				wn->rx_passed += nwaiting > 0;
				continue;
			}
			/* Whole, and not run: the rounds try it again. */
			retry = true;
		}
		if (nwaiting == SWNIC_RX_PASS_MAX)
			break;
		waiting[nwaiting++] = rm->m.dst_port;
	}
	p->rx_retry = retry;
	if (sdev)
		swnic_device_put(sdev);
	list_for_each_entry_safe(rm, tmp, &p->rxmsgs, node) {
		if (!rm->done || rm->msg_id != p->exec_next)
			break;
		p->exec_next++;
		swnic_rxmsg_free(wn, p, rm);
	}
	swnic_peer_pump(wn, p);
}

