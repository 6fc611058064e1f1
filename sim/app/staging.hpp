#pragma once
// Staging: outputs are written into a hidden folder inside the output folder and moved into place
// only when the whole run succeeded, so a failed run never leaves partial results. Used by
// `fleetsim run` (runner.cpp) and `fleetsim replay`.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fleetsim {

class Staging {
 public:
  /// Creates `out_dir` and its staging folder; errors name `out_dir` and `key` (e.g. "output.dir").
  explicit Staging(const std::string& out_dir, std::string key = "output.dir");
  ~Staging();  ///< removes the staging folder (and whatever was not committed)
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  /// A stream for output `name`, staged until commit().
  std::ofstream open(const std::string& name);
  /// The staging path for output `name`, for writers that take a path; staged until commit().
  std::string path(const std::string& name);
  /// Removes staged output `name` (a scratch file): it will not be moved into place.
  void discard(const std::string& name);
  /// Moves every staged file into the output folder; removes those of `known_outputs` not written.
  void commit(const std::vector<std::string>& known_outputs = {});

 private:
  std::filesystem::path out_;
  std::filesystem::path dir_;
  std::string key_;
  std::vector<std::string> names_;
};

}  // namespace fleetsim
