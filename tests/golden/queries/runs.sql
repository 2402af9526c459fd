-- Every run with its summary (its labels: labels.sql).
SELECT r.name AS run, r.run_time_us, r.run_time_source, r.file_count, r.ingested_file_count, r.error_file_count,
       r.module_count
FROM runs r
ORDER BY r.name;
