// SPDX-License-Identifier: GPL-2.0
/*
 * fi_tool - the helpers fi_stream and fi_soak share (see fi_tool.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fi_tool.h"

const char *tool_name = "fi_tool";
int tool_is_server;
int timeout_s = 60;

static int oob = -1;
static struct sockaddr_in oob_peer;

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", tool_name,
		tool_is_server ? "server" : "client");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void fi_die(const char *what, long ret)
{
	die("%s: %ld (%s)", what, ret, fi_strerror((int)(ret < 0 ? -ret : ret)));
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || !v)
		die("bad size '%s'", s);
	return v;
}

void oob_io(void *p, size_t len, int out, const char *what)
{
	double end = now() + timeout_s;
	struct pollfd pfd = { .fd = oob, .events = out ? POLLOUT : POLLIN };
	ssize_t n;

	while (len) {
		if (now() > end)
			die("control socket: %s: timed out", what);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = out ? write(oob, p, len) : read(oob, p, len);
		if (n == 0)
			die("control socket: %s: the peer closed it", what);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die("control socket: %s: %s", what, strerror(errno));
		}
		p = (char *)p + n;
		len -= n;
	}
}

int oob_ready(void)
{
	struct pollfd pfd = { .fd = oob, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

void oob_listen(int port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	socklen_t len = sizeof(oob_peer);
	struct pollfd pfd;
	int one = 1, l;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		die("socket: %s", strerror(errno));
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) || listen(l, 1))
		die("control port %d: %s", port, strerror(errno));
	pfd = (struct pollfd){ .fd = l, .events = POLLIN };
	if (poll(&pfd, 1, timeout_s * 1000) <= 0)
		die("no client within %d s", timeout_s);
	oob = accept(l, (struct sockaddr *)&oob_peer, &len);
	if (oob < 0)
		die("accept: %s", strerror(errno));
	close(l);
	setsockopt(oob, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void oob_connect(const char *node, int port)
{
	double end = now() + timeout_s;
	int one = 1;

	oob_peer = (struct sockaddr_in){
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	if (inet_pton(AF_INET, node, &oob_peer.sin_addr) != 1)
		die("'%s' is not an IPv4 address", node);
	for (;;) {
		oob = socket(AF_INET, SOCK_STREAM, 0);
		if (oob < 0)
			die("socket: %s", strerror(errno));
		if (!connect(oob, (struct sockaddr *)&oob_peer,
			     sizeof(oob_peer)))
			break;
		close(oob);
		if (now() > end)
			die("cannot reach the server at %s:%d: %s", node, port,
			    strerror(errno));
		usleep(100000);
	}
	setsockopt(oob, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void oob_close(void)
{
	if (oob >= 0)
		close(oob);
	oob = -1;
}

void send_name(const void *name, size_t len)
{
	uint64_t l = len;

	oob_io(&l, sizeof(l), 1, "name length");
	oob_io((void *)name, len, 1, "name");
}

size_t recv_name(void *name, uint32_t addr_format)
{
	struct sockaddr_in *sin = name;
	uint64_t l;

	oob_io(&l, sizeof(l), 0, "name length");
	if (!l || l > NAME_MAX_LEN)
		die("bad name length %llu from the peer", (unsigned long long)l);
	oob_io(name, l, 0, "name");
	if (addr_format == FI_SOCKADDR_IN && l >= sizeof(*sin) &&
	    sin->sin_family == AF_INET &&
	    sin->sin_addr.s_addr == htonl(INADDR_ANY))
		sin->sin_addr = oob_peer.sin_addr;
	return l;
}

static uint8_t *seen;
static uint64_t seen_len;

int mark_seen(uint64_t seq)
{
	if (seq / 8 >= seen_len) {
		uint64_t n = seen_len ? seen_len : 1024;

		while (seq / 8 >= n)
			n *= 2;
		seen = realloc(seen, n);
		if (!seen)
			die("out of memory");
		memset(seen + seen_len, 0, n - seen_len);
		seen_len = n;
	}
	if (seen[seq / 8] & (1 << (seq % 8)))
		return 0;
	seen[seq / 8] |= 1 << (seq % 8);
	return 1;
}
