// A workspace's own configuration file (<workspace>/.shadowbox.yaml), and the trust a
// person gives it.
//
// Whoever writes the workspace writes that file: a cloned repository ships it, and an
// agent can change it in the middle of a run. Until the user trusts its content
// (`shadowbox trust`, which records the file's SHA-256 outside every workspace, as
// direnv and Codex do), the file may only tighten protection: each setting of it is
// taken where it protects at least as much as the one it would replace, and left out —
// named in Config::left_out — where it would protect less or send data anywhere (a
// fleet). A trusted file applies whole, for as long as its content is the one trusted.
//
// Thread-safety: ConfigTrust reads and replaces its file whole (atomically); the
// functions are pure.
#pragma once

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/config.hpp"

namespace hooks {

// The name of a workspace's configuration file.
inline constexpr const char* kWorkspaceConfigName = ".shadowbox.yaml";

// The configuration files a person trusts, each by the SHA-256 of the content trusted,
// kept in one JSON file outside every workspace.
class ConfigTrust {
 public:
  // $XDG_CONFIG_HOME/shadowbox/trusted.json, else $HOME/.config/shadowbox/trusted.json.
  static boost::filesystem::path default_file();

  explicit ConfigTrust(boost::filesystem::path file = default_file());

  // Whether the content (of SHA-256 sha256) of the configuration file config is trusted.
  bool trusts(const boost::filesystem::path& config, const std::string& sha256) const;
  // Trusts the content sha256 of config, in place of what was trusted of it before.
  void trust(const boost::filesystem::path& config, const std::string& sha256) const;
  // Takes the trust in config back; false if there was none.
  bool revoke(const boost::filesystem::path& config) const;

  const boost::filesystem::path& file() const { return file_; }

 private:
  boost::filesystem::path file_;
};

// The settings of proposed (a file's, read over base) that protect at least as much as
// base's, and base's where proposed's would protect less or send data elsewhere; each
// setting left out is described in left_out ("retention.keep_last: 1 (fewer
// checkpoints kept than 0)"). Settings that protect neither more nor less (watch,
// maintenance, the hook transport) are taken.
Config tightened(const Config& base, const Config& proposed, std::vector<std::string>& left_out);

}  // namespace hooks
