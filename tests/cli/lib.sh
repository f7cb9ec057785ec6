# SPDX-License-Identifier: Apache-2.0
# Shared helpers for codenib's shell tests: TAP output and running codenib
# (through $CN_RUN, which check-valgrind sets to a valgrind wrapper).
tap_n=0
tap_failed=0
TMPBASE=$(mktemp -d "${TMPDIR:-/tmp}/cn-test.XXXXXX")
trap 'rm -rf "$TMPBASE"' EXIT
OUT=$TMPBASE/out
ERR=$TMPBASE/err

pass() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
fail() {
  tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $1"
  [ -s "$OUT" ] && sed 's/^/#   out: /' "$OUT" | head -n 30
  [ -s "$ERR" ] && sed 's/^/#   err: /' "$ERR" | head -n 30
  return 0
}
# check DESCRIPTION COMMAND...: passes when the command succeeds
check() { d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
done_testing() { echo "1..$tap_n"; exit 0; }

# cn ARGS...: runs codenib, stdout to $OUT, stderr to $ERR, sets $rc
cn() {
  # shellcheck disable=SC2086
  $CN_RUN "$CODENIB" "$@" >"$OUT" 2>"$ERR"
  rc=$?
  # 97 is the exit status check-valgrind gives valgrind for memory errors
  # and leaks, and check-tsan ThreadSanitizer for a race: a test point of
  # its own, so no output check can hide it.
  if [ "$rc" -eq 97 ]; then fail "valgrind or ThreadSanitizer found errors in: codenib $*"; fi
}
out_has() { grep -q -F -- "$1" "$OUT"; }
err_has() { grep -q -F -- "$1" "$ERR"; }
rc_is() { [ "$rc" -eq "$1" ]; }

# need_python_backend: skips the whole test when the Python backend (which
# reads the fixture repositories) was not built.
need_python_backend() {
  if [ ! -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
    echo "1..0 # SKIP the python backend was not built"
    exit 0
  fi
}

# Isolate from the user's own skills and settings.
export HOME="$TMPBASE/home"
export CODENIB_HOME="$TMPBASE/home/.codenib"
mkdir -p "$HOME"

# start_fake_openai SCRIPT: starts tests/llm/fake_openai on loopback with
# SCRIPT's replies (requests logged to $TMPBASE/log.jsonl); sets $server
# (its pid, killed on exit) and $port.  Bails out if it does not start.
# Called again, it stops the server it started before and empties the log.
start_fake_openai() {
  if [ -n "${server-}" ]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; : >"$TMPBASE/log.jsonl"; fi
  rm -f "$TMPBASE/port"
  "$CN_FAKE_OPENAI" --port-file "$TMPBASE/port" --script "$1" --log "$TMPBASE/log.jsonl" &
  server=$!
  trap 'kill $server 2>/dev/null; rm -rf "$TMPBASE"' EXIT
  while [ ! -s "$TMPBASE/port" ]; do
    kill -0 "$server" 2>/dev/null || { echo "Bail out! fake_openai did not start"; exit 1; }
    sleep 0.05
  done
  port=$(cat "$TMPBASE/port")
}
