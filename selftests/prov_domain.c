// SPDX-License-Identifier: GPL-2.0
/*
 * The swnic provider's fabric and domain, through the public libfabric API
 * (fi_domain(3)): open/close, attributes from the kernel's device query,
 * fi_domain2, fi_domain_bind, fi_open_ops (FI_SWNIC_DOMAIN_OPS_1),
 * fi_set_ops (FI_SET_OPS_HMEM_OVERRIDE), fi_close -FI_EBUSY with a warning
 * naming the open children, threading models, open instances reported by
 * fi_getinfo, and what endpoints answer until the data path exists.
 */
#include "kselftest_harness.h"
#include "prov_util.h"

#include <linux/swnic_netlink.h>

FIXTURE(dom)
{
	struct prov_ctx ctx;
};

FIXTURE_SETUP(dom)
{
	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, prov_open(&self->ctx, NULL));
}

FIXTURE_TEARDOWN(dom)
{
	prov_close(&self->ctx);
}

TEST(fabric_open_close)
{
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fi_fabric_attr attr;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_STREQ("swnic", info->fabric_attr->name);
	EXPECT_STREQ("swnic", info->fabric_attr->prov_name);
	ASSERT_EQ(0, fi_fabric(info->fabric_attr, &fabric, (void *)0x1234));
	EXPECT_EQ(FI_CLASS_FABRIC, fabric->fid.fclass);
	EXPECT_EQ((void *)0x1234, fabric->fid.context);
	EXPECT_EQ(0, fi_close(&fabric->fid));

	/* A fabric of another name is not swnic's. */
	attr = *info->fabric_attr;
	attr.name = "ethernet";
	EXPECT_EQ(-FI_ENODATA, fi_fabric(&attr, &fabric, NULL));
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

TEST_F(dom, attributes_from_kernel)
{
	struct fi_swnic_ops_domain *ops = prov_ext(self->ctx.domain);
	struct swnic_query_device q = { .size = sizeof(q) };
	struct fi_domain_attr *a = self->ctx.info->domain_attr;

	ASSERT_NE(NULL, ops);
	ASSERT_EQ(0, ops->query_device(self->ctx.domain, &q));
	EXPECT_STREQ((char *)q.name, a->name);
	EXPECT_EQ(q.max_cq, a->cq_cnt);
	EXPECT_EQ(q.max_ep, a->ep_cnt);
	EXPECT_EQ(q.max_cntr, a->cntr_cnt);
	EXPECT_EQ(q.max_mr, a->mr_cnt);
	EXPECT_EQ(q.mr_key_size, a->mr_key_size);
	EXPECT_EQ(q.cq_data_size, a->cq_data_size);
	EXPECT_EQ(q.mr_iov_limit, a->mr_iov_limit);
	EXPECT_EQ(q.max_err_data, a->max_err_data);
	EXPECT_EQ(q.max_msg_size, self->ctx.info->ep_attr->max_msg_size);
	EXPECT_EQ(q.max_inject, self->ctx.info->tx_attr->inject_size);
	EXPECT_EQ(q.max_sq_entries, self->ctx.info->tx_attr->size);
	EXPECT_EQ(q.max_rq_entries, self->ctx.info->rx_attr->size);
	EXPECT_EQ(q.max_iov, self->ctx.info->tx_attr->iov_limit);
	EXPECT_EQ(FI_THREAD_SAFE, a->threading);
	EXPECT_EQ(FI_PROGRESS_AUTO, a->control_progress);
	EXPECT_EQ(FI_PROGRESS_AUTO, a->data_progress);
	EXPECT_EQ(FI_RM_ENABLED, a->resource_mgmt);
	/*
	 * Scalable endpoints on port blocks; an endpoint uses one shared
	 * transmit context, and one shared receive context (SWNIC_FEAT_SRX).
	 */
	EXPECT_EQ(1, a->max_ep_stx_ctx);
	EXPECT_EQ(q.features & SWNIC_FEAT_SRX ? 1 : 0, a->max_ep_srx_ctx);
	EXPECT_EQ(q.features & SWNIC_FEAT_PORT_BLOCK ? SWNIC_PORT_BLOCK_MAX : 1,
		  a->max_ep_tx_ctx);
	EXPECT_EQ(a->max_ep_tx_ctx, a->max_ep_rx_ctx);
	/* A local-only device reaches this host only. */
	if (!q.ifindex) {
		EXPECT_TRUE(a->caps & FI_LOCAL_COMM);
		EXPECT_FALSE(a->caps & FI_REMOTE_COMM);
		EXPECT_FALSE(self->ctx.info->caps & FI_REMOTE_COMM);
	}
	EXPECT_EQ(FI_CLASS_DOMAIN, self->ctx.domain->fid.fclass);
}

TEST(close_busy_names_children)
{
	struct prov_ctx c, *ctx = &c;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_cq *cq, *cq2;
	struct fid_cntr *cntr;
	struct fid_av *av;
	struct prov_capture cap;
	const char *log;
	int ret;

	PROV_REQUIRE_DEVICE();
	prov_log_warnings();
	ASSERT_EQ(0, prov_open(ctx, NULL));
	ASSERT_EQ(0, fi_cq_open(ctx->domain, &cq_attr, &cq, NULL));
	ASSERT_EQ(0, fi_cq_open(ctx->domain, &cq_attr, &cq2, NULL));
	ASSERT_EQ(0, fi_cntr_open(ctx->domain, &cntr_attr, &cntr, NULL));
	ASSERT_EQ(0, fi_av_open(ctx->domain, &av_attr, &av, NULL));

	ASSERT_EQ(0, prov_capture_begin(&cap));
	ret = fi_close(&ctx->domain->fid);
	log = prov_capture_end(&cap);
	EXPECT_EQ(-FI_EBUSY, ret);
	EXPECT_NE(NULL, strstr(log, "swnic0"));
	EXPECT_NE(NULL, strstr(log, "2 completion queue(s)")) TH_LOG("%s", log);
	EXPECT_NE(NULL, strstr(log, "1 counter(s)")) TH_LOG("%s", log);
	EXPECT_NE(NULL, strstr(log, "1 address vector(s)")) TH_LOG("%s", log);
	EXPECT_EQ(NULL, strstr(log, "memory region")) TH_LOG("%s", log);

	/* The fabric is busy too, with its domain. */
	EXPECT_EQ(-FI_EBUSY, fi_close(&ctx->fabric->fid));

	EXPECT_EQ(0, fi_close(&cq->fid));
	EXPECT_EQ(0, fi_close(&cq2->fid));
	EXPECT_EQ(0, fi_close(&cntr->fid));
	ASSERT_EQ(-FI_EBUSY, fi_close(&ctx->domain->fid));
	EXPECT_EQ(0, fi_close(&av->fid));
	EXPECT_EQ(0, fi_close(&ctx->domain->fid));
	ctx->domain = NULL;
	prov_close(ctx);
}

TEST_F(dom, fabric_busy_with_eq)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_NONE };
	struct fid_eq *eq;

	ASSERT_EQ(0, fi_eq_open(self->ctx.fabric, &attr, &eq, NULL));
	ASSERT_EQ(0, fi_close(&self->ctx.domain->fid));
	self->ctx.domain = NULL;
	EXPECT_EQ(-FI_EBUSY, fi_close(&self->ctx.fabric->fid));
	EXPECT_EQ(0, fi_close(&eq->fid));
}

TEST_F(dom, domain2)
{
	struct fid_domain *d2;

	/* flags 0 is fi_domain */
	ASSERT_EQ(0, fi_domain2(self->ctx.fabric, self->ctx.info, &d2, 0,
				(void *)7));
	EXPECT_EQ((void *)7, d2->fid.context);
	EXPECT_EQ(0, fi_close(&d2->fid));
	EXPECT_EQ(-FI_ENOSYS, fi_domain2(self->ctx.fabric, self->ctx.info,
					 &d2, FI_PEER, NULL));
	EXPECT_EQ(-FI_EBADFLAGS, fi_domain2(self->ctx.fabric, self->ctx.info,
					    &d2, 1ULL << 62, NULL));
}

TEST_F(dom, two_domains_are_two_kernel_domains)
{
	struct fi_swnic_ops_domain *ops = prov_ext(self->ctx.domain);
	struct swnic_query_device q1 = { .size = sizeof(q1) };
	struct swnic_query_device q2 = { .size = sizeof(q2) };
	struct fid_domain *d2;

	ASSERT_EQ(0, fi_domain(self->ctx.fabric, self->ctx.info, &d2, NULL));
	ASSERT_EQ(0, ops->query_device(self->ctx.domain, &q1));
	ASSERT_EQ(0, ops->query_device(d2, &q2));
	EXPECT_NE(q1.domain_id, q2.domain_id);
	EXPECT_EQ(q1.dev_index, q2.dev_index);
	EXPECT_EQ(0, fi_close(&d2->fid));
}

TEST_F(dom, unknown_domain)
{
	struct fi_info *info = fi_dupinfo(self->ctx.info);
	struct fid_domain *d;

	ASSERT_NE(NULL, info);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup("swnic-nosuch");
	EXPECT_EQ(-FI_ENODEV, fi_domain(self->ctx.fabric, info, &d, NULL));
	free(info->domain_attr->name);
	info->domain_attr->name = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_domain(self->ctx.fabric, info, &d, NULL));
	fi_freeinfo(info);
}

TEST_F(dom, attributes_checked_at_open)
{
	struct fi_info *info = fi_dupinfo(self->ctx.info);
	struct fid_domain *d;

	info->domain_attr->mr_cnt = (size_t)1 << 40;
	EXPECT_EQ(-FI_EINVAL, fi_domain(self->ctx.fabric, info, &d, NULL));
	info->domain_attr->mr_cnt = 0;
	info->domain_attr->threading = 77;
	EXPECT_EQ(-FI_EINVAL, fi_domain(self->ctx.fabric, info, &d, NULL));
	info->domain_attr->threading = FI_THREAD_DOMAIN;
	info->domain_attr->tclass = FI_TC_DSCP | 0x80;
	EXPECT_EQ(-FI_EINVAL, fi_domain(self->ctx.fabric, info, &d, NULL));
	info->domain_attr->tclass = fi_tc_dscp_set(46);
	ASSERT_EQ(0, fi_domain(self->ctx.fabric, info, &d, NULL));
	EXPECT_EQ(0, fi_close(&d->fid));
	/* IPv6 only on the wire: not on this local-only device. */
	info->addr_format = FI_SOCKADDR_IN6;
	EXPECT_EQ(-FI_EINVAL, fi_domain(self->ctx.fabric, info, &d, NULL));
	fi_freeinfo(info);
}

TEST_F(dom, every_threading_model)
{
	static const enum fi_threading models[] = {
		FI_THREAD_SAFE, FI_THREAD_FID, FI_THREAD_DOMAIN,
		FI_THREAD_COMPLETION, FI_THREAD_ENDPOINT,
	};
	struct fi_info *hints, *info;
	struct fid_domain *d;
	size_t i;

	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		hints = prov_hints();
		hints->ep_attr->type = FI_EP_RDM;
		hints->domain_attr->threading = models[i];
		ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
		EXPECT_EQ(models[i], info->domain_attr->threading);
		ASSERT_EQ(0, fi_domain(self->ctx.fabric, info, &d, NULL));
		EXPECT_EQ(0, fi_close(&d->fid));
		fi_freeinfo(info);
		fi_freeinfo(hints);
	}
}

TEST_F(dom, bind_eq)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_NONE };
	struct fi_cq_attr cq_attr = { 0 };
	struct fid_eq *eq, *eq2;
	struct fid_cq *cq;

	ASSERT_EQ(0, fi_eq_open(self->ctx.fabric, &attr, &eq, NULL));
	ASSERT_EQ(0, fi_eq_open(self->ctx.fabric, &attr, &eq2, NULL));
	ASSERT_EQ(0, fi_cq_open(self->ctx.domain, &cq_attr, &cq, NULL));

	EXPECT_EQ(-FI_EBADFLAGS, fi_domain_bind(self->ctx.domain, &eq->fid,
						FI_SEND));
	EXPECT_EQ(-FI_EINVAL, fi_domain_bind(self->ctx.domain, &cq->fid, 0));
	ASSERT_EQ(0, fi_domain_bind(self->ctx.domain, &eq->fid, SWNIC_REG_MR));
	EXPECT_EQ(-FI_EALREADY, fi_domain_bind(self->ctx.domain, &eq2->fid, 0));

	/* A bound EQ cannot close before the domain. */
	EXPECT_EQ(-FI_EBUSY, fi_close(&eq->fid));
	EXPECT_EQ(0, fi_close(&eq2->fid));
	EXPECT_EQ(0, fi_close(&cq->fid));
	ASSERT_EQ(0, fi_close(&self->ctx.domain->fid));
	self->ctx.domain = NULL;
	EXPECT_EQ(0, fi_close(&eq->fid));
}

TEST_F(dom, open_ops)
{
	struct fi_swnic_ops_domain *ops = NULL;
	struct swnic_query_device q = { .size = sizeof(q) };
	struct fi_swnic_stats st = { .size = sizeof(st) };
	void *other = NULL;

	ASSERT_EQ(0, fi_open_ops(&self->ctx.domain->fid, FI_SWNIC_DOMAIN_OPS_1,
				 0, (void **)&ops, NULL));
	ASSERT_NE(NULL, ops);
	EXPECT_EQ(sizeof(*ops), ops->size);
	EXPECT_TRUE(FI_CHECK_OP(ops, struct fi_swnic_ops_domain, mr_query));
	ASSERT_EQ(0, ops->query_device(self->ctx.domain, &q));
	EXPECT_STREQ("swnic0", (char *)q.name);
	EXPECT_TRUE(q.features & SWNIC_FEAT_QUERY);
	EXPECT_EQ(0, ops->query_stats(self->ctx.domain, &st));
	EXPECT_EQ(sizeof(st), st.size);
	/* the kernel's size contract holds through the op */
	q.size = 4;
	EXPECT_EQ(-FI_EINVAL, ops->query_device(self->ctx.domain, &q));

	EXPECT_EQ(-FI_ENOSYS, fi_open_ops(&self->ctx.domain->fid,
					  "swnic_domain_ops_v9", 0, &other,
					  NULL));
	EXPECT_EQ(-FI_EBADFLAGS, fi_open_ops(&self->ctx.domain->fid,
					     FI_SWNIC_DOMAIN_OPS_1, 1,
					     &other, NULL));
	/* Other objects have no domain ops. */
	EXPECT_EQ(-FI_ENOSYS, fi_open_ops(&self->ctx.fabric->fid,
					  FI_SWNIC_DOMAIN_OPS_1, 0, &other,
					  NULL));
}

static ssize_t copy_from(void *dest, size_t size, enum fi_hmem_iface iface,
			 uint64_t device, const struct iovec *iov,
			 size_t count, uint64_t offset)
{
	return -FI_ENOSYS;
}

static ssize_t copy_to(enum fi_hmem_iface iface, uint64_t device,
		       const struct iovec *iov, size_t count, uint64_t offset,
		       const void *src, size_t size)
{
	return -FI_ENOSYS;
}

TEST_F(dom, set_ops_hmem_override)
{
	struct fi_hmem_override_ops ops = {
		.size = sizeof(ops),
		.copy_from_hmem_iov = copy_from,
		.copy_to_hmem_iov = copy_to,
	};
	struct fi_hmem_override_ops bad;

	EXPECT_EQ(0, fi_set_ops(&self->ctx.domain->fid,
				FI_SET_OPS_HMEM_OVERRIDE, 0, &ops, NULL));
	bad = ops;
	bad.copy_to_hmem_iov = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_set_ops(&self->ctx.domain->fid,
					 FI_SET_OPS_HMEM_OVERRIDE, 0, &bad,
					 NULL));
	bad = ops;
	bad.copy_from_hmem_iov = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_set_ops(&self->ctx.domain->fid,
					 FI_SET_OPS_HMEM_OVERRIDE, 0, &bad,
					 NULL));
	bad = ops;
	bad.size = sizeof(size_t);
	EXPECT_EQ(-FI_EINVAL, fi_set_ops(&self->ctx.domain->fid,
					 FI_SET_OPS_HMEM_OVERRIDE, 0, &bad,
					 NULL));
	EXPECT_EQ(-FI_EINVAL, fi_set_ops(&self->ctx.domain->fid,
					 FI_SET_OPS_HMEM_OVERRIDE, 0, NULL,
					 NULL));
	EXPECT_EQ(-FI_EBADFLAGS, fi_set_ops(&self->ctx.domain->fid,
					    FI_SET_OPS_HMEM_OVERRIDE, 1, &ops,
					    NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_set_ops(&self->ctx.domain->fid,
					 "no_such_ops", 0, &ops, NULL));
}

TEST_F(dom, getinfo_reports_open_instances)
{
	struct fi_info *hints = prov_hints(), *info, *cur;

	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	for (cur = info; cur; cur = cur->next) {
		EXPECT_EQ(self->ctx.fabric, cur->fabric_attr->fabric);
		EXPECT_EQ(self->ctx.domain, cur->domain_attr->domain);
	}
	fi_freeinfo(info);

	/* Restricting to an open domain. */
	hints->domain_attr->domain = self->ctx.domain;
	hints->fabric_attr->fabric = self->ctx.fabric;
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_STREQ("swnic0", info->domain_attr->name);
	fi_freeinfo(info);
	/* Something that is not an open swnic domain matches nothing. */
	hints->domain_attr->domain = (struct fid_domain *)self->ctx.fabric;
	EXPECT_EQ(-FI_ENODATA, prov_getinfo(NULL, NULL, 0, hints, &info));
	hints->domain_attr->domain = NULL;
	hints->fabric_attr->fabric = NULL;
	fi_freeinfo(hints);
}

/* RDM and MSG endpoints open; the objects swnic does not offer say so. */
TEST_F(dom, endpoint_kinds)
{
	enum fi_ep_type type = self->ctx.info->ep_attr->type;
	struct fid_ep *ep;
	struct fid_pep *pep;

	ASSERT_EQ(FI_EP_RDM, type);
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &ep, NULL));
	EXPECT_EQ(-FI_EBUSY, fi_close(&self->ctx.domain->fid));
	EXPECT_EQ(0, fi_close(&ep->fid));

	self->ctx.info->ep_attr->type = FI_EP_MSG;
	ASSERT_EQ(0, fi_endpoint(self->ctx.domain, self->ctx.info, &ep, NULL));
	EXPECT_EQ(0, fi_close(&ep->fid));
	ASSERT_EQ(0, fi_passive_ep(self->ctx.fabric, self->ctx.info, &pep,
				   NULL));
	EXPECT_EQ(0, fi_close(&pep->fid));
#if !SWNIC_FI_HAVE_2	/* removed in 2.0 */
	self->ctx.info->ep_attr->type = FI_EP_SOCK_DGRAM;
	EXPECT_EQ(-FI_ENOSYS, fi_endpoint(self->ctx.domain, self->ctx.info,
					  &ep, NULL));
#endif
	self->ctx.info->ep_attr->type = type;
	/*
	 * Scalable endpoints: prov_sep.c; shared rx contexts (prov_srx.c)
	 * take an endpoint's rx_attr, where the module has them.
	 */
	if (prov_feature(self->ctx.domain, SWNIC_FEAT_SRX)) {
		ASSERT_EQ(0, fi_srx_context(self->ctx.domain,
					    self->ctx.info->rx_attr, &ep,
					    NULL));
		EXPECT_EQ(-FI_EBUSY, fi_close(&self->ctx.domain->fid));
		EXPECT_EQ(0, fi_close(&ep->fid));
	} else {
		EXPECT_EQ(-FI_ENOSYS, fi_srx_context(self->ctx.domain,
						     self->ctx.info->rx_attr,
						     &ep, NULL));
	}
	/* Atomics are offered (prov_atomic.c); not bitwise on floats. */
	{
		struct fi_atomic_attr attr = { 0 };

		EXPECT_EQ(0, fi_query_atomic(self->ctx.domain, FI_INT32,
					     FI_SUM, &attr, 0));
		EXPECT_EQ(4, attr.size);
		EXPECT_EQ(-FI_EOPNOTSUPP, fi_query_atomic(self->ctx.domain,
							  FI_FLOAT, FI_BOR,
							  &attr, 0));
	}
}

SWNIC_DEPRECATED_BEGIN
/* Wait and poll sets open (prov_waitset tests them); a set is needed. */
TEST_F(dom, wait_and_poll_sets_open)
{
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_FD };
	struct fi_poll_attr pattr = { 0 };
	struct fi_cq_attr cq_attr = { .wait_obj = FI_WAIT_SET };
	struct fid_wait *wait;
	struct fid_poll *poll;
	struct fid_cq *cq;

	ASSERT_EQ(0, fi_wait_open(self->ctx.fabric, &wattr, &wait));
	ASSERT_EQ(0, fi_poll_open(self->ctx.domain, &pattr, &poll));
	EXPECT_EQ(-FI_EINVAL, fi_cq_open(self->ctx.domain, &cq_attr, &cq,
					 NULL));
	EXPECT_EQ(0, fi_close(&poll->fid));
	EXPECT_EQ(0, fi_close(&wait->fid));
}
SWNIC_DEPRECATED_END

TEST_F(dom, auth_key)
{
	struct fi_info *hints = prov_hints(), *info;
	uint32_t key = SWNIC_AUTH_KEY_DEFAULT, nokey = 0x7fff1234;
	uint8_t three[3] = { 1, 2, 3 };
	struct fid_domain *d;

	if (!prov_feature(self->ctx.domain, SWNIC_FEAT_AUTH_KEY))
		SKIP(return, "the kernel has no auth keys");
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->auth_key = (uint8_t *)&key;
	hints->domain_attr->auth_key_size = sizeof(key);
	ASSERT_EQ(0, prov_getinfo(NULL, NULL, 0, hints, &info));
	EXPECT_EQ(sizeof(key), info->domain_attr->auth_key_size);
	EXPECT_EQ(0, memcmp(&key, info->domain_attr->auth_key, sizeof(key)));
	ASSERT_EQ(0, fi_domain(self->ctx.fabric, info, &d, NULL));
	EXPECT_EQ(0, fi_close(&d->fid));

	/* A key with no service behind it: the kernel says no. */
	memcpy(info->domain_attr->auth_key, &nokey, sizeof(nokey));
	EXPECT_EQ(-FI_EINVAL, fi_domain(self->ctx.fabric, info, &d, NULL));
	fi_freeinfo(info);
	hints->domain_attr->auth_key = (uint8_t *)&nokey;
	EXPECT_EQ(-FI_ENODATA, prov_getinfo(NULL, NULL, 0, hints, &info));

	hints->domain_attr->auth_key = three;
	hints->domain_attr->auth_key_size = sizeof(three);
	EXPECT_EQ(-FI_ENODATA, prov_getinfo(NULL, NULL, 0, hints, &info));
	hints->domain_attr->auth_key = NULL;
	EXPECT_EQ(-FI_ENODATA, prov_getinfo(NULL, NULL, 0, hints, &info));
	hints->domain_attr->auth_key_size = 0;
	fi_freeinfo(hints);
}

TEST_F(dom, raw_keys)
{
	uint8_t raw[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint64_t key = 0, want;

	memcpy(&want, raw, sizeof(want));
	EXPECT_EQ(0, fi_mr_map_raw(self->ctx.domain, 0, raw, sizeof(raw),
				   &key, 0));
	EXPECT_EQ(want, key);
	EXPECT_EQ(-FI_EINVAL, fi_mr_map_raw(self->ctx.domain, 0, raw, 4,
					    &key, 0));
	EXPECT_EQ(0, fi_mr_unmap_key(self->ctx.domain, key));
}

TEST_HARNESS_MAIN
