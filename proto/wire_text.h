// Wire text: what may go into a proto3 `string` field. proto3 requires valid UTF-8 there, and a peer that
// receives anything else drops the whole message ("Exception deserializing response" in Python; a C++ reader
// sees the stream end). File names, run names and dump text are bytes, not always UTF-8, so everything the
// server or the CLI puts on the wire passes through here first.
//
// Contract
//   * IsValidUtf8: strict UTF-8 as protobuf checks it (no overlong forms, no surrogates, nothing past
//     U+10FFFF).
//   * ToValidUtf8: the text with each maximal invalid subsequence replaced by U+FFFD (the WHATWG / Unicode
//     "substitution of maximal subparts" rule); valid text comes back unchanged. EscapeInvalidUtf8 shows
//     those bytes as \xNN instead, for a person reading them (the CLI prints bytes values so).
//   * MakeStringsValidUtf8: applies ToValidUtf8 to every string field of `message`, nested messages, repeated
//     fields and map keys and values included (through reflection, so a field added later is covered too).
//     `bytes` fields are left alone.
//   * Pure functions; thread-safe.
#ifndef XLADB_PROTO_WIRE_TEXT_H_
#define XLADB_PROTO_WIRE_TEXT_H_

#include <string>
#include <string_view>

namespace google::protobuf {
class Message;
}

namespace xladb::wire {

bool IsValidUtf8(std::string_view text);
std::string ToValidUtf8(std::string_view text);
// For people: the text with each byte that is not part of valid UTF-8 written as \xNN (valid text unchanged).
std::string EscapeInvalidUtf8(std::string_view text);
void MakeStringsValidUtf8(google::protobuf::Message* message);

}  // namespace xladb::wire

#endif  // XLADB_PROTO_WIRE_TEXT_H_
