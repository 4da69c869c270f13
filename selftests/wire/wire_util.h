/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wire_util - what the programs of the wire's tests (selftests/wire/wire_*.c,
 * run by selftests/test_wire*.sh in two network namespaces) share: their
 * checks and fatal errors, the swnic fabric, domain and endpoint they
 * open, and the out-of-band TCP socket over which the two sides swap
 * addresses and keep in step. Every program is linked with wire_util.c
 * (the Makefile); those that need none of it just do not call it.
 */
#ifndef SWNIC_WIRE_UTIL_H
#define SWNIC_WIRE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

/* The checks that failed so far: the exit status is 1 if any did. */
extern int failures;

/*
 * One line a check on stdout: "# ok: MESSAGE" or "# FAILED: MESSAGE"
 * (counted in failures), flushed at once, so that it stands in order
 * with stderr's lines and is not lost if the program is killed. MESSAGE
 * is a printf format, a string literal.
 */
#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			printf("# ok: " __VA_ARGS__);			\
			printf("\n");					\
		} else {						\
			printf("# FAILED: " __VA_ARGS__);		\
			printf("\n");					\
			failures++;					\
		}							\
		fflush(stdout);						\
	} while (0)

/*
 * Print "PROGRAM: WHAT: RET (fi_strerror(-RET))" on stderr and exit(2).
 * PROGRAM is the name the program was run by (wire_srx, ...).
 */
__attribute__((noreturn))
void die(const char *what, int ret);

/*
 * Hints for an RDM endpoint of the swnic provider with @caps, and the MR
 * mode every program copes with (virtual addresses, allocated memory,
 * provider keys, local registration). The caller adds what is its own.
 */
struct fi_info *wire_hints(uint64_t caps);

/*
 * fi_getinfo (API 1.17) at @node (NULL: any) for @hints, which it frees;
 * dies ("fi_getinfo") if nothing matches.
 */
struct fi_info *wire_getinfo(struct fi_info *hints, const char *node);

/* The fabric and domain of @info; dies ("setup") if either fails. */
void wire_domain_open(struct fi_info *info, struct fid_fabric **fabric,
		      struct fid_domain **domain);

/*
 * An endpoint of @info with a CQ of @format (bound for transmit and
 * receive) and an AV table of its own, not yet enabled: the caller binds
 * what else it needs (counters), then calls fi_enable(). Returns 0 or the
 * first error, for the caller to report as it does.
 */
int wire_ep_open(struct fid_domain *domain, struct fi_info *info,
		 enum fi_cq_format format, struct fid_ep **ep,
		 struct fid_cq **cq, struct fid_av **av);

/*
 * One completion from @cq within 20 s (1 ms polls): 1, an error, or
 * -FI_ETIMEDOUT. Its source (FI_SOURCE) in *@src if @src.
 */
ssize_t wire_cq_get(struct fid_cq *cq, struct fi_cq_tagged_entry *e,
		    fi_addr_t *src);

/*
 * The out-of-band socket's address families: IPv4 only (a node that is no
 * IPv4 address is tried as 0.0.0.0), or IPv6 as well (the target listens
 * dual stack, IPv4 alone on a kernel without IPv6; the initiator connects
 * to an IPv6 node over IPv6).
 */
enum wire_oob_af {
	WIRE_OOB_IPV4,
	WIRE_OOB_DUAL,
};

/*
 * The target: listen on TCP @port and return the first initiator's
 * connection (waits for it as long as it takes; dies ("listen") if the
 * port cannot be bound).
 */
int wire_oob_accept(int port, enum wire_oob_af af);

/*
 * The initiator: connect to @node's TCP @port, retrying every 100 ms for
 * 30 s while the target starts; dies ("connect to the target") after.
 */
int wire_oob_connect(const char *node, int port, enum wire_oob_af af);

/*
 * One write() of @len bytes, or one read() of @len bytes, on the socket;
 * dies naming @what (-FI_EIO) if it moved fewer.
 */
void wire_send(int sock, const void *buf, size_t len, const char *what);
void wire_recv(int sock, void *buf, size_t len, const char *what);

/* Keep in step: send one byte, or wait for the peer's ("oob sync"). */
void wire_sync(int sock, bool sending);

/*
 * Swap the names of @n (at most WIRE_NAMES_MAX) endpoints with the peer,
 * which has as many: ours in one write of n * WIRE_NAME_LEN bytes, its in
 * one read; its names go into @av, their addresses in @peers.
 */
#define WIRE_NAMES_MAX	4
#define WIRE_NAME_LEN	64
void wire_swap_names(int sock, struct fid_ep *const *eps, int n,
		     struct fid_av *av, fi_addr_t *peers);

#endif /* SWNIC_WIRE_UTIL_H */
