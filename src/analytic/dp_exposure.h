// The closed form's data-parallel collectives beside a stage's passes (analytic::estimate).
// Internal to analytic.
#pragma once

#include "analytic/layer_passes.h"

namespace stepcast::analytic {

// A stage's data-parallel collectives overlapped with its passes (the gradient buckets behind
// the backward, ZeRO-1/2's parameter gathers ahead of the forward): the stage's `layers` run in
// `vp` chunks, whose turns come a group of `group` micro-batches apart.
struct DpWindow {
  double layers = 0;
  int vp = 1;
  double group = 1;
};

// Seconds that overlapped collectives expose, and the time the kernels beside them lost.
struct Exposure {
  double seconds = 0, stretch = 0;
};

// `comm` seconds of reductions beside `stream` (with `streams`, started as each layer's gradient
// is complete: a chunk's one a layer through its last pass, the last as that pass ends; else a
// chunk's at once after it). They run one after another on their stream, each from the moment
// it is queued, while the kernels of the window run slowed beside them, and alone in
// the stage's `idle` wait between two rounds; what is left when the last backward ends is
// exposed, and so is the time the kernels lost (`stretch`); at least the `last` collective, which
// nothing follows. The gathers are the same in reverse: each chunk's must be done before its turn.
// `in_pass`: where in each layer's pass the collectives run, as the CP ring's links see them
// (PassStream::beside_group).
Exposure dp_exposure(double comm, double last, const PassStream& stream, bool streams, double idle,
                     const DpWindow& w, Span in_pass);

}  // namespace stepcast::analytic
