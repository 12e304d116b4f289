#include "global_ignores.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/filesystem/operations.hpp>

#include "git_handles.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path.string(), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

void add_global_ignores(git_repository* repo) {
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  fs::path config_home = xdg != nullptr && *xdg != '\0' ? fs::path(xdg)
                         : home != nullptr              ? fs::path(home) / ".config"
                                                        : fs::path();
  std::string excludes_file;
  {
    git_config* raw = nullptr;
    if (git_repository_config_snapshot(&raw, repo) == 0) {
      git::Config local(raw);
      git::Buf value;
      if (git_config_get_path(&value.buf, local.get(), "core.excludesFile") == 0) return;
    }
  }
  std::vector<fs::path> configs;
  if (!config_home.empty()) configs.push_back(config_home / "git" / "config");
  if (home != nullptr) configs.push_back(fs::path(home) / ".gitconfig");  // wins over the XDG one
  for (const fs::path& file : configs) {
    boost::system::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    git_config* raw = nullptr;
    if (git_config_open_ondisk(&raw, file.c_str()) != 0) continue;
    git::Config config(raw);
    git::Buf value;
    if (git_config_get_path(&value.buf, config.get(), "core.excludesFile") == 0) {
      excludes_file = value.str();
    }
  }
  if (excludes_file.empty() && !config_home.empty()) {
    excludes_file = (config_home / "git" / "ignore").string();
  }
  boost::system::error_code ec;
  if (excludes_file.empty() || !fs::is_regular_file(excludes_file, ec)) return;
  std::string rules = read_text_file(excludes_file);
  if (!rules.empty()) {
    git::check(git_ignore_add_rule(repo, rules.c_str()),
               "cannot read the ignore rules of " + excludes_file);
  }
}

}  // namespace fsnap
