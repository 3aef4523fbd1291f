"""Progress of long calls: what ``progress=`` asks for.

The extension calls ``reporter(progress)`` once per call and then the returned object as
``report(phase, done, total, best_cost)`` at most ten times a second, and ``close()`` at the
end (also when the call fails or is interrupted).
"""

import sys
from typing import Callable, NamedTuple, Optional


class Progress(NamedTuple):
    """Where a long call stands.

    ``phase`` is ``"simulate"`` or ``"gradient"`` (``done`` and ``total`` in member-steps),
    ``"monte-carlo"`` (candidates evaluated) or ``"descent"`` (iterations, of
    ``optimizer.max_iterations`` at most); ``best_cost`` is the lowest cost so far during an
    identification, else None.
    """

    phase: str
    done: int
    total: int
    best_cost: Optional[float] = None


class _Callback:
    """Calls the user's function with a :class:`Progress`."""

    def __init__(self, function: Callable[[Progress], object]):
        self._function = function

    def __call__(self, phase, done, total, best_cost):
        self._function(Progress(phase, done, total, best_cost))

    def close(self):
        pass


class _Bars:
    """One tqdm bar per phase, on stderr."""

    def __init__(self, tqdm):
        self._tqdm = tqdm
        self._bar = None
        self._phase = None

    def __call__(self, phase, done, total, best_cost):
        if phase != self._phase:
            self.close()
            unit = {"monte-carlo": "candidates", "descent": "iterations"}.get(phase, "member-steps")
            self._bar = self._tqdm(
                total=total, desc=phase, unit=unit, unit_scale=unit == "member-steps", leave=False
            )
            self._phase = phase
        self._bar.n = min(done, total)
        if best_cost is not None:
            self._bar.set_postfix(best_cost=f"{best_cost:.4e}", refresh=False)
        self._bar.refresh()

    def close(self):
        if self._bar is not None:
            self._bar.close()
        self._bar = None
        self._phase = None


class _Line:
    """One line on stderr, rewritten in place (tqdm is not installed)."""

    def __init__(self, stream=None):
        self._stream = stream or sys.stderr
        self._shown = False

    def __call__(self, phase, done, total, best_cost):
        percent = 100.0 * done / total if total else 100.0
        cost = "" if best_cost is None else f", best cost {best_cost:.4e}"
        self._stream.write(f"\r{phase}: {done}/{total} ({percent:5.1f} %){cost}  ")
        self._stream.flush()
        self._shown = True

    def close(self):
        if self._shown:
            self._stream.write("\n")
            self._stream.flush()
        self._shown = False


def reporter(progress):
    """The reporter of ``progress=``: None or False for none, True for a tqdm bar (a line
    on stderr without tqdm), or a callable that receives a :class:`Progress`."""
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return _Line()
        return _Bars(tqdm)
    if callable(progress):
        return _Callback(progress)
    raise TypeError(
        f"progress: expected True, False, None or a callable taking a harbor.Progress, got {type(progress).__name__}"
    )
