#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "analytic/estimate.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/utf8.h"
#include "spec/presets.h"
#include "validate/source_software.h"
#include "validate/validate.h"
#include "workload/operators.h"

namespace stepcast::validate {
namespace {

using spec::AttentionKernel;
using spec::Dtype;
using spec::Recompute;
using spec::Schedule;

constexpr const char* kPublishedColumns[] = {
    "source", "model", "layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len", "gpu",
    "cluster", "num_gpus", "tp", "pp", "dp", "cp", "ep", "vp", "global_batch_seqs", "micro_batch",
    "recompute", "seq_parallel", "measured_tflops_per_gpu", "measured_mfu", "measured_tokens_per_s",
    "measured_iter_s", "notes"};
constexpr const char* kVtrainColumns[] = {
    "# GPUs", "global batch", "micro batch", "hidden size", "attention heads", "# layers",
    "sequence length", "tensor parallelism", "data parallelism", "pipeline parallelism",
    "iteration time (ms)"};
constexpr const char* kRequiredCell = "empty cell; this column is required";
// vTrain published its single-node and its multi-node measurements as two files; a row's GPU count
// against the cluster's node size says which it belongs to.
constexpr const char* kVtrainSingleNode =
    "vTrain ground_truth_single (Megatron-DeepSpeed, 1 node A100)";
constexpr const char* kVtrainMultiNode =
    "vTrain ground_truth_multi (Megatron-DeepSpeed, A100 nodes)";

// Accessor for one CSV record that names file, line and column in every error.
class RowReader {
 public:
  RowReader(const core::CsvTable& t, const core::CsvRow& r) : table_(t), row_(r) {}

  const std::string& text(std::string_view column) const {
    const int index = table_.column(column);
    STEPCAST_ASSERT(index >= 0, "every column read is in the table's required columns");
    return row_.cells[static_cast<size_t>(index)];
  }
  // The cell as an error quotes it: a line break a quoted cell may hold, or another control
  // character, escaped (core::escape_controls), not ending the message's line.
  std::string quoted(std::string_view column) const {
    return fmt::format("\"{}\"", core::escape_controls(text(column), false));
  }
  std::optional<double> number(std::string_view column) const {
    const std::string& cell = text(column);
    if (cell.empty()) return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
    if (ec != std::errc() || end != cell.data() + cell.size() || !std::isfinite(value)) {
      throw Error(ErrorKind::kInvalidInput, fmt::format("expected a number, got {}", quoted(column)))
          .at({table_.source, row_.line, 0})
          .in_field(std::string(column));
    }
    return value;
  }
  // A count (layers, a size, a parallel degree, a batch): every integer column of both schemas
  // counts something, so 0 is as invalid as a fraction.
  std::optional<int> integer(std::string_view column) const {
    const std::optional<double> v = number(column);
    if (!v) return std::nullopt;
    if (*v != std::floor(*v) || *v < 1 || *v > 1e9) {
      throw Error(ErrorKind::kInvalidInput, fmt::format("expected a whole number from 1 to 10^9, got {}", quoted(column)))
          .at({table_.source, row_.line, 0})
          .in_field(std::string(column));
    }
    return static_cast<int>(*v);
  }
  // A measured quantity from `least` to `most` (an empty cell is none). Beyond, no training step
  // measured it, and its error overflows the report (a 1e-308 ms iteration printed +inf%).
  std::optional<double> measurement(std::string_view column, double least, double most) const {
    const std::optional<double> v = number(column);
    if (v && (*v < least || *v > most)) {
      fail(column, fmt::format("expected a measured value from {:g} to {:g}, got {}", least, most, quoted(column)),
           {});
    }
    return v;
  }
  int required(std::string_view column) const {
    const std::optional<int> v = integer(column);
    if (!v) fail(column, kRequiredCell, {});
    return *v;
  }
  int line() const { return row_.line; }
  [[noreturn]] void fail(std::string_view column, std::string message, std::string hint) const {
    throw Error(ErrorKind::kInvalidInput, std::move(message), std::move(hint))
        .at({table_.source, row_.line, 0})
        .in_field(std::string(column));
  }

 private:
  const core::CsvTable& table_;
  const core::CsvRow& row_;
};

template <size_t N>
void require_columns(const core::CsvTable& t, const char* const (&columns)[N], const char* schema) {
  for (const char* c : columns) {
    if (t.column(c) >= 0) continue;
    std::string all;
    for (const char* d : columns) {
      if (!all.empty()) all += ", ";
      all += d;
    }
    throw Error(ErrorKind::kInvalidInput, std::string("missing column \"") + c + "\"",
                std::string("the ") + schema + " schema has the columns: " + all)
        .at({t.source, 1, 0});
  }
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Narayanan et al.'s Table 1 runs as the authors' own scripts launched them (Megatron-LM
// examples/sc21/run_table_1.sh, "scripts that were used to produce the results" of the paper, in
// the nvcr.io/nvidia/pytorch:20.12-py3 container of its SRUN.sh): the micro-batch, the layers per
// virtual stage (0: no interleaving) and the DDP implementation (--DDP-impl torch: PyTorch's DDP,
// whose bucketed all-reduce overlaps the last micro-batch's backward; local: Megatron's, after
// the backward). A row is taken as a script run when its shape, TP, PP and batch all match.
struct Sc21Run {
  int layers, hidden, tp, pp, global_batch, micro_batch, layers_per_virtual_stage;
  bool torch_ddp;
};
constexpr Sc21Run kSc21Table1[] = {
    {24, 2304, 1, 1, 512, 16, 0, true},     {30, 3072, 2, 1, 512, 16, 0, true},
    {36, 4096, 4, 1, 512, 16, 0, true},     {40, 6144, 8, 1, 1024, 8, 0, true},
    {48, 8192, 8, 2, 1536, 4, 0, false},    {60, 10240, 8, 4, 1792, 2, 5, false},
    {80, 12288, 8, 8, 2304, 2, 5, false},   {96, 16384, 8, 16, 2160, 1, 3, false},
    {105, 20480, 8, 35, 2520, 1, 1, false}, {128, 25600, 8, 64, 3072, 1, 0, false}};

const Sc21Run* sc21_table1_run(std::string_view source, const spec::Scenario& s) {
  if (!contains(source, "Narayanan") || !contains(source, "Table1")) return nullptr;
  const spec::Strategy& st = s.strategy;
  for (const Sc21Run& run : kSc21Table1) {
    if (run.layers == s.model.layers && run.hidden == s.model.hidden && run.tp == st.tp &&
        run.pp == st.pp && run.global_batch == st.global_batch)
      return &run;
  }
  return nullptr;
}

// The recompute cell: none, full, selective (the source's own meaning), "selective (op)"
// (torchtitan's op-level policy) or "selective (layer)" (torchtitan's layer-level policy, full
// checkpointing of every second layer, as its configs set selective_ac_option = '2').
void parse_recompute(const std::string& cell, const Software& sw, const RowReader& r, spec::Strategy& st) {
  st.recompute_interval = 1;
  if (cell.empty()) {
    st.recompute = sw.unstated_recompute;
  } else if (cell == "none") {
    st.recompute = Recompute::kNone;
  } else if (cell == "full") {
    st.recompute = Recompute::kFull;
  } else if (cell == "selective") {
    st.recompute = sw.selective;
  } else if (cell == "selective (op)") {
    st.recompute = Recompute::kOp;
  } else if (cell == "selective (layer)") {
    st.recompute = Recompute::kFull;
    st.recompute_interval = 2;
  } else {
    r.fail("recompute", fmt::format("unknown recompute {}", r.quoted("recompute")),
           "valid: none, selective, selective (op), selective (layer), full (or empty: the source's default)");
  }
}

// Smallest interleaving the layer count allows: the least divisor > 1 of the layers of the
// fullest stage (ceil(layers / pp): Llama 3 runs 126 layers as 16 stages of up to 8).
int default_virtual_stages(int layers, int pp) {
  if (pp <= 1) return 1;
  const int per_stage = (layers + pp - 1) / pp;
  for (int v = 2; v <= per_stage; ++v) {
    if (per_stage % v == 0) return v;
  }
  return 1;
}

spec::ModelSpec model_from_row(const RowReader& r, const std::string& name) {
  spec::ModelSpec m;
  m.name = name;
  m.layers = r.required("layers");
  m.hidden = r.required("hidden");
  m.ffn = r.required("ffn");
  // MPT configs use 128-wide heads; the table leaves heads empty for them.
  m.heads = r.integer("heads").value_or(m.hidden / 128);
  m.kv_heads = r.integer("kv_heads").value_or(m.heads);
  m.vocab = r.required("vocab");
  // Qwen2 and 2.5 are Llama's layer with biases on q, k and v, modelled without them as the
  // Hugging Face reader does (spec/hf_config.cpp).
  if (contains(name, "Llama") || contains(name, "Qwen2")) {
    m.mlp = spec::MlpKind::kSwiglu;
    m.norm = spec::NormKind::kRmsNorm;
    m.position = spec::PositionKind::kRope;
    m.tied_embeddings = contains(name, "Llama 3.2");  // 1B and 3B tie them (tie_word_embeddings)
  } else if (contains(name, "MPT")) {
    // The benchmark table's NumParams grow with the sequence length by exactly its length times
    // d_model (MPT-7B: 6,658,859,008 at 2,048 tokens, 6,667,247,616 at 4,096): a learned position
    // table (MPTConfig's learned_pos_emb), not the released checkpoints' ALiBi, which llm-foundry
    // then ran with its torch and triton attention only (MPTConfig._validate_config).
    m.position = spec::PositionKind::kLearned;
    m.tied_embeddings = true;
    // Its linear layers have biases: MPTConfig's no_bias defaults to False and the benchmark's
    // YAMLs do not set it; the NumParams column holds them, 9 x d_model a layer beyond the
    // weights, embeddings and norms (MPT-7B at 2,048 tokens: 6,658,859,008 - 6,657,679,360 =
    // 32 x 9 x 4,096 for Wqkv's 3 d_model, out_proj's 1, up_proj's 4 and down_proj's 1).
    m.bias = true;
  } else {  // GPT-style (Megatron): learned positions (BLOOM: ALiBi), biases, tied embeddings
    m.position =
        contains(name, "BLOOM") ? spec::PositionKind::kAlibi : spec::PositionKind::kLearned;
    m.bias = true;
    m.tied_embeddings = true;
    m.hidden_dropout = 0.1;  // Megatron-LM's --hidden-dropout default
  }
  return m;
}

// Whether a row's configuration is valid and fits in memory: a run that was measured did both.
bool runs(const spec::Scenario& s) {
  try {
    return workload::memory_per_gpu(spec::complete_and_validate(s)).fits;
  } catch (const Error&) {
    return false;
  }
}

// Picks the pipeline depth a source did not state: the smallest that divides the layers and the
// GPUs left after TP and whose memory fits.
int default_pipeline(spec::Scenario s) {
  const int gpus_per_tp = s.gpus / s.strategy.tp;
  // A depth divides both, so none is above the smaller (a row of 10^9 layers took 2 s to refuse).
  for (int pp = 1; pp <= std::min(s.model.layers, gpus_per_tp); ++pp) {
    if (s.model.layers % pp != 0 || gpus_per_tp % pp != 0) continue;
    s.strategy.pp = pp;
    s.strategy.dp = 0;
    s.strategy.vp = default_virtual_stages(s.model.layers, pp);
    if (runs(s)) return pp;
  }
  return 1;
}

// The row's DP degree, or the one its GPUs leave; at least 1, for the defaults picked before the
// scenario is validated divide by it (degrees that leave no GPU are refused there, with the reason).
int data_parallel(const spec::Scenario& s) {
  const spec::Strategy& st = s.strategy;
  if (st.dp > 0) return st.dp;
  const std::optional<std::int64_t> replica = spec::replica_gpus(st, s.gpus);
  return replica ? static_cast<int>(s.gpus / *replica) : 1;
}

// The micro-batch where the row does not say: 1, or, where the software has no fallback for the
// shapes its fused softmax cannot take, the smallest micro-batch the kernel takes that divides
// the data-parallel rank's batch.
int default_micro_batch(spec::Scenario s, const Software& sw) {
  if (!sw.softmax_kernel_required) return 1;
  const int rank_batch = s.strategy.global_batch / std::max(1, data_parallel(s));
  for (int mb = 1; mb <= rank_batch; ++mb) {
    if (rank_batch % mb != 0) continue;
    s.strategy.micro_batch = mb;
    if (workload::megatron_softmax_fused(s)) return mb;
  }
  return 1;
}

// Sequence parallelism where the row does not say: on when the software always runs it, else on
// when the run could not have fitted in memory without it (Llama 3's 8K pre-training, which §3.3.2
// says ran without activation checkpointing), as it only ever lowers the memory.
bool default_sequence_parallel(spec::Scenario s, const Software& sw) {
  if (s.strategy.tp <= 1) return false;
  if (sw.tp_shards_sequence) return true;
  s.strategy.sequence_parallel = false;
  return !runs(s);
}

Case published_case(const core::CsvTable& t, const core::CsvRow& row, const Options& options) {
  const RowReader r(t, row);
  Case c;
  c.source = r.text("source");
  c.model = r.text("model");
  c.line = row.line;
  const std::string& notes = r.text("notes");
  // From a microsecond to the 32 years the simulator's clock holds; rates and MFU to match.
  if (const auto v = r.measurement("measured_iter_s", 1e-6, 1e9)) {
    c.quantity = Quantity::kIterationTime, c.measured = *v;
  } else if (const auto v = r.measurement("measured_tokens_per_s", 1e-3, 1e12)) {
    c.quantity = Quantity::kTokensPerSecond, c.measured = *v;
  } else if (const auto v = r.measurement("measured_tflops_per_gpu", 1e-3, 1e5)) {
    c.quantity = Quantity::kTflopsPerGpu, c.measured = *v;
  } else if (const auto v = r.measurement("measured_mfu", 1e-6, 1)) {  // a fraction, as in the published table
    c.quantity = Quantity::kMfu, c.measured = *v;
  } else {
    c.reason = "no measured quantity (iteration time, tokens/s, TFLOP/s or MFU)";
    return c;
  }
  c.megatron_convention = contains(c.source, "Narayanan");

  spec::Scenario& s = c.scenario;
  s.model = model_from_row(r, c.model);
  const std::string& cluster = r.text("cluster");
  if (cluster.empty() && !options.cluster) {
    c.reason = "no cluster: the row's cluster cell is empty and --cluster was not given";
    return c;
  }
  try {
    s.cluster = cluster.empty() ? *options.cluster : spec::cluster_preset(cluster);
    c.cluster_given = cluster.empty();
  } catch (const Error& e) {  // a row naming no preset: listed with the reason, its measurement kept
    c.reason = e.message() + (e.hint().empty() ? "" : " (" + e.hint() + ")");
    return c;
  }
  s.gpus = r.required("num_gpus");

  spec::Strategy& st = s.strategy;
  const std::optional<int> pp = r.integer("pp");
  const Software sw = software_of(c.source, c.model, notes, r.text("gpu"), pp.value_or(1));
  st.tp = r.integer("tp").value_or(s.cluster.gpus_per_node);
  st.cp = r.integer("cp").value_or(1);
  st.ep = r.integer("ep").value_or(1);
  st.dp = r.integer("dp").value_or(0);
  // torchtitan's docs do not state the sequence length; its default is 8192 (see the notes).
  st.seq_len = r.integer("seq_len").value_or(8192);
  s.model.max_seq = st.seq_len;
  st.global_batch = r.required("global_batch_seqs");
  parse_recompute(r.text("recompute"), sw, r, st);
  st.attention = sw.attention;
  st.zero_stage = sw.zero_stage;
  st.dtype = sw.dtype;
  st.grad_reduce_dtype = sw.grad_reduce;
  st.optimizer_step = sw.optimizer_step;
  st.grad_accumulation = sw.grad_accumulation;
  st.bias_grad_in_gemm = sw.bias_grad_in_gemm;
  st.bias_add_kernel = sw.bias_add_kernel;
  st.placement = sw.placement;
  st.overlap_tp_comm = sw.tp_comm_overlap || contains(c.model, "AsyncTP");
  st.tp_async_backward = sw.tp_async_backward;
  st.tp_backward_sms = sw.tp_backward_sms;
  st.overlap_dp_comm = sw.overlap_dp;
  st.sharded_collectives = sw.sharded_collectives;
  st.elementwise = sw.elementwise;
  st.pipeline_transfers = sw.pipeline_transfers;
  st.grad_sync = sw.grad_sync;
  st.cp_exchange = sw.cp_exchange;
  st.repeat_kv = sw.repeat_kv;
  st.fused_cross_entropy = sw.fused_cross_entropy;
  st.pp_scatter_gather = sw.pp_scatter_gather;
  st.launch_blocking = sw.launch_blocking;
  st.fsdp_root_reshards = sw.fsdp_root_reshards;
  if (!sw.hidden_dropout) s.model.hidden_dropout = 0;
  if (contains(c.model, "Float8") || contains(c.model, "FP8")) st.dtype = Dtype::kFp8;
  // The framework caches FP8 weights; a row that trains in BF16 has none to cache.
  st.fp8_weight_cache = sw.fp8_weight_cache && st.dtype == Dtype::kFp8;
  st.autocast_fp32_weights = sw.autocast_fp32_weights;

  const bool interleaved = contains(c.model, "Interleaved") || contains(notes, "nterleaved");
  st.schedule = Schedule::k1F1B;
  st.pp = pp.value_or(0);
  if (st.pp == 0) st.pp = default_pipeline(s);
  const Sc21Run* script = sc21_table1_run(c.source, s);
  if (script) {
    st.overlap_dp_comm = script->torch_ddp;
    const int per_stage = s.model.layers / st.pp;
    st.vp = script->layers_per_virtual_stage > 0 ? per_stage / script->layers_per_virtual_stage : 1;
  } else {
    st.vp = interleaved ? default_virtual_stages(s.model.layers, st.pp) : 1;
  }
  st.vp = r.integer("vp").value_or(st.vp);
  if (st.vp > 1) st.schedule = Schedule::kInterleaved;

  if (const auto mb = r.integer("micro_batch")) {
    st.micro_batch = *mb;
  } else if (script) {
    st.micro_batch = script->micro_batch;
  } else if (sw.micro_batches_equal_pp && st.pp > 1) {
    st.micro_batch = std::max(1, static_cast<int>(st.global_batch / (static_cast<double>(data_parallel(s)) * st.pp)));
  } else {
    st.micro_batch = default_micro_batch(s, sw);  // documented in the README
  }
  const std::string& sp = r.text("seq_parallel");
  if (!sp.empty() && sp != "yes" && sp != "no") {
    r.fail("seq_parallel", fmt::format("unknown sequence-parallel value {}", r.quoted("seq_parallel")),
           "valid: yes, no (or empty: the source's default)");
  }
  st.sequence_parallel = sp.empty() ? default_sequence_parallel(s, sw) : sp == "yes";
  return c;
}

Case vtrain_case(const core::CsvTable& t, const core::CsvRow& row, const Options& options) {
  const RowReader r(t, row);
  Case c;
  c.line = row.line;
  c.quantity = Quantity::kIterationTime;
  const std::optional<double> ms = r.measurement("iteration time (ms)", 1e-3, 1e12);
  if (!ms) r.fail("iteration time (ms)", kRequiredCell, {});
  c.measured = *ms / 1000;
  spec::Scenario& s = c.scenario;
  spec::ModelSpec& m = s.model;
  m.hidden = r.required("hidden size");
  m.heads = r.required("attention heads");
  m.kv_heads = m.heads;
  m.layers = r.required("# layers");
  m.ffn = spec::gpt_ffn(m.hidden);
  // GPT-2's 50,257 tokens, unpadded: vTrain's model and configs (src/config.py, src/model/gpt_model.py)
  // use them as they are, each TP rank holding vocab // tp of them.
  m.vocab = 50257;
  m.max_seq = r.required("sequence length");
  m.bias = true;
  m.tied_embeddings = true;
  m.hidden_dropout = 0.1;  // vTrain's layer passes 0.1 to bias_dropout_add (src/model/gpt_modeling.py)
  m.name = "GPT h" + std::to_string(m.hidden) + " L" + std::to_string(m.layers);
  c.model = m.name;
  s.cluster = options.cluster ? *options.cluster : spec::cluster_preset("dgx-a100-80g");
  c.cluster_given = options.cluster.has_value();
  s.gpus = r.required("# GPUs");
  c.source = s.gpus > s.cluster.gpus_per_node ? kVtrainMultiNode : kVtrainSingleNode;
  spec::Strategy& st = s.strategy;
  st.tp = r.required("tensor parallelism");
  st.dp = r.required("data parallelism");
  st.pp = r.required("pipeline parallelism");
  st.micro_batch = r.required("micro batch");
  st.global_batch = r.required("global batch");
  st.seq_len = m.max_seq;
  // Megatron-DeepSpeed as vTrain ran it: activation checkpointing, 1F1B, FP16, attention without
  // FlashAttention (its default), gradients all-reduced after backward without bucketing.
  st.recompute = Recompute::kFull;
  st.schedule = Schedule::k1F1B;
  st.dtype = Dtype::kFp16;
  st.grad_reduce_dtype = Dtype::kFp16;
  st.attention = AttentionKernel::kUnfused;
  st.overlap_dp_comm = false;
  st.fused_cross_entropy = false;
  st.host_reads_loss = true;
  // Megatron-DeepSpeed's layers (ParallelTransformerLayer.forward, which GPTModelPipe's layers
  // extend) make two scalars on the GPU with torch.tensor between attention and MLP, each a
  // blocking copy that waits for the compute stream.
  st.host_syncs_before_mlp = true;
  // Its ColumnParallelLinear (LinearWithGradAccumulationAndAsyncCommunication in
  // megatron/core/tensor_parallel/layers.py) adds the QKV projection's bias after the GEMM:
  // `output = torch.matmul(total_input, weight.t())`, then `output = output + bias`.
  st.bias_add_kernel = true;
  // DeepSpeed's throughput timer does not synchronise under its PipelineEngine: the sync in
  // ThroughputTimer.start() waits for two counted steps, and only DeepSpeedEngine.step() counts
  // them (PipelineEngine._exec_optimizer_step calls _take_model_step). The first and last stages
  // still wait at each micro-batch's load (Build's load_micro_batch).
  // Pipelines run in DeepSpeed's PipelineEngine (Megatron-DeepSpeed's GPTModelPipe). With TP > 1
  // it partitions each boundary tensor over the TP group (is_pipe_partitioned, is_grad_partitioned
  // = is_model_parallel): every rank sends 1/tp and the receiver all-gathers the pieces
  // (PartitionedTensor.full), and both ends pass the partition's layout through the host
  // (to_meta, and from_meta's meta.tolist()), which waits for the GPU. With TP 1 it sends whole
  // tensors with torch.distributed's send and recv, which the compute stream waits for while
  // the host runs on.
  st.pp_scatter_gather = true;
  // Its TrainSchedule sends each output at the stage's next step, in the send-before-receive
  // order of DeepSpeed since 2023 (the fix of DeepSpeed issue #2800), which these runs postdate.
  st.deferred_sends = true;
  st.pipeline_transfers = st.tp > 1 ? spec::PipelineTransfers::kHostSynchronised
                                    : spec::PipelineTransfers::kStreamOrdered;
  return c;
}

}  // namespace

std::vector<Case> read_table(std::string_view source_name, std::string_view text, const Options& options) {
  const core::CsvTable table = core::read_csv(source_name, text);
  const bool vtrain = table.column("iteration time (ms)") >= 0 || table.column("# GPUs") >= 0;
  if (vtrain) {
    require_columns(table, kVtrainColumns, "vTrain");
  } else {
    require_columns(table, kPublishedColumns, "published-runs");
  }
  std::vector<Case> cases;
  cases.reserve(table.rows.size());
  for (const core::CsvRow& row : table.rows) {
    Case c;
    try {
      c = vtrain ? vtrain_case(table, row, options) : published_case(table, row, options);
      if (c.reason.empty()) c.scenario = spec::complete_and_validate(std::move(c.scenario));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInternal) throw;
      if (!e.where().file.empty() && e.where().file == table.source) throw;  // malformed cell
      c.line = row.line;
      if (c.source.empty())
        c.source = vtrain ? kVtrainSingleNode : RowReader(table, row).text("source");
      c.reason = e.hint().empty() ? std::string(e.what()) : std::string(e.what()) + " (" + e.hint() + ")";
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace stepcast::validate
