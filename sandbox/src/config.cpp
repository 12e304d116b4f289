#include "sandbox/config.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"

namespace sandbox {

namespace fs = boost::filesystem;

namespace {

// Reports a problem with one key of one file.
[[noreturn]] void fail(const std::string& origin, const YAML::Node& node, const std::string& key,
                       const std::string& problem) {
  std::ostringstream out;
  out << origin;
  if (node.IsDefined() && node.Mark().line >= 0) out << ":" << node.Mark().line + 1;
  out << ": " << key << ": " << problem;
  throw ConfigError(out.str());
}

// Rejects keys of a mapping that are not in known.
void check_keys(const std::string& origin, const YAML::Node& map, const std::string& prefix,
                const std::set<std::string>& known) {
  for (const auto& item : map) {
    std::string key = item.first.as<std::string>();
    if (known.count(key) == 0) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + prefix + k;
      fail(origin, item.first, prefix + key, "unknown key (known keys: " + list + ")");
    }
  }
}

std::string scalar(const std::string& origin, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(origin, node, key, "expected a single value");
  return node.Scalar();
}

bool as_bool(const std::string& origin, const YAML::Node& node, const std::string& key) {
  std::string text = scalar(origin, node, key);
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  fail(origin, node, key, "expected true or false, got " + fsnap::quote_input(text));
}

std::uint64_t as_count(const std::string& origin, const YAML::Node& node, const std::string& key) {
  std::string text = scalar(origin, node, key);
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    fail(origin, node, key,
         "expected a non-negative whole number, got " + fsnap::quote_input(text));
  }
  return std::stoull(text);
}

template <typename Parse>
auto parse_with(const std::string& origin, const YAML::Node& node, const std::string& key,
                Parse parse) {
  std::string text = scalar(origin, node, key);
  try {
    return parse(text);
  } catch (const ConfigError& e) {
    fail(origin, node, key, e.what());
  }
}

void parse_capture(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "capture", "expected a mapping");
  check_keys(origin, node, "capture.", {"excludes", "max_file_size", "respect_gitignore"});
  if (YAML::Node excludes = node["excludes"]; excludes && !excludes.IsNull()) {
    if (!excludes.IsSequence()) fail(origin, excludes, "capture.excludes", "expected a list");
    for (const YAML::Node& item : excludes) {
      std::string pattern = scalar(origin, item, "capture.excludes");
      if (pattern.empty()) fail(origin, item, "capture.excludes", "empty pattern");
      config.capture.excludes.push_back(pattern);
    }
  }
  if (YAML::Node size = node["max_file_size"]; size) {
    config.capture.max_file_size = parse_with(origin, size, "capture.max_file_size", parse_size);
  }
  if (YAML::Node flag = node["respect_gitignore"]; flag) {
    config.capture.respect_gitignore = as_bool(origin, flag, "capture.respect_gitignore");
  }
}

void parse_retention(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "retention", "expected a mapping");
  check_keys(origin, node, "retention.", {"keep_last", "max_age"});
  if (YAML::Node keep = node["keep_last"]; keep) {
    config.retention.keep_last =
        static_cast<std::size_t>(as_count(origin, keep, "retention.keep_last"));
  }
  if (YAML::Node age = node["max_age"]; age) {
    config.retention.max_age = parse_with(origin, age, "retention.max_age", parse_duration);
  }
}

std::vector<std::string> names(const std::string& origin, const YAML::Node& node,
                               const std::string& key) {
  if (!node.IsSequence()) fail(origin, node, key, "expected a list of variable names");
  std::vector<std::string> out;
  for (const YAML::Node& item : node) {
    std::string name = scalar(origin, item, key);
    if (name.empty() || name.find_first_of("= \t") != std::string::npos) {
      fail(origin, item, key, fsnap::quote_input(name) + " is not an environment variable name");
    }
    out.push_back(name);
  }
  return out;
}

void parse_run(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "run", "expected a mapping");
  check_keys(origin, node, "run.", {"env", "secrets", "resume_max_age"});
  if (YAML::Node env = node["env"]; env) config.run.env = names(origin, env, "run.env");
  if (YAML::Node secrets = node["secrets"]; secrets) {
    config.run.secrets = names(origin, secrets, "run.secrets");
  }
  if (YAML::Node age = node["resume_max_age"]; age) {
    config.run.resume_max_age = parse_with(origin, age, "run.resume_max_age", parse_duration);
  }
}

// Splits "12.5MiB" into its number and unit; the number must be a whole number.
std::pair<std::uint64_t, std::string> split_quantity(const std::string& text, const char* what) {
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0 || i > 18) {
    throw ConfigError("expected " + std::string(what) + " such as " +
                      (std::string(what) == "a size" ? "'100MiB'" : "'30d'") + ", got " +
                      fsnap::quote_input(text));
  }
  std::string unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  return {std::stoull(text.substr(0, i)), unit};
}

std::uint64_t checked_multiply(std::uint64_t value, std::uint64_t factor, const std::string& text) {
  if (factor != 0 && value > std::numeric_limits<std::uint64_t>::max() / factor) {
    throw ConfigError("value too large: " + fsnap::quote_input(text));
  }
  return value * factor;
}

}  // namespace

std::uint64_t parse_size(const std::string& text) {
  auto [value, unit] = split_quantity(text, "a size");
  std::string u;
  for (char c : unit) u.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::uint64_t factor = 0;
  if (u.empty() || u == "b") {
    factor = 1;
  } else if (u == "k" || u == "kb" || u == "kib") {
    factor = 1ull << 10;
  } else if (u == "m" || u == "mb" || u == "mib") {
    factor = 1ull << 20;
  } else if (u == "g" || u == "gb" || u == "gib") {
    factor = 1ull << 30;
  } else if (u == "t" || u == "tb" || u == "tib") {
    factor = 1ull << 40;
  } else {
    throw ConfigError("unknown size unit " + fsnap::quote_input(unit) + " in " +
                      fsnap::quote_input(text) + " (use B, KiB, MiB, GiB or TiB)");
  }
  return checked_multiply(value, factor, text);
}

std::chrono::seconds parse_duration(const std::string& text) {
  auto [value, unit] = split_quantity(text, "a duration");
  std::uint64_t factor = 0;
  if (unit.empty() || unit == "s") {
    factor = 1;
  } else if (unit == "m") {
    factor = 60;
  } else if (unit == "h") {
    factor = 3600;
  } else if (unit == "d") {
    factor = 86400;
  } else if (unit == "w") {
    factor = 7 * 86400;
  } else {
    throw ConfigError("unknown duration unit " + fsnap::quote_input(unit) + " in " +
                      fsnap::quote_input(text) + " (use s, m, h, d or w)");
  }
  std::uint64_t seconds = checked_multiply(value, factor, text);
  if (seconds > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw ConfigError("value too large: " + fsnap::quote_input(text));
  }
  return std::chrono::seconds(static_cast<std::int64_t>(seconds));
}

Config Config::parse(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    std::ostringstream out;
    out << origin;
    if (e.mark.line >= 0) out << ":" << e.mark.line + 1;
    out << ": invalid YAML: " << e.msg;
    throw ConfigError(out.str());
  }
  Config config;
  if (root.IsNull()) return config;
  if (!root.IsMap()) throw ConfigError(origin + ": expected a mapping at the top level");
  check_keys(origin, root, "", {"capture", "retention", "session", "run", "hooks"});
  if (YAML::Node capture = root["capture"]; capture && !capture.IsNull()) {
    parse_capture(origin, capture, config);
  }
  if (YAML::Node retention = root["retention"]; retention && !retention.IsNull()) {
    parse_retention(origin, retention, config);
  }
  if (YAML::Node run = root["run"]; run && !run.IsNull()) parse_run(origin, run, config);
  if (YAML::Node hooks = root["hooks"]; hooks && !hooks.IsNull()) {
    if (!hooks.IsMap()) fail(origin, hooks, "hooks", "expected a mapping");
    check_keys(origin, hooks, "hooks.", {"rollback_on_failure", "keep_failed_tools", "transport"});
    if (YAML::Node transport = hooks["transport"]; transport) {
      config.hooks.transport = scalar(origin, transport, "hooks.transport");
      if (config.hooks.transport != "http" && config.hooks.transport != "command") {
        fail(origin, transport, "hooks.transport", "expected http or command");
      }
    }
    if (YAML::Node flag = hooks["rollback_on_failure"]; flag) {
      config.hooks.rollback_on_failure = as_bool(origin, flag, "hooks.rollback_on_failure");
    }
    if (YAML::Node tools = hooks["keep_failed_tools"]; tools) {
      if (!tools.IsSequence()) fail(origin, tools, "hooks.keep_failed_tools", "expected a list");
      for (const YAML::Node& t : tools) {
        config.hooks.keep_failed_tools.push_back(scalar(origin, t, "hooks.keep_failed_tools"));
      }
    }
  }
  if (YAML::Node session = root["session"]; session && !session.IsNull()) {
    if (!session.IsMap()) fail(origin, session, "session", "expected a mapping");
    check_keys(origin, session, "session.", {"checkpoint_ring"});
    if (YAML::Node ring = session["checkpoint_ring"]; ring) {
      std::uint64_t n = as_count(origin, ring, "session.checkpoint_ring");
      if (n == 0) fail(origin, ring, "session.checkpoint_ring", "must be at least 1");
      config.checkpoint_ring = static_cast<std::size_t>(n);
    }
  }
  return config;
}

Config Config::load_file(const fs::path& file) {
  std::ifstream in(file.string(), std::ios::binary);
  if (!in) {
    throw ConfigError("cannot read config file " + file.string() + ": " +
                      (fs::exists(file) ? "permission denied" : "no such file"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError("cannot read config file " + file.string());
  Config config = parse(text.str(), file.string());
  config.source = file;
  return config;
}

Config Config::load(const std::optional<fs::path>& explicit_file, const fs::path& workspace) {
  if (explicit_file) return load_file(*explicit_file);
  if (const char* env = std::getenv("SHADOWBOX_CONFIG"); env != nullptr && *env != '\0') {
    return load_file(fs::path(env));
  }
  fs::path local = workspace / ".shadowbox.yaml";
  boost::system::error_code ec;
  if (fs::is_regular_file(local, ec)) return load_file(local);
  return Config{};
}

}  // namespace sandbox
