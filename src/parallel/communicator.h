// The collective operations the model needs when it is split over processes (ranks). A null
// Communicator, or one of size 1, means a single process. Every rank of a group must make the same
// calls in the same order; a call returns once this rank's part is done. The MPI implementation is
// mpi_communicator.h; a device backend brings its own (NCCL) against this same interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace minimax {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: data[i] ← Σ over ranks of data[i]. Every rank receives the same bits.
  virtual void allreduce_sum(float* data, size_t count) const = 0;
  // `bytes` of `root`'s buffer copied into every other rank's.
  virtual void broadcast(void* data, size_t bytes, int root) const = 0;
  // The same, for a rank that may wait a long time (a worker between requests): it sleeps between
  // polls instead of spinning a core. Every rank, the root included, must use this call for the
  // broadcast (it does not match a plain broadcast).
  virtual void broadcast_waiting(void* data, size_t bytes, int root) const {
    broadcast(data, bytes, root);
  }
  // recv[r · bytes, (r + 1) · bytes) ← rank r's `send` (`bytes` from every rank).
  virtual void allgather(const void* send, size_t bytes, void* recv) const = 0;
  // Personalised exchange: send_bytes[d] bytes starting at send + Σ_{d' < d} send_bytes[d'] go to
  // rank d, and recv_bytes[s] bytes from rank s land at recv + Σ_{s' < s} recv_bytes[s'] (the
  // caller learns recv_bytes first, e.g. with an allgather of the counts).
  virtual void alltoallv(const void* send, const size_t* send_bytes, void* recv,
                         const size_t* recv_bytes) const = 0;
  // Ends every rank of the job now (after a failure that leaves the ranks out of step), printing
  // `why`. Does not return.
  [[noreturn]] virtual void abort(std::string_view why) const = 0;
  // From now on, a wait of more than `seconds` in one of the calls above (broadcast_waiting
  // included) ends the job with a message naming the ranks waited for and their hosts: a link or a
  // host that went silent (parallel/wait_deadline.h). 0, the start: wait forever, since ranks load
  // their weights at their own pace. The model sets it once every rank has loaded.
  virtual void set_wait_timeout(double seconds) const {}
  // Bytes this rank has sent in the calls above, counted as the bandwidth-optimal algorithm sends
  // them, exact at 2 ranks (docs/parallel.md, "Bytes per token"): allreduce 2(N-1)/N of the
  // buffer, broadcast the buffer from the root, allgather (N-1) times this rank's part, alltoallv
  // every byte addressed to another rank.
  virtual uint64_t sent_bytes() const { return 0; }
  // The same count for what this rank receives. With 2 ranks, one rank's received bytes are the
  // other's sent bytes, so rank 0 knows both.
  virtual uint64_t received_bytes() const { return 0; }
  // Seconds this rank has spent inside the calls above (waiting included): the communication
  // time a benchmark reports.
  virtual double busy_seconds() const { return 0; }
};

}  // namespace minimax
