// libFuzzer harness: Hugging Face config.json files (tests/fuzz/README.md). The input is the file's
// bytes, read by both readers of model configs: the served model's (models/serving) and the trained
// transformer's (models/llm).
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/llm/transformer.hpp"
#include "models/serving/serving_tables.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim;
  const std::string path =
      fuzz::write_input("config.json", std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_input_error_only([&] { serving::read_model_config(path); });
  fuzz::expect_input_error_only([&] {
    const llm::TransformerConfig c = llm::read_transformer_config(path);
    (void)c.total_params();
  });
  return 0;
}
