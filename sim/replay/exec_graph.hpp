#pragma once
// Execution graph of one training job from its Kineto traces (one per rank), as a Boost.Graph DAG.
//
// Nodes: CPU-side runtime calls (cudaLaunchKernel, cudaMemcpyAsync, cudaStreamSynchronize, hip*...,
// one lane per CPU thread) and GPU operations (kernels, NCCL collectives, memcpy, memset; one lane
// per device stream). Edges constrain a node's start (thread order, launch -> kernel by correlation
// id, stream order, cross-stream event waits) or its end (a synchronising call cannot return before
// the GPU work it waits on; a collective cannot finish before the slowest participating rank's
// matching collective started, matched by process group and sequence number).
//
// Every edge carries a lag. For each node the *binding* constraint in the measured trace (the one
// that explains its measured start, or end) gets the measured lag; the others get their intrinsic
// minimum (launch latency, zero queueing), never more than measured. Replaying the graph with the
// trace's durations therefore reproduces every measured time, while a what-if that shortens nodes
// moves them as far as their dependencies allow.
#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim::replay {

enum class NodeKind { cpu, kernel, collective, memcpy, memset };
enum class KernelClass { gemm, attention, elementwise, communication, memcpy, memset, other, cpu };
inline constexpr int kKernelClasses = 8;

std::string to_string(KernelClass c);
/// Kernel class from a kernel name (gemm/cutlass/xmma/Cijk_ -> gemm, flash/fmha/attention ->
/// attention, elementwise/reduce/copy/norm... -> elementwise, nccl/rccl -> communication).
KernelClass classify_kernel(std::string_view name);

enum class EdgeKind { thread_order, launch, stream_order, event_wait, sync, collective };
std::string to_string(EdgeKind k);

struct Node {
  NodeKind kind = NodeKind::cpu;
  KernelClass cls = KernelClass::cpu;
  int rank = 0;
  int lane = 0;                 ///< index into ExecGraph::lanes
  int trace = 0;                ///< index into the traces
  std::size_t event = 0;        ///< index into the trace's events
  double start = 0;             ///< measured, seconds from the job's origin
  double end = 0;               ///< measured, seconds from the job's origin
  double body = 0;              ///< seconds the node itself takes when nothing else holds it
  std::int64_t group_seq = -1;  ///< collectives: sequence number within the process group
  std::string group;            ///< collectives: process group key
  int matched_ranks = 1;        ///< collectives: ranks of this job whose matching kernel is in the graph
};

struct Edge {
  EdgeKind kind = EdgeKind::thread_order;
  bool from_start = false;  ///< reference time is the source's start (else its end)
  bool to_end = false;      ///< constrains the target's end (else its start)
  double lag = 0;           ///< seconds after the reference time
  bool binding = false;     ///< explains the measured time of the target
  double intrinsic = 0;     ///< (construction) minimum lag
};

using Dag = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Node, Edge>;
using Vertex = Dag::vertex_descriptor;

struct Lane {
  int rank = 0;
  bool gpu = false;
  int device = 0;
  std::int64_t id = 0;  ///< thread id or stream id
  std::string name;     ///< "rank 0 thread 4037", "rank 0 gpu 0 stream 7"
};

struct Step {
  int rank = 0;
  std::string name;            ///< "ProfilerStep#551" or "trace"
  double start = 0, end = 0;   ///< measured, seconds from the job's origin
  long first = -1, last = -1;  ///< first/last node of the step (-1: none)
  bool whole_trace = false;
};

struct ExecGraph {
  Dag g;
  std::vector<Lane> lanes;
  std::vector<Step> steps;
  std::vector<const KinetoTrace*> traces;  ///< index = Node::trace
  std::vector<int> ranks;                  ///< rank of each trace
  int world_size = 1;
  double origin_us = 0;            ///< trace time of t = 0
  std::vector<std::string> notes;  ///< facts the report should state
  long matched_collectives = 0;    ///< collective nodes joined across ranks
  long inferred_waits = 0;         ///< cross-stream waits inferred from unexplained GPU start delays

  const KinetoEvent& event(const Node& n) const {
    return traces[static_cast<std::size_t>(n.trace)]->events[n.event];
  }
};

/// Build the graph of one job from its ranks' traces (one per rank; pointers must outlive the graph).
/// Throws InputError when no trace has GPU events, or two traces claim the same rank.
ExecGraph build_exec_graph(const std::vector<const KinetoTrace*>& traces);

}  // namespace fleetsim::replay
