/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Atomics (fi_atomic(3)): executed by the target's kernel on the target
 * MR's pages, for the local transport (in the initiator's context) and
 * the wire (in the target's worker). swnic_queue.h has the ABI.
 */
#ifndef _SWNIC_ATOMIC_H
#define _SWNIC_ATOMIC_H

#include <linux/types.h>

#include <linux/swnic_queue.h>

struct swnic_domain;
struct swnic_ep;
struct swnic_mr_target;

/* One atomic, decoded and in kernel memory. */
struct swnic_atomic {
	u8 opcode;			/* SWNIC_OP_*ATOMIC */
	u8 op;				/* SWNIC_AOP_* */
	u8 dt;				/* SWNIC_ADT_* */
	u32 size;			/* bytes per element */
	u32 count;			/* elements */
	const u8 *operand;		/* count * size bytes (NULL: READ) */
	const u8 *compare;		/* COMPARE: count * size bytes */
	u8 *result;			/* FETCH/COMPARE: old values */
	/*
	 * A wire round's (struct swnic_mr_ref): an ODP target out of reach
	 * is -SWNIC_EFAULTLATER, with nothing applied, or -EFAULT on the
	 * last try. Never a wait.
	 */
	bool round;
	bool last_try;
};

static inline bool swnic_atomic_opcode(u8 opcode)
{
	return opcode >= SWNIC_OP_ATOMIC && opcode <= SWNIC_OP_COMPARE_ATOMIC;
}

/* Does @opcode return the old values? */
static inline bool swnic_atomic_fetches(u8 opcode)
{
	return opcode == SWNIC_OP_FETCH_ATOMIC ||
	       opcode == SWNIC_OP_COMPARE_ATOMIC;
}

int swnic_atomic_valid(u8 opcode, u8 op, u8 dt);
int swnic_atomic_check(const struct swnic_sqe *sqe);
int swnic_atomic_apply(struct swnic_domain *dom, struct swnic_mr_target *t,
		       const struct swnic_atomic *a);
int swnic_atomic_exec(struct swnic_ep *dst, struct swnic_ep *src,
		      const struct swnic_sqe *sqe, const void *kbuf);

/* atomic_fp.c: only between kernel_fpu_begin() and kernel_fpu_end(). */
void swnic_atomic_fp(u8 op, u8 dt, void *target, const void *operand,
		     const void *compare);

#endif /* _SWNIC_ATOMIC_H */
