"""vyre.lib: the standard kernels, on NumPy arrays and DeviceArrays (docs/lib.md).

    import numpy as np, vyre.lib
    total = vyre.lib.sum(np.arange(1000, dtype=np.float32))          # a NumPy scalar
    offsets = vyre.lib.scan(counts, inclusive=False)                  # a NumPy array
    keys, order = vyre.lib.sort(keys, values=np.arange(len(keys), dtype=np.uint32))
    on_gpu = vyre.lib.cumsum(backend.upload(x), backend=backend)      # a DeviceArray

A NumPy array is uploaded, the kernel's passes run in one batch, and the
result comes back as NumPy; a DeviceArray's result stays on the GPU as a
DeviceArray. An array of any shape is taken as its elements in order (as
``numpy.sum`` and ``numpy.cumsum`` do without ``axis``). The accumulator is
the element type: a uint32 or int32 sum wraps at 32 bits, where NumPy's
widens to 64 bits.

Shapes and tuning (docs/lib.md): every kernel runs its device class's default
shape unless given one (``workgroup=``, ``items=``). With ``tune=True`` (or
VYRE_TUNE=1) it runs the shape measured fastest on this device for this size,
timing the candidates once and keeping the choice in the AOT cache, so the
next process times nothing; ``report=[]`` receives a dict per shape the call
chose, saying where it came from ('given', 'default', 'record', 'tuned').
"""

from __future__ import annotations

import builtins
from typing import Any, Optional

import numpy as np

from . import _ext
from ._errors import DTypeError, InputError
from .kernel import default_backend

__all__ = ["reduce", "scan", "sum", "min", "max", "cumsum", "sort", "argsort", "bincount", "find", "compact", "nonzero",
           "histogram", "matmul", "transpose", "softmax"]

_OPS = ("sum", "min", "max", "and", "or", "xor")
_DTYPES = (np.uint32, np.int32, np.float32, np.float64, np.float16, np.uint8, np.int8, np.uint16, np.int16, np.bool_)
_DTYPE_NAMES = "uint32, int32, float32, float64, float16, uint8, int8, uint16, int16 or bool"


def _device(x: Any, backend: Any, caller: str) -> tuple[Any, bool]:
    """The DeviceArray for ``x``, and whether the caller gave NumPy (so wants NumPy back)."""
    if isinstance(x, _ext.DeviceArray):
        if x.dtype not in tuple(np.dtype(t).name for t in _DTYPES):
            raise DTypeError(f"{caller}: x is a DeviceArray of {x.dtype}; it takes {_DTYPE_NAMES}")
        return x, False
    if not isinstance(x, np.ndarray):
        raise DTypeError(f"{caller}: x must be a NumPy array or a vyre.DeviceArray, not {type(x).__name__} "
                         f"(make one with np.asarray(x, dtype=np.float32), or another of {_DTYPE_NAMES})")
    if x.dtype.type not in _DTYPES:
        raise DTypeError(f"{caller}: x is {x.dtype}; it takes {_DTYPE_NAMES} (convert with x.astype(...): "
                         f"the accumulator is the element type)")
    return backend.upload(np.ascontiguousarray(x).reshape(-1)), True


def _check(op: str, workgroup: Optional[int], items: Optional[int], caller: str) -> None:
    if op not in _OPS:
        raise InputError(f"{caller}: op must be one of {', '.join(repr(o) for o in _OPS)}, not {op!r}")
    _check_shape(workgroup, items, caller)


def _check_shape(workgroup: Optional[int], items: Optional[int], caller: str, smallest: int = 1,
                 largest: int = 1024) -> None:
    for name, value in (("workgroup", workgroup), ("items", items)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{caller}: {name} must be a positive int or None (chosen for the device), not {value!r}")
    if workgroup is not None and (workgroup < smallest or workgroup > largest or workgroup & (workgroup - 1)):
        raise InputError(f"{caller}: workgroup must be a power of two from {smallest} to {largest}, not {workgroup}")


def _check_tuning(tune: Optional[bool], retune: bool, report: Optional[list], caller: str) -> None:
    if tune is not None and not isinstance(tune, bool):
        raise InputError(f"{caller}: tune must be True, False or None (VYRE_TUNE decides), not {tune!r}")
    if not isinstance(retune, bool):
        raise InputError(f"{caller}: retune must be True or False, not {retune!r}")
    if report is not None and not isinstance(report, list):
        raise InputError(f"{caller}: report must be a list (it receives a dict per shape chosen) or None, "
                         f"not {type(report).__name__}")


def _check_op_for(device: Any, op: str, caller: str) -> None:
    if op in ("and", "or", "xor") and device.dtype.startswith("float"):
        raise DTypeError(f"{caller}: op {op!r} takes integer or bool arrays (uint32, int32, uint8, int8, uint16, "
                         f"int16, bool), not {device.dtype}")


def reduce(x: Any, op: str = "sum", *, backend: Optional[Any] = None, workgroup: Optional[int] = None,
           items: Optional[int] = None, tune: Optional[bool] = None, retune: bool = False,
           report: Optional[list] = None) -> Any:
    """One value from all of ``x``'s elements: ``op`` is 'sum', 'min', 'max', 'and', 'or' or 'xor'.

    NumPy in: a NumPy scalar of x's dtype. DeviceArray in: a DeviceArray of one element.
    A float sum's order is fixed (docs/lib.md) and differs from NumPy's pairwise sum in the
    last bits, within passes * (items + log2(workgroup)) * eps * sum(|x|). NaN propagates
    through min and max. Zero elements: sum, or, xor give 0, and gives all ones; min and max
    raise vyre.InputError, as NumPy's do.
    """
    _check(op, workgroup, items, "vyre.lib.reduce")
    _check_tuning(tune, retune, report, "vyre.lib.reduce")
    backend = backend if backend is not None else default_backend()
    device, numpy_in = _device(x, backend, "vyre.lib.reduce")
    _check_op_for(device, op, "vyre.lib.reduce")
    if device.size == 0 and op in ("min", "max"):
        raise InputError(f"vyre.lib.reduce: {op} of zero elements has no value (numpy.{op} raises too)")
    out = _ext._lib_reduce(backend, device, op, workgroup, items, tune, retune, report)
    return out.numpy()[0] if numpy_in else out


def scan(x: Any, op: str = "sum", *, inclusive: bool = True, backend: Optional[Any] = None,
         workgroup: Optional[int] = None, items: Optional[int] = None, tune: Optional[bool] = None,
         retune: bool = False, report: Optional[list] = None) -> Any:
    """Every prefix of ``x`` under ``op`` ('sum', 'min', 'max', 'and', 'or', 'xor').

    inclusive=True: out[i] = x[0] op ... op x[i] (numpy.cumsum for 'sum'); inclusive=False:
    out[i] = x[0] op ... op x[i-1], out[0] the identity (+0.0 for a float sum). The result
    has x's length and dtype: a NumPy array for NumPy in, a DeviceArray for a DeviceArray.
    A float sum's order is fixed (docs/lib.md); each prefix is within
    levels * (items + log2(workgroup) + 2) * eps * sum(|x[:i+1]|) of the exact one.
    """
    _check(op, workgroup, items, "vyre.lib.scan")
    _check_tuning(tune, retune, report, "vyre.lib.scan")
    if not isinstance(inclusive, bool):
        raise InputError(f"vyre.lib.scan: inclusive must be True or False, not {inclusive!r}")
    backend = backend if backend is not None else default_backend()
    device, numpy_in = _device(x, backend, "vyre.lib.scan")
    _check_op_for(device, op, "vyre.lib.scan")
    if device.size == 0:
        return np.empty(0, dtype=device.dtype) if numpy_in else device
    out = _ext._lib_scan(backend, device, op, inclusive, workgroup, items, tune, retune, report)
    return out.numpy() if numpy_in else out


def sum(x: Any, *, backend: Optional[Any] = None, tune: Optional[bool] = None,
        report: Optional[list] = None) -> Any:  # noqa: A001 - NumPy's name
    """``reduce(x, 'sum')``: wraps at 32 bits for integers (numpy.sum widens to 64)."""
    _check_tuning(tune, False, report, "vyre.lib.sum")
    return reduce(x, "sum", backend=backend, tune=tune, report=report)


def min(x: Any, *, backend: Optional[Any] = None, tune: Optional[bool] = None,
        report: Optional[list] = None) -> Any:  # noqa: A001 - NumPy's name
    """``reduce(x, 'min')``: NaN if any element is NaN; zero elements raise vyre.InputError."""
    _check_tuning(tune, False, report, "vyre.lib.min")
    return reduce(x, "min", backend=backend, tune=tune, report=report)


def max(x: Any, *, backend: Optional[Any] = None, tune: Optional[bool] = None,
        report: Optional[list] = None) -> Any:  # noqa: A001 - NumPy's name
    """``reduce(x, 'max')``: NaN if any element is NaN; zero elements raise vyre.InputError."""
    _check_tuning(tune, False, report, "vyre.lib.max")
    return reduce(x, "max", backend=backend, tune=tune, report=report)


def cumsum(x: Any, *, backend: Optional[Any] = None, tune: Optional[bool] = None,
           report: Optional[list] = None) -> Any:
    """``scan(x, 'sum')``, numpy.cumsum of the flattened array, in x's dtype."""
    return scan(x, "sum", backend=backend, tune=tune, report=report)


_SORT_DTYPES = ("uint32", "int32", "float32", "float16", "uint8", "int8", "uint16", "int16")


def sort(keys: Any, values: Optional[Any] = None, *, descending: bool = False, backend: Optional[Any] = None,
         workgroup: Optional[int] = None, items: Optional[int] = None, radix_bits: Optional[int] = None,
         tune: Optional[bool] = None, retune: bool = False, report: Optional[list] = None) -> Any:
    """``keys`` in order by a stable radix sort; with ``values`` (uint32, one per key), ``(keys, values)``.

    Keys are uint32, int32, float32, float16, uint8, int8, uint16 or int16; values of any dtype
    vyre.lib takes (float16 and float64 where the device has them). Ascending is numpy.sort's order with NaN last (of either
    sign, their bits kept) and -0.0 before +0.0; descending=True is the reverse order, NaN
    first, equal keys still in their input order (stable both ways). NumPy in: NumPy out;
    DeviceArrays in: DeviceArrays out. ``radix_bits`` (4, 5, 6 or 8) is the bits each pass sorts
    by; wider digits make fewer passes and allow smaller workgroups (at most 64 at 5 bits, 32 at
    6). 8 bits take 32-bit keys and values only, and a workgroup's keys (workgroup * items) must
    be at most 2,048, or 1,024 with values. Unset, the shape is the device's default for these
    keys and values, or tuning's choice; a ``workgroup`` or ``items`` given without
    ``radix_bits`` sorts by 4 bits.
    """
    _check_shape(workgroup, items, "vyre.lib.sort", smallest=16, largest=128)
    if radix_bits is not None and (isinstance(radix_bits, bool) or not isinstance(radix_bits, int)
                                   or radix_bits not in (4, 5, 6, 8)):
        raise InputError(f"vyre.lib.sort: radix_bits must be 4, 5, 6, 8 or None (chosen for the device), "
                         f"not {radix_bits!r}")
    _check_tuning(tune, retune, report, "vyre.lib.sort")
    if not isinstance(descending, bool):
        raise InputError(f"vyre.lib.sort: descending must be True or False, not {descending!r}")
    backend = backend if backend is not None else default_backend()
    device, numpy_in = _device(keys, backend, "vyre.lib.sort")
    if device.dtype not in _SORT_DTYPES:
        raise DTypeError(f"vyre.lib.sort: keys are {device.dtype}; it takes uint32, int32, float32, float16, uint8, "
                         "int8, uint16 or int16 keys")
    device_values = None
    if values is not None:
        device_values, _ = _device(values, backend, "vyre.lib.sort")
        if device_values.size != device.size:
            raise InputError(f"vyre.lib.sort: {device.size} keys but {device_values.size} values")
    if device.size == 0:
        out_keys, out_values = device, device_values
    else:
        out_keys, out_values = _ext._lib_sort(backend, device, device_values, descending, workgroup, items,
                                              radix_bits, tune, retune, report)
    if numpy_in:
        out_keys = out_keys.numpy() if device.size else np.empty(0, dtype=device.dtype)
        if out_values is not None:
            out_values = out_values.numpy() if device.size else np.empty(0, dtype=device_values.dtype)
    return out_keys if values is None else (out_keys, out_values)


def argsort(keys: Any, *, descending: bool = False, backend: Optional[Any] = None, tune: Optional[bool] = None,
            report: Optional[list] = None) -> Any:
    """The uint32 indices that sort ``keys`` stably (numpy.argsort(kind='stable')), as ``sort`` orders them."""
    n = keys.size if isinstance(keys, (np.ndarray, _ext.DeviceArray)) else 0
    backend = backend if backend is not None else default_backend()
    index = np.arange(n, dtype=np.uint32)
    if isinstance(keys, _ext.DeviceArray):
        index = backend.upload(index)
    return sort(keys, index, descending=descending, backend=backend, tune=tune, report=report)[1]


def bincount(x: Any, minlength: int = 0, *, backend: Optional[Any] = None, tune: Optional[bool] = None,
             report: Optional[list] = None) -> Any:
    """How many times each value 0, 1, ... occurs in ``x`` (uint32 or int32), as numpy.bincount.

    The result has max(x) + 1 bins, or ``minlength`` if that is more, and dtype uint32
    (numpy.bincount's is int64: a count wraps past 2**32 - 1). A negative value raises
    vyre.InputError, as NumPy raises ValueError. NumPy in: NumPy out; a DeviceArray: a DeviceArray.
    """
    if isinstance(minlength, bool) or not isinstance(minlength, int) or minlength < 0:
        raise InputError(f"vyre.lib.bincount: minlength must be an int of 0 or more, not {minlength!r}")
    _check_tuning(tune, False, report, "vyre.lib.bincount")
    backend = backend if backend is not None else default_backend()
    device, numpy_in = _device(x, backend, "vyre.lib.bincount")
    if device.dtype not in ("uint32", "int32", "uint8", "int8", "uint16", "int16"):
        raise DTypeError(f"vyre.lib.bincount: x is {device.dtype}; it takes uint32, int32, uint8, int8, uint16 or "
                         "int16 values")
    bins = minlength
    if device.size:
        if device.dtype in ("int32", "int8", "int16"):
            lowest = int(_ext._lib_reduce(backend, device, "min", None, None, tune, False, report).numpy()[0])
            if lowest < 0:
                raise InputError(f"vyre.lib.bincount: x has the negative value {lowest}; bincount counts values from 0")
        bins = builtins.max(bins, int(_ext._lib_reduce(backend, device, "max", None, None, tune, False,
                                                       report).numpy()[0]) + 1)
    if bins > 2**32 - 1:
        raise InputError("vyre.lib.bincount: the value 4294967295 would need 2**32 bins")
    if bins == 0 or device.size == 0:
        empty = np.zeros(bins, dtype=np.uint32)
        return empty if numpy_in else backend.upload(empty)
    out = _ext._lib_bincount(backend, device, bins, tune, False, report)
    return out.numpy() if numpy_in else out


# vyre::lib::find's bounds (include/vyre/lib/find.hpp).
_FIND_MAX_PATTERNS = 65536
_FIND_MAX_PATTERN_BYTES = 32768
_FIND_MAX_TOTAL_BYTES = 2**24


def _find_patterns(patterns: Any) -> list:
    """``patterns`` as a list of bytes, str encoded as UTF-8, checked against find's bounds."""
    caller = "vyre.lib.find"
    if isinstance(patterns, (str, bytes, bytearray, memoryview)) or not isinstance(patterns, (list, tuple)):
        raise InputError(f"{caller}: patterns must be a list of bytes or str, not {type(patterns).__name__} "
                         "(one pattern: [pattern])")
    if len(patterns) > _FIND_MAX_PATTERNS:
        raise InputError(f"{caller}: patterns holds {len(patterns)} patterns; at most {_FIND_MAX_PATTERNS} "
                         "a call: split them into several calls")
    out = []
    total = 0
    for k, p in enumerate(patterns):
        if isinstance(p, str):
            p = p.encode("utf-8")
        elif isinstance(p, (bytearray, memoryview)):
            p = bytes(p)
        elif not isinstance(p, bytes):
            raise InputError(f"{caller}: patterns[{k}] is {type(p).__name__}; a pattern is bytes or str")
        if not p:
            raise InputError(f"{caller}: patterns[{k}] is empty; every pattern needs at least one byte")
        if len(p) > _FIND_MAX_PATTERN_BYTES:
            raise InputError(f"{caller}: patterns[{k}] has {len(p)} bytes; a pattern has at most "
                             f"{_FIND_MAX_PATTERN_BYTES} (search for a prefix and compare the rest)")
        total += len(p)
        out.append(p)
    if total > _FIND_MAX_TOTAL_BYTES:
        raise InputError(f"{caller}: patterns hold {total} bytes in all; at most {_FIND_MAX_TOTAL_BYTES}: split "
                         "them into several calls")
    return out


def find(haystack: Any, patterns: Any, *, backend: Optional[Any] = None, workgroup: Optional[int] = None,
         chunk: Optional[int] = None, tune: Optional[bool] = None, retune: bool = False,
         report: Optional[list] = None) -> tuple:
    """Every occurrence of each of ``patterns`` in ``haystack``, as ``(pattern_index, position)``.

    ``haystack``: bytes, a bytearray or memoryview, a uint8 NumPy array (its elements in
    order), or a uint8 vyre.DeviceArray. ``patterns``: a list of non-empty bytes or str (str
    as UTF-8), up to 65536 of them, 32768 bytes each and 2**24 in all. Pattern
    ``pattern_index[k]`` occurs starting at byte ``position[k]``: every occurrence,
    overlapping ones included, each duplicate pattern reported, ordered by position, then
    pattern index (``re.finditer(b"(?=" + re.escape(p) + b")", haystack)`` for each pattern,
    merged). Both are uint32: NumPy arrays for host data, DeviceArrays for a DeviceArray.
    The shape: ``chunk`` bytes an invocation (16 to 4096), ``workgroup`` invocations a
    workgroup (a power of two from 1 to 256); None: chosen for the device.
    """
    caller = "vyre.lib.find"
    _check_shape(workgroup, None, caller, smallest=1, largest=256)
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or not 16 <= chunk <= 4096):
        raise InputError(f"{caller}: chunk must be an int from 16 to 4096 (bytes an invocation) or None (chosen "
                         f"for the device), not {chunk!r}")
    _check_tuning(tune, retune, report, caller)
    checked = _find_patterns(patterns)
    backend = backend if backend is not None else default_backend()
    if isinstance(haystack, _ext.DeviceArray):
        if haystack.dtype != "uint8":
            raise DTypeError(f"{caller}: haystack is a DeviceArray of {haystack.dtype}; it takes uint8 "
                             "(upload the bytes as np.uint8)")
        device, numpy_in = haystack, False
    else:
        if isinstance(haystack, (bytes, bytearray, memoryview)):
            haystack = np.frombuffer(haystack, dtype=np.uint8)
        elif not isinstance(haystack, np.ndarray):
            raise DTypeError(f"{caller}: haystack must be bytes, a uint8 NumPy array or a vyre.DeviceArray, "
                             f"not {type(haystack).__name__}")
        elif haystack.dtype != np.uint8:
            raise DTypeError(f"{caller}: haystack is {haystack.dtype}; it takes uint8 (bytes: x.view(np.uint8) "
                             "reads another dtype's bytes)")
        device, numpy_in = backend.upload(np.ascontiguousarray(haystack).reshape(-1)), True
    pattern_index, position = _ext._lib_find(backend, device, checked, workgroup, chunk, tune, retune, report)
    if numpy_in:
        empty = np.empty(0, dtype=np.uint32)
        return (pattern_index.numpy() if pattern_index.size else empty,
                position.numpy() if position.size else empty)
    return pattern_index, position


# Every dtype a vyre buffer holds, and those compact's mask and histogram take.
_ANY_DTYPES = ("uint32", "int32", "float32", "float64", "float16", "uint8", "int8", "uint16", "int16", "bool")
_MASK_DTYPES = ("bool", "uint8", "uint32", "int32")
_HISTOGRAM_DTYPES = ("uint32", "int32", "float32", "uint8", "uint16", "int8", "int16")


def _device_of(x: Any, backend: Any, caller: str, name: str, dtypes: tuple) -> tuple[Any, bool]:
    """The DeviceArray for argument ``name``, and whether it was NumPy; its dtype one of ``dtypes``."""
    takes = ", ".join(dtypes)
    if isinstance(x, _ext.DeviceArray):
        if x.dtype not in dtypes:
            raise DTypeError(f"{caller}: {name} is a DeviceArray of {x.dtype}; it takes {takes}")
        return x, False
    if not isinstance(x, np.ndarray):
        raise DTypeError(f"{caller}: {name} must be a NumPy array or a vyre.DeviceArray, not {type(x).__name__} "
                         f"(make one with np.asarray({name}))")
    if x.dtype.name not in dtypes:
        raise DTypeError(f"{caller}: {name} is {x.dtype}; it takes {takes} (convert with {name}.astype(...))")
    return backend.upload(np.ascontiguousarray(x).reshape(-1)), True


def _result(out: Any, numpy_in: bool, dtype: str) -> Any:
    if not numpy_in:
        return out
    return out.numpy() if out.size else np.empty(0, dtype=dtype)


def compact(x: Any, mask: Any, *, backend: Optional[Any] = None, workgroup: Optional[int] = None,
            items: Optional[int] = None, tune: Optional[bool] = None, retune: bool = False,
            report: Optional[list] = None) -> Any:
    """The elements of ``x`` where ``mask`` is nonzero, in order: NumPy's ``x[mask != 0]``.

    ``x`` is any dtype vyre holds (float64 and float16 where the device has them); ``mask``
    is bool, uint8, uint32 or int32, with as many elements as ``x`` (both taken as their
    elements in order; NumPy arrays must have the same shape). The result is 1-D, of x's
    dtype: NumPy for a NumPy ``x``, a DeviceArray of exactly the kept elements for a
    DeviceArray (their number is read back to size it).
    """
    caller = "vyre.lib.compact"
    _check_shape(workgroup, items, caller)
    _check_tuning(tune, retune, report, caller)
    backend = backend if backend is not None else default_backend()
    if isinstance(x, np.ndarray) and isinstance(mask, np.ndarray) and x.shape != mask.shape:
        raise InputError(f"{caller}: x has the shape {x.shape} but mask {mask.shape}; give one mask element per "
                         "element of x")
    device, numpy_in = _device_of(x, backend, caller, "x", _ANY_DTYPES)
    device_mask, _ = _device_of(mask, backend, caller, "mask", _MASK_DTYPES)
    if device_mask.size != device.size:
        raise InputError(f"{caller}: x has {device.size} elements but mask {device_mask.size}; give one mask "
                         "element per element of x")
    if device.size == 0:
        return np.empty(0, dtype=device.dtype) if numpy_in else device
    out = _ext._lib_compact(backend, device, device_mask, workgroup, items, tune, retune, report)
    return _result(out, numpy_in, device.dtype)


def nonzero(x: Any, *, backend: Optional[Any] = None, workgroup: Optional[int] = None, items: Optional[int] = None,
            tune: Optional[bool] = None, retune: bool = False, report: Optional[list] = None) -> Any:
    """The uint32 indices of ``x``'s nonzero elements, increasing: ``np.flatnonzero(x)``.

    For a 1-D ``x`` that is ``np.nonzero(x)[0]`` (NumPy's is int64, and a tuple of one array
    per axis); an array of more axes is taken as its elements in order. A float is nonzero
    when ``x != 0``: -0.0 is zero, NaN is not. NumPy in: NumPy out; a DeviceArray: a
    DeviceArray of exactly the indices (their number is read back to size it).
    """
    caller = "vyre.lib.nonzero"
    _check_shape(workgroup, items, caller)
    _check_tuning(tune, retune, report, caller)
    backend = backend if backend is not None else default_backend()
    device, numpy_in = _device_of(x, backend, caller, "x", _ANY_DTYPES)
    if device.size == 0:
        empty = np.empty(0, dtype=np.uint32)
        return empty if numpy_in else backend.upload(empty)
    out = _ext._lib_compact(backend, device, None, workgroup, items, tune, retune, report)
    return _result(out, numpy_in, "uint32")


def _histogram_range(range: Any, caller: str) -> tuple:
    if not isinstance(range, (tuple, list)) or len(range) != 2:
        raise InputError(f"{caller}: range must be (lo, hi) or None (x's smallest and largest), not {range!r}")
    for end in range:
        if isinstance(end, bool) or not isinstance(end, (int, float, np.integer, np.floating)):
            raise InputError(f"{caller}: range must hold two real numbers, not {range!r}")
    lo, hi = range
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise InputError(f"{caller}: range={tuple(range)!r} is not finite (NumPy refuses it too)")
    if lo > hi:
        raise InputError(f"{caller}: range={tuple(range)!r} has its low end above its high end")
    return lo, hi


def _autodetected_range(x: Any, device: Any, backend: Any, caller: str, tune: Optional[bool]) -> tuple:
    """numpy.histogram's range=None: (x.min(), x.max()) as NumPy scalars of x's dtype; (0, 1) when empty."""
    if device.size == 0:
        return 0, 1
    if isinstance(x, np.ndarray):
        lo, hi = x.min(), x.max()
    elif device.dtype in ("uint32", "int32", "float32"):
        lo, hi = min(device, backend=backend, tune=tune).numpy()[0], max(device, backend=backend, tune=tune).numpy()[0]
    else:
        host = device.numpy()  # reduce takes no narrow dtypes: their extremes come from the host
        lo, hi = host.min(), host.max()
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise InputError(f"{caller}: range=None takes x's smallest and largest values, [{lo}, {hi}], which are not "
                         "finite (NumPy refuses them too): give range=(lo, hi)")
    return lo, hi


def histogram(x: Any, bins: Any = 10, range: Any = None, *, with_outside: bool = False,  # noqa: A002 - NumPy's name
              backend: Optional[Any] = None, workgroup: Optional[int] = None, items: Optional[int] = None,
              tune: Optional[bool] = None, retune: bool = False, report: Optional[list] = None) -> tuple:
    """``numpy.histogram(x, bins, range)``, exactly: ``(counts, edges)``.

    ``x``: uint32, int32, float32, uint8, uint16, int8 or int16, taken as its elements in
    order. ``bins``: a number of equal bins over ``range`` ((x.min(), x.max()) when None; lo ==
    hi widens by 0.5 each way), or the increasing edges themselves. Bin i holds edges[i] <= v <
    edges[i+1], the last also v == edges[-1]; values outside and NaN are not counted, as in
    NumPy; ``with_outside=True`` returns ``(counts, edges, outside)``, ``outside`` their number.
    The edges are NumPy's (for float32 x and a range of Python numbers, float32), and each value
    is compared with them as NumPy compares it. ``counts`` is uint32 (NumPy's is int64): NumPy
    for NumPy x, a DeviceArray for a DeviceArray; ``edges`` is NumPy.
    """
    caller = "vyre.lib.histogram"
    _check_shape(workgroup, items, caller)
    _check_tuning(tune, retune, report, caller)
    if not isinstance(with_outside, bool):
        raise InputError(f"{caller}: with_outside must be True or False, not {with_outside!r}")
    backend = backend if backend is not None else default_backend()
    device, numpy_in = _device_of(x, backend, caller, "x", _HISTOGRAM_DTYPES)
    uniform = isinstance(bins, (int, np.integer)) and not isinstance(bins, bool)
    lo = hi = 0.0
    given_edges = None
    if uniform:
        if not 1 <= bins <= 2**32 - 1:
            raise InputError(f"{caller}: bins must be at least 1 (and below 2**32), not {bins}")
        bins = int(bins)
        if range is None:
            range = _autodetected_range(x, device, backend, caller, tune)
        lo, hi = _histogram_range(range, caller)
        empty = np.empty(0, dtype=device.dtype)
        if type(lo) in (int, float) and type(hi) in (int, float):  # not NumPy's float64, a float's subclass
            # Python numbers: NumPy computes the edges in float64 (then float32 for float32 x),
            # as vyre::lib::histogram does.
            lo, hi = float(lo), float(hi)
        else:
            # NumPy scalars set the edges' dtype and arithmetic: take NumPy's edges.
            try:
                given_edges = np.histogram_bin_edges(empty, bins, range=(lo, hi))
            except ValueError as e:
                raise InputError(f"{caller}: {bins} bins over range={(lo, hi)!r}: {e}") from None
    else:
        if isinstance(bins, (str, bytes)) or range is not None:
            raise InputError(f"{caller}: bins must be a number of bins, or the edges (then no range), not "
                             f"{bins!r}" + (f" with range={range!r}" if range is not None else ""))
        try:
            given_edges = np.asarray(bins)
        except (TypeError, ValueError):
            raise InputError(f"{caller}: bins must be a number of bins or an array of edges, not {bins!r}") from None
        if given_edges.ndim != 1 or given_edges.size < 2 or not (
                np.issubdtype(given_edges.dtype, np.integer) or np.issubdtype(given_edges.dtype, np.floating)):
            raise InputError(f"{caller}: bins as edges must be a 1-D array of two or more numbers, not {bins!r}")
        if np.any(given_edges[:-1] > given_edges[1:]) or np.any(np.isnan(given_edges)):
            raise InputError(f"{caller}: bins as edges must increase monotonically, with no NaN")
    edge_list = None if given_edges is None else given_edges.astype(np.float64).tolist()
    count = len(edge_list) - 1 if edge_list is not None else bins
    if device.size == 0:
        counts, outside = np.zeros(count, dtype=np.uint32), 0
        if not numpy_in:
            counts = backend.upload(counts)
    else:
        counts, outside_array = _ext._lib_histogram(backend, device, count, lo, hi, edge_list, workgroup, items,
                                                    tune, retune, report)
        outside = int(outside_array.numpy()[0]) if with_outside else 0
        if numpy_in:
            counts = counts.numpy()
    if given_edges is None:
        given_edges = np.histogram_bin_edges(np.empty(0, dtype=device.dtype), bins, range=(lo, hi))
    return (counts, given_edges, outside) if with_outside else (counts, given_edges)


def _check_counts(caller: str, **counts: Optional[int]) -> None:
    """Each of a shape's keywords: None (chosen for the device) or a positive int; vyre::lib checks the rest."""
    for name, value in counts.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError(f"{caller}: {name} must be a positive int or None (chosen for the device), not {value!r}")


def _matrix(x: Any, backend: Any, caller: str, name: str, dtypes: tuple) -> tuple[Any, tuple, bool]:
    """The DeviceArray for argument ``name``, its shape, and whether it was NumPy."""
    device, numpy_in = _device_of(x, backend, caller, name, dtypes)
    shape = tuple(x.shape)
    if any(d > 2**32 - 1 for d in shape):
        raise InputError(f"{caller}: {name} has the shape {shape}; each extent is at most 2**32 - 1")
    return device, shape, numpy_in


def _empty_or(out: Any, numpy_out: bool, shape: tuple) -> Any:
    """A kernel's DeviceArray as the caller wants it: NumPy of ``shape`` (zeros when empty), or as it is."""
    if not numpy_out:
        return out
    return out.numpy().reshape(shape) if out.size else np.zeros(shape, dtype=out.dtype)


def matmul(a: Any, b: Any, *, backend: Optional[Any] = None, tile_m: Optional[int] = None,
           tile_n: Optional[int] = None, tile_k: Optional[int] = None, thread_m: Optional[int] = None,
           thread_n: Optional[int] = None, tune: Optional[bool] = None, retune: bool = False,
           report: Optional[list] = None) -> Any:
    """The matrix product ``a @ b`` of 2-D float32 arrays, M x K times K x N.

    ``a`` and ``b``: float32 NumPy arrays or 2-D vyre.DeviceArrays (an upload of a 2-D array).
    The result is M x N float32: NumPy when both are NumPy, else a DeviceArray left on the GPU.
    C[i, j] sums A[i, k] * B[k, j] over k in increasing order, each product added in turn (the
    GPU may fuse a product and its addition), within K * eps * sum_k |A[i, k] * B[k, j]| of the
    exact product; NumPy's BLAS sums in another order, so the last bits differ. K = 0 gives
    zeros. The shape: a workgroup computes tile_m x tile_n of C, tile_k of K at a time, each
    invocation thread_m x thread_n (docs/lib.md, "matmul"); None: chosen for the device.
    """
    caller = "vyre.lib.matmul"
    _check_counts(caller, tile_m=tile_m, tile_n=tile_n, tile_k=tile_k, thread_m=thread_m, thread_n=thread_n)
    _check_tuning(tune, retune, report, caller)
    backend = backend if backend is not None else default_backend()
    device_a, shape_a, numpy_a = _matrix(a, backend, caller, "a", ("float32",))
    device_b, shape_b, numpy_b = _matrix(b, backend, caller, "b", ("float32",))
    for name, shape in (("a", shape_a), ("b", shape_b)):
        if len(shape) != 2:
            raise InputError(f"{caller}: {name} has the shape {shape}; matmul takes 2-D matrices (a vector v as a "
                             "row: v.reshape(1, -1); as a column: v.reshape(-1, 1))")
    (m, k), (k_b, n) = shape_a, shape_b
    if k != k_b:
        raise InputError(f"{caller}: a is {m} x {k} but b is {k_b} x {n}: a's columns must be as many as b's rows "
                         "(NumPy raises ValueError too)")
    out = _ext._lib_matmul(backend, device_a, device_b, m, n, k, tile_m, tile_n, tile_k, thread_m, thread_n, tune,
                           retune, report)
    return _empty_or(out, numpy_a and numpy_b, (m, n))


def transpose(x: Any, *, backend: Optional[Any] = None, tile: Optional[int] = None,
              rows_per_invocation: Optional[int] = None, tune: Optional[bool] = None, retune: bool = False,
              report: Optional[list] = None) -> Any:
    """``x.T`` of a 2-D array of any dtype vyre holds, as a new C-contiguous array.

    float16 and float64 where the device has them. The bits move unchanged (NaN payloads
    too). NumPy in: NumPy out; a 2-D DeviceArray: a
    DeviceArray of the transposed shape. The shape: ``tile`` (8, 16 or 32) square tiles
    moved through workgroup memory, ``rows_per_invocation`` of each tile's rows an invocation
    (docs/lib.md, "transpose"); None: chosen for the device.
    """
    caller = "vyre.lib.transpose"
    _check_counts(caller, tile=tile, rows_per_invocation=rows_per_invocation)
    _check_tuning(tune, retune, report, caller)
    backend = backend if backend is not None else default_backend()
    device, shape, numpy_in = _matrix(x, backend, caller, "x", _ANY_DTYPES)
    if len(shape) != 2:
        raise InputError(f"{caller}: x has the shape {shape}; transpose takes a 2-D array (NumPy's x.T of "
                         "another rank reverses its axes, which vyre.lib does not)")
    rows, cols = shape
    out = _ext._lib_transpose(backend, device, rows, cols, tile, rows_per_invocation, tune, retune, report)
    return _empty_or(out, numpy_in, (cols, rows))


def softmax(x: Any, axis: int = -1, *, backend: Optional[Any] = None, workgroup: Optional[int] = None,
            lanes: Optional[int] = None, tune: Optional[bool] = None, retune: bool = False,
            report: Optional[list] = None) -> Any:
    """``scipy.special.softmax(x, axis=-1)`` of a float32 array: exp(x - max) / sum along the last axis.

    Only the last axis is built (axis -1, or x.ndim - 1); for another, move it last with
    vyre.lib.transpose (2-D axis 0: ``transpose(softmax(transpose(x)))``). As scipy's: a row
    holding NaN or +inf (inf - inf), or only -inf (0 / 0), is all NaN; -inf elsewhere gives 0.
    Each element is within the relative error docs/lib.md derives of the exact softmax. NumPy
    in: NumPy out of x's shape; a DeviceArray: a DeviceArray. The shape: ``lanes`` invocations a
    row, ``workgroup`` invocations a workgroup (powers of two, lanes <= workgroup <= 256);
    None: chosen for the device.
    """
    caller = "vyre.lib.softmax"
    _check_counts(caller, workgroup=workgroup, lanes=lanes)
    _check_tuning(tune, retune, report, caller)
    backend = backend if backend is not None else default_backend()
    device, shape, numpy_in = _matrix(x, backend, caller, "x", ("float32",))
    if not shape:
        raise InputError(f"{caller}: x is 0-D; softmax takes an array of one or more axes")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -len(shape) <= axis < len(shape):
        raise InputError(f"{caller}: axis must be an int naming one of x's {len(shape)} axes, not {axis!r}")
    if axis % len(shape) != len(shape) - 1:
        raise InputError(f"{caller}: axis={axis}: only the last axis is built; move the axis last first (for a 2-D "
                         "x and axis=0: vyre.lib.transpose(vyre.lib.softmax(vyre.lib.transpose(x))))")
    cols = shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.uint64))
    if rows * cols > 2**32 - 1:
        raise InputError(f"{caller}: x has {rows * cols} elements; at most 2**32 - 1")
    out = _ext._lib_softmax(backend, device, rows, cols, workgroup, lanes, tune, retune, report)
    return _empty_or(out, numpy_in, shape)
