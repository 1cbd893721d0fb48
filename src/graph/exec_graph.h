// ExecGraph: what runs in one training step, on which rank and stream, after what. Produced by
// workload::build (from a Scenario) or trace importers; consumed by sim::Engine.
//
//   graph::ExecGraph g;
//   TaskId f = g.add_task({.kind = TaskKind::kCompute, .rank = 0, .stream = 0, .duration_ns = 1500}, "fwd");
//   TaskId b = g.add_task({.kind = TaskKind::kCompute, .rank = 0, .stream = 0, .duration_ns = 3000}, "bwd");
//   g.add_edge(f, b);
//   g.finalize();  // builds CSR edges, checks acyclic and collectives; throws Error naming tasks
//
// Tasks live in flat arrays and edges in CSR form (after finalize), so a graph of millions of
// tasks stays compact. A collective ties one task on each member rank; all of them start together
// once every member is ready. Time unit: integer nanoseconds.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace stepcast::graph {

using TaskId = std::uint32_t;
inline constexpr std::uint32_t kNoCollective = 0xffffffffu;
inline constexpr std::uint32_t kNoLink = 0xffffffffu;

/// Links are full duplex. Task::link names a port (one rank's connection at one topology level)
/// and the directions of it that the transfer uses: a send its port's outbound direction, a
/// receive its inbound one, a ring collective, which sends and receives at once, both.
enum class LinkDirection : std::uint32_t { kBoth = 0, kOutbound = 1, kInbound = 2 };
/// The Task::link of `port` used in `direction`. REQUIRES: port < 2^30.
constexpr std::uint32_t link(std::uint32_t port, LinkDirection direction) {
  return port << 2 | static_cast<std::uint32_t>(direction);
}

enum class TaskKind : std::uint8_t {
  kCompute,     // a GPU kernel
  kCollective,  // one rank's part of a collective (all-reduce, all-gather, ...)
  kSend,        // point-to-point send; paired with a kRecv through a two-member collective
  kRecv,
  kMemcpy,
  kHost,        // CPU-side work that blocks the stream (data loading, optimizer launch)
  kWait,        // a zero-length event wait
};

/// "compute", "collective", "send", "recv", "memcpy", "host" or "wait".
std::string_view kind_name(TaskKind kind);

/// What a task's time counts as in a step breakdown. Named by parallelism dimension rather than
/// by operator, so a trace importer can classify NCCL kernels the same way a builder does.
enum class Category : std::uint8_t {
  kCompute,
  kTensorParallel,
  kContextParallel,
  kExpertParallel,
  kPipeline,
  kShardedData,   // ZeRO-3 / FSDP parameter gathers and gradient scatters
  kDataParallel,  // gradient reduction across replicas (and ZeRO-1/2 parameter gathers)
  kOptimizer,
  kHost,  // the CPU launching kernels (a GPU waiting for it is host-bound)
  kOther,
};
inline constexpr int kCategories = 10;

/// "compute", "tp", "cp", "ep", "pp", "fsdp", "dp", "optimizer", "host" or "other".
std::string_view category_name(Category category);

struct Task {
  TaskKind kind = TaskKind::kCompute;
  // A communication kernel that holds some SMs of its rank while it runs (NCCL's: one per channel)
  // and streams through its HBM.
  bool holds_sms = false;
  std::uint32_t rank = 0;
  std::uint16_t stream = 0;        // streams are per rank: 0 compute, 1 communication, ...
  // How many times longer a kernel takes while one such kernel runs on its rank, on the SMs and
  // HBM bandwidth left (cost::KernelTime, cost::memory_time_s); 1: never slowed (sim/engine.h).
  // Floats fill padding: a task stays 72 bytes.
  float beside_collective_slowdown = 1;
  std::int64_t duration_ns = 0;    // REQUIRES: >= 0
  std::uint32_t collective = kNoCollective;  // set by add_collective for kCollective/kSend/kRecv
  // Transfers on the same direction of a port that overlap in time share its bandwidth
  // (graph::link, sim/engine.h).
  std::uint32_t link = kNoLink;
  Category category = Category::kCompute;
  // Metadata for analysis and traces.
  std::int32_t layer = -1;
  std::int32_t micro_batch = -1;
  // The same while two or more run: each holds its own SMs.
  float beside_two_collectives_slowdown = 1;
  double bytes = 0;
  double flops = 0;
  double memory_delta = 0;         // bytes this task leaves allocated on its rank (< 0: frees)
};

struct Collective {
  std::vector<TaskId> members;  // one task per participating rank
  std::int64_t duration_ns = 0;  // time once every member is ready (from the cost model)
};

class ExecGraph {
 public:
  /// Room for `tasks` tasks and `edges` edges in all, so that a builder that knows about how
  /// large its graph will be does not copy the arrays as they grow. Never shrinks them.
  void reserve(std::size_t tasks, std::size_t edges);
  /// Appends a task; tasks on the same (rank, stream) run in the order they were added.
  TaskId add_task(const Task& task, std::string_view name);
  /// `to` may not start before `from` ends. REQUIRES: both exist; not after finalize().
  void add_edge(TaskId from, TaskId to);
  /// Ties `members` (one per rank, kind kCollective, or one kSend and one kRecv) into one
  /// collective lasting `duration_ns` once all are ready. Returns its index.
  std::uint32_t add_collective(std::vector<TaskId> members, std::int64_t duration_ns);

  /// Builds the CSR adjacency and checks the graph. Throws Error(kInvalidInput) for a cycle
  /// (naming the tasks on it), a collective whose members are not all collective tasks, are
  /// repeated, sit on one rank twice, or a task of kind kCollective/kSend/kRecv in no collective
  /// (naming it). Complexity O(tasks + edges).
  void finalize();

  std::size_t size() const { return tasks_.size(); }
  /// Edges added so far. REQUIRES: not after finalize().
  std::size_t edges_added() const { return edge_list_.size(); }
  const Task& task(TaskId id) const { return tasks_[id]; }
  /// For builders that learn a task's metadata after adding it. REQUIRES: not after finalize();
  /// membership of collectives changes only through add_collective.
  Task& mutable_task(TaskId id);
  std::string_view name(TaskId id) const { return name_pool_[name_ids_[id]]; }
  const std::vector<Collective>& collectives() const { return collectives_; }
  /// Successors and predecessors of a task. REQUIRES: finalize() was called.
  std::span<const TaskId> successors(TaskId id) const;
  std::span<const TaskId> predecessors(TaskId id) const;
  std::uint32_t ranks() const { return ranks_; }
  /// Whether any task holds SMs. REQUIRES: finalize() was called.
  bool has_sm_holders() const { return has_sm_holders_; }

  /// Display names for traces and reports ("stage 3", "gradients"); "rank N" / "stream N" for
  /// those never named.
  void name_rank(std::uint32_t rank, std::string_view name);
  void name_stream(std::uint16_t stream, std::string_view name);
  std::string rank_name(std::uint32_t rank) const;
  std::string stream_name(std::uint16_t stream) const;

  /// Canonical text: one line per task in id order with its edges, then the collectives.
  std::string dump() const;

 private:
  std::vector<Task> tasks_;
  // Names are interned: a step repeats a few hundred operator names across millions of tasks.
  std::vector<std::uint32_t> name_ids_;
  std::vector<std::string> name_pool_;
  // Looked up by string_view: no string is built for a name already interned.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> name_index_;
  std::vector<std::string> rank_names_, stream_names_;
  std::vector<std::pair<TaskId, TaskId>> edge_list_;
  std::vector<std::uint32_t> succ_offsets_, pred_offsets_;
  std::vector<TaskId> succ_, pred_;
  std::vector<Collective> collectives_;
  std::uint32_t ranks_ = 0;
  bool has_sm_holders_ = false;
  bool finalized_ = false;
};

}  // namespace stepcast::graph
