// Backends: the registered ones, the reference table is complete, a partial table is completed
// with the reference ops only on a host backend, the step workspace reuses its memory, and the
// data-movement ops (add, copy, gather_rows, store_kv) do what ops.h says.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "formats/float_formats.h"
#include "kernels/backend.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

void fake_glu(const float*, const float*, int64_t n, const GluParams&, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = 42.0f;
}

bool complete(const KernelOps& ops) { return first_missing_op(ops).empty(); }

// A backend that is not a host backend: it must bring every op itself.
class FakeDeviceBackend : public Backend {
 public:
  explicit FakeDeviceBackend(const KernelOps& ops) : Backend("fake-device", ops) {}
  ~FakeDeviceBackend() override { release_workspace(); }
  bool host_memory() const override { return false; }
  DeviceBuffer allocate(size_t bytes, std::string_view) override {
    return DeviceBuffer(this, ::operator new(bytes), bytes);
  }
  void copy_to_backend(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
  void copy_to_host(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }

 protected:
  void release(void* data, size_t) override { ::operator delete(data); }
};

// Whether the table entry `fn` holds the plain function `f`.
template <class Fn, class R, class... A>
bool holds(const Fn& fn, R (*f)(A...)) {
  const auto* target = fn.template target<R (*)(A...)>();
  return target != nullptr && *target == f;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Backend, ReferenceAndCpuTablesAreComplete) {
  EXPECT_TRUE(complete(reference_ops()));
  EXPECT_TRUE(complete(kernel_ops(BackendKind::kCpu)));
  EXPECT_EQ(&kernel_ops(BackendKind::kReference), &reference_ops());
  EXPECT_TRUE(holds(reference_ops().moe, &reference::moe));
}

TEST(Backend, MissingOpsFallBackToTheReference) {
  KernelOps partial;
  partial.name = "partial";
  partial.glu = fake_glu;
  const KernelOps full = complete_with_reference(partial);
  EXPECT_TRUE(complete(full));
  EXPECT_STREQ(full.name, "partial");
  EXPECT_TRUE(holds(full.glu, &fake_glu));  // provided ops are kept
  EXPECT_TRUE(holds(full.linear, &reference::linear));
  EXPECT_TRUE(holds(full.attention, &reference::attention));
}

TEST(Backend, OnlyHostBackendsAreCompletedFromTheReference) {
  KernelOps partial;
  partial.name = "partial";
  partial.glu = fake_glu;
  auto host = create_host_backend(partial);
  EXPECT_TRUE(host->host_memory());
  EXPECT_TRUE(complete(host->ops()));
  EXPECT_TRUE(holds(host->ops().glu, &fake_glu));
  EXPECT_EQ(host->name(), "partial");
  // The same partial table on a device backend is refused, naming the first missing op.
  EXPECT_NE(error_of([&] { FakeDeviceBackend device(partial); }).find("op 'add'"),
            std::string::npos);
  FakeDeviceBackend device(reference_ops());
  EXPECT_FALSE(device.host_memory());
}

TEST(Backend, RegisteredExplicitly) {
  std::vector<std::string> names;
  for (const BackendEntry& e : registered_backends()) {
    names.emplace_back(e.name);
    std::unique_ptr<Backend> backend;
    try {
      backend = e.create(BackendOptions{});
    } catch (const Error& error) {  // only the GPU backend may be missing its device here
      EXPECT_EQ(e.kind, BackendKind::kCuda) << error.what();
      EXPECT_NE(std::string(error.what()).find("no usable GPU"), std::string::npos) << error.what();
      continue;
    }
    EXPECT_EQ(backend->name(), e.name);
    EXPECT_TRUE(complete(backend->ops())) << e.name;
  }
#ifdef MINIMAX_HAVE_CUDA
  EXPECT_EQ(names, (std::vector<std::string>{"reference", "cpu", "cuda"}));
  EXPECT_EQ(parse_backend_kind("cuda", "--backend"), BackendKind::kCuda);
#else
  EXPECT_EQ(names, (std::vector<std::string>{"reference", "cpu"}));
  EXPECT_NE(error_of([] { parse_backend_kind("cuda", "--backend"); }).find("reference or cpu"),
            std::string::npos);
#endif
}

TEST(Workspace, StepsOfAKnownShapeAllocateNothing) {
  auto backend = create_backend(BackendKind::kReference);
  Workspace& ws = backend->workspace();
  const size_t big = size_t{3} << 20;  // over one default block: forces a second block
  auto step = [&] {
    ws.begin_step();
    auto* a = ws.take<float>(1000);
    auto* b = ws.take<uint8_t>(big);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
    std::memset(b, 1, big);  // the memory is really there
    return std::pair(static_cast<void*>(a), static_cast<void*>(b));
  };
  step();
  const size_t grown = ws.capacity();
  EXPECT_GE(grown, big + 4000);
  const auto second = step();  // folded into one block of the sum
  EXPECT_EQ(ws.capacity(), grown);
  for (int i = 0; i < 3; ++i) {
    const auto again = step();
    EXPECT_EQ(again, second);  // same shape, same memory
    EXPECT_EQ(ws.capacity(), grown);
  }
}

TEST(Workspace, ScopesReuseMemory) {
  auto backend = create_backend(BackendKind::kReference);
  Workspace& ws = backend->workspace();
  ws.begin_step();
  float* keep = ws.take<float>(16);
  void* first = nullptr;
  for (int layer = 0; layer < 4; ++layer) {
    WorkspaceScope scope(ws);
    void* p = ws.take<float>(1024);
    if (layer == 0) first = p;
    EXPECT_EQ(p, first);  // every layer gets the same buffer back
    EXPECT_NE(p, static_cast<void*>(keep));
  }
  EXPECT_NE(static_cast<void*>(ws.take<float>(16)), static_cast<void*>(keep));
}

TEST(ElementwiseOps, AddCopyGatherAndPagedKvStore) {
  for (const KernelOps* ops : {&reference_ops(), &kernel_ops(BackendKind::kCpu)}) {
    std::vector<float> y = {1, 2, 3}, x = {10, 20, 30};
    ops->add(y.data(), x.data(), 3, nullptr);
    EXPECT_EQ(y, (std::vector<float>{11, 22, 33}));
    ops->copy(y.data(), x.data(), 3);
    EXPECT_EQ(y, x);
    const std::vector<float> rows = {0, 1, 10, 11, 20, 21};  // 3 rows of width 2
    const std::vector<int32_t> pick = {2, 0};
    std::vector<float> out(4);
    ops->gather_rows(rows.data(), 2, pick.data(), 2, out.data());
    EXPECT_EQ(out, (std::vector<float>{20, 21, 0, 1}));

    // A pool of 3 pages of 3 rows; a sequence whose table is {2, 0}: slot s lives at row
    // table[s / 3]·3 + s % 3, so slots 1, 3, 4 go to rows 7, 0, 1.
    std::vector<float> storage(9 * 2, -1.0f);
    const std::vector<int32_t> table = {2, 0}, positions = {1, 3, 4};
    const std::vector<float> kv = {1, 1, 3, 3, 4, 4};
    KvStoreArgs args;
    args.rows = kv.data();
    args.T = 3;
    args.width = 2;
    args.positions = positions.data();
    args.page_table = table.data();
    args.page_size = 3;
    args.storage = storage.data();
    ops->store_kv(args);
    EXPECT_EQ(storage, (std::vector<float>{3, 3, 4, 4, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 1,
                                           -1, -1}));
    // Without a table slot s is row s (positions 1, 3, 4 -> rows 1, 3, 4).
    std::fill(storage.begin(), storage.end(), -1.0f);
    args.page_table = nullptr;
    ops->store_kv(args);
    EXPECT_EQ(storage, (std::vector<float>{-1, -1, 1, 1, -1, -1, 3, 3, 4, 4, -1, -1, -1, -1, -1, -1,
                                           -1, -1}));
    // bf16 and fp8 storage: each row element converted (rows 1, 3, 4 of width 2).
    std::vector<uint16_t> bf16_storage(18, 0xFFFF);
    args.dtype = KvDtype::kBF16;
    args.storage = bf16_storage.data();
    ops->store_kv(args);
    EXPECT_EQ(bf16_storage[2], f32_to_bf16(1.0f));
    EXPECT_EQ(bf16_storage[6], f32_to_bf16(3.0f));
    EXPECT_EQ(bf16_storage[9], f32_to_bf16(4.0f));
    EXPECT_EQ(bf16_storage[0], 0xFFFF);
    std::vector<uint8_t> fp8_storage(18, 0xEE);
    args.dtype = KvDtype::kFp8E4m3;
    args.storage = fp8_storage.data();
    ops->store_kv(args);
    EXPECT_EQ(fp8_storage[3], 0x38);  // 1.0 in e4m3fn
    EXPECT_EQ(fp8_storage[7], 0x44);  // 3.0
    EXPECT_EQ(fp8_storage[8], 0x48);  // 4.0
    EXPECT_EQ(fp8_storage[5], 0xEE);
  }
}

TEST(Backend, NamesParse) {
  EXPECT_EQ(parse_backend_kind("cpu", "--backend"), BackendKind::kCpu);
  EXPECT_EQ(parse_backend_kind("reference", "--backend"), BackendKind::kReference);
  EXPECT_EQ(backend_name(BackendKind::kCpu), "cpu");
  try {
    parse_backend_kind("gpu", "--backend");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--backend"), std::string::npos);
  }
}

}  // namespace
}  // namespace minimax
