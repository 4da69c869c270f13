/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_UDP_H
#define _SWNIC_UDP_H

#include <linux/in6.h>
#include <linux/types.h>

struct net;
struct swnic_device;
struct swnic_domain;

extern const struct swnic_transport swnic_transport_udp;

int swnic_udp_open(struct net *net);
int swnic_udp_ep_addr(struct swnic_device *sdev, __be32 *addr);
bool swnic_udp_reaches(struct swnic_device *sdev, __be32 addr);
bool swnic_udp_poll(struct swnic_device *sdev);
bool swnic_udp_name_local(struct swnic_device *sdev, __be32 name);
int swnic_udp_ioctl_addr6(struct swnic_domain *dom, void *arg);

/* A peer context as netlink shows it (swnic_udp_peers()). */
#define SWNIC_PEER_DROPS_MAX	8

struct swnic_peer_info {
	__be32 ip;			/* IPv4, or @addr6's name */
	bool v6;
	struct in6_addr addr6;
	u16 port;
	u32 my_inc, their_inc;
	u32 srtt_us, rttvar_us, rto_us;
	u32 inflight, msgs;
	u32 held;			/* its sends we hold for a receive */
	u32 held_waiting;		/* our sends it holds */
	u32 silent_ms;
	u64 retx, tx_bytes, rx_bytes;
	/* its packets dropped, by reason (those that can be a peer's) */
	unsigned int ndrops;
	const char *drop_names[SWNIC_PEER_DROPS_MAX];
	u64 drops[SWNIC_PEER_DROPS_MAX];
};

int swnic_udp_counters(struct net *net,
		       int (*fn)(void *arg, const char *name, u64 value),
		       void *arg);
int swnic_udp_peers(struct net *net, unsigned long *pos, unsigned int *gen,
		    int (*fn)(void *arg, const struct swnic_peer_info *info),
		    void *arg);

int __init swnic_udp_init(void);
void swnic_udp_exit(void);

#endif /* _SWNIC_UDP_H */
