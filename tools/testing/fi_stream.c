// SPDX-License-Identifier: GPL-2.0
/*
 * fi_stream - streaming bandwidth over libfabric with many messages in
 * flight (fi_pingpong only measures ping-pong; Debian has no fabtests).
 *
 *   server:  fi_stream -p PROV -e rdm|msg [-B PORT] [options]
 *   client:  fi_stream -p PROV -e rdm|msg [-P PORT] [options] SERVER-IPV4
 *
 * As with fi_pingpong, the server is the one without an address, and the
 * two exchange what they need over a plain TCP socket (the control port,
 * -B on the server, -P on the client; default 27595): the client's
 * parameters, the server's fabric address (RDM: its endpoint's name, which
 * the client inserts into its AV, and the client's back; MSG: its passive
 * endpoint's name, which the client fi_connect()s to, the server
 * fi_accept()ing the request from its EQ). A socket address of INADDR_ANY
 * in a name is replaced by the control connection's peer address.
 *
 * The server pre-posts 2 x WINDOW receives (at most its rx size) and
 * reposts each as it completes; the client keeps WINDOW sends of SIZE
 * outstanding, posting the next as one completes, for ITERS messages (-I)
 * or SECONDS (-T; the count then goes to the server over the control
 * socket when the last send completed). When the server has them all it
 * sends an acknowledgement over the fabric, and the client's clock stops
 * when that arrives: the time covers delivery, not only the hand-over to
 * the provider. With -c every message carries a pattern derived from its
 * sequence number (in its first 8 bytes, if it has them), which the server
 * verifies, counting each sequence number once; the acknowledgement says
 * how many were verified and how many were wrong.
 *
 * The client prints one line (the server one starting "stream-server"):
 *   stream size=S window=W msgs=N bytes=B secs=T MBps=X verified=V errors=E
 * MBps is bytes / secs / 10^6 (as fi_pingpong's MB/sec); verified is 0
 * without -c. Every wait is bounded (-t SECONDS without progress, default
 * 60): exit status 0 on success, 1 if the data or the count was wrong, 2
 * on any error or timeout, with a message on stderr.
 *
 * Options: -p PROV (default swnic), -e rdm|msg (rdm), -S SIZE (1048576,
 * suffixes k, m), -W WINDOW (16), -I ITERS (1000) or -T SECONDS, -c,
 * -t TIMEOUT, -B/-P PORT; -X SEQ (client, a test of -c): flip a byte of
 * message SEQ before it is sent, which the server must count as wrong.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "fi_tool.h"

#define STREAM_MAGIC	0x73776e6973747231ULL	/* "swnistr1" */
#define ACK_LEN		64
#define BATCH		16

/* Client -> server over the control socket, first. */
struct params {
	uint64_t magic;
	uint64_t size;
	uint64_t window;
	uint64_t iters;		/* 0: -T, the count follows at the end */
	uint64_t check;
};

/* Server -> client over the fabric, at the end. */
struct ack {
	uint64_t magic;
	uint64_t msgs;
	uint64_t bytes;
	uint64_t verified;
	uint64_t errors;
};

/* One posted operation: its context, and the buffer slot it uses. */
struct op {
	struct fi_context2 ctx;
	size_t slot;
	int is_ack;
};

static const char *prov = "swnic";
static enum fi_ep_type ep_type = FI_EP_RDM;
static size_t size = 1048576;
static size_t window = 16;
static uint64_t iters = 1000;
static double seconds;
static int check;
static uint64_t corrupt_seq = UINT64_MAX;

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_ep *ep;
static struct fid_pep *pep;
static struct fid_eq *eq;
static struct fid_cq *cq;
static struct fid_av *av;
static struct fid_mr *mr;
static void *desc;
static fi_addr_t peer = FI_ADDR_UNSPEC;

static char *buf;		/* slots of SIZE, then the ack buffer */
static size_t nslots;

static void progress(void);

/* ---- fabric ------------------------------------------------------------ */

static struct fi_info *hints_new(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		die("fi_allocinfo failed");
	hints->fabric_attr->prov_name = strdup(prov);
	hints->ep_attr->type = ep_type;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	return hints;
}

static void get_info(struct fi_info *hints)
{
	long ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);

	if (ret)
		fi_die("fi_getinfo", ret);
	fi_freeinfo(hints);
}

static void open_eq(void)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_NONE };
	long ret = fi_eq_open(fabric, &attr, &eq, NULL);

	if (ret)
		fi_die("fi_eq_open", ret);
}

/* The endpoint on the domain of INFO, with its CQ (and AV for RDM). */
static void open_ep(void)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_NONE,
		.size = 4 * window + 64,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_MAP, .count = 4 };
	long ret;

	if ((ret = fi_domain(fabric, info, &domain, NULL)))
		fi_die("fi_domain", ret);
	if ((ret = fi_endpoint(domain, info, &ep, NULL)))
		fi_die("fi_endpoint", ret);
	if ((ret = fi_cq_open(domain, &cq_attr, &cq, NULL)))
		fi_die("fi_cq_open", ret);
	if ((ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)))
		fi_die("fi_ep_bind(cq)", ret);
	if (ep_type == FI_EP_RDM) {
		if ((ret = fi_av_open(domain, &av_attr, &av, NULL)))
			fi_die("fi_av_open", ret);
		if ((ret = fi_ep_bind(ep, &av->fid, 0)))
			fi_die("fi_ep_bind(av)", ret);
	} else {
		if ((ret = fi_ep_bind(ep, &eq->fid, 0)))
			fi_die("fi_ep_bind(eq)", ret);
	}
	if ((ret = fi_enable(ep)))
		fi_die("fi_enable", ret);
}

/* The buffer: NSLOTS slots of SIZE, then the ack's; registered if asked. */
static void open_buf(size_t slots)
{
	size_t len = slots * size + ACK_LEN;
	long ret;

	nslots = slots;
	len = (len + 4095) & ~(size_t)4095;
	buf = aligned_alloc(4096, len);
	if (!buf)
		die("cannot allocate %zu bytes", len);
	memset(buf, 0, len);
	if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
		ret = fi_mr_reg(domain, buf, len, FI_SEND | FI_RECV, 0, 0, 0,
				&mr, NULL);
		if (ret)
			fi_die("fi_mr_reg", ret);
		desc = fi_mr_desc(mr);
	}
}

static char *slot_buf(size_t slot)
{
	return buf + slot * size;
}

static char *ack_buf(void)
{
	return buf + nslots * size;
}

/* Wait for one EQ event of type WANT; returns its fi_info for CONNREQ. */
static struct fi_info *eq_wait(uint32_t want, const char *what)
{
	union {
		struct fi_eq_cm_entry cm;
		char raw[sizeof(struct fi_eq_cm_entry) + 256];
	} e;
	struct fi_eq_err_entry err = {};
	double end = now() + timeout_s;
	uint32_t event;
	ssize_t n;

	while (now() < end) {
		n = fi_eq_read(eq, &event, &e, sizeof(e), 0);
		if (n == -FI_EAGAIN) {
			/* Connection progress for providers that need it. */
			if (cq)
				progress();
			usleep(100);
			continue;
		}
		if (n == -FI_EAVAIL) {
			fi_eq_readerr(eq, &err, 0);
			die("%s: EQ error %d (%s)", what, err.err,
			    fi_strerror(err.err));
		}
		if (n < 0)
			fi_die("fi_eq_read", n);
		if (event != want)
			die("%s: unexpected EQ event %u", what, event);
		return e.cm.info;
	}
	die("%s: timed out after %d s", what, timeout_s);
	return NULL;
}

/* ---- the data pattern -------------------------------------------------- */

static uint64_t word(uint64_t seq, size_t j)
{
	uint64_t x = (seq + 1) * 0x9e3779b97f4a7c15ULL + j * 0xbf58476d1ce4e5b9ULL;

	return x ^ (x >> 29);
}

static void fill(char *p, uint64_t seq)
{
	size_t j, words = size / 8;

	if (words) {
		memcpy(p, &seq, 8);
		for (j = 1; j < words; j++) {
			uint64_t w = word(seq, j);

			memcpy(p + 8 * j, &w, 8);
		}
	}
	for (j = words * 8; j < size; j++)
		p[j] = (char)(seq * 7 + j);
}

/*
 * Verify P; its sequence number is in it (SIZE >= 8), else the one
 * expected. Returns the sequence number, or UINT64_MAX if the data is
 * wrong.
 */
static uint64_t verify(const char *p, uint64_t expect)
{
	size_t j, words = size / 8;
	uint64_t seq = expect;

	if (words) {
		memcpy(&seq, p, 8);
		for (j = 1; j < words; j++) {
			uint64_t w;

			memcpy(&w, p + 8 * j, 8);
			if (w != word(seq, j))
				return UINT64_MAX;
		}
	}
	for (j = words * 8; j < size; j++)
		if (p[j] != (char)(seq * 7 + j))
			return UINT64_MAX;
	return seq;
}

/* ---- completions ------------------------------------------------------- */

/* Drive progress without taking a completion (count 0). */
static void progress(void)
{
	struct fi_cq_msg_entry e;

	fi_cq_read(cq, &e, 0);
}

/*
 * Read up to BATCH completions into E; 0 if there were none. An error
 * completion is fatal (a stream has no expected errors).
 */
static ssize_t cq_poll(struct fi_cq_msg_entry *e)
{
	struct fi_cq_err_entry err = {};
	ssize_t n = fi_cq_read(cq, e, BATCH);

	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		fi_cq_readerr(cq, &err, 0);
		die("completion error %d (%s), provider error %d", err.err,
		    fi_strerror(err.err), err.prov_errno);
	}
	if (n < 0)
		fi_die("fi_cq_read", n);
	return n;
}

static void post_recv(struct op *op, char *p, size_t len)
{
	double end = now() + timeout_s;
	ssize_t ret;

	while ((ret = fi_recv(ep, p, len, desc, peer, &op->ctx)) == -FI_EAGAIN) {
		if (now() > end)
			die("fi_recv: no room for %d s", timeout_s);
		progress();
	}
	if (ret)
		fi_die("fi_recv", ret);
}

/* ---- server ------------------------------------------------------------ */

static int run_server(int port)
{
	struct fi_cq_msg_entry e[BATCH];
	char name[NAME_MAX_LEN];
	size_t namelen = sizeof(name), rxdepth, i;
	struct params pa;
	struct ack ack = { .magic = STREAM_MAGIC };
	struct op *ops, ack_op = { .is_ack = 1 };
	uint64_t total, posted = 0, got = 0, count;
	double last, t0 = 0, t1;
	int acked = 0;
	char bye;
	ssize_t n, k;
	long ret;

	get_info(hints_new());
	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)))
		fi_die("fi_fabric", ret);
	if (ep_type == FI_EP_MSG) {
		open_eq();
		if ((ret = fi_passive_ep(fabric, info, &pep, NULL)))
			fi_die("fi_passive_ep", ret);
		if ((ret = fi_pep_bind(pep, &eq->fid, 0)))
			fi_die("fi_pep_bind", ret);
		if ((ret = fi_listen(pep)))
			fi_die("fi_listen", ret);
		if ((ret = fi_getname(&pep->fid, name, &namelen)))
			fi_die("fi_getname", ret);
	} else {
		open_ep();
		if ((ret = fi_getname(&ep->fid, name, &namelen)))
			fi_die("fi_getname", ret);
	}

	oob_listen(port);
	oob_io(&pa, sizeof(pa), 0, "parameters");
	if (pa.magic != STREAM_MAGIC || !pa.size || !pa.window ||
	    pa.size > (1ULL << 32) || pa.window > 65536)
		die("bad parameters from the client");
	size = pa.size;
	window = pa.window;
	check = !!pa.check;
	total = pa.iters;
	send_name(name, namelen);

	if (ep_type == FI_EP_MSG) {
		struct fi_info *req = eq_wait(FI_CONNREQ, "connection request");

		fi_freeinfo(info);
		info = req;
		open_ep();
	} else {
		namelen = recv_name(name, info->addr_format);
		if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1)
			die("fi_av_insert of the client failed");
	}

	/*
	 * The client's hello (into the ack buffer): connections the provider
	 * makes on the first message are made before the clock starts.
	 */
	open_buf(check ? 2 * window : 1);
	post_recv(&ack_op, ack_buf(), ACK_LEN);
	if (ep_type == FI_EP_MSG) {
		if ((ret = fi_accept(ep, NULL, 0)))
			fi_die("fi_accept", ret);
		eq_wait(FI_CONNECTED, "connection");
	}
	last = now();
	while (!(n = cq_poll(e)))
		if (now() - last > timeout_s)
			die("no hello from the client in %d s", timeout_s);
	if (n != 1 || e[0].op_context != &ack_op)
		die("unexpected completion instead of the hello");

	rxdepth = 2 * window;
	if (info->rx_attr->size && rxdepth > info->rx_attr->size)
		rxdepth = info->rx_attr->size;
	ops = calloc(rxdepth, sizeof(*ops));
	if (!ops)
		die("out of memory");
	for (i = 0; i < rxdepth && (!total || posted < total); i++, posted++) {
		ops[i].slot = check ? i : 0;
		post_recv(&ops[i], slot_buf(ops[i].slot), size);
	}

	bye = 1;
	oob_io(&bye, 1, 1, "ready");

	last = now();
	while (!total || got < total) {
		if (!total && oob_ready()) {
			oob_io(&count, sizeof(count), 0, "count");
			if (!count)
				die("the client sent nothing");
			total = count;
			if (got > total)
				die("received %llu messages, the client sent %llu",
				    (unsigned long long)got,
				    (unsigned long long)total);
			continue;
		}
		n = cq_poll(e);
		if (!n) {
			if (now() - last > timeout_s)
				die("no message for %d s (%llu of %llu received)",
				    timeout_s, (unsigned long long)got,
				    (unsigned long long)total);
			continue;
		}
		last = now();
		for (k = 0; k < n; k++) {
			struct op *op = e[k].op_context;

			if (!(e[k].flags & FI_RECV) || !op || op->is_ack)
				die("unexpected completion (flags %#llx)",
				    (unsigned long long)e[k].flags);
			if (!got)
				t0 = last;
			if (e[k].len != size) {
				ack.errors++;
			} else if (check) {
				uint64_t seq = verify(slot_buf(op->slot), got);

				if (seq == UINT64_MAX || (total && seq >= total) ||
				    !mark_seen(seq))
					ack.errors++;
				else
					ack.verified++;
			}
			got++;
			ack.bytes += e[k].len;
			if (!total || posted < total) {
				post_recv(op, slot_buf(op->slot), size);
				posted++;
			}
		}
	}
	t1 = now();
	ack.msgs = got;

	memcpy(ack_buf(), &ack, sizeof(ack));
	for (;;) {
		ret = fi_send(ep, ack_buf(), sizeof(ack), desc, peer,
			      &ack_op.ctx);
		if (ret != -FI_EAGAIN)
			break;
		if (now() - t1 > timeout_s)
			die("fi_send(ack): no room for %d s", timeout_s);
		progress();
	}
	if (ret)
		fi_die("fi_send(ack)", ret);
	last = now();
	while (!acked) {
		n = cq_poll(e);
		for (k = 0; k < n; k++)
			if (e[k].op_context == &ack_op)
				acked = 1;
		if (!n && now() - last > timeout_s)
			die("the ack's send did not complete in %d s", timeout_s);
	}
	/* The client's goodbye: it has the ack, the endpoint may go. */
	oob_io(&bye, 1, 0, "goodbye");

	printf("stream-server size=%zu window=%zu msgs=%llu bytes=%llu secs=%.6f verified=%llu errors=%llu\n",
	       size, window, (unsigned long long)ack.msgs,
	       (unsigned long long)ack.bytes, t1 - t0,
	       (unsigned long long)ack.verified,
	       (unsigned long long)ack.errors);
	return ack.errors ? 1 : 0;
}

/* ---- client ------------------------------------------------------------ */

static int run_client(const char *node, int port)
{
	struct fi_cq_msg_entry e[BATCH];
	char name[NAME_MAX_LEN];
	size_t namelen = sizeof(name), i;
	struct params pa = {
		.magic = STREAM_MAGIC, .size = size, .window = window,
		.iters = seconds > 0 ? 0 : iters, .check = check,
	};
	struct ack ack;
	struct op *ops, ack_op = { .is_ack = 1 }, hello_op = { .is_ack = 1 };
	uint64_t posted = 0, done = 0, total = pa.iters, *free_slots;
	size_t nfree;
	double t0, t1 = 0, last;
	int got_ack = 0, ok;
	char ready;
	ssize_t n, k;
	long ret;

	get_info(hints_new());
	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)))
		fi_die("fi_fabric", ret);
	oob_connect(node, port);
	oob_io(&pa, sizeof(pa), 1, "parameters");
	namelen = recv_name(name, info->addr_format);

	if (ep_type == FI_EP_MSG) {
		struct fi_info *hints = hints_new();

		/* Connect to the server's passive endpoint. */
		hints->addr_format = info->addr_format;
		hints->dest_addr = malloc(namelen);
		if (!hints->dest_addr)
			die("out of memory");
		memcpy(hints->dest_addr, name, namelen);
		hints->dest_addrlen = namelen;
		fi_freeinfo(info);
		get_info(hints);
		open_eq();
		open_ep();
	} else {
		open_ep();
		if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1)
			die("fi_av_insert of the server failed");
		namelen = sizeof(name);
		if ((ret = fi_getname(&ep->fid, name, &namelen)))
			fi_die("fi_getname", ret);
		send_name(name, namelen);
	}

	open_buf(check ? window : 1);
	post_recv(&ack_op, ack_buf(), ACK_LEN);
	if (ep_type == FI_EP_MSG) {
		if ((ret = fi_connect(ep, info->dest_addr, NULL, 0)))
			fi_die("fi_connect", ret);
		eq_wait(FI_CONNECTED, "connection");
	}
	/* The hello (see run_server), from the first slot. */
	last = now();
	while ((ret = fi_send(ep, slot_buf(0), 8 < size ? 8 : size, desc,
			      peer, &hello_op.ctx)) == -FI_EAGAIN) {
		if (now() - last > timeout_s)
			die("fi_send(hello): no room for %d s", timeout_s);
		progress();
	}
	if (ret)
		fi_die("fi_send(hello)", ret);
	last = now();
	while (!(n = cq_poll(e)))
		if (now() - last > timeout_s)
			die("the hello's send did not complete in %d s",
			    timeout_s);
	if (n != 1 || e[0].op_context != &hello_op)
		die("unexpected completion instead of the hello's");
	oob_io(&ready, 1, 0, "ready");

	ops = calloc(window, sizeof(*ops));
	free_slots = calloc(window, sizeof(*free_slots));
	if (!ops || !free_slots)
		die("out of memory");
	for (i = 0; i < window; i++) {
		ops[i].slot = check ? i : 0;
		free_slots[i] = i;
	}
	nfree = window;

	t0 = last = now();
	for (;;) {
		/* Keep WINDOW sends in flight. */
		while (nfree && (total ? posted < total :
				 now() - t0 < seconds)) {
			struct op *op = &ops[free_slots[nfree - 1]];

			if (check)
				fill(slot_buf(op->slot), posted);
			if (corrupt_seq == posted)
				slot_buf(op->slot)[size / 2] ^= 0x5a;
			ret = fi_send(ep, slot_buf(op->slot), size, desc, peer,
				      &op->ctx);
			if (ret == -FI_EAGAIN)
				break;
			if (ret)
				fi_die("fi_send", ret);
			nfree--;
			posted++;
		}
		if (!total && nfree == window && now() - t0 >= seconds) {
			/* -T: all sent; the server learns how many. */
			total = posted;
			oob_io(&total, sizeof(total), 1, "count");
		}
		if (total && done == total && got_ack)
			break;
		n = cq_poll(e);
		if (!n) {
			if (now() - last > timeout_s)
				die("no completion for %d s (%llu sent, %llu completed%s)",
				    timeout_s, (unsigned long long)posted,
				    (unsigned long long)done,
				    got_ack ? ", acked" : "");
			continue;
		}
		last = now();
		for (k = 0; k < n; k++) {
			struct op *op = e[k].op_context;

			if (op == &ack_op) {
				if (!(e[k].flags & FI_RECV))
					die("ack: unexpected flags %#llx",
					    (unsigned long long)e[k].flags);
				got_ack = 1;
				t1 = last;
				continue;
			}
			if (!op || op < ops || op >= ops + window ||
			    !(e[k].flags & FI_SEND))
				die("unexpected completion (flags %#llx)",
				    (unsigned long long)e[k].flags);
			free_slots[nfree++] = op - ops;
			done++;
		}
	}
	memcpy(&ack, ack_buf(), sizeof(ack));
	ready = 1;
	oob_io(&ready, 1, 1, "goodbye");
	if (ack.magic != STREAM_MAGIC)
		die("bad acknowledgement");

	ok = ack.msgs == total && ack.bytes == total * size && !ack.errors &&
	     (!check || ack.verified == total);
	printf("stream size=%zu window=%zu msgs=%llu bytes=%llu secs=%.6f MBps=%.2f verified=%llu errors=%llu\n",
	       size, window, (unsigned long long)ack.msgs,
	       (unsigned long long)ack.bytes, t1 - t0,
	       ack.bytes / (t1 - t0) / 1e6,
	       (unsigned long long)ack.verified,
	       (unsigned long long)ack.errors);
	if (!ok)
		fprintf(stderr, "fi_stream client: sent %llu messages, the server got %llu (%llu bytes), %llu verified, %llu wrong\n",
			(unsigned long long)total,
			(unsigned long long)ack.msgs,
			(unsigned long long)ack.bytes,
			(unsigned long long)ack.verified,
			(unsigned long long)ack.errors);
	return ok ? 0 : 1;
}

static void close_all(void)
{
	if (ep)
		fi_close(&ep->fid);
	if (pep)
		fi_close(&pep->fid);
	if (mr)
		fi_close(&mr->fid);
	if (av)
		fi_close(&av->fid);
	if (cq)
		fi_close(&cq->fid);
	if (eq)
		fi_close(&eq->fid);
	if (domain)
		fi_close(&domain->fid);
	if (fabric)
		fi_close(&fabric->fid);
	if (info)
		fi_freeinfo(info);
	oob_close();
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fi_stream [-p PROV] [-e rdm|msg] [-S SIZE] [-W WINDOW]\n"
		"                 [-I ITERS | -T SECONDS] [-c [-X SEQ]] [-t TIMEOUT]\n"
		"                 [-B PORT (server) | -P PORT SERVER-IPV4 (client)]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c, src_port = 27595, dst_port = 27595, rc;

	tool_name = "fi_stream";
	while ((c = getopt(argc, argv, "p:e:S:W:I:T:B:P:ct:X:h")) != -1) {
		switch (c) {
		case 'p': prov = optarg; break;
		case 'e':
			if (!strcmp(optarg, "rdm"))
				ep_type = FI_EP_RDM;
			else if (!strcmp(optarg, "msg"))
				ep_type = FI_EP_MSG;
			else
				usage();
			break;
		case 'S': size = parse_size(optarg); break;
		case 'W': window = strtoul(optarg, NULL, 0); break;
		case 'I': iters = strtoull(optarg, NULL, 0); break;
		case 'T': seconds = strtod(optarg, NULL); break;
		case 'B': src_port = atoi(optarg); break;
		case 'P': dst_port = atoi(optarg); break;
		case 'c': check = 1; break;
		case 't': timeout_s = atoi(optarg); break;
		case 'X': corrupt_seq = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!window || window > 65536 || !iters || timeout_s <= 0 ||
	    optind < argc - 1 || size > (1ULL << 32))
		usage();
	tool_is_server = optind == argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = tool_is_server ? run_server(src_port) : run_client(argv[optind], dst_port);
	close_all();
	return rc;
}
