#!/usr/bin/env bash
# Exit statuses of the offline tools on missing, malformed and hostile input
# (README: 0 ok, 1 invalid proof / typed failure, 2 usage or malformed input),
# and `cuzkctl prove` refusing to write a proof that its own key rejects.
# Small inputs only (2 KiB C1, the circom test circuit, a 2^4 demo): seconds.
# Usage: cuzkctl_input_errors.sh CUZKCTL TESTS_DATA_DIR
set -u
CUZKCTL=$1
DATA=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

expect() {  # expect STATUS DESCRIPTION COMMAND...
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what: exit $got, want $want"
    sed 's/^/  | /' "$tmp/err" | head -5
    fail=1
  else
    echo "ok: $what (exit $got)"
  fi
}
need() { "$@" >"$tmp/setup.log" 2>&1 || { echo "FAIL: setup step: $*"; cat "$tmp/setup.log"; exit 1; }; }

# ---- params inspect: missing file, directory, empty file
expect 2 "params inspect of a missing file" "$CUZKCTL" params inspect "$tmp/missing.params"
expect 2 "params inspect of a directory" "$CUZKCTL" params inspect "$tmp"
: >"$tmp/empty.params"
expect 2 "params inspect of an empty file" "$CUZKCTL" params inspect "$tmp/empty.params"

# ---- porep verify: proof bytes that do not decode are malformed (2), as for `cuzkctl verify`
need "$CUZKCTL" porep make-c1 --out "$tmp/c1.json"
need "$CUZKCTL" setup --circuit demo --size 4 --params "$tmp/demo.params" --vk "$tmp/demo.vk" --gpu off
head -c 192 /dev/zero >"$tmp/zero.proof"
expect 2 "porep verify, proof of zero bytes" \
  "$CUZKCTL" porep verify --c1 "$tmp/c1.json" --proof "$tmp/zero.proof" --vk "$tmp/demo.vk"
head -c 100 /dev/zero >"$tmp/short.proof"
expect 2 "porep verify, 100-byte proof" \
  "$CUZKCTL" porep verify --c1 "$tmp/c1.json" --proof "$tmp/short.proof" --vk "$tmp/demo.vk"

# ---- hostile C1 JSON: out-of-range number, trailing data, deep nesting
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
s = open(d + "/c1.json").read()
at = s.index('"seed":[') + 8
end = s.index(',', at)
open(d + "/c1_1e400.json", "w").write(s[:at] + "1e400" + s[end:])
open(d + "/c1_trailing.json", "wb").write(s.encode() + b"\0{}")
# One byte of the seed nested 10^6 deep (a recursive dump in the error message overflowed the stack).
open(d + "/c1_deep.json", "w").write(s[:at] + "[" * 1000000 + "]" * 1000000 + s[end:])
PY
for c in 1e400 trailing deep; do
  expect 2 "porep verify, C1 $c" "$CUZKCTL" porep verify --c1 "$tmp/c1_$c.json" --proof "$tmp/zero.proof" --vk "$tmp/demo.vk"
done

# ---- prove checks its proof before writing it: zkey path
need "$CUZKCTL" setup --r1cs "$DATA/circom/small.r1cs" --zkey "$tmp/small.zkey" --gpu off
expect 0 "prove with a genuine zkey" \
  "$CUZKCTL" prove --zkey "$tmp/small.zkey" --wtns "$DATA/circom/small.wtns" --proof "$tmp/zkey.proof"
python3 - "$tmp/small.zkey" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
at = 12
while True:  # sections {u32 type, u64 size, payload}; 4 = coefficients {u32 n, {u32 m, row, wire, value[32]}}
    t, size = struct.unpack_from("<IQ", b, at)
    if t == 4:
        b[at + 12 + 4 + 12] ^= 1  # the first coefficient's value, lowest bit
        break
    at += 12 + size
open(p, "wb").write(b)
PY
rm -f "$tmp/bad.proof"
expect 1 "prove with a zkey whose coefficient changed" \
  "$CUZKCTL" prove --zkey "$tmp/small.zkey" --wtns "$DATA/circom/small.wtns" --proof "$tmp/bad.proof"
[[ -e "$tmp/bad.proof" ]] && { echo "FAIL: a proof that does not verify was written"; fail=1; }

# ---- prove checks its proof before writing it: bellperson params path
need "$CUZKCTL" setup --r1cs "$DATA/circom/small.r1cs" --params "$tmp/small.params" --vk "$tmp/small.vk" --gpu off
expect 0 "prove with genuine params" \
  "$CUZKCTL" prove --params "$tmp/small.params" --r1cs "$DATA/circom/small.r1cs" --wtns "$DATA/circom/small.wtns"
python3 - "$tmp/small.params" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n_ic = struct.unpack_from(">I", b, 864)[0]
h = 868 + 96 * n_ic + 4  # the vk, then |h| and the h points (uncompressed G1, 96 bytes)
b[h:h + 96], b[h + 96:h + 192] = b[h + 96:h + 192], b[h:h + 96]  # two valid points swapped
open(p, "wb").write(b)
PY
expect 1 "prove with params whose h points are swapped" \
  "$CUZKCTL" prove --params "$tmp/small.params" --r1cs "$DATA/circom/small.r1cs" --wtns "$DATA/circom/small.wtns" \
  --proof "$tmp/bad2.proof"
[[ -e "$tmp/bad2.proof" ]] && { echo "FAIL: a proof that does not verify was written"; fail=1; }

# ---- trailing bytes after a bellperson vk / params file, a proof file
cp "$tmp/demo.vk" "$tmp/trailing.vk" && printf 'x' >>"$tmp/trailing.vk"
expect 2 "params inspect, vk with a trailing byte" "$CUZKCTL" params inspect "$tmp/trailing.vk"
cp "$tmp/demo.params" "$tmp/trailing.params" && printf 'x' >>"$tmp/trailing.params"
expect 2 "params inspect, params with a trailing byte" "$CUZKCTL" params inspect "$tmp/trailing.params"
# ---- the sector-size and 32-byte hex syntax every offline group shares
for group in porep update; do
  for size in foo 2KB 3KiB; do
    expect 2 "$group setup --sector-size $size" "$CUZKCTL" $group setup --sector-size $size --out-dir "$tmp/p"
  done
done
expect 2 "post gen --sector-size 2KB" "$CUZKCTL" post gen --kind window --sector-size 2KB --out "$tmp/g"
expect 2 "post gen, 31-byte randomness" "$CUZKCTL" post gen --kind window --sector-size 2KiB \
  --randomness "0x$(printf '%062d' 0)" --out "$tmp/g"
expect 2 "post gen, randomness not hex" "$CUZKCTL" post gen --kind window --sector-size 2KiB \
  --randomness "$(printf 'g%063d' 0)" --out "$tmp/g"
exit $fail
