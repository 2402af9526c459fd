-- Every run with its summary and labels.
SELECT r.name AS run, r.run_time_us, r.run_time_source, r.file_count, r.ingested_file_count, r.error_file_count,
       r.module_count, (SELECT group_concat(l.key || '=' || l.value, ';') FROM run_labels l WHERE l.run_id = r.run_id) AS labels
FROM runs r
ORDER BY r.name;
