// vyre._ext: the Python bindings of libvyre; bind.hpp says which file binds
// what.
#include "bind.hpp"
#include "vyre/version.hpp"

NB_MODULE(_ext, m) {
  m.doc() = "vyre's C++ library, bound with nanobind (use the vyre package, not this module)";
  vyre::set_caller_language(vyre::CallerLanguage::python);
  vyre::python::bind_errors(m);

  m.attr("__version__") = vyre::kVersion;
  m.def("wgpu_native_version", &vyre::gpu::wgpu_native_version);

  vyre::python::bind_program(m);
  vyre::python::bind_gpu(m);
  vyre::python::bind_cache(m);
  vyre::python::bind_lib(m);
}
