"""Every error path raises the documented exception: ConfigError (a ValueError) naming the
field, the violated property and the measured value; ArrayError for arrays no config can
hold; NumericalError, DeviceError (RuntimeError), FileError (OSError); TypeError for
arguments of the wrong type. Nothing reaches Python as a PanicException."""

import copy
import warnings

import numpy as np
import pytest

import harbor

from conftest import EXAMPLES, assert_bitwise_equal, cli_simulate

PULSE = {
    "system": {
        "kind": "linear-ph",
        "J": np.array([[0.0, 1.0], [-1.0, 0.0]]),
        "Q": np.eye(2),
        "B": np.array([[0.0], [1.0]]),
        "x0": np.array([0.0, -1.0]),
    },
    "input": [{"kind": "pulse", "start": 8.0, "end": 10.0}],
    "scheme": {"family": "gauss", "stages": 2, "h": 0.01, "t_end": 18.0},
    "output": {"every": 10},
}


def pulse_with(path: str, value):
    """PULSE with the value at the dotted `path` (list indices as numbers) replaced."""
    config = copy.deepcopy(PULSE)
    node = config
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if key.isdigit() else node[key]
    node[keys[-1]] = value
    return config


def test_the_exceptions_derive_from_the_builtin_classes():
    assert issubclass(harbor.ConfigError, ValueError)
    assert issubclass(harbor.ArrayError, harbor.ConfigError)
    assert issubclass(harbor.NumericalError, RuntimeError)
    assert issubclass(harbor.DeviceError, RuntimeError)
    assert issubclass(harbor.FileError, OSError)
    assert issubclass(harbor.InternalError, RuntimeError)
    for error in [
        harbor.ConfigError,
        harbor.ArrayError,
        harbor.NumericalError,
        harbor.DeviceError,
        harbor.FileError,
        harbor.InternalError,
    ]:
        assert issubclass(error, harbor.HarborError)
        assert issubclass(error, Exception)


# (description, call, exception, words the message must hold: field, property, value)
BAD_INPUT = [
    (
        "R not positive semidefinite",
        lambda: harbor.simulate(pulse_with("system.R", np.diag([0.0, -0.1]))),
        harbor.ConfigError,
        ["system.R", "not positive semidefinite", "-1.000e-1"],
    ),
    (
        "J of the wrong shape",
        lambda: harbor.simulate(pulse_with("system.J", np.zeros((3, 3)))),
        harbor.ConfigError,
        ["system.J", "wrong shape", "2×2", "3 rows"],
    ),
    (
        "J with three axes",
        lambda: harbor.simulate(pulse_with("system.J", np.zeros((2, 2, 2)))),
        harbor.ConfigError,
        ["system.J[0][0]", "expected a number", "list"],
    ),
    (
        "J with one axis",
        lambda: harbor.simulate(pulse_with("system.J", np.zeros(4))),
        harbor.ConfigError,
        ["system.J[0]", "expected a list"],
    ),
    (
        "an unknown key",
        lambda: harbor.simulate(pulse_with("scheme.hh", 0.1)),
        harbor.ConfigError,
        ["scheme.hh", "unknown field", "expected one of"],
    ),
    (
        "a negative step",
        lambda: harbor.simulate(PULSE, overrides={"scheme.h": -0.01}),
        harbor.ConfigError,
        ["scheme.h", "> 0", "-0.01"],
    ),
    (
        "None in a config",
        lambda: harbor.simulate(pulse_with("scheme.h", None)),
        harbor.ConfigError,
        ["scheme.h", "None", "leave the key out"],
    ),
    (
        "a value TOML cannot hold",
        lambda: harbor.simulate(pulse_with("scheme.h", object())),
        harbor.ConfigError,
        ["scheme.h", "type object"],
    ),
    (
        "an override that is not key=value",
        lambda: harbor.simulate(PULSE, overrides=["scheme.h"]),
        harbor.ConfigError,
        ["overrides", "key=value", "scheme.h"],
    ),
    (
        "samples and times of different lengths",
        lambda: harbor.simulate(
            pulse_with("input", [{"kind": "samples", "t": np.linspace(0, 18, 10), "values": np.ones(9)}])
        ),
        harbor.ConfigError,
        ["input[0].values", "9 value(s)", "10 time(s)"],
    ),
    (
        "sample times that do not increase",
        lambda: harbor.simulate(
            pulse_with("input", [{"kind": "samples", "t": np.array([0.0, 2.0, 1.0]), "values": np.ones(3)}])
        ),
        harbor.ConfigError,
        ["input[0].t", "increase strictly", "t[2] = 1", "t[1] = 2"],
    ),
    (
        "a sample that is NaN",
        lambda: harbor.simulate(
            pulse_with("input", [{"kind": "samples", "t": np.array([0.0, 20.0]), "values": np.array([1.0, np.nan])}])
        ),
        harbor.ConfigError,
        ["input[0].values", "values[1] is NaN", "finite"],
    ),
    (
        "samples that do not cover the run",
        lambda: harbor.simulate(
            pulse_with("input", [{"kind": "samples", "t": np.array([0.0, 10.0]), "values": np.array([1.0, 2.0])}])
        ),
        harbor.ConfigError,
        ["input[0]", "cover [0, 10]", "[0, 18]"],
    ),
    (
        "TOML text that does not parse",
        lambda: harbor.simulate("[system\nkind = 1"),
        harbor.ConfigError,
        ["<toml text>", "line 1", "unclosed table"],
    ),
    (
        "an unknown backend",
        lambda: harbor.simulate(PULSE, backend="tpu"),
        harbor.ConfigError,
        ["backend", "tpu", "auto, gpu, cpu, reference, twin"],
    ),
    (
        "an unknown precision",
        lambda: harbor.simulate(PULSE, precision="f16"),
        harbor.ConfigError,
        ["precision", "f16", "f32 or f64"],
    ),
    (
        "f32 on the CPU",
        lambda: harbor.simulate(PULSE, backend="cpu", precision="f32"),
        harbor.ConfigError,
        ["precision", "f64 only"],
    ),
    (
        "an adapter that is not there",
        lambda: harbor.simulate(PULSE, backend="gpu", adapter="no such adapter"),
        harbor.ConfigError,
        ["adapter", "no such adapter", "available"],
    ),
    (
        "a memory budget that is not a size",
        lambda: harbor.simulate(PULSE, memory_budget="lots"),
        harbor.ConfigError,
        ["memory_budget", "lots", "not a size"],
    ),
    (
        "a memory budget below the least",
        lambda: harbor.simulate(PULSE, memory_budget=1000),
        harbor.ConfigError,
        ["memory_budget", "at least 16.00 MiB", "1000 B"],
    ),
    (
        "no members",
        lambda: harbor.simulate(PULSE, members=0),
        harbor.ConfigError,
        ["ensemble.members", "≥ 1", "0"],
    ),
    (
        "more members than memory",
        lambda: harbor.simulate(EXAMPLES / "oscillator_ensemble.toml", members=10**9),
        harbor.ConfigError,
        ["ensemble.members", "of arrays", "available"],
    ),
    (
        "an energy that overflows before the first step",
        lambda: harbor.simulate(pulse_with("system.x0", np.array([1e308, 1e308]))),
        harbor.ConfigError,
        ["system.Q", "H(x0)", "inf"],
    ),
    (
        "a boundary-value solve beyond lavapipe's loop budget",
        lambda: harbor.simulate(EXAMPLES / "variational_sphere_spline.toml", backend="gpu"),
        harbor.DeviceError,
        ["gpu:", "loop iterations", "backend cpu"],
    ),
    (
        "a config file that is not there",
        lambda: harbor.simulate("/nonexistent/run.toml"),
        harbor.FileError,
        ["/nonexistent/run.toml", "No such file"],
    ),
    (
        "a CSV input that is not there",
        lambda: harbor.simulate(pulse_with("input", [{"kind": "csv", "path": "/nonexistent/u.csv"}])),
        harbor.ConfigError,
        ["input[0].path", "/nonexistent/u.csv"],
    ),
    (
        "measured outputs with the wrong number of columns",
        lambda: harbor.gradient(
            EXAMPLES / "gradient_check.toml",
            overrides={"data.reference": None, "data.values": np.zeros((1001, 2))},
        ),
        harbor.ConfigError,
        ["data.values", "row 0 has 2 column(s)", "1 + m = 3"],
    ),
    (
        "measured outputs off the grid",
        lambda: harbor.gradient(
            EXAMPLES / "gradient_check.toml",
            overrides={"data.reference": None, "data.values": np.zeros((1001, 3))},
        ),
        harbor.ConfigError,
        ["data.values", "row 1 has t = 0", "t_k = k h = 0.001"],
    ),
    (
        "both measured and simulated outputs",
        lambda: harbor.gradient(
            EXAMPLES / "gradient_check.toml", overrides={"data.values": np.zeros((3, 3))}
        ),
        harbor.ConfigError,
        ["data", "exactly one of data.file, data.values"],
    ),
    (
        "a model order of zero",
        lambda: harbor.identify(EXAMPLES / "identify_synthetic.toml", overrides={"model.order": 0}),
        harbor.ConfigError,
        ["model.order", "≥ 1", "0"],
    ),
    (
        "a work limit that is not positive",
        lambda: harbor.identify(EXAMPLES / "identify_synthetic.toml", work_limit=-1.0),
        harbor.ConfigError,
        ["work_limit", "-1"],
    ),
    (
        "a table of too many stages",
        lambda: harbor.tableau("gauss", 9),
        harbor.ConfigError,
        ["stages", "1..=8", "9"],
    ),
    (
        "a table of a negative number of stages",
        lambda: harbor.tableau("gauss", -1),
        harbor.ConfigError,
        ["stages", "≥ 1", "-1"],
    ),
    (
        "a table of an unknown family",
        lambda: harbor.tableau("radau", 3),
        harbor.ConfigError,
        ["family", "radau", "gauss, lobatto-iiia, lobatto-iiib or lobatto-pair"],
    ),
]


@pytest.mark.parametrize("case", BAD_INPUT, ids=[case[0] for case in BAD_INPUT])
def test_bad_input_raises_the_documented_exception_naming_the_field(case):
    _, call, exception, words = case
    with pytest.raises(exception) as raised:
        call()
    message = str(raised.value)
    for word in words:
        assert word in message, f"{word!r} is not in the message: {message}"


@pytest.mark.parametrize(
    "dtype, why",
    [
        (np.complex128, "complex"),
        (object, "Python objects"),
        (np.str_, "strings"),
        (np.longdouble, "extended precision"),
        ("datetime64[s]", "not a number"),
    ],
)
def test_arrays_no_config_can_hold_raise_array_error(dtype, why):
    if np.dtype(dtype) == np.dtype(np.float64):
        pytest.fail("this platform's longdouble is float64; pick another extended type")
    values = np.zeros((2, 2)).astype(dtype)
    with pytest.raises(harbor.ArrayError) as raised:
        harbor.simulate(pulse_with("system.J", values))
    message = str(raised.value)
    assert "system.J" in message and str(values.dtype) in message and why in message


def test_uint64_beyond_int64_is_refused():
    with pytest.raises(harbor.ArrayError, match="largest 64-bit signed integer"):
        harbor.simulate(pulse_with("system.x0", np.array([2**63, 0], dtype=np.uint64)))


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: harbor.simulate(42), "config"),
        (lambda: harbor.simulate(PULSE, overrides=3), "overrides"),
        (lambda: harbor.simulate(PULSE, memory_budget=[1]), "memory_budget"),
        (lambda: harbor.simulate(PULSE, progress="yes"), "progress"),
        (lambda: harbor.gradient(3.5), "config"),
    ],
)
def test_arguments_of_the_wrong_type_raise_type_error(call, argument):
    with pytest.raises(TypeError, match=argument):
        call()


def test_nonfinite_members_raise_unless_kept_and_are_kept_as_the_cli_keeps_them(tmp_path):
    # The pulse with an amplitude whose square overflows: the energies are ±inf from the
    # first step of the pulse (t = 8, step 801) on (tests/nonfinite.rs).
    overflowing = {"input.0.amplitude": 1.7976931348623157e308}
    with pytest.raises(harbor.NumericalError) as raised:
        harbor.simulate(PULSE, backend="cpu", overrides=overflowing)
    message = str(raised.value)
    assert "1 of 1 member(s) became non-finite" in message
    assert "member 0 after step 801" in message and "keep_nonfinite=True" in message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kept = harbor.simulate(PULSE, backend="cpu", overrides=overflowing, keep_nonfinite=True)
    assert any(issubclass(w.category, RuntimeWarning) and "non-finite" in str(w.message) for w in caught)
    assert kept.nonfinite_step.tolist() == [801]
    assert kept.summary["nonfinite"] == {"members": 1, "first": [{"member": 0, "step": 801}]}
    cli = cli_simulate(
        EXAMPLES / "oscillator_pulse.toml",
        tmp_path / "out",
        "--backend", "cpu", "--keep-nonfinite",
        "--set", "input.0.amplitude=1.7976931348623157e308",
    )
    assert_bitwise_equal(kept.nonfinite_step, cli["nonfinite_step"], "nonfinite_step")
    assert_bitwise_equal(kept.energy, cli["energy"], "energy")
