"""NumPy arrays wherever a config takes a matrix, a signal or data: a dict config with
arrays gives the results of the TOML file it mirrors bit for bit, input samples handed as
arrays give those of the same samples in a CSV file, measured outputs handed as an array
give those of the same rows in a file — through the CLI."""

import json

import numpy as np
import pytest

import harbor

from conftest import EXAMPLES, assert_bitwise_equal, cli_simulate, run_cli

PULSE = {
    "system": {
        "kind": "linear-ph",
        "J": np.array([[0.0, 1.0], [-1.0, 0.0]]),
        "R": np.zeros((2, 2)),
        "Q": np.eye(2),
        "B": np.array([[0.0], [1.0]]),
        "x0": np.array([0.0, -1.0]),
    },
    "input": [{"kind": "pulse", "start": 8.0, "end": 10.0}],
    "scheme": {"family": "gauss", "stages": 2, "h": 0.01, "t_end": 18.0},
    "output": {"every": 10},
}


def test_a_dict_with_arrays_equals_its_toml_file(tmp_path):
    # examples/oscillator_pulse.toml written as a dict of arrays.
    from_dict = harbor.simulate(PULSE, backend="cpu")
    from_file = harbor.simulate(EXAMPLES / "oscillator_pulse.toml", backend="cpu")
    for name in ["times", "trajectory", "final_state", "totals", "energy", "outputs"]:
        assert_bitwise_equal(getattr(from_dict, name), getattr(from_file, name), name)


def test_toml_text_equals_its_file():
    text = (EXAMPLES / "oscillator_pulse.toml").read_text()
    from_text = harbor.simulate(text, backend="cpu")
    from_file = harbor.simulate(str(EXAMPLES / "oscillator_pulse.toml"), backend="cpu")
    assert_bitwise_equal(from_text.trajectory, from_file.trajectory, "trajectory")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.int8])
def test_arrays_of_any_real_dtype_are_read_by_value(dtype):
    j = np.array([[0, 1], [-1, 0]]).astype(dtype)
    q = np.eye(2, dtype=np.uint8)
    config = {**PULSE, "system": {**PULSE["system"], "J": j, "Q": q}}
    result = harbor.simulate(config, backend="cpu")
    expected = harbor.simulate(PULSE, backend="cpu")
    assert_bitwise_equal(result.final_state, expected.final_state, str(dtype))


def test_strided_and_scalar_arrays_are_read_in_logical_order():
    q = np.array([[2.0, 0.5], [0.5, 1.0]])
    plain = harbor.simulate({**PULSE, "system": {**PULSE["system"], "Q": q}}, backend="cpu")
    fortran = np.asfortranarray(q)
    strided = np.zeros((4, 4))[::2, ::2]
    strided[...] = q
    h = {**PULSE["scheme"], "h": np.float64(0.01), "stages": np.int64(2)}
    for name, value in [("Fortran-ordered", fortran), ("strided", strided)]:
        result = harbor.simulate(
            {**PULSE, "system": {**PULSE["system"], "Q": value}, "scheme": h}, backend="cpu"
        )
        assert_bitwise_equal(result.final_state, plain.final_state, name)


def test_input_samples_as_arrays_equal_a_csv_file_through_the_cli(tmp_path):
    t = np.linspace(0.0, 18.0, 181)
    u = np.sin(0.7 * t) ** 3
    csv = tmp_path / "u.csv"
    np.savetxt(csv, np.column_stack([t, u]), delimiter=",", fmt="%.17g")
    config = tmp_path / "config.toml"
    config.write_text(
        """
[system]
kind = "linear-ph"
J = [[0.0, 1.0], [-1.0, 0.0]]
Q = [[1.0, 0.0], [0.0, 1.0]]
B = [[0.0], [1.0]]
x0 = [0.0, -1.0]

[[input]]
kind = "csv"
path = "u.csv"

[scheme]
family = "gauss"
stages = 2
h = 0.01
t_end = 18.0

[output]
every = 10
"""
    )
    cli = cli_simulate(config, tmp_path / "out", "--backend", "cpu")
    system = {k: v for k, v in PULSE["system"].items() if k != "R"}
    arrays = {**PULSE, "system": system, "input": [{"kind": "samples", "t": t, "values": u}]}
    result = harbor.simulate(arrays, backend="cpu")
    for name in ["trajectory", "final_state", "totals", "energy", "outputs"]:
        assert_bitwise_equal(getattr(result, name), cli[name], name)


def test_overrides_take_arrays_and_none_removes_a_key():
    x0 = np.array([0.5, 0.25])
    result = harbor.simulate(PULSE, backend="cpu", overrides={"system.x0": x0, "system.R": None})
    assert_bitwise_equal(result.trajectory[0, 0], x0, "the first sample")
    listed = harbor.simulate(PULSE, backend="cpu", overrides=["system.x0=[0.5, 0.25]"])
    assert_bitwise_equal(listed.final_state, result.final_state, "final_state")


def measured_problem(tmp_path, rows):
    """examples/gradient_check.toml with its data measured (`rows` in an NPY file) instead
    of simulated from a reference model."""
    data = tmp_path / "y.npy"
    np.save(data, rows)
    text = (EXAMPLES / "gradient_check.toml").read_text()
    start, end = text.index("[data]"), text.index("[cost]")
    measured = tmp_path / "measured.toml"
    measured.write_text(text[:start] + f'[data]\nfile = "{data}"\n\n' + text[end:])
    return measured


def test_measured_outputs_as_an_array_equal_a_data_file_through_the_cli(tmp_path):
    t = np.arange(1001) * 1e-3
    noise = np.random.default_rng(7).standard_normal((1001, 2))
    rows = np.column_stack([t, np.sin(3 * t), np.cos(5 * t)])
    rows[:, 1:] += 0.01 * noise
    problem = measured_problem(tmp_path, rows)
    out = tmp_path / "out"
    run_cli("gradient", problem, "--out", out, "--backend", "cpu")
    cli = json.loads((out / "gradient.json").read_text())
    from_array = harbor.gradient(
        problem, backend="cpu", overrides={"data.file": None, "data.values": rows}
    )
    assert from_array.cost == cli["cost"]
    for part in ["J", "R", "Q", "B", "x0"]:
        assert_bitwise_equal(getattr(from_array, part), np.array(cli["grad"][part]), part)
