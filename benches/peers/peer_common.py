"""What the Python peers share: reading an export directory of `harbor export-members`,
comparing final states with harbor's, and the JSON line every peer prints."""

import json
import os
import sys

import numpy as np


def load_export(directory):
    """The arrays and scheme of an export directory (see src/families/linear_ph/export.rs)."""
    with open(os.path.join(directory, "scheme.json")) as f:
        scheme = json.load(f)
    if scheme["family"] == "lobatto-pair":
        sys.exit(
            f"{directory}/scheme.json: family is lobatto-pair, a partitioned scheme; "
            "the peers integrate monolithic collocation schemes (gauss, lobatto-iiia)"
        )
    arrays = {
        name: np.load(os.path.join(directory, f"{name}.npy"))
        for name in ("J", "R", "Q", "B", "x0", "inputs")
    }
    return scheme, arrays


def relative_difference(final, reference_path):
    """max |x_peer − x_harbor| over members and components, divided by max |x_harbor|."""
    reference = np.load(reference_path)
    if reference.shape != final.shape:
        sys.exit(
            f"--check {reference_path}: shape {reference.shape} differs from the peer's "
            f"final states {final.shape}"
        )
    scale = max(float(np.max(np.abs(reference))), np.finfo(float).tiny)
    return float(np.max(np.abs(final - reference))) / scale


def operator_difference(directory, phi, gamma):
    """max |[Φ − I, Γ] − Δ| against harbor's exported step operator Δ (delta.npy)."""
    delta = np.load(os.path.join(directory, "delta.npy"), mmap_mode="r")
    n = phi.shape[1]
    ours = np.concatenate([phi - np.eye(n), gamma], axis=2)
    return float(np.max(np.abs(ours - delta)))


def report(result, final, check, tolerance=1e-9):
    """Prints `result` as one JSON line, with the agreement when `check` names harbor's
    final_state.npy; exits 1 when the difference exceeds `tolerance`."""
    failed = False
    if check is not None:
        difference = relative_difference(final, check)
        result["max_relative_difference"] = difference
        result["agrees"] = bool(difference <= tolerance)
        failed = not result["agrees"]
    print(json.dumps(result))
    if failed:
        print(
            f"{result['peer']}: final states differ from harbor's by {difference:.3e} "
            f"(relative), more than {tolerance:g}",
            file=sys.stderr,
        )
        sys.exit(1)
