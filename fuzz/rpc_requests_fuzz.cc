// libFuzzer target for the RPC request decoders: the first byte picks a request message, the
// rest is its wire bytes. Each message that parses goes through the functions the controller's
// service (and the agent) turn it into an engine event with, so a hostile client's message can
// only be refused with a message, never crash them. What decodes must encode back unchanged.
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "ctld/daemon/requests.h"
#include "proto/drover.pb.h"
#include "wire/job_spec_codec.h"

namespace {

using namespace drover;

// Every failure must say why.
template <typename T>
void CheckError(const Result<T>& result) {
  if (!result.ok() && result.error().empty()) __builtin_trap();
}

// A spec that decodes encodes to a message that decodes to the same encoding again.
void CheckSpec(const v1::JobSpec& message) {
  auto spec = wire::FromProto(message);
  CheckError(spec);
  if (!spec.ok()) return;
  v1::JobSpec once, twice;
  wire::ToProto(*spec, &once);
  auto again = wire::FromProto(once);
  if (!again.ok()) __builtin_trap();
  wire::ToProto(*again, &twice);
  if (!google::protobuf::util::MessageDifferencer::Equals(once, twice)) __builtin_trap();
}

void CheckSubmit(const v1::SubmitRequest& request) {
  CheckSpec(request.spec());
}

// Parses `Message` from the bytes and, when it parses, checks it.
template <typename Message, typename Check>
void With(const uint8_t* data, size_t size, Check check) {
  Message message;
  if (message.ParseFromArray(data, static_cast<int>(size))) check(message);
}

template <typename Message>
void Filtered(const uint8_t* data, size_t size) {
  With<Message>(data, size, [](const Message& m) { CheckError(ctld::FilterOf(m.filter())); });
}

// Messages whose fields the service copies into their events as they are: parsing is all.
template <typename Message>
void Copied(const uint8_t* data, size_t size) {
  With<Message>(data, size, [](const Message&) {});
}

const ctld::Caller kCaller{1000, 1000, false};

void UpdateJob(const v1::UpdateJobRequest& m) {
  auto event = ctld::UpdateJobOf(m, kCaller);
  CheckError(event);
  if (event.ok() && event->time_limit_seconds && *event->time_limit_seconds <= 0) __builtin_trap();
}

void Top(const v1::TopRequest& m) {
  auto event = ctld::TopJobsOf(m, kCaller);
  CheckError(event);
  if (event.ok() && event->jobs.size() != static_cast<size_t>(m.jobs_size())) __builtin_trap();
}

void CreateStep(const v1::CreateStepRequest& m) {
  auto event = ctld::CreateStepOf(m, kCaller);
  CheckError(event);
  if (event.ok() && (event->job_id == 0 || event->ntasks > 1'000'000)) __builtin_trap();
}

void Register(const v1::RegisterRequest& m) {
  ctld::NodeRegistered event = ctld::NodeRegisteredOf(m);
  if (event.running_jobs.size() != static_cast<size_t>(m.running_jobs_size())) __builtin_trap();
}

// One case per request the service decodes; the order is the seeds' first byte
// (fuzz/make_seeds.sh), so append only.
void Decode(uint8_t kind, const uint8_t* data, size_t size) {
  switch (kind % 21) {
    case 0:
      return With<v1::SubmitRequest>(data, size, CheckSubmit);
    case 1:
      return With<v1::SubmitManyRequest>(data, size, [](const v1::SubmitManyRequest& m) {
        for (const auto& one : m.jobs()) CheckSubmit(one);
      });
    case 2:
      return Filtered<v1::CancelRequest>(data, size);
    case 3:
      return Filtered<v1::HoldRequest>(data, size);
    case 4:
      return Filtered<v1::RequeueRequest>(data, size);
    case 5:
      return With<v1::UpdateNodeRequest>(data, size, [](const v1::UpdateNodeRequest& m) {
        CheckError(ctld::UpdateNodeOf(m, ctld::Caller{}));
      });
    case 6:
      return With<v1::UpdateJobRequest>(data, size, UpdateJob);
    case 7:
      return Filtered<v1::SuspendRequest>(data, size);
    case 8:
      return With<v1::ReservationRequest>(
          data, size, [](const v1::ReservationRequest& m) { (void)ctld::ReservationFieldsOf(m); });
    case 9:
      return With<v1::TopRequest>(data, size, Top);
    case 10:
      return With<v1::CreateStepRequest>(data, size, CreateStep);
    case 11:
      return Copied<v1::StepEndedRequest>(data, size);
    case 12:
      return Copied<v1::ReleaseRequest>(data, size);
    case 13:
      return Copied<v1::JobEndedRequest>(data, size);
    case 14:
      return With<v1::RegisterRequest>(data, size, Register);
    case 15:
      return Copied<v1::HeartbeatRequest>(data, size);
    case 16:
      return Filtered<v1::HistoryQuery>(data, size);
    case 17:
      return Filtered<v1::JobQuery>(data, size);
    case 18:  // the agent's Launch and RunStep decode the job's spec the same way
      With<v1::LaunchRequest>(data, size,
                              [](const v1::LaunchRequest& m) { CheckSpec(m.job().spec()); });
      return With<v1::StepInput>(
          data, size, [](const v1::StepInput& m) { CheckSpec(m.launch().job().spec()); });
    case 19:  // an agent's batch of ends: each is decoded as one JobEnded
      return Copied<v1::JobEndedBatch>(data, size);
    case 20:  // the controller's batch of launches: each as one Launch
      return With<v1::LaunchBatch>(data, size, [](const v1::LaunchBatch& m) {
        for (const v1::NodeLaunch& one : m.launches()) CheckSpec(one.launch().job().spec());
      });
  }
}

}  // namespace

// Protobuf logs every string field that is not UTF-8: the parse fails, which is all that counts.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Decode(data[0], data + 1, size - 1);
  return 0;
}
