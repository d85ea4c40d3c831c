#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a
# consumer project against it twice: with find_package(vyre CONFIG) and with
# pkg-config. Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

# The project's warning flags (-Werror among them) are its own: nothing of
# them reaches what a consumer compiles with.
if grep -rlE -- '-W(error|all|extra|pedantic)' "$tmp/prefix/lib/cmake/vyre" "$tmp/prefix/lib/pkgconfig"; then
  echo "the installed package passes the project's warning flags on to its consumers" >&2
  exit 1
fi

echo "== find_package(vyre CONFIG)"
cmake -S "$src/tests/install/consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
"$tmp/cmake-build/consumer"

echo "== pkg-config vyre"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --exists vyre
# CXX, CXXFLAGS and LDFLAGS: the sanitized builds give their compiler and
# flags (tests/CMakeLists.txt); CMake reads the same variables above.
# shellcheck disable=SC2046,SC2086
"${CXX:-g++}" ${CXXFLAGS:-} -o "$tmp/pc-consumer" "$src/tests/install/consumer/consumer.cpp" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs vyre) ${LDFLAGS:-}
"$tmp/pc-consumer"

echo "== installed CLI"
"$tmp/prefix/bin/vyre" --version
"$tmp/prefix/bin/vyre" hash "$src/examples/xor.json"

echo "== shell completions and man page"
for f in share/bash-completion/completions/vyre share/zsh/site-functions/_vyre \
         share/fish/vendor_completions.d/vyre.fish share/man/man1/vyre.1; do
  test -s "$tmp/prefix/$f" || { echo "cmake --install did not install $f" >&2; exit 1; }
done
# What bash offers from the installed script, as a user's shell would.
offered=$(bash -c "source '$tmp/prefix/share/bash-completion/completions/vyre'; COMP_WORDS=(vyre ca); COMP_CWORD=1; _vyre; echo \"\${COMPREPLY[*]}\"")
[ "$offered" = cache ] || { echo "the installed bash completion offers '$offered' for 'vyre ca'" >&2; exit 1; }
MANPATH="$tmp/prefix/share/man" man -w vyre >/dev/null
