// SPDX-License-Identifier: GPL-2.0
/*
 * fail_nth: every allocation and user copy on the way of each object-making
 * call fails in turn (the pattern of the kernel's iommufd_fail_nth.c).
 *
 * For each scenario - opening a domain; creating a CQ, a counter, an
 * endpoint in each doorbell mode; registering pinned and ODP memory and
 * using it; taking an auth key; moving data (sends, unexpected messages,
 * RMA, peek, cancel); netlink device creation and deletion, device
 * changes, service creation/change/deletion, and every read - the
 * scenario runs once as is, then again with N written to
 * /proc/thread-self/fail-nth for N = 1, 2, 3...: the N-th fault site of
 * the thread (failslab, fail_page_alloc, fail_usercopy) fails. That goes
 * on until a run ends without reaching its N-th site; that run must
 * succeed.
 *
 * Asserts, for every N: the scenario ends with success or with an errno an
 * allocation or copy failure may give (ENOMEM, EFAULT, ENFILE, ENOBUFS,
 * EAGAIN), never another one and never a crash (run.sh checks dmesg;
 * the taint flags are checked here); once its objects are closed the
 * module-wide gauges (devices, domains, services, endpoints, CQs, MRs,
 * pinned bytes, unexpected messages) and the process's pinned memory are
 * back at their start; no device a failed DEV_NEW reported failed exists.
 *
 * Needs CONFIG_FAULT_INJECTION_DEBUG_FS with FAILSLAB (and, if there,
 * FAIL_PAGE_ALLOC, FAULT_INJECTION_USERCOPY) and debugfs at
 * /sys/kernel/debug: without them the whole program is skipped. The
 * fault attributes it sets (probability 100, interval 1, times -1,
 * task-filter Y, verbose 0, ignore-gfp-wait N...) are restored at exit.
 *
 * SWNIC_FAIL_NTH_MAX bounds N per scenario (default 3000),
 * SWNIC_FAIL_NTH_ONLY="cq_create nl_svc" runs only the scenarios named,
 * SWNIC_FAIL_NTH_VERBOSE=1 sets verbose 1 (a stack trace of each injected
 * fault in the kernel log, to find the site of a failure).
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/swnic.h>
#include <linux/swnic_queue.h>

#include "kselftest_harness.h"
#include "fuzz_util.h"
#include "swnic_rings.h"

#define DEV_PATH	"/dev/swnic0"
#define FI_DIR		"/sys/kernel/debug"
#define NTH_MAX		3000
#define BUF_SIZE	(256 * 1024)	/* its MR: 32 pages, more runs than a umem starts with (16) */
#define FN_DEV		"swnicfn0"	/* the device the DEV_NEW scenario makes */
#define FN_KEY		3001		/* auth keys of the service scenarios */
#define FN_KEY_TAKE	3002

/* ---- fault injection set-up ------------------------------------------------ */

struct fi_attr {
	const char *dir, *file, *value;
	char old[64];
	bool saved;
};

/*
 * In this order: the task filter (and quiet) first, the probability last.
 * Until the filter is on, a probability of 100 fails every allocation of
 * every task - writing the filter included.
 */
static struct fi_attr fi_attrs[] = {
	{ .dir = "failslab", .file = "verbose", .value = "0" },
	{ .dir = "failslab", .file = "task-filter", .value = "Y" },
	{ .dir = "failslab", .file = "space", .value = "0" },
	{ .dir = "failslab", .file = "interval", .value = "1" },
	{ .dir = "failslab", .file = "ignore-gfp-wait", .value = "N" },
	{ .dir = "failslab", .file = "cache-filter", .value = "N" },
	{ .dir = "failslab", .file = "times", .value = "-1" },
	{ .dir = "failslab", .file = "probability", .value = "100" },
	{ .dir = "fail_page_alloc", .file = "verbose", .value = "0" },
	{ .dir = "fail_page_alloc", .file = "task-filter", .value = "Y" },
	{ .dir = "fail_page_alloc", .file = "space", .value = "0" },
	{ .dir = "fail_page_alloc", .file = "interval", .value = "1" },
	{ .dir = "fail_page_alloc", .file = "ignore-gfp-wait", .value = "N" },
	{ .dir = "fail_page_alloc", .file = "ignore-gfp-highmem", .value = "N" },
	{ .dir = "fail_page_alloc", .file = "min-order", .value = "0" },
	{ .dir = "fail_page_alloc", .file = "times", .value = "-1" },
	{ .dir = "fail_page_alloc", .file = "probability", .value = "100" },
	{ .dir = "fail_usercopy", .file = "verbose", .value = "0" },
	{ .dir = "fail_usercopy", .file = "task-filter", .value = "Y" },
	{ .dir = "fail_usercopy", .file = "space", .value = "0" },
	{ .dir = "fail_usercopy", .file = "interval", .value = "1" },
	{ .dir = "fail_usercopy", .file = "times", .value = "-1" },
	{ .dir = "fail_usercopy", .file = "probability", .value = "100" },
};

static int fi_rw(const char *dir, const char *file, char *buf, size_t len,
		 const char *value)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), FI_DIR "/%s/%s", dir, file);
	fd = open(path, value ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -errno;
	if (value) {
		ret = write(fd, value, strlen(value)) < 0 ? -errno : 0;
	} else {
		ssize_t n = read(fd, buf, len - 1);

		ret = n < 0 ? -errno : 0;
		buf[n > 0 ? n : 0] = 0;
		buf[strcspn(buf, "\n")] = 0;
	}
	close(fd);
	return ret;
}

/* In reverse: the probability back first, the task filter last. */
static void fi_restore(void)
{
	for (size_t i = ARRAY_SIZE(fi_attrs); i-- > 0;)
		if (fi_attrs[i].saved)
			fi_rw(fi_attrs[i].dir, fi_attrs[i].file, NULL, 0,
			      fi_attrs[i].old);
}

/* Return: NULL if fault injection is usable, else why not. */
static const char *fi_setup(void)
{
	const char *verbose = getenv("SWNIC_FAIL_NTH_VERBOSE");
	struct stat st;
	char buf[64];

	if (access("/proc/thread-self/fail-nth", R_OK | W_OK))
		return "no /proc/thread-self/fail-nth: the kernel has no fault injection (CONFIG_FAULT_INJECTION)";
	if (stat(FI_DIR "/failslab", &st))
		return "no " FI_DIR "/failslab: no CONFIG_FAILSLAB/FAULT_INJECTION_DEBUG_FS, or debugfs not mounted";
	if (access(DEV_PATH, R_OK | W_OK))
		return "no " DEV_PATH " (module not loaded)";
	for (size_t i = 0; i < ARRAY_SIZE(fi_attrs); i++) {
		struct fi_attr *a = &fi_attrs[i];
		const char *v = a->value;

		if (fi_rw(a->dir, a->file, a->old, sizeof(a->old), NULL))
			continue;	/* not in this kernel */
		a->saved = true;
		if (!strcmp(a->file, "verbose") && verbose && *verbose == '1')
			v = "1";
		if (fi_rw(a->dir, a->file, NULL, 0, v))
			return "cannot configure fault injection in debugfs";
	}
	if (fi_rw("failslab", "probability", buf, sizeof(buf), NULL) ||
	    strcmp(buf, "100"))
		return "failslab is not configurable";
	atexit(fi_restore);
	return NULL;
}

/* ---- fail-nth ---------------------------------------------------------------- */

/* Fail the @n-th fault site of this thread from now on (0: none). */
static int nth_write(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	for (int tries = 0; tries < 3; tries++) {
		/* Writing can be a fault site itself (the copy of @buf). */
		if (pwrite(fd, buf, len, 0) == len)
			return 0;
		if (errno != EFAULT)
			break;
	}
	return -errno;
}

/*
 * Disarm. Return: true if the fault was injected (the counter reached 0),
 * false if the scenario ended before its N-th site.
 */
static bool nth_injected(int fd)
{
	char buf[16] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	/* A read that faulted was the N-th site: nothing before it was. */
	if (n < 0 && errno == EFAULT)
		strcpy(buf, "1");
	nth_write(fd, 0);
	return buf[0] == '0';
}

/* Touch stack now, so that no page fault in the scenario needs memory. */
static void __attribute__((noinline)) stack_prefault(void)
{
	volatile char pad[256 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 4096)
		pad[i] = 0;
}

/* ---- what a scenario holds --------------------------------------------------- */

struct ctx {
	int dom[2];
	struct t_cq cq[2];
	struct t_ep ep[2];
	int cntr;
	void *cntr_map;
	void *inval_map;
	uint8_t *buf;		/* BUF_SIZE, prefaulted */
	uint64_t key;
	uint32_t handle;
	struct nlc *nl;
	uint32_t dom_id;	/* of dom[0], for the netlink reads */
	bool dev_new_failed;	/* FN_DEV reported not created */
	int err_nl;		/* netlink: the error of a request */
	const char *step;	/* where it stopped */
};

static void ctx_init(struct ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->dom[0] = c->dom[1] = c->cntr = -1;
	c->cq[0].fd = c->cq[1].fd = -1;
	c->ep[0].fd = c->ep[1].fd = -1;
}

/* Close everything @c holds (unarmed). */
static void ctx_release(struct ctx *c)
{
	for (int i = 0; i < 2; i++) {
		t_ep_destroy(&c->ep[i]);
		if (c->cq[i].fd >= 0) {
			if (c->cq[i].ring.map)
				munmap(c->cq[i].ring.map, c->cq[i].ring.size);
			close(c->cq[i].fd);
			c->cq[i].fd = -1;
		}
	}
	if (c->cntr_map)
		munmap(c->cntr_map, 4096);
	if (c->cntr >= 0)
		close(c->cntr);
	if (c->inval_map)
		munmap(c->inval_map, 4096);
	for (int i = 0; i < 2; i++)
		if (c->dom[i] >= 0)
			close(c->dom[i]);
	if (c->buf)
		munmap(c->buf, BUF_SIZE);
	if (c->nl) {
		nlc_close(c->nl);
		free(c->nl);
	}
	ctx_init(c);
}

#define IOCTL(c, s, fd, cmd, arg)					\
	do {								\
		(c)->step = (s);					\
		if (ioctl(fd, cmd, arg))				\
			return -errno;					\
	} while (0)

/* Map a CQ's or an EP's ring (the mapping is checked like an ioctl). */
static int ring_map(struct ctx *c, const char *s, struct t_ring *r, int fd,
		    const struct swnic_ring_info *info)
{
	c->step = s;
	return t_ring_map(r, fd, info);
}

/* ---- preparations (unarmed) -------------------------------------------------- */

static int prep_domain(struct ctx *c, int i)
{
	c->dom[i] = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	return c->dom[i] < 0 ? -errno : 0;
}

/*
 * Its pages faulted in from the last to the first: physically they then
 * run backwards (the allocator hands out neighbours in turn), so the MR
 * is a page per run, more runs than a umem starts with room for - the
 * growth of its run array is a fault site too.
 */
static int prep_buf(struct ctx *c)
{
	long page = sysconf(_SC_PAGESIZE);
	long off;

	c->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->buf == MAP_FAILED) {
		c->buf = NULL;
		return -errno;
	}
	for (off = BUF_SIZE - page; off >= 0; off -= page)
		memset(c->buf + off, 0x33, page);
	return 0;
}

static int prep_nl(struct ctx *c)
{
	struct timeval tv = { .tv_sec = 2 };

	c->nl = calloc(1, sizeof(*c->nl));
	if (!c->nl || nlc_open(c->nl))
		return -ENOENT;
	setsockopt(mnl_socket_get_fd(c->nl->nl), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	/* Prefault the buffers the requests and answers go through. */
	memset(c->nl->req, 0, sizeof(c->nl->req));
	memset(c->nl->buf, 0, sizeof(c->nl->buf));
	return 0;
}

/* A CQ and an endpoint on domain @i (for the data path). */
static int prep_ep(struct ctx *c, int i, uint32_t mode)
{
	int ret = t_cq_create(c->dom[i], 64, &c->cq[i]);

	return ret ? ret : t_ep_create(c->dom[i], &c->cq[i], &c->cq[i], mode, 0,
				       16, &c->ep[i]);
}

/* ---- the scenarios (armed) ------------------------------------------------- */

static int sc_domain_open(struct ctx *c)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_auth_key k = { .size = sizeof(k) };
	struct swnic_inval_query iq = { .size = sizeof(iq) };
	void *p;

	c->step = "open";
	c->dom[0] = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (c->dom[0] < 0)
		return -errno;
	IOCTL(c, "QUERY_DEVICE", c->dom[0], SWNIC_IOCTL_QUERY_DEVICE, &q);
	IOCTL(c, "AUTH_KEY", c->dom[0], SWNIC_IOCTL_AUTH_KEY, &k);
	IOCTL(c, "INVAL_QUERY", c->dom[0], SWNIC_IOCTL_INVAL_QUERY, &iq);
	c->step = "mmap inval";
	p = mmap(NULL, iq.mmap_size, PROT_READ, MAP_SHARED, c->dom[0], iq.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	c->inval_map = p;
	return 0;
}

static int sc_cq_create(struct ctx *c, uint32_t flags)
{
	struct swnic_cq_create cc = { .size = sizeof(cc), .flags = flags,
				      .entries = 256 };
	struct pollfd p;

	IOCTL(c, "CQ_CREATE", c->dom[0], SWNIC_IOCTL_CQ_CREATE, &cc);
	c->cq[0].fd = cc.fd;
	c->cq[0].id = cc.cq_id;
	if (ring_map(c, "mmap CQ", &c->cq[0].ring, cc.fd, &cc.ring))
		return -errno;
	p = (struct pollfd){ .fd = cc.fd, .events = POLLIN };
	c->step = "poll";
	return poll(&p, 1, 0) < 0 ? -errno : 0;
}

static int sc_cq(struct ctx *c)
{
	return sc_cq_create(c, 0);
}

static int sc_cq_inline(struct ctx *c)
{
	return sc_cq_create(c, SWNIC_CQ_F_INLINE_DATA);
}

static int sc_cntr(struct ctx *c)
{
	struct swnic_cntr_create cc = { .size = sizeof(cc) };

	IOCTL(c, "CNTR_CREATE", c->dom[0], SWNIC_IOCTL_CNTR_CREATE, &cc);
	c->cntr = cc.fd;
	c->step = "mmap counter";
	c->cntr_map = mmap(NULL, cc.mmap_size, PROT_READ, MAP_SHARED, cc.fd, 0);
	if (c->cntr_map == MAP_FAILED) {
		c->cntr_map = NULL;
		return -errno;
	}
	return 0;
}

static int sc_ep_create(struct ctx *c, uint32_t mode)
{
	struct swnic_cq_create cc = { .size = sizeof(cc), .entries = 64 };
	struct swnic_cntr_create nc = { .size = sizeof(nc) };
	struct swnic_ep_create ec = { .size = sizeof(ec), .flags = mode,
				      .type = SWNIC_EP_RDM, .sq_entries = 32,
				      .rq_entries = 32 };
	struct swnic_ep_doorbell db = { .size = sizeof(db) };

	IOCTL(c, "CQ_CREATE", c->dom[0], SWNIC_IOCTL_CQ_CREATE, &cc);
	c->cq[0].fd = cc.fd;
	IOCTL(c, "CNTR_CREATE", c->dom[0], SWNIC_IOCTL_CNTR_CREATE, &nc);
	c->cntr = nc.fd;
	ec.tx_cq = ec.rx_cq = cc.cq_id;
	ec.cntr[SWNIC_EP_CNTR_SEND] = ec.cntr[SWNIC_EP_CNTR_RECV] = nc.cntr_id;
	IOCTL(c, "EP_CREATE", c->dom[0], SWNIC_IOCTL_EP_CREATE, &ec);
	c->ep[0].fd = ec.fd;
	if (ring_map(c, "mmap SQ", &c->ep[0].sq, ec.fd, &ec.sq))
		return -errno;
	if (ring_map(c, "mmap RQ", &c->ep[0].rq, ec.fd, &ec.rq)) {
		munmap(c->ep[0].sq.map, c->ep[0].sq.size);
		c->ep[0].sq.map = NULL;
		return -errno;
	}
	IOCTL(c, "EP_DOORBELL", ec.fd, SWNIC_IOCTL_EP_DOORBELL, &db);
	return 0;
}

static int sc_ep_syscall(struct ctx *c)
{
	return sc_ep_create(c, SWNIC_EP_F_DB_SYSCALL);
}

static int sc_ep_engine(struct ctx *c)
{
	return sc_ep_create(c, SWNIC_EP_F_DB_ENGINE | SWNIC_EP_F_RM_ENABLED);
}

static int sc_mr(struct ctx *c, uint32_t flags)
{
	struct swnic_mr_reg r = { .size = sizeof(r), .flags = flags,
				  .addr = (uintptr_t)c->buf, .length = BUF_SIZE,
				  .access = SWNIC_MR_ACCESS_ALL };
	struct swnic_mr_query q = { .size = sizeof(q) };
	struct swnic_mr_refresh f = { .size = sizeof(f) };
	struct swnic_mr_dereg d = { .size = sizeof(d) };
	struct swnic_mr_access a = { .size = sizeof(a), .len = 4096,
				     .access = SWNIC_MR_ACCESS_REMOTE_WRITE,
				     .flags = SWNIC_MR_ACCESS_F_WRITE };
	uint8_t *tmp = c->buf + BUF_SIZE / 2;	/* the other half, no MR */

	r.length = BUF_SIZE / 2;
	IOCTL(c, "MR_REG", c->dom[0], SWNIC_IOCTL_MR_REG, &r);
	q.handle = f.handle = d.handle = r.handle;
	IOCTL(c, "MR_QUERY", c->dom[0], SWNIC_IOCTL_MR_QUERY, &q);
	IOCTL(c, "MR_REFRESH", c->dom[0], SWNIC_IOCTL_MR_REFRESH, &f);
	a.key = r.key;
	a.buf = (uintptr_t)tmp;
	a.addr = (flags & SWNIC_MR_REG_VIRT_ADDR ? r.addr : 0) + 100;
	IOCTL(c, "MR_ACCESS write", c->dom[0], SWNIC_IOCTL_MR_ACCESS, &a);
	a.flags = 0;
	a.access = SWNIC_MR_ACCESS_REMOTE_READ;
	IOCTL(c, "MR_ACCESS read", c->dom[0], SWNIC_IOCTL_MR_ACCESS, &a);
	a.flags = SWNIC_MR_ACCESS_F_LOCAL;
	a.access = SWNIC_MR_ACCESS_SEND;
	a.addr = r.addr;
	IOCTL(c, "MR_ACCESS local", c->dom[0], SWNIC_IOCTL_MR_ACCESS, &a);
	IOCTL(c, "MR_DEREG", c->dom[0], SWNIC_IOCTL_MR_DEREG, &d);
	/* And one left registered for the domain's close to take down. */
	r.size = sizeof(r);
	IOCTL(c, "MR_REG again", c->dom[0], SWNIC_IOCTL_MR_REG, &r);
	return 0;
}

static int sc_mr_pinned(struct ctx *c)
{
	return sc_mr(c, SWNIC_MR_REG_VIRT_ADDR);
}

static int sc_mr_odp(struct ctx *c)
{
	return sc_mr(c, SWNIC_MR_REG_ODP);
}

static int sc_auth_key(struct ctx *c)
{
	struct swnic_auth_key k = { .size = sizeof(k), .auth_key = FN_KEY_TAKE };

	IOCTL(c, "AUTH_KEY take", c->dom[0], SWNIC_IOCTL_AUTH_KEY, &k);
	k.auth_key = SWNIC_AUTH_KEY_DEFAULT;
	IOCTL(c, "AUTH_KEY back", c->dom[0], SWNIC_IOCTL_AUTH_KEY, &k);
	return 0;
}

/* Post on @ep's ring and ring its doorbell. */
static int post(struct ctx *c, const char *s, struct t_ep *ep, struct t_ring *r,
		const void *entry)
{
	struct swnic_ep_doorbell db = { .size = sizeof(db) };

	c->step = s;
	if (t_ring_push(r, entry))
		return -ENOSPC;
	return ioctl(ep->fd, SWNIC_IOCTL_EP_DOORBELL, &db) ? -errno : 0;
}

/*
 * Data between two domains: a send that waits as an unexpected message,
 * a receive that takes it, a tagged one peeked and claimed, inline data,
 * RMA both ways, a cancelled receive. Failures of the data path itself are
 * completions with an error (they are reaped, not returned).
 */
static int sc_datapath(struct ctx *c)
{
	struct swnic_mr_reg r = { .size = sizeof(r), .addr = (uintptr_t)c->buf,
				  .length = BUF_SIZE / 2,
				  .access = SWNIC_MR_ACCESS_ALL };
	struct swnic_sqe s = t_send(c->buf + 40000, 3000, &c->ep[1], 1);
	struct swnic_rqe q = t_recv(c->buf + 50000, 4000, 2);
	struct swnic_ep_peek pk = { .size = sizeof(pk), .tag = 7,
				    .flags = SWNIC_PEEK_CLAIM, .claim = 9 };
	struct swnic_ep_cancel cn = { .size = sizeof(cn), .context = 5 };
	struct swnic_cqe cqe;
	int ret;

	IOCTL(c, "MR_REG", c->dom[1], SWNIC_IOCTL_MR_REG, &r);
	/* Unexpected first, then received. */
	if ((ret = post(c, "send", &c->ep[0], &c->ep[0].sq, &s)))
		return ret;
	if ((ret = post(c, "recv", &c->ep[1], &c->ep[1].rq, &q)))
		return ret;
	/* A tagged send, peeked and claimed, then taken by its claim. */
	s.opcode = SWNIC_OP_TSEND;
	s.tag = 7;
	s.context = 3;
	s.flags |= SWNIC_SQE_DELIVERY;
	if ((ret = post(c, "tsend", &c->ep[0], &c->ep[0].sq, &s)))
		return ret;
	/* (An engine may not have sent it yet: then the claim fails.) */
	c->step = "EP_PEEK";
	if (ioctl(c->ep[1].fd, SWNIC_IOCTL_EP_PEEK, &pk) && errno != ENOMSG)
		return -errno;
	q = t_recv(c->buf + 50000, 4000, 4);
	q.flags = SWNIC_RQE_TAGGED | SWNIC_RQE_CLAIM;
	q.tag = 9;
	if ((ret = post(c, "claim", &c->ep[1], &c->ep[1].rq, &q)))
		return ret;
	/* Inline data, and RMA into and out of the other domain's MR. */
	s = t_send(NULL, 40, &c->ep[1], 6);
	s.flags |= SWNIC_SQE_INLINE;
	if ((ret = post(c, "inline send", &c->ep[0], &c->ep[0].sq, &s)))
		return ret;
	s = t_send(c->buf + 40000, 5000, &c->ep[1], 7);
	s.opcode = SWNIC_OP_WRITE;
	s.rkey = r.key;
	s.raddr = 1000;
	s.flags |= SWNIC_SQE_REMOTE_DATA;
	if ((ret = post(c, "rma write", &c->ep[0], &c->ep[0].sq, &s)))
		return ret;
	s.opcode = SWNIC_OP_READ;
	s.flags = SWNIC_SQE_COMPLETION;
	s.context = 8;
	if ((ret = post(c, "rma read", &c->ep[0], &c->ep[0].sq, &s)))
		return ret;
	/* A receive nobody sends to (tag 77), cancelled. */
	q = t_recv(c->buf + 60000, 100, 5);
	q.flags = SWNIC_RQE_TAGGED;
	q.tag = 77;
	if ((ret = post(c, "recv to cancel", &c->ep[1], &c->ep[1].rq, &q)))
		return ret;
	c->step = "EP_CANCEL";
	if (ioctl(c->ep[1].fd, SWNIC_IOCTL_EP_CANCEL, &cn)) {
		bool failed = false;

		ret = -errno;
		/* Not posted: its RQE completed with an error (ENOMEM). */
		while (ret == -ENOENT && t_cq_pop(&c->cq[1], &cqe))
			failed |= cqe.context == 5 && (cqe.flags & SWNIC_CQE_ERROR);
		if (!failed)
			return ret;
	}
	c->step = "reap";
	while (t_cq_pop(&c->cq[0], &cqe) || t_cq_pop(&c->cq[1], &cqe))
		;
	return 0;
}

/* ---- netlink scenarios ------------------------------------------------------- */

static int nl_req(struct ctx *c, const char *s, struct nlmsghdr *nlh)
{
	struct nlc_reply r = { 0 };

	c->step = s;
	return nlc_talk(c->nl, nlh, &r);
}

static int sc_nl_dev(struct ctx *c)
{
	struct nlmsghdr *nlh;
	int ret;

	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_DEV_NEW, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, FN_DEV);
	ret = nl_req(c, "DEV_NEW", nlh);
	if (ret) {
		c->dev_new_failed = true;
		return ret;
	}
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_DEV_GET, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, FN_DEV);
	if ((ret = nl_req(c, "DEV_GET", nlh)))
		return ret;
	c->step = "open new device";
	c->dom[0] = open("/dev/" FN_DEV, O_RDWR | O_CLOEXEC);
	if (c->dom[0] < 0)
		return -errno;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_DEV_DEL, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, FN_DEV);
	mnl_attr_put_u32(nlh, SWNIC_A_FLAGS, SWNIC_DEV_DEL_F_FORCE);
	return nl_req(c, "DEV_DEL force", nlh);
}

static int sc_nl_dev_set(struct ctx *c)
{
	struct nlmsghdr *nlh = nlc_msg(c->nl, SWNIC_NL_CMD_DEV_SET, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_DEV_MAX_CQ, 1000);
	mnl_attr_put_u32(nlh, SWNIC_A_DEV_STATE, SWNIC_DEV_STATE_UP);
	mnl_attr_put_u32(nlh, SWNIC_A_DEV_IFINDEX, 1);	/* lo */
	return nl_req(c, "DEV_SET", nlh);
}

static int sc_nl_svc(struct ctx *c)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	int ret;

	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_SVC_NEW, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, FN_KEY);
	nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);
	mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_UID, 1000);
	mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_GID, 1000);
	mnl_attr_nest_end(nlh, nest);
	if ((ret = nl_req(c, "SVC_NEW", nlh)))
		return ret;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_SVC_SET, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, FN_KEY);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, SWNIC_SVC_F_OPEN);
	nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);
	mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_UID, 1001);
	mnl_attr_nest_end(nlh, nest);
	if ((ret = nl_req(c, "SVC_SET", nlh)))
		return ret;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_SVC_GET, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, FN_KEY);
	if ((ret = nl_req(c, "SVC_GET", nlh)))
		return ret;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_SVC_DEL, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, FN_KEY);
	return nl_req(c, "SVC_DEL", nlh);
}

/* Every read, doit and dump, with a domain and an MR to show. */
static int sc_nl_reads(struct ctx *c)
{
	static const uint8_t dumps[] = {
		SWNIC_NL_CMD_DEV_GET, SWNIC_NL_CMD_DOMAIN_GET,
		SWNIC_NL_CMD_STAT_GET, SWNIC_NL_CMD_SVC_GET,
		SWNIC_NL_CMD_MR_GET,
	};
	struct nlmsghdr *nlh;
	uint32_t id = c->dom_id;
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(dumps); i++) {
		nlh = nlc_msg(c->nl, dumps[i], NLM_F_DUMP);
		if ((ret = nl_req(c, "dump", nlh)))
			return ret;
	}
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_DOMAIN_GET, 0);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
	if ((ret = nl_req(c, "DOMAIN_GET", nlh)))
		return ret;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
	if ((ret = nl_req(c, "MR_GET by domain", nlh)))
		return ret;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_STAT_GET, 0);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
	if ((ret = nl_req(c, "STAT_GET domain", nlh)))
		return ret;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_STAT_GET, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	if ((ret = nl_req(c, "STAT_GET device", nlh)))
		return ret;
	nlh = nlc_msg(c->nl, SWNIC_NL_CMD_STAT_RESET, 0);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
	return nl_req(c, "STAT_RESET", nlh);
}

/* ---- preparations of each scenario (unarmed) ------------------------------- */

static int prep_none(struct ctx *c)
{
	return 0;
}

static int prep_dom(struct ctx *c)
{
	return prep_domain(c, 0);
}

static int prep_dom_buf(struct ctx *c)
{
	int ret = prep_domain(c, 0);

	return ret ? ret : prep_buf(c);
}

static int prep_two_eps(struct ctx *c, uint32_t mode)
{
	int ret = prep_domain(c, 0);

	if (!ret)
		ret = prep_domain(c, 1);
	if (!ret)
		ret = prep_buf(c);
	if (!ret)
		ret = prep_ep(c, 0, mode);
	return ret ? ret : prep_ep(c, 1, SWNIC_EP_F_DB_SYSCALL);
}

static int prep_datapath(struct ctx *c)
{
	return prep_two_eps(c, SWNIC_EP_F_DB_SYSCALL);
}

static int prep_datapath_engine(struct ctx *c)
{
	return prep_two_eps(c, SWNIC_EP_F_DB_ENGINE);
}

static int prep_netlink(struct ctx *c)
{
	return prep_nl(c);
}

static int prep_reads(struct ctx *c)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_mr_reg r = { .size = sizeof(r), .length = 8192,
				  .access = SWNIC_MR_ACCESS_ALL };
	int ret = prep_dom_buf(c);

	if (!ret)
		ret = prep_nl(c);
	if (ret)
		return ret;
	r.addr = (uintptr_t)c->buf;
	if (ioctl(c->dom[0], SWNIC_IOCTL_QUERY_DEVICE, &q) ||
	    ioctl(c->dom[0], SWNIC_IOCTL_MR_REG, &r))
		return -errno;
	c->dom_id = q.domain_id;
	return 0;
}

struct scenario {
	const char *name;
	int (*prep)(struct ctx *c);
	int (*run)(struct ctx *c);
};

/* ---- the loop ------------------------------------------------------------------ */

static long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Does the device FN_DEV exist? (An admin socket, unarmed.) */
static bool fn_dev_exists(struct nlc *admin)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(admin, SWNIC_NL_CMD_DEV_GET, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, FN_DEV);
	return !nlc_talk(admin, nlh, &r);
}

static struct nlc *admin_open(void)
{
	struct nlc *c = calloc(1, sizeof(*c));

	if (c && nlc_open(c)) {
		free(c);
		c = NULL;
	}
	return c;
}

FIXTURE(fn)
{
	struct nlc *admin;
	struct fz_gauges start;
	unsigned long taint;
	long vmpin;
	uint32_t max_cq, ifindex;
};

FIXTURE_VARIANT(fn)
{
	struct scenario sc;
};

#define SCENARIO(_name, _prep, _run)					\
	FIXTURE_VARIANT_ADD(fn, _name) {				\
		.sc = { .name = #_name, .prep = _prep, .run = _run },	\
	}

SCENARIO(domain_open, prep_none, sc_domain_open);
SCENARIO(cq_create, prep_dom, sc_cq);
SCENARIO(cq_create_inline, prep_dom, sc_cq_inline);
SCENARIO(cntr_create, prep_dom, sc_cntr);
SCENARIO(ep_create_syscall, prep_dom, sc_ep_syscall);
SCENARIO(ep_create_engine, prep_dom, sc_ep_engine);
SCENARIO(mr_reg_pinned, prep_dom_buf, sc_mr_pinned);
SCENARIO(mr_reg_odp, prep_dom_buf, sc_mr_odp);
SCENARIO(auth_key, prep_dom, sc_auth_key);
SCENARIO(datapath, prep_datapath, sc_datapath);
SCENARIO(datapath_engine, prep_datapath_engine, sc_datapath);
SCENARIO(nl_dev_new_del, prep_netlink, sc_nl_dev);
SCENARIO(nl_dev_set, prep_netlink, sc_nl_dev_set);
SCENARIO(nl_svc, prep_netlink, sc_nl_svc);
SCENARIO(nl_reads, prep_reads, sc_nl_reads);

static int dev_attr_cb(const struct nlmsghdr *nlh, void *data)
{
	uint32_t *v = data;
	struct nlc_attrs t;

	nlc_attrs(nlh, &t);
	v[0] = nlc_u32(&t, SWNIC_A_DEV_MAX_CQ);
	v[1] = nlc_u32(&t, SWNIC_A_DEV_IFINDEX);
	return MNL_CB_OK;
}

/* Put back what sc_nl_dev_set() and sc_nl_svc() change on swnic0. */
static void restore_swnic0(FIXTURE_DATA(fn) *self)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(self->admin, SWNIC_NL_CMD_DEV_SET, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_DEV_MAX_CQ, self->max_cq);
	mnl_attr_put_u32(nlh, SWNIC_A_DEV_IFINDEX, self->ifindex);
	nlc_talk(self->admin, nlh, &r);
	fz_nl_svc_del(self->admin, "swnic0", FN_KEY);
}

FIXTURE_SETUP(fn)
{
	uint32_t v[2] = { 0, 0 };
	struct nlc_reply r = { .cb = dev_attr_cb, .data = v };
	struct nlmsghdr *nlh;

	self->admin = admin_open();
	ASSERT_NE(NULL, self->admin);
	nlh = nlc_msg(self->admin, SWNIC_NL_CMD_DEV_GET, 0);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	ASSERT_EQ(0, nlc_talk(self->admin, nlh, &r));
	self->max_cq = v[0];
	self->ifindex = v[1];
	ASSERT_FALSE(fn_dev_exists(self->admin)) TH_LOG(FN_DEV " exists already");
	/* The service the auth_key scenario takes, open to anyone. */
	ASSERT_EQ(0, fz_nl_svc_new(self->admin, "swnic0", FN_KEY_TAKE,
				   SWNIC_SVC_F_OPEN));
	ASSERT_EQ(0, fz_gauges_read(&self->start));
	self->taint = fz_tainted();
	self->vmpin = vm_pin_kb();
}

FIXTURE_TEARDOWN(fn)
{
	if (!self->admin)
		return;
	restore_swnic0(self);
	if (fn_dev_exists(self->admin))
		fz_nl_dev_del(self->admin, FN_DEV, true);
	fz_nl_svc_del(self->admin, "swnic0", FN_KEY_TAKE);
	nlc_close(self->admin);
	free(self->admin);
}

/*
 * What a run left behind, once its objects are closed: nothing. Return:
 * false (and say what) if something is left.
 */
static bool left_nothing(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fn) *self, struct ctx *c, int err,
			 unsigned int n)
{
	struct fz_gauges now;
	bool ok = true;

	ctx_release(c);
	if (c->dev_new_failed && fn_dev_exists(self->admin) &&
	    err != EFAULT && err != ENOBUFS && err != EAGAIN) {
		/* (A lost answer may hide a success; nothing else may.) */
		TH_LOG("fault %u: DEV_NEW failed with %s, yet %s exists", n,
		       fz_errname(err), FN_DEV);
		ok = false;
	}
	if (fn_dev_exists(self->admin))
		fz_nl_dev_del(self->admin, FN_DEV, true);
	restore_swnic0(self);
	if (fz_gauges_settle(&self->start, &now, 3000)) {
		TH_LOG("fault %u: objects left behind (gauges above)", n);
		ok = false;
	}
	if (vm_pin_kb() != self->vmpin) {
		TH_LOG("fault %u: VmPin %ld kB, was %ld kB", n, vm_pin_kb(),
		       self->vmpin);
		ok = false;
	}
	return ok;
}

TEST_F_TIMEOUT(fn, fail_nth, 1800)
{
	const struct scenario *sc = &variant->sc;
	/* What a failed allocation or user copy may turn into. */
	struct fz_errset allowed = FZ_ERRS(ENOMEM, EFAULT, ENFILE, ENOBUFS, EAGAIN);
	const char *env = getenv("SWNIC_FAIL_NTH_MAX"), *only;
	unsigned int max = env ? strtoul(env, NULL, 0) : NTH_MAX;
	unsigned int n, failed = 0, absorbed = 0;
	static struct fz_stats st;
	double t0 = fz_now();
	struct ctx c;
	int fd, ret;

	only = getenv("SWNIC_FAIL_NTH_ONLY");
	if (only && *only && !strstr(only, sc->name))
		SKIP(return, "not in SWNIC_FAIL_NTH_ONLY");
	fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (n = 0;; n++) {
		bool injected = false;
		int err;

		ctx_init(&c);
		ret = sc->prep(&c);
		ASSERT_EQ(0, ret) TH_LOG("%s: preparation failed: %d", sc->name, ret);
		stack_prefault();
		if (n)
			ASSERT_EQ(0, nth_write(fd, n));
		ret = sc->run(&c);
		if (n)
			injected = nth_injected(fd);
		err = -ret;

		if (!injected) {
			/* Unharmed: the scenario works. */
			EXPECT_EQ(0, ret) TH_LOG("%s: %s failed with %s, no fault injected (run %u)",
						 sc->name, c.step, fz_errname(err), n);
		} else if (err) {
			failed++;
			fz_check(&st, sc->name, err, &allowed, "fault %u at step %s",
				 n, c.step);
		} else {
			absorbed++;
		}
		if (!left_nothing(_metadata, self, &c, err, n)) {
			EXPECT_TRUE(false) TH_LOG("%s: fault %u (step %s, %s)",
						  sc->name, n, c.step, fz_errname(err));
			break;
		}
		if ((n && !injected) || !_metadata->passed)
			break;
		if (n >= max) {
			EXPECT_TRUE(false) TH_LOG("%s: still injecting after %u faults",
						  sc->name, n);
			break;
		}
	}
	close(fd);
	printf("# %s: %u fault sites, %u failed the scenario, %u absorbed, %.1f s\n",
	       sc->name, n ? n - 1 : 0, failed, absorbed, fz_now() - t0);
	EXPECT_EQ(0, fz_report(&st, sc->name));
	EXPECT_EQ(0, fz_new_taint(self->taint))
		TH_LOG("the kernel was tainted (WARN/Oops/lockup): see dmesg");
}

int main(int argc, char **argv)
{
	const char *why = fi_setup();

	if (why) {
		ksft_print_header();
		ksft_exit_skip("%s\n", why);
	}
	return test_harness_run(argc, argv);
}
