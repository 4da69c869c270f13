// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints: the object and its lifetime, the device's port table, the
 * endpoint file (mmap of its SQ and RQ; the doorbell, cancel and peek
 * commands). What an endpoint does is elsewhere: send.c consumes its SQ,
 * recv_rq.c its RQ, recv.c what arrives; engine.c drives the rings.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "bind.h"
#include "chardev.h"
#include "cntr.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "engine.h"
#include "ep.h"
#include "udp.h"
#include "nl_events.h"
#include "recv.h"
#include "send.h"
#include "service.h"
#include "stats.h"
#include "trig.h"

static void swnic_ep_put_cntrs(struct swnic_ep *ep)
{
	for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++)
		if (ep->cntr[i])
			swnic_cntr_put(ep->cntr[i]);
}

static void swnic_ep_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct swnic_ep, rcu));
}

static void swnic_ep_release(struct kref *ref)
{
	struct swnic_ep *ep = container_of(ref, struct swnic_ep, ref);

	swnic_ring_free(&ep->sq);
	swnic_ring_free(&ep->rq);
	bitmap_free(ep->sq_cancelled);
	if (ep->tx_cq)
		swnic_cq_put(ep->tx_cq);
	if (ep->rx_cq)
		swnic_cq_put(ep->rx_cq);
	swnic_ep_put_cntrs(ep);
	if (ep->srx)
		swnic_ep_put(ep->srx);
	swnic_domain_put(ep->dom);
	kfree(ep->recv_spare);		/* none once flushed */
	mutex_destroy(&ep->sq_lock);
	mutex_destroy(&ep->rx_lock);
	call_rcu(&ep->rcu, swnic_ep_free_rcu);
	swnic_obj_dec(SWNIC_OBJ_ENDPOINTS);
}

void swnic_ep_put(struct swnic_ep *ep)
{
	kref_put(&ep->ref, swnic_ep_release);
}

/**
 * swnic_ep_lookup() - find the endpoint at a port of a device
 * @sdev: the device: ports are its own, as are its endpoints' peers
 * @port: the endpoint's port
 *
 * Return: the endpoint with a reference held, or NULL.
 */
struct swnic_ep *swnic_ep_lookup(struct swnic_device *sdev, u16 port)
{
	struct swnic_ep *ep;

	rcu_read_lock();
	ep = xa_load(&sdev->ports, port);
	if (ep && !kref_get_unless_zero(&ep->ref))
		ep = NULL;
	rcu_read_unlock();
	return ep;
}

/* ---- port blocks (SWNIC_IOCTL_PORT_BLOCK) ---------------------------- */

static int swnic_ep_user_quota(struct swnic_domain *dom);

/* @uid's endpoints on @sdev (sdev->user_eps_lock held). */
static unsigned long swnic_user_eps(struct swnic_device *sdev, kuid_t uid)
{
	void *n = xa_load(&sdev->user_eps, __kuid_val(uid));

	return n ? xa_to_value(n) : 0;
}

/*
 * @delta endpoints (ports) more or fewer for @dom (dom->lock held): the
 * domain's count and its owner's on the device. Return: 0, or -ENOMEM
 * (only for a uid with none yet: nothing counted then).
 */
static int swnic_domain_nep_add(struct swnic_domain *dom, int delta)
{
	struct swnic_device *sdev = dom->sdev;
	unsigned long uid = __kuid_val(dom->uid);
	long n;
	int ret;

	lockdep_assert_held(&dom->lock);
	mutex_lock(&sdev->user_eps_lock);
	n = swnic_user_eps(sdev, dom->uid) + delta;
	WARN_ON_ONCE(n < 0);
	ret = xa_err(xa_store(&sdev->user_eps, uid,
			      n > 0 ? xa_mk_value(n) : NULL,
			      GFP_KERNEL_ACCOUNT));
	if (!ret)
		dom->nep += delta;
	mutex_unlock(&sdev->user_eps_lock);
	return ret;
}

/* Is @port one of @b's? */
static bool swnic_port_block_has(const struct swnic_pblock *b, u16 port)
{
	return port >= b->base && port - b->base < b->count;
}

static void swnic_port_block_free(struct kref *ref)
{
	struct swnic_pblock *b = container_of(ref, struct swnic_pblock,
						  ref);

	/* No endpoint of the block is left: nor one that sends from here. */
	xa_release(&b->sdev->ports, b->base);
	kfree(b);
}

/* Drop a reference; process context (the last takes the xarray lock). */
static void swnic_port_block_put(struct swnic_pblock *b)
{
	kref_put(&b->ref, swnic_port_block_free);
}

/*
 * Reserve @count consecutive free ephemeral ports: the first from the
 * device's cyclic allocator, the rest after it; a run that meets a taken
 * port is given back and tried again further on. Return: 0 with *@base,
 * or -EADDRNOTAVAIL (or -ENOMEM).
 */
static int swnic_port_block_reserve(struct swnic_device *sdev, u16 count,
				    u16 *base)
{
	u32 first, i;
	int tries, ret;

	for (tries = 0; tries < 64; tries++) {
		ret = xa_alloc_cyclic(&sdev->ports, &first, NULL,
				      XA_LIMIT(SWNIC_PORT_EPHEMERAL_MIN,
					       SWNIC_PORT_EPHEMERAL_MAX),
				      &sdev->port_next, GFP_KERNEL_ACCOUNT);
		if (ret < 0)
			return ret == -EBUSY ? -EADDRNOTAVAIL : ret;
		for (i = 1; i < count; i++) {
			if (first + i > SWNIC_PORT_EPHEMERAL_MAX) {
				ret = -EBUSY;
				break;
			}
			ret = xa_insert(&sdev->ports, first + i, NULL,
					GFP_KERNEL_ACCOUNT);
			if (ret)
				break;
		}
		if (i == count) {
			*base = first;
			return 0;
		}
		while (i--)
			xa_release(&sdev->ports, first + i);
		if (ret != -EBUSY)
			return ret;
	}
	return -EADDRNOTAVAIL;
}

/*
 * Reserve the @count ports from @base (SWNIC_PORT_BLOCK_FIXED). Return: 0,
 * -EINVAL (beyond the last port), -EACCES (a privileged port without the
 * right) or -EADDRINUSE.
 */
static int swnic_port_block_reserve_at(struct swnic_device *sdev, u16 count,
				       u16 base)
{
	u32 i;
	int ret = 0;

	if (!base || (u32)base + count - 1 > U16_MAX)
		return -EINVAL;
	if (base < 1024 &&
	    !swnic_device_capable(sdev, CAP_NET_BIND_SERVICE, true))
		return -EACCES;
	for (i = 0; i < count; i++) {
		ret = xa_insert(&sdev->ports, base + i, NULL,
				GFP_KERNEL_ACCOUNT);
		if (ret)
			break;
	}
	if (!ret)
		return 0;
	while (i--)
		xa_release(&sdev->ports, base + i);
	return ret == -EBUSY ? -EADDRINUSE : ret;
}

/*
 * Release @b (dom->lock held): its free ports now, but the first, which
 * the last reference gives back; endpoints in it give theirs when they
 * close. Returns the list's reference for the caller to drop unlocked.
 */
static void swnic_port_block_kill(struct swnic_domain *dom,
				  struct swnic_pblock *b)
{
	u16 i;

	lockdep_assert_held(&dom->lock);
	b->dead = true;
	list_del_init(&b->node);
	dom->nblocks--;
	/*
	 * Each port of the block counted as an endpoint of the domain: the
	 * free ones stop counting now, a member's when it goes.
	 */
	swnic_domain_nep_add(dom,
			     -(b->count - bitmap_weight(b->used, b->count)));
	for (i = 1; i < b->count; i++)
		if (!test_bit(i, b->used))
			xa_release(&dom->sdev->ports, b->base + i);
}

/* SWNIC_IOCTL_PORT_BLOCK */
int swnic_port_block_ioctl(struct swnic_domain *dom, void *arg)
{
	struct swnic_port_block *a = arg;
	struct swnic_pblock *b;
	struct swnic_device *sdev = dom->sdev;
	int ret;

	if (a->flags & ~(SWNIC_PORT_BLOCK_RELEASE | SWNIC_PORT_BLOCK_FIXED))
		return -EOPNOTSUPP;
	if (a->__reserved || a->flags == (SWNIC_PORT_BLOCK_RELEASE |
					  SWNIC_PORT_BLOCK_FIXED))
		return -EINVAL;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;
	if (a->flags & SWNIC_PORT_BLOCK_RELEASE) {
		mutex_lock(&dom->lock);
		list_for_each_entry(b, &dom->port_blocks, node) {
			if (b->base != a->base)
				continue;
			swnic_port_block_kill(dom, b);
			mutex_unlock(&dom->lock);
			swnic_port_block_put(b);
			return 0;
		}
		mutex_unlock(&dom->lock);
		return -ENOENT;
	}
	if (!a->count || a->count > SWNIC_PORT_BLOCK_MAX)
		return -EINVAL;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	kref_init(&b->ref);
	INIT_LIST_HEAD(&b->node);
	b->sdev = sdev;
	b->count = a->count;

	mutex_lock(&dom->lock);
	if (dom->nblocks >= SWNIC_PORT_BLOCKS_MAX ||
	    dom->nep + a->count > sdev->limits.max_ep) {
		mutex_unlock(&dom->lock);
		swnic_nl_limit_hit(sdev, dom, SWNIC_LIMIT_DEV_EP);
		kfree(b);
		return -ENOSPC;
	}
	ret = swnic_domain_nep_add(dom, a->count);
	mutex_unlock(&dom->lock);
	if (ret) {
		kfree(b);
		return ret;
	}

	ret = swnic_ep_user_quota(dom);
	if (!ret && (a->flags & SWNIC_PORT_BLOCK_FIXED)) {
		ret = swnic_port_block_reserve_at(sdev, a->count, a->base);
		b->base = a->base;
	} else if (!ret) {
		ret = swnic_port_block_reserve(sdev, a->count, &b->base);
	}
	mutex_lock(&dom->lock);
	if (ret) {
		swnic_domain_nep_add(dom, -a->count);
		mutex_unlock(&dom->lock);
		kfree(b);
		return ret;
	}
	list_add_tail(&b->node, &dom->port_blocks);
	dom->nblocks++;
	mutex_unlock(&dom->lock);
	a->base = b->base;
	return 0;
}

/* The domain's file is released: so are its blocks. */
void swnic_port_blocks_release(struct swnic_domain *dom)
{
	struct swnic_pblock *b;

	mutex_lock(&dom->lock);
	while (!list_empty(&dom->port_blocks)) {
		b = list_first_entry(&dom->port_blocks,
				     struct swnic_pblock, node);
		swnic_port_block_kill(dom, b);
		mutex_unlock(&dom->lock);
		swnic_port_block_put(b);
		mutex_lock(&dom->lock);
	}
	mutex_unlock(&dom->lock);
}

/*
 * Join @ep to the block at @group, taking @port from it (0: @ep has a
 * port of its own). Return: 0, -ENOENT, -EINVAL or -EADDRINUSE.
 */
static int swnic_port_block_join(struct swnic_ep *ep, u16 group, u16 port)
{
	struct swnic_domain *dom = ep->dom;
	struct swnic_pblock *b;
	int ret = -ENOENT;

	mutex_lock(&dom->lock);
	list_for_each_entry(b, &dom->port_blocks, node) {
		if (b->base != group)
			continue;
		if (port && !swnic_port_block_has(b, port)) {
			ret = -EINVAL;
		} else if (port && test_bit(port - b->base, b->used)) {
			ret = -EADDRINUSE;
		} else {
			if (port)
				set_bit(port - b->base, b->used);
			kref_get(&b->ref);
			ep->block = b;
			ep->block_port = port;
			ep->src_port = b->base;
			ret = 0;
		}
		break;
	}
	mutex_unlock(&dom->lock);
	return ret;
}

/* Undo swnic_port_block_join() of an endpoint never published. */
static void swnic_port_block_leave(struct swnic_ep *ep)
{
	struct swnic_pblock *b = ep->block;
	struct swnic_domain *dom = ep->dom;

	if (!b)
		return;
	mutex_lock(&dom->lock);
	if (ep->block_port) {
		clear_bit(ep->port - b->base, b->used);
		/*
		 * A dead block's port goes, unless it is the first, and
		 * stops counting (swnic_port_block_kill()).
		 */
		if (b->dead) {
			swnic_domain_nep_add(dom, -1);
			if (ep->port != b->base)
				xa_release(&dom->sdev->ports, ep->port);
		}
	}
	mutex_unlock(&dom->lock);
	ep->block = NULL;
	ep->block_port = false;
	ep->src_port = 0;
	swnic_port_block_put(b);
}

/*
 * Take @ep out of the port table: its slot is freed, or, for a port of a
 * live block (or a block's first port), kept reserved for the block.
 */
static void swnic_ep_unpublish(struct swnic_ep *ep)
{
	struct swnic_pblock *b = ep->block;
	struct swnic_domain *dom = ep->dom;
	struct xarray *ports = &dom->sdev->ports;

	if (ep->block_port) {
		mutex_lock(&dom->lock);
		clear_bit(ep->port - b->base, b->used);
		/* Its port counts as the block's, or as its own once dead. */
		if (b->dead)
			swnic_domain_nep_add(dom, -1);
		if (!b->dead || ep->port == b->base) {
			/* Reserved again: lookups find it empty. */
			xa_cmpxchg(ports, ep->port, ep, XA_ZERO_ENTRY,
				   GFP_KERNEL);
			mutex_unlock(&dom->lock);
			return;
		}
		mutex_unlock(&dom->lock);
	}
	xa_erase(ports, ep->port);
}

/* The endpoint fd's commands (the table is chardev.c's). */

/* SWNIC_IOCTL_EP_DOORBELL */
int swnic_ep_ioctl_doorbell(struct swnic_ep *ep, void *arg)
{
	struct swnic_ep_doorbell *db = arg;
	struct swnic_udp_inline il;
	bool wire;
	int ret = 0;

	if (db->flags & ~(SWNIC_DB_POLL | SWNIC_DB_SQ))
		return -EOPNOTSUPP;
	if (db->__reserved)
		return -EINVAL;
	/* Only the process that owns the rings' buffers may drive them. */
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	/*
	 * What our sends deliver to other namespaces of this host (veth),
	 * and their answers to us, we process before we return, rather
	 * than wake their workers (udp.c, inline sections). A device bound
	 * to no netdev sends nothing on the wire: no section to pay for.
	 */
	wire = rcu_access_pointer(ep->dom->sdev->netdev);
	if (wire)
		swnic_udp_inline_begin(&il, ep->dom->sdev);
	if (db->flags & SWNIC_DB_POLL) {
		db->sq_done = 0;
		db->rq_done = 0;
		db->polled = swnic_udp_poll(ep->dom->sdev);
	} else {
		ret = swnic_engine_doorbell(ep, db);
	}
	if (wire)
		swnic_udp_inline_end(&il);
	return ret;
}

/* SWNIC_IOCTL_EP_CANCEL */
int swnic_ep_ioctl_cancel(struct swnic_ep *ep, void *arg)
{
	struct swnic_ep_cancel *c = arg;

	bool trig = c->flags & SWNIC_CANCEL_TRIG;

	if (c->flags & ~(SWNIC_CANCEL_SEND | SWNIC_CANCEL_TRIG))
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	if (c->flags & SWNIC_CANCEL_SEND) {
		struct swnic_ep_doorbell db = {};
		int ret;

		/* A shared receive context sends nothing. */
		if (swnic_ep_is_srx(ep))
			return -ENOENT;
		ret = swnic_send_cancel(ep, c->context, trig);
		/* SYSCALL mode consumes it at once; the engine gets to it. */
		return ret ?: swnic_engine_doorbell(ep, &db);
	}
	/* Only one still waiting for its threshold: not one posted since. */
	if (trig)
		return ep->srx ? -ENOENT : swnic_trig_cancel_rqe(ep, c->context);
	return swnic_recv_cancel(ep, c->context);
}

/* SWNIC_IOCTL_EP_PEEK */
int swnic_ep_ioctl_peek(struct swnic_ep *ep, void *arg)
{
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	return swnic_recv_peek(ep, arg);
}

/* SWNIC_IOCTL_EP_AUTH_KEY */
int swnic_ep_ioctl_auth_key(struct swnic_ep *ep, void *arg)
{
	struct swnic_ep_auth_key *k = arg;

	if (k->flags)
		return -EOPNOTSUPP;
	return swnic_service_ep_add_key(ep, k->auth_key, &k->index);
}

/* SWNIC_IOCTL_EP_PEER */
int swnic_ep_ioctl_peer(struct swnic_ep *ep, void *arg)
{
	struct swnic_ep_peer *p = arg;

	if (p->flags & ~(SWNIC_EP_PEER_ONE | SWNIC_EP_PEER_NONE))
		return -EOPNOTSUPP;
	if (p->__reserved ||
	    ((p->flags & SWNIC_EP_PEER_NONE) && (p->flags & SWNIC_EP_PEER_ONE)) ||
	    (!(p->flags & SWNIC_EP_PEER_ONE) && (p->addr || p->port)))
		return -EINVAL;
	if (!swnic_domain_is_owner(ep->dom))
		return -EPERM;
	WRITE_ONCE(ep->peer, (u64)p->flags << 48 | (u64)p->port << 32 |
			     p->addr);
	return 0;
}

/**
 * swnic_ep_takes_from() - does @ep take a send from @addr:@port?
 * @ep: the target endpoint
 * @addr: the sender's address (IPv4, or an IPv6 peer's name), as a CQE
 * @port: the sender's port
 *
 * Return: true unless SWNIC_IOCTL_EP_PEER said otherwise.
 */
bool swnic_ep_takes_from(const struct swnic_ep *ep, __be32 addr, u16 port)
{
	u64 peer = READ_ONCE(ep->peer);

	if (!peer)
		return true;
	if (peer >> 48 & SWNIC_EP_PEER_NONE)
		return false;
	return (u32)peer == (__force u32)addr && (u16)(peer >> 32) == port;
}

/**
 * swnic_ep_holds_key() - does @ep take traffic sent with @auth_key?
 * @ep: a target endpoint (referenced)
 * @auth_key: the sender's key, not 0
 *
 * Its domain's key, or one it was given with SWNIC_IOCTL_EP_AUTH_KEY.
 * Lockless.
 */
bool swnic_ep_holds_key(const struct swnic_ep *ep, u32 auth_key)
{
	/* Keys below the count were written first (service.c). */
	u32 i, n = smp_load_acquire(&ep->nkeys);

	if (!auth_key)
		return false;
	if (READ_ONCE(ep->dom->auth_key) == auth_key)
		return true;
	for (i = 0; i < n && i < SWNIC_EP_AUTH_KEYS_MAX; i++)
		if (READ_ONCE(ep->auth_keys[i]) == auth_key)
			return true;
	return false;
}

/**
 * swnic_ep_key_refused() - the error for a key @ep does not hold
 * @ep: a target endpoint (referenced) for which swnic_ep_holds_key() just
 *	said no
 *
 * An endpoint being closed drops its own keys (swnic_service_ep_release())
 * while senders that looked it up before it was unpublished still check
 * them: a peer that dies is refused, never reported as another auth key
 * (Documentation/datapath.rst). @closing is set before its keys are
 * cleared (with release) and read after them (swnic_ep_holds_key()'s
 * acquire), so a sender that saw them gone sees it closing. Lockless.
 *
 * Return: -ECONNREFUSED if @ep is closing, else -EACCES.
 */
int swnic_ep_key_refused(const struct swnic_ep *ep)
{
	return READ_ONCE(ep->closing) ? -ECONNREFUSED : -EACCES;
}

/**
 * swnic_ep_key_index() - where @ep holds @auth_key
 * @ep: a target endpoint (referenced)
 * @auth_key: a sender's key, which @ep holds (swnic_ep_holds_key())
 *
 * Return: the key index n of a key it was given as its own, 0 for its
 * domain's key (or none). Lockless.
 */
u16 swnic_ep_key_index(const struct swnic_ep *ep, u32 auth_key)
{
	/* Keys below the count were written first (service.c). */
	u32 i, n = smp_load_acquire(&ep->nkeys);

	if (!auth_key || READ_ONCE(ep->dom->auth_key) == auth_key)
		return 0;
	for (i = 0; i < n && i < SWNIC_EP_AUTH_KEYS_MAX; i++)
		if (READ_ONCE(ep->auth_keys[i]) == auth_key)
			return i + 1;
	return 0;
}

/**
 * swnic_ep_sqe_key() - the auth key a work request of @ep sends with
 * @ep: the poster
 * @sqe: the kernel's copy of its SQE
 * @auth_key: out: the key (0 for key index 0 on a domain without one)
 *
 * Return: 0, or -ENOKEY if the endpoint holds no key at @sqe's index.
 */
int swnic_ep_sqe_key(const struct swnic_ep *ep, const struct swnic_sqe *sqe,
		     u32 *auth_key)
{
	u32 n;

	if (!sqe->key_index) {
		*auth_key = READ_ONCE(ep->dom->auth_key);
		return 0;
	}
	/* Keys below the count were written first (service.c). */
	n = smp_load_acquire(&ep->nkeys);
	if (sqe->key_index > n || n > SWNIC_EP_AUTH_KEYS_MAX)
		return -ENOKEY;
	*auth_key = READ_ONCE(ep->auth_keys[sqe->key_index - 1]);
	return *auth_key ? 0 : -ENOKEY;
}

static long swnic_ep_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	return swnic_ioctl(cmd, arg, NULL, file->private_data);
}

/*
 * The rings, to the owner only, as the domain's pages are: a process the
 * file was passed to (SCM_RIGHTS, fork) that mapped them wrote SQEs that
 * run on the owner's memory, and receives (RQEs) that peers' messages are
 * copied to, anywhere in the owner's address space.
 */
static int swnic_ep_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct swnic_ep *ep = file->private_data;
	struct swnic_ring *ring;

	switch (vma->vm_pgoff) {
	case SWNIC_EP_MMAP_SQ:
		ring = &ep->sq;
		break;
	case SWNIC_EP_MMAP_RQ:
		ring = &ep->rq;
		break;
	default:
		return -EINVAL;
	}
	if (!swnic_domain_is_owner(ep->dom))
		return -EACCES;
	return swnic_ring_mmap(ring, vma);
}

static int swnic_ep_file_release(struct inode *inode, struct file *file)
{
	struct swnic_ep *ep = file->private_data;
	struct swnic_domain *dom = ep->dom;
	bool in_block = ep->block_port;

	/*
	 * Sends stop before the port goes: a round sending for us (the
	 * engine's, a trigger's) holds sq_lock and looks at @closing before
	 * each entry. Once we had the lock, nothing of ours leaves with a
	 * source port another endpoint may take next.
	 */
	WRITE_ONCE(ep->closing, true);
	mutex_lock(&ep->sq_lock);
	mutex_unlock(&ep->sq_lock);
	/* No run queues it again now (it sees @closing under sq_lock). */
	if (cancel_delayed_work_sync(&ep->sq_retry))
		swnic_ep_put(ep);

	/* Unpublish: no new lookups; deliveries in flight see @dead. */
	if (!swnic_ep_is_srx(ep))
		swnic_ep_unpublish(ep);
	swnic_engine_remove(ep);
	swnic_recv_flush(ep);
	/* A receive its RQ left for a tick later goes with it (a ref each). */
	if (cancel_delayed_work_sync(&ep->rq_work))
		swnic_ep_put(ep);
	swnic_trig_ep_closed(ep);
	swnic_service_ep_release(ep);

	/* A block's member counted (if at all) in swnic_ep_unpublish(). */
	if (!in_block) {
		mutex_lock(&dom->lock);
		swnic_domain_nep_add(dom, -1);
		mutex_unlock(&dom->lock);
	}
	/* It sends no more (engine and triggers are done with it). */
	if (ep->block)
		swnic_port_block_put(ep->block);
	atomic_dec(&dom->files);
	swnic_ep_put(ep);
	return 0;
}

static const struct file_operations swnic_ep_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = swnic_ep_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = swnic_ep_mmap,
	.release = swnic_ep_file_release,
};

#define SWNIC_EP_FLAGS	(SWNIC_EP_F_DB_SYSCALL | SWNIC_EP_F_DB_ENGINE | \
			 SWNIC_EP_F_RM_ENABLED | SWNIC_EP_F_SRX | \
			 SWNIC_EP_F_SRX_JOIN)

/*
 * Reserve @port (0: an ephemeral one) on the device for @ep. The slot
 * holds no endpoint yet - lookups find nothing there - until
 * swnic_ep_publish() once nothing can fail any more: a lookup must never
 * find an endpoint that an error path frees.
 */
/*
 * Endpoints (each a port) of @dom's owner on its device, the new ones
 * counted already: one user holds at most SWNIC_PORTS_PER_USER of the
 * device's ports, administrators excepted. Return: 0 or -EDQUOT.
 */
static int swnic_ep_user_quota(struct swnic_domain *dom)
{
	struct swnic_device *sdev = dom->sdev;
	unsigned long n;

	if (swnic_device_capable(sdev, CAP_NET_ADMIN, false))
		return 0;
	mutex_lock(&sdev->user_eps_lock);
	n = swnic_user_eps(sdev, dom->uid);
	mutex_unlock(&sdev->user_eps_lock);
	return n > SWNIC_PORTS_PER_USER ? -EDQUOT : 0;
}

static int swnic_ep_reserve_port(struct swnic_ep *ep, u16 port)
{
	struct swnic_device *sdev = ep->dom->sdev;
	u32 id;
	int ret;

	if (port) {
		if (port < 1024 &&
		    !swnic_device_capable(sdev, CAP_NET_BIND_SERVICE, true))
			return -EACCES;
		ret = xa_insert(&sdev->ports, port, NULL, GFP_KERNEL_ACCOUNT);
		return ret == -EBUSY ? -EADDRINUSE : ret;
	}
	ret = xa_alloc_cyclic(&sdev->ports, &id, NULL,
			      XA_LIMIT(SWNIC_PORT_EPHEMERAL_MIN,
				       SWNIC_PORT_EPHEMERAL_MAX),
			      &sdev->port_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		return ret == -EBUSY ? -EADDRNOTAVAIL : ret;
	ep->port = id;
	return 0;
}

/* Make @ep reachable at its reserved port. */
static void swnic_ep_publish(struct swnic_ep *ep)
{
	swnic_xa_publish(&ep->dom->sdev->ports, ep->port, ep);
}

/*
 * The shared receive context at @fd that @ep (of @dom) joins: one of
 * @dom's, still open. @ep is not its member yet (swnic_ep_srx_enlist()):
 * a context hands completions to its oldest member, which must not be an
 * endpoint whose create may still fail. Return: 0 with ep->srx
 * referenced, or -errno.
 */
static int swnic_ep_srx_join(struct swnic_ep *ep, int fd)
{
	struct swnic_ep *srx;
	struct file *file;
	int ret = -EINVAL;

	file = fget(fd);
	if (!file)
		return -EBADF;
	if (file->f_op != &swnic_ep_fops)
		goto out;
	srx = file->private_data;
	if (!swnic_ep_is_srx(srx) || srx->dom != ep->dom)
		goto out;
	mutex_lock(&srx->rx_lock);
	/* Its file is being released: it takes no one any more. */
	if (!srx->dead) {
		kref_get(&srx->ref);
		ep->srx = srx;
		ret = 0;
	}
	mutex_unlock(&srx->rx_lock);
out:
	fput(file);
	return ret;
}

/*
 * @ep, whose create can no longer fail, is a member of its context from
 * now on - unless the context's file was released meanwhile: then, as
 * the members of a context closed before them, it refuses what arrives.
 */
static void swnic_ep_srx_enlist(struct swnic_ep *ep)
{
	struct swnic_ep *srx = ep->srx;

	mutex_lock(&srx->rx_lock);
	if (!srx->dead)
		list_add_tail(&ep->srx_node, &srx->srx_members);
	mutex_unlock(&srx->rx_lock);
}

/* Undo swnic_ep_srx_join() (and enlisting) of an endpoint never published. */
static void swnic_ep_srx_leave(struct swnic_ep *ep)
{
	struct swnic_ep *srx = ep->srx;

	if (!srx)
		return;
	mutex_lock(&srx->rx_lock);
	list_del_init(&ep->srx_node);
	mutex_unlock(&srx->rx_lock);
	ep->srx = NULL;
	swnic_ep_put(srx);
}

/* The checks of a create that names a shared receive context. */
static int swnic_ep_create_srx_check(const struct swnic_ep_create *c)
{
	if (c->__reserved3)
		return -EINVAL;
	if (!(c->flags & SWNIC_EP_F_SRX_JOIN) && c->srx_fd)
		return -EINVAL;
	if (!(c->flags & SWNIC_EP_F_SRX))
		return 0;
	/* A context: receives only, no address, no CQ, syscall doorbell. */
	if ((c->flags & (SWNIC_EP_F_SRX_JOIN | SWNIC_EP_F_DB_ENGINE |
			 SWNIC_EP_F_RM_ENABLED)) ||
	    c->tx_cq || c->rx_cq || c->port || c->group || c->dscp)
		return -EINVAL;
	for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++)
		if (c->cntr[i])
			return -EINVAL;
	return 0;
}

/* SWNIC_IOCTL_EP_CREATE */
int swnic_ep_create(struct swnic_domain *dom, void *arg)
{
	struct swnic_ep_create *c = arg;
	bool srx = c->flags & SWNIC_EP_F_SRX;
	bool in_block = c->group && c->port;	/* a port of a block */
	struct swnic_ep *ep;
	int fd, ret;

	if (c->flags & ~SWNIC_EP_FLAGS)
		return -EOPNOTSUPP;
	if (c->__reserved || c->__pad || c->dscp > 63 || c->__pad2 ||
	    c->__reserved2)
		return -EINVAL;
	if ((c->flags & SWNIC_EP_F_DB_SYSCALL) &&
	    (c->flags & SWNIC_EP_F_DB_ENGINE))
		return -EINVAL;
	ret = swnic_ep_create_srx_check(c);
	if (ret)
		return ret;
	/* Datagram endpoints are served reliably: a permitted strengthening. */
	if (c->type != SWNIC_EP_RDM && c->type != SWNIC_EP_DGRAM)
		return -EOPNOTSUPP;
	if (!swnic_domain_is_owner(dom))
		return -EPERM;
	/* Its device left the domain's namespace (bind.c). */
	if (READ_ONCE(dom->orphan))
		return -ENETDOWN;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		return -ENOMEM;
	kref_init(&ep->ref);
	mutex_init(&ep->sq_lock);
	mutex_init(&ep->rx_lock);
	INIT_LIST_HEAD(&ep->recvs);
	INIT_LIST_HEAD(&ep->trecvs);
	INIT_LIST_HEAD(&ep->unexp);
	INIT_LIST_HEAD(&ep->engine_node);
	INIT_LIST_HEAD(&ep->srx_members);
	INIT_LIST_HEAD(&ep->srx_node);
	INIT_DELAYED_WORK(&ep->rq_work, swnic_recv_rq_work);
	INIT_DELAYED_WORK(&ep->sq_retry, swnic_engine_sq_retry_work);
	ep->type = c->type;
	ep->flags = c->flags;
	ep->dscp = c->dscp;
	ep->addr = htonl(INADDR_LOOPBACK);
	ep->dom = dom;
	swnic_domain_get(dom);
	/* On a bound device: the netdev's address, and the wire's socket. */
	ret = swnic_udp_ep_addr(dom->sdev, &ep->addr);
	if (ret)
		goto err_cqs;

	if (!srx) {
		ep->tx_cq = swnic_cq_lookup(dom, c->tx_cq);
		ep->rx_cq = swnic_cq_lookup(dom, c->rx_cq);
		if (!ep->tx_cq || !ep->rx_cq) {
			ret = -ENOENT;
			goto err_cqs;
		}
	}
	for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++) {
		if (!c->cntr[i])
			continue;
		ep->cntr[i] = swnic_cntr_lookup(dom, c->cntr[i]);
		if (!ep->cntr[i]) {
			ret = -ENOENT;
			goto err_cqs;
		}
	}
	if (c->flags & SWNIC_EP_F_SRX_JOIN) {
		ret = swnic_ep_srx_join(ep, c->srx_fd);
		if (ret)
			goto err_cqs;
	}
	/*
	 * An endpoint counts against max_ep and the user's ports, but one
	 * at a port of a block: the block counted its ports already. Before
	 * its rings exist: one past the limit allocates nothing.
	 */
	ep->port = c->port;
	if (!in_block) {
		mutex_lock(&dom->lock);
		if (dom->nep >= dom->sdev->limits.max_ep) {
			mutex_unlock(&dom->lock);
			swnic_nl_limit_hit(dom->sdev, dom, SWNIC_LIMIT_DEV_EP);
			ret = -ENOSPC;
			goto err_srx;
		}
		ret = swnic_domain_nep_add(dom, 1);
		mutex_unlock(&dom->lock);
		if (ret)
			goto err_srx;
		ret = swnic_ep_user_quota(dom);
		if (ret) {
			swnic_nl_limit_hit(dom->sdev, dom, SWNIC_LIMIT_DEV_EP);
			goto err_count;
		}
	}
	/* A context's SQ is never read: the smallest there is. */
	ret = swnic_ring_init(&ep->sq, srx ? 1 : c->sq_entries,
			      SWNIC_MAX_SQ_ENTRIES, sizeof(struct swnic_sqe));
	if (ret)
		goto err_count;
	/* A member's RQ is never read (its context's is): the smallest. */
	ret = swnic_ring_init(&ep->rq, ep->srx ? 1 : c->rq_entries,
			      SWNIC_MAX_RQ_ENTRIES, sizeof(struct swnic_rqe));
	if (ret)
		goto err_sq;
	ep->sq_cancelled = bitmap_zalloc(ep->sq.entries, GFP_KERNEL_ACCOUNT);
	if (!ep->sq_cancelled) {
		ret = -ENOMEM;
		goto err_rq;
	}

	if (srx) {
		/* No port: nothing is ever sent to a context itself. */
		ret = 0;
	} else if (c->group) {
		/* A port of the block is reserved already: it is taken. */
		ret = swnic_port_block_join(ep, c->group, c->port);
		if (!ret && !c->port)
			ret = swnic_ep_reserve_port(ep, 0);
	} else {
		ret = swnic_ep_reserve_port(ep, c->port);
	}
	if (ret)
		goto err_block;
	/* From here the file's release undoes everything above. */
	fd = swnic_ioctl_new_file(arg, srx ? "[swnic-srx]" : "[swnic-ep]",
				  &swnic_ep_fops, ep);
	if (fd < 0) {
		ret = fd;
		if (!srx && !ep->block_port)
			xa_release(&dom->sdev->ports, ep->port);
		goto err_block;
	}
	if (ep->srx)
		swnic_ep_srx_enlist(ep);
	swnic_obj_inc(SWNIC_OBJ_ENDPOINTS);
	atomic_inc(&dom->files);

	c->port = ep->port;
	c->addr = (__force u32)ep->addr;
	c->fd = fd;
	c->ep_id = ep->port;
	swnic_ring_info(&ep->sq, (u64)SWNIC_EP_MMAP_SQ << PAGE_SHIFT, &c->sq);
	swnic_ring_info(&ep->rq, (u64)SWNIC_EP_MMAP_RQ << PAGE_SHIFT, &c->rq);
	if (ep->flags & SWNIC_EP_F_DB_ENGINE)
		swnic_ring_set_flags(&ep->sq, SWNIC_RING_F_NEED_WAKEUP, 0);
	swnic_ring_set_flags(&ep->rq, SWNIC_RING_F_LAZY, 0);
	if (!srx)
		swnic_ep_publish(ep);
	return 0;

err_block:
	swnic_port_block_leave(ep);
err_rq:
	bitmap_free(ep->sq_cancelled);
	swnic_ring_free(&ep->rq);
err_sq:
	swnic_ring_free(&ep->sq);
err_count:
	if (!in_block) {
		mutex_lock(&dom->lock);
		swnic_domain_nep_add(dom, -1);
		mutex_unlock(&dom->lock);
	}
err_srx:
	swnic_ep_srx_leave(ep);
err_cqs:
	if (ep->tx_cq)
		swnic_cq_put(ep->tx_cq);
	if (ep->rx_cq)
		swnic_cq_put(ep->rx_cq);
	swnic_ep_put_cntrs(ep);
	swnic_domain_put(dom);
	mutex_destroy(&ep->sq_lock);
	mutex_destroy(&ep->rx_lock);
	kfree(ep);
	return ret;
}
