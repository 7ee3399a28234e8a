// The machinery behind the Trace's declared schema (include/mlprof/trace.h).
//
// Each event table lists its columns ONCE, as an X-macro list of
//   X(value type, column name, what it references, input or computed, default)
// and MLPROF_TABLE(Table, LIST) turns the list into the table's members (one std::vector per
// column), a Row struct of its input columns and a compile-time column visitor. Everything that
// walks a table's columns (TraceBuilder's row pushes, reserve and post-sort reordering, the
// parallel-import merge, the .mlprof writer and reader, the readers' range checks and the tests'
// table equality) goes through that visitor, so adding a column is one line in the list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace mlprof::schema {

// What a column's values index. The parallel-import merge remaps ids by it, the .mlprof reader
// checks every value against the size of what it points into.
enum class Ref : uint8_t {
  kNone,    // a plain value
  kString,  // a StringId into Trace::strings
  kTrack,   // an index into Trace::tracks
  kSeries,  // an index into Trace::counter_series
  kArgs,    // the first of the row's args in Trace::args (the `args_count` column says how many)
  kStack,   // a row of Trace::stacks (0 = unknown stack)
  kFrames,  // the first of the stack's frames in Trace::stack_frames (`frames_count`: how many)
  kSlice,   // a slice row, -1 = none
};

// kInput columns are filled by importers (TraceBuilder::add_*) and stored in .mlprof files;
// kComputed columns are derived by TraceBuilder::finish() and never stored.
enum class Role : uint8_t { kInput, kComputed };

template <typename M>
struct MemberOf;
template <typename C, typename V>
struct MemberOf<V C::*> {
  using Class = C;
  using Type = V;
};

// One column, as the visitor hands it out: `member` is &Table::column, `row_member` is
// &Table::Row::column (nullptr for computed columns).
template <auto Member, auto RowMember, Ref R, Role K>
struct Column {
  using Table = typename MemberOf<decltype(Member)>::Class;
  using Value = typename MemberOf<decltype(Member)>::Type::value_type;
  static constexpr auto member = Member;
  static constexpr auto row_member = RowMember;
  static constexpr Ref ref = R;
  static constexpr bool computed = K == Role::kComputed;
  const char* name;
};

// ---- generic operations over a table's columns ----------------------------------------------

// Number of rows (the first column is always an input column).
template <typename Table>
size_t rows(const Table& t) {
  size_t n = 0;
  bool first = true;
  Table::for_each_column([&](auto c) {
    if (first) n = (t.*c.member).size();
    first = false;
  });
  return n;
}

// Appends one row to every input column.
template <typename Table>
void push_row(Table& t, const typename Table::Row& r) {
  Table::for_each_column([&](auto c) {
    if constexpr (!decltype(c)::computed) (t.*c.member).push_back(r.*c.row_member);
  });
}

// Overwrites row i of every input column.
template <typename Table>
void set_row(Table& t, size_t i, const typename Table::Row& r) {
  Table::for_each_column([&](auto c) {
    if constexpr (!decltype(c)::computed) (t.*c.member)[i] = r.*c.row_member;
  });
}

// Row i of the input columns.
template <typename Table>
typename Table::Row get_row(const Table& t, size_t i) {
  typename Table::Row r;
  Table::for_each_column([&](auto c) {
    if constexpr (!decltype(c)::computed) r.*c.row_member = (t.*c.member)[i];
  });
  return r;
}

template <typename Table>
void reserve_rows(Table& t, size_t n) {
  Table::for_each_column([&](auto c) {
    if constexpr (!decltype(c)::computed) (t.*c.member).reserve(n);
  });
}

// Drops every row from n on (computed columns too, when they are filled).
template <typename Table>
void truncate_rows(Table& t, size_t n) {
  Table::for_each_column([&](auto c) {
    if ((t.*c.member).size() > n) (t.*c.member).resize(n);
  });
}

// Calls f(column descriptor) for the input columns only.
template <typename Table, typename F>
void for_each_input_column(F&& f) {
  Table::for_each_column([&](auto c) {
    if constexpr (!decltype(c)::computed) f(c);
  });
}

template <typename Table>
constexpr size_t column_count() {
  size_t n = 0;
  Table::for_each_column([&](auto) { ++n; });
  return n;
}

// A table is only its column list: no std::vector member declared beside the list (every
// generic walk would miss it: the sort would leave it misaligned, files would drop it), and the
// input columns come first (rows() reads the first column).
template <typename Table>
constexpr bool well_formed() {
  bool computed_seen = false, inputs_first = true;
  Table::for_each_column([&](auto c) {
    if (decltype(c)::computed)
      computed_seen = true;
    else if (computed_seen)
      inputs_first = false;
  });
  return inputs_first && sizeof(Table) == column_count<Table>() * sizeof(std::vector<char>);
}

}  // namespace mlprof::schema

// ---- the macros that expand a column list ---------------------------------------------------

#define MLPROF_SCHEMA_MEMBER(type, name, ref, role, init) std::vector<type> name;
#define MLPROF_SCHEMA_ROW_FIELD_kInput(type, name, init) type name = init;
#define MLPROF_SCHEMA_ROW_FIELD_kComputed(type, name, init)
#define MLPROF_SCHEMA_ROW_FIELD(type, name, ref, role, init) \
  MLPROF_SCHEMA_ROW_FIELD_##role(type, name, init)
#define MLPROF_SCHEMA_ROW_PTR_kInput(name) &Row::name
#define MLPROF_SCHEMA_ROW_PTR_kComputed(name) nullptr
#define MLPROF_SCHEMA_VISIT(type, name, ref, role, init)                      \
  f(::mlprof::schema::Column<&Self::name, MLPROF_SCHEMA_ROW_PTR_##role(name), \
                             ::mlprof::schema::Ref::ref, ::mlprof::schema::Role::role>{#name});

// Inside `struct Table { ... }`: the columns of LIST, `Table::Row` (the input columns, with
// their defaults) and `Table::for_each_column(f)`, which calls f(schema::Column<...>{"name"}) for
// each column in list order.
#define MLPROF_TABLE(Table, LIST)                \
  struct Row {                                   \
    LIST(MLPROF_SCHEMA_ROW_FIELD)                \
  };                                             \
  LIST(MLPROF_SCHEMA_MEMBER)                     \
  template <typename F>                          \
  static constexpr void for_each_column(F&& f) { \
    using Self = Table;                          \
    LIST(MLPROF_SCHEMA_VISIT)                    \
  }
