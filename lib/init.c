// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider object and its entry point: libfabric dlopen()s
 * libswnic-fi.so from its provider directory (or FI_PROVIDER_PATH) and calls
 * fi_prov_ini().
 */
#include <limits.h>

#include "swnic.h"

struct swnic_params swnic_params = {
	.layering = 0,
	.mr_odp = 0,
	.mr_cache = 1,
	.mr_cache_max = 1024,
	.recv_reg_min = 64 * 1024,
	.doorbell_engine = 0,
	.remote_comm = 0,
	.busy_poll = 0,
	.copy_help = 1,
};

static void swnic_cleanup(void)
{
}

struct fi_provider swnic_prov = {
	.name = SWNIC_PROV_NAME,
	.version = SWNIC_PROV_VERSION,
	.fi_version = SWNIC_FI_VERSION,
	.getinfo = swnic_getinfo,
	.fabric = swnic_fabric,
	.cleanup = swnic_cleanup,
};

static void swnic_params_init(void)
{
	int val;
	size_t sval;

	fi_param_define(&swnic_prov, "layering", FI_PARAM_BOOL,
			"Let utility providers (ofi_rxm, ofi_rxd) layer over "
			"swnic's MSG and DGRAM endpoints. swnic has native "
			"RDM endpoints, so this is off by default (default: "
			"%d)", swnic_params.layering);
	fi_param_define(&swnic_prov, "mr_odp", FI_PARAM_BOOL,
			"Register memory on demand (pin nothing, fault pages "
			"in at access time) instead of pinning it, for every "
			"domain (default: %d)", swnic_params.mr_odp);
	fi_param_define(&swnic_prov, "mr_cache", FI_PARAM_BOOL,
			"Cache local-access registrations, invalidated by the "
			"kernel's invalidation page (default: %d)",
			swnic_params.mr_cache);
	fi_param_define(&swnic_prov, "mr_cache_max", FI_PARAM_SIZE_T,
			"Unused registrations the cache keeps per domain "
			"(default: %zu)", swnic_params.mr_cache_max);
	fi_param_define(&swnic_prov, "recv_reg_min", FI_PARAM_SIZE_T,
			"A receive buffer of at least this many bytes that "
			"is posted a second time is registered through the "
			"cache (pinned, charged to RLIMIT_MEMLOCK), so that "
			"the kernel writes messages into its pinned pages "
			"instead of pinning the buffer for each one; 0: "
			"never. Receives whose descriptor names a pinned "
			"registration of the buffer use it at any size "
			"(default: %zu)", swnic_params.recv_reg_min);

	fi_param_define(&swnic_prov, "doorbell_engine", FI_PARAM_BOOL,
			"Endpoints ring the doorbell through their domain's "
			"kernel engine, which polls their queues and needs a "
			"syscall only after it went idle, instead of a syscall "
			"that moves the data in the caller's context on every "
			"post (default: %d)", swnic_params.doorbell_engine);

	fi_param_define(&swnic_prov, "remote_comm", FI_PARAM_BOOL,
			"Report FI_REMOTE_COMM on a device bound to no netdev, "
			"for applications that ask for it but run on one host "
			"(Open MPI's OFI MTL). Such a device reaches no other "
			"host: sends to one complete with FI_EHOSTUNREACH "
			"(default: %d)", swnic_params.remote_comm);

	fi_param_define(&swnic_prov, "busy_poll", FI_PARAM_BOOL,
			"A CQ read that finds nothing takes what the wire "
			"brought for the device's network namespace itself "
			"(one syscall), rather than leaving it to the kernel's "
			"worker thread to be woken and scheduled. Measured "
			"over veth: 64 KiB messages gained, small ones lost "
			"(see fi_swnic(7)). Only for a device bound to a "
			"netdev (default: %d)",
			swnic_params.busy_poll);

	fi_param_define(&swnic_prov, "copy_help", FI_PARAM_BOOL,
			"A CQ read that finds nothing while a peer on this "
			"host copies a large message (256 KiB or more) into a "
			"receive of this CQ takes part in that copy (one "
			"syscall), so two CPUs copy it. Only for receives into "
			"registered buffers: see recv_reg_min (default: %d)",
			swnic_params.copy_help);

	if (!fi_param_get_bool(&swnic_prov, "busy_poll", &val))
		swnic_params.busy_poll = !!val;
	if (!fi_param_get_bool(&swnic_prov, "copy_help", &val))
		swnic_params.copy_help = !!val;
	if (!fi_param_get_bool(&swnic_prov, "remote_comm", &val))
		swnic_params.remote_comm = !!val;
	if (!fi_param_get_bool(&swnic_prov, "doorbell_engine", &val))
		swnic_params.doorbell_engine = !!val;
	if (!fi_param_get_bool(&swnic_prov, "layering", &val))
		swnic_params.layering = !!val;
	if (!fi_param_get_bool(&swnic_prov, "mr_odp", &val))
		swnic_params.mr_odp = !!val;
	if (!fi_param_get_bool(&swnic_prov, "mr_cache", &val))
		swnic_params.mr_cache = !!val;
	if (!fi_param_get_size_t(&swnic_prov, "mr_cache_max", &sval))
		swnic_params.mr_cache_max = sval;
	if (!fi_param_get_size_t(&swnic_prov, "recv_reg_min", &sval))
		swnic_params.recv_reg_min = sval;
}

FI_EXT_INI
{
	swnic_params_init();
	return &swnic_prov;
}
