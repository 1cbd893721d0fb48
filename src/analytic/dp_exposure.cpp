#include "analytic/dp_exposure.h"

#include <algorithm>

namespace stepcast::analytic {

Exposure dp_exposure(double comm, double last, const PassStream& stream, bool streams, double idle,
                     const DpWindow& w, Span in_pass) {
  // Nothing to move exposes nothing (ZeRO-3 reduces per layer): the walk would return its
  // rounding residue, 1e-16 s.
  if (comm <= 0) return {};
  const double pass = stream.alone();
  const double per_layer = pass / std::max(1.0, w.layers);
  const Phase beside = stream.beside_group(comm, 1, in_pass);
  const double slowdown = pass > 0 ? beside.beside / pass : 1;
  const double drain = slowdown * beside.rate;  // communication done per second of the stream's
  // Stream seconds left when chunk c's last pass starts and when it ends (a chunk's buckets wait
  // for its last micro-batch: Megatron-LM's register_grad_ready counts gradients only then).
  const double chunk_pass = pass / w.vp;
  const auto pass_end = [&](int c) { return chunk_pass * c * w.group; };
  // Walk the window from chunk vp - 1's last pass: `wall` seconds elapsed, `backlog` seconds of
  // communication queued and not yet done, `left` stream seconds still to run.
  const double first = pass_end(w.vp - 1) + (streams ? chunk_pass : 0);
  double wall = 0, backlog = 0, left = first;
  const auto advance_to = [&](double to) {
    const double stream_s = left - to;
    left = to;
    if (backlog >= stream_s * drain) {
      wall += stream_s * slowdown;
      backlog -= stream_s * drain;
    } else {
      const double busy = backlog / drain;  // stream seconds until the queue is empty
      wall += busy * slowdown + (stream_s - busy);
      backlog = 0;
    }
  };
  const double chunk_layers = std::max(1.0, w.layers) / w.vp, chunk_comm = comm / w.vp;
  for (int c = w.vp - 1; c >= 0; --c) {
    if (streams) {
      // A layer's bucket starts as its backward ends (_ParamAndGradBucketGroup.register_grad_ready
      // starts a bucket group's sync once its last parameter's gradient is ready): the chunk's
      // buckets queue one a layer through its last pass, the last as the pass ends, beside no
      // more of the chunk's kernels.
      for (double done = 0; done < chunk_layers;) {
        const double layer = std::min(1.0, chunk_layers - done);
        done += layer;
        advance_to(pass_end(c) + (chunk_layers - done) * per_layer);
        backlog += chunk_comm * layer / chunk_layers;
      }
    } else {
      advance_to(pass_end(c));
      backlog += chunk_comm;
    }
    if (c == 0) break;
    // Then the stage waits for the next chunk's first micro-batch, its kernels idle and its queue
    // draining at the link's full rate, and runs that chunk's passes up to its last.
    backlog = std::max(0.0, backlog - idle);
    advance_to(pass_end(c - 1) + (streams ? chunk_pass : 0));
  }
  // The stretch is never negative: wall and first can differ by a rounding residue (-4e-17 s).
  return {std::max(last, wall + backlog - first), std::max(0.0, wall - first)};
}

}  // namespace stepcast::analytic
