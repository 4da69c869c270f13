// SPDX-License-Identifier: GPL-2.0
/*
 * Several auth keys per endpoint (SWNIC_IOCTL_EP_AUTH_KEY, the SQE's
 * key_index; libfabric's FI_AV_AUTH_KEY), enforced by the kernel at the
 * ring level: an endpoint gets a key only as a domain would (a member of
 * its service, enabled, with room); a send or RMA names one of the
 * sender's keys by index, and reaches only targets that hold that key.
 * No provider involved: raw ioctls and rings, as a hostile user has them.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "gauge_util.h"
#include "mr_util.h"
#include "nl_util.h"
#include "swnic_rings.h"

#define UID_A	4721
#define UID_B	4722
#define KEY_X	7401		/* members: A and B */
#define KEY_Y	7402		/* members: A only */
#define KEY_Z	7403		/* members: A and B, one domain at a time */

static int svc_new(struct nlc *c, uint32_t key, const uint32_t *uids,
		   int nuids, uint32_t max_domains)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_NEW, 0);
	struct nlattr *nest;
	int i;

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_FLAGS, 0);
	if (max_domains)
		mnl_attr_put_u32(nlh, SWNIC_A_SVC_MAX_DOMAINS, max_domains);
	nest = mnl_attr_nest_start(nlh, SWNIC_A_SVC_MEMBERS);
	for (i = 0; i < nuids; i++)
		mnl_attr_put_u32(nlh, SWNIC_A_MEMBER_UID, uids[i]);
	mnl_attr_nest_end(nlh, nest);
	return nlc_talk(c, nlh, &r);
}

static int svc_del(struct nlc *c, uint32_t key)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_SVC_DEL, 0);

	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	mnl_attr_put_u32(nlh, SWNIC_A_SVC_AUTH_KEY, key);
	return nlc_talk(c, nlh, &r);
}

/* Run with @euid as the effective uid (capabilities drop meanwhile). */
static int as_uid(uid_t euid)
{
	return setresuid(-1, euid, -1) ? -errno : 0;
}

static void as_root(void)
{
	if (setresuid(-1, 0, -1))
		abort();
}

static int open_as(uid_t euid)
{
	int fd, err;

	if (as_uid(euid))
		return -errno;
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	err = errno;
	as_root();
	return fd < 0 ? -err : fd;
}

/* SWNIC_IOCTL_EP_AUTH_KEY on @ep as @euid (0: root). Return: index or -errno. */
static int ep_key_as(struct t_ep *ep, uid_t euid, uint32_t key, uint32_t flags)
{
	struct swnic_ep_auth_key k = {
		.size = sizeof(k), .flags = flags, .auth_key = key,
	};
	int ret;

	if (euid && as_uid(euid))
		return -EPERM;
	ret = ioctl(ep->fd, SWNIC_IOCTL_EP_AUTH_KEY, &k) ? -errno : (int)k.index;
	if (euid)
		as_root();
	return ret;
}

/* Post @s on @a, ring, and return the sender's completion in @c. */
static int post_one(struct t_ep *a, struct t_cq *acq, struct swnic_sqe *s,
		    struct swnic_cqe *c)
{
	int ret = t_ring_push(&a->sq, s);

	if (!ret)
		ret = t_doorbell(a, NULL);
	if (!ret)
		ret = t_cq_wait(acq, c, 5000);
	return ret;
}

FIXTURE(ak)
{
	struct gauges start;
	struct nlc *c;
	int da, db;			/* domains of UID_A, UID_B: no key */
	struct t_cq ca, cb;
	struct t_ep a, b;
};

FIXTURE_SETUP(ak)
{
	uint32_t ab[] = { UID_A, UID_B }, a[] = { UID_A };
	struct swnic_query_device q = { .size = sizeof(q) };
	int ret;

	self->da = self->db = -1;
	self->a.fd = self->b.fd = -1;
	self->c = malloc(sizeof(*self->c));
	ASSERT_NE(NULL, self->c);
	ret = nlc_open(self->c);
	if (ret == -ENOENT) {
		free(self->c);
		self->c = NULL;
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	}
	ASSERT_EQ(0, ret);
	svc_del(self->c, KEY_X);
	svc_del(self->c, KEY_Y);
	svc_del(self->c, KEY_Z);
	ASSERT_EQ(0, gauges_read(&self->start));
	ASSERT_EQ(0, svc_new(self->c, KEY_X, ab, 2, 0));
	ASSERT_EQ(0, svc_new(self->c, KEY_Y, a, 1, 0));
	ASSERT_EQ(0, svc_new(self->c, KEY_Z, ab, 2, 1));

	self->da = open_as(UID_A);
	self->db = open_as(UID_B);
	ASSERT_LE(0, self->da);
	ASSERT_LE(0, self->db);
	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	ASSERT_TRUE(q.features & SWNIC_FEAT_EP_AUTH_KEYS);
	/*
	 * Unless the default service is open: then these tests prove less.
	 * SETUP_SKIP() runs no teardown: delete the services made above
	 * first (the device keeps them), once no domain of ours is open.
	 */
	if (dom_auth_key(self->da) || dom_auth_key(self->db)) {
		close(self->da);
		close(self->db);
		svc_del(self->c, KEY_X);
		svc_del(self->c, KEY_Y);
		svc_del(self->c, KEY_Z);
		SETUP_SKIP("the default service is open");
	}
	ASSERT_EQ(0, t_cq_create(self->da, 64, &self->ca));
	ASSERT_EQ(0, t_cq_create(self->db, 64, &self->cb));
	ASSERT_EQ(0, t_ep_create(self->da, &self->ca, &self->ca,
				 SWNIC_EP_F_DB_SYSCALL, 0, 16, &self->a));
	ASSERT_EQ(0, t_ep_create(self->db, &self->cb, &self->cb,
				 SWNIC_EP_F_DB_SYSCALL, 0, 16, &self->b));
}

FIXTURE_TEARDOWN(ak)
{
	struct gauges now;

	t_ep_destroy(&self->a);
	t_ep_destroy(&self->b);
	if (self->ca.ring.map) {
		munmap(self->ca.ring.map, self->ca.ring.size);
		close(self->ca.fd);
	}
	if (self->cb.ring.map) {
		munmap(self->cb.ring.map, self->cb.ring.size);
		close(self->cb.fd);
	}
	if (self->da >= 0)
		close(self->da);
	if (self->db >= 0)
		close(self->db);
	if (self->c) {
		/* No endpoint holds them any more: deletable. */
		EXPECT_EQ(0, svc_del(self->c, KEY_X));
		EXPECT_EQ(0, svc_del(self->c, KEY_Y));
		EXPECT_EQ(0, svc_del(self->c, KEY_Z));
		nlc_close(self->c);
		free(self->c);
		ASSERT_EQ(0, gauges_settle(&self->start, &now));
		EXPECT_TRUE(gauges_equal(&self->start, &now));
	}
}

/* A key both hold: sends flow with it, and only with it. */
TEST_F(ak, shared_key_flows)
{
	char byte = 42, in[8] = "";
	struct swnic_rqe r = t_recv(in, sizeof(in), 77);
	struct swnic_sqe s;
	struct swnic_cqe c;

	/* Different users, no domain key: refused as before. */
	s = t_send(&byte, 1, &self->b, 1);
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_EQ(EACCES, c.err);

	ASSERT_EQ(1, ep_key_as(&self->a, UID_A, KEY_X, 0));
	ASSERT_EQ(1, ep_key_as(&self->b, UID_B, KEY_X, 0));
	/* Again: the same index. */
	EXPECT_EQ(1, ep_key_as(&self->a, UID_A, KEY_X, 0));

	ASSERT_EQ(0, t_ring_push(&self->b.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->b, NULL));
	s = t_send(&byte, 1, &self->b, 2);
	s.key_index = 1;
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %d", c.err);
	ASSERT_EQ(0, t_cq_wait(&self->cb, &c, 5000));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(77, c.context);
	EXPECT_EQ(42, in[0]);

	/* Back the other way, with B's index of the key. */
	s = t_send(&byte, 1, &self->a, 3);
	s.key_index = 1;
	ASSERT_EQ(0, post_one(&self->b, &self->cb, &s, &c));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %d", c.err);

	/* The domain's key (0) still does not reach B. */
	s = t_send(&byte, 1, &self->b, 4);
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_EQ(EACCES, c.err);
}

/*
 * A domain's own key reaches an endpoint that holds it as one of its own,
 * and only such an endpoint.
 */
TEST_F(ak, domain_key_reaches_endpoint_key)
{
	struct swnic_auth_key k = { .size = sizeof(k), .auth_key = KEY_X };
	struct t_cq cc = { 0 };
	struct t_ep c = { .fd = -1 };
	struct swnic_sqe s;
	struct swnic_cqe e;
	char byte = 3;
	int dc = open_as(UID_A);

	ASSERT_LE(0, dc);
	ASSERT_EQ(0, as_uid(UID_A));
	ASSERT_EQ(0, ioctl(dc, SWNIC_IOCTL_AUTH_KEY, &k));
	as_root();
	ASSERT_EQ(KEY_X, k.auth_key);
	ASSERT_EQ(0, t_cq_create(dc, 64, &cc));
	ASSERT_EQ(0, t_ep_create(dc, &cc, &cc, SWNIC_EP_F_DB_SYSCALL, 0, 16,
				 &c));
	/* The domain's key taken again by its endpoint: index 0. */
	EXPECT_EQ(0, ep_key_as(&c, UID_A, KEY_X, 0));

	s = t_send(&byte, 1, &self->b, 1);
	ASSERT_EQ(0, post_one(&c, &cc, &s, &e));
	EXPECT_EQ(EACCES, e.err);		/* B holds no KEY_X yet */
	ASSERT_EQ(1, ep_key_as(&self->b, UID_B, KEY_X, 0));
	s.context = 2;
	ASSERT_EQ(0, post_one(&c, &cc, &s, &e));
	EXPECT_FALSE(e.flags & SWNIC_CQE_ERROR) TH_LOG("err %d", e.err);
	/* A (same user, no key) is not reached with KEY_X. */
	s = t_send(&byte, 1, &self->a, 3);
	ASSERT_EQ(0, post_one(&c, &cc, &s, &e));
	EXPECT_EQ(EACCES, e.err);

	t_ep_destroy(&c);
	munmap(cc.ring.map, cc.ring.size);
	close(cc.fd);
	close(dc);
}

/* Naming a key index the sender does not hold: ENOKEY, nothing sent. */
TEST_F(ak, sender_without_key_is_refused)
{
	uint16_t idx[] = { 1, 2, SWNIC_EP_AUTH_KEYS_MAX,
			   SWNIC_EP_AUTH_KEYS_MAX + 1, 0xffff };
	struct swnic_sqe s;
	struct swnic_cqe c;
	char byte = 1;
	size_t i;

	ASSERT_EQ(1, ep_key_as(&self->b, UID_B, KEY_X, 0));
	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		s = t_send(&byte, 1, &self->b, 10 + i);
		s.key_index = idx[i];
		ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
		EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
		EXPECT_EQ(ENOKEY, c.err) TH_LOG("index %u", idx[i]);
	}
	/* One key held: index 2 is still none. */
	ASSERT_EQ(1, ep_key_as(&self->a, UID_A, KEY_X, 0));
	s = t_send(&byte, 1, &self->b, 20);
	s.key_index = 2;
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_EQ(ENOKEY, c.err);
	/* No message got to B. */
	EXPECT_EQ(0, t_cq_pop(&self->cb, &c));
}

/* A key the target does not hold: EACCES, for sends and RMA. */
TEST_F(ak, target_without_key_is_refused)
{
	struct swnic_sqe s;
	struct swnic_cqe c;
	uint64_t key = 0;
	char byte = 1, *mem;

	ASSERT_EQ(1, ep_key_as(&self->a, UID_A, KEY_X, 0));
	ASSERT_EQ(2, ep_key_as(&self->a, UID_A, KEY_Y, 0));
	ASSERT_EQ(1, ep_key_as(&self->b, UID_B, KEY_X, 0));

	s = t_send(&byte, 1, &self->b, 1);
	s.key_index = 2;			/* KEY_Y: B does not hold it */
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(EACCES, c.err);

	/* RMA into B's region: with KEY_X yes, with KEY_Y no. */
	mem = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	strcpy(mem, "B's");
	ASSERT_EQ(0, mr_reg(self->db, mem, PAGE,
			    SWNIC_MR_ACCESS_REMOTE_WRITE |
			    SWNIC_MR_ACCESS_REMOTE_READ, 0, &key, NULL));
	s = t_send("A's", 4, &self->b, 2);
	s.opcode = SWNIC_OP_WRITE;
	s.rkey = key;
	s.raddr = 0;
	s.key_index = 2;
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_EQ(EACCES, c.err);
	EXPECT_STREQ("B's", mem);
	s.key_index = 0;			/* the domain's: none */
	s.context = 3;
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_TRUE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_STREQ("B's", mem);
	s.key_index = 1;
	s.context = 4;
	ASSERT_EQ(0, post_one(&self->a, &self->ca, &s, &c));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %d", c.err);
	EXPECT_STREQ("A's", mem);
	munmap(mem, PAGE);
}

/* SWNIC_IOCTL_MR_REG of one page of @mem with @n peers (REG_PEERS). */
static int reg_peers(int fd, void *mem, const struct swnic_mr_peer *peers,
		     uint32_t n, uint64_t *key)
{
	struct swnic_mr_reg r = {
		.size = sizeof(r), .flags = SWNIC_MR_REG_PEERS,
		.addr = (uintptr_t)mem, .length = PAGE, .npeers = n,
		.access = SWNIC_MR_ACCESS_REMOTE_WRITE |
			  SWNIC_MR_ACCESS_REMOTE_READ | SWNIC_MR_ACCESS_WRITE,
	};

	memcpy(r.peers, peers, n * sizeof(*peers));
	if (ioctl(fd, SWNIC_IOCTL_MR_REG, &r))
		return -errno;
	*key = r.key;
	return 0;
}

/* An RMA of A's into B's @key with A's key index 1; the CQE's err. */
static int rma_as(struct t_ep *a, struct t_cq *acq, struct t_ep *b,
		  uint8_t op, uint64_t key, void *buf, uint64_t ctx)
{
	struct swnic_sqe s = t_send(buf, 4, b, ctx);
	struct swnic_cqe c;
	int ret;

	s.opcode = op;
	s.rkey = key;
	s.raddr = 0;
	s.key_index = 1;
	ret = post_one(a, acq, &s, &c);
	if (ret)
		return -1000 + ret;
	return c.flags & SWNIC_CQE_ERROR ? (int)c.err : 0;
}

/*
 * An MR limited to some peers (SWNIC_MR_REG_PEERS, FI_DIRECTED_RECV with
 * FI_AV_AUTH_KEY): only an access that came with a listed key (the key
 * the initiator named, not the one B's MRs are under) and, if the entry
 * names one, from the listed endpoint reaches it, writes and reads alike.
 */
TEST_F(ak, mr_limited_to_peers)
{
	struct t_ep a2 = { .fd = -1 };
	struct swnic_mr_peer p[2];
	uint64_t key;
	char *mem, out[8];
	struct {
		const char *what;
		struct swnic_mr_peer p[2];
		uint32_t n;
		int want_a, want_a2;
	} cases[] = {
		{ "key X", { { .auth_key = KEY_X } }, 1, 0, 0 },
		{ "the MR's key (none)", { { .auth_key = 0 } }, 1,
		  EACCES, EACCES },
		{ "key Y", { { .auth_key = KEY_Y } }, 1, EACCES, EACCES },
		{ "key X from A", { { .auth_key = KEY_X,
				      .flags = SWNIC_MR_PEER_ADDR,
				      .addr = self->a.addr,
				      .port = self->a.port } }, 1, 0, EACCES },
		{ "key X from A's port, any address",
		  { { .auth_key = KEY_X, .flags = SWNIC_MR_PEER_ADDR,
		      .port = self->a.port } }, 1, 0, EACCES },
		{ "key X from A's port, another address",
		  { { .auth_key = KEY_X, .flags = SWNIC_MR_PEER_ADDR,
		      .addr = htonl(0x0a000001), .port = self->a.port } }, 1,
		  EACCES, EACCES },
		{ "key Y from A, key X from A2",
		  { { .auth_key = KEY_Y, .flags = SWNIC_MR_PEER_ADDR,
		      .addr = self->a.addr, .port = self->a.port },
		    { .auth_key = KEY_X, .flags = SWNIC_MR_PEER_ADDR,
		      .port = 0 } }, 2, EACCES, 0 },
	};
	size_t i;

	ASSERT_EQ(1, ep_key_as(&self->a, UID_A, KEY_X, 0));
	ASSERT_EQ(2, ep_key_as(&self->a, UID_A, KEY_Y, 0));
	ASSERT_EQ(1, ep_key_as(&self->b, UID_B, KEY_X, 0));
	ASSERT_EQ(0, t_ep_create(self->da, &self->ca, &self->ca,
				 SWNIC_EP_F_DB_SYSCALL, 0, 16, &a2));
	ASSERT_EQ(1, ep_key_as(&a2, UID_A, KEY_X, 0));
	/* The last case names A2 by its port. */
	cases[6].p[1].port = a2.port;

	mem = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(p, cases[i].p, sizeof(p));
		strcpy(mem, "B's");
		ASSERT_EQ(0, reg_peers(self->db, mem, p, cases[i].n, &key))
			TH_LOG("%s", cases[i].what);
		EXPECT_EQ(cases[i].want_a,
			  rma_as(&self->a, &self->ca, &self->b, SWNIC_OP_WRITE,
				 key, "A's", 2 * i))
			TH_LOG("%s: A writes", cases[i].what);
		EXPECT_STREQ(cases[i].want_a ? "B's" : "A's", mem);
		strcpy(mem, "B's");
		memset(out, 0, sizeof(out));
		EXPECT_EQ(cases[i].want_a,
			  rma_as(&self->a, &self->ca, &self->b, SWNIC_OP_READ,
				 key, out, 2 * i + 1))
			TH_LOG("%s: A reads", cases[i].what);
		EXPECT_STREQ(cases[i].want_a ? "" : "B's", out);
		EXPECT_EQ(cases[i].want_a2,
			  rma_as(&a2, &self->ca, &self->b, SWNIC_OP_WRITE,
				 key, "A2!", 100 + i))
			TH_LOG("%s: A2 writes", cases[i].what);
		EXPECT_STREQ(cases[i].want_a2 ? "B's" : "A2!", mem);
	}
	t_ep_destroy(&a2);
	munmap(mem, PAGE);
}

/*
 * The REG_PEERS ABI: announced, all-or-nothing, the old size unchanged;
 * MR_ACCESS is a domain's access (its key, no endpoint); the owner's own
 * accesses are not limited.
 */
TEST_F(ak, mr_peers_abi)
{
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_mr_peer any = { 0 }, from_a = {
		.flags = SWNIC_MR_PEER_ADDR, .addr = self->a.addr,
		.port = self->a.port,
	}, x = { .auth_key = KEY_X };
	struct swnic_mr_reg r;
	uint64_t key;
	char *mem, buf[4];
	int dc = open_as(UID_B);	/* B's user: reaches B's MRs by MR_ACCESS */
	uint32_t idb = mr_domain_id(self->db);

	ASSERT_LE(0, dc);
	ASSERT_EQ(0, ioctl(self->db, SWNIC_IOCTL_QUERY_DEVICE, &q));
	EXPECT_TRUE(q.features & SWNIC_FEAT_MR_PEERS);
	mem = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);

#define REG_RESET() (r = (struct swnic_mr_reg) {			\
		.size = sizeof(r), .flags = SWNIC_MR_REG_PEERS,		\
		.addr = (uintptr_t)mem, .length = PAGE, .npeers = 1,	\
		.access = SWNIC_MR_ACCESS_REMOTE_READ })
#define REG_TRY() (ioctl(self->db, SWNIC_IOCTL_MR_REG, &r) ? -errno : 0)
	REG_RESET();
	EXPECT_EQ(0, REG_TRY());
	REG_RESET();
	r.npeers = 0;
	EXPECT_EQ(-EINVAL, REG_TRY());
	REG_RESET();
	r.npeers = SWNIC_MR_PEERS_MAX + 1;
	EXPECT_EQ(-EINVAL, REG_TRY());
	REG_RESET();
	r.peers[0].flags = 1U << 1;
	EXPECT_EQ(-EOPNOTSUPP, REG_TRY());
	REG_RESET();
	r.peers[0].__reserved = 1;
	EXPECT_EQ(-EINVAL, REG_TRY());
	REG_RESET();
	r.__reserved2 = 1;
	EXPECT_EQ(-EINVAL, REG_TRY());
	REG_RESET();
	r.peers[1].auth_key = KEY_X;		/* beyond npeers */
	EXPECT_EQ(-EINVAL, REG_TRY());
	REG_RESET();
	r.flags = 0;				/* peers without the flag */
	EXPECT_EQ(-EINVAL, REG_TRY());
	REG_RESET();
	r.flags = 0;
	r.npeers = 0;
	r.peers[0].auth_key = KEY_X;
	EXPECT_EQ(-EINVAL, REG_TRY());
	/* The first released size: no peers, as before. */
	REG_RESET();
	r.flags = 0;
	r.npeers = 0;
	r.size = offsetof(struct swnic_mr_reg, npeers);
	EXPECT_EQ(56, r.size);
	EXPECT_EQ(0, REG_TRY());
	/* ... and REG_PEERS needs the peers that size cannot carry. */
	REG_RESET();
	r.size = offsetof(struct swnic_mr_reg, npeers);
	EXPECT_EQ(-EINVAL, REG_TRY());
#undef REG_RESET
#undef REG_TRY

	/* MR_ACCESS from a domain without a key, of B's user. */
	strcpy(mem, "abc");
	ASSERT_EQ(0, reg_peers(self->db, mem, &any, 1, &key));
	EXPECT_EQ(0, mr_access(dc, idb, 0, SWNIC_MR_ACCESS_REMOTE_READ, key,
			       0, 0, buf, sizeof(buf)));
	EXPECT_STREQ("abc", buf);
	ASSERT_EQ(0, reg_peers(self->db, mem, &x, 1, &key));
	EXPECT_EQ(-EACCES, mr_access(dc, idb, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				     key, 0, 0, buf, sizeof(buf)));
	/* An entry with an address: a domain's access has none. */
	ASSERT_EQ(0, reg_peers(self->db, mem, &from_a, 1, &key));
	EXPECT_EQ(-EACCES, mr_access(dc, idb, 0, SWNIC_MR_ACCESS_REMOTE_READ,
				     key, 0, 0, buf, sizeof(buf)));
	/* The owner's own access is not a peer's. */
	EXPECT_EQ(0, mr_access(self->db, 0, SWNIC_MR_ACCESS_F_LOCAL,
			       SWNIC_MR_ACCESS_WRITE, key, 0,
			       (uintptr_t)mem, buf, sizeof(buf)));
	close(dc);
	munmap(mem, PAGE);
}

/* An endpoint gets a key only as a domain would. */
TEST_F(ak, key_taken_as_a_domain_takes_it)
{
	struct swnic_ep_auth_key k = { .size = sizeof(k), .auth_key = KEY_X };
	int status;
	pid_t pid;

	/* Not a member of KEY_Y. */
	EXPECT_EQ(-EPERM, ep_key_as(&self->b, UID_B, KEY_Y, 0));
	/* No such service, no key, unknown flags. */
	EXPECT_EQ(-ENOKEY, ep_key_as(&self->b, UID_B, 7499, 0));
	EXPECT_EQ(-EINVAL, ep_key_as(&self->b, UID_B, 0, 0));
	EXPECT_EQ(-EOPNOTSUPP, ep_key_as(&self->b, UID_B, KEY_X, 1));
	/* Room for one domain in KEY_Z: A's endpoint takes it, B's not. */
	EXPECT_EQ(1, ep_key_as(&self->a, UID_A, KEY_Z, 0));
	EXPECT_EQ(-EDQUOT, ep_key_as(&self->b, UID_B, KEY_Z, 0));
	/* A service in use by an endpoint is not deleted. */
	EXPECT_EQ(-EBUSY, svc_del(self->c, KEY_Z));

	/* A forked child (not the domain's process) gets nothing. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setresuid(UID_B, UID_B, UID_B))
			_exit(100);
		_exit(ioctl(self->b.fd, SWNIC_IOCTL_EP_AUTH_KEY, &k) &&
		      errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The child's attempt gave B nothing: index 1 is still free. */
	EXPECT_EQ(1, ep_key_as(&self->b, UID_B, KEY_X, 0));
}

/* The ioctl's struct follows the extensible-struct contract. */
TEST_F(ak, ioctl_contract)
{
	struct {
		struct swnic_ep_auth_key k;
		uint64_t tail;
	} big = { 0 };

	big.k.auth_key = KEY_X;
	big.k.size = 4;				/* shorter than released */
	EXPECT_EQ(-1, ioctl(self->a.fd, SWNIC_IOCTL_EP_AUTH_KEY, &big));
	EXPECT_EQ(EINVAL, errno);
	big.k.size = sizeof(big);
	big.tail = 1;
	EXPECT_EQ(-1, ioctl(self->a.fd, SWNIC_IOCTL_EP_AUTH_KEY, &big));
	EXPECT_EQ(E2BIG, errno);
	/* An endpoint command on the domain's fd. */
	big.tail = 0;
	big.k.size = sizeof(big.k);
	EXPECT_EQ(-1, ioctl(self->da, SWNIC_IOCTL_EP_AUTH_KEY, &big));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->a.fd, SWNIC_IOCTL_EP_AUTH_KEY, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* Longer with a zero tail: fine (as root: an administrator). */
	big.k.size = sizeof(big);
	EXPECT_EQ(0, ioctl(self->a.fd, SWNIC_IOCTL_EP_AUTH_KEY, &big));
	EXPECT_EQ(1, big.k.index);
	EXPECT_EQ(0, big.tail);
}

/* What close_race_sender() sends to, and what its sends completed with. */
struct close_race {
	pthread_mutex_t lock;
	struct t_ep *a;
	struct t_cq *ca;
	struct t_ep target;	/* valid while @have */
	bool have, stop;
	int sent, refused, eacces, other, last_other;
};

/* Send with key index 1 to the target until it is refused, over and over. */
static void *close_race_sender(void *arg)
{
	struct close_race *cr = arg;
	char byte = 1;

	for (;;) {
		struct swnic_sqe s;
		struct swnic_cqe c;
		struct t_ep to;
		int err;

		pthread_mutex_lock(&cr->lock);
		if (cr->stop) {
			pthread_mutex_unlock(&cr->lock);
			break;
		}
		to = cr->target;
		if (!cr->have) {
			pthread_mutex_unlock(&cr->lock);
			sched_yield();
			continue;
		}
		pthread_mutex_unlock(&cr->lock);
		s = t_send(&byte, 1, &to, 1);
		s.key_index = 1;
		if (post_one(cr->a, cr->ca, &s, &c)) {
			err = -1;
		} else {
			err = c.flags & SWNIC_CQE_ERROR ? c.err : 0;
		}
		pthread_mutex_lock(&cr->lock);
		cr->sent++;
		if (err == ECONNREFUSED) {
			cr->refused++;
			cr->have = false;
		} else if (err == EACCES) {
			cr->eacces++;
		} else if (err && err != EAGAIN) {
			cr->other++;
			cr->last_other = err;
		}
		pthread_mutex_unlock(&cr->lock);
	}
	return NULL;
}

/*
 * A target endpoint closed while a peer sends to it with one of its own
 * keys is refused (ECONNREFUSED), never reported as another auth key
 * (EACCES): its keys are dropped as it closes, after senders that looked
 * it up before it was unpublished may still check them. Bounded: a fixed
 * number of close/create rounds, each closing the target after a random
 * few microseconds of traffic. The window is narrow (a sender must be
 * held between its lookup and its key check for the whole release), so
 * a pass on a kernel without the fix is likely too; it guards the
 * contract.
 */
TEST_F(ak, closing_target_is_refused_not_eacces)
{
	struct close_race cr = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.a = &self->a, .ca = &self->ca,
	};
	pthread_t th;
	int i;

	ASSERT_EQ(1, ep_key_as(&self->a, UID_A, KEY_X, 0));
	t_ep_destroy(&self->b);
	srand(getpid());
	ASSERT_EQ(0, pthread_create(&th, NULL, close_race_sender, &cr));
	for (i = 0; i < 300; i++) {
		struct t_ep b;
		int waited;

		ASSERT_EQ(0, t_ep_create(self->db, &self->cb, &self->cb,
					 SWNIC_EP_F_DB_SYSCALL, 0, 16, &b));
		ASSERT_EQ(1, ep_key_as(&b, 0, KEY_X, 0));
		pthread_mutex_lock(&cr.lock);
		cr.target = b;
		cr.have = true;
		pthread_mutex_unlock(&cr.lock);
		usleep(rand() % 300);
		t_ep_destroy(&b);
		/* The sender learns it is gone before the port is reused. */
		for (waited = 0; waited < 5000; waited++) {
			bool have;

			pthread_mutex_lock(&cr.lock);
			have = cr.have;
			pthread_mutex_unlock(&cr.lock);
			if (!have)
				break;
			usleep(1000);
		}
		ASSERT_GT(5000, waited) TH_LOG("never refused after its close");
	}
	pthread_mutex_lock(&cr.lock);
	cr.stop = true;
	pthread_mutex_unlock(&cr.lock);
	pthread_join(th, NULL);
	TH_LOG("%d sends, %d refused, %d EACCES", cr.sent, cr.refused,
	       cr.eacces);
	EXPECT_EQ(0, cr.eacces);
	EXPECT_EQ(0, cr.other) TH_LOG("last: %d", cr.last_other);
	EXPECT_EQ(300, cr.refused);
}

/* At most SWNIC_EP_AUTH_KEYS_MAX keys; an administrator may take any. */
TEST_F(ak, key_limit)
{
	uint32_t none[1] = { 0 };
	int i;

	for (i = 0; i < SWNIC_EP_AUTH_KEYS_MAX; i++) {
		svc_del(self->c, 7500 + i);
		ASSERT_EQ(0, svc_new(self->c, 7500 + i, none, 0, 0));
		EXPECT_EQ(i + 1, ep_key_as(&self->a, 0, 7500 + i, 0));
	}
	EXPECT_EQ(-ENOSPC, ep_key_as(&self->a, 0, KEY_X, 0));
	/* Closing the endpoint gives the services back. */
	t_ep_destroy(&self->a);
	for (i = 0; i < SWNIC_EP_AUTH_KEYS_MAX; i++)
		EXPECT_EQ(0, svc_del(self->c, 7500 + i));
}

/*
 * A receive learns the key a message came with, as the receiver's own
 * index of it (struct swnic_cqe.key_index), whether a receive was posted
 * or the message waited; SWNIC_RQE_KEY takes only messages with one key.
 */
TEST_F(ak, receive_reports_key)
{
	char byte = 5, in[8] = "", in2[8] = "";
	struct swnic_rqe r;
	struct swnic_sqe s;
	struct swnic_cqe c;
	struct swnic_query_device q = { .size = sizeof(q) };

	ASSERT_EQ(0, ioctl(self->da, SWNIC_IOCTL_QUERY_DEVICE, &q));
	ASSERT_TRUE(q.features & SWNIC_FEAT_RECV_KEY);
	/* A holds KEY_Y as 1 and KEY_X as 2; B holds KEY_X as 1. */
	ASSERT_EQ(1, ep_key_as(&self->a, UID_A, KEY_Y, 0));
	ASSERT_EQ(2, ep_key_as(&self->a, UID_A, KEY_X, 0));
	ASSERT_EQ(1, ep_key_as(&self->b, UID_B, KEY_X, 0));

	/* A receive posted first. */
	r = t_recv(in, sizeof(in), 10);
	ASSERT_EQ(0, t_ring_push(&self->a.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	s = t_send(&byte, 1, &self->a, 1);
	s.key_index = 1;
	ASSERT_EQ(0, post_one(&self->b, &self->cb, &s, &c));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %d", c.err);
	ASSERT_EQ(0, t_cq_wait(&self->ca, &c, 5000));
	EXPECT_EQ(10, c.context);
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR);
	EXPECT_EQ(2, c.key_index);
	EXPECT_EQ(self->b.port, c.src_port);

	/*
	 * Unexpected: a receive for KEY_Y (1) does not take it, one for
	 * KEY_X (2) does.
	 */
	s = t_send(&byte, 1, &self->a, 2);
	s.key_index = 1;
	ASSERT_EQ(0, post_one(&self->b, &self->cb, &s, &c));
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %d", c.err);
	r = t_recv(in, sizeof(in), 11);
	r.flags = SWNIC_RQE_KEY;
	r.key_index = 1;
	ASSERT_EQ(0, t_ring_push(&self->a.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	EXPECT_EQ(-ETIMEDOUT, t_cq_wait(&self->ca, &c, 100));
	r = t_recv(in2, sizeof(in2), 12);
	r.flags = SWNIC_RQE_KEY | SWNIC_RQE_DIRECTED;
	r.key_index = 2;
	r.src_addr = self->b.addr;
	r.src_port = self->b.port;
	ASSERT_EQ(0, t_ring_push(&self->a.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	ASSERT_EQ(0, t_cq_wait(&self->ca, &c, 5000));
	EXPECT_EQ(12, c.context);
	EXPECT_FALSE(c.flags & SWNIC_CQE_ERROR) TH_LOG("err %d", c.err);
	EXPECT_EQ(2, c.key_index);
	EXPECT_EQ(5, in2[0]);

	/* A key index without SWNIC_RQE_KEY, or beyond any: EINVAL. */
	r = t_recv(in, sizeof(in), 13);
	r.key_index = 1;
	ASSERT_EQ(0, t_ring_push(&self->a.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	ASSERT_EQ(0, t_cq_wait(&self->ca, &c, 5000));
	EXPECT_EQ(13, c.context);
	EXPECT_EQ(EINVAL, c.err);
	r = t_recv(in, sizeof(in), 14);
	r.flags = SWNIC_RQE_KEY;
	r.key_index = SWNIC_EP_AUTH_KEYS_MAX + 1;
	ASSERT_EQ(0, t_ring_push(&self->a.rq, &r));
	ASSERT_EQ(0, t_doorbell(&self->a, NULL));
	ASSERT_EQ(0, t_cq_wait(&self->ca, &c, 5000));
	EXPECT_EQ(14, c.context);
	EXPECT_EQ(EINVAL, c.err);
}

TEST_HARNESS_MAIN
