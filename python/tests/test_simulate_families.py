"""harbor.simulate against `harbor simulate`: for every family, on the fast CPU engine and
on the GPU (lavapipe in CI), the arrays are the CLI's .npy files bit for bit and the summary
is summary.json but for the wall time."""

import numpy as np
import pytest

import harbor

from conftest import EXAMPLES, assert_bitwise_equal, cli_simulate, summary_without_timing

# (config, overrides as --set arguments): one or two configs per family, sized for lavapipe
# (boundary-value problems at an h whose solve fits lavapipe's loop budget).
CASES = {
    "linear-ph": ("oscillator_pulse.toml", []),
    "linear-ph-ensemble": (
        "oscillator_ensemble.toml",
        ["ensemble.members=512", "scheme.t_end=2.0"],
    ),
    "mechanical": ("starters/mechanical.toml", []),
    "contact": ("contact_damped_oscillator.toml", []),
    "contact-expression": ("contact_expression_double_well.toml", ["scheme.t_end=20.0"]),
    "port-hamiltonian": (
        "pendulum_damped_forced.toml",
        ["ensemble.members=64", "scheme.t_end=2.0"],
    ),
    "variational-initial-value": (
        "variational_forced_oscillator.toml",
        ["ensemble.members=32"],
    ),
    "variational-boundary-value": ("variational_cubic_spline.toml", ["scheme.h=0.025"]),
    "variational-sphere": (
        "variational_sphere_spline.toml",
        ["scheme.h=0.02", "ensemble.members=8"],
    ),
}

FAMILY = {
    "linear-ph": "linear-ph",
    "linear-ph-ensemble": "linear-ph",
    "mechanical": "linear-ph",
    "contact": "contact",
    "contact-expression": "contact",
    "port-hamiltonian": "port-hamiltonian",
    "variational-initial-value": "variational",
    "variational-boundary-value": "variational",
    "variational-sphere": "variational",
}


def assert_same_as_cli(result: harbor.SimulationResult, cli: dict):
    """Every array of the CLI's run equals the result's, and the summaries agree."""
    arrays = {
        "times": result.times,
        "final_state": result.final_state,
        "totals": result.totals,
        "nonfinite_step": result.nonfinite_step,
        **result.channels,
    }
    if result.trajectory is not None:
        arrays["trajectory"] = result.trajectory
    files = {name for name in cli if name != "summary"}
    assert set(arrays) == files, f"arrays {sorted(arrays)} but files {sorted(files)}"
    for name in sorted(files):
        assert_bitwise_equal(arrays[name], cli[name], name)
    assert summary_without_timing(result.summary) == summary_without_timing(cli["summary"])


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_family_equals_the_cli_bit_for_bit(case, backend, tmp_path):
    config, sets = CASES[case]
    path = EXAMPLES / config
    cli = cli_simulate(path, tmp_path / "out", "--backend", backend, *[a for s in sets for a in ("--set", s)])
    result = harbor.simulate(path, backend=backend, overrides=sets)
    assert result.family == FAMILY[case]
    assert result.engine == cli["summary"]["engine"]
    if backend == "gpu":
        assert result.backend.startswith("gpu: "), result.backend
        assert result.engine == "kernel"
    assert_same_as_cli(result, cli)


def test_the_readme_command_gives_the_clis_numbers(tmp_path):
    # python -c "import harbor; r = harbor.simulate('examples/oscillator_pulse.toml'); print(r.final_state)"
    result = harbor.simulate(str(EXAMPLES / "oscillator_pulse.toml"))
    cli = cli_simulate(EXAMPLES / "oscillator_pulse.toml", tmp_path / "out")
    assert_bitwise_equal(result.final_state, cli["final_state"], "final_state")
    assert result.backend == cli["summary"]["backend"]


def test_twin_and_reference_backends_equal_the_cli(tmp_path):
    path = EXAMPLES / "oscillator_pulse.toml"
    for backend in ["twin", "reference"]:
        cli = cli_simulate(path, tmp_path / backend, "--backend", backend)
        assert_same_as_cli(harbor.simulate(path, backend=backend), cli)


def test_members_sets_the_ensemble_size(tmp_path):
    path = EXAMPLES / "oscillator_ensemble.toml"
    sets = ["scheme.t_end=1.0"]
    result = harbor.simulate(path, backend="cpu", members=100, overrides=sets)
    cli = cli_simulate(
        path, tmp_path / "out", "--backend", "cpu", "--set", "ensemble.members=100", "--set", sets[0]
    )
    assert result.final_state.shape == (100, 2)
    assert_same_as_cli(result, cli)


def test_channels_and_totals_are_named():
    result = harbor.simulate(EXAMPLES / "oscillator_pulse.toml", backend="cpu")
    assert result.totals_names == (
        "stored_total",
        "supplied_total",
        "port_total",
        "dissipated_total",
        "max_abs_residual",
    )
    assert result.energy is result.channels["energy"]
    assert result.outputs is result.channels["outputs"]
    stored = result.total("stored_total")
    assert_bitwise_equal(stored, result.totals[:, 0], "stored_total")
    with pytest.raises(KeyError, match="stored_total"):
        result.total("stored")
    contact = harbor.simulate(EXAMPLES / "contact_damped_oscillator.toml", backend="cpu")
    assert contact.energy is None and contact.outputs is None
    assert list(contact.channels) == ["hamiltonian"]
    variational = harbor.simulate(
        EXAMPLES / "variational_cubic_spline.toml", backend="cpu"
    )
    assert variational.trajectory is None and "path" in variational.channels
    assert "SimulationResult(family=\"variational\"" in repr(variational)


def test_output_switches_drop_arrays_as_the_cli_does(tmp_path):
    path = EXAMPLES / "oscillator_pulse.toml"
    sets = ["output.trajectory=false", "output.energy=false", "output.outputs=false"]
    result = harbor.simulate(path, backend="cpu", overrides=sets)
    assert result.trajectory is None and result.channels == {}
    assert result.totals.shape == (1, 0)
    cli = cli_simulate(path, tmp_path / "out", "--backend", "cpu", *[a for s in sets for a in ("--set", s)])
    assert_same_as_cli(result, cli)


def test_f32_on_the_gpu_equals_the_cli(tmp_path):
    path = EXAMPLES / "oscillator_pulse.toml"
    cli = cli_simulate(path, tmp_path / "out", "--backend", "gpu", "--precision", "f32")
    result = harbor.simulate(path, backend="gpu", precision="f32")
    assert result.precision == "f32"
    assert_same_as_cli(result, cli)
