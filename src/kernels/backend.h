// A kernel backend: the ops of kernels/ops.h together with the memory they run on. The backend owns
// its buffers (host memory for the reference and cpu backends, device memory for an accelerator's),
// a per-step workspace reused across steps, and moves data between the host and its memory. The
// model issues ops on backend memory and never touches activations itself, so the same forward pass
// runs on any backend.
//
// Backends are registered explicitly in one table (backend.cc); nothing is found by probing. Only a
// host backend may leave ops null and have them filled from the reference: a device backend cannot
// run a host function on its memory, so it must provide every op (Error otherwise).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/cpu_config.h"
#include "kernels/ops.h"

namespace minimax {

class Backend;

// Memory of one backend, released to it when destroyed. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend* owner, void* data, size_t bytes)
      : owner_(owner), data_(data), bytes_(bytes) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  void reset();

 private:
  Backend* owner_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Scratch for one forward step in backend memory: take() hands out 64-byte aligned pieces that stay
// valid until the next begin_step() or until a rewind() to a mark taken before them (blocks of the
// forward pass take their buffers in a WorkspaceScope, so each layer reuses the same memory). The
// first steps grow it; a step that needed several blocks leaves one block of their sum for the
// next, so steps of a shape seen before allocate nothing.
class Workspace {
 public:
  explicit Workspace(Backend& backend) : backend_(backend) {}
  void begin_step();
  template <class T>
  T* take(int64_t count) {
    return static_cast<T*>(take_bytes(static_cast<size_t>(count) * sizeof(T)));
  }
  void* take_bytes(size_t bytes);

  struct Mark {
    size_t block = 0, used = 0;
  };
  Mark mark() const { return {current_, used_}; }
  void rewind(Mark mark);  // everything taken after `mark` is free again

  size_t capacity() const;  // bytes held over all blocks
  void release_all();       // gives every block back (the backend is going away)

 private:
  Backend& backend_;
  std::vector<DeviceBuffer> blocks_;
  size_t current_ = 0;  // the block being filled
  size_t used_ = 0;     // bytes taken from it
};

// Takes a mark on construction and rewinds to it on destruction.
class WorkspaceScope {
 public:
  explicit WorkspaceScope(Workspace& ws) : ws_(ws), mark_(ws.mark()) {}
  ~WorkspaceScope() { ws_.rewind(mark_); }
  WorkspaceScope(const WorkspaceScope&) = delete;
  WorkspaceScope& operator=(const WorkspaceScope&) = delete;

 private:
  Workspace& ws_;
  Workspace::Mark mark_;
};

class Backend {
 public:
  // Error naming the first null entry of `ops`: a backend provides every op.
  Backend(std::string name, KernelOps ops);
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  std::string_view name() const { return name_; }
  const KernelOps& ops() const { return ops_; }
  // True when the backend's memory is the process's own (pointers may be read by the host).
  virtual bool host_memory() const = 0;

  // `bytes` of zeroed backend memory (Error naming `what` when it cannot be had).
  virtual DeviceBuffer allocate(size_t bytes, std::string_view what) = 0;
  virtual void copy_to_backend(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  // Waits for the backend's queued work (a no-op on the host).
  virtual void synchronize() {}

  // Copies host values into this step's workspace and returns the backend pointer.
  template <class T>
  T* upload(std::span<const T> host) {
    T* dst = workspace_.take<T>(static_cast<int64_t>(host.size()));
    if (!host.empty()) copy_to_backend(dst, host.data(), host.size_bytes());
    return dst;
  }
  Workspace& workspace() { return workspace_; }

 protected:
  // A derived backend's destructor must call this: the workspace's blocks go back through
  // release(), which the base destructor can no longer reach.
  void release_workspace() { workspace_.release_all(); }
  friend class DeviceBuffer;
  virtual void release(void* data, size_t bytes) = 0;

 private:
  std::string name_;
  KernelOps ops_;
  Workspace workspace_;
};

// The reference and cpu backends: ops on process memory, null ops filled from the reference.
class HostBackend final : public Backend {
 public:
  explicit HostBackend(const KernelOps& ops);
  ~HostBackend() override;
  bool host_memory() const override { return true; }
  DeviceBuffer allocate(size_t bytes, std::string_view what) override;
  void copy_to_backend(void* dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;

 protected:
  void release(void* data, size_t bytes) override;
};

// kCuda is registered only in builds with the CUDA backend (nvcc found: MINIMAX_HAVE_CUDA).
enum class BackendKind : uint8_t { kReference, kCpu, kCuda };

std::string_view backend_name(BackendKind kind);  // "reference" / "cpu" / "cuda"
// A registered backend's name; Error naming `what` (e.g. "--backend") and listing them otherwise.
BackendKind parse_backend_kind(std::string_view text, std::string_view what);

// What a backend is configured with when it is created (set by the commands' flags; the library
// reads no environment variable).
struct BackendOptions {
  CpuKernelConfig cpu;  // the CPU backend's ISA level, AMX use and activation precision
  // A device backend runs the routed experts (the moe op) on the CPU kernels, in host memory
  // (--cpu-moe: the hidden states cross once per MoE layer); host backends ignore it.
  bool cpu_moe = false;
};

struct BackendEntry {
  BackendKind kind;
  std::string_view name;
  std::string_view description;
  std::unique_ptr<Backend> (*create)(const BackendOptions& options);
};
// Every backend this build has, in one explicit table.
std::span<const BackendEntry> registered_backends();
std::unique_ptr<Backend> create_backend(BackendKind kind, const BackendOptions& options = {});
// A host backend running `ops` (null entries from the reference): tests and experiments.
std::unique_ptr<Backend> create_host_backend(const KernelOps& ops);

// The plain, obviously-correct ops of kernels/reference/.
const KernelOps& reference_ops();
// The complete op table of a registered host backend (for kCpu, the SIMD ops with null entries
// from the reference). Built once.
const KernelOps& kernel_ops(BackendKind kind);
// `partial` with its null entries filled from the reference (name kept). Host backends only.
KernelOps complete_with_reference(const KernelOps& partial);
// The name of the first null entry of `ops`, or empty when it is complete.
std::string_view first_missing_op(const KernelOps& ops);

}  // namespace minimax
