// Backend memory (buffers, the step workspace), the host backend, and the one table of registered
// backends.
#include "kernels/backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "base/error.h"
#include "kernels/cpu/cpu_backend.h"
#ifdef MINIMAX_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif
#include "kernels/reference/reference_ops.h"

namespace minimax {

std::string_view kv_dtype_name(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF32:
      return "f32";
    case KvDtype::kBF16:
      return "bf16";
    case KvDtype::kFp8E4m3:
      return "fp8_e4m3";
  }
  return "unknown";
}

int64_t kv_dtype_bytes(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF32:
      return 4;
    case KvDtype::kBF16:
      return 2;
    case KvDtype::kFp8E4m3:
      return 1;
  }
  return 4;
}

// ---- Buffers and the workspace -----------------------------------------------------------------

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (owner_ != nullptr && data_ != nullptr) owner_->release(data_, bytes_);
  owner_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

namespace {
constexpr size_t kAlign = 64;
constexpr size_t kMinBlock = size_t{1} << 20;
size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

void Workspace::begin_step() {
  // A step that needed more than one block gets one block of their sum next time, so that a
  // steady stream of steps of the same shape allocates nothing.
  if (blocks_.size() > 1) {
    const size_t total = capacity();
    blocks_.clear();
    blocks_.push_back(backend_.allocate(total, "step workspace"));
  }
  current_ = 0;
  used_ = 0;
}

void* Workspace::take_bytes(size_t bytes) {
  const size_t need = round_up(std::max<size_t>(bytes, 1));
  while (current_ < blocks_.size() && used_ + need > blocks_[current_].bytes()) {
    ++current_;  // a later block (left by an earlier scope) may have room
    used_ = 0;
  }
  if (current_ == blocks_.size())
    blocks_.push_back(backend_.allocate(std::max(need, kMinBlock), "step workspace"));
  void* p = static_cast<char*>(blocks_[current_].data()) + used_;
  used_ += need;
  return p;
}

void Workspace::rewind(Mark mark) {
  current_ = mark.block;
  used_ = mark.used;
}

size_t Workspace::capacity() const {
  size_t total = 0;
  for (const DeviceBuffer& b : blocks_) total += b.bytes();
  return total;
}

void Workspace::release_all() {
  blocks_.clear();
  current_ = 0;
  used_ = 0;
}

// ---- Backends --------------------------------------------------------------------------------

Backend::Backend(std::string name, KernelOps ops)
    : name_(std::move(name)), ops_(ops), workspace_(*this) {
  // Only HostBackend completes a table from the reference; any other backend runs its own ops on
  // its own memory, so a gap is a build error of that backend, reported before anything runs.
  const std::string_view missing = first_missing_op(ops_);
  if (!missing.empty()) fail("backend '{}': op '{}' is not provided", name_, missing);
  ops_.name = name_.c_str();
}

Backend::~Backend() = default;

HostBackend::HostBackend(const KernelOps& ops)
    : Backend(ops.name != nullptr && *ops.name != '\0' ? ops.name : "host",
              complete_with_reference(ops)) {}

HostBackend::~HostBackend() { release_workspace(); }

DeviceBuffer HostBackend::allocate(size_t bytes, std::string_view what) {
  const size_t size = round_up(std::max<size_t>(bytes, 1));
  void* p = std::aligned_alloc(kAlign, size);
  if (p == nullptr) fail("{}: cannot allocate {} bytes of host memory", what, bytes);
  std::memset(p, 0, size);
  return DeviceBuffer(this, p, bytes);
}

void HostBackend::copy_to_backend(void* dst, const void* host_src, size_t bytes) {
  if (dst != host_src) std::memcpy(dst, host_src, bytes);
}

void HostBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  if (host_dst != src) std::memcpy(host_dst, src, bytes);
}

void HostBackend::release(void* data, size_t) { std::free(data); }

// ---- Op tables ---------------------------------------------------------------------------------

const KernelOps& reference_ops() {
  static const KernelOps ops = [] {
    KernelOps t;
    t.name = "reference";
    t.add = reference::add;
    t.copy = reference::copy;
    t.gather_rows = reference::gather_rows;
    t.store_kv = reference::store_kv;
    t.linear = reference::linear;
    t.embedding = reference::embedding;
    t.rms_norm = reference::rms_norm;
    t.sum_squares = reference::sum_squares;
    t.rms_norm_from_sums = reference::rms_norm_from_sums;
    t.rope = reference::rope;
    t.attention = reference::attention;
    t.select_blocks = reference::select_blocks;
    t.route = reference::route;
    t.glu = reference::glu;
    t.quantize_activations = reference::quantize_activations;
    t.moe = reference::moe;
    return t;
  }();
  return ops;
}

namespace {

// Calls fn(name, slot, reference slot) for every entry of the table, in one place so that a new op
// cannot be forgotten by the completion or the completeness check.
template <class Fn>
void for_each_op(KernelOps& t, const KernelOps& ref, Fn&& fn) {
  fn("add", t.add, ref.add);
  fn("copy", t.copy, ref.copy);
  fn("gather_rows", t.gather_rows, ref.gather_rows);
  fn("store_kv", t.store_kv, ref.store_kv);
  fn("linear", t.linear, ref.linear);
  fn("embedding", t.embedding, ref.embedding);
  fn("rms_norm", t.rms_norm, ref.rms_norm);
  fn("sum_squares", t.sum_squares, ref.sum_squares);
  fn("rms_norm_from_sums", t.rms_norm_from_sums, ref.rms_norm_from_sums);
  fn("rope", t.rope, ref.rope);
  fn("attention", t.attention, ref.attention);
  fn("select_blocks", t.select_blocks, ref.select_blocks);
  fn("route", t.route, ref.route);
  fn("glu", t.glu, ref.glu);
  fn("quantize_activations", t.quantize_activations, ref.quantize_activations);
  fn("moe", t.moe, ref.moe);
}

}  // namespace

KernelOps complete_with_reference(const KernelOps& partial) {
  KernelOps t = partial;
  for_each_op(t, reference_ops(), [&t](std::string_view name, auto& slot, const auto& fallback) {
    if (slot != nullptr) return;
    slot = fallback;
    t.from_reference.push_back(name);
  });
  if (t.name == nullptr || *t.name == '\0') t.name = "cpu";
  return t;
}

std::string_view first_missing_op(const KernelOps& ops) {
  KernelOps t = ops;
  std::string_view missing;
  for_each_op(t, reference_ops(), [&](std::string_view name, auto& slot, const auto&) {
    if (slot == nullptr && missing.empty()) missing = name;
  });
  return missing;
}

const KernelOps& kernel_ops(BackendKind kind) {
  if (kind == BackendKind::kReference) return reference_ops();
  static const KernelOps cpu = complete_with_reference(cpu_kernel_ops(CpuKernelConfig{}));
  return cpu;
}

namespace {

constexpr BackendEntry kBackends[] = {
    {BackendKind::kReference, "reference", "plain float64/float32 ops, the meaning of every op",
     [](const BackendOptions&) { return create_host_backend(reference_ops()); }},
    {BackendKind::kCpu, "cpu", "AVX-512 / AVX2 SIMD ops and threads, host memory",
     [](const BackendOptions& options) {
       return create_host_backend(cpu_kernel_ops(options.cpu));
     }},
#ifdef MINIMAX_HAVE_CUDA
    {BackendKind::kCuda, "cuda", "NVIDIA Hopper GPU (sm_90a): f32, bf16 and FP8 weights",
     create_cuda_backend},
#endif
};

}  // namespace

std::span<const BackendEntry> registered_backends() { return kBackends; }

std::string_view backend_name(BackendKind kind) {
  for (const BackendEntry& e : kBackends)
    if (e.kind == kind) return e.name;
  return kind == BackendKind::kCuda ? "cuda" : "unknown";
}

BackendKind parse_backend_kind(std::string_view text, std::string_view what) {
  std::string known;
  for (const BackendEntry& e : kBackends) {
    if (e.name == text) return e.kind;
    known += (known.empty() ? "" : " or ") + std::string(e.name);
  }
  if (text == "cuda")
    fail("{}: cuda: not built into this binary (it has {}); it is built where CMake finds nvcc",
         what, known);
  fail("{}: unknown kernel backend '{}' (expected {})", what, text, known);
}

std::unique_ptr<Backend> create_backend(BackendKind kind, const BackendOptions& options) {
  for (const BackendEntry& e : kBackends)
    if (e.kind == kind) return e.create(options);
  fail("backend {}: not registered", static_cast<int>(kind));
}

std::unique_ptr<Backend> create_host_backend(const KernelOps& ops) {
  return std::make_unique<HostBackend>(ops);
}

}  // namespace minimax
