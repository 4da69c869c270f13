// SPDX-License-Identifier: GPL-2.0
/*
 * wire_addr6 - the provider's IPv6 addresses, on a device bound to a
 * netdev with IPv6 addresses only (selftests/test_wire6.sh):
 *
 *   wire_addr6 DOMAIN OWN_IPV6 PEER_IPV6 [LINK_LOCAL IFNAME]
 *
 * fi_getinfo reports FI_SOCKADDR_IN6 and the device's address; fi_getname
 * gives it back as a sockaddr_in6 and as "fi_swnic://[OWN]:PORT"
 * (FI_ADDR_STR); fi_av_insert of a sockaddr_in6 and of a string,
 * fi_av_insertsvc and fi_av_insertsym round-trip through fi_av_lookup
 * and fi_av_straddr; FI_SOURCE with the device's address matches and
 * with another does not; FI_SOCKADDR_IN (no IPv6) is -FI_ENODATA;
 * malformed strings are refused; with LINK_LOCAL (a peer's fe80:: address
 * on IFNAME, the device's netdev) "[LINK_LOCAL%IFNAME]" is taken in the
 * netdev's scope and one "%lo" refused. One "ok"/"not ok" line per check; exit
 * status 1 if any failed.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

static int failed;
static const char *dom_name, *own, *peer, *ll, *ifname;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			printf("ok - ");				\
		} else {						\
			printf("not ok - ");				\
			failed = 1;					\
		}							\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	} while (0)

static int getinfo(uint32_t fmt, const char *node, const char *service,
		   uint64_t flags, struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	hints->fabric_attr->prov_name = strdup("swnic");
	hints->domain_attr->name = strdup(dom_name);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->addr_format = fmt;
	ret = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints, info);
	fi_freeinfo(hints);
	return ret;
}

static int is_addr(const struct sockaddr_in6 *s, const char *ip, int port)
{
	struct in6_addr a;

	inet_pton(AF_INET6, ip, &a);
	return s->sin6_family == AF_INET6 &&
	       !memcmp(&s->sin6_addr, &a, sizeof(a)) &&
	       (port < 0 || ntohs(s->sin6_port) == port);
}

int main(int argc, char **argv)
{
	struct fi_info *info = NULL, *sinfo = NULL, *x = NULL;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq, *scq;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_av *av, *sav;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct sockaddr_in6 sin6, out;
	char str[128], want[128];
	const char *strs[1];
	size_t len;
	fi_addr_t fa[4];
	int ret, port;

	if (argc != 4 && argc != 6) {
		fprintf(stderr, "usage: wire_addr6 DOMAIN OWN_IPV6 PEER_IPV6 [LINK_LOCAL IFNAME]\n");
		return 2;
	}
	if (argc == 6) {
		ll = argv[4];
		ifname = argv[5];
	}
	dom_name = argv[1];
	own = argv[2];
	peer = argv[3];

	ret = getinfo(FI_FORMAT_UNSPEC, NULL, NULL, 0, &info);
	CHECK(!ret && info->addr_format == FI_SOCKADDR_IN6 &&
	      info->src_addrlen == sizeof(sin6) &&
	      is_addr(info->src_addr, own, 0),
	      "fi_getinfo: FI_SOCKADDR_IN6, src_addr [%s]:0 (%d)", own, ret);
	if (ret)
		return 1;
	ret = getinfo(FI_SOCKADDR_IN, NULL, NULL, 0, &x);
	CHECK(ret == -FI_ENODATA, "FI_SOCKADDR_IN on an IPv6 device: -FI_ENODATA (%d)", ret);
	fi_freeinfo(x);
	x = NULL;
	ret = getinfo(FI_FORMAT_UNSPEC, own, "77", FI_SOURCE, &x);
	CHECK(!ret && is_addr(x->src_addr, own, 77),
	      "FI_SOURCE %s:77 is the device's (%d)", own, ret);
	fi_freeinfo(x);
	x = NULL;
	ret = getinfo(FI_FORMAT_UNSPEC, peer, "77", FI_SOURCE, &x);
	CHECK(ret == -FI_ENODATA, "FI_SOURCE %s (not the device's): -FI_ENODATA (%d)",
	      peer, ret);
	fi_freeinfo(x);
	x = NULL;
	ret = getinfo(FI_SOCKADDR_IN6, peer, "5", 0, &x);
	CHECK(!ret && x->addr_format == FI_SOCKADDR_IN6 &&
	      is_addr(x->dest_addr, peer, 5),
	      "node %s service 5: dest_addr (%d)", peer, ret);
	fi_freeinfo(x);
	x = NULL;

	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
	    (ret = fi_domain(fabric, info, &domain, NULL)) ||
	    (ret = fi_endpoint(domain, info, &ep, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &av, NULL)) ||
	    (ret = fi_cq_open(domain, &cq_attr, &cq, NULL)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) ||
	    (ret = fi_enable(ep))) {
		CHECK(0, "endpoint setup: %s", fi_strerror(-ret));
		return 1;
	}
	len = sizeof(out);
	ret = fi_getname(&ep->fid, &out, &len);
	port = ntohs(out.sin6_port);
	CHECK(!ret && len == sizeof(out) && is_addr(&out, own, -1) && port,
	      "fi_getname: sockaddr_in6 [%s]:%d", own, port);

	/* sockaddr_in6 in, sockaddr_in6 and a string out */
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(5);
	inet_pton(AF_INET6, peer, &sin6.sin6_addr);
	ret = fi_av_insert(av, &sin6, 1, fa, 0, NULL);
	len = sizeof(out);
	memset(&out, 0, sizeof(out));
	CHECK(ret == 1 && !fi_av_lookup(av, fa[0], &out, &len) &&
	      is_addr(&out, peer, 5), "fi_av_insert/lookup sockaddr_in6 [%s]:5",
	      peer);
	len = sizeof(str);
	snprintf(want, sizeof(want), "fi_swnic://[%s]:5", peer);
	fi_av_straddr(av, &sin6, str, &len);
	CHECK(!strcmp(str, want), "fi_av_straddr: %s", str);
	ret = fi_av_insertsvc(av, peer, "6", fa + 1, 0, NULL);
	len = sizeof(out);
	CHECK(ret == 1 && !fi_av_lookup(av, fa[1], &out, &len) &&
	      is_addr(&out, peer, 6), "fi_av_insertsvc %s 6", peer);
	ret = fi_av_insertsym(av, peer, 2, "7", 1, fa + 2, 0, NULL);
	len = sizeof(out);
	CHECK(ret == 2 && !fi_av_lookup(av, fa[3], &out, &len) &&
	      ntohs(out.sin6_port) == 7 &&
	      !memcmp(&out.sin6_addr.s6_addr, &sin6.sin6_addr.s6_addr, 15) &&
	      out.sin6_addr.s6_addr[15] == sin6.sin6_addr.s6_addr[15] + 1,
	      "fi_av_insertsym %s x2: the next address", peer);
	sin6.sin6_addr.s6_addr[0] = 0xff;	/* multicast */
	ret = fi_av_insert(av, &sin6, 1, fa, 0, NULL);
	CHECK(ret == 0, "fi_av_insert of a multicast address refused (%d)", ret);

	/* FI_ADDR_STR */
	ret = getinfo(FI_ADDR_STR, NULL, NULL, 0, &sinfo);
	CHECK(!ret && sinfo->addr_format == FI_ADDR_STR, "fi_getinfo FI_ADDR_STR (%d)", ret);
	if (ret)
		return 1;
	snprintf(want, sizeof(want), "fi_swnic://[%s]:0", own);
	CHECK(!strcmp(sinfo->src_addr, want), "FI_ADDR_STR src_addr %s",
	      (char *)sinfo->src_addr);
	{
		struct fid_ep *sep;
		struct fid_domain *sdom;
		struct fi_av_attr sattr = { .type = FI_AV_MAP };

		/* A domain of its own: an AV takes its domain's format. */
		if ((ret = fi_domain(fabric, sinfo, &sdom, NULL)) ||
		    (ret = fi_endpoint(sdom, sinfo, &sep, NULL)) ||
		    (ret = fi_av_open(sdom, &sattr, &sav, NULL)) ||
		    (ret = fi_cq_open(sdom, &cq_attr, &scq, NULL)) ||
		    (ret = fi_ep_bind(sep, &scq->fid, FI_TRANSMIT | FI_RECV)) ||
		    (ret = fi_ep_bind(sep, &sav->fid, 0)) ||
		    (ret = fi_enable(sep))) {
			CHECK(0, "FI_ADDR_STR endpoint: %s", fi_strerror(-ret));
			return 1;
		}
		len = sizeof(str);
		ret = fi_getname(&sep->fid, str, &len);
		snprintf(want, sizeof(want), "fi_swnic://[%s]:", own);
		CHECK(!ret && !strncmp(str, want, strlen(want)) &&
		      len == strlen(str) + 1, "fi_getname FI_ADDR_STR: %s", str);
		snprintf(want, sizeof(want), "fi_swnic://[%s]:8", peer);
		strs[0] = want;
		ret = fi_av_insert(sav, strs, 1, fa, 0, NULL);
		len = sizeof(str);
		CHECK(ret == 1 && !fi_av_lookup(sav, fa[0], str, &len) &&
		      !strcmp(str, want), "FI_ADDR_STR AV round trip: %s", str);
		{
			static const char *const bad[] = {
				"fi_swnic://[fd00::1", "fi_swnic://[]:1",
				"fi_swnic://[fd00::1]x", "fi_swnic://[fd00::1]:65536",
				"fi_swnic://[fd00::g]:1", "fi_swnic://fd00::1:1",
				"fi_swnic://[ff02::1]:1", "fi_swnic://[fd00::1%]:1",
			};
			size_t i;
			int n = 0;

			for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
				strs[0] = bad[i];
				n += fi_av_insert(sav, strs, 1, fa, 0, NULL);
			}
			CHECK(n == 0, "malformed fi_swnic://[...] refused by fi_av_insert (%d taken)", n);
		}
		if (ll) {
			/* link-local: the netdev's scope, any other refused */
			snprintf(want, sizeof(want), "fi_swnic://[%s%%%s]:9",
				 ll, ifname);
			strs[0] = want;
			ret = fi_av_insert(sav, strs, 1, fa, 0, NULL);
			len = sizeof(str);
			snprintf(want, sizeof(want), "fi_swnic://[%s%%%u]:9",
				 ll, if_nametoindex(ifname));
			CHECK(ret == 1 && !fi_av_lookup(sav, fa[0], str, &len) &&
			      !strcmp(str, want),
			      "link-local with its netdev's scope: %s", str);
			snprintf(want, sizeof(want), "fi_swnic://[%s%%lo]:9", ll);
			ret = fi_av_insert(sav, strs, 1, fa, 0, NULL);
			CHECK(ret == 0, "link-local of another interface (%s) refused",
			      want);
		}
		fi_close(&sep->fid);
		fi_close(&sav->fid);
		fi_close(&scq->fid);
		fi_close(&sdom->fid);
	}
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	fi_freeinfo(sinfo);
	return failed;
}
