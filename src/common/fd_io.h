// Small POSIX file-descriptor helpers shared by the daemons.
#pragma once

#include <string>
#include <string_view>

namespace drover {

// Writes all of `text` to `fd`, retrying short writes and EINTR; stops on an error (EPIPE from
// a reader that has gone, ...) and returns false then. Callers with nobody to tell ignore it.
bool WriteFully(int fd, std::string_view text);

// Everything `fd` gives until its end (or an error other than EINTR): a pipe's whole message.
std::string ReadToEnd(int fd);

}  // namespace drover
