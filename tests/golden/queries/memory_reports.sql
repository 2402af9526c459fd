-- Memory-usage report rows and totals, by file. Percentages in billionths (integers print alike on every
-- backend).
SELECT r.name AS run, f.path, 'row' AS part, mr.ordinal, mr.section, mr.allocation_index, mr.memory_space,
       mr.memory_space_name, mr.table_ordinal, mr.cumulative_bytes_approx,
       CAST(ROUND(mr.cumulative_percent * 1000000000) AS BIGINT) AS percent_e9,
       mr.remaining_bytes_approx, mr.size_bytes_approx, mr.offset_bytes, mr.value_count, mr.shapes
FROM memory_report_rows mr
JOIN dump_files f ON f.file_id = mr.file_id
JOIN runs r ON r.run_id = f.run_id
UNION ALL
SELECT r.name, f.path, 'total', NULL, NULL, NULL, t.memory_space, NULL, NULL, t.total_bytes, NULL, NULL, NULL, NULL,
       NULL, NULL
FROM memory_report_totals t
JOIN dump_files f ON f.file_id = t.file_id
JOIN runs r ON r.run_id = f.run_id
ORDER BY 1, 2, 3, 4, 7;
