#include "hooks/agent_home.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <boost/filesystem/operations.hpp>

#include "fsnap/shadow_repo.hpp"
#include "hooks/claude_code_settings.hpp"

namespace hooks {

namespace fs = boost::filesystem;

std::string home_ref(const std::string& run) {
  return "refs/shadowbox/home/" + run;
}

fs::path run_dir(const fsnap::Store& store, const std::string& run) {
  return store.dir() / "runs" / run;
}

void write_home_settings(const fs::path& home, const std::string& hook_command) {
  install_hooks_in_file(home / ".claude" / "settings.json", hook_command);
}

void write_home_http_settings(const fs::path& home, const std::string& url,
                              const std::string& hook_command) {
  install_http_hooks_in_file(home / ".claude" / "settings.json", url, hook_command);
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  static const std::string kMark = "[REDACTED]";
  for (const std::string& secret : secrets) {
    if (secret.size() < 8) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kMark.size())) {
      text.replace(at, secret.size(), kMark);
    }
  }
  return text;
}

std::vector<std::string> secret_values(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const char* value = std::getenv(name.c_str());
    if (value != nullptr && *value != '\0') out.emplace_back(value);
  }
  return out;
}

namespace {

std::string read_file(const fs::path& file) {
  std::ifstream in(file.string(), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Copies the regular files and directories under from into to, redacting secrets.
void copy_redacted(const fs::path& from, const fs::path& to,
                   const std::vector<std::string>& secrets) {
  fs::create_directories(to);
  for (fs::directory_iterator it(from), end; it != end; ++it) {
    fs::file_status st = fs::symlink_status(it->path());
    fs::path target = to / it->path().filename();
    if (fs::is_directory(st)) {
      copy_redacted(it->path(), target, secrets);
    } else if (fs::is_regular_file(st)) {
      std::ofstream out(target.string(), std::ios::binary | std::ios::trunc);
      out << redact(read_file(it->path()), secrets);
      if (!out.flush()) throw std::runtime_error("cannot write " + target.string());
    }
  }
}

}  // namespace

std::string preserve_home(const fsnap::Store& store, const std::string& run, const fs::path& home,
                          const std::vector<std::string>& secrets) {
  fs::path staging = run_dir(store, run) / ("staging." + std::to_string(::getpid()));
  fs::remove_all(staging);
  try {
    fs::create_directories(staging);
    for (const char* part : kPreservedHomeParts) {
      if (fs::is_directory(home / part)) copy_redacted(home / part, staging / part, secrets);
    }
    fsnap::StoreLock lock = store.lock();
    fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store.repo_dir(), false);
    fsnap::CaptureOptions options;
    options.max_file_size = 0;
    std::string tree = repo.capture_directory(staging, options);
    if (repo.ref_tree(home_ref(run)) != tree) {
      repo.commit_to_ref(home_ref(run), tree, "home of run " + run);
    }
    fs::remove_all(staging);
    return tree;
  } catch (...) {
    boost::system::error_code ec;
    fs::remove_all(staging, ec);
    throw;
  }
}

HomePreserver::HomePreserver(fsnap::Store store, std::string run, fs::path home,
                             std::vector<std::string> secrets)
    : store_(std::move(store)),
      run_(std::move(run)),
      home_(std::move(home)),
      secrets_(std::move(secrets)) {}

std::string HomePreserver::signature() const {
  std::string out;
  for (const char* part : kPreservedHomeParts) {
    boost::system::error_code ec;
    for (fs::recursive_directory_iterator it(home_ / part, ec), end; !ec && it != end;
         it.increment(ec)) {
      struct stat st;
      if (::lstat(it->path().c_str(), &st) != 0) continue;
      out += it->path().string();
      out += '\0' + std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
             std::to_string(st.st_mtim.tv_nsec) + ':' + std::to_string(st.st_ino) + '\n';
    }
  }
  return out;
}

bool HomePreserver::preserve() {
  std::string now = signature();
  if (!last_.empty() && now == last_) return false;
  last_.clear();
  preserve_home(store_, run_, home_, secrets_);
  last_ = std::move(now);
  return true;
}

void rebuild_home(const fsnap::Store& store, const std::string& run, const fs::path& dir) {
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store.repo_dir(), false);
  std::optional<std::string> tree = repo.ref_tree(home_ref(run));
  if (!tree) {
    throw std::runtime_error("run '" + run + "' has no preserved agent data (" + home_ref(run) +
                             " is missing)");
  }
  repo.materialize(*tree, dir);
}

bool has_transcript(const fs::path& home, const std::string& session_id) {
  fs::path projects = home / ".claude" / "projects";
  if (session_id.empty() || !fs::is_directory(projects)) return false;
  for (fs::directory_iterator it(projects), end; it != end; ++it) {
    if (fs::is_regular_file(it->path() / (session_id + ".jsonl"))) return true;
  }
  return false;
}

}  // namespace hooks
