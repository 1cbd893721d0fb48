#include "sim/engine.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "core/error.h"

namespace stepcast::sim {
namespace {

using graph::ExecGraph;
using graph::Task;
using graph::TaskId;

constexpr TaskId kNone = 0xffffffffu;

// An event is always "task ends at time": starts need no event because a task starts at the
// instant it becomes ready, which is the time of the end event that released it.
struct Event {
  Time time;
  std::uint32_t seq;  // each task is scheduled once, so a task count never overflows 32 bits
  TaskId task;
};

// std::*_heap builds a max-heap; inverting the order pops the earliest time, then the lowest seq.
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

enum class State : std::uint8_t {
  kWaiting,     // some predecessor or the previous task of its stream has not ended
  kCollecting,  // ready, but waiting for other members of its collective
  kRunning,
  kEnded,
};

// Links each task to the next task of its (rank, stream) queue and adds that implicit edge to
// `remaining`. Ids are visited in increasing order, so each queue keeps insertion order.
void link_streams(const ExecGraph& g, std::vector<TaskId>& stream_next,
                  std::vector<std::uint32_t>& remaining) {
  const std::size_t n = g.size();
  std::uint64_t max_rank = 0;
  std::uint64_t max_stream = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Task& t = g.task(static_cast<TaskId>(i));
    max_rank = std::max<std::uint64_t>(max_rank, t.rank);
    max_stream = std::max<std::uint64_t>(max_stream, t.stream);
  }
  const std::uint64_t streams = max_stream + 1;
  const std::uint64_t queues = (max_rank + 1) * streams;
  auto link = [&](TaskId& last, TaskId id) {
    if (last != kNone) {
      stream_next[last] = id;
      ++remaining[id];
    }
    last = id;
  };
  // Rank and stream numbers are dense in practice, so one slot per (rank, stream) is O(tasks);
  // sparse numbering would make that table huge, and sorting the ids by queue costs O(n log n).
  if (queues <= 2 * static_cast<std::uint64_t>(n) + 4096) {
    std::vector<TaskId> last(static_cast<std::size_t>(queues), kNone);
    for (std::size_t i = 0; i < n; ++i) {
      const Task& t = g.task(static_cast<TaskId>(i));
      link(last[static_cast<std::size_t>(t.rank * streams + t.stream)], static_cast<TaskId>(i));
    }
    return;
  }
  std::vector<std::pair<std::uint64_t, TaskId>> order(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Task& t = g.task(static_cast<TaskId>(i));
    order[i] = {(std::uint64_t{t.rank} << 16) | t.stream, static_cast<TaskId>(i)};
  }
  std::sort(order.begin(), order.end());
  TaskId last = kNone;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && order[i].first != order[i - 1].first) last = kNone;
    link(last, order[i].second);
  }
}

// Picks the task to name in a deadlock error: preferably one whose predecessors have all ended
// and whose stream is held by a collective member still waiting for its peers, since that is
// where the ranks' collective orders cross; otherwise the first task that never became ready.
TaskId pick_stuck_task(const ExecGraph& g, const std::vector<State>& state,
                       const std::vector<TaskId>& stream_next) {
  TaskId first_waiting = kNone;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const TaskId id = static_cast<TaskId>(i);
    if (state[id] == State::kCollecting && stream_next[id] != kNone) {
      const TaskId next = stream_next[id];
      const auto preds = g.predecessors(next);
      const bool only_stream_blocks = std::all_of(
          preds.begin(), preds.end(), [&](TaskId p) { return state[p] == State::kEnded; });
      if (only_stream_blocks && state[next] == State::kWaiting) {
        if (first_waiting == kNone || next < first_waiting) first_waiting = next;
      }
    }
  }
  if (first_waiting != kNone) return first_waiting;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (state[i] == State::kWaiting) return static_cast<TaskId>(i);
  }
  STEPCAST_ASSERT(false, "a simulation that did not finish left no task waiting");
  return kNone;
}

[[noreturn]] void throw_deadlock(const ExecGraph& g, TaskId id) {
  const Task& t = g.task(id);
  throw Error(ErrorKind::kInvalidInput,
              "deadlock: task \"" + std::string(g.name(id)) + "\" (task " + std::to_string(id) +
                  ", rank " + std::to_string(t.rank) + ", stream " + std::to_string(t.stream) +
                  ") never became ready; ranks may enter collectives in different orders on one "
                  "stream");
}

}  // namespace

Timeline run(const ExecGraph& g) {
  const std::size_t n = g.size();
  const auto& collectives = g.collectives();

  std::vector<std::uint32_t> remaining(n);
  for (std::size_t i = 0; i < n; ++i) {
    remaining[i] = static_cast<std::uint32_t>(g.predecessors(static_cast<TaskId>(i)).size());
  }
  std::vector<TaskId> stream_next(n, kNone);
  link_streams(g, stream_next, remaining);

  std::vector<State> state(n, State::kWaiting);
  std::vector<std::uint32_t> collective_ready(collectives.size(), 0);

  Timeline timeline;
  timeline.spans.resize(n);
  std::vector<Event> heap;
  // The heap holds one event per running task, at most one per stream queue, so it stays small.
  heap.reserve(std::min<std::size_t>(n, 1024));
  std::uint32_t seq = 0;

  auto schedule = [&](TaskId id, Time start, Time duration) {
    state[id] = State::kRunning;
    timeline.spans[id] = {start, start + duration};
    heap.push_back({start + duration, seq++, id});
    std::push_heap(heap.begin(), heap.end(), Later{});
  };
  auto on_ready = [&](TaskId id, Time now) {
    const Task& t = g.task(id);
    if (t.collective == graph::kNoCollective) {
      schedule(id, now, t.duration_ns);
      return;
    }
    const graph::Collective& c = collectives[t.collective];
    state[id] = State::kCollecting;
    if (++collective_ready[t.collective] < c.members.size()) return;
    // Events pop in time order, so the last member to become ready has the latest ready time.
    for (TaskId m : c.members) schedule(m, now, c.duration_ns);
  };

  for (std::size_t i = 0; i < n; ++i) {
    if (remaining[i] == 0) on_ready(static_cast<TaskId>(i), 0);
  }

  std::size_t ended = 0;
  Time now = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), Later{});
    const Event e = heap.back();
    heap.pop_back();
    now = e.time;
    state[e.task] = State::kEnded;
    ++ended;
    for (TaskId s : g.successors(e.task)) {
      if (--remaining[s] == 0) on_ready(s, now);
    }
    const TaskId next = stream_next[e.task];
    if (next != kNone && --remaining[next] == 0) on_ready(next, now);
  }
  timeline.makespan_ns = now;

  if (ended < n) throw_deadlock(g, pick_stuck_task(g, state, stream_next));
  return timeline;
}

}  // namespace stepcast::sim
