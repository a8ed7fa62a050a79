// Rank 0 driving the other ranks of a parallel group: the messages (rank_link.h), the followers'
// loop, one step on every rank with its logits gathered, and the check that every rank runs the
// same binary on the same checkpoint.
#include "model/rank_link.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "parallel/build_id.h"

namespace minimax {
namespace {

// Appends / reads plain values and int32 arrays of a step's payload.
class Bytes {
 public:
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    data.insert(data.end(), p, p + sizeof(T));
  }
  void put(std::span<const int32_t> v) {
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    data.insert(data.end(), p, p + v.size_bytes());
  }
  std::vector<uint8_t> data;
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& d) : data_(d) {}
  template <class T>
  T get() {
    T v;
    take(&v, sizeof(T));
    return v;
  }
  std::vector<int32_t> ints(size_t n) {
    std::vector<int32_t> v(n);
    take(v.data(), n * sizeof(int32_t));
    return v;
  }

 private:
  void take(void* out, size_t n) {
    if (at_ + n > data_.size()) fail("rank link: a step message ends early");
    std::memcpy(out, data_.data() + at_, n);
    at_ += n;
  }
  const std::vector<uint8_t>& data_;
  size_t at_ = 0;
};

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
uint64_t fnv1a(uint64_t h, std::string_view s) { return fnv1a(h, s.data(), s.size()); }
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;

}  // namespace

void Model::Link::send(const RankHeader& header, const void* payload) {
  // The followers wait for the header with broadcast_waiting; MPI matches a nonblocking
  // collective only with the same nonblocking one, so the root sends it that way too.
  comm->broadcast_waiting(const_cast<RankHeader*>(&header), sizeof header, 0);
  if (header.payload_bytes > 0)
    comm->broadcast(const_cast<void*>(payload), header.payload_bytes, 0);
  last_sent = std::chrono::steady_clock::now();
}

void Model::Link::start_heartbeat(std::chrono::nanoseconds period) {
  heartbeat = std::jthread([this, period](std::stop_token stop) {
    std::mutex sleep_mutex;
    std::condition_variable_any sleep;
    for (;;) {
      {
        std::unique_lock<std::mutex> wait(sleep_mutex);
        sleep.wait_for(wait, stop, period, [] { return false; });
      }
      if (stop.stop_requested()) return;
      std::lock_guard<std::mutex> lock(mutex);
      if (!open) return;
      if (std::chrono::steady_clock::now() - last_sent < period) continue;
      RankHeader beat;
      beat.command = static_cast<uint32_t>(RankCommand::kHeartbeat);
      send(beat);
    }
  });
}

std::unique_ptr<KvBlockPool> Model::make_pool(int64_t num_blocks, int64_t block_size,
                                              KvDtype dtype) const {
  auto pool =
      std::make_unique<KvBlockPool>(*backend_, local_config_, num_blocks, block_size, dtype);
  if (comm_ == nullptr) return pool;
  std::lock_guard<std::mutex> lock(link_->mutex);
  const int64_t id = link_->next_pool_id++;
  RankHeader h;
  h.command = static_cast<uint32_t>(RankCommand::kNewPool);
  h.args[0] = id;
  h.args[1] = num_blocks;
  h.args[2] = block_size;
  h.args[3] = static_cast<int64_t>(dtype);
  link_->send(h);
  pool->link(id, [link = link_, id] {
    std::lock_guard<std::mutex> lock(link->mutex);
    if (!link->open) return;
    RankHeader free;
    free.command = static_cast<uint32_t>(RankCommand::kFreePool);
    free.args[0] = id;
    link->send(free);
  });
  return pool;
}

void Model::send_step(std::span<const BatchSequence> batch, std::span<const int32_t> dp_rank) {
  Bytes b;
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchSequence& s = batch[i];
    const std::vector<int32_t>& table = s.cache->block_table();
    b.put(s.cache->pool().link_id());
    b.put(static_cast<int32_t>(s.which));
    b.put(dp_rank[i]);
    b.put(static_cast<int32_t>(s.tokens.size()));
    b.put(static_cast<int32_t>(table.size()));
    b.put(s.tokens);
    b.put(s.positions);
    b.put(std::span<const int32_t>(table));
  }
  RankHeader h;
  h.command = static_cast<uint32_t>(RankCommand::kStep);
  h.count = static_cast<uint32_t>(batch.size());
  h.payload_bytes = b.data.size();
  link_->send(h, b.data.data());
}

void Model::follow() {
  if (comm_ == nullptr || !is_follower()) return;
  for (;;) {
    RankHeader h;
    comm_->broadcast_waiting(&h, sizeof h, 0);
    std::vector<uint8_t> payload(h.payload_bytes);
    if (h.payload_bytes > 0) comm_->broadcast(payload.data(), payload.size(), 0);
    try {
      switch (static_cast<RankCommand>(h.command)) {
        case RankCommand::kStop:
          return;
        case RankCommand::kHeartbeat:
          break;
        case RankCommand::kNewPool:
          follower_pools_[h.args[0]] = std::make_unique<KvBlockPool>(
              *backend_, local_config_, h.args[1], h.args[2], static_cast<KvDtype>(h.args[3]));
          break;
        case RankCommand::kFreePool:
          follower_pools_.erase(h.args[0]);
          break;
        case RankCommand::kSetTaps: {
          Reader r(payload);
          const std::vector<int32_t> layers = r.ints(static_cast<size_t>(h.args[0]));
          set_hidden_taps(std::vector<int>(layers.begin(), layers.end()));
          break;
        }
        case RankCommand::kStep: {
          Reader r(payload);
          std::vector<std::vector<int32_t>> tokens(h.count), positions(h.count);
          std::vector<KvCache> caches;
          std::vector<int32_t> dp_rank(h.count);
          std::vector<LogitsFor> which(h.count);
          caches.reserve(h.count);
          for (uint32_t i = 0; i < h.count; ++i) {
            const auto pool = r.get<int64_t>();
            which[i] = static_cast<LogitsFor>(r.get<int32_t>());
            dp_rank[i] = r.get<int32_t>();
            const auto n = static_cast<size_t>(r.get<int32_t>());
            const auto blocks = static_cast<size_t>(r.get<int32_t>());
            tokens[i] = r.ints(n);
            positions[i] = r.ints(n);
            auto it = follower_pools_.find(pool);
            if (it == follower_pools_.end())
              fail("rank link: a step names KV pool {}, unknown here", pool);
            caches.emplace_back(*it->second, r.ints(blocks));
          }
          std::vector<BatchSequence> batch(h.count);
          for (uint32_t i = 0; i < h.count; ++i)
            batch[i] = {tokens[i], positions[i], &caches[i], which[i]};
          run_step(batch, dp_rank);
          break;
        }
        default:
          fail("rank link: unknown command {} from rank 0", h.command);
      }
    } catch (const std::exception& e) {
      comm_->abort(e.what());
    }
  }
}

std::vector<float> Model::run_step(std::span<const BatchSequence> batch,
                                   std::span<const int32_t> dp_rank) {
  const int64_t vocab = weights_.vocab_size;
  if (!plan_.data_parallel()) {
    std::vector<float> part = run_layers(batch);
    const int64_t share = weights_.lm_head.rows;
    if (comm_ == nullptr || share == vocab) return part;
    // Vocabulary shares: rank r's [rows, share] block holds columns [r·share, (r+1)·share).
    const int ranks = comm_->size();
    const int64_t rows = static_cast<int64_t>(part.size()) / share;
    std::vector<float> gathered(part.size() * ranks), logits(rows * vocab);
    comm_->allgather(part.data(), part.size() * sizeof(float), gathered.data());
    for (int r = 0; r < ranks; ++r)
      for (int64_t i = 0; i < rows; ++i)
        std::copy_n(gathered.data() + (r * rows + i) * share, share,
                    logits.data() + i * vocab + r * share);
    return logits;
  }
  // DP_EP: this rank's sequences; their logits (then their taps, when a draft head wants them) go
  // to rank 0, which puts them in batch order.
  std::vector<BatchSequence> mine;
  int64_t my_tokens = 0;
  for (size_t i = 0; i < batch.size(); ++i)
    if (dp_rank[i] == plan_.rank) {
      mine.push_back(batch[i]);
      my_tokens += static_cast<int64_t>(batch[i].tokens.size());
    }
  std::vector<float> part = run_layers(mine);
  const int64_t tap_width = static_cast<int64_t>(tap_layers_.size()) * config_.hidden_size;
  if (tap_width > 0 && my_tokens > 0)  // run_layers leaves taps_ alone when it has no rows
    part.insert(part.end(), taps_.begin(), taps_.begin() + my_tokens * tap_width);
  const int ranks = comm_->size();
  const uint64_t floats = part.size();
  std::vector<uint64_t> counts(ranks);
  comm_->allgather(&floats, sizeof floats, counts.data());
  std::vector<size_t> send_bytes(ranks, 0), recv_bytes(ranks, 0);
  send_bytes[0] = floats * sizeof(float);
  size_t received = 0;
  if (plan_.rank == 0)
    for (int r = 0; r < ranks; ++r) received += recv_bytes[r] = counts[r] * sizeof(float);
  std::vector<float> all(received / sizeof(float));
  comm_->alltoallv(part.data(), send_bytes.data(), all.data(), recv_bytes.data());
  if (plan_.rank != 0) return {};
  const auto logit_rows = [&](size_t i) {
    return batch[i].which == LogitsFor::kLastToken ? 1
                                                   : static_cast<int64_t>(batch[i].tokens.size());
  };
  // Each rank's block: its logit rows, then its token rows of taps, both in batch order.
  std::vector<int64_t> logit_floats(ranks, 0);
  for (size_t i = 0; i < batch.size(); ++i) logit_floats[dp_rank[i]] += logit_rows(i) * vocab;
  std::vector<const float*> next(ranks), next_tap(ranks);
  size_t offset = 0;
  for (int r = 0; r < ranks; ++r) {
    next[r] = all.data() + offset;
    next_tap[r] = next[r] + logit_floats[r];
    offset += counts[r];
  }
  std::vector<float> logits;
  logits.reserve(all.size());
  if (tap_width > 0) taps_.clear();
  for (size_t i = 0; i < batch.size(); ++i) {
    const int64_t rows = logit_rows(i);
    const float*& src = next[dp_rank[i]];
    logits.insert(logits.end(), src, src + rows * vocab);
    src += rows * vocab;
    if (tap_width > 0) {
      const float*& tap = next_tap[dp_rank[i]];
      const int64_t n = static_cast<int64_t>(batch[i].tokens.size()) * tap_width;
      taps_.insert(taps_.end(), tap, tap + n);
      tap += n;
    }
  }
  return logits;
}

void check_same_model_on_every_rank(const Communicator& comm, const TensorStore& store,
                                    const ParallelRequest& request) {
  struct Digest {
    uint64_t build, config, tensors, layout;
  } mine{};
  mine.build = fnv1a(kFnvBasis, program_build_id());
  std::ifstream config(store.dir() + "/config.json", std::ios::binary);
  std::stringstream text;
  text << config.rdbuf();
  mine.config = fnv1a(kFnvBasis, text.str());
  std::vector<std::string> names = store.names();
  std::sort(names.begin(), names.end());
  uint64_t h = kFnvBasis;
  for (const std::string& name : names) {
    const TensorInfo& info = *store.at(name).info;
    h = fnv1a(h, name);
    h = fnv1a(h, &info.dtype, sizeof info.dtype);
    h = fnv1a(h, info.shape.data(), info.shape.size() * sizeof(int64_t));
  }
  mine.tensors = h;
  const int32_t flags[3] = {request.tensor_parallel, request.data_parallel,
                            request.expert_parallel ? 1 : 0};
  mine.layout = fnv1a(kFnvBasis, flags, sizeof flags);
  std::vector<Digest> all(comm.size());
  comm.allgather(&mine, sizeof mine, all.data());
  auto differing = [&](uint64_t Digest::*field, std::string_view what) {
    std::string ranks;
    for (int r = 1; r < comm.size(); ++r)
      if (all[r].*field != all[0].*field) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    if (!ranks.empty())
      fail(
          "rank(s) {} differ from rank 0 in {}; every rank must run the same minimax binary on "
          "the same checkpoint with the same parallel flags ({} here)",
          ranks, what, store.dir());
  };
  differing(&Digest::build, "the minimax binary (build ID)");
  differing(&Digest::config, "the checkpoint's config.json");
  differing(&Digest::tensors, "the checkpoint's tensor table (names, dtypes, shapes)");
  differing(&Digest::layout, "the parallel flags");
}

}  // namespace minimax
