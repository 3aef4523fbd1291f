// Compensated arithmetic shared by the kernels. Host twin: src/compensated.rs.

// Neumaier's compensated sum: returns (sum + value, updated compensation). Values in and
// out rather than pointers: naga 30's SPIR-V writer cannot pass a pointer to a dynamically
// indexed array element.
fn neumaier(sum: real, comp: real, value: real) -> vec2<real> {
    let t = sum + value;
    if (abs(sum) >= abs(value)) {
        return vec2<real>(t, comp + ((sum - t) + value));
    }
    return vec2<real>(t, comp + ((value - t) + sum));
}

// One Kahan-compensated update x ← x + δ: returns (x + δ, new carry); the carry holds the
// low-order part lost so far and is fed back into the next update.
fn kahan(x: real, carry: real, delta: real) -> vec2<real> {
    let corrected = delta - carry;
    let t = x + corrected;
    return vec2<real>(t, (t - x) - corrected);
}
