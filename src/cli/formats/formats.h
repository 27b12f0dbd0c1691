// What squeue, sinfo and sacct print, as Slurm 22.05 prints it, from the controller's records:
// pure functions from drover.proto's messages and a few options to text. They never call the
// controller, read a file or the clock (`now` comes in); times print in the local zone (TZ).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/cluster_config.h"
#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::cli {

// Turns a uid into a user name (for sinfo's %u/%U); unset: "root" for 0, else the number.
using UserNameLookup = std::function<std::string(uint32_t uid)>;

// ---------- squeue ----------

struct SqueueOptions {
  std::string format;         // -o; empty: the default, -l's or --start's
  bool no_header = false;     // -h
  bool long_format = false;   // -l: long default format and the date line
  bool start = false;         // --start: pending jobs by expected start
  bool array_unfold = false;  // -r: one line per array task, pending ones too
  std::string sort;           // -S; empty: "P,t,-p" ("S" with --start)
  // -t: long or compact names ("PENDING", "r"), or "all"; empty: pending, running, suspended
  // and completing (only pending with --start).
  std::vector<std::string> states;
  // What the job records do not carry. Priorities: job ID -> priority (%p, %Q and sorting);
  // without one a held job counts as 0 and others rank by age (lower ID first).
  std::map<uint64_t, int64_t> priorities;
  // The last scheduling cycle's expected starts of waiting jobs (--start, %S, %Y).
  std::map<uint64_t, v1::PlannedStart> planned;
  // The partitions: the default one for pending jobs that named none, and DefaultTime/MaxTime
  // for jobs without a time limit. Empty: those print "" and NOT_SET.
  std::vector<v1::Partition> partitions;
  // -O/--Format (or SQUEUE_FORMAT2): "jobid:10,name:.20,state"; used when `format` is empty.
  std::string long_fields;
  bool dated = false;                 // -i, -v: the date line as -l prints it
  bool noconvert = false;             // --noconvert: memory in MiB as given ("2048M", not "2G")
  bool steps = false;                 // -s: the steps of the listed jobs, not the jobs
  std::vector<std::string> step_ids;  // -s LIST: "12.0", "12_3.batch"; empty: every step
  bool per_partition = false;         // -P: a pending job once per partition it may run in
  std::string cluster_name;           // the Cluster field
  std::string cluster_line;           // -M: "CLUSTER: name", after the date line, before the header
  UserNameLookup group_name;          // %g: gid -> group name; unset: the number
};

std::string FormatSqueue(const std::vector<v1::Job>& jobs, const SqueueOptions& options,
                         int64_t now);

// squeue's job lines built one job at a time (not -s): the pending tasks of an array fold into
// one line as they come, so the command keeps a record per line, not per task (a queue of
// 100,000 array tasks is ~100 lines). FormatSqueue is this over a list.
class SqueueLines {
 public:
  // `options` is read again by Format: its priorities and plan may be filled in between.
  SqueueLines(const SqueueOptions& options, int64_t now);
  ~SqueueLines();
  SqueueLines(const SqueueLines&) = delete;
  SqueueLines& operator=(const SqueueLines&) = delete;
  // Takes `job`, in the controller's order. False when it has no line of its own: its state is
  // not shown, or it is a pending array task folded into an earlier task's line (which took its
  // task ID and reason). True: the caller must Add the job, at an address that outlives Format.
  bool NeedsLine(const v1::Job& job);
  void Add(const v1::Job& job);
  size_t size() const;
  // The jobs that have lines, in the order added.
  std::vector<const v1::Job*> Jobs() const;
  // The header, the lines sorted, and what -l/-i/-M print before them. Once: the lines move out
  // (size() and Jobs() are empty after).
  std::string Format();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A job's dependency as squeue's %E and scontrol's Dependency= print it: "afterok:12,
// afterany:7_3" joined by ',' or '?'; "(null)" when it has none.
std::string DependencyText(const v1::Dependency& dependency);

// The lines squeue writes to stderr for a -o string ("Invalid job format specification: !"),
// none when every field is known. FormatSqueue prints such a field literally, as squeue does.
std::vector<std::string> SqueueFormatErrors(std::string_view format, bool steps = false);
// The same for a -O list ("Invalid job format specification: foo"); `steps` for -s's fields.
std::vector<std::string> SqueueLongFormatErrors(std::string_view fields, bool steps);

// ---------- sinfo ----------

struct SinfoOptions {
  std::string format;          // -o; empty: the default for the flags below
  bool no_header = false;      // -h
  bool long_format = false;    // -l
  bool node_oriented = false;  // -N
  bool list_reasons = false;   // -R: down, drained and failed nodes with their reasons
  bool summarize = false;      // -s
  bool all = false;            // -a: hidden partitions too
  bool exact = false;          // -e: group only nodes with the same CPUs, memory, ...
  std::string long_fields;     // -O: "nodelist:20,statelong"; used when `format` is empty
  // -t: nodes in any of these states (sinfo's names and aliases, lower case); an item may join
  // states with '&' (all of them). Empty: every node. Checked by SinfoStatesError.
  std::vector<std::string> states;
  bool dead = false;         // -d: non-responding nodes only
  bool responding = false;   // -r: responding nodes only
  bool dated = false;        // -i, -v: the date line as -l prints it
  bool noconvert = false;    // --noconvert: memory as configured ("2048", not "2G")
  std::string sort;          // -S: "+P,-m"; empty: "#P,-t" ("N" with -N)
  std::string cluster_line;  // -M: "CLUSTER: name", after the date line
  int64_t now = 0;           // the date line of -l
  UserNameLookup user_name;  // %u, %U
};

// `cluster` supplies each node's hardware (CPUs, S:C:T, memory, GRES, features, weight); without
// it those print "N/A". `jobs` (running ones matter; their allocations name nodes by index into
// `cluster`) supply each node's allocated CPUs for %C; without them a MIXED node counts as all
// idle, an ALLOCATED one as all allocated.
std::string FormatSinfo(const std::vector<v1::Partition>& partitions,
                        const std::vector<v1::NodeStatus>& nodes, const ClusterConfig* cluster,
                        const SinfoOptions& options, std::span<const v1::Job> jobs = {});

// sinfo's stderr lines for a -o string ("Invalid node format specification: !").
std::vector<std::string> SinfoFormatErrors(std::string_view format);
// The same for a -O list: "Invalid node format specification: foo".
std::vector<std::string> SinfoLongFormatErrors(std::string_view fields);
// sinfo's error for a -t list with a state it does not know, or nullopt.
std::optional<std::string> SinfoStatesError(const std::vector<std::string>& states);
// sinfo -T: the advance reservations, as Slurm prints them.
std::string FormatSinfoReservations(const std::vector<v1::Reservation>& reservations,
                                    const SinfoOptions& options);

// ---------- sacct ----------

// One item of -j: "N", "N.S", "N_T", "N_T.S" (S: a step number, "batch" or "extern").
struct SacctJobStep {
  uint64_t job_id = 0;
  std::optional<uint32_t> task;  // N_T
  std::string step;              // empty: the whole job
};

// What sacct selects (its job_cond): every list empty selects all.
struct SacctSelection {
  int64_t start = 0, end = 0;       // the window, inclusive (SacctWindow resolves the defaults)
  std::vector<std::string> states;  // Slurm's names ("COMPLETED")
  std::vector<SacctJobStep> jobs;
  std::vector<std::string> accounts, names, partitions, qos, reasons, constraints, wckeys,
      associations, nodes;         // nodes expanded
  std::vector<std::string> flags;  // -F: SchedSubmit, SchedMain, SchedBackfill (any of them)
  std::vector<uint32_t> uids, gids;
  uint32_t min_cpus = 0, max_cpus = 0, min_nodes = 0, max_nodes = 0;  // 0: no bound
  int64_t min_timelimit = 0, max_timelimit = 0;                       // minutes; 0: none
  bool truncate = false;                                              // -T
};

struct SacctOptions {
  std::string fields;        // -o: "JobID,JobName%30,State"; empty: the default (or -b's)
  bool brief = false;        // -b
  bool parsable = false;     // -p: a delimiter after every field
  bool parsable2 = false;    // -P: a delimiter between fields
  std::string delimiter;     // --delimiter; empty: "|"
  bool no_header = false;    // -n
  bool allocations = false;  // -X: no steps
  bool duplicates = false;   // -D: earlier runs of requeued jobs too
  int64_t now = 0;           // Elapsed of running jobs
  std::string cluster_name;  // Cluster
  // Node names of earlier runs, threads per core (CPUs from cores) and DefMemPerCPU.
  const ClusterConfig* cluster = nullptr;
  const SacctSelection* selection = nullptr;  // -j's steps and -T's window; null: all
  char units = 0;              // --units: 'K', 'M', 'G', 'T', 'P'; 0: the largest exact unit
  bool no_convert = false;     // --noconvert: memory in the unit it was given (M)
  bool use_local_uid = false;  // --use-local-uid: UID from the passwd entry of User
};

// -S/-E: Slurm's parse_time with `past` set (a bare HH:MM is today's even when still ahead).
std::optional<int64_t> ParseSacctTime(std::string_view text, int64_t now);
// -s: a state's name or abbreviation, any case ("cd", "Completed", "OOM"); nullopt: unknown.
std::optional<std::string> SacctStateName(std::string_view text);
// -j: one item, N_[1-5,7] expanded to its tasks; the error is Slurm's ("Bad job/step
// specified: x").
Result<std::vector<SacctJobStep>> ParseSacctJobSteps(std::string_view item);
// The DEFAULT TIME WINDOW of sacct(1): without -S, midnight (no -j, no -s), the epoch (-j) or
// now (-s); without -E, now, or with -s the start when -S was given.
void SacctWindow(SacctSelection& selection, bool start_given, bool end_given, int64_t now);
// Whether the job passes every filter and the window (by eligibility, or with -s by being in
// one of the states during it).
bool SacctSelects(const SacctSelection& selection, const v1::Job& job, int64_t now);
// Whether a row of the job prints: `step` "" for the job's own line, else "batch", "0", ...
bool SacctShowsRow(const SacctSelection* selection, const v1::Job& job, std::string_view step);
// --helpformat: the field names in four columns, as Slurm prints them.
std::string SacctFieldHelp();

// Jobs print in the order given, each followed by its batch step (".batch") once it has
// started. Fails like sacct on an unknown field: `Invalid field requested: "Foo"`.
Result<std::string> FormatSacct(const std::vector<v1::Job>& jobs, const SacctOptions& options);
// Slurm 22.05's openapi v0.0.38 "meta" object (JSON text), which sacct's, sdiag's and the REST
// API's documents open with.
extern const char kOpenapiMeta[];

// sacct --json: Slurm's openapi v0.0.38 document ({"meta", "errors", "jobs": [...]}), each job
// with its steps ("N.batch", "N.0", ...), times in seconds since the epoch; see docs/cli.md.
std::string FormatSacctJson(const std::vector<v1::Job>& jobs, const SacctOptions& options);

// ---------- shared by the three formatters (formats.cc) ----------
namespace columns {

// One %-field of a -o string: "%.18i" is {'i', 18, right}; `token` is the text after '%'.
struct FieldSpec {
  char letter = 0;
  std::string name;  // a -O field ("jobid"), lower case; empty for a %-field
  int width = 0;
  bool right = false;
  std::string suffix;  // text up to the next '%'
  std::string token;
};

struct PercentFormat {
  std::string prefix;  // text before the first '%'
  std::vector<FieldSpec> fields;
};

// Slurm's -o grammar: '%' ['.'] [width] letter suffix; empty tokens ("%%") are skipped.
PercentFormat ParsePercentFormat(std::string_view format);
// Slurm's -O grammar: "type[:[.][size][suffix]]" joined by ','; 20 wide, left, by default.
PercentFormat ParseLongFormat(std::string_view fields);

// SLURM_TIME_FORMAT for the times IsoTime prints: "standard" (or unset), "relative" (Slurm's
// "Ystday 12:30", "Tomorr 08:00", "Mon 10:00", "3 Feb 10:00"; relative to `now`) or a strftime
// format. Set once by a command before it prints.
void SetTimeFormat(std::string_view format, int64_t now);

// --yaml: the same document as --json, as Slurm's YAML serializer writes it.
std::string JsonToYaml(std::string_view json);

// Slurm's _print_str: `width` 0 prints as is; left-justified text is cut to the width;
// right-justified text longer than the width is cut only when `cut`.
std::string Pad(std::string_view text, int width, bool right, bool cut = true);

std::string IsoTime(int64_t time);      // "2026-11-29T15:10:57" (local time)
std::string DateLine(int64_t time);     // "Sun Nov 29 15:10:57 2026" (local time)
std::string ElapsedText(int64_t secs);  // squeue/sinfo: "0:02", "1:00:00", "2-00:00:00"
bool IsUnlimited(int64_t seconds);      // INT64_MAX or negative

std::string ArrayRanges(std::vector<uint32_t> tasks);  // "0-2,5", as Slurm's bit_fmt
std::string UserName(const UserNameLookup& lookup, uint32_t uid);

// CPUs a job asked for: tasks (or nodes) times CPUs per task.
uint32_t RequestedCpus(const v1::JobSpec& spec);
// CPUs of an allocation: cores times the node's threads per core (1 without a cluster).
uint32_t AllocatedCpus(const v1::NodeAllocation& node, const ClusterConfig* cluster);

// GPU shares (gres/shard, gres/mps) a job asked for, per node; per_node 0 when none.
struct SharedGres {
  std::string name;
  uint64_t per_node = 0;
};
SharedGres SharedGresOf(const v1::JobSpec& spec);
// The shares a job asks for in all: its per-node count times `nodes`.
SharedGres SharedGresOn(const v1::JobSpec& spec, uint64_t nodes);
// The shares an allocation holds, over its nodes.
uint64_t AllocatedShares(const v1::Job& job);
// A GPU count for a TRES string: whole GPUs only (a node's part that shares a GPU has none).
uint64_t AllocatedGpus(const v1::NodeAllocation& node);

// The weight and active features in force (the controller's: what scontrol update node set
// over slurm.conf) onto `cluster`'s nodes; a controller that does not say them (weight 0)
// leaves slurm.conf's.
void ApplyNodeSettings(const google::protobuf::RepeatedPtrField<v1::NodeStatus>& nodes,
                       ClusterConfig& cluster);
// AvailableFeatures: the controller's, else slurm.conf's.
std::string AvailableFeatures(const v1::NodeStatus& node, const NodeConfig& config);

}  // namespace columns
}  // namespace drover::cli
