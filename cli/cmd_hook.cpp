// `shadowbox hook claude-code` (one hook event on stdin) and
// `shadowbox hooks install|uninstall [--scope project|user]`.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "hooks/agent_home.hpp"
#include "hooks/claude_code_hook.hpp"
#include "hooks/claude_code_settings.hpp"
#include "shell.hpp"

namespace cli {

int cmd_hook(const Context& context, const Args& args) {
  CommandArgs parsed("hook", args, {"--run"}, {});
  parsed.expect_operands(1, 1, "hook claude-code [--run RUN]");
  if (parsed.operands()[0] != "claude-code") {
    throw UsageError("hook: unknown agent '" + parsed.operands()[0] + "' (supported: claude-code)");
  }
  std::string event((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  // Malformed input is answered before anything is opened or created.
  if (std::optional<std::string> problem = hooks::event_problem(event)) {
    std::cerr << "shadowbox: ignoring a malformed hook event: " << *problem << '\n';
    return 1;
  }
  const char* env_run = std::getenv("SHADOWBOX_RUN");
  hooks::ClaudeCodeHookOptions options = context.hook_options(
      parsed.value_or("--run", env_run != nullptr && *env_run ? env_run : "default"));
  fsnap::HostFilesystem workspace = context.open_workspace(true);
  sandbox::Ledger ledger(workspace.store());
  hooks::HookAnswer answer = hooks::handle_claude_code_event(event, workspace, ledger, options);
  // Under `shadowbox run`, the agent's session data is preserved at every boundary, so
  // a crash loses at most the step in flight.
  const char* run_home = std::getenv("SHADOWBOX_RUN_HOME");
  if (run_home != nullptr && *run_home != '\0') {
    try {
      hooks::preserve_home(workspace.store(), options.run, run_home, options.secrets);
    } catch (const std::exception& e) {
      std::cerr << "shadowbox: warning: could not preserve the agent's session data: " << e.what()
                << '\n';
    }
  }
  if (!answer.stdout_json.empty()) std::cout << answer.stdout_json << '\n';
  if (!answer.stderr_text.empty()) std::cerr << answer.stderr_text << '\n';
  return answer.exit_code;
}

int cmd_hooks(const Context& context, const Args& args) {
  CommandArgs parsed("hooks", args, {"--scope"}, {});
  parsed.expect_operands(1, 1, "hooks install|uninstall [--scope project|user]");
  const std::string& action = parsed.operands()[0];
  if (action != "install" && action != "uninstall") {
    throw UsageError("hooks: expected install or uninstall, not '" + action + "'");
  }
  std::string scope = parsed.value_or("--scope", "project");
  boost::filesystem::path file;
  if (scope == "project") {
    file = context.workspace / ".claude" / "settings.json";
  } else if (scope == "user") {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') throw std::runtime_error("HOME is not set");
    file = boost::filesystem::path(home) / ".claude" / "settings.json";
  } else {
    throw UsageError("hooks: --scope must be project or user, not '" + scope + "'");
  }
  if (action == "install") {
    // The hook finds the workspace through $CLAUDE_PROJECT_DIR; the store is fixed now.
    std::string command = shell_quote(self_path()) + " --store " +
                          shell_quote(context.store_dir.string()) + " hook claude-code";
    context.open_store(true);
    hooks::install_hooks_in_file(file, command);
    std::cout << "installed shadowbox's hooks in " << file.string() << '\n';
  } else if (hooks::uninstall_hooks_in_file(file)) {
    std::cout << "removed shadowbox's hooks from " << file.string() << '\n';
  } else {
    std::cout << "no settings file at " << file.string() << "; nothing to remove\n";
  }
  return 0;
}

}  // namespace cli
