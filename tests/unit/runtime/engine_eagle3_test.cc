// EAGLE-3 drafting on the tiny M2 / M3 checkpoints with a random head (checkpoint/eagle3_random.h):
// the engine's 8 concurrent streams and the generation loop give the plain run's tokens and
// logprob bits, greedy and seeded; the head catching up step by step proposes what a head fed
// the whole sequence at once proposes; heads that do not fit the layout or the target are refused
// by name.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "../scratch_dir.h"
#include "base/error.h"
#include "checkpoint/eagle3_random.h"
#include "engine_fixture.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"
#include "runtime/generator.h"
#include "runtime/model_session.h"
#include "runtime/spec/draft_head.h"
#include "runtime/spec/eagle3_drafter.h"
#include "runtime/spec/model_step_cost.h"
#include "runtime/spec/tap_store.h"

// A named namespace: the unity build compiles this file with engine_spec_test.cc.
namespace minimax::eagle3_test {
namespace {
using namespace engine_test;

SpeculativeConfig eagle3(const std::string& dir, int k = 4) {
  SpeculativeConfig c;
  c.method = DraftMethod::kEagle3;
  c.model = dir;
  c.num_speculative_tokens = k;
  c.adaptive = false;  // verify every draft
  return c;
}

// A random head for the tiny model of `arch`, in a scratch directory.
struct RandomHead {
  explicit RandomHead(const Model& model, Eagle3HeadShape shape = {.draft_vocab_size = 160}) {
    write_random_eagle3_head(path, model.config(), shape, 5, /*force=*/false);
  }
  ScratchDir scratch{"minimax_eagle3"};
  std::string path = scratch.file("head");
};

// The head in `files`, loaded with batch-invariant kernels (a row's numbers must not depend on
// the rows beside it, so tests may compare call shapes), its tap layers set on the target.
std::shared_ptr<Eagle3Head> invariant_head(TinyModel& t, const RandomHead& files) {
  std::shared_ptr<Eagle3Head> head =
      Eagle3Head::load(files.path, *t.model, /*batch_invariant=*/true);
  t.model->set_hidden_taps(head->config().tap_layers);
  return head;
}

EngineOptions options_with(std::optional<SpeculativeConfig> spec) {
  EngineOptions options;
  options.max_model_len = 256;
  options.max_num_seqs = 8;
  options.max_batched_tokens = 48;  // prompts are chunked: taps arrive over several steps
  options.kv_block_size = 16;
  options.kv_cache_blocks = 128;
  options.model_name = "tiny";
  options.speculative = std::move(spec);
  return options;
}

std::vector<EngineRequest> requests(bool sampled) {
  std::vector<EngineRequest> out;
  for (int i = 0; i < 8; ++i) {
    EngineRequest request = greedy_request(prompt_ids(20 + 9 * i, i), 20 + 4 * i);
    request.logprobs = true;
    if (sampled && i % 2 == 1) {
      request.sampling.temperature = 0.8f;
      request.sampling.seed = 77 + i;
    }
    out.push_back(std::move(request));
  }
  return out;
}

std::vector<Collected> run_all(Engine& engine, const std::vector<EngineRequest>& requests) {
  engine.pause();
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const EngineRequest& request : requests) streams.push_back(engine.submit(request));
  engine.resume();
  std::vector<Collected> out;
  for (auto& stream : streams) out.push_back(collect(*stream));
  return out;
}

class Eagle3Test : public ::testing::TestWithParam<Arch> {};

TEST_P(Eagle3Test, EngineOutputsEqualThePlainEngine) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  RandomHead head(*t.model);
  for (bool sampled : {false, true}) {
    const std::vector<EngineRequest> reqs = requests(sampled);
    Engine plain_engine(*t.model, *t.tokenizer, options_with(std::nullopt));
    const std::vector<Collected> plain = run_all(plain_engine, reqs);
    Engine engine(*t.model, *t.tokenizer, options_with(eagle3(head.path)));
    // Twice: the second round starts from cached prefixes (the head's rows start later).
    for (int round = 0; round < 2; ++round) {
      const std::vector<Collected> got = run_all(engine, reqs);
      for (size_t i = 0; i < reqs.size(); ++i) {
        EXPECT_EQ(got[i].tokens, plain[i].tokens) << "request " << i << " round " << round;
        ASSERT_EQ(got[i].logprobs.size(), plain[i].logprobs.size());
        for (size_t k = 0; k < plain[i].logprobs.size(); ++k) {
          const float a = plain[i].logprobs[k].chosen.logprob,
                      b = got[i].logprobs[k].chosen.logprob;
          EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << "request " << i << " token " << k;
        }
      }
    }
    const ServeMetrics::Snapshot m = engine.metrics().snapshot();
    EXPECT_GT(m.spec.num_drafts, 0);
    // Chains of K = 4, shorter only where max_tokens leaves less room.
    EXPECT_LE(m.spec.num_draft_tokens, 4 * m.spec.num_drafts);
    EXPECT_GT(m.spec.num_draft_tokens, 3 * m.spec.num_drafts);
  }
}

TEST_P(Eagle3Test, GenerationLoopOutputsEqualThePlainLoop) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  RandomHead head(*t.model);
  const std::vector<int32_t> prompt = prompt_ids(40, 9);
  SamplingParams greedy;
  greedy.temperature = 0;
  StopConditions stop;
  stop.max_tokens = 40;
  ModelSession plain_session(*t.model, 128);
  Generator plain(plain_session, *t.tokenizer);
  const GenerationResult want = plain.generate(prompt, greedy, stop);
  ModelSession session(*t.model, 128);
  Generator generator(session, *t.tokenizer);
  const SpeculativeConfig config = eagle3(head.path, 3);
  generator.enable_speculation(config, step_cost_model_for(*t.model),
                               load_draft_head(*t.model, config));
  const GenerationResult got = generator.generate(prompt, greedy, stop);
  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_GT(got.stats.spec_drafts, 0);
  EXPECT_LE(got.stats.spec_draft_tokens, 3 * got.stats.spec_drafts);
  EXPECT_GT(got.stats.spec_draft_tokens, 2 * got.stats.spec_drafts);
}

// Keeps the rows of a tap sink call by position: all[p · width ...] holds position p's taps.
void keep_by_position(std::vector<float>& all, size_t width, int64_t first, int64_t count,
                      std::span<const float> taps) {
  all.resize(static_cast<size_t>(first + count) * width);
  std::copy(taps.begin(), taps.end(), all.begin() + first * static_cast<int64_t>(width));
}

TEST_P(Eagle3Test, CatchingUpStepByStepProposesWhatAFreshHeadProposes) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  RandomHead files(*t.model);
  const std::shared_ptr<Eagle3Head> head = invariant_head(t, files);
  const auto width = static_cast<size_t>(head->tap_width());
  Eagle3Drafter incremental(*head);
  std::vector<float> all_taps;  // by position
  ModelSession session(*t.model, 256);
  session.set_tap_sink([&](int64_t first, int64_t count, std::span<const float> taps) {
    incremental.add_taps(first, count, taps);
    keep_by_position(all_taps, width, first, count, taps);
  });
  // The target has run every token but the sequence's last, as after a verify step.
  std::vector<int32_t> sequence = prompt_ids(30, 4);
  session.prefill(std::span<const int32_t>(sequence).first(sequence.size() - 1));
  int proposals = 0;
  for (int step = 0; step < 12; ++step) {
    const auto n = static_cast<int64_t>(sequence.size());
    const std::vector<int32_t> got = incremental.propose(sequence, 4);
    Eagle3Drafter fresh(*head);  // given only the current taps of positions [0, n - 1)
    fresh.add_taps(0, n - 1, std::span<const float>(all_taps).first((n - 1) * width));
    const std::vector<int32_t> want = fresh.propose(sequence, 4);
    EXPECT_EQ(got, want) << "step " << step;
    proposals += got.size() == 4;
    // A verify accepts 0 to 2 tokens: the sequence gains 1 to 3, and the target has run all but
    // the new last one (the old last token among them) plus two draft tokens that were then
    // rejected and rolled back; their taps are stale and must never be read.
    const std::vector<int32_t> more = prompt_ids(1 + step % 3, 50 + step);
    sequence.insert(sequence.end(), more.begin(), more.end());
    const auto held = static_cast<int64_t>(session.tokens().size());
    std::vector<int32_t> verify(sequence.begin() + held, sequence.end() - 1);
    verify.push_back(7 + step);
    verify.push_back(9 + step);
    session.decode_all(verify);
    session.truncate(static_cast<int64_t>(sequence.size()) - 1);
  }
  EXPECT_EQ(proposals, 12);
  for (int32_t id : incremental.propose(sequence, 4)) EXPECT_LT(id, t.model->config().vocab_size);
}

TEST_P(Eagle3Test, DraftingTogetherProposesWhatEachSequenceProposesAlone) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  RandomHead files(*t.model);
  // Batch-invariant head kernels: the drafts of a pass over several sequences must equal each
  // sequence's own.
  const std::shared_ptr<Eagle3Head> head = invariant_head(t, files);
  // Lengths around the head's catch-up piece of 512 rows; the last sequence has no taps yet.
  const std::vector<int> lengths = {30, 9, 600, 17, 12};
  const std::vector<int> max_tokens = {4, 2, 4, 1, 4};
  const size_t S = lengths.size();
  std::vector<std::vector<int32_t>> sequences;
  std::vector<std::unique_ptr<ModelSession>> sessions;
  std::vector<std::unique_ptr<Eagle3Drafter>> alone, together;
  for (size_t s = 0; s < S; ++s) {
    sequences.push_back(prompt_ids(lengths[s], 10 + static_cast<int>(s)));
    sessions.push_back(std::make_unique<ModelSession>(*t.model, 1024));
    alone.push_back(std::make_unique<Eagle3Drafter>(*head));
    together.push_back(std::make_unique<Eagle3Drafter>(*head));
    if (s + 1 == S) continue;
    sessions[s]->set_tap_sink([&, s](int64_t first, int64_t count, std::span<const float> taps) {
      alone[s]->add_taps(first, count, taps);
      together[s]->add_taps(first, count, taps);
    });
    sessions[s]->prefill(std::span<const int32_t>(sequences[s]).first(sequences[s].size() - 1));
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<Eagle3Drafter*> batch;
    std::vector<std::span<const int32_t>> tokens;
    for (size_t s = 0; s < S; ++s) {
      batch.push_back(together[s].get());
      tokens.push_back(sequences[s]);
    }
    const std::vector<std::vector<int32_t>> got =
        Eagle3Drafter::propose_batch(batch, tokens, max_tokens);
    ASSERT_EQ(got.size(), S);
    for (size_t s = 0; s < S; ++s) {
      EXPECT_EQ(got[s], alone[s]->propose(sequences[s], max_tokens[s]))
          << "sequence " << s << " round " << round;
      EXPECT_EQ(got[s].size(), s + 1 == S ? 0u : static_cast<size_t>(max_tokens[s]));
    }
    // Each sequence gains 1 to 3 tokens, which the target then runs (all but the new last).
    for (size_t s = 0; s + 1 < S; ++s) {
      const std::vector<int32_t> more =
          prompt_ids(1 + (round + static_cast<int>(s)) % 3, 60 + round);
      sequences[s].insert(sequences[s].end(), more.begin(), more.end());
      const auto held = static_cast<int64_t>(sessions[s]->tokens().size());
      sessions[s]->decode_all(
          std::span<const int32_t>(sequences[s]).subspan(held, sequences[s].size() - 1 - held));
    }
  }
}

TEST_P(Eagle3Test, APrefixCacheHitDraftsWithTheStoredTapsOfThePrefix) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  RandomHead files(*t.model);
  const std::shared_ptr<Eagle3Head> head = invariant_head(t, files);
  const auto width = static_cast<size_t>(head->tap_width());
  // The target has run all 41 tokens but the last; a second request over the same prompt finds
  // the first 32 in the prefix cache, so its taps start at position 32.
  const std::vector<int32_t> sequence = prompt_ids(41, 6);
  std::vector<float> taps;
  {
    ModelSession session(*t.model, 64);
    session.set_tap_sink([&](int64_t first, int64_t count, std::span<const float> rows) {
      keep_by_position(taps, width, first, count, rows);
    });
    session.prefill(std::span<const int32_t>(sequence).first(sequence.size() - 1));
  }
  const auto n = static_cast<int64_t>(sequence.size());
  auto store = std::make_shared<TapStore>(head->tap_width(), 16, int64_t{1} << 20);
  Eagle3Drafter first(*head, store);
  first.add_taps(0, n - 1, taps);
  const std::vector<int32_t> want = first.propose(sequence, 4);
  ASSERT_EQ(want.size(), 4u);
  EXPECT_EQ(store->blocks(), 2);  // positions 0-31: the whole blocks before the last token

  const std::span<const float> after_hit = std::span<const float>(taps).subspan(32 * width);
  Eagle3Drafter second(*head, store);
  second.add_taps(32, n - 1 - 32, after_hit);
  EXPECT_EQ(second.propose(sequence, 4), want);
  // Without the store the head starts at position 32 and drafts from less context; if it drafted
  // the same, the check above could not tell a store that works from one that does nothing.
  Eagle3Drafter alone(*head);
  alone.add_taps(32, n - 1 - 32, after_hit);
  EXPECT_NE(alone.propose(sequence, 4), want) << "the head does not read the prefix's context";
  // Blocks come back as far as the store holds them without a gap: with block 0 missing, the
  // head starts at position 16, as if the target had run from there.
  auto partial = std::make_shared<TapStore>(head->tap_width(), 16, int64_t{1} << 20);
  partial->put(TapStore::chain(TapStore::chain(0, std::span(sequence).first(16)),
                               std::span(sequence).subspan(16, 16)),
               std::span<const float>(taps).subspan(16 * width, 16 * width));
  Eagle3Drafter gap(*head, partial);
  gap.add_taps(32, n - 1 - 32, after_hit);
  Eagle3Drafter from16(*head);
  from16.add_taps(16, n - 1 - 16, std::span<const float>(taps).subspan(16 * width));
  EXPECT_EQ(gap.propose(sequence, 4), from16.propose(sequence, 4));
}

INSTANTIATE_TEST_SUITE_P(Arch, Eagle3Test, ::testing::Values(Arch::kM2, Arch::kM3),
                         [](const ::testing::TestParamInfo<Arch>& info) {
                           return std::string(arch_name(info.param));
                         });

// Rewrites the head in `dir` into `out` with `edit` applied to the list of tensors.
void rewrite_head(const std::string& dir, const std::string& out,
                  const std::function<void(std::vector<TensorDecl>&,
                                           std::map<std::string, std::vector<uint8_t>>&)>& edit) {
  const TensorStore store(dir);
  std::vector<TensorDecl> decls;
  std::map<std::string, std::vector<uint8_t>> bytes;
  for (const std::string& name : store.names()) {
    const TensorRef ref = store.at(name);
    decls.push_back({name, ref.info->dtype, ref.info->shape});
    bytes[name].assign(ref.data().begin(), ref.data().end());
  }
  edit(decls, bytes);
  std::filesystem::create_directories(out);
  std::filesystem::copy_file(dir + "/config.json", out + "/config.json");
  SafetensorsWriter writer(out + "/model.safetensors", decls);
  for (const TensorDecl& d : writer.order()) writer.write_tensor(d.name, bytes.at(d.name));
  writer.finish();
}

std::string load_error(const Model& model, const std::string& dir) {
  try {
    Eagle3Head::load(dir, model);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Eagle3HeadTest, RefusesTensorsOutsideTheLayoutByName) {
  TinyModel& t = tiny(Arch::kM2, /*invariant=*/true);
  RandomHead head(*t.model);
  EXPECT_EQ(load_error(*t.model, head.path), "");
  const std::string extra = head.scratch.file("extra");
  rewrite_head(head.path, extra, [](auto& decls, auto& bytes) {
    decls.push_back({"midlayer.self_attn.q_norm.weight", DType::kBF16, {4}});
    bytes["midlayer.self_attn.q_norm.weight"].assign(8, 0);
  });
  EXPECT_NE(
      load_error(*t.model, extra).find("tensor 'midlayer.self_attn.q_norm.weight' is not part"),
      std::string::npos)
      << load_error(*t.model, extra);
  const std::string missing = head.scratch.file("missing");
  rewrite_head(head.path, missing, [](auto& decls, auto& bytes) {
    std::erase_if(decls, [](const TensorDecl& d) { return d.name == "d2t"; });
    bytes.erase("d2t");
  });
  EXPECT_NE(load_error(*t.model, missing).find("has no 'd2t'"), std::string::npos)
      << load_error(*t.model, missing);
  const std::string shape = head.scratch.file("shape");
  rewrite_head(head.path, shape, [](auto& decls, auto&) {
    for (TensorDecl& d : decls)
      if (d.name == "midlayer.mlp.up_proj.weight") std::swap(d.shape[0], d.shape[1]);
  });
  EXPECT_NE(load_error(*t.model, shape).find("'midlayer.mlp.up_proj.weight' has shape"),
            std::string::npos)
      << load_error(*t.model, shape);
  // A head for a wider target.
  TinyModel& m3 = tiny(Arch::kM3, /*invariant=*/true);
  if (m3.model->config().hidden_size != t.model->config().hidden_size) {
    EXPECT_NE(load_error(*m3.model, head.path).find("hidden states"), std::string::npos)
        << load_error(*m3.model, head.path);
  }
}

}  // namespace
}  // namespace minimax::eagle3_test
