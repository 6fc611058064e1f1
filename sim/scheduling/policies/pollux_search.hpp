#pragma once
// The allocation search of the pollux policy (Qiao et al., OSDI'21; artifact petuum/adaptdl branch
// osdi21-artifact, simulator/pollux.py): a genetic search over allocation matrices (jobs x nodes:
// GPUs of job j on node n) with two objectives, minimised together as NSGA-II does:
//   F0 = - power mean (p = -1) over jobs of speedup x (nodes / cluster GPUs), a job whose row changes
//        from the current allocation scaled by max(age - 30 restarts, 0) / (age + 30);
//   F1 = - cluster utility: sum of speedups / GPUs of the nodes in use.
// NSGA-II as pymoo runs it (binary tournaments by dominance then crowding, survival by rank then
// crowding); crowding distances are pagmo2's, and so are the fronts (a two-objective sort that gives
// pagmo's fast_non_dominated_sorting fronts, tested against it). The operators are Pollux's: one-point
// crossover over jobs; mutation that resets rows to the current allocation, zeroes elements, and grows jobs
// on nodes with free GPUs; repair that keeps one distributed job per node, a job's replica cap and at most 16
// nodes per job (in a random node order), and node capacity (jobs in priority order). Pure computation over
// its inputs.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace fleetsim::pollux {

/// An allocation matrix, row-major: jobs x nodes.
using AllocState = std::vector<std::uint8_t>;
/// (F0, F1), both minimised.
using Objectives = std::array<double, 2>;

struct SearchJob {
  /// speedup(nodes, replicas) >= 0, with speedup(0, 0) = 0; called once per distinct pair.
  std::function<double(int nodes, int replicas)> speedup;
  int max_replicas = 1;
  int min_replicas = 0;
  int restarts = 0;
  double age_s = 0;  ///< since submission
};

struct SearchSettings {
  int population = 100;
  int generations = 100;  ///< including the initial one (pymoo's n_gen)
  double restart_delay_s = 30;
  int max_nodes_per_job = 16;
  /// Stop once the best F0 has not improved for this many generations (0: run all generations, as
  /// the artifact does).
  int stall_generations = 0;
};

/// Non-dominated fronts of points of two objectives (both minimised), best first, each in index order:
/// the fronts of pagmo's fast_non_dominated_sorting in O(N log N + N x fronts) instead of its O(N^2)
/// pairwise dominance tests (0.4 ms for 200 points, called 100 times a round).
std::vector<std::vector<std::size_t>> non_dominated_fronts_2d(const std::vector<Objectives>& f);

class AllocationSearch {
 public:
  /// `jobs` in priority order (repair serves earlier jobs first); `node_gpus` per node; `base` the
  /// current allocation.
  AllocationSearch(std::vector<SearchJob> jobs, std::vector<int> node_gpus, AllocState base,
                   const SearchSettings& settings, std::mt19937_64& rng);
  /// Runs the search from `initial` (the previous Pareto set, adapted; or just the base) and returns
  /// the final population's non-dominated set; `best` is the index in it of the least F0.
  std::vector<AllocState> run(const std::vector<AllocState>& initial, std::size_t& best);

  /// The objectives (F0, F1) of one state.
  Objectives evaluate(const AllocState& s);
  void repair(AllocState& s);

 private:
  double speedup(std::size_t job, int nodes, int replicas);
  Objectives evaluate(const std::uint8_t* s);
  void repair(std::uint8_t* s);
  void mutate(std::uint8_t* s);

  std::vector<SearchJob> jobs_;
  std::vector<int> node_gpus_;
  AllocState base_;
  SearchSettings settings_;
  std::mt19937_64* rng_;
  std::size_t nj_, nn_;
  int total_gpus_ = 0;
  std::vector<std::vector<double>> memo_;  ///< per job: (nodes + 1) x (max_replicas + 1), < 0 unknown
  std::vector<double> restart_factor_;
  // Scratch space of the operators (no allocation per child).
  std::vector<int> used_, seen_;
  std::vector<std::uint8_t> active_, hit_;
  std::vector<std::size_t> order_;
};

}  // namespace fleetsim::pollux
