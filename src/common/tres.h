// Trackable resources (TRES) as Slurm writes them: "cpu=64,mem=512G,node=1,billing=64,
// gres/gpu=8,gres/gpu:h100=8", and the weights of TRESBillingWeights ("CPU=1.0,Mem=0.25G,
// GRES/gpu=2.0").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace drover {

// One count per TRES name. Names are lower-case canonical: "cpu", "mem" (megabytes), "energy",
// "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu", "gres/gpu:h100", "license/NAME".
class TresList {
 public:
  void Set(std::string_view name, uint64_t count);  // replaces an existing entry
  void Add(std::string_view name, uint64_t count);  // adds to an existing entry
  uint64_t Get(std::string_view name) const;        // 0 when absent
  bool Has(std::string_view name) const;
  bool empty() const { return items_.empty(); }
  const std::vector<std::pair<std::string, uint64_t>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, uint64_t>> items_;
};

// Parses "name=count,..."; names are case-insensitive ("CPU=4" is "cpu=4"), mem takes a
// memory size ("512G"), others whole numbers. Errors: "unknown TRES 'gpu' in 'gpu=8' (did you
// mean 'gres/gpu'?)", "invalid count 'x' for TRES 'cpu'".
Result<TresList> ParseTres(std::string_view text);

// Slurm's order (cpu, mem, energy, node, billing, fs/disk, vmem, pages, then gres/..., license/...
// in name order, a typed gres after its untyped one), mem via FormatMemoryMB, zero counts kept.
std::string FormatTres(const TresList& tres);

// TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0". Mem's weight is per GB when given with a
// "G" suffix, per MB otherwise; it is returned per MB. Names canonical as in TresList.
Result<std::vector<std::pair<std::string, double>>> ParseTresWeights(std::string_view text);

}  // namespace drover
