// SPDX-License-Identifier: GPL-2.0
/*
 * wire_rma - RMA between two hosts (test_wire.sh runs it in two network
 * namespaces). The target (-s) opens an RDM endpoint with FI_RMA_EVENT,
 * registers a 1 MiB buffer for remote read and write and another for
 * remote read only, binds a remote-write counter, and sends its address
 * and the MRs' keys and addresses over a TCP socket (port 27990). The
 * initiator (given the target's IPv4 address) then, checking each result:
 *   1. writes 1 MiB of a pattern, with remote CQ data;
 *   2. reads it back and compares;
 *   3. reads 4 KiB from the read-only MR;
 *   4. writes to the read-only MR: must fail (FI_EACCES);
 *   5. writes with a key that does not exist: must fail (FI_ENOKEY...);
 *   6. writes past the MR's end, reads past it and across it (its first
 *      packets within the MR): must fail;
 *   7. posts a 1 MiB write and, without waiting, a read of it with
 *      FI_FENCE: the read starts only once the write completed (its answer
 *      came back), so the write completes first and the read sees its data;
 *   8. writes from three local iovs and reads back into three others
 *      (gathered and scattered by the provider, iov_limit);
 *   9. a triggered write (FI_TRIGGER, fi_trigger(3)), if the provider
 *      offers it: held by the initiator's kernel until a local counter
 *      reaches its threshold, then sent over the wire like any write;
 *  10. if the target's mr_iov_limit is 3 or more: a write and reads across
 *      the three ranges of a multi-range MR (fi_mr_regv), out of address
 *      order, and a write past its end, which must fail;
 * then tells the target it is done. With -l the initiator reads again and
 * again until a read fails (test_wire.sh kills the target meanwhile); with
 * -c it closes its endpoint with a read outstanding (run_close()). The
 * target checks that it got the remote CQ data completion and that its
 * remote-write counter is 3, or 4 with the triggered write (the failed
 * writes counted nothing), its remote-read counter 4, or 6 with the
 * multi-range MR (the reads past and across the MR's end counted
 * nothing), that the counter bound to its read-write MR (fi_mr_bind,
 * FI_MR_RMA_EVENT) counted each write and the 3 reads once, and that its
 * memory holds the last pattern.
 * No target process code runs for the RMA itself: the target only waits.
 * With -t DSCP first, the endpoint's traffic class is that DSCP
 * (FI_TC_DSCP), which its wire packets carry (test_wire.sh checks).
 * Exit status 0 when every check passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_trigger.h>

#include "wire_util.h"

#define OOB_PORT	27990
#define LEN		(1 << 20)
#define RDATA		0x5eed1234ULL

struct target_info {
	char addr[64];
	size_t addrlen;
	uint64_t key_rw, addr_rw, key_ro, addr_ro;
	uint64_t key_mv, addr_mv;	/* step 10; key_mv 0: none */
};

/* Step 10: the target's multi-range MR, its ranges in a 64 KiB buffer. */
#define MV_BUF		65536
#define MV_TOTAL	35000
static const size_t mv_off[3] = { 40000, 100, 60000 };
static const size_t mv_len[3] = { 10000, 20000, 5000 };

/* Byte @i of the multi-range MR, in @mv. */
static char *mv_at(char *mv, size_t i)
{
	for (int k = 0; k < 3; k++) {
		if (i < mv_len[k])
			return mv + mv_off[k] + i;
		i -= mv_len[k];
	}
	return NULL;
}

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_ep *ep;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_cntr *wcntr;
static struct fid_cntr *rcntr;	/* the target endpoint's remote reads */
static struct fid_cntr *mcntr;	/* the read-write MR's (FI_MR_RMA_EVENT) */
static struct fi_info *info;
static int triggered;		/* FI_TRIGGER offered (both sides alike) */

static uint32_t tclass;		/* -t: the endpoints' traffic class */

static void setup(const char *node, int target)
{
	struct fi_info *hints = wire_hints(FI_RMA | FI_RMA_EVENT | FI_FENCE);
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	int ret;

	hints->mode = FI_CONTEXT;
	hints->tx_attr->tclass = tclass;
	hints->caps |= FI_TRIGGER;
	ret = fi_getinfo(FI_VERSION(1, 17), node, NULL, 0, hints, &info);
	triggered = !ret;
	if (ret == -FI_ENODATA) {
		hints->caps &= ~FI_TRIGGER;
		ret = fi_getinfo(FI_VERSION(1, 17), node, NULL, 0, hints,
				 &info);
	}
	if (ret)
		die("fi_getinfo", ret);
	fi_freeinfo(hints);
	wire_domain_open(info, &fabric, &domain);
	ret = wire_ep_open(domain, info, FI_CQ_FORMAT_DATA, &ep, &cq, &av);
	if (ret)
		die("setup", ret);
	if (target) {
		if ((ret = fi_cntr_open(domain, &cntr_attr, &wcntr, NULL)) ||
		    (ret = fi_ep_bind(ep, &wcntr->fid, FI_REMOTE_WRITE)) ||
		    (ret = fi_cntr_open(domain, &cntr_attr, &rcntr, NULL)) ||
		    (ret = fi_ep_bind(ep, &rcntr->fid, FI_REMOTE_READ)) ||
		    (ret = fi_cntr_open(domain, &cntr_attr, &mcntr, NULL)))
			die("counter", ret);
	}
	ret = fi_enable(ep);
	if (ret)
		die("fi_enable", ret);
}

/* Wait for one completion; return 0 or the error's FI_E* (negative). */
static int wait_comp(struct fi_cq_data_entry *out)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err = {};
	time_t end = time(NULL) + 60;
	ssize_t n;

	while (time(NULL) < end) {
		n = fi_cq_read(cq, &e, 1);
		if (n == 1) {
			if (out)
				*out = e;
			return 0;
		}
		if (n == -FI_EAVAIL) {
			fi_cq_readerr(cq, &err, 0);
			return -err.err;
		}
		if (n != -FI_EAGAIN)
			return (int)n;
		usleep(100);
	}
	return -FI_ETIMEDOUT;
}

static int run_target(void)
{
	struct fid_mr *mr_rw, *mr_ro, *mr_mv = NULL;
	struct target_info ti = {};
	struct fi_cq_data_entry e;
	char *rw = calloc(1, LEN), *ro = malloc(LEN), done;
	char *mv = calloc(1, MV_BUF);
	struct iovec mv_iov[3];
	int s, ret, i, virt, k;

	setup(NULL, 1);
	for (i = 0; i < LEN; i++)
		ro[i] = (char)(i * 7 + 3);
	if ((ret = fi_mr_reg(domain, rw, LEN, FI_REMOTE_READ | FI_REMOTE_WRITE,
			     0, 0, 0, &mr_rw, NULL)) ||
	    (ret = fi_mr_reg(domain, ro, LEN, FI_REMOTE_READ, 0, 0, 0, &mr_ro,
			     NULL)) ||
	    (ret = fi_mr_bind(mr_rw, &mcntr->fid,
			      FI_REMOTE_READ | FI_REMOTE_WRITE)) ||
	    (ret = fi_mr_enable(mr_rw)))
		die("fi_mr_reg", ret);
	ti.addrlen = sizeof(ti.addr);
	ret = fi_getname(&ep->fid, ti.addr, &ti.addrlen);
	if (ret)
		die("fi_getname", ret);
	/* Without FI_MR_VIRT_ADDR, remote addresses are offsets in the MR. */
	virt = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
	ti.key_rw = fi_mr_key(mr_rw);
	ti.addr_rw = virt ? (uintptr_t)rw : 0;
	ti.key_ro = fi_mr_key(mr_ro);
	ti.addr_ro = virt ? (uintptr_t)ro : 0;
	if (info->domain_attr->mr_iov_limit >= 3) {
		for (k = 0; k < 3; k++)
			mv_iov[k] = (struct iovec){ mv + mv_off[k], mv_len[k] };
		ret = fi_mr_regv(domain, mv_iov, 3,
				 FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				 &mr_mv, NULL);
		if (ret)
			die("fi_mr_regv", ret);
		ti.key_mv = fi_mr_key(mr_mv);
		ti.addr_mv = virt ? (uintptr_t)mv_iov[0].iov_base : 0;
	}
	s = wire_oob_accept(OOB_PORT, WIRE_OOB_DUAL);
	wire_send(s, &ti, sizeof(ti), "out-of-band exchange");
	wire_recv(s, &done, 1, "out-of-band exchange");

	ret = wait_comp(&e);
	CHECK(!ret && (e.flags & FI_REMOTE_CQ_DATA) && e.data == RDATA,
	      "target: the write's remote CQ data arrived (%d, %#llx)", ret,
	      (unsigned long long)e.data);
	/* Steps 1, 7, 8 (9, 10) wrote; the failed writes counted nothing. */
	CHECK(fi_cntr_read(wcntr) == 3 + (uint64_t)triggered + !!mr_mv,
	      "target: remote-write counter is %d (%llu)",
	      3 + triggered + !!mr_mv,
	      (unsigned long long)fi_cntr_read(wcntr));
	if (mr_mv) {
		for (i = 0; i < MV_TOTAL &&
		     *mv_at(mv, i) == (char)(i * 3 + 7); i++)
			;
		CHECK(i == MV_TOTAL && !mv[mv_off[1] - 1] &&
		      !mv[mv_off[0] + mv_len[0]],
		      "target: its multi-range MR holds what was written, around it nothing (%d)",
		      i);
		fi_close(&mr_mv->fid);
	}
	/*
	 * Steps 2, 3, 7, 8 (10: two) read; the reads past and across the
	 * MR's end counted nothing.
	 */
	CHECK(fi_cntr_read(rcntr) == 4 + 2 * (uint64_t)!!mr_mv,
	      "target: remote-read counter is %d (%llu)", 4 + 2 * !!mr_mv,
	      (unsigned long long)fi_cntr_read(rcntr));
	/*
	 * Per MR: 3 (4) writes and 3 reads (1 MiB ones too), each once; the
	 * read across its end, none.
	 */
	CHECK(fi_cntr_read(mcntr) == 6 + (uint64_t)triggered,
	      "target: the MR's counter (FI_MR_RMA_EVENT) is %d (%llu)",
	      6 + triggered,
	      (unsigned long long)fi_cntr_read(mcntr));
	for (i = 0; i < LEN && rw[i] == (char)(i * 5 + 11); i++)
		;
	CHECK(i == LEN, "target: its memory holds what was written (%d)", i);
	done = failures ? 1 : 0;
	wire_send(s, &done, 1, "out-of-band result");
	close(s);
	fi_close(&mr_rw->fid);
	fi_close(&mr_ro->fid);
	return failures ? 1 : 0;
}

/* Step 7: a write, then at once a read of it with FI_FENCE. */
static int fenced_read_after_write(char *buf, char *back, void *desc,
				   fi_addr_t peer, const struct target_info *ti)
{
	struct iovec wiov = { buf, LEN }, riov = { back, LEN };
	struct fi_rma_iov rma = { ti->addr_rw, LEN, ti->key_rw };
	struct fi_msg_rma w = {
		.msg_iov = &wiov, .desc = &desc, .iov_count = 1, .addr = peer,
		.rma_iov = &rma, .rma_iov_count = 1, .context = &w,
	};
	struct fi_msg_rma r = w;
	struct fi_cq_data_entry e1, e2;
	int ret, i;

	r.msg_iov = &riov;
	r.desc = NULL;
	r.context = &r;
	for (i = 0; i < LEN; i++)
		buf[i] = (char)(i * 5 + 11);
	memset(back, 0, LEN);
	ret = fi_writemsg(ep, &w, FI_COMPLETION);
	if (!ret)
		ret = fi_readmsg(ep, &r, FI_COMPLETION | FI_FENCE);
	if (ret)
		return ret;
	if ((ret = wait_comp(&e1)) || (ret = wait_comp(&e2)))
		return ret;
	if (e1.op_context != &w || e2.op_context != &r)
		return -FI_EOTHER;	/* the read completed first */
	for (i = 0; i < LEN && back[i] == (char)(i * 5 + 11); i++)
		;
	return i == LEN ? 0 : -FI_EIO;
}

/*
 * Step 8: a write gathered from three iovs (the pattern of step 7 again,
 * which the target checks at the end), a read scattered into three others
 * out of order.
 */
static int iov_write_read(char *buf, char *back, fi_addr_t peer,
			  const struct target_info *ti)
{
	struct iovec w[3] = {
		{ buf, 1000 }, { buf + 1000, 3000 }, { buf + 4000, LEN - 4000 },
	};
	struct iovec r[3] = {
		{ back + LEN - 5, 5 }, { back + 100, LEN - 105 }, { back, 100 },
	};
	int ret, i;

	for (i = 0; i < LEN; i++)
		buf[i] = (char)(i * 5 + 11);
	ret = fi_writev(ep, w, NULL, 3, peer, ti->addr_rw, ti->key_rw, NULL);
	ret = ret ?: wait_comp(NULL);
	if (ret)
		return ret;
	memset(back, 0, LEN);
	ret = fi_readv(ep, r, NULL, 3, peer, ti->addr_rw, ti->key_rw, NULL);
	ret = ret ?: wait_comp(NULL);
	if (ret)
		return ret;
	for (i = 0; i < 5; i++)
		if (back[LEN - 5 + i] != buf[i])
			return -FI_EIO;
	for (i = 0; i < LEN - 105; i++)
		if (back[100 + i] != buf[5 + i])
			return -FI_EIO;
	for (i = 0; i < 100; i++)
		if (back[i] != buf[LEN - 100 + i])
			return -FI_EIO;
	return 0;
}

/*
 * 9. A triggered write of the pattern's first 4 KiB (the pattern of step
 * 7 again, which the target checks at the end): nothing completes
 * before the counter reaches 1; after fi_cntr_add it goes over the wire.
 */
static void triggered_write(char *buf, void *desc, fi_addr_t peer,
			    const struct target_info *ti)
{
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_triggered_context tc = {
		.event_type = FI_TRIGGER_THRESHOLD,
	};
	struct fi_rma_iov rma = {
		.addr = ti->addr_rw, .len = 4096, .key = ti->key_rw,
	};
	struct iovec iov = { .iov_base = buf, .iov_len = 4096 };
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = peer,
		.rma_iov = &rma, .rma_iov_count = 1, .context = &tc,
	};
	struct fi_cq_data_entry e;
	struct fid_cntr *c;
	int ret, i;

	for (i = 0; i < 4096; i++)
		buf[i] = (char)(i * 5 + 11);
	ret = fi_cntr_open(domain, &cntr_attr, &c, NULL);
	if (ret)
		die("fi_cntr_open", ret);
	tc.trigger.threshold.cntr = c;
	tc.trigger.threshold.threshold = 1;
	ret = fi_writemsg(ep, &msg, FI_TRIGGER | FI_COMPLETION);
	usleep(200000);
	CHECK(!ret && fi_cq_read(cq, &e, 1) == -FI_EAGAIN,
	      "triggered write posted, held below its threshold (%d)", ret);
	ret = fi_cntr_add(c, 1);
	ret = ret ?: wait_comp(&e);
	CHECK(!ret && e.op_context == &tc,
	      "triggered write ran once the counter reached it (%d)", ret);
	fi_close(&c->fid);
}

/* 10. Across the three ranges of the target's multi-range MR. */
static void multi_range(char *buf, char *back, void *desc, fi_addr_t peer,
			const struct target_info *ti)
{
	int ret, i;

	for (i = 0; i < MV_TOTAL; i++)
		buf[i] = (char)(i * 3 + 7);
	ret = fi_write(ep, buf, MV_TOTAL, desc, peer, ti->addr_mv, ti->key_mv,
		       NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(!ret, "a write over the 3 ranges of a multi-range MR (%d)", ret);
	memset(back, 0, MV_TOTAL);
	ret = fi_read(ep, back, MV_TOTAL, NULL, peer, ti->addr_mv, ti->key_mv,
		      NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(!ret && !memcmp(back, buf, MV_TOTAL),
	      "read back over the 3 ranges, identical (%d)", ret);
	memset(back, 0, 300);
	ret = fi_read(ep, back, 300, NULL, peer, ti->addr_mv + 29900,
		      ti->key_mv, NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(!ret && !memcmp(back, buf + 29900, 300),
	      "a read across ranges 2 and 3 (%d)", ret);
	ret = fi_write(ep, buf, 20, desc, peer, ti->addr_mv + MV_TOTAL - 10,
		       ti->key_mv, NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(ret < 0, "a write past the multi-range MR's end: %d (%s)", ret,
	      fi_strerror(-ret));
}

/*
 * An initiator's start: the endpoint, the target's info out of band, its
 * address in the AV and @buf (LEN bytes) registered for @access. Return:
 * the out-of-band socket.
 */
static int initiator_open(const char *node, char *buf, uint64_t access,
			  struct target_info *ti, fi_addr_t *peer,
			  struct fid_mr **mr)
{
	int s, ret;

	setup(node, 0);
	s = wire_oob_connect(node, OOB_PORT, WIRE_OOB_DUAL);
	wire_recv(s, ti, sizeof(*ti), "out-of-band read");
	if (fi_av_insert(av, ti->addr, 1, peer, 0, NULL) != 1)
		die("fi_av_insert", -FI_EINVAL);
	ret = fi_mr_reg(domain, buf, LEN, access, 0, 0, 0, mr, NULL);
	if (ret)
		die("fi_mr_reg", ret);
	return s;
}

static int run_initiator(const char *node)
{
	char *buf = malloc(LEN), *back = malloc(LEN), done = 0;
	struct target_info ti;
	struct fid_mr *mr;
	fi_addr_t peer;
	void *desc;
	int s, ret, i;

	s = initiator_open(node, buf, FI_WRITE | FI_READ, &ti, &peer, &mr);
	desc = fi_mr_desc(mr);
	for (i = 0; i < LEN; i++)
		buf[i] = (char)(i * 13 + 1);

	ret = fi_writedata(ep, buf, LEN, desc, RDATA, peer, ti.addr_rw,
			   ti.key_rw, NULL);
	CHECK(!ret && !wait_comp(NULL), "1 MiB write with remote CQ data (%d)",
	      ret);
	memset(buf, 0, LEN);
	ret = fi_read(ep, buf, LEN, desc, peer, ti.addr_rw, ti.key_rw, NULL);
	ret = ret ?: wait_comp(NULL);
	for (i = 0; i < LEN && buf[i] == (char)(i * 13 + 1); i++)
		;
	CHECK(!ret && i == LEN, "1 MiB read back, identical (%d, %d)", ret, i);
	ret = fi_read(ep, buf, 4096, desc, peer, ti.addr_ro + 4096, ti.key_ro,
		      NULL);
	ret = ret ?: wait_comp(NULL);
	for (i = 0; i < 4096 && buf[i] == (char)((i + 4096) * 7 + 3); i++)
		;
	CHECK(!ret && i == 4096, "4 KiB read from the read-only MR (%d, %d)",
	      ret, i);
	ret = fi_write(ep, buf, 64, desc, peer, ti.addr_ro, ti.key_ro, NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(ret == -FI_EACCES, "write to the read-only MR: %d (%s)", ret,
	      fi_strerror(-ret));
	ret = fi_write(ep, buf, 64, desc, peer, ti.addr_rw, ti.key_rw + 977,
		       NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(ret < 0, "write with a key that does not exist: %d (%s)", ret,
	      fi_strerror(-ret));
	ret = fi_write(ep, buf, 64, desc, peer, ti.addr_rw + LEN - 32,
		       ti.key_rw, NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(ret < 0, "write past the MR's end: %d (%s)", ret,
	      fi_strerror(-ret));
	ret = fi_read(ep, back, 64, NULL, peer, ti.addr_rw + LEN, ti.key_rw,
		      NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(ret < 0, "read past the MR's end: %d (%s)", ret,
	      fi_strerror(-ret));
	/* Its first packets' data is the MR's, its last packets' is not. */
	ret = fi_read(ep, back, 16384, NULL, peer, ti.addr_rw + LEN - 4096,
		      ti.key_rw, NULL);
	ret = ret ?: wait_comp(NULL);
	CHECK(ret < 0, "a read across the MR's end: %d (%s)", ret,
	      fi_strerror(-ret));
	ret = fenced_read_after_write(buf, back, desc, peer, &ti);
	CHECK(!ret, "a fenced read after a write starts when it completed (%d)",
	      ret);
	ret = iov_write_read(buf, back, peer, &ti);
	CHECK(!ret, "a write from 3 iovs, a read into 3 iovs (%d)", ret);

	if (triggered)
		triggered_write(buf, desc, peer, &ti);
	if (ti.key_mv)
		multi_range(buf, back, desc, peer, &ti);

	wire_send(s, &done, 1, "out-of-band end");
	wire_recv(s, &done, 1, "out-of-band end");
	CHECK(!done, "the target's checks passed");
	close(s);
	fi_close(&mr->fid);
	return failures ? 1 : 0;
}

/*
 * -l: read 1 MiB from the target again and again, always one read
 * outstanding, until one fails (the target was killed, its host went
 * away): print the error and exit 0; 1 if none failed in 120 s.
 */
static int run_loop(const char *node)
{
	char *buf = malloc(LEN);
	struct target_info ti;
	struct fid_mr *mr;
	time_t end;
	fi_addr_t peer;
	long reads = 0;
	int ret;

	/* Its out-of-band socket stays open until the process exits. */
	initiator_open(node, buf, FI_READ, &ti, &peer, &mr);
	printf("# looping\n");
	fflush(stdout);
	end = time(NULL) + 120;
	while (time(NULL) < end) {
		ret = fi_read(ep, buf, LEN, fi_mr_desc(mr), peer, ti.addr_rw,
			      ti.key_rw, NULL);
		if (!ret) {
			ret = wait_comp(NULL);
			reads++;
		}
		if (ret) {
			printf("# read %ld failed: %d (%s)\n", reads, ret,
			       fi_strerror(-ret));
			return 0;
		}
	}
	printf("# FAILED: %ld reads, none failed\n", reads);
	return 1;
}

/*
 * -c: a read of 1 MiB outstanding when its endpoint closes (test_wire.sh
 * delays the target's packets, so that its answer comes after): once
 * fi_close() returned, the buffer is the application's again, and what
 * it writes there stays - the answer's data must not land in it. Exit
 * status 0 if the buffer held what was written 3 s after the close.
 */
static int run_close(const char *node)
{
	char *buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct target_info ti;
	struct fid_mr *mr;
	fi_addr_t peer;
	size_t i;
	int s, ret;

	if (buf == MAP_FAILED)
		die("mmap", -FI_ENOMEM);
	s = initiator_open(node, buf, FI_READ, &ti, &peer, &mr);
	memset(buf, 0, LEN);
	ret = fi_read(ep, buf, LEN, fi_mr_desc(mr), peer, ti.addr_ro,
		      ti.key_ro, NULL);
	CHECK(!ret, "a 1 MiB read posted (%d)", ret);
	ret = fi_close(&ep->fid);
	CHECK(!ret, "its endpoint closed at once (%d)", ret);
	memset(buf, 0x77, LEN);
	sleep(3);
	for (i = 0; i < LEN && buf[i] == 0x77; i++)
		;
	CHECK(i == LEN, "the buffer still holds what was written after the "
	      "close (first other byte at %zu of %d)", i, LEN);
	close(s);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "-t")) {
		tclass = FI_TC_DSCP | (uint32_t)(atoi(argv[2]) & 0x3f);
		argc -= 2;
		argv += 2;
	}
	if (argc == 2 && !strcmp(argv[1], "-s"))
		return run_target();
	if (argc == 3 && !strcmp(argv[1], "-l"))
		return run_loop(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "-c"))
		return run_close(argv[2]);
	if (argc == 2)
		return run_initiator(argv[1]);
	fprintf(stderr, "usage: wire_rma [-t DSCP] -s | wire_rma [-t DSCP] [-l | -c] TARGET-IPV4\n");
	return 2;
}
