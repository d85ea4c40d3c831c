// vyre devices: the GPU adapters wgpu-native sees, with their fingerprints.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "vyre/gpu.hpp"

namespace vyre::cli {

void add_devices(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("devices", "List GPU adapters with their backend fingerprints");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print a JSON array");
  cmd->footer("Pick one with VYRE_WGPU_ADAPTER=INDEX or a part of its name; pick the API with WGPU_BACKEND.");
  cmd->callback([&action, json] {
    action = [json] {
      const auto adapters = gpu::enumerate_adapters();
      if (*json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& a : adapters)
          out.push_back({{"index", a.index},
                         {"name", a.name},
                         {"vendor", a.vendor},
                         {"driver", a.driver},
                         {"backend", a.backend},
                         {"type", a.type},
                         {"vendor_id", a.vendor_id},
                         {"device_id", a.device_id},
                         {"fingerprint", a.fingerprint}});
        std::cout << out.dump(2) << "\n";
        return kOk;
      }
      if (adapters.empty()) {
        std::cout << "no GPU adapters found (wgpu-native " << gpu::wgpu_native_version()
                  << "). Install a Vulkan driver: `apt install libvulkan1 mesa-vulkan-drivers` gives lavapipe, "
                     "a CPU Vulkan device; or your GPU vendor's driver.\n";
        return kNoGpu;
      }
      for (const auto& a : adapters) {
        std::cout << "[" << a.index << "] " << a.name << "\n"
                  << "    backend " << a.backend << ", type " << a.type << ", driver " << a.driver << "\n"
                  << "    fingerprint " << a.fingerprint << "\n";
      }
      return kOk;
    };
  });
}

}  // namespace vyre::cli
