// The value lines of a buffer assignment: HloValue::ToShortString, `<ID NAME[INDEX][ (phi)][ @COLOR]>`
// (xla/service/hlo_value.cc, §2.4), read under allocations and as the header of a Used-values block; and the
// TF-1.x printers' value lines (before 2019-09-09, §2.1), which the parser recognises only to refuse them.
//
// Contract: pure functions; thread-safe. ParseValueShort copies the names it returns.
#ifndef XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_VALUE_SHORT_TEXT_H_
#define XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_VALUE_SHORT_TEXT_H_

#include <string_view>

#include "ingest/formats/buffer_assignment/hlo_value_text.h"
#include "ingest/records/records.h"

namespace xladb::ingest {

// Reads `<ID NAME[INDEX][ (phi)][ @COLOR]>` spanning all of `text` into *out. Returns kOk, kMalformed, or the
// problem of the id/color number (kNegative, kOutOfRange) with *bad_number set to it.
CountStatus ParseValueShort(std::string_view text, ValueRef* out, std::string_view* bad_number);

// LogicalBuffer::ToString ` name[](#id @c) [offset,size]: shape` under allocations, or an HloValue block
// `<id name @c>, positions:`: the value lines of the TF-1.x printers.
bool LooksLikePre2019ValueLine(std::string_view line);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_VALUE_SHORT_TEXT_H_
