#!/bin/bash
# Inside the minimal root (tests/packaging/wheel_test.sh): install the wheel
# /in/WHEEL into a fresh virtual environment and use it as a user would.
set -euo pipefail
wheel=/in/$1
cd /tmp

# Nothing of vyre's build is here: no compiler, no spdlog, fmt, OpenSSL
# headers or hiredis.
for absent in /usr/bin/g++ /usr/bin/cmake /usr/include/spdlog /usr/include/hiredis; do
  [ ! -e "$absent" ] || { echo "the root holds $absent: not a clean root" >&2; exit 1; }
done

python3 -m venv /venv
/venv/bin/pip install --quiet --disable-pip-version-check --no-index --find-links /in numpy
start=$(date +%s%N)
/venv/bin/pip install --quiet --disable-pip-version-check --no-index --find-links /in "$wheel"
end=$(date +%s%N)
echo "== installed $(basename "$wheel") in $(( (end - start) / 1000000 )) ms"

package=$(/venv/bin/python -c 'import os, vyre; print(os.path.dirname(vyre.__file__))')
for lib in "$package"/_ext.*.so "$package"/libvyre.so; do
  if ldd "$lib" | grep -q "not found"; then
    ldd "$lib" >&2
    echo "$lib needs a library the wheel does not carry" >&2
    exit 1
  fi
done

echo "== the README's Python snippet"
cp /in/readme_snippet.py /tmp/readme_snippet.py
VYRE_AOT_CACHE_DIR=/tmp/aot /venv/bin/python /tmp/readme_snippet.py
echo "readme snippet ran"

echo "== examples/python/saxpy.py twice: vyre's cache misses, then hits"
for expected in "cache miss" "cache hit"; do
  out=$(VYRE_AOT_CACHE_DIR=/tmp/aot-saxpy /venv/bin/python /in/saxpy.py)
  grep -q "$expected" <<<"$out" && grep -q "ok" <<<"$out" || { echo "$out" >&2; echo "expected '$expected'" >&2; exit 1; }
done

echo "== the same with the SQLite store (the wheel's grafted SQLite)"
for expected in "cache miss" "cache hit"; do
  out=$(VYRE_AOT_CACHE_STORE=sqlite VYRE_AOT_CACHE_DIR=/tmp/aot-sqlite /venv/bin/python /in/saxpy.py)
  grep -q "$expected" <<<"$out" && grep -q "ok" <<<"$out" || { echo "$out" >&2; echo "expected '$expected'" >&2; exit 1; }
done
[ -f /tmp/aot-sqlite/entries.sqlite3 ] || { echo "no entries.sqlite3 in /tmp/aot-sqlite" >&2; exit 1; }

# What a user without Vulkan sees: the package to install, not a trace.
expect_refusal() {
  local what=$1 package_named=$2 out
  if out=$(VYRE_AOT_CACHE_DIR=/tmp/aot /venv/bin/python -c 'import vyre; vyre.Backend()' 2>&1); then
    echo "vyre.Backend() opened a device $what" >&2
    exit 1
  fi
  if ! grep -q "$package_named" <<<"$out"; then
    printf '%s\n' "$out" >&2
    echo "vyre.Backend() $what does not name the package $package_named" >&2
    exit 1
  fi
  echo "== $what: $(grep -m1 "$package_named" <<<"$out")"
}
mkdir /tmp/icd && mv /usr/share/vulkan/icd.d/* /tmp/icd/
expect_refusal "with no Vulkan driver" mesa-vulkan-drivers
mv /tmp/icd/* /usr/share/vulkan/icd.d/
rm -f /usr/lib/x86_64-linux-gnu/libvulkan.so.1*
expect_refusal "with no Vulkan loader" libvulkan1
echo "wheel test passed"
