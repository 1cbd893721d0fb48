// SM sharing in sim::run: kernels slowed while a collective's kernel holds SMs of their rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/engine.h"

namespace stepcast::sim {
namespace {

using graph::ExecGraph;
using graph::TaskId;
using graph::TaskKind;

constexpr std::uint16_t kCompute = 0, kComm = 1, kSecondComm = 3;

// A kernel of 1,000 ns alone and 2,000 ns beside a collective: half speed while one runs.
TaskId add_kernel(ExecGraph& g, std::uint32_t rank, const std::string& name) {
  return g.add_task({.kind = TaskKind::kCompute, .rank = rank, .stream = kCompute, .beside_collective_slowdown = 2,
                     .duration_ns = 1000},
                    name);
}

// A one-member collective on `stream` that holds SMs for `duration_ns`.
TaskId add_holder(ExecGraph& g, std::uint32_t rank, std::int64_t duration_ns, std::uint16_t stream = kComm,
                  bool holds_sms = true) {
  const TaskId id = g.add_task({.kind = TaskKind::kCollective, .holds_sms = holds_sms, .rank = rank, .stream = stream,
                                .duration_ns = duration_ns},
                               "collective");
  g.add_collective({id}, duration_ns);
  return id;
}

void expect_span(const Timeline& t, TaskId id, Time start_ns, Time end_ns) {
  EXPECT_EQ(t.spans[id].start_ns, start_ns) << "task " << id;
  EXPECT_EQ(t.spans[id].end_ns, end_ns) << "task " << id;
}

// 500 ns at half speed do 250 ns of the kernel's work; the other 750 run at full speed.
TEST(EngineSm, KernelRunsAtTheSlowerRateOnlyWhileACollectiveHoldsSms) {
  ExecGraph g;
  const TaskId kernel = add_kernel(g, 0, "fwd");
  const TaskId gather = add_holder(g, 0, 500);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, gather, 0, 500);
  expect_span(t, kernel, 0, 1250);
}

// The kernel runs 400 ns alone (400 ns of work), then 1,200 ns beside the collective at half
// speed (600 ns of work): it ends with the collective.
TEST(EngineSm, CollectiveStartingMidKernelSlowsTheRestOfIt) {
  ExecGraph g;
  const TaskId kernel = add_kernel(g, 0, "fwd");
  const TaskId wait = g.add_task({.kind = TaskKind::kHost, .rank = 0, .stream = 2, .duration_ns = 400}, "host");
  const TaskId gather = add_holder(g, 0, 1200);
  g.add_edge(wait, gather);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, gather, 400, 1600);
  expect_span(t, kernel, 0, 1600);
}

TEST(EngineSm, KernelOutlastedByTheCollectiveTakesItsWholeBesideDuration) {
  ExecGraph g;
  const TaskId kernel = add_kernel(g, 0, "fwd");
  add_holder(g, 0, 5000);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, kernel, 0, 2000);
}

TEST(EngineSm, CollectiveOnAnotherRankSlowsNothing) {
  ExecGraph g;
  const TaskId kernel = add_kernel(g, 0, "fwd");
  add_holder(g, 1, 500);
  g.finalize();
  EXPECT_EQ(run(g).spans[kernel].end_ns, 1000);
}

TEST(EngineSm, CollectiveThatHoldsNoSmsSlowsNothing) {
  ExecGraph g;
  const TaskId kernel = add_kernel(g, 0, "fwd");
  add_holder(g, 0, 500, kComm, false);
  g.finalize();
  EXPECT_EQ(run(g).spans[kernel].end_ns, 1000);
}

// Each holder keeps its own SMs: the kernel takes 2x beside one and 4x beside two. 0-300 one
// holder (150 ns of work), 300-600 two (75), 600-900 one (150); the other 625 at full speed.
TEST(EngineSm, SecondHolderAtOnceSlowsTheKernelFurther) {
  ExecGraph g;
  const TaskId kernel = add_kernel(g, 0, "fwd");
  g.mutable_task(kernel).beside_two_collectives_slowdown = 4;
  add_holder(g, 0, 600);
  const TaskId wait = g.add_task({.kind = TaskKind::kHost, .rank = 0, .stream = 2, .duration_ns = 300}, "host");
  const TaskId second = add_holder(g, 0, 600, kSecondComm);
  g.add_edge(wait, second);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, second, 300, 900);
  expect_span(t, kernel, 0, 1525);
}

// Without a slowdown of its own beside two, a kernel takes the one beside one.
TEST(EngineSm, KernelWithoutATwoCollectiveSlowdownKeepsTheOneCollectiveRate) {
  ExecGraph g;
  const TaskId kernel = add_kernel(g, 0, "fwd");
  add_holder(g, 0, 5000);
  add_holder(g, 0, 5000, kSecondComm);
  g.finalize();
  EXPECT_EQ(run(g).spans[kernel].end_ns, 2000);
}

// The first kernel runs wholly beside the collective (0-2,000); the second starts slowed, does
// 250 ns of work by the collective's end at 2,500 and the other 750 at full speed.
TEST(EngineSm, KernelStartingDuringTheCollectiveStartsSlowed) {
  ExecGraph g;
  const TaskId first = add_kernel(g, 0, "a");
  const TaskId second = add_kernel(g, 0, "b");
  add_holder(g, 0, 2500);
  g.finalize();
  const Timeline t = run(g);
  expect_span(t, first, 0, 2000);
  expect_span(t, second, 2000, 3250);
}

}  // namespace
}  // namespace stepcast::sim
