// libFuzzer target for the PMI-1/PMI-2 wire server (agent/host/pmi_wire.h): a step's tasks are
// the user's programs, so any bytes on PMI_FD must be answered or refused without a crash, an
// unbounded buffer or a reply that breaks the framing. The input's first byte picks how the
// bytes are split between two tasks; a fence's part may be anything a hostile node sends.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/host/pmi_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  drover::agent::PmiStep step;
  step.size = 2;
  step.universe_size = 2;
  step.kvsname = "1.0";
  step.process_mapping = drover::agent::PmiProcessMapping({0, 1});
  drover::agent::PmiWireServer server(step, {0, 1});
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t cut = data[0] % (input.size() + 1);
  server.Receive(0, input.substr(0, cut));
  server.Receive(1, input.substr(cut));
  for (size_t local : {0, 1}) {
    std::string replies = server.TakeReplies(local);
    if (replies.size() > 4 * drover::agent::PmiWireServer::kBufferMost) __builtin_trap();
  }
  if (auto part = server.TakeFencePart()) {
    std::vector<std::pair<std::string, std::string>> pairs;
    if (!drover::agent::DecodePmiPairs(*part, pairs)) __builtin_trap();  // ours always decode
    server.FenceDone({*part, std::string(input.substr(0, cut))});
  }
  return 0;
}
