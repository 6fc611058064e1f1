// fleetsim profile-from-trace TRACE... --name NAME --out PROFILES.toml [--match TEXT ...]
//                             [--source-gpu TYPE] [--append]
// Derives a training profile (models/job/training_profile.hpp) from a Kineto trace (the first trace's
// rank; further traces of other ranks only join its collectives), so that the cluster simulation's
// `kernels` job model runs the traced job on other GPU types and placements
// (sim/replay/trace_profile.hpp). Writes one [[profile]] table, or appends it to a library of them.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "sim/replay/trace_profile.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim::cli {
namespace {

namespace fs = std::filesystem;

struct TraceProfileArgs {
  std::vector<std::string> traces, match;
  std::string name, out, source_gpu;
  bool append = false, quiet = false;
};

int run(const TraceProfileArgs& a) {
  if (a.name.empty()) throw InputError("", 0, "--name", "must not be empty");
  std::string existing;
  if (a.append && fs::exists(a.out)) {
    for (const auto& p : read_profiles(a.out).profiles)
      if (lower(p.name) == lower(a.name))
        throw InputError(a.out, p.line, "--name", "the file already has a profile named '" + p.name + "'");
    existing = read_text(a.out);
  } else if (!a.append && fs::exists(a.out)) {
    throw InputError(a.out, 0, "--out", "exists; use --append to add the profile to it, or another path");
  }

  std::vector<std::unique_ptr<KinetoTrace>> traces;
  std::vector<const KinetoTrace*> ptrs;
  for (const auto& p : a.traces) {
    traces.push_back(std::make_unique<KinetoTrace>(read_kineto_trace(p)));
    ptrs.push_back(traces.back().get());
  }
  const replay::ExecGraph g = replay::build_exec_graph(ptrs);
  replay::TraceProfile tp = replay::profile_from_trace(g, a.name, a.source_gpu);
  TrainingProfile& p = tp.profile;
  p.match = a.match.empty() ? std::vector<std::string>{a.name} : a.match;

  const replay::Breakdown& m = tp.measured;

  write_atomically(a.out, [&](std::ostream& out) {
    out << existing;
    if (!existing.empty() && existing.back() != '\n') out << '\n';
    if (!existing.empty()) out << '\n';
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "# Derived by `fleetsim profile-from-trace` from %s (rank %d, %ld step(s)) on %s.\n"
                  "# Measured step %.3f ms: GPU compute %.3f, communication %.3f (exposed %.3f), "
                  "memcpy/memset %.3f, idle %.3f.\n",
                  fs::path(g.traces.front()->file).filename().c_str(), tp.rank, tp.steps, p.gpu->name.c_str(),
                  m.span * 1e3, m.compute * 1e3, m.communication * 1e3, m.exposed_communication * 1e3,
                  m.memory * 1e3, m.idle * 1e3);
    out << buf;
    for (const auto& n : tp.notes) out << "# Note: " << n << "\n";
    write_profile(out, p);
  });

  if (!a.quiet) {
    std::printf("fleetsim profile-from-trace: '%s' from rank %d, %ld step(s), traced on %s\n", p.name.c_str(),
                tp.rank, tp.steps, p.gpu->name.c_str());
    std::printf("  measured step          %10.3f ms\n", m.span * 1e3);
    std::printf("  forward + other ops    %10.3f ms  (%zu entries)\n", tp.forward_s * 1e3, p.kernels.size());
    std::printf("  backward ops           %10.3f ms  (%zu entries)\n", tp.backward_s * 1e3,
                p.backward_kernels.size());
    std::printf("  communication          %10.3f ms  (exposed %.3f; grad %.3f MB per step; overlap %.3f)\n",
                m.communication * 1e3, m.exposed_communication * 1e3, p.grad_bytes / 1e6, p.overlap);
    std::printf("  other (CPU, gaps)      %10.3f ms\n", p.other_s * 1e3);
    std::printf("  entries: %ld with GEMM shapes (kernel model), %ld by spec ratio\n", tp.shaped,
                tp.shapeless);
    std::printf(
        "  profile on %s alone: %.3f ms per iteration (measured step without exposed communication: "
        "%.3f ms)\n",
        p.gpu->name.c_str(), (tp.forward_s + tp.backward_s + p.other_s) * 1e3,
        (m.span - m.exposed_communication) * 1e3);
    for (const auto& n : tp.notes) std::printf("  note: %s\n", n.c_str());
    std::printf("  written to %s\n", a.out.c_str());
  }
  return 0;
}

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<TraceProfileArgs>();
  sub.add_option("traces", a->traces,
                 "Kineto trace files (.json or .json.gz); the profile is the first one's rank, the others "
                 "only join its collectives")
      ->required();
  sub.add_option("--name", a->name, "profile name")->required();
  sub.add_option("--out", a->out, "profile TOML to write (see --append)")->required();
  sub.add_option(
      "--match", a->match,
      "text in a trace job's model name that selects this profile (repeatable; default: the name)");
  sub.add_option("--source-gpu", a->source_gpu,
                 "the traced GPU type, when the trace's device name is unknown");
  sub.add_flag("--append", a->append, "add the profile to an existing profile file");
  sub.add_flag("--quiet,-q", a->quiet, "no summary");
  return [a] { return run(*a); };
}

const CommandRegistrar kRegistrar{"profile-from-trace",
                                  "derive a training profile (kernels job model) from a Kineto trace", setup};

}  // namespace
}  // namespace fleetsim::cli
