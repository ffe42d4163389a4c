// Printable (issue 22, unsafe output): the form every string read from a capture is shown in.
#include "fuselens/db/Printable.h"

#include <gtest/gtest.h>

#include <string>

namespace fuselens::db {
namespace {

TEST(Printable, KeepsTextAndValidUtf8) {
  for (const std::string text : {"", "void fused<float>(float*, int) [clone 0x1f]",
                                 "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5", "back\\slash"}) {
    EXPECT_TRUE(is_printable(text)) << text;
    EXPECT_EQ(printable(text), text);
  }
}

TEST(Printable, EscapesControlCharacters) {
  EXPECT_EQ(printable("a\x1b]0;pwned\x07z"), "a\\x1b]0;pwned\\x07z");  // OSC title sequence
  EXPECT_EQ(printable("row\nforged,row\rx"), "row\\x0aforged,row\\x0dx");
  EXPECT_EQ(printable(std::string("nul\0cut", 7)), "nul\\x00cut");
  EXPECT_EQ(printable("tab\there\x7f"), "tab\\x09here\\x7f");
  EXPECT_EQ(printable("csi\xc2\x9b"
                      "31m"),
            "csi\\u009b31m");  // C1 CSI as UTF-8
  EXPECT_FALSE(is_printable("\x1b[2J"));
}

TEST(Printable, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(printable("raw\x9b"
                      "31m"),
            "raw\\x9b31m");                                          // a lone C1 byte (8-bit CSI)
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("cut\xe2\x86"), "cut\\xe2\\x86");              // truncated at the end
}

// Issue 22, unbounded output: a 90 MB kernel name made cct and export grow to 8.5 GB. Texts past
// kMaxTextBytes keep their first kMaxTextBytes bytes, cut at a character boundary, and say how
// long they were.
TEST(Printable, CutsTextsLongerThanTheBoundAndSaysSo) {
  const std::string exact(kMaxTextBytes, 'a');
  EXPECT_EQ(printable(exact), exact);
  const std::string longer = exact + "bcd";
  EXPECT_EQ(printable(longer),
            exact + "...[truncated: " + std::to_string(longer.size()) + " bytes]");
  // A two-byte character straddling the bound is left out whole, not cut in half.
  const std::string straddle = std::string(kMaxTextBytes - 1, 'a') + "\xc3\xa9" + "z";
  const std::string cut = printable(straddle);
  EXPECT_EQ(cut.substr(0, kMaxTextBytes), std::string(kMaxTextBytes - 1, 'a') + ".");
  EXPECT_TRUE(is_printable(cut));
  // Escaping applies to the part kept.
  EXPECT_EQ(printable("ab\ncdef", 4), "ab\\x0ac...[truncated: 7 bytes]");
  const std::string big(90u << 20, 'x');
  EXPECT_LT(printable(big).size(), kMaxTextBytes + 64);
}

}  // namespace
}  // namespace fuselens::db
