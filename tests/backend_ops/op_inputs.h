// A case's inputs and how to run its op on a backend: the inputs are generated once from the case
// (the same on every backend), copied into the backend's memory, the op of backend.ops() runs
// there, and its outputs come back to the host to be compared.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "kernels/backend.h"
#include "op_case.h"
#include "random_weights.h"

namespace minimax {

// What one op call gave, on the host: its float outputs, and its integer outputs (expert ids,
// block ids) where it has them.
struct OpOutputs {
  std::vector<float> values;
  std::vector<int32_t> ids;
};

class OpInputs {
 public:
  virtual ~OpInputs() = default;
  virtual OpOutputs run(Backend& backend, ThreadPool* pool) const = 0;
};

// The inputs of `c`, from a seed derived from its name.
std::unique_ptr<OpInputs> make_op_inputs(const OpCase& c);

// The factories of op_tests_*.cc, by op family (null for an op of another family).
std::unique_ptr<OpInputs> make_elementwise_inputs(const OpCase& c, std::mt19937& rng);
std::unique_ptr<OpInputs> make_matrix_inputs(const OpCase& c, std::mt19937& rng);
std::unique_ptr<OpInputs> make_attention_inputs(const OpCase& c, std::mt19937& rng);

// Copies host values into a backend's memory and back; holds what it allocated until destroyed.
class OnBackend {
 public:
  explicit OnBackend(Backend& backend) : backend_(backend) {}

  template <class T>
  T* put(const std::vector<T>& host) {
    T* p = static_cast<T*>(allocate(host.size() * sizeof(T)));
    if (!host.empty()) backend_.copy_to_backend(p, host.data(), host.size() * sizeof(T));
    return p;
  }
  // `n` NaNs: an output the op leaves unwritten shows.
  float* outputs(int64_t n) { return put(std::vector<float>(n, NAN)); }
  template <class T>
  std::vector<T> get(const T* p, int64_t n) {
    std::vector<T> host(n);
    backend_.synchronize();
    if (n > 0) backend_.copy_to_host(host.data(), p, n * sizeof(T));
    return host;
  }
  // The view of `w` with its data and scales copied to the backend.
  WeightView put(const StoredWeight& w);

  const KernelOps& ops() const { return backend_.ops(); }

 private:
  void* allocate(size_t bytes);
  Backend& backend_;
  std::vector<DeviceBuffer> held_;
};

// Random inputs shared by the op families.
std::vector<float> normal_floats(int64_t n, std::mt19937& rng, float sd = 1.0f);
// Slot s of a cache of `slots` slots lives at row table[s / page_size]·page_size + s % page_size:
// the pages in a shuffled order, with one spare page so the rows are not a permutation of [0,
// slots). Empty when page_size is 0 (row s).
std::vector<int32_t> shuffled_page_table(int64_t slots, int page_size, std::mt19937& rng);
// Storage rows a cache of `slots` slots needs with that page table.
int64_t cache_rows(int64_t slots, int page_size);
// `rows` rows of `width` random values, stored as `dtype` at the rows the page table gives (the
// other rows hold zeros).
std::vector<uint8_t> random_cache(int64_t slots, int64_t width, KvDtype dtype,
                                  const std::vector<int32_t>& page_table, int page_size,
                                  std::mt19937& rng, float sd);

}  // namespace minimax
