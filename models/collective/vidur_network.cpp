// Vidur's collective profiles (vidur/profiling/collectives): one CSV per collective and setup, a row
// per (message size, worker count, workers per node) with the time statistics of a few eager NCCL
// calls in milliseconds. The setup folder is named <gpu>_<wiring>: "a100_dgx" (NVSwitch),
// "h100_pairwise_nvlink" (NVLink-bridged pairs).
#include <fstream>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

std::string parent_folder(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  const std::string dir = path.substr(0, slash);
  const auto up = dir.find_last_of('/');
  return up == std::string::npos ? dir : dir.substr(up + 1);
}

/// "a100_dgx" -> ("A100", "nvswitch"); "h100_pairwise_nvlink" -> ("H100", "nvlink-pair").
std::pair<std::string, std::string> setup_of(const std::string& folder) {
  const auto us = folder.find('_');
  std::string gpu = folder.substr(0, us);
  for (char& c : gpu) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string wiring = us == std::string::npos ? "" : lower(folder.substr(us + 1));
  std::string link;
  if (wiring.find("dgx") != std::string::npos || wiring.find("nvswitch") != std::string::npos)
    link = "nvswitch";
  else if (wiring.find("pair") != std::string::npos && wiring.find("nvlink") != std::string::npos)
    link = "nvlink-pair";
  else if (wiring.find("pcie") != std::string::npos)
    link = "pcie-p2p";
  return {gpu, link};
}

}  // namespace

std::vector<CollectiveSample> read_vidur_network(const std::string& path, const std::string& system) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open Vidur collective profile");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, 0, "", "empty file: no header line");
  std::vector<std::string> header;
  for (const auto& h : split(line, ',')) header.emplace_back(trim(h));
  auto find = [&](const std::string& name) -> long {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<long>(i);
    return -1;
  };
  long c_time = -1;
  std::string time_field;
  for (std::size_t i = 0; i < header.size() && c_time < 0; ++i)
    if (header[i].starts_with("time_stats.") && header[i].ends_with(".median")) {
      c_time = static_cast<long>(i);
      time_field = header[i];
    }
  if (c_time < 0)
    throw InputError(path, 1, "time_stats.<op>.median",
                     "missing column (a Vidur collective profile: ,time_stats.<op>.min,...,median,...,"
                     "num_workers,size,collective,devices_per_node,...)");
  const long c_size = find("size"), c_workers = find("num_workers"), c_per_node = find("devices_per_node"),
             c_op = find("collective");
  for (const auto& [col, name] : {std::pair{c_size, "size"}, std::pair{c_workers, "num_workers"},
                                  std::pair{c_per_node, "devices_per_node"}})
    if (col < 0) throw InputError(path, 1, name, "missing column");
  // The op: the `collective` column, else the time column's name (time_stats.<op>.median).
  const std::string op_from_header = time_field.substr(11, time_field.size() - 11 - 7);
  const auto [gpu, link] = setup_of(parent_folder(path));
  std::vector<CollectiveSample> out;
  long lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    const auto f = split(line, ',');
    if (f.size() != header.size())
      throw InputError(
          path, lineno, "",
          "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    auto field = [&](long c) { return std::string(trim(f[static_cast<std::size_t>(c)])); };
    const std::string op_text = c_op >= 0 && !field(c_op).empty() ? field(c_op) : op_from_header;
    CollectiveSample s;
    s.file = path;
    s.line = lineno;
    s.system = system.empty() ? gpu : system;
    s.link = link;
    s.op = parse_collective(op_text, path, lineno, "collective");
    s.bytes = parse_double(field(c_size), path, lineno, "size");
    s.ranks = parse_int32(field(c_workers), path, lineno, "num_workers");
    const int per_node = parse_int32(field(c_per_node), path, lineno, "devices_per_node");
    s.seconds = parse_double(field(c_time), path, lineno, time_field) * 1e-3;
    if (s.bytes <= 0) throw InputError(path, lineno, "size", "must be positive");
    if (s.ranks < 1) throw InputError(path, lineno, "num_workers", "must be >= 1");
    if (per_node < 1 || s.ranks % per_node != 0)
      throw InputError(path, lineno, "devices_per_node",
                       "must divide num_workers (" + std::to_string(s.ranks) + ")");
    if (!(s.seconds > 0)) throw InputError(path, lineno, time_field, "must be a positive time");
    s.nodes = s.ranks / per_node;
    out.push_back(std::move(s));
  }
  if (out.empty()) throw InputError(path, 0, "", "no result rows after the header");
  return out;
}

}  // namespace fleetsim
