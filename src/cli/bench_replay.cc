// Replays of recorded text with and without speculative decoding (cli/bench_replay.h).
#include "cli/bench_replay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>

#include "base/clock.h"
#include "base/error.h"
#include "runtime/model_session.h"
#include "runtime/spec/draft_head.h"
#include "runtime/spec/model_step_cost.h"
#include "runtime/spec/speculative_stepper.h"

namespace minimax::cli {
namespace {

struct Tokens {
  std::vector<int32_t> prompt, output;
};

struct DecodeRun {
  double seconds = 0;
  SpecDecodeCounts counts;
};

// Forced decode of `t.output` after `t.prompt`: n - 1 forward passes without speculation, fewer
// with it (the first output token comes from the prefill, which is not timed).
DecodeRun decode_forced(ModelSession& session, const Tokens& t, const SpeculativeConfig* spec,
                        StepCostModel& cost, const std::shared_ptr<Eagle3Head>& head) {
  session.reset();
  // An EAGLE-3 stepper takes the prompt's taps: it exists before the prefill.
  std::optional<SpeculativeStepper> stepper;
  if (spec != nullptr) stepper.emplace(session, *spec, cost, nullptr, head);
  session.prefill(t.prompt);
  std::vector<int32_t> sequence = t.prompt;
  sequence.push_back(t.output[0]);
  DecodeRun run;
  const auto start = std::chrono::steady_clock::now();
  if (spec == nullptr) {
    for (size_t i = 0; i + 1 < t.output.size(); ++i) session.decode(t.output[i]);
  } else {
    stepper->start(t.prompt);
    for (size_t i = 1; i < t.output.size(); ++i) {
      stepper->next_logits(sequence);
      sequence.push_back(t.output[i]);
    }
    stepper->finish(t.output);
    run.counts = stepper->counts();
  }
  run.seconds = seconds_since(start);
  if (spec == nullptr) run.counts.forward_steps = static_cast<int64_t>(t.output.size()) - 1;
  return run;
}

double mean_accepted_length(const SpecDecodeCounts& c) {
  return c.num_drafts > 0 ? 1.0 + static_cast<double>(c.num_accepted_tokens) / c.num_drafts : 1.0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<ReplayCase> read_replay_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("--replay: cannot read '{}'", path);
  std::vector<ReplayCase> cases;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      fail("--replay: '{}' line {}: not valid JSON: {}", path, number, e.what());
    }
    ReplayCase c;
    for (auto [key, field] : {std::pair{"prompt", &c.prompt}, std::pair{"output", &c.output}}) {
      auto it = j.find(key);
      if (!j.is_object() || it == j.end() || !it->is_string() || it->get<std::string>().empty())
        fail("--replay: '{}' line {}: '{}' must be a non-empty string", path, number, key);
      *field = it->get<std::string>();
    }
    cases.push_back(std::move(c));
  }
  if (cases.empty()) fail("--replay: '{}' holds no lines", path);
  return cases;
}

nlohmann::ordered_json run_replay(TextModel& model, const std::vector<ReplayCase>& cases,
                                  const ReplayOptions& options) {
  std::vector<Tokens> tokens;
  int64_t longest = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    Tokens t{model.encode(cases[i].prompt), model.encode(cases[i].output)};
    if (t.prompt.empty() || t.output.size() < 2)
      fail("--replay: case {} needs a prompt and at least two output tokens", i + 1);
    longest = std::max<int64_t>(longest, static_cast<int64_t>(t.prompt.size() + t.output.size()));
    tokens.push_back(std::move(t));
  }
  ModelSession session(model.model(), longest + options.spec.num_speculative_tokens + 1,
                       kDefaultPrefillChunk, options.kv_dtype);
  StepCostModel cost = step_cost_model_for(model.model());
  const std::shared_ptr<Eagle3Head> head = load_draft_head(model.model(), options.spec);
  nlohmann::ordered_json per_case = nlohmann::ordered_json::array();
  std::vector<double> speedups;
  double plain_total = 0, spec_total = 0;
  int64_t decoded_total = 0;
  SpecDecodeCounts all;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Tokens& t = tokens[i];
    DecodeRun plain{1e30, {}}, spec{1e30, {}};
    for (int r = 0; r < options.repeat; ++r) {  // alternating, best of each
      const DecodeRun p = decode_forced(session, t, nullptr, cost, head);
      if (p.seconds < plain.seconds) plain = p;
      const DecodeRun s = decode_forced(session, t, &options.spec, cost, head);
      if (s.seconds < spec.seconds) spec = s;
    }
    const auto decoded = static_cast<int64_t>(t.output.size()) - 1;
    const double speedup = plain.seconds / spec.seconds;
    speedups.push_back(speedup);
    plain_total += plain.seconds;
    spec_total += spec.seconds;
    decoded_total += decoded;
    all.add(spec.counts);
    per_case.push_back({{"case", i + 1},
                        {"prompt_tokens", t.prompt.size()},
                        {"output_tokens", t.output.size()},
                        {"plain_decode_tok_s", decoded / plain.seconds},
                        {"spec_decode_tok_s", decoded / spec.seconds},
                        {"speedup", speedup},
                        {"mean_accepted_length", mean_accepted_length(spec.counts)},
                        {"forward_passes", spec.counts.forward_steps},
                        {"num_drafts", spec.counts.num_drafts},
                        {"num_draft_tokens", spec.counts.num_draft_tokens},
                        {"num_accepted_tokens", spec.counts.num_accepted_tokens}});
    if (!options.quiet)
      std::fprintf(stderr, "replay: case %zu of %zu: %.2fx\n", i + 1, tokens.size(), speedup);
  }
  nlohmann::ordered_json out;
  out["speculative_config"] = nlohmann::json::parse(speculative_config_json(options.spec));
  out["num_speculative_tokens"] = options.spec.num_speculative_tokens;
  out["cases"] = tokens.size();
  out["decoded_tokens"] = decoded_total;
  out["plain_decode_tok_s"] = decoded_total / plain_total;
  out["spec_decode_tok_s"] = decoded_total / spec_total;
  out["speedup"] = median(speedups);
  out["speedup_total"] = plain_total / spec_total;
  out["mean_accepted_length"] = mean_accepted_length(all);
  out["tokens_per_forward_pass"] =
      all.forward_steps > 0 ? static_cast<double>(decoded_total) / all.forward_steps : 0.0;
  out["num_drafts"] = all.num_drafts;
  out["num_draft_tokens"] = all.num_draft_tokens;
  out["num_accepted_tokens"] = all.num_accepted_tokens;
  // Plain decode runs one token per call, the kernels' decode path whether or not they are
  // batch-invariant (the invariant kernels differ only for calls of several tokens).
  out["plain_kernels"] = "the same model and kernels, one token per forward pass";
  out["per_case"] = per_case;
  return out;
}

void print_replay(const nlohmann::ordered_json& r) {
  std::printf("%-6s %8s %8s %12s %12s %8s %10s\n", "case", "prompt", "output", "plain tok/s",
              "spec tok/s", "speedup", "accepted");
  for (const auto& c : r["per_case"])
    std::printf("%-6d %8d %8d %12.2f %12.2f %7.2fx %10.2f\n", c["case"].get<int>(),
                c["prompt_tokens"].get<int>(), c["output_tokens"].get<int>(),
                c["plain_decode_tok_s"].get<double>(), c["spec_decode_tok_s"].get<double>(),
                c["speedup"].get<double>(), c["mean_accepted_length"].get<double>());
  std::printf(
      "\nmedian speedup %.2fx (all tokens: %.2fx), plain %.2f tok/s, speculative %.2f tok/s, mean "
      "accepted length %.2f, %.2f tokens per forward pass, k = %d\n",
      r["speedup"].get<double>(), r["speedup_total"].get<double>(),
      r["plain_decode_tok_s"].get<double>(), r["spec_decode_tok_s"].get<double>(),
      r["mean_accepted_length"].get<double>(), r["tokens_per_forward_pass"].get<double>(),
      r["num_speculative_tokens"].get<int>());
}

}  // namespace minimax::cli
