// The keys Slurm documents or still accepts in slurm.conf, on NodeName= and PartitionName= lines,
// in gres.conf and in topology.conf. Drover uses them to tell a real Slurm key that it ignores
// from a misspelt or unknown one, and to suggest the intended key.
#pragma once

#include <span>
#include <string_view>

namespace drover {

// Every key Slurm documents, spelled as Slurm's man pages spell them (CamelCase). Slurm compares
// keys case-insensitively, so callers should too. Each list is sorted case-insensitively.

// Top-level slurm.conf(5) parameters from Slurm 22.05 onwards, including legacy and defunct ones
// that the parser still accepts (ControlMachine, FastSchedule, ...), later additions, the
// line-type keywords (NodeName, PartitionName, NodeSet, DownNodes, FrontendName, ...) and the
// Include directive.
std::span<const std::string_view> SlurmConfDocumentedKeys();

// Keys valid on a NodeName= line of slurm.conf, NodeName itself included.
std::span<const std::string_view> NodeLineDocumentedKeys();

// Keys valid on a PartitionName= line of slurm.conf, PartitionName itself included.
std::span<const std::string_view> PartitionLineDocumentedKeys();

// Keys Drover reads into its configuration (and shows, e.g. in scontrol show config) but does
// not act on yet: each is warned about once, so no setting is silently ignored. A key leaves
// these lists when Drover enforces it.
std::span<const std::string_view> SlurmConfUnenforcedKeys();
std::span<const std::string_view> PartitionLineUnenforcedKeys();

// gres.conf(5) keys.
std::span<const std::string_view> GresConfDocumentedKeys();

// topology.conf(5) keys for the topology/tree and topology/block plugins.
std::span<const std::string_view> TopologyConfDocumentedKeys();

}  // namespace drover
