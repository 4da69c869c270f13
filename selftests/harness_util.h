/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests add to the kselftest harness they build with: Linux
 * 6.1's kselftest_harness.h ($(SWNIC_CACHE)/ksft, from
 * tools/testing/setup.sh).
 *
 * SETUP_SKIP(fmt, ...): skip the current test from its FIXTURE_SETUP.
 *
 * In that harness SKIP(statement, fmt, ...) writes the reason into the
 * shared results page (_metadata->results->reason, a MAP_SHARED page of
 * the parent's), sets _metadata->passed = 1 and _metadata->skip = 1, and
 * runs the statement. From a setup the statement is `return`, back to
 * the TEST_F() wrapper, which checks only
 *
 *	if (!_metadata->passed)
 *		return;
 *
 * - passed is 1 - so it sets setup_completed and runs the test body, and
 * then the teardown, on a fixture the setup never finished (zeroed or
 * half set): a body that dereferences what setup had yet to open dies
 * (SIGSEGV), or fails, or does for real what the skip was to avoid.
 *
 * Each test runs in a child of its own (__run_test() forks; the setup,
 * the body and the teardown all run in the child), and __wait_for_test()
 * takes a child's exit status 255 for a skip (passed = 1, skip = 1);
 * __run_test() then prints "ok N # SKIP <reason>" from the shared page.
 * So SETUP_SKIP() is SKIP() with _exit(255) for its statement: the child
 * ends there, and neither the body nor the teardown runs.
 *
 * Since the teardown does not run, a setup must undo, before it calls
 * SETUP_SKIP(), whatever it did that outlives its process: a sysfs or
 * procfs value it changed, a network namespace or link, a device, a
 * service, a file. File descriptors, mappings and memory go with the
 * child. stdout is flushed first (stderr too, in case it was made
 * buffered): _exit() would drop what the child wrote but did not flush.
 *
 * In a TEST() or TEST_F() body, SETUP_SKIP() is as right as SKIP(return)
 * where there is nothing for a teardown to do yet (the body runs in the
 * same child: _exit(255) is the skip __run_test() itself would make of
 * it), but not in a process or thread the test started: call it from the
 * test's own process, on its main thread, only.
 */
#ifndef SWNIC_HARNESS_UTIL_H
#define SWNIC_HARNESS_UTIL_H

#include <stdio.h>
#include <unistd.h>

#include "kselftest_harness.h"

#ifdef FIXTURE_TEARDOWN_PARENT
/*
 * A later harness (Linux 6.9 on: FIXTURE_TEARDOWN_PARENT) runs the body
 * only if the setup left _metadata->exit_code 0, which SKIP() sets to
 * KSFT_SKIP, and no teardown after a setup that did not complete: from
 * a setup, its own SKIP() does what SETUP_SKIP() does for 6.1's.
 */
#define SETUP_SKIP(fmt, ...) SKIP(return, fmt, ##__VA_ARGS__)
#else
static inline __attribute__((noreturn)) void harness_skip_exit(void)
{
	fflush(stdout);
	fflush(stderr);
	_exit(255);
}

#define SETUP_SKIP(fmt, ...) \
	SKIP(harness_skip_exit(), fmt, ##__VA_ARGS__)
#endif

#endif /* SWNIC_HARNESS_UTIL_H */
