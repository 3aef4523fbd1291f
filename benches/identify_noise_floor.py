#!/usr/bin/env python3
"""How well noisy data fix the leading-order gain, and so the cross-validation output, beside
what `harbor identify` reaches on independent noise draws.

For x0 = 0 and a short horizon the output is, to leading order,

    y(t) = G ∫₀ᵗ u(s) ds,   G = Bᵀ Q B   (m × m, symmetric),

so the training data y_k + σ n_k (k = 0 … N−1, the samples the `left` cost weighs; step h,
n_k standard normal) carry about G what a linear regression on φ_k = ∫₀^{t_k} u does. Its
least-squares estimate is unbiased and efficient for that model: vec δG ~ N(0, F⁻¹),
F = Σ_k D_kᵀ D_k / σ² with y_k = D_k vec G. The error it leaves on the test output,
δy(t) = δG ∫₀ᵗ u_test, is summarised by its L2 norm (h Σ_{k<N} |δy_k|²)^½ and max norm:
median, 5–95 % range, and the root mean square (exact: (h Σ_k tr(D_k F⁻¹ D_kᵀ))^½, the
Cramér–Rao bound for unbiased estimates of G in the leading-order model).

This is a reference, not a bound for the real problem: the reference model has J, R ≠ 0
(‖(J − R) Q‖ T ≈ 0.5 for the seed's), through which the data say more about B than G alone,
and every useful estimate is regularised (biased). It shows which part of the error the
data leave at a given σ and h. The script handles examples that fit J, R and B only (x0 = 0
and Q fixed), with the `left` quadrature.

With `--draws`, `harbor identify` runs the example on those noise draws, with the ridge
λ = σ² h / τ² on J and R (the MAP estimate for a N(0, τ²) prior on their entries; `--tau 0`
for none), and its cross-validation errors are printed beside the reference.

    python3 benches/identify_noise_floor.py examples/identify_synthetic.toml --sigma 0.25 \\
        [--h 1e-4] [--draws 0-9] [--tau 0.05] [--below 0.101,0.204] \\
        [--harbor target/release/harbor] [--set key=value]...
"""

import argparse
import math
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np

from identify_runs import inclusive_range, run_identify

SAMPLES = 20000
SUBSTEPS = 64


def signal(spec, t):
    """u(t) of one `[[input]]` table, in the conventions of src/model/input.rs."""
    kind = spec["kind"]
    amplitude = spec.get("amplitude", 1.0)
    if kind == "zero":
        return np.zeros_like(t)
    if kind == "constant":
        return np.full_like(t, spec["value"])
    if kind in ("sine", "cosine"):
        wave = np.sin if kind == "sine" else np.cos
        arg = 2 * math.pi * spec["frequency"] * t + spec.get("phase", 0.0)
        return spec.get("offset", 0.0) + amplitude * wave(arg)
    if kind == "chirp":
        f0, f1, t1 = spec["f0"], spec["f1"], spec["t1"]
        arg = 2 * math.pi * (f0 * t + (f1 - f0) * t * t / (2 * t1))
        return amplitude * np.cos(arg + math.radians(spec.get("phi", 0.0)))
    if kind == "square":
        arg = np.mod(2 * math.pi * spec["frequency"] * t + spec.get("phase", 0.0), 2 * math.pi)
        return np.where(arg < 2 * math.pi * spec.get("duty", 0.5), amplitude, -amplitude)
    sys.exit(f"input kind {kind!r} is not supported by this script")


def integrated_inputs(specs, h, t_end):
    """φ_k = ∫₀^{t_k} u, t_k = k h for k < N = t_end / h, by the trapezoidal rule on h/64."""
    steps = round(t_end / h)
    fine = np.linspace(0.0, t_end, steps * SUBSTEPS + 1)
    columns = []
    for spec in specs:
        u = signal(spec, fine)
        integral = np.concatenate([[0.0], np.cumsum((u[1:] + u[:-1]) * (fine[1] - fine[0]) / 2)])
        columns.append(integral[: steps * SUBSTEPS : SUBSTEPS])
    return np.array(columns).T


def gain_design(phi):
    """D_k with y_k = D_k g for the upper-triangle entries g of the symmetric G."""
    m = phi.shape[1]
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    design = np.zeros((phi.shape[0], m, len(pairs)))
    for column, (i, j) in enumerate(pairs):
        design[:, i, column] += phi[:, j]
        if i != j:
            design[:, j, column] += phi[:, i]
    return design


def leading_order_reference(example, sigma, h):
    """Samples of the test-output errors (L2, max) left by the least-squares estimate of G,
    and the exact root mean square of the L2 error."""
    t_end = example["scheme"]["t_end"]
    train = gain_design(integrated_inputs(example["input"], h, t_end))
    test = gain_design(integrated_inputs(example["test_input"], h, t_end))
    covariance = np.linalg.inv(np.einsum("kia,kib->ab", train, train) / sigma**2)
    gram = h * np.einsum("kia,kib->ab", test, test)
    rms = math.sqrt(np.trace(gram @ covariance))
    rng = np.random.default_rng(0)
    errors = rng.multivariate_normal(np.zeros(len(covariance)), covariance, SAMPLES)
    l2 = np.sqrt(np.einsum("sa,ab,sb->s", errors, gram, errors))
    peak = np.concatenate([
        np.abs(np.einsum("kia,sa->ski", test, chunk)).max(axis=(1, 2))
        for chunk in np.array_split(errors, max(1, SAMPLES * test.shape[0] // 4_000_000))
    ])
    return l2, peak, rms


def identify(args, h, draw, work):
    out = Path(work) / f"draw{draw}"
    overrides = args.overrides + [
        f"data.noise.sigma={args.sigma}",
        f"data.noise.seed={draw}",
        f"scheme.h={h}",
    ]
    if args.tau > 0:
        overrides += [
            f"cost.regularization={args.sigma**2 * h / args.tau**2}",
            'cost.regularized=["J","R"]',
        ]
    cv = run_identify(args.harbor, args.example, overrides, out)["cross_validation"]
    return cv["l2"], cv["max"]


def spread(values):
    """Median [5 %, 95 %] of many samples, median [min, max] of a few; root mean square."""
    values = np.sort(values)
    low, high = np.quantile(values, [0.05, 0.95]) if len(values) > 100 else values[[0, -1]]
    rms = math.sqrt(np.mean(values**2))
    return f"{np.median(values):.3g} [{low:.2g}, {high:.2g}] rms {rms:.3g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example")
    parser.add_argument("--sigma", type=float, required=True)
    parser.add_argument("--h", type=float, help="data step (default: the example's scheme.h)")
    parser.add_argument("--draws", help="noise draws to identify on, e.g. 0-9")
    parser.add_argument("--tau", type=float, default=0.05, help="prior scale of J, R entries")
    parser.add_argument("--below", help="L2,max: report how often each is beaten")
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--harbor", default="target/release/harbor")
    args = parser.parse_args()

    with open(args.example, "rb") as file:
        example = tomllib.load(file)
    if not example.get("test_input"):
        sys.exit(f"{args.example} has no [[test_input]]: nothing to cross-validate")
    fit = set(example["model"].get("fit", ["J", "R", "Q", "B", "x0"]))
    if not fit <= {"J", "R", "B"}:
        sys.exit(f"{args.example} fits {sorted(fit)}: the reference needs Q and x0 = 0 fixed")
    if example.get("cost", {}).get("quadrature", "left") != "left":
        sys.exit(f"{args.example}: only the left quadrature (h Σ_{{k<N}}) is handled")
    h = args.h or example["scheme"]["h"]
    below = [float(v) for v in args.below.split(",")] if args.below else None

    l2, peak, rms = leading_order_reference(example, args.sigma, h)
    rows = [("leading order: least-squares G", l2, peak)]
    if args.draws:
        measured = []
        with tempfile.TemporaryDirectory() as work:
            for draw in inclusive_range(args.draws):
                measured.append(identify(args, h, draw, work))
                print(f"draw {draw}: CV L2 {measured[-1][0]:.4f}, max {measured[-1][1]:.4f}",
                      flush=True)
        ridge = f"harbor identify, τ = {args.tau}" if args.tau > 0 else "harbor identify, no ridge"
        rows.append((ridge, [m[0] for m in measured], [m[1] for m in measured]))

    print(f"\nσ = {args.sigma}, h = {h}: median [5 %, 95 %] of {SAMPLES} samples of the reference,")
    print(f"median [min, max] over the draws; exact root mean square of the reference's L2: {rms:.4g}")
    print("| estimate | CV L2 | CV max |" + (" fraction below (L2, max, both) |" if below else ""))
    print("|---|---|---|" + ("---|" if below else ""))
    for name, l2s, peaks in rows:
        line = f"| {name} | {spread(l2s)} | {spread(peaks)} |"
        if below:
            under_l2, under_max = np.array(l2s) < below[0], np.array(peaks) < below[1]
            line += f" {under_l2.mean():.2f}, {under_max.mean():.2f}, "
            line += f"{(under_l2 & under_max).mean():.2f} |"
        print(line)


if __name__ == "__main__":
    main()
