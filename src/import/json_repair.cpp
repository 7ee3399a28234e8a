#include "import/json_repair.h"

#include <cstdio>

namespace mlprof::import {

namespace {

class Repairer {
 public:
  explicit Repairer(std::string_view t) : t_(t) {}

  JsonRepair run() {
    ws();
    if (value(0)) {
      ws();
      if (i_ != t_.size()) fail("unexpected data after the value");
    }
    if (!r_.repaired()) r_.fixed.clear();
    if (r_.what[0] == 0) r_.valid = true;
    return std::move(r_);
  }

 private:
  bool fail(const char* what) {
    if (r_.what[0] == 0) {
      r_.bad_at = i_;
      r_.what = what;
    }
    return false;
  }
  char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  void put(char c) { r_.fixed.push_back(c); }
  void copy(size_t from) { r_.fixed.append(t_.substr(from, i_ - from)); }
  void ws() {
    size_t from = i_;
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t'))
      ++i_;
    copy(from);
  }
  bool literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return fail("invalid literal");
    i_ += word.size();
    r_.fixed.append(word);
    return true;
  }
  bool number() {
    size_t from = i_;
    if (peek() == '-') ++i_;
    if (peek() == '0') {
      ++i_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++i_;
    } else {
      return fail("expected a value");
    }
    if (peek() == '.') {
      ++i_;
      if (!(peek() >= '0' && peek() <= '9')) return fail("expected a digit after '.'");
      while (peek() >= '0' && peek() <= '9') ++i_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (!(peek() >= '0' && peek() <= '9')) return fail("expected an exponent");
      while (peek() >= '0' && peek() <= '9') ++i_;
    }
    copy(from);
    return true;
  }
  // Length of the UTF-8 sequence at i_ (0 if invalid).
  size_t utf8_length() const {
    auto b = [&](size_t k) { return static_cast<unsigned char>(t_[i_ + k]); };
    unsigned char c = b(0);
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (n == 0 || i_ + n > t_.size()) return 0;
    for (size_t k = 1; k < n; ++k)
      if ((b(k) & 0xC0) != 0x80) return 0;
    if (n == 3 && ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0))) return 0;
    if (n == 4 && ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90))) return 0;
    return n;
  }
  bool string() {
    put('"');
    ++i_;
    for (;;) {
      if (i_ >= t_.size()) return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(t_[i_]);
      if (c == '"') {
        put('"');
        ++i_;
        return true;
      }
      if (c == '\\') {
        char e = i_ + 1 < t_.size() ? t_[i_ + 1] : '\0';
        if (e == 'u') {
          for (size_t k = 2; k < 6; ++k) {
            char h = i_ + k < t_.size() ? t_[i_ + k] : '\0';
            bool hex = (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
            if (!hex) return fail("invalid \\u escape");
          }
          r_.fixed.append(t_.substr(i_, 6));
          i_ += 6;
          continue;
        }
        if (!e || std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos)
          return fail("invalid escape");
        put('\\');
        put(e);
        i_ += 2;
        continue;
      }
      if (c < 0x20) {
        if (!r_.control_characters) r_.first_control_character_at = i_;
        ++r_.control_characters;
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        r_.fixed.append(buf);
        ++i_;
        continue;
      }
      if (c < 0x80) {
        put(static_cast<char>(c));
        ++i_;
        continue;
      }
      size_t n = utf8_length();
      if (!n) return fail("invalid UTF-8");
      r_.fixed.append(t_.substr(i_, n));
      i_ += n;
    }
  }
  // After a ',' in an array or object: a closing bracket next is a trailing comma (dropped).
  bool trailing_comma(char close, size_t comma_at) {
    size_t j = i_;
    while (j < t_.size() && (t_[j] == ' ' || t_[j] == '\n' || t_[j] == '\r' || t_[j] == '\t')) ++j;
    if (j >= t_.size() || t_[j] != close) return false;
    if (!r_.trailing_commas) r_.first_trailing_comma_at = comma_at;
    ++r_.trailing_commas;
    // Drop the ',' already copied, keep the whitespace.
    size_t k = r_.fixed.rfind(',');
    r_.fixed.erase(k, 1);
    return true;
  }
  bool container(int depth) {
    if (depth > 512) return fail("nested too deeply");
    char open = peek();
    char close = open == '{' ? '}' : ']';
    put(open);
    ++i_;
    ws();
    if (peek() == close) {
      put(close);
      ++i_;
      return true;
    }
    for (;;) {
      if (open == '{') {
        if (peek() != '"') return fail("expected a quoted key");
        if (!string()) return false;
        ws();
        if (peek() != ':') return fail("expected ':'");
        put(':');
        ++i_;
        ws();
      }
      if (!value(depth + 1)) return false;
      ws();
      if (peek() == ',') {
        size_t comma_at = i_;
        put(',');
        ++i_;
        ws();
        if (trailing_comma(close, comma_at)) {
          put(close);
          ++i_;
          return true;
        }
        continue;
      }
      if (peek() == close) {
        put(close);
        ++i_;
        return true;
      }
      return fail(open == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  bool value(int depth) {
    switch (peek()) {
      case '{':
      case '[':
        return container(depth);
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  std::string_view t_;
  size_t i_ = 0;
  JsonRepair r_;
};

}  // namespace

JsonRepair repair_json_value(std::string_view text) { return Repairer(text).run(); }

}  // namespace mlprof::import
