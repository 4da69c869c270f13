// SPDX-License-Identifier: GPL-2.0
/*
 * fi_getinfo against the swnic provider (fi_getinfo(3)): libfabric 1.17's
 * core leaves every hint to the provider, so each rule is checked here,
 * with a positive and a negative case - endpoint types and utility
 * layering, primary/secondary capabilities and modifiers, mode bits,
 * address formats (FI_ADDR_STR, FI_FORMAT_UNSPEC), node/service with
 * FI_SOURCE and FI_NUMERICHOST, names, every domain/ep/tx/rx attribute,
 * memory registration modes, API versions and FI_PROV_ATTR_ONLY.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>

#include "kselftest_harness.h"
#include "prov_util.h"

#include <linux/swnic_netlink.h>

FIXTURE(info)
{
	struct fi_info *hints;
	struct fi_info *info;
	struct swnic_query_device q;
};

FIXTURE_SETUP(info)
{
	struct prov_ctx ctx;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	self->q.size = sizeof(self->q);
	ASSERT_EQ(0, prov_ext(ctx.domain)->query_device(ctx.domain, &self->q));
	prov_close(&ctx);
	self->hints = prov_hints();
	self->info = NULL;
	ASSERT_NE(NULL, self->hints);
}

FIXTURE_TEARDOWN(info)
{
	fi_freeinfo(self->info);
	fi_freeinfo(self->hints);
}

/* fi_getinfo with the fixture's hints into self->info. */
#define GETINFO(node, service, flags)					\
	({								\
		fi_freeinfo(self->info);				\
		self->info = NULL;					\
		prov_getinfo(node, service, flags, self->hints,		\
			     &self->info);				\
	})

static const struct sockaddr_in *sin_of(const void *addr)
{
	return addr;
}

/*
 * A hint's address (src_addr or dest_addr, freed with the hints): the
 * loopback address at @port, its length in @len; NULL if out of memory.
 */
static void *hint_loopback(uint16_t port, size_t *len)
{
	struct sockaddr_in *sin = calloc(1, sizeof(*sin));

	if (!sin)
		return NULL;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(port);
	*len = sizeof(*sin);
	return sin;
}

TEST(no_hints_lists_every_type)
{
	struct fi_info *info, *cur;
	int rdm = 0, msg = 0, dgram = 0, first = 1;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, NULL, &info));
	for (cur = info; cur; cur = cur->next) {
		if (strcmp(cur->fabric_attr->prov_name, "swnic"))
			continue;
		if (first)
			EXPECT_EQ(FI_EP_RDM, cur->ep_attr->type);
		first = 0;
		EXPECT_STREQ("swnic", cur->fabric_attr->name);
		EXPECT_EQ(FI_SOCKADDR_IN, cur->addr_format);
		EXPECT_EQ(0, cur->mode);
		rdm += cur->ep_attr->type == FI_EP_RDM;
		msg += cur->ep_attr->type == FI_EP_MSG;
		dgram += cur->ep_attr->type == FI_EP_DGRAM;
	}
	EXPECT_LE(1, rdm);
	EXPECT_LE(1, msg);
	EXPECT_LE(1, dgram);
	fi_freeinfo(info);
}

TEST_F(info, rdm_is_swnic_own_not_layered)
{
	struct fi_info *cur;

	self->hints->ep_attr->type = FI_EP_RDM;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_STREQ("swnic", self->info->fabric_attr->prov_name);
	for (cur = self->info; cur; cur = cur->next) {
		EXPECT_EQ(FI_EP_RDM, cur->ep_attr->type);
		EXPECT_STREQ("swnic", cur->fabric_attr->prov_name);
	}
}

TEST(layering_on_request)
{
	struct fi_info *hints, *info, *cur;
	int layered = 0;

	PROV_REQUIRE_DEVICE();
	setenv("FI_SWNIC_LAYERING", "1", 1);
	hints = prov_hints();
	hints->ep_attr->type = FI_EP_RDM;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	for (cur = info; cur; cur = cur->next)
		layered += !strcmp(cur->fabric_attr->prov_name,
				   "swnic;ofi_rxd");
	EXPECT_LE(1, layered);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

TEST_F(info, ep_types)
{
	static const enum fi_ep_type types[] = {
		FI_EP_RDM, FI_EP_MSG, FI_EP_DGRAM,
	};
	size_t i;

	for (i = 0; i < 3; i++) {
		self->hints->ep_attr->type = types[i];
		ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
		EXPECT_EQ(types[i], self->info->ep_attr->type);
		EXPECT_EQ(1, prov_count(self->info));
	}
#if !SWNIC_FI_HAVE_2	/* 2.0 made it FI_EP_UNSPEC */
	self->hints->ep_attr->type = FI_EP_SOCK_STREAM;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
#endif
}

TEST_F(info, rma_event_with_rma)
{
	self->hints->caps = FI_RMA | FI_RMA_EVENT;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	for (struct fi_info *cur = self->info; cur; cur = cur->next) {
		EXPECT_TRUE(cur->caps & FI_RMA_EVENT);
		EXPECT_TRUE(cur->rx_attr->caps & FI_RMA_EVENT);
		EXPECT_NE(FI_EP_DGRAM, cur->ep_attr->type);
	}
	fi_freeinfo(self->info);
	self->info = NULL;
	/* Not given unasked. */
	self->hints->caps = FI_RMA;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_FALSE(self->info->caps & FI_RMA_EVENT);
}

TEST_F(info, primary_caps_only_when_asked)
{
	uint64_t caps;

	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->caps = FI_MSG;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	caps = self->info->caps;
	EXPECT_TRUE(caps & FI_MSG);
	EXPECT_TRUE(caps & FI_SEND);
	EXPECT_TRUE(caps & FI_RECV);
	EXPECT_FALSE(caps & (FI_RMA | FI_TAGGED | FI_DIRECTED_RECV));
	EXPECT_FALSE(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ));
	/* FI_SOURCE costs lookups: only on request. */
	EXPECT_FALSE(caps & FI_SOURCE);
	EXPECT_TRUE(caps & FI_LOCAL_COMM);
	EXPECT_FALSE(self->info->domain_attr->caps & FI_DIRECTED_RECV);
	EXPECT_FALSE(self->info->tx_attr->caps & FI_TAGGED);
	EXPECT_EQ(0, self->info->ep_attr->mem_tag_format);
	EXPECT_EQ(0, self->info->tx_attr->rma_iov_limit);

	self->hints->caps = FI_TAGGED | FI_DIRECTED_RECV;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_TRUE(self->info->caps & FI_DIRECTED_RECV);
	EXPECT_TRUE(self->info->domain_attr->caps & FI_DIRECTED_RECV);
	EXPECT_TRUE(self->info->rx_attr->caps & FI_DIRECTED_RECV);
	EXPECT_NE(0, self->info->ep_attr->mem_tag_format);
}

TEST_F(info, modifiers)
{
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->caps = FI_MSG | FI_SEND;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_TRUE(self->info->caps & FI_SEND);
	EXPECT_FALSE(self->info->caps & FI_RECV);

	self->hints->caps = FI_RMA | FI_REMOTE_WRITE;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_TRUE(self->info->caps & FI_REMOTE_WRITE);
	EXPECT_FALSE(self->info->caps & (FI_READ | FI_WRITE | FI_REMOTE_READ));

	self->hints->caps = FI_RMA;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
		  self->info->caps & (FI_READ | FI_WRITE | FI_REMOTE_READ |
				      FI_REMOTE_WRITE));

	/* An RMA modifier without FI_RMA modifies nothing. */
	self->hints->caps = FI_MSG | FI_READ;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

TEST_F(info, unsupported_caps)
{
	static const uint64_t bad[] = {
		FI_HMEM, FI_MULTICAST | FI_MSG, FI_COLLECTIVE,
#if !SWNIC_FI_HAVE_2	/* 0 since 2.0 */
		FI_VARIABLE_MSG | FI_MSG,
#endif
		FI_MSG | FI_RMA_EVENT,
		FI_MSG | FI_SOURCE | FI_SOURCE_ERR,
		FI_RMA | FI_RMA_PMEM,
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		self->hints->caps = bad[i];
		EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0))
			TH_LOG("caps %#llx", (unsigned long long)bad[i]);
	}
	/* FI_FENCE: offered with the kernel's fence. */
	self->hints->caps = FI_MSG | FI_FENCE;
	EXPECT_EQ(self->q.features & SWNIC_FEAT_FENCE ? 0 : -FI_ENODATA,
		  GETINFO(NULL, NULL, 0));
	/* FI_SHARED_AV: offered with the kernel's named AVs. */
	self->hints->caps = FI_MSG | FI_SHARED_AV;
	EXPECT_EQ(self->q.features & SWNIC_FEAT_SHARED_AV ? 0 : -FI_ENODATA,
		  GETINFO(NULL, NULL, 0));
	/* FI_NAMED_RX_CTX: scalable endpoints on the kernel's port blocks. */
	self->hints->caps = FI_MSG | FI_NAMED_RX_CTX;
	EXPECT_EQ(self->q.features & SWNIC_FEAT_PORT_BLOCK ? 0 : -FI_ENODATA,
		  GETINFO(NULL, NULL, 0));
	/* FI_TRIGGER: offered with the kernel's triggered work. */
	self->hints->caps = FI_MSG | FI_TRIGGER;
	EXPECT_EQ(self->q.features & SWNIC_FEAT_TRIGGER ? 0 : -FI_ENODATA,
		  GETINFO(NULL, NULL, 0));
	/* Tagged and RMA are RDM (and RMA MSG) only. */
	self->hints->caps = FI_TAGGED;
	self->hints->ep_attr->type = FI_EP_DGRAM;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	self->hints->caps = FI_RMA;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

TEST_F(info, secondary_caps)
{
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->caps = FI_MSG | FI_SOURCE | FI_MULTI_RECV;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_TRUE(self->info->caps & FI_SOURCE);
	EXPECT_TRUE(self->info->rx_attr->caps & FI_SOURCE);
	EXPECT_TRUE(self->info->caps & FI_MULTI_RECV);
	/* MSG endpoints report no source. */
	self->hints->ep_attr->type = FI_EP_MSG;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

TEST_F(info, local_and_remote_comm)
{
	self->hints->caps = FI_MSG | FI_LOCAL_COMM;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_FALSE(self->info->caps & FI_REMOTE_COMM);
	EXPECT_FALSE(self->info->domain_attr->caps & FI_REMOTE_COMM);
	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	/* A local-only device cannot reach other hosts. */
	self->hints->caps = FI_MSG | FI_REMOTE_COMM;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	self->hints->caps = FI_MSG;
	self->hints->domain_attr->caps = FI_REMOTE_COMM;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

TEST_F(info, mode_bits_cleared)
{
	self->hints->mode = ~0ULL;
	self->hints->domain_attr->mode = ~0ULL;
	self->hints->tx_attr->mode = ~0ULL;
	self->hints->rx_attr->mode = ~0ULL;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(0, self->info->mode);
	EXPECT_EQ(0, self->info->domain_attr->mode);
	EXPECT_EQ(0, self->info->tx_attr->mode);
	EXPECT_EQ(0, self->info->rx_attr->mode);
	/* An application that supports no mode at all is served too. */
	self->hints->mode = 0;
	self->hints->domain_attr->mode = 0;
	self->hints->tx_attr->mode = 0;
	self->hints->rx_attr->mode = 0;
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
}

TEST_F(info, addr_formats)
{
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->addr_format = FI_FORMAT_UNSPEC;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_SOCKADDR_IN, self->info->addr_format);
	ASSERT_EQ(sizeof(struct sockaddr_in), self->info->src_addrlen);
	EXPECT_EQ(AF_INET, sin_of(self->info->src_addr)->sin_family);

	self->hints->addr_format = FI_ADDR_STR;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_ADDR_STR, self->info->addr_format);
	if (!self->q.ifindex)
		EXPECT_STREQ("fi_swnic://127.0.0.1:0",
			     (char *)self->info->src_addr);
	EXPECT_EQ(strlen(self->info->src_addr) + 1, self->info->src_addrlen);

	self->hints->addr_format = FI_SOCKADDR;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_SOCKADDR, self->info->addr_format);

	self->hints->addr_format = FI_SOCKADDR_IN6;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	self->hints->addr_format = FI_SOCKADDR_IB;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

TEST_F(info, node_and_service)
{
	const struct sockaddr_in *sin;

	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	self->hints->ep_attr->type = FI_EP_RDM;
	ASSERT_EQ(0, GETINFO("127.0.0.1", "4000", 0));
	ASSERT_NE(NULL, self->info->dest_addr);
	sin = sin_of(self->info->dest_addr);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), sin->sin_addr.s_addr);
	EXPECT_EQ(htons(4000), sin->sin_port);
	EXPECT_EQ(0, sin_of(self->info->src_addr)->sin_port);

	ASSERT_EQ(0, GETINFO("localhost", "4001", 0));
	EXPECT_EQ(htons(4001), sin_of(self->info->dest_addr)->sin_port);

	/* service alone: an endpoint of this device */
	ASSERT_EQ(0, GETINFO(NULL, "4002", 0));
	EXPECT_EQ(htons(4002), sin_of(self->info->dest_addr)->sin_port);

	EXPECT_EQ(-FI_ENODATA, GETINFO("127.0.0.1", "http", 0));
	EXPECT_EQ(-FI_ENODATA, GETINFO("127.0.0.1", "70000", 0));
	EXPECT_EQ(-FI_ENODATA, GETINFO("127.0.0.1", "-1", 0));
	/* Not this host's local device address. */
	EXPECT_EQ(-FI_ENODATA, GETINFO("10.1.2.3", "4000", 0));
	EXPECT_EQ(-FI_ENODATA, GETINFO("::1", "4000", 0));
}

TEST_F(info, unknown_node_fails_fast)
{
	struct timespec a, b;
	int ret;

	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	clock_gettime(CLOCK_MONOTONIC, &a);
	ret = GETINFO("no-such-host.swnic.invalid", "4000", 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	EXPECT_EQ(-FI_ENODATA, ret);
	EXPECT_GT(2, b.tv_sec - a.tv_sec);
}

TEST_F(info, numerichost)
{
	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	ASSERT_EQ(0, GETINFO("127.0.0.1", "4000", FI_NUMERICHOST));
	EXPECT_EQ(-FI_ENODATA, GETINFO("localhost", "4000", FI_NUMERICHOST));
}

TEST_F(info, source)
{
	const struct sockaddr_in *sin;

	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	self->hints->ep_attr->type = FI_EP_RDM;
	ASSERT_EQ(0, GETINFO("127.0.0.1", "5000", FI_SOURCE));
	EXPECT_EQ(NULL, self->info->dest_addr);
	sin = sin_of(self->info->src_addr);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), sin->sin_addr.s_addr);
	EXPECT_EQ(htons(5000), sin->sin_port);

	ASSERT_EQ(0, GETINFO(NULL, "5001", FI_SOURCE));
	EXPECT_EQ(htons(5001), sin_of(self->info->src_addr)->sin_port);
	ASSERT_EQ(0, GETINFO("0.0.0.0", "5002", FI_SOURCE));
	EXPECT_EQ(htonl(INADDR_LOOPBACK),
		  sin_of(self->info->src_addr)->sin_addr.s_addr);

	EXPECT_EQ(-FI_ENODATA, GETINFO("10.9.9.9", "5000", FI_SOURCE));
	/* FI_SOURCE needs a node or a service. */
	EXPECT_NE(0, GETINFO(NULL, NULL, FI_SOURCE));
}

TEST_F(info, addr_str_node)
{
	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->addr_format = FI_ADDR_STR;
	ASSERT_EQ(0, GETINFO("fi_swnic://127.0.0.1:77", NULL, 0));
	EXPECT_STREQ("fi_swnic://127.0.0.1:77", (char *)self->info->dest_addr);
	ASSERT_EQ(0, GETINFO("fi_sockaddr_in://127.0.0.1:78", NULL, 0));
	EXPECT_STREQ("fi_swnic://127.0.0.1:78", (char *)self->info->dest_addr);
	/* a service with an FI_ADDR_STR node is an error */
	EXPECT_EQ(-FI_ENODATA, GETINFO("fi_swnic://127.0.0.1:77", "5", 0));
	EXPECT_EQ(-FI_ENODATA, GETINFO("fi_swnic://10.0.0.1:77", NULL, 0));
	EXPECT_EQ(-FI_ENODATA, GETINFO("fi_verbs://127.0.0.1:77", NULL, 0));
	EXPECT_EQ(-FI_ENODATA, GETINFO("fi_swnic://127.0.0.1:99999", NULL, 0));
}

TEST_F(info, hint_addresses)
{
	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->addr_format = FI_SOCKADDR_IN;
	self->hints->src_addr = hint_loopback(9, &self->hints->src_addrlen);
	ASSERT_NE(NULL, self->hints->src_addr);
	self->hints->dest_addr = hint_loopback(10, &self->hints->dest_addrlen);
	ASSERT_NE(NULL, self->hints->dest_addr);
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(htons(9), sin_of(self->info->src_addr)->sin_port);
	EXPECT_EQ(htons(10), sin_of(self->info->dest_addr)->sin_port);

	/* A source that is not the device's address. */
	((struct sockaddr_in *)self->hints->src_addr)->sin_addr.s_addr =
		inet_addr("192.0.2.1");
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	/* Not an IPv4 address at all. */
	((struct sockaddr_in *)self->hints->src_addr)->sin_family = AF_INET6;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

TEST_F(info, names)
{
	self->hints->domain_attr->name = strdup("swnic0");
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_STREQ("swnic0", self->info->domain_attr->name);
	free(self->hints->domain_attr->name);
	self->hints->domain_attr->name = strdup("nosuchdev");
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	free(self->hints->domain_attr->name);
	self->hints->domain_attr->name = NULL;
	self->hints->fabric_attr->name = strdup("swnic");
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
	free(self->hints->fabric_attr->name);
	self->hints->fabric_attr->name = strdup("IB-0xfe80");
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

TEST_F(info, domain_limits)
{
	struct fi_domain_attr *d = self->hints->domain_attr;
	const struct swnic_query_device *q = &self->q;

	self->hints->ep_attr->type = FI_EP_RDM;
	d->cq_cnt = q->max_cq;
	d->ep_cnt = q->max_ep;
	d->cntr_cnt = q->max_cntr;
	d->mr_cnt = q->max_mr;
	d->mr_key_size = q->mr_key_size;
	d->cq_data_size = q->cq_data_size;
	d->mr_iov_limit = q->mr_iov_limit;
	d->max_err_data = q->max_err_data;
	d->tx_ctx_cnt = q->max_ep;
	d->max_ep_tx_ctx = 1;
	d->max_ep_rx_ctx = 1;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));

#define OVER(field, value)						\
	do {								\
		size_t saved = d->field;				\
		d->field = (value);					\
		EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0))		\
			TH_LOG(#field " = %zu", (size_t)(value));	\
		d->field = saved;					\
	} while (0)

	OVER(cq_cnt, q->max_cq + 1);
	OVER(ep_cnt, q->max_ep + 1);
	OVER(cntr_cnt, q->max_cntr + 1);
	OVER(mr_cnt, q->max_mr + 1);
	OVER(mr_key_size, q->mr_key_size + 1);
	OVER(cq_data_size, q->cq_data_size + 1);
	OVER(mr_iov_limit, q->mr_iov_limit + 1);
	OVER(max_err_data, q->max_err_data + 1);
	OVER(tx_ctx_cnt, q->max_ep + 1);
	OVER(rx_ctx_cnt, q->max_ep + 1);
	/* Scalable endpoints: a port block's contexts; one shared tx. */
	OVER(max_ep_tx_ctx, SWNIC_PORT_BLOCK_MAX + 1);
	OVER(max_ep_rx_ctx, SWNIC_PORT_BLOCK_MAX + 1);
	OVER(max_ep_stx_ctx, 2);
	/* An endpoint uses one shared receive context (SWNIC_FEAT_SRX). */
	OVER(max_ep_srx_ctx, q->features & SWNIC_FEAT_SRX ? 2 : 1);
#undef OVER
}

TEST_F(info, domain_models)
{
	struct fi_domain_attr *d = self->hints->domain_attr;

	self->hints->ep_attr->type = FI_EP_RDM;
	d->threading = FI_THREAD_COMPLETION;
	d->control_progress = FI_PROGRESS_MANUAL;
	d->data_progress = FI_PROGRESS_MANUAL;
	d->resource_mgmt = FI_RM_DISABLED;
	d->av_type = FI_AV_MAP;
	d->tclass = FI_TC_LOW_LATENCY;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_THREAD_COMPLETION, self->info->domain_attr->threading);
	EXPECT_EQ(FI_PROGRESS_MANUAL, self->info->domain_attr->control_progress);
	EXPECT_EQ(FI_PROGRESS_MANUAL, self->info->domain_attr->data_progress);
	EXPECT_EQ(FI_RM_DISABLED, self->info->domain_attr->resource_mgmt);
	EXPECT_EQ(FI_AV_MAP, self->info->domain_attr->av_type);
	EXPECT_EQ(FI_TC_LOW_LATENCY, self->info->domain_attr->tclass);

	d->av_type = FI_AV_TABLE;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_AV_TABLE, self->info->domain_attr->av_type);

	d->data_progress = 7;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	d->data_progress = FI_PROGRESS_AUTO;
	d->threading = 42;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	d->threading = FI_THREAD_UNSPEC;
	d->resource_mgmt = 9;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	d->resource_mgmt = FI_RM_UNSPEC;
	d->av_type = 3;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	d->av_type = FI_AV_UNSPEC;
	d->tclass = FI_TC_DSCP | 64;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	d->tclass = 0x1234;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	d->tclass = fi_tc_dscp_set(10);
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
}

TEST_F(info, mr_modes)
{
	struct fi_domain_attr *d = self->hints->domain_attr;
	bool odp = self->q.features & SWNIC_FEAT_MR_ODP;

	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->caps = FI_RMA;
	/*
	 * Bits swnic does not need are cleared; keys are the provider's
	 * (unguessable) whenever the application allows it.
	 */
	d->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		     FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_ENDPOINT |
		     FI_MR_RAW | FI_MR_RMA_EVENT | FI_MR_HMEM;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_MR_ALLOCATED | FI_MR_PROV_KEY,
		  self->info->domain_attr->mr_mode);
	/* Without FI_MR_PROV_KEY the application's keys are used. */
	d->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_MR_ALLOCATED, self->info->domain_attr->mr_mode);

	/* FI_MR_BASIC is kept as it is. */
	d->mr_mode = SWNIC_MR_BASIC;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(SWNIC_MR_BASIC, self->info->domain_attr->mr_mode);
	d->mr_mode = SWNIC_MR_BASIC | FI_MR_LOCAL;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));

	/* No FI_MR_ALLOCATED: only on-demand registration serves it. */
	d->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	EXPECT_EQ(odp ? 0 : -FI_ENODATA, GETINFO(NULL, NULL, 0));
	if (odp)
		EXPECT_EQ(FI_MR_PROV_KEY, self->info->domain_attr->mr_mode);
	d->mr_mode = SWNIC_MR_SCALABLE;
	EXPECT_EQ(odp ? 0 : -FI_ENODATA, GETINFO(NULL, NULL, 0));

	/* Without RMA no registration is needed at all. */
	self->hints->caps = FI_MSG;
	d->mr_mode = 0;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(0, self->info->domain_attr->mr_mode);
	/* Sender-only RMA targets nothing either. */
	self->hints->caps = FI_RMA | FI_WRITE | FI_READ;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(0, self->info->domain_attr->mr_mode);
}

TEST_F(info, api_versions)
{
	struct fi_info *info;

	/* Before 1.5 an unspecified mr_mode means basic registration. */
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->domain_attr->mr_mode = SWNIC_MR_UNSPEC;
	ASSERT_EQ(0, fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0,
				self->hints, &info));
	EXPECT_EQ(SWNIC_MR_BASIC, info->domain_attr->mr_mode);
	fi_freeinfo(info);
	self->hints->domain_attr->mr_mode = FI_MR_LOCAL;
	EXPECT_EQ(-FI_ENODATA, fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0,
					  self->hints, &info));
	/* The API of the headers built against is served... */
	ASSERT_EQ(0, fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
				NULL, NULL, 0, self->hints, &info));
	EXPECT_EQ(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
		  info->fabric_attr->api_version);
	fi_freeinfo(info);
	/* ... a newer one is refused. */
	EXPECT_NE(0, fi_getinfo(FI_VERSION(FI_MAJOR_VERSION,
					   FI_MINOR_VERSION + 1),
				NULL, NULL, 0, self->hints, &info));
	EXPECT_NE(0, fi_getinfo(FI_VERSION(FI_MAJOR_VERSION + 1, 0), NULL,
				NULL, 0, self->hints, &info));
}

TEST_F(info, ep_attr)
{
	struct fi_ep_attr *e = self->hints->ep_attr;

	e->type = FI_EP_RDM;
	e->max_msg_size = self->q.max_msg_size;
	e->tx_ctx_cnt = 1;
	e->rx_ctx_cnt = 1;
	e->protocol_version = 1;
	e->mem_tag_format = 0xffff0000ffff0000ULL;
	self->hints->caps = FI_TAGGED;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(0xffff0000ffff0000ULL, self->info->ep_attr->mem_tag_format);

	e->max_msg_size = self->q.max_msg_size + 1;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	e->max_msg_size = 0;
	/* Contexts: up to a scalable endpoint's; shared transmit ones. */
	e->tx_ctx_cnt = SWNIC_PORT_BLOCK_MAX + 1;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	e->tx_ctx_cnt = 2;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(2, self->info->ep_attr->tx_ctx_cnt);
	e->tx_ctx_cnt = FI_SHARED_CONTEXT;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_SHARED_CONTEXT, self->info->ep_attr->tx_ctx_cnt);
	e->tx_ctx_cnt = 0;
	/* Shared receive contexts where the module has them. */
	e->rx_ctx_cnt = FI_SHARED_CONTEXT;
	if (self->q.features & SWNIC_FEAT_SRX) {
		ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
		EXPECT_EQ(FI_SHARED_CONTEXT, self->info->ep_attr->rx_ctx_cnt);
		EXPECT_EQ(1, self->info->domain_attr->max_ep_srx_ctx);
	} else {
		EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	}
	e->rx_ctx_cnt = 0;
	e->protocol = FI_PROTO_RXM;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	e->protocol = 0;
	e->msg_prefix_size = 16;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	e->msg_prefix_size = 0;
	/* Data ordering is of RMA: any size with FI_RMA, none without. */
	e->max_order_waw_size = 64;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	self->hints->caps = FI_RMA;
	e->mem_tag_format = 0;		/* a tag format needs FI_TAGGED */
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(self->q.max_msg_size, self->info->ep_attr->max_order_waw_size);
	EXPECT_EQ(self->q.max_msg_size, self->info->ep_attr->max_order_raw_size);
	e->mem_tag_format = 0xffff0000ffff0000ULL;
	self->hints->caps = FI_TAGGED;
	e->max_order_waw_size = 0;
	self->hints->caps = FI_MSG;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
}

#define EPK_KEY	7531	/* a service of the test's own */

/* A hint's auth key (freed with the hints), replacing @*where's. */
static void epk_set(uint8_t **where, size_t *size, uint32_t key)
{
	free(*where);
	*where = NULL;
	*size = 0;
	if (!key)
		return;
	*where = malloc(sizeof(key));
	if (!*where)
		abort();
	memcpy(*where, &key, sizeof(key));
	*size = sizeof(key);
}

static void epk_service(bool add)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd),
		 "swnic service del swnic0 key %d >/dev/null 2>&1", EPK_KEY);
	sys_run(cmd);
	if (!add)
		return;
	snprintf(cmd, sizeof(cmd),
		 "swnic service add swnic0 key %d >/dev/null 2>&1", EPK_KEY);
	sys_run(cmd);
}

/*
 * fi_endpoint(3): only peers with an endpoint's auth key may reach it.
 * The kernel keeps every endpoint reachable with its domain's key, so a
 * swnic endpoint's key is its domain's: fi_getinfo answers an endpoint
 * key with the domain taking it too, matches no other domain key (nor an
 * open domain of another key), and fi_endpoint refuses an endpoint key
 * its domain does not use - before, the key was accepted and ignored,
 * the endpoint talking in its domain's service.
 */
TEST_F(info, ep_auth_key_is_the_domains)
{
	struct fi_ep_attr *e = self->hints->ep_attr;
	struct fi_domain_attr *d = self->hints->domain_attr;
	struct fid_domain *dom_k = NULL, *dom_1 = NULL;
	struct fi_info *keyed = NULL, *plain = NULL;
	struct fid_fabric *fabric = NULL;
	struct fid_ep *ep;
	uint32_t got;

	if (!(self->q.features & SWNIC_FEAT_AUTH_KEY))
		SKIP(return, "the kernel has no auth keys");
	epk_service(true);
	e->type = FI_EP_RDM;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	plain = self->info;
	self->info = NULL;

	/* An endpoint key alone: the domain of the answer takes it. */
	epk_set(&e->auth_key, &e->auth_key_size, EPK_KEY);
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	ASSERT_EQ(sizeof(got), self->info->ep_attr->auth_key_size);
	ASSERT_EQ(sizeof(got), self->info->domain_attr->auth_key_size);
	memcpy(&got, self->info->domain_attr->auth_key, sizeof(got));
	EXPECT_EQ(EPK_KEY, got);
	keyed = self->info;
	self->info = NULL;
	/* The same as the domain's: an answer; another: none. */
	epk_set(&d->auth_key, &d->auth_key_size, EPK_KEY);
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
	epk_set(&d->auth_key, &d->auth_key_size, SWNIC_AUTH_KEY_DEFAULT);
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	epk_set(&d->auth_key, &d->auth_key_size, 0);

	/* fi_endpoint: in a domain of that key, not in another. */
	ASSERT_EQ(0, fi_fabric(plain->fabric_attr, &fabric, NULL));
	ASSERT_EQ(0, fi_domain(fabric, keyed, &dom_k, NULL));
	ASSERT_EQ(0, fi_domain(fabric, plain, &dom_1, NULL));
	ASSERT_EQ(0, fi_endpoint(dom_k, keyed, &ep, NULL));
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(-FI_EINVAL, fi_endpoint(dom_1, keyed, &ep, NULL));
	/* The default service's key is dom_1's, though it took none. */
	got = SWNIC_AUTH_KEY_DEFAULT;
	memcpy(keyed->ep_attr->auth_key, &got, sizeof(got));
	ASSERT_EQ(0, fi_endpoint(dom_1, keyed, &ep, NULL));
	EXPECT_EQ(0, fi_close(&ep->fid));
	EXPECT_EQ(-FI_EINVAL, fi_endpoint(dom_k, keyed, &ep, NULL));
	keyed->ep_attr->auth_key_size = 3;
	EXPECT_EQ(-FI_EINVAL, fi_endpoint(dom_1, keyed, &ep, NULL));
	keyed->ep_attr->auth_key_size = sizeof(got);

	/* Hints naming an open domain: its key or no answer. */
	d->domain = dom_1;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	d->domain = dom_k;
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
	d->domain = NULL;
#if SWNIC_FI_HAVE_2
	/* FI_AV_AUTH_KEY: endpoints take their keys from the AV only. */
	d->auth_key_size = FI_AV_AUTH_KEY;
	fi_freeinfo(self->info);
	self->info = NULL;
	EXPECT_EQ(-FI_ENODATA,
		  fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
			     NULL, NULL, 0, self->hints, &self->info));
	d->auth_key_size = 0;
#endif
	EXPECT_EQ(0, fi_close(&dom_1->fid));
	EXPECT_EQ(0, fi_close(&dom_k->fid));
	EXPECT_EQ(0, fi_close(&fabric->fid));
	fi_freeinfo(keyed);
	fi_freeinfo(plain);
	epk_service(false);
}

/*
 * Several contexts are a scalable endpoint's (fi_scalable_ep: FI_EP_RDM
 * or FI_EP_DGRAM, none of them shared; fi_endpoint opens one of each):
 * no answer asks for what no open call can give - not an FI_EP_MSG one,
 * not several transmit contexts with a shared receive one (or the
 * reverse). Every answer given opens.
 */
TEST_F(info, context_counts_only_as_they_open)
{
	struct fi_ep_attr *e = self->hints->ep_attr;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *sep = NULL;
	int n = 0;

	if (!(self->q.features & SWNIC_FEAT_PORT_BLOCK))
		SKIP(return, "the module has no port blocks");
	e->type = FI_EP_MSG;
	e->tx_ctx_cnt = 2;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	e->tx_ctx_cnt = 0;
	e->rx_ctx_cnt = 2;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	/* Any type: the scalable ones only, and each opens. */
	e->type = FI_EP_UNSPEC;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	for (struct fi_info *i = self->info; i; i = i->next, n++) {
		EXPECT_NE(FI_EP_MSG, i->ep_attr->type);
		EXPECT_EQ(2, i->ep_attr->rx_ctx_cnt);
		ASSERT_EQ(0, fi_fabric(i->fabric_attr, &fabric, NULL));
		ASSERT_EQ(0, fi_domain(fabric, i, &domain, NULL));
		EXPECT_EQ(0, fi_scalable_ep(domain, i, &sep, NULL));
		if (sep)
			fi_close(&sep->fid);
		sep = NULL;
		fi_close(&domain->fid);
		fi_close(&fabric->fid);
	}
	EXPECT_LT(0, n);
	/* Several of one kind, the other shared: neither open takes it. */
	e->type = FI_EP_RDM;
	e->rx_ctx_cnt = 0;
	e->tx_ctx_cnt = 2;
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
	if (self->q.features & SWNIC_FEAT_SRX) {
		e->rx_ctx_cnt = FI_SHARED_CONTEXT;
		EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	}
	e->tx_ctx_cnt = FI_SHARED_CONTEXT;
	e->rx_ctx_cnt = 2;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	e->type = FI_EP_DGRAM;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	e->tx_ctx_cnt = 0;
	EXPECT_EQ(0, GETINFO(NULL, NULL, 0));
}

TEST_F(info, tx_rx_attr)
{
	struct fi_tx_attr *tx = self->hints->tx_attr;
	struct fi_rx_attr *rx = self->hints->rx_attr;

	self->hints->ep_attr->type = FI_EP_RDM;
	tx->size = 128;
	tx->iov_limit = 1;
	tx->inject_size = self->q.max_inject;
	tx->op_flags = FI_TRANSMIT_COMPLETE;
	tx->msg_order = FI_ORDER_SAS;
	rx->size = 256;
	rx->op_flags = FI_MULTI_RECV;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(128, self->info->tx_attr->size);
	EXPECT_EQ(1, self->info->tx_attr->iov_limit);
	EXPECT_EQ(FI_TRANSMIT_COMPLETE, self->info->tx_attr->op_flags);
	EXPECT_EQ(256, self->info->rx_attr->size);
	EXPECT_EQ(FI_MULTI_RECV, self->info->rx_attr->op_flags);

#define BAD(stmt, undo)							\
	do {								\
		stmt;							\
		EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0))		\
			TH_LOG("%s", #stmt);				\
		undo;							\
	} while (0)

	BAD(tx->inject_size = self->q.max_inject + 1,
	    tx->inject_size = 0);
	BAD(tx->size = self->q.max_sq_entries + 1, tx->size = 0);
	BAD(tx->iov_limit = self->q.max_iov + 1, tx->iov_limit = 0);
	BAD(tx->rma_iov_limit = self->q.max_rma_iov + 1,
	    tx->rma_iov_limit = 0);
	BAD(tx->op_flags = FI_COMMIT_COMPLETE, tx->op_flags = 0);
	BAD(tx->comp_order = SWNIC_ORDER_STRICT, tx->comp_order = 0);
	BAD(tx->caps = FI_HMEM, tx->caps = 0);
	BAD(tx->tclass = FI_TC_DSCP | 0x40, tx->tclass = 0);
	BAD(rx->size = self->q.max_rq_entries + 1, rx->size = 0);
	BAD(rx->iov_limit = self->q.max_iov + 1, rx->iov_limit = 0);
	BAD(rx->total_buffered_recv = 1, rx->total_buffered_recv = 0);
	BAD(rx->op_flags = FI_INJECT, rx->op_flags = 0);
	BAD(rx->comp_order = SWNIC_ORDER_DATA, rx->comp_order = 0);
#undef BAD

	/*
	 * An order not kept (atomic orders without FI_ATOMIC) is no match
	 * (msg_order_not_kept_is_no_match); with FI_ATOMIC both are kept.
	 */
	self->hints->caps = FI_MSG | FI_RMA;
	tx->msg_order = FI_ORDER_RAW | FI_ORDER_ATOMIC_RAW;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	self->hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_ORDER_RAW | FI_ORDER_ATOMIC_RAW,
		  self->info->tx_attr->msg_order);
	self->hints->caps = 0;
	tx->msg_order = 0;

	/* A side's caps narrow that side. */
	tx->caps = FI_MSG | FI_SEND;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_MSG | FI_SEND, self->info->tx_attr->caps);
}

/*
 * fi_getinfo(3): a non-zero hint must be supported or there is no match.
 * A msg_order bit an fi_info does not keep - atomic orders without
 * FI_ATOMIC, any order on DGRAM - makes that fi_info no match, on either
 * side; the orders it keeps still match.
 */
TEST_F(info, msg_order_not_kept_is_no_match)
{
	struct fi_tx_attr *tx = self->hints->tx_attr;
	struct fi_rx_attr *rx = self->hints->rx_attr;
	struct fi_info *cur;

	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->caps = FI_MSG | FI_RMA;
	tx->msg_order = FI_ORDER_RAW | FI_ORDER_ATOMIC_RAW;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	tx->msg_order = 0;
	rx->msg_order = FI_ORDER_SAS | FI_ORDER_ATOMIC_WAW;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	rx->msg_order = FI_ORDER_SAS;
	tx->msg_order = FI_ORDER_SAS | FI_ORDER_RMA_RAW;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	EXPECT_EQ(FI_ORDER_SAS | FI_ORDER_RMA_RAW,
		  self->info->tx_attr->msg_order);
	EXPECT_EQ(FI_ORDER_SAS, self->info->rx_attr->msg_order);

	/* DGRAM keeps no order: asking one leaves RDM and MSG only. */
	self->hints->ep_attr->type = FI_EP_DGRAM;
	self->hints->caps = FI_MSG;
	tx->msg_order = FI_ORDER_SAS;
	rx->msg_order = 0;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	tx->msg_order = 0;
	rx->msg_order = FI_ORDER_SAS;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	self->hints->ep_attr->type = FI_EP_UNSPEC;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	for (cur = self->info; cur; cur = cur->next) {
		EXPECT_NE(FI_EP_DGRAM, cur->ep_attr->type);
		EXPECT_EQ(FI_ORDER_SAS, cur->rx_attr->msg_order & FI_ORDER_SAS);
	}
}

/*
 * fi_getinfo(3): with FI_SOURCE, node and service name the source, and
 * hints->dest_addr is honoured (it is ignored only when node or service
 * name the destination); hints->src_addr is what is ignored.
 */
TEST_F(info, source_keeps_hints_dest_addr)
{
	if (self->q.ifindex)
		SKIP(return, "swnic0 is bound to a netdev");
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->addr_format = FI_SOCKADDR_IN;
	self->hints->dest_addr = hint_loopback(7001,
					       &self->hints->dest_addrlen);
	ASSERT_NE(NULL, self->hints->dest_addr);
	self->hints->src_addr = hint_loopback(9, &self->hints->src_addrlen);
	ASSERT_NE(NULL, self->hints->src_addr);

	ASSERT_EQ(0, GETINFO("127.0.0.1", "5000", FI_SOURCE));
	EXPECT_EQ(htons(5000), sin_of(self->info->src_addr)->sin_port);
	ASSERT_NE(NULL, self->info->dest_addr);
	EXPECT_EQ(sizeof(struct sockaddr_in), self->info->dest_addrlen);
	EXPECT_EQ(htonl(INADDR_LOOPBACK),
		  sin_of(self->info->dest_addr)->sin_addr.s_addr);
	EXPECT_EQ(htons(7001), sin_of(self->info->dest_addr)->sin_port);

	/* A service alone with FI_SOURCE: the same. */
	ASSERT_EQ(0, GETINFO(NULL, "5001", FI_SOURCE));
	EXPECT_EQ(htons(5001), sin_of(self->info->src_addr)->sin_port);
	ASSERT_NE(NULL, self->info->dest_addr);
	EXPECT_EQ(htons(7001), sin_of(self->info->dest_addr)->sin_port);

	/* A destination the device cannot reach is still no match. */
	((struct sockaddr_in *)self->hints->dest_addr)->sin_addr.s_addr =
		inet_addr("192.0.2.1");
	EXPECT_EQ(-FI_ENODATA, GETINFO("127.0.0.1", "5000", FI_SOURCE));

	/* Without FI_SOURCE node and service name the destination. */
	((struct sockaddr_in *)self->hints->dest_addr)->sin_addr.s_addr =
		htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, GETINFO("127.0.0.1", "5002", 0));
	EXPECT_EQ(htons(5002), sin_of(self->info->dest_addr)->sin_port);
}

TEST_F(info, handle_is_not_swnic)
{
	struct prov_ctx ctx;

	ASSERT_EQ(0, prov_open(&ctx, NULL));
	self->hints->handle = &ctx.domain->fid;
	EXPECT_EQ(-FI_ENODATA, GETINFO(NULL, NULL, 0));
	self->hints->handle = NULL;
	prov_close(&ctx);
}

TEST_F(info, prov_attr_only)
{
	const struct fi_info *cur, *found = NULL;
	int n = 0;

	/* The core asks every provider; swnic answers exactly once. */
	ASSERT_EQ(0, GETINFO(NULL, NULL, FI_PROV_ATTR_ONLY));
	for (cur = self->info; cur; cur = cur->next) {
		if (strcmp(cur->fabric_attr->prov_name, "swnic"))
			continue;
		found = cur;
		n++;
	}
	EXPECT_EQ(1, n);
	ASSERT_NE(NULL, found);
	EXPECT_EQ(FI_VERSION(1, 0), found->fabric_attr->prov_version);
}

TEST_F(info, output_reopens)
{
	struct fi_info *again;

	/* An fi_info from swnic is a valid hint for the same answer. */
	self->hints->ep_attr->type = FI_EP_RDM;
	self->hints->caps = FI_MSG | FI_TAGGED;
	ASSERT_EQ(0, GETINFO(NULL, NULL, 0));
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, self->info, &again));
	EXPECT_EQ(self->info->caps, again->caps);
	EXPECT_EQ(self->info->domain_attr->mr_mode,
		  again->domain_attr->mr_mode);
	EXPECT_EQ(self->info->tx_attr->size, again->tx_attr->size);
	fi_freeinfo(again);
}

TEST_HARNESS_MAIN
