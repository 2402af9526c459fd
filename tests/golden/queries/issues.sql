-- What ingest reported about each file, line by line.
SELECT r.name AS run, f.path, i.line, i.severity, i.reason
FROM ingest_issues i
JOIN dump_files f ON f.file_id = i.file_id
JOIN runs r ON r.run_id = f.run_id
ORDER BY r.name, f.path, i.line, i.severity, i.reason;
