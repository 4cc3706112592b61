from django.db import migrations, models

# Every change to a memory (insert, delete, update of any column but accessed_at, which reads touch) gives its owner
# a new stamp from one sequence: search snapshots in web processes (memories.search.snapshot) are current while
# the owner's stamp is the one they were built at. A sequence, not a counter: its values are never reused, so a
# stamp rolled back with its transaction, or a table emptied by a test, can never name newer rows. Written out
# here, not imported, so that no later code change alters this migration; tests/memories/test_snapshot.py checks
# that the trigger still covers every column but accessed_at.
COLUMNS = (
    "id, agent_id, namespace, key, content, embedding, embedding_model, metadata, tags, entities, category, "
    "subject, importance, confidence, source, source_ref, links, version, is_active, created_at, updated_at, "
    "happened_at, expires_at, conversation_id, message_id, owner_id, superseded_by_id, supersedes_id, project_id, "
    "indexed, ttl_minutes, value"
)
ROLE = "memento_maintenance"
BYPASS = f"current_setting('memento.rls_bypass', true) = 'on' AND pg_has_role(current_user, '{ROLE}', 'MEMBER')"
OWNER = "owner_id = nullif(current_setting('memento.user_id', true), '')::bigint"

FORWARD = f"""
CREATE SEQUENCE memento_memory_stamp;
CREATE FUNCTION memento_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO memories_memorystamp (owner_id, stamp) VALUES (OLD.owner_id, nextval('memento_memory_stamp'))
        ON CONFLICT (owner_id) DO UPDATE SET stamp = excluded.stamp;
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.owner_id IS DISTINCT FROM OLD.owner_id) THEN
        INSERT INTO memories_memorystamp (owner_id, stamp) VALUES (NEW.owner_id, nextval('memento_memory_stamp'))
        ON CONFLICT (owner_id) DO UPDATE SET stamp = excluded.stamp;
    END IF;
    RETURN NULL;
END $$;
-- owners with memories already (those the migrating session sees; one without a stamp is searched in SQL
-- until its next change)
INSERT INTO memories_memorystamp (owner_id, stamp)
    SELECT owner_id, nextval('memento_memory_stamp') FROM memories_memory GROUP BY owner_id;
CREATE TRIGGER memory_stamp AFTER INSERT OR DELETE OR UPDATE OF {COLUMNS} ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memento_memory_changed();
ALTER TABLE memories_memorystamp ENABLE ROW LEVEL SECURITY;
ALTER TABLE memories_memorystamp FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON memories_memorystamp USING (({BYPASS}) OR {OWNER}) WITH CHECK (({BYPASS}) OR {OWNER});
"""
REVERSE = """
DROP TRIGGER IF EXISTS memory_stamp ON memories_memory;
DROP FUNCTION IF EXISTS memento_memory_changed();
DROP SEQUENCE IF EXISTS memento_memory_stamp;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0011_owner_lexemes")]

    operations = [
        migrations.CreateModel(
            name="MemoryStamp",
            fields=[
                ("owner_id", models.BigIntegerField(
                    help_text="Owner of the memories (no foreign key: the trigger still stamps while a deleted "
                              "user's memories are deleted).", primary_key=True, serialize=False)),
                ("stamp", models.BigIntegerField(
                    help_text="A value of the sequence memento_memory_stamp, new at every change.")),
            ],
        ),
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
    ]
