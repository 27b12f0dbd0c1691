// sacctmgr's settings ("GrpTRES=gres/gpu=8", "MaxWall=2-00:00:00", "QOS+=urgent") applied to an
// association or a QOS, with Slurm's rules: a negative number clears a limit, a TRES list is
// merged entry by entry ("gres/gpu=-1" removes one), "+=" and "-=" add to and remove from lists.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/accounting.h"
#include "common/accounting_change.h"
#include "common/result.h"

namespace drover::acct {

// Whether `key` is one of the association settings (Fairshare, Priority, QOS, DefaultQOS and
// the limits); `ApplyAssociationSetting` takes it.
bool IsAssociationSetting(std::string_view key);
Status ApplyAssociationSetting(Association& association, const Word& word);

bool IsQosSetting(std::string_view key);
Status ApplyQosSetting(Qos& qos, const Word& word);

// The settings as sacctmgr echoes them before it commits, in its order and labels: an
// association's ("  GrpTRES       = gres/gpu=8") and a QOS's ("  Priority                 = 10").
std::string DescribeAssociationSettings(const std::vector<Word>& settings);
std::string DescribeQosSettings(const std::vector<Word>& settings);

// Lower-cased as Slurm keeps names (accounts, clusters, QOS, users).
std::string NameOf(std::string_view text);

}  // namespace drover::acct
