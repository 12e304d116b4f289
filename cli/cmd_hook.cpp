// `shadowbox hook claude-code` (one hook event on stdin) and
// `shadowbox hooks install|uninstall [--scope project|user]`.
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/claude_code_event.hpp"
#include "hooks/claude_code_home.hpp"
#include "hooks/claude_code_hook.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/run_policy.hpp"
#include "sandbox/home_preservation.hpp"
#include "sandbox/redaction.hpp"
#include "sandbox/run_meta.hpp"
#include "shell.hpp"
#include "termination.hpp"

namespace cli {

int cmd_hook(const Context& context, const Args& args) {
  CommandArgs parsed("hook", args, {"--run"}, {});
  parsed.expect_operands(1, 1);
  if (parsed.operands()[0] != "claude-code") {
    throw parsed.usage_error("unknown agent " + fsnap::quote_input(parsed.operands()[0]) +
                             " (supported: claude-code)");
  }
  // An agent being stopped gets SIGTERM with its hook processes: this one finishes the
  // step it records (it is short; SIGKILL after the kill grace still ends it).
  defer_termination();
  std::string event((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  // Malformed input is answered before anything is opened or created.
  if (std::optional<std::string> problem = hooks::event_problem(event)) {
    std::cerr << "shadowbox: ignoring a malformed hook event: " << *problem << '\n';
    return 1;
  }
  const char* env_run = std::getenv("SHADOWBOX_RUN");
  std::string run_name =
      parsed.value_or("--run", env_run != nullptr && *env_run ? env_run : "default");
  std::unique_ptr<sandbox::LedgerRun> run = context.open_run(run_name, true);
  hooks::contain_run(*run, context.config,
                     hooks::run_limits(run->store(), run_name, context.config));
  std::vector<std::string> secrets = sandbox::secret_values(context.config.run.secrets);
  hooks::SpendMeter meter(context.config.policy.prices,
                          fsnap::layout::agent_cost_file(run->store().dir(), run_name));
  auto warn = [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; };
  // A run that `shadowbox run` started has run.json; hooks installed by hand do not.
  bool supervised = sandbox::RunMeta::load(run->store(), run_name).has_value();
  hooks::HookAnswer answer =
      hooks::handle_claude_code_event(event, *run, {secrets, &meter, supervised, warn});
  // Under `shadowbox run`, the agent's session data is preserved at every boundary, so
  // a crash loses at most the step in flight.
  const char* run_home = std::getenv("SHADOWBOX_RUN_HOME");
  if (run_home != nullptr && *run_home != '\0') {
    try {
      sandbox::HomePreserver(run->store(), run->repo(), run_name, run_home,
                             hooks::claude_code_preserved_parts(), secrets)
          .preserve_now();
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
  parsed.expect_operands(1, 1);
  const std::string& action = parsed.operands()[0];
  if (action != "install" && action != "uninstall") {
    throw parsed.usage_error("expected install or uninstall, not " + fsnap::quote_input(action));
  }
  std::string scope = parsed.value_or("--scope", "project");
  boost::filesystem::path file;
  if (scope == "project") {
    file = context.workspace / ".claude" / "settings.json";
  } else if (scope == "user") {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') {
      throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument, "HOME is not set");
    }
    file = hooks::claude_code_settings_file(home);
  } else {
    throw parsed.usage_error("--scope must be project or user, not " + fsnap::quote_input(scope));
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
