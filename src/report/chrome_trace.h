// Chrome trace export: writes a simulated timeline in the Chrome Trace Event Format, the JSON that
// chrome://tracing and Perfetto (ui.perfetto.dev) open directly.
//
//   graph::ExecGraph g = ...;  g.finalize();
//   sim::Timeline t = sim::run(g);
//   std::ofstream out("step.trace.json");
//   report::write_chrome_trace(g, t, out);  // then open step.trace.json in ui.perfetto.dev
//
// Output, the JSON object form: {"displayTimeUnit":"ns","traceEvents":[...]} holding, in order:
//  - metadata ("ph":"M"): "process_name" {"name":"rank N"} once per rank that has tasks, and
//    "thread_name" {"name":"stream S"} once per (rank, stream) that has tasks; pid = rank,
//    tid = stream throughout;
//  - one complete event ("ph":"X") per task, in TaskId order: "name" = task name, "cat" = kind
//    (compute, collective, send, recv, memcpy, host, wait), "ts"/"dur" in microseconds written
//    exactly as ns/1000 with 3 decimals, "args": {"task": id, and "layer", "micro_batch" when
//    >= 0, "bytes", "flops" when finite and > 0, "collective": index when in one};
//  - with `memory` given, one counter event ("ph":"C", "name":"live memory", "args":{"GiB":x})
//    per sample on its rank's pid, which Perfetto draws as a memory track per rank;
//  - one flow pair per graph edge whose ends sit on different (rank, stream): "ph":"s" at the
//    source's end on the source's pid/tid and "ph":"f" at the destination's start on its pid/tid,
//    both "bp":"e", "cat":"dependency", "name":"dep", and an "id" unique to the edge. Edges within
//    one stream draw no arrow: stream order already shows them.
//
// Names are escaped (quote, backslash, control characters); other bytes are copied, so names are
// expected to be UTF-8. The trace is streamed through a small buffer, never built as a document:
// memory stays O(ranks x streams) beyond the inputs and time O(tasks + edges).
#pragma once

#include <ostream>
#include <span>

#include "analysis/timeline_analysis.h"
#include "graph/exec_graph.h"
#include "sim/engine.h"

namespace stepcast::report {

/// Writes `g` as simulated in `t` to `out` (format above). REQUIRES: g.finalize() was called.
/// Throws Error(kInvalidInput) when t.spans does not hold one span per task, and Error(kIo) when
/// `out` fails while writing.
void write_chrome_trace(const graph::ExecGraph& g, const sim::Timeline& t, std::ostream& out,
                        std::span<const analysis::MemorySample> memory = {});

}  // namespace stepcast::report
