// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: the namespace's UDP sockets, and the addresses its devices
 * and endpoints are known by.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "udp_internal.h"

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
		.sin6_port = htons(swnic_udp_port),
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
				    swnic_udp_port, ret);
		return;
	}
	/*
	 * The table of IPv6 names (~100 KiB), the namespace's own: made
	 * here, not by the first packet from a new IPv6 peer, which charged
	 * it to whoever ran that round (a busy-polling user's cgroup), and
	 * was dropped if that cgroup was at its limit. No memory now: the
	 * first name makes it, as before.
	 */
	if (!wn->names6) {
		struct swnic_names6 *t = kvzalloc(sizeof(*t), GFP_KERNEL);

		if (t) {
			t->seed = get_random_u32();
			wn->names6 = t;
		}
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
		.local_udp_port = htons(swnic_udp_port),
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
		pr_warn_ratelimited("wire: UDP port %u: error %d\n", swnic_udp_port,
				    ret);
		goto out;
	}
	ret = swnic_udp_sock_setup(wn, sock);
	if (ret) {
		udp_tunnel_sock_release(sock);
		pr_warn_ratelimited("wire: UDP port %u: error %d\n", swnic_udp_port,
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

