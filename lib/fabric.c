// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The swnic fabric: the root of every swnic object. It owns domains,
 * event queues, wait sets and passive endpoints, and closes with
 * -FI_EBUSY while any is open.
 */
#include <stdlib.h>
#include <string.h>

#include "swnic.h"

/* Open fabrics and domains (fi_getinfo reports the first open instance). */
pthread_mutex_t swnic_registry_lock = PTHREAD_MUTEX_INITIALIZER;
struct swnic_list swnic_fabrics = { &swnic_fabrics, &swnic_fabrics };
struct swnic_list swnic_domains = { &swnic_domains, &swnic_domains };

/* Is @fid an open swnic fabric? (Any other provider's is not.) */
struct swnic_fabric *swnic_fabric_registered(const struct fid_fabric *fid)
{
	struct swnic_fabric *fab, *found = NULL;
	struct swnic_list *pos;

	pthread_mutex_lock(&swnic_registry_lock);
	swnic_list_for_each(pos, &swnic_fabrics) {
		fab = swnic_list_entry(pos, struct swnic_fabric, node);
		if (&fab->fabric_fid == fid) {
			found = fab;
			break;
		}
	}
	pthread_mutex_unlock(&swnic_registry_lock);
	return found;
}

struct fid_fabric *swnic_fabric_first(void)
{
	struct fid_fabric *fid = NULL;

	pthread_mutex_lock(&swnic_registry_lock);
	if (!swnic_list_empty(&swnic_fabrics))
		fid = &swnic_list_entry(swnic_fabrics.next,
					struct swnic_fabric, node)->fabric_fid;
	pthread_mutex_unlock(&swnic_registry_lock);
	return fid;
}

void swnic_fabric_child(struct swnic_fabric *fab, unsigned int *count,
			int delta)
{
	pthread_mutex_lock(&fab->lock);
	*count += delta;
	pthread_mutex_unlock(&fab->lock);
}

static int swnic_fabric_close(struct fid *fid)
{
	struct swnic_fabric *fab =
		swnic_container_of(fid, struct swnic_fabric, fabric_fid.fid);

	pthread_mutex_lock(&fab->lock);
	/* fi_fabric(3): everything opened from it closes first. */
	if (fab->ndomains || fab->neqs || fab->nwaits || fab->npeps) {
		SWNIC_WARN(FI_LOG_FABRIC,
			   "fabric %p still has %u domain(s), %u EQ(s), %u wait set(s) and %u passive endpoint(s) open\n",
			   (void *)fid, fab->ndomains, fab->neqs, fab->nwaits,
			   fab->npeps);
		pthread_mutex_unlock(&fab->lock);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&fab->lock);

	pthread_mutex_lock(&swnic_registry_lock);
	swnic_list_del(&fab->node);
	pthread_mutex_unlock(&swnic_registry_lock);
	pthread_mutex_destroy(&fab->lock);
	free(fab);
	return 0;
}

/*
 * fi_trywait: 0 if every object is empty (safe to block on their fds),
 * -FI_EAGAIN if one has something to read. The objects' wait fds are
 * level-triggered, so no object needs re-arming here.
 */
static int swnic_trywait(struct fid_fabric *fabric, struct fid **fids,
			 int count)
{
	int i, ret;

	for (i = 0; i < count; i++) {
		switch (fids[i]->fclass) {
		case FI_CLASS_EQ:
			ret = swnic_eq_trywait(fids[i]);
			break;
		case FI_CLASS_CQ:
			ret = swnic_cq_trywait(fids[i]);
			break;
		case FI_CLASS_CNTR:
			ret = swnic_cntr_trywait(fids[i]);
			break;
		case FI_CLASS_WAIT:
			ret = swnic_waitset_trywait(fids[i]);
			break;
		default:
			ret = -FI_EINVAL;
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static struct fi_ops swnic_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = swnic_fabric_close,
	.bind = swnic_no_bind,
	.control = swnic_no_control,
	.ops_open = swnic_no_ops_open,
	.tostr = swnic_no_tostr,
	.ops_set = swnic_no_ops_set,
};

static struct fi_ops_fabric swnic_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = swnic_domain_open,
	.passive_ep = swnic_passive_ep,
	.eq_open = swnic_eq_open,
	.wait_open = swnic_waitset_open,
	.trywait = swnic_trywait,
	.domain2 = swnic_domain_open2,
};

int swnic_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		 void *context)
{
	struct swnic_fabric *fab;

	if (!attr || !fabric)
		return -FI_EINVAL;
	if (attr->name && strcmp(attr->name, SWNIC_FABRIC_NAME)) {
		SWNIC_WARN(FI_LOG_FABRIC, "unknown fabric %s\n", attr->name);
		return -FI_ENODATA;
	}
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	pthread_mutex_init(&fab->lock, NULL);
	fab->api_version = attr->api_version ? attr->api_version :
					       SWNIC_FI_VERSION;
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &swnic_fabric_fi_ops;
	fab->fabric_fid.ops = &swnic_fabric_ops;
	fab->fabric_fid.api_version = fab->api_version;

	pthread_mutex_lock(&swnic_registry_lock);
	swnic_list_add_tail(&swnic_fabrics, &fab->node);
	pthread_mutex_unlock(&swnic_registry_lock);

	*fabric = &fab->fabric_fid;
	return 0;
}
