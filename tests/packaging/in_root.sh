#!/usr/bin/env bash
# Runs a command inside a throw-away overlay of a Debian root made by
# scripts/debian-root: the root itself is never written, and every mount is
# in a mount namespace of its own, gone when the command ends.
#
#   in_root.sh ROOT SCRATCH IN_DIR COMMAND...
#
# SCRATCH (an empty folder) holds the overlay's writes; IN_DIR is seen
# inside, read-only, as /in. /proc and /dev are the host's; the host's
# resolv.conf lets apt reach Debian's mirror, and its CA bundle (PIP_CERT or
# SSL_CERT_FILE) lets pip reach PyPI where the host trusts a proxy.
set -euo pipefail
root=$1 scratch=$2 in_dir=$3
shift 3
mkdir -p "$scratch/upper" "$scratch/work" "$scratch/merged"
exec unshare --mount --propagation private -- /bin/bash -c '
  set -euo pipefail
  root=$1 scratch=$2 in_dir=$3
  shift 3
  m=$scratch/merged
  mount -t overlay overlay -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" "$m"
  mount --rbind /dev "$m/dev"
  mount -t proc proc "$m/proc"
  mkdir -p "$m/in" "$m/tmp"
  mount --bind "$in_dir" "$m/in"
  mount -o remount,bind,ro "$m/in"
  cp /etc/resolv.conf "$m/etc/resolv.conf" 2>/dev/null || true
  # The host'"'"'s certificate trust goes in too, so that HTTPS through a proxy
  # the host trusts (PyPI here) is trusted inside.
  trust=()
  bundle=${PIP_CERT:-${SSL_CERT_FILE:-}}
  if [ -n "$bundle" ] && [ -f "$bundle" ]; then
    cp "$bundle" "$m/etc/host-ca-bundle.crt"
    trust=(PIP_CERT=/etc/host-ca-bundle.crt SSL_CERT_FILE=/etc/host-ca-bundle.crt REQUESTS_CA_BUNDLE=/etc/host-ca-bundle.crt)
  fi
  exec chroot "$m" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "${trust[@]}" "$@"
' in_root "$root" "$scratch" "$in_dir" "$@"
