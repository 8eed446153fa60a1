#!/usr/bin/env bash
# The Prometheus endpoint of a real cuzkd ([metrics] listen, CPU back end):
# curl gets the same exposition text as `cuzkctl metrics`, with a proof made
# meanwhile counted; other paths answer 404; a non-loopback address without
# allow_non_loopback stops the daemon at start (exit 2); every series the
# Grafana dashboard (systemd/cuzkd-grafana.json) queries is in the text.
# Usage: cuzkd_metrics_http.sh CUZKD CUZKCTL DASHBOARD_JSON
set -u
CUZKD=$1
CUZKCTL=$2
DASHBOARD=$3
STATE=$(mktemp -d /tmp/cuzk-metrics.XXXXXX)
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
command -v curl >/dev/null || { echo "FAIL: curl is not installed (scripts/deps installs it)"; exit 1; }

printf '[metrics]\nlisten = "127.0.0.1:0"\n' >"$STATE/cuzkd.toml"
"$CUZKD" --config "$STATE/cuzkd.toml" --listen "$ADDR" --state-dir "$STATE/state" >"$STATE/cuzkd.log" 2>&1 &
PID=$!
for _ in $(seq 300); do [[ -S $SOCK ]] && break; sleep 0.1; done
[[ -S $SOCK ]] || { echo "FAIL: cuzkd did not start"; cat "$STATE/cuzkd.log"; exit 1; }
PORT=$(grep -o 'msg="metrics endpoint" address=127.0.0.1 port=[0-9]*' "$STATE/cuzkd.log" | grep -o '[0-9]*$')
[[ -n $PORT ]] && ok "metrics endpoint logged its port ($PORT)" || { bad "no metrics endpoint line"; cat "$STATE/cuzkd.log"; exit 1; }

"$CUZKCTL" --addr "$ADDR" prove --circuit demo --size 8 >/dev/null 2>&1 && ok "one demo proof" || bad "demo proof failed"
echo '{"not": "a C1"}' >"$STATE/bad-c1.json"
"$CUZKCTL" --addr "$ADDR" prove --porep-c1 "$STATE/bad-c1.json" >/dev/null 2>&1 && bad "a bad C1 was proved" || ok "a bad C1 fails"
headers=$(curl -sS -D - -o "$STATE/scrape.txt" "http://127.0.0.1:$PORT/metrics")
rc=$?
[[ $rc == 0 ]] && ok "curl /metrics exits 0" || bad "curl /metrics exited $rc"
grep -q '^HTTP/1.1 200 OK' <<<"$headers" && ok "200 OK" || bad "status: $headers"
grep -qi '^Content-Type: text/plain; version=0.0.4' <<<"$headers" && ok "exposition content type" || bad "content type: $headers"
grep -q '^cuzk_jobs_finished_total{outcome="done"} 1$' "$STATE/scrape.txt" && ok "the proof is counted" ||
  { bad "cuzk_jobs_finished_total done 1 missing:"; head -40 "$STATE/scrape.txt"; }
grep -q '^cuzk_proofs_total{kind="groth16_demo"} 1$' "$STATE/scrape.txt" && ok "proofs by kind" ||
  bad "cuzk_proofs_total groth16_demo 1 missing"
grep -q '^cuzk_job_failures_total{kind="invalid_input"} 1$' "$STATE/scrape.txt" && ok "failures by error kind" ||
  { bad "cuzk_job_failures_total invalid_input 1 missing:"; grep -E 'failures|rejected' "$STATE/scrape.txt"; }
# The same series as `cuzkctl metrics` (values such as uptime move between the two reads).
"$CUZKCTL" --addr "$ADDR" metrics >"$STATE/ctl.txt" 2>&1 || bad "cuzkctl metrics failed"
if diff <(grep -v '^#' "$STATE/scrape.txt" | sed 's/ .*//' | sort) <(grep -v '^#' "$STATE/ctl.txt" | sed 's/ .*//' | sort) >/dev/null; then
  ok "same series as cuzkctl metrics"
else
  bad "series differ from cuzkctl metrics"
fi
missing=
for series in $(grep -o 'cuzk_[a-z_]*' "$DASHBOARD" | sort -u); do
  grep -q "^$series[{ ]" "$STATE/scrape.txt" || missing+=" $series"
done
[[ -z $missing ]] && ok "every series of the dashboard is served" || bad "dashboard queries series not served:$missing"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")
[[ $code == 404 ]] && ok "/ answers 404" || bad "/ answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/metrics")
[[ $code == 405 ]] && ok "POST answers 405" || bad "POST answered $code"
kill -TERM "$PID"; wait "$PID"; rc=$?; PID=
[[ $rc == 0 ]] && ok "drains and exits 0" || bad "exit $rc after SIGTERM"

printf '[metrics]\nlisten = "0.0.0.0:0"\n' >"$STATE/open.toml"
"$CUZKD" --config "$STATE/open.toml" --listen "unix://$STATE/b.sock" --state-dir "$STATE/b" >"$STATE/b.log" 2>&1
rc=$?
[[ $rc == 2 ]] && grep -q 'allow_non_loopback' "$STATE/b.log" && ok "non-loopback address refused (exit 2)" ||
  { bad "non-loopback address: exit $rc"; cat "$STATE/b.log"; }
[[ $fail == 0 ]] && echo "cuzkd_metrics_http: all checks passed"
exit $fail
