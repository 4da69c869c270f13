// SPDX-License-Identifier: GPL-2.0
/*
 * Address vectors of the swnic provider (fi_av(3)): FI_AV_TABLE indices
 * and FI_AV_MAP handles, insert / insertsvc / insertsym / remove / lookup /
 * straddr, FI_SYNC_ERR, FI_AV_USER_ID, asynchronous inserts (FI_EVENT)
 * reported on a bound EQ, FI_ADDR_STR domains, unreachable addresses and
 * the attribute checks.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "kselftest_harness.h"
#include "prov_util.h"

#include <rdma/fi_collective.h>

FIXTURE(av)
{
	struct prov_ctx ctx;
	struct fid_av *av;
	int local;		/* swnic0 is a local-only device */
};

FIXTURE_SETUP(av)
{
	struct swnic_query_device q = { .size = sizeof(q) };

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&self->ctx, NULL));
	ASSERT_EQ(0, prov_ext(self->ctx.domain)->query_device(self->ctx.domain,
							      &q));
	self->local = !q.ifindex;
	self->av = NULL;
	if (!self->local)
		SKIP(return, "swnic0 is bound to a netdev");
}

FIXTURE_TEARDOWN(av)
{
	if (self->av)
		fi_close(&self->av->fid);
	prov_close(&self->ctx);
}

static int open_av(FIXTURE_DATA(av) *self, enum fi_av_type type,
		   uint64_t flags)
{
	struct fi_av_attr attr = { .type = type, .flags = flags };

	return fi_av_open(self->ctx.domain, &attr, &self->av, NULL);
}

static struct sockaddr_in lo(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	return sin;
}

TEST_F(av, table_indices)
{
	struct sockaddr_in sin[3] = { lo(1), lo(2), lo(3) }, out;
	fi_addr_t addr[3], more;
	size_t len;

	ASSERT_EQ(0, open_av(self, FI_AV_TABLE, 0));
	EXPECT_EQ(FI_CLASS_AV, self->av->fid.fclass);
	ASSERT_EQ(3, fi_av_insert(self->av, sin, 3, addr, 0, NULL));
	EXPECT_EQ(0, addr[0]);
	EXPECT_EQ(1, addr[1]);
	EXPECT_EQ(2, addr[2]);
	len = sizeof(out);
	ASSERT_EQ(0, fi_av_lookup(self->av, 1, &out, &len));
	EXPECT_EQ(sizeof(out), len);
	EXPECT_EQ(sin[1].sin_port, out.sin_port);
	EXPECT_EQ(sin[1].sin_addr.s_addr, out.sin_addr.s_addr);

	/* The freed index is reused first; indices continue otherwise. */
	ASSERT_EQ(0, fi_av_remove(self->av, &addr[1], 1, 0));
	len = sizeof(out);
	EXPECT_EQ(-FI_EINVAL, fi_av_lookup(self->av, 1, &out, &len));
	ASSERT_EQ(1, fi_av_insert(self->av, &sin[1], 1, &more, 0, NULL));
	EXPECT_EQ(1, more);
	ASSERT_EQ(1, fi_av_insert(self->av, &sin[1], 1, &more, 0, NULL));
	EXPECT_EQ(3, more);
	/* Without fi_addr the indices are still known. */
	ASSERT_EQ(1, fi_av_insert(self->av, &sin[0], 1, NULL, 0, NULL));
	len = sizeof(out);
	ASSERT_EQ(0, fi_av_lookup(self->av, 4, &out, &len));
	EXPECT_EQ(sin[0].sin_port, out.sin_port);
}

TEST_F(av, map_handles)
{
	struct sockaddr_in sin[2] = { lo(10), lo(11) }, out;
	fi_addr_t addr[2], again;
	size_t len = sizeof(out);

	ASSERT_EQ(0, open_av(self, FI_AV_MAP, 0));
	ASSERT_EQ(2, fi_av_insert(self->av, sin, 2, addr, 0, NULL));
	EXPECT_NE(addr[0], addr[1]);
	EXPECT_NE(FI_ADDR_NOTAVAIL, addr[0]);
	ASSERT_EQ(0, fi_av_lookup(self->av, addr[1], &out, &len));
	EXPECT_EQ(htons(11), out.sin_port);

	/* A duplicate maps to the same handle and counts. */
	ASSERT_EQ(1, fi_av_insert(self->av, &sin[0], 1, &again, 0, NULL));
	EXPECT_EQ(addr[0], again);
	ASSERT_EQ(0, fi_av_remove(self->av, &addr[0], 1, 0));
	len = sizeof(out);
	EXPECT_EQ(0, fi_av_lookup(self->av, addr[0], &out, &len));
	ASSERT_EQ(0, fi_av_remove(self->av, &addr[0], 1, 0));
	len = sizeof(out);
	EXPECT_EQ(-FI_EINVAL, fi_av_lookup(self->av, addr[0], &out, &len));
	EXPECT_EQ(-FI_EINVAL, fi_av_remove(self->av, &addr[0], 1, 0));
	/* Removed, then inserted again. */
	ASSERT_EQ(1, fi_av_insert(self->av, &sin[0], 1, &again, 0, NULL));
	len = sizeof(out);
	EXPECT_EQ(0, fi_av_lookup(self->av, again, &out, &len));
	/* Handles that were never given out name nothing. */
	len = sizeof(out);
	EXPECT_EQ(-FI_EINVAL, fi_av_lookup(self->av, FI_ADDR_NOTAVAIL, &out,
					   &len));
}

TEST_F(av, many_entries)
{
	struct sockaddr_in sin[1000], out;
	fi_addr_t addr[1000];
	size_t len;
	int i;

	ASSERT_EQ(0, open_av(self, FI_AV_MAP, 0));
	for (i = 0; i < 1000; i++)
		sin[i] = lo(20000 + i);
	ASSERT_EQ(1000, fi_av_insert(self->av, sin, 1000, addr, 0, NULL));
	for (i = 0; i < 1000; i += 97) {
		len = sizeof(out);
		ASSERT_EQ(0, fi_av_lookup(self->av, addr[i], &out, &len));
		EXPECT_EQ(htons(20000 + i), out.sin_port);
	}
	ASSERT_EQ(0, fi_av_remove(self->av, addr, 500, 0));
	len = sizeof(out);
	EXPECT_EQ(-FI_EINVAL, fi_av_lookup(self->av, addr[10], &out, &len));
	len = sizeof(out);
	EXPECT_EQ(0, fi_av_lookup(self->av, addr[900], &out, &len));
}

TEST_F(av, unreachable_and_invalid)
{
	struct sockaddr_in sin[3] = { lo(1), lo(2), lo(3) };
	int errs[3] = { -1, -1, -1 };
	fi_addr_t addr[3];

	ASSERT_EQ(0, open_av(self, FI_AV_TABLE, 0));
	sin[1].sin_addr.s_addr = inet_addr("192.0.2.7");
	sin[2].sin_family = AF_UNIX;
	ASSERT_EQ(1, fi_av_insert(self->av, sin, 3, addr, 0, NULL));
	EXPECT_EQ(0, addr[0]);
	EXPECT_EQ(FI_ADDR_NOTAVAIL, addr[1]);
	EXPECT_EQ(FI_ADDR_NOTAVAIL, addr[2]);
	/* FI_SYNC_ERR: the status of every address. */
	ASSERT_EQ(1, fi_av_insert(self->av, sin, 3, addr, FI_SYNC_ERR, errs));
	EXPECT_EQ(0, errs[0]);
	EXPECT_EQ(FI_EHOSTUNREACH, errs[1]);
	EXPECT_EQ(FI_EINVAL, errs[2]);
	EXPECT_EQ(-FI_EBADFLAGS, fi_av_insert(self->av, sin, 1, addr, FI_SEND,
					      NULL));
	EXPECT_EQ(-FI_EBADFLAGS, fi_av_remove(self->av, addr, 1, FI_SEND));
}

TEST_F(av, insertsvc)
{
	struct sockaddr_in out;
	fi_addr_t addr;
	size_t len;

	ASSERT_EQ(0, open_av(self, FI_AV_TABLE, 0));
	ASSERT_EQ(1, fi_av_insertsvc(self->av, "127.0.0.1", "7000", &addr, 0,
				     NULL));
	len = sizeof(out);
	ASSERT_EQ(0, fi_av_lookup(self->av, addr, &out, &len));
	EXPECT_EQ(htons(7000), out.sin_port);
	ASSERT_EQ(1, fi_av_insertsvc(self->av, "localhost", "7001", &addr, 0,
				     NULL));
	ASSERT_EQ(1, fi_av_insertsvc(self->av, "fi_swnic://127.0.0.1:7002",
				     NULL, &addr, 0, NULL));
	len = sizeof(out);
	ASSERT_EQ(0, fi_av_lookup(self->av, addr, &out, &len));
	EXPECT_EQ(htons(7002), out.sin_port);

	EXPECT_EQ(0, fi_av_insertsvc(self->av, "192.0.2.1", "1", &addr, 0,
				     NULL));
	EXPECT_EQ(FI_ADDR_NOTAVAIL, addr);
	EXPECT_EQ(0, fi_av_insertsvc(self->av, "127.0.0.1", "ssh", &addr, 0,
				     NULL));
	EXPECT_EQ(0, fi_av_insertsvc(self->av, "fi_swnic://127.0.0.1:1", "2",
				     &addr, 0, NULL));
	EXPECT_EQ(0, fi_av_insertsvc(self->av, "nosuchhost.invalid", "2",
				     &addr, 0, NULL));
}

TEST_F(av, insertsym)
{
	struct sockaddr_in out;
	fi_addr_t addr[6];
	size_t len;
	int i;

	ASSERT_EQ(0, open_av(self, FI_AV_TABLE, 0));
	ASSERT_EQ(3, fi_av_insertsym(self->av, "127.0.0.1", 1, "8000", 3, addr,
				     0, NULL));
	for (i = 0; i < 3; i++) {
		len = sizeof(out);
		ASSERT_EQ(0, fi_av_lookup(self->av, addr[i], &out, &len));
		EXPECT_EQ(htons(8000 + i), out.sin_port);
	}
	/* 127.0.0.2 is not this local device's address. */
	ASSERT_EQ(3, fi_av_insertsym(self->av, "127.0.0.1", 2, "9000", 3, addr,
				     0, NULL));
	EXPECT_NE(FI_ADDR_NOTAVAIL, addr[2]);
	EXPECT_EQ(FI_ADDR_NOTAVAIL, addr[3]);
	EXPECT_EQ(-FI_EINVAL, fi_av_insertsym(self->av, "127.0.0.1", 1,
					      "65535", 2, addr, 0, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_av_insertsym(self->av, "127.0.0.1", 0,
					      "1", 1, addr, 0, NULL));
}

TEST_F(av, straddr_and_truncation)
{
	struct sockaddr_in sin = lo(4321), out;
	char buf[64], tiny[8];
	fi_addr_t addr;
	size_t len;

	ASSERT_EQ(0, open_av(self, FI_AV_TABLE, 0));
	len = sizeof(buf);
	EXPECT_EQ((const char *)buf, fi_av_straddr(self->av, &sin, buf, &len));
	EXPECT_STREQ("fi_swnic://127.0.0.1:4321", buf);
	EXPECT_EQ(strlen(buf) + 1, len);
	len = sizeof(tiny);
	EXPECT_EQ((const char *)tiny, fi_av_straddr(self->av, &sin, tiny, &len));
	EXPECT_EQ(strlen("fi_swnic://127.0.0.1:4321") + 1, len);
	EXPECT_EQ(sizeof(tiny) - 1, strlen(tiny));

	ASSERT_EQ(1, fi_av_insert(self->av, &sin, 1, &addr, 0, NULL));
	len = 2;
	memset(&out, 0, sizeof(out));
	ASSERT_EQ(0, fi_av_lookup(self->av, addr, &out, &len));
	EXPECT_EQ(sizeof(out), len);
	EXPECT_EQ(AF_INET, out.sin_family);
	EXPECT_EQ(0, out.sin_port);	/* beyond the 2 bytes asked for */
}

TEST_F(av, user_id)
{
	struct sockaddr_in sin[2] = { lo(50), lo(51) };
	fi_addr_t addr[2] = { 1000, 2000 };
	struct fi_info *hints, *info;
	struct fid_domain *d;
	struct fi_av_attr attr = { .type = FI_AV_TABLE,
				   .flags = FI_AV_USER_ID };
	struct fid_av *av;

	ASSERT_EQ(0, open_av(self, FI_AV_TABLE, 0));
	EXPECT_EQ(-FI_EINVAL, fi_av_insert(self->av, sin, 2, NULL,
					   FI_AV_USER_ID, NULL));
	/* The ids go in, the AV's own addresses come out. */
	ASSERT_EQ(2, fi_av_insert(self->av, sin, 2, addr, FI_AV_USER_ID,
				  NULL));
	EXPECT_EQ(0, addr[0]);
	EXPECT_EQ(1, addr[1]);

	/* An FI_AV_USER_ID AV needs the domain capability. */
	hints = prov_hints();
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_FALSE(info->domain_attr->caps & FI_AV_USER_ID);
	ASSERT_EQ(0, fi_domain(self->ctx.fabric, info, &d, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_av_open(d, &attr, &av, NULL));
	EXPECT_EQ(0, fi_close(&d->fid));
	fi_freeinfo(info);
	hints->caps = FI_MSG | FI_AV_USER_ID;
	hints->domain_attr->caps = FI_AV_USER_ID;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_TRUE(info->domain_attr->caps & FI_AV_USER_ID);
	ASSERT_EQ(0, fi_domain(self->ctx.fabric, info, &d, NULL));
	ASSERT_EQ(0, fi_av_open(d, &attr, &av, NULL));
	addr[0] = 5;
	addr[1] = 6;
	EXPECT_EQ(2, fi_av_insert(av, sin, 2, addr, 0, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_av_insert(av, sin, 2, NULL, 0, NULL));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&d->fid));
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

#if SWNIC_FI_HAVE_2
/*
 * API 1.20 and later (libfabric 2.x): an AV opened with FI_AV_USER_ID takes
 * its ids from fi_av_set_user_id(); until then a completion's source is
 * FI_ADDR_NOTAVAIL. The per-insert flag is invalid on such an AV.
 */
TEST(av_user_id_set_later)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE,
				      .flags = FI_AV_USER_ID };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fid_ep *ep[2];
	struct fid_cq *cq[2];
	struct fid_av *av[2];
	struct fi_info *hints, *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fi_cq_tagged_entry e;
	fi_addr_t peer[2], src;
	char name[64], buf[8] = "hello", rbuf[8];
	size_t len;
	int i, n;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_NE(NULL, hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_SOURCE | FI_AV_USER_ID;
	hints->domain_attr->caps = FI_AV_USER_ID;
	ASSERT_EQ(0, fi_getinfo(FI_VERSION(FI_MAJOR_VERSION,
					   FI_MINOR_VERSION),
				NULL, NULL, 0, hints, &info));
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fab, NULL));
	ASSERT_EQ(0, fi_domain(fab, info, &dom, NULL));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, fi_endpoint(dom, info, &ep[i], NULL));
		ASSERT_EQ(0, fi_cq_open(dom, &cq_attr, &cq[i], NULL));
		ASSERT_EQ(0, fi_av_open(dom, &av_attr, &av[i], NULL));
		ASSERT_EQ(0, fi_ep_bind(ep[i], &cq[i]->fid,
					FI_TRANSMIT | FI_RECV));
		ASSERT_EQ(0, fi_ep_bind(ep[i], &av[i]->fid, 0));
		ASSERT_EQ(0, fi_enable(ep[i]));
	}
	for (i = 0; i < 2; i++) {
		len = sizeof(name);
		ASSERT_EQ(0, fi_getname(&ep[!i]->fid, name, &len));
		/* No ids go in: fi_addr is only an output. */
		ASSERT_EQ(1, fi_av_insert(av[i], name, 1, &peer[i], 0, NULL));
		EXPECT_EQ(-FI_EINVAL, fi_av_insert(av[i], name, 1, &src,
						   FI_AV_USER_ID, NULL));
	}
	EXPECT_EQ(-FI_EINVAL, fi_av_set_user_id(av[1], peer[1] + 7, 42, 0));
	EXPECT_EQ(-FI_ENOSYS, fi_av_set_user_id(av[1], peer[1], 42,
						FI_AUTH_KEY));

	/* Before the id is set, then after. */
	for (n = 0; n < 2; n++) {
		if (n)
			ASSERT_EQ(0, fi_av_set_user_id(av[1], peer[1], 42, 0));
		ASSERT_EQ(0, fi_recv(ep[1], rbuf, sizeof(rbuf), NULL,
				     FI_ADDR_UNSPEC, NULL));
		ASSERT_EQ(0, fi_send(ep[0], buf, sizeof(buf), NULL, peer[0],
				     NULL));
		for (i = 0; i < 10000; i++) {
			ssize_t r = fi_cq_readfrom(cq[1], &e, 1, &src);

			if (r == 1)
				break;
			ASSERT_EQ(-FI_EAGAIN, r);
			usleep(1000);
		}
		ASSERT_GT(10000, i);
		EXPECT_EQ(n ? 42 : FI_ADDR_NOTAVAIL, src);
		while (fi_cq_read(cq[0], &e, 1) == -FI_EAGAIN)
			usleep(1000);
	}
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, fi_close(&ep[i]->fid));
		EXPECT_EQ(0, fi_close(&av[i]->fid));
		EXPECT_EQ(0, fi_close(&cq[i]->fid));
	}
	EXPECT_EQ(0, fi_close(&dom->fid));
	EXPECT_EQ(0, fi_close(&fab->fid));
	fi_freeinfo(info);
	fi_freeinfo(hints);
}
#endif

SWNIC_DEPRECATED_BEGIN
TEST_F(av, async_inserts)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct sockaddr_in sin[3] = { lo(60), lo(61), lo(62) };
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_entry ev;
	fi_addr_t addr[3];
	struct fid_eq *eq;
	uint32_t event;

	ASSERT_EQ(0, open_av(self, FI_AV_TABLE, FI_EVENT));
	EXPECT_EQ(-FI_ENOEQ, fi_av_insert(self->av, sin, 3, addr, 0, NULL));
	ASSERT_EQ(0, fi_eq_open(self->ctx.fabric, &eq_attr, &eq, NULL));
	EXPECT_EQ(-FI_EBADFLAGS, fi_av_bind(self->av, &eq->fid, 1));
	ASSERT_EQ(0, fi_av_bind(self->av, &eq->fid, 0));
	EXPECT_EQ(-FI_EALREADY, fi_av_bind(self->av, &eq->fid, 0));
	sin[1].sin_addr.s_addr = inet_addr("198.51.100.1");
	ASSERT_EQ(0, fi_av_insert(self->av, sin, 3, addr, 0, (void *)0xabc));
	/* FI_SYNC_ERR belongs to synchronous AVs. */
	EXPECT_EQ(-FI_EINVAL, fi_av_insert(self->av, sin, 1, addr,
					   FI_SYNC_ERR, NULL));

	ASSERT_EQ(-FI_EAVAIL, fi_eq_sread(eq, &event, &ev, sizeof(ev), 1000,
					  0));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(eq, &err, 0));
	EXPECT_EQ(&self->av->fid, err.fid);
	EXPECT_EQ((void *)0xabc, err.context);
	EXPECT_EQ(1, err.data);
	EXPECT_EQ(FI_EHOSTUNREACH, err.err);
	ASSERT_EQ(sizeof(ev), fi_eq_sread(eq, &event, &ev, sizeof(ev), 1000,
					  0));
	EXPECT_EQ(FI_AV_COMPLETE, event);
	EXPECT_EQ(2, ev.data);
	EXPECT_EQ((void *)0xabc, ev.context);
	EXPECT_EQ(&self->av->fid, ev.fid);
	EXPECT_EQ(0, addr[0]);
	EXPECT_EQ(FI_ADDR_NOTAVAIL, addr[1]);
	EXPECT_EQ(1, addr[2]);

	EXPECT_EQ(-FI_EBUSY, fi_close(&eq->fid));
	EXPECT_EQ(0, fi_close(&self->av->fid));
	self->av = NULL;
	EXPECT_EQ(0, fi_close(&eq->fid));
}
SWNIC_DEPRECATED_END

TEST_F(av, addr_str_domain)
{
	struct fi_info *hints = prov_hints(), *info;
	const char *addrs[2] = { "fi_swnic://127.0.0.1:99",
				 "fi_swnic://127.0.0.1:100" };
	struct fi_av_attr attr = { .type = FI_AV_MAP };
	struct fid_domain *d;
	struct fid_av *av;
	fi_addr_t addr[2];
	char out[64];
	size_t len = sizeof(out);

	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_ADDR_STR;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	ASSERT_EQ(0, fi_domain(self->ctx.fabric, info, &d, NULL));
	ASSERT_EQ(0, fi_av_open(d, &attr, &av, NULL));
	ASSERT_EQ(2, fi_av_insert(av, addrs, 2, addr, 0, NULL));
	ASSERT_EQ(0, fi_av_lookup(av, addr[1], out, &len));
	EXPECT_STREQ(addrs[1], out);
	EXPECT_EQ(strlen(addrs[1]) + 1, len);
	len = sizeof(out);
	EXPECT_EQ((const char *)out, fi_av_straddr(av, addrs[0], out, &len));
	EXPECT_STREQ(addrs[0], out);
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&d->fid));
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

TEST_F(av, open_errors)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	struct swnic_query_device q = { .size = sizeof(q) };
	struct fi_info *info;
	struct fid_domain *d;
	struct fid_av *av, **avs;
	size_t i;

	attr.name = "shared";
	EXPECT_EQ(-FI_ENOSYS, fi_av_open(self->ctx.domain, &attr, &av, NULL));
	attr.name = NULL;
	attr.flags = FI_READ;
	EXPECT_EQ(-FI_ENOSYS, fi_av_open(self->ctx.domain, &attr, &av, NULL));
	attr.flags = FI_SEND;
	EXPECT_EQ(-FI_EBADFLAGS, fi_av_open(self->ctx.domain, &attr, &av,
					    NULL));
	attr.flags = 0;
	attr.rx_ctx_bits = 2;
	EXPECT_EQ(-FI_EINVAL, fi_av_open(self->ctx.domain, &attr, &av, NULL));
	attr.rx_ctx_bits = 0;
	attr.type = 7;
	EXPECT_EQ(-FI_EINVAL, fi_av_open(self->ctx.domain, &attr, &av, NULL));

	/* UNSPEC: the provider chooses and says which. */
	attr.type = FI_AV_UNSPEC;
	ASSERT_EQ(0, fi_av_open(self->ctx.domain, &attr, &av, NULL));
	EXPECT_EQ(FI_AV_TABLE, attr.type);
	EXPECT_EQ(-FI_ENOSYS, fi_av_set(av, NULL, NULL, NULL));
	EXPECT_EQ(0, fi_close(&av->fid));

	/* A domain opened for MAP AVs has no TABLE AVs. */
	info = fi_dupinfo(self->ctx.info);
	info->domain_attr->av_type = FI_AV_MAP;
	ASSERT_EQ(0, fi_domain(self->ctx.fabric, info, &d, NULL));
	attr.type = FI_AV_TABLE;
	EXPECT_EQ(-FI_EINVAL, fi_av_open(d, &attr, &av, NULL));
	attr.type = FI_AV_UNSPEC;
	ASSERT_EQ(0, fi_av_open(d, &attr, &av, NULL));
	EXPECT_EQ(FI_AV_MAP, attr.type);
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&d->fid));
	fi_freeinfo(info);

	/* As many AVs as the kernel says, no more. */
	ASSERT_EQ(0, prov_ext(self->ctx.domain)->query_device(self->ctx.domain,
							      &q));
	avs = calloc(q.max_av, sizeof(*avs));
	attr.type = FI_AV_TABLE;
	for (i = 0; i < q.max_av; i++)
		ASSERT_EQ(0, fi_av_open(self->ctx.domain, &attr, &avs[i], NULL));
	EXPECT_EQ(-FI_ENOSPC, fi_av_open(self->ctx.domain, &attr, &av, NULL));
	for (i = 0; i < q.max_av; i++)
		EXPECT_EQ(0, fi_close(&avs[i]->fid));
	free(avs);
}

TEST_HARNESS_MAIN
