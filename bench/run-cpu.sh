#!/usr/bin/env bash
# Runs the CPU benchmarks of bench/RESULTS.md on this machine and prints the
# raw outputs with the machine, date and commit (paste the numbers into
# RESULTS.md with their anchors). Needs a release build (scripts/build) and
# the npm oracles (scripts/deps). Takes ~10-20 minutes on 2 cores.
#   bench/run-cpu.sh [quick]     quick: skip the 2^20/2^24 sizes
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build/release/bench
QUICK=${1:-}
echo "machine: $(lscpu | sed -n 's/^Model name: *//p') x $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
echo "commit:  $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo '+dirty')"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
args=(--benchmark_min_time=1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true)
echo "== field"; "$B/bench_field" "${args[@]}"
echo "== curve and pairing"; "$B/bench_curve" "${args[@]}"
echo "== gadget witness generation (one core)"; "$B/bench_gadgets" "${args[@]}"
if [ -z "$QUICK" ]; then
  echo "== ntt"; "$B/bench_ntt" "${args[@]}"
  echo "== msm"; "$B/bench_msm" --benchmark_min_time=0.01 --benchmark_repetitions=3
  echo "== groth16 (demo circuit)"; "$B/bench_groth16" --benchmark_min_time=0.01 --benchmark_repetitions=3
else
  echo "== ntt"; "$B/bench_ntt" --benchmark_filter='16' "${args[@]}"
  echo "== msm"; "$B/bench_msm" --benchmark_filter='16' --benchmark_min_time=0.01
  echo "== groth16 (demo circuit)"; "$B/bench_groth16" --benchmark_filter='/16' --benchmark_min_time=0.01
fi
if [ -d "$ROOT/bench/js/node_modules" ] || (cd "$ROOT/bench/js" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "== ffjavascript NTT (snarkjs' engine), same machine"; node "$ROOT/bench/ffjs_ntt.mjs" 16 20
fi
echo "== Groth16 prove: cuzk vs snarkjs (2^16 domain)"; "$ROOT/bench/groth16-vs-snarkjs.sh" 65533 3
