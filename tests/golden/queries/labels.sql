-- Every label of every run.
SELECT r.name AS run, l.key, l.value
FROM run_labels l
JOIN runs r ON r.run_id = l.run_id
ORDER BY r.name, l.key;
