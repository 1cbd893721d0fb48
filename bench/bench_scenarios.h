// Scenarios the benchmarks share.
#pragma once

#include "spec/presets.h"
#include "spec/scenario.h"

namespace stepcast {

// Llama 3.1 405B on 16,384 H100 with the Llama 3 paper's strategy (Table 4 row 2): TP 8, PP 16
// interleaved with 2 virtual stages, DP 128 with ZeRO-2, asynchronous pipeline sends, 16M-token
// batch of 8K sequences.
inline spec::Scenario llama3_405b() {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-405b");
  s.cluster = spec::cluster_preset("llama3-h100-roce");
  s.gpus = 16384;
  s.strategy.tp = 8;
  s.strategy.sequence_parallel = true;  // as `make run`: the 8K run fits only with it
  s.strategy.pp = 16;
  s.strategy.vp = 2;
  s.strategy.zero_stage = 2;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 2048;
  s.strategy.seq_len = 8192;
  s.strategy.pipeline_transfers = spec::PipelineTransfers::kAsynchronous;
  return spec::complete_and_validate(s);
}

// Narayanan et al.'s GPT 529.6B (SC'21 Table 1): TP 8, PP 35, 280 micro-batches of one 2K
// sequence, full recomputation, on one data-parallel replica: a graph of 2.2 million tasks,
// the size that `validate --engine sim` spends most of its time on.
inline spec::Scenario megatron_530b() {
  spec::Scenario s;
  s.model = spec::model_preset("megatron-gpt-529.6b");
  s.cluster = spec::cluster_preset("dgx-a100-80g");
  s.gpus = 280;
  s.strategy.tp = 8;
  s.strategy.pp = 35;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 280;
  s.strategy.seq_len = 2048;
  s.strategy.recompute = spec::Recompute::kFull;
  return spec::complete_and_validate(s);
}

// Llama 4 Maverick (dense and MoE layers alternating) under FSDP on 128 H100: TP 8, EP 8, PP 2,
// ZeRO-3, where the estimate prices each kind of layer beside its neighbours' collectives.
inline spec::Scenario maverick_fsdp() {
  spec::Scenario s;
  s.model = spec::model_preset("llama4-maverick");
  s.cluster = spec::cluster_preset("dgx-h100");
  s.gpus = 128;
  s.strategy.tp = 8;
  s.strategy.ep = 8;
  s.strategy.pp = 2;
  s.strategy.zero_stage = 3;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 64;
  s.strategy.seq_len = 4096;
  return spec::complete_and_validate(s);
}

}  // namespace stepcast
