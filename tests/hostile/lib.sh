# SPDX-License-Identifier: Apache-2.0
# Helpers for the hostile suite (tests/hostile/): repositories, caches and
# replies built at test time by someone who wants codenib to run their code,
# destroy a file, leak one, crash or hang.  Each test sources this file; it
# brings tests/cli/lib.sh (TAP, `cn`, a private $TMPBASE and $CODENIB_HOME).
. "$CN_SRCDIR/tests/cli/lib.sh"

# The tests' own git runs must not read the user's or the system's config.
GIT_CONFIG_NOSYSTEM=1; export GIT_CONFIG_NOSYSTEM
GIT_CONFIG_GLOBAL=/dev/null; export GIT_CONFIG_GLOBAL
GIT_AUTHOR_NAME=t; GIT_AUTHOR_EMAIL=t@example.invalid
GIT_COMMITTER_NAME=t; GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

# SENTINELS: where a hostile command would leave its mark.  Every test
# checks at its end that nothing is there (no_sentinels).
SENTINELS=$TMPBASE/sentinels
mkdir -p "$SENTINELS"

# py_repo DIR: a small Python repository (two modules, a call between
# them), committed with git when git is there.
py_repo() {
  mkdir -p "$1/pkg"
  printf 'def parse_config(path):\n    """Read the config file."""\n    return open(path).read()\n' >"$1/pkg/config.py"
  printf 'from pkg.config import parse_config\n\n\ndef main():\n    return parse_config("app.cfg")\n' >"$1/pkg/app.py"
  if command -v git >/dev/null 2>&1; then
    (cd "$1" && git init -q && git add -A && git commit -qm init) >/dev/null 2>&1
  fi
}

# have_git: git is installed (tests that need it skip their points without).
have_git() { command -v git >/dev/null 2>&1; }

# with_timeout SECONDS CMD...: runs CMD, killed after SECONDS; $rc is its
# status (124 when it had to be killed).  For the points that check that
# codenib does not hang: a hang fails the point instead of the whole run.
with_timeout() {
  t=$1; shift
  [ -n "${CN_VALGRIND-}" ] && t=$((t * 10))
  timeout -k 5 "$t" "$@"
  rc=$?
}

# cn_t SECONDS ARGS...: `cn` (codenib through $CN_RUN), killed after SECONDS.
cn_t() {
  t=$1; shift
  # valgrind runs codenib some ten times slower
  [ -n "${CN_VALGRIND-}" ] && t=$((t * 10))
  # shellcheck disable=SC2086
  timeout -k 5 "$t" $CN_RUN "$CODENIB" "$@" >"$OUT" 2>"$ERR"
  rc=$?
  if [ "$rc" -eq 97 ]; then fail "valgrind or ThreadSanitizer found errors in: codenib $*"; fi
}

# no_sentinels DESCRIPTION: passes when no hostile command left a mark.
no_sentinels() {
  if [ -z "$(ls -A "$SENTINELS")" ]; then pass "$1"; else
    ls -l "$SENTINELS" | sed 's/^/#   /'; fail "$1"; fi
}
