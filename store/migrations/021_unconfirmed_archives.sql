-- Archives their form-task workflow may not know of. A submission's archive runs as a local activity
-- (CheckAndArchive) and commits before the workflow task that accepts its update completes; Temporal keeps
-- an admitted update in memory, so a restart in that window loses the update and the workflow would wait
-- in Utfylling or Signering for good. Every archive adds its row in its own transaction; the workers' sweep
-- (worker.ConfirmArchives) tells the workflows still running of their archive and forgets the row once its
-- workflow runs no more.
CREATE TABLE unconfirmed_archives (
    message_id  text PRIMARY KEY,
    archived_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX unconfirmed_archives_archived_at ON unconfirmed_archives (archived_at);
