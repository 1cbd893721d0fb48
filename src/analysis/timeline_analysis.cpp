#include "analysis/timeline_analysis.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace stepcast::analysis {
namespace {

using graph::Category;
using graph::ExecGraph;
using graph::TaskId;

constexpr TaskId kNone = 0xffffffffu;
constexpr double kSecondsPerNs = 1e-9;
// By graph convention (exec_graph.h) stream 0 of a rank runs its kernels.
constexpr std::uint16_t kComputeStream = 0;

double& field(analytic::Breakdown& b, Category c) {
  switch (c) {
    case Category::kCompute: return b.compute_s;
    case Category::kTensorParallel: return b.tp_comm_s;
    case Category::kContextParallel: return b.cp_comm_s;
    case Category::kExpertParallel: return b.ep_comm_s;
    case Category::kPipeline: return b.pp_comm_s;
    case Category::kShardedData: return b.fsdp_comm_s;
    case Category::kDataParallel: return b.dp_comm_s;
    case Category::kOptimizer: return b.optimizer_s;
    case Category::kHost: return b.host_s;
    case Category::kOther: return b.other_s;
  }
  return b.other_s;
}

TaskId last_to_end(const ExecGraph& g, const sim::Timeline& t) {
  TaskId last = kNone;
  for (TaskId id = 0; id < g.size(); ++id) {
    if (last == kNone || t.spans[id].end_ns > t.spans[last].end_ns) last = id;
  }
  return last;
}

// The previous task of each task's (rank, stream), kNone for the first.
std::vector<TaskId> stream_previous(const ExecGraph& g) {
  std::vector<TaskId> previous(g.size(), kNone);
  std::map<std::uint64_t, TaskId> last;
  for (TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& task = g.task(id);
    auto [it, inserted] = last.try_emplace(std::uint64_t{task.rank} << 16 | task.stream, id);
    if (!inserted) {
      previous[id] = it->second;
      it->second = id;
    }
  }
  return previous;
}

// The dependency of `id` that ended last, kNone when it has none.
TaskId binding_predecessor(const ExecGraph& g, const sim::Timeline& t, TaskId id) {
  TaskId best = kNone;
  for (TaskId p : g.predecessors(id)) {
    if (best == kNone || t.spans[p].end_ns > t.spans[best].end_ns) best = p;
  }
  return best;
}

// SM-holding tasks of one rank beside its compute stream, one list per stream. A stream runs its
// tasks one after another, so each list is ordered by start and by end alike.
using HolderLanes = std::vector<std::vector<TaskId>>;

// The category of the collective that held SMs longest during `span`, the earliest-starting on
// a tie, or kCompute when none overlapped it. Binary search per stream: a step has millions of
// kernels and as many holders, and scanning every earlier holder for each kernel was quadratic.
Category overlapping_holder(const ExecGraph& g, const sim::Timeline& t, const HolderLanes& lanes,
                            const sim::Span& span) {
  TaskId best = kNone;
  sim::Time longest = 0;
  for (const std::vector<TaskId>& lane : lanes) {
    auto it = std::partition_point(lane.begin(), lane.end(),
                                   [&](TaskId h) { return t.spans[h].end_ns <= span.start_ns; });
    for (; it != lane.end() && t.spans[*it].start_ns < span.end_ns; ++it) {
      const sim::Time overlap = std::min(span.end_ns, t.spans[*it].end_ns) -
                                std::max(span.start_ns, t.spans[*it].start_ns);
      const bool earlier = best != kNone && std::tie(t.spans[*it].start_ns, *it) <
                                                std::tie(t.spans[best].start_ns, best);
      if (overlap > longest || (overlap == longest && overlap > 0 && earlier))
        longest = overlap, best = *it;
    }
  }
  return best == kNone ? Category::kCompute : g.task(best).category;
}

}  // namespace

analytic::Breakdown breakdown(const ExecGraph& g, const sim::Timeline& t) {
  analytic::Breakdown b;
  if (g.size() == 0) return b;
  const TaskId last = last_to_end(g, t);
  const std::uint32_t rank = g.task(last).rank;
  std::vector<TaskId> lane;
  HolderLanes holders;
  for (TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& task = g.task(id);
    if (task.rank != rank) continue;
    if (task.stream == kComputeStream) lane.push_back(id);
    if (task.stream != kComputeStream && task.holds_sms) {
      if (holders.size() <= task.stream) holders.resize(task.stream + 1u);
      holders[task.stream].push_back(id);  // in id order, which is the stream's running order
    }
  }
  const auto by_start = [&](TaskId a, TaskId c) { return std::tie(t.spans[a].start_ns, a) < std::tie(t.spans[c].start_ns, c); };
  std::sort(lane.begin(), lane.end(), by_start);
  sim::Time cursor = 0;
  auto wait = [&](sim::Time gap, TaskId cause) {
    const double seconds = gap * kSecondsPerNs;
    // A launch the host made late because it was synchronising with a transfer (Megatron waits
    // for every pipeline receive) counts as what the transfer waited for, not as host time.
    if (cause != kNone && g.task(cause).category == Category::kHost) {
      const TaskId sync = binding_predecessor(g, t, cause);
      const bool transfer = sync != kNone && g.task(sync).category != Category::kCompute &&
                            g.task(sync).category != Category::kHost;
      if (transfer && t.spans[sync].end_ns >= t.spans[cause].start_ns) cause = sync;
    }
    if (cause == kNone || g.task(cause).category == Category::kCompute) {
      b.bubble_s += seconds;
    } else if (g.task(cause).category == Category::kPipeline) {
      // The transfer itself is communication; waiting for the other stage to produce it is bubble.
      const double transfer = (t.spans[cause].end_ns - t.spans[cause].start_ns) * kSecondsPerNs;
      b.pp_comm_s += std::min(seconds, transfer);
      b.bubble_s += std::max(0.0, seconds - transfer);
    } else {
      field(b, g.task(cause).category) += seconds;
    }
  };
  for (TaskId id : lane) {
    const sim::Span& span = t.spans[id];
    if (span.start_ns > cursor) {
      // A collective whose members sit on other stages too starts when the last of them is
      // ready; the time this stage was ready before then is spent waiting for another stage.
      const TaskId cause = binding_predecessor(g, t, id);
      const sim::Time ready =
          std::clamp(cause == kNone ? cursor : t.spans[cause].end_ns, cursor, span.start_ns);
      b.bubble_s += (span.start_ns - ready) * kSecondsPerNs;
      if (ready > cursor) wait(ready - cursor, cause);
    }
    // A kernel slowed by a collective holding SMs beside it: the time beyond its own counts as
    // that collective's, as in the closed form.
    const sim::Time own = g.task(id).kind == graph::TaskKind::kCompute
                              ? std::min(g.task(id).duration_ns, span.end_ns - span.start_ns)
                              : span.end_ns - span.start_ns;
    field(b, g.task(id).category) += own * kSecondsPerNs;
    if (span.end_ns - span.start_ns > own) {
      field(b, overlapping_holder(g, t, holders, span)) += (span.end_ns - span.start_ns - own) * kSecondsPerNs;
    }
    cursor = std::max(cursor, span.end_ns);
  }
  if (t.makespan_ns > cursor) wait(t.makespan_ns - cursor, last);
  return b;
}

CriticalPath critical_path(const ExecGraph& g, const sim::Timeline& t) {
  CriticalPath path;
  if (g.size() == 0) return path;
  const std::vector<TaskId> previous = stream_previous(g);
  auto consider = [&](TaskId candidate, TaskId& best) {
    if (candidate != kNone && (best == kNone || t.spans[candidate].end_ns > t.spans[best].end_ns)) best = candidate;
  };
  TaskId current = last_to_end(g, t);
  path.length_s = t.spans[current].end_ns * kSecondsPerNs;
  while (current != kNone) {
    path.tasks.push_back(current);
    const graph::Task& task = g.task(current);
    path.seconds[static_cast<std::size_t>(task.category)] +=
        (t.spans[current].end_ns - t.spans[current].start_ns) * kSecondsPerNs;
    // A collective starts when its last member is ready: any member's dependencies may bind it.
    TaskId best = kNone;
    if (task.collective != graph::kNoCollective) {
      for (TaskId m : g.collectives()[task.collective].members) {
        consider(previous[m], best);
        consider(binding_predecessor(g, t, m), best);
      }
    } else {
      consider(previous[current], best);
      consider(binding_predecessor(g, t, current), best);
    }
    const sim::Time start = t.spans[current].start_ns;
    path.wait_s += (start - (best == kNone ? 0 : t.spans[best].end_ns)) * kSecondsPerNs;
    current = best;
  }
  std::reverse(path.tasks.begin(), path.tasks.end());

  std::map<std::string_view, PathShare> by_name;
  for (TaskId id : path.tasks) {
    PathShare& share = by_name[g.name(id)];
    ++share.tasks;
    share.seconds += (t.spans[id].end_ns - t.spans[id].start_ns) * kSecondsPerNs;
  }
  for (auto& [name, share] : by_name) {
    share.name = name;
    path.heaviest.push_back(std::move(share));
  }
  constexpr std::size_t kHeaviest = 10;
  const std::size_t keep = std::min(kHeaviest, path.heaviest.size());
  std::partial_sort(path.heaviest.begin(), path.heaviest.begin() + static_cast<std::ptrdiff_t>(keep),
                    path.heaviest.end(), [](const PathShare& a, const PathShare& b) {
                      return std::tie(b.seconds, a.name) < std::tie(a.seconds, b.name);
                    });
  path.heaviest.resize(keep);
  return path;
}

std::vector<StreamUse> stream_use(const ExecGraph& g, const sim::Timeline& t) {
  std::map<std::uint64_t, double> busy;
  for (TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& task = g.task(id);
    busy[std::uint64_t{task.rank} << 16 | task.stream] += (t.spans[id].end_ns - t.spans[id].start_ns) * kSecondsPerNs;
  }
  const double makespan = t.makespan_ns * kSecondsPerNs;
  std::vector<StreamUse> out;
  for (const auto& [lane, seconds] : busy) {
    out.push_back({static_cast<std::uint32_t>(lane >> 16), static_cast<std::uint16_t>(lane & 0xffff), seconds,
                   makespan > 0 ? seconds / makespan : 0});
  }
  return out;
}

std::vector<MemorySample> memory_over_time(const ExecGraph& g, const sim::Timeline& t) {
  std::vector<MemorySample> changes;
  for (TaskId id = 0; id < g.size(); ++id) {
    if (g.task(id).memory_delta != 0) changes.push_back({g.task(id).rank, t.spans[id].end_ns, g.task(id).memory_delta});
  }
  std::sort(changes.begin(), changes.end(), [](const MemorySample& a, const MemorySample& b) {
    return std::tie(a.rank, a.time_ns) < std::tie(b.rank, b.time_ns);
  });
  // Changes at one instant merge into one sample: a free and an allocation that coincide reuse
  // the block (as a caching allocator does) rather than stacking.
  std::vector<MemorySample> samples;
  double live = 0;
  for (const MemorySample& c : changes) {
    if (samples.empty() || samples.back().rank != c.rank) live = 0;
    live += c.bytes;
    if (!samples.empty() && samples.back().rank == c.rank && samples.back().time_ns == c.time_ns) {
      samples.back().bytes = live;
    } else {
      samples.push_back({c.rank, c.time_ns, live});
    }
  }
  return samples;
}

std::vector<StreamMean> mean_stream_use(const std::vector<StreamUse>& use) {
  std::map<std::uint16_t, std::pair<double, int>> by_stream;
  for (const StreamUse& u : use) {
    by_stream[u.stream].first += u.utilisation;
    ++by_stream[u.stream].second;
  }
  std::vector<StreamMean> out;
  for (const auto& [stream, sum] : by_stream) out.push_back({stream, sum.first / sum.second});
  return out;
}

std::vector<double> peak_memory(const ExecGraph& g, const sim::Timeline& t) {
  std::vector<double> peak(g.ranks(), 0);
  for (const MemorySample& s : memory_over_time(g, t)) peak[s.rank] = std::max(peak[s.rank], s.bytes);
  return peak;
}

}  // namespace stepcast::analysis
