#pragma once
// Reader for PyTorch profiler (Kineto) traces: Chrome-trace JSON, plain or gzip, one file per rank.
// Accepts the current categories (cpu_op, cuda_runtime, cuda_driver, kernel, gpu_memcpy, gpu_memset,
// cuda_sync, user_annotation, gpu_user_annotation) and the 2021 ones (Operator, Runtime, Kernel,
// Memcpy, Memset), NVIDIA and AMD/ROCm (hip*) names, the distributedInfo block and NCCL collective
// args. Parsing uses simdjson On-Demand (malformed JSON is reported as a DOM parse reports it); only
// complete ("X") events are kept. Times are microseconds as in the file. Bad input raises
// InputError naming the file.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

enum class KinetoCat {
  cpu_op,           ///< cpu_op / Operator
  runtime,          ///< cuda_runtime / cuda_driver / Runtime (hip* on ROCm)
  kernel,           ///< kernel / Kernel
  memcpy,           ///< gpu_memcpy / Memcpy
  memset,           ///< gpu_memset / Memset
  sync,             ///< cuda_sync (device-side record of a synchronisation)
  user_annotation,  ///< user_annotation (ProfilerStep#N, nccl:..., record_function)
  gpu_annotation,   ///< gpu_user_annotation
};

struct KinetoEvent {
  KinetoCat cat = KinetoCat::cpu_op;
  std::string_view name;            ///< interned in the owning KinetoTrace
  std::int64_t pid = -1, tid = -1;  ///< -1 when the file has a non-numeric id
  double ts = 0, dur = 0;           ///< microseconds
  std::int64_t correlation = -1;
  std::int64_t external_id = -1;
  int device = -1;
  std::int64_t stream = -1;
  double bytes = 0;  ///< memcpy/memset bytes; collectives: input message bytes
  // Collectives (NCCL kernels with args, or derived from the kernel name).
  std::string collective;            ///< "allreduce", "allgather", ... ("" if not a collective)
  std::string process_group;         ///< "Process Group Name" ("" = default group)
  int group_size = 0;                ///< "Group size" (0 = unknown)
  std::int64_t collective_seq = -1;  ///< "Seq" / sequence number in the group if recorded
  // Synchronisation records (cuda_sync).
  std::string sync_kind;  ///< "Stream Sync", "Event Sync", "Context Sync"
  std::int64_t wait_on_stream = -1;
  std::int64_t wait_on_event_record_corr = -1;
  // cpu_op shapes (minified JSON of "Input Dims" and "Input type"; "" if absent), interned.
  std::string_view input_dims, input_types;
};

struct KinetoProcessGroup {
  std::string name, desc;
  int size = 0;
  std::vector<int> ranks;
};

struct KinetoDevice {
  int id = 0;
  std::string name;
  double memory_bytes = 0;
  int sms = 0;
};

/// A KinetoTrace owns the text its events' string_views point to: it can be moved, not copied.
struct KinetoTrace {
  KinetoTrace() = default;
  KinetoTrace(KinetoTrace&&) = default;
  KinetoTrace& operator=(KinetoTrace&&) = default;
  KinetoTrace(const KinetoTrace&) = delete;
  KinetoTrace& operator=(const KinetoTrace&) = delete;

  std::string file;
  int rank = 0;
  int world_size = 1;
  bool has_distributed_info = false;
  std::string backend;
  std::vector<KinetoProcessGroup> process_groups;
  std::vector<KinetoDevice> devices;
  std::vector<KinetoEvent> events;                 ///< complete events of known categories, file order
  std::map<std::string, long> unknown_categories;  ///< category -> count (ignored events)
  long gpu_events = 0;                             ///< kernels + memcpy + memset

  std::vector<std::unique_ptr<char[]>> strings;  ///< storage of the interned event strings

  /// Device name for a device id ("" if the trace has no deviceProperties entry for it).
  std::string device_name(int device) const;
};

/// Read a trace file (.json or .json.gz). Throws InputError for unreadable, truncated, non-JSON or
/// non-trace input.
KinetoTrace read_kineto_trace(const std::string& path);
/// Parse trace text already in memory; `file` names it in error messages.
KinetoTrace parse_kineto_trace(std::string_view text, const std::string& file);
/// Read a file, inflating gzip; throws InputError on I/O or gzip errors, or when the file changed while
/// it was read.
std::string read_maybe_gzip(const std::string& path);
/// Whether `bytes` start with gzip's magic number.
bool is_gzip(std::string_view bytes);
/// Inflate gzip `bytes` (concatenated members too); InputError naming `path` when truncated or corrupt.
std::string inflate_gzip(std::string_view bytes, const std::string& path);

/// "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "sendrecv", "reduce" from an
/// NCCL/RCCL kernel name ("" if the name is not a collective kernel).
std::string collective_from_kernel_name(std::string_view name);
/// True for NCCL/RCCL kernel names.
bool is_collective_kernel(std::string_view name);

}  // namespace fleetsim
