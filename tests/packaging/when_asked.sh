#!/usr/bin/env bash
# Runs a packaging test only when VYRE_PACKAGING_TESTS=1; otherwise says why
# and exits 77, which CTest reports as skipped.
if [ "${VYRE_PACKAGING_TESTS:-0}" != 1 ]; then
  echo "skipped: set VYRE_PACKAGING_TESTS=1 to run it (needs root, debootstrap and Debian's mirror; CI runs it)"
  exit 77
fi
exec "$@"
