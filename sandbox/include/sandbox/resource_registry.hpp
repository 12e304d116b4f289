// ResourceRegistry — the typed runtime resources of an ExecutionState (filesystem,
// budget, …), looked up by a key type. Resources that implement
// fsnap::Snapshotable<S> are captured and restored with every composite snapshot.
//
// ResourceSnapshot is one resource's captured state, type-erased; the codecs in
// ResourceSnapshotCodecs turn it into JSON and back (FilesystemSnapshot and
// BudgetSnapshot are built in; register more with ResourceSnapshotCodecs::add).
//
// Thread-safety: fill the registry before sharing it; lookups may then run
// concurrently.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <vector>

#include <Poco/Dynamic/Var.h>

#include "fsnap/checkpoint.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/snapshot.hpp"
#include "sandbox/errors.hpp"

namespace sandbox {

// One resource's captured state.
struct ResourceSnapshot {
  std::type_index type = typeid(void);  // the C++ type of the value
  std::shared_ptr<const void> value;

  template <typename S>
  static ResourceSnapshot of(S snapshot) {
    return ResourceSnapshot{typeid(S), std::make_shared<const S>(std::move(snapshot))};
  }
  // The value as S, or nullptr if it is not an S.
  template <typename S>
  const S* get() const {
    return type == typeid(S) ? static_cast<const S*>(value.get()) : nullptr;
  }
};

namespace detail {
template <typename S>
S snapshot_type_of(const fsnap::Snapshotable<S>*);
template <typename T>
concept SnapshotableResource = requires(T* t) {
  snapshot_type_of(t);
};
}  // namespace detail

// Typed container of runtime resources. A fsnap::HostFilesystem (or a type derived from
// it) is captured as a checkpoint with metadata and ledger notes, and restored with a
// safety checkpoint; any other fsnap::Snapshotable<S> through snapshot(label)/restore.
class ResourceRegistry {
 public:
  // Why a resource is captured, and — for a host filesystem, which records a checkpoint
  // in its store — the notes to record with it.
  struct CaptureRequest {
    fsnap::CheckpointMeta meta;
    fsnap::NotesFor notes;  // recorded with the checkpoint of meta
    // Record files changed since the run's newest checkpoint first, as their own
    // checkpoint (attributed to no tool), with outside_notes.
    bool separate_outside_changes = false;
    fsnap::NotesFor outside_notes;
  };

  // How a resource restore treats what it replaces (a host filesystem takes a safety
  // checkpoint first).
  struct RestoreContext {
    std::string run;               // the run that receives the safety checkpoint
    fsnap::NotesFor safety_notes;  // recorded with it
    // A host filesystem: only these paths are put back (fsnap::RestoreOptions::only).
    std::optional<std::set<std::string>> only_paths;
    // A host filesystem: only these paths and what is below them (RestoreOptions::paths).
    std::optional<std::vector<std::string>> paths;
    // A rollback: the failed call the safety checkpoint is the state of (RestoreOptions).
    std::string tool_call_id;
    std::string tool_name;
  };

  // A registered resource and, if it is snapshotable, how to capture and restore it.
  struct Entry {
    std::string name;  // stable name, used in JSON
    std::type_index key = typeid(void);
    std::shared_ptr<void> object;
    std::type_index snapshot_type = typeid(void);  // typeid(void) if not snapshotable
    // A host filesystem (checkpoints in a store, restored first, reports its restores),
    // or null. Owned by object.
    fsnap::HostFilesystem* host = nullptr;
    // Captures the resource (a host filesystem records a checkpoint with the request's
    // notes; other resources use the tag).
    std::function<ResourceSnapshot(const CaptureRequest&)> snapshot;
    // Restores it; a host filesystem says what it did.
    std::function<std::optional<fsnap::RestoreReport>(const ResourceSnapshot&,
                                                      const RestoreContext&)>
        restore;
  };

  // Registers resource under the key type Key (a base of Impl, or Impl itself) and a
  // stable name. A second resource for the same key or name is Error kInvalidArgument.
  template <typename Key, typename Impl>
  void put(std::shared_ptr<Impl> resource, std::string name) {
    static_assert(std::is_base_of_v<Key, Impl> || std::is_same_v<Key, Impl>);
    Entry entry;
    entry.name = std::move(name);
    entry.key = typeid(Key);
    entry.object = std::static_pointer_cast<void>(std::shared_ptr<Key>(resource));
    if constexpr (std::is_base_of_v<fsnap::HostFilesystem, Impl>) {
      fsnap::HostFilesystem* host = resource.get();
      entry.snapshot_type = typeid(fsnap::FilesystemSnapshot);
      entry.host = host;
      entry.snapshot = [host](const CaptureRequest& request) {
        fsnap::Checkpoint c =
            request.separate_outside_changes
                ? host->checkpoint_after_outside_changes(outside_meta(request.meta), request.meta,
                                                         request.notes, request.outside_notes)
                      .back()
                : host->checkpoint(request.meta, request.notes);
        return ResourceSnapshot::of(fsnap::to_snapshot(c));
      };
      entry.restore = [host, name = entry.name](const ResourceSnapshot& snap,
                                                const RestoreContext& context) {
        return std::optional<fsnap::RestoreReport>(restore_host(*host, name, snap, context));
      };
    } else if constexpr (detail::SnapshotableResource<Impl>) {
      using S = decltype(detail::snapshot_type_of(static_cast<Impl*>(nullptr)));
      fsnap::Snapshotable<S>* target = resource.get();
      entry.snapshot_type = typeid(S);
      entry.snapshot = [target](const CaptureRequest& request) {
        // Its label; a snapshot with a tag and no label is labelled by its tag.
        const fsnap::CheckpointMeta& meta = request.meta;
        return ResourceSnapshot::of<S>(
            target->snapshot(meta.label.empty() ? meta.tag : meta.label));
      };
      entry.restore = [target, name = entry.name](const ResourceSnapshot& snap,
                                                  const RestoreContext&) {
        const S* value = snap.get<S>();
        if (value == nullptr) {
          throw SnapshotMismatchError("resource '" + name + "' cannot restore a snapshot of " +
                                      "another kind");
        }
        target->restore(*value);
        return std::optional<fsnap::RestoreReport>();
      };
    }
    add(std::move(entry));
  }

  // The resource registered under Key, or nullptr.
  template <typename Key>
  std::shared_ptr<Key> get() const {
    const Entry* e = find(typeid(Key));
    return e ? std::static_pointer_cast<Key>(e->object) : nullptr;
  }

  const Entry* find(std::type_index key) const;
  const Entry* find(std::string_view name) const;
  // Snapshotable resources, in registration order.
  std::vector<const Entry*> snapshotable() const;

 private:
  // The checkpoint meta of changes made outside any tool call, before meta.
  static fsnap::CheckpointMeta outside_meta(const fsnap::CheckpointMeta& meta);
  // Makes host the checkpoint snap names (a safety checkpoint first).
  static fsnap::RestoreReport restore_host(fsnap::HostFilesystem& host, const std::string& name,
                                           const ResourceSnapshot& snap,
                                           const RestoreContext& context);
  void add(Entry entry);
  std::vector<Entry> entries_;
};

// JSON codecs for resource snapshot types.
class ResourceSnapshotCodecs {
 public:
  struct Codec {
    std::string name;
    std::type_index type = typeid(void);
    std::function<Poco::Dynamic::Var(const ResourceSnapshot&)> encode;
    std::function<ResourceSnapshot(const Poco::Dynamic::Var&)> decode;
  };
  template <typename S>
  static void add(std::string name, std::function<Poco::Dynamic::Var(const S&)> encode,
                  std::function<S(const Poco::Dynamic::Var&)> decode) {
    Codec codec;
    codec.name = std::move(name);
    codec.type = typeid(S);
    codec.encode = [encode](const ResourceSnapshot& s) { return encode(*s.get<S>()); };
    codec.decode = [decode](const Poco::Dynamic::Var& v) {
      return ResourceSnapshot::of<S>(decode(v));
    };
    add_codec(std::move(codec));
  }
  static std::shared_ptr<const Codec> find(std::type_index type);
  static std::shared_ptr<const Codec> find(std::string_view name);

 private:
  static void add_codec(Codec codec);
};

// Registers the codec of fsnap::FilesystemSnapshot (a BudgetTracker registers its own).
// Idempotent. A host checkpoint is written by its commit (its files are in the store);
// an in-memory filesystem's snapshot with its whole tree, entry by entry (contents in
// base64), so it can be restored after a JSON round trip.
void register_builtin_resource_codecs();

}  // namespace sandbox
