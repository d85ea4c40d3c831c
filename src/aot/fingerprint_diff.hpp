// Naming what differs between two backend fingerprints. Fingerprints written
// as fields (util/fingerprint_fields.hpp, the form the GPU backend uses) are
// compared field by field, so that a miss can say "the driver changed"; any
// other form is compared whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vyre::aot {

// One line per difference, e.g. `fingerprint.driver: cached "A", now "B"`.
std::vector<std::string> fingerprint_differences(std::string_view cached, std::string_view now);

}  // namespace vyre::aot
