// Tables of the keys Slurm documents for slurm.conf(5), gres.conf(5) and topology.conf(5),
// gathered from Slurm's man pages and from the option tables of its configuration parser
// (src/common/read_config.c, src/common/gres.c) for releases 22.05 through 26.05.
#include "common/documented_keys.h"

namespace drover {

// Top-level slurm.conf parameters. Later releases add keys and retire others; a configuration
// written for any release from 22.05 on should find every key it uses here.
static constexpr std::string_view kSlurmConfKeys[] = {
    "AccountingStorageBackupHost",
    "AccountingStorageEnforce",
    "AccountingStorageExternalHost",
    "AccountingStorageHost",
    "AccountingStorageLoc",
    "AccountingStorageParameters",
    "AccountingStoragePass",
    "AccountingStoragePort",
    "AccountingStorageTRES",
    "AccountingStorageType",
    "AccountingStorageUser",  // Defunct in recent releases; accepted and ignored.
    "AccountingStoreFlags",
    "AccountingStoreJobComment",
    "AcctGatherEnergyType",
    "AcctGatherFilesystemType",
    "AcctGatherInfinibandType",
    "AcctGatherInterconnectType",
    "AcctGatherNodeFreq",
    "AcctGatherProfileType",
    "AllowSpecResourcesUsage",
    "AuthAltParameters",
    "AuthAltTypes",
    "AuthInfo",
    "AuthType",
    "BackupAddr",        // Legacy; superseded by SlurmctldHost.
    "BackupController",  // Legacy; superseded by SlurmctldHost.
    "BatchStartTimeout",
    "BurstBufferParameters",
    "BurstBufferType",
    "CertgenParameters",
    "CertgenType",
    "CertmgrParameters",
    "CertmgrType",
    "CliFilterParameters",
    "CliFilterPlugins",
    "ClusterName",
    "CommunicationParameters",
    "CompleteWait",
    "ControlAddr",     // Legacy; superseded by SlurmctldHost.
    "ControlMachine",  // Legacy; superseded by SlurmctldHost.
    "CoreSpecPlugin",  // Defunct; accepted and ignored.
    "CpuFreqDef",
    "CpuFreqGovernors",
    "CredType",
    "CryptoType",
    "DataParserParameters",
    "DebugFlags",
    "DefCpuPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DependencyParameters",
    "DisableRootJobs",
    "DownNodes",  // Line type.
    "EioTimeout",
    "EnforcePartLimits",
    "Epilog",
    "EpilogMsgTime",
    "EpilogSlurmctld",
    "EpilogTimeout",
    "ExtSensorsFreq",  // Defunct; accepted and ignored.
    "ExtSensorsType",  // Defunct; accepted and ignored.
    "FairShareDampeningFactor",
    "FastSchedule",  // Legacy; accepted for old configurations.
    "FederationParameters",
    "FirstJobId",
    "FrontendName",   // Line type for front-end systems (removed in 25.05).
    "GetEnvTimeout",  // Deprecated in 25.05; accepted and ignored.
    "GpuFreqDef",
    "GresTypes",
    "GroupUpdateForce",
    "GroupUpdateTime",
    "HashPlugin",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "HealthCheckProgram",
    "HealthCheckTimeout",
    "HttpParserType",
    "InactiveLimit",
    "Include",  // Directive: "Include <file>" reads another file in place.
    "InteractiveStepOptions",
    "JobAcctGatherFrequency",
    "JobAcctGatherParams",
    "JobAcctGatherType",
    "JobCompHost",
    "JobCompLoc",
    "JobCompParams",
    "JobCompPass",
    "JobCompPassScript",
    "JobCompPort",
    "JobCompType",
    "JobCompUser",
    "JobContainerType",
    "JobCredentialPrivateKey",         // Defunct; accepted and ignored.
    "JobCredentialPublicCertificate",  // Defunct; accepted and ignored.
    "JobFileAppend",
    "JobRequeue",
    "JobSubmitPlugins",
    "KeepAliveTime",
    "KillOnBadExit",
    "KillWait",
    "LaunchParameters",
    "LaunchType",
    "LicenseParameters",
    "Licenses",
    "LogTimeFormat",
    "MailDomain",
    "MailProg",
    "MaxArraySize",
    "MaxBatchRequeue",
    "MaxDBDMsgs",
    "MaxJobCount",
    "MaxJobId",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodeCount",
    "MaxStepCount",
    "MaxTasksPerNode",
    "MCSParameters",
    "MCSPlugin",
    "MessageTimeout",
    "MetricsAuthUsers",
    "MetricsParameters",
    "MetricsType",
    "MinJobAge",
    "MpiParams",
    "NamespaceType",
    "NodeFeaturesPlugins",
    "NodeName",  // Line type.
    "NodeSet",   // Line type.
    "OverTimeLimit",
    "PartitionName",  // Line type.
    "PluginDir",
    "PlugStackConfig",
    "PowerAction",      // Line type in recent releases.
    "PowerParameters",  // Defunct; accepted and ignored.
    "PowerPlugin",      // Defunct; accepted and ignored.
    "PreemptExemptTime",
    "PreemptMode",
    "PreemptParameters",
    "PreemptType",
    "PrEpParameters",
    "PrEpPlugins",
    "PriorityCalcPeriod",
    "PriorityDecayHalfLife",
    "PriorityFavorSmall",
    "PriorityFlags",
    "PriorityMaxAge",
    "PriorityParameters",
    "PrioritySiteFactorParameters",
    "PrioritySiteFactorPlugin",
    "PriorityType",
    "PriorityUsageResetPeriod",
    "PriorityWeightAge",
    "PriorityWeightAssoc",
    "PriorityWeightFairshare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityWeightTRES",
    "PrivateData",
    "ProctrackType",
    "Prolog",
    "PrologEpilogTimeout",
    "PrologFlags",
    "PrologSlurmctld",
    "PrologTimeout",
    "PropagatePrioProcess",
    "ReconfigFlags",
    "RequeueExit",
    "RequeueExitHold",
    "ResumeFailProgram",
    "ResumeProgram",
    "ResumeRate",
    "ResumeTimeout",
    "ResvEpilog",
    "ResvOverRun",
    "ResvProlog",
    "ReturnToService",
    "RoutePlugin",
    "SallocDefaultCommand",  // Legacy; still recognised by the parser.
    "SbcastParameters",
    "SchedulerAuth",  // Defunct; 22.05 accepts it with an error.
    "SchedulerParameters",
    "SchedulerTimeSlice",
    "SchedulerType",
    "ScronParameters",
    "SelectType",
    "SelectTypeParameters",
    "SlurmctldAddr",
    "SlurmctldDebug",
    "SlurmctldHost",
    "SlurmctldHttpAuthParameters",
    "SlurmctldLogFile",
    "SlurmctldParameters",
    "SlurmctldPidFile",
    "SlurmctldPlugstack",
    "SlurmctldPort",
    "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg",
    "SlurmctldSyslogDebug",
    "SlurmctldTimeout",
    "SlurmdDebug",
    "SlurmdHttpAuthParameters",
    "SlurmdLogFile",
    "SlurmdParameters",
    "SlurmdPidFile",
    "SlurmdPort",
    "SlurmdSpoolDir",
    "SlurmdSyslogDebug",
    "SlurmdTimeout",
    "SlurmdUser",
    "SlurmSchedLogFile",
    "SlurmSchedLogLevel",
    "SlurmUser",
    "SrunEpilog",
    "SrunPortRange",
    "SrunProlog",
    "StateSaveLocation",
    "SuspendExcNodes",
    "SuspendExcParts",
    "SuspendExcStates",
    "SuspendProgram",
    "SuspendRate",
    "SuspendTime",
    "SuspendTimeout",
    "SwitchParameters",
    "SwitchType",
    "TaskEpilog",
    "TaskPlugin",
    "TaskPluginParam",
    "TaskProlog",
    "TCPTimeout",
    "TLSParameters",
    "TLSType",
    "TmpFS",
    "TopologyParam",
    "TopologyPlugin",
    "TrackWCKey",
    "TreeWidth",
    "UnkillableStepProgram",
    "UnkillableStepTimeout",
    "UrlParserType",
    "UsePAM",
    "VSizeFactor",
    "WaitTime",
    "X11Parameters",
};

// Keys on a NodeName= line (NodeName=DEFAULT lines take the same keys).
static constexpr std::string_view kNodeLineKeys[] = {
    "BcastAddr",
    "Boards",
    "CoreSpecCount",
    "CoresPerSocket",
    "CpuBind",
    "CPUs",
    "CpuSpecList",
    "Feature",  // Alias of Features.
    "Features",
    "Gres",
    "GresConf",
    "MemSpecLimit",
    "NodeAddr",
    "NodeHostname",
    "NodeName",
    "Parameters",
    "Port",
    "Procs",  // Legacy alias of CPUs.
    "RealMemory",
    "Reason",
    "RestrictedCoresPerGPU",
    "Sockets",
    "SocketsPerBoard",
    "State",
    "SuspendTime",
    "ThreadsPerCore",
    "TmpDisk",
    "Topology",
    "TRESWeights",
    "Weight",
};

// Keys on a PartitionName= line (PartitionName=DEFAULT lines take the same keys).
static constexpr std::string_view kPartitionLineKeys[] = {
    "AllocNodes",
    "AllowAccounts",
    "AllowGroups",
    "AllowQos",
    "Alternate",
    "CpuBind",
    "Default",
    "DefaultTime",
    "DefCpuPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DenyAccounts",
    "DenyQos",
    "DisableRootJobs",
    "ExclusiveTopo",
    "ExclusiveUser",
    "GraceTime",
    "Hidden",
    "LLN",
    "MaxCPUsPerNode",
    "MaxCPUsPerSocket",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodes",
    "MaxTime",
    "MinNodes",
    "Nodes",
    "OverSubscribe",
    "OverTimeLimit",
    "PartitionName",
    "PowerDownOnIdle",
    "PreemptMode",
    "Priority",  // Legacy: sets both PriorityJobFactor and PriorityTier.
    "PriorityJobFactor",
    "PriorityTier",
    "QOS",
    "ReqResv",
    "ResumeTimeout",
    "RootOnly",
    "SelectTypeParameters",
    "Shared",  // Legacy alias of OverSubscribe.
    "State",
    "SuspendTime",
    "SuspendTimeout",
    "Topology",
    "TRESBillingWeights",
};

// gres.conf keys. Slurm's parser also takes the undocumented aliases CPUs, Files and Link.
static constexpr std::string_view kGresConfKeys[] = {
    "AutoDetect", "Cores",         "Count", "File",     "Flags",
    "Links",      "MultipleFiles", "Name",  "NodeName", "Type",
};

// topology.conf keys: SwitchName/Switches/Nodes/LinkSpeed for topology/tree, and
// BlockName/Nodes/BlockSizes for topology/block.
static constexpr std::string_view kTopologyConfKeys[] = {
    "BlockName", "BlockSizes", "LinkSpeed", "Nodes", "Switches", "SwitchName",
};

std::span<const std::string_view> SlurmConfDocumentedKeys() {
  return kSlurmConfKeys;
}
std::span<const std::string_view> NodeLineDocumentedKeys() {
  return kNodeLineKeys;
}
std::span<const std::string_view> PartitionLineDocumentedKeys() {
  return kPartitionLineKeys;
}
std::span<const std::string_view> GresConfDocumentedKeys() {
  return kGresConfKeys;
}
std::span<const std::string_view> TopologyConfDocumentedKeys() {
  return kTopologyConfKeys;
}

std::span<const std::string_view> SlurmConfUnenforcedKeys() {
  static constexpr std::string_view kKeys[] = {
      "AccountingStorageHost", "AccountingStorageTRES", "AccountingStorageType", "InactiveLimit",
      "JobCompType",           "MaxMemPerCPU",          "ResumeTimeout",         "TmpFS",
      "UnkillableStepTimeout",
  };
  return kKeys;
}

std::span<const std::string_view> PartitionLineUnenforcedKeys() {
  static constexpr std::string_view kKeys[] = {"ExclusiveUser", "LLN"};
  return kKeys;
}

}  // namespace drover
