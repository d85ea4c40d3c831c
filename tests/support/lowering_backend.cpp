#include "support/lowering_backend.hpp"

#include <memory>

#include "vyre/aot.hpp"

namespace vyre::test {

gpu::Backend& lowering_backend() {
  static gpu::Backend b = [] {
    gpu::BackendOptions options;
    options.cache = std::make_shared<aot::Cache>(aot::CacheOptions{});  // no directory: lower every time
    return gpu::Backend(options);
  }();
  return b;
}

}  // namespace vyre::test
