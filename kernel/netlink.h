/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_NETLINK_H
#define _SWNIC_NETLINK_H

int swnic_genl_init(void);
void swnic_genl_exit(void);

#endif /* _SWNIC_NETLINK_H */
