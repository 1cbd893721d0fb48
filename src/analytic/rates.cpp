// The metrics every engine reports from its step time (set_rates), and the check that the step
// time is a number worth reporting (require_finite); declared in analytic/estimate.h.
#include <fmt/format.h>

#include <cmath>

#include "analytic/estimate.h"
#include "analytic/layer_passes.h"
#include "core/error.h"
#include "workload/model_size.h"
#include "workload/operators.h"

namespace stepcast::analytic {

using spec::Recompute;
using workload::OpKind;

void require_finite(const Estimate& e) {
  // The simulator's bound too (workload::StepBudget): its nanosecond clock holds no longer step.
  constexpr double kMaxStepS = 1e9;
  if (std::isfinite(e.step_time_s) && e.step_time_s <= kMaxStepS) return;
  throw Error(ErrorKind::kInvalidInput,
              std::isfinite(e.step_time_s)
                  ? fmt::format("the step takes {:.3g} s, more than {:.0f} years: an input is far out of range",
                                e.step_time_s, kMaxStepS / 3.15576e7)
                  : "the step time is not a finite number: an input is far out of range",
              "check the times, bandwidths and rates of the model, GPU and cluster files and --host-dispatch");
}

void set_rates(const spec::Scenario& s, const workload::ParamCounts& params, Estimate& out) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  const double tokens = static_cast<double>(st.global_batch) * st.seq_len;
  out.tokens_per_s = tokens / out.step_time_s;
  const double model_flops = workload::model_flops_per_token(params, m, st.seq_len) * tokens;
  // Recomputation re-runs the forward: a third of the layers' model FLOPs (full) or of the
  // attention term (selective).
  double recompute_flops = 0;
  switch (st.recompute) {
    case Recompute::kNone: break;
    case Recompute::kFull: {
      const double layer_flops = model_flops - 6.0 * m.vocab * m.hidden * tokens;
      recompute_flops = layer_flops / 3 * full_recompute_fraction(st);
      break;
    }
    case Recompute::kSelective:
      recompute_flops = workload::attention_flops_per_token(m, st.seq_len) * tokens / 3;
      break;
    case Recompute::kOp: {
      // The recomputed GEMM shares of a dense layer for one micro-batch on one GPU, times the
      // GPUs that split it (tp x cp), the micro-batches of the step and the layers.
      double per_layer = 0;
      for (const workload::Op& op : workload::layer_ops(s, false)) {
        if (op.kind == OpKind::kGemm) per_layer += op.flops * workload::recompute_share(op, st.recompute);
      }
      recompute_flops = per_layer * st.tp * st.cp * (static_cast<double>(st.global_batch) / st.micro_batch) * m.layers;
      break;
    }
  }
  const double denominator = out.step_time_s * s.gpus;
  const double peak = s.cluster.gpu.peak_bf16_flops;
  out.tflops_per_gpu = model_flops / denominator / 1e12;
  out.mfu = model_flops / denominator / peak;
  out.hfu = (model_flops + recompute_flops) / denominator / peak;
  out.megatron_tflops_per_gpu = workload::megatron_eq3_flops(m, st.global_batch, st.seq_len) / denominator / 1e12;
}

}  // namespace stepcast::analytic
