// sdiag's output: Slurm 22.05's text layout and the openapi v0.0.38 "statistics" document (sdiag
// --json, and the REST API's /diag), from the controller's Diag reply.
#pragma once

#include <string>

#include "proto/drover.pb.h"

namespace drover::cli {

enum class SdiagSort { kCount, kId, kTotalTime, kAverageTime };

std::string FormatSdiag(const v1::DiagReply& diag, SdiagSort sort);
std::string SdiagJson(const v1::DiagReply& diag);

}  // namespace drover::cli
