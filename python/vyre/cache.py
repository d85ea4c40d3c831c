"""The AOT cache, as `vyre cache` sees it (docs/cache.md).

The directory and bounds come from the same settings as the command line's:
VYRE_AOT_CACHE_DIR (else $XDG_CACHE_HOME/vyre/aot, else ~/.cache/vyre/aot),
VYRE_AOT_CACHE_READONLY_DIRS, VYRE_AOT_CACHE_MAX_BYTES and
VYRE_AOT_CACHE_MAX_ENTRIES, read at each call. One cache object per setting
is shared by this process's Backends, so stats() counts their lookups too.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from . import _ext

__all__ = ["stats", "zero_stats", "directory", "entries", "clear", "flush", "explain", "place_driver_cache"]


def stats() -> Dict[str, Any]:
    """Counters summed over every process that used the directory, and its size (`vyre cache stats --json`)."""
    return _ext._cache_stats()


def place_driver_cache() -> Dict[str, Any]:
    """What was done with the GPU driver's own pipeline cache (docs/cache.md, "Driver pipeline
    data"): the process's first Backend points it into this cache's directory, threads or not, so
    nothing needs calling. Before any Backend this call places it itself. Only the first placement
    acts; returns what it did: active, data_folder, fingerprint, files_before, reason."""
    return _ext._place_driver_cache()


def zero_stats() -> None:
    """Resets the counters; entries stay."""
    _ext._cache_zero_stats()


def directory() -> Optional[str]:
    """The writable cache directory in use, or None when there is no disk cache."""
    return _ext._cache_directory()


def entries() -> List[Dict[str, Any]]:
    """Every entry of every layer, metadata only (`vyre cache ls --json`)."""
    return _ext._cache_entries()


def clear() -> int:
    """Removes every entry of the writable directory; returns how many."""
    return _ext._cache_clear()


def flush() -> None:
    """Writes this process's counters to disk now."""
    _ext._cache_flush()


def explain(program: Union["_ext.Program", str, Dict[str, Any]], workgroup: Union[int, Sequence[int], None] = None,
            ulp: int = 0, fingerprint: Optional[str] = None, backend: Optional["_ext.Backend"] = None) -> Dict[str, Any]:
    """Why `program` hits or misses, component by component (`vyre cache explain`).

    The fingerprint is `fingerprint`, else `backend`'s, else
    $VYRE_BACKEND_FINGERPRINT_OVERRIDE, else the local adapter's.
    """
    return _ext._cache_explain(program, workgroup, ulp, fingerprint, backend)
