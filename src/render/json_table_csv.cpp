#include "render/json_table_csv.h"

#include <simdjson.h>

#include <map>
#include <vector>

#include "render/csv_writer.h"

namespace mlprof {
namespace {

namespace dom = simdjson::dom;

// Cells of one row by column name; columns numbered in first-seen order over all rows.
struct Table {
  std::vector<std::string> columns;
  std::map<std::string, size_t, std::less<>> index;
  std::vector<std::vector<std::pair<size_t, std::string>>> rows;

  size_t column(const std::string& name) {
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    index.emplace(name, columns.size());
    columns.push_back(name);
    return columns.size() - 1;
  }
};

std::string scalar_text(dom::element e) {
  switch (e.type()) {
    case dom::element_type::INT64:
      return std::to_string(int64_t(e));
    case dom::element_type::UINT64:
      return std::to_string(uint64_t(e));
    case dom::element_type::DOUBLE: {
      CsvWriter w;  // shortest round-trip text
      w.field(double(e));
      return w.str();
    }
    case dom::element_type::STRING:
      return std::string(std::string_view(e));
    case dom::element_type::BOOL:
      return bool(e) ? "true" : "false";
    case dom::element_type::NULL_VALUE:
      return "";
    default:
      return simdjson::minify(e);  // arrays: their JSON text
  }
}

void flatten(dom::element e, const std::string& prefix, Table& t,
             std::vector<std::pair<size_t, std::string>>& row) {
  if (e.type() == dom::element_type::OBJECT) {
    for (auto [k, v] : dom::object(e)) {
      std::string name = prefix.empty() ? std::string(k) : prefix + "." + std::string(k);
      flatten(v, name, t, row);
    }
    return;
  }
  row.emplace_back(t.column(prefix.empty() ? "value" : prefix), scalar_text(e));
}

}  // namespace

Result<std::string> json_table_csv(std::string_view json, std::string_view key) {
  dom::parser parser;
  simdjson::padded_string padded(json);
  dom::element doc;
  if (parser.parse(padded).get(doc)) return Status::error("result JSON does not parse");
  dom::element table = doc;
  if (!key.empty()) {
    if (doc.type() != dom::element_type::OBJECT || doc.at_key(key).get(table))
      return Status::error("result has no table \"" + std::string(key) + "\"");
  } else if (doc.type() == dom::element_type::OBJECT) {
    bool found = false;
    for (auto [k, v] : dom::object(doc)) {
      if (v.type() != dom::element_type::ARRAY) continue;
      dom::array a = v;
      if (a.size() == 0 || (*a.begin()).type() != dom::element_type::OBJECT) continue;
      table = v;
      found = true;
      break;
    }
    if (!found) return Status::error("result has no table");
  }
  Table t;
  auto add_row = [&](dom::element e) {
    t.rows.emplace_back();
    flatten(e, "", t, t.rows.back());
  };
  if (table.type() == dom::element_type::ARRAY) {
    for (dom::element e : dom::array(table)) add_row(e);
  } else {
    add_row(table);
  }
  CsvWriter w;
  for (const std::string& c : t.columns) w.field(c);
  w.end_row();
  for (const auto& row : t.rows) {
    std::vector<const std::string*> cells(t.columns.size(), nullptr);
    for (const auto& [c, v] : row) cells[c] = &v;
    for (const std::string* c : cells) w.field(c ? std::string_view(*c) : std::string_view());
    w.end_row();
  }
  return w.take();
}

}  // namespace mlprof
