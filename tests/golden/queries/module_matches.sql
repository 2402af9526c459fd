-- How the modules of every ordered pair of runs pair up.
SELECT run_name_a, run_name_b, module_name, stage, folder, xla_module_id_a, xla_module_id_b, entry_signature,
       identity_key, matched_by, same_program
FROM module_matches
ORDER BY run_name_a, run_name_b, module_name, stage, folder, xla_module_id_a, xla_module_id_b;
