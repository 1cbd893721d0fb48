#include "cli/scenario_options.h"

#include "core/error.h"
#include "spec/presets.h"

namespace stepcast::cli {

void add_scenario_options(CLI::App& cmd, ScenarioOptions& o) {
  spec::Strategy& st = o.strategy;
  cmd.add_option("--model", o.model, "Model preset, YAML file or Hugging Face config.json")->capture_default_str();
  cmd.add_option("--cluster", o.cluster, "Cluster preset or YAML file")->capture_default_str();
  cmd.add_option("--gpus", o.gpus, "GPUs in the job")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--tp", st.tp, "Tensor-parallel degree")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--pp", st.pp, "Pipeline stages")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--vp", st.vp, "Virtual stages per rank (interleaved schedule)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--dp", st.dp, "Data-parallel degree (default: gpus / (tp*pp*cp))");
  cmd.add_option("--cp", st.cp, "Context-parallel degree")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--ep", st.ep, "Expert-parallel degree")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--micro-batch", st.micro_batch, "Sequences per micro-batch")->capture_default_str()->check(CLI::PositiveNumber);
  st.global_batch = 0;
  st.seq_len = 4096;
  cmd.add_option("--global-batch", st.global_batch, "Sequences per optimizer step (default: dp * micro-batch)");
  cmd.add_option("--global-batch-tokens", o.global_batch_tokens, "Tokens per optimizer step (instead of --global-batch)");
  cmd.add_option("--seq", st.seq_len, "Tokens per sequence")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--recompute", o.recompute, "Activation recomputation")
      ->check(CLI::IsMember({"none", "selective", "full"}))->capture_default_str();
  cmd.add_option("--zero", st.zero_stage, "ZeRO stage (3 = FSDP full shard)")->check(CLI::Range(0, 3))->capture_default_str();
  cmd.add_flag("--sp", st.sequence_parallel, "Megatron sequence parallelism");
  cmd.add_option("--dtype", o.dtype, "Matmul precision")->check(CLI::IsMember({"bf16", "fp8"}))->capture_default_str();
  cmd.add_option("--grad-dtype", o.grad_dtype, "Gradient-reduction precision")
      ->check(CLI::IsMember({"bf16", "fp32"}))->capture_default_str();
  cmd.add_option("--schedule", o.schedule, "Pipeline schedule (default 1f1b; interleaved when --vp > 1)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}));
  cmd.add_option("--attention", o.attention, "Attention kernel")->check(CLI::IsMember({"flash", "unfused"}))->capture_default_str();
  cmd.add_flag("--async-tp", st.overlap_tp_comm, "Overlap TP collectives with GEMMs");
}

spec::Scenario build_scenario(const ScenarioOptions& o) {
  spec::Scenario s;
  s.model = spec::load_model(o.model);
  s.cluster = spec::load_cluster(o.cluster);
  s.gpus = o.gpus;
  s.strategy = o.strategy;
  spec::Strategy& st = s.strategy;
  st.recompute = o.recompute == "full" ? spec::Recompute::kFull
                 : o.recompute == "selective" ? spec::Recompute::kSelective : spec::Recompute::kNone;
  st.dtype = o.dtype == "fp8" ? spec::Dtype::kFp8 : spec::Dtype::kBf16;
  st.grad_reduce_dtype = o.grad_dtype == "fp32" ? spec::Dtype::kFp32 : spec::Dtype::kBf16;
  st.attention = o.attention == "unfused" ? spec::AttentionKernel::kUnfused : spec::AttentionKernel::kFlash;
  if (o.schedule == "gpipe") st.schedule = spec::Schedule::kGpipe;
  if (o.schedule == "interleaved") st.schedule = spec::Schedule::kInterleaved;
  const int dp = st.dp > 0 ? st.dp : s.gpus / (st.tp * st.pp * st.cp);
  if (o.global_batch_tokens > 0) {
    if (st.global_batch > 0) {
      throw Error(ErrorKind::kInvalidInput, "both --global-batch and --global-batch-tokens given",
                  "give the batch in sequences or in tokens, not both");
    }
    if (o.global_batch_tokens % st.seq_len != 0) {
      throw Error(ErrorKind::kInvalidInput,
                  "--global-batch-tokens " + std::to_string(o.global_batch_tokens) +
                      " is not a whole number of " + std::to_string(st.seq_len) + "-token sequences");
    }
    st.global_batch = static_cast<int>(o.global_batch_tokens / st.seq_len);
  }
  if (st.global_batch == 0) st.global_batch = std::max(1, dp) * st.micro_batch;
  if (s.model.max_seq == 0) s.model.max_seq = st.seq_len;
  return spec::complete_and_validate(std::move(s));
}

}  // namespace stepcast::cli
