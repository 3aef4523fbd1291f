"""Long calls: no output unless asked, progress through a callable, tqdm or a line on
stderr, the GIL released while the library works, and Ctrl-C (SIGINT) ending a run with
KeyboardInterrupt within a fraction of a second, nothing returned and the process ready for
the next call."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import harbor

from conftest import EXAMPLES


def test_no_progress_unless_asked(capfd):
    harbor.simulate(EXAMPLES / "oscillator_pulse.toml", backend="cpu")
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


def test_a_progress_callable_hears_every_phase_up_to_its_total():
    heard = []
    harbor.simulate(
        EXAMPLES / "oscillator_ensemble.toml",
        backend="cpu",
        members=50_000,
        overrides={"scheme.t_end": 2.0},
        progress=heard.append,
    )
    assert heard, "no progress was reported"
    assert all(isinstance(p, harbor.Progress) and p.phase == "simulate" for p in heard)
    assert heard[-1].done == heard[-1].total == 50_000 * 200
    assert [p.done for p in heard] == sorted(p.done for p in heard)

    fitted = []
    harbor.identify(
        EXAMPLES / "identify_synthetic.toml",
        backend="cpu",
        overrides={"monte_carlo.candidates": 64, "monte_carlo.keep": 2, "optimizer.max_iterations": 5},
        progress=fitted.append,
    )
    phases = [p.phase for p in fitted]
    assert phases[0] == "monte-carlo" and phases[-1] == "descent"
    assert fitted[0].done == fitted[0].total == 64 and fitted[0].best_cost > 0

    evaluated = []
    harbor.gradient(EXAMPLES / "gradient_check.toml", backend="cpu", progress=evaluated.append)
    assert evaluated[-1].phase == "gradient" and evaluated[-1].done == evaluated[-1].total


def test_progress_true_draws_a_line_on_stderr_without_tqdm(capfd):
    try:
        import tqdm  # noqa: F401
    except ImportError:
        harbor.simulate(EXAMPLES / "oscillator_pulse.toml", backend="cpu", progress=True)
        err = capfd.readouterr().err
        assert "simulate: 1800/1800 (100.0 %)" in err and err.endswith("\n")
    else:
        harbor.simulate(EXAMPLES / "oscillator_pulse.toml", backend="cpu", progress=True)
        assert "simulate" in capfd.readouterr().err


def test_an_exception_in_the_progress_callable_stops_the_run_and_is_raised():
    class Enough(Exception):
        pass

    def stop(progress):
        raise Enough(progress.done)

    with pytest.raises(Enough):
        harbor.simulate(
            EXAMPLES / "oscillator_ensemble.toml", backend="cpu", members=10_000, progress=stop
        )
    # The next call runs as usual.
    assert harbor.simulate(EXAMPLES / "oscillator_pulse.toml", backend="cpu").final_state.shape == (1, 2)


def test_the_gil_is_released_while_the_library_works():
    ticks = 0
    running = True

    def count():
        nonlocal ticks
        while running:
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    started = time.perf_counter()
    try:
        harbor.simulate(
            EXAMPLES / "pendulum_damped_forced.toml",
            backend="cpu",
            members=8192,
            overrides={"output.every": 1000},
        )
    finally:
        seconds = time.perf_counter() - started
        running = False
        counter.join()
    # With the GIL held the counter would stand still; released, it ticks about once a
    # millisecond (at least a tenth of that on a busy machine).
    assert seconds > 0.2, f"the run was too short to tell ({seconds:.3f} s)"
    assert ticks > 0.1 * seconds * 1000, f"{ticks} ticks in {seconds:.2f} s"


INTERRUPTED = textwrap.dedent(
    """
    import signal, sys, time
    import harbor
    signal.signal(signal.SIGINT, signal.default_int_handler)
    print("ready", flush=True)
    started = time.perf_counter()
    try:
        harbor.simulate(sys.argv[1], backend=sys.argv[2], members=1_000_000,
                        overrides={"output.every": 1000, "scheme.t_end": 100.0})
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.perf_counter() - started:.3f}", flush=True)
    result = harbor.simulate(sys.argv[1], backend="cpu", members=4, overrides={"scheme.t_end": 1.0})
    print("next call", result.final_state.shape, flush=True)
    """
)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_ctrl_c_raises_keyboard_interrupt_promptly(backend):
    # 10⁶ pendulums over 10⁴ steps: minutes of work on either backend here. A run stops at
    # its next progress report: after the next block on the CPU, once the blocks in flight
    # end (well under a second here), after a dispatch window on the GPU (about a second on
    # lavapipe).
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(EXAMPLES / "pendulum_damped_forced.toml"), backend],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "ready"
    time.sleep(2.0)
    sent = time.perf_counter()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    waited = time.perf_counter() - sent
    lines = out.splitlines()
    assert lines and lines[0].startswith("interrupted"), f"stdout {out!r}, stderr {err!r}"
    assert lines[1] == "next call (4, 2)", out
    assert child.returncode == 0, err
    assert waited < 10.0, f"the run took {waited:.1f} s to stop"


def test_the_backend_choice_goes_to_the_harbor_logger(caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="harbor"):
        harbor.simulate(EXAMPLES / "oscillator_pulse.toml")
    lines = [r.getMessage() for r in caplog.records if r.name == "harbor"]
    assert any(line.startswith("backend: ") for line in lines), lines
    assert not any("--backend" in line for line in lines), lines
