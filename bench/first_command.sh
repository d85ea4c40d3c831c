#!/usr/bin/env bash
# Times the README's first command, `scripts/setup && build/vyre demo`, as on
# a fresh Debian 12 machine: in a throw-away overlay of a minimal Debian root
# (scripts/debian-root, nothing but debootstrap's minbase), on a fresh clone
# of HEAD, so that every Debian package, the pinned wgpu wheel and the Python
# tool chain are fetched and the compiler cache starts empty. Needs root and
# Debian's mirror and PyPI. docs/ci.md, "The first build", has the figures.
#
#   bench/first_command.sh [SOURCE_DIR]
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
root=$("$src/scripts/debian-root" ca-certificates) || exit $?
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$src" "$tmp/in/vyre"
cat >"$tmp/in/run.sh" <<'INNER'
#!/bin/bash
set -euo pipefail
cp -a /in/vyre /root/vyre
cd /root/vyre
cores=$(nproc)
start=$(date +%s)
scripts/setup >/tmp/setup.log 2>&1 || { tail -30 /tmp/setup.log; exit 1; }
built=$(date +%s)
build/vyre demo >/tmp/demo.log 2>&1 || { tail -30 /tmp/demo.log; exit 1; }
end=$(date +%s)
echo "{\"what\": \"scripts/setup && build/vyre demo on a fresh root\", \"cores\": $cores, \"setup_s\": $((built - start)), \"demo_s\": $((end - built)), \"total_s\": $((end - start))}"
INNER
"$src/tests/packaging/in_root.sh" "$root" "$tmp/scratch" "$tmp/in" /bin/bash /in/run.sh
