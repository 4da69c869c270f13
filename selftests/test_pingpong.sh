#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian's fi_pingpong over swnic: RDM, MSG (connected: passive endpoint,
# fi_connect/fi_accept, FI_CONNREQ/FI_CONNECTED on the EQ, fi_shutdown)
# and DGRAM endpoints, msg and tagged
# transfers, several sizes, data integrity checked (-c), both doorbell
# modes (FI_SWNIC_DOORBELL_ENGINE=0/1). Server and client run as two
# processes on this host, exchanging addresses over fi_pingpong's own
# out-of-band TCP socket, as they would between two hosts.
. "$(dirname "$0")/lib.sh"

require_cmd fi_pingpong
require_cmd ss
port=27700

# Wait (up to 30 s) until the server listens on its control port.
wait_listen_here()
{
	for _ in $(seq 300); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.1
	done
	return 1
}

# pingpong DESC CLIENT-AND-SERVER-OPTIONS...
pingpong()
{
	desc=$1
	shift
	port=$((port + 1))
	timeout 120 fi_pingpong -p swnic "$@" -B "$port" >/tmp/pp.srv \
		2>/tmp/pp.srv.err &
	srv=$!
	wait_listen_here "$port"
	timeout 120 fi_pingpong -p swnic "$@" -P "$port" 127.0.0.1 \
		>/tmp/pp.cli 2>/tmp/pp.cli.err
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
	if [ "$cli_rc" = 0 ] && [ "$srv_rc" = 0 ]; then
		ok "$desc"
	else
		# fi_pingpong's errors are on stderr, its exit status an errno.
		crash=$(killed_by "$cli_rc" client; killed_by "$srv_rc" server)
		not_ok "$desc" ${crash:+"$crash"} \
			"client exit $cli_rc: $(cat /tmp/pp.cli.err)" \
			"$(tail -2 /tmp/pp.cli)" \
			"server exit $srv_rc: $(cat /tmp/pp.srv.err)" \
			"$(tail -2 /tmp/pp.srv)"
	fi
}

for engine in 0 1; do
	export FI_SWNIC_DOORBELL_ENGINE=$engine
	mode=$([ "$engine" = 1 ] && echo engine || echo syscall)
	pingpong "rdm msg 8 B..1 MiB, data checked ($mode doorbell)" \
		-e rdm -c -I 20 -S all
	pingpong "rdm tagged 64 KiB, data checked ($mode doorbell)" \
		-e rdm -m tagged -c -I 50 -S 65536
	pingpong "msg (connected) 8 B..1 MiB, data checked ($mode doorbell)" \
		-e msg -c -I 20 -S all
	pingpong "dgram msg 4 KiB, data checked ($mode doorbell)" \
		-e dgram -c -I 50 -S 4096
done
unset FI_SWNIC_DOORBELL_ENGINE

# 8 B goes by fi_inject, whose completions nobody reads: more of them than
# the transmit queue holds must not stall.
pingpong "rdm 8 B x 40000 (injects beyond the queue size)" -e rdm -I 40000 -S 8

# The sizes fi_pingpong reported are the sizes it was asked for.
pingpong "rdm 1 MiB x 100" -e rdm -c -I 100 -S 1048576
if grep -q '^1m ' /tmp/pp.cli || grep -q '^1048576 ' /tmp/pp.cli; then
	ok "client reported the 1 MiB run"
else
	not_ok "client reported the 1 MiB run" "$(cat /tmp/pp.cli)"
fi

tap_done
