#include "hooks/gemini_answers.hpp"

#include <sstream>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/path.hpp>

namespace hooks {

namespace {

using Poco::JSON::Object;

// The object text holds, or null when it is none.
Object::Ptr object_of(const std::string& text) {
  if (text.empty()) return new Object;
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(text);
    if (parsed.type() == typeid(Object::Ptr)) return parsed.extract<Object::Ptr>();
  } catch (const std::exception&) {
  }
  return nullptr;
}

// Whether folder is workspace or a folder above it, and level a trust level of Gemini's.
bool is_answer(const std::string& folder, const Poco::Dynamic::Var& level,
               const std::string& workspace) {
  if (!level.isString()) return false;
  std::string value = level.toString();
  if (value != "TRUST_FOLDER" && value != "TRUST_PARENT" && value != "DO_NOT_TRUST") return false;
  boost::filesystem::path above(folder);
  if (folder.empty() || !above.is_absolute()) return false;
  for (boost::filesystem::path p(workspace); !p.empty(); p = p.parent_path()) {
    if (p == above) return true;
    if (p == p.root_path()) break;
  }
  return false;
}

std::string text_of(const Object::Ptr& object) {
  std::ostringstream out;
  object->stringify(out, 2);
  return out.str() + "\n";
}

}  // namespace

std::string gemini_answers(const std::string& trusted, const std::string& user_trusted,
                           const std::string& workspace) {
  Object::Ptr run = object_of(trusted);
  if (!run) return "";
  Object::Ptr user = object_of(user_trusted);
  Object::Ptr kept = new Object;
  for (const auto& [folder, level] : *run) {
    if (!is_answer(folder, level, workspace)) continue;
    if (user && user->has(folder)) continue;
    kept->set(folder, level);
  }
  return kept->size() == 0 ? "" : text_of(kept);
}

std::string with_gemini_answers(const std::string& trusted, const std::string& answers,
                                const std::string& workspace) {
  Object::Ptr out = object_of(trusted);
  Object::Ptr kept = object_of(answers);
  if (!out || !kept) return trusted;
  bool added = false;
  for (const auto& [folder, level] : *kept) {
    if (!is_answer(folder, level, workspace) || out->has(folder)) continue;
    out->set(folder, level);
    added = true;
  }
  return added ? text_of(out) : trusted;
}

}  // namespace hooks
