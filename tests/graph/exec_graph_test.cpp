#include "graph/exec_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace stepcast::graph {
namespace {

Task compute(std::uint32_t rank, std::int64_t duration_ns, std::uint16_t stream = 0) {
  return {.kind = TaskKind::kCompute, .rank = rank, .stream = stream, .duration_ns = duration_ns};
}

Task of_kind(TaskKind kind, std::uint32_t rank) {
  return {.kind = kind, .rank = rank, .stream = 1, .duration_ns = 0};
}

std::vector<TaskId> ids(std::span<const TaskId> span) { return {span.begin(), span.end()}; }

// Runs finalize() and returns the message of the Error it throws, so each test can compare the
// whole text: users read these messages to find the task to fix.
std::string finalize_error(ExecGraph& g) {
  try {
    g.finalize();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  ADD_FAILURE() << "finalize() accepted the graph";
  return {};
}

TEST(ExecGraph, CsrListsSortedSuccessorsAndPredecessors) {
  ExecGraph g;
  for (int i = 0; i < 5; ++i) g.add_task(compute(0, 10), "t");
  // Added out of order on purpose: finalize() must still sort every neighbour list.
  g.add_edge(0, 4);
  g.add_edge(3, 1);
  g.add_edge(0, 2);
  g.add_edge(2, 4);
  g.add_edge(0, 1);
  g.finalize();
  EXPECT_EQ(ids(g.successors(0)), (std::vector<TaskId>{1, 2, 4}));
  EXPECT_EQ(ids(g.successors(1)), (std::vector<TaskId>{}));
  EXPECT_EQ(ids(g.successors(2)), (std::vector<TaskId>{4}));
  EXPECT_EQ(ids(g.successors(3)), (std::vector<TaskId>{1}));
  EXPECT_EQ(ids(g.predecessors(1)), (std::vector<TaskId>{0, 3}));
  EXPECT_EQ(ids(g.predecessors(4)), (std::vector<TaskId>{0, 2}));
  EXPECT_EQ(ids(g.predecessors(0)), (std::vector<TaskId>{}));
  EXPECT_EQ(g.ranks(), 1u);
}

TEST(ExecGraph, ReservingRoomChangesNoIdsNamesOrEdges) {
  ExecGraph g;
  const TaskId a = g.add_task(compute(0, 10), "mlp_up.fwd");
  g.reserve(1000, 1000);
  const TaskId b = g.add_task(compute(0, 10), "mlp_up.fwd");
  const TaskId c = g.add_task(compute(0, 10), "mlp_down.fwd");
  g.add_edge(a, c);
  g.add_edge(b, c);
  EXPECT_EQ(g.edges_added(), 2u);
  g.reserve(1, 1);  // never shrinks
  g.finalize();
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g.name(b), "mlp_up.fwd");
  EXPECT_EQ(g.name(c), "mlp_down.fwd");
  EXPECT_EQ(ids(g.predecessors(c)), (std::vector<TaskId>{a, b}));
}

TEST(ExecGraph, DumpIsCanonicalText) {
  ExecGraph g;
  TaskId f0 = g.add_task(compute(0, 1500), "fwd");
  TaskId f1 = g.add_task(compute(1, 1500), "fwd");
  TaskId a0 = g.add_task(of_kind(TaskKind::kCollective, 0), "ar");
  TaskId a1 = g.add_task(of_kind(TaskKind::kCollective, 1), "ar");
  TaskId o0 = g.add_task({.kind = TaskKind::kHost, .rank = 0, .duration_ns = 7}, "opt");
  g.add_edge(f0, o0);
  g.add_edge(f0, a0);
  g.add_edge(f1, a1);
  EXPECT_EQ(g.add_collective({a0, a1}, 4200), 0u);
  g.finalize();
  EXPECT_EQ(g.ranks(), 2u);
  EXPECT_EQ(g.task(a1).collective, 0u);
  EXPECT_EQ(g.dump(),
            "t0 fwd rank=0 stream=0 kind=compute dur=1500 -> t2,t4\n"
            "t1 fwd rank=1 stream=0 kind=compute dur=1500 -> t3\n"
            "t2 ar rank=0 stream=1 kind=collective dur=0\n"
            "t3 ar rank=1 stream=1 kind=collective dur=0\n"
            "t4 opt rank=0 stream=0 kind=host dur=7\n"
            "c0 dur=4200 members=t2,t3\n");
}

TEST(ExecGraph, CycleErrorNamesTasksInOrder) {
  ExecGraph g;
  TaskId f = g.add_task(compute(0, 1500), "fwd");
  TaskId b = g.add_task(compute(0, 3000), "bwd");
  g.add_edge(f, b);
  g.add_edge(b, f);
  EXPECT_EQ(finalize_error(g),
            "cycle in the execution graph: fwd (task 0, rank 0) -> bwd (task 1, rank 0) -> "
            "fwd (task 0, rank 0)");
}

TEST(ExecGraph, CycleErrorSkipsTasksOnlyDownstreamOfTheCycle) {
  ExecGraph g;
  g.add_task(compute(0, 1), "load");
  g.add_task(compute(0, 1), "after");  // behind the cycle but not on it
  g.add_task(compute(1, 1), "a");
  g.add_task(compute(2, 1), "b");
  g.add_task(compute(3, 1), "c");
  g.add_edge(0, 2);
  g.add_edge(4, 1);
  g.add_edge(2, 3);
  g.add_edge(3, 4);
  g.add_edge(4, 2);
  EXPECT_EQ(finalize_error(g),
            "cycle in the execution graph: a (task 2, rank 1) -> b (task 3, rank 2) -> "
            "c (task 4, rank 3) -> a (task 2, rank 1)");
}

TEST(ExecGraph, SelfEdgeIsACycle) {
  ExecGraph g;
  g.add_task(compute(0, 1), "spin");
  g.add_edge(0, 0);
  EXPECT_EQ(finalize_error(g),
            "cycle in the execution graph: spin (task 0, rank 0) -> spin (task 0, rank 0)");
}

TEST(ExecGraph, CollectiveTaskInNoCollectiveIsNamed) {
  ExecGraph g;
  g.add_task(compute(0, 1), "fwd");
  g.add_task(of_kind(TaskKind::kCollective, 1), "ar.l3");
  EXPECT_EQ(finalize_error(g),
            "task \"ar.l3\" (task 1, rank 1) is a collective task in no collective");
}

TEST(ExecGraph, TwoMembersOnOneRankAreNamed) {
  ExecGraph g;
  g.add_task(of_kind(TaskKind::kCollective, 0), "ar");
  g.add_task(of_kind(TaskKind::kCollective, 3), "ar");
  g.add_task(of_kind(TaskKind::kCollective, 3), "ar");
  g.add_collective({0, 1, 2}, 100);
  EXPECT_EQ(finalize_error(g),
            "collective 0 has two members on rank 3: \"ar\" (task 1) and "
            "\"ar\" (task 2)");
}

TEST(ExecGraph, RepeatedMemberIsNamed) {
  ExecGraph g;
  g.add_task(of_kind(TaskKind::kCollective, 0), "ar");
  g.add_task(of_kind(TaskKind::kCollective, 1), "ar");
  g.add_collective({0, 1, 0}, 100);
  EXPECT_EQ(finalize_error(g), "collective 0 lists task \"ar\" (task 0, rank 0) twice");
}

TEST(ExecGraph, NonCollectiveMemberIsNamed) {
  ExecGraph g;
  g.add_task(of_kind(TaskKind::kCollective, 0), "ar");
  g.add_task(compute(1, 5), "fwd");
  g.add_collective({0, 1}, 100);
  EXPECT_EQ(finalize_error(g),
            "collective 0 has a member that is not a collective task: "
            "task \"fwd\" (task 1, rank 1) is a compute task");
}

TEST(ExecGraph, TaskInTwoCollectivesIsNamed) {
  ExecGraph g;
  g.add_task(of_kind(TaskKind::kCollective, 0), "ar");
  g.add_task(of_kind(TaskKind::kCollective, 1), "ar");
  g.add_task(of_kind(TaskKind::kCollective, 2), "ag");
  g.add_collective({0, 1}, 100);
  g.add_collective({1, 2}, 100);
  EXPECT_EQ(finalize_error(g), "task \"ar\" (task 1, rank 1) is in two collectives: 0 and 1");
}

TEST(ExecGraph, SendRecvPairIsAccepted) {
  ExecGraph g;
  TaskId f = g.add_task(compute(0, 1500), "fwd.s0");
  TaskId s = g.add_task(of_kind(TaskKind::kSend, 0), "send.act");
  TaskId r = g.add_task(of_kind(TaskKind::kRecv, 1), "recv.act");
  TaskId n = g.add_task(compute(1, 1500), "fwd.s1");
  g.add_edge(f, s);
  g.add_edge(r, n);
  EXPECT_EQ(g.add_collective({s, r}, 800), 0u);
  g.finalize();
  EXPECT_EQ(g.task(s).collective, 0u);
  EXPECT_EQ(g.task(r).collective, 0u);
  EXPECT_EQ(ids(g.successors(r)), (std::vector<TaskId>{n}));
}

TEST(ExecGraph, TwoSendsAreNotAPair) {
  ExecGraph g;
  g.add_task(of_kind(TaskKind::kSend, 0), "send.a");
  g.add_task(of_kind(TaskKind::kSend, 1), "send.b");
  g.add_collective({0, 1}, 800);
  EXPECT_EQ(finalize_error(g),
            "collective 0 has send or recv members, so it must be exactly one send and one recv; "
            "got send \"send.a\" (task 0, rank 0), send \"send.b\" (task 1, rank 1)");
}

TEST(ExecGraph, EdgeAfterFinalizeIsABug) {
  ExecGraph g;
  g.add_task(compute(0, 1), "a");
  g.add_task(compute(0, 1), "b");
  g.finalize();
  try {
    g.add_edge(0, 1);
    FAIL() << "add_edge after finalize() was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

TEST(ExecGraph, EdgeToUnknownTaskIsABug) {
  ExecGraph g;
  g.add_task(compute(0, 1), "a");
  try {
    g.add_edge(0, 1);
    FAIL() << "add_edge to an unknown task was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

TEST(ExecGraph, MillionTaskChainFinalizes) {
  constexpr TaskId kTasks = 1'000'000;
  ExecGraph g;
  for (TaskId i = 0; i < kTasks; ++i) {
    g.add_task(compute(i % 8, 1), "step");
    if (i > 0) g.add_edge(i - 1, i);
  }
  g.finalize();
  EXPECT_EQ(g.size(), kTasks);
  EXPECT_EQ(g.ranks(), 8u);
  EXPECT_EQ(ids(g.successors(0)), (std::vector<TaskId>{1}));
  EXPECT_EQ(ids(g.predecessors(kTasks - 1)), (std::vector<TaskId>{kTasks - 2}));
  EXPECT_TRUE(g.successors(kTasks - 1).empty());
}

}  // namespace
}  // namespace stepcast::graph
