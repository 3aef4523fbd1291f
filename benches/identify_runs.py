"""What the identification scripts of benches/ share: running `harbor identify` on an
example with overrides and reading its identification.json, and inclusive ranges "a-b"."""

import json
import subprocess
import sys
from pathlib import Path


def inclusive_range(text):
    """"3-7" → 3, 4, 5, 6, 7; "4" → 4."""
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def run_identify(harbor, example, overrides, out):
    """identification.json of `harbor identify example --out out --backend cpu --set …`;
    exits with harbor's stderr when it fails."""
    command = [harbor, "identify", str(example), "--out", str(out), "--backend", "cpu"]
    for override in overrides:
        command += ["--set", override]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads((Path(out) / "identification.json").read_text())
