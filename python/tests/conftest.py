"""Shared fixtures: the harbor CLI (the reference the package is checked against), the
repository's example configs, and reading what the CLI writes.

The CLI is ``$HARBOR_BIN`` (scripts/test sets it), else ``target/release/harbor`` of this
repository; a missing binary fails the tests that need it, it never skips them. Tests run
against the installed package, never the source tree (``test_install.py`` checks that).
"""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPOSITORY / "examples"


def harbor_bin() -> pathlib.Path:
    """The CLI binary: $HARBOR_BIN, else target/release/harbor."""
    path = pathlib.Path(os.environ.get("HARBOR_BIN", REPOSITORY / "target" / "release" / "harbor"))
    if not path.is_file():
        pytest.fail(
            f"the harbor CLI is not at {path}: build it (cargo build --release) or set HARBOR_BIN"
        )
    return path


def run_cli(*args, check=True) -> subprocess.CompletedProcess:
    """Runs `harbor <args>` and returns the finished process (stdout, stderr as text)."""
    done = subprocess.run(
        [str(harbor_bin()), *map(str, args)], capture_output=True, text=True, timeout=600
    )
    if check and done.returncode != 0:
        raise AssertionError(f"harbor {' '.join(map(str, args))} failed:\n{done.stderr}")
    return done


def cli_simulate(config, out: pathlib.Path, *args) -> dict:
    """`harbor simulate config --out out args…`: every array file by stem, and "summary"."""
    run_cli("simulate", config, "--out", out, *args)
    files = {path.stem: np.load(path) for path in out.glob("*.npy")}
    files["summary"] = json.loads((out / "summary.json").read_text())
    return files


def assert_bitwise_equal(actual: np.ndarray, expected: np.ndarray, what: str):
    """Same shape, same dtype, and every value the same bits (NaN included)."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if actual.dtype.kind == "f":
        same = actual.view(np.uint64) == expected.view(np.uint64)
    else:
        same = actual == expected
    if not np.all(same):
        first = np.argwhere(~same)[0]
        raise AssertionError(
            f"{what}: {np.count_nonzero(~same)} value(s) differ, first at {tuple(first)}: "
            f"{actual[tuple(first)]!r} != {expected[tuple(first)]!r}"
        )


# Keys of summary.json that measure the run (wall time) or list its files.
RUN_DEPENDENT_KEYS = {"seconds", "member_steps_per_second", "files"}


def summary_without_timing(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in RUN_DEPENDENT_KEYS}


@pytest.fixture
def examples() -> pathlib.Path:
    return EXAMPLES
