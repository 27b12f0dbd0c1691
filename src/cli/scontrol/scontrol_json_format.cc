// `scontrol show ... --json`: one object per record, with the field names of Slurm's REST API
// (data_parser v0.0.38) where one exists. Times are seconds since the epoch (0: unknown), time
// limits minutes (null: unlimited), memory MiB. The shape is stable: fields are only added.
#include <fmt/format.h>

#include "cli/scontrol/scontrol_format.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

// A waiting job's expected start from the plan (0 when it has none).
int64_t PlannedStartTime(const v1::Job& job, const ShowContext& ctx) {
  auto it = ctx.planned.find(job.spec().job_id());
  return it == ctx.planned.end() ? 0 : it->second.start_time();
}

std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

// An object's members in the order added.
class Object {
 public:
  Object& Add(std::string_view key, std::string_view text) { return Raw(key, Quote(text)); }
  Object& Add(std::string_view key, const char* text) { return Raw(key, Quote(text)); }
  Object& Add(std::string_view key, const std::string& text) { return Raw(key, Quote(text)); }
  Object& Add(std::string_view key, bool value) { return Raw(key, value ? "true" : "false"); }
  template <typename Number>
  Object& Add(std::string_view key, Number value) {
    return Raw(key, fmt::format("{}", value));
  }
  Object& Add(std::string_view key, const std::vector<std::string>& items) {
    std::string list = "[";
    for (size_t i = 0; i < items.size(); ++i) list += (i ? "," : "") + Quote(items[i]);
    return Raw(key, list + "]");
  }
  Object& Raw(std::string_view key, std::string_view json) {
    text_ += fmt::format("{}\n      {}: {}", text_.empty() ? "" : ",", Quote(key), json);
    return *this;
  }
  std::string Close() const { return "    {" + text_ + "\n    }"; }

 private:
  std::string text_;
};

// Pulls one "Key=Value" out of a rendered record: JSON and text then agree on every value.
std::map<std::string, std::string> Fields(const Record& record) {
  std::map<std::string, std::string> fields;
  for (const std::string& line : record.lines) {
    // Values may hold spaces only in the last field of a line (Reason=..., OS=...).
    std::vector<std::string> words = Split(std::string(Trim(line)), ' ');
    std::string key;
    for (const std::string& word : words) {
      size_t eq = word.find('=');
      if (eq != std::string::npos && eq > 0 && (key.empty() || word.find('[') != 0)) {
        key = word.substr(0, eq);
        fields[key] = word.substr(eq + 1);
      } else if (!key.empty()) {
        fields[key] += " " + word;
      }
    }
  }
  return fields;
}

// Slurm's openapi v0.0.38 envelope, then each named list of records.
std::string Document(
    std::initializer_list<std::pair<std::string_view, const std::vector<std::string>*>> lists) {
  std::string out =
      "{\n  \"meta\": {\n    \"plugin\": {\"type\": \"openapi\\/v0.0.38\", \"name\": \"Slurm "
      "OpenAPI "
      "v0.0.38\"},\n    \"Slurm\": {\"version\": {\"major\": 22, \"micro\": 8, \"minor\": 5}, "
      "\"release\": \"22.05.8\"}\n  },\n  \"errors\": [\n  ]";
  for (const auto& [name, items] : lists) {
    out += fmt::format(",\n  {}: [", Quote(name));
    for (size_t i = 0; i < items->size(); ++i) out += (i ? ",\n" : "\n") + (*items)[i];
    out += items->empty() ? "]" : "\n  ]";
  }
  return out + "\n}\n";
}

std::string Document(std::string_view name, const std::vector<std::string>& items) {
  return Document({{name, &items}});
}

std::vector<std::string> CommaItems(const std::string& text) {
  std::vector<std::string> items;
  for (const std::string& item : Split(text, ','))
    if (!Trim(item).empty()) items.emplace_back(Trim(item));
  return items;
}

std::string Limit(int64_t seconds) {
  return columns::IsUnlimited(seconds) ? "null" : std::to_string(seconds / 60);
}

}  // namespace

std::string JobsJson(std::span<const v1::Job> jobs, const ShowContext& ctx) {
  std::vector<std::string> items;
  for (const v1::Job& job : jobs) {
    const v1::JobSpec& spec = job.spec();
    auto text = Fields(JobRecord(job, ctx));
    bool array = spec.array_job_id() && spec.array_task_id() != UINT32_MAX;
    Object o;
    o.Add("job_id", spec.job_id())
        .Add("array_job_id", array ? spec.array_job_id() : 0)
        .Raw("array_task_id", array ? std::to_string(spec.array_task_id()) : "null")
        .Add("name", spec.name())
        .Add("user_id", spec.uid())
        .Add("user_name", columns::UserName(ctx.user_name, spec.uid()))
        .Add("group_id", spec.gid())
        .Add("account", spec.account())
        .Add("qos", spec.qos())
        .Add("partition", text["Partition"])
        .Add("priority", std::stoll(text["Priority"]))
        .Add("nice", spec.nice())
        .Add("job_state", job.state())
        .Add("state_reason", text["Reason"])
        .Add("dependency", text["Dependency"] == "(null)" ? "" : text["Dependency"])
        .Add("requeue", spec.requeue())
        .Add("restart_cnt", job.restart_count())
        .Add("batch_flag", !spec.interactive())
        .Add("exit_code", job.exit_code())
        .Add("exit_signal", job.exit_signal())
        .Raw("time_limit",
             Limit(job.time_limit_seconds() ? job.time_limit_seconds() : spec.time_limit_seconds()))
        .Add("submit_time", spec.submit_time())
        .Add("start_time", job.start_time() ? job.start_time() : PlannedStartTime(job, ctx))
        .Add("end_time", job.end_time())
        .Add("suspend_time", job.suspend_time())
        .Add("run_time", text["RunTime"])
        .Add("nodes", job.node_list())
        .Add("batch_host", text["BatchHost"])
        .Add("node_count", text["NumNodes"])
        .Add("cpus", std::stoll(text["NumCPUs"]))
        .Add("tasks", std::stoll(text["NumTasks"]))
        .Add("cpus_per_task", std::stoll(text["CPUs/Task"]))
        .Add("tres_req_str", job.allocation_size() ? "" : text["TRES"])
        .Add("tres_alloc_str", job.allocation_size() ? text["TRES"] : "")
        .Add("tres_per_node", text["TresPerNode"])
        .Add("features", spec.constraint())
        .Add("prefer", spec.prefer())
        .Add("licenses", text["Licenses"] == "(null)" ? "" : text["Licenses"])
        .Add("reservation", spec.reservation())
        .Add("comment", spec.comment())
        .Add("current_working_directory", spec.work_dir())
        .Add("standard_output", text["StdOut"])
        .Add("standard_error", text["StdErr"])
        .Add("standard_input", text["StdIn"]);
    items.push_back(o.Close());
  }
  return Document("jobs", items);
}

namespace {

std::vector<std::string> NodeItems(std::span<const v1::NodeStatus> nodes,
                                   std::span<const v1::Job> jobs, const ShowContext& ctx) {
  std::vector<std::string> items;
  for (const v1::NodeStatus& node : nodes) {
    int index = ctx.cluster ? ctx.cluster->FindNode(node.name()) : -1;
    auto text = Fields(NodeRecord(node, index, jobs, ctx));
    Object o;
    o.Add("name", node.name())
        .Add("hostname", text["NodeHostName"])
        .Add("address", text["NodeAddr"])
        .Add("state", text["State"])
        .Add("cpus", std::stoll(text["CPUTot"]))
        .Add("alloc_cpus", std::stoll(text["CPUAlloc"]))
        .Add("sockets", std::stoll(text["Sockets"]))
        .Add("cores", std::stoll(text["CoresPerSocket"]))
        .Add("threads", std::stoll(text["ThreadsPerCore"]))
        .Add("boards", std::stoll(text["Boards"]))
        .Add("real_memory", std::stoll(text["RealMemory"]))
        .Add("alloc_memory", std::stoll(text["AllocMem"]))
        .Add("features", text["AvailableFeatures"] == "(null)" ? "" : text["AvailableFeatures"])
        .Add("gres", text["Gres"] == "(null)" ? "" : text["Gres"])
        .Add("partitions", CommaItems(text["Partitions"]))
        .Add("reason", node.reason())
        .Add("reason_changed_at", node.reason_time())
        .Add("reason_set_by_user", node.reason().empty()
                                       ? std::string()
                                       : columns::UserName(ctx.user_name, node.reason_uid()))
        .Add("weight", std::stoll(text["Weight"]))
        .Add("tres", text["CfgTRES"])
        .Add("tres_used", text["AllocTRES"]);
    items.push_back(o.Close());
  }
  return items;
}

std::vector<std::string> PartitionItems(std::span<const v1::Partition> partitions,
                                        const ShowContext& ctx) {
  std::vector<std::string> items;
  for (const v1::Partition& partition : partitions) {
    auto text = Fields(PartitionRecord(partition, ctx));
    Object o;
    o.Add("name", partition.name())
        .Add("nodes", partition.node_list())
        .Add("state", partition.state())
        .Add("default", partition.is_default())
        .Add("total_cpus", partition.total_cpus())
        .Add("total_nodes", partition.total_nodes())
        .Raw("max_time", Limit(partition.max_time_seconds()))
        .Raw("default_time", partition.default_time_seconds() < 0
                                 ? "null"
                                 : Limit(partition.default_time_seconds()))
        .Raw("max_nodes", partition.max_nodes() ? std::to_string(partition.max_nodes()) : "null")
        .Add("min_nodes", partition.min_nodes())
        .Add("priority_tier", partition.priority_tier())
        .Add("priority_job_factor", partition.priority_job_factor())
        .Add("over_subscribe", text["OverSubscribe"])
        .Add("preempt_mode", text["PreemptMode"])
        .Add("grace_time", partition.grace_time_seconds())
        .Add("allowed_accounts", text["AllowAccounts"])
        .Add("allowed_qos", text["AllowQos"])
        .Add("qos", partition.qos())
        .Add("hidden", partition.hidden())
        .Add("tres", text["TRES"]);
    items.push_back(o.Close());
  }
  return items;
}

}  // namespace

std::string NodesJson(std::span<const v1::NodeStatus> nodes, std::span<const v1::Job> jobs,
                      const ShowContext& ctx) {
  return Document("nodes", NodeItems(nodes, jobs, ctx));
}

std::string PartitionsJson(std::span<const v1::Partition> partitions, const ShowContext& ctx) {
  return Document("partitions", PartitionItems(partitions, ctx));
}

std::string SinfoJson(std::span<const v1::NodeStatus> nodes, std::span<const v1::Job> jobs,
                      std::span<const v1::Partition> partitions, const ShowContext& ctx) {
  std::vector<std::string> node_items = NodeItems(nodes, jobs, ctx);
  std::vector<std::string> partition_items = PartitionItems(partitions, ctx);
  return Document({{"nodes", &node_items}, {"partitions", &partition_items}});
}

std::string ReservationsJson(std::span<const v1::Reservation> reservations,
                             const ShowContext& ctx) {
  std::vector<std::string> items;
  for (const v1::Reservation& reservation : reservations) {
    auto text = Fields(ReservationRecord(reservation, ctx));
    Object o;
    o.Add("name", reservation.name())
        .Add("start_time", reservation.start_time())
        .Add("end_time", reservation.end_time())
        .Add("node_list", reservation.node_list())
        .Add("node_count", reservation.nodes_size())
        .Add("core_count", std::stoll(text["CoreCnt"]))
        .Add("users",
             std::vector<std::string>(reservation.users().begin(), reservation.users().end()))
        .Add("accounts",
             std::vector<std::string>(reservation.accounts().begin(), reservation.accounts().end()))
        .Add("flags", CommaItems(text["Flags"]))
        .Add("partition", reservation.partition())
        .Add("tres", text["TRES"])
        .Add("state", text["State"]);
    items.push_back(o.Close());
  }
  return Document("reservations", items);
}

}  // namespace drover::cli::scontrol
