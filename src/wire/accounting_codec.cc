// Accounting records to and from accounting.proto; TRES limits travel as Slurm's text.
#include "wire/accounting_codec.h"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace drover::wire {
namespace {

void ToProto(const acct::Limits& limits, v1::AccountingLimits* out) {
  out->set_grp_jobs(limits.grp_jobs);
  out->set_grp_submit_jobs(limits.grp_submit_jobs);
  out->set_grp_wall_minutes(limits.grp_wall_minutes);
  out->set_grp_tres(FormatTres(limits.grp_tres));
  out->set_grp_tres_mins(FormatTres(limits.grp_tres_mins));
  out->set_grp_tres_run_mins(FormatTres(limits.grp_tres_run_mins));
  out->set_max_jobs(limits.max_jobs);
  out->set_max_submit_jobs(limits.max_submit_jobs);
  out->set_max_wall_minutes(limits.max_wall_minutes);
  out->set_max_tres(FormatTres(limits.max_tres));
  out->set_max_tres_per_node(FormatTres(limits.max_tres_per_node));
  out->set_max_tres_mins(FormatTres(limits.max_tres_mins));
}

Status ReadTres(const std::string& text, TresList& out, std::string_view what) {
  if (text.empty()) return OkStatus();
  auto tres = ParseTres(text);
  if (!tres) return MakeError(fmt::format("{}: {}", what, tres.error()));
  out = std::move(*tres);
  return OkStatus();
}

Status FromProto(const v1::AccountingLimits& in, acct::Limits& out, std::string_view what) {
  out.grp_jobs = in.grp_jobs();
  out.grp_submit_jobs = in.grp_submit_jobs();
  out.grp_wall_minutes = in.grp_wall_minutes();
  out.max_jobs = in.max_jobs();
  out.max_submit_jobs = in.max_submit_jobs();
  out.max_wall_minutes = in.max_wall_minutes();
  const std::pair<const std::string*, TresList*> lists[] = {
      {&in.grp_tres(), &out.grp_tres},
      {&in.grp_tres_mins(), &out.grp_tres_mins},
      {&in.grp_tres_run_mins(), &out.grp_tres_run_mins},
      {&in.max_tres(), &out.max_tres},
      {&in.max_tres_per_node(), &out.max_tres_per_node},
      {&in.max_tres_mins(), &out.max_tres_mins}};
  for (const auto& [text, list] : lists) {
    if (Status read = ReadTres(*text, *list, what); !read) return read;
  }
  return OkStatus();
}

}  // namespace

void ToProto(const acct::Database& database, v1::AccountingDatabase* out) {
  for (const acct::Cluster& cluster : database.clusters)
    out->add_clusters()->set_name(cluster.name);
  for (const acct::Account& account : database.accounts) {
    v1::AccountingAccount* record = out->add_accounts();
    record->set_name(account.name);
    record->set_description(account.description);
    record->set_organization(account.organization);
  }
  for (const acct::User& user : database.users) {
    v1::AccountingUser* record = out->add_users();
    record->set_name(user.name);
    record->set_default_account(user.default_account);
    record->set_admin_level(static_cast<uint32_t>(user.admin_level));
  }
  for (const acct::Association& association : database.associations) {
    v1::AccountingAssociation* record = out->add_associations();
    record->set_id(association.id);
    record->set_cluster(association.cluster);
    record->set_account(association.account);
    record->set_user(association.user);
    record->set_partition(association.partition);
    record->set_parent(association.parent);
    record->set_shares(association.shares);
    record->set_priority(association.priority);
    ToProto(association.limits, record->mutable_limits());
    for (const std::string& qos : association.qos) record->add_qos(qos);
    record->set_default_qos(association.default_qos);
  }
  for (const acct::Qos& qos : database.qos) {
    v1::AccountingQos* record = out->add_qos();
    record->set_id(qos.id);
    record->set_name(qos.name);
    record->set_description(qos.description);
    record->set_priority(qos.priority);
    ToProto(qos.limits, record->mutable_limits());
    record->set_max_tres_per_user(FormatTres(qos.max_tres_per_user));
    record->set_max_tres_per_account(FormatTres(qos.max_tres_per_account));
    record->set_min_tres(FormatTres(qos.min_tres));
    record->set_max_jobs_per_account(qos.max_jobs_per_account);
    record->set_max_submit_per_account(qos.max_submit_per_account);
    for (const std::string& preempt : qos.preempt) record->add_preempt(preempt);
    record->set_preempt_mode(qos.preempt_mode);
    record->set_grace_seconds(qos.grace_seconds);
    record->set_preempt_exempt_seconds(qos.preempt_exempt_seconds);
    record->set_flags(qos.flags);
    record->set_usage_factor(qos.usage_factor);
    record->set_usage_threshold(qos.usage_threshold);
  }
  out->set_next_association_id(database.next_association_id);
  out->set_next_qos_id(database.next_qos_id);
}

Result<acct::Database> FromProto(const v1::AccountingDatabase& in) {
  acct::Database database;
  for (const v1::AccountingCluster& cluster : in.clusters())
    database.clusters.push_back({cluster.name()});
  for (const v1::AccountingAccount& account : in.accounts())
    database.accounts.push_back({account.name(), account.description(), account.organization()});
  for (const v1::AccountingUser& user : in.users()) {
    if (user.admin_level() > static_cast<uint32_t>(acct::AdminLevel::kAdministrator))
      return MakeError(
          fmt::format("user {}: unknown admin level {}", user.name(), user.admin_level()));
    database.users.push_back(
        {user.name(), user.default_account(), static_cast<acct::AdminLevel>(user.admin_level())});
  }
  for (const v1::AccountingAssociation& record : in.associations()) {
    acct::Association association;
    association.id = record.id();
    association.cluster = record.cluster();
    association.account = record.account();
    association.user = record.user();
    association.partition = record.partition();
    association.parent = record.parent();
    association.shares = record.shares();
    association.priority = record.priority();
    auto what = fmt::format("association {}", record.id());
    if (Status read = FromProto(record.limits(), association.limits, what); !read)
      return std::move(read).take_error();
    association.qos.assign(record.qos().begin(), record.qos().end());
    association.default_qos = record.default_qos();
    database.associations.push_back(std::move(association));
  }
  for (const v1::AccountingQos& record : in.qos()) {
    acct::Qos qos;
    qos.id = record.id();
    qos.name = record.name();
    qos.description = record.description();
    qos.priority = record.priority();
    auto what = fmt::format("QOS {}", record.name());
    if (Status read = FromProto(record.limits(), qos.limits, what); !read)
      return std::move(read).take_error();
    const std::pair<const std::string*, TresList*> lists[] = {
        {&record.max_tres_per_user(), &qos.max_tres_per_user},
        {&record.max_tres_per_account(), &qos.max_tres_per_account},
        {&record.min_tres(), &qos.min_tres}};
    for (const auto& [text, list] : lists) {
      if (Status read = ReadTres(*text, *list, what); !read) return std::move(read).take_error();
    }
    qos.max_jobs_per_account = record.max_jobs_per_account();
    qos.max_submit_per_account = record.max_submit_per_account();
    qos.preempt.assign(record.preempt().begin(), record.preempt().end());
    qos.preempt_mode = record.preempt_mode().empty() ? "cluster" : record.preempt_mode();
    qos.grace_seconds = record.grace_seconds();
    qos.preempt_exempt_seconds = record.preempt_exempt_seconds();
    qos.flags = record.flags();
    qos.usage_factor = record.usage_factor();
    qos.usage_threshold = record.usage_threshold();
    database.qos.push_back(std::move(qos));
  }
  database.next_association_id = in.next_association_id();
  database.next_qos_id = in.next_qos_id();
  return database;
}

}  // namespace drover::wire
