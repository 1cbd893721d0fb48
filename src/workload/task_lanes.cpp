#include "workload/task_lanes.h"

#include <fmt/format.h>

#include <iterator>

#include "workload/build.h"

namespace stepcast::workload {
namespace {

using graph::Category;
using graph::TaskKind;

std::uint32_t link_port(const spec::Scenario& s, int stage, Category category) {
  spec::Axis axis;
  switch (category) {
    case Category::kTensorParallel: axis = spec::Axis::kTp; break;
    case Category::kContextParallel: axis = spec::Axis::kCp; break;
    case Category::kExpertParallel: axis = spec::Axis::kEp; break;
    case Category::kPipeline: axis = spec::Axis::kPp; break;
    case Category::kShardedData:
    case Category::kDataParallel:
      return stage_port(s, stage, gradient_group(s.strategy));
    default:
      return graph::kNoLink;
  }
  return stage_port(s, stage, group_of(s.strategy, axis));
}

}  // namespace

std::uint16_t p2p_stream(const spec::Strategy& st, bool with_next, bool sending) {
  if (st.deferred_sends) return with_next ? kSendNextStream : kRecvPrevStream;
  if (with_next) return sending ? kSendNextStream : kRecvNextStream;
  return sending ? kSendPrevStream : kRecvPrevStream;
}

std::uint32_t stage_port(const spec::Scenario& s, int stage, GroupShape group) {
  const auto levels = static_cast<std::uint32_t>(s.cluster.levels.size());
  return static_cast<std::uint32_t>(stage) * levels +
         static_cast<std::uint32_t>(spanned_level(group, s.cluster));
}

std::uint32_t task_link(const spec::Scenario& s, int stage, Category category, TaskKind kind) {
  const std::uint32_t port = link_port(s, stage, category);
  if (port == graph::kNoLink) return graph::kNoLink;
  return graph::link(port, kind == TaskKind::kSend   ? graph::LinkDirection::kOutbound
                           : kind == TaskKind::kRecv ? graph::LinkDirection::kInbound
                                                     : graph::LinkDirection::kBoth);
}

void name_lanes(graph::ExecGraph& g, const spec::Strategy& st) {
  const int peers = st.tp * st.cp * st.dp;
  for (int stage = 0; stage < st.pp; ++stage) {
    g.name_rank(static_cast<std::uint32_t>(stage),
                fmt::format("stage {} (stands for its {} symmetric ranks)", stage, peers));
  }
  constexpr const char* kStreams[] = {"compute",   "overlap",   "gradients", "prefetch", "send next",
                                      "recv prev", "send prev", "recv next", "host"};
  for (std::uint16_t i = 0; i < std::size(kStreams); ++i) g.name_stream(i, kStreams[i]);
  if (st.deferred_sends) {
    g.name_stream(p2p_stream(st, true, true), "p2p next");
    g.name_stream(p2p_stream(st, false, true), "p2p prev");
  }
}

}  // namespace stepcast::workload
