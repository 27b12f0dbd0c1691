// sbatch's --help, --usage and --version texts. Data only: printing is the caller's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace drover::cli::sbatch {

// What --help, --usage or --version (named without "--") prints; nullopt for any other option.
std::optional<std::string> EarlyOutput(std::string_view option);

}  // namespace drover::cli::sbatch
