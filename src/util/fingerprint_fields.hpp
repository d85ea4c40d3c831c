// A fingerprint written as named fields, `name=value;name=value`: the form
// the GPU backend writes its fingerprint in, and the one the cache reads to
// name the field that differs when it explains a miss ("fingerprint.driver:
// cached ..."). Kept here, apart from both, so that the cache knows the form
// without knowing GPUs, and the two never disagree on it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vyre {

using FingerprintFields = std::vector<std::pair<std::string, std::string>>;

// The fields joined as written, values verbatim.
std::string format_fingerprint(const FingerprintFields& fields);

// The fields of a fingerprint in order, or nullopt when it does not have the
// form (an override may be any string).
std::optional<FingerprintFields> fingerprint_fields(std::string_view fingerprint);

}  // namespace vyre
