// ParserRegistry: which parser reads which FileKind. The one place that maps kinds to parser classes.
//
// Thread-safe (stateless). The returned parser writes to `sink`, which must outlive it.
#ifndef XLADB_INGEST_PARSER_REGISTRY_H_
#define XLADB_INGEST_PARSER_REGISTRY_H_

#include <memory>

#include "ingest/source/file_kind.h"
#include "ingest/text/line_parser.h"

namespace xladb::ingest {

// nullptr for kinds without a parser (kUnknown, kNotIngested).
std::unique_ptr<LineParser> MakeParser(FileKind kind, RecordSink* sink);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_PARSER_REGISTRY_H_
