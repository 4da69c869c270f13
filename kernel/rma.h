/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_RMA_H
#define _SWNIC_RMA_H

struct swnic_ep;
struct swnic_sqe;

int swnic_rma_write(struct swnic_ep *dst, struct swnic_ep *src,
		    const struct swnic_sqe *sqe, const void *kbuf);
int swnic_rma_read(struct swnic_ep *dst, struct swnic_ep *src,
		   const struct swnic_sqe *sqe);

#endif /* _SWNIC_RMA_H */
