// SPDX-License-Identifier: GPL-2.0
/*
 * fi_soak - a long run of random operations of random sizes between two
 * libfabric RDM endpoints, every byte and every result checked: the
 * soak of the wire's benchmark (run it under loss, for as long as a user
 * would run a job).
 *
 *   server:  fi_soak [-p PROV] [-B PORT] [options]
 *   client:  fi_soak [-p PROV] [-P PORT] [-T SECONDS] [options] SERVER-IPV4
 *
 * As with fi_pingpong and fi_stream, the two exchange parameters and
 * fabric names over a TCP control socket (fi_tool.c). The server exposes
 * one registered region for remote access: WINDOW slices of MAXSIZE for
 * RMA, then WINDOW 64-bit counters for atomics; it pre-posts receives of
 * MAXSIZE, untagged and tagged (any tag), and reposts each as it
 * completes.
 *
 * The client keeps WINDOW operations in flight until SECONDS have passed,
 * each slot choosing at random (from -s SEED, so a run can be repeated):
 *
 *   send     fi_senddata: the remote CQ data is the operation's sequence
 *            number; the server checks the bytes against the pattern of
 *            that number, and that each number arrives once;
 *   tsend    the same with fi_tsenddata, the tag also the sequence number;
 *   inject   fi_injectdata of at most the inject size (no completion);
 *   write    fi_writemsg with FI_DELIVERY_COMPLETE into the slot's slice
 *            at a random offset, then
 *   read     fi_read of the same range into another buffer, which must
 *            hold what was written;
 *   atomic   fi_fetch_atomic FI_SUM FI_UINT64 of a random value on the
 *            slot's counter: the value fetched must be the sum so far.
 *
 * Sizes are random: half of them up to 256 B, a third of the rest up to
 * 64 KiB, the others up to MAXSIZE. At the end the client reads every
 * counter back, tells the server how many messages it sent, and the server
 * answers how many it received, verified and found wrong.
 *
 * The client prints one line (the server's starts "soak-server"):
 *   soak secs=T ops=N sends=.. tsends=.. injects=.. writes=.. reads=..
 *   atomics=.. bytes=B MBps=X verified=V errors=E
 * Every wait is bounded (-t SECONDS without progress, default 60): a hang
 * is an error. Exit status 0 if all was right, 1 if any data, result or
 * count was wrong, 2 on any error or timeout (a message on stderr).
 *
 * Options: -p PROV (swnic), -S MAXSIZE (1m; suffixes k, m), -W WINDOW (8),
 * -T SECONDS (60), -s SEED (1), -t TIMEOUT, -B/-P PORT (27596); -X SEQ
 * (client, a test of the checks): corrupt operation SEQ's data (a send's
 * after it is filled, a write's read-back), which must be found.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "fi_tool.h"

#define SOAK_MAGIC	0x73776e69736f616bULL	/* "swnisoak" */
#define BATCH		16

enum { OP_SEND, OP_TSEND, OP_INJECT, OP_WRITE, OP_READ, OP_ATOMIC, OP_NUM };
static const char *const op_names[OP_NUM] = {
	"sends", "tsends", "injects", "writes", "reads", "atomics",
};

/* Client -> server, first. */
struct params {
	uint64_t magic;
	uint64_t maxsize;
	uint64_t window;
};

/* Server -> client: where the region is. */
struct region {
	uint64_t addr;		/* as the client addresses it (0: offsets) */
	uint64_t key;
};

/* Server -> client, at the end. */
struct result {
	uint64_t magic;
	uint64_t msgs;
	uint64_t bytes;
	uint64_t verified;
	uint64_t errors;
};

/* A posted operation: its context, and what it is. */
struct op {
	struct fi_context2 ctx;
	size_t slot;		/* client: slot; server: receive buffer */
	int kind;		/* OP_*; server: OP_SEND or OP_TSEND */
	uint64_t seq, len, off, operand, result;
};

static const char *prov = "swnic";
static size_t maxsize = 1 << 20;
static size_t window = 8;
static double seconds = 60;
static unsigned int seed = 1;
static uint64_t corrupt_seq = UINT64_MAX;

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_av *av;
static struct fid_mr *mr;
static void *desc;
static fi_addr_t peer = FI_ADDR_UNSPEC;

static char *mem;		/* everything, registered once */
static size_t mem_len;

/* ---- the data pattern -------------------------------------------------- */

static uint8_t pattern(uint64_t seq, uint64_t j)
{
	uint64_t x = (seq + 1) * 0x9e3779b97f4a7c15ULL + (j >> 3) * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 29;
	return (uint8_t)(x >> (8 * (j & 7)));
}

static void fill(uint8_t *p, uint64_t len, uint64_t seq)
{
	uint64_t j;

	for (j = 0; j < len; j++)
		p[j] = pattern(seq, j);
}

static int verify(const uint8_t *p, uint64_t len, uint64_t seq)
{
	uint64_t j;

	for (j = 0; j < len; j++)
		if (p[j] != pattern(seq, j))
			return 0;
	return 1;
}

/* ---- fabric ------------------------------------------------------------ */

static void open_all(void)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = FI_WAIT_NONE,
		.size = 8 * window + 64,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_MAP, .count = 4 };
	long ret;

	if (!hints)
		die("fi_allocinfo failed");
	hints->fabric_attr->prov_name = strdup(prov);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret)
		fi_die("fi_getinfo", ret);
	if (info->domain_attr->cq_data_size < 8)
		die("the provider carries %zu bytes of CQ data, not 8",
		    info->domain_attr->cq_data_size);
	if (info->domain_attr->mr_key_size > 8)
		die("MR keys of %zu bytes are not handled",
		    info->domain_attr->mr_key_size);

	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)))
		fi_die("fi_fabric", ret);
	if ((ret = fi_domain(fabric, info, &domain, NULL)))
		fi_die("fi_domain", ret);
	if ((ret = fi_endpoint(domain, info, &ep, NULL)))
		fi_die("fi_endpoint", ret);
	if ((ret = fi_cq_open(domain, &cq_attr, &cq, NULL)))
		fi_die("fi_cq_open", ret);
	if ((ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)))
		fi_die("fi_ep_bind(cq)", ret);
	if ((ret = fi_av_open(domain, &av_attr, &av, NULL)))
		fi_die("fi_av_open", ret);
	if ((ret = fi_ep_bind(ep, &av->fid, 0)))
		fi_die("fi_ep_bind(av)", ret);
	if ((ret = fi_enable(ep)))
		fi_die("fi_enable", ret);
}

/* MEM: LEN bytes, registered for local and remote use. */
static void open_mem(size_t len)
{
	long ret;

	mem_len = (len + 4095) & ~(size_t)4095;
	mem = aligned_alloc(4096, mem_len);
	if (!mem)
		die("cannot allocate %zu bytes", mem_len);
	memset(mem, 0, mem_len);
	ret = fi_mr_reg(domain, mem, mem_len,
			FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL);
	if (ret)
		fi_die("fi_mr_reg", ret);
	desc = fi_mr_desc(mr);
}

static void progress(void)
{
	struct fi_cq_tagged_entry e;

	fi_cq_read(cq, &e, 0);
}

/* Up to BATCH completions; 0 if none. An error completion is fatal. */
static ssize_t cq_poll(struct fi_cq_tagged_entry *e)
{
	struct fi_cq_err_entry err = {};
	ssize_t n = fi_cq_read(cq, e, BATCH);

	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		fi_cq_readerr(cq, &err, 0);
		die("completion error %d (%s), provider error %d: %s", err.err,
		    fi_strerror(err.err), err.prov_errno,
		    fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
	}
	if (n < 0)
		fi_die("fi_cq_read", n);
	return n;
}

/* Post with RET = CALL until it is not -FI_EAGAIN (bounded). */
#define POST(what, call)						\
	do {								\
		double _end = now() + timeout_s;			\
		ssize_t _ret;						\
									\
		while ((_ret = (call)) == -FI_EAGAIN) {			\
			if (now() > _end)				\
				die("%s: no room for %d s", what,	\
				    timeout_s);				\
			progress();					\
		}							\
		if (_ret)						\
			fi_die(what, _ret);				\
	} while (0)

/* ---- server ------------------------------------------------------------ */

static int run_server(int port)
{
	struct fi_cq_tagged_entry e[BATCH];
	char name[NAME_MAX_LEN];
	size_t namelen = sizeof(name), nrx, i;
	struct params pa;
	struct region rg;
	struct result res = { .magic = SOAK_MAGIC };
	struct op *ops;
	uint64_t total = UINT64_MAX;
	double last, t0;
	ssize_t n, k;
	long ret;

	open_all();
	if ((ret = fi_getname(&ep->fid, name, &namelen)))
		fi_die("fi_getname", ret);
	oob_listen(port);
	oob_io(&pa, sizeof(pa), 0, "parameters");
	if (pa.magic != SOAK_MAGIC || !pa.maxsize || !pa.window ||
	    pa.maxsize > (64ULL << 20) || pa.window > 256)
		die("bad parameters from the client");
	maxsize = pa.maxsize;
	window = pa.window;

	/* The region (slices, then counters), then the receive buffers. */
	nrx = 2 * window;
	if (info->rx_attr->size && 2 * nrx > info->rx_attr->size)
		nrx = info->rx_attr->size / 2;
	open_mem(window * maxsize + window * 8 + 2 * nrx * maxsize);
	rg.addr = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
		  (uintptr_t)mem : 0;
	rg.key = fi_mr_key(mr);
	send_name(name, namelen);
	oob_io(&rg, sizeof(rg), 1, "region");
	namelen = recv_name(name, info->addr_format);
	if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1)
		die("fi_av_insert of the client failed");

	ops = calloc(2 * nrx, sizeof(*ops));
	if (!ops)
		die("out of memory");
	for (i = 0; i < 2 * nrx; i++) {
		char *p = mem + window * maxsize + window * 8 + i * maxsize;

		ops[i].slot = i;
		ops[i].kind = i < nrx ? OP_SEND : OP_TSEND;
		if (ops[i].kind == OP_SEND)
			POST("fi_recv", fi_recv(ep, p, maxsize, desc, peer,
						&ops[i].ctx));
		else
			POST("fi_trecv", fi_trecv(ep, p, maxsize, desc, peer,
						  0, ~0ULL, &ops[i].ctx));
	}
	i = 1;
	oob_io(&i, 1, 1, "ready");

	t0 = last = now();
	while (res.msgs < total) {
		if (total == UINT64_MAX && oob_ready()) {
			oob_io(&total, sizeof(total), 0, "count");
			if (res.msgs > total)
				die("received %llu messages, the client sent %llu",
				    (unsigned long long)res.msgs,
				    (unsigned long long)total);
			continue;
		}
		n = cq_poll(e);
		if (!n) {
			/* The client may run quietly (RMA only) for a while. */
			if (total != UINT64_MAX && now() - last > timeout_s)
				die("no message for %d s (%llu of %llu received)",
				    timeout_s, (unsigned long long)res.msgs,
				    (unsigned long long)total);
			continue;
		}
		last = now();
		for (k = 0; k < n; k++) {
			struct op *op = e[k].op_context;
			char *p;
			uint64_t seq = e[k].data;

			if (!op || op < ops || op >= ops + 2 * nrx ||
			    !(e[k].flags & FI_RECV))
				die("unexpected completion (flags %#llx)",
				    (unsigned long long)e[k].flags);
			p = mem + window * maxsize + window * 8 +
			    op->slot * maxsize;
			if (!(e[k].flags & FI_REMOTE_CQ_DATA) ||
			    !!(e[k].flags & FI_TAGGED) != (op->kind == OP_TSEND) ||
			    (op->kind == OP_TSEND && e[k].tag != seq) ||
			    e[k].len > maxsize || !verify((uint8_t *)p, e[k].len, seq) ||
			    !mark_seen(seq))
				res.errors++;
			else
				res.verified++;
			res.msgs++;
			res.bytes += e[k].len;
			if (op->kind == OP_SEND)
				POST("fi_recv", fi_recv(ep, p, maxsize, desc,
							peer, &op->ctx));
			else
				POST("fi_trecv", fi_trecv(ep, p, maxsize, desc,
							  peer, 0, ~0ULL,
							  &op->ctx));
		}
	}
	oob_io(&res, sizeof(res), 1, "result");
	oob_io(&i, 1, 0, "goodbye");
	printf("soak-server secs=%.3f msgs=%llu bytes=%llu verified=%llu errors=%llu\n",
	       last - t0, (unsigned long long)res.msgs,
	       (unsigned long long)res.bytes,
	       (unsigned long long)res.verified,
	       (unsigned long long)res.errors);
	return res.errors ? 1 : 0;
}

/* ---- client ------------------------------------------------------------ */

static struct region rg;
static uint64_t next_seq, msgs_sent, bytes, errors, counts[OP_NUM];
static uint64_t *expect;		/* each slot's counter, as it must be */

/* Slot S's send/write buffer, its read buffer, its atomic result. */
static uint8_t *slot_buf(size_t s) { return (uint8_t *)mem + 2 * s * maxsize; }
static uint8_t *slot_rbuf(size_t s) { return slot_buf(s) + maxsize; }
static uint64_t *slot_res(size_t s)
{
	return (uint64_t *)(mem + 2 * window * maxsize) + 2 * s;
}

static uint64_t rand64(void)
{
	return ((uint64_t)random() << 33) ^ ((uint64_t)random() << 2) ^
	       (uint64_t)random();
}

static uint64_t rand_size(void)
{
	long r = random() % 6;
	uint64_t max = r < 3 ? 256 : r < 4 ? 65536 : maxsize;

	if (max > maxsize)
		max = maxsize;
	return 1 + rand64() % max;
}

/*
 * Start operation KIND on OP's slot, of OP->len bytes (OP_READ: after a
 * write, of its range).
 */
static void post_op(struct op *op, int kind)
{
	size_t s = op->slot;
	uint64_t raddr = rg.addr + s * maxsize;
	struct fi_ioc ioc, res_ioc;
	struct fi_rma_ioc rioc;
	struct fi_msg_atomic amsg = {};
	struct iovec iov;
	struct fi_rma_iov riov;
	struct fi_msg_rma wmsg = {};

	op->kind = kind;
	if (kind != OP_READ)
		op->seq = next_seq++;
	switch (kind) {
	case OP_SEND:
	case OP_TSEND:
	case OP_INJECT:
		fill(slot_buf(s), op->len, op->seq);
		if (op->seq == corrupt_seq)
			slot_buf(s)[op->len / 2] ^= 0x5a;
		msgs_sent++;
		bytes += op->len;
		if (kind == OP_SEND)
			POST("fi_senddata",
			     fi_senddata(ep, slot_buf(s), op->len, desc,
					 op->seq, peer, &op->ctx));
		else if (kind == OP_TSEND)
			POST("fi_tsenddata",
			     fi_tsenddata(ep, slot_buf(s), op->len, desc,
					  op->seq, peer, op->seq,
					  &op->ctx));
		else
			POST("fi_injectdata",
			     fi_injectdata(ep, slot_buf(s), op->len,
					   op->seq, peer));
		break;
	case OP_WRITE:
		op->off = rand64() % (maxsize - op->len + 1);
		fill(slot_buf(s), op->len, op->seq);
		iov = (struct iovec){ slot_buf(s), op->len };
		riov = (struct fi_rma_iov){ raddr + op->off, op->len, rg.key };
		wmsg = (struct fi_msg_rma){
			.msg_iov = &iov, .desc = &desc, .iov_count = 1,
			.addr = peer, .rma_iov = &riov, .rma_iov_count = 1,
			.context = &op->ctx,
		};
		bytes += op->len;
		POST("fi_writemsg", fi_writemsg(ep, &wmsg, FI_COMPLETION |
						FI_DELIVERY_COMPLETE));
		break;
	case OP_READ:
		memset(slot_rbuf(s), 0, op->len);
		bytes += op->len;
		POST("fi_read", fi_read(ep, slot_rbuf(s), op->len, desc, peer,
					raddr + op->off, rg.key, &op->ctx));
		break;
	case OP_ATOMIC:
		op->operand = rand64();
		slot_res(s)[0] = op->operand;
		slot_res(s)[1] = ~0ULL;
		ioc = (struct fi_ioc){ &slot_res(s)[0], 1 };
		res_ioc = (struct fi_ioc){ &slot_res(s)[1], 1 };
		rioc = (struct fi_rma_ioc){
			rg.addr + window * maxsize + 8 * s, 1, rg.key,
		};
		amsg = (struct fi_msg_atomic){
			.msg_iov = &ioc, .desc = &desc, .iov_count = 1,
			.addr = peer, .rma_iov = &rioc, .rma_iov_count = 1,
			.datatype = FI_UINT64, .op = FI_SUM,
			.context = &op->ctx,
		};
		bytes += 8;
		POST("fi_fetch_atomicmsg",
		     fi_fetch_atomicmsg(ep, &amsg, &res_ioc, &desc, 1,
					FI_COMPLETION | FI_DELIVERY_COMPLETE));
		break;
	}
	counts[kind]++;
}

/* A completion of OP: check it; returns the next kind, or -1 (done). */
static int complete_op(struct op *op)
{
	size_t s = op->slot;

	switch (op->kind) {
	case OP_WRITE:
		return OP_READ;
	case OP_READ:
		if (op->seq == corrupt_seq)
			slot_rbuf(s)[op->len / 2] ^= 0x5a;
		if (!verify(slot_rbuf(s), op->len, op->seq)) {
			fprintf(stderr, "fi_soak client: read-back of write %llu (%llu B at %llu) differs\n",
				(unsigned long long)op->seq,
				(unsigned long long)op->len,
				(unsigned long long)op->off);
			errors++;
		}
		return -1;
	case OP_ATOMIC:
		if (slot_res(s)[1] != expect[s]) {
			fprintf(stderr, "fi_soak client: atomic %llu fetched %#llx, not %#llx\n",
				(unsigned long long)op->seq,
				(unsigned long long)slot_res(s)[1],
				(unsigned long long)expect[s]);
			errors++;
		}
		expect[s] += op->operand;
		return -1;
	}
	return -1;
}

/*
 * Start the slot's next operation, chosen at random, if there is time
 * left. Injects have no completion: the slot goes on at once. Returns
 * whether an operation is in flight on it.
 */
static int start_next(struct op *op, double t0)
{
	static const int kinds[] = {
		OP_SEND, OP_SEND, OP_TSEND, OP_TSEND, OP_INJECT,
		OP_WRITE, OP_WRITE, OP_ATOMIC,
	};
	int kind;

	while (now() - t0 < seconds) {
		kind = kinds[random() % (sizeof(kinds) / sizeof(kinds[0]))];
		op->len = rand_size();
		if (kind == OP_INJECT && op->len > info->tx_attr->inject_size)
			kind = OP_SEND;
		post_op(op, kind);
		if (kind != OP_INJECT)
			return 1;
	}
	return 0;
}

static int run_client(const char *node, int port)
{
	struct fi_cq_tagged_entry e[BATCH];
	char name[NAME_MAX_LEN];
	size_t namelen = sizeof(name), s, busy = 0;
	struct params pa = {
		.magic = SOAK_MAGIC, .maxsize = maxsize, .window = window,
	};
	struct result res;
	struct op *ops;
	uint64_t *final;
	double t0, t1, last;
	char c;
	ssize_t n, k;
	long ret;
	int ok, i;

	srandom(seed);
	open_all();
	oob_connect(node, port);
	oob_io(&pa, sizeof(pa), 1, "parameters");
	namelen = recv_name(name, info->addr_format);
	oob_io(&rg, sizeof(rg), 0, "region");
	if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1)
		die("fi_av_insert of the server failed");
	namelen = sizeof(name);
	if ((ret = fi_getname(&ep->fid, name, &namelen)))
		fi_die("fi_getname", ret);
	send_name(name, namelen);
	/* Slots' buffers, atomic operands and results, the final read. */
	open_mem(2 * window * maxsize + 16 * window + 8 * window);
	final = (uint64_t *)(mem + 2 * window * maxsize + 16 * window);
	ops = calloc(window, sizeof(*ops));
	expect = calloc(window, sizeof(*expect));
	if (!ops || !expect)
		die("out of memory");
	oob_io(&c, 1, 0, "ready");

	t0 = last = now();
	for (s = 0; s < window; s++) {
		ops[s].slot = s;
		busy += start_next(&ops[s], t0);
	}
	while (busy) {
		n = cq_poll(e);
		if (!n) {
			if (now() - last > timeout_s)
				die("no completion for %d s (%zu in flight, %llu operations)",
				    timeout_s, busy,
				    (unsigned long long)next_seq);
			continue;
		}
		last = now();
		for (k = 0; k < n; k++) {
			struct op *op = e[k].op_context;

			if (!op || op < ops || op >= ops + window ||
			    (e[k].flags & FI_RECV))
				die("unexpected completion (flags %#llx)",
				    (unsigned long long)e[k].flags);
			if (complete_op(op) == OP_READ)
				post_op(op, OP_READ);
			else if (!start_next(op, t0))
				busy--;
		}
	}
	t1 = now();

	/* Every counter, read back, must be the sum of what was added. */
	for (s = 0; s < window; s++) {
		POST("fi_read", fi_read(ep, &final[s], 8, desc, peer,
					rg.addr + window * maxsize + 8 * s,
					rg.key, &ops[0].ctx));
		last = now();
		while (!(n = cq_poll(e)))
			if (now() - last > timeout_s)
				die("the final read did not complete in %d s",
				    timeout_s);
		if (final[s] != expect[s]) {
			fprintf(stderr, "fi_soak client: counter %zu is %#llx, not %#llx\n",
				s, (unsigned long long)final[s],
				(unsigned long long)expect[s]);
			errors++;
		}
	}

	oob_io(&msgs_sent, sizeof(msgs_sent), 1, "count");
	oob_io(&res, sizeof(res), 0, "result");
	c = 1;
	oob_io(&c, 1, 1, "goodbye");
	if (res.magic != SOAK_MAGIC)
		die("bad result from the server");
	ok = !errors && !res.errors && res.msgs == msgs_sent &&
	     res.verified == msgs_sent;
	printf("soak secs=%.3f ops=%llu", t1 - t0, (unsigned long long)next_seq);
	for (i = 0; i < OP_NUM; i++)
		printf(" %s=%llu", op_names[i], (unsigned long long)counts[i]);
	printf(" bytes=%llu MBps=%.2f verified=%llu errors=%llu\n",
	       (unsigned long long)bytes, bytes / (t1 - t0) / 1e6,
	       (unsigned long long)res.verified,
	       (unsigned long long)(errors + res.errors));
	if (!ok)
		fprintf(stderr, "fi_soak client: sent %llu messages, the server got %llu, %llu verified, %llu wrong; %llu wrong here\n",
			(unsigned long long)msgs_sent,
			(unsigned long long)res.msgs,
			(unsigned long long)res.verified,
			(unsigned long long)res.errors,
			(unsigned long long)errors);
	return ok ? 0 : 1;
}

static void close_all(void)
{
	if (ep)
		fi_close(&ep->fid);
	if (mr)
		fi_close(&mr->fid);
	if (av)
		fi_close(&av->fid);
	if (cq)
		fi_close(&cq->fid);
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
		"usage: fi_soak [-p PROV] [-S MAXSIZE] [-W WINDOW] [-T SECONDS]\n"
		"               [-s SEED] [-t TIMEOUT] [-X SEQ]\n"
		"               [-B PORT (server) | -P PORT SERVER-IPV4 (client)]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c, src_port = 27596, dst_port = 27596, rc;

	tool_name = "fi_soak";
	while ((c = getopt(argc, argv, "p:S:W:T:s:t:B:P:X:h")) != -1) {
		switch (c) {
		case 'p': prov = optarg; break;
		case 'S': maxsize = parse_size(optarg); break;
		case 'W': window = strtoul(optarg, NULL, 0); break;
		case 'T': seconds = strtod(optarg, NULL); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 't': timeout_s = atoi(optarg); break;
		case 'B': src_port = atoi(optarg); break;
		case 'P': dst_port = atoi(optarg); break;
		case 'X': corrupt_seq = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!window || window > 256 || maxsize > (64ULL << 20) ||
	    timeout_s <= 0 || seconds < 0 || optind < argc - 1)
		usage();
	tool_is_server = optind == argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = tool_is_server ? run_server(src_port) :
			      run_client(argv[optind], dst_port);
	close_all();
	return rc;
}
