// A short list of items looked up by name (the outputs of a case, their bounds, their judgements):
// order is kept as the op produces them, and an unknown name is an ArgumentError naming `what`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/errors.h"

namespace ssd {

template <class Item>
class NamedList {
 public:
  explicit NamedList(std::string_view what = "name") : what_(what) {}

  Item& add(Item item) {
    if (has(item.name)) throw ArgumentError(what_, "'" + item.name + "' is already in the list");
    items_.push_back(std::move(item));
    return items_.back();
  }
  const Item* find(std::string_view name) const {
    for (const Item& item : items_)
      if (item.name == name) return &item;
    return nullptr;
  }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const Item& get(std::string_view name) const {
    if (const Item* item = find(name)) return *item;
    throw ArgumentError(what_, "no " + what_ + " named '" + std::string(name) + "'");
  }
  Item& get(std::string_view name) { return const_cast<Item&>(static_cast<const NamedList*>(this)->get(name)); }
  const std::vector<Item>& all() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::string what_;
  std::vector<Item> items_;
};

}  // namespace ssd
