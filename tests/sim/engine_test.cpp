#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace stepcast::sim {
namespace {

using graph::ExecGraph;
using graph::TaskId;
using graph::TaskKind;

TaskId add(ExecGraph& g, std::uint32_t rank, std::uint16_t stream, std::int64_t duration_ns,
           const std::string& name, TaskKind kind = TaskKind::kCompute) {
  return g.add_task({.kind = kind, .rank = rank, .stream = stream, .duration_ns = duration_ns},
                    name);
}

void expect_span(const Timeline& t, TaskId id, Time start_ns, Time end_ns) {
  EXPECT_EQ(t.spans[id].start_ns, start_ns) << "task " << id;
  EXPECT_EQ(t.spans[id].end_ns, end_ns) << "task " << id;
}

TEST(Engine, ChainSumsItsDurations) {
  // Alternating streams, so only the edges keep the tasks in order.
  ExecGraph g;
  const std::int64_t d[] = {100, 250, 40, 7};
  const char* names[] = {"load", "fwd", "bwd", "step"};
  std::vector<TaskId> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(add(g, 0, static_cast<std::uint16_t>(i % 2), d[i], names[i]));
    if (i > 0) g.add_edge(ids[i - 1], ids[i]);
  }
  g.finalize();
  const Timeline t = run(g);
  ASSERT_EQ(t.spans.size(), 4u);
  Time start = 0;
  for (int i = 0; i < 4; ++i) {
    expect_span(t, ids[i], start, start + d[i]);
    start += d[i];
  }
  EXPECT_EQ(t.makespan_ns, d[0] + d[1] + d[2] + d[3]);
}

TEST(Engine, IndependentStreamsOverlapAndMakespanIsTheLongest) {
  ExecGraph g;
  const std::int64_t compute_ns = 1000;
  const std::int64_t comm_ns = 600;
  const TaskId a = add(g, 0, 0, compute_ns, "compute");
  const TaskId b = add(g, 0, 1, comm_ns, "comm");
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, a, 0, compute_ns);
  expect_span(t, b, 0, comm_ns);
  EXPECT_EQ(t.makespan_ns, std::max(compute_ns, comm_ns));
}

TEST(Engine, SameStreamTasksSerialiseInInsertionOrderWithoutEdges) {
  // b waits for x on another stream; c has no predecessor but still queues behind b.
  ExecGraph g;
  const std::int64_t x_ns = 500, a_ns = 100, b_ns = 50, c_ns = 20;
  const TaskId x = add(g, 0, 1, x_ns, "x");
  const TaskId a = add(g, 0, 0, a_ns, "a");
  const TaskId b = add(g, 0, 0, b_ns, "b");
  const TaskId c = add(g, 0, 0, c_ns, "c");
  g.add_edge(x, b);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, a, 0, a_ns);
  const Time b_start = std::max(a_ns, x_ns);
  expect_span(t, b, b_start, b_start + b_ns);
  expect_span(t, c, b_start + b_ns, b_start + b_ns + c_ns);
  EXPECT_EQ(t.makespan_ns, b_start + b_ns + c_ns);
}

TEST(Engine, SparseStreamNumbersStillSerialisePerStream) {
  // Stream numbers far apart make a per-(rank, stream) table larger than the graph.
  ExecGraph g;
  const TaskId a = add(g, 3, 40000, 30, "a");
  const TaskId b = add(g, 0, 7, 11, "b");
  const TaskId c = add(g, 3, 40000, 5, "c");
  const TaskId d = add(g, 0, 7, 13, "d");
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, a, 0, 30);
  expect_span(t, c, 30, 30 + 5);
  expect_span(t, b, 0, 11);
  expect_span(t, d, 11, 11 + 13);
  EXPECT_EQ(t.makespan_ns, 30 + 5);
}

TEST(Engine, CollectiveStartsAtLatestMemberReadyTimeAndMembersEndTogether) {
  ExecGraph g;
  const std::int64_t compute_ns[] = {300, 700, 100};
  const std::int64_t all_reduce_ns = 250;
  const std::int64_t after_ns = 40;
  std::vector<TaskId> members;
  for (std::uint32_t r = 0; r < 3; ++r) {
    const TaskId c = add(g, r, 0, compute_ns[r], "bwd");
    members.push_back(add(g, r, 1, 0, "ar", TaskKind::kCollective));
    g.add_edge(c, members.back());
  }
  const TaskId after = add(g, 0, 0, after_ns, "step");
  g.add_edge(members[0], after);
  g.add_collective(members, all_reduce_ns);
  g.finalize();
  const Timeline t = run(g);
  const Time start = std::max({compute_ns[0], compute_ns[1], compute_ns[2]});
  for (TaskId m : members) expect_span(t, m, start, start + all_reduce_ns);
  expect_span(t, after, start + all_reduce_ns, start + all_reduce_ns + after_ns);
  EXPECT_EQ(t.makespan_ns, start + all_reduce_ns + after_ns);
}

TEST(Engine, RecvWaitsForItsSendAndBothEndTogether) {
  ExecGraph g;
  const std::int64_t produce_ns = 400, transfer_ns = 80, consume_ns = 200;
  const TaskId produce = add(g, 0, 0, produce_ns, "fwd.s0");
  const TaskId send = add(g, 0, 1, 0, "send", TaskKind::kSend);
  const TaskId recv = add(g, 1, 1, 0, "recv", TaskKind::kRecv);
  const TaskId consume = add(g, 1, 0, consume_ns, "fwd.s1");
  g.add_edge(produce, send);
  g.add_edge(recv, consume);
  g.add_collective({send, recv}, transfer_ns);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, send, produce_ns, produce_ns + transfer_ns);
  expect_span(t, recv, produce_ns, produce_ns + transfer_ns);
  expect_span(t, consume, produce_ns + transfer_ns, produce_ns + transfer_ns + consume_ns);
  EXPECT_EQ(t.makespan_ns, produce_ns + transfer_ns + consume_ns);
}

TEST(Engine, EqualTimeEventsGiveTheSameTimelineOnEveryRun) {
  // Every task lasts 0 or 10 ns, so many events share a time and only the FIFO tie-break
  // orders them.
  ExecGraph g;
  std::vector<TaskId> prev(8, 0);
  for (int layer = 0; layer < 6; ++layer) {
    std::vector<TaskId> members;
    for (std::uint32_t r = 0; r < 8; ++r) {
      const TaskId c = add(g, r, 0, (r + layer) % 2 == 0 ? 10 : 0, "c");
      if (layer > 0) g.add_edge(prev[r], c);
      members.push_back(add(g, r, 1, 0, "ar", TaskKind::kCollective));
      g.add_edge(c, members.back());
      prev[r] = c;
    }
    g.add_collective(members, 10);
  }
  g.finalize();
  const Timeline first = run(g);
  const Timeline second = run(g);
  ASSERT_EQ(first.spans.size(), second.spans.size());
  for (std::size_t i = 0; i < first.spans.size(); ++i) {
    EXPECT_EQ(first.spans[i].start_ns, second.spans[i].start_ns) << "task " << i;
    EXPECT_EQ(first.spans[i].end_ns, second.spans[i].end_ns) << "task " << i;
  }
  EXPECT_EQ(first.makespan_ns, second.makespan_ns);
}

TEST(Engine, CollectivesEnteredInOppositeOrdersOnOneStreamAreADeadlockNamingAStuckTask) {
  ExecGraph g;
  for (std::uint32_t r = 0; r < 2; ++r) {
    const TaskId fwd = add(g, r, 0, 100, "fwd");
    const TaskId bwd2 = add(g, r, 0, 100, "bwd.l2");
    g.add_edge(fwd, bwd2);
    g.add_edge(bwd2, add(g, r, 0, 100, "bwd.l1"));
  }
  // Rank 1 queues ag.l1 before ar.l2 on its communication stream; rank 0 the other way round.
  const TaskId ag1 = add(g, 1, 1, 0, "ag.l1", TaskKind::kCollective);
  const TaskId ar1 = add(g, 1, 1, 0, "ar.l2", TaskKind::kCollective);
  const TaskId ar0 = add(g, 0, 1, 0, "ar.l2", TaskKind::kCollective);
  const TaskId ag0 = add(g, 0, 1, 0, "ag.l1", TaskKind::kCollective);
  g.add_collective({ag0, ag1}, 50);
  g.add_collective({ar0, ar1}, 50);
  g.finalize();
  try {
    run(g);
    FAIL() << "expected a deadlock error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(std::string(e.what()),
              "deadlock: task \"ar.l2\" (task 7, rank 1, stream 1) never became ready; ranks may "
              "enter collectives in different orders on one stream");
  }
}

TEST(Engine, PipelineForwardOfFourStagesAndEightMicroBatchesFollowsTheFillFormula) {
  // Stage s on rank s sends activations to stage s + 1. Sends and receives use separate streams
  // so the two queues do not interleave. With transfer <= forward time, no stage ever waits on
  // its own queue, so fwd(s, m) ends at (m + s + 1) * F + s * C and the makespan is
  // (M + S - 1) * F + (S - 1) * C.
  constexpr int kStages = 4;
  constexpr int kMicroBatches = 8;
  constexpr std::int64_t kForwardNs = 1000;
  constexpr std::int64_t kTransferNs = 300;
  ExecGraph g;
  TaskId fwd[kStages][kMicroBatches];
  for (int m = 0; m < kMicroBatches; ++m) {
    TaskId pending_recv = 0;
    for (int s = 0; s < kStages; ++s) {
      const auto rank = static_cast<std::uint32_t>(s);
      fwd[s][m] = add(g, rank, 0, kForwardNs, "fwd");
      if (s > 0) g.add_edge(pending_recv, fwd[s][m]);
      if (s + 1 < kStages) {
        const TaskId send = add(g, rank, 2, 0, "send", TaskKind::kSend);
        pending_recv = add(g, rank + 1, 1, 0, "recv", TaskKind::kRecv);
        g.add_edge(fwd[s][m], send);
        g.add_collective({send, pending_recv}, kTransferNs);
      }
    }
  }
  g.finalize();
  const Timeline t = run(g);
  for (int s = 0; s < kStages; ++s) {
    for (int m = 0; m < kMicroBatches; ++m) {
      const Time end = (m + s + 1) * kForwardNs + s * kTransferNs;
      expect_span(t, fwd[s][m], end - kForwardNs, end);
    }
  }
  EXPECT_EQ(t.makespan_ns,
            (kMicroBatches + kStages - 1) * kForwardNs + (kStages - 1) * kTransferNs);
}

}  // namespace
}  // namespace stepcast::sim
