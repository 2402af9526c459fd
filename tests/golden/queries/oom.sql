-- OOM debugging reports: the statistics and the buffers. Percentages in billionths.
SELECT r.name AS run, f.path, 'stat' AS part, NULL AS buffer_number, s.label, s.bytes_approx, s.bytes_text,
       CAST(ROUND(s.percent * 1000000000) AS BIGINT) AS percent_e9, NULL AS op_name, NULL AS source,
       NULL AS xla_label, NULL AS shape,
       NULL AS is_entry_parameter
FROM oom_stats s
JOIN dump_files f ON f.file_id = s.file_id
JOIN runs r ON r.run_id = f.run_id
UNION ALL
SELECT r.name, f.path, 'buffer', b.buffer_number, NULL, b.size_bytes_approx, b.size_text, NULL, b.op_name,
       b.source_file || ':' || b.source_line, b.xla_label, b.shape, b.is_entry_parameter
FROM oom_buffers b
JOIN dump_files f ON f.file_id = b.file_id
JOIN runs r ON r.run_id = f.run_id
ORDER BY 1, 2, 3, 4, 5;
