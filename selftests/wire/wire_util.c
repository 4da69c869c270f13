// SPDX-License-Identifier: GPL-2.0
/*
 * wire_util - the helpers the wire's test programs share (see wire_util.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include "wire_util.h"

int failures;

void die(const char *what, int ret)
{
	fprintf(stderr, "%s: %s: %d (%s)\n", program_invocation_short_name,
		what, ret, fi_strerror(-ret));
	exit(2);
}

struct fi_info *wire_hints(uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();

	hints->fabric_attr->prov_name = strdup("swnic");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = caps;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_LOCAL;
	return hints;
}

struct fi_info *wire_getinfo(struct fi_info *hints, const char *node)
{
	struct fi_info *info;
	int ret;

	ret = fi_getinfo(FI_VERSION(1, 17), node, NULL, 0, hints, &info);
	if (ret)
		die("fi_getinfo", ret);
	fi_freeinfo(hints);
	return info;
}

void wire_domain_open(struct fi_info *info, struct fid_fabric **fabric,
		      struct fid_domain **domain)
{
	int ret;

	if ((ret = fi_fabric(info->fabric_attr, fabric, NULL)) ||
	    (ret = fi_domain(*fabric, info, domain, NULL)))
		die("setup", ret);
}

int wire_ep_open(struct fid_domain *domain, struct fi_info *info,
		 enum fi_cq_format format, struct fid_ep **ep,
		 struct fid_cq **cq, struct fid_av **av)
{
	struct fi_cq_attr cq_attr = { .format = format };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	if ((ret = fi_endpoint(domain, info, ep, NULL)) ||
	    (ret = fi_cq_open(domain, &cq_attr, cq, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, av, NULL)) ||
	    (ret = fi_ep_bind(*ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(*ep, &(*av)->fid, 0)))
		return ret;
	return 0;
}

ssize_t wire_cq_get(struct fid_cq *cq, struct fi_cq_tagged_entry *e,
		    fi_addr_t *src)
{
	fi_addr_t dummy;

	for (int i = 0; i < 20000; i++) {
		ssize_t n = fi_cq_readfrom(cq, e, 1, src ? src : &dummy);

		if (n != -FI_EAGAIN)
			return n;
		usleep(1000);
	}
	return -FI_ETIMEDOUT;
}

int wire_oob_accept(int port, enum wire_oob_af af)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
	};
	struct sockaddr *sa = (struct sockaddr *)&sin6;
	socklen_t len = sizeof(sin6);
	int one = 1, zero = 0, l = -1, s;

	if (af == WIRE_OOB_DUAL)
		l = socket(AF_INET6, SOCK_STREAM, 0);
	if (l < 0) {	/* IPv4 only, or no IPv6 in this kernel */
		l = socket(AF_INET, SOCK_STREAM, 0);
		sa = (struct sockaddr *)&sin;
		len = sizeof(sin);
	} else {
		setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, sa, len) || listen(l, 1))
		die("listen", -FI_EADDRINUSE);
	s = accept(l, NULL, NULL);
	close(l);
	return s;
}

int wire_oob_connect(const char *node, int port, enum wire_oob_af af)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
	};
	struct sockaddr *sa = (struct sockaddr *)&sin;
	socklen_t len = sizeof(sin);
	int s, i;

	if (inet_pton(AF_INET, node, &sin.sin_addr) != 1 &&
	    af == WIRE_OOB_DUAL &&
	    inet_pton(AF_INET6, node, &sin6.sin6_addr) == 1) {
		sa = (struct sockaddr *)&sin6;
		len = sizeof(sin6);
	}
	for (i = 0; i < 300; i++) {
		s = socket(sa->sa_family, SOCK_STREAM, 0);
		if (!connect(s, sa, len))
			return s;
		close(s);
		usleep(100000);
	}
	die("connect to the target", -FI_ECONNREFUSED);
}

void wire_send(int sock, const void *buf, size_t len, const char *what)
{
	if (write(sock, buf, len) != (ssize_t)len)
		die(what, -FI_EIO);
}

void wire_recv(int sock, void *buf, size_t len, const char *what)
{
	if (read(sock, buf, len) != (ssize_t)len)
		die(what, -FI_EIO);
}

void wire_sync(int sock, bool sending)
{
	char c = 'x';

	if (sending)
		wire_send(sock, &c, 1, "oob sync");
	else
		wire_recv(sock, &c, 1, "oob sync");
}

void wire_swap_names(int sock, struct fid_ep *const *eps, int n,
		     struct fid_av *av, fi_addr_t *peers)
{
	char name[WIRE_NAMES_MAX][WIRE_NAME_LEN];
	char peer[WIRE_NAMES_MAX][WIRE_NAME_LEN];
	int ret, i;

	if (n < 1 || n > WIRE_NAMES_MAX)
		die("names to swap", -FI_EINVAL);
	memset(name, 0, sizeof(name));
	for (i = 0; i < n; i++) {
		size_t len = sizeof(name[i]);

		ret = fi_getname(&eps[i]->fid, name[i], &len);
		if (ret)
			die("fi_getname", ret);
	}
	wire_send(sock, name, n * sizeof(name[0]), "oob");
	wire_recv(sock, peer, n * sizeof(peer[0]), "oob");
	for (i = 0; i < n; i++)
		if (fi_av_insert(av, peer[i], 1, &peers[i], 0, NULL) != 1)
			die("fi_av_insert", -FI_EINVAL);
}
