// The embedded chat page (serve/web_assets.h): every file of src/serve/web/ is in the binary byte
// for byte, each is served with a known Content-Type and the caching and security headers, every
// file the page refers to is there, and paths outside the page find nothing.
#include "serve/web_assets.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include "serve/http_reply.h"

namespace minimax {
namespace {

const std::filesystem::path kWebDir =
    std::filesystem::path(MINIMAX_TEST_DATA) / ".." / ".." / "src" / "serve" / "web";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(WebAssets, EveryFileOfTheWebFolderIsEmbeddedByteForByte) {
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(kWebDir))
    if (entry.path().filename().string()[0] != '.')  // hidden files are not embedded
      on_disk.insert(entry.path().filename().string());
  std::set<std::string> embedded;
  for (const EmbeddedFile& file : embedded_web_files()) {
    embedded.insert(std::string(file.name));
    EXPECT_EQ(file.bytes, read_file(kWebDir / file.name)) << file.name;
  }
  EXPECT_EQ(embedded, on_disk);
  EXPECT_TRUE(embedded.count("index.html"));
}

TEST(WebAssets, EveryFileHasAContentType) {
  for (const EmbeddedFile& file : embedded_web_files())
    EXPECT_NE(web_content_type(file.name), "") << file.name << ": add its extension to the table";
  EXPECT_EQ(web_content_type("chat.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(web_content_type("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(web_content_type("notes.txt"), "");
  EXPECT_EQ(web_content_type(".js"), "");
}

TEST(WebAssets, RootIsTheIndexAndOtherPathsFindOnlyPageFiles) {
  const EmbeddedFile* root = find_web_file("/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->name, "index.html");
  EXPECT_EQ(find_web_file("/index.html"), root);
  ASSERT_NE(find_web_file("/chat.js"), nullptr);
  EXPECT_EQ(find_web_file("/chat.js")->name, "chat.js");
  for (const char* path : {"", "chat.js", "/nothing.js", "/v1/models", "/health", "//chat.js",
                           "/../chat.js", "/web/chat.js", "/chat.js/"})
    EXPECT_EQ(find_web_file(path), nullptr) << path;
}

// A missing file would load the page without its script or style; the test names it.
TEST(WebAssets, EveryLocalReferenceOfTheIndexIsEmbedded) {
  const std::string index(find_web_file("/")->bytes);
  const std::regex reference(R"re((?:src|href)="([^"]+)")re");
  int count = 0;
  for (auto it = std::sregex_iterator(index.begin(), index.end(), reference);
       it != std::sregex_iterator(); ++it, ++count) {
    const std::string target = (*it)[1];
    EXPECT_EQ(target.find(':'), std::string::npos) << target << ": the page loads nothing remote";
    EXPECT_NE(find_web_file("/" + target), nullptr) << target << " is not in src/serve/web/";
  }
  EXPECT_GE(count, 2);  // the script and the style sheet at least
}

TEST(WebAssets, ReplyCarriesTypeCachingAndSecurityHeaders) {
  const EmbeddedFile& file = *find_web_file("/chat.js");
  const std::string wire = whole_reply(web_file_reply(file), false, false);
  const size_t body_at = wire.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  const std::string head = wire.substr(0, body_at + 2);
  EXPECT_EQ(wire.substr(body_at + 4), file.bytes);
  EXPECT_NE(head.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Type: text/javascript; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(head.find("Cache-Control: no-cache\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Security-Policy: default-src 'self';"), std::string::npos) << head;
  EXPECT_NE(head.find("X-Content-Type-Options: nosniff\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find(fmt::format("Content-Length: {}\r\n", file.bytes.size())), std::string::npos);
}

}  // namespace
}  // namespace minimax
