// What the engine's test fixtures share: one client event applied as a batch of its own, and
// its reply.
#pragma once

#include <utility>
#include <vector>

#include "ctld/engine/engine.h"

namespace drover::ctld {

// Applies `event` under the next token; `last` keeps the batch's output. The reply to it, or
// a refusal that says none came.
inline Reply AskEngine(Engine& engine, uint64_t& token, EngineOutput& last, Event event) {
  std::visit(
      [&](auto& e) {
        if constexpr (requires { e.token; }) e.token = ++token;
      },
      event);
  std::vector<Event> batch;
  batch.push_back(std::move(event));
  last = engine.Apply(std::move(batch));
  for (const Effect& effect : last.effects)
    if (auto* reply = std::get_if<Reply>(&effect); reply && reply->token == token) return *reply;
  return Reply{0, false, "no reply", {}, {}};
}

}  // namespace drover::ctld
