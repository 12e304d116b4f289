// The agent's ephemeral HOME of a run: where it lives in the store, the settings file
// that installs shadowbox's hooks, and the preservation of its session data (what
// `claude --resume` needs, never credentials) under refs/shadowbox/home/<run>.
//
//   <store>/runs/<run>/home          the HOME the agent runs with
//   <store>/runs/<run>/run.json      what `shadowbox run` started, and how it ended
//   <store>/runs/<run>/log           warnings and errors of hooks
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/store.hpp"

namespace hooks {

// The parts of a HOME that are preserved (relative to HOME).
inline constexpr const char* kPreservedHomeParts[] = {".claude/projects", ".claude/todos"};

// The ref holding a run's preserved HOME data.
std::string home_ref(const std::string& run);
// <store>/runs/<run>.
boost::filesystem::path run_dir(const fsnap::Store& store, const std::string& run);

// Writes <home>/.claude/settings.json installing the hooks with hook_command.
void write_home_settings(const boost::filesystem::path& home, const std::string& hook_command);
// Writes <home>/.claude/settings.json installing HTTP hooks that post to url (and
// hook_command for the events HTTP hooks cannot serve).
void write_home_http_settings(const boost::filesystem::path& home, const std::string& url,
                              const std::string& hook_command);

// Replaces every occurrence of each secret (values shorter than 8 bytes are ignored)
// by "[REDACTED]".
std::string redact(std::string text, const std::vector<std::string>& secrets);
// The values of the named environment variables that are set and non-empty.
std::vector<std::string> secret_values(const std::vector<std::string>& names);

// Copies the preserved parts of home (secrets redacted) into the store and commits
// them to home_ref(run), unless nothing changed since the last preservation. Takes
// the store lock. Returns the tree id.
std::string preserve_home(const fsnap::Store& store, const std::string& run,
                          const boost::filesystem::path& home,
                          const std::vector<std::string>& secrets);
// Preserves one HOME again and again (as preserve_home does), skipping the work when
// no file of its preserved parts changed (path, size, mtime in ns, inode) since the
// last time — for a process that preserves at every tool boundary.
class HomePreserver {
 public:
  HomePreserver(fsnap::Store store, std::string run, boost::filesystem::path home,
                std::vector<std::string> secrets);
  // Preserves the HOME unless unchanged; returns whether it did. Throws as
  // preserve_home does (and then tries again next time).
  bool preserve();

 private:
  std::string signature() const;

  fsnap::Store store_;
  std::string run_;
  boost::filesystem::path home_;
  std::vector<std::string> secrets_;
  std::string last_;  // signature of the last preserved state
};

// Rebuilds a HOME from the preserved data of run into dir (which must not exist).
// Throws std::runtime_error if the run has no preserved data.
void rebuild_home(const fsnap::Store& store, const std::string& run,
                  const boost::filesystem::path& dir);
// True if home holds the transcript of agent session session_id.
bool has_transcript(const boost::filesystem::path& home, const std::string& session_id);

}  // namespace hooks
