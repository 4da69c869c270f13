# SPDX-License-Identifier: GPL-2.0
#
# swnic: kernel module, libfabric provider, management tool and selftests.
#
#   make            module (for $(K)), provider, tool and selftests
#   make check      setup + build + run the suite in a VM on every kernel
#   make check-deb  the Debian packages installed in the VM (DKMS build)
#   make check-debug  the suite on a 6.12 debug kernel built here (KASAN,
#                   lockdep, kmemleak, ...): fails on any splat. Not in check
#   make demo       setup + build + boot a VM and show swnic at work
#   make bench      benchmarks in the VM (swnic beside shm and tcp on one
#                   host, beside tcp across two): tables, then Markdown,
#                   JSON and SVG plots in $(BENCH_OUT)
#   make style      checkpatch on the kernel code
#   make deb        Debian packages (swnic-dkms, libfabric-swnic,
#                   swnic-tools) with dpkg-buildpackage, checked by
#                   lintian, in $(DEB_OUT)
#   make install    install module, provider, tool and man pages on this host
#
# Kernel trees: `tools/testing/setup.sh` unpacks Debian's 6.1 and 6.12
# kernels and headers into $(SWNIC_CACHE)/k/<tag>/. On a real host, build
# against the running kernel with `make module K=host KDIR=/lib/modules/$(uname -r)/build`.

SWNIC_CACHE ?= $(HOME)/.cache/swnic
export SWNIC_CACHE
# The lanes of `make check`, each a Debian release as users have it:
# Debian 12 (its 6.1, libfabric 1.17, this machine's userland) and Debian
# 13 (its 6.12, libfabric 2.1, Open MPI 5: a debootstrapped root in which
# swnic is built, see tools/testing/trixie.sh), and the wire between two
# Debian 12 machines (two VMs joined by a link: tools/testing/two-vm.sh).
# 6.12 is Debian 12 with Debian's 6.12 kernel (the default K for demo and
# bench).
KERNELS     ?= 6.1 6.12-trixie 6.1-twovm
HOST_KERNELS = $(filter-out %-trixie %-twovm,$(KERNELS))
K           ?= 6.12
KDIR        ?= $(SWNIC_CACHE)/k/$(K)/build
MODOUT      := build/$(K)

PREFIX      ?= /usr/local
LIBDIR      ?= $(PREFIX)/lib
PROVDIR     ?= $(LIBDIR)/libfabric
INCDIR      ?= $(PREFIX)/include
SBINDIR     ?= $(PREFIX)/sbin
MANDIR      ?= $(PREFIX)/share/man
DESTDIR     ?=

CC          ?= gcc
USER_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	       -Wno-unused-parameter -Iinclude/uapi -Iinclude $(CFLAGS)

MOD_SRCS  := Kbuild $(wildcard kernel/*.c kernel/*.h include/uapi/linux/*.h)

LIB_SRCS  := $(wildcard lib/*.c)
LIB_HDRS  := $(wildcard lib/*.h include/uapi/linux/*.h include/rdma/*.h)
LIB       := lib/libswnic-fi.so

TOOL_SRCS := $(wildcard tools/swnic/*.c)
TOOL_HDRS := $(wildcard tools/swnic/*.h include/uapi/linux/*.h)
TOOL      := tools/swnic/swnic

TEST_SRCS := $(wildcard selftests/*.c)
TEST_HDRS := $(wildcard selftests/*.h include/uapi/linux/*.h include/rdma/*.h)
TESTS     := $(patsubst selftests/%.c,selftests/out/%,$(TEST_SRCS))

# Open MPI's real-client test program (test_mpi.sh) and benchmark
# (bench.sh), if mpicc is there.
MPICC     := $(shell command -v mpicc 2>/dev/null)
MPI_TESTS := $(if $(MPICC),selftests/mpi/out/mpi_basic selftests/mpi/out/mpi_bench)
# Programs the wire's tests (test_wire*.sh) run on two
# hosts.
WIRE_TESTS := selftests/wire/out/wire_rma selftests/wire/out/wire_fuzz \
	      selftests/wire/out/wire_atomic selftests/wire/out/wire_sep \
	      selftests/wire/out/wire_addr6 \
	      selftests/wire/out/wire_srx selftests/wire/out/wire_dc \
	      selftests/wire/out/wire_hol selftests/wire/out/wire_spray \
	      selftests/wire/out/wire_once
# make bench's registration cost program (swnic beside rdma_rxe), if
# libibverbs' headers are there (setup.sh installs libibverbs-dev).
REG_BENCH  := $(if $(wildcard /usr/include/infiniband/verbs.h),tools/testing/reg_bench)
# The streaming bandwidth program (test_stream.sh, make bench's stream
# section) and the soak (test_stream.sh shortened, make bench's soak).
STREAM     := tools/testing/fi_stream tools/testing/fi_soak

.PHONY: all module modules lib tool selftests setup setup-host check-build check check-deb check-debug demo \
	bench style deb \
	install install-module install-user uninstall clean

all: module lib tool selftests

# ---- kernel module --------------------------------------------------------

module: $(MODOUT)/swnic.ko

# The tree's release file too: a new kernel ABI rebuilds the module.
$(MODOUT)/swnic.ko: $(MOD_SRCS) $(wildcard $(KDIR)/include/generated/utsrelease.h)
	@test -d "$(KDIR)" || { echo "no kernel tree at $(KDIR): run tools/testing/setup.sh or set KDIR=" >&2; exit 1; }
	@mkdir -p $(MODOUT)
	@find $(MODOUT) -type l -delete
	@cp -rs $(CURDIR)/Kbuild $(CURDIR)/kernel $(CURDIR)/include $(MODOUT)/
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(MODOUT) W=1 modules

modules:
	@for k in $(HOST_KERNELS); do $(MAKE) --no-print-directory module K=$$k || exit 1; done

# ---- user space -----------------------------------------------------------

lib: $(LIB)

$(LIB): $(LIB_SRCS) $(LIB_HDRS)
	$(CC) $(USER_CFLAGS) -fPIC -shared -fvisibility=hidden \
		-Wl,--no-undefined -o $@ $(LIB_SRCS) -lfabric -lpthread

tool: $(TOOL)

$(TOOL): $(TOOL_SRCS) $(TOOL_HDRS)
	$(CC) $(USER_CFLAGS) $(shell pkg-config --cflags json-c) -o $@ \
		$(TOOL_SRCS) -lmnl $(shell pkg-config --libs json-c)

selftests: $(TESTS) $(MPI_TESTS) $(WIRE_TESTS) $(STREAM)

# The wire programs share their checks, fabric setup and out-of-band socket
# (wire_util.c): every one is linked with it.
WIRE_UTIL := selftests/wire/wire_util.c selftests/wire/wire_util.h

selftests/wire/out/%: selftests/wire/%.c $(WIRE_UTIL)
	@mkdir -p selftests/wire/out
	$(CC) $(USER_CFLAGS) -o $@ $< selftests/wire/wire_util.c -lfabric

selftests/mpi/out/%: selftests/mpi/%.c
	@mkdir -p selftests/mpi/out
	$(MPICC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<

selftests/out/%: selftests/%.c $(TEST_HDRS)
	@mkdir -p selftests/out
	$(CC) $(USER_CFLAGS) -Iselftests -I$(SWNIC_CACHE)/ksft \
		-Wno-sign-compare -Wno-clobbered \
		-o $@ $< -lfabric -lpthread -lmnl

# ---- the VM ---------------------------------------------------------------

# What the VM needs built (parts with no sources yet are left out).
VM_BUILD := modules $(if $(LIB_SRCS),lib) $(if $(TOOL_SRCS),tool) selftests

# check: the suite also installs the packages (selftests/test_deb.sh).
CHECK_BUILD := $(VM_BUILD) deb

# setup-host: what this machine's own lanes need; setup: every lane's.
setup-host:
	tools/testing/setup.sh

setup: setup-host
	$(if $(filter %-trixie,$(KERNELS)),tools/testing/setup-trixie.sh)

# What every lane of check and check-deb runs, built before the lanes.
check-build: setup
	$(MAKE) --no-print-directory -j$$(nproc) $(CHECK_BUILD)

check: check-build
	tools/testing/check.sh $(KERNELS)

# The Debian packages as users install them (selftests/test_deb.sh: DKMS
# builds the module in the guest, ~1600 s per lane): not part of `check`,
# which must end within CI's 90 minutes.
check-deb: check-build
	SWNIC_TEST_DEB=1 SWNIC_TESTS=test_deb.sh tools/testing/check.sh \
		$(filter-out %-twovm,$(KERNELS))

# Not part of `check`: the first run builds a kernel (17 CPU-minutes, 3 GB
# in $(SWNIC_CACHE)) and the suite takes about 3 times as long.
DEBUG_K := 6.12-debug

check-debug: setup-host
	tools/testing/debug-kernel.sh
	$(MAKE) --no-print-directory K=$(DEBUG_K) module $(filter-out modules,$(VM_BUILD))
	tools/testing/check-debug.sh $(DEBUG_K)

demo: setup-host
	$(MAKE) --no-print-directory module $(filter-out modules,$(VM_BUILD))
	tools/testing/vm.sh --kernel $(K) -- tools/testing/demo.sh

# The results directory, shared with the VM: bench.sh writes bench.md,
# bench.json and bench.tsv there, bench-plot.sh then draws the SVGs on this
# machine. Settings reach the guest as SWNIC_BENCH_* (see bench.sh), e.g.
# `make bench SWNIC_BENCH_RUNS=1`. Then two VMs (two-vm.sh --bench) add
# swnic beside tcp;ofi_rxm and verbs;ofi_rxm on soft-RoCE between two
# kernels (BENCH_TWOVM=0 leaves them out).
BENCH_OUT ?= build/bench
BENCH_TWOVM ?= 1

bench: setup-host
	$(MAKE) --no-print-directory module lib tool selftests tools/testing/memcpy_bw \
		tools/testing/cpu_lat $(STREAM) $(REG_BENCH)
	@mkdir -p $(BENCH_OUT)
	out=$$(cd $(BENCH_OUT) && pwd -P) && SWNIC_BENCH_OUT=$$out \
		tools/testing/vm.sh --kernel $(K) --share $$out --timeout 7800 \
		-- tools/testing/bench.sh
	$(if $(filter 1,$(BENCH_TWOVM)),tools/testing/two-vm.sh --kernel $(K) \
		--timeout 1800 --bench $(BENCH_OUT))
	tools/testing/bench-plot.sh $(BENCH_OUT)

$(REG_BENCH): tools/testing/reg_bench.c
	$(CC) $(USER_CFLAGS) -o $@ $< -lfabric -libverbs

tools/testing/memcpy_bw: tools/testing/memcpy_bw.c
	$(CC) $(USER_CFLAGS) -o $@ $<

tools/testing/cpu_lat: tools/testing/cpu_lat.c
	$(CC) $(USER_CFLAGS) -o $@ $< -lfabric

# fi_stream and fi_soak share their control socket and helpers (fi_tool.c).
tools/testing/fi_%: tools/testing/fi_%.c tools/testing/fi_tool.c \
		    tools/testing/fi_tool.h
	$(CC) $(USER_CFLAGS) -o $@ $< tools/testing/fi_tool.c -lfabric

style: setup-host
	tools/testing/checkpatch.sh

# ---- Debian packages -------------------------------------------------------

# The tree as git sees it (tracked and new files, no build output) is
# copied to $(DEB_OUT)/swnic-VERSION and built there by dpkg-buildpackage
# (debian/ at the top of the tree): the .debs, .dsc, .changes and the
# lintian report land in $(DEB_OUT). Lintian errors fail the build.
DEB_OUT     ?= build/deb
DEB_VERSION := $(shell dpkg-parsechangelog -S Version 2>/dev/null)
DEB_SRC      = $(DEB_OUT)/swnic-$(DEB_VERSION)
# The source files: git's list, or (a copy without .git, as the Debian 13
# lane's) every file but the build output .gitignore names.
DEB_FILES    = $(if $(wildcard .git),git ls-files -z --cached --others --exclude-standard,\
	find . \( -path ./build -o -path ./selftests/out -o -path ./selftests/mpi/out \
	-o -path ./selftests/wire/out -o -path ./tools/swnic/swnic \
	-o -path ./tools/testing/memcpy_bw -o -path ./tools/testing/cpu_lat -o -name '*.o' -o -name '*.so' -o -name '*.ko' \
	-o -name '*.mod' -o -name '*.mod.c' -o -name '*.cmd' -o -name '*.d' \
	-o -name modules.order -o -name Module.symvers \) -prune -o ! -type d -print0)

deb:
	@test -n "$(DEB_VERSION)" || { echo "no dpkg-parsechangelog: run tools/testing/setup.sh" >&2; exit 1; }
	rm -rf $(DEB_OUT) && mkdir -p $(DEB_SRC)
	$(DEB_FILES) | xargs -0 tar -cf - --no-recursion --ignore-failed-read | \
		tar -xf - -C $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc > ../build.log 2>&1 || \
		{ tail -30 ../build.log >&2; exit 1; }
	rm -rf $(DEB_SRC)
	lintian --fail-on error --info $(DEB_OUT)/swnic_$(DEB_VERSION)_*.changes \
		> $(DEB_OUT)/lintian.txt 2>&1; st=$$?; \
		grep -E '^[EW]:' $(DEB_OUT)/lintian.txt; exit $$st
	@ls $(DEB_OUT)/*.deb

# ---- install on a real host ----------------------------------------------

install: install-module install-user

install-module: module
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(MODOUT) modules_install
	depmod -a $(notdir $(patsubst %/build,%,$(realpath $(KDIR))))

install-user: lib tool
	install -D -m 0755 $(LIB) $(DESTDIR)$(PROVDIR)/libswnic-fi.so
	install -D -m 0644 include/rdma/fi_ext_swnic.h $(DESTDIR)$(INCDIR)/rdma/fi_ext_swnic.h
	install -D -m 0644 include/uapi/linux/swnic.h $(DESTDIR)$(INCDIR)/linux/swnic.h
	install -D -m 0644 include/uapi/linux/swnic_netlink.h \
		$(DESTDIR)$(INCDIR)/linux/swnic_netlink.h
	install -D -m 0755 $(TOOL) $(DESTDIR)$(SBINDIR)/swnic
	install -D -m 0644 Documentation/swnic.8 $(DESTDIR)$(MANDIR)/man8/swnic.8
	install -D -m 0644 Documentation/fi_swnic.7 $(DESTDIR)$(MANDIR)/man7/fi_swnic.7
	install -D -m 0644 tools/swnic/swnic.udev $(DESTDIR)/etc/udev/rules.d/90-swnic.rules
	install -D -m 0644 tools/swnic/swnic.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/swnic

uninstall:
	rm -f $(DESTDIR)$(PROVDIR)/libswnic-fi.so $(DESTDIR)$(SBINDIR)/swnic \
	      $(DESTDIR)$(INCDIR)/rdma/fi_ext_swnic.h $(DESTDIR)$(INCDIR)/linux/swnic.h \
	      $(DESTDIR)$(INCDIR)/linux/swnic_netlink.h \
	      $(DESTDIR)$(MANDIR)/man8/swnic.8 $(DESTDIR)$(MANDIR)/man7/fi_swnic.7 \
	      $(DESTDIR)/etc/udev/rules.d/90-swnic.rules \
	      $(DESTDIR)$(PREFIX)/share/bash-completion/completions/swnic

clean:
	rm -rf build selftests/out selftests/mpi/out selftests/wire/out $(LIB) $(TOOL) tools/testing/memcpy_bw tools/testing/cpu_lat \
		$(STREAM) tools/testing/reg_bench
