from django.db import migrations, models

# Each memory row carries the stamp of its last change, and the owner's stamp row the count and the sum of them, so
# that a web process holding a search snapshot of an owner's rows (memories.search.snapshot) reads only the rows
# changed since its stamp, then checks by the count and the sum that what it holds is what the table holds. A
# delete, or rows it saw inside a transaction that rolled back, break the sums: it reads everything again.
#
# The stamp is taken after the owner's stamp row is locked, so one owner's stamps follow the order in which their
# changes commit (0012's trigger took its value after the change, from an AFTER trigger). Written out here, not
# imported, so that no later code change alters this migration (tests/memories/search/test_snapshot.py checks that
# the trigger still covers every column but accessed_at and stamp).
COLUMNS = (
    "id, agent_id, namespace, key, content, embedding, embedding_model, metadata, tags, entities, category, "
    "subject, importance, confidence, source, source_ref, links, version, is_active, created_at, updated_at, "
    "happened_at, expires_at, conversation_id, message_id, owner_id, superseded_by_id, supersedes_id, project_id, "
    "indexed, ttl_minutes, value"
)

FORWARD = f"""
CREATE FUNCTION memento_owner_stamp(owner bigint, row_change integer, old_stamp bigint, counts boolean)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    taken bigint;
BEGIN
    INSERT INTO memories_memorystamp (owner_id, stamp, rows, stamps) VALUES (owner, 0, 0, 0)
        ON CONFLICT (owner_id) DO NOTHING;
    PERFORM 1 FROM memories_memorystamp WHERE owner_id = owner FOR UPDATE;
    taken := nextval('memento_memory_stamp');
    UPDATE memories_memorystamp
        SET stamp = taken, rows = rows + row_change,
            stamps = stamps - old_stamp + CASE WHEN counts THEN taken ELSE 0 END
        WHERE owner_id = owner;
    RETURN taken;
END $$;
CREATE OR REPLACE FUNCTION memento_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM memento_owner_stamp(OLD.owner_id, -1, coalesce(OLD.stamp, 0), false);
        RETURN OLD;
    END IF;
    IF TG_OP = 'INSERT' THEN
        NEW.stamp := memento_owner_stamp(NEW.owner_id, 1, 0, true);
    ELSIF NEW.owner_id IS DISTINCT FROM OLD.owner_id THEN
        PERFORM memento_owner_stamp(OLD.owner_id, -1, coalesce(OLD.stamp, 0), false);
        NEW.stamp := memento_owner_stamp(NEW.owner_id, 1, 0, true);
    ELSE
        NEW.stamp := memento_owner_stamp(NEW.owner_id, 0, coalesce(OLD.stamp, 0), true);
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER memory_stamp ON memories_memory;
CREATE TRIGGER memory_stamp BEFORE INSERT OR DELETE OR UPDATE OF {COLUMNS} ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memento_memory_changed();
-- owners' counts as the migrating session sees them (existing rows carry no stamp: they count 0 in the sums)
INSERT INTO memories_memorystamp (owner_id, stamp, rows, stamps)
    SELECT owner_id, nextval('memento_memory_stamp'), count(*), 0 FROM memories_memory GROUP BY owner_id
    ON CONFLICT (owner_id) DO UPDATE SET stamp = excluded.stamp, rows = excluded.rows, stamps = 0;
"""

# 0012's trigger again
REVERSE = f"""
DROP TRIGGER memory_stamp ON memories_memory;
DROP FUNCTION memento_owner_stamp(bigint, integer, bigint, boolean);
CREATE OR REPLACE FUNCTION memento_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER memory_stamp AFTER INSERT OR DELETE OR UPDATE OF {COLUMNS} ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memento_memory_changed();
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0013_memory_fillfactor")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="stamp",
            field=models.BigIntegerField(
                blank=True, editable=False, null=True,
                help_text="The stamp of its last change (set by a trigger from the sequence of MemoryStamp; reads do "
                          "not change it). Empty for rows last changed before migration 0014."),
        ),
        migrations.AddField(
            model_name="memorystamp",
            name="rows",
            field=models.BigIntegerField(default=0, help_text="How many memories the owner has."),
        ),
        migrations.AddField(
            model_name="memorystamp",
            name="stamps",
            field=models.BigIntegerField(
                default=0, help_text="The sum of their rows' stamps (rows changed before migration 0014 count 0)."),
        ),
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
    ]
