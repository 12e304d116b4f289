#include "hooks/claude_code_credentials.hpp"

#include <sys/stat.h>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/claude_code_user_setup.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

namespace fs = boost::filesystem;
using Poco::JSON::Object;

namespace {

// Puts content into file (removing it for nullopt), keeping an existing file's mode
// and giving a new one 0600.
void put(const fs::path& file, const std::optional<std::string>& content) {
  if (!content) {
    boost::system::error_code ec;
    fs::remove(file, ec);
    if (ec) {
      throw sandbox::Error(sandbox::ErrorCode::kIo,
                           "cannot remove " + file.string() + ": " + ec.message());
    }
    return;
  }
  unsigned mode = 0600;
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) mode = st.st_mode & 0777;
  fs::create_directories(file.parent_path());
  fsnap::write_file_atomically(file, *content, mode);
}

// Removes a credentials file and the temporary files Claude Code writes beside it (one
// it did not get to rename holds a login too); returns what it could not remove.
std::vector<fs::path> remove_login_files(const fs::path& file) {
  std::vector<fs::path> left;
  boost::system::error_code ec;
  fs::remove(file, ec);
  if (ec) left.push_back(file);
  std::string stem = file.filename().string() + ".tmp.";
  for (fs::directory_iterator it(file.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    boost::system::error_code gone;
    if (it->path().filename().string().rfind(stem, 0) == 0 && !fs::remove(it->path(), gone)) {
      if (gone) left.push_back(it->path());
    }
  }
  return left;
}

}  // namespace

std::vector<fs::path> remove_credentials(const fs::path& home) {
  return remove_login_files(home / UserClaudeSetup::kCredentialsPath);
}

std::optional<long long> login_expiry(const std::string& text) {
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var v = parser.parse(text);
    if (v.type() != typeid(Object::Ptr)) return std::nullopt;
    Object::Ptr oauth = v.extract<Object::Ptr>()->getObject("claudeAiOauth");
    if (!oauth) return std::nullopt;
    std::string refresh = oauth->optValue<std::string>("refreshToken", "");
    std::string access = oauth->optValue<std::string>("accessToken", "");
    if (refresh.empty() && access.empty()) return std::nullopt;
    return oauth->optValue<long long>("expiresAt", 0);
  } catch (const Poco::Exception&) {
    return std::nullopt;
  }
}

CredentialSync::CredentialSync(fs::path user_file, fs::path run_file)
    : user_file_(std::move(user_file)), run_file_(std::move(run_file)) {
  base_ = fsnap::read_small_file(user_file_);
  carried_ = base_.has_value();
  if (base_) put(run_file_, base_);
}

void CredentialSync::sync() {
  std::optional<std::string> user = fsnap::read_small_file(user_file_);
  std::optional<std::string> run = fsnap::read_small_file(run_file_);
  if (user == run) {
    base_ = user;
    return;
  }
  bool user_changed = user != base_;
  bool run_changed = run != base_;
  bool had_login = base_ && login_expiry(*base_);
  std::optional<long long> run_expiry = run ? login_expiry(*run) : std::nullopt;
  // Only a refresh of the login the user had goes back to the user.
  bool run_wins = run_changed && had_login && run_expiry;
  if (run_wins && user_changed) {
    // The user's own claude changed it too: the login that expires later wins; a
    // logout is the user's to make.
    std::optional<long long> user_expiry = user ? login_expiry(*user) : std::nullopt;
    run_wins = user_expiry && *run_expiry > *user_expiry;
  }
  // A file that changed since it was read (its claude refreshed just now) is not
  // overwritten: the next sync sees the change.
  if (run_wins) {
    if (fsnap::read_small_file(user_file_) != user) return;
    put(user_file_, run);
    base_ = run;
  } else if (user_changed) {
    if (fsnap::read_small_file(run_file_) != run) return;
    put(run_file_, user);
    base_ = user;
  }
  // Else the run logged out or logged in anew: that stays in the run.
}

std::string CredentialSync::finish() {
  std::string problem;
  try {
    sync();
  } catch (const std::exception& e) {
    problem = e.what();
  }
  for (const fs::path& left : remove_login_files(run_file_)) {
    if (problem.empty()) problem = "cannot remove " + left.string();
  }
  return problem;
}

std::vector<fs::path> remove_stale_credentials(const fsnap::Store& store) {
  std::vector<fs::path> removed;
  fs::path runs = fsnap::layout::runs_dir(store.dir());
  boost::system::error_code ec;
  for (fs::directory_iterator run(runs, ec), end; !ec && run != end; run.increment(ec)) {
    std::string name = run->path().filename().string();
    std::optional<runs::RunMeta> meta;
    try {
      meta = runs::RunMeta::load(store, name);
    } catch (const std::exception&) {
      continue;  // unreadable: leave it to whoever runs it
    }
    if (meta && meta->running()) continue;
    boost::system::error_code inner;
    for (fs::directory_iterator home(run->path(), inner); !inner && home != end;
         home.increment(inner)) {
      if (home->path().filename().string().rfind("home", 0) != 0) continue;
      fs::path file = home->path() / UserClaudeSetup::kCredentialsPath;
      bool was = fs::exists(file, inner);
      if (remove_credentials(home->path()).empty() && was) removed.push_back(file);
    }
  }
  return removed;
}

}  // namespace hooks
