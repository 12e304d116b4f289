#include "sandbox/builtin_slices.hpp"

#include <mutex>

#include <Poco/JSON/Object.h>

#include "fsnap/checkpoint.hpp"
#include "sandbox/call_tally.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/slice_types.hpp"

#include "session_json.hpp"

namespace sandbox {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Object;
using session_json::object_of;
using session_json::string_field;

Var encode_tool(const ToolInvoked& t) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("tool_call_id", t.tool_call_id);
  o->set("tool_name", t.tool_name);
  o->set("params", t.params);
  o->set("success", t.success);
  o->set("result_summary", t.result_summary);
  o->set("elapsed_ms", t.elapsed_ms);
  return o;
}

ToolInvoked decode_tool(const Var& v) {
  Object::Ptr o = object_of(v, "a slice item");
  ToolInvoked t;
  t.tool_call_id = string_field(o, "tool_call_id");
  t.tool_name = string_field(o, "tool_name");
  t.params = string_field(o, "params");
  t.success = o->getValue<bool>("success");
  t.result_summary = string_field(o, "result_summary");
  t.elapsed_ms = o->getValue<std::int64_t>("elapsed_ms");
  return t;
}

}  // namespace

void register_builtin_slice_types() {
  register_containment_slice_type();
  register_call_tally_slice_type();
  static std::once_flag once;
  std::call_once(once, [] {
    SliceTypes::add<ToolInvoked>("tool_invoked", SlicePolicy::kLog, encode_tool, decode_tool);
  });
}

}  // namespace sandbox
