// `minimax gates --url URL [--compare-url URL2] [--api-key K] [--model NAME] [--seed N] [--json]`:
// runs the serving gates (gates/gates.h) against running OpenAI-compatible servers and prints one
// table. Exit status: 0 all gates pass, 1 a gate failed, 2 usage or connection errors (the
// message names the URL).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/gate_markers.h"
#include "gates/gates.h"

namespace minimax::cli {
namespace {

struct GatesArgs {
  std::string url;
  std::string compare_url;
  std::string api_key;
  std::string model;
  std::string seed = "1";
  std::string timeout = "600";
  std::string require;  // comma-separated gate names; "" = all
  bool json = false;
};

[[noreturn]] void exit_with(int status, const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stdout);
  std::exit(status);
}

double parse_timeout(const std::string& text) {
  double seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !(seconds > 0))
    exit_with(2, "--timeout: expected a positive number of seconds, got \"" + text + "\"");
  return seconds;
}

uint64_t parse_seed(const std::string& text) {
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    exit_with(2, "--seed: expected a non-negative integer, got \"" + text + "\"");
  return seed;
}

gates::OpenAiClient connect(const std::string& url, const char* flag, const GatesArgs& args) {
  gates::HttpUrl parsed;
  try {
    parsed = gates::parse_http_url(url, flag);
  } catch (const Error& e) {
    exit_with(2, e.what());
  }
  gates::OpenAiClient client(parsed, args.api_key, args.model, parse_timeout(args.timeout));
  try {
    client.resolve_model();
  } catch (const Error& e) {  // refused, timed out, 401 or no model: nothing can run
    exit_with(2, e.what());
  }
  return client;
}

// "a,b , c" → {"a", "b", "c"}.
std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string name = text.substr(start, end - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) names.push_back(name);
    start = end + 1;
  }
  return names;
}

void run_gates_command(const GatesArgs& args, const std::vector<std::string>& extras) {
  if (!extras.empty()) exit_with(2, "unexpected argument \"" + extras.front() + "\" (see --help)");
  if (args.url.empty()) exit_with(2, "--url is required (e.g. --url http://127.0.0.1:8000)");
  gates::GateOptions options;
  options.seed = parse_seed(args.seed);
  // The corpus is written in M3's chat format (its tool-call block is M3's element syntax).
  options.markers = gate_markers(minimax_m3_record());
  const gates::OpenAiClient server = connect(args.url, "--url", args);
  std::unique_ptr<gates::OpenAiClient> other;
  if (!args.compare_url.empty())
    other = std::make_unique<gates::OpenAiClient>(connect(args.compare_url, "--compare-url", args));
  std::vector<gates::GateResult> results;
  try {
    results = gates::run_gates(server, other.get(), options);
  } catch (const gates::ConnectionError& e) {
    exit_with(2, e.what());
  }
  const std::string printed =
      args.json ? gates::results_json(results).dump(2) + "\n" : gates::format_table(results);
  std::fputs(printed.c_str(), stdout);
  std::fflush(stdout);
  // --require narrows which failures fail the run; the others stay in the table as measured.
  std::vector<std::string> required = split_names(args.require);
  for (const std::string& name : required)
    if (std::none_of(results.begin(), results.end(),
                     [&](const gates::GateResult& r) { return r.gate == name; }))
      exit_with(2, "--require: no gate named \"" + name + "\" ran");
  bool failed = false;
  std::string reported_only;
  for (const gates::GateResult& r : results) {
    const bool counts =
        required.empty() || std::find(required.begin(), required.end(), r.gate) != required.end();
    if (!r.passed && counts) failed = true;
    if (!r.passed && !counts) reported_only += (reported_only.empty() ? "" : ", ") + r.gate;
  }
  if (!reported_only.empty())
    std::fprintf(stdout, "failed but not required (--require): %s\n", reported_only.c_str());
  if (failed) std::exit(1);
}

}  // namespace

void register_gates(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "gates",
      "Run the serving gates (golden prompts, loops, needles, arithmetic, logprobs, tool "
      "calls; agreement with --compare-url) against running servers");
  auto args = std::make_shared<GatesArgs>();
  cmd->add_option("--url", args->url, "Server under test, e.g. http://127.0.0.1:8000 (or .../v1)");
  cmd->add_option("--compare-url", args->compare_url,
                  "Second server: teacher-forced agreement, loss and identical greedy answers");
  cmd->add_option("--api-key", args->api_key, "Bearer key sent to both servers");
  cmd->add_option("--model", args->model, "Model name to request (default: first of /v1/models)");
  cmd->add_option("--seed", args->seed, "Seed of the fresh problems (golden prompts are fixed)");
  cmd->add_option("--timeout", args->timeout, "Seconds to wait for each reply (600)");
  cmd->add_flag("--json", args->json, "Print the results as JSON instead of a table");
  cmd->add_option("--require", args->require,
                  "Comma-separated gate names whose failure fails the run (default: every gate; "
                  "the others are still run and printed)");
  cmd->allow_extras();  // unknown arguments are reported by the command, with exit status 2
  cmd->footer("Exit status: 0 all gates pass, 1 a gate failed, 2 usage or connection error.");
  cmd->callback([cmd, args] { run_gates_command(*args, cmd->remaining()); });
}

}  // namespace minimax::cli
