#include "sim/app/staging.hpp"

#include <unistd.h>

#include <algorithm>

#include "workloads/base/input_error.hpp"

namespace fleetsim {

namespace fs = std::filesystem;

Staging::Staging(const std::string& out_dir, std::string key) : out_(out_dir), key_(std::move(key)) {
  std::error_code ec;
  fs::create_directories(out_, ec);
  if (ec) throw InputError(out_dir, 0, key_, "cannot create output folder: " + ec.message());
  dir_ = out_ / (".staging-" + std::to_string(::getpid()));
  fs::remove_all(dir_, ec);
  fs::create_directories(dir_, ec);
  if (ec) throw InputError(out_dir, 0, key_, "cannot write in output folder: " + ec.message());
}

Staging::~Staging() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::ofstream Staging::open(const std::string& name) {
  std::ofstream f(path(name), std::ios::binary);
  if (!f) throw InputError((out_ / name).string(), 0, key_, "cannot write file");
  return f;
}

std::string Staging::path(const std::string& name) {
  if (std::find(names_.begin(), names_.end(), name) == names_.end()) names_.push_back(name);
  return (dir_ / name).string();
}

void Staging::discard(const std::string& name) {
  std::error_code ec;
  fs::remove(dir_ / name, ec);
  names_.erase(std::remove(names_.begin(), names_.end(), name), names_.end());
}

void Staging::commit(const std::vector<std::string>& known_outputs) {
  for (const auto& k : known_outputs) {
    if (std::find(names_.begin(), names_.end(), k) == names_.end()) {
      std::error_code ec;
      fs::remove(out_ / k, ec);
    }
  }
  for (const auto& n : names_) fs::rename(dir_ / n, out_ / n);
}

}  // namespace fleetsim
