// What rank 0 sends the other ranks of a parallel group, and the shared state behind it (internal
// to src/model). Every message is a fixed header broadcast from rank 0, then its payload.
#pragma once

#include <cstdint>
#include <mutex>

#include "model/model.h"

namespace minimax {

enum class RankCommand : uint32_t { kStep = 1, kNewPool = 2, kFreePool = 3, kStop = 4 };

struct RankHeader {
  uint32_t command = 0;
  uint32_t count = 0;          // kStep: sequences
  uint64_t payload_bytes = 0;  // broadcast next when not zero
  int64_t args[4] = {};        // kNewPool: id, blocks, block size, dtype; kFreePool: id
};

struct Model::Link {
  const Communicator* comm = nullptr;  // null in a single process
  std::mutex mutex;                    // the step lock (model.h)
  bool open = true;                    // false once rank 0's model has told the others to stop
  int64_t next_pool_id = 0;
  // Rank 0 only, under `mutex`: the header, then the payload when there is one.
  void send(const RankHeader& header, const void* payload = nullptr);
};

// A digest of what must be the same on every rank: this binary's build ID, the checkpoint's
// config.json and its tensor table (names, dtypes, shapes). Rank 0's is compared with every
// other rank's before any weight is read; Error naming the ranks that differ.
void check_same_model_on_every_rank(const Communicator& comm, const TensorStore& store,
                                    const ParallelRequest& request);

}  // namespace minimax
