/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "swnic": its registration, the events it
 * multicasts (callable from the rest of the module), and helpers shared by
 * the files that implement its commands (netlink.c, nl_domain.c, stats.c,
 * service.c).
 */
#ifndef _SWNIC_NETLINK_H
#define _SWNIC_NETLINK_H

#include <linux/types.h>
#include <net/genetlink.h>

struct swnic_device;
struct swnic_domain;
struct swnic_mr_info;

int swnic_genl_init(void);
void swnic_genl_exit(void);

/* ---- events: may sleep unless noted --------------------------------------- */

void swnic_nl_notify_dev(struct swnic_device *sdev, u8 cmd);
void swnic_nl_domain_opened(struct swnic_domain *dom);
void swnic_nl_domain_closed(struct swnic_domain *dom);
void swnic_nl_mr_revoked(struct swnic_domain *dom,
			 const struct swnic_mr_info *info);
/* Any context (atomic included). */
void swnic_nl_limit_hit(struct swnic_device *sdev, struct swnic_domain *dom,
			u32 limit);

/* ---- for the family's command files ----------------------------------- */

extern struct genl_family swnic_genl_family;

bool swnic_nl_sees_dev(const struct sk_buff *skb, struct swnic_device *sdev);
struct swnic_device *swnic_nl_dev_get(const struct sk_buff *skb,
				      struct nlattr **attrs,
				      struct netlink_ext_ack *extack);
int swnic_nl_dev_admin(struct sk_buff *skb, struct swnic_device *sdev,
		       struct netlink_ext_ack *extack);
int swnic_nl_put_dev_id(struct sk_buff *skb, struct swnic_device *sdev);
void swnic_nl_multicast(struct swnic_device *sdev, struct sk_buff *msg,
			gfp_t gfp);
struct swnic_device *swnic_nl_dev_by_index_locked(u32 index);
struct user_namespace *swnic_nl_user_ns(const struct sk_buff *skb);
bool swnic_nl_sees_domain(const struct sk_buff *skb, struct swnic_domain *dom);
struct swnic_domain *swnic_nl_domain_get(struct sk_buff *skb,
					 struct genl_info *info);

/* Commands (nl_domain.c, stats.c; services in service.h). */
int swnic_nl_dump_start(struct netlink_callback *cb);
int swnic_nl_domain_get_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_domain_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int swnic_nl_mr_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int swnic_nl_stat_get_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_stat_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int swnic_nl_stat_reset_doit(struct sk_buff *skb, struct genl_info *info);

#endif /* _SWNIC_NETLINK_H */
