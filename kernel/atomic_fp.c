// SPDX-License-Identifier: GPL-2.0
/*
 * The floating-point atomics. This file alone is compiled with the FPU
 * enabled (Kbuild: SSE for float and double, x87 for long double, as user
 * space computes them on x86-64); its code runs only between
 * kernel_fpu_begin() and kernel_fpu_end() (atomic.c), which save the
 * task's FPU state and set the default modes (round to nearest, masked
 * exceptions). Nothing here touches anything but the three elements.
 */
#include "atomic.h"

/* A real type: MIN..PROD and the compare-and-swaps. */
#define SWNIC_FP_REAL(name, T)						\
static void name(u8 op, T *a, const T *b, const T *c)			\
{									\
	bool swap = false;						\
									\
	switch (op) {							\
	case SWNIC_AOP_MIN:						\
		if (*b < *a)						\
			*a = *b;					\
		return;							\
	case SWNIC_AOP_MAX:						\
		if (*b > *a)						\
			*a = *b;					\
		return;							\
	case SWNIC_AOP_SUM:						\
		*a = *a + *b;						\
		return;							\
	case SWNIC_AOP_PROD:						\
		*a = *a * *b;						\
		return;							\
	case SWNIC_AOP_CSWAP:						\
		swap = *c == *a;					\
		break;							\
	case SWNIC_AOP_CSWAP_NE:					\
		swap = *c != *a;					\
		break;							\
	case SWNIC_AOP_CSWAP_LE:					\
		swap = *c <= *a;					\
		break;							\
	case SWNIC_AOP_CSWAP_LT:					\
		swap = *c < *a;						\
		break;							\
	case SWNIC_AOP_CSWAP_GE:					\
		swap = *c >= *a;					\
		break;							\
	case SWNIC_AOP_CSWAP_GT:					\
		swap = *c > *a;						\
		break;							\
	}								\
	if (swap)							\
		*a = *b;						\
}

/* A complex type, by parts: SUM, PROD, CSWAP, CSWAP_NE. */
#define SWNIC_FP_COMPLEX(name, T)					\
static void name(u8 op, T *a, const T *b, const T *c)			\
{									\
	T re, im;							\
	bool eq;							\
									\
	switch (op) {							\
	case SWNIC_AOP_SUM:						\
		a[0] = a[0] + b[0];					\
		a[1] = a[1] + b[1];					\
		return;							\
	case SWNIC_AOP_PROD:						\
		re = a[0] * b[0] - a[1] * b[1];				\
		im = a[0] * b[1] + a[1] * b[0];				\
		a[0] = re;						\
		a[1] = im;						\
		return;							\
	case SWNIC_AOP_CSWAP:						\
	case SWNIC_AOP_CSWAP_NE:					\
		eq = c[0] == a[0] && c[1] == a[1];			\
		if (eq == (op == SWNIC_AOP_CSWAP)) {			\
			a[0] = b[0];					\
			a[1] = b[1];					\
		}							\
		return;							\
	}								\
}

SWNIC_FP_REAL(swnic_fp_float, float)
SWNIC_FP_REAL(swnic_fp_double, double)
SWNIC_FP_REAL(swnic_fp_ldouble, long double)
SWNIC_FP_COMPLEX(swnic_fp_cfloat, float)
SWNIC_FP_COMPLEX(swnic_fp_cdouble, double)
SWNIC_FP_COMPLEX(swnic_fp_cldouble, long double)

/**
 * swnic_atomic_fp() - apply a floating-point atomic to one element
 * @op: SWNIC_AOP_*, valid for @dt (swnic_atomic_valid()), not READ/WRITE
 * @dt: SWNIC_ADT_FLOAT..LONG_DOUBLE_COMPLEX
 * @target: the element (16-byte aligned kernel memory), updated
 * @operand: the operand (aligned likewise)
 * @compare: the compare value for the compare ops (aligned likewise)
 *
 * Context: between kernel_fpu_begin() and kernel_fpu_end().
 */
void swnic_atomic_fp(u8 op, u8 dt, void *target, const void *operand,
		     const void *compare)
{
	switch (dt) {
	case SWNIC_ADT_FLOAT:
		swnic_fp_float(op, target, operand, compare);
		break;
	case SWNIC_ADT_DOUBLE:
		swnic_fp_double(op, target, operand, compare);
		break;
	case SWNIC_ADT_LONG_DOUBLE:
		swnic_fp_ldouble(op, target, operand, compare);
		break;
	case SWNIC_ADT_FLOAT_COMPLEX:
		swnic_fp_cfloat(op, target, operand, compare);
		break;
	case SWNIC_ADT_DOUBLE_COMPLEX:
		swnic_fp_cdouble(op, target, operand, compare);
		break;
	case SWNIC_ADT_LONG_DOUBLE_COMPLEX:
		swnic_fp_cldouble(op, target, operand, compare);
		break;
	}
}
