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

__all__ = ["reduce", "scan", "sum", "min", "max", "cumsum", "sort", "argsort", "bincount"]

_OPS = ("sum", "min", "max", "and", "or", "xor")
_DTYPES = (np.uint32, np.int32, np.float32, np.float64)
_DTYPE_NAMES = "uint32, int32, float32 or float64"


def _device(x: Any, backend: Any, caller: str) -> tuple[Any, bool]:
    """The DeviceArray for ``x``, and whether the caller gave NumPy (so wants NumPy back)."""
    if isinstance(x, _ext.DeviceArray):
        if x.dtype not in ("uint32", "int32", "float32", "float64"):
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
        raise DTypeError(f"{caller}: op {op!r} takes integer arrays (uint32, int32), not {device.dtype}")


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


_SORT_DTYPES = ("uint32", "int32", "float32")


def sort(keys: Any, values: Optional[Any] = None, *, descending: bool = False, backend: Optional[Any] = None,
         workgroup: Optional[int] = None, items: Optional[int] = None, tune: Optional[bool] = None,
         retune: bool = False, report: Optional[list] = None) -> Any:
    """``keys`` in order by a stable radix sort; with ``values`` (uint32, one per key), ``(keys, values)``.

    Keys are uint32, int32 or float32. Ascending is numpy.sort's order with NaN last (of either
    sign, their bits kept) and -0.0 before +0.0; descending=True is the reverse order, NaN
    first, equal keys still in their input order (stable both ways). NumPy in: NumPy out;
    DeviceArrays in: DeviceArrays out.
    """
    _check_shape(workgroup, items, "vyre.lib.sort", smallest=16, largest=128)
    _check_tuning(tune, retune, report, "vyre.lib.sort")
    if not isinstance(descending, bool):
        raise InputError(f"vyre.lib.sort: descending must be True or False, not {descending!r}")
    backend = backend if backend is not None else default_backend()
    device, numpy_in = _device(keys, backend, "vyre.lib.sort")
    if device.dtype not in _SORT_DTYPES:
        raise DTypeError(f"vyre.lib.sort: keys are {device.dtype}; it takes uint32, int32 or float32 keys")
    device_values = None
    if values is not None:
        device_values, _ = _device(values, backend, "vyre.lib.sort")
        if device_values.dtype != "uint32":
            raise DTypeError(f"vyre.lib.sort: values are {device_values.dtype}; it takes uint32 values "
                             "(indices: np.arange(n, dtype=np.uint32))")
        if device_values.size != device.size:
            raise InputError(f"vyre.lib.sort: {device.size} keys but {device_values.size} values")
    if device.size == 0:
        out_keys, out_values = device, device_values
    else:
        out_keys, out_values = _ext._lib_sort(backend, device, device_values, descending, workgroup, items, tune,
                                              retune, report)
    if numpy_in:
        out_keys = out_keys.numpy() if device.size else np.empty(0, dtype=device.dtype)
        if out_values is not None:
            out_values = out_values.numpy() if device.size else np.empty(0, dtype=np.uint32)
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
    if device.dtype not in ("uint32", "int32"):
        raise DTypeError(f"vyre.lib.bincount: x is {device.dtype}; it takes uint32 or int32 values")
    bins = minlength
    if device.size:
        if device.dtype == "int32":
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
