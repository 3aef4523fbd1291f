"""python/examples/ensemble_and_identification.py runs as a script: the ensemble keeps its
energy balance, the model is identified from arrays, and the figures are drawn when
matplotlib is installed (and skipped with a note when it is not)."""

import pathlib
import re
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "ensemble_and_identification.py"


def test_the_example_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    balance = float(re.search(r"largest \|stored − supplied\| over 2000 members: (\S+)", out).group(1))
    assert balance < 1e-12, out
    error = float(re.search(r"relative max-norm output error: (\S+)", out).group(1))
    assert error < 0.05, out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
    else:
        assert (tmp_path / "ensemble_energy.png").is_file()
        assert (tmp_path / "identification.png").is_file()
