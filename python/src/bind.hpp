// What the files of vyre._ext share. The extension binds libvyre (nanobind)
// on the public C++ API only (include/vyre); the Pythonic surface is here
// too, so that a call costs one crossing: python/vyre/__init__.py re-exports
// it. vyre_ext.cpp makes the module from the parts:
//   bind_errors.cpp   the library's errors as vyre.Error and its subclasses
//   bind_program.cpp  vyre.Program, vyre.validate, shader options
//   bind_gpu.cpp      Backend, Kernel, Batch, DeviceArray, devices()
//   bind_cache.cpp    the process's AOT cache, behind vyre.cache
//   bind_lib.cpp      vyre.lib's kernels (vyre::lib) on DeviceArrays
//   device_array.cpp  DeviceArray's state and NumPy arrays that own their bytes
//   arguments.cpp     Python numbers and shapes to the library's (one rule)
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>  // every file: std::string crosses everywhere

#include <memory>
#include <string>

#include "arguments.hpp"
#include "errors.hpp"
#include "vyre/aot.hpp"
#include "vyre/checked.hpp"
#include "vyre/gpu.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::python {

namespace nb = nanobind;

struct PyProgram {
  CheckedProgram checked;
};

struct PyBackend {
  std::shared_ptr<gpu::Backend> backend;
};

// A Program, JSON text, a path (str or os.PathLike) or a dict, checked.
PyProgram program_from_source(nb::handle source);
// The keyword arguments compile(), tune(), wgsl() and cache.explain() share.
ShaderOptions shader_options(nb::handle workgroup, int ulp, bool passes = true, nb::handle fixed_lengths = nb::none());

// The AOT cache of this process for the present settings, shared by every
// Backend made from Python and by vyre.cache.
std::shared_ptr<aot::Cache> process_cache();

void bind_errors(nb::module_& m);
void bind_program(nb::module_& m);
void bind_gpu(nb::module_& m);
void bind_cache(nb::module_& m);
void bind_lib(nb::module_& m);

}  // namespace vyre::python
