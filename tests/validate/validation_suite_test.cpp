// The validation suite: every row of ../shared/validation predicted, the error table printed, and
// a ratchet on each source's MAPE. The limits are the values reached on 2026-11-21 (rounded up to
// the next 0.5 point); lower them when the model improves. Raise one only for a correction whose
// reason is written beside it: an error that hid another is a bug, not accuracy.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "core/csv.h"
#include "report/report.h"
#include "spec/presets.h"
#include "validate/validate.h"

namespace stepcast::validate {
namespace {

Report validate_file(const std::string& name, Engine engine = Engine::kAnalytic) {
  const std::string path = STEPCAST_SHARED_DIR "/validation/" + name;
  return run(read_table(name, core::read_file(path), {}), engine);
}

// Measured runs that ship with the project (data/validation/README.md).
Report validate_shipped(const std::string& name, Engine engine, const Options& options = {}) {
  const std::string path = STEPCAST_SOURCE_DIR "/data/validation/" + name;
  return run(read_table(name, core::read_file(path), options), engine);
}

// vTrain's multi-node measurements, on the cluster its configs describe.
Report validate_vtrain_multi_node(Engine engine) {
  Options options;
  options.cluster = spec::cluster_preset("vtrain-a100-cluster");
  return validate_shipped("vtrain_multi_node_a100.csv", engine, options);
}

void expect_ratchet(const Report& r, const std::map<std::string, double>& limits) {
  std::printf("%s", report::validation_text(r).c_str());
  EXPECT_EQ(r.overall.predicted, r.overall.rows) << "every row must be predicted";
  for (const Summary& s : r.per_source) {
    const auto it = limits.find(s.source);
    ASSERT_NE(it, limits.end()) << "no ratchet for source " << s.source;
    EXPECT_LE(s.mape, it->second) << s.source;
  }
}

// A one-source table shipped in data/validation: its row count and its ratchet, and under the
// closed form that every run fits.
constexpr const char* kMeasuredH100 = "stepcast tools/measure_step.py, one H100 (PyTorch 2.11)";
constexpr const char* kMeasuredH200 = "stepcast tools/measure_step.py, one H200 (PyTorch 2.11)";

void expect_shipped_within(const std::string& name, Engine engine, int rows,
                           const std::string& source, double limit) {
  const Report r = validate_shipped(name, engine);
  EXPECT_EQ(r.overall.rows, rows);
  expect_ratchet(r, {{source, limit}});
  if (engine == Engine::kAnalytic) {
    EXPECT_EQ(r.overall.not_fitting, 0);
  }
}

TEST(ValidationSuite, PublishedRunsStayWithinTheirRatchet) {
  const Report r = validate_file("published_runs.csv");
  EXPECT_EQ(r.overall.rows, 83);
  // 2026-11-22, last: the four marked "split k" rise with A100 GEMMs of too few output tiles split
  // along k, as cuBLAS does; the rule halves the tile model's error on OpenXLA's measured GEMMs
  // (tests/cost/gemm_grid_test.cpp), and the rows it speeds up were already predicted too fast.
  // Later, "softmax": Megatron's fused softmax runs only where micro-batch x heads per TP rank is a
  // multiple of 4, else PyTorch's FP32 chain. At Table 1's default micro-batch of 1 that is the
  // 18.4B (6 heads per rank: -3.7% -> -18.6%) and the 76.1B (10: +14.2% -> 0.0%).
  // Later still, 0.0878, up: the Megatron-LM of the paper had no such fallback (its kernel asserted
  // the shape; the fallback came with PR #133, August 2021), so those two runs had an even
  // micro-batch, the default now (18.4B: -18.6% -> +4.0%; 76.1B: 0.0% -> +16.6%).
  // 2026-11-22, later again: up with Megatron-LM's scatter/gather of pipeline tensors (each TP
  // rank sends 1/tp, the receiver all-gathers): Table 1 0.088, §5.1 0.165, Table 2 0.244, all
  // 0.257 before. Stop 34: Table 1 0.1204, §5.1 0.1762, torchtitan 0.4038, MosaicML 0.2487, all
  // 0.2537 with the optimizer's passes around Adam (the FP16 unscale, the norm, the master copy,
  // the zeroing). Then FSDP2's copies around its collectives for torchtitan: torchtitan 0.3982,
  // its A100 rows 0.1593 (0.4038 and 0.1731 before), all 0.2512. Then the weight gradients'
  // separate accumulation in Megatron-LM of 2021: Table 1 0.0916, §5.1 0.1344, Table 2 0.2406, all
  // 0.2436. Then each linear bias's gradient summed in a kernel of its own: 0.0876, 0.1297, 0.2381,
  // all 0.2427.
  expect_ratchet(
      r,
      // Stop 38: 0.1486, up from 0.0876 with each Table 1 run as the authors' script launched it
      // (Megatron-LM examples/sc21/run_table_1.sh: micro-batches of 16 for the small models
      // instead of the default 1, PyTorch's DDP overlapping their gradients, the virtual
      // stages): no model change; every row is now predicted 10-22% too fast.
      // Stop 39: 0.1488, up as the closed form lets the gradient buckets of the TP runs without
      // pipelining hide behind the TP all-reduces on the other links too, as the simulator does
      // (3.6B +19.57 -> +19.59%, 7.5B +17.63 -> +17.74%, 18.4B +15.59 -> +15.74%). Then 0.1499,
      // up as the end stages of a pipeline without interleaving make one exchange per
      // micro-batch in the steady state, not two, as Megatron's 1F1B runs it and the simulator
      // has it (1T +9.8 -> +10.7%, 39.1B +9.8 -> +10.0%); §5.1 0.1332 (+13.0 -> +13.3%) and
      // Table 2 0.2401 (the 529.6B rows +0.7-0.8 points) for the same reason. Stop 41: 0.1506,
      // up as a collective whose ranks each sit on a node of their own holds the SMs of NCCL's
      // channels through the NIC (2 on 200 Gbit/s, 4 on 400), not the 24 of its NVLink rings:
      // the 18.4B row's DDP buckets across nodes slow its last backward less (+15.7 -> +16.4%).
      // Stop 52 (2026-11-28): 0.1524 (0.15233), up as the interleaved end stages make one exchange
      // fewer per micro-batch too (Megatron's forward_backward_pipelining_with_interleaving sends
      // no output from the last stage's last chunk, no gradient from the first's first), as the
      // simulator has it; Table 2 0.2414 (0.24135) for the same reason. Stop 53 (2026-11-28):
      // 0.1520 (0.15191), down, with each chunk's last gradient bucket starting as its last
      // backward ends (Megatron's register_grad_ready), as the simulator has it.
      {{"Narayanan2021_SC21_Megatron_Table1", 0.1478},
       {"Narayanan2021_SC21_Megatron_Sec5.1", 0.1307},
       // 2026-11-21: 0.44, down from 1.20 with DeepSpeed 0.3.x's ZeRO-3 collectives,
       // one blocking collective per parameter tensor. 2026-11-22: 0.305 with the
       // host's time for the n slice views and copies of each such collective.
       // Later: 0.244 with what DeepSpeed 0.3.x gathers again for the backward
       // after recomputing a layer (beyond its stage3_max_reuse_distance).
       // Stop 54 (2026-11-28): 0.1415 (0.14141) with the persistent tensors' gradients
       // reduce-scattered one by one, each gathered buffer zero-filled, and the persistent
       // parameters gathered again after each step (DeepSpeed 0.3.x's _post_step).
       // 2026-11-28: 0.1331 (0.13296) with c10d's C++ slice copies priced without the
       // profiler's time for the events the traced select and copy_ enclose.
       // Stop 55 (2026-11-28): 0.1564 (0.15632), up, with each gather prefetched beside the
       // compute since the fetch before (stage3.py, prefetch_next_sub_modules): the ZeRO-3
       // rows at 384 and 640 GPUs, already above, rise (+6.7 -> +15.1%, +27.7 -> +40.0%).
       {"Narayanan2021_SC21_Megatron_Table2", 0.1550},
       // 2026-11-21: 0.060, up from 0.045 with SP where the run could not have fitted
       // without it, the stages' real layer counts and async TP per edge GEMM;
       // 2026-11-22: 0.050 with kernels slowed by the SMs of the collectives beside
       // them, as are the four below. Later that day 0.052, up with BF16 GEMMs priced
       // from OpenXLA's measured H100 grid: large GEMMs run 2-10% faster than the tile
       // model's wave quantisation said, and so do the two H100 sources below.
       // 2026-11-25: 0.053, up with the closed form's interleaved stages hiding each chunk's
       // gradient reduction behind the later chunks' backward, as the simulator does (row 3:
       // -1.0% -> +0.6%). Stop 35: 0.0416 with the whole FP32 gradients accumulated over the
       // micro-batches (its §3.3.4), reduce-scattered once a step. Stop 40: 0.0418 (0.04173)
       // with every hop of a micro-batch's way through the interleaved chunks exposed, as the
       // schedule has them (+8.2 -> +7.9%, -3.0 -> -3.4%, +1.4 -> +1.2%). Stop 41: 0.0496
       // (0.04959), up with the gradient group's collectives across nodes holding 4 SMs, not 24,
       // as above (+7.9 -> +8.2%, -3.4 -> -3.0%, +1.2 -> +3.7%). Then 0.0488 (0.04873) with the
       // interleaved drain's stages each slowed by the buckets beside their last chunk's pass,
       // as the simulator has them (+8.1%, -3.1%, +3.4%). Then 0.0539 (0.05389), up with the
       // interleaved step ending by the fullest stage's way, its lighter end stages no longer
       // charged in the fill and drain, as the simulator has it (+9.6%, -0.9%, +5.7%); 0.0541
       // (0.05400) with a collective per gradient bucket and per layer's gather, each paying its
       // fixed costs, as the simulator builds them; 0.0533 (0.05321) with the whole window's
       // stretch chained along the interleaved drain (+9.6%, -1.0%, +5.4%). Stop 42: 0.0381
       // (0.03806) with its context parallelism's K and V all-gathered and exposed (§3.3.2),
       // not passed round a ring beside the attention (row 3: +5.4% -> -0.9%); 0.0435 (0.04348)
       // with the gradient buckets sharing the NIC with those gathers, as the simulator has
       // them (row 3: -2.5%). Stop 43 (2026-11-27): 0.0487 (0.04860), up with the H100's
       // attention curve fitted to FlashAttention-2's measured H100 rates (FlashAttention-3
       // paper) instead of 35% of peak read off its plot on the A100's curve: 3% slower at
       // 131K tokens (+9.4%, -1.1%, -4.1%). Stop 44: 0.0526 (0.05251), up with the H100's
       // FlashAttention-2 curve fitted to its causal backward, measured (+8.6%, -1.8%, -5.3%).
       // Stop 52 (2026-11-28): 0.0542 (0.05416), up, with the interleaved way waiting where a
       // stage's warm-up forwards do not cover its first backward's round trip through the later
       // stages' last chunks (Llama 3's 7, 8 x 14, 7 layers), as Megatron's schedule runs and the
       // simulator has it (+8.3%, -2.2%, -5.7%). Stop 53 (2026-11-28): 0.0535 (0.05341), down, with
       // each chunk's last gradient bucket starting as its last backward ends (+8.3%, -2.2%, -5.5%).
       {"Llama3Herd2024_Table4", 0.0535},
       // 2026-11-21: 0.461, up from 0.42 with torchtitan's TP run as TP + SP, as it is.
       // 2026-11-22: the three below lower again where FSDP's gather and reduce-scatter
       // overlap in backward, each holding its own SMs; the two torchtitan ones again
       // once memory-bound kernels share HBM with the collectives beside them.
       // 2026-11-22, later: 0.449, up because Float8 TP gathers FP8, as torchao's
       // Float8ColwiseParallel and Float8RowwiseParallel do (row 34: +12.9 -> +22.2%).
       // 2026-11-23: 0.431, down with async TP's GEMMs split into a piece per rank; 0.406
       // with Float8's scale found in a pass of its own before each cast.
       // Stop 39: 0.391 (0.3907) with each stage's last backward slowed by its gradient buckets
       // along the pipeline's drain (the 405B rows with 1F1B, 0.7-2.2 points nearer). Stop 41:
       // 0.3981 (0.39801), up with FSDP's collectives across nodes holding 4 SMs, as above (the
       // 70B and 405B rows, 0.4-2.8 points further). Then 0.4001 (0.40008) with the interleaved
       // step ending by the fullest stage's way, as above (the 405B interleaved row). Stop 42:
       // 0.4000 (0.39992) with the CP ring run again beside the recomputed attention (0.39991
       // with the FSDP collectives beside the exposed CP exchange). Stop 43: 0.3817 (0.38167)
       // with the H100's measured attention curve, as above; 0.3666 (0.36651) with eager RMSNorm
       // at the cost Liger-Kernel measured for it. Stop 44: 0.3363 (0.33625) with the H100's
       // attention curve fitted to its causal backward, the final norm and loss eager under
       // per-block compile and FSDP2's shard copies; 0.3285 (0.32847) with FSDP's root unit.
       // Stop 45: 0.3247 (0.32466) with the eager loss's kernels at their cost inside measured
       // H100 steps (log-softmax reads each row three times). Stop 46 (2026-11-27): 0.3239
       // (0.32388) with async TP hiding each backward collective behind the input gradient only;
       // 0.3315 (0.33142), up, with eager RMSNorm at the H100's own measurement inside our
       // steps (46 and 108 bytes per element, not Liger's A100 58 and 155): the eager rows go
       // from 8.2% and 11.2% fast to 14.5% and 17.6%. Stop 51 (2026-11-28): 0.3327 (0.33265), up,
       // with 1F1B's bubble of unequal stages (the head and the embedding on the end stages)
       // following the schedule, where GPipe's had been taken: a heavier stage's warm-up overlaps
       // the lighter stages' round trip (engines on uneven pipelines 3.05% -> 0.70% apart); the
       // 405B rows, 26-65% fast already, go 0.3-0.7 points further. Stop 52 (2026-11-28): 0.3315
       // (0.33143) with FSDP2's gathers waiting for the copy out (FSDPParamGroup's
       // wait_for_unshard): none runs beside a copy out; 0.3316 (0.33152), up, with the
       // interleaved end stages' one exchange fewer (Narayanan above). 2026-11-28: 0.3312
       // (0.33118) with each chunk's first forward gather waiting for the forward to start
       // (FSDP's root pre-forward, both engines; docs/accuracy.md). Stop 54 (2026-11-28): 0.3332
       // (0.33318), up, with the root unit kept gathered from forward to backward, as FSDP1 and
       // FSDP2 before PyTorch 2.8 keep it (Strategy::fsdp_root_reshards; docs/accuracy.md).
       // Stop 54 (2026-11-28): 0.3132 (0.31319) with its context parallelism as PyTorch ran it,
       // K and V gathered at once (rotate method allgather) with every query head's (repeat_kv),
       // dK and dV passed round the ring in FP32 (CpExchange::kGatheredRing). 2026-11-28: 0.3081
       // (0.30806) with the output layer in BF16 under Float8 (torchtitan's module_filter_fn);
       // 0.3048 (0.30476) with its pipeline stages reduce-scattering their gradients after their
       // last backward (GradSync::kAfterBackward). 2026-11-30: 0.2937 (0.29366) with async TP's
       // backward reduce-scatters at the blocks' starts unfused, as Inductor's pass leaves them
       // (workload::tp_backward_overlapped).
       {"torchtitan docs/performance.md (@eaea6f6, Dec-2024 versions)",
        0.2937},  // 0.3944, ZeRO-2 accumulation
       // Stop 43: 0.1527 (0.15267) with the A100's attention curve fitted to FlashAttention-2's
       // measured A100 rates.
       // 0.0917 (0.09162) with eager RMSNorm at the cost Liger-Kernel measured for it. Stop 44:
       // 0.0910 (0.09095) with FSDP2's shard copies; 0.0823 (0.08220) with FSDP's root unit.
       // Stop 45: 0.0811 (0.08103) with the eager loss's measured cost. Stop 52 (2026-11-28):
       // 0.0770 (0.07690) with FSDP2's gathers waiting for the copy out, as above. 2026-11-28:
       // 0.0762 (0.07618) with each forward's first gather waiting for its start, as above.
       // Stop 54 (2026-11-28): 0.0784 (0.07840), up, with the root unit kept gathered, as above;
       // 0.0806 (0.08058), up, with the recomputed ops that open each backward slowed by their own
       // shares beside ZeRO-3's collectives, not the pass's average: torchtitan wraps each block
       // in checkpoint_wrapper before fully_shard, so FSDPState._pre_backward gathers and
       // prefetches before torch.utils.checkpoint recomputes (as the simulator runs them).
       {"torchtitan docs/performance.md (@0413364, older A100 version)", 0.0806},
       // Later 0.251 (was 0.277): the A100 40GB rows ran attn_impl triton, a
       // FlashAttention-1 generation kernel, at half FlashAttention-2's rate.
       // Stop 43: 0.2478 (0.24771) with the H100's measured attention curve, as above; 0.2424
       // (0.24235) with the A100's. Stop 44: 0.2336 (0.23360) with the H100's curve fitted to
       // its measured causal backward and its streaming bandwidth measured; 0.2298 (0.22973)
       // with FSDP's root unit; 0.2292 (0.22912) with the H100's optimizer kernels at their
       // measured bandwidth. Stop 46 (2026-11-27): 0.2182 (0.21814) with the amp_bf16 and
       // DEFAULT rows' FP32 gradient reduction (Composer's DEFAULT since its PR #2047).
       // 2026-11-28: 0.2169 (0.21688) with each forward's first gather waiting for its start, as
       // above. Stop 54 (2026-11-28): 0.2182 (0.21813), up, with FSDP1's root unit kept gathered
       // from forward to backward (_post_forward_reshard), as above; 0.2183 (0.21821), up, with the
       // recomputed ops that open each backward slowed by their own shares, as above. Stop 54
       // (2026-11-28): 0.1628 (0.16278) with the H100 and A100 80GB tables' FlashAttention 1
       // generation kernel too: they ran the benchmark branch's submit_benchmarks.py, which
       // installs flash-attn 1.0.7 on the H100 and defaults --attn_impl to triton
       // (source_software.cpp). 2026-11-28: 0.1511 (0.15109) with Composer's DecoupledAdamW, a
       // per-tensor loop of unfused kernels (80 bytes a parameter), and MPT's linear biases
       // (MPTConfig's no_bias default; the table's NumParams hold them). 2026-11-28: 0.1506
       // (0.15055) with FSDP1's gradient work around each reduce-scatter (kFlatParameter):
       // autograd's flattening on the compute stream, the casts and divides on the post-backward
       // stream before the scatter.
       {"MosaicML llm-foundry scripts/train/benchmarking/README.md (@061f2c7)", 0.1506}});
  // 2026-11-22: 0.275 (0.295 before the host's slice copies of Table 2's ZeRO-3, 0.445 before its
  // per-tensor collectives, 0.335 before SMs).
  // 2026-11-23: 0.2605 with async TP's GEMMs split into a piece per rank; 0.255 with FP8's
  // scale found before each cast.
  // Stop 38: 0.249 with Narayanan's Table 1 runs as the authors' scripts launched them (above).
  // Stop 39: 0.2491 (0.24906) with the gradient group's collectives hiding behind the exposed TP
  // and EP collectives on other links (Table 1 above, torchtitan's 2D rows, Llama 3); then 0.2483
  // (0.24820) with the drain's stages each slowed by their own buckets (torchtitan above); then
  // 0.2487 (0.24865) with the end stages' single exchange per micro-batch (Narayanan above).
  // Stop 41: 0.2506 (0.25059) with collectives across nodes holding their NIC channels' SMs;
  // 0.2512 (0.25120) with the interleaved step ending by the fullest stage's way. Stop 42: 0.2506
  // (0.25058) with Llama 3's all-gathered K and V, as above; 0.2508 (0.25077) with the gradient
  // buckets sharing their links with the CP exchange. Stop 43: 0.2469 (0.24683) with the H100's
  // attention curve fitted to FlashAttention-2's measured H100 rates; 0.2442 (0.24419) with the
  // A100's; 0.2351 (0.23502) with eager RMSNorm at the cost Liger-Kernel measured for it.
  // Stop 44: 0.2253 (0.22526) with the H100 measurements of data/measurements; 0.2213
  // (0.22129) with FSDP's root unit; 0.2211 (0.22106) with the H100's optimizer kernels at
  // their measured bandwidth. Stop 45: 0.2202 (0.22012) with the eager loss's measured cost.
  // Stop 46 (2026-11-27): 0.2200 (0.21995) with async TP's backward collectives beside the input
  // gradient only; 0.2216 (0.22158), up, with eager RMSNorm at the H100's own measurement (the
  // Dec-2024 torchtitan table's eager rows); 0.2175 (0.21749) with MosaicML's amp_bf16 rows'
  // FP32 gradient reduction. Stop 51 (2026-11-28): 0.2178 (0.21776), up, with 1F1B's bubble of
  // unequal stages following the schedule (torchtitan above). Stop 52 (2026-11-28): 0.2171
  // (0.21710) with FSDP2's gathers waiting for the copy out (torchtitan above); 0.2176 (0.21753),
  // up, with the interleaved end stages' one exchange fewer (Narayanan above); 0.2176 (0.21759)
  // with the interleaved warm-up's wait (Llama 3 above). 2026-11-28: 0.2170 (0.21697) with each
  // chunk's first forward gather waiting for the forward to start (torchtitan above). Stop 54
  // (2026-11-28): 0.2181 (0.21801), up, with the root unit kept gathered (torchtitan above);
  // 0.2036 (0.20357) with DeepSpeed 0.3.x's persistent tensors priced (Narayanan Table 2 above);
  // 0.2038 (0.20380), up, with the recomputed ops that open each backward slowed by their own
  // shares beside ZeRO-3's collectives (torchtitan above); 0.1831 (0.18309) with the H100 and
  // A100 80GB MosaicML rows' FlashAttention 1 generation kernel (MosaicML above); 0.1788
  // (0.17877) with PyTorch's gathered-ring context parallelism (torchtitan above). 2026-11-28:
  // 0.1745 (0.17440) with Composer's DecoupledAdamW loop and MPT's biases (MosaicML above).
  // 2026-11-28: 0.1726 (0.17258) with torchtitan's BF16 output layer and after-backward sync;
  // 0.1688 (0.16874) with async TP's unfused block-start reduce-scatter (torchtitan above),
  // DeepSpeed 0.3.x's slice copies without the profiler's time (Narayanan Table 2 above) and
  // FSDP1's gradient work around each reduce-scatter (MosaicML above); 0.1722 (0.17211), up,
  // with DeepSpeed 0.3.x's gathers prefetched beside the compute (Narayanan Table 2 above).
  // 0.1714 (0.17139) with Megatron's QKV bias added in a kernel of its own.
  EXPECT_LE(r.overall.mape,
            0.1714);  // ZeRO-2 accumulation (0.2427); bias gradients (0.2436); separate
                      // accumulation (0.2512); FSDP2's copies (0.2537); scatter/gather (0.257);
                      // FlashAttention 1 (0.267 with the re-gathers, 0.276 before)
  // Every measured run ran; 2026-11-21: the memory model says 1 of them could not have fitted
  // (6 before it priced torchtitan's op-level checkpointing and DeepSpeed's live-parameter cap).
  EXPECT_LE(r.overall.not_fitting, 1);
}

TEST(ValidationSuite, VtrainSingleNodeStaysWithinItsRatchet) {
  const Report r = validate_file("vtrain_single_node_a100.csv");
  EXPECT_EQ(r.overall.rows, 1440);
  // 2026-11-21: 0.093 with host dispatch (was 0.30); 0.106 once the closed form stopped charging
  // the output head in every pipeline fill and drain slot. That overcharge had offset
  // per-micro-batch time missing at TP 1 (docs/errors.md); the measured rows fit the corrected form
  // twice as well. 2026-11-22: 0.086 with GEMMs of an odd dimension (GPT-2's unpadded head at TP 1)
  // at a third of their rate, as Netflix measured. Later, 0.087: DeepSpeed's pipeline engine
  // partitions its tensors over the TP group (0.0875). Stop 32 (2026-11-22): 0.0845 with the tied
  // embedding's gradient all-reduced between the first and last stages. Stop 34: 0.0789 with
  // the optimizer's passes around Adam, FP16's unscale and the cast to FP32 main gradients among
  // them. Stop 35: 0.0786 with the weight gradients' separate accumulation; then 0.0790, up, with
  // each linear bias's gradient summed in a kernel of its own (it reads the output gradient), as
  // Megatron-DeepSpeed does. Stop 39: 0.0795 (0.07943) with the end stages of a pipeline making
  // one exchange per micro-batch in the steady state (its 2- and 4-stage rows 0.1 point off).
  EXPECT_LE(r.overall.mape,
            0.0730);  // 2026-11-28: 0.0730 (0.07298) with the QKV bias added in a kernel of its
                      // own; split k, as above (0.09); the softmax fallback at TP 8, micro-batch 1
  EXPECT_EQ(r.overall.not_fitting, 0);
}

TEST(ValidationSuite, VtrainMultiNodeStaysWithinItsRatchet) {
  const Report r = validate_vtrain_multi_node(Engine::kAnalytic);
  EXPECT_EQ(r.overall.rows, 109);
  // 2026-11-22: 0.1245 when first added (vTrain reports 14.73% on these rows, profiling each
  // operator on a GPU). Stop 34: 0.1220 with the optimizer's passes around Adam. Stop 35: 0.1145
  // with the weight gradients' separate accumulation, 0.1101 with each linear bias's gradient
  // summed in a kernel of its own. Stop 39: 0.1151, up with the end stages of a pipeline making
  // one exchange per micro-batch in the steady state, not two.
  expect_ratchet(r, {{"vTrain ground_truth_multi (Megatron-DeepSpeed, A100 nodes)", 0.1123}});
  EXPECT_EQ(r.overall.not_fitting, 0);
}

// NVIDIA's Megatron-Bridge performance summary: DGX-H100 runs of dense Llama models.
TEST(ValidationSuite, MegatronBridgeH100StaysWithinItsRatchet) {
  // 2026-11-22: 0.201 when first added (all six predicted 16-25% too fast). 2026-11-23: 0.128
  // with userbuffers' GEMMs split into a piece per TP rank (11-15% too fast). 2026-11-24: 0.127
  // with each FP8 cast's two kernels priced as two. 2026-11-25: 0.147, up with the closed form's
  // interleaved stages hiding each chunk's gradient reduction and parameter gather behind the
  // other chunks, as the simulator does (405B rows: 0.64 s -> 0.13 s of exposed DP traffic).
  expect_shipped_within("megatron_bridge_h100.csv", Engine::kAnalytic, 6,
                        "Megatron-Bridge performance summary (DGX-H100)",
                        0.0972);  // 2026-11-28: 0.0972 (0.09719) with Megatron-Core's output
                                  // layer (tensor_parallel.ColumnParallelLinear, outside Transformer
                                  // Engine's fp8_autocast) in BF16 under FP8; 0.1207 before.
                                  // stop 40: 0.13703, interleaved hops; stop 41: 0.14554, up with
                                  // the DP collectives across nodes holding 4 SMs, not 24, then
                                  // 0.14680 with the interleaved step ending by the fullest
                                  // stage's way (126 layers: 7, 8 x 6, 7 on 8 stages), 0.14686
                                  // with a collective per gradient bucket; stop 43 (2026-11-27):
                                  // 0.14697, with each stage's buckets and gathers run in its
                                  // waits between interleaved rounds, as the simulator runs them;
                                  // 0.14245 with the H100's attention curve fitted to
                                  // FlashAttention-2's measured H100 rates; stop 44: 0.12431
                                  // with that curve refitted to the causal backward measured
                                  // on an H100, and its streaming bandwidth measured;
                                  // 0.12410 with its optimizer kernels' measured bandwidth;
                                  // stop 46 (2026-11-27): 0.12063 with Transformer Engine's
                                  // bulk overlaps in the column-parallel backward (the input
                                  // gathered again, the reduce-scatter beside the weight
                                  // gradient) on the recipes' num_sm
}

// The FlashAttention repository's GPT3 training speeds on one 8 x A100 80GB node (Nov 2022).
TEST(ValidationSuite, FlashAttentionGpt3StaysWithinItsRatchet) {
  // 2026-11-22: 0.153 when first added (all five predicted 10-24% too fast); 0.135 once
  // FlashAttention 1 ran the 760M model's 96-wide heads on its 128-wide kernel. Stop 34: 0.1327
  // with the optimizer's passes around Adam (torch's clip_grad_norm_ always scales). Stop 35:
  // 0.1243 with the weight gradients' separate accumulation into the FP32 gradients. Stop 43
  // (2026-11-27): 0.0993 (0.09928) with the A100's attention curve fitted to FlashAttention-2's
  // measured A100 rates (FlashAttention 1 runs at half of it). Stop 46: 0.0867 (0.08669) with
  // Lightning's autocast casting each FP32 weight in the forward and its gradient in the backward.
  // Stop 53 (2026-11-28): 0.0862 (0.08614), down, with the last DDP bucket starting as the backward
  // that completes it ends.
  expect_shipped_within("flash_attention_gpt3_a100.csv", Engine::kAnalytic, 5,
                        "flash-attention training/README.md (Nov 2022 GPT3 on The Pile)", 0.0862);
}

// BigScience's BLOOM-176B training on 384 A100 80GB of Jean Zay (March 2022).
TEST(ValidationSuite, Bloom176bStaysWithinItsRatchet) {
  // 2026-11-22: 0.200 when first added (predicted 20% short of the measured 105.2 s); stop 32:
  // 0.194 with the tied embedding's gradient sync (250,880 x 14,336 / 4 in FP32, between nodes).
  // Stop 35: 0.1663 with the weight gradients' separate accumulation into the BF16 optimizer's FP32
  // gradients, 0.1642 with each linear bias's gradient summed in a kernel of its own.
  // Stop 52 (2026-11-28): 0.1680 (0.16795), up, with each stage reducing and updating its own
  // laid-out parameters after the schedule (the first stage 5 blocks and the embedding, not 70/12
  // blocks) and the step ending with the longest such tail, as the simulator has it (87.94 ->
  // 87.55 s predicted).
  expect_shipped_within("bloom_176b_a100.csv", Engine::kAnalytic, 1,
                        "BigScience BLOOM-176B training (tr11-176B-ml)", 0.1680);
}

// Korthikanti et al.'s end-to-end iteration times (MLSys 2023, Table 5): Megatron-LM of 2022 on
// A100 80GB, each model with full recomputation and with sequence parallelism plus selective
// recomputation.
TEST(ValidationSuite, Korthikanti2022StaysWithinItsRatchet) {
  // Stop 33 (2026-11-22): 0.0804 when first added (all eight predicted 5-12% too fast, the
  // selective rows 8-12%, the full ones 5-7%). Stop 34: 0.0719 with the optimizer's passes around
  // Adam. Stop 35: 0.0676 with each linear bias's gradient summed in a kernel of its own.
  // Stop 38: 0.0892, up with Megatron-LM's column-parallel backward collectives run beside their
  // GEMMs, as its 2022 code ran them (--tp-async-backward): all eight now 7-11% too fast.
  // Stop 39: 0.0910, up with the end stages of the 1T model's pipeline (no interleaving) making
  // one exchange per micro-batch in the steady state (-7.4 -> -8.2%, -8.3 -> -8.9%). Stop 52
  // (2026-11-28): 0.0933 (0.09330), up, as the interleaved end stages do too (Megatron's
  // forward_backward_pipelining_with_interleaving), as the simulator has it.
  expect_shipped_within("korthikanti_2022_a100.csv", Engine::kAnalytic, 8,
                        "Korthikanti2022_MLSys_Table5", 0.0917);  // 2026-11-28: with the QKV bias added in a kernel of its own
}

// The discrete-event engine on the same rows (validate --engine sim), with its own ratchet.
TEST(ValidationSuite, PublishedRunsThroughTheSimulatorStayWithinTheirRatchet) {
  const Report r = validate_file("published_runs.csv", Engine::kSimulation);
  EXPECT_EQ(r.overall.rows, 83);
  // 2026-11-22, later: up with full-duplex links (a pipeline send and receive no longer share a
  // port's bandwidth): Table 1 0.079, §5.1 0.16, Table 2 0.239, all 0.2545 before. Then up with
  // Megatron-LM's scatter/gather of pipeline tensors: 0.096, 0.174, 0.253, 0.259 before. Stop 34:
  // Table 1 0.1231, §5.1 0.1796, torchtitan 0.4024, MosaicML 0.2491, all 0.2544 with the
  // optimizer's passes around Adam. Then FSDP2's copies: torchtitan 0.3976, its A100 rows 0.1647,
  // all 0.2523. Then the weight gradients' separate accumulation: Table 1 0.0941, §5.1 0.1376,
  // Table 2 0.2433, all 0.2447. Then each linear bias's gradient summed in a kernel of its own:
  // 0.0900, 0.1328, 0.2408, all 0.2438.
  expect_ratchet(
      r,
      // Stop 38: 0.1501 with Table 1 run as the authors' scripts launched them, as above.
      // Stop 41: 0.1508 with collectives across nodes holding their NIC channels' SMs, as above.
      {{"Narayanan2021_SC21_Megatron_Table1", 0.1467},
       {"Narayanan2021_SC21_Megatron_Sec5.1", 0.1304},  // 0.182 before the tied embedding sync
       // 2026-11-21: 0.435, as above (was 1.19); 2026-11-22: 0.30 with the host's slice copies;
       // 0.239 with the re-gathers after recomputation, as above. Stop 54 (2026-11-28): 0.1410
       // (0.14099) with DeepSpeed 0.3.x's persistent tensors priced, as above. 2026-11-28:
       // 0.1326 (0.13254) with c10d's slice copies priced unprofiled, as above. Stop 55
       // (2026-11-28): 0.1559 (0.15588), up, with the gathers prefetched, as above.
       {"Narayanan2021_SC21_Megatron_Table2", 0.1546},
       // 2026-11-22: 0.05 (0.072 before SMs; 0.045 while a second collective at
       // once took no further SMs: the parameter gathers beside the gradient buckets
       // now slow row 3's stages more, +0.4% to -1.4%). Stop 35: 0.0493, up from 0.0468, with
       // the whole FP32 gradients accumulated (rows 2 and 3 now 6.2% and 2.5% slow). Stop 41:
       // 0.0506 (0.05054), up with the gradient collectives across nodes holding 4 SMs, not 24:
       // the three rows +6.0, -6.2, -2.5% -> +9.2, -1.4, +4.6%, and 0.1 point from the closed form.
       // Stop 42: 0.0438 (0.04376) with Llama 3's all-gathered K and V (row 3: +4.5% -> -2.5%).
       // Stop 43 (2026-11-27): 0.0491 (0.04902), up with the H100's attention curve fitted to
       // FlashAttention-2's measured H100 rates (row 3: -2.5% -> -4.1%). Stop 44: 0.0531
       // (0.05300) with that curve fitted to the causal backward measured on an H100.
       {"Llama3Herd2024_Table4", 0.0531},
       // 2026-11-22, as above, and lower with HBM shared with collectives (was 0.35);
       // later 0.445 with FP8 TP gathers, as above; 2026-11-23: 0.429 with async TP's
       // GEMMs split into a piece per rank, 0.405 with FP8's scale found before each cast.
       // Stop 41: 0.4012 (0.40112) with FSDP's collectives across nodes holding 4 SMs. Stop 42:
       // 0.4010 (0.40095) with the CP ring run again beside the recomputed attention. Stop 43:
       // 0.3827 (0.38269) with the H100's measured attention curve; 0.3676 (0.36757) with eager
       // RMSNorm at its measured cost. Stop 44: 0.3376 (0.33754) with the H100 measurements, as
       // above; 0.3299 (0.32985) with FSDP's root unit. Stop 45: 0.3260 (0.32600) with the eager
       // loss's measured cost. Stop 46 (2026-11-27): 0.3253 (0.32522) with async TP's backward
       // collectives beside the input gradient only; 0.3329 (0.33282), up, with eager RMSNorm at
       // the H100's own measurement. Stop 52 (2026-11-28): 0.3302 (0.33011) with FSDP2's
       // gathers waiting for the copy out, in forward for the one two layers back. Stop 54
       // (2026-11-28): 0.3322 (0.33216), up, with the root unit kept gathered from forward to
       // backward, as FSDP1 and FSDP2 before PyTorch 2.8 keep it (Strategy::fsdp_root_reshards).
       // Stop 54 (2026-11-28): 0.3099 (0.30985) with PyTorch's gathered-ring context parallelism,
       // as above. 2026-11-28: 0.3042 (0.30418) with the BF16 output layer under Float8 and the
       // stages' gradients reduced after their last backward, as above. 2026-11-30: 0.2931
       // (0.29306) with async TP's unfused backward reduce-scatters, as above.
       {"torchtitan docs/performance.md (@eaea6f6, Dec-2024 versions)",
        0.2931},  // 0.3939, ZeRO-2 accumulation
       // Stop 43: 0.1580 (0.15797) with the A100's measured attention curve.
       // 0.0967 (0.09662) with eager RMSNorm at its measured cost. Stop 44: 0.0962 (0.09611)
       // with FSDP2's shard copies; 0.0867 (0.08669) with FSDP's root unit. Stop 45: 0.0856
       // (0.08551) with the eager loss's measured cost. Stop 50 (2026-11-28): 0.0854 (0.08534)
       // with the optimizer waiting for ZeRO-3's last reduce-scatter. Stop 52 (2026-11-28):
       // 0.0777 (0.07764) with FSDP2's gathers waiting for the copy out, as above. Stop 54
       // (2026-11-28): 0.0799 (0.07987), up, with the root unit kept gathered, as above.
       {"torchtitan docs/performance.md (@0413364, older A100 version)", 0.0799},
       // 2026-11-22, later: 0.278, up with the measured H100 GEMM grid, as above.
       // Later 0.251 with FlashAttention 1 for llm-foundry's A100 40GB rows, as above.
       // Stop 43: 0.2481 (0.24806) with the H100's measured attention curve; 0.2427 (0.24269)
       // with the A100's. Stop 44: 0.2340 (0.23396) with the H100 measurements; 0.2291 (0.22905)
       // with FSDP's root unit; 0.2285 (0.22844) with the optimizer's measured bandwidth.
       // Stop 46 (2026-11-27): 0.2166 (0.21659) with the amp_bf16 rows' FP32 reduction.
       // Stop 50 (2026-11-28): 0.2164 (0.21632) with the optimizer waiting for ZeRO-3's last
       // reduce-scatter. Stop 54 (2026-11-28): 0.2175 (0.21740), up, with FSDP1's root unit kept
       // gathered from forward to backward, as above; 0.1622 (0.16210) with the H100 and A100
       // 80GB rows' FlashAttention 1 generation kernel, as above. 2026-11-28: 0.1504 (0.15040)
       // with Composer's DecoupledAdamW loop and MPT's biases, as above. 2026-11-28: 0.1496
       // (0.14955) with FSDP1's gradient work around each reduce-scatter, as above.
       {"MosaicML llm-foundry scripts/train/benchmarking/README.md (@061f2c7)", 0.1496}});
  // 2026-11-22, as above (0.29 before the host's slice copies; was 0.442); 0.272 with FP8 TP
  // gathers. 2026-11-23: 0.2615 with async TP's GEMMs split into a piece per rank; 0.256 with FP8's
  // scale found before each cast.
  // Stop 38: 0.2504 with Narayanan's Table 1 runs as the authors' scripts launched them.
  // Stop 41: 0.2521 (0.25208) with collectives across nodes holding their NIC channels' SMs.
  // Stop 42: 0.2518 (0.25179) with Llama 3's all-gathered K and V. Stop 43: 0.2479 (0.24786)
  // with the H100's measured attention curve; 0.2453 (0.24521) with the A100's; 0.2361 (0.23601)
  // with eager RMSNorm at its measured cost. Stop 44: 0.2264 (0.22633) with the H100
  // measurements of data/measurements; 0.2220 (0.22193) with FSDP's root unit; 0.2217 (0.22170)
  // with the optimizer's measured bandwidth. Stop 45: 0.2208 (0.22075) with the eager loss's
  // measured cost. Stop 46 (2026-11-27): 0.2206 (0.22058) with async TP's backward collectives
  // beside the input gradient only; 0.2223 (0.22223), up, with eager RMSNorm at the H100's own
  // measurement; 0.2179 (0.21780) with MosaicML's amp_bf16 rows' FP32 gradient reduction.
  // Stop 50 (2026-11-28): 0.2177 (0.21768) with the optimizer waiting for ZeRO-3's last
  // reduce-scatter. Stop 52 (2026-11-28): 0.2164 (0.21635) with FSDP2's gathers waiting for
  // the copy out. Stop 54 (2026-11-28): 0.2175 (0.21742), up, with the root unit kept gathered;
  // 0.2030 (0.20299) with DeepSpeed 0.3.x's persistent tensors priced (Narayanan Table 2 above);
  // 0.1824 (0.18234) with the H100 and A100 80GB MosaicML rows' FlashAttention 1 generation
  // kernel; 0.1776 (0.17750) with PyTorch's gathered-ring context parallelism (torchtitan above).
  // 2026-11-28: 0.1732 (0.17313) with Composer's DecoupledAdamW loop and MPT's biases.
  // 2026-11-28: 0.1719 (0.17190) with torchtitan's BF16 output layer and after-backward sync;
  // 0.1680 (0.16795) with async TP's unfused block-start reduce-scatter, DeepSpeed 0.3.x's
  // slice copies without the profiler's time and FSDP1's gradient work around each
  // reduce-scatter (MosaicML above); 0.1714 (0.17131), up, with DeepSpeed 0.3.x's gathers
  // prefetched beside the compute.
  // 0.1707 (0.17060) with Megatron's QKV bias added in a kernel of its own.
  EXPECT_LE(r.overall.mape,
            0.1707);  // ZeRO-2 accumulation (0.2438); bias gradients (0.2447); separate
                      // accumulation (0.2523); FSDP2's copies (0.2544); FlashAttention 1 (0.2545),
                      // (0.2645 with the re-gathers, 0.2735 before)
}

TEST(ValidationSuite, VtrainSingleNodeThroughTheSimulatorStaysWithinItsRatchet) {
  const Report r = validate_file("vtrain_single_node_a100.csv", Engine::kSimulation);
  EXPECT_EQ(r.overall.rows, 1440);
  // Softmax fallback (0.108; 0.11), split k, as above (0.105); 2026-11-22, odd GEMMs as above
  // (0.125 with host dispatch; 0.32); 2026-11-22, later, the host reading DeepSpeed's loss (0.108).
  // Later still, up: 0.099 with full-duplex links; 0.107 with DeepSpeed's pipeline engine as it
  // runs (with TP 1 its host no longer waits at each pipeline receive, and runs ahead). Then
  // 0.105 with the host synchronising before each forward (DeepSpeed's throughput timer).
  // 2026-11-26: 0.1042 with DeepSpeed's deferred sends. Stop 32 (2026-11-22): 0.1016 with the
  // tied embedding's copy on the last stage (its gradient in the reduction, its own optimizer
  // state) and the two end stages' all-reduce of its gradient. Stop 34: 0.0958 with the optimizer's
  // passes around Adam. Stop 35: 0.0936 with the weight gradients' separate accumulation.
  // Stop 43 (2026-11-27): 0.0936 (0.09353), up: DeepSpeed's pipeline engine never runs its
  // throughput timer's synchronize (it never counts the steps that arm it), so the host no
  // longer synchronises before every forward; the first and last stages wait at each data load,
  // for the input just received too. Then 0.0936 (0.0932) with each linear bias's gradient summed
  // in a kernel of its own; 0.0731 (0.07303) with the host waiting for the stream before each
  // layer's MLP (Megatron-DeepSpeed's torch.tensor scalars), which keeps it from launching ahead
  // of the output head's backward and, on middle stages, into the pipeline's bubble.
  // 2026-11-28: 0.0711 (0.07109) with the QKV bias added in a kernel of its own.
  EXPECT_LE(r.overall.mape, 0.0711);
}

// Training steps measured by tools/measure_step.py on one H100: every setting known.
TEST(ValidationSuite, MeasuredH100StepsStayWithinTheirRatchet) {
  // Stop 44 (2026-11-27): 0.1438 (0.14378) when first added, every row predicted too fast
  // (5-24%); 0.1303 (0.13027) with cuDNN's attention as the runs had it, FSDP2's copies on one
  // rank and the loss eager under per-block compile; 0.1092 (0.10916) with the GPT-2 head's GEMMs
  // at the rate measured for odd widths on the H100; 0.0711 (0.07101) with FSDP's root unit;
  // 0.0553 (0.05526) with the optimizer's kernels at the bandwidth their traces show. Then 13
  // rows, the four measured after those figures were taken (-3.9, +1.3, -8.1, -3.6%): 0.0513
  // (0.05125). Then 0.0347 (0.03464) with FSDP2's gradient copies on a group of one in turn
  // with the kernels, as the traces have them (the four later rows -1.8, +3.7, -5.4, -1.4%);
  // 0.0344 (0.03439) with heads of 64 at their measured rate (Llama 3.2 1B). Stop 45: 0.0296
  // (0.02954) with the eager loss's kernels at their cost in these traces (the four later rows
  // +0.7, +5.5, -3.2, +1.6%). Stop 46 (2026-11-27): 0.0229 (0.02280) with eager RMSNorm at the
  // H100's own measurement in these traces (the four later rows +0.4, +0.3, -3.4, -1.0%; the
  // 3B eager row, whose trace was not kept, +5.5% -> +0.3%).
  expect_shipped_within("measured_h100_steps.csv", Engine::kAnalytic, 13, kMeasuredH100, 0.0229);
}

TEST(ValidationSuite, MeasuredH100StepsThroughTheSimulatorStayWithinTheirRatchet) {
  // Stop 44 (2026-11-27): 0.1428 (0.14275) when first added; 0.1301 (0.13004), as above; 0.1090
  // (0.10893) with the odd-width GEMMs' measured rate; 0.0711 (0.07105) with FSDP's root unit;
  // 0.0553 (0.05530) with the optimizer's measured bandwidth; 13 rows: 0.0513 (0.05127); 0.0347
  // (0.03465) with FSDP2's gradient copies on a group of one in turn with the kernels; 0.0345
  // (0.03441) with heads of 64 at their measured rate. Stop 45: 0.0296 (0.02955) with the eager
  // loss's measured cost. Stop 46 (2026-11-27): 0.0229 (0.02283) with eager RMSNorm at the H100's
  // own measurement.
  expect_shipped_within("measured_h100_steps.csv", Engine::kSimulation, 13, kMeasuredH100, 0.0229);
}

// The same cases measured on one H200 (and Llama 3.2 3B whole, which needs its 141 GB), predicted
// before any figure was taken from them: the H200 preset had only datasheet figures and the
// H100's measured ones.
TEST(ValidationSuite, MeasuredH200StepsStayWithinTheirRatchet) {
  // Stop 51 (2026-11-28): 0.0232 (0.02317) when first added, held out; worst -5.3% (the 3B
  // 14-layer compiled row), every row but two predicted too fast. Then up, to 0.0447 (0.04460):
  // the H200's streaming bandwidth, eager RMSNorm and optimizer kernels measured on the H200
  // itself, as the H100's are (data/gpus/h200.yaml), in place of a third party's STREAM triad
  // (0.736 of peak; our copy reaches 0.844). The steps' priced GPU work is now within 2.1% of the
  // GPU time in their traces (-5.2% to +0.6%); the rest is how much longer the timed steps take
  // than that GPU time, 0.4-4.1% (docs/accuracy.md, "Steps measured on one H200": the host
  // falling behind or lower clocks under sustained load), which the model does not price.
  expect_shipped_within("measured_h200_steps.csv", Engine::kAnalytic, 14, kMeasuredH200, 0.0447);
}

TEST(ValidationSuite, MeasuredH200StepsThroughTheSimulatorStayWithinTheirRatchet) {
  // Stop 51 (2026-11-28): 0.0233 (0.02320) when first added, held out; then 0.0447 (0.04467)
  // with the H200's own measured bandwidths, as above.
  expect_shipped_within("measured_h200_steps.csv", Engine::kSimulation, 14, kMeasuredH200, 0.0447);
}

TEST(ValidationSuite, MegatronBridgeH100ThroughTheSimulatorStaysWithinItsRatchet) {
  // 2026-11-22: 0.209 when first added; 2026-11-23: 0.133 with userbuffers' split GEMMs;
  // 2026-11-24: 0.132 with each FP8 cast's two kernels priced as two. 2026-11-25: 0.137, up with
  // Megatron-Core's aligned gradient sync: every stage starts a chunk's reduction at once, so
  // the SMs the reductions hold no longer slow the stages of the drain one after another.
  // Stop 41: 0.1451 (0.14501), up with those reductions across nodes holding 4 SMs, not 24.
  // Stop 43: 0.1406 (0.14051) with the H100's attention curve fitted to FlashAttention-2's
  // measured H100 rates. Stop 44: 0.1224 (0.12240) with the H100 measurements of
  // data/measurements (the causal attention backward, the streaming bandwidth); 0.1222 (0.12220)
  // with the optimizer kernels' measured bandwidth. Stop 46 (2026-11-27): 0.1187 (0.11866) with
  // Transformer Engine's bulk overlaps in the column-parallel backward, on the recipes' SMs.
  // 2026-11-28: 0.0954 (0.09531) with Megatron-Core's output layer in BF16 under FP8.
  expect_shipped_within("megatron_bridge_h100.csv", Engine::kSimulation, 6,
                        "Megatron-Bridge performance summary (DGX-H100)", 0.0954);
}

TEST(ValidationSuite, FlashAttentionGpt3ThroughTheSimulatorStaysWithinItsRatchet) {
  // 2026-11-22: 0.150 when first added; 0.133 with FlashAttention's kernel head widths. Stop 34:
  // 0.1303 with the optimizer's passes around Adam. Stop 35: 0.1220 with the weight gradients'
  // separate accumulation. Stop 43: 0.0976 (0.09754) with the A100's measured attention curve.
  // Stop 46: 0.0850 (0.08492) with autocast's casts of the FP32 weights and their gradients.
  expect_shipped_within("flash_attention_gpt3_a100.csv", Engine::kSimulation, 5,
                        "flash-attention training/README.md (Nov 2022 GPT3 on The Pile)", 0.0850);
}

TEST(ValidationSuite, Korthikanti2022ThroughTheSimulatorStaysWithinItsRatchet) {
  // Stop 33 (2026-11-22): 0.0836 when first added. Stop 34: 0.0752 with the optimizer's passes
  // around Adam.
  expect_shipped_within("korthikanti_2022_a100.csv", Engine::kSimulation, 8,
                        "Korthikanti2022_MLSys_Table5",
                        0.0909);  // 2026-11-28: 0.0909 with the QKV bias added in a kernel of
                                  // its own; 0.0709 with each linear bias's gradient summed in a kernel of
                                  // its own; stop 38: 0.0925 with --tp-async-backward, as above
}

TEST(ValidationSuite, Bloom176bThroughTheSimulatorStaysWithinItsRatchet) {
  // 2026-11-22: 0.204 when first added (20.3%); stop 32: 0.197 with the tied embedding's sync.
  // Stop 35: 0.1694 with the weight gradients' separate accumulation.
  expect_shipped_within("bloom_176b_a100.csv", Engine::kSimulation, 1,
                        "BigScience BLOOM-176B training (tr11-176B-ml)",
                        0.168);  // 0.1674 with bias gradients
}

TEST(ValidationSuite, VtrainMultiNodeThroughTheSimulatorStaysWithinItsRatchet) {
  const Report r = validate_vtrain_multi_node(Engine::kSimulation);
  EXPECT_EQ(r.overall.rows, 109);
  // 2026-11-22: 0.128 when first added. 2026-11-26: 0.1227 with DeepSpeed's deferred sends, each
  // output sent at the stage's next step over one NCCL stream per neighbour. Stop 32: 0.1220 with
  // the tied embedding's sync. Stop 34: 0.1203 with the optimizer's passes around Adam. Stop 35:
  // 0.1129 with the weight gradients' separate accumulation.
  // 0.109 (0.1085) with bias gradients; 0.1068 (0.10671) with the host waiting for the stream
  // before each layer's MLP (Megatron-DeepSpeed's torch.tensor scalars).
  expect_ratchet(r, {{"vTrain ground_truth_multi (Megatron-DeepSpeed, A100 nodes)", 0.1039}});
}

}  // namespace
}  // namespace stepcast::validate
