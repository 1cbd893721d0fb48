// Closed-form training-step estimate: for a validated Scenario, the step time, throughput, MFU/HFU,
// memory and where the time goes. Allocation-free and never throws: strategy search calls it
// millions of times per second.
//
//   spec::Scenario s = spec::complete_and_validate(raw);
//   analytic::Estimate e = analytic::estimate(s);
//   fmt::print("{:.2f} s/step, MFU {:.1%}\n", e.step_time_s, e.mfu);
//
// The model (docs/model.md): per micro-batch, each pipeline stage runs its layers' operators
// (cost/compute.h) forward and backward (+ recomputation), with TP/SP collectives on the critical
// path, CP ring exchange and EP all-to-all hidden behind compute where they can be; the pipeline
// adds its schedule's bubble; the data-parallel gradient reduction overlaps the last backward in
// per-layer buckets so only the tail is exposed; ZeRO-3/FSDP gathers overlap layer by layer.
#pragma once

#include "spec/scenario.h"
#include "workload/memory.h"

namespace stepcast::analytic {

/// Seconds per category; they add up to the step time.
struct Breakdown {
  double compute_s = 0;    // kernels of all micro-batches on the slowest stage (incl. recompute)
  double tp_comm_s = 0;    // exposed tensor/sequence-parallel collectives
  double cp_comm_s = 0;    // exposed context-parallel KV exchange
  double ep_comm_s = 0;    // exposed expert-parallel all-to-all
  double pp_comm_s = 0;    // pipeline send/receive on the critical path
  double fsdp_comm_s = 0;  // exposed ZeRO-3/FSDP parameter gathers and gradient scatters
  double bubble_s = 0;     // pipeline fill and drain
  double dp_comm_s = 0;    // exposed gradient reduction: data-parallel (+ ZeRO-1/2 gathers) and
                           // the tied embedding's between the first and last stages
  double optimizer_s = 0;  // optimizer step
  double host_s = 0;       // GPU idle while the host launches kernels (passes the host paces)
  double other_s = 0;      // not modelled: data loading, logging (0)
};

struct Estimate {
  double step_time_s = 0;
  double tokens_per_s = 0;          // whole job
  double tflops_per_gpu = 0;        // model FLOPs (MFU convention) per second per GPU, in TFLOP/s
  double mfu = 0;                   // model FLOPs / (GPUs * dense BF16 peak)
  double hfu = 0;                   // hardware FLOPs (incl. recompute) / (GPUs * dense BF16 peak)
  double megatron_tflops_per_gpu = 0;  // Narayanan et al. SC'21 Eq. 3 convention
  Breakdown breakdown;
  workload::MemoryBreakdown memory;
};

/// REQUIRES: s passed spec::complete_and_validate.
Estimate estimate(const spec::Scenario& s);

/// Fills tokens_per_s, tflops_per_gpu, mfu, hfu and megatron_tflops_per_gpu from
/// out.step_time_s under the conventions above; every engine reports its metrics through it.
/// `params` is workload::param_counts(s.model), which the engines have at hand.
/// REQUIRES: out.step_time_s > 0.
void set_rates(const spec::Scenario& s, const workload::ParamCounts& params, Estimate& out);

/// Throws Error (invalid input) when e's step time is not a finite number or longer than 10^9 s
/// (31.7 years, the simulator's bound): an input far out of range (a launch of 1e300 us, a link of
/// 1e-300 GB/s) made it so, and no number would be honest.
void require_finite(const Estimate& e);

}  // namespace stepcast::analytic
