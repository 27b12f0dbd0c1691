// sacctmgr's calls: see accounting_service.h.
#include "ctld/daemon/accounting_service.h"

#include <fmt/format.h>

#include <utility>

#include "common/accounting_change.h"
#include "ctld/daemon/requests.h"
#include "wire/accounting_codec.h"

namespace drover::ctld {
namespace {

// sacctmgr sends a handful of words; these bound what one request may carry.
constexpr int kMaxWords = 256;
constexpr size_t kMaxWordBytes = 4096;
constexpr size_t kMaxFileBytes = 4 << 20;  // sacctmgr load's file

}  // namespace

AccountingService::Reactor* AccountingService::Change(Context* context,
                                                      const v1::AccountingChangeRequest* request,
                                                      v1::AccountingChangeReply* reply) {
  Caller caller;
  if (grpc::Status refused = controller_.Admit(context, ControllerService::Access::kUser, caller);
      !refused.ok())
    return Finished(context, refused);
  auto verb = acct::ParseVerb(request->verb());
  if (!verb) return Finished(context, Invalid(verb.error()));
  auto entity = acct::ParseEntity(*verb, request->entity());
  if (!entity) return Finished(context, Invalid(entity.error()));
  if (request->words_size() > kMaxWords)
    return Finished(context, Invalid(fmt::format("too many words ({}; at most {})",
                                                 request->words_size(), kMaxWords)));
  if (request->file().size() > kMaxFileBytes)
    return Finished(context, Invalid(fmt::format("a file of {} bytes (at most {})",
                                                 request->file().size(), kMaxFileBytes)));
  if (*verb == acct::Verb::kLoad && *entity != acct::Entity::kCluster)
    return Finished(context, Invalid("load takes a cluster file"));
  ChangeAccounting event{0, caller, {*verb, *entity, {}, request->file()}, request->dry_run()};
  for (const std::string& word : request->words()) {
    if (word.size() > kMaxWordBytes)
      return Finished(context, Invalid(fmt::format("a word of {} bytes (at most {})", word.size(),
                                                   kMaxWordBytes)));
    event.request.words.push_back(word);
  }
  Reactor* reactor = context->DefaultReactor();
  controller_.loop_.Submit(std::move(event), [reactor, reply](const Reply& result) {
    reply->set_text(result.message);
    reply->set_changed(result.changed);
    for (const std::string& warning : result.warnings) reply->add_warnings(warning);
    reactor->Finish(FromReply(result));
  });
  return reactor;
}

AccountingService::Reactor* AccountingService::Show(Context* context, const v1::AccountingQuery*,
                                                    v1::AccountingDatabase* reply) {
  Caller caller;
  if (grpc::Status refused = controller_.Admit(context, ControllerService::Access::kUser, caller);
      !refused.ok())
    return Finished(context, refused);
  return controller_.Query(context, caller, [this, reply] {
    std::shared_ptr<const Snapshot> snapshot = controller_.loop_.snapshot();
    wire::ToProto(*snapshot->accounting, reply);
    return grpc::Status::OK;
  });
}

}  // namespace drover::ctld
