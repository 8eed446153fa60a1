#!/usr/bin/env bash
# The operator tools against a real cuzkd (CPU back end, 2^10 demo circuit):
#   cuzkctl watch --once       one frame: queues with their capacity, totals
#   cuzk-bench batch --json    3 proofs complete, every report field present
#   cuzk-bench batch (table)   the latency and stage columns
#   cuzkctl watch (not a TTY)  frames one after another, SIGINT ends it cleanly,
#                              recent events of a proof made meanwhile
#   unreachable daemon         exit status 3 from both (also when it stops under a
#                              running view); a bad --mix exits 2
# Usage: cuzk_watch_bench.sh CUZKD CUZKCTL CUZK_BENCH
set -u
CUZKD=$1
CUZKCTL=$2
BENCH=$3
STATE=$(mktemp -d /tmp/cuzk-watch-bench.XXXXXX)
SOCK=$STATE/cuzkd.sock
ADDR=unix://$SOCK
PID=
cleanup() {
  if [[ -n $PID ]] && kill -0 "$PID" 2>/dev/null; then kill -TERM "$PID"; wait "$PID"; fi
  rm -rf "$STATE"
}
trap cleanup EXIT

fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
# expect DESCRIPTION TEXT EXTENDED-REGEX
expect() { if grep -Eq -- "$3" <<<"$2"; then ok "$1"; else bad "$1: no match for /$3/ in:"; echo "$2"; fi; }

"$CUZKD" --listen "$ADDR" --state-dir "$STATE" >"$STATE/cuzkd.log" 2>&1 &
PID=$!
for _ in $(seq 100); do [[ -S $SOCK ]] && break; sleep 0.1; done
[[ -S $SOCK ]] || { echo "FAIL: cuzkd did not start"; cat "$STATE/cuzkd.log"; exit 1; }

# One frame of a fresh daemon.
out=$("$CUZKCTL" --addr "$ADDR" watch --once)
rc=$?
[[ $rc == 0 ]] && ok "watch --once exits 0" || bad "watch --once exited $rc"
expect "watch: title" "$out" "^cuzkd $ADDR +schema v1 +up "
expect "watch: queue summary with capacity" "$out" "^queues \(0 queued, capacity [1-9][0-9]*\)$"
for p in critical high normal low; do
  expect "watch: $p queue" "$out" "^  $p +0 / [1-9][0-9]* +\[\.{20}\]$"
done
expect "watch: totals" "$out" "^totals: done 0  failed 0  cancelled 0"
expect "watch: workers section" "$out" "^workers \([0-9]+ of [1-9][0-9]* busy\)$"
expect "watch: events section" "$out" "^recent events \(0 of 0"
if grep -q $'\x1b' <<<"$out"; then bad "watch --once wrote escape codes"; else ok "watch --once: no escape codes"; fi

# Three proofs, JSON report.
json=$("$BENCH" batch --addr "$ADDR" --count 3 --size 10 --json --no-progress)
rc=$?
[[ $rc == 0 ]] && ok "bench batch exits 0" || bad "bench batch exited $rc: $json"
expect "bench json: mode" "$json" '"mode":"batch"'
expect "bench json: 3 completed" "$json" '"completed":3[,}]'
expect "bench json: 0 failed" "$json" '"failed":0[,}]'
expect "bench json: class" "$json" '"class":"demo:10:default"'
expect "bench json: no failures" "$json" '"failures":\{\}'
for k in p50 p90 p99 max mean queue params synthesis prove verify total throughput_per_min wall_s; do
  expect "bench json: key $k" "$json" "\"$k\":[0-9]"
done
# The daemon's prove stage of a real proof takes time: its mean is not zero.
expect "bench json: prove stage measured" "$json" '"prove":([1-9][0-9]*(\.[0-9]+)?|0\.0*[1-9][0-9]*)'

# The human table, two in flight.
table=$("$BENCH" batch --addr "$ADDR" --count 2 --concurrency 2 --size 10 --no-progress)
rc=$?
[[ $rc == 0 ]] && ok "bench table exits 0" || bad "bench table exited $rc"
expect "table: summary" "$table" \
  "^cuzk-bench batch: 2 completed, 0 failed, concurrency 2, wall [0-9.]+ s, throughput [0-9.]+ proofs/min$"
expect "table: latency columns" "$table" "^class +ok +failed +proofs/min +p50 +p90 +p99 +max$"
expect "table: latency row" "$table" "^demo:10:default +2 +0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$"
expect "table: stage columns" "$table" "^class +queue +params +synthesis +prove +verify +total$"
expect "table: failures" "$table" "^  \(none\)$"

# The daemon saw all five; the finished jobs are listed.
out=$("$CUZKCTL" --addr "$ADDR" watch --once)
expect "watch after load: totals" "$out" "^totals: done 5  failed 0"
expect "watch after load: jobs" "$out" "^jobs \(0 unfinished, 5 finished"
expect "watch after load: a done job row" "$out" "groth16_demo +done +done +\[#####\] 5/5"

# Not a terminal: frames follow one another; SIGINT ends the view with status 0.
frames=$(timeout --preserve-status -s INT 1.6 "$CUZKCTL" --addr "$ADDR" watch --interval-ms 500)
rc=$?
[[ $rc == 0 ]] && ok "watch ends on SIGINT with 0" || bad "watch on SIGINT exited $rc"
n=$(grep -c "^cuzkd $ADDR" <<<"$frames")
((n >= 2)) && ok "watch printed $n frames" || bad "watch printed $n frames, want >= 2"

# The event ring: a view running while a proof is made shows its events.
timeout --preserve-status -s INT 4 "$CUZKCTL" --addr "$ADDR" watch --interval-ms 300 >"$STATE/frames.txt" &
WPID=$!
sleep 0.5
"$BENCH" single --addr "$ADDR" --size 10 --no-progress >/dev/null || bad "bench single failed"
wait "$WPID"
frames=$(cat "$STATE/frames.txt")
expect "watch: events of the proof made meanwhile" "$frames" "job 6 +job-6 +running/prove"
expect "watch: its completion event" "$frames" "job 6 +job-6 +done/done"

# Usage errors and an unreachable daemon.
"$BENCH" mixed --addr "$ADDR" --duration-s 1 --mix demo:10:urgent >/dev/null 2>&1
rc=$?
[[ $rc == 2 ]] && ok "bad --mix exits 2" || bad "bad --mix exited $rc"
"$BENCH" batch --addr "unix://$STATE/none.sock" --count 1 --size 10 --no-progress >/dev/null 2>&1
rc=$?
[[ $rc == 3 ]] && ok "bench: unreachable exits 3" || bad "bench unreachable exited $rc"
"$CUZKCTL" --addr "unix://$STATE/none.sock" watch --once >/dev/null 2>&1
rc=$?
[[ $rc == 3 ]] && ok "watch: unreachable exits 3" || bad "watch unreachable exited $rc"

# The daemon goes away under a running view: exit status 3, one error line.
"$CUZKCTL" --addr "$ADDR" watch --interval-ms 200 >/dev/null 2>"$STATE/watch.err" &
WPID=$!
sleep 0.5
kill -TERM "$PID"
wait "$PID"
PID=
wait "$WPID"
rc=$?
[[ $rc == 3 ]] && ok "watch: daemon gone exits 3" || bad "watch after the daemon stopped exited $rc"
expect "watch: daemon gone message" "$(cat "$STATE/watch.err")" "^error: unavailable: "

exit $fail
