# Types of vyre._ext, the nanobind extension (python/src/vyre_ext.cpp).
# python/tests/test_packaging.py checks that the names here and in the
# module agree.
from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str

Dim = Union[int, Sequence[int]]
"""A workgroup size or grid: an int (x) or 1 to 3 ints (x, y, z); missing components are 1."""
BufferKey = Union[str, int]
"""A buffer, by name or by binding number."""
HostArray = Union[npt.NDArray[np.uint32], npt.NDArray[np.int32], npt.NDArray[np.float32]]
InputValue = Union[HostArray, "DeviceArray", int, float, np.generic]
"""An input: a C-contiguous array of the buffer's dtype (any shape: its elements in C order), a
DeviceArray, or a number for a one-element buffer."""
ProgramSource = Union["Program", str, "os.PathLike[str]", Mapping[str, Any]]

class BufferInfo(TypedDict):
    name: str
    binding: Optional[int]
    access: str          # "read", "read_write", "uniform", "workgroup"
    dtype: str           # "uint32", "int32", "float32" (or "bool" for workgroup buffers)
    count: Optional[int]  # None: runtime-sized
    output: bool

class Program:
    @staticmethod
    def from_json(source: Union[str, os.PathLike[str]]) -> Program:
        """JSON text, or a path to a .json file. Raises ProgramError (with .diagnostics) or FileError."""
    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Program: ...
    @property
    def name(self) -> str: ...
    @property
    def digest(self) -> str:
        """The canonical SHA-256 digest, hex (`vyre hash`)."""
    @property
    def workgroup_size(self) -> Tuple[int, int, int]: ...
    @property
    def buffers(self) -> List[BufferInfo]: ...
    def wgsl(self, workgroup: Optional[Dim] = None, ulp: int = 0, *, passes: bool = True,
             fixed_lengths: Optional[Dict[str, int]] = None) -> str:
        """The WGSL (`vyre lower`; passes=False: `--no-passes`; fixed_lengths: `--fixed-length`)."""
    def export_web(self, dir: Union[str, "os.PathLike[str]"], run_file: Optional[Union[str, "os.PathLike[str]"]] = None,
                   *, workgroup: Optional[Dim] = None, ulp: int = 0, passes: bool = True,
                   fixed_lengths: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
        """`vyre export web`: kernel.js, kernel.d.ts, package.json and index.html in `dir` (docs/web.md).
        Returns {"folder", "files", "shaders": [{"role", "key"}], "cache_hits", "target"}; raises InputError
        for a program the web target refuses (f64)."""
    def to_json(self, indent: int = 2) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

def validate(source: ProgramSource) -> Program:
    """Parses and checks; raises ProgramError whose .diagnostics holds (JSON path, message) pairs."""

class DeviceArray:
    """A buffer in GPU memory: an upload, or an output kept on the GPU."""
    @property
    def dtype(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def shape(self) -> Tuple[int]: ...
    @property
    def nbytes(self) -> int: ...
    def __len__(self) -> int: ...
    def numpy(self) -> HostArray:
        """Copies the contents back (waits for the work that writes them)."""
    def read_into(self, array: HostArray) -> None: ...
    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> HostArray: ...

class Kernel:
    """A compiled program: dispatch it as often as you like."""
    def __call__(self, inputs: Optional[Mapping[BufferKey, InputValue]] = None, /, *,
                 sizes: Optional[Mapping[BufferKey, int]] = None, grid: Optional[Dim] = None,
                 **buffers: InputValue) -> Dict[str, HostArray]:
        """Dispatches once and returns every output buffer as a new NumPy array."""
    def into(self, inputs: Optional[Mapping[BufferKey, InputValue]] = None, /, *, out: Mapping[BufferKey, HostArray],
             sizes: Optional[Mapping[BufferKey, int]] = None, grid: Optional[Dim] = None,
             **buffers: InputValue) -> None:
        """Dispatches once, reading the outputs named in `out` straight into those (writable, C-contiguous)
        arrays; a runtime-sized output given no length takes its array's."""
    def resident(self, inputs: Optional[Mapping[BufferKey, InputValue]] = None, /, *,
                 sizes: Optional[Mapping[BufferKey, int]] = None, grid: Optional[Dim] = None,
                 **buffers: InputValue) -> Dict[str, DeviceArray]:
        """Dispatches once, keeping every output on the GPU."""
    def reference(self, inputs: Optional[Mapping[BufferKey, InputValue]] = None, /, *,
                  sizes: Optional[Mapping[BufferKey, int]] = None, grid: Optional[Dim] = None,
                  **buffers: InputValue) -> Dict[str, HostArray]:
        """The CPU reference interpreter on the same inputs (WGSL's semantics), for tests."""
    @property
    def program(self) -> Program: ...
    @property
    def wgsl(self) -> str: ...
    @property
    def workgroup_size(self) -> Tuple[int, int, int]: ...
    @property
    def cache_key(self) -> str: ...
    @property
    def cache_hit(self) -> bool: ...
    @property
    def compile_report(self) -> Dict[str, Any]: ...
    @property
    def tuning(self) -> Optional[Dict[str, Any]]: ...
    @property
    def tuned_grid(self) -> Optional[Tuple[int, int, int]]: ...

class Batch:
    """Many dispatches, one submission and one wait: `with backend.batch() as b: ...` runs at the end."""
    def into(self, kernel: Kernel, inputs: Optional[Mapping[BufferKey, InputValue]] = None, /, *,
             out: Mapping[BufferKey, HostArray], sizes: Optional[Mapping[BufferKey, int]] = None,
             grid: Optional[Dim] = None, **buffers: InputValue) -> None: ...
    def resident(self, kernel: Kernel, inputs: Optional[Mapping[BufferKey, InputValue]] = None, /, *,
                 sizes: Optional[Mapping[BufferKey, int]] = None, grid: Optional[Dim] = None,
                 **buffers: InputValue) -> Dict[str, DeviceArray]: ...
    def run(self) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...
    def __enter__(self) -> Batch: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...

class Backend:
    """A GPU adapter and device, with the AOT cache of the environment's settings."""
    def __init__(self, adapter: Optional[str] = None, backend: Optional[str] = None) -> None:
        """adapter: an index from devices() or a substring of its name (default $VYRE_WGPU_ADAPTER, else the
        best); backend: "vulkan", "gl", ... (default $WGPU_BACKEND). Raises NoAdapterError."""
    @property
    def adapter(self) -> Dict[str, Any]: ...
    @property
    def fingerprint(self) -> str: ...
    def compile(self, program: ProgramSource, workgroup: Optional[Dim] = None, ulp: int = 0, *, passes: bool = True,
                fixed_lengths: Optional[Dict[str, int]] = None) -> Kernel:
        """passes: the lowering's passes (docs/lowering.md); fixed_lengths: buffer name -> element count written
        into the shader (length specialization: dispatches must give exactly those lengths)."""
    def tune(self, program: ProgramSource, inputs: Optional[Dict[Union[str, int], Any]] = None, *,
             sizes: Optional[Dict[Union[str, int], int]] = None, grid: Optional[Dim] = None,
             workgroup: Optional[Dim] = None, ulp: int = 0, passes: bool = True,
             fixed_lengths: Optional[Dict[str, int]] = None, retune: bool = False, **buffers: Any) -> Kernel: ...
    def upload(self, array: HostArray) -> DeviceArray: ...
    def batch(self) -> Batch: ...
    @property
    def counters(self) -> Dict[str, int]: ...
    @property
    def report(self) -> Dict[str, float]: ...

def devices(backend: Optional[str] = None) -> List[Dict[str, Any]]: ...
def wgpu_native_version() -> str: ...

def _cache_stats() -> Dict[str, Any]: ...
def _place_driver_cache() -> Dict[str, Any]: ...
def _cache_zero_stats() -> None: ...
def _cache_directory() -> Optional[str]: ...
def _cache_entries() -> List[Dict[str, Any]]: ...
def _cache_clear() -> int: ...
def _cache_flush() -> None: ...
def _cache_explain(program: ProgramSource, workgroup: Optional[Dim] = None, ulp: int = 0,
                   fingerprint: Optional[str] = None, backend: Optional[Backend] = None) -> Dict[str, Any]: ...
# vyre.lib's kernels: the shape (None: chosen for the device), tune (None:
# VYRE_TUNE), retune, and a list receiving a dict per shape chosen.
def _lib_reduce(backend: Backend, x: DeviceArray, op: str, workgroup: Optional[int], items: Optional[int],
                tune: Optional[bool], retune: bool, report: Optional[List[Dict[str, Any]]]) -> DeviceArray: ...
def _lib_scan(backend: Backend, x: DeviceArray, op: str, inclusive: bool, workgroup: Optional[int],
              items: Optional[int], tune: Optional[bool], retune: bool,
              report: Optional[List[Dict[str, Any]]]) -> DeviceArray: ...
def _lib_sort(backend: Backend, keys: DeviceArray, values: Optional[DeviceArray], descending: bool,
              workgroup: Optional[int], items: Optional[int], tune: Optional[bool], retune: bool,
              report: Optional[List[Dict[str, Any]]]) -> Tuple[DeviceArray, Optional[DeviceArray]]: ...
def _lib_bincount(backend: Backend, x: DeviceArray, bins: int, tune: Optional[bool], retune: bool,
                  report: Optional[List[Dict[str, Any]]]) -> DeviceArray: ...
def _lib_find(backend: Backend, haystack: DeviceArray, patterns: List[bytes], workgroup: Optional[int],
              chunk: Optional[int], tune: Optional[bool], retune: bool,
              report: Optional[List[Dict[str, Any]]]) -> Tuple[DeviceArray, DeviceArray]: ...
def _lib_compact(backend: Backend, x: DeviceArray, mask: Optional[DeviceArray], workgroup: Optional[int],
                 items: Optional[int], tune: Optional[bool], retune: bool,
                 report: Optional[List[Dict[str, Any]]]) -> DeviceArray: ...
def _lib_histogram(backend: Backend, x: DeviceArray, bins: int, lo: float, hi: float, edges: Optional[List[float]],
                   workgroup: Optional[int], items: Optional[int], tune: Optional[bool], retune: bool,
                   report: Optional[List[Dict[str, Any]]]) -> Tuple[DeviceArray, DeviceArray]: ...
def _lib_matmul(backend: Backend, a: DeviceArray, b: DeviceArray, m: int, n: int, k: int, tile_m: Optional[int],
                tile_n: Optional[int], tile_k: Optional[int], thread_m: Optional[int], thread_n: Optional[int],
                tune: Optional[bool], retune: bool, report: Optional[List[Dict[str, Any]]]) -> DeviceArray: ...
def _lib_transpose(backend: Backend, x: DeviceArray, rows: int, cols: int, tile: Optional[int],
                   rows_per_invocation: Optional[int], tune: Optional[bool], retune: bool,
                   report: Optional[List[Dict[str, Any]]]) -> DeviceArray: ...
def _lib_softmax(backend: Backend, x: DeviceArray, rows: int, cols: int, workgroup: Optional[int],
                 lanes: Optional[int], tune: Optional[bool], retune: bool,
                 report: Optional[List[Dict[str, Any]]]) -> DeviceArray: ...
