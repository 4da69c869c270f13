/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fi_tool - what the libfabric benchmark tools (fi_stream, fi_soak) share:
 * fatal errors, the clock, sizes, and the control socket over which a
 * client and a server exchange parameters and fabric names, as
 * fi_pingpong does.
 */
#ifndef FI_TOOL_H
#define FI_TOOL_H

#include <stddef.h>
#include <stdint.h>

#define NAME_MAX_LEN	256

/* Set by main(): "fi_stream", whether this is the server, every wait's bound. */
extern const char *tool_name;
extern int tool_is_server;
extern int timeout_s;

/* Print "TOOL server|client: MESSAGE" on stderr and exit(2). */
__attribute__((noreturn, format(printf, 1, 2)))
void die(const char *fmt, ...);
/* die() with a libfabric return code and its fi_strerror(). */
__attribute__((noreturn))
void fi_die(const char *what, long ret);

double now(void);			/* CLOCK_MONOTONIC, seconds */
size_t parse_size(const char *s);	/* 4096, 64k, 1m, 1g; dies if bad */

/*
 * The control socket (TCP, IPv4): the server listens on PORT for one
 * client, the client connects (retrying until timeout_s). oob_io() reads
 * (out = 0) or writes all of LEN within timeout_s, or dies naming WHAT.
 */
void oob_listen(int port);
void oob_connect(const char *node, int port);
void oob_io(void *p, size_t len, int out, const char *what);
int oob_ready(void);			/* bytes can be read now */
void oob_close(void);

/*
 * Fabric names over the control socket. recv_name() replaces an IPv4
 * socket address bound to INADDR_ANY in a name of ADDR_FORMAT by the
 * control connection's peer address; it returns the name's length.
 */
void send_name(const void *name, size_t len);
size_t recv_name(void *name, uint32_t addr_format);

/*
 * Whether sequence number SEQ is seen for the first time (and marks it):
 * a bitmap that grows as the numbers do; dies if out of memory.
 */
int mark_seen(uint64_t seq);

#endif /* FI_TOOL_H */
