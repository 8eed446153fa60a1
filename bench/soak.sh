#!/usr/bin/env bash
# Long-running health of one cuzkd: rounds of mixed jobs (demo circuits of
# several sizes and priorities, a 2 KiB WindowPoSt and WinningPoSt per round
# and a 2 KiB SnapDeals update every SOAK_SNAP_EVERY rounds (default 4, 0:
# none) through `cuzkctl prove`, PoRep C2 when a C1 is given) through ONE
# daemon, with cancels of queued and running jobs and clients that
# disconnect while awaiting mixed in; the daemon's RSS, open file
# descriptors, threads, the host-memory budget's reservation, resident SRS
# bytes and (with nvidia-smi) device memory sampled after every round.
# The report fits a least-squares line to the samples after warm-up (the
# first quarter of the rounds) and states each slope per 100 jobs, and
# checks that nothing was lost: every admitted job ended done, failed or
# cancelled, and no job failed (cancels are counted apart).
#
# Usage: bench/soak.sh BIN_DIR OUT_DIR [JOBS=500] [C1_JSON]
#   BIN_DIR holds cuzkd, cuzkctl and cuzk-bench; OUT_DIR gets samples.csv,
#   report.txt and the daemon's log. Exit 0: nothing lost and no failure.
set -uo pipefail
bin=${1:?BIN_DIR}
out=${2:?OUT_DIR}
jobs_target=${3:-500}
c1=${4:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/cuzk-soak.XXXXXX)
sock=$work/cuzkd.sock
addr=unix://$sock
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Results are kept result_ttl_s after a job ends (proof, inputs, vk): 30 s
# here, so that the retained results stop growing within the first rounds.
printf '[engine]\nqueue_capacity = 256\nresult_ttl_s = 30\n[metrics]\nlisten = "127.0.0.1:0"\n' >"$work/cuzkd.toml"
"$bin/cuzkd" --config "$work/cuzkd.toml" --listen "$addr" --state-dir "$work/state" >"$out/cuzkd.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || { echo "cuzkd did not start"; cat "$out/cuzkd.log"; exit 1; }
port=$(grep -o 'msg="metrics endpoint" address=127.0.0.1 port=[0-9]*' "$out/cuzkd.log" | grep -o '[0-9]*$')
scrape() { curl -s "http://127.0.0.1:$port/metrics"; }
metric() { awk -v k="$1" '$1 == k {print $2}' <<<"$2"; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); daemon pid $pid"
echo "round,jobs_finished,rss_bytes,fds,threads,budget_reserved_bytes,srs_host_bytes,srs_pinned_bytes,device_used_mib" \
  >"$out/samples.csv"

mix="demo:10:normal=4,demo:12:high=2,demo:8:low=2,demo:11:critical=1"
porep_args=()
if [[ -n $c1 ]]; then
  mix+=",porep=1"
  porep_args=(--porep-c1 "$c1")
fi
"$bin/cuzk-bench" single --addr "$addr" --size 10 --no-progress >/dev/null 2>&1  # parameters in place
# 2 KiB PoSt vanilla proofs (genuine sectors), proved once a round each.
for kind in window winning; do
  sectors=2
  [[ $kind == winning ]] && sectors=1
  "$bin/cuzkctl" post gen --kind $kind --sector-size 2KiB --sectors $sectors --seed 5 --out "$work/$kind" >/dev/null ||
    { echo "post gen $kind failed"; exit 1; }
done
# A genuine 2 KiB SnapDeals update of a natively sealed sector.
snap_every=${SOAK_SNAP_EVERY:-4}
snap_proofs=0
if (( snap_every > 0 )); then
  "$bin/cuzkctl" update gen --sector-size 2KiB --sealed --seed 3 --out "$work/snap" >/dev/null ||
    { echo "update gen failed"; exit 1; }
fi
post_failures=0
round=0
finished=0
cancels=0
disconnects=0
while (( finished < jobs_target )); do
  round=$((round + 1))
  # ~15 s of mixed load, 4 clients in flight.
  "$bin/cuzk-bench" mixed --addr "$addr" --duration-s 15 --concurrency 4 --mix "$mix" "${porep_args[@]}" \
    --no-progress --json --seed $((round * 1000)) >"$work/round.json" 2>>"$out/bench.err"
  # WindowPoSt and WinningPoSt through the daemon, verified by cuzkctl.
  for kind in window winning; do
    "$bin/cuzkctl" --addr "$addr" prove --$kind-post "$work/$kind" >/dev/null 2>>"$out/post.err" ||
      { post_failures=$((post_failures + 1)); echo "round $round: $kind-post failed" | tee -a "$out/report.txt"; }
  done
  if (( snap_every > 0 && (round - 1) % snap_every == 0 )); then
    snap_proofs=$((snap_proofs + 1))
    "$bin/cuzkctl" --addr "$addr" prove --snap-deals "$work/snap" >/dev/null 2>>"$out/post.err" ||
      { post_failures=$((post_failures + 1)); echo "round $round: snap-deals failed" | tee -a "$out/report.txt"; }
  fi
  # Cancels: jobs submitted behind a queue of others, then cancelled (queued
  # or running by then).
  for i in 1 2 3; do
    id=$("$bin/cuzkctl" --addr "$addr" submit --circuit demo --size 12 --request-id "soak-c-$round-$i" 2>/dev/null |
      grep -o '[0-9][0-9]*' | head -1)
    [[ -n $id ]] && "$bin/cuzkctl" --addr "$addr" cancel --job "$id" >/dev/null 2>&1 && cancels=$((cancels + 1))
  done
  # A client that disconnects while awaiting: its job must still finish.
  "$bin/cuzkctl" --addr "$addr" submit --circuit demo --size 12 --request-id "soak-d-$round" >/dev/null 2>&1
  (timeout -s INT 0.3 "$bin/cuzkctl" --addr "$addr" await --request-id "soak-d-$round") >/dev/null 2>&1
  disconnects=$((disconnects + 1))
  "$bin/cuzkctl" --addr "$addr" await --request-id "soak-d-$round" --timeout-ms 600000 >/dev/null 2>&1 ||
    echo "round $round: the disconnected client's job did not finish" | tee -a "$out/report.txt"

  m=$(scrape)
  done_n=$(metric 'cuzk_jobs_finished_total{outcome="done"}' "$m")
  failed_n=$(metric 'cuzk_jobs_finished_total{outcome="failed"}' "$m")
  cancelled_n=$(metric 'cuzk_jobs_finished_total{outcome="cancelled"}' "$m")
  finished=$((done_n + failed_n + cancelled_n))
  rss=$(awk '/VmRSS/ {print $2 * 1024}' /proc/$pid/status)
  fds=$(ls /proc/$pid/fd | wc -l)
  threads=$(awk '/Threads/ {print $2}' /proc/$pid/status)
  reserved=$(metric 'cuzk_memory_budget_bytes{kind="reserved"}' "$m")
  srs_host=$(metric 'cuzk_srs_resident_bytes{tier="host"}' "$m")
  srs_pinned=$(metric 'cuzk_srs_resident_bytes{tier="pinned"}' "$m")
  dev=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | awk '{s += $1} END {print s + 0}')
  echo "$round,$finished,$rss,$fds,$threads,$reserved,$srs_host,$srs_pinned,${dev:-0}" >>"$out/samples.csv"
  printf 'round %3d: %5d jobs finished, rss %6.1f MiB, fds %4d, threads %3d\n' "$round" "$finished" \
    "$(awk -v b="$rss" 'BEGIN {print b / 1048576}')" "$fds" "$threads"
done

m=$(scrape)
submitted=$(metric cuzk_jobs_submitted_total "$m")
dedup=$(metric cuzk_jobs_deduplicated_total "$m")
failed_n=$(metric 'cuzk_jobs_finished_total{outcome="failed"}' "$m")
queued=$(scrape | awk '$1 ~ /^cuzk_queue_depth[{]/ {s += $2} END {print s + 0}')
{
  echo "soak: $round rounds, $finished jobs finished ($submitted admitted, $dedup deduplicated), $cancels cancels, $disconnects disconnected awaits, $((2 * round)) PoSt and $snap_proofs SnapDeals proofs ($post_failures not verified), $failed_n failed"
  # Least-squares slope per 100 finished jobs of each column after the first quarter of the rounds.
  awk -F, -v skip=$((round / 4)) 'NR > 1 && NR - 1 > skip {
      n++; x = $2; sx += x; sxx += x * x
      for (c = 3; c <= 9; c++) { y[c] = $c; sy[c] += $c; sxy[c] += x * $c; if (n == 1) first[c] = $c; last[c] = $c }
    } END {
      split("rss_bytes fds threads budget_reserved_bytes srs_host_bytes srs_pinned_bytes device_used_mib", name, " ")
      d = n * sxx - sx * sx
      for (c = 3; c <= 9; c++) {
        slope = d > 0 ? (n * sxy[c] - sx * sy[c]) / d * 100 : 0
        printf "  %-22s first %14.0f  last %14.0f  slope %+12.1f per 100 jobs\n", name[c - 2], first[c], last[c], slope
      }
    }' "$out/samples.csv"
} | tee -a "$out/report.txt"
lost=0
(( failed_n == 0 )) || { echo "FAIL: $failed_n jobs failed" | tee -a "$out/report.txt"; lost=1; }
(( post_failures == 0 )) || { echo "FAIL: $post_failures PoSt or SnapDeals proofs failed" | tee -a "$out/report.txt"; lost=1; }
(( ${queued:-0} == 0 )) || { echo "FAIL: $queued jobs still queued at the end" | tee -a "$out/report.txt"; lost=1; }
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
(( rc == 0 )) || { echo "FAIL: cuzkd exited $rc after SIGTERM" | tee -a "$out/report.txt"; lost=1; }
exit $lost
