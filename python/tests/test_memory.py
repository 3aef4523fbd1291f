"""A 10⁵-member run returns its trajectory without copying it more than once: the run
writes each value once into the buffer that the NumPy array then owns (no copy to hand it
over), so the process's peak memory grows by about the trajectory's size, not twice that.

Measured in a fresh interpreter: the peak resident set size is reset to the current one
just before the run (Linux: writing 5 to /proc/self/clear_refs resets VmHWM) and read after
it; the numbers are printed (pytest -s)."""

import json
import subprocess
import sys
import textwrap

from conftest import EXAMPLES

MEASURE = textwrap.dedent(
    """
    import json, sys
    import harbor

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    def reset_peak():
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")

    config = sys.argv[1]
    switches = {"output.every": 10, "output.energy": False, "output.outputs": False}
    # Everything loaded and touched once on a small run.
    harbor.simulate(config, backend="cpu", members=1000, overrides=switches)
    reset_peak()
    before = status("VmRSS")
    result = harbor.simulate(
        config, backend="cpu", members=100_000, memory_budget="64MiB", overrides=switches
    )
    after = status("VmHWM")
    trajectory = result.trajectory
    print(json.dumps({
        "shape": trajectory.shape,
        "trajectory_bytes": trajectory.nbytes,
        "arrays_bytes": sum(a.nbytes for a in [result.times, trajectory, result.final_state,
                                               result.totals, result.nonfinite_step]),
        "peak_before": before,
        "peak_after": after,
        "owndata": bool(trajectory.flags.owndata),
        "base": type(trajectory.base).__name__,
        "writeable": bool(trajectory.flags.writeable),
        "c_contiguous": bool(trajectory.flags.c_contiguous),
    }))
    """
)


def test_a_hundred_thousand_members_cost_one_trajectory_of_memory():
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(EXAMPLES / "oscillator_ensemble.toml")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    print("\n10⁵-member run:", json.dumps(measured, indent=1))
    assert measured["shape"] == [100_000, 181, 2]
    # The array owns no data of NumPy's: its base is the Rust buffer the run filled.
    assert not measured["owndata"] and measured["base"] == "PySliceContainer"
    assert measured["writeable"] and measured["c_contiguous"]
    growth = measured["peak_after"] - measured["peak_before"]
    trajectory = measured["trajectory_bytes"]
    # One copy: the arrays plus the chunks in flight (a 64 MiB budget holds 16 MiB of
    # results, twice) and the allocator's slack; a second copy would add 290 MB more.
    assert growth < measured["arrays_bytes"] + 64 * 2**20, (
        f"the peak grew by {growth / 2**20:.0f} MiB for a trajectory of {trajectory / 2**20:.0f} MiB"
    )
    assert growth > 0.9 * trajectory, "the measurement does not see the trajectory"
