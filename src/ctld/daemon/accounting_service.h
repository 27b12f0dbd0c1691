// The controller's Accounting service (accounting.proto), what sacctmgr calls: changes go to the
// engine as events (operators and users with an AdminLevel; the engine decides), show reads the
// latest snapshot. Calls are admitted as the Controller service admits its own.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ctld/daemon/service.h"
#include "proto/accounting.grpc.pb.h"

namespace drover::ctld {

class AccountingService final : public v1::Accounting::CallbackService {
 public:
  explicit AccountingService(ControllerService& controller) : controller_(controller) {}

  using Context = grpc::CallbackServerContext;
  using Reactor = grpc::ServerUnaryReactor;

  Reactor* Change(Context*, const v1::AccountingChangeRequest*,
                  v1::AccountingChangeReply*) override;
  Reactor* Show(Context*, const v1::AccountingQuery*, v1::AccountingDatabase*) override;

 private:
  ControllerService& controller_;
};

}  // namespace drover::ctld
