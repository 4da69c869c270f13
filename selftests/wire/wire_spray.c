// SPDX-License-Identifier: GPL-2.0
/*
 * wire_spray - one user posting to many hosts that never answer
 * (test_wire_fuzz.sh runs it). It opens an RDM endpoint and sends 8 bytes
 * to each of COUNT addresses, FIRST_IP and the ones after it (port 1),
 * each a new peer of the namespace's wire; it stops at the first send the
 * provider cannot take (-FI_EAGAIN), then keeps its endpoint open for
 * SECONDS while those sends wait for answers that never come. It prints
 * "wire_spray: posted N of COUNT" once it stopped posting, then how many
 * of them completed with an error by then, and the first error; and
 * before it posts "wire_spray: port P", its endpoint's (a target's -e for
 * wire_fuzz -x held: -n 0 posts nothing, and it posts no receive).
 *
 *   wire_spray [-n COUNT] [-c EACH] [-s SECONDS] [-l LEN] [-m] [-w FILE]
 *              FIRST_IP
 *
 * -c: EACH sends to each address, one after the other (1 by default).
 * -l: each send is LEN bytes (8 by default). -w: print "wire_spray:
 * ready" once the endpoint is open and the buffer touched, and post only
 * once FILE exists (at most a minute later). -m: a second after posting,
 * it prints "wire_spray: cgroup grew N KiB", the growth of its memory
 * cgroup's memory.current (cgroup2) since just before the first post -
 * the kernel memory its sends hold, charged to it.
 *
 * Exit status 0, or 2 if the endpoint could not be opened.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "wire_util.h"

/* Its memory cgroup's memory.current (bytes), or -1. */
static long long cgroup_current(void)
{
	char line[512], path[600];
	long long v = -1;
	FILE *f;

	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			break;
	fclose(f);
	if (strncmp(line, "0::", 3))
		return -1;
	line[strcspn(line, "\n")] = '\0';
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current",
		 line + 3);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Read @cq's completions; count the errors in @failed, the first in @err. */
static void drain(struct fid_cq *cq, unsigned long *failed, int *err)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(cq, &e, 1);
		if (n == 1)
			continue;
		if (n != -FI_EAVAIL)
			return;
		memset(&ee, 0, sizeof(ee));
		if (fi_cq_readerr(cq, &ee, 0) != 1)
			return;
		if (!(*failed)++)
			*err = ee.err;
	}
}

int main(int argc, char **argv)
{
	unsigned long count = 300, seconds = 3, i, posted = 0, each = 1, j;
	unsigned long failed = 0;
	int err = 0;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct fi_info *info;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	static char small[8] = "spray";
	size_t len = sizeof(small);
	long long mem0 = -1, mem1;
	bool measure = false;
	const char *wait_for = NULL;
	char *buf = small;
	uint32_t first;
	fi_addr_t to;
	ssize_t ret;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:l:mw:c:")) != -1) {
		switch (opt) {
		case 'c':
			each = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			wait_for = optarg;
			break;
		case 'l':
			len = strtoul(optarg, NULL, 0);
			break;
		case 'm':
			measure = true;
			break;
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
	if (len > sizeof(small)) {
		buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (buf == MAP_FAILED)
			die("mmap", -FI_ENOMEM);
		memset(buf, 'x', len);
	}

	info = wire_getinfo(wire_hints(FI_MSG), NULL);
	wire_domain_open(info, &fabric, &domain);
	ret = wire_ep_open(domain, info, FI_CQ_FORMAT_TAGGED, &ep, &cq, &av);
	ret = ret ?: fi_enable(ep);
	if (ret)
		die("endpoint", (int)ret);
	{
		struct sockaddr_in me;
		size_t me_len = sizeof(me);

		if (fi_getname(&ep->fid, &me, &me_len))
			die("fi_getname", -FI_EINVAL);
		printf("wire_spray: port %u\n", ntohs(me.sin_port));
		fflush(stdout);
	}
	sin.sin_port = htons(1);
	if (wait_for) {
		printf("wire_spray: ready\n");
		fflush(stdout);
		for (i = 0; i < 600 && access(wait_for, F_OK); i++)
			usleep(100000);
	}
	if (measure && (mem0 = cgroup_current()) < 0)
		die("memory.current", -FI_ENOSYS);
	for (i = 0, ret = 0; i < count && !ret; i++) {
		sin.sin_addr.s_addr = htonl(first + (uint32_t)i);
		if (fi_av_insert(av, &sin, 1, &to, 0, NULL) != 1)
			die("fi_av_insert", -FI_EINVAL);
		for (j = 0; j < each; j++) {
			ret = fi_send(ep, buf, len, NULL, to, NULL);
			/* Completions of earlier ones (errors), and room. */
			drain(cq, &failed, &err);
			if (ret)
				break;
			posted++;
		}
	}
	drain(cq, &failed, &err);
	printf("wire_spray: posted %lu of %lu\n", posted, count * each);
	printf("wire_spray: %lu failed so far (first: %s)\n", failed,
	       failed ? fi_strerror(err) : "none");
	fflush(stdout);
	if (measure) {
		sleep(1);
		mem1 = cgroup_current();
		printf("wire_spray: cgroup grew %lld KiB\n",
		       (mem1 - mem0) / 1024);
		fflush(stdout);
		if (seconds)
			seconds--;
	}
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
	fprintf(stderr,
		"usage: wire_spray [-n COUNT] [-c EACH] [-s SECONDS] [-l LEN] [-m] [-w FILE] FIRST_IP\n");
	return 2;
}
