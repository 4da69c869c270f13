// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_nl: every command of the "swnic" generic netlink family (and
 * numbers around them) with random attributes: random types (known, unknown,
 * output-only, with NLA_F_NESTED or NLA_F_NET_BYTEORDER set), random
 * lengths, garbage payloads, strings without their NUL, random nests,
 * duplicates, missing and extra attributes, malformed attribute headers,
 * truncated messages, and random request flags (NLM_F_DUMP, ECHO, ROOT,
 * MATCH, ATOMIC, EXCL, CREATE...) - interleaved with valid devices,
 * services and domains being created, used (MRs, CQs, endpoints, auth keys
 * taken) and destroyed, so that the handlers have something to find.
 *
 * As root: every request is answered with 0 or an errno the family
 * documents (EINVAL, ERANGE, EOPNOTSUPP, ENOENT, ENODEV, EEXIST, EBUSY,
 * ENOSPC); the devices and services that were there before are there
 * after, as they were (what the fuzzer changed on them is set back, and
 * what it created it deletes; nothing else may be left); the module-wide
 * gauges are back at their start; the kernel is not tainted.
 *
 * As uid 65534 without capabilities (a forked child): every command that
 * changes state is refused with EPERM, whatever its attributes; reads
 * answer as for root; root's domains and MRs are invisible; joining the
 * events group is refused; nothing changed at all.
 *
 * SWNIC_FUZZ_SEED=N replays a run (the seed is printed first),
 * SWNIC_FUZZ_ITERS=N sets the number of requests (a quarter of them as
 * the unprivileged user), SWNIC_FUZZ_TRACE=1 prints each request before
 * it is sent.
 */
#include <fcntl.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/swnic.h>
#include <linux/swnic_queue.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "fuzz_util.h"

#define DEFAULT_ITERS	60000
#define FZ_DEVS		4		/* swnicfz0..3, the fuzzer's own */
#define MAX_DOMS	6
#define MAX_SNAP_DEVS	64
#define MAX_SNAP_SVCS	256
#define MAX_RAW		512		/* bytes of attributes kept per object */
#define NOBODY		65534

/* ---- what the family holds: devices and services, raw ------------------- */

/* One object of a dump: its key and its attributes, minus live counts. */
struct sobj {
	uint32_t dev;		/* device index */
	char name[SWNIC_NAME_MAX];
	uint32_t id;		/* service id (services) */
	uint32_t key;		/* auth key (services) */
	uint16_t len;
	uint8_t raw[MAX_RAW];	/* attributes, in the kernel's order */
};

struct snap {
	struct sobj dev[MAX_SNAP_DEVS];
	int ndev;
	struct sobj svc[MAX_SNAP_SVCS];
	int nsvc;
};

/* Attributes that change on their own: left out of comparisons. */
static bool volatile_attr(int type)
{
	return type == SWNIC_A_DEV_DOMAINS || type == SWNIC_A_SVC_DOMAINS;
}

static int snap_cb(const struct nlmsghdr *nlh, void *data)
{
	struct snap *s = data;
	bool svc = nlc_cmd(nlh) == SWNIC_NL_CMD_SVC_GET;
	struct sobj *o;
	const struct nlattr *a;

	if (svc ? s->nsvc >= MAX_SNAP_SVCS : s->ndev >= MAX_SNAP_DEVS)
		return MNL_CB_OK;
	o = svc ? &s->svc[s->nsvc++] : &s->dev[s->ndev++];
	memset(o, 0, sizeof(*o));
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		int t = mnl_attr_get_type(a);
		uint16_t n = NLA_ALIGN(a->nla_len);

		if (t == SWNIC_A_DEV_INDEX)
			o->dev = mnl_attr_get_u32(a);
		else if (t == SWNIC_A_DEV_NAME)
			snprintf(o->name, sizeof(o->name), "%s", mnl_attr_get_str(a));
		else if (t == SWNIC_A_SVC_ID)
			o->id = mnl_attr_get_u32(a);
		else if (t == SWNIC_A_SVC_AUTH_KEY)
			o->key = mnl_attr_get_u32(a);
		if (volatile_attr(t) || o->len + n > MAX_RAW)
			continue;
		memcpy(o->raw + o->len, a, n);
		o->len += n;
	}
	return MNL_CB_OK;
}

static int snap_take(struct nlc *c, struct snap *s)
{
	struct nlc_reply r = { .cb = snap_cb, .data = s };
	int ret;

	memset(s, 0, sizeof(*s));
	ret = nlc_talk(c, nlc_msg(c, SWNIC_NL_CMD_DEV_GET, NLM_F_DUMP), &r);
	if (ret)
		return ret;
	memset(&r, 0, sizeof(r));
	r.cb = snap_cb;
	r.data = s;
	return nlc_talk(c, nlc_msg(c, SWNIC_NL_CMD_SVC_GET, NLM_F_DUMP), &r);
}

static const struct sobj *snap_dev(const struct snap *s, const char *name)
{
	for (int i = 0; i < s->ndev; i++)
		if (!strcmp(s->dev[i].name, name))
			return &s->dev[i];
	return NULL;
}

static const struct sobj *snap_svc(const struct snap *s, uint32_t dev,
				   uint32_t id)
{
	for (int i = 0; i < s->nsvc; i++)
		if (s->svc[i].dev == dev && s->svc[i].id == id)
			return &s->svc[i];
	return NULL;
}

static bool sobj_equal(const struct sobj *a, const struct sobj *b)
{
	return a->len == b->len && !memcmp(a->raw, b->raw, a->len);
}

/* Are @a and @b the same devices and services? Prints what differs. */
static bool snap_equal(const struct snap *a, const struct snap *b)
{
	bool eq = true;

	for (int i = 0; i < a->ndev; i++) {
		const struct sobj *o = snap_dev(b, a->dev[i].name);

		if (!o)
			printf("# device %s is gone\n", a->dev[i].name);
		else if (!sobj_equal(o, &a->dev[i]))
			printf("# device %s changed\n", a->dev[i].name);
		eq &= o && sobj_equal(o, &a->dev[i]);
	}
	for (int i = 0; i < b->ndev; i++)
		if (!snap_dev(a, b->dev[i].name)) {
			printf("# device %s (index %u) was left behind\n",
			       b->dev[i].name, b->dev[i].dev);
			eq = false;
		}
	for (int i = 0; i < a->nsvc; i++) {
		const struct sobj *o = snap_svc(b, a->svc[i].dev, a->svc[i].id);

		if (!o)
			printf("# service %u of device %u is gone\n",
			       a->svc[i].id, a->svc[i].dev);
		else if (!sobj_equal(o, &a->svc[i]))
			printf("# service %u of device %u changed\n",
			       a->svc[i].id, a->svc[i].dev);
		eq &= o && sobj_equal(o, &a->svc[i]);
	}
	for (int i = 0; i < b->nsvc; i++)
		if (!snap_svc(a, b->svc[i].dev, b->svc[i].id)) {
			printf("# service %u (auth key %u) of device %u was left behind\n",
			       b->svc[i].id, b->svc[i].key, b->svc[i].dev);
			eq = false;
		}
	return eq;
}

/* ---- the fuzzer's state ---------------------------------------------------- */

struct dom {
	int fd;
	char dev[SWNIC_NAME_MAX];
	uint32_t id;
	int cq;
	void *buf;		/* a registered page */
};

struct fz {
	struct fz_rng r;
	struct fz_stats st;
	struct nlc *c;
	const struct snap *initial;
	struct dom dom[MAX_DOMS];
	char created[MAX_SNAP_DEVS][SWNIC_NAME_MAX];	/* devices we made */
	int ncreated;
	bool unpriv;
	uint8_t msg[8192];
	unsigned long requests, answered;
};

static const char *const pool_names[] = {
	"swnic0", "swnicfz0", "swnicfz1", "swnicfz2", "swnicfz3", "swnic",
	"swnic0\n", "lo", "", "swnicfz0123456789", "../swnic0", "swnic-x_y",
};

/* Commands that change state: GENL_UNS_ADMIN_PERM in the family. */
static bool admin_cmd(int cmd)
{
	switch (cmd) {
	case SWNIC_NL_CMD_DEV_NEW:
	case SWNIC_NL_CMD_DEV_DEL:
	case SWNIC_NL_CMD_DEV_SET:
	case SWNIC_NL_CMD_STAT_RESET:
	case SWNIC_NL_CMD_SVC_NEW:
	case SWNIC_NL_CMD_SVC_DEL:
	case SWNIC_NL_CMD_SVC_SET:
		return true;
	default:
		return false;
	}
}

enum akind { A_U32, A_U64, A_STR, A_NEST, A_BIN };

static int attr_kind(int type)
{
	switch (type) {
	case SWNIC_A_DEV_NAME:
	case SWNIC_A_DEV_IFNAME:
	case SWNIC_A_DOMAIN_COMM:
		return A_STR;
	case SWNIC_A_DEV_MAX_PINNED:
	case SWNIC_A_DOMAIN_PINNED:
	case SWNIC_A_MR_KEY:
	case SWNIC_A_MR_ADDR:
	case SWNIC_A_MR_LENGTH:
	case SWNIC_A_MR_PINNED_PAGES:
	case SWNIC_A_MR_REVOCATIONS:
	case SWNIC_A_MR_INVALIDATIONS:
		return A_U64;
	case SWNIC_A_STATS:
	case SWNIC_A_SVC_MEMBERS:
		return A_NEST;
	case SWNIC_A_UNSPEC:
	case SWNIC_A_PAD:
		return A_BIN;
	default:
		return type <= SWNIC_A_MAX ? A_U32 : A_BIN;
	}
}

/* Attributes each command takes (its policy), to be picked more often. */
static int pick_type(struct fz *f, int cmd)
{
	static const uint16_t dev[] = { SWNIC_A_DEV_INDEX, SWNIC_A_DEV_NAME };
	static const uint16_t set[] = {
		SWNIC_A_DEV_STATE, SWNIC_A_DEV_IFINDEX, SWNIC_A_DEV_IFNAME,
		SWNIC_A_DEV_MAX_DOMAINS, SWNIC_A_DEV_MAX_MR, SWNIC_A_DEV_MAX_EP,
		SWNIC_A_DEV_MAX_CQ, SWNIC_A_DEV_MAX_PINNED, SWNIC_A_FLAGS,
	};
	static const uint16_t svc[] = {
		SWNIC_A_SVC_ID, SWNIC_A_SVC_AUTH_KEY, SWNIC_A_SVC_FLAGS,
		SWNIC_A_SVC_MEMBERS, SWNIC_A_SVC_MAX_DOMAINS,
	};
	int t;

	switch (fz_below(&f->r, 10)) {
	case 0: case 1: case 2:
		return dev[fz_below(&f->r, ARRAY_SIZE(dev))];
	case 3: case 4:
		if (cmd >= SWNIC_NL_CMD_SVC_GET && cmd <= SWNIC_NL_CMD_SVC_SET)
			return svc[fz_below(&f->r, ARRAY_SIZE(svc))];
		if (cmd >= SWNIC_NL_CMD_DOMAIN_GET && cmd != SWNIC_NL_CMD_SVC_GET)
			return SWNIC_A_DOMAIN_ID;
		return set[fz_below(&f->r, ARRAY_SIZE(set))];
	case 5:
		return fz_below(&f->r, 4) ? SWNIC_A_MAX + 1 - fz_below(&f->r, 3) :
		       fz_below(&f->r, 0x4000);
	default:
		t = fz_below(&f->r, SWNIC_A_MAX + 1);
		return t;
	}
}

/* The attributes a command's policy takes (a well-formed request's). */
static int policy_type(struct fz *f, int cmd)
{
	static const uint16_t dev_get[] = { SWNIC_A_DEV_INDEX, SWNIC_A_DEV_NAME };
	static const uint16_t dev_new[] = { SWNIC_A_DEV_NAME, SWNIC_A_DEV_IFINDEX,
					    SWNIC_A_DEV_IFNAME };
	static const uint16_t dev_del[] = { SWNIC_A_DEV_INDEX, SWNIC_A_DEV_NAME,
					    SWNIC_A_FLAGS };
	static const uint16_t dev_set[] = {
		SWNIC_A_DEV_INDEX, SWNIC_A_DEV_NAME, SWNIC_A_DEV_STATE,
		SWNIC_A_DEV_IFINDEX, SWNIC_A_DEV_IFNAME, SWNIC_A_DEV_MAX_DOMAINS,
		SWNIC_A_DEV_MAX_MR, SWNIC_A_DEV_MAX_EP, SWNIC_A_DEV_MAX_CQ,
		SWNIC_A_DEV_MAX_PINNED, SWNIC_A_DEV_MAX_DOMAINS_PER_USER,
	};
	static const uint16_t dom[] = { SWNIC_A_DEV_INDEX, SWNIC_A_DEV_NAME,
					SWNIC_A_DOMAIN_ID };
	static const uint16_t svc[] = { SWNIC_A_DEV_INDEX, SWNIC_A_DEV_NAME,
					SWNIC_A_SVC_ID, SWNIC_A_SVC_AUTH_KEY };
	static const uint16_t svc_set[] = {
		SWNIC_A_DEV_INDEX, SWNIC_A_DEV_NAME, SWNIC_A_SVC_ID,
		SWNIC_A_SVC_AUTH_KEY, SWNIC_A_SVC_FLAGS, SWNIC_A_SVC_MEMBERS,
		SWNIC_A_SVC_MAX_DOMAINS,
	};
#define PICK(a)	a[fz_below(&f->r, ARRAY_SIZE(a))]
	switch (cmd) {
	case SWNIC_NL_CMD_DEV_NEW:
		return PICK(dev_new);
	case SWNIC_NL_CMD_DEV_DEL:
		return PICK(dev_del);
	case SWNIC_NL_CMD_DEV_SET:
		return PICK(dev_set);
	case SWNIC_NL_CMD_DOMAIN_GET:
	case SWNIC_NL_CMD_STAT_GET:
	case SWNIC_NL_CMD_STAT_RESET:
	case SWNIC_NL_CMD_MR_GET:
		return PICK(dom);
	case SWNIC_NL_CMD_SVC_GET:
	case SWNIC_NL_CMD_SVC_DEL:
		return PICK(svc);
	case SWNIC_NL_CMD_SVC_NEW:
	case SWNIC_NL_CMD_SVC_SET:
		return PICK(svc_set);
	default:
		return PICK(dev_get);
	}
#undef PICK
}

/* A u32 worth trying for attribute @type. */
static uint32_t pick_u32(struct fz *f, int type)
{
	int i;

	switch (fz_below(&f->r, 4)) {
	case 0:
		return fz_u32(&f->r);
	case 1:
		return fz_below(&f->r, 8);
	default:
		break;
	}
	switch (type) {
	case SWNIC_A_DEV_INDEX:
		return fz_below(&f->r, 6);
	case SWNIC_A_DOMAIN_ID:
		i = fz_below(&f->r, MAX_DOMS);
		return f->dom[i].fd >= 0 ? f->dom[i].id : fz_below(&f->r, 64);
	case SWNIC_A_SVC_AUTH_KEY:
		return fz_chance(&f->r, 30) ? SWNIC_AUTH_KEY_DEFAULT :
		       100 + fz_below(&f->r, 8);
	case SWNIC_A_SVC_ID:
		return 1 + fz_below(&f->r, 6);
	case SWNIC_A_SVC_FLAGS:
		return fz_below(&f->r, 8);
	case SWNIC_A_DEV_IFINDEX:
		return fz_below(&f->r, 3);
	case SWNIC_A_FLAGS:
		return fz_below(&f->r, 4);
	case SWNIC_A_DEV_STATE:
		return fz_below(&f->r, 3);
	default:
		return fz_chance(&f->r, 50) ? 1 + fz_below(&f->r, 1024) :
		       SWNIC_LIMIT_MAX + fz_below(&f->r, 3) - 1;
	}
}

/* Append an attribute; @len may lie (nla_len) if @raw_len says so. */
static size_t put_attr(uint8_t *p, size_t room, uint16_t type, const void *data,
		       uint16_t len)
{
	struct nlattr *a = (void *)p;
	size_t n = NLA_ALIGN(NLA_HDRLEN + len);

	if (n > room)
		return 0;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy(p + NLA_HDRLEN, data, len);
	memset(p + NLA_HDRLEN + len, 0, n - NLA_HDRLEN - len);
	return n;
}

/* A random nest: members, stats entries, or anything. */
static uint16_t make_nest(struct fz *f, uint8_t *p, size_t room, int depth)
{
	size_t off = 0;
	int n = fz_below(&f->r, fz_chance(&f->r, 10) ? 80 : 6);

	for (int i = 0; i < n; i++) {
		uint8_t v[24];
		uint16_t t = fz_chance(&f->r, 80) ? 1 + fz_below(&f->r, 2) :
			     fz_below(&f->r, 8);
		uint16_t len = fz_chance(&f->r, 85) ? 4 : fz_below(&f->r, sizeof(v));
		uint32_t id = fz_chance(&f->r, 50) ? fz_below(&f->r, 3) * 1000 :
			      fz_u32(&f->r);

		if (depth < 2 && fz_chance(&f->r, 10)) {
			uint8_t inner[256];
			uint16_t m = make_nest(f, inner, sizeof(inner), depth + 1);
			size_t w = put_attr(p + off, room - off, t | NLA_F_NESTED,
					    inner, m);

			if (!w)
				break;
			off += w;
			continue;
		}
		fz_fill(&f->r, v, sizeof(v));
		memcpy(v, &id, sizeof(id));
		{
			size_t w = put_attr(p + off, room - off, t, v, len);

			if (!w)
				break;
			off += w;
		}
	}
	return off;
}

/*
 * A random attribute for @cmd at @p; @sane: one of the command's, of the
 * right type (the value may still be wrong). Return: bytes written.
 */
static size_t rand_attr(struct fz *f, int cmd, uint8_t *p, size_t room,
			bool sane)
{
	int type = sane ? policy_type(f, cmd) : pick_type(f, cmd);
	int kind = attr_kind(type & NLA_TYPE_MASK);
	uint8_t v[300];
	uint16_t len;
	uint16_t flags = 0;

	if (!sane && fz_chance(&f->r, 4))
		flags |= NLA_F_NESTED;
	if (!sane && fz_chance(&f->r, 4))
		flags |= NLA_F_NET_BYTEORDER;
	fz_fill(&f->r, v, sizeof(v));
	switch (kind) {
	case A_U32: {
		uint32_t x = pick_u32(f, type);

		memcpy(v, &x, sizeof(x));
		len = sane || fz_chance(&f->r, 85) ? 4 : fz_below(&f->r, 12);
		break;
	}
	case A_U64: {
		uint64_t x = fz_u64(&f->r);

		memcpy(v, &x, sizeof(x));
		len = sane || fz_chance(&f->r, 85) ? 8 : fz_below(&f->r, 16);
		break;
	}
	case A_STR: {
		const char *s = pool_names[fz_below(&f->r, ARRAY_SIZE(pool_names))];

		switch (sane ? 3 + fz_below(&f->r, 7) : fz_below(&f->r, 10)) {
		case 0:		/* no NUL */
			len = strlen(s);
			memcpy(v, s, len);
			break;
		case 1:		/* long */
			len = 16 + fz_below(&f->r, 40);
			memset(v, 'a', len);
			v[len - 1] = 0;
			break;
		case 2:		/* garbage */
			len = fz_below(&f->r, 40);
			break;
		case 3:		/* "swnic" and a random suffix */
			len = 6 + fz_below(&f->r, 10);
			memcpy(v, "swnic", 5);
			for (int i = 5; i < len - 1; i++)
				v[i] = "abcxyz019_-"[fz_below(&f->r, 11)];
			v[len - 1] = 0;
			break;
		default:
			len = strlen(s) + 1;
			memcpy(v, s, len);
			break;
		}
		break;
	}
	case A_NEST:
		if (sane || fz_chance(&f->r, 80)) {
			len = make_nest(f, v, sizeof(v), 0);
			flags |= sane || fz_chance(&f->r, 70) ? NLA_F_NESTED : 0;
		} else {
			len = fz_below(&f->r, 40);
		}
		break;
	default:
		len = fz_below(&f->r, 40);
		break;
	}
	return put_attr(p, room, (type & NLA_TYPE_MASK) | flags, v, len);
}

/*
 * Never delete what was there before the fuzzer: a DEV_DEL or SVC_DEL
 * naming a device or service of the initial snapshot names another.
 */
static void sanitize(struct fz *f, int cmd, uint8_t *attrs, size_t len)
{
	struct nlattr *a;
	size_t off = 0;

	if (cmd != SWNIC_NL_CMD_DEV_DEL && cmd != SWNIC_NL_CMD_SVC_DEL)
		return;
	while (off + NLA_HDRLEN <= len) {
		int t;

		a = (void *)(attrs + off);
		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > len)
			break;
		t = a->nla_type & NLA_TYPE_MASK;
		if (cmd == SWNIC_NL_CMD_DEV_DEL && t == SWNIC_A_DEV_NAME) {
			char name[SWNIC_NAME_MAX + 1] = "";
			size_t n = a->nla_len - NLA_HDRLEN;

			memcpy(name, attrs + off + NLA_HDRLEN,
			       n < SWNIC_NAME_MAX ? n : SWNIC_NAME_MAX);
			if (snap_dev(f->initial, name))
				memcpy(attrs + off + NLA_HDRLEN, "x", 1);
		} else if (cmd == SWNIC_NL_CMD_DEV_DEL && t == SWNIC_A_DEV_INDEX &&
			   a->nla_len >= NLA_HDRLEN + 4) {
			uint32_t idx;

			memcpy(&idx, attrs + off + NLA_HDRLEN, 4);
			for (int i = 0; i < f->initial->ndev; i++)
				if (f->initial->dev[i].dev == idx)
					memcpy(attrs + off + NLA_HDRLEN,
					       &(uint32_t){ 63 }, 4);
		} else if (cmd == SWNIC_NL_CMD_SVC_DEL &&
			   (t == SWNIC_A_SVC_ID || t == SWNIC_A_SVC_AUTH_KEY) &&
			   a->nla_len >= NLA_HDRLEN + 4) {
			uint32_t v;

			memcpy(&v, attrs + off + NLA_HDRLEN, 4);
			for (int i = 0; i < f->initial->nsvc; i++) {
				const struct sobj *s = &f->initial->svc[i];

				if (s->id != SWNIC_SVC_DEFAULT_ID &&
				    (t == SWNIC_A_SVC_ID ? s->id : s->key) == v)
					memcpy(attrs + off + NLA_HDRLEN,
					       &(uint32_t){ 0x7ffffff0 }, 4);
			}
		}
		off += NLA_ALIGN(a->nla_len);
	}
}

/* ---- requests ---------------------------------------------------------------- */

static const struct fz_errset *root_errs(void)
{
	static struct fz_errset e;
	static bool init;

	if (!init) {
		e = FZ_ERRS(EINVAL, ERANGE, EOPNOTSUPP, ENOENT, ENODEV, EEXIST,
			    EBUSY, ENOSPC);
		init = true;
	}
	return &e;
}

static const char *cmd_name(int cmd)
{
	static const char *const names[] = {
		"UNSPEC", "DEV_GET", "DEV_NEW", "DEV_DEL", "DEV_SET",
		"DOMAIN_GET", "DOMAIN_NEW", "DOMAIN_DEL", "STAT_GET",
		"STAT_RESET", "SVC_GET", "SVC_NEW", "SVC_DEL", "SVC_SET",
		"LIMIT_HIT", "MR_GET", "MR_REVOKED",
	};

	return cmd >= 0 && cmd < (int)ARRAY_SIZE(names) ? names[cmd] : "CMD_>MAX";
}

/* Track devices a successful DEV_NEW made (by name, from a dump). */
static void track_new_devices(struct fz *f)
{
	static struct snap now;

	if (snap_take(f->c, &now))
		return;
	for (int i = 0; i < now.ndev; i++) {
		bool known = snap_dev(f->initial, now.dev[i].name);

		for (int j = 0; j < f->ncreated && !known; j++)
			known = !strcmp(f->created[j], now.dev[i].name);
		if (!known && f->ncreated < MAX_SNAP_DEVS)
			snprintf(f->created[f->ncreated++], SWNIC_NAME_MAX, "%s",
				 now.dev[i].name);
	}
}

/* One random request. */
static void fuzz_request(struct fz *f)
{
	static const uint16_t xflags[] = {
		NLM_F_ECHO, NLM_F_ROOT, NLM_F_MATCH, NLM_F_ATOMIC, NLM_F_EXCL,
		NLM_F_CREATE, NLM_F_APPEND, NLM_F_REPLACE, NLM_F_NONREC,
	};
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlc_reply r = { 0 };
	int cmd, n, ret, err;
	uint16_t flags = 0;
	size_t off, cut = 0;
	bool well_formed = true, sane = fz_chance(&f->r, 50);

	cmd = fz_chance(&f->r, 92) ? 1 + fz_below(&f->r, SWNIC_NL_CMD_MAX) :
	      fz_chance(&f->r, 50) ? 0 :
	      SWNIC_NL_CMD_MAX + 1 + fz_below(&f->r, 255 - SWNIC_NL_CMD_MAX);
	if (fz_chance(&f->r, 30))
		flags |= NLM_F_DUMP;
	for (int i = sane ? 0 : fz_below(&f->r, 3); i > 0; i--)
		flags |= xflags[fz_below(&f->r, ARRAY_SIZE(xflags))];

	nlh = nlc_msg(f->c, cmd, flags);
	g = mnl_nlmsg_get_payload(nlh);
	if (fz_chance(&f->r, 10))
		g->version = fz_below(&f->r, 256);
	if (!sane && fz_chance(&f->r, 5))
		g->reserved = fz_next(&f->r);

	off = 0;
	n = sane ? fz_below(&f->r, 5) :
	    fz_chance(&f->r, 10) ? fz_below(&f->r, 40) : fz_below(&f->r, 6);
	{
		uint8_t *attrs = (uint8_t *)nlh + nlh->nlmsg_len;
		size_t room = sizeof(f->c->req) - nlh->nlmsg_len - 64;

		for (int i = 0; i < n && room - off > 400; i++)
			off += rand_attr(f, cmd, attrs + off, room - off, sane);
		/* A malformed attribute header at the end. */
		if (!sane && fz_chance(&f->r, 4)) {
			struct nlattr *a = (void *)(attrs + off);

			a->nla_type = pick_type(f, cmd);
			a->nla_len = fz_chance(&f->r, 50) ? fz_below(&f->r, NLA_HDRLEN) :
				     NLA_HDRLEN + 8 + fz_below(&f->r, 200);
			memset(attrs + off + NLA_HDRLEN, 0, 8);
			off += NLA_HDRLEN + 8;
		}
		sanitize(f, cmd, attrs, off);
		nlh->nlmsg_len += off;
		/* Cut short: what is left must not look like another message. */
		if (!sane && fz_chance(&f->r, 3) && off) {
			cut = 1 + fz_below(&f->r, off < 15 ? off : 15);
			nlh->nlmsg_len -= cut;
			well_formed = nlh->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN;
		}
		if (!sane && fz_chance(&f->r, 1)) {
			nlh->nlmsg_len = NLMSG_HDRLEN + fz_below(&f->r, GENL_HDRLEN);
			well_formed = false;
			cut = 1;
		}
	}

	fz_trace("request %s (%d) flags 0x%x, %d attributes, %zu bytes%s", cmd_name(cmd),
		 cmd, nlh->nlmsg_flags, n, (size_t)nlh->nlmsg_len, cut ? " (cut)" : "");
	f->requests++;
	if (cut) {
		/* Send more than nlmsg_len says (less than another header). */
		size_t send_len = nlh->nlmsg_len + (well_formed ? cut : 0);

		ret = mnl_socket_sendto(f->c->nl, nlh, send_len) < 0 ? -errno : 0;
		if (!ret)
			ret = nlc_recv(f->c, nlh->nlmsg_seq, &r);
		else
			r.error = ret;
	} else {
		ret = nlc_talk(f->c, nlh, &r);
	}
	err = -ret;
	f->answered++;

	if (f->unpriv && admin_cmd(cmd) && well_formed) {
		/*
		 * Generic netlink refuses a reserved field or flags it does
		 * not know (EINVAL) and a dump of a command without one
		 * (EOPNOTSUPP) before it looks at permissions, on kernels
		 * with genl_header_check(); the rest is EPERM, always.
		 */
		uint16_t fl = nlh->nlmsg_flags;
		bool dump = (fl & NLM_F_DUMP) == NLM_F_DUMP;
		bool strict_bad = g->reserved ||
			((dump ? fl & ~NLM_F_DUMP : fl) &
			 ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO));
		struct fz_errset eperm = strict_bad ? FZ_ERRS(EPERM, EINVAL) :
					 dump ? FZ_ERRS(EPERM, EOPNOTSUPP) :
					 FZ_ERRS(EPERM);

		fz_check(&f->st, cmd_name(cmd), err, &eperm,
			 "unprivileged %s, flags 0x%x, %d attributes (must be EPERM)",
			 cmd_name(cmd), nlh->nlmsg_flags, n);
		return;
	}
	fz_check(&f->st, cmd_name(cmd), err, root_errs(),
		 "%s %s, flags 0x%x, %d attributes, %u bytes%s: \"%s\"",
		 f->unpriv ? "unprivileged" : "root", cmd_name(cmd),
		 nlh->nlmsg_flags, n, nlh->nlmsg_len, cut ? " (cut)" : "", r.msg);
	if (!err && !f->unpriv && cmd == SWNIC_NL_CMD_DEV_NEW)
		track_new_devices(f);
}

/* ---- valid objects ----------------------------------------------------------- */

static void close_dom(struct dom *d)
{
	if (d->fd >= 0)
		close(d->fd);
	if (d->buf)
		munmap(d->buf, 4096);
	d->fd = -1;
	d->buf = NULL;
}

/* Open, use and close domains on the devices (theirs and ours). */
static void op_domain(struct fz *f)
{
	int i = fz_below(&f->r, MAX_DOMS), err;
	struct dom *d = &f->dom[i];
	char path[64];
	struct fz_errset open_errs = FZ_ERRS(ENOENT, ENODEV, ENXIO, EMFILE, EDQUOT);
	struct fz_errset use_errs = FZ_ERRS(ENODEV, ENOSPC, EBUSY, ENOKEY, EPERM,
					    EKEYREVOKED, EDQUOT, EACCES, EMFILE);

	if (d->fd >= 0 && fz_chance(&f->r, 30)) {
		close_dom(d);
		return;
	}
	if (d->fd < 0) {
		snprintf(d->dev, sizeof(d->dev), "%s",
			 fz_chance(&f->r, 50) || f->unpriv ? "swnic0" :
			 pool_names[1 + fz_below(&f->r, FZ_DEVS)]);
		snprintf(path, sizeof(path), "/dev/%s", d->dev);
		d->fd = open(path, O_RDWR | O_CLOEXEC);
		fz_check(&f->st, "open", d->fd < 0 ? errno : 0, &open_errs,
			 "open %s", path);
		if (d->fd < 0)
			return;
		{
			struct swnic_query_device q = { .size = sizeof(q) };

			d->id = ioctl(d->fd, SWNIC_IOCTL_QUERY_DEVICE, &q) ? 0 : q.domain_id;
		}
		return;
	}
	switch (fz_below(&f->r, 4)) {
	case 0: {
		struct swnic_auth_key k = { .size = sizeof(k) };

		k.auth_key = fz_chance(&f->r, 30) ? SWNIC_AUTH_KEY_DEFAULT :
			     100 + fz_below(&f->r, 8);
		err = ioctl(d->fd, SWNIC_IOCTL_AUTH_KEY, &k) ? errno : 0;
		fz_check(&f->st, "AUTH_KEY", err, &use_errs, "take key %u on %s",
			 k.auth_key, d->dev);
		break;
	}
	case 1: {
		struct swnic_mr_reg m = { .size = sizeof(m), .length = 4096,
					  .access = SWNIC_MR_ACCESS_ALL };

		if (!d->buf) {
			d->buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (d->buf == MAP_FAILED) {
				d->buf = NULL;
				break;
			}
			memset(d->buf, 1, 4096);
		}
		m.addr = (uintptr_t)d->buf;
		err = ioctl(d->fd, SWNIC_IOCTL_MR_REG, &m) ? errno : 0;
		fz_check(&f->st, "MR_REG", err, &use_errs, "4 KiB on %s", d->dev);
		break;
	}
	default: {
		struct swnic_cq_create c = { .size = sizeof(c), .entries = 8 };

		err = ioctl(d->fd, SWNIC_IOCTL_CQ_CREATE, &c) ? errno : 0;
		fz_check(&f->st, "CQ_CREATE", err, &use_errs, "on %s", d->dev);
		if (err)
			break;
		if (d->cq >= 0)
			close(d->cq);
		d->cq = c.fd;
		if (fz_chance(&f->r, 50)) {
			struct swnic_ep_create e = {
				.size = sizeof(e), .type = SWNIC_EP_RDM,
				.tx_cq = c.cq_id, .rx_cq = c.cq_id,
			};

			err = ioctl(d->fd, SWNIC_IOCTL_EP_CREATE, &e) ? errno : 0;
			fz_check(&f->st, "EP_CREATE", err, &use_errs, "on %s", d->dev);
			if (!err)
				close(e.fd);
		}
		break;
	}
	}
}

/* Valid device and service changes, on the fuzzer's own devices mostly. */
static void op_admin(struct fz *f)
{
	const char *dev = pool_names[1 + fz_below(&f->r, FZ_DEVS)];
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh;
	int err;

	switch (fz_below(&f->r, 7)) {
	case 0: case 1:
		err = -fz_nl_dev_new(f->c, dev);
		fz_check(&f->st, "dev_new", err, root_errs(), "DEV_NEW %s", dev);
		if (!err)
			track_new_devices(f);
		return;
	case 2:
		err = -fz_nl_dev_del(f->c, dev, fz_chance(&f->r, 50));
		fz_check(&f->st, "dev_del", err, root_errs(), "DEV_DEL %s", dev);
		return;
	case 3:
		nlh = nlc_msg(f->c, SWNIC_NL_CMD_DEV_SET, 0);
		mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, dev);
		if (fz_chance(&f->r, 50))
			mnl_attr_put_u32(nlh, SWNIC_A_DEV_STATE, fz_below(&f->r, 2));
		if (fz_chance(&f->r, 50))
			mnl_attr_put_u32(nlh, SWNIC_A_DEV_MAX_DOMAINS, 1 + fz_below(&f->r, 4));
		if (fz_chance(&f->r, 30))
			mnl_attr_put_u32(nlh, SWNIC_A_DEV_IFINDEX, fz_below(&f->r, 2));
		mnl_attr_put_u32(nlh, SWNIC_A_DEV_MAX_CQ, 1 + fz_below(&f->r, 64));
		err = -nlc_talk(f->c, nlh, &r);
		fz_check(&f->st, "dev_set", err, root_errs(), "DEV_SET %s: %s", dev, r.msg);
		return;
	case 4: case 5: {
		/* A service, on swnic0 or one of ours. */
		const char *on = fz_chance(&f->r, 40) ? "swnic0" : dev;
		uint32_t key = 100 + fz_below(&f->r, 8);

		if (fz_chance(&f->r, 50)) {
			nlh = nlc_msg(f->c, SWNIC_NL_CMD_SVC_NEW, 0);
			mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, on);
			mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
			mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, fz_below(&f->r, 4));
			if (fz_chance(&f->r, 50)) {
				struct nlattr *nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);

				mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_UID, NOBODY);
				mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_GID, fz_below(&f->r, 3));
				mnl_attr_nest_end(nlh, nest);
			}
			if (fz_chance(&f->r, 30))
				mnl_attr_put_u32(nlh, SWNIC_A_SVC_MAX_DOMAINS, 1);
			err = -nlc_talk(f->c, nlh, &r);
			fz_check(&f->st, "svc_new", err, root_errs(), "SVC_NEW %s %u: %s",
				 on, key, r.msg);
		} else if (fz_chance(&f->r, 50)) {
			nlh = nlc_msg(f->c, SWNIC_NL_CMD_SVC_SET, 0);
			mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, on);
			mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
			mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, fz_below(&f->r, 4));
			err = -nlc_talk(f->c, nlh, &r);
			fz_check(&f->st, "svc_set", err, root_errs(), "SVC_SET %s %u: %s",
				 on, key, r.msg);
		} else {
			err = -fz_nl_svc_del(f->c, on, key);
			fz_check(&f->st, "svc_del", err, root_errs(), "SVC_DEL %s %u",
				 on, key);
		}
		return;
	}
	default: {
		/* Reads with filters that name something. */
		static const uint8_t cmds[] = {
			SWNIC_NL_CMD_DOMAIN_GET, SWNIC_NL_CMD_MR_GET,
			SWNIC_NL_CMD_STAT_GET, SWNIC_NL_CMD_SVC_GET,
			SWNIC_NL_CMD_DEV_GET,
		};
		int cmd = cmds[fz_below(&f->r, ARRAY_SIZE(cmds))];
		struct dom *d = &f->dom[fz_below(&f->r, MAX_DOMS)];

		nlh = nlc_msg(f->c, cmd, fz_chance(&f->r, 60) ? NLM_F_DUMP : 0);
		if (d->fd >= 0 && cmd != SWNIC_NL_CMD_SVC_GET && cmd != SWNIC_NL_CMD_DEV_GET)
			mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, d->id);
		else
			mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, d->fd >= 0 ? d->dev : dev);
		err = -nlc_talk(f->c, nlh, &r);
		fz_check(&f->st, "read", err, root_errs(), "%s: %s", cmd_name(cmd), r.msg);
		return;
	}
	}
}

static void fuzz_step(struct fz *f)
{
	unsigned int w = fz_below(&f->r, 100);

	if (w < 78 || f->unpriv)
		fuzz_request(f);
	else if (w < 90)
		op_admin(f);
	else
		op_domain(f);
	if (f->unpriv && w >= 90)
		op_domain(f);
}

static struct nlc *nl_open(void)
{
	struct nlc *c = calloc(1, sizeof(*c));
	struct timeval tv = { .tv_sec = 10 };

	if (!c)
		return NULL;
	if (nlc_open(c)) {
		free(c);
		return NULL;
	}
	/* A request never answered fails the test instead of hanging it. */
	setsockopt(mnl_socket_get_fd(c->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return c;
}

static void fz_init(struct fz *f, struct nlc *c, const struct snap *initial,
		    const char *test)
{
	memset(f, 0, sizeof(*f));
	fz_rng_init(&f->r, fz_seed(), fz_salt(test));
	f->c = c;
	f->initial = initial;
	for (int i = 0; i < MAX_DOMS; i++) {
		f->dom[i].fd = -1;
		f->dom[i].cq = -1;
	}
}

static void fz_close_doms(struct fz *f)
{
	for (int i = 0; i < MAX_DOMS; i++) {
		close_dom(&f->dom[i]);
		if (f->dom[i].cq >= 0)
			close(f->dom[i].cq);
		f->dom[i].cq = -1;
	}
}

/*
 * Undo what the fuzzer did: delete the devices it made (and any service on
 * them with them), services it added to devices of before, and set what it
 * changed on those back from @initial.
 */
static void restore(struct nlc *c, const struct snap *initial)
{
	static struct snap now;
	struct nlc_reply r;
	struct nlmsghdr *nlh;

	if (snap_take(c, &now))
		return;
	for (int i = 0; i < now.ndev; i++)
		if (!snap_dev(initial, now.dev[i].name))
			fz_nl_dev_del(c, now.dev[i].name, true);
	for (int i = 0; i < now.nsvc; i++) {
		const struct sobj *s = &now.svc[i];

		if (snap_svc(initial, s->dev, s->id))
			continue;
		memset(&r, 0, sizeof(r));
		nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_DEL, 0);
		mnl_attr_put_u32(nlh, SWNIC_A_DEV_INDEX, s->dev);
		mnl_attr_put_u32(nlh, SWNIC_A_SVC_ID, s->id);
		nlc_talk(c, nlh, &r);
	}
	/* Every settable attribute of the devices and services of before. */
	for (int i = 0; i < initial->ndev; i++) {
		const struct sobj *d = &initial->dev[i];
		const struct nlattr *a;
		size_t off = 0;

		for (off = 0; off + NLA_HDRLEN <= d->len; off += NLA_ALIGN(a->nla_len)) {
			int t;

			a = (const void *)(d->raw + off);
			t = a->nla_type & NLA_TYPE_MASK;
			if (t == SWNIC_A_DEV_INDEX || t == SWNIC_A_DEV_NAME ||
			    t == SWNIC_A_DEV_IFNAME || t == SWNIC_A_PAD)
				continue;
			memset(&r, 0, sizeof(r));
			nlh = nlc_msg(c, SWNIC_NL_CMD_DEV_SET, 0);
			mnl_attr_put_u32(nlh, SWNIC_A_DEV_INDEX, d->dev);
			mnl_attr_put(nlh, a->nla_type, a->nla_len - NLA_HDRLEN,
				     mnl_attr_get_payload(a));
			nlc_talk(c, nlh, &r);	/* output-only ones: EINVAL */
		}
	}
	for (int i = 0; i < initial->nsvc; i++) {
		const struct sobj *s = &initial->svc[i];
		const struct nlattr *a;

		memset(&r, 0, sizeof(r));
		nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_SET, 0);
		mnl_attr_put_u32(nlh, SWNIC_A_DEV_INDEX, s->dev);
		mnl_attr_put_u32(nlh, SWNIC_A_SVC_ID, s->id);
		for (size_t off = 0; off + NLA_HDRLEN <= s->len; off += NLA_ALIGN(a->nla_len)) {
			int t;

			a = (const void *)(s->raw + off);
			t = a->nla_type & NLA_TYPE_MASK;
			if (t == SWNIC_A_SVC_FLAGS || t == SWNIC_A_SVC_MAX_DOMAINS ||
			    t == SWNIC_A_SVC_MEMBERS)
				mnl_attr_put(nlh, a->nla_type, a->nla_len - NLA_HDRLEN,
					     mnl_attr_get_payload(a));
		}
		nlc_talk(c, nlh, &r);
	}
}

/* ---- the tests ------------------------------------------------------------- */

FIXTURE(nl)
{
	struct nlc *c;
	struct snap *initial;
	struct fz_gauges start;
	unsigned long taint;
};

FIXTURE_SETUP(nl)
{
	self->c = nl_open();
	if (!self->c)
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	self->initial = calloc(1, sizeof(*self->initial));
	ASSERT_NE(NULL, self->initial);
	ASSERT_EQ(0, snap_take(self->c, self->initial));
	ASSERT_NE(NULL, snap_dev(self->initial, "swnic0"));
	for (int i = 0; i < FZ_DEVS; i++) {
		const char *name = pool_names[1 + i];

		ASSERT_EQ(NULL, snap_dev(self->initial, name))
			TH_LOG("%s exists already: left by an earlier run?", name);
	}
	ASSERT_EQ(0, fz_gauges_read(&self->start));
	self->taint = fz_tainted();
}

FIXTURE_TEARDOWN(nl)
{
	if (self->c) {
		restore(self->c, self->initial);
		nlc_close(self->c);
	}
	free(self->c);
	free(self->initial);
}

/* Print the errno histogram, then check that everything is as before. */
static void finish(struct __test_metadata *_metadata, struct fz *f,
		   FIXTURE_DATA(nl) *self, const char *what, double t0)
{
	static struct snap after;
	struct fz_gauges now;
	unsigned long iters = fz_iters(DEFAULT_ITERS);

	printf("# %lu requests in %.1f s\n", f->requests, fz_now() - t0);
	EXPECT_EQ(0, fz_report(&f->st, what));
	fz_close_doms(f);

	/* What we made, we delete ourselves, by name. */
	track_new_devices(f);
	for (int i = 0; i < f->ncreated; i++) {
		int ret = fz_nl_dev_del(self->c, f->created[i], true);

		EXPECT_TRUE(ret == 0 || ret == -ENODEV)
			TH_LOG("DEV_DEL %s: %d", f->created[i], ret);
	}
	restore(self->c, self->initial);
	ASSERT_EQ(0, snap_take(self->c, &after));
	EXPECT_TRUE(snap_equal(self->initial, &after))
		TH_LOG("devices or services differ from before the fuzzer");
	EXPECT_EQ(0, fz_gauges_settle(&self->start, &now, 10000))
		TH_LOG("objects left behind");
	EXPECT_EQ(0, fz_new_taint(self->taint))
		TH_LOG("the kernel was tainted (WARN/Oops/lockup): see dmesg");
	if (!_metadata->passed)
		TH_LOG("replay: SWNIC_FUZZ_SEED=%" PRIu64 " SWNIC_FUZZ_ITERS=%lu",
		       fz_seed(), iters);
}

TEST_F_TIMEOUT(nl, root, 900)
{
	unsigned long iters = fz_iters(DEFAULT_ITERS);
	struct fz *f = calloc(1, sizeof(*f));
	double t0 = fz_now();

	ASSERT_NE(NULL, f);
	fz_announce("nl.root", iters);
	fz_catch_faults();
	fz_init(f, self->c, self->initial, "nl.root");
	for (unsigned long i = 0; i < iters * 3 / 4; i++)
		fuzz_step(f);
	finish(_metadata, f, self, "fuzz_nl as root", t0);
	free(f);
}

/* Exit 0 if the unprivileged fuzzing found nothing unexpected. */
static int unpriv_child(const struct snap *initial, unsigned long iters,
			const uint32_t *root_doms, int nroot)
{
	struct fz *f = calloc(1, sizeof(*f));
	struct nlc_reply r;
	struct nlmsghdr *nlh;
	int bad = 0;

	if (!f || setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 100;
	f->c = nl_open();
	if (!f->c)
		return 101;
	fz_init(f, f->c, initial, "nl.unprivileged");
	f->unpriv = true;

	/* Root's domains are invisible, by id and in dumps. */
	for (int i = 0; i < nroot; i++) {
		memset(&r, 0, sizeof(r));
		nlh = nlc_msg(f->c, SWNIC_NL_CMD_DOMAIN_GET, 0);
		mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, root_doms[i]);
		if (nlc_talk(f->c, nlh, &r) != -ENOENT) {
			printf("# DOMAIN_GET of root's domain %u: %d, not ENOENT\n",
			       root_doms[i], r.error);
			bad++;
		}
	}
	for (int cmd = SWNIC_NL_CMD_DOMAIN_GET; cmd <= SWNIC_NL_CMD_MR_GET;
	     cmd += SWNIC_NL_CMD_MR_GET - SWNIC_NL_CMD_DOMAIN_GET) {
		memset(&r, 0, sizeof(r));
		if (nlc_talk(f->c, nlc_msg(f->c, cmd, NLM_F_DUMP), &r) || r.nmsgs) {
			printf("# %s dump as nobody: error %d, %u messages (root's)\n",
			       cmd_name(cmd), r.error, r.nmsgs);
			bad++;
		}
	}
	/* The events group is for administrators. */
	if (!f->c->mcgrp_events ||
	    !mnl_socket_setsockopt(f->c->nl, NETLINK_ADD_MEMBERSHIP,
				   &f->c->mcgrp_events, sizeof(f->c->mcgrp_events)) ||
	    errno != EPERM) {
		printf("# joining the events group was not refused with EPERM\n");
		bad++;
	}

	for (unsigned long i = 0; i < iters; i++)
		fuzz_step(f);
	printf("# %lu requests as uid %d\n", f->requests, NOBODY);
	fz_close_doms(f);
	if (fz_report(&f->st, "fuzz_nl as nobody"))
		bad++;
	return bad ? 1 : 0;
}

TEST_F_TIMEOUT(nl, unprivileged, 900)
{
	unsigned long iters = fz_iters(DEFAULT_ITERS);
	static struct snap before, after;
	struct fz_gauges g0, g1;
	uint32_t root_doms[2];
	int fds[2], status, mrfd;
	char *buf;
	pid_t pid;

	fz_announce("nl.unprivileged", iters / 4);
	fz_catch_faults();
	/* Something of root's to hide: a device, a service, domains, an MR. */
	ASSERT_EQ(0, fz_nl_dev_new(self->c, "swnicfz0"));
	ASSERT_EQ(0, fz_nl_svc_new(self->c, "swnicfz0", 100, SWNIC_SVC_F_OPEN));
	ASSERT_EQ(0, fz_nl_svc_new(self->c, "swnic0", 101, 0));
	fds[0] = open("/dev/swnic0", O_RDWR | O_CLOEXEC);
	fds[1] = open("/dev/swnicfz0", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fds[0]);
	ASSERT_LE(0, fds[1]);
	for (int i = 0; i < 2; i++) {
		struct swnic_query_device q = { .size = sizeof(q) };

		ASSERT_EQ(0, ioctl(fds[i], SWNIC_IOCTL_QUERY_DEVICE, &q));
		root_doms[i] = q.domain_id;
	}
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, 4096);
	{
		struct swnic_mr_reg m = { .size = sizeof(m), .addr = (uintptr_t)buf,
					  .length = 4096, .access = SWNIC_MR_ACCESS_ALL };

		ASSERT_EQ(0, ioctl(fds[0], SWNIC_IOCTL_MR_REG, &m));
	}
	mrfd = fds[0];
	ASSERT_EQ(0, snap_take(self->c, &before));
	ASSERT_EQ(0, fz_gauges_read(&g0));

	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(unpriv_child(self->initial, iters / 4, root_doms, 2));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child status 0x%x", status);
	if (WEXITSTATUS(status) == 100)
		SKIP(goto out, "cannot switch to uid %d", NOBODY);
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("the unprivileged user got an unexpected answer (above)");

	/* Nobody changed anything. */
	ASSERT_EQ(0, snap_take(self->c, &after));
	EXPECT_TRUE(snap_equal(&before, &after))
		TH_LOG("an unprivileged user changed devices or services");
	EXPECT_EQ(0, fz_gauges_settle(&g0, &g1, 10000));
out:
	close(mrfd);
	close(fds[1]);
	munmap(buf, 4096);
	EXPECT_EQ(0, fz_nl_dev_del(self->c, "swnicfz0", false));
	EXPECT_EQ(0, fz_nl_svc_del(self->c, "swnic0", 101));
	ASSERT_EQ(0, snap_take(self->c, &after));
	EXPECT_TRUE(snap_equal(self->initial, &after));
	EXPECT_EQ(0, fz_gauges_settle(&self->start, &g1, 10000));
	EXPECT_EQ(0, fz_new_taint(self->taint));
}

TEST_HARNESS_MAIN
