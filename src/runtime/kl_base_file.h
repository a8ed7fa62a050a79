// The base file of `minimax perplexity --kl-divergence-base F` (docs/perplexity.md): what one run
// keeps of its logits so that a later run can be compared with it. Per scored position it holds the
// top-K token ids and log-probabilities, the log-probability of all other tokens together and that
// of the token that actually follows; a 64-byte header names the vocabulary, the window size and
// the text (its token count and a hash of its ids), so that a base is never compared with a run
// over another text or model. Little-endian:
//
//   0  char[8]  magic "MMKLBASE"
//   8  u32      version (1)
//  12  u32      top_k
//  16  u64      vocab (logits per position)
//  24  u64      context (tokens per window)
//  32  u64      token_count (of the whole text)
//  40  u64      tokens_hash (FNV-1a 64 over the ids as little-endian int32)
//  48  u64      windows
//  56  u64      positions (windows × scored positions per window)
//  64  positions records: f32 next-token log-prob, f32 rest log-prob, i32 ids[top_k],
//                         f32 log-probs[top_k]
// end  u64      FNV-1a 64 of every byte before it
//
// The file is written under F.tmp and renamed when complete (base/atomic_output.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/atomic_output.h"
#include "base/mapped_file.h"
#include "runtime/perplexity_stats.h"

namespace minimax {

struct KlBaseHeader {
  uint32_t top_k = 0;
  uint64_t vocab = 0, context = 0, token_count = 0, tokens_hash = 0, windows = 0, positions = 0;
};

inline constexpr uint32_t kKlBaseVersion = 1;
inline constexpr size_t kKlBaseHeaderBytes = 64;

// FNV-1a 64 of the ids as little-endian int32: what identifies the text of a base.
uint64_t hash_token_ids(std::span<const int32_t> ids);

// Bytes of one position's record for `top_k` tokens.
uint64_t kl_base_record_bytes(uint32_t top_k);

class KlBaseWriter {
 public:
  // Starts `path`.tmp with the header; `header.positions` records must follow.
  KlBaseWriter(const std::string& path, const KlBaseHeader& header);
  const KlBaseHeader& header() const { return header_; }
  // The next position: ids and log-probs of exactly top_k tokens.
  void add(const PositionLogprobs& position);
  // Writes the checksum and renames the file into place; Error when positions are missing.
  void commit();

 private:
  void write(const void* data, size_t bytes);

  KlBaseHeader header_;
  AtomicFile file_;
  uint64_t written_ = 0, checksum_;
};

class KlBaseReader {
 public:
  // Maps `path` and checks it whole before anything is read: magic, version, a size that matches
  // the header (a truncated file is refused) and the checksum (a corrupted one is refused). Every
  // error names the file.
  explicit KlBaseReader(const std::string& path);

  const std::string& path() const { return file_->path(); }
  const KlBaseHeader& header() const { return header_; }
  // Error naming the file when the base was written for another vocabulary, window size or text
  // than `run` describes (the fields other than top_k, windows and positions).
  void check_matches(const KlBaseHeader& run) const;
  // Position i's record (0-based, in the order written); Error naming the file for an id outside
  // the vocabulary.
  PositionLogprobs position(uint64_t i) const;

 private:
  std::unique_ptr<MappedFile> file_;
  KlBaseHeader header_;
};

}  // namespace minimax
