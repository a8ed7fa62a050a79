// validate_conversion: pairs every converted tensor with its source and checks it, in row chunks,
// on a thread pool; reading and decoding go through validate_reader / validate_decode only.
#include "checkpoint/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "base/progress.h"
#include "base/thread_pool.h"
#include "checkpoint/validate_decode.h"
#include "checkpoint/validate_reader.h"

namespace minimax {
namespace {

using validation::e4m3fn_values;

constexpr uint64_t kValidateChunkBytes = uint64_t{4} << 20;

enum class ItemKind { kExpert, kBf16, kIdentical };

struct Item {
  ItemKind kind;
  std::string name;      // converted tensor ("<module>.weight" for experts and BF16)
  bool compare = false;  // kExpert: compare elements (sampled), else scales only
  // kIdentical: the scale of a copied FP8 layer, whose source shape [out] may be written [out, 1]
  // (the same bytes; compressed-tensors' channel shape).
  bool channel_scale = false;
};

struct Pair {
  const CheckedCheckpoint& source;
  const CheckedCheckpoint& converted;
};

std::string module_of(const std::string& weight_name) {
  return weight_name.substr(0, weight_name.size() - std::string(".weight").size());
}

// The source's MXFP4 pair for a module, or a failure.
bool source_mxfp4(const Pair& p, const std::string& module, int64_t rows, int64_t cols,
                  const CheckedTensor** weight, const CheckedTensor** scales,
                  ValidateReport& report) {
  *weight = p.source.find(module + ".weight");
  *scales = p.source.find(module + ".weight_scale");
  const bool ok = *weight && *scales && (*weight)->dtype == "U8" && (*scales)->dtype == "U8" &&
                  (*weight)->shape == std::vector<int64_t>{rows, cols / 2} &&
                  (*scales)->shape == std::vector<int64_t>{rows, cols / 32} && cols % 32 == 0;
  if (!ok)
    report.fail(
        fmt::format("{}: the source has no MXFP4 weight U8 [{}, {}] + weight_scale U8 "
                    "[{}, {}] for it",
                    module, rows, cols / 2, rows, cols / 32));
  return ok;
}

void check_expert(const Pair& p, const Item& item, const ValidationWindow& window,
                  ValidateReport& report) {
  const CheckedTensor& q = *p.converted.find(item.name);
  const std::string module = module_of(item.name);
  if (q.shape.size() != 2) return report.fail(fmt::format("{}: not 2-D", item.name));
  const int64_t rows = q.shape[0], cols = q.shape[1];
  const CheckedTensor* scale = p.converted.find(module + ".weight_scale");
  if (!scale || scale->dtype != "F32" || scale->shape != std::vector<int64_t>{rows, 1})
    return report.fail(fmt::format("{}: no F32 weight_scale [{}, 1] beside it", module, rows));
  const CheckedTensor *src_w, *src_s;
  if (!source_mxfp4(p, module, rows, cols, &src_w, &src_s, report)) return;
  ++report.expert_weights;
  const std::vector<uint8_t> scale_bytes = p.converted.read(*scale, 0, scale->nbytes);
  std::vector<int> exponents(rows);
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t bits;
    std::memcpy(&bits, scale_bytes.data() + 4 * r, 4);
    if (!validation::f32_power_of_two(bits, &exponents[r]))
      return report.fail(
          fmt::format("{}.weight_scale row {}: 0x{:08X} is not a normal power of "
                      "two",
                      module, r, bits));
  }
  report.scale_rows += rows;
  if (!item.compare) return;
  ++report.expert_weights_compared;
  const int64_t chunk_rows = std::max<int64_t>(1, kValidateChunkBytes / cols);
  const auto& fp8 = e4m3fn_values();
  // Codes that may appear at all: not -0, not NaN, zero or inside the target's window.
  bool allowed[256];
  for (int code = 0; code < 256; ++code) {
    const int e = validation::e4m3fn_exponent(static_cast<uint8_t>(code));
    allowed[code] = code == 0 || (code != 0x80 && (code & 0x7F) != 0x7F &&
                                  e >= window.min_exponent && e <= window.max_exponent);
  }
  std::vector<double> source(cols);
  for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    const int64_t n = std::min(chunk_rows, rows - r0);
    const auto codes = p.converted.read(q, r0 * cols, n * cols);
    const auto packed = p.source.read(*src_w, r0 * cols / 2, n * cols / 2);
    const auto block_scales = p.source.read(*src_s, r0 * cols / 32, n * cols / 32);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = r0 + i;
      const double row_scale = std::ldexp(1.0, exponents[r]);
      validation::decode_mxfp4_row(&packed[i * cols / 2], &block_scales[i * cols / 32], cols,
                                   source.data());
      const uint8_t* row_codes = &codes[i * cols];
      for (int64_t c = 0; c < cols; ++c) {
        const uint8_t code = row_codes[c];
        if (allowed[code] && fp8[code] * row_scale == source[c]) continue;
        std::string problem;
        if (code == 0x80) {
          problem = "negative zero code 0x80";
        } else if ((code & 0x7F) == 0x7F) {
          problem = "NaN code";
        } else if (!allowed[code]) {
          problem = fmt::format("code 0x{:02X} (exponent {}) outside the {} window [{}, {}]", code,
                                validation::e4m3fn_exponent(code), report.target,
                                window.min_exponent, window.max_exponent);
        } else {
          problem = fmt::format("{} x 2^{} != MXFP4 source {}", fp8[code], exponents[r], source[c]);
        }
        return report.fail(fmt::format("{} row {} column {}: {}", item.name, r, c, problem));
      }
    }
    report.elements_compared += static_cast<uint64_t>(n * cols);
  }
}

void check_bf16(const Pair& p, const Item& item, ValidateReport& report) {
  const CheckedTensor& t = *p.converted.find(item.name);
  const int64_t rows = t.shape[0], cols = t.shape[1];
  const CheckedTensor *src_w, *src_s;
  if (!source_mxfp4(p, module_of(item.name), rows, cols, &src_w, &src_s, report)) return;
  ++report.bf16_weights;
  const int64_t chunk_rows = std::max<int64_t>(1, kValidateChunkBytes / (2 * cols));
  std::vector<double> source(cols);
  for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    const int64_t n = std::min(chunk_rows, rows - r0);
    const auto values = p.converted.read(t, r0 * cols * 2, n * cols * 2);
    const auto packed = p.source.read(*src_w, r0 * cols / 2, n * cols / 2);
    const auto block_scales = p.source.read(*src_s, r0 * cols / 32, n * cols / 32);
    for (int64_t i = 0; i < n; ++i) {
      validation::decode_mxfp4_row(&packed[i * cols / 2], &block_scales[i * cols / 32], cols,
                                   source.data());
      for (int64_t c = 0; c < cols; ++c) {
        uint16_t bits;
        std::memcpy(&bits, &values[2 * (i * cols + c)], 2);
        if (bits == 0x8000 || !(validation::bf16_value(bits) == source[c]))
          return report.fail(fmt::format("{} row {} column {}: BF16 0x{:04X} != MXFP4 source {}",
                                         item.name, r0 + i, c, bits, source[c]));
      }
    }
    report.elements_compared += static_cast<uint64_t>(n * cols);
  }
}

void check_identical(const Pair& p, const Item& item, ValidateReport& report) {
  const CheckedTensor& t = *p.converted.find(item.name);
  const CheckedTensor* s = p.source.find(item.name);
  const bool column =
      item.channel_scale && s->shape.size() == 1 && t.shape == std::vector<int64_t>{s->shape[0], 1};
  if (s->dtype != t.dtype || (s->shape != t.shape && !column))
    return report.fail(fmt::format("{}: {} {} in the source, {} {} converted", item.name, s->dtype,
                                   fmt::join(s->shape, "x"), t.dtype, fmt::join(t.shape, "x")));
  for (uint64_t offset = 0; offset < t.nbytes; offset += kValidateChunkBytes) {
    const uint64_t n = std::min(kValidateChunkBytes, t.nbytes - offset);
    if (p.source.read(*s, offset, n) != p.converted.read(t, offset, n))
      return report.fail(fmt::format("{}: bytes differ from the source in [{}, {})", item.name,
                                     offset, offset + n));
    report.bytes_compared += n;
  }
  ++report.identical_tensors;
}

// A routed expert weight of the main model: "model.layers.3.block_sparse_moe.experts.17.w1.weight"
// gives layer key "model.3" and expert 17. MTP layers (an "mtp." name component, or a layer index
// past num_hidden_layers) are not routed experts of the model and are converted like any other
// MXFP4 weight (to BF16).
bool routed_expert(const std::string& name, int num_layers, std::string* layer_key, int* expert) {
  static const std::regex pattern(
      R"(^(.*\.)?layers\.(\d+)\.block_sparse_moe\.experts\.(\d+)\.w[123]\.weight$)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return false;
  if (name.rfind("mtp.", 0) == 0 || name.find(".mtp.") != std::string::npos) return false;
  if (std::stoll(m[2].str()) >= num_layers) return false;
  *layer_key = m[1].str() + m[2].str();
  *expert = std::stoi(m[3].str());
  return true;
}

int num_hidden_layers(const nlohmann::json& config) {
  for (const nlohmann::json* c :
       {&config, config.contains("text_config") ? &config["text_config"] : &config})
    if (c->is_object() && c->contains("num_hidden_layers") &&
        (*c)["num_hidden_layers"].is_number_integer())
      return (*c)["num_hidden_layers"].get<int>();
  return std::numeric_limits<int>::max();
}

// The experts compared per layer: every one, or `sample` spread evenly over the layer's experts.
std::set<std::pair<std::string, int>> sampled_experts(
    const std::map<std::string, std::set<int>>& experts_by_layer, int sample) {
  std::set<std::pair<std::string, int>> chosen;
  for (const auto& [layer, experts] : experts_by_layer) {
    const std::vector<int> ids(experts.begin(), experts.end());
    const size_t n = ids.size();
    const size_t want = sample <= 0 ? n : std::min<size_t>(n, static_cast<size_t>(sample));
    for (size_t k = 0; k < want; ++k) chosen.insert({layer, ids[k * n / want]});
  }
  return chosen;
}

std::vector<Item> plan_items(const Pair& p, int sample, ValidateReport& report) {
  std::vector<Item> items;
  std::map<std::string, std::set<int>> experts_by_layer;
  std::set<std::string> expected_missing;  // source scale tensors of BF16 weights
  const int layers = num_hidden_layers(p.converted.config());
  std::string layer_key;
  int expert = 0;
  for (const auto& [name, t] : p.converted.tensors()) {
    if (!routed_expert(name, layers, &layer_key, &expert)) continue;
    experts_by_layer[layer_key].insert(expert);
    if (t.dtype != "F8_E4M3")
      report.fail(fmt::format("{}: routed expert weight is {}, not F8_E4M3", name, t.dtype));
  }
  const auto chosen = sampled_experts(experts_by_layer, sample);
  for (const auto& [name, t] : p.converted.tensors()) {
    if (routed_expert(name, layers, &layer_key, &expert) && t.dtype == "F8_E4M3") {
      items.push_back({ItemKind::kExpert, name, chosen.count({layer_key, expert}) > 0});
      continue;
    }
    const std::string scale_suffix = ".weight_scale";
    if (name.size() > scale_suffix.size() &&
        name.compare(name.size() - scale_suffix.size(), scale_suffix.size(), scale_suffix) == 0) {
      const std::string weight = name.substr(0, name.size() - scale_suffix.size()) + ".weight";
      const CheckedTensor* w = p.converted.find(weight);
      if (w && w->dtype == "F8_E4M3") {
        if (routed_expert(weight, layers, &layer_key, &expert)) continue;  // with its expert
        // An FP8 layer of the source (Quark FP8 attention): copied, like its weight.
        if (p.source.find(name) == nullptr) {
          report.fail(fmt::format("{}: in the converted checkpoint but not in the source", name));
        } else {
          items.push_back({ItemKind::kIdentical, name, true, true});
        }
        continue;
      }
    }
    const CheckedTensor* s = p.source.find(name);
    if (s == nullptr) {
      report.fail(fmt::format("{}: in the converted checkpoint but not in the source", name));
    } else if (t.dtype == "BF16" && s->dtype == "U8" && t.shape.size() == 2) {
      items.push_back({ItemKind::kBf16, name, true});
      expected_missing.insert(module_of(name) + ".weight_scale");
    } else {
      items.push_back({ItemKind::kIdentical, name, true});
    }
  }
  for (const auto& [name, s] : p.source.tensors())
    if (!p.converted.find(name) && !expected_missing.count(name))
      report.fail(fmt::format("{}: in the source but missing from the converted checkpoint", name));
  return items;
}

}  // namespace

void ValidateReport::fail(std::string message) {
  ++failure_count;
  if (failures.size() < kMaxListed) failures.push_back(std::move(message));
}

void ValidateReport::merge(const ValidateReport& o) {
  expert_weights += o.expert_weights;
  expert_weights_compared += o.expert_weights_compared;
  scale_rows += o.scale_rows;
  bf16_weights += o.bf16_weights;
  identical_tensors += o.identical_tensors;
  side_files += o.side_files;
  elements_compared += o.elements_compared;
  bytes_compared += o.bytes_compared;
  failure_count += o.failure_count;
  for (const std::string& f : o.failures)
    if (failures.size() < kMaxListed) failures.push_back(f);
}

ValidateReport validate_conversion(const ValidateOptions& options) {
  const CheckedCheckpoint source(options.source_dir);
  const CheckedCheckpoint converted(options.converted_dir);
  const Pair pair{source, converted};
  ValidateReport report;
  check_converted_config(source.config(), converted, report);
  check_checkpoint_files(options.source_dir, converted, report);
  const std::vector<Item> items = plan_items(pair, options.sample, report);
  const ValidationWindow window = validation_window(report.target);
  std::optional<Progress> progress;
  if (options.show_progress) {
    uint64_t total = 0;
    for (const Item& item : items) total += converted.tensors().at(item.name).nbytes;
    progress.emplace("validate", total);
    progress->show_after(std::chrono::seconds(1));
  }
  ThreadPool pool(options.threads);
  std::vector<ValidateReport> partial(pool.size());
  for (ValidateReport& r : partial) r.target = report.target;
  // Interleaved split so that every thread gets a share of the big tensors.
  pool.parallel_for(pool.size(), [&](size_t begin, size_t end, size_t thread) {
    for (size_t t = begin; t < end; ++t) {
      for (size_t i = t; i < items.size(); i += pool.size()) {
        const Item& item = items[i];
        ValidateReport& r = partial[thread];
        switch (item.kind) {
          case ItemKind::kExpert:
            check_expert(pair, item, window, r);
            break;
          case ItemKind::kBf16:
            check_bf16(pair, item, r);
            break;
          case ItemKind::kIdentical:
            check_identical(pair, item, r);
            break;
        }
        if (progress) progress->add(converted.tensors().at(item.name).nbytes);
      }
    }
  });
  if (progress) progress->finish();
  for (const ValidateReport& r : partial) report.merge(r);
  return report;
}

std::string format_validate_report(const ValidateReport& r) {
  std::string out = fmt::format("validate (target {} from the converted config)\n", r.target);
  out += fmt::format(
      "  routed experts   {} FP8 weights, {} row scales normal powers of two; {} "
      "weights compared element by element\n",
      r.expert_weights, r.scale_rows, r.expert_weights_compared);
  out += fmt::format("  BF16 weights     {} equal to their MXFP4 source\n", r.bf16_weights);
  out += fmt::format("  elements         {} compared in float64\n", r.elements_compared);
  out += fmt::format("  identical        {} tensors ({}), {} side files\n", r.identical_tensors,
                     format_bytes(r.bytes_compared), r.side_files);
  if (r.ok()) {
    out += "  result           OK\n";
    return out;
  }
  out += fmt::format("  result           {} FAILURE(S)\n", r.failure_count);
  for (const std::string& f : r.failures) out += "    " + f + "\n";
  if (r.failure_count > r.failures.size())
    out += fmt::format("    ... and {} more\n", r.failure_count - r.failures.size());
  return out;
}

}  // namespace minimax
