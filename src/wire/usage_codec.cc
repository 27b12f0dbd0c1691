// See usage_codec.h.
#include "wire/usage_codec.h"

namespace drover::wire {
namespace {

void StatToProto(const UsageStat& stat, v1::UsageStat* out) {
  out->set_total(stat.total);
  out->set_max(stat.max);
  out->set_max_node(stat.max_node);
  out->set_max_task(stat.max_task);
  out->set_min(stat.min);
  out->set_min_node(stat.min_node);
  out->set_min_task(stat.min_task);
}

UsageStat StatFromProto(const v1::UsageStat& stat) {
  return UsageStat{stat.total(), stat.max(),      stat.max_node(), stat.max_task(),
                   stat.min(),   stat.min_node(), stat.min_task()};
}

}  // namespace

void ToProto(const TaskUsage& usage, v1::Usage* out) {
  if (!usage.measured()) return;
  out->set_tasks(usage.tasks);
  out->set_user_cpu_seconds(usage.user_cpu_seconds);
  out->set_system_cpu_seconds(usage.system_cpu_seconds);
  StatToProto(usage.cpu, out->mutable_cpu());
  StatToProto(usage.rss, out->mutable_rss());
}

TaskUsage FromProto(const v1::Usage& usage) {
  TaskUsage out;
  out.tasks = usage.tasks();
  out.user_cpu_seconds = usage.user_cpu_seconds();
  out.system_cpu_seconds = usage.system_cpu_seconds();
  out.cpu = StatFromProto(usage.cpu());
  out.rss = StatFromProto(usage.rss());
  return out;
}

}  // namespace drover::wire
