// The draft head a speculative config names (method "eagle3"), loaded for its target model: one
// place for serve's engine and for the generation loop of generate, chat and bench.
#pragma once

#include <memory>

#include "model/eagle3_head.h"
#include "model/model.h"
#include "runtime/spec/speculative_config.h"

namespace minimax {

// Reads config.model's EAGLE-3 head for `model` and makes the model keep the hidden states the
// head taps (Model::set_hidden_taps). Null for the draft-free methods.
std::shared_ptr<Eagle3Head> load_draft_head(Model& model, const SpeculativeConfig& config);

}  // namespace minimax
