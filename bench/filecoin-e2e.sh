#!/usr/bin/env bash
# WinningPoSt, WindowPoSt and SnapDeals end to end through the daemon on a
# proving host: synthetic sparse vanilla proofs (cuzkctl post gen / update
# gen) -> cuzkd (development parameters generated on first use into its
# state dir, on the GPU when there is one) -> cuzkctl prove --winning-post /
# --window-post / --snap-deals, which returns only proofs it verified.
#
# Sequence (each step's wall time and rc go to WORK_DIR/steps.log; each
# prove's JSON, with the daemon's stage timings, to WORK_DIR/<step>.json):
#   gen           vanilla proofs: winning (1 sector), window (a full partition:
#                 2349 sectors at 32 GiB, 2300 at 64 GiB), snap (16 partitions)
#   winning-cold  then winning-warm-1..3 (parameters resident)
#   window-cold   then window-warm, and winning-during-window submitted while
#                 the warm WindowPoSt proves
#   (the WindowPoSt set is evicted and its files deleted: a 64 GB disk holds
#    one 32 GiB set of development parameters at a time)
#   snap-cold     then snap-warm and winning-during-snap the same way
# Steps a SKIP list names (FILECOIN_E2E_SKIP="window snap") are left out.
#
# Phases, like bench/porep-e2e.sh (the cold steps outlive one device command):
#   bench/filecoin-e2e.sh start  BIN_DIR WORK_DIR [SECTOR_SIZE]
#   bench/filecoin-e2e.sh wait   BIN_DIR WORK_DIR [MAX_WAIT_S]  (exit 0 done, 3 still running)
#   bench/filecoin-e2e.sh report BIN_DIR WORK_DIR OUT_DIR
set -uo pipefail
# shellcheck source=bench/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"

phase=${1:?phase: start | wait | report}
bin=${2:?BIN_DIR}
work=${3:?WORK_DIR}
mkdir -p "$work"
work=$(cd "$work" && pwd)
bin=$(cd "$bin" && pwd)
sock="$work/cuzkd.sock"
ctl() { CUZK_ADDR="unix://$sock" "$bin/cuzkctl" "$@"; }

# One timed step: its output to WORK/<name>.json and .err, a line to steps.log.
step() {
  local name=$1
  shift
  local start end rc
  start=$(date +%s.%N)
  "$@" >"$work/$name.json" 2>"$work/$name.err"
  rc=$?
  end=$(date +%s.%N)
  echo "$(date -u +%FT%TZ) $name rc=$rc wall_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')" \
    >>"$work/steps.log"
  return $rc
}
skipped() { [[ " ${FILECOIN_E2E_SKIP:-} " == *" $1 "* ]]; }

# A warm job with a WinningPoSt submitted DELAY_S after it.
warm_with_winning() {
  local name=$1 flag=$2 dir=$3
  step "$name-warm" ctl --json prove "$flag" "$dir" --proof "$work/$name-warm.proof" &
  local warm=$!
  sleep "${WINNING_DELAY_S:-4}"
  step "winning-during-$name" ctl --json prove --winning-post "$work/winning" --proof "$work/winning-during-$name.proof"
  wait "$warm"
}

case "$phase" in
start)
  size=${4:-32GiB}
  mkdir -p "$work/state"
  : >"$work/steps.log"
  rm -f "$work/done"
  cat >"$work/cuzkd.toml" <<EOF
[daemon]
listen = "unix://$sock"
state_dir = "$work/state"
[engine]
journal = false
[gpu]
devices = "auto"
[logging]
level = "info"
EOF
  start_cuzkd "$bin" "$work" "$sock" || exit 1
  setsid "$0" sequence "$bin" "$work" "$size" >"$work/sequence.log" 2>&1 </dev/null &
  echo "started"
  ;;
sequence)
  size=${4:?SECTOR_SIZE}
  case $size in
  64GiB) sectors=2300 ;;
  32GiB) sectors=2349 ;;
  *) sectors=2 ;;
  esac
  step gen-winning "$bin/cuzkctl" post gen --kind winning --sector-size "$size" --sectors 1 --seed 1 --out "$work/winning"
  skipped window || step gen-window "$bin/cuzkctl" post gen --kind window --sector-size "$size" --sectors "$sectors" \
    --seed 2 --out "$work/window"
  skipped snap || step gen-snap "$bin/cuzkctl" update gen --sector-size "$size" --seed 3 --out "$work/snap"

  step winning-cold ctl --json prove --winning-post "$work/winning" --proof "$work/winning-cold.proof"
  for i in 1 2 3; do
    step "winning-warm-$i" ctl --json prove --winning-post "$work/winning" --proof "$work/winning-warm-$i.proof"
  done
  if ! skipped window; then
    ls "$work/state/params" >"$work/params-before-window.txt" 2>/dev/null
    step window-cold ctl --json prove --window-post "$work/window" --proof "$work/window-cold.proof"
    warm_with_winning window --window-post "$work/window"
    ctl --json evict --srs "window-post-$size" >"$work/evict-window.json" 2>&1
    ls "$work/state/params" | grep -vxF -f "$work/params-before-window.txt" |
      while read -r f; do rm -f "$work/state/params/$f"; done
    echo "$(date -u +%FT%TZ) window set evicted, its files deleted" >>"$work/steps.log"
  fi
  if ! skipped snap; then
    step snap-cold ctl --json prove --snap-deals "$work/snap" --proof "$work/snap-cold.proof"
    warm_with_winning snap --snap-deals "$work/snap"
  fi
  touch "$work/done"
  ;;
wait)
  max=${4:-540}
  t0=$(date +%s)
  while [[ ! -f $work/done ]]; do
    if [[ ! -f $work/cuzkd.pid ]] || ! kill -0 "$(cat "$work/cuzkd.pid")" 2>/dev/null; then
      echo "== cuzkd is not running; last log lines:"
      tail -n 5 "$work/cuzkd.log" 2>/dev/null
      exit 2
    fi
    if (($(date +%s) - t0 >= max)); then
      echo "== still running after ${max}s; steps so far:"
      cat "$work/steps.log"
      tail -n 3 "$work/cuzkd.log"
      exit 3
    fi
    sleep 5
  done
  cat "$work/steps.log"
  ;;
report)
  out=${4:?OUT_DIR}
  mkdir -p "$out"
  ctl status >"$out/status.txt" 2>&1 || true
  ctl metrics >"$out/metrics.txt" 2>&1 || true
  pid=$(cat "$work/cuzkd.pid" 2>/dev/null)
  [[ -n $pid ]] && grep -E 'VmHWM|VmRSS' "/proc/$pid/status" 2>/dev/null
  kill -TERM "$pid" 2>/dev/null
  sleep 2
  [[ -f $work/nvsmi.pid ]] && kill "$(cat "$work/nvsmi.pid")" 2>/dev/null
  # One archive: a device run brings back at most 8 files.
  (cd "$work" && tar czf "$out/filecoin-e2e.tgz" steps.log cuzkd.log rss.log sequence.log ./*.json ./*.err \
    $(ls gpu.log 2>/dev/null))
  cat "$work/steps.log"
  df -h "$work" | tail -n 1
  ;;
*)
  echo "unknown phase $phase" >&2
  exit 2
  ;;
esac
