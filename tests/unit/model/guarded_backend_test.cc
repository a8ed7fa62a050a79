// The forward pass touches activations only through its backend: a backend whose memory the host
// cannot read or write except inside one of its ops (the pages are PROT_NONE between ops, as device
// memory is out of the host's reach) runs M2 and M3, dense and MSA, several sequences in one step
// over a paged pool, prefill then decode, and gives the reference backend's logits bit for bit. A
// loop over activations, a copy or a KV write in src/model outside an op would fault here.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <numeric>
#include <vector>

#include "kernels/reference/reference_ops.h"
#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

class GuardedBackend;
GuardedBackend* g_guarded = nullptr;  // the one live guarded backend (ops are plain functions)

class GuardedBackend final : public Backend {
 public:
  GuardedBackend();
  ~GuardedBackend() override {
    open();
    release_workspace();
    g_guarded = nullptr;
  }
  bool host_memory() const override { return false; }
  DeviceBuffer allocate(size_t bytes, std::string_view) override {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t size = (std::max<size_t>(bytes, 1) + page - 1) / page * page;
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    regions_[p] = size;
    if (depth_ == 0) protect(p, size, PROT_NONE);
    return DeviceBuffer(this, p, bytes);
  }
  void copy_to_backend(void* dst, const void* src, size_t n) override {
    open();
    std::memcpy(dst, src, n);
    close();
  }
  void copy_to_host(void* dst, const void* src, size_t n) override {
    open();
    std::memcpy(dst, src, n);
    close();
  }
  // Every region readable and writable while an op (or a copy) runs.
  void open() {
    if (depth_++ == 0)
      for (auto& [p, size] : regions_) protect(p, size, PROT_READ | PROT_WRITE);
  }
  void close() {
    if (--depth_ == 0)
      for (auto& [p, size] : regions_) protect(p, size, PROT_NONE);
    ++ops_run;
  }
  int64_t ops_run = 0;

 protected:
  void release(void* data, size_t) override {
    auto it = regions_.find(data);
    munmap(it->first, it->second);
    regions_.erase(it);
  }

 private:
  static void protect(void* p, size_t size, int prot) {
    if (mprotect(p, size, prot) != 0) std::abort();
  }
  std::map<void*, size_t> regions_;
  int depth_ = 0;
};

// The reference op `Fn`, run with the guarded memory open.
template <auto Fn>
struct Guarded;
template <class R, class... A, R (*Fn)(A...)>
struct Guarded<Fn> {
  static R call(A... args) {
    g_guarded->open();
    struct Close {
      ~Close() { g_guarded->close(); }
    } close;
    return Fn(args...);
  }
};

KernelOps guarded_ops() {
  KernelOps t;
  t.name = "guarded";
  t.add = &Guarded<&reference::add>::call;
  t.copy = &Guarded<&reference::copy>::call;
  t.gather_rows = &Guarded<&reference::gather_rows>::call;
  t.store_kv = &Guarded<&reference::store_kv>::call;
  t.linear = &Guarded<&reference::linear>::call;
  t.embedding = &Guarded<&reference::embedding>::call;
  t.rms_norm = &Guarded<&reference::rms_norm>::call;
  t.sum_squares = &Guarded<&reference::sum_squares>::call;
  t.rms_norm_from_sums = &Guarded<&reference::rms_norm_from_sums>::call;
  t.rope = &Guarded<&reference::rope>::call;
  t.attention = &Guarded<&reference::attention>::call;
  t.select_blocks = &Guarded<&reference::select_blocks>::call;
  t.route = &Guarded<&reference::route>::call;
  t.glu = &Guarded<&reference::glu>::call;
  t.quantize_activations = &Guarded<&reference::quantize_activations>::call;
  t.moe = &Guarded<&reference::moe>::call;
  return t;
}

GuardedBackend::GuardedBackend() : Backend("guarded", guarded_ops()) { g_guarded = this; }

using testing_support::same_bits;

using testing_support::token_range;

// Two sequences prefilled together on a paged pool, then three decode steps of both; every step's
// logits appended.
std::vector<float> run_two_sequences(Model& model, const std::vector<int32_t>& a,
                                     const std::vector<int32_t>& b) {
  // Blocks of 8 slots, the two tables interleaved backwards through the pool.
  const int32_t blocks_a = int32_t(a.size() + 7) / 8, blocks_b = int32_t(b.size() + 7) / 8;
  const int32_t total = blocks_a + blocks_b;
  auto pool = model.new_kv_pool(total, 8);
  std::vector<int32_t> ta, tb;
  for (int32_t i = 0; i < total; ++i)
    (i % 2 == 0 && int32_t(ta.size()) < blocks_a) || int32_t(tb.size()) == blocks_b
        ? ta.push_back(total - 1 - i)
        : tb.push_back(total - 1 - i);
  KvCache ca(*pool, ta), cb(*pool, tb);
  std::vector<float> out;
  const size_t na = a.size() - 3, nb = b.size() - 3;
  auto pa = token_range(0, int32_t(na)), pb = token_range(0, int32_t(nb));
  std::vector<BatchSequence> batch = {{std::span(a).first(na), pa, &ca, LogitsFor::kAllTokens},
                                      {std::span(b).first(nb), pb, &cb, LogitsFor::kLastToken}};
  out = model.forward_batch(batch);
  for (size_t step = 0; step < 3; ++step) {
    const int32_t qa = int32_t(na + step), qb = int32_t(nb + step);
    std::vector<BatchSequence> decode = {{std::span(a).subspan(qa, 1), std::span(&qa, 1), &ca},
                                         {std::span(b).subspan(qb, 1), std::span(&qb, 1), &cb}};
    const auto logits = model.forward_batch(decode);
    out.insert(out.end(), logits.begin(), logits.end());
  }
  return out;
}

struct GuardedCase {
  const char* name;
  std::string dir;
  std::vector<int32_t> a, b;
};

std::vector<int32_t> guarded_prompt(size_t n, int vocab, int seed) {
  return testing_support::prompt_tokens(n, vocab, seed * 11 + 5);
}

TEST(GuardedBackend, ForwardTouchesActivationsOnlyThroughOps) {
  const int vocab = 576;
  std::vector<GuardedCase> cases;
  for (Arch arch : {Arch::kM2, Arch::kM3})
    for (QuantScheme scheme : {QuantScheme::kNone, QuantScheme::kMxfp4})
      cases.push_back({arch == Arch::kM2 ? "m2" : "m3",
                       testing_support::tiny_checkpoint(arch, scheme, 3, vocab),
                       guarded_prompt(23, vocab, 1), guarded_prompt(9, vocab, 2)});
  // MSA past the point where blocks are left out (16-slot blocks, top-4).
  const nlohmann::json g = testing_support::load_golden("m3-bf16-long");
  const auto tokens = g.at("tokens").get<std::vector<int32_t>>();
  ASSERT_GT(tokens.size(), 64u + 3u);
  cases.push_back({"m3-msa", testing_support::golden_checkpoint(g), tokens,
                   std::vector<int32_t>(tokens.begin(), tokens.begin() + 20)});

  for (const GuardedCase& c : cases) {
    ModelOptions reference;
    reference.backend = BackendKind::kReference;
    reference.threads = 2;
    auto want_model = Model::load(c.dir, reference);
    const auto want = run_two_sequences(*want_model, c.a, c.b);

    ModelOptions guarded = reference;
    GuardedBackend* backend = nullptr;
    guarded.make_backend = [&] {
      auto b = std::make_unique<GuardedBackend>();
      backend = b.get();
      return b;
    };
    auto model = Model::load(c.dir, guarded);
    EXPECT_FALSE(model->backend().host_memory());
    EXPECT_TRUE(same_bits(run_two_sequences(*model, c.a, c.b), want)) << c.name;
    EXPECT_GT(backend->ops_run, 100) << c.name;
  }
}

// The guard itself works: the model's memory is out of reach between ops.
TEST(GuardedBackendDeathTest, HostAccessBetweenOpsFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  GuardedBackend backend;
  backend.workspace().begin_step();
  float* p = backend.workspace().take<float>(4);
  const float one = 1.0f;
  backend.copy_to_backend(p, &one, sizeof(float));  // fine: through the backend
  EXPECT_DEATH({ *static_cast<volatile float*>(p) = 2.0f; }, "");
}

}  // namespace
}  // namespace minimax
