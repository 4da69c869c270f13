// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink dumps of domains and MRs against the kernel's truth (the
 * ioctls' answers, getpid(), the comm we set): complete across many
 * messages, each object once, flagged NLM_F_DUMP_INTR when the set
 * changes in the middle, and limited to one's own objects for users
 * without CAP_NET_ADMIN.
 */
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "mr_util.h"
#include "nl_util.h"
#include "sys_util.h"

#define MANY_DOMAINS	400
#define MANY_MRS	10000
#define BUF_PAGES	16

static uint32_t domain_id(int fd)
{
	struct swnic_query_device q = { .size = sizeof(q) };

	if (ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &q))
		return 0;
	return q.domain_id;
}

/* A DOMAIN_GET doit of @id into @t (copied out of the reply). */
struct domain_msg {
	bool seen;
	uint32_t pid, uid, mrs, auth_key;
	uint64_t pinned;
	char comm[32];
};

static int domain_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct domain_msg *d = data;
	struct nlc_attrs t;

	nlc_attrs(nlh, &t);
	d->seen = true;
	d->pid = nlc_u32(&t, SWNIC_A_DOMAIN_PID);
	d->uid = nlc_u32(&t, SWNIC_A_DOMAIN_UID);
	d->mrs = nlc_u32(&t, SWNIC_A_DOMAIN_MRS);
	d->auth_key = nlc_u32(&t, SWNIC_A_DOMAIN_AUTH_KEY);
	d->pinned = nlc_u64(&t, SWNIC_A_DOMAIN_PINNED);
	if (t.tb[SWNIC_A_DOMAIN_COMM])
		snprintf(d->comm, sizeof(d->comm), "%s",
			 mnl_attr_get_str(t.tb[SWNIC_A_DOMAIN_COMM]));
	return MNL_CB_OK;
}

static int get_domain(struct nlc *c, uint32_t id, struct domain_msg *d)
{
	struct nlc_reply r = { .cb = domain_msg_cb, .data = d };
	struct nlmsghdr *nlh = nlc_msg(c, SWNIC_NL_CMD_DOMAIN_GET, 0);

	memset(d, 0, sizeof(*d));
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
	return nlc_talk(c, nlh, &r);
}

FIXTURE(dump)
{
	struct nlc *c;
	int fd;
	uint32_t id;
	char *buf;
};

FIXTURE_SETUP(dump)
{
	int ret;

	self->c = malloc(sizeof(*self->c));
	ASSERT_NE(NULL, self->c);
	ret = nlc_open(self->c);
	if (ret == -ENOENT)
		SETUP_SKIP("no swnic netlink family (module not loaded)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, prctl(PR_SET_NAME, "nl_dump_test"));
	self->fd = mr_open();
	ASSERT_LE(0, self->fd);
	self->id = domain_id(self->fd);
	ASSERT_NE(0, self->id);
	self->buf = mmap(NULL, BUF_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(dump)
{
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, BUF_PAGES * PAGE);
	if (self->fd >= 0)
		close(self->fd);
	if (self->c)
		nlc_close(self->c);
	free(self->c);
}

TEST_F(dump, domain_shows_pid_comm_uid_and_mr_counts)
{
	struct swnic_mr_query q;
	struct domain_msg d;
	uint32_t h[3];
	int i;

	ASSERT_EQ(0, get_domain(self->c, self->id, &d));
	ASSERT_TRUE(d.seen);
	EXPECT_EQ(getpid(), d.pid);
	EXPECT_EQ(getuid(), d.uid);
	EXPECT_STREQ("nl_dump_test", d.comm);
	EXPECT_EQ(SWNIC_AUTH_KEY_DEFAULT, d.auth_key);
	EXPECT_EQ(0, d.mrs);
	EXPECT_EQ(0, d.pinned);

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mr_reg(self->fd, self->buf + i * 2 * PAGE,
				    2 * PAGE, RW_ALL, 0, NULL, &h[i]));
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	ASSERT_EQ(0, get_domain(self->c, self->id, &d));
	EXPECT_EQ(3, d.mrs);
	EXPECT_EQ(q.domain.pinned_bytes, d.pinned);
	EXPECT_EQ(6 * PAGE, d.pinned);

	ASSERT_EQ(0, mr_dereg(self->fd, h[1]));
	ASSERT_EQ(0, mr_counters(self->fd, &q));
	ASSERT_EQ(0, get_domain(self->c, self->id, &d));
	EXPECT_EQ(2, d.mrs);
	EXPECT_EQ(q.domain.pinned_bytes, d.pinned);
}

/*
 * The pid is the reader's pid namespace's number of the opener: a child in
 * a pid namespace of its own sees 0 for our domain (we have no number
 * there, and our host pid is not its business), and 1 for the domain it
 * opened itself, which we see under its pid here.
 */
TEST_F(dump, domain_pid_is_the_readers_namespaces)
{
	uint32_t res[3] = { 0 };
	int p[2], q[2], st;
	pid_t child;
	char byte;

	if (unshare(CLONE_NEWPID))
		SKIP(return, "no pid namespace: %s", strerror(errno));
	child = sys_fork_pidns(p, q);	/* pid 1 of the new namespace */
	ASSERT_LE(0, child);
	if (!child) {
		struct nlc c;
		struct domain_msg d;
		int fd = mr_open();

		/* [0] our domain's pid there, [1] its own, [2] its id */
		if (fd < 0 || nlc_open(&c) ||
		    get_domain(&c, self->id, &d) || !d.seen)
			_exit(2);
		res[0] = d.pid;
		res[2] = domain_id(fd);
		if (get_domain(&c, res[2], &d) || !d.seen)
			_exit(2);
		res[1] = d.pid;
		if (write(p[1], res, sizeof(res)) != sizeof(res))
			_exit(2);
		/* Keep the domain open until the test has looked. */
		_exit(read(q[0], &byte, 1) == 0 ? 0 : 3);
	}
	ASSERT_EQ(sizeof(res), read(p[0], res, sizeof(res)));
	EXPECT_EQ(0, res[0]) TH_LOG("our domain's pid, read in its namespace");
	EXPECT_EQ(1, res[1]) TH_LOG("its own domain's pid, read there");
	{
		struct domain_msg d;

		ASSERT_EQ(0, get_domain(self->c, res[2], &d));
		EXPECT_TRUE(d.seen);
		EXPECT_EQ(child, d.pid) TH_LOG("its domain's pid, read here");
	}
	close(p[0]);
	close(q[1]);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("%#x", st);
}

/* Collects the ids of a domain dump. */
struct ids {
	uint32_t *seen;		/* per id: times seen */
	uint32_t max;
	uint32_t other;		/* ids beyond @max */
};

static int ids_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ids *ids = data;
	struct nlc_attrs t;
	uint32_t id;

	nlc_attrs(nlh, &t);
	id = nlc_u32(&t, SWNIC_A_DOMAIN_ID);
	if (id < ids->max)
		ids->seen[id]++;
	else
		ids->other++;
	return MNL_CB_OK;
}

TEST_F(dump, many_domains_across_messages)
{
	struct nlc_reply r = { .cb = ids_cb };
	struct rlimit rl = { MANY_DOMAINS + 64, MANY_DOMAINS + 64 };
	int fds[MANY_DOMAINS], i, twice = 0, missing = 0;
	uint32_t did[MANY_DOMAINS], maxid = 0;
	struct nlmsghdr *nlh;
	struct ids ids = { 0 };

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (i = 0; i < MANY_DOMAINS; i++) {
		fds[i] = mr_open();
		ASSERT_LE(0, fds[i]) TH_LOG("domain %d: %s", i, strerror(errno));
		did[i] = domain_id(fds[i]);
		if (did[i] > maxid)
			maxid = did[i];
	}
	ids.max = maxid + 1;
	ids.seen = calloc(ids.max, sizeof(*ids.seen));
	ASSERT_NE(NULL, ids.seen);
	r.data = &ids;

	nlh = nlc_msg(self->c, SWNIC_NL_CMD_DOMAIN_GET, NLM_F_DUMP);
	mnl_attr_put_strz(nlh, SWNIC_A_DEV_NAME, "swnic0");
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	for (i = 0; i < MANY_DOMAINS; i++) {
		missing += !ids.seen[did[i]];
		twice += ids.seen[did[i]] > 1;
	}
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, twice);
	EXPECT_FALSE(r.intr);
	EXPECT_LT(1, r.nparts) TH_LOG("the dump fit one message");
	for (i = 0; i < MANY_DOMAINS; i++)
		close(fds[i]);
	free(ids.seen);
}

/* Checks an MR dump of one domain against what MR_REG answered. */
struct mrs {
	uint32_t n;			/* MRs registered */
	uint64_t *key;			/* by handle */
	uint64_t *addr;
	uint32_t *seen;
	uint32_t max_handle;
	uint32_t bad;			/* messages that did not match */
	uint32_t domain;
};

static int mrs_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mrs *m = data;
	struct nlc_attrs t;
	uint32_t h;

	nlc_attrs(nlh, &t);
	h = nlc_u32(&t, SWNIC_A_MR_HANDLE);
	if (h > m->max_handle || nlc_u32(&t, SWNIC_A_DOMAIN_ID) != m->domain ||
	    nlc_u64(&t, SWNIC_A_MR_KEY) != m->key[h] ||
	    nlc_u64(&t, SWNIC_A_MR_ADDR) != m->addr[h] ||
	    nlc_u64(&t, SWNIC_A_MR_LENGTH) != PAGE ||
	    nlc_u32(&t, SWNIC_A_MR_ACCESS) != RW_ALL ||
	    nlc_u32(&t, SWNIC_A_MR_STATE) != SWNIC_MR_STATE_VALID ||
	    nlc_u64(&t, SWNIC_A_MR_PINNED_PAGES) != 1 ||
	    nlc_u32(&t, SWNIC_A_MR_AUTH_KEY) != SWNIC_AUTH_KEY_DEFAULT) {
		m->bad++;
		return MNL_CB_OK;
	}
	m->seen[h]++;
	return MNL_CB_OK;
}

static int mrs_register(int fd, char *buf, struct mrs *m, uint32_t n)
{
	uint64_t key;
	uint32_t h;
	int ret;

	for (; m->n < n; m->n++) {
		char *addr = buf + (m->n % BUF_PAGES) * PAGE;

		ret = mr_reg(fd, addr, PAGE, RW_ALL, 0, &key, &h);
		if (ret)
			return ret;
		if (h > m->max_handle)
			return -ERANGE;
		m->key[h] = key;
		m->addr[h] = (uintptr_t)addr;
	}
	return 0;
}

static int mrs_alloc(struct mrs *m, uint32_t max_handle, uint32_t domain)
{
	memset(m, 0, sizeof(*m));
	m->max_handle = max_handle;
	m->domain = domain;
	m->key = calloc(max_handle + 1, sizeof(*m->key));
	m->addr = calloc(max_handle + 1, sizeof(*m->addr));
	m->seen = calloc(max_handle + 1, sizeof(*m->seen));
	return m->key && m->addr && m->seen ? 0 : -ENOMEM;
}

static void mrs_free(struct mrs *m)
{
	free(m->key);
	free(m->addr);
	free(m->seen);
}

static uint32_t mrs_count_seen(const struct mrs *m, uint32_t *twice)
{
	uint32_t h, n = 0;

	*twice = 0;
	for (h = 0; h <= m->max_handle; h++) {
		n += !!m->seen[h];
		*twice += m->seen[h] > 1;
	}
	return n;
}

TEST_F(dump, ten_thousand_mrs_complete_and_consistent)
{
	struct nlc_reply r = { .cb = mrs_cb };
	struct nlmsghdr *nlh;
	struct domain_msg d;
	uint32_t twice;
	struct mrs m;

	ASSERT_EQ(0, mrs_alloc(&m, 4 * MANY_MRS, self->id));
	ASSERT_EQ(0, mrs_register(self->fd, self->buf, &m, MANY_MRS));
	r.data = &m;

	nlh = nlc_msg(self->c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, self->id);
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	EXPECT_EQ(MANY_MRS, r.nmsgs);
	EXPECT_EQ(0, m.bad);
	EXPECT_EQ(MANY_MRS, mrs_count_seen(&m, &twice));
	EXPECT_EQ(0, twice);
	EXPECT_FALSE(r.intr);
	EXPECT_LT(10, r.nparts);

	ASSERT_EQ(0, get_domain(self->c, self->id, &d));
	EXPECT_EQ(MANY_MRS, d.mrs);
	EXPECT_EQ(MANY_MRS * PAGE, d.pinned);
	mrs_free(&m);
}

TEST_F(dump, mr_dump_flags_a_concurrent_change)
{
	struct nlc_reply r = { .cb = mrs_cb };
	struct nlmsghdr *nlh;
	uint32_t twice;
	struct mrs m;

	ASSERT_EQ(0, mrs_alloc(&m, 40000, self->id));
	ASSERT_EQ(0, mrs_register(self->fd, self->buf, &m, 2000));
	r.data = &m;

	/* The first part is made at send time; change the set, read on. */
	nlh = nlc_msg(self->c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, self->id);
	ASSERT_EQ(0, nlc_send(self->c, nlh));
	ASSERT_EQ(0, mrs_register(self->fd, self->buf, &m, 2001));
	nlc_recv(self->c, nlh->nlmsg_seq, &r);
	ASSERT_EQ(0, r.error);
	EXPECT_TRUE(r.intr) TH_LOG("a change during the dump was not flagged");

	/* Unchanged, the same dump is consistent and complete. */
	memset(&r, 0, sizeof(r));
	memset(m.seen, 0, (m.max_handle + 1) * sizeof(*m.seen));
	r.cb = mrs_cb;
	r.data = &m;
	nlh = nlc_msg(self->c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, self->id);
	ASSERT_EQ(0, nlc_talk(self->c, nlh, &r));
	EXPECT_FALSE(r.intr);
	EXPECT_EQ(2001, mrs_count_seen(&m, &twice));
	EXPECT_EQ(0, twice);
	EXPECT_EQ(0, m.bad);
	mrs_free(&m);
}

TEST_F(dump, mr_dump_of_unknown_domain)
{
	struct nlc_reply r = { 0 };
	struct nlmsghdr *nlh;

	nlh = nlc_msg(self->c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, 0x7fffffff);
	ASSERT_EQ(-ENOENT, nlc_talk(self->c, nlh, &r));
	EXPECT_TRUE(strstr(r.msg, "no domain") != NULL);
}

/* ---- what a user without CAP_NET_ADMIN sees ------------------------------ */

struct seen {
	uint32_t id;			/* a domain to look for */
	uint32_t found;			/* messages naming it */
	uint32_t others;		/* messages naming other uids */
	uint32_t uid;
};

static int seen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct seen *s = data;
	struct nlc_attrs t;

	nlc_attrs(nlh, &t);
	if (nlc_u32(&t, SWNIC_A_DOMAIN_ID) == s->id)
		s->found++;
	if (t.tb[SWNIC_A_DOMAIN_UID] && nlc_u32(&t, SWNIC_A_DOMAIN_UID) != s->uid)
		s->others++;
	return MNL_CB_OK;
}

/* In a child as nobody: exit 0 if root's domain @id is invisible. */
static int nobody_looks(uint32_t id, char *buf)
{
	struct nlc *c = malloc(sizeof(*c));
	struct seen s = { .id = id, .uid = 65534 };
	struct nlc_reply r = { .cb = seen_cb, .data = &s };
	struct nlmsghdr *nlh;
	uint32_t mine;
	int fd;

	if (!c || setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 100;
	if (nlc_open(c))
		return 1;
	nlh = nlc_msg(c, SWNIC_NL_CMD_DOMAIN_GET, NLM_F_DUMP);
	if (nlc_talk(c, nlh, &r) || s.found || s.others)
		return 2;
	memset(&r, 0, sizeof(r));
	r.cb = seen_cb;
	r.data = &s;
	nlh = nlc_msg(c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	if (nlc_talk(c, nlh, &r) || s.found || s.others)
		return 3;
	memset(&r, 0, sizeof(r));
	nlh = nlc_msg(c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
	if (nlc_talk(c, nlh, &r) != -ENOENT)
		return 4;
	memset(&r, 0, sizeof(r));
	nlh = nlc_msg(c, SWNIC_NL_CMD_STAT_GET, 0);
	mnl_attr_put_u32(nlh, SWNIC_A_DOMAIN_ID, id);
	if (nlc_talk(c, nlh, &r) != -ENOENT)
		return 5;

	/* Its own domain and MR it sees. */
	fd = mr_open();
	if (fd < 0)
		return 6;
	mine = domain_id(fd);
	if (mr_reg(fd, buf, PAGE, RW_ALL, 0, NULL, NULL))
		return 7;
	s.id = mine;
	memset(&r, 0, sizeof(r));
	r.cb = seen_cb;
	r.data = &s;
	nlh = nlc_msg(c, SWNIC_NL_CMD_MR_GET, NLM_F_DUMP);
	if (nlc_talk(c, nlh, &r) || s.found != 1 || s.others)
		return 8;
	return 0;
}

TEST_F(dump, unprivileged_sees_only_its_own)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, mr_reg(self->fd, self->buf, PAGE, RW_ALL, 0, NULL, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(nobody_looks(self->id, self->buf + PAGE));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 100)
		SKIP(return, "cannot switch to uid 65534");
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed",
						 WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
