#!/usr/bin/env python3
"""JAX peer: the NumPy peer's algorithm (numpy_peer.py) in f64 JAX on the CPU — each
member's step operators Φ, Γ from (a, b, c) and J, R, Q, B with jnp.linalg.solve, then
x_{k+1} = Φ x_k + Γ U_k as a jax.lax.scan over the steps, jax.vmap over the members, the
whole under jax.jit. Compilation is done ahead of time and the compiled function run once
before the timed runs (block_until_ready; best of REPEATS), so the figures exclude
compilation.

    python3 jax_peer.py EXPORT_DIR [--check FINAL_STATE_NPY]
"""

import argparse
import time

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from peer_common import load_export, operator_difference, report  # noqa: E402

REPEATS = 3


def member_operators(a, b, h, J, R, Q, B):
    """Φ (n × n) and Γ (n × s m) of one member."""
    s, n, m = a.shape[0], J.shape[0], B.shape[1]
    A = (J - R) @ Q
    stage = jnp.eye(s * n) - h * jnp.kron(a, A)
    rhs = jnp.concatenate(
        [jnp.kron(jnp.ones((s, 1)), A), jnp.kron(jnp.eye(s), B)], axis=1
    )
    K = jnp.linalg.solve(stage, rhs).reshape(s, n, n + s * m)
    increment = h * jnp.einsum("i,ipc->pc", b, K)
    return jnp.eye(n) + increment[:, :n], increment[:, n:]


def member_run(phi, gamma, x0, inputs):
    """x after every step of `inputs` (steps × s m), from x0."""

    def step(x, u):
        return phi @ x + gamma @ u, None

    final, _ = jax.lax.scan(step, x0, inputs)
    return final


def timed(compiled, *args):
    """The best seconds of REPEATS runs of `compiled`, after one untimed run; and its
    result."""
    result = jax.block_until_ready(compiled(*args))
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        result = jax.block_until_ready(compiled(*args))
        best = min(best, time.perf_counter() - started)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", help="directory written by harbor export-members")
    parser.add_argument("--check", metavar="FINAL_STATE_NPY", help="harbor's final_state.npy")
    args = parser.parse_args()
    scheme, arrays = load_export(args.export)
    a, b, h = jnp.array(scheme["a"]), jnp.array(scheme["b"]), scheme["h"]
    matrices = [jnp.asarray(arrays[k]) for k in ("J", "R", "Q", "B")]
    x0 = jnp.asarray(arrays["x0"])
    inputs = jnp.asarray(arrays["inputs"].reshape(arrays["inputs"].shape[0], -1))

    operators = jax.jit(jax.vmap(member_operators, in_axes=(None, None, None, 0, 0, 0, 0)))
    started = time.perf_counter()
    operators = operators.lower(a, b, h, *matrices).compile()
    run = jax.jit(jax.vmap(member_run, in_axes=(0, 0, 0, None)))
    compile_seconds = time.perf_counter() - started
    setup, (phi, gamma) = timed(operators, a, b, h, *matrices)
    started = time.perf_counter()
    run = run.lower(phi, gamma, x0, inputs).compile()
    compile_seconds += time.perf_counter() - started
    stepping, final = timed(run, phi, gamma, x0, inputs)

    members, steps = x0.shape[0], inputs.shape[0]
    result = {
        "peer": "jax",
        "version": jax.__version__,
        "members": members,
        "steps": steps,
        "states": x0.shape[1],
        "compile_seconds": compile_seconds,
        "setup_seconds": setup,
        "step_seconds": stepping,
        "member_steps_per_second": members * steps / stepping,
        "operator_max_abs_difference": operator_difference(
            args.export, np.asarray(phi), np.asarray(gamma)
        ),
    }
    report(result, np.asarray(final), args.check)


if __name__ == "__main__":
    main()
