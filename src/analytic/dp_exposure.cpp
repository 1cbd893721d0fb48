#include "analytic/dp_exposure.h"

#include <algorithm>

namespace stepcast::analytic {

Exposure dp_exposure(double comm, double last, const PassStream& stream, bool streams, double idle,
                     const DpWindow& w, Span in_pass) {
  const double pass = stream.alone();
  const double per_layer = pass / std::max(1.0, w.layers);
  const Phase beside = stream.beside_group(comm, 1, in_pass);
  const double slowdown = pass > 0 ? beside.beside / pass : 1;
  const double drain = slowdown * beside.rate;  // communication done per second of the stream's
  // The stream seconds from chunk c's gradients being complete to the end of the pass.
  const double chunk_pass = pass / w.vp;
  const auto window = [&](int c) {
    return std::max(0.0, chunk_pass * (c * w.group + (streams ? 1 : 0)) - (streams ? per_layer : 0));
  };
  // Walk the window from the first chunk's turn: `wall` seconds elapsed, `backlog` seconds of
  // communication queued and not yet done.
  const double first = window(w.vp - 1);
  double wall = 0, backlog = 0, left = first;
  const auto advance = [&](double stream_s) {
    if (backlog >= stream_s * drain) {
      wall += stream_s * slowdown;
      backlog -= stream_s * drain;
    } else {
      const double busy = backlog / drain;  // stream seconds until the queue is empty
      wall += busy * slowdown + (stream_s - busy);
      backlog = 0;
    }
  };
  for (int c = w.vp - 1; c >= 0; --c) {
    const double ready = window(c);
    advance(left - ready);
    left = ready;
    backlog += comm / w.vp;
    // Chunk c's round ends with its last pass, beside which its buckets start as each layer's
    // gradient is complete; then the stage waits for the next chunk's first micro-batch, its
    // kernels idle and its queue draining at the link's full rate.
    if (c > 0 && idle > 0) {
      const double round_end = chunk_pass * c * w.group;
      advance(left - round_end);
      left = round_end;
      backlog = std::max(0.0, backlog - idle);
    }
  }
  advance(left);
  // The stretch is never negative: wall and first can differ by a rounding residue (-4e-17 s).
  return {std::max(last, wall + backlog - first), std::max(0.0, wall - first)};
}

}  // namespace stepcast::analytic
