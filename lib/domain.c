// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Domains (fi_domain(3)). An swnic domain is one open file of the device's
 * char device: the kernel domain that owns its registrations and queues and
 * releases them when the file closes. The provider object keeps the
 * attributes it was opened with, the bound EQ, the HMEM override and counts
 * of the objects opened on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swnic.h"

static const char *const swnic_child_names[SWNIC_CHILD_MAX] = {
	[SWNIC_CHILD_MR] = "memory region",
	[SWNIC_CHILD_AV] = "address vector",
	[SWNIC_CHILD_CQ] = "completion queue",
	[SWNIC_CHILD_CNTR] = "counter",
	[SWNIC_CHILD_EP] = "endpoint",
	[SWNIC_CHILD_POLL] = "poll set",
};

struct swnic_domain *swnic_domain_registered(const struct fid_domain *fid)
{
	struct swnic_domain *dom, *found = NULL;
	struct swnic_list *pos;

	pthread_mutex_lock(&swnic_registry_lock);
	swnic_list_for_each(pos, &swnic_domains) {
		dom = swnic_list_entry(pos, struct swnic_domain, node);
		if (&dom->domain_fid == fid) {
			found = dom;
			break;
		}
	}
	pthread_mutex_unlock(&swnic_registry_lock);
	return found;
}

/**
 * swnic_domain_has_key() - is @key the auth key of @dom's endpoints?
 * @dom: an open domain
 * @key: an endpoint's auth key (ep_attr->auth_key)
 *
 * The kernel lets an endpoint hold keys besides its domain's
 * (SWNIC_IOCTL_EP_AUTH_KEY), but it always takes traffic with its
 * domain's key as well: it cannot make another key an endpoint's only
 * one. So an endpoint's own key must be the one its domain uses - the one
 * it took, or the default service's that the kernel gave it - and an
 * FI_AV_AUTH_KEY domain's endpoints take theirs from the AV only.
 */
bool swnic_domain_has_key(struct swnic_domain *dom, uint32_t key)
{
	uint32_t cur;

	if (dom->av_auth_key)
		return false;
	if (dom->has_auth_key)
		return dom->auth_key == key;
	return !swnic_dev_get_auth_key(dom->fd, &cur) && cur && cur == key;
}

struct fid_domain *swnic_domain_first(const char *name)
{
	struct fid_domain *fid = NULL;
	struct swnic_domain *dom;
	struct swnic_list *pos;

	pthread_mutex_lock(&swnic_registry_lock);
	swnic_list_for_each(pos, &swnic_domains) {
		dom = swnic_list_entry(pos, struct swnic_domain, node);
		if (name && !dom->internal && !strcmp(dom->dev.name, name)) {
			fid = &dom->domain_fid;
			break;
		}
	}
	pthread_mutex_unlock(&swnic_registry_lock);
	return fid;
}

/*
 * -FI_EBUSY while anything is open on the domain, with a warning that names
 * what: "domain swnic0: 2 memory region(s), 1 counter(s) still open".
 */
static int swnic_domain_busy(struct swnic_domain *dom)
{
	char buf[256];
	size_t len = 0;
	unsigned int n;
	int i;

	for (i = 0; i < SWNIC_CHILD_MAX; i++) {
		n = atomic_load(&dom->children[i]);
		if (!n)
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s%u %s(s)", len ? ", " : "", n,
					swnic_child_names[i]);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	if (!len)
		return 0;
	SWNIC_WARN(FI_LOG_DOMAIN, "domain %s: %s still open\n", dom->dev.name,
		   buf);
	return -FI_EBUSY;
}

static int swnic_domain_close(struct fid *fid)
{
	struct swnic_domain *dom =
		swnic_container_of(fid, struct swnic_domain, domain_fid.fid);
	int ret;

	pthread_mutex_lock(&dom->ctl_lock);
	ret = swnic_domain_busy(dom);
	pthread_mutex_unlock(&dom->ctl_lock);
	if (ret)
		return ret;

	pthread_mutex_lock(&swnic_registry_lock);
	swnic_list_del(&dom->node);
	pthread_mutex_unlock(&swnic_registry_lock);

	swnic_mr_domain_fini(dom);
	if (dom->eq)
		swnic_eq_bind_put(dom->eq);
	close(dom->fd);
	swnic_fabric_child(dom->fabric, &dom->fabric->ndomains, -1);
	pthread_mutex_destroy(&dom->ctl_lock);
	free(dom);
	return 0;
}

/* fi_domain_bind: the default EQ; FI_REG_MR makes registration async. */
static int swnic_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct swnic_domain *dom =
		swnic_container_of(fid, struct swnic_domain, domain_fid.fid);
	struct swnic_eq *eq;
	int ret = 0;

	if (!bfid)
		return -FI_EINVAL;
	if (flags & ~SWNIC_REG_MR) {
		SWNIC_WARN(FI_LOG_DOMAIN, "bind flags %#llx not supported\n",
			   (unsigned long long)(flags & ~SWNIC_REG_MR));
		return -FI_EBADFLAGS;
	}
	eq = swnic_eq_from_fid(bfid);
	if (!eq) {
		SWNIC_WARN(FI_LOG_DOMAIN,
			   "a domain binds only an swnic EQ (class %zu)\n",
			   bfid->fclass);
		return -FI_EINVAL;
	}
	ret = swnic_eq_bind_check(eq, dom->fabric, FI_LOG_DOMAIN,
				  "fi_domain_bind");
	if (ret)
		return ret;
	pthread_mutex_lock(&dom->ctl_lock);
	if (dom->eq) {
		SWNIC_WARN(FI_LOG_DOMAIN, "domain %s already has an EQ\n",
			   dom->dev.name);
		ret = -FI_EALREADY;
		goto out;
	}
	swnic_eq_bind_get(eq);
	dom->eq = eq;
	dom->eq_flags = flags;
out:
	pthread_mutex_unlock(&dom->ctl_lock);
	return ret;
}

/*
 * Raw keys (fi_mr_map_raw/fi_mr_unmap_key): swnic keys are 64 bits, so the
 * raw form is the key's bytes and mapping it needs no state. Applications
 * may use these calls although FI_MR_RAW is never required.
 */
static int swnic_domain_control(struct fid *fid, int command, void *arg)
{
	struct swnic_domain *dom =
		swnic_container_of(fid, struct swnic_domain, domain_fid.fid);
	struct fi_mr_map_raw *map = arg;

	switch (command) {
	case FI_QUEUE_WORK:
	case FI_CANCEL_WORK:
	case FI_FLUSH_WORK:
		/* Deferred work (trigger.c). */
		return swnic_trig_domain_control(dom, command, arg);
	case FI_MAP_RAW_MR:
		if (!map || !map->raw_key || !map->key)
			return -FI_EINVAL;
		if (map->flags)
			return -FI_EBADFLAGS;
		if (map->key_size != sizeof(uint64_t))
			return -FI_EINVAL;
		memcpy(map->key, map->raw_key, sizeof(uint64_t));
		return 0;
	case FI_UNMAP_KEY:
		return arg ? 0 : -FI_EINVAL;
	default:
		return -FI_ENOSYS;
	}
}

/* ---- FI_SWNIC_DOMAIN_OPS_1 --------------------------------------------- */

static int swnic_domain_ops_open(struct fid *fid, const char *name,
				 uint64_t flags, void **ops, void *context)
{
	struct swnic_domain *dom =
		swnic_container_of(fid, struct swnic_domain, domain_fid.fid);

	if (!name || !ops)
		return -FI_EINVAL;
	if (strcmp(name, FI_SWNIC_DOMAIN_OPS_1)) {
		SWNIC_INFO(FI_LOG_DOMAIN, "no ops named %s\n", name);
		return -FI_ENOSYS;
	}
	if (flags)
		return -FI_EBADFLAGS;
	return swnic_mr_open_ops(dom, ops);
}

/* ---- FI_SET_OPS_HMEM_OVERRIDE ------------------------------------------- */

int swnic_hmem_set_ops(struct swnic_domain *dom, void *arg)
{
	const struct fi_hmem_override_ops *ops = arg;

	if (!ops) {
		SWNIC_WARN(FI_LOG_DOMAIN, "hmem override ops are NULL\n");
		return -FI_EINVAL;
	}
	if (ops->size < sizeof(struct fi_hmem_override_ops)) {
		SWNIC_WARN(FI_LOG_DOMAIN,
			   "hmem override ops size %zu < %zu\n", ops->size,
			   sizeof(struct fi_hmem_override_ops));
		return -FI_EINVAL;
	}
	if (!ops->copy_from_hmem_iov || !ops->copy_to_hmem_iov) {
		SWNIC_WARN(FI_LOG_DOMAIN,
			   "hmem override ops need both copy callbacks\n");
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&dom->ctl_lock);
	dom->hmem_ops = *ops;
	dom->hmem_ops.size = sizeof(dom->hmem_ops);
	dom->hmem_override = true;
	pthread_mutex_unlock(&dom->ctl_lock);
	return 0;
}

static int swnic_domain_ops_set(struct fid *fid, const char *name,
				uint64_t flags, void *ops, void *context)
{
	struct swnic_domain *dom =
		swnic_container_of(fid, struct swnic_domain, domain_fid.fid);

	if (!name)
		return -FI_EINVAL;
	if (strcmp(name, FI_SET_OPS_HMEM_OVERRIDE)) {
		SWNIC_INFO(FI_LOG_DOMAIN, "no override named %s\n", name);
		return -FI_ENOSYS;
	}
	if (flags)
		return -FI_EBADFLAGS;
	return swnic_hmem_set_ops(dom, ops);
}

/* Walk @iov from @offset: the part of each entry a copy touches. */
static ssize_t swnic_iov_copy(void *buf, size_t size, const struct iovec *iov,
			      size_t iov_count, uint64_t offset, bool to_iov)
{
	size_t i, done = 0, len;
	char *p = buf;

	for (i = 0; i < iov_count && done < size; i++) {
		if (offset >= iov[i].iov_len) {
			offset -= iov[i].iov_len;
			continue;
		}
		len = iov[i].iov_len - offset;
		if (len > size - done)
			len = size - done;
		if (to_iov)
			memcpy((char *)iov[i].iov_base + offset, p + done, len);
		else
			memcpy(p + done, (char *)iov[i].iov_base + offset, len);
		done += len;
		offset = 0;
	}
	return (ssize_t)done;
}

/*
 * Every copy the provider makes of application memory goes through these:
 * the application's FI_SET_OPS_HMEM_OVERRIDE callbacks if it set them (for
 * every iface), else memcpy for host memory. swnic has no device-memory
 * access of its own: other ifaces without an override are -FI_ENOSYS.
 */
ssize_t swnic_copy_from_iface(struct swnic_domain *dom, void *dest,
			      size_t size, enum fi_hmem_iface iface,
			      uint64_t device, const struct iovec *iov,
			      size_t iov_count, uint64_t offset)
{
	if (dom->hmem_override)
		return dom->hmem_ops.copy_from_hmem_iov(dest, size, iface,
							device, iov, iov_count,
							offset);
	if (iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	return swnic_iov_copy(dest, size, iov, iov_count, offset, false);
}

ssize_t swnic_copy_to_iface(struct swnic_domain *dom,
			    enum fi_hmem_iface iface, uint64_t device,
			    const struct iovec *iov, size_t iov_count,
			    uint64_t offset, const void *src, size_t size)
{
	if (dom->hmem_override)
		return dom->hmem_ops.copy_to_hmem_iov(iface, device, iov,
						      iov_count, offset, src,
						      size);
	if (iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	return swnic_iov_copy((void *)src, size, iov, iov_count, offset, true);
}

/* ---- open ------------------------------------------------------------------ */

static int swnic_query_collective(struct fid_domain *domain,
				  enum fi_collective_op coll,
				  struct fi_collective_attr *attr,
				  uint64_t flags)
{
	return -FI_ENOSYS;
}

static int swnic_endpoint2(struct fid_domain *domain, struct fi_info *info,
			   struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags) {
		SWNIC_WARN(FI_LOG_DOMAIN, "fi_endpoint2 flags %#llx\n",
			   (unsigned long long)flags);
		return -FI_EBADFLAGS;
	}
	return swnic_endpoint(domain, info, ep, context);
}

static struct fi_ops swnic_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_domain_close,
	.bind = swnic_domain_bind,
	.control = swnic_domain_control,
	.ops_open = swnic_domain_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_domain_ops_set,
};

static struct fi_ops_domain swnic_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = swnic_av_open,
	.cq_open = swnic_cq_open,
	.endpoint = swnic_endpoint,
	.scalable_ep = swnic_scalable_ep,
	.cntr_open = swnic_cntr_open,
	.poll_open = swnic_pollset_open,
	.stx_ctx = swnic_stx_ctx,
	.srx_ctx = swnic_srx_ctx,
	.query_atomic = swnic_query_atomic,
	.query_collective = swnic_query_collective,
	.endpoint2 = swnic_endpoint2,
};

/* Apply the attributes of @info (checked) to @dom. */
static void swnic_domain_attrs(struct swnic_domain *dom,
			       const struct fi_info *info)
{
	const struct fi_domain_attr *attr = info->domain_attr;

	dom->threading = attr->threading ? attr->threading : FI_THREAD_SAFE;
	dom->control_progress = attr->control_progress ?
				attr->control_progress : FI_PROGRESS_AUTO;
	dom->data_progress = attr->data_progress ? attr->data_progress :
						   FI_PROGRESS_AUTO;
	dom->resource_mgmt = attr->resource_mgmt ? attr->resource_mgmt :
						   FI_RM_ENABLED;
	dom->av_type = attr->av_type;
	dom->mr_mode = attr->mr_mode;
	dom->caps = attr->caps ? attr->caps : swnic_domain_caps(&dom->dev);
	dom->tclass = attr->tclass;
	dom->addr_format = info->addr_format ? info->addr_format :
					       FI_SOCKADDR_IN;
	dom->info_caps = info->caps;
	dom->data_locks = swnic_threading_locks(dom->threading);
#if SWNIC_FI_HAVE_2
	if (attr->auth_key_size == FI_AV_AUTH_KEY) {
		/* Checked (swnic_check_domain_attr): API 1.20+, no key. */
		dom->av_auth_key = true;
		return;
	}
#endif
	if (attr->auth_key_size &&
	    !FI_VERSION_LT(dom->api_version, FI_VERSION(1, 5))) {
		memcpy(&dom->auth_key, attr->auth_key, sizeof(dom->auth_key));
		dom->has_auth_key = true;
	}
}

static int swnic_domain_create(struct fid_fabric *fabric, struct fi_info *info,
			       struct fid_domain **domain, void *context)
{
	struct swnic_fabric *fab;
	struct swnic_domain *dom;
	int ret;

	if (!fabric || !info || !info->domain_attr || !domain)
		return -FI_EINVAL;
	fab = swnic_fabric_registered(fabric);
	if (!fab)
		return -FI_EINVAL;
	if (!info->domain_attr->name) {
		SWNIC_WARN(FI_LOG_DOMAIN, "fi_info names no domain\n");
		return -FI_EINVAL;
	}
	if (info->fabric_attr && info->fabric_attr->name &&
	    strcmp(info->fabric_attr->name, SWNIC_FABRIC_NAME))
		return -FI_EINVAL;

	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->fabric = fab;
	dom->api_version = fab->api_version;
	ret = swnic_dev_open(info->domain_attr->name, &dom->fd);
	if (ret) {
		SWNIC_WARN(FI_LOG_DOMAIN, "%s: %s\n", info->domain_attr->name,
			   fi_strerror(-ret));
		ret = ret == -ENOENT ? -FI_ENODEV : ret;
		goto err_free;
	}
	ret = swnic_dev_query(dom->fd, &dom->dev);
	if (ret) {
		SWNIC_WARN(FI_LOG_DOMAIN, "%s: query: %s\n",
			   info->domain_attr->name, fi_strerror(-ret));
		goto err_close;
	}
	ret = swnic_check_domain_attr(&dom->dev, info->domain_attr,
				      dom->api_version, info->caps);
	if (ret) {
		SWNIC_WARN(FI_LOG_DOMAIN,
			   "%s cannot serve these domain attributes (FI_LOG_LEVEL=info says why)\n",
			   dom->dev.name);
		ret = -FI_EINVAL;
		goto err_close;
	}
	/* IPv6 as fi_getinfo offers it: on the wire, with the kernel's v6. */
	if (!swnic_addr_format_ok(info->addr_format) ||
	    (info->addr_format == FI_SOCKADDR_IN6 &&
	     (!dom->dev.attr.ifindex ||
	      !(dom->dev.attr.features & SWNIC_FEAT_WIRE_IPV6)))) {
		SWNIC_WARN(FI_LOG_DOMAIN, "addr_format %u not supported\n",
			   info->addr_format);
		ret = -FI_EINVAL;
		goto err_close;
	}
	swnic_domain_attrs(dom, info);
	if (dom->has_auth_key) {
		/* The kernel enforces it: MRs and endpoints of this domain
		 * talk only to peers of the same service.
		 */
		ret = swnic_dev_set_auth_key(dom->fd, dom->auth_key);
		if (ret) {
			SWNIC_WARN(FI_LOG_DOMAIN, "%s: auth key %u: %s\n",
				   dom->dev.name, dom->auth_key,
				   fi_strerror(-ret));
			goto err_close;
		}
	}
	pthread_mutex_init(&dom->ctl_lock, NULL);
	ret = swnic_mr_domain_init(dom);
	if (ret)
		goto err_lock;

	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &swnic_domain_fi_ops;
	dom->domain_fid.ops = &swnic_domain_ops;
	dom->domain_fid.mr = &swnic_mr_ops;

	swnic_fabric_child(fab, &fab->ndomains, 1);
	pthread_mutex_lock(&swnic_registry_lock);
	swnic_list_add_tail(&swnic_domains, &dom->node);
	pthread_mutex_unlock(&swnic_registry_lock);
	*domain = &dom->domain_fid;
	return 0;

err_lock:
	pthread_mutex_destroy(&dom->ctl_lock);
err_close:
	close(dom->fd);
err_free:
	free(dom);
	return ret;
}

int swnic_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, void *context)
{
	return swnic_domain_create(fabric, info, domain, context);
}

/* fi_domain2: flags 0 is fi_domain; swnic cannot be a peer domain. */
int swnic_domain_open2(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **domain, uint64_t flags,
		       void *context)
{
	int ret;

	if (flags & FI_PEER) {
		SWNIC_WARN(FI_LOG_DOMAIN,
			   "fi_domain2(FI_PEER): swnic does not open peer domains\n");
		return -FI_ENOSYS;
	}
	if (flags & ~SWNIC_DOMAIN_INTERNAL) {
		SWNIC_WARN(FI_LOG_DOMAIN, "fi_domain2 flags %#llx unknown\n",
			   (unsigned long long)flags);
		return -FI_EBADFLAGS;
	}
	ret = swnic_domain_create(fabric, info, domain, context);
	if (!ret && (flags & SWNIC_DOMAIN_INTERNAL))
		swnic_container_of(*domain, struct swnic_domain,
				   domain_fid)->internal = true;
	return ret;
}
