// SPDX-License-Identifier: GPL-2.0
/*
 * swnic: a software RDMA NIC for libfabric.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>

#include "bind.h"
#include "device.h"
#include "engine.h"
#include "mr.h"
#include "nl_events.h"
#include "trig.h"
#include "udp.h"

static char *default_dev = "swnic0";
module_param(default_dev, charp, 0444);
MODULE_PARM_DESC(default_dev,
		 "Name of the local device created at load (empty: none)");

static struct swnic_device *swnic_default_dev;

/*
 * The ABI (include/uapi/linux/swnic*.h): every struct's size is fixed
 * once released; a struct grows only at its end, as a new size.
 */
static void __init swnic_abi_check(void)
{
	BUILD_BUG_ON(sizeof(struct swnic_auth_key) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_cntr_create) != 24);
	BUILD_BUG_ON(sizeof(struct swnic_cntr_words) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_cq_create) != 64);
	BUILD_BUG_ON(sizeof(struct swnic_cqe) != 64);
	BUILD_BUG_ON(sizeof(struct swnic_ep_cancel) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_ep_create) != 168);
	BUILD_BUG_ON(sizeof(struct swnic_port_block) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_ep_auth_key) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_ep_doorbell) != 24);
	BUILD_BUG_ON(sizeof(struct swnic_ep_peek) != 56);
	BUILD_BUG_ON(sizeof(struct swnic_inval_page) != 64);
	BUILD_BUG_ON(sizeof(struct swnic_inval_query) != 48);
	BUILD_BUG_ON(sizeof(struct swnic_inval_rec) != 32);
	BUILD_BUG_ON(sizeof(struct swnic_mr_access) != 56);
	BUILD_BUG_ON(sizeof(struct swnic_mr_counters) != 64);
	BUILD_BUG_ON(sizeof(struct swnic_mr_dereg) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_mr_query) != 216);
	BUILD_BUG_ON(sizeof(struct swnic_mr_refresh) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_mr_peer) != 16);
	BUILD_BUG_ON(sizeof(struct swnic_mr_reg) != 144);
	/* The first released swnic_mr_reg, still accepted (chardev.c). */
	BUILD_BUG_ON(offsetofend(struct swnic_mr_reg, __reserved) != 56);
	BUILD_BUG_ON(sizeof(struct swnic_query_device) != 144);
	BUILD_BUG_ON(sizeof(struct swnic_ring_info) != 40);
	BUILD_BUG_ON(sizeof(struct swnic_rqe) != 64);
	BUILD_BUG_ON(sizeof(struct swnic_sqe) != 128);
}

/*
 * Init and exit, step for step: each step of swnic_init() is undone by the
 * matching step of swnic_exit(), in reverse order, and a failing step
 * unwinds the ones before it by the same calls in the same order.
 *
 *   swnic_trig_init()          swnic_trig_exit() (see swnic_exit())
 *   swnic_engine_init()        swnic_engine_exit() (likewise)
 *   swnic_mr_init()            swnic_mr_exit()
 *   swnic_device_init()        swnic_device_exit()
 *   swnic_bind_init()          swnic_bind_exit()
 *   swnic_udp_init()           swnic_udp_exit()
 *   the default device         swnic_device_destroy_all()
 *   swnic_genl_init()          swnic_genl_exit()
 *
 * Devices made through netlink are destroyed with the default one, once
 * the family is gone and no more can be made; the netdev notifier
 * (bind) outlives them all, as a bound device needs it.
 */
static int __init swnic_init(void)
{
	int ret;

	swnic_abi_check();

	ret = swnic_trig_init();
	if (ret)
		return ret;

	ret = swnic_engine_init();
	if (ret)
		goto err_trig;

	ret = swnic_mr_init();
	if (ret)
		goto err_engine;

	ret = swnic_device_init();
	if (ret)
		goto err_mr;

	ret = swnic_bind_init();
	if (ret)
		goto err_device;

	ret = swnic_udp_init();
	if (ret)
		goto err_bind;

	if (default_dev && *default_dev) {
		swnic_default_dev = swnic_device_create(default_dev,
							SWNIC_DEV_STATE_UP);
		if (IS_ERR(swnic_default_dev)) {
			ret = PTR_ERR(swnic_default_dev);
			pr_err("cannot create device %s: %d\n", default_dev, ret);
			goto err_udp;
		}
	}

	ret = swnic_genl_init();
	if (ret)
		goto err_devices;

	pr_info("loaded, version " SWNIC_VERSION "\n");
	return 0;

err_devices:
	swnic_device_destroy_all();
err_udp:
	swnic_udp_exit();
err_bind:
	swnic_bind_exit();
err_device:
	swnic_device_exit();
err_mr:
	swnic_mr_exit();
err_engine:
	swnic_engine_exit();
err_trig:
	swnic_trig_exit();
	return ret;
}

static void __exit swnic_exit(void)
{
	swnic_genl_exit();
	/*
	 * Out of order: every file is closed, so no engine round and no
	 * triggered work can be queued any more; what is queued, or waits
	 * a tick, runs (and drops its domain) now. Engines first: what an
	 * engine round completes may queue triggered work, never the other
	 * way round.
	 */
	swnic_engine_exit();
	swnic_trig_exit();
	swnic_device_destroy_all();
	swnic_udp_exit();
	swnic_bind_exit();
	swnic_device_exit();
	swnic_mr_exit();
}

module_init(swnic_init);
module_exit(swnic_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("swnic developers");
MODULE_DESCRIPTION("swnic: a software RDMA NIC for libfabric");
MODULE_VERSION(SWNIC_VERSION);
MODULE_ALIAS_GENL_FAMILY(SWNIC_GENL_NAME);
