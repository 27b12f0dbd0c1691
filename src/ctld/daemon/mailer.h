// Runs MailProg for the engine's --mail-type mails, one at a time on a thread of its own, so a
// slow or stuck mailer never holds the engine: each run is killed after a bound, and a queue
// past its limit drops mail with a line in the log rather than growing without end.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "common/cluster_config.h"
#include "common/mutex.h"
#include "ctld/engine/events.h"

namespace drover::ctld {

class Mailer {
 public:
  // `timeout`: how long one MailProg may run before it is killed (Slurm's MAIL_PROG_TIMEOUT).
  explicit Mailer(std::shared_ptr<const ClusterConfig> cluster,
                  std::chrono::milliseconds timeout = std::chrono::seconds(120));
  ~Mailer();  // sends what is queued (each within its bound), then stops
  Mailer(const Mailer&) = delete;
  Mailer& operator=(const Mailer&) = delete;

  void Send(MailJob mail) EXCLUDES(mutex_);
  void Reconfigured(std::shared_ptr<const ClusterConfig> cluster) EXCLUDES(mutex_);

 private:
  void Run() EXCLUDES(mutex_);
  // Runs `program -s SUBJECT USER` (as SlurmUser when this daemon is root); what went wrong in a
  // line for the log, or "".
  std::string Deliver(const std::string& program, const std::string& slurm_user,
                      const MailJob& mail) const;

  const std::chrono::milliseconds timeout_;
  Mutex mutex_;
  CondVar wake_;
  std::shared_ptr<const ClusterConfig> cluster_ GUARDED_BY(mutex_);
  std::deque<MailJob> queue_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
  std::thread worker_;
  static constexpr size_t kMaxQueued = 1000;
};

}  // namespace drover::ctld
