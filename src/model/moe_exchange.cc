// DP_EP's routed experts: dispatch each token to the ranks holding its chosen experts, run them
// there, and combine the results at the token's own rank (two all-to-all exchanges per MoE layer).
// A token goes once to each rank that holds at least one of its experts, with its whole routing
// row; the receiver keeps the slots of its own experts (MoeArgs' expert range) and returns one
// partial sum per token, which the sender adds up in rank order. Runs on host memory: the
// exchange is MPI's (device backends bring their own collectives).
#include <cstring>
#include <vector>

#include "base/error.h"
#include "model/sublayers.h"

namespace minimax {
namespace {

// The rank holding expert e when the experts are split into equal contiguous runs.
int owner_of(int e, int num_experts, int ranks) { return e / (num_experts / ranks); }

}  // namespace

void moe_exchange(const ForwardContext& ctx, const MoeArgs& args) {
  const Communicator& comm = *ctx.comm;
  const int ranks = comm.size(), me = comm.rank(), k = args.top_k;
  const int64_t T = args.T, H = args.hidden;
  // One dispatched token: its input row, then its k expert ids and k weights.
  const size_t record = static_cast<size_t>(H) * 4 + static_cast<size_t>(k) * 8;

  // Which ranks each token goes to, in rank order; tokens for rank d in token order.
  std::vector<std::vector<int32_t>> to(ranks);
  std::vector<uint8_t> wanted(ranks);
  for (int64_t t = 0; t < T; ++t) {
    std::fill(wanted.begin(), wanted.end(), 0);
    for (int j = 0; j < k; ++j)
      wanted[owner_of(args.expert_ids[t * k + j], args.num_experts, ranks)] = 1;
    for (int d = 0; d < ranks; ++d)
      if (wanted[d]) to[d].push_back(static_cast<int32_t>(t));
  }
  std::vector<uint64_t> counts(ranks), all_counts(size_t(ranks) * ranks);
  for (int d = 0; d < ranks; ++d) counts[d] = to[d].size();
  comm.allgather(counts.data(), ranks * sizeof(uint64_t), all_counts.data());
  auto sent_by = [&](int s, int d) { return all_counts[size_t(s) * ranks + d]; };

  // Dispatch.
  std::vector<size_t> send_bytes(ranks), recv_bytes(ranks);
  size_t send_total = 0, received = 0;
  for (int r = 0; r < ranks; ++r) {
    send_bytes[r] = counts[r] * record;
    recv_bytes[r] = sent_by(r, me) * record;
    send_total += send_bytes[r];
    received += sent_by(r, me);
  }
  std::vector<uint8_t> send(send_total), recv(received * record);
  uint8_t* p = send.data();
  for (int d = 0; d < ranks; ++d)
    for (int32_t t : to[d]) {
      std::memcpy(p, args.x + t * H, H * 4);
      std::memcpy(p + H * 4, args.expert_ids + t * k, k * 4);
      std::memcpy(p + H * 4 + k * 4, args.expert_weights + t * k, k * 4);
      p += record;
    }
  comm.alltoallv(send.data(), send_bytes.data(), recv.data(), recv_bytes.data());

  // The received tokens through this rank's experts.
  const int64_t M = static_cast<int64_t>(received);
  WorkspaceScope scope(ctx.ws);
  float* x = ctx.ws.take<float>(M * H);
  int32_t* ids = ctx.ws.take<int32_t>(M * k);
  float* weights = ctx.ws.take<float>(M * k);
  float* y = ctx.ws.take<float>(M * H);
  for (int64_t i = 0; i < M; ++i) {
    const uint8_t* r = recv.data() + i * record;
    std::memcpy(x + i * H, r, H * 4);
    std::memcpy(ids + i * k, r + H * 4, k * 4);
    std::memcpy(weights + i * k, r + H * 4 + k * 4, k * 4);
  }
  if (M > 0) {
    MoeArgs local = args;
    local.x = x;
    local.T = M;
    local.expert_ids = ids;
    local.expert_weights = weights;
    local.y = y;
    ctx.ops.moe(local, ctx.pool);
  }

  // Combine: the partial sums go back the way their tokens came.
  for (int r = 0; r < ranks; ++r) {
    send_bytes[r] = sent_by(r, me) * H * 4;
    recv_bytes[r] = counts[r] * H * 4;
  }
  std::vector<float> back(static_cast<size_t>(T > 0 ? send_total / record : 0) * H);
  comm.alltoallv(y, send_bytes.data(), back.data(), recv_bytes.data());
  std::fill(args.y, args.y + T * H, 0.0f);
  const float* row = back.data();
  for (int d = 0; d < ranks; ++d)
    for (int32_t t : to[d]) {
      float* out = args.y + t * H;
      for (int64_t c = 0; c < H; ++c) out[c] += row[c];
      row += H;
    }
}

}  // namespace minimax
