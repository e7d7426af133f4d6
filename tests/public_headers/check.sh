#!/usr/bin/env bash
# The public API holds no internal names: every header in include/trainmem/ includes only the
# standard library and other public headers (never src/ or a third-party library: nlohmann, fmt,
# CLI11, yaml-cpp), and compiles alone, with only include/ on the include path.
# Usage: check.sh SOURCE_DIR CXX_COMPILER
set -u
src=$1
cxx=$2
status=0
for h in "$src"/include/trainmem/*.h; do
  name=${h#"$src"/include/}
  # Allowed: #include <name> of a standard header (no '/' or '.'), #include "trainmem/x.h".
  bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include' "$h" |
        grep -vE '#[[:space:]]*include[[:space:]]+(<[a-z_]+>|"trainmem/[a-z_]+\.h")[[:space:]]*$')
  if [ -n "$bad" ]; then
    echo "$name: includes a header outside the standard library and include/trainmem:"
    echo "$bad"
    status=1
  fi
  if ! echo "#include \"$name\"" |
      "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I"$src/include" -x c++ -; then
    echo "$name: does not compile alone"
    status=1
  fi
done
[ $status -eq 0 ] && echo "public headers: $(ls "$src"/include/trainmem/*.h | wc -l) checked"
exit $status
