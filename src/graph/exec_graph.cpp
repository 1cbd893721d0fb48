#include "graph/exec_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/error.h"

namespace stepcast::graph {

// The engine reads tasks in a hot loop; a graph of millions of them should stay compact.
static_assert(sizeof(Task) <= 72, "Task grew: keep new fields in its padding");
namespace {


bool is_collective_kind(TaskKind kind) {
  return kind == TaskKind::kCollective || kind == TaskKind::kSend || kind == TaskKind::kRecv;
}

// Counting sort, by `key`, of the edges that `for_each_edge` visits, into CSR form: the values
// of key v are values[offsets[v]] up to values[offsets[v + 1]], in the order the edges were
// visited. The caller relies on that order to get every neighbour list sorted.
template <typename Edges, typename Key, typename Value>
void fill_csr(std::size_t vertices, std::size_t edge_count, const Edges& for_each_edge, Key key,
              Value value, std::vector<std::uint32_t>& offsets, std::vector<TaskId>& values) {
  offsets.assign(vertices + 1, 0);
  for_each_edge([&](TaskId from, TaskId to) { ++offsets[key(from, to) + 1]; });
  for (std::size_t v = 0; v < vertices; ++v) offsets[v + 1] += offsets[v];
  values.resize(edge_count);
  std::vector<std::uint32_t> next(offsets.begin(), offsets.end() - 1);
  for_each_edge([&](TaskId from, TaskId to) { values[next[key(from, to)]++] = value(from, to); });
}

void check_collectives(const ExecGraph& g) {
  auto describe = [&g](TaskId id) {
    return fmt::format("task \"{}\" (task {}, rank {})", g.name(id), id, g.task(id).rank);
  };
  // owner_stamp[r] == k + 1 means owner[r] is the member of collective k on rank r; stamping
  // avoids clearing the arrays between collectives.
  std::vector<std::uint32_t> owner_stamp(g.ranks(), 0);
  std::vector<TaskId> owner(g.ranks());
  for (std::uint32_t k = 0; k < g.collectives().size(); ++k) {
    const Collective& c = g.collectives()[k];
    if (c.members.empty()) {
      throw Error(ErrorKind::kInvalidInput, fmt::format("collective {} has no members", k));
    }
    int sends = 0;
    int recvs = 0;
    for (TaskId m : c.members) {
      const Task& t = g.task(m);
      if (!is_collective_kind(t.kind)) {
        throw Error(ErrorKind::kInvalidInput,
                    fmt::format("collective {} has a member that is not a collective task: {} is "
                                "a {} task",
                                k, describe(m), kind_name(t.kind)));
      }
      sends += t.kind == TaskKind::kSend;
      recvs += t.kind == TaskKind::kRecv;
      if (owner_stamp[t.rank] == k + 1) {
        const TaskId other = owner[t.rank];
        if (other == m) {
          throw Error(ErrorKind::kInvalidInput,
                      fmt::format("collective {} lists {} twice", k, describe(m)));
        }
        throw Error(ErrorKind::kInvalidInput,
                    fmt::format("collective {} has two members on rank {}: \"{}\" (task {}) and "
                                "\"{}\" (task {})",
                                k, t.rank, g.name(other), other, g.name(m), m));
      }
      owner_stamp[t.rank] = k + 1;
      owner[t.rank] = m;
      if (t.collective != k) {
        throw Error(ErrorKind::kInvalidInput, fmt::format("{} is in two collectives: {} and {}",
                                                          describe(m), k, t.collective));
      }
    }
    const bool point_to_point = sends + recvs > 0;
    if (point_to_point && !(c.members.size() == 2 && sends == 1 && recvs == 1)) {
      std::string listed;
      for (TaskId m : c.members) {
        if (!listed.empty()) listed += ", ";
        listed += fmt::format("{} \"{}\" (task {}, rank {})", kind_name(g.task(m).kind), g.name(m),
                              m, g.task(m).rank);
      }
      throw Error(ErrorKind::kInvalidInput,
                  fmt::format("collective {} has send or recv members, so it must be exactly one "
                              "send and one recv; got {}",
                              k, listed));
    }
  }
  for (TaskId id = 0; id < g.size(); ++id) {
    if (is_collective_kind(g.task(id).kind) && g.task(id).collective == kNoCollective) {
      throw Error(
          ErrorKind::kInvalidInput,
          fmt::format("{} is a {} task in no collective", describe(id), kind_name(g.task(id).kind)),
          "tie it to its peers on the other ranks with add_collective");
    }
  }
}

void check_acyclic(const ExecGraph& g) {
  const std::size_t n = g.size();
  std::vector<std::uint32_t> in_degree(n);
  std::vector<TaskId> ready;
  for (TaskId v = 0; v < n; ++v) {
    in_degree[v] = static_cast<std::uint32_t>(g.predecessors(v).size());
    if (in_degree[v] == 0) ready.push_back(v);
  }
  std::size_t removed = 0;
  while (!ready.empty()) {
    const TaskId v = ready.back();
    ready.pop_back();
    ++removed;
    for (TaskId s : g.successors(v)) {
      if (--in_degree[s] == 0) ready.push_back(s);
    }
  }
  if (removed == n) return;

  // Every task Kahn left has a predecessor that was also left, so walking predecessors from any
  // of them never dead-ends and must revisit a task: the walk from that task on is a cycle. This
  // is a DFS that needs no backtracking and no recursion, so a long cycle cannot overflow the
  // stack. The lowest-numbered left task and lowest-numbered predecessor keep the message stable.
  constexpr std::uint32_t kUnvisited = 0xffffffffu;
  std::vector<std::uint32_t> position(n, kUnvisited);
  std::vector<TaskId> walk;
  TaskId v = 0;
  while (in_degree[v] == 0) ++v;
  while (position[v] == kUnvisited) {
    position[v] = static_cast<std::uint32_t>(walk.size());
    walk.push_back(v);
    for (TaskId p : g.predecessors(v)) {
      if (in_degree[p] != 0) {
        v = p;
        break;
      }
    }
  }
  std::vector<TaskId> cycle(walk.begin() + position[v], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  cycle.push_back(cycle.front());

  std::string message = "cycle in the execution graph: ";
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    if (i > 0) message += " -> ";
    fmt::format_to(std::back_inserter(message), "{} (task {}, rank {})", g.name(cycle[i]), cycle[i],
                   g.task(cycle[i]).rank);
  }
  throw Error(ErrorKind::kInvalidInput, std::move(message));
}

}  // namespace

void ExecGraph::reserve(std::size_t tasks, std::size_t edges) {
  tasks_.reserve(tasks);
  name_ids_.reserve(tasks);
  edge_list_.reserve(edges);
}

TaskId ExecGraph::add_task(const Task& task, std::string_view name) {
  STEPCAST_ASSERT(!finalized_, "add_task after finalize(): the CSR arrays would miss the task");
  STEPCAST_ASSERT(task.duration_ns >= 0, "a task's duration_ns must be >= 0");
  STEPCAST_ASSERT(tasks_.size() < kNoCollective, "more tasks than a TaskId can number");
  const auto id = static_cast<TaskId>(tasks_.size());
  tasks_.push_back(task);
  // Membership comes only from add_collective, so a Task copied from another graph cannot claim a
  // collective that does not list it.
  tasks_.back().collective = kNoCollective;
  auto it = name_index_.find(name);
  if (it == name_index_.end()) {
    it =
        name_index_.emplace(std::string(name), static_cast<std::uint32_t>(name_pool_.size())).first;
    name_pool_.emplace_back(name);
  }
  name_ids_.push_back(it->second);
  ranks_ = std::max(ranks_, task.rank + 1);
  return id;
}

Task& ExecGraph::mutable_task(TaskId id) {
  STEPCAST_ASSERT(!finalized_ && id < tasks_.size(), "mutable_task after finalize() or with an unknown id");
  return tasks_[id];
}

void ExecGraph::add_edge(TaskId from, TaskId to) {
  STEPCAST_ASSERT(!finalized_, "add_edge after finalize()");
  STEPCAST_ASSERT(from < tasks_.size() && to < tasks_.size(), "add_edge with an unknown task id");
  edge_list_.emplace_back(from, to);
}

std::uint32_t ExecGraph::add_collective(std::vector<TaskId> members, std::int64_t duration_ns) {
  STEPCAST_ASSERT(!finalized_, "add_collective after finalize()");
  STEPCAST_ASSERT(duration_ns >= 0, "a collective's duration_ns must be >= 0");
  const auto index = static_cast<std::uint32_t>(collectives_.size());
  for (TaskId m : members) {
    STEPCAST_ASSERT(m < tasks_.size(), "add_collective with an unknown task id");
    // A task already in another collective is overwritten here; finalize() reports it as input
    // error because the earlier collective then lists a task that is not its own.
    tasks_[m].collective = index;
  }
  collectives_.push_back({std::move(members), duration_ns});
  return index;
}

void ExecGraph::finalize() {
  if (finalized_) return;
  const std::size_t n = tasks_.size();
  has_sm_holders_ = std::any_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.holds_sms; });
  const std::size_t e = edge_list_.size();
  auto edges_in_list_order = [this](auto&& visit) {
    for (auto [from, to] : edge_list_) visit(from, to);
  };
  fill_csr(
      n, e, edges_in_list_order, [](TaskId, TaskId to) { return to; },
      [](TaskId from, TaskId) { return from; }, pred_offsets_, pred_);
  // Visiting edges by increasing target leaves each successor list sorted; visiting them again by
  // increasing source then sorts each predecessor list. Both stay O(V + E).
  auto edges_by_target = [this, n](auto&& visit) {
    for (TaskId to = 0; to < n; ++to) {
      for (std::uint32_t i = pred_offsets_[to]; i < pred_offsets_[to + 1]; ++i) visit(pred_[i], to);
    }
  };
  fill_csr(
      n, e, edges_by_target, [](TaskId from, TaskId) { return from; },
      [](TaskId, TaskId to) { return to; }, succ_offsets_, succ_);
  auto edges_by_source = [this, n](auto&& visit) {
    for (TaskId from = 0; from < n; ++from) {
      for (std::uint32_t i = succ_offsets_[from]; i < succ_offsets_[from + 1]; ++i) {
        visit(from, succ_[i]);
      }
    }
  };
  fill_csr(
      n, e, edges_by_source, [](TaskId, TaskId to) { return to; },
      [](TaskId from, TaskId) { return from; }, pred_offsets_, pred_);
  finalized_ = true;

  // Any failure below leaves the graph unusable, so it goes back to the unfinalized state where
  // successors() asserts instead of answering about a graph that was rejected.
  try {
    check_collectives(*this);
    check_acyclic(*this);
  } catch (...) {
    finalized_ = false;
    throw;
  }
  std::vector<std::pair<TaskId, TaskId>>().swap(edge_list_);  // the CSR arrays hold the edges now
}

std::span<const TaskId> ExecGraph::successors(TaskId id) const {
  STEPCAST_ASSERT(finalized_ && id < tasks_.size(), "successors() before finalize() or bad id");
  return {succ_.data() + succ_offsets_[id], succ_offsets_[id + 1] - succ_offsets_[id]};
}

std::span<const TaskId> ExecGraph::predecessors(TaskId id) const {
  STEPCAST_ASSERT(finalized_ && id < tasks_.size(), "predecessors() before finalize() or bad id");
  return {pred_.data() + pred_offsets_[id], pred_offsets_[id + 1] - pred_offsets_[id]};
}

std::string ExecGraph::dump() const {
  STEPCAST_ASSERT(finalized_, "dump() before finalize(): the successor lists are not built");
  std::string out;
  auto it = std::back_inserter(out);
  for (TaskId id = 0; id < tasks_.size(); ++id) {
    const Task& t = tasks_[id];
    fmt::format_to(it, "t{} {} rank={} stream={} kind={} dur={}", id, name(id), t.rank, t.stream,
                   kind_name(t.kind), t.duration_ns);
    const char* separator = " -> ";
    for (TaskId s : successors(id)) {
      fmt::format_to(it, "{}t{}", separator, s);
      separator = ",";
    }
    out += '\n';
  }
  for (std::size_t k = 0; k < collectives_.size(); ++k) {
    fmt::format_to(it, "c{} dur={} members=", k, collectives_[k].duration_ns);
    const char* separator = "";
    for (TaskId m : collectives_[k].members) {
      fmt::format_to(it, "{}t{}", separator, m);
      separator = ",";
    }
    out += '\n';
  }
  return out;
}

namespace {

void set_name(std::vector<std::string>& names, std::size_t index, std::string_view name) {
  if (names.size() <= index) names.resize(index + 1);
  names[index] = name;
}

std::string get_name(const std::vector<std::string>& names, std::size_t index, std::string_view word) {
  if (index < names.size() && !names[index].empty()) return names[index];
  std::string fallback(word);
  fallback += std::to_string(index);
  return fallback;
}

}  // namespace

void ExecGraph::name_rank(std::uint32_t rank, std::string_view name) { set_name(rank_names_, rank, name); }
void ExecGraph::name_stream(std::uint16_t stream, std::string_view name) {
  set_name(stream_names_, stream, name);
}
std::string ExecGraph::rank_name(std::uint32_t rank) const { return get_name(rank_names_, rank, "rank "); }
std::string ExecGraph::stream_name(std::uint16_t stream) const {
  return get_name(stream_names_, stream, "stream ");
}

std::string_view category_name(Category category) {
  switch (category) {
    case Category::kCompute:
      return "compute";
    case Category::kTensorParallel:
      return "tp";
    case Category::kContextParallel:
      return "cp";
    case Category::kExpertParallel:
      return "ep";
    case Category::kPipeline:
      return "pp";
    case Category::kShardedData:
      return "fsdp";
    case Category::kDataParallel:
      return "dp";
    case Category::kOptimizer:
      return "optimizer";
    case Category::kHost:
      return "host";
    case Category::kOther:
      return "other";
  }
  return "unknown";  // only a value cast from outside the enum gets here
}

std::string_view kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::kCompute:
      return "compute";
    case TaskKind::kCollective:
      return "collective";
    case TaskKind::kSend:
      return "send";
    case TaskKind::kRecv:
      return "recv";
    case TaskKind::kMemcpy:
      return "memcpy";
    case TaskKind::kHost:
      return "host";
    case TaskKind::kWait:
      return "wait";
  }
  return "unknown";  // only a value cast from outside the enum gets here
}

}  // namespace stepcast::graph
