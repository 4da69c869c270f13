// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Event queues (fi_eq(3)): control events of domains, MRs (FI_MR_COMPLETE
 * for asynchronous registration) and AVs (FI_AV_COMPLETE), plus the
 * application's own (fi_eq_write with FI_WRITE).
 *
 * Connection events of passive and MSG endpoints (FI_CONNREQ,
 * FI_CONNECTED, FI_SHUTDOWN, and rejections as FI_ECONNREFUSED errors with
 * the peer's data in err_data) are queued by the provider's connection
 * manager thread (cm.c), so they arrive without the application reading.
 *
 * Events and error events sit on two lists: while an error is queued, reads
 * fail with -FI_EAVAIL and fi_eq_readerr returns it. An event the provider
 * cannot queue because the EQ is full puts the EQ in the overrun state: the
 * queued events stay readable, then fi_eq_readerr reports FI_EOVERRUN and
 * writes fail with -FI_EOVERRUN, as fi_eq(3) says.
 *
 * An EQ is a control-path object: always thread safe, whatever the
 * threading model of the domains it serves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swnic.h"

#define SWNIC_EQ_DEF_SIZE	1024

struct swnic_eq_event {
	struct swnic_list node;
	uint32_t event;
	bool connreq;			/* the CM's FI_CONNREQ: owns its info */
	size_t len;			/* bytes of @data (events) */
	struct fi_eq_err_entry err;	/* error events */
	uint8_t *err_data;		/* owned copy of err.err_data */
	uint8_t data[];			/* the event as read */
};

struct swnic_eq {
	struct fid_eq eq_fid;
	struct swnic_fabric *fabric;
	pthread_mutex_t lock;		/* protects everything below */
	struct swnic_wait wait;
	uint64_t flags;			/* fi_eq_attr.flags */
	size_t size;			/* events the EQ holds */
	size_t count;			/* events + errors queued */
	struct swnic_list events;
	struct swnic_list errors;
	bool overrun;			/* a provider event was lost */
	uint8_t *err_data;		/* readerr's buffer, until next read */
	atomic_uint binds;		/* objects bound to this EQ */
};

static struct fi_ops swnic_eq_fi_ops;

struct swnic_eq *swnic_eq_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EQ || fid->ops != &swnic_eq_fi_ops)
		return NULL;
	return swnic_container_of(fid, struct swnic_eq, eq_fid.fid);
}

/*
 * An object of @fabric binds @eq (fi_domain(3), fi_endpoint(3), fi_av(3),
 * fi_cm(3)): only an EQ opened on that fabric. Return: 0, or -FI_EINVAL,
 * logged as @call's under @subsys.
 */
int swnic_eq_bind_check(const struct swnic_eq *eq,
			const struct swnic_fabric *fabric,
			enum fi_log_subsys subsys, const char *call)
{
	if (eq->fabric == fabric)
		return 0;
	SWNIC_WARN(subsys, "%s: an EQ of another fabric\n", call);
	return -FI_EINVAL;
}

void swnic_eq_bind_get(struct swnic_eq *eq)
{
	atomic_fetch_add(&eq->binds, 1);
}

void swnic_eq_bind_put(struct swnic_eq *eq)
{
	atomic_fetch_sub(&eq->binds, 1);
}

static void swnic_eq_event_free(struct swnic_eq_event *ev)
{
	free(ev->err_data);
	free(ev);
}

/* Queue @ev; the caller holds eq->lock. -FI_EAGAIN if full. */
static int swnic_eq_push(struct swnic_eq *eq, struct swnic_eq_event *ev,
			 bool error)
{
	if (eq->count >= eq->size)
		return -FI_EAGAIN;
	swnic_list_add_tail(error ? &eq->errors : &eq->events, &ev->node);
	eq->count++;
	swnic_wait_set(&eq->wait);
	return 0;
}

/*
 * A provider event that does not fit is lost: the EQ is overrun. But a
 * connection request (@connreq), which a remote peer makes, is refused
 * (-FI_EAGAIN, the CM rejects it) once the EQ is three quarters full:
 * requests never overrun the EQ, and a quarter is kept for the events of
 * the connections it serves (FI_CONNECTED, FI_SHUTDOWN, errors).
 */
static int swnic_eq_push_prov(struct swnic_eq *eq, struct swnic_eq_event *ev,
			      bool error, bool connreq)
{
	int ret;

	pthread_mutex_lock(&eq->lock);
	if (eq->overrun)
		ret = -FI_EOVERRUN;
	else if (connreq && eq->count + eq->size / 4 >= eq->size)
		ret = -FI_EAGAIN;
	else if (swnic_eq_push(eq, ev, error))
		ret = -FI_EOVERRUN;
	else
		ret = 0;
	if (ret == -FI_EOVERRUN && !eq->overrun) {
		SWNIC_WARN(FI_LOG_EQ, "EQ %p overrun: an event was lost\n",
			   (void *)eq);
		eq->overrun = true;
		swnic_wait_set(&eq->wait);
	}
	pthread_mutex_unlock(&eq->lock);
	if (ret)
		swnic_eq_event_free(ev);
	return ret;
}

int swnic_eq_report(struct swnic_eq *eq, uint32_t event, fid_t fid,
		    void *context, uint64_t data)
{
	struct fi_eq_entry entry = { .fid = fid, .context = context,
				     .data = data };
	struct swnic_eq_event *ev;

	ev = calloc(1, sizeof(*ev) + sizeof(entry));
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->len = sizeof(entry);
	memcpy(ev->data, &entry, sizeof(entry));
	return swnic_eq_push_prov(eq, ev, false, false);
}

/**
 * swnic_eq_report_cm() - queue a connection event
 * @eq: the EQ
 * @event: FI_CONNREQ, FI_CONNECTED or FI_SHUTDOWN
 * @fid: the passive or active endpoint
 * @info: FI_CONNREQ's fi_info (the application frees it), else NULL
 * @data: the peer's connection data (@len bytes, may be 0)
 */
int swnic_eq_report_cm(struct swnic_eq *eq, uint32_t event, fid_t fid,
		       struct fi_info *info, const void *data, size_t len)
{
	struct fi_eq_cm_entry entry = { .fid = fid, .info = info };
	struct swnic_eq_event *ev;

	ev = calloc(1, sizeof(*ev) + sizeof(entry) + len);
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->connreq = event == FI_CONNREQ && info;
	ev->len = sizeof(entry) + len;
	memcpy(ev->data, &entry, sizeof(entry));
	if (len)
		memcpy(ev->data + sizeof(entry), data, len);
	return swnic_eq_push_prov(eq, ev, false, ev->connreq);
}

/* An error event; @err_data (@err_len bytes) is copied for readerr. */
int swnic_eq_report_err_data(struct swnic_eq *eq, fid_t fid, void *context,
			     uint64_t data, int err, int prov_errno,
			     const void *err_data, size_t err_len)
{
	struct swnic_eq_event *ev;

	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -FI_ENOMEM;
	if (err_len) {
		ev->err_data = malloc(err_len);
		if (!ev->err_data) {
			free(ev);
			return -FI_ENOMEM;
		}
		memcpy(ev->err_data, err_data, err_len);
		ev->err.err_data_size = err_len;
	}
	ev->err.fid = fid;
	ev->err.context = context;
	ev->err.data = data;
	ev->err.err = err;
	ev->err.prov_errno = prov_errno;
	return swnic_eq_push_prov(eq, ev, true, false);
}

int swnic_eq_report_err(struct swnic_eq *eq, fid_t fid, void *context,
			uint64_t data, int err, int prov_errno)
{
	return swnic_eq_report_err_data(eq, fid, context, data, err,
					prov_errno, NULL, 0);
}

/* Nothing left to read: the wait object stops saying "readable". */
static void swnic_eq_update_wait(struct swnic_eq *eq)
{
	if (!eq->count && !eq->overrun)
		swnic_wait_clear(&eq->wait);
}

/* An event whose data is an fi_eq_cm_entry and connection data after it. */
static bool swnic_eq_cm_event(uint32_t event)
{
	return event == FI_CONNREQ || event == FI_CONNECTED ||
	       event == FI_SHUTDOWN;
}

static ssize_t swnic_eq_read(struct fid_eq *eq_fid, uint32_t *event,
			     void *buf, size_t len, uint64_t flags)
{
	struct swnic_eq *eq =
		swnic_container_of(eq_fid, struct swnic_eq, eq_fid);
	struct swnic_eq_event *ev;
	ssize_t ret;
	size_t n;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	if (!swnic_list_empty(&eq->errors)) {
		ret = -FI_EAVAIL;
		goto out;
	}
	if (swnic_list_empty(&eq->events)) {
		ret = eq->overrun ? -FI_EAVAIL : -FI_EAGAIN;
		goto out;
	}
	ev = swnic_list_entry(eq->events.next, struct swnic_eq_event, node);
	n = ev->len;
	/*
	 * fi_eq(3): a CM event's connection data is limited to the buffer
	 * space provided - its fi_eq_cm_entry must fit, the data need not.
	 */
	if (n > len && swnic_eq_cm_event(ev->event) &&
	    len >= sizeof(struct fi_eq_cm_entry))
		n = len;
	if (n > len || (n && !buf)) {
		ret = -FI_ETOOSMALL;
		goto out;
	}
	if (event)
		*event = ev->event;
	memcpy(buf, ev->data, n);
	ret = (ssize_t)n;
	if (!(flags & FI_PEEK)) {
		swnic_list_del(&ev->node);
		eq->count--;
		swnic_eq_event_free(ev);
		swnic_eq_update_wait(eq);
	}
out:
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t swnic_eq_readerr(struct fid_eq *eq_fid,
				struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct swnic_eq *eq =
		swnic_container_of(eq_fid, struct swnic_eq, eq_fid);
	struct swnic_eq_event *ev;
	ssize_t ret;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;

	pthread_mutex_lock(&eq->lock);
	if (swnic_list_empty(&eq->errors)) {
		if (eq->overrun && swnic_list_empty(&eq->events)) {
			/*
			 * Only the fields the application's version has: an
			 * API < 1.5 entry ends before err_data_size.
			 */
			memset(buf, 0, FI_VERSION_LT(eq->fabric->api_version,
						     FI_VERSION(1, 5)) ?
				       offsetof(struct fi_eq_err_entry,
						err_data_size) : sizeof(*buf));
			buf->fid = &eq->eq_fid.fid;
			buf->err = FI_EOVERRUN;
			ret = sizeof(*buf);
		} else {
			ret = -FI_EAGAIN;
		}
		goto out;
	}
	ev = swnic_list_entry(eq->errors.next, struct swnic_eq_event, node);
	buf->fid = ev->err.fid;
	buf->context = ev->err.context;
	buf->data = ev->err.data;
	buf->err = ev->err.err;
	buf->prov_errno = ev->err.prov_errno;
	swnic_err_data_out(eq->fabric->api_version, ev->err_data,
			   ev->err.err_data_size, &buf->err_data,
			   &buf->err_data_size, &eq->err_data);
	ret = sizeof(*buf);
	if (!(flags & FI_PEEK)) {
		swnic_list_del(&ev->node);
		eq->count--;
		swnic_eq_event_free(ev);
		swnic_eq_update_wait(eq);
	}
out:
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t swnic_eq_write(struct fid_eq *eq_fid, uint32_t event,
			      const void *buf, size_t len, uint64_t flags)
{
	struct swnic_eq *eq =
		swnic_container_of(eq_fid, struct swnic_eq, eq_fid);
	struct swnic_eq_event *ev;
	int ret;

	if (!(eq->flags & FI_WRITE)) {
		SWNIC_WARN(FI_LOG_EQ, "fi_eq_write on an EQ opened without FI_WRITE\n");
		return -FI_EINVAL;
	}
	if (flags)
		return -FI_EBADFLAGS;
	if (!buf || !len)
		return -FI_EINVAL;
	ev = calloc(1, sizeof(*ev) + len);
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->len = len;
	memcpy(ev->data, buf, len);

	pthread_mutex_lock(&eq->lock);
	ret = eq->overrun ? -FI_EOVERRUN : swnic_eq_push(eq, ev, false);
	pthread_mutex_unlock(&eq->lock);
	if (ret) {
		free(ev);
		return ret;
	}
	return (ssize_t)len;
}

static ssize_t swnic_eq_sread(struct fid_eq *eq_fid, uint32_t *event,
			      void *buf, size_t len, int timeout,
			      uint64_t flags)
{
	struct swnic_eq *eq =
		swnic_container_of(eq_fid, struct swnic_eq, eq_fid);
	uint64_t start = swnic_now_ms();
	unsigned int seq;
	ssize_t ret;
	int left;

	if (eq->wait.type == FI_WAIT_NONE) {
		SWNIC_WARN(FI_LOG_EQ, "fi_eq_sread on an EQ without a wait object\n");
		return -FI_EINVAL;
	}
	for (;;) {
		seq = swnic_wait_seq(&eq->wait);
		ret = swnic_eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		left = swnic_timeout_left(timeout, start);
		if (!left)
			return -FI_EAGAIN;
		ret = swnic_wait_wait(&eq->wait, seq, left);
		if (ret == -FI_ETIMEDOUT)
			return -FI_EAGAIN;
		if (ret)
			return ret;
	}
}

static const char *swnic_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				     const void *err_data, char *buf,
				     size_t len)
{
	return swnic_strerror(prov_errno, buf, len);
}

/* fi_trywait: 0 if nothing is queued, so blocking on the fd is safe. */
int swnic_eq_trywait(struct fid *fid)
{
	struct swnic_eq *eq = swnic_eq_from_fid(fid);
	int ret;

	if (!eq)
		return -FI_EINVAL;
	if (eq->wait.type != FI_WAIT_FD)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	ret = eq->count || eq->overrun ? -FI_EAGAIN : 0;
	if (!ret)
		swnic_wait_clear(&eq->wait);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static int swnic_eq_control(struct fid *fid, int command, void *arg)
{
	struct swnic_eq *eq = swnic_eq_from_fid(fid);

	return swnic_wait_control(&eq->wait, command, arg);
}

static int swnic_eq_close(struct fid *fid)
{
	struct swnic_eq *eq = swnic_eq_from_fid(fid);
	struct swnic_list *pos, *tmp;
	unsigned int binds = atomic_load(&eq->binds);

	if (binds) {
		SWNIC_WARN(FI_LOG_EQ, "EQ %p is still bound to %u object(s)\n",
			   (void *)fid, binds);
		return -FI_EBUSY;
	}
	/* Out of its wait set first, as a CQ: fi_wait looks at it no more. */
	swnic_wait_leave(&eq->wait);
	swnic_list_for_each_safe(pos, tmp, &eq->events) {
		struct swnic_eq_event *ev =
			swnic_list_entry(pos, struct swnic_eq_event, node);

		/*
		 * An unread request of the CM's: nobody else will free its
		 * fi_info. Not the application's own FI_CONNREQ-typed events
		 * (fi_eq_write): their data is the application's.
		 */
		if (ev->connreq) {
			struct fi_eq_cm_entry entry;

			memcpy(&entry, ev->data, sizeof(entry));
			swnic_cm_info_free(entry.info);
		}
		swnic_eq_event_free(ev);
	}
	swnic_list_for_each_safe(pos, tmp, &eq->errors)
		swnic_eq_event_free(swnic_list_entry(pos, struct swnic_eq_event,
						     node));
	swnic_wait_fini(&eq->wait);
	pthread_mutex_destroy(&eq->lock);
	swnic_fabric_child(eq->fabric, &eq->fabric->neqs, -1);
	free(eq->err_data);
	free(eq);
	return 0;
}

static struct fi_ops swnic_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_eq_close,
	.bind = swnic_no_bind,
	.control = swnic_eq_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static struct fi_ops_eq swnic_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = swnic_eq_read,
	.readerr = swnic_eq_readerr,
	.write = swnic_eq_write,
	.sread = swnic_eq_sread,
	.strerror = swnic_eq_strerror,
};

int swnic_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		  struct fid_eq **eq_fid, void *context)
{
	struct swnic_fabric *fab = swnic_fabric_registered(fabric);
	struct swnic_eq *eq;
	int ret;

	if (!fab || !attr || !eq_fid)
		return -FI_EINVAL;
	if (attr->flags & ~(FI_WRITE | FI_AFFINITY)) {
		SWNIC_WARN(FI_LOG_EQ, "EQ flags %#llx not supported\n",
			   (unsigned long long)attr->flags);
		return -FI_EBADFLAGS;
	}
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = swnic_wait_init_attr(&eq->wait, attr->wait_obj, attr->wait_set);
	if (ret) {
		free(eq);
		return ret;
	}
	pthread_mutex_init(&eq->lock, NULL);
	swnic_list_init(&eq->events);
	swnic_list_init(&eq->errors);
	eq->fabric = fab;
	eq->flags = attr->flags;
	eq->size = attr->size ? attr->size : SWNIC_EQ_DEF_SIZE;
	atomic_init(&eq->binds, 0);
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &swnic_eq_fi_ops;
	eq->eq_fid.ops = &swnic_eq_ops;
	swnic_fabric_child(fab, &fab->neqs, 1);
	swnic_wait_member(&eq->wait, &eq->eq_fid.fid);
	*eq_fid = &eq->eq_fid;
	return 0;
}
