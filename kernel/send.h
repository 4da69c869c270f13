/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_SEND_H
#define _SWNIC_SEND_H

#include <linux/types.h>

struct swnic_ep;
struct swnic_fault_wait;
struct swnic_sqe;
struct swnic_trig;

int swnic_send_process_sq(struct swnic_ep *ep, bool engine);
int swnic_send_retry_head(struct swnic_ep *ep);
int swnic_send_run_one(struct swnic_ep *ep, const struct swnic_sqe *sqe,
		       int status, struct swnic_trig *trig, bool last,
		       struct swnic_fault_wait *fault);
int swnic_send_cancel(struct swnic_ep *ep, u64 context, bool trig);

#endif /* _SWNIC_SEND_H */
