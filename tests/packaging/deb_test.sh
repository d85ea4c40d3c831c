#!/usr/bin/env bash
# The Debian packages (cmake/Packaging.cmake) where vyre was never built: a
# minimal Debian 12 root with a compiler, CMake and pkg-config but none of
# vyre's dependencies (scripts/debian-root). There apt installs the three
# .deb files, fetching what their Depends name from Debian's mirror; a
# consumer then builds with find_package(vyre) and with pkg-config and runs
# on lavapipe, and the installed command runs a program.
#
#   deb_test.sh BUILD_DIR SOURCE_DIR
#
# Exits 77 (skipped) when not root or debootstrap is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
here="$src/tests/packaging"

root=$("$src/scripts/debian-root" g++ cmake make pkg-config libvulkan1 mesa-vulkan-drivers) || exit $?
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"

(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -B "$tmp/debs" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log" >&2; exit 1; }
for p in libvyre libvyre-dev vyre; do
  deb=$(ls "$tmp"/debs/"${p}"_*.deb 2>/dev/null | head -1 || true)
  [ -n "$deb" ] || { ls "$tmp/debs" >&2; echo "cpack made no $p package" >&2; exit 1; }
  echo "== $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
  cp "$deb" "$tmp/in/"
done
cp -r "$src/tests/install/consumer" "$tmp/in/consumer"
cp "$src/examples/xor.json" "$here/deb_in_root.sh" "$tmp/in/"

"$here/in_root.sh" "$root" "$tmp/scratch" "$tmp/in" /bin/bash /in/deb_in_root.sh
