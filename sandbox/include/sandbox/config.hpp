// sandbox::Config — shadowbox's settings, loaded from YAML (config/shadowbox.yaml
// documents every key).
//
// Lookup: an explicit file (--config or $SHADOWBOX_CONFIG), else
// <workspace>/.shadowbox.yaml if present, else the built-in defaults. Unknown keys and
// values of the wrong type are errors naming the key, never silently ignored.
// Thread-safety: a loaded Config is a plain value.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include <boost/filesystem/path.hpp>

#include "fsnap/capture_options.hpp"
#include "fsnap/shadow_repo.hpp"

namespace sandbox {

// A configuration file that cannot be read or does not validate.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// All of shadowbox's settings, with their defaults.
struct Config {
  fsnap::CaptureOptions capture;      // capture.excludes, .max_file_size, .respect_gitignore
  fsnap::RetentionPolicy retention;   // retention.keep_last, .max_age
  std::size_t checkpoint_ring = 100;  // session.checkpoint_ring: CheckpointStore capacity
  boost::filesystem::path source;     // the file it came from; empty for the defaults

  // Parses YAML text (origin names it in error messages).
  static Config parse(const std::string& yaml_text, const std::string& origin);
  // Reads and parses a file.
  static Config load_file(const boost::filesystem::path& file);
  // Applies the lookup order above: explicit file if given, else $SHADOWBOX_CONFIG,
  // else <workspace>/.shadowbox.yaml, else defaults.
  static Config load(const std::optional<boost::filesystem::path>& explicit_file,
                     const boost::filesystem::path& workspace);
};

// "100MiB", "512k", "2G", "1048576" -> bytes. Throws ConfigError.
std::uint64_t parse_size(const std::string& text);
// "30d", "12h", "90m", "45s", "2w" -> seconds. Throws ConfigError.
std::chrono::seconds parse_duration(const std::string& text);

}  // namespace sandbox
