// The gates end to end over loopback against an in-process "oracle" server that answers every
// task by reading the request (not by asking the generators), with canned OpenAI JSON shapes:
// all gates pass on it, and each kind of breakage fails the gate meant to catch it.
#include <gtest/gtest.h>

#include <regex>

#include "cli/gate_markers.h"
#include "fake_server.h"
#include "gates/gates.h"

namespace minimax::gates {
namespace {

using json = nlohmann::json;
using testing::FakeReply;
using testing::FakeRequest;
using testing::FakeServer;

struct OracleFaults {
  bool wrong_arithmetic = false;  // answers a + b + 1
  bool loop = false;              // copy answers run on repeating the text until max_tokens
  bool positive_logprob = false;  // one logprob > 0
  bool no_tool_call = false;      // answers tool requests with text
  int flip_top_every = 0;         // prompt_logprobs: a different rank-1 token every Nth position
};

std::string solve(const std::string& user, std::string* reasoning) {
  std::smatch m;
  static const std::regex arithmetic(R"(What is (\d+) ([+-]) (\d+)\?)");
  static const std::regex needle_question(R"(\n\nWhat is the secret code for (\w+)\?$)");
  static const std::regex recall(R"(Here is a list: (.*)\. Which word comes right after (\w+)\?)");
  if (std::regex_match(user, m, arithmetic)) {
    const long a = std::stol(m[1]), b = std::stol(m[3]);
    *reasoning = "steps.";
    return std::to_string(m[2] == "+" ? a + b : a - b);
  }
  if (std::regex_search(user, m, needle_question)) {
    const std::regex needle("The secret code for " + m[1].str() + R"( is (\d+)\.)");
    std::smatch value;
    if (std::regex_search(user, value, needle)) return value[1];
    return "none";
  }
  if (user.rfind("Repeat exactly: ", 0) == 0) return user.substr(16);
  if (std::regex_match(user, m, recall)) {
    const std::string list = m[1].str() + ",";
    const std::string word = m[2].str() + ", ";
    const size_t at = list.find(word);
    if (at == std::string::npos) return "none";
    const size_t start = at + word.size();
    return list.substr(start, list.find(',', start) - start);
  }
  return "unknown";
}

json logprob_content(const std::string& text, int top, bool positive) {
  json content = json::array();
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string token(1, text[i]);
    json entry = {{"token", token}, {"logprob", positive && i == 0 ? 0.25 : -0.01}};
    json tops = json::array({{{"token", token}, {"logprob", -0.01}}});
    for (int k = 1; k < top; ++k) tops.push_back({{"token", "#"}, {"logprob", -3.0 - k}});
    entry["top_logprobs"] = tops;
    content.push_back(entry);
  }
  return content;
}

FakeReply chat_reply(const json& request, const OracleFaults& faults) {
  const json& messages = request["messages"];
  const json& last = messages.back();
  json message = {{"role", "assistant"}, {"content", ""}};
  std::string finish = "stop";
  std::string reasoning;
  if (last["role"] == "tool") {
    const json result = json::parse(last["content"].get<std::string>());
    message["content"] = result.contains("city")
                             ? "It is " + result["condition"].get<std::string>() + " and " +
                                   std::to_string(result["temperature"].get<int>()) +
                                   " degrees in " + result["city"].get<std::string>() + "."
                             : "A " + result["item"].get<std::string>() + " costs " +
                                   std::to_string(result["price"].get<int>()) + " dollars.";
  } else if (request.contains("tools") && !faults.no_tool_call) {
    const std::string user = last["content"];
    std::smatch m;
    json arguments;
    std::string name;
    if (std::regex_match(user, m, std::regex(R"(What is the weather in (\w+)\?)"))) {
      name = "get_weather";
      arguments = {{"city", m[1].str()}};
    } else if (std::regex_match(user, m, std::regex(R"(How much does a (\w+) cost\?)"))) {
      name = "get_price";
      arguments = {{"item", m[1].str()}};
    }
    message["content"] = nullptr;
    message["tool_calls"] =
        json::array({{{"id", "call_1"},
                      {"type", "function"},
                      {"function", {{"name", name}, {"arguments", arguments.dump()}}}}});
    finish = "tool_calls";
  } else {
    std::string answer = solve(last["content"], &reasoning);
    if (faults.wrong_arithmetic && !reasoning.empty())
      answer = std::to_string(std::stol(answer) + 1);
    if (faults.loop && last["content"].get<std::string>().rfind("Repeat", 0) == 0) {
      std::string looped;
      while (looped.size() < 300) looped += answer + " ";
      answer = looped;
      finish = "length";
    }
    message["content"] = answer;
    if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  }
  const std::string generated =
      reasoning + (message["content"].is_string() ? message["content"].get<std::string>() : "x");
  json choice = {{"index", 0}, {"message", message}, {"finish_reason", finish}};
  if (request.value("logprobs", false))
    choice["logprobs"] = {{"content", logprob_content(generated, request.value("top_logprobs", 1),
                                                      faults.positive_logprob)}};
  json reply = {{"id", "chatcmpl-1"},
                {"object", "chat.completion"},
                {"model", "tiny"},
                {"choices", json::array({choice})},
                {"usage", {{"prompt_tokens", 10}, {"completion_tokens", generated.size()}}}};
  return {200, reply.dump()};
}

FakeReply completion_reply(const json& request, const OracleFaults& faults) {
  // One "token" per byte: id = the byte, rank-1 guess = the byte itself except at flipped
  // positions, where the actual byte is ranked 2nd behind id 0.
  const std::string prompt = request["prompt"];
  json list = json::array({nullptr});
  for (size_t i = 1; i < prompt.size(); ++i) {
    const std::string id = std::to_string(static_cast<unsigned char>(prompt[i]));
    const bool flip = faults.flip_top_every > 0 && i % faults.flip_top_every == 0;
    json entry = json::object();
    if (flip) {
      entry["0"] = {{"logprob", -0.5}, {"rank", 1}, {"decoded_token", "?"}};
      entry[id] = {{"logprob", -1.0}, {"rank", 2}, {"decoded_token", prompt.substr(i, 1)}};
    } else {
      entry[id] = {{"logprob", -0.2}, {"rank", 1}, {"decoded_token", prompt.substr(i, 1)}};
    }
    list.push_back(entry);
  }
  json reply = {
      {"id", "cmpl-1"},
      {"object", "text_completion"},
      {"choices", json::array({{{"index", 0}, {"text", "x"}, {"finish_reason", "length"}}})},
      {"prompt_logprobs", list},
      {"usage", {{"prompt_tokens", prompt.size()}, {"completion_tokens", 1}}}};
  return {200, reply.dump()};
}

FakeServer::Handler oracle(OracleFaults faults = {}) {
  return [faults](const FakeRequest& request) {
    if (request.path == "/v1/models") return FakeReply{200, R"({"data": [{"id": "tiny"}]})"};
    const json body = json::parse(request.body);
    if (body.value("model", "") != "tiny")
      return FakeReply{404, R"({"error": {"message": "unknown model"}})"};
    if (request.path == "/v1/chat/completions") return chat_reply(body, faults);
    if (request.path == "/v1/completions") return completion_reply(body, faults);
    return FakeReply{404, R"({"error": {"message": "no route"}})"};
  };
}

GateOptions small_options() {
  GateOptions options;
  options.seed = 7;
  options.thresholds.arithmetic_problems = 10;
  options.markers = cli::gate_markers(minimax_m3_record());
  return options;
}

OpenAiClient client_for(const FakeServer& server) {
  OpenAiClient client(parse_http_url(server.url()), "", "", 30.0);
  client.resolve_model();
  return client;
}

const GateResult& find(const std::vector<GateResult>& results, const std::string& gate) {
  for (const GateResult& r : results)
    if (r.gate == gate) return r;
  throw std::runtime_error("no gate " + gate);
}

TEST(GatesEndToEnd, AllPassAgainstACorrectServerAndItself) {
  FakeServer a(oracle());
  FakeServer b(oracle());
  const OpenAiClient server = client_for(a);
  const OpenAiClient other = client_for(b);
  const std::vector<GateResult> results = run_gates(server, &other, small_options());
  ASSERT_EQ(results.size(), 10u);
  for (const GateResult& r : results)
    EXPECT_TRUE(r.passed) << r.gate << ": " << r.measured << "\n" << format_table({r});
  EXPECT_EQ(find(results, "needles").measured.rfind("54/54", 0), 0u);
  EXPECT_EQ(find(results, "next-token agreement").measured.rfind("1.0000", 0), 0u);
  EXPECT_EQ(find(results, "mean loss difference").measured.rfind("0.0000", 0), 0u);
}

TEST(GatesEndToEnd, WrongArithmeticFailsArithmeticAndGolden) {
  OracleFaults faults;
  faults.wrong_arithmetic = true;
  FakeServer a(oracle(faults));
  const OpenAiClient server = client_for(a);
  const GateResult arithmetic = arithmetic_gate(server, small_options());
  EXPECT_FALSE(arithmetic.passed);
  EXPECT_EQ(arithmetic.measured, "0/10 (0.0%)");
  ASSERT_FALSE(arithmetic.details.empty());
  EXPECT_NE(arithmetic.details[0].find("expected '"), std::string::npos);
  EXPECT_FALSE(golden_gate(server, small_options()).passed);
  EXPECT_TRUE(needles_gate(server, small_options()).passed);
}

TEST(GatesEndToEnd, LoopIsCaught) {
  OracleFaults faults;
  faults.loop = true;
  FakeServer a(oracle(faults));
  const GateResult loops = loops_gate(client_for(a), small_options());
  EXPECT_FALSE(loops.passed);
  EXPECT_NE(loops.measured.find("loops in 10 prompts"), std::string::npos);
  ASSERT_FALSE(loops.details.empty());
  EXPECT_NE(loops.details[0].find("(hit max_tokens)"), std::string::npos) << loops.details[0];
}

TEST(GatesEndToEnd, BadLogprobsFailTheLogprobGate) {
  OracleFaults faults;
  faults.positive_logprob = true;
  FakeServer a(oracle(faults));
  const GateResult logprobs = logprobs_gate(client_for(a), small_options());
  EXPECT_FALSE(logprobs.passed);
  ASSERT_FALSE(logprobs.details.empty());
  EXPECT_NE(logprobs.details[0].find("is positive"), std::string::npos) << logprobs.details[0];
}

TEST(GatesEndToEnd, MissingToolCallFailsTheToolGate) {
  OracleFaults faults;
  faults.no_tool_call = true;
  FakeServer a(oracle(faults));
  const GateResult tools = tool_call_gate(client_for(a), small_options());
  EXPECT_FALSE(tools.passed);
  EXPECT_EQ(tools.measured, "calls 0/4, answers 4/4");
  ASSERT_FALSE(tools.details.empty());
  EXPECT_NE(tools.details[0].find("finish_reason 'stop', expected 'tool_calls'"),
            std::string::npos);
}

TEST(GatesEndToEnd, DisagreeingServersFailAgreement) {
  OracleFaults faults;
  faults.flip_top_every = 10;  // 10% of positions disagree: below the 0.95 threshold
  FakeServer a(oracle());
  FakeServer b(oracle(faults));
  const OpenAiClient server = client_for(a);
  const OpenAiClient other = client_for(b);
  std::vector<std::string> golden;
  golden_gate(server, small_options(), &golden);
  const std::vector<GateResult> results = compare_gates(server, other, small_options(), golden);
  const GateResult& agreement = find(results, "next-token agreement");
  EXPECT_FALSE(agreement.passed) << agreement.measured;
  EXPECT_EQ(agreement.measured.rfind("0.9", 0), 0u) << agreement.measured;
  // Flipped positions cost 0.8 nats more each: about 0.08 over the corpus.
  EXPECT_FALSE(find(results, "mean loss difference").passed);
  EXPECT_TRUE(find(results, "identical greedy answers").passed);
}

TEST(GatesEndToEnd, UnknownModelFailsGatesWithTheServersMessage) {
  FakeServer a(oracle());
  const OpenAiClient server(parse_http_url(a.url()), "", "other-model", 30.0);
  const GateResult golden = golden_gate(server, small_options());
  EXPECT_FALSE(golden.passed);
  ASSERT_FALSE(golden.details.empty());
  EXPECT_NE(golden.details[0].find("HTTP 404: unknown model"), std::string::npos)
      << golden.details[0];
}

TEST(GatesEndToEnd, ServerGoingAwayIsAConnectionError) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::unused_port());
  const OpenAiClient server(parse_http_url(url), "", "tiny", 5.0);
  EXPECT_THROW(run_gates(server, nullptr, small_options()), ConnectionError);
}

TEST(CompareCorpus, FixedAndInTheTemplatesTurnFormat) {
  const std::vector<std::string> corpus = compare_corpus(small_options().markers);
  ASSERT_EQ(corpus, compare_corpus(small_options().markers));
  ASSERT_EQ(corpus.size(), 24u);
  for (const std::string& text : corpus) {
    EXPECT_EQ(text.rfind("]~b]user\n", 0), 0u);
    EXPECT_TRUE(text.ends_with("[e~["));
    EXPECT_NE(text.find("[e~[\n]~b]ai\n"), std::string::npos);
  }
  EXPECT_NE(corpus[0].find("]~b]ai\n<mm:think>"), std::string::npos);
  EXPECT_NE(corpus.back().find(
                "</mm:think>]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_price\">"
                "]<]minimax[>[<item>"),
            std::string::npos)
      << corpus.back();
  EXPECT_NE(corpus.back().find("[e~[\n]~b]tool\n<response>{\"item\": "), std::string::npos);
}

}  // namespace
}  // namespace minimax::gates
