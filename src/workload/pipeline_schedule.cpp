#include "workload/pipeline_schedule.h"

#include <algorithm>

#include "core/error.h"

namespace stepcast::workload {
namespace {

// Interleaved order of the k-th forward (or backward) of a stage: micro-batches in groups of p,
// each group through every chunk before the next group starts (Megatron-LM's
// get_model_chunk_id); a last, shorter group when p does not divide m.
std::vector<Slot> chunk_order(Pass pass, int stages, int chunks, int micro_batches) {
  std::vector<Slot> order;
  order.reserve(static_cast<std::size_t>(chunks) * micro_batches);
  for (int first = 0; first < micro_batches; first += stages) {
    const int last = std::min(first + stages, micro_batches);
    for (int c = 0; c < chunks; ++c) {
      const int chunk = pass == Pass::kForward ? c : chunks - 1 - c;
      for (int mb = first; mb < last; ++mb) order.push_back({pass, chunk, mb});
    }
  }
  return order;
}

// Warm-up forwards, then forward/backward pairs, then the remaining backwards.
std::vector<Slot> one_forward_one_backward(const std::vector<Slot>& forwards,
                                           const std::vector<Slot>& backwards, int warmup) {
  const int total = static_cast<int>(forwards.size());
  warmup = std::min(warmup, total);
  std::vector<Slot> order(forwards.begin(), forwards.begin() + warmup);
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(forwards[static_cast<std::size_t>(warmup + k)]);
    order.push_back(backwards[static_cast<std::size_t>(k)]);
    order.end()[-2].paired = order.end()[-1].paired = true;
  }
  order.insert(order.end(), backwards.begin() + (total - warmup), backwards.end());
  return order;
}

std::vector<Slot> zero_bubble_h1(int stages, int micro_batches, int stage) {
  const auto forwards = chunk_order(Pass::kForward, stages, 1, micro_batches);
  const auto backwards = chunk_order(Pass::kBackward, stages, 1, micro_batches);
  std::vector<Slot> order;
  int next_w = 0;
  const int warm_up = warm_up_forwards(spec::Schedule::kZeroBubbleH1, stages, 1, micro_batches, stage);
  for (const Slot& slot : one_forward_one_backward(forwards, backwards, warm_up)) {
    order.push_back(slot);
    // After the k-th B, run the W of micro-batch k - stage: the last stage defers most, so its
    // input gradients reach the stages before it sooner.
    if (slot.pass == Pass::kBackward && slot.micro_batch - stage >= 0) {
      order.push_back({Pass::kWeightGradient, 0, next_w++});
    }
  }
  for (; next_w < micro_batches; ++next_w) order.push_back({Pass::kWeightGradient, 0, next_w});
  return order;
}

}  // namespace

std::vector<Slot> stage_order(spec::Schedule schedule, int stages, int chunks, int micro_batches, int stage) {
  STEPCAST_ASSERT(stages >= 1 && stage >= 0 && stage < stages && chunks >= 1 && micro_batches >= 1,
                  "stage_order needs 0 <= stage < stages and positive chunks and micro-batches");
  STEPCAST_ASSERT(chunks == 1 || schedule == spec::Schedule::kInterleaved,
                  "only the interleaved schedule has virtual chunks");
  const auto forwards = chunk_order(Pass::kForward, stages, chunks, micro_batches);
  switch (schedule) {
    case spec::Schedule::kGpipe: {
      std::vector<Slot> order = forwards;
      for (int mb = micro_batches - 1; mb >= 0; --mb) order.push_back({Pass::kBackward, 0, mb});
      return order;
    }
    case spec::Schedule::k1F1B:
      return one_forward_one_backward(forwards, chunk_order(Pass::kBackward, stages, 1, micro_batches),
                                      warm_up_forwards(schedule, stages, chunks, micro_batches, stage));
    case spec::Schedule::kInterleaved:
      return one_forward_one_backward(forwards, chunk_order(Pass::kBackward, stages, chunks, micro_batches),
                                      warm_up_forwards(schedule, stages, chunks, micro_batches, stage));
    case spec::Schedule::kZeroBubbleH1:
      return zero_bubble_h1(stages, micro_batches, stage);
  }
  return forwards;
}

int forwards_of_chunk_before(int k, int chunk, int stages, int chunks, int micro_batches) {
  const int full_groups = micro_batches / stages, group_slots = stages * chunks;
  const int in_full_groups = full_groups * group_slots;
  if (k <= in_full_groups) return k / group_slots * stages + std::clamp(k % group_slots - chunk * stages, 0, stages);
  const int last_group = micro_batches - full_groups * stages;
  return full_groups * stages + std::clamp(k - in_full_groups - chunk * last_group, 0, last_group);
}

int warm_up_forwards(spec::Schedule schedule, int stages, int chunks, int micro_batches, int stage) {
  const int total = chunks * micro_batches;
  switch (schedule) {
    case spec::Schedule::kGpipe: return total;
    case spec::Schedule::kInterleaved:
      // Megatron-LM's forward_backward_pipelining_with_interleaving: num_warmup_microbatches.
      return std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
    case spec::Schedule::k1F1B:
    case spec::Schedule::kZeroBubbleH1: break;
  }
  return std::min(stages - stage - 1, total);
}

std::vector<DeepSpeedStep> deepspeed_train_steps(int stages, int micro_batches, int stage) {
  STEPCAST_ASSERT(stages >= 1 && stage >= 0 && stage < stages && micro_batches >= 1,
                  "deepspeed_train_steps needs 0 <= stage < stages and positive micro-batches");
  const int total = 2 * (micro_batches + stages - 1);
  std::vector<DeepSpeedStep> steps(static_cast<std::size_t>(total));
  for (int t = 0; t < total; ++t) {
    DeepSpeedStep& step = steps[static_cast<std::size_t>(t)];
    step.forward = t % 2 == stage % 2;
    // The even- and odd-step forward and backward ids of TrainSchedule, in one expression each.
    const int mb = step.forward ? t / 2 - stage / 2
                   : t % 2 == 0 ? t / 2 - stages + (stage + 1) / 2
                                : (t - 1) / 2 - stages + 1 + stage / 2;
    if (mb >= 0 && mb < micro_batches) step.micro_batch = mb;
  }
  return steps;
}

ChunkLayout::ChunkLayout(int layers, int chunks)
    : chunks_(chunks),
      base_(chunks >= 1 ? layers / chunks : 0),
      spare_(chunks >= 1 ? layers % chunks : 0),
      middle_spares_(std::min(spare_, chunks - 2)),
      first_(base_ + (std::max(0, chunks - 2) < spare_ ? 1 : 0)) {
  STEPCAST_ASSERT(chunks >= 1 && layers >= chunks, "a chunk layout needs 1 <= chunks <= layers");
}

GradSyncSlots grad_sync_slots(const std::vector<Slot>& order, const spec::Strategy& st, int stage) {
  const auto chunks = static_cast<std::size_t>(st.vp);
  const Pass grad_pass = st.schedule == spec::Schedule::kZeroBubbleH1 ? Pass::kWeightGradient : Pass::kBackward;
  std::vector<std::size_t> grad_slots;
  std::vector<std::size_t> last_grad(chunks, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i].pass != grad_pass) continue;
    last_grad[static_cast<std::size_t>(order[i].chunk)] = grad_slots.size();
    grad_slots.push_back(i);
  }
  GradSyncSlots g{std::vector<std::size_t>(chunks, order.size()), std::vector<std::size_t>(chunks, order.size())};
  if (st.grad_sync == spec::GradSync::kAfterBackward && st.pp > 1) {
    g.starts_after.assign(chunks, grad_slots.back());
    return g;
  }
  const bool aligned = st.grad_sync == spec::GradSync::kAligned && st.pp > 1 && (st.vp > 1 || stage > 0);
  for (std::size_t c = 0; c < chunks; ++c) {
    if (!aligned) {
      g.streams[c] = grad_slots[last_grad[c]];
      continue;
    }
    const std::size_t k = last_grad[c] + static_cast<std::size_t>(stage);
    g.starts_after[c] = k < grad_slots.size() ? grad_slots[k] : order.size() - 1;
  }
  return g;
}

int ChunkLayout::stage_moe_layers(const spec::ModelSpec& model, int pp, int stage) const {
  int count = 0;
  for (int j = stage; j < chunks_; j += pp) {
    const int first = layers_before(j);
    count += model.moe_layers_before(first + chunk(j)) - model.moe_layers_before(first);
  }
  return count;
}

int stage_moe_layer_count(const spec::ModelSpec& model, int pp, int vp, int stage) {
  return ChunkLayout(model.layers, pp * vp).stage_moe_layers(model, pp, stage);
}

}  // namespace stepcast::workload
