// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Endpoint addresses. An swnic endpoint is named by an IPv4 address of its
 * device (127.0.0.1 for a local-only device) and a 16-bit port on that
 * device, as a struct sockaddr_in (FI_SOCKADDR_IN, also accepted as
 * FI_SOCKADDR) or as the string "fi_swnic://A.B.C.D:PORT" (FI_ADDR_STR;
 * "fi_sockaddr_in://..." is read too). A device whose netdev has IPv6
 * addresses only is named by one of those: a struct sockaddr_in6
 * (FI_SOCKADDR_IN6, or FI_SOCKADDR) or "fi_swnic://[fd00::1]:PORT"; an
 * IPv4 address reads as IPv4-mapped in FI_SOCKADDR_IN6. Inside, an IPv6
 * address is its 32-bit name (swnic_addr6_name()).
 *
 * Name resolution never blocks on a name that cannot be swnic's: numeric
 * addresses, "localhost" and this host's own name are resolved locally;
 * other names only go to the resolver (getaddrinfo) when a device bound to
 * a netdev could reach them and FI_NUMERICHOST is not set.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "swnic.h"

/* "fi_swnic://255.255.255.255:65535" and its NUL */

static const char *const swnic_addr_prefixes[] = {
	SWNIC_ADDR_STR_PREFIX,
	"fi_sockaddr_in://",
	"fi_sockaddr_in6://",
};

/* ---- IPv6 names: a process-wide cache of the kernel's (SWNIC_IOCTL_ADDR6) */

#define SWNIC_NAME6_CACHE	256

static struct {
	uint32_t name;
	struct in6_addr addr;
	uint32_t scope;
} swnic_name6_cache[SWNIC_NAME6_CACHE];
static unsigned int swnic_name6_used, swnic_name6_next;
static pthread_mutex_t swnic_name6_lock = PTHREAD_MUTEX_INITIALIZER;

static void swnic_name6_remember(uint32_t name, const struct in6_addr *a,
				 uint32_t scope)
{
	unsigned int i;

	pthread_mutex_lock(&swnic_name6_lock);
	for (i = 0; i < swnic_name6_used; i++)
		if (swnic_name6_cache[i].name == name)
			goto out;
	i = swnic_name6_next++ % SWNIC_NAME6_CACHE;
	if (swnic_name6_used < SWNIC_NAME6_CACHE)
		swnic_name6_used++;
	swnic_name6_cache[i].name = name;
	swnic_name6_cache[i].addr = *a;
	swnic_name6_cache[i].scope = scope;
out:
	pthread_mutex_unlock(&swnic_name6_lock);
}

/* SWNIC_IOCTL_ADDR6 on @fd, or on the first bound device with IPv6. */
static int swnic_addr6_ioctl(int fd, struct swnic_addr6 *a)
{
	struct swnic_dev *devs;
	size_t n, i;
	int ret, dfd;

	if (fd >= 0)
		return ioctl(fd, SWNIC_IOCTL_ADDR6, a) ? -errno : 0;
	ret = swnic_dev_scan(&devs, &n);
	if (ret)
		return ret;
	ret = -FI_ENODATA;	/* no device reaches IPv6 peers */
	for (i = 0; i < n; i++) {
		if (!devs[i].attr.ifindex ||
		    !(devs[i].attr.features & SWNIC_FEAT_WIRE_IPV6))
			continue;
		ret = swnic_dev_open(devs[i].name, &dfd);
		if (ret)
			continue;
		ret = ioctl(dfd, SWNIC_IOCTL_ADDR6, a) ? -errno : 0;
		close(dfd);
		break;
	}
	free(devs);
	return ret;
}

/**
 * swnic_addr6_name() - the 32-bit name of IPv6 address @a
 * @fd: a device fd (its netdev's namespace names it), or -1: the first
 *	bound device's
 * @scope: link-local: the interface index (0: the device's netdev)
 * @name: out; an IPv4-mapped @a is its IPv4 address
 *
 * Return: 0, -FI_ENODATA (no device reaches IPv6 peers), or the kernel's
 * error (-FI_EADDRNOTAVAIL: not a unicast address - ::1 neither: a
 * local-only device is 127.0.0.1 - or another scope).
 */
int swnic_addr6_name(int fd, const struct in6_addr *a, uint32_t scope,
		     struct in_addr *name)
{
	struct swnic_addr6 req = { .size = sizeof(req), .scope_id = scope };
	unsigned int i;
	int ret;

	if (IN6_IS_ADDR_V4MAPPED(a)) {
		memcpy(&name->s_addr, &a->s6_addr[12], 4);
		return 0;
	}
	pthread_mutex_lock(&swnic_name6_lock);
	for (i = 0; i < swnic_name6_used; i++)
		if (!memcmp(&swnic_name6_cache[i].addr, a, sizeof(*a)) &&
		    (!scope || scope == swnic_name6_cache[i].scope)) {
			name->s_addr = swnic_name6_cache[i].name;
			pthread_mutex_unlock(&swnic_name6_lock);
			return 0;
		}
	pthread_mutex_unlock(&swnic_name6_lock);
	memcpy(req.addr, a, sizeof(req.addr));
	ret = swnic_addr6_ioctl(fd, &req);
	if (ret)
		return ret;
	name->s_addr = req.name;
	if (swnic_addr_is_name6(req.name))
		swnic_name6_remember(req.name, a, req.scope_id);
	return 0;
}

/* The IPv6 address (port 0) an IPv6 name stands for. */
int swnic_addr6_lookup(struct in_addr name, struct sockaddr_in6 *sin6)
{
	struct swnic_addr6 req = {
		.size = sizeof(req),
		.flags = SWNIC_ADDR6_LOOKUP,
		.name = name.s_addr,
	};
	unsigned int i;
	int ret;

	memset(sin6, 0, sizeof(*sin6));
	sin6->sin6_family = AF_INET6;
	pthread_mutex_lock(&swnic_name6_lock);
	for (i = 0; i < swnic_name6_used; i++)
		if (swnic_name6_cache[i].name == name.s_addr) {
			sin6->sin6_addr = swnic_name6_cache[i].addr;
			sin6->sin6_scope_id = swnic_name6_cache[i].scope;
			pthread_mutex_unlock(&swnic_name6_lock);
			return 0;
		}
	pthread_mutex_unlock(&swnic_name6_lock);
	ret = swnic_addr6_ioctl(-1, &req);
	if (ret)
		return ret;
	memcpy(&sin6->sin6_addr, req.addr, sizeof(req.addr));
	sin6->sin6_scope_id = req.scope_id;
	swnic_name6_remember(name.s_addr, &sin6->sin6_addr, req.scope_id);
	return 0;
}

/* @sin (port included) as a sockaddr_in6: IPv4 ones IPv4-mapped. */
static int swnic_addr_to_in6(const struct sockaddr_in *sin,
			     struct sockaddr_in6 *sin6)
{
	int ret;

	if (swnic_addr_is_v6(sin->sin_addr)) {
		ret = swnic_addr6_lookup(sin->sin_addr, sin6);
		if (ret)
			return ret;
	} else {
		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr.s6_addr[10] = 0xff;
		sin6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sin6->sin6_addr.s6_addr[12], &sin->sin_addr, 4);
	}
	sin6->sin6_port = sin->sin_port;
	return 0;
}

/* A sockaddr_in6 read into the provider's sockaddr_in (its name). */
static int swnic_addr_from_in6(const struct sockaddr_in6 *sin6,
			       struct sockaddr_in *sin)
{
	struct in_addr name;
	int ret;

	ret = swnic_addr6_name(-1, &sin6->sin6_addr, sin6->sin6_scope_id,
			       &name);
	if (ret)
		return ret == -FI_ENODATA ? ret : -FI_EINVAL;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr = name;
	sin->sin_port = sin6->sin6_port;
	return 0;
}

bool swnic_addr_format_ok(uint32_t fmt)
{
	switch (fmt) {
	case FI_FORMAT_UNSPEC:
	case FI_SOCKADDR:
	case FI_SOCKADDR_IN:
	case FI_SOCKADDR_IN6:
	case FI_ADDR_STR:
		return true;
	default:
		return false;
	}
}

size_t swnic_addr_len(uint32_t fmt)
{
	return fmt == FI_ADDR_STR ? SWNIC_ADDR_STRLEN :
	       fmt == FI_SOCKADDR_IN6 ? sizeof(struct sockaddr_in6) :
				    sizeof(struct sockaddr_in);
}

int swnic_addr_parse_service(const char *service, uint16_t *port)
{
	unsigned long val;
	char *end;

	if (!service || !*service)
		return -FI_EINVAL;
	errno = 0;
	val = strtoul(service, &end, 10);
	if (errno || *end || val > UINT16_MAX || service[0] == '-' ||
	    service[0] == '+' || service[0] == ' ')
		return -FI_EINVAL;
	*port = (uint16_t)val;
	return 0;
}

/*
 * Is @str "fi_swnic://A.B.C.D[:PORT]" or "fi_swnic://[IPV6[%SCOPE]][:PORT]"?
 * Fill @sin if so.
 */
int swnic_addr_parse_str(const char *str, struct sockaddr_in *sin)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	const char *rest = NULL, *colon, *end, *pct;
	size_t i, len;
	uint16_t port = 0;

	for (i = 0; i < SWNIC_ARRAY_SIZE(swnic_addr_prefixes); i++) {
		len = strlen(swnic_addr_prefixes[i]);
		if (!strncasecmp(str, swnic_addr_prefixes[i], len)) {
			rest = str + len;
			break;
		}
	}
	if (!rest)
		return -FI_EINVAL;
	if (*rest == '[') {
		/* IPv6: the brackets and the address are required. */
		end = strchr(rest, ']');
		if (!end || end == rest + 1 ||
		    (size_t)(end - rest - 1) >= sizeof(host))
			return -FI_EINVAL;
		len = (size_t)(end - rest - 1);
		memcpy(host, rest + 1, len);
		host[len] = '\0';
		if (end[1] && (end[1] != ':' ||
			       swnic_addr_parse_service(end + 2, &port)))
			return -FI_EINVAL;
		pct = strchr(host, '%');
		if (pct) {
			host[pct - host] = '\0';
			sin6.sin6_scope_id = if_nametoindex(pct + 1);
			if (!sin6.sin6_scope_id) {
				char *e;
				unsigned long v;

				errno = 0;
				v = strtoul(pct + 1, &e, 10);
				if (errno || *e || !v || v > UINT32_MAX ||
				    !isdigit((unsigned char)pct[1]))
					return -FI_EINVAL;
				sin6.sin6_scope_id = (uint32_t)v;
			}
		}
		if (inet_pton(AF_INET6, host, &sin6.sin6_addr) != 1)
			return -FI_EINVAL;
		sin6.sin6_port = htons(port);
		return swnic_addr_from_in6(&sin6, sin);
	}
	colon = strchr(rest, ':');
	len = colon ? (size_t)(colon - rest) : strlen(rest);
	if (!len || len >= sizeof(host))
		return -FI_EINVAL;
	memcpy(host, rest, len);
	host[len] = '\0';
	if (colon && swnic_addr_parse_service(colon + 1, &port))
		return -FI_EINVAL;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return -FI_EINVAL;
	return 0;
}

int swnic_addr_to_str4(const struct sockaddr_in *sin, char *buf, size_t len)
{
	char host[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host)))
		return -errno;
	return snprintf(buf, len, SWNIC_ADDR_STR_PREFIX "%s:%u", host,
			ntohs(sin->sin_port));
}

int swnic_addr_to_str(const struct sockaddr_in *sin, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	struct sockaddr_in6 sin6;
	int ret;

	if (swnic_addr_is_v6(sin->sin_addr)) {
		ret = swnic_addr_to_in6(sin, &sin6);
		if (ret)
			return ret;
		if (!inet_ntop(AF_INET6, &sin6.sin6_addr, host, sizeof(host)))
			return -errno;
		if (sin6.sin6_scope_id)
			return snprintf(buf, len, SWNIC_ADDR_STR_PREFIX
					"[%s%%%u]:%u", host,
					sin6.sin6_scope_id,
					ntohs(sin->sin_port));
		return snprintf(buf, len, SWNIC_ADDR_STR_PREFIX "[%s]:%u",
				host, ntohs(sin->sin_port));
	}
	return swnic_addr_to_str4(sin, buf, len);
}

/**
 * swnic_addr_read() - read an address given in format @fmt
 *
 * FI_FORMAT_UNSPEC (an opaque swnic address) is a sockaddr_in, or a string
 * starting with "fi_". Return: 0, or -FI_EINVAL for anything else.
 */
int swnic_addr_read(uint32_t fmt, const void *addr, size_t addrlen,
		    struct sockaddr_in *sin)
{
	const struct sockaddr_in *in = addr;
	const struct sockaddr_in6 *in6 = addr;
	const char *str = addr;

	if (!addr || !addrlen)
		return -FI_EINVAL;
	if (fmt == FI_FORMAT_UNSPEC)
		fmt = addrlen >= sizeof(*in) && in->sin_family == AF_INET ?
		      FI_SOCKADDR_IN :
		      addrlen >= sizeof(*in6) && in6->sin6_family == AF_INET6 ?
		      FI_SOCKADDR_IN6 : FI_ADDR_STR;
	if (fmt == FI_SOCKADDR && addrlen >= sizeof(*in6) &&
	    in6->sin6_family == AF_INET6)
		fmt = FI_SOCKADDR_IN6;

	switch (fmt) {
	case FI_SOCKADDR_IN6:
		if (addrlen < sizeof(*in6) || in6->sin6_family != AF_INET6)
			return -FI_EINVAL;
		return swnic_addr_from_in6(in6, sin);
	case FI_SOCKADDR:
	case FI_SOCKADDR_IN:
		if (addrlen < sizeof(*in) || in->sin_family != AF_INET)
			return -FI_EINVAL;
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_addr = in->sin_addr;
		sin->sin_port = in->sin_port;
		return 0;
	case FI_ADDR_STR:
		if (!memchr(str, '\0', addrlen))
			return -FI_EINVAL;
		return swnic_addr_parse_str(str, sin);
	default:
		return -FI_EINVAL;
	}
}

int swnic_addr_dup(uint32_t fmt, const struct sockaddr_in *sin,
		   void **addr, size_t *addrlen)
{
	char buf[SWNIC_ADDR_STRLEN];
	int len;

	if (fmt == FI_ADDR_STR) {
		len = swnic_addr_to_str(sin, buf, sizeof(buf));
		if (len < 0)
			return len;
		*addr = strdup(buf);
		*addrlen = (size_t)len + 1;
	} else if (fmt == FI_SOCKADDR_IN6 ||
		   (fmt != FI_SOCKADDR_IN && swnic_addr_is_v6(sin->sin_addr))) {
		struct sockaddr_in6 sin6;

		len = swnic_addr_to_in6(sin, &sin6);
		if (len < 0)
			return len;
		*addr = malloc(sizeof(sin6));
		if (*addr)
			memcpy(*addr, &sin6, sizeof(sin6));
		*addrlen = sizeof(sin6);
	} else if (swnic_addr_is_v6(sin->sin_addr)) {
		return -FI_EINVAL;	/* FI_SOCKADDR_IN: no IPv6 */
	} else {
		*addr = malloc(sizeof(*sin));
		if (*addr)
			memcpy(*addr, sin, sizeof(*sin));
		*addrlen = sizeof(*sin);
	}
	return *addr ? 0 : -FI_ENOMEM;
}

/* "localhost" or this host's own name (full or first label). */
/*
 * fi_getname/fi_getpeer's contract: write @sin in format @fmt into @addr
 * (*@addrlen bytes); too small (or NULL) is -FI_ETOOSMALL with the size
 * needed in *@addrlen.
 */
int swnic_addr_copy_out(uint32_t fmt, const struct sockaddr_in *sin,
			void *addr, size_t *addrlen)
{
	void *buf;
	size_t len;
	int ret;

	if (!addrlen)
		return -FI_EINVAL;
	ret = swnic_addr_dup(fmt, sin, &buf, &len);
	if (ret)
		return ret;
	if (!addr || *addrlen < len) {
		*addrlen = len;
		free(buf);
		return -FI_ETOOSMALL;
	}
	memcpy(addr, buf, len);
	*addrlen = len;
	free(buf);
	return 0;
}

bool swnic_addr_is_local_host(const char *name)
{
	char host[256];
	size_t len;

	if (!strcasecmp(name, "localhost") ||
	    !strcasecmp(name, "localhost.localdomain"))
		return true;
	if (gethostname(host, sizeof(host)))
		return false;
	host[sizeof(host) - 1] = '\0';
	if (!strcasecmp(name, host))
		return true;
	len = strcspn(host, ".");
	return strlen(name) == len && !strncasecmp(name, host, len);
}

/**
 * swnic_addr_resolve_node() - the IPv4 address of @node
 * @numeric: FI_NUMERICHOST: only a dotted-quad address is accepted
 * @remote_ok: a device could reach another host: names may be looked up
 *
 * "localhost" and this host's name are not resolved here: the caller maps
 * them to its device's own address (swnic_addr_is_local_host()).
 * Return: 0, or -FI_ENODATA when @node cannot be an swnic address.
 */
int swnic_addr_resolve_node(const char *node, bool numeric, bool remote_ok,
			    struct in_addr *ip)
{
	struct addrinfo hints = { .ai_family = AF_INET };
	struct in6_addr a6;
	struct addrinfo *res;
	int ret;

	if (inet_pton(AF_INET, node, ip) == 1)
		return 0;
	if (inet_pton(AF_INET6, node, &a6) == 1)
		return swnic_addr6_name(-1, &a6, 0, ip) ? -FI_ENODATA : 0;
	if (strchr(node, ':')) {
		/* IPv6 with a scope (fe80::1%eth0): as in a string */
		char str[SWNIC_ADDR_STRLEN + IF_NAMESIZE];
		struct sockaddr_in sin;

		if (strlen(node) > INET6_ADDRSTRLEN + IF_NAMESIZE)
			return -FI_ENODATA;
		snprintf(str, sizeof(str), SWNIC_ADDR_STR_PREFIX "[%s]", node);
		if (swnic_addr_parse_str(str, &sin))
			return -FI_ENODATA;
		*ip = sin.sin_addr;
		return 0;
	}
	if (numeric || !remote_ok)
		return -FI_ENODATA;
	ret = getaddrinfo(node, NULL, &hints, &res);
	if (ret) {
		SWNIC_INFO(FI_LOG_CORE, "%s: %s\n", node, gai_strerror(ret));
		return -FI_ENODATA;
	}
	*ip = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}
