#!/usr/bin/env bash
# Builds the wheel for every CPython 3.11 or newer this machine has (on PATH
# as python3.X, or under pyenv) and installs each into a fresh virtual
# environment of its own Python, where the README's Python snippet must run.
# By hand (a build per Python, minutes each); docs/python.md has its results.
#
#   tests/packaging/wheel_pythons.sh [SOURCE_DIR]
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A seen=()
pythons=()
for candidate in python3.11 python3.12 python3.13 python3.14 \
                 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
  path=$(command -v "$candidate" 2>/dev/null || true)
  [ -n "$path" ] || continue
  version=$("$path" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
  case "$version" in 3.1[1-9]) ;; *) continue ;; esac
  [ -z "${seen[$version]:-}" ] || continue
  "$path" -m pip --version >/dev/null 2>&1 && "$path" -m venv --help >/dev/null 2>&1 || continue
  seen[$version]=1
  pythons+=("$path")
done
[ ${#pythons[@]} -gt 0 ] || { echo "no CPython 3.11 or newer with pip and venv found" >&2; exit 1; }

args=()
for py in "${pythons[@]}"; do args+=(--python "$py"); done
"$src/scripts/wheel" "${args[@]}" --out "$tmp/dist"

awk '/^```python$/ {on=1; next} on && /^```$/ {exit} on {print}' "$src/README.md" >"$tmp/readme_snippet.py"
failed=0
for py in "${pythons[@]}"; do
  version=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  tag="cp${version/./}"
  wheel=$(ls "$tmp/dist"/vyre-*-"$tag"-*.whl)
  "$py" -m venv "$tmp/venv-$version"
  if "$tmp/venv-$version/bin/pip" install --quiet --disable-pip-version-check "$wheel" &&
     (cd "$tmp" && VYRE_AOT_CACHE_DIR="$tmp/aot" "$tmp/venv-$version/bin/python" readme_snippet.py); then
    echo "Python $version: $(basename "$wheel"): installs and runs"
  else
    echo "Python $version: $(basename "$wheel"): FAILED"
    failed=1
  fi
done
exit $failed
