#include "analytic/estimate.h"

#include <algorithm>
#include <cmath>

#include "analytic/dp_exposure.h"
#include "analytic/layer_kind.h"
#include "analytic/layer_passes.h"
#include "analytic/pipeline_exchanges.h"
#include "cost/compute.h"
#include "workload/model_size.h"
#include "workload/operators.h"
#include "workload/pipeline_schedule.h"
#include "workload/placement.h"
#include "workload/step_costs.h"

namespace stepcast::analytic {
namespace {

using spec::Axis;
using spec::Recompute;
using workload::Op;
using workload::OpKind;

// A layer of no kernels: the MoE layer of a dense model.
const PassTimes kNoLayer{};

// The host time a layer's passes expose beyond their kernels (`host`), less what hides in the
// passes' ZeRO-3 waits (`sharded`): the host launches on while the compute stream waits for a
// gather, and FSDP's copies are kernels too, unless the host itself waits for each collective
// (blocking collectives, launch-blocking).
PassPair host_beside_gathers(const spec::Strategy& st, const PassPair& host, const PassPair& sharded) {
  if (st.launch_blocking || st.sharded_collectives == spec::ShardedCollectives::kPerTensorBlocking) return host;
  return {std::max(0.0, host.fwd - sharded.fwd), std::max(0.0, host.bwd - sharded.bwd)};
}

// One layer's share of one micro-batch on a stage whose layers are MoE layers in the share
// `moe_share`: kernels, exposed communication and host time.
struct LayerCost {
  double fwd = 0, bwd = 0, fwd_beside = 0, bwd_beside = 0, wgrad = 0;
  double tp = 0, cp = 0, ep = 0;
  PassPair fsdp;      // exposed ZeRO-3 time of each pass
  double gather = 0, scatter = 0;  // one ZeRO-3 gather of the layer's parameters, and its reduce-scatter
  double host = 0;
  LinkSplit links;
  // The share of total() the forward takes (its kernels, exposed collectives and host time), and
  // the share ZB-H1's deferred weight-gradient pass takes (its kernels and the ZeRO-3 exposure
  // that waits for it); the input-gradient pass takes the rest.
  double fwd_slot = 0, wgrad_slot = 0;
  double total() const { return fwd + bwd + tp + cp + ep + fsdp.total() + host; }
};

// Inlined: as a call that returns the struct through memory it made the estimate benchmark 3-5%
// slower (alternating runs).
__attribute__((always_inline)) inline LayerCost mixed_layer(const spec::Scenario& s, const LinksApart& apart,
                                                            const LayerKind& dense, const LayerKind& moe,
                                                            const LayerComm& ep, double moe_share) {
  const auto mix = [&](double d, double e) { return (1 - moe_share) * d + moe_share * e; };
  const PassTimes &d = dense.passes, &e = moe.passes;
  const PassPair fsdp{mix(dense.sharded_exposed.fwd, moe.sharded_exposed.fwd),
                      mix(dense.sharded_exposed.bwd, moe.sharded_exposed.bwd)};
  const PassPair host =
      host_beside_gathers(s.strategy, {mix(dense.host.fwd, moe.host.fwd), mix(dense.host.bwd, moe.host.bwd)}, fsdp);
  const double fwd = mix(d.fwd, e.fwd), wgrad = mix(d.wgrad, e.wgrad);
  return LayerCost{
      .fwd = fwd,
      .bwd = mix(d.bwd + d.recompute, e.bwd + e.recompute),
      .fwd_beside = mix(d.beside.fwd, e.beside.fwd),
      .bwd_beside = mix(d.beside.bwd + d.beside.recompute, e.beside.bwd + e.beside.recompute),
      .wgrad = wgrad,
      .tp = mix(dense.tp.fwd, moe.tp.fwd) + mix(dense.tp.bwd, moe.tp.bwd),
      .cp = mix(dense.cp.fwd, moe.cp.fwd) + mix(dense.cp.bwd, moe.cp.bwd),
      .ep = moe_share * (ep.fwd + ep.bwd),
      .fsdp = fsdp,
      .gather = mix(dense.sharded.gather, moe.sharded.gather),
      .scatter = mix(dense.sharded.scatter, moe.sharded.scatter),
      .host = host.total(),
      // The gradient group's collectives (ZeRO-3 gathers and scatters, data-parallel buckets)
      // run beside the passes' exposed TP, CP and EP communication too, and beside the CP ring
      // (PassStream), whose attention dense and MoE layers share.
      .links = split_by_links(apart, {mix(dense.tp.fwd, moe.tp.fwd), mix(dense.tp.bwd, moe.tp.bwd)},
                              {mix(dense.cp.fwd, moe.cp.fwd), mix(dense.cp.bwd, moe.cp.bwd)},
                              {moe_share * ep.fwd, moe_share * ep.bwd}, dense.rings),
      .fwd_slot = fwd + mix(dense.tp.fwd, moe.tp.fwd) + mix(dense.cp.fwd, moe.cp.fwd) + moe_share * ep.fwd + fsdp.fwd +
                  host.fwd,
      .wgrad_slot = wgrad + mix(dense.sharded_weight, moe.sharded_weight),
  };
}

// A pipeline stage as the closed form prices it, for one micro-batch.
struct Stage {
  double layers = 0, moe_share = 0;
  double layer_s = 0, layer_fwd = 0, layer_bwd = 0;  // its average layer's kernels (and its slot)
  double layer_fwd_slot = 0, layer_wgrad_slot = 0;   // its forward's and weight gradient's share of the slot
  double edge_fwd = 0, edge_bwd = 0, edge_wgrad = 0, edge_host = 0;
  double head_fwd = 0, head_bwd = 0;  // the output head's passes (in edge_fwd and edge_bwd)
  double root = 0;  // ZeRO-3's root unit, exposed per micro-batch (in edge_fwd and edge_bwd)
  double edges_s() const { return edge_fwd + edge_bwd + edge_host; }
};

// The pipeline's stages: the first carries the embedding, the last the output head (pp == 1
// both), and the layers are laid out as the pipeline places them (spare layers to the middle
// stages). Where MoE and dense layers are spread unevenly over the stages (`own_layers`), each
// stage has its own average layer, else the model's (`average`).
//
// Pipeline send/receive of one micro-batch's boundary activations, forward and backward, once
// per virtual stage; with sequence parallelism each TP rank sends its 1/tp slice. Blocking sends
// expose every transfer. Asynchronous ones still do under GPipe and 1F1B, where the receiver has
// nothing else to run (the next stage's pass, or the gradient coming back, is what it waits for);
// under interleaving a stage runs another chunk's forward while a transfer is in flight, so in
// the steady state only a transfer longer than that pass shows. The fill and drain wait for every
// hop either way (estimate_with). With Megatron's scatter/gather the receiver also all-gathers
// what it received, on its compute stream, where nothing hides it.
class Stages {
 public:
  Stages(const spec::Scenario& s, const workload::ParallelGroups& groups, const LinksApart& apart,
         const LayerKind& dense, const LayerKind& moe, const LayerComm& ep, const PassTimes& embed,
         const PassTimes& head, const LayerCost& average, bool own_layers)
      : s_(s),
        apart_(apart),
        dense_(dense),
        moe_(moe),
        ep_(ep),
        embed_(embed),
        head_(head),
        own_layers_(own_layers),
        average_(average),
        root_(workload::fsdp_root_unit(s)),
        // The host launches the embedding while the GPU runs the root unit's gather and copy out
        // before it (FSDP2's root pre-forward), so its launch hides behind them too.
        embed_host_(exposed_host_s(s.strategy, embed.host_fwd, embed.fwd + root_.gather + root_.copy_out) +
                    exposed_host_s(s.strategy, embed.host_bwd, embed.bwd)),
        layout_(s.model.layers, s.strategy.pp * s.strategy.vp),
        transfer_(s.strategy.pp > 1 ? workload::pp_transfer_s(s, groups.of(Axis::kPp)) : 0),
        received_gather_(s.strategy.pp > 1 ? workload::pp_gather_s(s) : 0),
        hidden_behind_chunks_(s.strategy.schedule == spec::Schedule::kInterleaved &&
                              s.strategy.pipeline_transfers == spec::PipelineTransfers::kAsynchronous),
        shares_gather_links_(s.strategy.pp > 1 && s.strategy.prefetches_zero3_gathers() &&
                             workload::crosses_gradient_links(groups, s.cluster, Axis::kPp)),
        forward_beside_send_(s.strategy.pipeline_transfers == spec::PipelineTransfers::kAsynchronous &&
                             s.strategy.micro_batches() > 1) {}

  // A layer of MoE layers in the share `moe_share`.
  __attribute__((always_inline)) LayerCost layer(double moe_share) const {
    return mixed_layer(s_, apart_, dense_, moe_, ep_, moe_share);
  }
  bool own_layers() const { return own_layers_; }
  const workload::ChunkLayout& layout() const { return layout_; }

  // Inlined: called from each schedule's walk over the stages, it was left a call, and the estimate
  // benchmark took 2% more instructions.
  __attribute__((always_inline)) Stage at(int i) const {
    const spec::Strategy& st = s_.strategy;
    const int layers = layout_.stage(st.pp, i);
    Stage g;
    g.layers = layers;
    const auto take = [&](const LayerCost& c) {
      g.layer_s = c.total();
      g.layer_fwd = c.fwd;
      g.layer_bwd = c.bwd;
      g.layer_fwd_slot = c.fwd_slot;
      g.layer_wgrad_slot = c.wgrad_slot;
    };
    if (own_layers_) {
      g.moe_share = static_cast<double>(layout_.stage_moe_layers(s_.model, st.pp, i)) / layers;
      take(layer(g.moe_share));
    } else {
      take(average_);
    }
    const auto carry = [&](const PassTimes& edge, double host) {
      g.edge_fwd += edge.fwd;
      g.edge_bwd += edge.bwd;
      g.edge_wgrad += edge.wgrad;
      g.edge_host += host;
    };
    if (i == 0) carry(embed_, embed_host_);
    if (i == st.pp - 1) {
      carry(head_, edge_host_s(st, head_));
      g.head_fwd = head_.fwd;
      g.head_bwd = head_.bwd;
    }
    if (i == 0) {  // a root unit exists only without pipelining, on the one stage
      g.edge_fwd += root_.gather + root_.copy_out;
      g.edge_bwd += (root_.regathered ? root_.gather + root_.copy_out : 0) + root_.flatten +
                    root_.copy_in + root_.scatter;
      g.root = root_.per_micro_batch();
    }
    return g;
  }
  double seconds(const Stage& g) const { return g.layers * g.layer_s + g.edges_s(); }
  double fwd_seconds(const Stage& g) const { return g.layers * g.layer_fwd + g.edge_fwd; }
  // An edge's passes and the host time they expose.
  double edge_s(const PassTimes& edge) const { return edge.fwd + edge.bwd + edge_host_s(s_.strategy, edge); }
  double embedding_s() const { return embed_.fwd + embed_.bwd + embed_host_; }

  double transfer() const { return transfer_; }
  double received_gather() const { return received_gather_; }
  bool hidden_behind_chunks() const { return hidden_behind_chunks_; }
  // What a transfer loses beside ZeRO-3 gathers of `gathers` seconds on the same links, where the
  // two get an equal share of them while both run (as the simulator's links share them).
  double beside_gathers(double gathers) const { return shares_gather_links_ ? std::min(transfer_, gathers) : 0; }
  // Whether a stage runs a forward as soon as it has sent a transfer: with asynchronous sends
  // nothing waits for the send (torch.distributed.pipelining waits for each action's sends
  // before the next, _wait_batch_p2p in PipelineScheduleMulti._step_microbatches, as blocking
  // sends do), so the forward's first gather, which FSDP's root pre-forward starts with the
  // forward (workload/build.cpp, anchor_gathers_at_forward_start), runs beside the send; with one
  // micro-batch no forward is ready then.
  bool forward_beside_send() const { return forward_beside_send_; }
  // What `exchanges` transfers (and their gathers) per micro-batch expose on a stage whose
  // forward kernels take `kernels_fwd`. Hidden behind other chunks' passes, a transfer still
  // slows the gather beside it: half the exchanges precede a forward (interleaved passes
  // alternate), whose first gather, exposed in full (sharded_exposure), shares their links.
  double p2p(double exchanges, double kernels_fwd) const {
    const double transfers = exchanges * transfer_, gathers = exchanges * received_gather_;
    if (!hidden_behind_chunks_) return transfers + gathers;
    const double first_gathers = forward_beside_send_ ? exchanges / 2 * beside_gathers(average_.gather) : 0;
    return gathers + first_gathers + std::max(0.0, transfers - 2.0 * kernels_fwd);
  }
  // What ZeRO-3 collectives `c` (pipeline_exchanges.h) add to the sends they share links with: each
  // would otherwise run beside a layer's backward, whose exposed ZeRO-3 time the layer is charged
  // already, so only what its share of the transfer exceeds that by.
  double beside_sends(const CollectivesBesideSends& c) const {
    const auto excess = [&](double collective) { return std::max(0.0, beside_gathers(collective) - average_.fsdp.bwd); };
    return c.gathers * excess(average_.gather) + c.scatters * excess(average_.scatter);
  }
  // Per micro-batch, stage i's steady-state sends; over the step, its cool-down's.
  bool sends_beside_collectives() const { return shares_gather_links_ && !hidden_behind_chunks_; }
  double steady_beside_sends(int i) const {
    const bool async = s_.strategy.pipeline_transfers == spec::PipelineTransfers::kAsynchronous;
    return sends_beside_collectives() ? beside_sends(collectives_beside_sends(s_.strategy, i, async)) : 0;
  }
  double cool_down_beside_sends(int i) const {
    return sends_beside_collectives() ? beside_sends(collectives_beside_cool_down_sends(s_.strategy, i)) : 0;
  }
  // A stage exchanges with its neighbours after each forward and each backward of each chunk, but
  // the first stage's first chunk has no one to send gradients to and the last stage's last chunk
  // none to send activations to (Megatron's send_forward_recv_backward and
  // send_backward_recv_forward skip them; interleaved, the batched exchange drops them): in the
  // steady state the end stages make 2 vp - 1 exchanges per micro-batch, the others 2 vp.
  double exchanges_of(int i) const {
    return 2.0 * s_.strategy.vp - (i == 0) - (i == s_.strategy.pp - 1);
  }
  // Stage `g`, the i-th, per micro-batch in the steady state: its passes and the transfers they
  // expose; the transfers alone where its forward kernels take `kernels_fwd`, slowed by the
  // collectives beside them.
  double slot_s(const Stage& g, int i) const { return seconds(g) + steady_p2p(i, fwd_seconds(g)); }
  double steady_p2p(int i, double kernels_fwd) const { return p2p(exchanges_of(i), kernels_fwd) + steady_beside_sends(i); }

 private:
  const spec::Scenario& s_;
  LinksApart apart_;
  const LayerKind &dense_, &moe_;
  const LayerComm& ep_;
  const PassTimes &embed_, &head_;
  bool own_layers_;
  const LayerCost& average_;
  workload::RootUnit root_;
  double embed_host_;
  workload::ChunkLayout layout_;
  double transfer_, received_gather_;
  bool hidden_behind_chunks_, shares_gather_links_, forward_beside_send_;
};

// Under interleaving a stage k's warm-up forwards keep it busy until its first backward comes
// back, so the step is the longest of: the fill reaching k through the first chunk of each stage
// before it, k's m micro-batches, and the drain leaving it the same way back, `hop` seconds a
// hop. With equal chunks the last stage's path is the longest, (pp-1)/vp slots; where a middle
// stage is the fullest and the last is lighter (Llama 3's 7, 8 x 14, 7 layers), a shorter way
// ends it. That way also waits where k's warm-up does not cover its first backward's round trip:
// after its last chunk's first forward, k runs min(W + 1, m vp) - (vp - 1) g - 1 more forwards
// (Megatron's W = 2 (pp - k - 1) + (vp - 1) pp warm-up forwards, then one forward before each
// backward; g = min(m, pp) micro-batches a chunk at a time) while that micro-batch passes the
// later stages' last chunks, forward and back, with a hop each (none on the last stage; with
// equal chunks the last stage's way stays the longest). The end stages' slots (Stages::slot_s)
// come found already.
double longest_interleaved_way(const spec::Strategy& st, const Stages& stages, const Stage& first_stage,
                               double first_slot, const Stage& last_stage, double last_slot, double micro_batches,
                               double hop) {
  const double group = std::min<double>(micro_batches, st.pp);
  const int last_round = (st.vp - 1) * st.pp;  // the index of stage 0's last chunk
  const auto warm_up_wait = [&](int k, const Stage& g, double trip) {
    const double forwards = std::min(workload::warm_up_forwards(st.schedule, st.pp, st.vp, st.micro_batches(), k) + 1.0,
                                     micro_batches * st.vp) - (st.vp - 1) * group - 1;
    return std::max(0.0, trip - forwards * g.layers / st.vp * g.layer_fwd_slot);
  };
  const auto way = [&](int k, double slot, double before) {
    return before + micro_batches * slot + stages.cool_down_beside_sends(k);
  };
  double longest = 0;
  if (stages.own_layers()) {
    // The trip beyond stage k: every later stage's last chunk and hop, and the head; taken as
    // the whole trip beyond stage 0 less each stage's share as the walk passes it.
    const auto last_chunk = [&](int k, const Stage& g) {
      return stages.layout().chunk(last_round + k) * g.layer_s + hop;
    };
    double beyond = last_stage.edges_s();
    for (int j = 1; j < st.pp; ++j) beyond += last_chunk(j, stages.at(j));
    double before = 0;
    for (int k = 0; k < st.pp; ++k) {
      const Stage g = stages.at(k);
      if (k > 0) beyond -= last_chunk(k, g);
      const double wait = warm_up_wait(k, g, k < st.pp - 1 ? beyond : 0);
      longest = std::max(longest, way(k, stages.slot_s(g, k), before) + wait);
      before += stages.layout().chunk(k) * g.layer_s + (k == 0 ? g.edges_s() : 0) + hop;
    }
    return longest;
  }
  // With one kind of layer the middle stages differ only in their layer count, which takes at
  // most two values, falling from stage 1 on, and of two stages alike the later ends the longer
  // way: the end stages' ways and the last of each count's are the candidates.
  const auto before = [&](int k) {
    return k == 0 ? 0 : stages.layout().layers_before(k) * first_stage.layer_s + first_stage.edges_s() + k * hop;
  };
  const int chunks = st.pp * st.vp;
  const double layers = stages.layout().layers_before(chunks - 1) + stages.layout().chunk(chunks - 1);
  // The trip beyond a stage k < pp - 1 through the later stages' last chunks.
  const auto waited_way = [&](int k, const Stage& g, double slot) {
    const double trip = (layers - stages.layout().layers_before(last_round + k + 1)) * first_stage.layer_s +
                        last_stage.edges_s() + (st.pp - 1 - k) * hop;
    return way(k, slot, before(k)) + warm_up_wait(k, g, trip);
  };
  const auto waited_way_of = [&](int k) {
    const Stage g = stages.at(k);
    return waited_way(k, g, stages.slot_s(g, k));
  };
  longest = std::max(st.pp > 1 ? waited_way(0, first_stage, first_slot) : way(0, first_slot, 0),
                     way(st.pp - 1, last_slot, before(st.pp - 1)));
  if (st.pp >= 3) {
    int fullest_last = st.pp - 2;
    const int fullest = stages.layout().stage(st.pp, 1);
    while (stages.layout().stage(st.pp, fullest_last) != fullest) --fullest_last;
    longest = std::max(longest, waited_way_of(fullest_last));
    if (fullest_last != st.pp - 2) longest = std::max(longest, waited_way_of(st.pp - 2));
  }
  return longest;
}

// Under 1F1B stage k runs c = min(pp-k-1, m-1) forwards between its first forward and its first
// backward (its warm-up), and as many backwards between its last forward and its last backward
// (its cool-down), while the first micro-batch, and then the last, make their round trip through
// the stages after it. A stage waits for what of a trip its own passes do not cover: a heavier
// stage's passes overlap the lighter stages' trip, where GPipe's bubble, the other stages' time,
// counts it whole. So the step is the longest of the ways through a stage k: the fill to k and
// the drain from it (each stage before it and a hop), k's m micro-batches and its two waits; where
// c = m-1 <= pp-k-1 its forwards all come before its first backward, so a way waits for one trip
// only, or goes on to the next stage. A trip through k is itself k's passes and the longer of its
// c passes and the trip through k+1, each pass with the transfer after it (half a hop), and the
// exposed communication split between the forward and the backward by their kernel times. With
// equal stages every way but the end stages' takes (pp-1) (t + hop) + m t_mb (Narayanan et al.
// 2021, §2.2.1).
double longest_1f1b_way(int pp, const Stages& stages, double micro_batches, double hop) {
  Stage g = stages.at(pp - 1);
  double way = micro_batches * stages.slot_s(g, pp - 1);  // from k's first forward to its last backward
  double first_trip = stages.seconds(g), last_trip = first_trip;
  for (int k = pp - 2; k >= 0; --k) {
    g = stages.at(k);
    const double t = stages.seconds(g), kernels_fwd = stages.fwd_seconds(g);
    const double fwd = t * kernels_fwd / (kernels_fwd + g.layers * g.layer_bwd + g.edge_bwd) + hop / 2;
    const double bwd = t + hop - fwd;
    const double passes = std::min(pp - k - 1.0, micro_batches - 1);
    const double warm_up = std::max(0.0, first_trip + hop - passes * fwd);
    const double cool_down = std::max(0.0, last_trip + hop - passes * bwd);
    const double waits = pp - k - 1.0 >= micro_batches - 1 ? std::max(warm_up, cool_down) : warm_up + cool_down;
    way = std::max(t + hop + way, micro_batches * stages.slot_s(g, k) + waits);
    first_trip = t + std::max(passes * fwd, first_trip + hop);
    last_trip = t + std::max(passes * bwd, last_trip + hop);
  }
  return way;
}

// The estimate of a model with MoE layers (kMoe) or a dense one: one source compiled twice, as
// the MoE models' per-stage mix of layers made dense models' estimates 5% slower (alternating
// benchmark runs) where the compiler could not drop it.
template <bool kMoe>
Estimate estimate_with(const spec::Scenario& s) {
  const spec::ModelSpec& m = s.model;
  const spec::Strategy& st = s.strategy;
  const workload::ParamCounts params = workload::param_counts(m);
  Estimate out;

  // The layers' kernels overlap collectives (ZeRO-3 two at once in backward, and the attention
  // the CP ring beside a bucket or gather of the gradient group on its links); the slowdowns of
  // the embedding and head are taken as the layers'.
  const workload::ParallelGroups groups = workload::parallel_groups(st);
  const bool ring_beside_group = st.cp_exchange != spec::CpExchange::kAllGather &&
                                 workload::crosses_gradient_links(groups, s.cluster, Axis::kCp);
  const cost::Shares shares =
      st.zero_stage >= 3 || ring_beside_group ? cost::Shares::kBesideTwo : cost::Shares::kBesideOne;
  // The gradient group's links: the collectives beside the layers' kernels and the buckets run on them.
  const cost::GroupLinks gradient_links = workload::links_of(groups.gradient, s);
  const workload::OpPricer layer_pricer(s, workload::layer_overlap(s, shares, gradient_links));
  const PassTimes dense_passes = price(workload::layer_ops(s, false), s, layer_pricer);
  const auto moe_layer = [&]() -> decltype(auto) {
    if constexpr (kMoe) {
      return price(workload::layer_ops(s, true), s, layer_pricer);
    } else {
      return (kNoLayer);
    }
  };
  const auto& moe_passes = moe_layer();
  const workload::OpPricer edge_pricer(s, {});  // the embedding and head, beside no collective
  const PassTimes head = price(workload::head_ops(s), s, edge_pricer);
  const PassTimes embed = price(workload::embedding_ops(s), s, edge_pricer);

  const LayerComm ep = ep_comm(s);
  const workload::GroupShape tp = groups.of(Axis::kTp);
  LayerKind dense = priced_kind(s, tp, gradient_links, dense_passes, false, ep);
  LayerKind moe = kMoe ? priced_kind(s, tp, gradient_links, moe_passes, true, ep)
                       : LayerKind{moe_passes, {}, {}, {}, {}, {}, {}};
  const LinksApart apart = links_apart(groups, s.cluster);
  if (st.zero_stage >= 3) price_sharded<kMoe>(s, apart, ep, dense, moe);
  // The model's average layer: a dense model's has no MoE share, whose mix the compiler folds.
  const LayerCost average = mixed_layer(s, apart, dense, moe, ep, kMoe ? m.moe_layer_fraction() : 0.0);
  const Stages stages(s, groups, apart, dense, moe, ep, embed, head, average, kMoe && st.pp > 1);
  // The slowest stage is an edge stage or the fullest middle one, stage 1: the spare layers go to
  // the middle chunks in order, and stage 1 holds the first chunk of every group of pp.
  const Stage first_stage = stages.at(0);
  const Stage last_stage = st.pp >= 2 ? stages.at(st.pp - 1) : first_stage;
  const double first_slot = stages.slot_s(first_stage, 0);
  const double last_slot = st.pp >= 2 ? stages.slot_s(last_stage, st.pp - 1) : first_slot;
  Stage slowest = first_stage;
  int slowest_index = 0;
  double slowest_s = first_slot;
  const auto consider = [&](int i, const Stage& g, double t) {
    if (t > slowest_s) slowest = g, slowest_index = i, slowest_s = t;
  };
  if (st.pp >= 3) {
    const Stage second = stages.at(1);
    consider(1, second, stages.slot_s(second, 1));
  }
  if (st.pp >= 2) consider(st.pp - 1, last_stage, last_slot);
  const double all_stages_s =
      m.layers * average.total() + stages.edge_s(head) + stages.embedding_s() + first_stage.root;  // each once
  const double layers = slowest.layers;
  // The slowest stage's average layer: its own, or the model's (by reference, not copied).
  const auto slowest_layer = [&]() -> decltype(auto) {
    if constexpr (kMoe) {
      return stages.own_layers() ? stages.layer(slowest.moe_share) : average;
    } else {
      return (average);
    }
  };
  const auto& layer = slowest_layer();

  const double kernels_fwd = stages.fwd_seconds(slowest);
  const double kernels_bwd = layers * layer.bwd + slowest.edge_bwd;
  // Their slowdown beside a collective (the edges' share taken as the layers').
  const double fwd_slowdown = layer.fwd > 0 ? layer.fwd_beside / layer.fwd : 1;
  const double bwd_slowdown = layer.bwd > 0 ? layer.bwd_beside / layer.bwd : 1;

  // Every hop of the fill and drain carries one transfer each way. Under ZeRO-3 the stage a
  // gradient leaves starts gathering the first layers it runs next (below, in the pipeline's
  // waits); where the transfers cross the gradient group's links, the two share them. An
  // activation's receiver gathers its chunk's first layer only once it has arrived (FSDP's root
  // pre-forward: sharded_exposure), after the hop, not beside it; its sender, where it runs its
  // next micro-batch's forward at once (Stages::forward_beside_send), starts that forward's first
  // gathers beside the hop.
  const bool zero3_prefetch = st.prefetches_zero3_gathers();
  const double hop_shared = stages.beside_gathers(std::min(2.0, layers) * layer.gather);
  const double hops_shared = stages.forward_beside_send() ? 2 : 1;
  const double p2p_blocking = st.vp * (2.0 * (stages.transfer() + stages.received_gather()) + hops_shared * hop_shared);
  const double p2p = stages.p2p(2.0 * st.vp, kernels_fwd);
  const double steady_p2p = stages.steady_p2p(slowest_index, kernels_fwd);
  const double per_micro_batch = stages.seconds(slowest) + steady_p2p;
  const double micro_batches = st.micro_batches();
  // Fill and drain: (pp-1) micro-batch slots for GPipe and 1F1B, (pp-1)/vp with interleaving
  // (Narayanan et al. 2021, §2.2.1-2.2.2). Stages differ in their layers and edges: a micro-batch
  // passes the head once and the embedding once on its way through the pipeline, so the slowest
  // stage sets the m steady-state slots and the fill and drain cost the other stages' time,
  // sum(t_s) - max(t_s), not (pp-1) slots of the slowest stage. Under 1F1B a heavier stage's
  // warm-up and cool-down overlap part of that time (longest_1f1b_way).
  // Clamped: with one stage the difference is a rounding residue that could be -1e-15.
  double bubble = std::max(0.0, all_stages_s - stages.seconds(slowest)) + (st.pp - 1.0) * p2p;
  if (st.schedule == spec::Schedule::k1F1B && st.pp > 1)
    bubble = std::max(0.0, longest_1f1b_way(st.pp, stages, micro_batches, p2p) - micro_batches * per_micro_batch);
  // Under interleaving, the wait between two rounds of chunks (forward and backward together).
  double round_wait = 0;
  if (st.schedule == spec::Schedule::kInterleaved) {
    const double longest =
        longest_interleaved_way(st, stages, first_stage, first_slot, last_stage, last_slot, micro_batches,
                                p2p_blocking / st.vp);
    bubble = std::max(0.0, longest - micro_batches * per_micro_batch);
    // Each round of a chunk, a stage passes its micro-batches on and must wait for the first to
    // come back through every stage and hop for the next chunk (Megatron's interleaved schedule
    // runs a chunk for min(m, pp) micro-batches at a time): in each of the vp - 1 rounds of the
    // forward and of the backward that trip, 1/vp of every stage's time and pp hops each way,
    // exposes what the stage's m micro-batches do not fill; with m = 1 the step is one
    // micro-batch's way through every chunk in turn. Sends that overlap compute leave the hops
    // exposed whatever m, as each chunk's turn is tight: a schedule with a transfer on every hop
    // takes 2 (pp vp - 1) of them longer than without
    // (PipelineSchedule.InterleavingExposesEveryHopOfOneMicroBatchsWay).
    const double hops = st.pp * p2p_blocking;
    const double waiting = std::max(0.0, all_stages_s + hops - micro_batches * per_micro_batch);
    round_wait = (stages.hidden_behind_chunks() ? std::max(waiting, hops) : waiting) / st.vp;
    bubble += (st.vp - 1.0) * round_wait;
  }
  if (st.schedule == spec::Schedule::kZeroBubbleH1) {
    // ZB-H1 (Qi et al. 2024, §3.1) splits each backward into B (input gradient), which the stage
    // before waits for, and W (weight gradient), which nothing waits for: stage i runs the W of
    // micro-batch k - i after its k-th B and the rest at the end, min(m, i + 1) Ws from its last B
    // on. Each stage k paces a way through the step: the first micro-batch's forwards through the
    // stages before it; its round trip through the stages after it, less the forwards k runs
    // meanwhile (its warm-up); k's m slots, the last of its Ws excepted; then the drain, where
    // each stage i before k passes the last gradient on after its B and ends with its own Ws, so
    // that k's Ws run beside the stages' Bs instead of after them. The step ends with the longest
    // way. For equal stages the last stage's is m(F + B + W) + (pp - 1)(F + B - W) where W <= B,
    // pp (F + B) + W with m = 1 (stop 50), and each hop costs at least its forward where W
    // outweighs F + B (MoE experts; stop 51); a stage's heavy head W runs beside the drain.
    // Each pass brings its share of the stage's exposed communication: B the ZeRO-3 gathers, W
    // the reduce-scatters that wait for it.
    struct Passes {
      double fwd = 0, input = 0, weight = 0;
    };
    const auto passes_of = [&](const Stage& g) {
      const double fwd = g.layers * g.layer_fwd_slot + g.edge_fwd;
      const double weight = g.layers * g.layer_wgrad_slot + g.edge_wgrad;
      return Passes{fwd, stages.seconds(g) - fwd - weight, weight};
    };
    const double hop = p2p / 2;  // one transfer; the fill and drain wait for each
    double after = 0;            // the round trip through the stages after k
    for (int i = 0; i < st.pp; ++i) {
      const Passes p = passes_of(stages.at(i));
      after += p.fwd + p.input + 2 * hop;
    }
    double fill = 0, drain = 0, longest = 0, input_before = 0;
    for (int k = 0; k < st.pp; ++k) {
      const Stage g = stages.at(k);
      const Passes p = passes_of(g);
      after -= p.fwd + p.input + 2 * hop;
      const double deferred = std::min(micro_batches, k + 1.0) * p.weight;
      drain = k == 0 ? deferred : std::max(drain + input_before + hop, deferred);
      const double warm_up = std::min(st.pp - 1.0 - k, micro_batches - 1) * p.fwd;
      longest = std::max(longest, fill + std::max(0.0, after - warm_up) + micro_batches * stages.slot_s(g, k) -
                                      deferred + drain);
      fill += p.fwd + hop;
      input_before = p.input;
    }
    bubble = std::max(0.0, longest - micro_batches * per_micro_batch);
  }
  // ZeRO-3 gathers prefetched into the pipeline's waits: in the fill a stage waits for its first
  // input, in the drain for each gradient, and meanwhile gathers the first layers it will run
  // (the layer's own gather and, one ahead, the next one's, as the simulator builds them), so
  // each stage but the one the step ends on runs its fill and drain passes with those gathers'
  // exposure hidden, the backward's reduce-scatters excepted. Under ZB-H1 the drain's waits run
  // the deferred weight gradients and the reduce-scatters that follow them on the same links: only
  // the fill's gathers hide.
  // (A gradient group of one exposes nothing.)
  if (zero3_prefetch) {
    const double drain_hidden =
        st.schedule == spec::Schedule::kZeroBubbleH1 ? 0 : std::min(layer.fsdp.bwd, layer.gather);
    const double hidden = std::min(2.0, layers) * (std::min(layer.fsdp.fwd, layer.gather) + drain_hidden);
    bubble = std::max(0.0, bubble - (st.pp - 1.0) * hidden);
  }
  const double pipeline = micro_batches * per_micro_batch + bubble;

  // Data-parallel gradient reduction of the stage's parameters (ZeRO-0/1 all-reduce, ZeRO-2
  // reduce-scatter; ZeRO-3 already scattered per layer), and ZeRO-1/2's gather of the updated
  // parameters. Without overlap (Megatron-LM 2021, DeepSpeed without bucketing) nothing hides
  // them. With it, buckets are reduced as soon as a layer's backward of the last micro-batch
  // finishes, and gathered ahead of each layer's first forward, beside the kernels of that window.
  // Under interleaving a stage's chunks take their turns a group of min(m, pp) micro-batches
  // apart (Megatron's schedule runs a chunk for pp micro-batches at a time), so chunk c's
  // gradients are complete c groups before the last backward, and its parameters needed c groups
  // after the first forward; with aligned sync (Megatron-Core) a chunk's buckets start together
  // once its last backward has ended. What chunks c..0 move must fit in the window before the end
  // (reductions) or before chunk c's turn (gathers); the last layer's bucket is always exposed.
  // Each stage reduces and gathers its own parameters (the layout's layers and its edges; BLOOM's
  // first stage 5 layers and the embedding, not 70/12) without buckets, and steps its optimizer,
  // after its last backward: stage k's ends k backwards and hops before the first's, which ends
  // the drain. The step ends by the longest of those tails (`lead`: how early stage k's starts);
  // the walk stops once no stage could end later, not even one of the most layers and both edges.
  const auto dp_tail_s = [&](double p) {
    return st.overlap_dp_comm ? 0
                              : workload::dp_reduce_s(s, gradient_links, p) + workload::dp_gather_s(s, gradient_links, p);
  };
  const double most_layers = st.vp * std::ceil(static_cast<double>(m.layers) / (st.pp * st.vp));
  const double layer_params = workload::layer_params_per_gpu(params, m, st);
  const double most_params = most_layers * layer_params +
                             workload::embedding_params_per_gpu(params, st) + workload::head_params_per_gpu(params, m, st);
  const double longest_tail = dp_tail_s(most_params) + workload::optimizer_s(s, most_params);
  double stage_params = 0, tail_lead = 0, optimizer = 0;
  for (double k = 0, lead = 0, tail = -1; k < st.pp && lead < longest_tail - tail; ++k) {
    const Stage g = stages.at(static_cast<int>(k));
    const double p = workload::stage_own_params_per_gpu(params, m, st, static_cast<int>(k), g.layers);
    const double step_s = workload::optimizer_s(s, p);
    const double own = dp_tail_s(p) + step_s - lead;
    if (own > tail) tail = own, stage_params = p, tail_lead = lead, optimizer = step_s;
    lead += (g.layers * g.layer_bwd + g.edge_bwd) / st.vp + stages.transfer();
  }
  const double group = std::min<double>(micro_batches, st.pp);
  const bool aligned = st.grad_sync == spec::GradSync::kAligned && st.vp > 1;
  const DpWindow dp_window{layers, st.vp, group};
  // Under CUDA_LAUNCH_BLOCKING=1 the host waits for each bucket and gather it starts before it
  // launches the next kernel: nothing overlaps, though they are still a layer's each (where the
  // host launches at all: no host time models CUDA graphs).
  const bool host_blocks = st.host_blocks_on_launches();
  const auto exposed = [&](double comm, double last, const PassStream& stream, bool streams, double idle, Span in_pass) {
    return st.overlap_dp_comm && !host_blocks ? dp_exposure(comm, last, stream, streams, idle, dp_window, in_pass)
                                              : Exposure{comm, 0};
  };
  // The output head runs its forward after every layer's parameters are needed and its backward
  // before any layer's gradient is complete: no gather or bucket hides behind it.
  const double window_fwd = kernels_fwd - slowest.head_fwd, window_bwd = kernels_bwd - slowest.head_bwd;
  const auto stage_side = [&](SideTransfers t) { for (SideTransfer& x : t) x = x.scaled(layers); return t; };
  const PassStream stage_fwd{window_fwd, window_fwd * fwd_slowdown, 0, layers * layer.links.apart.fwd,
                             layers * layer.links.shared.fwd, stage_side(layer.links.fwd_side)};
  // Under ZB-H1 a layer's gradients are complete only after its weight-gradient pass of the
  // last micro-batch, which every stage runs last: its buckets hide behind that pass alone,
  // which runs no collectives.
  const double kernels_wgrad = layers * layer.wgrad + slowest.edge_wgrad;
  const PassStream stage_bwd =
      st.schedule == spec::Schedule::kZeroBubbleH1
          ? PassStream{kernels_wgrad, kernels_wgrad * bwd_slowdown, 0, 0, 0}
          : PassStream{window_bwd, window_bwd * bwd_slowdown, 0, layers * layer.links.apart.bwd,
                       layers * layer.links.shared.bwd, stage_side(layer.links.bwd_side)};
  // With overlap the gradients are reduced in a bucket per layer and one per edge of the stage,
  // and the ZeRO-1/2 parameters gathered layer by layer, as the simulator builds them: each
  // collective pays its fixed costs (launch, ring steps), which one over the stage pays once.
  // Their seconds on the stage, the last of the backward's buckets, which nothing follows: the
  // embedding's on the first stage, else a layer's (the first of the gathers: a layer's), and a
  // layer's.
  struct DpCollectives {
    double seconds = 0, last = 0, each = 0;
  };
  const auto collectives = [&](double (*dp_collective_s)(const spec::Scenario&, const cost::GroupLinks&, double),
                               bool edges) {
    const auto collective_s = [&](double p) { return dp_collective_s(s, gradient_links, p); };
    if (!st.overlap_dp_comm) return DpCollectives{collective_s(stage_params), 0};
    const double layer_s = collective_s(layer_params);
    DpCollectives c{layers * layer_s, layer_s, layer_s};
    if (edges && slowest_index == 0) {
      c.last = collective_s(workload::embedding_params_per_gpu(params, st));
      c.seconds += c.last;
    }
    if (edges && slowest_index == st.pp - 1) c.seconds += collective_s(workload::head_params_per_gpu(params, m, st));
    return c;
  };
  // The wait between rounds falls in the forward and in the backward by their kernel times.
  const double kernels_both = kernels_fwd + kernels_bwd;
  const double bwd_share = kernels_both > 0 ? kernels_bwd / kernels_both : 0.5;
  const DpCollectives reduces = collectives(workload::dp_reduce_s, true);
  const DpCollectives gathers = collectives(workload::dp_gather_s, false);
  // A layer's bucket starts as its backward ends (Megatron-LM's _ParamAndGradBucketGroup.
  // register_grad_ready starts the bucket group's sync once its last parameter's gradient is
  // ready), with the next layer's backward, so it meets the CP ring only for what outlasts that
  // pass's kernels before the attention (PassStream::beside_group); aligned sync queues a chunk's
  // buckets at once, and the gathers are queued ahead of the forward (the simulator's prefetch
  // stream runs them back to back from the step's start): those run throughout the passes.
  const Span bucket_span = aligned ? kWholePass : Span{0, reduces.each};
  // After-backward sync (torch.distributed.pipelining) runs the stage's reductions after its last
  // backward, beside none of its passes: all exposed on the stage that ends last.
  const bool after_backward = st.grad_sync == spec::GradSync::kAfterBackward && st.pp > 1 && st.overlap_dp_comm;
  const Exposure reduce = after_backward
                              ? Exposure{reduces.seconds, 0}
                              : exposed(reduces.seconds, reduces.last, stage_bwd, !aligned,
                                        round_wait * bwd_share, bucket_span);
  const Exposure gather =
      exposed(gathers.seconds, gathers.last, stage_fwd, true, round_wait * (1 - bwd_share), kWholePass);
  // The drain is a chain: each stage's last backward passes, slowed by the buckets queued beside
  // them, hand their gradients to the stage before, so the other stages' stretches add to the
  // slowest one's; under interleaving too, where a stage runs its other chunks' last passes
  // beside the buckets of the chunks it has finished. (With aligned sync every stage starts a
  // chunk's buckets at once, after its passes. Under ZB-H1 the buckets wait for the weight
  // gradients, which no stage waits for. In the fill each stage gathers its parameters while it
  // waits for its first input; with blocking launches it gathers each layer's parameters only
  // when the layer is due, after that input, so the fill passes every stage's gathers on.)
  const bool drain_chain = !aligned && st.schedule != spec::Schedule::kZeroBubbleH1;
  const double fill_gathers = st.overlap_dp_comm && host_blocks ? (st.pp - 1.0) * gather.seconds : 0;
  const double dp = reduce.seconds + gather.seconds + (drain_chain ? (st.pp - 1.0) * reduce.stretch : 0) + fill_gathers - tail_lead;
  // The tied embedding's gradient sync between the first and last stages follows the reduction.
  const double tied = workload::tied_embedding_sync_s(s);

  Breakdown& b = out.breakdown;
  b.compute_s = micro_batches * (kernels_fwd + kernels_bwd - slowest.root);
  b.tp_comm_s = micro_batches * layers * layer.tp;
  b.cp_comm_s = micro_batches * layers * layer.cp;
  b.ep_comm_s = micro_batches * layers * layer.ep;
  b.pp_comm_s = micro_batches * steady_p2p;
  b.fsdp_comm_s = micro_batches * (layers * layer.fsdp.total() + slowest.root);
  b.host_s = micro_batches * (layers * layer.host + slowest.edge_host);
  b.bubble_s = bubble;
  b.dp_comm_s = dp + tied;
  b.optimizer_s = optimizer;
  out.step_time_s = pipeline + dp + tied + optimizer;

  set_rates(s, params, out);
  out.memory = workload::memory_per_gpu(s, params, workload::in_flight_activation_bytes(s));
  return out;
}

}  // namespace

Estimate estimate(const spec::Scenario& s) {
  return s.model.is_moe() ? estimate_with<true>(s) : estimate_with<false>(s);
}

}  // namespace stepcast::analytic
