/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_UDP_H
#define _SWNIC_UDP_H

#include <linux/in6.h>
#include <linux/list.h>
#include <linux/types.h>

struct net;
struct swnic_device;
struct swnic_domain;
struct swnic_wnet;
struct task_struct;

extern const struct swnic_transport swnic_transport_udp;

int swnic_udp_open(struct net *net);
int swnic_udp_ep_addr(struct swnic_device *sdev, __be32 *addr);
bool swnic_udp_reaches(struct swnic_device *sdev, __be32 addr);
bool swnic_udp_poll(struct swnic_device *sdev);

/* Namespaces an inline section can take the rounds of, at most. */
#define SWNIC_INLINE_WNETS	4

/**
 * struct swnic_udp_inline - a task's inline section (on its stack)
 * @node: in its hash bucket while open
 * @task: the task
 * @wn: namespaces whose sockets received in its context: rounds to run
 *	at the end (no reference: a namespace that goes takes itself off)
 * @n: how many
 * @listed: in its bucket; not listed (the task had a section open
 *	already, or the bucket was full), the section does nothing
 *
 * Between swnic_udp_inline_begin() and swnic_udp_inline_end(), a datagram
 * the wire's socket of any namespace receives in the task's context (the
 * softirq that a send over veth or loopback runs on its way out) does not
 * wake that namespace's worker: the task runs its round at the end, once
 * it holds no lock. Fields are the bucket lock's.
 */
struct swnic_udp_inline {
	struct hlist_node node;
	struct task_struct *task;
	struct swnic_wnet *wn[SWNIC_INLINE_WNETS];
	unsigned int n;
	bool listed;
};

void swnic_udp_inline_begin(struct swnic_udp_inline *il,
			    struct swnic_device *sdev);
void swnic_udp_inline_end(struct swnic_udp_inline *il);
bool swnic_udp_name_local(struct swnic_device *sdev, __be32 name);
int swnic_udp_ioctl_addr6(struct swnic_domain *dom, void *arg);

/* A peer context as netlink shows it (swnic_udp_peers()). */
#define SWNIC_PEER_DROPS_MAX	12

struct swnic_peer_info {
	__be32 ip;			/* IPv4, or @addr6's name */
	bool v6;
	struct in6_addr addr6;
	struct in6_addr local;		/* ours: as swnic_peer's */
	u16 port;
	u32 my_inc, their_inc;
	u32 srtt_us, rttvar_us, rto_us;
	u32 inflight, msgs;
	u32 held;			/* its sends we hold for a receive */
	u32 held_waiting;		/* our sends it holds */
	u32 answers;			/* our answers to it not sent yet */
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
