#include "cli/scenario_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>

#include "cli/commands.h"
#include "cli/result_output.h"
#include "core/error.h"
#include "core/units.h"
#include "spec/presets.h"

namespace stepcast::cli {

namespace {

// A whole number from `least` to `most`, read with from_chars, in decimal: passed on to CLI11's
// conversion as written again, since that conversion (strtoll, base 0) read "010" as octal 8 and
// refused "09". CLI11's own Range reports a rejected "2 " as "Value 2  not in range 1 to
// 2147483647", the character it could not read unseen; its PositiveNumber a rejected 0 as "not in
// range 0.000000 to 1.797693e+308"; and its conversion held a count beyond 2^63 - 1 at 2^63 - 1
// and went on as though it had been typed. Options take it with ->transform, which passes the
// text on as rewritten (->check would rewrite a copy).
CLI::Validator whole_number(long long least, long long most, const std::string& description) {
  return CLI::Validator(
      [=](std::string& text) {
        long long v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && end == text.data() + text.size() && v >= least && v <= most) {
          text = std::to_string(v);
          return std::string();
        }
        return fmt::format("expected a whole number from {} to {}, got \"{}\"", least, most, text);
      },
      description);
}
constexpr int kMaxInt = std::numeric_limits<int>::max();
const CLI::Validator kAtLeastOne = whole_number(1, kMaxInt, fmt::format("INT in [1 - {}]", kMaxInt));
const CLI::Validator kAtLeastZero = whole_number(0, kMaxInt, fmt::format("INT in [0 - {}]", kMaxInt));
// A count of tokens, which the strategy holds as a 64-bit integer.
const CLI::Validator kTokenCount = whole_number(1, std::numeric_limits<long long>::max(), "");

// A global batch in sequences, which the strategy holds as an int.
int sequences_per_step(std::int64_t sequences, const std::string& what) {
  if (sequences <= std::numeric_limits<int>::max()) return static_cast<int>(sequences);
  throw Error(ErrorKind::kInvalidInput,
              fmt::format("{} is {} sequences per step, more than {}", what, sequences,
                          std::numeric_limits<int>::max()),
              "give a smaller --global-batch, --global-batch-tokens or --micro-batch")
      .concerning({"global-batch", "global-batch-tokens", "seq", "micro-batch", "gpus"});
}

// `load(name)`, with an error that says where it is nowhere else (an unknown preset, a path that
// is no file) put in `option`, so that one coming from a scenario file is reported at its line.
template <typename Load>
auto loaded_for(const char* option, const std::string& name, Load load) {
  try {
    return load(name);
  } catch (Error& e) {
    if (e.where().file.empty() && e.field().empty()) e.in_field(option);
    throw;
  }
}

// Tokens per sequence when --seq is not given and the model allows as many.
constexpr int kDefaultSeqLen = 4096;

}  // namespace

void add_scenario_options(CLI::App& cmd, ScenarioOptions& o) {
  spec::Strategy& st = o.strategy;
  // Read in main before CLI11 parses (cli/scenario_file.h); declared here for --help and so that a
  // missing file name is a usage error.
  cmd.add_option("--config", "Options from a YAML scenario file, each key an option's name without "
                             "its dashes (tp: 8, sp: true); the command line wins")
      ->type_name("FILE");
  cmd.add_option("--save-config", "After the run, write the options it was given (command line and "
                                  "--config files) to a scenario file")
      ->type_name("FILE")
      ->check(kPathToWrite)
      ->group(kOutputGroup);
  cmd.add_option("--model", o.model, "Model preset, YAML file, Hugging Face config.json or a directory holding one")->capture_default_str();
  cmd.add_option("--cluster", o.cluster, "Cluster preset or YAML file")->capture_default_str();
  cmd.add_option("--gpus", o.gpus, "GPUs in the job")->capture_default_str()->transform(kAtLeastOne);
  cmd.add_option("--tp", st.tp, "Tensor-parallel degree")->capture_default_str()->transform(kAtLeastOne);
  cmd.add_option("--pp", st.pp, "Pipeline stages")->capture_default_str()->transform(kAtLeastOne);
  cmd.add_option("--vp", st.vp, "Virtual stages per rank (interleaved schedule)")->capture_default_str()->transform(kAtLeastOne);
  cmd.add_option("--dp", st.dp, "Data-parallel degree (default: gpus / (tp*pp*cp))")->transform(kAtLeastOne);
  cmd.add_option("--cp", st.cp, "Context-parallel degree")->capture_default_str()->transform(kAtLeastOne);
  cmd.add_option("--cp-exchange", o.cp_exchange,
                 "How CP ranks exchange keys and values: ring (ring attention, beside the attention "
                 "kernels: Megatron-Core, Transformer Engine's p2p) or all-gather (K and V gathered "
                 "before the attention and dK, dV reduce-scattered after it, exposed: Llama 3) or "
                 "gathered-ring (K and V gathered beside the first of the ring's steps, dK, dV passed "
                 "round the ring in FP32: PyTorch's context parallelism, rotate method allgather)")
      ->check(CLI::IsMember({"ring", "all-gather", "gathered-ring"}))
      ->capture_default_str();
  cmd.add_flag("--repeat-kv", st.repeat_kv,
               "The model repeats K and V to the query heads before the attention (torchtitan's Llama), "
               "so the CP exchange moves heads / tp of them");
  cmd.add_option("--ep", st.ep, "Expert-parallel degree")->capture_default_str()->transform(kAtLeastOne);
  cmd.add_option("--micro-batch", st.micro_batch, "Sequences per micro-batch")->capture_default_str()->transform(kAtLeastOne);
  st.global_batch = 0;
  st.seq_len = 0;  // unset: kDefaultSeqLen, or the model's max_seq where that is shorter
  cmd.add_option("--global-batch", st.global_batch, "Sequences per optimizer step (default: dp * micro-batch)")
      ->transform(kAtLeastOne);
  cmd.add_option("--global-batch-tokens", o.global_batch_tokens, "Tokens per optimizer step (instead of --global-batch)")
      ->transform(kTokenCount);
  cmd.add_option("--seq", st.seq_len,
                 "Tokens per sequence (default: " + std::to_string(kDefaultSeqLen) +
                     ", or the model's max_seq where that is shorter)")
      ->transform(kAtLeastOne);
  cmd.add_option("--recompute", o.recompute, "Activation recomputation")
      ->check(CLI::IsMember({"none", "selective", "full", "op"}))->capture_default_str();
  cmd.add_option("--recompute-every", st.recompute_interval,
                 "With --recompute full: recompute every k-th layer only")
      ->capture_default_str()->transform(kAtLeastOne);
  cmd.add_option("--zero", st.zero_stage, "ZeRO stage (3 = FSDP full shard)")->transform(whole_number(0, 3, "INT in [0 - 3]"))->capture_default_str();
  cmd.add_flag("--sp", st.sequence_parallel, "Megatron sequence parallelism");
  cmd.add_option("--dtype", o.dtype, "Matmul precision (fp16 adds loss scaling's unscale pass)")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8"}))
      ->capture_default_str();
  cmd.add_option("--grad-dtype", o.grad_dtype, "Gradient-reduction precision")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}))
      ->capture_default_str();
  cmd.add_option("--optimizer-step", o.optimizer_step,
                 "The passes around Adam: master-weights (Megatron, DeepSpeed: FP32 masters beside "
                 "16-bit weights, copied after the step) or in-place (plain PyTorch, FSDP, "
                 "torchtitan: FP32 parameters updated in place, gradients always clipped) or "
                 "in-place-loop (as in-place, Adam a per-tensor loop of unfused kernels: Composer's "
                 "DecoupledAdamW)")
      ->check(CLI::IsMember({"master-weights", "in-place", "in-place-loop"}))
      ->capture_default_str();
  cmd.add_option(
         "--grad-accumulation", o.grad_accumulation,
         "How micro-batches' weight gradients are summed: separate (a kernel per tensor adds "
         "each into the accumulated one: PyTorch, DeepSpeed, Megatron-LM of 2021) or fused "
         "(the weight-gradient GEMM adds into the main gradient: Megatron-Core, Transformer "
         "Engine)")
      ->check(CLI::IsMember({"separate", "fused"}))
      ->capture_default_str();
  cmd.add_option("--schedule", o.schedule, "Pipeline schedule (default 1f1b; interleaved when --vp > 1)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb-h1"}));
  cmd.add_option("--attention", o.attention,
                 "Attention kernel: flash (FlashAttention-2), cudnn (cuDNN's fused attention: PyTorch's SDPA on an H100), flash-v1 (FlashAttention 1 or a Triton kernel of its time) or unfused")
      ->check(CLI::IsMember({"flash", "cudnn", "flash-v1", "unfused"}))
      ->capture_default_str();
  cmd.add_option("--elementwise", o.elementwise,
                 "Elementwise ops: fused kernels (Megatron), eager PyTorch reference code, or compiled")
      ->check(CLI::IsMember({"fused", "eager", "compiled"}))->capture_default_str();
  cmd.add_flag("--unfused-cross-entropy{false}", st.fused_cross_entropy,
               "The loss as Megatron-LM's vocab-parallel cross entropy of separate FP32 passes");
  cmd.add_option(
         "--pipeline-transfers", o.pipeline_transfers,
         "How pipeline sends wait: host-sync (Megatron; DeepSpeed with TP > 1: the send blocks and "
         "the host waits for the GPU), stream (PyTorch pipelining; DeepSpeed with TP 1: the "
         "compute "
         "stream waits), async (sends overlap compute, as Llama 3 ran)")
      ->check(CLI::IsMember({"host-sync", "stream", "async"}))
      ->capture_default_str();
  cmd.add_flag("--async-tp", st.overlap_tp_comm,
               "Overlap sequence parallelism's TP all-gathers and reduce-scatters with the GEMMs beside them "
               "(needs --sp)");
  cmd.add_flag("--tp-async-backward", st.tp_async_backward,
               "Megatron's column-parallel backward: the input gradient's all-reduce (with --sp: "
               "reduce-scatter) beside the weight-gradient GEMM, and with --sp the input gathered "
               "again beside the input-gradient GEMM; with --async-tp, Transformer Engine's bulk "
               "userbuffers overlaps");
  cmd.add_option("--tp-backward-sms", st.tp_backward_sms,
                 "SMs each of --tp-async-backward's collectives holds beside its GEMM: 0 = NCCL's "
                 "channels of the TP group; with --async-tp, the bulk overlaps' num_sm of the "
                 "userbuffers config")
      ->capture_default_str()
      ->transform(kAtLeastZero);
  cmd.add_flag("--autocast-fp32-weights", st.autocast_fp32_weights,
               "FP32 weights that torch.autocast casts to 16 bits at every use (FSDP without "
               "parameter mixed precision, as Composer's DEFAULT before March 2023; DDP under Lightning's "
               "bf16 autocast): ZeRO gathers FP32, each linear's weight is cast in every forward "
               "and its gradient cast back in every backward");
  cmd.add_flag(
      "--fp8-weight-cache", st.fp8_weight_cache,
      "With --dtype fp8: cast each weight to FP8 on a step's first micro-batch only and reuse it "
      "(Transformer Engine under Megatron); without it every micro-batch casts it (torchao)");
  cmd.add_flag(
      "--bias-grad-in-gemm", st.bias_grad_in_gemm,
      "Sum each linear bias's gradient in the weight-gradient GEMM (flash-attn's FusedDense) "
      "instead of in a kernel of its own that reads the output gradient");
  cmd.add_flag(
      "--bias-add-kernel", st.bias_add_kernel,
      "Add the bias of a linear that adds its own (Megatron's QKV projection) in a kernel of its "
      "own after the GEMM (PyTorch's 3-D F.linear before its PR #72728, Megatron's matmul + bias)");
  cmd.add_flag("--no-dp-overlap{false}", st.overlap_dp_comm,
               "Reduce gradients after the backward pass instead of in buckets during it");
  cmd.add_option(
         "--grad-sync", o.grad_sync,
         "When a pipeline stage starts reducing gradient buckets: ready (each as the last "
         "backward completes it: PyTorch DDP, DeepSpeed) or aligned (Megatron-Core: a model "
         "chunk's buckets together, every stage at once) or after-backward (torch.distributed."
         "pipelining with FSDP2: all of them after the stage's last backward)")
      ->check(CLI::IsMember({"ready", "aligned", "after-backward"}))
      ->capture_default_str();
  cmd.add_option(
         "--zero3-collectives", o.sharded_collectives,
         "How ZeRO-3 moves each layer: layer (one prefetched all-gather and reduce-scatter per "
         "layer: DeepSpeed since mid-2021), flat-parameter (as layer, plus the gradient work "
         "around each reduce-scatter of PyTorch FSDP1, llm-foundry 2023), parameter (as layer, "
         "plus the copies of per-parameter sharding: PyTorch FSDP2, torchtitan) or tensor-blocking "
         "(one blocking collective per parameter tensor: DeepSpeed 0.3.x)")
      ->check(CLI::IsMember({"layer", "flat-parameter", "parameter", "tensor-blocking"}))
      ->capture_default_str();
  cmd.add_flag(
      "--pp-scatter-gather", st.pp_scatter_gather,
      "Megatron-LM's scatter/gather of pipeline tensors (2021-2022, without --sp), or DeepSpeed's "
      "partitioned ones (TP > 1): each TP rank sends 1/tp of a boundary tensor and the receiving "
      "stage all-gathers the pieces");
  cmd.add_flag(
      "--host-reads-loss", st.host_reads_loss,
      "The host waits for each micro-batch's loss before launching its backward (DeepSpeed "
      "July 2023 - February 2024: loss.item() in engine.backward). Changes simulate only: the "
      "closed form already prices each pass of a layer on its own");
  cmd.add_flag(
      "--host-syncs-forward", st.host_syncs_each_forward,
      "The host synchronises the device before launching each micro-batch's forward, waiting for "
      "its input to arrive (DeepSpeedEngine's throughput timer, not its PipelineEngine's). Changes simulate only: the closed form "
      "already prices each pass of a layer on its own");
  cmd.add_flag(
      "--fsdp-root-reshard", st.fsdp_root_reshards,
      "With --zero 3: the root unit (embeddings, final norm, head) is freed after each forward and "
      "gathered again before the backward (FSDP2 from PyTorch 2.8 under fully_shard(model, "
      "reshard_after_forward=True)); FSDP1 and earlier FSDP2 keep it for the backward");
  cmd.add_flag(
      "--host-syncs-mlp", st.host_syncs_before_mlp,
      "The host waits for the compute stream in each forward (and full recomputation) of a "
      "layer, before its MLP (Megatron-DeepSpeed's layer makes two scalars with "
      "torch.tensor(0.0, device=...), each a blocking copy). Changes simulate only: the closed "
      "form already prices each pass of a layer on its own");
  cmd.add_flag(
      "--deferred-sends", st.deferred_sends,
      "DeepSpeed's pipeline engine: each pass's output goes out at the stage's next step, beside "
      "that step's receive, over one NCCL stream per neighbouring stage (1f1b only). Changes "
      "simulate only");
  cmd.add_flag(
      "--launch-blocking", st.launch_blocking,
      "Each launch waits for its kernel to finish (CUDA_LAUNCH_BLOCKING=1), so host and GPU "
      "take turns: every kernel costs its host time plus its GPU time");
  cmd.add_option("--host-dispatch", o.host_dispatch,
                 "Host time per kernel launch, e.g. \"42.4 us\" (eager PyTorch, the default) or \"0 us\" "
                 "(CUDA graphs)");
  cmd.add_option("--placement", o.placement,
                 "Order in which parallel groups are laid onto GPUs, innermost first")
      ->capture_default_str();
}

namespace {

// A precision as --dtype and --grad-dtype spell it (their checks allow only these).
spec::Dtype dtype_of(const std::string& text) {
  return text == "fp8"    ? spec::Dtype::kFp8
         : text == "fp16" ? spec::Dtype::kFp16
         : text == "fp32" ? spec::Dtype::kFp32
                          : spec::Dtype::kBf16;
}

// "tp,cp,pp,dp" -> axes; every axis exactly once (ep may be left out: it lives inside dp).
std::vector<spec::Axis> parse_placement(const std::string& text) {
  const std::pair<const char*, spec::Axis> names[] = {{"tp", spec::Axis::kTp}, {"cp", spec::Axis::kCp},
                                                      {"ep", spec::Axis::kEp}, {"dp", spec::Axis::kDp},
                                                      {"pp", spec::Axis::kPp}};
  std::vector<spec::Axis> axes;
  std::string rest = text + ",";
  for (size_t start = 0, comma; (comma = rest.find(',', start)) != std::string::npos; start = comma + 1) {
    const std::string item = rest.substr(start, comma - start);
    bool found = false;
    for (const auto& [name, axis] : names) {
      if (item != name) continue;
      found = true;
      if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
        throw Error(ErrorKind::kInvalidInput, "names \"" + item + "\" twice").in_field("--placement");
      }
      axes.push_back(axis);
    }
    if (!found) {
      throw Error(ErrorKind::kInvalidInput, "unknown axis \"" + item + "\"",
                  "a comma-separated order of tp, cp, ep, dp, pp, innermost first").in_field("--placement");
    }
  }
  for (spec::Axis required : {spec::Axis::kTp, spec::Axis::kCp, spec::Axis::kDp, spec::Axis::kPp}) {
    if (std::find(axes.begin(), axes.end(), required) == axes.end()) {
      throw Error(ErrorKind::kInvalidInput, "\"" + text + "\" leaves out an axis",
                  "name each of tp, cp, dp, pp once (ep optional), e.g. tp,cp,pp,dp").in_field("--placement");
    }
  }
  if (std::find(axes.begin(), axes.end(), spec::Axis::kEp) == axes.end()) axes.push_back(spec::Axis::kEp);
  return axes;
}

}  // namespace

spec::ClusterSpec cluster_option(const std::string& name_or_path) {
  return loaded_for("--cluster", name_or_path, spec::load_cluster);
}

spec::Scenario build_scenario(const ScenarioOptions& o) {
  spec::Scenario s;
  s.model = loaded_for("--model", o.model, spec::load_model);
  s.cluster = cluster_option(o.cluster);
  s.gpus = o.gpus;
  s.strategy = o.strategy;
  spec::Strategy& st = s.strategy;
  st.placement = parse_placement(o.placement);
  st.recompute = o.recompute == "full"        ? spec::Recompute::kFull
                 : o.recompute == "selective" ? spec::Recompute::kSelective
                 : o.recompute == "op"        ? spec::Recompute::kOp
                                              : spec::Recompute::kNone;
  st.dtype = dtype_of(o.dtype);
  st.grad_reduce_dtype = dtype_of(o.grad_dtype);
  st.optimizer_step = o.optimizer_step == "in-place"        ? spec::OptimizerStep::kInPlace
                      : o.optimizer_step == "in-place-loop" ? spec::OptimizerStep::kInPlaceLoop
                                                            : spec::OptimizerStep::kMasterWeights;
  st.grad_accumulation = o.grad_accumulation == "fused" ? spec::GradAccumulation::kFusedIntoGemm
                                                        : spec::GradAccumulation::kSeparateKernel;
  st.attention = o.attention == "unfused"    ? spec::AttentionKernel::kUnfused
                 : o.attention == "flash-v1" ? spec::AttentionKernel::kFlashV1
                 : o.attention == "cudnn"    ? spec::AttentionKernel::kCudnn
                                             : spec::AttentionKernel::kFlash;
  st.pipeline_transfers = o.pipeline_transfers == "stream"  ? spec::PipelineTransfers::kStreamOrdered
                          : o.pipeline_transfers == "async" ? spec::PipelineTransfers::kAsynchronous
                                                            : spec::PipelineTransfers::kHostSynchronised;
  st.elementwise = o.elementwise == "eager"      ? spec::Elementwise::kEager
                   : o.elementwise == "compiled" ? spec::Elementwise::kCompiled
                                                 : spec::Elementwise::kFusedKernels;
  st.grad_sync = o.grad_sync == "aligned"          ? spec::GradSync::kAligned
                 : o.grad_sync == "after-backward" ? spec::GradSync::kAfterBackward
                                                   : spec::GradSync::kAsReady;
  st.cp_exchange = o.cp_exchange == "all-gather"      ? spec::CpExchange::kAllGather
                   : o.cp_exchange == "gathered-ring" ? spec::CpExchange::kGatheredRing
                                                      : spec::CpExchange::kRing;
  st.sharded_collectives =
      o.sharded_collectives == "tensor-blocking" ? spec::ShardedCollectives::kPerTensorBlocking
      : o.sharded_collectives == "parameter"     ? spec::ShardedCollectives::kPerParameter
      : o.sharded_collectives == "flat-parameter" ? spec::ShardedCollectives::kFlatParameter
                                                 : spec::ShardedCollectives::kPerLayer;
  if (!o.host_dispatch.empty()) {
    try {
      st.host_dispatch_s = core::parse_quantity(o.host_dispatch, core::Dimension::kTime);
    } catch (const Error& e) {
      throw Error(ErrorKind::kInvalidInput, e.message(), e.hint()).in_field("--host-dispatch");
    }
    // Eager PyTorch launches a kernel in tens of microseconds (42.4 us in the traces of
    // ../shared/traces, docs/model.md): a launch of a second or more is a slip of the unit, and
    // over a step's launches it would overflow the step's time instead of being named.
    constexpr double kMaxHostDispatchS = 1;
    if (st.host_dispatch_s > kMaxHostDispatchS) {
      throw Error(ErrorKind::kInvalidInput,
                  fmt::format("\"{}\" per kernel launch is more than 1 s", o.host_dispatch),
                  "eager PyTorch takes about 42.4 us per launch, CUDA graphs about 0 us")
          .in_field("--host-dispatch");
    }
  }
  if (o.schedule == "gpipe") st.schedule = spec::Schedule::kGpipe;
  if (o.schedule == "interleaved") st.schedule = spec::Schedule::kInterleaved;
  if (o.schedule == "zb-h1") st.schedule = spec::Schedule::kZeroBubbleH1;
  // 1f1b is also the schedule left unnamed, which vp > 1 makes interleaved; named, it is refused
  // with vp > 1 as gpipe and zb-h1 are, rather than run interleaved unasked.
  if (o.schedule == "1f1b" && st.vp > 1) {
    throw Error(ErrorKind::kInvalidInput,
                fmt::format("vp {} needs the interleaved schedule, but --schedule is 1f1b; use vp 1 with 1f1b, "
                            "or --schedule interleaved",
                            st.vp))
        .concerning({"vp", "schedule"});
  }
  if (st.seq_len == 0) {
    st.seq_len = s.model.max_seq > 0 ? std::min(kDefaultSeqLen, s.model.max_seq) : kDefaultSeqLen;
  }
  const std::optional<std::int64_t> replica = spec::replica_gpus(st, s.gpus);
  const int dp = st.dp > 0 ? st.dp : replica ? static_cast<int>(s.gpus / *replica) : 0;
  if (o.global_batch_tokens > 0) {
    if (st.global_batch > 0) {
      throw Error(ErrorKind::kInvalidInput, "both --global-batch and --global-batch-tokens given",
                  "give the batch in sequences or in tokens, not both")
          .concerning({"global-batch", "global-batch-tokens"});
    }
    if (o.global_batch_tokens % st.seq_len != 0) {
      throw Error(ErrorKind::kInvalidInput,
                  "--global-batch-tokens " + std::to_string(o.global_batch_tokens) +
                      " is not a whole number of " + std::to_string(st.seq_len) + "-token sequences")
          .concerning({"global-batch-tokens", "seq"});
    }
    st.global_batch = sequences_per_step(o.global_batch_tokens / st.seq_len, "--global-batch-tokens " +
                                         std::to_string(o.global_batch_tokens) + " / --seq " +
                                         std::to_string(st.seq_len));
  }
  if (st.global_batch == 0) {
    st.global_batch = sequences_per_step(std::int64_t{std::max(1, dp)} * st.micro_batch,
                                         "the default, dp " + std::to_string(dp) + " x --micro-batch " +
                                             std::to_string(st.micro_batch) + ",");
  }
  if (s.model.max_seq == 0) s.model.max_seq = st.seq_len;
  return spec::complete_and_validate(std::move(s));
}

std::vector<std::pair<std::string, std::string>> scenario_settings(const spec::Scenario& s,
                                                                   const std::string& model,
                                                                   const std::string& cluster) {
  const spec::Strategy& st = s.strategy;
  std::vector<std::pair<std::string, std::string>> out = {
      {"model", model},
      {"cluster", cluster},
      {"gpus", std::to_string(s.gpus)},
      {"tp", std::to_string(st.tp)},
      {"pp", std::to_string(st.pp)},
      {"vp", std::to_string(st.vp)},
      {"cp", std::to_string(st.cp)},
      {"cp-exchange", spec::name(st.cp_exchange)},
      {"ep", std::to_string(st.ep)},
      {"micro-batch", std::to_string(st.micro_batch)},
      {"global-batch", std::to_string(st.global_batch)},
      {"seq", std::to_string(st.seq_len)},
      {"recompute", spec::name(st.recompute)},
      {"recompute-every", std::to_string(st.recompute_interval)},
      {"zero", std::to_string(st.zero_stage)},
      {"dtype", spec::name(st.dtype)},
      {"grad-dtype", spec::name(st.grad_reduce_dtype)},
      {"optimizer-step", spec::name(st.optimizer_step)},
      {"grad-accumulation", spec::name(st.grad_accumulation)},
      {"attention", spec::name(st.attention)},
      {"elementwise", spec::name(st.elementwise)},
      {"pipeline-transfers", spec::name(st.pipeline_transfers)},
      {"tp-backward-sms", std::to_string(st.tp_backward_sms)},
      {"grad-sync", spec::name(st.grad_sync)},
      {"zero3-collectives", spec::name(st.sharded_collectives)},
      // The shortest text that reads back as the same double.
      {"host-dispatch", fmt::format("{} s", st.host_dispatch_s)},
  };
  // DP and the schedule only where they are not what build_scenario derives, so that a what-if
  // changing --pp or --vp on the command line derives them again.
  if (st.dp != s.gpus / spec::replica_gpus(st, s.gpus).value_or(1)) out.emplace_back("dp", std::to_string(st.dp));
  const spec::Schedule derived = st.vp > 1 ? spec::Schedule::kInterleaved : spec::Schedule::k1F1B;
  if (st.schedule != derived) out.emplace_back("schedule", spec::name(st.schedule));
  out.emplace_back("placement", spec::name(st.placement));
  // Flags are written where they differ from leaving them out.
  const std::pair<const char*, bool> flags[] = {
      {"sp", st.sequence_parallel},
      {"unfused-cross-entropy", !st.fused_cross_entropy},
      {"async-tp", st.overlap_tp_comm},
      {"tp-async-backward", st.tp_async_backward},
      {"autocast-fp32-weights", st.autocast_fp32_weights},
      {"fp8-weight-cache", st.fp8_weight_cache},
      {"bias-grad-in-gemm", st.bias_grad_in_gemm},
      {"bias-add-kernel", st.bias_add_kernel},
      {"no-dp-overlap", !st.overlap_dp_comm},
      {"pp-scatter-gather", st.pp_scatter_gather},
      {"host-reads-loss", st.host_reads_loss},
      {"host-syncs-forward", st.host_syncs_each_forward},
      {"fsdp-root-reshard", st.fsdp_root_reshards},
      {"host-syncs-mlp", st.host_syncs_before_mlp},
      {"deferred-sends", st.deferred_sends},
      {"launch-blocking", st.launch_blocking},
      {"repeat-kv", st.repeat_kv},
  };
  for (const auto& [flag, set] : flags) {
    if (set) out.emplace_back(flag, "true");
  }
  return out;
}

}  // namespace stepcast::cli
