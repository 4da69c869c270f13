// SPDX-License-Identifier: GPL-2.0
/*
 * The local transport: peers on this host, in the same network namespace
 * (another namespace is another host, reached over the wire). One copy,
 * kernel to kernel, in the poster's context: sends land through the
 * target's receive side (recv.c), RMA in the target's MR (rma.c). Peers
 * on this host keep this path even when the device is bound to a netdev.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <net/ip.h>

#include "atomic.h"
#include "bind.h"
#include "device.h"
#include "domain.h"
#include "ep.h"
#include "recv.h"
#include "rma.h"
#include "transport.h"
#include "udp.h"

/*
 * This host's addresses: the wildcard, loopback and, for a device bound to
 * a netdev, every address of its namespace (a peer on this host, even
 * when named by the netdev's address, takes the direct copy).
 */
static bool swnic_local_reaches(struct swnic_device *sdev, __be32 addr)
{
	bool ret;

	if (!addr || ipv4_is_loopback(addr))
		return true;
	if (swnic_addr_is_name6((__force u32)addr))
		return swnic_udp_name_local(sdev, addr);
	rcu_read_lock();
	ret = rcu_access_pointer(sdev->netdev) &&
	      inet_addr_type(swnic_device_net(sdev), addr) == RTN_LOCAL;
	rcu_read_unlock();
	return ret;
}

/*
 * The endpoint @sqe names on @src's device, if it takes traffic from @src.
 * Return: 0 with *@dst referenced, or the poster's error.
 */
static int swnic_local_peer(struct swnic_ep *src, const struct swnic_sqe *sqe,
			    struct swnic_ep **dst)
{
	struct swnic_ep *ep;
	u32 key, want;
	int ret;

	/* The key it sends with: its domain's or one it holds (ENOKEY). */
	ret = swnic_ep_sqe_key(src, sqe, &want);
	if (ret)
		return ret;
	ep = swnic_ep_lookup(src->dom->sdev, sqe->dest_port);
	if (!ep)
		return -ECONNREFUSED;
	if (ep->type != src->type)
		goto refused;
	/*
	 * An endpoint whose domain is closed (its owner is exiting, or kept
	 * only the endpoint's file) or whose process has exited is gone,
	 * like a closed one: its domain's auth key is cleared on close,
	 * which must not read as another key, and its memory is being torn
	 * down, which must not read as a fault or a revoked key.
	 */
	key = READ_ONCE(ep->dom->auth_key);
	smp_rmb();	/* pairs with swnic_domain_close() */
	if (READ_ONCE(ep->dom->closed) || READ_ONCE(ep->dom->orphan) ||
	    swnic_domain_exited(ep->dom))
		goto refused;
	/*
	 * Auth keys isolate jobs: only peers with the same key talk. Without
	 * one (0: in no service), a domain reaches its own user's only. A
	 * key (the domain's, or one of the endpoint's own: key_index)
	 * reaches targets that hold it, as their domain's or their own.
	 */
	if (want ? key != want && !swnic_ep_holds_key(ep, want) :
	    (key || !uid_eq(ep->dom->uid, src->dom->uid))) {
		/* Its own keys go as it closes: refused, not EACCES. */
		int ret = swnic_ep_key_refused(ep);

		swnic_ep_put(ep);
		return ret;
	}
	*dst = ep;
	return 0;
refused:
	swnic_ep_put(ep);
	return -ECONNREFUSED;
}

static int swnic_local_send(struct swnic_ep *src, const struct swnic_sqe *sqe,
			    const void *kbuf)
{
	/* A round's: a receiver out of reach is for a later round. */
	struct swnic_msg_src from = {
		.ep = src, .addr = src->addr, .port = swnic_ep_src_port(src),
		.round = swnic_ep_defers(src),
		.last_try = swnic_ep_last_try(src),
	};
	struct swnic_ep *dst;
	int ret = swnic_local_peer(src, sqe, &dst);

	if (ret)
		return ret;
	/* The key it sends with: swnic_local_peer() checked it exists. */
	swnic_ep_sqe_key(src, sqe, &from.auth_key);
	ret = swnic_recv_deliver(dst, &from, sqe, kbuf);
	swnic_ep_put(dst);
	/*
	 * A receiver's full cgroup is no room (EAGAIN), as in the poster's
	 * own call: only the wire's rounds tell it apart (udp_exec.c).
	 */
	if (ret == -ENOMEM && from.round)
		ret = -EAGAIN;
	return ret;
}

static int swnic_local_rma_write(struct swnic_ep *src,
				 const struct swnic_sqe *sqe, const void *kbuf)
{
	struct swnic_ep *dst;
	int ret = swnic_local_peer(src, sqe, &dst);

	if (ret)
		return ret;
	ret = swnic_rma_write(dst, src, sqe, kbuf);
	swnic_ep_put(dst);
	return ret;
}

static int swnic_local_rma_read(struct swnic_ep *src,
				const struct swnic_sqe *sqe)
{
	struct swnic_ep *dst;
	int ret = swnic_local_peer(src, sqe, &dst);

	if (ret)
		return ret;
	ret = swnic_rma_read(dst, src, sqe);
	swnic_ep_put(dst);
	return ret;
}

static int swnic_local_atomic(struct swnic_ep *src, const struct swnic_sqe *sqe,
			      const void *kbuf)
{
	struct swnic_ep *dst;
	int ret = swnic_local_peer(src, sqe, &dst);

	if (ret)
		return ret;
	ret = swnic_atomic_exec(dst, src, sqe, kbuf);
	swnic_ep_put(dst);
	return ret;
}

const struct swnic_transport swnic_transport_local = {
	.name = "local",
	.max_msg_size = SWNIC_MAX_MSG_SIZE,
	.reaches = swnic_local_reaches,
	.send = swnic_local_send,
	.rma_write = swnic_local_rma_write,
	.rma_read = swnic_local_rma_read,
	.atomic = swnic_local_atomic,
};

/**
 * swnic_transport_for() - the transport that reaches @addr from @sdev
 * @sdev: the poster's device
 * @addr: the destination (IPv4, network order)
 *
 * Return: the transport, or NULL if none reaches @addr (EHOSTUNREACH).
 */
const struct swnic_transport *swnic_transport_for(struct swnic_device *sdev,
						  __be32 addr)
{
	if (swnic_transport_local.reaches(sdev, addr))
		return &swnic_transport_local;
	if (swnic_transport_udp.reaches(sdev, addr))
		return &swnic_transport_udp;
	return NULL;
}
