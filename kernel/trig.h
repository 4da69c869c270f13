/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_TRIG_H
#define _SWNIC_TRIG_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/swnic_queue.h>

struct swnic_cntr;
struct swnic_domain;
struct swnic_ep;
struct swnic_trig;

/*
 * A domain's triggered work (struct swnic_sqe_trigger, SWNIC_IOCTL_TRIG_*):
 * entries wait on their counter's list, sorted by threshold, until the
 * counter reaches it; then they move to @ready, which @work runs in order.
 * One spinlock for all of it: counters change in any context.
 */
struct swnic_trig_domain {
	spinlock_t lock;		/* all below, and every cntr->trigs */
	struct list_head ready;		/* met or cancelled, to run in order */
	struct list_head retry;		/* met, refused (EAGAIN), tried again */
	struct work_struct work;	/* runs @ready; holds a domain ref */
	/* moves @retry to @ready a tick later; holds a domain ref */
	struct delayed_work retry_work;
	u32 count;			/* entries waiting, ready or retrying */
	u64 seq;			/* submission order */
	bool closed;			/* the domain's file: nothing retried */
};

int swnic_trig_init(void);
void swnic_trig_exit(void);
bool swnic_trig_queue_delayed(struct delayed_work *dwork, unsigned long delay);
void swnic_trig_domain_init(struct swnic_domain *dom);
void swnic_trig_cntr_init(struct swnic_cntr *cntr);

int swnic_trig_queue_sqe(struct swnic_ep *ep, const struct swnic_sqe *sqe);
int swnic_trig_cancel_sqe(struct swnic_ep *ep, u64 context);
int swnic_trig_cancel_rqe(struct swnic_ep *ep, u64 context);
void swnic_trig_check(struct swnic_cntr *cntr);
void swnic_trig_cntr_closed(struct swnic_cntr *cntr);
void swnic_trig_ep_closed(struct swnic_ep *ep);
void swnic_trig_domain_closed(struct swnic_domain *dom);
void swnic_trig_retry_soon(struct swnic_domain *dom);
struct swnic_cntr *swnic_trig_cntr(struct swnic_trig *t, struct swnic_ep *ep,
				   unsigned int idx);
struct swnic_cntr *swnic_trig_sqe_cntr(struct swnic_ep *ep, unsigned int idx);

int swnic_trig_ioctl_cntr_update(struct swnic_domain *dom, void *arg);
int swnic_trig_ioctl_cntr(struct swnic_domain *dom, void *arg);
int swnic_trig_ioctl_cancel(struct swnic_domain *dom, void *arg);
int swnic_trig_ioctl_recv(struct swnic_ep *ep, void *arg);

#endif /* _SWNIC_TRIG_H */
