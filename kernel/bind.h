/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Binding a device to a netdev: the netdev the device reaches other hosts
 * through, and whose network namespace owns the device (for permissions
 * and events). An unbound device is local only and belongs to init_net.
 */
#ifndef _SWNIC_BIND_H
#define _SWNIC_BIND_H

#include <linux/netdevice.h>
#include <net/net_namespace.h>

struct netlink_ext_ack;
struct swnic_device;

/* Why a device with orphan domains is neither bound nor set up. */
#define SWNIC_ORPHANS_MSG \
	"domains opened in the network namespace the device left are still open"

int swnic_bind_init(void);
void swnic_bind_exit(void);

int swnic_device_bind(struct swnic_device *sdev, struct net *net,
		      int ifindex, const char *ifname, struct net *from,
		      struct netlink_ext_ack *extack);
int swnic_device_unbind(struct swnic_device *sdev, struct net *from,
			struct netlink_ext_ack *extack);

struct net *swnic_device_net(struct swnic_device *sdev);
bool __swnic_device_capable(struct swnic_device *sdev, int cap, bool audit);
bool swnic_device_capable(struct swnic_device *sdev, int cap, bool audit);

#endif /* _SWNIC_BIND_H */
