#include "analytic/pipeline_exchanges.h"

#include <vector>

#include "workload/pipeline_schedule.h"

namespace stepcast::analytic {

CollectivesBesideSends collectives_beside_sends(const spec::Strategy& st, int stage, bool async_sends) {
  using workload::Pass;
  const int micro_batches = st.micro_batches();
  const std::vector<workload::Slot> order = workload::stage_order(st.schedule, st.pp, st.vp, micro_batches, stage);
  const int last_chunk = st.pp * st.vp - 1;
  const bool scatters_after_input_pass = st.schedule != spec::Schedule::kZeroBubbleH1;
  CollectivesBesideSends beside;
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    const workload::Slot &slot = order[i], &next = order[i + 1];
    if (!slot.paired || !next.paired) continue;
    const int model_chunk = slot.chunk * st.pp + stage;
    if (slot.pass == Pass::kForward && model_chunk < last_chunk) {  // the model's last chunk sends nothing on
      beside.gathers += next.pass == Pass::kBackward;
    } else if (slot.pass == Pass::kBackward && model_chunk > 0) {  // nor its first back
      beside.scatters += scatters_after_input_pass;
      beside.gathers += next.pass == Pass::kForward && async_sends;
    }
  }
  return {beside.gathers / micro_batches, beside.scatters / micro_batches};
}

}  // namespace stepcast::analytic
