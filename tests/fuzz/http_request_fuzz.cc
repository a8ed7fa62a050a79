// libFuzzer target for reading HTTP requests (serve/http_request.h): any byte string, fed whole
// and then in small pieces, must give a complete request, a refusal with a 4xx/5xx status and a
// message, or a request still incomplete; and both feedings must agree. Crashes, hangs and
// sanitizer reports are the failures. Seed corpus: tests/data/http_requests/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "serve/http_request.h"

namespace {

constexpr size_t kMaxHead = 4096, kMaxBody = 1024;

// Reads requests from `bytes` as a connection would, `piece` bytes at a time; returns a summary of
// what was read (bodies and refusals), which must not depend on `piece`.
std::string read_all(std::string_view bytes, size_t piece) {
  std::string summary, in;
  std::optional<minimax::BodyReader> body;
  minimax::HttpHead head;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    in.append(bytes.substr(at, piece));
    for (;;) {
      if (!body) {
        const minimax::HeadResult r = minimax::read_http_head(in, kMaxHead, kMaxBody, head);
        if (r.refusal) {
          if (r.refusal->status < 400 || r.refusal->message.empty()) std::abort();
          return summary + "refused " + std::to_string(r.refusal->status);
        }
        if (r.consumed == 0) break;
        if (r.consumed > in.size()) std::abort();
        in.erase(0, r.consumed);
        summary += head.method + " " + head.path + "\n";
        body.emplace(head, kMaxBody);
      }
      const minimax::BodyReader::Step step = body->feed(in);
      if (step == minimax::BodyReader::Step::kRefused) {
        if (body->refusal().status < 400) std::abort();
        return summary + "refused " + std::to_string(body->refusal().status);
      }
      if (step == minimax::BodyReader::Step::kMore) break;
      const std::string text = body->take();
      if (text.size() > kMaxBody) std::abort();
      summary += text + "\n";
      body.reset();
    }
  }
  return summary;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string whole = read_all(bytes, bytes.size() + 1);
  if (read_all(bytes, 7) != whole) std::abort();
  return 0;
}
