#include "sandbox/slice_types.hpp"

#include <map>
#include <mutex>

#include "fsnap/enum_names.hpp"
#include "sandbox/errors.hpp"

namespace sandbox {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::type_index, std::shared_ptr<const SliceType>> by_type;
  std::map<std::string, std::shared_ptr<const SliceType>, std::less<>> by_name;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used until exit
  return *r;
}

}  // namespace

namespace {

constexpr fsnap::EnumName<SlicePolicy> kPolicyNames[] = {
    {SlicePolicy::kState, "state"}, {SlicePolicy::kLog, "log"}, {SlicePolicy::kCache, "cache"}};

}  // namespace

std::string_view to_string(SlicePolicy policy) {
  return fsnap::name_of(kPolicyNames, policy, "state");
}

std::optional<SlicePolicy> parse_slice_policy(std::string_view text) {
  return fsnap::value_of(kPolicyNames, text);
}

void SliceTypes::add_entry(SliceType entry) {
  if (entry.name.empty()) throw Error(ErrorCode::kInvalidArgument, "a slice type needs a name");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto it = r.by_name.find(entry.name);
      it != r.by_name.end() && it->second->type != entry.type) {
    throw Error(ErrorCode::kInvalidArgument,
                "slice type name '" + entry.name + "' is taken by another type");
  }
  if (auto it = r.by_type.find(entry.type);
      it != r.by_type.end() && it->second->name != entry.name) {
    throw Error(ErrorCode::kInvalidArgument,
                "slice type '" + it->second->name + "' cannot also be named '" + entry.name + "'");
  }
  auto shared = std::make_shared<const SliceType>(std::move(entry));
  r.by_type[shared->type] = shared;
  r.by_name[shared->name] = shared;
}

void SliceTypes::add_old_name(std::string_view name, std::string old_name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto current = r.by_name.find(name);
  if (current == r.by_name.end() || current->second->name != name) {
    throw Error(ErrorCode::kInvalidArgument,
                "no slice type '" + std::string(name) + "' to read '" + old_name + "' as");
  }
  if (auto it = r.by_name.find(old_name);
      it != r.by_name.end() && it->second->type != current->second->type) {
    throw Error(ErrorCode::kInvalidArgument,
                "slice type name '" + old_name + "' is taken by another type");
  }
  r.by_name[std::move(old_name)] = current->second;
}

std::shared_ptr<const SliceType> SliceTypes::find(std::type_index type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_type.find(type);
  return it == r.by_type.end() ? nullptr : it->second;
}

std::shared_ptr<const SliceType> SliceTypes::find(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

SlicePolicy SliceTypes::default_policy(std::type_index type) {
  std::shared_ptr<const SliceType> entry = find(type);
  return entry ? entry->default_policy : SlicePolicy::kState;
}

std::string SliceTypes::name_of(std::type_index type) {
  std::shared_ptr<const SliceType> entry = find(type);
  return entry ? entry->name : type.name();
}

}  // namespace sandbox
