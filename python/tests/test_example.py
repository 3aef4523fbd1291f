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


def test_the_readme_python_example_runs(capsys):
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Python\n") :]
    code = section[section.index("```python\n") + len("```python\n") :]
    code = code[: code.index("```")]
    scope: dict = {}
    exec(compile(code, "README.md (Python)", "exec"), scope)
    fit = scope["fit"]
    assert fit.J.shape == (2, 2) and fit.training["relative_max"] < 0.01
    assert scope["stored"].shape == (2000, 2000)


def test_the_readme_command_prints_what_the_readme_shows():
    repository = pathlib.Path(__file__).resolve().parents[2]
    readme = (repository / "README.md").read_text()
    section = readme[readme.index("## Python\n") :]
    block = section[section.index("```sh\n") + len("```sh\n") :]
    lines = block[: block.index("```")].splitlines()
    command = next(line for line in lines if line.startswith("python -c "))
    shown = lines[lines.index(command) + 1]
    code = command[len('python -c "') : -1]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=repository, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "# " + done.stdout.strip() == shown
