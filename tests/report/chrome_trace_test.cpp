#include "report/chrome_trace.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace stepcast::report {
namespace {

using graph::ExecGraph;
using graph::TaskId;
using graph::TaskKind;
using nlohmann::json;

constexpr const char* kOddName = R"(say "hi" \ back)";

struct Edge {
  TaskId from;
  TaskId to;
  bool cross_stream;
};

// Two ranks: compute on stream 0, an all-reduce then a send/recv on stream 1, edges both within
// and across streams. Durations are not multiples of 1000 ns so the 3-decimal path is exercised.
struct SmallStep {
  ExecGraph g;
  std::vector<Edge> edges;
  sim::Timeline t;

  SmallStep() {
    auto add = [&](TaskKind kind, std::uint32_t rank, std::uint16_t stream, std::int64_t ns,
                   const std::string& name) {
      return g.add_task({.kind = kind,
                         .rank = rank,
                         .stream = stream,
                         .duration_ns = ns,
                         .layer = 3,
                         .micro_batch = 1,
                         .bytes = 0,
                         .flops = 2.5e9},
                        name);
    };
    const TaskId fwd0 = add(TaskKind::kCompute, 0, 0, 1234, "fwd");
    const TaskId fwd1 = add(TaskKind::kCompute, 1, 0, 1500, "fwd");
    const TaskId ar0 = add(TaskKind::kCollective, 0, 1, 0, "all_reduce");
    const TaskId ar1 = add(TaskKind::kCollective, 1, 1, 0, "all_reduce");
    const TaskId send0 = add(TaskKind::kSend, 0, 1, 0, "send");
    const TaskId recv1 = add(TaskKind::kRecv, 1, 1, 0, "recv");
    const TaskId bwd0 = add(TaskKind::kCompute, 0, 0, 2001, "bwd");
    const TaskId odd1 = add(TaskKind::kCompute, 1, 0, 999, kOddName);
    g.add_collective({ar0, ar1}, 4321);
    g.add_collective({send0, recv1}, 505);
    edges = {{fwd0, ar0, true},   {fwd1, ar1, true},   {ar0, send0, false}, {ar1, recv1, false},
             {fwd0, bwd0, false}, {send0, bwd0, true}, {recv1, odd1, true}};
    for (const Edge& e : edges) g.add_edge(e.from, e.to);
    g.finalize();
    t = sim::run(g);
  }
};

json write_and_parse(const ExecGraph& g, const sim::Timeline& t) {
  std::ostringstream out;
  write_chrome_trace(g, t, out);
  return json::parse(out.str());  // throws on invalid JSON
}

std::vector<json> events_with_ph(const json& trace, const std::string& ph) {
  std::vector<json> found;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph) found.push_back(e);
  }
  return found;
}

double micros(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

TEST(ChromeTrace, WritesValidJsonObjectForm) {
  SmallStep s;
  std::ostringstream out;
  write_chrome_trace(s.g, s.t, out);
  const json trace = json::parse(out.str());
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_FALSE(trace.at("traceEvents").empty());
}

TEST(ChromeTrace, WritesEveryTaskOnceAsCompleteEvent) {
  SmallStep s;
  const json trace = write_and_parse(s.g, s.t);
  const std::vector<json> complete = events_with_ph(trace, "X");
  ASSERT_EQ(complete.size(), s.g.size());
  std::set<TaskId> seen;
  for (const json& e : complete) {
    const TaskId id = e.at("args").at("task").get<TaskId>();
    ASSERT_LT(id, s.g.size());
    EXPECT_TRUE(seen.insert(id).second) << "task " << id << " written twice";
    const graph::Task& task = s.g.task(id);
    const sim::Span& span = s.t.spans[id];
    EXPECT_EQ(e.at("name").get<std::string>(), std::string(s.g.name(id)));
    EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), micros(span.start_ns)) << "task " << id;
    EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), micros(span.end_ns - span.start_ns))
        << "task " << id;
    EXPECT_EQ(e.at("pid").get<std::uint32_t>(), task.rank);
    EXPECT_EQ(e.at("tid").get<std::uint32_t>(), task.stream);
  }
}

TEST(ChromeTrace, WritesTimesAsMicrosecondsWithThreeDecimals) {
  SmallStep s;
  std::ostringstream out;
  write_chrome_trace(s.g, s.t, out);
  // fwd on rank 0 starts at 0 and lasts 1234 ns; the all-reduce lasts 4321 ns.
  EXPECT_NE(out.str().find(R"("ts":0.000,"dur":1.234,)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(R"("dur":4.321,)"), std::string::npos);
}

TEST(ChromeTrace, WritesKindAndArgs) {
  SmallStep s;
  const json trace = write_and_parse(s.g, s.t);
  std::map<std::string, int> kinds;
  for (const json& e : events_with_ph(trace, "X")) {
    ++kinds[e.at("cat").get<std::string>()];
    const json& args = e.at("args");
    const graph::Task& task = s.g.task(args.at("task").get<TaskId>());
    EXPECT_EQ(args.at("layer"), 3);
    EXPECT_EQ(args.at("micro_batch"), 1);
    EXPECT_EQ(args.at("flops"), 2.5e9);
    EXPECT_FALSE(args.contains("bytes")) << "bytes 0 is unset";
    if (task.collective == graph::kNoCollective) {
      EXPECT_FALSE(args.contains("collective"));
    } else {
      EXPECT_EQ(args.at("collective").get<std::uint32_t>(), task.collective);
    }
  }
  EXPECT_EQ(kinds, (std::map<std::string, int>{
                       {"compute", 4}, {"collective", 2}, {"send", 1}, {"recv", 1}}));
}

TEST(ChromeTrace, NamesEveryRankAndUsedStream) {
  SmallStep s;
  const json trace = write_and_parse(s.g, s.t);
  std::set<std::pair<int, std::string>> processes;
  std::set<std::tuple<int, int, std::string>> threads;
  for (const json& e : events_with_ph(trace, "M")) {
    const std::string name = e.at("args").at("name");
    if (e.at("name") == "process_name") processes.insert({e.at("pid").get<int>(), name});
    if (e.at("name") == "thread_name") {
      threads.insert({e.at("pid").get<int>(), e.at("tid").get<int>(), name});
    }
  }
  EXPECT_EQ(processes, (std::set<std::pair<int, std::string>>{{0, "rank 0"}, {1, "rank 1"}}));
  EXPECT_EQ(threads,
            (std::set<std::tuple<int, int, std::string>>{
                {0, 0, "stream 0"}, {0, 1, "stream 1"}, {1, 0, "stream 0"}, {1, 1, "stream 1"}}));
}

TEST(ChromeTrace, DrawsOneFlowPairPerCrossStreamEdgeOnly) {
  SmallStep s;
  const json trace = write_and_parse(s.g, s.t);
  std::map<std::uint64_t, json> starts, finishes;
  for (const json& e : events_with_ph(trace, "s")) {
    EXPECT_TRUE(starts.emplace(e.at("id").get<std::uint64_t>(), e).second) << "duplicate id";
  }
  for (const json& e : events_with_ph(trace, "f")) {
    EXPECT_TRUE(finishes.emplace(e.at("id").get<std::uint64_t>(), e).second) << "duplicate id";
  }
  ASSERT_EQ(starts.size(), finishes.size());

  // Each pair must match exactly one cross-stream edge: the source's end on the source's lane to
  // the destination's start on the destination's lane.
  std::multiset<std::pair<TaskId, TaskId>> expected;
  for (const Edge& e : s.edges) {
    if (e.cross_stream) expected.insert({e.from, e.to});
  }
  std::multiset<std::pair<TaskId, TaskId>> drawn;
  for (const auto& [id, start] : starts) {
    ASSERT_TRUE(finishes.count(id)) << "flow " << id << " has no \"f\"";
    const json& finish = finishes.at(id);
    for (const json* e : {&start, &finish}) {
      EXPECT_EQ(e->at("cat"), "dependency");
      EXPECT_EQ(e->at("name"), "dep");
      EXPECT_EQ(e->at("bp"), "e");
    }
    // Recover the edge from the endpoints' lanes and times.
    bool matched = false;
    for (const Edge& edge : s.edges) {
      const graph::Task& from = s.g.task(edge.from);
      const graph::Task& to = s.g.task(edge.to);
      if (start.at("pid") == from.rank && start.at("tid") == from.stream &&
          start.at("ts").get<double>() == micros(s.t.spans[edge.from].end_ns) &&
          finish.at("pid") == to.rank && finish.at("tid") == to.stream &&
          finish.at("ts").get<double>() == micros(s.t.spans[edge.to].start_ns) &&
          !drawn.count({edge.from, edge.to})) {
        drawn.insert({edge.from, edge.to});
        matched = true;
        break;
      }
    }
    EXPECT_TRUE(matched) << "flow " << id << " matches no edge: " << start << " -> " << finish;
  }
  EXPECT_EQ(drawn, expected);
}

TEST(ChromeTrace, RoundTripsNameWithQuoteAndBackslash) {
  SmallStep s;
  const json trace = write_and_parse(s.g, s.t);
  int found = 0;
  for (const json& e : events_with_ph(trace, "X")) found += e.at("name") == kOddName;
  EXPECT_EQ(found, 1);
}

TEST(ChromeTrace, EscapesControlCharacters) {
  ExecGraph g;
  const std::string name = std::string("tab\there\nnl\x01") + '\x1f';
  g.add_task({.duration_ns = 10}, name);
  g.finalize();
  const json trace = write_and_parse(g, sim::run(g));
  EXPECT_EQ(events_with_ph(trace, "X").at(0).at("name").get<std::string>(), name);
}

TEST(ChromeTrace, WritesMemorySamplesAsCounterEventsInGiB) {
  SmallStep s;
  const std::vector<analysis::MemorySample> memory = {{0, 1500, 1024.0 * 1024 * 1024}, {1, 2500, 0}};
  std::ostringstream out;
  write_chrome_trace(s.g, s.t, out, memory);
  const std::vector<json> counters = events_with_ph(json::parse(out.str()), "C");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0].at("name"), "live memory");
  EXPECT_EQ(counters[0].at("pid"), 0);
  EXPECT_DOUBLE_EQ(counters[0].at("ts").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(counters[0].at("args").at("GiB").get<double>(), 1.0);
  EXPECT_EQ(counters[1].at("pid"), 1);
}

TEST(ChromeTrace, WritesEmptyGraphAsEmptyEventList) {
  ExecGraph g;
  g.finalize();
  std::ostringstream out;
  write_chrome_trace(g, sim::run(g), out);
  const json trace = json::parse(out.str());
  EXPECT_TRUE(trace.at("traceEvents").empty());
}

TEST(ChromeTrace, RejectsTimelineOfAnotherGraph) {
  SmallStep s;
  sim::Timeline short_timeline = s.t;
  short_timeline.spans.pop_back();
  std::ostringstream out;
  try {
    write_chrome_trace(s.g, short_timeline, out);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(e.message(),
              "cannot write a Chrome trace: the timeline has 7 spans but the graph has 8 tasks");
  }
}

TEST(ChromeTrace, StreamsLargeTraceWithOnePairPerCrossEdge) {
  // 64 ranks x 2 streams x 128 tasks, each compute task feeding the next rank's comm stream.
  ExecGraph g;
  constexpr std::uint32_t kRanks = 64;
  constexpr int kSteps = 128;
  std::vector<TaskId> prev(kRanks * 2, 0);
  std::size_t cross = 0;
  for (int step = 0; step < kSteps; ++step) {
    for (std::uint32_t r = 0; r < kRanks; ++r) {
      const TaskId c = g.add_task({.rank = r, .stream = 0, .duration_ns = 1000 + r}, "c");
      const TaskId m =
          g.add_task({.kind = TaskKind::kMemcpy, .rank = r, .stream = 1, .duration_ns = 500}, "m");
      g.add_edge(c, m);
      ++cross;
    }
  }
  g.finalize();
  const sim::Timeline t = sim::run(g);
  const json trace = write_and_parse(g, t);
  EXPECT_EQ(events_with_ph(trace, "X").size(), g.size());
  EXPECT_EQ(events_with_ph(trace, "s").size(), cross);
  EXPECT_EQ(events_with_ph(trace, "f").size(), cross);
  EXPECT_EQ(events_with_ph(trace, "M").size(), kRanks * 3);
}

}  // namespace
}  // namespace stepcast::report
