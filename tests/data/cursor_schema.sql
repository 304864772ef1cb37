-- Cursor's globalStorage/state.vscdb as public readers show it with `.schema`
-- (michaeldhood/chatrxiv docs/cursor/storage-reference.md, "sqlite_master objects").
-- Cursor is closed source: no migration of its own to cite.
CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
