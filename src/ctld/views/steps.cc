// See steps.h.
#include "ctld/views/steps.h"

#include <vector>

#include "common/hostlist.h"

namespace drover::ctld::views {

wire::StepLayout StepLayoutOf(const Reply& result, const ClusterConfig& cluster,
                              const std::function<std::string(int node)>& address_of) {
  wire::StepLayout layout;
  layout.step_id = result.step_id;
  std::vector<std::string> names;
  uint32_t ntasks = 0;
  for (size_t i = 0; i < result.step_nodes.size(); ++i) {
    int node = result.step_nodes[i];
    wire::StepNodeInfo out;
    out.name = cluster.nodes[node].name;
    out.address = address_of(node);
    for (size_t k = 0; k < result.job->allocation.nodes.size(); ++k)
      if (result.job->allocation.nodes[k].node == node) out.node_index = static_cast<uint32_t>(k);
    out.tasks = result.step_ranks[i];
    ntasks += static_cast<uint32_t>(out.tasks.size());
    names.push_back(cluster.nodes[node].name);
    layout.nodes.push_back(std::move(out));
  }
  layout.ntasks = ntasks;
  layout.node_list = CompressHostlist(names);
  return layout;
}

}  // namespace drover::ctld::views
