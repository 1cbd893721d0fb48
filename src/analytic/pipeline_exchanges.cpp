#include "analytic/pipeline_exchanges.h"

#include <algorithm>

#include "workload/pipeline_schedule.h"

namespace stepcast::analytic {

namespace {

// Stage `stage`'s passes in one step (`total`), the forward/backward pairs among them (`pairs`),
// and how many forwards of chunk `chunk` are among its forwards [from, to); counted from the
// schedule's shape rather than by walking its passes: the estimate asks for each stage it prices,
// and a walk cost a Maverick estimate a fifth of its time in allocations.
struct StagePasses {
  const spec::Strategy& st;
  int micro_batches = st.micro_batches(), total = st.vp * micro_batches;
  int pairs;
  StagePasses(const spec::Strategy& s, int stage)
      : st(s), pairs(total - workload::warm_up_forwards(s.schedule, s.pp, s.vp, micro_batches, stage)) {}
  int forwards_of_chunk(int from, int to, int chunk) const {
    return workload::forwards_of_chunk_before(to, chunk, st.pp, st.vp, micro_batches) -
           workload::forwards_of_chunk_before(from, chunk, st.pp, st.vp, micro_batches);
  }
};

}  // namespace

CollectivesBesideSends collectives_beside_sends(const spec::Strategy& st, int stage, bool async_sends) {
  if (st.schedule == spec::Schedule::kGpipe) return {};  // no forward/backward pairs
  const StagePasses p(st, stage);
  const int micro_batches = p.micro_batches, total = p.total, pairs = p.pairs;
  if (pairs <= 0) return {};
  // Each paired forward (the last `pairs` forwards) is followed by its pair's backward, whose first
  // gather runs beside the forward's send; the model's last chunk sends nothing on.
  double gathers = pairs;
  if (stage == st.pp - 1) gathers -= p.forwards_of_chunk(total - pairs, total, st.vp - 1);
  // Each paired backward but the last (the first pairs - 1 backwards) is followed by the next
  // pair's forward; the model's first chunk sends nothing back (backwards of chunk 0 are counted
  // as forwards of the last chunk: the backwards run the chunks in reverse).
  double sends_back = pairs - 1;
  if (stage == 0) sends_back -= p.forwards_of_chunk(0, pairs - 1, st.vp - 1);
  if (st.schedule == spec::Schedule::kZeroBubbleH1) {
    // Its input-gradient pass leaves the reduce-scatter to the weight gradient, which the k-th
    // backward is followed by from micro-batch `stage` on (workload::stage_order): only the
    // backwards before it go straight on to a forward.
    const double before_weight_passes = std::min(pairs - 1, stage);
    return {(gathers + (async_sends ? before_weight_passes : 0)) / micro_batches, 0};
  }
  return {(gathers + (async_sends ? sends_back : 0)) / micro_batches, sends_back / micro_batches};
}

CollectivesBesideSends collectives_beside_cool_down_sends(const spec::Strategy& st, int stage) {
  // With fewer micro-batches than stages each chunk's backwards wait for the first of them to come
  // back through every stage (Megatron runs a chunk for min(m, pp) micro-batches at a time): the
  // round's hops (estimate_with, round_wait) price those sends.
  if (st.schedule != spec::Schedule::kInterleaved || st.micro_batches() < st.pp) return {};
  const StagePasses p(st, stage);
  // Backwards [first, total - 1) are followed by a backward: from the last paired one on (all but
  // the last where there are no pairs).
  const int first = std::max(p.pairs, 1) - 1;
  double sends = p.total - 1 - first;
  // Backwards of chunk 0 are counted as forwards of the last chunk (the backwards run the chunks
  // in reverse).
  if (stage == 0) sends -= p.forwards_of_chunk(first, p.total - 1, st.vp - 1);
  return {sends, sends};
}

}  // namespace stepcast::analytic
