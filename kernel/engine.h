/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_ENGINE_H
#define _SWNIC_ENGINE_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct swnic_domain;
struct swnic_ep;
struct swnic_ep_doorbell;

/*
 * A domain's engine: a work item that polls the rings of the domain's busy
 * endpoints in SWNIC_EP_F_DB_ENGINE mode, on the domain's mm, and ends when
 * all are idle (after raising NEED_WAKEUP on their SQs). One per domain,
 * so that an owner whose memory is out of reach holds back its own
 * endpoints only, as in its own doorbell syscall.
 */
struct swnic_engine {
	/* queued holding a domain reference; a tick later to wait */
	struct delayed_work work;
	spinlock_t lock;		/* protects @eps and ep->engine_* */
	struct list_head eps;		/* busy endpoints, round robin */
	unsigned int nr;		/* on @eps */
};

int swnic_engine_init(void);
void swnic_engine_exit(void);
void swnic_engine_domain_init(struct swnic_domain *dom);

int swnic_engine_doorbell(struct swnic_ep *ep, struct swnic_ep_doorbell *db);
void swnic_engine_remove(struct swnic_ep *ep);
void swnic_engine_sq_retry(struct swnic_ep *ep, bool left, bool next);
void swnic_engine_sq_retry_work(struct work_struct *work);

#endif /* _SWNIC_ENGINE_H */
