#!/usr/bin/env bash
# PoRep C2 end to end through the daemon on a proving host: a synthetic C1
# (cuzk-bench gen-c1) -> cuzkd (development parameters generated on first use
# into its state dir, on the GPU when there is one) -> cuzkctl prove
# --porep-c1, which returns only verified proofs -> cuzkctl porep verify
# re-checks the proof offline against the vk the daemon wrote.
#
# The 32 GiB run takes longer than one device command may (compile the
# partition R1CS, ~460M fixed-base multiplications, 10 partitions), so the
# work runs in a separate session (setsid) that outlives the command, and the
# script has phases:
#   bench/porep-e2e.sh start  BIN_DIR WORK_DIR [SECTOR_SIZE] [SEED]
#   bench/porep-e2e.sh wait   BIN_DIR WORK_DIR [MAX_WAIT_S]   (exit 0 done, 3 still running)
#   bench/porep-e2e.sh report BIN_DIR WORK_DIR OUT_DIR         (copies logs and a summary)
# BIN_DIR holds cuzkd, cuzkctl and cuzk-bench. WORK_DIR gets c1.json, the
# state dir, the socket, logs and the proof.
set -uo pipefail
# shellcheck source=bench/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"

phase=${1:?phase: start | wait | report}
bin=${2:?BIN_DIR}
work=${3:?WORK_DIR}
mkdir -p "$work"
work=$(cd "$work" && pwd)
sock="$work/cuzkd.sock"

case "$phase" in
start)
  size=${4:-32GiB}
  seed=${5:-1}
  mkdir -p "$work/state"
  cat >"$work/cuzkd.toml" <<EOF
[daemon]
listen = "unix://$sock"
state_dir = "$work/state"
[engine]
journal = false
[gpu]
devices = "auto"
${E2E_GPU_TOML:-}
[logging]
level = "info"
EOF
  # Extra settings for one run: E2E_GPU_TOML lines go into [gpu] (e.g.
  # "abc_on_device = false"), E2E_EXTRA_TOML is appended (other tables, e.g.
  # E2E_EXTRA_TOML=$'[porep]\nsynthesis_threads = 1').
  if [[ -n ${E2E_EXTRA_TOML:-} ]]; then printf '%s\n' "$E2E_EXTRA_TOML" >>"$work/cuzkd.toml"; fi
  echo "== $(date -u +%FT%TZ) gen-c1 $size seed $seed"
  "$bin/cuzk-bench" gen-c1 --sector-size "$size" --seed "$seed" >"$work/c1.json" || exit 1
  # E2E_JOBS=N submits N jobs at once (job j > 1: seed + j - 1, files <name>.j.*;
  # E2E_JOB_DELAY_S spaces them, below),
  # which exercises batching and, with several GPUs, partitions across them.
  for ((j = 2; j <= ${E2E_JOBS:-1}; j++)); do
    "$bin/cuzk-bench" gen-c1 --sector-size "$size" --seed "$((seed + j - 1))" >"$work/c1.$j.json" || exit 1
  done
  start_cuzkd "$bin" "$work" "$sock" || exit 1
  echo "== $(date -u +%FT%TZ) submitting ${E2E_JOBS:-1} job(s)"
  echo "${E2E_JOBS:-1}" >"$work/jobs"
  # E2E_JOB_DELAY_S=D submits job j D * (j - 1) seconds after the first
  # (fractions allowed): a job arriving while the previous one proves, which
  # joins its running pipeline ([porep] join_running_batch).
  delay=${E2E_JOB_DELAY_S:-0}
  for ((j = 1; j <= ${E2E_JOBS:-1}; j++)); do
    x=$([[ $j -gt 1 ]] && echo ".$j")
    after=$(awk -v d="$delay" -v j="$j" 'BEGIN { printf "%.3f", d * (j - 1) }')
    setsid bash -c "sleep $after; start=\$(date +%s.%N); CUZK_ADDR=unix://$sock '$bin/cuzkctl' prove --porep-c1 '$work/c1$x.json' \
        --proof '$work/proof$x.bin' --json >'$work/prove$x.json' 2>'$work/prove$x.err'; rc=\$?; \
        end=\$(date +%s.%N); echo \"\$rc \$start \$end\" >'$work/prove$x.rc'" </dev/null >/dev/null 2>&1 &
  done
  echo "started"
  ;;
wait)
  max=${4:-540}
  t0=$(date +%s)
  jobs=$(cat "$work/jobs" 2>/dev/null || echo 1)
  all_done() {
    for ((j = 1; j <= jobs; j++)); do
      [[ -f $work/prove$([[ $j -gt 1 ]] && echo ".$j").rc ]] || return 1
    done
  }
  while ! all_done; do
    # Nothing to wait for when the start failed or the daemon died (device time is scarce).
    if [[ ! -f $work/cuzkd.pid ]] || ! kill -0 "$(cat "$work/cuzkd.pid")" 2>/dev/null; then
      echo "== cuzkd is not running; last log lines:"
      tail -n 5 "$work/cuzkd.log" 2>/dev/null
      exit 2
    fi
    if (($(date +%s) - t0 >= max)); then
      echo "== still running after ${max}s; last log lines:"
      tail -n 5 "$work/cuzkd.log"
      exit 3
    fi
    sleep 5
  done
  for f in "$work"/prove*.rc; do echo "== prove finished ($(basename "$f")): $(cat "$f")"; done
  ;;
report)
  out=${4:?OUT_DIR}
  mkdir -p "$out"
  CUZK_ADDR="unix://$sock" "$bin/cuzkctl" status >"$out/status.txt" 2>&1 || true
  vk=$(find "$work/state" -name "*-dev.vk" | head -n 1)
  for ((j = 1; j <= $(cat "$work/jobs" 2>/dev/null || echo 1); j++)); do
    x=$([[ $j -gt 1 ]] && echo ".$j")
    if [[ -f $work/prove$x.rc ]]; then
      read -r rc start end <"$work/prove$x.rc"
      echo "job $j: prove rc=$rc wall_s=$(awk "BEGIN{print $end - $start}")"
    fi
    if [[ -f $work/proof$x.bin ]]; then
      echo "job $j: proof bytes: $(stat -c %s "$work/proof$x.bin")"
      if [[ -n $vk ]]; then
        "$bin/cuzkctl" porep verify --c1 "$work/c1$x.json" --vk "$vk" --proof "$work/proof$x.bin" 2>&1 | tail -n 3
        echo "job $j: offline verify rc=${PIPESTATUS[0]}"
      fi
    fi
  done
  pid=$(cat "$work/cuzkd.pid" 2>/dev/null)
  [[ -n $pid ]] && grep -E 'VmHWM|VmRSS' "/proc/$pid/status" 2>/dev/null
  kill -TERM "$pid" 2>/dev/null
  sleep 2
  [[ -f $work/nvsmi.pid ]] && kill "$(cat "$work/nvsmi.pid")" 2>/dev/null
  cp "$work/cuzkd.log" "$work/rss.log" "$work"/prove*.json "$work"/prove*.err "$out/" 2>/dev/null
  [[ -f $work/gpu.log ]] && cp "$work/gpu.log" "$out/"
  df -h "$work" | tail -n 1
  ls -la "$work/state" "$work/state/params" 2>/dev/null | head -n 20
  ;;
*)
  echo "unknown phase $phase" >&2
  exit 2
  ;;
esac
