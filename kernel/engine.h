/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_ENGINE_H
#define _SWNIC_ENGINE_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct swnic_device;
struct swnic_ep;
struct swnic_ep_doorbell;
struct task_struct;

/*
 * The per-device engine thread: it polls the rings of busy endpoints in
 * SWNIC_EP_F_DB_ENGINE mode, running on each endpoint's mm, and sleeps when
 * all are idle (after raising NEED_WAKEUP on their SQs).
 */
struct swnic_engine {
	struct task_struct *task;	/* NULL once stopped */
	spinlock_t lock;		/* protects @eps and ep->engine_* */
	struct list_head eps;		/* busy endpoints, round robin */
};

int swnic_engine_start(struct swnic_device *sdev);
void swnic_engine_stop(struct swnic_device *sdev);

int swnic_engine_doorbell(struct swnic_ep *ep, struct swnic_ep_doorbell *db);
void swnic_engine_remove(struct swnic_ep *ep);

#endif /* _SWNIC_ENGINE_H */
