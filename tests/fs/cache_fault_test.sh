#!/usr/bin/env bash
# The AOT cache on real file systems made here from loop images, with the
# faults it promises to survive (docs/cache.md, "Tested on real file
# systems"), once with each store (VYRE_AOT_CACHE_STORE=directory, sqlite):
#
#   inodes      ext4 with 128 inodes, run out of them: dispatches succeed and
#               are right; the directory store writes nothing new, the SQLite
#               store goes on writing rows; once inodes are freed, new
#               entries are written
#   full        an 8 MiB ext4 filled to ENOSPC, then a nearly full one that
#               runs out mid-loop: dispatches right, nothing written while
#               full, no temporary file left, entries written once freed
#   remount-ro  ext4 remounted read-only and back, three times, while a loop
#               of dispatches runs; `cache verify` while read-only
#   xfs, btrfs  normal operation: a cold pass writes, a warm pass hits
#   fuse        bindfs over a tmpfs: counted as shared, one file an entry
#               (once, not per store)
#   tmpfs, overlay  tmpfs cold and warm; then that cache, its tmpfs remounted
#               read-only, as the lower layer of an overlay on another tmpfs:
#               hits from the lower, new entries in the upper, the lower's
#               files unchanged
#   sigkill     `vyre run` killed by SIGKILL at random moments (250 kills a
#               store, VYRE_FS_TEST_KILLS; docs/cache.md says why not 1000),
#               bounds small so that writes and evictions keep happening
#
# Every dispatch runs `vyre run --check` on an example with an "expect" and
# must exit 0; every scenario ends with an independent check of each entry
# (its content has the size and SHA-256 its metadata records, under its key:
# the file pairs, one-file entries or rows of entries.sqlite3) and
# `vyre cache verify --json` (exit 0, nothing bad).
#
# Usage: cache_fault_test.sh [VYRE [SOURCE_DIR]]   (default: build/vyre of
# this tree). Needs root and loop devices; otherwise it says why and exits 77
# (CTest: skipped). Environment: VYRE_FS_TEST_KILLS (250 a store),
# VYRE_FS_TEST_STORES ("directory sqlite"; also "shared": the directory
# store with VYRE_AOT_CACHE_SHARED_FS=1, one file an entry),
# VYRE_FS_TEST_ONLY (scenario names, space-separated), VYRE_FS_TEST_SEED
# (random; printed), VYRE_FS_TEST_KEEP=1 (keep the work folder, unmounted).
set -Eeuo pipefail  # -E: the ERR trap below also in functions

here=$(cd "$(dirname "$0")" && pwd)
src=${2:-$(cd "$here/../.." && pwd)}
vyre=${1:-$src/build/vyre}
examples=$src/examples
kills_wanted=${VYRE_FS_TEST_KILLS:-250}
read -ra stores <<<"${VYRE_FS_TEST_STORES:-directory sqlite}"
seed=${VYRE_FS_TEST_SEED:-$(( $(date +%s) % 32768 ))}
only=${VYRE_FS_TEST_ONLY:-}
SKIP=77

skip() { echo "skipped: needs root and loop devices ($*)"; exit $SKIP; }
[ "$(id -u)" -eq 0 ] || skip "running as uid $(id -u), not root"
for tool in losetup mkfs.ext4 mount umount findmnt python3 timeout; do
  command -v "$tool" >/dev/null || skip "no $tool"
done
if ! probe=$(losetup -f 2>&1); then skip "losetup -f: $probe"; fi
[ -x "$vyre" ] || { echo "cache_fault_test.sh: no vyre command at $vyre" >&2; exit 2; }
[ -f "$examples/saxpy.run.json" ] || { echo "cache_fault_test.sh: no examples in $examples" >&2; exit 2; }

work=$(mktemp -d /tmp/vyre-fs-test.XXXXXX)
mounts=() loops=() pids=()
cleanup() {
  local status=$? i
  set +e
  trap - ERR
  for pid in "${pids[@]}"; do  # a dispatch loop: its running vyre, then itself
    pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  done
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    if mountpoint -q "${mounts[i]}"; then
      umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}"
    fi
  done
  for dev in "${loops[@]}"; do losetup -d "$dev" 2>/dev/null; done
  if [ "${VYRE_FS_TEST_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

RANDOM=$seed
echo "== vyre: $vyre; stores: ${stores[*]}; seed $seed (VYRE_FS_TEST_SEED); work folder $work"
fail() { echo "FAIL${scenario:+ ($scenario)}: $*" >&2; exit 1; }
trap 'echo "FAIL${scenario:+ ($scenario)}: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
say() { echo "   $*"; }
scenario=

# ---------------------------------------------------------------- programs
# The programs (tests/fs/program_variants.sh).
source "$here/program_variants.sh"

# ---------------------------------------------------------------- helpers
# The independent reader of a cache directory, both stores (entries.py: the
# entry files, one-file entries and the rows of entries.sqlite3, opened
# read-only).
#   count DIR       the entries served
#   has DIR KEY     exit 0 when KEY is among them
#   check DIR       every entry, and every file beside the database: its
#                   metadata names its key and records its content's size
#                   and SHA-256; prints the count of entries served
entries() { python3 "$here/entries.py" count "$1"; }
has_entry() { python3 "$here/entries.py" has "$1" "$2"; }
is_sqlite() { [ -f "$1/entries.sqlite3" ]; }

# dispatch DIR VARIANT [ARGS...]: one checked run with its cache in DIR.
# Returns non-zero, with the command and its stderr on stderr, on failure;
# stderr is added to $work/stderr.log for the scenario's summary.
dispatch() {
  local dir=$1 v=$2 ex opts=() rc=0 out=$work/out.$BASHPID err=$work/err.$BASHPID
  shift 2
  ex=${v%% *}
  [ "$v" = "$ex" ] || read -ra opts <<<"${v#* }"
  VYRE_AOT_CACHE_DIR=$dir "$vyre" run "$examples/$ex.json" --inputs "$examples/$ex.run.json" --check \
    "${opts[@]}" "$@" >"$out" 2>"$err" || rc=$?
  cat "$err" >>"$work/stderr.log"
  if [ $rc -ne 0 ]; then
    echo "dispatch failed (exit $rc): VYRE_AOT_CACHE_STORE=${VYRE_AOT_CACHE_STORE:-} VYRE_AOT_CACHE_DIR=$dir vyre run examples/$ex.json --inputs examples/$ex.run.json --check ${opts[*]} $*" >&2
    sed 's/^/      /' "$err" >&2
    return 1
  fi
}

# pass DIR FIRST COUNT [hit|miss|any]: dispatches variants FIRST..FIRST+COUNT-1
# (modulo the list), each checked; with hit or miss, the cache result too.
pass() {
  local dir=$1 first=$2 count=$3 want=${4:-any} i v got
  for ((i = first; i < first + count; i++)); do
    v=${variants[i % nvariants]}
    dispatch "$dir" "$v" --report-json "$work/report.json" || fail "a dispatch failed (above)"
    dispatches=$((dispatches + 1))
    if [ "$want" != any ]; then
      case $(grep -o '"cache_hit": *[a-z]*' "$work/report.json") in
        *true) got=hit ;;
        *false) got=miss ;;
        *) fail "'$v': no cache_hit in the --report-json file: $(head -c 300 "$work/report.json")" ;;
      esac
      [ "$got" = "$want" ] || fail "'$v' in $dir: cache $got, expected a $want"
    fi
  done
}

# last_key: the cache key in the last dispatch's report
last_key() { grep -o '"cache_key": *"[0-9a-f]*"' "$work/report.json" | grep -o '[0-9a-f]\{64\}'; }

# temporaries DIR: the directory store's temporary files left in DIR (not the driver's)
temporaries() { find "$1" -maxdepth 2 -name '.tmp.*' -not -path '*/.driver/*' 2>/dev/null | wc -l; }
no_temporaries() {
  [ "$(temporaries "$1")" -eq 0 ] || fail "temporary files left in $1: $(find "$1" -maxdepth 2 -name '.tmp.*' -not -path '*/.driver/*')"
}

# the store the cache in DIR took: the one asked for, or fail
check_store() {
  local dir=$1 pairs packed
  pairs=$(find "$dir" -maxdepth 1 -name '*.toml' | wc -l)
  packed=$(find "$dir" -maxdepth 1 -name '*.entry' | wc -l)
  case $store in
    sqlite) is_sqlite "$dir" || fail "VYRE_AOT_CACHE_STORE=sqlite, but no $dir/entries.sqlite3" ;;
    directory) ! is_sqlite "$dir" && [ "$packed" -eq 0 ] \
                 || fail "VYRE_AOT_CACHE_STORE=directory, but $dir has entries.sqlite3 or one-file entries" ;;
    shared) ! is_sqlite "$dir" && [ "$pairs" -eq 0 ] \
              || fail "VYRE_AOT_CACHE_SHARED_FS=1, but $dir has entries.sqlite3 or .toml/.wgsl pairs" ;;
  esac
}

# check_entries DIR: every entry checked without vyre (entries.py check),
# then `vyre cache verify --json`: exit 0, no bad entry or driver folder.
check_entries() {
  local dir=$1 rc=0 good beside
  read -r good beside < <(python3 "$here/entries.py" check "$dir" || echo "FAILED")
  [ "$good" != FAILED ] || fail "an entry in $dir does not match its metadata (above)"
  VYRE_AOT_CACHE_DIR=$dir "$vyre" cache verify --json >"$work/verify.json" 2>>"$work/stderr.log" || rc=$?
  python3 - "$work/verify.json" "$rc" "$dir" "$good" "$beside" <<'PY' || fail "vyre cache verify in $dir is not clean (above)"
import json, sys
r, rc, d, good, beside = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
problems = []
if rc != 0: problems.append(f"exit {rc}")
if r["bad"]: problems.append(f"bad entries: {r['bad']}")
if r["driver_bad"]: problems.append(f"bad driver folders: {r['driver_bad']}")
if r["not_removed"]: problems.append(f"not removed: {r['not_removed']} ({r['not_removed_problem']})")
if r["good"] != good: problems.append(f"{r['good']} good, where {good} entries check by their digests")
if beside: problems.append(f"{beside} entry files beside the database: entries split between two stores")
for p in problems:
    print("   verify:", p, file=sys.stderr)
print(f"   verify {d}: {r['checked']} checked, {r['good']} good, 0 bad, {r['incomplete']} incomplete;"
      f" {good} entries checked independently" + (f", and {beside} entry files beside the database (not served)" if beside else ""))
sys.exit(1 if problems else 0)
PY
}

# image NAME SIZE: a sparse image file
image() { rm -f "$work/$1.img"; truncate -s "$2" "$work/$1.img"; }

# mount_image NAME MOUNTPOINT [MOUNT OPTIONS...]: attach the image to a free
# loop device and mount it; both are undone by unmount (or cleanup)
mount_image() {
  local name=$1 mnt=$2 dev
  shift 2
  dev=$(losetup -f --show "$work/$name.img") || fail "losetup -f --show $work/$name.img"
  loops+=("$dev")
  mkdir -p "$mnt"
  mount "$@" "$dev" "$mnt" || fail "mount $* $dev $mnt"
  mounts+=("$mnt")
}
mount_tmpfs() {  # mount_tmpfs MOUNTPOINT
  mkdir -p "$1"
  mount -t tmpfs -o size=64m,mode=0700 tmpfs "$1" || fail "mount -t tmpfs tmpfs $1"
  mounts+=("$1")
}
# unmount MOUNTPOINT: unmount it and detach its loop device, if it has one;
# both leave the lists, so that cleanup never touches a device another
# process attached afterwards
unmount() {
  local mnt=$1 dev kept=() m
  dev=$(findmnt -n -o SOURCE --mountpoint "$mnt" 2>/dev/null || true)
  umount "$mnt" || fail "umount $mnt"
  for m in "${mounts[@]}"; do [ "$m" = "$mnt" ] || kept+=("$m"); done
  mounts=("${kept[@]}")
  case "$dev" in
    /dev/loop*)
      losetup -d "$dev" 2>/dev/null || true
      kept=()
      for m in "${loops[@]}"; do [ "$m" = "$dev" ] || kept+=("$m"); done
      loops=("${kept[@]}")
      ;;
  esac
}

summary_of_warnings() {
  if grep -qv ': check passed' "$work/stderr.log"; then
    say "messages seen (distinct, keys and paths shortened):"
    sed -E 's/[0-9a-f]{64}/KEY/g; s#/tmp/vyre-fs-test\.[A-Za-z0-9]+#WORK#g; s/pid [0-9]+/pid N/g; s/shard-[0-9]/shard-N/g; s/[0-9]+(\.[0-9]+)? ?ms/N ms/g' \
      "$work/stderr.log" | { grep -v ': check passed' || true; } | sort | uniq -c | sort -rn | head -6 | sed 's/^/      /'
  fi
  : >"$work/stderr.log"
}

want() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }
begin() {
  scenario="$1/$store" started=$SECONDS dispatches=0
  : >"$work/stderr.log"
  echo "== $scenario: $2"
}
end() { summary_of_warnings; echo "-- $scenario: passed, $dispatches dispatches, $((SECONDS - started)) s"; scenario=; }
free_inodes() { df --output=iavail "$1" | tail -1 | tr -d ' '; }
free_kib() { df --output=avail -k "$1" | tail -1 | tr -d ' '; }

# -------------------------------------------------- can this machine mount?
image probe 8M
mkfs.ext4 -q -F "$work/probe.img" >/dev/null 2>&1 || skip "mkfs.ext4 failed on an image file"
if ! dev=$(losetup -f --show "$work/probe.img" 2>&1); then skip "losetup: $dev"; fi
loops+=("$dev")
mkdir -p "$work/probe"
if ! msg=$(mount "$dev" "$work/probe" 2>&1); then skip "cannot mount a loop device here: $msg"; fi
mounts+=("$work/probe")
unmount "$work/probe"
rm -f "$work/probe.img"

# ---------------------------------------------------------------- inodes
scenario_inodes() {
  # 128 inodes: the cache's own files take about 45 of them (counters and
  # their locks, write stripes, the driver's folders); 40 are held back by
  # empty files, so that freeing them shows entries written again.
  begin inodes "ext4 with 128 inodes (mkfs.ext4 -N 128), run out of them"
  local mnt=$work/inodes cache after_a n now
  image inodes 16M
  mkfs.ext4 -q -F -N 128 "$work/inodes.img" >/dev/null
  mount_image inodes "$mnt"
  cache=$mnt/cache
  # Left to choose (VYRE_AOT_CACHE_STORE=auto), the cache takes the database
  # on this inode-poor file system (docs/cache.md, "Stores").
  VYRE_AOT_CACHE_STORE=auto dispatch "$mnt/auto" "${variants[0]}" || fail "a dispatch failed (above)"
  dispatches=$((dispatches + 1))
  VYRE_AOT_CACHE_STORE=auto VYRE_AOT_CACHE_DIR=$mnt/auto "$vyre" cache stats --json >"$work/stats.json" 2>>"$work/stderr.log" \
    || fail "vyre cache stats --json in $mnt/auto"
  python3 - "$work/stats.json" <<'PY' || fail "VYRE_AOT_CACHE_STORE=auto did not take the SQLite store on an inode-poor ext4"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"   auto: store {s['store']} ({s['store_reason']})")
sys.exit(0 if s["store"] == "sqlite" and s["entries"] == 1 else 1)
PY
  rm -rf "$mnt/auto"
  mkdir "$mnt/held"
  for ((n = 0; n < 40; n++)); do touch "$mnt/held/$n"; done
  say "$(free_inodes "$mnt") inodes free after 40 held back"
  pass "$cache" 0 24
  check_store "$cache"
  after_a=$(entries "$cache")
  say "first pass, 24 programs: $after_a entries written, $(free_inodes "$mnt") inodes left"
  # Whatever the cache left, the rest go to empty files.
  n=0
  while touch "$mnt/held/more-$n" 2>/dev/null; do n=$((n + 1)); done
  [ "$(free_inodes "$mnt")" -eq 0 ] || fail "could not exhaust the inodes ($(free_inodes "$mnt") left)"
  say "$n more inodes taken by empty files: none left"
  pass "$cache" 0 30
  now=$(entries "$cache")
  if [ "$store" != sqlite ]; then
    [ "$now" -eq "$after_a" ] || fail "entries went from $after_a to $now with no inode free"
    no_temporaries "$cache"
    say "no inode: 30 programs (6 new) ran right; still $after_a entries, no temporary file left"
  else
    say "no inode: 30 programs (6 new) ran right; $((now - after_a)) of the 6 new written as rows"
  fi
  check_entries "$cache"
  rm -rf "$mnt/held"
  VYRE_AOT_CACHE_DIR=$cache "$vyre" cache prune --max-entries 4 >/dev/null 2>>"$work/stderr.log" \
    || fail "vyre cache prune --max-entries 4 in $cache"
  say "$(free_inodes "$mnt") inodes free after removing the empty files and pruning to $(entries "$cache") entries"
  pass "$cache" 30 6 miss
  [ "$(entries "$cache")" -eq 10 ] || fail "after freeing inodes, $(entries "$cache") entries (expected 4 + 6 new)"
  pass "$cache" 30 6 hit
  say "6 new programs written (10 entries), then hit"
  check_entries "$cache"
  unmount "$mnt"
  end
}

# ---------------------------------------------------------------- full
scenario_full() {
  begin full "an 8 MiB ext4 (no reserved blocks) filled to ENOSPC"
  local mnt=$work/full cache avail before now
  image full 8M
  mkfs.ext4 -q -F -m 0 "$work/full.img" >/dev/null
  mount_image full "$mnt"
  cache=$mnt/cache
  pass "$cache" 0 8 miss
  check_store "$cache"
  [ "$(entries "$cache")" -eq 8 ] || fail "8 programs on an empty disk left $(entries "$cache") entries"
  dd if=/dev/zero of="$mnt/filler" bs=64k status=none 2>/dev/null || true
  dd if=/dev/zero of="$mnt/filler-tail" bs=1k status=none 2>/dev/null || true
  [ "$(free_kib "$mnt")" -eq 0 ] || fail "the disk is not full: $(free_kib "$mnt") KiB free"
  say "8 entries written, then the disk filled: 0 KiB free"
  pass "$cache" 0 16
  now=$(entries "$cache")
  [ "$now" -eq 8 ] || fail "a full disk took entries: $now, expected 8"
  if [ "$store" != sqlite ]; then
    no_temporaries "$cache"
    say "full: 16 programs (8 hits, 8 new) ran right; still 8 entries, no temporary file left"
  else
    say "full: 16 programs (8 hits, 8 new) ran right; still 8 rows"
  fi
  check_entries "$cache"
  rm -f "$mnt/filler" "$mnt/filler-tail"
  pass "$cache" 8 8 miss
  [ "$(entries "$cache")" -eq 16 ] || fail "after freeing space, $(entries "$cache") entries, expected 16"
  say "space freed: the 8 new programs written, 16 entries"
  check_entries "$cache"
  # Nearly full: a little room, taken by the loop's own writes partway.
  avail=$(free_kib "$mnt")
  dd if=/dev/zero of="$mnt/filler" bs=1k count=$((avail > 24 ? avail - 24 : 0)) status=none 2>/dev/null || true
  before=$(entries "$cache")
  say "$(free_kib "$mnt") KiB left; 30 new programs"
  pass "$cache" 16 30
  say "ran right; $(( $(entries "$cache") - before )) of the 30 written before space ran out, $(free_kib "$mnt") KiB left"
  [ "$store" = sqlite ] || no_temporaries "$cache"
  check_entries "$cache"
  unmount "$mnt"
  end
}

# ---------------------------------------------------------------- remount-ro
scenario_remount_ro() {
  begin remount-ro "ext4 remounted read-only and back while dispatches run"
  local mnt=$work/ro cache round at tries back entries_ro before ro_hits=0
  image ro 32M
  mkfs.ext4 -q -F "$work/ro.img" >/dev/null
  mount_image ro "$mnt"
  cache=$mnt/cache
  pass "$cache" 0 4
  check_store "$cache"
  : >"$work/loop.fail"
  echo 0 >"$work/loop.count"
  rm -f "$work/loop.stop"
  (
    i=4
    while [ ! -e "$work/loop.stop" ]; do
      # variants 4 to nvariants-13, round and round; the last 12 are kept for the end
      dispatch "$cache" "${variants[4 + (i - 4) % (nvariants - 16)]}" 2>>"$work/loop.fail" \
        || echo "^ dispatch $i" >>"$work/loop.fail"
      i=$((i + 1))
      echo $((i - 4)) >"$work/loop.count.new" && mv "$work/loop.count.new" "$work/loop.count"
    done
  ) &
  pids+=($!)
  loop_count() { cat "$work/loop.count"; }
  wait_for() {  # wait_for N: until the loop has run N dispatches (60 s at most)
    local deadline=$((SECONDS + 60))
    while [ "$(loop_count)" -lt "$1" ]; do
      [ $SECONDS -lt $deadline ] || fail "the dispatch loop stopped at $(loop_count)"
      sleep 0.05
    done
  }
  remount() {  # remount MODE: retried while a writer holds a file open (EBUSY)
    local tries=0
    until mount -o "remount,$1" "$mnt" 2>"$work/remount.err"; do
      tries=$((tries + 1))
      [ $tries -lt 1000 ] || fail "mount -o remount,$1 $mnt kept failing: $(cat "$work/remount.err")"
      sleep 0.0$((RANDOM % 5 + 1))
    done
    echo $tries
  }
  for round in 1 2 3; do
    wait_for $(( $(loop_count) + 3 + RANDOM % 4 ))
    tries=$(remount ro)
    at=$(loop_count)
    wait_for $((at + 8))
    entries_ro=$(entries "$cache")
    # A program cached before: still served from the read-only mount?
    dispatch "$cache" "${variants[0]}" --report-json "$work/report.json" || fail "a dispatch failed (above)"
    dispatches=$((dispatches + 1))
    if grep -q '"cache_hit": *true' "$work/report.json"; then
      ro_hits=$((ro_hits + 1))
    else
      fail "'${variants[0]}', cached before, was not served from the read-only mount"
    fi
    # verify while read-only: nothing bad, so nothing to remove
    VYRE_AOT_CACHE_DIR=$cache "$vyre" cache verify >/dev/null 2>>"$work/stderr.log" \
      || fail "vyre cache verify on the read-only mount exited non-zero"
    wait_for $(( $(loop_count) + 2 ))
    [ "$(entries "$cache")" -eq "$entries_ro" ] || fail "entries changed on a read-only mount"
    back=$(remount rw)
    say "round $round: read-only after dispatch $at ($tries busy tries), $(( $(loop_count) - at )) dispatches and a verify while read-only, read-write again ($back busy tries)"
  done
  wait_for $(( $(loop_count) + 6 ))
  touch "$work/loop.stop"
  wait "${pids[-1]}"
  unset 'pids[-1]'
  dispatches=$((dispatches + $(loop_count)))
  if [ -s "$work/loop.fail" ]; then sed 's/^/   /' "$work/loop.fail" >&2; fail "dispatches failed around the remounts (above)"; fi
  say "$(loop_count) dispatches in the loop, all right; $(entries "$cache") entries"
  say "a program cached before, run while read-only: $ro_hits of 3 hits"
  # The programs the loop left out: written now, then hits.
  pass "$cache" $((nvariants - 12)) 12 miss
  pass "$cache" $((nvariants - 12)) 12 hit
  say "read-write again: 12 new programs written, then hits"
  check_entries "$cache"
  unmount "$mnt"
  end
}

# -------------------------------------------------------------- xfs, btrfs
cold_warm() {  # cold_warm CACHE COUNT: every program a miss, then a hit
  pass "$1" 0 "$2" miss
  check_store "$1"
  pass "$1" 0 "$2" hit
  [ "$(entries "$1")" -eq "$2" ] || fail "$(entries "$1") entries after $2 programs"
  say "$2 programs cold (misses, written), then warm (all hits)"
  check_entries "$1"
}
scenario_fs() {  # scenario_fs xfs|btrfs
  local fs=$1
  begin "$fs" "normal operation on $fs"
  if ! command -v "mkfs.$fs" >/dev/null; then
    say "skipped: no mkfs.$fs (scripts/setup --all installs xfsprogs and btrfs-progs)"
    scenario=
    return
  fi
  if ! grep -qw "$fs" /proc/filesystems && ! modprobe "$fs" 2>/dev/null; then
    say "skipped: this kernel has no $fs"
    scenario=
    return
  fi
  # The smallest images mkfs takes: xfs 300 MiB, btrfs 114 MiB (sparse files).
  case $fs in xfs) image "$fs" 300M ;; btrfs) image "$fs" 128M ;; esac
  "mkfs.$fs" -q -f "$work/$fs.img" >/dev/null 2>&1 || fail "mkfs.$fs $work/$fs.img"
  mount_image "$fs" "$work/$fs"
  cold_warm "$work/$fs/cache" 24
  unmount "$work/$fs"
  end
}

# ------------------------------------------------------- tmpfs, overlayfs
scenario_tmpfs_overlay() {
  local lower=$work/tmpfs rw=$work/ovl-rw merged=$work/merged cache i key now
  begin tmpfs "tmpfs: cold, then warm"
  mount_tmpfs "$lower"
  cold_warm "$lower/cache" 16
  end

  begin overlay "overlayfs: that tmpfs cache, read-only, as the lower layer; the upper on another tmpfs"
  mount -o remount,ro "$lower" || fail "mount -o remount,ro $lower"
  (cd "$lower" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/lower.before"
  mount_tmpfs "$rw"
  mkdir -p "$rw/upper" "$rw/work" "$merged"
  mount -t overlay overlay -o "lowerdir=$lower,upperdir=$rw/upper,workdir=$rw/work" "$merged" \
    || fail "mount -t overlay (lowerdir=$lower)"
  mounts+=("$merged")
  cache=$merged/cache
  pass "$cache" 0 16 hit
  if [ "$store" != sqlite ]; then
    [ "$(entries "$rw/upper/cache")" -eq 0 ] || fail "hits copied entries into the upper layer"
    say "16 programs: all hits from the lower layer, no entry copied up"
  else
    now=$(entries "$rw/upper/cache")
    say "16 programs: all hits from the lower layer ($( [ "$now" -gt 0 ] && echo "the database copied up, $now rows, when a process opened it to write" || echo "the database not copied up"))"
  fi
  for ((i = 16; i < 28; i++)); do
    pass "$cache" $i 1 miss
    key=$(last_key)
    has_entry "$rw/upper/cache" "$key" || fail "'${variants[i]}': entry $key not in the upper layer"
    ! has_entry "$lower/cache" "$key" || fail "'${variants[i]}': entry $key in the lower layer"
  done
  say "12 new programs: misses, each written to the upper layer"
  pass "$cache" 0 28 hit
  say "all 28 again: hits"
  check_entries "$cache"
  (cd "$lower" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/lower.after"
  cmp -s "$work/lower.before" "$work/lower.after" || fail "the lower layer changed"
  say "the lower layer unchanged (every file's SHA-256)"
  unmount "$merged"; unmount "$rw"; unmount "$lower"
  end
}

# hot_journal DIR: what a kill at the worst moment leaves, made on purpose
# (the random kills above leave it only now and then): a writer killed in
# its transaction after SQLite spilled some of it into the database file
# leaves a hot rollback journal (its header's magic written) and a torn file.
# The transaction's rows are never served: not to the independent reader
# (which rolls the journal back in a copy), not to vyre (which rolls it back).
hot_journal() {
  local dir=$1 before key=ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff rc=0
  before=$(entries "$dir")
  # The subshell keeps bash's "Killed" report off the test's output.
  ( python3 - "$dir/entries.sqlite3" "$key" 2>"$work/err.writer" <<'PY'
import os, signal, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=TRUNCATE")
c.execute("PRAGMA cache_size=4")  # a few pages: the transaction spills into the file
c.execute("BEGIN IMMEDIATE")
c.execute("DELETE FROM entries")
c.execute("INSERT INTO entries VALUES (?, 'not an entry', 'torn', 0)", (sys.argv[2],))
for i in range(64):
    c.execute("INSERT INTO entries VALUES (?, zeroblob(4000), zeroblob(4000), 0)", (f"{i:064x}",))
os.kill(os.getpid(), signal.SIGKILL)
PY
    exit $?
  ) 2>/dev/null || rc=$?
  [ "$rc" = 137 ] || { cat "$work/err.writer" >&2; fail "the writer in $dir exited $rc, not killed"; }
  [ "$(head -c 8 "$dir/entries.sqlite3-journal" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = d9d505f920a163d7 ] \
    || fail "the killed writer left no hot journal in $dir"
  [ "$(entries "$dir")" = "$before" ] || fail "with a hot journal, not the $before rows from before the killed transaction"
  ! has_entry "$dir" "$key" || fail "the killed transaction's row is served from $dir"
  [ -s "$dir/entries.sqlite3-journal" ] || fail "the independent reader changed $dir"
  say "a writer killed in its transaction: a hot journal of $(stat -c %s "$dir/entries.sqlite3-journal") B; still $before rows read"
  check_entries "$dir"
  ! has_entry "$dir" "$key" || fail "the killed transaction's row is served from $dir after vyre opened it"
  [ ! -s "$dir/entries.sqlite3-journal" ] || fail "vyre left the hot journal in $dir"
  say "rolled back by vyre (cache verify): $(entries "$dir") rows, no journal left"
}

# ---------------------------------------------------------------- sigkill
scenario_sigkill() {
  begin sigkill "vyre run killed by SIGKILL at random moments, $kills_wanted kills"
  local mnt=$work/kill cache t0 run_ms spread kills=0 finished=0 i=0 ms v ex opts rc
  image kill 64M
  mkfs.ext4 -q -F "$work/kill.img" >/dev/null
  mount_image kill "$mnt"
  cache=$mnt/cache
  # Small bounds: most programs miss and write, and writers evict.
  export VYRE_AOT_CACHE_MAX_ENTRIES=6 VYRE_AOT_CACHE_MAX_BYTES=2M
  # One run's time here, to spread the kills over a whole run.
  t0=$(date +%s%N)
  pass "$cache" 0 4
  check_store "$cache"
  run_ms=$(( ($(date +%s%N) - t0) / 4000000 ))
  spread=$(( run_ms * 3 / 2 > 20 ? run_ms * 3 / 2 : 20 ))
  say "a run takes about $run_ms ms; kills at 1 to $spread ms"
  t0=$SECONDS
  while [ $kills -lt "$kills_wanted" ]; do
    ms=$((1 + RANDOM % spread))  # never 0: timeout 0 would not kill
    v=${variants[RANDOM % nvariants]}
    ex=${v%% *} opts=()
    [ "$v" = "$ex" ] || read -ra opts <<<"${v#* }"
    rc=0
    # --foreground: timeout kills vyre alone, not its own process group (and
    # itself), and exits 124 when it did.
    VYRE_AOT_CACHE_DIR=$cache timeout --foreground -s KILL "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))" \
      "$vyre" run "$examples/$ex.json" --inputs "$examples/$ex.run.json" --check "${opts[@]}" \
      >/dev/null 2>"$work/err.kill" || rc=$?
    cat "$work/err.kill" >>"$work/stderr.log"
    case $rc in
      0) finished=$((finished + 1)) ;;
      124 | 137) kills=$((kills + 1)) ;;
      *) sed 's/^/      /' "$work/err.kill" >&2
         fail "run $i ('$v', not killed) exited $rc" ;;
    esac
    i=$((i + 1))
    [ $i -lt $((kills_wanted * 4 + 100)) ] || fail "only $kills kills in $i runs"
  done
  dispatches=$((dispatches + i))
  say "$i runs in $((SECONDS - t0)) s: $kills killed by SIGKILL, $finished finished, all of those right"
  if [ "$store" != sqlite ]; then
    say "$(entries "$cache") entries, $(temporaries "$cache") temporary files of killed writers left"
  else
    say "$(entries "$cache") rows; $(find "$cache" -maxdepth 1 -name 'entries.sqlite3*' -printf '%f %s B  ')"
  fi
  check_entries "$cache"
  [ "$store" != sqlite ] || hot_journal "$cache"
  unset VYRE_AOT_CACHE_MAX_ENTRIES VYRE_AOT_CACHE_MAX_BYTES
  pass "$cache" 0 24
  say "then 24 programs unkilled: all right"
  check_entries "$cache"
  unmount "$mnt"
  end
}

# ----------------------------------------------------------------- fuse
# A FUSE file system (bindfs over a tmpfs), which the cache counts as shared
# between machines by its statfs type: left to choose, it keeps files, one
# file an entry, published with one rename (docs/cache.md, "Shared and
# network file systems"). Once, whatever the stores asked for.
scenario_fuse() {
  local src=$work/fuse-src mnt=$work/fuse cache pairs packed
  store=auto
  begin fuse "FUSE (bindfs over a tmpfs), told apart as shared: one file an entry"
  command -v bindfs >/dev/null || fail "bindfs is not installed (scripts/setup --all installs it)"
  mount_tmpfs "$src"
  mkdir -p "$mnt"
  bindfs "$src" "$mnt" || fail "bindfs $src $mnt"
  mounts+=("$mnt")
  cache=$mnt/cache
  (
    export VYRE_AOT_CACHE_STORE=auto
    unset VYRE_AOT_CACHE_SHARED_FS
    pass "$cache" 0 12 miss
    pass "$cache" 0 12 hit
    VYRE_AOT_CACHE_DIR=$cache "$vyre" cache stats --json >"$work/stats.json" 2>>"$work/stderr.log" \
      || fail "vyre cache stats --json in $cache"
  ) || exit 1
  dispatches=$((dispatches + 24))
  python3 - "$work/stats.json" <<'PY' || fail "the cache on FUSE is not kept as one file an entry"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"   store {s['store']} on {s['file_system']}, shared: {s['shared_file_system']} ({s['store_reason']})")
sys.exit(0 if s["store"] == "directory" and s["shared_file_system"] and s["file_system"] == "fuse" else 1)
PY
  pairs=$(find "$cache" -maxdepth 1 -name '*.toml' | wc -l)
  packed=$(find "$cache" -maxdepth 1 -name '*.entry' | wc -l)
  [ "$pairs" -eq 0 ] && [ "$packed" -eq 12 ] || fail "$pairs pairs and $packed one-file entries, expected 0 and 12"
  say "12 programs cold, then 12 hits; $packed one-file entries, no pair"
  check_entries "$cache"
  unmount "$mnt"
  unmount "$src"
  end
}
if want fuse; then scenario_fuse; fi

for store in "${stores[@]}"; do
  case $store in
    directory | sqlite) export VYRE_AOT_CACHE_STORE=$store VYRE_AOT_CACHE_SHARED_FS=0 ;;
    shared) export VYRE_AOT_CACHE_STORE=directory VYRE_AOT_CACHE_SHARED_FS=1 ;;
    *) echo "VYRE_FS_TEST_STORES: '$store' is not directory, sqlite or shared" >&2; exit 2 ;;
  esac
  if want inodes; then scenario_inodes; fi
  if want full; then scenario_full; fi
  if want remount-ro; then scenario_remount_ro; fi
  if want xfs; then scenario_fs xfs; fi
  if want btrfs; then scenario_fs btrfs; fi
  if want tmpfs || want overlay; then scenario_tmpfs_overlay; fi
  if want sigkill; then scenario_sigkill; fi
done

echo "== all scenarios passed in $SECONDS s"
