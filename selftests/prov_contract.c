// SPDX-License-Identifier: GPL-2.0
/*
 * The fi_domain contract, item by item as issue 15 lists what an
 * application author found mishandled: counters-only endpoints, FI_FENCE,
 * fi_cq_signal waking fi_cq_sread (and fi_cntr_wait woken by another
 * thread), fi_av_insert on an unbound AV, every fi_mr_reg access
 * combination, CQ data / cm_data / FI_PEEK-CLAIM-DISCARD between two
 * processes, ordering hints, fi_getinfo before API 1.5 and with
 * hints->handle, the domain's EQ for CM events, FI_HMEM overrides, and
 * many MSG connections in one process. Every wait is bounded. The second
 * node (b) of the two-node tests and the child of the two-process ones
 * are the peer host's when SWNIC_PROV_PEER_NETNS names one
 * (prov_util.h), so their transfers cross the wire.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "kselftest_harness.h"
#include "prov_util.h"

#define WAIT_MS	5000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One completion within WAIT_MS; -FI_EAVAIL for an error. */
static ssize_t cq_get(struct fid_cq *cq, struct fi_cq_tagged_entry *e)
{
	for (int i = 0; i < WAIT_MS; i++) {
		ssize_t n = fi_cq_read(cq, e, 1);

		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

/* RMA address of @p in an MR at @base, as @info's domain addresses it. */
static uint64_t raddr(const struct fi_info *info, const void *base,
		      const void *p)
{
	if (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)p;
	return (uintptr_t)p - (uintptr_t)base;
}

/* ---- an RDM/DGRAM endpoint with everything bound ------------------------ */

struct node {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
	char name[64];
	size_t namelen;
};

static int node_open(struct node *n, enum fi_ep_type type, uint64_t caps)
{
	struct fi_info *hints = prov_hints();
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .size = 64 };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	int ret;

	memset(n, 0, sizeof(*n));
	hints->ep_attr->type = type;
	hints->caps = caps;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ret = prov_getinfo(NULL, NULL, 0, hints, &n->info);
	fi_freeinfo(hints);
	if (ret)
		return ret;
	n->namelen = sizeof(n->name);
	ret = fi_fabric(n->info->fabric_attr, &n->fabric, NULL);
	if (!ret)
		ret = fi_domain(n->fabric, n->info, &n->domain, NULL);
	if (!ret)
		ret = fi_endpoint(n->domain, n->info, &n->ep, NULL);
	if (!ret)
		ret = fi_cq_open(n->domain, &ca, &n->cq, NULL);
	if (!ret)
		ret = fi_av_open(n->domain, &aa, &n->av, NULL);
	if (!ret)
		ret = fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(n->ep, &n->av->fid, 0);
	if (!ret)
		ret = fi_enable(n->ep);
	if (!ret)
		ret = fi_getname(&n->ep->fid, n->name, &n->namelen);
	return ret;
}

struct node_args {
	struct node *n;
	enum fi_ep_type type;
	uint64_t caps;
};

static int node_open_fn(void *arg)
{
	struct node_args *a = arg;

	return node_open(a->n, a->type, a->caps);
}

/* A node of the peer's host (across), else one more of this host's. */
static int peer_node_open(struct node *n, enum fi_ep_type type,
			  uint64_t caps)
{
	struct node_args a = { .n = n, .type = type, .caps = caps };

	return prov_peer_run(node_open_fn, &a);
}

/* The child of a two-process test lives on the peer's host (across). */
static int child_to_peer_host(void)
{
	return prov_across() ? sys_enter_netns(prov_peer_netns()) : 0;
}

static void node_close(struct node *n)
{
	if (n->ep)
		fi_close(&n->ep->fid);
	if (n->av)
		fi_close(&n->av->fid);
	if (n->cq)
		fi_close(&n->cq->fid);
	if (n->domain)
		fi_close(&n->domain->fid);
	if (n->fabric)
		fi_close(&n->fabric->fid);
	fi_freeinfo(n->info);
	memset(n, 0, sizeof(*n));
}

/* Two processes: pipes to swap names and results. */
struct duo {
	int p2c[2], c2p[2];
	pid_t pid;
};

static void duo_fork(struct __test_metadata *_metadata, struct duo *d)
{
	ASSERT_EQ(0, pipe(d->p2c));
	ASSERT_EQ(0, pipe(d->c2p));
	d->pid = fork();
	ASSERT_LE(0, d->pid);
}

static int duo_read(int fd, void *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, WAIT_MS) != 1)
		return -1;
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static void duo_wait(struct __test_metadata *_metadata, struct duo *d)
{
	int status = -1;

	for (int i = 0; i < 2 * WAIT_MS; i++) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid)
			break;
		usleep(1000);
	}
	if (status == -1) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, &status, 0);
	}
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* ---- counters-only endpoints ------------------------------------------ */

TEST(counters_only_endpoint)
{
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *hints = prov_hints(), *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct prov_ctx l, p;
	struct fid_ep *a, *b, *c;
	struct fid_av *av, *bav;
	struct fid_cntr *tx, *rx;
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	char name[64], buf[64] = "";
	size_t len = sizeof(name);
	fi_addr_t peer;

	PROV_REQUIRE_DEVICE();
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fabric, NULL));
	ASSERT_EQ(0, fi_domain(fabric, info, &domain, NULL));
	/* The receiver b is the peer's (another host's across). */
	l = (struct prov_ctx){ .info = info, .fabric = fabric,
			       .domain = domain };
	ASSERT_EQ(0, prov_open_peer(&p, &l, hints));
	fi_freeinfo(hints);
	ASSERT_EQ(0, fi_av_open(domain, &aa, &av, NULL));
	ASSERT_EQ(0, fi_av_open(p.domain, &aa, &bav, NULL));
	ASSERT_EQ(0, fi_cntr_open(domain, &cattr, &tx, NULL));
	ASSERT_EQ(0, fi_cntr_open(p.domain, &cattr, &rx, NULL));
	ASSERT_EQ(0, fi_endpoint(domain, info, &a, NULL));
	ASSERT_EQ(0, fi_endpoint(p.domain, p.info, &b, NULL));
	ASSERT_EQ(0, fi_ep_bind(a, &av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(b, &bav->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(a, &tx->fid, FI_SEND));
	ASSERT_EQ(0, fi_ep_bind(b, &rx->fid, FI_RECV));
	/* No CQ at all: fi_endpoint(3) allows counters alone. */
	ASSERT_EQ(0, fi_enable(a));
	ASSERT_EQ(0, fi_enable(b));
	ASSERT_EQ(0, fi_getname(&b->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &peer, 0, NULL));
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(0, fi_recv(b, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
				     NULL));
		ASSERT_EQ(0, fi_send(a, "hello", 6, NULL, peer, NULL));
		ASSERT_EQ(0, fi_cntr_wait(tx, i + 1, WAIT_MS));
		ASSERT_EQ(0, fi_cntr_wait(rx, i + 1, WAIT_MS));
	}
	EXPECT_STREQ("hello", buf);
	EXPECT_EQ(0, fi_cntr_readerr(tx));
	EXPECT_EQ(0, fi_cntr_readerr(rx));
	/* Neither a CQ nor a counter bound: enable says so. */
	ASSERT_EQ(0, fi_endpoint(domain, info, &c, NULL));
	ASSERT_EQ(0, fi_ep_bind(c, &av->fid, 0));
	EXPECT_EQ(-FI_ENOCQ, fi_enable(c));
	fi_close(&c->fid);
	fi_close(&a->fid);
	fi_close(&b->fid);
	fi_close(&tx->fid);
	fi_close(&rx->fid);
	fi_close(&av->fid);
	fi_close(&bav->fid);
	prov_close(&p);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
}

/* ---- fi_cq_signal and the counter equivalent ---------------------------- */

struct waiter {
	struct fid_cq *cq;
	struct fid_cntr *cntr;
	uint64_t threshold;
	ssize_t ret;
	double took;
};

static void *cq_sreader(void *arg)
{
	struct waiter *w = arg;
	struct fi_cq_tagged_entry e;
	double t0 = now_s();

	w->ret = fi_cq_sread(w->cq, &e, 1, NULL, 20000);
	w->took = now_s() - t0;
	return NULL;
}

/*
 * A thread in fi_cq_sread() on a CQ no endpoint used yet; then an
 * endpoint is enabled on it (the CQ's kernel ring is made then) and sends
 * itself a message: the reader wakes for its completions, not at its
 * timeout. Before, it slept on until the timeout (20 s).
 */
static void cq_sread_wakes_for_new_ep(struct __test_metadata *_metadata,
				      enum fi_wait_obj wait_obj)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED,
				 .wait_obj = wait_obj };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	char name[64], in[8] = "", out[8] = "hello";
	size_t len = sizeof(name);
	struct prov_ctx ctx;
	struct waiter w = {};
	struct fid_av *av;
	struct fid_ep *ep;
	fi_addr_t self;
	pthread_t t;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	ASSERT_EQ(0, fi_cq_open(ctx.domain, &ca, &w.cq, NULL));
	ASSERT_EQ(0, fi_av_open(ctx.domain, &aa, &av, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, cq_sreader, &w));
	usleep(300000);
	ASSERT_EQ(0, fi_endpoint(ctx.domain, ctx.info, &ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &w.cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &self, 0, NULL));
	ASSERT_EQ(0, fi_recv(ep, in, sizeof(in), NULL, self, NULL));
	ASSERT_EQ(0, fi_send(ep, out, sizeof(out), NULL, self, NULL));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(1, w.ret);
	EXPECT_GT(10.0, w.took) TH_LOG("woke after %.1f s", w.took);
	fi_close(&ep->fid);
	fi_close(&w.cq->fid);
	fi_close(&av->fid);
	prov_close(&ctx);
}

TEST(cq_sread_wakes_for_an_endpoint_enabled_after_fd)
{
	cq_sread_wakes_for_new_ep(_metadata, FI_WAIT_FD);
}

TEST(cq_sread_wakes_for_an_endpoint_enabled_after_mutex_cond)
{
	cq_sread_wakes_for_new_ep(_metadata, FI_WAIT_MUTEX_COND);
}

static void *cntr_waiter(void *arg)
{
	struct waiter *w = arg;
	double t0 = now_s();

	w->ret = fi_cntr_wait(w->cntr, w->threshold, 20000);
	w->took = now_s() - t0;
	return NULL;
}

static void cq_signal_wakes(struct __test_metadata *_metadata,
			    enum fi_wait_obj wait_obj)
{
	struct prov_ctx ctx;
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT,
				 .wait_obj = wait_obj };
	struct waiter w = {};
	pthread_t t;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	ASSERT_EQ(0, fi_cq_open(ctx.domain, &ca, &w.cq, NULL));
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, pthread_create(&t, NULL, cq_sreader, &w));
		usleep(200000);
		ASSERT_EQ(0, fi_cq_signal(w.cq));
		ASSERT_EQ(0, pthread_join(t, NULL));
		EXPECT_EQ(-FI_EAGAIN, w.ret);
		EXPECT_GT(10.0, w.took);
	}
	fi_close(&w.cq->fid);
	prov_close(&ctx);
}

TEST(cq_signal_wakes_sread_fd) { cq_signal_wakes(_metadata, FI_WAIT_FD); }
TEST(cq_signal_wakes_sread_unspec)
{
	cq_signal_wakes(_metadata, FI_WAIT_UNSPEC);
}
TEST(cq_signal_wakes_sread_mutex_cond)
{
	cq_signal_wakes(_metadata, FI_WAIT_MUTEX_COND);
}
TEST(cq_signal_wakes_sread_yield)
{
	cq_signal_wakes(_metadata, FI_WAIT_YIELD);
}

/* CPU time the calling thread has used so far, in seconds. */
static double thread_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/*
 * fi_cq_signal with no thread in fi_cq_sread, on an fd CQ with a kernel
 * ring (an enabled endpoint): a later sread with no traffic sleeps out its
 * 300 ms timeout and returns -FI_EAGAIN - it was not signalled itself, and
 * the signal left behind must not keep it awake. Before, the signal's
 * eventfd, in the CQ's epoll set, stayed readable: the read polled it
 * over and over for its whole timeout, a CPU busy all along. A signal
 * sent while a thread is in sread still wakes it, at once.
 */
TEST(cq_stale_signal_does_not_spin_sread)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED,
				 .wait_obj = FI_WAIT_FD };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cq_tagged_entry e;
	struct prov_ctx ctx;
	struct waiter w = {};
	double t0, cpu0, took, cpu;
	struct fid_av *av;
	struct fid_ep *ep;
	pthread_t t;
	ssize_t ret;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	ASSERT_EQ(0, fi_cq_open(ctx.domain, &ca, &w.cq, NULL));
	ASSERT_EQ(0, fi_av_open(ctx.domain, &aa, &av, NULL));
	ASSERT_EQ(0, fi_endpoint(ctx.domain, ctx.info, &ep, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_ep_bind(ep, &w.cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_enable(ep));

	for (int round = 0; round < 2; round++) {
		ASSERT_EQ(0, fi_cq_signal(w.cq));
		t0 = now_s();
		cpu0 = thread_cpu_s();
		ret = fi_cq_sread(w.cq, &e, 1, NULL, 300);
		cpu = thread_cpu_s() - cpu0;
		took = now_s() - t0;
		EXPECT_EQ(-FI_EAGAIN, ret);
		EXPECT_LE(0.25, took) TH_LOG("returned after %.3f s", took);
		EXPECT_GT(5.0, took);
		EXPECT_GT(0.1, cpu)
			TH_LOG("%.3f s of CPU in a %.3f s sread", cpu, took);
	}

	/* A signal during a read wakes it. */
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, pthread_create(&t, NULL, cq_sreader, &w));
		usleep(200000);
		ASSERT_EQ(0, fi_cq_signal(w.cq));
		ASSERT_EQ(0, pthread_join(t, NULL));
		EXPECT_EQ(-FI_EAGAIN, w.ret);
		EXPECT_GT(10.0, w.took);
	}
	fi_close(&ep->fid);
	fi_close(&w.cq->fid);
	fi_close(&av->fid);
	prov_close(&ctx);
}

/*
 * Counters have no signal call: another thread's fi_cntr_add reaching the
 * threshold, or fi_cntr_adderr, wakes fi_cntr_wait.
 */
static void cntr_wakes(struct __test_metadata *_metadata,
		       enum fi_wait_obj wait_obj)
{
	struct prov_ctx ctx;
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = wait_obj };
	struct waiter w = { .threshold = 5 };
	pthread_t t;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	ASSERT_EQ(0, fi_cntr_open(ctx.domain, &attr, &w.cntr, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, cntr_waiter, &w));
	usleep(200000);
	ASSERT_EQ(0, fi_cntr_add(w.cntr, 5));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_GT(10.0, w.took);
	w.threshold = 100;
	ASSERT_EQ(0, pthread_create(&t, NULL, cntr_waiter, &w));
	usleep(200000);
	ASSERT_EQ(0, fi_cntr_adderr(w.cntr, 1));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(-FI_EAVAIL, w.ret);
	EXPECT_GT(10.0, w.took);
	fi_close(&w.cntr->fid);
	prov_close(&ctx);
}

TEST(cntr_wait_woken_fd) { cntr_wakes(_metadata, FI_WAIT_FD); }
TEST(cntr_wait_woken_mutex_cond)
{
	cntr_wakes(_metadata, FI_WAIT_MUTEX_COND);
}
TEST(cntr_wait_woken_yield) { cntr_wakes(_metadata, FI_WAIT_YIELD); }

/* ---- AVs ----------------------------------------------------------------- */

TEST(av_insert_unbound)
{
	struct node n;
	struct fid_av *av;
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_av_attr am = { .type = FI_AV_MAP };
	fi_addr_t addr = FI_ADDR_NOTAVAIL;
	char back[64];
	size_t len = sizeof(back);

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&n, FI_EP_RDM, FI_MSG));
	ASSERT_EQ(0, fi_av_open(n.domain, &aa, &av, NULL));
	EXPECT_EQ(1, fi_av_insert(av, n.name, 1, &addr, 0, NULL));
	EXPECT_EQ(0, addr);
	EXPECT_EQ(0, fi_av_lookup(av, addr, back, &len));
	EXPECT_EQ(0, memcmp(back, n.name, n.namelen));
	EXPECT_EQ(0, fi_av_remove(av, &addr, 1, 0));
	fi_close(&av->fid);
	ASSERT_EQ(0, fi_av_open(n.domain, &am, &av, NULL));
	EXPECT_EQ(1, fi_av_insert(av, n.name, 1, &addr, 0, NULL));
	EXPECT_NE(FI_ADDR_NOTAVAIL, addr);
	fi_close(&av->fid);
	node_close(&n);
}

/* ---- fi_mr_reg access flags ---------------------------------------------- */

TEST(mr_reg_every_access_combination)
{
	static const uint64_t bits[] = {
		FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ,
		FI_REMOTE_WRITE,
	};
	struct node n;
	static char buf[8192];

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&n, FI_EP_RDM, FI_MSG | FI_RMA));
	for (unsigned int m = 1; m < 1U << 6; m++) {
		uint64_t access = 0;
		struct fid_mr *mr;
		int ret;

		for (int i = 0; i < 6; i++)
			if (m & 1U << i)
				access |= bits[i];
		ret = fi_mr_reg(n.domain, buf, sizeof(buf), access, 0, 0, 0,
				&mr, NULL);
		if (ret)
			TH_LOG("access %#llx: %d", (unsigned long long)access,
			       ret);
		EXPECT_EQ(0, ret);
		if (!ret)
			fi_close(&mr->fid);
	}
	node_close(&n);
}

/* ---- CQ data between two processes --------------------------------------- */

static void cq_data_two_procs(struct __test_metadata *_metadata,
			      enum fi_ep_type type, uint64_t caps)
{
	struct fi_cq_tagged_entry e;
	struct node n;
	struct duo d;
	char buf[64];

	PROV_REQUIRE_DEVICE();
	duo_fork(_metadata, &d);
	if (!d.pid) {
		struct node c;
		char pname[64];

		if (child_to_peer_host() || node_open(&c, type, caps))
			_exit(2);
		if (duo_read(d.p2c[0], pname, 64) ||
		    fi_av_insert(c.av, pname, 1, &c.peer, 0, NULL) != 1)
			_exit(3);
		if (fi_recv(c.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, NULL))
			_exit(4);
		if (write(d.c2p[1], c.name, 64) != 64)
			_exit(5);
		if (cq_get(c.cq, &e) != 1 || !(e.flags & FI_REMOTE_CQ_DATA) ||
		    e.data != 0x1234567890abcdefULL || strcmp(buf, "data"))
			_exit(6);
		if (fi_senddata(c.ep, "back", 5, NULL, 0xfeedULL, c.peer,
				NULL) || cq_get(c.cq, &e) != 1)
			_exit(7);
		node_close(&c);
		_exit(0);
	}
	ASSERT_EQ(0, node_open(&n, type, caps));
	ASSERT_EQ(64, write(d.p2c[1], n.name, 64));
	ASSERT_EQ(0, duo_read(d.c2p[0], buf, 64));
	ASSERT_EQ(1, fi_av_insert(n.av, buf, 1, &n.peer, 0, NULL));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, fi_recv(n.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			     NULL));
	ASSERT_EQ(0, fi_senddata(n.ep, "data", 5, NULL, 0x1234567890abcdefULL,
				 n.peer, NULL));
	for (int got = 0; got < 2; got++) {
		ASSERT_EQ(1, cq_get(n.cq, &e));
		if (e.flags & FI_RECV) {
			EXPECT_TRUE(e.flags & FI_REMOTE_CQ_DATA);
			EXPECT_EQ(0xfeedULL, e.data);
		}
	}
	EXPECT_STREQ("back", buf);
	duo_wait(_metadata, &d);
	node_close(&n);
}

TEST(cq_data_rdm_two_processes)
{
	cq_data_two_procs(_metadata, FI_EP_RDM, FI_MSG);
}

TEST(cq_data_dgram_two_processes)
{
	cq_data_two_procs(_metadata, FI_EP_DGRAM, FI_MSG);
}

/* Tagged FI_PEEK/FI_CLAIM/FI_DISCARD, the sender in another process. */
TEST(peek_claim_discard_two_processes)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = {};
	struct fi_context c1, c2;
	uint64_t got = 0;
	struct node n;
	struct duo d;
	char buf[64];

	PROV_REQUIRE_DEVICE();
	duo_fork(_metadata, &d);
	if (!d.pid) {
		struct node c;
		char pname[64];

		if (child_to_peer_host() ||
		    node_open(&c, FI_EP_RDM, FI_MSG | FI_TAGGED))
			_exit(2);
		if (duo_read(d.p2c[0], pname, 64) ||
		    fi_av_insert(c.av, pname, 1, &c.peer, 0, NULL) != 1)
			_exit(3);
		if (write(d.c2p[1], c.name, 64) != 64)
			_exit(5);
		for (uint64_t v = 1; v <= 3; v++) {
			if (fi_tsenddata(c.ep, &v, sizeof(v), NULL, v * 10,
					 c.peer, 0x100 + v, NULL) ||
			    cq_get(c.cq, &e) != 1)
				_exit(10 + v);
		}
		/* Stay until the parent is done. */
		duo_read(d.p2c[0], pname, 1);
		node_close(&c);
		_exit(0);
	}
	ASSERT_EQ(0, node_open(&n, FI_EP_RDM, FI_MSG | FI_TAGGED));
	ASSERT_EQ(64, write(d.p2c[1], n.name, 64));
	ASSERT_EQ(0, duo_read(d.c2p[0], buf, 64));
	ASSERT_EQ(1, fi_av_insert(n.av, buf, 1, &n.peer, 0, NULL));

	for (uint64_t v = 1; v <= 3; v++) {
		struct iovec iov = { &got, sizeof(got) };
		struct fi_msg_tagged m = {
			.msg_iov = &iov, .iov_count = 1,
			.addr = FI_ADDR_UNSPEC, .tag = 0x100 + v,
			.context = &c1,
		};
		uint64_t flags = v == 1 ? FI_PEEK : v == 2 ?
				 FI_PEEK | FI_CLAIM : FI_PEEK | FI_DISCARD;
		int tries;

		/* Peek until the child's message is there (bounded). */
		for (tries = 0; tries < 500; tries++) {
			ssize_t r;

			ASSERT_EQ(0, fi_trecvmsg(n.ep, &m, flags));
			r = cq_get(n.cq, &e);
			if (r == 1)
				break;
			ASSERT_EQ(-FI_EAVAIL, r);
			ASSERT_EQ(1, fi_cq_readerr(n.cq, &err, 0));
			ASSERT_EQ(FI_ENOMSG, err.err);
			usleep(10000);
		}
		ASSERT_GT(500, tries);
		EXPECT_EQ(v * 10, e.data);
		EXPECT_EQ(0x100 + v, e.tag);
		got = 0;
		if (v == 1) {
			ASSERT_EQ(0, fi_trecv(n.ep, &got, sizeof(got), NULL,
					      FI_ADDR_UNSPEC, 0x101, 0, &c2));
			ASSERT_EQ(1, cq_get(n.cq, &e));
			EXPECT_EQ(1, got);
		} else if (v == 2) {
			m.tag = 0;
			ASSERT_EQ(0, fi_trecvmsg(n.ep, &m, FI_CLAIM));
			ASSERT_EQ(1, cq_get(n.cq, &e));
			EXPECT_EQ(2, got);
		} else {
			/* Discarded: a later peek finds nothing. */
			ASSERT_EQ(0, fi_trecvmsg(n.ep, &m, FI_PEEK));
			ASSERT_EQ(-FI_EAVAIL, cq_get(n.cq, &e));
			ASSERT_EQ(1, fi_cq_readerr(n.cq, &err, 0));
			EXPECT_EQ(FI_ENOMSG, err.err);
		}
	}
	ASSERT_EQ(1, write(d.p2c[1], "x", 1));
	duo_wait(_metadata, &d);
	node_close(&n);
}

/* ---- FI_FENCE ------------------------------------------------------------ */

TEST(fence_is_offered_and_fences)
{
	struct node a, b;
	struct fi_cq_tagged_entry e;
	static char src[1 << 20], dst[1 << 20], back[1 << 20];
	struct fid_mr *smr, *dmr, *bmr;
	void *sdesc, *bdesc;
	uint64_t key;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&a, FI_EP_RDM, FI_MSG | FI_RMA | FI_FENCE));
	EXPECT_TRUE(a.info->caps & FI_FENCE);
	ASSERT_EQ(0, peer_node_open(&b, FI_EP_RDM, FI_MSG | FI_RMA | FI_FENCE));
	ASSERT_EQ(1, fi_av_insert(a.av, b.name, 1, &a.peer, 0, NULL));
	memset(src, 'w', sizeof(src));
	ASSERT_EQ(0, fi_mr_reg(a.domain, src, sizeof(src), FI_WRITE, 0, 0, 0,
			       &smr, NULL));
	ASSERT_EQ(0, fi_mr_reg(a.domain, back, sizeof(back), FI_READ, 0, 0, 0,
			       &bmr, NULL));
	ASSERT_EQ(0, fi_mr_reg(b.domain, dst, sizeof(dst),
			       FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &dmr,
			       NULL));
	sdesc = fi_mr_desc(smr);
	bdesc = fi_mr_desc(bmr);
	key = fi_mr_key(dmr);
	for (int round = 0; round < 4; round++) {
		struct iovec wiov = { src, sizeof(src) };
		struct iovec riov = { back, sizeof(back) };
		struct fi_rma_iov rma = { raddr(b.info, dst, dst), sizeof(dst),
					  key };
		struct fi_msg_rma w = {
			.msg_iov = &wiov, .desc = &sdesc, .iov_count = 1,
			.addr = a.peer, .rma_iov = &rma, .rma_iov_count = 1,
		};
		struct fi_msg_rma r = w;

		memset(src, 'a' + round, sizeof(src));
		r.msg_iov = &riov;
		r.desc = &bdesc;
		ASSERT_EQ(0, fi_writemsg(a.ep, &w, FI_COMPLETION));
		ASSERT_EQ(0, fi_readmsg(a.ep, &r, FI_COMPLETION | FI_FENCE));
		ASSERT_EQ(1, cq_get(a.cq, &e));
		ASSERT_EQ(1, cq_get(a.cq, &e));
		ASSERT_EQ('a' + round, back[0]);
		ASSERT_EQ('a' + round, back[sizeof(back) - 1]);
	}
	/* A fenced send too. */
	{
		char rb[8] = "";

		ASSERT_EQ(1, fi_av_insert(b.av, a.name, 1, &b.peer, 0, NULL));
		ASSERT_EQ(0, fi_recv(b.ep, rb, sizeof(rb), NULL,
				     FI_ADDR_UNSPEC, NULL));
		{
			struct iovec iov = { "fence", 6 };
			struct fi_msg m = { .msg_iov = &iov, .iov_count = 1,
					    .addr = a.peer };

			ASSERT_EQ(0, fi_sendmsg(a.ep, &m,
						FI_COMPLETION | FI_FENCE));
		}
		ASSERT_EQ(1, cq_get(a.cq, &e));
		ASSERT_EQ(1, cq_get(b.cq, &e));
		EXPECT_STREQ("fence", rb);
	}
	fi_close(&smr->fid);
	fi_close(&bmr->fid);
	fi_close(&dmr->fid);
	node_close(&a);
	node_close(&b);
}

/*
 * A fenced write waits for an earlier delivery-complete send that its
 * target has buffered and not received yet: the write is not placed until
 * the receive takes the send; an unfenced write is placed at once (across,
 * as soon as it has crossed: the target holds the send, and executes the
 * write after it).
 */
TEST(fence_waits_for_earlier_completion)
{
	struct fi_cq_tagged_entry e;
	struct node a, b;
	static uint64_t dst[8];
	uint64_t v = 7, got = 0;
	struct fid_mr *dmr;
	uint64_t key;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&a, FI_EP_RDM, FI_MSG | FI_RMA | FI_FENCE));
	ASSERT_EQ(0, peer_node_open(&b, FI_EP_RDM, FI_MSG | FI_RMA | FI_FENCE));
	ASSERT_EQ(1, fi_av_insert(a.av, b.name, 1, &a.peer, 0, NULL));
	ASSERT_EQ(0, fi_mr_reg(b.domain, dst, sizeof(dst), FI_REMOTE_WRITE, 0,
			       0, 0, &dmr, NULL));
	key = fi_mr_key(dmr);
	for (int fenced = 0; fenced < 2; fenced++) {
		struct iovec siov = { &v, sizeof(v) };
		struct fi_msg sm = { .msg_iov = &siov, .iov_count = 1,
				     .addr = a.peer };
		uint64_t one = 100 + fenced;
		struct iovec wiov = { &one, sizeof(one) };
		struct fi_rma_iov rma = { raddr(b.info, dst, dst), sizeof(one),
					  key };
		struct fi_msg_rma wm = {
			.msg_iov = &wiov, .iov_count = 1, .addr = a.peer,
			.rma_iov = &rma, .rma_iov_count = 1,
		};
		int done = 0;

		dst[0] = 0;
		ASSERT_EQ(0, fi_sendmsg(a.ep, &sm, FI_COMPLETION |
					FI_DELIVERY_COMPLETE));
		ASSERT_EQ(0, fi_writemsg(a.ep, &wm, FI_COMPLETION |
					 (fenced ? FI_FENCE : 0)));
		usleep(100000);
		if (fenced) {
			/* Reading progresses (a doorbell): the fence holds. */
			EXPECT_EQ(-FI_EAGAIN, fi_cq_read(a.cq, &e, 1));
			usleep(100000);
			EXPECT_EQ(0, dst[0]);
		} else {
			/* Unfenced: placed at once, the send still waits. */
			for (int i = 0; prov_across() && i < 5000 &&
			     __atomic_load_n(&dst[0], __ATOMIC_ACQUIRE) != 100;
			     i++)
				usleep(1000);
			EXPECT_EQ(100, dst[0]);
		}
		ASSERT_EQ(0, fi_recv(b.ep, &got, sizeof(got), NULL,
				     FI_ADDR_UNSPEC, NULL));
		ASSERT_EQ(1, cq_get(b.cq, &e));
		EXPECT_EQ(7, got);
		for (int i = 0; i < 2; i++) {
			ASSERT_EQ(1, cq_get(a.cq, &e));
			done++;
		}
		EXPECT_EQ(2, done);
		EXPECT_EQ(100 + fenced, dst[0]);
	}
	fi_close(&dmr->fid);
	node_close(&a);
	node_close(&b);
}

/* Without FI_FENCE in the endpoint's caps, the flag is refused. */
TEST(fence_without_cap_is_einval)
{
	struct node a;
	struct iovec iov = { "x", 1 };
	struct fi_msg m = { .msg_iov = &iov, .iov_count = 1 };

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&a, FI_EP_RDM, FI_MSG));
	EXPECT_FALSE(a.info->caps & FI_FENCE);
	ASSERT_EQ(1, fi_av_insert(a.av, a.name, 1, &m.addr, 0, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_sendmsg(a.ep, &m, FI_FENCE));
	node_close(&a);
}

/* ---- multi-iov limits ------------------------------------------------------ */

TEST(rma_iov_limits_are_kept)
{
	struct fi_cq_tagged_entry e;
	struct node a, b;
	static char dst[3000], src[3000], back[3000];
	struct fid_mr *dmr;
	uint64_t key;
	struct iovec wiov[3] = {
		{ src, 1000 }, { src + 1000, 1500 }, { src + 2500, 500 },
	};
	struct iovec riov[3] = {
		{ back + 2000, 1000 }, { back, 700 }, { back + 700, 1300 },
	};
	struct fi_rma_iov r2[2];
	struct fi_msg_rma m = {};
	struct iovec many[SWNIC_MR_IOV_MAX + 1];
	struct fid_mr *mr;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&a, FI_EP_RDM, FI_MSG | FI_RMA));
	ASSERT_EQ(0, peer_node_open(&b, FI_EP_RDM, FI_MSG | FI_RMA));
	/* What is reported is what a work request carries. */
	EXPECT_EQ(1, a.info->tx_attr->rma_iov_limit);
	EXPECT_EQ(SWNIC_MR_IOV_MAX, a.info->domain_attr->mr_iov_limit);
	ASSERT_LE(3, a.info->tx_attr->iov_limit);
	ASSERT_EQ(1, fi_av_insert(a.av, b.name, 1, &a.peer, 0, NULL));
	ASSERT_EQ(0, fi_mr_reg(b.domain, dst, sizeof(dst),
			       FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &dmr,
			       NULL));
	key = fi_mr_key(dmr);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)(i * 7);
	/* Several local iovs: gathered for a write, scattered for a read. */
	ASSERT_EQ(0, fi_writev(a.ep, wiov, NULL, 3, a.peer,
			       raddr(b.info, dst, dst), key, NULL));
	ASSERT_EQ(1, cq_get(a.cq, &e));
	EXPECT_EQ(0, memcmp(dst, src, sizeof(src)));
	ASSERT_EQ(0, fi_readv(a.ep, riov, NULL, 3, a.peer,
			      raddr(b.info, dst, dst), key, NULL));
	ASSERT_EQ(1, cq_get(a.cq, &e));
	EXPECT_EQ(0, memcmp(back + 2000, src, 1000));
	EXPECT_EQ(0, memcmp(back, src + 1000, 2000));
	/* More remote iovs than reported: -FI_EINVAL. */
	r2[0] = (struct fi_rma_iov){ raddr(b.info, dst, dst), 100, key };
	r2[1] = (struct fi_rma_iov){ raddr(b.info, dst, dst + 200), 100, key };
	m.msg_iov = wiov;
	m.iov_count = 1;
	m.addr = a.peer;
	m.rma_iov = r2;
	m.rma_iov_count = 2;
	EXPECT_EQ(-FI_EINVAL, fi_writemsg(a.ep, &m, 0));
	EXPECT_EQ(-FI_EINVAL, fi_readmsg(a.ep, &m, 0));
	/* More MR iovs than mr_iov_limit: -FI_EINVAL. */
	for (size_t i = 0; i < SWNIC_MR_IOV_MAX + 1; i++)
		many[i] = wiov[0];
	EXPECT_EQ(-FI_EINVAL, fi_mr_regv(a.domain, many, SWNIC_MR_IOV_MAX + 1,
					 FI_SEND, 0, 0, 0, &mr, NULL));
	fi_close(&dmr->fid);
	node_close(&a);
	node_close(&b);
}

/* ---- fi_mr_bind: counters (FI_MR_RMA_EVENT) and endpoints ---------------- */

TEST(mr_bind_counts_remote_accesses)
{
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_tagged_entry e;
	struct fid_cntr *wcntr, *rcntr;
	struct fid_mr *wmr, *rmr;
	static char wbuf[4096] __attribute__((aligned(64)));
	static char rbuf[4096] __attribute__((aligned(64)));
	struct fi_cq_err_entry err = { 0 };
	uint64_t one = 1, old;
	char tmp[64];
	struct node a, b;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&a, FI_EP_RDM,
			       FI_MSG | FI_RMA | FI_ATOMIC | FI_RMA_EVENT));
	ASSERT_EQ(0, peer_node_open(&b, FI_EP_RDM,
				    FI_MSG | FI_RMA | FI_ATOMIC | FI_RMA_EVENT));
	ASSERT_EQ(1, fi_av_insert(a.av, b.name, 1, &a.peer, 0, NULL));
	ASSERT_EQ(0, fi_cntr_open(b.domain, &cattr, &wcntr, NULL));
	ASSERT_EQ(0, fi_cntr_open(b.domain, &cattr, &rcntr, NULL));
	/* fi_mr(3) FI_MR_RMA_EVENT: registered with FI_RMA_EVENT, bound, enabled. */
	ASSERT_EQ(0, fi_mr_reg(b.domain, wbuf, sizeof(wbuf),
			       FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0,
			       FI_RMA_EVENT, &wmr, NULL));
	ASSERT_EQ(0, fi_mr_reg(b.domain, rbuf, sizeof(rbuf),
			       FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0,
			       FI_RMA_EVENT, &rmr, NULL));
	ASSERT_EQ(0, fi_mr_bind(wmr, &wcntr->fid, FI_REMOTE_WRITE));
	ASSERT_EQ(0, fi_mr_bind(rmr, &rcntr->fid, FI_REMOTE_READ));
	EXPECT_EQ(-FI_EBUSY, fi_mr_bind(wmr, &rcntr->fid, FI_REMOTE_READ));
	EXPECT_EQ(-FI_EBADFLAGS, fi_mr_bind(rmr, &rcntr->fid, FI_SEND));
	ASSERT_EQ(0, fi_mr_enable(wmr));
	ASSERT_EQ(0, fi_mr_enable(rmr));
	/* Three writes and two reads of each region. */
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, fi_write(a.ep, "abc", 3, NULL, a.peer,
				      raddr(b.info, wbuf, wbuf), fi_mr_key(wmr), NULL));
		ASSERT_EQ(1, cq_get(a.cq, &e));
		ASSERT_EQ(0, fi_write(a.ep, "abc", 3, NULL, a.peer,
				      raddr(b.info, rbuf, rbuf), fi_mr_key(rmr), NULL));
		ASSERT_EQ(1, cq_get(a.cq, &e));
	}
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, fi_read(a.ep, tmp, 8, NULL, a.peer,
				     raddr(b.info, wbuf, wbuf), fi_mr_key(wmr), NULL));
		ASSERT_EQ(1, cq_get(a.cq, &e));
		ASSERT_EQ(0, fi_read(a.ep, tmp, 8, NULL, a.peer,
				     raddr(b.info, rbuf, rbuf), fi_mr_key(rmr), NULL));
		ASSERT_EQ(1, cq_get(a.cq, &e));
	}
	/*
	 * Atomics count as the endpoints' counters count them: one that
	 * only writes as a write, one that fetches as a read (libfabric's
	 * util providers do the same).
	 */
	ASSERT_EQ(0, fi_atomic(a.ep, &one, 1, NULL, a.peer,
			       raddr(b.info, wbuf, wbuf + 64), fi_mr_key(wmr),
			       FI_UINT64, FI_SUM, NULL));
	ASSERT_EQ(1, cq_get(a.cq, &e));
	ASSERT_EQ(0, fi_fetch_atomic(a.ep, &one, 1, NULL, &old, NULL, a.peer,
				     raddr(b.info, rbuf, rbuf + 64),
				     fi_mr_key(rmr), FI_UINT64, FI_SUM, NULL));
	ASSERT_EQ(1, cq_get(a.cq, &e));
	/* A refused access (out of range) is not counted. */
	ASSERT_EQ(0, fi_write(a.ep, "abc", 3, NULL, a.peer,
			      raddr(b.info, wbuf, wbuf + sizeof(wbuf)), fi_mr_key(wmr),
			      NULL));
	ASSERT_EQ(-FI_EAVAIL, cq_get(a.cq, &e));
	ASSERT_EQ(1, fi_cq_readerr(a.cq, &err, 0));
	ASSERT_EQ(0, fi_atomic(a.ep, &one, 1, NULL, a.peer,
			       raddr(b.info, wbuf, wbuf + sizeof(wbuf)),
			       fi_mr_key(wmr), FI_UINT64, FI_SUM, NULL));
	ASSERT_EQ(-FI_EAVAIL, cq_get(a.cq, &e));
	ASSERT_EQ(1, fi_cq_readerr(a.cq, &err, 0));
	EXPECT_EQ(4, fi_cntr_read(wcntr));
	EXPECT_EQ(3, fi_cntr_read(rcntr));
	ASSERT_EQ(0, fi_cntr_wait(wcntr, 4, WAIT_MS));
	fi_close(&wmr->fid);
	fi_close(&rmr->fid);
	fi_close(&wcntr->fid);
	fi_close(&rcntr->fid);
	node_close(&a);
	node_close(&b);
}

TEST(mr_bind_endpoint)
{
	static char buf[4096];
	struct fid_mr *mr;
	struct node a, b;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&a, FI_EP_RDM, FI_MSG | FI_RMA));
	ASSERT_EQ(0, peer_node_open(&b, FI_EP_RDM, FI_MSG | FI_RMA));
	ASSERT_EQ(0, fi_mr_reg(a.domain, buf, sizeof(buf), FI_REMOTE_WRITE, 0,
			       0, 0, &mr, NULL));
	EXPECT_EQ(0, fi_mr_bind(mr, &a.ep->fid, 0));
	EXPECT_EQ(-FI_EBADFLAGS, fi_mr_bind(mr, &a.ep->fid, FI_REMOTE_WRITE));
	/* An endpoint of another domain. */
	EXPECT_EQ(-FI_EINVAL, fi_mr_bind(mr, &b.ep->fid, 0));
	EXPECT_EQ(0, fi_mr_enable(mr));
	fi_close(&mr->fid);
	node_close(&a);
	node_close(&b);
}

/* ---- ordering hints -------------------------------------------------------- */

TEST(ordering_hints_answered)
{
	uint64_t want = FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS |
			FI_ORDER_WAR | FI_ORDER_WAW | FI_ORDER_WAS |
			FI_ORDER_SAR | FI_ORDER_SAW | FI_ORDER_SAS;
	struct fi_info *hints, *info;

	PROV_REQUIRE_DEVICE();
	for (int t = 0; t < 2; t++) {
		hints = prov_hints();
		hints->ep_attr->type = t ? FI_EP_MSG : FI_EP_RDM;
		hints->caps = FI_MSG | FI_RMA;
		hints->tx_attr->msg_order = want;
		hints->rx_attr->msg_order = want;
		ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
		EXPECT_EQ(want, info->tx_attr->msg_order & want);
		EXPECT_EQ(want, info->rx_attr->msg_order & want);
		fi_freeinfo(info);
		/* Unasked, the same ordering is reported. */
		hints->tx_attr->msg_order = 0;
		hints->rx_attr->msg_order = 0;
		ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
		EXPECT_EQ(want, info->tx_attr->msg_order & want);
		fi_freeinfo(info);
		/* One order alone. */
		hints->tx_attr->msg_order = FI_ORDER_RAW;
		ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
		EXPECT_TRUE(info->tx_attr->msg_order & FI_ORDER_RAW);
		fi_freeinfo(info);
		fi_freeinfo(hints);
	}
}

/* ---- fi_getinfo: old API, handle ----------------------------------------- */

TEST(getinfo_api_1_4_null_hints)
{
	struct fi_info *info, *cur;
	int swnic = 0;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, NULL, &info));
	for (cur = info; cur; cur = cur->next) {
		if (strcmp(cur->fabric_attr->name, "swnic"))
			continue;
		swnic++;
		/* Before 1.5 the old registration mode applies. */
		EXPECT_EQ(SWNIC_MR_BASIC, cur->domain_attr->mr_mode);
	}
	EXPECT_LT(0, swnic);
	fi_freeinfo(info);
	ASSERT_EQ(0, fi_getinfo(FI_VERSION(1, 0), NULL, NULL, 0, NULL, &info));
	fi_freeinfo(info);
}

TEST(getinfo_hints_handle_pep)
{
	struct fi_info *hints = prov_hints(), *info, *out;
	struct fid_fabric *fabric;
	struct fid_pep *pep;

	PROV_REQUIRE_DEVICE();
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fabric, NULL));
	ASSERT_EQ(0, fi_passive_ep(fabric, info, &pep, NULL));
	hints->handle = &pep->fid;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &out));
	EXPECT_EQ(&pep->fid, out->handle);
	EXPECT_EQ(FI_EP_MSG, out->ep_attr->type);
	out->handle = NULL;
	fi_freeinfo(out);
	hints->handle = NULL;
	fi_close(&pep->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* ---- MSG endpoints: cm_data, domain EQ, many connections ----------------- */

struct msgw {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *peq;
	struct fid_pep *pep;
	struct sockaddr_in addr;
};

static int msgw_open(struct msgw *w, bool listen)
{
	struct fi_info *hints = prov_hints();
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_FD, .size = 256 };
	size_t len = sizeof(w->addr);
	int ret;

	memset(w, 0, sizeof(*w));
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->addr_format = FI_SOCKADDR_IN;
	ret = prov_getinfo(NULL, NULL, 0, hints, &w->info);
	fi_freeinfo(hints);
	if (!ret)
		ret = fi_fabric(w->info->fabric_attr, &w->fabric, NULL);
	if (!ret)
		ret = fi_domain(w->fabric, w->info, &w->domain, NULL);
	if (ret || !listen)
		return ret;
	ret = fi_eq_open(w->fabric, &ea, &w->peq, NULL);
	if (!ret)
		ret = fi_passive_ep(w->fabric, w->info, &w->pep, NULL);
	if (!ret)
		ret = fi_pep_bind(w->pep, &w->peq->fid, 0);
	if (!ret)
		ret = fi_listen(w->pep);
	if (!ret)
		ret = fi_getname(&w->pep->fid, &w->addr, &len);
	return ret;
}

static void msgw_close(struct msgw *w)
{
	if (w->pep)
		fi_close(&w->pep->fid);
	if (w->peq)
		fi_close(&w->peq->fid);
	if (w->domain)
		fi_close(&w->domain->fid);
	if (w->fabric)
		fi_close(&w->fabric->fid);
	fi_freeinfo(w->info);
}

struct cm_ev {
	struct fi_eq_cm_entry entry;
	char data[256];
};

/* An MSG endpoint with a CQ, and @eq (NULL: none of its own). */
static int msg_ep(struct msgw *w, struct fi_info *info, struct fid_eq *eq,
		  struct fid_ep **ep, struct fid_cq **cq)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .size = 64 };
	int ret;

	ret = fi_endpoint(w->domain, info, ep, NULL);
	if (!ret)
		ret = fi_cq_open(w->domain, &ca, cq, NULL);
	if (!ret && eq)
		ret = fi_ep_bind(*ep, &eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(*ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(*ep);
	return ret;
}

/* Connect/accept data and CQ data, the client in another process. */
TEST(msg_cm_data_and_cq_data_two_processes)
{
	struct fi_cq_tagged_entry e;
	struct fid_eq *eq;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_FD };
	struct cm_ev ev;
	uint32_t event;
	struct msgw w;
	struct duo d;
	char buf[64] = "";

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, msgw_open(&w, true));
	duo_fork(_metadata, &d);
	if (!d.pid) {
		struct msgw c;

		if (child_to_peer_host() || msgw_open(&c, false) ||
		    fi_eq_open(c.fabric, &ea, &eq, NULL) ||
		    msg_ep(&c, c.info, eq, &ep, &cq) ||
		    fi_recv(ep, buf, sizeof(buf), NULL, 0, NULL) ||
		    fi_connect(ep, &w.addr, "hello server", 13))
			_exit(2);
		if (fi_eq_sread(eq, &event, &ev, sizeof(ev), WAIT_MS, 0) !=
		    sizeof(ev.entry) + 13 || event != FI_CONNECTED ||
		    strcmp(ev.data, "hello client"))
			_exit(3);
		if (fi_senddata(ep, "ping", 5, NULL, 0xabcdULL, 0, NULL) ||
		    cq_get(cq, &e) != 1)
			_exit(4);
		if (cq_get(cq, &e) != 1 || !(e.flags & FI_REMOTE_CQ_DATA) ||
		    e.data != 0x9876ULL || strcmp(buf, "pong"))
			_exit(5);
		if (fi_eq_sread(eq, &event, &ev, sizeof(ev), WAIT_MS, 0) !=
		    sizeof(ev.entry) || event != FI_SHUTDOWN)
			_exit(6);
		fi_close(&ep->fid);
		fi_close(&cq->fid);
		fi_close(&eq->fid);
		msgw_close(&c);
		_exit(0);
	}
	ASSERT_EQ(sizeof(ev.entry) + 13,
		  fi_eq_sread(w.peq, &event, &ev, sizeof(ev), WAIT_MS, 0));
	ASSERT_EQ(FI_CONNREQ, event);
	EXPECT_STREQ("hello server", ev.data);
	ASSERT_EQ(0, fi_eq_open(w.fabric, &ea, &eq, NULL));
	ASSERT_EQ(0, msg_ep(&w, ev.entry.info, eq, &ep, &cq));
	fi_freeinfo(ev.entry.info);
	ASSERT_EQ(0, fi_recv(ep, buf, sizeof(buf), NULL, 0, NULL));
	ASSERT_EQ(0, fi_accept(ep, "hello client", 13));
	ASSERT_EQ(sizeof(ev.entry),
		  fi_eq_sread(eq, &event, &ev, sizeof(ev), WAIT_MS, 0));
	ASSERT_EQ(FI_CONNECTED, event);
	ASSERT_EQ(1, cq_get(cq, &e));
	EXPECT_TRUE(e.flags & FI_REMOTE_CQ_DATA);
	EXPECT_EQ(0xabcdULL, e.data);
	EXPECT_STREQ("ping", buf);
	ASSERT_EQ(0, fi_senddata(ep, "pong", 5, NULL, 0x9876ULL, 0, NULL));
	ASSERT_EQ(1, cq_get(cq, &e));
	ASSERT_EQ(0, fi_shutdown(ep, 0));
	duo_wait(_metadata, &d);
	fi_close(&ep->fid);
	fi_close(&cq->fid);
	fi_close(&eq->fid);
	msgw_close(&w);
}

/* Endpoints without an EQ of their own report to the domain's. */
TEST(domain_eq_gets_cm_events)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_FD };
	struct fid_ep *cli, *srv;
	struct fid_cq *ccq, *scq;
	struct fid_eq *deq;
	struct cm_ev ev;
	uint32_t event;
	struct msgw w;
	bool cli_up = false, srv_up = false;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, msgw_open(&w, true));
	ASSERT_EQ(0, fi_eq_open(w.fabric, &ea, &deq, NULL));
	ASSERT_EQ(0, fi_domain_bind(w.domain, &deq->fid, 0));
	ASSERT_EQ(0, msg_ep(&w, w.info, NULL, &cli, &ccq));
	ASSERT_EQ(0, fi_connect(cli, &w.addr, NULL, 0));
	ASSERT_EQ(sizeof(ev.entry),
		  fi_eq_sread(w.peq, &event, &ev, sizeof(ev), WAIT_MS, 0));
	ASSERT_EQ(FI_CONNREQ, event);
	ASSERT_EQ(0, msg_ep(&w, ev.entry.info, NULL, &srv, &scq));
	fi_freeinfo(ev.entry.info);
	ASSERT_EQ(0, fi_accept(srv, NULL, 0));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(sizeof(ev.entry),
			  fi_eq_sread(deq, &event, &ev, sizeof(ev), WAIT_MS, 0));
		ASSERT_EQ(FI_CONNECTED, event);
		if (ev.entry.fid == &cli->fid)
			cli_up = true;
		if (ev.entry.fid == &srv->fid)
			srv_up = true;
	}
	EXPECT_TRUE(cli_up);
	EXPECT_TRUE(srv_up);
	ASSERT_EQ(0, fi_shutdown(srv, 0));
	ASSERT_EQ(sizeof(ev.entry),
		  fi_eq_sread(deq, &event, &ev, sizeof(ev), WAIT_MS, 0));
	EXPECT_EQ(FI_SHUTDOWN, event);
	EXPECT_EQ(&cli->fid, ev.entry.fid);
	fi_close(&cli->fid);
	fi_close(&srv->fid);
	fi_close(&ccq->fid);
	fi_close(&scq->fid);
	msgw_close(&w);
	fi_close(&deq->fid);
}

#define NCONN	16

/* Many connections pending on one listener, all from one process. */
TEST(many_msg_connections_one_process)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_FD, .size = 256 };
	struct fid_ep *cli[NCONN], *srv[NCONN];
	struct fid_cq *ccq[NCONN], *scq[NCONN];
	struct fid_eq *ceq, *seq;
	struct fi_cq_tagged_entry e;
	struct cm_ev ev;
	uint32_t event;
	struct msgw w;
	int up = 0;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, msgw_open(&w, true));
	ASSERT_EQ(0, fi_eq_open(w.fabric, &ea, &ceq, NULL));
	ASSERT_EQ(0, fi_eq_open(w.fabric, &ea, &seq, NULL));
	/* Every client connects before anyone is accepted. */
	for (int i = 0; i < NCONN; i++) {
		ASSERT_EQ(0, msg_ep(&w, w.info, ceq, &cli[i], &ccq[i]));
		ASSERT_EQ(0, fi_connect(cli[i], &w.addr, &i, sizeof(i)));
	}
	for (int i = 0; i < NCONN; i++) {
		int idx;

		ASSERT_EQ(sizeof(ev.entry) + sizeof(int),
			  fi_eq_sread(w.peq, &event, &ev, sizeof(ev), WAIT_MS,
				      0));
		ASSERT_EQ(FI_CONNREQ, event);
		memcpy(&idx, ev.data, sizeof(idx));
		ASSERT_LE(0, idx);
		ASSERT_GT(NCONN, idx);
		ASSERT_EQ(0, msg_ep(&w, ev.entry.info, seq, &srv[idx],
				    &scq[idx]));
		fi_freeinfo(ev.entry.info);
		ASSERT_EQ(0, fi_accept(srv[idx], NULL, 0));
	}
	for (int i = 0; i < 2 * NCONN; i++) {
		struct fid_eq *q = i < NCONN ? ceq : seq;

		ASSERT_EQ(sizeof(ev.entry),
			  fi_eq_sread(q, &event, &ev, sizeof(ev), WAIT_MS, 0));
		ASSERT_EQ(FI_CONNECTED, event);
		up++;
	}
	EXPECT_EQ(2 * NCONN, up);
	/* Each pair carries its own data. */
	for (int i = 0; i < NCONN; i++) {
		int v = -1, s = i * 7;

		ASSERT_EQ(0, fi_recv(srv[i], &v, sizeof(v), NULL, 0, NULL));
		ASSERT_EQ(0, fi_send(cli[i], &s, sizeof(s), NULL, 0, NULL));
		ASSERT_EQ(1, cq_get(ccq[i], &e));
		ASSERT_EQ(1, cq_get(scq[i], &e));
		EXPECT_EQ(i * 7, v);
	}
	for (int i = 0; i < NCONN; i++) {
		fi_close(&cli[i]->fid);
		fi_close(&srv[i]->fid);
		fi_close(&ccq[i]->fid);
		fi_close(&scq[i]->fid);
	}
	fi_close(&ceq->fid);
	fi_close(&seq->fid);
	msgw_close(&w);
}

/* ---- FI_HMEM ------------------------------------------------------------- */

static int hmem_from_calls, hmem_to_calls;

static ssize_t hmem_copy_from(void *dest, size_t size,
			      enum fi_hmem_iface iface, uint64_t device,
			      const struct iovec *hmem_iov,
			      size_t hmem_iov_count, uint64_t hmem_iov_offset)
{
	size_t done = 0;

	hmem_from_calls++;
	for (size_t i = 0; i < hmem_iov_count && done < size; i++) {
		size_t off = hmem_iov_offset, n;

		if (off >= hmem_iov[i].iov_len) {
			hmem_iov_offset -= hmem_iov[i].iov_len;
			continue;
		}
		n = hmem_iov[i].iov_len - off;
		if (n > size - done)
			n = size - done;
		memcpy((char *)dest + done, (char *)hmem_iov[i].iov_base + off,
		       n);
		done += n;
		hmem_iov_offset = 0;
	}
	return done;
}

static ssize_t hmem_copy_to(enum fi_hmem_iface iface, uint64_t device,
			    const struct iovec *hmem_iov, size_t hmem_iov_count,
			    uint64_t hmem_iov_offset, const void *src,
			    size_t size)
{
	size_t done = 0;

	hmem_to_calls++;
	for (size_t i = 0; i < hmem_iov_count && done < size; i++) {
		size_t off = hmem_iov_offset, n;

		if (off >= hmem_iov[i].iov_len) {
			hmem_iov_offset -= hmem_iov[i].iov_len;
			continue;
		}
		n = hmem_iov[i].iov_len - off;
		if (n > size - done)
			n = size - done;
		memcpy((char *)hmem_iov[i].iov_base + off,
		       (const char *)src + done, n);
		done += n;
		hmem_iov_offset = 0;
	}
	return done;
}

static int hmem_reg(struct fid_domain *domain, void *buf, size_t len,
		    uint64_t access, enum fi_hmem_iface iface,
		    struct fid_mr **mr)
{
	struct iovec iov = { buf, len };
	struct fi_mr_attr attr = {
		.mr_iov = &iov, .iov_count = 1, .access = access,
		.iface = iface,
	};

	return fi_mr_regattr(domain, &attr, 0, mr);
}

TEST(hmem_needs_an_override)
{
	struct fi_hmem_override_ops ops = {
		.size = sizeof(ops),
		.copy_from_hmem_iov = hmem_copy_from,
		.copy_to_hmem_iov = hmem_copy_to,
	};
	struct fi_cq_tagged_entry e;
	static char dev_tx[4096], dev_rx[4096];
	struct fid_mr *txmr, *rxmr, *mr;
	void *txd, *rxd;
	struct node a, b;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, node_open(&a, FI_EP_RDM, FI_MSG));
	ASSERT_EQ(0, peer_node_open(&b, FI_EP_RDM, FI_MSG));
	ASSERT_EQ(1, fi_av_insert(a.av, b.name, 1, &a.peer, 0, NULL));
	/*
	 * No override (and no FI_HMEM, which swnic never offers): iface is
	 * ignored, the region is host memory (prov_mr's
	 * device_iface_ignored_without_fi_hmem).
	 */
	EXPECT_EQ(0, hmem_reg(a.domain, dev_tx, sizeof(dev_tx), FI_SEND,
			      FI_HMEM_CUDA, &mr));
	fi_close(&mr->fid);
	EXPECT_EQ(0, hmem_reg(a.domain, dev_tx, sizeof(dev_tx), FI_SEND,
			      FI_HMEM_SYSTEM, &mr));
	fi_close(&mr->fid);

	ASSERT_EQ(0, fi_set_ops(&a.domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0,
				&ops, NULL));
	ASSERT_EQ(0, fi_set_ops(&b.domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0,
				&ops, NULL));
	ASSERT_EQ(0, hmem_reg(a.domain, dev_tx, sizeof(dev_tx), FI_SEND,
			      FI_HMEM_CUDA, &txmr));
	ASSERT_EQ(0, hmem_reg(b.domain, dev_rx, sizeof(dev_rx), FI_RECV,
			      FI_HMEM_CUDA, &rxmr));
	/* Remote access to such memory cannot go through the override. */
	EXPECT_EQ(-FI_EOPNOTSUPP, hmem_reg(b.domain, dev_rx, sizeof(dev_rx),
					   FI_REMOTE_WRITE, FI_HMEM_CUDA,
					   &mr));
	txd = fi_mr_desc(txmr);
	rxd = fi_mr_desc(rxmr);
	memset(dev_tx, 'h', sizeof(dev_tx));
	hmem_from_calls = hmem_to_calls = 0;
	ASSERT_EQ(0, fi_recv(b.ep, dev_rx, sizeof(dev_rx), rxd, FI_ADDR_UNSPEC,
			     NULL));
	ASSERT_EQ(0, fi_send(a.ep, dev_tx, sizeof(dev_tx), txd, a.peer, NULL));
	ASSERT_EQ(1, cq_get(a.cq, &e));
	ASSERT_EQ(1, cq_get(b.cq, &e));
	EXPECT_EQ(sizeof(dev_rx), e.len);
	EXPECT_EQ('h', dev_rx[0]);
	EXPECT_EQ('h', dev_rx[sizeof(dev_rx) - 1]);
	EXPECT_LE(1, hmem_from_calls);
	EXPECT_LE(1, hmem_to_calls);
	fi_close(&txmr->fid);
	fi_close(&rxmr->fid);
	node_close(&a);
	node_close(&b);
}

TEST_HARNESS_MAIN
