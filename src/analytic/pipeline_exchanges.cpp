#include "analytic/pipeline_exchanges.h"

#include <algorithm>

#include "workload/pipeline_schedule.h"

namespace stepcast::analytic {

CollectivesBesideSends collectives_beside_sends(const spec::Strategy& st, int stage, bool async_sends) {
  // Counted from the schedule's shape rather than by walking its passes: the estimate asks for
  // each stage it prices, and a walk cost a Maverick estimate a fifth of its time in allocations.
  if (st.schedule == spec::Schedule::kGpipe) return {};  // no forward/backward pairs
  const int micro_batches = st.micro_batches(), total = st.vp * micro_batches;
  const int pairs = total - workload::warm_up_forwards(st.schedule, st.pp, st.vp, micro_batches, stage);
  if (pairs <= 0) return {};
  const auto forwards_of_chunk = [&](int from, int to, int chunk) {
    return workload::forwards_of_chunk_before(to, chunk, st.pp, st.vp, micro_batches) -
           workload::forwards_of_chunk_before(from, chunk, st.pp, st.vp, micro_batches);
  };
  // Each paired forward (the last `pairs` forwards) is followed by its pair's backward, whose first
  // gather runs beside the forward's send; the model's last chunk sends nothing on.
  double gathers = pairs;
  if (stage == st.pp - 1) gathers -= forwards_of_chunk(total - pairs, total, st.vp - 1);
  // Each paired backward but the last (the first pairs - 1 backwards) is followed by the next
  // pair's forward; the model's first chunk sends nothing back (backwards of chunk 0 are counted
  // as forwards of the last chunk: the backwards run the chunks in reverse).
  double sends_back = pairs - 1;
  if (stage == 0) sends_back -= forwards_of_chunk(0, pairs - 1, st.vp - 1);
  if (st.schedule == spec::Schedule::kZeroBubbleH1) {
    // Its input-gradient pass leaves the reduce-scatter to the weight gradient, which the k-th
    // backward is followed by from micro-batch `stage` on (workload::stage_order): only the
    // backwards before it go straight on to a forward.
    const double before_weight_passes = std::min(pairs - 1, stage);
    return {(gathers + (async_sends ? before_weight_passes : 0)) / micro_batches, 0};
  }
  return {(gathers + (async_sends ? sends_back : 0)) / micro_batches, sends_back / micro_batches};
}

}  // namespace stepcast::analytic
