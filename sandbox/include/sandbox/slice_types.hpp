// SlicePolicy and the registry of slice types: a stable name, a default policy and a
// JSON codec per C++ type, so session snapshots can be persisted and read back by
// another process, including snapshots of user-defined slice types.
//
// Thread-safety: the registry is safe to use from several threads; register types at
// start-up, before sessions that use them take snapshots.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>

#include <Poco/Dynamic/Var.h>

#include "statekit/slice.hpp"

namespace sandbox {

// How a slice behaves when a session rolls back (docs/conformance/EXECUTION_STATE.md,
// Slice Policies).
enum class SlicePolicy {
  kState,  // working state: rolled back on tool failure (the default)
  kLog,    // append-only history: preserved by rollbacks
  kCache,  // derived data: rolled back like state, may be recomputed
};

// "state", "log", "cache".
std::string_view to_string(SlicePolicy policy);
std::optional<SlicePolicy> parse_slice_policy(std::string_view text);

// What the registry knows about one slice type.
struct SliceType {
  std::string name;
  std::type_index type = typeid(void);
  SlicePolicy default_policy = SlicePolicy::kState;
  std::function<Poco::Dynamic::Var(const void*)> encode;  // empty: not persistable
  std::function<statekit::Item(const Poco::Dynamic::Var&)> decode;
};

// The process-wide registry of slice types.
class SliceTypes {
 public:
  // Registers T under name with its default policy and codec. Re-registering the same
  // type under the same name replaces the entry; a name taken by another type, or a
  // second name for one type, is Error kInvalidArgument.
  template <typename T>
  static void add(std::string name, SlicePolicy default_policy,
                  std::function<Poco::Dynamic::Var(const T&)> encode,
                  std::function<T(const Poco::Dynamic::Var&)> decode) {
    SliceType entry;
    entry.name = std::move(name);
    entry.type = typeid(T);
    entry.default_policy = default_policy;
    if (encode) {
      entry.encode = [encode](const void* p) { return encode(*static_cast<const T*>(p)); };
    }
    if (decode) {
      entry.decode = [decode](const Poco::Dynamic::Var& v) -> statekit::Item {
        return std::make_shared<const T>(decode(v));
      };
    }
    add_entry(std::move(entry));
  }

  // Reads slices stored under old_name (what the type registered as name was called
  // before) as that type; they are written under name from then on. Idempotent. Error
  // kInvalidArgument when name is not registered or old_name is another type's.
  static void add_old_name(std::string_view name, std::string old_name);

  // The entry for a type or name (or an old name of one), or nullptr.
  static std::shared_ptr<const SliceType> find(std::type_index type);
  static std::shared_ptr<const SliceType> find(std::string_view name);
  // The registered default policy of type, or kState for a type never registered.
  static SlicePolicy default_policy(std::type_index type);
  // The registered name of type, or its implementation-defined typeid name.
  static std::string name_of(std::type_index type);

 private:
  static void add_entry(SliceType entry);
};

}  // namespace sandbox
