// Metrics of a simulated step, read off its Timeline: where the time went (the same categories as
// analytic::estimate), the critical path, per-stream utilisation and peak live memory per rank.
//
//   const auto b = analysis::breakdown(graph, timeline);      // sums to the makespan
//   const auto path = analysis::critical_path(graph, timeline);
//
// Attribution (breakdown): the rank whose work ends last is the step's bottleneck; its compute
// stream is walked in order. A task's own time counts as its Category; idle time before a task
// counts as what that task waited for longest: a pipeline receive counts its transfer time as
// pipeline communication and the rest as bubble (waiting for the other stage), a gradient bucket
// as data-parallel communication, and so on; idle with nothing to wait for is bubble.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analytic/estimate.h"
#include "graph/exec_graph.h"
#include "sim/engine.h"

namespace stepcast::analysis {

/// REQUIRES: `t` is sim::run(g). Categories in seconds, summing to t.makespan_ns.
analytic::Breakdown breakdown(const graph::ExecGraph& g, const sim::Timeline& t);

struct PathShare {
  std::string name;  // task name, e.g. "mlp_up.bwd"
  int tasks = 0;     // how many tasks of that name lie on the path
  double seconds = 0;
};

struct CriticalPath {
  std::vector<graph::TaskId> tasks;  // in time order, ending with the task that ends last
  std::array<double, graph::kCategories> seconds{};  // task time on the path, by graph::Category
  std::vector<PathShare> heaviest;  // the path's time by task name, largest first (at most 10)
  double wait_s = 0;  // gaps on the path (0 when every start is bound by a predecessor's end)
  double length_s = 0;
};

/// The chain of tasks that bounds the makespan: from the task ending last, repeatedly the
/// dependency (edge, stream order or a collective peer's dependency) that released it.
CriticalPath critical_path(const graph::ExecGraph& g, const sim::Timeline& t);

struct StreamUse {
  std::uint32_t rank = 0;
  std::uint16_t stream = 0;
  double busy_s = 0;
  double utilisation = 0;  // busy / makespan
};

/// One entry per (rank, stream) that holds a task, sorted by rank then stream.
std::vector<StreamUse> stream_use(const graph::ExecGraph& g, const sim::Timeline& t);

struct StreamMean {
  std::uint16_t stream = 0;
  double utilisation = 0;  // mean over the ranks that use the stream
};

/// Per stream number, the mean utilisation over the ranks that use it, by stream.
std::vector<StreamMean> mean_stream_use(const std::vector<StreamUse>& use);

struct MemorySample {
  std::uint32_t rank = 0;
  sim::Time time_ns = 0;
  double bytes = 0;  // sum of Task::memory_delta of the rank's tasks ended by time_ns
};

/// One sample per (rank, instant) at which some task with a memory_delta ends, sorted by rank
/// then time: the live memory of each rank over the step.
std::vector<MemorySample> memory_over_time(const graph::ExecGraph& g, const sim::Timeline& t);

/// Highest live memory of each rank at any instant (bytes), by rank.
std::vector<double> peak_memory(const graph::ExecGraph& g, const sim::Timeline& t);

}  // namespace stepcast::analysis
