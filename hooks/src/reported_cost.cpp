#include "hooks/reported_cost.hpp"

#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "fsnap/atomic_file.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

using Poco::JSON::Array;
using Poco::JSON::Object;

namespace {

// An OTLP AnyValue as text (strings, and numbers of any encoding: int64 is a JSON
// string in the protobuf mapping).
std::string any_value_text(const Object::Ptr& value) {
  if (!value) return "";
  for (const char* kind : {"stringValue", "intValue", "doubleValue", "boolValue"}) {
    if (value->has(kind) && !value->isNull(kind)) return value->get(kind).convert<std::string>();
  }
  return "";
}

double any_value_number(const Object::Ptr& value) {
  std::string t = any_value_text(value);
  try {
    std::size_t used = 0;
    double d = std::stod(t, &used);
    return used == t.size() && d >= 0 ? d : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

// Calls fn(attributes) for every log record of an OTLP logs export.
template <typename Fn>
void for_each_record(const Object::Ptr& root, Fn fn) {
  auto array = [](const Object::Ptr& o, const char* key) {
    return o ? o->getArray(key) : Array::Ptr();
  };
  Array::Ptr resources = array(root, "resourceLogs");
  if (!resources) throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument, "no resourceLogs");
  for (std::size_t r = 0; r < resources->size(); ++r) {
    Array::Ptr scopes = array(resources->getObject(static_cast<unsigned>(r)), "scopeLogs");
    for (std::size_t s = 0; scopes && s < scopes->size(); ++s) {
      Array::Ptr records = array(scopes->getObject(static_cast<unsigned>(s)), "logRecords");
      for (std::size_t l = 0; records && l < records->size(); ++l) {
        Array::Ptr attributes = array(records->getObject(static_cast<unsigned>(l)), "attributes");
        std::map<std::string, Object::Ptr> by_key;
        for (std::size_t a = 0; attributes && a < attributes->size(); ++a) {
          Object::Ptr attribute = attributes->getObject(static_cast<unsigned>(a));
          if (attribute && attribute->has("key")) {
            by_key[attribute->getValue<std::string>("key")] = attribute->getObject("value");
          }
        }
        fn(by_key);
      }
    }
  }
}

}  // namespace

ReportedCost::ReportedCost(boost::filesystem::path file, double base_usd)
    : file_(std::move(file)), usd_(base_usd) {}

std::size_t ReportedCost::add_export(const std::string& body) {
  Object::Ptr root;
  try {
    Poco::JSON::Parser parser;
    root = parser.parse(body).extract<Object::Ptr>();
  } catch (const std::exception& e) {
    throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                         std::string("not an OTLP/JSON logs export: ") + e.what());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t added = 0;
  try {
    for_each_record(root, [&](const std::map<std::string, Object::Ptr>& a) {
      auto attr = [&](const char* key) {
        auto it = a.find(key);
        return it == a.end() ? Object::Ptr() : it->second;
      };
      if (any_value_text(attr("event.name")) != "api_request") return;
      std::string id = any_value_text(attr("session.id")) + " " +
                       any_value_text(attr("event.timestamp")) + " " +
                       any_value_text(attr("event.sequence"));
      if (!seen_.insert(id).second) return;
      usd_ += any_value_number(attr("cost_usd"));
      ++requests_;
      ++added;
    });
  } catch (const Poco::Exception& e) {
    throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                         "not an OTLP/JSON logs export: " + e.displayText());
  }
  if (added > 0) {
    Object o(Poco::JSON_PRESERVE_KEY_ORDER);
    o.set("usd", usd_);
    o.set("requests", requests_);
    std::ostringstream text;
    o.stringify(text);
    text << '\n';
    fsnap::write_file_atomically(file_, text.str());
  }
  return added;
}

double ReportedCost::usd() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return usd_;
}

double read_reported_cost(const boost::filesystem::path& file) {
  try {
    std::optional<std::string> text = fsnap::read_small_file(file);
    if (!text) return 0;
    Poco::JSON::Parser parser;
    return parser.parse(*text).extract<Object::Ptr>()->optValue<double>("usd", 0);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace hooks
