#include "hooks/claude_code_home.hpp"

#include <boost/filesystem/operations.hpp>

namespace hooks {

namespace fs = boost::filesystem;

std::vector<std::string> claude_code_preserved_parts() {
  return {".claude/projects", ".claude/todos"};
}

fs::path claude_code_settings_file(const fs::path& home) {
  return home / ".claude" / "settings.json";
}

bool is_transcript_path(const std::string& path, const std::string& session_id) {
  std::string want = "/" + session_id + ".jsonl";
  return !session_id.empty() && path.rfind(".claude/projects/", 0) == 0 &&
         path.size() >= want.size() &&
         path.compare(path.size() - want.size(), want.size(), want) == 0;
}

std::string claude_code_project_dir(const std::string& cwd) {
  std::string out = cwd;
  for (char& c : out) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!keep) c = '-';
  }
  return out;
}

void rekey_claude_code_sessions(const fs::path& home, const std::string& from,
                                const std::string& to) {
  fs::path projects = home / ".claude" / "projects";
  fs::path old_dir = projects / claude_code_project_dir(from);
  fs::path new_dir = projects / claude_code_project_dir(to);
  if (old_dir == new_dir || !fs::is_directory(old_dir) || fs::exists(new_dir)) return;
  fs::rename(old_dir, new_dir);
}

}  // namespace hooks
