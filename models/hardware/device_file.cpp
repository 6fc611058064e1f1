// Device files in the NeuSight schema (../shared/data/microbench/neusight/devices/*.json), also written
// by our own microbenchmark suite (scripts/calibrate): one GPU's spec, turned into a GpuSpec.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/json_text.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

double number(const nlohmann::json& j, const std::string& path, const char* key) {
  auto it = j.find(key);
  if (it == j.end())
    throw InputError(
        path, 0, key,
        "missing (device files need Device, Dev_Mem, Mem_Bw, Num_Sm, Freq, SingleFLOPs, L2Cache)");
  if (!it->is_number()) throw InputError(path, 0, key, "expected a number, got " + it->dump());
  const double v = it->get<double>();
  if (!(v > 0)) throw InputError(path, 0, key, "must be positive, got " + it->dump());
  return v;
}

}  // namespace

GpuSpec load_device_file(const std::string& path) {
  if (!std::ifstream(path)) throw InputError(path, 0, "", "cannot open device file");
  const nlohmann::json j = parse_json_text(read_input_file(path), path, "not a JSON device file");
  if (!j.is_object()) throw InputError(path, 0, "", "not a device file: expected a JSON object");
  auto dev = j.find("Device");
  if (dev == j.end() || !dev->is_string() || dev->get<std::string>().empty())
    throw InputError(path, 0, "Device", "missing or not a string");
  const std::string device = dev->get<std::string>();

  GpuSpec g;
  if (const GpuSpec* known = find_gpu(device)) {
    g = *known;
  } else {
    g.name = device;
    g.vendor = device.starts_with("AMD") ? "AMD" : "NVIDIA";
  }
  g.memory_gib = number(j, path, "Dev_Mem");
  g.memory_bw_gbs = number(j, path, "Mem_Bw");
  g.sms = to_int32(number(j, path, "Num_Sm"), path, 0, "Num_Sm");
  g.boost_clock_mhz = number(j, path, "Freq");
  g.fp32_tflops = number(j, path, "SingleFLOPs") / 1000.0;
  g.l2_mib = number(j, path, "L2Cache");
  if (g.fp16_tflops == 0) g.fp16_tflops = g.fp32_tflops;
  return g;
}

std::vector<GpuSpec> load_device_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir, 0, "", "not a directory of device files");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<GpuSpec> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back(load_device_file(f));
  return out;
}

}  // namespace fleetsim
