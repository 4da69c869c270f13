// SPDX-License-Identifier: GPL-2.0
/*
 * swnic devices: creation, lookup and destruction of virtual NICs, each with
 * its character device /dev/<name>.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "bind.h"
#include "chardev.h"
#include "device.h"
#include "ep.h"
#include "service.h"

static unsigned int max_domains = 1024;
module_param(max_domains, uint, 0444);
MODULE_PARM_DESC(max_domains, "Default limit of open domains per device");

static unsigned int max_mr = 65536;
module_param(max_mr, uint, 0444);
MODULE_PARM_DESC(max_mr, "Default limit of memory regions per domain");

static unsigned int max_domains_per_user = 256;
module_param(max_domains_per_user, uint, 0444);
MODULE_PARM_DESC(max_domains_per_user,
		 "Default limit of open domains per device and user");

static unsigned int max_ep = 1024;
module_param(max_ep, uint, 0444);
MODULE_PARM_DESC(max_ep, "Default limit of endpoints per domain");

static unsigned int max_cq = 1024;
module_param(max_cq, uint, 0444);
MODULE_PARM_DESC(max_cq, "Default limit of completion queues per domain");

/*
 * Serialises device creation/destruction; protects the two below. The
 * wire finds a packet's device on the list under RCU (swnic_rx_device()):
 * a device leaves it with list_del_rcu() and keeps the list's reference
 * for a grace period after, so a reader that saw it can take one.
 */
DEFINE_MUTEX(swnic_devices_lock);
LIST_HEAD(swnic_devices);
unsigned int swnic_devices_gen = 1;

static DEFINE_IDA(swnic_device_ida);
static dev_t swnic_devt;

static char *swnic_devnode(SWNIC_DEVNODE_CONST struct device *dev,
			   umode_t *mode)
{
	/* Privilege is checked per operation, not by file mode (as uverbs). */
	if (mode)
		*mode = 0666;
	return NULL;
}

static struct class swnic_class = {
	.name = "swnic",
	.devnode = swnic_devnode,
};

static void swnic_device_release(struct device *dev)
{
	struct swnic_device *sdev = container_of(dev, struct swnic_device, dev);

	WARN_ON(!list_empty(&sdev->domains));
	WARN_ON(!xa_empty(&sdev->ports));
	xa_destroy(&sdev->ports);
	WARN_ON(!xa_empty(&sdev->user_eps));
	xa_destroy(&sdev->user_eps);
	mutex_destroy(&sdev->user_eps_lock);
	swnic_service_device_fini(sdev);
	swnic_obj_dec(SWNIC_OBJ_DEVICES);
	ida_free(&swnic_device_ida, sdev->index);
	mutex_destroy(&sdev->lock);
	kfree(sdev);
}

static bool swnic_name_valid(const char *name)
{
	size_t len = strnlen(name, SWNIC_NAME_MAX);
	size_t i;

	if (!len || len >= SWNIC_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

/* Caller holds swnic_devices_lock. */
static struct swnic_device *__swnic_device_find(const char *name)
{
	struct swnic_device *sdev;

	lockdep_assert_held(&swnic_devices_lock);
	list_for_each_entry(sdev, &swnic_devices, list)
		if (!strcmp(sdev->name, name))
			return sdev;
	return NULL;
}

/**
 * swnic_device_create() - create and publish a device
 * @name: device name, also the char device name; unique
 * @state: SWNIC_DEV_STATE_UP; or DOWN for one its maker binds first,
 *	   which no one may open in the meantime (swnic_domain_open())
 *
 * Return: the device (the list holds its reference) or an ERR_PTR:
 * -EINVAL for a bad name, -EEXIST if taken, -ENOSPC when all minors are used.
 */
struct swnic_device *swnic_device_create(const char *name, u8 state)
{
	struct swnic_device *sdev;
	int index, ret;

	if (!swnic_name_valid(name))
		return ERR_PTR(-EINVAL);

	mutex_lock(&swnic_devices_lock);
	if (__swnic_device_find(name)) {
		ret = -EEXIST;
		goto err_unlock;
	}

	index = ida_alloc_max(&swnic_device_ida, SWNIC_MAX_DEVICES - 1,
			      GFP_KERNEL);
	if (index < 0) {
		ret = index == -ENOSPC ? -ENOSPC : index;
		goto err_unlock;
	}

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev) {
		ret = -ENOMEM;
		goto err_ida;
	}
	sdev->index = index;
	strscpy(sdev->name, name, sizeof(sdev->name));
	mutex_init(&sdev->lock);
	INIT_LIST_HEAD(&sdev->domains);
	spin_lock_init(&sdev->closed_lock);
	INIT_LIST_HEAD(&sdev->closed_domains);
	INIT_LIST_HEAD(&sdev->services);
	xa_init_flags(&sdev->ports, XA_FLAGS_ALLOC);
	mutex_init(&sdev->user_eps_lock);
	xa_init(&sdev->user_eps);
	sdev->port_next = SWNIC_PORT_EPHEMERAL_MIN;
	ratelimit_state_init(&sdev->limit_events, HZ, 10);
	ratelimit_set_flags(&sdev->limit_events, RATELIMIT_MSG_ON_RELEASE);
	sdev->state = state;
	sdev->limits = (struct swnic_limits) {
		.max_domains = max_domains,
		.max_domains_per_user = max_domains_per_user,
		.max_mr = max_mr,
		.max_ep = max_ep,
		.max_cq = max_cq,
	};

	device_initialize(&sdev->dev);
	sdev->dev.class = &swnic_class;
	sdev->dev.devt = MKDEV(MAJOR(swnic_devt), index);
	sdev->dev.release = swnic_device_release;
	swnic_obj_inc(SWNIC_OBJ_DEVICES);
	ret = dev_set_name(&sdev->dev, "%s", name);
	if (ret)
		goto err_put;

	ret = swnic_service_device_init(sdev);
	if (ret)
		goto err_put;

	cdev_init(&sdev->cdev, &swnic_chardev_fops);
	sdev->cdev.owner = THIS_MODULE;
	ret = cdev_device_add(&sdev->cdev, &sdev->dev);
	if (ret)
		goto err_put;

	list_add_tail_rcu(&sdev->list, &swnic_devices);
	swnic_devices_gen++;
	mutex_unlock(&swnic_devices_lock);
	pr_info("device %s created\n", name);
	return sdev;

err_put:
	/* The release callback frees sdev and its index. */
	put_device(&sdev->dev);
	mutex_unlock(&swnic_devices_lock);
	return ERR_PTR(ret);
err_ida:
	ida_free(&swnic_device_ida, index);
err_unlock:
	mutex_unlock(&swnic_devices_lock);
	return ERR_PTR(ret);
}

/**
 * swnic_device_destroy() - unpublish a device and drop the list's reference
 * @sdev: a device on the list
 *
 * New opens fail from here on; domains still open keep the memory alive
 * until they close.
 */
void swnic_device_destroy(struct swnic_device *sdev)
{
	mutex_lock(&swnic_devices_lock);
	list_del_rcu(&sdev->list);
	swnic_devices_gen++;
	mutex_unlock(&swnic_devices_lock);

	mutex_lock(&sdev->lock);
	sdev->dead = true;
	mutex_unlock(&sdev->lock);
	swnic_device_unbind(sdev, NULL, NULL);

	cdev_device_del(&sdev->cdev, &sdev->dev);
	pr_info("device %s destroyed\n", sdev->name);
	/* Readers that found it on the list hold their own reference now. */
	synchronize_rcu();
	swnic_device_put(sdev);
}

/* Return: the device with a reference held, or NULL. */
struct swnic_device *swnic_device_lookup_index(u32 index)
{
	struct swnic_device *sdev, *found = NULL;

	mutex_lock(&swnic_devices_lock);
	list_for_each_entry(sdev, &swnic_devices, list) {
		if (sdev->index == index) {
			swnic_device_get(sdev);
			found = sdev;
			break;
		}
	}
	mutex_unlock(&swnic_devices_lock);
	return found;
}

/* Return: the device with a reference held, or NULL. */
struct swnic_device *swnic_device_lookup_name(const char *name)
{
	struct swnic_device *sdev;

	mutex_lock(&swnic_devices_lock);
	sdev = __swnic_device_find(name);
	if (sdev)
		swnic_device_get(sdev);
	mutex_unlock(&swnic_devices_lock);
	return sdev;
}

int swnic_device_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&swnic_devt, 0, SWNIC_MAX_DEVICES, "swnic");
	if (ret)
		return ret;

	ret = class_register(&swnic_class);
	if (ret)
		goto err_region;
	return 0;

err_region:
	unregister_chrdev_region(swnic_devt, SWNIC_MAX_DEVICES);
	return ret;
}

/**
 * swnic_device_destroy_all() - destroy every device left (module unload)
 *
 * The default device and those netlink made; nothing may create one any
 * more (the netlink family is gone).
 */
void swnic_device_destroy_all(void)
{
	struct swnic_device *sdev;

	for (;;) {
		mutex_lock(&swnic_devices_lock);
		sdev = list_first_entry_or_null(&swnic_devices,
						struct swnic_device, list);
		mutex_unlock(&swnic_devices_lock);
		if (!sdev)
			break;
		swnic_device_destroy(sdev);
	}
}

/* Undoes swnic_device_init(); every device is destroyed already. */
void swnic_device_exit(void)
{
	class_unregister(&swnic_class);
	unregister_chrdev_region(swnic_devt, SWNIC_MAX_DEVICES);
}
