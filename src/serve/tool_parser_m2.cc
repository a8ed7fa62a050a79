// The MiniMax-M2 tool-call parser (spec/parsers.md §3.1-§3.2):
//   <minimax:tool_call> <invoke name="f"> <parameter name="k">value</parameter> ... </invoke>
//   ... </minimax:tool_call>
// Values are the text between the parameter tags, whitespace-trimmed (as vLLM and the MiniMax
// guide do), typed by the schema. The block markers are single tokens; the rest is plain text.
#include <algorithm>
#include <memory>

#include "serve/marked_text.h"
#include "serve/tool_parser_block.h"

namespace minimax {
namespace {

constexpr std::string_view kInvokeOpen = "<invoke";
constexpr std::string_view kInvokeClose = "</invoke>";
constexpr std::string_view kParameterOpen = "<parameter";
constexpr std::string_view kParameterClose = "</parameter>";

class MinimaxM2ToolParser final : public BlockToolParser {
 public:
  explicit MinimaxM2ToolParser(const ToolSchemas& schemas)
      : BlockToolParser(parser_format_spec(ParserFormat::kMinimaxM2), schemas),
        block_end_marker_(spec_.tool_end_marker) {}

 private:
  enum class Step { kGap, kInvokeHeader, kInvokeGap, kParameterHeader, kParameterValue };
  enum class Header { kDone, kNeedMore, kBad };

  void on_block_start() override { step_ = Step::kGap; }
  void rebase(size_t cut) override {
    mark_ -= std::min(mark_, cut);
    scan_ -= std::min(scan_, cut);
  }
  void parse_block(ToolParseOutput& out) override;

  // Reads attribute text from mark_ to the next '>' into `name`; scan_ remembers progress.
  Header read_header(std::string& name);
  // An opening tag `literal` followed by whitespace at pos_.
  Match match_open_tag(std::string_view literal) const;

  const int block_end_marker_;  // </minimax:tool_call>
  Step step_ = Step::kGap;
  size_t mark_ = 0;  // start of the header being read, or of the value
  size_t scan_ = 0;  // where the search for '>' or the value's end tag resumes
  std::string invoke_name_, parameter_name_;
  nlohmann::ordered_json arguments_;
  const nlohmann::json* parameters_schema_ = nullptr;
};

BlockToolParser::Match MinimaxM2ToolParser::match_open_tag(std::string_view literal) const {
  const Match match = match_literal(pos_, literal);
  if (match != Match::kYes) return match;
  if (pos_ + literal.size() == buf_.size()) return Match::kPartial;
  return is_space_char(buf_[pos_ + literal.size()]) ? Match::kYes : Match::kNo;
}

MinimaxM2ToolParser::Header MinimaxM2ToolParser::read_header(std::string& name) {
  size_t i = scan_;
  while (i < buf_.size() && buf_[i] != '>' && !is_marker_byte(buf_[i])) ++i;
  if (i == buf_.size()) {
    scan_ = i;
    return i - mark_ > kMaxTagLength ? Header::kBad : Header::kNeedMore;
  }
  if (buf_[i] != '>') return Header::kBad;
  name = parse_name_attribute(std::string_view(buf_).substr(mark_, i - mark_));
  if (name.empty()) return Header::kBad;
  pos_ = i + 1;
  return Header::kDone;
}

void MinimaxM2ToolParser::parse_block(ToolParseOutput& out) {
  while (in_block()) {
    switch (step_) {
      case Step::kGap: {
        pos_ = skip_space(pos_);
        if (pos_ == buf_.size()) return;
        if (marker_number(buf_[pos_]) == block_end_marker_) {
          close_block(pos_ + 1, out);
          return;
        }
        const Match match = match_open_tag(kInvokeOpen);
        if (match == Match::kPartial) return;
        if (match == Match::kNo) return fail(pos_, out);
        mark_ = scan_ = pos_ + kInvokeOpen.size();
        step_ = Step::kInvokeHeader;
        break;
      }
      case Step::kInvokeHeader: {
        const Header header = read_header(invoke_name_);
        if (header == Header::kNeedMore) return;
        if (header == Header::kBad) return fail(pos_, out);
        arguments_ = nlohmann::ordered_json::object();
        parameters_schema_ = schemas_.parameters(invoke_name_);
        step_ = Step::kInvokeGap;
        break;
      }
      case Step::kInvokeGap: {
        pos_ = skip_space(pos_);
        if (pos_ == buf_.size()) return;
        const Match close = match_literal(pos_, kInvokeClose);
        if (close == Match::kYes) {
          step_ = Step::kGap;
          commit(pos_ + kInvokeClose.size(), {invoke_name_, std::move(arguments_)}, out);
          break;
        }
        const Match open = match_open_tag(kParameterOpen);
        if (open == Match::kYes) {
          mark_ = scan_ = pos_ + kParameterOpen.size();
          step_ = Step::kParameterHeader;
          break;
        }
        if (close == Match::kPartial || open == Match::kPartial) return;
        return fail(pos_, out);
      }
      case Step::kParameterHeader: {
        const Header header = read_header(parameter_name_);
        if (header == Header::kNeedMore) return;
        if (header == Header::kBad) return fail(pos_, out);
        mark_ = scan_ = pos_;
        step_ = Step::kParameterValue;
        break;
      }
      case Step::kParameterValue: {
        const size_t end = buf_.find(kParameterClose, scan_);
        const size_t limit = end == std::string::npos ? buf_.size() : end;
        // The block's end marker inside a value: the invoke can no longer be complete.
        const size_t block_end = buf_.find(marker_byte(block_end_marker_), scan_);
        if (block_end < limit) return fail(block_end, out);
        if (end == std::string::npos) {
          scan_ = std::max(mark_, buf_.size() - std::min(buf_.size(), kParameterClose.size()));
          return;
        }
        const std::string value(trim_space(rendered(mark_, end)));
        const nlohmann::json* schema =
            property_schema(parameters_schema_, parameter_name_, parameters_schema_);
        arguments_[parameter_name_] = coerce_value(value, schema, parameters_schema_);
        pos_ = end + kParameterClose.size();
        step_ = Step::kInvokeGap;
        break;
      }
    }
  }
}

}  // namespace

std::unique_ptr<ToolCallParser> make_minimax_m2_tool_parser(const ToolSchemas& schemas) {
  return std::make_unique<MinimaxM2ToolParser>(schemas);
}

}  // namespace minimax
