// SPDX-License-Identifier: GPL-2.0
/*
 * Shared (named) address vectors of the swnic provider (FI_SHARED_AV,
 * SWNIC_FEAT_SHARED_AV): a creator's TABLE indices and MAP addresses mean
 * the same in an opener (FI_READ) of another process, which sees the
 * creator's later inserts and removes, cannot insert, and sends through
 * them; names are private to the user and the auth key; the AV lives
 * while any opener holds it; name collisions, bad names and the kernel's
 * checks of the raw ioctls.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "prov_util.h"

FIXTURE(sav)
{
	struct prov_ctx ctx;
	int have;
};

FIXTURE_SETUP(sav)
{
	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&self->ctx, NULL));
	/* The module of this tree offers it: a kernel without it fails. */
	self->have = prov_feature(self->ctx.domain, SWNIC_FEAT_SHARED_AV);
	ASSERT_TRUE(self->have);
}

FIXTURE_TEARDOWN(sav)
{
	prov_close(&self->ctx);
}

static struct sockaddr_in lo(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	return sin;
}

static int open_named(struct fid_domain *dom, const char *name,
		      enum fi_av_type type, uint64_t flags, size_t count,
		      struct fid_av **av)
{
	struct fi_av_attr attr = {
		.type = type, .flags = flags, .name = name, .count = count,
	};

	return fi_av_open(dom, &attr, av, NULL);
}

/* The port of @fi_addr in @av, or -1. */
static int port_of(struct fid_av *av, fi_addr_t fi_addr)
{
	struct sockaddr_in sin;
	size_t len = sizeof(sin);

	if (fi_av_lookup(av, fi_addr, &sin, &len))
		return -1;
	return ntohs(sin.sin_port);
}

/* Wait (bounded: 20 s) for one byte on @fd. */
static int wait_byte(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, 20000) != 1)
		return -1;
	return read(fd, &c, 1) == 1 ? c : -1;
}

static void send_byte(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(99);
}

TEST_F(sav, getinfo_reports_it)
{
	struct fi_info *hints = prov_hints(), *info = NULL;

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_SHARED_AV;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_TRUE(info->caps & FI_SHARED_AV);
	EXPECT_TRUE(info->domain_attr->caps & FI_SHARED_AV);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/*
 * The child: a domain of its own, the AV with FI_READ; checks what the
 * parent inserted, that it cannot insert, then (after the parent changed
 * the AV) the change, then sends "shared" through index 1.
 */
static int child_reader(int rd, int wr)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct sockaddr_in sin = lo(4000);
	struct fi_cq_entry e;
	struct prov_ctx ctx;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t fa;
	ssize_t r;
	int i;

	if (wait_byte(rd) != 'i')
		return 10;
	if (prov_open(&ctx, NULL))
		return 11;
	if (open_named(ctx.domain, "prov-sav-xproc", FI_AV_TABLE, FI_READ, 0,
		       &av))
		return 12;
	if (port_of(av, 0) != 1000 || port_of(av, 2) != 1002)
		return 13;
	if (port_of(av, 3) != -1)
		return 14;
	if (fi_av_insert(av, &sin, 1, &fa, 0, NULL) != -FI_EACCES)
		return 15;
	fa = 0;
	if (fi_av_remove(av, &fa, 1, 0) != -FI_EACCES)
		return 16;
	send_byte(wr, 'r');
	if (wait_byte(rd) != 'c')
		return 17;
	/* The parent replaced 1 (port 1001) by its endpoint's address. */
	if (port_of(av, 1) <= 0 || port_of(av, 1) == 1001)
		return 18;
	if (port_of(av, 2) != -1)
		return 19;
	if (fi_endpoint(ctx.domain, ctx.info, &ep, NULL) ||
	    fi_cq_open(ctx.domain, &cq_attr, &cq, NULL) ||
	    fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) ||
	    fi_ep_bind(ep, &av->fid, 0) || fi_enable(ep))
		return 20;
	if (fi_send(ep, "shared", 7, NULL, 1, NULL))
		return 21;
	for (i = 0; i < 10000; i++) {
		r = fi_cq_read(cq, &e, 1);
		if (r == 1)
			break;
		if (r != -FI_EAGAIN)
			return 22;
		usleep(1000);
	}
	if (i == 10000)
		return 23;
	if (fi_close(&ep->fid) || fi_close(&av->fid) || fi_close(&cq->fid))
		return 24;
	prov_close(&ctx);
	return 0;
}

TEST_F(sav, table_seen_by_another_process)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct sockaddr_in sin[3] = { lo(1000), lo(1001), lo(1002) };
	int p2c[2], c2p[2], status;
	struct fi_cq_entry e;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t fa[3], one = 1, two = 2;
	char name[64], buf[8] = "";
	size_t len = sizeof(name);
	pid_t pid;
	int i;

	ASSERT_EQ(0, pipe(p2c));
	ASSERT_EQ(0, pipe(c2p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_reader(p2c[0], c2p[1]));

	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-xproc",
				FI_AV_TABLE, 0, 8, &av));
	ASSERT_EQ(3, fi_av_insert(av, sin, 3, fa, 0, NULL));
	EXPECT_EQ(0, fa[0]);
	EXPECT_EQ(2, fa[2]);
	send_byte(p2c[1], 'i');
	ASSERT_EQ('r', wait_byte(c2p[0]));

	/* Index 1 becomes this process's endpoint; 2 goes. */
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &ep, NULL));
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(ep));
	ASSERT_EQ(0, fi_getname(&ep->fid, name, &len));
	ASSERT_EQ(0, fi_av_remove(av, &one, 1, 0));
	ASSERT_EQ(0, fi_av_remove(av, &two, 1, 0));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &fa[1], 0, NULL));
	EXPECT_EQ(1, fa[1]);
	ASSERT_EQ(0, fi_recv(ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			     NULL));
	send_byte(p2c[1], 'c');

	for (i = 0; i < 20000; i++) {
		ssize_t r = fi_cq_read(cq, &e, 1);

		if (r == 1)
			break;
		ASSERT_EQ(-FI_EAGAIN, r);
		usleep(1000);
	}
	EXPECT_GT(20000, i);
	EXPECT_STREQ("shared", buf);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
}

/* MAP: the opener takes the creator's type and its addresses. */
TEST_F(sav, map_addresses_are_the_same)
{
	struct sockaddr_in sin[2] = { lo(3000), lo(3001) };
	struct fi_av_attr attr = {
		.flags = FI_READ, .name = "prov-sav-map",
	};
	struct prov_ctx other;
	struct fid_av *av, *rav;
	fi_addr_t fa[2];

	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-map", FI_AV_MAP,
				0, 16, &av));
	ASSERT_EQ(2, fi_av_insert(av, sin, 2, fa, 0, NULL));
	ASSERT_EQ(0, prov_open(&other, NULL));
	ASSERT_EQ(0, fi_av_open(other.domain, &attr, &rav, NULL));
	EXPECT_EQ(FI_AV_MAP, attr.type);
	EXPECT_NE(NULL, attr.map_addr);
	EXPECT_EQ(3000, port_of(rav, fa[0]));
	EXPECT_EQ(3001, port_of(rav, fa[1]));
	ASSERT_EQ(0, fi_av_remove(av, &fa[0], 1, 0));
	EXPECT_EQ(-1, port_of(rav, fa[0]));
	EXPECT_EQ(3001, port_of(rav, fa[1]));
	/* An opener asking for another type than the creator's. */
	attr.type = FI_AV_TABLE;
	EXPECT_EQ(-FI_EINVAL, fi_av_open(other.domain, &attr, &av, NULL));
	EXPECT_EQ(0, fi_close(&rav->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
	prov_close(&other);
}

TEST_F(sav, open_errors)
{
	char longname[80];
	struct fid_av *av, *av2;
	struct sockaddr_in sin[3] = { lo(1), lo(2), lo(3) };
	fi_addr_t fa[3];

	/* FI_READ needs a name, and an AV of that name. */
	EXPECT_EQ(-FI_EINVAL, open_named(self->ctx.domain, NULL, FI_AV_TABLE,
					 FI_READ, 0, &av));
	EXPECT_EQ(-FI_ENOENT, open_named(self->ctx.domain, "prov-sav-none",
					 FI_AV_TABLE, FI_READ, 0, &av));
	/* Bad names. */
	EXPECT_EQ(-FI_EINVAL, open_named(self->ctx.domain, "", FI_AV_TABLE,
					 0, 0, &av));
	EXPECT_EQ(-FI_EINVAL, open_named(self->ctx.domain, "a b",
					 FI_AV_TABLE, 0, 0, &av));
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	EXPECT_EQ(-FI_EINVAL, open_named(self->ctx.domain, longname,
					 FI_AV_TABLE, 0, 0, &av));
	longname[SWNIC_AV_NAME_MAX] = '\0';
	EXPECT_EQ(-FI_EINVAL, open_named(self->ctx.domain, longname,
					 FI_AV_TABLE, 0, 0, &av));
	longname[SWNIC_AV_NAME_MAX - 1] = '\0';	/* 63 bytes: the most */
	ASSERT_EQ(0, open_named(self->ctx.domain, longname, FI_AV_TABLE, 0,
				1, &av));
	EXPECT_EQ(0, fi_close(&av->fid));
	/* Too many entries. */
	EXPECT_EQ(-FI_EINVAL, open_named(self->ctx.domain, "prov-sav-big",
					 FI_AV_TABLE, 0,
					 SWNIC_AV_COUNT_MAX + 1, &av));
	/* One creator per name. */
	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-dup",
				FI_AV_TABLE, 0, 2, &av));
	EXPECT_EQ(-FI_EBUSY, open_named(self->ctx.domain, "prov-sav-dup",
					FI_AV_TABLE, 0, 2, &av2));
	/* A named AV holds its count, no more. */
	EXPECT_EQ(2, fi_av_insert(av, sin, 3, fa, 0, NULL));
	EXPECT_EQ(FI_ADDR_NOTAVAIL, fa[2]);
	/* Openers keep no ids. */
	EXPECT_EQ(-FI_EINVAL, open_named(self->ctx.domain, "prov-sav-dup",
					 FI_AV_TABLE,
					 FI_READ | FI_AV_USER_ID, 0, &av2));
	EXPECT_EQ(0, fi_close(&av->fid));
	/* Gone with its last holder: the name is free again. */
	EXPECT_EQ(-FI_ENOENT, open_named(self->ctx.domain, "prov-sav-dup",
					 FI_AV_TABLE, FI_READ, 0, &av2));
	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-dup",
				FI_AV_TABLE, 0, 2, &av));
	EXPECT_EQ(0, fi_close(&av->fid));
}

/* Closing in either order; the AV outlives its creator while opened. */
TEST_F(sav, close_orders)
{
	struct sockaddr_in sin = lo(5000);
	struct fid_av *av, *rav, *av2;
	fi_addr_t fa;

	/* The opener first: the creator goes on writing. */
	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-close",
				FI_AV_TABLE, 0, 4, &av));
	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-close",
				FI_AV_UNSPEC, FI_READ, 0, &rav));
	EXPECT_EQ(0, fi_close(&rav->fid));
	ASSERT_EQ(1, fi_av_insert(av, &sin, 1, &fa, 0, NULL));

	/* The creator first: the opener keeps the entries and the name. */
	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-close",
				FI_AV_UNSPEC, FI_READ, 0, &rav));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(5000, port_of(rav, fa));
	EXPECT_EQ(-FI_EBUSY, open_named(self->ctx.domain, "prov-sav-close",
					FI_AV_TABLE, 0, 4, &av2));
	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-close",
				FI_AV_UNSPEC, FI_READ, 0, &av2));
	EXPECT_EQ(5000, port_of(av2, fa));
	EXPECT_EQ(0, fi_close(&av2->fid));
	EXPECT_EQ(0, fi_close(&rav->fid));
	EXPECT_EQ(-FI_ENOENT, open_named(self->ctx.domain, "prov-sav-close",
					 FI_AV_UNSPEC, FI_READ, 0, &rav));
}

/* Another user neither opens nor sees the AV; its own name is its own. */
TEST_F(sav, other_user_cannot_open)
{
	struct sockaddr_in sin = lo(6000);
	struct fid_av *av;
	fi_addr_t fa;
	int status;
	pid_t pid;

	ASSERT_EQ(0, open_named(self->ctx.domain, "prov-sav-user",
				FI_AV_TABLE, 0, 4, &av));
	ASSERT_EQ(1, fi_av_insert(av, &sin, 1, &fa, 0, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct prov_ctx c;
		struct fid_av *o;

		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		if (prov_open(&c, NULL))
			_exit(101);
		if (open_named(c.domain, "prov-sav-user", FI_AV_TABLE,
			       FI_READ, 0, &o) != -FI_ENOENT)
			_exit(1);
		/* Its own AV of the same name, apart from root's. */
		if (open_named(c.domain, "prov-sav-user", FI_AV_TABLE, 0, 4,
			       &o))
			_exit(2);
		if (port_of(o, 0) != -1)
			_exit(3);
		fi_close(&o->fid);
		prov_close(&c);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(6000, port_of(av, fa));
	EXPECT_EQ(0, fi_close(&av->fid));
	if (WEXITSTATUS(status) == 100 || WEXITSTATUS(status) == 101)
		SKIP(return, "cannot open %s as nobody", PROV_DEV);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The raw ABI: the kernel checks what the provider would never send. */
TEST_F(sav, kernel_checks)
{
	struct swnic_av_open o = { .size = sizeof(o),
				   .flags = SWNIC_AV_OPEN_CREATE, .count = 4 };
	struct swnic_av_open r = { .size = sizeof(r) };
	struct swnic_av_write w = { .size = sizeof(w), .n = 1 };
	const struct swnic_av_table *t;
	uint64_t val;
	void *map;
	int fd;

	fd = open(PROV_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	strcpy((char *)o.name, "prov-sav-raw");
	ASSERT_EQ(0, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &o));
	ASSERT_LE(0, o.fd);
	strcpy((char *)r.name, "prov-sav-raw");
	ASSERT_EQ(0, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &r));
	EXPECT_EQ(4, r.count);
	w.entries = (uintptr_t)&val;

	/* Stray bits, an entry without VALID, out of the table. */
	val = SWNIC_AV_ENTRY_VALID | 1ULL << 50;
	EXPECT_EQ(-1, ioctl(o.fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(EINVAL, errno);
	val = 1234;
	EXPECT_EQ(-1, ioctl(o.fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(EINVAL, errno);
	val = SWNIC_AV_ENTRY_VALID | 1234;
	w.first = 4;
	EXPECT_EQ(-1, ioctl(o.fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(EINVAL, errno);
	w.first = 3;
	w.n = 2;
	EXPECT_EQ(-1, ioctl(o.fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(EINVAL, errno);
	w.first = UINT32_MAX;
	EXPECT_EQ(-1, ioctl(o.fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(EINVAL, errno);
	w.n = 1;
	w.first = 3;
	w.entries = 8;
	EXPECT_EQ(-1, ioctl(o.fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(EFAULT, errno);
	w.entries = (uintptr_t)&val;
	/* An opener's fd never writes. */
	EXPECT_EQ(-1, ioctl(r.fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(EPERM, errno);
	/* Domain commands are not AV commands, and the other way round. */
	EXPECT_EQ(-1, ioctl(o.fd, SWNIC_IOCTL_AV_OPEN, &r));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AV_WRITE, &w));
	EXPECT_EQ(ENOTTY, errno);
	ASSERT_EQ(0, ioctl(o.fd, SWNIC_IOCTL_AV_WRITE, &w));

	/* Read-only mappings only, of the whole table. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, o.mmap_size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, o.fd, 0));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, o.mmap_size * 2, PROT_READ,
				   MAP_SHARED, r.fd, 0));
	map = mmap(NULL, o.mmap_size, PROT_READ, MAP_SHARED, r.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_NE(0, mprotect(map, o.mmap_size, PROT_READ | PROT_WRITE));
	t = map;
	EXPECT_EQ(4, t->count);
	EXPECT_EQ(SWNIC_AV_ENTRY_VALID | 1234,
		  ((const uint64_t *)((const char *)t + t->entries_offset))[3]);
	EXPECT_EQ(0, t->seq & 1);
	EXPECT_NE(0, t->seq);

	/* Bad names and arguments. */
	r.fd = -1;
	memset(r.name, 'a', sizeof(r.name));
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &r));
	EXPECT_EQ(EINVAL, errno);
	strcpy((char *)r.name, "tab\there");
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &r));
	EXPECT_EQ(EINVAL, errno);
	memset(r.name, 0, sizeof(r.name));
	strcpy((char *)r.name, "x");
	r.name[5] = 'y';	/* bytes after the NUL */
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &r));
	EXPECT_EQ(EINVAL, errno);
	strcpy((char *)r.name, "prov-sav-raw");
	r.count = 3;		/* count without CREATE */
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &r));
	EXPECT_EQ(EINVAL, errno);
	o.count = 0;
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &o));
	EXPECT_EQ(EINVAL, errno);
	o.count = 4;
	o.flags = 1U << 7;
	EXPECT_EQ(-1, ioctl(fd, SWNIC_IOCTL_AV_OPEN, &o));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* The mapping holds the AV after every fd is closed. */
	close(o.fd);
	close(fd);
	EXPECT_EQ(SWNIC_AV_ENTRY_VALID | 1234,
		  ((const uint64_t *)((const char *)t + t->entries_offset))[3]);
	munmap(map, o.mmap_size);
}

/* A user has SWNIC_AV_SHARED_MAX names per device, no more. */
TEST_F(sav, per_user_limit)
{
	struct fid_av *av[SWNIC_AV_SHARED_MAX + 1];
	char name[32];
	int i;

	for (i = 0; i < SWNIC_AV_SHARED_MAX; i++) {
		snprintf(name, sizeof(name), "prov-sav-lim-%d", i);
		ASSERT_EQ(0, open_named(self->ctx.domain, name, FI_AV_TABLE,
					0, 1, &av[i]));
	}
	EXPECT_EQ(-FI_ENOSPC, open_named(self->ctx.domain, "prov-sav-lim-x",
					 FI_AV_TABLE, 0, 1, &av[i]));
	for (i = 0; i < SWNIC_AV_SHARED_MAX; i++)
		EXPECT_EQ(0, fi_close(&av[i]->fid));
}

TEST_HARNESS_MAIN
