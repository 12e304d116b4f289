#include "hooks/agent_adapter.hpp"

#include <cstdlib>

#include <boost/filesystem/operations.hpp>

#include "sandbox/errors.hpp"

namespace hooks {

namespace fs = boost::filesystem;

// Each agent's adapter (hooks/src/<agent>_adapter.cpp).
const AgentAdapter& claude_code_adapter();
const AgentAdapter& claude_sdk_adapter();
const AgentAdapter& codex_adapter();
const AgentAdapter& gemini_adapter();

namespace {

fs::path environment_path(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? fs::path(value) : fs::path();
}

}  // namespace

UserAgentSetup UserAgentSetup::from_environment() {
  UserAgentSetup out;
  out.claude = UserClaudeSetup::from_environment();
  out.codex_home = environment_path("CODEX_HOME");
  if (out.codex_home.empty()) out.codex_home = out.claude.home / ".codex";
  fs::path gemini_home = environment_path("GEMINI_CLI_HOME");
  out.gemini_dir = (gemini_home.empty() ? out.claude.home : gemini_home) / ".gemini";
  return out;
}

bool AgentAdapter::has_session_data(const fs::path& home, const std::string& session_id) const {
  if (session_id.empty()) return false;
  boost::system::error_code ec;
  for (const std::string& part : preserved_parts()) {
    fs::path root = home / part;
    if (!fs::is_directory(root, ec)) continue;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      if (!fs::is_regular_file(it->status(ec))) continue;
      std::string relative = part + "/" + it->path().lexically_relative(root).generic_string();
      if (is_session_path(relative, session_id)) return true;
    }
  }
  return false;
}

SessionCut AgentAdapter::cut_session(const fs::path& /*home*/,
                                     const SessionCutPoint& /*point*/) const {
  throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                       "shadowbox cannot cut the conversation of a " + name() + " agent");
}

const AgentAdapter& adapter_for(AgentKind kind) {
  switch (kind) {
    case AgentKind::kClaudeCode:
      return claude_code_adapter();
    case AgentKind::kClaudeSdk:
      return claude_sdk_adapter();
    case AgentKind::kCodex:
      return codex_adapter();
    case AgentKind::kGemini:
      return gemini_adapter();
  }
  return claude_code_adapter();
}

}  // namespace hooks
