// Where the tasks of a step's ExecGraph run (workload/build.cpp): the streams of its pipeline
// transfers, the link each transfer of a stage crosses, and the names of its ranks and streams.
#pragma once

#include <cstdint>

#include "graph/exec_graph.h"
#include "spec/scenario.h"
#include "workload/placement.h"

namespace stepcast::workload {

/// The stream of a transfer with the next stage (or the previous one). With deferred sends both
/// directions share one, as torch.distributed's send and recv between two ranks share their
/// communicator's NCCL stream.
std::uint16_t p2p_stream(const spec::Strategy& st, bool with_next, bool sending);

/// The port of stage `stage`'s rank at the topology level `group` spans.
std::uint32_t stage_port(const spec::Scenario& s, int stage, GroupShape group);

/// The link a task of `kind` and `category` on stage `stage` crosses, or graph::kNoLink.
/// Transfers of one rank that cross the same topology level share its port there, each
/// direction on its own (graph::link, sim/engine.h): a send goes out, a receive comes in, a
/// collective does both.
std::uint32_t task_link(const spec::Scenario& s, int stage, graph::Category category,
                        graph::TaskKind kind);

/// Names each stage's rank and each stream of `g`.
void name_lanes(graph::ExecGraph& g, const spec::Strategy& st);

}  // namespace stepcast::workload
