-- The `Stack trace breakdown for peak usage` trees. Percentages in billionths.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, t.ordinal, t.depth, t.name,
       CAST(ROUND(t.percent * 1000000000) AS BIGINT) AS percent_e9, t.total_bytes, t.current_bytes, t.remaining_bytes
FROM stack_trace_nodes t
JOIN modules m ON m.module_id = t.module_id
JOIN runs r ON r.run_id = m.run_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, t.ordinal;
