-- Jit names compiled more than once per run, stage and folder.
SELECT run_name, module_name, stage, folder, compiles, distinct_signatures, distinct_fingerprints,
       first_xla_module_id, last_xla_module_id
FROM retrace_groups
ORDER BY run_name, module_name, stage, folder;
