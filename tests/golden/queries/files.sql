-- Every file seen, with its verdict (ids and times left out: they depend on the order and moment of ingest).
SELECT r.name AS run, f.path, f.kind, f.verdict, f.reason, f.size_bytes, f.content_hash, f.line_count,
       f.unknown_lines, f.issue_count, f.rows_written, m.name AS module, m.stage
FROM dump_files f
JOIN runs r ON r.run_id = f.run_id
LEFT JOIN modules m ON m.module_id = f.module_id
ORDER BY r.name, f.path;
