// Naming what differs between two backend fingerprints. Fingerprints of the
// form `key=value;key=value` (as the GPU backend writes them) are compared
// part by part, so that a miss can say "the driver changed"; any other form
// is compared whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vyre::aot {

// The parts of a `key=value;...` fingerprint in order, or nullopt when it
// does not have that form.
std::optional<std::vector<std::pair<std::string, std::string>>> fingerprint_parts(std::string_view fingerprint);

// One line per difference, e.g. `fingerprint.driver: cached "A", now "B"`.
std::vector<std::string> fingerprint_differences(std::string_view cached, std::string_view now);

}  // namespace vyre::aot
