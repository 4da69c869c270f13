// SPDX-License-Identifier: GPL-2.0
/*
 * The floating-point atomics. This file alone is compiled with the FPU
 * enabled (Kbuild: SSE for float and double, x87 for long double, as user
 * space computes them on x86-64); its code runs only between
 * kernel_fpu_begin_mask(KFPU_387 | KFPU_MXCSR) and kernel_fpu_end()
 * (atomic.c), which save the task's FPU state and set the default modes
 * of both SSE and x87 (round to nearest, extended precision, masked
 * exceptions, an empty x87 stack). Nothing here touches anything but the
 * three elements.
 */
#include "atomic.h"

/* Real types: MIN..PROD and the compare-and-swaps. */
static void swnic_fp_float(u8 op, float *a, const float *b, const float *c)
{
	bool swap;

	switch (op) {
	case SWNIC_AOP_MIN:
		swap = *b < *a;
		break;
	case SWNIC_AOP_MAX:
		swap = *b > *a;
		break;
	case SWNIC_AOP_SUM:
		*a = *a + *b;
		return;
	case SWNIC_AOP_PROD:
		*a = *a * *b;
		return;
	case SWNIC_AOP_CSWAP:
		swap = *c == *a;
		break;
	case SWNIC_AOP_CSWAP_NE:
		swap = *c != *a;
		break;
	case SWNIC_AOP_CSWAP_LE:
		swap = *c <= *a;
		break;
	case SWNIC_AOP_CSWAP_LT:
		swap = *c < *a;
		break;
	case SWNIC_AOP_CSWAP_GE:
		swap = *c >= *a;
		break;
	case SWNIC_AOP_CSWAP_GT:
		swap = *c > *a;
		break;
	default:
		return;
	}
	if (swap)
		*a = *b;
}

static void swnic_fp_double(u8 op, double *a, const double *b, const double *c)
{
	bool swap;

	switch (op) {
	case SWNIC_AOP_MIN:
		swap = *b < *a;
		break;
	case SWNIC_AOP_MAX:
		swap = *b > *a;
		break;
	case SWNIC_AOP_SUM:
		*a = *a + *b;
		return;
	case SWNIC_AOP_PROD:
		*a = *a * *b;
		return;
	case SWNIC_AOP_CSWAP:
		swap = *c == *a;
		break;
	case SWNIC_AOP_CSWAP_NE:
		swap = *c != *a;
		break;
	case SWNIC_AOP_CSWAP_LE:
		swap = *c <= *a;
		break;
	case SWNIC_AOP_CSWAP_LT:
		swap = *c < *a;
		break;
	case SWNIC_AOP_CSWAP_GE:
		swap = *c >= *a;
		break;
	case SWNIC_AOP_CSWAP_GT:
		swap = *c > *a;
		break;
	default:
		return;
	}
	if (swap)
		*a = *b;
}

static void swnic_fp_ldouble(u8 op, long double *a, const long double *b, const long double *c)
{
	bool swap;

	switch (op) {
	case SWNIC_AOP_MIN:
		swap = *b < *a;
		break;
	case SWNIC_AOP_MAX:
		swap = *b > *a;
		break;
	case SWNIC_AOP_SUM:
		*a = *a + *b;
		return;
	case SWNIC_AOP_PROD:
		*a = *a * *b;
		return;
	case SWNIC_AOP_CSWAP:
		swap = *c == *a;
		break;
	case SWNIC_AOP_CSWAP_NE:
		swap = *c != *a;
		break;
	case SWNIC_AOP_CSWAP_LE:
		swap = *c <= *a;
		break;
	case SWNIC_AOP_CSWAP_LT:
		swap = *c < *a;
		break;
	case SWNIC_AOP_CSWAP_GE:
		swap = *c >= *a;
		break;
	case SWNIC_AOP_CSWAP_GT:
		swap = *c > *a;
		break;
	default:
		return;
	}
	if (swap)
		*a = *b;
}

/* float complex, by parts: SUM, PROD, CSWAP, CSWAP_NE. */
static void swnic_fp_cfloat(u8 op, float *a, const float *b, const float *c)
{
	float re, im;
	bool eq;

	switch (op) {
	case SWNIC_AOP_SUM:
		a[0] = a[0] + b[0];
		a[1] = a[1] + b[1];
		break;
	case SWNIC_AOP_PROD:
		re = a[0] * b[0] - a[1] * b[1];
		im = a[0] * b[1] + a[1] * b[0];
		a[0] = re;
		a[1] = im;
		break;
	case SWNIC_AOP_CSWAP:
	case SWNIC_AOP_CSWAP_NE:
		eq = c[0] == a[0] && c[1] == a[1];
		if (op == SWNIC_AOP_CSWAP_NE)
			eq = !eq;
		if (eq) {
			a[0] = b[0];
			a[1] = b[1];
		}
		break;
	}
}

/* double complex, by parts: SUM, PROD, CSWAP, CSWAP_NE. */
static void swnic_fp_cdouble(u8 op, double *a, const double *b, const double *c)
{
	double re, im;
	bool eq;

	switch (op) {
	case SWNIC_AOP_SUM:
		a[0] = a[0] + b[0];
		a[1] = a[1] + b[1];
		break;
	case SWNIC_AOP_PROD:
		re = a[0] * b[0] - a[1] * b[1];
		im = a[0] * b[1] + a[1] * b[0];
		a[0] = re;
		a[1] = im;
		break;
	case SWNIC_AOP_CSWAP:
	case SWNIC_AOP_CSWAP_NE:
		eq = c[0] == a[0] && c[1] == a[1];
		if (op == SWNIC_AOP_CSWAP_NE)
			eq = !eq;
		if (eq) {
			a[0] = b[0];
			a[1] = b[1];
		}
		break;
	}
}

/* long double complex, by parts: SUM, PROD, CSWAP, CSWAP_NE. */
static void swnic_fp_cldouble(u8 op, long double *a, const long double *b, const long double *c)
{
	long double re, im;
	bool eq;

	switch (op) {
	case SWNIC_AOP_SUM:
		a[0] = a[0] + b[0];
		a[1] = a[1] + b[1];
		break;
	case SWNIC_AOP_PROD:
		re = a[0] * b[0] - a[1] * b[1];
		im = a[0] * b[1] + a[1] * b[0];
		a[0] = re;
		a[1] = im;
		break;
	case SWNIC_AOP_CSWAP:
	case SWNIC_AOP_CSWAP_NE:
		eq = c[0] == a[0] && c[1] == a[1];
		if (op == SWNIC_AOP_CSWAP_NE)
			eq = !eq;
		if (eq) {
			a[0] = b[0];
			a[1] = b[1];
		}
		break;
	}
}

/**
 * swnic_atomic_fp() - apply a floating-point atomic to one element
 * @op: SWNIC_AOP_*, valid for @dt (swnic_atomic_valid()), not READ/WRITE
 * @dt: SWNIC_ADT_FLOAT..LONG_DOUBLE_COMPLEX
 * @target: the element (16-byte aligned kernel memory), updated
 * @operand: the operand (aligned likewise)
 * @compare: the compare value for the compare ops (aligned likewise)
 *
 * Context: between kernel_fpu_begin_mask() and kernel_fpu_end().
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
