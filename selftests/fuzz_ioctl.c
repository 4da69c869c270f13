// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ioctl: every ioctl of the device fd and of each object fd (endpoint,
 * CQ, counter, shared AV) - shared AVs (AV_OPEN, AV_WRITE), port blocks
 * (PORT_BLOCK, EP_CREATE's group) and its dscp, IPv6 names (ADDR6)
 * included - with random sizes (0, below the minimum, exact, longer with
 * a zero or a non-zero tail, huge), random fields and flags, random, stale,
 * foreign and other-type fds and object ids (CQ ids as counter ids, another
 * domain's, deregistered handles...), argument pointers that are NULL,
 * kernel addresses, read-only (the answer cannot be copied back: a created
 * object must be released) or that end at a guard page; random mmap
 * offsets, lengths, protections and flags on every fd, mprotect and mremap
 * of what was mapped. Interleaved: valid objects created, used (work
 * requests posted on their rings, completions reaped) and destroyed in any
 * order (a domain before its endpoints, an endpoint's fd before its rings'
 * mapping), MRs on memory that is then unmapped or remapped, calls from a
 * forked child (not the owner), children that build objects and die, and
 * creations at the fd limit. Run twice: on swnic0, and (ioctl_mmap_wire,
 * a quarter of the operations) on a device bound to lo in a network
 * namespace of the test's own, where ADDR6 names addresses and work
 * requests may go over the wire.
 *
 * Asserts: every call returns 0 or an errno the code and the uapi headers
 * allow for it (a whitelist per ioctl, per fd kind), with the generic
 * contract checked exactly where it is deterministic (unknown command:
 * ENOTTY; bad pointer: EFAULT; size below 8: EINVAL; non-zero tail:
 * E2BIG; tail into a guard page: EFAULT; mmap offset naming nothing:
 * EINVAL; growing a mapping: EFAULT; a read-only mapping made writable:
 * EACCES; at the fd limit: EMFILE); completions carry only known flags and
 * a positive errno with SWNIC_CQE_ERROR; no CQ overflows; the kernel is not
 * tainted; after closing everything the module-wide gauges are back at
 * their start.
 *
 * SWNIC_FUZZ_SEED=N replays a run (the seed is printed first; the engine
 * thread and killed children make the replay of the same choices, not
 * always of the same results), SWNIC_FUZZ_ITERS=N sets the number of
 * operations. To reduce a failure: SWNIC_FUZZ_TRACE=1 prints every
 * operation, SWNIC_FUZZ_SKIP="fork emfile ..." leaves operations out (the
 * names of op_names[]), SWNIC_FUZZ_CHECK_EVERY=N closes everything every N
 * operations and stops at the first window that leaves objects behind.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/swnic.h>
#include <linux/swnic_queue.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "fuzz_util.h"
#include "swnic_rings.h"
#include "sys_util.h"

#define DEV_PATH	"/dev/swnic0"
/* The wire variant's device: bound to lo in a namespace of its own. */
#define WIRE_DEV	"swnicfz"
#define DEFAULT_ITERS	60000

#define MAX_OBJS	64
#define MAX_DOMS	4
#define MAX_CQS		16
#define MAX_EPS		12
#define MAX_CNTRS	16
#define MAX_AVS		6
#define MAX_BLOCKS	16
#define MAX_NAMES6	32
#define AVBUF_N		SWNIC_AV_WRITE_MAX	/* entries of f->avbuf */
#define MAX_MAPS	64
#define MAX_MRS		128
#define MAX_IDS		256
#define NDATA		4
#define DATA_SIZE	(64 * 1024)
#define BIG_SIZE	(1024 * 1024)
#define MAX_MAP_LEN	(64UL << 20)

enum kind { K_FREE, K_DOM, K_CQ, K_EP, K_CNTR, K_AV, K_FOREIGN, K_BAD };

static const char *const kind_name[] = {
	"free", "domain", "cq", "ep", "cntr", "av", "foreign", "badfd",
};

struct obj {
	int kind;
	int fd;			/* -1 once closed (a mapping may keep it alive) */
	int dom;		/* slot of the domain that made it */
	uint32_t id;		/* domain id, cq id, counter id, port */
	struct swnic_ring_info info[2];	/* CQ: [0]; EP: SQ, RQ */
	bool has_info;
	bool mapped;		/* rings mapped by us (valid creations) */
	struct t_ring ring[2];
	bool ro_fd;		/* domain opened O_RDONLY */
	uint32_t type;		/* EP: SWNIC_EP_* */
	uint32_t av_count;	/* AV: its entries */
	uint64_t av_size;	/* AV: bytes to map */
};

struct map {
	void *p;
	size_t len;
	bool ro_only;		/* counter or invalidation page: no VM_MAYWRITE */
	bool swnic;
	bool owners;		/* a ring, counter or inval page: not inherited */
};

struct mrrec {
	int dom;
	uint32_t handle;
	uint64_t key;
	uint64_t addr, len;
};

struct cmd;

/* Everything one fuzzing process knows. */
struct fz {
	struct fz_rng r;
	struct fz_stats st;
	struct obj obj[MAX_OBJS];
	struct map map[MAX_MAPS];
	struct mrrec mr[MAX_MRS];
	unsigned int nmr;
	uint64_t id[MAX_IDS];
	unsigned int nid;
	size_t page;
	uint8_t *argmap;	/* 2 pages RW, then the guard page */
	uint8_t *guard;
	uint8_t *ro;		/* a read-only page */
	uint8_t *big;		/* BIG_SIZE zeroes, then a guard page */
	uint8_t *data[NDATA];	/* fixed addresses; may be unmapped */
	uint64_t *avbuf;	/* AVBUF_N entries for AV_WRITE, then a guard page */
	uint16_t block[MAX_BLOCKS];	/* port blocks' bases seen */
	unsigned int nblock;
	uint32_t name6[MAX_NAMES6];	/* IPv6 names seen */
	unsigned int nname6;
	int slot;		/* the object op_ioctl() calls, or -1 */
	bool data_mapped[NDATA];
	uint64_t ctx;		/* contexts of posted work requests */
	bool child;		/* a forked child: not the owner of anything */
	bool forked;		/* in a forked child: no more forks */
	unsigned long cqe_seen;
};

static struct fz *F;
static const char *dev_path = DEV_PATH;
/* The device is bound (the wire variant): sends may leave the host. */
static bool wire;

/* ---- bookkeeping ------------------------------------------------------- */

static void add_id(struct fz *f, uint64_t id)
{
	f->id[f->nid++ % MAX_IDS] = id;
}

static uint64_t pick_id(struct fz *f)
{
	if (f->nid && fz_chance(&f->r, 65))
		return f->id[fz_below(&f->r, f->nid < MAX_IDS ? f->nid : MAX_IDS)];
	return fz_u64(&f->r);
}

static int count_kind(struct fz *f, int kind, bool open_only)
{
	int n = 0;

	for (int i = 0; i < MAX_OBJS; i++)
		if (f->obj[i].kind == kind && (!open_only || f->obj[i].fd >= 0))
			n++;
	return n;
}

/* A random object of @kind (K_FREE: any kind), with an open fd if @open. */
static int pick_obj(struct fz *f, int kind, bool open)
{
	int cand[MAX_OBJS], n = 0;

	for (int i = 0; i < MAX_OBJS; i++) {
		struct obj *o = &f->obj[i];

		if (o->kind == K_FREE || (kind != K_FREE && o->kind != kind))
			continue;
		if (open && o->fd < 0)
			continue;
		cand[n++] = i;
	}
	return n ? cand[fz_below(&f->r, n)] : -1;
}

static int new_obj(struct fz *f)
{
	for (int i = 0; i < MAX_OBJS; i++)
		if (f->obj[i].kind == K_FREE) {
			memset(&f->obj[i], 0, sizeof(f->obj[i]));
			f->obj[i].fd = -1;
			f->obj[i].dom = -1;
			return i;
		}
	return -1;
}

static void unmap_rings(struct obj *o)
{
	if (!o->mapped)
		return;
	for (int i = 0; i < (o->kind == K_EP ? 2 : 1); i++)
		munmap(o->ring[i].map, o->ring[i].size);
	o->mapped = false;
}

/* Close the fd and drop the rings' mapping: the object is gone. */
static void destroy_obj(struct fz *f, int i)
{
	struct obj *o = &f->obj[i];

	if (o->kind == K_FREE)
		return;
	if (o->fd >= 0)
		close(o->fd);
	unmap_rings(o);
	if (o->kind == K_DOM) {
		/* Its objects live on, but belong to no domain we have. */
		for (int j = 0; j < MAX_OBJS; j++)
			if (f->obj[j].dom == i && j != i)
				f->obj[j].dom = -1;
		for (int j = 0; j < MAX_MRS; j++)
			if (f->mr[j].dom == i)
				f->mr[j].dom = -1;
	}
	o->kind = K_FREE;
	o->fd = -1;
}

static int add_map(struct fz *f, void *p, size_t len, bool ro_only, bool swnic,
		   bool owners)
{
	for (int i = 0; i < MAX_MAPS; i++)
		if (!f->map[i].p) {
			f->map[i] = (struct map){ p, len, ro_only, swnic, owners };
			return i;
		}
	munmap(p, len);
	return -1;
}

static void record_mr(struct fz *f, int dom, uint32_t handle, uint64_t key,
		      uint64_t addr, uint64_t len)
{
	f->mr[f->nmr++ % MAX_MRS] = (struct mrrec){ dom, handle, key, addr, len };
	add_id(f, handle);
	add_id(f, key);
}

/* A domain's id (for MR_ACCESS and ids) by QUERY_DEVICE. */
static uint32_t dom_id(int fd)
{
	struct swnic_query_device q = { .size = sizeof(q) };

	return ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &q) ? 0 : q.domain_id;
}

/* ---- memory the calls point at ------------------------------------------ */

/* An address and length, mostly in memory the calls may use. */
static void pick_range(struct fz *f, __u64 *addr, __u64 *len)
{
	uint64_t base, size;
	int m;

	switch (fz_below(&f->r, 10)) {
	case 0: case 1: case 2: case 3: {
		int d = fz_below(&f->r, NDATA);

		base = (uintptr_t)f->data[d];
		size = DATA_SIZE;
		break;
	}
	case 4:
		base = (uintptr_t)f->big;
		size = BIG_SIZE;
		break;
	case 5:
		base = (uintptr_t)f->ro;
		size = f->page;
		break;
	case 6:
		m = fz_below(&f->r, MAX_MAPS);
		if (f->map[m].p) {
			base = (uintptr_t)f->map[m].p;
			size = f->map[m].len;
			break;
		}
		/* fall through */
	case 7:
		base = (uintptr_t)f->guard;
		size = f->page;
		break;
	case 8:
		base = fz_u64(&f->r);
		size = fz_u64(&f->r);
		*addr = base;
		*len = size;
		return;
	default:
		base = (uintptr_t)f->argmap;
		size = 2 * f->page;
		break;
	}
	*addr = base + (fz_chance(&f->r, 50) ? 0 : fz_below(&f->r, size));
	switch (fz_below(&f->r, 6)) {
	case 0:
		*len = base + size - *addr;
		break;
	case 1:
		*len = 1 + fz_below(&f->r, 64);
		break;
	case 2:
		*len = fz_u64(&f->r);
		break;
	case 3:
		*len = base + size - *addr + fz_below(&f->r, 3 * f->page);
		break;
	default:
		*len = 1 + fz_below(&f->r, base + size - *addr);
		break;
	}
}

/* A CQ id: of @dom, of any domain, a counter's, or anything. */
static uint32_t pick_cq_id(struct fz *f, int dom)
{
	int i;

	switch (fz_below(&f->r, 10)) {
	case 0: case 1: case 2: case 3: case 4:
		for (int tries = 0; tries < 8; tries++) {
			i = pick_obj(f, K_CQ, false);
			if (i >= 0 && (f->obj[i].dom == dom || tries > 5))
				return f->obj[i].id;
		}
		return 1;
	case 5:
		i = pick_obj(f, K_CNTR, false);
		return i >= 0 ? f->obj[i].id : 0;
	case 6:
		return 0;
	default:
		return (uint32_t)pick_id(f);
	}
}

static uint32_t pick_cntr_id(struct fz *f, int dom)
{
	int i;

	switch (fz_below(&f->r, 8)) {
	case 0: case 1: case 2: case 3:
		for (int tries = 0; tries < 8; tries++) {
			i = pick_obj(f, K_CNTR, false);
			if (i >= 0 && (f->obj[i].dom == dom || tries > 5))
				return f->obj[i].id;
		}
		return 1;
	case 4:
		i = pick_obj(f, K_CQ, false);
		return i >= 0 ? f->obj[i].id : 0;
	default:
		return (uint32_t)pick_id(f);
	}
}

static uint16_t pick_port(struct fz *f)
{
	int i;

	switch (fz_below(&f->r, 6)) {
	case 0: case 1: case 2:
		i = pick_obj(f, K_EP, false);
		return i >= 0 ? f->obj[i].id : 0;
	case 3:
		return fz_below(&f->r, 1024);
	default:
		return fz_u32(&f->r);
	}
}

/* A port block's first port: mostly one seen, else any port. */
static uint16_t pick_block(struct fz *f)
{
	unsigned int n = f->nblock < MAX_BLOCKS ? f->nblock : MAX_BLOCKS;

	if (n && fz_chance(&f->r, 80))
		return f->block[fz_below(&f->r, n)];
	return pick_port(f);
}

static uint32_t pick_flags(struct fz *f, uint32_t valid)
{
	switch (fz_below(&f->r, 8)) {
	case 0:
		return 0;
	case 1:
		return fz_u32(&f->r);
	case 2:
		return valid | (1U << fz_below(&f->r, 32));
	default:
		return fz_u32(&f->r) & valid;
	}
}

static uint32_t pick_access(struct fz *f)
{
	static const uint32_t one[] = {
		SWNIC_MR_ACCESS_SEND, SWNIC_MR_ACCESS_RECV,
		SWNIC_MR_ACCESS_READ, SWNIC_MR_ACCESS_WRITE,
		SWNIC_MR_ACCESS_REMOTE_READ, SWNIC_MR_ACCESS_REMOTE_WRITE,
	};

	if (fz_chance(&f->r, 60))
		return one[fz_below(&f->r, ARRAY_SIZE(one))];
	return pick_flags(f, SWNIC_MR_ACCESS_ALL);
}

static struct mrrec *pick_mr(struct fz *f)
{
	unsigned int n = f->nmr < MAX_MRS ? f->nmr : MAX_MRS;

	return n ? &f->mr[fz_below(&f->r, n)] : NULL;
}

static uint32_t pick_auth_key(struct fz *f)
{
	switch (fz_below(&f->r, 4)) {
	case 0:
		return 0;
	case 1:
		return SWNIC_AUTH_KEY_DEFAULT;
	case 2:
		return fz_below(&f->r, 8);
	default:
		return fz_u32(&f->r);
	}
}

/* ---- plausible contents of each command's struct ------------------------ */

static uint32_t maybe(struct fz *f, uint32_t v)
{
	return fz_chance(&f->r, 95) ? v : fz_u32(&f->r);
}

static void fill_query(struct fz *f, void *p, int dom)
{
	struct swnic_query_device *q = p;

	q->flags = maybe(f, 0);
	q->__reserved = maybe(f, 0);
}

static void fill_mr_reg(struct fz *f, void *p, int dom)
{
	struct swnic_mr_reg *m = p;

	m->flags = pick_flags(f, SWNIC_MR_REG_ODP | SWNIC_MR_REG_USER_KEY |
			      SWNIC_MR_REG_VIRT_ADDR);
	pick_range(f, &m->addr, &m->length);
	if (fz_chance(&f->r, 30))
		m->length = fz_chance(&f->r, 50) ? 0 : 1ULL << (30 + fz_below(&f->r, 14));
	if (m->flags & SWNIC_MR_REG_USER_KEY || fz_chance(&f->r, 10))
		m->requested_key = pick_id(f);
	m->access = fz_chance(&f->r, 50) ? SWNIC_MR_ACCESS_ALL : pick_flags(f, SWNIC_MR_ACCESS_ALL);
	m->auth_key = fz_chance(&f->r, 70) ? 0 : pick_auth_key(f);
	m->__reserved = maybe(f, 0);
}

static void fill_mr_handle(struct fz *f, uint32_t *handle)
{
	struct mrrec *mr = pick_mr(f);

	*handle = mr && fz_chance(&f->r, 75) ? mr->handle : (uint32_t)pick_id(f);
}

static void fill_mr_dereg(struct fz *f, void *p, int dom)
{
	struct swnic_mr_dereg *d = p;

	d->flags = maybe(f, 0);
	fill_mr_handle(f, &d->handle);
	d->__reserved = maybe(f, 0);
}

static void fill_mr_query(struct fz *f, void *p, int dom)
{
	struct swnic_mr_query *q = p;

	q->flags = pick_flags(f, SWNIC_MR_QUERY_COUNTERS);
	fill_mr_handle(f, &q->handle);
	if (fz_chance(&f->r, 10))
		fz_fill(&f->r, &q->state, sizeof(*q) - offsetof(struct swnic_mr_query, state));
}

static void fill_mr_refresh(struct fz *f, void *p, int dom)
{
	struct swnic_mr_refresh *m = p;

	m->flags = maybe(f, 0);
	fill_mr_handle(f, &m->handle);
}

static void fill_mr_access(struct fz *f, void *p, int dom)
{
	struct swnic_mr_access *a = p;
	struct mrrec *mr = pick_mr(f);
	__u64 addr, len;
	int i;

	a->flags = pick_flags(f, SWNIC_MR_ACCESS_F_WRITE | SWNIC_MR_ACCESS_F_LOCAL);
	a->access = pick_access(f);
	if (mr && fz_chance(&f->r, 80)) {
		a->key = mr->key;
		a->addr = fz_chance(&f->r, 50) ? mr->addr + fz_below(&f->r, 64) :
			  fz_below(&f->r, 4096);
		a->len = fz_chance(&f->r, 70) ? 1 + fz_below(&f->r, 256) : fz_u64(&f->r);
	} else {
		a->key = pick_id(f);
		a->addr = fz_u64(&f->r);
		a->len = fz_u64(&f->r);
	}
	if (fz_chance(&f->r, 10))
		a->len = SWNIC_MR_ACCESS_MAX_LEN + fz_below(&f->r, 2);
	pick_range(f, &addr, &len);
	a->buf = addr;
	a->auth_key = fz_chance(&f->r, 60) ? SWNIC_AUTH_KEY_DEFAULT : pick_auth_key(f);
	i = pick_obj(f, K_DOM, false);
	a->domain_id = fz_chance(&f->r, 40) ? 0 : i >= 0 ? f->obj[i].id : (uint32_t)pick_id(f);
	a->__reserved = maybe(f, 0);
}

static void fill_inval(struct fz *f, void *p, int dom)
{
	struct swnic_inval_query *q = p;

	q->flags = maybe(f, 0);
	q->__reserved = maybe(f, 0);
}

static uint32_t pick_entries(struct fz *f)
{
	static const uint32_t v[] = { 0, 1, 2, 3, 7, 16, 64, 100, 16384, 16385,
				      65536, 65537, 0xffffffff };

	return fz_chance(&f->r, 70) ? fz_below(&f->r, 130) :
	       v[fz_below(&f->r, ARRAY_SIZE(v))];
}

static void fill_cq_create(struct fz *f, void *p, int dom)
{
	struct swnic_cq_create *c = p;

	c->flags = pick_flags(f, SWNIC_CQ_F_INLINE_DATA);
	c->entries = pick_entries(f);
	c->__reserved = maybe(f, 0);
	if (fz_chance(&f->r, 10))
		c->fd = fz_u32(&f->r);
}

static void fill_ep_create(struct fz *f, void *p, int dom)
{
	static const uint32_t types[] = { SWNIC_EP_RDM, SWNIC_EP_DGRAM,
					  SWNIC_EP_MSG, 0, 4 };
	struct swnic_ep_create *c = p;

	c->flags = pick_flags(f, SWNIC_EP_F_DB_SYSCALL | SWNIC_EP_F_DB_ENGINE |
			      SWNIC_EP_F_RM_ENABLED | SWNIC_EP_F_SRX |
			      SWNIC_EP_F_SRX_JOIN);
	c->type = fz_chance(&f->r, 90) ? types[fz_below(&f->r, ARRAY_SIZE(types))] :
		  fz_u32(&f->r);
	c->tx_cq = pick_cq_id(f, dom);
	c->rx_cq = fz_chance(&f->r, 50) ? c->tx_cq : pick_cq_id(f, dom);
	c->sq_entries = pick_entries(f);
	c->rq_entries = pick_entries(f);
	c->port = fz_chance(&f->r, 60) ? 0 : pick_port(f);
	c->dscp = fz_chance(&f->r, 90) ? fz_below(&f->r, 64) : fz_below(&f->r, 256);
	c->__pad = maybe(f, 0);
	c->__reserved = maybe(f, 0);
	for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++)
		c->cntr[i] = fz_chance(&f->r, 75) ? 0 : pick_cntr_id(f, dom);
	/* A block's first port, mostly one seen; at a port of it, or not. */
	c->group = fz_chance(&f->r, 60) ? 0 : pick_block(f);
	if (c->group && fz_chance(&f->r, 60))
		c->port = fz_chance(&f->r, 20) ? 0 :
			  c->group + fz_below(&f->r, SWNIC_PORT_BLOCK_MAX + 2);
	c->__pad2 = maybe(f, 0);
	c->__reserved2 = maybe(f, 0);
	/* A shared receive context: a plain one, or any endpoint's fd. */
	if (c->flags & SWNIC_EP_F_SRX) {
		c->tx_cq = c->rx_cq = maybe(f, 0);
		for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++)
			c->cntr[i] = maybe(f, 0);
		c->port = maybe(f, 0);
	}
	if (c->flags & SWNIC_EP_F_SRX_JOIN) {
		int o = pick_obj(f, K_EP, true);

		c->srx_fd = o >= 0 && fz_chance(&f->r, 90) ? f->obj[o].fd :
			    (int32_t)fz_u32(&f->r);
	}
	c->__reserved3 = maybe(f, 0);
}

static void fill_av_open(struct fz *f, void *p, int dom)
{
	static const uint32_t counts[] = {
		0, 1, SWNIC_AV_COUNT_MAX, SWNIC_AV_COUNT_MAX + 1, 0xffffffff,
	};
	struct swnic_av_open *a = p;
	bool create;

	a->flags = pick_flags(f, SWNIC_AV_OPEN_CREATE);
	create = a->flags & SWNIC_AV_OPEN_CREATE;
	switch (fz_below(&f->r, 12)) {
	case 0:		/* no NUL within SWNIC_AV_NAME_MAX */
		memset(a->name, 'x', sizeof(a->name));
		break;
	case 1:		/* a blank, then a control character */
		memcpy(a->name, "fz 0", 4);
		a->name[1] = fz_chance(&f->r, 50) ? 0x7f : 0x1f;
		break;
	case 2:		/* empty */
		break;
	case 3:		/* bytes after the NUL */
		memcpy(a->name, "fz0", 3);
		a->name[4 + fz_below(&f->r, sizeof(a->name) - 4)] = 'y';
		break;
	case 4:
		fz_fill(&f->r, a->name, sizeof(a->name));
		break;
	default:
		snprintf((char *)a->name, sizeof(a->name), "fz%u",
			 fz_below(&f->r, 3));
		break;
	}
	if (create)
		a->count = fz_chance(&f->r, 85) ? 1 + fz_below(&f->r, 600) :
			   counts[fz_below(&f->r, ARRAY_SIZE(counts))];
	else
		a->count = maybe(f, 0);
	a->type = create ? fz_u32(&f->r) : maybe(f, 0);
	a->__reserved = maybe(f, 0);
	if (fz_chance(&f->r, 10))
		a->fd = fz_u32(&f->r);
}

static void fill_av_write(struct fz *f, void *p, int dom)
{
	static const uint32_t ns[] = { 0, AVBUF_N, AVBUF_N + 1, 0xffffffff };
	struct swnic_av_write *w = p;
	const struct obj *o = f->slot >= 0 ? &f->obj[f->slot] : NULL;
	uint32_t count = o && o->kind == K_AV ? o->av_count : 64, n;

	w->flags = maybe(f, 0);
	w->n = fz_chance(&f->r, 85) ? 1 + fz_below(&f->r, 16) :
	       ns[fz_below(&f->r, ARRAY_SIZE(ns))];
	w->first = fz_chance(&f->r, 85) ? fz_below(&f->r, count + 2) :
		   fz_u32(&f->r);
	n = w->n < AVBUF_N ? w->n : AVBUF_N;
	/* Entries: valid, empty, now and then one with a reserved bit. */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t e = 0;

		if (fz_chance(&f->r, 80))
			e = SWNIC_AV_ENTRY_VALID |
			    (uint64_t)(fz_chance(&f->r, 70) ?
				       htonl(INADDR_LOOPBACK) : fz_u32(&f->r)) << 16 |
			    pick_port(f);
		if (fz_chance(&f->r, 2))
			e |= 1ULL << (48 + fz_below(&f->r, 15));
		f->avbuf[i] = e;
	}
	switch (fz_below(&f->r, 20)) {
	case 0:
		w->entries = 0;
		break;
	case 1:
		w->entries = 0xffff888000000000ULL;
		break;
	case 2:		/* the entries run into the guard page */
		w->entries = (uintptr_t)(f->avbuf + AVBUF_N - fz_below(&f->r, 4));
		break;
	case 3:
		w->entries = (uintptr_t)f->ro;
		break;
	default:
		w->entries = (uintptr_t)f->avbuf;
		break;
	}
}

static void fill_port_block(struct fz *f, void *p, int dom)
{
	static const uint16_t counts[] = {
		0, SWNIC_PORT_BLOCK_MAX + 1, 0xffff,
	};
	struct swnic_port_block *b = p;

	b->flags = pick_flags(f, SWNIC_PORT_BLOCK_RELEASE |
			      SWNIC_PORT_BLOCK_FIXED);
	b->count = fz_chance(&f->r, 85) ? 1 + fz_below(&f->r, SWNIC_PORT_BLOCK_MAX) :
		   counts[fz_below(&f->r, ARRAY_SIZE(counts))];
	/* RELEASE: a block's first port; FIXED: where the block starts. */
	b->base = b->flags & (SWNIC_PORT_BLOCK_RELEASE | SWNIC_PORT_BLOCK_FIXED) ?
		  pick_block(f) : maybe(f, 0);
	b->__reserved = maybe(f, 0);
}

static void fill_addr6(struct fz *f, void *p, int dom)
{
	struct swnic_addr6 *a = p;

	a->flags = pick_flags(f, SWNIC_ADDR6_LOOKUP);
	switch (fz_below(&f->r, 10)) {
	case 0:		/* link-local */
		a->addr[0] = 0xfe;
		a->addr[1] = 0x80;
		a->addr[15] = 1 + fz_below(&f->r, 4);
		break;
	case 1:		/* ::1 */
		a->addr[15] = 1;
		break;
	case 2:		/* a multicast group */
		a->addr[0] = 0xff;
		a->addr[1] = 0x02;
		a->addr[15] = 1;
		break;
	case 3:		/* IPv4-mapped */
		a->addr[10] = a->addr[11] = 0xff;
		memcpy(&a->addr[12], &(uint32_t){ htonl(INADDR_LOOPBACK) }, 4);
		break;
	case 4:		/* :: */
		break;
	case 5:
		fz_fill(&f->r, a->addr, sizeof(a->addr));
		break;
	default:	/* a few unicast peers, named again and again */
		a->addr[0] = 0xfd;
		a->addr[15] = 1 + fz_below(&f->r, 8);
		break;
	}
	a->scope_id = fz_chance(&f->r, 70) ? 0 :
		      fz_chance(&f->r, 50) ? 1 : fz_u32(&f->r);
	if (a->flags & SWNIC_ADDR6_LOOKUP)
		a->name = f->nname6 && fz_chance(&f->r, 60) ?
			  f->name6[fz_below(&f->r, f->nname6 < MAX_NAMES6 ?
					    f->nname6 : MAX_NAMES6)] :
			  fz_chance(&f->r, 50) ? htonl(1 + fz_below(&f->r, 64)) :
			  fz_u32(&f->r);
	else
		a->name = maybe(f, 0);
}

static void fill_auth_key(struct fz *f, void *p, int dom)
{
	struct swnic_auth_key *k = p;

	k->flags = maybe(f, 0);
	k->auth_key = pick_auth_key(f);
}

static void fill_cntr_create(struct fz *f, void *p, int dom)
{
	struct swnic_cntr_create *c = p;

	c->flags = maybe(f, 0);
	c->__reserved = maybe(f, 0);
}

static void fill_cntr_update(struct fz *f, void *p, int dom)
{
	struct swnic_cntr_update *u = p;

	u->flags = pick_flags(f, SWNIC_CNTR_UPD_SET | SWNIC_CNTR_UPD_ERR);
	u->cntr_id = pick_cntr_id(f, dom);
	u->__reserved = maybe(f, 0);
	u->value = fz_chance(&f->r, 50) ? fz_below(&f->r, 16) : pick_id(f);
}

static void fill_trig_cntr(struct fz *f, void *p, int dom)
{
	struct swnic_trig_cntr *c = p;

	c->flags = pick_flags(f, SWNIC_CNTR_UPD_SET | SWNIC_CNTR_UPD_ERR);
	c->cntr_id = pick_cntr_id(f, dom);
	c->target = pick_cntr_id(f, dom);
	c->threshold = fz_chance(&f->r, 70) ? fz_below(&f->r, 32) : pick_id(f);
	c->value = fz_below(&f->r, 8);
	c->cookie = fz_below(&f->r, 8);
	c->trig_flags = pick_flags(f, SWNIC_TRIG_F_SUM);
	c->__reserved = maybe(f, 0);
}

static void fill_trig_cancel(struct fz *f, void *p, int dom)
{
	struct swnic_trig_cancel *c = p;

	c->flags = pick_flags(f, SWNIC_TRIG_CANCEL_CNTR |
			      SWNIC_TRIG_CANCEL_COOKIE |
			      SWNIC_TRIG_CANCEL_SUM);
	c->cntr_id = pick_cntr_id(f, dom);
	c->cookie = fz_below(&f->r, 8);
}

static void fill_trig_recv(struct fz *f, void *p, int dom)
{
	struct swnic_trig_recv *t = p;

	t->flags = maybe(f, 0);
	t->trig.cntr_id = pick_cntr_id(f, dom);
	t->trig.threshold = fz_chance(&f->r, 70) ? fz_below(&f->r, 32) :
						   pick_id(f);
	t->trig.flags = pick_flags(f, SWNIC_TRIG_F_SUM | SWNIC_TRIG_F_CNTR);
	t->trig.comp_cntr = fz_chance(&f->r, 50) ? 0 : pick_cntr_id(f, dom);
	t->trig.__reserved = maybe(f, 0);
	t->rqe.context = ++f->ctx;
	/* Receives may be written to when due: the data buffers, mostly. */
	if (fz_chance(&f->r, 80)) {
		uint32_t n = 1 + fz_below(&f->r, 512);

		t->rqe.addr = (uintptr_t)f->data[fz_below(&f->r, NDATA)] +
			      fz_below(&f->r, DATA_SIZE - n);
		t->rqe.len = n;
	} else {
		pick_range(f, &t->rqe.addr, &t->rqe.len);
	}
	t->rqe.flags = pick_flags(f, SWNIC_RQE_TAGGED | SWNIC_RQE_MULTI_RECV |
				  SWNIC_RQE_DIRECTED | SWNIC_RQE_CLAIM |
				  SWNIC_RQE_MR);
	t->rqe.tag = fz_below(&f->r, 4);
	t->rqe.min_free = fz_below(&f->r, 64);
	t->rqe.src_addr = htonl(INADDR_LOOPBACK);
	t->rqe.src_port = pick_port(f);
	/* An MR's handle (few exist: often a live one); rarely one alone. */
	if ((t->rqe.flags & SWNIC_RQE_MR) || fz_chance(&f->r, 3))
		t->rqe.mr = fz_below(&f->r, 8);
}

static void fill_doorbell(struct fz *f, void *p, int dom)
{
	struct swnic_ep_doorbell *d = p;

	d->flags = pick_flags(f, SWNIC_DB_POLL | SWNIC_DB_SQ);
}

static void fill_cancel(struct fz *f, void *p, int dom)
{
	struct swnic_ep_cancel *c = p;

	c->flags = pick_flags(f, SWNIC_CANCEL_SEND);
	c->context = fz_chance(&f->r, 70) && f->ctx ?
		     f->ctx - fz_below(&f->r, f->ctx < 64 ? f->ctx : 64) : pick_id(f);
}

static void fill_peek(struct fz *f, void *p, int dom)
{
	struct swnic_ep_peek *k = p;

	k->flags = pick_flags(f, SWNIC_PEEK_CLAIM | SWNIC_PEEK_DISCARD |
			      SWNIC_PEEK_DIRECTED);
	k->tag = fz_chance(&f->r, 50) ? fz_below(&f->r, 4) : pick_id(f);
	k->ignore = fz_chance(&f->r, 50) ? 0 : fz_chance(&f->r, 50) ? ~0ULL : fz_u64(&f->r);
	k->claim = fz_below(&f->r, 4);
	k->src_addr = fz_chance(&f->r, 70) ? htonl(INADDR_LOOPBACK) : fz_u32(&f->r);
	k->src_port = pick_port(f);
	k->__reserved = fz_chance(&f->r, 95) ? 0 : 1;
}

static void fill_ep_auth_key(struct fz *f, void *p, int dom)
{
	struct swnic_ep_auth_key *k = p;

	k->flags = maybe(f, 0);
	/* The default key, a few others (maybe services), anything. */
	k->auth_key = fz_chance(&f->r, 40) ? 1 :
		      fz_chance(&f->r, 50) ? 7300 + fz_below(&f->r, 4) :
		      fz_u32(&f->r);
	k->index = fz_u32(&f->r);
}

static void fill_ep_peer(struct fz *f, void *p, int dom)
{
	struct swnic_ep_peer *e = p;

	e->flags = pick_flags(f, SWNIC_EP_PEER_ONE | SWNIC_EP_PEER_NONE);
	e->addr = fz_chance(&f->r, 70) ? htonl(INADDR_LOOPBACK) : fz_u32(&f->r);
	e->port = pick_port(f);
	e->__reserved = fz_chance(&f->r, 95) ? 0 : 1;
}

static void fill_cq_help(struct fz *f, void *p, int dom)
{
	struct swnic_cq_help *h = p;

	h->flags = pick_flags(f, 0);
	h->copied = fz_u64(&f->r);	/* out only */
}

/* ---- the commands ------------------------------------------------------- */

struct cmd {
	const char *name;
	unsigned int nr;
	size_t size;
	int kind;		/* K_DOM: the device fd's; K_EP: an endpoint's... */
	void (*fill)(struct fz *f, void *p, int dom);
	struct fz_errset errs;
};

#define CMD(_name, _kind, _struct, _fill)				\
	{ .name = #_name, .nr = SWNIC_CMD_##_name,			\
	  .size = sizeof(struct _struct), .kind = _kind, .fill = _fill }

static struct cmd cmds[] = {
	CMD(QUERY_DEVICE, K_DOM, swnic_query_device, fill_query),
	CMD(MR_REG, K_DOM, swnic_mr_reg, fill_mr_reg),
	CMD(MR_DEREG, K_DOM, swnic_mr_dereg, fill_mr_dereg),
	CMD(MR_QUERY, K_DOM, swnic_mr_query, fill_mr_query),
	CMD(MR_REFRESH, K_DOM, swnic_mr_refresh, fill_mr_refresh),
	CMD(MR_ACCESS, K_DOM, swnic_mr_access, fill_mr_access),
	CMD(INVAL_QUERY, K_DOM, swnic_inval_query, fill_inval),
	CMD(CQ_CREATE, K_DOM, swnic_cq_create, fill_cq_create),
	CMD(EP_CREATE, K_DOM, swnic_ep_create, fill_ep_create),
	CMD(EP_DOORBELL, K_EP, swnic_ep_doorbell, fill_doorbell),
	CMD(AUTH_KEY, K_DOM, swnic_auth_key, fill_auth_key),
	CMD(EP_CANCEL, K_EP, swnic_ep_cancel, fill_cancel),
	CMD(EP_PEEK, K_EP, swnic_ep_peek, fill_peek),
	CMD(CNTR_CREATE, K_DOM, swnic_cntr_create, fill_cntr_create),
	CMD(EP_AUTH_KEY, K_EP, swnic_ep_auth_key, fill_ep_auth_key),
	CMD(CNTR_UPDATE, K_DOM, swnic_cntr_update, fill_cntr_update),
	CMD(TRIG_CNTR, K_DOM, swnic_trig_cntr, fill_trig_cntr),
	CMD(TRIG_CANCEL, K_DOM, swnic_trig_cancel, fill_trig_cancel),
	CMD(TRIG_RECV, K_EP, swnic_trig_recv, fill_trig_recv),
	CMD(AV_OPEN, K_DOM, swnic_av_open, fill_av_open),
	CMD(AV_WRITE, K_AV, swnic_av_write, fill_av_write),
	CMD(PORT_BLOCK, K_DOM, swnic_port_block, fill_port_block),
	CMD(ADDR6, K_DOM, swnic_addr6, fill_addr6),
	CMD(CQ_HELP, K_CQ, swnic_cq_help, fill_cq_help),
	CMD(EP_PEER, K_EP, swnic_ep_peer, fill_ep_peer),
};

static struct cmd *cmd_by_nr(unsigned int nr)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (cmds[i].nr == nr)
			return &cmds[i];
	return NULL;
}

/* Errnos of each command, from the code and include/uapi/linux/swnic*.h. */
static void init_cmds(void)
{
	/* The extensible-struct contract: any command. */
	struct fz_errset generic = FZ_ERRS(EFAULT, EINVAL, E2BIG);

	cmd_by_nr(SWNIC_CMD_QUERY_DEVICE)->errs = FZ_ERRS(EOPNOTSUPP);
	cmd_by_nr(SWNIC_CMD_MR_REG)->errs =
		FZ_ERRS(EOPNOTSUPP, EACCES, EKEYREJECTED, ENODEV, ENOSPC,
			ENOMEM, EEXIST, EPERM, EDQUOT, EAGAIN, EBUSY);
	cmd_by_nr(SWNIC_CMD_MR_DEREG)->errs = FZ_ERRS(EOPNOTSUPP, EACCES, ENOENT);
	cmd_by_nr(SWNIC_CMD_MR_QUERY)->errs = FZ_ERRS(EOPNOTSUPP, EACCES, ENOENT);
	cmd_by_nr(SWNIC_CMD_MR_REFRESH)->errs =
		FZ_ERRS(EOPNOTSUPP, EACCES, ENOENT, EPERM, EDQUOT, ENOMEM,
			EAGAIN);
	cmd_by_nr(SWNIC_CMD_MR_ACCESS)->errs =
		FZ_ERRS(EOPNOTSUPP, EACCES, ENOMEM, ENOENT, ENOKEY,
			EKEYREVOKED, EKEYREJECTED, ERANGE, EPERM, EBUSY);
	cmd_by_nr(SWNIC_CMD_INVAL_QUERY)->errs = FZ_ERRS(EOPNOTSUPP, EACCES);
	cmd_by_nr(SWNIC_CMD_CQ_CREATE)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOMEM, ENOSPC, EMFILE, ENFILE);
	cmd_by_nr(SWNIC_CMD_EP_CREATE)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOMEM, ENOENT, ENOSPC, EACCES,
			EADDRINUSE, EADDRNOTAVAIL, EDQUOT, EMFILE, ENFILE,
			EBADF, ENETDOWN);
	cmd_by_nr(SWNIC_CMD_AUTH_KEY)->errs =
		FZ_ERRS(EOPNOTSUPP, EACCES, EBUSY, ENOKEY, EKEYREVOKED, EPERM,
			EDQUOT);
	cmd_by_nr(SWNIC_CMD_CNTR_CREATE)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOMEM, ENOSPC, EMFILE, ENFILE);
	cmd_by_nr(SWNIC_CMD_EP_DOORBELL)->errs = FZ_ERRS(EOPNOTSUPP, EPERM, EPIPE);
	/* ENOTCONN: a shared receive context no endpoint has joined. */
	cmd_by_nr(SWNIC_CMD_EP_CANCEL)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, EPIPE, ENOENT, EAGAIN, ENOTCONN);
	cmd_by_nr(SWNIC_CMD_EP_PEEK)->errs = FZ_ERRS(EOPNOTSUPP, EPERM, ENOMSG);
	cmd_by_nr(SWNIC_CMD_EP_AUTH_KEY)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOKEY, EKEYREVOKED, EDQUOT, ENOSPC,
			EINTR);
	cmd_by_nr(SWNIC_CMD_CNTR_UPDATE)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOENT);
	cmd_by_nr(SWNIC_CMD_TRIG_CNTR)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOENT, ENOSPC, ENOMEM);
	cmd_by_nr(SWNIC_CMD_TRIG_CANCEL)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOENT);
	/* ECANCELED: its domain's file is closed (the EP's fd kept). */
	cmd_by_nr(SWNIC_CMD_TRIG_RECV)->errs =
		FZ_ERRS(EOPNOTSUPP, EPERM, ENOENT, ENOSPC, ENOMEM, EAGAIN,
			ECANCELED);
	cmd_by_nr(SWNIC_CMD_AV_OPEN)->errs =
		FZ_ERRS(EOPNOTSUPP, EACCES, EEXIST, ENOENT, ENOSPC, ENOMEM,
			EMFILE, ENFILE);
	cmd_by_nr(SWNIC_CMD_AV_WRITE)->errs = FZ_ERRS(EOPNOTSUPP, EPERM);
	cmd_by_nr(SWNIC_CMD_PORT_BLOCK)->errs =
		FZ_ERRS(EOPNOTSUPP, ENOENT, ENOSPC, EDQUOT, EADDRNOTAVAIL,
			EPERM, ENOMEM, EADDRINUSE, EACCES);
	cmd_by_nr(SWNIC_CMD_ADDR6)->errs =
		FZ_ERRS(EPERM, EAFNOSUPPORT, ENETDOWN, EADDRNOTAVAIL, ENOSPC,
			EDQUOT, ENOMEM, ENOENT);
	cmd_by_nr(SWNIC_CMD_CQ_HELP)->errs = FZ_ERRS(EOPNOTSUPP, EPERM);
	cmd_by_nr(SWNIC_CMD_EP_PEER)->errs = FZ_ERRS(EOPNOTSUPP, EPERM);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		cmds[i].errs = fz_errs_or(cmds[i].errs, generic);
}

/* ---- one ioctl ------------------------------------------------------------ */

enum pmode { P_NORMAL, P_GUARD, P_RO, P_BAD, P_BIG };
static const char *const pmode_name[] = { "normal", "guard", "ro", "bad", "big" };

/* An fd to call: any kind, a foreign one, or one that is not open. */
static int pick_fd(struct fz *f, int want, int *kind, int *slot)
{
	static const int bad[] = { -1, -100, 999999, 0x7fffffff };
	int i = -1;

	*slot = -1;
	if (fz_chance(&f->r, 4)) {
		*kind = K_BAD;
		return bad[fz_below(&f->r, ARRAY_SIZE(bad))];
	}
	if (want != K_FREE && fz_chance(&f->r, 80))
		i = pick_obj(f, want, true);
	if (i < 0)
		i = pick_obj(f, K_FREE, true);
	if (i < 0) {
		*kind = K_BAD;
		return -1;
	}
	*slot = i;
	*kind = f->obj[i].kind;
	return f->obj[i].fd;
}

/* A command number: mostly known, else one no fd knows. */
static unsigned long pick_cmd(struct fz *f, const struct cmd **known)
{
	/* Types do_vfs_ioctl() or file_ioctl() handle themselves. */
	static const uint8_t generic[] = { 0x00, 'T', 'f', 'X', 0x94, 0x15, 'W' };
	unsigned int nr, type;
	bool ok;

	*known = NULL;
	if (fz_chance(&f->r, 85)) {
		*known = &cmds[fz_below(&f->r, ARRAY_SIZE(cmds))];
		return _IO(SWNIC_TYPE, (*known)->nr);
	}
	switch (fz_below(&f->r, 5)) {
	case 0:
		return _IO(SWNIC_TYPE, SWNIC_CMD_LAST + fz_below(&f->r, 64));
	case 1:
		return _IO(SWNIC_TYPE, fz_below(&f->r, SWNIC_CMD_BASE));
	case 2:
		nr = cmds[fz_below(&f->r, ARRAY_SIZE(cmds))].nr;
		return _IOC(1 + fz_below(&f->r, 3), SWNIC_TYPE, nr,
			    fz_below(&f->r, 1 << _IOC_SIZEBITS));
	case 3:
		nr = cmds[fz_below(&f->r, ARRAY_SIZE(cmds))].nr;
		return _IOC(_IOC_NONE, SWNIC_TYPE, nr, 1 + fz_below(&f->r, 512));
	default:
		do {
			type = fz_below(&f->r, 256);
			ok = type != SWNIC_TYPE;
			for (size_t i = 0; i < sizeof(generic); i++)
				ok &= type != generic[i];
		} while (!ok);
		return _IOC(fz_below(&f->r, 4), type, fz_below(&f->r, 256),
			    fz_below(&f->r, 1 << _IOC_SIZEBITS));
	}
}

/* The object a successful create handed back. */
static void take_created(struct fz *f, const struct cmd *c, const void *out,
			 int dom, bool valid_call)
{
	int i, limit = 0, kind = K_FREE, fd = -1;

	switch (c->nr) {
	case SWNIC_CMD_CQ_CREATE: {
		const struct swnic_cq_create *cq = out;

		kind = K_CQ, limit = MAX_CQS, fd = cq->fd;
		break;
	}
	case SWNIC_CMD_EP_CREATE: {
		const struct swnic_ep_create *ep = out;

		kind = K_EP, limit = MAX_EPS, fd = ep->fd;
		break;
	}
	case SWNIC_CMD_CNTR_CREATE: {
		const struct swnic_cntr_create *cn = out;

		kind = K_CNTR, limit = MAX_CNTRS, fd = cn->fd;
		break;
	}
	case SWNIC_CMD_MR_REG: {
		const struct swnic_mr_reg *m = out;

		record_mr(f, dom, m->handle, m->key, m->addr, m->length);
		return;
	}
	case SWNIC_CMD_QUERY_DEVICE:
		add_id(f, ((const struct swnic_query_device *)out)->domain_id);
		return;
	case SWNIC_CMD_AUTH_KEY:
		add_id(f, ((const struct swnic_auth_key *)out)->svc_id);
		return;
	case SWNIC_CMD_AV_OPEN: {
		const struct swnic_av_open *av = out;

		kind = K_AV, limit = MAX_AVS, fd = av->fd;
		break;
	}
	case SWNIC_CMD_PORT_BLOCK: {
		const struct swnic_port_block *b = out;

		if (!(b->flags & SWNIC_PORT_BLOCK_RELEASE))
			f->block[f->nblock++ % MAX_BLOCKS] = b->base;
		return;
	}
	case SWNIC_CMD_ADDR6: {
		const struct swnic_addr6 *a = out;

		f->name6[f->nname6++ % MAX_NAMES6] = a->name;
		add_id(f, a->name);
		return;
	}
	default:
		return;
	}
	if (fd < 0) {
		fz_check(&f->st, "created_fd", EBADFD, &(struct fz_errset){ { 0 } },
			 "%s succeeded with fd %d", c->name, fd);
		return;
	}
	i = count_kind(f, kind, false) < limit ? new_obj(f) : -1;
	if (i < 0) {
		close(fd);	/* the release of a fresh object */
		return;
	}
	f->obj[i].kind = kind;
	f->obj[i].fd = fd;
	f->obj[i].dom = dom;
	if (kind == K_CQ) {
		const struct swnic_cq_create *cq = out;

		f->obj[i].id = cq->cq_id;
		f->obj[i].info[0] = cq->ring;
		f->obj[i].has_info = true;
	} else if (kind == K_EP) {
		const struct swnic_ep_create *ep = out;

		f->obj[i].id = ep->port;
		f->obj[i].type = ep->type;
		f->obj[i].info[0] = ep->sq;
		f->obj[i].info[1] = ep->rq;
		f->obj[i].has_info = true;
	} else if (kind == K_AV) {
		const struct swnic_av_open *av = out;

		f->obj[i].av_count = av->count;
		f->obj[i].av_size = av->mmap_size;
	} else {
		f->obj[i].id = ((const struct swnic_cntr_create *)out)->cntr_id;
	}
	add_id(f, f->obj[i].id);
	if (valid_call && (kind == K_CQ || kind == K_EP)) {
		struct obj *o = &f->obj[i];
		int err = 0;

		for (int r = 0; r < (kind == K_EP ? 2 : 1) && !err; r++) {
			err = -t_ring_map(&o->ring[r], o->fd, &o->info[r]);
			if (err && r)
				munmap(o->ring[0].map, o->ring[0].size);
		}
		o->mapped = !err;
		fz_check(&f->st, "mmap_ring", err, &(struct fz_errset){ { 0 } },
			 "%s's ring, offset 0x%llx size %llu", kind_name[kind],
			 (unsigned long long)o->info[0].mmap_offset,
			 (unsigned long long)o->info[0].mmap_size);
	}
}

/* One ioctl with a random command, struct, size and pointer. */
static void op_ioctl(struct fz *f, int want)
{
	uint8_t tmp[512] = { 0 };
	const struct cmd *c;
	unsigned long nr = pick_cmd(f, &c);
	int kind, slot, fd, err, dom, expect = 0, pm;
	size_t ksize = c ? c->size : 8 + fz_below(&f->r, 64);
	uint32_t usize;
	bool garbage = false, right_kind;
	size_t off = 8 * fz_below(&f->r, 32), gpos = 0, gn = 0;
	uint8_t *arg;
	struct fz_errset errs;

	fd = pick_fd(f, c ? c->kind : want, &kind, &slot);
	dom = slot >= 0 ? (f->obj[slot].kind == K_DOM ? slot : f->obj[slot].dom) : -1;
	f->slot = slot;
	if (c)
		c->fill(f, tmp, dom);
	else
		fz_fill(&f->r, tmp, ksize);
	/* A few random bytes anywhere past the size. */
	if (fz_chance(&f->r, 12))
		for (int n = 1 + fz_below(&f->r, 4); n; n--)
			tmp[4 + fz_below(&f->r, ksize - 4)] = fz_next(&f->r);

	switch (fz_below(&f->r, 16)) {
	case 0:
		usize = 0;
		break;
	case 1:
		usize = fz_below(&f->r, ksize);
		break;
	case 2:
		usize = ksize - fz_below(&f->r, 16) % ksize;
		break;
	case 3: case 4:
		usize = ksize + 1 + fz_below(&f->r, 2 * f->page - 256 - ksize - 1);
		break;
	case 5: case 6:
		usize = ksize + 1 + fz_below(&f->r, 2 * f->page - 256 - ksize - 1);
		garbage = true;
		break;
	case 7:
		usize = fz_chance(&f->r, 50) ? 0xffffffff : BIG_SIZE - fz_below(&f->r, 64);
		garbage = fz_chance(&f->r, 50);
		break;
	default:
		usize = ksize;
		break;
	}

	pm = fz_below(&f->r, 20);
	pm = pm < 13 ? P_NORMAL : pm < 15 ? P_GUARD : pm < 17 ? P_RO :
	     pm < 19 ? P_BAD : P_BIG;
	if (usize > 2 * f->page - off)
		pm = pm == P_BAD ? P_BAD : P_BIG;
	if (pm == P_RO && usize > f->page)
		pm = P_NORMAL;
	memcpy(tmp, &usize, sizeof(usize));

	switch (pm) {
	case P_GUARD:
		/* The struct ends at the guard page: a tail runs into it. */
		gn = usize > ksize ? ksize : usize < 8 ? 8 : usize;
		arg = f->guard - gn;
		memcpy(arg, tmp, gn);
		break;
	case P_RO:
		mprotect(f->ro, f->page, PROT_READ | PROT_WRITE);
		memset(f->ro, 0, f->page);
		arg = f->ro + f->page - (usize > ksize ? usize : ksize);
		memcpy(arg, tmp, ksize);
		if (garbage && usize > ksize) {
			gpos = ksize + fz_below(&f->r, usize - ksize);
			arg[gpos] = 1 + fz_below(&f->r, 255);
		}
		mprotect(f->ro, f->page, PROT_READ);
		break;
	case P_BAD: {
		static const uint64_t bad[] = {
			0, 16, 0xffff888000000000ULL, 0xffffffff81000000ULL,
			0x0000800000000000ULL, 0xfffffffffffff000ULL,
		};
		int b = fz_below(&f->r, ARRAY_SIZE(bad) + 1);

		arg = b < (int)ARRAY_SIZE(bad) ? (uint8_t *)(uintptr_t)bad[b] :
		      f->guard + fz_below(&f->r, f->page);
		break;
	}
	case P_BIG:
		arg = f->big;
		memcpy(arg, tmp, ksize);
		if (garbage && usize > ksize) {
			gpos = ksize + fz_below(&f->r, (usize < BIG_SIZE ? usize : BIG_SIZE) - ksize);
			arg[gpos] = 1 + fz_below(&f->r, 255);
		}
		break;
	default:
		arg = f->argmap + off;
		memcpy(arg, tmp, ksize);
		if (garbage && usize > ksize) {
			gpos = ksize + fz_below(&f->r, usize - ksize);
			arg[gpos] = 1 + fz_below(&f->r, 255);
		}
		break;
	}

	fz_trace("ioctl fd %d (%s) cmd 0x%lx size %u %s%s", fd, kind_name[kind],
		 nr, usize, pmode_name[pm], garbage ? " garbage" : "");
	err = ioctl(fd, nr, arg) ? errno : 0;

	/* The generic contract, where the answer is certain. */
	right_kind = c && (kind == c->kind);
	if (kind == K_BAD)
		expect = EBADF;
	else if (kind == K_FOREIGN || kind == K_CNTR || !right_kind)
		expect = ENOTTY;
	else if (pm == P_BAD)
		expect = EFAULT;
	else if (usize < 8)
		expect = EINVAL;
	else if (usize > ksize && pm == P_GUARD)
		expect = EFAULT;
	else if (usize > ksize && garbage)
		expect = E2BIG;

	if (expect)
		errs = fz_errs(expect, 0);
	else
		errs = c->errs;
	if (!fz_check(&f->st, c ? c->name : "unknown_cmd", err, &errs,
		      "cmd 0x%lx on %s fd, size %u (struct %zu), %s pointer%s%s",
		      nr, kind_name[kind], usize, ksize, pmode_name[pm],
		      garbage ? ", non-zero tail" : "",
		      expect ? " (certain answer)" : ""))
		return;

	if (!err && right_kind && (pm == P_NORMAL || pm == P_BIG || pm == P_GUARD)) {
		memcpy(tmp, arg, usize < ksize ? usize : ksize);
		take_created(f, c, tmp, dom, false);
	}
	/* Leave the buffers zeroed for the next call. */
	if (pm == P_NORMAL) {
		size_t n = usize > ksize ? usize : ksize;

		memset(f->argmap + off, 0, n < 2 * f->page - off ? n : 2 * f->page - off);
	} else if (pm == P_GUARD) {
		memset(f->guard - gn, 0, gn);
	}
	else if (pm == P_BIG) {
		memset(f->big, 0, ksize);
		if (gpos)
			f->big[gpos] = 0;
	}
}

/* ---- valid objects ------------------------------------------------------- */

static int op_open(struct fz *f)
{
	int i, fd, flags = O_RDWR;

	if (count_kind(f, K_DOM, true) >= MAX_DOMS) {
		i = pick_obj(f, K_DOM, true);
		if (i >= 0)
			destroy_obj(f, i);
	}
	if (fz_chance(&f->r, 10))
		flags = fz_chance(&f->r, 50) ? O_RDONLY : O_WRONLY;
	fd = open(dev_path, flags | O_CLOEXEC);
	fz_check(&f->st, "open", fd < 0 ? errno : 0, &(struct fz_errset){ { 0 } },
		 "open %s flags 0x%x", dev_path, flags);
	if (fd < 0)
		return -1;
	i = new_obj(f);
	if (i < 0) {
		close(fd);
		return -1;
	}
	f->obj[i].kind = K_DOM;
	f->obj[i].fd = fd;
	f->obj[i].dom = i;
	f->obj[i].ro_fd = flags != O_RDWR;
	f->obj[i].id = dom_id(fd);
	add_id(f, f->obj[i].id);
	return i;
}

/*
 * A valid create of a CQ, counter, endpoint (maybe in a port block), MR,
 * shared AV or port block on a random domain.
 */
static void op_create(struct fz *f)
{
	uint8_t buf[512] = { 0 };
	int d = pick_obj(f, K_DOM, true);
	const struct cmd *c;
	int what = fz_below(&f->r, 12), err;

	if (d < 0 && (d = op_open(f)) < 0)
		return;

	if (what < 3) {
		struct swnic_cq_create *cq = (void *)buf;

		c = cmd_by_nr(SWNIC_CMD_CQ_CREATE);
		cq->flags = fz_chance(&f->r, 30) ? SWNIC_CQ_F_INLINE_DATA : 0;
		cq->entries = 1 + fz_below(&f->r, 128);
	} else if (what < 4) {
		c = cmd_by_nr(SWNIC_CMD_CNTR_CREATE);
	} else if (what < 7) {
		static const uint32_t fl[] = {
			SWNIC_EP_F_DB_SYSCALL, SWNIC_EP_F_DB_ENGINE, 0,
			SWNIC_EP_F_DB_SYSCALL | SWNIC_EP_F_RM_ENABLED,
			SWNIC_EP_F_DB_ENGINE | SWNIC_EP_F_RM_ENABLED,
		};
		struct swnic_ep_create *ep = (void *)buf;
		int cq = -1;

		for (int tries = 0; tries < 16 && cq < 0; tries++) {
			cq = pick_obj(f, K_CQ, false);
			if (cq >= 0 && f->obj[cq].dom != d)
				cq = -1;
		}
		if (cq < 0) {
			/* None yet on this domain: make one first. */
			c = cmd_by_nr(SWNIC_CMD_CQ_CREATE);
			((struct swnic_cq_create *)buf)->entries = 64;
			goto create;
		}
		c = cmd_by_nr(SWNIC_CMD_EP_CREATE);
		ep->flags = fl[fz_below(&f->r, ARRAY_SIZE(fl))];
		ep->type = fz_chance(&f->r, 80) ? SWNIC_EP_RDM : SWNIC_EP_DGRAM;
		ep->tx_cq = ep->rx_cq = f->obj[cq].id;
		ep->sq_entries = 1 + fz_below(&f->r, 64);
		ep->rq_entries = 1 + fz_below(&f->r, 64);
		for (int i = 0; i < SWNIC_EP_CNTR_MAX; i++) {
			int n = fz_chance(&f->r, 30) ? pick_obj(f, K_CNTR, false) : -1;

			if (n >= 0 && f->obj[n].dom == d)
				ep->cntr[i] = f->obj[n].id;
		}
		ep->dscp = fz_chance(&f->r, 30) ? fz_below(&f->r, 64) : 0;
		/* A member of a block (maybe another domain's: ENOENT). */
		if (f->nblock && fz_chance(&f->r, 30)) {
			ep->group = pick_block(f);
			ep->port = fz_chance(&f->r, 30) ? 0 :
				   ep->group + fz_below(&f->r, 8);
		}
	} else if (what == 10) {
		struct swnic_av_open *av = (void *)buf;

		c = cmd_by_nr(SWNIC_CMD_AV_OPEN);
		av->flags = fz_chance(&f->r, 60) ? SWNIC_AV_OPEN_CREATE : 0;
		snprintf((char *)av->name, sizeof(av->name), "fz%u",
			 fz_below(&f->r, 3));
		if (av->flags)
			av->count = 1 + fz_below(&f->r, 1024);
	} else if (what == 11) {
		struct swnic_port_block *b = (void *)buf;

		c = cmd_by_nr(SWNIC_CMD_PORT_BLOCK);
		b->count = 1 + fz_below(&f->r, 8);
	} else {
		struct swnic_mr_reg *m = (void *)buf;
		int dd = fz_below(&f->r, NDATA);
		uint32_t start = fz_below(&f->r, DATA_SIZE);

		c = cmd_by_nr(SWNIC_CMD_MR_REG);
		m->flags = pick_flags(f, SWNIC_MR_REG_ODP | SWNIC_MR_REG_VIRT_ADDR);
		m->addr = (uintptr_t)f->data[dd] + start;
		m->length = 1 + fz_below(&f->r, DATA_SIZE - start);
		m->access = 1 + fz_below(&f->r, SWNIC_MR_ACCESS_ALL);
	}
create:
	memcpy(buf, &(uint32_t){ c->size }, sizeof(uint32_t));
	err = ioctl(f->obj[d].fd, _IO(SWNIC_TYPE, c->nr), buf) ? errno : 0;
	fz_check(&f->st, c->name, err, &c->errs, "valid %s on domain %u",
		 c->name, f->obj[d].id);
	if (!err)
		take_created(f, c, buf, d, true);
}

/* Close an object: its fd, its fd but not its mapping, or the mapping. */
static void op_close(struct fz *f)
{
	int i = pick_obj(f, K_FREE, false);
	struct obj *o;

	if (i < 0)
		return;
	o = &f->obj[i];
	if (o->kind == K_FOREIGN)
		return;
	if (o->fd >= 0 && o->mapped && fz_chance(&f->r, 40)) {
		/* The object lives on in the mapping (an EP keeps its port). */
		close(o->fd);
		o->fd = -1;
		return;
	}
	destroy_obj(f, i);
}

/* ---- the data path ------------------------------------------------------- */

/* The port of a live endpoint of @type whose domain is open, or 0. */
static uint16_t live_port(struct fz *f, uint32_t type)
{
	int cand[MAX_OBJS], n = 0;

	for (int i = 0; i < MAX_OBJS; i++)
		if (f->obj[i].kind == K_EP && f->obj[i].dom >= 0 &&
		    f->obj[i].type == type)
			cand[n++] = i;
	return n ? f->obj[cand[fz_below(&f->r, n)]].id : 0;
}

/* A small buffer in a data region. */
static void data_buf(struct fz *f, __u64 *addr, __u64 *len)
{
	int d = fz_below(&f->r, NDATA);
	uint32_t n = 1 + fz_below(&f->r, 512);

	*addr = (uintptr_t)f->data[d] + fz_below(&f->r, DATA_SIZE - n);
	*len = n;
}

static void op_post(struct fz *f)
{
	uint8_t e[sizeof(struct swnic_sqe)] = { 0 };
	int i = pick_obj(f, K_EP, false);
	bool sane = fz_chance(&f->r, 60);
	struct obj *o;
	int err;

	if (i < 0 || !f->obj[i].mapped)
		return;
	o = &f->obj[i];
	if (fz_chance(&f->r, 55)) {
		static const uint8_t ops[] = { SWNIC_OP_SEND, SWNIC_OP_TSEND,
					       SWNIC_OP_WRITE, SWNIC_OP_READ };
		struct swnic_sqe *s = (void *)e;
		struct mrrec *mr = pick_mr(f);

		s->context = ++f->ctx;
		s->tag = fz_below(&f->r, 4);
		s->data = fz_next(&f->r);
		s->dest_addr = htonl(INADDR_LOOPBACK);
		if (sane) {
			/* Well formed: a send or an RMA that can succeed. */
			s->opcode = ops[fz_below(&f->r, mr ? 4 : 2)];
			s->flags = SWNIC_SQE_COMPLETION |
				   (fz_chance(&f->r, 20) ? SWNIC_SQE_DELIVERY : 0) |
				   (fz_chance(&f->r, 20) ? SWNIC_SQE_REMOTE_DATA : 0);
			data_buf(f, &s->addr, &s->len);
			s->dest_port = live_port(f, o->type);
			if (s->opcode == SWNIC_OP_WRITE || s->opcode == SWNIC_OP_READ) {
				s->flags &= ~SWNIC_SQE_DELIVERY;
				s->rkey = mr->key;
				s->raddr = mr->len ? fz_below(&f->r, mr->len) : 0;
				if (s->raddr + s->len > mr->len)
					s->len = mr->len - s->raddr;
				if (fz_chance(&f->r, 50))
					s->raddr += mr->addr;
			}
			if (s->opcode != SWNIC_OP_READ && fz_chance(&f->r, 20)) {
				s->flags |= SWNIC_SQE_INLINE;
				s->len %= SWNIC_INLINE_MAX + 1;
			}
		} else {
			s->opcode = fz_chance(&f->r, 95) ? ops[fz_below(&f->r, 4)] :
				    fz_below(&f->r, 256);
			s->flags = pick_flags(f, SWNIC_SQE_COMPLETION |
					      SWNIC_SQE_REMOTE_DATA |
					      SWNIC_SQE_INLINE | SWNIC_SQE_DELIVERY);
			pick_range(f, &s->addr, &s->len);
			if (fz_chance(&f->r, 60))
				s->len = fz_below(&f->r, 512);
			if (s->flags & SWNIC_SQE_INLINE)
				s->len = fz_below(&f->r, SWNIC_INLINE_MAX + 2);
			if (mr) {
				s->rkey = mr->key;
				s->raddr = fz_chance(&f->r, 50) ? mr->addr :
					   fz_below(&f->r, 256);
			} else {
				s->rkey = pick_id(f);
			}
			if (fz_chance(&f->r, 10))
				s->dest_addr = fz_u32(&f->r);
			s->dest_port = pick_port(f);
			if (fz_chance(&f->r, 3))
				s->key_index = fz_u32(&f->r);
		}
		fz_fill(&f->r, s->inline_data, sizeof(s->inline_data));
		fz_trace("post SQE context %llu op %u flags 0x%x len %llu to port %u on ep %u%s",
			 (unsigned long long)s->context, s->opcode, s->flags,
			 (unsigned long long)s->len, s->dest_port, o->id,
			 sane ? " (sane)" : "");
		err = t_ring_push(&o->ring[0], s);
	} else {
		struct swnic_rqe *q = (void *)e;

		q->context = ++f->ctx;
		if (sane) {
			data_buf(f, &q->addr, &q->len);
			switch (fz_below(&f->r, 8)) {
			case 0: case 1:
				q->flags = SWNIC_RQE_TAGGED;
				break;
			case 2:
				q->flags = SWNIC_RQE_MULTI_RECV;
				break;
			case 3:
				q->flags = SWNIC_RQE_TAGGED | SWNIC_RQE_CLAIM;
				break;
			case 4:
				q->flags = SWNIC_RQE_DIRECTED;
				break;
			default:
				break;
			}
		} else {
			pick_range(f, &q->addr, &q->len);
			if (fz_chance(&f->r, 60))
				q->len = fz_below(&f->r, 2048);
			q->flags = pick_flags(f, SWNIC_RQE_TAGGED | SWNIC_RQE_MULTI_RECV |
					      SWNIC_RQE_DIRECTED | SWNIC_RQE_CLAIM |
					      SWNIC_RQE_MR);
			if ((q->flags & SWNIC_RQE_MR) || fz_chance(&f->r, 3))
				q->mr = fz_below(&f->r, 8);
		}
		q->tag = fz_below(&f->r, 4);
		q->ignore = fz_chance(&f->r, 70) ? 0 : ~0ULL;
		q->min_free = fz_below(&f->r, 512);
		q->src_addr = htonl(INADDR_LOOPBACK);
		q->src_port = pick_port(f);
		fz_trace("post RQE flags 0x%x len %llu on ep %u", q->flags,
			 (unsigned long long)q->len, o->id);
		err = t_ring_push(&o->ring[1], q);
	}
	add_id(f, f->ctx);
	if (err || o->fd < 0 || fz_chance(&f->r, 20))
		return;	/* full, no fd, or left for a later doorbell */
	{
		struct swnic_ep_doorbell db = { .size = sizeof(db) };

		err = ioctl(o->fd, SWNIC_IOCTL_EP_DOORBELL, &db) ? errno : 0;
		fz_check(&f->st, "post+doorbell", err,
			 &cmd_by_nr(SWNIC_CMD_EP_DOORBELL)->errs,
			 "doorbell of endpoint %u", o->id);
	}
}

/* Reap completions; each must make sense. */
static void op_drain(struct fz *f)
{
	const struct fz_errset cqe_errs =
		FZ_ERRS(EINVAL, EOPNOTSUPP, EFAULT, ECONNREFUSED, EHOSTUNREACH,
			EACCES, EAGAIN, ENOKEY, EKEYREVOKED, EKEYREJECTED,
			ERANGE, EMSGSIZE, ECANCELED, ENOMSG, ECONNABORTED,
			ENOMEM);
	/* Over the wire: peers that never answer, or forget us. */
	const struct fz_errset wire_errs =
		FZ_ERRS(ETIMEDOUT, ECONNRESET, ENETDOWN, ENOTCONN, EPERM,
			ENOENT);
	const struct fz_errset errs = wire ? fz_errs_or(cqe_errs, wire_errs) :
				      cqe_errs;
	int i = pick_obj(f, K_CQ, false);
	struct swnic_cqe cqe;
	struct t_cq cq;

	if (i < 0 || !f->obj[i].mapped)
		return;
	cq.fd = f->obj[i].fd;
	cq.ring = f->obj[i].ring[0];
	for (int n = 0; n < 256 && t_cq_pop(&cq, &cqe); n++) {
		bool ok = !(cqe.flags & ~0x3ffU) &&
			  (cqe.flags & SWNIC_CQE_ERROR ? cqe.err > 0 : !cqe.err);

		f->cqe_seen++;
		fz_trace("cqe context %llu flags 0x%x err %d", (unsigned long long)cqe.context,
			 cqe.flags, cqe.err);
		if (!ok)
			fz_check(&f->st, "cqe", EBADMSG, &(struct fz_errset){ { 0 } },
				 "flags 0x%x err %d context %llu", cqe.flags,
				 cqe.err, (unsigned long long)cqe.context);
		else
			fz_check(&f->st, "cqe", cqe.flags & SWNIC_CQE_ERROR ? cqe.err : 0,
				 &errs, "error completion, flags 0x%x context %llu",
				 cqe.flags, (unsigned long long)cqe.context);
	}
	if (atomic_load(cq.ring.flags) & SWNIC_RING_F_OVERFLOW)
		fz_check(&f->st, "cq_overflow", EOVERFLOW, &(struct fz_errset){ { 0 } },
			 "CQ %u flags a lost completion", f->obj[i].id);
	if (fz_chance(&f->r, 30) && cq.fd >= 0) {
		struct pollfd p = { .fd = cq.fd, .events = POLLIN };

		fz_check(&f->st, "poll", poll(&p, 1, 0) < 0 ? errno : 0,
			 &(struct fz_errset){ { 0 } }, "poll of CQ %u", f->obj[i].id);
	}
}

/* ---- mmap ---------------------------------------------------------------- */

static void op_mmap(struct fz *f)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	int kind, slot, fd = pick_fd(f, K_FREE, &kind, &slot);
	struct obj *o = slot >= 0 ? &f->obj[slot] : NULL;
	int prot = fz_chance(&f->r, 60) ? PROT_READ : prots[fz_below(&f->r, ARRAY_SIZE(prots))];
	int flags = fz_chance(&f->r, 85) ? MAP_SHARED : MAP_PRIVATE;
	uint64_t off, len, alen, right_off = ~0ULL, right_len = 0;
	int err, expect = 0;
	bool ro_only = false, sane;
	void *p;

	if (o && o->kind == K_DOM) {
		right_off = SWNIC_MMAP_OFFSET(SWNIC_MMAP_INVAL, 0);
		right_len = f->page;
		ro_only = true;
	} else if (o && o->kind == K_CNTR) {
		right_off = 0;
		right_len = f->page;
		ro_only = true;
	} else if (o && o->kind == K_AV) {
		right_off = 0;
		right_len = o->av_size;
		ro_only = true;
	} else if (o && o->has_info) {
		int r = o->kind == K_EP ? fz_below(&f->r, 2) : 0;

		right_off = o->info[r].mmap_offset;
		right_len = o->info[r].mmap_size;
	}
	switch (fz_below(&f->r, 8)) {
	case 0: case 1: case 2: case 3:
		off = right_off != ~0ULL ? right_off : 0;
		break;
	case 4:
		off = SWNIC_MMAP_OFFSET(fz_below(&f->r, 4), fz_below(&f->r, 3));
		break;
	case 5:
		off = (fz_u64(&f->r) & ~(f->page - 1)) % (1ULL << 52);
		break;
	case 6:
		off = fz_below(&f->r, 0x20000) * f->page;
		break;
	default:
		off = fz_u64(&f->r);
		break;
	}
	switch (fz_below(&f->r, 8)) {
	case 0: case 1: case 2: case 3:
		len = right_len ? right_len : f->page;
		break;
	case 4:
		len = right_len + f->page * (fz_chance(&f->r, 50) ? 1 : -1);
		break;
	case 5:
		len = 0;
		break;
	case 6:
		len = fz_u64(&f->r);
		break;
	default:
		len = f->page * (1 + fz_below(&f->r, 32));
		break;
	}

	fz_trace("mmap fd %d (%s) off 0x%llx len 0x%llx prot %d flags 0x%x", fd,
		 kind_name[kind], (unsigned long long)off,
		 (unsigned long long)len, prot, flags);
	p = mmap(NULL, len, prot, flags, fd, off);
	err = p == MAP_FAILED ? errno : 0;

	sane = len && len <= MAX_MAP_LEN && !(off & (f->page - 1)) &&
	       off < (1ULL << 52);
	alen = (len + f->page - 1) & ~(uint64_t)(f->page - 1);
	/* In the order of the mmap syscall, do_mmap() and the object's .mmap. */
	if (off & (f->page - 1))
		expect = EINVAL;
	else if (kind == K_BAD)
		expect = EBADF;
	else if (!len)
		expect = EINVAL;
	else if (sane && !(prot & PROT_EXEC) && kind != K_FOREIGN &&
		 right_off != ~0ULL && !(kind == K_DOM && o->ro_fd)) {
		/* What the object's .mmap answers, in its order. */
		if (kind == K_EP) {
			int r = off == o->info[0].mmap_offset ? 0 :
				off == o->info[1].mmap_offset ? 1 : -1;

			/* Its rings are the owner's, and shared only. */
			expect = r < 0 ? EINVAL : f->child ? EACCES :
				 alen != o->info[r].mmap_size ? EINVAL :
				 flags != MAP_SHARED ? EINVAL : 0;
		} else if (kind == K_DOM && f->child &&
			   off == SWNIC_MMAP_OFFSET(SWNIC_MMAP_INVAL,
						    (off >> SWNIC_MMAP_ID_SHIFT) &
						    SWNIC_MMAP_ID_MASK)) {
			expect = EACCES;	/* a well-formed offset, not the owner */
		} else if (off != right_off ||
			   (kind != K_DOM && kind != K_CQ && alen != right_len)) {
			expect = EINVAL;
		} else if ((kind == K_DOM || kind == K_CQ) && f->child) {
			expect = EACCES;	/* not the owner: before the rest */
		} else if (alen != right_len) {
			expect = EINVAL;
		} else if (kind == K_CQ && flags != MAP_SHARED) {
			expect = EINVAL;	/* a ring: shared only */
		} else if (kind == K_CNTR && f->child) {
			expect = EACCES;	/* the owner's, after its size */
		} else if (kind == K_CNTR && (prot & PROT_WRITE)) {
			expect = EACCES;
		} else if (kind == K_AV && (prot & PROT_WRITE)) {
			expect = EACCES;
		} else if (kind == K_DOM && (prot & PROT_WRITE)) {
			expect = EACCES;
		}
	}
	{
		struct fz_errset errs = expect ? fz_errs(expect, 0) :
			kind == K_FOREIGN ? sane ? FZ_ERRS(ENODEV, EACCES, EPERM) :
			FZ_ERRS(ENODEV, EACCES, EPERM, EINVAL, ENOMEM, EOVERFLOW) :
			FZ_ERRS(EINVAL, EACCES, ENOMEM, EOVERFLOW, ENODEV);

		if (prot & PROT_EXEC)
			errs = fz_errs_or(errs, FZ_ERRS(EPERM));
		if (!fz_check(&f->st, "mmap", err, &errs,
			      "%s fd, offset 0x%llx length 0x%llx prot %d flags 0x%x",
			      kind_name[kind], (unsigned long long)off,
			      (unsigned long long)len, prot, flags))
			return;
	}
	if (err)
		return;
	/* Whatever else it was: never executable, a ring never private. */
	if (kind != K_FOREIGN &&
	    ((prot & PROT_EXEC) ||
	     ((kind == K_EP || kind == K_CQ) && flags != MAP_SHARED))) {
		struct fz_errset e = (prot & PROT_EXEC) ? FZ_ERRS(EPERM) :
				     FZ_ERRS(EINVAL);

		fz_check(&f->st, "mmap", EEXIST, &e,
			 "%s fd mapped prot %d flags 0x%x", kind_name[kind],
			 prot, flags);
		munmap(p, alen);
		return;
	}
	/* Touch every page (read), as a consumer of the mapping would. */
	if (prot & PROT_READ)
		for (uint64_t o2 = 0; o2 < alen; o2 += f->page)
			(void)*(volatile uint8_t *)((uint8_t *)p + o2);
	add_map(f, p, alen, ro_only, kind != K_FOREIGN,
		kind == K_EP || kind == K_CQ || kind == K_CNTR ||
		kind == K_DOM);
}

/* munmap, mprotect or mremap of a mapping op_mmap() made. */
static void op_unmap(struct fz *f)
{
	int i = fz_below(&f->r, MAX_MAPS), err;
	struct map *m;

	for (int n = 0; n < MAX_MAPS && !f->map[i].p; n++)
		i = (i + 1) % MAX_MAPS;
	m = &f->map[i];
	if (!m->p)
		return;
	fz_trace("unmap/mprotect/mremap %p len 0x%zx", m->p, m->len);
	switch (fz_below(&f->r, 5)) {
	case 0: {
		/* Made writable: refused if the object never allows it. */
		struct fz_errset e = m->ro_only ? FZ_ERRS(EACCES) : fz_errs(0);

		err = mprotect(m->p, m->len, PROT_READ | PROT_WRITE) ? errno : 0;
		fz_check(&f->st, "mprotect", err, &e,
			 "mapping of %zu bytes made writable%s", m->len,
			 m->ro_only ? " (read-only object)" : "");
		if (m->ro_only && !err)
			fz_check(&f->st, "mprotect", EEXIST, &e,
				 "a read-only object's mapping became writable");
		if (!m->swnic)
			return;
		/* Nor does any swnic mapping become executable. */
		e = FZ_ERRS(EACCES);
		err = mprotect(m->p, m->len, PROT_READ | PROT_EXEC) ? errno : 0;
		fz_check(&f->st, "mprotect", err ? err : EEXIST, &e,
			 "mapping of %zu bytes made executable", m->len);
		return;
	}
	case 1: {
		/* Grown in place or moved: swnic's mappings never grow. */
		void *p = mremap(m->p, m->len, m->len + f->page, MREMAP_MAYMOVE);
		struct fz_errset e = m->swnic ? FZ_ERRS(EFAULT) :
				     FZ_ERRS(EFAULT, ENOMEM, EINVAL);

		err = p == MAP_FAILED ? errno : 0;
		fz_check(&f->st, "mremap", err, &e,
			 "grow a mapping of %zu bytes", m->len);
		if (!err) {
			m->p = p;
			m->len += f->page;
		}
		return;
	}
	case 2:
		if (m->len > f->page) {
			/* Partly: the rest keeps the object alive. */
			munmap((uint8_t *)m->p + m->len - f->page, f->page);
			m->len -= f->page;
			return;
		}
		/* fall through */
	default:
		munmap(m->p, m->len);
		m->p = NULL;
		return;
	}
}

/*
 * The memory MRs point at goes away, comes back, changes protection. The
 * addresses stay reserved (PROT_NONE while "unmapped"): nothing else may be
 * mapped there, or the MAP_FIXED below would clobber it.
 */
static void op_data(struct fz *f)
{
	int d = fz_below(&f->r, NDATA);
	uint8_t *p = f->data[d];
	void *q;

	fz_trace("data region %d (%s)", d, f->data_mapped[d] ? "mapped" : "gone");
	switch (fz_below(&f->r, 4)) {
	case 0:
		q = mmap(p, DATA_SIZE, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (q != MAP_FAILED)
			f->data_mapped[d] = false;
		return;
	case 1:
		if (f->data_mapped[d])
			madvise(p, DATA_SIZE, MADV_DONTNEED);
		return;
	case 2:
		if (f->data_mapped[d]) {
			mprotect(p, DATA_SIZE, PROT_READ);
			mprotect(p, DATA_SIZE, PROT_READ | PROT_WRITE);
		}
		return;
	default:
		break;
	}
	q = mmap(p, DATA_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (q != MAP_FAILED) {
		memset(q, 0x5a, DATA_SIZE);
		f->data_mapped[d] = true;
	}
}

/* ---- the fd limit --------------------------------------------------------- */

/* Creates with no fd left must fail with EMFILE and leave nothing behind. */
static void op_emfile(struct fz *f)
{
	uint8_t buf[512] = { 0 };
	int d = pick_obj(f, K_DOM, true), cq = -1, lowest, err, which;
	struct rlimit old, lim;
	const struct cmd *c;
	struct fz_errset e;

	if (d < 0 || f->obj[d].ro_fd)
		return;
	for (int tries = 0; tries < 16 && cq < 0; tries++) {
		cq = pick_obj(f, K_CQ, false);
		if (cq >= 0 && f->obj[cq].dom != d)
			cq = -1;
	}
	which = fz_below(&f->r, cq >= 0 ? 3 : 2);
	c = cmd_by_nr(which == 0 ? SWNIC_CMD_CQ_CREATE :
		      which == 1 ? SWNIC_CMD_CNTR_CREATE : SWNIC_CMD_EP_CREATE);
	if (which == 2) {
		struct swnic_ep_create *ep = (void *)buf;

		ep->flags = fz_chance(&f->r, 50) ? SWNIC_EP_F_DB_ENGINE : 0;
		ep->type = SWNIC_EP_RDM;
		ep->tx_cq = ep->rx_cq = f->obj[cq].id;
		ep->port = fz_chance(&f->r, 50) ? 0 : 40000 + fz_below(&f->r, 1000);
	}
	memcpy(buf, &(uint32_t){ c->size }, sizeof(uint32_t));

	lowest = dup(0);
	if (lowest < 0 || getrlimit(RLIMIT_NOFILE, &old))
		return;
	close(lowest);
	lim = old;
	lim.rlim_cur = lowest;
	if (setrlimit(RLIMIT_NOFILE, &lim))
		return;
	err = ioctl(f->obj[d].fd, _IO(SWNIC_TYPE, c->nr), buf) ? errno : 0;
	setrlimit(RLIMIT_NOFILE, &old);
	/* A user port can be taken (EADDRINUSE) before the fd is looked for. */
	e = which == 2 && ((struct swnic_ep_create *)buf)->port ?
	    FZ_ERRS(EMFILE, EADDRINUSE) : FZ_ERRS(EMFILE);
	fz_check(&f->st, "emfile", err, &e, "%s with no fd free below %d",
		 c->name, lowest);
	if (!err)
		take_created(f, c, buf, d, false);
}

/* ---- other processes ------------------------------------------------------ */

static void fuzz_step(struct fz *f);

/*
 * A forked child: not the owner of anything it inherited (EPERM, EACCES);
 * then, as a process of its own, it opens domains, builds objects and
 * either exits with them open or is killed in the middle of a call.
 */
static void op_fork(struct fz *f)
{
	bool builder = fz_chance(&f->r, 50);
	bool kill_it = builder && fz_chance(&f->r, 50);
	unsigned int delay = fz_below(&f->r, 20000);
	uint64_t salt = fz_next(&f->r);
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		f->child = true;
		f->forked = true;
		memset(&f->st, 0, sizeof(f->st));
		fz_rng_init(&f->r, fz_seed(), salt);
		/*
		 * Rings, counters and the invalidation page are not
		 * inherited (VM_DONTCOPY): nothing is there.
		 */
		for (int i = 0; i < MAX_MAPS; i++) {
			struct fz_errset e = FZ_ERRS(ENOMEM);
			unsigned char vec;

			if (!f->map[i].p || !f->map[i].owners)
				continue;
			fz_check(&f->st, "fork",
				 mincore(f->map[i].p, f->page, &vec) ? errno : 0,
				 &e, "an owner's mapping of %zu bytes inherited",
				 f->map[i].len);
			f->map[i].p = NULL;
		}
		for (int i = 0; i < MAX_OBJS; i++)
			f->obj[i].mapped = false;
		for (int n = 0; n < 40; n++)
			op_ioctl(f, K_FREE);
		for (int n = 0; n < 10; n++)
			op_mmap(f);
		if (builder) {
			/* A process of its own: forget what the parent had. */
			for (int i = 0; i < MAX_OBJS; i++)
				if (f->obj[i].kind != K_FOREIGN)
					f->obj[i].kind = K_FREE;
			f->nmr = 0;
			f->child = false;
			for (int n = 0; n < 150; n++)
				fuzz_step(f);
		}
		if (f->st.bad)
			fz_report(&f->st, "forked child");
		_exit(f->st.bad ? 1 : 0);
	}
	if (kill_it) {
		usleep(delay);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	fz_check(&f->st, "child", WIFEXITED(status) ? WEXITSTATUS(status) ? EBADE : 0 :
		 WTERMSIG(status) == SIGKILL && kill_it ? 0 : EINTR,
		 &(struct fz_errset){ { 0 } }, "child status 0x%x", status);
}

/* ---- the loop -------------------------------------------------------------- */

/* The operations, by name for SWNIC_FUZZ_SKIP (to reduce a failure). */
enum { OP_IOCTL, OP_EPIOCTL, OP_MMAP, OP_UNMAP, OP_CREATE, OP_CLOSE, OP_OPEN,
       OP_POST, OP_DRAIN, OP_DATA, OP_EMFILE, OP_FORK, OP_NUM };
static const char *const op_names[OP_NUM] = {
	"ioctl", "epioctl", "mmap", "unmap", "create", "close", "open", "post",
	"drain", "data", "emfile", "fork",
};
static unsigned int op_skip;

static void parse_skip(void)
{
	const char *s = getenv("SWNIC_FUZZ_SKIP");

	for (int i = 0; s && i < OP_NUM; i++) {
		const char *p = strstr(s, op_names[i]);
		size_t n = strlen(op_names[i]);

		/* Whole words of a comma- or space-separated list. */
		while (p && ((p > s && p[-1] != ',' && p[-1] != ' ') ||
			     (p[n] && p[n] != ',' && p[n] != ' ')))
			p = strstr(p + 1, op_names[i]);
		if (p)
			op_skip |= 1U << i;
	}
}

static void fuzz_step(struct fz *f)
{
	static const uint8_t weight[OP_NUM] = {
		[OP_IOCTL] = 36, [OP_EPIOCTL] = 12, [OP_MMAP] = 8,
		[OP_UNMAP] = 4, [OP_CREATE] = 10, [OP_CLOSE] = 5,
		[OP_OPEN] = 2, [OP_POST] = 13, [OP_DRAIN] = 6, [OP_DATA] = 2,
		[OP_EMFILE] = 1, [OP_FORK] = 1,
	};
	unsigned int w = fz_below(&f->r, 100), op = 0;

	while (op < OP_NUM - 1 && w >= weight[op])
		w -= weight[op++];
	if (op_skip & (1U << op))
		return;
	fz_trace("step %s", op_names[op]);
	switch (op) {
	case OP_IOCTL:
		op_ioctl(f, K_DOM);
		break;
	case OP_EPIOCTL:
		op_ioctl(f, K_EP);
		break;
	case OP_MMAP:
		op_mmap(f);
		break;
	case OP_UNMAP:
		op_unmap(f);
		break;
	case OP_CREATE:
		op_create(f);
		break;
	case OP_CLOSE:
		op_close(f);
		break;
	case OP_OPEN:
		op_open(f);
		break;
	case OP_POST:
		op_post(f);
		break;
	case OP_DRAIN:
		op_drain(f);
		break;
	case OP_DATA:
		op_data(f);
		break;
	case OP_EMFILE:
		op_emfile(f);
		break;
	default:
		if (!f->forked && fz_chance(&f->r, 20))
			op_fork(f);
		break;
	}
}

/* Close every object, in a random order, and unmap what op_mmap() made. */
static void close_all(struct fz *f)
{
	for (int n = 0; n < MAX_OBJS; n++) {
		int i = (n * 37 + (int)fz_below(&f->r, MAX_OBJS)) % MAX_OBJS;

		if (f->obj[i].kind != K_FOREIGN)
			destroy_obj(f, i);
	}
	for (int n = 0; n < MAX_OBJS; n++)
		if (f->obj[n].kind != K_FOREIGN)
			destroy_obj(f, n);
	for (int m = 0; m < MAX_MAPS; m++)
		if (f->map[m].p) {
			munmap(f->map[m].p, f->map[m].len);
			f->map[m].p = NULL;
		}
}

static int setup_memory(struct fz *f)
{
	uint8_t *p;

	f->page = sysconf(_SC_PAGESIZE);
	p = mmap(NULL, 4 * f->page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	f->argmap = p;
	f->guard = p + 2 * f->page;
	f->ro = p + 3 * f->page;
	memset(p, 0, 4 * f->page);
	if (mprotect(f->guard, f->page, PROT_NONE) ||
	    mprotect(f->ro, f->page, PROT_READ))
		return -errno;
	p = mmap(NULL, BIG_SIZE + f->page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	f->big = p;
	if (mprotect(p + BIG_SIZE, f->page, PROT_NONE))
		return -errno;
	p = mmap(NULL, AVBUF_N * 8 + f->page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	f->avbuf = (uint64_t *)p;
	if (mprotect(p + AVBUF_N * 8, f->page, PROT_NONE))
		return -errno;
	for (int i = 0; i < NDATA; i++) {
		p = mmap(NULL, DATA_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		memset(p, 0x5a, DATA_SIZE);
		f->data[i] = p;
		f->data_mapped[i] = true;
	}
	return 0;
}

static void add_foreign(struct fz *f, int fd)
{
	int i = new_obj(f);

	if (fd < 0 || i < 0)
		return;
	f->obj[i].kind = K_FOREIGN;
	f->obj[i].fd = fd;
}

FIXTURE(fuzz)
{
	struct fz_gauges start;
	unsigned long taint;
};

FIXTURE_SETUP(fuzz)
{
	if (access(DEV_PATH, R_OK | W_OK))
		SETUP_SKIP("no %s (module not loaded)", DEV_PATH);
	ASSERT_EQ(0, fz_gauges_read(&self->start));
	self->taint = fz_tainted();
	init_cmds();
}

FIXTURE_TEARDOWN(fuzz)
{
}

/* The whole run: @iters operations, then everything closed and checked. */
static void fuzz_run(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fuzz) *self, const char *name,
		     unsigned long iters)
{
	const char *every = getenv("SWNIC_FUZZ_CHECK_EVERY");
	unsigned long check_every = every ? strtoul(every, NULL, 0) : 0, i;
	struct fz_gauges now;
	int pipefd[2];
	double t0 = fz_now();

	fz_announce(name, iters);
	fz_catch_faults();
	parse_skip();
	F = calloc(1, sizeof(*F));
	ASSERT_NE(NULL, F);
	fz_rng_init(&F->r, fz_seed(), fz_salt(name));
	ASSERT_EQ(0, setup_memory(F));
	for (i = 0; i < MAX_OBJS; i++)
		F->obj[i].fd = -1;
	F->slot = -1;
	add_foreign(F, open("/dev/null", O_RDWR | O_CLOEXEC));
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	add_foreign(F, pipefd[0]);
	add_foreign(F, pipefd[1]);
	add_foreign(F, eventfd(0, EFD_CLOEXEC));
	ASSERT_LE(0, op_open(F));

	for (i = 0; i < iters; i++) {
		fuzz_step(F);
		if (!check_every || (i + 1) % check_every)
			continue;
		/* Reducing a leak: everything closed, nothing may be left. */
		close_all(F);
		if (fz_gauges_settle(&self->start, &now, 2000)) {
			printf("# leak after operations %lu..%lu\n",
			       i + 1 - check_every, i);
			break;
		}
		op_open(F);
	}

	printf("# %lu operations in %.1f s, %lu completions reaped\n", iters,
	       fz_now() - t0, F->cqe_seen);
	t0 = fz_now();
	close_all(F);

	EXPECT_EQ(0, fz_report(&F->st, "fuzz_ioctl"));
	/* Over the wire, requests to silent peers end at peer_timeout_ms. */
	EXPECT_EQ(0, fz_gauges_settle(&self->start, &now, wire ? 20000 : 10000))
		TH_LOG("objects left behind after everything was closed");
	printf("# closed and settled in %.1f s\n", fz_now() - t0);
	EXPECT_EQ(0, fz_new_taint(self->taint))
		TH_LOG("the kernel was tainted (WARN/Oops/lockup): see dmesg");
	if (_metadata->passed == 0)
		TH_LOG("replay: SWNIC_FUZZ_SEED=%" PRIu64 " SWNIC_FUZZ_ITERS=%lu",
		       fz_seed(), iters);
	free(F);
}

TEST_F_TIMEOUT(fuzz, ioctl_mmap, 900)
{
	fuzz_run(_metadata, self, "fuzz.ioctl_mmap", fz_iters(DEFAULT_ITERS));
}

/*
 * The same on a device bound to a netdev (lo, in a network namespace of
 * this test's own: nothing leaves it), where ADDR6 makes and looks up
 * names and work requests may go over the wire.
 */
TEST_F_TIMEOUT(fuzz, ioctl_mmap_wire, 900)
{
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, sys_run("ip link set lo up && swnic dev add " WIRE_DEV
			     " netdev lo >/dev/null"));
	/* The device is ours: the gauges start with it. */
	ASSERT_EQ(0, fz_gauges_read(&self->start));
	dev_path = "/dev/" WIRE_DEV;
	wire = true;
	fuzz_run(_metadata, self, "fuzz.ioctl_mmap_wire",
		 fz_iters(DEFAULT_ITERS / 4));
	EXPECT_EQ(0, sys_run("swnic dev del " WIRE_DEV " force >/dev/null"));
}

TEST_HARNESS_MAIN
