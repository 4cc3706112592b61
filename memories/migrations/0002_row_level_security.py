from django.db import migrations


# The policy SQL is written out here, not imported, so that no later code change alters what this migration did.
def rls_policy_sql(table: str) -> str:
    """SQL that turns on owner-only row-level security for `table`."""
    return f"""
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS owner_only ON {table};
        CREATE POLICY owner_only ON {table}
            USING (current_setting('memento.rls_bypass', true) = 'on'
                   OR owner_id = nullif(current_setting('memento.user_id', true), '')::bigint)
            WITH CHECK (current_setting('memento.rls_bypass', true) = 'on'
                        OR owner_id = nullif(current_setting('memento.user_id', true), '')::bigint);
    """


def rls_drop_sql(table: str) -> str:
    return f"""
        DROP POLICY IF EXISTS owner_only ON {table};
        ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;
    """

TABLES = ["memories_project", "memories_memory", "memories_memoryhistory", "memories_memoryevent"]


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_initial")]

    operations = [
        migrations.RunSQL(rls_policy_sql(table), reverse_sql=rls_drop_sql(table)) for table in TABLES
    ]
