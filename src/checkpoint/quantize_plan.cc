// plan_quantization: which source tensors each output shard re-encodes, keeps or copies, and the
// config.json that describes the result.
#include "checkpoint/quantize_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "checkpoint/tiny_checkpoint.h"

namespace minimax {
namespace {

// The short spelling the issue and docs use for the dense FFN layers of M3.
constexpr std::string_view kDenseAlias = "dense";

std::vector<TensorRole> linear_roles() {
  std::vector<TensorRole> roles;
  for (const TensorRow& row : tensor_rows())
    if (row.form == WeightForm::kLinear &&
        std::find(roles.begin(), roles.end(), row.role) == roles.end())
      roles.push_back(row.role);
  return roles;
}

bool is_scale_tensor(const std::string& name) {
  for (std::string_view suffix :
       {".weight_scale", ".weight_scale_inv", ".weight_scale_2", ".input_scale"})
    if (name.ends_with(suffix)) return true;
  return false;
}

// Two layouts that store a Linear in the same bytes, possibly under other scale shapes.
bool same_encoding(LinearLayout a, LinearLayout b) {
  auto channel = [](LinearLayout l) {
    return l == LinearLayout::kFp8Channel || l == LinearLayout::kQuarkFp8Channel;
  };
  return a == b || (channel(a) && channel(b));
}

bool same_bytes(const std::vector<StoredTensor>& a, const std::vector<StoredTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const TensorDecl da{a[i].name, a[i].dtype, a[i].shape}, db{b[i].name, b[i].dtype, b[i].shape};
    if (a[i].name != b[i].name || a[i].dtype != b[i].dtype || da.nbytes() != db.nbytes())
      return false;
  }
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Each stored tensor of a Linear is in the source as its quantization_config says. A BF16 weight
// may be any float dtype (read_as_float decodes it); its shape must still match.
void check_source_tensors(const TensorStore& source, const std::vector<StoredTensor>& stored,
                          LinearLayout from) {
  for (const StoredTensor& s : stored) {
    const TensorRef ref = source.find(s.name);
    if (!ref)
      fail("{}: tensor '{}' is missing: the config stores its Linear as {}", source.dir(), s.name,
           linear_layout_name(from));
    const bool dtype_ok = ref.info->dtype == s.dtype || from == LinearLayout::kBf16;
    if (!dtype_ok || ref.info->shape != s.shape)
      fail("{}: tensor '{}' is {} {}, the config's {} layout stores {} {}", ref.file->path(),
           s.name, dtype_name(ref.info->dtype), shape_text(ref.info->shape),
           linear_layout_name(from), dtype_name(s.dtype), shape_text(s.shape));
  }
}

}  // namespace

std::vector<TensorRole> parse_keep_roles(const std::string& text) {
  std::vector<TensorRole> keep;
  const std::vector<TensorRole> valid = linear_roles();
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string name = text.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty()) continue;
    auto it = std::find_if(valid.begin(), valid.end(), [&](TensorRole role) {
      return tensor_role_name(role) == name ||
             (role == TensorRole::kDenseFfn && name == kDenseAlias);
    });
    if (it == valid.end())
      fail("--keep: unknown role '{}' (expected a comma-separated list of {})", name,
           keep_role_names());
    if (std::find(keep.begin(), keep.end(), *it) == keep.end()) keep.push_back(*it);
  }
  return keep;
}

std::string keep_role_names() {
  std::string names;
  for (TensorRole role : linear_roles()) {
    names += (names.empty() ? "" : ", ") + std::string(tensor_role_name(role));
    if (role == TensorRole::kDenseFfn) names += fmt::format(" (or {})", kDenseAlias);
  }
  return names;
}

std::vector<TensorDecl> QuantizeShard::decls() const {
  std::vector<TensorDecl> out;
  for (const CopiedTensor& c : copies) out.push_back(c.decl);
  for (const RequantizedLinear& l : linears)
    for (const StoredTensor& s : l.outputs) out.push_back({s.name, s.dtype, s.shape});
  return out;
}

uint64_t QuantizeShard::data_bytes() const {
  uint64_t total = 0;
  for (const TensorDecl& d : decls()) total += d.nbytes();
  return total;
}

QuantizePlan plan_quantization(const TensorStore& source, const ModelConfig& model,
                               const QuantConfig& source_quant, QuantScheme target,
                               const std::vector<TensorRole>& keep) {
  if (source_quant.scheme == QuantScheme::kFp8Block &&
      (source_quant.block_n != 128 || source_quant.block_k != 128))
    fail("{}: weight_block_size [{}, {}]: quantize reads 128 x 128 FP8 blocks only", source.dir(),
         source_quant.block_n, source_quant.block_k);
  // MTP modules a checkpoint may carry are quantized like the decoder layers they copy (a release
  // quantizes every Linear its rules do not exclude), so the output's config describes them too.
  std::map<std::string, TensorSpec> specs;
  for (TensorSpec& s : tensor_table(model)) specs.emplace(s.name, std::move(s));
  for (TensorSpec& s : mtp_tensor_specs(model, model.num_mtp_modules))
    specs.emplace(s.name, std::move(s));

  QuantizePlan plan;
  plan.sharded = source.sharded();
  nlohmann::json quant = quantization_config_json(target, model);
  if (target == QuantScheme::kNvfp4) plan.hf_quant_config = hf_quant_config_json(model);
  const std::string output_config = "the output's config.json";
  const QuantConfig standard = detect_quantization(with_quantization_config(model.raw, quant),
                                                   plan.hf_quant_config, output_config);

  // Every Linear the source holds, how the source stores it, and whether it is kept.
  struct Linear {
    const TensorSpec* spec;
    LinearLayout from, to;
    bool kept;
    std::vector<StoredTensor> stored;  // in the source
  };
  std::map<std::string, Linear> linears;  // by weight name
  std::set<std::string> consumed;         // source tensors a Linear reads
  std::vector<std::string> unlisted;      // kept quantized modules the target's list names
  for (const auto& [name, spec] : specs) {
    if (!spec.linear || !source.find(name)) continue;
    const std::string module = module_name(name);
    Linear l{&spec, source_quant.layout_of(module), standard.layout_of(module), false, {}};
    l.stored = stored_tensors(spec, source_quant);
    check_source_tensors(source, l.stored, l.from);
    for (const StoredTensor& s : l.stored) consumed.insert(s.name);
    l.kept = std::find(keep.begin(), keep.end(), spec.role) != keep.end();
    // A kept BF16 Linear the target would quantize joins its list of unquantized modules; a kept
    // quantized one that the list names by its exact name (compressed-tensors lists every module)
    // leaves it, so that the target's own encoding of it is read (checked below).
    if (l.kept && l.from == LinearLayout::kBf16 && l.to != LinearLayout::kBf16)
      plan.kept_unquantized.push_back(module);
    if (l.kept && l.from != LinearLayout::kBf16 && l.to == LinearLayout::kBf16)
      unlisted.push_back(module);
    linears.emplace(name, std::move(l));
  }
  for (TensorRole role : keep) {
    const bool any = std::any_of(linears.begin(), linears.end(), [&](const auto& entry) {
      return entry.second.spec->role == role;
    });
    if (!any)
      log_warn("--keep {}: {} has no Linear of that role; nothing to keep", tensor_role_name(role),
               source.dir());
  }
  add_unquantized_modules(target, quant, plan.hf_quant_config, plan.kept_unquantized);
  remove_unquantized_modules(target, quant, plan.hf_quant_config, unlisted);
  plan.config = with_quantization_config(model.raw, quant);
  plan.target = detect_quantization(plan.config, plan.hf_quant_config, output_config);
  // The config that is written must say of every Linear what the shards hold: kept Linears as the
  // source stores them, the others as the target's release would.
  for (auto& [name, l] : linears) {
    const LinearLayout written = plan.target.layout_of(name);
    const LinearLayout wanted =
        l.kept && l.from == LinearLayout::kBf16 ? LinearLayout::kBf16 : l.to;
    if (l.kept && l.from != LinearLayout::kBf16) {
      if (!same_encoding(l.from, written) ||
          !same_bytes(l.stored, stored_tensors(*l.spec, plan.target)))
        fail(
            "{}: tensor '{}' (--keep {}) is stored as {} in the source; the {} layout stores it "
            "as {} and cannot express {}",
            source.at(name).file->path(), name, tensor_role_name(l.spec->role),
            linear_layout_name(l.from), quant_scheme_name(target), linear_layout_name(written),
            linear_layout_name(l.from));
    } else if (written != wanted) {
      fail("quantize: the {} config would read '{}' as {}, but it is written as {}",
           quant_scheme_name(target), name, linear_layout_name(written),
           linear_layout_name(wanted));
    }
    l.to = written;
  }

  plan.source_bytes = source.total_bytes();
  for (size_t s = 0; s < source.num_shards(); ++s) {
    const SafetensorsFile& file = source.shard(s);
    QuantizeShard shard{source.shard_names()[s], {}, {}};
    for (const TensorInfo& info : file.tensors()) {
      const TensorRef ref{&file, &info};
      auto linear = linears.find(info.name);
      if (linear == linears.end()) {
        if (consumed.count(info.name)) {
          ++plan.scales_consumed;
          continue;
        }
        if (is_scale_tensor(info.name) && !specs.count(module_name(info.name) + ".weight"))
          fail(
              "{}: tensor '{}' quantizes a module outside the tensor table; quantize cannot "
              "re-encode it",
              file.path(), info.name);
        shard.copies.push_back({ref, {info.name, info.dtype, info.shape}});
        ++plan.copied;
        continue;
      }
      const Linear& l = linear->second;
      if (l.kept || (l.from == LinearLayout::kBf16 && l.to == LinearLayout::kBf16)) {
        const std::vector<StoredTensor> declared =
            l.kept ? stored_tensors(*l.spec, plan.target) : l.stored;
        for (size_t i = 0; i < l.stored.size(); ++i) {
          const StoredTensor& d = declared[i];
          // A BF16 weight keeps its own dtype (a release may store some in F32).
          const TensorRef from = source.at(l.stored[i].name);
          shard.copies.push_back(
              {from,
               {d.name, l.from == LinearLayout::kBf16 ? from.info->dtype : d.dtype, d.shape}});
        }
        ++(l.kept ? plan.kept : plan.copied);
        continue;
      }
      RequantizedLinear r;
      r.weight_name = info.name;
      r.from = l.from;
      r.to = l.to;
      r.rows = l.spec->shape.at(0);
      r.cols = l.spec->shape.at(1);
      if (r.to == LinearLayout::kBf16) {
        r.outputs = {{info.name, DType::kBF16, l.spec->shape}};
      } else {
        r.outputs = stored_tensors(*l.spec, plan.target);
      }
      for (const StoredTensor& s : l.stored) r.sources.push_back(source.at(s.name));
      shard.linears.push_back(std::move(r));
      ++plan.requantized;
    }
    plan.output_bytes += shard.data_bytes();
    plan.shards.push_back(std::move(shard));
  }
  return plan;
}

}  // namespace minimax
