#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_stream.sh - streaming across the wire: two network namespaces
# joined by a veth pair, a swnic device in each bound to its end, and
# tools/testing/fi_stream (what make bench's stream section runs) across,
# server in one namespace, client in the other, WINDOW 8 messages in
# flight, every message's data checked by the server (-c): RDM with large
# and small messages, MSG (connected). Then the check's own error path (a
# message corrupted on purpose before it is sent is counted wrong, both
# sides fail), a server killed mid-stream fails the client within its
# timeout instead of hanging it, and at the end every object is released
# (the module's counters). Then tools/testing/fi_soak (make bench's soak,
# shortened) across the same pair under 1 % netem loss on both ends, GSO
# off: random sends, tagged sends, injects, RMA writes read back, fetching
# atomics, every byte and result checked; and the soak's own check (a
# corrupted send is found).
#
# swnic-timeout: 600

. "$(dirname "$0")/lib.sh"

require_cmd ip ss swnic jq
STREAM=$SWNIC_REPO/tools/testing/fi_stream
SOAK=$SWNIC_REPO/tools/testing/fi_soak
srv=
cleanup()
{
	[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null
	wire_pair_del
}
trap cleanup EXIT

objects()
{
	swnic -j stat show | jq -c '.[] | select(.dev == "*") | .counters'
}
before=$(objects)

check "fi_stream and fi_soak are built" test -x "$STREAM" -a -x "$SOAK"
wire_pair s 10.82.0
check "the namespaces reach each other (ping)" $A ping -c 1 -W 5 $ADDR_B

port=27850
# start_server EP: fi_stream's server in A (its pid in $srv).
start_server()
{
	port=$((port + 1))
	$A "$STREAM" -p swnic -e "$1" -B "$port" -t 30 >/tmp/wst.srv \
		2>/tmp/wst.srv.err &
	srv=$!
	wait_listen swnicsa "$port"
}

# client EP OPTIONS...: fi_stream's client in B; exit status in $cli_rc,
# the server's (waited for) in $srv_rc.
client()
{
	local ep=$1
	shift
	$B timeout 300 "$STREAM" -p swnic -e "$ep" -W 8 -c -t 30 "$@" \
		-P "$port" "$ADDR_A" >/tmp/wst.cli 2>/tmp/wst.cli.err
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
	srv=
}

why()
{
	echo "client exit $cli_rc: $(cat /tmp/wst.cli /tmp/wst.cli.err)"
	echo "server exit $srv_rc: $(cat /tmp/wst.srv /tmp/wst.srv.err)"
}

# stream DESC EP MSGS OPTIONS...: a checked stream of MSGS messages; both
# sides succeed and the client reports every message verified.
stream()
{
	local desc=$1 ep=$2 msgs=$3 t0=$SECONDS
	shift 3
	start_server "$ep"
	client "$ep" -I "$msgs" "$@"
	diag "$desc: $((SECONDS - t0)) s: $(cat /tmp/wst.cli)"
	if [ "$cli_rc" = 0 ] && [ "$srv_rc" = 0 ] &&
	   grep -q "^stream .* msgs=$msgs .*verified=$msgs errors=0$" /tmp/wst.cli; then
		ok "$desc"
	else
		not_ok "$desc" "$(why)"
	fi
}

stream "rdm: 4 MiB as 16 x 256 KiB, window 8, data verified" rdm 16 -S 256k
stream "rdm: 2 MiB as 512 x 4 KiB, window 8, data verified" rdm 512 -S 4096
stream "msg (connected): 4 MiB as 16 x 256 KiB, window 8, data verified" \
	msg 16 -S 256k

# The check itself: message 5 corrupted before it is sent.
start_server rdm
client rdm -I 16 -S 65536 -X 5
if [ "$cli_rc" = 1 ] && [ "$srv_rc" = 1 ] &&
   grep -q "^stream .* msgs=16 .*verified=15 errors=1$" /tmp/wst.cli; then
	ok "a message corrupted on purpose is counted wrong, both sides fail"
else
	not_ok "a message corrupted on purpose is counted wrong, both sides fail" \
		"$(why)"
fi

# A server killed mid-stream: the client ends with an error within its
# progress timeout (-t 10) and the peer timeout, not a hang.
port=$((port + 1))
$A "$STREAM" -p swnic -e rdm -B "$port" -t 30 >/tmp/wst.srv 2>&1 &
srv=$!
wait_listen swnicsa "$port"
t0=$SECONDS
$B timeout 120 "$STREAM" -p swnic -e rdm -W 8 -S 65536 -T 60 -t 10 \
	-P "$port" "$ADDR_A" >/tmp/wst.cli 2>/tmp/wst.cli.err &
cli=$!
sleep 3
kill -9 "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
srv=
wait "$cli"
cli_rc=$?
took=$((SECONDS - t0))
if [ "$cli_rc" = 2 ] && [ "$took" -lt 60 ]; then
	ok "a server killed mid-stream fails the client ($took s): $(cat /tmp/wst.cli.err)"
else
	not_ok "a server killed mid-stream fails the client" \
		"exit $cli_rc after $took s" "$(cat /tmp/wst.cli /tmp/wst.cli.err)"
fi

# soak DESC SECS OPTIONS...: fi_soak's server in A, its client in B.
soak()
{
	local secs=$1
	shift
	port=$((port + 1))
	$A "$SOAK" -p swnic -B "$port" -t 30 >/tmp/wst.srv 2>/tmp/wst.srv.err &
	srv=$!
	wait_listen swnicsa "$port"
	$B timeout 300 "$SOAK" -p swnic -W 8 -S 256k -T "$secs" -t 30 "$@" \
		-P "$port" "$ADDR_A" >/tmp/wst.cli 2>/tmp/wst.cli.err
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
	srv=
}

check "1 % loss on both ends, GSO and TSO off" sh -c "
	$A ethtool -K swsa gso off tso off >/dev/null &&
	$B ethtool -K swsb gso off tso off >/dev/null &&
	$A tc qdisc replace dev swsa root netem loss 1% &&
	$B tc qdisc replace dev swsb root netem loss 1%"
soak 20 -s 7
diag "soak: $(cat /tmp/wst.cli) / $(cat /tmp/wst.srv)"
if [ "$cli_rc" = 0 ] && [ "$srv_rc" = 0 ] &&
   grep -q "^soak .* sends=[1-9].* tsends=[1-9].* writes=[1-9].* reads=[1-9].* atomics=[1-9].* errors=0$" /tmp/wst.cli; then
	ok "soak: 20 s of random operations at 1 % loss, every byte and result checked"
else
	not_ok "soak: 20 s of random operations at 1 % loss, every byte and result checked" \
		"$(why)"
fi
# Operation 4 of seed 7 is a send (the run above shows the same sequence).
soak 3 -s 7 -X 4
if [ "$cli_rc" = 1 ] && [ "$srv_rc" = 1 ] &&
   grep -q "^soak .* errors=1$" /tmp/wst.cli; then
	ok "soak: a send corrupted on purpose is found, both sides fail"
else
	not_ok "soak: a send corrupted on purpose is found, both sides fail" \
		"$(why)"
fi

cleanup
trap - EXIT
# The peer contexts go with their namespace; give the kernel a moment.
for _ in $(seq 50); do
	[ "$(objects)" = "$before" ] && break
	sleep 0.2
done
after=$(objects)
if [ "$after" = "$before" ]; then
	ok "every object made was released (module counters)"
else
	not_ok "every object made was released (module counters)" \
		"before: $before" "after:  $after"
fi

tap_done
