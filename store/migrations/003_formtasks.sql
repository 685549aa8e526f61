-- placeholder, replaced by the 003_formtasks work
SELECT 1;
