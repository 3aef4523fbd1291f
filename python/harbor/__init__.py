"""harbor from Python: structure-preserving ensembles of port-Hamiltonian, contact,
nonlinear port-Hamiltonian and variational systems on the GPU and the CPU, gradients and
identification of port-Hamiltonian models, with NumPy arrays in and out.

Every function takes the config of the matching ``harbor`` command — a path, TOML text or a
dict (NumPy arrays wherever a matrix, a signal or data goes) — runs with the GIL released,
stops on Ctrl-C (``KeyboardInterrupt``, nothing returned), and raises
:class:`ConfigError` (a ``ValueError``) naming the field of bad input. See ``README.md``,
"Python".
"""

from ._runtime_dir import quiet_wayland_probe as _quiet_wayland_probe

_quiet_wayland_probe()

from ._errors import (  # noqa: E402 (after the runtime directory, before any adapter)
    ArrayError,
    ConfigError,
    DeviceError,
    FileError,
    HarborError,
    InternalError,
    NumericalError,
)
from ._harbor import (  # noqa: E402
    GradientResult,
    IdentifyResult,
    SimulationResult,
    Tableau,
    __version__,
    devices,
    gradient,
    identify,
    simulate,
    tableau,
)
from ._progress import Progress  # noqa: E402

__all__ = [
    "simulate",
    "gradient",
    "identify",
    "tableau",
    "devices",
    "SimulationResult",
    "GradientResult",
    "IdentifyResult",
    "Tableau",
    "Progress",
    "HarborError",
    "ConfigError",
    "ArrayError",
    "NumericalError",
    "DeviceError",
    "FileError",
    "InternalError",
    "__version__",
]
