// Reads files in Slurm's configuration syntax (slurm.conf, gres.conf, topology.conf) into
// lines of key=value pairs: '#' comments, '\' continuation, quoted values, and Include.
// It knows no keys; the parsers for each file give the pairs their meaning.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostics.h"

namespace drover {

struct ConfPair {
  std::string key;    // as written; compare case-insensitively
  std::string value;  // quotes removed
};

struct ConfLine {
  SourceLocation where;
  std::vector<ConfPair> pairs;  // in order; the first names the line's kind (NodeName=...)
};

struct ConfReadOptions {
  bool allow_include = true;  // slurm.conf honours "Include FILE"; gres.conf does not
  int max_include_depth = 16;
};

// Reads `path`. A missing or unreadable file is an error in `diagnostics`, and so is a
// malformed line (which is skipped). Include paths are relative to the including file's
// folder; an include loop or one nested past max_include_depth is an error.
std::vector<ConfLine> ReadConfFile(const std::string& path, Diagnostics& diagnostics,
                                   const ConfReadOptions& options = {});

// Parses one logical line (already joined and stripped of its comment) into pairs.
// Exposed for tests and fuzzing. Returns false and reports to `diagnostics` when malformed.
bool ParseConfLine(const std::string& text, const SourceLocation& where, ConfLine& line,
                   Diagnostics& diagnostics);

// Reads configuration text from memory, as if it were the file `name` (no includes).
std::vector<ConfLine> ReadConfText(const std::string& text, const std::string& name,
                                   Diagnostics& diagnostics);

}  // namespace drover
