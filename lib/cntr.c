// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counters (fi_cntr(3)): the kernel counts. Each counter is a kernel
 * counter (SWNIC_IOCTL_CNTR_CREATE) whose two words, success and error,
 * are mapped read-only; the kernel increments them where operations
 * complete, including peers' RMA into this process's memory (FI_RMA_EVENT),
 * so fi_cntr_read is a load. fi_cntr_add/set and adderr/seterr change the
 * kernel's words (SWNIC_IOCTL_CNTR_UPDATE), so that triggered work waiting
 * on the counter sees them; a kernel without SWNIC_FEAT_TRIGGER has no
 * such call, and they move an offset of the provider's own (an atomic).
 *
 * Every change the provider sees (its own, and completions its CQ progress
 * moves) signals the wait object, so fi_cntr_wait() (and a poll() on the
 * FI_WAIT_FD fd) wakes up and re-checks the threshold; a change of the
 * error value ends fi_cntr_wait() with -FI_EAVAIL.
 *
 * What only the kernel sees - a peer's RMA into an MR the counter is bound
 * to, completions no one progresses - makes the FI_WAIT_FD fd readable
 * too: the kernel counter's fd is in its epoll set (SWNIC_FEAT_CNTR_POLL),
 * readable once the counter moved past what fi_trywait() last armed it
 * with, and fi_trywait() says -FI_EAGAIN, once, for what the kernel
 * counted since the last fi_cntr_read()/fi_cntr_readerr()/fi_trywait().
 * fi_cntr_wait() arms that fd as well and sleeps in poll() on it and on
 * the kernel rings of the CQs it progresses (swnic_cntr_sleep()).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ep.h"
#include "swnic.h"

struct swnic_cntr {
	struct fid_cntr cntr_fid;
	struct swnic_domain *domain;
	uint32_t id;			/* the kernel counter's, while mapped */
	const volatile struct swnic_cntr_words *words;	/* mapped, read-only */
	size_t map_len;
	_Atomic uint64_t value_adj;	/* fi_cntr_add/set: added to the kernel's */
	_Atomic uint64_t err_adj;
	_Atomic uint64_t err_gen;	/* bumped on every error change */
	struct swnic_wait wait;
	uint64_t op_flags;		/* FI_GETOPSFLAG / FI_SETOPSFLAG */
	atomic_uint binds;		/* objects counting into it, poll sets */
	_Atomic uint64_t poll_seen;	/* value + err at the last fi_poll/add/set */
	int kfd;			/* FI_WAIT_FD: the kernel counter's fd, or -1 */
	atomic_uint waiters;		/* threads in fi_cntr_wait */
	_Atomic uint64_t app_seen;	/* kernel value + err the app last saw */

	/*
	 * CQs whose progress moves completions that this counter counts:
	 * reading or waiting on the counter progresses them (the kernel
	 * reports every operation as a CQE). Set at fi_enable.
	 */
	pthread_mutex_t cq_lock;
	struct swnic_cntr_cq {
		struct swnic_cq *cq;
		unsigned int refs;	/* endpoints' adds of it */
	} *cqs;				/* grows: as many as are bound */
	unsigned int ncqs;
	unsigned int cqs_cap;
};

static void swnic_cntr_progress(struct swnic_cntr *cntr)
{
	pthread_mutex_lock(&cntr->cq_lock);
	for (unsigned int i = 0; i < cntr->ncqs; i++)
		swnic_cq_progress_all(cntr->cqs[i].cq);
	pthread_mutex_unlock(&cntr->cq_lock);
}

static struct fi_ops swnic_cntr_fi_ops;

static struct swnic_cntr *swnic_cntr_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_CNTR ||
	    fid->ops != &swnic_cntr_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_cntr, cntr_fid.fid);
}

#define swnic_cntr(f) swnic_container_of(f, struct swnic_cntr, cntr_fid)

/* The kernel's words: written by it only, read with a load each. */
static uint64_t swnic_cntr_kvalue(const struct swnic_cntr *cntr)
{
	return __atomic_load_n(&cntr->words->value, __ATOMIC_ACQUIRE);
}

static uint64_t swnic_cntr_kerr(const struct swnic_cntr *cntr)
{
	return __atomic_load_n(&cntr->words->err, __ATOMIC_ACQUIRE);
}

static uint64_t swnic_cntr_value(struct swnic_cntr *cntr)
{
	return swnic_cntr_kvalue(cntr) + atomic_load(&cntr->value_adj);
}

static uint64_t swnic_cntr_errval(struct swnic_cntr *cntr)
{
	return swnic_cntr_kerr(cntr) + atomic_load(&cntr->err_adj);
}

static uint64_t swnic_cntr_sum(struct swnic_cntr *cntr);

/* What the application is told: progress, and note the kernel's words. */
static void swnic_cntr_app_read(struct swnic_cntr *cntr)
{
	swnic_cntr_progress(cntr);
	atomic_store(&cntr->app_seen,
		     swnic_cntr_kvalue(cntr) + swnic_cntr_kerr(cntr));
}

static uint64_t swnic_cntr_read(struct fid_cntr *cntr_fid)
{
	swnic_cntr_app_read(swnic_cntr(cntr_fid));
	return swnic_cntr_value(swnic_cntr(cntr_fid));
}

static uint64_t swnic_cntr_readerr(struct fid_cntr *cntr_fid)
{
	swnic_cntr_app_read(swnic_cntr(cntr_fid));
	return swnic_cntr_errval(swnic_cntr(cntr_fid));
}

/*
 * Change the kernel's word (SWNIC_CNTR_UPD_*). Return: 1 if the kernel has
 * no such call (the offset is used instead), 0, or a negative error.
 */
static int swnic_cntr_kupdate(struct swnic_cntr *cntr, uint32_t flags,
			      uint64_t value)
{
	struct swnic_cntr_update u = {
		.size = sizeof(u),
		.flags = flags,
		.cntr_id = cntr->id,
		.value = value,
	};

	if (!(cntr->domain->dev.attr.features & SWNIC_FEAT_TRIGGER))
		return 1;
	if (ioctl(cntr->domain->fd, SWNIC_IOCTL_CNTR_UPDATE, &u)) {
		SWNIC_WARN(FI_LOG_CNTR, "counter update: %s\n",
			   strerror(errno));
		return -errno;
	}
	return 0;
}

static int swnic_cntr_add(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct swnic_cntr *cntr = swnic_cntr(cntr_fid);
	int ret = swnic_cntr_kupdate(cntr, 0, value);

	if (ret < 0)
		return ret;
	if (ret)
		atomic_fetch_add(&cntr->value_adj, value);
	atomic_store(&cntr->poll_seen, swnic_cntr_sum(cntr));
	swnic_wait_set(&cntr->wait);
	return 0;
}

/* Set: the offset makes kernel + offset == @value (unsigned wrap-around). */
static int swnic_cntr_set(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct swnic_cntr *cntr = swnic_cntr(cntr_fid);
	int ret = swnic_cntr_kupdate(cntr, SWNIC_CNTR_UPD_SET, value);

	if (ret < 0)
		return ret;
	if (ret)
		atomic_store(&cntr->value_adj, value - swnic_cntr_kvalue(cntr));
	atomic_store(&cntr->poll_seen, swnic_cntr_sum(cntr));
	swnic_wait_set(&cntr->wait);
	return 0;
}

static int swnic_cntr_adderr(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct swnic_cntr *cntr = swnic_cntr(cntr_fid);
	int ret = swnic_cntr_kupdate(cntr, SWNIC_CNTR_UPD_ERR, value);

	if (ret < 0)
		return ret;
	if (ret)
		atomic_fetch_add(&cntr->err_adj, value);
	atomic_fetch_add(&cntr->err_gen, 1);
	atomic_store(&cntr->poll_seen, swnic_cntr_sum(cntr));
	swnic_wait_set(&cntr->wait);
	return 0;
}

static int swnic_cntr_seterr(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct swnic_cntr *cntr = swnic_cntr(cntr_fid);
	int ret = swnic_cntr_kupdate(cntr, SWNIC_CNTR_UPD_ERR |
				     SWNIC_CNTR_UPD_SET, value);

	if (ret < 0)
		return ret;
	if (ret)
		atomic_store(&cntr->err_adj, value - swnic_cntr_kerr(cntr));
	atomic_fetch_add(&cntr->err_gen, 1);
	atomic_store(&cntr->poll_seen, swnic_cntr_sum(cntr));
	swnic_wait_set(&cntr->wait);
	return 0;
}

/*
 * The longest a waiter sleeps on the kernel's fds before it looks again,
 * should a change not wake it: another thread's fi_trywait() re-arms the
 * counter's fd, and a CQ closing takes its fd out of the set.
 */
#define SWNIC_CNTR_SLEEP_MS	50

/* CQ fds swnic_cntr_sleep() polls without allocating. */
#define SWNIC_CNTR_POLL_CQS	16

/*
 * Sleep until the counter may have changed, up to @left ms (-1: no bound),
 * its fd armed by a read() just before the caller looked: on the wait
 * object's fd, which holds the kernel counter's and the provider's own
 * signal, and on the kernel rings of the CQs whose progress the counter
 * needs (a completion there is progress to make: a full ring would hold
 * the SQ back). A CQ that progress must retry without the kernel, a
 * millisecond, as before the kernel's fds could be waited on.
 */
static void swnic_cntr_sleep(struct swnic_cntr *cntr, int left)
{
	struct pollfd fds[1 + SWNIC_CNTR_POLL_CQS], *p = fds;
	int slice = SWNIC_CNTR_SLEEP_MS;
	nfds_t n = 1, max = 1 + SWNIC_CNTR_POLL_CQS;

	pthread_mutex_lock(&cntr->cq_lock);
	if (cntr->ncqs > SWNIC_CNTR_POLL_CQS) {
		p = malloc((1 + cntr->ncqs) * sizeof(*p));
		if (p)
			max = 1 + cntr->ncqs;
		else
			p = fds;
	}
	p[0] = (struct pollfd){ .fd = cntr->wait.epfd, .events = POLLIN };
	for (unsigned int i = 0; i < cntr->ncqs; i++) {
		int fd = swnic_cq_wait_fd(cntr->cqs[i].cq);

		if (fd == -FI_EAGAIN || (fd >= 0 && n == max))
			slice = 1;	/* no room: look again soon */
		else if (fd >= 0)
			p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	pthread_mutex_unlock(&cntr->cq_lock);
	if (poll(p, n, left < 0 || left > slice ? slice : left) < 0 &&
	    errno != EINTR)
		SWNIC_WARN(FI_LOG_CNTR, "counter wait: poll: %s\n",
			   strerror(errno));
	if (p != fds)
		free(p);
}

/*
 * Arm the kernel counter's fd for this waiter: only one may, as one read()
 * disarms another's poll(). Return: true if armed (the caller then looks
 * and sleeps in swnic_cntr_sleep()).
 */
static bool swnic_cntr_arm(struct swnic_cntr *cntr)
{
	struct swnic_cntr_words w;

	if (cntr->kfd < 0 || atomic_load(&cntr->waiters) != 1)
		return false;
	/* The provider's signals are taken: the fd must not stay readable. */
	swnic_wait_clear(&cntr->wait);
	return read(cntr->kfd, &w, sizeof(w)) == sizeof(w);
}

static int swnic_cntr_wait_loop(struct swnic_cntr *cntr, uint64_t threshold,
				int timeout)
{
	uint64_t start = swnic_now_ms();
	uint64_t err_gen = atomic_load(&cntr->err_gen);
	uint64_t kerr = swnic_cntr_kerr(cntr);
	unsigned int seq;
	bool armed;
	int ret, left;

	for (;;) {
		armed = swnic_cntr_arm(cntr);
		seq = swnic_wait_seq(&cntr->wait);
		if (swnic_cntr_read(&cntr->cntr_fid) >= threshold)
			return 0;
		if (atomic_load(&cntr->err_gen) != err_gen ||
		    swnic_cntr_kerr(cntr) != kerr)
			return -FI_EAVAIL;
		left = swnic_timeout_left(timeout, start);
		if (!left)
			return -FI_ETIMEDOUT;
		if (armed) {
			swnic_cntr_sleep(cntr, left);
			continue;
		}
		/*
		 * Without the kernel's fds (another waiter armed them, an
		 * older kernel, a wait set): completions the kernel queued
		 * move only by progress, and what the kernel counts itself
		 * (remote writes to an MR the counter is bound to:
		 * FI_RMA_EVENT) signals nothing: wake up every millisecond
		 * to look.
		 */
		ret = swnic_wait_wait(&cntr->wait, seq,
				      left < 0 || left > 1 ? 1 : left);
		if (ret && ret != -FI_ETIMEDOUT)
			return ret;
		if (!ret)
			/* Consumed: the fd is readable again at the next change. */
			swnic_wait_clear(&cntr->wait);
	}
}

static int swnic_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold,
			   int timeout)
{
	struct swnic_cntr *cntr = swnic_cntr(cntr_fid);
	int ret;

	if (cntr->wait.type == FI_WAIT_NONE) {
		SWNIC_WARN(FI_LOG_CNTR,
			   "fi_cntr_wait on a counter without a wait object\n");
		return -FI_EINVAL;
	}
	atomic_fetch_add(&cntr->waiters, 1);
	ret = swnic_cntr_wait_loop(cntr, threshold, timeout);
	atomic_fetch_sub(&cntr->waiters, 1);
	return ret;
}

int swnic_cntr_trywait(struct fid *fid)
{
	struct swnic_cntr *cntr = swnic_cntr_from_fid(fid);
	struct swnic_cntr_words w;
	int ret = 0;

	if (!cntr || cntr->wait.type != FI_WAIT_FD)
		return -FI_EINVAL;
	/*
	 * Arm the kernel counter's fd with its words now: any change after
	 * makes the wait fd readable. One before, that the application has
	 * not seen (read, or been told of by fi_trywait), must be read first.
	 */
	if (cntr->kfd >= 0) {
		errno = 0;
		if (read(cntr->kfd, &w, sizeof(w)) != sizeof(w)) {
			ret = errno ? -errno : -FI_EIO;
			SWNIC_WARN(FI_LOG_CNTR, "counter fd read: %s\n",
				   fi_strerror(-ret));
			return ret;
		}
		if (atomic_exchange(&cntr->app_seen, w.value + w.err) !=
		    w.value + w.err)
			ret = -FI_EAGAIN;
	}
	/* A change not yet seen by the application: read it first. */
	if (atomic_load(&cntr->wait.signals)) {
		swnic_wait_clear(&cntr->wait);
		ret = -FI_EAGAIN;
	}
	return ret;
}

static int swnic_cntr_control(struct fid *fid, int command, void *arg)
{
	struct swnic_cntr *cntr = swnic_cntr_from_fid(fid);

	switch (command) {
	case FI_GETOPSFLAG:
		if (!arg)
			return -FI_EINVAL;
		*(uint64_t *)arg = cntr->op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (!arg)
			return -FI_EINVAL;
		cntr->op_flags = *(uint64_t *)arg;
		return 0;
	default:
		return swnic_wait_control(&cntr->wait, command, arg);
	}
}

/* ---- the data path's side (ep.h) --------------------------------------- */

struct swnic_cntr *swnic_cntr_of(struct fid *fid)
{
	return swnic_cntr_from_fid(fid);
}

/* Progress moved a completion the kernel counted: wake the waiters. */
void swnic_cntr_signal(struct swnic_cntr *cntr)
{
	swnic_wait_set(&cntr->wait);
}

uint32_t swnic_cntr_kernel_id(const struct swnic_cntr *cntr)
{
	return cntr->id;
}

struct swnic_domain *swnic_cntr_domain(const struct swnic_cntr *cntr)
{
	return cntr->domain;
}

static uint64_t swnic_cntr_sum(struct swnic_cntr *cntr)
{
	swnic_cntr_progress(cntr);
	return swnic_cntr_value(cntr) + swnic_cntr_errval(cntr);
}

/*
 * fi_poll(3): has the counter changed since the last fi_poll, fi_cntr_add
 * or fi_cntr_set (and adderr/seterr)?
 */
bool swnic_cntr_poll_changed(struct swnic_cntr *cntr)
{
	uint64_t sum = swnic_cntr_sum(cntr);

	return atomic_exchange(&cntr->poll_seen, sum) != sum;
}

void swnic_cntr_bind(struct swnic_cntr *cntr, int delta)
{
	if (delta > 0)
		atomic_fetch_add(&cntr->binds, 1);
	else
		atomic_fetch_sub(&cntr->binds, 1);
}

/*
 * Reading @cntr must progress @cq (an endpoint counting into it uses it),
 * however many CQs it has. Return: 0 or -FI_ENOMEM.
 */
int swnic_cntr_add_cq(struct swnic_cntr *cntr, struct swnic_cq *cq)
{
	struct swnic_cntr_cq *cqs;
	unsigned int cap;
	int ret = 0;

	pthread_mutex_lock(&cntr->cq_lock);
	for (unsigned int i = 0; i < cntr->ncqs; i++) {
		if (cntr->cqs[i].cq == cq) {
			cntr->cqs[i].refs++;
			goto out;
		}
	}
	if (cntr->ncqs == cntr->cqs_cap) {
		cap = cntr->cqs_cap ? 2 * cntr->cqs_cap : 4;
		cqs = realloc(cntr->cqs, cap * sizeof(*cqs));
		if (!cqs) {
			ret = -FI_ENOMEM;
			goto out;
		}
		cntr->cqs = cqs;
		cntr->cqs_cap = cap;
	}
	cntr->cqs[cntr->ncqs++] = (struct swnic_cntr_cq){ .cq = cq, .refs = 1 };
out:
	pthread_mutex_unlock(&cntr->cq_lock);
	return ret;
}

/*
 * An endpoint that added @cq closes: once no endpoint needs it, reading
 * @cntr stops progressing @cq, which may then close before @cntr (an
 * entry left behind would be a freed CQ).
 */
void swnic_cntr_del_cq(struct swnic_cntr *cntr, struct swnic_cq *cq)
{
	pthread_mutex_lock(&cntr->cq_lock);
	for (unsigned int i = 0; i < cntr->ncqs; i++) {
		if (cntr->cqs[i].cq != cq)
			continue;
		if (--cntr->cqs[i].refs)
			break;
		cntr->cqs[i] = cntr->cqs[--cntr->ncqs];
		break;
	}
	pthread_mutex_unlock(&cntr->cq_lock);
}

static int swnic_cntr_close(struct fid *fid)
{
	struct swnic_cntr *cntr = swnic_cntr_from_fid(fid);
	unsigned int binds = atomic_load(&cntr->binds);

	if (binds) {
		SWNIC_WARN(FI_LOG_CNTR,
			   "counter %p still counts for %u object(s)\n",
			   (void *)fid, binds);
		return -FI_EBUSY;
	}
	swnic_wait_fini(&cntr->wait);
	if (cntr->kfd >= 0)
		close(cntr->kfd);
	pthread_mutex_destroy(&cntr->cq_lock);
	free(cntr->cqs);
	munmap((void *)cntr->words, cntr->map_len);
	swnic_domain_child(cntr->domain, SWNIC_CHILD_CNTR, -1);
	free(cntr);
	return 0;
}

/* The kernel counter behind @cntr: created and mapped. */
static int swnic_cntr_kernel_open(struct swnic_cntr *cntr)
{
	struct swnic_cntr_create c = { .size = sizeof(c) };
	void *map;
	int ret;

	if (ioctl(cntr->domain->fd, SWNIC_IOCTL_CNTR_CREATE, &c)) {
		ret = -errno;
		SWNIC_WARN(FI_LOG_CNTR, "kernel counter: %s\n", strerror(errno));
		return ret == -ENOSPC ? -FI_ENOSPC : ret;
	}
	map = mmap(NULL, c.mmap_size, PROT_READ, MAP_SHARED, c.fd, 0);
	ret = map == MAP_FAILED ? -errno : 0;
	/*
	 * The mapping keeps the counter alive: no fd per counter, but for
	 * an FI_WAIT_FD one, whose fd then watches the kernel's words too.
	 */
	if (!ret && cntr->wait.type == FI_WAIT_FD && !cntr->wait.set &&
	    (cntr->domain->dev.attr.features & SWNIC_FEAT_CNTR_POLL)) {
		ret = swnic_wait_add_fd(&cntr->wait, c.fd);
		if (!ret) {
			cntr->kfd = c.fd;
		} else {
			munmap(map, c.mmap_size);
			close(c.fd);
		}
	} else {
		close(c.fd);
	}
	if (ret)
		return ret;
	cntr->id = c.cntr_id;
	cntr->words = map;
	cntr->map_len = c.mmap_size;
	return 0;
}

static struct fi_ops swnic_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_cntr_close,
	.bind = swnic_no_bind,
	.control = swnic_cntr_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static struct fi_ops_cntr swnic_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = swnic_cntr_read,
	.readerr = swnic_cntr_readerr,
	.add = swnic_cntr_add,
	.set = swnic_cntr_set,
	.wait = swnic_cntr_wait,
	.adderr = swnic_cntr_adderr,
	.seterr = swnic_cntr_seterr,
};

int swnic_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		    struct fid_cntr **cntr_fid, void *context)
{
	struct swnic_domain *dom =
		swnic_container_of(domain, struct swnic_domain, domain_fid);
	struct fi_cntr_attr def = { .events = FI_CNTR_EVENTS_COMP,
				    .wait_obj = FI_WAIT_NONE };
	struct swnic_cntr *cntr;
	int ret;

	if (!cntr_fid)
		return -FI_EINVAL;
	if (!attr)
		attr = &def;
	if (attr->events != FI_CNTR_EVENTS_COMP) {
		SWNIC_WARN(FI_LOG_CNTR, "counter events %d unknown\n",
			   attr->events);
		return -FI_EINVAL;
	}
	if (attr->flags) {
		SWNIC_WARN(FI_LOG_CNTR, "counter flags must be 0\n");
		return -FI_EBADFLAGS;
	}
	ret = swnic_domain_reserve(dom, SWNIC_CHILD_CNTR, dom->dev.attr.max_cntr,
				   FI_LOG_CNTR, "cntr_cnt", "counters");
	if (ret)
		return ret;
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr) {
		ret = -FI_ENOMEM;
		goto err_reserved;
	}
	ret = swnic_wait_init_attr(&cntr->wait, attr->wait_obj,
				   attr->wait_set);
	if (ret)
		goto err_free;
	cntr->domain = dom;
	cntr->kfd = -1;
	ret = swnic_cntr_kernel_open(cntr);
	if (ret) {
		swnic_wait_fini(&cntr->wait);
		goto err_free;
	}
	atomic_init(&cntr->value_adj, 0);
	atomic_init(&cntr->err_adj, 0);
	atomic_init(&cntr->err_gen, 0);
	atomic_init(&cntr->binds, 0);
	pthread_mutex_init(&cntr->cq_lock, NULL);
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &swnic_cntr_fi_ops;
	cntr->cntr_fid.ops = &swnic_cntr_ops;
	atomic_init(&cntr->poll_seen, 0);
	atomic_init(&cntr->app_seen, 0);
	atomic_init(&cntr->waiters, 0);
	swnic_wait_member(&cntr->wait, &cntr->cntr_fid.fid);
	*cntr_fid = &cntr->cntr_fid;
	return 0;

err_free:
	free(cntr);
err_reserved:
	swnic_domain_child(dom, SWNIC_CHILD_CNTR, -1);
	return ret;
}
