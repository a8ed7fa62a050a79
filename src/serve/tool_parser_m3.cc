// The MiniMax-M3 tool-call parser (spec/parsers.md §3.5): every structural tag is preceded by the
// namespace token ]<]minimax[>[ (whitespace between the two is ignored):
//   NS<tool_call> NS<invoke name="f"> NS<key>value NS</key> NS<obj> NS<a>1 NS</a> NS</obj>
//   NS<list> NS<item>x NS</item> NS</list> NS</invoke> NS</tool_call>
// An element holds either text (a leaf, typed by its schema) or child elements (an object; or an
// array when its schema is an array, or, without a schema, when every child is <item>). Repeated
// child tags in an object collect into a list. Leaf text is taken verbatim for strings (the
// format adds no whitespace around values) and trimmed for other types. Text beside child
// elements, a close tag that does not match, or nesting deeper than 64 is malformed.
#include <algorithm>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "serve/marked_text.h"
#include "serve/tool_parser_block.h"

namespace minimax {
namespace {

using ojson = nlohmann::ordered_json;

constexpr size_t kMaxDepth = 64;

class MinimaxM3ToolParser final : public BlockToolParser {
 public:
  explicit MinimaxM3ToolParser(const ToolSchemas& schemas)
      : BlockToolParser(parser_format_spec(ParserFormat::kMinimaxM3), schemas),
        namespace_marker_(spec_.tool_marker) {}

 private:
  enum class Step { kGap, kInvoke };
  enum class Tag { kDone, kNeedMore, kBad };
  struct Element {
    std::string tag;
    const nlohmann::json* schema;
    std::vector<std::pair<std::string, ojson>> children;
  };

  void on_block_start() override { step_ = Step::kGap; }
  void rebase(size_t cut) override {
    text_start_ -= std::min(text_start_, cut);
    scan_ -= std::min(scan_, cut);
  }
  void parse_block(ToolParseOutput& out) override;
  // Handles the tag at `at` inside an invoke; false when it is malformed.
  bool on_invoke_tag(size_t at, std::string_view tag, size_t end, ToolParseOutput& out);

  // The tag after the namespace marker at `at`: its text between '<' and '>', trimmed.
  Tag read_tag(size_t at, std::string& tag, size_t* end) const;
  ojson element_value(const Element& element, size_t text_begin, size_t text_end) const;
  ojson container_value(const Element& element) const;

  const int namespace_marker_;
  Step step_ = Step::kGap;
  std::string invoke_name_;
  const nlohmann::json* parameters_schema_ = nullptr;
  std::vector<Element> stack_;  // stack_[0] is the invoke (the arguments object)
  size_t text_start_ = 0;       // text since the last tag
  size_t scan_ = 0;             // where the search for the next namespace marker resumes
};

MinimaxM3ToolParser::Tag MinimaxM3ToolParser::read_tag(size_t at, std::string& tag,
                                                       size_t* end) const {
  const size_t open = skip_space(at + 1);
  if (open == buf_.size()) return Tag::kNeedMore;
  if (buf_[open] != '<') return Tag::kBad;
  size_t i = open + 1;
  while (i < buf_.size() && buf_[i] != '>' && !is_marker_byte(buf_[i])) ++i;
  if (i == buf_.size()) return i - open > kMaxTagLength ? Tag::kBad : Tag::kNeedMore;
  if (buf_[i] != '>') return Tag::kBad;
  tag = std::string(trim_space(std::string_view(buf_).substr(open + 1, i - open - 1)));
  *end = i + 1;
  return Tag::kDone;
}

void MinimaxM3ToolParser::parse_block(ToolParseOutput& out) {
  while (in_block()) {
    if (step_ == Step::kGap) {
      pos_ = skip_space(pos_);
      if (pos_ == buf_.size()) return;
      if (marker_number(buf_[pos_]) != namespace_marker_) return fail(pos_, out);
      std::string tag;
      size_t end = 0;
      const Tag read = read_tag(pos_, tag, &end);
      if (read == Tag::kNeedMore) return;
      if (read == Tag::kBad) return fail(pos_, out);
      if ("<" + tag + ">" == spec_.tool_end_suffix) {
        close_block(end, out);
        return;
      }
      if (!tag.starts_with("invoke") || tag.size() == 6 || !is_space_char(tag[6]))
        return fail(pos_, out);
      invoke_name_ = parse_name_attribute(std::string_view(tag).substr(6));
      if (invoke_name_.empty()) return fail(pos_, out);
      parameters_schema_ = schemas_.parameters(invoke_name_);
      stack_.assign(1, Element{"", parameters_schema_, {}});
      text_start_ = scan_ = end;
      step_ = Step::kInvoke;
      continue;
    }
    const size_t at = buf_.find(marker_byte(namespace_marker_), scan_);
    if (at == std::string::npos) {
      scan_ = buf_.size();
      return;
    }
    std::string tag;
    size_t end = 0;
    const Tag read = read_tag(at, tag, &end);
    if (read == Tag::kNeedMore) {
      scan_ = at;
      return;
    }
    if (read == Tag::kBad || !on_invoke_tag(at, tag, end, out)) return fail(at, out);
  }
}

bool MinimaxM3ToolParser::on_invoke_tag(size_t at, std::string_view tag, size_t end,
                                        ToolParseOutput& out) {
  Element& top = stack_.back();
  if (tag == "/invoke") {
    if (stack_.size() != 1 || !only_space(text_start_, at)) return false;
    step_ = Step::kGap;
    commit(end, {invoke_name_, container_value(top)}, out);
    return true;
  }
  if (tag.starts_with("/")) {
    const std::string_view name = trim_space(tag.substr(1));
    if (stack_.size() == 1 || name != top.tag) return false;
    if (!top.children.empty() && !only_space(text_start_, at)) return false;
    ojson value = element_value(top, text_start_, at);
    std::string child_tag = std::move(top.tag);
    stack_.pop_back();
    stack_.back().children.emplace_back(std::move(child_tag), std::move(value));
  } else {
    for (char c : tag)
      if (is_space_char(c) || c == '<' || c == '/' || c == '=' || c == '"') return false;
    if (tag.empty() || !only_space(text_start_, at) || stack_.size() > kMaxDepth) return false;
    const unsigned types = schema_types(top.schema, parameters_schema_);
    const bool as_item = (types & kTypeArray) && (!(types & kTypeObject) || tag == "item");
    const nlohmann::json* schema =
        as_item ? item_schema(top.schema, top.children.size(), parameters_schema_)
                : property_schema(top.schema, tag, parameters_schema_);
    stack_.push_back(Element{std::string(tag), schema, {}});
  }
  text_start_ = scan_ = end;
  return true;
}

ojson MinimaxM3ToolParser::element_value(const Element& element, size_t text_begin,
                                         size_t text_end) const {
  if (!element.children.empty()) return container_value(element);
  return coerce_value(rendered(text_begin, text_end), element.schema, parameters_schema_);
}

ojson MinimaxM3ToolParser::container_value(const Element& element) const {
  const bool root = &element == &stack_.front();
  const unsigned types = root ? kTypeObject : schema_types(element.schema, parameters_schema_);
  bool all_items = true;
  for (const auto& child : element.children) all_items = all_items && child.first == "item";
  const bool as_array = (types & kTypeArray) ? (!(types & kTypeObject) || all_items)
                                             : (!(types & kTypeObject) && all_items);
  if (as_array) {
    ojson array = ojson::array();
    for (const auto& child : element.children) array.push_back(child.second);
    return array;
  }
  // Keys in first-seen order; a repeated key collects its values into a list.
  ojson object = ojson::object();
  std::vector<std::pair<std::string, std::vector<const ojson*>>> groups;
  std::unordered_map<std::string_view, size_t> group_of;
  for (const auto& child : element.children) {
    auto [it, added] = group_of.try_emplace(child.first, groups.size());
    if (added) groups.push_back({child.first, {}});
    groups[it->second].second.push_back(&child.second);
  }
  for (const auto& [key, values] : groups) {
    if (values.size() == 1) {
      object[key] = *values[0];
    } else {
      ojson list = ojson::array();
      for (const ojson* value : values) list.push_back(*value);
      object[key] = std::move(list);
    }
  }
  return object;
}

}  // namespace

std::unique_ptr<ToolCallParser> make_minimax_m3_tool_parser(const ToolSchemas& schemas) {
  return std::make_unique<MinimaxM3ToolParser>(schemas);
}

}  // namespace minimax
