// The codec between accounting's value types (common/accounting.h) and accounting.proto: the
// record the controller stores and the reply sacctmgr reads. Layer 2: converts, never decides.
#pragma once

#include "common/accounting.h"
#include "common/result.h"
#include "proto/accounting.pb.h"

namespace drover::wire {

void ToProto(const acct::Database& database, v1::AccountingDatabase* out);
// Errors name the record and field that does not parse (a TRES list, an admin level).
Result<acct::Database> FromProto(const v1::AccountingDatabase& database);

}  // namespace drover::wire
