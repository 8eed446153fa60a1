pragma circom 2.0.0;

// A small circuit for the iden3 .r1cs/.wtns importer tests: one public output,
// two public inputs, two private inputs, quadratic and linear terms with
// coefficients other than +-1.
template Small(N) {
    signal input a;       // private
    signal input c;       // private
    signal input b;       // public
    signal input k;       // public
    signal output y;      // public output
    signal s[N + 1];
    signal t[N];
    s[0] <== a * b;
    for (var i = 0; i < N; i++) {
        t[i] <== (s[i] + 3 * a - 7) * (b - 2 * c);
        s[i + 1] <== t[i] * t[i] + k * 5 - i;
    }
    y <== s[N] * c;
}

component main {public [b, k]} = Small(4);
