// Checkpoint — the record of one workspace capture in the shadow repository.
//
// Each checkpoint is one commit on the chain of its run (refs/shadowbox/runs/<run>).
// The commit's tree is exactly the captured workspace; its message names the phase,
// tool and call id, and carries the metadata below as trailers, so plain `git log`
// shows everything. Thread-safety: plain values.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fsnap/snapshot.hpp"

namespace fsnap {

// Why a checkpoint was taken.
enum class Phase {
  kPreTool,     // before a tool call ran
  kPostTool,    // after a tool call finished
  kCheckpoint,  // a boundary not attributed to a tool (e.g. changes between calls)
  kManual,      // asked for by a person (`shadowbox snapshot`)
  kSafety,      // taken automatically before a restore, so the restore can be undone
  kDenied,      // a tool call containment refused: it did not run, nothing changed
};

// "pre_tool", "post_tool", "checkpoint", "manual", "safety", "denied".
std::string_view to_string(Phase phase);
// The phase named s, or nullopt.
std::optional<Phase> parse_phase(std::string_view s);

// The run a checkpoint goes to when none is named.
inline constexpr std::string_view kDefaultRun = "default";

// What the caller says about a checkpoint it asks for.
struct CheckpointMeta {
  // Optional; also becomes refs/shadowbox/tags/<tag>, so it is a git ref name (letters,
  // digits, '-', '_', '.'), unique in the store: `restore TAG` finds the checkpoint by
  // it. A checkpoint read back has its tag only while that ref names it (a tag moved
  // elsewhere is not shown twice).
  std::string tag;
  Phase phase = Phase::kManual;
  std::string tool_call_id;  // optional
  std::string tool_name;     // optional
  std::string run = std::string(kDefaultRun);
  // A tag that names another checkpoint already is refused (kConflict) unless this is
  // set: then it moves here, as `git tag --force` does.
  bool move_tag = false;
  // Optional free text about the checkpoint (any bytes: "pre:call_1", spaces, ':' '/',
  // non-ASCII; many checkpoints may share one), kept in the commit message and read
  // back as it was; unlike a tag it names no ref. The execution-state specification's
  // snapshot tag is this label (docs/conformance/EXECUTION_STATE.md).
  std::string label;

  friend bool operator==(const CheckpointMeta&, const CheckpointMeta&) = default;
};

// A checkpoint as recorded in the shadow repository.
struct Checkpoint {
  std::string id;      // stable checkpoint id (16 hex digits), kept across gc
  std::string commit;  // full hex id of the checkpoint commit
  std::string tree;    // full hex id of the captured tree
  std::string parent;  // commit of the previous checkpoint of the run, or empty
  CheckpointMeta meta;
  std::chrono::system_clock::time_point created_at;
  std::vector<SkippedPath> skipped;
};

// The commit message for a checkpoint: subject "<phase> [<tool> [<call id>]]", then
// the skipped paths and the trailers Checkpoint-Id, Phase, Run-Id, Tag, Label (quoted:
// fsnap/path_quoting.hpp), Tool-Name,
// Tool-Call-Id, Created-At, and per skipped path Skipped (size, reason, path) and, if
// the store kept a copy of it, Large-File-Copy (the copy's name, the file's mtime in ns,
// the path).
std::string format_checkpoint_message(const Checkpoint& checkpoint);
// Parses a message written by format_checkpoint_message into checkpoint (id, meta,
// created_at, skipped). Returns false if the message is not a checkpoint's.
bool parse_checkpoint_message(std::string_view message, Checkpoint& checkpoint);

// ISO-8601 UTC with microseconds ("2026-11-22T15:31:44.123456Z").
std::string format_timestamp(std::chrono::system_clock::time_point t);
// Inverse of format_timestamp; nullopt when s is not in that form.
std::optional<std::chrono::system_clock::time_point> parse_timestamp(std::string_view s);

}  // namespace fsnap
