-- TPU utilization counter lines, by file, and the spill summary per kernel. Ratios and rates in billionths.
SELECT r.name AS run, f.path, 'counter' AS part, u.block_ordinal, u.kernel, u.counter, u.numerator, u.denominator,
       CAST(ROUND(u.ratio * 1000000000) AS BIGINT) AS ratio_e9, u.ratio_text
FROM utilization_counters u
JOIN dump_files f ON f.file_id = u.file_id
JOIN runs r ON r.run_id = f.run_id
UNION ALL
SELECT k.run_name, k.module_name, 'spills', NULL, k.kernel,
       k.vmem_spills || '/' || k.vmem_fills || '/' || k.smem_spills || '/' || k.smem_fills, k.bundles, NULL,
       CAST(ROUND(k.vmem_spill_rate * 1000000000) AS BIGINT), NULL
FROM kernel_spills k
ORDER BY 1, 3, 2, 4, 5, 6;
