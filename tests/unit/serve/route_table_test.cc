// The route table (serve/route_table.h) holds the key policy: every route that runs the
// tokenizer, the chat template, a grammar or the model needs the API key (/tokenize and
// /detokenize included); /health, /metrics and the chat page's files are open; a path the table
// does not know is closed.
#include "serve/route_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "serve/openai_service.h"
#include "serve/web_assets.h"

namespace minimax {
namespace {

TEST(RouteTable, EveryRouteThatRunsTheModelOrTheTokenizerNeedsTheKey) {
  const struct {
    std::string path, method;
    RouteHandler handler;
  } guarded[] = {
      {"/v1/chat/completions", "POST", &OpenAiService::chat_completions},
      {"/v1/completions", "POST", &OpenAiService::completions},
      {"/v1/responses", "POST", &OpenAiService::responses},
      {"/v1/responses/resp_1", "GET", &OpenAiService::retrieve_response},
      {"/v1/responses/resp_1", "DELETE", &OpenAiService::delete_response},
      {"/v1/messages", "POST", &OpenAiService::messages},
      {"/v1/messages/count_tokens", "POST", &OpenAiService::count_message_tokens},
      {"/tokenize", "POST", &OpenAiService::tokenize},
      {"/detokenize", "POST", &OpenAiService::detokenize},
      {"/v1/models", "GET", &OpenAiService::models},
      {"/v1/models/MiniMaxAI/MiniMax-M2", "GET", &OpenAiService::model},
  };
  for (const auto& g : guarded) {
    SCOPED_TRACE(g.path);
    const Route* route = find_route(g.path, g.method);
    ASSERT_NE(route, nullptr);
    EXPECT_TRUE(route->handler == g.handler);
    EXPECT_TRUE(route->needs_key);
    const RouteAccess access = route_access(g.path);
    EXPECT_NE(access.methods.find(g.method), std::string::npos) << access.methods;
    EXPECT_TRUE(access.needs_key);
    EXPECT_FALSE(access.at_once);  // they run the model or the tokenizer: on a worker
  }
}

TEST(RouteTable, HealthMetricsAndThePageAreOpen) {
  std::vector<std::string> open = {"/health", "/metrics", "/"};
  for (const EmbeddedFile& file : embedded_web_files())
    open.push_back("/" + std::string(file.name));
  for (const std::string& path : open) {
    SCOPED_TRACE(path);
    const RouteAccess access = route_access(path);
    EXPECT_EQ(access.methods, "GET");
    EXPECT_FALSE(access.needs_key);
    // Health checks and metrics never wait behind requests; the page's files go to a worker.
    EXPECT_EQ(access.at_once, path == "/health" || path == "/metrics");
  }
}

TEST(RouteTable, UnknownPathsAreClosed) {
  for (std::string path : {"/v1/nothing", "/v1/models/", "/tokenize/x", "/x", "", "/v1/"}) {
    SCOPED_TRACE(path);
    for (std::string method : {"GET", "POST", "DELETE"})
      EXPECT_EQ(find_route(path, method), nullptr);
    const RouteAccess access = route_access(path);
    EXPECT_EQ(access.methods, "");
    EXPECT_TRUE(access.needs_key);
  }
}

// A model id is the rest of the path, slashes included.
TEST(RouteTable, ModelIdIsTheRestOfThePath) {
  const std::string path = "/v1/models/MiniMaxAI/MiniMax-M2";
  const Route* route = find_route(path, "GET");
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(path.substr(route->path.size()), "MiniMaxAI/MiniMax-M2");
}

// A path that several rows answer lists all their methods (the transport's 405 and Allow header
// read the list), and each method finds its own row.
TEST(RouteTable, AStoredResponseAnswersGetAndDelete) {
  const std::string path = "/v1/responses/resp_abc";
  EXPECT_EQ(route_access(path).methods, "GET,DELETE");
  EXPECT_TRUE(find_route(path, "GET")->handler == &OpenAiService::retrieve_response);
  EXPECT_TRUE(find_route(path, "DELETE")->handler == &OpenAiService::delete_response);
  EXPECT_EQ(find_route(path, "POST"), nullptr);  // a 405, not a 404: the path is known
  EXPECT_EQ(route_access("/v1/responses").methods, "POST");
  EXPECT_EQ(route_access("/v1/responses/").methods, "");  // no id
}

// Rows that answer one path agree on its key rule and on where it runs: route_access reports one.
TEST(RouteTable, RowsOfOnePathShareTheirKeyRule) {
  for (std::string path : {"/v1/responses/resp_abc", "/v1/models/m", "/", "/health"}) {
    SCOPED_TRACE(path);
    int rows = 0;
    for (std::string method : {"GET", "POST", "DELETE"}) {
      const Route* route = find_route(path, method);
      if (route == nullptr) continue;
      ++rows;
      EXPECT_EQ(route->needs_key, route_access(path).needs_key);
      EXPECT_EQ(route->at_once, route_access(path).at_once);
    }
    EXPECT_GE(rows, 1);
  }
}

}  // namespace
}  // namespace minimax
