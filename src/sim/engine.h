// sim::Engine: dependency-driven discrete-event simulation of an ExecGraph.
//
//   sim::Timeline t = sim::run(graph);   // graph finalized
//   t.makespan_ns;  t.spans[id].start_ns
//
// Semantics (as in ns-3's simulator.h, stated so results are reproducible):
//  - Time is an int64 count of nanoseconds from 0.
//  - Each (rank, stream) runs its tasks one at a time in the order they were added.
//  - A task is ready when every predecessor has ended and the previous task of its stream has
//    ended; a non-collective task starts as soon as it is ready and lasts duration_ns.
//  - A collective (and a send/recv pair) starts when every member is ready, at the latest of their
//    ready times, and all members end together after the collective's duration_ns.
//  - Equal-time events run FIFO in the order they were scheduled (a sequence number breaks ties).
//  - Cost: O((tasks + edges) log tasks) time, O(tasks) memory; no allocation per event beyond the
//    event heap.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"

namespace stepcast::sim {

using Time = std::int64_t;

struct Span {
  Time start_ns = 0;
  Time end_ns = 0;
};

struct Timeline {
  std::vector<Span> spans;  // indexed by TaskId
  Time makespan_ns = 0;
};

/// Simulates `g`. REQUIRES: g.finalize() succeeded. Throws Error(kInvalidInput) naming a stuck
/// task and its stream when tasks can never start: ranks that enter collectives in different
/// orders on one stream deadlock, which finalize() cannot see.
Timeline run(const graph::ExecGraph& g);

}  // namespace stepcast::sim
