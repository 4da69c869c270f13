/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nl_util.h - a small libmnl client of the "swnic" generic netlink family
 * for the nl_*.c selftests: requests, dumps, and the extended ACK (message,
 * offset of the bad attribute, missing attribute) of every error.
 */
#ifndef SWNIC_NL_UTIL_H
#define SWNIC_NL_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/swnic_netlink.h>

#define NLC_BUF_SIZE	32768

struct nlc {
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
	uint16_t family;
	uint32_t mcgrp_events;
	char req[NLC_BUF_SIZE];		/* the request being built */
	char buf[NLC_BUF_SIZE];		/* received datagrams */
};

/* What came back for one request. */
struct nlc_reply {
	int error;			/* 0 or -errno */
	char msg[256];			/* extack message, "" if none */
	bool has_offs;
	uint32_t offs;			/* offset of the bad attribute */
	bool has_miss;
	uint32_t miss_type;		/* type of the missing attribute */
	unsigned int nmsgs;		/* data messages */
	unsigned int nparts;		/* datagrams read */
	bool intr;			/* a message had NLM_F_DUMP_INTR */
	mnl_cb_t cb;			/* run on each data message */
	void *data;
};

static inline struct nlmsghdr *nlc_msg_raw(struct nlc *c, uint16_t type,
					   uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(c->req);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++c->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = SWNIC_GENL_VERSION;
	return nlh;
}

/* A request of the swnic family; NLM_F_ACK is always asked for. */
static inline struct nlmsghdr *nlc_msg(struct nlc *c, uint8_t cmd,
				       uint16_t flags)
{
	return nlc_msg_raw(c, c->family, cmd, NLM_F_ACK | flags);
}

static inline void nlc_parse_extack(const struct nlmsghdr *nlh,
				    struct nlc_reply *r)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	unsigned int hlen;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (nlh->nlmsg_type == NLMSG_DONE)
		hlen = sizeof(int);
	else if (nlh->nlmsg_flags & NLM_F_CAPPED)
		hlen = sizeof(*err);
	else
		hlen = sizeof(*err) + err->msg.nlmsg_len - NLMSG_HDRLEN;
	mnl_attr_for_each(a, nlh, hlen) {
		switch (mnl_attr_get_type(a)) {
		case NLMSGERR_ATTR_MSG:
			snprintf(r->msg, sizeof(r->msg), "%.*s",
				 (int)mnl_attr_get_payload_len(a),
				 (const char *)mnl_attr_get_payload(a));
			break;
		case NLMSGERR_ATTR_OFFS:
			r->has_offs = true;
			r->offs = mnl_attr_get_u32(a);
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			r->has_miss = true;
			r->miss_type = mnl_attr_get_u32(a);
			break;
		}
	}
}

static inline int nlc_data_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlc_reply *r = arg;

	r->nmsgs++;
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	return r->cb ? r->cb(nlh, r->data) : MNL_CB_OK;
}

static inline int nlc_error_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct nlc_reply *r = arg;

	r->error = err->error;
	nlc_parse_extack(nlh, r);
	return err->error ? MNL_CB_ERROR : MNL_CB_STOP;
}

static inline int nlc_done_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlc_reply *r = arg;
	int error;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof(error));
	r->error = error;
	nlc_parse_extack(nlh, r);
	return error ? MNL_CB_ERROR : MNL_CB_STOP;
}

/*
 * The callbacks on each message of a datagram (not mnl_cb_run(), which
 * stops at the first NLM_F_DUMP_INTR message and loses the rest).
 */
static inline int nlc_run_buf(const char *buf, size_t len, uint32_t seq,
			      uint32_t portid, struct nlc_reply *r)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	int ret = MNL_CB_OK;
	int left = len;

	while (mnl_nlmsg_ok(nlh, left)) {
		if (!mnl_nlmsg_portid_ok(nlh, portid) ||
		    !mnl_nlmsg_seq_ok(nlh, seq)) {
			r->error = -EPROTO;
			return MNL_CB_ERROR;
		}
		if (nlh->nlmsg_type == NLMSG_ERROR)
			ret = nlc_error_cb(nlh, r);
		else if (nlh->nlmsg_type == NLMSG_DONE)
			ret = nlc_done_cb(nlh, r);
		else if (nlh->nlmsg_type >= NLMSG_MIN_TYPE)
			ret = nlc_data_cb(nlh, r);
		if (ret <= MNL_CB_STOP)
			return ret;
		nlh = mnl_nlmsg_next(nlh, &left);
	}
	return ret;
}

/* Read replies to the request @seq until its ACK/DONE; fills @r. */
static inline int nlc_recv(struct nlc *c, uint32_t seq, struct nlc_reply *r)
{
	ssize_t len;
	int ret;

	do {
		len = mnl_socket_recvfrom(c->nl, c->buf, sizeof(c->buf));
		if (len < 0) {
			r->error = -errno;
			return r->error;
		}
		r->nparts++;
		ret = nlc_run_buf(c->buf, len, seq, c->portid, r);
	} while (ret > MNL_CB_STOP);
	if (ret < 0 && !r->error)
		r->error = -EIO;
	return r->error;
}

static inline int nlc_send(struct nlc *c, struct nlmsghdr *nlh)
{
	return mnl_socket_sendto(c->nl, nlh, nlh->nlmsg_len) < 0 ? -errno : 0;
}

/* Send @nlh, read everything it gets back into @r. Return: r->error. */
static inline int nlc_talk(struct nlc *c, struct nlmsghdr *nlh,
			   struct nlc_reply *r)
{
	int ret = nlc_send(c, nlh);

	if (ret) {
		r->error = ret;
		return ret;
	}
	return nlc_recv(c, nlh->nlmsg_seq, r);
}

static inline int nlc_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlc *c = data;
	const struct nlattr *a, *grp, *g;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			c->family = mnl_attr_get_u16(a);
		if (mnl_attr_get_type(a) != CTRL_ATTR_MCAST_GROUPS)
			continue;
		mnl_attr_for_each_nested(grp, a) {
			const char *name = NULL;
			uint32_t id = 0;

			mnl_attr_for_each_nested(g, grp) {
				if (mnl_attr_get_type(g) == CTRL_ATTR_MCAST_GRP_NAME)
					name = mnl_attr_get_str(g);
				if (mnl_attr_get_type(g) == CTRL_ATTR_MCAST_GRP_ID)
					id = mnl_attr_get_u32(g);
			}
			if (name && !strcmp(name, SWNIC_GENL_MCGRP_EVENTS))
				c->mcgrp_events = id;
		}
	}
	return MNL_CB_OK;
}

/* Open a socket with extended ACKs and resolve the family. Return: 0/-errno. */
static inline int nlc_open(struct nlc *c)
{
	struct nlc_reply r = { .cb = nlc_family_cb, .data = c };
	struct nlmsghdr *nlh;
	int one = 1;

	memset(c, 0, offsetof(struct nlc, req));
	c->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!c->nl)
		return -errno;
	if (mnl_socket_setsockopt(c->nl, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    mnl_socket_setsockopt(c->nl, NETLINK_CAP_ACK, &one, sizeof(one)) ||
	    mnl_socket_bind(c->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	c->portid = mnl_socket_get_portid(c->nl);
	c->seq = time(NULL);
	nlh = nlc_msg_raw(c, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, SWNIC_GENL_NAME);
	if (nlc_talk(c, nlh, &r))
		return r.error;
	return c->family ? 0 : -ENOENT;
}

static inline void nlc_close(struct nlc *c)
{
	if (c->nl)
		mnl_socket_close(c->nl);
	c->nl = NULL;
}

/* Offset of attribute @a in the request @nlh (for NLMSGERR_ATTR_OFFS). */
static inline uint32_t nlc_offset(const struct nlmsghdr *nlh,
				  const struct nlattr *a)
{
	return (const char *)a - (const char *)nlh;
}

/* Attribute table of a reply message (top level). */
struct nlc_attrs {
	const struct nlattr *tb[SWNIC_A_MAX + 1];
};

static inline int nlc_attrs_cb(const struct nlattr *a, void *data)
{
	struct nlc_attrs *t = data;

	if (mnl_attr_get_type(a) <= SWNIC_A_MAX)
		t->tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static inline void nlc_attrs(const struct nlmsghdr *nlh, struct nlc_attrs *t)
{
	memset(t, 0, sizeof(*t));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), nlc_attrs_cb, t);
}

static inline uint32_t nlc_u32(const struct nlc_attrs *t, int type)
{
	return t->tb[type] ? mnl_attr_get_u32(t->tb[type]) : UINT32_MAX;
}

static inline uint64_t nlc_u64(const struct nlc_attrs *t, int type)
{
	return t->tb[type] ? mnl_attr_get_u64(t->tb[type]) : UINT64_MAX;
}

static inline uint8_t nlc_cmd(const struct nlmsghdr *nlh)
{
	return ((const struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd;
}

#endif /* SWNIC_NL_UTIL_H */
