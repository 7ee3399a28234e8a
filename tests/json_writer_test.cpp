// JsonWriter's output is valid UTF-8 whatever the bytes it is given (issue 11 item 6). The
// well-formed sequences are those of the Unicode standard's table 3-7; each byte of anything
// else becomes U+FFFD.
#include "trace/json_writer.h"

#include <gtest/gtest.h>

namespace {

std::string escaped(std::string_view s) {
  std::string out;
  mlprof::JsonWriter::escape(out, s);
  return out;
}

const std::string kFffd = "\xEF\xBF\xBD";

TEST(JsonWriterUtf8, WellFormedSequencesPassThrough) {
  for (std::string s : {"caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xED\x9F\xBF",
                        "\xEE\x80\x80", "\xF4\x8F\xBF\xBF", "\xC2\x80", "\xEF\xBF\xBF"}) {
    EXPECT_EQ(escaped(s), "\"" + s + "\"");
    EXPECT_TRUE(mlprof::JsonWriter::valid_utf8(s));
  }
}

TEST(JsonWriterUtf8, EachByteOfAnIllFormedSequenceBecomesFffd) {
  EXPECT_EQ(escaped("caf\xE9"), "\"caf" + kFffd + "\"");                    // Latin-1
  EXPECT_EQ(escaped("\xC0\xAF"), "\"" + kFffd + kFffd + "\"");              // overlong '/'
  EXPECT_EQ(escaped("\xE0\x80\xAF"), "\"" + kFffd + kFffd + kFffd + "\"");  // overlong
  EXPECT_EQ(escaped("\xED\xA0\x80"), "\"" + kFffd + kFffd + kFffd + "\"");  // surrogate D800
  EXPECT_EQ(escaped("\xF4\x90\x80\x80"), "\"" + kFffd + kFffd + kFffd + kFffd + "\"");  // >10FFFF
  EXPECT_EQ(escaped("\xF5"), "\"" + kFffd + "\"");
  EXPECT_EQ(escaped("a\xE2\x82"), "\"a" + kFffd + kFffd + "\"");  // cut short at the end
  EXPECT_EQ(escaped("\x80x"), "\"" + kFffd + "x\"");              // a lone continuation byte
  EXPECT_FALSE(mlprof::JsonWriter::valid_utf8("\xED\xA0\x80"));
}

TEST(JsonWriterUtf8, EscapesAndRawValuesStayValid) {
  EXPECT_EQ(escaped("a\"b\\c\n\x01\xFF"), "\"a\\\"b\\\\c\\n\\u0001" + kFffd + "\"");
  mlprof::JsonWriter w;
  w.begin_object().key("k\xFF").raw("\"v\xFE\"").end_object();
  EXPECT_EQ(w.str(), "{\"k" + kFffd + "\":\"v" + kFffd + "\"}");
  EXPECT_TRUE(mlprof::JsonWriter::valid_utf8(w.str()));
}

}  // namespace
