#include "sandbox/call_tally.hpp"

#include <mutex>

#include <Poco/JSON/Object.h>

#include "sandbox/errors.hpp"
#include "sandbox/slice_types.hpp"

namespace sandbox {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Object;

Var encode_tally(const CallTally& t) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("steps", t.steps);
  o->set("failed", t.failed);
  o->set("rolled_back", t.rolled_back);
  o->set("refused", t.refused);
  o->set("agent_denied", t.agent_denied);
  return o;
}

CallTally decode_tally(const Var& v) {
  if (v.type() != typeid(Object::Ptr)) {
    throw Error(ErrorCode::kInvalidArgument, "a call tally is not a JSON object");
  }
  Object::Ptr o = v.extract<Object::Ptr>();
  auto count = [&](const char* key) {
    return static_cast<std::size_t>(o->optValue<double>(key, 0));
  };
  return CallTally{count("steps"), count("failed"), count("rolled_back"), count("refused"),
                   count("agent_denied")};
}

}  // namespace

void register_call_tally_slice_type() {
  static std::once_flag once;
  std::call_once(once, [] {
    SliceTypes::add<CallTally>("run.calls", SlicePolicy::kLog, encode_tally, decode_tally);
  });
}

void update_call_tally(Session& session, const std::function<void(CallTally&)>& change) {
  register_call_tally_slice_type();
  CallTally tally = session.latest<CallTally>().value_or(CallTally{});
  change(tally);
  session.register_slice<CallTally>(SlicePolicy::kLog);
  session.seed<CallTally>({tally});
}

std::optional<CallTally> call_tally(const SessionSnapshot& session) {
  register_call_tally_slice_type();
  statekit::Slice<CallTally> slice = session.slice<CallTally>();
  if (slice.empty()) return std::nullopt;
  return *slice.latest();
}

}  // namespace sandbox
