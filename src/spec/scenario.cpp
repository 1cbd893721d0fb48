#include "spec/scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"

namespace stepcast::spec {

// Enumerator names as the CLI spells them, indexed by the enumerator's value.
const char* name(MlpKind k) {
  constexpr const char* kNames[] = {"gelu", "swiglu", "geglu"};
  return kNames[static_cast<int>(k)];
}
const char* name(NormKind k) { return k == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"; }
const char* name(AttentionKernel k) {
  constexpr const char* kNames[] = {"flash", "cudnn", "flash-v1", "unfused"};
  return kNames[static_cast<int>(k)];
}
const char* name(Elementwise k) {
  constexpr const char* kNames[] = {"fused", "eager", "compiled"};
  return kNames[static_cast<int>(k)];
}
const char* name(OptimizerStep k) {
  constexpr const char* kNames[] = {"master-weights", "in-place", "in-place-loop"};
  return kNames[static_cast<int>(k)];
}
const char* name(PositionKind k) {
  constexpr const char* kNames[] = {"learned", "rope", "alibi", "none"};
  return kNames[static_cast<int>(k)];
}
const char* name(Schedule k) {
  constexpr const char* kNames[] = {"gpipe", "1f1b", "interleaved", "zb-h1"};
  return kNames[static_cast<int>(k)];
}
const char* name(Recompute k) {
  constexpr const char* kNames[] = {"none", "selective", "full", "op"};
  return kNames[static_cast<int>(k)];
}
const char* name(Dtype k) {
  constexpr const char* kNames[] = {"fp32", "bf16", "fp16", "fp8"};
  return kNames[static_cast<int>(k)];
}
const char* name(PipelineTransfers k) {
  constexpr const char* kNames[] = {"host-sync", "stream", "async"};
  return kNames[static_cast<int>(k)];
}
const char* name(CpExchange k) {
  constexpr const char* kNames[] = {"ring", "all-gather", "gathered-ring"};
  return kNames[static_cast<int>(k)];
}
const char* name(GradSync k) {
  constexpr const char* kNames[] = {"ready", "aligned", "after-backward"};
  return kNames[static_cast<int>(k)];
}
const char* name(ShardedCollectives k) {
  constexpr const char* kNames[] = {"layer", "tensor-blocking", "parameter", "flat-parameter"};
  return kNames[static_cast<int>(k)];
}
const char* name(GradAccumulation k) {
  constexpr const char* kNames[] = {"separate", "fused"};
  return kNames[static_cast<int>(k)];
}
const char* name(Axis k) {
  constexpr const char* kNames[] = {"tp", "cp", "ep", "dp", "pp"};
  return kNames[static_cast<int>(k)];
}
std::string name(const std::vector<Axis>& placement) {
  std::string text;
  for (const Axis a : placement) {
    if (!text.empty()) text += ',';
    text += name(a);
  }
  return text;
}

namespace {

std::string str(std::int64_t n) { return std::to_string(n); }

std::string joined(const std::vector<int>& values) {
  std::string out;
  for (const int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// Divisors of n in increasing order that are <= limit and satisfy keep.
template <typename Keep>
std::vector<int> divisors(int n, int limit, Keep keep) {
  std::vector<int> out;
  for (int d = 1; d <= n && d <= limit; ++d) {
    if (n % d == 0 && keep(d)) out.push_back(d);
  }
  return out;
}

// The multiples of `step` on either side of `value` that a count can take (1 to INT_MAX), for
// "nearest valid" hints.
std::string nearest_multiples(std::int64_t value, std::int64_t step) {
  const std::int64_t lower = value / step * step;
  std::string out;
  for (const std::int64_t m : {lower, lower + step}) {
    if (m > 0 && m <= std::numeric_limits<int>::max()) out += (out.empty() ? "" : ", ") + str(m);
  }
  return out.empty() ? "none up to " + str(std::numeric_limits<int>::max()) : out;
}

class Checker {
 public:
  explicit Checker(Scenario& sc) : sc_(sc), st_(sc.strategy), m_(sc.model) {}

  struct Problems {
    std::vector<std::string> messages;
    std::vector<std::string> settings;  // the options they concern, as scenario files name them
  };

  Problems run() {
    check_degrees();
    check_model();
    if (degrees_ok_) {
      derive_dp();
      derive_schedule();
      if (model_ok_) check_tensor_parallel();
      if (model_ok_) check_pipeline();
    }
    check_batch();
    check_sequence();
    if (degrees_ok_ && model_ok_) check_experts();  // lists the divisors of the experts: bounded first
    check_zero_and_cluster();
    check_precision();
    check_tp_backward_sms();
    return std::move(problems_);
  }

 private:
  void problem(std::string text, std::initializer_list<const char*> settings) {
    problems_.messages.push_back(std::move(text));
    concerns(settings);
  }

  void concerns(std::initializer_list<const char*> settings) {
    for (const char* setting : settings) {
      auto& all = problems_.settings;
      if (std::find(all.begin(), all.end(), setting) == all.end()) all.emplace_back(setting);
    }
  }

  // The last problem concerns dp: the options it was given or derived by.
  void concerns_dp() { dp_derived_ ? concerns({"gpus", "tp", "pp", "cp"}) : concerns({"dp"}); }

  void at_least_one(const char* name, const char* setting, int value) {
    if (value >= 1) return;
    problem(std::string(name) + " is " + str(value) + "; it must be at least 1", {setting});
    degrees_ok_ = false;
  }

  void check_degrees() {
    at_least_one("--gpus", "gpus", sc_.gpus);
    at_least_one("tp", "tp", st_.tp);
    at_least_one("pp", "pp", st_.pp);
    at_least_one("vp", "vp", st_.vp);
    at_least_one("cp", "cp", st_.cp);
    at_least_one("ep", "ep", st_.ep);
    at_least_one("micro batch", "micro-batch", st_.micro_batch);
    at_least_one("recompute interval", "recompute-every", st_.recompute_interval);
    if (st_.dp < 0) {
      problem("dp is " + str(st_.dp) + "; it must be at least 1, or 0 to derive it from --gpus", {"dp"});
      degrees_ok_ = false;
    }
  }

  // The model's own counts; a reader has checked them already, but a hand-built ModelSpec may
  // not have been, and every rule below divides by them.
  void check_model() {
    const std::pair<const char*, int> counts[] = {
        {"layers", m_.layers}, {"heads", m_.heads}, {"kv heads", m_.kv_heads}};
    for (const auto& [name, value] : counts) {
      if (value >= 1) continue;
      problem("the model has " + str(value) + " " + name + "; it needs at least 1", {"model"});
      model_ok_ = false;
    }
    for (const ModelLimitExceeded& over : model_limits_exceeded(m_)) {
      problem(over.message(), {"model"});
      model_ok_ = false;
    }
  }

  void derive_dp() {
    const std::string product =
        "tp " + str(st_.tp) + " x pp " + str(st_.pp) + " x cp " + str(st_.cp);
    const std::optional<std::int64_t> replica = replica_gpus(st_, sc_.gpus);
    if (!replica) {
      problem(product + " is more than --gpus " + str(sc_.gpus) +
                  "; one data-parallel replica needs tp x pp x cp GPUs",
              {"gpus", "tp", "pp", "cp"});
      return;
    }
    const std::int64_t model_parallel = *replica;
    const bool divides = sc_.gpus % model_parallel == 0;
    if (st_.dp == 0) {
      if (divides) {
        st_.dp = static_cast<int>(sc_.gpus / model_parallel);
        dp_derived_ = true;
      } else {
        problem(product + " = " + str(model_parallel) + " does not divide --gpus " + str(sc_.gpus) +
                    "; nearest --gpus that fit: " + nearest_multiples(sc_.gpus, model_parallel),
                {"gpus", "tp", "pp", "cp"});
      }
      return;
    }
    const std::int64_t total = model_parallel * st_.dp;
    if (total == sc_.gpus) return;
    problem(product + " x dp " + str(st_.dp) + " = " + str(total) + ", but --gpus is " +
            str(sc_.gpus) +
            (divides ? "; dp that fits: " + str(sc_.gpus / model_parallel)
                     : "; no dp fits, as tp x pp x cp = " + str(model_parallel) +
                           " does not divide " + str(sc_.gpus)),
            {"gpus", "tp", "pp", "cp", "dp"});
  }

  void derive_schedule() {
    if (st_.vp > 1) {
      if (st_.schedule == Schedule::kGpipe || st_.schedule == Schedule::kZeroBubbleH1) {
        const std::string schedule = name(st_.schedule);
        std::string message = "vp " + str(st_.vp);
        message += " needs the interleaved schedule, but the schedule is " + schedule;
        message += "; use vp 1 with " + schedule;
        problem(message, {"vp", "schedule"});
        return;
      }
      st_.schedule = Schedule::kInterleaved;
    }
    if (st_.deferred_sends && st_.schedule != Schedule::k1F1B) {
      problem(
          "deferred sends follow DeepSpeed's TrainSchedule, a 1f1b schedule, but the schedule is " +
              std::string(name(st_.schedule)) + "; use --schedule 1f1b with vp 1",
          {"deferred-sends", "schedule", "vp"});
    }
    if (st_.schedule != Schedule::kInterleaved) return;
    if (st_.pp == 1) {
      problem("the interleaved schedule needs pp > 1, but pp is 1; use pp >= 2, or vp 1",
              {"schedule", "pp", "vp"});
    }
    if (st_.vp == 1) {
      problem(
          "the interleaved schedule needs vp > 1 virtual stages per rank, but vp is 1; "
          "use vp >= 2, or the 1f1b schedule",
          {"schedule", "vp"});
    }
  }

  // Megatron splits attention heads, and key/value heads, evenly over the TP ranks.
  void check_tensor_parallel() {
    const int both = std::gcd(m_.heads, m_.kv_heads);
    const std::string valid =
        "; valid tp on this model: " + joined(divisors(both, sc_.gpus, [](int) { return true; }));
    if (m_.heads % st_.tp != 0) {
      problem("tp " + str(st_.tp) + " does not divide " + str(m_.heads) + " heads" + valid, {"tp", "model"});
    } else if (m_.kv_heads % st_.tp != 0) {
      // Reported only when the heads divide: the list above already accounts for kv heads.
      problem("tp " + str(st_.tp) + " does not divide " + str(m_.kv_heads) + " kv heads" + valid, {"tp", "model"});
    }
  }

  // Every virtual chunk of every stage needs at least one layer. Stages may be uneven (Llama 3
  // runs 126 layers on 16 stages by removing a layer from the first and the last); the cost model
  // assumes they are balanced.
  void check_pipeline() {
    const std::int64_t chunks = std::int64_t{st_.pp} * st_.vp;
    if (m_.layers >= chunks) return;
    problem("pp " + str(st_.pp) + " x vp " + str(st_.vp) + " = " + str(chunks) +
            " pipeline chunks, but the model has only " + str(m_.layers) +
                " layers; each chunk needs at least one",
            {"pp", "vp", "model"});
  }

  void check_batch() {
    const bool dp_known = degrees_ok_ && st_.dp >= 1;
    if (!dp_known) {
      if (st_.global_batch < 1) {
        problem("global batch is " + str(st_.global_batch) + "; it must be at least 1", {"global-batch"});
      }
      return;
    }
    const std::int64_t per_step = std::int64_t{st_.dp} * st_.micro_batch;
    const std::string unit =
        "dp " + str(st_.dp) + " x micro batch " + str(st_.micro_batch) + " = " + str(per_step);
    if (st_.global_batch < 1) {
      problem("global batch is " + str(st_.global_batch) + "; it must be a positive multiple of " + unit,
              {"global-batch"});
    } else if (st_.global_batch % per_step != 0) {
      problem("global batch " + str(st_.global_batch) + " is not a multiple of " + unit +
                  "; nearest valid global batches: " + nearest_multiples(st_.global_batch, per_step),
              {"global-batch", "global-batch-tokens", "micro-batch"});
      concerns_dp();
    } else if (const std::int64_t m = st_.global_batch / per_step;
               st_.schedule == Schedule::kInterleaved && m > st_.pp && m % st_.pp != 0) {
      // The interleaved schedule runs the micro-batches through the chunks in groups of pp.
      // Megatron-LM refuses a count that leaves a shorter last group ("number of microbatches is
      // not divisible by pipeline-model-parallel-size when using interleaved schedule";
      // Megatron-Core: the remainder over microbatch_group_size_per_vp_stage, pp by default,
      // must be 0): after full groups, a stage's warm-up forwards then include one that waits on
      // a backward that waits on it, and the schedule deadlocks. One group of fewer than pp is
      // all forwards, then all backwards, and runs.
      const std::int64_t group = per_step * st_.pp;
      problem("the interleaved schedule runs micro-batches in groups of pp " + str(st_.pp) + ", but " + str(m) +
                  " micro-batches (global batch " + str(st_.global_batch) + " / " + unit +
                  ") leave a last group of " + str(m % st_.pp) + "; nearest valid global batches: " +
                  nearest_multiples(st_.global_batch, group),
              {"global-batch", "global-batch-tokens", "micro-batch", "pp", "vp"});
      concerns_dp();
    }
  }

  void check_sequence() {
    if (st_.seq_len < 1) {
      problem("sequence length is " + str(st_.seq_len) + "; it must be at least 1", {"seq"});
      return;
    }
    check_positions();
    check_sequence_parallel();
    check_context_parallel();
    check_attention_kernel();
  }

  // A learned position embedding has one row per position it was trained for: a longer
  // sequence has no position to look up (RoPE and ALiBi extend, as long-context training does).
  void check_positions() {
    if (m_.position != PositionKind::kLearned || m_.max_seq <= 0 || st_.seq_len <= m_.max_seq) return;
    problem("sequence length " + str(st_.seq_len) + " is longer than the " + str(m_.max_seq) +
            " positions of " + m_.name + "'s learned position embedding; valid: at most " +
                str(m_.max_seq) + " (or a model file with a larger max_seq)",
            {"seq", "model"});
  }

  // Megatron's sequence parallelism splits each CP rank's sequence evenly over the TP ranks
  // (tensor_parallel/mappings.py asserts the first dimension divides by the TP size).
  void check_sequence_parallel() {
    // Async TP decomposes sequence parallelism's all-gather and reduce-scatter with the GEMMs
    // beside them (PyTorch's fused_all_gather_matmul and fused_matmul_reduce_scatter; Transformer
    // Engine's userbuffers, which Megatron-LM turns on only with --sequence-parallel). A block's
    // all-reduce waits for its whole GEMM and has nothing to hide behind.
    if (st_.overlap_tp_comm && st_.tp > 1 && !st_.sequence_parallel) {
      problem("async TP overlaps sequence parallelism's all-gathers and reduce-scatters with their GEMMs, "
              "but sequence parallelism is off; add --sp, or leave out --async-tp",
              {"async-tp", "sp"});
    }
    const std::int64_t slices = std::int64_t{st_.cp} * st_.tp;
    if (!st_.sequence_parallel || st_.tp <= 1 || st_.seq_len % slices == 0) return;
    problem("sequence length " + str(st_.seq_len) + " does not split into cp " + str(st_.cp) + " x tp " +
            str(st_.tp) + " = " + str(slices) + " slices for sequence parallelism; nearest valid " +
                "sequence lengths: " + nearest_multiples(st_.seq_len, slices),
            {"seq", "sp", "tp", "cp"});
  }

  // Ring attention with load balancing (Megatron context parallelism) cuts each sequence into
  // 2 * cp chunks and gives rank i chunks i and 2 * cp - 1 - i, so the causal work is even. Each
  // ring step folds one K/V block into an online softmax, as FlashAttention does; unfused
  // attention softmaxes whole score rows (Megatron-Core's unfused DotProductAttention asserts
  // context_parallel_size == 1).
  // cuDNN's attention is priced by the GPU file's own curve for it, measured on few GPUs.
  void check_attention_kernel() {
    const GpuSpec& gpu = sc_.cluster.gpu;
    if (st_.attention != AttentionKernel::kCudnn || gpu.cudnn_attention_efficiency > 0) return;
    problem("--attention cudnn needs the GPU's measured cuDNN attention rate, which " + gpu.name +
            " has not (cudnn_attention_efficiency in its GPU file; measured for h100-sxm); use --attention flash, or " +
                "add cudnn_attention_efficiency and cudnn_attention_half_keys to a GPU file",
            {"attention", "cluster"});
  }

  void check_context_parallel() {
    if (st_.cp <= 1) return;
    if (st_.attention == AttentionKernel::kUnfused) {
      problem("cp " + str(st_.cp) + " needs FlashAttention-style attention (ring attention merges " +
                  "one key/value block at a time); use --attention flash, or cp 1 with unfused attention",
              {"cp", "attention"});
    }
    const std::int64_t chunks = 2 * std::int64_t{st_.cp};
    if (st_.seq_len % chunks == 0) return;
    problem("sequence length " + str(st_.seq_len) + " does not split into 2 x cp " + str(st_.cp) +
            " = " + str(chunks) +
            " chunks for context parallelism (two per rank, balancing the causal mask); nearest "
            "valid sequence lengths: " +
                nearest_multiples(st_.seq_len, chunks),
            {"seq", "cp"});
  }

  // Expert parallelism shares GPUs with data parallelism (Megatron): the ep ranks holding
  // different experts are a subgroup of the dp ranks.
  void check_experts() {
    if (st_.ep == 1) return;
    if (!m_.is_moe()) {
      problem("ep " + str(st_.ep) + " needs a mixture-of-experts model, but this model is dense; " +
                  "use ep 1",
              {"ep", "model"});
      return;
    }
    const bool dp_known = st_.dp >= 1;
    const auto divides_dp = [&](int e) { return !dp_known || st_.dp % e == 0; };
    const std::string valid = "; valid ep" +
                              (dp_known ? " with dp " + str(st_.dp) : std::string()) + ": " +
                              joined(divisors(m_.moe.experts, m_.moe.experts, divides_dp));
    if (m_.moe.experts % st_.ep != 0) {
      problem("ep " + str(st_.ep) + " does not divide " + str(m_.moe.experts) + " experts" + valid, {"ep", "model"});
    } else if (dp_known && st_.dp % st_.ep != 0) {
      problem("ep " + str(st_.ep) + " does not divide dp " + str(st_.dp) +
                  " (expert parallelism shares the data-parallel ranks)" + valid,
              {"ep"});
      concerns_dp();
    }
  }

  void check_zero_and_cluster() {
    if (st_.zero_stage < 0 || st_.zero_stage > 3) {
      problem("zero stage " + str(st_.zero_stage) + " is not one of 0, 1, 2, 3", {"zero"});
    }
    if (st_.recompute_interval > 1 && st_.recompute != Recompute::kFull) {
      std::string message = "recompute interval ";
      message += str(st_.recompute_interval);
      message += " (one layer in every ";
      message += str(st_.recompute_interval);
      message += ") needs full recomputation, but recompute is ";
      message += name(st_.recompute);
      message += "; use recompute full, or an interval of 1";
      problem(message, {"recompute-every", "recompute"});
    }
    const int max = sc_.cluster.max_gpus;
    if (max > 0 && sc_.gpus > max) {
      const std::string cluster =
          sc_.cluster.name.empty() ? "the cluster" : "cluster " + sc_.cluster.name;
      problem("--gpus " + str(sc_.gpus) + " exceeds the " + str(max) + " GPUs of " + cluster +
                  "; use at most " + str(max),
              {"gpus", "cluster"});
    }
  }

  void check_tp_backward_sms() {
    const int sms = sc_.cluster.gpu.sm_count;
    if (st_.tp_backward_sms == 0 || (st_.tp_backward_sms > 0 && st_.tp_backward_sms < sms)) return;
    problem("--tp-backward-sms " + str(st_.tp_backward_sms) + " leaves no SM of the GPU's " + str(sms) +
                " for the GEMMs beside them; valid: 0 (NCCL's channels) to " + str(sms - 1),
            {"tp-backward-sms", "cluster"});
  }

  void check_precision() {
    if (!st_.fp8_weight_cache || st_.dtype == Dtype::kFp8) return;
    problem(std::string("the FP8 weight cache keeps each weight's FP8 cast for a step's later "
                        "micro-batches, but the matmuls run in ") +
                name(st_.dtype) + "; use dtype fp8 (--dtype fp8), or leave the cache off",
            {"fp8-weight-cache", "dtype"});
  }

  Scenario& sc_;
  Strategy& st_;
  const ModelSpec& m_;
  bool degrees_ok_ = true;
  bool model_ok_ = true;
  bool dp_derived_ = false;  // from --gpus, tp, pp and cp
  Problems problems_;
};

// Appends `path = value` lines: strings quoted, doubles in fmt's shortest round-trip form.
class Dumper {
 public:
  template <typename T>
  void field(const std::string& path, const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      out_ += path + " = " + (value ? "true" : "false") + "\n";
    } else if constexpr (std::is_same_v<T, std::string>) {
      out_ += path + " = \"" + value + "\"\n";
    } else {
      out_ += fmt::format("{} = {}\n", path, value);
    }
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace

std::optional<std::int64_t> replica_gpus(const Strategy& st, int gpus) {
  std::int64_t product = 1;
  for (const int degree : {st.tp, st.pp, st.cp}) {
    product *= std::max(1, degree);  // product <= gpus < 2^31 before, degree < 2^31: no overflow
    if (product > gpus) return std::nullopt;
  }
  return product;
}

Scenario complete_and_validate(Scenario scenario) {
  Checker::Problems problems = Checker(scenario).run();
  const std::vector<std::string>& messages = problems.messages;
  if (messages.empty()) return scenario;
  std::string message = messages.front();
  if (messages.size() > 1) {
    message = str(static_cast<std::int64_t>(messages.size())) + " problems with the scenario:";
    for (const std::string& p : messages) message += "\n  " + p;
  }
  throw Error(ErrorKind::kInvalidInput, message).concerning(std::move(problems.settings));
}

std::string dump(const Scenario& sc) {
  Dumper d;
  const ModelSpec& m = sc.model;
  d.field("model.name", m.name);
  d.field("model.layers", m.layers);
  d.field("model.hidden", m.hidden);
  d.field("model.ffn", m.ffn);
  d.field("model.heads", m.heads);
  d.field("model.kv_heads", m.kv_heads);
  d.field("model.head_dim", m.head_dim);
  d.field("model.vocab", m.vocab);
  d.field("model.max_seq", m.max_seq);
  d.field("model.mlp", name(m.mlp));
  d.field("model.norm", name(m.norm));
  d.field("model.position", name(m.position));
  d.field("model.tied_embeddings", m.tied_embeddings);
  d.field("model.hidden_dropout", m.hidden_dropout);
  d.field("model.attention_window", m.attention_window);
  d.field("model.local_layers", m.local_layers);
  d.field("model.attention_chunked", m.attention_chunked);
  d.field("model.bias", m.bias);
  d.field("model.qk_norm", m.qk_norm);
  d.field("model.sandwich_norm", m.sandwich_norm);
  d.field("model.logit_softcap", m.logit_softcap);
  d.field("model.moe.experts", m.moe.experts);
  d.field("model.moe.top_k", m.moe.top_k);
  d.field("model.moe.expert_ffn", m.moe.expert_ffn);
  d.field("model.moe.shared_experts", m.moe.shared_experts);
  d.field("model.moe.dense_layers", m.moe.dense_layers);
  d.field("model.moe.layer_interval", m.moe.layer_interval);
  d.field("model.moe.capacity_factor", m.moe.capacity_factor);
  d.field("model.mla.q_lora_rank", m.mla.q_lora_rank);
  d.field("model.mla.kv_lora_rank", m.mla.kv_lora_rank);
  d.field("model.mla.qk_rope_head_dim", m.mla.qk_rope_head_dim);
  d.field("model.mla.v_head_dim", m.mla.v_head_dim);

  const ClusterSpec& c = sc.cluster;
  const GpuSpec& g = c.gpu;
  d.field("cluster.name", c.name);
  d.field("cluster.gpu.name", g.name);
  d.field("cluster.gpu.peak_fp32_flops", g.peak_fp32_flops);
  d.field("cluster.gpu.peak_tf32_flops", g.peak_tf32_flops);
  d.field("cluster.gpu.peak_bf16_flops", g.peak_bf16_flops);
  d.field("cluster.gpu.peak_fp8_flops", g.peak_fp8_flops);
  d.field("cluster.gpu.hbm_bytes", g.hbm_bytes);
  d.field("cluster.gpu.hbm_bandwidth_Bps", g.hbm_bandwidth_Bps);
  d.field("cluster.gpu.tdp_w", g.tdp_w);
  d.field("cluster.gpu.power_limit_w", g.power_limit_w);
  d.field("cluster.gpu.sm_count", g.sm_count);
  d.field("cluster.gpu.collective_sms", g.collective_sms);
  d.field("cluster.gpu.matmul_efficiency", g.matmul_efficiency);
  d.field("cluster.gpu.fp8_matmul_efficiency", g.fp8_matmul_efficiency);
  d.field("cluster.gpu.memory_efficiency", g.memory_efficiency);
  d.field("cluster.gpu.attention_efficiency", g.attention_efficiency);
  d.field("cluster.gpu.attention_half_keys", g.attention_half_keys);
  d.field("cluster.gpu.cudnn_attention_efficiency", g.cudnn_attention_efficiency);
  d.field("cluster.gpu.cudnn_attention_half_keys", g.cudnn_attention_half_keys);
  d.field("cluster.gpu.attention_head64_rate", g.attention_head64_rate);
  d.field("cluster.gpu.cudnn_attention_head64_rate", g.cudnn_attention_head64_rate);
  d.field("cluster.gpu.misaligned_gemm_efficiency", g.misaligned_gemm_efficiency);
  d.field("cluster.gpu.eager_rmsnorm_bytes", g.eager_rmsnorm_bytes);
  d.field("cluster.gpu.eager_rmsnorm_backward_bytes", g.eager_rmsnorm_backward_bytes);
  d.field("cluster.gpu.optimizer_memory_efficiency", g.optimizer_memory_efficiency);
  d.field("cluster.gpu.kernel_overhead_s", g.kernel_overhead_s);
  d.field("cluster.gpu.gemm_grid.sizes", g.gemm_grid.sizes);
  d.field("cluster.gpu.gemm_grid.efficiency", g.gemm_grid.efficiency);
  d.field("cluster.gpus_per_node", c.gpus_per_node);
  d.field("cluster.max_gpus", c.max_gpus);
  for (size_t i = 0; i < c.levels.size(); ++i) {
    const TopologyLevel& l = c.levels[i];
    const std::string p = "cluster.levels[" + std::to_string(i) + "].";
    d.field(p + "name", l.name);
    d.field(p + "domain_gpus", l.domain_gpus);
    d.field(p + "bandwidth_per_gpu_Bps", l.bandwidth_per_gpu_Bps);
    d.field(p + "latency_s", l.latency_s);
    d.field(p + "oversubscription", l.oversubscription);
  }

  const Strategy& st = sc.strategy;
  d.field("strategy.tp", st.tp);
  d.field("strategy.sequence_parallel", st.sequence_parallel);
  d.field("strategy.pp", st.pp);
  d.field("strategy.vp", st.vp);
  d.field("strategy.schedule", name(st.schedule));
  d.field("strategy.dp", st.dp);
  d.field("strategy.zero_stage", st.zero_stage);
  d.field("strategy.cp", st.cp);
  d.field("strategy.cp_exchange", name(st.cp_exchange));
  d.field("strategy.repeat_kv", st.repeat_kv);
  d.field("strategy.ep", st.ep);
  d.field("strategy.micro_batch", st.micro_batch);
  d.field("strategy.global_batch", st.global_batch);
  d.field("strategy.seq_len", st.seq_len);
  d.field("strategy.recompute", name(st.recompute));
  d.field("strategy.recompute_interval", st.recompute_interval);
  d.field("strategy.dtype", name(st.dtype));
  d.field("strategy.grad_reduce_dtype", name(st.grad_reduce_dtype));
  d.field("strategy.fp8_weight_cache", st.fp8_weight_cache);
  d.field("strategy.autocast_fp32_weights", st.autocast_fp32_weights);
  d.field("strategy.attention", name(st.attention));
  d.field("strategy.overlap_tp_comm", st.overlap_tp_comm);
  d.field("strategy.tp_async_backward", st.tp_async_backward);
  d.field("strategy.tp_backward_sms", st.tp_backward_sms);
  d.field("strategy.elementwise", name(st.elementwise));
  d.field("strategy.fused_cross_entropy", st.fused_cross_entropy);
  d.field("strategy.host_dispatch_s", st.host_dispatch_s);
  d.field("strategy.host_reads_loss", st.host_reads_loss);
  d.field("strategy.host_syncs_each_forward", st.host_syncs_each_forward);
  d.field("strategy.fsdp_root_reshards", st.fsdp_root_reshards);
  d.field("strategy.host_syncs_before_mlp", st.host_syncs_before_mlp);
  d.field("strategy.deferred_sends", st.deferred_sends);
  d.field("strategy.launch_blocking", st.launch_blocking);
  d.field("strategy.pp_scatter_gather", st.pp_scatter_gather);
  d.field("strategy.pipeline_transfers", name(st.pipeline_transfers));
  d.field("strategy.overlap_dp_comm", st.overlap_dp_comm);
  d.field("strategy.grad_sync", name(st.grad_sync));
  d.field("strategy.sharded_collectives", name(st.sharded_collectives));
  d.field("strategy.optimizer_step", name(st.optimizer_step));
  d.field("strategy.grad_accumulation", name(st.grad_accumulation));
  d.field("strategy.bias_grad_in_gemm", st.bias_grad_in_gemm);
  d.field("strategy.bias_add_kernel", st.bias_add_kernel);
  d.field("strategy.placement", name(st.placement).c_str());
  d.field("gpus", sc.gpus);
  return d.take();
}

}  // namespace stepcast::spec
