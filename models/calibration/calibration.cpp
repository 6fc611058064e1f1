#include "models/calibration/calibration.hpp"

#include <fstream>
#include <stdexcept>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/json_text.hpp"

namespace fleetsim {

namespace {
constexpr const char* kFormat = "fleetsim-calibration";
constexpr int kVersion = 1;
}  // namespace

nlohmann::json to_json(const Calibration& c) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["sources"] = c.sources;
  j["kernels"] = to_json(c.kernels);
  j["collectives"] = to_json(c.collectives);
  return j;
}

Calibration load_calibration(const std::string& path) {
  if (!std::ifstream(path)) throw InputError(path, 0, "", "cannot open calibration file");
  const nlohmann::json j = parse_json_text(read_input_file(path), path, "not a JSON calibration file");
  if (!j.is_object() || j.value("format", std::string()) != kFormat)
    throw InputError(path, 0, "format",
                     std::string("not a fleetsim calibration file (expected \"format\": \"") + kFormat +
                         "\"; write one with `fleetsim calibrate fit`)");
  if (j.value("version", 0) != kVersion)
    throw InputError(path, 0, "version",
                     "unsupported version " + j["version"].dump() + " (this build reads 1)");
  Calibration c;
  if (auto s = j.find("sources"); s != j.end() && s->is_array())
    for (const auto& v : *s)
      if (v.is_string()) c.sources.push_back(v.get<std::string>());
  if (auto k = j.find("kernels"); k != j.end()) c.kernels = kernel_calibration_from_json(*k, path);
  if (auto k = j.find("collectives"); k != j.end())
    c.collectives = collective_calibration_from_json(*k, path);
  return c;
}

void save_calibration(const Calibration& c, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << to_json(c).dump(1) << '\n';
  if (!out) throw std::runtime_error("error writing " + path);
}

}  // namespace fleetsim
