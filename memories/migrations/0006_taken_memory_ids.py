from django.db import migrations

# Row-level security hides other users' memories, so an import cannot see whether an id in the file is already
# taken by someone else. This function answers only that (which of these UUIDs exist), nothing about the rows.
SQL = """
CREATE FUNCTION memento_taken_memory_ids(ids uuid[]) RETURNS SETOF uuid LANGUAGE plpgsql AS $$
DECLARE
    previous text := coalesce(current_setting('memento.rls_bypass', true), 'off');
BEGIN
    PERFORM set_config('memento.rls_bypass', 'on', true);
    RETURN QUERY SELECT m.id FROM memories_memory m WHERE m.id = ANY(ids);
    PERFORM set_config('memento.rls_bypass', previous, true);
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0005_service_managed_timestamps")]

    operations = [migrations.RunSQL(SQL, reverse_sql="DROP FUNCTION memento_taken_memory_ids(uuid[]);")]
