// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8): the generic netlink socket - family resolution, requests,
 * dumps (restarted when the kernel flags them inconsistent), events, and
 * the kernel's extended ACK printed on every error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/socket.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "swnic.h"

#define NL_SEND_SIZE	8192	/* SW_MAX_ARGS arguments fit, at most */
#define NL_RECV_SIZE	32768	/* a whole dump skb, never truncated */
#define NL_DUMP_TRIES	10	/* restarts of an interrupted dump */
#define NL_EVENTS_RCVBUF (1 << 20)	/* the monitor's socket buffer */

/* Attribute names, as in Documentation/netlink/specs/swnic.yaml. */
static const char *const attr_names[SWNIC_A_MAX + 1] = {
	[SWNIC_A_PAD] = "pad",
	[SWNIC_A_DEV_INDEX] = "dev-index",
	[SWNIC_A_DEV_NAME] = "dev-name",
	[SWNIC_A_DEV_IFINDEX] = "dev-ifindex",
	[SWNIC_A_DEV_IFNAME] = "dev-ifname",
	[SWNIC_A_DEV_STATE] = "dev-state",
	[SWNIC_A_DEV_DOMAINS] = "dev-domains",
	[SWNIC_A_DEV_MAX_DOMAINS] = "dev-max-domains",
	[SWNIC_A_DEV_MAX_MR] = "dev-max-mr",
	[SWNIC_A_DEV_MAX_EP] = "dev-max-ep",
	[SWNIC_A_DEV_MAX_CQ] = "dev-max-cq",
	[SWNIC_A_DEV_MAX_PINNED] = "dev-max-pinned",
	[SWNIC_A_DEV_MAX_DOMAINS_PER_USER] = "dev-max-domains-per-user",
	[SWNIC_A_FLAGS] = "flags",
	[SWNIC_A_DOMAIN_ID] = "domain-id",
	[SWNIC_A_DOMAIN_PID] = "domain-pid",
	[SWNIC_A_DOMAIN_UID] = "domain-uid",
	[SWNIC_A_DOMAIN_COMM] = "domain-comm",
	[SWNIC_A_DOMAIN_AUTH_KEY] = "domain-auth-key",
	[SWNIC_A_DOMAIN_MRS] = "domain-mrs",
	[SWNIC_A_DOMAIN_PINNED] = "domain-pinned",
	[SWNIC_A_DOMAIN_EPS] = "domain-eps",
	[SWNIC_A_DOMAIN_CQS] = "domain-cqs",
	[SWNIC_A_STATS] = "stats",
	[SWNIC_A_SVC_ID] = "svc-id",
	[SWNIC_A_SVC_AUTH_KEY] = "svc-auth-key",
	[SWNIC_A_SVC_FLAGS] = "svc-flags",
	[SWNIC_A_SVC_MEMBERS] = "svc-members",
	[SWNIC_A_SVC_MAX_DOMAINS] = "svc-max-domains",
	[SWNIC_A_SVC_DOMAINS] = "svc-domains",
	[SWNIC_A_LIMIT] = "limit",
	[SWNIC_A_PEER_ADDR] = "peer-addr",
	[SWNIC_A_PEER_PORT] = "peer-port",
	[SWNIC_A_PEER_LOCAL_INC] = "peer-local-inc",
	[SWNIC_A_PEER_REMOTE_INC] = "peer-remote-inc",
	[SWNIC_A_PEER_SRTT] = "peer-srtt",
	[SWNIC_A_PEER_RTTVAR] = "peer-rttvar",
	[SWNIC_A_PEER_RTO] = "peer-rto",
	[SWNIC_A_PEER_INFLIGHT] = "peer-inflight",
	[SWNIC_A_PEER_MSGS] = "peer-msgs",
	[SWNIC_A_PEER_SILENT_MS] = "peer-silent-ms",
	[SWNIC_A_PEER_RETX] = "peer-retx",
	[SWNIC_A_PEER_TX_BYTES] = "peer-tx-bytes",
	[SWNIC_A_PEER_RX_BYTES] = "peer-rx-bytes",
	[SWNIC_A_PEER_HELD] = "peer-held",
	[SWNIC_A_PEER_HELD_WAITING] = "peer-held-waiting",
	[SWNIC_A_PEER_ANSWERS] = "peer-answers",
	[SWNIC_A_PEER_LOCAL_ADDR] = "peer-local-addr",
};

const char *nl_attr_name(unsigned int type)
{
	if (type <= SWNIC_A_MAX && attr_names[type])
		return attr_names[type];
	return NULL;
}

/* ---- family resolution -------------------------------------------------- */

static int family_grp_cb(const struct nlattr *grp, struct sw *sw)
{
	const struct nlattr *a, *name = NULL, *id = NULL;

	mnl_attr_for_each_nested(a, grp) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME &&
		    !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
			name = a;
		else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID &&
			 !mnl_attr_validate(a, MNL_TYPE_U32))
			id = a;
	}
	if (name && id &&
	    !strcmp(mnl_attr_get_str(name), SWNIC_GENL_MCGRP_EVENTS))
		sw->mcgrp_events = mnl_attr_get_u32(id);
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sw *sw = data;
	const struct nlattr *a, *grp;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (!mnl_attr_validate(a, MNL_TYPE_U16))
				sw->family = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			mnl_attr_for_each_nested(grp, a)
				family_grp_cb(grp, sw);
			break;
		}
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *nl_msg_raw(struct sw *sw, uint16_t type, uint8_t cmd,
				   uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(sw->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++sw->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

int nl_open(struct sw *sw)
{
	struct nlmsghdr *nlh;
	int one = 1;

	if (sw->nl)
		return 0;
	sw->buf = malloc(NL_SEND_SIZE);
	if (!sw->buf)
		return -1;
	sw->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!sw->nl) {
		fprintf(stderr, "swnic: netlink socket: %s\n", strerror(errno));
		goto err;
	}
	/* Errors carry the kernel's message and no copy of the request. */
	mnl_socket_setsockopt(sw->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(sw->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(sw->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "swnic: netlink bind: %s\n", strerror(errno));
		goto err;
	}
	sw->portid = mnl_socket_get_portid(sw->nl);
	sw->seq = time(NULL);

	nlh = nl_msg_raw(sw, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, SWNIC_GENL_NAME);
	sw->family = GENL_ID_CTRL;	/* nl_run() matches replies by seq */
	if (nl_run(sw, nlh, family_cb, sw) || sw->family == GENL_ID_CTRL) {
		if (errno == ENOENT)
			fprintf(stderr,
				"swnic: the swnic module is not loaded\n");
		goto err;
	}
	return 0;

err:
	/*
	 * Nothing half open: a socket kept without the family would take
	 * the next command (a batch's next line) as ready, and send it as
	 * message type 0 - acked as a success, or never answered.
	 */
	nl_close(sw);
	sw->family = 0;
	sw->mcgrp_events = 0;
	return -1;
}

void nl_close(struct sw *sw)
{
	if (sw->nl)
		mnl_socket_close(sw->nl);
	sw->nl = NULL;
	free(sw->buf);
	sw->buf = NULL;
}

struct nlmsghdr *nl_msg(struct sw *sw, uint8_t cmd, uint16_t flags)
{
	return nl_msg_raw(sw, sw->family, cmd, SWNIC_GENL_VERSION, flags);
}

/* ---- errors: the extended ACK ------------------------------------------ */

/* Name the attribute at @offs of the request @req (top level or inside). */
static void print_bad_attr(const struct nlmsghdr *req, uint32_t offs)
{
	const struct nlattr *a;
	unsigned int base = NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr));

	if (!req || offs < base || offs >= req->nlmsg_len)
		return;
	mnl_attr_for_each(a, req, sizeof(struct genlmsghdr)) {
		uint32_t start = (const char *)a - (const char *)req;
		uint32_t type = mnl_attr_get_type(a);
		const char *name = nl_attr_name(type);

		if (offs < start || offs >= start + mnl_attr_get_len(a))
			continue;
		if (name)
			fprintf(stderr, " (attribute %s%s)", name,
				offs == start ? "" : ", inside");
		else
			fprintf(stderr, " (attribute %u)", type);
		return;
	}
}

static void print_extack(const struct nlmsghdr *nlh, int error,
			 const struct nlmsghdr *req)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	const char *msg = NULL;
	const struct nlattr *a;
	uint32_t offs = 0, miss = 0;
	bool has_offs = false, has_miss = false;
	unsigned int hlen;

	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (nlh->nlmsg_type == NLMSG_DONE)
			hlen = sizeof(int);
		else if (nlh->nlmsg_flags & NLM_F_CAPPED)
			hlen = sizeof(*err);
		else
			hlen = sizeof(*err) + err->msg.nlmsg_len -
			       NLMSG_HDRLEN;
		mnl_attr_for_each(a, nlh, hlen) {
			switch (mnl_attr_get_type(a)) {
			case NLMSGERR_ATTR_MSG:
				if (!mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
					msg = mnl_attr_get_str(a);
				break;
			case NLMSGERR_ATTR_OFFS:
				if (!mnl_attr_validate(a, MNL_TYPE_U32)) {
					offs = mnl_attr_get_u32(a);
					has_offs = true;
				}
				break;
			case NLMSGERR_ATTR_MISS_TYPE:
				if (!mnl_attr_validate(a, MNL_TYPE_U32)) {
					miss = mnl_attr_get_u32(a);
					has_miss = true;
				}
				break;
			}
		}
	}
	fprintf(stderr, "swnic: error: %s", strerror(error));
	if (msg)
		fprintf(stderr, ": %s", msg);
	if (has_offs)
		print_bad_attr(req, offs);
	if (has_miss) {
		const char *name = nl_attr_name(miss);

		if (name)
			fprintf(stderr, " (missing attribute %s)", name);
		else
			fprintf(stderr, " (missing attribute %u)", miss);
	}
	fputc('\n', stderr);
}

/* ---- request/response --------------------------------------------------- */

struct nl_ctx {
	mnl_cb_t cb;
	void *data;
	const struct nlmsghdr *req;
	bool intr;		/* a part carried NLM_F_DUMP_INTR */
	bool quiet;		/* don't print errors (interrupted dumps) */
	void (*lost)(void *data);	/* events: ENOBUFS lost some */
};

static int nl_data_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nl_ctx *c = arg;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		c->intr = true;
	return c->cb ? c->cb(nlh, c->data) : MNL_CB_OK;
}

static int nl_error_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct nl_ctx *c = arg;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!err->error)
		return MNL_CB_STOP;
	print_extack(nlh, -err->error, c->req);
	errno = -err->error;
	return MNL_CB_ERROR;
}

static int nl_done_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nl_ctx *c = arg;
	int error = 0;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		c->intr = true;
	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int))
		memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof(int));
	if (!error)
		return MNL_CB_STOP;
	print_extack(nlh, -error, c->req);
	errno = -error;
	return MNL_CB_ERROR;
}

/*
 * Run the callbacks on each message of a datagram. Not mnl_cb_run(): it
 * stops at the first NLM_F_DUMP_INTR message, losing the rest of the
 * dump; we note the flag, read the dump to its end and run it again.
 */
static int nl_run_buf(const char *buf, size_t len, uint32_t seq,
		      uint32_t portid, struct nl_ctx *c)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	int ret = MNL_CB_OK, left = len;

	while (mnl_nlmsg_ok(nlh, left)) {
		if (!mnl_nlmsg_portid_ok(nlh, portid) ||
		    !mnl_nlmsg_seq_ok(nlh, seq)) {
			errno = EPROTO;
			return MNL_CB_ERROR;
		}
		switch (nlh->nlmsg_type) {
		case NLMSG_ERROR:
			ret = nl_error_cb(nlh, c);
			break;
		case NLMSG_DONE:
			ret = nl_done_cb(nlh, c);
			break;
		case NLMSG_NOOP:
		case NLMSG_OVERRUN:
			break;
		default:
			ret = nl_data_cb(nlh, c);
			break;
		}
		if (ret <= MNL_CB_STOP)
			return ret;
		nlh = mnl_nlmsg_next(nlh, &left);
	}
	return ret;
}

static int nl_recv_loop(struct sw *sw, uint32_t seq, struct nl_ctx *c)
{
	int ret = MNL_CB_OK;
	char *buf;
	ssize_t len;

	buf = malloc(NL_RECV_SIZE);
	if (!buf)
		return -1;
	do {
		len = mnl_socket_recvfrom(sw->nl, buf, NL_RECV_SIZE);
		if (len < 0 && errno == ENOBUFS && c->lost) {
			c->lost(c->data);
			continue;
		}
		if (len < 0) {
			fprintf(stderr, "swnic: netlink receive: %s\n",
				strerror(errno));
			ret = MNL_CB_ERROR;
			break;
		}
		ret = nl_run_buf(buf, len, seq, sw->portid, c);
	} while (ret > MNL_CB_STOP);
	free(buf);
	return ret < 0 ? -1 : 0;
}

/* Send @nlh and run @cb on every reply until the ACK or the dump's end. */
int nl_run(struct sw *sw, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	struct nl_ctx c = { .cb = cb, .data = data, .req = nlh };

	if (mnl_socket_sendto(sw->nl, nlh, nlh->nlmsg_len) < 0) {
		fprintf(stderr, "swnic: netlink send: %s\n", strerror(errno));
		return -1;
	}
	return nl_recv_loop(sw, nlh->nlmsg_seq, &c);
}

/*
 * Dump with command @cmd (@put adds filter attributes). A dump the kernel
 * flags as raced with a change is thrown away and run again.
 */
int nl_dump(struct sw *sw, uint8_t cmd,
	    int (*put)(struct nlmsghdr *nlh, void *data), void *put_data,
	    mnl_cb_t cb, void *data)
{
	struct nlmsghdr *nlh;
	int tries, ret;

	if (nl_open(sw))
		return -1;
	for (tries = 0; tries < NL_DUMP_TRIES; tries++) {
		struct nl_ctx c = { .cb = cb, .data = data };

		nlh = nl_msg(sw, cmd, NLM_F_DUMP);
		if (put && put(nlh, put_data))
			return -1;
		c.req = nlh;
		if (mnl_socket_sendto(sw->nl, nlh, nlh->nlmsg_len) < 0) {
			fprintf(stderr, "swnic: netlink send: %s\n",
				strerror(errno));
			return -1;
		}
		ret = nl_recv_loop(sw, nlh->nlmsg_seq, &c);
		if (ret || !c.intr)
			return ret;
		pr_discard();
	}
	fprintf(stderr, "swnic: the dump kept changing under us; try again\n");
	errno = EINTR;
	return -1;
}

int nl_subscribe(struct sw *sw)
{
	int rcvbuf = NL_EVENTS_RCVBUF;
	int fd;

	if (nl_open(sw))
		return -1;
	/*
	 * Room for bursts of events: a user opening and closing domains in
	 * a loop makes two each time. Past the system's rmem_max if we may.
	 */
	fd = mnl_socket_get_fd(sw->nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (!sw->mcgrp_events) {
		fprintf(stderr, "swnic: the kernel has no events group\n");
		return -1;
	}
	if (mnl_socket_setsockopt(sw->nl, NETLINK_ADD_MEMBERSHIP,
				  &sw->mcgrp_events,
				  sizeof(sw->mcgrp_events)) < 0) {
		fprintf(stderr, "swnic: cannot join the events group: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Run @cb on every event until it returns MNL_CB_STOP or an error. Events
 * the kernel had no room for in our socket are dropped, and the next read
 * says so (ENOBUFS): @lost runs there, and the events go on.
 */
int nl_recv_events(struct sw *sw, mnl_cb_t cb, void (*lost)(void *data),
		   void *data)
{
	struct nl_ctx c = { .cb = cb, .data = data, .lost = lost };

	/* Events have seq 0 and portid 0: no matching. */
	return nl_recv_loop(sw, 0, &c);
}

/* ---- attributes ---------------------------------------------------------- */

static int nl_attr_cb(const struct nlattr *attr, void *data)
{
	struct sw_attrs *a = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type <= SWNIC_A_MAX)
		a->tb[type] = attr;
	return MNL_CB_OK;
}

int nl_parse(const struct nlmsghdr *nlh, struct sw_attrs *a)
{
	memset(a, 0, sizeof(*a));
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), nl_attr_cb, a);
}

uint8_t nl_cmd(const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	return g->cmd;
}

bool attr_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) != sizeof(uint32_t))
		return false;
	*v = mnl_attr_get_u32(a);
	return true;
}

bool attr_u64(const struct nlattr *a, uint64_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) != sizeof(uint64_t))
		return false;
	*v = mnl_attr_get_u64(a);
	return true;
}

const char *attr_str(const struct nlattr *a)
{
	if (!a || mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
		return NULL;
	return mnl_attr_get_str(a);
}

int nl_put_name(struct nlmsghdr *nlh, uint16_t type, const char *what,
		const char *s, size_t size)
{
	if (strnlen(s, size) == size) {
		/* A long one is shown by its start. */
		fprintf(stderr, "swnic: %s \"%.*s%s\" is too long",
			what, (int)size, s,
			strnlen(s, size + 1) > size ? "..." : "");
		fprintf(stderr, " (at most %zu bytes)\n", size - 1);
		return -1;
	}
	if (!mnl_attr_put_strz_check(nlh, NL_SEND_SIZE, type, s)) {
		fprintf(stderr, "swnic: the request is too long\n");
		return -1;
	}
	return 0;
}

int nl_put_dev(struct nlmsghdr *nlh, const char *dev)
{
	uint32_t index;

	if (!sw_parse_u32(dev, &index)) {
		mnl_attr_put_u32(nlh, SWNIC_A_DEV_INDEX, index);
		return 0;
	}
	return nl_put_name(nlh, SWNIC_A_DEV_NAME, "device name", dev,
			   SWNIC_NAME_MAX);
}
