// Jobs from folders, manifests and trace files (see job_input.hpp).
#include "sim/diagnosis/job_input.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::diagnosis {
namespace {

namespace fs = std::filesystem;

bool is_trace_name(const std::string& name) {
  auto ends = [&](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".json") || ends(".json.gz");
}

std::string stem_of(const fs::path& p) {
  std::string s = p.filename().string();
  for (const std::string ext : {".gz", ".json"})
    if (s.size() > ext.size() && s.compare(s.size() - ext.size(), ext.size(), ext) == 0)
      s.resize(s.size() - ext.size());
  return s;
}

void read_manifest(const std::string& file, std::vector<JobInput>& jobs) {
  std::ifstream in(file);
  if (!in) throw InputError(file, 0, "", "cannot read the manifest");
  std::string line;
  long n = 0;
  int col_job = -1, col_rank = -1, col_path = -1;
  std::map<std::string, std::size_t> index;
  const fs::path base = fs::path(file).parent_path();
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    std::vector<std::string> f = split(line, ',');
    for (auto& x : f) x = std::string(trim(x));
    if (col_job < 0) {
      for (int i = 0; i < static_cast<int>(f.size()); ++i) {
        const std::string h = lower(f[static_cast<std::size_t>(i)]);
        if (h == "job") col_job = i;
        if (h == "rank") col_rank = i;
        if (h == "path") col_path = i;
      }
      if (col_job < 0 || col_rank < 0 || col_path < 0)
        throw InputError(file, n,
                         col_job < 0    ? "job"
                         : col_rank < 0 ? "rank"
                                        : "path",
                         "not a diagnose manifest: the header must name the columns job, rank, path");
      continue;
    }
    const int need = std::max({col_job, col_rank, col_path});
    if (static_cast<int>(f.size()) <= need)
      throw InputError(file, n, "", "expected at least " + std::to_string(need + 1) + " fields");
    const std::string job = f[static_cast<std::size_t>(col_job)];
    if (job.empty()) throw InputError(file, n, "job", "empty job name");
    TraceRef r;
    r.rank = parse_int32(f[static_cast<std::size_t>(col_rank)], file, n, "rank");
    if (r.rank < 0) throw InputError(file, n, "rank", "a rank is >= 0");
    fs::path p = f[static_cast<std::size_t>(col_path)];
    if (p.empty()) throw InputError(file, n, "path", "empty path");
    if (p.is_relative()) p = base / p;
    r.path = p.string();
    r.where = file;
    r.line = n;
    std::error_code ec;
    if (!fs::is_regular_file(r.path, ec)) throw InputError(file, n, "path", "no such trace file: " + r.path);
    auto [it, added] = index.try_emplace(job, jobs.size());
    if (added) {
      jobs.emplace_back();
      jobs.back().name = job;
    }
    jobs[it->second].refs.push_back(r);
  }
  if (col_job < 0) throw InputError(file, 0, "", "the manifest is empty");
}

}  // namespace

std::vector<JobInput> resolve_jobs(const std::vector<std::string>& inputs) {
  std::vector<JobInput> jobs;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      JobInput j;
      j.name = fs::path(in).lexically_normal().filename().string();
      if (j.name.empty() || j.name == ".")
        j.name = fs::absolute(in).lexically_normal().parent_path().filename().string();
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(in, ec))
        if (e.is_regular_file() && is_trace_name(e.path().filename().string()))
          files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) throw InputError(in, 0, "TRACES", "the folder holds no *.json or *.json.gz trace");
      for (auto& f : files) j.refs.push_back({f, -1, in, 0});
      jobs.push_back(std::move(j));
    } else if (fs::is_regular_file(in, ec)) {
      if (lower(fs::path(in).extension().string()) == ".csv") {
        read_manifest(in, jobs);
      } else {
        JobInput j;
        j.name = stem_of(in);
        j.refs.push_back({in, -1, in, 0});
        jobs.push_back(std::move(j));
      }
    } else {
      throw InputError(in, 0, "TRACES", "no such file or folder");
    }
  }
  std::set<std::string> names;
  for (const auto& j : jobs)
    if (!names.insert(j.name).second)
      throw InputError(j.refs.front().where, j.refs.front().line, "job",
                       "job '" + j.name + "' is given twice");
  return jobs;
}

void load_traces(JobInput& job) {
  std::map<int, std::size_t> by_rank;
  job.traces.clear();
  for (const auto& r : job.refs) {
    auto t = std::make_unique<KinetoTrace>(read_kineto_trace(r.path));
    if (r.rank >= 0) {
      if (t->has_distributed_info && t->rank != r.rank)
        throw InputError(r.where, r.line, "rank",
                         "the manifest says rank " + std::to_string(r.rank) + " but " + r.path +
                             " records distributedInfo.rank " + std::to_string(t->rank));
      t->rank = r.rank;
    }
    if (!by_rank.try_emplace(t->rank, job.traces.size()).second)
      throw InputError(r.line > 0 ? r.where : r.path, r.line, r.line > 0 ? "rank" : "distributedInfo.rank",
                       "job '" + job.name + "': two traces claim rank " + std::to_string(t->rank));
    job.traces.push_back(std::move(t));
  }
  // No rank missing between the lowest and the highest given.
  int expect = by_rank.begin()->first;
  for (const auto& [rank, i] : by_rank) {
    if (rank != expect) {
      const TraceRef& r = job.refs.front();
      throw InputError(r.line > 0 ? r.where : r.where, r.line, r.line > 0 ? "rank" : "distributedInfo.rank",
                       "job '" + job.name + "': rank " + std::to_string(expect) +
                           " is missing (ranks given: " + std::to_string(by_rank.begin()->first) + " to " +
                           std::to_string(by_rank.rbegin()->first) + ")");
    }
    ++expect;
  }
  std::vector<std::unique_ptr<KinetoTrace>> sorted;
  for (const auto& [rank, i] : by_rank) sorted.push_back(std::move(job.traces[i]));
  job.traces = std::move(sorted);
}

}  // namespace fleetsim::diagnosis
