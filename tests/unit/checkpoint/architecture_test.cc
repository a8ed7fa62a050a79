// Every registered architecture record is complete and agrees with the config parser and the
// tensor table; the split rules of each weight are the ones docs/checkpoint.md lists.
#include "checkpoint/arch/architecture.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "checkpoint/tensor_table.h"
#include "checkpoint/tiny_config.h"

namespace minimax {
namespace {

using ::testing::HasSubstr;

ModelConfig tiny(const ArchitectureRecord& record) {
  return parse_model_config(tiny_config_json(record.arch, 256), "tiny/config.json");
}

TEST(ArchitectureRecord, EveryRecordIsComplete) {
  ASSERT_FALSE(registered_architectures().empty());
  std::set<std::string_view> strings;
  for (const ArchitectureRecord* r : registered_architectures()) {
    SCOPED_TRACE(r->architecture);
    for (std::string_view field :
         {r->name, r->architecture, r->model_type, r->description, r->tensor_prefix,
          r->lm_head_name, r->reasoning_parser, r->tool_call_parser, r->chat_template,
          r->markers.think_open, r->markers.think_close, r->markers.tool_open,
          r->markers.tool_close, r->markers.invoke_prefix, r->markers.turns.role_start,
          r->markers.turns.user_role, r->markers.turns.assistant_role, r->markers.turns.tool_role,
          r->markers.turns.end_of_message})
      EXPECT_FALSE(field.empty());
    EXPECT_NE(r->parse_config, nullptr);
    EXPECT_NE(r->tensor_name, nullptr);
    EXPECT_NE(r->parse_tensor_name, nullptr);
    EXPECT_NE(r->layer_of_name, nullptr);
    EXPECT_NE(r->markers.think_open, r->markers.think_close);
    EXPECT_TRUE(strings.insert(r->architecture).second) << "registered twice";
  }
}

TEST(ArchitectureRecord, LookupsRoundTrip) {
  for (const ArchitectureRecord* r : registered_architectures()) {
    SCOPED_TRACE(r->architecture);
    EXPECT_EQ(&find_architecture(r->architecture, "x"), r);
    EXPECT_EQ(architecture_record(r->arch).arch, r->arch);
    EXPECT_EQ(arch_name(r->arch), architecture_record(r->arch).name);
  }
}

TEST(ArchitectureRecord, UnknownArchitectureNamesTheFileAndTheRegisteredOnes) {
  try {
    find_architecture("LlamaForCausalLM", "ckpt/config.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("ckpt/config.json: field 'architectures': 'LlamaForCausalLM'"));
    for (const ArchitectureRecord* r : registered_architectures())
      EXPECT_THAT(message, HasSubstr(std::string(r->architecture)));
  }
}

TEST(ArchitectureRecord, TinyConfigParsesToItsRecord) {
  for (const ArchitectureRecord* r : registered_architectures()) {
    SCOPED_TRACE(r->architecture);
    const ModelConfig c = tiny(*r);
    EXPECT_EQ(c.record, r);
    EXPECT_EQ(&c.architecture_record(), r);
    EXPECT_EQ(c.architecture, r->architecture);
    EXPECT_EQ(c.model_type, r->model_type);
    EXPECT_EQ(c.tensor_prefix, r->tensor_prefix);
    EXPECT_EQ(c.lm_head_name, r->lm_head_name);
  }
}

// The table names exactly what the record spells, every name parses back to its id, and the table
// finds every entry by id.
TEST(ArchitectureRecord, TableNamesAreTheRecordsSpelling) {
  for (const ArchitectureRecord* r : registered_architectures()) {
    SCOPED_TRACE(r->architecture);
    const ModelConfig c = tiny(*r);
    const TensorTable table(c);
    std::set<std::string> names;
    for (const TensorSpec& spec : table.entries()) {
      SCOPED_TRACE(spec.name);
      EXPECT_EQ(spec.name, r->tensor_name(*r, spec.id));
      const std::optional<TensorId> parsed = r->parse_tensor_name(*r, spec.name);
      ASSERT_TRUE(parsed.has_value());
      EXPECT_EQ(*parsed, spec.id);
      EXPECT_EQ(spec.layer, spec.id.layer);
      EXPECT_EQ(spec.expert, spec.id.expert);
      EXPECT_EQ(spec.role, tensor_key_role(spec.id.key));
      EXPECT_EQ(classify_tensor(spec.name, c), spec.role);
      EXPECT_EQ(&table.at(spec.id), &spec);
      EXPECT_TRUE(config_has_tensor(spec.id, c));
      EXPECT_TRUE(names.insert(spec.name).second) << "spelled twice";
      if (spec.id.layer >= 0) {
        EXPECT_EQ(r->layer_of_name(*r, spec.name), spec.id.layer);
      }
    }
    EXPECT_EQ(table.find({TensorKey::kQProj, c.num_layers}), nullptr);
    EXPECT_THROW(table.at({TensorKey::kExpertGate, 0, c.num_experts}), Error);
    EXPECT_FALSE(r->parse_tensor_name(*r, "not.a.tensor").has_value());
  }
}

TEST(SplitRules, FollowTheParallelModes) {
  const ModelConfig m2 = tiny(minimax_m2_record());
  const ModelConfig m3 = tiny(minimax_m3_record());
  const TensorTable t2(m2), t3(m3);
  using K = TensorKey;
  constexpr Split kRep = Split::kReplicated, kRows = Split::kRows, kCols = Split::kCols,
                  kExp = Split::kExpert;
  auto rules = [](const TensorTable& t, TensorId id) { return t.at(id).split; };
  EXPECT_EQ(rules(t2, {K::kEmbedding}), (SplitRules{kRep, kRep, kRep}));
  EXPECT_EQ(rules(t2, {K::kLmHead}), (SplitRules{kRows, kRows, kRep}));
  EXPECT_EQ(rules(t2, {K::kFinalNorm}), (SplitRules{kRep, kRep, kRep}));
  EXPECT_EQ(rules(t2, {K::kInputNorm, 0}), (SplitRules{kRep, kRep, kRep}));
  for (K key : {K::kQProj, K::kKProj, K::kVProj})
    EXPECT_EQ(rules(t2, {key, 1}), (SplitRules{kRows, kRows, kRep}));
  EXPECT_EQ(rules(t2, {K::kOProj, 1}), (SplitRules{kCols, kCols, kRep}));
  // M2's cross-head norm weights go with the heads; M3's per-head ones serve every head.
  EXPECT_EQ(rules(t2, {K::kQNorm, 1}), (SplitRules{kRows, kRows, kRep}));
  EXPECT_EQ(rules(t2, {K::kKNorm, 1}), (SplitRules{kRows, kRows, kRep}));
  EXPECT_EQ(rules(t3, {K::kQNorm, 1}), (SplitRules{kRep, kRep, kRep}));
  EXPECT_EQ(rules(t2, {K::kRouter, 1}), (SplitRules{kRep, kRep, kRep}));
  EXPECT_EQ(rules(t2, {K::kRouterBias, 1}), (SplitRules{kRep, kRep, kRep}));
  EXPECT_EQ(rules(t2, {K::kExpertGate, 1, 3}), (SplitRules{kRows, kExp, kExp}));
  EXPECT_EQ(rules(t2, {K::kExpertUp, 1, 3}), (SplitRules{kRows, kExp, kExp}));
  EXPECT_EQ(rules(t2, {K::kExpertDown, 1, 3}), (SplitRules{kCols, kExp, kExp}));
  const int sparse = 3, dense = 0;
  ASSERT_TRUE(m3.is_sparse_layer(sparse));
  for (K key : {K::kIndexQProj, K::kIndexKProj, K::kIndexQNorm, K::kIndexKNorm})
    EXPECT_EQ(rules(t3, {key, sparse}), (SplitRules{kRep, kRep, kRep}));
  for (K key : {K::kSharedGate, K::kSharedUp})
    EXPECT_EQ(rules(t3, {key, sparse}), (SplitRules{kRows, kRows, kRep}));
  EXPECT_EQ(rules(t3, {K::kSharedDown, sparse}), (SplitRules{kCols, kCols, kRep}));
  ASSERT_FALSE(m3.is_moe_layer(dense));
  for (K key : {K::kDenseGate, K::kDenseUp})
    EXPECT_EQ(rules(t3, {key, dense}), (SplitRules{kRows, kRows, kRep}));
  EXPECT_EQ(rules(t3, {K::kDenseDown, dense}), (SplitRules{kCols, kCols, kRep}));
}

}  // namespace
}  // namespace minimax
