// Fuzzes the configuration reader end to end: the input is split into slurm.conf, gres.conf and
// topology.conf at "\n%%\n" separators and loaded from memory. Any crash, hang or sanitizer
// report is a bug; a diagnostic is the expected answer to garbage.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/cluster_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::optional<std::string> parts[3];
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t separator = i < 2 ? input.find("\n%%\n", start) : std::string::npos;
    parts[i] =
        input.substr(start, separator == std::string::npos ? std::string::npos : separator - start);
    if (separator == std::string::npos) break;
    start = separator + 4;
  }
  drover::ConfigLoad load = drover::LoadClusterConfigText(*parts[0], parts[1], parts[2]);
  // A configuration that loads must be internally consistent.
  if (load.ok()) {
    for (const auto& partition : load.config.partitions)
      for (int node : partition.nodes)
        if (node < 0 || static_cast<size_t>(node) >= load.config.nodes.size()) __builtin_trap();
    for (const auto& node : load.config.nodes)
      if (node.cpus < 1) __builtin_trap();
  }
  return 0;
}
