// Which ZeRO-3 collectives run beside a pipeline stage's sends in the steady state, over the
// passes it runs in one step (workload::stage_order), as the simulator's graph orders them
// (workload/build.cpp).
#pragma once

#include "spec/strategy.h"

namespace stepcast::analytic {

/// ZeRO-3 collectives beside stage `stage`'s sends, by kind: per micro-batch in the steady state
/// (collectives_beside_sends), per step in the cool-down (collectives_beside_cool_down_sends).
struct CollectivesBesideSends {
  double gathers = 0, scatters = 0;
};

/// The collectives beside the sends of stage `stage` (0 <= stage < st.pp) that the next pass
/// waits for, averaged over the micro-batches. A send delays the next pass where that pass's input
/// has come with it (Slot::paired, the forward/backward pairs between the warm-up and the
/// cool-down); in the warm-up and the cool-down a stage waits for its neighbours, the fill and the
/// drain, which the pipeline's bubble prices. Beside such a send run:
///  - after a backward that completes the gradients, its last layer's reduce-scatter, queued on
///    the gradient stream as the layer ends (FSDP2's FSDPParamGroup.post_backward, on the
///    reduce-scatter stream); ZB-H1's input-gradient pass leaves it to the weight gradient, which
///    sends nothing;
///  - before a backward, the backward's first gather: FSDPState._pre_backward has no wait for the
///    compute stream, so it is prefetched as any other gather (workload/build.cpp, layer_pass);
///  - before a forward, its first gather only where nothing waits for the send (`async_sends`):
///    FSDP's root pre-forward starts it with the forward (FSDPState._root_pre_forward,
///    all_gather_stream.wait_stream(current_stream)), which a blocking send precedes
///    (torch.distributed.pipelining's _wait_batch_p2p after each action's sends).
CollectivesBesideSends collectives_beside_sends(const spec::Strategy& st, int stage, bool async_sends);

/// The collectives beside the sends of stage `stage`'s backwards that another backward follows
/// (its cool-down, and the last paired backward before it), over the step. Such a backward's send
/// runs beside its last layer's reduce-scatter (FSDPParamGroup.post_backward) and the next
/// backward's first gather (FSDPState._pre_backward waits for nothing, so the gather starts as
/// the backward before it ends), and, blocking, the next backward waits for it
/// (torch.distributed.pipelining's _wait_batch_p2p after each action's sends). The stage's last
/// backward is left out: the optimizer follows it, and the drain's hop prices its send
/// (estimate_with, hop_shared); so are the first stage's first-chunk backwards, which send nothing.
/// Counted under interleaving only, where a stage's way runs through its cool-down
/// (longest_interleaved_way); under 1F1B the last stage has none and the others' wait for the
/// drain (longest_1f1b_way), and ZB-H1 leaves the reduce-scatters to its weight-gradient passes.
CollectivesBesideSends collectives_beside_cool_down_sends(const spec::Strategy& st, int stage);

}  // namespace stepcast::analytic
