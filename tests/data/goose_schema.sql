-- Goose's session store (sessions/sessions.db) as a fresh Goose 1.x install creates it, schema
-- version 17: the CREATE statements of SessionStorage::create_schema in
-- crates/goose/src/session/session_manager.rs and the three counter triggers of
-- crates/goose/src/session/counter_triggers.rs (SESSION_COUNTER_TRIGGERS), both at block/goose
-- commit ef3481349afa5c719129b5d41c2999f1b39efead, copied as they are. Left out: the provider
-- inventory tables (providers::inventory::create_tables), which hold no message.
CREATE TABLE IF NOT EXISTS schema_version (
                version INTEGER PRIMARY KEY,
                applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
            );
INSERT OR IGNORE INTO schema_version (version) VALUES (17);
CREATE TABLE IF NOT EXISTS sessions (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL DEFAULT '',
                description TEXT NOT NULL DEFAULT '',
                user_set_name BOOLEAN DEFAULT FALSE,
                session_type TEXT NOT NULL DEFAULT 'user',
                working_dir TEXT NOT NULL,
                created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                extension_data TEXT DEFAULT '{}',
                total_tokens INTEGER,
                input_tokens INTEGER,
                output_tokens INTEGER,
                cache_read_tokens INTEGER,
                cache_write_tokens INTEGER,
                accumulated_total_tokens INTEGER,
                accumulated_input_tokens INTEGER,
                accumulated_output_tokens INTEGER,
                accumulated_cache_read_tokens INTEGER,
                accumulated_cache_write_tokens INTEGER,
                accumulated_cost REAL,
                schedule_id TEXT,
                recipe_json TEXT,
                user_recipe_values_json TEXT,
                provider_name TEXT,
                model_config_json TEXT,
                goose_mode TEXT NOT NULL DEFAULT 'auto',
                archived_at TIMESTAMP,
                project_id TEXT,
                parent_session_id TEXT,
                message_count INTEGER NOT NULL DEFAULT 0,
                last_message_timestamp INTEGER
            );
CREATE TABLE IF NOT EXISTS messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                message_id TEXT,
                session_id TEXT NOT NULL REFERENCES sessions(id),
                role TEXT NOT NULL,
                content_json TEXT NOT NULL,
                created_timestamp INTEGER NOT NULL,
                timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                tokens INTEGER,
                metadata_json TEXT
            );
CREATE TABLE IF NOT EXISTS usage_ledger (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                created_timestamp INTEGER NOT NULL,
                model TEXT,
                input_tokens INTEGER,
                output_tokens INTEGER,
                total_tokens INTEGER,
                cache_read_tokens INTEGER,
                cache_write_tokens INTEGER,
                cost REAL,
                cost_source TEXT,
                is_compaction INTEGER DEFAULT 0
            );
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id);
CREATE INDEX IF NOT EXISTS idx_messages_timestamp ON messages(timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_message_id ON messages(message_id);
CREATE INDEX IF NOT EXISTS idx_messages_session_created ON messages(session_id, created_timestamp, id);
CREATE INDEX IF NOT EXISTS idx_sessions_updated ON sessions(updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_type ON sessions(session_type);
CREATE INDEX IF NOT EXISTS idx_sessions_last_msg ON sessions(last_message_timestamp DESC, id DESC);
CREATE TRIGGER IF NOT EXISTS trg_messages_insert_counters
AFTER INSERT ON messages
BEGIN
    UPDATE sessions SET
        message_count = message_count +
            (CASE WHEN COALESCE(CASE WHEN json_valid(NEW.metadata_json)
                                     THEN json_extract(NEW.metadata_json, '$.userVisible') END, 1) != 0
                  THEN 1 ELSE 0 END),
        last_message_timestamp = MAX(
            COALESCE(last_message_timestamp, 0),
            CASE WHEN NEW.created_timestamp > 10000000000 THEN NEW.created_timestamp / 1000 ELSE NEW.created_timestamp END
        )
    WHERE id = NEW.session_id;
END;
CREATE TRIGGER IF NOT EXISTS trg_messages_delete_counters
AFTER DELETE ON messages
BEGIN
    UPDATE sessions SET
        message_count = (SELECT COUNT(*) FROM messages m
                         WHERE m.session_id = OLD.session_id
                           AND COALESCE(CASE WHEN json_valid(m.metadata_json)
                                             THEN json_extract(m.metadata_json, '$.userVisible') END, 1) != 0),
        last_message_timestamp = (SELECT MAX(CASE WHEN m.created_timestamp > 10000000000
                                                  THEN m.created_timestamp / 1000
                                                  ELSE m.created_timestamp END)
                                  FROM messages m
                                  WHERE m.session_id = OLD.session_id)
    WHERE id = OLD.session_id;
END;
CREATE TRIGGER IF NOT EXISTS trg_messages_update_counters
AFTER UPDATE OF metadata_json, created_timestamp ON messages
BEGIN
    UPDATE sessions SET
        message_count = (SELECT COUNT(*) FROM messages m
                         WHERE m.session_id = OLD.session_id
                           AND COALESCE(CASE WHEN json_valid(m.metadata_json)
                                             THEN json_extract(m.metadata_json, '$.userVisible') END, 1) != 0),
        last_message_timestamp = (SELECT MAX(CASE WHEN m.created_timestamp > 10000000000
                                                  THEN m.created_timestamp / 1000
                                                  ELSE m.created_timestamp END)
                                  FROM messages m
                                  WHERE m.session_id = OLD.session_id)
    WHERE id = OLD.session_id;
END;
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_usage_ledger_session ON usage_ledger(session_id);
