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
  EXPECT_DOUBLE_EQ(sharded_forward_s(kPass, 4, 0), overlapped_s(10, {kPass.beside_group(4, 1)}));
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
                   2 + overlapped_s(10, {kPass.beside_group(1, 1), kPass.beside_group(6, 2)}));
  // Without copies the two collectives start with the kernels.
  EXPECT_DOUBLE_EQ(sharded_backward_s(kPass, 4, 0, 4, 0), overlapped_s(10, {kPass.beside_group(8, 2)}));
}

}  // namespace
}  // namespace stepcast::analytic
