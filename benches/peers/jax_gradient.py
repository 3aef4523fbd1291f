#!/usr/bin/env python3
"""JAX gradient peer: the identification cost 𝒥 and its exact gradient, independently of
harbor, to cross-check `harbor gradient` and as the peer a user would otherwise pick.

What it computes, in f64 JAX on the CPU. A linear port-Hamiltonian model
w = (J, R, Q, B, x0) (J skew, R symmetric PSD, Q symmetric PD, B n × m, x0 ∈ Rⁿ),
L = (J − R) Q, is stepped on t_k = k h, k = 0…N, by Gauss–Legendre collocation with s stages
(tableau computed here from the Legendre roots, a_ij = ∫_0^{c_i} ℓ_j, b_j = ∫_0^1 ℓ_j): the
stage rates g_i = L (x_k + h Σ_j a_ij g_j) + B u(t_k + c_i h) give
x_{k+1} = x_k + h Σ_j b_j g_j, i.e. x_{k+1} = x_k + Δ [x_k; U_k] with the step operator
Δ = [Φ − I, Γ] from one s n × s n solve per model. Outputs y_k = Bᵀ Q x_k against data d_k:

    𝒥(w) = ½ Σ_{k=0}^{N} ω_k |y_k − d_k|² + (λ/2) ‖w − w_ref‖²   (Frobenius, over J, R, Q, B, x0)

with ω_k of the `left` rule (h for k < N, ω_N = 0) or the `trapezoid` rule (h/2 at both
ends). The gradient is jax.grad of 𝒥 with respect to the full matrices J, R, Q, B, x0 (the
stage solve inside the differentiated function), projected on the structure: J → skew part,
R and Q → symmetric part, B and x0 as they are. Inputs are scipy.signal.chirp (linear) and
offset + amplitude · sin(2π f t + phase), one per channel.

Modes (run from the repository root):

    python3 benches/peers/jax_gradient.py --check [--harbor target/release/harbor] [--work DIR]
        Random problems (reference model → data by this file's collocation step, a
        different candidate), each written as a TOML + data.csv and given to
        `harbor gradient … --backend cpu`; prints the relative differences of the cost and
        of every gradient component (max-abs, relative to this file's max-abs) and exits 1
        if any exceeds 1e-10, 2 if the binary has no `gradient` subcommand.

    python3 benches/peers/jax_gradient.py --fd
        Standalone: this file's gradient against central finite differences of 𝒥 along
        random structured directions (skew for J, symmetric for R and Q), Richardson-
        extrapolated from steps ε and ε/2, on the same problems; exits 1 if any relative
        disagreement exceeds 1e-8.

    python3 benches/peers/jax_gradient.py --bench [--sizes 1 100 10000 100000] [--json FILE]
        Cost + gradient evaluations per second for K candidates (n = 5, m = 2, Gauss s = 2,
        N = 1000, one shared data set): jax.jit of jax.vmap over candidates of
        jax.value_and_grad, jax.lax.scan over the steps. Compilation is timed apart; the
        figure is the best of 3 runs after one untimed run (block_until_ready). A K above
        BENCH_BATCH is measured in batches of BENCH_BATCH, and also as one vmap when that
        fits: XLA's working memory at most half the available memory and a run projected
        from the last smaller K at most BENCH_CAP_SECONDS (the table says which is which).
"""

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

COMPONENTS = ("J", "R", "Q", "B", "x0")
CHECK_TOLERANCE = 1e-10
FD_TOLERANCE = 1e-8
FD_STEP = 1e-4
REPEATS = 3
BENCH_SIZES = (1, 100, 10000, 100000)
BENCH_BATCH = 10000
BENCH_CAP_SECONDS = 120.0
CHIRP = {"kind": "chirp", "f0": 3.0, "f1": 20.0, "t1": 1.0}
SINE = {"kind": "sine", "frequency": 3.0}

# ---------------------------------------------------------------------------------------
# Scheme and inputs (NumPy)


def gauss_tableau(s):
    """(a, b, c) of Gauss–Legendre collocation with s stages: c the roots of the shifted
    Legendre polynomial, a_ij = ∫_0^{c_i} ℓ_j, b_j = ∫_0^1 ℓ_j, integrated exactly."""
    roots, _ = np.polynomial.legendre.leggauss(s)
    c = (roots + 1.0) / 2.0
    a = np.empty((s, s))
    b = np.empty(s)
    for j in range(s):
        lagrange = np.polynomial.Polynomial([1.0])
        for root in np.delete(c, j):
            lagrange *= np.polynomial.Polynomial([-root, 1.0]) / (c[j] - root)
        primitive = lagrange.integ()  # zero at 0
        a[:, j] = primitive(c)
        b[j] = primitive(1.0)
    return a, b, c


def signal(spec):
    """u(t) of one input table (the TOML's [[input]] keys)."""
    if spec["kind"] == "chirp":
        amplitude, phi = spec.get("amplitude", 1.0), spec.get("phi", 0.0)
        f0, f1, t1 = spec["f0"], spec["f1"], spec["t1"]
        return lambda t: amplitude * np.cos(
            2.0 * np.pi * (f0 * t + (f1 - f0) * t * t / (2.0 * t1)) + phi * np.pi / 180.0
        )
    if spec["kind"] == "sine":
        amplitude, phase = spec.get("amplitude", 1.0), spec.get("phase", 0.0)
        offset, frequency = spec.get("offset", 0.0), spec["frequency"]
        return lambda t: offset + amplitude * np.sin(2.0 * np.pi * frequency * t + phase)
    raise ValueError(f"input kind {spec['kind']!r}: only chirp and sine are implemented")


def stage_inputs(specs, c, h, steps):
    """U (steps × s m): row k holds u(t_k + c_i h) for i = 1…s, each m channels."""
    times = (np.arange(steps)[:, None] + c[None, :]) * h
    channels = [signal(spec)(times) for spec in specs]
    return np.stack(channels, axis=-1).reshape(steps, -1)


def quadrature_weights(rule, steps, h):
    """ω_0…ω_N of ∫_0^T dt on the grid."""
    weights = np.full(steps + 1, h)
    if rule == "left":
        weights[-1] = 0.0
    elif rule == "trapezoid":
        weights[0] = weights[-1] = 0.5 * h
    else:
        raise ValueError(f"quadrature {rule!r}")
    return weights


def random_models(rng, n, m, count=None):
    """Models with J = (A − Aᵀ)/√(2n), R = C Cᵀ/n, Q = I + D Dᵀ/n, B and x0 standard normal
    (exactly skew / symmetric); a batch of `count` along a leading axis when given."""
    lead = () if count is None else (count,)

    def square():
        return rng.standard_normal(lead + (n, n))

    def transpose(x):
        return np.swapaxes(x, -1, -2)

    A, C, D = square(), square(), square()
    R = C @ transpose(C) / n
    Q = np.eye(n) + D @ transpose(D) / n
    return {
        "J": (A - transpose(A)) / math.sqrt(2 * n),
        "R": 0.5 * (R + transpose(R)),
        "Q": 0.5 * (Q + transpose(Q)),
        "B": rng.standard_normal(lead + (n, m)),
        "x0": rng.standard_normal(lead + (n,)),
    }


# ---------------------------------------------------------------------------------------
# Cost and gradient (JAX)


def step_operator(a, b, h, J, R, Q, B):
    """Δ = [Φ − I, Γ] (n × (n + s m)): x_{k+1} = x_k + Δ [x_k; U_k]. The stacked stage
    rates solve (I − h a ⊗ L) g = (1 ⊗ L) x_k + (I ⊗ B) U_k."""
    s, n = a.shape[0], J.shape[0]
    L = (J - R) @ Q
    stage = jnp.eye(s * n) - h * jnp.kron(a, L)
    rhs = jnp.concatenate([jnp.kron(jnp.ones((s, 1)), L), jnp.kron(jnp.eye(s), B)], axis=1)
    rates = jnp.linalg.solve(stage, rhs).reshape(s, n, -1)
    return h * jnp.einsum("i,ipc->pc", b, rates)


def outputs(w, problem):
    """y_0…y_N (N+1 × m) of model w on the problem's scheme and inputs."""
    J, R, Q, B, x0 = (w[k] for k in COMPONENTS)
    delta = step_operator(problem["a"], problem["b"], problem["h"], J, R, Q, B)
    n = x0.shape[0]

    def step(x, u):
        return x + delta[:, :n] @ x + delta[:, n:] @ u, x

    final, states = jax.lax.scan(step, x0, problem["inputs"])
    return jnp.concatenate([states, final[None]]) @ (B.T @ Q).T


def cost(w, problem):
    """𝒥(w); depends on the full matrices (nothing symmetrised here)."""
    J, R, Q, B, x0 = (w[k] for k in COMPONENTS)
    delta = step_operator(problem["a"], problem["b"], problem["h"], J, R, Q, B)
    n = x0.shape[0]
    C = B.T @ Q
    data, weights = problem["data"], problem["weights"]

    def step(carry, stream):
        x, total = carry
        u, d, omega = stream
        residual = C @ x - d
        x_next = x + delta[:, :n] @ x + delta[:, n:] @ u
        return (x_next, total + omega * residual @ residual), None

    (final, total), _ = jax.lax.scan(
        step, (x0, jnp.zeros((), x0.dtype)), (problem["inputs"], data[:-1], weights[:-1])
    )
    residual = C @ final - data[-1]
    total = total + weights[-1] * residual @ residual
    distance = sum(jnp.sum((w[k] - problem["reference"][k]) ** 2) for k in COMPONENTS)
    return 0.5 * total + 0.5 * problem["regularization"] * distance


def project(gradient):
    """The gradient on the structure: skew part for J, symmetric part for R and Q."""
    return {
        "J": 0.5 * (gradient["J"] - gradient["J"].T),
        "R": 0.5 * (gradient["R"] + gradient["R"].T),
        "Q": 0.5 * (gradient["Q"] + gradient["Q"].T),
        "B": gradient["B"],
        "x0": gradient["x0"],
    }


def cost_and_gradient(w, problem):
    value, gradient = jax.value_and_grad(cost)(w, problem)
    return value, project(gradient)


# ---------------------------------------------------------------------------------------
# Problems


def make_problem(specs, s, h, steps, rule, regularization, reference, data):
    """The arrays `cost` reads, as a JAX pytree."""
    a, b, c = gauss_tableau(s)
    problem = {
        "a": a,
        "b": b,
        "h": np.float64(h),
        "inputs": stage_inputs(specs, c, h, steps),
        "data": data,
        "weights": quadrature_weights(rule, steps, h),
        "regularization": np.float64(regularization),
        "reference": reference,
    }
    return jax.tree_util.tree_map(jnp.asarray, problem)


# name, n, m, s, h, steps, quadrature, λ, w_ref nonzero, noise on the data
CHECK_CASES = [
    ("n5 m2 s2", 5, 2, 2, 0.001, 1000, "left", 0.0, False, 0.0),
    ("n3 m1 s1", 3, 1, 1, 0.001, 1000, "left", 0.0, False, 0.01),
    ("n8 m2 s4", 8, 2, 4, 0.002, 500, "left", 0.0, False, 0.0),
    ("n20 m2 s3", 20, 2, 3, 0.005, 200, "left", 0.0, False, 0.0),
    ("n4 m2 s2 trapezoid λ=0.1 w_ref", 4, 2, 2, 0.001, 1000, "trapezoid", 0.1, True, 0.01),
]


def check_problems(seed=20240611):
    """One dict per CHECK_CASES row: what write_problem writes (name, specs, scheme,
    quadrature, regularization, reference, data, candidate) and the JAX `problem`."""
    rng = np.random.default_rng(seed)
    cases = []
    for name, n, m, s, h, steps, rule, regularization, with_reference, noise in CHECK_CASES:
        specs = [CHIRP, SINE][:m]
        truth, candidate = random_models(rng, n, m), random_models(rng, n, m)
        reference = (
            random_models(rng, n, m)
            if with_reference
            else {k: np.zeros_like(v) for k, v in truth.items()}
        )
        zeros = np.zeros((steps + 1, m))
        simulation = make_problem(specs, s, h, steps, rule, regularization, reference, zeros)
        data = np.asarray(jax.jit(outputs)(truth, simulation))
        data = data + noise * rng.standard_normal(data.shape)
        problem = make_problem(specs, s, h, steps, rule, regularization, reference, data)
        cases.append({
            "name": name, "specs": specs, "scheme": {"s": s, "h": h, "steps": steps},
            "quadrature": rule, "regularization": regularization, "reference": reference,
            "data": data, "candidate": candidate, "problem": problem,
        })
    return cases


def toml_value(x):
    """A number or nested list in TOML, floats as repr() (exact round trip)."""
    if np.ndim(x) == 0:
        return repr(float(x))
    return "[" + ", ".join(toml_value(row) for row in x) + "]"


def write_problem(directory, case):
    """problem.toml and data.csv of a check case for `harbor gradient`; the TOML's path."""
    os.makedirs(directory, exist_ok=True)
    scheme, data, reference = case["scheme"], case["data"], case["reference"]
    h, steps = scheme["h"], scheme["steps"]
    with open(os.path.join(directory, "data.csv"), "w") as f:
        f.write("t," + ",".join(f"y{i + 1}" for i in range(data.shape[1])) + "\n")
        for k, row in enumerate(data):
            f.write(",".join(repr(float(v)) for v in (k * h, *row)) + "\n")
    lines = []
    for spec in case["specs"]:
        lines.append("[[input]]")
        lines += [f'kind = "{v}"' if key == "kind" else f"{key} = {toml_value(v)}"
                  for key, v in spec.items()]
    lines += [
        "",
        "[scheme]",
        'family = "gauss"',
        f"stages = {scheme['s']}",
        f"h = {toml_value(h)}",
        f"t_end = {toml_value(steps * h)}",
        "",
        "[data]",
        'file = "data.csv"',
        "",
        "[cost]",
        f"regularization = {toml_value(case['regularization'])}",
        f'quadrature = "{case["quadrature"]}"',
    ]
    if any(np.any(v != 0) for v in reference.values()):
        lines += ["", "[cost.reference]"]
        lines += [f"{k} = {toml_value(reference[k])}" for k in COMPONENTS]
    lines += ["", "[candidate]"]
    lines += [f"{k} = {toml_value(case['candidate'][k])}" for k in COMPONENTS]
    path = os.path.join(directory, "problem.toml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def max_relative(ours, theirs):
    """max |theirs − ours| / max |ours|."""
    scale = max(float(np.max(np.abs(ours))), np.finfo(float).tiny)
    return float(np.max(np.abs(np.asarray(theirs) - ours))) / scale


def gradient_unavailable(harbor):
    """Why `harbor gradient` cannot be run, or None when `harbor gradient --help` works."""
    try:
        probe = subprocess.run([harbor, "gradient", "--help"], capture_output=True, text=True)
    except OSError as error:
        return f"{harbor}: cannot run ({error})"
    if probe.returncode != 0:
        first = (probe.stderr.strip().splitlines() or [""])[0]
        return (f"{harbor} has no `gradient` subcommand (`gradient --help` exited "
                f"{probe.returncode}: {first})")
    return None


def run_check(harbor, work):
    evaluate = jax.jit(cost_and_gradient)
    header = ["problem", "cost", "Δcost rel", *(f"ΔG_{k}" for k in COMPONENTS)]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    worst = 0.0
    for index, case in enumerate(check_problems()):
        directory = os.path.join(work, f"problem{index}")
        toml = write_problem(directory, case)
        out = os.path.join(directory, "out")
        command = [harbor, "gradient", toml, "--out", out, "--backend", "cpu"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            print(f"| {case['name']} | harbor exited {result.returncode}: "
                  f"{result.stderr.strip()[-300:]} |")
            worst = math.inf
            continue
        with open(os.path.join(out, "gradient.json")) as f:
            theirs = json.load(f)
        value, gradient = evaluate(case["candidate"], case["problem"])
        value = float(value)
        differences = [abs(theirs["cost"] - value) / abs(value)]
        differences += [max_relative(np.asarray(gradient[k]), theirs["grad"][k])
                        for k in COMPONENTS]
        worst = max(worst, *differences)
        cells = " | ".join(f"{d:.1e}" for d in differences)
        print(f"| {case['name']} | {value:.6e} | {cells} |")
    print(f"\nworst {worst:.2e} (tolerance {CHECK_TOLERANCE:g})")
    return 0 if worst <= CHECK_TOLERANCE else 1


def structured_direction(rng, n, m):
    """A random direction in the tangent space: J skew, R and Q symmetric."""
    A, C, D = (rng.standard_normal((n, n)) for _ in range(3))
    return {"J": A - A.T, "R": C + C.T, "Q": D + D.T,
            "B": rng.standard_normal((n, m)), "x0": rng.standard_normal(n)}


def run_fd(directions=3):
    """Directional derivatives ⟨∇𝒥, V⟩ against the central difference
    D(ε) = (𝒥(w + εV) − 𝒥(w − εV)) / 2ε, extrapolated: (4 D(ε/2) − D(ε)) / 3."""
    rng = np.random.default_rng(7)
    evaluate, value_of = jax.jit(cost_and_gradient), jax.jit(cost)
    print("| problem | direction | ⟨∇𝒥, V⟩ | central difference | relative |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for case in check_problems():
        candidate, problem = case["candidate"], case["problem"]
        n, m = candidate["B"].shape
        _, gradient = evaluate(candidate, problem)
        for index in range(directions):
            V = structured_direction(rng, n, m)
            exact = sum(float(jnp.vdot(gradient[k], V[k])) for k in COMPONENTS)

            def difference(step):
                plus = value_of({k: candidate[k] + step * V[k] for k in COMPONENTS}, problem)
                minus = value_of({k: candidate[k] - step * V[k] for k in COMPONENTS}, problem)
                return float(plus - minus) / (2 * step)

            central = (4 * difference(FD_STEP / 2) - difference(FD_STEP)) / 3
            relative = abs(exact - central) / abs(exact)
            worst = max(worst, relative)
            print(f"| {case['name']} | {index} | {exact:.12e} | {central:.12e} | "
                  f"{relative:.1e} |")
    print(f"\nworst {worst:.2e} (tolerance {FD_TOLERANCE:g}, ε = {FD_STEP:g})")
    return 0 if worst <= FD_TOLERANCE else 1


# ---------------------------------------------------------------------------------------
# Benchmark


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return math.inf


def timed(function, *args):
    """The best seconds of REPEATS runs of `function(*args)` after one untimed run."""
    jax.block_until_ready(function(*args))
    best = math.inf
    for _ in range(REPEATS):
        started = time.perf_counter()
        jax.block_until_ready(function(*args))
        best = min(best, time.perf_counter() - started)
    return best


def run_bench(sizes, json_path, seed=11):
    n, m, s, h, steps = 5, 2, 2, 0.001, 1000
    rng = np.random.default_rng(seed)
    specs = [CHIRP, SINE]
    reference = {k: np.zeros_like(v) for k, v in random_models(rng, n, m).items()}
    simulation = make_problem(specs, s, h, steps, "left", 0.0, reference,
                              np.zeros((steps + 1, m)))
    truth = random_models(rng, n, m)
    data = np.asarray(jax.jit(outputs)(truth, simulation))
    problem = make_problem(specs, s, h, steps, "left", 0.0, reference, data)
    batched = jax.jit(jax.vmap(cost_and_gradient, in_axes=(0, None)))

    compiled = {}  # candidate count → (compiled function, compile seconds)

    def compile_for(candidates):
        count = candidates["x0"].shape[0]
        if count not in compiled:
            started = time.perf_counter()
            function = batched.lower(candidates, problem).compile()
            compiled[count] = function, time.perf_counter() - started
        return compiled[count]

    def whole_fits(candidates, previous):
        """Whether one vmap over all candidates needs at most half the available memory
        and, projected linearly from `previous` (the last row without batches), at most
        BENCH_CAP_SECONDS a run."""
        memory = compile_for(candidates)[0].memory_analysis()
        working = memory.temp_size_in_bytes + memory.output_size_in_bytes
        count = candidates["x0"].shape[0]
        projected = math.inf if previous is None else previous["seconds"] * count / previous["K"]
        return working <= available_bytes() / 2 and projected <= BENCH_CAP_SECONDS

    def evaluate_pieces(pieces):
        return [compile_for(piece)[0](piece, problem) for piece in pieces]

    rows = []
    previous = None
    for K in sizes:
        candidates = jax.tree_util.tree_map(jnp.asarray, random_models(rng, n, m, K))
        batches = [K]
        if K > BENCH_BATCH:
            batches = ([K] if whole_fits(candidates, previous) else []) + [BENCH_BATCH]
        for batch in batches:
            pieces = [jax.tree_util.tree_map(lambda x, i=i: x[i:i + batch], candidates)
                      for i in range(0, K, batch)]
            shapes = {piece["x0"].shape[0]: compile_for(piece)[1] for piece in pieces}
            seconds = timed(evaluate_pieces, pieces)
            row = {
                "K": K,
                "batch": batch,
                "compile_seconds": sum(shapes.values()),
                "seconds": seconds,
                "evaluations_per_second": K / seconds,
                "peak_rss_mib": peak_rss_mib(),
            }
            rows.append(row)
            if batch == K:
                previous = row
            print(json.dumps(row), file=sys.stderr, flush=True)

    print(f"JAX {jax.__version__} (CPU, f64, {os.cpu_count()} cores): cost + gradient, "
          f"n = {n}, m = {m}, Gauss s = {s}, N = {steps}; best of {REPEATS}\n")
    print("| K | batches | compile s | run s | evaluations/s | peak RSS MiB |")
    print("|---:|---|---:|---:|---:|---:|")
    for row in rows:
        batches = ("one" if row["batch"] == row["K"]
                   else f"{math.ceil(row['K'] / row['batch'])} × {row['batch']}")
        print(f"| {row['K']} | {batches} | {row['compile_seconds']:.2f} | "
              f"{row['seconds']:.4g} | {row['evaluations_per_second']:.4g} | "
              f"{row['peak_rss_mib']:.0f} |")
    print("\npeak RSS is the process's high-water mark up to that row.")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"peer": "jax", "version": jax.__version__, "n": n, "m": m,
                       "stages": s, "h": h, "steps": steps, "repeats": REPEATS,
                       "rows": rows}, f, indent=2)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="cross-check `harbor gradient`")
    mode.add_argument("--fd", action="store_true", help="gradient vs finite differences")
    mode.add_argument("--bench", action="store_true", help="evaluations per second")
    parser.add_argument("--harbor", default="target/release/harbor")
    parser.add_argument("--work", help="--check: keep the problems here (default: temp dir)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(BENCH_SIZES),
                        help="--bench: candidate counts K")
    parser.add_argument("--json", help="--bench: write the rows here")
    args = parser.parse_args()
    if args.check:
        unavailable = gradient_unavailable(args.harbor)
        if unavailable:
            print(unavailable)
            return 2
        work = args.work or tempfile.mkdtemp(prefix="jax_gradient_")
        status = run_check(args.harbor, work)
        if args.work is None and status == 0:
            shutil.rmtree(work)
        else:
            print(f"problem files kept in {work}")
        return status
    if args.fd:
        return run_fd()
    return run_bench(args.sizes, args.json)


if __name__ == "__main__":
    sys.exit(main())
