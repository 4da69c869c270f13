// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink: domains and their MRs - DOMAIN_GET, MR_GET (their events are
 * in nl_events.c). Users see their own domains (same uid), administrators
 * of a device all of its domains.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "compat.h"
#include "device.h"
#include "domain.h"
#include "mr.h"
#include "nl_internal.h"
#include "service.h"

/* Bumped when a domain opens or closes: dump consistency. */
atomic_t swnic_nl_domains_gen = ATOMIC_INIT(1);

/*
 * State of a domain or MR dump, kept in cb->ctx across its parts. Filters
 * are resolved before the first part (swnic_nl_dump_start()).
 */
struct swnic_nl_dump_ctx {
	u32 dom_id;		/* the domain being dumped, or the next one */
	u32 dev_filter;		/* device index + 1; 0 = all devices */
	u32 dom_filter;		/* domain id; 0 = all domains */
	unsigned long handle;	/* MR dumps: the next MR handle of @dom_id */
	int err;		/* a filter error to report from the first part */
	s8 admin;		/* swnic_nl_sees_domain()'s, per part; -1: not asked */
};

static_assert(sizeof(struct swnic_nl_dump_ctx) <=
	      sizeof_field(struct netlink_callback, ctx));

/* ---- domains -------------------------------------------------------------- */

/* @dom's opener's pid in the reader's (current's) pid namespace, or 0. */
static pid_t swnic_nl_reader_pid(struct swnic_domain *dom)
{
	return pid_nr_ns(dom->pid, task_active_pid_ns(current));
}

/**
 * swnic_nl_fill_domain() - one domain message: DOMAIN_GET's reply, dump and
 *	events
 * @skb: the message
 * @dom: the domain
 * @ns: the user namespace its uid is shown in
 * @pid: its opener's pid as the reader's pid namespace numbers it (0: none)
 * @portid: the requester's port (0 for events)
 * @seq: the request's sequence number (0 for events)
 * @flags: NLM_F_MULTI in dumps, else 0
 * @cmd: SWNIC_NL_CMD_DOMAIN_*
 * @cb: the dump's callback, NULL outside dumps
 *
 * Return: 0 or -EMSGSIZE (nothing added).
 */
int swnic_nl_fill_domain(struct sk_buff *skb, struct swnic_domain *dom,
			 struct user_namespace *ns, pid_t pid, u32 portid,
			 u32 seq, int flags, u8 cmd,
			 struct netlink_callback *cb)
{
	struct swnic_mr_counters mrc;
	void *hdr;
	int ret;

	hdr = genlmsg_put(skb, portid, seq, &swnic_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);

	swnic_mr_domain_counters(dom, &mrc);
	mutex_lock(&dom->lock);
	ret = swnic_nl_put_dev_id(skb, dom->sdev) ||
	      nla_put_u32(skb, SWNIC_A_DOMAIN_ID, dom->id) ||
	      nla_put_u32(skb, SWNIC_A_DOMAIN_PID, pid) ||
	      nla_put_u32(skb, SWNIC_A_DOMAIN_UID,
			  from_kuid_munged(ns, dom->uid)) ||
	      nla_put_string(skb, SWNIC_A_DOMAIN_COMM, dom->comm) ||
	      nla_put_u32(skb, SWNIC_A_DOMAIN_AUTH_KEY,
			  swnic_domain_auth_key(dom)) ||
	      nla_put_u32(skb, SWNIC_A_DOMAIN_MRS, mrc.mrs) ||
	      nla_put_u64_64bit(skb, SWNIC_A_DOMAIN_PINNED, mrc.pinned_bytes,
				SWNIC_A_PAD) ||
	      nla_put_u32(skb, SWNIC_A_DOMAIN_EPS, dom->nep) ||
	      nla_put_u32(skb, SWNIC_A_DOMAIN_CQS, atomic_read(&dom->ncq));
	mutex_unlock(&dom->lock);
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/**
 * swnic_nl_domain_get() - the domain a request names by DOMAIN_ID
 * @skb: the request
 * @info: its attributes (DOMAIN_ID present) and extack
 *
 * Return: the domain, referenced, or ERR_PTR(-ENOENT) if there is none
 * the requester may see.
 */
struct swnic_domain *swnic_nl_domain_get(struct sk_buff *skb,
					 struct genl_info *info)
{
	struct nlattr *id = info->attrs[SWNIC_A_DOMAIN_ID];
	struct swnic_domain *dom;

	dom = swnic_domain_lookup(nla_get_u32(id));
	if (dom && !swnic_nl_sees_domain(skb, dom, NULL)) {
		swnic_domain_put(dom);
		dom = NULL;
	}
	if (!dom) {
		NL_SET_ERR_MSG_ATTR(info->extack, id,
				    "no domain with this id (that you may see)");
		return ERR_PTR(-ENOENT);
	}
	return dom;
}

/**
 * swnic_nl_domain_get_doit() - DOMAIN_GET of the domain named by DOMAIN_ID
 * @skb: the request
 * @info: its attributes; DEV_* too if the domain must be that device's
 *
 * Return: 0 or -errno (-ENOENT for a domain the requester may not see, or
 * of another device than the one named; -ENODEV for no such device).
 */
int swnic_nl_domain_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct swnic_device *sdev = NULL;
	struct swnic_domain *dom;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SWNIC_A_DOMAIN_ID))
		return -EINVAL;
	if (info->attrs[SWNIC_A_DEV_INDEX] || info->attrs[SWNIC_A_DEV_NAME]) {
		sdev = swnic_nl_dev_get(skb, info->attrs, info->extack);
		if (IS_ERR(sdev))
			return PTR_ERR(sdev);
	}
	dom = swnic_nl_domain_get(skb, info);
	if (IS_ERR(dom)) {
		ret = PTR_ERR(dom);
		goto out_dev;
	}
	/* As the dump filtered by both: no such domain on that device. */
	if (sdev && dom->sdev != sdev) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[SWNIC_A_DOMAIN_ID],
				    "no domain with this id on this device");
		ret = -ENOENT;
		goto out_put;
	}
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out_put;
	}
	ret = swnic_nl_fill_domain(msg, dom, swnic_nl_user_ns(skb),
				   swnic_nl_reader_pid(dom),
				   info->snd_portid, info->snd_seq, 0,
				   SWNIC_NL_CMD_DOMAIN_GET, NULL);
	ret = swnic_nl_reply(msg, info, ret);
out_put:
	swnic_domain_put(dom);
out_dev:
	if (sdev)
		swnic_device_put(sdev);
	return ret;
}

/*
 * Resolve a dump's filters (DEV_*, DOMAIN_ID) into @ctx. A domain the
 * requester may not see is as absent as one that does not exist.
 */
static int swnic_nl_dump_filters(struct netlink_callback *cb,
				 struct swnic_nl_dump_ctx *ctx,
				 struct netlink_ext_ack *extack)
{
	struct nlattr **attrs = swnic_genl_dump_attrs(cb);
	struct swnic_device *sdev;
	struct swnic_domain *dom;

	ctx->dom_id = 1;
	if (attrs[SWNIC_A_DEV_INDEX] || attrs[SWNIC_A_DEV_NAME]) {
		sdev = swnic_nl_dev_get(cb->skb, attrs, extack);
		if (IS_ERR(sdev))
			return PTR_ERR(sdev);
		ctx->dev_filter = sdev->index + 1;
		swnic_device_put(sdev);
	}
	if (attrs[SWNIC_A_DOMAIN_ID]) {
		ctx->dom_filter = nla_get_u32(attrs[SWNIC_A_DOMAIN_ID]);
		dom = swnic_domain_lookup(ctx->dom_filter);
		if (dom && !swnic_nl_sees_domain(cb->skb, dom, NULL)) {
			swnic_domain_put(dom);
			dom = NULL;
		}
		if (!dom) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[SWNIC_A_DOMAIN_ID],
					    "no domain with this id (that you may see)");
			return -ENOENT;
		}
		swnic_domain_put(dom);
		ctx->dom_id = ctx->dom_filter;
	}
	return 0;
}

/**
 * swnic_nl_dump_start() - resolve the filters of a domain or MR dump
 * @cb: the dump, before its first part
 *
 * DEV_* and DOMAIN_ID name a device and a domain to dump only. An error
 * here is the request's answer, with its extack; kernels that give start
 * callbacks no extack (6.1) get the error from the first part instead, so
 * that its message still reaches the requester.
 *
 * Return: 0, -ENODEV or -ENOENT.
 */
int swnic_nl_dump_start(struct netlink_callback *cb)
{
	struct swnic_nl_dump_ctx *ctx = (void *)cb->ctx;
	int ret;

	memset(ctx, 0, sizeof(*ctx));
	ret = swnic_nl_dump_filters(cb, ctx, cb->extack);
	if (ret && !cb->extack) {
		ctx->err = ret;
		return 0;
	}
	return ret;
}

/*
 * A dump part begins: a filter error deferred from swnic_nl_dump_start(),
 * with its message; and whether the requester is an administrator is
 * asked again (the part's reader, current, is checked too).
 */
static int swnic_nl_dump_deferred(struct netlink_callback *cb)
{
	struct swnic_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct swnic_nl_dump_ctx tmp = { };

	ctx->admin = -1;
	if (!ctx->err)
		return 0;
	return swnic_nl_dump_filters(cb, &tmp, cb->extack) ?: ctx->err;
}

/*
 * The next domain of a dump from ctx->dom_id on that passes its filters
 * and that the requester may see, referenced; NULL at the end.
 */
static struct swnic_domain *swnic_nl_dump_next_domain(struct netlink_callback *cb)
{
	struct swnic_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct swnic_domain *dom;
	u32 id = ctx->dom_id;

	while ((dom = swnic_domain_find_next(&id))) {
		if (ctx->dom_filter && id != ctx->dom_filter) {
			swnic_domain_put(dom);
			return NULL;
		}
		if ((!ctx->dev_filter ||
		     dom->sdev->index + 1 == ctx->dev_filter) &&
		    swnic_nl_sees_domain(cb->skb, dom, &ctx->admin))
			break;
		swnic_domain_put(dom);
		id++;
	}
	if (dom && id != ctx->dom_id) {
		ctx->dom_id = id;
		ctx->handle = 0;
	}
	return dom;
}

/**
 * swnic_nl_domain_get_dumpit() - DOMAIN_GET dump, by device if DEV_* given
 * @skb: the part being filled
 * @cb: the dump; struct swnic_nl_dump_ctx in cb->ctx
 *
 * Return: the part's length, 0 at the end, or -errno.
 */
int swnic_nl_domain_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb)
{
	struct swnic_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct user_namespace *ns = swnic_nl_user_ns(cb->skb);
	struct swnic_domain *dom;
	int ret;

	ret = swnic_nl_dump_deferred(cb);
	if (ret)
		return ret;
	cb->seq = atomic_read(&swnic_nl_domains_gen);
	while ((dom = swnic_nl_dump_next_domain(cb))) {
		ret = swnic_nl_fill_domain(skb, dom, ns,
					   swnic_nl_reader_pid(dom),
					   NETLINK_CB(cb->skb).portid,
					   cb->nlh->nlmsg_seq, NLM_F_MULTI,
					   SWNIC_NL_CMD_DOMAIN_GET, cb);
		swnic_domain_put(dom);
		if (ret)
			break;
		ctx->dom_id++;
	}
	return swnic_nl_dump_end(skb, ret);
}

/* ---- memory regions ------------------------------------------------------- */

/**
 * swnic_nl_fill_mr() - one MR message: MR_GET's dump and the revoked event
 * @skb: the message
 * @dom: the MR's domain
 * @info: a snapshot of the MR
 * @portid: the requester's port (0 for events)
 * @seq: the request's sequence number (0 for events)
 * @flags: NLM_F_MULTI in dumps, else 0
 * @cmd: SWNIC_NL_CMD_MR_*
 * @cb: the dump's callback, NULL outside dumps
 *
 * Return: 0 or -EMSGSIZE (nothing added).
 */
int swnic_nl_fill_mr(struct sk_buff *skb, struct swnic_domain *dom,
		     const struct swnic_mr_info *info, u32 portid, u32 seq,
		     int flags, u8 cmd, struct netlink_callback *cb)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &swnic_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (swnic_nl_put_dev_id(skb, dom->sdev) ||
	    nla_put_u32(skb, SWNIC_A_DOMAIN_ID, dom->id) ||
	    nla_put_u32(skb, SWNIC_A_MR_HANDLE, info->handle) ||
	    nla_put_u64_64bit(skb, SWNIC_A_MR_KEY, info->key, SWNIC_A_PAD) ||
	    nla_put_u64_64bit(skb, SWNIC_A_MR_ADDR, info->addr, SWNIC_A_PAD) ||
	    nla_put_u64_64bit(skb, SWNIC_A_MR_LENGTH, info->length,
			      SWNIC_A_PAD) ||
	    nla_put_u32(skb, SWNIC_A_MR_ACCESS, info->access) ||
	    nla_put_u32(skb, SWNIC_A_MR_FLAGS, info->flags) ||
	    nla_put_u32(skb, SWNIC_A_MR_STATE, info->state) ||
	    nla_put_u32(skb, SWNIC_A_MR_AUTH_KEY, info->auth_key) ||
	    nla_put_u64_64bit(skb, SWNIC_A_MR_PINNED_PAGES,
			      info->pinned_bytes >> PAGE_SHIFT, SWNIC_A_PAD) ||
	    nla_put_u64_64bit(skb, SWNIC_A_MR_REVOCATIONS, info->revocations,
			      SWNIC_A_PAD) ||
	    nla_put_u64_64bit(skb, SWNIC_A_MR_INVALIDATIONS,
			      info->invalidations, SWNIC_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * A number that changes whenever an MR is registered or deregistered, or a
 * domain opens or closes: 2 * registrations - mrs moves on both.
 */
static u32 swnic_nl_mr_gen(void)
{
	struct swnic_mr_counters c;
	struct swnic_device *sdev;
	u32 gen = atomic_read(&swnic_nl_domains_gen);

	mutex_lock(&swnic_devices_lock);
	gen += swnic_devices_gen;
	list_for_each_entry(sdev, &swnic_devices, list) {
		swnic_mr_device_counters(sdev, &c);
		gen += 2 * c.registrations - c.mrs;
	}
	mutex_unlock(&swnic_devices_lock);
	return gen;
}

/**
 * swnic_nl_mr_get_dumpit() - MR_GET dump, by domain or device if given
 * @skb: the part being filled
 * @cb: the dump; ctx->dom_id and ctx->handle name the next MR
 *
 * Return: the part's length, 0 at the end, or -errno.
 */
int swnic_nl_mr_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct swnic_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct swnic_domain *dom;
	struct swnic_mr_info info;
	int ret;

	ret = swnic_nl_dump_deferred(cb);
	if (ret)
		return ret;
	cb->seq = swnic_nl_mr_gen();
	while ((dom = swnic_nl_dump_next_domain(cb))) {
		while (!swnic_mr_next(dom, &ctx->handle, &info)) {
			ret = swnic_nl_fill_mr(skb, dom, &info,
					       NETLINK_CB(cb->skb).portid,
					       cb->nlh->nlmsg_seq, NLM_F_MULTI,
					       SWNIC_NL_CMD_MR_GET, cb);
			if (ret)
				break;
			ctx->handle++;
		}
		swnic_domain_put(dom);
		if (ret)
			break;
		ctx->dom_id++;
		ctx->handle = 0;
	}
	return swnic_nl_dump_end(skb, ret);
}
