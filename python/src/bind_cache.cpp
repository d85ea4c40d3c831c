// vyre.cache's calls (python/vyre/cache.py wraps them): this process's AOT
// cache, its reports as the library writes them for `vyre cache ... --json`
// (aot::to_json, read with Python's json module: equal by construction),
// and explanations keyed as `vyre cache explain` keys them (gpu::KeyTarget).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bind.hpp"
#include "vyre/driver_cache.hpp"

namespace vyre::python {

using namespace nb::literals;

// One AOT cache per process and per setting (VYRE_AOT_CACHE_DIR and the
// others, read when a Backend opens or vyre.cache is called), shared by
// every Backend made from Python and by vyre.cache, so that vyre.cache.stats()
// counts this process's lookups.
std::shared_ptr<aot::Cache> process_cache() {
  static std::mutex mutex;
  static std::shared_ptr<aot::Cache> cache;
  static std::string signature;
  aot::CacheOptions options = aot::CacheOptions::from_environment();
  std::string sig = options.directory ? options.directory->string() : std::string("<none>");
  for (const auto& d : options.readonly_directories) sig += "|" + d.string();
  sig += "|" + std::to_string(options.max_bytes) + "|" + std::to_string(options.max_entries);
  sig += "|store" + std::to_string(static_cast<int>(options.store)) + (options.sqlite_wal ? "wal" : "");
  std::lock_guard<std::mutex> lock(mutex);
  if (!cache || sig != signature) {
    cache = std::make_shared<aot::Cache>(std::move(options));
    signature = sig;
  }
  return cache;
}

namespace {

nb::object path_or_none(const std::optional<std::filesystem::path>& p) {
  return p ? nb::cast(p->string()) : nb::none();
}

// A report the library wrote, as Python objects.
nb::object from_json(const std::string& text) { return nb::module_::import_("json").attr("loads")(text); }

nb::object cache_stats() {
  auto cache = process_cache();
  std::string text;
  {
    nb::gil_scoped_release release;
    text = aot::to_json(cache->stats(), *cache);
  }
  return from_json(text);
}

nb::object cache_entries() {
  auto cache = process_cache();
  std::string text;
  {
    nb::gil_scoped_release release;
    std::vector<aot::EntryInfo> entries = cache->list();
    aot::order_for_listing(entries);
    text = aot::to_json(entries);
  }
  return from_json(text);
}

// The device is `fingerprint`, else `backend`'s, else the override
// setting's, else the local adapter's (gpu::KeyTarget).
nb::object cache_explain(nb::handle program, nb::handle workgroup, int ulp, nb::handle fingerprint, nb::handle backend) {
  PyProgram p = program_from_source(program);
  const ShaderOptions options = shader_options(workgroup, ulp);
  const std::string given = fingerprint.is_none() ? std::string() : nb::cast<std::string>(fingerprint);
  std::shared_ptr<const gpu::Backend> chosen;
  if (given.empty() && !backend.is_none()) chosen = nb::cast<PyBackend&>(backend).backend;
  auto cache = process_cache();
  std::string text;
  {
    nb::gil_scoped_release release;
    gpu::BackendOptions local;
    local.cache = cache;
    const gpu::KeyTarget target = chosen ? gpu::KeyTarget::of_backend(chosen) : gpu::KeyTarget::resolve(given, local);
    text = aot::to_json(cache->explain(target.of(p.checked, options).parts, target.device_fingerprint()));
  }
  return from_json(text);
}

}  // namespace

void bind_cache(nb::module_& m) {
  m.def("_cache_stats", &cache_stats);
  m.def("_place_driver_cache", [] {
    const gpu::DriverCachePlacement p = gpu::place_driver_cache();
    nb::dict d;
    d["active"] = p.active;
    d["data_folder"] = p.active ? nb::cast(p.data_folder.string()) : nb::none();
    d["fingerprint"] = p.fingerprint;
    d["files_before"] = p.files_before;
    d["reason"] = p.reason;
    return d;
  });
  m.def("_cache_zero_stats", [] {
    auto c = process_cache();
    nb::gil_scoped_release release;
    c->zero_stats();
  });
  m.def("_cache_directory", [] { return path_or_none(process_cache()->directory()); });
  m.def("_cache_entries", &cache_entries);
  m.def("_cache_clear", [] {
    auto c = process_cache();
    nb::gil_scoped_release release;
    return c->clear();
  });
  m.def("_cache_flush", [] {
    auto c = process_cache();
    nb::gil_scoped_release release;
    c->flush();
  });
  m.def("_cache_explain", &cache_explain, "program"_a, "workgroup"_a = nb::none(), "ulp"_a = 0,
        "fingerprint"_a = nb::none(), "backend"_a = nb::none());
}

}  // namespace vyre::python
