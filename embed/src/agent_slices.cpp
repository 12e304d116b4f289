#include "embed/agent_slices.hpp"

#include <mutex>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include "sandbox/builtin_slices.hpp"
#include "sandbox/codec_json.hpp"
#include "sandbox/slice_types.hpp"

namespace embed {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Array;
using Poco::JSON::Object;
using sandbox::SlicePolicy;
using sandbox::SliceTypes;
using sandbox::codec_json::object_of;
using sandbox::codec_json::string_field;

Var encode_plan(const Plan& p) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("objective", p.objective);
  o->set("status", p.status);
  Array::Ptr steps = new Array;
  for (const PlanStep& s : p.steps) {
    Object::Ptr step = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    step->set("title", s.title);
    step->set("done", s.done);
    steps->add(step);
  }
  o->set("steps", steps);
  return o;
}

Plan decode_plan(const Var& v) {
  Object::Ptr o = object_of(v, "a slice item");
  Plan p{string_field(o, "objective"), string_field(o, "status"), {}};
  if (Array::Ptr steps = o->getArray("steps")) {
    for (std::size_t i = 0; i < steps->size(); ++i) {
      Object::Ptr s = steps->getObject(static_cast<unsigned>(i));
      p.steps.push_back(PlanStep{string_field(s, "title"), s->getValue<bool>("done")});
    }
  }
  return p;
}

Var encode_visibility(const VisibilityOverrides& v) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  for (const auto& [k, value] : v.overrides) o->set(k, value);
  return o;
}

VisibilityOverrides decode_visibility(const Var& v) {
  VisibilityOverrides out;
  for (const auto& [k, value] : *object_of(v, "a slice item")) out.overrides[k] = value.toString();
  return out;
}

Var encode_digest(const WorkspaceDigest& d) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("section", d.section);
  o->set("digest", d.digest);
  return o;
}

WorkspaceDigest decode_digest(const Var& v) {
  Object::Ptr o = object_of(v, "a slice item");
  return WorkspaceDigest{string_field(o, "section"), string_field(o, "digest")};
}

template <typename T>
Var encode_pair(const T& p, const char* second, const std::string& value) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("prompt_name", p.prompt_name);
  o->set(second, value);
  return o;
}

}  // namespace

void register_agent_slice_types() {
  sandbox::register_builtin_slice_types();
  static std::once_flag once;
  std::call_once(once, [] {
    SliceTypes::add<Plan>("plan", SlicePolicy::kState, encode_plan, decode_plan);
    SliceTypes::add<VisibilityOverrides>("visibility_overrides", SlicePolicy::kState,
                                         encode_visibility, decode_visibility);
    SliceTypes::add<WorkspaceDigest>("workspace_digest", SlicePolicy::kCache, encode_digest,
                                     decode_digest);
    SliceTypes::add<PromptRendered>(
        "prompt_rendered", SlicePolicy::kLog,
        [](const PromptRendered& p) { return encode_pair(p, "text", p.text); },
        [](const Var& v) {
          Object::Ptr o = object_of(v, "a slice item");
          return PromptRendered{string_field(o, "prompt_name"), string_field(o, "text")};
        });
    SliceTypes::add<PromptExecuted>(
        "prompt_executed", SlicePolicy::kLog,
        [](const PromptExecuted& p) { return encode_pair(p, "output", p.output); },
        [](const Var& v) {
          Object::Ptr o = object_of(v, "a slice item");
          return PromptExecuted{string_field(o, "prompt_name"), string_field(o, "output")};
        });
  });
}

}  // namespace embed
