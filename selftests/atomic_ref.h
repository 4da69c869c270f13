/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Atomics for the tests (prov_atomic.c on one host, wire/wire_atomic.c
 * across the wire): what swnic documents as valid (fi_swnic(7)), a
 * reference of every operation computed here, and one run of an
 * operation through the public API, checked against that reference.
 */
#ifndef SWNIC_ATOMIC_REF_H
#define SWNIC_ATOMIC_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define AT_NDT		14		/* FI_INT8..FI_LONG_DOUBLE_COMPLEX */
#define AT_NOP		19		/* FI_MIN..FI_MSWAP */
#define AT_N		3		/* elements per run */
#define AT_MAX		512		/* bytes per call (the valid count) */

enum { AT_BASE, AT_FETCH, AT_COMPARE };

static const char *const at_kind_name[] = { "atomic", "fetch", "compare" };

static const size_t at_size[AT_NDT] = {
	1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16, 16, 32,
};

static inline bool at_int(int dt)
{
	return dt <= FI_UINT64;
}

static inline bool at_complex(int dt)
{
	return dt == FI_FLOAT_COMPLEX || dt == FI_DOUBLE_COMPLEX ||
	       dt == FI_LONG_DOUBLE_COMPLEX;
}

/* What fi_swnic(7) says swnic offers. */
static inline bool at_valid(int kind, int op, int dt)
{
	if (dt < 0 || dt >= AT_NDT || op < 0 || op >= AT_NOP)
		return false;
	if (kind == AT_BASE && op > FI_BXOR && op != FI_ATOMIC_WRITE)
		return false;
	if (kind == AT_FETCH && op > FI_ATOMIC_WRITE)
		return false;
	if (kind == AT_COMPARE && op < FI_CSWAP)
		return false;
	switch (op) {
	case FI_MIN: case FI_MAX: case FI_CSWAP_LE: case FI_CSWAP_LT:
	case FI_CSWAP_GE: case FI_CSWAP_GT:
		return !at_complex(dt);
	case FI_LOR: case FI_LAND: case FI_BOR: case FI_BAND: case FI_LXOR:
	case FI_BXOR: case FI_MSWAP:
		return at_int(dt);
	default:
		return true;
	}
}

/* The values of a run: target, operand, compare (real, imaginary). */
static const int at_tgt_re[AT_N] = { 5, 0, -4 }, at_tgt_im[AT_N] = { 1, 0, 2 };
static const int at_op_re[AT_N] = { 3, 6, 9 }, at_op_im[AT_N] = { 2, 0, 1 };
static const int at_cmp_re[AT_N] = { 5, 1, 10 }, at_cmp_im[AT_N] = { 1, 0, 3 };

#define AT_FILL(T)							\
	do {								\
		T *p = buf;						\
		for (int i = 0; i < n; i++) {				\
			if (at_complex(dt)) {				\
				p[2 * i] = (T)re[i];			\
				p[2 * i + 1] = (T)im[i];		\
			} else {					\
				p[i] = (T)re[i];			\
			}						\
		}							\
	} while (0)

static inline void at_fill(int dt, void *buf, const int *re, const int *im,
			   int n)
{
	memset(buf, 0, at_size[dt] * n);
	switch (dt) {
	case FI_INT8: AT_FILL(int8_t); break;
	case FI_UINT8: AT_FILL(uint8_t); break;
	case FI_INT16: AT_FILL(int16_t); break;
	case FI_UINT16: AT_FILL(uint16_t); break;
	case FI_INT32: AT_FILL(int32_t); break;
	case FI_UINT32: AT_FILL(uint32_t); break;
	case FI_INT64: AT_FILL(int64_t); break;
	case FI_UINT64: AT_FILL(uint64_t); break;
	case FI_FLOAT: case FI_FLOAT_COMPLEX: AT_FILL(float); break;
	case FI_DOUBLE: case FI_DOUBLE_COMPLEX: AT_FILL(double); break;
	default: AT_FILL(long double); break;
	}
}

/* fi_atomic(3)'s definitions, on real and integer types. */
#define AT_REF_REAL(T, INTOPS)						\
	do {								\
		T *a = t;						\
		const T *b = o, *c = cmp;				\
		for (int i = 0; i < n; i++) {				\
			switch (op) {					\
			case FI_MIN: if (b[i] < a[i]) a[i] = b[i]; break; \
			case FI_MAX: if (b[i] > a[i]) a[i] = b[i]; break; \
			case FI_SUM: a[i] = a[i] + b[i]; break;		\
			case FI_PROD: a[i] = a[i] * b[i]; break;	\
			case FI_ATOMIC_WRITE: a[i] = b[i]; break;	\
			case FI_CSWAP: if (c[i] == a[i]) a[i] = b[i]; break; \
			case FI_CSWAP_NE: if (c[i] != a[i]) a[i] = b[i]; break; \
			case FI_CSWAP_LE: if (c[i] <= a[i]) a[i] = b[i]; break; \
			case FI_CSWAP_LT: if (c[i] < a[i]) a[i] = b[i]; break; \
			case FI_CSWAP_GE: if (c[i] >= a[i]) a[i] = b[i]; break; \
			case FI_CSWAP_GT: if (c[i] > a[i]) a[i] = b[i]; break; \
			INTOPS						\
			}						\
		}							\
	} while (0)

#define AT_INTOPS							\
	case FI_LOR: a[i] = a[i] || b[i]; break;			\
	case FI_LAND: a[i] = a[i] && b[i]; break;			\
	case FI_BOR: a[i] = a[i] | b[i]; break;				\
	case FI_BAND: a[i] = a[i] & b[i]; break;			\
	case FI_LXOR: a[i] = (a[i] && !b[i]) || (!a[i] && b[i]); break;	\
	case FI_BXOR: a[i] = a[i] ^ b[i]; break;			\
	case FI_MSWAP: a[i] = (b[i] & c[i]) | (a[i] & ~c[i]); break;

#define AT_REF_INT(T) AT_REF_REAL(T, AT_INTOPS)
#define AT_NOINTOPS

#define AT_REF_CPLX(T)							\
	do {								\
		T *a = t;						\
		const T *b = o, *c = cmp;				\
		for (int i = 0; i < 2 * n; i += 2) {			\
			T re = a[i] * b[i] - a[i + 1] * b[i + 1];	\
			T im = a[i] * b[i + 1] + a[i + 1] * b[i];	\
			bool eq = c && c[i] == a[i] && c[i + 1] == a[i + 1]; \
			switch (op) {					\
			case FI_SUM:					\
				a[i] += b[i];				\
				a[i + 1] += b[i + 1];			\
				break;					\
			case FI_PROD:					\
				a[i] = re;				\
				a[i + 1] = im;				\
				break;					\
			case FI_CSWAP: case FI_CSWAP_NE:		\
			case FI_ATOMIC_WRITE:				\
				if (op == FI_ATOMIC_WRITE ||		\
				    eq == (op == FI_CSWAP)) {		\
					a[i] = b[i];			\
					a[i + 1] = b[i + 1];		\
				}					\
				break;					\
			}						\
		}							\
	} while (0)

/* Apply @op to @n elements of @t (operand @o, compare @cmp). */
static inline void at_ref(int op, int dt, void *t, const void *o,
			  const void *cmp, int n)
{
	switch (dt) {
	case FI_INT8: AT_REF_INT(int8_t); break;
	case FI_UINT8: AT_REF_INT(uint8_t); break;
	case FI_INT16: AT_REF_INT(int16_t); break;
	case FI_UINT16: AT_REF_INT(uint16_t); break;
	case FI_INT32: AT_REF_INT(int32_t); break;
	case FI_UINT32: AT_REF_INT(uint32_t); break;
	case FI_INT64: AT_REF_INT(int64_t); break;
	case FI_UINT64: AT_REF_INT(uint64_t); break;
	case FI_FLOAT: AT_REF_REAL(float, AT_NOINTOPS); break;
	case FI_DOUBLE: AT_REF_REAL(double, AT_NOINTOPS); break;
	case FI_LONG_DOUBLE: AT_REF_REAL(long double, AT_NOINTOPS); break;
	case FI_FLOAT_COMPLEX: AT_REF_CPLX(float); break;
	case FI_DOUBLE_COMPLEX: AT_REF_CPLX(double); break;
	default: AT_REF_CPLX(long double); break;
	}
}

/* Equal values (long double: its 10 bytes, not the padding). */
static inline bool at_equal(int dt, const void *x, const void *y, int n)
{
	const uint8_t *a = x, *b = y;

	if (dt != FI_LONG_DOUBLE && dt != FI_LONG_DOUBLE_COMPLEX)
		return !memcmp(a, b, at_size[dt] * n);
	for (size_t i = 0; i < at_size[dt] * n / 16; i++)
		if (memcmp(a + 16 * i, b + 16 * i, 10))
			return false;
	return true;
}

/*
 * Wait (up to 20 s) for one completion on @cq. Return: 0 with its flags
 * in *@flags, a negative fi_errno of an error completion, or
 * -FI_ETIMEDOUT.
 */
static inline int at_wait(struct fid_cq *cq, uint64_t *flags)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	time_t end = time(NULL) + 20;

	while (time(NULL) <= end) {
		ssize_t n = fi_cq_read(cq, &e, 1);

		if (n == 1) {
			if (flags)
				*flags = e.flags;
			return 0;
		}
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(cq, &err, 0);
			return err.err ? -err.err : -FI_EOTHER;
		}
		if (n != -FI_EAGAIN)
			return (int)n;
		usleep(50);
	}
	return -FI_ETIMEDOUT;
}

/* Where a run happens. */
struct at_peer {
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t addr;
	uint64_t raddr, key;		/* the target elements in its MR */
	void *local;			/* them, if in this process (or NULL) */
};

/* Post @kind of @op and wait for it. Return: 0 or the negative error. */
static inline int at_post(const struct at_peer *p, int kind, int op, int dt,
			  const void *opnd, const void *cmp, void *res, int n,
			  uint64_t *flags)
{
	int ret;

	do {
		if (kind == AT_BASE)
			ret = fi_atomic(p->ep, opnd, n, NULL, p->addr, p->raddr,
					p->key, dt, op, NULL);
		else if (kind == AT_FETCH)
			ret = fi_fetch_atomic(p->ep, opnd, n, NULL, res, NULL,
					      p->addr, p->raddr, p->key, dt,
					      op, NULL);
		else
			ret = fi_compare_atomic(p->ep, opnd, n, NULL, cmp,
						NULL, res, NULL, p->addr,
						p->raddr, p->key, dt, op, NULL);
	} while (ret == -FI_EAGAIN && !usleep(100));
	return ret ? ret : at_wait(p->cq, flags);
}

/*
 * One run: set the target's AT_N elements (directly, or by ATOMIC_WRITE),
 * apply @op, and check the target (directly, or by ATOMIC_READ), the
 * fetched values and the completion's flags against the reference.
 * Return: 0, or -1 with @why filled.
 */
static inline int at_run(const struct at_peer *p, int kind, int op, int dt,
			 char *why, size_t whylen)
{
	uint8_t tgt[AT_N * 32] __attribute__((aligned(16)));
	uint8_t opnd[AT_N * 32] __attribute__((aligned(16)));
	uint8_t cmp[AT_N * 32] __attribute__((aligned(16)));
	uint8_t want[AT_N * 32] __attribute__((aligned(16)));
	uint8_t res[AT_N * 32] __attribute__((aligned(16)));
	uint8_t got[AT_N * 32] __attribute__((aligned(16)));
	size_t len = at_size[dt] * AT_N;
	uint64_t flags = 0, wflags;
	int ret;

	at_fill(dt, tgt, at_tgt_re, at_tgt_im, AT_N);
	at_fill(dt, opnd, at_op_re, at_op_im, AT_N);
	at_fill(dt, cmp, at_cmp_re, at_cmp_im, AT_N);
	memcpy(want, tgt, len);
	at_ref(op, dt, want, opnd, kind == AT_COMPARE ? cmp : NULL, AT_N);
	memset(res, 0xee, sizeof(res));

	if (p->local) {
		memcpy(p->local, tgt, len);
	} else {
		ret = at_post(p, AT_BASE, FI_ATOMIC_WRITE, dt, tgt, NULL, NULL,
			      AT_N, NULL);
		if (ret) {
			snprintf(why, whylen, "setting the target: %d", ret);
			return -1;
		}
	}
	ret = at_post(p, kind, op, dt, op == FI_ATOMIC_READ ? NULL : opnd,
		      cmp, res, AT_N, &flags);
	if (ret) {
		snprintf(why, whylen, "the operation failed: %d (%s)", ret,
			 fi_strerror(-ret));
		return -1;
	}
	wflags = FI_ATOMIC | (kind == AT_BASE ? FI_WRITE : FI_READ);
	if (flags != wflags) {
		snprintf(why, whylen, "completion flags %#llx, not %#llx",
			 (unsigned long long)flags,
			 (unsigned long long)wflags);
		return -1;
	}
	if (kind != AT_BASE && !at_equal(dt, res, tgt, AT_N)) {
		snprintf(why, whylen, "fetched values are not the old ones");
		return -1;
	}
	if (p->local) {
		memcpy(got, p->local, len);
	} else {
		ret = at_post(p, AT_FETCH, FI_ATOMIC_READ, dt, NULL, NULL, got,
			      AT_N, NULL);
		if (ret) {
			snprintf(why, whylen, "reading the target: %d", ret);
			return -1;
		}
	}
	if (!at_equal(dt, got, want, AT_N)) {
		snprintf(why, whylen, "the target holds a wrong value");
		return -1;
	}
	return 0;
}

#endif /* SWNIC_ATOMIC_REF_H */
