#include "runs/home_preservation.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <boost/filesystem/operations.hpp>

#include "fsnap/store_layout.hpp"
#include "runs/redaction.hpp"
#include "sandbox/errors.hpp"

namespace runs {

namespace fs = boost::filesystem;

namespace {

std::string read_file(const fs::path& file) {
  std::ifstream in(file.string(), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw sandbox::Error(sandbox::ErrorCode::kIo, "cannot read " + file.string());
  return s.str();
}

// Copies the regular file from to to, redacting secrets.
void copy_file_redacted(const fs::path& from, const fs::path& to,
                        const std::vector<std::string>& secrets) {
  std::ofstream out(to.string(), std::ios::binary | std::ios::trunc);
  out << redact(read_file(from), secrets);
  if (!out.flush()) throw sandbox::Error(sandbox::ErrorCode::kIo, "cannot write " + to.string());
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
      copy_file_redacted(it->path(), target, secrets);
    }
  }
}

}  // namespace

HomePreserver::HomePreserver(fsnap::Store store, std::shared_ptr<fsnap::ShadowRepo> repo,
                             std::string run, fs::path home, std::vector<std::string> parts,
                             std::vector<std::string> secrets)
    : store_(std::move(store)),
      repo_(std::move(repo)),
      run_(std::move(run)),
      home_(std::move(home)),
      parts_(std::move(parts)),
      secrets_(std::move(secrets)) {}

std::string HomePreserver::signature() const {
  std::string out;
  // One line per file or directory: path, size, mtime in ns, inode.
  auto add = [&out](const fs::path& path, const struct stat& st) {
    out += path.string();
    out += '\0' + std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
           std::to_string(st.st_mtim.tv_nsec) + ':' + std::to_string(st.st_ino) + '\n';
  };
  for (const std::string& part : parts_) {
    struct stat st;
    if (::lstat((home_ / part).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      add(home_ / part, st);  // a part that is a file
      continue;
    }
    boost::system::error_code ec;
    for (fs::recursive_directory_iterator it(home_ / part, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (::lstat(it->path().c_str(), &st) == 0) add(it->path(), st);
    }
  }
  return out;
}

bool HomePreserver::preserve() {
  std::string now = signature();
  if (!last_.empty() && now == last_) return false;
  last_.clear();
  preserve_now();
  last_ = std::move(now);
  return true;
}

std::string HomePreserver::preserve_now() {
  fs::path staging = fsnap::layout::staging_dir(store_.dir(), run_, ::getpid());
  boost::system::error_code ec;
  fs::remove_all(staging, ec);
  try {
    fs::create_directories(staging);
    for (const std::string& part : parts_) {
      fs::file_status st = fs::symlink_status(home_ / part);
      if (fs::is_directory(st)) {
        copy_redacted(home_ / part, staging / part, secrets_);
      } else if (fs::is_regular_file(st)) {
        fs::create_directories((staging / part).parent_path());
        copy_file_redacted(home_ / part, staging / part, secrets_);
      }
    }
    fsnap::StoreLock lock = store_.lock();
    fsnap::CaptureOptions options;
    options.max_file_size = 0;
    std::string tree = repo_->capture_directory(staging, options);
    std::string ref = fsnap::layout::home_ref(run_);
    if (repo_->ref_tree(ref) != tree) repo_->commit_to_ref(ref, tree, "home of run " + run_);
    fs::remove_all(staging, ec);
    return tree;
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(staging, ec);
    throw sandbox::Error(sandbox::ErrorCode::kIo,
                         std::string("cannot preserve the agent's HOME: ") + e.what());
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
}

std::optional<std::string> preserved_home(const fsnap::ShadowRepo& repo, const std::string& run) {
  return repo.ref_tree(fsnap::layout::home_ref(run));
}

std::optional<std::chrono::system_clock::time_point> home_preserved_at(
    const fsnap::ShadowRepo& repo, const std::string& run) {
  return repo.ref_time(fsnap::layout::home_ref(run));
}

void rebuild_home(const fsnap::ShadowRepo& repo, const std::string& run, const fs::path& dir) {
  std::optional<std::string> tree = preserved_home(repo, run);
  if (!tree) {
    throw sandbox::Error(sandbox::ErrorCode::kNotFound,
                         "run " + fsnap::quote_input(run) + " has no preserved agent data (" +
                             fsnap::layout::home_ref(run) + " is missing)");
  }
  repo.materialize(*tree, dir);
}

}  // namespace runs
