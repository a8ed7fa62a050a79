// Writing and checking the base files of `minimax perplexity` (runtime/kl_base_file.h).
#include "runtime/kl_base_file.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace minimax {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the base file is little-endian and written with memcpy");

constexpr char kMagic[8] = {'M', 'M', 'K', 'L', 'B', 'A', 'S', 'E'};
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull, kFnvPrime = 0x100000001b3ull;
// Far more than any use (llama.cpp's base holds the whole row); a corrupted header fails here
// before its sizes are multiplied.
constexpr uint32_t kMaxTopK = 1u << 16;

uint64_t fnv1a(uint64_t hash, const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * kFnvPrime;
  return hash;
}

template <typename T>
T load_at(const uint8_t* p, size_t offset) {
  T value;
  std::memcpy(&value, p + offset, sizeof(T));
  return value;
}

std::vector<uint8_t> encode_header(const KlBaseHeader& h) {
  std::vector<uint8_t> out(kKlBaseHeaderBytes, 0);
  auto put = [&](size_t offset, auto value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
  };
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  put(8, kKlBaseVersion);
  put(12, h.top_k);
  put(16, h.vocab);
  put(24, h.context);
  put(32, h.token_count);
  put(40, h.tokens_hash);
  put(48, h.windows);
  put(56, h.positions);
  return out;
}

}  // namespace

uint64_t hash_token_ids(std::span<const int32_t> ids) {
  return fnv1a(kFnvOffset, ids.data(), ids.size_bytes());
}

uint64_t kl_base_record_bytes(uint32_t top_k) { return 8 + 8 * uint64_t{top_k}; }

KlBaseWriter::KlBaseWriter(const std::string& path, const KlBaseHeader& header)
    : header_(header), file_(path), checksum_(kFnvOffset) {
  if (header.top_k == 0 || header.top_k > kMaxTopK)
    fail("{}: top-K of {} tokens (1 to {})", path, header.top_k, kMaxTopK);
  const std::vector<uint8_t> bytes = encode_header(header);
  write(bytes.data(), bytes.size());
}

void KlBaseWriter::write(const void* data, size_t bytes) {
  file_.write(std::span(static_cast<const uint8_t*>(data), bytes));
  checksum_ = fnv1a(checksum_, data, bytes);
}

void KlBaseWriter::add(const PositionLogprobs& position) {
  if (position.ids.size() != header_.top_k || position.logprobs.size() != header_.top_k)
    fail("{}: a position of {} tokens in a base of top-{}", file_.final_path(), position.ids.size(),
         header_.top_k);
  if (written_ == header_.positions)
    fail("{}: more than the {} positions of its header", file_.final_path(), header_.positions);
  write(&position.next_logprob, sizeof(float));
  write(&position.rest_logprob, sizeof(float));
  write(position.ids.data(), position.ids.size() * sizeof(int32_t));
  write(position.logprobs.data(), position.logprobs.size() * sizeof(float));
  ++written_;
}

void KlBaseWriter::commit() {
  if (written_ != header_.positions)
    fail("{}: {} of the {} positions written", file_.final_path(), written_, header_.positions);
  const uint64_t checksum = checksum_;
  file_.write(std::span(reinterpret_cast<const uint8_t*>(&checksum), sizeof checksum));
  file_.commit();
}

KlBaseReader::KlBaseReader(const std::string& path) : file_(std::make_unique<MappedFile>(path)) {
  const uint8_t* p = file_->data();
  const uint64_t size = file_->size();
  if (size < sizeof kMagic || std::memcmp(p, kMagic, sizeof kMagic) != 0)
    fail("{}: not a base file of minimax perplexity (no \"MMKLBASE\" at its start)", path);
  if (size < kKlBaseHeaderBytes + 8)
    fail("{}: truncated: {} bytes, less than a header and a checksum", path, size);
  const auto version = load_at<uint32_t>(p, 8);
  if (version != kKlBaseVersion)
    fail("{}: base file version {}; this build reads version {}", path, version, kKlBaseVersion);
  KlBaseHeader& h = header_;
  h.top_k = load_at<uint32_t>(p, 12);
  h.vocab = load_at<uint64_t>(p, 16);
  h.context = load_at<uint64_t>(p, 24);
  h.token_count = load_at<uint64_t>(p, 32);
  h.tokens_hash = load_at<uint64_t>(p, 40);
  h.windows = load_at<uint64_t>(p, 48);
  h.positions = load_at<uint64_t>(p, 56);
  const uint64_t record = kl_base_record_bytes(h.top_k);
  if (h.top_k == 0 || h.top_k > kMaxTopK)
    fail("{}: corrupted: its header says top-{} (1 to {})", path, h.top_k, kMaxTopK);
  if (h.positions > (UINT64_MAX - kKlBaseHeaderBytes - 8) / record)
    fail("{}: corrupted: its header says {} positions", path, h.positions);
  const uint64_t expected = kKlBaseHeaderBytes + h.positions * record + 8;
  if (size != expected)
    fail("{}: {}: {} bytes where its header ({} positions of top-{}) needs {}", path,
         size < expected ? "truncated" : "trailing bytes", size, h.positions, h.top_k, expected);
  if (fnv1a(kFnvOffset, p, size - 8) != load_at<uint64_t>(p, size - 8))
    fail("{}: corrupted: its checksum does not match its contents", path);
}

void KlBaseReader::check_matches(const KlBaseHeader& run) const {
  const KlBaseHeader& h = header_;
  if (h.vocab != run.vocab)
    fail("{}: written for a model of {} logits per position; this model has {}", path(), h.vocab,
         run.vocab);
  if (h.context != run.context)
    fail("{}: written with windows of {} tokens (--context {}); this run uses --context {}", path(),
         h.context, h.context, run.context);
  if (h.token_count != run.token_count || h.tokens_hash != run.tokens_hash)
    fail(
        "{}: written for another text ({} tokens, hash {:016x}); this text is {} tokens, hash "
        "{:016x} (the text, the tokenizer or its BOS setting differ)",
        path(), h.token_count, h.tokens_hash, run.token_count, run.tokens_hash);
}

PositionLogprobs KlBaseReader::position(uint64_t i) const {
  if (i >= header_.positions) fail("{}: position {} of {}", path(), i, header_.positions);
  const uint32_t k = header_.top_k;
  const uint8_t* p = file_->data() + kKlBaseHeaderBytes + i * kl_base_record_bytes(k);
  PositionLogprobs out;
  out.next_logprob = load_at<float>(p, 0);
  out.rest_logprob = load_at<float>(p, 4);
  out.ids.resize(k);
  out.logprobs.resize(k);
  std::memcpy(out.ids.data(), p + 8, 4 * uint64_t{k});
  std::memcpy(out.logprobs.data(), p + 8 + 4 * uint64_t{k}, 4 * uint64_t{k});
  for (int32_t id : out.ids)
    if (id < 0 || static_cast<uint64_t>(id) >= header_.vocab)
      fail("{}: position {} holds token id {}, outside its vocabulary of {}", path(), i, id,
           header_.vocab);
  return out;
}

}  // namespace minimax
