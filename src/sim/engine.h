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
//
// Link bandwidth sharing (graph::Task::link):
//  - A transfer is a task whose link is not graph::kNoLink, or a collective (or send/recv pair)
//    any of whose members names a link. Only the link field decides, not the task's kind. Its
//    duration_ns (for a collective, the Collective's) is its time with its links to itself.
//    Tasks without a link behave exactly as above and never share; so do zero-length transfers,
//    which move nothing.
//  - Links are full duplex: a link is one direction of a port, and a task uses its port's
//    outbound direction, its inbound one or both (graph::link; a value whose two low bits name
//    no single direction uses both). A send and a receive on one port do not slow each other.
//  - Sharing is fluid and fair: while n transfers are active on a link, each progresses at 1/n of
//    full speed. A collective counts as one transfer on each distinct link its members use
//    (members on the same link count once) and progresses at the lowest of its shares. When a
//    transfer starts or ends, the other transfers on its links are re-rated from that instant.
//  - Remaining work is kept in fractional nanoseconds and an end time is rounded up to a whole
//    nanosecond, so a transfer never ends early (floating-point noise under 1e-6 ns is ignored,
//    so 199999.9999999 ns stays 200000).
//  - Cost: a transfer's start or end also costs O(transfers on its links x their link counts)
//    and one heap push per transfer whose share it changes; memory grows by O(links + transfers
//    active at once).
//
// SM sharing (graph::Task::holds_sms, beside_collective_slowdown, beside_two_collectives_slowdown):
//  - While one task that holds SMs runs on a rank (a collective member, or a transfer, from its
//    start to its end), every non-collective task of that rank with beside_collective_slowdown
//    > 1 progresses at 1 / beside_collective_slowdown of full speed; while two or more run, at
//    1 / beside_two_collectives_slowdown (never faster than beside one); otherwise at full speed.
//    The rate changes at the instant the count of holders moves among 0, 1 and 2 or more, with the
//    same fluid accounting and rounding as link sharing.
//  - Cost: each such change re-rates that rank's running kernels (a heap push each). A graph
//    with no holder runs a build of the engine without this rule.
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
/// orders on one stream deadlock, which finalize() cannot see. Throws Error(kUnsupported) when
/// the run would need more than 2^32 - 1 events, which only heavy link sharing can cause.
Timeline run(const graph::ExecGraph& g);

}  // namespace stepcast::sim
