// The HOME an agent run gives its agent (`shadowbox run`, `resume`): private to the user,
// started from the user's own Claude Code setup (config run.home.carry), with the user's
// login kept in step with theirs (CredentialSync) — unless run.home.isolate. When the
// run ends, the carried copies and the login are removed from it; the agent's session
// data stays (HomePreserver commits it).
//
// Thread-safety: one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/claude_code_credentials.hpp"
#include "hooks/claude_code_user_setup.hpp"
#include "runs/run_settings.hpp"

namespace hooks {

// A run's HOME while the run lasts.
class AgentHome {
 public:
  using Warn = std::function<void(const std::string&)>;

  // Prepares home (which exists): mode 0700, the user's setup carried in, their login
  // copied in. Warns about what it left out (the run goes on without it).
  AgentHome(boost::filesystem::path home, const UserClaudeSetup& user,
            const runs::HomeSettings& settings, const boost::filesystem::path& workspace,
            Warn warn);
  ~AgentHome();  // finish(), if not done
  AgentHome(const AgentHome&) = delete;
  AgentHome& operator=(const AgentHome&) = delete;

  // Keeps the login in step with the user's (call it every second or so while the agent runs). A
  // failure is warned about once, and tried again next time.
  void tick();
  // A last tick; then the login and the carried copies are removed. Idempotent.
  void finish();

  const std::vector<std::string>& carried() const { return carried_; }

 private:
  boost::filesystem::path home_;
  Warn warn_;
  std::vector<std::string> carried_;
  std::unique_ptr<CredentialSync> login_;
  bool warned_ = false;
  bool finished_ = false;
};

}  // namespace hooks
