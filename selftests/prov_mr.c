// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions of the swnic provider (fi_mr(3)) over the kernel's MR
 * ioctls: fi_mr_reg/regv/regattr, keys (application or provider chosen),
 * descriptors, virtual-address vs offset addressing, auth keys, argument
 * checks, asynchronous registration completing with FI_MR_COMPLETE on the
 * domain's EQ (FI_REG_MR), fi_mr_refresh after the pages changed, on-demand
 * registration, raw keys, fi_mr_bind, and the registration cache (hit,
 * miss, invalidation through the kernel's invalidation page after munmap,
 * eviction, ranges that wrap refused before it). Peer accesses go through the kernel's MR_ACCESS hook from a
 * second domain, as a remote endpoint would.
 */
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "harness_util.h"
#include "prov_util.h"

#define PAGE	4096UL

FIXTURE(mr)
{
	struct prov_ctx ctx;
	struct fi_swnic_ops_domain *ops;
	uint32_t dom_id;
	int peer;		/* another kernel domain of the device */
};

static int need_mr(struct prov_ctx *ctx)
{
	return prov_feature(ctx->domain, SWNIC_FEAT_MR | SWNIC_FEAT_MR_ACCESS);
}

FIXTURE_SETUP(mr)
{
	struct swnic_query_device q = { .size = sizeof(q) };

	struct fi_info *hints = prov_hints();

	PROV_REQUIRE_DEVICE();
	self->peer = -1;
	/* An application that supports the usual bits: swnic keeps only
	 * FI_MR_ALLOCATED (pinned regions, application keys, offsets).
	 */
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA;
	/* No FI_MR_PROV_KEY: the fixture's keys are the application's. */
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED |
				      FI_MR_VIRT_ADDR;
	ASSERT_EQ(0, prov_open(&self->ctx, hints));
	fi_freeinfo(hints);
	if (!need_mr(&self->ctx))
		SETUP_SKIP("the kernel has no memory registration");
	self->ops = prov_ext(self->ctx.domain);
	ASSERT_NE(NULL, self->ops);
	ASSERT_EQ(0, self->ops->query_device(self->ctx.domain, &q));
	self->dom_id = q.domain_id;
	self->peer = open(PROV_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->peer);
}

FIXTURE_TEARDOWN(mr)
{
	if (self->peer >= 0)
		close(self->peer);
	prov_close(&self->ctx);
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

static uint32_t peer_auth_key(int fd)
{
	struct swnic_auth_key k = { .size = sizeof(k) };

	return ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &k) ? 0 : k.auth_key;
}

/* A peer's RMA through @key: 0 or -errno (ENOKEY, EACCES, ERANGE...). */
static int peer_rma(FIXTURE_DATA(mr) *self, int write, uint64_t key,
		    uint64_t addr, void *buf, uint64_t len)
{
	struct swnic_mr_access a = {
		.size = sizeof(a),
		.flags = write ? SWNIC_MR_ACCESS_F_WRITE : 0,
		.key = key, .addr = addr, .len = len,
		.buf = (uintptr_t)buf,
		.access = write ? SWNIC_MR_ACCESS_REMOTE_WRITE :
				  SWNIC_MR_ACCESS_REMOTE_READ,
		.auth_key = peer_auth_key(self->peer),
		.domain_id = self->dom_id,
	};

	return ioctl(self->peer, SWNIC_IOCTL_MR_ACCESS, &a) ? -errno : 0;
}

static int mr_state(FIXTURE_DATA(mr) *self, struct fid_mr *mr,
		    struct swnic_mr_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	return self->ops->mr_query(mr, q) ? -1 : (int)q->state;
}

/* A domain of this fabric with @mr_mode (from the fixture's info). */
static struct fid_domain *domain_with(FIXTURE_DATA(mr) *self, int mr_mode)
{
	struct fi_info *info = fi_dupinfo(self->ctx.info);
	struct fid_domain *d = NULL;

	info->domain_attr->mr_mode = mr_mode;
	if (fi_domain(self->ctx.fabric, info, &d, NULL))
		d = NULL;
	fi_freeinfo(info);
	return d;
}

TEST_F(mr, reg_and_peer_access)
{
	char *buf = map(2 * PAGE), out[8];
	struct swnic_mr_query q;
	struct fid_mr *mr;
	uint64_t key;

	ASSERT_NE(NULL, buf);
	/* The fixture's domain: FI_MR_ALLOCATED, user keys, offsets. */
	ASSERT_EQ(FI_MR_ALLOCATED, self->ctx.info->domain_attr->mr_mode);
	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, 2 * PAGE,
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0x5eed, 0,
			       &mr, (void *)0x42));
	EXPECT_EQ(FI_CLASS_MR, mr->fid.fclass);
	EXPECT_EQ((void *)0x42, mr->fid.context);
	EXPECT_NE(NULL, fi_mr_desc(mr));
	key = fi_mr_key(mr);
	EXPECT_EQ(0x5eed, key);
	ASSERT_EQ(SWNIC_MR_STATE_VALID, mr_state(self, mr, &q));
	EXPECT_EQ(2 * PAGE, q.pinned_bytes);
	EXPECT_EQ((uintptr_t)buf, q.addr);
	EXPECT_FALSE(q.reg_flags & SWNIC_MR_REG_VIRT_ADDR);

	/* Offset addressing: a peer writes at offset PAGE + 3. */
	ASSERT_EQ(0, peer_rma(self, 1, key, PAGE + 3, "swnic", 6));
	EXPECT_STREQ("swnic", buf + PAGE + 3);
	ASSERT_EQ(0, peer_rma(self, 0, key, PAGE + 3, out, 6));
	EXPECT_STREQ("swnic", out);
	EXPECT_EQ(-ERANGE, peer_rma(self, 0, key, 2 * PAGE, out, 1));

	/* Closed: the key is refused at once. */
	ASSERT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(-ENOKEY, peer_rma(self, 0, key, 0, out, 1));
	munmap(buf, 2 * PAGE);
}

TEST_F(mr, access_rights_enforced)
{
	char *buf = map(PAGE), out[4];
	struct fid_mr *mr;

	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, PAGE, FI_REMOTE_READ, 0,
			       77, 0, &mr, NULL));
	EXPECT_EQ(0, peer_rma(self, 0, 77, 0, out, 4));
	EXPECT_EQ(-EACCES, peer_rma(self, 1, 77, 0, out, 4));
	EXPECT_EQ(0, fi_close(&mr->fid));
	munmap(buf, PAGE);
}

TEST_F(mr, user_keys_unique)
{
	char *buf = map(PAGE);
	struct fid_mr *a, *b;

	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, PAGE, FI_REMOTE_WRITE, 0,
			       9, 0, &a, NULL));
	EXPECT_EQ(-FI_ENOKEY, fi_mr_reg(self->ctx.domain, buf, PAGE,
					FI_REMOTE_WRITE, 0, 9, 0, &b, NULL));
	ASSERT_EQ(0, fi_close(&a->fid));
	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, PAGE, FI_REMOTE_WRITE, 0,
			       9, 0, &b, NULL));
	EXPECT_EQ(0, fi_close(&b->fid));
	munmap(buf, PAGE);
}

TEST_F(mr, prov_keys_and_virt_addr)
{
	struct fid_domain *d = domain_with(self, FI_MR_ALLOCATED |
					   FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	char *buf = map(PAGE), out[4];
	uint64_t base = 0, k1, k2;
	uint8_t raw[16];
	size_t size = 2;
	struct swnic_query_device q = { .size = sizeof(q) };
	struct fid_mr *a, *b;

	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, self->ops->query_device(d, &q));
	self->dom_id = q.domain_id;
	/* requested_key is ignored with FI_MR_PROV_KEY. */
	ASSERT_EQ(0, fi_mr_reg(d, buf, PAGE, FI_REMOTE_READ, 0, 1, 0, &a,
			       NULL));
	ASSERT_EQ(0, fi_mr_reg(d, buf, PAGE, FI_REMOTE_READ, 0, 1, 0, &b,
			       NULL));
	k1 = fi_mr_key(a);
	k2 = fi_mr_key(b);
	EXPECT_NE(k1, k2);
	EXPECT_NE(FI_KEY_NOTAVAIL, k1);
	/* Virtual addressing: peers name the buffer's address. */
	buf[10] = 'v';
	ASSERT_EQ(0, peer_rma(self, 0, k1, (uintptr_t)buf + 10, out, 1));
	EXPECT_EQ('v', out[0]);
	EXPECT_EQ(-ERANGE, peer_rma(self, 0, k1, 10, out, 1));

	/* Raw keys: 8 bytes, and the base peers address from. */
	EXPECT_EQ(-FI_ETOOSMALL, fi_mr_raw_attr(a, &base, raw, &size, 0));
	EXPECT_EQ(8, size);
	size = sizeof(raw);
	ASSERT_EQ(0, fi_mr_raw_attr(a, &base, raw, &size, 0));
	EXPECT_EQ(8, size);
	EXPECT_EQ((uintptr_t)buf, base);
	EXPECT_EQ(0, memcmp(raw, &k1, 8));

	EXPECT_EQ(0, fi_close(&a->fid));
	EXPECT_EQ(0, fi_close(&b->fid));
	EXPECT_EQ(0, fi_close(&d->fid));
	munmap(buf, PAGE);
}

TEST_F(mr, regv_and_regattr)
{
	char *buf = map(2 * PAGE);
	struct iovec iov[2] = {
		{ buf, PAGE }, { buf + PAGE, PAGE },
	};
	uint32_t key = 0;
	struct fi_mr_attr attr = {
		.mr_iov = iov, .iov_count = 1, .access = FI_REMOTE_READ,
		.requested_key = 500, .context = (void *)5,
	};
	struct swnic_mr_query q;
	struct fid_mr *mr;

	ASSERT_EQ(0, fi_mr_regv(self->ctx.domain, iov, 1, FI_REMOTE_READ, 0,
				400, 0, &mr, NULL));
	EXPECT_EQ(400, fi_mr_key(mr));
	EXPECT_EQ(0, fi_close(&mr->fid));
	/* Two iovs, one key (prov_mr_iov has the rest). */
	ASSERT_EQ(0, fi_mr_regv(self->ctx.domain, iov, 2, FI_REMOTE_READ, 0,
				401, 0, &mr, NULL));
	EXPECT_EQ(401, fi_mr_key(mr));
	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(-FI_EINVAL, fi_mr_regv(self->ctx.domain, iov, 0,
					 FI_REMOTE_READ, 0, 401, 0, &mr,
					 NULL));

	ASSERT_EQ(0, fi_mr_regattr(self->ctx.domain, &attr, 0, &mr));
	EXPECT_EQ(500, fi_mr_key(mr));
	EXPECT_EQ((void *)5, mr->fid.context);
	EXPECT_EQ(0, fi_close(&mr->fid));

	/* An auth key per MR: the domain's own is accepted... */
	if (prov_feature(self->ctx.domain, SWNIC_FEAT_AUTH_KEY)) {
		key = peer_auth_key(self->peer);
		attr.auth_key = (uint8_t *)&key;
		attr.auth_key_size = sizeof(key);
		ASSERT_EQ(0, fi_mr_regattr(self->ctx.domain, &attr, 0, &mr));
		ASSERT_EQ(SWNIC_MR_STATE_VALID, mr_state(self, mr, &q));
		EXPECT_EQ(key, q.auth_key);
		EXPECT_EQ(0, fi_close(&mr->fid));
	}
	/* ...a key of the wrong size is not. */
	attr.auth_key_size = 2;
	attr.auth_key = (uint8_t *)&key;
	EXPECT_EQ(-FI_EINVAL, fi_mr_regattr(self->ctx.domain, &attr, 0, &mr));
	munmap(buf, 2 * PAGE);
}

TEST_F(mr, bad_arguments)
{
	char *buf = map(PAGE);
	struct fid_mr *mr;

	EXPECT_EQ(-FI_EINVAL, fi_mr_reg(self->ctx.domain, buf, 0,
					FI_REMOTE_READ, 0, 1, 0, &mr, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_mr_reg(self->ctx.domain, buf, PAGE,
					FI_REMOTE_READ, 8, 1, 0, &mr, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_mr_reg(self->ctx.domain, buf, PAGE, 0, 0, 1,
					0, &mr, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_mr_reg(self->ctx.domain, buf, PAGE,
					FI_TAGGED, 0, 1, 0, &mr, NULL));
	EXPECT_EQ(-FI_EBADFLAGS, fi_mr_reg(self->ctx.domain, buf, PAGE,
					   FI_REMOTE_READ, 0, 1, FI_MULTI_RECV,
					   &mr, NULL));
	/* FI_RMA_EVENT (a region to bind counters to) is accepted. */
	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, PAGE, FI_REMOTE_READ, 0,
			       2, FI_RMA_EVENT, &mr, NULL));
	EXPECT_EQ(0, fi_close(&mr->fid));
	munmap(buf, PAGE);
	/* Pinned registration needs mapped memory (FI_MR_ALLOCATED). */
	EXPECT_EQ(-FI_EFAULT, fi_mr_reg(self->ctx.domain, buf, PAGE,
					FI_REMOTE_READ, 0, 1, 0, &mr, NULL));
}

/*
 * fi_mr(3): iface "is ignored unless the application has requested the
 * FI_HMEM capability", which swnic never offers (device memory is the
 * HMEM override's, prov_contract's hmem_needs_an_override). A domain with
 * neither registers the region as host memory whatever iface says - one
 * range or several, local or remote access - and the MR is one like any.
 */
TEST_F(mr, device_iface_ignored_without_fi_hmem)
{
	static const enum fi_hmem_iface ifaces[] = {
		FI_HMEM_CUDA, FI_HMEM_ROCR, FI_HMEM_ZE,
	};
	char *buf = map(2 * PAGE);
	struct iovec iov[2] = {
		{ buf, PAGE }, { buf + PAGE, PAGE },
	};
	struct fi_mr_attr attr = {
		.mr_iov = iov, .iov_count = 1,
		.access = FI_SEND | FI_RECV,
	};
	struct fid_mr *mr;

	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < sizeof(ifaces) / sizeof(ifaces[0]); i++) {
		attr.iface = ifaces[i];
		attr.requested_key = 3 * i + 1;
		attr.iov_count = 1;
		attr.access = FI_SEND | FI_RECV;
		mr = NULL;
		EXPECT_EQ(0, fi_mr_regattr(self->ctx.domain, &attr, 0, &mr))
			TH_LOG("iface %d", ifaces[i]);
		if (mr)
			EXPECT_EQ(0, fi_close(&mr->fid));
		attr.requested_key++;
		attr.iov_count = 1 + (self->ctx.info->domain_attr->mr_iov_limit > 1);
		mr = NULL;
		EXPECT_EQ(0, fi_mr_regattr(self->ctx.domain, &attr, 0, &mr))
			TH_LOG("iface %d, %zu ranges", ifaces[i], attr.iov_count);
		if (mr)
			EXPECT_EQ(0, fi_close(&mr->fid));
		attr.requested_key++;
		attr.iov_count = 1;
		attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
		mr = NULL;
		EXPECT_EQ(0, fi_mr_regattr(self->ctx.domain, &attr, 0, &mr))
			TH_LOG("iface %d, remote access", ifaces[i]);
		if (mr)
			EXPECT_EQ(0, fi_close(&mr->fid));
	}
	munmap(buf, 2 * PAGE);
}

TEST_F(mr, bind_and_enable)
{
	char *buf = map(PAGE);
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr;
	struct fid_mr *mr;

	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, PAGE, FI_REMOTE_WRITE, 0,
			       3, 0, &mr, NULL));
	ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, &cattr, &cntr, NULL));
	/* Per-MR counters (FI_MR_RMA_EVENT), with the kernel's feature. */
	EXPECT_EQ(-FI_EINVAL, fi_mr_bind(mr, &cntr->fid, 0));
	EXPECT_EQ(-FI_EBADFLAGS, fi_mr_bind(mr, &cntr->fid, FI_SEND));
	if (prov_feature(self->ctx.domain, SWNIC_FEAT_MR_CNTR)) {
		EXPECT_EQ(0, fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE));
		EXPECT_EQ(-FI_EBUSY, fi_mr_bind(mr, &cntr->fid,
						FI_REMOTE_WRITE));
	} else {
		EXPECT_EQ(-FI_ENOSYS, fi_mr_bind(mr, &cntr->fid,
						 FI_REMOTE_WRITE));
	}
	EXPECT_EQ(-FI_EINVAL, fi_mr_bind(mr, &self->ctx.domain->fid, 0));
	EXPECT_EQ(0, fi_mr_enable(mr));
	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(0, fi_close(&cntr->fid));
	munmap(buf, PAGE);
}

/*
 * fi_mr_bind to a counter: one of the MR's domain only (the kernel's
 * counter ids are per domain, so another domain's counter would name one
 * of the MR's own, which would count instead), held while bound:
 * fi_close of the counter is -FI_EBUSY until the MR closes (fi_cntr(3)).
 */
TEST_F(mr, bind_cntr_of_its_domain_held)
{
	char *buf = map(PAGE);
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *mine, *other;
	struct fid_domain *d2;
	struct fid_mr *mr;

	if (!prov_feature(self->ctx.domain, SWNIC_FEAT_MR_CNTR))
		SKIP(return, "the kernel has no per-MR counters");
	d2 = domain_with(self, self->ctx.info->domain_attr->mr_mode);
	ASSERT_NE(NULL, d2);
	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, PAGE, FI_REMOTE_WRITE, 0,
			       5, 0, &mr, NULL));
	ASSERT_EQ(0, fi_cntr_open(self->ctx.domain, &cattr, &mine, NULL));
	ASSERT_EQ(0, fi_cntr_open(d2, &cattr, &other, NULL));
	EXPECT_EQ(-FI_EINVAL, fi_mr_bind(mr, &other->fid, FI_REMOTE_WRITE));
	EXPECT_EQ(0, fi_close(&other->fid));
	EXPECT_EQ(0, fi_mr_bind(mr, &mine->fid, FI_REMOTE_WRITE));
	EXPECT_EQ(-FI_EBUSY, fi_close(&mine->fid));
	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(0, fi_close(&mine->fid));
	EXPECT_EQ(0, fi_close(&d2->fid));
	munmap(buf, PAGE);
}

TEST(domain_busy_with_mr)
{
	struct prov_capture cap;
	struct prov_ctx ctx;
	struct fid_mr *mr;
	const char *log;
	char *buf;
	int ret;

	PROV_REQUIRE_DEVICE();
	prov_log_warnings();
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	if (!need_mr(&ctx))
		SKIP(return, "the kernel has no memory registration");
	buf = map(PAGE);
	ASSERT_EQ(0, fi_mr_reg(ctx.domain, buf, PAGE, FI_REMOTE_WRITE, 0, 3,
			       0, &mr, NULL));
	ASSERT_EQ(0, prov_capture_begin(&cap));
	ret = fi_close(&ctx.domain->fid);
	log = prov_capture_end(&cap);
	EXPECT_EQ(-FI_EBUSY, ret);
	EXPECT_NE(NULL, strstr(log, "1 memory region(s) still open"))
		TH_LOG("%s", log);
	EXPECT_EQ(0, fi_close(&mr->fid));
	prov_close(&ctx);
	munmap(buf, PAGE);
}

TEST_F(mr, async_registration)
{
	struct fi_eq_attr eattr = { .wait_obj = FI_WAIT_FD };
	struct fi_eq_err_entry err = { 0 };
	char *buf = map(4 * PAGE), out[2];
	struct fi_eq_entry ev;
	struct fid_mr *mr, *bad;
	struct fid_eq *eq;
	uint32_t event;
	void *hole;

	ASSERT_EQ(0, fi_eq_open(self->ctx.fabric, &eattr, &eq, NULL));
	ASSERT_EQ(0, fi_domain_bind(self->ctx.domain, &eq->fid, SWNIC_REG_MR));

	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, 4 * PAGE,
			       FI_REMOTE_READ, 0, 61, 0, &mr, (void *)0xc0));
	ASSERT_EQ(sizeof(ev), fi_eq_sread(eq, &event, &ev, sizeof(ev), 5000,
					  0));
	EXPECT_EQ(FI_MR_COMPLETE, event);
	EXPECT_EQ(&mr->fid, ev.fid);
	EXPECT_EQ((void *)0xc0, ev.context);
	/* Completed: the key works for peers. */
	EXPECT_EQ(61, fi_mr_key(mr));
	buf[0] = 'a';
	EXPECT_EQ(0, peer_rma(self, 0, 61, 0, out, 1));
	EXPECT_EQ('a', out[0]);

	/* A failed registration is an error event naming the MR. */
	hole = map(PAGE);
	munmap(hole, PAGE);
	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, hole, PAGE, FI_REMOTE_READ,
			       0, 62, 0, &bad, (void *)0xc1));
	EXPECT_EQ(-FI_EAVAIL, fi_eq_sread(eq, &event, &ev, sizeof(ev), 5000,
					  0));
	ASSERT_EQ(sizeof(err), fi_eq_readerr(eq, &err, 0));
	EXPECT_EQ(&bad->fid, err.fid);
	EXPECT_EQ((void *)0xc1, err.context);
	EXPECT_EQ(FI_EFAULT, err.err);
	EXPECT_EQ(FI_KEY_NOTAVAIL, fi_mr_key(bad));
	EXPECT_EQ(0, fi_close(&bad->fid));

	/* Closing right after the call waits for the registration. */
	ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf, PAGE, FI_REMOTE_READ,
			       0, 63, 0, &bad, NULL));
	EXPECT_EQ(0, fi_close(&bad->fid));
	EXPECT_EQ(sizeof(ev), fi_eq_sread(eq, &event, &ev, sizeof(ev), 5000,
					  0));

	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(0, fi_close(&self->ctx.domain->fid));
	self->ctx.domain = NULL;
	EXPECT_EQ(0, fi_close(&eq->fid));
	munmap(buf, 4 * PAGE);
}

/* fi_mr_refresh (FI_MR_MMU_NOTIFY): new pages behind the same range. */
TEST_F(mr, refresh_after_remap)
{
	char *buf = map(PAGE), out[2];
	struct fid_domain *d = domain_with(self, FI_MR_ALLOCATED |
					   FI_MR_MMU_NOTIFY);
	struct swnic_query_device q = { .size = sizeof(q) };
	struct swnic_mr_query mq;
	struct iovec iov = { buf, PAGE };
	struct fid_mr *mr;
	void *p;

	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, self->ops->query_device(d, &q));
	self->dom_id = q.domain_id;
	ASSERT_EQ(0, fi_mr_reg(d, buf, PAGE, FI_REMOTE_READ, 0, 71, 0, &mr,
			       NULL));
	buf[0] = 'o';
	/* Replace the page: the kernel revokes the MR. */
	p = mmap(buf, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ((void *)buf, p);
	buf[0] = 'n';
	EXPECT_EQ(SWNIC_MR_STATE_REVOKED, mr_state(self, mr, &mq));
	EXPECT_EQ(-EKEYREVOKED, peer_rma(self, 0, 71, 0, out, 1));

	EXPECT_EQ(-FI_EBADFLAGS, fi_mr_refresh(mr, &iov, 1, 1));
	iov.iov_len = 2 * PAGE;
	EXPECT_EQ(-FI_EINVAL, fi_mr_refresh(mr, &iov, 1, 0));
	/* Nor a range whose end wraps past the address space to below it. */
	iov.iov_len = (size_t)(0 - (uintptr_t)buf) + 1;
	EXPECT_EQ(-FI_EINVAL, fi_mr_refresh(mr, &iov, 1, 0));
	iov.iov_len = PAGE;
	ASSERT_EQ(0, fi_mr_refresh(mr, &iov, 1, 0));
	EXPECT_EQ(SWNIC_MR_STATE_VALID, mr_state(self, mr, &mq));
	ASSERT_EQ(0, peer_rma(self, 0, 71, 0, out, 1));
	EXPECT_EQ('n', out[0]);
	EXPECT_EQ(71, fi_mr_key(mr));
	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(0, fi_close(&d->fid));
	munmap(buf, PAGE);
}

TEST_F(mr, on_demand_registration)
{
	struct iovec iov;
	struct fi_mr_attr attr = { .mr_iov = &iov, .iov_count = 1,
				   .access = FI_REMOTE_READ | FI_REMOTE_WRITE,
				   .requested_key = 81 };
	char *buf = map(4 * PAGE), out[2];
	struct swnic_mr_query q;
	struct fid_mr *mr;

	if (!prov_feature(self->ctx.domain, SWNIC_FEAT_MR_ODP))
		SKIP(return, "the kernel has no on-demand registration");
	iov.iov_base = buf;
	iov.iov_len = 4 * PAGE;
	EXPECT_EQ(-FI_EBADFLAGS, self->ops->mr_regattr(self->ctx.domain, &attr,
				 0, FI_SWNIC_MR_ODP | FI_SWNIC_MR_PINNED,
				 &mr));
	ASSERT_EQ(0, self->ops->mr_regattr(self->ctx.domain, &attr, 0,
					   FI_SWNIC_MR_ODP, &mr));
	ASSERT_EQ(SWNIC_MR_STATE_VALID, mr_state(self, mr, &q));
	EXPECT_TRUE(q.reg_flags & SWNIC_MR_REG_ODP);
	EXPECT_EQ(0, q.pinned_bytes);
	ASSERT_EQ(0, peer_rma(self, 1, 81, 3 * PAGE, "z", 1));
	EXPECT_EQ('z', buf[3 * PAGE]);
	EXPECT_EQ(0, fi_close(&mr->fid));

	/* The pinned kind, explicitly. */
	ASSERT_EQ(0, self->ops->mr_regattr(self->ctx.domain, &attr, 0,
					   FI_SWNIC_MR_PINNED, &mr));
	ASSERT_EQ(SWNIC_MR_STATE_VALID, mr_state(self, mr, &q));
	EXPECT_EQ(4 * PAGE, q.pinned_bytes);
	EXPECT_EQ(0, peer_rma(self, 0, 81, 0, out, 1));
	EXPECT_EQ(0, fi_close(&mr->fid));
	munmap(buf, 4 * PAGE);
}

/* Without FI_MR_ALLOCATED the domain registers on demand. */
TEST_F(mr, unallocated_mode_is_odp)
{
	struct fid_domain *d;
	struct fi_swnic_ops_domain *ops;
	struct swnic_mr_query q = { .size = sizeof(q) };
	char *buf = map(PAGE);
	struct fid_mr *mr;

	if (!prov_feature(self->ctx.domain, SWNIC_FEAT_MR_ODP))
		SKIP(return, "the kernel has no on-demand registration");
	d = domain_with(self, FI_MR_VIRT_ADDR);
	ASSERT_NE(NULL, d);
	ops = prov_ext(d);
	ASSERT_EQ(0, fi_mr_reg(d, buf, PAGE, FI_REMOTE_READ, 0, 1, 0, &mr,
			       NULL));
	ASSERT_EQ(0, ops->mr_query(mr, &q));
	EXPECT_TRUE(q.reg_flags & SWNIC_MR_REG_ODP);
	EXPECT_TRUE(q.reg_flags & SWNIC_MR_REG_VIRT_ADDR);
	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(0, fi_close(&d->fid));
	munmap(buf, PAGE);
}

static void stats(struct __test_metadata *_metadata,
		  FIXTURE_DATA(mr) *self, struct fid_domain *d,
		  struct fi_swnic_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	ASSERT_EQ(0, self->ops->query_stats(d, st));
}

/* A domain whose registrations use provider keys, so they are cacheable. */
static struct fid_domain *cache_domain(FIXTURE_DATA(mr) *self)
{
	return domain_with(self, FI_MR_ALLOCATED | FI_MR_PROV_KEY);
}

TEST_F(mr, cache_hit_miss_invalidate)
{
	struct fid_domain *d = cache_domain(self);
	struct fi_swnic_inval_page page = { .size = sizeof(page) };
	struct fi_swnic_stats st;
	struct fid_mr *mr, *mr2;
	uint64_t gen;
	char *buf;

	ASSERT_NE(NULL, d);
	buf = map(8 * PAGE);
	ASSERT_EQ(0, self->ops->inval_page(d, &page));
	ASSERT_NE(NULL, page.page);
	EXPECT_EQ(0, page.entries & (page.entries - 1));

	ASSERT_EQ(0, fi_mr_reg(d, buf, 8 * PAGE, FI_SEND | FI_RECV, 0, 0, 0,
			       &mr, NULL));
	stats(_metadata, self, d, &st);
	if (!st.cache_misses)
		SKIP(goto out, "registration cache disabled");
	EXPECT_EQ(1, st.cache_misses);
	EXPECT_EQ(0, st.cache_hits);
	EXPECT_EQ(1, st.domain.mrs);

	/* A second MR inside the first's range shares its registration. */
	ASSERT_EQ(0, fi_mr_reg(d, buf + PAGE, PAGE, FI_SEND, 0, 0, 0, &mr2,
			       NULL));
	stats(_metadata, self, d, &st);
	EXPECT_EQ(1, st.cache_hits);
	EXPECT_EQ(1, st.domain.mrs);
	EXPECT_EQ(0, fi_close(&mr2->fid));

	/* Closed, the registration stays cached for the next user. */
	EXPECT_EQ(0, fi_close(&mr->fid));
	stats(_metadata, self, d, &st);
	EXPECT_EQ(1, st.cache_entries);
	EXPECT_EQ(1, st.cache_unused);
	EXPECT_EQ(1, st.domain.mrs);
	ASSERT_EQ(0, fi_mr_reg(d, buf, 8 * PAGE, FI_SEND, 0, 0, 0, &mr, NULL));
	stats(_metadata, self, d, &st);
	EXPECT_EQ(2, st.cache_hits);
	EXPECT_EQ(0, fi_close(&mr->fid));

	/* munmap: the kernel revokes and says so on the invalidation page;
	 * the cache drops the entry without any hook on munmap.
	 */
	gen = page.page->gen;
	munmap(buf, 8 * PAGE);
	EXPECT_LT(gen, page.page->gen);
	buf = map(8 * PAGE);
	ASSERT_EQ(0, fi_mr_reg(d, buf, 8 * PAGE, FI_SEND, 0, 0, 0, &mr, NULL));
	stats(_metadata, self, d, &st);
	EXPECT_EQ(1, st.cache_invalidations);
	EXPECT_EQ(2, st.cache_misses);
	EXPECT_EQ(2, st.cache_hits);
	EXPECT_EQ(page.page->gen, st.inval_gen);
	/* Only the fresh registration is left in the kernel. */
	EXPECT_EQ(1, st.domain.mrs);
	EXPECT_EQ(0, fi_close(&mr->fid));
out:
	EXPECT_EQ(0, fi_close(&d->fid));
	munmap(buf, 8 * PAGE);
}

/*
 * A range past the end of the address space (its end wraps, to 1 or to
 * 0): -FI_EINVAL, as the kernel answers, and before the cache is asked,
 * whose check the end wrapped past - a cached (closed) registration of
 * the range's first page then "covered" it, and the MR was made.
 */
TEST_F(mr, wrapping_range_refused_before_cache)
{
	struct fid_domain *d = cache_domain(self);
	char *buf = map(PAGE);
	size_t wrap = (size_t)(0 - (uintptr_t)buf);
	struct fi_swnic_stats st;
	struct fid_mr *mr;

	ASSERT_NE(NULL, d);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, fi_mr_reg(d, buf, PAGE, FI_SEND | FI_RECV, 0, 0, 0, &mr,
			       NULL));
	stats(_metadata, self, d, &st);
	if (!st.cache_misses)
		SKIP(goto out, "registration cache disabled");
	EXPECT_EQ(0, fi_close(&mr->fid));
	stats(_metadata, self, d, &st);
	EXPECT_EQ(1, st.cache_unused);

	mr = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_mr_reg(d, buf, wrap + 1, FI_SEND, 0, 0, 0,
					&mr, NULL));
	if (mr)
		fi_close(&mr->fid);
	mr = NULL;
	EXPECT_EQ(-FI_EINVAL, fi_mr_reg(d, buf, wrap, FI_SEND, 0, 0, 0, &mr,
					NULL));
	if (mr)
		fi_close(&mr->fid);
	stats(_metadata, self, d, &st);
	EXPECT_EQ(0, st.cache_hits);
	/* The cached registration serves its own range as before. */
	ASSERT_EQ(0, fi_mr_reg(d, buf, PAGE, FI_SEND, 0, 0, 0, &mr, NULL));
	stats(_metadata, self, d, &st);
	EXPECT_EQ(1, st.cache_hits);
	EXPECT_EQ(0, fi_close(&mr->fid));
out:
	EXPECT_EQ(0, fi_close(&d->fid));
	munmap(buf, PAGE);
}

TEST_F(mr, remote_access_never_cached)
{
	struct fid_domain *d = cache_domain(self);
	struct swnic_query_device q = { .size = sizeof(q) };
	char *buf = map(PAGE), out[1];
	struct fi_swnic_stats st;
	struct fid_mr *mr;
	uint64_t key;

	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, self->ops->query_device(d, &q));
	self->dom_id = q.domain_id;
	ASSERT_EQ(0, fi_mr_reg(d, buf, PAGE, FI_REMOTE_READ, 0, 0, 0, &mr,
			       NULL));
	key = fi_mr_key(mr);
	EXPECT_EQ(0, peer_rma(self, 0, key, 0, out, 1));
	EXPECT_EQ(0, fi_close(&mr->fid));
	EXPECT_EQ(-ENOKEY, peer_rma(self, 0, key, 0, out, 1));
	stats(_metadata, self, d, &st);
	EXPECT_EQ(0, st.cache_entries);
	EXPECT_EQ(0, st.domain.mrs);
	EXPECT_EQ(0, fi_close(&d->fid));
	munmap(buf, PAGE);
}

TEST(cache_eviction)
{
	struct fi_swnic_ops_domain *ops;
	struct fi_swnic_stats st = { .size = sizeof(st) };
	struct prov_ctx ctx;
	struct fi_info *info;
	struct fid_domain *d;
	struct fid_mr *mr;
	char *buf[4];
	int i;

	PROV_REQUIRE_DEVICE();
	setenv("FI_SWNIC_MR_CACHE_MAX", "2", 1);
	ASSERT_EQ(0, prov_open(&ctx, NULL));
	if (!need_mr(&ctx))
		SKIP(return, "the kernel has no memory registration");
	info = fi_dupinfo(ctx.info);
	info->domain_attr->mr_mode = FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ASSERT_EQ(0, fi_domain(ctx.fabric, info, &d, NULL));
	ops = prov_ext(d);
	for (i = 0; i < 4; i++) {
		buf[i] = map(PAGE);
		ASSERT_EQ(0, fi_mr_reg(d, buf[i], PAGE, FI_SEND, 0, 0, 0, &mr,
				       NULL));
		ASSERT_EQ(0, fi_close(&mr->fid));
	}
	ASSERT_EQ(0, ops->query_stats(d, &st));
	EXPECT_EQ(2, st.cache_evictions);
	EXPECT_EQ(2, st.cache_unused);
	EXPECT_EQ(2, st.domain.mrs);
	/* The domain's close releases the rest. */
	EXPECT_EQ(0, fi_close(&d->fid));
	for (i = 0; i < 4; i++)
		munmap(buf[i], PAGE);
	fi_freeinfo(info);
	prov_close(&ctx);
}

/* An endpoint with its own CQ, in @d, addressed through @av. */
struct small_ep {
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t addr;		/* its address in the AV */
};

static void small_ep_open(struct __test_metadata *_metadata,
			  struct prov_ctx *ctx, struct fid_av *av,
			  struct small_ep *e)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	char name[64];
	size_t len = sizeof(name);

	ASSERT_EQ(0, fi_endpoint(ctx->domain, ctx->info, &e->ep, NULL));
	ASSERT_EQ(0, fi_cq_open(ctx->domain, &cq_attr, &e->cq, NULL));
	ASSERT_EQ(0, fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV));
	ASSERT_EQ(0, fi_ep_bind(e->ep, &av->fid, 0));
	ASSERT_EQ(0, fi_enable(e->ep));
	ASSERT_EQ(0, fi_getname(&e->ep->fid, name, &len));
	ASSERT_EQ(1, fi_av_insert(av, name, 1, &e->addr, 0, NULL));
}

static void small_ep_close(struct small_ep *e)
{
	fi_close(&e->ep->fid);
	fi_close(&e->cq->fid);
}

/* One completion of @cq (up to 5 s): 1, or what the read said. */
static ssize_t small_cq_wait(struct fid_cq *cq)
{
	struct fi_cq_entry e;

	for (int i = 0; i < 5000; i++) {
		ssize_t n = fi_cq_read(cq, &e, 1);

		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

/* @len bytes from @a into @buf at @b, checked. */
static void small_transfer(struct __test_metadata *_metadata,
			   struct small_ep *a, struct small_ep *b,
			   unsigned char *buf, size_t len, int seed)
{
	unsigned char *out = malloc(len);

	ASSERT_NE(NULL, out);
	for (size_t i = 0; i < len; i++)
		out[i] = (unsigned char)(i * 29 + seed);
	memset(buf, 0, len);
	ASSERT_EQ(0, fi_recv(b->ep, buf, len, NULL, FI_ADDR_UNSPEC, NULL));
	ASSERT_EQ(0, fi_send(a->ep, out, len, NULL, b->addr, NULL));
	ASSERT_EQ(1, small_cq_wait(a->cq));
	ASSERT_EQ(1, small_cq_wait(b->cq));
	EXPECT_EQ(0, memcmp(out, buf, len));
	free(out);
}

/*
 * An unprivileged process under RLIMIT_MEMLOCK: what the cache pinned on
 * its own for a receive buffer posted again (FI_SWNIC_RECV_REG_MIN) and
 * keeps unused never makes the application's registration fail - it
 * goes first - and a receive buffer that can no longer be registered is
 * still received into, as without registration.
 */
TEST(recv_registrations_give_way_under_memlock)
{
	size_t lim = 1 << 20, rlen = 512 * 1024, blen = 768 * 1024;
	struct rlimit rl = { lim, lim };
	struct fi_swnic_ops_domain *ops;
	struct fi_swnic_stats st = { .size = sizeof(st) };
	struct small_ep a, b;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	unsigned char *rbuf, *bbuf;
	struct prov_ctx ctx;
	struct fi_info *hints;
	struct fid_av *av;
	struct fid_mr *mr;
	unsigned long long caps = 0;
	char line[256];
	FILE *f;

	PROV_REQUIRE_DEVICE();
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	if (geteuid() == 0) {
		ASSERT_EQ(0, setgroups(0, NULL));
		ASSERT_EQ(0, setresgid(65534, 65534, 65534));
		ASSERT_EQ(0, setresuid(65534, 65534, 65534));
	}
	f = fopen("/proc/self/status", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	if (caps & (1ULL << 14))
		SKIP(return, "cannot shed CAP_IPC_LOCK");

	hints = prov_hints();
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->domain_attr->mr_mode = FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ASSERT_EQ(0, prov_open(&ctx, hints));
	fi_freeinfo(hints);
	if (!prov_feature(ctx.domain, SWNIC_FEAT_RECV_MR))
		SKIP(return, "the kernel has no SWNIC_FEAT_RECV_MR");
	ops = prov_ext(ctx.domain);
	ASSERT_NE(NULL, ops);
	ASSERT_EQ(0, fi_av_open(ctx.domain, &av_attr, &av, NULL));
	small_ep_open(_metadata, &ctx, av, &a);
	small_ep_open(_metadata, &ctx, av, &b);
	rbuf = map(rlen);
	bbuf = map(blen);
	ASSERT_NE(NULL, rbuf);
	ASSERT_NE(NULL, bbuf);

	/* Posted twice: registered, and kept by the cache when done. */
	small_transfer(_metadata, &a, &b, rbuf, rlen, 1);
	small_transfer(_metadata, &a, &b, rbuf, rlen, 2);
	ASSERT_EQ(0, ops->query_stats(ctx.domain, &st));
	EXPECT_EQ(rlen, st.domain.pinned_bytes);
	EXPECT_EQ(1, st.cache_unused);

	/*
	 * The application's registration is over the limit with it: the
	 * kernel refuses the first try, the cache lets go, the second works.
	 */
	ASSERT_EQ(0, fi_mr_reg(ctx.domain, bbuf, blen, FI_REMOTE_WRITE, 0, 0, 0,
			       &mr, NULL));
	ASSERT_EQ(0, ops->query_stats(ctx.domain, &st));
	EXPECT_EQ(blen, st.domain.pinned_bytes);
	EXPECT_EQ(1, st.domain.memlock_denied);
	EXPECT_EQ(0, st.cache_unused);
	EXPECT_EQ(1, st.cache_evictions);

	/* The buffer again, twice: no room to register it, received into. */
	small_transfer(_metadata, &a, &b, rbuf, rlen, 3);
	small_transfer(_metadata, &a, &b, rbuf, rlen, 4);
	small_transfer(_metadata, &a, &b, rbuf, rlen, 5);
	ASSERT_EQ(0, ops->query_stats(ctx.domain, &st));
	EXPECT_EQ(blen, st.domain.pinned_bytes);
	EXPECT_EQ(2, st.domain.memlock_denied);

	EXPECT_EQ(0, fi_close(&mr->fid));
	small_ep_close(&a);
	small_ep_close(&b);
	fi_close(&av->fid);
	munmap(rbuf, rlen);
	munmap(bbuf, blen);
	prov_close(&ctx);
}

/*
 * A receive buffer posted twice is registered by the cache (every local
 * right, no remote one); the application's own fi_mr_reg of it must find
 * that registration, not pin the pages a second time - in a domain with
 * FI_MR_VIRT_ADDR too, which says how peers address remote-access MRs
 * and changes nothing for a local one (the owner's accesses are by
 * virtual address either way).
 */
static void recv_buffer_then_app_registration(struct __test_metadata *_metadata,
					      uint64_t mr_mode)
{
	size_t rlen = 128 * 1024;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_swnic_stats st = { .size = sizeof(st) }, st2;
	struct fi_swnic_ops_domain *ops;
	struct small_ep a, b;
	unsigned char *rbuf;
	struct prov_ctx ctx;
	struct fi_info *hints;
	struct fid_av *av;
	struct fid_mr *mr;

	PROV_REQUIRE_DEVICE();
	hints = prov_hints();
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	ASSERT_EQ(0, prov_open(&ctx, hints));
	fi_freeinfo(hints);
	/* fi_getinfo keeps only FI_MR_ALLOCATED: the domain asks for more. */
	ASSERT_EQ(0, fi_close(&ctx.domain->fid));
	ctx.info->domain_attr->mr_mode = (int)mr_mode;
	ASSERT_EQ(0, fi_domain(ctx.fabric, ctx.info, &ctx.domain, NULL));
	if (!prov_feature(ctx.domain, SWNIC_FEAT_RECV_MR))
		SKIP(return, "the kernel has no SWNIC_FEAT_RECV_MR");
	ops = prov_ext(ctx.domain);
	ASSERT_NE(NULL, ops);
	ASSERT_EQ(0, fi_av_open(ctx.domain, &av_attr, &av, NULL));
	small_ep_open(_metadata, &ctx, av, &a);
	small_ep_open(_metadata, &ctx, av, &b);
	rbuf = map(rlen);
	ASSERT_NE(NULL, rbuf);

	/* Posted twice: registered by the cache, kept when done. */
	small_transfer(_metadata, &a, &b, rbuf, rlen, 1);
	small_transfer(_metadata, &a, &b, rbuf, rlen, 2);
	ASSERT_EQ(0, ops->query_stats(ctx.domain, &st));
	if (!st.cache_entries)
		SKIP(goto out, "registration cache disabled");
	EXPECT_EQ(1, st.cache_entries);
	EXPECT_EQ(rlen, st.domain.pinned_bytes);

	ASSERT_EQ(0, fi_mr_reg(ctx.domain, rbuf, rlen, FI_RECV, 0, 0, 0, &mr,
			       NULL));
	st2 = st;
	ASSERT_EQ(0, ops->query_stats(ctx.domain, &st2));
	EXPECT_EQ(st.cache_hits + 1, st2.cache_hits);
	EXPECT_EQ(st.cache_misses, st2.cache_misses);
	EXPECT_EQ(1, st2.cache_entries);
	EXPECT_EQ(st.domain.mrs, st2.domain.mrs);
	EXPECT_EQ(rlen, st2.domain.pinned_bytes);
	/* Received into through it, as through the cache's. */
	small_transfer(_metadata, &a, &b, rbuf, rlen, 3);
	EXPECT_EQ(0, fi_close(&mr->fid));
out:
	small_ep_close(&a);
	small_ep_close(&b);
	fi_close(&av->fid);
	munmap(rbuf, rlen);
	prov_close(&ctx);
}

TEST(app_registration_finds_a_recv_buffer_cached)
{
	recv_buffer_then_app_registration(_metadata,
					  FI_MR_ALLOCATED | FI_MR_PROV_KEY);
}

TEST(virt_addr_app_registration_finds_a_recv_buffer_cached)
{
	recv_buffer_then_app_registration(_metadata, FI_MR_ALLOCATED |
					  FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
}

TEST_F(mr, stats_follow_registrations)
{
	struct fi_swnic_stats st;
	char *buf = map(4 * PAGE);
	struct fid_mr *mr[3];
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, fi_mr_reg(self->ctx.domain, buf + i * PAGE, PAGE,
				       FI_REMOTE_READ, 0, 90 + i, 0, &mr[i],
				       NULL));
	stats(_metadata, self, self->ctx.domain, &st);
	EXPECT_EQ(3, st.domain.mrs);
	EXPECT_EQ(3 * PAGE, st.domain.pinned_bytes);
	EXPECT_LE(3, st.device.mrs);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, fi_close(&mr[i]->fid));
	stats(_metadata, self, self->ctx.domain, &st);
	EXPECT_EQ(0, st.domain.mrs);
	EXPECT_EQ(0, st.domain.pinned_bytes);
	/* A short stats struct is refused. */
	st.size = 4;
	EXPECT_EQ(-FI_EINVAL, self->ops->query_stats(self->ctx.domain, &st));
	munmap(buf, 4 * PAGE);
}

TEST_HARNESS_MAIN
