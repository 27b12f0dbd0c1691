// --constraint: node features joined by '&' (all) or '|' (any), with counts ("a100*2&ib": at
// least two of the job's nodes have a100, and every node has ib). Parsed once per job.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover::sched {

struct Constraint {
  struct Term {
    std::string feature;
    int count = 0;  // 0: every node (for '&') / any node (for '|'); N: at least N nodes
  };
  std::vector<Term> terms;
  bool any = false;  // '|' rather than '&'

  bool empty() const { return terms.empty(); }
  // Whether a node with these features may be one of the job's nodes.
  bool NodeMatches(const std::vector<std::string>& features) const;
  // Whether the chosen nodes' features satisfy the counted terms.
  bool CountsMet(const std::vector<const std::vector<std::string>*>& nodes) const;
};

// Errors: "invalid constraint 'a&&b' (expected features joined by & or |, e.g. a100&ib, with
// optional counts like a100*2)".
Result<Constraint> ParseConstraint(std::string_view text);

}  // namespace drover::sched
