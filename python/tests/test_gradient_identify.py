"""harbor.gradient and harbor.identify against `harbor gradient` and `harbor identify`:
costs, gradients, identified matrices, cost histories and fitted outputs equal the CLI's
files bit for bit, on the CPU and on the GPU (lavapipe in CI); identification from arrays
equals identification from the same data in a file."""

import csv
import json

import numpy as np
import pytest

import harbor

from conftest import EXAMPLES, assert_bitwise_equal, run_cli


def gradient_json(problem, out, *args):
    run_cli("gradient", problem, "--out", out, *args)
    return json.loads((out / "gradient.json").read_text())


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_a_candidates_gradient_equals_the_cli(backend, tmp_path):
    problem = EXAMPLES / "gradient_check.toml"
    cli = gradient_json(problem, tmp_path / "out", "--backend", backend)
    result = harbor.gradient(problem, backend=backend)
    assert not result.batch
    assert isinstance(result.cost, float) and result.cost == cli["cost"]
    for part in ["J", "R", "Q", "B", "x0"]:
        assert_bitwise_equal(getattr(result, part), np.array(cli["grad"][part]), part)
    # The gradient's structure: ∇J skew, ∇R and ∇Q symmetric.
    assert np.array_equal(result.J, -result.J.T)
    assert np.array_equal(result.R, result.R.T) and np.array_equal(result.Q, result.Q.T)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_a_batch_of_gradients_equals_the_cli(backend, tmp_path):
    problem = EXAMPLES / "gradient_check.toml"
    sets = ["candidates.members=16", "candidates.seed=3", "candidates.J={kind='perturb', sigma=0.2}"]
    cli = gradient_json(problem, tmp_path / "out", "--backend", backend, *[a for s in sets for a in ("--set", s)])
    result = harbor.gradient(problem, backend=backend, overrides=sets)
    assert result.batch and result.cost.shape == (16,) and result.J.shape == (16, 5, 5)
    assert_bitwise_equal(result.cost, np.array([c["cost"] for c in cli]), "cost")
    for part in ["J", "R", "Q", "B", "x0"]:
        expected = np.array([c["grad"][part] for c in cli])
        assert_bitwise_equal(getattr(result, part), expected, part)


def read_csv(path):
    with open(path) as file:
        rows = list(csv.reader(file))
    return rows[0], np.array([[float(v) for v in row] for row in rows[1:]])


# A short identification: 256 Monte-Carlo candidates, two starts, 40 iterations.
SHORT = ["monte_carlo.candidates=256", "monte_carlo.keep=2", "optimizer.max_iterations=40"]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_identification_equals_the_cli(backend, tmp_path):
    config = EXAMPLES / "identify_synthetic.toml"
    out = tmp_path / "out"
    run_cli("identify", config, "--out", out, "--backend", backend, *[a for s in SHORT for a in ("--set", s)])
    result = harbor.identify(config, backend=backend, overrides=SHORT)
    for part in ["J", "R", "Q", "B", "x0"]:
        assert_bitwise_equal(getattr(result, part), np.load(out / "model" / f"{part}.npy"), part)
    summary = json.loads((out / "identification.json").read_text())
    del summary["wall_seconds"]
    python_summary = dict(result.summary)
    del python_summary["wall_seconds"]
    assert python_summary == summary
    assert result.cost_initial == summary["cost_initial"] and result.cost_final == summary["cost_final"]
    _, history = read_csv(out / "cost_history.csv")
    for start, costs in enumerate(result.cost_history):
        assert_bitwise_equal(costs, history[history[:, 0] == start, 2], f"cost history of start {start}")
    assert result.cost_history[result.best_start][-1] == result.cost_final
    header, outputs = read_csv(out / "outputs.csv")
    m = result.B.shape[1]
    assert header == ["t"] + [f"{k}_{c}" for k in ["data", "fitted", "initial"] for c in range(m)]
    training = result.training
    assert_bitwise_equal(training["times"], outputs[:, 0], "t")
    for i, name in enumerate(["data", "fitted", "initial"]):
        assert_bitwise_equal(training[name], outputs[:, 1 + i * m : 1 + (i + 1) * m], name)
    assert training["relative_max"] == summary["relative_max_error"]
    _, cross = read_csv(out / "cross_validation.csv")
    assert_bitwise_equal(result.cross_validation["fitted"], cross[:, 1 + m :], "cross-validation")
    assert result.cross_validation["l2"] == summary["cross_validation"]["l2"]


def test_identification_from_arrays_equals_identification_from_files(tmp_path):
    # Measured inputs and outputs: the CLI reads them from CSV files, Python takes arrays.
    h, steps = 1e-3, 1000
    t = np.arange(steps + 1) * h
    u = np.column_stack([np.sin(2 * np.pi * 3 * t), np.cos(2 * np.pi * 5 * t) * t])
    reference = harbor.identify(EXAMPLES / "identify_synthetic.toml", backend="cpu", overrides=SHORT)
    y = reference.training["data"]
    for c in range(2):
        np.savetxt(tmp_path / f"u{c}.csv", np.column_stack([t, u[:, c]]), delimiter=",", fmt="%.17g")
    np.savetxt(tmp_path / "y.csv", np.column_stack([t, y]), delimiter=",", fmt="%.17g")
    config = {
        "scheme": {"family": "gauss", "stages": 2, "h": h, "t_end": 1.0},
        "model": {"order": 3, "fit": ["J", "R", "B"]},
        "monte_carlo": {"candidates": 128, "keep": 2},
        "optimizer": {"max_iterations": 20},
    }
    files = tmp_path / "files.toml"
    files.write_text(
        "\n".join(
            [f'[[input]]\nkind = "csv"\npath = "u{c}.csv"\n' for c in range(2)]
            + [
                '[scheme]\nfamily = "gauss"\nstages = 2\nh = 1e-3\nt_end = 1.0\n',
                '[data]\nfile = "y.csv"\n',
                '[model]\norder = 3\nfit = ["J", "R", "B"]\n',
                "[monte_carlo]\ncandidates = 128\nkeep = 2\n",
                "[optimizer]\nmax_iterations = 20\n",
            ]
        )
    )
    out = tmp_path / "out"
    run_cli("identify", files, "--out", out, "--backend", "cpu")
    arrays = {
        **config,
        "input": [{"kind": "samples", "t": t, "values": u[:, c]} for c in range(2)],
        "data": {"values": np.column_stack([t, y])},
    }
    result = harbor.identify(arrays, backend="cpu")
    for part in ["J", "R", "Q", "B", "x0"]:
        assert_bitwise_equal(getattr(result, part), np.load(out / "model" / f"{part}.npy"), part)
    assert_bitwise_equal(result.training["data"], y, "the data as given")
