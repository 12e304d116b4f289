#include "hooks/installed_settings.hpp"

#include <cstdlib>
#include <set>
#include <sstream>

#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "hooks/claude_code_settings.hpp"
#include "json_object.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The entry of a path in the list: its absolute path, its folder's links resolved.
std::string key_of(const fs::path& path) {
  boost::system::error_code ec;
  fs::path key = fs::weakly_canonical(fs::absolute(path), ec);
  return (ec ? fs::absolute(path) : key).string();
}

std::set<std::string> read_list(const fs::path& list) {
  std::set<std::string> entries;
  std::istringstream in(fsnap::read_small_file(list).value_or(""));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) entries.insert(line);
  }
  return entries;
}

void write_list(const fs::path& list, const std::set<std::string>& entries) {
  std::string text;
  for (const std::string& e : entries) text += e + '\n';
  boost::system::error_code ec;
  fs::create_directories(list.parent_path(), ec);
  fsnap::write_file_atomically(list, text, 0600);
}

// Adds (or takes off) path in list. A path holding a newline is never listed.
void mark(const std::optional<fs::path>& list, const fs::path& path, bool created) {
  if (!list) return;
  std::string key = key_of(path);
  std::set<std::string> entries = read_list(*list);
  bool listed = entries.count(key) != 0;
  if (created == listed || key.find('\n') != std::string::npos) return;
  if (created) {
    entries.insert(key);
  } else {
    entries.erase(key);
  }
  write_list(*list, entries);
}

bool listed(const std::optional<fs::path>& list, const fs::path& path) {
  return list && read_list(*list).count(key_of(path)) != 0;
}

// Whether text is a JSON object with nothing in it.
bool empty_object(const std::string& text) {
  try {
    return json_object::parse(text, "the settings file")->size() == 0;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::optional<fs::path> created_settings_list() {
  fs::path base;
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/') {
    base = state;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = fs::path(home) / ".local" / "state";
  } else {
    return std::nullopt;
  }
  return base / "shadowbox" / "created-settings";
}

void install_settings_hooks(const fs::path& file, const std::string& command,
                            const std::optional<fs::path>& list) {
  boost::system::error_code ec;
  bool had_folder = fs::exists(file.parent_path(), ec);
  bool had_file = fs::exists(fs::symlink_status(file, ec));
  bool held_ours = had_file && file_has_shadowbox_hooks(file);
  install_hooks_in_file(file, command);
  if (!had_folder) mark(list, file.parent_path(), true);
  // A file of ours from an earlier install stays listed as it was.
  if (!had_file || !held_ours) mark(list, file, !had_file);
}

SettingsRemoval uninstall_settings_hooks(const fs::path& file,
                                         const std::optional<fs::path>& list) {
  if (!uninstall_hooks_in_file(file)) return SettingsRemoval::kNoFile;
  if (!listed(list, file)) return SettingsRemoval::kHooksRemoved;
  std::optional<std::string> left = read_project_settings(file);
  if (!left || !empty_object(*left)) return SettingsRemoval::kHooksRemoved;
  fs::remove(file);
  mark(list, file, false);
  fs::path folder = file.parent_path();
  boost::system::error_code ec;
  if (listed(list, folder) && fs::is_empty(folder, ec) && !ec) {
    fs::remove(folder, ec);
    if (!ec) mark(list, folder, false);
  }
  return SettingsRemoval::kFileRemoved;
}

}  // namespace hooks
