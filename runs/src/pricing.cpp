#include "runs/pricing.hpp"

#include <algorithm>

namespace runs {

PriceTable PriceTable::defaults() {
  PriceTable t;
  const ModelPrice opus45{5, 25, 6.25, 10, 0.5};
  for (const char* model :
       {"claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8"}) {
    t.set(model, opus45);
  }
  t.set("claude-opus-4", {15, 75, 18.75, 30, 1.5});  // Opus 4 and 4.1
  // Opus 5: what Claude Code 2.1.330 itself charges for it ($4 / $20), cache at the
  // fixed multiples of input.
  t.set("claude-opus-5", {4, 20, 5, 8, 0.4});
  t.set("claude-sonnet-4", {3, 15, 3.75, 6, 0.3});  // Sonnet 4 to 4.6
  t.set("claude-sonnet-5", {2, 10, 2.5, 4, 0.2});
  t.set("claude-haiku-4-5", {1, 5, 1.25, 2, 0.1});
  return t;
}

void PriceTable::set(const std::string& prefix, const ModelPrice& price) {
  entries_[prefix] = price;
}

ModelPrice PriceTable::highest() const {
  ModelPrice h;
  for (const auto& [prefix, p] : entries_) {
    h.input = std::max(h.input, p.input);
    h.output = std::max(h.output, p.output);
    h.cache_write_5m = std::max(h.cache_write_5m, p.cache_write_5m);
    h.cache_write_1h = std::max(h.cache_write_1h, p.cache_write_1h);
    h.cache_read = std::max(h.cache_read, p.cache_read);
  }
  return h;
}

PriceTable::Priced PriceTable::price(std::string_view model, const TokenUsage& usage) const {
  const ModelPrice* match = nullptr;
  std::size_t longest = 0;
  for (const auto& [prefix, p] : entries_) {
    if (model.substr(0, prefix.size()) == prefix && prefix.size() >= longest) {
      match = &p;
      longest = prefix.size();
    }
  }
  ModelPrice fallback;
  if (match == nullptr) fallback = highest();
  const ModelPrice& p = match != nullptr ? *match : fallback;
  double usd =
      (static_cast<double>(usage.input) * p.input + static_cast<double>(usage.output) * p.output +
       static_cast<double>(usage.cache_write_5m) * p.cache_write_5m +
       static_cast<double>(usage.cache_write_1h) * p.cache_write_1h +
       static_cast<double>(usage.cache_read) * p.cache_read) /
      1e6;
  return Priced{usd, match != nullptr};
}

}  // namespace runs
