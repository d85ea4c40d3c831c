#!/usr/bin/env bash
# The binary wheel where vyre's build dependencies are not: a minimal
# Debian 12 root holding only python3, python3-venv, libvulkan1 and
# mesa-vulkan-drivers (scripts/debian-root). There, `pip install` of the
# wheel into a fresh virtual environment (NumPy from a local wheelhouse, no
# index) and the README's Python snippet must run on lavapipe; without the
# Vulkan loader, or without a driver, vyre must say which package to install.
#
#   wheel_test.sh SOURCE_DIR [WHEEL_DIR]
#
# WHEEL_DIR: wheels made before (scripts/wheel); without it the test makes
# one. Exits 77 (skipped) when not root or debootstrap is missing.
set -euo pipefail
src=$(cd "$1" && pwd)
wheels=${2:-}
here="$src/tests/packaging"

root=$("$src/scripts/debian-root" python3 python3-venv libvulkan1 mesa-vulkan-drivers) || exit $?
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"

if [ -z "$wheels" ]; then
  "$src/scripts/wheel" --out "$tmp/dist"
  wheels="$tmp/dist"
fi
py_tag=$(chroot "$root" python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
wheel=$(ls "$wheels"/vyre-*-"$py_tag"-*manylinux*.whl 2>/dev/null | head -1 || true)
[ -n "$wheel" ] || { echo "no manylinux wheel for $py_tag in $wheels" >&2; exit 1; }
cp "$wheel" "$tmp/in/"

# NumPy, the wheel's one dependency, from PyPI (or pip's cache) on the host:
# inside the root pip reads no index.
numpy_pin=$(grep -E '^numpy==' "$src/python/requirements-dev.txt")
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --python-version "${py_tag#cp}" -d "$tmp/in" "$numpy_pin"

# The README's first Python block, as a user would save it.
awk '/^```python$/ {on=1; next} on && /^```$/ {exit} on {print}' "$src/README.md" >"$tmp/in/readme_snippet.py"
grep -q "@vyre.kernel" "$tmp/in/readme_snippet.py" || { echo "README has no Python kernel snippet" >&2; exit 1; }
cp "$here/wheel_in_root.sh" "$src/examples/python/saxpy.py" "$tmp/in/"

"$here/in_root.sh" "$root" "$tmp/scratch" "$tmp/in" /bin/bash /in/wheel_in_root.sh "$(basename "$wheel")"
