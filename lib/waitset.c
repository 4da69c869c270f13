// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Wait sets (fi_wait_open, FI_WAIT_SET) and poll sets (fi_poll_open), as
 * fi_poll(3) describes them.
 *
 * A wait set is a wait object of its own (FI_WAIT_UNSPEC/FD: an epoll fd
 * the application may poll; FI_WAIT_MUTEX_COND; FI_WAIT_YIELD). EQs, CQs
 * and counters opened with wait_obj FI_WAIT_SET and attr->wait_set keep an
 * fd wait object of their own (so fi_cq_sread and fi_cntr_wait still
 * work), which is joined to the set: every signal of the member signals
 * the set, and the member's fd (with a CQ's kernel ring) is in the set's
 * epoll fd. fi_wait returns 0 as soon as a member has something: a CQ or
 * EQ an entry or an error, a counter a value the set has not reported yet;
 * it checks at least every 10 ms (a counter's kernel word changes without
 * a signal), else -FI_ETIMEDOUT. A set with members cannot be closed
 * (-FI_EBUSY).
 *
 * A poll set holds CQs and counters of its domain (fi_poll_add): fi_poll
 * progresses each and returns the context of every CQ that is not empty
 * and of every counter whose success or error value changed since the
 * last fi_poll, fi_cntr_add or fi_cntr_set. A member cannot be closed
 * while it is in a set (-FI_EBUSY); the set can (its members are let go).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "ep.h"

#define SWNIC_SET_MAX		256	/* members per wait or poll set */
#define SWNIC_WAITSET_SLICE_MS	10

struct swnic_set_member {
	struct fid *fid;
	struct swnic_wait *wait;	/* wait set: the member's wait object */
	uint64_t seen;			/* wait set, counters: value + err */
};

struct swnic_waitset {
	struct fid_wait wait_fid;
	struct swnic_fabric *fabric;
	struct swnic_wait wait;
	pthread_mutex_t lock;		/* members */
	struct swnic_set_member m[SWNIC_SET_MAX];
	unsigned int n;
};

struct swnic_pollset {
	struct fid_poll poll_fid;
	struct swnic_domain *domain;
	pthread_mutex_t lock;		/* members */
	struct swnic_set_member m[SWNIC_SET_MAX];
	unsigned int n;
};

static struct fi_ops swnic_waitset_fi_ops;
static struct fi_ops swnic_pollset_fi_ops;

static struct swnic_waitset *swnic_waitset_of(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_WAIT ||
	    fid->ops != &swnic_waitset_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_waitset, wait_fid.fid);
}

/* ---- members' side (wait.c, and the EQ/CQ/counter opens) ----------------- */

/**
 * swnic_wait_init_attr() - a wait object as an open's attr asks for it
 * @w: the object's wait object
 * @type: attr->wait_obj
 * @set: attr->wait_set (FI_WAIT_SET only)
 */
int swnic_wait_init_attr(struct swnic_wait *w, enum fi_wait_obj type,
			 struct fid_wait *set)
{
	struct swnic_waitset *ws;
	int ret;

	if (type != FI_WAIT_SET)
		return swnic_wait_init(w, type);
	ws = swnic_waitset_of(set ? &set->fid : NULL);
	if (!ws) {
		SWNIC_WARN(FI_LOG_CORE, "FI_WAIT_SET without a swnic wait set\n");
		return -FI_EINVAL;
	}
	ret = swnic_wait_init(w, FI_WAIT_FD);
	if (ret)
		return ret;
	pthread_mutex_lock(&ws->lock);
	if (ws->n >= SWNIC_SET_MAX) {
		pthread_mutex_unlock(&ws->lock);
		swnic_wait_fini(w);
		return -FI_ENOSPC;
	}
	if (ws->wait.type == FI_WAIT_FD) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = w->epfd };

		if (epoll_ctl(ws->wait.epfd, EPOLL_CTL_ADD, w->epfd, &ev)) {
			ret = -errno;
			pthread_mutex_unlock(&ws->lock);
			swnic_wait_fini(w);
			return ret;
		}
	}
	/* The fid is filled in by swnic_wait_member() once it exists. */
	ws->m[ws->n++] = (struct swnic_set_member){ .wait = w };
	w->set = ws;
	pthread_mutex_unlock(&ws->lock);
	return 0;
}

/* The open of @w's object finished: @fid is what fi_wait checks. */
void swnic_wait_member(struct swnic_wait *w, struct fid *fid)
{
	struct swnic_waitset *ws = w->set;

	if (!ws)
		return;
	pthread_mutex_lock(&ws->lock);
	for (unsigned int i = 0; i < ws->n; i++)
		if (ws->m[i].wait == w)
			ws->m[i].fid = fid;
	pthread_mutex_unlock(&ws->lock);
}

/* From swnic_wait_fini(): @w's object closes, it leaves its set. */
void swnic_wait_leave(struct swnic_wait *w)
{
	struct swnic_waitset *ws = w->set;

	if (!ws)
		return;
	pthread_mutex_lock(&ws->lock);
	for (unsigned int i = 0; i < ws->n; i++) {
		if (ws->m[i].wait != w)
			continue;
		if (ws->wait.type == FI_WAIT_FD)
			epoll_ctl(ws->wait.epfd, EPOLL_CTL_DEL, w->epfd, NULL);
		ws->m[i] = ws->m[--ws->n];
		break;
	}
	pthread_mutex_unlock(&ws->lock);
	w->set = NULL;
}

/* From swnic_wait_set(): a member's signal is the set's. */
void swnic_wait_set_parent(struct swnic_wait *w)
{
	if (w->set)
		swnic_wait_set(&w->set->wait);
}

/* ---- wait sets ---------------------------------------------------------------- */

/* Has member @m something? (set lock held) */
static bool swnic_member_ready(struct swnic_set_member *m)
{
	struct fid_cntr *cf;
	uint64_t sum;

	if (!m->fid)
		return false;		/* still being opened */
	switch (m->fid->fclass) {
	case FI_CLASS_CQ:
		return swnic_cq_trywait(m->fid) == -FI_EAGAIN;
	case FI_CLASS_EQ:
		return swnic_eq_trywait(m->fid) == -FI_EAGAIN;
	case FI_CLASS_CNTR:
		cf = swnic_container_of(m->fid, struct fid_cntr, fid);
		sum = fi_cntr_read(cf) + fi_cntr_readerr(cf);
		/* Seen now: its fd need not stay readable for it. */
		swnic_cntr_trywait(m->fid);
		if (sum == m->seen)
			return false;
		m->seen = sum;
		return true;
	default:
		return false;
	}
}

static bool swnic_waitset_ready(struct swnic_waitset *ws)
{
	bool ready = false;

	pthread_mutex_lock(&ws->lock);
	for (unsigned int i = 0; i < ws->n && !ready; i++)
		ready = swnic_member_ready(&ws->m[i]);
	if (!ready)
		swnic_wait_clear(&ws->wait);
	pthread_mutex_unlock(&ws->lock);
	return ready;
}

static int swnic_waitset_wait(struct fid_wait *waitset, int timeout)
{
	struct swnic_waitset *ws =
		swnic_container_of(waitset, struct swnic_waitset, wait_fid);
	uint64_t start = swnic_now_ms();
	struct epoll_event ev;
	unsigned int seq;
	int left, slice;

	for (;;) {
		seq = atomic_load(&ws->wait.seq);
		if (swnic_waitset_ready(ws))
			return 0;
		left = swnic_timeout_left(timeout, start);
		if (!left)
			return -FI_ETIMEDOUT;
		slice = left < 0 || left > SWNIC_WAITSET_SLICE_MS ?
			SWNIC_WAITSET_SLICE_MS : left;
		if (ws->wait.type == FI_WAIT_FD)
			epoll_wait(ws->wait.epfd, &ev, 1, slice);
		else if (swnic_wait_wait(&ws->wait, seq, slice) == -FI_ENOSYS)
			return -FI_ENOSYS;
	}
}

/* fi_trywait on a wait set: -FI_EAGAIN if a member has something. */
int swnic_waitset_trywait(struct fid *fid)
{
	struct swnic_waitset *ws = swnic_waitset_of(fid);

	if (!ws)
		return -FI_EINVAL;
	return swnic_waitset_ready(ws) ? -FI_EAGAIN : 0;
}

static int swnic_waitset_control(struct fid *fid, int command, void *arg)
{
	struct swnic_waitset *ws = swnic_waitset_of(fid);

	return swnic_wait_control(&ws->wait, command, arg);
}

static int swnic_waitset_close(struct fid *fid)
{
	struct swnic_waitset *ws = swnic_waitset_of(fid);

	pthread_mutex_lock(&ws->lock);
	if (ws->n) {
		SWNIC_WARN(FI_LOG_CORE, "wait set %p still has %u member(s)\n",
			   (void *)fid, ws->n);
		pthread_mutex_unlock(&ws->lock);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&ws->lock);
	swnic_wait_fini(&ws->wait);
	pthread_mutex_destroy(&ws->lock);
	swnic_fabric_child(ws->fabric, &ws->fabric->nwaits, -1);
	free(ws);
	return 0;
}

static struct fi_ops swnic_waitset_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_waitset_close,
	.bind = swnic_no_bind,
	.control = swnic_waitset_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static struct fi_ops_wait swnic_waitset_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = swnic_waitset_wait,
};

/* fi_wait_open */
int swnic_waitset_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		       struct fid_wait **waitset)
{
	struct swnic_fabric *fab =
		swnic_container_of(fabric, struct swnic_fabric, fabric_fid);
	struct swnic_waitset *ws;
	int ret;

	if (!attr || !waitset)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EBADFLAGS;
	switch (attr->wait_obj) {
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_YIELD:
		break;
	default:
		/* FI_WAIT_NONE waits for nothing; a set is no set's member. */
		return -FI_EINVAL;
	}
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -FI_ENOMEM;
	ret = swnic_wait_init(&ws->wait, attr->wait_obj);
	if (ret) {
		free(ws);
		return ret;
	}
	pthread_mutex_init(&ws->lock, NULL);
	ws->fabric = fab;
	swnic_fabric_child(fab, &fab->nwaits, 1);
	ws->wait_fid.fid.fclass = FI_CLASS_WAIT;
	ws->wait_fid.fid.context = NULL;
	ws->wait_fid.fid.ops = &swnic_waitset_fi_ops;
	ws->wait_fid.ops = &swnic_waitset_ops;
	if (attr->wait_obj == FI_WAIT_UNSPEC)
		attr->wait_obj = FI_WAIT_FD;
	*waitset = &ws->wait_fid;
	return 0;
}

/* ---- poll sets ---------------------------------------------------------------- */

/* A CQ or counter of @dom, held (-FI_EBUSY on its close) while a member. */
static int swnic_poll_hold(struct swnic_pollset *ps, struct fid *fid,
			   int delta)
{
	struct swnic_cntr *cntr;
	struct swnic_cq *cq;

	switch (fid->fclass) {
	case FI_CLASS_CQ:
		cq = swnic_cq_of(fid);
		if (!cq || swnic_cq_domain(cq) != ps->domain)
			return -FI_EINVAL;
		swnic_cq_hold(cq, delta);
		return 0;
	case FI_CLASS_CNTR:
		cntr = swnic_cntr_of(fid);
		if (!cntr || swnic_cntr_domain(cntr) != ps->domain)
			return -FI_EINVAL;
		swnic_cntr_bind(cntr, delta);
		return 0;
	default:
		return -FI_EINVAL;
	}
}

static int swnic_poll_add(struct fid_poll *pollset, struct fid *event_fid,
			  uint64_t flags)
{
	struct swnic_pollset *ps =
		swnic_container_of(pollset, struct swnic_pollset, poll_fid);
	int ret;

	if (flags)
		return -FI_EBADFLAGS;
	if (!event_fid)
		return -FI_EINVAL;
	pthread_mutex_lock(&ps->lock);
	for (unsigned int i = 0; i < ps->n; i++) {
		if (ps->m[i].fid == event_fid) {
			pthread_mutex_unlock(&ps->lock);
			return -FI_EALREADY;
		}
	}
	if (ps->n >= SWNIC_SET_MAX) {
		pthread_mutex_unlock(&ps->lock);
		return -FI_ENOSPC;
	}
	ret = swnic_poll_hold(ps, event_fid, 1);
	if (!ret)
		ps->m[ps->n++] = (struct swnic_set_member){ .fid = event_fid };
	pthread_mutex_unlock(&ps->lock);
	return ret;
}

static int swnic_poll_del(struct fid_poll *pollset, struct fid *event_fid,
			  uint64_t flags)
{
	struct swnic_pollset *ps =
		swnic_container_of(pollset, struct swnic_pollset, poll_fid);

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ps->lock);
	for (unsigned int i = 0; i < ps->n; i++) {
		if (ps->m[i].fid != event_fid)
			continue;
		swnic_poll_hold(ps, event_fid, -1);
		ps->m[i] = ps->m[--ps->n];
		pthread_mutex_unlock(&ps->lock);
		return 0;
	}
	pthread_mutex_unlock(&ps->lock);
	return -FI_ENOENT;
}

static int swnic_poll_poll(struct fid_poll *pollset, void **context,
			   int count)
{
	struct swnic_pollset *ps =
		swnic_container_of(pollset, struct swnic_pollset, poll_fid);
	struct fid *fid;
	int found = 0;
	bool ready;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	pthread_mutex_lock(&ps->lock);
	for (unsigned int i = 0; i < ps->n && found < count; i++) {
		fid = ps->m[i].fid;
		if (fid->fclass == FI_CLASS_CQ)
			ready = swnic_cq_poll_ready(swnic_cq_of(fid));
		else
			ready = swnic_cntr_poll_changed(swnic_cntr_of(fid));
		if (ready)
			context[found++] = fid->context;
	}
	pthread_mutex_unlock(&ps->lock);
	return found;
}

static int swnic_pollset_close(struct fid *fid)
{
	struct swnic_pollset *ps =
		swnic_container_of(fid, struct swnic_pollset, poll_fid.fid);

	for (unsigned int i = 0; i < ps->n; i++)
		swnic_poll_hold(ps, ps->m[i].fid, -1);
	pthread_mutex_destroy(&ps->lock);
	swnic_domain_child(ps->domain, SWNIC_CHILD_POLL, -1);
	free(ps);
	return 0;
}

static struct fi_ops swnic_pollset_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_pollset_close,
	.bind = swnic_no_bind,
	.control = swnic_no_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static struct fi_ops_poll swnic_pollset_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = swnic_poll_poll,
	.poll_add = swnic_poll_add,
	.poll_del = swnic_poll_del,
};

/* fi_poll_open */
int swnic_pollset_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		       struct fid_poll **pollset)
{
	struct swnic_domain *dom =
		swnic_container_of(domain, struct swnic_domain, domain_fid);
	struct swnic_pollset *ps;

	if (!attr || !pollset)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EBADFLAGS;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	pthread_mutex_init(&ps->lock, NULL);
	ps->domain = dom;
	swnic_domain_child(dom, SWNIC_CHILD_POLL, 1);
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &swnic_pollset_fi_ops;
	ps->poll_fid.ops = &swnic_pollset_ops;
	*pollset = &ps->poll_fid;
	return 0;
}
