#!/usr/bin/env python3
"""NumPy peer: integrates the members of a `harbor export-members` directory with the
collocation scheme of its scheme.json, building every member's step from (a, b, c) and
J, R, Q, B itself (harbor's delta.npy is used only to report how far the operators differ).

For A = (J − R) Q the stage derivatives K_i of one step solve

    K_i = A (x + h Σ_j a_ij K_j) + B u_i,   i.e.   (I − h a ⊗ A) K = (1 ⊗ A) x + (I ⊗ B) U,

and x_{k+1} = x + h Σ_i b_i K_i = Φ x + Γ U_k. Φ and Γ come from one batched
np.linalg.solve over all members; the steps are two np.einsum per step over all members,
timed alone (best of REPEATS runs from x0).

    python3 numpy_peer.py EXPORT_DIR [--check FINAL_STATE_NPY]
"""

import argparse
import time

import numpy as np

from peer_common import load_export, operator_difference, report

REPEATS = 3


def step_operators(scheme, J, R, Q, B):
    """Φ (members × n × n) and Γ (members × n × s m) of the scheme's step."""
    a, b = np.array(scheme["a"]), np.array(scheme["b"])
    h, s = scheme["h"], scheme["stages"]
    members, n, m = B.shape
    A = (J - R) @ Q
    # Row block i, column block j of the stage matrix: δ_ij I − h a_ij A.
    stage = np.eye(s * n) - h * np.einsum("ij,mpq->mipjq", a, A).reshape(members, s * n, s * n)
    rhs = np.zeros((members, s * n, n + s * m))
    for i in range(s):
        rhs[:, i * n : (i + 1) * n, :n] = A
        rhs[:, i * n : (i + 1) * n, n + i * m : n + (i + 1) * m] = B
    K = np.linalg.solve(stage, rhs)  # members × s n × p: the stage derivatives per unit of v
    increment = h * np.einsum("i,mipc->mpc", b, K.reshape(members, s, n, n + s * m))
    phi = np.eye(n) + increment[:, :, :n]
    gamma = increment[:, :, n:]
    return phi, gamma


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", help="directory written by harbor export-members")
    parser.add_argument("--check", metavar="FINAL_STATE_NPY", help="harbor's final_state.npy")
    args = parser.parse_args()
    scheme, arrays = load_export(args.export)

    started = time.perf_counter()
    phi, gamma = step_operators(scheme, arrays["J"], arrays["R"], arrays["Q"], arrays["B"])
    setup = time.perf_counter() - started

    inputs = arrays["inputs"].reshape(arrays["inputs"].shape[0], -1)  # steps × s m
    stepping = float("inf")
    for _ in range(REPEATS):
        x = arrays["x0"].copy()
        started = time.perf_counter()
        for u in inputs:
            x = np.einsum("mij,mj->mi", phi, x) + np.einsum("mij,j->mi", gamma, u)
        stepping = min(stepping, time.perf_counter() - started)

    members, steps = x.shape[0], inputs.shape[0]
    result = {
        "peer": "numpy",
        "version": np.__version__,
        "members": members,
        "steps": steps,
        "states": x.shape[1],
        "setup_seconds": setup,
        "step_seconds": stepping,
        "member_steps_per_second": members * steps / stepping,
        "operator_max_abs_difference": operator_difference(args.export, phi, gamma),
    }
    report(result, x, args.check)


if __name__ == "__main__":
    main()
