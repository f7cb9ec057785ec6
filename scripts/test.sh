#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs what is needed, builds codenib with warnings as errors, and runs
# the whole test suite three times: plain, under valgrind, and built with
# AddressSanitizer + UndefinedBehaviorSanitizer; then the compiler's tests
# under ThreadSanitizer (`make check-tsan`), each fuzz target for a few
# seconds (`make fuzz-smoke`) and `make distcheck`.  The
# last line is "N passed, N failed" over every test point of the three runs
# (distcheck counts as one).
#
# Every step that builds or tests runs with make -j"$(nproc)" (a two-core
# runner ran the ASan, TSan, fuzzing and distcheck builds on one core
# before), and each step prints how long it took.  distcheck's own
# `make check` of the tarball runs the suite without its slowest tests
# (CN_LONG_TESTS in Makefile.am): by then the whole suite has run three
# times, once (check-asan) built from the same distributed sources in a
# separate build directory, so what distcheck adds -- the tarball is
# complete, builds out of tree, its check programs build, its tests run,
# it installs and uninstalls cleanly -- is still all checked.
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0

t0=$(date +%s)
t_step=$t0
took() {  # how long the step just finished took
  now=$(date +%s)
  echo "    ($((now - t_step)) s)"
  t_step=$now
}
note() { printf '\n==> %s\n' "$*"; }
count() {  # add the results recorded under $1
  set -- $(sh "$top/scripts/ci-summary.sh" "$1")
  passed=$((passed + $1)); failed=$((failed + $2))
  echo "    $1 passed, $2 failed"
}
finish() {
  echo
  echo "total: $(($(date +%s) - t0)) s"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit $?
}
step_failed() {  # a build step failed: it counts as a failure
  echo "test.sh: $* failed" >&2
  failed=$((failed + 1))
}

note "installing packages"
sh scripts/setup.sh || { step_failed "setup"; finish; }
# the official MCP SDK's client, for the interoperability test, which must
# then run (not skip)
sh scripts/fetch-mcp-client.sh || { step_failed "fetch-mcp-client"; finish; }
CN_REQUIRE_INTEROP=1
export CN_REQUIRE_INTEROP
took
note "configuring"
./autogen.sh >/dev/null || { step_failed "autogen.sh"; finish; }
rm -rf _build && mkdir _build && cd _build || { step_failed "mkdir _build"; finish; }
../configure --enable-werror >configure.out 2>&1 || { cat configure.out; step_failed "configure"; finish; }
sed -n '/^configure: *$/,$p' configure.out | tail -n 16
took
note "building"
make -j"$jobs" >make.out 2>&1 || { tail -n 60 make.out; step_failed "make"; finish; }
took

note "test suite"
make -j"$jobs" check >check.out 2>&1 || { grep -E '^(FAIL|ERROR)' check.out; cat test-suite.log | tail -n 80; }
count .
took

note "test suite under valgrind"
find tests -name '*.trs' -delete; find tests -name '*.log' -delete; rm -f test-suite.log
make -j"$jobs" check-valgrind >valgrind.out 2>&1 || { grep -E '^(FAIL|ERROR)' valgrind.out; tail -n 80 test-suite.log; }
count .
took

note "test suite under AddressSanitizer + UndefinedBehaviorSanitizer"
make -j"$jobs" check-asan >asan.out 2>&1 || { grep -E '^(FAIL|ERROR)' asan.out; tail -n 80 asan-build/test-suite.log 2>/dev/null || tail -n 60 asan.out; }
if [ -d asan-build ]; then count asan-build; else step_failed "check-asan build"; fi
took

note "the compiler's tests under ThreadSanitizer (make check-tsan)"
if make -j"$jobs" check-tsan >tsan.out 2>&1; then
  count tsan-build
else
  grep -E '^(FAIL|ERROR)|check-tsan' tsan.out; tail -n 60 tsan-build/test-suite.log 2>/dev/null || tail -n 60 tsan.out
  # a report in a process whose status no test point looked at fails the
  # step even when every point passed
  if [ -d tsan-build ]; then count tsan-build; fi
  step_failed "make check-tsan"
fi
took

note "fuzzing: every libFuzzer target for a few seconds from its seeds (make fuzz-smoke)"
if make -j"$jobs" fuzz-smoke >fuzz.out 2>&1; then
  passed=$((passed + 1)); grep -E '^  [a-z]+: runs:' fuzz.out; echo "    fuzz-smoke passed"
else
  grep -v '^#[0-9]' fuzz.out | tail -n 80; step_failed "make fuzz-smoke"
fi
took

note "make distcheck (tarball builds, installs and uninstalls cleanly)"
# its inner check without CN_LONG_TESTS: see the top of this file
if make -j"$jobs" distcheck TESTS='$(CN_QUICK_TESTS)' >distcheck.out 2>&1; then
  passed=$((passed + 1)); echo "    distcheck passed"
else
  tail -n 40 distcheck.out; step_failed "make distcheck"
fi
took

finish
