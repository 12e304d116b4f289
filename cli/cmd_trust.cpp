// `shadowbox trust [--revoke]`: trust the workspace's .shadowbox.yaml as it is now, so
// that it applies whole (until its content changes), or take that trust back.
#include <iostream>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/error.hpp"
#include "hooks/config.hpp"
#include "hooks/workspace_config.hpp"
#include "output.hpp"
#include "sandbox/sha256.hpp"

namespace cli {

namespace fs = boost::filesystem;

int cmd_trust(const Context& context, const Args& parsed) {
  fs::path file = context.workspace / hooks::kWorkspaceConfigName;
  hooks::ConfigTrust trust;
  Poco::JSON::Object::Ptr out = make_object();
  set_path(*out, "file", file.string());
  set_path(*out, "trust_file", trust.file().string());
  if (parsed.has("--revoke")) {
    bool revoked = trust.revoke(file);
    out->set("action", revoked ? "revoked" : "absent");
    if (context.options.json) {
      print_json(std::cout, out);
    } else if (revoked) {
      std::cout << "no longer trusted: " << file.string()
                << " (it may only tighten protection again)\n";
    } else {
      std::cout << file.string() << " was not trusted; nothing to revoke\n";
    }
    return 0;
  }
  boost::system::error_code ec;
  if (fs::is_symlink(fs::symlink_status(file, ec))) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       file.string() +
                           " is a symbolic link: shadowbox reads no configuration "
                           "through one (make it a file to trust it)");
  }
  if (!fs::is_regular_file(file, ec)) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "no " + std::string(hooks::kWorkspaceConfigName) + " in " +
                           context.workspace.string() + ": nothing to trust");
  }
  // What is trusted is what was read and found valid: the same bytes.
  std::string text = hooks::read_config_file(file);
  hooks::Config whole = hooks::Config::parse(text, file.string());
  std::vector<std::string> loosens;
  hooks::tightened(hooks::Config{}, whole, loosens);
  std::string sha = sandbox::sha256_hex(text);
  trust.trust(file, sha);
  out->set("action", "trusted");
  out->set("sha256", sha);
  Poco::JSON::Array::Ptr list = new Poco::JSON::Array;
  for (const std::string& line : loosens) list->add(line);
  out->set("loosens", list);
  if (context.options.json) {
    print_json(std::cout, out);
    return 0;
  }
  std::cout << "trusted " << file.string() << " (sha256 " << sha.substr(0, 12)
            << "): it applies whole until its content changes\n";
  if (!loosens.empty()) {
    std::cout << "it loosens protection, now applied:\n";
    for (const std::string& line : loosens) std::cout << "  " << line << '\n';
  }
  return 0;
}

}  // namespace cli
