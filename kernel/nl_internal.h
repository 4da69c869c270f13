/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The netlink wing's own header, for kernel/nl_*.c only (the rest of the
 * module includes nl_events.h):
 *
 *   nl_family.c   the family: policies, the ops table, the events group,
 *                 registration; who may see or change what
 *   nl_dev.c      devices: DEV_GET, DEV_NEW, DEV_DEL, DEV_SET
 *   nl_domain.c   domains and their MRs: DOMAIN_GET, MR_GET
 *   nl_service.c  services: SVC_GET, SVC_NEW, SVC_DEL, SVC_SET
 *   nl_stats.c    counters: STAT_GET, STAT_RESET; the wire's: PEER_GET
 *   nl_events.c   every multicast message (nl_events.h)
 *
 * Each object's message is built by one fill function (swnic_nl_fill_*()),
 * for the GET reply, the GET dump and the object's events alike.
 */
#ifndef _SWNIC_NL_INTERNAL_H
#define _SWNIC_NL_INTERNAL_H

#include <linux/types.h>
#include <net/genetlink.h>

#include "nl_events.h"

struct swnic_device;
struct swnic_domain;
struct swnic_mr_info;
struct swnic_service;

extern struct genl_family swnic_genl_family;

/* The family's multicast groups (nl_family.c), by index. */
enum swnic_nl_mcgrp {
	SWNIC_NL_MCGRP_EVENTS,
};

/* ---- nl_family.c: access, replies ------------------------------------ */

bool swnic_nl_sees_dev(const struct sk_buff *skb, struct swnic_device *sdev);
int swnic_nl_dev_admin(struct sk_buff *skb, struct swnic_device *sdev,
		       struct netlink_ext_ack *extack);
bool swnic_nl_dev_moved(struct genl_info *info, struct swnic_device *sdev);
struct user_namespace *swnic_nl_user_ns(const struct sk_buff *skb);
bool swnic_nl_sees_domain(const struct sk_buff *skb, struct swnic_domain *dom,
			  s8 *admin);
int swnic_nl_reply(struct sk_buff *msg, struct genl_info *info, int ret);
int swnic_nl_dump_end(struct sk_buff *skb, int ret);

/* ---- nl_dev.c ------------------------------------------------------------ */

struct swnic_device *swnic_nl_dev_get(const struct sk_buff *skb,
				      struct nlattr **attrs,
				      struct netlink_ext_ack *extack);
struct swnic_device *swnic_nl_dev_by_index_locked(u32 index);
int swnic_nl_put_dev_id(struct sk_buff *skb, struct swnic_device *sdev);
int swnic_nl_fill_dev(struct sk_buff *skb, struct swnic_device *sdev,
		      u32 portid, u32 seq, int flags, u8 cmd,
		      struct netlink_callback *cb);

int swnic_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int swnic_nl_dev_new_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_dev_del_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info);

/* ---- nl_domain.c ------------------------------------------------------- */

/* Bumped when a domain opens or closes (nl_events.c): dump consistency. */
extern atomic_t swnic_nl_domains_gen;

struct swnic_domain *swnic_nl_domain_get(struct sk_buff *skb,
					 struct genl_info *info);
int swnic_nl_fill_domain(struct sk_buff *skb, struct swnic_domain *dom,
			 struct user_namespace *ns, pid_t pid, u32 portid,
			 u32 seq, int flags, u8 cmd,
			 struct netlink_callback *cb);
int swnic_nl_fill_mr(struct sk_buff *skb, struct swnic_domain *dom,
		     const struct swnic_mr_info *info, u32 portid, u32 seq,
		     int flags, u8 cmd, struct netlink_callback *cb);

int swnic_nl_dump_start(struct netlink_callback *cb);
int swnic_nl_domain_get_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_domain_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int swnic_nl_mr_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

/* ---- nl_service.c ------------------------------------------------------ */

int swnic_nl_fill_svc(struct sk_buff *skb, struct swnic_device *sdev,
		      const struct swnic_service *svc,
		      struct user_namespace *ns, u32 portid, u32 seq,
		      int flags, u8 cmd, struct netlink_callback *cb);

int swnic_nl_svc_get_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_svc_get_dump_start(struct netlink_callback *cb);
int swnic_nl_svc_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int swnic_nl_svc_new_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_svc_del_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_svc_set_doit(struct sk_buff *skb, struct genl_info *info);

/* ---- nl_stats.c -------------------------------------------------------- */

int swnic_nl_stat_get_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_stat_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int swnic_nl_stat_reset_doit(struct sk_buff *skb, struct genl_info *info);
int swnic_nl_peer_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

/* ---- nl_events.c ------------------------------------------------------- */

/*
 * An event as each namespace that hears it shows ids: @msg for listeners
 * in init_net, @ns_msg for those in @net, the namespace of the device it
 * is about if that is another (else NULL, and so is @ns_msg).
 */
struct swnic_nl_event {
	struct sk_buff *msg;
	struct sk_buff *ns_msg;
	struct net *net;	/* referenced */
};

void swnic_nl_events_enable(bool on);
void swnic_nl_multicast(struct swnic_device *sdev, struct sk_buff *msg,
			gfp_t gfp);
void swnic_nl_svc_event(struct swnic_device *sdev,
			const struct swnic_service *svc, u8 cmd,
			struct swnic_nl_event *ev);
void swnic_nl_event_send(struct swnic_nl_event *ev, gfp_t gfp);

#endif /* _SWNIC_NL_INTERNAL_H */
