// The ExecGraph of one optimizer step for a Scenario: every operator of every micro-batch on each
// pipeline stage, in the order of the strategy's schedule, with the step's communication.
//
//   graph::ExecGraph g = workload::build(scenario);   // finalized
//   sim::Timeline t = sim::run(g);
//
// Symmetry: the ranks of one TP, CP, EP or DP group do the same work at the same time, so the
// graph holds one representative rank per pipeline stage (rank = stage) and prices each group
// collective for the whole group's placement on the topology (cost/collective.h). Its size grows
// with pipeline depth, layers and micro-batches, never with the GPU count.
//
// What is in it (durations from workload/step_costs.h, so both engines price alike):
//  - forward, backward (ZB-H1: input and weight gradient apart) and recomputed forward of every
//    operator (workload/operators.h); the embedding on the first model chunk, the head on the last;
//  - TP/SP collectives at each block edge on the compute stream, or beside the adjacent GEMM on
//    the overlap stream with async TP; EP all-to-alls on the compute stream; the CP ring beside
//    core attention on the overlap stream, or all-gather CP's K and V gathers and dK, dV
//    reduce-scatters around it on the compute stream, or the gathered ring's K and V gather beside
//    its first 1/cp and dK, dV passes beside the rest (spec::CpExchange, CpAroundAttention);
//  - PP sends and receives of activations and their gradients as send/recv pairs; a send blocks
//    the sender's next kernel until the transfer is done (Megatron); GPipe and 1F1B post each
//    receive where the schedule calls it, so a send also waits for its receiver to get there,
//    while interleaved and ZB-H1 post receives ahead;
//  - DP gradient reduction in one bucket per layer, launched after the layer's last backward, on
//    the gradient stream (one reduction after the backward when the strategy does not overlap);
//    ZeRO-1/2 parameter gathers ahead of each layer's first forward; ZeRO-3/FSDP gathers one
//    layer ahead and a reduce-scatter per layer and micro-batch;
//  - the optimizer step once the stage's gradients are reduced;
//  - links: every transfer names the link of its rank at the topology level its group spans, so
//    transfers of one rank on one level (a DP bucket and a PP send on the NIC) share bandwidth
//    once the engine shares links;
//  - memory: each forward pass leaves its layers' activations allocated (Task::memory_delta)
//    until the matching backward (ZB-H1: weight gradient) frees them.
// Layers split over the pp * vp model chunks as evenly as possible; the spare layers go to the
// middle chunks first, which carry neither the embedding nor the head (as Llama 3 did).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"
#include "spec/scenario.h"

namespace stepcast::workload {

/// Streams of every rank.
enum Stream : std::uint16_t {
  kComputeStream = 0,
  kOverlapStream = 1,   // async-TP collectives and the CP ring, beside the kernels they overlap
  kGradientStream = 2,  // DP gradient buckets, ZeRO-3 reduce-scatters
  kPrefetchStream = 3,  // ZeRO parameter gathers
  kSendNextStream = 4,  // activations to the next stage
  kRecvPrevStream = 5,
  kSendPrevStream = 6,  // activation gradients to the previous stage
  kRecvNextStream = 7,
  kHostStream = 8,      // the CPU thread launching the kernels of the compute stream
};

/// The most tasks build() makes by default. A step this large builds in some 2.4 s with a peak of
/// 1.7 GB (while finalize() lays out its edges) and simulates in 2.0 GB (16.7 M tasks, measured
/// on one core). The flagship example, Llama 3.1 405B on 16,384 GPUs, needs 123,470.
inline constexpr std::size_t kDefaultMaxTasks = std::size_t{1} << 24;

/// REQUIRES: s passed spec::complete_and_validate. Returns a finalized graph. Throws
/// Error(kUnsupported) naming the micro-batches, layers and stages when the step needs more than
/// `max_tasks` tasks, before it has used more memory than those take; where its layer passes are
/// many, at once, from builds of two and three micro-batches.
graph::ExecGraph build(const spec::Scenario& s, std::size_t max_tasks = kDefaultMaxTasks);

}  // namespace stepcast::workload
