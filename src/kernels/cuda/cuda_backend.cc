// The CUDA backend: device memory through the CUDA runtime, weight views copied to the GPU the
// first time an op reads them (the model hands every backend views of the checkpoint mapping), and
// the op table, each op checking its arguments as the reference does, queuing its kernels on the
// default stream and checking the launch. Host-side work an op needs (the MoE plan, token ids to
// check, the longest position) reads its inputs back first: simple and synchronous, a first
// version to be measured on a GPU (docs/cuda.md).
#include "kernels/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/reference/moe_plan.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

void check_cuda(cudaError_t e, std::string_view what) {
  if (e != cudaSuccess) fail("cuda: {}: {}", what, cudaGetErrorString(e));
}

// Device memory the backend keeps for itself (weights, MoE scratch), freed with it.
struct DeviceMemory {
  void* data = nullptr;
  size_t bytes = 0;
  DeviceMemory() = default;
  DeviceMemory(size_t n, std::string_view what) : bytes(n) {
    check_cuda(cudaMalloc(&data, std::max<size_t>(n, 1)), fmt::format("{} ({} bytes)", what, n));
  }
  DeviceMemory(DeviceMemory&& o) noexcept
      : data(std::exchange(o.data, nullptr)), bytes(std::exchange(o.bytes, 0)) {}
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    std::swap(data, o.data);
    std::swap(bytes, o.bytes);
    return *this;
  }
  ~DeviceMemory() {
    if (data != nullptr) cudaFree(data);
  }
};

// Bytes a view's data and scales span in the host mapping (the last row counts its own bytes, not
// its stride, so nothing past the tensor is read).
size_t data_span(const WeightView& w) {
  return static_cast<size_t>((w.rows - 1) * weight_data_stride(w) + weight_row_bytes(w));
}
size_t scale_span(const WeightView& w) {
  if (!is_quantized_format(w.format)) return 0;
  if (w.format == WeightFormat::kFp8Channel) return static_cast<size_t>(w.rows) * 4;
  WeightView dense = w;
  dense.scale_stride = 0;
  const int64_t scale_rows =
      w.format == WeightFormat::kFp8Block ? (w.rows + w.block_rows - 1) / w.block_rows : w.rows;
  return static_cast<size_t>((scale_rows - 1) * weight_scale_stride(w) +
                             weight_scale_stride(dense));
}

class CudaState {
 public:
  explicit CudaState(const BackendOptions& options)
      : cpu_moe(options.cpu_moe), cpu(complete_with_reference(cpu_kernel_ops(options.cpu))) {}

  const bool cpu_moe;   // --cpu-moe: the moe op on the CPU kernels
  const KernelOps cpu;  // the CPU backend's ops, for it

  // The view with its data and scales in device memory, copied on first sight (keyed by the host
  // address: the checkpoint mapping outlives the model, so an address names one tensor).
  cuda::DeviceWeight on_device(const WeightView& w, std::string_view op) {
    if (!cuda::linear_supports(w.format))
      fail(
          "cuda {}: {} weights are not supported by the CUDA backend yet (f32, bf16, fp8-block, "
          "fp8-channel); use --backend cpu",
          op, weight_format_name(w.format));
    cuda::DeviceWeight d;
    d.format = w.format;
    d.rows = w.rows;
    d.cols = w.cols;
    d.data = static_cast<const uint8_t*>(resident(w.data, data_span(w)));
    if (w.scales != nullptr)
      d.scales = static_cast<const float*>(resident(w.scales, scale_span(w)));
    d.data_stride = weight_data_stride(w);
    d.scale_stride_floats = weight_scale_stride(w) / 4;
    d.block_rows = w.block_rows;
    d.block_cols = w.block_cols;
    return d;
  }

  // A device buffer of at least `bytes` for scratch slot `slot`, grown as needed.
  void* scratch(int slot, size_t bytes) {
    if (scratch_.size() <= static_cast<size_t>(slot)) scratch_.resize(slot + 1);
    DeviceMemory& m = scratch_[slot];
    if (m.bytes < bytes) m = DeviceMemory(bytes * 5 / 4 + 256, "MoE scratch");
    return m.data;
  }

 private:
  const void* resident(const void* host, size_t bytes) {
    auto it = weights_.find(host);
    if (it != weights_.end() && it->second.bytes >= bytes) return it->second.data;
    DeviceMemory m(bytes, "weights");
    check_cuda(cudaMemcpy(m.data, host, bytes, cudaMemcpyHostToDevice), "copying weights");
    const void* data = m.data;
    weights_[host] = std::move(m);
    return data;
  }

  std::unordered_map<const void*, DeviceMemory> weights_;
  std::vector<DeviceMemory> scratch_;
};

void check_launch(std::string_view op) { check_cuda(cudaGetLastError(), op); }

template <class T>
std::vector<T> to_host(const T* device, int64_t count) {
  std::vector<T> host(static_cast<size_t>(std::max<int64_t>(count, 0)));
  if (!host.empty())
    check_cuda(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost),
               "reading back an op's input");
  return host;
}

void run_moe(CudaState& state, const MoeArgs& a) {
  const std::vector<int32_t> ids = to_host(a.expert_ids, a.T * a.top_k);
  const std::vector<float> weights = to_host(a.expert_weights, a.T * a.top_k);
  const MoePlan plan = plan_moe(ids.data(), weights.data(), a.T, a.top_k, a.num_experts,
                                a.expert_begin, a.expert_end);
  const int64_t H = a.hidden, I = a.inter, slots = a.T * a.top_k;
  auto* slot_out = static_cast<float*>(state.scratch(0, slots * H * sizeof(float)));
  check_cuda(cudaMemset(slot_out, 0, slots * H * sizeof(float)), "moe");
  for (const int e : plan.active) {
    const ExpertWeights& w = a.experts[e];
    if (w.gate.rows != I || w.gate.cols != H || w.up.rows != I || w.up.cols != H ||
        w.down.rows != H || w.down.cols != I)
      fail(
          "moe: expert {} weights are gate [{}, {}], up [{}, {}], down [{}, {}]; expected [{}, {}]",
          e, w.gate.rows, w.gate.cols, w.up.rows, w.up.cols, w.down.rows, w.down.cols, I, H);
    const int64_t n = plan.count(e), first = plan.offsets[e];
    auto* lists = static_cast<int32_t*>(state.scratch(1, 2 * n * sizeof(int32_t)));
    check_cuda(
        cudaMemcpy(lists, plan.tokens.data() + first, n * sizeof(int32_t), cudaMemcpyHostToDevice),
        "moe");
    check_cuda(cudaMemcpy(lists + n, plan.slots.data() + first, n * sizeof(int32_t),
                          cudaMemcpyHostToDevice),
               "moe");
    auto* xs = static_cast<float*>(state.scratch(2, n * H * sizeof(float)));
    auto* gate = static_cast<float*>(state.scratch(3, n * I * sizeof(float)));
    auto* up = static_cast<float*>(state.scratch(4, n * I * sizeof(float)));
    auto* down = static_cast<float*>(state.scratch(5, n * H * sizeof(float)));
    cuda::gather_rows(a.x, H, lists, n, xs, nullptr);
    if (a.bf16_activations) cuda::round_to_bf16(xs, n * H, nullptr);
    cuda::linear(state.on_device(w.gate, "moe"), xs, n, gate, nullptr);
    cuda::linear(state.on_device(w.up, "moe"), xs, n, up, nullptr);
    if (a.bf16_activations) {
      cuda::round_to_bf16(gate, n * I, nullptr);
      cuda::round_to_bf16(up, n * I, nullptr);
    }
    cuda::glu(gate, up, n * I, a.act, gate, nullptr);
    if (a.bf16_activations) cuda::round_to_bf16(gate, n * I, nullptr);
    cuda::quantize_activations(gate, n, I, a.down_input_quant, nullptr);
    cuda::linear(state.on_device(w.down, "moe"), gate, n, down, nullptr);
    if (a.bf16_activations) cuda::round_to_bf16(down, n * H, nullptr);
    cuda::scatter_rows(down, H, lists + n, n, slot_out, nullptr);
    check_launch("moe");
  }
  cuda::combine_slots(slot_out, a.expert_weights, a.T, a.top_k, H, a.y, nullptr);
}

// --cpu-moe: the hidden states and the router's choice to the host, the CPU backend's grouped MoE
// over the experts in the checkpoint mapping (any layout), the result back: one crossing each way
// per MoE layer.
void run_moe_on_cpu(const CudaState& state, const MoeArgs& a, ThreadPool* pool) {
  std::vector<float> x = to_host(a.x, a.T * a.hidden);
  std::vector<int32_t> ids = to_host(a.expert_ids, a.T * a.top_k);
  std::vector<float> weights = to_host(a.expert_weights, a.T * a.top_k);
  std::vector<float> y(static_cast<size_t>(a.T * a.hidden));
  MoeArgs host = a;
  host.x = x.data();
  host.expert_ids = ids.data();
  host.expert_weights = weights.data();
  host.y = y.data();
  state.cpu.moe(host, pool);
  if (!y.empty())
    check_cuda(cudaMemcpy(a.y, y.data(), y.size() * sizeof(float), cudaMemcpyHostToDevice),
               "moe (--cpu-moe)");
}

KernelOps cuda_ops(CudaState* state) {
  KernelOps t;
  t.name = "cuda";
  t.add = [](float* y, const float* x, int64_t n, ThreadPool*) {
    cuda::add(y, x, n, nullptr);
    check_launch("add");
  };
  t.copy = [](float* y, const float* x, int64_t n) {
    if (n > 0) check_cuda(cudaMemcpy(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice), "copy");
  };
  t.gather_rows = [](const float* x, int64_t width, const int32_t* rows, int64_t count,
                     float* out) {
    cuda::gather_rows(x, width, rows, count, out, nullptr);
    check_launch("gather_rows");
  };
  t.store_kv = [](const KvStoreArgs& a) {
    cuda::store_kv(a, nullptr);
    check_launch("store_kv");
  };
  t.linear = [state](const WeightView& w, const float* x, int64_t T, float* y, ThreadPool*) {
    cuda::linear(state->on_device(w, "linear"), x, T, y, nullptr);
    check_launch("linear");
  };
  t.embedding = [state](const WeightView& table, const int32_t* tokens, int64_t T, float* out) {
    const std::vector<int32_t> ids = to_host(tokens, T);
    for (int64_t t = 0; t < T; ++t)
      if (ids[t] < 0 || ids[t] >= table.rows)
        fail("embedding: token {} (position {} of the call) is outside the vocabulary [0, {})",
             ids[t], t, table.rows);
    cuda::embedding(state->on_device(table, "embedding"), tokens, T, out, nullptr);
    check_launch("embedding");
  };
  t.rms_norm = [](const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
                  bool add_one, float* out, ThreadPool*) {
    if (dim <= 0) fail("rms_norm: dim must be positive, got {}", dim);
    cuda::rms_norm(x, rows, dim, weight, eps, add_one, out, nullptr);
    check_launch("rms_norm");
  };
  t.sum_squares = [](const float* x, int64_t rows, int64_t dim, float* out) {
    cuda::sum_squares(x, rows, dim, out, nullptr);
    check_launch("sum_squares");
  };
  t.rms_norm_from_sums = [](const float* x, int64_t rows, int64_t dim, const float* sum_sq,
                            int64_t full_dim, const float* weight, float eps, bool add_one,
                            float* out) {
    if (full_dim <= 0) fail("rms_norm_from_sums: full_dim must be positive, got {}", full_dim);
    cuda::rms_norm_from_sums(x, rows, dim, sum_sq, full_dim, weight, eps, add_one, out, nullptr);
    check_launch("rms_norm_from_sums");
  };
  t.rope = [](float* x, int64_t T, const int32_t* positions, const RopeParams& p, ThreadPool*) {
    if (p.rotary_dim <= 0 || p.rotary_dim % 2 != 0 || p.rotary_dim > p.head_dim)
      fail("rope: rotary_dim {} must be even and within head_dim {}", p.rotary_dim, p.head_dim);
    cuda::rope(x, T, positions, p, nullptr);
    check_launch("rope");
  };
  t.attention = [](const AttentionArgs& a, ThreadPool*) {
    reference::check_attention_args(a);
    cuda::attention(a, nullptr);
    check_launch("attention");
  };
  t.select_blocks = [](const BlockSelectArgs& a, ThreadPool*) {
    reference::check_block_select_args(a);
    const std::vector<int32_t> positions = to_host(a.positions, a.T);
    const int64_t longest =
        positions.empty() ? 0 : *std::max_element(positions.begin(), positions.end());
    cuda::select_blocks(a, longest, nullptr);
    check_launch("select_blocks");
  };
  t.route = [](const RouterArgs& a) {
    reference::check_router_args(a);
    if (a.num_experts > 1024 || a.top_k > 64)
      fail("cuda route: {} experts, top-{}: the CUDA router takes at most 1024 and top-64",
           a.num_experts, a.top_k);
    cuda::route(a, nullptr);
    check_launch("route");
  };
  t.glu = [](const float* gate, const float* up, int64_t n, const GluParams& p, float* out) {
    cuda::glu(gate, up, n, p, out, nullptr);
    check_launch("glu");
  };
  t.quantize_activations = [](float* x, int64_t rows, int64_t cols, const ActQuant& q) {
    if (q.kind == ActQuantKind::kFp8Group && q.group <= 0)
      fail("activation quantization: group size {} must be positive", q.group);
    if (q.kind == ActQuantKind::kFp8FixedScale && !(q.fixed_scale > 0))
      fail("activation quantization: fixed scale {} must be positive", q.fixed_scale);
    cuda::quantize_activations(x, rows, cols, q, nullptr);
    check_launch("quantize_activations");
  };
  t.moe = [state](const MoeArgs& a, ThreadPool* pool) {
    if (state->cpu_moe) return run_moe_on_cpu(*state, a, pool);
    run_moe(*state, a);
    check_launch("moe");
  };
  return t;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::unique_ptr<CudaState> state)
      : Backend("cuda", cuda_ops(state.get())), state_(std::move(state)) {}
  ~CudaBackend() override { release_workspace(); }
  bool host_memory() const override { return false; }
  DeviceBuffer allocate(size_t bytes, std::string_view what) override {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, std::max<size_t>(bytes, 1)),
               fmt::format("{}: allocating {} bytes", what, bytes));
    check_cuda(cudaMemset(p, 0, std::max<size_t>(bytes, 1)), what);
    return DeviceBuffer(this, p, bytes);
  }
  void copy_to_backend(void* dst, const void* host_src, size_t bytes) override {
    if (bytes > 0)
      check_cuda(cudaMemcpy(dst, host_src, bytes, cudaMemcpyHostToDevice), "copy to the GPU");
  }
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override {
    if (bytes > 0)
      check_cuda(cudaMemcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost), "copy from the GPU");
  }
  void synchronize() override { check_cuda(cudaDeviceSynchronize(), "synchronize"); }

 protected:
  void release(void* data, size_t) override { cudaFree(data); }

 private:
  std::unique_ptr<CudaState> state_;
};

}  // namespace

std::unique_ptr<Backend> create_cuda_backend(const BackendOptions& options) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    fail("--backend cuda: no usable GPU ({}); use --backend cpu",
         e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found");
  return std::make_unique<CudaBackend>(std::make_unique<CudaState>(options));
}

}  // namespace minimax
