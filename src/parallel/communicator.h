// The collective operations the model needs when it is split over processes. A null
// Communicator (or one of size 1) means a single process; the MPI / NCCL implementations and the
// ParallelMode selector are to join it here (src/parallel), against this same interface.
#pragma once

#include <cstddef>

namespace minimax {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: data[i] ← Σ over ranks of data[i].
  virtual void allreduce_sum(float* data, size_t count) const = 0;
};

}  // namespace minimax
