/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_UDP_H
#define _SWNIC_UDP_H

#include <linux/types.h>

struct net;
struct swnic_device;

extern const struct swnic_transport swnic_transport_udp;

int swnic_udp_open(struct net *net);
int swnic_udp_ep_addr(struct swnic_device *sdev, __be32 *addr);
bool swnic_udp_reaches(struct swnic_device *sdev, __be32 addr);

int __init swnic_udp_init(void);
void swnic_udp_exit(void);

#endif /* _SWNIC_UDP_H */
