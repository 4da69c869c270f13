/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_util.h - shared pieces of the fuzzers (fuzz_*.c) and of fail_nth.c:
 *
 *  - a seeded PRNG (xorshift64*) whose seed is printed as "# seed: N" and
 *    taken from SWNIC_FUZZ_SEED to reproduce a run; the iteration count
 *    from SWNIC_FUZZ_ITERS;
 *  - errno bookkeeping: per operation, the errnos the code and the uapi
 *    headers allow, a histogram of what came back and the first few
 *    calls that returned anything else;
 *  - every module-wide gauge of live objects (STAT_GET without a device
 *    or domain), devices and services included, and a wait until they
 *    are back where they started;
 *  - the kernel's taint flags (a WARN, an Oops, a soft lockup meanwhile).
 *
 * The seed is fixed once per program (a constructor, before the harness
 * forks its tests), so every test of one run derives its stream from the
 * same seed: rerunning with SWNIC_FUZZ_SEED=N (and the same
 * SWNIC_FUZZ_ITERS) replays the same calls.
 */
#ifndef SWNIC_FUZZ_UTIL_H
#define SWNIC_FUZZ_UTIL_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "nl_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* ---- the PRNG ------------------------------------------------------------ */

struct fz_rng {
	uint64_t s;
};

static inline uint64_t fz_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A stream of its own for each (seed, salt): tests do not share one. */
static inline void fz_rng_init(struct fz_rng *r, uint64_t seed, uint64_t salt)
{
	uint64_t x = seed ^ (salt * 0x2545f4914f6cdd1dULL);

	r->s = fz_splitmix64(&x);
	if (!r->s)
		r->s = 0x853c49e6748fea9bULL;
}

static inline uint64_t fz_next(struct fz_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t fz_below(struct fz_rng *r, uint32_t n)
{
	return n ? (uint32_t)(((fz_next(r) >> 32) * (uint64_t)n) >> 32) : 0;
}

static inline bool fz_chance(struct fz_rng *r, unsigned int percent)
{
	return fz_below(r, 100) < percent;
}

static inline void fz_fill(struct fz_rng *r, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t v = fz_next(r);
		size_t n = len < 8 ? len : 8;

		memcpy(p, &v, n);
		p += n;
		len -= n;
	}
}

/* A 64-bit value a parser is likely to get wrong. */
static inline uint64_t fz_u64(struct fz_rng *r)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 65, 127, 128, 255, 256,
		1023, 1024, 4095, 4096, 4097, 65535, 65536, 65537,
		0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
		0x100000000ULL, 0x100000001ULL, 1ULL << 40, 1ULL << 47,
		0x7fffffffffffffffULL, 0x8000000000000000ULL,
		0xfffffffffffff000ULL, 0xfffffffffffffffeULL,
		0xffffffffffffffffULL,
	};

	switch (fz_below(r, 4)) {
	case 0:
		return v[fz_below(r, ARRAY_SIZE(v))];
	case 1:
		return fz_below(r, 256);
	case 2:
		return fz_next(r) >> fz_below(r, 64);
	default:
		return v[fz_below(r, ARRAY_SIZE(v))] + fz_below(r, 3) - 1;
	}
}

static inline uint32_t fz_u32(struct fz_rng *r)
{
	return (uint32_t)fz_u64(r);
}

/* ---- seed and iterations -------------------------------------------------- */

static uint64_t fz_seed_value;
static bool fz_seed_given;

static inline void __attribute__((constructor)) fz_seed_init(void)
{
	const char *s = getenv("SWNIC_FUZZ_SEED");
	struct timespec ts;

	/* Test children end with _exit(): no buffered line may be lost. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (s && *s) {
		fz_seed_value = strtoull(s, NULL, 0);
		fz_seed_given = true;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	fz_seed_value = ((uint64_t)ts.tv_sec * 1000000007ULL) ^
			(uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	/* Short enough to type. */
	fz_seed_value %= 10000000000ULL;
}

static inline uint64_t fz_seed(void)
{
	return fz_seed_value;
}

/* SWNIC_FUZZ_TRACE=1: print every operation before it runs (to reduce). */
static inline bool fz_tracing(void)
{
	static int on = -1;

	if (on < 0) {
		const char *s = getenv("SWNIC_FUZZ_TRACE");

		on = s && *s && *s != '0';
	}
	return on;
}

#define fz_trace(fmt, ...) do {						\
	if (fz_tracing())						\
		printf("# trace: " fmt "\n", ##__VA_ARGS__);		\
} while (0)

/* SWNIC_FUZZ_ITERS, or @dflt. */
static inline unsigned long fz_iters(unsigned long dflt)
{
	const char *s = getenv("SWNIC_FUZZ_ITERS");

	if (s && *s)
		return strtoul(s, NULL, 0);
	return dflt;
}

/* A salt from a test's name: its own stream, the same every run. */
static inline uint64_t fz_salt(const char *name)
{
	uint64_t h = 1469598103934665603ULL;

	while (*name)
		h = (h ^ (uint8_t)*name++) * 1099511628211ULL;
	return h;
}

/* Print the seed (a TAP comment) and how to replay this test. */
static inline void fz_announce(const char *test, unsigned long iters)
{
	printf("# seed: %" PRIu64 "\n", fz_seed());
	printf("# %s: %lu iterations; replay with SWNIC_FUZZ_SEED=%" PRIu64
	       " SWNIC_FUZZ_ITERS=%lu%s\n", test, iters, fz_seed(), iters,
	       fz_seed_given ? " (seed from SWNIC_FUZZ_SEED)" : "");
	fflush(stdout);
}

static inline double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A fault in the fuzzer itself (SIGSEGV, SIGBUS): say where, with the
 * mapping it fell in, before dying of it as before.
 */
static inline void fz_crash_handler(int sig, siginfo_t *si, void *uc)
{
	char line[256], want[32];
	FILE *maps;
	unsigned long a = (unsigned long)si->si_addr, lo, hi;

	snprintf(line, sizeof(line), "# caught signal %d (code %d) at address %#lx\n",
		 sig, si->si_code, a);
	if (write(1, line, strlen(line)) < 0)
		_exit(128 + sig);
	snprintf(want, sizeof(want), "%lx", a);
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi &&
		    write(1, "# in mapping: ", 14) > 0 &&
		    write(1, line, strlen(line)) < 0)
			break;
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void fz_catch_faults(void)
{
	struct sigaction sa = { .sa_sigaction = fz_crash_handler,
				.sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* ---- errno bookkeeping ---------------------------------------------------- */

#define FZ_ERRNO_MAX	192		/* above EHWPOISON (133) */
#define FZ_OPS_MAX	64
#define FZ_BAD_KEEP	16		/* unexpected results kept for the log */

struct fz_errset {
	uint64_t w[FZ_ERRNO_MAX / 64];
};

/* The errnos listed, 0-terminated (0 itself, success, is always allowed). */
static inline struct fz_errset fz_errs(int first, ...)
{
	struct fz_errset s = { { 0 } };
	va_list ap;
	int e = first;

	va_start(ap, first);
	while (e) {
		if (e > 0 && e < FZ_ERRNO_MAX)
			s.w[e / 64] |= 1ULL << (e % 64);
		e = va_arg(ap, int);
	}
	va_end(ap);
	return s;
}

#define FZ_ERRS(...)	fz_errs(__VA_ARGS__, 0)

static inline struct fz_errset fz_errs_or(struct fz_errset a,
					  struct fz_errset b)
{
	for (size_t i = 0; i < ARRAY_SIZE(a.w); i++)
		a.w[i] |= b.w[i];
	return a;
}

static inline bool fz_errs_has(const struct fz_errset *s, int e)
{
	if (!e)
		return true;
	if (e < 0 || e >= FZ_ERRNO_MAX)
		return false;
	return s->w[e / 64] & (1ULL << (e % 64));
}

static inline const char *fz_errname(int e)
{
	const char *name = e > 0 && e < FZ_ERRNO_MAX ? strerrorname_np(e) : NULL;

	return name ? name : "?";
}

struct fz_stats {
	const char *op[FZ_OPS_MAX];
	unsigned long count[FZ_OPS_MAX][FZ_ERRNO_MAX + 1];	/* last: other */
	unsigned long calls;
	unsigned long bad;
	char bad_log[FZ_BAD_KEEP][200];
};

static inline int fz_op_index(struct fz_stats *st, const char *op)
{
	int i;

	for (i = 0; i < FZ_OPS_MAX && st->op[i]; i++)
		if (!strcmp(st->op[i], op))
			return i;
	if (i == FZ_OPS_MAX)
		return FZ_OPS_MAX - 1;
	st->op[i] = op;
	return i;
}

/*
 * Count the result of one call of @op: 0 or a positive errno. Anything
 * @allowed does not list is kept for the log (with @fmt: what the call
 * was). Return: true if allowed.
 */
static inline bool __attribute__((format(printf, 5, 6)))
fz_check(struct fz_stats *st, const char *op, int err,
	 const struct fz_errset *allowed, const char *fmt, ...)
{
	int i = fz_op_index(st, op);
	va_list ap;
	char what[140];

	st->calls++;
	st->count[i][err >= 0 && err < FZ_ERRNO_MAX ? err : FZ_ERRNO_MAX]++;
	if (fz_errs_has(allowed, err))
		return true;
	if (st->bad < FZ_BAD_KEEP) {
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		snprintf(st->bad_log[st->bad], sizeof(st->bad_log[0]),
			 "%s returned %s (%d): %s", op, fz_errname(err), err,
			 what);
	}
	st->bad++;
	return false;
}

/* Print the histogram and the unexpected results. Return: their count. */
static inline unsigned long fz_report(const struct fz_stats *st,
				      const char *what)
{
	char line[1024];

	printf("# %s: %lu calls\n", what, st->calls);
	for (int i = 0; i < FZ_OPS_MAX && st->op[i]; i++) {
		int n = snprintf(line, sizeof(line), "#   %-14s", st->op[i]);

		for (int e = 0; e <= FZ_ERRNO_MAX && n < (int)sizeof(line) - 40; e++) {
			const char *name;

			if (!st->count[i][e])
				continue;
			name = !e ? "ok" : e == FZ_ERRNO_MAX ? "other" :
			       fz_errname(e);
			n += snprintf(line + n, sizeof(line) - n, " %s=%lu",
				      name, st->count[i][e]);
		}
		printf("%s\n", line);
	}
	for (unsigned long i = 0; i < st->bad && i < FZ_BAD_KEEP; i++)
		printf("# UNEXPECTED: %s\n", st->bad_log[i]);
	if (st->bad > FZ_BAD_KEEP)
		printf("# UNEXPECTED: ... and %lu more\n", st->bad - FZ_BAD_KEEP);
	fflush(stdout);
	return st->bad;
}

/* ---- gauges --------------------------------------------------------------- */

enum {
	FZ_G_DEVICES,
	FZ_G_DOMAINS,
	FZ_G_SERVICES,
	FZ_G_ENDPOINTS,
	FZ_G_CQS,
	FZ_G_UNEXP_MSGS,
	FZ_G_UNEXP_BYTES,
	FZ_G_MRS,
	FZ_G_PINNED,
	FZ_G_NUM
};

static const char *const fz_gauge_names[FZ_G_NUM] = {
	"devices", "domains", "services", "endpoints", "cqs",
	"unexpected_msgs", "unexpected_bytes", "mrs", "pinned_bytes",
};

struct fz_gauges {
	uint64_t v[FZ_G_NUM];
	unsigned int found;	/* bitmask of the gauges reported */
};

static inline int fz_gauges_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fz_gauges *g = data;
	const struct nlattr *entry, *a;
	struct nlc_attrs t;

	nlc_attrs(nlh, &t);
	if (!t.tb[SWNIC_A_STATS])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(entry, t.tb[SWNIC_A_STATS]) {
		const char *name = NULL;
		uint64_t value = 0;
		bool has_value = false;

		mnl_attr_for_each_nested(a, entry) {
			if (mnl_attr_get_type(a) == SWNIC_A_STAT_NAME)
				name = mnl_attr_get_str(a);
			else if (mnl_attr_get_type(a) == SWNIC_A_STAT_VALUE) {
				value = mnl_attr_get_u64(a);
				has_value = true;
			}
		}
		if (!name || !has_value)
			continue;
		for (int i = 0; i < FZ_G_NUM; i++)
			if (!strcmp(name, fz_gauge_names[i])) {
				g->v[i] = value;
				g->found |= 1U << i;
			}
	}
	return MNL_CB_OK;
}

/* Read every module-wide gauge. Return: 0, -ENOENT if one is missing. */
static inline int fz_gauges_read(struct fz_gauges *g)
{
	struct nlc_reply r = { .cb = fz_gauges_cb, .data = g };
	struct nlc *c = calloc(1, sizeof(*c));
	int ret;

	memset(g, 0, sizeof(*g));
	if (!c)
		return -ENOMEM;
	ret = nlc_open(c);
	if (!ret)
		ret = nlc_talk(c, nlc_msg(c, SWNIC_NL_CMD_STAT_GET, 0), &r);
	nlc_close(c);
	free(c);
	if (!ret && g->found != (1U << FZ_G_NUM) - 1)
		ret = -ENOENT;
	return ret;
}

static inline bool fz_gauges_equal(const struct fz_gauges *a,
				   const struct fz_gauges *b)
{
	return !memcmp(a->v, b->v, sizeof(a->v));
}

static inline void fz_gauges_print(const char *what, const struct fz_gauges *g)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "# %s:", what);

	for (int i = 0; i < FZ_G_NUM; i++)
		n += snprintf(line + n, sizeof(line) - n, " %s %" PRIu64,
			      fz_gauge_names[i], g->v[i]);
	printf("%s\n", line);
	fflush(stdout);
}

/*
 * Read the gauges until they equal @start, at most @ms milliseconds (what
 * a closed object held goes when its last user lets go: an engine round,
 * an RCU callback). @now gets the last reading; both are printed if they
 * differ. Return: 0 if equal, -EAGAIN if not, or -errno of a read.
 */
static inline int fz_gauges_settle(const struct fz_gauges *start,
				   struct fz_gauges *now, int ms)
{
	double end = fz_now() + ms / 1000.0;
	int ret;

	for (;;) {
		ret = fz_gauges_read(now);
		if (ret)
			return ret;
		if (fz_gauges_equal(start, now))
			return 0;
		if (fz_now() > end)
			break;
		usleep(10000);
	}
	fz_gauges_print("gauges at start", start);
	fz_gauges_print("gauges now", now);
	return -EAGAIN;
}

/* ---- taint ---------------------------------------------------------------- */

/* B (bad page), D (died: oops), W (warning), L (soft lockup). */
#define FZ_TAINT_BAD	((1UL << 5) | (1UL << 7) | (1UL << 9) | (1UL << 14))

static inline unsigned long fz_tainted(void)
{
	unsigned long t = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (f) {
		if (fscanf(f, "%lu", &t) != 1)
			t = 0;
		fclose(f);
	}
	return t;
}

/* Taint bits of FZ_TAINT_BAD that appeared since @before. */
static inline unsigned long fz_new_taint(unsigned long before)
{
	return fz_tainted() & ~before & FZ_TAINT_BAD;
}

/* ---- netlink helpers ------------------------------------------------------ */

/* One request: DEV_NEW/DEV_DEL of @name. Return: 0 or -errno. */
static inline int fz_nl_dev_new(struct nlc *c, const char *name)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_NEW, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, name);
	return nlc_talk(c, nlh, &r);
}

static inline int fz_nl_dev_del(struct nlc *c, const char *name, bool force)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_DEL, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, name);
	if (force)
		mnl_attr_put_u32(nlh, SWNIC_A_FLAGS, SWNIC_DEV_DEL_F_FORCE);
	return nlc_talk(c, nlh, &r);
}

static inline int fz_nl_svc_new(struct nlc *c, const char *dev, uint32_t key,
				uint32_t flags)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_NEW, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, dev);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, flags);
	return nlc_talk(c, nlh, &r);
}

static inline int fz_nl_svc_del(struct nlc *c, const char *dev, uint32_t key)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_DEL, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, dev);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	return nlc_talk(c, nlh, &r);
}

#endif /* SWNIC_FUZZ_UTIL_H */
