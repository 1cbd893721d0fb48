#include "analysis/timeline_analysis.h"

#include <gtest/gtest.h>

namespace stepcast::analysis {
namespace {

using graph::Category;
using graph::ExecGraph;
using graph::Task;
using graph::TaskId;
using graph::TaskKind;

TaskId add(ExecGraph& g, std::uint32_t rank, std::uint16_t stream, std::int64_t ns, Category c,
           TaskKind kind = TaskKind::kCompute, double memory = 0) {
  Task t;
  t.kind = kind;
  t.rank = rank;
  t.stream = stream;
  t.duration_ns = ns;
  t.category = c;
  t.memory_delta = memory;
  return g.add_task(t, "t");
}

// Two stages: stage 0 computes 1000 ns and sends (300 ns) to stage 1, which computes 2000 ns
// and then waits 500 ns for a gradient bucket on its second stream before the optimizer.
struct TwoStages {
  ExecGraph g;
  TaskId f0, send, recv, f1, bucket, opt;
  TwoStages() {
    f0 = add(g, 0, 0, 1000, Category::kCompute, TaskKind::kCompute, 64);
    send = add(g, 0, 4, 0, Category::kPipeline, TaskKind::kSend);
    recv = add(g, 1, 5, 0, Category::kPipeline, TaskKind::kRecv);
    f1 = add(g, 1, 0, 2000, Category::kCompute, TaskKind::kCompute, 100);
    bucket = add(g, 1, 2, 2500, Category::kDataParallel, TaskKind::kCollective);
    opt = add(g, 1, 0, 100, Category::kOptimizer, TaskKind::kCompute, -100);
    g.add_edge(f0, send);
    g.add_edge(recv, f1);
    g.add_edge(f1, bucket);
    g.add_edge(bucket, opt);
    g.add_collective({send, recv}, 300);
    g.add_collective({bucket}, 500);
    g.finalize();
  }
};

TEST(TimelineAnalysis, BreakdownSplitsAReceiveWaitIntoBubbleAndTransfer) {
  TwoStages s;
  const sim::Timeline t = sim::run(s.g);
  ASSERT_EQ(t.makespan_ns, 1000 + 300 + 2000 + 500 + 100);
  const analytic::Breakdown b = breakdown(s.g, t);
  // Stage 1 ends last: it idles 1000 ns for stage 0 (bubble), 300 ns for the transfer.
  EXPECT_DOUBLE_EQ(b.bubble_s, 1000e-9);
  EXPECT_DOUBLE_EQ(b.pp_comm_s, 300e-9);
  EXPECT_DOUBLE_EQ(b.compute_s, 2000e-9);
  EXPECT_DOUBLE_EQ(b.dp_comm_s, 500e-9);
  EXPECT_DOUBLE_EQ(b.optimizer_s, 100e-9);
}

TEST(TimelineAnalysis, WaitingForAnotherStageToJoinACollectiveIsBubble) {
  // The tied embedding's sync: stage 0's backward ends at 1000 ns and its gradient bucket at
  // 1500 ns; stage 1 is done at 3000 ns. Their all-reduce (200 ns) starts when both are, then
  // stage 0 runs its optimizer and ends last. Its bucket's tail is DP time; the rest of the
  // wait is for stage 1.
  ExecGraph g;
  const TaskId early = add(g, 0, 0, 1000, Category::kCompute);
  const TaskId bucket = add(g, 0, 2, 0, Category::kDataParallel, TaskKind::kCollective);
  const TaskId sync0 = add(g, 0, 0, 0, Category::kDataParallel, TaskKind::kCollective);
  const TaskId opt = add(g, 0, 0, 100, Category::kOptimizer);
  const TaskId late = add(g, 1, 0, 3000, Category::kCompute);
  const TaskId sync1 = add(g, 1, 0, 0, Category::kDataParallel, TaskKind::kCollective);
  g.add_edge(early, bucket);
  g.add_edge(bucket, sync0);
  g.add_edge(sync0, opt);
  g.add_edge(late, sync1);
  g.add_collective({bucket}, 500);
  g.add_collective({sync0, sync1}, 200);
  g.finalize();
  const sim::Timeline t = sim::run(g);
  ASSERT_EQ(t.makespan_ns, 3000 + 200 + 100);
  const analytic::Breakdown b = breakdown(g, t);
  EXPECT_DOUBLE_EQ(b.compute_s, 1000e-9);
  EXPECT_DOUBLE_EQ(b.dp_comm_s, (500 + 200) * 1e-9);
  EXPECT_DOUBLE_EQ(b.bubble_s, 1500e-9);
  EXPECT_DOUBLE_EQ(b.optimizer_s, 100e-9);
}

TEST(TimelineAnalysis, TimeAKernelLosesToACollectiveHoldingSmsCountsAsThatCollective) {
  // A 1,000 ns kernel takes 2,000 beside a ZeRO-3 gather of 2,000 ns on the prefetch stream.
  ExecGraph g;
  Task kernel;
  kernel.duration_ns = 1000;
  kernel.beside_collective_slowdown = 2;
  const TaskId k = g.add_task(kernel, "fwd");
  const TaskId gather = add(g, 0, 3, 2000, Category::kShardedData, TaskKind::kCollective);
  g.mutable_task(gather).holds_sms = true;
  g.add_collective({gather}, 2000);
  g.finalize();
  const sim::Timeline t = sim::run(g);
  ASSERT_EQ(t.spans[k].end_ns, 2000);
  const analytic::Breakdown b = breakdown(g, t);
  EXPECT_DOUBLE_EQ(b.compute_s, 1000e-9);
  EXPECT_DOUBLE_EQ(b.fsdp_comm_s, 1000e-9);
}

TEST(TimelineAnalysis, TheSlowdownGoesToTheHolderOverlappingTheKernelLongestOnAnyStream) {
  // A 1,000 ns kernel at half speed beside a 400 ns ZeRO-3 gather (prefetch stream) and a 3,000 ns
  // gradient reduction (gradient stream): it takes 2,000 ns, all of them beside the reduction, so
  // its lost 1,000 ns are the reduction's, as are the 1,000 ns the step then waits for it to end.
  ExecGraph g;
  Task kernel;
  kernel.duration_ns = 1000;
  kernel.beside_collective_slowdown = 2;
  kernel.beside_two_collectives_slowdown = 2;
  const TaskId k = g.add_task(kernel, "fwd");
  const TaskId gather = add(g, 0, 3, 400, Category::kShardedData, TaskKind::kCollective);
  const TaskId reduce = add(g, 0, 2, 3000, Category::kDataParallel, TaskKind::kCollective);
  for (const TaskId h : {gather, reduce}) {
    g.mutable_task(h).holds_sms = true;
    g.add_collective({h}, g.task(h).duration_ns);
  }
  g.finalize();
  const sim::Timeline t = sim::run(g);
  ASSERT_EQ(t.spans[k].end_ns, 2000);
  const analytic::Breakdown b = breakdown(g, t);
  EXPECT_DOUBLE_EQ(b.compute_s, 1000e-9);
  EXPECT_DOUBLE_EQ(b.dp_comm_s, 2000e-9);
  EXPECT_DOUBLE_EQ(b.fsdp_comm_s, 0);
}

TEST(TimelineAnalysis, CriticalPathFollowsTheDependencyThatReleasedEachTask) {
  TwoStages s;
  const CriticalPath p = critical_path(s.g, sim::run(s.g));
  EXPECT_EQ(p.tasks, (std::vector<TaskId>{s.f0, s.recv, s.f1, s.bucket, s.opt}));
  EXPECT_DOUBLE_EQ(p.length_s, 3900e-9);
  EXPECT_DOUBLE_EQ(p.wait_s, 0);
  EXPECT_DOUBLE_EQ(p.seconds[static_cast<int>(Category::kCompute)], 3000e-9);
  EXPECT_DOUBLE_EQ(p.seconds[static_cast<int>(Category::kPipeline)], 300e-9);
  ASSERT_EQ(p.heaviest.size(), 1u);  // every task here is named "t"
  EXPECT_EQ(p.heaviest[0].name, "t");
  EXPECT_EQ(p.heaviest[0].tasks, 5);
  EXPECT_DOUBLE_EQ(p.heaviest[0].seconds, 3900e-9);
}

TEST(TimelineAnalysis, StreamUseIsBusyTimeOverTheMakespan) {
  TwoStages s;
  const std::vector<StreamUse> use = stream_use(s.g, sim::run(s.g));
  ASSERT_EQ(use.size(), 5u);  // (0,0) (0,4) (1,0) (1,2) (1,5)
  EXPECT_EQ(use[0].rank, 0u);
  EXPECT_EQ(use[0].stream, 0);
  EXPECT_DOUBLE_EQ(use[0].utilisation, 1000.0 / 3900);
  EXPECT_DOUBLE_EQ(use[2].busy_s, 2100e-9);
  const std::vector<StreamMean> mean = mean_stream_use(use);
  ASSERT_EQ(mean.size(), 4u);  // streams 0, 2, 4, 5
  EXPECT_EQ(mean[0].stream, 0);
  EXPECT_DOUBLE_EQ(mean[0].utilisation, (1000.0 + 2100.0) / 3900 / 2);
}

TEST(TimelineAnalysis, MemoryOverTimeSamplesEachRankWhereItChanges) {
  TwoStages s;
  const std::vector<MemorySample> m = memory_over_time(s.g, sim::run(s.g));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].rank, 0u);
  EXPECT_EQ(m[0].time_ns, 1000);
  EXPECT_EQ(m[0].bytes, 64);
  EXPECT_EQ(m[1].time_ns, 3300);
  EXPECT_EQ(m[1].bytes, 100);
  EXPECT_EQ(m[2].time_ns, 3900);
  EXPECT_EQ(m[2].bytes, 0);
}

TEST(TimelineAnalysis, MemoryChangesAtOneInstantMergeIntoOneSample) {
  ExecGraph g;
  add(g, 0, 0, 100, Category::kCompute, TaskKind::kCompute, 50);
  add(g, 0, 1, 100, Category::kCompute, TaskKind::kCompute, -50);
  add(g, 0, 2, 100, Category::kCompute, TaskKind::kCompute, 30);
  g.finalize();
  const std::vector<MemorySample> m = memory_over_time(g, sim::run(g));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].bytes, 30);
  EXPECT_EQ(peak_memory(g, sim::run(g)), std::vector<double>{30});
}

TEST(TimelineAnalysis, PeakMemoryIsTheHighestLiveSumPerRank) {
  TwoStages s;
  const std::vector<double> peak = peak_memory(s.g, sim::run(s.g));
  EXPECT_EQ(peak, (std::vector<double>{64, 100}));
}

}  // namespace
}  // namespace stepcast::analysis
