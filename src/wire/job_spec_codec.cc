// JobSpec <-> v1::JobSpec (see job_spec_codec.h). Reading is strict about what a record may
// hold: proto3 enums are open and counts may be zero in a damaged or hostile message.
#include "wire/job_spec_codec.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "wire/repeated.h"

namespace drover::wire {
namespace {

v1::Dependency::Type ToProto(DependencyType type) {
  switch (type) {
    case DependencyType::kAfter:
      return v1::Dependency::AFTER;
    case DependencyType::kAfterAny:
      return v1::Dependency::AFTER_ANY;
    case DependencyType::kAfterOk:
      return v1::Dependency::AFTER_OK;
    case DependencyType::kAfterNotOk:
      return v1::Dependency::AFTER_NOT_OK;
    case DependencyType::kAfterCorr:
      return v1::Dependency::AFTER_CORR;
    case DependencyType::kSingleton:
      return v1::Dependency::SINGLETON;
  }
  return v1::Dependency::AFTER_ANY;
}

// proto3 enums are open: a record may carry a number this build does not know.
std::optional<DependencyType> FromProto(int type) {
  switch (type) {
    case v1::Dependency::AFTER:
      return DependencyType::kAfter;
    case v1::Dependency::AFTER_ANY:
      return DependencyType::kAfterAny;
    case v1::Dependency::AFTER_OK:
      return DependencyType::kAfterOk;
    case v1::Dependency::AFTER_NOT_OK:
      return DependencyType::kAfterNotOk;
    case v1::Dependency::AFTER_CORR:
      return DependencyType::kAfterCorr;
    case v1::Dependency::SINGLETON:
      return DependencyType::kSingleton;
    default:
      return std::nullopt;
  }
}

v1::JobSpec::Hold ToProto(HoldKind hold) {
  switch (hold) {
    case HoldKind::kNone:
      return v1::JobSpec::NONE;
    case HoldKind::kUser:
      return v1::JobSpec::USER;
    case HoldKind::kAdmin:
      return v1::JobSpec::ADMIN;
  }
  return v1::JobSpec::NONE;
}

std::optional<HoldKind> HoldFromProto(int hold) {
  switch (hold) {
    case v1::JobSpec::NONE:
      return HoldKind::kNone;
    case v1::JobSpec::USER:
      return HoldKind::kUser;
    case v1::JobSpec::ADMIN:
      return HoldKind::kAdmin;
    default:
      return std::nullopt;
  }
}

void ToProto(const DependencySpec& dependency, v1::Dependency* out) {
  for (const DependencyTerm& term : dependency.terms) {
    v1::Dependency::Term* t = out->add_terms();
    t->set_type(ToProto(term.type));
    t->set_job_id(term.job_id);
    t->set_delay_seconds(term.delay_seconds);
    if (term.array_task_id != UINT32_MAX) t->set_array_task_id(term.array_task_id);
  }
  out->set_any(dependency.any);
}

Result<DependencySpec> FromProto(const v1::Dependency& dependency, uint64_t job_id) {
  DependencySpec out;
  for (const v1::Dependency::Term& t : dependency.terms()) {
    std::optional<DependencyType> type = FromProto(t.type());
    if (!type) {
      return MakeError(
          fmt::format("job {}: unknown dependency type {} in the store", job_id, t.type()));
    }
    out.terms.push_back({*type, t.job_id(), t.delay_seconds(),
                         t.has_array_task_id() ? t.array_task_id() : UINT32_MAX});
  }
  out.any = dependency.any();
  return out;
}

// Scalar fields of JobSpec, split from the repeated and nested ones to keep functions short.
void SpecScalarsToProto(const JobSpec& spec, v1::JobSpec* out) {
  out->set_job_id(spec.job_id);
  out->set_array_job_id(spec.array_job_id);
  out->set_array_task_id(spec.array_task_id);
  out->set_name(spec.name);
  out->set_user(spec.user);
  out->set_account(spec.account);
  out->set_qos(spec.qos);
  out->set_uid(spec.uid);
  out->set_gid(spec.gid);
  out->set_min_nodes(spec.min_nodes);
  out->set_max_nodes(spec.max_nodes);
  out->set_ntasks(spec.ntasks);
  out->set_ntasks_per_node(spec.ntasks_per_node);
  out->set_cpus_per_task(spec.cpus_per_task);
  out->set_cpus_per_task_given(spec.cpus_per_task_given);
  out->set_ntasks_given(spec.ntasks_given);
  out->set_mem_per_node_mb(spec.mem_per_node_mb);
  out->set_mem_per_cpu_mb(spec.mem_per_cpu_mb);
  out->set_mem_per_gpu_mb(spec.mem_per_gpu_mb);
  out->set_gpu_type(spec.gpu_type);
  out->set_gpus(spec.gpus);
  out->set_gpus_per_node(spec.gpus_per_node);
  out->set_gpus_per_task(spec.gpus_per_task);
  out->set_cpus_per_gpu(spec.cpus_per_gpu);
  out->set_constraint(spec.constraint);
  out->set_exclusive(spec.exclusive);
  out->set_min_cpus_per_node(spec.min_cpus_per_node);
  out->set_min_tmp_disk_mb(spec.min_tmp_disk_mb);
  out->set_min_sockets(spec.min_sockets);
  out->set_min_cores_per_socket(spec.min_cores_per_socket);
  out->set_min_threads_per_core(spec.min_threads_per_core);
  out->set_overcommit(spec.overcommit);
  out->set_priority(spec.priority);
  out->set_contiguous(spec.contiguous);
  out->set_time_limit_seconds(spec.time_limit_seconds);
  out->set_time_min_seconds(spec.time_min_seconds);
  out->set_submit_time(spec.submit_time);
  out->set_begin_time(spec.begin_time);
  out->set_nice(spec.nice);
  out->set_switches(spec.switches);
  out->set_switch_wait_seconds(spec.switch_wait_seconds);
  out->set_segment(spec.segment);
  out->set_reservation(spec.reservation);
  out->set_array_max_running(spec.array_max_running);
  out->set_signal_number(spec.signal_number);
  out->set_signal_seconds(spec.signal_seconds);
  out->set_signal_batch_only(spec.signal_batch_only);
  out->set_requeue(spec.requeue);
  out->set_interactive(spec.interactive);
  out->set_work_dir(spec.work_dir);
  out->set_stdout_path(spec.stdout_path);
  out->set_stderr_path(spec.stderr_path);
  out->set_stdin_path(spec.stdin_path);
  for (const std::string& variable : spec.environment) out->add_environment(variable);
  for (const std::string& argument : spec.script_args) out->add_script_args(argument);
  out->set_comment(spec.comment);
  out->set_prefer(spec.prefer);
  out->set_spread_job(spec.spread_job);
  out->set_oversubscribe(spec.oversubscribe);
  out->set_licenses(spec.licenses);
  out->set_batch_features(spec.batch_features);
  if (spec.core_spec) out->set_core_spec(*spec.core_spec);
  if (spec.thread_spec) out->set_thread_spec(*spec.thread_spec);
  out->set_gres_flags(spec.gres_flags);
  out->set_deadline(spec.deadline);
  out->set_kill_on_invalid_dep(spec.kill_on_invalid_dep);
  out->set_no_kill(spec.no_kill);
  out->set_mail_type(spec.mail_type);
  out->set_mail_user(spec.mail_user);
  for (const std::string& limit : spec.rlimits) out->add_rlimits(limit);
  out->set_get_user_env(spec.get_user_env);
  out->set_admin_comment(spec.admin_comment);
  out->set_site_factor(spec.site_factor);
}

void SpecScalarsFromProto(const v1::JobSpec& spec, JobSpec* out) {
  out->job_id = spec.job_id();
  out->array_job_id = spec.array_job_id();
  out->array_task_id = spec.array_task_id();
  out->name = spec.name();
  out->user = spec.user();
  out->account = spec.account();
  out->qos = spec.qos();
  out->uid = spec.uid();
  out->gid = spec.gid();
  out->min_nodes = spec.min_nodes();
  out->max_nodes = spec.max_nodes();
  out->ntasks = spec.ntasks();
  out->ntasks_per_node = spec.ntasks_per_node();
  out->cpus_per_task = spec.cpus_per_task();
  out->cpus_per_task_given = spec.cpus_per_task_given();
  out->ntasks_given = spec.ntasks_given();
  out->mem_per_node_mb = spec.mem_per_node_mb();
  out->mem_per_cpu_mb = spec.mem_per_cpu_mb();
  out->mem_per_gpu_mb = spec.mem_per_gpu_mb();
  out->gpu_type = spec.gpu_type();
  out->gpus = spec.gpus();
  out->gpus_per_node = spec.gpus_per_node();
  out->gpus_per_task = spec.gpus_per_task();
  out->cpus_per_gpu = spec.cpus_per_gpu();
  out->constraint = spec.constraint();
  out->exclusive = spec.exclusive();
  out->min_cpus_per_node = spec.min_cpus_per_node();
  out->min_tmp_disk_mb = spec.min_tmp_disk_mb();
  out->min_sockets = spec.min_sockets();
  out->min_cores_per_socket = spec.min_cores_per_socket();
  out->min_threads_per_core = spec.min_threads_per_core();
  out->overcommit = spec.overcommit();
  out->priority = spec.priority();
  out->contiguous = spec.contiguous();
  out->time_limit_seconds = spec.time_limit_seconds();
  out->time_min_seconds = spec.time_min_seconds();
  out->submit_time = spec.submit_time();
  out->begin_time = spec.begin_time();
  out->nice = spec.nice();
  out->switches = spec.switches();
  out->switch_wait_seconds = spec.switch_wait_seconds();
  out->segment = spec.segment();
  out->reservation = spec.reservation();
  out->array_max_running = spec.array_max_running();
  out->signal_number = spec.signal_number();
  out->signal_seconds = spec.signal_seconds();
  out->signal_batch_only = spec.signal_batch_only();
  out->requeue = spec.requeue();
  out->interactive = spec.interactive();
  out->work_dir = spec.work_dir();
  out->stdout_path = spec.stdout_path();
  out->stderr_path = spec.stderr_path();
  out->stdin_path = spec.stdin_path();
  out->environment.assign(spec.environment().begin(), spec.environment().end());
  out->script_args.assign(spec.script_args().begin(), spec.script_args().end());
  out->comment = spec.comment();
  out->prefer = spec.prefer();
  out->spread_job = spec.spread_job();
  out->oversubscribe = spec.oversubscribe();
  out->licenses = spec.licenses();
  out->batch_features = spec.batch_features();
  if (spec.has_core_spec()) out->core_spec = spec.core_spec();
  if (spec.has_thread_spec()) out->thread_spec = spec.thread_spec();
  out->gres_flags = spec.gres_flags();
  out->deadline = spec.deadline();
  out->kill_on_invalid_dep = spec.kill_on_invalid_dep();
  out->no_kill = spec.no_kill();
  out->mail_type = spec.mail_type();
  out->mail_user = spec.mail_user();
  out->rlimits.assign(spec.rlimits().begin(), spec.rlimits().end());
  out->get_user_env = spec.get_user_env();
  out->admin_comment = spec.admin_comment();
  out->site_factor = spec.site_factor();
}

Status CheckShape(const v1::JobSpec& spec) {
  if (spec.min_nodes() == 0) {
    return MakeError(fmt::format("job {}: min_nodes is 0 in the store", spec.job_id()));
  }
  if (spec.ntasks() == 0) {
    return MakeError(fmt::format("job {}: ntasks is 0 in the store", spec.job_id()));
  }
  return OkStatus();
}

}  // namespace

void ToProto(const JobSpec& spec, v1::JobSpec* out) {
  SpecScalarsToProto(spec, out);
  Assign(spec.partitions, out->mutable_partitions());
  for (const GresSpec& gres : spec.other_gres) {
    v1::Gres* g = out->add_other_gres();
    g->set_name(gres.name);
    g->set_type(gres.type);
    g->set_count(gres.count);
  }
  Assign(spec.nodelist, out->mutable_nodelist());
  Assign(spec.exclude, out->mutable_exclude());
  ToProto(spec.dependency, out->mutable_dependency());
  out->set_hold(ToProto(spec.hold));
}

Result<JobSpec> FromProto(const v1::JobSpec& spec) {
  if (Status s = CheckShape(spec); !s) return std::move(s).take_error();
  for (int i = 0; i < spec.script_args_size(); ++i)
    if (spec.script_args(i).find('\0') != std::string::npos)
      return MakeError(fmt::format("script argument {} contains a NUL character", i + 1));
  JobSpec out;
  SpecScalarsFromProto(spec, &out);
  out.partitions = ToVector<std::string>(spec.partitions());
  for (const v1::Gres& g : spec.other_gres()) {
    out.other_gres.push_back({g.name(), g.type(), g.count(), {}});
  }
  out.nodelist = ToVector<std::string>(spec.nodelist());
  out.exclude = ToVector<std::string>(spec.exclude());
  Result<DependencySpec> dependency = FromProto(spec.dependency(), spec.job_id());
  if (!dependency) return std::move(dependency).take_error();
  out.dependency = std::move(dependency).value();
  std::optional<HoldKind> hold = HoldFromProto(spec.hold());
  if (!hold) {
    return MakeError(
        fmt::format("job {}: unknown hold kind {} in the store", spec.job_id(), spec.hold()));
  }
  out.hold = *hold;
  return out;
}

}  // namespace drover::wire
