#!/bin/bash
# Inside the root (tests/packaging/deb_test.sh): install the .deb files in
# /in with apt, then build and run a consumer and the command line.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
[ ! -e /usr/include/spdlog ] || { echo "the root already holds spdlog: not a clean root" >&2; exit 1; }
apt-get update -qq
apt-get install -y -qq --no-install-recommends /in/libvyre_*.deb /in/libvyre-dev_*.deb /in/vyre_*.deb >/tmp/apt.log 2>&1 ||
  { cat /tmp/apt.log >&2; exit 1; }
dpkg -s libvyre libvyre-dev vyre | grep -E '^(Package|Version|Status):'

cp -r /in/consumer /tmp/consumer
cd /tmp
export VYRE_AOT_CACHE_DIR=/tmp/aot
echo "== find_package(vyre CONFIG)"
cmake -S consumer -B consumer-build >/dev/null
cmake --build consumer-build >/dev/null
out=$(consumer-build/consumer)
echo "$out"
grep -q "^gpu .*: ok$" <<<"$out" || { echo "the CMake consumer did not run on the GPU" >&2; exit 1; }

echo "== pkg-config vyre"
# shellcheck disable=SC2046
g++ -o pc-consumer consumer/consumer.cpp $(pkg-config --cflags --libs vyre)
out=$(./pc-consumer)
grep -q "^gpu .*: ok$" <<<"$out" || { echo "$out" >&2; echo "the pkg-config consumer did not run on the GPU" >&2; exit 1; }

echo "== the installed command"
vyre --version
out=$(vyre run /in/xor.json --input a=1,2,3,4 --input b=4,3,2,1 --size out=4)
echo "$out"
[ "$out" = '{"out": [5, 1, 1, 5]}' ] || { echo "vyre run gave '$out'" >&2; exit 1; }
test -s /usr/share/bash-completion/completions/vyre
test -s /usr/share/man/man1/vyre.1.gz || test -s /usr/share/man/man1/vyre.1
echo "deb test passed"
