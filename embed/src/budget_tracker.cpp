#include "embed/budget_tracker.hpp"

#include <mutex>

#include <Poco/JSON/Object.h>

#include "sandbox/resource_registry.hpp"

namespace embed {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Object;

Var encode_budget(const BudgetSnapshot& b) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("input_tokens", b.input_tokens);
  o->set("output_tokens", b.output_tokens);
  o->set("cost_usd", b.cost_usd);
  o->set("tool_calls", b.tool_calls);
  return o;
}

BudgetSnapshot decode_budget(const Var& v) {
  Object::Ptr o = v.extract<Object::Ptr>();
  return BudgetSnapshot{o->getValue<std::uint64_t>("input_tokens"),
                        o->getValue<std::uint64_t>("output_tokens"),
                        o->getValue<double>("cost_usd"), o->getValue<std::uint64_t>("tool_calls")};
}

}  // namespace

void register_budget_codec() {
  static std::once_flag once;
  std::call_once(once, [] {
    sandbox::ResourceSnapshotCodecs::add<BudgetSnapshot>("budget", encode_budget, decode_budget);
  });
}

BudgetTracker::BudgetTracker() {
  register_budget_codec();
}

}  // namespace embed
