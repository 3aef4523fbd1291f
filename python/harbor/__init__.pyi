"""harbor from Python: structure-preserving ensembles of port-Hamiltonian, contact,
nonlinear port-Hamiltonian and variational systems on the GPU and the CPU, gradients and
identification of port-Hamiltonian models, with NumPy arrays in and out.

Every running function takes the config of the matching ``harbor`` command:

- a ``pathlib.Path`` (any ``os.PathLike``), or a ``str`` without a newline or ``=``: the
  path of a TOML file; relative paths inside it resolve against its folder;
- a ``str`` holding a newline or ``=``: TOML text;
- a ``dict`` of the config's tables, NumPy arrays wherever a matrix, a signal or data goes
  (``{"system": {"J": J, ...}}``, an input ``{"kind": "samples", "t": t, "values": u}``,
  measured outputs ``{"data": {"values": np.column_stack([t, y])}}``).

Relative paths of text and dicts resolve against ``base_dir`` (the working directory unless
given). ``overrides`` is a dict of dotted paths to values (``{"scheme.h": 0.005}``) or a list
of ``"key=value"`` strings as the CLI's ``--set`` takes them.

Runs release the GIL, show nothing unless ``progress`` asks (``True``: a tqdm bar when tqdm
is installed, else a line on stderr; a callable: called with a :class:`Progress`), and stop
on Ctrl-C with ``KeyboardInterrupt`` (nothing is returned). Bad input raises
:class:`ConfigError` (a ``ValueError``) whose message names the field, the violated property
and the measured value; the backend's choice and the library's notices go to the
``harbor`` logger (``logging``).
"""

import os
from typing import Any, Callable, Literal, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

Config = Union[str, os.PathLike[str], Mapping[str, Any]]
"""A path, TOML text, or a dict of the config's tables (NumPy arrays allowed as values)."""

Overrides = Union[Mapping[str, Any], Sequence[str], None]
"""Dotted paths to values, or ``"key=value"`` strings (the value written as TOML)."""

Backend = Literal["auto", "gpu", "cpu", "reference", "twin"]
"""``auto``: the best hardware GPU, else the fast CPU engine (also over software
rasterisers such as llvmpipe, which are slower); ``gpu``: the best adapter, software or not
(lavapipe included), an error without one; ``cpu``: the fast f64 CPU engine on all cores
(families without one: their reference integrator); ``reference``: the f64 reference
integrator; ``twin``: the GPU kernel's f64 CPU twin through the GPU's executor."""

class Progress(NamedTuple):
    """Where a long call stands, as a ``progress`` callable receives it.

    ``phase`` is ``"simulate"`` or ``"gradient"`` (``done`` and ``total`` in member-steps),
    ``"monte-carlo"`` (candidates evaluated of ``monte_carlo.candidates``) or ``"descent"``
    (iterations, of ``optimizer.max_iterations`` at most); ``best_cost`` is the lowest cost so
    far during an identification, else None. Reports come at most ten times a second, the
    last one always.
    """

    phase: str
    done: int
    total: int
    best_cost: Optional[float] = None

ProgressArgument = Union[bool, None, Callable[[Progress], object]]

class SimulationResult:
    """The results of :func:`simulate`: NumPy arrays indexed by member first, holding what
    the files of ``harbor simulate`` hold, and the run's summary. The arrays own buffers
    filled once by the run (no copy is made to hand them over)."""

    family: str
    """``linear-ph`` (also for ``mechanical`` configs), ``contact``, ``port-hamiltonian`` or
    ``variational``."""
    times: npt.NDArray[np.float64]
    """Sample times, t = 0 first: (samples,)."""
    trajectory: Optional[npt.NDArray[np.float64]]
    """States at the sample times: (members, samples, state); contact: [x, p, z]. None when
    the run records none (``output.trajectory = false``; variational runs record their
    path as the channel ``path``)."""
    final_state: npt.NDArray[np.float64]
    """Per-member final states: (members, state)."""
    totals: npt.NDArray[np.float64]
    """Per-member totals: (members, totals), columns named by ``totals_names``."""
    totals_names: tuple[str, ...]
    """The columns of ``totals`` (linear PH: ``stored_total``, ``supplied_total``,
    ``port_total``, ``dissipated_total``, ``max_abs_residual``; contact: ``initial``,
    ``final`` of H; …)."""
    nonfinite_step: npt.NDArray[np.int64]
    """Per member: 0 while finite, else the first step after which it was not."""
    energy: Optional[npt.NDArray[np.float64]]
    """The channel ``energy``: PH families (members, windows, 4) of stored, supplied, port
    and dissipated energy per recording window; variational (members, records), the
    energy E = q̇·∂L/∂q̇ − L at each record point (first-order Lagrangians). None when not
    recorded."""
    outputs: Optional[npt.NDArray[np.float64]]
    """The channel ``outputs``, the discrete outputs y^k: (members, records, s, m). None
    when not recorded."""
    channels: dict[str, npt.NDArray[np.float64]]
    """Every channel the family records by name, as the ``<name>.npy`` files
    (``energy``, ``outputs``, ``hamiltonian``, ``path``, ``multipliers``, ``momentum``,
    ``observables``, …)."""
    summary: dict[str, Any]
    """summary.json's content without its list of files: the run, the statistics of every
    total and final-state component, per-member lists up to 4096 members, ``nonfinite``."""
    backend: str
    """The backend's label: ``cpu``, ``cpu-reference``, the twin's, or ``gpu: <adapter>``."""
    engine: str
    """What integrated the members: ``fast``, ``reference``, ``twin`` or ``kernel``."""
    precision: str
    """``f64``, or ``f32`` on a GPU asked for it."""

    def total(self, name: str) -> npt.NDArray[np.float64]:
        """The column of ``totals`` called ``name``; ``KeyError`` names the totals."""

class GradientResult:
    """Cost and gradient of :func:`gradient` (gradient.json's content as arrays). For one
    ``[candidate]`` the cost is a float and each gradient a matrix; for a batch
    (``[candidates]``) the cost is an array over the candidates and every gradient has a
    leading candidate axis."""

    batch: bool
    """Whether the problem was a batch of candidates."""
    cost: Union[float, npt.NDArray[np.float64]]
    """𝒥(w): a float, or (candidates,)."""
    J: npt.NDArray[np.float64]
    """∇_J 𝒥, skew: (n, n) or (candidates, n, n)."""
    R: npt.NDArray[np.float64]
    """∇_R 𝒥, symmetric: (n, n) or (candidates, n, n)."""
    Q: npt.NDArray[np.float64]
    """∇_Q 𝒥, symmetric: (n, n) or (candidates, n, n)."""
    B: npt.NDArray[np.float64]
    """∇_B 𝒥: (n, m) or (candidates, n, m)."""
    x0: npt.NDArray[np.float64]
    """∇_x0 𝒥: (n,) or (candidates, n)."""
    backend: str
    """The backend's label."""

class IdentifyResult:
    """What :func:`identify` found: the best start's model, every start's cost history and
    the fitted outputs beside the data."""

    J: npt.NDArray[np.float64]
    """The identified J (skew): (n, n)."""
    R: npt.NDArray[np.float64]
    """The identified R (symmetric positive semidefinite): (n, n)."""
    Q: npt.NDArray[np.float64]
    """The identified Q (symmetric positive definite): (n, n)."""
    B: npt.NDArray[np.float64]
    """The identified B: (n, m)."""
    x0: npt.NDArray[np.float64]
    """The identified x0: (n,)."""
    cost_initial: float
    """The best start's cost before its descent (its Monte-Carlo candidate's, or its
    ``initial_guess``'s)."""
    cost_final: float
    """The best start's final cost."""
    cost_history: list[npt.NDArray[np.float64]]
    """Per start, 𝒥(w_k) for k = 0…iterations."""
    best_start: int
    """The index of the best start in ``cost_history``."""
    training: dict[str, Any]
    """The training outputs: ``times`` (N + 1,), ``data``, ``fitted`` and ``initial``
    (N + 1, m; ``initial``: the best start's outputs before the descent), and the errors
    ``l2``, ``max`` and ``relative_max`` (‖y − d‖∞ / ‖d‖∞)."""
    cross_validation: Optional[dict[str, Any]]
    """The same on the test inputs (``[[test_input]]``, without ``initial``), or None."""
    summary: dict[str, Any]
    """identification.json's content."""
    backend: str
    """The backend's label."""

class Tableau:
    """A collocation Butcher table (c, a, b) with the mass matrix m_ij = ∫₀¹ ℓ_i ℓ_j of its
    Lagrange basis. For ``lobatto-pair``, ``a`` is Lobatto IIIA's (positions) and
    ``a_momenta`` Lobatto IIIB's; the pair shares c, b and m."""

    family: str
    stages: int
    order: int
    c: npt.NDArray[np.float64]
    """Nodes c_i: (s,)."""
    b: npt.NDArray[np.float64]
    """Weights b_j: (s,)."""
    a: npt.NDArray[np.float64]
    """Coefficients a_ij: (s, s)."""
    a_momenta: Optional[npt.NDArray[np.float64]]
    """Lobatto IIIB's a_ij for ``lobatto-pair``, else None."""
    m: npt.NDArray[np.float64]
    """The mass matrix: (s, s)."""

def simulate(
    config: Config,
    *,
    backend: Backend = "auto",
    members: Optional[int] = None,
    overrides: Overrides = None,
    adapter: Optional[str] = None,
    precision: Optional[Literal["f32", "f64"]] = None,
    memory_budget: Union[int, str, None] = None,
    keep_nonfinite: bool = False,
    progress: ProgressArgument = None,
    base_dir: Union[str, os.PathLike[str], None] = None,
) -> SimulationResult:
    """Integrates the system (or ensemble) of a ``harbor simulate`` config — any family:
    ``linear-ph``, ``mechanical``, ``contact``, ``port-hamiltonian``, ``variational`` — and
    returns its arrays, equal bit for bit to the ``.npy`` files the CLI writes for the same
    config and backend.

    ``members`` sets ``ensemble.members``. ``adapter`` picks the GPU adapter whose name
    contains it; ``precision`` the GPU precision (f64 where supported). ``memory_budget``
    (bytes, or a size such as ``"512MiB"``; default 1 GiB) sizes the chunks of members in
    flight; the whole run's arrays and what is in flight must fit the memory available,
    which is checked before any work. Members that become non-finite raise
    :class:`NumericalError` unless ``keep_nonfinite=True``, which keeps the results and
    warns (``RuntimeWarning``).

    Raises :class:`ConfigError` for bad input (naming the field), :class:`ArrayError` for
    an array of a dtype a config cannot hold, :class:`DeviceError` when the GPU cannot run,
    :class:`NumericalError`, :class:`FileError` for an unreadable file, ``TypeError`` for
    an argument of the wrong type, ``KeyboardInterrupt`` on Ctrl-C.
    """

def gradient(
    problem: Config,
    *,
    backend: Backend = "auto",
    overrides: Overrides = None,
    adapter: Optional[str] = None,
    precision: Optional[Literal["f32", "f64"]] = None,
    memory_budget: Union[int, str, None] = None,
    work_limit: Optional[float] = None,
    progress: ProgressArgument = None,
    base_dir: Union[str, os.PathLike[str], None] = None,
) -> GradientResult:
    """Cost and exact discrete-adjoint gradient of a candidate model w = (J, R, Q, B, x0),
    or of a batch, against input/output data — a ``harbor gradient`` problem
    (``[[input]]``, ``[scheme]``, ``[data]``, ``[cost]``, ``[candidate]``,
    ``[candidates]``, ``[gradient]``). Measured outputs can be an array: ``data.values`` =
    rows [t_k, y_k] with t_k = k h.

    ``work_limit`` caps the floating-point operations the problem may take (default
    10¹⁴), checked with its memory before anything is built. Raises as :func:`simulate`.
    """

def identify(
    config: Config,
    *,
    backend: Backend = "auto",
    overrides: Overrides = None,
    adapter: Optional[str] = None,
    precision: Optional[Literal["f32", "f64"]] = None,
    memory_budget: Union[int, str, None] = None,
    work_limit: Optional[float] = None,
    progress: ProgressArgument = None,
    base_dir: Union[str, os.PathLike[str], None] = None,
) -> IdentifyResult:
    """Identifies a port-Hamiltonian model (J, R, Q, B, x0) of order ``model.order`` from
    input/output data by Monte-Carlo initialisation and Riemannian conjugate gradients —
    a ``harbor identify`` config. Inputs and outputs can be arrays:
    ``{"kind": "samples", "t": t, "values": u}`` per ``[[input]]``, ``data.values`` (and
    ``test_data.values``) = rows [t_k, y_k]; ``initial_guess`` = a list of dicts of the
    fitted parts' arrays (and/or ``file``, an earlier run's ``model`` directory or
    identification.json) starts the descent there too (alone with
    ``monte_carlo.candidates = 0``). Equal bit for bit to the CLI's
    ``model/*.npy``, ``cost_history.csv`` and ``outputs.csv`` for the same config and
    backend. Raises as :func:`simulate`.
    """

def tableau(
    family: Literal["gauss", "lobatto-iiia", "lobatto-iiib", "lobatto-pair"], stages: int
) -> Tableau:
    """The Butcher table of ``family`` with ``stages`` stages (gauss: 1…8; Lobatto: 2…6),
    computed in double-double arithmetic and rounded once, as ``harbor tableau`` prints it.
    Raises :class:`ConfigError` for an unknown family or stage count."""

def devices() -> list[dict[str, Any]]:
    """Every GPU adapter wgpu finds, best first (``backend="gpu"`` takes the first), as
    ``harbor devices --json`` lists them: name, backend, device_type, software, driver,
    driver_info, shader_f64 and the limits harbor plans with. Empty without an adapter."""

class HarborError(Exception):
    """Base of every exception harbor raises."""

class ConfigError(HarborError, ValueError):
    """A config, an argument or a value that violates a documented property; the message
    names the field by its config path, the property and the measured value."""

class ArrayError(ConfigError):
    """A NumPy array harbor cannot take as a config value (complex, object, string or
    extended-precision dtype)."""

class NumericalError(HarborError, RuntimeError):
    """A computation that failed although its input was valid (members that became
    non-finite, a singular stage matrix, every Monte-Carlo candidate overflowing)."""

class DeviceError(HarborError, RuntimeError):
    """The GPU could not run (no adapter for ``backend="gpu"``, a failed device request)."""

class FileError(HarborError, OSError):
    """A file that could not be read or written."""

class InternalError(HarborError, RuntimeError):
    """A bug in harbor (a Rust panic), never a reaction to input."""
