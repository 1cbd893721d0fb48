#include "sim/engine.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"

namespace stepcast::sim {
namespace {

using graph::ExecGraph;
using graph::Task;
using graph::TaskId;

constexpr TaskId kNone = 0xffffffffu;

// An event says "something ends at time": starts need no event because a task starts at the
// instant it becomes ready, which is the time of the end event that released it.
struct Event {
  Time time;
  std::uint32_t seq;
  std::uint32_t id;  // a task, or a LinkSharing transfer
};

// Pops events by time, then by seq, so equal-time events run FIFO. Task ends and transfer ends
// sit in two heaps that share one sequence: 16-byte events, with no transfer field to test, keep
// a graph without links as fast as before links existed.
class EventQueue {
 public:
  enum class Kind : std::uint8_t { kTask, kTransfer };

  explicit EventQueue(std::size_t capacity) { tasks_.reserve(capacity); }

  bool empty() const { return tasks_.empty() && transfers_.empty(); }

  // Returns the new event's seq, which no other event of the run shares. Throws
  // Error(kUnsupported) past 2^32 - 1 events: each task is pushed once, but a transfer again at
  // every change of its share, so heavy sharing could run out of 32-bit numbers.
  std::uint32_t push(Kind kind, Time time, std::uint32_t id) {
    if (next_seq_ == std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ErrorKind::kUnsupported,
                  "the simulation needs more than 4294967295 events; share fewer links");
    }
    std::vector<Event>& heap = kind == Kind::kTask ? tasks_ : transfers_;
    heap.push_back({time, next_seq_, id});
    std::push_heap(heap.begin(), heap.end(), Later{});
    return next_seq_++;
  }

  // True when the next event ends a transfer. REQUIRES: !empty().
  bool transfer_is_next() const {
    return !transfers_.empty() && (tasks_.empty() || Later{}(tasks_.front(), transfers_.front()));
  }

  // REQUIRES: the heap it pops from is not empty.
  Event pop_task() { return pop(tasks_); }
  Event pop_transfer() { return pop(transfers_); }

 private:
  // std::*_heap builds a max-heap; inverting the order pops the earliest time, then the lowest seq.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };

  static Event pop(std::vector<Event>& heap) {
    std::pop_heap(heap.begin(), heap.end(), Later{});
    const Event e = heap.back();
    heap.pop_back();
    return e;
  }

  std::vector<Event> tasks_, transfers_;
  std::uint32_t next_seq_ = 0;
};

// Fluid fair sharing of links (engine.h). Each transfer has one live end event; when its share
// changes it gets a new one, and the old one stays in the heap until popped and skipped (lazy
// deletion), which is cheaper than removing it from the middle of the heap.
class LinkSharing {
 public:
  explicit LinkSharing(EventQueue& events) : events_(events) {}

  // Starts a transfer of `work_ns` (its time alone on its links) at `now` on the distinct links
  // `link_ids`, slows the transfers already there, and schedules its end.
  void start(TaskId task, std::int64_t work_ns, std::span<const std::uint32_t> link_ids, Time now);

  // False for a transfer end event superseded by a later share change of its transfer.
  bool is_live(const Event& e) const { return transfers_[e.id].event_seq == e.seq; }

  // Ends the transfer of live event `e` at `now`, speeds up the transfers left on its links, and
  // returns the task given to start().
  TaskId end(const Event& e, Time now);

 private:
  struct Transfer {
    TaskId task = kNone;      // the task, or the first member of the collective, that it ends
    double remaining_ns = 0;  // work left at `since`, in nanoseconds at full speed
    Time since = 0;
    std::uint32_t share = 0;      // progresses at 1/share: the most transfers on any of its links
    std::uint32_t event_seq = 0;  // the seq of its live end event, a generation counter
    std::vector<std::uint32_t> links;  // link indices
  };

  std::uint32_t link_index(std::uint32_t link_id);
  std::uint32_t share_of(const Transfer& t) const;
  void reshare(std::uint32_t id, Time now);
  void schedule_end(std::uint32_t id, Time now);

  EventQueue& events_;
  std::unordered_map<std::uint32_t, std::uint32_t> link_index_;  // link ids can be sparse
  std::vector<std::vector<std::uint32_t>> on_link_;  // by link index: transfers in start order
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_;  // ended transfers, reused so storage follows active ones
};

void LinkSharing::start(TaskId task, std::int64_t work_ns, std::span<const std::uint32_t> link_ids,
                        Time now) {
  std::uint32_t id = static_cast<std::uint32_t>(transfers_.size());
  if (free_.empty()) {
    transfers_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Transfer& t = transfers_[id];
  t.task = task;
  t.remaining_ns = static_cast<double>(work_ns);
  t.since = now;
  t.links.clear();
  for (std::uint32_t link_id : link_ids) {
    t.links.push_back(link_index(link_id));
    on_link_[t.links.back()].push_back(id);
  }
  t.share = share_of(t);
  schedule_end(id, now);
  for (std::uint32_t link : t.links) {
    for (std::uint32_t other : on_link_[link]) reshare(other, now);
  }
}

TaskId LinkSharing::end(const Event& e, Time now) {
  const Transfer& t = transfers_[e.id];
  // std::erase keeps start order, so transfers re-rated together get their events in that order.
  for (std::uint32_t link : t.links) std::erase(on_link_[link], e.id);
  for (std::uint32_t link : t.links) {
    for (std::uint32_t other : on_link_[link]) reshare(other, now);
  }
  free_.push_back(e.id);
  return t.task;
}

std::uint32_t LinkSharing::link_index(std::uint32_t link_id) {
  const auto [it, added] =
      link_index_.try_emplace(link_id, static_cast<std::uint32_t>(on_link_.size()));
  if (added) on_link_.emplace_back();
  return it->second;
}

std::uint32_t LinkSharing::share_of(const Transfer& t) const {
  std::size_t share = 1;
  for (std::uint32_t link : t.links) share = std::max(share, on_link_[link].size());
  return static_cast<std::uint32_t>(share);
}

// Charges the work done at the old share up to `now`, then reschedules the end at the new share.
// A transfer met again through another of its links has no change left and is skipped.
void LinkSharing::reshare(std::uint32_t id, Time now) {
  Transfer& t = transfers_[id];
  const std::uint32_t share = share_of(t);
  if (share == t.share) return;
  t.remaining_ns -= static_cast<double>(now - t.since) / t.share;
  t.since = now;
  t.share = share;
  schedule_end(id, now);
}

void LinkSharing::schedule_end(std::uint32_t id, Time now) {
  // Rounding up keeps a transfer from ending before its work is done; subtracting the noise keeps
  // 199999.9999999 and 200000.0000001 at 200000. A transfer re-rated between its fluid end and
  // its rounded-up end has slightly negative work left, and ends at once.
  constexpr double kNoiseNs = 1e-6;
  Transfer& t = transfers_[id];
  const double left_ns = std::max(0.0, t.remaining_ns * t.share - kNoiseNs);
  t.event_seq =
      events_.push(EventQueue::Kind::kTransfer, now + static_cast<Time>(std::ceil(left_ns)), id);
}

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

// The distinct links that the members of `c` name, into `out`; empty when the collective is no
// transfer: no member names a link, or it moves nothing.
void collective_links(const ExecGraph& g, const graph::Collective& c,
                      std::vector<std::uint32_t>& out) {
  out.clear();
  if (c.duration_ns == 0) return;
  for (TaskId m : c.members) {
    const std::uint32_t link = g.task(m).link;
    if (link != graph::kNoLink) out.push_back(link);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
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
  // The task heap holds one event per running task, at most one per stream queue, so it stays
  // small.
  EventQueue events(std::min<std::size_t>(n, 1024));
  LinkSharing links(events);
  std::vector<std::uint32_t> link_ids;  // scratch for the links of a starting collective

  auto schedule = [&](TaskId id, Time start, Time duration) {
    state[id] = State::kRunning;
    timeline.spans[id] = {start, start + duration};
    events.push(EventQueue::Kind::kTask, start + duration, id);
  };
  // A transfer's end time is known only when it ends, so its spans get their end then.
  auto begin = [&](TaskId id, Time start) {
    state[id] = State::kRunning;
    timeline.spans[id].start_ns = start;
  };
  auto on_ready = [&](TaskId id, Time now) {
    const Task& t = g.task(id);
    if (t.collective == graph::kNoCollective) {
      if (t.link == graph::kNoLink || t.duration_ns == 0) {
        schedule(id, now, t.duration_ns);
        return;
      }
      begin(id, now);
      links.start(id, t.duration_ns, std::span(&t.link, 1), now);
      return;
    }
    const graph::Collective& c = collectives[t.collective];
    state[id] = State::kCollecting;
    if (++collective_ready[t.collective] < c.members.size()) return;
    // Events pop in time order, so the last member to become ready has the latest ready time.
    collective_links(g, c, link_ids);
    if (link_ids.empty()) {
      for (TaskId m : c.members) schedule(m, now, c.duration_ns);
      return;
    }
    for (TaskId m : c.members) begin(m, now);
    links.start(c.members.front(), c.duration_ns, link_ids, now);
  };

  std::size_t ended = 0;
  auto finish = [&](TaskId id, Time now) {
    state[id] = State::kEnded;
    ++ended;
    for (TaskId s : g.successors(id)) {
      if (--remaining[s] == 0) on_ready(s, now);
    }
    const TaskId next = stream_next[id];
    if (next != kNone && --remaining[next] == 0) on_ready(next, now);
  };
  // Ends the transfer of a live event: its task, or every member of its collective. Kept out of
  // line because inlined into the event loop it slows graphs without links by about 15%.
  auto end_transfer = [&](const Event& e) __attribute__((noinline)) {
    const Time now = e.time;
    // Free the link before the released tasks start, so a transfer they start sees its share.
    const TaskId id = links.end(e, now);
    const Task& t = g.task(id);
    const std::span<const TaskId> tasks = t.collective == graph::kNoCollective
                                              ? std::span(&id, 1)
                                              : std::span(collectives[t.collective].members);
    for (TaskId m : tasks) {
      timeline.spans[m].end_ns = now;
      finish(m, now);
    }
  };

  for (std::size_t i = 0; i < n; ++i) {
    if (remaining[i] == 0) on_ready(static_cast<TaskId>(i), 0);
  }

  Time now = 0;
  while (!events.empty()) {
    if (!events.transfer_is_next()) {
      const Event e = events.pop_task();
      now = e.time;
      finish(e.id, now);
    } else if (const Event e = events.pop_transfer(); links.is_live(e)) {
      now = e.time;
      end_transfer(e);
    }
  }
  timeline.makespan_ns = now;

  if (ended < n) throw_deadlock(g, pick_stuck_task(g, state, stream_next));
  return timeline;
}

}  // namespace stepcast::sim
