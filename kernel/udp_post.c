// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: posting. The transport ops an SQE reaches another host by.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "udp_internal.h"

/* Payload bytes a packet of @kind carries on @sdev's netdev. */
u32 swnic_udp_frag(struct swnic_device *sdev, size_t hlen, bool v6)
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
struct net *swnic_udp_get_net(struct swnic_device *sdev)
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
 * fault, not a wait (swnic_pin_user_nowait()), and its mmap lock taken
 * leaves the request to a later round (@later, swnic_ep_later()); in the
 * poster's own call the fast pin may wait for it, as the poster's own
 * fault would.
 */
static int swnic_txmsg_pin(struct swnic_txmsg *tm, u64 addr, u64 len,
			   unsigned int gup_flags, int later)
{
	unsigned long n = DIV_ROUND_UP((addr & ~PAGE_MASK) + len, PAGE_SIZE);
	int ret;

	tm->pages = kvmalloc_array(n, sizeof(*tm->pages), SWNIC_POST_GFP);
	if (!tm->pages)
		return -ENOMEM;
	tm->off = addr & ~PAGE_MASK;
	ret = swnic_pin_user_all(addr & PAGE_MASK, n, gup_flags, tm->pages,
				 later, true);
	if (ret) {
		kvfree(tm->pages);
		tm->pages = NULL;
		return ret;
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
				 const struct swnic_sqe *sqe, const void *kbuf,
				 int later)
{
	bool compare = sqe->opcode == SWNIC_OP_COMPARE_ATOMIC;
	u32 len = sqe->len, plen = 0;

	if (sqe->atomic_op != SWNIC_AOP_ATOMIC_READ)
		plen = compare ? 2 * len : len;
	if (plen) {
		tm->abuf = kmalloc(plen, SWNIC_POST_GFP);
		if (!tm->abuf)
			return -ENOMEM;
		void __user *op = u64_to_user_ptr(sqe->addr);
		void __user *cmp = u64_to_user_ptr(sqe->data);
		int ret = 0;

		/* Never waiting for the poster's pager (copy.c). */
		if (kbuf)
			memcpy(tm->abuf, kbuf, len);
		else
			ret = swnic_copy_from_user_nowait(tm->abuf, op, len,
							  later);
		if (!ret && compare)
			ret = swnic_copy_from_user_nowait(tm->abuf + len, cmp,
							  len, later);
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
	return swnic_txmsg_pin(tm, sqe->tag, len, FOLL_WRITE, later);
}

/* Posts of this many bytes or more look for the peer's room first. */
#define SWNIC_POST_CHECK_LEN	SZ_64K

/* Queue a request of @src to the peer that @sqe names. */
static int __swnic_udp_request(struct swnic_wnet *wn, struct swnic_ep *src,
			       const struct swnic_sqe *sqe, const void *kbuf)
{
	struct swnic_txmsg *tm;
	struct swnic_peer *p;
	bool full;
	u32 key;
	int ret;

	ret = swnic_ep_sqe_key(src, sqe, &key);
	if (ret)
		return ret;
	/*
	 * A peer with no room refuses it for now: before a large buffer (up
	 * to SWNIC_MAX_MSG_SIZE) is pinned, not after, as a post refused so
	 * is tried again and again (an RM_ENABLED SQ at each doorbell, a
	 * triggered SQE every tick for SWNIC_TRIG_RETRY_MS). Looked at again
	 * below: the lock is dropped in between. A smaller one is pinned
	 * for less than the namespace's wire lock taken once more would
	 * cost every post - but not in the kernel's own retries of a
	 * refused head, which come while the peer is likely still full.
	 */
	if (!kbuf && !swnic_atomic_opcode(sqe->opcode) &&
	    (sqe->len >= SWNIC_POST_CHECK_LEN || swnic_ep_in_sq_retry(src)) &&
	    !swnic_addr_is_name6(sqe->dest_addr)) {
		mutex_lock(&wn->lock);
		full = !wn->dead && wn->sock &&
		       swnic_peer_post_refused(wn,
					       (__force __be32)sqe->dest_addr,
					       htons(swnic_udp_port),
					       src->dom->uid);
		mutex_unlock(&wn->lock);
		if (full)
			return -EAGAIN;
	}
	tm = kzalloc(sizeof(*tm), SWNIC_POST_GFP);
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
		ret = swnic_udp_atomic_prep(tm, sqe, kbuf,
					    swnic_ep_later(src));
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
				      FOLL_WRITE : 0, swnic_ep_later(src));
		if (ret) {
			kfree(tm);
			return ret;
		}
	}
	/* Its packets are charged to the poster's cgroup (swnic_txpkt). */
	tm->memcg = swnic_domain_memcg(src->dom);

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
	p = swnic_peer_get_posted(wn, (__force __be32)sqe->dest_addr,
				  htons(swnic_udp_port), src->dom->uid);
	if (!p || p->nmsgs >= SWNIC_MAX_MSGS)
		goto err;
	kref_get(&src->ref);
	tm->ep = src;
	swnic_deferred_hold(&tm->done, src, sqe);
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

