#include "report/chrome_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace stepcast::report {
namespace {

using graph::ExecGraph;
using graph::Task;
using graph::TaskId;
using graph::TaskKind;


// Appends JSON text to a buffer and hands it to the stream in large chunks, so a trace of
// millions of events costs a few thousand ostream writes.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) { buf_.reserve(kFlushAt + 4096); }

  void raw(std::string_view s) { buf_.append(s); }

  template <typename Int>
  void integer(Int v) {
    char tmp[24];
    auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, end);
  }

  // Shortest text that reads back as `v`. REQUIRES: std::isfinite(v).
  void number(double v) {
    char tmp[32];
    auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, end);
  }

  // Nanoseconds as microseconds with exactly three decimals: 1234567 -> 1234.567.
  void micros(std::int64_t ns) {
    if (ns < 0) {
      buf_.push_back('-');
      ns = -ns;
    }
    integer(ns / 1000);
    const auto frac = static_cast<int>(ns % 1000);
    const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                            static_cast<char>('0' + frac / 10 % 10),
                            static_cast<char>('0' + frac % 10)};
    buf_.append(digits, 4);
  }

  // A quoted JSON string: escapes '"', '\\' and control characters, copies other bytes.
  void string(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    buf_.push_back('"');
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        buf_.push_back('\\');
        buf_.push_back(c);
      } else if (u < 0x20) {
        switch (c) {
          case '\n':
            buf_.append("\\n");
            break;
          case '\r':
            buf_.append("\\r");
            break;
          case '\t':
            buf_.append("\\t");
            break;
          case '\b':
            buf_.append("\\b");
            break;
          case '\f':
            buf_.append("\\f");
            break;
          default:
            buf_.append("\\u00");
            buf_.push_back(kHex[u >> 4]);
            buf_.push_back(kHex[u & 0xf]);
        }
      } else {
        buf_.push_back(c);
      }
    }
    buf_.push_back('"');
  }

  // Call between events: writes the buffer out once it is large.
  void maybe_flush() {
    if (buf_.size() >= kFlushAt) flush();
  }

  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    if (!out_) throw Error(ErrorKind::kIo, "cannot write the Chrome trace: the stream failed");
  }

 private:
  static constexpr std::size_t kFlushAt = std::size_t{1} << 16;
  std::ostream& out_;
  std::string buf_;
};

// Writes `,\n` before every event but the first.
class EventList {
 public:
  explicit EventList(JsonWriter& w) : w_(w) {}
  JsonWriter& next() {
    w_.maybe_flush();
    w_.raw(first_ ? "\n" : ",\n");
    first_ = false;
    return w_;
  }

 private:
  JsonWriter& w_;
  bool first_ = true;
};

void pid_tid(JsonWriter& w, const Task& task) {
  w.raw(",\"pid\":");
  w.integer(task.rank);
  w.raw(",\"tid\":");
  w.integer(task.stream);
}

void write_metadata(const ExecGraph& g, EventList& events) {
  // (rank, stream) pairs that hold a task, sorted, so rank and thread names come out in order.
  std::vector<std::uint64_t> lanes;
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& task = g.task(id);
    lanes.push_back(std::uint64_t{task.rank} << 16 | task.stream);
  }
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());

  std::uint64_t last_rank = ~std::uint64_t{0};
  for (const std::uint64_t lane : lanes) {
    const std::uint64_t rank = lane >> 16;
    const std::uint64_t stream = lane & 0xffff;
    if (rank != last_rank) {
      JsonWriter& w = events.next();
      w.raw(R"({"ph":"M","name":"process_name","pid":)");
      w.integer(rank);
      w.raw(R"(,"args":{"name":)");
      w.string(g.rank_name(static_cast<std::uint32_t>(rank)));
      w.raw("}}");
      last_rank = rank;
    }
    JsonWriter& w = events.next();
    w.raw(R"({"ph":"M","name":"thread_name","pid":)");
    w.integer(rank);
    w.raw(",\"tid\":");
    w.integer(stream);
    w.raw(R"(,"args":{"name":)");
    w.string(g.stream_name(static_cast<std::uint16_t>(stream)));
    w.raw("}}");
  }
}

void write_task(const ExecGraph& g, const sim::Timeline& t, TaskId id, EventList& events) {
  const Task& task = g.task(id);
  const sim::Span& span = t.spans[id];
  JsonWriter& w = events.next();
  w.raw(R"({"ph":"X","name":)");
  w.string(g.name(id));
  w.raw(",\"cat\":\"");
  w.raw(graph::kind_name(task.kind));
  w.raw("\",\"ts\":");
  w.micros(span.start_ns);
  w.raw(",\"dur\":");
  w.micros(span.end_ns - span.start_ns);
  pid_tid(w, task);
  w.raw(R"(,"args":{"task":)");
  w.integer(id);
  w.raw(",\"category\":\"");
  w.raw(graph::category_name(task.category));
  w.raw("\"");
  if (task.layer >= 0) {
    w.raw(",\"layer\":");
    w.integer(task.layer);
  }
  if (task.micro_batch >= 0) {
    w.raw(",\"micro_batch\":");
    w.integer(task.micro_batch);
  }
  if (std::isfinite(task.bytes) && task.bytes > 0) {
    w.raw(",\"bytes\":");
    w.number(task.bytes);
  }
  if (std::isfinite(task.flops) && task.flops > 0) {
    w.raw(",\"flops\":");
    w.number(task.flops);
  }
  if (task.collective != graph::kNoCollective) {
    w.raw(",\"collective\":");
    w.integer(task.collective);
  }
  w.raw("}}");
}

void write_flow_end(JsonWriter& w, char ph, std::uint64_t flow_id, const Task& task,
                    sim::Time at_ns) {
  w.raw(R"({"ph":")");
  w.raw(std::string_view(&ph, 1));
  w.raw(R"(","name":"dep","cat":"dependency","id":)");
  w.integer(flow_id);
  w.raw(",\"ts\":");
  w.micros(at_ns);
  pid_tid(w, task);
  w.raw(R"(,"bp":"e"})");
}

}  // namespace

void write_chrome_trace(const graph::ExecGraph& g, const sim::Timeline& t, std::ostream& out,
                        std::span<const analysis::MemorySample> memory) {
  if (t.spans.size() != g.size()) {
    std::string message = "cannot write a Chrome trace: the timeline has ";
    message.append(std::to_string(t.spans.size()));
    message.append(" spans but the graph has ");
    message.append(std::to_string(g.size()));
    message.append(" tasks");
    throw Error(ErrorKind::kInvalidInput, std::move(message),
                "pass the Timeline that sim::run returned for this graph");
  }

  JsonWriter w(out);
  w.raw(R"({"displayTimeUnit":"ns","traceEvents":[)");
  EventList events(w);
  write_metadata(g, events);
  for (TaskId id = 0; id < g.size(); ++id) write_task(g, t, id, events);
  for (const analysis::MemorySample& sample : memory) {
    JsonWriter& e = events.next();
    e.raw(R"({"ph":"C","name":"live memory","pid":)");
    e.integer(sample.rank);
    e.raw(",\"ts\":");
    e.micros(sample.time_ns);
    e.raw(R"(,"args":{"GiB":)");
    e.number(sample.bytes / (1024.0 * 1024 * 1024));
    e.raw("}}");
  }

  std::uint64_t flow_id = 0;
  for (TaskId from = 0; from < g.size(); ++from) {
    const Task& src = g.task(from);
    for (const TaskId to : g.successors(from)) {
      const Task& dst = g.task(to);
      if (src.rank == dst.rank && src.stream == dst.stream) continue;
      write_flow_end(events.next(), 's', flow_id, src, t.spans[from].end_ns);
      write_flow_end(events.next(), 'f', flow_id, dst, t.spans[to].start_ns);
      ++flow_id;
    }
  }
  w.raw("\n]}\n");
  w.flush();
}

}  // namespace stepcast::report
