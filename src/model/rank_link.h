// What rank 0 sends the other ranks of a parallel group, and the shared state behind it (internal
// to src/model). Every message is a fixed header broadcast from rank 0, then its payload.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

#include "model/model.h"

namespace minimax {

// kHeartbeat says nothing but "rank 0 is there": sent while rank 0 is idle, so that a follower's
// wait for the next message has a deadline too (Communicator::set_wait_timeout).
enum class RankCommand : uint32_t {
  kStep = 1,
  kNewPool = 2,
  kFreePool = 3,
  kStop = 4,
  kHeartbeat = 5,
  kSetTaps = 6  // payload: the tapped layers (int32), for DP_EP ranks to collect their sequences'
};

struct RankHeader {
  uint32_t command = 0;
  uint32_t count = 0;          // kStep: sequences
  uint64_t payload_bytes = 0;  // broadcast next when not zero
  int64_t args[4] = {};        // kNewPool: id, blocks, block size, dtype; kFreePool: id
                               // kSetTaps: count of layers
};

struct Model::Link {
  const Communicator* comm = nullptr;  // null in a single process
  std::mutex mutex;                    // the step lock (model.h)
  bool open = true;                    // false once rank 0's model has told the others to stop
  int64_t next_pool_id = 0;
  std::chrono::steady_clock::time_point last_sent;  // under `mutex`
  // Rank 0 only, under `mutex`: the header, then the payload when there is one.
  void send(const RankHeader& header, const void* payload = nullptr);
  // Rank 0 only: a kHeartbeat whenever nothing was sent for `period`, until the link is closed or
  // `heartbeat` is reset (which joins it).
  void start_heartbeat(std::chrono::nanoseconds period);
  std::jthread heartbeat;
};

// A digest of what must be the same on every rank: this binary's build ID, the checkpoint's
// config.json and its tensor table (names, dtypes, shapes). Rank 0's is compared with every
// other rank's before any weight is read; Error naming the ranks that differ.
void check_same_model_on_every_rank(const Communicator& comm, const TensorStore& store,
                                    const ParallelRequest& request);

}  // namespace minimax
