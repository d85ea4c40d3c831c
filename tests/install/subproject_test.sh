#!/usr/bin/env bash
# Builds, runs and installs a project that has vyre inside its own build
# rather than installed: add_subdirectory(path/to/vyre) (MODE subdirectory)
# or FetchContent (MODE fetchcontent), the consumer of tests/install/MODE.
# Usage: subproject_test.sh MODE SOURCE_DIR WGPU_DIR WORK_DIR
#
# The build is a user's: Release, warnings not errors; a unity build, to keep
# the test short. WORK_DIR is emptied first and removed after a pass; it lies
# in vyre's build folder, so that ccache (which hashes paths relative to the
# source folder) reuses the objects of the last run, also in another clone.
set -euo pipefail
mode=$1 src=$2 wgpu=$3 work=$4
case "$mode" in
  subdirectory|fetchcontent) ;;
  *) echo "subproject_test.sh: MODE is subdirectory or fetchcontent, not '$mode'" >&2; exit 2 ;;
esac
build=$work/build prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"
fail() { echo "$mode: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH

echo "== configure (vyre through $mode)"
cmake -S "$src/tests/install/$mode" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVYRE_UNITY_BUILD=ON \
  -DVYRE_SOURCE_DIR="$src" -DVYRE_WGPU_DIR="$wgpu" >/dev/null
# Inside another project vyre builds its library only, unless told otherwise.
for option in VYRE_BUILD_TESTS VYRE_BUILD_BENCHMARKS VYRE_BUILD_PYTHON VYRE_INSTALL_PACKAGE; do
  grep -qx "$option:BOOL=OFF" "$build/CMakeCache.txt" || fail "$option is not OFF by default inside another project"
done

echo "== build (the whole project, as its user would)"
cmake --build "$build" >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; fail "the build failed"; }
[ -z "$(find "$build" -type f -name vyre)" ] || fail "the vyre command was built; inside another project only libvyre is"

echo "== run from the build tree (the libraries found through its RPATH)"
"$build/consumer"

echo "== install, then run the installed program with the build tree gone"
cmake --install "$build" --prefix "$prefix" >/dev/null
rm -rf "$build"
(cd "$prefix" && find . \( -type f -o -type l \) | sed -E 's|^\./||; s/\.so\.[0-9]+\.[0-9]+\.[0-9]+$/.so.X.Y.Z/; s/\.so\.[0-9]+$/.so.X/' | sort) \
  >"$work/installed"
expected="bin/consumer
lib/libvyre.so
lib/libvyre.so.X
lib/libvyre.so.X.Y.Z
lib/libwgpu_native.so
share/doc/vyre/LICENSE
share/doc/vyre/LICENSE-APACHE
share/doc/vyre/LICENSE-MIT"
if [ "$(cat "$work/installed")" != "$expected" ]; then
  diff <(echo "$expected") "$work/installed" >&2 || true
  fail "the install is not the program, libvyre, wgpu-native and vyre's licenses (above: - expected, + installed)"
fi
"$prefix/bin/consumer"
rm -rf "$work"
