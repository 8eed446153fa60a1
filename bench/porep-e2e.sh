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
#   bench/porep-e2e.sh warm   BIN_DIR WORK_DIR N [MAX_WAIT_S]  (after wait: N more jobs at once)
#   bench/porep-e2e.sh reload BIN_DIR WORK_DIR                 (restart cuzkd, preload the set cold)
# The warm phase measures the steady state with parameters resident: N jobs
# submitted together, then proofs per hour, seconds between proofs, GPU busy
# fraction (device time of the partitions over the wall time), the daemon's
# CPU seconds per partition (every thread: synthesis, staging, verification),
# its peak RSS, and the cold job's parameter read rate beside
# `dd iflag=direct` on the same file, all in WORK_DIR/warm-N.txt.
# The reload phase measures a cold parameter load: cuzkd restarted on the
# same state dir, `cuzkctl preload --srs porep-SIZE` timed, the daemon's
# "parameter file read" lines (rate per file) beside `dd iflag=direct` on
# the .params file just after, in WORK_DIR/reload.txt; a warm phase may
# follow on the restarted daemon.
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
  echo "$size $seed" >"$work/size"
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
  # One archive: a device run brings back at most 8 files.
  (cd "$work" && tar czf "$out/porep-e2e.tgz" cuzkd.log $(ls rss.log gpu.log prove*.json prove*.err warm-*.txt \
    winning*.json reload.txt cuzkd.first.log 2>/dev/null))
  cat "$work"/warm-*.txt 2>/dev/null
  df -h "$work" | tail -n 1
  ls -la "$work/state" "$work/state/params" 2>/dev/null | head -n 20
  ;;
warm)
  n=${4:?N jobs}
  max=${5:-540}
  read -r size seed <"$work/size"
  pid=$(cat "$work/cuzkd.pid")
  for ((j = 1; j <= n; j++)); do
    "$bin/cuzk-bench" gen-c1 --sector-size "$size" --seed "$((seed + 100 + j))" >"$work/c1.warm$j.json" || exit 1
  done
  gpus=$(grep 'msg="gpu back end"' "$work/cuzkd.log" | grep -vc 'critical_lane=yes')  # critical lanes prove no PoRep
  ((gpus == 0)) && gpus=1  # the CPU back end: one prover
  # E2E_WINNING_DELAY_S=S: a 32 GiB WinningPoSt (its parameters made warm
  # first) submitted S seconds after the warm jobs, its request-to-proof
  # wall time reported beside them; E2E_WINNING_COUNT=N (default 1) such
  # requests one after another, each E2E_WINNING_EVERY_S (default 3) after
  # the previous one's answer.
  winning_delay=${E2E_WINNING_DELAY_S:-}
  winning_count=${E2E_WINNING_COUNT:-1}
  winning_every=${E2E_WINNING_EVERY_S:-3}
  if [[ -n $winning_delay ]]; then
    "$bin/cuzkctl" post gen --kind winning --sector-size "$size" --sectors 1 --seed 1 --out "$work/winning" >/dev/null ||
      exit 1
    CUZK_ADDR="unix://$sock" "$bin/cuzkctl" prove --winning-post "$work/winning" --proof "$work/winning-cold.proof" \
      --json >"$work/winning-cold.json" 2>&1 || exit 1
  fi
  rm -f "$work"/prove.warm*.rc
  log_from=$(($(wc -l <"$work/cuzkd.log") + 1))
  cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  t0=$(date +%s.%N)
  for ((j = 1; j <= n; j++)); do
    (CUZK_ADDR="unix://$sock" "$bin/cuzkctl" prove --porep-c1 "$work/c1.warm$j.json" --proof "$work/proof.warm$j.bin" \
      --json >"$work/prove.warm$j.json" 2>"$work/prove.warm$j.err"
      echo "$? $(date +%s.%N)" >"$work/prove.warm$j.rc") &
  done
  winning_ms=""
  if [[ -n $winning_delay ]]; then
    sleep "$winning_delay"
    for ((w = 1; w <= winning_count; w++)); do
      ((w > 1)) && sleep "$winning_every"
      w0=$(date +%s.%N)
      if CUZK_ADDR="unix://$sock" "$bin/cuzkctl" prove --winning-post "$work/winning" \
        --proof "$work/winning-during-porep.proof" --json >"$work/winning-during-porep$w.json" 2>&1; then
        winning_ms+="$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", (b - a) * 1000 }') "
      else
        winning_ms+="failed "
      fi
    done
  fi
  t_wait=$(date +%s)
  while (($(ls "$work"/prove.warm*.rc 2>/dev/null | wc -l) < n)); do
    if (($(date +%s) - t_wait >= max)); then
      echo "== warm jobs still running after ${max}s"
      exit 3
    fi
    sleep 1
  done
  t1=$(date +%s.%N)
  cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  ticks=$(getconf CLK_TCK)
  failed=$(awk '$1 != 0' "$work"/prove.warm*.rc | wc -l)
  params=$(ls -S "$work"/state/params/*.params 2>/dev/null | head -n 1)  # the largest: the PoRep set
  dd_mib_s=""
  # E2E_WARM_DD=0 leaves the dd out (a 47 GB read: ~30-50 s of a device lease;
  # the reload phase measures it beside the cold load).
  if [[ -n $params && ${E2E_WARM_DD:-1} != 0 ]]; then
    dd_mib_s=$(dd if="$params" of=/dev/null bs=16M iflag=direct 2>&1 | awk '/copied/ { for (i = 1; i <= NF; i++)
      if ($i ~ /^s,?$/) secs = $(i - 1); print $1 / secs / 1048576; exit }')
  fi
  {
    echo "warm run: $n jobs of $size submitted together, $gpus prover(s), $failed failed"
    tail -n +"$log_from" "$work/cuzkd.log" | awk -v n="$n" -v t0="$t0" -v t1="$t1" -v gpus="$gpus" \
      -v cpu="$(awk -v a="$cpu0" -v b="$cpu1" -v t="$ticks" 'BEGIN { print (b - a) / t }')" '
      function field(name,   m) { if (match($0, name "=[0-9.]+")) return substr($0, RSTART + length(name) + 1, RLENGTH - length(name) - 1); return 0 }
      /msg="partition proved"/ && /critical lane|device=cpu/ { next }  # a WinningPoSt beside the jobs
      /msg="partition proved"/ { parts++; prove += field("prove_ms"); syn += field("synthesis_ms") }
      END {
        wall = t1 - t0
        printf "wall_s %.1f  proofs_per_hour %.1f  s_per_proof %.2f\n", wall, n * 3600 / wall, wall / n
        if (parts > 0) {
          printf "partitions %d  device_s %.1f  gpu_busy %.1f%%  prove_ms_mean %.1f\n", parts, prove / 1000,
            100 * prove / 1000 / (wall * gpus), prove / parts
          printf "synthesis_wall_ms_mean %.1f  daemon_cpu_s_per_partition %.2f\n", syn / parts, cpu / parts
        }
      }'
    grep -E "VmHWM" "/proc/$pid/status"
    # VmHWM counts the daemon's whole life (the cold load included): the
    # warm run's own peak is the largest 1 s VmRSS sample inside it.
    awk -v a="$t0" -v b="$t1" '$1 >= int(a) && $1 <= b + 1 {
        for (i = 2; i < NF; i++) if ($i == "VmRSS:" && $(i + 1) > m) m = $(i + 1) }
      END { printf "peak VmRSS during the warm run (1 s samples): %.1f GB\n", m * 1024 / 1e9 }' "$work/rss.log"
    grep -o 'msg="parameter file read".*' "$work/cuzkd.log" | grep -o 'path=[^ ]*\|mib_per_s=[0-9.]*' | paste -sd' '
    [[ -n $dd_mib_s ]] && echo "dd iflag=direct on $(basename "$params"): ${dd_mib_s} MiB/s"
    [[ -n $winning_delay ]] && echo "winning_post_32g during the warm jobs (submitted ${winning_delay}s after them): request to proof (ms): ${winning_ms}"
  } | tee "$work/warm-$n$([[ -f $work/warm-$n.txt ]] && echo .b).txt"
  ;;
reload)
  read -r size _ <"$work/size"
  pid=$(cat "$work/cuzkd.pid")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  [[ -f $work/nvsmi.pid ]] && kill "$(cat "$work/nvsmi.pid")" 2>/dev/null
  mv "$work/cuzkd.log" "$work/cuzkd.first.log"
  # E2E_RELOAD_TOML is appended to the config before the restart (a later
  # warm phase then runs under it, e.g. $'[porep]\nsynthesis_concurrency = 3').
  if [[ -n ${E2E_RELOAD_TOML:-} ]]; then printf '%s\n' "$E2E_RELOAD_TOML" >>"$work/cuzkd.toml"; fi
  start_cuzkd "$bin" "$work" "$sock" || exit 1
  t0=$(date +%s.%N)
  CUZK_ADDR="unix://$sock" "$bin/cuzkctl" preload --srs "porep-$size" >"$work/preload.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  params=$(ls -S "$work"/state/params/*.params 2>/dev/null | head -n 1)  # the largest: the PoRep set
  {
    echo "reload: cuzkctl preload --srs porep-$size rc=$rc wall_s $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
    grep -o 'msg="parameter file read".*' "$work/cuzkd.log" | grep -o 'path=[^ ]*\|bytes=[0-9]*\|mib_per_s=[0-9.]*\|wall_s=[0-9.]*' |
      paste -sd' '
    if [[ -n $params ]]; then
      echo "dd iflag=direct on $(basename "$params"): $(dd if="$params" of=/dev/null bs=16M iflag=direct 2>&1 | tail -n 1)"
    fi
    grep -E "VmHWM|VmRSS" "/proc/$(cat "$work/cuzkd.pid")/status"
  } | tee "$work/reload.txt"
  ;;
*)
  echo "unknown phase $phase" >&2
  exit 2
  ;;
esac
