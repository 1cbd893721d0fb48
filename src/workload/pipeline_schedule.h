// The order in which one pipeline stage runs its passes in one optimizer step, per schedule.
//
//   for (const workload::Slot& slot : workload::stage_order(spec::Schedule::k1F1B, 4, 1, 8, 0)) ...
//   // stage 0 of 4, 8 micro-batches: F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7
//
// Schedules (p stages, v virtual chunks per stage, m micro-batches, stage s):
//  - GPipe (Huang et al. 2019): every forward, then every backward in reverse order.
//  - 1F1B (PipeDream-Flush, Narayanan et al. 2021 §2.2.1): p-s-1 warm-up forwards, then one
//    forward and one backward alternately, then the remaining backwards.
//  - Interleaved 1F1B (Narayanan et al. 2021 §2.2.2, Megatron-LM's schedule): micro-batches go
//    through the chunks in groups of p; (p-s-1)*2 + (v-1)*p warm-up forwards.
//  - ZB-H1 (Qi et al. 2024 §3.1): 1F1B with each backward split into B (input gradient) and
//    W (weight gradient); stage s defers its W by s micro-batches into the drain, which keeps
//    1F1B's peak memory and shrinks the bubble to (p-1)(F + B - W).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spec/model_spec.h"
#include "spec/strategy.h"

namespace stepcast::workload {

enum class Pass : std::uint8_t {
  kForward,
  kBackward,        // the whole backward, or only the input gradient under ZB-H1
  kWeightGradient,  // ZB-H1's deferred weight gradient
};

struct Slot {
  Pass pass = Pass::kForward;
  int chunk = 0;  // virtual chunk on this stage, 0..v-1; model chunk = chunk * p + stage
  int micro_batch = 0;
  // One of the forward/backward pairs between the warm-up and the cool-down (GPipe has none),
  // where each pass's input comes in the exchange that sends the pass before it out (Megatron's
  // send_forward_recv_backward and send_backward_recv_forward, torch.distributed.pipelining's
  // fwd_send_bwd_recv), instead of from a neighbour the stage waits for.
  bool paired = false;
};

/// The passes stage `stage` runs, in order. REQUIRES: 0 <= stage < stages, chunks >= 1 (and 1
/// unless interleaved), micro_batches >= 1.
std::vector<Slot> stage_order(spec::Schedule schedule, int stages, int chunks, int micro_batches, int stage);

/// How many of a stage's first `k` forwards run chunk `chunk` (stage_order's chunk order:
/// micro-batches go through the chunks in groups of `stages`, a last group shorter where `stages`
/// does not divide them), counted without building the order. A stage's backwards run the chunks
/// in reverse: the backwards of chunk c are the forwards of chunk `chunks - 1 - c` in this count.
/// REQUIRES: 0 <= k <= chunks * micro_batches, 0 <= chunk < chunks.
int forwards_of_chunk_before(int k, int chunk, int stages, int chunks, int micro_batches);

/// The warm-up forwards stage `stage` runs before its first backward (stage_order), at most all of
/// them: the 1F1B phase pairs the rest with backwards.
int warm_up_forwards(spec::Schedule schedule, int stages, int chunks, int micro_batches, int stage);

/// When stage `stage` starts reducing each chunk's gradients, over its passes `order`
/// (stage_order). The chunk's last backward (ZB-H1: weight gradient) completes them. Its buckets
/// start as that pass produces them (`streams`), or, with aligned sync, all together after the
/// pass `stage` grad passes later (after the stage's last pass where there is none), so that every
/// stage starts a chunk's reduction at once; under 1F1B stage 0 streams them; after-backward sync
/// starts every chunk's after the stage's last grad pass (spec::GradSync).
struct GradSyncSlots {
  // By chunk, the index in `order` of the pass that streams its buckets, or after which they start
  // together; order.size() where there is none.
  std::vector<std::size_t> streams, starts_after;
};
GradSyncSlots grad_sync_slots(const std::vector<Slot>& order, const spec::Strategy& st, int stage);

/// One step of DeepSpeed's PipelineEngine under its TrainSchedule: stages alternate forward and
/// backward steps (stage s runs forwards on the steps of its own parity), 2 (m + p - 1) of them,
/// and a step whose micro-batch is out of range only carries the previous step's send.
struct DeepSpeedStep {
  bool forward = true;
  int micro_batch = -1;  // -1: an idle step
};

/// The steps of stage `stage`, by the formulas of deepspeed/runtime/pipe/schedule.py
/// (TrainSchedule._step_to_micro_batch). Its passes come in stage_order's 1F1B order.
/// REQUIRES: 0 <= stage < stages, micro_batches >= 1.
std::vector<DeepSpeedStep> deepspeed_train_steps(int stages, int micro_batches, int stage);

/// How `layers` are split over `chunks` model chunks (chunk j runs on stage j % pp): an even
/// share, the spare layers going to the middle chunks first, then to the first and the last,
/// which carry the embedding and the output head (Llama 3's 126 layers on 16 stages: 7, 8 x 14,
/// 7). The division is done once, for loops over the chunks or the stages.
/// REQUIRES: 1 <= chunks <= layers.
class ChunkLayout {
 public:
  ChunkLayout(int layers, int chunks);
  /// Layers of chunk `chunk`, 0 <= chunk < chunks. The spare layers are handed out in the order
  /// 1, 2, ..., chunks-2, 0, chunks-1.
  int chunk(int chunk) const {
    if (chunk == 0) return first_;
    return base_ + (chunk <= middle_spares_ ? 1 : 0);
  }
  /// Layers of the chunks before chunk `chunk`, 0 <= chunk < chunks: the first chunk's and those
  /// of the middle chunks 1 .. chunk-1, which hold the first spare layers.
  int layers_before(int chunk) const {
    return chunk == 0 ? 0 : first_ + (chunk - 1) * base_ + std::min(chunk - 1, spare_);
  }
  /// Whether the middle chunks (all but the first and the last) hold alike many layers.
  bool middle_chunks_alike() const { return spare_ == 0 || spare_ >= chunks_ - 2; }
  /// Layers of stage `stage` of `pp` stages: the sum over its chunks. REQUIRES: pp divides chunks.
  int stage(int pp, int stage) const {
    int count = 0;
    for (int j = stage; j < chunks_; j += pp) count += chunk(j);
    return count;
  }
  /// Of those, the MoE layers of `model` (spec::ModelSpec::is_moe_layer).
  int stage_moe_layers(const spec::ModelSpec& model, int pp, int stage) const;

 private:
  int chunks_, base_, spare_;
  // Found once, as the estimate asks for some 20 chunks: the middle chunks 1 .. middle_spares_
  // hold a spare layer each; the first chunk's layers (its spare comes after theirs).
  int middle_spares_, first_;
};

/// ChunkLayout::stage_moe_layers of `model` over pp * vp chunks.
int stage_moe_layer_count(const spec::ModelSpec& model, int pp, int vp, int stage);

}  // namespace stepcast::workload
