"""A private ``XDG_RUNTIME_DIR`` when the process has none, as the CLI makes one.

Opening a Vulkan instance makes Mesa probe for a Wayland display, and libwayland prints
``error: XDG_RUNTIME_DIR is invalid or not set in the environment.`` for every probe
without a valid one — lines that read like harbor's errors. With an empty private
directory the probe finds no display and stays quiet. A valid setting is left alone; the
directory (``harbor-runtime-<pid>-…`` in the temporary folder, the CLI's name, so that a
later ``harbor`` command sweeps one left by a killed process) is removed at exit.
"""

import atexit
import os
import shutil
import sys
import tempfile


def quiet_wayland_probe():
    """Points ``XDG_RUNTIME_DIR`` at a fresh private directory when it is unset or not an
    absolute path (Linux and other Unix systems but macOS)."""
    if not sys.platform.startswith(("linux", "freebsd")):
        return
    current = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(current):
        return
    directory = tempfile.mkdtemp(prefix=f"harbor-runtime-{os.getpid()}-")
    os.environ["XDG_RUNTIME_DIR"] = directory
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
