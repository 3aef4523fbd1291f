"""harbor.tableau and harbor.devices against `harbor tableau --json` and `harbor devices
--json`."""

import json

import numpy as np
import pytest

import harbor

from conftest import assert_bitwise_equal, run_cli


@pytest.mark.parametrize(
    "family, stages",
    [("gauss", 1), ("gauss", 4), ("gauss", 8), ("lobatto-iiia", 3), ("lobatto-iiib", 6), ("lobatto-pair", 3)],
)
def test_tables_equal_the_cli(family, stages):
    cli = json.loads(run_cli("tableau", family, str(stages), "--json").stdout)
    table = harbor.tableau(family, stages)
    assert (table.family, table.stages, table.order) == (cli["family"], cli["stages"], cli["order"])
    assert_bitwise_equal(table.c, np.array(cli["c"]), "c")
    assert_bitwise_equal(table.b, np.array(cli["b"]), "b")
    assert_bitwise_equal(table.m, np.array(cli["m"]), "m")
    if family == "lobatto-pair":
        assert_bitwise_equal(table.a, np.array(cli["a_positions"]), "a")
        assert_bitwise_equal(table.a_momenta, np.array(cli["a_momenta"]), "a_momenta")
    else:
        assert_bitwise_equal(table.a, np.array(cli["a"]), "a")
        assert table.a_momenta is None
    # Row sums of a are c (the simplifying assumption C(1)).
    assert np.allclose(table.a.sum(axis=1), table.c, rtol=0, atol=1e-15)


def test_devices_equal_the_cli():
    listed = harbor.devices()
    assert listed == json.loads(run_cli("devices", "--json").stdout)
    # CI runs on lavapipe: a missing adapter is a failure, not a skip.
    assert listed, "no GPU adapter: install lavapipe (mesa-vulkan-drivers)"
    assert {"name", "backend", "shader_f64", "software"} <= set(listed[0])
