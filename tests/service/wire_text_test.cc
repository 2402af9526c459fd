// proto/wire_text.h: what may go into a proto3 string field. Expected strings are written out by hand from
// the UTF-8 definition (RFC 3629) and the Unicode "maximal subpart" replacement rule.
#include "proto/wire_text.h"

#include <gtest/gtest.h>

#include <google/protobuf/struct.pb.h>

#include "xladb/v1/xladb.pb.h"

namespace xladb::wire {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

TEST(WireText, ValidUtf8IsRecognised) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("jit_train_step, a long ASCII run past eight bytes"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9"));              // é
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));          // €
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));      // U+1F600
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));      // U+10FFFF, the last code point
}

TEST(WireText, InvalidUtf8IsRefusedAsProtobufRefusesIt) {
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("poison\xFFrun"));
  EXPECT_FALSE(IsValidUtf8("\xC0\x80"));              // overlong NUL
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));          // a surrogate (U+D800)
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));      // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xF0\x9F\x98"));          // cut short
  EXPECT_FALSE(IsValidUtf8("12345678\x80"));          // a stray continuation byte after an ASCII run
}

TEST(WireText, EachMaximalInvalidSubpartBecomesOneReplacement) {
  EXPECT_EQ(ToValidUtf8("poison\xFFrun"), std::string("poison") + kReplacement + "run");
  EXPECT_EQ(ToValidUtf8("a\xF0\x9F\x98z"), std::string("a") + kReplacement + "z");  // one cut-short sequence
  EXPECT_EQ(ToValidUtf8("\xC0\x80"), std::string(kReplacement) + kReplacement);    // C0 starts nothing
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), std::string(kReplacement) + kReplacement + kReplacement);
  EXPECT_EQ(ToValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");  // valid text unchanged
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xFF\xFE\xF0\x9F\x98\x80\xE2\x82")));
}

TEST(WireText, EscapingShowsTheBytesForPeople) {
  EXPECT_EQ(EscapeInvalidUtf8("a\xFF" "b"), "a\\xffb");
  EXPECT_EQ(EscapeInvalidUtf8("\xF0\x9F\x98z"), "\\xf0\\x9f\\x98z");
  EXPECT_EQ(EscapeInvalidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(WireText, EveryStringFieldOfAResponseIsMadeValidAndBytesAreLeftAlone) {
  v1::ListRunsResponse runs;
  auto* run = runs.add_runs();
  run->set_name("poison\xFFrun");
  run->set_source_path("/a/\xFE");
  auto* label = run->add_labels();
  label->set_key("k\xFF");
  label->set_value("v\xFF");
  runs.set_next_page_token("ok");
  MakeStringsValidUtf8(&runs);
  EXPECT_EQ(runs.runs(0).name(), std::string("poison") + kReplacement + "run");
  EXPECT_EQ(runs.runs(0).source_path(), std::string("/a/") + kReplacement);
  EXPECT_EQ(runs.runs(0).labels(0).key(), std::string("k") + kReplacement);
  EXPECT_EQ(runs.runs(0).labels(0).value(), std::string("v") + kReplacement);
  EXPECT_EQ(runs.next_page_token(), "ok");
  std::string wire;
  ASSERT_TRUE(runs.SerializeToString(&wire));
  v1::ListRunsResponse back;
  EXPECT_TRUE(back.ParseFromString(wire));  // a strict peer can read it

  v1::IngestJob job;  // a map<string, int64>
  (*job.mutable_files_by_verdict())["err\xFF"] = 3;
  job.add_errors()->set_path("a/\xFF.txt");
  MakeStringsValidUtf8(&job);
  EXPECT_EQ(job.files_by_verdict().count(std::string("err") + kReplacement), 1u);
  EXPECT_EQ(job.errors(0).path(), std::string("a/") + kReplacement + ".txt");

  v1::QueryResponse rows;
  rows.add_rows()->add_values()->set_bytes_value("\xFF");
  MakeStringsValidUtf8(&rows);
  EXPECT_EQ(rows.rows(0).values(0).bytes_value(), "\xFF");
  EXPECT_EQ(rows.rows(0).values(0).value_case(), v1::Value::kBytesValue);  // a unset oneof string stays unset
}

// MakeStringsValidUtf8 plans each message type once (its string fields, and the message fields whose type holds
// a string at some depth): a type that holds itself (Struct -> Value -> ListValue -> Value) is walked to every
// depth, and a type met first deep down is planned as well as one met at the top.
TEST(WireText, ATypeThatHoldsItselfIsWalkedToEveryDepth) {
  google::protobuf::Struct top;
  (*top.mutable_fields())["k\xFF"].set_string_value("one\xFF");
  google::protobuf::Struct* inner = (*top.mutable_fields())["inner"].mutable_struct_value();
  google::protobuf::ListValue* list = (*inner->mutable_fields())["list"].mutable_list_value();
  list->add_values()->set_string_value("three\xFF");
  list->add_values()->mutable_struct_value()->mutable_fields()->insert({"four", google::protobuf::Value()});
  (*list->mutable_values(1)->mutable_struct_value()->mutable_fields())["four"].set_string_value("\xFE");
  MakeStringsValidUtf8(&top);
  EXPECT_EQ(top.fields().at(std::string("k") + kReplacement).string_value(), std::string("one") + kReplacement);
  const google::protobuf::ListValue& fixed = top.fields().at("inner").struct_value().fields().at("list").list_value();
  EXPECT_EQ(fixed.values(0).string_value(), std::string("three") + kReplacement);
  EXPECT_EQ(fixed.values(1).struct_value().fields().at("four").string_value(), kReplacement);

  v1::CheckRunResponse gate;  // the answer that holds most strings: its buffer changes and source lines
  v1::CheckedModule* module = gate.add_modules();
  v1::BufferChange* change = module->add_attribution();
  change->set_op_name("jit(f)/\xFF");
  change->set_shape_b("f32[\xFF]");
  module->add_by_source()->set_source("a.py\xFF:3");
  MakeStringsValidUtf8(&gate);
  EXPECT_EQ(gate.modules(0).attribution(0).op_name(), std::string("jit(f)/") + kReplacement);
  EXPECT_EQ(gate.modules(0).attribution(0).shape_b(), std::string("f32[") + kReplacement + "]");
  EXPECT_EQ(gate.modules(0).by_source(0).source(), std::string("a.py") + kReplacement + ":3");
}

}  // namespace
}  // namespace xladb::wire
