# %% [markdown]
# # harbor from Python: an ensemble, its energy, and a model identified from arrays
#
# Run it as a script (`python python/examples/ensemble_and_identification.py [figure
# folder]`) or cell by cell in a notebook (Jupyter and VS Code read the `# %%` marks).
# The figures need matplotlib (`pip install matplotlib`); without it the numbers are
# printed all the same.

# %%
import pathlib
import sys

import numpy as np

import harbor

try:
    import matplotlib

    if "ipykernel" not in sys.modules:
        matplotlib.use("Agg")  # as a script: write the figures to files
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

FIGURES = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 and "ipykernel" not in sys.modules else ".")

# %% [markdown]
# ## An ensemble of damped oscillators driven by a measured input
#
# The config is a dict: NumPy arrays stand wherever a matrix or a signal goes. The input is
# a sampled signal (`kind = "samples"`), interpolated linearly between its samples. 2000
# members are drawn around the nominal system, each with its own J, R, Q, B and x0.

# %%
h, t_end = 0.01, 20.0
t_input = np.linspace(0.0, t_end, 2001)
u = np.sin(0.8 * t_input) * np.exp(-0.1 * t_input)

J = np.array([[0.0, 1.0], [-1.0, 0.0]])
R = np.diag([0.0, 0.15])
Q = np.diag([1.0, 2.0])
B = np.array([[0.0], [1.0]])

ensemble = {
    "system": {"kind": "linear-ph", "J": J, "R": R, "Q": Q, "B": B, "x0": np.array([1.0, 0.0])},
    "input": [{"kind": "samples", "t": t_input, "values": u}],
    "scheme": {"family": "gauss", "stages": 2, "h": h, "t_end": t_end},
    "output": {"every": 10},
    "ensemble": {
        "members": 2000,
        "seed": 7,
        "R": {"kind": "perturb", "sigma": 0.3},
        "Q": {"kind": "perturb", "sigma": 0.1},
        "x0": {"kind": "perturb", "sigma": 0.2},
    },
}
run = harbor.simulate(ensemble)  # backend="auto": a hardware GPU, else the CPU engine
print(run)

# Gauss collocation keeps the discrete energy balance exactly: stored = supplied
# (= port − dissipated) per member, up to round-off.
stored, supplied = run.total("stored_total"), run.total("supplied_total")
print(f"largest |stored − supplied| over {len(stored)} members: {np.max(np.abs(stored - supplied)):.2e}")

# %% [markdown]
# ## The energy of the ensemble
#
# `run.energy` holds, per member and recording window, the stored, supplied, port and
# dissipated energy; their running sums are the energies since t = 0.

# %%
stored_since_start = np.cumsum(run.energy[:, :, 0], axis=1)  # members × windows
window_end = run.times[1:]
low, median, high = np.percentile(stored_since_start, [5, 50, 95], axis=0)
print(f"stored energy at t = {t_end}: median {median[-1]:.4f}, 90 % of members in [{low[-1]:.4f}, {high[-1]:.4f}]")

if plt is not None:
    figure, axis = plt.subplots(figsize=(7, 4))
    axis.fill_between(window_end, low, high, alpha=0.3, label="5–95 % of members")
    axis.plot(window_end, median, label="median")
    for member in range(3):
        axis.plot(window_end, stored_since_start[member], lw=0.8, label=f"member {member}")
    axis.set_xlabel("t")
    axis.set_ylabel("H(x(t)) − H(x(0))")
    axis.set_title("stored energy of 2000 damped oscillators")
    axis.legend()
    figure.tight_layout()
    figure.savefig(FIGURES / "ensemble_energy.png", dpi=120)
    print(f"wrote {FIGURES / 'ensemble_energy.png'}")
else:
    print("matplotlib is not installed: no figure (pip install matplotlib)")

# %% [markdown]
# ## Identifying a model from measured inputs and outputs
#
# "Measurements": the outputs y_k = Bᵀ Q x_k of one oscillator at t_k = k h, with noise.
# They go to `harbor.identify` as arrays — the input as samples, the data as rows
# [t_k, y_k] — and a model of order 2 is fitted (J, R and B; Q = I).

# %%
one = harbor.simulate(
    {**{k: v for k, v in ensemble.items() if k != "ensemble"}, "output": {"every": 1}}, backend="cpu"
)
x = one.trajectory[0]  # samples × 2, t_k = k h
y = x @ (B.T @ Q).T + 0.002 * np.random.default_rng(1).standard_normal((len(x), 1))

identified = harbor.identify(
    {
        "input": [{"kind": "samples", "t": t_input, "values": u}],
        "scheme": {"family": "gauss", "stages": 2, "h": h, "t_end": t_end},
        "data": {"values": np.column_stack([one.times, y])},
        "model": {"order": 2, "fit": ["J", "R", "B"], "x0": x[0]},
        "monte_carlo": {"candidates": 512, "keep": 4},
        "optimizer": {"max_iterations": 150},
    }
)
print(identified)
print("identified J =\n", identified.J, "\nR =\n", identified.R, "\nB =\n", identified.B)
print(f"relative max-norm output error: {identified.training['relative_max']:.3e}")

if plt is not None:
    figure, (outputs, costs) = plt.subplots(1, 2, figsize=(10, 4))
    training = identified.training
    outputs.plot(training["times"], training["data"][:, 0], lw=2, label="data")
    outputs.plot(training["times"], training["fitted"][:, 0], label="fitted")
    outputs.set_xlabel("t")
    outputs.set_ylabel("y")
    outputs.legend()
    for start, history in enumerate(identified.cost_history):
        costs.semilogy(history, lw=2 if start == identified.best_start else 0.8)
    costs.set_xlabel("iteration")
    costs.set_ylabel("cost")
    figure.tight_layout()
    figure.savefig(FIGURES / "identification.png", dpi=120)
    print(f"wrote {FIGURES / 'identification.png'}")
