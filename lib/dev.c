// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Devices: discovery (/sys/class/swnic, else /dev/swnic*), open and the
 * kernel's SWNIC_IOCTL_QUERY_DEVICE. Every attribute the provider reports
 * comes from that query; the device's IPv4 address (the address part of
 * its endpoints' FI_SOCKADDR_IN addresses) from its netdev, or 127.0.0.1
 * for a local-only device.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "swnic.h"

static bool swnic_dev_name_valid(const char *name)
{
	size_t len = strnlen(name, SWNIC_NAME_MAX);
	size_t i;

	if (!len || len >= SWNIC_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' &&
		    name[i] != '-')
			return false;
	return true;
}

int swnic_dev_open(const char *name, int *fd)
{
	char path[sizeof(SWNIC_DEV_DIR) + SWNIC_NAME_MAX + 1];

	if (!swnic_dev_name_valid(name))
		return -FI_EINVAL;
	snprintf(path, sizeof(path), SWNIC_DEV_DIR "/%s", name);
	*fd = open(path, O_RDWR | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/*
 * The IPv4 address endpoints of this device have (port 0): its netdev's;
 * else the name of its IPv6 address (a global one before a link-local
 * one), as the kernel gives its endpoints (swnic_udp_ep_addr()).
 */
static int swnic_dev_addr(int fd, struct swnic_dev *dev)
{
	char ifname[IF_NAMESIZE];
	struct ifaddrs *ifa, *cur;
	struct sockaddr_in6 *six, best6;
	bool have6 = false;
	int ret = -FI_EADDRNOTAVAIL;

	memset(&dev->addr, 0, sizeof(dev->addr));
	dev->addr.sin_family = AF_INET;
	if (!dev->attr.ifindex) {
		dev->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	if (!if_indextoname(dev->attr.ifindex, ifname))
		return -errno;
	if (getifaddrs(&ifa))
		return -errno;
	for (cur = ifa; cur; cur = cur->ifa_next) {
		if (cur->ifa_addr && cur->ifa_addr->sa_family == AF_INET6 &&
		    !strcmp(cur->ifa_name, ifname)) {
			six = (struct sockaddr_in6 *)cur->ifa_addr;
			if (!IN6_IS_ADDR_MULTICAST(&six->sin6_addr) &&
			    (!have6 ||
			     (IN6_IS_ADDR_LINKLOCAL(&best6.sin6_addr) &&
			      !IN6_IS_ADDR_LINKLOCAL(&six->sin6_addr)))) {
				best6 = *six;
				have6 = true;
			}
		}
		if (!cur->ifa_addr || cur->ifa_addr->sa_family != AF_INET ||
		    strcmp(cur->ifa_name, ifname))
			continue;
		dev->addr.sin_addr =
			((struct sockaddr_in *)cur->ifa_addr)->sin_addr;
		ret = 0;
		break;
	}
	freeifaddrs(ifa);
	if (ret && have6 && (dev->attr.features & SWNIC_FEAT_WIRE_IPV6))
		ret = swnic_addr6_name(fd, &best6.sin6_addr,
				       best6.sin6_scope_id, &dev->addr.sin_addr);
	return ret;
}

int swnic_dev_query(int fd, struct swnic_dev *dev)
{
	memset(dev, 0, sizeof(*dev));
	dev->attr.size = sizeof(dev->attr);
	if (ioctl(fd, SWNIC_IOCTL_QUERY_DEVICE, &dev->attr))
		return -errno;
	memcpy(dev->name, dev->attr.name, sizeof(dev->name));
	dev->name[sizeof(dev->name) - 1] = '\0';
	return swnic_dev_addr(fd, dev);
}

/* Take auth key @key on domain @fd (SWNIC_IOCTL_AUTH_KEY). */
int swnic_dev_set_auth_key(int fd, uint32_t key)
{
	struct swnic_auth_key ak = { .size = sizeof(ak), .auth_key = key };

	if (ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &ak))
		return -errno;
	return ak.auth_key == key ? 0 : -FI_EINVAL;
}

/* The auth key domain @fd uses (0: none), as the kernel has it. */
int swnic_dev_get_auth_key(int fd, uint32_t *key)
{
	struct swnic_auth_key ak = { .size = sizeof(ak) };

	if (ioctl(fd, SWNIC_IOCTL_AUTH_KEY, &ak))
		return -errno;
	*key = ak.auth_key;
	return 0;
}

/* May this process use auth key @key on device @name? */
int swnic_dev_auth_key_ok(const char *name, uint32_t key)
{
	int fd, ret;

	ret = swnic_dev_open(name, &fd);
	if (ret)
		return ret;
	ret = swnic_dev_set_auth_key(fd, key);
	close(fd);
	return ret;
}

static int swnic_dev_cmp(const void *a, const void *b)
{
	const struct swnic_dev *x = a, *y = b;

	return x->attr.dev_index < y->attr.dev_index ? -1 :
	       x->attr.dev_index > y->attr.dev_index;
}

/* Names of the devices: the sysfs class, else the /dev nodes. */
static int swnic_dev_names(char (**names)[SWNIC_NAME_MAX], size_t *count)
{
	char (*list)[SWNIC_NAME_MAX] = NULL, (*tmp)[SWNIC_NAME_MAX];
	size_t n = 0, cap = 0;
	struct dirent *de;
	bool sysfs = true;
	DIR *dir;

	dir = opendir(SWNIC_SYSFS_CLASS);
	if (!dir) {
		sysfs = false;
		dir = opendir(SWNIC_DEV_DIR);
		if (!dir)
			return -errno;
	}
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || !swnic_dev_name_valid(de->d_name))
			continue;
		if (!sysfs && strncmp(de->d_name, SWNIC_DEV_PREFIX,
				      strlen(SWNIC_DEV_PREFIX)))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			tmp = realloc(list, cap * sizeof(*list));
			if (!tmp) {
				free(list);
				closedir(dir);
				return -FI_ENOMEM;
			}
			list = tmp;
		}
		memcpy(list[n], de->d_name, strlen(de->d_name) + 1);
		n++;
	}
	closedir(dir);
	*names = list;
	*count = n;
	return 0;
}

/**
 * swnic_dev_scan() - query every swnic device of this host
 * @devs: array of the devices that answered, by device index; free()
 * @count: its length (0 is not an error)
 */
int swnic_dev_scan(struct swnic_dev **devs, size_t *count)
{
	char (*names)[SWNIC_NAME_MAX] = NULL;
	struct swnic_dev *list;
	size_t n = 0, i, found = 0;
	int ret, fd;

	*devs = NULL;
	*count = 0;
	ret = swnic_dev_names(&names, &n);
	if (ret) {
		SWNIC_INFO(FI_LOG_FABRIC, "no swnic devices: %s\n",
			   fi_strerror(-ret));
		return 0;
	}
	if (!n) {
		free(names);
		return 0;
	}
	list = calloc(n, sizeof(*list));
	if (!list) {
		free(names);
		return -FI_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		ret = swnic_dev_open(names[i], &fd);
		if (ret) {
			SWNIC_INFO(FI_LOG_FABRIC, "%s: open: %s\n", names[i],
				   fi_strerror(-ret));
			continue;
		}
		ret = swnic_dev_query(fd, &list[found]);
		close(fd);
		if (ret) {
			SWNIC_INFO(FI_LOG_FABRIC, "%s: skipped: %s\n",
				   names[i], fi_strerror(-ret));
			continue;
		}
		found++;
	}
	free(names);
	qsort(list, found, sizeof(*list), swnic_dev_cmp);
	*devs = list;
	*count = found;
	return 0;
}
