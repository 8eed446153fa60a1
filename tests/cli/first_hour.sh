#!/usr/bin/env bash
# The first hour of a new user, as the README promises it:
#   - every error of cuzkctl, cuzk-bench and cuzkd's command line is one line `error: <kind>: <message>`
#     with a snake_case kind, and the exit status of cli/cli_contract.hpp
#     (1 typed failure / invalid proof, 2 usage or malformed input, 3 daemon
#     unreachable): bad usage, a missing file, an unreachable daemon (its
#     address named, with --addr / CUZK_ADDR), global options before or after
#     the subcommand in both binaries;
#   - offline and daemon proving kept apart: `prove` refuses options of both
#     sides; `demo prove` proves offline (parameters generated when absent),
#     `cuzkctl verify` accepts the proof, a tampered proof is refused;
#   - against a real cuzkd (CPU, 2^8 demo): `prove --circuit demo` prints one
#     line per proof even into a pipe; `watch --once` afterwards lists the
#     daemon's recent events of those jobs; cuzk-bench against a daemon that
#     is down prints one error line, no report, and exits 3.
# Usage: first_hour.sh CUZKD CUZKCTL CUZK_BENCH
set -u
CUZKD=$1
CTL=$2
BENCH=$3
tmp=$(mktemp -d /tmp/cuzk-first-hour.XXXXXX)
PID=
cleanup() {
  if [[ -n $PID ]] && kill -0 "$PID" 2>/dev/null; then kill -TERM "$PID"; wait "$PID"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

# run_err WANT_STATUS KIND DESCRIPTION COMMAND...: the command exits WANT_STATUS
# and its stderr holds exactly one error line, its last, `error: KIND: ...`
# (progress lines may come before it).
run_err() {
  local want=$1 kind=$2 what=$3
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$? errors
  errors=$(grep -c "^error:" "$tmp/err")
  if [[ $got != "$want" ]]; then
    bad "$what: exit $got, want $want"
    sed 's/^/  | /' "$tmp/err" | head -5
  elif [[ $errors != 1 ]] || ! tail -n 1 "$tmp/err" | grep -Eq "^error: $kind: .+"; then
    bad "$what: stderr does not end in the one line 'error: $kind: ...':"
    sed 's/^/  | /' "$tmp/err" | head -5
  else
    ok "$what (exit $got, $(tail -n 1 "$tmp/err" | cut -c1-100))"
  fi
}

NOWHERE=unix://$tmp/nobody.sock

# ---- cuzkctl: usage, files, daemon unreachable
run_err 2 invalid_argument "cuzkctl without a command" "$CTL"
run_err 2 invalid_argument "cuzkctl unknown option" "$CTL" status --bogus
run_err 2 invalid_argument "cuzkctl unknown command" "$CTL" frobnicate
run_err 2 invalid_argument "cuzkctl bad option value" "$CTL" prove --circuit demo --size 8 --count 0
run_err 2 not_found "cuzkctl params inspect, missing file" "$CTL" params inspect "$tmp/nope.params"
run_err 2 not_found "cuzkctl verify, missing file" "$CTL" verify --vk "$tmp/nope.vk" --proof "$tmp/nope.bin" --public "$tmp/nope.json"
run_err 3 unavailable "cuzkctl status, daemon unreachable (--addr first)" "$CTL" --addr "$NOWHERE" status
run_err 3 unavailable "cuzkctl status, daemon unreachable (--addr after)" "$CTL" status --addr "$NOWHERE"
run_err 3 unavailable "cuzkctl, daemon unreachable (CUZK_ADDR)" env CUZK_ADDR="$NOWHERE" "$CTL" status
grep -q "$NOWHERE" "$tmp/err" && grep -q -- "--addr" "$tmp/err" && grep -q CUZK_ADDR "$tmp/err" &&
  ok "unreachable: names the address, --addr and CUZK_ADDR" || bad "unreachable message: $(cat "$tmp/err")"
run_err 3 unavailable "cuzkctl watch --once, daemon unreachable" "$CTL" --addr "$NOWHERE" watch --once
run_err 3 unavailable "cuzkctl preload, daemon unreachable" "$CTL" --addr "$NOWHERE" preload --srs demo-8

# ---- cuzkd: command line and config
run_err 2 invalid_argument "cuzkd unknown option" "$CUZKD" --bogus
run_err 2 not_found "cuzkd, missing config file" "$CUZKD" --config "$tmp/nope.toml"
printf '[engine]\nqueue_capacty = 3\n' >"$tmp/bad.toml"
run_err 2 invalid_input "cuzkd, config with an unknown key" "$CUZKD" --config "$tmp/bad.toml"
grep -q "engine.queue_capacty" "$tmp/err" && ok "cuzkd config error names the key" || bad "cuzkd config error: $(cat "$tmp/err")"

# ---- offline and daemon proving are apart
run_err 2 invalid_argument "prove with --params only" "$CTL" prove --params demo.params --proof p.bin
run_err 2 invalid_argument "prove --circuit with offline --params" \
  "$CTL" --addr "$NOWHERE" prove --circuit demo --size 8 --params demo.params --proof p.bin
run_err 2 invalid_argument "prove --size without --circuit" "$CTL" prove --size 8
run_err 2 invalid_argument "prove --circuit and --porep-c1" "$CTL" prove --circuit demo --size 8 --porep-c1 c1.json
run_err 2 invalid_argument "demo prove without --size" "$CTL" demo prove --params demo.params --proof p.bin
"$CTL" --help | grep -Eq "^ +demo +.*offline" && ok "help: demo is offline" || bad "help does not say demo is offline"
"$CTL" prove --help | grep -q "daemon" && "$CTL" prove --help | grep -q "offline" &&
  ok "prove --help says which options are offline and which go to the daemon" || bad "prove --help"
"$CTL" --help | grep -Eq "^ +(prove-remote|preload-srs|evict-srs) " && bad "help still lists an alias" || ok "help: no aliases"

# ---- offline demo proof: generated parameters, verified before written, verify accepts it
out=$("$CTL" demo prove --size 8 --params demo.params --proof p.bin --public public.json 2>"$tmp/demo.err")
rc=$?
[[ $rc == 0 && -s p.bin && -s demo.vk && -s public.json ]] && ok "demo prove: generated parameters, wrote the proof" ||
  { bad "demo prove exited $rc"; cat "$tmp/demo.err"; }
grep -q "generated" <<<"$out" && ok "demo prove says the parameters were generated" || bad "demo prove output: $out"
out=$("$CTL" demo prove --size 8 --params demo.params --proof p2.bin 2>/dev/null)
grep -q "read from" <<<"$out" && ok "demo prove, second time: parameters read" || bad "second demo prove: $out"
v=$("$CTL" verify --vk demo.vk --proof p.bin --public public.json)
[[ $? == 0 && $v == valid ]] && ok "verify accepts the offline demo proof" || bad "verify: $v"
python3 -c "import json; x = json.load(open('public.json')); x[0] = str(int(x[0]) + 1); json.dump(x, open('wrong.json', 'w'))"
run_err 1 invalid_proof "verify with a wrong public input" "$CTL" verify --vk demo.vk --proof p.bin --public wrong.json
run_err 2 invalid_input "demo prove with parameters of another size" "$CTL" demo prove --size 9 --params demo.params --proof p3.bin
[[ -e p3.bin ]] && bad "a proof was written with the wrong parameters" || ok "no proof written with the wrong parameters"

# ---- cuzk-bench: usage, files, daemon unreachable, options where cuzkctl takes them
run_err 2 invalid_argument "cuzk-bench without a mode" "$BENCH"
run_err 2 invalid_argument "cuzk-bench unknown option" "$BENCH" single --size 8 --bogus
run_err 2 invalid_argument "cuzk-bench bad --mix" "$BENCH" --addr "$NOWHERE" mixed --duration-s 1 --mix demo:8:urgent
run_err 2 not_found "cuzk-bench missing --porep-c1 file" "$BENCH" --addr "$NOWHERE" single --porep-c1 "$tmp/nope.json"
run_err 3 unavailable "cuzk-bench, --addr before the mode" "$BENCH" --addr "$NOWHERE" single --size 8 --no-progress
[[ ! -s $tmp/out ]] && ok "cuzk-bench unreachable: no report" || { bad "cuzk-bench printed a report:"; cat "$tmp/out"; }
run_err 3 unavailable "cuzk-bench, --addr after the mode, --json" "$BENCH" batch --count 2 --size 8 --addr "$NOWHERE" --json --no-progress
[[ ! -s $tmp/out ]] && ok "cuzk-bench --json unreachable: no report" || { bad "cuzk-bench --json printed:"; cat "$tmp/out"; }

# ---- a real daemon
SOCK=$tmp/cuzkd.sock
ADDR=unix://$SOCK
"$CUZKD" --listen "$ADDR" --state-dir "$tmp/state" >"$tmp/cuzkd.log" 2>&1 &
PID=$!
for _ in $(seq 300); do [[ -S $SOCK ]] && break; sleep 0.1; done
[[ -S $SOCK ]] || { echo "FAIL: cuzkd did not start"; cat "$tmp/cuzkd.log"; exit 1; }

# Two proofs through the daemon, stdout a pipe: one line per proof, then the summary.
"$CTL" --addr "$ADDR" prove --circuit demo --size 8 --count 2 --request-id fh >"$tmp/prove.out" 2>"$tmp/prove.err"
rc=$?
[[ $rc == 0 ]] && ok "prove --circuit demo through the daemon" || { bad "prove through the daemon exited $rc"; cat "$tmp/prove.err"; }
[[ $(grep -c "proof verified locally" "$tmp/prove.out") == 2 ]] && ok "one line per proof" ||
  { bad "prove output:"; cat "$tmp/prove.out"; }
run_err 1 invalid_input "daemon refuses a size it does not serve" "$CTL" --addr "$ADDR" submit --size 99
run_err 1 not_found "daemon: no such job" "$CTL" --addr "$ADDR" cancel --job 999999

# watch --once started after the jobs finished: the daemon's recent events.
w=$("$CTL" --addr "$ADDR" watch --once)
grep -Eq "job [0-9]+ +fh-0 +done/done" <<<"$w" && grep -Eq "job [0-9]+ +fh-1 +done/done" <<<"$w" &&
  ok "watch --once lists the finished jobs' events" || { bad "watch --once after the jobs:"; echo "$w"; }
grep -q "(none yet)" <<<"$w" && bad "watch --once: (none yet) after jobs finished" || ok "watch --once: events not empty"

# preload says what happened: generated (no file), already resident, read
# back from the file the daemon wrote after an evict.
p1=$("$CTL" --addr "$ADDR" preload --srs demo-7 2>/dev/null)
grep -q "DEVELOPMENT parameters generated" <<<"$p1" && ok "preload: generated" || bad "preload, first: $p1"
p2=$("$CTL" --addr "$ADDR" preload --srs demo-7 2>/dev/null)
grep -q "already resident" <<<"$p2" && ok "preload: already resident" || bad "preload, second: $p2"
"$CTL" --addr "$ADDR" evict --srs demo-7 >/dev/null 2>&1
p3=$("$CTL" --addr "$ADDR" --json preload --srs demo-7 2>/dev/null)
python3 -c "import json, sys; r = json.loads(sys.argv[1]); sys.exit(0 if not r['generated'] and not r['already_loaded'] else 1)" "$p3" &&
  ok "preload after evict: read from its file (--json)" || bad "preload after evict: $p3"

# The daemon stops: cuzk-bench gives one line and 3, no report.
kill -TERM "$PID"
wait "$PID"
PID=
run_err 3 unavailable "cuzk-bench against a stopped daemon" "$BENCH" --addr "$ADDR" batch --count 2 --size 8 --no-progress
[[ ! -s $tmp/out ]] && ok "cuzk-bench, stopped daemon: no report" || { bad "cuzk-bench printed:"; cat "$tmp/out"; }
exit $fail
