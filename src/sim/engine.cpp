#include "sim/engine.h"

#include <algorithm>
#include <array>
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

// Pops events by time, then by seq, so equal-time events run FIFO. Task ends, transfer ends and
// the ends of kernels slowed by a collective sit in three heaps that share one sequence: 16-byte
// events, with no kind field to test, keep a graph without links or SM sharing as fast as before
// either existed.
class EventQueue {
 public:
  enum class Kind : std::uint8_t { kTask, kTransfer, kShared };

  explicit EventQueue(std::size_t capacity) { heaps_[0].reserve(capacity); }

  bool empty() const { return heaps_[0].empty() && heaps_[1].empty() && heaps_[2].empty(); }

  // Returns the new event's seq, which no other event of the run shares. Throws
  // Error(kUnsupported) past 2^32 - 1 events: each task is pushed once, but a transfer or a
  // shared kernel again at every change of its rate, so heavy sharing could run out of numbers.
  std::uint32_t push(Kind kind, Time time, std::uint32_t id) {
    if (next_seq_ == std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ErrorKind::kUnsupported,
                  "the simulation needs more than 4294967295 events; share fewer links");
    }
    std::vector<Event>& heap = heaps_[static_cast<std::size_t>(kind)];
    heap.push_back({time, next_seq_, id});
    std::push_heap(heap.begin(), heap.end(), Later{});
    return next_seq_++;
  }

  // The heap holding the next event. REQUIRES: !empty().
  Kind next() const {
    if (heaps_[1].empty() && heaps_[2].empty()) return Kind::kTask;
    std::size_t best = 3;
    for (std::size_t k = 0; k < 3; ++k) {
      if (!heaps_[k].empty() && (best == 3 || Later{}(heaps_[best].front(), heaps_[k].front()))) best = k;
    }
    return static_cast<Kind>(best);
  }

  // REQUIRES: the heap of `kind` is not empty.
  Event pop(Kind kind) {
    std::vector<Event>& heap = heaps_[static_cast<std::size_t>(kind)];
    std::pop_heap(heap.begin(), heap.end(), Later{});
    const Event e = heap.back();
    heap.pop_back();
    return e;
  }

 private:
  // std::*_heap builds a max-heap; inverting the order pops the earliest time, then the lowest seq.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };

  std::array<std::vector<Event>, 3> heaps_;
  std::uint32_t next_seq_ = 0;
};

// Work whose rate changes while it runs: `remaining_ns` of work at full speed as of `since`,
// progressing at 1/slowdown of full speed. Each change of rate gets a new end event; the old one
// stays in the heap until popped and skipped (lazy deletion, cheaper than removing it from the
// middle of the heap), recognised by `event_seq`, a generation counter.
struct FluidWork {
  double remaining_ns = 0;
  Time since = 0;
  double slowdown = 1;
  std::uint32_t event_seq = 0;

  // Charges the work done at the old rate up to `now` and switches to `new_slowdown`.
  void rerate(double new_slowdown, Time now) {
    remaining_ns -= static_cast<double>(now - since) / slowdown;
    since = now;
    slowdown = new_slowdown;
  }

  // Pushes the end event at the current rate. Rounding up keeps work from ending before it is
  // done; subtracting the noise keeps 199999.9999999 and 200000.0000001 at 200000. Work re-rated
  // between its fluid end and its rounded-up end has slightly negative work left, and ends at once.
  void schedule_end(EventQueue& events, EventQueue::Kind kind, std::uint32_t id, Time now) {
    constexpr double kNoiseNs = 1e-6;
    const double left_ns = std::max(0.0, remaining_ns * slowdown - kNoiseNs);
    event_seq = events.push(kind, now + static_cast<Time>(std::ceil(left_ns)), id);
  }
};

// The index of a slot for new work in `slots`: one an ended piece freed, else a new one, so
// storage follows the work active at once.
template <typename T>
std::uint32_t take_slot(std::vector<T>& slots, std::vector<std::uint32_t>& free) {
  if (free.empty()) {
    slots.emplace_back();
    return static_cast<std::uint32_t>(slots.size() - 1);
  }
  const std::uint32_t id = free.back();
  free.pop_back();
  return id;
}

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
  bool is_live(const Event& e) const { return transfers_[e.id].work.event_seq == e.seq; }

  // Ends the transfer of live event `e` at `now`, speeds up the transfers left on its links, and
  // returns the task given to start().
  TaskId end(const Event& e, Time now);

 private:
  struct Transfer {
    TaskId task = kNone;  // the task, or the first member of the collective, that it ends
    FluidWork work;       // slowdown: the most transfers on any of its links
    std::vector<std::uint32_t> links;  // link indices
  };

  std::uint32_t link_index(std::uint32_t link_id);
  double share_of(const Transfer& t) const;
  void reshare(std::uint32_t id, Time now);

  EventQueue& events_;
  std::unordered_map<std::uint32_t, std::uint32_t> link_index_;  // link ids can be sparse
  std::vector<std::vector<std::uint32_t>> on_link_;  // by link index: transfers in start order
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_;  // ended transfers, reused so storage follows active ones
};

void LinkSharing::start(TaskId task, std::int64_t work_ns, std::span<const std::uint32_t> link_ids,
                        Time now) {
  const std::uint32_t id = take_slot(transfers_, free_);
  Transfer& t = transfers_[id];
  t.task = task;
  t.links.clear();
  for (std::uint32_t link_id : link_ids) {
    t.links.push_back(link_index(link_id));
    on_link_[t.links.back()].push_back(id);
  }
  t.work = {static_cast<double>(work_ns), now, share_of(t), 0};
  t.work.schedule_end(events_, EventQueue::Kind::kTransfer, id, now);
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

double LinkSharing::share_of(const Transfer& t) const {
  std::size_t share = 1;
  for (std::uint32_t link : t.links) share = std::max(share, on_link_[link].size());
  return static_cast<double>(share);
}

// Charges the work done at the old share up to `now`, then reschedules the end at the new share.
// A transfer met again through another of its links has no change left and is skipped.
void LinkSharing::reshare(std::uint32_t id, Time now) {
  Transfer& t = transfers_[id];
  const double share = share_of(t);
  if (share == t.work.slowdown) return;
  t.work.rerate(share, now);
  t.work.schedule_end(events_, EventQueue::Kind::kTransfer, id, now);
}

// SM sharing (engine.h): kernels that run slower while a collective's kernel holds some SMs of
// their rank, re-rated when the first such kernel starts on the rank and when the last ends.
class SmSharing {
 public:
  SmSharing(EventQueue& events, std::size_t ranks) : events_(events), holders_(ranks, 0), running_on_(ranks) {}

  // Starts kernel `task` of `alone_ns` on `rank`, `one` times longer beside one collective and
  // `two` times beside two or more.
  void start(TaskId task, std::uint32_t rank, std::int64_t alone_ns, double one, double two, Time now) {
    const std::uint32_t id = take_slot(kernels_, free_);
    Kernel& k = kernels_[id];
    k.task = task;
    k.rank = rank;
    k.slowdown = {1.0, one, std::max(one, two)};
    k.work = {static_cast<double>(alone_ns), now, k.rate(holders_[rank]), 0};
    k.work.schedule_end(events_, EventQueue::Kind::kShared, id, now);
    running_on_[rank].push_back(id);
  }

  bool is_live(const Event& e) const { return kernels_[e.id].work.event_seq == e.seq; }

  // Ends the kernel of live event `e` and returns its task.
  TaskId end(const Event& e) {
    const Kernel& k = kernels_[e.id];
    std::erase(running_on_[k.rank], e.id);
    free_.push_back(e.id);
    return k.task;
  }

  // A third holder at once slows nothing further, so only changes among 0, 1 and 2 re-rate.
  void holder_started(std::uint32_t rank, Time now) {
    if (++holders_[rank] <= 2) rerate(rank, now);
  }
  void holder_ended(std::uint32_t rank, Time now) {
    if (--holders_[rank] < 2) rerate(rank, now);
  }

 private:
  struct Kernel {
    TaskId task = kNone;
    std::uint32_t rank = 0;
    std::array<double, 3> slowdown{};  // by collectives holding SMs: none, one, two or more
    FluidWork work;
    double rate(std::uint32_t holders) const { return slowdown[std::min<std::uint32_t>(holders, 2)]; }
  };

  void rerate(std::uint32_t rank, Time now) {
    for (std::uint32_t id : running_on_[rank]) {
      Kernel& k = kernels_[id];
      k.work.rerate(k.rate(holders_[rank]), now);
      k.work.schedule_end(events_, EventQueue::Kind::kShared, id, now);
    }
  }

  EventQueue& events_;
  std::vector<std::uint32_t> holders_;  // by rank: collective kernels holding SMs now
  std::vector<std::vector<std::uint32_t>> running_on_;  // by rank: its shared kernels running
  std::vector<Kernel> kernels_;
  std::vector<std::uint32_t> free_;
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

// The links (directions of a port: 2 port outbound, 2 port + 1 inbound) that a Task::link value
// uses, into `out`; returns how many (graph::link).
std::size_t directed_links(std::uint32_t link, std::uint32_t* out) {
  const std::uint32_t port = link >> 2, direction = link & 3u;
  std::size_t n = 0;
  if (direction != static_cast<std::uint32_t>(graph::LinkDirection::kInbound)) out[n++] = port << 1;
  if (direction != static_cast<std::uint32_t>(graph::LinkDirection::kOutbound))
    out[n++] = port << 1 | 1u;
  return n;
}

// The distinct links that the members of `c` use, into `out`; empty when the collective is no
// transfer: no member names a link, or it moves nothing.
void collective_links(const ExecGraph& g, const graph::Collective& c,
                      std::vector<std::uint32_t>& out) {
  out.clear();
  if (c.duration_ns == 0) return;
  for (TaskId m : c.members) {
    const std::uint32_t link = g.task(m).link;
    if (link == graph::kNoLink) continue;
    std::uint32_t directed[2];
    out.insert(out.end(), directed, directed + directed_links(link, directed));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// The engine, compiled twice: graphs in which no task holds SMs (most) run without any of the SM
// sharing bookkeeping, which costs a third of the event rate when merely tested for at run time.
template <bool kShareSms>
Timeline simulate(const ExecGraph& g) {
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
  constexpr bool any_holder = kShareSms;
  SmSharing sms(events, any_holder ? g.ranks() : 0);

  // A task that holds SMs counts from its start to its end; one that lasts no time never counts.
  auto holds = [&](TaskId id) {
    const Task& t = g.task(id);
    const Time duration = t.collective == graph::kNoCollective ? t.duration_ns : collectives[t.collective].duration_ns;
    return t.holds_sms && duration > 0;
  };
  auto hold = [&](TaskId id, Time now) {
    if (any_holder && holds(id)) sms.holder_started(g.task(id).rank, now);
  };
  auto schedule = [&](TaskId id, Time start, Time duration) {
    state[id] = State::kRunning;
    timeline.spans[id] = {start, start + duration};
    events.push(EventQueue::Kind::kTask, start + duration, id);
    hold(id, start);
  };
  // The end time of a transfer or a shared kernel is known only when it ends, so its span gets
  // its end then.
  auto begin = [&](TaskId id, Time start) {
    state[id] = State::kRunning;
    timeline.spans[id].start_ns = start;
  };
  // A task whose rate may change while it runs: one that SM sharing can slow, or a transfer. Kept
  // out of line, like end_transfer below, so the common path stays small enough to inline.
  auto start_rated = [&](TaskId id, Time now) __attribute__((noinline)) {
    const Task& t = g.task(id);
    begin(id, now);
    if (t.link == graph::kNoLink) {
      sms.start(id, t.rank, t.duration_ns, t.beside_collective_slowdown, t.beside_two_collectives_slowdown, now);
      return;
    }
    hold(id, now);
    std::uint32_t directed[2];
    links.start(id, t.duration_ns, std::span(directed, directed_links(t.link, directed)), now);
  };
  auto on_ready = [&](TaskId id, Time now) {
    const Task& t = g.task(id);
    if (t.collective == graph::kNoCollective) {
      const bool slowed = any_holder && (t.beside_collective_slowdown > 1 || t.beside_two_collectives_slowdown > 1);
      if (t.duration_ns == 0 || (t.link == graph::kNoLink && !slowed)) {
        schedule(id, now, t.duration_ns);
      } else {
        start_rated(id, now);
      }
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
    for (TaskId m : c.members) {
      begin(m, now);
      hold(m, now);
    }
    links.start(c.members.front(), c.duration_ns, link_ids, now);
  };

  std::size_t ended = 0;
  auto finish = [&](TaskId id, Time now) {
    state[id] = State::kEnded;
    ++ended;
    if (any_holder && holds(id)) sms.holder_ended(g.task(id).rank, now);
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
    const EventQueue::Kind kind = events.next();
    const Event e = events.pop(kind);
    if (kind == EventQueue::Kind::kTask) {
      now = e.time;
      finish(e.id, now);
    } else if (kind == EventQueue::Kind::kTransfer) {
      if (!links.is_live(e)) continue;
      now = e.time;
      end_transfer(e);
    } else if (sms.is_live(e)) {
      now = e.time;
      const TaskId id = sms.end(e);
      timeline.spans[id].end_ns = now;
      finish(id, now);
    }
  }
  timeline.makespan_ns = now;

  if (ended < n) throw_deadlock(g, pick_stuck_task(g, state, stream_next));
  return timeline;
}

}  // namespace

Timeline run(const ExecGraph& g) { return g.has_sm_holders() ? simulate<true>(g) : simulate<false>(g); }

}  // namespace stepcast::sim
