#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every plugin the build produced exports exactly one symbol: its
# descriptor (STYLE: one well-known symbol per plugin, nothing else).
. "$CN_SRCDIR/tests/cli/lib.sh"
found=0
for so in "$CN_BUILDDIR"/_skills/*/*.so "$CN_BUILDDIR"/_plugins/*/*.so; do
  [ -f "$so" ] || continue
  found=$((found + 1))
  syms=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^_' | tr '\n' ' ')
  case "$so" in
    */_skills/*) want="cn_skill_descriptor_$(basename "$so" .so) " ;;
    *)
      # languages export cn_lang_descriptor_<language>, the other kinds
      # cn_backend_descriptor_<plugin id with - as _>
      yaml=$(dirname "$so")/plugin.yaml
      if grep -q '^kind:[[:space:]]*language' "$yaml"; then
        want="cn_lang_descriptor_$(sed -n 's/^language:[[:space:]]*//p' "$yaml") "
      else
        want="cn_backend_descriptor_$(sed -n 's/^plugin_id:[[:space:]]*//p' "$yaml" | tr -- - _) "
      fi ;;
  esac
  if [ "$syms" = "$want" ]; then pass "$(basename "$so") exports only $want"
  else echo "#   exports: $syms"; fail "$(basename "$so") exports only $want"; fi
done
check "at least the two built-in skills were found" test "$found" -ge 2
done_testing
