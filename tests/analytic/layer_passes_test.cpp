#include "analytic/layer_passes.h"

#include <gtest/gtest.h>

namespace stepcast::analytic {
namespace {

// Kernels of 10 s alone, 20 s beside one collective, 30 s beside two; no TP communication.
constexpr PassStream kPass{.kernels = 10, .beside = 20, .beside_two = 30};

TEST(LayerPasses, Fsdp2sForwardGatherRunsBesideTheKernelsNotBesideTheCopyOut) {
  // The copy out (1 s) first; then the gather (4 s) beside the kernels, which do 4/20 of their
  // work meanwhile and the rest alone: 1 + 4 + 8. Spread over the copy and the kernels alike, the
  // gather would have hidden partly behind the copy (12.9 s).
  EXPECT_DOUBLE_EQ(sharded_forward_s(kPass, 4, 1), 13);
  EXPECT_DOUBLE_EQ(sharded_forward_s(kPass, 4, 0), overlapped_s(10, {kPass.beside_group(4, 1, kWholePass)}));
  // A gather that outlasts the kernels runs on beside the next copy out: a layer takes the
  // slowed kernels and the copy, or the gather where that is longer, as the gathers follow one
  // another on their stream.
  EXPECT_DOUBLE_EQ(sharded_forward_s(kPass, 20.5, 1), 21);
  EXPECT_DOUBLE_EQ(sharded_forward_s(kPass, 30, 1), 30);
}

TEST(LayerPasses, Fsdp2sBackwardGatherWaitsForTheCopyOutWhileTheReduceScatterStartsBesideIt) {
  // No gather: the copy in (1 s) and then the reduce-scatter run beside the copy out (2 s), which
  // leaves 4 s of the scatter beside the kernels: 2 + 4 + 10 (1 - 4/20).
  EXPECT_DOUBLE_EQ(sharded_backward_s(kPass, 0, 1, 5, 2), 14);
  // A copy in longer than the copy out leaves the gather the link to itself for the rest of it:
  // 1 s of the gather alone, then 2 x 3 s of both at once, beside the kernels.
  EXPECT_DOUBLE_EQ(sharded_backward_s(kPass, 4, 3, 3, 2),
                   2 + overlapped_s(10, {kPass.beside_group(1, 1, kWholePass), kPass.beside_group(6, 2, kWholePass)}));
  // Without copies the two collectives start with the kernels.
  EXPECT_DOUBLE_EQ(sharded_backward_s(kPass, 4, 0, 4, 0), overlapped_s(10, {kPass.beside_group(8, 2, kWholePass)}));
}

TEST(LayerPasses, CommunicationStartedWithAPassMeetsItsFirstKernelsAtTheirOwnSlowdown) {
  // A kernel of 4 s alone (8 s beside a collective) before one of 6 s that nothing slows: a 4 s
  // collective started with the pass runs beside the first, which does half its work meanwhile,
  // 4 + 2 + 6. Spread over both at their average (10 s alone, 14 s beside), it would have cost
  // the pass less: 4 + 10 (1 - 4/14).
  KernelOrder order;
  order.add({4, 8, 8});
  order.add({6, 6, 6});
  PassStream pass{.kernels = 10, .beside = 14, .beside_two = 14};
  EXPECT_DOUBLE_EQ(overlapped_s(10, {pass.beside_group(4, 1, kWholePass)}), 4 + 10 * (1 - 4.0 / 14));
  pass.order = &order;
  EXPECT_DOUBLE_EQ(pass.overlapped({pass.beside_group(4, 1, kWholePass)}), 12);
  // One kernel in order is the pass's average.
  KernelOrder whole;
  whole.add({10, 20, 30});
  PassStream one = kPass;
  one.order = &whole;
  EXPECT_DOUBLE_EQ(sharded_backward_s(one, 4, 3, 3, 2), sharded_backward_s(kPass, 4, 3, 3, 2));
}

TEST(LayerPasses, Fsdp2sForwardGatherOfAMoeLayerStartsBesideTheMoeLayerTwoBack) {
  // A dense layer (copy out 1 s, kernels 10 s) between MoE layers (copy out 5 s, kernels 12 s,
  // gathers 40 s; the dense gather 2 s). The next MoE gather waits for the previous MoE layer's
  // copy out and the dense gather only, so it runs beside that layer's kernels: 12 s ahead.
  const double head = forward_head_start(12, 5, 2);
  EXPECT_DOUBLE_EQ(head, 12);
  // The dense layer waits for what is left of it, 40 - 12: the pair takes the MoE copy out and
  // gather (5 + 12 + 28 = 5 + 40), not the MoE layer's copy out and kernels and the gather (57).
  EXPECT_DOUBLE_EQ(sharded_forward_s(kPass, 40, 1, head), 28);
  // Layers alike gain nothing: a gather that outlasts a layer's kernels leaves them no head start,
  // and one they outlast leaves no wait to hide.
  EXPECT_DOUBLE_EQ(forward_head_start(10, 1, 30), 0);
  EXPECT_DOUBLE_EQ(sharded_forward_s(kPass, 4, 1, forward_head_start(10, 1, 4)), sharded_forward_s(kPass, 4, 1));
  // Without FSDP2's copy out the gather waits for the layer before.
  EXPECT_DOUBLE_EQ(forward_head_start(12, 0, 2), 0);
}

TEST(LayerPasses, CpRingSharesTheGradientGroupsLinksForAllItsSecondsNotOnlyWhatItExposes) {
  // A ring of 3 s beside attention kernels of 4 s alone, 5 s beside one collective (the ring's
  // own SMs), 6 s beside two, in a pass of 10 s of kernels (20 s beside one collective).
  PassStream pass = kPass;
  pass.side[0] = {.seconds = 3, .times = 1, .window = {4, 5, 6}};
  // Alone on its links it hides behind the attention but for 0.6 s: 3 s beside it, then the
  // remaining 2/5 of it alone (3 + 1.6 - 4).
  EXPECT_DOUBLE_EQ(pass.alone(), 10.6);
  // Beside one of the group's collectives on the same links it gets half the bandwidth: 6 s,
  // beside attention kernels that now share the SMs with two collectives (6 s): 1 s exposed.
  const Phase beside = pass.beside_group(40, 1, kWholePass);
  EXPECT_DOUBLE_EQ(beside.beside, 21);
  // The group's collective loses the ring's 3 s on the links, not the 1 s it exposes: a layer
  // whose gather outlasts its kernels takes the gather and the ring (the links carry both).
  EXPECT_DOUBLE_EQ(beside.rate, 18.0 / 21);
  EXPECT_DOUBLE_EQ(sharded_forward_s(pass, 40, 0), 43);
  // Beside the gather and the reduce-scatter at once it gets a third (9 s beside the attention's
  // 6 s: 3 s exposed).
  EXPECT_DOUBLE_EQ(pass.beside_group(40, 2, kWholePass).beside, 30 + 3);
  // Recomputation runs a share of it again: the share's seconds on the links and its exposure.
  pass.side[1] = pass.side[0].scaled(0.5);
  EXPECT_DOUBLE_EQ(pass.alone(), 10.9);
  EXPECT_DOUBLE_EQ(pass.beside_group(40, 1, kWholePass).rate, (21.5 - 4.5) / 21.5);
}

TEST(LayerPasses, ACollectiveStartedWithThePassMeetsTheCpRingOnlyForWhatOutlastsTheKernelsBeforeIt) {
  // The ring of the test above, after 8 s of the pass's kernels (beside one collective): the MLP
  // block's backward before the attention's. Its window spans 8 to 13 s of the pass.
  PassStream pass = kPass;
  pass.side[0] = {.seconds = 3, .times = 1, .window = {4, 5, 6}, .lead = 8};
  // A bucket of 6 s started with the pass is done before the ring starts: the ring keeps its
  // links (beside the attention slowed as the pass's kernels are, 5 s, then the remaining 1/6 of
  // it: 0.5 s exposed, not 1 s) and the bucket loses none of them.
  const Phase before = pass.beside_group(6, 1, {0, 6});
  EXPECT_DOUBLE_EQ(before.beside, 20 + 0.5);
  EXPECT_DOUBLE_EQ(before.rate, 1);
  // One of 10.5 s meets half the window: half the ring's seconds on the links, half its exposure.
  const Phase half = pass.beside_group(10.5, 1, {0, 10.5});
  EXPECT_DOUBLE_EQ(half.rate, (half.beside - 1.5) / half.beside);
  EXPECT_DOUBLE_EQ(half.beside, 20 + 0.5 * 1 + 0.5 * 0.5);
  // One that outlasts the window meets all of it, as a queue that never empties does.
  EXPECT_DOUBLE_EQ(pass.beside_group(13, 1, {0, 13}).beside, pass.beside_group(13, 1, kWholePass).beside);
  EXPECT_DOUBLE_EQ(pass.beside_group(13, 1, {0, 13}).rate, 18.0 / 21);
  // A phase that starts after the window has ended (the reduce-scatter's after the gather's) meets
  // none of it.
  EXPECT_DOUBLE_EQ(pass.beside_group(2, 1, {13, 15}).rate, 1);
}

}  // namespace
}  // namespace stepcast::analytic
