#!/usr/bin/env bash
# Groth16 interoperability with snarkjs (npm, pinned in package-lock.json), on
# circom 2 circuits compiled for BLS12-381, in three directions:
#   1. snarkjs zkey + witness -> cuzkctl prove --zkey -> snarkjs verify accepts
#   2. cuzkctl setup + prove (bellperson format) -> export-vk -> snarkjs accepts
#   3. snarkjs prove -> cuzkctl verify accepts
# and tampered public inputs or proofs are rejected by both verifiers.
# Exit 77 (ctest SKIP) only when the npm oracles are not installed.
set -euo pipefail
CUZKCTL=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PTAU=${CUZK_PTAU:-$HERE/../data/snarkjs/pot12_final.ptau}
NM=$HERE/node_modules
if [ ! -x "$NM/.bin/snarkjs" ] || [ ! -f "$NM/circom2/cli.js" ]; then
  echo "SKIPPED: npm oracles not installed (run scripts/deps); snarkjs interop NOT checked"
  exit 77
fi
[ -f "$PTAU" ] || { echo "FAIL: missing powers of tau $PTAU"; exit 1; }
S="node $NM/snarkjs/build/cli.cjs"
[ -f "$NM/snarkjs/build/cli.cjs" ] || S=$NM/.bin/snarkjs
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail=0
check() {  # check <description> <expected rc> <command...>
  local what=$1 want=$2; shift 2
  set +e; "$@" >"$WORK/out.txt" 2>&1; local rc=$?; set -e
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $what (exit $rc, expected $want)"; sed 's/^/    /' "$WORK/out.txt"; fail=1
  else
    echo "ok:   $what"
  fi
}
for c in mix hashes cube; do
  d=$WORK/$c; mkdir -p "$d"; cp "$HERE/circuits/$c.circom" "$d/"; cp "$HERE/circuits/$c.input.json" "$d/input.json"
  # circom2 runs in a WASI sandbox: run it where node_modules is a real folder.
  (cd "$HERE" && node "$NM/circom2/cli.js" "circuits/$c.circom" --r1cs --wasm --prime bls12381 -l node_modules -o "$d" >/dev/null)
  $S wtns calculate "$d/${c}_js/$c.wasm" "$d/input.json" "$d/w.wtns" >/dev/null
  $S groth16 setup "$d/$c.r1cs" "$PTAU" "$d/c0.zkey" >/dev/null
  $S zkey contribute "$d/c0.zkey" "$d/c.zkey" --name=cuzk-test -e="cuzk interop $RANDOM" >/dev/null
  $S zkey export verificationkey "$d/c.zkey" "$d/vk.json" >/dev/null
  echo "== $c: $(grep -c . "$d/$c.circom") lines of circom"

  # 1. zkey -> our prover -> snarkjs verifies.
  check "$c: cuzkctl prove --zkey" 0 "$CUZKCTL" prove --zkey "$d/c.zkey" --wtns "$d/w.wtns" \
    --snarkjs-proof "$d/p1.json" --snarkjs-public "$d/pub1.json"
  check "$c: snarkjs accepts our zkey proof" 0 $S groth16 verify "$d/vk.json" "$d/pub1.json" "$d/p1.json"

  # 2. our setup + prover -> exported vk -> snarkjs verifies.
  check "$c: cuzkctl setup" 0 "$CUZKCTL" setup --r1cs "$d/$c.r1cs" --params "$d/c.params" --vk "$d/c.vk"
  check "$c: cuzkctl prove --params" 0 "$CUZKCTL" prove --params "$d/c.params" --r1cs "$d/$c.r1cs" \
    --wtns "$d/w.wtns" --proof "$d/p2.bin" --snarkjs-proof "$d/p2.json" --snarkjs-public "$d/pub2.json"
  check "$c: cuzkctl export-vk" 0 "$CUZKCTL" export-vk --vk "$d/c.vk" --snarkjs "$d/vk2.json"
  check "$c: snarkjs accepts our bellperson-format proof" 0 $S groth16 verify "$d/vk2.json" "$d/pub2.json" "$d/p2.json"
  check "$c: cuzkctl verifies its own proof" 0 "$CUZKCTL" verify --vk "$d/c.vk" --proof "$d/p2.bin" --public "$d/pub2.json"

  # 2b. our zkey writer -> snarkjs proves and verifies with it; so do we.
  check "$c: cuzkctl setup --zkey" 0 "$CUZKCTL" setup --r1cs "$d/$c.r1cs" --zkey "$d/our.zkey"
  check "$c: snarkjs exports our zkey's vk" 0 $S zkey export verificationkey "$d/our.zkey" "$d/ourvk.json"
  check "$c: snarkjs proves with our zkey" 0 $S groth16 prove "$d/our.zkey" "$d/w.wtns" "$d/p4.json" "$d/pub4.json"
  check "$c: snarkjs verifies that proof" 0 $S groth16 verify "$d/ourvk.json" "$d/pub4.json" "$d/p4.json"
  check "$c: cuzkctl verifies that proof" 0 "$CUZKCTL" verify --snarkjs-vk "$d/ourvk.json" \
    --snarkjs-proof "$d/p4.json" --snarkjs-public "$d/pub4.json"

  # 3. snarkjs' proof -> our verifier.
  $S groth16 prove "$d/c.zkey" "$d/w.wtns" "$d/p3.json" "$d/pub3.json" >/dev/null
  check "$c: cuzkctl accepts snarkjs' proof" 0 "$CUZKCTL" verify --snarkjs-vk "$d/vk.json" \
    --snarkjs-proof "$d/p3.json" --snarkjs-public "$d/pub3.json"

  # Tampering: first public value + 1 (both verifiers reject), and a proof
  # whose A is replaced by snarkjs' own A.
  node -e 'const f=require("fs");const p=JSON.parse(f.readFileSync(process.argv[1]));p[0]=(BigInt(p[0])+1n).toString();f.writeFileSync(process.argv[2],JSON.stringify(p))' "$d/pub3.json" "$d/bad.json"
  check "$c: cuzkctl rejects a tampered public input" 1 "$CUZKCTL" verify --snarkjs-vk "$d/vk.json" \
    --snarkjs-proof "$d/p3.json" --snarkjs-public "$d/bad.json"
  check "$c: snarkjs rejects the same" 1 $S groth16 verify "$d/vk.json" "$d/bad.json" "$d/p3.json"
  check "$c: cuzkctl rejects a tampered bellperson-format input" 1 "$CUZKCTL" verify --vk "$d/c.vk" \
    --proof "$d/p2.bin" --public "$d/bad.json"
  node -e 'const f=require("fs");const a=JSON.parse(f.readFileSync(process.argv[1]));const b=JSON.parse(f.readFileSync(process.argv[2]));a.pi_a=b.pi_a;f.writeFileSync(process.argv[3],JSON.stringify(a))' "$d/p3.json" "$d/p1.json" "$d/mixed.json"
  check "$c: cuzkctl rejects a spliced proof" 1 "$CUZKCTL" verify --snarkjs-vk "$d/vk.json" \
    --snarkjs-proof "$d/mixed.json" --snarkjs-public "$d/pub3.json"
  check "$c: snarkjs rejects the spliced proof" 1 $S groth16 verify "$d/vk.json" "$d/pub3.json" "$d/mixed.json"
  check "$c: malformed proof JSON is exit 2" 2 "$CUZKCTL" verify --snarkjs-vk "$d/vk.json" \
    --snarkjs-proof "$d/input.json" --snarkjs-public "$d/pub3.json"
done
if [ $fail != 0 ]; then echo "snarkjs interop: FAILED"; exit 1; fi
echo "snarkjs interop: all checks passed"
