// The user's Claude Code login (OAuth, .claude/.credentials.json) inside an agent run.
//
// Claude Code rewrites its credentials file by renaming a new one over it (a symbolic
// link would be replaced, not followed), and OAuth refresh tokens rotate: a refresh
// invalidates the old refresh token. So the run gets a copy, and CredentialSync keeps
// the two files in step: a login refreshed in the run is written back to the user's
// file, one refreshed by the user's own claude meanwhile reaches the run; when both
// changed, the one that expires later wins. Only a refresh of the login the user had
// goes back: a logout in the run (its file removed or emptied) does not log the user
// out, and a login made in the run stays in the run. finish() removes the run's copy: credentials
// are never left in the store.
//
// Thread-safety: one thread at a time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/store.hpp"

namespace hooks {

// Keeps a run's copy of the user's credentials file in step with it.
class CredentialSync {
 public:
  // Copies user_file (if it exists) to run_file (mode 0600). Error kIo if it cannot.
  CredentialSync(boost::filesystem::path user_file, boost::filesystem::path run_file);

  // Brings whichever side changed since the last sync to the other. Error kIo if a
  // file cannot be read or written (the next sync tries again).
  void sync();
  // A last sync, then the run's copy is removed. Never throws; returns what went wrong
  // ("" if nothing).
  std::string finish();

  // Whether the user had a login to carry.
  bool carried() const { return carried_; }

 private:
  boost::filesystem::path user_file_;
  boost::filesystem::path run_file_;
  std::optional<std::string> base_;  // what both files held after the last sync
  bool carried_ = false;
};

// The moment a credentials file's login expires (claudeAiOauth.expiresAt, ms since the
// epoch), or nullopt if text holds no usable login (no refresh or access token).
std::optional<long long> login_expiry(const std::string& text);

// Removes the credentials file of the HOME home (and Claude Code's temporary files
// beside it). Never throws; returns the files it could not remove.
std::vector<boost::filesystem::path> remove_credentials(const boost::filesystem::path& home);

// Removes credentials files left in the HOMEs of store's runs whose supervisor is gone
// (it was killed before it could). Never throws; returns the files removed.
std::vector<boost::filesystem::path> remove_stale_credentials(const fsnap::Store& store);

}  // namespace hooks
