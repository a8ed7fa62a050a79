// Names of the splits (checkpoint/tensor_key.h); the key helpers read the rows (tensor_rows.cc).
#include "checkpoint/tensor_key.h"

namespace minimax {

std::string_view split_name(Split split) {
  switch (split) {
    case Split::kReplicated:
      return "replicated";
    case Split::kRows:
      return "rows";
    case Split::kCols:
      return "cols";
    case Split::kExpert:
      return "expert";
  }
  return "unknown";
}

}  // namespace minimax
