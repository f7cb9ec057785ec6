#!/bin/sh
# Installs what is needed, builds codenib with warnings as errors, and runs
# the whole test suite three times: plain, under valgrind, and built with
# AddressSanitizer + UndefinedBehaviorSanitizer; then the compiler's tests
# under ThreadSanitizer (`make check-tsan`), each fuzz target for a few
# seconds (`make fuzz-smoke`) and `make distcheck`.  The
# last line is "N passed, N failed" over every test point of the three runs
# (distcheck counts as one).
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0

note() { printf '\n==> %s\n' "$*"; }
count() {  # add the results recorded under $1
  set -- $(sh "$top/scripts/ci-summary.sh" "$1")
  passed=$((passed + $1)); failed=$((failed + $2))
  echo "    $1 passed, $2 failed"
}
finish() {
  echo
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
note "configuring"
./autogen.sh >/dev/null || { step_failed "autogen.sh"; finish; }
rm -rf _build && mkdir _build && cd _build || { step_failed "mkdir _build"; finish; }
../configure --enable-werror >configure.out 2>&1 || { cat configure.out; step_failed "configure"; finish; }
sed -n '/^configure: *$/,$p' configure.out | tail -n 16
note "building"
make -j"$jobs" >make.out 2>&1 || { tail -n 60 make.out; step_failed "make"; finish; }

note "test suite"
make -j"$jobs" check >check.out 2>&1 || { grep -E '^(FAIL|ERROR)' check.out; cat test-suite.log | tail -n 80; }
count .

note "test suite under valgrind"
find tests -name '*.trs' -delete; find tests -name '*.log' -delete; rm -f test-suite.log
make -j"$jobs" check-valgrind >valgrind.out 2>&1 || { grep -E '^(FAIL|ERROR)' valgrind.out; tail -n 80 test-suite.log; }
count .

note "test suite under AddressSanitizer + UndefinedBehaviorSanitizer"
make check-asan >asan.out 2>&1 || { grep -E '^(FAIL|ERROR)' asan.out; tail -n 80 asan-build/test-suite.log 2>/dev/null || tail -n 60 asan.out; }
if [ -d asan-build ]; then count asan-build; else step_failed "check-asan build"; fi

note "the compiler's tests under ThreadSanitizer (make check-tsan)"
if make check-tsan >tsan.out 2>&1; then
  count tsan-build
else
  grep -E '^(FAIL|ERROR)|check-tsan' tsan.out; tail -n 60 tsan-build/test-suite.log 2>/dev/null || tail -n 60 tsan.out
  # a report in a process whose status no test point looked at fails the
  # step even when every point passed
  if [ -d tsan-build ]; then count tsan-build; fi
  step_failed "make check-tsan"
fi

note "fuzzing: every libFuzzer target for a few seconds from its seeds (make fuzz-smoke)"
if make fuzz-smoke >fuzz.out 2>&1; then
  passed=$((passed + 1)); grep -E '^  [a-z]+: runs:' fuzz.out; echo "    fuzz-smoke passed"
else
  grep -v '^#[0-9]' fuzz.out | tail -n 80; step_failed "make fuzz-smoke"
fi

note "make distcheck (tarball builds, installs and uninstalls cleanly)"
if make distcheck >distcheck.out 2>&1; then
  passed=$((passed + 1)); echo "    distcheck passed"
else
  tail -n 40 distcheck.out; step_failed "make distcheck"
fi

finish
