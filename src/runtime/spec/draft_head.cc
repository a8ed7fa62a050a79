// Loading the draft head of a speculative config (runtime/spec/draft_head.h).
#include "runtime/spec/draft_head.h"

#include "base/log.h"

namespace minimax {

std::shared_ptr<Eagle3Head> load_draft_head(Model& model, const SpeculativeConfig& config) {
  switch (config.method) {
    case DraftMethod::kNgram:
    case DraftMethod::kSuffix:
      return nullptr;
    case DraftMethod::kEagle3: {
      std::shared_ptr<Eagle3Head> head = Eagle3Head::load(config.model, model);
      model.set_hidden_taps(head->config().tap_layers);
      const std::vector<int>& taps = head->config().tap_layers;
      log_info("{}: EAGLE-3 head {}, {} wide, draft vocabulary {}, taps layers {}, {}, {}",
               config.model, head->config().architecture, head->config().hidden_size,
               head->config().draft_vocab_size, taps[0], taps[1], taps[2]);
      return head;
    }
  }
  return nullptr;
}

}  // namespace minimax
