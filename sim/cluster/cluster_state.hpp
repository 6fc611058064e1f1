#pragma once
// ClusterState: which GPU (share), CPU and memory of which node is free. Pure bookkeeping, no
// SimGrid, so placement policies and tests can use it alone. Queries used on every scheduling
// attempt are O(1) or O(log nodes) (a segment tree of per-node maxima).
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/platform/cluster_spec.hpp"
#include "workloads/jobs/job.hpp"

namespace fleetsim {

using JobId = std::int32_t;      ///< index of the job in the simulation's job list
using TypeMask = std::uint64_t;  ///< bit i = GPU type i of the cluster (at most 64 types)

/// A job's resource request, as placement sees it.
struct Request {
  int gpus = 1;                   ///< GPUs (0 = CPU-only)
  int milli = 1000;               ///< share of each GPU, thousandths (1000 = whole)
  TypeMask types = ~TypeMask{0};  ///< allowed GPU types
  double cpu_milli = 0;           ///< total CPU request (split over nodes in proportion to GPUs)
  double memory_mib = 0;          ///< total memory request (split likewise)
  bool single_node = false;       ///< all GPUs in one node
  bool whole() const { return milli >= 1000; }
};

struct Slot {
  int node = 0;
  int gpu = 0;
  int milli = 1000;
};

struct Allocation {
  std::vector<Slot> slots;  ///< one per GPU (or one CPU-only slot with gpu = -1)
  double cpu_milli = 0;
  double memory_mib = 0;
  int nodes = 0;   ///< distinct nodes
  int leaves = 0;  ///< distinct leaves
};

class ClusterState {
 public:
  explicit ClusterState(const ClusterSpec& spec);

  // --- static facts
  int node_count() const { return static_cast<int>(nodes_.size()); }
  int type_count() const { return static_cast<int>(type_names_.size()); }
  const std::string& type_name(int t) const { return type_names_[t]; }
  /// Index of a canonical GPU type, or -1 if the cluster has none.
  int type_index(const std::string& canonical) const;
  int node_type(int n) const { return nodes_[n].type; }
  int node_leaf(int n) const { return nodes_[n].leaf; }
  /// The pod of node n in a 3-tier fabric (leaf group / network.leaves_per_pod); 0 for every node
  /// of a 2-tier fabric.
  int node_pod(int n) const {
    const int per_pod = spec_.network.leaves_per_pod;
    return per_pod > 0 ? nodes_[n].leaf / per_pod : 0;
  }
  int node_gpus(int n) const { return static_cast<int>(nodes_[n].gpu_free.size()); }
  const ClusterSpec& spec() const { return spec_; }
  int total_gpus() const { return total_gpus_; }
  /// The largest GPU capacity (thousandths), CPU (thousandths) and memory (MiB) of any node, each at
  /// least 1: the normalisation scale of multi-resource scores.
  struct Scale {
    double gpu_milli = 1, cpu_milli = 1, memory_mib = 1;
  };
  const Scale& largest_node() const { return largest_; }

  // --- dynamic state
  int free_whole(int n) const { return nodes_[n].free_whole; }
  int gpu_free_milli(int n, int g) const { return nodes_[n].gpu_free[g]; }
  /// Free GPU capacity of node n, thousandths of a GPU summed over its GPUs.
  int free_milli(int n) const { return nodes_[n].free_milli; }
  double cpu_free(int n) const { return nodes_[n].cpu_free; }
  double mem_free(int n) const { return nodes_[n].mem_free; }
  /// Sum over all GPUs of allocated thousandths.
  long long used_milli() const { return used_milli_; }
  /// Whole free GPUs of the allowed types, cluster-wide.
  int free_whole_of(TypeMask types) const;

  /// Could `r` be placed on node n right now (single-node view: all its GPUs there)?
  bool fits_node(int n, const Request& r) const;
  /// Could node n host `gpus` GPUs of request r (and the matching CPU/memory share)?
  bool fits_part(int n, const Request& r, int gpus) const;
  /// Whole free GPUs on n usable by r given its CPU/memory share per GPU. Inline: placers call it
  /// for every node when they spread a job.
  int usable_whole(int n, const Request& r) const {
    constexpr double kSlack = 1e-9;
    const Node& node = nodes_[static_cast<std::size_t>(n)];
    if (node.free_whole == 0 || node.type < 0 || (r.types & (TypeMask{1} << node.type)) == 0) return 0;
    int g = node.free_whole;
    if (r.gpus > 0 && r.cpu_milli > 0)
      g = std::min(g, static_cast<int>((node.cpu_free + kSlack) / (r.cpu_milli / r.gpus)));
    if (r.gpus > 0 && r.memory_mib > 0)
      g = std::min(g, static_cast<int>((node.mem_free + kSlack) / (r.memory_mib / r.gpus)));
    return std::max(g, 0);
  }
  /// First node >= from (in node order) that fits_node(r), or -1. O(log n) typical.
  int first_fit_node(const Request& r, int from = 0) const;
  /// Best fit: the fitting node left with the least free GPU capacity after placing r (ties: lowest
  /// index), or -1. O(log n) typical: nodes are kept ordered by free capacity within each GPU type,
  /// and the first fitting node from r's need upwards is the answer.
  int best_fit_node(const Request& r) const;
  /// Could the request ever fit an empty cluster? If not, `why` says which resource is short.
  bool ever_fits(const Request& r, std::string& why) const;

  /// Pick GPUs on node n for `gpus` GPUs of request r (lowest-index first, best-fit share for
  /// fractional requests) and append the slots. Precondition: fits_part(n, r, gpus).
  void pick_on_node(int n, const Request& r, int gpus, Allocation& out) const;

  void allocate(const Allocation& a);
  void release(const Allocation& a);

  /// Takes node n out of service (a failure, a drain): its free capacity is withheld, so nothing is
  /// placed on it, until set_up(n) gives it back. Allocations still on it are not touched (the
  /// engine interrupts their jobs first). Withheld capacity does not count as used.
  void set_down(int n);
  void set_up(int n);
  bool is_down(int n) const { return nodes_[n].down; }
  int down_nodes() const { return down_nodes_; }
  /// GPU capacity withheld by down nodes, thousandths of a GPU.
  long long down_milli() const { return down_milli_; }
  /// Fill in nodes/leaves/cpu/mem of an allocation built from slots.
  void finalize(const Request& r, Allocation& a) const;

 private:
  struct Node {
    std::vector<int> gpu_free;  ///< free thousandths per GPU
    int free_whole = 0;
    int max_gpu_free = 0;
    int free_milli = -1;  ///< sum of gpu_free (-1 before the node is first indexed)
    double cpu_free = 0;
    double mem_free = 0;
    int type = -1;
    int leaf = 0;
    bool down = false;
    std::vector<int> withheld;  ///< while down: the free thousandths per GPU it had
    double withheld_cpu = 0;
    double withheld_mem = 0;
  };
  struct Agg {  ///< segment-tree maxima over a range of nodes
    int max_whole = -1;
    int max_share = -1;
    double max_cpu = -1;
    double max_mem = -1;
    TypeMask types = 0;
  };

  /// Take (sign -1) or give back (sign +1) an allocation's resources.
  void apply(const Allocation& a, int sign);
  void update_node(int n);
  void refresh_node_max(Node& node);
  int descend(int idx, int lo, int hi, const Request& r, int from) const;
  bool agg_may_fit(const Agg& a, const Request& r) const;

  struct Shape {  ///< distinct empty-node shapes, for ever_fits()
    int type;
    int gpus;
    double cpu;
    double mem;
    bool operator==(const Shape&) const = default;
  };

  ClusterSpec spec_;
  Scale largest_;
  std::vector<Shape> shapes_;
  std::vector<long long> total_by_type_;
  std::vector<Node> nodes_;
  std::vector<std::string> type_names_;
  std::vector<int> free_whole_by_type_;
  std::vector<Agg> tree_;
  /// Per GPU type (last: nodes without GPUs), the nodes ordered by (free milli, index).
  std::vector<std::set<std::pair<int, int>>> by_free_;
  int leaves_size_ = 1;
  int total_gpus_ = 0;
  long long used_milli_ = 0;
  int down_nodes_ = 0;
  long long down_milli_ = 0;
};

/// Translate a job's trace request into a placement request for this cluster (canonical GPU
/// type names; an unknown type name is an InputError naming the job's line).
Request make_request(const JobSpec& job, const ClusterState& state, const std::string& trace_file);

}  // namespace fleetsim
