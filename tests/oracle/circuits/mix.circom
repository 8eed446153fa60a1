pragma circom 2.0.0;
// Public inputs a, b and output out; a squaring chain; a linear-only
// constraint; a private input that no constraint uses. 42 constraints + 3
// public: a non-power-of-two size.
template Mix(N) {
  signal input a;
  signal input b;
  signal input unused;
  signal output out;
  signal s[N+1];
  signal lin;
  s[0] <== a * b;
  for (var i = 0; i < N; i++) { s[i+1] <== s[i] * s[i] + a; }
  lin <== 3 * a + b;
  out <== s[N] + lin;
}
component main {public [a, b]} = Mix(37);
