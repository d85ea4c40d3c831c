"""What the time-to-first-result peer scripts share: their arguments and the
clock that splits a fresh process's time into named stages."""
import sys
import time


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


class StageClock:
    """stage(name) records the time since the previous stage (or creation)."""

    def __init__(self):
        self.stages = {}
        self._last = time.monotonic_ns()

    def stage(self, name):
        now = time.monotonic_ns()
        self.stages[name] = (now - self._last) / 1e6
        self._last = now
