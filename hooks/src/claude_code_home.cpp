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

bool has_transcript(const fs::path& home, const std::string& session_id) {
  fs::path projects = home / ".claude" / "projects";
  boost::system::error_code ec;
  if (session_id.empty() || !fs::is_directory(projects, ec)) return false;
  for (fs::directory_iterator it(projects, ec), end; !ec && it != end; it.increment(ec)) {
    if (fs::is_regular_file(it->path() / (session_id + ".jsonl"))) return true;
  }
  return false;
}

bool is_transcript_path(const std::string& path, const std::string& session_id) {
  std::string want = "/" + session_id + ".jsonl";
  return !session_id.empty() && path.rfind(".claude/projects/", 0) == 0 &&
         path.size() >= want.size() &&
         path.compare(path.size() - want.size(), want.size(), want) == 0;
}

}  // namespace hooks
