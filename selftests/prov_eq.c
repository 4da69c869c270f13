// SPDX-License-Identifier: GPL-2.0
/*
 * Event queues of the swnic provider (fi_eq(3)): read/peek/write, sizes,
 * errors and readerr, overrun, every wait object (FD with poll() and
 * fi_trywait, MUTEX_COND, YIELD, UNSPEC, NONE), sread timeouts and wakeups
 * from another thread.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>

#include "kselftest_harness.h"
#include "prov_util.h"

FIXTURE(eq)
{
	struct prov_ctx ctx;
	struct fid_eq *eq;
};

FIXTURE_SETUP(eq)
{
	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&self->ctx, NULL));
	self->eq = NULL;
}

FIXTURE_TEARDOWN(eq)
{
	if (self->eq)
		fi_close(&self->eq->fid);
	prov_close(&self->ctx);
}

static int open_eq(struct prov_ctx *ctx, enum fi_wait_obj wait, size_t size,
		   uint64_t flags, struct fid_eq **eq)
{
	struct fi_eq_attr attr = {
		.size = size, .flags = flags, .wait_obj = wait,
	};

	return fi_eq_open(ctx->fabric, &attr, eq, NULL);
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

TEST_F(eq, write_read_peek)
{
	struct fi_eq_entry in = { .context = (void *)0x11, .data = 42 };
	struct fi_eq_entry out;
	char small[4];
	uint32_t event = 0;

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 0, FI_WRITE,
			     &self->eq));
	EXPECT_EQ(FI_CLASS_EQ, self->eq->fid.fclass);
	EXPECT_EQ(-FI_EAGAIN, fi_eq_read(self->eq, &event, &out, sizeof(out),
					 0));
	EXPECT_EQ(sizeof(in), fi_eq_write(self->eq, FI_NOTIFY, &in, sizeof(in),
					  0));
	/* Too small a buffer keeps the event. */
	EXPECT_EQ(-FI_ETOOSMALL, fi_eq_read(self->eq, &event, small,
					    sizeof(small), 0));
	EXPECT_EQ(sizeof(out), fi_eq_read(self->eq, &event, &out, sizeof(out),
					  FI_PEEK));
	EXPECT_EQ(FI_NOTIFY, event);
	memset(&out, 0, sizeof(out));
	EXPECT_EQ(sizeof(out), fi_eq_read(self->eq, &event, &out, sizeof(out),
					  0));
	EXPECT_EQ((void *)0x11, out.context);
	EXPECT_EQ(42, out.data);
	EXPECT_EQ(-FI_EAGAIN, fi_eq_read(self->eq, &event, &out, sizeof(out),
					 0));
	EXPECT_EQ(-FI_EBADFLAGS, fi_eq_read(self->eq, &event, &out,
					    sizeof(out), FI_SEND));
	EXPECT_EQ(-FI_EBADFLAGS, fi_eq_write(self->eq, FI_NOTIFY, &in,
					     sizeof(in), FI_SEND));
	EXPECT_EQ(-FI_EINVAL, fi_eq_write(self->eq, FI_NOTIFY, NULL, 0, 0));
}

TEST_F(eq, write_needs_fi_write)
{
	struct fi_eq_entry in = { 0 };

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 0, 0, &self->eq));
	EXPECT_EQ(-FI_EINVAL, fi_eq_write(self->eq, FI_NOTIFY, &in,
					  sizeof(in), 0));
}

TEST_F(eq, events_in_order_any_size)
{
	char big[300], out[300];
	uint32_t event;
	int i;

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 0, FI_WRITE,
			     &self->eq));
	for (i = 0; i < 5; i++) {
		memset(big, 'a' + i, sizeof(big));
		ASSERT_EQ(100 + i, fi_eq_write(self->eq, FI_NOTIFY + i, big,
					       100 + i, 0));
	}
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(100 + i, fi_eq_read(self->eq, &event, out,
					      sizeof(out), 0));
		EXPECT_EQ((uint32_t)(FI_NOTIFY + i), event);
		EXPECT_EQ('a' + i, out[99]);
	}
}

TEST_F(eq, full_and_sizes)
{
	struct fi_eq_entry in = { 0 };
	struct fid_eq *eq;

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 2, FI_WRITE,
			     &self->eq));
	EXPECT_EQ(sizeof(in), fi_eq_write(self->eq, 0, &in, sizeof(in), 0));
	EXPECT_EQ(sizeof(in), fi_eq_write(self->eq, 0, &in, sizeof(in), 0));
	/* The application's own write is refused, not lost. */
	EXPECT_EQ(-FI_EAGAIN, fi_eq_write(self->eq, 0, &in, sizeof(in), 0));

	EXPECT_EQ(-FI_EBADFLAGS, open_eq(&self->ctx, FI_WAIT_NONE, 0,
					 FI_SEND, &eq));
	/* FI_WAIT_SET needs attr->wait_set (prov_waitset). */
	EXPECT_EQ(-FI_EINVAL, open_eq(&self->ctx, FI_WAIT_SET, 0, 0, &eq));
	EXPECT_EQ(-FI_EINVAL, open_eq(&self->ctx, 77, 0, 0, &eq));
}

TEST_F(eq, no_wait_object)
{
	struct fi_eq_entry out;
	uint32_t event;
	int fd;

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 0, 0, &self->eq));
	EXPECT_EQ(-FI_EINVAL, fi_eq_sread(self->eq, &event, &out, sizeof(out),
					  10, 0));
	EXPECT_EQ(-FI_ENODATA, fi_control(&self->eq->fid, FI_GETWAIT, &fd));
}

TEST_F(eq, wait_fd_poll_and_trywait)
{
	struct fi_eq_entry in = { 0 }, out;
	struct fid *fids[1];
	enum fi_wait_obj obj;
	uint32_t event;
	int fd = -1;

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_FD, 0, FI_WRITE, &self->eq));
	ASSERT_EQ(0, fi_control(&self->eq->fid, FI_GETWAITOBJ, &obj));
	EXPECT_EQ(FI_WAIT_FD, obj);
	ASSERT_EQ(0, fi_control(&self->eq->fid, FI_GETWAIT, &fd));
	ASSERT_LE(0, fd);
	fids[0] = &self->eq->fid;

	EXPECT_EQ(0, readable(fd));
	EXPECT_EQ(0, fi_trywait(self->ctx.fabric, fids, 1));
	ASSERT_EQ(sizeof(in), fi_eq_write(self->eq, 0, &in, sizeof(in), 0));
	EXPECT_EQ(1, readable(fd));
	EXPECT_EQ(-FI_EAGAIN, fi_trywait(self->ctx.fabric, fids, 1));
	/* Level: still readable until the event is read. */
	EXPECT_EQ(1, readable(fd));
	ASSERT_EQ(sizeof(out), fi_eq_read(self->eq, &event, &out, sizeof(out),
					  0));
	EXPECT_EQ(0, readable(fd));
	EXPECT_EQ(0, fi_trywait(self->ctx.fabric, fids, 1));
}

struct writer {
	struct fid_eq *eq;
	int delay_ms;
};

static void *write_later(void *arg)
{
	struct writer *w = arg;
	struct fi_eq_entry in = { .data = 7 };

	usleep(w->delay_ms * 1000);
	fi_eq_write(w->eq, FI_NOTIFY, &in, sizeof(in), 0);
	return NULL;
}

/* sread times out, then is woken by a writer thread, for @wait. */
static void sread_cycle(struct __test_metadata *_metadata,
			struct prov_ctx *ctx, enum fi_wait_obj wait)
{
	struct writer w = { .delay_ms = 200 };
	struct fi_eq_entry out;
	struct timespec t0;
	pthread_t thread;
	uint32_t event;
	ssize_t ret;
	long ms;

	ASSERT_EQ(0, open_eq(ctx, wait, 0, FI_WRITE, &w.eq));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = fi_eq_sread(w.eq, &event, &out, sizeof(out), 150, 0);
	ms = sys_ms_since(&t0);
	EXPECT_EQ(-FI_EAGAIN, ret);
	EXPECT_LE(140, ms);
	EXPECT_GT(2000, ms);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&thread, NULL, write_later, &w));
	ret = fi_eq_sread(w.eq, &event, &out, sizeof(out), -1, 0);
	ms = sys_ms_since(&t0);
	pthread_join(thread, NULL);
	EXPECT_EQ(sizeof(out), ret);
	EXPECT_EQ(7, out.data);
	EXPECT_LE(150, ms);
	EXPECT_GT(5000, ms);
	EXPECT_EQ(0, fi_close(&w.eq->fid));
}

TEST_F(eq, sread_fd)
{
	sread_cycle(_metadata, &self->ctx, FI_WAIT_FD);
}

TEST_F(eq, sread_unspec)
{
	sread_cycle(_metadata, &self->ctx, FI_WAIT_UNSPEC);
}

TEST_F(eq, sread_mutex_cond)
{
	struct fi_mutex_cond mc = { 0 };

	sread_cycle(_metadata, &self->ctx, FI_WAIT_MUTEX_COND);
	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_MUTEX_COND, 0, 0, &self->eq));
	ASSERT_EQ(0, fi_control(&self->eq->fid, FI_GETWAIT, &mc));
	EXPECT_NE(NULL, mc.mutex);
	EXPECT_NE(NULL, mc.cond);
}

TEST_F(eq, sread_yield)
{
	sread_cycle(_metadata, &self->ctx, FI_WAIT_YIELD);
}

SWNIC_DEPRECATED_BEGIN
/* Asynchronous AV inserts report through the EQ: errors first. */
TEST_F(eq, readerr_and_strerror)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	struct sockaddr_in sin[2] = { { 0 } };
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_entry out;
	fi_addr_t addr[2];
	struct fid_av *av;
	uint32_t event;
	char buf[64];
	const char *s;

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 0, 0, &self->eq));
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_av_bind(av, &self->eq->fid, 0));
	sin[0].sin_family = AF_INET;
	sin[0].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin[0].sin_port = htons(1000);
	sin[1] = sin[0];
	sin[1].sin_family = AF_INET6;	/* not an swnic address */
	ASSERT_EQ(0, fi_av_insert(av, sin, 2, addr, 0, (void *)0x55));

	EXPECT_EQ(-FI_EAVAIL, fi_eq_read(self->eq, &event, &out, sizeof(out),
					 0));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->eq, &err, FI_PEEK));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->eq, &err, 0));
	EXPECT_EQ(&av->fid, err.fid);
	EXPECT_EQ((void *)0x55, err.context);
	EXPECT_EQ(1, err.data);		/* index of the failed address */
	EXPECT_EQ(FI_EINVAL, err.err);
	EXPECT_EQ(0, err.err_data_size);
	s = fi_eq_strerror(self->eq, ENOMEM, NULL, buf, sizeof(buf));
	EXPECT_EQ((const char *)buf, s);
	EXPECT_STREQ(strerror(ENOMEM), buf);

	EXPECT_EQ(-FI_EAGAIN, fi_eq_readerr(self->eq, &err, 0));
	ASSERT_EQ(sizeof(out), fi_eq_read(self->eq, &event, &out, sizeof(out),
					  0));
	EXPECT_EQ(FI_AV_COMPLETE, event);
	EXPECT_EQ(1, out.data);		/* addresses inserted */
	EXPECT_EQ((void *)0x55, out.context);
	EXPECT_EQ(0, addr[0]);
	EXPECT_EQ(FI_ADDR_NOTAVAIL, addr[1]);

	/* Bound: the EQ cannot close first. */
	EXPECT_EQ(-FI_EBUSY, fi_close(&self->eq->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
}
SWNIC_DEPRECATED_END

/*
 * fi_eq_write(3) takes any event type, FI_CONNREQ too: such an event is
 * the application's bytes, not a provider's request. Closing the EQ with
 * it unread frees neither the fi_info it may name (the application's,
 * here on the stack: freeing it aborts) nor reads past a short one.
 */
TEST_F(eq, close_leaves_written_connreq_events_alone)
{
	struct fi_info info;
	struct fi_eq_cm_entry entry = { .info = &info };
	uint32_t shorty = 0x5a5a5a5a;

	memset(&info, 0, sizeof(info));
	info.caps = 0x1234;
	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 0, FI_WRITE,
			     &self->eq));
	ASSERT_EQ(sizeof(entry), fi_eq_write(self->eq, FI_CONNREQ, &entry,
					     sizeof(entry), 0));
	ASSERT_EQ(sizeof(shorty), fi_eq_write(self->eq, FI_CONNREQ, &shorty,
					      sizeof(shorty), 0));
	ASSERT_EQ(0, fi_close(&self->eq->fid));
	self->eq = NULL;
	/* The application's fi_info is as it was. */
	EXPECT_EQ(0x1234, info.caps);
	EXPECT_EQ(NULL, info.handle);
}

SWNIC_DEPRECATED_BEGIN
TEST_F(eq, overrun)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_entry out, in = { 0 };
	struct fid_av *av;
	fi_addr_t addr;
	uint32_t event;

	ASSERT_EQ(0, open_eq(&self->ctx, FI_WAIT_NONE, 1, FI_WRITE,
			     &self->eq));
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_av_bind(av, &self->eq->fid, 0));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, fi_av_insert(av, &sin, 1, &addr, 0, NULL));
	/* The EQ holds one event: the second completion is lost. */
	ASSERT_EQ(0, fi_av_insert(av, &sin, 1, &addr, 0, NULL));

	EXPECT_EQ(sizeof(out), fi_eq_read(self->eq, &event, &out, sizeof(out),
					  0));
	EXPECT_EQ(FI_AV_COMPLETE, event);
	EXPECT_EQ(-FI_EAVAIL, fi_eq_read(self->eq, &event, &out, sizeof(out),
					 0));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(self->eq, &err, 0));
	EXPECT_EQ(FI_EOVERRUN, err.err);
	EXPECT_EQ(-FI_EOVERRUN, fi_eq_write(self->eq, 0, &in, sizeof(in), 0));
	EXPECT_EQ(0, fi_close(&av->fid));
}

/*
 * An application of API 1.4 has a shorter fi_eq_err_entry (no
 * err_data_size): readerr of an overrun writes none of what follows it.
 */
TEST(overrun_readerr_fits_an_api_1_4_entry)
{
	struct fi_eq_attr eattr = { .size = 1, .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct {
		char entry[offsetof(struct fi_eq_err_entry, err_data_size)];
		uint64_t canary;
	} old;
	struct fi_eq_entry out;
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_av *av;
	fi_addr_t addr;
	uint32_t event;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_RDM;
	ASSERT_EQ(0, fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, hints,
				&info));
	fi_freeinfo(hints);
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fabric, NULL));
	ASSERT_EQ(0, fi_domain(fabric, info, &domain, NULL));
	ASSERT_EQ(0, fi_eq_open(fabric, &eattr, &eq, NULL));
	ASSERT_EQ(0, fi_av_open(domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_av_bind(av, &eq->fid, 0));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, fi_av_insert(av, &sin, 1, &addr, 0, NULL));
	ASSERT_EQ(0, fi_av_insert(av, &sin, 1, &addr, 0, NULL));
	EXPECT_EQ(sizeof(out), fi_eq_read(eq, &event, &out, sizeof(out), 0));

	memset(&old, 0xa5, sizeof(old));
	old.canary = 0xc0ffee;
	EXPECT_LT(0, fi_eq_readerr(eq, (struct fi_eq_err_entry *)&old, 0));
	EXPECT_EQ(FI_EOVERRUN, ((struct fi_eq_err_entry *)&old)->err);
	EXPECT_EQ(0xc0ffee, old.canary);

	fi_close(&av->fid);
	fi_close(&eq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
}
SWNIC_DEPRECATED_END

/* fi_av_bind: deprecated in libfabric 2.x, still part of its API. */
SWNIC_DEPRECATED_BEGIN
/*
 * fi_domain(3), fi_cm(3), fi_av(3): a domain, a passive endpoint and an AV
 * bind only an EQ of their own fabric. Another fabric's is -FI_EINVAL and
 * nothing is bound: the other EQ holds no binding (it closes), and each
 * object still takes an EQ of its fabric afterwards.
 */
TEST(eq_of_another_fabric_is_refused)
{
	struct fi_eq_attr eattr = { .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_fabric *fabric, *fabric2;
	struct fid_eq *eq, *eq2;
	struct fid_domain *domain;
	struct fi_info *hints, *info;
	struct fid_pep *pep;
	struct fid_av *av;
	int ret;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_MSG;	/* for the passive endpoint */
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	fi_freeinfo(hints);
	/* Two fi_fabric calls: two fabrics. */
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fabric, NULL));
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fabric2, NULL));
	ASSERT_NE(fabric, fabric2);
	ASSERT_EQ(0, fi_domain(fabric, info, &domain, NULL));
	ASSERT_EQ(0, fi_passive_ep(fabric, info, &pep, NULL));
	ASSERT_EQ(0, fi_av_open(domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_eq_open(fabric, &eattr, &eq, NULL));
	ASSERT_EQ(0, fi_eq_open(fabric2, &eattr, &eq2, NULL));

	EXPECT_EQ(-FI_EINVAL, fi_domain_bind(domain, &eq2->fid, 0));
	EXPECT_EQ(-FI_EINVAL, fi_pep_bind(pep, &eq2->fid, 0));
	EXPECT_EQ(-FI_EINVAL, fi_av_bind(av, &eq2->fid, 0));
	/* Nothing bound it: it closes (a bound EQ is -FI_EBUSY). */
	ret = fi_close(&eq2->fid);
	EXPECT_EQ(0, ret);

	/* Nothing changed: each still binds its own fabric's EQ. */
	EXPECT_EQ(0, fi_domain_bind(domain, &eq->fid, 0));
	EXPECT_EQ(0, fi_pep_bind(pep, &eq->fid, 0));
	EXPECT_EQ(0, fi_av_bind(av, &eq->fid, 0));

	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&pep->fid));
	EXPECT_EQ(0, fi_close(&domain->fid));
	EXPECT_EQ(0, fi_close(&eq->fid));
	if (ret)	/* bound, on a provider without the check: free now */
		EXPECT_EQ(0, fi_close(&eq2->fid));
	EXPECT_EQ(0, fi_close(&fabric2->fid));
	EXPECT_EQ(0, fi_close(&fabric->fid));
	fi_freeinfo(info);
}
SWNIC_DEPRECATED_END

TEST_HARNESS_MAIN
