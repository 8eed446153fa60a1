#!/usr/bin/env bash
# `cuzkctl post setup/prove/verify` on genuine 2 KiB sectors with DEVELOPMENT
# parameters (slow: the WinningPoSt setup is a 2^17 domain, ~11 CPU-seconds,
# its proof ~6). Checks: the development files carry rust-fil-proofs' names
# + "-dev" and the official .vk sizes (3,076 B Window, 13,636 B Winning:
# n_ic 23 / 133), proofs of 192 B verify (exit 0), against other randomness
# or another sector set they do not (exit 1), a vk of the other shape is
# malformed (exit 2), an invalid vanilla proof is refused before proving (1).
# Usage: cuzkctl_post_prove.sh CUZKCTL
set -u
CUZKCTL=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
expect_rc() {  # expect_rc WANT DESCRIPTION CMD...
  local want=$1 what=$2
  shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL: $what: exit $rc, want $want"; cat "$dir/err"; fail=1
  else
    echo "ok: $what"
  fi
}
rand_of() { grep '"randomness"' "$1/post.json" | sed -E 's/.*: "([0-9a-f]+)".*/\1/'; }
size_is() {  # size_is FILE BYTES
  [[ $(stat -c %s "$1") -eq $2 ]] || { echo "FAIL: $1 is $(stat -c %s "$1") B, want $2"; fail=1; }
}

declare -A stem=([window]=8-0-0-0170db1f [winning]=8-0-0-3ea05428)
for kind in window winning; do
  expect_rc 0 "gen $kind" "$CUZKCTL" post gen --kind $kind --sector-size 2KiB --sectors 1 --seed 11 --out "$dir/$kind"
  r=$(rand_of "$dir/$kind")
  part=(--kind $kind --sector-size 2KiB --prover-id 1000)
  expect_rc 0 "setup $kind" "$CUZKCTL" post setup --kind $kind --sector-size 2KiB --out-dir "$dir/p"
  expect_rc 0 "prove $kind" "$CUZKCTL" post prove "${part[@]}" --randomness "$r" --param-dir "$dir/p" \
    --proof "$dir/$kind.proof" "$dir/$kind/vanilla-1.bin"
  size_is "$dir/$kind.proof" 192
  vk=$(ls "$dir"/p/*"${stem[$kind]}"*-dev.vk)
  expect_rc 0 "verify $kind" "$CUZKCTL" post verify "${part[@]}" --randomness "$r" --vk "$vk" \
    --proof "$dir/$kind.proof" "$dir/$kind/vanilla-1.bin"
  expect_rc 1 "verify $kind, other randomness" "$CUZKCTL" post verify "${part[@]}" --randomness "$(printf '%064x' 3)" \
    --vk "$vk" --proof "$dir/$kind.proof" "$dir/$kind/vanilla-1.bin"
  expect_rc 1 "prove $kind, other randomness (vanilla check)" "$CUZKCTL" post prove "${part[@]}" \
    --randomness "$(printf '%064x' 3)" --param-dir "$dir/p" "$dir/$kind/vanilla-1.bin"
done
wvk=$(ls "$dir"/p/*8-0-0-0170db1f*-dev.vk)
nvk=$(ls "$dir"/p/*8-0-0-3ea05428*-dev.vk)
size_is "$wvk" 3076
size_is "$nvk" 13636
expect_rc 2 "window proof under the winning vk" "$CUZKCTL" post verify --kind window --sector-size 2KiB --prover-id 1000 \
  --randomness "$(rand_of "$dir/window")" --vk "$nvk" --proof "$dir/window.proof" "$dir/window/vanilla-1.bin"
exit $fail
