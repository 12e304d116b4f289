#include "hooks/agent_run.hpp"

#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "fsnap/checkpoint.hpp"
#include "fsnap/error.hpp"
#include "hooks/claude_code_event.hpp"
#include "hooks/claude_code_home.hpp"
#include "hooks/claude_code_hook.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/hook_server.hpp"
#include "sandbox/home_preservation.hpp"
#include "sandbox/ledger_run.hpp"
#include "sandbox/redaction.hpp"

namespace hooks {

namespace {

std::string now_text() {
  return fsnap::format_timestamp(std::chrono::system_clock::now());
}

// How the agent's end is recorded.
sandbox::RunStatus status_of(const AgentExit& exit) {
  if (exit.signal != 0)
    return {"killed", "the agent was killed by signal " + std::to_string(exit.signal)};
  if (exit.status == 0) return {"complete", "the agent exited with status 0"};
  return {"failed", "the agent exited with status " + std::to_string(exit.status)};
}

// Answers hook events inside this process (hooks.transport: http): the workspace stays
// open and watched between events, and each event costs one loopback request.
class InProcessHooks {
 public:
  InProcessHooks(sandbox::LedgerRun& run, sandbox::HomePreserver& preserver,
                 ClaudeCodeHookOptions options)
      : run_(run),
        preserver_(preserver),
        options_(std::move(options)),
        server_([this](const std::string& event) { return answer(event); },
                [this](const HttpHookReply&) { preserve(); }) {}

  const std::string& url() const { return server_.url(); }
  // Answers no more events (the agent is gone); waits for one being answered.
  void stop() { server_.stop(); }

 private:
  HttpHookReply answer(const std::string& event) {
    if (std::optional<std::string> problem = event_problem(event)) {
      std::string message = "shadowbox: ignoring a malformed hook event: " + *problem;
      sandbox::append_run_log(run_.store(), run_.run(), message);
      return HttpHookReply{400, "text/plain; charset=utf-8", message};
    }
    return to_http_reply(handle_claude_code_event(event, run_, options_));
  }

  // The agent's session data, preserved at every boundary (after the reply: the agent
  // need not wait for it, and the next event waits until it is done).
  void preserve() {
    try {
      preserver_.preserve();
    } catch (const std::exception& e) {
      sandbox::append_run_log(
          run_.store(), run_.run(),
          std::string("warning: could not preserve the agent's session data: ") + e.what());
    }
  }

  sandbox::LedgerRun& run_;
  sandbox::HomePreserver& preserver_;
  ClaudeCodeHookOptions options_;
  HookServer server_;  // last: stops before what it uses goes
};

}  // namespace

std::vector<std::string> loopback_without_proxy() {
  std::vector<std::string> out;
  bool proxied = false;
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) {
    const char* value = std::getenv(name);
    proxied = proxied || (value != nullptr && *value != '\0');
  }
  if (!proxied) return out;
  for (const char* name : {"NO_PROXY", "no_proxy"}) {
    const char* value = std::getenv(name);
    std::string list = value != nullptr ? value : "";
    out.push_back(std::string(name) + "=" + list + (list.empty() ? "" : ",") + "127.0.0.1");
  }
  return out;
}

AgentExit run_agent(AgentRunSpec spec) {
  auto warn = [&](const std::string& text) {
    sandbox::append_run_log(spec.store, spec.run, "warning: " + text);
    if (spec.warn) spec.warn(text);
  };
  sandbox::LedgerRun run(spec.store, {spec.config.capture, spec.config.hooks.policy(), spec.run,
                                      fsnap::HostEnv{spec.repo, nullptr, nullptr}});
  std::vector<std::string> secrets = sandbox::secret_values(spec.config.run.secrets);
  sandbox::HomePreserver preserver(spec.store, run.repo(), spec.run, spec.home,
                                   claude_code_preserved_parts(), secrets);
  std::unique_ptr<InProcessHooks> in_process;
  boost::filesystem::path settings = claude_code_settings_file(spec.home);
  if (spec.config.hooks.transport == "http") {
    try {
      run.workspace().watch();
    } catch (const fsnap::Error& e) {
      warn(std::string(e.what()) + "; every tool boundary will look at the whole workspace");
    }
    in_process = std::make_unique<InProcessHooks>(run, preserver, ClaudeCodeHookOptions{secrets});
    install_http_hooks_in_file(settings, in_process->url(), spec.hook_command);
  } else {
    install_hooks_in_file(settings, spec.hook_command);
  }

  // The opening boundary: the workspace as the agent finds it. (When watched, this
  // capture walks the tree; the ones at tool boundaries don't.)
  run.transactions().checkpoint(
      {"", fsnap::Phase::kCheckpoint, "", "", spec.run},
      [&](sandbox::Session& s) {
        sandbox::record_run_status(s, {"running", spec.start_summary});
      },
      spec.start_summary);

  std::vector<std::string> extra = {"HOME=" + spec.home.string(), "SHADOWBOX_RUN=" + spec.run,
                                    "SHADOWBOX_RUN_HOME=" + spec.home.string(),
                                    "SHADOWBOX_NO_PROGRESS=1"};
  if (in_process) {
    for (std::string& v : loopback_without_proxy()) extra.push_back(std::move(v));
  }
  std::vector<std::string> env = agent_environment(spec.config.run.env, extra);
  sandbox::RunMeta& meta = spec.meta;
  meta.pid = ::getpid();
  meta.home = spec.home.string();
  meta.exit_code.reset();
  meta.ended_at.clear();
  meta.save(spec.store);
  AgentExit exit;
  try {
    exit = run_agent_process(spec.argv, spec.workspace, env, [&](pid_t pid) {
      meta.agent_pid = pid;
      try {
        meta.save(spec.store);
      } catch (const std::exception& e) {
        warn(e.what());
      }
    });
  } catch (const std::exception& e) {
    if (in_process) in_process->stop();
    run.transactions().checkpoint(
        {"", fsnap::Phase::kCheckpoint, "", "", spec.run},
        [&](sandbox::Session& s) {
          sandbox::record_run_status(s, {"failed", e.what()});
        },
        std::string("the agent could not be started: ") + e.what());
    meta.exit_code = 127;
    meta.ended_at = now_text();
    meta.save(spec.store);
    throw;
  }
  // No event is answered after this (the one in flight, if any, is waited for): from
  // here on this thread alone uses the run and its repository.
  if (in_process) in_process->stop();
  // Whatever happened: keep the agent's session data, and the files as they are now.
  try {
    preserver.preserve_now();
  } catch (const std::exception& e) {
    warn(std::string("could not preserve the agent's session data: ") + e.what());
  }
  sandbox::RunStatus status = status_of(exit);
  run.transactions().checkpoint(
      {"", fsnap::Phase::kCheckpoint, "", "", spec.run},
      [&](sandbox::Session& s) { sandbox::record_run_status(s, status); }, status.reason);
  meta.exit_code = exit.code();
  meta.ended_at = now_text();
  meta.save(spec.store);
  return exit;
}

}  // namespace hooks
