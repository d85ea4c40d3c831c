"""Keeps the driver quiet on a headless machine, as the ``vyre`` command does (tools/vyre/runtime_dir.hpp).

With no ``XDG_RUNTIME_DIR``, the Vulkan loader's enumeration of adapters makes libwayland print
``error: XDG_RUNTIME_DIR is invalid or not set`` on stderr, once per instance. When the variable is
unset, ``import vyre`` points it at an empty private directory of its own, removed at exit. It is set
at import, before the extension makes any WebGPU instance, and only when unset, so a desktop session's
value is never changed; setting the environment once at import is what ``os.environ`` is for.
"""

from __future__ import annotations

import atexit
import os
import tempfile


def quiet_headless_runtime_dir() -> None:
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    try:
        made = tempfile.mkdtemp(prefix="vyre-runtime-")
    except OSError:
        return  # then the harmless line shows
    os.environ["XDG_RUNTIME_DIR"] = made

    def remove() -> None:
        try:
            os.rmdir(made)
        except OSError:
            pass

    atexit.register(remove)
