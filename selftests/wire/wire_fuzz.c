// SPDX-License-Identifier: GPL-2.0
/*
 * wire_fuzz - a seeded, reproducible packet fuzzer against the wire of a
 * live swnic device (Documentation/wire.rst): N crafted UDP datagrams to
 * IP:PORT (default 4793).
 *
 *   wire_fuzz [-s SEED] [-n COUNT] [-p PORT] [-k SOCKETS] [-d USEC]
 *             [-r SPOOF_NET] [-W] [-a] [-x KIND -i IFNAME] [-o SPORT]
 *             [-I INC] [-l LEN] [-f SRC] [-g FILE] [-T TYPE] [-e PORTS] IP
 *
 * What it sends, each packet a draw from the seed (all but some with the
 * right end-to-end checksum): random bytes; truncated
 * headers; bad versions, types and zero incarnations; DATA and READ_REQ
 * with the PSN next, a duplicate, at and past the receive window's edges
 * or far away, with stale/unknown/right incarnations, huge lengths,
 * offsets beyond the length, fragments inconsistent with earlier ones of
 * the same message, overlapping fragments; RESPs for messages never sent
 * (some HELD, some with junk flags); PINGs (some with junk after them);
 * ACKs for PSNs never sent and random SACKs; RESETs with a wrong (or the
 * right) incarnation. It sends from SOCKETS ordinary UDP sockets (each a
 * peer context at the target) and learns the target's incarnation and
 * ACKs from its answers, so that many packets pass the first checks and
 * reach the deeper ones. -r also sends a quarter of them from a raw socket
 * with spoofed sources in SPOOF_NET (a /24, e.g. 10.81.0.0): new peer
 * contexts, up to the target's rate limit and cap.
 *
 * IP may be an IPv6 address (then SPOOF_NET is an IPv6 /64, e.g.
 * fd00:81::): the same over IPv6, and some spoofed packets come from
 * sources no peer can have (::, IPv4-mapped, multicast, loopback), and
 * with a wrong UDP checksum. The others come from 150 addresses of the
 * /64, or with -W from 65535 (each a name at the target: the table of
 * names is bounded).
 *
 * By default every message names a uid other than 0 and no auth key it
 * could hold, so that no message reaches an application's endpoint (a
 * live transfer beside it is undisturbed); -a sends uid 0 and auth key 0
 * too (messages then reach root's endpoints: a target with no live job).
 *
 * -x KIND (IPv4, with -i IFNAME, the interface toward IP) sends only
 * packets no peer can send, from a raw socket bound to IFNAME, each a
 * well-formed request of its own: KIND "zero", from 0.0.0.0/8 (where IPv6
 * names live) to 255.255.255.255; "lbcast", from IP's /24 to
 * 255.255.255.255; "mcast", to the all-hosts group 224.0.0.1; "bcast",
 * to the broadcast address of IP's /24. The target drops each as
 * drop_addr (test_wire_fuzz.sh counts them).
 *
 * -x noack (no -i) sends COUNT well-formed requests from one ordinary
 * socket, in order (PSNs and message ids 0, 1, ...), each refused at its
 * endpoint, and never an ACK (all but the first name the target's
 * incarnation, which its answer to the first told, as a live peer's do):
 * the target's answers cannot go once its window to us is shut, and wait
 * on its queue, up to its cap (8192). It
 * prints the socket's port: the target's `swnic peer show` names us by
 * it. -d paces as above. -x plain does the same but names no one, for a
 * target that answers nothing (a socket's port it refuses), or for one
 * that must take us for a new host: with -o 4793 (the wire's port, in a
 * namespace whose wire is not open) it forges that host's kernel.
 *
 * -x held -e PORTS (no -i) does what -x noack does, but each request is
 * a send with DELIVERY and HOLD, uid 0 and the default service's auth
 * key (1), to the endpoints of the comma-separated PORTS in turn (root's,
 * which post no receive): each is buffered as unexpected and held
 * (answered HELD), up to the target's cap of held sends (4096 a remote
 * host). Then it prints how many answers were HELD and how many not.
 *
 * -x claim (no -i) sends, from one ordinary socket, the first fragment
 * of a message that claims COUNT MiB, as a new peer's first packet (it
 * does not name the target's incarnation), and waits for the target's
 * ACK; then the same packet naming the incarnation that ACK told, and
 * waits for the next. Exit status 0 if the first was refused (its ACK
 * takes nothing: PSN 0 is still expected) and the second taken (PSN 1
 * is), else 1: a packet that does not name the target may come from any
 * host and address, and may not claim much of the target's budget.
 *
 * -x hog (no -i): from one socket, a message of COUNT MiB naming the
 * target, then a second; from another socket the first again. Exit
 * status 0 if the second was not taken (one peer's messages may hold half
 * the target's budget, no more) and the two firsts were.
 *
 * -x read (no -i) does the same with a read request of COUNT MiB, and
 * checks that no answer came to the first; before it, the same read in a
 * DATA packet (malformed: drop_bad_msg), and between the two an ACK and
 * an answer that do not name the target: a read's answer is as long as
 * it asks, a reflection a forged source would aim at its victim, and
 * ACKs and answers always name whom they answer (the target drops the
 * read, the ACK and the answer as drop_unproven).
 *
 * -x retire (no -i): from one ordinary socket, a peer in two incarnations:
 * A's first request (not naming the target, to learn its incarnation),
 * then B's first (naming it: the peer restarted), then A's second - an old
 * packet still on its way, naming the target - then B's second. Exit
 * status 0 if B's second was taken in order (the target's ACK to B says
 * PSN 2 is next): A's late packet, from a retired incarnation, was
 * dropped, and did not reset the context. Prints the socket's port and
 * B's incarnation (the target's remote_inc for us).
 *
 * -x spoof (-r SPOOF_NET, no -i): COUNT zero-length SENDs to a closed
 * port (65000), from a raw socket, from SOCKETS made-up sources in
 * SPOOF_NET (.100 up, each its own peer context), in turns, each
 * source's in order (PSNs and message ids 0, 1, ...), none naming the
 * target. Each is refused, and its answer goes nowhere and is never
 * ACKed: the target's answers to such contexts may hold its unproven
 * share of the receive budget, no more. -d paces as above.
 *
 * -x empty (no -i): COUNT zero-length datagrams from one ordinary
 * socket, which the target drops as drop_short.
 *
 * -x ping (no -i): one PING naming no one (dst_inc 0), src_inc -I INC
 * (default: drawn from the seed), -l LEN bytes long (default 16, the
 * header; the rest zeros). With -f SRC-IPV4 it goes from a raw socket, from
 * SRC and the -o port (default 4793), as that host's kernel would send it
 * (a forgery, from the address of a host whose wire is open); else from
 * an ordinary socket (bound to -o SPORT if given), which then waits 1 to
 * 2 s for an answer, an ACK: exit status 0 if one came, 3 if none. With
 * -g FILE it waits (up to 60 s) for FILE to exist before it sends. With -T
 * TYPE the packet is of that type (1 DATA, 2 READ_REQ, ...) instead, with
 * the same header and nothing else: too short a request to run.
 *
 * The seed is printed first; the same seed sends the same packets (the
 * learnt state aside). -d paces: USEC of sleep after every 32 packets.
 * Exit status 0 once all are sent; the target's counters
 * (`swnic -j peer show`) show the drops.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The wire's formats (kernel/wire.h), big endian. */
#define W_VERSION	2
enum { P_DATA = 1, P_READ_REQ, P_RESP, P_ACK, P_RESET, P_PING, P_MAX };
enum { OP_SEND = 1, OP_TSEND, OP_WRITE, OP_READ };
#define RX_WIN		1024
#define SACK_BITS	256
#define MAX_MSG		(1ULL << 30)

struct w_hdr {
	uint8_t version, type;
	uint16_t csum;		/* Internet checksum of the whole packet */
	uint32_t src_inc, dst_inc, psn;
};

struct w_msg {
	uint32_t msg_id;
	uint8_t opcode, flags, ep_type, pad;
	uint16_t src_port, dst_port;
	uint32_t auth_key, uid, frag;
	uint64_t len, offset, tag, data, raddr, rkey;
};

struct w_resp {
	uint32_t msg_id, status;
	uint64_t offset;
	uint32_t len, flags;	/* flags: HELD = 1 */
};

_Static_assert(sizeof(struct w_hdr) == 16, "hdr");
_Static_assert(sizeof(struct w_msg) == 72, "msg");
_Static_assert(sizeof(struct w_resp) == 24, "resp");

#define PKT_MAX		1472	/* a 1500-byte MTU's UDP payload */

static void usage(void);

/* xorshift64*: the whole run follows from the seed. */
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static int chance(int pct)
{
	return (int)below(100) < pct;
}

/* One source: an ordinary UDP socket, a peer context at the target. */
struct src {
	int fd;
	uint32_t inc;		/* ours */
	uint32_t their_inc;	/* the target's, learnt from its answers */
	uint32_t psn;		/* our next PSN, from its cumulative ACKs */
	uint32_t msg_id;	/* our next message */
	uint32_t their_psn;	/* its next reliable PSN (to ACK) */
	/* the message being sent in fragments, to be contradicted */
	struct w_msg last;
	int have_last;
};

static struct {
	struct sockaddr_in dst;
	struct sockaddr_in6 dst6;
	int v6;
	struct in6_addr spoof6;	/* its /64 */
	int raw;
	unsigned long raw_err;	/* failed raw sends (the first is shown) */
	uint32_t spoof_net;	/* host order, /24 */
	int authed;
	unsigned long sent, raw_sent, answers, resps;
	const char *bad_kind;	/* -x: only packets from or to bad addresses */
	int wide;		/* -W: IPv6 spoofed sources from 65535 addresses */
	uint16_t sport;		/* -o: -x noack/plain's source port */
	uint32_t ping_inc;	/* -I: -x ping's src_inc (0: drawn) */
	size_t ping_len;	/* -l: -x ping's length */
	const char *ping_src;	/* -f: -x ping forged from this address */
	const char *ping_go;	/* -g: -x ping waits for this file */
	uint8_t ping_type;	/* -T: -x ping's packet type (0: PING) */
	uint16_t eports[64];	/* -e: -x held's endpoints */
	unsigned int neports;
} g;

static uint32_t nz32(void)
{
	uint32_t v;

	do {
		v = (uint32_t)rnd();
	} while (!v);
	return v;
}

/* Learn from the target's answers to @s (non-blocking). */
static void drain(struct src *s)
{
	uint8_t buf[2048];
	struct w_hdr h;
	ssize_t n;

	while ((n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if ((size_t)n < sizeof(h))
			continue;
		memcpy(&h, buf, sizeof(h));
		if (h.version != W_VERSION || ntohl(h.dst_inc) != s->inc)
			continue;
		g.answers++;
		g.resps += h.type == P_RESP;
		s->their_inc = ntohl(h.src_inc);
		if (h.type == P_ACK)
			s->psn = ntohl(h.psn);
		else if (h.type == P_RESP || h.type == P_DATA)
			s->their_psn = ntohl(h.psn) + 1;
		else if (h.type == P_RESET)
			s->psn = 0;
	}
}

static uint32_t pick_psn(struct src *s)
{
	switch (below(12)) {
	case 0:
		return s->psn - 1;			/* received already */
	case 1:
		return s->psn + RX_WIN - 1;		/* the window's last */
	case 2:
		return s->psn + RX_WIN;			/* just past it */
	case 3:
		return s->psn + RX_WIN + below(1 << 20);
	case 4:
		return s->psn + 0x80000000U;		/* the far side */
	case 5:
		return (uint32_t)rnd();
	case 6:
		return s->psn + 1 + below(8);		/* a gap */
	default:
		return s->psn;				/* the next */
	}
}

static uint32_t pick_dst_inc(struct src *s)
{
	switch (below(10)) {
	case 0:
		return 0;				/* unknown */
	case 1:
		return nz32();				/* stale/forged */
	case 2:
		return s->their_inc ^ 1;
	default:
		return s->their_inc;
	}
}

static void hdr(struct src *s, struct w_hdr *h, uint8_t type, uint32_t psn)
{
	*h = (struct w_hdr) {
		.version = W_VERSION,
		.type = type,
		.src_inc = htonl(chance(97) ? s->inc : nz32()),
		.dst_inc = htonl(pick_dst_inc(s)),
		.psn = htonl(psn),
	};
}

static uint64_t pick_len(void)
{
	switch (below(10)) {
	case 0:
		return MAX_MSG + below(2);		/* at and past the max */
	case 1:
		return rnd();				/* huge */
	case 2:
		return 0;
	case 3:
		return 64 * 1024 + below(1 << 20);	/* a big message */
	default:
		return 1 + below(4000);			/* a few fragments */
	}
}

/* A message header: mostly plausible, refused at the endpoint (not -a). */
static void msg(struct src *s, struct w_msg *m, uint8_t type)
{
	uint32_t uid = 1 + (uint32_t)below(0xfffffffeU);
	uint32_t key = 2 + (uint32_t)below(0xfffffffdU);

	if (g.authed && chance(50)) {
		uid = 0;
		key = 0;
	}
	*m = (struct w_msg) {
		.msg_id = htonl(chance(80) ? s->msg_id : (uint32_t)rnd()),
		.opcode = type == P_READ_REQ ? OP_READ :
			  chance(90) ? 1 + below(3) : (uint8_t)rnd(),
		.flags = (uint8_t)below(4),
		.ep_type = chance(90) ? 1 + below(3) : (uint8_t)rnd(),
		.src_port = htons((uint16_t)below(64)),
		.dst_port = htons(chance(90) ? (uint16_t)below(64) :
				  (uint16_t)rnd()),
		.auth_key = htonl(chance(20) ? 0 : key),
		.uid = htonl(uid),
		/* mostly a plausible fragment size (that fits PKT_MAX) */
		.frag = htonl(chance(85) ? 256 + (uint32_t)below(1129) :
			      (uint32_t)rnd()),
		.len = htobe64(pick_len()),
		.tag = htobe64(rnd()),
		.data = htobe64(rnd()),
		.raddr = htobe64(chance(50) ? 0 : rnd()),
		.rkey = htobe64(chance(50) ? below(16) : rnd()),
	};
	if (!chance(80))
		s->msg_id++;
}

static void fill(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* The Internet checksum (RFC 1071) of @len bytes, to store as is. */
static uint16_t inet_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* Checksum a crafted packet: mostly right, sometimes off by a bit. */
static void seal(uint8_t *buf, size_t len)
{
	struct w_hdr *h = (void *)buf;

	if (len < sizeof(*h))
		return;
	h->csum = 0;
	h->csum = inet_csum(buf, len);
	if (chance(3))
		h->csum ^= htons((uint16_t)(1 + below(0xffff)));
}

/* Make one packet for source @s in @buf. Return: its length. */
static size_t craft_one(struct src *s, uint8_t *buf, int *sealed)
{
	struct w_hdr *h = (void *)buf;
	struct w_msg *m = (void *)(h + 1);
	struct w_resp *r = (void *)(h + 1);
	size_t len, room = PKT_MAX - sizeof(*h) - sizeof(*m), n;
	uint64_t mlen, off;
	int kind = (int)below(100);

	*sealed = 1;
	if (kind < 8) {				/* random bytes */
		len = below(PKT_MAX + 1);
		fill(buf, len);
		*sealed = chance(50);		/* or fail the checksum */
		return len;
	}
	if (kind < 14) {			/* bad version, type, inc */
		hdr(s, h, (uint8_t)below(P_MAX), s->psn);
		switch (below(3)) {
		case 0:
			h->version = (uint8_t)(W_VERSION + 1 + below(254));
			break;
		case 1:
			h->type = chance(50) ? 0 : P_MAX + below(250);
			break;
		default:
			h->src_inc = 0;
		}
		len = sizeof(*h) + below(200);
		fill(buf + sizeof(*h), len - sizeof(*h));
		return len;
	}
	if (kind < 22) {			/* ACK for unsent PSNs */
		hdr(s, h, P_ACK, chance(50) ? (uint32_t)rnd() :
					      s->their_psn + below(4096));
		len = sizeof(*h) + (chance(90) ? SACK_BITS / 8 :
					       below(SACK_BITS / 8));
		fill(buf + sizeof(*h), len - sizeof(*h));
		return len;
	}
	if (kind < 24) {			/* PING, maybe with junk */
		hdr(s, h, P_PING, chance(50) ? 0 : (uint32_t)rnd());
		return sizeof(*h) + (chance(50) ? 0 : below(64));
	}
	if (kind < 28) {			/* RESET */
		hdr(s, h, P_RESET, 0);
		if (chance(90))
			h->dst_inc = htonl(chance(50) ? 0 : s->their_inc ^
					   (uint32_t)(1 + below(0xffff)));
		return sizeof(*h) + below(8);
	}
	if (kind < 38) {			/* RESP for unknown messages */
		hdr(s, h, P_RESP, pick_psn(s));
		n = below(room);
		*r = (struct w_resp) {
			.msg_id = htonl((uint32_t)rnd()),
			.status = htonl(chance(50) ? 0 : (uint32_t)rnd()),
			.offset = htobe64(chance(50) ? 0 : rnd()),
			.len = htonl(chance(80) ? (uint32_t)n : (uint32_t)rnd()),
			/* mostly none; HELD (1), maybe with a status; junk */
			.flags = htonl(chance(70) ? 0 : chance(50) ? 1 :
				       (uint32_t)rnd()),
		};
		fill((uint8_t *)(r + 1), n);
		return sizeof(*h) + sizeof(*r) + n;
	}
	if (kind < 44) {			/* truncated */
		hdr(s, h, 1 + below(3), pick_psn(s));
		msg(s, m, h->type);
		return below(sizeof(*h) + sizeof(*m));
	}

	/* DATA / READ_REQ with mutated fields. */
	hdr(s, h, chance(85) ? P_DATA : P_READ_REQ, pick_psn(s));
	if (kind < 60 && s->have_last) {
		/* Another fragment of the last message, mostly consistent. */
		*m = s->last;
		mlen = be64toh(m->len);
		switch (below(8)) {
		case 0:
			m->len = htobe64(mlen + 1 + below(100));
			break;
		case 1:
			m->opcode ^= 1 + below(3);
			break;
		case 2:
			m->tag = htobe64(rnd());
			break;
		case 3:
			m->dst_port = htons((uint16_t)rnd());
			break;
		case 4:
			m->rkey = htobe64(rnd());
			break;
		case 5:
			m->frag = htonl((uint32_t)rnd());
			break;
		}
	} else {
		msg(s, m, h->type);
		s->last = *m;
		s->have_last = 1;
	}
	mlen = be64toh(m->len);
	n = mlen < room ? mlen : room;
	if (chance(20))
		n = below(room + 1);
	switch (below(8)) {
	case 0:
		off = mlen + 1 + below(1000);		/* beyond the length */
		break;
	case 1:
		off = mlen - n + 1;			/* its end past it */
		break;
	case 2:
		off = rnd();
		break;
	case 3:					/* overlapping */
		off = mlen > n ? below(mlen - n + 1) : 0;
		break;
	default: {				/* fragment-aligned */
		uint64_t fr = ntohl(m->frag);

		if (fr >= 256 && fr <= room && mlen && mlen <= MAX_MSG) {
			off = below((mlen - 1) / fr + 1) * fr;
			n = mlen - off < fr ? mlen - off : fr;
		} else {
			off = mlen > n && n ? below((mlen - n) / n + 1) * n : 0;
		}
	}
	}
	m->offset = htobe64(off);
	fill((uint8_t *)(m + 1), n);
	if (h->psn == htonl(s->psn))
		s->psn++;				/* we used the next */
	return sizeof(*h) + sizeof(*m) + n;
}

static size_t craft(struct src *s, uint8_t *buf)
{
	int sealed;
	size_t len = craft_one(s, buf, &sealed);

	if (sealed)
		seal(buf, len);
	return len;
}

/* Send @buf from a spoofed source (raw socket, our own IP/UDP headers). */
static void send_raw(const uint8_t *buf, size_t len)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct udphdr) + PKT_MAX];
	struct iphdr *ip = (void *)pkt;
	struct udphdr *udp = (void *)(ip + 1);
	size_t tot = sizeof(*ip) + sizeof(*udp) + len;

	*ip = (struct iphdr) {
		.version = 4,
		.ihl = 5,
		.tot_len = htons((uint16_t)tot),
		.ttl = 64,
		.protocol = IPPROTO_UDP,
		.saddr = htonl(g.spoof_net | (uint32_t)(100 + below(150))),
		.daddr = g.dst.sin_addr.s_addr,
	};
	*udp = (struct udphdr) {
		.source = htons((uint16_t)(1024 + below(64512))),
		.dest = g.dst.sin_port,
		.len = htons((uint16_t)(sizeof(*udp) + len)),
		.check = 0,			/* none: IPv4 allows it */
	};
	memcpy(udp + 1, buf, len);
	if (sendto(g.raw, pkt, tot, 0, (struct sockaddr *)&g.dst,
		   sizeof(g.dst)) >= 0)
		g.raw_sent++;
}

/*
 * -x: a well-formed request, a whole small message in one packet with the
 * right checksum, naming the target's incarnation if @s learnt it (else
 * as a new peer's first packet): only its addresses are wrong. Return:
 * its length.
 */
static size_t craft_request(struct src *s, uint8_t *buf)
{
	struct w_hdr *h = (void *)buf;
	struct w_msg *m = (void *)(h + 1);
	size_t n = 1 + below(256), len = sizeof(*h) + sizeof(*m) + n;

	*h = (struct w_hdr) {
		.version = W_VERSION,
		.type = P_DATA,
		.src_inc = htonl(s->inc),
		.dst_inc = htonl(s->their_inc),
		.psn = htonl(s->psn++),
	};
	msg(s, m, P_DATA);
	m->opcode = OP_SEND;
	m->ep_type = 1;
	m->frag = htonl(1024);
	m->len = htobe64(n);
	m->offset = 0;
	fill((uint8_t *)(m + 1), n);
	h->csum = inet_csum(buf, len);
	return len;
}

/*
 * -x: @buf from or to an address no peer can have (see the top), through
 * the raw socket bound to the interface toward the target.
 */
static void send_bad4(const uint8_t *buf, size_t len)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct udphdr) + PKT_MAX];
	struct iphdr *ip = (void *)pkt;
	struct udphdr *udp = (void *)(ip + 1);
	size_t tot = sizeof(*ip) + sizeof(*udp) + len;
	uint32_t net = ntohl(g.dst.sin_addr.s_addr) & 0xffffff00U;
	struct sockaddr_in to = g.dst;
	uint32_t src = net | (uint32_t)(100 + below(150)), dst;

	if (!strcmp(g.bad_kind, "zero")) {
		src = (uint32_t)(1 + below(0xfffffe));	/* 0.x.y.z, not 0 */
		dst = INADDR_BROADCAST;
	} else if (!strcmp(g.bad_kind, "lbcast")) {
		dst = INADDR_BROADCAST;
	} else if (!strcmp(g.bad_kind, "mcast")) {
		dst = INADDR_ALLHOSTS_GROUP;
	} else {
		dst = net | 0xff;
	}
	to.sin_addr.s_addr = htonl(dst);
	*ip = (struct iphdr) {
		.version = 4,
		.ihl = 5,
		.tot_len = htons((uint16_t)tot),
		.ttl = 1,
		.protocol = IPPROTO_UDP,
		.saddr = htonl(src),
		.daddr = htonl(dst),
	};
	*udp = (struct udphdr) {
		.source = htons((uint16_t)(1024 + below(64512))),
		.dest = g.dst.sin_port,
		.len = htons((uint16_t)(sizeof(*udp) + len)),
		.check = 0,			/* none: IPv4 allows it */
	};
	memcpy(udp + 1, buf, len);
	if (sendto(g.raw, pkt, tot, 0, (struct sockaddr *)&to,
		   sizeof(to)) >= 0) {
		g.raw_sent++;
	} else if (!g.raw_err++) {
		perror("wire_fuzz: raw send");
	}
}

/* The UDP checksum over IPv6 (RFC 8200 8.1) of @udp, @len bytes. */
static uint16_t udp6_csum(const struct ip6_hdr *ip, const uint8_t *udp,
			  size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i < 16; i += 2) {
		sum += (uint32_t)ip->ip6_src.s6_addr[i] << 8 |
		       ip->ip6_src.s6_addr[i + 1];
		sum += (uint32_t)ip->ip6_dst.s6_addr[i] << 8 |
		       ip->ip6_dst.s6_addr[i + 1];
	}
	sum += (uint32_t)len + IPPROTO_UDP;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)udp[i] << 8 | udp[i + 1];
	if (len & 1)
		sum += (uint32_t)udp[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	return htons((uint16_t)(sum ? sum : 0xffff));
}

/*
 * send_raw() over IPv6: a source in the spoofed /64, or now and then one
 * no peer can have; the UDP checksum right but for a few.
 */
static void send_raw6(const uint8_t *buf, size_t len)
{
	uint8_t pkt[sizeof(struct ip6_hdr) + sizeof(struct udphdr) + PKT_MAX];
	struct ip6_hdr *ip = (void *)pkt;
	struct udphdr *udp = (void *)(ip + 1);
	size_t ulen = sizeof(*udp) + len;
	struct sockaddr_in6 to;

	memset(ip, 0, sizeof(*ip));
	ip->ip6_flow = htonl(6U << 28 | (uint32_t)below(256) << 20);
	ip->ip6_plen = htons((uint16_t)ulen);
	ip->ip6_nxt = IPPROTO_UDP;
	ip->ip6_hlim = 64;
	ip->ip6_dst = g.dst6.sin6_addr;
	ip->ip6_src = g.spoof6;
	switch (below(16)) {
	case 0:		/* :: */
		memset(&ip->ip6_src, 0, sizeof(ip->ip6_src));
		break;
	case 1:		/* IPv4-mapped */
		memset(&ip->ip6_src, 0, sizeof(ip->ip6_src));
		ip->ip6_src.s6_addr[10] = 0xff;
		ip->ip6_src.s6_addr[11] = 0xff;
		ip->ip6_src.s6_addr[12] = 10;
		ip->ip6_src.s6_addr[15] = (uint8_t)(1 + below(250));
		break;
	case 2:		/* multicast */
		ip->ip6_src.s6_addr[0] = 0xff;
		ip->ip6_src.s6_addr[1] = 0x02;
		break;
	default:
		if (g.wide) {	/* -W: one of 65535 */
			uint16_t host = (uint16_t)(1 + below(65535));

			ip->ip6_src.s6_addr[14] = (uint8_t)(host >> 8);
			ip->ip6_src.s6_addr[15] = (uint8_t)host;
		} else {
			ip->ip6_src.s6_addr[14] = 0;
			ip->ip6_src.s6_addr[15] = (uint8_t)(100 + below(150));
		}
	}
	*udp = (struct udphdr) {
		.source = htons((uint16_t)(1024 + below(64512))),
		.dest = g.dst6.sin6_port,
		.len = htons((uint16_t)ulen),
	};
	memcpy(udp + 1, buf, len);
	udp->check = udp6_csum(ip, (uint8_t *)udp, ulen);
	if (chance(3))
		udp->check ^= htons(0x0101);
	/* A raw IPv6 socket's destination has no port (or its protocol). */
	to = g.dst6;
	to.sin6_port = 0;
	if (sendto(g.raw, pkt, sizeof(*ip) + ulen, 0, (struct sockaddr *)&to,
		   sizeof(to)) >= 0)
		g.raw_sent++;
	else if (!g.raw_err++)
		perror("wire_fuzz: raw IPv6 send");
}

/*
 * Wait up to 5 s for the target's first answer to @s and learn its
 * incarnation from it, nothing else (@s's PSN stays ours to keep).
 */
static int learn_inc(struct src *s)
{
	struct pollfd pf = { .fd = s->fd, .events = POLLIN };
	uint8_t buf[2048];
	struct w_hdr h;
	ssize_t n;

	while (poll(&pf, 1, 5000) == 1) {
		n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < (ssize_t)sizeof(h))
			continue;
		memcpy(&h, buf, sizeof(h));
		if (h.version == W_VERSION && ntohl(h.dst_inc) == s->inc &&
		    h.src_inc) {
			s->their_inc = ntohl(h.src_inc);
			return 0;
		}
	}
	fprintf(stderr, "wire_fuzz: no answer from the target\n");
	return 1;
}

/*
 * -x held: what the target answered in the 2 s after the last send (a
 * diagnostic: answers sent again are counted again): how many HELD, how
 * many not, and the last one's status.
 */
static void held_answers(struct src *s)
{
	struct pollfd pf = { .fd = s->fd, .events = POLLIN };
	unsigned long held = 0, other = 0;
	uint8_t buf[2048];
	uint32_t status = 0;
	struct w_resp r;
	time_t end = time(NULL) + 2;
	struct w_hdr h;
	ssize_t n;

	while (time(NULL) < end && poll(&pf, 1, 500) == 1) {
		n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < (ssize_t)(sizeof(h) + sizeof(r)))
			continue;
		memcpy(&h, buf, sizeof(h));
		if (h.type != P_RESP)
			continue;
		memcpy(&r, buf + sizeof(h), sizeof(r));
		if (ntohl(r.flags) & 1) {
			held++;
		} else {
			other++;
			status = ntohl(r.status);
		}
	}
	printf("wire_fuzz: %lu answers HELD, %lu others (last status %u)\n",
	       held, other, status);
}

/* -x noack or held, or -x plain (@learn 0): see the top. */
static int noack(unsigned long count, unsigned long delay,
		 const struct sockaddr *dst, socklen_t dst_len, int learn)
{
	struct sockaddr_in6 me;
	socklen_t me_len = sizeof(me);
	uint8_t buf[PKT_MAX];
	struct src s = { 0 };
	unsigned long i;

	s.fd = socket(dst->sa_family, SOCK_DGRAM, 0);
	memset(&me, 0, sizeof(me));
	me.sin6_family = dst->sa_family;
	me.sin6_port = htons(g.sport);	/* at sin_port too */
	if (s.fd < 0 ||
	    (g.sport && bind(s.fd, (struct sockaddr *)&me,
			     dst->sa_family == AF_INET6 ?
			     sizeof(struct sockaddr_in6) :
			     sizeof(struct sockaddr_in))) ||
	    connect(s.fd, dst, dst_len) ||
	    getsockname(s.fd, (struct sockaddr *)&me, &me_len)) {
		perror("wire_fuzz: socket");
		return 1;
	}
	s.inc = nz32();
	/* sin_port and sin6_port are at the same place */
	printf("wire_fuzz: noack from port %u\n", ntohs(me.sin6_port));
	fflush(stdout);
	for (i = 0; i < count; i++) {
		size_t len = craft_request(&s, buf);
		struct w_hdr *h = (void *)buf;
		struct w_msg *m = (void *)(h + 1);

		m->msg_id = htonl((uint32_t)i);
		if (g.neports) {	/* -x held */
			m->flags = 0x2 | 0x4;	/* DELIVERY | HOLD */
			m->uid = 0;
			/* the default service's key, root's domains' */
			m->auth_key = htonl(1);
			m->ep_type = 1;		/* RDM */
			m->dst_port = htons(g.eports[i % g.neports]);
		}
		h->csum = 0;
		h->csum = inet_csum(buf, len);
		if (send(s.fd, buf, len, 0) >= 0)
			g.sent++;
		/* The rest name the target: only such packets keep us alive */
		if (!i && learn && learn_inc(&s))
			break;
		if (delay && i % 32 == 31)
			usleep(delay);
	}
	printf("wire_fuzz: sent %lu\n", g.sent);
	if (g.neports)
		held_answers(&s);
	close(s.fd);
	return g.sent == count ? 0 : 1;
}

/* Wait up to 5 s for an ACK to @s; its cumulative PSN, or -1. */
static long claim_ack(struct src *s)
{
	struct pollfd pf = { .fd = s->fd, .events = POLLIN };
	unsigned long answers = g.answers;

	s->psn = UINT32_MAX;
	while (poll(&pf, 1, 5000) == 1) {
		drain(s);
		if (g.answers != answers && s->psn != UINT32_MAX)
			return s->psn;
	}
	return -1;
}

/*
 * -x read: before the read names the target, an ACK and an answer that
 * do not name it either (a forger's), each of their own.
 */
static int forge_answers(struct src *s)
{
	uint8_t buf[sizeof(struct w_hdr) + sizeof(struct w_resp)] = { 0 };
	struct w_hdr *h = (void *)buf;
	struct w_resp *r = (void *)(h + 1);
	uint8_t type;

	for (type = P_RESP; type <= P_ACK; type++) {
		*h = (struct w_hdr) {
			.version = W_VERSION,
			.type = type,
			.src_inc = htonl(s->inc),
		};
		*r = (struct w_resp) { 0 };
		h->csum = inet_csum(buf, sizeof(buf));
		if (send(s->fd, buf, sizeof(buf), 0) < 0) {
			perror("wire_fuzz: send");
			return 1;
		}
	}
	return 0;
}

/* -x claim and -x read (@type P_READ_REQ): see the top. */
static int claim(unsigned long mib, const struct sockaddr *dst,
		 socklen_t dst_len, uint8_t type)
{
	uint8_t buf[PKT_MAX];
	struct w_hdr *h = (void *)buf;
	struct w_msg *m = (void *)(h + 1);
	size_t n = type == P_READ_REQ ? 0 : 1024;
	size_t len = sizeof(*h) + sizeof(*m) + n;
	struct src s = { 0 };
	unsigned long resps = 0;
	long acked[2];
	int named;

	s.fd = socket(dst->sa_family, SOCK_DGRAM, 0);
	if (s.fd < 0 || connect(s.fd, dst, dst_len)) {
		perror("wire_fuzz: socket");
		return 1;
	}
	s.inc = nz32();
	msg(&s, m, type);
	m->msg_id = 0;
	m->opcode = type == P_READ_REQ ? OP_READ : OP_SEND;
	m->flags = 0;
	m->ep_type = 1;
	m->frag = htonl(1024);
	m->len = htobe64((uint64_t)mib << 20);
	m->offset = 0;
	fill((uint8_t *)(m + 1), n);
	if (type == P_READ_REQ) {
		/* The read in a DATA packet: malformed, not run either. */
		*h = (struct w_hdr) {
			.version = W_VERSION,
			.type = P_DATA,
			.src_inc = htonl(s.inc),
		};
		h->csum = inet_csum(buf, len);
		if (send(s.fd, buf, len, 0) < 0) {
			perror("wire_fuzz: send");
			return 1;
		}
	}
	for (named = 0; named < 2; named++) {
		*h = (struct w_hdr) {
			.version = W_VERSION,
			.type = type,
			.src_inc = htonl(s.inc),
			.dst_inc = htonl(named ? s.their_inc : 0),
		};
		h->csum = inet_csum(buf, len);
		if (send(s.fd, buf, len, 0) < 0) {
			perror("wire_fuzz: send");
			return 1;
		}
		acked[named] = claim_ack(&s);
		printf("wire_fuzz: %s of %lu MiB %s the target: ACK %ld\n",
		       type == P_READ_REQ ? "read" : "claim", mib,
		       named ? "naming" : "not naming", acked[named]);
		if (acked[named] < 0 || !s.their_inc)
			return 1;
		if (type == P_READ_REQ && !named) {
			/* An answer to the read would come by now. */
			usleep(500000);
			drain(&s);
			resps = g.resps;
			printf("wire_fuzz: %lu answers to it\n", resps);
			if (forge_answers(&s))
				return 1;
		}
	}
	close(s.fd);
	return acked[0] == 0 && acked[1] == 1 && !resps ? 0 : 1;
}

/*
 * The first fragment of SEND @id of @s (PSN @psn) into @buf: a message of
 * @len bytes, @payload of them here (random), to @dst_port (-1: msg()'s
 * choice), naming the target (@named) or not. Return: its length.
 */
static size_t send_frag(struct src *s, uint8_t *buf, uint32_t psn,
			uint32_t id, int named, uint64_t len, size_t payload,
			int dst_port)
{
	struct w_hdr *h = (void *)buf;
	struct w_msg *m = (void *)(h + 1);
	size_t n = sizeof(*h) + sizeof(*m) + payload;

	msg(s, m, P_DATA);
	m->msg_id = htonl(id);
	m->opcode = OP_SEND;
	m->flags = 0;
	m->ep_type = 1;
	if (dst_port >= 0)
		m->dst_port = htons((uint16_t)dst_port);
	m->frag = htonl(1024);
	m->len = htobe64(len);
	m->offset = 0;
	fill((uint8_t *)(m + 1), payload);
	*h = (struct w_hdr) {
		.version = W_VERSION,
		.type = P_DATA,
		.src_inc = htonl(s->inc),
		.dst_inc = htonl(named ? s->their_inc : 0),
		.psn = htonl(psn),
	};
	h->csum = inet_csum(buf, n);
	return n;
}

/*
 * -x hog: the first fragment of message @id of @s (PSN @psn), claiming
 * @mib MiB, naming the target or not. Return: the cumulative PSN of the
 * ACK that came within 5 s, or -1 if none did.
 */
static long hog_claim(struct src *s, unsigned long mib, uint32_t psn,
		      uint32_t id, int named)
{
	uint8_t buf[sizeof(struct w_hdr) + sizeof(struct w_msg) + 1024];
	size_t len = send_frag(s, buf, psn, id, named, (uint64_t)mib << 20,
			       1024, -1);

	if (send(s->fd, buf, len, 0) < 0) {
		perror("wire_fuzz: send");
		return -1;
	}
	return claim_ack(s);
}

/*
 * -x hog: from one socket, a message of COUNT MiB that names the target
 * (after a first try that does not, to learn its incarnation), then a
 * second of COUNT MiB; from a second socket - another peer - the same
 * first message. Exit status 0 if the first peer's first message was
 * taken (cumulative ACK 1), its second not (no ACK, or still 1: it would
 * hold more than the peer's share of the budget), and the second peer's
 * taken: one host may not hold the whole budget.
 */
static int hog(unsigned long mib, const struct sockaddr *dst,
	       socklen_t dst_len)
{
	struct src s[2] = { 0 };
	long first, second, other;
	int i;

	for (i = 0; i < 2; i++) {
		s[i].fd = socket(dst->sa_family, SOCK_DGRAM, 0);
		if (s[i].fd < 0 || connect(s[i].fd, dst, dst_len)) {
			perror("wire_fuzz: socket");
			return 1;
		}
		s[i].inc = nz32();
		/* Not naming the target: refused, its ACK names it. */
		if (hog_claim(&s[i], mib, 0, 0, 0) < 0 || !s[i].their_inc) {
			fprintf(stderr, "wire_fuzz: no ACK to peer %d\n", i);
			return 1;
		}
	}
	first = hog_claim(&s[0], mib, 0, 0, 1);
	second = hog_claim(&s[0], mib, 1, 1, 1);
	other = hog_claim(&s[1], mib, 0, 0, 1);
	printf("wire_fuzz: hog of %lu MiB: first ACK %ld, second ACK %ld, "
	       "another peer's ACK %ld\n", mib, first, second, other);
	close(s[0].fd);
	close(s[1].fd);
	return first == 1 && second != 2 && other == 1 ? 0 : 1;
}

/*
 * A zero-length SEND (message @id, PSN @psn) from @s, to a closed port,
 * naming the target (@named) or not: into @buf. Return: its length.
 */
static size_t empty_send(struct src *s, uint8_t *buf, uint32_t psn,
			 uint32_t id, int named)
{
	return send_frag(s, buf, psn, id, named, 0, 0, 65000);
}

/*
 * -x retire: send @s's request (see empty_send()); with @want, wait up
 * to 5 s for an ACK to @s of at least @want. Return: the last ACK's
 * cumulative PSN (-1: none came).
 */
static long retire_req(struct src *s, uint32_t psn, uint32_t id, int named,
		       long want)
{
	struct pollfd pf = { .fd = s->fd, .events = POLLIN };
	uint8_t buf[sizeof(struct w_hdr) + sizeof(struct w_msg)];
	size_t len = empty_send(s, buf, psn, id, named);

	drain(s);			/* what came before is not an answer */
	s->psn = UINT32_MAX;
	if (send(s->fd, buf, len, 0) < 0) {
		perror("wire_fuzz: send");
		return -1;
	}
	if (!want)
		return 0;
	while (poll(&pf, 1, 5000) == 1) {
		drain(s);
		if (s->psn != UINT32_MAX && (long)s->psn >= want)
			break;
	}
	return s->psn == UINT32_MAX ? -1 : (long)s->psn;
}

/* -x retire: see the top. */
static int retire(const struct sockaddr *dst, socklen_t dst_len)
{
	struct sockaddr_in6 me;
	socklen_t me_len = sizeof(me);
	struct src a = { 0 }, b = { 0 };
	long first, restarted, last;

	a.fd = socket(dst->sa_family, SOCK_DGRAM, 0);
	if (a.fd < 0 || connect(a.fd, dst, dst_len) ||
	    getsockname(a.fd, (struct sockaddr *)&me, &me_len)) {
		perror("wire_fuzz: socket");
		return 1;
	}
	b.fd = a.fd;
	a.inc = nz32();
	do {
		b.inc = nz32();
	} while (b.inc == a.inc);
	/* sin_port and sin6_port are at the same place */
	printf("wire_fuzz: retire from port %u, incarnation %u then %u\n",
	       ntohs(me.sin6_port), a.inc, b.inc);
	fflush(stdout);
	first = retire_req(&a, 0, 0, 0, 1);
	if (first < 0 || !a.their_inc) {
		fprintf(stderr, "wire_fuzz: no ACK to the first incarnation\n");
		return 1;
	}
	b.their_inc = a.their_inc;
	restarted = retire_req(&b, 0, 0, 1, 1);
	/* A's second, late: no answer is due (the target drops it). */
	retire_req(&a, 1, 1, 1, 0);
	usleep(500000);
	last = retire_req(&b, 1, 1, 1, 2);
	printf("wire_fuzz: retire: ACKs %ld (first), %ld (restarted), %ld "
	       "(after the old one's late packet)\n", first, restarted, last);
	close(a.fd);
	return first == 1 && restarted == 1 && last == 2 ? 0 : 1;
}

/* -x spoof: see the top. */
static int spoof_flood(unsigned long count, unsigned long sources,
		       unsigned long delay)
{
	uint8_t buf[sizeof(struct w_hdr) + sizeof(struct w_msg)];
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct udphdr) +
		    sizeof(buf)];
	struct iphdr *ip = (void *)pkt;
	struct udphdr *udp = (void *)(ip + 1);
	struct src *srcs = calloc(sources, sizeof(*srcs));
	unsigned long i;

	g.raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (!srcs || g.raw < 0 || sources > 150) {
		perror("wire_fuzz: raw socket");
		return 1;
	}
	for (i = 0; i < sources; i++)
		srcs[i].inc = nz32();
	for (i = 0; i < count; i++) {
		/* Each source's i-th: PSN and message id i (no gap). */
		uint32_t n = (uint32_t)(i / sources);
		size_t len = empty_send(&srcs[i % sources], buf, n, n, 0);

		*ip = (struct iphdr) {
			.version = 4,
			.ihl = 5,
			.tot_len = htons((uint16_t)sizeof(pkt)),
			.ttl = 64,
			.protocol = IPPROTO_UDP,
			.saddr = htonl(g.spoof_net |
				       (uint32_t)(100 + i % sources)),
			.daddr = g.dst.sin_addr.s_addr,
		};
		*udp = (struct udphdr) {
			.source = g.dst.sin_port,	/* the wire's */
			.dest = g.dst.sin_port,
			.len = htons((uint16_t)(sizeof(*udp) + len)),
		};
		memcpy(udp + 1, buf, len);
		if (sendto(g.raw, pkt, sizeof(pkt), 0,
			   (struct sockaddr *)&g.dst, sizeof(g.dst)) >= 0)
			g.raw_sent++;
		if (delay && i % 32 == 31)
			usleep(delay);
	}
	printf("wire_fuzz: spoof: sent %lu from %lu sources\n", g.raw_sent,
	       sources);
	free(srcs);
	return g.raw_sent == count ? 0 : 1;
}

/* -x empty: see the top. */
static int empty_flood(unsigned long count, const struct sockaddr *dst,
		       socklen_t dst_len)
{
	int fd = socket(dst->sa_family, SOCK_DGRAM, 0);
	unsigned long i, sent = 0;

	if (fd < 0) {
		perror("wire_fuzz: socket");
		return 1;
	}
	for (i = 0; i < count; i++)
		if (sendto(fd, "", 0, 0, dst, dst_len) == 0)
			sent++;
	printf("wire_fuzz: empty: sent %lu\n", sent);
	close(fd);
	return sent == count ? 0 : 1;
}

/* -x ping: see the top. */
static int ping(const struct sockaddr *dst, socklen_t dst_len)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct udphdr) + PKT_MAX];
	struct iphdr *ip = (void *)pkt;
	struct udphdr *udp = (void *)(ip + 1);
	uint8_t *buf = (uint8_t *)(udp + 1);
	struct w_hdr *h = (void *)buf;
	size_t len = g.ping_len, tot = sizeof(*ip) + sizeof(*udp) + len;
	struct pollfd pf = { .events = POLLIN };
	struct sockaddr_in me = { .sin_family = AF_INET };
	uint8_t ans[2048];
	ssize_t n;
	int fd;

	if (len < sizeof(*h) || len > PKT_MAX)
		usage();
	memset(pkt, 0, sizeof(pkt));
	*h = (struct w_hdr) {
		.version = W_VERSION,
		.type = g.ping_type ? g.ping_type : P_PING,
		.src_inc = htonl(g.ping_inc ? g.ping_inc : nz32()),
	};
	h->csum = inet_csum(buf, len);
	for (n = 0; g.ping_go && access(g.ping_go, F_OK) && n < 60000; n++)
		usleep(1000);
	if (g.ping_src) {
		if (g.v6 || inet_pton(AF_INET, g.ping_src, &me.sin_addr) != 1)
			usage();
		fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
		if (fd < 0) {
			perror("wire_fuzz: raw socket");
			return 1;
		}
		*ip = (struct iphdr) {
			.version = 4,
			.ihl = 5,
			.tot_len = htons((uint16_t)tot),
			.ttl = 64,
			.protocol = IPPROTO_UDP,
			.saddr = me.sin_addr.s_addr,
			.daddr = g.dst.sin_addr.s_addr,
		};
		*udp = (struct udphdr) {
			.source = htons(g.sport ? g.sport : 4793),
			.dest = g.dst.sin_port,
			.len = htons((uint16_t)(sizeof(*udp) + len)),
		};
		if (sendto(fd, pkt, tot, 0, (struct sockaddr *)&g.dst,
			   sizeof(g.dst)) < 0) {
			perror("wire_fuzz: raw send");
			return 1;
		}
		printf("wire_fuzz: ping forged from %s, src_inc %#x\n",
		       g.ping_src, ntohl(h->src_inc));
		close(fd);
		return 0;
	}
	fd = socket(dst->sa_family, SOCK_DGRAM, 0);
	me.sin_port = htons(g.sport);
	if (fd < 0 || (g.sport && !g.v6 &&
		       bind(fd, (struct sockaddr *)&me, sizeof(me))) ||
	    connect(fd, dst, dst_len) || send(fd, buf, len, 0) < 0) {
		perror("wire_fuzz: ping");
		return 1;
	}
	pf.fd = fd;
	/* 1 to 2 s in all: a target that dialled us sends requests meanwhile. */
	for (time_t end = time(NULL) + 2; time(NULL) < end &&
	     poll(&pf, 1, 1000) == 1;) {
		n = recv(fd, ans, sizeof(ans), MSG_DONTWAIT);
		/* An ACK: not the requests of a target that dialled us. */
		if (n < (ssize_t)sizeof(*h) || ans[1] != P_ACK)
			continue;
		printf("wire_fuzz: ping of %zu bytes answered (type %u, %zd bytes)\n",
		       len, ans[1], n);
		close(fd);
		return 0;
	}
	printf("wire_fuzz: ping of %zu bytes not answered\n", len);
	close(fd);
	return 3;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: wire_fuzz [-s SEED] [-n COUNT] [-p PORT] [-k SOCKETS] "
		"[-d USEC] [-r SPOOF_NET] [-W] [-a] [-x KIND -i IFNAME] "
		"[-o SPORT] [-I INC] [-l LEN] [-f SRC] [-g FILE] [-T TYPE] "
		"[-e PORTS] IP\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long count = 10000, i, sockets = 8, delay = 0;
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	uint8_t buf[PKT_MAX];
	struct in_addr spoof = { 0 };
	const char *spoof_arg = NULL, *ifname = NULL;
	struct sockaddr *dst;
	socklen_t dst_len;
	struct src *srcs;
	int port = 4793, opt;

	while ((opt = getopt(argc, argv, "s:n:p:k:d:r:ax:i:Wo:I:l:f:g:T:e:")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'k':
			sockets = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			delay = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			spoof_arg = optarg;
			break;
		case 'a':
			g.authed = 1;
			break;
		case 'x':
			g.bad_kind = optarg;
			break;
		case 'i':
			ifname = optarg;
			break;
		case 'W':
			g.wide = 1;
			break;
		case 'o':
			g.sport = (uint16_t)atoi(optarg);
			break;
		case 'I':
			g.ping_inc = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'l':
			g.ping_len = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			g.ping_src = optarg;
			break;
		case 'g':
			g.ping_go = optarg;
			break;
		case 'T':
			g.ping_type = (uint8_t)atoi(optarg);
			break;
		case 'e':
			for (char *e = strtok(optarg, ","); e &&
			     g.neports < sizeof(g.eports) / sizeof(g.eports[0]);
			     e = strtok(NULL, ","))
				g.eports[g.neports++] = (uint16_t)atoi(e);
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc || !sockets || sockets > 1000)
		usage();
	g.dst.sin_family = AF_INET;
	g.dst.sin_port = htons((uint16_t)port);
	g.dst6.sin6_family = AF_INET6;
	g.dst6.sin6_port = htons((uint16_t)port);
	dst = (struct sockaddr *)&g.dst;
	dst_len = sizeof(g.dst);
	if (inet_pton(AF_INET, argv[optind], &g.dst.sin_addr) != 1) {
		if (inet_pton(AF_INET6, argv[optind], &g.dst6.sin6_addr) != 1)
			usage();
		g.v6 = 1;
		dst = (struct sockaddr *)&g.dst6;
		dst_len = sizeof(g.dst6);
	}
	if (g.bad_kind && (!strcmp(g.bad_kind, "noack") ||
			   !strcmp(g.bad_kind, "plain"))) {
		rng = seed ? seed : 1;
		return noack(count, delay, dst, dst_len,
			     !strcmp(g.bad_kind, "noack"));
	}
	if (g.bad_kind && !strcmp(g.bad_kind, "ping")) {
		rng = seed ? seed : 1;
		if (!g.ping_len)
			g.ping_len = sizeof(struct w_hdr);
		return ping(dst, dst_len);
	}
	if (g.bad_kind && !strcmp(g.bad_kind, "held")) {
		if (!g.neports)
			usage();
		rng = seed ? seed : 1;
		return noack(count, delay, dst, dst_len, 1);
	}
	if (g.bad_kind && !strcmp(g.bad_kind, "empty"))
		return empty_flood(count, dst, dst_len);
	if (g.bad_kind && !strcmp(g.bad_kind, "claim")) {
		rng = seed ? seed : 1;
		return claim(count, dst, dst_len, P_DATA);
	}
	if (g.bad_kind && !strcmp(g.bad_kind, "hog")) {
		rng = seed ? seed : 1;
		return hog(count, dst, dst_len);
	}
	if (g.bad_kind && !strcmp(g.bad_kind, "retire")) {
		rng = seed ? seed : 1;
		return retire(dst, dst_len);
	}
	if (g.bad_kind && !strcmp(g.bad_kind, "spoof")) {
		if (g.v6 || !spoof_arg ||
		    inet_pton(AF_INET, spoof_arg, &spoof) != 1)
			usage();
		g.spoof_net = ntohl(spoof.s_addr) & 0xffffff00U;
		rng = seed ? seed : 1;
		return spoof_flood(count, sockets, delay);
	}
	if (g.bad_kind && !strcmp(g.bad_kind, "read")) {
		rng = seed ? seed : 1;
		return claim(count, dst, dst_len, P_READ_REQ);
	}
	if (g.bad_kind) {
		int on = 1;

		if (g.v6 || !ifname ||
		    (strcmp(g.bad_kind, "zero") && strcmp(g.bad_kind, "lbcast") &&
		     strcmp(g.bad_kind, "mcast") && strcmp(g.bad_kind, "bcast")))
			usage();
		g.raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
		if (g.raw < 0 ||
		    setsockopt(g.raw, SOL_SOCKET, SO_BINDTODEVICE, ifname,
			       strlen(ifname)) ||
		    setsockopt(g.raw, SOL_SOCKET, SO_BROADCAST, &on,
			       sizeof(on))) {
			perror("wire_fuzz: raw socket");
			return 1;
		}
		printf("wire_fuzz: seed %llu, %lu packets to %s:%d, %s\n",
		       (unsigned long long)seed, count, argv[optind], port,
		       g.bad_kind);
		rng = seed ? seed : 1;
		srcs = calloc(1, sizeof(*srcs));
		if (!srcs)
			return 1;
		srcs->fd = -1;
		srcs->inc = nz32();
		for (i = 0; i < count; i++)
			send_bad4(buf, craft_request(srcs, buf));
		printf("wire_fuzz: sent %lu\n", g.raw_sent);
		free(srcs);
		return g.raw_sent == count ? 0 : 1;
	}
	if (spoof_arg) {
		if (g.v6 ? inet_pton(AF_INET6, spoof_arg, &g.spoof6) != 1 :
			   inet_pton(AF_INET, spoof_arg, &spoof) != 1)
			usage();
		if (g.v6)
			spoof.s_addr = 1;	/* on */
	}
	printf("wire_fuzz: seed %llu, %lu packets to %s:%d from %lu sockets%s\n",
	       (unsigned long long)seed, count, argv[optind], port, sockets,
	       spoof.s_addr ? " and spoofed sources" : "");
	fflush(stdout);
	rng = seed ? seed : 1;

	srcs = calloc(sockets, sizeof(*srcs));
	if (!srcs)
		return 1;
	for (i = 0; i < sockets; i++) {
		srcs[i].fd = socket(g.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
		if (srcs[i].fd < 0 || connect(srcs[i].fd, dst, dst_len)) {
			perror("wire_fuzz: socket");
			return 1;
		}
		srcs[i].inc = nz32();
	}
	if (spoof.s_addr) {
		g.spoof_net = ntohl(spoof.s_addr) & 0xffffff00U;
		g.raw = socket(g.v6 ? AF_INET6 : AF_INET, SOCK_RAW,
			       IPPROTO_RAW);
		if (g.raw < 0) {
			perror("wire_fuzz: raw socket");
			return 1;
		}
	}

	for (i = 0; i < count; i++) {
		struct src *s = &srcs[below(sockets)];
		size_t len;

		drain(s);
		len = craft(s, buf);
		if (spoof.s_addr && chance(25)) {
			if (g.v6)
				send_raw6(buf, len);
			else
				send_raw(buf, len);
		} else if (send(s->fd, buf, len, 0) >= 0)
			g.sent++;
		/* A refused socket (ICMP port unreachable) is fine. */
		if (delay && i % 32 == 31)
			usleep(delay);
	}
	for (i = 0; i < sockets; i++) {
		drain(&srcs[i]);
		close(srcs[i].fd);
	}
	printf("wire_fuzz: sent %lu (%lu spoofed), %lu answers\n",
	       g.sent, g.raw_sent, g.answers);
	free(srcs);
	return 0;
}
