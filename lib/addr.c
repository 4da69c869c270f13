// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Endpoint addresses. An swnic endpoint is named by an IPv4 address of its
 * device (127.0.0.1 for a local-only device) and a 16-bit port on that
 * device, as a struct sockaddr_in (FI_SOCKADDR_IN, also accepted as
 * FI_SOCKADDR) or as the string "fi_swnic://A.B.C.D:PORT" (FI_ADDR_STR;
 * "fi_sockaddr_in://..." is read too).
 *
 * Name resolution never blocks on a name that cannot be swnic's: numeric
 * addresses, "localhost" and this host's own name are resolved locally;
 * other names only go to the resolver (getaddrinfo) when a device bound to
 * a netdev could reach them and FI_NUMERICHOST is not set.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "swnic.h"

/* "fi_swnic://255.255.255.255:65535" and its NUL */

static const char *const swnic_addr_prefixes[] = {
	SWNIC_ADDR_STR_PREFIX,
	"fi_sockaddr_in://",
};

bool swnic_addr_format_ok(uint32_t fmt)
{
	switch (fmt) {
	case FI_FORMAT_UNSPEC:
	case FI_SOCKADDR:
	case FI_SOCKADDR_IN:
	case FI_ADDR_STR:
		return true;
	default:
		return false;
	}
}

size_t swnic_addr_len(uint32_t fmt)
{
	return fmt == FI_ADDR_STR ? SWNIC_ADDR_STRLEN :
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

/* Is @str "fi_swnic://A.B.C.D[:PORT]"? Fill @sin if so. */
int swnic_addr_parse_str(const char *str, struct sockaddr_in *sin)
{
	char host[INET_ADDRSTRLEN];
	const char *rest = NULL, *colon;
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

int swnic_addr_to_str(const struct sockaddr_in *sin, char *buf, size_t len)
{
	char host[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host)))
		return -errno;
	return snprintf(buf, len, SWNIC_ADDR_STR_PREFIX "%s:%u", host,
			ntohs(sin->sin_port));
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
	const char *str = addr;

	if (!addr || !addrlen)
		return -FI_EINVAL;
	if (fmt == FI_FORMAT_UNSPEC)
		fmt = addrlen >= sizeof(*in) && in->sin_family == AF_INET ?
		      FI_SOCKADDR_IN : FI_ADDR_STR;

	switch (fmt) {
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
	struct addrinfo *res;
	int ret;

	if (inet_pton(AF_INET, node, ip) == 1)
		return 0;
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
