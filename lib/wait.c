// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Locks, wait objects and time: what EQs, CQs and counters block on.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "swnic.h"

void swnic_lock_init(struct swnic_lock *lock, bool active)
{
	lock->active = active;
	pthread_mutex_init(&lock->mutex, NULL);
}

void swnic_lock_destroy(struct swnic_lock *lock)
{
	pthread_mutex_destroy(&lock->mutex);
}

bool swnic_threading_locks(enum fi_threading threading)
{
	switch (threading) {
	case FI_THREAD_DOMAIN:
	case FI_THREAD_COMPLETION:
		return false;
	default:
		/* SAFE, and FID/ENDPOINT (same object from several threads). */
		return true;
	}
}

uint64_t swnic_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int swnic_timeout_left(int timeout, uint64_t start_ms)
{
	uint64_t spent;

	if (timeout < 0)
		return -1;
	spent = swnic_now_ms() - start_ms;
	return spent >= (uint64_t)timeout ? 0 : timeout - (int)spent;
}

int swnic_wait_init(struct swnic_wait *w, enum fi_wait_obj type)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_condattr_t attr;
	int ret;

	w->epfd = -1;
	w->evfd = -1;
	w->set = NULL;
	atomic_init(&w->signals, 0);
	atomic_init(&w->seq, 0);
	atomic_init(&w->waiters, 0);

	switch (type) {
	case FI_WAIT_NONE:
	case FI_WAIT_YIELD:
		break;
	case FI_WAIT_UNSPEC:
		/* Our best wait object: an fd, which fi_control can hand out. */
		type = FI_WAIT_FD;
		/* fall through */
	case FI_WAIT_FD:
		w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->evfd < 0)
			return -errno;
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0) {
			ret = -errno;
			goto err_evfd;
		}
		ev.data.fd = w->evfd;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev)) {
			ret = -errno;
			goto err_epfd;
		}
		break;
	case FI_WAIT_MUTEX_COND:
		break;
	case FI_WAIT_SET:
		/* Only through swnic_wait_init_attr(), with the set. */
		return -FI_EINVAL;
	default:
		SWNIC_WARN(FI_LOG_CORE, "unknown wait object %d\n", type);
		return -FI_EINVAL;
	}
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&w->mutex, NULL);
	w->type = type;
	return 0;

err_epfd:
	close(w->epfd);
err_evfd:
	close(w->evfd);
	return ret;
}

void swnic_wait_fini(struct swnic_wait *w)
{
	swnic_wait_leave(w);
	if (w->type == FI_WAIT_FD) {
		close(w->epfd);
		close(w->evfd);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mutex);
}

/* Add a kernel object's fd (readable while it has something to read). */
int swnic_wait_add_fd(struct swnic_wait *w, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (w->type != FI_WAIT_FD)
		return -FI_EINVAL;
	return epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/*
 * Signal: bump the sequence, make the fd readable, wake provider waiters.
 * The mutex is only taken when a thread waits (or the application may be
 * waiting on the FI_WAIT_MUTEX_COND pair itself), so the producer path of
 * a lock-free threading model stays lock free.
 */
void swnic_wait_set(struct swnic_wait *w)
{
	uint64_t one = 1;

	atomic_fetch_add(&w->seq, 1);
	if (w->type == FI_WAIT_FD && !atomic_exchange(&w->signals, 1) &&
	    write(w->evfd, &one, sizeof(one)) != sizeof(one))
		SWNIC_WARN(FI_LOG_CORE, "eventfd write: %d\n", errno);
	if (w->type != FI_WAIT_FD)
		atomic_store(&w->signals, 1);
	if (w->type == FI_WAIT_MUTEX_COND || atomic_load(&w->waiters)) {
		pthread_mutex_lock(&w->mutex);
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->mutex);
	}
	swnic_wait_set_parent(w);
}

/*
 * Wake the provider's own waiters to look at their queue again, which
 * changed but holds nothing to read yet (a CQ's kernel ring made): no
 * signal, the fd does not become readable.
 */
void swnic_wait_kick(struct swnic_wait *w)
{
	atomic_fetch_add(&w->seq, 1);
	if (w->type == FI_WAIT_MUTEX_COND || atomic_load(&w->waiters)) {
		pthread_mutex_lock(&w->mutex);
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->mutex);
	}
}

void swnic_wait_clear(struct swnic_wait *w)
{
	uint64_t val;

	if (!atomic_exchange(&w->signals, 0))
		return;
	if (w->type == FI_WAIT_FD) {
		/* Drain: a racing set() leaves it readable, a harmless wakeup. */
		while (read(w->evfd, &val, sizeof(val)) == sizeof(val))
			;
	}
}

/*
 * swnic_wait_clear() for a thread that polls the fd itself until it has
 * something (an FI_WAIT_FD object only): the fd is drained even with no
 * signal pending - a set() racing an earlier clear may have made it
 * readable after that clear drained it, which would end every poll at
 * once - and made readable again if a set() came while it was drained.
 */
void swnic_wait_drain(struct swnic_wait *w)
{
	uint64_t val, one = 1;

	atomic_store(&w->signals, 0);
	while (read(w->evfd, &val, sizeof(val)) == sizeof(val))
		;
	if (atomic_load(&w->signals) &&
	    write(w->evfd, &one, sizeof(one)) != sizeof(one))
		SWNIC_WARN(FI_LOG_CORE, "eventfd write: %d\n", errno);
}

/*
 * Block until the wait object is signalled after the caller read @seen_seq
 * (swnic_wait_seq), or @timeout ms pass. Returns 0 when woken (the caller
 * re-checks its queue), -FI_ETIMEDOUT, or -FI_ENOSYS without a wait object.
 *
 * Provider waiters sleep on the sequence, not on the fd: the fd stays
 * readable while a queue is not empty, which must not make a thread that
 * waits for more (a CQ threshold) spin. (The kernel-backed CQ adds its ring
 * fd here, polled together with the condition.)
 */
int swnic_wait_wait(struct swnic_wait *w, unsigned int seen_seq, int timeout)
{
	struct timespec ts = { 0 };
	int ret = 0;

	switch (w->type) {
	case FI_WAIT_FD:
	case FI_WAIT_MUTEX_COND:
		break;
	case FI_WAIT_YIELD:
		sched_yield();
		return 0;
	default:
		return -FI_ENOSYS;
	}
	if (timeout >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += timeout / 1000;
		ts.tv_nsec += (long)(timeout % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&w->mutex);
	atomic_fetch_add(&w->waiters, 1);
	while (atomic_load(&w->seq) == seen_seq) {
		if (timeout < 0) {
			pthread_cond_wait(&w->cond, &w->mutex);
			continue;
		}
		if (pthread_cond_timedwait(&w->cond, &w->mutex, &ts) ==
		    ETIMEDOUT) {
			if (atomic_load(&w->seq) == seen_seq)
				ret = -FI_ETIMEDOUT;
			break;
		}
	}
	atomic_fetch_sub(&w->waiters, 1);
	pthread_mutex_unlock(&w->mutex);
	return ret;
}

int swnic_wait_control(struct swnic_wait *w, int command, void *arg)
{
	struct fi_mutex_cond *mc;

	switch (command) {
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = w->set ? FI_WAIT_SET : w->type;
		return 0;
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		switch (w->type) {
		case FI_WAIT_FD:
			*(int *)arg = w->epfd;
			return 0;
		case FI_WAIT_MUTEX_COND:
			mc = arg;
			mc->mutex = &w->mutex;
			mc->cond = &w->cond;
			return 0;
		default:
			/* NONE and YIELD have no object to hand out. */
			return -FI_ENODATA;
		}
	default:
		return -FI_ENOSYS;
	}
}
