// Hostlists as Slurm writes them: "gpu[001-128]", "n[1-3,5],m7", "rack[1-2]-n[01-04]".
// Expansion keeps order and zero padding; compression produces Slurm's ranged form.
// Must never allocate without bound on hostile input: expansion is capped.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

// Expansion refuses to produce more names than this (a typo like n[1-999999999] is an error).
inline constexpr size_t kMaxHostlistNames = 1'000'000;
// And refuses text longer than this before parsing it (1 MiB: a compressed list of every node
// of the largest cluster is far shorter; what users send is bounded tighter, at 64 KiB, where
// requests are checked).
inline constexpr size_t kMaxHostlistLength = 1 << 20;

// Expands a hostlist expression into names, in the order written (duplicates kept).
// Several bracket groups in one name expand as a cartesian product, leftmost slowest.
// Errors name the problem: "unbalanced '[' in 'n[1-3'", "range 5-3 is backwards in 'n[5-3]'",
// "hostlist expands to more than 1000000 names (the limit), reached at 'n[0-999999999]'".
// The names are counted before any is produced, so n[0-999999999] fails at once.
Result<std::vector<std::string>> ExpandHostlist(std::string_view expression,
                                                size_t max_names = kMaxHostlistNames);

// Compresses names into Slurm's ranged form, keeping the given order: consecutive names with
// the same prefix and digit width merge ("n1,n2,n3,n5" -> "n[1-3,5]"); zero padding kept
// ("gpu001,gpu002" -> "gpu[001-002]"); names without a numeric suffix stay as they are.
// This is what `scontrol show hostlist` prints.
std::string CompressHostlist(std::span<const std::string> names);

// Sorts (by prefix, then number, then width) and removes duplicates before compressing.
// This is `scontrol show hostlistsorted`.
std::string CompressHostlistSorted(std::span<const std::string> names);

}  // namespace drover
