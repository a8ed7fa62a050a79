// Conversion throughput and memory: writes a synthetic MXFP4 MiniMax-M2-shaped checkpoint (real
// expert shapes: hidden 3072, expert width 1536) of a given size, then measures in the same run a
// plain copy of the same shard bytes (read + write + fsync) and `convert_checkpoint`, each in a
// child process so that its peak RSS is its own. Two sizes show whether peak RSS grows with the
// checkpoint. Both read a source that is in the page cache (just written); not a test.
//
//   convert_bench [--dir /tmp/minimax_convert_bench] [--gib 2.2] [--small-gib 0.5] [--threads N]
//                 [--keep]   (keep the larger run's source and output for inspection)
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/atomic_output.h"
#include "base/clock.h"
#include "base/error.h"
#include "checkpoint/convert.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/tiny_config.h"
#include "formats/safetensors_writer.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

constexpr int kHidden = 3072, kIntermediate = 1536, kMaxExpertsPerLayer = 64;

// Fast deterministic bytes (xorshift64*).
struct Bytes {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  }
  void fill(uint8_t* out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const uint64_t v = next();
      std::memcpy(out + i, &v, 8);
    }
    for (; i < n; ++i) out[i] = static_cast<uint8_t>(next());
  }
};

// Writes a sharded MXFP4 checkpoint with about `gib` GiB of expert data; returns its data bytes.
uint64_t write_synthetic(const std::string& dir, double gib) {
  const uint64_t per_expert =
      3 * (uint64_t(kIntermediate) * kHidden / 2 + uint64_t(kIntermediate) * kHidden / 32);
  const int experts_total = static_cast<int>(gib * (1ull << 30) / per_expert) + 1;
  const int layers = (experts_total + kMaxExpertsPerLayer - 1) / kMaxExpertsPerLayer;
  const int experts_per_layer = (experts_total + layers - 1) / layers;
  nlohmann::json config = tiny_config_json(Arch::kM2, 256);
  config["hidden_size"] = kHidden;
  config["intermediate_size"] = kIntermediate;
  config["num_local_experts"] = experts_per_layer;
  config["num_hidden_layers"] = layers;
  config["attn_type_list"] = std::vector<int>(layers, 1);
  const ModelConfig model = parse_model_config(config, "bench config");
  config["quantization_config"] = quantization_config_json(QuantScheme::kMxfp4, model);
  fs::create_directories(dir);
  write_file_atomic(dir + "/config.json", config.dump(2));

  // Experts of one layer per shard (at most 64, about 480 MB), like real shards but smaller.
  Bytes random;
  std::map<std::string, std::string> weight_map;
  uint64_t total = 0;
  std::vector<uint8_t> buffer(uint64_t(kIntermediate) * kHidden / 2);
  for (int l = 0; l < layers; ++l) {
    const std::string shard = shard_file_name(l + 1, layers);
    std::vector<TensorDecl> decls;
    for (int e = 0; e < experts_per_layer; ++e) {
      const std::string p = fmt::format("model.layers.{}.block_sparse_moe.experts.{}.", l, e);
      for (const char* w : {"w1", "w3", "w2"}) {
        const int64_t out = std::string(w) == "w2" ? kHidden : kIntermediate;
        const int64_t in = std::string(w) == "w2" ? kIntermediate : kHidden;
        decls.push_back({p + w + ".weight", DType::kU8, {out, in / 2}});
        decls.push_back({p + w + ".weight_scale", DType::kU8, {out, in / 32}});
      }
    }
    SafetensorsWriter writer(dir + "/" + shard, decls, {{"format", "pt"}});
    for (const TensorDecl& d : writer.order()) {
      const uint64_t n = d.nbytes();
      if (d.name.ends_with("_scale")) {
        // Block scales 2^-12 .. 2^-7: spans of at most 8 + 3 binades, always exact in FP8.
        for (uint64_t i = 0; i < n; ++i) buffer[i] = static_cast<uint8_t>(115 + random.next() % 6);
      } else {
        random.fill(buffer.data(), n);
      }
      writer.write({buffer.data(), n});
      weight_map[d.name] = shard;
      total += n;
    }
    writer.finish();
  }
  write_safetensors_index(dir + "/model.safetensors.index.json", weight_map, total);
  return total;
}

// A plain copy of every file of `src` into `dst`: read + write in 8 MiB pieces, fsync.
void plain_copy(const std::string& src, const std::string& dst) {
  fs::create_directories(dst);
  std::vector<char> buffer(8 << 20);
  for (const auto& entry : fs::directory_iterator(src)) {
    const int in = ::open(entry.path().c_str(), O_RDONLY);
    const int out = ::open((dst + "/" + entry.path().filename().string()).c_str(),
                           O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) fail("bench: cannot open {}", entry.path().string());
    for (;;) {
      const ssize_t n = ::read(in, buffer.data(), buffer.size());
      if (n <= 0) break;
      if (::write(out, buffer.data(), n) != n) fail("bench: write failed");
    }
    ::fsync(out);
    ::close(in);
    ::close(out);
  }
}

struct Run {
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system, all threads
  long peak_rss_kib = 0;
};

// Runs `body` in a child process; wall time and the child's peak RSS.
template <typename Fn>
Run in_child(Fn body) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench child: %s\n", e.what());
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("bench: child failed");
  Run run;
  run.seconds = seconds_since(start);
  run.peak_rss_kib = usage.ru_maxrss;
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  run.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  return run;
}

void measure(const std::string& root, double gib, size_t threads, bool keep) {
  const std::string src = root + "/src", copy = root + "/copy", dst = root + "/dst";
  fs::remove_all(root);
  const uint64_t bytes = write_synthetic(src, gib);
  const Run copy_run = in_child([&] { plain_copy(src, copy); });
  fs::remove_all(copy);
  ConvertOptions options;
  options.input_dir = src;
  options.output_dir = dst;
  options.threads = threads;
  options.show_progress = false;
  const Run convert_run = in_child([&] { convert_checkpoint(options); });
  uint64_t output_bytes = 0;
  for (const auto& entry : fs::directory_iterator(dst)) output_bytes += entry.file_size();
  const double gb = bytes / 1e9;
  const size_t pool = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  std::printf("source %.2f GB (MXFP4 experts), output %.2f GB, %zu threads\n", gb,
              output_bytes / 1e9, pool);
  for (const auto& [label, run] : {std::pair{"plain copy", copy_run}, {"convert   ", convert_run}})
    std::printf(
        "  %s : %6.2f s wall %6.2f GB/s of source | %6.2f s CPU %6.2f GB/s per CPU-second | "
        "peak RSS %6.1f MiB\n",
        label, run.seconds, gb / run.seconds, run.cpu_seconds, gb / run.cpu_seconds,
        run.peak_rss_kib / 1024.0);
  std::printf("  convert / copy wall time: %.2fx\n", convert_run.seconds / copy_run.seconds);
  std::printf(
      "  work buffers: 2 batches x %zu threads x %zu pieces x %zu KiB = %.1f MiB\n", pool,
      options.limits.pieces_per_thread, options.limits.piece_bytes >> 10,
      2.0 * pool * options.limits.pieces_per_thread * options.limits.piece_bytes / 1048576.0);
  std::fflush(stdout);
  if (keep) return;
  fs::remove_all(root);
}

}  // namespace
}  // namespace minimax

int main(int argc, char** argv) {
  std::string dir = "/tmp/minimax_convert_bench";
  double gib = 2.2, small_gib = 0.5;
  size_t threads = 0;
  bool keep = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--keep") {
      keep = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[i + 1];
    if (flag == "--dir")
      dir = value;
    else if (flag == "--gib")
      gib = std::stod(value);
    else if (flag == "--small-gib")
      small_gib = std::stod(value);
    else if (flag == "--threads")
      threads = std::stoul(value);
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    if (small_gib > 0) minimax::measure(dir, small_gib, threads, false);
    minimax::measure(dir, gib, threads, keep);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
