// vyre.Program and vyre.validate: programs from JSON text, files and dicts,
// checked once when they are made.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bind.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/run_file.hpp"
#include "vyre/web.hpp"
#include "vyre/wire.hpp"

namespace vyre::python {

using namespace nb::literals;

namespace {

bool looks_like_json(const std::string& s) {
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

nb::dict buffer_dict(const Buffer& b) {
  nb::dict d;
  d["name"] = b.name;
  d["binding"] = b.binding ? nb::cast(*b.binding) : nb::none();
  d["access"] = std::string(to_string(b.access));
  d["dtype"] = numpy_name(b.type);
  d["count"] = b.count == 0 ? nb::none() : nb::cast(b.count);
  d["output"] = b.output;
  return d;
}

}  // namespace

ShaderOptions shader_options(nb::handle workgroup, int ulp, bool passes, nb::handle fixed_lengths) {
  ShaderOptions o;
  if (!workgroup.is_none()) o.workgroup_override = dim3_argument(workgroup, "workgroup", "workgroup size");
  if (ulp < 0 || ulp > 255) throw nb::value_error("ulp must be 0..255 (0: WGSL's builtins)");
  if (ulp > 0) o.ulp_budget = static_cast<uint8_t>(ulp);
  o.passes = passes;
  if (!fixed_lengths.is_none()) {
    if (!nb::isinstance<nb::dict>(fixed_lengths))
      throw nb::type_error("fixed_lengths must be a dict of buffer name to element count");
    for (auto [name, length] : nb::borrow<nb::dict>(fixed_lengths))
      o.fixed_lengths[nb::cast<std::string>(name)] = u32_argument(length, item_name("fixed_lengths", name), "length");
  }
  return o;
}

PyProgram program_from_source(nb::handle source) {
  if (nb::isinstance<PyProgram>(source)) return nb::cast<PyProgram>(source);
  if (PyDict_Check(source.ptr())) {
    std::string text = nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(source));
    nb::gil_scoped_release release;
    return PyProgram{program_from_json(text)};
  }
  if (PyUnicode_Check(source.ptr())) {
    std::string s = nb::cast<std::string>(source);
    nb::gil_scoped_release release;
    if (looks_like_json(s)) return PyProgram{program_from_json(s)};
    return PyProgram{program_from_json_file(s)};
  }
  if (PyObject_HasAttrString(source.ptr(), "__fspath__")) {
    std::string path = nb::cast<std::string>(nb::module_::import_("os").attr("fsdecode")(source));
    nb::gil_scoped_release release;
    return PyProgram{program_from_json_file(path)};
  }
  throw nb::type_error("a program is a vyre.Program, a JSON string, a path to a .json file, or a dict");
}

void bind_program(nb::module_& m) {
  // ---- Program ----
  nb::class_<PyProgram>(m, "Program")
      .def_static(
          "from_json", [](nb::handle source) { return program_from_source(source); }, "source"_a,
          "A program from JSON text, or from a path (str or os.PathLike) to a .json file. Raises ProgramError.")
      .def_static(
          "from_dict",
          [](nb::handle d) {
            if (!PyDict_Check(d.ptr())) throw nb::type_error("from_dict takes a dict (the program's JSON object)");
            return program_from_source(d);
          },
          "d"_a, "A program from a dict holding its JSON object. Raises ProgramError.")
      .def_prop_ro("name", [](const PyProgram& p) { return p.checked.name(); })
      .def_prop_ro("digest", [](const PyProgram& p) { return digest(p.checked.program()).hex(); },
                   "The canonical SHA-256 digest (hex), as `vyre hash` prints it.")
      .def_prop_ro("workgroup_size",
                   [](const PyProgram& p) {
                     const auto& w = p.checked.program().workgroup_size;
                     return nb::make_tuple(w[0], w[1], w[2]);
                   })
      .def_prop_ro("buffers",
                   [](const PyProgram& p) {
                     nb::list l;
                     for (const auto& b : p.checked.program().buffers) l.append(buffer_dict(b));
                     return l;
                   })
      .def(
          "wgsl",
          [](const PyProgram& p, nb::handle workgroup, int ulp, bool passes, nb::handle fixed_lengths) {
            ShaderOptions o = shader_options(workgroup, ulp, passes, fixed_lengths);
            nb::gil_scoped_release release;
            return lower_to_wgsl(p.checked, o);
          },
          "workgroup"_a = nb::none(), "ulp"_a = 0, nb::kw_only(), "passes"_a = true, "fixed_lengths"_a = nb::none(),
          "The WGSL, as `vyre lower` prints it.")
      .def(
          "export_web",
          [](const PyProgram& p, const std::filesystem::path& dir, const std::optional<std::filesystem::path>& run_file,
             nb::handle workgroup, int ulp, bool passes, nb::handle fixed_lengths) {
            web::WebExportOptions options;
            options.shader = shader_options(workgroup, ulp, passes, fixed_lengths);
            nb::gil_scoped_release release;
            if (run_file) options.example = read_run_file(p.checked.program(), run_file->string());
            aot::Cache cache = aot::Cache::from_environment();
            options.cache = &cache;
            const std::vector<web::WebShader> shaders = web::web_shaders(p.checked, options.shader);
            const web::WebExportReport report = web::export_web(p.checked, dir, options);
            nb::gil_scoped_acquire acquire;
            nb::list files, keys;
            for (const std::string& f : report.files) files.append(nb::str(f.c_str()));
            for (size_t i = 0; i < shaders.size(); ++i) {
              nb::dict shader;
              shader["role"] = shaders[i].role;
              shader["key"] = report.keys[i];
              keys.append(shader);
            }
            nb::dict out;
            out["folder"] = report.directory.string();
            out["files"] = files;
            out["shaders"] = keys;
            out["cache_hits"] = report.cache_hits;
            out["target"] = web::kTargetName;
            return out;
          },
          "dir"_a, "run_file"_a = nb::none(), nb::kw_only(), "workgroup"_a = nb::none(), "ulp"_a = 0,
          "passes"_a = true, "fixed_lengths"_a = nb::none(),
          "Writes the program as an ES module for WebGPU pages (`vyre export web`, docs/web.md): kernel.js, "
          "kernel.d.ts, package.json and index.html in `dir`; the demo page runs on `run_file`'s inputs when given.")
      .def("to_json", [](const PyProgram& p, int indent) { return program_to_json(p.checked.program(), indent); },
           "indent"_a = 2)
      .def("__eq__", [](const PyProgram& a, nb::handle b) {
        return nb::isinstance<PyProgram>(b) &&
               digest(a.checked.program()) == digest(nb::cast<const PyProgram&>(b).checked.program());
      })
      .def("__hash__", [](const PyProgram& p) { return nb::hash(nb::str(digest(p.checked.program()).hex().c_str())); })
      .def("__repr__", [](const PyProgram& p) {
        return "<vyre.Program '" + p.checked.name() + "' " + digest(p.checked.program()).hex().substr(0, 12) + ">";
      });

  m.def(
      "validate", [](nb::handle source) { return program_from_source(source); }, "source"_a,
      "Parses and checks a program (JSON text, a path, a dict or a Program); returns it, or raises ProgramError "
      "whose .diagnostics lists every problem as (JSON path, message).");
}

}  // namespace vyre::python
