// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues of the swnic provider (fi_cq(3)). Completions are
 * appended with the provider's FI_SWNIC_CQ_OPS_1 (no endpoint needed)
 * and read through the standard calls: every format, readfrom, readerr
 * with provider and user err_data buffers (and a size without a buffer),
 * full CQs, sread timeouts, thresholds and wakeups, fi_cq_signal,
 * FI_WAIT_FD with poll() and fi_trywait, limits, and the threading
 * models: concurrent producers under FI_THREAD_SAFE, and no lock taken on
 * the read path under FI_THREAD_DOMAIN / FI_THREAD_COMPLETION. Then
 * completions the kernel produces, of an endpoint sending to itself: a
 * blocked fi_cq_sread woken by them (with a threshold too), and one CQ
 * bound to an endpoint for each direction in two calls.
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>

#include "kselftest_harness.h"
#include "prov_util.h"

/*
 * Count pthread_mutex_lock calls made by this thread while counting is on.
 * The provider is dlopen()ed into this process's global scope, so its
 * calls bind to this definition when the executable exports it.
 */
static __thread int lock_counting;
static __thread unsigned long lock_calls;

int pthread_mutex_lock(pthread_mutex_t *m)
{
	static int (*real)(pthread_mutex_t *);

	if (!real)
		real = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT,
							 "pthread_mutex_lock");
	if (lock_counting)
		lock_calls++;
	return real(m);
}

/*
 * An endpoint of the test's domain sending to itself (its own address in
 * its AV), for the tests of completions the kernel produces. Closed by the
 * teardown before the fixture's CQ, which it may be bound to.
 */
struct loop {
	struct fid_ep *ep;
	struct fid_cq *tx_cq;		/* its own, or NULL */
	struct fid_av *av;
	fi_addr_t self;
};

FIXTURE(cq)
{
	struct prov_ctx ctx;
	struct fid_cq *cq;
	struct fi_swnic_ops_cq *ops;
	struct loop loop;
};

static void loop_close(struct loop *l)
{
	if (l->ep)
		fi_close(&l->ep->fid);
	if (l->av)
		fi_close(&l->av->fid);
	if (l->tx_cq)
		fi_close(&l->tx_cq->fid);
	memset(l, 0, sizeof(*l));
}

FIXTURE_SETUP(cq)
{
	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&self->ctx, NULL));
	self->cq = NULL;
	self->ops = NULL;
	memset(&self->loop, 0, sizeof(self->loop));
}

FIXTURE_TEARDOWN(cq)
{
	loop_close(&self->loop);
	if (self->cq)
		fi_close(&self->cq->fid);
	prov_close(&self->ctx);
}

static int open_cq(FIXTURE_DATA(cq) *self, enum fi_cq_format format,
		   enum fi_wait_obj wait, size_t size)
{
	struct fi_cq_attr attr = {
		.size = size, .format = format, .wait_obj = wait,
	};
	int ret;

	ret = fi_cq_open(self->ctx.domain, &attr, &self->cq, NULL);
	if (ret)
		return ret;
	return fi_open_ops(&self->cq->fid, FI_SWNIC_CQ_OPS_1, 0,
			   (void **)&self->ops, NULL);
}

static struct fi_cq_tagged_entry entry(int i)
{
	struct fi_cq_tagged_entry e = {
		.op_context = (void *)(uintptr_t)(0x1000 + i),
		.flags = FI_RECV | FI_MSG,
		.len = 100 + i,
		.buf = (void *)(uintptr_t)(0x2000 + i),
		.data = 0x3000 + i,
		.tag = 0x4000 + i,
	};
	return e;
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

TEST_F(cq, every_format)
{
	static const enum fi_cq_format formats[] = {
		FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA,
		FI_CQ_FORMAT_TAGGED,
	};
	static const size_t sizes[] = {
		sizeof(struct fi_cq_entry), sizeof(struct fi_cq_msg_entry),
		sizeof(struct fi_cq_data_entry),
		sizeof(struct fi_cq_tagged_entry),
	};
	unsigned char buf[2 * sizeof(struct fi_cq_tagged_entry) + 16];
	struct fi_cq_tagged_entry e0 = entry(0), e1 = entry(1), *t;
	size_t i;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, open_cq(self, formats[i], FI_WAIT_NONE, 0));
		ASSERT_EQ(0, self->ops->write(self->cq, &e0, FI_ADDR_NOTAVAIL));
		ASSERT_EQ(0, self->ops->write(self->cq, &e1, FI_ADDR_NOTAVAIL));
		memset(buf, 0xee, sizeof(buf));
		ASSERT_EQ(2, fi_cq_read(self->cq, buf, 5));
		/* Two entries of the format's size, nothing written beyond. */
		EXPECT_EQ(0xee, buf[2 * sizes[i]]);
		t = (struct fi_cq_tagged_entry *)buf;
		EXPECT_EQ(e0.op_context, t->op_context);
		t = (struct fi_cq_tagged_entry *)(buf + sizes[i]);
		EXPECT_EQ(e1.op_context, t->op_context);
		if (formats[i] >= FI_CQ_FORMAT_MSG) {
			EXPECT_EQ(e1.flags, t->flags);
			EXPECT_EQ(e1.len, t->len);
		}
		if (formats[i] >= FI_CQ_FORMAT_DATA) {
			EXPECT_EQ(e1.buf, t->buf);
			EXPECT_EQ(e1.data, t->data);
		}
		if (formats[i] == FI_CQ_FORMAT_TAGGED)
			EXPECT_EQ(e1.tag, t->tag);
		EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, buf, 1));
		EXPECT_EQ(0, fi_close(&self->cq->fid));
		self->cq = NULL;
	}
}

TEST_F(cq, unspec_format_is_context)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_UNSPEC };

	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &attr, &self->cq, NULL));
	EXPECT_EQ(FI_CQ_FORMAT_CONTEXT, attr.format);
}

TEST_F(cq, readfrom)
{
	struct fi_cq_tagged_entry e = entry(3), out[2];
	fi_addr_t src[2] = { 0, 0 };

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0));
	ASSERT_EQ(0, self->ops->write(self->cq, &e, 17));
	ASSERT_EQ(0, self->ops->write(self->cq, &e, FI_ADDR_NOTAVAIL));
	ASSERT_EQ(2, fi_cq_readfrom(self->cq, out, 2, src));
	EXPECT_EQ(17, src[0]);
	EXPECT_EQ(FI_ADDR_NOTAVAIL, src[1]);
	EXPECT_EQ(e.tag, out[0].tag);
}

TEST_F(cq, readerr)
{
	struct fi_cq_tagged_entry ok = entry(0), out;
	struct fi_cq_err_entry err = {
		.op_context = (void *)0x77, .flags = FI_SEND, .len = 10,
		.olen = 5, .err = FI_ETRUNC, .prov_errno = EMSGSIZE,
	};
	struct fi_cq_err_entry got;
	char data[8] = "abcdefg", user[4], big[256];
	const char *s;
	char buf[64];

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_readerr(self->cq, &got, 0));
	err.err_data = data;
	err.err_data_size = sizeof(data);
	ASSERT_EQ(0, self->ops->write(self->cq, &ok, FI_ADDR_NOTAVAIL));
	ASSERT_EQ(0, self->ops->writeerr(self->cq, &err, FI_ADDR_NOTAVAIL));
	ASSERT_EQ(0, self->ops->writeerr(self->cq, &err, FI_ADDR_NOTAVAIL));
	/* An error pending: reads fail until it is taken. */
	EXPECT_EQ(-FI_EAVAIL, fi_cq_read(self->cq, &out, 1));

	/* err_data_size 0: the provider's buffer. */
	memset(&got, 0, sizeof(got));
	ASSERT_EQ(1, fi_cq_readerr(self->cq, &got, 0));
	EXPECT_EQ((void *)0x77, got.op_context);
	EXPECT_EQ(FI_SEND, got.flags);
	EXPECT_EQ(10, got.len);
	EXPECT_EQ(5, got.olen);
	EXPECT_EQ(FI_ETRUNC, got.err);
	EXPECT_EQ(EMSGSIZE, got.prov_errno);
	ASSERT_EQ(sizeof(data), got.err_data_size);
	EXPECT_EQ(0, memcmp(data, got.err_data, sizeof(data)));

	/* The application's buffer: truncated to its size. */
	memset(&got, 0, sizeof(got));
	got.err_data = user;
	got.err_data_size = sizeof(user);
	ASSERT_EQ(1, fi_cq_readerr(self->cq, &got, 0));
	EXPECT_EQ(sizeof(user), got.err_data_size);
	EXPECT_EQ((void *)user, got.err_data);
	EXPECT_EQ(0, memcmp(data, user, sizeof(user)));

	ASSERT_EQ(1, fi_cq_read(self->cq, &out, 1));
	EXPECT_EQ(ok.op_context, out.op_context);

	/* Error data is kept up to the domain's max_err_data. */
	memset(big, 'x', sizeof(big));
	err.err_data = big;
	err.err_data_size = sizeof(big);
	ASSERT_EQ(0, self->ops->writeerr(self->cq, &err, 0));
	memset(&got, 0, sizeof(got));
	ASSERT_EQ(1, fi_cq_readerr(self->cq, &got, 0));
	EXPECT_EQ(self->ctx.info->domain_attr->max_err_data, got.err_data_size);

	s = fi_cq_strerror(self->cq, EMSGSIZE, NULL, buf, sizeof(buf));
	EXPECT_STREQ(strerror(EMSGSIZE), s);
	/* An error completion must say what went wrong. */
	err.err = 0;
	EXPECT_EQ(-FI_EINVAL, self->ops->writeerr(self->cq, &err, 0));
	EXPECT_EQ(-FI_EBADFLAGS, fi_cq_readerr(self->cq, &got, FI_SEND));
}

/*
 * fi_cq(3): err_data_size is the size of the application's err_data
 * buffer. A size without a buffer (err_data NULL) is no buffer: the entry
 * is read whole, its error data in the provider's buffer as for an
 * err_data_size of 0 - nothing is written through NULL.
 */
TEST_F(cq, readerr_size_without_buffer)
{
	struct fi_cq_err_entry err = {
		.op_context = (void *)0x78, .flags = FI_RECV, .len = 3,
		.err = FI_EIO, .prov_errno = EIO,
	};
	struct fi_cq_err_entry got;
	char data[8] = "errdata";

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0));
	err.err_data = data;
	err.err_data_size = sizeof(data);
	ASSERT_EQ(0, self->ops->writeerr(self->cq, &err, FI_ADDR_NOTAVAIL));
	err.err_data = NULL;
	err.err_data_size = 0;
	ASSERT_EQ(0, self->ops->writeerr(self->cq, &err, FI_ADDR_NOTAVAIL));

	memset(&got, 0, sizeof(got));
	got.err_data_size = 64;
	ASSERT_EQ(1, fi_cq_readerr(self->cq, &got, 0));
	EXPECT_EQ((void *)0x78, got.op_context);
	EXPECT_EQ(FI_RECV, got.flags);
	EXPECT_EQ(3, got.len);
	EXPECT_EQ(FI_EIO, got.err);
	EXPECT_EQ(EIO, got.prov_errno);
	ASSERT_EQ(sizeof(data), got.err_data_size);
	ASSERT_NE(NULL, got.err_data);
	EXPECT_EQ(0, memcmp(data, got.err_data, sizeof(data)));

	/* An entry without error data: none, and a size of 0. */
	memset(&got, 0, sizeof(got));
	got.err_data_size = 64;
	ASSERT_EQ(1, fi_cq_readerr(self->cq, &got, 0));
	EXPECT_EQ(FI_EIO, got.err);
	EXPECT_EQ(0, got.err_data_size);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_readerr(self->cq, &got, 0));
}

TEST_F(cq, full)
{
	struct fi_cq_tagged_entry e = entry(0), out[8];
	int i;

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 4));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, self->ops->write(self->cq, &e, 0));
	EXPECT_EQ(-FI_EAGAIN, self->ops->write(self->cq, &e, 0));
	EXPECT_EQ(4, fi_cq_read(self->cq, out, 8));
	EXPECT_EQ(0, self->ops->write(self->cq, &e, 0));
}

TEST_F(cq, open_errors)
{
	struct fi_cq_attr attr = { 0 };
	struct swnic_query_device q = { .size = sizeof(q) };
	struct fid_cq *cq;

	ASSERT_EQ(0, prov_ext(self->ctx.domain)->query_device(self->ctx.domain,
							      &q));
	attr.format = 99;
	EXPECT_EQ(-FI_EINVAL, fi_cq_open(self->ctx.domain, &attr, &cq, NULL));
	attr.format = 0;
	attr.size = (size_t)q.max_cq_entries + 1;
	EXPECT_EQ(-FI_EINVAL, fi_cq_open(self->ctx.domain, &attr, &cq, NULL));
	attr.size = 0;
	attr.flags = FI_SEND;
	EXPECT_EQ(-FI_EBADFLAGS, fi_cq_open(self->ctx.domain, &attr, &cq,
					    NULL));
	attr.flags = 0;
	attr.wait_cond = 9;
	EXPECT_EQ(-FI_EINVAL, fi_cq_open(self->ctx.domain, &attr, &cq, NULL));
	attr.wait_cond = 0;
	EXPECT_EQ(-FI_EINVAL, fi_cq_open(self->ctx.domain, NULL, &cq, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_open_ops(&self->ctx.domain->fid,
					  FI_SWNIC_CQ_OPS_1, 0,
					  (void **)&self->ops, NULL));
}

TEST_F(cq, cq_cnt_limit)
{
	struct fi_cq_attr attr = { .size = 1 };
	struct swnic_query_device q = { .size = sizeof(q) };
	struct fid_cq **cqs;
	size_t i;

	ASSERT_EQ(0, prov_ext(self->ctx.domain)->query_device(self->ctx.domain,
							      &q));
	cqs = calloc(q.max_cq, sizeof(*cqs));
	ASSERT_NE(NULL, cqs);
	for (i = 0; i < q.max_cq; i++)
		ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &attr, &cqs[i], NULL));
	EXPECT_EQ(-FI_ENOSPC, fi_cq_open(self->ctx.domain, &attr, &self->cq,
					 NULL));
	for (i = 0; i < q.max_cq; i++)
		EXPECT_EQ(0, fi_close(&cqs[i]->fid));
	free(cqs);
}

TEST_F(cq, no_wait_object)
{
	struct fi_cq_entry out;

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0));
	EXPECT_EQ(-FI_EINVAL, fi_cq_sread(self->cq, &out, 1, NULL, 10));
	EXPECT_EQ(-FI_ENOSYS, fi_cq_signal(self->cq));
}

struct producer {
	FIXTURE_DATA(cq) *self;
	int delay_ms;
	int count;
	int signal;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct fi_cq_tagged_entry e = entry(9);
	int i;

	for (i = 0; i < p->count; i++) {
		usleep(p->delay_ms * 1000);
		if (p->signal)
			fi_cq_signal(p->self->cq);
		else
			p->self->ops->write(p->self->cq, &e, 0);
	}
	return NULL;
}

static void sread_cycle(struct __test_metadata *_metadata,
			FIXTURE_DATA(cq) *self, enum fi_wait_obj wait)
{
	struct producer p = { .self = self, .delay_ms = 200, .count = 1 };
	struct fi_cq_tagged_entry out[4];
	struct timespec t0;
	pthread_t thread;
	ssize_t ret;
	long ms;

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, wait, 0));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = fi_cq_sread(self->cq, out, 4, NULL, 150);
	ms = sys_ms_since(&t0);
	EXPECT_EQ(-FI_EAGAIN, ret);
	EXPECT_LE(140, ms);

	/* A completion from another thread ends an infinite wait. */
	ASSERT_EQ(0, pthread_create(&thread, NULL, produce, &p));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = fi_cq_sread(self->cq, out, 4, NULL, -1);
	ms = sys_ms_since(&t0);
	pthread_join(thread, NULL);
	EXPECT_EQ(1, ret);
	EXPECT_EQ((void *)0x1009, out[0].op_context);
	EXPECT_LE(150, ms);

	/* So does fi_cq_signal, with -FI_EAGAIN. */
	p.signal = 1;
	ASSERT_EQ(0, pthread_create(&thread, NULL, produce, &p));
	ret = fi_cq_sread(self->cq, out, 4, NULL, -1);
	pthread_join(thread, NULL);
	EXPECT_EQ(-FI_EAGAIN, ret);
}

TEST_F(cq, sread_fd)
{
	sread_cycle(_metadata, self, FI_WAIT_FD);
}

TEST_F(cq, sread_unspec)
{
	sread_cycle(_metadata, self, FI_WAIT_UNSPEC);
}

TEST_F(cq, sread_mutex_cond)
{
	sread_cycle(_metadata, self, FI_WAIT_MUTEX_COND);
}

TEST_F(cq, sread_yield)
{
	sread_cycle(_metadata, self, FI_WAIT_YIELD);
}

TEST_F(cq, sreadfrom_threshold)
{
	struct producer p = { .self = self, .delay_ms = 100, .count = 3 };
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_FD,
		.wait_cond = FI_CQ_COND_THRESHOLD,
	};
	struct fi_cq_entry out[8];
	fi_addr_t src[8];
	size_t threshold = 3;
	struct timespec t0;
	pthread_t thread;
	ssize_t ret;
	long ms;

	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &attr, &self->cq, NULL));
	ASSERT_EQ(0, fi_open_ops(&self->cq->fid, FI_SWNIC_CQ_OPS_1, 0,
				 (void **)&self->ops, NULL));
	ASSERT_EQ(0, pthread_create(&thread, NULL, produce, &p));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* fi_cq(3): "the cond field is interpreted as a size_t threshold". */
	ret = fi_cq_sreadfrom(self->cq, out, 8, src,
			      (void *)(uintptr_t)threshold, 5000);
	ms = sys_ms_since(&t0);
	pthread_join(thread, NULL);
	EXPECT_EQ(3, ret);
	EXPECT_EQ(0, src[2]);
	/* Ended by the third completion (~300 ms), not by the timeout. */
	EXPECT_GT(4000, ms);
}

/*
 * @self->loop on @self->cq's domain: its receives complete on @self->cq,
 * its sends on a CQ of its own that nobody reads.
 */
static void loop_open(struct __test_metadata *_metadata,
		      FIXTURE_DATA(cq) *self)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct loop *l = &self->loop;
	char name[64];
	size_t len = sizeof(name);

	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &l->ep,
				 NULL));
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &l->tx_cq, NULL));
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &l->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &l->tx_cq->fid, FI_TRANSMIT));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &self->cq->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &l->av->fid, 0));
	ASSERT_EQ(0, fi_enable(l->ep));
	ASSERT_EQ(0, fi_getname(&l->ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(l->av, name, 1, &l->self, 0, NULL));
}

#define LOOP_MSG "from the kernel"

/* Sends to itself from another thread, each after a delay. */
struct sender {
	struct loop *l;
	int delay_ms;
	int count;
	int ret;		/* the first failed fi_send's */
};

static void *send_later(void *arg)
{
	static const char msg[] = LOOP_MSG;
	struct sender *s = arg;
	int i;

	for (i = 0; i < s->count && !s->ret; i++) {
		usleep(s->delay_ms * 1000);
		s->ret = (int)fi_send(s->l->ep, msg, sizeof(msg), NULL,
				      s->l->self, NULL);
	}
	return NULL;
}

/*
 * fi_cq_sread blocked on an empty CQ returns the receive completion the
 * kernel writes when a send from another thread, 200 ms later, matches
 * it (a data-path completion, not the provider's own): within a finite
 * timeout, long before it expires; then with no timeout at all (-1). A
 * wait that misses the kernel's completions sleeps out the first
 * timeout, and hangs the second until the harness ends the test.
 */
static void sread_kernel(struct __test_metadata *_metadata,
			 FIXTURE_DATA(cq) *self, enum fi_wait_obj wait)
{
	struct sender s = { .l = &self->loop, .delay_ms = 200, .count = 1 };
	static const int timeouts[] = { 10000, -1 };
	struct fi_cq_tagged_entry out[4];
	char buf[32];
	struct timespec t0;
	pthread_t thread;
	ssize_t ret;
	size_t i;
	long ms;
	int ctx;

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, wait, 0));
	loop_open(_metadata, self);
	for (i = 0; i < 2; i++) {
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(0, fi_recv(self->loop.ep, buf, sizeof(buf), NULL,
				     FI_ADDR_UNSPEC, &ctx));
		ASSERT_EQ(0, pthread_create(&thread, NULL, send_later, &s));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = fi_cq_sread(self->cq, out, 4, NULL, timeouts[i]);
		ms = sys_ms_since(&t0);
		pthread_join(thread, NULL);
		ASSERT_EQ(0, s.ret);
		ASSERT_EQ(1, ret);
		EXPECT_EQ(&ctx, out[0].op_context);
		EXPECT_EQ(FI_RECV | FI_MSG, out[0].flags);
		EXPECT_EQ(sizeof(LOOP_MSG), out[0].len);
		EXPECT_STREQ(LOOP_MSG, buf);
		/* It waited for the send, and woke up at it. */
		EXPECT_LE(150, ms);
		EXPECT_GT(5000, ms);
		EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, out, 4));
	}
}

TEST_F_TIMEOUT(cq, sread_fd_kernel_completion, 30)
{
	sread_kernel(_metadata, self, FI_WAIT_FD);
}

TEST_F_TIMEOUT(cq, sread_unspec_kernel_completion, 30)
{
	sread_kernel(_metadata, self, FI_WAIT_UNSPEC);
}

/*
 * FI_CQ_COND_THRESHOLD with cond the threshold itself, 2 (fi_cq(3)): two
 * receive completions the kernel writes 100 ms apart, as sends from
 * another thread match them, end the wait together, in order - not the
 * first alone, and long before the timeout.
 */
TEST_F_TIMEOUT(cq, sread_threshold_kernel_completions, 30)
{
	struct sender s = { .l = &self->loop, .delay_ms = 100, .count = 2 };
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_FD,
		.wait_cond = FI_CQ_COND_THRESHOLD,
	};
	struct fi_cq_entry out[4];
	char buf[2][32];
	struct timespec t0;
	pthread_t thread;
	ssize_t ret;
	long ms;
	int ctx[2], i;

	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &attr, &self->cq, NULL));
	loop_open(_metadata, self);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, fi_recv(self->loop.ep, buf[i], sizeof(buf[i]),
				     NULL, FI_ADDR_UNSPEC, &ctx[i]));
	ASSERT_EQ(0, pthread_create(&thread, NULL, send_later, &s));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = fi_cq_sread(self->cq, out, 4, (void *)(uintptr_t)2, 10000);
	ms = sys_ms_since(&t0);
	pthread_join(thread, NULL);
	ASSERT_EQ(0, s.ret);
	ASSERT_EQ(2, ret);
	EXPECT_EQ(&ctx[0], out[0].op_context);
	EXPECT_EQ(&ctx[1], out[1].op_context);
	EXPECT_STREQ(LOOP_MSG, buf[1]);
	EXPECT_GT(5000, ms);
}

/*
 * fi_endpoint(3): a CQ may be bound for each direction in a call of its
 * own. Bound so (@first, then @second), one CQ takes both completions of
 * the endpoint's send to itself, holds nothing more, and is unbound when
 * the endpoint closes: it closes too (not -FI_EBUSY). A CQ whose list of
 * endpoints the second bind broke makes fi_cq_read spin: the harness's
 * timeout ends the test.
 */
static void bound_twice(struct __test_metadata *_metadata,
			FIXTURE_DATA(cq) *self, uint64_t first,
			uint64_t second)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct loop *l = &self->loop;
	char out[16] = "both ways", in[16] = "", name[64];
	int ctx_s, ctx_r, sent = 0, received = 0, i;
	struct fi_cq_tagged_entry e;
	size_t len = sizeof(name);
	ssize_t n;

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0));
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &l->ep,
				 NULL));
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &l->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &self->cq->fid, first));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &self->cq->fid, second));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &l->av->fid, 0));
	ASSERT_EQ(0, fi_enable(l->ep));
	ASSERT_EQ(0, fi_getname(&l->ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(l->av, name, 1, &l->self, 0, NULL));

	ASSERT_EQ(0, fi_recv(l->ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			     &ctx_r));
	ASSERT_EQ(0, fi_send(l->ep, out, sizeof(out), NULL, l->self,
			     &ctx_s));
	/* Both completions, within 5 s. */
	for (i = 0; i < 5000 && sent + received < 2; i++) {
		n = fi_cq_read(self->cq, &e, 1);
		if (n == -FI_EAGAIN) {
			usleep(1000);
			continue;
		}
		ASSERT_EQ(1, n);
		if (e.op_context == &ctx_s) {
			EXPECT_EQ(FI_SEND | FI_MSG, e.flags);
			sent++;
		} else {
			EXPECT_EQ(&ctx_r, e.op_context);
			EXPECT_EQ(FI_RECV | FI_MSG, e.flags);
			EXPECT_EQ(sizeof(out), e.len);
			received++;
		}
	}
	EXPECT_EQ(1, sent);
	EXPECT_EQ(1, received);
	EXPECT_STREQ(out, in);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, &e, 1));

	EXPECT_EQ(0, fi_close(&l->ep->fid));
	l->ep = NULL;
	EXPECT_EQ(0, fi_close(&l->av->fid));
	l->av = NULL;
	EXPECT_EQ(0, fi_close(&self->cq->fid));
	self->cq = NULL;
}

TEST_F_TIMEOUT(cq, bound_twice_transmit_then_recv, 30)
{
	bound_twice(_metadata, self, FI_TRANSMIT, FI_RECV);
}

TEST_F_TIMEOUT(cq, bound_twice_recv_then_transmit, 30)
{
	bound_twice(_metadata, self, FI_RECV, FI_TRANSMIT);
}

/* The name of an endpoint of @domain that was enabled and is closed. */
static void dead_name(struct __test_metadata *_metadata,
		      struct fid_domain *domain, struct fi_info *info,
		      char *name, size_t *len)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;

	ASSERT_EQ(0, fi_endpoint(domain, info, &ep, NULL));
	ASSERT_EQ(0, fi_cq_open(domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_av_open(domain, &av_attr, &av, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&ep->fid, name, len));
	ASSERT_EQ(0, fi_close(&ep->fid));
	ASSERT_EQ(0, fi_close(&av->fid));
	ASSERT_EQ(0, fi_close(&cq->fid));
}

/*
 * fi_inject(3) reports no completion; one that fails is counted as an
 * error, and reported on its endpoint's transmit CQ only. An endpoint
 * with a CQ bound FI_RECV alone has its sends completed on that CQ (the
 * kernel needs one for each direction): its reader, who posted nothing
 * there, gets no error entry - the send counter's error count says it.
 * Bound FI_TRANSMIT, the error is reported with the operation's flags:
 * FI_ATOMIC | FI_WRITE for fi_inject_atomic.
 */
TEST_F_TIMEOUT(cq, failed_inject_reported_on_its_tx_cq_only, 30)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	struct loop *l = &self->loop;
	struct fi_cq_err_entry err;
	struct fi_cq_tagged_entry e;
	struct fid_cntr *cntr;
	struct fid_ep *ep2;
	struct fid_cq *cq2;
	fi_addr_t dead;
	uint64_t v = 1;
	char name[64];
	size_t len = sizeof(name);
	ssize_t n = -FI_EAGAIN;
	int i;

	dead_name(_metadata, self->ctx.domain, self->ctx.info, name, &len);
	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0));
	ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, &cntr_attr, &cntr, NULL));
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &l->ep,
				 NULL));
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &av_attr, &l->av, NULL));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &self->cq->fid, FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &cntr->fid, FI_SEND));
	ASSERT_EQ(0, fi_ep_bind(l->ep, &l->av->fid, 0));
	ASSERT_EQ(0, fi_enable(l->ep));
	ASSERT_EQ(1, fi_av_insert(l->av, name, 1, &dead, 0, NULL));

	ASSERT_EQ(0, fi_inject(l->ep, &v, sizeof(v), dead));
	for (i = 0; i < 2000 && fi_cntr_readerr(cntr) < 1; i++) {
		n = fi_cq_read(self->cq, &e, 1);
		if (n != -FI_EAGAIN)
			break;
		usleep(1000);
	}
	EXPECT_EQ(-FI_EAGAIN, n);
	EXPECT_EQ(1, fi_cntr_readerr(cntr));
	EXPECT_EQ(0, fi_cntr_read(cntr));
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, &e, 1));

	/* Its own transmit CQ reports them, each with its flags. */
	if (!(self->ctx.info->caps & FI_ATOMIC))
		SKIP(goto out, "no FI_ATOMIC in the domain's caps");
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &ep2,
				 NULL));
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &cq2, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep2, &cq2->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep2, &l->av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep2));
	ASSERT_EQ(0, fi_inject(ep2, &v, sizeof(v), dead));
	ASSERT_EQ(0, fi_inject_atomic(ep2, &v, 1, dead, 0, 0, FI_UINT64,
				      FI_SUM));
	for (int k = 0; k < 2; k++) {
		static const uint64_t flags[2] = {
			FI_SEND | FI_MSG, FI_ATOMIC | FI_WRITE,
		};

		for (i = 0; i < 2000; i++) {
			n = fi_cq_read(cq2, &e, 1);
			if (n != -FI_EAGAIN)
				break;
			usleep(1000);
		}
		ASSERT_EQ(-FI_EAVAIL, n);
		memset(&err, 0, sizeof(err));
		ASSERT_EQ(1, fi_cq_readerr(cq2, &err, 0));
		EXPECT_EQ(NULL, err.op_context);
		EXPECT_EQ(flags[k], err.flags);
		EXPECT_NE(0, err.err);
	}
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(cq2, &e, 1));
	EXPECT_EQ(0, fi_close(&ep2->fid));
	EXPECT_EQ(0, fi_close(&cq2->fid));
out:
	loop_close(l);
	EXPECT_EQ(0, fi_close(&cntr->fid));
}

TEST_F(cq, wait_fd_poll_and_trywait)
{
	struct fi_cq_tagged_entry e = entry(0);
	struct fi_cq_entry out;
	struct fid *fids[1];
	int fd = -1;

	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_CONTEXT, FI_WAIT_FD, 0));
	ASSERT_EQ(0, fi_control(&self->cq->fid, FI_GETWAIT, &fd));
	ASSERT_LE(0, fd);
	fids[0] = &self->cq->fid;
	EXPECT_EQ(0, readable(fd));
	EXPECT_EQ(0, fi_trywait(self->ctx.fabric, fids, 1));
	ASSERT_EQ(0, self->ops->write(self->cq, &e, 0));
	EXPECT_EQ(1, readable(fd));
	EXPECT_EQ(-FI_EAGAIN, fi_trywait(self->ctx.fabric, fids, 1));
	ASSERT_EQ(1, fi_cq_read(self->cq, &out, 1));
	EXPECT_EQ(0, readable(fd));
	/* fi_cq_signal marks the fd readable too. */
	ASSERT_EQ(0, fi_cq_signal(self->cq));
	EXPECT_EQ(1, readable(fd));
	/* Other objects than EQ/CQ/counter cannot be waited on. */
	fids[0] = &self->ctx.domain->fid;
	EXPECT_EQ(-FI_EINVAL, fi_trywait(self->ctx.fabric, fids, 1));
}

struct racer {
	FIXTURE_DATA(cq) *self;
	int n;
	int written;
};

static void *race_write(void *arg)
{
	struct racer *r = arg;
	struct fi_cq_tagged_entry e = entry(1);

	while (r->written < r->n) {
		if (!r->self->ops->write(r->self->cq, &e, 0))
			r->written++;
	}
	return NULL;
}

/* FI_THREAD_SAFE: producers and a reader at once, nothing lost. */
TEST_F(cq, thread_safe_concurrency)
{
	struct racer r[4];
	struct fi_cq_entry out[64];
	pthread_t t[4];
	long total = 0;
	ssize_t n;
	int i;

	ASSERT_EQ(FI_THREAD_SAFE, self->ctx.info->domain_attr->threading);
	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 256));
	for (i = 0; i < 4; i++) {
		r[i].self = self;
		r[i].n = 20000;
		r[i].written = 0;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, race_write, &r[i]));
	}
	while (total < 4 * 20000) {
		n = fi_cq_read(self->cq, out, 64);
		if (n > 0)
			total += n;
		else
			ASSERT_EQ(-FI_EAGAIN, n);
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(4 * 20000, total);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, out, 64));
}

/* Locks taken by this thread for 1000 writes and reads of a CQ. */
static unsigned long locks_on_data_path(struct __test_metadata *_metadata,
					enum fi_threading threading,
					enum fi_wait_obj wait)
{
	struct fi_info *hints = prov_hints(), *info;
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_MSG,
				   .wait_obj = wait };
	struct fi_cq_tagged_entry e = entry(0);
	struct fi_swnic_ops_cq *ops;
	struct fi_cq_msg_entry out;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	unsigned long calls;
	int i;

	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->threading = threading;
	if (prov_getinfo(NULL, NULL, 0, hints, &info) ||
	    fi_fabric(info->fabric_attr, &fabric, NULL) ||
	    fi_domain(fabric, info, &domain, NULL) ||
	    fi_cq_open(domain, &attr, &cq, NULL) ||
	    fi_open_ops(&cq->fid, FI_SWNIC_CQ_OPS_1, 0, (void **)&ops, NULL))
		return ~0UL;

	lock_calls = 0;
	lock_counting = 1;
	for (i = 0; i < 1000; i++) {
		ops->write(cq, &e, 0);
		fi_cq_read(cq, &out, 1);
		fi_cq_read(cq, &out, 1);	/* empty */
	}
	lock_counting = 0;
	calls = lock_calls;

	fi_close(&cq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return calls;
}

/*
 * FI_THREAD_SAFE: a read with nothing to do takes no lock (a spinning
 * application's polls), and still sees what is queued meanwhile - a
 * completion, an error, one left behind by a read of fewer entries.
 */
TEST_F(cq, empty_reads_take_no_lock)
{
	struct fi_cq_err_entry err = {
		.op_context = (void *)0x77, .flags = FI_SEND, .err = FI_EIO,
	};
	struct fi_cq_tagged_entry e = entry(1), out[2];
	struct fi_cq_err_entry got = {};
	int i;

	if (dlsym(RTLD_DEFAULT, "pthread_mutex_lock") !=
	    (void *)pthread_mutex_lock)
		SKIP(return, "pthread_mutex_lock is not interposable here");
	ASSERT_EQ(FI_THREAD_SAFE, self->ctx.info->domain_attr->threading);
	ASSERT_EQ(0, open_cq(self, FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0));

	lock_calls = 0;
	lock_counting = 1;
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, out, 2));
	lock_counting = 0;
	EXPECT_EQ(0, lock_calls);

	/* Two queued, one read: the other is not left for the quiet path. */
	ASSERT_EQ(0, self->ops->write(self->cq, &e, FI_ADDR_NOTAVAIL));
	ASSERT_EQ(0, self->ops->write(self->cq, &e, FI_ADDR_NOTAVAIL));
	ASSERT_EQ(1, fi_cq_read(self->cq, out, 1));
	ASSERT_EQ(1, fi_cq_read(self->cq, out, 1));
	EXPECT_EQ(e.op_context, out[0].op_context);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, out, 2));

	/* An error is seen too; once it is taken, reads are quiet again. */
	ASSERT_EQ(0, self->ops->writeerr(self->cq, &err, FI_ADDR_NOTAVAIL));
	EXPECT_EQ(-FI_EAVAIL, fi_cq_read(self->cq, out, 2));
	EXPECT_EQ(-FI_EAVAIL, fi_cq_read(self->cq, out, 2));
	ASSERT_EQ(1, fi_cq_readerr(self->cq, &got, 0));
	EXPECT_EQ(FI_EIO, got.err);
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, out, 2));
	lock_calls = 0;
	lock_counting = 1;
	for (i = 0; i < 100; i++)
		ASSERT_EQ(-FI_EAGAIN, fi_cq_read(self->cq, out, 2));
	lock_counting = 0;
	EXPECT_EQ(0, lock_calls);
}

TEST(lock_free_threading_models)
{
	PROV_REQUIRE_DEVICE();
	if (dlsym(RTLD_DEFAULT, "pthread_mutex_lock") !=
	    (void *)pthread_mutex_lock)
		SKIP(return, "pthread_mutex_lock is not interposable here");
	/* SAFE serialises its CQ: the counter proves we can see locks. */
	EXPECT_LE(2000, locks_on_data_path(_metadata, FI_THREAD_SAFE,
					   FI_WAIT_NONE));
	EXPECT_EQ(0, locks_on_data_path(_metadata, FI_THREAD_DOMAIN,
					FI_WAIT_NONE));
	EXPECT_EQ(0, locks_on_data_path(_metadata, FI_THREAD_COMPLETION,
					FI_WAIT_FD));
}

TEST_HARNESS_MAIN
