#pragma once
// Internal to fuselens_db: how the writers bind and batch rows (Writer.cpp, LeanEncoder.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "fuselens/db/Sqlite.h"

namespace fuselens::db::rows {

inline std::int64_t i64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

// Binds columns 1..N in order; keeps the insert code one line per field.
class Binder {
 public:
  explicit Binder(Statement& s) : s_(s) {}
  template <typename T>
  Binder& operator()(const T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      s_.bind(++i_, std::string_view(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      s_.bind(++i_, static_cast<double>(value));
    } else if constexpr (std::is_enum_v<T>) {
      s_.bind(++i_, static_cast<std::int64_t>(value));
    } else if constexpr (requires { value.has_value(); }) {
      s_.bind(++i_, value);
    } else {
      s_.bind(++i_, static_cast<std::int64_t>(value));
    }
    return *this;
  }
  void run() { s_.run(); }

 private:
  Statement& s_;
  int i_ = 0;
};

struct KernelNameIds {
  std::int64_t short_id, demangled_id, mangled_id;
};

// One value of a row waiting in a BulkInsert: an integer, NULL or a real.
struct Value {
  enum class Kind : std::uint8_t { Integer, Null, Real };
  std::int64_t integer = 0;
  double real = 0;
  Kind kind = Kind::Integer;
};

// An INSERT of many rows per statement: rows are collected as values and stored kRows at a time
// by one multi-row INSERT statement, the rest one row at a time at flush(). Executing one
// statement per 32 rows instead of one per row, without clearing the bindings of each row (every
// parameter is bound again), is what made the writer faster (docs/BENCHMARKS.md, "Capture size
// and writer throughput"). Rows are stored in the order they were added, so INSERT OR REPLACE
// keeps the last of rows with the same key, as single-row statements did.
class BulkInsert {
 public:
  static constexpr int kRows = 32;

  /// `head` is "INSERT INTO table(c1,...,cN)" (or INSERT OR REPLACE ...); `columns` is N.
  BulkInsert(const Connection& db, const std::string& head, int columns)
      : columns_(columns),
        one_(db.prepare(head + " VALUES" + placeholders(columns, 1))),
        many_(db.prepare(head + " VALUES" + placeholders(columns, kRows))) {
    values_.resize(static_cast<std::size_t>(kRows * columns));
  }

  /// The values of the next row, to be filled in column order (then call next()).
  Value* row() { return values_.data() + static_cast<std::ptrdiff_t>(rows_) * columns_; }
  /// Commits the row filled through row(); stores the collected rows when kRows are waiting.
  void next() {
    if (++rows_ == kRows) {
      bind_rows(many_, 0, kRows);
      many_.run_keeping_bindings();
      rows_ = 0;
    }
  }
  /// Stores the rows still waiting, one statement each.
  void flush() {
    for (int r = 0; r < rows_; ++r) {
      bind_rows(one_, r, 1);
      one_.run_keeping_bindings();
    }
    rows_ = 0;
  }
  /// Forgets the rows waiting (after a failed transaction).
  void discard() { rows_ = 0; }

 private:
  static std::string placeholders(int columns, int rows) {
    std::string one = "(";
    for (int c = 0; c < columns; ++c) one += c ? ",?" : "?";
    one += ')';
    std::string out;
    for (int r = 0; r < rows; ++r) {
      if (r) out += ',';
      out += one;
    }
    return out;
  }
  void bind_rows(Statement& s, int first, int rows) {
    const Value* v = values_.data() + static_cast<std::ptrdiff_t>(first) * columns_;
    const int n = rows * columns_;
    for (int i = 0; i < n; ++i, ++v) {
      switch (v->kind) {
        case Value::Kind::Integer:
          s.bind(i + 1, v->integer);
          break;
        case Value::Kind::Null:
          s.bind_null(i + 1);
          break;
        case Value::Kind::Real:
          s.bind(i + 1, v->real);
          break;
      }
    }
  }

  int columns_;
  int rows_ = 0;
  Statement one_, many_;
  std::vector<Value> values_;
};

// Fills a BulkInsert row in column order; keeps the insert code one line per field.
class RowFiller {
 public:
  explicit RowFiller(BulkInsert& insert) : insert_(insert), v_(insert.row()) {}
  template <typename T>
  RowFiller& operator()(const T& value) {
    if constexpr (std::is_floating_point_v<T>) {
      v_->kind = Value::Kind::Real;
      v_->real = static_cast<double>(value);
    } else if constexpr (std::is_enum_v<T>) {
      v_->kind = Value::Kind::Integer;
      v_->integer = static_cast<std::int64_t>(value);
    } else if constexpr (requires { value.has_value(); }) {
      if (value) {
        v_->kind = Value::Kind::Integer;
        v_->integer = static_cast<std::int64_t>(*value);
      } else {
        v_->kind = Value::Kind::Null;
      }
    } else {
      v_->kind = Value::Kind::Integer;
      v_->integer = static_cast<std::int64_t>(value);
    }
    ++v_;
    return *this;
  }
  void null() {
    v_->kind = Value::Kind::Null;
    ++v_;
  }
  void next() { insert_.next(); }

 private:
  BulkInsert& insert_;
  Value* v_;
};

}  // namespace fuselens::db::rows
