/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The netlink wing (kernel/nl_*.c) as the rest of the module sees it: the
 * generic netlink family's registration (main.c) and the events it
 * multicasts to its "events" group. Everything else of the wing is in
 * nl_internal.h, for its own files only.
 */
#ifndef _SWNIC_NL_EVENTS_H
#define _SWNIC_NL_EVENTS_H

#include <linux/types.h>

struct net;
struct swnic_device;
struct swnic_domain;
struct swnic_mr_info;

int swnic_genl_init(void);
void swnic_genl_exit(void);

/* ---- events: may sleep unless noted ------------------------------------ */

void swnic_nl_notify_dev(struct swnic_device *sdev, u8 cmd);
struct net *swnic_nl_dev_net(struct swnic_device *sdev);
void swnic_nl_notify_dev_left(struct swnic_device *sdev, struct net *net);
void swnic_nl_domain_opened(struct swnic_domain *dom);
void swnic_nl_domain_closed(struct swnic_domain *dom);
void swnic_nl_mr_revoked(struct swnic_domain *dom,
			 const struct swnic_mr_info *info);
/* Any context (atomic included). */
void swnic_nl_limit_hit(struct swnic_device *sdev, struct swnic_domain *dom,
			u32 limit);

#endif /* _SWNIC_NL_EVENTS_H */
