#include "hooks/agent_home.hpp"

#include <boost/filesystem/operations.hpp>

namespace hooks {

namespace fs = boost::filesystem;

AgentHome::AgentHome(fs::path home, const UserClaudeSetup& user, const runs::HomeSettings& settings,
                     const fs::path& workspace, Warn warn)
    : home_(std::move(home)), warn_(std::move(warn)) {
  // It holds the user's configuration and login while the run lasts.
  fs::permissions(home_, fs::owner_all);
  if (settings.isolate) return;
  CarriedSetup carried = carry_user_setup(user, settings.carry, home_, workspace);
  carried_ = std::move(carried.carried);
  for (const std::string& why : carried.skipped) {
    if (warn_) warn_("not carried into the run's HOME: " + why);
  }
  if (settings.credentials && !user.home.empty()) {
    try {
      login_ = std::make_unique<CredentialSync>(user.credentials_file(),
                                                home_ / UserClaudeSetup::kCredentialsPath);
    } catch (const std::exception& e) {
      if (warn_) warn_(std::string("the run goes on without your login: ") + e.what());
    }
  }
}

AgentHome::~AgentHome() {
  finish();
}

void AgentHome::tick() {
  if (!login_ || finished_) return;
  try {
    login_->sync();
  } catch (const std::exception& e) {
    if (!warned_ && warn_) warn_(std::string("cannot keep the login in step: ") + e.what());
    warned_ = true;
  }
}

void AgentHome::finish() {
  if (finished_) return;
  finished_ = true;
  if (login_) {
    std::string problem = login_->finish();
    if (!problem.empty() && warn_) warn_("the run's login: " + problem);
  }
  // A login made in the run (isolated, or without the user's) does not stay either.
  for (const fs::path& left : remove_credentials(home_)) {
    if (warn_) warn_("could not remove " + left.string());
  }
  for (const std::string& left : remove_carried_setup(home_, carried_)) {
    if (warn_) warn_("could not remove the carried " + left);
  }
}

}  // namespace hooks
