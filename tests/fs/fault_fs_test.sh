#!/usr/bin/env bash
# The AOT cache on a FUSE file system of the project's own that injects what
# network file systems do (tests/fs/fault_fs.c; docs/cache.md, "Tested on real
# file systems"), once with each store (VYRE_AOT_CACHE_STORE=directory,
# sqlite). FUSE is counted as a shared file system: the directory store keeps
# one file an entry there, the SQLite store its rollback journal.
#
# Each fault in its turn, then all at once:
#
#   estale   open, getattr and read fail with ESTALE, one in VYRE_FUSE_TEST_ESTALE (40)
#   eio      read, write and fsync fail with EIO, one in VYRE_FUSE_TEST_EIO (40)
#   rename   one rename in two is not atomic: the destination appears with a
#            third of the file and fills in two more pieces 20 ms apart
#   short    one read and one write in three moves fewer bytes than asked
#   coarse   times reported in whole 2-second steps (FAT, SMB)
#
# Each phase runs three processes at once, each dispatching programs cached
# before (warm hits) and programs new to the phase (cold misses, written
# while the fault is on; all three take the same new ones, so that readers
# meet writers), then one dispatch with the fault at every operation it
# applies to, so that the cache surely meets it: ESTALE and EIO must give a
# warning naming the error; with every rename slow, a program published and
# run again at once must meet its entry half there and say so (the
# directory store, whose entries are renamed into place); every read and
# write short, or coarse times, must change nothing the cache sees (a hit,
# no bad entry). Every dispatch is `vyre run EXAMPLE.json --inputs
# EXAMPLE.run.json --check` on an example with an "expect" and must exit 0:
# right values, never a failed dispatch; nothing but the cache's warnings
# on stderr. Each fault must have been injected (fault_fs's counts); the
# SQLite store's database never set aside. At the end, faults off: every
# program again, right; each entry checked independently (entries.py),
# `vyre cache verify --json` clean; and, before the renames that are not
# atomic, every lookup counted by `vyre cache stats` or its counts said to
# be incomplete.
#
# Usage: fault_fs_test.sh [VYRE [FAULT_FS [SOURCE_DIR]]]   (defaults: the build
# of this tree). Needs root, /dev/fuse and the fault_fs program (built where
# libfuse3 is: libfuse3-dev); otherwise it says why and exits 77 (CTest:
# skipped). Environment: VYRE_FUSE_TEST_STORES ("directory sqlite"),
# VYRE_FUSE_TEST_SEED (random; printed), VYRE_FUSE_TEST_KEEP=1 (keep the work
# folder, unmounted).
set -Eeuo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=${3:-$(cd "$here/../.." && pwd)}
vyre=${1:-$src/build/vyre}
fault_fs=${2-$src/build/tests/fault_fs}
examples=$src/examples
read -ra stores <<<"${VYRE_FUSE_TEST_STORES:-directory sqlite}"
seed=${VYRE_FUSE_TEST_SEED:-$(( $(date +%s) % 32768 ))}
estale_rate=${VYRE_FUSE_TEST_ESTALE:-40}
eio_rate=${VYRE_FUSE_TEST_EIO:-40}
workers=3
export VYRE_LOG=${VYRE_LOG:-warn}
SKIP=77

skip() { echo "skipped: $*"; exit $SKIP; }
[ "$(id -u)" -eq 0 ] || skip "mounting a FUSE file system needs root (running as uid $(id -u))"
[ -c /dev/fuse ] || skip "no /dev/fuse"
[ -n "$fault_fs" ] && [ -x "$fault_fs" ] ||
  skip "no fault_fs program${fault_fs:+ at $fault_fs}: it is built where libfuse3 is (apt-get install libfuse3-dev, then configure again; scripts/setup --all installs it)"
for tool in python3 mountpoint umount; do
  command -v "$tool" >/dev/null || skip "no $tool"
done
[ -x "$vyre" ] || { echo "fault_fs_test.sh: no vyre command at $vyre" >&2; exit 2; }
[ -f "$examples/saxpy.run.json" ] || { echo "fault_fs_test.sh: no examples in $examples" >&2; exit 2; }

work=$(mktemp -d /tmp/vyre-fuse-test.XXXXXX)
backing=$work/backing mnt=$work/mnt
mkdir -p "$backing" "$mnt"
fs_pid= pids=()
cleanup() {
  local status=$? pid
  set +e
  trap - ERR
  for pid in "${pids[@]}"; do pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  if mountpoint -q "$mnt"; then umount "$mnt" 2>/dev/null || umount -l "$mnt"; fi
  [ -z "$fs_pid" ] || wait "$fs_pid" 2>/dev/null
  if [ "${VYRE_FUSE_TEST_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

RANDOM=$seed
echo "== vyre: $vyre; fault_fs: $fault_fs; stores: ${stores[*]}; seed $seed (VYRE_FUSE_TEST_SEED); work folder $work"
fail() { echo "FAIL${phase:+ ($phase)}: $*" >&2; exit 1; }
trap 'echo "FAIL${phase:+ ($phase)}: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
say() { echo "   $*"; }
phase=

# ------------------------------------------------------------ the mount
: >"$work/control"
"$fault_fs" "$backing" "$mnt" -f -o "counts=$work/counts,control=$work/control,seed=$seed,max_threads=32" \
  2>"$work/fault_fs.log" &
fs_pid=$!
for ((i = 0; i < 100; i++)); do
  mountpoint -q "$mnt" && break
  kill -0 "$fs_pid" 2>/dev/null || skip "cannot mount a FUSE file system here: $(tr '\n' ' ' <"$work/fault_fs.log")"
  sleep 0.1
done
mountpoint -q "$mnt" || fail "fault_fs did not mount $mnt in 10 s: $(cat "$work/fault_fs.log")"

# count KIND: fault_fs's count of KIND from the last counts file read (read_counts)
declare -A counts
read_counts() {
  local key value
  while read -r key value; do counts[$key]=$value; done <"$work/counts"
}
# faults SETTINGS...: the faults in force from now on (none: every fault off),
# once fault_fs has read them (the counts file's next generation); the counts
# file read then.
faults() {
  local want tries=0
  read_counts
  want=$((counts[generation] + 1))
  echo "$*" >"$work/control"
  kill -USR1 "$fs_pid"
  until read_counts && [ "${counts[generation]}" -ge "$want" ]; do
    tries=$((tries + 1))
    [ $tries -lt 500 ] || fail "fault_fs did not take the settings '$*' in 10 s"
    sleep 0.02
  done
}
# settled: faults off and no non-atomic rename still copying
settled() {
  local tries=0
  faults
  until [ "${counts[renames_in_flight]}" -eq 0 ]; do
    tries=$((tries + 1))
    [ $tries -lt 100 ] || fail "non-atomic renames still copying after 2 s"
    sleep 0.02
    faults
  done
}
faults
grep -q '^generation ' "$work/counts" || fail "fault_fs wrote no counts file"

# ------------------------------------------------------------ programs
# The programs (tests/fs/program_variants.sh).
source "$here/program_variants.sh"

# dispatch CACHE VARIANT LOG: one checked run; its stderr to LOG, its result
# (hit or miss) as a line of LOG.results; a failure as lines of LOG.failed.
dispatch() {
  local cache=$1 v=$2 log=$3 ex opts=() rc=0 report=$3.report.$BASHPID err=$3.err.$BASHPID
  ex=${v%% *}
  [ "$v" = "$ex" ] || read -ra opts <<<"${v#* }"
  VYRE_AOT_CACHE_DIR=$cache "$vyre" run "$examples/$ex.json" --inputs "$examples/$ex.run.json" --check \
    "${opts[@]}" --report-json "$report" >/dev/null 2>"$err" || rc=$?
  cat "$err" >>"$log"
  if [ $rc -ne 0 ]; then
    { echo "dispatch failed (exit $rc): VYRE_AOT_CACHE_STORE=$VYRE_AOT_CACHE_STORE VYRE_AOT_CACHE_DIR=$cache vyre run examples/$ex.json --inputs examples/$ex.run.json --check ${opts[*]}"
      sed 's/^/      /' "$err"; } >>"$log.failed"
    return 0
  fi
  case $(grep -o '"cache_hit": *[a-z]*' "$report") in
    *true) echo "hit $v" >>"$log.results" ;;
    *false) echo "miss $v" >>"$log.results" ;;
    *) echo "no cache_hit in the --report-json of '$v'" >>"$log.failed" ;;
  esac
}

# ------------------------------------------------------------ phases
warm=12        # variants 0..11: cached before the faults, run in every phase
fresh=4        # new variants a phase: the same for its three processes
next_fresh=$warm
declare -A injected at_start  # "KIND/STORE": faults injected; the counts when the store's turn began

# run_phase NAME SETTINGS: the three processes, with the faults SETTINGS on;
# each runs the phase's new variants in turn, each followed by a warm one.
run_phase() {
  local name=$1 settings=$2 w j log=$work/$1.log first=$next_fresh
  phase="$name/$store" phase_name=$name
  : >"$log"; : >"$log.results"; : >"$log.failed"
  faults $settings
  local -A before=()
  for k in estale eio rename short_read short_write coarse; do before[$k]=${counts[$k]}; done
  local started=$SECONDS
  pids=()
  for ((w = 0; w < workers; w++)); do
    (
      RANDOM=$((seed + w * 7919 + first))
      for ((j = 0; j < fresh; j++)); do
        dispatch "$cache" "${variants[first + j]}" "$log"
        dispatch "$cache" "${variants[RANDOM % warm]}" "$log"
      done
    ) &
    pids+=($!)
  done
  for w in "${pids[@]}"; do wait "$w"; done
  pids=()
  next_fresh=$((first + fresh))
  dispatched=$((dispatched + workers * fresh * 2))
  settled
  local runs hits fired=() k d
  runs=$(wc -l <"$log.results")
  hits=$(grep -c '^hit ' "$log.results" || true)
  for k in estale eio rename short_read short_write coarse; do
    d=$((counts[$k] - before[$k]))
    [ $d -eq 0 ] || fired+=("$k $d")
  done
  if [ -s "$log.failed" ]; then sed 's/^/   /' "$log.failed" >&2; fail "dispatches failed (above)"; fi
  [ "$runs" -eq $((workers * fresh * 2)) ] || fail "$runs results of $((workers * fresh * 2)) dispatches"
  say "$runs dispatches in $((SECONDS - started)) s, all right: $hits hits, $((runs - hits)) misses; faults injected: ${fired[*]:-none}"
  # What the processes said, but the checks' own lines: distinct, keys and paths shortened.
  # (The SQLite store's warning that it was asked for on a network file system is every run's.)
  sed -E 's/[0-9a-f]{16,64}(\.\.\.)?/KEY/g; s#/tmp/vyre-fuse-test\.[A-Za-z0-9]+#WORK#g; s/[0-9]+ bytes/N bytes/g; s/[0-9]+ ms/N ms/g' \
    "$log" | { grep -v -e ': check passed' -e 'VYRE_AOT_CACHE_STORE=sqlite on fuse' || true; } |
    sort | uniq -c | sort -rn >"$log.messages"
  if [ -s "$log.messages" ]; then
    say "messages (distinct):"
    head -8 "$log.messages" | sed 's/^/      /'
  fi
  only_warnings "$log"
}

# only_warnings LOG: nothing but the checks' lines, the cache's warnings and
# Mesa's own line when it cannot make its shader cache's folder: no crash,
# no error.
only_warnings() {
  local other
  other=$({ grep -v -e ': check passed' -e '^vyre: warning: AOT cache' \
              -e '^Failed to create .* for shader cache (.*)---disabling\.$' "$1" || true; } | sort -u | head -5)
  [ -z "$other" ] || { echo "$other" | sed 's/^/   /' >&2; fail "lines other than the cache's warnings (above)"; }
}

# directed SETTINGS VARIANT [hit|miss|any] [PATTERN]: one dispatch of VARIANT
# with the faults SETTINGS on (at every operation, to be sure the cache meets
# them), right; with hit or miss, the cache's answer too; with PATTERN, a
# warning of the cache matching it (grep -E).
directed() {
  local settings=$1 v=$2 want=${3:-any} pattern=${4:-} log=$work/directed.log got
  : >"$log"; : >"$log.results"; : >"$log.failed"
  faults $settings
  dispatch "$cache" "$v" "$log"
  dispatched=$((dispatched + 1))
  settled
  [ ! -s "$log.failed" ] || { sed 's/^/   /' "$log.failed" >&2; fail "with ${settings:-no fault}: the dispatch failed (above)"; }
  got=$(cut -d' ' -f1 "$log.results")
  if [ "$want" != any ] && [ "$got" != "$want" ]; then
    sed 's/^/   /' "$log" >&2
    fail "with ${settings:-no fault}: '$v' was a $got, expected a $want (its messages above)"
  fi
  if [ -n "$pattern" ] && ! grep -qE "AOT cache.*$pattern" "$log"; then
    sed 's/^/   /' "$log" >&2
    fail "with $settings: no warning of the cache says '$pattern' (above)"
  fi
  only_warnings "$log"
  say "with ${settings:-no fault}: '$v' right, a $got${pattern:+; $(grep -m1 -E "AOT cache.*$pattern" "$log" |
    sed -E 's/^vyre: warning: //; s/[0-9a-f]{16,64}/KEY/g; s#/tmp/vyre-fuse-test\.[A-Za-z0-9]+#WORK#g' | cut -c1-200)}"
  cat "$log" >>"$work/$phase_name.log"
}

check_entries() {  # check_entries DIR: entries.py check, then vyre cache verify --json, clean
  local dir=$1 rc=0 good beside
  read -r good beside < <(python3 "$here/entries.py" check "$dir" || echo "FAILED")
  [ "$good" != FAILED ] || fail "an entry in $dir does not match its metadata (above)"
  VYRE_AOT_CACHE_DIR=$dir "$vyre" cache verify --json >"$work/verify.json" 2>"$work/verify.err" || rc=$?
  python3 - "$work/verify.json" "$rc" "$good" "$beside" <<'PY' || fail "vyre cache verify in $dir is not clean (above; $(cat "$work/verify.err"))"
import json, sys
r, rc, good, beside = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
problems = []
if rc != 0: problems.append(f"exit {rc}")
if r["bad"]: problems.append(f"bad entries: {r['bad']}")
if r["driver_bad"]: problems.append(f"bad driver folders: {r['driver_bad']}")
if r["not_removed"]: problems.append(f"not removed: {r['not_removed']} ({r['not_removed_problem']})")
if r["good"] != good: problems.append(f"{r['good']} good, where {good} entries check by their digests")
if beside: problems.append(f"{beside} entry files beside the database")
for p in problems:
    print("   verify:", p, file=sys.stderr)
print(f"   verify: {r['checked']} checked, {r['good']} good, 0 bad, {r['incomplete']} incomplete; {good} entries checked independently")
sys.exit(1 if problems else 0)
PY
}

# stats_check CACHE [info]: the counters of `vyre cache stats`: every lookup
# counted, or its counts said to be incomplete. A few may go uncounted
# unsaid: the run with ESTALE everywhere has no cache to count in, and where
# the flush at exit and then the record of its loss both fail (eio=1 fails
# every write) nothing can say so. A shard that a rename that is not atomic
# left half-copied is read again, and a flush never writes over it
# (docs/cache.md, "Stats"). With info, only shown.
stats_check() {
  local cache=$1 mode=${2:-check}
  VYRE_AOT_CACHE_DIR=$cache "$vyre" cache stats --json >"$work/stats.json" 2>/dev/null || fail "vyre cache stats --json"
  python3 - "$work/stats.json" "$dispatched" "$mode" <<'PY' || fail "lookups went uncounted and cache stats does not say so"
import json, sys
s, n, mode = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
counted = s["hits"] + s["misses"]
print(f"   cache stats: {s['hits']} hits, {s['misses']} misses, {s['errors']} errors, {s['bad_entries']} bad entries"
      f" of {n} dispatches" + (f"; incomplete: {s['incomplete_reason']}" if s["incomplete"] else ""))
sys.exit(0 if mode == "info" or (counted <= n and (n - counted <= 4 or s["incomplete"])) else 1)
PY
}

for store in "${stores[@]}"; do
  case $store in
    directory | sqlite) export VYRE_AOT_CACHE_STORE=$store ;;
    *) echo "VYRE_FUSE_TEST_STORES: '$store' is not directory or sqlite" >&2; exit 2 ;;
  esac
  unset VYRE_AOT_CACHE_SHARED_FS  # FUSE says it by itself
  cache=$mnt/$store
  next_fresh=$warm
  started=$SECONDS
  echo "== $store: the cache in $cache"
  faults
  for k in estale eio rename short_read short_write coarse; do at_start[$k]=${counts[$k]}; done

  # Warm: the first programs cached with no fault, then the store checked.
  phase="warm/$store"
  : >"$work/warm.log"; : >"$work/warm.log.results"; : >"$work/warm.log.failed"
  for ((i = 0; i < warm; i++)); do dispatch "$cache" "${variants[i]}" "$work/warm.log"; done
  dispatched=$warm
  [ ! -s "$work/warm.log.failed" ] || { cat "$work/warm.log.failed" >&2; fail "dispatches failed with no fault (above)"; }
  VYRE_AOT_CACHE_DIR=$cache "$vyre" cache stats --json >"$work/stats.json" 2>/dev/null || fail "vyre cache stats --json"
  python3 - "$work/stats.json" "$store" <<'PY' || fail "the cache on fault_fs is not kept as expected"
import json, sys
s, store = json.load(open(sys.argv[1])), sys.argv[2]
print(f"   {s['entries']} entries; store {s['store']} on {s['file_system']}, shared: {s['shared_file_system']}")
sys.exit(0 if s["store"] == store and s["file_system"] == "fuse" and s["shared_file_system"] and s["entries"] == 12 else 1)
PY
  if [ "$store" = directory ]; then
    n=$(find "$cache" -maxdepth 1 -name '*.entry' | wc -l)
    [ "$n" -eq $warm ] || fail "$n one-file entries, expected $warm"
  fi

  echo "-- estale: ESTALE from open, getattr and read, one in $estale_rate"
  run_phase estale "estale=$estale_rate"
  directed "estale=1" "${variants[0]}" any 'Stale file handle'
  echo "-- eio: EIO from read, write and fsync, one in $eio_rate"
  run_phase eio "eio=$eio_rate"
  directed "eio=1" "${variants[1]}" any 'Input/output error'
  # Before renames that are not atomic: every count kept, or said lost.
  stats_check "$cache"
  echo "-- rename: one rename in two not atomic (a third, then two pieces 20 ms apart)"
  run_phase rename "rename=2 rename_pause_ms=20"
  if [ "$store" = directory ]; then
    # A program published with every rename slow (a second between pieces),
    # then run again at once: the second run meets the entry half there.
    v=${variants[next_fresh]}
    next_fresh=$((next_fresh + 1))
    : >"$work/torn.log"; : >"$work/torn.log.results"; : >"$work/torn.log.failed"
    faults "rename=1 rename_pause_ms=1000"
    dispatch "$cache" "$v" "$work/torn.log"
    dispatch "$cache" "$v" "$work/torn.log"
    dispatched=$((dispatched + 2))
    settled
    [ ! -s "$work/torn.log.failed" ] || { sed 's/^/   /' "$work/torn.log.failed" >&2; fail "a dispatch failed (above)"; }
    grep -qE 'AOT cache: bad entry .*entry frame has [0-9]+ bytes after its header, the header says [0-9]+\); it is replaced' \
      "$work/torn.log" || { sed 's/^/   /' "$work/torn.log" >&2; fail "the run that met a half-renamed entry did not say so (above)"; }
    only_warnings "$work/torn.log"
    say "with every rename slow: '$v' published, then run at once: right, and $(grep -m1 -o 'bad entry .*' "$work/torn.log" |
      sed -E 's/[0-9a-f]{16,64}(\.\.\.)?/KEY/g; s#/tmp/vyre-fuse-test\.[A-Za-z0-9]+#WORK#g' | cut -c1-150)"
    cat "$work/torn.log" >>"$work/rename.log"
    directed "" "$v" hit
  fi
  echo "-- short: one read and one write in three short"
  run_phase short "short=3"
  directed "short=1" "${variants[2]}" hit
  echo "-- coarse: times in whole 2-second steps"
  run_phase coarse "coarse=2"
  directed "coarse=1" "${variants[3]}" hit
  echo "-- all: every fault at once"
  run_phase all "estale=$((estale_rate * 2)) eio=$((eio_rate * 2)) rename=4 short=5 coarse=2"

  # Each fault really fired.
  settled
  for k in estale eio rename short_read short_write coarse; do
    injected[$k/$store]=$((counts[$k] - at_start[$k]))
    [ "${injected[$k/$store]}" -gt 0 ] || fail "fault_fs injected no $k fault"
  done
  # A short read or write, or a coarse time, is no damage: no bad entry, every warm program a hit.
  for p in short coarse; do
    ! grep -q 'bad entry' "$work/$p.log" || fail "the $p phase found bad entries: $(grep -m1 'bad entry' "$work/$p.log")"
    ! grep "miss" "$work/$p.log.results" | grep -qxF -f <(printf 'miss %s\n' "${variants[@]:0:warm}") ||
      fail "the $p phase missed a program cached before"
  done
  # A read error is no damage either: the database was never set aside.
  aside=$(find "$cache" -maxdepth 1 -name 'entries.sqlite3.corrupt-*' | wc -l)
  [ "$aside" -eq 0 ] || fail "the database was set aside $aside times: $(grep -h 'not a usable database' "$work"/*.log | head -1)"

  # Faults off: every program again, right; then each entry checked.
  phase="end/$store"
  settled
  : >"$work/end.log"; : >"$work/end.log.results"; : >"$work/end.log.failed"
  for ((i = 0; i < next_fresh; i++)); do dispatch "$cache" "${variants[i]}" "$work/end.log"; done
  dispatched=$((dispatched + next_fresh))
  [ ! -s "$work/end.log.failed" ] || { cat "$work/end.log.failed" >&2; fail "dispatches failed (above)"; }
  say "faults off: the $next_fresh programs again, all right ($(grep -c '^hit ' "$work/end.log.results" || true) hits)"
  check_entries "$cache"
  stats_check "$cache"
  echo "-- $store: passed in $((SECONDS - started)) s"
done

echo "== faults injected, by kind and store:"
for k in estale eio rename short_read short_write coarse; do
  line="   $k:"
  for store in "${stores[@]}"; do line+=" $store ${injected[$k/$store]:-0}"; done
  echo "$line"
done
echo "== all phases passed in $SECONDS s"
