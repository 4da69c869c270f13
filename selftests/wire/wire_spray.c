// SPDX-License-Identifier: GPL-2.0
/*
 * wire_spray - one user posting to many hosts that never answer
 * (test_wire_fuzz.sh runs it). It opens an RDM endpoint and sends 8 bytes
 * to each of COUNT addresses, FIRST_IP and the ones after it (port 1),
 * each a new peer of the namespace's wire; it stops at the first send the
 * provider cannot take (-FI_EAGAIN), then keeps its endpoint open for
 * SECONDS while those sends wait for answers that never come. It prints
 * "wire_spray: posted N of COUNT" once it stopped posting.
 *
 *   wire_spray [-n COUNT] [-s SECONDS] FIRST_IP
 *
 * Exit status 0, or 2 if the endpoint could not be opened.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "wire_util.h"

int main(int argc, char **argv)
{
	unsigned long count = 300, seconds = 3, i, posted = 0;
	struct fi_cq_tagged_entry e;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct fi_info *info;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	static char buf[8] = "spray";
	uint32_t first;
	fi_addr_t to;
	ssize_t ret;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		switch (opt) {
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seconds = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || inet_pton(AF_INET, argv[optind],
					    &sin.sin_addr) != 1)
		goto usage;
	first = ntohl(sin.sin_addr.s_addr);

	info = wire_getinfo(wire_hints(FI_MSG), NULL);
	wire_domain_open(info, &fabric, &domain);
	ret = wire_ep_open(domain, info, FI_CQ_FORMAT_TAGGED, &ep, &cq, &av);
	ret = ret ?: fi_enable(ep);
	if (ret)
		die("endpoint", (int)ret);
	sin.sin_port = htons(1);
	for (i = 0; i < count; i++) {
		sin.sin_addr.s_addr = htonl(first + (uint32_t)i);
		if (fi_av_insert(av, &sin, 1, &to, 0, NULL) != 1)
			die("fi_av_insert", -FI_EINVAL);
		ret = fi_send(ep, buf, sizeof(buf), NULL, to, NULL);
		/* Completions of earlier ones (errors), and room. */
		while (fi_cq_read(cq, &e, 1) == 1)
			;
		if (ret)
			break;
		posted++;
	}
	printf("wire_spray: posted %lu of %lu\n", posted, count);
	fflush(stdout);
	sleep((unsigned int)seconds);
	/* Closed with sends in flight: they go, as the process's do. */
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	return 0;

usage:
	fprintf(stderr, "usage: wire_spray [-n COUNT] [-s SECONDS] FIRST_IP\n");
	return 2;
}
