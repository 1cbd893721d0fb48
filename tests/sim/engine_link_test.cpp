// Link bandwidth sharing in sim::run: fluid fair sharing between transfers on one link id.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/engine.h"

namespace stepcast::sim {
namespace {

using graph::ExecGraph;
using graph::kNoLink;
using graph::TaskId;
using graph::TaskKind;

constexpr std::uint32_t kLinkA = 7;
// Far from kLinkA: link ids need not be dense.
constexpr std::uint32_t kLinkB = 4000000000u;
constexpr std::int64_t kTransferNs = 100'000;

TaskId add(ExecGraph& g, std::uint32_t rank, std::uint16_t stream, std::int64_t duration_ns,
           const std::string& name, std::uint32_t link = kNoLink,
           TaskKind kind = TaskKind::kCompute) {
  return g.add_task(
      {.kind = kind, .rank = rank, .stream = stream, .duration_ns = duration_ns, .link = link},
      name);
}

// A stand-alone transfer (a copy over a link) on its own rank, so no stream orders it.
TaskId add_transfer(ExecGraph& g, std::uint32_t rank, std::int64_t duration_ns,
                    std::uint32_t link) {
  return add(g, rank, 1, duration_ns, "copy", link, TaskKind::kMemcpy);
}

void expect_span(const Timeline& t, TaskId id, Time start_ns, Time end_ns) {
  EXPECT_EQ(t.spans[id].start_ns, start_ns) << "task " << id;
  EXPECT_EQ(t.spans[id].end_ns, end_ns) << "task " << id;
}

TEST(EngineLink, TwoTransfersStartingTogetherOnOneLinkBothTakeTwiceAsLong) {
  ExecGraph g;
  const TaskId a = add_transfer(g, 0, kTransferNs, kLinkA);
  const TaskId b = add_transfer(g, 1, kTransferNs, kLinkA);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, a, 0, 200'000);
  expect_span(t, b, 0, 200'000);
  EXPECT_EQ(t.makespan_ns, 200'000);
}

// The first transfer runs alone for 50,000 ns; both share until it ends at 150,000; the second,
// half done by then, finishes alone. The link moves 200,000 ns of work with no idle time.
TEST(EngineLink, TransferJoiningLaterSlowsTheFirstOnlyWhileBothAreActive) {
  ExecGraph g;
  const TaskId first = add_transfer(g, 0, kTransferNs, kLinkA);
  const TaskId compute = add(g, 1, 0, 50'000, "fwd");
  const TaskId second = add_transfer(g, 1, kTransferNs, kLinkA);
  g.add_edge(compute, second);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, first, 0, 150'000);
  expect_span(t, compute, 0, 50'000);
  expect_span(t, second, 50'000, 200'000);
  EXPECT_EQ(t.makespan_ns, 200'000);
}

TEST(EngineLink, TransfersOnDifferentLinksDoNotSlowEachOther) {
  ExecGraph g;
  const TaskId first = add_transfer(g, 0, kTransferNs, kLinkA);
  const TaskId compute = add(g, 1, 0, 50'000, "fwd");
  const TaskId second = add_transfer(g, 1, kTransferNs, kLinkB);
  g.add_edge(compute, second);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, first, 0, kTransferNs);
  expect_span(t, second, 50'000, 50'000 + kTransferNs);
}

TEST(EngineLink, ComputeTasksWithoutALinkNeverShare) {
  // Two kernels on separate streams overlap a transfer; none of them slows down.
  ExecGraph g;
  const TaskId k0 = add(g, 0, 0, kTransferNs, "gemm");
  const TaskId k1 = add(g, 0, 2, kTransferNs, "attn");
  const TaskId copy = add_transfer(g, 0, kTransferNs, kLinkA);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, k0, 0, kTransferNs);
  expect_span(t, k1, 0, kTransferNs);
  expect_span(t, copy, 0, kTransferNs);
}

// The collective is one of two transfers on A, so at half speed even though B is free: by the
// time the other transfer ends at 100,000 it has done 50,000 of its work, and finishes the rest
// alone.
TEST(EngineLink, CollectiveOnTwoLinksRunsAtItsShareOfTheBusiestLink) {
  ExecGraph g;
  const TaskId m0 = add(g, 0, 1, 0, "ar", kLinkA, TaskKind::kCollective);
  const TaskId m1 = add(g, 1, 1, 0, "ar", kLinkB, TaskKind::kCollective);
  g.add_collective({m0, m1}, kTransferNs);
  const TaskId other = add_transfer(g, 2, 50'000, kLinkA);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, other, 0, 100'000);
  expect_span(t, m0, 0, 150'000);
  expect_span(t, m1, 0, 150'000);
}

TEST(EngineLink, CollectiveMembersOnOneLinkCountOnceForIt) {
  ExecGraph g;
  const TaskId m0 = add(g, 0, 1, 0, "ar", kLinkA, TaskKind::kCollective);
  const TaskId m1 = add(g, 1, 1, 0, "ar", kLinkA, TaskKind::kCollective);
  const TaskId m2 = add(g, 2, 1, 0, "ar", kLinkA, TaskKind::kCollective);
  g.add_collective({m0, m1, m2}, kTransferNs);
  g.finalize();
  const Timeline t = run(g);
  for (TaskId m : {m0, m1, m2}) expect_span(t, m, 0, kTransferNs);
}

TEST(EngineLink, SendRecvPairSharesTheLinkOfEitherSide) {
  ExecGraph g;
  const TaskId send = add(g, 0, 1, 0, "send", kLinkA, TaskKind::kSend);
  const TaskId recv = add(g, 1, 1, 0, "recv", kNoLink, TaskKind::kRecv);
  g.add_collective({send, recv}, kTransferNs);
  const TaskId copy = add_transfer(g, 2, kTransferNs, kLinkA);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, send, 0, 200'000);
  expect_span(t, recv, 0, 200'000);
  expect_span(t, copy, 0, 200'000);
}

// Two pipeline stages on port 3 and port 4 exchange at once: stage 3 sends forward while it
// receives from stage 4. Each direction of a port carries one transfer, so neither slows.
TEST(EngineLink, ASendAndAReceiveOnOnePortTravelInDifferentDirectionsAndDoNotShare) {
  using graph::LinkDirection;
  ExecGraph g;
  const TaskId forward_send =
      add(g, 0, 1, 0, "send", graph::link(3, LinkDirection::kOutbound), TaskKind::kSend);
  const TaskId forward_recv =
      add(g, 1, 1, 0, "recv", graph::link(4, LinkDirection::kInbound), TaskKind::kRecv);
  g.add_collective({forward_send, forward_recv}, kTransferNs);
  const TaskId back_send =
      add(g, 1, 2, 0, "send", graph::link(4, LinkDirection::kOutbound), TaskKind::kSend);
  const TaskId back_recv =
      add(g, 0, 2, 0, "recv", graph::link(3, LinkDirection::kInbound), TaskKind::kRecv);
  g.add_collective({back_send, back_recv}, kTransferNs);
  g.finalize();
  const Timeline t = run(g);
  for (TaskId id : {forward_send, forward_recv, back_send, back_recv})
    expect_span(t, id, 0, kTransferNs);
}

// A ring collective sends and receives on every member's port, so it shares either direction.
TEST(EngineLink, ACollectiveUsingBothDirectionsSharesWithASendAndWithAReceive) {
  using graph::LinkDirection;
  ExecGraph g;
  const TaskId ring = add_transfer(g, 0, kTransferNs, graph::link(3, LinkDirection::kBoth));
  const TaskId out = add_transfer(g, 1, kTransferNs, graph::link(3, LinkDirection::kOutbound));
  const TaskId in = add_transfer(g, 2, kTransferNs, graph::link(3, LinkDirection::kInbound));
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, ring, 0, 200'000);
  expect_span(t, out, 0, 200'000);
  expect_span(t, in, 0, 200'000);
}

TEST(EngineLink, ZeroLengthTransferTakesNoShare) {
  ExecGraph g;
  const TaskId copy = add_transfer(g, 0, kTransferNs, kLinkA);
  const TaskId compute = add(g, 1, 0, 50'000, "fwd");
  const TaskId empty = add_transfer(g, 1, 0, kLinkA);
  g.add_edge(compute, empty);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, copy, 0, kTransferNs);
  expect_span(t, empty, 50'000, 50'000);
}

// Shares of 1/2 and 1/3 leave fractional work; every end is rounded up, so the link, busy from
// 0 with 30 ns of work in all, finishes at 31 rather than 30.
//   [0, 1)  a alone:        a has 9 left
//   [1, 2)  a, b at 1/2:    a 8.5, b 9.5
//   2       c joins at 1/3: a ends at 2 + ceil(25.5) = 28
//   28      b 5/6, c 4/3 at 1/2: b ends at 28 + ceil(5/3) = 30
//   30      c 1/3 alone:    ends at 30 + ceil(1/3) = 31
TEST(EngineLink, EndTimesRoundUpSoATransferNeverEndsEarly) {
  ExecGraph g;
  const TaskId a = add_transfer(g, 0, 10, kLinkA);
  const TaskId wait_b = add(g, 1, 0, 1, "fwd");
  const TaskId b = add_transfer(g, 1, 10, kLinkA);
  const TaskId wait_c = add(g, 2, 0, 2, "fwd");
  const TaskId c = add_transfer(g, 2, 10, kLinkA);
  g.add_edge(wait_b, b);
  g.add_edge(wait_c, c);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, a, 0, 28);
  expect_span(t, b, 1, 30);
  expect_span(t, c, 2, 31);
}

// Compute, a collective and a send/recv pair, all without links, keep the schedule worked out by
// hand from the rules that hold without sharing:
//   rank 0: fwd [0, 300), ar [700, 950), send [300, 380)    rank 1: fwd [0, 700), ar [700, 950)
//   rank 2: recv [300, 380), use [380, 580)
TEST(EngineLink, GraphWithoutLinksKeepsTheScheduleWithoutSharing) {
  ExecGraph g;
  const TaskId fwd0 = add(g, 0, 0, 300, "fwd");
  const TaskId fwd1 = add(g, 1, 0, 700, "fwd");
  const TaskId ar0 = add(g, 0, 1, 0, "ar", kNoLink, TaskKind::kCollective);
  const TaskId ar1 = add(g, 1, 1, 0, "ar", kNoLink, TaskKind::kCollective);
  const TaskId send = add(g, 0, 2, 0, "send", kNoLink, TaskKind::kSend);
  const TaskId recv = add(g, 2, 1, 0, "recv", kNoLink, TaskKind::kRecv);
  const TaskId use = add(g, 2, 0, 200, "fwd");
  g.add_edge(fwd0, ar0);
  g.add_edge(fwd1, ar1);
  g.add_edge(fwd0, send);
  g.add_edge(recv, use);
  g.add_collective({ar0, ar1}, 250);
  g.add_collective({send, recv}, 80);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, fwd0, 0, 300);
  expect_span(t, fwd1, 0, 700);
  expect_span(t, ar0, 700, 950);
  expect_span(t, ar1, 700, 950);
  expect_span(t, send, 300, 380);
  expect_span(t, recv, 300, 380);
  expect_span(t, use, 380, 580);
  EXPECT_EQ(t.makespan_ns, 950);
}

}  // namespace
}  // namespace stepcast::sim
