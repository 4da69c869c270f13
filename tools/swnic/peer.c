// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8) peer: the wire's peer contexts and counters in this network
 * namespace (PEER_GET).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "swnic.h"

static void peer_usage(void)
{
	fprintf(stderr,
		"Usage: swnic peer show\n"
		"Lists the wire's peer contexts in this network namespace\n"
		"(address:port, incarnations, srtt, rto, packets in flight,\n"
		"retransmits, bytes) and its counters: packets and drops by\n"
		"reason. Times are in microseconds. With -j, one array: the\n"
		"namespace's counters first (peer \"*\"), then each peer.\n");
}

/* Text: the namespace's counters, printed after the peers. */
struct peer_show {
	struct {
		char *name;
		uint64_t value;
	} *c;
	size_t n;
	size_t peers;		/* rows printed */
};

static void peer_save_one(const char *name, uint64_t value, void *arg)
{
	struct peer_show *ps = arg;
	void *p = realloc(ps->c, (ps->n + 1) * sizeof(*ps->c));

	if (p) {
		ps->c = p;
		ps->c[ps->n].name = strdup(name);
	}
	if (!p || !ps->c[ps->n].name) {
		perror("swnic");
		exit(1);
	}
	ps->c[ps->n++].value = value;
}

static void peer_save_counters(struct peer_show *ps, const struct nlattr *stats)
{
	/* One such message a dump: a restarted dump's replaces it. */
	while (ps->n)
		free(ps->c[--ps->n].name);
	stat_for_each(stats, peer_save_one, ps);
}

static void peer_add_one(const char *name, uint64_t value, void *arg)
{
	*(uint64_t *)arg += value;
}

/* The sum of a peer's drop counters. */
static uint64_t peer_drops(const struct nlattr *stats)
{
	uint64_t sum = 0;

	stat_for_each(stats, peer_add_one, &sum);
	return sum;
}

/* The text of an address attribute (4 or 16 bytes; "?" if neither). */
static void peer_addr(const struct nlattr *addr, char *ip, size_t size)
{
	uint16_t len = mnl_attr_get_payload_len(addr);

	snprintf(ip, size, "?");
	if (len == 4)
		inet_ntop(AF_INET, mnl_attr_get_payload(addr), ip, size);
	else if (len == 16)
		inet_ntop(AF_INET6, mnl_attr_get_payload(addr), ip, size);
}

/* "a.b.c.d:port" of a PEER_ADDR (4 or 16 bytes) and PEER_PORT. */
static void peer_name(const struct sw_attrs *a, char *buf, size_t size)
{
	const struct nlattr *addr = a->tb[SWNIC_A_PEER_ADDR];
	char ip[INET6_ADDRSTRLEN];
	uint32_t port = 0;

	peer_addr(addr, ip, sizeof(ip));
	attr_u32(a->tb[SWNIC_A_PEER_PORT], &port);
	snprintf(buf, size, mnl_attr_get_payload_len(addr) == 16 ?
		 "[%s]:%u" : "%s:%u", ip, port);
}

static int peer_show_cb(const struct nlmsghdr *nlh, void *data)
{
	static const struct {
		const char *key;
		unsigned int attr;
	} u32s[] = {
		{ "srtt", SWNIC_A_PEER_SRTT },
		{ "rttvar", SWNIC_A_PEER_RTTVAR },
		{ "rto", SWNIC_A_PEER_RTO },
		{ "inflight", SWNIC_A_PEER_INFLIGHT },
		{ "msgs", SWNIC_A_PEER_MSGS },
		{ "held", SWNIC_A_PEER_HELD },
		{ "held_waiting", SWNIC_A_PEER_HELD_WAITING },
		{ "answers", SWNIC_A_PEER_ANSWERS },
	}, u64s[] = {
		{ "retx", SWNIC_A_PEER_RETX },
		{ "tx_bytes", SWNIC_A_PEER_TX_BYTES },
		{ "rx_bytes", SWNIC_A_PEER_RX_BYTES },
	};
	struct peer_show *ps = data;
	struct sw_attrs a;
	char name[INET6_ADDRSTRLEN + 16];
	uint32_t v;
	uint64_t v64;
	size_t i;

	if (nl_parse(nlh, &a) < 0)
		return MNL_CB_ERROR;
	if (!a.tb[SWNIC_A_PEER_ADDR]) {
		/* The namespace's counters. */
		if (!a.tb[SWNIC_A_STATS])
			return MNL_CB_OK;
		if (ps) {
			peer_save_counters(ps, a.tb[SWNIC_A_STATS]);
			return MNL_CB_OK;
		}
		pr_row_begin();
		pr_str("peer", "*");
		stat_print_entries(a.tb[SWNIC_A_STATS]);
		pr_row_end();
		return MNL_CB_OK;
	}
	if (ps)
		ps->peers++;
	pr_row_begin();
	peer_name(&a, name, sizeof(name));
	pr_str("peer", name);
	/* Ours in the context: "-" until a packet told it (no route). */
	if (a.tb[SWNIC_A_PEER_LOCAL_ADDR])
		peer_addr(a.tb[SWNIC_A_PEER_LOCAL_ADDR], name, sizeof(name));
	else
		snprintf(name, sizeof(name), "-");
	pr_str("local", name);
	if (attr_u32(a.tb[SWNIC_A_PEER_LOCAL_INC], &v))
		pr_hex64("local_inc", v);
	if (attr_u32(a.tb[SWNIC_A_PEER_REMOTE_INC], &v))
		pr_hex64("remote_inc", v);
	for (i = 0; i < sizeof(u32s) / sizeof(u32s[0]); i++)
		if (attr_u32(a.tb[u32s[i].attr], &v))
			pr_u32(u32s[i].key, v);
	for (i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++)
		if (attr_u64(a.tb[u64s[i].attr], &v64))
			pr_u64(u64s[i].key, v64);
	if (attr_u32(a.tb[SWNIC_A_PEER_SILENT_MS], &v))
		pr_u32("silent_ms", v);
	/* Its drops by reason: JSON's counters; the text, their sum. */
	if (a.tb[SWNIC_A_STATS]) {
		if (!ps)
			stat_print_entries(a.tb[SWNIC_A_STATS]);
		else
			pr_u64("drops", peer_drops(a.tb[SWNIC_A_STATS]));
	}
	pr_row_end();
	return MNL_CB_OK;
}

static int peer_show(struct sw *sw)
{
	struct peer_show ps = { 0 };
	bool json = sw->json;
	size_t i;
	int ret;

	if (sw_argc(sw))
		return sw_unknown_arg(sw, peer_usage);
	if (nl_open(sw))
		return -1;
	pr_begin(PR_TABLE);
	ret = nl_dump(sw, SWNIC_NL_CMD_PEER_GET, NULL, NULL, peer_show_cb,
		      json ? NULL : &ps);
	if (ret) {
		pr_discard();
		goto out;
	}
	ret = pr_end();
	if (ret || json)
		goto out;
	/* Text: the counters as a table of their own. */
	if (ps.peers)
		printf("\n");
	pr_begin(PR_TABLE);
	pr_row_begin();
	pr_str("peer", "*");
	pr_map_begin("counters", "counter", "value");
	for (i = 0; i < ps.n; i++)
		pr_map_u64(ps.c[i].name, ps.c[i].value);
	pr_map_end();
	pr_row_end();
	ret = pr_end();
out:
	for (i = 0; i < ps.n; i++)
		free(ps.c[i].name);
	free(ps.c);
	return ret;
}

int cmd_peer(struct sw *sw)
{
	static const struct sw_cmd cmds[] = {
		{ "show", peer_show },
		{ "list", peer_show },
		{ NULL, NULL },
	};

	return sw_exec(sw, cmds, "peer command", peer_usage);
}
