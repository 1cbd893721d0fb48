// Parameter counts and the FLOP conventions used to report MFU, HFU and TFLOP/s.
//
// MFU convention (PaLM, Chowdhery et al. 2022, App. B; also llm-foundry and torchtitan):
//   model FLOPs per token = 6 * N + 6 * layers * heads * (head_dim + value_head_dim) * seq_len
//   (a layer with a sliding window or chunks of w < seq_len positions counts w instead of seq_len)
// where N counts every parameter a token multiplies by (all but the input embedding table; MoE:
// the routed experts a token visits, top_k, plus shared experts) and the attention term counts
// QK^T and PV without causal skipping: 12 * layers * heads * head_dim * seq_len where values are
// as wide as queries, as outside MLA. Recomputation is not model work: MFU excludes it, HFU
// includes it.
#pragma once

#include "spec/scenario.h"

namespace stepcast::workload {

struct ParamCounts {
  double per_layer_dense = 0;   // one dense transformer layer (attention + MLP + norms)
  double per_layer_moe = 0;     // one MoE layer, all experts
  double per_layer_moe_active = 0;  // one MoE layer, the experts one token visits
  double embedding = 0;         // input embedding (+ learned positions)
  double output = 0;            // output projection; 0 when tied to the embedding
  double final_norm = 0;
  double total = 0;             // all parameters
  double active = 0;            // parameters one token multiplies by (N of the MFU convention)
};

ParamCounts param_counts(const spec::ModelSpec& m);

/// Parameters one GPU holds for one layer of the kind given (MoE or dense): routed experts split
/// by EP, everything split by TP (before ZeRO sharding).
double layer_params_per_gpu(const ParamCounts& p, const spec::Strategy& st, bool moe_layer);

/// The same for one average layer of its stage: dense and MoE layers in the model's proportion.
double layer_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st);

/// Parameters one GPU of the most loaded stage holds: layers / pp average layers plus the
/// embedding or the output head (with tied embeddings, the last stage's copy), whichever is
/// larger (both when pp == 1), split by TP (before ZeRO sharding).
double stage_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st);

/// Parameters one GPU of stage `stage` holds as the pipeline lays the layers out (ChunkLayout:
/// BLOOM's 70 layers on 12 stages, 5, 6 x 10, 5), average layers of the model's mix, plus the
/// embedding on the first stage and the output head on the last, split by TP: what that stage's
/// data-parallel reduction, parameter gather and optimizer step move.
double stage_own_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st, int stage);
/// The same for a stage whose layers (ChunkLayout::stage) are counted already.
double stage_own_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st, int stage,
                                double layers);

/// Parameters one GPU holds of the input embedding (the first stage's edge), split by TP.
double embedding_params_per_gpu(const ParamCounts& p, const spec::Strategy& st);

/// Parameters one GPU holds of the output head and final norm (the last stage's edge), split by
/// TP, with the tied embedding's copy (tied_embedding_copy_params).
double head_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st);

/// Whether FSDP wraps the model with a root unit (embeddings, final norm and head): with
/// prefetched ZeRO-3 gathers and no pipeline, whose stages wrap none.
inline bool has_fsdp_root_unit(const spec::Strategy& st) { return st.prefetches_zero3_gathers() && st.pp <= 1; }

/// Parameters one GPU holds of that root unit (embedding_params_per_gpu + head_params_per_gpu),
/// before ZeRO sharding; 0 where there is none.
double fsdp_root_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st);

/// Tied embeddings across a pipeline: the last stage keeps its own copy of the word embedding as
/// the output head (Megatron's `word_embeddings` on the last stage, DeepSpeed's TiedLayerSpec),
/// vocab x hidden / tp parameters per GPU with weights, gradients and optimizer state of their own;
/// 0 when the embeddings are untied or the whole model is one stage.
double tied_embedding_copy_params(const spec::ModelSpec& m, const spec::Strategy& st);

/// Model FLOPs per token under the MFU convention above, for sequences of seq_len tokens; `p`
/// is param_counts(m).
double model_flops_per_token(const ParamCounts& p, const spec::ModelSpec& m, int seq_len);

/// The attention term of model_flops_per_token: QK^T and PV, forward and backward.
double attention_flops_per_token(const spec::ModelSpec& m, int seq_len);

/// FLOPs per iteration under Narayanan et al. SC'21 Eq. 3, which assumes full recomputation:
/// 96 B s l h^2 (1 + s / (6h) + V / (16 l h)). Their Tables 1 and 2 report TFLOP/s in it.
double megatron_eq3_flops(const spec::ModelSpec& m, int global_batch, int seq_len);

}  // namespace stepcast::workload
