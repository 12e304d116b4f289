#include "hooks/claude_code_user_setup.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "json_object.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

namespace fs = boost::filesystem;
using Poco::JSON::Object;
using sandbox::Error;
using sandbox::ErrorCode;

namespace {

using json_object::parse;

std::string read_text(const fs::path& file) {
  std::optional<std::string> text = fsnap::read_small_file(file);
  if (!text) throw Error(ErrorCode::kIo, "cannot read " + file.string() + ": it is gone");
  return *text;
}

// Writes content to file with the permission bits of from.
void write_like(const fs::path& file, const std::string& content, const fs::path& from) {
  fsnap::write_file_atomically(file, content);
  struct stat st {};
  if (::stat(from.c_str(), &st) == 0) ::chmod(file.c_str(), st.st_mode & 07777);
}

// Copies from (followed if a symbolic link) to to: a file, or a directory and what it
// holds. Sockets, devices, dangling links and links back into a directory being copied
// (a loop) are left out. above: the directories being copied, as real paths.
void copy_path(const fs::path& from, const fs::path& to, std::vector<fs::path>& above,
               std::vector<std::string>& failed) {
  boost::system::error_code ec;
  fs::file_status st = fs::status(from, ec);
  if (ec) return;  // dangling link, or gone meanwhile
  std::size_t depth = above.size();
  try {
    if (fs::is_directory(st)) {
      fs::path real = fs::canonical(from, ec);
      if (ec || std::find(above.begin(), above.end(), real) != above.end()) return;
      fs::create_directories(to);
      fs::permissions(to, st.permissions() | fs::owner_all, ec);
      above.push_back(real);
      for (fs::directory_iterator it(from), end; it != end; ++it) {
        copy_path(it->path(), to / it->path().filename(), above, failed);
      }
      above.pop_back();
    } else if (fs::is_regular_file(st)) {
      fs::create_directories(to.parent_path());
      fs::copy_file(from, to, fs::copy_options::overwrite_existing);
      fs::permissions(to, st.permissions() | fs::owner_read | fs::owner_write, ec);
    }
  } catch (const fs::filesystem_error& e) {
    // The rest is copied all the same.
    above.resize(depth);
    failed.push_back(from.string() + ": " + e.code().message());
  }
}

// Claude Code's plugin registries name where each plugin and marketplace lies, as
// absolute paths into the user's plugins directory: the copy's are made to name the
// copy, so the run neither loads nor updates the user's own.
void point_plugins_at_copy(const fs::path& from, const fs::path& to) {
  std::vector<std::string> originals = {from.string()};
  boost::system::error_code ec;
  fs::path real = fs::canonical(from, ec);
  if (!ec && real != from) originals.push_back(real.string());
  for (const char* registry :
       {"installed_plugins.json", "installed_plugins_v2.json", "known_marketplaces.json"}) {
    fs::path file = to / registry;
    std::optional<std::string> text = fsnap::read_small_file(file);
    if (!text) continue;
    std::string changed = *text;
    for (const std::string& original : originals) {
      std::string quoted = "\"" + original;  // a JSON string that starts with the path
      for (std::size_t at = changed.find(quoted); at != std::string::npos;
           at = changed.find(quoted, at + 1)) {
        char next = at + quoted.size() < changed.size() ? changed[at + quoted.size()] : '\0';
        if (next == '/' || next == '"') changed.replace(at + 1, original.size(), to.string());
      }
    }
    if (changed != *text) write_like(file, changed, file);
  }
}

// True if dir is path or a directory above it.
bool is_at_or_above(const std::string& dir, const std::string& path) {
  if (dir == path || dir == "/") return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

}  // namespace

UserClaudeSetup UserClaudeSetup::from_environment() {
  UserClaudeSetup out;
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    out.home = home;
  } else if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) {
    out.home = pw->pw_dir;
  }
  const char* config_dir = std::getenv("CLAUDE_CONFIG_DIR");
  if (config_dir != nullptr && *config_dir != '\0') out.config_dir = config_dir;
  return out;
}

fs::path UserClaudeSetup::source_of(const std::string& carried) const {
  if (!config_dir.empty()) {
    if (carried == ".claude.json") return config_dir / ".claude.json";
    if (carried.rfind(".claude/", 0) == 0) return config_dir / carried.substr(8);
  }
  return home / carried;
}

std::string claude_json_for_workspace(const std::string& text,
                                      const std::vector<std::string>& workspace_paths) {
  Object::Ptr config = parse(text, ".claude.json");
  if (config->has("projects") && config->get("projects").type() == typeid(Object::Ptr)) {
    Object::Ptr projects = config->getObject("projects");
    Object::Ptr kept = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    for (const std::string& dir : projects->getNames()) {
      for (const std::string& workspace : workspace_paths) {
        if (is_at_or_above(dir, workspace)) {
          kept->set(dir, projects->get(dir));
          break;
        }
      }
    }
    config->set("projects", kept);
  }
  std::ostringstream out;
  config->stringify(out, 2);
  out << '\n';
  return out.str();
}

CarriedSetup carry_user_setup(const UserClaudeSetup& user, const std::vector<std::string>& carry,
                              const fs::path& run_home, const fs::path& workspace) {
  CarriedSetup out;
  if (user.home.empty()) {
    out.skipped.push_back("everything: this process has no HOME");
    return out;
  }
  std::vector<std::string> workspace_paths = {workspace.string()};
  boost::system::error_code ec;
  fs::path canonical = fs::canonical(workspace, ec);
  if (!ec && canonical != workspace) workspace_paths.push_back(canonical.string());
  for (const std::string& path : carry) {
    fs::path from = user.source_of(path);
    fs::path to = run_home / path;
    if (!fs::exists(from, ec)) continue;
    try {
      if (path == ".claude.json") {
        fs::create_directories(to.parent_path());
        write_like(to, claude_json_for_workspace(read_text(from), workspace_paths), from);
      } else if (path == ".claude/settings.json") {
        std::string text = read_text(from);
        Object::Ptr settings = parse(text, "settings.json");  // our hooks go into it
        if (settings->has("disableAllHooks")) {
          // It would switch off shadowbox's hooks too: the run records every call.
          settings->remove("disableAllHooks");
          std::ostringstream without;
          settings->stringify(without, 2);
          text = without.str() + "\n";
          out.skipped.push_back(path + ": its disableAllHooks (the run needs shadowbox's hooks)");
        }
        fs::create_directories(to.parent_path());
        write_like(to, text, from);
      } else {
        std::vector<fs::path> above;
        std::vector<std::string> failed;
        copy_path(from, to, above, failed);
        if (path == ".claude/plugins") point_plugins_at_copy(from, to);
        if (!failed.empty()) {
          out.skipped.push_back(
              path + ": " + failed.front() +
              (failed.size() > 1 ? " (and " + std::to_string(failed.size() - 1) + " more)" : ""));
        }
      }
      out.carried.push_back(path);
    } catch (const Error& e) {
      out.skipped.push_back(path + ": " + e.what());
    } catch (const fs::filesystem_error& e) {
      // What was copied of it stays, and is removed with the rest.
      out.carried.push_back(path);
      out.skipped.push_back(path + ": " + e.path1().string() + ": " + e.code().message());
    }
  }
  return out;
}

std::vector<std::string> remove_carried_setup(const fs::path& run_home,
                                              const std::vector<std::string>& carried) {
  std::vector<std::string> left;
  std::vector<std::string> paths = carried;
  for (const std::string& path : carried) {
    // Claude Code keeps backups of .claude.json: they hold what it holds.
    if (path == ".claude.json") paths.push_back(".claude/backups");
  }
  for (const std::string& path : paths) {
    boost::system::error_code ec;
    fs::remove_all(run_home / path, ec);
    if (ec) left.push_back(path + ": " + ec.message());
  }
  return left;
}

}  // namespace hooks
