/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Services: the auth keys of a device and who may use them (as Slingshot's
 * CXI services). Each device has a list of services; the default one
 * (SWNIC_SVC_DEFAULT_ID, SWNIC_AUTH_KEY_DEFAULT) is created with the device,
 * closed (open to no one but administrators) unless the module parameter
 * default_open=1 opens it; an administrator opens it or names its members.
 *
 * A domain uses at most one service at a time: the default one if it
 * admits the opening process, or the one whose key the process asks for
 * with SWNIC_IOCTL_AUTH_KEY (membership checked there, CAP_NET_ADMIN over
 * the device's network namespace bypasses it).
 */
#ifndef _SWNIC_SERVICE_H
#define _SWNIC_SERVICE_H

#include <linux/list.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/swnic_netlink.h>

#include "domain.h"

struct swnic_device;
struct swnic_domain;

/* Services a device may have, the default one included. */
#define SWNIC_SVC_MAX		256

/*
 * One service. Lives on its device's list, under the device's lock, from
 * creation to deletion (refused while domains use it) or the device's
 * release. Domains point to it under the same lock.
 */
struct swnic_service {
	struct list_head node;		/* on sdev->services */
	u32 id;				/* immutable, unique per device */
	u32 auth_key;			/* immutable, unique per device, != 0 */
	u32 flags;			/* SWNIC_SVC_F_* */
	u32 max_domains;		/* domains using it at once */
	u32 ndomains;			/* domains using it now */
	u32 nuids;			/* entries of @uids */
	u32 ngids;			/* entries of @gids */
	kuid_t uids[SWNIC_SVC_MAX_MEMBERS];
	kgid_t gids[SWNIC_SVC_MAX_MEMBERS];
};

struct swnic_service *swnic_service_alloc(void);
extern atomic_t swnic_services_gen;

int swnic_service_add(struct swnic_device *sdev, struct swnic_service *svc);
void swnic_service_free(struct swnic_service *svc);
struct swnic_service *swnic_service_find_id(struct swnic_device *sdev, u32 id);
struct swnic_service *swnic_service_find_key(struct swnic_device *sdev,
					     u32 auth_key);

int swnic_service_device_init(struct swnic_device *sdev);
void swnic_service_device_fini(struct swnic_device *sdev);

void swnic_service_domain_open(struct swnic_domain *dom);
void swnic_service_domain_close(struct swnic_domain *dom);

int swnic_domain_set_auth_key(struct swnic_domain *dom, void *arg);
struct swnic_ep;
int swnic_service_ep_add_key(struct swnic_ep *ep, u32 auth_key, u32 *index);
void swnic_service_ep_release(struct swnic_ep *ep);

/**
 * swnic_domain_auth_key() - the auth key a domain uses now
 * @dom: the domain
 *
 * Return: the key, or 0 if the domain has none (the default service did
 * not admit its process and it took no other key). Lockless.
 */
static inline u32 swnic_domain_auth_key(const struct swnic_domain *dom)
{
	return READ_ONCE(dom->auth_key);
}

#endif /* _SWNIC_SERVICE_H */
