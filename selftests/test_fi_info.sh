#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_fi_info.sh - Debian's fi_info(1) (libfabric-bin) against the swnic
# provider: what it lists, and how it answers a range of hint options
# (endpoint type, capabilities, modes, address formats, node/port with and
# without FI_SOURCE, domain and fabric names), with the domain attributes
# checked against the kernel's own numbers (`swnic -j dev show`).

. "$(dirname "$0")/lib.sh"

require_cmd fi_info
[ -c /dev/swnic0 ] || skip_all "no /dev/swnic0 (module not loaded?)"
[ -n "${FI_PROVIDER_PATH:-}" ] ||
	export FI_PROVIDER_PATH="$SWNIC_REPO/lib"
# Only swnic and the utility providers that could layer over it: starting
# every other provider costs ~1 s per fi_info in the VM and tests nothing.
export FI_PROVIDER="${FI_PROVIDER:-swnic,ofi_rxm,ofi_rxd}"

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

# fi PATTERN DESC ARGS...: `fi_info ARGS` succeeds and its output matches
# the extended regex PATTERN.
fi_ok()
{
	_p=$1 _d=$2
	shift 2
	if ! fi_info "$@" >"$OUT" 2>&1; then
		not_ok "$_d" "fi_info $* failed:"
		tail -n 20 "$OUT" | diag -
	elif ! grep -Eq -- "$_p" "$OUT"; then
		not_ok "$_d" "fi_info $*: no line matches /$_p/:"
		head -n 40 "$OUT" | diag -
	else
		ok "$_d"
	fi
}

# fi_none DESC ARGS...: fi_info finds nothing (-FI_ENODATA), and does not
# hang on the way (a whole fi_info run, all providers loaded, under TCG:
# < 10 s; a resolver timeout would take longer).
fi_none()
{
	_d=$1
	shift
	_t0=$(date +%s)
	if fi_info "$@" >"$OUT" 2>&1; then
		not_ok "$_d" "fi_info $* found something:"
		head -n 20 "$OUT" | diag -
	elif ! grep -q -- "-61" "$OUT"; then
		not_ok "$_d" "fi_info $* failed otherwise:"
		tail -n 5 "$OUT" | diag -
	elif [ $(($(date +%s) - _t0)) -ge 10 ]; then
		not_ok "$_d" "took $(($(date +%s) - _t0)) s"
	else
		ok "$_d"
	fi
}

# fi_lacks PATTERN DESC ARGS...: succeeds, and no line matches PATTERN.
fi_lacks()
{
	_p=$1 _d=$2
	shift 2
	if ! fi_info "$@" >"$OUT" 2>&1; then
		not_ok "$_d" "fi_info $* failed:"
		tail -n 20 "$OUT" | diag -
	elif grep -Eq -- "$_p" "$OUT"; then
		not_ok "$_d" "fi_info $*: unexpected /$_p/:"
		grep -E -- "$_p" "$OUT" | head -n 5 | diag -
	else
		ok "$_d"
	fi
}

# ---- listing -------------------------------------------------------------

fi_ok '^provider: swnic$' "fi_info -p swnic lists the provider" -p swnic
fi_ok '^    fabric: swnic$' "fabric swnic" -p swnic
fi_ok '^    domain: swnic0$' "domain swnic0" -p swnic
for t in FI_EP_RDM FI_EP_DGRAM; do
	fi_ok "type: $t\$" "offers $t" -p swnic
done
fi_info -p swnic >"$OUT" 2>&1
if [ "$(grep -m1 'type:' "$OUT" | awk '{print $2}')" = FI_EP_RDM ]; then
	ok "RDM comes first"
else
	not_ok "RDM comes first" "$(grep -m1 'type:' "$OUT")"
fi
fi_lacks 'ofi_rxm|ofi_rxd' "no utility layered over swnic by default" \
	-p swnic
fi_ok '^swnic:$' "fi_info -l lists swnic" -l
fi_ok 'version: 1\.0' "provider version 1.0" -l
fi_ok 'FI_SWNIC_LAYERING' "fi_info -e shows the provider's parameters" -e
fi_ok 'FI_SWNIC_MR_ODP' "... including the registration mode" -g SWNIC

# ---- endpoint types and layering -----------------------------------------

fi_info -p swnic -t FI_EP_RDM >"$OUT" 2>&1
if [ "$(grep -m1 '^provider:' "$OUT")" = "provider: swnic" ] &&
   ! grep -q 'FI_EP_MSG\|FI_EP_DGRAM' "$OUT"; then
	ok "-t FI_EP_RDM: swnic's own RDM only"
else
	not_ok "-t FI_EP_RDM: swnic's own RDM only" "$(head -n 8 "$OUT")"
fi
fi_ok 'type: FI_EP_MSG' "-t FI_EP_MSG: connected endpoints" \
	-p swnic -t FI_EP_MSG -v
fi_lacks 'FI_EP_RDM|FI_EP_DGRAM|ofi_rxm' \
	"-t FI_EP_MSG: swnic's own MSG only, nothing layered" -p swnic -t FI_EP_MSG
fi_lacks 'FI_EP_RDM|FI_EP_MSG' "-t FI_EP_DGRAM: DGRAM only" \
	-p swnic -t FI_EP_DGRAM
# libfabric 2.x dropped the socket endpoint types (fi_info no longer parses
# them); 1.x still has them, and swnic offers none.
if fi_info --version | grep -q '^libfabric api: 1\.'; then
	fi_none "-t FI_EP_SOCK_STREAM: none" -p swnic -t FI_EP_SOCK_STREAM
fi
if FI_SWNIC_LAYERING=1 fi_info -p swnic -t FI_EP_RDM 2>&1 |
   grep -q '^provider: swnic;ofi_rxd$'; then
	ok "FI_SWNIC_LAYERING=1 lets ofi_rxd layer over swnic's DGRAM"
else
	not_ok "FI_SWNIC_LAYERING=1 lets ofi_rxd layer over swnic's DGRAM"
fi
if FI_PROVIDER=swnic fi_info 2>&1 | grep '^provider:' | sort -u |
   grep -qvx 'provider: swnic'; then
	not_ok "FI_PROVIDER=swnic: only swnic"
else
	ok "FI_PROVIDER=swnic: only swnic"
fi

# ---- capabilities and modes ------------------------------------------------

fi_lacks 'caps: .*(FI_RMA|FI_TAGGED)' "-c FI_MSG: no unrequested primary caps" \
	-p swnic -t FI_EP_RDM -c FI_MSG -v
fi_ok '^    caps: .*FI_TAGGED' "-c FI_TAGGED" -p swnic -t FI_EP_RDM \
	-c FI_TAGGED -v
fi_ok '^    caps: .*FI_REMOTE_WRITE' "-c 'FI_RMA|FI_REMOTE_WRITE'" -p swnic \
	-t FI_EP_RDM -c 'FI_RMA|FI_REMOTE_WRITE' -v
fi_ok '^    caps: .*FI_ATOMIC' "-c FI_ATOMIC: RDM and MSG offer it" -p swnic \
	-t FI_EP_RDM -c FI_ATOMIC -v
fi_none "-c FI_ATOMIC on DGRAM: none" -p swnic -t FI_EP_DGRAM -c FI_ATOMIC
fi_none "-c FI_HMEM: none" -p swnic -c FI_HMEM
fi_none "-c 'FI_MSG|FI_RMA_EVENT': none" -p swnic -c 'FI_MSG|FI_RMA_EVENT'
fi_ok '^    mode: \[  \]' "-m FI_CONTEXT: the mode bit is cleared" -p swnic \
	-m FI_CONTEXT -v
fi_ok '^provider: swnic$' "-m with no mode the app supports" -p swnic \
	-m FI_RX_CQ_DATA

# ---- addresses ---------------------------------------------------------------

fi_ok 'addr_format: FI_SOCKADDR_IN$' "default address format" -p swnic -v
fi_ok 'addr_format: FI_ADDR_STR$' "-a FI_ADDR_STR" -p swnic -a FI_ADDR_STR -v
fi_ok 'src_addr: fi_swnic://' "FI_ADDR_STR source is fi_swnic://" -p swnic \
	-a FI_ADDR_STR -v
fi_ok 'addr_format: FI_SOCKADDR_IN$' "-a FI_FORMAT_UNSPEC: FI_SOCKADDR_IN" \
	-p swnic -a FI_FORMAT_UNSPEC -v
fi_none "-a FI_SOCKADDR_IN6: none" -p swnic -a FI_SOCKADDR_IN6
fi_ok 'dest_addr: fi_sockaddr_in://127\.0\.0\.1:4000' "-n 127.0.0.1 -P 4000" \
	-p swnic -n 127.0.0.1 -P 4000 -v
fi_ok 'dest_addr: fi_sockaddr_in://127\.0\.0\.1:4001' "-n localhost" \
	-p swnic -n localhost -P 4001 -v
fi_ok 'src_addr: fi_sockaddr_in://127\.0\.0\.1:5000' \
	"-s 127.0.0.1 -P 5000 (FI_SOURCE)" -p swnic -s 127.0.0.1 -P 5000 -v
fi_lacks 'dest_addr: fi_' "FI_SOURCE gives no destination" \
	-p swnic -s 127.0.0.1 -P 5000 -v
fi_none "-n 10.1.2.3: not this host, fails at once" -p swnic -n 10.1.2.3 \
	-P 1
fi_none "-n unknown name: fails at once" -p swnic \
	-n no-such-host.swnic.invalid -P 1
fi_none "-P http: not a port" -p swnic -n 127.0.0.1 -P http

# ---- names --------------------------------------------------------------------

fi_ok '^    domain: swnic0$' "-d swnic0" -p swnic -d swnic0
fi_none "-d nosuchdev: none" -p swnic -d nosuchdev
fi_ok '^    fabric: swnic$' "-f swnic" -p swnic -f swnic
fi_none "-f ethernet: none" -p swnic -f ethernet

# ---- attributes are the kernel's -------------------------------------------

fi_info -p swnic -t FI_EP_RDM -v >"$OUT" 2>&1
attr() { grep -m1 "^        $1:" "$OUT" | awk '{print $2}'; }
fi_ok 'mr_mode: \[ FI_MR_ALLOCATED, FI_MR_PROV_KEY \]' \
	"mr_mode: only what swnic needs, and keys of its own" \
	-p swnic -t FI_EP_RDM -v
fi_ok 'threading: FI_THREAD_SAFE' "default threading: FI_THREAD_SAFE" \
	-p swnic -v
# 2.x prints the one progress model as "progress".
fi_ok ' (data_)?progress: FI_PROGRESS_AUTO' "data progress: the kernel's" \
	-p swnic -v
if command -v swnic >/dev/null && command -v jq >/dev/null &&
   json=$(swnic -j dev show swnic0 2>/dev/null) && [ -n "$json" ]; then
	dev=$(printf '%s' "$json" | jq -c 'if type == "array" then .[0] else . end')
	for pair in mr_cnt:max_mr ep_cnt:max_ep cq_cnt:max_cq; do
		a=${pair%%:*} k=${pair#*:}
		want=$(printf '%s' "$dev" | jq -r ".$k // empty")
		got=$(attr "$a")
		if [ -z "$want" ]; then
			skip "$a equals the kernel's $k" "tool has no $k"
		elif [ "$want" = "$got" ]; then
			ok "$a equals the kernel's $k ($got)"
		else
			not_ok "$a equals the kernel's $k" "fi_info $got, kernel $want"
		fi
	done
else
	skip "domain limits equal the kernel's" "no swnic tool or jq"
fi

# ---- a device bound to a netdev reaches other hosts -----------------------

NETDEV=swnicfi1
if command -v swnic >/dev/null && swnic dev add $NETDEV netdev lo \
	>/dev/null 2>&1; then
	trap 'swnic dev del $NETDEV force >/dev/null 2>&1; rm -f "$OUT"' EXIT
	fi_ok '^    domain: swnicfi1$' "a netdev-bound device is listed" \
		-p swnic -d $NETDEV
	# It reaches other hosts over the wire: FI_REMOTE_COMM, unasked.
	fi_ok '^    caps: .*FI_REMOTE_COMM' \
		"... with FI_REMOTE_COMM (the wire reaches other hosts)" \
		-p swnic -d $NETDEV -v
	fi_ok 'dest_addr: fi_sockaddr_in://192\.0\.2\.7:9' \
		"... and reaches another host's address" \
		-p swnic -d $NETDEV -n 192.0.2.7 -P 9 -v
	fi_none "... but an unresolvable name finds nothing" -p swnic \
		-d $NETDEV -n no-such-host.swnic.invalid -P 1 -v
	fi_lacks 'FI_REMOTE_COMM' "swnic0 stays local-only" -p swnic -d swnic0 -v
	swnic dev del $NETDEV force >/dev/null 2>&1
else
	skip "a netdev-bound device" "cannot create one (swnic dev add)"
fi

tap_done
