// The bundled examples (examples/*.json with their *.run.json), compiled
// into the program for `vyre demo`.
#pragma once

#include <string>
#include <vector>

namespace vyre::cli {

struct EmbeddedExample {
  std::string name;
  std::string program_json;
  std::string run_json;
};

const std::vector<EmbeddedExample>& embedded_examples();

}  // namespace vyre::cli
