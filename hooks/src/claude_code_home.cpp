#include "hooks/claude_code_home.hpp"

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

}  // namespace hooks
