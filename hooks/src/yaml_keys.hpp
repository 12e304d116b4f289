// The keys of a configuration's YAML mappings, checked as written. yaml-cpp keeps a key
// given twice in a mapping, and a lookup finds the first only: the second would be
// ignored without a word (`keep_last: 1` below `keep_last: 50`). Private to hooks.
#pragma once

#include <string>

namespace hooks {

// ConfigError naming the key (its dotted path) and both lines when a mapping of
// yaml_text, at any level, has a key twice; or naming the line of a key that is not a
// plain name (a list, a mapping, an alias or nothing). yaml_text is valid YAML (origin
// names it in messages). Reads the text as a stream of events: an alias is not expanded.
void check_unique_keys(const std::string& yaml_text, const std::string& origin);

}  // namespace hooks
