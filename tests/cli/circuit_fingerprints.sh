#!/usr/bin/env bash
# Change detector for circuit shapes: the R1CS fingerprint (bellpepper's
# TestConstraintSystem::hash layout: blake2s over the counts and every linear
# combination in order) of named circuits, recorded on 2026-11-30 when every
# count below matched rust-fil-proofs/bellpepper. A mismatch means constraint
# or variable order or a coefficient changed: if the change is intended,
# re-record the value and say why in the commit; it would break compatibility
# with Filecoin's published parameters for the Filecoin circuits. The update-*
# rows were recorded on 2026-12-04 (counts equal rfp's; no reference
# fingerprint exists for their variable order).
set -uo pipefail
CUZKCTL=$1
fail=0
while read -r name constraints fingerprint; do
  out=$("$CUZKCTL" circuit info "$name" --json) || { echo "FAIL: $name: cuzkctl exited $?"; fail=1; continue; }
  got_c=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["constraints"])' <<<"$out")
  got_f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])' <<<"$out")
  if [ "$got_c" != "$constraints" ] || [ "$got_f" != "$fingerprint" ]; then
    echo "FAIL: $name: constraints $got_c fingerprint $got_f (recorded $constraints $fingerprint)"; fail=1
  else
    echo "ok:   $name"
  fi
done <<'TABLE'
sha256-block 26352 a91be46c89fe4cb18f85d99956bf9b1afe0a96d1b6c960a30d4e9dcafcf501ba
poseidon-2 311 658f013f99360e164ad8e7f96290944601cc064f93c153d9ea7ac1275927175f
poseidon-11 598 e94a28106cbb9a718e525f0f2593ce3b138350047854ebcc3c83472ed482a6f6
insertion-8 25 388411775426aa6b4bf4c7f22daab123b623e50ed2b77dbc1525984e4a810a66
por-8 1063 3bd8cb4719e1ce8b020c078159a77bd5cf9d8eca04ed094eaca290c621f10a20
por-8-8-2 1907 1aaf5b3ff8221455ad5ba57746f23db956a2de780213b68d65d8ea0165607e84
stacked-base-8 1199620 b9e22ee377bc73c4e08f679252c4f87948f5812be8c95358a6bf87a7279a785f
update-2k 1705039 c787aea9329f4525b3bcde14533b9b775654f6a9afe0a7c671783c8bd4f1f7a5
update-poseidon-1k 32164 84063d3af825ccb94887245f8d1da1b5133b68634fdf0b42dc2950b51cd9af3c
TABLE
exit $fail
