// Writes the seed corpora of fuzz/corpus/ that are derived, not written by
// hand: the examples' wire encodings, cache entries (metadata, NUL, WGSL)
// and remote values of a few examples, and the generator's decisions for a
// few seeds. Run by hand after a format change (docs/fuzzing.md):
//
//   build-fuzz/fuzz/seed_corpus examples fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "aot/entry/entry.hpp"
#include "aot/entry/entry_frame.hpp"
#include "choice_bytes.hpp"
#include "differential/random_program.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/version.hpp"
#include "vyre/wire.hpp"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const void* data, size_t size) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary).write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}
void write(const fs::path& path, const std::string& text) { write(path, text.data(), text.size()); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: seed_corpus EXAMPLES_DIR CORPUS_DIR\n");
    return 2;
  }
  const fs::path examples = argv[1], corpus = argv[2];
  for (const auto& file : fs::directory_iterator(examples)) {
    const std::string name = file.path().filename().string();
    if (file.path().extension() != ".json" || name.ends_with(".run.json")) continue;
    const std::string stem = file.path().stem().string();
    const vyre::CheckedProgram program = vyre::program_from_json_file(file.path());
    const std::vector<uint8_t> wire = vyre::to_wire(program);
    write(corpus / "wire_decoder_fuzz" / (stem + ".wire"), wire.data(), wire.size());

    const std::string wgsl = vyre::lower(program).wgsl;
    vyre::aot::KeyParts parts{vyre::digest(program).hex(), vyre::shaping_signature(program), vyre::kLoweringVersion,
                              vyre::kVersion, "vendor=seed;device=corpus"};
    const std::string meta = vyre::aot::encode_metadata(vyre::aot::make_metadata(parts, program.name(), wgsl, 1.5));
    write(corpus / "cache_entry_fuzz" / (stem + ".entry"), meta + std::string(1, '\0') + wgsl);
    write(corpus / "cache_entry_fuzz" / (stem + ".remote"), vyre::aot::encode_entry_frame("wgsl", meta, wgsl));
    write(corpus / "cache_entry_fuzz" / (stem + ".packed"), vyre::aot::encode_entry_frame("entry", meta, wgsl));
  }
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    auto choices = vyre::differential::ChoiceStream::from_seed(seed);
    (void)vyre::differential::generate_case(choices);
    const std::vector<uint8_t> bytes = vyre::fuzz::bytes_from_decisions(choices.decisions());
    write(corpus / "program_roundtrip_fuzz" / ("seed" + std::to_string(seed) + ".choices"), bytes.data(), bytes.size());
  }
  return 0;
}
