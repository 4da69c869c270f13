// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "swnic": management of devices (and, as they
 * land, domains, MRs, statistics, services and events).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>
#include <net/netlink.h>

#include "device.h"
#include "netlink.h"

static const struct nla_policy swnic_nl_policy[SWNIC_A_MAX + 1] = {
	[SWNIC_A_DEV_INDEX] = NLA_POLICY_MAX(NLA_U32, SWNIC_MAX_DEVICES - 1),
	[SWNIC_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = SWNIC_NAME_MAX - 1 },
};

static struct genl_family swnic_genl_family;

/* @cb is the dump's callback, NULL outside dumps. */
static int swnic_nl_fill_dev(struct sk_buff *skb, struct swnic_device *sdev,
			     u32 portid, u32 seq, int flags, u8 cmd,
			     struct netlink_callback *cb)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &swnic_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);

	mutex_lock(&sdev->lock);
	if (nla_put_u32(skb, SWNIC_A_DEV_INDEX, sdev->index) ||
	    nla_put_string(skb, SWNIC_A_DEV_NAME, sdev->name) ||
	    nla_put_u32(skb, SWNIC_A_DEV_IFINDEX, sdev->ifindex) ||
	    nla_put_u32(skb, SWNIC_A_DEV_STATE, sdev->state) ||
	    nla_put_u32(skb, SWNIC_A_DEV_DOMAINS, sdev->ndomains) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_DOMAINS, sdev->limits.max_domains) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_MR, sdev->limits.max_mr) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_EP, sdev->limits.max_ep) ||
	    nla_put_u32(skb, SWNIC_A_DEV_MAX_CQ, sdev->limits.max_cq) ||
	    nla_put_u64_64bit(skb, SWNIC_A_DEV_MAX_PINNED,
			      sdev->limits.max_pinned, SWNIC_A_PAD)) {
		mutex_unlock(&sdev->lock);
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	mutex_unlock(&sdev->lock);
	genlmsg_end(skb, hdr);
	return 0;
}

/* The device named by DEV_INDEX or DEV_NAME in @info, referenced. */
static struct swnic_device *swnic_nl_dev_from_attrs(struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct swnic_device *sdev;

	if (attrs[SWNIC_A_DEV_INDEX]) {
		sdev = swnic_device_lookup_index(nla_get_u32(attrs[SWNIC_A_DEV_INDEX]));
		if (!sdev)
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[SWNIC_A_DEV_INDEX],
					    "no device with this index");
	} else if (attrs[SWNIC_A_DEV_NAME]) {
		sdev = swnic_device_lookup_name(nla_data(attrs[SWNIC_A_DEV_NAME]));
		if (!sdev)
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[SWNIC_A_DEV_NAME],
					    "no device with this name");
	} else {
		NL_SET_ERR_MSG(info->extack,
			       "device index or name attribute required");
		return ERR_PTR(-EINVAL);
	}
	return sdev ?: ERR_PTR(-ENODEV);
}

static int swnic_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct swnic_device *sdev;
	struct sk_buff *msg;
	int ret;

	sdev = swnic_nl_dev_from_attrs(info);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out_put;
	}
	ret = swnic_nl_fill_dev(msg, sdev, info->snd_portid, info->snd_seq, 0,
				SWNIC_NL_CMD_DEV_GET, NULL);
	if (ret) {
		nlmsg_free(msg);
		goto out_put;
	}
	ret = genlmsg_reply(msg, info);
out_put:
	swnic_device_put(sdev);
	return ret;
}

/* cb->args[0]: index of the next device to dump. */
static int swnic_nl_dev_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct swnic_device *sdev;
	int ret = 0;

	mutex_lock(&swnic_devices_lock);
	cb->seq = swnic_devices_gen;
	list_for_each_entry(sdev, &swnic_devices, list) {
		if (sdev->index < cb->args[0])
			continue;
		ret = swnic_nl_fill_dev(skb, sdev, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI,
					SWNIC_NL_CMD_DEV_GET, cb);
		if (ret)
			break;
		cb->args[0] = sdev->index + 1;
	}
	mutex_unlock(&swnic_devices_lock);

	/* A full skb ends this part; the next part resumes at args[0]. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
}

static const struct genl_small_ops swnic_nl_ops[] = {
	{
		.cmd = SWNIC_NL_CMD_DEV_GET,
		.doit = swnic_nl_dev_get_doit,
		.dumpit = swnic_nl_dev_get_dumpit,
	},
};

static struct genl_family swnic_genl_family __ro_after_init = {
	.name = SWNIC_GENL_NAME,
	.version = SWNIC_GENL_VERSION,
	.maxattr = SWNIC_A_MAX,
	.policy = swnic_nl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.small_ops = swnic_nl_ops,
	.n_small_ops = ARRAY_SIZE(swnic_nl_ops),
	.resv_start_op = SWNIC_NL_CMD_DEV_GET,
};

int __init swnic_genl_init(void)
{
	return genl_register_family(&swnic_genl_family);
}

void swnic_genl_exit(void)
{
	genl_unregister_family(&swnic_genl_family);
}
